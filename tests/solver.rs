//! The stepper itself: RK4 (13) with the stage step sizes of (22), its order, the Euler
//! special case (20), and bit-identical results for any thread count.

#[path = "../examples/generate_chain.rs"]
#[allow(dead_code)]
mod generate_chain;

mod common;
use common::*;
use std::sync::Mutex;
use stiction::components::bodies::Mass;
use stiction::components::couplings::SpringDamper;
use stiction::components::friction::FricK;
use stiction::framework::component::{Fault, Impedance};
use stiction::framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction::framework::{Method, Network, Recorder, RunPlan, Schedule, Simulator, Target};

/// An impedance that records the (t, τ, port position) of every call and pushes nothing.
struct StageLog(Mutex<Vec<(f64, f64, f64)>>);

impl Impedance for StageLog {
    fn layout(&self) -> Layout {
        Layout::new(1, vec![PortInfo::new("body", Domain::Scalar)])
    }
    fn evaluate(
        &self,
        m: &[Motion],
        _y: &[f64],
        t: f64,
        tau: f64,
        f: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        self.0.lock().unwrap().push((t, tau, m[0].q()));
        f[0] = Force::ZERO;
        dy[0] = 1.0;
        Ok(())
    }
}

fn mass(q0: f64, v0: f64) -> Box<Mass> {
    Box::new(Mass { mass: 1.0, force: 0.0, q0, v0 })
}

#[test]
fn rk4_stages_use_offsets_0_half_half_1_and_tau_half_half_1_1() {
    let log: &'static StageLog = Box::leak(Box::new(StageLog(Mutex::new(Vec::new()))));
    struct Fwd(&'static StageLog);
    impl Impedance for Fwd {
        fn layout(&self) -> Layout {
            self.0.layout()
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
    }
    let mut net = Network::new();
    let a = net.add_admittance("m", mass(0.0, 2.0)).unwrap();
    let i = net.add_impedance("log", Box::new(Fwd(log))).unwrap();
    net.try_connect(i, "body", Target::Port { adm: a, port: "body", offset: None }).unwrap();
    let h = 0.1;
    let mut sim = Simulator::new(Schedule::compile(net).unwrap(), Method::Rk4, h, 1).unwrap();
    sim.step().unwrap();
    sim.step().unwrap();
    let calls = log.0.lock().unwrap().clone();
    assert_eq!(calls.len(), 8);
    let expect_t = [0.0, 0.05, 0.05, 0.1, 0.1, 0.15, 0.15, 0.2];
    let expect_tau = [0.05, 0.05, 0.1, 0.1, 0.05, 0.05, 0.1, 0.1];
    // Stage positions: x(k) + T_{r−1} ξ_{r−1} with v = 2 constant: q = 2 t.
    for (k, (t, tau, q)) in calls.iter().enumerate() {
        assert!((t - expect_t[k]).abs() < 1e-15, "call {k}: t = {t}");
        assert!((tau - expect_tau[k]).abs() < 1e-15, "call {k}: tau = {tau}");
        assert!((q - 2.0 * expect_t[k]).abs() < 1e-14, "call {k}: q = {q}");
    }
    // The impedance state integrates ẏ = 1 exactly.
    assert!((sim.state()[2] - 0.2).abs() < 1e-15);
}

/// x(T_end) of a mass–spring–damper (M = 1, K = 100, B = 1, x0 = 1, v0 = 0) and its
/// analytic value.
fn msd_error(step: f64) -> f64 {
    let mut net = Network::new();
    let a = net.add_admittance("m", mass(1.0, 0.0)).unwrap();
    let s = net
        .add_impedance("s", Box::new(SpringDamper { domain: Domain::Scalar, k: 100.0, b: 1.0, rest_length: 0.0 }))
        .unwrap();
    net.try_connect(s, "a", Target::Ground { at: None }).unwrap();
    net.try_connect(s, "b", Target::Port { adm: a, port: "body", offset: None }).unwrap();
    let mut sim = Simulator::new(Schedule::compile(net).unwrap(), Method::Rk4, step, 1).unwrap();
    let t_end = 1.0;
    let n = (t_end / step).round() as usize;
    for _ in 0..n {
        sim.step().unwrap();
    }
    let (w0, zeta): (f64, f64) = (10.0, 1.0 / (2.0 * 10.0));
    let wd = w0 * (1.0 - zeta * zeta).sqrt();
    let exact = (-zeta * w0 * t_end).exp() * ((wd * t_end).cos() + zeta * w0 / wd * (wd * t_end).sin());
    (sim.state()[0] - exact).abs()
}

#[test]
fn rk4_is_fourth_order_on_a_smooth_mass_spring_damper() {
    let e1 = msd_error(0.01);
    let e2 = msd_error(0.005);
    let e3 = msd_error(0.0025);
    let (r1, r2) = (e1 / e2, e2 / e3);
    eprintln!("RK4 order: errors {e1:e}, {e2:e}, {e3:e}; ratios {r1:.2}, {r2:.2}");
    assert!((14.0..18.0).contains(&r1), "ratio {r1}");
    assert!((14.0..18.0).contains(&r2), "ratio {r2}");
}

/// With the Euler method the network reproduces the discrete-time friction model (14)
/// on a mass: f(k) = gsat(F, (B + TK) v(k) + K e(k−1)), e(k) = (B e(k−1) + T f(k))/(B + TK),
/// v(k+1) = v(k) + T (u − f(k))/M — bit for bit.
#[test]
fn euler_reproduces_the_discrete_time_model_14_exactly() {
    let (m, k, b, fmax, h, u) = (2.0, 3e4, 30.0, 5.0, 1e-3, 4.0);
    let mut net = Network::new();
    let a = net.add_admittance("m", Box::new(Mass { mass: m, force: u, q0: 0.0, v0: 0.3 })).unwrap();
    let f = net.add_impedance("f", Box::new(FricK { domain: Domain::Scalar, k, b, f_max: fmax, form: Default::default() })).unwrap();
    net.try_connect(f, "a", Target::Ground { at: None }).unwrap();
    net.try_connect(f, "b", Target::Port { adm: a, port: "body", offset: None }).unwrap();
    let mut sim = Simulator::new(Schedule::compile(net).unwrap(), Method::Euler, h, 1).unwrap();
    let (mut q, mut v, mut e) = (0.0f64, 0.3f64, 0.0f64);
    let mut stuck = 0;
    for _ in 0..2000 {
        let fk = ((b + h * k) * v + k * e).clamp(-fmax, fmax);
        let e_new = e + h * ((fk - k * e) / (b + h * k));
        let (q_new, v_new) = (q + h * v, v + h * (u - fk) / m);
        (q, v, e) = (q_new, v_new, e_new);
        sim.step().unwrap();
        assert_eq!(sim.state(), &[q, v, e][..]);
        if v.abs() < 1e-3 {
            stuck += 1;
        }
    }
    // u = 4 < F = 5: the mass comes to rest and stays there.
    assert!(stuck > 1000, "stuck for {stuck} steps");
}

fn run_chain(n: usize, threads: usize) -> Recorder {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.json");
    std::fs::write(&path, chain_json(n)).unwrap();
    let system = stiction::load(&path).unwrap();
    let (mut sim, plan): (Simulator, RunPlan) = system.into_simulator(threads).unwrap();
    // The chain is below the default threshold: force the parallel phases on 2 threads.
    sim.set_parallel_threshold(1);
    assert_eq!(sim.is_parallel(), threads > 1, "the parallel path must be taken exactly on >1 thread");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut rec = Recorder::default();
    pool.install(|| sim.run(&plan, &mut rec, &mut |_| {})).unwrap();
    rec
}

/// The chain-N system of examples/generate_chain.rs, built in-process: running the example
/// through `cargo run` resolved features for one package only and rebuilt shared crates
/// under the workspace's test build (the FMU crate's unhashed rlib then no longer matched).
fn chain_json(n: usize) -> String {
    generate_chain::chain(n, false).to_string()
}

#[test]
fn one_and_two_threads_give_bit_identical_results() {
    let a = run_chain(400, 1);
    let b = run_chain(400, 2);
    assert_eq!(a.labels, b.labels);
    assert_eq!(a.rows.len(), 101);
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        let ba: Vec<u64> = ra.iter().map(|x| x.to_bits()).collect();
        let bb: Vec<u64> = rb.iter().map(|x| x.to_bits()).collect();
        assert_eq!(ba, bb);
    }
    // The drive moved mass 0.
    assert!(col(&a, "x0").last().unwrap().abs() > 1e-3);
}

#[test]
fn cli_threads_1_and_2_write_byte_identical_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (o1, o2) = (dir.path().join("t1.csv"), dir.path().join("t2.csv"));
    // chain_1k is below the default threshold: forced parallel on 2 threads. (Networks of
    // at most 64 components never split, whatever the threshold.)
    for (file, min_len) in [("chain_1k.json", 1000)] {
        let sys = example(file);
        for (threads, out) in [("1", &o1), ("2", &o2)] {
            let r = cli(&[
                "run",
                sys.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--threads",
                threads,
                "--parallel-threshold",
                "1",
            ]);
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(r.status.success(), "{err}");
            let expect = if threads == "2" { "parallel phases" } else { "serial phases" };
            assert!(err.contains(expect), "{file} on {threads} thread(s): expected '{expect}' in: {err}");
        }
        let (a, b) = (std::fs::read(&o1).unwrap(), std::fs::read(&o2).unwrap());
        assert!(a.len() > min_len);
        assert!(a == b, "{file}: CSV differs between 1 and 2 threads");
    }
}
