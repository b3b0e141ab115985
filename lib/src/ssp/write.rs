//! SSP out (`stiction ssp export SYSTEM -o X.ssp`): a system as an SSP 1.0 package that
//! OMSimulator (and any SSP reader) opens and runs.
//!
//! - An FMU-only system (`"fmus"`, or an .ssp read back): each FMU is a component of its own
//!   (`resources/NAME.fmu`), its start values an `.ssv` (`resources/NAME.ssv`), each
//!   connection an `ssd:Connection` (a gain as `ssc:LinearTransformation`); the result
//!   columns go into stiction's annotation (connections run between components only, which
//!   libcosim requires).
//! - A network (`"components"`): the system FMU of `stiction fmu export` of the network
//!   without its Co-Simulation signal blocks, its inputs and outputs as the system's
//!   connectors, the system's `"parameters"` as an `.ssv`; each such block a component of
//!   its own, joined to the system FMU by connections (what a block reads becomes an output
//!   of the system FMU, what the network reads of a block an input of it). The master then
//!   exchanges at every solver step T as the engine did, but as a Jacobi master: the network
//!   sees a block's output of the previous communication point, where the engine gave it the
//!   one of the step's end (a lag of one step T).
//!
//! The communication step goes into OMSimulator's annotation (`oms:FixedStepMaster`) and into
//! stiction's own (`org.stiction`, with the master's algorithm and order, so that reading the
//! package back schedules the FMUs as the system file did); the stop time into
//! `ssd:DefaultExperiment`. Connector units are written where both ends of every connection
//! of the connector agree (a connection between different units, such as the gear's rad/s to
//! the friction element's m/s, would be a unit error for OMSimulator), with `ssd:Units`.

use crate::pipeline::{Dialect, Document};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use stiction_fmi_schema::write::{escape, number, Entry};
use stiction_fmi_schema::{Archive, Causality, VarType};

/// A connector of a component.
struct Connector {
    name: String,
    kind: &'static str,
    /// `Real`, `Integer`, `Boolean` or `String`.
    ty: &'static str,
    unit: Option<String>,
    description: Option<String>,
}

/// A component of the package.
struct Component {
    name: String,
    connectors: Vec<Connector>,
    /// Start values (name, value) for its .ssv.
    parameters: Vec<(String, Value)>,
}

/// An end of a connection: (component or None for the system, connector).
type End = (Option<String>, String);

/// What the SSD says.
struct Structure {
    name: String,
    components: Vec<Component>,
    /// System connectors (name, kind, type, unit).
    connectors: Vec<Connector>,
    /// (from, to, gain).
    connections: Vec<(End, End, f64)>,
    step: f64,
    stop: f64,
    /// The result rows' interval, where it differs from the step.
    interval: Option<f64>,
    /// The start values of the system's inputs (bound to its input connectors).
    input_starts: Vec<(String, f64)>,
    /// Result columns (label, `component.variable`) of an FMU-only system, in stiction's
    /// annotation.
    columns: Vec<(String, String)>,
    /// stiction's master: algorithm and order.
    algorithm: String,
    order: Vec<String>,
}

/// Write the system file `system` (JSON, FMU-only or .ssp) as the SSP package `out`; a
/// network's system FMU is of FMI version `fmi` (2 or 3), its binary from `library`.
/// Returns a line that says what was written.
pub fn export(
    system: &Path,
    fmi: u32,
    sets: &[String],
    library: impl FnOnce() -> Result<PathBuf, String>,
    out: &Path,
) -> Result<String, String> {
    stiction_fmi_schema::write::replaceable(out)?;
    let shown = system.display().to_string();
    let mut doc = crate::pipeline::Source::read(system)
        .and_then(|s| s.document(&Default::default()))
        .map_err(|e| e.to_string())?;
    doc.edit_sets(sets).map_err(|e| e.to_string())?;
    let mut files: Vec<Entry> = Vec::new();
    let structure = match doc.dialect {
        Dialect::FmuOnly | Dialect::Ssp => fmu_only(&doc, &shown, &mut files)?,
        Dialect::Network | Dialect::Fmu => network(&doc, fmi, sets, library, &shown, &mut files)?,
    };
    let n = structure.components.len();
    for c in &structure.components {
        if !c.parameters.is_empty() {
            files.push(Entry {
                name: format!("resources/{}.ssv", c.name),
                data: ssv(&c.name, &c.parameters, &c.connectors)?.into_bytes(),
                executable: false,
            });
        }
    }
    let mut entries =
        vec![Entry { name: "SystemStructure.ssd".into(), data: ssd(&structure).into_bytes(), executable: false }];
    entries.extend(files);
    stiction_fmi_schema::write::write_fmu(out, &entries)?;
    Ok(format!("wrote {} (SSP 1.0: {n} component(s), {} connection(s))", out.display(), structure.connections.len()))
}

/// The connectors of the FMU at `path` (scalar variables of the four SSP types that are
/// parameters, inputs or outputs).
fn fmu_connectors(path: &Path) -> Result<Vec<Connector>, String> {
    let shown = path.display().to_string();
    let a = Archive::describe(path, &shown).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for v in &a.description.variables {
        let kind = match v.causality {
            Causality::Parameter => "parameter",
            Causality::CalculatedParameter => "calculatedParameter",
            Causality::Input => "input",
            Causality::Output => "output",
            _ => continue,
        };
        if !v.dimensions.is_empty() {
            continue;
        }
        let ty = match v.ty {
            VarType::Float64 | VarType::Float32 => "Real",
            VarType::Boolean => "Boolean",
            VarType::Other if v.type_name == "String" => "String",
            VarType::Other => continue,
            _ => "Integer",
        };
        out.push(Connector {
            name: v.name.clone(),
            kind,
            ty,
            unit: v.unit.clone().filter(|u| !u.is_empty()),
            description: v.description.clone(),
        });
    }
    Ok(out)
}

/// An FMU-only system: its FMUs as components.
fn fmu_only(doc: &Document, shown: &str, files: &mut Vec<Entry>) -> Result<Structure, String> {
    let v = doc.fmus_value().ok_or_else(|| format!("{shown}: not an FMU-only system"))?;
    let master = &v["master"];
    let mut components = Vec::new();
    for (name, spec) in v["fmus"].as_object().into_iter().flatten() {
        let rel = spec["path"].as_str().ok_or_else(|| format!("{shown}: fmus.{name}.path: expected a path"))?;
        let path = doc.base_dir.join(rel);
        let data = std::fs::read(&path).map_err(|e| format!("{shown}: fmus.{name}.path: {}: {e}", path.display()))?;
        files.push(Entry { name: format!("resources/{name}.fmu"), data, executable: false });
        let parameters = spec["parameters"]
            .as_object()
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        components.push(Component { name: name.clone(), connectors: fmu_connectors(&path)?, parameters });
    }
    let mut connections = Vec::new();
    for c in v["connections"].as_array().into_iter().flatten() {
        let end = |k: &str| -> Result<End, String> {
            let s = c[k].as_str().unwrap_or_default();
            let (e, var) =
                s.split_once('.').ok_or_else(|| format!("{shown}: connection {k} '{s}': expected FMU.VARIABLE"))?;
            Ok((Some(e.to_string()), var.to_string()))
        };
        connections.push((end("from")?, end("to")?, c["gain"].as_f64().unwrap_or(1.0)));
    }
    // The result columns go into stiction's annotation, not the SSD's connectors: an FMU-only
    // system has no interface of its own, and readers such as libcosim take connections
    // between components only.
    let columns: Vec<(String, String)> = v["output"]["signals"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(label, signal)| Some((label.clone(), signal.as_str()?.to_string())))
        .collect();
    let connectors = Vec::new();
    let order =
        master["order"].as_array().into_iter().flatten().filter_map(|o| o.as_str().map(str::to_string)).collect();
    Ok(Structure {
        name: v["name"].as_str().map(str::to_string).unwrap_or_else(|| stem(doc)),
        components,
        connectors,
        connections,
        step: master["step"].as_f64().ok_or_else(|| format!("{shown}: master.step: missing"))?,
        stop: master["stop_time"].as_f64().ok_or_else(|| format!("{shown}: master.stop_time: missing"))?,
        interval: v["output"]["interval"].as_f64(),
        input_starts: Vec::new(),
        columns,
        algorithm: master["algorithm"].as_str().unwrap_or("jacobi").to_string(),
        order,
    })
}

fn stem(doc: &Document) -> String {
    doc.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "system".into())
}

/// A network: its system FMU, and each Co-Simulation signal block as a component of its own
/// ([`split_blocks`]).
fn network(
    doc: &Document,
    fmi: u32,
    sets: &[String],
    library: impl FnOnce() -> Result<PathBuf, String>,
    shown: &str,
    files: &mut Vec<Entry>,
) -> Result<Structure, String> {
    if doc.dialect == Dialect::Fmu {
        return Err(format!("{shown}: an .fmu is exported as an SSP by naming it in an FMU-only system (\"fmus\")"));
    }
    if !sets.is_empty() {
        return Err(format!("{shown}: --set on a network's SSP export: declare the values as \"parameters\" instead (they go into the .ssv)"));
    }
    let value = doc.network_value().map_err(|e| e.to_string())?;
    let split = split_blocks(&value, &doc.base_dir)?;
    let (doc, blocks, block_links, block_columns) = match split {
        Some(Split { rest, blocks, links, columns }) => {
            let text = serde_json::to_string(&rest).map_err(|e| e.to_string())?;
            let d = Document::from_text(&doc.file, &doc.base_dir, text).map_err(|e| e.to_string())?;
            (d, blocks, links, columns)
        }
        None => (doc.clone(), Vec::new(), Vec::new(), Vec::new()),
    };
    let loaded = doc.system().map_err(|e| e.to_string())?.system;
    let (step, stop) = (loaded.step, loaded.stop_time);
    let input_starts: Vec<(String, f64)> = loaded.inputs.iter().map(|(n, i)| (n.clone(), i.start)).collect();
    // With blocks the master exchanges their values at every solver step, as the engine did.
    let interval = if blocks.is_empty() { (loaded.interval / step).round().max(1.0) * step } else { step };
    let tmp = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let name = crate::fmu_system::identifier(&loaded.name);
    let fmu = tmp.path().join(format!("{name}.fmu"));
    let version = if fmi == 3 { stiction_fmi_schema::FmiVersion::V3 } else { stiction_fmi_schema::FmiVersion::V2 };
    crate::fmu_system::export_document(&doc, version, &[], library, &fmu)?;
    let connectors = fmu_connectors(&fmu)?;
    let data = std::fs::read(&fmu).map_err(|e| format!("{}: {e}", fmu.display()))?;
    files.push(Entry { name: format!("resources/{name}.fmu"), data, executable: false });
    // The system's parameters at their values in the file.
    let value = doc.network_value().map_err(|e| e.to_string())?;
    let mut parameters = Vec::new();
    for (n, p) in &loaded.parameters {
        let x = crate::fmu_system::value_at(&value, &p.set, &format!("{shown}: parameters.{n}.set"))?;
        parameters.push((n.clone(), Value::from(x)));
    }
    // The system's own inputs and result columns are the package's connectors; what only
    // joins the system FMU to a block is not.
    let internal: Vec<&str> = block_links
        .iter()
        .flat_map(|(a, b, _)| [a, b])
        .filter(|e| e.0.as_deref() == Some(SYSTEM_FMU))
        .map(|e| e.1.as_str())
        .collect();
    let input_starts: Vec<(String, f64)> =
        input_starts.into_iter().filter(|(n, _)| !internal.contains(&n.as_str())).collect();
    let mut outer = Vec::new();
    let mut connections = Vec::new();
    for c in connectors.iter().filter(|c| c.kind == "input" || c.kind == "output") {
        if internal.contains(&c.name.as_str()) {
            continue;
        }
        outer.push(Connector {
            name: c.name.clone(),
            kind: c.kind,
            ty: c.ty,
            unit: c.unit.clone(),
            description: c.description.clone(),
        });
        let inner = (Some(name.clone()), c.name.clone());
        let edge = (None, c.name.clone());
        if c.kind == "input" {
            connections.push((edge, inner, 1.0));
        } else {
            connections.push((inner, edge, 1.0));
        }
    }
    let has_blocks = !blocks.is_empty();
    let mut components = vec![Component { name: name.clone(), connectors, parameters }];
    for b in blocks {
        let data = std::fs::read(&b.path)
            .map_err(|e| format!("{shown}: components.{}.path: {}: {e}", b.name, b.path.display()))?;
        files.push(Entry { name: format!("resources/{}.fmu", b.name), data, executable: false });
        components.push(Component { name: b.name, connectors: fmu_connectors(&b.path)?, parameters: b.parameters });
    }
    for (label, b, out) in block_columns {
        let Some(src) =
            components.iter().find(|c| c.name == b).and_then(|c| c.connectors.iter().find(|k| k.name == out))
        else {
            return Err(format!("{shown}: output.signals.{label}: the signal block {b} has no output {out}"));
        };
        outer.push(Connector {
            name: label.clone(),
            kind: "output",
            ty: src.ty,
            unit: src.unit.clone(),
            description: None,
        });
        connections.push(((Some(b), out), (None, label), 1.0));
    }
    let rename = |e: End| if e.0.as_deref() == Some(SYSTEM_FMU) { (Some(name.clone()), e.1) } else { e };
    for (a, b, g) in block_links {
        connections.push((rename(a), rename(b), g));
    }
    Ok(Structure {
        name: loaded.name.clone(),
        components,
        connectors: outer,
        connections,
        step: interval,
        stop,
        interval: has_blocks.then(|| (loaded.interval / step).round().max(1.0) * step),
        input_starts,
        columns: Vec::new(),
        algorithm: "jacobi".into(),
        order: Vec::new(),
    })
}

/// The component name of a network's system FMU in [`split_blocks`]'s connections, before
/// its identifier is known.
const SYSTEM_FMU: &str = "";

/// A network with its Co-Simulation signal blocks taken out ([`split_blocks`]).
struct Split {
    rest: Value,
    blocks: Vec<Taken>,
    /// Connections between the blocks and the rest ([`SYSTEM_FMU`]) or the system's inputs.
    links: Vec<(End, End, f64)>,
    /// Result columns that read a block's output: (label, block, output).
    columns: Vec<(String, String, String)>,
}

/// A Co-Simulation signal block taken out of a network.
struct Taken {
    name: String,
    path: PathBuf,
    parameters: Vec<(String, Value)>,
}

/// The network `v` with its Co-Simulation signal blocks (`"type": "fmu", "role": "signal"`)
/// taken out, or None when it has none: a signal a block reads becomes a result column of
/// the rest (`gear.v` → `gear_v`; a system input stays the system's input), a block's output
/// the rest reads becomes an input of it (`pi.u` → `pi_u`). Returns the rest, the blocks and
/// the connections that join them ([`SYSTEM_FMU`] for the rest's FMU). Model Exchange blocks
/// stay inside (they take part in every stage).
fn split_blocks(v: &Value, base: &Path) -> Result<Option<Split>, String> {
    let Some(comps) = v["components"].as_object() else { return Ok(None) };
    let is_block = |c: &Value| {
        c["type"] == "fmu" && c["role"] == "signal" && c.get("interface").and_then(Value::as_str) != Some("me")
    };
    let names: Vec<String> = comps.iter().filter(|(_, c)| is_block(c)).map(|(n, _)| n.clone()).collect();
    if names.is_empty() {
        return Ok(None);
    }
    let block_of = |s: &str| {
        s.split_once('.').filter(|(b, _)| names.iter().any(|n| n == b)).map(|(b, x)| (b.to_string(), x.to_string()))
    };
    let inputs: Vec<String> = v["inputs"].as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    let mut rest = v.clone();
    let mut blocks = Vec::new();
    for n in &names {
        let c = &comps[n];
        let rel = c["path"].as_str().ok_or_else(|| format!("components.{n}.path: expected the .fmu file"))?;
        let parameters = c["parameters"]
            .as_object()
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        blocks.push(Taken { name: n.clone(), path: base.join(rel), parameters });
        if let Some(o) = rest["components"].as_object_mut() {
            o.remove(n);
        }
    }
    let mut used: std::collections::HashSet<String> = comps.keys().cloned().chain(inputs.iter().cloned()).collect();
    if let Some(o) = v["output"]["signals"].as_object() {
        used.extend(o.keys().cloned());
    }
    let mut fresh = |s: &str| {
        let base: String = s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let mut name = base.clone();
        let mut k = 1;
        while !used.insert(name.clone()) {
            k += 1;
            name = format!("{base}_{k}");
        }
        name
    };
    let mut links: Vec<(End, End, f64)> = Vec::new();
    let mut kept = Vec::new();
    let mut columns: Vec<(String, String)> = Vec::new();
    for c in v["connections"].as_array().into_iter().flatten() {
        let to = c["to"].as_str().unwrap_or_default();
        let Some((blk, input)) = block_of(to) else {
            kept.push(c.clone());
            continue;
        };
        let from = c["from"].as_str().unwrap_or_default();
        let gain = c["gain"].as_f64().unwrap_or(1.0);
        let source = if let Some((b2, out)) = block_of(from) {
            (Some(b2), out)
        } else if inputs.iter().any(|i| i == from) {
            (None, from.to_string())
        } else {
            let name = fresh(from);
            columns.push((name.clone(), from.to_string()));
            (Some(SYSTEM_FMU.to_string()), name)
        };
        links.push((source, (Some(blk), input), gain));
    }
    rest["connections"] = Value::Array(kept);
    // What the rest reads of the blocks becomes its inputs.
    let mut reads: Vec<((String, String), String)> = Vec::new();
    fn walk(v: &mut Value, f: &mut dyn FnMut(&str) -> Option<String>) {
        match v {
            Value::String(s) => {
                if let Some(r) = f(s) {
                    *s = r;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, f)),
            Value::Object(o) => o.values_mut().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    // Result columns of a block's output are read from the block itself.
    let mut block_columns: Vec<(String, String, String)> = Vec::new();
    if let Some(o) = rest["output"]["signals"].as_object_mut() {
        o.retain(|label, signal| match signal.as_str().and_then(block_of) {
            Some((b, out)) => {
                block_columns.push((label.clone(), b, out));
                false
            }
            None => true,
        });
    }
    walk(&mut rest, &mut |s: &str| {
        let key = block_of(s)?;
        if let Some((_, n)) = reads.iter().find(|(k, _)| *k == key) {
            return Some(n.clone());
        }
        let n = fresh(s);
        reads.push((key, n.clone()));
        Some(n)
    });
    for ((b, out), n) in &reads {
        if !rest["inputs"].is_object() {
            rest["inputs"] = json!({});
        }
        rest["inputs"][n] =
            json!({"start": 0.0, "description": format!("{b}.{out}, the output of the signal block {b}")});
        links.push(((Some(b.clone()), out.clone()), (Some(SYSTEM_FMU.to_string()), n.clone()), 1.0));
    }
    for (name, signal) in columns {
        if !rest["output"].is_object() {
            rest["output"] = json!({});
        }
        if !rest["output"]["signals"].is_object() {
            rest["output"]["signals"] = json!({});
        }
        rest["output"]["signals"][name] = json!(signal);
    }
    if let Some(solver) = rest["solver"].as_object_mut() {
        for k in ["blocks", "order", "loop"] {
            solver.remove(k);
        }
    }
    Ok(Some(Split { rest, blocks, links, columns: block_columns }))
}

/// The .ssv of a component's start values.
fn ssv(name: &str, parameters: &[(String, Value)], connectors: &[Connector]) -> Result<String, String> {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s += &format!(
        "<ssv:ParameterSet xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" version=\"1.0\" name=\"{}\">\n  <ssv:Parameters>\n",
        escape(name)
    );
    for (n, v) in parameters {
        // The FMU variable's type where the FMU declares it (40 for a Real is 40.0).
        let declared = connectors.iter().find(|c| c.name == *n).map(|c| c.ty);
        let value = match (v, declared) {
            (Value::Number(x), Some("Real")) => {
                format!("<ssv:Real value=\"{}\"/>", number(x.as_f64().unwrap_or_default()))
            }
            (Value::Number(x), Some("Integer")) if x.is_i64() => format!("<ssv:Integer value=\"{x}\"/>"),
            (Value::Number(x), Some("Boolean")) => format!("<ssv:Boolean value=\"{}\"/>", x.as_f64() != Some(0.0)),
            (Value::Bool(b), _) => format!("<ssv:Boolean value=\"{b}\"/>"),
            (Value::Number(x), _) if x.is_i64() => format!("<ssv:Integer value=\"{x}\"/>"),
            (Value::Number(x), _) => format!("<ssv:Real value=\"{}\"/>", number(x.as_f64().unwrap_or_default())),
            (Value::String(t), _) => format!("<ssv:String value=\"{}\"/>", escape(t)),
            (other, _) => {
                return Err(format!("{name}.{n}: the value {other} has no SSV form (numbers, booleans and strings do)"))
            }
        };
        s += &format!("    <ssv:Parameter name=\"{}\">{value}</ssv:Parameter>\n", escape(n));
    }
    s += "  </ssv:Parameters>\n</ssv:ParameterSet>\n";
    Ok(s)
}

/// The SystemStructure.ssd text.
fn ssd(st: &Structure) -> String {
    // A connector keeps its unit only where every connection agrees with it.
    let unit_of = |e: &End| -> Option<String> {
        match &e.0 {
            Some(c) => {
                st.components.iter().find(|k| &k.name == c)?.connectors.iter().find(|k| k.name == e.1)?.unit.clone()
            }
            None => st.connectors.iter().find(|k| k.name == e.1)?.unit.clone(),
        }
    };
    // Drop units until every connection joins equal units (or none): a dropped unit may
    // make a neighbour's differ, so repeat until nothing changes.
    let mut written: HashMap<End, Option<String>> = HashMap::new();
    for (a, b, _) in &st.connections {
        written.insert(a.clone(), unit_of(a));
        written.insert(b.clone(), unit_of(b));
    }
    let mut changed = true;
    while changed {
        changed = false;
        for (a, b, _) in &st.connections {
            if written[a] != written[b] {
                for e in [a, b] {
                    if written[e].is_some() {
                        written.insert(e.clone(), None);
                        changed = true;
                    }
                }
            }
        }
    }
    let mixed: HashMap<End, bool> = written.iter().map(|(e, u)| (e.clone(), u.is_none())).collect();
    let mut used: BTreeMap<String, [i32; 4]> = BTreeMap::new();
    let mut connector = |owner: Option<&str>, c: &Connector, indent: &str| -> String {
        let end = (owner.map(str::to_string), c.name.clone());
        let unit = c
            .unit
            .as_ref()
            .filter(|_| !mixed.get(&end).copied().unwrap_or(false))
            .and_then(|u| crate::fmu_system::fmi_unit(u));
        let attr = match &unit {
            Some((u, e)) => {
                used.insert(u.clone(), *e);
                format!(" unit=\"{}\"", escape(u))
            }
            None => String::new(),
        };
        let desc = c.description.as_ref().map(|d| format!(" description=\"{}\"", escape(d))).unwrap_or_default();
        format!(
            "{indent}<ssd:Connector name=\"{}\" kind=\"{}\"{desc}><ssc:{}{attr}/></ssd:Connector>\n",
            escape(&c.name),
            c.kind,
            c.ty
        )
    };
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s += "<ssd:SystemStructureDescription xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\" \
          xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\" \
          xmlns:oms=\"https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd\" ";
    s += &format!(
        "name=\"{}\" version=\"1.0\" generationTool=\"stiction {}\">\n",
        escape(&st.name),
        env!("CARGO_PKG_VERSION")
    );
    s += &format!("  <ssd:System name=\"{}\">\n", escape(&st.name));
    if !st.connectors.is_empty() {
        s += "    <ssd:Connectors>\n";
        for c in &st.connectors {
            s += &connector(None, c, "      ");
        }
        s += "    </ssd:Connectors>\n";
    }
    s += "    <ssd:Elements>\n";
    for c in &st.components {
        s += &format!(
            "      <ssd:Component name=\"{0}\" type=\"application/x-fmu-sharedlibrary\" source=\"resources/{0}.fmu\">\n        <ssd:Connectors>\n",
            escape(&c.name)
        );
        for k in &c.connectors {
            s += &connector(Some(&c.name), k, "          ");
        }
        s += "        </ssd:Connectors>\n";
        if !c.parameters.is_empty() {
            s += &format!(
                "        <ssd:ParameterBindings>\n          <ssd:ParameterBinding type=\"application/x-ssp-parameter-set\" source=\"resources/{}.ssv\"/>\n        </ssd:ParameterBindings>\n",
                escape(&c.name)
            );
        }
        s += "      </ssd:Component>\n";
    }
    s += "    </ssd:Elements>\n";
    if !st.connections.is_empty() {
        s += "    <ssd:Connections>\n";
        for ((fe, fc), (te, tc), gain) in &st.connections {
            let el =
                |k: &str, e: &Option<String>| e.as_ref().map(|e| format!(" {k}=\"{}\"", escape(e))).unwrap_or_default();
            let head = format!(
                "      <ssd:Connection{} startConnector=\"{}\"{} endConnector=\"{}\"",
                el("startElement", fe),
                escape(fc),
                el("endElement", te),
                escape(tc)
            );
            if *gain == 1.0 {
                s += &format!("{head}/>\n");
            } else {
                s += &format!("{head}>\n        <ssc:LinearTransformation factor=\"{}\" offset=\"0\"/>\n      </ssd:Connection>\n", number(*gain));
            }
        }
        s += "    </ssd:Connections>\n";
    }
    // The inputs' start values, bound to the system's input connectors (an SSP system run
    // alone gives its inputs these values; OMSimulator reads them so).
    if !st.input_starts.is_empty() {
        s += "    <ssd:ParameterBindings>\n      <ssd:ParameterBinding>\n        <ssd:ParameterValues>\n";
        s += "          <ssv:ParameterSet xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" version=\"1.0\" name=\"inputs\">\n            <ssv:Parameters>\n";
        for (n, x) in &st.input_starts {
            s += &format!(
                "              <ssv:Parameter name=\"{}\"><ssv:Real value=\"{}\"/></ssv:Parameter>\n",
                escape(n),
                number(*x)
            );
        }
        s += "            </ssv:Parameters>\n          </ssv:ParameterSet>\n        </ssd:ParameterValues>\n      </ssd:ParameterBinding>\n    </ssd:ParameterBindings>\n";
    }
    let mut order =
        if st.order.is_empty() { String::new() } else { format!(" order=\"{}\"", escape(&st.order.join(" "))) };
    if let Some(i) = st.interval {
        order += &format!(" interval=\"{}\"", number(i));
    }
    s += &format!(
        "    <ssd:Annotations>\n      <ssc:Annotation type=\"org.openmodelica\">\n        <oms:Annotations>\n          <oms:SimulationInformation>\n            <oms:FixedStepMaster description=\"oms-ma\" stepSize=\"{step}\" absoluteTolerance=\"0.0001\" relativeTolerance=\"0.0001\"/>\n          </oms:SimulationInformation>\n        </oms:Annotations>\n      </ssc:Annotation>\n      <ssc:Annotation type=\"org.stiction\">\n        <Master step=\"{step}\" algorithm=\"{}\"{order}>{columns}</Master>\n      </ssc:Annotation>\n    </ssd:Annotations>\n",
        escape(&st.algorithm),
        step = number(st.step),
        columns = st
            .columns
            .iter()
            .map(|(l, x)| format!("<Column label=\"{}\" signal=\"{}\"/>", escape(l), escape(x)))
            .collect::<String>()
    );
    s += "  </ssd:System>\n";
    if !used.is_empty() {
        s += "  <ssd:Units>\n";
        for (u, e) in &used {
            let mut base = String::new();
            for (k, x) in ["kg", "m", "s", "rad"].iter().zip(e) {
                if *x != 0 {
                    base += &format!(" {k}=\"{x}\"");
                }
            }
            s += &format!("    <ssc:Unit name=\"{}\"><ssc:BaseUnit{base}/></ssc:Unit>\n", escape(u));
        }
        s += "  </ssd:Units>\n";
    }
    s += &format!("  <ssd:DefaultExperiment startTime=\"0\" stopTime=\"{}\"/>\n", number(st.stop));
    s += "</ssd:SystemStructureDescription>\n";
    s
}
