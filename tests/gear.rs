//! The 1-DOF gear transmission (papers/gear-transmission-asymmetric-friction.txt, sections
//! 3–4 and 6.1; shared/MODELS.md §4–5): statics (23), efficiencies (26)/(27), Fig. 9,
//! leadscrew self-locking and Dupont's screw condition, `stiction check`, bad input.

mod common;
use common::*;
use serde_json::{json, Value};
use stiction::components::gear::efficiency::{asymmetry_from_efficiencies, efficiencies, holds_statically, rho_hat};
use stiction::components::gear::transmission::{GearModel, ScrewCheck};
use stiction::framework::Recorder;

/// A gear with constant torques: fu on the input (ratio 1), the load torque fv taken by the
/// output (the torque on the output port is −fv).
fn constant_torques(gear: Value, fu: f64, fv: f64, stop: f64) -> Value {
    json!({
        "solver": {"method": "euler", "step": 1e-3, "stop_time": stop},
        "output": {"signals": {"v": "g.v", "q": "g.q", "mode": "g.mode", "fu": "g.fu", "fv": "g.fv", "lambda": "g.lambda"}},
        "components": {
            "g": gear,
            "motor": {"type": "force_source", "force": fu},
            "load": {"type": "force_source", "force": -fv}
        },
        "connections": [{"from": "motor.body", "to": "g.input"}, {"from": "load.body", "to": "g.output"}]
    })
}

/// Statics: a gear at rest under constant (fu, fv) stays exactly at rest iff (23) holds.
/// Random coefficients include non-backdrivable, non-forward-drivable and ill-posed ones.
#[test]
fn statics_rest_exactly_when_23_holds() {
    let mut rng = Lcg(2024);
    let (mut held, mut moved, mut ill) = (0, 0, 0);
    while held + moved < 300 {
        let (gu, gv) = (rng.next(-0.3, 1.6), rng.next(-0.3, 1.6));
        let (m, big_m) = (rng.next(0.2, 3.0), rng.next(0.2, 3.0));
        let (fu, fv) = (rng.next(-50.0, 50.0), rng.next(-50.0, 50.0));
        let margin = ((fu - fv).abs() - (gu * fu + gv * fv).abs()).abs();
        if margin < 1e-6 * (fu.abs() + fv.abs()) {
            continue;
        }
        let gear = json!({"type": "gear", "gamma_u": gu, "gamma_v": gv, "m": m, "M": big_m});
        let rec = run_value(&constant_torques(gear, fu, fv, 0.05));
        let v = col(&rec, "v");
        let at_rest = v.iter().all(|x| *x == 0.0);
        let expected = holds_statically(gu, gv, fu, fv);
        assert_eq!(at_rest, expected, "γu {gu} γv {gv} m {m} M {big_m} fu {fu} fv {fv}: v = {:?}", &v[..3]);
        if !at_rest {
            assert!(v[1] != 0.0, "moves from the first step");
        }
        if rho_hat(gu, gv, m, big_m).abs() >= 1.0 {
            ill += 1;
        }
        if expected {
            held += 1
        } else {
            moved += 1
        }
    }
    eprintln!("statics: {held} held, {moved} moved, {ill} of them ill-posed (|ρ̂| ≥ 1)");
    assert!(held > 50 && moved > 50);
}

/// (27) inverts (26) to 1e-12, and a steady drive at the efficiency ratio keeps a constant
/// speed: forward fv = ηf fu, backward fu = ηb fv; a 1 % larger resisting torque decelerates.
#[test]
fn efficiencies_invert_and_set_the_steady_drive_ratio() {
    let mut worst: f64 = 0.0;
    for i in 1..50 {
        for j in 1..50 {
            let (ef, eb) = (i as f64 / 50.0, j as f64 / 50.0);
            let (gu, gv) = asymmetry_from_efficiencies(ef, eb).unwrap();
            let (f, b) = efficiencies(gu, gv);
            worst = worst.max((f - ef).abs()).max((b - eb).abs());
        }
    }
    eprintln!("efficiencies: worst round trip (26)∘(27) error {worst:e}");
    assert!(worst < 1e-12);

    let (ef, eb) = (0.8, 0.6);
    let gear = |v0: f64| json!({"type": "gear", "efficiency": {"forward": ef, "backward": eb}, "m": 0.5, "M": 2.0, "init": {"v": v0}});
    // Forward: input drives at +1 rad/s against fv = ηf fu.
    let rec = run_value(&constant_torques(gear(1.0), 10.0, ef * 10.0, 0.5));
    let v = col(&rec, "v");
    let drift = v.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
    eprintln!("forward drive at fv = ηf fu: speed drift {drift:e}, mode {}", at(&rec, "mode", 0.2));
    assert!(drift < 1e-12 && at(&rec, "mode", 0.2) == 1.0);
    let rec = run_value(&constant_torques(gear(1.0), 10.0, ef * 10.0 * 1.01, 0.5));
    assert!(at(&rec, "v", 0.1) < 1.0 - 1e-3, "a 1 % larger load slows the forward drive");
    // Backward: the load drives at −1 rad/s with fv = 10 against fu = ηb fv.
    let rec = run_value(&constant_torques(gear(-1.0), eb * 10.0, 10.0, 0.5));
    let v = col(&rec, "v");
    let drift = v.iter().map(|x| (x + 1.0).abs()).fold(0.0, f64::max);
    eprintln!("back drive at fu = ηb fv: speed drift {drift:e}, mode {}", at(&rec, "mode", 0.2));
    assert!(drift < 1e-12 && at(&rec, "mode", 0.2) == -1.0);
    let rec = run_value(&constant_torques(gear(-1.0), eb * 10.0 * 1.01, 10.0, 0.5));
    assert!(at(&rec, "v", 0.1) > -1.0 + 1e-3, "a 1 % larger input torque slows the back drive");
    // At the stick boundary from rest: 1 % inside holds, 1 % outside moves.
    for (fu, fv, holds) in [
        (10.0, ef * 10.0 * 1.01, true),
        (10.0, ef * 10.0 * 0.99, false),
        (eb * 10.0 * 1.01, 10.0, true),
        (eb * 10.0 * 0.99, 10.0, false),
    ] {
        let rec = run_value(&constant_torques(gear(0.0), fu, fv, 0.05));
        assert_eq!(col(&rec, "v").iter().all(|x| *x == 0.0), holds, "fu {fu} fv {fv}");
    }
}

fn first_index(rec: &Recorder, t: f64) -> usize {
    rec.time.iter().position(|x| *x >= t - 1e-9).unwrap()
}

/// Fig. 9 (section 6.1).
#[test]
fn fig9_asymmetric_friction_holds_the_contact_force() {
    let cases = [("020", 0.2), ("050", 0.5), ("095", 0.95), ("105", 1.05)];
    // The paper's algorithm (44) (the examples' Euler) and the same systems under RK4.
    for method in ["euler", "rk4"] {
        let mut fv09 = Vec::new();
        for (tag, gv) in cases {
            let file = example(&format!("gear_1dof_fig9_gv{tag}.json"));
            let mut system: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
            system["solver"]["method"] = json!(method);
            let rec = run_value(&system);
            let (t, p, v, fv) = (&rec.time, col(&rec, "p"), col(&rec, "v"), col(&rec, "fv"));
            assert_eq!(p[0], 0.3);
            let first_contact = p.iter().position(|x| *x < 0.0).expect("reaches the wall");
            let i09 = first_index(&rec, 0.9);
            let bounced = (first_contact..i09).any(|i| p[i] > 0.0);
            let f = fv[i09].abs();
            fv09.push((gv, f));
            eprintln!(
            "Fig. 9 ({method}) γv = {gv}: first contact at {:.3} s, bounces before 0.9 s: {bounced}, |fv(0.9 s)| = {f:.2} N·m, \
             p(0.9) = {:.5}, p(1.4) = {:.5}, p(2.0) = {:.4}",
            t[first_contact],
            p[i09],
            p[first_index(&rec, 1.4)],
            p[p.len() - 1]
        );
            if gv < 0.5 {
                assert!(bounced, "γv = {gv} bounces off the wall");
            }
            if gv >= 0.95 {
                assert!(!bounced, "γv = {gv} never separates while pushing");
            }
            // Pushed back over [0.9, 1.4] s when backdrivable, stuck when not.
            let (i095, i14) = (first_index(&rec, 0.95), first_index(&rec, 1.4));
            if gv < 1.0 {
                assert!(p[i14 - 1] > p[i09] + 0.01, "γv = {gv}: pushed back");
            } else {
                assert!(v[i095..i14].iter().all(|x| *x == 0.0), "γv = {gv}: velocity exactly 0 on [0.95, 1.4] s");
                assert!(fv[i095] != 0.0 && fv[i095..i14].iter().all(|x| *x == fv[i095]), "contact force held");
                eprintln!("Fig. 9 ({method}) γv = {gv}: stuck with |fv| = {:.2} N·m while fu = 0", fv[i095].abs());
            }
            if gv == 0.2 {
                assert!((i09..i14).all(|i| p[i + 1] >= p[i]), "γv = 0.2: p rises over [0.9, 1.4] s");
            }
            // Detached after 1.4 s in every case.
            let i15 = first_index(&rec, 1.5);
            assert!(p[i15..].iter().all(|x| *x > 0.0), "γv = {gv} detaches");
        }
        let small = fv09[0].1;
        for (gv, f) in &fv09[2..] {
            assert!(*f >= 2.0 * small, "|fv(0.9)| = {f} for γv = {gv} vs {small} for 0.2");
        }
    }
}

fn leadscrew(lead_angle: f64, mu: f64, screw_inertia: f64, load: f64) -> Value {
    json!({"type": "gear", "leadscrew": {"lead_angle": lead_angle, "mu": mu, "radius": 0.01},
           "input_inertia": screw_inertia, "M": load})
}

/// A load hanging on the nut (weight on the output, input free) is held iff tan θ ≤ μ,
/// for well-posed and ill-posed inertia ratios; the gear's verdict |ρ̂| < 1 agrees with
/// Dupont's I + m l²/ηi > 0 wherever Dupont's screw formulas apply (α + ρ < 90°).
#[test]
fn leadscrew_self_locking_and_dupont_agree() {
    let mu: f64 = 0.15;
    let g = 9.81;
    for screw_inertia in [5e-4, 1e-7] {
        for factor in [0.5, 0.9, 0.98, 1.02, 1.1, 2.0] {
            let theta = (mu * factor).atan();
            let load = 5.0;
            let rec = run_value(&constant_torques(leadscrew(theta, mu, screw_inertia, load), 0.0, load * g, 0.2));
            let v = col(&rec, "v");
            let held = v.iter().all(|x| *x == 0.0);
            let gm = GearModel::leadscrew(theta, mu, 0.01, 0.0);
            let m = gm.ratio * gm.ratio * screw_inertia;
            eprintln!(
                "leadscrew tan θ/μ = {factor}, I = {screw_inertia}: held {held}, γv = {:.3}, ρ̂ = {:.3}, v(0.2 s) = {:.4}",
                gm.gamma_v,
                rho_hat(gm.gamma_u, gm.gamma_v, m, load),
                v[v.len() - 1]
            );
            assert_eq!(held, theta.tan() <= mu, "tan θ = {} μ = {mu}", theta.tan());
            if !held {
                assert!(v[v.len() - 1] < 0.0, "the load descends");
            }
        }
    }
    // Dupont vs ρ̂ over a sweep of helix angles, friction and inertia ratios.
    let mut compared = 0;
    let mut rng = Lcg(5);
    for _ in 0..20000 {
        let alpha = rng.next(0.01, 1.5);
        let mu = rng.next(0.0, 1.0);
        let (screw_i, load_i) = (rng.next(0.01, 5.0), rng.next(0.01, 5.0));
        let s = ScrewCheck::new(alpha, mu, 0.0, screw_i, load_i);
        let Some((a1, a2)) = s.dupont() else { continue };
        let gm = GearModel::leadscrew(alpha, mu, 1.0 / alpha.tan(), 0.0); // radius making κ = 1
        let rho = rho_hat(gm.gamma_u, gm.gamma_v, screw_i, load_i);
        let (dupont_ok, gear_ok) = (a1 > 0.0 && a2 > 0.0, rho.abs() < 1.0);
        if (rho.abs() - 1.0).abs() < 1e-9 {
            continue;
        }
        assert_eq!(dupont_ok, gear_ok, "α {alpha} μ {mu} I {screw_i} ml² {load_i}: Dupont {a1} {a2}, ρ̂ {rho}");
        assert_eq!(s.overhauling(), gm.gamma_v < 1.0);
        compared += 1;
    }
    eprintln!("Dupont vs ρ̂: {compared} screws compared, all agree");
    assert!(compared > 10000);
}

/// `stiction check` reports ηf, ηb, the classification, ρ̂, and for screws Dupont's condition
/// and overhauling; ill-posed parameters are a warning (and still simulate: λs of (35)).
#[test]
fn check_reports_gear_facts_and_ill_posedness() {
    let out = cli(&["check", example("leadscrew_hold.json").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success());
    for needle in [
        "ηf = ",
        "ηb = ",
        "non-backdrivable (self-locking)",
        "ρ̂ = ",
        "well-posed",
        "Dupont (14)",
        "not overhauling",
        "agrees with ρ̂",
        "no warnings",
    ] {
        assert!(text.contains(needle), "missing '{needle}'");
    }
    let out = cli(&["check", example("leadscrew_jam.json").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success());
    assert!(text.contains("warning: screw: ρ̂ = ") && text.contains("ill-posed"), "ρ̂ warning");
    assert!(text.contains("warning: screw: Dupont (14)") && text.contains("agrees with ρ̂"));
    // The ill-posed screw still runs, and the lowering motion stops as soon as the motor
    // torque is released (λs = ±1e100 makes the step static).
    let rec = run_example("leadscrew_jam.json", 1);
    let v = col(&rec, "v");
    assert!(v.iter().all(|x| x.is_finite()));
    let i = first_index(&rec, 0.51);
    assert!(v[..first_index(&rec, 0.5)].iter().any(|x| *x < 0.0), "lowered while driven");
    assert!(v[i..].iter().all(|x| *x == 0.0), "stuck once the motor stops");
}

#[test]
fn bad_gear_input_exits_2_with_the_json_path() {
    let base = |gear: Value| constant_torques(gear, 1.0, 0.0, 0.01);
    let cases: Vec<(Value, &str)> = vec![
        (json!({"type": "gear", "gamma_u": 0.2, "gamma_v": 0.5, "m": 0.0, "M": 1}), "components.g.m: must be > 0"),
        (json!({"type": "gear", "gamma_u": 0.2, "gamma_v": 0.5, "m": 1, "M": -1}), "components.g.M: must be > 0"),
        (
            json!({"type": "gear", "efficiency": {"forward": 1.2, "backward": 0.5}, "m": 1, "M": 1}),
            "components.g.efficiency.forward",
        ),
        (
            json!({"type": "gear", "efficiency": {"forward": 0.8, "backward": 0.0}, "m": 1, "M": 1}),
            "components.g.efficiency.backward",
        ),
        (
            json!({"type": "gear", "efficiency": {"forward": 1.0, "backward": 0.5}, "m": 1, "M": 1}),
            "components.g.efficiency",
        ),
        (
            json!({"type": "gear", "leadscrew": {"lead_angle": 0.1, "mu": 0.1, "radius": 0.01}, "ratio": 50, "m": 1, "M": 1}),
            "components.g.ratio: inconsistent geometry",
        ),
        (
            json!({"type": "gear", "leadscrew": {"lead_angle": 1.7, "mu": 0.1, "radius": 0.01}, "m": 1, "M": 1}),
            "components.g.leadscrew.lead_angle",
        ),
        (
            json!({"type": "gear", "worm": {"lead_angle": 0.9, "pressure_angle": 0.35, "mu": 0.1, "worm_radius": 0.01, "gear_radius": 0.05}, "m": 1, "M": 1}),
            "components.g.worm.lead_angle",
        ),
        (
            json!({"type": "gear", "spur": {"pressure_angle": 0.35, "mu": 0.1, "input_radius": 0.02, "output_radius": 0.05, "contact": 0.03}, "m": 1, "M": 1}),
            "components.g.spur.contact",
        ),
        (
            json!({"type": "gear", "gamma_u": 0.2, "gamma_v": 0.5, "efficiency": {"forward": 0.8, "backward": 0.5}, "m": 1, "M": 1}),
            "give exactly one of",
        ),
        (json!({"type": "gear", "gamma_u": 0.2, "m": 1, "M": 1}), "components.g.gamma_v: missing"),
        (
            json!({"type": "gear", "gamma_u": 0.2, "gamma_v": 0.3, "m": 1, "input_inertia": 1, "M": 1}),
            "components.g.input_inertia",
        ),
        (
            json!({"type": "gear", "gamma_u": 0.2, "gamma_v": 0.3, "m": 1, "M": 1, "eta": 1}),
            "components.g.eta: unknown parameter",
        ),
    ];
    for (gear, needle) in cases {
        for cmd in ["check", "run"] {
            let (code, err) = run_json(cmd, &base(gear.clone()));
            assert_eq!(code, 2, "{needle} ({cmd}): exit {code}: {err}");
            assert!(err.contains(needle), "{cmd}: expected '{needle}' in: {err}");
        }
    }
}
