//! Typed batches (framework/src/batch.rs) change no result: every example and the chain
//! run bit-identically with the component types' batches and with every component wrapped
//! so that it offers none (one dynamic call per component, motions through `port_motion`).

mod common;
#[path = "../examples/generate_chain.rs"]
#[allow(dead_code)]
mod generate_chain;
#[path = "../examples/generate_multibody.rs"]
#[allow(dead_code)]
mod generate_multibody;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use stiction::framework::component::{Admittance, Diagnostic, Fault, Impedance, Probe, SignalInfo};
use stiction::framework::system::{Built, Params, Registry, System};
use stiction::framework::{Force, Layout, Method, Motion, Recorder, Simulator};

/// An admittance without a batch and without `port_states`.
struct PlainAdmittance(Box<dyn Admittance>);

impl Admittance for PlainAdmittance {
    fn layout(&self) -> Layout {
        self.0.layout()
    }
    fn init(&self, x: &mut [f64]) {
        self.0.init(x)
    }
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        self.0.port_motion(x, port)
    }
    fn derivative(&self, x: &[f64], f: &[Force], t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        self.0.derivative(x, f, t, tau, dx)
    }
    fn post_step(&self, x: &mut [f64]) {
        self.0.post_step(x)
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals()
    }
    fn signal(&self, which: usize, elem: usize, probe: &Probe) -> f64 {
        self.0.signal(which, elem, probe)
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        self.0.energy(x)
    }
    fn diagnose(&self, x: &[f64], step: f64) -> Vec<Diagnostic> {
        self.0.diagnose(x, step)
    }
    fn port_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        self.0.port_inertia(x, port)
    }
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        self.0.next_break(t0, t1)
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.0.set_window(t0, t1)
    }
    fn at_break(&self, x: &mut [f64]) {
        self.0.at_break(x)
    }
    fn state_switches(&self) -> usize {
        self.0.state_switches()
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        self.0.state_switchings(x, g)
    }
    fn force_switches(&self) -> usize {
        self.0.force_switches()
    }
    fn force_switchings(&self, x: &[f64], f: &[Force], g: &mut [f64]) {
        self.0.force_switchings(x, f, g)
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        self.0.lock_sides(x)
    }
    fn on_switch(&self, which: usize, x: &mut [f64]) {
        self.0.on_switch(which, x)
    }
}

/// An impedance without a batch.
struct PlainImpedance(Box<dyn Impedance>);

impl Impedance for PlainImpedance {
    fn layout(&self) -> Layout {
        self.0.layout()
    }
    fn init(&self, y: &mut [f64], motion: &[Motion]) {
        self.0.init(y, motion)
    }
    fn evaluate(
        &self,
        motion: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        self.0.evaluate(motion, y, t, tau, force, dy)
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals()
    }
    fn signal(&self, which: usize, elem: usize, probe: &Probe) -> f64 {
        self.0.signal(which, elem, probe)
    }
    fn energy(&self, motion: &[Motion], y: &[f64]) -> Option<f64> {
        self.0.energy(motion, y)
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
        self.0.diagnose(inertia, step)
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
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        self.0.next_break(t0, t1)
    }
    fn stuck_spring(&self) -> Option<stiction::framework::StageSpring> {
        self.0.stuck_spring()
    }
    fn held_frequency(&self, method: Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        self.0.held_frequency(method, step, omega2, couple)
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.0.set_window(t0, t1)
    }
}

/// The type names of the full registry, in its order.
fn names() -> &'static Vec<&'static str> {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| stiction::registry().types().map(|t| t.name).collect())
}

/// The builder of type `names()[I]`, its result wrapped.
fn plain_build<const I: usize>(p: &mut Params) -> stiction::framework::Result<Built> {
    let reg = stiction::registry();
    let built = (reg.get(names()[I]).expect("registered").build)(p)?;
    Ok(match built {
        Built::Admittance(a) => Built::Admittance(Box::new(PlainAdmittance(a))),
        Built::Impedance(i) => Built::Impedance(Box::new(PlainImpedance(i))),
        // A signal block has no batch.
        Built::Block(b) => Built::Block(b),
    })
}

/// The full registry with every builder wrapped (one instantiation per type index).
fn plain_registry() -> Registry {
    const BUILDERS: [fn(&mut Params) -> stiction::framework::Result<Built>; 40] = {
        macro_rules! b {
            ($($i:literal)*) => { [$(plain_build::<$i>),*] };
        }
        b!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39)
    };
    let base = stiction::registry();
    assert!(names().len() <= BUILDERS.len(), "more component types than wrapped builders");
    let mut r = Registry::new();
    for (i, t) in base.types().enumerate() {
        r.register(stiction::framework::system::ComponentType { build: BUILDERS[i], ..*t });
    }
    r
}

fn build(text: &str, base: &Path, registry: &Registry, steps: u64) -> (Simulator, stiction::framework::RunPlan) {
    let sys = System::from_str(text, Path::new("system.json"), base, registry).unwrap_or_else(|e| panic!("{e}"));
    let (sim, mut plan) = sys.into_simulator(1).unwrap_or_else(|e| panic!("{e}"));
    plan.stop_time = plan.stop_time.min(steps as f64 * sim.step_size());
    (sim, plan)
}

/// Every state of every component, by name, as bits.
fn states(sim: &Simulator) -> BTreeMap<String, Vec<u64>> {
    let s = sim.schedule();
    let x = sim.state();
    let mut out = BTreeMap::new();
    let (na, ni) = s.counts();
    let mut off = 0;
    for j in 0..na {
        let len = s.admittance(j).layout().states;
        out.insert(s.admittance_names()[j].to_string(), x[off..off + len].iter().map(|v| v.to_bits()).collect());
        off += len;
    }
    for i in 0..ni {
        let len = s.impedance(i).layout().states;
        out.insert(s.impedance_names()[i].to_string(), x[off..off + len].iter().map(|v| v.to_bits()).collect());
        off += len;
    }
    out
}

/// Run `text` batched and plain for at most `steps` steps; rows and states must agree bit for bit.
fn assert_same(label: &str, text: &str, base: &Path, steps: u64) {
    let (mut batched, plan) = build(text, base, &stiction::registry(), steps);
    let (mut plain, plan_plain) = build(text, base, &plain_registry(), steps);
    assert_eq!(plain.schedule().batch_counts().0 + plain.schedule().batch_counts().1, 0, "{label}: plain has batches");
    let (mut r1, mut r2) = (Recorder::default(), Recorder::default());
    batched.run(&plan, &mut r1, &mut |_| {}).unwrap_or_else(|e| panic!("{label}: {e}"));
    plain.run(&plan_plain, &mut r2, &mut |_| {}).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(r1.labels, r2.labels);
    for (k, (a, b)) in r1.rows.iter().zip(&r2.rows).enumerate() {
        let same = a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits());
        assert!(same, "{label}: row {k} (t = {}) differs:\n batched {a:?}\n plain   {b:?}", r1.time[k]);
    }
    assert_eq!(r1.rows.len(), r2.rows.len());
    assert_eq!(states(&batched), states(&plain), "{label}: final states differ");
    batched.probe().unwrap();
    plain.probe().unwrap();
    assert_eq!(batched.energy().to_bits(), plain.energy().to_bits(), "{label}: energy differs");
}

#[test]
fn examples_run_bit_identically_with_and_without_batches() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            !name.starts_with("chain_") && !name.starts_with("fmu_")
        })
        .collect();
    files.sort();
    assert!(files.len() > 10);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        assert_same(&f.display().to_string(), &text, &dir, 3000);
    }
}

#[test]
fn chain_runs_bit_identically_with_and_without_batches() {
    // 1500 masses: more than one block (1024) of contacts and of springs.
    let mut v = generate_chain::chain(1500, false);
    // Signals that read forces and motions through `probe`, not only states.
    v["output"]["interval"] = serde_json::json!(1e-4);
    v["output"]["signals"] = serde_json::json!({
        "m0_f": "m0.f[0]", "m5_a": "m5.a[2]", "c5_f": "c5.f[0]", "c5_slip": "c5.slip_velocity[1]",
        "s7_f": "s7.f[0]", "s7_d": "s7.d[1]", "drive": "drive.f[0]", "c5_e": "c5.e[0]"
    });
    assert_same("chain-1500", &v.to_string(), Path::new("."), 200);
}

#[test]
fn batches_group_impedances_by_type() {
    let text = generate_chain::chain(50, false).to_string();
    let (sim, _) = build(&text, Path::new("."), &stiction::registry(), 1);
    let s = sim.schedule();
    // point masses; contacts, springs, the drive.
    assert_eq!(s.batch_counts(), (1, 3, 50 + 50 + 49 + 1));
    let names: Vec<&str> = s.impedance_names().iter().collect();
    assert!(names[..50].iter().all(|n| n.starts_with('c')), "{:?}", &names[..5]);
    assert!(names[50..99].iter().all(|n| n.starts_with('s')));
    assert_eq!(names[99], "drive");
    // Diagnostics and other listings keep the file order.
    let order: Vec<&str> = s.impedances_in_network_order().iter().map(|&i| names[i]).collect();
    assert_eq!(&order[..4], &["c0", "c1", "s1", "c2"]);

    // Longer chains: blocks of 1024 that alternate by type, in the order they fill up.
    let text = generate_chain::chain(3000, false).to_string();
    let (sim, _) = build(&text, Path::new("."), &stiction::registry(), 1);
    let s = sim.schedule();
    assert_eq!(s.batch_counts(), (1, 7, 3000 + 3000 + 2999 + 1));
    let names: Vec<&str> = s.impedance_names().iter().collect();
    let kind = |r: std::ops::Range<usize>| -> char {
        let k = names[r.start].chars().next().unwrap();
        assert!(names[r.clone()].iter().all(|n| n.starts_with(k)), "mixed block {r:?}");
        k
    };
    let blocks = [0..1024, 1024..2048, 2048..3072, 3072..4096, 4096..5048, 5048..5999, 5999..6000];
    let kinds: String = blocks.into_iter().map(kind).collect();
    assert_eq!(kinds, "cscscsd");
    assert_eq!((names[0], names[1024], names[4096]), ("c0", "s1", "c2048"));
}

/// A component joins an open batch (`join_batch`, without making a batch of one) exactly
/// where its own batch would merge into it: every pair of the chain's and the stacks'
/// impedances (contacts, springs, the drive, body contacts; and the same wrapped to offer no
/// batch) and admittances (point masses, rigid bodies; wrapped).
#[test]
fn joining_a_batch_is_merging_its_own() {
    let stacks = generate_multibody::stacks(2, generate_multibody::Top::Body);
    let texts = [generate_chain::chain(3, false).to_string(), stacks.to_string()];
    let (typed, plain) = (stiction::registry(), plain_registry());
    let sims: Vec<Simulator> =
        texts.iter().flat_map(|t| [&typed, &plain].map(|r| build(t, Path::new("."), r, 1).0)).collect();
    let imps: Vec<&dyn Impedance> =
        sims.iter().flat_map(|s| (0..s.schedule().counts().1).map(move |i| s.schedule().impedance(i))).collect();
    let adms: Vec<&dyn Admittance> =
        sims.iter().flat_map(|s| (0..s.schedule().counts().0).map(move |i| s.schedule().admittance(i))).collect();
    // Per pair (a's batch, b): b joins it exactly where b's own batch merges into it.
    let mut outcomes = [0, 0];
    macro_rules! pairs {
        ($all:expr) => {
            for a in &$all {
                for b in &$all {
                    let (Some(mut merged), Some(mut joined)) = (a.batch(), a.batch()) else { continue };
                    let merges = b.batch().is_some_and(|bb| merged.merge(bb.as_ref()));
                    assert_eq!(b.join_batch(joined.as_mut()), merges);
                    outcomes[usize::from(merges)] += 1;
                }
            }
        };
    }
    pairs!(imps);
    pairs!(adms);
    assert!(outcomes.iter().all(|&n| n > 0), "refusals and joins: {outcomes:?}");
}

/// `steps` steps of the system `text` (named `file` in errors), serial on one thread and in
/// parallel on two (threshold 0), end in the same bits; the one-thread simulator after them.
fn same_bits_on_one_and_two_threads(text: &str, file: &str, steps: usize) -> Simulator {
    let sys = |threads| {
        let s = System::from_str(text, Path::new(file), Path::new("."), &stiction::registry()).unwrap();
        s.into_simulator(threads).unwrap().0
    };
    let (mut one, mut two) = (sys(1), sys(2));
    two.set_parallel_threshold(0);
    assert!(two.is_parallel() && !one.is_parallel());
    assert_eq!(two.stage_blocks(), 0, "phase by phase in parallel");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for _ in 0..steps {
        one.step().unwrap();
        pool.install(|| two.step()).unwrap();
    }
    assert!(one.state().iter().zip(two.state()).all(|(p, q)| p.to_bits() == q.to_bits()));
    one
}

#[test]
fn blocked_chain_is_bit_identical_on_one_and_two_threads() {
    let text = generate_chain::chain(3000, false).to_string();
    let one = same_bits_on_one_and_two_threads(&text, "chain.json", 100);
    // One thread ran its stages block by block (3000 masses, 256 a block), every other
    // stage from the last block to the first, two phase by phase: the same bits.
    assert_eq!(one.stage_blocks(), 12);
}

/// body_contact's typed batch of frame-port members (`FrameImpedanceBatch`): 300 two-box
/// stacks, 1200 body_contacts (two blocks of 1024), pushed sideways so that the contacts
/// slide and stick, the same bits as the per-component kind and on one and two threads.
#[test]
fn body_contacts_run_bit_identically_batched_plain_and_on_two_threads() {
    let mut v = generate_multibody::stacks(300, generate_multibody::Top::Body);
    let comps = v["components"].as_object_mut().unwrap();
    for i in [0, 7, 299] {
        comps.insert(
            format!("push{i}"),
            serde_json::json!({"type": "force_source", "domain": "point3", "force": ["60*sin(40*PI*t)", "30", 0]}),
        );
    }
    for i in [0, 7, 299] {
        v["connections"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"from": format!("push{i}.body"), "to": format!("stack{i}up")}));
    }
    v["output"] = serde_json::json!({"interval": 1e-3, "signals": {
        "f": "stack0up_c0.f[0]", "n": "stack7up_c1.normal_force", "s": "stack299up_c2.slip_velocity[1]", "e": "stack0up_c3.e[0]"
    }});
    let text = v.to_string();
    let (sim, _) = build(&text, Path::new("."), &stiction::registry(), 1);
    let names: Vec<&str> = sim.schedule().impedance_names().iter().collect();
    let (_, imp_batches, members) = sim.schedule().batch_counts();
    // plane_contact (1200) and body_contact (1200) in typed batches, two blocks each, and
    // the pushes.
    assert_eq!((imp_batches, members), (5, 2400 + 3), "{:?}", &names[..3]);
    assert_same("stacks-300", &text, Path::new("."), 100);

    let one = same_bits_on_one_and_two_threads(&text, "stacks.json", 100);
    // 30 N sideways on 1 kg held by at most μ m g = 4.9 N: the pushed upper box slides
    // (y ≈ ½ 25 m/s² (0.01 s)² ≈ 1.2 mm), an unpushed one stays stuck.
    let st = states(&one);
    let y = |name: &str| f64::from_bits(st[name][1]);
    assert!((0.8e-3..1.5e-3).contains(&y("stack0up")), "{}", y("stack0up"));
    assert!((y("stack1up") - 0.0).abs() < 1e-7, "{}", y("stack1up"));
}
