//! Master overhead: K copies of the StictionFrictionMass Co-Simulation FMU (FMI 2.0, constant
//! input force 10 N > F = 8 N, so every doStep does the full sliding step of model D),
//! stepped N times (h = substep = 1e-3 s)
//!
//! * as an FMU-only system, translated into signal blocks and stepped by the engine
//!   (framework/src/stepper/bus.rs): Jacobi on 1 and 2 threads, Gauss-Seidel on 1 thread;
//! * through a direct loop of `Instance::do_step` (fmi2DoStep through the binding and its
//!   status check, nothing else) over K separately loaded instances,
//! * through the same direct loop that also reads every output of the FMU after each
//!   doStep, as a master must to publish them (one get per type, by a plan made once),
//!
//! in the same run, interleaved, best of R repetitions. Reports the time per FMU step, the
//! master's overhead per FMU step over the loop that reads the outputs, and the ratios
//! master / direct loop with outputs.
//!
//! `cargo bench --bench fmu_master` (env: `FMU_BENCH_K=10,100`, `FMU_BENCH_STEPS=20000`,
//! `FMU_BENCH_REPS=3`).

#[allow(dead_code)] // each bench uses some of it
mod common;
use common::{env_list, export_friction_mass};
use serde_json::json;
use std::path::Path;
use std::time::Instant;
use stiction::fmi_import::{Archive, Causality, Instance, Interface, MixedPlan, VarKind, VarType};
use stiction::framework::Recorder;

const H: f64 = 1e-3;

fn system(fmu: &Path, k: usize, steps: usize, algorithm: &str) -> serde_json::Value {
    let mut fmus = serde_json::Map::new();
    for i in 0..k {
        fmus.insert(format!("m{i}"), json!({"path": fmu}));
    }
    let stop = steps as f64 * H;
    json!({
        "master": {"algorithm": algorithm, "step": H, "stop_time": stop},
        "fmus": fmus,
        "output": {"interval": stop, "signals": {"q": "m0.q"}}
    })
}

/// Seconds for the run of the FMU-only system in the engine; the final q of the first FMU.
fn master(fmu: &Path, k: usize, steps: usize, algorithm: &str, threads: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.json");
    std::fs::write(&path, system(fmu, k, steps, algorithm).to_string()).unwrap();
    let loaded = stiction::open(&path, &stiction::Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let (mut sim, plan, _) = loaded.simulator(threads, "bench.json").unwrap_or_else(|e| panic!("{e}"));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut rec = Recorder::default();
    let t0 = Instant::now();
    pool.install(|| sim.run(&plan, &mut rec, &mut |_| {})).unwrap_or_else(|e| panic!("{e}"));
    let dt = t0.elapsed().as_secs_f64();
    (dt, *rec.column("q").unwrap().last().unwrap())
}

/// Seconds for the direct loop (reading every output after each doStep if `outputs`); the
/// final q of the first FMU.
fn direct(fmu: &Path, k: usize, steps: usize, outputs: bool) -> (f64, f64) {
    let mut insts: Vec<Instance> = (0..k)
        .map(|i| {
            let shown = fmu.display().to_string();
            let a = Archive::open(fmu, &shown).unwrap();
            let mut inst = Instance::new(std::sync::Arc::new(a), Interface::CoSimulation, &format!("m{i}")).unwrap();
            inst.enter_initialization(0.0).unwrap();
            inst.exit_initialization().unwrap();
            inst
        })
        .collect();
    let md = &insts[0].archive.description;
    let outs: Vec<(u32, VarKind)> =
        md.variables.iter().filter(|v| v.causality == Causality::Output).map(|v| (v.vr, (v.ty, 1))).collect();
    let (vrs, kinds): (Vec<u32>, Vec<VarKind>) = outs.into_iter().unzip();
    let mut plans: Vec<MixedPlan> = (0..k).map(|_| MixedPlan::new(&vrs, &kinds)).collect();
    let mut y = vec![0.0; vrs.len()];
    let t0 = Instant::now();
    for s in 0..steps {
        let t = s as f64 * H;
        for (inst, plan) in insts.iter_mut().zip(&mut plans) {
            inst.do_step(t, H).unwrap();
            if outputs {
                inst.get_planned(plan, &mut y).unwrap();
            }
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    let vr = insts[0].archive.description.variables.iter().find(|v| v.name == "q").unwrap().vr;
    let q = insts[0].get_value(VarType::Float64, vr).unwrap();
    (dt, q)
}

fn main() {
    let ks = env_list("FMU_BENCH_K", &[10, 100]);
    let steps = env_list("FMU_BENCH_STEPS", &[20_000])[0];
    let reps = env_list("FMU_BENCH_REPS", &[3])[0];
    let dir = tempfile::tempdir().unwrap();
    let fmu = export_friction_mass(dir.path());
    println!("StictionFrictionMass FMI 2.0 CS, h = substep = {H} s, {steps} steps, best of {reps}");
    println!(
        "| K | doStep alone | doStep + outputs | master Jacobi, 1 thread | overhead | ratio | master Gauss-Seidel | ratio | master Jacobi, 2 threads | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &k in &ks {
        let n = (k * steps) as f64;
        let (mut a, mut d, mut j1, mut gs, mut j2) =
            (f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::INFINITY);
        let mut q = Vec::new();
        for _ in 0..reps {
            let r = direct(&fmu, k, steps, false);
            a = a.min(r.0);
            q.push(r.1);
            let r = direct(&fmu, k, steps, true);
            d = d.min(r.0);
            q.push(r.1);
            let r = master(&fmu, k, steps, "jacobi", 1);
            j1 = j1.min(r.0);
            q.push(r.1);
            let r = master(&fmu, k, steps, "gauss-seidel", 1);
            gs = gs.min(r.0);
            q.push(r.1);
            let r = master(&fmu, k, steps, "jacobi", 2);
            j2 = j2.min(r.0);
            q.push(r.1);
        }
        assert!(q.iter().all(|&x| x == q[0]), "the runs disagree: {q:?}");
        let ns = |s: f64| s / n * 1e9;
        println!(
            "| {k} | {:.0} ns | {:.0} ns | {:.0} ns | {:+.0} ns | {:.3} | {:.0} ns | {:.3} | {:.0} ns | {:.3} |",
            ns(a),
            ns(d),
            ns(j1),
            ns(j1) - ns(d),
            j1 / d,
            ns(gs),
            gs / d,
            ns(j2),
            j2 / d
        );
    }
}
