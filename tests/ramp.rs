//! The guide's tutorial systems (docs/tutorials/first-system.md, friction-models.md): a block
//! on a ramp held exactly by model A (26) until the load exceeds the friction level, then
//! sliding at the analytic acceleration g (sin θ − μ cos θ); and three friction models side
//! by side under an oscillating load, where only the regularised one (LuGre) creeps.

mod common;

use common::{col, run_value};
use serde_json::Value;

const G: f64 = 9.81;
const MU: f64 = 0.5;
const MASS: f64 = 2.0;

fn example(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(common::example(name)).unwrap()).unwrap()
}

/// The ramp example at `deg` degrees: the file's weight along the slope and friction level
/// computed from the angle (the file states them for 35° to four decimals).
fn ramp_at(deg: f64, method: &str) -> Value {
    let mut v = example("ramp_block.json");
    let th = deg.to_radians();
    v["components"]["block"]["force"] = (MASS * G * th.sin()).into();
    v["components"]["block"]["F"] = (MU * MASS * G * th.cos()).into();
    v["solver"]["method"] = method.into();
    v
}

#[test]
fn the_file_states_the_35_degree_ramp() {
    let v = example("ramp_block.json");
    let th = 35f64.to_radians();
    let b = &v["components"]["block"];
    assert!((b["force"].as_f64().unwrap() - MASS * G * th.sin()).abs() < 1e-4);
    assert!((b["F"].as_f64().unwrap() - MU * MASS * G * th.cos()).abs() < 1e-4);
}

#[test]
fn the_block_holds_exactly_then_slides_at_the_analytic_acceleration() {
    for method in ["rk4", "euler"] {
        let rec = run_value(&ramp_at(35.0, method));
        let (q, v, stuck) = (col(&rec, "q"), col(&rec, "v"), col(&rec, "stuck"));
        // Breakaway when m g sin θ − 6 (2 − t) = μ m g cos θ.
        let th = 35f64.to_radians();
        let t_break = 2.0 - (MASS * G * th.sin() - MU * MASS * G * th.cos()) / 6.0;
        assert!((t_break - 1.4636).abs() < 1e-3, "{t_break}");
        let step = 1e-3;
        for (i, &t) in rec.time.iter().enumerate() {
            if t < t_break - step {
                assert_eq!((q[i], v[i], stuck[i]), (0.0, 0.0, 1.0), "{method}: moved at t = {t}");
            }
            if t > t_break + step {
                assert!(v[i] > 0.0 && stuck[i] == 0.0, "{method}: not sliding at t = {t}");
            }
        }
        // Hand gone from 2 s: a = g (sin θ − μ cos θ) = 1.6088 m/s².
        let a_exact = G * (th.sin() - MU * th.cos());
        let at = |t: f64| rec.time.iter().position(|&x| (x - t).abs() < 1e-9).unwrap();
        let a = (v[at(3.0)] - v[at(2.1)]) / 0.9;
        assert!((a / a_exact - 1.0).abs() < 0.01, "{method}: a = {a}, analytic {a_exact}");
        // Position consistent with the velocity under constant acceleration.
        let dq = q[at(3.0)] - q[at(2.1)];
        let dq_exact = v[at(2.1)] * 0.9 + 0.5 * a_exact * 0.81;
        assert!((dq / dq_exact - 1.0).abs() < 0.01, "{method}: Δq = {dq}, expected {dq_exact}");
    }
}

#[test]
fn below_the_friction_angle_the_block_never_moves() {
    // 20° and 26.5° (friction angle atan 0.5 = 26.57°): q and v exactly 0.0 in every row,
    // under the hand's changing load too; at 26.7° the block slides once the hand is gone.
    for deg in [20.0, 26.5] {
        let rec = run_value(&ramp_at(deg, "rk4"));
        assert!(col(&rec, "q").iter().chain(&col(&rec, "v")).all(|&x| x == 0.0), "moved at {deg}°");
    }
    let rec = run_value(&ramp_at(26.7, "rk4"));
    let v = col(&rec, "v");
    let th = 26.7f64.to_radians();
    let a_exact = G * (th.sin() - MU * th.cos());
    let a = (v[v.len() - 1] - v[v.len() - 51]) / 0.5;
    assert!(a_exact > 0.0 && (a / a_exact - 1.0).abs() < 0.01, "26.7°: a = {a}, analytic {a_exact}");
}

#[test]
fn under_an_oscillating_load_only_lugre_creeps() {
    let rec = common::run_example("ramp_models.json", 1);
    let at = |t: f64| rec.time.iter().position(|&x| (x - t).abs() < 1e-9).unwrap();
    let (qa, qk, ql) = (col(&rec, "q_a"), col(&rec, "q_k"), col(&rec, "q_l"));
    assert!(qa.iter().all(|&x| x == 0.0), "model A moved");
    // I_fricK: the same position at the same phase of the load (period 0.2 s), from 1 s on:
    // only the presliding element deflects (about m g sin θ / K = 0.67 mm), no creep.
    let ref_k = qk[at(1.0)];
    assert!(ref_k > 0.0 && ref_k < 1e-3);
    for s in 2..=10 {
        assert!((qk[at(s as f64)] - ref_k).abs() < 1e-12, "I_fricK drifted by t = {s} s");
    }
    // LuGre creeps down the slope by the same amount every second.
    let per_s: Vec<f64> = (1..10).map(|s| ql[at(s as f64 + 1.0)] - ql[at(s as f64)]).collect();
    assert!(per_s.iter().all(|&d| d > 5e-3), "LuGre creep per second: {per_s:?}");
}
