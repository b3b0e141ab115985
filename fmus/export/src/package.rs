//! Packaging: an .fmu is a zip of modelDescription.xml, the platform binary, the start
//! values the binary reads (resources/stiction-start.txt) and documentation/index.html.

use crate::instance::models;
use crate::model::{guid, start_file, Interface, ModelInfo, Role, VarType, UNITS};
use std::path::{Path, PathBuf};
use stiction_fmi_schema::write::{escape, number, write_fmu, Description, Entry, ScalarVariable};
use stiction_fmi_schema::{Capabilities, Causality, DefaultExperiment, FmiVersion, Interfaces};

/// File name of the shared library cargo builds for this crate.
pub const LIBRARY: &str = "libstiction_fmus.so";

/// `<LogCategories>` of every exported model (the binary logs under these names).
const LOG_CATEGORIES: &[(&str, &str)] = &[
    ("logEvents", "events of the hybrid model (debug logging)"),
    ("logStatusWarning", "warnings"),
    ("logStatusDiscard", "discarded calls"),
    ("logStatusError", "errors: illegal calls, invalid arguments, failed steps"),
    ("logStatusFatal", "fatal errors"),
];

/// What to export.
#[derive(Clone, Debug)]
pub struct Export {
    pub model: &'static ModelInfo,
    pub version: FmiVersion,
    pub interfaces: Interfaces,
    /// One start value per value reference.
    pub starts: Vec<f64>,
}

/// The model with this CLI name (`gear`, `friction`, `friction-mass`) or identifier.
pub fn find_model(name: &str) -> Option<&'static ModelInfo> {
    models().into_iter().map(|m| m.info()).find(|i| i.cli_name == name || i.identifier == name)
}

impl Export {
    pub fn new(model: &'static ModelInfo, version: FmiVersion, interfaces: Interfaces) -> Result<Export, String> {
        if interfaces.model_exchange && !model.model_exchange {
            return Err(format!("{} has no Model Exchange form; export it with --interface cs", model.identifier));
        }
        if interfaces.model_exchange && model.indicators().len() != model.event_indicators {
            return Err(format!(
                "{} declares {} event indicators but has {} indicator variables",
                model.identifier,
                model.event_indicators,
                model.indicators().len()
            ));
        }
        if !interfaces.model_exchange && !interfaces.co_simulation {
            return Err("no interface selected".into());
        }
        Ok(Export { model, version, interfaces, starts: model.defaults() })
    }

    /// Apply `NAME=VALUE` to a parameter's (or input's or state's) start value.
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) =
            assignment.split_once('=').ok_or_else(|| format!("--param {assignment:?}: expected NAME=VALUE"))?;
        let (name, value) = (name.trim(), value.trim());
        let i = self.model.find(name).ok_or_else(|| {
            let names: Vec<&str> = self.model.variables.iter().filter(|v| v.has_start()).map(|v| v.name).collect();
            format!("--param {name}: {} has no variable {name}; settable: {}", self.model.identifier, names.join(", "))
        })?;
        let var = &self.model.variables[i];
        if !var.has_start() {
            return Err(format!("--param {name}: {name} is calculated by the model and has no start value"));
        }
        let x = match var.ty {
            VarType::Boolean => match value {
                "true" | "1" => 1.0,
                "false" | "0" => 0.0,
                _ => return Err(format!("--param {name}: expected true or false, got {value:?}")),
            },
            VarType::Int32 => value
                .parse::<i32>()
                .map(f64::from)
                .map_err(|_| format!("--param {name}: expected an integer, got {value:?}"))?,
            _ => match value.parse::<f64>() {
                Ok(x) if x.is_finite() => x,
                _ => return Err(format!("--param {name}: expected a finite number, got {value:?}")),
            },
        };
        self.starts[i] = x;
        // Efficiencies given: use them.
        if matches!(name, "eta_f" | "eta_b") {
            if let Some(u) = self.model.find("use_efficiency") {
                self.starts[u] = 1.0;
            }
        }
        Ok(())
    }

    /// Check the start values with the model's own initialization.
    pub fn validate(&self) -> Result<(), String> {
        let model =
            models().into_iter().find(|m| m.info().identifier == self.model.identifier).ok_or("unknown model")?;
        let mut v = self.starts.clone();
        let interface = if self.interfaces.co_simulation { Interface::CoSimulation } else { Interface::ModelExchange };
        model.initialize(&mut v, interface)?;
        if self.interfaces.model_exchange {
            let mut v = self.starts.clone();
            model.initialize(&mut v, Interface::ModelExchange)?;
        }
        Ok(())
    }

    pub fn guid(&self) -> String {
        guid(self.model, &self.starts)
    }

    pub fn model_description(&self) -> String {
        let token = self.guid();
        let tool = concat!("stiction ", env!("CARGO_PKG_VERSION"));
        self.description(&token, tool).to_xml()
    }

    /// The variables the description lists: the Model-Exchange-only ones only when Model
    /// Exchange is declared.
    fn listed(&self) -> Vec<usize> {
        let vars = self.model.variables;
        (0..vars.len()).filter(|&i| self.interfaces.model_exchange || !vars[i].me_only()).collect()
    }

    /// Nominal value of each state variable (by value reference), from the model at the start
    /// values; 1 (not written) when the model gives none.
    fn nominals(&self) -> Vec<(usize, f64)> {
        let states = self.model.states();
        let mut n = vec![1.0; states.len()];
        if let Some(m) = models().into_iter().find(|m| m.info().identifier == self.model.identifier) {
            m.nominals(&self.starts, &mut n);
        }
        states.into_iter().zip(n).collect()
    }

    /// modelDescription.xml's content, from the model's variable table and the start values.
    fn description<'a>(&'a self, token: &'a str, tool: &'a str) -> Description<'a> {
        let m = self.model;
        let nominals = self.nominals();
        let variables = self
            .listed()
            .into_iter()
            .map(|vr| {
                let v = &m.variables[vr];
                ScalarVariable {
                    name: v.name,
                    vr: vr as u32,
                    ty: v.ty,
                    causality: v.causality(),
                    variability: v.variability(),
                    initial: v.initial(),
                    start: v.has_start().then(|| self.starts[vr]),
                    unit: v.unit,
                    description: v.description,
                    nominal: nominals.iter().find(|(s, _)| *s == vr).map(|(_, n)| *n).filter(|n| *n != 1.0),
                    derivative_of: match v.role {
                        Role::Derivative(state) => Some(state),
                        _ => None,
                    },
                }
            })
            .collect();
        let me = self.interfaces.model_exchange;
        let vrs = |v: Vec<usize>| v.into_iter().map(|vr| vr as u32).collect();
        // Every instance can save, restore and serialize its state; nothing else optional.
        let caps = Capabilities { can_get_and_set_state: true, can_serialize_state: true, ..Capabilities::default() };
        Description {
            version: self.version,
            interfaces: self.interfaces,
            model_name: m.identifier,
            token,
            description: m.description,
            generation_tool: tool,
            model_exchange: caps,
            co_simulation: Capabilities { variable_step: true, ..caps },
            event_indicators: m.event_indicators,
            units: UNITS,
            log_categories: LOG_CATEGORIES,
            default_experiment: DefaultExperiment {
                start_time: Some(0.0),
                stop_time: Some(m.default_stop),
                tolerance: None,
                step_size: Some(m.default_step),
            },
            variables,
            derivatives: if me { vrs(m.derivatives()) } else { Vec::new() },
            indicators: if me { vrs(m.indicators()) } else { Vec::new() },
            // Co-Simulation alone: an output is what the last doStep computed (setting an
            // input changes no output until the next doStep), so it depends on no input at
            // the same communication point: dependencies="" (a master sees no algebraic loop
            // between two such FMUs). With Model Exchange the outputs read their inputs
            // through the τ → 0 form: no attribute (every input), as FMI reads its absence.
            dependencies: if me {
                Vec::new()
            } else {
                m.variables
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.causality() == Causality::Output && !v.me_only())
                    .map(|(vr, _)| (vr as u32, Vec::new()))
                    .collect()
            },
            initial_dependencies: Vec::new(),
        }
    }

    /// documentation/index.html: the model's text and its variable table.
    pub fn documentation(&self) -> String {
        let m = self.model;
        let mut rows = String::new();
        for (vr, v) in m.variables.iter().enumerate() {
            if v.me_only() && !self.interfaces.model_exchange {
                continue;
            }
            let start = if v.has_start() { number(self.starts[vr]) } else { String::new() };
            rows.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{vr}</td><td>{:?}</td><td>{start}</td><td>{}</td><td>{}</td></tr>\n",
                escape(v.name),
                v.causality(),
                escape(v.unit),
                escape(v.description)
            ));
        }
        format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{id}</title></head><body>\n<h1>{id}</h1>\n\
             <p>{desc}</p>\n{doc}\n<h2>Variables</h2>\n<table border=\"1\">\n\
             <tr><th>name</th><th>value reference</th><th>causality</th><th>start</th><th>unit</th><th>description</th></tr>\n\
             {rows}</table>\n<p>Exported by stiction {ver}.</p>\n</body></html>\n",
            id = m.identifier,
            desc = escape(m.description),
            doc = m.documentation,
            ver = env!("CARGO_PKG_VERSION"),
        )
    }

    /// Write the .fmu to `out`, taking the platform binary from `library`.
    pub fn write(&self, library: &Path, out: &Path) -> Result<(), String> {
        self.validate()?;
        let binary = std::fs::read(library).map_err(|e| format!("{}: {e}", library.display()))?;
        let entry = |name: String, data: Vec<u8>, executable: bool| Entry { name, data, executable };
        let entries = [
            entry("modelDescription.xml".into(), self.model_description().into_bytes(), false),
            entry(format!("binaries/{}/{}.so", self.version.platform(), self.model.identifier), binary, true),
            entry("resources/stiction-start.txt".into(), start_file(self.model, &self.starts).into_bytes(), false),
            entry("documentation/index.html".into(), self.documentation().into_bytes(), false),
        ];
        write_fmu(out, &entries)
    }
}

/// Where the FMU binary is: `$STICTION_FMU_LIBRARY`, else the newest of
/// `<exe dir>/libstiction_fmus.so` (after `cargo build --release --workspace`),
/// `<exe dir>/deps/` (where `cargo test` leaves it) and `<exe dir>/..` (test binaries).
pub fn find_library() -> Result<PathBuf, String> {
    find_named(LIBRARY, "STICTION_FMU_LIBRARY", "stiction-fmus")
}

/// [`find_library`] for the library file `library` of the package `package`, overridden by
/// the environment variable `env`.
pub fn find_named(library: &str, env: &str, package: &str) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(env) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("{env}={} does not exist", p.display())) };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the running executable: {e}"))?;
    let mut looked = Vec::new();
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    if let Some(dir) = exe.parent() {
        for p in [dir.join(library), dir.join("deps").join(library), dir.join("..").join(library)] {
            if let Ok(t) = std::fs::metadata(&p).and_then(|m| m.modified()) {
                if best.as_ref().is_none_or(|(b, _)| t > *b) {
                    best = Some((t, p.clone()));
                }
            }
            looked.push(p.display().to_string());
        }
    }
    if let Some((_, p)) = best {
        return Ok(p);
    }
    Err(format!(
        "the FMU binary {library} is missing (looked at {}); build it with `cargo build --release --workspace` \
         (or `cargo build --release -p {package}`), or set {env} to its path",
        looked.join(", ")
    ))
}
