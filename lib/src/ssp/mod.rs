//! SSP (System Structure and Parameterization 1.0 / 2.0), the system format of OpenModelica's
//! OMSimulator and OMEdit, libcosim, FMU Manipulation Toolbox and others: an `.ssp` archive
//! whose SystemStructure.ssd names FMU components, their connectors and the connections
//! between them.
//!
//! Reading ([`translate`]) maps an SSD onto an FMU-only system value (`"fmus"`,
//! `"connections"`, `"master"`, `"output"`: the dialect of fmus/master), which the loading
//! pipeline then reads as it reads such a file; so an SSP runs on the one engine as signal
//! blocks. What maps:
//! - `ssd:Component` of type `application/x-fmu-sharedlibrary` (or with no type and an
//!   `.fmu` source) → an FMU; nested `ssd:System`s are flattened, their components named
//!   `system_component`;
//! - `ssd:Connection` → a connection, through the connectors of nested systems;
//!   `ssc:LinearTransformation` (factor; offset 0) and a unit conversion between the
//!   connectors' units (`ssd:Units`, same base units; `suppressUnitConversion` honoured) →
//!   the connection's gain;
//! - `ssd:ParameterBinding` (an `.ssv` file in the archive or inline `ssd:ParameterValues`,
//!   with `prefix`) → the FMUs' start values;
//! - the top system's output connectors → the result columns (else every FMU output);
//! - `ssd:DefaultExperiment` stopTime → the stop time (startTime must be 0); the
//!   communication step from OMSimulator's annotation (`oms:FixedStepMaster stepSize`, or
//!   `oms:SimulationInformation stepSize`), else stiction's (`org.stiction`), else the
//!   smallest DefaultExperiment stepSize of the FMUs; the master is Jacobi (as OMSimulator's).
//!
//! What does not map is refused naming the element: parameter mappings, signal dictionaries,
//! a boolean or integer mapping transformation, a connection offset, units of different
//! dimensions without `suppressUnitConversion`, a start time other than 0. A value bound to a top-level input
//! connector (a system-level `ssd:ParameterBinding` of its name, as OMSimulator reads it) is
//! the start value of the FMU inputs it feeds; without one they keep their own.

mod write;
pub use write::export;

use roxmltree::{Document, Node};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;
use stiction_framework::Error;

/// What the SSD is read for: the FMU-only system value, and what [`translate`] needs to
/// name errors.
pub struct Ssp {
    /// The FMU-only system (fmus/master's dialect) with absolute FMU paths.
    pub value: Value,
}

/// The start of the namespaces of SSP 1.0 (`…/SSP1/…`, which SSP 2.0 files use too) and of
/// a later version's (`…/SSP2/…`), and the annotation types read here.
const SSP_NAMESPACE: &str = "http://ssp-standard.org/SSP";
const OMS_ANNOTATION: &str = "org.openmodelica";
const STICTION_ANNOTATION: &str = "org.stiction";

/// XML reading: no DTD (no entity expansion), at most 4 million nodes.
const PARSING: roxmltree::ParsingOptions = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: 1 << 22 };

/// The element's local name.
fn tag<'a>(n: &Node<'a, '_>) -> &'a str {
    n.tag_name().name()
}

/// The element children of `n` with local name `name`.
fn children<'a, 'i>(n: Node<'a, 'i>, name: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    n.children().filter(move |c| c.is_element() && tag(c) == name)
}

fn child<'a, 'i>(n: Node<'a, 'i>, name: &'static str) -> Option<Node<'a, 'i>> {
    children(n, name).next()
}

/// How errors name an element: `ssd:Connection (gear.v → contact.v)` and the like.
fn named(n: &Node) -> String {
    let prefix = n.tag_name().namespace().and_then(|ns| n.lookup_prefix(ns)).unwrap_or("");
    let t = if prefix.is_empty() { tag(n).to_string() } else { format!("{prefix}:{}", tag(n)) };
    match (n.attribute("name"), n.attribute("startConnector")) {
        (Some(name), _) => format!("{t} '{name}'"),
        (None, Some(sc)) => format!(
            "{t} {}{sc} -> {}{}",
            n.attribute("startElement").map(|e| format!("{e}.")).unwrap_or_default(),
            n.attribute("endElement").map(|e| format!("{e}.")).unwrap_or_default(),
            n.attribute("endConnector").unwrap_or("?")
        ),
        _ => t,
    }
}

fn refuse(file: &str, n: &Node, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("SystemStructure.ssd: {} (line {})", named(n), line_of(n)), why.to_string()).in_file(file)
}

fn line_of(n: &Node) -> u32 {
    n.document().text_pos_at(n.range().start).row
}

/// A number attribute.
fn number(file: &str, n: &Node, attr: &str) -> Result<Option<f64>, Error> {
    match n.attribute(attr) {
        None => Ok(None),
        Some(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| refuse(file, n, format!("{attr}=\"{s}\" is not a finite number"))),
    }
}

/// An FMU of the flattened system.
struct Fmu {
    /// Its name in the FMU-only system (nested systems' names joined by `_`).
    name: String,
    path: String,
    parameters: Map<String, Value>,
    /// Connector name → unit, as the SSD declares it.
    units: HashMap<String, String>,
}

/// One end of a connection inside system `sys` (an index into `systems`): a connector of
/// an element, or of the system itself (`element` None).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct End {
    sys: usize,
    element: Option<String>,
    connector: String,
}

/// A connection as read: its ends, its gain, the element that declared it.
struct Link<'a, 'i> {
    from: End,
    to: End,
    gain: f64,
    suppress_units: bool,
    node: Node<'a, 'i>,
}

/// A system of the SSD (the top one first): its sub-systems by name, its components by name
/// (index into the FMUs), its connectors' kinds and units.
struct Sys {
    subsystems: HashMap<String, usize>,
    components: HashMap<String, usize>,
    connectors: HashMap<String, (String, Option<String>)>,
}

/// Read the SSD text `ssd` of the package `file` (`dir`: where its relative references
/// point) into an FMU-only system value.
pub fn translate(ssd: &str, file: &str, dir: &Path) -> Result<Ssp, Error> {
    let doc = Document::parse_with_options(ssd, PARSING)
        .map_err(|e| Error::invalid("SystemStructure.ssd", format!("does not parse: {e}")).in_file(file))?;
    let root = doc.root_element();
    if tag(&root) != "SystemStructureDescription"
        || !root.tag_name().namespace().is_some_and(|ns| ns.starts_with(SSP_NAMESPACE))
    {
        return Err(refuse(file, &root, "expected ssd:SystemStructureDescription (SSP 1.0 or 2.0)"));
    }
    for n in root.children().filter(Node::is_element) {
        match tag(&n) {
            "System" | "DefaultExperiment" | "Units" | "Enumerations" | "Annotations" => {}
            "SignalDictionaries" => return Err(refuse(file, &n, "signal dictionaries are not supported")),
            _ => return Err(refuse(file, &n, "unknown element")),
        }
    }
    let top = child(root, "System").ok_or_else(|| refuse(file, &root, "no ssd:System"))?;
    let units = unit_table(file, root)?;
    let mut reader = Reader {
        file,
        dir,
        fmus: Vec::new(),
        systems: Vec::new(),
        links: Vec::new(),
        master: Master::default(),
        inputs: Vec::new(),
    };
    reader.system(top, String::new())?;
    let Reader { mut fmus, systems, links, master: annotated, inputs: top_inputs, .. } = reader;

    // DefaultExperiment.
    let experiment = child(root, "DefaultExperiment");
    if let Some(e) = experiment {
        if let Some(t0) = number(file, &e, "startTime")? {
            if t0 != 0.0 {
                return Err(refuse(file, &e, format!("startTime {t0}: only a start at t = 0 is supported")));
            }
        }
    }
    let stop = match experiment {
        Some(e) => number(file, &e, "stopTime")?,
        None => None,
    };

    // Resolve each connection to (FMU output) → (FMU input), through nested systems'
    // connectors: a connector of a system is fed by the connection that ends on it from
    // inside or outside, and feeds the connections that start from it.
    fn leaf<'e>(systems: &[Sys], e: &'e End) -> Option<(usize, &'e str)> {
        let el = e.element.as_ref()?;
        systems[e.sys].components.get(el).map(|&k| (k, e.connector.as_str()))
    }
    // The system connector an end names, as (system index, connector) from both sides: an
    // element that is a sub-system's name means that sub-system's own connector.
    let as_system_end = |e: &End| -> Option<End> {
        match &e.element {
            None => Some(End { sys: e.sys, element: None, connector: e.connector.clone() }),
            Some(el) => systems[e.sys].subsystems.get(el).map(|&s| End {
                sys: s,
                element: None,
                connector: e.connector.clone(),
            }),
        }
    };
    // Connections by where they start; a sub-system's connector is keyed by that system
    // (whether named from inside, with no element, or from outside, by the system's name).
    let mut feeds: HashMap<End, Vec<usize>> = HashMap::new();
    for (i, l) in links.iter().enumerate() {
        let key = as_system_end(&l.from).unwrap_or_else(|| l.from.clone());
        feeds.entry(key).or_default().push(i);
    }
    let mut connections = Vec::new();
    let mut outputs = Map::new();
    for l in &links {
        let Some((k, var)) = leaf(&systems, &l.from) else { continue };
        // Follow the connection through system connectors to the FMU inputs it reaches.
        let mut stack = vec![(l.to.clone(), l.gain, l.suppress_units, l.node)];
        let mut seen = 0usize;
        while let Some((to, gain, suppress, node)) = stack.pop() {
            seen += 1;
            if seen > 10_000 {
                return Err(refuse(file, &node, "the connections through system connectors form a cycle"));
            }
            if let Some((j, input)) = leaf(&systems, &to) {
                let gain = gain * unit_factor(file, &node, &fmus[k], var, &fmus[j], input, &units, suppress)?;
                let mut c =
                    json!({"from": format!("{}.{var}", fmus[k].name), "to": format!("{}.{input}", fmus[j].name)});
                if gain != 1.0 {
                    c["gain"] = json!(gain);
                }
                connections.push(c);
                continue;
            }
            let Some(through) = as_system_end(&to) else {
                return Err(refuse(
                    file,
                    &node,
                    format!("no element '{}' in this system", to.element.unwrap_or_default()),
                ));
            };
            if through.sys == 0 && through.element.is_none() && to.element.is_none() {
                // A connector of the top system: an output of the whole system.
                if gain != 1.0 {
                    return Err(refuse(
                        file,
                        &node,
                        "a transformation on a connection to a system output is not supported",
                    ));
                }
                outputs.insert(through.connector.clone(), json!(format!("{}.{var}", fmus[k].name)));
            }
            for &n in feeds.get(&through).into_iter().flatten() {
                let next = &links[n];
                stack.push((next.to.clone(), gain * next.gain, suppress || next.suppress_units, next.node));
            }
        }
    }
    // A value bound to a top-level input connector is the start value of every FMU input it
    // feeds (through nested systems, times the connections' factors).
    for (name, x) in &top_inputs {
        let mut stack: Vec<(End, f64)> = vec![(End { sys: 0, element: None, connector: name.clone() }, *x)];
        let mut seen = 0usize;
        while let Some((end, value)) = stack.pop() {
            seen += 1;
            if seen > 10_000 {
                return Err(Error::invalid(
                    "SystemStructure.ssd",
                    format!("input '{name}': the connections form a cycle"),
                )
                .in_file(file));
            }
            let through = as_system_end(&end).unwrap_or(end);
            for &n in feeds.get(&through).into_iter().flatten() {
                let l = &links[n];
                match leaf(&systems, &l.to) {
                    Some((j, input)) => {
                        fmus[j].parameters.insert(input.to_string(), json!(value * l.gain));
                    }
                    None => stack.push((l.to.clone(), value * l.gain)),
                }
            }
        }
    }
    // Otherwise a top-level input connector has no source here (a system run on its own has
    // no environment): the FMU inputs it feeds keep their start values. The walk above starts
    // from FMU outputs only, so those connections are left out.
    // The FMUs' model descriptions: their outputs (the columns when the system declares no
    // output connector) and default steps.
    let mut default_step: Option<f64> = None;
    let mut every_output = Map::new();
    for f in &fmus {
        let a = stiction_fmi_schema::Archive::describe(Path::new(&f.path), &f.path).map_err(|e| {
            Error::invalid(format!("SystemStructure.ssd: ssd:Component '{}'", f.name), e.to_string()).in_file(file)
        })?;
        let md = &a.description;
        if let Some(s) = md.default_experiment.as_ref().and_then(|e| e.step_size) {
            default_step = Some(default_step.map_or(s, |h| h.min(s)));
        }
        let numeric = |v: &&stiction_fmi_schema::Variable| v.ty != stiction_fmi_schema::VarType::Other;
        for v in md.variables.iter().filter(|v| v.causality == stiction_fmi_schema::Causality::Output).filter(numeric) {
            let name = format!("{}.{}", f.name, v.name);
            every_output.insert(name.clone(), json!(name));
        }
    }
    if !annotated.columns.is_empty() {
        outputs = annotated.columns.iter().map(|(l, x)| (l.clone(), json!(x))).collect();
    } else if outputs.is_empty() {
        outputs = every_output;
    }
    // The communication step: the annotation's, else the FMUs' smallest default step.
    let step = annotated.step.or(default_step);
    let mut master = json!({"algorithm": annotated.algorithm.as_deref().unwrap_or("jacobi")});
    if !annotated.order.is_empty() {
        // The order names FMUs of the top system.
        master["order"] = json!(annotated.order);
    }
    if let Some(h) = step {
        master["step"] = json!(h);
    }
    if let Some(t) = stop {
        master["stop_time"] = json!(t);
    }
    let mut fmu_values = Map::new();
    for f in &fmus {
        let mut v = json!({"path": f.path});
        if !f.parameters.is_empty() {
            v["parameters"] = Value::Object(f.parameters.clone());
        }
        fmu_values.insert(f.name.clone(), v);
    }
    let name = root.attribute("name").or(top.attribute("name")).unwrap_or("ssp");
    let mut value = json!({"name": name, "master": master, "fmus": fmu_values, "connections": connections});
    if !outputs.is_empty() {
        value["output"] = json!({"signals": outputs});
    }
    if let Some(i) = annotated.interval {
        value["output"]["interval"] = json!(i);
    }
    Ok(Ssp { value })
}

/// Walks the systems of an SSD.
struct Reader<'a, 'i, 'f> {
    file: &'f str,
    dir: &'f Path,
    fmus: Vec<Fmu>,
    systems: Vec<Sys>,
    links: Vec<Link<'a, 'i>>,
    /// The master the top system's annotations ask for.
    master: Master,
    /// Values bound to the top system's input connectors.
    inputs: Vec<(String, f64)>,
}

impl<'a, 'i> Reader<'a, 'i, '_> {
    /// Read system `n` (named by `prefix`, "" for the top one); returns its index.
    fn system(&mut self, n: Node<'a, 'i>, prefix: String) -> Result<usize, Error> {
        let file = self.file;
        let me = self.systems.len();
        self.systems.push(Sys {
            subsystems: HashMap::new(),
            components: HashMap::new(),
            connectors: connectors(file, n)?,
        });
        let mut bindings = Vec::new();
        for c in n.children().filter(Node::is_element) {
            match tag(&c) {
                "Connectors" | "ElementGeometry" | "SystemGeometry" | "GraphicalElements" => {}
                "Elements" => {
                    for e in c.children().filter(Node::is_element) {
                        let name = e.attribute("name").ok_or_else(|| refuse(file, &e, "no name"))?;
                        if name.is_empty() || name.contains('.') {
                            return Err(refuse(file, &e, "an element's name must be non-empty and contain no '.'"));
                        }
                        let full = if prefix.is_empty() { name.to_string() } else { format!("{prefix}_{name}") };
                        match tag(&e) {
                            "Component" => {
                                let k = self.component(e, full)?;
                                self.systems[me].components.insert(name.to_string(), k);
                            }
                            "System" => {
                                let s = self.system(e, full)?;
                                self.systems[me].subsystems.insert(name.to_string(), s);
                            }
                            _ => return Err(refuse(file, &e, "not supported (elements: ssd:Component, ssd:System)")),
                        }
                    }
                }
                "Connections" => {
                    for k in children(c, "Connection") {
                        self.connection(k, me)?;
                    }
                }
                "ParameterBindings" => bindings.push(c),
                "Annotations" => {
                    if me == 0 {
                        self.master = master_of(file, c)?;
                    }
                }
                _ => return Err(refuse(file, &c, "not supported in an ssd:System")),
            }
        }
        // A system's bindings name its components' variables as `component.variable`.
        for b in bindings {
            for (name, prefix, value, at) in parameter_values(file, self.dir, b)? {
                // A value of one of the top system's input connectors: what it feeds starts there.
                let own = self.systems[me].connectors.get(&name).is_some_and(|(kind, _)| kind == "input");
                if me == 0 && own {
                    let x = value
                        .as_f64()
                        .ok_or_else(|| refuse(file, &at, format!("input '{name}': expected a number")))?;
                    self.inputs.push((name.clone(), x));
                    continue;
                }
                // The name as written (OMSimulator's reading), else with the prefix before it.
                let found = [name.clone(), format!("{prefix}{name}")].into_iter().find_map(|n| {
                    let (el, var) = n.split_once('.')?;
                    self.systems[me].components.get(el).map(|&k| (k, var.to_string()))
                });
                let Some((k, var)) = found else {
                    return Err(refuse(
                        file,
                        &at,
                        format!("parameter '{name}': expected COMPONENT.VARIABLE naming a component of this system"),
                    ));
                };
                self.fmus[k].parameters.insert(var, value);
            }
        }
        Ok(me)
    }

    /// Read component `n` as the FMU `name`; returns its index.
    fn component(&mut self, n: Node<'a, 'i>, name: String) -> Result<usize, Error> {
        let file = self.file;
        let source = n.attribute("source").ok_or_else(|| refuse(file, &n, "no source (the FMU)"))?;
        match n.attribute("type") {
            Some("application/x-fmu-sharedlibrary") => {}
            None if source.to_ascii_lowercase().ends_with(".fmu") => {}
            Some(t) => return Err(refuse(file, &n, format!("component type '{t}' is not supported (FMUs only)"))),
            None => return Err(refuse(file, &n, "not an FMU (no type and the source does not end in .fmu)")),
        }
        if n.attribute("implementation").is_some_and(|i| i != "CoSimulation" && i != "any") {
            return Err(refuse(file, &n, "only the Co-Simulation implementation of an FMU is supported"));
        }
        let path = resolve(file, &n, self.dir, source)?;
        let mut fmu = Fmu { name, path, parameters: Map::new(), units: HashMap::new() };
        for (c, (_, unit)) in connectors(file, n)? {
            if let Some(u) = unit {
                fmu.units.insert(c, u);
            }
        }
        for c in n.children().filter(Node::is_element) {
            match tag(&c) {
                "Connectors" | "ElementGeometry" | "Annotations" => {}
                "ParameterBindings" => {
                    for (var, prefix, value, _) in parameter_values(file, self.dir, c)? {
                        let var = var.strip_prefix(prefix.as_str()).unwrap_or(&var).to_string();
                        fmu.parameters.insert(var, value);
                    }
                }
                _ => return Err(refuse(file, &c, "not supported in an ssd:Component")),
            }
        }
        self.fmus.push(fmu);
        Ok(self.fmus.len() - 1)
    }

    /// Read connection `n` of system `sys`.
    fn connection(&mut self, n: Node<'a, 'i>, sys: usize) -> Result<(), Error> {
        let file = self.file;
        let get = |a: &str| n.attribute(a).ok_or_else(|| refuse(file, &n, format!("no {a}")));
        let from = End {
            sys,
            element: n.attribute("startElement").map(str::to_string),
            connector: get("startConnector")?.to_string(),
        };
        let to = End {
            sys,
            element: n.attribute("endElement").map(str::to_string),
            connector: get("endConnector")?.to_string(),
        };
        for e in [&from, &to] {
            let s = &self.systems[sys];
            match &e.element {
                Some(el) if !s.components.contains_key(el) && !s.subsystems.contains_key(el) => {
                    return Err(refuse(file, &n, format!("no element '{el}' in this system")));
                }
                None if !s.connectors.contains_key(&e.connector) => {
                    return Err(refuse(file, &n, format!("the system has no connector '{}'", e.connector)));
                }
                _ => {}
            }
        }
        let mut gain = 1.0;
        for t in n.children().filter(Node::is_element) {
            match tag(&t) {
                "LinearTransformation" => {
                    gain = number(file, &t, "factor")?.unwrap_or(1.0);
                    if number(file, &t, "offset")?.is_some_and(|o| o != 0.0) {
                        return Err(refuse(file, &t, "an offset is not supported (a factor is)"));
                    }
                }
                "ConnectionGeometry" | "Annotations" => {}
                _ => return Err(refuse(file, &t, "not supported on a connection (ssc:LinearTransformation is)")),
            }
        }
        let suppress = n.attribute("suppressUnitConversion") == Some("true");
        self.links.push(Link { from, to, gain, suppress_units: suppress, node: n });
        Ok(())
    }
}

/// The connectors of an element: name → (kind, unit).
fn connectors(file: &str, n: Node) -> Result<HashMap<String, (String, Option<String>)>, Error> {
    let mut out = HashMap::new();
    for c in child(n, "Connectors").into_iter().flat_map(|c| children(c, "Connector")) {
        let name = c.attribute("name").ok_or_else(|| refuse(file, &c, "no name"))?;
        let kind = c.attribute("kind").unwrap_or("");
        let unit = c.children().filter(Node::is_element).find_map(|t| t.attribute("unit")).map(str::to_string);
        out.insert(name.to_string(), (kind.to_string(), unit));
    }
    Ok(out)
}

/// A reference of the SSD (`resources/x.fmu`, `x.ssv`) as a path in the unpacked package;
/// refused if it leaves the package or names no file of it.
fn resolve(file: &str, n: &Node, dir: &Path, source: &str) -> Result<String, Error> {
    let rel = source.strip_prefix("./").unwrap_or(source);
    let bad = rel.is_empty()
        || rel.contains('\\')
        || rel.contains(':')
        || rel.starts_with('/')
        || rel.split('/').any(|p| p == ".." || p.is_empty());
    if bad {
        return Err(refuse(
            file,
            n,
            format!("source '{source}': expected a path inside the .ssp (such as resources/x.fmu)"),
        ));
    }
    let full = dir.join(rel);
    if !full.is_file() {
        return Err(refuse(file, n, format!("source '{source}': the .ssp holds no such file")));
    }
    Ok(full.to_string_lossy().into_owned())
}

/// Every parameter a `ssd:ParameterBindings` binds: from an
/// `.ssv` file of the package or inline `ssd:ParameterValues`, (name, prefix, value, element)
/// of every parameter. How a name and the binding's `prefix` meet is the caller's: OMSimulator
/// reads an .ssv of `gear.gamma_v` bound at a system, with or without prefix `gear.`, as the
/// component gear's `gamma_v`.
fn parameter_values<'a, 'i>(
    file: &str,
    dir: &Path,
    bindings: Node<'a, 'i>,
) -> Result<Vec<(String, String, Value, Node<'a, 'i>)>, Error> {
    let mut out = Vec::new();
    for b in children(bindings, "ParameterBinding") {
        if child(b, "ParameterMapping").is_some() {
            return Err(refuse(file, &b, "parameter mappings (ssm) are not supported"));
        }
        let prefix = b.attribute("prefix").unwrap_or("");
        let values = if let Some(src) = b.attribute("source") {
            if b.attribute("type").is_some_and(|t| t != "application/x-ssp-parameter-set") {
                return Err(refuse(
                    file,
                    &b,
                    "only SSV parameter sets (application/x-ssp-parameter-set) are supported",
                ));
            }
            let path = resolve(file, &b, dir, src)?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| refuse(file, &b, format!("source '{src}': cannot read it: {e}")))?;
            let ssv = Document::parse_with_options(&text, PARSING)
                .map_err(|e| refuse(file, &b, format!("source '{src}' does not parse: {e}")))?;
            ssv_values(&format!("{file}: {src}"), ssv.root_element())?
        } else if let Some(pv) = child(b, "ParameterValues") {
            let set = child(pv, "ParameterSet").ok_or_else(|| refuse(file, &pv, "no ssv:ParameterSet"))?;
            ssv_values(file, set)?
        } else {
            Vec::new()
        };
        for (name, value) in values {
            out.push((name, prefix.to_string(), value, b));
        }
    }
    Ok(out)
}

/// The parameters of an `ssv:ParameterSet`: Real, Integer, Boolean values (a String or
/// Enumeration value is refused, naming it).
fn ssv_values(file: &str, set: Node) -> Result<Vec<(String, Value)>, Error> {
    if tag(&set) != "ParameterSet" {
        return Err(refuse(file, &set, "expected ssv:ParameterSet"));
    }
    let mut out = Vec::new();
    for p in child(set, "Parameters").into_iter().flat_map(|p| children(p, "Parameter")) {
        let name = p.attribute("name").ok_or_else(|| refuse(file, &p, "no name"))?;
        let v = p.children().find(Node::is_element).ok_or_else(|| refuse(file, &p, "no value"))?;
        let text = v.attribute("value").ok_or_else(|| refuse(file, &v, "no value attribute"))?;
        let value = match tag(&v) {
            "Real" => json!(number(file, &v, "value")?.unwrap_or_default()),
            "Integer" => json!(text.trim().parse::<i64>().map_err(|_| refuse(
                file,
                &v,
                format!("'{text}' is not an integer")
            ))?),
            "Boolean" => match text.trim() {
                "true" | "1" => json!(true),
                "false" | "0" => json!(false),
                _ => return Err(refuse(file, &v, format!("'{text}' is not true or false"))),
            },
            "String" => json!(text),
            _ => return Err(refuse(file, &v, "not supported (Real, Integer, Boolean and String values are)")),
        };
        out.push((name.to_string(), value));
    }
    Ok(out)
}

/// The master a system's `ssd:Annotations` asks for: the communication step of OMSimulator's
/// `oms:FixedStepMaster stepSize` (or the `stepSize` of its `oms:SimulationInformation`), and
/// stiction's own (`org.stiction`: `<Master step algorithm order>`), which wins.
#[derive(Default)]
struct Master {
    step: Option<f64>,
    /// The result rows' interval (stiction's annotation).
    interval: Option<f64>,
    /// Result columns (label, `component.variable`) (stiction's annotation).
    columns: Vec<(String, String)>,
    algorithm: Option<String>,
    order: Vec<String>,
}

fn master_of(file: &str, annotations: Node) -> Result<Master, Error> {
    let mut m = Master::default();
    for a in children(annotations, "Annotation") {
        let ty = a.attribute("type").unwrap_or("");
        if ty != OMS_ANNOTATION && ty != STICTION_ANNOTATION {
            continue;
        }
        for n in a.descendants().filter(Node::is_element) {
            if !matches!(tag(&n), "FixedStepMaster" | "SimulationInformation" | "Master") {
                continue;
            }
            if let Some(h) = number(file, &n, "stepSize")?.or(number(file, &n, "step")?) {
                if h <= 0.0 {
                    return Err(refuse(file, &n, "the step size must be positive"));
                }
                if m.step.is_none() || ty == STICTION_ANNOTATION {
                    m.step = Some(h);
                }
            }
            if ty == STICTION_ANNOTATION {
                match n.attribute("algorithm") {
                    None => {}
                    Some(a @ ("jacobi" | "gauss-seidel")) => m.algorithm = Some(a.to_string()),
                    Some(a) => {
                        return Err(refuse(file, &n, format!("algorithm '{a}': expected jacobi or gauss-seidel")))
                    }
                }
                for c in children(n, "Column") {
                    match (c.attribute("label"), c.attribute("signal")) {
                        (Some(l), Some(x)) => m.columns.push((l.to_string(), x.to_string())),
                        _ => return Err(refuse(file, &c, "expected label and signal")),
                    }
                }
                if let Some(i) = number(file, &n, "interval")? {
                    m.interval = Some(i);
                }
                if let Some(o) = n.attribute("order") {
                    m.order = o.split_whitespace().map(str::to_string).collect();
                }
            }
        }
    }
    Ok(m)
}

/// A unit of `ssd:Units`: its base-unit exponents (kg m s A K mol cd rad), factor and offset.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Unit {
    exponents: [i32; 8],
    factor: f64,
    offset: f64,
}

/// The units the SSD defines, by name.
fn unit_table(file: &str, root: Node) -> Result<HashMap<String, Unit>, Error> {
    let mut out = HashMap::new();
    for u in child(root, "Units").into_iter().flat_map(|u| children(u, "Unit")) {
        let Some(name) = u.attribute("name") else { continue };
        let Some(b) = child(u, "BaseUnit") else { continue };
        let mut exponents = [0i32; 8];
        for (i, k) in ["kg", "m", "s", "A", "K", "mol", "cd", "rad"].iter().enumerate() {
            if let Some(x) = b.attribute(*k) {
                exponents[i] =
                    x.trim().parse().map_err(|_| refuse(file, &b, format!("{k}=\"{x}\" is not an integer")))?;
            }
        }
        let factor = number(file, &b, "factor")?.unwrap_or(1.0);
        let offset = number(file, &b, "offset")?.unwrap_or(0.0);
        out.insert(name.to_string(), Unit { exponents, factor, offset });
    }
    Ok(out)
}

/// The factor that converts a value of connector `var` of `from` into the unit of
/// connector `input` of `to`, from the units the SSD declares on the two connectors: 1 when
/// either has none, they are equal, or `suppress`; refused when their base units differ.
#[allow(clippy::too_many_arguments)]
fn unit_factor(
    file: &str,
    n: &Node,
    from: &Fmu,
    var: &str,
    to: &Fmu,
    input: &str,
    units: &HashMap<String, Unit>,
    suppress: bool,
) -> Result<f64, Error> {
    let (Some(a), Some(b)) = (from.units.get(var), to.units.get(input)) else { return Ok(1.0) };
    if suppress || a == b {
        return Ok(1.0);
    }
    let (Some(ua), Some(ub)) = (units.get(a), units.get(b)) else {
        return Err(refuse(file, n, format!("units '{a}' and '{b}' differ and ssd:Units does not define both")));
    };
    if ua.exponents != ub.exponents {
        return Err(refuse(
            file,
            n,
            format!("'{a}' cannot be converted to '{b}' (different base units; suppressUnitConversion=\"true\" connects them as they are)"),
        ));
    }
    if ua.offset != ub.offset {
        return Err(refuse(file, n, format!("converting '{a}' to '{b}' needs an offset, which is not supported")));
    }
    Ok(ua.factor / ub.factor)
}
