//! The exported FMUs in a real FMI host: FMPy (installed from PyPI into a venv under
//! target/ on first use) validates every FMU and interface and simulates them, driven by
//! input tables; the results are compared with the native components driven the same way.
//!
//! * Co-Simulation against the native Euler run with the same step: ≤ 1e-9 (the FMU runs
//!   the same step functions; only the last bits of v differ, because the native solver
//!   reaches v_k through the rate (v_k − v_{k−1})/T).
//! * Model Exchange (FMPy's CVode) against the native Euler run: the tolerance is the
//!   native method's own O(h) error, stated per test; stuck phases are exact zeros.

mod common;

use common::{cli, col, export_fmu as export, fmpy_script, max_diff, run_example, run_value};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Send a request to tests/fmpy/fmpy_run.py and parse its JSON answer.
fn fmpy(request: &Value) -> Value {
    fmpy_script(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmpy/fmpy_run.py"), request)
}

fn simulate(fmu: &Path, fmi_type: &str, input: Value, start: Value, output: &[&str], stop: f64) -> Value {
    fmpy(&json!({
        "action": "simulate", "fmu": fmu, "fmi_type": fmi_type, "stop_time": stop, "output_interval": 1e-3,
        "input": input, "start_values": start, "output": output,
    }))
}

fn series(v: &Value, name: &str) -> Vec<f64> {
    v[name].as_array().unwrap_or_else(|| panic!("no column {name}")).iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn fmpy_validates_every_exported_fmu() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("gear", "2", "both", &[]),
        ("gear", "2", "me", &[]),
        ("gear", "2", "cs", &["gamma_v=1.05", "q=0.3"]),
        ("gear", "2", "cs", &["eta_f=0.7", "eta_b=0.4"]),
        ("gear", "3", "cs", &[]),
        ("gear", "3", "me", &[]),
        ("gear", "3", "both", &["gamma_v=1.05", "q=0.3"]),
        ("friction", "2", "both", &[]),
        ("friction", "2", "me", &["law=2", "Fs=9"]),
        ("friction", "3", "cs", &[]),
        ("friction", "3", "me", &[]),
        ("friction", "3", "both", &["law=2"]),
        ("friction-mass", "2", "cs", &[]),
        ("friction-mass", "3", "cs", &["law=2"]),
    ];
    for (model, fmi, iface, params) in cases {
        let fmu = export(dir.path(), model, fmi, iface, params);
        let answer = fmpy(&json!({"action": "validate", "fmu": fmu}));
        let problems = answer["problems"].as_array().unwrap();
        println!("validate_fmu {model} FMI {fmi} {iface} {params:?}: {} problems", problems.len());
        assert!(problems.is_empty(), "{model} FMI {fmi} {iface}: {problems:?}");
    }
}

#[test]
fn export_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.fmu");
    let o = out.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["fmu", "export", "brake", "-o", o], "unknown model \"brake\""),
        (&["fmu", "export", "gear", "--param", "gamma_w=1", "-o", o], "has no variable gamma_w"),
        (&["fmu", "export", "gear", "--param", "m=-1", "-o", o], "parameter m must be > 0"),
        (&["fmu", "export", "gear", "--param", "m", "-o", o], "expected NAME=VALUE"),
        (&["fmu", "export", "friction", "--param", "law=3", "-o", o], "law must be 1 (Coulomb) or 2 (Stribeck)"),
        (&["fmu", "export", "friction", "--interface", "me", "--param", "B=0", "-o", o], "B must be > 0"),
        (&["fmu", "export", "friction-mass", "--interface", "me", "-o", o], "no Model Exchange form"),
        (&["fmu", "export", "friction-mass", "--fmi", "3", "--interface", "both", "-o", o], "no Model Exchange form"),
        (&["fmu", "export", "gear", "--param", "lambda=2", "-o", o], "calculated by the model"),
    ];
    for (args, needle) in cases {
        let r = cli(args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: expected {needle:?} in {err}");
    }
    assert!(!out.exists(), "no file is written on error");
    // A missing FMU binary: the message says how to build it.
    let r = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["fmu", "export", "gear", "-o", o])
        .env("STICTION_FMU_LIBRARY", "/nonexistent/libstiction_fmus.so")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(err.contains("STICTION_FMU_LIBRARY=/nonexistent/libstiction_fmus.so does not exist"), "{err}");
    assert!(!out.exists());
}

/// Fig. 9 with γv = 1.05, native Euler h = 1e-3: the (fu, fv) the gear felt at each step.
fn fig9_tables() -> (Value, Vec<f64>, Vec<f64>, Vec<f64>) {
    let rec = run_example("gear_1dof_fig9_gv105.json", 1);
    let table = json!({"time": rec.time, "fu": col(&rec, "fu"), "fv": col(&rec, "fv")});
    (table, rec.time.clone(), col(&rec, "p"), col(&rec, "v"))
}

#[test]
fn gear_cosimulation_matches_the_native_euler_run() {
    let dir = tempfile::tempdir().unwrap();
    let (table, time, p, v) = fig9_tables();
    // FMI 2.0: parameters set by the host; FMI 3.0: start values baked in at export.
    let fmi2 = export(dir.path(), "gear", "2", "cs", &[]);
    let fmi3 = export(dir.path(), "gear", "3", "cs", &["gamma_v=1.05", "q=0.3"]);
    for (fmu, start) in [(fmi2, json!({"gamma_v": 1.05, "q": 0.3})), (fmi3, json!({}))] {
        let r = simulate(&fmu, "CoSimulation", table.clone(), start, &["q", "v", "mode"], 2.0);
        let (q, w) = (series(&r, "q"), series(&r, "v"));
        assert_eq!(series(&r, "time").len(), time.len());
        let (dq, dv) = (max_diff(&q, &p), max_diff(&w, &v));
        println!("{}: max |q - native| = {dq:.3e} rad, max |v - native| = {dv:.3e} rad/s", fmu.display());
        assert!(dq <= 1e-9 && dv <= 1e-9, "CS differs from native: {dq:e} {dv:e}");
        // Stuck against the wall from 0.35 s until fu = +20 at 1.4 s: exactly zero.
        for (k, t) in time.iter().enumerate().filter(|(_, t)| **t > 0.35 && **t < 1.4) {
            assert_eq!(w[k], 0.0, "v at t = {t}");
        }
    }
}

#[test]
fn gear_model_exchange_sticks_exactly_in_fmpy_cvode() {
    let dir = tempfile::tempdir().unwrap();
    let (table, time, p, v) = fig9_tables();
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "gear", fmi, "me", &[]);
        let start = json!({"gamma_v": 1.05, "q": 0.3});
        let r = simulate(&fmu, "ModelExchange", table.clone(), start, &["q", "v", "mode"], 2.0);
        let (t, q, w, mode) = (series(&r, "time"), series(&r, "q"), series(&r, "v"), series(&r, "mode"));
        assert_eq!(t.len(), time.len());
        // The stuck phase: v is exactly 0.0 from the wall contact until fu = +20 at 1.4 s,
        // although fu drops from −40 to 0 at 0.9 s (non-backdrivable, γv = 1.05).
        let stuck: Vec<usize> = (0..t.len()).filter(|&k| t[k] > 0.36 && t[k] < 1.399).collect();
        assert!(stuck.iter().all(|&k| w[k] == 0.0 && mode[k] == 0.0), "FMI {fmi} ME gear not exactly stuck");
        let first_zero = t[(0..t.len()).find(|&k| w[k] == 0.0 && t[k] > 0.1).unwrap()];
        let native_zero = time[(0..time.len()).find(|&k| v[k] == 0.0 && time[k] > 0.1).unwrap()];
        // The native Euler step (44) with h = 1e-3 has an O(h) error: the angles differ by
        // about |v| h ≈ 1.4e-3 per step of timing difference at the impact.
        let dq = max_diff(&q, &p);
        let late: Vec<usize> = (0..t.len()).filter(|&k| t[k] >= 1.45).collect();
        let dv_late = late.iter().map(|&k| (w[k] - v[k]).abs()).fold(0.0, f64::max);
        println!(
            "FMI {fmi} ME: stuck from {first_zero} s (native {native_zero} s), max |q - native| = {dq:.3e} rad, \
             max |v - native| after 1.45 s = {dv_late:.3e} rad/s"
        );
        assert!((first_zero - native_zero).abs() <= 0.01, "FMI {fmi}: stick time {first_zero} vs {native_zero}");
        assert!(dq < 1.5e-2, "FMI {fmi} ME angle differs by {dq}");
        assert!(dv_late < 2e-2, "FMI {fmi} ME speed after release differs by {dv_late}");
        assert!(w[late[late.len() - 1]] > 0.7, "FMI {fmi}: the rod detaches after 1.4 s");
    }
}

/// Native model C between ground and a prescribed velocity, Euler with step `h`.
fn native_friction(h: f64, velocity: Value) -> stiction::framework::Recorder {
    run_value(&json!({
        "name": "friction_native",
        "solver": {"method": "euler", "step": h, "stop_time": 2.0},
        "output": {"interval": 1e-3, "signals": {"f": "contact.f", "e": "contact.e", "v": "contact.v", "stuck": "contact.stuck"}},
        "components": {
            "drive": {"type": "velocity_source", "velocity": velocity},
            "contact": {"type": "kikuuwe_c", "K": 3e4, "B": 300, "F": 5.0}
        },
        "connections": [{"from": "contact.a", "to": "ground"}, {"from": "contact.b", "to": "drive"}]
    }))
}

/// Slides both ways, then rests (v = 0 from 1.0 s to 1.5 s), then slides again.
fn drive() -> Value {
    json!({"piecewise": [{"until": 1.0, "value": "0.2*sin(8*t)"}, {"until": 1.5, "value": 0}, {"value": "-0.1"}]})
}

#[test]
fn friction_cosimulation_matches_native_model_c() {
    let dir = tempfile::tempdir().unwrap();
    let rec = native_friction(1e-3, drive());
    let (time, f, e, v) = (rec.time.clone(), col(&rec, "f"), col(&rec, "e"), col(&rec, "v"));
    let table = json!({"time": time, "v": v});
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "friction", fmi, "cs", &[]);
        let r = simulate(&fmu, "CoSimulation", table.clone(), json!({}), &["f", "e", "stuck"], 2.0);
        let (ff, fe) = (series(&r, "f"), series(&r, "e"));
        let de = max_diff(&fe, &e);
        // The FMU reports the force of the last sub-step (k−1 → k); the native probe the
        // force of the next step, with the opposite sign (force on the sliding port).
        let df = (1..time.len()).map(|k| (ff[k] + f[k - 1]).abs()).fold(0.0, f64::max);
        println!("friction FMI {fmi} CS: max |e - native| = {de:.3e} m, max |f - native| = {df:.3e} N");
        assert!(de <= 1e-12 && df <= 1e-9, "friction CS differs: {de:e} m, {df:e} N");
        // While the drive rests the deflection does not move at all.
        let rest: Vec<usize> = (0..time.len()).filter(|&k| time[k] > 1.01 && time[k] < 1.5).collect();
        assert!(rest.iter().all(|&k| fe[k] == fe[rest[0]]), "e drifts while stuck");
    }
}

/// A staircase velocity (m/s) over 0.2 s segments: slip, rest, creep below breakaway,
/// reverse slip, rest, creep, slip, rest.
const STAIRS: [f64; 8] = [0.1, 0.0, -0.004, -0.1, 0.0, 0.002, 0.05, 0.0];

#[test]
fn friction_model_exchange_is_the_continuous_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Native: the element with a small step, τ K / B = 1e-3 (the limit τ → 0 up to 0.1 %).
    let mut pieces: Vec<Value> = (0..7).map(|i| json!({"until": 0.2 * (i + 1) as f64, "value": STAIRS[i]})).collect();
    pieces.push(json!({"value": STAIRS[7]}));
    let rec = native_friction(1e-5, json!({ "piecewise": pieces }));
    let (f, e) = (col(&rec, "f"), col(&rec, "e"));
    // FMPy: the same staircase; repeated time points mark the jumps as input events, at
    // which FMPy restarts CVode (between events CVode may step past an input sample).
    let (mut time, mut v) = (vec![0.0], vec![STAIRS[0]]);
    for i in 1..8 {
        time.extend([0.2 * i as f64, 0.2 * i as f64]);
        v.extend([STAIRS[i - 1], STAIRS[i]]);
    }
    time.push(2.0);
    v.push(STAIRS[7]);
    let fmu = export(dir.path(), "friction", "2", "me", &[]);
    let r = fmpy(&json!({
        "action": "simulate", "fmu": fmu, "fmi_type": "ModelExchange", "stop_time": 2.0, "output_interval": 1e-3,
        "relative_tolerance": 1e-8, "input": {"time": time, "v": v}, "output": ["f", "e", "stuck"],
    }));
    let (t, ff, fe, stuck) = (series(&r, "time"), series(&r, "f"), series(&r, "e"), series(&r, "stuck"));
    assert_eq!(t.len(), rec.time.len());
    // |f| never exceeds the Coulomb level F = 5 N (sat_F).
    assert!(ff.iter().all(|x| x.abs() <= 5.0 * (1.0 + 1e-15)), "|f| > F");
    let df = (0..t.len()).map(|k| (ff[k] + f[k]).abs()).fold(0.0, f64::max);
    let de = max_diff(&fe, &e);
    println!("friction ME (CVode, rtol 1e-8) vs native τ = 1e-5: max |f| diff = {df:.3e} N, max |e| diff = {de:.3e} m");
    assert!(df < 0.02 && de < 1e-6, "ME differs from the τ → 0 limit: {df} N, {de} m");
    // Drift-free static friction: at rest (v = 0, 0.2 s..0.4 s and 0.8 s..1.0 s) the
    // deflection stays put. The first rest starts inside the static set: e is exactly
    // constant. The second starts a hair outside the boundary |K e| = F (where the slip
    // left it): e relaxes onto the boundary by < 1e-12 m, as a slipping contact must.
    for (a, b) in [(0.201, 0.399), (0.801, 0.999)] {
        let rest: Vec<usize> = (0..t.len()).filter(|&k| t[k] > a && t[k] < b).collect();
        let spread = rest.iter().map(|&k| (fe[k] - fe[rest[0]]).abs()).fold(0.0, f64::max);
        println!("rest [{a}, {b}]: e moves by {spread:.2e} m");
        assert!(spread < 1e-12, "e drifts while stuck in [{a}, {b}]");
        assert!(rest.iter().all(|&k| stuck[k] == 1.0 || (fe[k].abs() - 5.0 / 3e4).abs() < 1e-12));
    }
    let first: Vec<usize> = (0..t.len()).filter(|&k| t[k] > 0.201 && t[k] < 0.399).collect();
    assert!(first.iter().all(|&k| fe[k] == fe[first[0]]), "e not exactly constant in the first rest");
    // Creeping at −4 mm/s below breakaway: ė = v exactly, so e falls linearly.
    let (k0, k1) = ((0..t.len()).find(|&k| t[k] > 0.41).unwrap(), (0..t.len()).find(|&k| t[k] > 0.45).unwrap());
    let rate = (fe[k1] - fe[k0]) / (t[k1] - t[k0]);
    assert!((rate + 0.004).abs() < 1e-9, "creep rate {rate}");
}

#[test]
fn friction_mass_cosimulation_matches_native_model_d() {
    let dir = tempfile::tempdir().unwrap();
    // Below breakaway (5 N < F = 8 N), above it (12 N), reversed (-12 N), then released.
    let times: Vec<f64> = (0..=2000).map(|k| k as f64 * 1e-3).collect();
    let force: Vec<f64> = times
        .iter()
        .map(|&t| {
            if t < 0.5 {
                5.0 * t / 0.5
            } else if t < 1.0 {
                12.0
            } else if t < 1.5 {
                -12.0
            } else {
                0.0
            }
        })
        .collect();
    let rows: Vec<Value> = times.iter().zip(&force).map(|(t, f)| json!([t, f])).collect();
    let rec = run_value(&json!({
        "name": "friction_mass_native",
        "solver": {"method": "euler", "step": 1e-3, "stop_time": 2.0},
        "output": {"interval": 1e-3, "signals": {"q": "body.q", "v": "body.u", "f": "body.f"}},
        "components": {
            "push": {"type": "force_source", "force": {"table": rows}},
            "body": {"type": "kikuuwe_d", "mass": 1.0, "K": 1e4, "B": 200, "F": 8.0}
        },
        "connections": [{"from": "push.body", "to": "body"}]
    }));
    let (q, v, f) = (col(&rec, "q"), col(&rec, "v"), col(&rec, "f"));
    let table = json!({"time": times, "force": force});
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "friction-mass", fmi, "cs", &[]);
        let r = simulate(&fmu, "CoSimulation", table.clone(), json!({}), &["q", "v", "f", "w"], 2.0);
        let (fq, fv, ff, fw) = (series(&r, "q"), series(&r, "v"), series(&r, "f"), series(&r, "w"));
        let (dq, dv) = (max_diff(&fq, &q), max_diff(&fv, &v));
        let df = (1..q.len()).map(|k| (ff[k] - f[k - 1]).abs()).fold(0.0, f64::max);
        println!("friction-mass FMI {fmi} CS: max diffs q {dq:.3e} m, v {dv:.3e} m/s, f {df:.3e} N");
        assert!(dq <= 1e-9 && dv <= 1e-9 && df <= 1e-9, "model D CS differs: {dq:e} {dv:e} {df:e}");
        // Below breakaway only the presliding spring deflects: the slider does not move at all.
        assert!((0..500).all(|k| fw[k] == 0.0), "the slider creeps below breakaway");
        assert!(fw[990] > 0.01, "the mass slides at 12 N");
    }
}
