//! modelDescription.xml of FMI 2.0 and FMI 3.0, read with [`crate::xml`]: version, model
//! identifiers per interface, GUID / instantiation token, variables (name, value reference,
//! type, causality, variability, start, unit), continuous states and their derivatives,
//! event indicators, the default experiment and the capability flags of each interface.
//! Only what an importer needs; every other element is ignored. What the standard requires
//! but an importer can do without (ModelStructure, its Outputs and InitialUnknowns) is not an
//! error: its absence is noted in [`ModelDescription::warnings`] (FMPy tolerates it too;
//! PythonFMU 0.7 writes no InitialUnknowns, FMPy's container FMUs an empty ModelStructure).

use crate::vocab::{
    is_initial_unknown, Capabilities, Causality, DefaultExperiment, FmiVersion, Initial, Interface, VarType,
    Variability,
};
use crate::xml::Node;
use std::fmt;

/// One model variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub vr: u32,
    pub ty: VarType,
    /// The type as written in the XML (`Real`, `Float64`, `Enumeration`, ...).
    pub type_name: String,
    /// As written; absent: local.
    pub causality: Causality,
    /// As written; absent: continuous.
    pub variability: Variability,
    /// As written; absent: `None` (the default depends on causality and variability).
    pub initial: Option<Initial>,
    /// The start value as written (absent for calculated variables).
    pub start: Option<String>,
    pub unit: Option<String>,
    pub description: Option<String>,
    /// For a derivative: the index (into [`ModelDescription::variables`]) of its state.
    pub derivative_of: Option<usize>,
    /// FMI 3.0 `<Alias name=...>` names of this variable.
    pub aliases: Vec<String>,
    /// FMI 3.0 `<Dimension>`s: empty for a scalar.
    pub dimensions: Vec<Dimension>,
}

/// One FMI 3.0 `<Dimension>` of an array variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// `start="n"`: a fixed size.
    Fixed(u64),
    /// `valueReference="vr"`: the size is the value of this (structural parameter) variable.
    Parameter(u32),
}

/// Most event indicators an FMU may declare (stiction allocates them per instance).
pub const MAX_EVENT_INDICATORS: usize = 1 << 24;

/// Most elements an array variable may have (its values are read at every output).
pub const MAX_ARRAY_ELEMENTS: u64 = 1 << 20;

/// A parsed modelDescription.xml.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDescription {
    pub version: FmiVersion,
    /// The `fmiVersion` attribute as written.
    pub version_text: String,
    pub model_name: String,
    /// FMI 2.0 `guid` / FMI 3.0 `instantiationToken`.
    pub token: String,
    pub description: Option<String>,
    pub generation_tool: Option<String>,
    /// `modelIdentifier` of the Model Exchange interface, if declared.
    pub model_exchange: Option<String>,
    /// `modelIdentifier` of the Co-Simulation interface, if declared.
    pub co_simulation: Option<String>,
    pub variables: Vec<Variable>,
    /// Indices into `variables` of the continuous states, in state-vector order.
    pub states: Vec<usize>,
    /// Indices into `variables` of the state derivatives, in state-vector order.
    pub derivatives: Vec<usize>,
    pub event_indicators: usize,
    pub default_experiment: Option<DefaultExperiment>,
    /// Capability flags of the Co-Simulation interface (default if not declared).
    pub cs_capabilities: Capabilities,
    /// Capability flags of the Model Exchange interface (default if not declared).
    pub me_capabilities: Capabilities,
    /// What the description lacks that the standard requires but an importer can do
    /// without (see the module documentation); `stiction check` shows them as warnings.
    pub warnings: Vec<String>,
    /// Names and FMI 3.0 alias names → index into `variables` (the first variable of a
    /// name), built on the first [`ModelDescription::find`] (`fmu info` never needs it).
    by_name: Cache<String>,
    /// Value reference → index of the first variable with it (any type), built on first use.
    by_vr_any: Cache<u32>,
    /// Variable index of a continuous state → its position in `states`, built on first use.
    state_pos: Cache<usize>,
}

/// A cache derived from the variables: equal for any two descriptions, not shown by Debug.
#[derive(Clone)]
struct Cache<K>(std::sync::OnceLock<std::collections::HashMap<K, usize>>);

impl<K> Default for Cache<K> {
    fn default() -> Self {
        Cache(std::sync::OnceLock::new())
    }
}

impl<K> PartialEq for Cache<K> {
    fn eq(&self, _: &Cache<K>) -> bool {
        true
    }
}

impl<K> fmt::Debug for Cache<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NameIndex")
    }
}

/// Why a modelDescription.xml was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DescriptionError(pub String);

impl fmt::Display for DescriptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, DescriptionError> {
    Err(DescriptionError(msg.into()))
}

/// An optional attribute parsed as a number; a malformed number is an error naming it.
fn number_attr(node: Node, name: &str) -> Result<Option<f64>, DescriptionError> {
    match node.attribute(name) {
        None => Ok(None),
        Some(s) => match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => err(format!("<{}> attribute {name}=\"{s}\" is not a finite number", node.tag_name().name())),
        },
    }
}

/// An optional enumerated attribute of variable `name`; a value outside the enumeration is an
/// error naming it (the FMI schemas allow only these values).
fn enum_attr<T>(
    node: Node,
    key: &str,
    name: &str,
    line: impl Fn() -> u32,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>, DescriptionError> {
    match node.attribute(key) {
        None => Ok(None),
        Some(s) => match parse(s.trim()) {
            Some(x) => Ok(Some(x)),
            None => err(format!("variable '{name}' (line {}) has an invalid {key}=\"{s}\"", line())),
        },
    }
}

/// Line numbers of byte offsets: the offsets of the line starts, searched by bisection
/// (roxmltree's `text_pos_at` scans from the start of the text on every call, which made
/// 300 000 variables quadratic).
/// The table is built on the first lookup: only messages need line numbers, and a valid
/// description asks for none.
struct Lines<'a> {
    text: &'a str,
    starts: std::cell::OnceCell<Vec<usize>>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        Lines { text, starts: std::cell::OnceCell::new() }
    }

    /// The 1-based line of the start of `node`.
    fn of(&self, node: Node) -> u32 {
        let starts = self.starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| i + 1));
            starts
        });
        let pos = node.range().start;
        u32::try_from(starts.partition_point(|&s| s <= pos)).unwrap_or(u32::MAX)
    }
}

/// The default cap on the nesting depth of elements ([`ModelDescription::parse`]).
pub const MAX_DEPTH: u64 = 64;

/// Most elements the reader ([`crate::xml`]) may build: bounds the memory of
/// a parse whatever the file size cap.
const MAX_NODES: u32 = 50_000_000;

/// Check that elements nest at most `max` deep, in one pass over the text, before the reader
/// sees it (it keeps an explicit stack; other tools that read the same file may recurse). Comments, CDATA sections,
/// processing instructions and declarations are skipped; quoted attribute values may hold
/// '>'. Malformed text that this scan misreads is rejected by the reader afterwards; the
/// depth it counts is never below the reader's.
fn check_depth(text: &str, max: u64) -> Result<(), DescriptionError> {
    let b = text.as_bytes();
    let skip_to = |from: usize, end: &[u8]| -> usize {
        memchr::memmem::find(&b[from.min(b.len())..], end).map_or(b.len(), |p| from + p + end.len())
    };
    let (mut i, mut depth) = (0usize, 0u64);
    while i < b.len() {
        // To the next '<' (text between tags is skipped at SIMD speed).
        match memchr::memchr(b'<', &b[i..]) {
            Some(p) => i += p,
            None => break,
        }
        let rest = &b[i..];
        if rest.starts_with(b"<!--") {
            i = skip_to(i + 4, b"-->");
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(i + 9, b"]]>");
        } else if rest.starts_with(b"<?") {
            i = skip_to(i + 2, b"?>");
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") {
            if rest.starts_with(b"</") {
                depth = depth.saturating_sub(1);
            }
            i = skip_to(i + 2, b">");
        } else {
            // A start tag: to its '>', outside quotes.
            let mut j = i + 1;
            while j < b.len() {
                match memchr::memchr3(b'"', b'\'', b'>', &b[j..]) {
                    None => j = b.len(),
                    Some(p) if b[j + p] == b'>' => {
                        j += p;
                        break;
                    }
                    // A quoted value: to its closing quote.
                    Some(p) => {
                        let q = b[j + p];
                        j = memchr::memchr(q, &b[j + p + 1..]).map_or(b.len(), |e| j + p + 1 + e + 1);
                    }
                }
            }
            if j >= b.len() || b[j - 1] != b'/' {
                depth += 1;
                if depth > max {
                    return err(format!(
                        "elements nest more than {max} levels deep, the limit (raise it with STICTION_FMU_MAX_XML_DEPTH=<levels>)"
                    ));
                }
            }
            i = j + 1;
        }
    }
    Ok(())
}

/// Whether a modelIdentifier can name the binary `<modelIdentifier>.so` inside
/// `binaries/<platform>/`: a plain file name (no path separator, no NUL or control
/// character, not "." or "..", not starting with '.').
fn plain_file_name(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id.len() <= 200
        && !id.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

impl ModelDescription {
    /// Parse the text of a modelDescription.xml. Errors name the line of the offending element.
    pub fn parse(text: &str) -> Result<ModelDescription, DescriptionError> {
        ModelDescription::parse_with(text, MAX_DEPTH)
    }

    /// [`ModelDescription::parse`] with a cap of `max_depth` levels of nested elements.
    pub fn parse_with(text: &str, max_depth: u64) -> Result<ModelDescription, DescriptionError> {
        check_depth(text, max_depth)?;
        let doc =
            crate::xml::Document::parse(text, MAX_NODES).map_err(|e| DescriptionError(format!("XML error: {e}")))?;
        let lines = Lines::new(text);
        let line_of = |_: &crate::xml::Document, n: Node| lines.of(n);
        let root = doc.root_element();
        if root.tag_name().name() != "fmiModelDescription" {
            return err(format!("the root element is <{}>, expected <fmiModelDescription>", root.tag_name().name()));
        }
        let version_text = root.attribute("fmiVersion").unwrap_or("").to_string();
        let version = if version_text.starts_with("2.") {
            FmiVersion::V2
        } else if version_text.starts_with("3.") {
            FmiVersion::V3
        } else {
            return err(format!("fmiVersion=\"{version_text}\" is not supported (FMI 2.0 and 3.0 are)"));
        };
        let token_attr = version.token_attribute();
        let Some(token) = root.attribute(token_attr) else {
            return err(format!("<fmiModelDescription> has no {token_attr} attribute"));
        };
        let model_name = root.attribute("modelName").unwrap_or("").to_string();
        let identifier = |tag: &str| -> Result<Option<String>, DescriptionError> {
            match root.children().find(|n| n.has_tag_name(tag)) {
                None => Ok(None),
                Some(n) => match n.attribute("modelIdentifier") {
                    Some(id) if plain_file_name(id) => Ok(Some(id.to_string())),
                    Some(id) if !id.is_empty() => err(format!(
                        "<{tag}> (line {}) has modelIdentifier={:?}, which is not a plain file name \
                         (the binary is binaries/<platform>/<modelIdentifier>.so)",
                        line_of(&doc, n),
                        id.chars().take(80).collect::<String>()
                    )),
                    _ => err(format!("<{tag}> (line {}) has no modelIdentifier", line_of(&doc, n))),
                },
            }
        };
        let model_exchange = identifier("ModelExchange")?;
        let co_simulation = identifier("CoSimulation")?;
        let capabilities = |tag: &str| -> Capabilities {
            let Some(n) = root.children().find(|n| n.has_tag_name(tag)) else { return Capabilities::default() };
            let flag = |names: &[&str]| names.iter().any(|a| n.attribute(a).is_some_and(|v| v.trim() == "true"));
            Capabilities {
                needs_execution_tool: flag(&["needsExecutionTool"]),
                once_per_process: flag(&["canBeInstantiatedOnlyOncePerProcess"]),
                can_get_and_set_state: flag(&["canGetAndSetFMUstate", "canGetAndSetFMUState"]),
                can_serialize_state: flag(&["canSerializeFMUstate", "canSerializeFMUState"]),
                directional_derivatives: flag(&["providesDirectionalDerivative", "providesDirectionalDerivatives"]),
                variable_step: flag(&["canHandleVariableCommunicationStepSize"]),
                needs_completed_integrator_step: match version {
                    FmiVersion::V2 => !flag(&["completedIntegratorStepNotNeeded"]),
                    FmiVersion::V3 => flag(&["needsCompletedIntegratorStep"]),
                },
            }
        };
        let cs_capabilities = capabilities("CoSimulation");
        let me_capabilities = capabilities("ModelExchange");
        if model_exchange.is_none() && co_simulation.is_none() {
            return err("the FMU declares neither <ModelExchange> nor <CoSimulation>");
        }
        let default_experiment = match root.children().find(|n| n.has_tag_name("DefaultExperiment")) {
            None => None,
            Some(n) => Some(DefaultExperiment {
                start_time: number_attr(n, "startTime")?,
                stop_time: number_attr(n, "stopTime")?,
                tolerance: number_attr(n, "tolerance")?,
                step_size: number_attr(n, "stepSize")?,
            }),
        };
        let Some(vars_node) = root.children().find(|n| n.has_tag_name("ModelVariables")) else {
            return err("<ModelVariables> is missing");
        };
        let structure = root.children().find(|n| n.has_tag_name("ModelStructure"));
        let mut md = ModelDescription {
            version,
            version_text,
            model_name,
            token: token.to_string(),
            description: root.attribute("description").map(str::to_string),
            generation_tool: root.attribute("generationTool").map(str::to_string),
            model_exchange,
            co_simulation,
            variables: Vec::with_capacity(vars_node.children().count()),
            states: Vec::new(),
            derivatives: Vec::new(),
            event_indicators: 0,
            default_experiment,
            cs_capabilities,
            me_capabilities,
            warnings: Vec::new(),
            by_name: Cache::default(),
            by_vr_any: Cache::default(),
            state_pos: Cache::default(),
        };
        // (variable index, raw `derivative` attribute) for the second pass.
        let mut derivative_refs: Vec<(usize, u64)> = Vec::new();
        for node in vars_node.children().filter(|n| n.is_element()) {
            // Only for messages: looked up when one is made.
            let line = || line_of(&doc, node);
            let (type_node, type_name) = match version {
                FmiVersion::V2 => {
                    if !node.has_tag_name("ScalarVariable") {
                        continue;
                    }
                    let Some(t) = node.children().find(|n| n.is_element()) else {
                        return err(format!("<ScalarVariable> on line {} has no type element", line()));
                    };
                    (t, t.tag_name().name().to_string())
                }
                FmiVersion::V3 => (node, node.tag_name().name().to_string()),
            };
            let ty = VarType::from_element(version, &type_name);
            let Some(name) = node.attribute("name") else {
                return err(format!("variable on line {} has no name", line()));
            };
            let vr = match node.attribute("valueReference").map(|s| s.trim().parse::<u32>()) {
                Some(Ok(vr)) => vr,
                Some(Err(_)) => {
                    return err(format!("variable '{name}' (line {}) has an invalid valueReference", line()))
                }
                None => return err(format!("variable '{name}' (line {}) has no valueReference", line())),
            };
            if let Some(d) = type_node.attribute("derivative") {
                let Ok(d) = d.trim().parse::<u64>() else {
                    return err(format!("variable '{name}' (line {}) has an invalid derivative=\"{d}\"", line()));
                };
                derivative_refs.push((md.variables.len(), d));
            }
            let causality = enum_attr(node, "causality", name, line, Causality::parse)?.unwrap_or(Causality::Local);
            let variability =
                enum_attr(node, "variability", name, line, Variability::parse)?.unwrap_or(Variability::Continuous);
            let initial = enum_attr(node, "initial", name, line, Initial::parse)?;
            let (mut aliases, mut dimensions) = (Vec::new(), Vec::new());
            if version == FmiVersion::V3 {
                for c in node.children().filter(|c| c.is_element()) {
                    match c.tag_name().name() {
                        "Alias" => match c.attribute("name") {
                            Some(a) if !a.is_empty() => aliases.push(a.to_string()),
                            _ => return err(format!("<Alias> on line {} of '{name}' has no name", line_of(&doc, c))),
                        },
                        "Dimension" => {
                            let at = line_of(&doc, c);
                            let num = |k: &str| c.attribute(k).map(|s| (s, s.trim().parse::<u64>()));
                            dimensions.push(match (num("start"), num("valueReference")) {
                                (Some((_, Ok(n))), None) => Dimension::Fixed(n),
                                (None, Some((_, Ok(vr)))) if vr <= u64::from(u32::MAX) => Dimension::Parameter(vr as u32),
                                _ => {
                                    return err(format!(
                                        "<Dimension> on line {at} of '{name}' needs either start=\"<size>\" or valueReference=\"<vr>\""
                                    ))
                                }
                            });
                        }
                        _ => {}
                    }
                }
            }
            md.variables.push(Variable {
                name: name.to_string(),
                vr,
                ty,
                type_name,
                causality,
                variability,
                initial,
                start: type_node.attribute("start").map(str::to_string),
                unit: type_node.attribute("unit").map(str::to_string),
                description: node.attribute("description").map(str::to_string),
                derivative_of: None,
                aliases,
                dimensions,
            });
        }
        // Resolve `derivative`: FMI 2.0 gives the 1-based index of the state in
        // ModelVariables, FMI 3.0 its value reference.
        let by_vr = if version == FmiVersion::V3 && !derivative_refs.is_empty() {
            md.vr_index()
        } else {
            std::collections::HashMap::new()
        };
        for &(i, d) in &derivative_refs {
            let state = match version {
                FmiVersion::V2 => (d as usize).checked_sub(1).filter(|&s| s < md.variables.len()),
                FmiVersion::V3 => u32::try_from(d).ok().and_then(|d| by_vr.get(&d).copied()),
            };
            let Some(s) = state else {
                return err(format!(
                    "variable '{}' is the derivative of an unknown variable ({d})",
                    md.variables[i].name
                ));
            };
            md.variables[i].derivative_of = Some(s);
        }
        // State order: ModelStructure/Derivatives (FMI 2.0) or ContinuousStateDerivative
        // (FMI 3.0), else the order of the derivative variables.
        let mut order: Vec<usize> = Vec::new();
        if let Some(st) = structure {
            match version {
                FmiVersion::V2 => {
                    if let Some(ds) = st.children().find(|n| n.has_tag_name("Derivatives")) {
                        for u in ds.children().filter(|n| n.has_tag_name("Unknown")) {
                            let idx = u.attribute("index").and_then(|s| s.trim().parse::<usize>().ok());
                            match idx.and_then(|i| i.checked_sub(1)).filter(|&i| i < md.variables.len()) {
                                Some(i) => order.push(i),
                                None => {
                                    return err(format!(
                                        "<Derivatives><Unknown> on line {} has an invalid index",
                                        line_of(&doc, u)
                                    ))
                                }
                            }
                        }
                    }
                }
                FmiVersion::V3 => {
                    for u in st.children().filter(|n| n.has_tag_name("ContinuousStateDerivative")) {
                        let vr = u.attribute("valueReference").and_then(|s| s.trim().parse::<u32>().ok());
                        match vr.and_then(|vr| by_vr.get(&vr).copied()) {
                            Some(i) => order.push(i),
                            None => {
                                return err(format!(
                                    "<ContinuousStateDerivative> on line {} names an unknown valueReference",
                                    line_of(&doc, u)
                                ))
                            }
                        }
                    }
                    md.event_indicators = st.children().filter(|n| n.has_tag_name("EventIndicator")).count();
                }
            }
        }
        if order.is_empty() {
            order = derivative_refs.iter().map(|&(i, _)| i).collect();
        }
        for i in order {
            let Some(s) = md.variables[i].derivative_of else {
                return err(format!(
                    "variable '{}' is listed as a derivative but has no derivative attribute",
                    md.variables[i].name
                ));
            };
            md.derivatives.push(i);
            md.states.push(s);
        }
        if version == FmiVersion::V2 {
            md.event_indicators = match root.attribute("numberOfEventIndicators") {
                None => 0,
                Some(s) => match s.trim().parse::<usize>() {
                    Ok(n) if n <= MAX_EVENT_INDICATORS => n,
                    Ok(n) => {
                        return err(format!(
                            "numberOfEventIndicators=\"{n}\" is more than the {MAX_EVENT_INDICATORS} stiction supports"
                        ))
                    }
                    Err(_) => return err(format!("numberOfEventIndicators=\"{s}\" is not a count")),
                },
            };
        }
        md.warnings = structure_warnings(&md, structure);
        Ok(md)
    }

    /// The capability flags of `interface`.
    pub fn capabilities(&self, interface: Interface) -> Capabilities {
        match interface {
            Interface::CoSimulation => self.cs_capabilities,
            Interface::ModelExchange => self.me_capabilities,
        }
    }

    /// Value reference → index of the first variable of a type stiction can read with it.
    pub fn vr_index(&self) -> std::collections::HashMap<u32, usize> {
        let mut m = std::collections::HashMap::with_capacity(self.variables.len());
        for (i, v) in self.variables.iter().enumerate() {
            if v.ty != VarType::Other {
                m.entry(v.vr).or_insert(i);
            }
        }
        m
    }

    /// The variable called `name` (by its name or an FMI 3.0 alias).
    pub fn find(&self, name: &str) -> Option<usize> {
        let names = self.by_name.0.get_or_init(|| {
            let mut m = std::collections::HashMap::with_capacity(self.variables.len());
            for (i, v) in self.variables.iter().enumerate() {
                for n in std::iter::once(&v.name).chain(&v.aliases) {
                    m.entry(n.clone()).or_insert(i);
                }
            }
            m
        });
        names.get(name).copied()
    }

    /// The sizes of the dimensions of variable `i` (empty for a scalar), structural
    /// parameters read from their start values; an error says why a size is unknown.
    pub fn shape(&self, i: usize) -> Result<Vec<u64>, String> {
        let v = &self.variables[i];
        let mut out = Vec::with_capacity(v.dimensions.len());
        let mut total: u64 = 1;
        for d in &v.dimensions {
            let n = match *d {
                Dimension::Fixed(n) => n,
                Dimension::Parameter(vr) => {
                    let p = self.variable_with_vr(vr).ok_or_else(|| {
                        format!("a <Dimension> of '{}' names value reference {vr}, which no variable has", v.name)
                    })?;
                    p.start.as_deref().and_then(|s| s.trim().parse::<u64>().ok()).ok_or_else(|| {
                        format!(
                            "a <Dimension> of '{}' is the structural parameter '{}', which has no whole-number start value",
                            v.name, p.name
                        )
                    })?
                }
            };
            total = total.saturating_mul(n);
            out.push(n);
        }
        if total > MAX_ARRAY_ELEMENTS {
            return Err(format!(
                "'{}' has {total} elements, more than the {MAX_ARRAY_ELEMENTS} stiction reads",
                v.name
            ));
        }
        Ok(out)
    }

    /// The position in the state vector of variable `i`, if it is a continuous state.
    pub fn state_position(&self, i: usize) -> Option<usize> {
        let index = self.state_pos.0.get_or_init(|| self.states.iter().enumerate().map(|(p, &s)| (s, p)).collect());
        index.get(&i).copied()
    }

    /// The first variable with value reference `vr` (of any type).
    pub fn variable_with_vr(&self, vr: u32) -> Option<&Variable> {
        let index = self.by_vr_any.0.get_or_init(|| {
            let mut m = std::collections::HashMap::with_capacity(self.variables.len());
            for (i, v) in self.variables.iter().enumerate() {
                m.entry(v.vr).or_insert(i);
            }
            m
        });
        index.get(&vr).map(|&i| &self.variables[i])
    }

    /// The variables whose array sizes depend on the structural parameter `i`.
    pub fn sized_by(&self, i: usize) -> Vec<usize> {
        let vr = self.variables[i].vr;
        (0..self.variables.len())
            .filter(|&k| self.variables[k].dimensions.contains(&Dimension::Parameter(vr)))
            .collect()
    }

    /// `modelIdentifier` of `interface`, if declared.
    pub fn identifier(&self, interface: Interface) -> Option<&str> {
        match interface {
            Interface::ModelExchange => self.model_exchange.as_deref(),
            Interface::CoSimulation => self.co_simulation.as_deref(),
        }
    }

    /// Names of the variables with causality `causality`, for error messages.
    pub fn names_with(&self, causality: Causality) -> String {
        let v: Vec<&str> =
            self.variables.iter().filter(|v| v.causality == causality).map(|v| v.name.as_str()).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    }
}

/// What ModelStructure lacks: the element itself, outputs missing from its Outputs
/// (FMI 2.0 `<Outputs><Unknown>`, FMI 3.0 `<Output>`) and, in FMI 2.0, the variables that
/// InitialUnknowns must list but does not: outputs, calculated parameters, states and
/// derivatives whose `initial` is (by default) "approx" or "calculated" (FMI 2.0, 2.2.8).
/// None of this is needed to run the FMU: stiction reads outputs after initialization and
/// takes the states from the `derivative` attributes; only Gauss-Seidel ordering and loop
/// detection use the output dependencies, and treat a missing entry conservatively.
fn structure_warnings(md: &ModelDescription, structure: Option<Node>) -> Vec<String> {
    let mut out = Vec::new();
    let outputs: Vec<usize> =
        (0..md.variables.len()).filter(|&i| md.variables[i].causality == Causality::Output).collect();
    let names = |set: &[usize]| -> String {
        let v: Vec<&str> = set.iter().take(20).map(|&i| md.variables[i].name.as_str()).collect();
        let more = if set.len() > 20 { format!(" and {} more", set.len() - 20) } else { String::new() };
        format!("{}{more}", v.join(", "))
    };
    let by_vr = if md.version == FmiVersion::V3 { md.vr_index() } else { std::collections::HashMap::new() };
    let Some(st) = structure else {
        out.push(format!(
            "modelDescription.xml has no <ModelStructure> (FMI {} requires it): the outputs' dependencies on inputs \
             are unknown (treated as possible direct feedthrough when ordering a master's steps)",
            md.version.label()
        ));
        return out;
    };
    let index =
        |s: &str| s.trim().parse::<usize>().ok().and_then(|i| i.checked_sub(1)).filter(|&i| i < md.variables.len());
    // Sets of variable indices as flags (a hash set of 300 000 indices cost more than the rest).
    let n = md.variables.len();
    let flags = |it: &mut dyn Iterator<Item = usize>| {
        let mut f = vec![false; n];
        for i in it {
            f[i] = true;
        }
        f
    };
    let listed: Vec<usize> = match md.version {
        FmiVersion::V2 => st
            .children()
            .filter(|n| n.has_tag_name("Outputs"))
            .flat_map(|o| o.children().filter(|n| n.has_tag_name("Unknown")))
            .filter_map(|u| u.attribute("index").and_then(index))
            .collect(),
        FmiVersion::V3 => st
            .children()
            .filter(|n| n.has_tag_name("Output"))
            .filter_map(|u| u.attribute("valueReference").and_then(|s| s.trim().parse::<u32>().ok()))
            .filter_map(|vr| by_vr.get(&vr).copied().filter(|&i| md.variables[i].causality == Causality::Output))
            .collect(),
    };
    let listed = flags(&mut listed.into_iter());
    let unlisted: Vec<usize> = outputs.iter().copied().filter(|&i| !listed[i]).collect();
    if !unlisted.is_empty() {
        out.push(format!(
            "ModelStructure does not list the output(s) {} among its Outputs (FMI {} requires every output): \
             their dependencies on inputs are unknown (treated as possible direct feedthrough when ordering a master's steps)",
            names(&unlisted),
            md.version.label()
        ));
    }
    if md.version == FmiVersion::V2 {
        let states = flags(&mut md.states.iter().copied().chain(md.variables.iter().filter_map(|v| v.derivative_of)));
        let is_state = |i: usize| states[i];
        let is_derivative = |i: usize| md.variables[i].derivative_of.is_some();
        let expected: Vec<usize> = (0..md.variables.len())
            .filter(|&i| {
                let v = &md.variables[i];
                let initial = v.initial.unwrap_or_else(|| Initial::fmi2_default(v.causality, v.variability));
                is_initial_unknown(v.causality, initial, is_state(i) || is_derivative(i))
            })
            .collect();
        let mut any_initial = false;
        let initial_unknowns = flags(
            &mut st
                .children()
                .filter(|n| n.has_tag_name("InitialUnknowns"))
                .flat_map(|o| o.children().filter(|n| n.has_tag_name("Unknown")))
                .filter_map(|u| u.attribute("index").and_then(index))
                .inspect(|_| any_initial = true),
        );
        let missing: Vec<usize> = expected.iter().copied().filter(|&i| !initial_unknowns[i]).collect();
        if !missing.is_empty() {
            let what = if !any_initial && !st.children().any(|n| n.has_tag_name("InitialUnknowns")) {
                "has no <InitialUnknowns>".to_string()
            } else {
                "<InitialUnknowns> does not list".to_string()
            };
            out.push(format!(
                "ModelStructure {what} {} (FMI 2.0 requires the variables computed during initialization there); \
                 not needed here: stiction reads the outputs after fmi2ExitInitializationMode",
                if what.starts_with("has") { format!("(expected {})", names(&missing)) } else { names(&missing) }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FMI2: &str = r#"<?xml version="1.0"?>
<fmiModelDescription fmiVersion="2.0" modelName="M" guid="{1}" numberOfEventIndicators="2">
  <ModelExchange modelIdentifier="M"/>
  <CoSimulation modelIdentifier="M"/>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="1e-3"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="3" causality="output" variability="continuous" initial="exact"><Real start="1" unit="m"/></ScalarVariable>
    <ScalarVariable name="u" valueReference="4" causality="input"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="5"><Real derivative="1"/></ScalarVariable>
    <ScalarVariable name="k" valueReference="6" causality="parameter" variability="fixed"><Integer start="2"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="1"/></Outputs><Derivatives><Unknown index="3"/></Derivatives></ModelStructure>
</fmiModelDescription>"#;

    #[test]
    fn fmi2_description() {
        let md = ModelDescription::parse(FMI2).unwrap();
        assert_eq!(md.version, FmiVersion::V2);
        assert_eq!(md.token, "{1}");
        assert_eq!(md.identifier(Interface::CoSimulation), Some("M"));
        assert_eq!(md.states, vec![0]);
        assert_eq!(md.derivatives, vec![2]);
        assert_eq!(md.event_indicators, 2);
        assert_eq!(md.variables[3].ty, VarType::Int32);
        assert_eq!(md.variables[0].unit.as_deref(), Some("m"));
        assert_eq!(md.default_experiment.unwrap().step_size, Some(1e-3));
    }

    #[test]
    fn fmi3_description() {
        let text = r#"<fmiModelDescription fmiVersion="3.0" modelName="M" instantiationToken="t">
  <CoSimulation modelIdentifier="Mc"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent"/>
    <Float64 name="x" valueReference="7" causality="output" start="1"/>
    <Float64 name="der(x)" valueReference="8" derivative="7"/>
    <String name="s" valueReference="9"/>
  </ModelVariables>
  <ModelStructure><Output valueReference="7"/><ContinuousStateDerivative valueReference="8"/><EventIndicator valueReference="7"/></ModelStructure>
</fmiModelDescription>"#;
        let md = ModelDescription::parse(text).unwrap();
        assert_eq!(md.version, FmiVersion::V3);
        assert_eq!(md.states, vec![1]);
        assert_eq!(md.event_indicators, 1);
        assert_eq!(md.variables[3].ty, VarType::Other);
        assert_eq!(md.variables[1].start.as_deref(), Some("1"));
    }

    #[test]
    fn capabilities_and_structure_warnings() {
        let md = ModelDescription::parse(FMI2).unwrap();
        assert_eq!(
            md.cs_capabilities,
            Capabilities { needs_completed_integrator_step: true, ..Capabilities::default() }
        );
        // der(x) is calculated at initialization but InitialUnknowns is missing.
        assert_eq!(md.warnings.len(), 1, "{:?}", md.warnings);
        assert!(md.warnings[0].contains("has no <InitialUnknowns> (expected der(x))"), "{:?}", md.warnings);
        let full = FMI2.replace(
            "</Derivatives></ModelStructure>",
            "</Derivatives><InitialUnknowns><Unknown index=\"3\"/></InitialUnknowns></ModelStructure>",
        );
        assert!(ModelDescription::parse(&full).unwrap().warnings.is_empty());
        // Flags, both spellings; PythonFMU-style structure: Outputs without InitialUnknowns.
        let text = r#"<fmiModelDescription fmiVersion="2.0" modelName="P" guid="g">
  <CoSimulation modelIdentifier="P" needsExecutionTool="true" canHandleVariableCommunicationStepSize="false"
    canBeInstantiatedOnlyOncePerProcess="true" canGetAndSetFMUstate="true" providesDirectionalDerivative="true"/>
  <ModelExchange modelIdentifier="P" completedIntegratorStepNotNeeded="true"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0" causality="input"><Real start="0"/></ScalarVariable>
    <ScalarVariable name="f" valueReference="1" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="g" valueReference="2" causality="output" initial="exact"><Real start="1"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="2"/></Outputs></ModelStructure>
</fmiModelDescription>"#;
        let md = ModelDescription::parse(text).unwrap();
        let cs = md.capabilities(Interface::CoSimulation);
        assert!(
            cs.needs_execution_tool && cs.once_per_process && cs.can_get_and_set_state && cs.directional_derivatives
        );
        assert!(!cs.variable_step);
        assert!(!md.capabilities(Interface::ModelExchange).needs_completed_integrator_step);
        assert_eq!(
            md.capabilities(Interface::ModelExchange).declared(Interface::ModelExchange),
            ["completedIntegratorStepNotNeeded"]
        );
        assert_eq!(md.warnings.len(), 2, "{:?}", md.warnings);
        assert!(md.warnings[0].contains("does not list the output(s) g among its Outputs"), "{:?}", md.warnings);
        assert!(md.warnings[1].contains("has no <InitialUnknowns> (expected f)"), "{:?}", md.warnings);
        // No ModelStructure at all: one warning, not an error.
        let bare = text.replace(r#"<ModelStructure><Outputs><Unknown index="2"/></Outputs></ModelStructure>"#, "");
        let md = ModelDescription::parse(&bare).unwrap();
        assert_eq!(md.warnings.len(), 1);
        assert!(md.warnings[0].contains("has no <ModelStructure>"), "{:?}", md.warnings);
    }

    /// Hostile attribute values (huge, negative, fractional, non-numeric, very long) give a
    /// description or an error, never a panic.
    #[test]
    fn no_attribute_value_panics() {
        let long = "9".repeat(70_000);
        let values =
            ["", "-1", "1e400", "NaN", "inf", "0x10", "18446744073709551616", "4294967296", "1.5", long.as_str()];
        let attrs = [
            ("fmiModelDescription", "numberOfEventIndicators"),
            ("ScalarVariable", "valueReference"),
            ("Real", "derivative"),
            ("Real", "start"),
            ("DefaultExperiment", "stepSize"),
            ("Unknown", "index"),
            ("ScalarVariable", "causality"),
            ("ScalarVariable", "name"),
        ];
        for (tag, attr) in attrs {
            for v in values {
                let text = FMI2.replacen(&format!("<{tag} "), &format!("<{tag} {attr}=\"{v}\" "), 1);
                let _ = ModelDescription::parse(&text);
            }
        }
        let fmi3 = r#"<fmiModelDescription fmiVersion="3.0" instantiationToken="t"><CoSimulation modelIdentifier="M"/>
  <ModelVariables><Float64 name="y" valueReference="1"><Dimension start="D"/></Float64>
  <UInt64 name="n" valueReference="2" start="S" causality="structuralParameter" variability="fixed"/>
  <Float64 name="z" valueReference="3"><Dimension valueReference="2"/><Dimension valueReference="R"/></Float64></ModelVariables>
  <ModelStructure><ContinuousStateDerivative valueReference="V"/></ModelStructure></fmiModelDescription>"#;
        for v in values {
            let text = fmi3.replace("\"D\"", &format!("\"{v}\"")).replace("\"S\"", &format!("\"{v}\""));
            for r in ["2", v] {
                for vr in ["1", v] {
                    let text = text.replace("\"R\"", &format!("\"{r}\"")).replace("\"V\"", &format!("\"{vr}\""));
                    if let Ok(md) = ModelDescription::parse(&text) {
                        for i in 0..md.variables.len() {
                            let _ = md.shape(i);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn malformed_descriptions_are_errors() {
        for (text, needle) in [
            ("<fmiModelDescription", "XML error"),
            ("<other/>", "root element"),
            (r#"<fmiModelDescription fmiVersion="1.0" guid="x"/>"#, "not supported"),
            (r#"<fmiModelDescription fmiVersion="2.0"/>"#, "no guid"),
            (r#"<fmiModelDescription fmiVersion="2.0" guid="g"><ModelVariables/></fmiModelDescription>"#, "neither"),
            (
                r#"<fmiModelDescription fmiVersion="3.0" instantiationToken="t"><CoSimulation modelIdentifier="M"/>
                   <ModelVariables><Float64 name="x" valueReference="1" causality="outptu"/></ModelVariables>
                   </fmiModelDescription>"#,
                "variable 'x' (line 2) has an invalid causality=\"outptu\"",
            ),
        ] {
            let e = ModelDescription::parse(text).unwrap_err();
            assert!(e.0.contains(needle), "{text}: {e}");
        }
    }
}
