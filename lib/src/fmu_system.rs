//! Any system as a Co-Simulation FMU (`stiction fmu export SYSTEM.json`): what goes into
//! the .fmu and how the generic binary (`fmus/system`, `libstiction_fmu_system.so`) reads it
//! back. Both sides use this module, so the exported description and the binary cannot
//! disagree.
//!
//! The .fmu holds `resources/system.json` (the system with every file it names rewritten to
//! `resources/files/…`), those files, and `resources/stiction-fmu.json`, the [`Manifest`]:
//! the variables in value-reference order (vr 0 is `time`, then the parameters, the inputs
//! and the output signals) and the list of resource files. The GUID / instantiation token
//! is a hash of the manifest and every listed file ([`token`]), checked at instantiation.
//!
//! A doStep(t, H) holds the inputs over the step and takes the solver steps of the system's
//! step T from t to the grid point k·T that t + H names, exactly the steps `stiction run`
//! takes. Communication points are counted from absolute time: an end within rounding of a
//! grid point (1e-6·T) is that point, so a master that adds its steps (t += H) works and its
//! residue step of a few 1e-14 s to the stop time is no step; an end between two grid
//! points is refused, never rounded. The outputs at a communication point are
//! read as `stiction run` reads a row: the Euler-form probe (20) with τ = T after the step.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use stiction_fmi_schema::write::{escape, write_fmu, Description, Entry, ScalarVariable};
use stiction_fmi_schema::{
    Capabilities, Causality, DefaultExperiment, FmiVersion, Initial, Interfaces, VarType, Variability,
};
use stiction_framework::output::ProbeTargets;
use stiction_framework::signal::TimeFunction;
use stiction_framework::system::System;
use stiction_framework::{RunPlan, Simulator};

/// The manifest's file name in `resources/`.
pub const MANIFEST: &str = "stiction-fmu.json";
/// The system's file name in `resources/`.
pub const SYSTEM: &str = "system.json";
/// File name of the generic system binary cargo builds (`fmus/system`).
pub const LIBRARY: &str = "libstiction_fmu_system.so";
/// Format number of [`Manifest`].
pub const FORMAT: u32 = 1;
/// How close to a grid point k·T (in units of T) a communication point is taken to be that
/// point: rounding of a master's t += h, never a real fraction of a step.
pub const GRID_TOLERANCE: f64 = 1e-6;

/// The most solver steps one doStep may take: a larger H is refused (bounded time per call).
pub const MAX_STEPS_PER_DOSTEP: u64 = 10_000_000;
/// The most component steps (solver steps × components) one doStep may take, so that the
/// time of a call is bounded for large systems too (about 0.1 µs to 1 µs each).
pub const MAX_COMPONENT_STEPS_PER_DOSTEP: u64 = 100_000_000;

/// The solver-step budget of one doStep for a system of `components` components.
pub fn step_budget(components: usize) -> u64 {
    (MAX_COMPONENT_STEPS_PER_DOSTEP / components.max(1) as u64).clamp(1, MAX_STEPS_PER_DOSTEP)
}

/// One parameter: the `--set` path it sets and its start value (the file's value there).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub set: String,
    pub start: f64,
    pub unit: String,
    pub description: String,
}

/// One input or output signal.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Signal {
    pub name: String,
    pub start: f64,
    pub unit: String,
    pub description: String,
}

/// `resources/stiction-fmu.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    /// modelIdentifier.
    pub identifier: String,
    pub description: String,
    /// Resource files besides the manifest (the system first), relative to `resources/`.
    pub files: Vec<String>,
    pub step: f64,
    pub stop_time: f64,
    pub interval: f64,
    pub parameters: Vec<Parameter>,
    pub inputs: Vec<Signal>,
    pub outputs: Vec<Signal>,
    /// The FMI version of the export (2 or 3): part of the hashed manifest, so the FMI 2.0
    /// and 3.0 exports of one system have distinct GUIDs / instantiation tokens. Absent in
    /// FMUs exported before it was added (read as 0).
    #[serde(default)]
    pub fmi: u32,
}

/// What a value reference is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    Time,
    Parameter(usize),
    Input(usize),
    Output(usize),
}

impl Manifest {
    /// Number of variables (value references 0..n).
    pub fn len(&self) -> usize {
        1 + self.parameters.len() + self.inputs.len() + self.outputs.len()
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Value reference of the first parameter, input and output.
    pub fn first_input(&self) -> usize {
        1 + self.parameters.len()
    }
    pub fn first_output(&self) -> usize {
        self.first_input() + self.inputs.len()
    }
    pub fn slot(&self, vr: usize) -> Option<Slot> {
        let (p, i) = (self.first_input(), self.first_output());
        match vr {
            0 => Some(Slot::Time),
            _ if vr < p => Some(Slot::Parameter(vr - 1)),
            _ if vr < i => Some(Slot::Input(vr - p)),
            _ if vr < self.len() => Some(Slot::Output(vr - i)),
            _ => None,
        }
    }
    /// Start value of every variable, by value reference (0 for time and outputs).
    pub fn starts(&self) -> Vec<f64> {
        let mut v = vec![0.0];
        v.extend(self.parameters.iter().map(|p| p.start));
        v.extend(self.inputs.iter().map(|i| i.start));
        v.extend(self.outputs.iter().map(|_| 0.0));
        v
    }
    /// Read and check a manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| format!("{MANIFEST}: {e}"))?;
        if m.format != FORMAT {
            return Err(format!("{MANIFEST}: format {} (this binary reads format {FORMAT})", m.format));
        }
        if m.files.first().map(String::as_str) != Some(SYSTEM) {
            return Err(format!("{MANIFEST}: the first file is not {SYSTEM}"));
        }
        for f in &m.files {
            if !safe_relative(f) {
                return Err(format!("{MANIFEST}: file name {f:?} leaves resources/"));
            }
        }
        Ok(m)
    }
}

/// A relative path of plain components (no `..`, not absolute).
fn safe_relative(p: &str) -> bool {
    let path = Path::new(p);
    !p.is_empty() && path.components().all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// The GUID / instantiation token, computed as the files are read: two 64-bit FNV-1a hashes
/// (different seeds) of the manifest's text and every resource file, each as its name's
/// length, name, length and bytes; formatted like a UUID. No security purpose: it ties
/// modelDescription.xml to the resources it was exported with.
#[derive(Clone, Debug)]
pub struct TokenHasher {
    a: u64,
    b: u64,
}

impl Default for TokenHasher {
    fn default() -> Self {
        TokenHasher { a: 0xcbf2_9ce4_8422_2325, b: 0xcbf2_9ce4_8422_2325 ^ 0x9e37_79b9_7f4a_7c15 }
    }
}

impl TokenHasher {
    /// Hash `data` (the next piece of the current file).
    pub fn bytes(&mut self, data: &[u8]) {
        for &x in data {
            self.a = (self.a ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
            self.b = (self.b ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// Start the file `name` of `len` bytes (its bytes follow through [`bytes`](Self::bytes)).
    pub fn file(&mut self, name: &str, len: u64) {
        self.bytes(&(name.len() as u64).to_le_bytes());
        self.bytes(name.as_bytes());
        self.bytes(&len.to_le_bytes());
    }
    pub fn finish(&self) -> String {
        let (a, b) = (self.a, self.b);
        format!(
            "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
}

/// The token of the manifest text `manifest` and the resource files `files` (in memory).
pub fn token(manifest: &str, files: &[(&str, &[u8])]) -> String {
    let mut h = TokenHasher::default();
    h.file(MANIFEST, manifest.len() as u64);
    h.bytes(manifest.as_bytes());
    for (n, d) in files {
        h.file(n, d.len() as u64);
        h.bytes(d);
    }
    h.finish()
}

/// A modelIdentifier from a system's name: letters, digits and `_`, not starting with a digit.
pub fn identifier(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "system_");
    }
    s
}

/// A unit as FMI writes it (`N.m`, `m/s2`) and its exponents of kg, m, s, rad; `None` for a
/// unit this exporter does not know (then the variable carries no unit attribute and its
/// description names the unit).
pub fn fmi_unit(unit: &str) -> Option<(String, [i32; 4])> {
    let u = unit.replace(['·', '*'], ".").replace('²', "2").replace('³', "3").replace(' ', "");
    let extra: &[(&str, [i32; 4])] = &[
        ("1", [0, 0, 0, 0]),
        ("W", [1, 2, -3, 0]),
        ("J", [1, 2, -2, 0]),
        ("N.s", [1, 1, -1, 0]),
        ("N.m.s", [1, 2, -1, 0]),
        ("kg.m2/s", [1, 2, -1, 0]),
        ("N.m/rad", [1, 2, -2, -1]),
    ];
    stiction_fmus::model::UNITS.iter().chain(extra).find(|(n, _)| *n == u).map(|(n, e)| (n.to_string(), *e))
}

// ---- export ----

/// Collects the files a system names and rewrites their paths to `files/…`.
struct Gather<'a> {
    base: &'a Path,
    files: Vec<(String, PathBuf)>,
}

impl Gather<'_> {
    /// Record the file `name` (relative to the system's directory) read at `path`; its new name.
    fn file(&mut self, name: &str, path: &str) -> Result<String, String> {
        let full = self.base.join(name);
        if !full.is_file() {
            return Err(format!(
                "{path}: the file {} does not exist (every file the system names goes into the FMU)",
                full.display()
            ));
        }
        if let Some((n, _)) = self.files.iter().find(|(_, p)| *p == full) {
            return Ok(n.clone());
        }
        let stem = full.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let clean: String =
            stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
        let n = format!("files/{}_{clean}", self.files.len());
        self.files.push((n.clone(), full));
        Ok(n)
    }

    /// Walk `v` (at JSON path `path`): tables and FMUs are gathered, whatever would reach
    /// outside the FMU is refused.
    fn walk(&mut self, v: &mut Value, path: &str) -> Result<(), String> {
        match v {
            Value::Object(map) => {
                if map.get("type").and_then(Value::as_str) == Some("fmu") {
                    if map.contains_key("preload") {
                        return Err(format!(
                            "{path}.preload: libraries outside the FMU cannot be exported; remove 'preload' (the nested FMU must load alone)"
                        ));
                    }
                    if let Some(i) = map.get("isolation").filter(|i| i.as_str() != Some("none")) {
                        return Err(format!(
                            "{path}.isolation: {i} needs the stiction executable, which is not inside the FMU; use \"none\""
                        ));
                    }
                    if let Some(Value::String(p)) = map.get("path") {
                        let new = self.file(&p.clone(), &format!("{path}.path"))?;
                        map.insert("path".into(), Value::String(new));
                    }
                }
                if let Some(Value::String(t)) = map.get("table") {
                    let new = self.file(&t.clone(), &format!("{path}.table"))?;
                    map.insert("table".into(), Value::String(new));
                }
                for (k, x) in map.iter_mut() {
                    if k == "table" || k == "path" {
                        continue;
                    }
                    self.walk(x, &format!("{path}.{k}"))?;
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter_mut().enumerate() {
                    self.walk(x, &format!("{path}[{i}]"))?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The value at a `--set` path in the system's JSON, as a number.
pub(crate) fn value_at(doc: &Value, set: &str, what: &str) -> Result<f64, String> {
    let a = crate::set::parse_assignment(doc, &format!("{set}=0")).map_err(|e| format!("{what}: {}", e.message))?;
    let mut at = doc;
    for seg in &a.path {
        at = match seg {
            crate::set::Segment::Key(k) => at.get(k),
            crate::set::Segment::Index(i) => at.get(i),
        }
        .ok_or_else(|| {
            format!("{what}: {set} has no value in the file (write the value there to export it as a parameter)")
        })?;
    }
    match at {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("{what}: {set} = {n} is not a number")),
        other => Err(format!("{what}: {set} is {other}, not a number (only numbers can be FMU parameters)")),
    }
}

/// The output columns (label, unit, description) of a compiled system.
fn columns(sim: &Simulator, plan: &RunPlan) -> Vec<crate::results::ColumnInfo> {
    crate::results::column_info(sim, plan)
}

/// Write `system` (a system file) as a Co-Simulation FMU of FMI version `fmi` (2 or 3) to
/// `out`, with the parameters `params` (`NAME=SETPATH`) besides the file's `"parameters"`,
/// taking the binary from `library` (asked once the system is checked). Returns the
/// identifier and the token. Every error names the file, JSON path or argument.
pub fn export_system(
    system: &Path,
    fmi: u32,
    params: &[String],
    library: impl FnOnce() -> Result<PathBuf, String>,
    out: &Path,
) -> Result<(String, String), String> {
    let version = match fmi {
        2 => FmiVersion::V2,
        3 => FmiVersion::V3,
        other => return Err(format!("fmi {other}: expected 2 or 3")),
    };
    let document = crate::pipeline::Document::read(system).map_err(|e| e.to_string())?;
    export_document(&document, version, params, library, out)
}

/// [`export_system`] of a document already read (the SSP export hands it a network it
/// derived from the file: the signal blocks taken out).
pub fn export_document(
    document: &crate::pipeline::Document,
    version: FmiVersion,
    params: &[String],
    library: impl FnOnce() -> Result<PathBuf, String>,
    out: &Path,
) -> Result<(String, String), String> {
    let shown = document.file.display().to_string();
    // An FMU-only system ("fmus") goes in as the network of signal blocks the engine runs it
    // as (stiction_fmi_master::translate); the paths of --param are then that network's.
    let doc: Value = document.network_value().map_err(|e| match document.dialect {
        crate::pipeline::Dialect::FmuOnly => format!("{shown}: this FMU-only system cannot be exported: {e}"),
        _ => e.to_string(),
    })?;
    let loaded = document.system().map_err(|e| e.to_string())?.system;
    let name = loaded.name.clone();
    // The output interval as the run rounds it: a whole number of steps (at least one).
    let (step, stop_time) = (loaded.step, loaded.stop_time);
    let interval = (loaded.interval / step).round().max(1.0) * step;
    let inputs: Vec<Signal> = loaded
        .inputs
        .iter()
        .map(|(n, s)| Signal {
            name: n.clone(),
            start: s.start,
            unit: s.unit.clone().unwrap_or_default(),
            description: s.description.clone().unwrap_or_default(),
        })
        .collect();
    let mut parameters: Vec<Parameter> = Vec::new();
    for (n, p) in &loaded.parameters {
        let start = value_at(&doc, &p.set, &format!("{shown}: parameters.{n}.set"))?;
        parameters.push(Parameter {
            name: n.clone(),
            set: p.set.clone(),
            start,
            unit: p.unit.clone().unwrap_or_default(),
            description: p.description.clone().unwrap_or_else(|| format!("--set {}", p.set)),
        });
    }
    for arg in params {
        let (n, set) = arg
            .split_once('=')
            .map(|(a, b)| (a.trim(), b.trim()))
            .filter(|(a, b)| !a.is_empty() && !b.is_empty())
            .ok_or_else(|| format!("--param {arg}: expected NAME=SETPATH for a system (e.g. F_brake=brake.law.F)"))?;
        if n.contains(['.', '[']) {
            return Err(format!("--param {arg}: the name {n:?} has no '.' or '['"));
        }
        let start = value_at(&doc, set, &format!("--param {arg}"))?;
        parameters.retain(|p| p.name != n);
        parameters.push(Parameter {
            name: n.to_string(),
            set: set.to_string(),
            start,
            unit: String::new(),
            description: format!("--set {set}"),
        });
    }
    // Each parameter's path must be one the loader accepts: load once with every one set.
    if !parameters.is_empty() {
        let sets: Vec<String> = parameters.iter().map(|p| format!("{}={:?}", p.set, p.start)).collect();
        let mut edited = document.clone();
        edited.edit_sets(&sets).and_then(|()| edited.system()).map_err(|e| e.to_string())?;
    }
    let wires: Vec<(String, String)> = loaded.wires.iter().map(|w| (w.name.clone(), w.path.clone())).collect();
    let input_names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let (sim, plan) = loaded.into_simulator(1).map_err(|e| e.in_file(shown.clone()).to_string())?;
    let outputs: Vec<Signal> = columns(&sim, &plan)
        .into_iter()
        .map(|c| Signal { name: c.label, start: 0.0, unit: c.unit, description: c.description })
        .collect();
    let feedthrough = stiction_framework::output::feedthrough::input_dependencies(&sim, &plan, &wires, &input_names);
    drop(sim);
    // Names are unique across the three kinds and never `time`.
    let mut seen = std::collections::HashSet::new();
    seen.insert("time".to_string());
    for n in
        parameters.iter().map(|p| &p.name).chain(inputs.iter().map(|i| &i.name)).chain(outputs.iter().map(|o| &o.name))
    {
        if !seen.insert(n.clone()) {
            return Err(format!("{shown}: two FMU variables would be called {n:?} (parameters, inputs and output labels need distinct names, and none is 'time')"));
        }
    }
    // The system and the files it names.
    let base = document.base_dir.clone();
    let mut rewritten = doc.clone();
    let mut g = Gather { base: &base, files: Vec::new() };
    g.walk(&mut rewritten, "").map_err(|e| format!("{shown}: {}", e.trim_start_matches('.')))?;
    let mut files: Vec<(String, Vec<u8>)> =
        vec![(SYSTEM.to_string(), serde_json::to_string_pretty(&rewritten).map_err(|e| e.to_string())?.into_bytes())];
    for (n, p) in &g.files {
        files.push((n.clone(), std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?));
    }
    let identifier = identifier(&name);
    let manifest = Manifest {
        format: FORMAT,
        identifier: identifier.clone(),
        description: doc
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("stiction system {name}")),
        files: files.iter().map(|(n, _)| n.clone()).collect(),
        step,
        stop_time,
        interval,
        parameters,
        inputs,
        outputs,
        fmi: match version {
            FmiVersion::V2 => 2,
            FmiVersion::V3 => 3,
        },
    };
    let manifest_text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, d)| (n.as_str(), d.as_slice())).collect();
    let token = token(&manifest_text, &refs);
    let xml = model_description(&manifest, version, &token, &feedthrough);
    let binary = library()?;
    let binary = std::fs::read(&binary).map_err(|e| format!("{}: {e}", binary.display()))?;
    let mut entries = vec![
        Entry { name: "modelDescription.xml".into(), data: xml.into_bytes(), executable: false },
        Entry { name: format!("binaries/{}/{identifier}.so", version.platform()), data: binary, executable: true },
        Entry { name: format!("resources/{MANIFEST}"), data: manifest_text.into_bytes(), executable: false },
        Entry {
            name: "documentation/index.html".into(),
            data: documentation(&manifest).into_bytes(),
            executable: false,
        },
    ];
    for (n, d) in files {
        entries.push(Entry { name: format!("resources/{n}"), data: d, executable: false });
    }
    write_fmu(out, &entries)?;
    Ok((identifier, token))
}

/// `<LogCategories>` (the binary logs under these names).
const LOG_CATEGORIES: &[(&str, &str)] = &[
    ("logEvents", "debug messages"),
    ("logStatusWarning", "warnings"),
    ("logStatusDiscard", "discarded calls"),
    ("logStatusError", "errors: illegal calls, invalid arguments, failed steps"),
    ("logStatusFatal", "fatal errors"),
];

/// Unit and description of a variable as the description writes them.
fn described(unit: &str, description: &str) -> (String, String) {
    match fmi_unit(unit) {
        Some((u, _)) => (u, description.to_string()),
        None if unit.is_empty() => (String::new(), description.to_string()),
        None => (String::new(), format!("{description} [{unit}]").trim_start().to_string()),
    }
}

/// One variable of a system FMU as modelDescription.xml and the binary see it.
#[derive(Clone, Debug, PartialEq)]
pub struct FmuVariable {
    pub name: String,
    pub vr: u32,
    pub causality: Causality,
    pub variability: Variability,
    pub initial: Option<Initial>,
    pub start: Option<f64>,
    /// As FMI writes it ("" for none).
    pub unit: String,
    pub description: String,
}

/// The variable table of a manifest, in value-reference order.
pub fn variables(m: &Manifest) -> Vec<FmuVariable> {
    let var = |name: &str, vr: usize, causality, variability, initial, start, (unit, description)| FmuVariable {
        name: name.to_string(),
        vr: vr as u32,
        causality,
        variability,
        initial,
        start,
        unit,
        description,
    };
    let mut v = vec![var(
        "time",
        0,
        Causality::Independent,
        Variability::Continuous,
        None,
        None,
        ("s".to_string(), "simulation time".to_string()),
    )];
    for (k, p) in m.parameters.iter().enumerate() {
        let d = described(&p.unit, &p.description);
        v.push(var(&p.name, 1 + k, Causality::Parameter, Variability::Fixed, Some(Initial::Exact), Some(p.start), d));
    }
    for (k, i) in m.inputs.iter().enumerate() {
        let d = described(&i.unit, &i.description);
        v.push(var(&i.name, m.first_input() + k, Causality::Input, Variability::Continuous, None, Some(i.start), d));
    }
    for (k, o) in m.outputs.iter().enumerate() {
        let d = described(&o.unit, &o.description);
        let calculated = Some(Initial::Calculated);
        v.push(var(&o.name, m.first_output() + k, Causality::Output, Variability::Continuous, calculated, None, d));
    }
    v
}

/// modelDescription.xml of a manifest.
/// The modelDescription.xml of an exported system; `feedthrough`: per output (manifest
/// order) the inputs it depends on at the same instant (None: every input), written as the
/// outputs' `dependencies` (output/feedthrough.rs).
pub fn model_description(m: &Manifest, version: FmiVersion, token: &str, feedthrough: &[Option<Vec<usize>>]) -> String {
    let vars = variables(m);
    let mut units: Vec<(String, [i32; 4])> = Vec::new();
    for v in &vars {
        if let Some(u) = fmi_unit(&v.unit) {
            if !units.iter().any(|x| x.0 == u.0) {
                units.push(u);
            }
        }
    }
    let unit_refs: Vec<(&str, [i32; 4])> = units.iter().map(|(n, e)| (n.as_str(), *e)).collect();
    let variables = vars
        .iter()
        .map(|v| ScalarVariable {
            name: &v.name,
            vr: v.vr,
            ty: VarType::Float64,
            causality: v.causality,
            variability: v.variability,
            initial: v.initial,
            start: v.start,
            unit: &v.unit,
            description: &v.description,
            nominal: None,
            derivative_of: None,
        })
        .collect();
    let tool = concat!("stiction ", env!("CARGO_PKG_VERSION"));
    let dependencies: Vec<(u32, Vec<u32>)> = feedthrough
        .iter()
        .enumerate()
        .filter_map(|(k, d)| {
            let d = d.as_ref()?;
            Some(((m.first_output() + k) as u32, d.iter().map(|&i| (m.first_input() + i) as u32).collect()))
        })
        .collect();
    Description {
        version,
        interfaces: Interfaces { model_exchange: false, co_simulation: true },
        model_name: &m.identifier,
        token,
        description: &m.description,
        generation_tool: tool,
        model_exchange: Capabilities::default(),
        // A remainder of H over the solver step is refused, but H may change from step to
        // step (any whole number of steps). The whole simulation is saved in FMU states.
        co_simulation: Capabilities {
            variable_step: true,
            can_get_and_set_state: true,
            can_serialize_state: true,
            ..Capabilities::default()
        },
        event_indicators: 0,
        units: &unit_refs,
        log_categories: LOG_CATEGORIES,
        default_experiment: DefaultExperiment {
            start_time: Some(0.0),
            stop_time: Some(m.stop_time),
            tolerance: None,
            step_size: Some(m.interval),
        },
        variables,
        derivatives: Vec::new(),
        indicators: Vec::new(),
        dependencies: dependencies.clone(),
        // At initialization an output also depends on the parameters (exact start values).
        initial_dependencies: dependencies
            .into_iter()
            .map(|(o, mut d)| {
                d.splice(0..0, (1..m.first_input()).map(|p| p as u32));
                (o, d)
            })
            .collect(),
    }
    .to_xml()
}

/// documentation/index.html: what the FMU is and its variables.
fn documentation(m: &Manifest) -> String {
    let mut rows = String::new();
    for v in variables(m) {
        rows.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            escape(&v.name),
            v.vr,
            v.causality,
            v.start.map(stiction_fmi_schema::write::number).unwrap_or_default(),
            escape(&v.unit),
            escape(&v.description)
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{id}</title></head><body>\n<h1>{id}</h1>\n<p>{desc}</p>\n\
         <p>A stiction system as a Co-Simulation FMU. The solver step is T = {step} s: a communication point on the \
         solver's grid (within rounding) is reached with the steps <code>stiction run</code> takes, one between two grid points with a \
         shortened last step. Inputs are held over each doStep; the outputs at a communication \
         point equal <code>stiction run</code>'s row at that instant. The system is <code>resources/{SYSTEM}</code>.</p>\n\
         <h2>Variables</h2>\n<table border=\"1\">\n<tr><th>name</th><th>value reference</th><th>causality</th><th>start</th><th>unit</th><th>description</th></tr>\n\
         {rows}</table>\n<p>Exported by stiction {ver}.</p>\n</body></html>\n",
        id = escape(&m.identifier),
        desc = escape(&m.description),
        step = m.step,
        ver = env!("CARGO_PKG_VERSION"),
    )
}

/// Where the system binary is: `$STICTION_FMU_SYSTEM_LIBRARY`, else next to the running
/// executable (as [`stiction_fmus::find_library`] looks for the model binary).
pub fn find_library() -> Result<PathBuf, String> {
    stiction_fmus::package::find_named(LIBRARY, "STICTION_FMU_SYSTEM_LIBRARY", "stiction-fmu-system")
}

// ---- the binary's side ----

/// A system simulated for an FMU instance: built from the resources with the parameters'
/// values, stepped with the inputs held, its output signals read as a run reads a row.
pub struct Running {
    pub sim: Simulator,
    pub plan: RunPlan,
    targets: ProbeTargets,
    /// The parameter values it was built with.
    pub params: Vec<f64>,
    /// The inputs as last set (NaN: not yet).
    inputs: Vec<f64>,
    /// The components that may ask to end the run (Simulator::stop_sources).
    stoppers: Vec<(bool, usize)>,
    /// A component asked to end the run: when and who (the doStep that saw it ended there).
    pub stopped: Option<String>,
}

impl Running {
    /// Build the system in `dir` (the FMU's resources) with the parameter values `params`.
    pub fn build(dir: &Path, m: &Manifest, params: &[f64]) -> Result<Running, String> {
        let file = dir.join(SYSTEM);
        let sets: Vec<String> = m
            .parameters
            .iter()
            .zip(params)
            .filter(|(p, x)| p.start.to_bits() != x.to_bits())
            .map(|(p, x)| format!("{}={x:?}", p.set))
            .collect();
        let options = crate::Options { sets, ..Default::default() };
        let system: System = crate::open(&file, &options).map_err(|e| e.to_string())?.system;
        let (sim, plan) = system.into_simulator(1).map_err(|e| e.to_string())?;
        let targets = sim.probe_targets(plan.columns.iter().map(|c| &c.1));
        if plan.columns.len() != m.outputs.len() {
            return Err(format!(
                "the system has {} output signals, the manifest {}",
                plan.columns.len(),
                m.outputs.len()
            ));
        }
        let stoppers = sim.stop_sources();
        Ok(Running {
            sim,
            plan,
            targets,
            params: params.to_vec(),
            inputs: vec![f64::NAN; m.inputs.len()],
            stoppers,
            stopped: None,
        })
    }

    /// Hold the inputs `u` (in manifest order) from now on.
    pub fn set_inputs(&mut self, m: &Manifest, u: &[f64]) -> Result<(), String> {
        for ((spec, x), last) in m.inputs.iter().zip(u).zip(self.inputs.iter_mut()) {
            if x.to_bits() != last.to_bits() {
                self.sim.set_input(&spec.name, TimeFunction::Constant(*x)).map_err(|e| e.to_string())?;
                *last = *x;
            }
        }
        Ok(())
    }

    /// Forget which inputs were set (after a restored state, whose held inputs are the
    /// simulator's): the next [`set_inputs`](Self::set_inputs) sets them all.
    pub fn forget_inputs(&mut self) {
        self.inputs.iter_mut().for_each(|x| *x = f64::NAN);
    }

    /// The output signals now, as `stiction run` writes a row.
    pub fn outputs(&mut self, out: &mut [f64]) -> Result<(), String> {
        self.sim.probe_only(&self.targets).map_err(|e| e.to_string())?;
        for (o, (_, r)) in out.iter_mut().zip(&self.plan.columns) {
            *o = self.sim.value(r);
        }
        Ok(())
    }

    /// The doStep from the communication point `time` over `h`: the solver steps of T up
    /// to `time + h`. Communication points are counted from absolute time on the solver's
    /// grid (t_k = k·T + the start time), so a master that adds its steps (t += h) and ends
    /// a step within rounding of a grid point (|time + h − t_k| ≤ 1e-6·T) ends there, and a
    /// residue step of a few 1e-14 s after a grid point is no step at all. An end between two
    /// grid points is reached exactly: the whole steps to the last grid point before it, then
    /// one shortened step ([`Simulator::step_short`], the stage sizes τ of the shorter step);
    /// the grid goes on from there. Grid-aligned steps take exactly the steps `stiction run`
    /// takes (the same bits).
    pub fn advance(&mut self, time: f64, h: f64) -> Result<(), String> {
        let t = self.sim.step_size();
        let now = self.sim.steps_taken();
        let shift = self.sim.time_shift();
        let end = time + h;
        if !(end.is_finite() && h > 0.0) {
            return Err(format!("the communication step {h} s from t = {time} s is not a positive finite step"));
        }
        // Grid points are t_k = k·T + shift.
        let k = ((end - shift) / t).round();
        let (whole, short) = if (k * t + shift - end).abs() <= GRID_TOLERANCE * t {
            (k, 0.0)
        } else {
            let below = ((end - shift) / t).floor();
            (below, end - (below * t + shift))
        };
        // The FMI layer has checked that `time` is where the last doStep ended.
        let n = whole - now as f64;
        if n < 0.0 {
            return Err(format!("the communication step {h} s from t = {time} s ends before the FMU's time"));
        }
        let sched = self.sim.schedule();
        let components = sched.admittance_names().len() + sched.impedance_names().len() + sched.block_names().len();
        let budget = step_budget(components);
        if n > budget as f64 {
            return Err(format!(
                "the communication step {h} s is {n:e} solver steps; this system of {components} components takes \
                 at most {budget} per doStep ({MAX_COMPONENT_STEPS_PER_DOSTEP:e} component steps): use shorter steps"
            ));
        }
        if let Some(why) = &self.stopped {
            return Err(format!("the simulation has ended: {why}"));
        }
        let steps = (0..n as u64).map(|_| None).chain((short > 0.0).then_some(Some(short)));
        for length in steps {
            let stepped = match length {
                None => self.sim.step(),
                Some(h) => self.sim.step_short(h),
            };
            // A component's request to end the run (an imported FMU's terminateSimulation,
            // a component's stop) ends this doStep at the time reached: the FMI layer then
            // reports it ([`Running::stopped`]). A failure after a request is the request.
            if let Some(why) = self.sim.stop_requested(&self.stoppers) {
                self.stopped = Some(why);
                return Ok(());
            }
            stepped.map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Start the simulation at `t0` (the experiment's start time): the solver's grid is
    /// t0 + k·T and time functions see absolute time. Only before the first step.
    pub fn start_at(&mut self, t0: f64) -> Result<(), String> {
        if self.sim.steps_taken() != 0 {
            return Err(format!("the start time {t0} s is set after the simulation has stepped"));
        }
        self.sim.set_time_shift(t0);
        Ok(())
    }

    /// The time the simulation has reached.
    pub fn time(&self) -> f64 {
        self.sim.time()
    }

    /// Whether the simulation is at the FMU's time `time`: its grid point k·T + shift within
    /// the tolerance [`advance`](Self::advance) matches communication points with.
    pub fn at_time(&self, time: f64) -> Result<(), String> {
        let now = self.sim.time();
        let tol = GRID_TOLERANCE * self.sim.step_size() + 4.0 * f64::EPSILON * time.abs().max(now.abs());
        if (now - time).abs() <= tol {
            Ok(())
        } else {
            Err(format!("the state's FMU time {time} s is not its simulation's time {now} s"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_budget_shrinks_with_the_system() {
        assert_eq!(step_budget(0), MAX_STEPS_PER_DOSTEP);
        assert_eq!(step_budget(3), MAX_STEPS_PER_DOSTEP);
        assert_eq!(step_budget(3000), 33_333);
        assert_eq!(step_budget(1_000_000_000), 1);
    }

    #[test]
    fn identifiers_and_units() {
        assert_eq!(identifier("drivetrain-worm brake"), "drivetrain_worm_brake");
        assert_eq!(identifier("2link"), "system_2link");
        assert_eq!(fmi_unit("N·m").map(|u| u.0), Some("N.m".to_string()));
        assert_eq!(fmi_unit("kg·m²").map(|u| u.0), Some("kg.m2".to_string()));
        assert_eq!(fmi_unit("furlong"), None);
    }

    #[test]
    fn a_manifest_naming_files_outside_resources_is_refused() {
        let m = |files: &str| {
            format!(
                r#"{{"format": 1, "identifier": "x", "description": "", "files": {files}, "step": 0.001,
                "stop_time": 1, "interval": 0.001, "parameters": [], "inputs": [], "outputs": []}}"#
            )
        };
        assert!(Manifest::parse(&m(r#"["system.json", "files/0_a.csv"]"#)).is_ok());
        for bad in [r#"["system.json", "../x"]"#, r#"["system.json", "/etc/passwd"]"#, r#"["other.json"]"#, "[]"] {
            assert!(Manifest::parse(&m(bad)).is_err(), "{bad}");
        }
        assert!(Manifest::parse(&m(r#"["system.json"]"#).replace("\"format\": 1", "\"format\": 2")).is_err());
    }

    #[test]
    fn the_token_changes_with_any_byte() {
        let a = token("{}", &[("system.json", b"{\"a\": 1}")]);
        assert_eq!(a, token("{}", &[("system.json", b"{\"a\": 1}")]));
        assert_ne!(a, token("{}", &[("system.json", b"{\"a\": 2}")]));
        assert_ne!(a, token("{ }", &[("system.json", b"{\"a\": 1}")]));
        assert_ne!(a, token("{}", &[("system2.json", b"{\"a\": 1}")]));
    }
}
