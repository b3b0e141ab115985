//! `stiction schema`: a JSON Schema (draft 2020-12) of the system format, generated from the
//! registry's parameter tables — the same [`ParamDoc`] tables the loader checks every key
//! against — so editors complete and check system files and the schema cannot drift from
//! the parser. Every component type is one `if type == T then …` branch listing its keys
//! (nested objects and arrays of objects from the dotted `a.b` / `a[].b` names) with no
//! others allowed; descriptions carry the unit, defaults are given where the table's
//! default is a JSON value, choices as `enum`, and `> 0` / `≥ 0` as bounds.

use serde_json::{json, Map, Value};
use stiction_framework::system::{ParamDoc, Registry};

/// The `$id` the schema declares.
pub const SCHEMA_ID: &str = "https://stiction.invalid/system.schema.json";

/// One key of a component object: its own table row, and its keys if it is an object (or
/// an array of objects).
#[derive(Default)]
struct Node {
    doc: Option<ParamDoc>,
    array: bool,
    children: Vec<(String, Node)>,
}

impl Node {
    fn child(&mut self, key: &str) -> &mut Node {
        let i = match self.children.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.children.push((key.to_string(), Node::default()));
                self.children.len() - 1
            }
        };
        &mut self.children[i].1
    }
}

/// The key tree of a table: `links[].mass` is key `links` (array of objects) → `mass`.
fn tree(params: &[ParamDoc]) -> Node {
    let mut root = Node::default();
    for p in params {
        let mut node = &mut root;
        let segs: Vec<&str> = p.name.split('.').collect();
        for seg in &segs {
            let (key, array) = match seg.strip_suffix("[]") {
                Some(k) => (k, true),
                None => (*seg, false),
            };
            node = node.child(key);
            node.array |= array;
        }
        node.doc = Some(*p);
    }
    root
}

/// The quoted words of a doc line (`"coulomb" (F), "stribeck" …` → coulomb, stribeck).
fn quoted(doc: &str) -> Vec<String> {
    doc.split('"').skip(1).step_by(2).filter(|w| !w.is_empty() && !w.contains(' ')).map(String::from).collect()
}

/// A bound written as `> 0` or `≥ 0` ending a clause of the doc line.
fn bound(doc: &str) -> Option<(&'static str, f64)> {
    for (pat, key) in [("≥ 0", "minimum"), ("> 0", "exclusiveMinimum")] {
        for (i, _) in doc.match_indices(pat) {
            let after = doc[i + pat.len()..].chars().next();
            if matches!(after, None | Some(',' | ';' | ')')) {
                return Some((key, 0.0));
            }
        }
    }
    None
}

fn leaf(p: &ParamDoc) -> Map<String, Value> {
    let mut m = Map::new();
    let mut desc = p.doc.to_string();
    if !p.unit.is_empty() {
        desc.push_str(&format!(" [{}]", p.unit));
    }
    let default = p.default.and_then(|d| serde_json::from_str::<Value>(d).ok());
    match (p.default, &default) {
        (Some(_), Some(v)) => {
            m.insert("default".into(), v.clone());
        }
        (Some(text), None) => desc.push_str(&format!(" (default: {text})")),
        (None, _) => {}
    }
    if let Some(Value::String(_)) = &default {
        let choices = quoted(p.doc);
        if !choices.is_empty() {
            m.insert("enum".into(), json!(choices));
        }
    }
    if let Some((k, x)) = bound(p.doc) {
        m.insert(k.into(), json!(x));
    }
    if p.takes_time_function() {
        let f = json!({"$ref": "#/$defs/time_function"});
        m.insert("anyOf".into(), json!([f, {"type": "array", "items": f}]));
    }
    m.insert("description".into(), Value::String(desc));
    m
}

fn node_schema(node: &Node) -> Value {
    let mut m = node.doc.as_ref().map(leaf).unwrap_or_default();
    if node.children.is_empty() {
        return Value::Object(m);
    }
    let mut props = Map::new();
    for (k, c) in &node.children {
        props.insert(k.clone(), node_schema(c));
    }
    let object = json!({"type": "object", "properties": props, "additionalProperties": false});
    m.remove("default");
    m.remove("enum");
    if node.array {
        m.insert("type".into(), json!("array"));
        m.insert("items".into(), object);
    } else if let Value::Object(o) = object {
        m.extend(o);
    }
    Value::Object(m)
}

/// The schema of a component object of one type (`type` plus the table's keys, no others).
fn component_schema(name: &str, summary: &str, params: &[ParamDoc]) -> Value {
    let root = tree(params);
    let mut props = Map::new();
    props.insert("type".into(), json!({"const": name}));
    for (k, c) in &root.children {
        props.insert(k.clone(), node_schema(c));
    }
    json!({"description": summary, "properties": props, "additionalProperties": false})
}

/// Offsets of a connection end: three finite numbers.
fn vec3(desc: &str) -> Value {
    json!({"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3, "description": desc})
}

fn signals() -> Value {
    json!({
        "description": "output signals: a list of 'component.signal[i]', or {\"label\": \"component.signal[i]\"}",
        "oneOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "object", "additionalProperties": {"type": "string"}}
        ]
    })
}

/// A time function (framework/src/signal.rs): a number, an expression of t and signals,
/// a piecewise definition, a table or a signal.
fn time_function() -> Value {
    json!({
        "description": "a time function: a number, an expression of t and of signals ('-100*arm.q[1] - 2*arm.v[1]'), {\"piecewise\": [...]}, {\"table\": ...} or {\"signal\": \"name\"} (a system input or 'component.signal[i]')",
        "anyOf": [
            {"type": "number"},
            {"type": "string"},
            {"type": "object", "required": ["signal"], "additionalProperties": false, "properties": {"signal": {"type": "string"}}},
            {"type": "object", "required": ["piecewise"], "additionalProperties": false, "properties": {"piecewise": {"type": "array"}}},
            {"type": "object", "required": ["table"], "additionalProperties": false,
             "properties": {"table": {}, "column": {"type": "string"}, "time_column": {"type": "string"}}}
        ]
    })
}

/// A network system (top-level `components`).
fn network_schema(registry: &Registry) -> Value {
    let types: Vec<&str> = registry.types().map(|t| t.name).collect();
    let branches: Vec<Value> = registry
        .types()
        .map(|t| {
            json!({
                "if": {"properties": {"type": {"const": t.name}}, "required": ["type"]},
                "then": component_schema(t.name, t.summary, t.params)
            })
        })
        .collect();
    json!({
        "type": "object",
        "required": ["solver", "components"],
        "additionalProperties": false,
        "properties": {
            "$schema": {"type": "string"},
            "name": {"type": "string", "description": "system name (default: the file name)"},
            "description": {"type": "string"},
            "solver": {
                "type": "object",
                "required": ["step", "stop_time"],
                "additionalProperties": false,
                "properties": {
                    "method": {"enum": ["rk4", "euler"], "default": "rk4", "description": "modular RK4 (13)/(22) or Euler"},
                    "step": {"type": "number", "exclusiveMinimum": 0, "description": "step T [s]"},
                    "stop_time": {"type": "number", "exclusiveMinimum": 0, "description": "stop time [s]"},
                    "threads": {"type": "integer", "minimum": 1, "description": "worker threads (default: all cores)"},
                    "events": {"enum": ["all", "contacts", "none"], "default": "all", "description": "the switches an RK4 step locates within itself and splits at: contacts and friction stick-slip, contacts only, or none"},
                    "hold": {"enum": ["auto", "explicit"], "default": "auto", "description": "stiff friction and contact elements held implicitly with the bodies they act on where RK4's explicit stages would not keep them stable (auto), or never (explicit: check warns where the step is too large)"},
                    "blocks": {"enum": ["jacobi", "gauss-seidel"], "default": "jacobi", "description": "how signal blocks step at a communication point"},
                    "order": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "description": "signal blocks by priority: ties of the Gauss-Seidel order and the order inside algebraic loops (default: file order)"},
                    "loop": {
                        "type": "object",
                        "additionalProperties": false,
                        "description": "fixed-point iteration with rollback of algebraic loops between signal blocks",
                        "properties": {
                            "tolerance": {"type": "number", "exclusiveMinimum": 0, "default": 1e-10, "description": "relative to max(1, |value|)"},
                            "max_iterations": {"type": "integer", "minimum": 1, "default": 100}
                        }
                    }
                }
            },
            "inputs": {
                "type": "object",
                "description": "the system's inputs: signals fed from outside (--input, Python, an exported FMU's inputs), read by time functions",
                "additionalProperties": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "unit": {"type": "string"},
                        "start": {"type": "number", "default": 0, "description": "value until set"},
                        "description": {"type": "string"}
                    }
                }
            },
            "parameters": {
                "type": "object",
                "description": "parameters of the FMU `stiction fmu export` writes: each gives the value at a --set path (its start value is the file's value there); not read by a run",
                "additionalProperties": {
                    "type": "object",
                    "required": ["set"],
                    "additionalProperties": false,
                    "properties": {
                        "set": {"type": "string", "description": "a --set path, e.g. brake.F"},
                        "unit": {"type": "string"},
                        "description": {"type": "string"}
                    }
                }
            },
            "output": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "interval": {"type": "number", "exclusiveMinimum": 0, "description": "sampling interval [s] (default: every step)"},
                    "signals": signals()
                }
            },
            "components": {
                "type": "object",
                "minProperties": 1,
                "description": "the components by name",
                "additionalProperties": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"enum": types, "description": "component type (`stiction components`)"}},
                    "allOf": branches
                }
            },
            "connections": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["from", "to"],
                    "additionalProperties": false,
                    "properties": {
                        "from": {"type": "string", "description": "impedance port 'component.port', or the signal of a signal connection"},
                        "to": {"type": "string", "description": "admittance port 'component.port', or 'ground', or a signal block's input 'block.input'"},
                        "at": vec3("offset in the body frame of a frame port [m]"),
                        "at_world": vec3("offset along world axes from a frame port's reference point [m]"),
                        "gain": {"type": "number", "description": "signal connections only: the input is set to gain × the signal (default 1)"}
                    }
                }
            }
        }
    })
}

/// An FMU-only system (top-level `fmus`, stepped by the co-simulation master).
fn fmu_only_schema() -> Value {
    json!({
        "type": "object",
        "required": ["master", "fmus"],
        "additionalProperties": false,
        "properties": {
            "$schema": {"type": "string"},
            "name": {"type": "string"},
            "description": {"type": "string"},
            "master": {
                "type": "object",
                "required": ["step", "stop_time"],
                "additionalProperties": false,
                "properties": {
                    "algorithm": {"enum": ["jacobi", "gauss-seidel"], "default": "jacobi"},
                    "step": {"type": "number", "exclusiveMinimum": 0, "description": "communication step h [s]"},
                    "stop_time": {"type": "number", "exclusiveMinimum": 0, "description": "stop time [s]"},
                    "threads": {"type": "integer", "minimum": 1},
                    "order": {"type": "array", "items": {"type": "string"}, "description": "Gauss-Seidel order of the FMUs"},
                    "loop": {
                        "type": "object",
                        "additionalProperties": false,
                        "properties": {
                            "tolerance": {"type": "number", "exclusiveMinimum": 0, "default": 1e-10},
                            "max_iterations": {"type": "integer", "minimum": 1, "default": 100}
                        }
                    }
                }
            },
            "fmus": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": {
                    "type": "object",
                    "required": ["path"],
                    "additionalProperties": false,
                    "properties": {
                        "path": {"type": "string", "description": "the .fmu file, relative to this JSON file"},
                        "parameters": {"type": "object", "description": "start values by FMU variable name"},
                        "preload": {}
                    }
                }
            },
            "connections": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["from", "to"],
                    "additionalProperties": false,
                    "properties": {
                        "from": {"type": "string", "description": "output 'fmu.variable'"},
                        "to": {"type": "string", "description": "input 'fmu.variable'"},
                        "gain": {"type": "number"}
                    }
                }
            },
            "output": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"interval": {"type": "number", "exclusiveMinimum": 0}, "signals": signals()}
            }
        }
    })
}

/// The JSON Schema of system files for the types of `registry`.
pub fn system_schema(registry: &Registry) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "stiction system",
        "description": "A stiction system file: a network of admittances and impedances (`components`), or FMUs under the co-simulation master (`fmus`).",
        "$defs": {"time_function": time_function()},
        "if": {"type": "object", "required": ["fmus"]},
        "then": fmu_only_schema(),
        "else": network_schema(registry)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_give_choices_and_bounds() {
        assert_eq!(quoted("\"coulomb\" (F), \"stribeck\" (Fc) or \"table\""), ["coulomb", "stribeck", "table"]);
        assert_eq!(bound("mass, > 0"), Some(("exclusiveMinimum", 0.0)));
        assert_eq!(bound("static level, ≥ 0 (N)"), None);
        assert_eq!(bound("kinetic friction level, ≥ 0"), Some(("minimum", 0.0)));
        assert_eq!(bound("≥ Fc"), None);
    }
}
