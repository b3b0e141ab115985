//! Mistakes get the closest name (edit distance): component types, parameter names,
//! component names, port names, signal names, table columns and FMU variables; a stray key
//! is reported before the missing one it was meant to be; a parameter of another friction
//! law says which law takes it.

mod common;
use common::*;
use serde_json::{json, Value};

/// A spring between a velocity source and model A's block.
fn base() -> Value {
    json!({
        "solver": {"method": "euler", "step": 1e-3, "stop_time": 0.01},
        "output": {"signals": {"v": "block.v"}},
        "components": {
            "drive": {"type": "velocity_source", "velocity": 0.1},
            "spring": {"type": "spring_damper", "K": 100},
            "block": {"type": "kikuuwe_a", "mass": 1, "F": 1}
        },
        "connections": [
            {"from": "spring.a", "to": "drive.body"},
            {"from": "spring.b", "to": "block"}
        ]
    })
}

fn check_error(v: &Value) -> String {
    let (code, err) = run_json("check", v);
    assert_eq!(code, 2, "expected bad input: {err}");
    err
}

fn assert_has(err: &str, want: &[&str]) {
    for w in want {
        assert!(err.contains(w), "'{w}' not in: {err}");
    }
}

#[test]
fn component_types_parameters_and_stray_keys() {
    let mut s = base();
    s["components"]["spring"]["type"] = json!("spring_dampr");
    assert_has(
        &check_error(&s),
        &["components.spring.type", "unknown component type 'spring_dampr' (did you mean 'spring_damper'?)"],
    );

    // `mas` instead of `mass`: the stray key, not "missing mass".
    let mut s = base();
    let b = s["components"]["block"].as_object_mut().unwrap();
    b.remove("mass");
    b.insert("mas".into(), json!(1));
    let e = check_error(&s);
    assert_has(&e, &["components.block.mas: unknown parameter (did you mean 'mass'?)"]);
    assert!(!e.contains("missing"), "{e}");

    let mut s = base();
    s["components"]["spring"]["KK"] = json!(1);
    assert_has(&check_error(&s), &["components.spring.KK", "did you mean 'K'"]);
}

#[test]
fn law_specific_parameters_name_their_law() {
    // F is the Coulomb level; under the Stribeck law it is not taken.
    let mut s = base();
    s["components"]["block"] =
        json!({"type": "kikuuwe_a", "mass": 1, "law": "stribeck", "Fc": 1, "Fs": 2, "vs": 0.1, "F": 1});
    assert_has(
        &check_error(&s),
        &["components.block.F", "unknown parameter for law \"stribeck\"", "a parameter of law \"coulomb\""],
    );
    // Stribeck's Fs under the default (Coulomb) law.
    let mut s = base();
    s["components"]["block"]["Fs"] = json!(2);
    assert_has(
        &check_error(&s),
        &["components.block.Fs", "unknown parameter for law \"coulomb\"", "a parameter of law \"stribeck\""],
    );
}

#[test]
fn component_port_and_signal_names() {
    let mut s = base();
    s["connections"][1]["to"] = json!("blok");
    assert_has(&check_error(&s), &["connections[1]", "no component named 'blok' (did you mean 'block'?)"]);

    let mut s = base();
    s["connections"][0]["to"] = json!("drive.bdy");
    assert_has(&check_error(&s), &["no port 'bdy' (did you mean 'body'?)"]);

    let mut s = base();
    s["output"]["signals"]["v"] = json!("block.stuk");
    assert_has(&check_error(&s), &["output.signals.v", "no signal 'stuk' (did you mean 'stuck'?)"]);

    let mut s = base();
    s["output"]["signals"]["v"] = json!("blck.v");
    assert_has(&check_error(&s), &["no component named 'blck' (did you mean 'block'?)"]);
}

#[test]
fn table_columns_are_listed_and_suggested() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("u.csv"), "time,force\n0,1\n1,2\n").unwrap();
    let mut s = base();
    s["components"]["push"] = json!({"type": "force_source", "force": {"table": "u.csv", "column": "forse"}});
    s["connections"].as_array_mut().unwrap().push(json!({"from": "push", "to": "block"}));
    let path = dir.path().join("system.json");
    std::fs::write(&path, s.to_string()).unwrap();
    let out = cli(&["check", path.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert_has(
        &e,
        &["components.push.force.column", "no column 'forse' (did you mean 'force'?) (columns: time, force)"],
    );
}

#[test]
fn fmu_variable_names() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = export_fmu(dir.path(), "gear", "2", "cs", &[]);
    let mut s: Value = serde_json::from_str(&std::fs::read_to_string(example("fmu_gear_fig9.json")).unwrap()).unwrap();
    s["components"]["gear"]["path"] = json!(fmu.to_str().unwrap());
    s["components"]["gear"]["parameters"]["gama_u"] = json!(0.2);
    assert_has(&check_error(&s), &["components.gear.parameters.gama_u", "did you mean 'gamma_u'"]);
    let mut s2 = s.clone();
    s2["components"]["gear"]["parameters"].as_object_mut().unwrap().remove("gama_u");
    s2["components"]["gear"]["ports"]["output"]["velocity"] = json!("vv");
    s2["components"]["gear"]["ports"]["output"]["position"] = json!("qq");
    assert_has(&check_error(&s2), &["has no variable 'qq'"]);
    s2["components"]["gear"]["ports"]["output"]["position"] = json!("lamda");
    assert_has(&check_error(&s2), &["has no variable 'lamda' (did you mean 'lambda'?)"]);
}
