//! Simulations I–III of Kikuuwe & Yamamoto (papers/modular-rk4-architecture.md, section IV)
//! through the JSON examples, asserting the paper's quantitative claims.

mod common;
use common::*;

/// Sim I (27): the sphere's contact point stops slipping at 2 v0/(7 μ g) = 0.5825 s and the
/// centre then rolls at 5/7 v0.
///
/// With the paper's contact (K = 1e7, B = 10: damping ratio 0.003) the sphere, released
/// 2 mm above the floor, keeps bouncing (restitution ≈ 0.99): friction acts only during
/// impacts of ~0.5 ms every ~35 ms, and the tangential element (ω ≈ 1e4 rad/s) leaves a
/// small residual slip after the impact in which sliding ends. So the claim is checked as:
/// the slip velocity first reaches zero (changes sign) at t ∈ [0.56, 0.60] s, stays within
/// 1e-2 m/s of zero after that, within 1e-3 m/s from 0.65 s on, and the centre moves at
/// 1.4286 ± 0.005 m/s at 1.0 s.
#[test]
fn sim1_rolling_sphere_reaches_pure_rolling_at_0_58_s() {
    let rec = run_example("rolling_sphere.json", 1);
    let t = &rec.time;
    let slip = col(&rec, "contact_vx");
    let first_zero = (1..slip.len()).find(|&i| slip[i] <= 0.0 && slip[i - 1] > 0.0).expect("slip reaches zero");
    let t_stop = t[first_zero];
    eprintln!("sim I: slip first reaches zero at t = {t_stop} s (analytic 0.5825 s)");
    assert!((0.56..=0.60).contains(&t_stop), "slip stops at {t_stop} s");
    let first_below_1e3 = slip.iter().position(|v| v.abs() < 1e-3).map(|i| t[i]);
    eprintln!("sim I: |contact_vx| first below 1e-3 m/s at {first_below_1e3:?} s");
    for (ti, v) in t.iter().zip(&slip).skip(first_zero) {
        assert!(v.abs() < 1e-2, "slip {v} at t = {ti} after rolling began");
        if *ti >= 0.65 {
            assert!(v.abs() < 1e-3, "slip {v} at t = {ti}");
        }
    }
    let vx = at(&rec, "center_vx", 1.0);
    eprintln!("sim I: center_vx(1.0 s) = {vx} (5/7 v0 = {})", 5.0 / 7.0 * 2.0);
    assert!((vx - 2.0 * 5.0 / 7.0).abs() < 0.005, "center_vx = {vx}");
    // The sphere never sinks into the floor by more than a few static deflections.
    let h = col(&rec, "height");
    assert!(h.iter().all(|&z| z > 0.2 - 1e-4), "height dips to {}", h.iter().cloned().fold(f64::INFINITY, f64::min));
}

/// Sim II (28): the arm moves, is stuck by 5 s, and then its angles only vibrate
/// elastically with the oscillating torque: the mean over 10 torque periods at the end
/// equals the mean from 6 s to within 1e-6 rad. LuGre under the same torque drifts.
#[test]
fn sim2_two_link_arm_sticks_without_drift_and_lugre_drifts() {
    let period10 = 10.0 * 2.0 * std::f64::consts::PI / 100.0;
    let rec = run_example("two_link_fricK.json", 1);
    let end = *rec.time.last().unwrap();
    for (theta, omega) in [("theta0", "omega0"), ("theta1", "omega1")] {
        let moved = at(&rec, theta, 3.9).abs();
        assert!(moved > 0.1, "{theta} moved only {moved} rad before 4 s");
        let w = col(&rec, omega);
        let late_max = rec.time.iter().zip(&w).filter(|(t, _)| **t >= 5.0).map(|(_, w)| w.abs()).fold(0.0, f64::max);
        // Stuck: only the elastic vibration of the friction element (|ω| ≲ 0.144·100/K·…).
        assert!(late_max < 0.01, "{omega} still {late_max} rad/s after 5 s");
        let a = window_mean(&rec, theta, 6.0, period10);
        let b = window_mean(&rec, theta, end - period10, period10);
        eprintln!("sim II I_fricK: {theta} mean at 6 s {a}, at end {b}, drift {:e} rad", b - a);
        assert!((b - a).abs() < 1e-6, "{theta} drifts by {} rad", b - a);
    }
    let lug = run_example("two_link_lugre.json", 1);
    for theta in ["theta0", "theta1"] {
        let a = window_mean(&lug, theta, 6.0, period10);
        let b = window_mean(&lug, theta, end - period10, period10);
        eprintln!("sim II LuGre: {theta} drifts by {:e} rad from 6 s to the end", b - a);
        assert!((b - a).abs() > 1e-3, "LuGre {theta} drift {} rad is smaller than expected", b - a);
    }
}

/// Sim III (29): the penalty-based arm agrees with the constraint-based one. The joints'
/// compliance (K = 1e6 N/m, K_rot = 1e3 N·m/rad) lets the articulation points separate by
/// ~1e-7 m under the link loads, which shifts the angles by ~1e-5 rad over the run.
#[test]
fn sim3_penalty_arm_matches_sim2() {
    let a = run_example("two_link_fricK.json", 1);
    let b = run_example("two_link_penalty.json", 1);
    assert_eq!(a.time.len(), b.time.len());
    for theta in ["theta0", "theta1"] {
        let (x, y) = (col(&a, theta), col(&b, theta));
        let max = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
        eprintln!("sim III vs sim II: max |Δ{theta}| = {max:e} rad over 10 s");
        assert!(max < 1e-4, "{theta} differs by {max} rad");
    }
    // And the penalty arm, too, stops drifting.
    let period10 = 10.0 * 2.0 * std::f64::consts::PI / 100.0;
    let end = *b.time.last().unwrap();
    for theta in ["theta0", "theta1"] {
        let d = window_mean(&b, theta, end - period10, period10) - window_mean(&b, theta, 6.0, period10);
        assert!(d.abs() < 1e-6, "penalty {theta} drifts {d}");
    }
}
