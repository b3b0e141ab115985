//! `stiction schema`: the JSON Schema (draft 2020-12) generated from the parameter tables.
//! Checked with the `jsonschema` crate: every example and every per-type sample validates,
//! wrong keys, unknown types, bad choices and out-of-range numbers fail, and a file naming
//! the schema with `"$schema"` still loads.

mod common;
use common::*;
use serde_json::{json, Value};

fn schema() -> Value {
    stiction::schema::system_schema(&stiction::registry())
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the schema compiles")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

#[test]
fn the_cli_prints_a_valid_draft_2020_12_schema() {
    let out = cli(&["schema"]);
    assert!(out.status.success());
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, schema());
    assert_eq!(printed["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(jsonschema::meta::is_valid(&printed), "not a valid draft 2020-12 schema");
    // Every registered type has a branch with its parameters, units in the descriptions.
    let text = printed.to_string();
    for t in stiction::registry().types() {
        assert!(text.contains(&format!("{{\"const\":\"{}\"}}", t.name)), "{} has no branch", t.name);
    }
    let mass = find_branch(&printed, "kikuuwe_a");
    assert_eq!(mass["properties"]["mass"]["exclusiveMinimum"], json!(0.0));
    assert!(mass["properties"]["mass"]["description"].as_str().unwrap().ends_with("[kg]"));
    assert_eq!(mass["properties"]["law"]["enum"], json!(["coulomb", "stribeck", "table"]));
    assert_eq!(mass["properties"]["law"]["default"], json!("coulomb"));
    assert!(mass["properties"]["init"]["properties"]["v"]["description"].as_str().unwrap().ends_with("[m/s]"));
}

fn find_branch<'a>(schema: &'a Value, ty: &str) -> &'a Value {
    schema["else"]["properties"]["components"]["additionalProperties"]["allOf"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["if"]["properties"]["type"]["const"] == ty)
        .map(|b| &b["then"])
        .unwrap_or_else(|| panic!("no branch for {ty}"))
}

#[test]
fn every_example_and_sample_validates() {
    let v = validator();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            let errs = errors(&v, &doc);
            assert!(errs.is_empty(), "{}: {errs:#?}", p.display());
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} examples");
    for text in stiction::components::samples() {
        let c: Value = serde_json::from_str(text).unwrap();
        let doc = json!({"solver": {"step": 1e-3, "stop_time": 1}, "components": {"c": c}});
        let errs = errors(&v, &doc);
        assert!(errs.is_empty(), "{text}: {errs:#?}");
    }
}

#[test]
fn wrong_keys_types_choices_and_ranges_fail() {
    let v = validator();
    let good: Value =
        serde_json::from_str(&std::fs::read_to_string(example("model_a_fig6_T1e-3.json")).unwrap()).unwrap();
    assert!(v.is_valid(&good));
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("top-level key", Box::new(|d| d["solvr"] = json!({}))),
        ("solver key", Box::new(|d| d["solver"]["stepp"] = json!(1e-3))),
        ("component key", Box::new(|d| d["components"]["block"]["mas"] = json!(1))),
        ("nested key", Box::new(|d| d["components"]["block"]["init"]["vv"] = json!(1))),
        ("unknown type", Box::new(|d| d["components"]["block"]["type"] = json!("kikuuwe_z"))),
        (
            "missing type",
            Box::new(|d| {
                d["components"]["block"].as_object_mut().unwrap().remove("type");
            }),
        ),
        ("law choice", Box::new(|d| d["components"]["block"]["law"] = json!("coloumb"))),
        ("mass > 0", Box::new(|d| d["components"]["block"]["mass"] = json!(0))),
        ("F ≥ 0", Box::new(|d| d["components"]["block"]["F"] = json!(-1))),
        ("method", Box::new(|d| d["solver"]["method"] = json!("rk45"))),
        ("connection key", Box::new(|d| d["connections"] = json!([{"from": "a", "to": "b", "att": [0, 0, 0]}]))),
    ];
    for (what, change) in cases {
        let mut d = good.clone();
        change(&mut d);
        assert!(!v.is_valid(&d), "{what}: the schema accepts {d}");
    }
}

#[test]
fn a_file_naming_its_schema_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(example("model_a_fig6_T1e-3.json")).unwrap()).unwrap();
    doc.as_object_mut().unwrap().insert("$schema".into(), json!("./system.schema.json"));
    let p = dir.path().join("a.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    let out = cli(&["check", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(validator().is_valid(&doc));
}
