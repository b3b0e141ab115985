//! Bad input gives exit code 2 and a message naming the offending item (file, JSON path,
//! component, port); a simulation that fails part-way exits 1, names the time and the
//! component, and keeps every row written before the failure.

mod common;
use common::*;
use serde_json::{json, Value};

fn sphere() -> Value {
    serde_json::from_str(&std::fs::read_to_string(example("rolling_sphere.json")).unwrap()).unwrap()
}

fn assert_bad(name: &str, v: Value, needles: &[&str]) {
    for cmd in ["check", "run"] {
        let (code, err) = run_json(cmd, &v);
        assert_eq!(code, 2, "{name} ({cmd}): exit {code}, stderr: {err}");
        assert!(err.contains("system.json"), "{name}: message does not name the file: {err}");
        for n in needles {
            assert!(err.contains(n), "{name} ({cmd}): message lacks '{n}': {err}");
        }
    }
}

#[test]
fn unknown_keys_are_rejected_with_their_path() {
    let mut v = sphere();
    v["components"]["sphere"]["colour"] = json!("red");
    assert_bad("unknown component key", v, &["components.sphere.colour", "unknown parameter"]);
    let mut v = sphere();
    v["solver"]["stepsize"] = json!(1);
    assert_bad("unknown solver key", v, &["solver.stepsize", "unknown field"]);
    let mut v = sphere();
    v["components"]["sphere"]["init"]["omega"] = json!([0, 0, 0]);
    assert_bad("unknown nested key", v, &["components.sphere.init.omega"]);
    let mut v = sphere();
    v["components"]["floor"]["type"] = json!("floorr");
    assert_bad("unknown type", v, &["components.floor.type", "floorr"]);
}

#[test]
fn missing_and_non_physical_parameters_are_rejected() {
    let mut v = sphere();
    v["components"]["sphere"].as_object_mut().unwrap().remove("mass");
    assert_bad("missing mass", v, &["components.sphere.mass", "missing"]);
    let mut v = sphere();
    v["components"]["sphere"]["mass"] = json!(0);
    assert_bad("mass 0", v, &["components.sphere.mass", "> 0"]);
    let mut v = sphere();
    v["components"]["sphere"]["mass"] = json!(-0.3);
    assert_bad("negative mass", v, &["components.sphere.mass"]);
    let mut v = sphere();
    v["components"]["floor"]["K"] = json!(0);
    assert_bad("K = 0", v, &["components.floor.K"]);
    let mut v = sphere();
    v["components"]["floor"]["mu"] = json!("NaN");
    assert_bad("NaN", v, &["components.floor.mu", "finite"]);
    let mut v = sphere();
    v["components"]["sphere"]["inertia"] = json!([1, 1, 3]);
    assert_bad("impossible inertia", v, &["components.sphere.inertia"]);
    let mut v = sphere();
    v["solver"]["step"] = json!(-1e-4);
    assert_bad("negative step", v, &["solver.step"]);
    let mut v = sphere();
    v["solver"]["stop_time"] = json!(0);
    assert_bad("zero stop time", v, &["solver.stop_time"]);
    let mut v = sphere();
    v["output"]["interval"] = json!(1e-6);
    assert_bad("interval below step", v, &["output.interval"]);
    let mut v = sphere();
    v["components"]["push"] = json!({"type": "force_source", "domain": "frame", "force": ["sin(", 0, 0]});
    v["connections"].as_array_mut().unwrap().push(json!({"from": "push.body", "to": "sphere"}));
    assert_bad("bad expression", v, &["components.push.force[0]"]);
    let mut v = sphere();
    v["components"]["push"] = json!({"type": "force_source", "force": {"table": [[1, 0], [0, 1]]}});
    assert_bad("table not increasing", v, &["components.push.force.table"]);
}

#[test]
fn bad_connections_name_components_and_ports() {
    let mut v = sphere();
    v["connections"].as_array_mut().unwrap().push(json!({"from": "floor.body", "to": "ghost"}));
    assert_bad("dangling", v, &["connections[1]", "ghost"]);
    let mut v = sphere();
    v["connections"][0]["from"] = json!("floor.foot");
    assert_bad("no such port", v, &["connections[0]", "floor", "foot"]);
    let mut v = sphere();
    v["components"]["j"] = json!({"type": "fric_k", "K": 1, "B": 1, "F": 1});
    v["connections"].as_array_mut().unwrap().push(json!({"from": "j.a", "to": "ground"}));
    v["connections"].as_array_mut().unwrap().push(json!({"from": "j.b", "to": "sphere"}));
    assert_bad("ill-typed", v, &["connections[2]", "j.b", "scalar", "sphere.body", "frame"]);
    let mut v = sphere();
    v["components"]["j"] = json!({"type": "fric_k", "domain": "point3", "K": 1, "B": 1, "F": 1});
    v["connections"].as_array_mut().unwrap().push(json!({"from": "j.a", "to": "floor"}));
    assert_bad("impedance to impedance", v, &["connections[1]", "'j'", "'floor'", "impedance"]);
    let mut v = sphere();
    v["components"]["ball2"] = v["components"]["sphere"].clone();
    v["connections"].as_array_mut().unwrap().push(json!({"from": "sphere", "to": "ball2"}));
    assert_bad("admittance to admittance", v, &["connections[1]", "both admittances"]);
    let mut v = sphere();
    v["connections"] = json!([]);
    assert_bad("unconnected", v, &["floor.body", "not connected"]);
    let mut v = sphere();
    v["connections"].as_array_mut().unwrap().push(json!({"from": "floor.body", "to": "sphere"}));
    assert_bad("connected twice", v, &["connections[1]", "floor.body", "twice"]);
    let mut v = sphere();
    v["output"]["signals"]["x"] = json!("sphere.velocity[0]");
    assert_bad("unknown signal", v, &["output.signals.x", "velocity"]);
    let mut v = sphere();
    v["output"]["signals"]["x"] = json!("sphere.v[3]");
    assert_bad("signal index", v, &["output.signals.x", "out of range"]);
}

#[test]
fn malformed_files_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("broken.json");
    std::fs::write(&p, "{\"solver\": ").unwrap();
    let out = cli(&["check", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken.json"));
    let out = cli(&["run", dir.path().join("missing.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));
}

/// A too-stiff spring for the step: the state overflows; the run exits 1, names the time
/// and the component, and the CSV keeps the rows written before.
#[test]
fn simulation_failure_exits_1_and_keeps_rows() {
    let v = json!({
        "solver": {"step": 0.01, "stop_time": 10},
        "output": {"interval": 0.01, "signals": {"x": "m.q"}},
        "components": {
            "m": {"type": "mass", "mass": 1, "init": {"q": 1}},
            "s": {"type": "spring_damper", "K": 1e6}
        },
        "connections": [{"from": "s.a", "to": "ground"}, {"from": "s.b", "to": "m"}]
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unstable.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let csv = dir.path().join("out.csv");
    let out = cli(&["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("simulation failed at t = ") && err.contains("'m'"), "{err}");
    assert!(err.contains("out.csv"), "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows = text.lines().count();
    assert!(rows > 10, "only {rows} lines kept");
    assert!(text.starts_with("time,x\n0,1\n"), "{}", &text[..40.min(text.len())]);
    // The check command warns about exactly this.
    let out = cli(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("warning: s: spring K = 1000000"), "{report}");
}

/// The loader reads the components and connections from the file's text (no value tree of
/// the whole file): a malformed connection still names its JSON path and place in the file,
/// and a component name given twice is an error (it used to be merged silently).
#[test]
fn connections_and_names_read_from_the_text_keep_their_paths() {
    use stiction::framework::system::System;
    let load = |text: &str| {
        let at = std::path::Path::new(".");
        match System::from_str(text, std::path::Path::new("system.json"), at, &stiction::registry()) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    };
    let text = sphere().to_string();
    assert_eq!(load(&text), "");
    let mut v = sphere();
    v["connections"][0]["at"] = json!([1, 2]);
    let e = load(&v.to_string());
    assert!(e.contains("connections[0].at") && e.contains("invalid length 2") && e.contains(" column "), "{e}");
    let mut v = sphere();
    v["connections"][0]["along"] = json!(1);
    let e = load(&v.to_string());
    assert!(e.contains("connections[0].along") && e.contains("unknown field `along`"), "{e}");
    let mut v = sphere();
    v["connections"] = Value::Null;
    let e = load(&v.to_string());
    assert!(e.contains("connections") && e.contains("invalid type: null, expected a sequence"), "{e}");
    let twice = text.replacen("\"components\":{", "\"components\":{\"floor\":{\"type\":\"point_mass\",\"mass\":1},", 1);
    assert_ne!(twice, text);
    let e = load(&twice);
    assert!(e.contains("components.floor") && e.contains("two components are named 'floor'"), "{e}");
}

/// The file is read under `--set` as it is read without: two components of one name are
/// refused either way (a JSON object would keep the last silently), and an override
/// elsewhere does not hide it.
#[test]
fn two_components_of_one_name_are_refused_with_and_without_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("twice.json");
    std::fs::write(
        &path,
        r#"{"solver": {"step": 0.001, "stop_time": 0.01},
            "components": {"m": {"type": "mass", "mass": 1}, "f": {"type": "force_source", "force": 1},
                           "m": {"type": "mass", "mass": 2}},
            "connections": [{"from": "f.body", "to": "m"}]}"#,
    )
    .unwrap();
    let out_csv = dir.path().join("out.csv");
    for sets in [&[][..], &["--set", "f.force=2"][..], &["--set", "m.mass=3"][..]] {
        let mut args = vec!["run", path.to_str().unwrap(), "-o", out_csv.to_str().unwrap()];
        args.extend_from_slice(sets);
        let out = cli(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sets:?}: {err}");
        assert!(err.contains("two components are named 'm'"), "{sets:?}: {err}");
    }
}
