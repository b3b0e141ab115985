//! The geared robot (48)/(69) (papers/gear-transmission-asymmetric-friction.txt, sections 5
//! and 6.2): Figs. 11–12, agreement with the 1-DOF gear for n = 1, `stiction check`.

mod common;
use common::*;
use serde_json::{json, Value};
use stiction::framework::Recorder;

fn idx(rec: &Recorder, t: f64) -> usize {
    rec.time.iter().position(|x| *x >= t - 1e-9).unwrap()
}

fn span(c: &[f64], a: usize, b: usize) -> f64 {
    let w = &c[a..=b];
    w.iter().cloned().fold(f64::NEG_INFINITY, f64::max) - w.iter().cloned().fold(f64::INFINITY, f64::min)
}

/// Fig. 11: γv = [1.1, 1.1] holds px while the wall advances (fx rises) and keeps the force
/// after the robot stops pushing; [0.1, 0.1] and [0.6, 0.6] are pushed back, the larger γv
/// with the larger contact force. Fig. 12: only the joint with γv < 1 yields.
#[test]
fn fig11_fig12_wall_scenario() {
    // The paper's step (69) (the examples' Euler) and the same systems under RK4.
    for method in ["euler", "rk4"] {
        let mut fx_push = Vec::new();
        for (file, gv) in [
            ("fig11_a", [0.1, 0.1]),
            ("fig11_b", [0.6, 0.6]),
            ("fig11_c", [1.1, 1.1]),
            ("fig12_a", [0.1, 1.1]),
            ("fig12_b", [1.1, 0.1]),
        ] {
            let path = example(&format!("geared_robot_{file}.json"));
            let mut system: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            system["solver"]["method"] = json!(method);
            let rec = run_value(&system);
            let (px, fx, q0, q1) = (col(&rec, "px"), col(&rec, "fx"), col(&rec, "q0"), col(&rec, "q1"));
            let (i10, i15, i20, i25) = (idx(&rec, 1.0), idx(&rec, 1.5), idx(&rec, 2.0), idx(&rec, 2.5));
            let mean_fx = fx[i10..i20].iter().sum::<f64>() / (i20 - i10) as f64;
            eprintln!(
            "{file} ({method}) γv = {gv:?}: px(1.0) = {:.4}, px(1.5) = {:.4}, fx(1.0) = {:.0} N, fx(1.5) = {:.0} N, mean fx on [1, 2) s = {mean_fx:.0} N, \
             fx(2.4) = {:.0} N, Δq0 on [1, 1.5] = {:.2e}, Δq1 = {:.2e}, px(3.0) = {:.3}",
            px[i10], px[i15], fx[i10], fx[i15], fx[idx(&rec, 2.4)], span(&q0, i10, i15), span(&q1, i10, i15), px[px.len() - 1]
        );
            // Phase 2 pushes the wall in every case (the gears are forward-drivable).
            assert!(px[i10] > 1.38 && fx[i10] > 100.0, "{file}: pushes the wall");
            match file {
                "fig11_c" => {
                    assert_eq!(span(&px, i10, i15), 0.0, "{file}: px constant while the wall advances");
                    assert!(fx[i15] > fx[i10] + 4000.0, "{file}: fx rises");
                    assert!(fx[i20..i25].iter().all(|f| *f > 0.9 * fx[i15]), "{file}: force held after the push ends");
                }
                "fig12_a" => {
                    assert_eq!(span(&q1, i10, i15), 0.0, "{file}: joint 1 (γv = 1.1) fixed");
                    assert!(span(&q0, i10, i15) > 0.1, "{file}: joint 0 (γv = 0.1) yields");
                }
                "fig12_b" => {
                    assert_eq!(span(&q0, i10, i15), 0.0, "{file}: joint 0 (γv = 1.1) fixed");
                    assert!(span(&q1, i10, i15) > 0.1, "{file}: joint 1 (γv = 0.1) yields");
                }
                _ => {
                    assert!(px[i15] < px[i10] - 0.2, "{file}: the wall pushes the robot back");
                    assert!(span(&q0, i10, i15) > 0.01 && span(&q1, i10, i15) > 0.01);
                    fx_push.push(mean_fx);
                }
            }
            // Pulled apart at the end.
            assert!(fx[fx.len() - 1] == 0.0 && px[px.len() - 1] < 1.12, "{file}: detached");
        }
        assert!(fx_push[1] > 1.5 * fx_push[0], "larger γv, larger contact force: {fx_push:?}");
    }
}

/// n = 1: a one-link geared robot (1 kg at 1 m: M = 1 kg·m², rotor m = 1, joint viscosity
/// 10) under the Fig. 9 actuator torque and wall reproduces the 1-DOF gear example.
#[test]
fn one_joint_robot_reproduces_the_gear() {
    for tag in ["020", "095", "105"] {
        let gear = run_example(&format!("gear_1dof_fig9_gv{tag}.json"), 1);
        let spec: Value =
            serde_json::from_str(&std::fs::read_to_string(example(&format!("gear_1dof_fig9_gv{tag}.json"))).unwrap())
                .unwrap();
        let g = &spec["components"]["gear"];
        let robot = json!({
            "solver": {"method": "euler", "step": 0.001, "stop_time": 2.0},
            "output": {"interval": 0.001, "signals": {"p": "robot.q[0]", "v": "robot.v[0]"}},
            "components": {
                "robot": {"type": "geared_robot",
                          "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [1, 0, 0], "inertia": [0, 0, 0], "damping": 10.0}],
                          "gears": [{"m": 1.0, "gamma_u": g["gamma_u"], "gamma_v": g["gamma_v"]}],
                          "init": {"q": [0.3]}},
                "actuator": spec["components"]["actuator"].clone(),
                "wall": spec["components"]["wall"].clone()
            },
            "connections": [{"from": "actuator.body", "to": "robot.motor0"}, {"from": "wall.body", "to": "robot.joint0"}]
        });
        let rec = run_value(&robot);
        let mut worst: f64 = 0.0;
        for c in ["p", "v"] {
            let (a, b) = (col(&gear, c), col(&rec, c));
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                worst = worst.max((x - y).abs());
                assert_eq!(*x == 0.0, *y == 0.0, "{c}: stuck in one and not the other ({x} vs {y})");
            }
        }
        eprintln!("n = 1 vs gear (γv from gv{tag}): max |Δp|, |Δv| = {worst:e}");
        assert!(worst < 1e-12, "{worst}");
    }
}

/// `stiction check` reports σmax(P) and per-joint gear facts; σmax(P) ≥ 1 is a warning.
#[test]
fn check_reports_sigma_max() {
    let out = cli(&["check", example("geared_robot_fig11_c.json").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("σmax(P) = ")
            && text.contains("joint 1: gear γu = 0.100000, γv = 1.100000")
            && text.contains("no warnings"),
        "{text}"
    );
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(example("geared_robot_fig11_c.json")).unwrap()).unwrap();
    v["components"]["robot"]["gears"][0]["gamma_v"] = json!(3.0);
    v["components"]["robot"]["gears"][1]["gamma_v"] = json!(3.0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.json");
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    let out = cli(&["check", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(text.contains("warning: robot: σmax(P) = ") && text.contains("≥ 1"), "{text}");
}

#[test]
fn bad_robot_input_exits_2_with_the_json_path() {
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(example("geared_robot_fig11_a.json")).unwrap()).unwrap();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "gears",
            json!([{"m": 1.0, "gamma_u": 0.1, "gamma_v": 0.1}]),
            "components.robot.gears: expected one gear per link",
        ),
        (
            "gears",
            json!([{"m": 0.0, "gamma_u": 0.1, "gamma_v": 0.1}, {"m": 1.0, "gamma_u": 0.1, "gamma_v": 0.1}]),
            "components.robot.gears[0].m: must be > 0",
        ),
        (
            "gears",
            json!([{"m": 1.0, "efficiency": {"forward": 0.9, "backward": 1.5}}, {"m": 1.0, "gamma_u": 0.1, "gamma_v": 0.1}]),
            "components.robot.gears[0].efficiency.backward",
        ),
    ];
    for (key, val, needle) in cases {
        let mut v = base.clone();
        v["components"]["robot"][key] = val;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("system.json");
        std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
        let out = cli(&["check", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "expected '{needle}' in {err}");
    }
}

/// A located switch's last sub-step may be shorter than an ulp of t (here 5.3e-17 s at
/// t = 1.0186 s): the span split at input breaks (the wall's and actuator's piecewise
/// functions) took its length as (t0 + h) − t0 = 0 and ran stages of τ = 0, where the
/// geared robot's rates (69) divide by τ: the run failed with "non-finite torques" at
/// 2.076 s (T = 1e-5; at 1.0186 s with T = 2e-6). Fig. 11(a)'s robot under RK4 with a
/// `fric_k` holding joint 0 (F = 50 N·m) now runs to its end, every output finite.
#[test]
fn a_located_sub_step_below_an_ulp_of_t_is_taken_whole() {
    let text = std::fs::read_to_string(example("geared_robot_fig11_a.json")).expect("example");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    v["solver"] = json!({"method": "rk4", "step": 1e-5, "stop_time": 2.2, "hold": "explicit"});
    v["components"]["jf"] = json!({"type": "fric_k", "K": 1e7, "B": 1.0, "F": 50.0});
    let connections = v["connections"].as_array_mut().expect("connections");
    connections.push(json!({"from": "jf.a", "to": "ground"}));
    connections.push(json!({"from": "jf.b", "to": "robot.joint0"}));
    v["output"] = json!({"interval": 1e-2, "signals": {"q0": "robot.q[0]", "q1": "robot.q[1]"}});
    let rec = run_value(&v);
    assert!(*rec.time.last().expect("rows") >= 2.2 - 1e-9, "ended at {:?}", rec.time.last());
    assert!(col(&rec, "q0").iter().chain(&col(&rec, "q1")).all(|x| x.is_finite()));
}
