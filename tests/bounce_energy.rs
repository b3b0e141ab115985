//! Issue 14, item 5: a bouncing penalty contact never gains energy. At the rolling-sphere
//! example's parameters (K = 1e7, B = 10, T = 1e-4, rk4) every bounce (a run of steps in
//! which the contact pushes) ends with no more total energy than it began with, for
//! `plane_contact` (μ = 0.1 and 0, the example itself) and for a `wall` under a falling
//! point mass; and the energy never grows over a step in which the contact neither opens
//! nor closes. Before the switch was located within the step (framework/src/stepper/events.rs),
//! 2 of 35 (μ = 0.1) and 5 of 35 (μ = 0) of the sphere's bounces gained up to 2.4e-5 of
//! the total energy. `cargo test --release --test bounce_energy -- --nocapture` prints
//! the figures.

mod common;
use common::*;
use serde_json::{json, Value};
use stiction::framework::Simulator;

fn example_value(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(example(name)).unwrap()).unwrap()
}

/// The bounces of a system: steps `steps` times and returns, per bounce (from the last
/// step end before the contact pushes to the first after it stopped), the energy at its
/// start and end; the largest energy rise over a step without a switch; and E(0).
fn bounces(v: &Value, steps: usize) -> (Vec<(f64, f64)>, f64, f64) {
    let (mut sim, _) = build_value(v);
    sim.probe().unwrap();
    let pushing = |s: &Simulator| s.contact_sides().iter().any(|&p| p);
    let (mut e_prev, mut in_prev) = (sim.energy(), pushing(&sim));
    let e0 = e_prev.abs().max(1e-12);
    let mut start = if in_prev { Some(e_prev) } else { None };
    let (mut out, mut worst) = (Vec::new(), f64::NEG_INFINITY);
    for _ in 0..steps {
        sim.step().unwrap();
        sim.probe().unwrap();
        let (e, inside) = (sim.energy(), pushing(&sim));
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
    let c = sim.contact_events().expect("the contact's switches are located");
    eprintln!(
        "  {} switches located with {} trial sub-steps ({:.1} per switch), {} left unlocated",
        c.located,
        c.trials,
        c.trials as f64 / c.located.max(1) as f64,
        c.unlocated
    );
    assert_eq!(c.unlocated, 0);
    (out, worst, e0)
}

/// Asserts that no bounce of `v` gains energy and prints the figures.
fn no_bounce_gains(what: &str, v: &Value, steps: usize, least_bounces: usize) {
    let (b, worst, e0) = bounces(v, steps);
    let change: Vec<f64> = b.iter().map(|(a, z)| (z - a) / a.abs().max(1e-12)).collect();
    let gains = change.iter().filter(|g| **g > 0.0).count();
    let max = change.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let min = change.iter().cloned().fold(f64::INFINITY, f64::min);
    eprintln!(
        "{what}: {} bounces, {gains} end with more energy than they began; relative change per bounce \
         from {min:.3e} to {max:.3e}; largest rise over a step without a switch {worst:.3e} J ({:.1e} of E0)",
        b.len(),
        worst / e0
    );
    assert!(b.len() >= least_bounces, "{what}: only {} bounces", b.len());
    for (i, (a, z)) in b.iter().enumerate() {
        assert!(z <= a, "{what}: bounce {i} gains energy: {a} J → {z} J");
    }
    assert!(worst <= 1e-12 * e0, "{what}: energy grows by {worst} J over a step without a switch");
}

#[test]
fn rolling_sphere_bounces_never_gain_energy() {
    for mu in [0.1, 0.0] {
        let mut v = example_value("rolling_sphere.json");
        v["components"]["floor"]["mu"] = json!(mu);
        no_bounce_gains(&format!("rolling sphere (plane_contact), mu = {mu}"), &v, 12000, 30);
    }
}

#[test]
fn a_point_mass_on_a_wall_never_gains_energy() {
    // The sphere's mass and contact on a point3 wall z ≥ 0, dropped from 2 mm with a
    // sideways velocity (the wall has no friction): vertical bounces of 5.4 steps each.
    let v = json!({
        "solver": { "method": "rk4", "step": 1e-4, "stop_time": 1.2 },
        "components": {
            "ball": { "type": "point_mass", "mass": 0.3, "gravity": [0, 0, -9.8],
                      "init": { "p": [0, 0, 0.002], "v": [2, 0, 0] } },
            "floor": { "type": "wall", "domain": "point3", "axis": [0, 0, 1], "side": "positive",
                       "K": 1e7, "B": 10 }
        },
        "connections": [ { "from": "floor.body", "to": "ball" } ]
    });
    no_bounce_gains("point mass on a wall", &v, 12000, 30);
}

/// The work of locating switches is budgeted: with 300 point masses bouncing on their own
/// contacts (switches in most steps) the located steps spend at most one extra sub-step per
/// step on average (plus an initial 1024), and the switches beyond that are taken whole,
/// as without location.
#[test]
fn locating_many_switches_costs_at_most_about_one_extra_step_per_step() {
    let (mut comps, mut conns) = (serde_json::Map::new(), Vec::new());
    for i in 0..300 {
        let z = 0.001 + 0.002 * i as f64 / 300.0;
        comps.insert(
            format!("b{i}"),
            json!({"type": "point_mass", "mass": 0.3, "gravity": [0, 0, -9.8], "init": {"p": [0, 0, z]}}),
        );
        comps.insert(format!("c{i}"), json!({"type": "plane_contact", "K": 1e7, "B": 10, "mu": 0.1}));
        conns.push(json!({"from": format!("c{i}.body"), "to": format!("b{i}")}));
    }
    let steps = 3000u64;
    let v = json!({"solver": {"method": "rk4", "step": 1e-4, "stop_time": 0.3},
                   "components": comps, "connections": conns});
    let (mut sim, _) = build_value(&v);
    for _ in 0..steps {
        sim.step().unwrap();
    }
    let c = sim.contact_events().unwrap();
    eprintln!("300 bouncing contacts, {steps} steps: {c:?}");
    assert!(c.trials + 2 * c.located <= steps + 1024, "{c:?}");
    assert!(c.located > 0 && c.unlocated > 0, "{c:?}");
}
