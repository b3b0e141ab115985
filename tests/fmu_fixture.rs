//! The TimedMass test FMU (tests/fixtures/timed_mass: hand-written C, Model Exchange with
//! time events, FMI 2.0 and 3.0) checked in a third-party host before the importer is tested
//! with it: FMPy (installed from PyPI into a venv under target/ on first use) validates both
//! FMUs, simulates them with CVode and must reproduce the analytic solution at the output
//! points; its binary, driven through ctypes, must reject misuse with Error and a message.

mod common;
#[path = "fixtures/timed_mass/mod.rs"]
mod timed_mass;

use common::fmpy_script;
use serde_json::{json, Value};

/// CVode's relative tolerance (FMPy sets the absolute tolerance to it × nominal = 1): the
/// default 1e-5 leaves errors of 3e-6 in q; 1e-10 brings them to 7e-11.
const RTOL: f64 = 1e-10;

/// Send a request to tests/fixtures/timed_mass/fmpy_check.py and parse its JSON answer.
fn check(request: &Value) -> Value {
    fmpy_script(&timed_mass::source_dir().join("fmpy_check.py"), request)
}

fn series(v: &Value, name: &str) -> Vec<f64> {
    v[name]
        .as_array()
        .unwrap_or_else(|| panic!("no column {name} in the FMPy result"))
        .iter()
        .map(|x| x.as_f64().unwrap_or_else(|| panic!("non-number in column {name}: {x}")))
        .collect()
}

/// validate_fmu finds no problem, and simulate_fmu (CVode, f = 0, outputs every 1 ms)
/// matches the analytic solution to 1e-9: the time events at t1 and t2 were announced and
/// handled exactly (an event missed or placed at the next output point would leave errors
/// of order F/m · 1 ms = 1.5e-3 in v).
#[test]
fn fmpy_validates_and_simulates_timed_mass() {
    let dir = tempfile::tempdir().expect("temporary directory");
    for fmi in [2, 3] {
        let fmu = timed_mass::build(dir.path(), fmi);
        let r = check(&json!({"action": "simulate", "fmu": fmu, "relative_tolerance": RTOL, "output_interval": 1e-3}));
        let problems = r["problems"].as_array().expect("problems list");
        println!("FMI {fmi}: validate_fmu: {} problems", problems.len());
        assert!(problems.is_empty(), "FMI {fmi}: validate_fmu problems: {problems:?}");

        let time = series(&r, "time");
        assert_eq!(time.len(), 1001, "FMI {fmi}: expected the 1001 output points of [0, 1] every 1 ms");
        for (k, t) in time.iter().enumerate() {
            assert!((t - k as f64 * 1e-3).abs() < 1e-12, "FMI {fmi}: output point {k} at t = {t}");
        }
        let exact: Vec<(f64, f64, f64, f64)> = time.iter().map(|&t| timed_mass::exact(t)).collect();
        let mut worst = [0.0f64; 4];
        for (i, name) in ["q", "v", "a", "s"].into_iter().enumerate() {
            let got = series(&r, name);
            for (k, (g, e)) in got.iter().zip(&exact).enumerate() {
                let want = [e.0, e.1, e.2, e.3][i];
                let err = (g - want).abs();
                worst[i] = worst[i].max(err);
                assert!(err <= 1e-9, "FMI {fmi}: {name}({}) = {g}, analytic {want} (error {err:e})", time[k]);
            }
        }
        println!(
            "FMI {fmi}: max |error| vs analytic: q {:.2e}, v {:.2e}, a {:.2e}, s {:.2e}",
            worst[0], worst[1], worst[2], worst[3]
        );
        // The run covers both switching phases.
        let v_end = series(&r, "v")[1000];
        assert!((v_end - timed_mass::F / timed_mass::M * (timed_mass::T2 - timed_mass::T1)).abs() < 1e-9);
    }
}

/// The binary, called directly: Error with a logged message for calls in the wrong state,
/// NULL pointers, unknown value references and invalid values; the time-event protocol
/// (s unchanged until Event Mode, nextEventTime t1, then t2, then none) step by step.
#[test]
fn timed_mass_rejects_misuse_and_follows_the_event_protocol() {
    let dir = tempfile::tempdir().expect("temporary directory");
    for fmi in [2, 3] {
        let fmu = timed_mass::build(dir.path(), fmi);
        let r = check(&json!({"action": "misuse", "fmu": fmu}));
        let failures = r["failures"].as_array().expect("failures list");
        println!("FMI {fmi}: {} checks, {} failed", r["checks"], failures.len());
        assert!(r["checks"].as_u64().is_some_and(|n| n > 30), "FMI {fmi}: too few checks ran: {r}");
        assert!(failures.is_empty(), "FMI {fmi}: {failures:#?}");
    }
}
