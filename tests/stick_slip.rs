//! Issue 14: the belt-driven stick–slip oscillator with every friction model.
//!
//! A mass m = 1 kg on a belt moving at vb = 0.1 m/s, held by a spring k = 100 N/m to a
//! wall, Coulomb friction F = 2 N with equal static and kinetic levels. Analytically
//! (friction always +F while v < vb) the mass swings harmonically about F/k = 0.02 m with
//! the velocity touching vb once per cycle: period 2π/ω = 0.628319 s (ω = 10 rad/s),
//! amplitude vb/ω = 0.01 m. Numerical damping shrinks the orbit below the touching one, so
//! the amplitude measures how well a model integrates the free (sliding) motion.
//!
//! Models on a fixed surface (A, B, D, Karnopp) are simulated in the belt's frame, where
//! the wall moves at −vb; the contacts between two bodies (fric_k, C, LuGre, Dahl) between the belt
//! (a velocity source) and the mass. The signal `x` is the spring's extension.

mod common;
use common::*;
use serde_json::{json, Value};

const K: f64 = 100.0;
const VB: f64 = 0.1;
const F: f64 = 2.0;
const STOP: f64 = 6.0;

/// The oscillator built with `model`, RK4 with step `step`.
fn oscillator(model: &str, step: f64) -> Value {
    let solver = json!({"method": "rk4", "step": step, "stop_time": STOP});
    let interval = if step <= 1e-3 { 1e-3 } else { step };
    let out = json!({"interval": interval, "signals": {"x": "s.d[0]"}});
    // Contact compliance of the compliant models: stiff, critically damped on m.
    let (kc, bc) = (1e5, 2.0 * 1e5f64.sqrt());
    let spring = json!({"type": "spring_damper", "K": K});
    // Belt frame: the wall moves at −vb, the mass starts at rest on the surface.
    let belt_frame = |body: Value| {
        json!({"solver": solver, "output": out,
               "components": {"wall": {"type": "velocity_source", "velocity": -VB}, "s": spring, "m": body},
               "connections": [{"from": "s.a", "to": "wall"}, {"from": "s.b", "to": "m"}]})
    };
    // Ground frame: the mass starts moving with the belt, the contact between belt and mass.
    let ground_frame = |contact: Value| {
        json!({"solver": solver, "output": out,
               "components": {"belt": {"type": "velocity_source", "velocity": VB},
                              "m": {"type": "mass", "mass": 1.0, "init": {"v": VB}}, "s": spring, "c": contact},
               "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "m"},
                               {"from": "c.a", "to": "belt"}, {"from": "c.b", "to": "m"}]})
    };
    match model {
        "kikuuwe_a" => belt_frame(json!({"type": "kikuuwe_a", "mass": 1.0, "F": F})),
        "kikuuwe_d" => belt_frame(json!({"type": "kikuuwe_d", "mass": 1.0, "K": kc, "B": bc, "F": F})),
        "karnopp_mass" => belt_frame(json!({"type": "karnopp_mass", "mass": 1.0, "F": F, "FH": F, "DV": 1e-4})),
        // Model B holds the mass and the spring itself: its K is the oscillator's k.
        "kikuuwe_b" => json!({"solver": solver, "output": {"interval": interval, "signals": {"x": "m.e"}},
               "components": {"wall": {"type": "velocity_source", "velocity": -VB},
                              "m": {"type": "kikuuwe_b", "mass": 1.0, "K": K, "F": F}},
               "connections": [{"from": "m.drive", "to": "wall"}]}),
        "fric_k" => ground_frame(json!({"type": "fric_k", "K": kc, "B": bc, "F": F})),
        "kikuuwe_c" => ground_frame(json!({"type": "kikuuwe_c", "K": kc, "B": bc, "F": F})),
        // The bristle models approach Coulomb friction only as σ0 → ∞: their friction
        // reaches F asymptotically, F(1 − exp(−σ0 s/F)) after a slip s, so the block slips
        // before it breaks away and the orbit shrinks, −2.2 % at σ0 = 1e5 whatever σ1
        // (0, 10, 100, 632 all give −1.7…−2.2 %) and whatever T (1e-4 and 5e-5 agree to
        // 4 digits); −0.42 % at σ0 = 1e6. So they run at σ0 = 1e6 (σ1 critical on m).
        "lugre" => ground_frame(json!({"type": "lugre", "sigma0": 1e6, "sigma1": 2e3, "Fc": F})),
        "dahl" => ground_frame(json!({"type": "dahl", "K": 1e6, "F": F})),
        _ => unreachable!("{model}"),
    }
}

/// (period, amplitude) of the extension over t ≥ 2 s: the mean interval between upward
/// crossings of the mean (linear interpolation), half the peak-to-peak range.
fn period_amplitude(model: &str, step: f64) -> (f64, f64) {
    let rec = run_value(&oscillator(model, step));
    let x = col(&rec, "x");
    let sign = if model == "kikuuwe_b" { -1.0 } else { 1.0 };
    let pts: Vec<(f64, f64)> =
        rec.time.iter().zip(&x).filter(|(t, _)| **t >= 2.0).map(|(t, x)| (*t, sign * x)).collect();
    let (lo, hi) = pts.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), p| (l.min(p.1), h.max(p.1)));
    let mid = 0.5 * (lo + hi);
    let crossings: Vec<f64> = pts
        .windows(2)
        .filter(|w| w[0].1 < mid && w[1].1 >= mid)
        .map(|w| w[0].0 + (mid - w[0].1) / (w[1].1 - w[0].1) * (w[1].0 - w[0].0))
        .collect();
    let n = crossings.len();
    let period = if n >= 2 { (crossings[n - 1] - crossings[0]) / (n - 1) as f64 } else { f64::NAN };
    (period, 0.5 * (hi - lo))
}

const PERIOD: f64 = 2.0 * std::f64::consts::PI / 10.0;
const AMPLITUDE: f64 = VB / 10.0;

fn meets(p: f64, a: f64) -> bool {
    (p / PERIOD - 1.0).abs() < 1e-3 && (a / AMPLITUDE - 1.0).abs() < 1e-2
}

/// Done when (issue 14): period within 0.1 % and amplitude within 1 % of the analytic orbit,
/// per friction model, at T = 5e-3 (the bristle models LuGre and Dahl at σ0 = 1e6: 2e-5,
/// the largest step of the scan at which their explicit bristle ODE, stiff as σ0|v|/F =
/// 5e4 1/s, is stable; see `stick_slip_step_scan`). The compliant contacts (fric_k, C, D)
/// converge to −0.10 %: the contact's presliding deflection F/K = 2e-5 m of the 0.02 m swing.
#[test]
fn stick_slip_oscillator_matches_the_analytic_orbit() {
    for (model, step) in [
        ("fric_k", 5e-3),
        ("kikuuwe_a", 5e-3),
        ("kikuuwe_b", 5e-3),
        ("kikuuwe_c", 5e-3),
        ("kikuuwe_d", 5e-3),
        ("karnopp_mass", 5e-3),
        ("lugre", 2e-5),
        ("dahl", 2e-5),
    ] {
        let (p, a) = period_amplitude(model, step);
        eprintln!(
            "{model}, rk4 T = {step:e}: period {p:.6} s ({:+.4} %), amplitude {a:.6} m ({:+.3} %)",
            100.0 * (p / PERIOD - 1.0),
            100.0 * (a / AMPLITUDE - 1.0)
        );
        assert!(meets(p, a), "{model} at T = {step}: period {p}, amplitude {a}");
    }
}

/// The step scan behind the table of the note: `cargo test --release --test
/// stick_slip -- --ignored --nocapture`.
#[test]
#[ignore]
fn stick_slip_step_scan() {
    for model in ["fric_k", "kikuuwe_a", "kikuuwe_b", "kikuuwe_c", "kikuuwe_d", "karnopp_mass", "lugre", "dahl"] {
        let mut line = format!("{model:>12}:");
        for step in [2e-2, 1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4, 5e-5, 2e-5, 1e-5] {
            let Ok((p, a)) = std::panic::catch_unwind(|| period_amplitude(model, step)) else {
                line += &format!(" T={step:e}: fails");
                continue;
            };
            line += &format!(
                " T={step:e}: {}{:+.3}%/{:+.2}%",
                if meets(p, a) { "ok " } else { "" },
                100.0 * (p / PERIOD - 1.0),
                100.0 * (a / AMPLITUDE - 1.0)
            );
        }
        eprintln!("{line}");
    }
}
