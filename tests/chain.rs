//! The chain-N benchmark system: the framework against the hand-fused baseline, thread
//! determinism, and energy conservation without friction or damping.

mod common;
#[path = "../benches/fused_chain.rs"]
mod fused_chain;
#[path = "../examples/generate_chain.rs"]
#[allow(dead_code)]
mod generate_chain;

use fused_chain::{ChainParams, FusedChain};
use stiction::framework::{Simulator, Switches};

fn framework_chain(n: usize, frictionless: bool, threads: usize) -> Simulator {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.json");
    std::fs::write(&path, generate_chain::chain(n, frictionless).to_string()).unwrap();
    stiction::load(&path).unwrap().into_simulator(threads).unwrap().0
}

/// State of mass i (p, v) and contact i (e) in the framework's vector, which orders
/// admittances first (in file order), then impedances in schedule order (grouped by type
/// into batches: c0, c1, ..., s1, s2, ..., drive).
fn framework_state(sim: &Simulator, n: usize) -> Vec<f64> {
    let x = sim.state();
    let mut out = x[..6 * n].to_vec();
    let names = sim.schedule().impedance_names();
    let mut off = 6 * n;
    let mut e = vec![0.0; 2 * n];
    for (i, name) in names.iter().enumerate() {
        let len = sim.schedule().impedance(i).layout().states;
        if let Some(k) = name.strip_prefix('c').and_then(|k| k.parse::<usize>().ok()) {
            e[2 * k..2 * k + 2].copy_from_slice(&x[off..off + 2]);
        }
        off += len;
    }
    out.extend(e);
    out
}

#[test]
fn chain_1k_agrees_with_the_fused_baseline() {
    let n = 1000;
    let mut sim = framework_chain(n, false, 1);
    // The fused loop takes every step whole: the framework's located stick–slip switches
    // (the driven mass's, `"events": "all"`, the default) are left out to compare the same
    // algorithm. With them the states differ by 2e-10 of max|x| after 1000 steps.
    sim.locate(Switches::Contacts);
    let mut fused = FusedChain::new(n, ChainParams::standard(), 1e-4);
    assert_eq!(framework_state(&sim, n), fused.x, "initial states differ");
    let mut worst = 0.0f64;
    for _ in 0..1000 {
        sim.step().unwrap();
        fused.step();
    }
    let a = framework_state(&sim, n);
    let scale = fused.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (p, q) in a.iter().zip(&fused.x) {
        worst = worst.max((p - q).abs() / scale);
    }
    eprintln!("chain-1k vs fused baseline after 1000 steps: max |Δ| / max|x| = {worst:e}");
    assert!(worst < 1e-12, "framework and fused baseline differ by {worst:e}");
    // The drive moved the first mass; the friction held the last one.
    assert!(a[0].abs() > 1e-4);
}

#[test]
fn chain_1k_serial_and_parallel_are_bit_identical() {
    let n = 1000;
    let mut one = framework_chain(n, false, 1);
    let mut two = framework_chain(n, false, 2);
    // 1k is below the size at which a step goes parallel by default; force it here.
    assert!(!two.is_parallel());
    two.set_parallel_threshold(0);
    assert!(two.is_parallel());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    for _ in 0..300 {
        one.step().unwrap();
        pool.install(|| two.step()).unwrap();
    }
    let (a, b) = (one.state(), two.state());
    assert!(a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits()));
}

#[test]
fn frictionless_undamped_chain_conserves_energy() {
    let n = 200;
    let mut sim = framework_chain(n, true, 1);
    sim.probe().unwrap();
    let e0 = sim.energy();
    let mut worst = 0.0f64;
    for _ in 0..1000 {
        sim.step().unwrap();
        sim.probe().unwrap();
        worst = worst.max((sim.energy() - e0).abs() / e0.abs());
    }
    eprintln!("frictionless chain-{n}: energy {e0} J, max relative drift over 1000 steps {worst:e}");
    assert!(worst < 1e-6, "energy drifts by {worst:e}");
    // The fused baseline's energy bookkeeping agrees with the components' at t = 0
    // (mass 0 of the frictionless chain starts displaced by −0.02 m).
    let mut fused = FusedChain::new(n, ChainParams::frictionless(), 1e-4);
    fused.x[0] -= 0.02;
    assert!((fused.energy() - e0).abs() < 1e-12 * e0, "{} vs {e0}", fused.energy());
}

/// An output row evaluates only the components its signals read (`probe_only`): the values
/// are those of the full probe, bit for bit, and the total force on a mass is m (a − g).
#[test]
fn targeted_probe_reads_what_the_full_probe_reads() {
    let n = 300;
    let mut sim = framework_chain(n, false, 1);
    for _ in 0..50 {
        sim.step().unwrap();
    }
    let names = ["m0.f[0]", "m0.a[0]", "m7.f[2]", "m7.a[2]", "s8.f[0]", "c9.penetration", "m299.v[1]"];
    let refs: Vec<_> = names.iter().map(|s| sim.resolve(s).unwrap()).collect();
    let targets = sim.probe_targets(&refs);
    sim.probe_only(&targets).unwrap();
    let only: Vec<f64> = refs.iter().map(|r| sim.value(r)).collect();
    sim.probe().unwrap();
    let full: Vec<f64> = refs.iter().map(|r| sim.value(r)).collect();
    for ((name, a), b) in names.iter().zip(&only).zip(&full) {
        assert_eq!(a.to_bits(), b.to_bits(), "{name}: {a} (targeted) vs {b} (full)");
    }
    // Newton for a 1 kg mass under gravity −9.81 z: f = m (a − g).
    assert!((only[0] - only[1]).abs() < 1e-9 * (1.0 + only[0].abs()), "m0: f {} vs a {}", only[0], only[1]);
    assert!((only[2] - (only[3] + 9.81)).abs() < 1e-9 * (1.0 + only[2].abs()), "m7: f {} vs a {}", only[2], only[3]);
    assert!(only[2] > 0.0, "the contact carries m7's weight");
}
