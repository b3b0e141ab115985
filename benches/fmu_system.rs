//! The cost of a system exported as an FMU (`stiction fmu export SYSTEM.json`) per
//! communication step, against the same run in stiction, in the same process and run:
//!
//! * `fmu`: examples/drivetrain_worm_brake.json exported (FMI 2.0 Co-Simulation), loaded
//!   through `stiction::fmi_import` in this process; per step what a host does: set the input
//!   `tau_motor`, `fmi2DoStep(t, T)` (one solver step), get the seven outputs;
//! * `run`: the same system stepped by `Simulator::run` (the loop of `stiction run`, a row per
//!   step into a `Recorder`), per step.
//!
//! Both over 3000 steps (3 s), best of R repetitions, two rounds. Reports µs per step and the
//! ratio fmu / run.
//!
//! `cargo bench --bench fmu_system` (env: `FMU_BENCH_REPS=5`); cargo builds the system
//! binary with the bench (a dev-dependency).

#[allow(dead_code)] // each bench uses some of it
mod common;
use common::env_list;

use std::path::Path;
use std::sync::Arc;
use stiction::fmi_import::{Archive, Instance, Interface, Isolation};
use stiction::framework::{Recorder, TimeFunction};

const STEPS: usize = 3000;
const T: f64 = 1e-3;

fn main() {
    let reps = env_list("FMU_BENCH_REPS", &[5])[0];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let system = root.join("examples/drivetrain_worm_brake.json");
    let dir = tempfile::tempdir().expect("temporary directory");
    let fmu = dir.path().join("drivetrain.fmu");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["fmu", "export", system.to_str().unwrap(), "-o", fmu.to_str().unwrap()])
        .output()
        .expect("run stiction");
    assert!(o.status.success(), "export failed: {}", String::from_utf8_lossy(&o.stderr));
    let archive = Arc::new(Archive::open(&fmu, &fmu.display().to_string()).unwrap_or_else(|e| panic!("{e}")));
    // Value references: time 0, F_brake 1, tau_motor 2, the seven outputs 3..=9.
    let outputs: Vec<u32> = (3..10).collect();
    let torque = |k: usize| if (100..1200).contains(&k) { 0.15 } else { 0.0 };
    let fmu_run = || {
        let mut i = Instance::with_isolation(archive.clone(), Interface::CoSimulation, "d", &Isolation::None, &[])
            .unwrap_or_else(|e| panic!("{e}"));
        i.enter_initialization(0.0).unwrap_or_else(|e| panic!("{e}"));
        i.exit_initialization().unwrap_or_else(|e| panic!("{e}"));
        let mut out = [0.0; 7];
        let started = std::time::Instant::now();
        for k in 0..STEPS {
            i.set_f64(&[2], &[torque(k)]).unwrap_or_else(|e| panic!("{e}"));
            i.do_step(k as f64 * T, T).unwrap_or_else(|e| panic!("{e}"));
            i.get_f64(&outputs, &mut out).unwrap_or_else(|e| panic!("{e}"));
        }
        started.elapsed().as_secs_f64() / STEPS as f64
    };
    let native_run = || {
        let (mut sim, plan) =
            stiction::load(&system).and_then(|s| s.into_simulator(1)).unwrap_or_else(|e| panic!("{e}"));
        // The same torque as a table of t, read at every step (Euler: at t_k).
        let f = TimeFunction::Table {
            t: vec![0.0, 0.0995, 0.0996, 1.1995, 1.1996, 3.0],
            v: vec![0.0, 0.0, 0.15, 0.15, 0.0, 0.0],
        };
        sim.set_input("tau_motor", f).unwrap_or_else(|e| panic!("{e}"));
        let mut rec = Recorder::default();
        let started = std::time::Instant::now();
        sim.run(&plan, &mut rec, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
        started.elapsed().as_secs_f64() / STEPS as f64
    };
    for round in 1..=2 {
        let (mut f, mut n) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..reps {
            f = f.min(fmu_run());
            n = n.min(native_run());
        }
        println!(
            "round {round}: drivetrain_worm_brake, {STEPS} steps of T = {T} s: FMU (set input, doStep, get 7 outputs) {:.2} µs/step, stiction run loop {:.2} µs/step, ratio {:.2}",
            f * 1e6,
            n * 1e6,
            f / n
        );
    }
}
