//! The parameter table of every component type is the list of keys its builder reads:
//! building each type from the components of examples/*.json and from the `SAMPLES` of its
//! file (law variants, gear geometries, initial states the examples lack), every key read
//! is documented, and every documented key is read by at least one sample. Nested keys are
//! documented by dotted names (`init.q`, `upper.FH`), keys of array items with `[]`
//! (`links[].mass`, `gears[].spur.contact`).

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use stiction::framework::system::{Built, ComponentType, Kind, Object, ParamDoc, Params, Registry, System};

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

/// Documented keys no valid sample can reach: `karnopp_mass` reads `force` as its scalar
/// applied force and, with a table law, as the table's forces (an array), so a table law
/// never builds there. (kikuuwe_a and kikuuwe_d have the same collision; with dims = the
/// number of table points it builds.)
const KEY_COLLISIONS: &[(&str, &str)] = &[("karnopp_mass", "speed")];

/// The keys `ty.build` reads from `v`; panics if it reads an undocumented key or fails.
fn keys_read(ty: &ComponentType, at: &str, v: &Value) -> Vec<String> {
    let map = Object::from_map(v.as_object().unwrap());
    let examples = common::example("");
    // Time functions may read signals (resolved only when a whole system compiles).
    let wires = stiction::framework::signal::Wires::default();
    let mut p = Params::for_type(ty, format!("components.{}", ty.name), &map, &examples).with_wires(&wires);
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
    for (i, text) in stiction::components::samples().into_iter().enumerate() {
        let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("sample {i}: {e}: {text}"));
        samples.push((format!("sample {i} {text}"), v));
    }
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
