//! Time events of imported Model Exchange FMUs, with the TimedMass test FMU
//! (tests/fixtures/timed_mass: hand-written C, FMI 2.0 and 3.0, checked against FMPy in
//! tests/fmu_fixture.rs): a mass m driven by its force port plus an internal force step F
//! that switches on at t1 = 0.1234 s and off at t2 = 0.5678 s, announced as time events
//! (nextEventTime). Both instants fall inside network steps.
//!
//! * Under a constant port force the motion is piecewise quadratic, which RK4 integrates
//!   exactly: with the events taken at their own instants (and the rest of each step
//!   integrated again in the new mode) the run equals the analytic solution to round-off at
//!   T = 0.01 and 0.05 s. Handled at the step end instead, v would be off by F/m × (the time
//!   from the event to the step end), up to 0.05 m/s at T = 0.05 s.
//! * On a spring (an impedance, so the port force changes along the step) the rest of the
//!   step is integrated with the force held at its step-end value: a local error O(T²) per
//!   event, so the global error falls as T² (ratio 4 when T halves), not as T (ratio 2, what
//!   handling the event at the step end gives).

mod common;
#[path = "fixtures/timed_mass/mod.rs"]
mod timed_mass;

use common::col;
use serde_json::{json, Value};
use std::path::Path;
use stiction::framework::Recorder;
use timed_mass::{F, M, T1, T2};

fn run(dir: &Path, system: &Value) -> Recorder {
    let path = dir.join("timed.json");
    std::fs::write(&path, serde_json::to_string_pretty(system).unwrap()).unwrap();
    let sys = stiction::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let (mut sim, plan) = sys.into_simulator(1).unwrap_or_else(|e| panic!("{e}"));
    let mut rec = Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    rec
}

/// TimedMass as an admittance whose port is pushed by `push` (another component's port).
fn system(fmu: &Path, step: f64, interval: f64, extra: Value, connections: Value) -> Value {
    let mut components = json!({
        "mass": {"type": "fmu", "path": fmu, "interface": "me", "role": "admittance",
                 "ports": {"body": {"force": "f", "position": "q", "velocity": "v"}}}
    });
    for (k, v) in extra.as_object().unwrap() {
        components[k] = v.clone();
    }
    json!({
        "name": "timed_mass",
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
        "output": {"interval": interval, "signals": {"q": "mass.q", "v": "mass.v", "s": "mass.s"}},
        "components": components,
        "connections": connections
    })
}

/// Constant push f0: q = f0 t²/(2m) + q_step(t), v = f0 t/m + v_step(t).
#[test]
fn time_events_are_taken_at_their_instants() {
    let dir = tempfile::tempdir().unwrap();
    let f0 = 0.5;
    for fmi in [2, 3] {
        let fmu = timed_mass::build(dir.path(), fmi);
        for step in [0.01, 0.05] {
            let s = system(
                &fmu,
                step,
                step,
                json!({"push": {"type": "force_source", "force": f0}}),
                json!([{"from": "push.body", "to": "mass.body"}]),
            );
            let rec = run(dir.path(), &s);
            let (q, v, sw) = (col(&rec, "q"), col(&rec, "v"), col(&rec, "s"));
            let (mut dq, mut dv) = (0.0f64, 0.0f64);
            for (k, &t) in rec.time.iter().enumerate() {
                let (qe, ve, _, se) = timed_mass::exact(t);
                let (qe, ve) = (qe + f0 * t * t / (2.0 * M), ve + f0 * t / M);
                dq = dq.max((q[k] - qe).abs());
                dv = dv.max((v[k] - ve).abs());
                assert_eq!(sw[k], se, "FMI {fmi}, T = {step}: s at t = {t}");
            }
            let late = F / M * ((T1 / step).ceil() * step - T1).max((T2 / step).ceil() * step - T2);
            println!(
                "FMI {fmi}, T = {step}: max |q - exact| = {dq:.2e} m, max |v - exact| = {dv:.2e} m/s \
                 (handled at the step end: up to {late:.2e} m/s)"
            );
            assert!(dq < 1e-12 && dv < 1e-12, "FMI {fmi}, T = {step}: {dq:e} {dv:e}");
        }
    }
}

/// The analytic motion on a spring K to a fixed anchor: m q̈ = −K q + F s(t), s = 1 on
/// [t1, t2), from rest.
fn spring_exact(k: f64, (t1, t2): (f64, f64), t: f64) -> (f64, f64) {
    let w = (k / M).sqrt();
    // Free oscillation about q_eq = f/K from (q, v) over dt.
    let advance = |q: f64, v: f64, f: f64, dt: f64| {
        let (qe, (sn, cs)) = (f / k, (w * dt).sin_cos());
        (qe + (q - qe) * cs + v / w * sn, -(q - qe) * w * sn + v * cs)
    };
    let (mut q, mut v, mut t0, mut f) = (0.0, 0.0, 0.0, 0.0);
    for (ts, fs) in [(t1, F), (t2, 0.0)] {
        if t < ts {
            break;
        }
        (q, v) = advance(q, v, f, ts - t0);
        (t0, f) = (ts, fs);
    }
    advance(q, v, f, t - t0)
}

/// On a spring the port force changes along the step, and the rest of the step after an
/// event is integrated with it held: a local error O(r²) for a remainder r. With the events
/// in the middle of a step for every T (t1 = 4.5 T0, t2 = 18.5 T0, T = T0/3^j), r = T/2 and
/// the global error falls as T² (ratio 9 per third), where handling the events at the step
/// end gives T (ratio 3).
#[test]
fn time_events_on_a_spring_converge_at_second_order() {
    let dir = tempfile::tempdir().unwrap();
    let (k, t0) = (50.0, 0.03);
    let events = (4.5 * t0, 18.5 * t0);
    for fmi in [2, 3] {
        let fmu = timed_mass::build(dir.path(), fmi);
        let steps = [t0, t0 / 3.0, t0 / 9.0, t0 / 27.0];
        let errors: Vec<(f64, f64)> = steps
            .iter()
            .map(|&step| {
                let mut s = system(
                    &fmu,
                    step,
                    t0,
                    json!({"anchor": {"type": "velocity_source", "velocity": 0.0},
                           "spring": {"type": "spring_damper", "K": k}}),
                    json!([{"from": "spring.a", "to": "anchor"}, {"from": "spring.b", "to": "mass.body"}]),
                );
                s["components"]["mass"]["parameters"] = json!({"t1": events.0, "t2": events.1});
                s["solver"]["stop_time"] = json!(30.0 * t0);
                let rec = run(dir.path(), &s);
                let (q, v) = (col(&rec, "q"), col(&rec, "v"));
                rec.time.iter().enumerate().fold((0.0f64, 0.0f64), |(dq, dv), (i, &t)| {
                    let (qe, ve) = spring_exact(k, events, t);
                    (dq.max((q[i] - qe).abs()), dv.max((v[i] - ve).abs()))
                })
            })
            .collect();
        let ratios: Vec<(f64, f64)> = errors.windows(2).map(|w| (w[0].0 / w[1].0, w[0].1 / w[1].1)).collect();
        println!("FMI {fmi}: max errors (q m, v m/s) as T goes 0.03 s / 3^j: {errors:?}, ratios {ratios:.2?}");
        for (rq, rv) in ratios {
            assert!(rq > 7.0 && rv > 7.0, "FMI {fmi}: not second order: {rq} {rv}");
        }
    }
}

/// A parameter the FMU rejects: the error names the FMU and the FMI function and carries
/// the FMU's own message. The FMI 2.0 binary logs it as a printf format with an argument
/// ("%s", text), which the importer's logger formats.
#[test]
fn a_rejected_parameter_brings_the_fmus_formatted_message() {
    let dir = tempfile::tempdir().unwrap();
    for (fmi, function) in [(2, "fmi2SetReal"), (3, "fmi3SetFloat64")] {
        let fmu = timed_mass::build(dir.path(), fmi);
        let mut s = system(
            &fmu,
            0.01,
            0.01,
            json!({"push": {"type": "force_source", "force": 0.0}}),
            json!([{"from": "push.body", "to": "mass.body"}]),
        );
        s["components"]["mass"]["parameters"] = json!({"m": -1.0});
        let path = dir.path().join("bad.json");
        std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
        let err = match stiction::load(&path).and_then(|sys| sys.into_simulator(1).map(|_| ())) {
            Ok(()) => panic!("FMI {fmi}: m = -1 was accepted"),
            Err(e) => e.to_string(),
        };
        println!("FMI {fmi}: {err}");
        assert!(err.contains("TimedMass") && err.contains(function), "FMI {fmi}: {err}");
        assert!(err.contains("m = -1 must be > 0") && !err.contains("%s"), "FMI {fmi}: the FMU's message: {err}");
    }
}
