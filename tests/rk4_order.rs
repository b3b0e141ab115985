//! Issue 14: the admittance friction models are fourth order in free motion under RK4 and
//! keep the papers' algorithms under Euler (docs/explanation/friction.md, "RK4-accurate admittances").
//!
//! The frictionless oscillator: each model with its friction set to zero (F = 0, γ = 0) on a
//! spring with ω = 10 rad/s, amplitude A = 0.01, 10 s (ωt = 100). The exact solution is
//! A cos ωt; the error at three step sizes gives the order, the energy at the end the
//! amplitude error.

mod common;
use common::*;
use serde_json::{json, Value};

const OMEGA: f64 = 10.0;
const AMP: f64 = 0.01;
const STOP: f64 = 10.0;

/// A frictionless oscillator built with `model` (ω = 10, x(0) = A, ẋ(0) = 0), with the
/// signals `x` (displacement), `v` (its rate) and the inertia and stiffness that define ω.
fn oscillator(model: &str, method: &str, step: f64) -> Value {
    let solver = json!({"method": method, "step": step, "stop_time": STOP});
    let output = |x: &str, v: &str| json!({"interval": 0.02, "signals": {"x": x, "v": v}});
    let spring = |k: f64| json!({"type": "spring_damper", "K": k});
    match model {
        "kikuuwe_a" => json!({
            "solver": solver, "output": output("m.q", "m.v"),
            "components": {"m": {"type": "kikuuwe_a", "mass": 1.0, "F": 0.0, "init": {"q": AMP}}, "s": spring(100.0)},
            "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "m"}]
        }),
        // Model B's own spring K and mass M, the drive held at 0: the deflection e = −x.
        "kikuuwe_b" => json!({
            "solver": solver, "output": output("m.e", "m.v"),
            "components": {"m": {"type": "kikuuwe_b", "mass": 1.0, "K": 100.0, "F": 0.0, "init": {"e": AMP}}},
            "connections": [{"from": "m.drive", "to": "ground"}]
        }),
        // Model D with F = 0: its slider cannot hold, the mass is free on the external spring.
        "kikuuwe_d" => json!({
            "solver": solver, "output": output("m.q", "m.u"),
            "components": {"m": {"type": "kikuuwe_d", "mass": 1.0, "K": 1000.0, "B": 10.0, "F": 0.0, "init": {"q": AMP}},
                           "s": spring(100.0)},
            "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "m"}]
        }),
        // m + M = 1 on the output shaft.
        "gear" => json!({
            "solver": solver, "output": output("g.q", "g.v"),
            "components": {"g": {"type": "gear", "m": 0.5, "M": 0.5, "gamma_u": 0.0, "gamma_v": 0.0, "init": {"q": AMP}},
                           "s": spring(100.0)},
            "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "g.output"}]
        }),
        // One link, 1 kg at 1 m (1 kg·m²) plus a gear inertia m = 1: J = 2, K = 200.
        "geared_robot" => json!({
            "solver": solver, "output": output("r.q[0]", "r.v[0]"),
            "components": {
                "r": {"type": "geared_robot",
                      "links": [{"origin": [0, 0, 0], "axis": [0, 0, 1], "mass": 1.0, "com": [1.0, 0, 0], "inertia": [0, 0, 0]}],
                      "tip": [1.0, 0, 0],
                      "gears": [{"m": 1.0, "gamma_u": 0.0, "gamma_v": 0.0}],
                      "init": {"q": [AMP]}},
                "s": spring(200.0)
            },
            "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "r.joint0"}]
        }),
        _ => unreachable!("{model}"),
    }
}

const MODELS: &[&str] = &["kikuuwe_a", "kikuuwe_b", "kikuuwe_d", "gear", "geared_robot"];

/// (max |x − A cos ωt| / A over the run, |amplitude at the end / A − 1|).
fn errors(model: &str, method: &str, step: f64) -> (f64, f64) {
    let rec = run_value(&oscillator(model, method, step));
    let (x, v) = (col(&rec, "x"), col(&rec, "v"));
    let err = rec.time.iter().zip(&x).map(|(t, x)| (x - AMP * (OMEGA * t).cos()).abs()).fold(0.0, f64::max) / AMP;
    let n = x.len() - 1;
    assert!((rec.time[n] - STOP).abs() < 1e-9, "{model}: ends at {}", rec.time[n]);
    let amp = (x[n] * x[n] + (v[n] / OMEGA).powi(2)).sqrt();
    (err, (amp / AMP - 1.0).abs())
}

/// Done when (issue 14): order ≥ 3.8 from three step sizes and an amplitude error < 1e-6 at
/// ω T = 0.01, for every admittance friction model under RK4.
#[test]
fn frictionless_oscillator_is_fourth_order_under_rk4() {
    for model in MODELS {
        let steps = [4e-3, 2e-3, 1e-3];
        let e: Vec<(f64, f64)> = steps.iter().map(|&t| errors(model, "rk4", t)).collect();
        let orders = [(e[0].0 / e[1].0).log2(), (e[1].0 / e[2].0).log2()];
        eprintln!(
            "{model} (rk4): max |x − A cos ωt|/A over 10 s = {:.3e}, {:.3e}, {:.3e} at ωT = 0.04, 0.02, 0.01 \
             → orders {:.2}, {:.2}; amplitude error at ωT = 0.01: {:.2e}",
            e[0].0, e[1].0, e[2].0, orders[0], orders[1], e[2].1
        );
        assert!(orders.iter().all(|&p| p >= 3.8), "{model}: orders {orders:?}");
        assert!(e[2].1 < 1e-6, "{model}: amplitude error {}", e[2].1);
    }
}

/// The papers' Euler algorithms are first order: the same oscillator under `"method": "euler"`
/// converges with order 1 (q(k) = q(k−1) + T v(k) is symplectic Euler for A, D, gear and
/// robot). Model B's (36) is implicit Euler on its own spring, whose amplitude decays like
/// exp(−ω²T t/2), far from the asymptotic range over ωt = 100; it is left out here.
#[test]
fn euler_form_stays_the_papers_first_order_algorithm() {
    for model in MODELS.iter().filter(|m| **m != "kikuuwe_b") {
        let (e1, _) = errors(model, "euler", 2e-3);
        let (e2, _) = errors(model, "euler", 1e-3);
        let order = (e1 / e2).log2();
        eprintln!("{model} (euler): errors {e1:.3e}, {e2:.3e} at ωT = 0.02, 0.01 → order {order:.2}");
        assert!((0.8..1.5).contains(&order), "{model}: Euler order {order}");
    }
}

/// First sample index from which `c` is exactly 0.0 to the end.
fn exact_zero_from(c: &[f64]) -> Option<usize> {
    let i = c.iter().rposition(|x| *x != 0.0).map_or(0, |i| i + 1);
    (i < c.len()).then_some(i)
}

/// Sticking stays exact under RK4: after the stop the velocity is 0.0 bit for bit, reached
/// within 2 steps of the analytic stop, and the stop time converges as T shrinks.
/// Model A: Fig. 6 (v0 = 0.7, h = −1, F = 8: stop at 0.7/9 s). Model B, drive grounded, a
/// soft spring (K = 10, v0 = 1, F = 8): the spring force at the stop (≤ 1.25 N) is below F.
/// Gear: m = M = 1, γu = 0.2, γv = 1.05, spinning at 1 rad/s against a load torque of
/// 20 N·m, which the self-locking gear then holds. B and the gear are measured against the
/// finest step (T = 1e-5). Observed: the exact 0.0 comes at most 1 step after the stop.
#[test]
fn stops_are_exact_and_converge_under_rk4() {
    let a = |step: f64| {
        json!({"solver": {"method": "rk4", "step": step, "stop_time": 0.2}, "output": {"signals": {"v": "m.v"}},
               "components": {"m": {"type": "kikuuwe_a", "mass": 1.0, "F": 8.0, "force": -1.0, "init": {"v": 0.7}}}})
    };
    let b = |step: f64| {
        json!({"solver": {"method": "rk4", "step": step, "stop_time": 0.3}, "output": {"signals": {"v": "m.v"}},
               "components": {"m": {"type": "kikuuwe_b", "mass": 1.0, "K": 10.0, "B": 1.0, "F": 8.0, "init": {"v": 1.0}}},
               "connections": [{"from": "m.drive", "to": "ground"}]})
    };
    let gear = |step: f64| {
        json!({"solver": {"method": "rk4", "step": step, "stop_time": 0.3}, "output": {"signals": {"v": "g.v"}},
               "components": {"g": {"type": "gear", "m": 1.0, "M": 1.0, "gamma_u": 0.2, "gamma_v": 1.05, "init": {"v": 1.0}},
                              "load": {"type": "force_source", "force": -20.0}},
               "connections": [{"from": "load.body", "to": "g.output"}]})
    };
    type System<'a> = &'a dyn Fn(f64) -> Value;
    let cases: [(&str, System, Option<f64>); 3] =
        [("kikuuwe_a", &a, Some(0.7 / 9.0)), ("kikuuwe_b", &b, None), ("gear", &gear, None)];
    for (name, system, analytic) in cases {
        let mut stops = Vec::new();
        for step in [1e-3, 1e-4, 1e-5] {
            let rec = run_value(&system(step));
            let v = col(&rec, "v");
            let i = exact_zero_from(&v).unwrap_or_else(|| panic!("{name}, T = {step}: v never stays exactly 0.0"));
            // The last nonzero sample is the step in which the stop happens.
            assert!(v[..i].iter().all(|x| *x > 0.0), "{name}, T = {step}: no reversal before the stop");
            stops.push((step, rec.time[i]));
        }
        let reference = analytic.unwrap_or(stops[2].1);
        for (step, t) in &stops {
            let steps_late = (t - reference) / step;
            eprintln!("{name} (rk4), T = {step:e}: v exactly 0.0 from t = {t:.6} s, {steps_late:+.2} steps from the stop at {reference:.6} s");
            assert!(
                steps_late.abs() <= 2.0 + 1e-6 || analytic.is_none() && *step == 1e-5,
                "{name}: {steps_late} steps"
            );
        }
        assert!((stops[1].1 - reference).abs() < (stops[0].1 - reference).abs() + 1e-12, "{name}: stop time converges");
    }
}

/// Model A's switches are located within the step (issue 43, item 4): its sliding velocity
/// is a state switch (a stop, or a reversal where the load exceeds the static level) and
/// its breakaway a force switch. Before, a stage of (26) decided "stuck" up to a step before
/// the velocity reached zero, so a stop came early and the rest of the run was off by
/// first-order amounts. Against the exact solutions: Fig. 6's block (v0 = 0.7, h = −1,
/// F = 8) stops at q = v0²/18 (before 2.7e-6 m off at T = 1e-3; now to rounding); Fig. 7's
/// (v0 = 1.3, h = −10) stops at 1.3/18 s and slides back at 2 m/s² (before 1.6e-3 m off at
/// T = 5e-4, now 1e-12); a 1 kg block under 8 sin 2πt N against F = 5 N, through two
/// breakaways, two stops and a breakaway again by 1.3 s, against the piecewise closed-form
/// solution (before 9e-9 m off at every T ≤ 5e-4 and 1.9e-7 at 1e-3; now 2e-13 at T = 1e-3,
/// order 4).
#[test]
fn model_a_stops_and_breakaways_are_located_under_rk4() {
    let block = |step: f64, stop: f64, force: Value, v0: f64, f: f64, push: Option<&str>| {
        let mut v = json!({"solver": {"method": "rk4", "step": step, "stop_time": stop},
                           "output": {"interval": stop, "signals": {"q": "m.q", "v": "m.v"}},
                           "components": {"m": {"type": "kikuuwe_a", "mass": 1.0, "F": f, "force": force, "init": {"v": v0}}}});
        if let Some(push) = push {
            v["components"]["push"] = json!({"type": "force_source", "force": push});
            v["connections"] = json!([{"from": "push.body", "to": "m.body"}]);
        }
        let rec = run_value(&v);
        (*col(&rec, "q").last().expect("a row"), *col(&rec, "v").last().expect("a row"))
    };
    for step in [1e-3, 5e-4, 2.5e-4] {
        let (q6, v6) = block(step, 0.2, json!(-1.0), 0.7, 8.0, None);
        let (t7, q7) = (1.3 / 18.0, 1.3 * 1.3 / 36.0);
        let (q, v) = block(step, 0.6, json!(-10.0), 1.3, 8.0, None);
        let (q7, v7) = (q7 - (0.6 - t7) * (0.6 - t7), -2.0 * (0.6 - t7));
        eprintln!("model A, T = {step:e}: Fig. 6 q {:.2e} off, Fig. 7 q {:.2e}, v {:.2e} off", q6 - 0.49 / 18.0, q - q7, v - v7);
        assert!((q6 - 0.49 / 18.0).abs() < 1e-14 && v6 == 0.0, "Fig. 6 at T = {step}: q = {q6}, v = {v6}");
        assert!((q - q7).abs() < 1e-11 && (v - v7).abs() < 1e-11, "Fig. 7 at T = {step}: q = {q}, v = {v}");
    }
    let (q_ref, v_ref) = sine_pushed_block(1.3);
    let mut errors = Vec::new();
    for step in [1e-3, 5e-4] {
        let (q, v) = block(step, 1.3, json!(0.0), 0.0, 5.0, Some("8*sin(2*pi*t)"));
        eprintln!("model A pushed by 8 sin 2πt, T = {step:e}: q {q} ({:.2e} off), v {v} ({:.2e} off)", q - q_ref, v - v_ref);
        errors.push((q - q_ref).abs().max((v - v_ref).abs()));
    }
    assert!(errors[0] < 1e-11 && errors[1] < errors[0] / 8.0, "errors {errors:?} against q = {q_ref}, v = {v_ref}");
    // examples/ramp_block.json: held until 11.2536 − 6(2 − t) N exceeds F = 8.0359 N at
    // t_b = 2 − 3.2177/6 s, then (2 kg) v = 1.5 (t − t_b)² to t = 2 s and 1.60885 m/s² after
    // (before: 1.8e-7 m off at 3 s).
    let rec = run_value(&example_at("ramp_block.json", 3.0)(1e-3));
    let (q, v) = (*col(&rec, "q").last().expect("a row"), *col(&rec, "v").last().expect("a row"));
    let s = (11.2536 - 8.0359) / 6.0;
    let (a, v2, q2) = ((11.2536 - 8.0359) / 2.0, 1.5 * s * s, 0.5 * s * s * s);
    eprintln!("ramp_block at 3 s: q {:.2e}, v {:.2e} off", q - (q2 + v2 + a / 2.0), v - (v2 + a));
    assert!((q - (q2 + v2 + a / 2.0)).abs() < 1e-12 && (v - (v2 + a)).abs() < 1e-12, "ramp_block: q = {q}, v = {v}");
}

/// Model A under RK4 slides by the continuous law at the stage velocity (issue 43, item 2):
/// the τ-form's v* = v + τh/M turned the friction's direction by O(τ) wherever h is not along
/// v, and evaluated a Stribeck curve and the viscous part at τ, so sliding was first order.
/// - 2-D: 1 kg from (1, 0) m/s under h = (0, 2) N against F = 5 N, on a curved path: q and
///   v at 0.15 s, order ≥ 3.8 (before 1.00); it stops at (5/48, 1/42) m (the limit of a
///   reference integration at 1e-6 s, to 1e-13): 3e-6 m off at T = 1e-3, 1e-9 at 2.5e-4
///   (before 1.8e-4 and 4.5e-5, first order). The 2-D stop is not smooth (the velocity's
///   direction turns into h's as a fractional power of the speed), so there is no clean
///   order through it.
/// - 1-D Stribeck (Fc = 3, Fs = 5 N, vs = 0.05 m/s) with D = 5 N·s/m, from 0.3 m/s into
///   the Stribeck region: q and v at 0.05 s, order 4.00 (before 1.00).
#[test]
fn model_a_slides_at_fourth_order_in_two_dimensions_and_on_a_stribeck_curve_under_rk4() {
    let block = |step: f64, stop: f64, m: Value| {
        let v = json!({"solver": {"method": "rk4", "step": step, "stop_time": stop},
                       "output": {"interval": stop, "signals": {"qx": "m.q[0]", "vx": "m.v[0]", "qy": "m.q[1]", "vy": "m.v[1]"}},
                       "components": {"m": m}});
        let rec = run_value(&v);
        ["qx", "vx", "qy", "vy"].map(|s| *col(&rec, s).last().expect("a row"))
    };
    let curved = json!({"type": "kikuuwe_a", "dims": 2, "mass": 1.0, "F": 5.0, "force": [0.0, 2.0], "init": {"v": [1.0, 0.0]}});
    let stribeck = json!({"type": "kikuuwe_a", "dims": 2, "mass": 1.0, "law": "stribeck", "Fc": 3.0, "Fs": 5.0, "vs": 0.05,
                          "exponent": 2.0, "D": 5.0, "init": {"v": [0.3, 0.0]}});
    for (name, m, stop, signals) in [("2-D curved", &curved, 0.15, 4), ("Stribeck + viscous", &stribeck, 0.05, 2)] {
        let v = [1e-3, 5e-4, 2.5e-4].map(|t| block(t, stop, m.clone()));
        for (k, ((a, b), c)) in v[0].iter().zip(&v[1]).zip(&v[2]).take(signals).enumerate() {
            let (d1, d2) = (a - b, b - c);
            let order = (d1 / d2).abs().log2();
            eprintln!("model A {name}, signal {k} at {stop} s: differences {d1:.2e}, {d2:.2e}: order {order:.2}");
            assert!(order >= 3.8, "{name}, signal {k}: order {order}");
        }
    }
    let rest = [5.0 / 48.0, 1.0 / 42.0];
    for (step, bound) in [(1e-3, 1e-5), (2.5e-4, 1e-8)] {
        let q = block(step, 0.6, curved.clone());
        let off = (q[0] - rest[0]).abs().max((q[2] - rest[1]).abs());
        eprintln!("model A 2-D at rest, T = {step:e}: {off:.2e} m off (5/48, 1/42); v = ({}, {})", q[1], q[3]);
        assert!(off < bound && q[1] == 0.0 && q[3] == 0.0, "T = {step}: {q:?}");
    }
}

/// Model B slides by the continuous law at the stage velocity where RK4 resolves the
/// viscous part (D T/M ≤ 1), holds by the continuous breakaway condition |K e + B u| ≤ g(0),
/// and its mass's stop and breakaway are located within the step (issue 43, items 2 and 4:
/// `Impedance::state_switchings`, the sides locked as an admittance's). M = 1 kg, K = 1000
/// N/m, B = 10 N·s/m, from T = 1e-3, 5e-4, 2.5e-4, every signal of order ≥ 3.8:
/// - its drive on a 1 kg mass pushed by 8 sin 2πt N, F = 5 N: breakaways, stops and
///   reversals by 1.3 s (before: order 1 to 2, erratic, about 1e-6 m off);
/// - 2-D, the drive held, from (1, 0) m/s with e = (0, 2) mm, on a curved path: x and v at
///   0.02 s (before: order 1.0);
/// - 1-D Stribeck (Fc = 3, Fs = 5 N, vs = 0.05 m/s) with D = 5 N·s/m from 0.3 m/s, the
///   drive held: x and v at 0.05 s (before: first order and erratic).
#[test]
fn model_b_slides_and_switches_at_fourth_order_under_rk4() {
    let block = |b: Value, stop: f64, pushed: bool| {
        move |step: f64| {
            let mut b = b.clone();
            for (k, v) in [("mass", 1.0), ("K", 1000.0), ("B", 10.0)] {
                b[k] = json!(v);
            }
            b["type"] = json!("kikuuwe_b");
            let two = b["dims"] == json!(2);
            let signals = if two {
                json!({"x0": "b.x[0]", "x1": "b.x[1]", "v0": "b.v[0]", "v1": "b.v[1]"})
            } else {
                json!({"x0": "b.x", "v0": "b.v"})
            };
            let mut v = json!({"solver": {"method": "rk4", "step": step, "stop_time": stop},
                               "output": {"interval": stop, "signals": signals},
                               "components": {"b": b}, "connections": [{"from": "b.drive", "to": "ground"}]});
            if pushed {
                v["components"]["m"] = json!({"type": "mass", "mass": 1.0});
                v["components"]["p"] = json!({"type": "force_source", "force": "8*sin(2*pi*t)"});
                v["connections"] = json!([{"from": "b.drive", "to": "m"}, {"from": "p.body", "to": "m"}]);
                v["output"]["signals"]["q"] = json!("m.q");
                v["output"]["signals"]["u"] = json!("m.v");
            }
            v
        }
    };
    let pushed = block(json!({"F": 5.0}), 1.3, true);
    let curved = block(json!({"dims": 2, "F": 5.0, "init": {"v": [1.0, 0.0], "e": [0.0, 0.002]}}), 0.02, false);
    let stribeck =
        block(json!({"law": "stribeck", "Fc": 3.0, "Fs": 5.0, "vs": 0.05, "exponent": 2.0, "D": 5.0, "init": {"v": 0.3}}), 0.05, false);
    let (mut sim, _) = build_value(&pushed(1e-3));
    for _ in 0..1300 {
        sim.step().expect("a step");
    }
    let located = sim.contact_events().map_or(0, |c| c.located);
    assert!(located >= 3, "{located} switches located");
    let steps = [1e-3, 5e-4, 2.5e-4];
    let mut failed = Vec::new();
    for (what, found) in [
        ("pushed", orders(&pushed, steps, &["x0", "v0", "q", "u"])),
        ("2-D curved", orders(&curved, steps, &["x0", "x1", "v0", "v1"])),
        ("Stribeck + viscous", orders(&stribeck, steps, &["x0", "v0"])),
    ] {
        below(&format!("model B {what}"), &found, 3.8, &mut failed);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A planar two-link `geared_robot` (1 kg at the end of each 1 m link, m = 1 kg·m² per
/// joint, viscosity 0.5 N·m·s/rad, γu = 0.2) from rest under motor torques 6 sin 2πt and
/// 8 sin 2.6πt N·m: each joint breaks away, stops, reverses, and its load λ changes sign,
/// coupled through M(q). Its switches are located within the step as the 1-DOF gear's
/// (issue 43, item 4): the joints' stops (state switches, the direction locked past zero in
/// axproj), their breakaways and λ = 0 (force switches, from the step's limit h → 0). q and v
/// at 1.3 s against the run at T/16, both joints back-drivable (γv = 0.5) and the second
/// self-locking (γv = 1.05): within 1e-10 at T = 1e-3 and 5e-4 (before: 1e-4 to 5e-4 off at
/// every step, the switches decided by the stages of (69) up to a step late).
#[test]
fn geared_robot_switches_are_located_under_rk4() {
    let robot = |step: f64, gamma_v: [f64; 2]| {
        let link = |x: f64| json!({"origin": [x, 0, 0], "axis": [0, 0, 1], "mass": 1.0, "com": [1.0, 0, 0], "inertia": [0, 0, 0], "damping": 0.5});
        let gears = gamma_v.map(|g| json!({"m": 1.0, "gamma_u": 0.2, "gamma_v": g}));
        json!({"solver": {"method": "rk4", "step": step, "stop_time": 1.3},
               "output": {"interval": 1.3, "signals": {"q0": "r.q[0]", "q1": "r.q[1]", "v0": "r.v[0]", "v1": "r.v[1]"}},
               "components": {
                   "r": {"type": "geared_robot", "links": [link(0.0), link(1.0)], "tip": [1.0, 0, 0], "gears": gears, "init": {"q": [0.3, 0.5]}},
                   "m0": {"type": "force_source", "force": "6*sin(2*pi*t)"},
                   "m1": {"type": "force_source", "force": "8*sin(2*pi*1.3*t)"}
               },
               "connections": [{"from": "m0.body", "to": "r.motor0"}, {"from": "m1.body", "to": "r.motor1"}]})
    };
    let last = |v: &Value| {
        let rec = run_value(v);
        ["q0", "q1", "v0", "v1"].map(|s| *col(&rec, s).last().expect("a row"))
    };
    for gamma_v in [[0.5, 0.5], [0.5, 1.05]] {
        let (mut sim, _) = build_value(&robot(1e-3, gamma_v));
        for _ in 0..1300 {
            sim.step().expect("a step");
        }
        let located = sim.contact_events().map_or(0, |c| c.located);
        let reference = last(&robot(1e-3 / 16.0, gamma_v));
        for step in [1e-3, 5e-4] {
            let v = last(&robot(step, gamma_v));
            let off = v.iter().zip(&reference).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            eprintln!("geared_robot γv = {gamma_v:?}, T = {step:e}: {located} located, {v:?}, {off:.2e} off the run at T/16");
            assert!(off < 1e-10, "γv = {gamma_v:?}, T = {step}: {off:e} off");
        }
        assert!(located >= 5, "γv = {gamma_v:?}: {located} located");
    }
}

/// The gear's switches are located within the step as model A's (issue 43, item 4): its
/// stop (a state switch), its breakaway from the static set (45) and the sign change of φ
/// (32) while it moves (force switches: φ = 0 is a kink of the friction |λs| (34), between
/// forward and back driving). Against closed forms (m = M = 1 kg·m², γu = 0.2):
/// - self-locking (γv = 1.05) from 1 rad/s against a 20 N·m load, held at q = (m + M) v0² /
///   (2 (20 + φ/(1 − ρ̂))) (before: 1.0e-6 rad off at T = 1e-3; now to rounding);
/// - γv = 0.5 sliding from 5 rad/s under 10 sin 2πt N·m at the input and a 2 N·m load:
///   through φ = 0 at 0.532 s, v and q at 0.6 s from the integrals of (14) (before 8.7e-8
///   rad/s off at T = 1e-3, first order; now 4e-13);
/// - the same gear starting at rest: stuck, breakaways, a stop, a reversal by 1.3 s, against
///   the run at T/8 (before 3.7e-4 rad off; now 2e-12).
#[test]
fn gear_stops_breakaways_and_mode_changes_are_located_under_rk4() {
    let gear = |step: f64, stop: f64, gamma_v: f64, v0: f64, motor: &str, load: f64| {
        let v = json!({"solver": {"method": "rk4", "step": step, "stop_time": stop},
                       "output": {"interval": stop, "signals": {"q": "g.q", "v": "g.v"}},
                       "components": {"g": {"type": "gear", "m": 1.0, "M": 1.0, "gamma_u": 0.2, "gamma_v": gamma_v, "init": {"v": v0}},
                                      "motor": {"type": "force_source", "force": motor},
                                      "load": {"type": "force_source", "force": load}},
                       "connections": [{"from": "motor.body", "to": "g.input"}, {"from": "load.body", "to": "g.output"}]});
        let rec = run_value(&v);
        (*col(&rec, "q").last().expect("a row"), *col(&rec, "v").last().expect("a row"))
    };
    let rho = |gamma_v: f64| (0.2 - gamma_v) / 2.0;
    // Held: sliding at −(20 + λ)/(m + M) with φ = γv·20 + ρ̂·20 > 0, λ = φ/(1 − ρ̂).
    let r = rho(1.05);
    let held = 2.0 / (2.0 * (20.0 + (1.05 * 20.0 + r * 20.0) / (1.0 - r)));
    // Sliding through φ = a sin 2πt + b = 0 (a = 10 (γu − ρ̂), b = 2 (γv + ρ̂)).
    let (r, w) = (rho(0.5), std::f64::consts::TAU);
    let (a, b) = (10.0 * (0.2 - r), 2.0 * (0.5 + r));
    let g = |t: f64| a * (1.0 - (w * t).cos()) / w + b * t;
    let h = |t: f64| a * (t - (w * t).sin() / w) / w + b * t * t / 2.0;
    let (d, e) = (|t: f64| 10.0 * (1.0 - (w * t).cos()) / w - 2.0 * t, |t: f64| 10.0 * (t - (w * t).sin() / w) / w - t * t);
    let (ts, t) = (0.5 + (b / a).asin() / w, 0.6);
    let v_slide = 5.0 + (d(t) - (g(ts) / (1.0 - r) - (g(t) - g(ts)) / (1.0 + r))) / 2.0;
    let friction_q = h(ts) / (1.0 - r) + g(ts) * (t - ts) / (1.0 - r) - (h(t) - h(ts) - g(ts) * (t - ts)) / (1.0 + r);
    let q_slide = 5.0 * t + (e(t) - friction_q) / 2.0;
    for step in [1e-3, 5e-4] {
        let (q, v) = gear(step, 0.3, 1.05, 1.0, "0", -20.0);
        let (qs, vs) = gear(step, 0.6, 0.5, 5.0, "10*sin(2*pi*t)", -2.0);
        eprintln!("gear, T = {step:e}: held q {:.2e} off; sliding through φ = 0: q {:.2e}, v {:.2e} off", q - held, qs - q_slide, vs - v_slide);
        assert!((q - held).abs() < 1e-14 && v == 0.0, "held at T = {step}: q = {q} (exact {held}), v = {v}");
        assert!((qs - q_slide).abs() < 1e-12 && (vs - v_slide).abs() < 1e-12, "sliding at T = {step}: q = {qs}, v = {vs}");
    }
    let (q, v) = gear(1e-3, 1.3, 0.5, 0.0, "10*sin(2*pi*t)", -2.0);
    let (q8, v8) = gear(1.25e-4, 1.3, 0.5, 0.0, "10*sin(2*pi*t)", -2.0);
    eprintln!("gear through stick–slip by 1.3 s: q {:.2e}, v {:.2e} from T/8", q - q8, v - v8);
    assert!((q - q8).abs() < 1e-10 && (v - v8).abs() < 1e-10, "q {q} / {q8}, v {v} / {v8}");
}

/// The exact (q, v) at `t_end` of a 1 kg block at rest under h = 8 sin 2πt N against
/// Coulomb friction F = 5 N: between switches it slides at (h − F sgn v) (closed-form
/// integrals), stops where v reaches zero and stays while |h| ≤ F; switch times by
/// bisection to rounding.
fn sine_pushed_block(t_end: f64) -> (f64, f64) {
    use std::f64::consts::TAU;
    let (a, f) = (8.0, 5.0);
    let h = |t: f64| a * (TAU * t).sin();
    let vel = |t: f64, t0: f64, v0: f64, d: f64| v0 - a / TAU * ((TAU * t).cos() - (TAU * t0).cos()) - f * d * (t - t0);
    let pos = |t: f64, t0: f64, q0: f64, v0: f64, d: f64| {
        let s = t - t0;
        q0 + v0 * s - a / TAU * (((TAU * t).sin() - (TAU * t0).sin()) / TAU - (TAU * t0).cos() * s) - f * d * s * s / 2.0
    };
    let bisect = |g: &dyn Fn(f64) -> f64, mut lo: f64, mut hi: f64| {
        let below = g(lo) > 0.0;
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if (g(mid) > 0.0) == below {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let (mut t, mut q, mut v, mut stuck, mut d) = (0.0, 0.0, 0.0, true, 0.0);
    let dt = 1e-4;
    loop {
        if stuck {
            let mut s = t;
            while s < t_end && h(s).abs() <= f {
                s += dt;
            }
            if s >= t_end {
                return (q, 0.0);
            }
            t = bisect(&|x| h(x).abs() - f, s - dt, s);
            (d, stuck, v) = (h(t).signum(), false, 0.0);
        } else {
            let (t0, q0, v0) = (t, q, v);
            let mut s = t0 + 1e-9;
            while s < t_end && vel(s, t0, v0, d) * d > 0.0 {
                s += dt;
            }
            if s >= t_end {
                return (pos(t_end, t0, q0, v0, d), vel(t_end, t0, v0, d));
            }
            t = bisect(&|x| vel(x, t0, v0, d) * d, (s - dt).max(t0), s);
            (q, v) = (pos(t, t0, q0, v0, d), 0.0);
            if h(t).abs() <= f {
                stuck = true;
            } else {
                d = h(t).signum();
            }
        }
    }
}

/// Model B under RK4 (issue 14): the exact zero is in the state too, not only in the signal:
/// its `post_step` sets the mass velocity to 0.0 at the end of every step that ends stuck.
/// Before, RK4 only divided the stopped state by 3 per step (3⁻ⁿ, never 0.0).
#[test]
fn model_b_state_is_exactly_zero_while_stuck_under_rk4() {
    let v = json!({"solver": {"method": "rk4", "step": 1e-3, "stop_time": 0.3},
                   "components": {"m": {"type": "kikuuwe_b", "mass": 1.0, "K": 10.0, "B": 1.0, "F": 8.0, "init": {"v": 1.0}}},
                   "connections": [{"from": "m.drive", "to": "ground"}]});
    let (mut sim, _) = build_value(&v);
    let mut stopped_at = None;
    for k in 1..=300 {
        sim.step().unwrap();
        // State [x, v, s]: position, velocity and stick indicator of the internal mass.
        let (vel, s) = (sim.state()[1], sim.state()[2]);
        if s > 0.5 {
            stopped_at.get_or_insert(k);
            assert_eq!(vel.to_bits(), 0f64.to_bits(), "step {k}: v = {vel} while stuck");
        } else {
            assert!(stopped_at.is_none(), "step {k}: slips again after the stop");
        }
    }
    let k = stopped_at.expect("the mass stops");
    eprintln!("model B (rk4, T = 1e-3): state v exactly 0.0 from step {k} on");
}

/// A stuck oscillator built with `model`: a friction level far above any force of the run
/// (always stuck), so that the only motion is elastic, ω = 10 rad/s, amplitude A = 0.01,
/// 10 s. Signals `x` (displacement from the spring's rest) and `v` (its rate).
/// - `kikuuwe_d`: the mass on its own presliding spring (K = 100, B = 0, M = 1) to the held
///   slider, released from a deflection e(0) = A (issue 33).
/// - `gear`: a self-locking gear (γv = 2) holding the end of a spring K = 100 that pulls a
///   1 kg `mass` (a compliant load).
/// - `karnopp_pair`: two 0.5 kg masses stuck together (FH far above the spring force) on a
///   spring K = 100 to the ground: they oscillate as one body.
/// - `karnopp_stack`: m1 stuck on m2 (FH = 10 N, twenty times the 0.5 N that holds m1; DV = 0.1),
///   m2 free on the ground (F = FH = 0), 0.5 kg each, on a
///   spring K = 100 on m2.
fn stuck_oscillator(model: &str, step: f64) -> Value {
    let solver = json!({"method": "rk4", "step": step, "stop_time": STOP});
    let output = |x: &str, v: &str| json!({"interval": 0.02, "signals": {"x": x, "v": v}});
    let spring = json!({"type": "spring_damper", "K": 100.0});
    match model {
        "kikuuwe_d" => json!({
            "solver": solver, "output": output("m.e", "m.u"),
            "components": {"m": {"type": "kikuuwe_d", "mass": 1.0, "K": 100.0, "B": 0.0, "F": 1e9, "e0": AMP}}
        }),
        "gear" => json!({
            "solver": solver, "output": output("load.q", "load.v"),
            "components": {"g": {"type": "gear", "m": 0.5, "M": 0.5, "gamma_u": 0.0, "gamma_v": 2.0},
                           "load": {"type": "mass", "mass": 1.0, "init": {"q": AMP}}, "s": spring},
            "connections": [{"from": "s.a", "to": "g.output"}, {"from": "s.b", "to": "load"}]
        }),
        "karnopp_pair" => json!({
            "solver": solver, "output": output("p.q1", "p.v1"),
            "components": {"p": {"type": "karnopp_pair", "m1": 0.5, "m2": 0.5, "F": 1e9, "FH": 1e9, "DV": 1e-6,
                                 "init": {"q1": AMP, "q2": AMP}}, "s": spring},
            "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "p.m1"}]
        }),
        "karnopp_stack" => json!({
            "solver": solver, "output": output("p.q2", "p.v2"),
            "components": {"p": {"type": "karnopp_stack", "m1": 0.5, "m2": 0.5,
                                 "upper": {"F": 10.0, "FH": 10.0, "DV": 0.1}, "lower": {"F": 0.0, "FH": 0.0, "DV": 1e-6},
                                 "init": {"q1": AMP, "q2": AMP}}, "s": spring},
            "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "p.m2"}]
        }),
        _ => unreachable!("{model}"),
    }
}

/// Issue 33: while the friction holds, the elastic motion of a stuck state is integrated at
/// RK4's order: order ≥ 3.8 from ω T = 0.04, 0.02, 0.01 and an amplitude error < 1e-6 at
/// ω T = 0.01 (model D lost 52 % of the amplitude at T = 1e-3 before, order 0.87).
#[test]
fn stuck_oscillator_is_fourth_order_under_rk4() {
    let mut failed = Vec::new();
    for model in ["kikuuwe_d", "gear", "karnopp_pair", "karnopp_stack"] {
        let e: Vec<(f64, f64)> = [4e-3, 2e-3, 1e-3]
            .iter()
            .map(|&t| {
                let rec = run_value(&stuck_oscillator(model, t));
                let (x, v) = (col(&rec, "x"), col(&rec, "v"));
                let err =
                    rec.time.iter().zip(&x).map(|(t, x)| (x - AMP * (OMEGA * t).cos()).abs()).fold(0.0, f64::max) / AMP;
                let n = x.len() - 1;
                assert!((rec.time[n] - STOP).abs() < 1e-9, "{model}: ends at {}", rec.time[n]);
                let amp = (x[n] * x[n] + (v[n] / OMEGA).powi(2)).sqrt();
                (err, amp / AMP - 1.0)
            })
            .collect();
        let orders = [(e[0].0 / e[1].0).log2(), (e[1].0 / e[2].0).log2()];
        eprintln!(
            "{model} (rk4, stuck): max |x − A cos ωt|/A over 10 s = {:.3e}, {:.3e}, {:.3e} at ωT = 0.04, 0.02, 0.01 \
             → orders {:.2}, {:.2}; amplitude error at ωT = 0.04, 0.01: {:+.2e}, {:+.2e}",
            e[0].0, e[1].0, e[2].0, orders[0], orders[1], e[0].1, e[2].1
        );
        if orders.iter().any(|&p| p < 3.8) || e[2].1.abs() >= 1e-6 {
            failed.push(format!("{model}: orders {orders:?}, amplitude error {:e}", e[2].1));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Model D's held state under RK4 (issue 33): while stuck the slider does not move at all
/// (w bit for bit) and the energy of the mass on its presliding spring never grows, both
/// where RK4 resolves that spring (K = 100, ω T = 0.01: the continuous held rates) and where
/// it does not (K = 1e8, ω T = 10, far beyond RK4's limit 2.83: (45)'s implicit held rates,
/// which damp the swing instead of diverging).
#[test]
fn model_d_held_slider_is_exact_and_its_energy_never_grows_under_rk4() {
    for (k, e0) in [(100.0, AMP), (1e8, 1e-6)] {
        let v = json!({"solver": {"method": "rk4", "step": 1e-3, "stop_time": 2.0},
                       "components": {"m": {"type": "kikuuwe_d", "mass": 1.0, "K": k, "B": 0.0, "F": 1e9, "e0": e0}}});
        let (mut sim, _) = build_value(&v);
        // State [q, u, w].
        let energy = |x: &[f64]| 0.5 * x[1] * x[1] + 0.5 * k * (x[0] - x[2]).powi(2);
        let w0 = sim.state()[2];
        let start = energy(sim.state());
        let mut last = start;
        for step in 1..=2000 {
            sim.step().unwrap();
            let x = sim.state();
            assert_eq!(x[2].to_bits(), w0.to_bits(), "K = {k}, step {step}: the held slider moved to {}", x[2]);
            let e = energy(x);
            assert!(e <= last * (1.0 + 1e-12), "K = {k}, step {step}: energy grew from {last:e} to {e:e}");
            last = e;
        }
        eprintln!(
            "model D held (rk4, T = 1e-3), K = {k:e}: slider fixed; energy after 2 s / at 0 = {:.3e}",
            last / start
        );
        if k > 1e6 {
            assert!(last < 1e-6 * start, "K = {k}: the stiff held swing is not damped ({:e})", last / start);
        } else {
            assert!(last > (1.0 - 1e-8) * start, "K = {k}: the resolved swing lost energy ({:e})", last / start);
        }
    }
}

/// Model D slides by its continuous law under RK4 where RK4 resolves the slider's
/// relaxation K/B (B ≥ T K/2) and the held spring–damper (issue 43, items 2 and 4): (45) at
/// τ = 0 in every stage, and the slider's stick–slip switch (a kink) located within the
/// step. M = 1 kg, K = 1000 N/m, B = 40 N·s/m, F = 5 N, from T = 1e-3, 5e-4, 2.5e-4:
/// - 2-D: from (1, 0) m/s under h = (0, 2) N, on a curved path: q, u, e at 0.15 s, order
///   ≥ 3.8 (before: 1.0, with τ in (45) the sliding force's direction moved with the stage);
/// - 1-D Stribeck (Fc = 3, Fs = 5 N, vs = 0.05 m/s) with D = 5 N·s/m from 0.3 m/s: q and u
///   at 0.05 s (before 1.0);
/// - from 0.7 m/s under h = −1 N to a stop, the slider sticking: q, u, e at 0.4 s (before
///   1.0);
/// - pushed by 8 sin 2πt N from rest: breakaways, stops and reversals by 1.3 s, against the
///   run at T/16: 1.3e-9 off at T = 1e-3, 20 times less at 5e-4 (before 1.5e-3 off, first
///   order; stepped over the switch, about 1e-7 and erratic).
#[test]
fn model_d_slides_and_switches_at_fourth_order_under_rk4() {
    let block = |m: Value, stop: f64, push: bool| {
        move |step: f64| {
            let mut m = m.clone();
            for (k, v) in [("mass", 1.0), ("K", 1000.0), ("B", 40.0)] {
                m[k] = json!(v);
            }
            m["type"] = json!("kikuuwe_d");
            let mut v = json!({"solver": {"method": "rk4", "step": step, "stop_time": stop},
                               "output": {"interval": stop, "signals": {"qx": "m.q[0]", "ux": "m.u[0]", "ex": "m.e[0]"}},
                               "components": {"m": m}});
            if m["dims"] == json!(2) {
                v["output"]["signals"] = json!({"qx": "m.q[0]", "qy": "m.q[1]", "ux": "m.u[0]", "uy": "m.u[1]", "ex": "m.e[0]", "ey": "m.e[1]"});
            }
            if push {
                v["components"]["push"] = json!({"type": "force_source", "force": "8*sin(2*pi*t)"});
                v["connections"] = json!([{"from": "push.body", "to": "m.body"}]);
            }
            v
        }
    };
    let curved = block(json!({"dims": 2, "F": 5.0, "force": [0.0, 2.0], "init": {"v": [1.0, 0.0]}}), 0.15, false);
    let stribeck = block(json!({"law": "stribeck", "Fc": 3.0, "Fs": 5.0, "vs": 0.05, "exponent": 2.0, "D": 5.0, "init": {"v": 0.3}}), 0.05, false);
    let stop = block(json!({"F": 5.0, "force": -1.0, "init": {"v": 0.7}}), 0.4, false);
    let steps = [1e-3, 5e-4, 2.5e-4];
    let mut failed = Vec::new();
    for (what, found) in [
        ("2-D curved", orders(&curved, steps, &["qx", "qy", "ux", "uy", "ex", "ey"])),
        ("Stribeck + viscous", orders(&stribeck, steps, &["qx", "ux"])),
        ("to a stop", orders(&stop, steps, &["qx", "ux", "ex"])),
    ] {
        below(&format!("model D {what}"), &found, 3.8, &mut failed);
    }
    // After the stop (about 0.12 s) the slider holds exactly while the mass settles on it.
    let mut held = stop(5e-4);
    held["output"] = json!({"interval": 0.05, "signals": {"w": "m.w"}});
    let w = col(&run_value(&held), "w");
    assert!(w.len() == 9 && w[4..].iter().all(|&x| x == w[4]), "the slider moved after its stop: {w:?}");
    // Through stick–slip switches: located, and the errors shrink much faster than T.
    let pushed = block(json!({"F": 5.0}), 1.3, true);
    let (mut sim, _) = build_value(&pushed(1e-3));
    for _ in 0..1300 {
        sim.step().expect("a step");
    }
    let located = sim.contact_events().map_or(0, |c| c.located);
    let last = |step: f64| {
        let rec = run_value(&pushed(step));
        ["qx", "ux", "ex"].map(|s| *col(&rec, s).last().expect("a row"))
    };
    let reference = last(1e-3 / 16.0);
    let errors = [1e-3, 5e-4].map(|t| {
        let v = last(t);
        let off = v.iter().zip(&reference).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!("model D pushed by 8 sin 2πt, T = {t:e}: {v:?}, {off:.2e} off the run at T/16");
        off
    });
    assert!(located >= 3, "{located} switches located");
    assert!(errors[0] < 5e-9 && errors[1] < errors[0] / 8.0, "errors {errors:?}");
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A held element of spring `k` and damper `b` on a 1 kg body launched at v₀ = A ω from its
/// rest position (friction far above any force of the run, so it never slips): with K = 100
/// the body swings (ω = 10 rad/s, ζ = B/20) as x = (v₀/ω_d) e^(−ζωt) sin ω_d t. Signals `x`,
/// `v`.
/// - `fric_k`, `kikuuwe_c`: the element between the ground and a `mass`.
/// - `kikuuwe_b`: its internal 1 kg mass held, the `mass` on its drive port.
/// - `plane_contact`, `body_contact`: a `point_mass` resting on the contact (normal spring
///   the same K, at its static depth m g/K), launched along x: the tangential element holds.
fn held_element(model: &str, step: f64, k: f64, b: f64) -> Value {
    let solver = json!({"method": "rk4", "step": step, "stop_time": STOP});
    let v0 = AMP * OMEGA;
    let output = |x: &str, v: &str| json!({"interval": 0.02, "signals": {"x": x, "v": v}});
    let g = 9.81;
    let resting = json!({"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g],
                         "init": {"p": [0, 0, -g / k], "v": [v0, 0, 0]}});
    match model {
        "fric_k" | "kikuuwe_c" => json!({
            "solver": solver, "output": output("m.q", "m.v"),
            "components": {"m": {"type": "mass", "mass": 1.0, "init": {"v": v0}},
                           "f": {"type": model, "K": k, "B": b, "F": 1e9}},
            "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}]
        }),
        // Model B's internal mass (1 kg) held; the drive carries the swinging `mass`.
        "kikuuwe_b" => json!({
            "solver": solver, "output": output("m.q", "m.v"),
            "components": {"m": {"type": "mass", "mass": 1.0, "init": {"v": v0}},
                           "f": {"type": "kikuuwe_b", "mass": 1.0, "K": k, "B": b, "F": 1e9}},
            "connections": [{"from": "f.drive", "to": "m"}]
        }),
        "plane_contact" => json!({
            "solver": solver, "output": output("m.p[0]", "m.v[0]"),
            "components": {"m": resting, "c": {"type": "plane_contact", "K": k, "B": b, "mu": 1e6}},
            "connections": [{"from": "c.body", "to": "m"}]
        }),
        "body_contact" => json!({
            "solver": solver, "output": output("m.p[0]", "m.v[0]"),
            "components": {"m": resting, "c": {"type": "body_contact", "K": k, "B": b, "mu": 1e6}},
            "connections": [{"from": "c.a", "to": "m"}, {"from": "c.b", "to": "ground"}]
        }),
        _ => unreachable!("{model}"),
    }
}

/// Issue 43: the elastic presliding motion of a held I_fricK element is integrated at RK4's
/// order: under RK4 a stage in which the element holds returns its continuous law K e + B v
/// (components/src/friction/model_c.rs, `hold`). B = 1 (B ≥ T K/2 at every step of the test:
/// the continuous law). Order ≥ 3.8 from ω T = 0.04, 0.02, 0.01
/// against the analytic damped swing, and an error < 1e-6 A at ω T = 0.01 (the element never
/// slips: any slip would leave an offset). Before: orders 0.56–0.76 (fric_k, kikuuwe_c),
/// 2.03 (a box on a tray), from the τK damping of (19b) in every stage.
#[test]
fn held_friction_elements_are_fourth_order_under_rk4() {
    held_swings_are_fourth_order(1.0, 1e-6);
}

/// [`held_element`] K = 100 and damper `b` for each held element, against the analytic
/// damped swing at ω T = 0.04, 0.02, 0.01: orders ≥ 3.8 and an error below `bound`·A at
/// ω T = 0.01 (the element never slips: any slip would leave an offset).
fn held_swings_are_fourth_order(b: f64, bound: f64) {
    let zeta = b / (2.0 * (100.0f64).sqrt());
    let wd = OMEGA * (1.0 - zeta * zeta).sqrt();
    let exact = |t: f64| AMP * OMEGA / wd * (-zeta * OMEGA * t).exp() * (wd * t).sin();
    let mut failed = Vec::new();
    for model in ["fric_k", "kikuuwe_c", "kikuuwe_b", "plane_contact", "body_contact"] {
        let e: Vec<f64> = [4e-3, 2e-3, 1e-3]
            .iter()
            .map(|&t| {
                let rec = run_value(&held_element(model, t, 100.0, b));
                let x = col(&rec, "x");
                let n = x.len() - 1;
                assert!((rec.time[n] - STOP).abs() < 1e-9, "{model}: ends at {}", rec.time[n]);
                rec.time.iter().zip(&x).map(|(t, x)| (x - exact(*t)).abs()).fold(0.0, f64::max) / AMP
            })
            .collect();
        let orders = [(e[0] / e[1]).log2(), (e[1] / e[2]).log2()];
        eprintln!(
            "{model} (rk4, held, B = {b}): max |x − exact|/A over 10 s = {:.3e}, {:.3e}, {:.3e} at ωT = 0.04, 0.02, 0.01 \
             → orders {:.2}, {:.2}",
            e[0], e[1], e[2], orders[0], orders[1]
        );
        if orders.iter().any(|&p| p < 3.8) || e[2] >= bound {
            failed.push(format!("{model}: orders {orders:?}, error {:e}", e[2]));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A `karnopp_mass` (1 kg, F = 2 N, FH = 3 N, DV = 1e-3) or a `karnopp_pair` (1 and 2 kg,
/// m2 on a spring of 50 N/m to the ground) pulled through a spring of 100 N/m by a drive
/// at 0.1 m/s: stick–slip cycles, each a breakaway, a band exit, a band entry, for 2 s.
fn karnopp_pulled(kind: &str, step: f64) -> Value {
    let solver = json!({"method": "rk4", "step": step, "stop_time": 2.0});
    let (drive, spring) = (json!({"type": "velocity_source", "velocity": 0.1}), json!({"type": "spring_damper", "K": 100.0}));
    if kind == "karnopp_mass" {
        return json!({"solver": solver, "output": {"interval": 2.0, "signals": {"q": "m.q"}},
            "components": {"drive": drive, "s": spring,
                           "m": {"type": "karnopp_mass", "mass": 1.0, "F": 2.0, "FH": 3.0, "DV": 1e-3}},
            "connections": [{"from": "s.a", "to": "drive"}, {"from": "s.b", "to": "m"}]});
    }
    json!({"solver": solver, "output": {"interval": 2.0, "signals": {"q": "m.q1", "q2": "m.q2"}},
        "components": {"drive": drive, "s": spring, "s2": {"type": "spring_damper", "K": 50.0},
                       "m": {"type": "karnopp_pair", "m1": 1.0, "m2": 2.0, "F": 2.0, "FH": 3.0, "DV": 1e-3}},
        "connections": [{"from": "s.a", "to": "drive"}, {"from": "s.b", "to": "m.m1"},
                        {"from": "s2.a", "to": "m.m2"}, {"from": "s2.b", "to": "ground"}]})
}

/// Karnopp's mass and pair through their stick–slip cycles (a breakaway, a band exit and a
/// band entry each) against the T/32 run. A momentum that enters the band is put on its
/// edge (`Admittance::on_switch`): held just inside it, it would leave a time ∝ √distance
/// after the next breakaway, and the search ends 1e-9 T from the edge. Against the T =
/// 3.125e-5 run at 2 s: the mass 2.7e-11 / 1.0e-11 m at T = 1e-3 / 5e-4 (that floor is the
/// edge's last bit through the same √: no order), the pair's q1 1.2e-12 / 9.2e-14 m (order
/// 3.7). The previous landing: 1.3e-6 / 1.2e-6 m and 9.6e-3 / 9.6e-3 m.
#[test]
fn karnopp_mass_and_pair_through_stick_slip_cycles_under_rk4() {
    for (kind, bound) in [("karnopp_mass", 1e-9), ("karnopp_pair", 1e-10)] {
        let end = |step: f64| *col(&run_value(&karnopp_pulled(kind, step)), "q").last().expect("a row");
        let reference = end(1e-3 / 32.0);
        let off = [(end(1e-3) - reference).abs(), (end(5e-4) - reference).abs()];
        eprintln!("{kind}: q(2 s) off by {:.1e}, {:.1e} m at T = 1e-3, 5e-4", off[0], off[1]);
        assert!(off.iter().all(|&e| e < bound), "{kind}: {off:?}");
        if kind == "karnopp_pair" {
            assert!((off[0] / off[1]).log2() >= 3.0, "{kind}: order {}", (off[0] / off[1]).log2());
        }
    }
}

/// Issue 43, part 3: where B < T K/2 the element holds by (19b) with the stage's τ, whose
/// τK keeps its stiff slip relaxation K/B implicit; where RK4 resolves its held spring with
/// the mass on its port (`Impedance::held_frequency`: Σ K/M of the stuck springs on the
/// port, RK4 stable at 2T), a stage in which it holds returns the continuous law K e + B v
/// and ė = v. The held swing of [`held_element`] with B = 0.01 (B < T K/2 = 0.05–0.2 at
/// every step of the test): order 4.00 (0.56 / 0.76 before, from the τK damping of every
/// stage), 7.7e-9 A off at ω T = 0.01.
#[test]
fn held_elements_below_the_continuous_law_are_fourth_order_where_rk4_resolves_the_spring() {
    held_swings_are_fourth_order(0.01, 1e-7);
}

/// Where RK4 would not resolve the held spring with the margin of twice the step (K =
/// 2.25e6, B = 1 on 1 kg at T = 1e-3: ω T = 1.5, 3 at 2T, past RK4's 2.83), the element
/// keeps (19b) while it holds: the swing launched at 0.1 m/s stays held, bounded by its
/// amplitude v₀/ω, and the τK of every stage damps it out within the 10 s (with the
/// continuous held rates its physical B alone would leave 37 % of the energy after 1 s).
#[test]
fn held_elements_past_the_margin_keep_the_implicit_form() {
    for model in ["fric_k", "kikuuwe_c", "kikuuwe_b", "plane_contact", "body_contact"] {
        let k = 2.25e6;
        let rec = run_value(&held_element(model, 1e-3, k, 1.0));
        let (x, v) = (col(&rec, "x"), col(&rec, "v"));
        let amp = AMP * OMEGA / k.sqrt();
        let energy = |i: usize| 0.5 * v[i] * v[i] + 0.5 * k * x[i] * x[i];
        let n = x.len() - 1;
        let peak = x.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        eprintln!("{model} (rk4, held, ω T = 1.5): max |x| = {peak:.3e} (v₀/ω = {amp:.3e}), energy {:.3e} → {:.3e}", energy(0), energy(n));
        assert!(x.iter().chain(&v).all(|z| z.is_finite()) && peak <= amp, "{model}: peak {peak}");
        assert!(energy(n) < 1e-12 * 0.5 * (AMP * OMEGA).powi(2), "{model}: {}", energy(n));
    }
}

/// The 2-D sliding case of issue 43: a 1 kg point launched along x at 1 m/s on a friction
/// element (K = 1e5, B = 200, μ m g = 4.905 N) and pulled along y by 0.3 μ m g, so that it
/// slides on a curved path without stopping for 0.2 s. `element`: `body_contact`,
/// `plane_contact` or `sphere_contact` with the point resting at its static depth under
/// gravity, or
/// `kikuuwe_c` with dims 2 between the ground and the point (no gravity). Signal `y`.
fn sliding_2d(element: &str, step: f64) -> Value {
    let g = 9.81;
    let solver = json!({"method": "rk4", "step": step, "stop_time": 0.2});
    let output = json!({"interval": 0.2, "signals": {"y": "m.p[1]"}});
    let pull = json!({"type": "force_source", "domain": "point3", "force": [0, 0.3 * 0.5 * g, 0]});
    let resting = json!({"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g],
                         "init": {"p": [0, 0, -g / 1e5], "v": [1.0, 0, 0]}});
    match element {
        "body_contact" => json!({
            "solver": solver, "output": output,
            "components": {"m": resting, "pull": pull, "c": {"type": "body_contact", "K": 1e5, "B": 200.0, "mu": 0.5}},
            "connections": [{"from": "c.a", "to": "m"}, {"from": "c.b", "to": "ground"}, {"from": "pull.body", "to": "m"}]
        }),
        "plane_contact" => json!({
            "solver": solver, "output": output,
            "components": {"m": resting, "pull": pull, "c": {"type": "plane_contact", "K": 1e5, "B": 200.0, "mu": 0.5}},
            "connections": [{"from": "c.body", "to": "m"}, {"from": "pull.body", "to": "m"}]
        }),
        // The point on a sphere of radius 100 m centred 100 m below it.
        "sphere_contact" => json!({
            "solver": solver, "output": output,
            "components": {"m": resting, "pull": pull,
                           "c": {"type": "sphere_contact", "K": 1e5, "B": 200.0, "mu": 0.5, "radius_a": 0.0, "radius_b": 100.0}},
            "connections": [{"from": "c.a", "to": "m"}, {"from": "c.b", "to": "ground", "at": [0, 0, -100.0]},
                            {"from": "pull.body", "to": "m"}]
        }),
        "kikuuwe_c" => json!({
            "solver": solver, "output": output,
            "components": {"m": {"type": "point_mass", "mass": 1.0, "init": {"v": [1.0, 0, 0]}}, "pull": pull,
                           "c": {"type": "kikuuwe_c", "dims": 2, "K": 1e5, "B": 200.0, "F": 0.5 * g}},
            "connections": [{"from": "c.a", "to": "ground"}, {"from": "c.b", "to": "m"}, {"from": "pull.body", "to": "m"}]
        }),
        _ => unreachable!("{element}"),
    }
}

/// A solid sphere (1 kg, r = 0.1 m) on a `body_contact` (K 1e5, B 200, μ 0.5), thrown at
/// 3 m/s along x spinning at (20, 0, 20) rad/s: its contact point slides along a direction
/// that is not the centre's, for the whole 0.2 s (pure rolling would begin at 0.3 s).
fn sliding_sphere(step: f64) -> Value {
    let (g, r) = (9.81, 0.1);
    let i = 0.4 * r * r;
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 0.2},
        "output": {"interval": 0.2, "signals": {"y": "s.p[1]"}},
        "components": {
            "s": {"type": "rigid_body", "mass": 1.0, "inertia": [i, i, i], "gravity": [0, 0, -g],
                  "init": {"p": [0, 0, r - g / 1e5], "v": [3.0, 0, 0], "w": [20.0, 0, 20.0]}},
            "c": {"type": "body_contact", "K": 1e5, "B": 200.0, "mu": 0.5, "radius": r, "domain_a": "frame"}
        },
        "connections": [{"from": "c.a", "to": "s"}, {"from": "c.b", "to": "ground"}]
    })
}

/// Issue 43: sliding in two dimensions is fourth order under RK4. With B ≥ T K/2 the
/// elements run their continuous law (τ = 0 in (19)), whose relaxation K/B RK4 resolves:
/// the direction of the sliding force no longer depends on the stage's τ. The observed order
/// of y(0.2 s) from three steps (Richardson: the differences of successive halvings) is
/// ≥ 3.8 (before: 0.98 for the point, 2.7 for the spinning sphere).
#[test]
fn sliding_in_two_dimensions_is_fourth_order_under_rk4() {
    let y = |v: Value| {
        let rec = run_value(&v);
        *col(&rec, "y").last().unwrap()
    };
    let mut cases: Vec<(String, [f64; 3])> = ["body_contact", "plane_contact", "sphere_contact", "kikuuwe_c"]
        .iter()
        .map(|e| (e.to_string(), [4e-4, 2e-4, 1e-4].map(|t| y(sliding_2d(e, t)))))
        .collect();
    cases.push(("sphere with spin".into(), [8e-4, 4e-4, 2e-4].map(|t| y(sliding_sphere(t)))));
    for (name, v) in &cases {
        let (d1, d2) = (v[0] - v[1], v[1] - v[2]);
        let order = (d1 / d2).abs().log2();
        eprintln!("{name}: y(0.2 s) = {:.12} / {:.12} / {:.12}, differences {d1:.2e}, {d2:.2e}: order {order:.2}", v[0], v[1], v[2]);
        assert!(order >= 3.8, "{name}: order {order}");
    }
}

/// examples/sphere_on_cart.json run to `stop` with one output row there, at a step given to
/// the returned function.
fn sphere_on_cart(stop: f64) -> impl Fn(f64) -> Value {
    example_at("sphere_on_cart.json", stop)
}

/// Issue 43: a contact between two rigid bodies in 3-D (examples/sphere_on_cart.json: a
/// spinning sphere sliding on a cart that the friction drags along, body_contact with
/// K = 1e5, B = 50, μ = 0.2) is fourth order while it slides: the sphere's velocity, its
/// spin and the slip velocity at t = 0.05 s, before it starts to roll, from three steps.
/// (Through its slide → roll switch at t ≈ 0.08 s:
/// `stick_slip_switches_keep_fourth_order_under_rk4`.)
#[test]
fn a_sphere_sliding_on_a_moving_cart_is_fourth_order_under_rk4() {
    let system = sphere_on_cart(0.05);
    let at = |step: f64| {
        let rec = run_value(&system(step));
        ["sphere_vx", "spin_y", "slip_x"].map(|s| *col(&rec, s).last().expect("a row"))
    };
    let v = [1e-4, 5e-5, 2.5e-5].map(at);
    for (k, name) in ["sphere_vx", "spin_y", "slip_x"].iter().enumerate() {
        let (d1, d2) = (v[0][k] - v[1][k], v[1][k] - v[2][k]);
        let order = (d1 / d2).abs().log2();
        eprintln!("{name}(0.05 s) = {:.13} / {:.13} / {:.13}, differences {d1:.2e}, {d2:.2e}: order {order:.2}", v[0][k], v[1][k], v[2][k]);
        assert!(order >= 3.8, "{name}: order {order}");
    }
    // Still sliding at 0.05 s: the slip velocity is far from zero.
    assert!(v[2][2].abs() > 0.1, "slip {}", v[2][2]);
}

/// A 1 kg body pushed back and forth by 8 sin(2πt) N against a friction element of level
/// F = 5 N (K = 1e4, B = 50: B ≥ T K/2 at every step of the test, so the element runs its
/// continuous law): it holds until |push| passes F near t = 0.107 s, slides, sticks again
/// when its velocity returns to zero, and slides back, with a stick–slip switch every few
/// tenths of a second. `events`: the solver's `"events"`. Signals `x`, `v`.
/// - `fric_k`, `kikuuwe_c`: the element between the ground and a `mass`.
/// - `plane_contact`, `body_contact`: a `point_mass` resting on the contact at its static
///   depth (normal K = 1e4, μ = 5/(m g)), pushed along x.
fn pushed(element: &str, step: f64, events: &str) -> Value {
    let solver = json!({"method": "rk4", "step": step, "stop_time": 0.7, "events": events});
    let push = json!({"type": "force_source", "force": "8*sin(2*pi*t)"});
    let output = |x: &str, v: &str| json!({"interval": 0.7, "signals": {"x": x, "v": v}});
    let g = 9.81;
    let resting = json!({"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, -g / 1e4]}});
    let push3 = json!({"type": "force_source", "domain": "point3", "force": ["8*sin(2*pi*t)", 0, 0]});
    let mu = 5.0 / g;
    match element {
        "fric_k" | "kikuuwe_c" => json!({
            "solver": solver, "output": output("m.q", "m.v"),
            "components": {"m": {"type": "mass", "mass": 1.0}, "push": push,
                           "f": {"type": element, "K": 1e4, "B": 50.0, "F": 5.0}},
            "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}, {"from": "push.body", "to": "m"}]
        }),
        "plane_contact" => json!({
            "solver": solver, "output": output("m.p[0]", "m.v[0]"),
            "components": {"m": resting, "push": push3, "c": {"type": "plane_contact", "K": 1e4, "B": 50.0, "mu": mu}},
            "connections": [{"from": "c.body", "to": "m"}, {"from": "push.body", "to": "m"}]
        }),
        "body_contact" => json!({
            "solver": solver, "output": output("m.p[0]", "m.v[0]"),
            "components": {"m": resting, "push": push3, "c": {"type": "body_contact", "K": 1e4, "B": 50.0, "mu": mu}},
            "connections": [{"from": "c.a", "to": "m"}, {"from": "c.b", "to": "ground"}, {"from": "push.body", "to": "m"}]
        }),
        _ => unreachable!("{element}"),
    }
}

/// Print each signal's values and order from [`orders`], and list in `failed` those of
/// order below `least`.
fn below(what: &str, found: &[(f64, [f64; 3])], least: f64, failed: &mut Vec<String>) {
    for (k, (order, v)) in found.iter().enumerate() {
        eprintln!("{what}[{k}]: {:.13} / {:.13} / {:.13}: order {order:.2}", v[0], v[1], v[2]);
        if *order < least {
            failed.push(format!("{what}[{k}]: order {order} < {least}"));
        }
    }
}

/// The Richardson order of the last row's `signals` from runs at `steps` (halving).
fn orders(system: impl Fn(f64) -> Value, steps: [f64; 3], signals: &[&str]) -> Vec<(f64, [f64; 3])> {
    let v = steps.map(|t| {
        let rec = run_value(&system(t));
        signals.iter().map(|s| *col(&rec, s).last().expect("a row")).collect::<Vec<f64>>()
    });
    (0..signals.len())
        .map(|k| {
            let (d1, d2) = (v[0][k] - v[1][k], v[1][k] - v[2][k]);
            ((d1 / d2).abs().log2(), [v[0][k], v[1][k], v[2][k]])
        })
        .collect()
}

/// Issue 43, item 4: a run through stick–slip switches keeps RK4's fourth order once the
/// switches are located within the step (`Impedance::slip_switching`, framework/src/stepper/
/// events.rs): the pushed body of [`pushed`] at t = 0.7 s after three switches, from
/// T = 1e-3, 5e-4, 2.5e-4, for every element with the continuous law; and the sphere on the
/// moving cart (examples/sphere_on_cart.json) at t = 0.1 s, after its slide → roll switch
/// (T = 1e-4, 5e-5, 2.5e-5). Stepped over (`"events": "contacts"`), the same runs are of
/// order about 1.4–2.7 (fric_k: x 1.38, 2.70; the sphere: 2.02, 1.52).
#[test]
fn stick_slip_switches_keep_fourth_order_under_rk4() {
    let mut failed = Vec::new();
    let mut check = |what: &str, found: Vec<(f64, [f64; 3])>| below(what, &found, 3.8, &mut failed);
    for element in ["fric_k", "kikuuwe_c", "plane_contact", "body_contact"] {
        // The run slides and sticks: switches are located.
        let (mut sim, _) = build_value(&pushed(element, 1e-3, "all"));
        for _ in 0..700 {
            sim.step().expect("a step");
        }
        let located = sim.contact_events().map_or(0, |c| c.located);
        assert!(located >= 3, "{element}: {located} switches located");
        check(element, orders(|t| pushed(element, t, "all"), [1e-3, 5e-4, 2.5e-4], &["x", "v"]));
    }
    let found = orders(sphere_on_cart(0.1), [1e-4, 5e-5, 2.5e-5], &["sphere_vx", "spin_y", "slip_x"]);
    // Rolling at 0.1 s: the slip is the element's elastic deflection rate only.
    assert!(found[2].1[2].abs() < 1e-6, "slip {}", found[2].1[2]);
    check("sphere_on_cart", found);
    // Stepped over, the switch costs the order (so the location is what keeps it).
    let stepped = orders(|t| pushed("fric_k", t, "contacts"), [1e-3, 5e-4, 2.5e-4], &["x"]);
    eprintln!("fric_k stepped over: order {:.2}", stepped[0].0);
    assert!(stepped[0].0 < 3.0, "fric_k stepped over: order {}", stepped[0].0);
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A mass on a spring (ω = 10 rad/s) driven by a force table whose rows fall between the
/// steps, and pushed back to rest: x and v at 1.5 s.
fn kinked_force(step: f64) -> Value {
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.5},
        "output": {"interval": 1.5, "signals": {"x": "m.q", "v": "m.v"}},
        "components": {
            "m": {"type": "kikuuwe_a", "mass": 1.0, "F": 0.0},
            "s": {"type": "spring_damper", "K": 100.0},
            "f": {"type": "force_source", "force": {"table": [[0.0, 0.0], [0.3037, 1.0], [0.6119, -0.5], [1.0021, 0.2]]}}
        },
        "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "m"}, {"from": "f", "to": "m"}]
    })
}

/// A mass on a spring–damper (K = 100, B = 5) whose other end a velocity source moves at
/// 1 m/s, then at −0.5 m/s from t = 0.3037 s (a jump between two steps): the damper reads
/// the source's velocity state, which must start the sub-step after the jump on its new
/// side (`Admittance::at_break`).
fn velocity_jump(step: f64) -> Value {
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 0.9},
        "output": {"interval": 0.9, "signals": {"x": "m.q", "v": "m.v"}},
        "components": {
            "m": {"type": "mass", "mass": 1.0},
            "s": {"type": "spring_damper", "K": 100.0, "B": 5.0},
            "drive": {"type": "velocity_source", "velocity": {"piecewise": [{"until": 0.3037, "value": 1.0}, {"value": -0.5}]}}
        },
        "connections": [{"from": "s.a", "to": "drive"}, {"from": "s.b", "to": "m"}]
    })
}

/// Inputs with kinks (a table's rows, a piecewise `until`) inside a step cost RK4 its order
/// unless the step ends a sub-step there and its stages read the input's piece of that
/// sub-step, also where the last stages look past its end (`Admittance::next_break`,
/// `TimeFunction::eval_on`): the kinked force on a mass–spring, T = 1e-2 / 5e-3 / 2.5e-3;
/// examples/conveyor.json (a velocity table whose kinks start and end the tray's
/// acceleration, the box stuck on four corner contacts) at 1.2 s, T = 1e-3 / 5e-4 /
/// 2.5e-4; and a velocity source's jump ([`velocity_jump`]). Read across the kinks (the
/// build before), the conveyor was of order 1.0 / 2.0.
#[test]
fn inputs_with_kinks_keep_fourth_order_under_rk4() {
    let mut failed = Vec::new();
    let conveyor = example_at("conveyor.json", 1.2);
    let runs = [
        ("force table", orders(kinked_force, [1e-2, 5e-3, 2.5e-3], &["x", "v"])),
        ("conveyor", orders(conveyor, [1e-3, 5e-4, 2.5e-4], &["x"])),
        ("velocity jump", orders(velocity_jump, [1e-2, 5e-3, 2.5e-3], &["x", "v"])),
    ];
    for (what, found) in runs {
        below(what, &found, 3.8, &mut failed);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A velocity source gives each RK4 stage u at the stage's time (`stage_rate` in
/// components/src/sources/velocity.rs): a 1 kg mass on a spring–damper (K = 1000, B = 10)
/// whose other end moves with u = 0.4 sin 2πt m/s, x and v at 0.2 s from T = 1e-3, 5e-4,
/// 2.5e-4: order ≥ 3.8 (before 2.0: the third stage's velocity was off by T² ü/4), and the
/// source's velocity state is u at every step's end (before: 4e-6 m/s off at T = 1e-3).
#[test]
fn a_velocity_source_drives_at_fourth_order_under_rk4() {
    let driven = |step: f64| {
        json!({"solver": {"method": "rk4", "step": step, "stop_time": 0.2},
               "output": {"interval": 0.2, "signals": {"x": "m.q", "v": "m.v", "u": "d.v"}},
               "components": {
                   "m": {"type": "mass", "mass": 1.0},
                   "s": {"type": "spring_damper", "K": 1000.0, "B": 10.0},
                   "d": {"type": "velocity_source", "velocity": "0.4*sin(2*pi*t)"}
               },
               "connections": [{"from": "s.a", "to": "d"}, {"from": "s.b", "to": "m"}]})
    };
    let found = orders(driven, [1e-3, 5e-4, 2.5e-4], &["x", "v", "u"]);
    let exact = 0.4 * (std::f64::consts::TAU * 0.2).sin();
    for (k, (order, v)) in found.iter().take(2).enumerate() {
        eprintln!("driven mass[{k}]: {:.13} / {:.13} / {:.13}: order {order:.2}", v[0], v[1], v[2]);
        assert!(*order >= 3.8, "signal {k}: order {order}");
    }
    let u = found[2].1;
    eprintln!("source velocity at 0.2 s: {u:?}, u = {exact}");
    assert!(u.iter().all(|u| (u - exact).abs() < 1e-14), "{u:?} against {exact}");
}

/// A 1 kg point mass dropped from 5 cm at 0.5 m/s along x onto a `plane_contact` (K = 1e5,
/// μ = 0.3) with damper `b`: x, z and their rates at `stop`.
fn dropped_ball(b: f64, stop: f64) -> impl Fn(f64) -> Value {
    move |step: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": stop},
            "output": {"interval": stop, "signals": {"x": "m.p[0]", "vx": "m.v[0]", "z": "m.p[2]", "vz": "m.v[2]"}},
            "components": {
                "m": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -9.81], "init": {"p": [0, 0, 0.05], "v": [0.5, 0, 0]}},
                "c": {"type": "plane_contact", "K": 1e5, "B": b, "mu": 0.3}
            },
            "connections": [{"from": "c.body", "to": "m"}]
        })
    }
}

/// Where a contact closes its force jumps (the damper's B·|δ̇| at once), and a located
/// sub-step that ended just past the switch carried T/6 of that jump in its last stage
/// (first order: the dropped ball's x at 1 s 1.06 / 0.97). Ending it just before the switch
/// and crossing in at most 1e-9 T keeps the order: the ball landing (B = 200: it slides,
/// then sticks), bouncing (B = 20, three bounces by 0.5 s, T ≤ T K/(2B) so that every run
/// uses the element's continuous law; 3.6, from T = 4e-4 2.5–2.7), and the paper's rolling
/// sphere while it slides and bounces (0.3 s; it was 3.3).
#[test]
fn contact_closings_keep_the_order_under_rk4() {
    let mut failed = Vec::new();
    let runs = [
        ("landing", orders(dropped_ball(200.0, 1.0), [1e-3, 5e-4, 2.5e-4], &["x"]), 3.8),
        ("bouncing", orders(dropped_ball(20.0, 0.5), [2e-4, 1e-4, 5e-5], &["x", "z", "vz"]), 3.5),
        ("rolling sphere", orders(example_at("rolling_sphere.json", 0.3), [1e-4, 5e-5, 2.5e-5], &["center_vx", "height"]), 3.8),
    ];
    for (what, found, least) in runs {
        below(what, &found, least, &mut failed);
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// The paper's Sim I (examples/rolling_sphere.json: K = 1e7, B = 10, μ = 0.1) through its
/// slide → roll switch at 0.58 s and the bounces after it, at steps where RK4 resolves the
/// contact's relaxation K/B (T ≤ 2B/K = 2e-6 s: the element's continuous law, its stick–slip
/// switches located; at the paper's T = 1e-4 s the paper's form (19b) holds it, whose τK is
/// the held damping, first order by construction). center_vx, spin_y and contact_vx at
/// 1.0 s from T = 2e-6, 1e-6, 5e-7: order ≥ 3 (3.3). Before, a contact that closed and held
/// at once left its stick–slip function's jump in the search, which kept each trial near the
/// bracket's start until the trials ran out: the runs differed by 5e-7, 3.6e-7 m/s.
#[test]
fn sim1_keeps_third_order_through_slide_to_roll_where_rk4_resolves_the_contact() {
    let found = orders(example_at("rolling_sphere.json", 1.0), [2e-6, 1e-6, 5e-7], &["center_vx", "spin_y", "contact_vx"]);
    for (k, (order, v)) in found.iter().enumerate() {
        eprintln!("Sim I at 1.0 s [{k}]: {:.13} / {:.13} / {:.13}: order {order:.2}", v[0], v[1], v[2]);
        assert!(*order >= 3.0, "signal {k}: order {order}");
    }
    // Rolling: the centre at 5/7 v0 to the elastic ringing of the contact.
    assert!((found[0].1[2] - 2.0 * 5.0 / 7.0).abs() < 1e-3, "center_vx {}", found[0].1[2]);
}

/// An example with its step set and run to `stop` (one output row there).
fn example_at(name: &str, stop: f64) -> impl Fn(f64) -> Value {
    let text = std::fs::read_to_string(example(name)).expect("the example");
    move |step: f64| {
        let mut v: Value = serde_json::from_str(&text).expect("JSON");
        v["solver"]["step"] = json!(step);
        v["solver"]["stop_time"] = json!(stop);
        v["output"]["interval"] = json!(stop);
        v
    }
}

/// Karnopp's switches are located within the step: the band edges, where the velocity
/// jumps between 0 and ±DV (`Admittance::state_switchings`, searched with the sides locked
/// where the sub-step starts: `Admittance::lock_sides`), and the breakaways, where the
/// needed sticking force reaches FH (`Admittance::force_switchings`, a kink that depends on
/// the port forces). examples/karnopp_fig4.json through its switches by 0.6 s keeps fourth
/// order: against the T = 1.5625e-5 run, q1 and q2 are 2.3e-11 and 6.5e-11 m off at T = 1e-3
/// and 1.3e-12 and 4.0e-12 m at 5e-4 (orders 4.1 / 4.0). Stepped over (two builds before): 3.0e-4 m off; band
/// edges located but the breakaways not, and the edges searched unlocked: about 1e-6 m at
/// every step.
#[test]
fn karnopp_band_edges_are_located_under_rk4() {
    let system = example_at("karnopp_fig4.json", 0.6);
    let (mut sim, _) = build_value(&system(5e-4));
    for _ in 0..1200 {
        sim.step().expect("a step");
    }
    let c = sim.contact_events().expect("switches are located");
    eprintln!("karnopp_fig4 at T = 5e-4: {} switches located in {} trials, {} stepped over", c.located, c.trials, c.unlocated);
    assert!(c.located >= 9 && c.unlocated == 0, "{c:?}");
    let end = |step: f64| {
        let rec = run_value(&system(step));
        [*col(&rec, "q1").last().expect("a row"), *col(&rec, "q2").last().expect("a row")]
    };
    let reference = end(1.5625e-5);
    let off: Vec<[f64; 2]> = [1e-3, 5e-4]
        .iter()
        .map(|&step| {
            let q = end(step);
            let off = [(q[0] - reference[0]).abs(), (q[1] - reference[1]).abs()];
            eprintln!("karnopp_fig4 at T = {step}: q1, q2 off by {:.1e}, {:.1e} m", off[0], off[1]);
            off
        })
        .collect();
    for e in 0..2 {
        let order = (off[0][e] / off[1][e]).log2();
        eprintln!("order of q{}: {order:.2}", e + 1);
        assert!(off[0][e] < 1e-9 && order >= 3.0, "q{}: {off:?}, order {order:.2}", e + 1);
    }
}
