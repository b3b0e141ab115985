//! SSP out (`stiction ssp export SYSTEM -o X.ssp`): a system as an SSP 1.0 package that
//! OMSimulator (and any SSP reader) opens and runs.
//!
//! - An FMU-only system (`"fmus"`, or an .ssp read back): each FMU is a component of its own
//!   (`resources/NAME.fmu`), its start values an `.ssv` (`resources/NAME.ssv`), each
//!   connection an `ssd:Connection` (a gain as `ssc:LinearTransformation`); the result
//!   columns are output connectors of the system.
//! - A network (`"components"`): one component, the system FMU of `stiction fmu export`
//!   (signal blocks inside it), its inputs and outputs as the system's connectors, the
//!   system's `"parameters"` as an `.ssv`.
//!
//! The communication step goes into OMSimulator's annotation (`oms:FixedStepMaster`) and into
//! stiction's own (`org.stiction`, with the master's algorithm and order, so that reading the
//! package back schedules the FMUs as the system file did); the stop time into
//! `ssd:DefaultExperiment`. Connector units are written where both ends of every connection
//! of the connector agree (a connection between different units, such as the gear's rad/s to
//! the friction element's m/s, would be a unit error for OMSimulator), with `ssd:Units`.

use crate::pipeline::{Dialect, Document};
use serde_json::Value;
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
        Dialect::Network | Dialect::Fmu => network(&doc, system, fmi, sets, library, &shown, &mut files)?,
    };
    let n = structure.components.len();
    for c in &structure.components {
        if !c.parameters.is_empty() {
            files.push(Entry {
                name: format!("resources/{}.ssv", c.name),
                data: ssv(&c.name, &c.parameters)?.into_bytes(),
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
    // The result columns as output connectors of the system.
    let mut connectors = Vec::new();
    for (label, signal) in v["output"]["signals"].as_object().into_iter().flatten() {
        let Some((e, var)) = signal.as_str().and_then(|s| s.split_once('.')) else { continue };
        let Some(src) =
            components.iter().find(|c| c.name == e).and_then(|c| c.connectors.iter().find(|k| k.name == var))
        else {
            continue;
        };
        if label.contains('.') {
            continue;
        }
        connectors.push(Connector {
            name: label.clone(),
            kind: "output",
            ty: src.ty,
            unit: src.unit.clone(),
            description: None,
        });
        connections.push(((Some(e.to_string()), var.to_string()), (None, label.clone()), 1.0));
    }
    let order =
        master["order"].as_array().into_iter().flatten().filter_map(|o| o.as_str().map(str::to_string)).collect();
    Ok(Structure {
        name: v["name"].as_str().map(str::to_string).unwrap_or_else(|| stem(doc)),
        components,
        connectors,
        connections,
        step: master["step"].as_f64().ok_or_else(|| format!("{shown}: master.step: missing"))?,
        stop: master["stop_time"].as_f64().ok_or_else(|| format!("{shown}: master.stop_time: missing"))?,
        algorithm: master["algorithm"].as_str().unwrap_or("jacobi").to_string(),
        order,
    })
}

fn stem(doc: &Document) -> String {
    doc.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "system".into())
}

/// A network: one component, its system FMU.
fn network(
    doc: &Document,
    system: &Path,
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
    let loaded = doc.system().map_err(|e| e.to_string())?.system;
    let (step, stop) = (loaded.step, loaded.stop_time);
    let interval = (loaded.interval / step).round().max(1.0) * step;
    let tmp = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let name = crate::fmu_system::identifier(&loaded.name);
    let fmu = tmp.path().join(format!("{name}.fmu"));
    crate::fmu_system::export_system(system, fmi, &[], library, &fmu)?;
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
    let mut outer = Vec::new();
    let mut connections = Vec::new();
    for c in connectors.iter().filter(|c| c.kind == "input" || c.kind == "output") {
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
    Ok(Structure {
        name: loaded.name.clone(),
        components: vec![Component { name, connectors, parameters }],
        connectors: outer,
        connections,
        step: interval,
        stop,
        algorithm: "jacobi".into(),
        order: Vec::new(),
    })
}

/// The .ssv of a component's start values.
fn ssv(name: &str, parameters: &[(String, Value)]) -> Result<String, String> {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s += &format!(
        "<ssv:ParameterSet xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" version=\"1.0\" name=\"{}\">\n  <ssv:Parameters>\n",
        escape(name)
    );
    for (n, v) in parameters {
        let value = match v {
            Value::Bool(b) => format!("<ssv:Boolean value=\"{b}\"/>"),
            Value::Number(x) if x.is_i64() => format!("<ssv:Integer value=\"{x}\"/>"),
            Value::Number(x) => format!("<ssv:Real value=\"{}\"/>", number(x.as_f64().unwrap_or_default())),
            Value::String(t) => format!("<ssv:String value=\"{}\"/>", escape(t)),
            other => {
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
    let order = if st.order.is_empty() { String::new() } else { format!(" order=\"{}\"", escape(&st.order.join(" "))) };
    s += &format!(
        "    <ssd:Annotations>\n      <ssc:Annotation type=\"org.openmodelica\">\n        <oms:Annotations>\n          <oms:SimulationInformation>\n            <oms:FixedStepMaster description=\"oms-ma\" stepSize=\"{step}\" absoluteTolerance=\"0.0001\" relativeTolerance=\"0.0001\"/>\n          </oms:SimulationInformation>\n        </oms:Annotations>\n      </ssc:Annotation>\n      <ssc:Annotation type=\"org.stiction\">\n        <Master step=\"{step}\" algorithm=\"{}\"{order}/>\n      </ssc:Annotation>\n    </ssd:Annotations>\n",
        escape(&st.algorithm),
        step = number(st.step)
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
