//! `stiction run X.fmu`: one FMU simulated alone (Co-Simulation by doStep, Model Exchange
//! by the modular RK4), every output a column; start values by `--set`; a missing FMU of an
//! example names the export command that makes it.

mod common;
use common::*;

fn rows(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r.records().map(|x| x.unwrap().iter().map(|c| c.parse().unwrap()).collect()).collect();
    (h, rows)
}

#[test]
fn an_fmu_runs_alone_in_cs_and_me() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = export_fmu(dir.path(), "gear", "2", "both", &[]);
    let f = fmu.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", f, "--set", "fu=3", "--set", "v=2", "--stop-time", "0.5", "--step", "0.001", "-o", "-"];
        a.extend_from_slice(extra);
        let out = cli(&a);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        rows(&String::from_utf8_lossy(&out.stdout))
    };
    let (h, cs) = run(&[]);
    assert_eq!(h, ["time", "q", "v", "lambda", "mode"], "every output variable is a column");
    let (_, me) = run(&["--interface", "me"]);
    assert_eq!(cs.len(), 501);
    assert_eq!(me.len(), 501);
    // Driven by fu = 3 N m from v0 = 2 rad/s the gear slides with a constant acceleration a:
    // v(t) = v0 + a t, and RK4 integrates q(t) = v0 t + a t²/2 exactly.
    let a = (me[500][2] - 2.0) / 0.5;
    assert!(a > 0.5, "{a}");
    for r in &me {
        let t = r[0];
        assert!((r[2] - (2.0 + a * t)).abs() < 1e-9, "v at {t}");
        assert!((r[1] - (2.0 * t + a * t * t / 2.0)).abs() < 1e-9, "q at {t}");
    }
    // Co-Simulation: the FMU's own implicit-Euler step (44) gives the same speeds, and
    // positions within one step's worth of a·T·t/2.
    for (c, m) in cs.iter().zip(&me) {
        assert!((c[2] - m[2]).abs() < 1e-9);
        assert!((c[1] - m[1]).abs() <= a * 0.001 * c[0] / 2.0 + 1e-9, "{c:?} {m:?}");
    }
}

#[test]
fn fmu_run_errors_suggest_and_no_utf8_message() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = export_fmu(dir.path(), "gear", "2", "cs", &[]);
    let out = cli(&["run", fmu.to_str().unwrap(), "--set", "gama_u=0.3", "-o", "-"]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("no variable 'gama_u' (did you mean 'gamma_u'?)") && !e.contains("UTF-8"), "{e}");
    let out = cli(&["run", fmu.to_str().unwrap(), "--interface", "me", "-o", "-"]);
    assert_eq!(out.status.code(), Some(2), "the FMU has no Model Exchange interface");

    // An example whose FMU was not exported yet: the hint is the export command.
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("fmu_gear_fig9.json")).unwrap()).unwrap();
    s["components"]["gear"]["path"] = serde_json::json!("nowhere/StictionGear.fmu");
    let p = dir.path().join("fig9.json");
    std::fs::write(&p, s.to_string()).unwrap();
    let out = cli(&["run", p.to_str().unwrap(), "-o", "-"]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(e.contains("hint: StictionGear.fmu is made by `stiction fmu export gear"), "{e}");
}

#[test]
fn set_reaches_the_fmus_of_an_fmu_only_system() {
    let dir = tempfile::tempdir().unwrap();
    let gear = export_fmu(dir.path(), "gear", "2", "cs", &[]);
    let friction = export_fmu(dir.path(), "friction", "2", "cs", &[]);
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("fmu_only_gear_contact.json")).unwrap()).unwrap();
    s["fmus"]["gear"]["path"] = serde_json::json!(gear.to_str().unwrap());
    s["fmus"]["contact"]["path"] = serde_json::json!(friction.to_str().unwrap());
    let p = dir.path().join("fmu_only.json");
    std::fs::write(&p, s.to_string()).unwrap();
    let run = |sets: &[&str]| {
        let mut a = vec!["run", p.to_str().unwrap(), "-o", "-", "--quiet", "--set", "master.stop_time=0.2"];
        for x in sets {
            a.extend(["--set", x]);
        }
        cli(&a)
    };
    let base = run(&[]);
    assert!(base.status.success(), "{}", String::from_utf8_lossy(&base.stderr));
    let (h, rows0) = rows(&String::from_utf8_lossy(&base.stdout));
    assert_eq!(h, ["time", "q", "v", "f", "stuck"]);
    assert_eq!(rows0.last().unwrap()[0], 0.2, "master.stop_time=0.2 was taken");
    // Launched at 0 instead of 2 rad/s, with fu = 3 N·m below the contact's 5 N·m, it only
    // creeps within the contact's presliding compliance (|v| < 0.01 rad/s, against > 1).
    let held = run(&["gear.v=0"]);
    assert!(held.status.success(), "{}", String::from_utf8_lossy(&held.stderr));
    let (_, rows1) = rows(&String::from_utf8_lossy(&held.stdout));
    assert_eq!(rows1[0][2], 0.0, "gear.v=0 did not reach the FMU");
    assert!(rows1.iter().all(|r| r[2].abs() < 0.01));
    assert_eq!(rows0[0][2], 2.0);
    let bad = run(&["gear.vv=0"]);
    let e = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{e}");
    assert!(e.contains("fmus.gear.parameters.vv") && e.contains("(from --set gear.vv=0)"), "{e}");
}
