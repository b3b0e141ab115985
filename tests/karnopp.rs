//! Karnopp's stick–slip model (papers/karnopp-stick-slip.md): exact zero velocity inside
//! the momentum band, breakaway at FH, the relative-motion sticking force (11), and the
//! two-friction system of Fig. 4 with its four stick/slip cases.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use stiction::framework::system::System;

/// A mass (1 kg, slip 10 N, FH = 15 N) pushed by a ramp 10·t N: exactly at rest until the
/// push reaches FH at 1.5 s, then it accelerates at (10 t − 10)/m.
#[test]
fn karnopp_mass_breaks_away_at_fh_and_holds_exact_zero_before() {
    for method in ["rk4", "euler"] {
        let rec = run_value(&json!({
            "solver": {"method": method, "step": 1e-4, "stop_time": 2.0},
            "output": {"signals": {"v": "m.v", "f": "m.f", "q": "m.q"}},
            "components": {
                "m": {"type": "karnopp_mass", "mass": 1.0, "F": 10.0, "FH": 15.0, "DV": 1e-3},
                "push": {"type": "force_source", "force": "10*t"}
            },
            "connections": [{"from": "push.body", "to": "m"}]
        }));
        let (v, f) = (col(&rec, "v"), col(&rec, "f"));
        // The sticking force follows the push and saturates at FH when the push reaches 15 N.
        let j = f.iter().position(|&x| x == -15.0).expect("sticking force reaches FH");
        // Then the momentum leaves the band |P| < DP = m·DV when 5 (t − 1.5)² = DP.
        let i = v.iter().position(|&x| x != 0.0).expect("breaks away");
        let (t_fh, t_move) = (rec.time[j], rec.time[i]);
        let t_expect = 1.5 + (1e-3f64 / 5.0).sqrt();
        eprintln!("karnopp_mass ({method}): sticking force = FH at t = {t_fh} s (push = FH at 1.5 s); v exactly 0.0 until t = {t_move} s (band exit predicted {t_expect:.5} s)");
        assert!((t_fh - 1.5).abs() <= 1.5e-4, "FH reached at {t_fh}");
        assert!((t_move - t_expect).abs() <= 2e-4, "moves at {t_move}");
        assert!(col(&rec, "q")[..i].iter().all(|&q| q == 0.0));
        assert!(f[..i].iter().all(|&x| x.abs() <= 15.0));
        // After breakaway the friction drops to the slip level.
        assert_eq!(at(&rec, "f", 1.8), -10.0);
        let v_end = *v.last().unwrap();
        let expect = 1e-3 + 5.0 * (4.0 - t_expect * t_expect) - 10.0 * (2.0 - t_expect);
        eprintln!("karnopp_mass ({method}): v(2 s) = {v_end:.5} m/s (expected {expect:.5})");
        assert!((v_end - expect).abs() < 2e-3);
    }
}

/// A sliding mass (v0 = 1, slip 10 N) stops near 0.1 s with exactly zero velocity and stays.
#[test]
fn karnopp_mass_stops_with_exact_zero_velocity() {
    let rec = run_value(&json!({
        "solver": {"method": "rk4", "step": 1e-4, "stop_time": 0.3},
        "output": {"signals": {"v": "m.v"}},
        "components": {"m": {"type": "karnopp_mass", "mass": 1.0, "F": 10.0, "FH": 15.0, "DV": 1e-3, "init": {"v": 1.0}}}
    }));
    let v = col(&rec, "v");
    let i = v.iter().position(|&x| x == 0.0).expect("stops");
    eprintln!("karnopp_mass sliding from 1 m/s: v exactly 0.0 from t = {} s (1/10 − DV·m/F = 0.0999 s)", rec.time[i]);
    assert!((rec.time[i] - 0.0999).abs() < 2e-4);
    assert!(v[i..].iter().all(|&x| x == 0.0));
}

/// Relative-motion form (11): m1 = 1, m2 = 2, force G1 on m1 only. The sticking force is
/// m2 G1/(m1 + m2); below FH = 5 N both move together with exactly equal velocities
/// (G1 = 6 → 4 N), above it they slip (G1 = 9 → 6 N > 5 N).
#[test]
fn karnopp_pair_sticking_force_11() {
    for (g1, sticks) in [(6.0, true), (9.0, false)] {
        let rec = run_value(&json!({
            "solver": {"method": "rk4", "step": 1e-4, "stop_time": 0.5},
            "output": {"signals": {"v1": "p.v1", "v2": "p.v2", "f": "p.f"}},
            "components": {
                "p": {"type": "karnopp_pair", "m1": 1.0, "m2": 2.0, "F": 4.0, "FH": 5.0, "DV": 1e-3},
                "push": {"type": "force_source", "force": g1}
            },
            "connections": [{"from": "push.body", "to": "p.m1"}]
        }));
        let (v1, v2) = (col(&rec, "v1"), col(&rec, "v2"));
        let (a1, a2) = (v1.last().unwrap() / 0.5, v2.last().unwrap() / 0.5);
        eprintln!(
            "karnopp_pair G1 = {g1}: a1 = {a1:.4}, a2 = {a2:.4} m/s², friction on m1 at the end {:.4} N",
            col(&rec, "f").last().unwrap()
        );
        if sticks {
            assert!(v1.iter().zip(&v2).all(|(a, b)| a == b), "relative velocity not exactly zero");
            assert!((a1 - 2.0).abs() < 1e-9);
            assert!((col(&rec, "f").last().unwrap() + 4.0).abs() < 1e-9, "sticking force (11) = 4 N");
        } else {
            assert!((a1 - 5.0).abs() < 0.01 && (a2 - 2.0).abs() < 0.01, "slip: (9 − 4)/1, 4/2");
        }
    }
}

/// Fig. 4: the example's step input makes the masses slip and stick in all four cases of
/// Fig. 4(c); velocities are exactly zero whenever a contact sticks to the ground, equal
/// whenever m1 sticks to m2; every ground breakaway happens with the sticking force at
/// FH = 30 N; both masses end at rest with exactly zero velocity.
#[test]
fn karnopp_fig4_four_cases_exact_zeros_breakaway_and_rest_state() {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(example("karnopp_fig4.json")).unwrap()).unwrap();
    v["output"]["interval"] = json!(1e-4);
    let rec = run_value(&v);
    let (v1, v2, case, ff, fr) =
        (col(&rec, "v1"), col(&rec, "v2"), col(&rec, "case"), col(&rec, "ff"), col(&rec, "fr"));
    let mut count = [0usize; 4];
    for i in 0..rec.time.len() {
        let c = case[i] as usize;
        count[c] += 1;
        match c {
            0 => assert!(v1[i] == 0.0 && v2[i] == 0.0, "case (a) at {}: {} {}", rec.time[i], v1[i], v2[i]),
            1 => assert!(v2[i] == 0.0 && v1[i] != 0.0),
            2 => assert!(v1[i] == v2[i] && v2[i] != 0.0),
            _ => assert!(v2[i] != 0.0 && v1[i] != v2[i]),
        }
        if c == 0 || c == 1 {
            assert!(ff[i].abs() <= 30.0);
        }
        if c == 0 || c == 2 {
            assert!(fr[i].abs() <= 15.0);
        }
    }
    let ms = |n: usize| n as f64 * 0.1;
    eprintln!(
        "Fig. 4 cases: (a) both stick {:.1} ms, (b) upper slips {:.1} ms, (c) lower slips {:.1} ms, (d) both slip {:.1} ms",
        ms(count[0]), ms(count[1]), ms(count[2]), ms(count[3])
    );
    assert!(count.iter().all(|&n| n > 0), "not all four cases occur: {count:?}");
    // Ground breakaway: the last sample before m2 starts to move has |ff| = FH exactly.
    let mut breakaways = 0;
    for i in 1..rec.time.len() {
        let was_stuck = case[i - 1] == 0.0 || case[i - 1] == 1.0;
        let now_slips = case[i] == 2.0 || case[i] == 3.0;
        if was_stuck && now_slips && rec.time[i] > 1e-3 {
            breakaways += 1;
            eprintln!("Fig. 4: m2 breaks away at t = {:.4} s with ground sticking force {} N", rec.time[i], ff[i - 1]);
            assert_eq!(ff[i - 1].abs(), 30.0);
        }
    }
    assert!(breakaways >= 1);
    // Rest at the end.
    let n = rec.time.len() - 1;
    let (q1, q2) = (col(&rec, "q1")[n], col(&rec, "q2")[n]);
    let (f1, fs) = (col(&rec, "F1")[n], col(&rec, "Fs")[n]);
    println!("Fig. 4 rest state at t = {} s: v1 = {:?}, v2 = {:?}, q1 = {q1:.6} m, q2 = {q2:.6} m, F1 = {f1:.4} N, Fs = {fs:.4} N, fr = {:.4} N, ff = {:.4} N", rec.time[n], v1[n], v2[n], fr[n], ff[n]);
    assert!(v1[n] == 0.0 && v2[n] == 0.0 && case[n] == 0.0);
    let last_motion = (0..=n).rev().find(|&i| v1[i] != 0.0 || v2[i] != 0.0).unwrap();
    eprintln!("Fig. 4: last motion at t = {} s", rec.time[last_motion]);
    // The holding forces balance the springs and are below breakaway.
    assert!(((f1 + fs) + fr[n]).abs() < 1e-9, "m1 balance");
    assert!(fr[n].abs() <= 15.0 && ff[n].abs() <= 30.0);
}

/// Bad Karnopp parameters are rejected with their JSON path.
#[test]
fn karnopp_bad_parameters() {
    let base = |c: Value| json!({"solver": {"step": 1e-3, "stop_time": 1}, "components": {"m": c}});
    for (c, path) in [
        (json!({"type": "karnopp_mass", "mass": 1, "F": 10, "FH": 5, "DV": 1e-3}), "components.m.FH"),
        (json!({"type": "karnopp_mass", "mass": 1, "F": 10, "FH": 15, "DV": 0}), "components.m.DV"),
        (json!({"type": "karnopp_mass", "mass": 1, "F": -1, "FH": 15, "DV": 1e-3}), "components.m.F"),
        (
            json!({"type": "karnopp_stack", "m1": 1, "m2": 1, "upper": {"F": 1, "FH": 2, "DV": 1e-3}}),
            "components.m.lower",
        ),
        (
            json!({"type": "karnopp_stack", "m1": 1, "m2": 1, "upper": {"F": 1, "FH": 2, "DV": 1e-3}, "lower": {"F": 1, "FH": 2, "DV": 1e-3, "X": 1}}),
            "components.m.lower.X",
        ),
        (json!({"type": "karnopp_pair", "m1": 1, "m2": 0, "F": 1, "FH": 2, "DV": 1e-3}), "components.m.m2"),
    ] {
        let text = serde_json::to_string(&base(c.clone())).unwrap();
        let msg = match System::from_str(&text, Path::new("inline.json"), Path::new("."), &stiction::registry()) {
            Ok(_) => panic!("accepted {c}"),
            Err(e) => e.to_string(),
        };
        assert!(msg.contains(path), "{c}: {msg}");
    }
}

/// Energy (kinetic with the modified velocity + spring energy) never increases from one
/// step to the next once the Fig. 4 drive has stopped (t ≥ 0.25 s). For a mass on a spring
/// released from a stretched position, Karnopp's velocity map itself adds energy: when the
/// momentum passes through the band at a reversal, the velocity jumps from exactly 0 to
/// ±DV, i.e. the kinetic energy jumps by up to m·DV²/2 (5e-7 J here) — a known price of
/// the band, unlike Kikuuwe's models, which are dissipative for any step.
#[test]
fn karnopp_energy_never_increases_without_input() {
    let fig4: Value = serde_json::from_str(&std::fs::read_to_string(example("karnopp_fig4.json")).unwrap()).unwrap();
    let spring_mass = json!({
        "solver": {"method": "rk4", "step": 1e-4, "stop_time": 1.0},
        "components": {
            "m": {"type": "karnopp_mass", "mass": 1.0, "F": 2.0, "FH": 3.0, "DV": 1e-3, "init": {"q": 0.1}},
            "s": {"type": "spring_damper", "K": 100.0}
        },
        "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "m"}]
    });
    for (name, v, t_start, allowed) in
        [("Fig. 4 after the drive stops", fig4, 0.25, 0.0), ("mass on a spring", spring_mass, 0.0, 0.5 * 1e-6)]
    {
        let text = serde_json::to_string(&v).unwrap();
        let sys = System::from_str(&text, Path::new("inline.json"), Path::new("."), &stiction::registry()).unwrap();
        let (mut sim, _) = sys.into_simulator(1).unwrap();
        while sim.time() < t_start - 1e-12 {
            sim.step().unwrap();
        }
        sim.probe().unwrap();
        let e0 = sim.energy();
        let (mut prev, mut worst) = (e0, 0.0f64);
        for _ in 0..10_000 {
            sim.step().unwrap();
            sim.probe().unwrap();
            let e = sim.energy();
            worst = worst.max(e - prev);
            prev = e;
        }
        eprintln!("karnopp dissipation, {name}: E {e0:.5} J → {prev:.5} J, largest one-step rise {worst:.3e} J (allowed {allowed:.1e} J)");
        assert!(worst <= allowed + 1e-12 * e0, "{name}: energy rises by {worst:e} J");
    }
}
