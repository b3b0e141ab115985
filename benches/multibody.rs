//! Benchmark of the multibody-N system (examples/generate_multibody.rs): rigid boxes on
//! corner contacts joined in pairs by penalty joints with friction, and six-joint geared
//! robots holding loads. Frames, offsets, per-component batches and heavy admittances, so
//! that it is not tuned to one component set the way chain-N is.
//!
//! `cargo bench --bench multibody -- --contacts [STACKS]` (default 1000) prints the cost per
//! contact of `body_contact` against `plane_contact`: STACKS two-box stacks whose upper
//! boxes stand on four body_contacts on the lower box, on four plane_contacts on a fixed
//! plane at the same height, or on nothing (the baseline), 1 thread, best of 3, each
//! system in turn three times: (µs per step − baseline)/(4·STACKS) for each kind and their
//! ratio; and body_contact once more through the per-component batch kind (wrapped so that
//! it offers no typed batch), the baseline of its typed batch in the same run.
//!
//! `cargo bench --bench multibody [-- COMPONENTS ...]` (default 1000 10000 100000) prints,
//! per size: JSON load + compile time, µs per RK4 step and per step and component on 1 and
//! 2 threads, and two ratios to baselines measured in the same run: the 2-thread speed-up
//! (baseline: the 1-thread run) and the growth of the per-component cost (baseline: the
//! first size). Each size runs in its own process; times are the best of 3 repetitions
//! (the machine may be shared). Below `PARALLEL_THRESHOLD` components the 2-thread
//! simulator steps serially; its speed-up is then marked "(serial)".

#[path = "../examples/generate_multibody.rs"]
#[allow(dead_code)]
mod generate_multibody;

#[allow(dead_code)] // multibody reads no memory figures
mod common;
use common::time_per_call;
use std::time::Instant;
use stiction::framework::component::{Fault, Impedance};
use stiction::framework::system::{Built, ComponentType, Params, Registry};
use stiction::framework::{Force, Layout, Method, Motion};

/// Measure one size; prints a table row and returns the 1-thread µs per step and component.
fn one(components: usize, path: &std::path::Path, first: Option<f64>) {
    let t = Instant::now();
    let (mut sim1, _) = stiction::load(path).expect("load").into_simulator(1).expect("compile");
    let load = t.elapsed().as_secs_f64();
    let steps = (200_000 / components).clamp(5, 200);
    let reps = 3;
    sim1.step().expect("step");
    let one = time_per_call(reps, steps, || sim1.step().expect("step"));
    drop(sim1);
    let (mut sim2, _) = stiction::load(path).expect("load").into_simulator(2).expect("compile");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
    let serial = if sim2.is_parallel() { "" } else { " (serial)" };
    // Stepped as `run` steps: the other thread waits for the phases awake.
    let two = pool.install(|| {
        sim2.with_threads_awake(|sim| {
            sim.step().expect("step");
            time_per_call(reps, steps, || sim.step().expect("step"))
        })
    });
    let per = one * 1e6 / components as f64;
    let growth = first.map(|f| format!("{:.2}", per / f)).unwrap_or_else(|| "1 (baseline)".into());
    println!(
        "| {components} | {load:.3} | {:.0} | {:.3} | {:.0} | {:.3} | {:.2}{serial} | {growth} |",
        one * 1e6,
        per,
        two * 1e6,
        two * 1e6 / components as f64,
        one / two,
    );
}

/// µs per RK4 step of `system` on 1 thread (best of 3), its components built by `registry`.
fn step_us(system: &serde_json::Value, registry: &Registry) -> f64 {
    let text = system.to_string();
    let sys = stiction::framework::system::System::from_str(
        &text,
        std::path::Path::new("stacks.json"),
        std::path::Path::new("."),
        registry,
    )
    .expect("load");
    let (mut sim, _) = sys.into_simulator(1).expect("compile");
    sim.step().expect("step");
    time_per_call(3, 200, || sim.step().expect("step")) * 1e6
}

/// An impedance that offers no typed batch (so the schedule runs it in the per-component
/// kind, one dynamic call per member): what the step calls of it, forwarded.
struct Each(Box<dyn Impedance>);

impl Impedance for Each {
    fn layout(&self) -> Layout {
        self.0.layout()
    }
    fn init(&self, y: &mut [f64], motion: &[Motion]) {
        self.0.init(y, motion)
    }
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        f: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        self.0.evaluate(m, y, t, tau, f, dy)
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn switching(&self, motion: &[Motion], y: &[f64], t: f64) -> Option<f64> {
        self.0.switching(motion, y, t)
    }
    fn slip_switching(&self, motion: &[Motion], y: &[f64], t: f64) -> Option<f64> {
        self.0.slip_switching(motion, y, t)
    }
    fn switchings(&self, motion: &[Motion], y: &[f64], t: f64) -> [Option<f64>; 2] {
        self.0.switchings(motion, y, t)
    }
    fn needs_post_step(&self) -> bool {
        self.0.needs_post_step()
    }
    fn post_step(&self, y: &mut [f64]) {
        self.0.post_step(y)
    }
    fn stuck_spring(&self) -> Option<stiction::framework::StageSpring> {
        self.0.stuck_spring()
    }
    fn held_frequency(&self, method: Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        self.0.held_frequency(method, step, omega2, couple)
    }
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        self.0.next_break(t0, t1)
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.0.set_window(t0, t1)
    }
}

/// `body_contact` built as usual, wrapped in [`Each`].
fn each_body_contact(p: &mut Params) -> stiction::framework::Result<Built> {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    let reg = REGISTRY.get_or_init(stiction::registry);
    match (reg.get("body_contact").expect("registered").build)(p)? {
        Built::Impedance(i) => Ok(Built::Impedance(Box::new(Each(i)))),
        other => Ok(other),
    }
}

/// The `--contacts` table (see the module doc).
fn contacts(stacks: usize) {
    use generate_multibody::{stacks as system, Top};
    let contacts = 4.0 * stacks as f64;
    let typed = stiction::registry();
    let mut each = Registry::new();
    for t in typed.types() {
        let build = if t.name == "body_contact" { each_body_contact } else { t.build };
        each.register(ComponentType { build, ..*t });
    }
    println!("per-contact cost, {stacks} two-box stacks, RK4, T = 1e-4 s, 1 thread: upper boxes on body_contact vs plane_contact");
    println!("| round | baseline (µs/step) | plane_contact (µs/contact/step) | body_contact, typed batch (µs/contact/step) | body_contact, per-component (µs/contact/step) | body / plane | typed / per-component |");
    println!("|---|---|---|---|---|---|---|");
    let (none, plane, body) = (system(stacks, Top::None), system(stacks, Top::Plane), system(stacks, Top::Body));
    for round in 1..=3 {
        let t0 = step_us(&none, &typed);
        let tp = (step_us(&plane, &typed) - t0) / contacts;
        let tb = (step_us(&body, &typed) - t0) / contacts;
        let te = (step_us(&body, &each) - t0) / contacts;
        println!("| {round} | {t0:.0} | {tp:.4} | {tb:.4} | {te:.4} | {:.2} | {:.2} |", tb / tp, tb / te);
    }
}

/// `--step KIND STACKS STEPS`: load the stacks system of KIND (none, plane, body, or
/// body-each: body_contact in the per-component kind) and take STEPS steps, untimed: for
/// counting instructions and cycles with `perf stat -e instructions:u,cycles:u`, which a
/// shared machine does not disturb the way it does wall time (the difference of two STEPS
/// divided by theirs is the cost per step, loading cancelled).
fn step_only(args: &[String]) {
    use generate_multibody::{stacks as system, Top};
    let usage = "--step none|plane|body|body-each STACKS STEPS";
    let (kind, stacks, steps) = match args {
        [k, n, s, ..] => (k.as_str(), n.parse().expect(usage), s.parse::<usize>().expect(usage)),
        _ => panic!("{usage}"),
    };
    let top = match kind {
        "none" => Top::None,
        "plane" => Top::Plane,
        "body" | "body-each" => Top::Body,
        _ => panic!("{usage}"),
    };
    let mut registry = stiction::registry();
    if kind == "body-each" {
        let t = *registry.get("body_contact").expect("registered");
        registry.register(ComponentType { build: each_body_contact, ..t });
    }
    let text = system(stacks, top).to_string();
    let sys = stiction::framework::system::System::from_str(
        &text,
        std::path::Path::new("stacks.json"),
        std::path::Path::new("."),
        &registry,
    )
    .expect("load");
    let (mut sim, _) = sys.into_simulator(1).expect("compile");
    for _ in 0..steps {
        sim.step().expect("step");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(pos) = args.iter().position(|a| a == "--step") {
        step_only(&args[pos + 1..]);
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "--contacts") {
        contacts(args.get(pos + 1).and_then(|s| s.parse().ok()).unwrap_or(1000));
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "--one") {
        let n: usize = args.get(pos + 1).and_then(|s| s.parse().ok()).expect("--one N FILE [FIRST]");
        let file = args.get(pos + 2).expect("--one N FILE [FIRST]");
        let first = args.get(pos + 3).and_then(|s| s.parse().ok());
        one(n, std::path::Path::new(file), first);
        return;
    }
    let sizes: Vec<usize> = args.iter().filter(|a| !a.starts_with("--")).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1000, 10_000, 100_000] } else { sizes };
    println!("multibody-N, RK4, T = 1e-4 s: box pairs and two-box stacks (11 components each) + geared robots with loads (2 each)");
    println!("speed-up = 1 thread / 2 threads; growth = µs per step and component / that of the first size");
    println!("| components | load + compile (s) | 1 thr (µs/step) | 1 thr (µs/step/component) | 2 thr (µs/step) | 2 thr (µs/step/component) | speed-up | growth |");
    println!("|---|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().expect("exe");
    let dir = std::env::temp_dir().join(format!("stiction-multibody-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut first: Option<f64> = None;
    for n in sizes {
        let parts = generate_multibody::split(n);
        let components = generate_multibody::components(parts);
        let path = dir.join(format!("multibody_{components}.json"));
        std::fs::write(&path, generate_multibody::multibody(parts).to_string()).expect("write system");
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["--one", &components.to_string(), path.to_str().expect("utf-8 temp path")]);
        if let Some(f) = first {
            cmd.arg(f.to_string());
        }
        let out = cmd.output().expect("run");
        let row = String::from_utf8_lossy(&out.stdout);
        print!("{row}");
        if !out.status.success() {
            eprintln!("{components} components failed: {}", String::from_utf8_lossy(&out.stderr));
        } else if first.is_none() {
            // The 1-thread µs per step and component of the first size: the growth baseline.
            first = row.split('|').nth(4).and_then(|v| v.trim().parse().ok());
        }
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
