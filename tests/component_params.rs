//! The parameter table of every component type is the list of keys its builder reads:
//! building each type from the components of examples/*.json and from the samples below
//! (law variants, gear geometries, initial states the examples lack), every key read is
//! documented, and every documented key is read by at least one sample. Nested keys are
//! documented by dotted names (`init.q`, `upper.FH`), keys of array items with `[]`
//! (`links[].mass`, `gears[].spur.contact`).

mod common;

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use stiction::framework::system::{Built, ComponentType, Kind, ParamDoc, Params, Registry, System};

/// Components of examples/*.json, at most a few of each type per file: (where, component).
fn example_samples(reg: &Registry) -> Vec<(String, Value)> {
    let dir = common::example("");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|f| f.extension().is_some_and(|e| e == "json"));
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let Some(comps) = v["components"].as_object() else { continue };
        let mut per_type: BTreeMap<String, usize> = BTreeMap::new();
        for (name, c) in comps {
            let ty = c["type"].as_str().unwrap_or_default().to_string();
            let n = per_type.entry(ty.clone()).or_default();
            *n += 1;
            if *n <= 4 && reg.get(&ty).is_some() {
                out.push((format!("{}: {name}", f.file_name().unwrap().to_string_lossy()), c.clone()));
            }
        }
    }
    out
}

/// Friction-law variants: the keys of each law, merged into a component.
fn laws() -> Vec<Value> {
    vec![
        json!({"law": "coulomb", "F": 2.0, "D": 0.1}),
        json!({"law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}),
        json!({"law": "table", "speed": [0.0, 0.1, 1.0], "force": [1.5, 1.0, 1.2]}),
    ]
}

fn merged(base: &Value, extra: &Value) -> Value {
    let mut v = base.clone();
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// Gear coefficient variants (each with the input-side inertia).
fn gear_models() -> Vec<Value> {
    vec![
        json!({"gamma_u": 0.1, "gamma_v": 0.2, "ratio": 10.0, "m": 0.5}),
        json!({"efficiency": {"forward": 0.8, "backward": 0.6}, "input_inertia": 0.01, "ratio": 5.0}),
        json!({"leadscrew": {"lead_angle": 0.1, "mu": 0.2, "radius": 0.01, "thread_angle": 0.26}, "m": 0.5}),
        json!({"worm": {"lead_angle": 0.2, "pressure_angle": 0.35, "mu": 0.1, "worm_radius": 0.01, "gear_radius": 0.05}, "m": 0.5}),
        json!({"spur": {"pressure_angle": 0.35, "mu": 0.1, "input_radius": 0.05, "output_radius": 0.1, "contact": 0.01}, "m": 0.5}),
    ]
}

/// Small samples of the keys the examples do not use.
fn extra_samples() -> Vec<Value> {
    let mut out = vec![
        json!({"type": "mass", "mass": 1.0, "force": 0.5, "init": {"q": 0.1, "v": -0.2}}),
        json!({"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -9.81], "init": {"p": [0, 0, 1], "v": [1, 0, 0]}}),
        json!({"type": "rigid_body", "mass": 1.0, "inertia": [0.1, 0.2, 0.25, 0.01, 0.0, 0.0], "gravity": [0, 0, -9.81],
               "init": {"p": [0, 0, 1], "v": [1, 0, 0], "q": [1, 0, 0, 0], "w": [0, 0, 1]}}),
        json!({"type": "force_source", "domain": "frame", "force": [1, 0, 0], "moment": [0, 0, 1]}),
        json!({"type": "force_source", "domain": "scalar", "force": "sin(t)"}),
        json!({"type": "gravity", "mass": 2.0, "g": [0, 0, -9.81], "domain": "frame"}),
        json!({"type": "velocity_source", "dims": 2, "velocity": [1.0, "t"], "init": {"q": [0.5, 0.0]}}),
        json!({"type": "spring_damper", "domain": "point3", "K": 100.0, "B": 1.0, "rest_length": 0.5}),
        json!({"type": "penalty_joint", "axis_a": [0, 0, 1], "axis_b": [0, 1, 0], "K": 1e4, "B": 10.0, "K_rot": 1e3,
               "B_rot": 1.0, "friction_K": 100.0, "friction_B": 1.0, "friction_F": 0.5, "torque": "0.1*t"}),
        json!({"type": "penalty_joint", "axis": [0, 0, 1], "K": 1e4, "B": 10.0, "K_rot": 1e3, "B_rot": 1.0,
               "friction_K": 100.0, "friction_B": 1.0}),
        json!({"type": "plane_contact", "K": 1e4, "B": 10.0, "mu": 0.5, "height": 0.1}),
        json!({"type": "wall", "domain": "point3", "axis": [0, 1, 0], "side": "negative", "position": 0.2, "K": 1e4, "B": 1.0}),
        json!({"type": "dahl", "K": 1e3, "F": 1.0}),
        json!({"type": "lugre", "sigma0": 1e4, "sigma1": 10.0, "sigma2": 0.1, "Fc": 1.0, "Fs": 1.5, "vs": 0.01}),
        json!({"type": "kikuuwe_a", "dims": 2, "mass": 1.0, "force": [0.5, 0.0], "F": 1.0}),
        json!({"type": "kikuuwe_d", "dims": 1, "mass": 1.0, "K": 100.0, "force": 0.5, "F": 1.0}),
        json!({"type": "fric_k", "domain": "point3", "K": 1e3, "B": 10.0, "F": 1.0}),
        json!({"type": "gear", "M": 1.0, "damping": 0.1, "init": {"q": 0.1, "v": 0.2}, "gamma_u": 0.1, "gamma_v": 0.2, "m": 0.5}),
        json!({"type": "serial_robot",
               "links": [{"origin": [0, 0, 0.1], "axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01],
                          "damping": 0.1, "rotor": 0.01}],
               "tip": [0.2, 0, 0], "gravity": [0, 0, -9.81], "init": {"q": [0.1], "w": [0.2]}}),
    ];
    let kikuuwe = [
        // dims 3: kikuuwe_a and kikuuwe_d read `force` both as the applied force (dims
        // numbers) and as the forces of a table law (3 points below).
        json!({"type": "kikuuwe_a", "dims": 3, "mass": 1.0, "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}}),
        json!({"type": "kikuuwe_b", "dims": 1, "mass": 1.0, "K": 100.0, "B": 1.0, "init": {"e": 0.01, "v": 0.1}}),
        json!({"type": "kikuuwe_c", "dims": 1, "K": 100.0, "B": 1.0}),
        json!({"type": "kikuuwe_d", "dims": 3, "mass": 1.0, "K": 100.0, "B": 1.0, "e0": [0.001, 0.0, 0.0],
               "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}}),
        json!({"type": "karnopp_mass", "mass": 1.0, "force": 0.5, "FH": 2.0, "DV": 1e-3, "init": {"q": 0.1, "v": 0.2}}),
        json!({"type": "karnopp_pair", "m1": 1.0, "m2": 2.0, "FH": 2.0, "DV": 1e-3,
               "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}}),
    ];
    for base in &kikuuwe {
        for law in laws() {
            if base["type"] == "karnopp_mass" && law["law"] == "table" {
                continue; // see KEY_COLLISIONS
            }
            out.push(merged(base, &law));
        }
    }
    for law in laws() {
        let contact = merged(&json!({"FH": 2.0, "DV": 1e-3}), &law);
        out.push(json!({"type": "karnopp_stack", "m1": 1.0, "m2": 2.0, "upper": contact, "lower": contact,
                        "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}}));
    }
    for model in gear_models() {
        out.push(merged(&json!({"type": "gear", "M": 1.0}), &model));
        out.push(json!({"type": "geared_robot",
                        "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01]}],
                        "gears": [model], "init": {"q": [0.1], "v": [0.2]}}));
    }
    out
}

/// Documented keys no valid sample can reach: `karnopp_mass` reads `force` as its scalar
/// applied force and, with a table law, as the table's forces (an array), so a table law
/// never builds there. (kikuuwe_a and kikuuwe_d have the same collision; with dims = the
/// number of table points it builds.)
const KEY_COLLISIONS: &[(&str, &str)] = &[("karnopp_mass", "speed")];

/// The keys `ty.build` reads from `v`; panics if it reads an undocumented key or fails.
fn keys_read(ty: &ComponentType, at: &str, v: &Value) -> Vec<String> {
    let map = v.as_object().unwrap();
    let examples = common::example("");
    let mut p = Params::for_type(ty, format!("components.{}", ty.name), map, &examples);
    let built = (ty.build)(&mut p);
    if let Err(e) = p.check_documented() {
        panic!("{at}: {e}");
    }
    if let Err(e) = built {
        panic!("{at}: the sample does not build: {e}");
    }
    let keys = p.keys_read();
    p.finish().unwrap_or_else(|e| panic!("{at}: {e}"));
    keys
}

#[test]
fn every_type_reads_exactly_the_keys_its_table_documents() {
    let reg = stiction::components::registry();
    let mut samples = example_samples(&reg);
    samples.extend(extra_samples().into_iter().enumerate().map(|(i, v)| (format!("extra sample {i}"), v)));
    let mut read: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (at, v) in &samples {
        let name = v["type"].as_str().unwrap();
        let ty = reg.get(name).unwrap_or_else(|| panic!("{at}: unknown type {name}"));
        read.entry(ty.name).or_default().extend(keys_read(ty, at, v));
    }
    let mut missing = Vec::new();
    for ty in reg.types() {
        let Some(r) = read.get(ty.name) else {
            missing.push(format!("{}: no sample", ty.name));
            continue;
        };
        for d in ty.params {
            if !r.contains(d.name) && !KEY_COLLISIONS.contains(&(ty.name, d.name)) {
                missing.push(format!("{}: documented key '{}' is read by no sample", ty.name, d.name));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// A builder reading a key its table does not document is an error of the loader (naming
/// the type and the key), not a panic and not the user's fault.
#[test]
fn reading_an_undocumented_key_is_an_internal_error() {
    fn build(p: &mut Params) -> stiction::framework::Result<Built> {
        let _ = p.f64_or("k", 1.0)?;
        let _ = p.f64_or("undocumented", 1.0)?;
        Err(p.err("k", "never reached in the test"))
    }
    let mut reg = Registry::new();
    reg.register(ComponentType {
        name: "drifted",
        kind: Kind::Impedance,
        summary: "a type whose table and builder disagree",
        params: &[ParamDoc { name: "k", unit: "", default: Some("1"), doc: "documented" }],
        ports: &[],
        signals: &[],
        build,
    });
    let text = r#"{"solver": {"step": 1e-3, "stop_time": 1}, "components": {"x": {"type": "drifted"}}}"#;
    let e = System::from_str(text, Path::new("t.json"), Path::new("."), &reg).err().expect("an error").to_string();
    assert!(e.contains("internal error") && e.contains("'drifted'") && e.contains("'undocumented'"), "{e}");
}
