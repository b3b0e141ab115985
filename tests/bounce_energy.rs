//! Issue 14, item 5 (measurement): energy over the bounces of a penalty contact and over
//! the steps in which no contact opens or closes. `cargo test --release --test
//! bounce_energy -- --nocapture` prints the figures.

mod common;
use common::*;
use serde_json::{json, Value};

fn example_value(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(example(name)).unwrap()).unwrap()
}

/// Steps the rolling-sphere example (K = 1e7, B = 10, T = 1e-4) and returns, per bounce
/// (a run of steps in contact), the energy at its first and last step end, and the largest
/// energy rise over a step that starts and ends in contact (or out of contact).
fn bounces(mu: f64) -> (Vec<(f64, f64)>, f64, f64) {
    let mut v = example_value("rolling_sphere.json");
    v["components"]["floor"]["mu"] = json!(mu);
    let (mut sim, _) = build_value(&v);
    sim.probe().unwrap();
    let height = |s: &stiction::framework::Simulator| s.state()[2] - 0.2;
    let mut out = Vec::new();
    let (mut e_prev, mut in_prev) = (sim.energy(), height(&sim) < 0.0);
    let mut start = if in_prev { Some(e_prev) } else { None };
    let (mut worst, mut e0) = (0.0f64, e_prev);
    e0 = e0.abs().max(1e-12);
    for _ in 0..12000 {
        sim.step().unwrap();
        sim.probe().unwrap();
        let (e, inside) = (sim.energy(), height(&sim) < 0.0);
        if inside == in_prev {
            worst = worst.max(e - e_prev);
        }
        match (in_prev, inside) {
            (false, true) => start = Some(e_prev),
            (true, false) => out.push((start.take().unwrap_or(e_prev), e)),
            _ => {}
        }
        (e_prev, in_prev) = (e, inside);
    }
    (out, worst, e0)
}

#[test]
fn rolling_sphere_bounce_energy_is_measured() {
    for mu in [0.1, 0.0] {
        let (b, worst, e0) = bounces(mu);
        let gains: Vec<f64> = b.iter().map(|(a, z)| (z - a) / a.abs()).filter(|g| *g > 0.0).collect();
        let max_gain = gains.iter().cloned().fold(0.0, f64::max);
        eprintln!(
            "rolling sphere, mu = {mu}: {} bounces, {} end with more energy than they began (largest +{:.3e} relative); \
             largest rise over a step without contact change {:.3e} J ({:.1e} of E0)",
            b.len(),
            gains.len(),
            max_gain,
            worst,
            worst / e0
        );
        assert!(!b.is_empty());
        // Within contact and in free flight the energy never grows by more than rounding.
        assert!(worst <= 1e-9 * e0, "energy grows by {worst} J over a step without contact change");
    }
}
