//! The cost of `"isolation": "process"` per FMU call: the StictionFrictionMass Co-Simulation
//! FMU (FMI 2.0, pushed by 10 N > F = 8 N, so every doStep does the full sliding step of
//! model D) called through `Instance` in this process and through `Instance` isolated in a
//! child process (`stiction fmu-host`, found through STICTION_FMU_HOST, set here to the
//! built `stiction`), in the same run, interleaved, best of R repetitions:
//!
//! * `doStep`: one fmi2DoStep;
//! * `get`: one fmi2GetReal of the two motion outputs q, v;
//! * `cs step`: what a Co-Simulation component calls per communication step (set the force
//!   input, doStep, get q and v: three calls).
//!
//! Reports µs per call (per step for `cs step`), the isolated − in-process difference per
//! call and the ratio isolated / in-process.
//!
//! `cargo bench --bench fmu_isolation` (env: `FMU_BENCH_CALLS=20000`, `FMU_BENCH_REPS=5`).

#[allow(dead_code)] // each bench uses some of it
mod common;
use common::{env_list, export_friction_mass};

use std::sync::Arc;
use std::time::Duration;
use stiction::fmi_import::{Archive, Instance, Interface, Isolation};

const H: f64 = 1e-3;

/// An initialized instance of the FMU, in this process or isolated.
fn instance(archive: &Arc<Archive>, isolation: &Isolation) -> Instance {
    let mut i = Instance::with_isolation(archive.clone(), Interface::CoSimulation, "m", isolation, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    i.enter_initialization(0.0).unwrap_or_else(|e| panic!("{e}"));
    i.exit_initialization().unwrap_or_else(|e| panic!("{e}"));
    i
}

/// Seconds per call of `what` on `fmu` (which keeps stepping from its time `t`).
fn time(fmu: &mut Instance, t: &mut f64, what: &str, calls: usize, reps: usize) -> f64 {
    let mut out = [0.0; 2];
    common::time_per_call(reps, calls, || match what {
        "doStep" => {
            fmu.do_step(*t, H).unwrap_or_else(|e| panic!("{e}"));
            *t += H;
        }
        "get" => fmu.get_f64(&[13, 14], &mut out).unwrap_or_else(|e| panic!("{e}")),
        _ => {
            fmu.set_f64(&[12], &[10.0]).unwrap_or_else(|e| panic!("{e}"));
            fmu.do_step(*t, H).unwrap_or_else(|e| panic!("{e}"));
            *t += H;
            fmu.get_f64(&[13, 14], &mut out).unwrap_or_else(|e| panic!("{e}"));
        }
    })
}

fn main() {
    std::env::set_var("STICTION_FMU_HOST", env!("CARGO_BIN_EXE_stiction"));
    let calls = env_list("FMU_BENCH_CALLS", &[20_000])[0];
    let reps = env_list("FMU_BENCH_REPS", &[5])[0];
    let dir = tempfile::tempdir().expect("temporary directory");
    let fmu = export_friction_mass(dir.path());
    let archive = Arc::new(Archive::open(&fmu, &fmu.display().to_string()).unwrap_or_else(|e| panic!("{e}")));
    let mut local = instance(&archive, &Isolation::None);
    let mut child = instance(&archive, &Isolation::Process { timeout: Duration::from_secs(60) });
    let (mut tl, mut tc) = (0.0, 0.0);
    println!("fmu_isolation: StictionFrictionMass (FMI 2.0 CS), {calls} calls, best of {reps}, interleaved");
    println!("{:<10} {:>14} {:>14} {:>16} {:>8}", "call", "in process µs", "isolated µs", "difference µs", "ratio");
    for what in ["doStep", "get", "cs step"] {
        // Interleaved: in process, isolated, in process, isolated; the best of each.
        let (mut a, mut b) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..2 {
            a = a.min(time(&mut local, &mut tl, what, calls, reps));
            b = b.min(time(&mut child, &mut tc, what, calls, reps));
        }
        println!("{what:<10} {:>14.3} {:>14.3} {:>16.3} {:>8.1}", a * 1e6, b * 1e6, (b - a) * 1e6, b / a);
    }
    let (mut ql, mut qc) = ([0.0; 2], [0.0; 2]);
    local.get_f64(&[13, 14], &mut ql).unwrap_or_else(|e| panic!("{e}"));
    child.get_f64(&[13, 14], &mut qc).unwrap_or_else(|e| panic!("{e}"));
    // Both made the same steps from the same start: the same state, bit for bit.
    assert_eq!(tl, tc);
    assert_eq!(ql, qc, "the isolated instance computed other values");
}
