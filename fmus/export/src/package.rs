//! Packaging: an .fmu is a zip of modelDescription.xml, the platform binary, the start
//! values the binary reads (resources/stiction-start.txt) and documentation/index.html.

use crate::instance::models;
use crate::model::{guid, start_file, Interface, ModelInfo, Type};
use crate::xml::{escape, model_description, number, FmiVersion, Interfaces};
use std::io::Write;
use std::path::{Path, PathBuf};

/// File name of the shared library cargo builds for this crate.
pub const LIBRARY: &str = "libstiction_fmus.so";

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
            Type::Boolean => match value {
                "true" | "1" => 1.0,
                "false" | "0" => 0.0,
                _ => return Err(format!("--param {name}: expected true or false, got {value:?}")),
            },
            Type::Integer => value
                .parse::<i32>()
                .map(f64::from)
                .map_err(|_| format!("--param {name}: expected an integer, got {value:?}"))?,
            Type::Real => match value.parse::<f64>() {
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
        model_description(self.model, self.version, self.interfaces, &self.starts, &self.guid())
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
        let platform = match self.version {
            FmiVersion::V2 => "linux64",
            FmiVersion::V3 => "x86_64-linux",
        };
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut zip = zip::ZipWriter::new(file);
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        let exe = opts.unix_permissions(0o755);
        let entries: [(String, Vec<u8>, zip::write::SimpleFileOptions); 4] = [
            ("modelDescription.xml".into(), self.model_description().into_bytes(), opts),
            (format!("binaries/{platform}/{}.so", self.model.identifier), binary, exe),
            ("resources/stiction-start.txt".into(), start_file(self.model, &self.starts).into_bytes(), opts),
            ("documentation/index.html".into(), self.documentation().into_bytes(), opts),
        ];
        for (name, data, o) in entries {
            zip.start_file(name.as_str(), o).map_err(|e| format!("{}: {e}", out.display()))?;
            zip.write_all(&data).map_err(|e| format!("{}: {e}", out.display()))?;
        }
        zip.finish().map_err(|e| format!("{}: {e}", out.display()))?;
        Ok(())
    }
}

/// Where the FMU binary is: `$STICTION_FMU_LIBRARY`, else the newest of
/// `<exe dir>/libstiction_fmus.so` (after `cargo build --release --workspace`),
/// `<exe dir>/deps/` (where `cargo test` leaves it) and `<exe dir>/..` (test binaries).
pub fn find_library() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("STICTION_FMU_LIBRARY") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("STICTION_FMU_LIBRARY={} does not exist", p.display())) };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate the running executable: {e}"))?;
    let mut looked = Vec::new();
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    if let Some(dir) = exe.parent() {
        for p in [dir.join(LIBRARY), dir.join("deps").join(LIBRARY), dir.join("..").join(LIBRARY)] {
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
        "the FMU binary {LIBRARY} is missing (looked at {}); build it with `cargo build --release --workspace` \
         (or `cargo build --release -p stiction-fmus`), or set STICTION_FMU_LIBRARY to its path",
        looked.join(", ")
    ))
}
