//! The one way a system file becomes a simulation. Every caller (`run`, `check`, `graph`,
//! sweeps and studies, `fmu run`, `fmu export`, the system FMU, Python) goes through these
//! stages, in the order the data flows:
//!
//! ```text
//! Source::read(path)          the file's bytes, read once (size-limited, a regular file)
//!   → Dialect::of             what language it speaks: a network, an FMU-only system, an .fmu
//!   → Document                parsed once; knows the file, its directory and its positions
//!   → Document::edit(Opt)     --set / --vary values, errors naming the option and JSON path
//!   → Document::system        the checked specification read into a `System` (Loaded)
//!   → Loaded::simulator       the compiled `Simulator` and its run plan
//! ```
//!
//! [`open`] runs the first four stages with the [`Options`] of a command; [`load`] is its
//! shorthand without options.

use crate::set::{self, Assignment, Doc, Editable, SetError};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use stiction_fmi_import::archive::Archive;
use stiction_fmi_import::Causality;
use stiction_fmi_master::{is_fmu_system, Translation};
use stiction_fmi_schema::VarType;
use stiction_framework::system::System;
use stiction_framework::RunPlan;
use stiction_framework::{Error, Result, Simulator};

/// What a command adds to a system file: `--set` assignments, and for a lone FMU the
/// experiment `fmpy simulate` would take from the command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--set PATH=VALUE`, in order.
    pub sets: Vec<String>,
    /// `run X.fmu`: `--stop-time`, `--step`, `--interface`.
    pub fmu: FmuOptions,
}

/// The experiment of a lone FMU (`stiction run X.fmu`); `None`: the FMU's DefaultExperiment.
#[derive(Clone, Debug, Default)]
pub struct FmuOptions {
    pub stop_time: Option<f64>,
    pub step: Option<f64>,
    /// `cs` or `me`; default: Co-Simulation when the FMU declares it.
    pub interface: Option<String>,
}

impl FmuOptions {
    fn is_set(&self) -> bool {
        self.stop_time.is_some() || self.step.is_some() || self.interface.is_some()
    }
}

/// The language of a system file, decided here and nowhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// A network of components (`"components"`, `"connections"`, ...).
    Network,
    /// An FMU-only system (a top-level `"fmus"`), translated into a network of signal blocks
    /// (stiction_fmi_master::translate).
    FmuOnly,
    /// One FMU simulated on its own (`X.fmu`), as `fmpy simulate` does.
    Fmu,
    /// An SSP package (`X.ssp`), or an unpacked one's `SystemStructure.ssd` with its files
    /// beside it: the SSD read into an FMU-only system ([`crate::ssp`]).
    Ssp,
}

impl Dialect {
    /// The dialect of `path` with the text `text` (`None`: not text, an .fmu).
    pub fn of(path: &Path, text: Option<&str>) -> Dialect {
        match text {
            None if is_fmu_path(path) => Dialect::Fmu,
            None if is_ssp_path(path) => Dialect::Ssp,
            Some(_) if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("ssd")) => Dialect::Ssp,
            Some(t) if is_fmu_system(t) => Dialect::FmuOnly,
            _ => Dialect::Network,
        }
    }
}

/// Whether `path` names an .fmu file.
pub fn is_fmu_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fmu"))
}

/// Whether `path` names an .ssp file.
pub fn is_ssp_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("ssp"))
}

/// Stage 1: a system file as read from disk.
pub struct Source {
    pub path: PathBuf,
    /// The file's text; `None` for an .fmu or .ssp (its archive is opened by
    /// [`Source::document`]).
    text: Option<String>,
}

impl Source {
    /// Read `path` once: a regular file within the loader's size limit (an .fmu is opened
    /// later, as an archive). Errors name the file; a zip archive that is not an .fmu says so.
    pub fn read(path: &Path) -> Result<Source> {
        if is_fmu_path(path) || is_ssp_path(path) {
            return Ok(Source { path: path.to_path_buf(), text: None });
        }
        let text = stiction_framework::system::read_system_file(path).map_err(|error| {
            let error = match error.kind() {
                std::io::ErrorKind::InvalidData if starts_like_zip(path) => std::io::Error::new(
                    error.kind(),
                    "a zip archive, not a JSON system file (an FMU is read when its name ends in .fmu, an SSP in .ssp)",
                ),
                std::io::ErrorKind::InvalidData => std::io::Error::new(
                    error.kind(),
                    format!("neither a JSON system file (it is not UTF-8 text: {error}) nor a zip archive (an .fmu, an .ssp)"),
                ),
                _ => error,
            };
            Error::Io { path: path.display().to_string(), error }
        })?;
        Ok(Source { path: path.to_path_buf(), text: Some(text) })
    }

    /// A system whose JSON text the caller holds (Python's `System(json)`), read as if it
    /// were the file `path`.
    pub fn from_text(path: &Path, text: String) -> Source {
        Source { path: path.to_path_buf(), text: Some(text) }
    }

    pub fn dialect(&self) -> Dialect {
        Dialect::of(&self.path, self.text.as_deref())
    }

    /// Stage 2: the parsed document (an .fmu: the one-component system that simulates it).
    pub fn document(self, fmu: &FmuOptions) -> Result<Document> {
        let dialect = self.dialect();
        if dialect != Dialect::Fmu && fmu.is_set() {
            return Err(Error::invalid(
                "options",
                "--stop-time, --step and --interface are for X.fmu; for a system use --set solver.stop_time=…",
            ));
        }
        let base_dir = set::base_dir(&self.path);
        let mut package = None;
        let body =
            match (dialect, self.text) {
                (Dialect::Fmu, _) => Body::Fmu(fmu_system_value(&self.path, fmu)?),
                (Dialect::Ssp, Some(text)) => {
                    let shown = self.path.display().to_string();
                    Body::Fmus(crate::ssp::translate(&text, &shown, &base_dir)?.value)
                }
                (Dialect::Ssp, _) => {
                    let shown = self.path.display().to_string();
                    let p = stiction_fmi_schema::Package::open(&self.path, &shown)
                        .map_err(|e| Error::invalid("(archive)", e.to_string()))?;
                    let ssp = crate::ssp::translate(&p.ssd, &shown, p.dir())?;
                    package = Some(std::sync::Arc::new(p));
                    Body::Fmus(ssp.value)
                }
                (Dialect::FmuOnly, Some(text)) => Body::Fmus(serde_json::from_str(&text).map_err(|e| {
                    Error::invalid("(top level)", e.to_string()).in_file(self.path.display().to_string())
                })?),
                (_, Some(text)) => Body::Text(text),
                (_, None) => unreachable!("only an .fmu has no text"),
            };
        Ok(Document { file: self.path, base_dir, dialect, body, applied: Vec::new(), package })
    }
}

/// An SSP's `--set` in the SSD's names, as a path of its FMU-only system: `COMPONENT.VAR=X`
/// sets a start value (`fmus.COMPONENT.parameters.VAR`), `stop_time=X` and `step=X` the
/// experiment (`master.…`); any other path is taken as it is.
fn ssp_name(v: &Value, arg: &str) -> String {
    let Some((path, value)) = arg.split_once('=') else { return arg.to_string() };
    let path = path.trim();
    if matches!(path, "stop_time" | "step") {
        return format!("master.{path}={value}");
    }
    match path.split_once('.') {
        Some((c, var)) if v["fmus"].get(c).is_some() => format!("fmus.{c}.parameters.{var}={value}"),
        _ => arg.to_string(),
    }
}

/// Whether the file starts with a zip archive's signature.
fn starts_like_zip(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"PK\x03\x04"
}

/// What a document holds.
#[derive(Clone)]
enum Body {
    /// A network's text, not yet indexed (a run without edits reads it as it is).
    Text(String),
    /// A network's text indexed for edits (set/doc.rs).
    Doc(Doc),
    /// An FMU-only system.
    Fmus(Value),
    /// The one-component system of a lone FMU.
    Fmu(Value),
}

/// Stage 2–3: a system document with the edits applied to it.
#[derive(Clone)]
pub struct Document {
    /// The file, as errors name it.
    pub file: PathBuf,
    /// The directory relative names (tables, FMUs) are taken from.
    pub base_dir: PathBuf,
    pub dialect: Dialect,
    body: Body,
    /// The assignments applied, each with its option (`--set`, `--vary`), to name the one
    /// behind a loader error.
    applied: Vec<(Assignment, &'static str)>,
    /// An SSP's unpacked archive, where its FMUs are, kept while the document and the
    /// systems loaded from it live.
    package: Option<std::sync::Arc<stiction_fmi_schema::Package>>,
}

/// One edit of a document, as a command line gives it.
#[derive(Clone, Copy, Debug)]
pub enum Opt<'a> {
    /// `--set PATH=VALUE` (`--param` values of a system FMU too).
    Set(&'a str),
    /// `--vary PATH=VALUE` of one run of a study.
    Vary(&'a str),
}

impl Opt<'_> {
    fn parts(&self) -> (&str, &'static str) {
        match *self {
            Opt::Set(a) => (a, "--set"),
            Opt::Vary(a) => (a, "--vary"),
        }
    }
}

impl Document {
    /// Read `path` and parse it (stages 1–2), for a file without FMU options.
    pub fn read(path: &Path) -> Result<Document> {
        Source::read(path)?.document(&FmuOptions::default())
    }

    /// The document of a system given as JSON text (Python's `System(json)`, a study's base
    /// sent to a worker), read as if it were the file `file` with relative names taken from
    /// `base_dir`; indexed for edits.
    pub fn from_text(file: &Path, base_dir: &Path, text: String) -> Result<Document> {
        let mut doc = Source::from_text(file, text).document(&FmuOptions::default())?;
        doc.base_dir = base_dir.to_path_buf();
        doc.index()?;
        Ok(doc)
    }

    /// The document as JSON text, with the edits' values in place.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match &self.body {
            Body::Text(text) => std::borrow::Cow::Borrowed(text),
            Body::Doc(doc) => doc.text(),
            Body::Fmus(v) | Body::Fmu(v) => std::borrow::Cow::Owned(v.to_string()),
        }
    }

    /// Index a network's text for edits (done once, before the first edit; a document that
    /// many runs edit, as a study's base, is indexed before it is cloned). Errors: the file
    /// is not a JSON object, as the loader would say.
    pub fn index(&mut self) -> Result<()> {
        if let Body::Text(text) = &mut self.body {
            let text = std::mem::take(text);
            match set::doc_of(&self.file, &text) {
                Ok(doc) => self.body = Body::Doc(doc),
                Err(e) => {
                    self.body = Body::Text(text);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Stage 3: apply one edit; an error names the argument (the loader's later errors at
    /// the path it set name it too).
    pub fn edit(&mut self, opt: Opt) -> std::result::Result<(), SetError> {
        let (arg, option) = opt.parts();
        self.index().map_err(|e| SetError { arg: arg.into(), message: e.to_string() })?;
        let a = match &mut self.body {
            Body::Doc(doc) => {
                let a = set::parse_assignment(doc, arg)?;
                doc.apply(&a)?;
                a
            }
            Body::Fmus(v) => {
                let ssp_arg;
                let arg = if self.dialect == Dialect::Ssp {
                    ssp_arg = ssp_name(v, arg);
                    ssp_arg.as_str()
                } else {
                    arg
                };
                let a = set::parse_assignment(v, arg)?;
                v.apply(&a)?;
                a
            }
            Body::Fmu(v) => {
                // A start value of the FMU's variable of that name.
                let (k, value) = arg
                    .split_once('=')
                    .ok_or_else(|| SetError { arg: arg.into(), message: "expected VARIABLE=VALUE".into() })?;
                let value = set::parse_value(value);
                v["components"]["fmu"]["parameters"][k.trim()] = value.clone();
                let path = vec![set::Segment::Key(k.trim().to_string())];
                Assignment { arg: arg.into(), name: k.trim().into(), path, value }
            }
            Body::Text(_) => unreachable!("indexed above"),
        };
        self.applied.push((a, option));
        Ok(())
    }

    /// [`Document::edit`] of every `--set` in `sets`; an error names the file and the option.
    pub fn edit_sets(&mut self, sets: &[String]) -> Result<()> {
        if !sets.is_empty() {
            self.index()?;
        }
        for s in sets {
            self.edit(Opt::Set(s)).map_err(|e| {
                Error::invalid(format!("--set {}", e.arg), e.message).in_file(self.file.display().to_string())
            })?;
        }
        Ok(())
    }

    /// Whether any edit was applied.
    pub fn is_edited(&self) -> bool {
        !self.applied.is_empty()
    }

    /// The network's JSON value (an FMU-only system: translated into its network of signal
    /// blocks), for readers of the document itself (the system FMU's export).
    pub fn network_value(&self) -> Result<Value> {
        match &self.body {
            Body::Text(text) => serde_json::from_str(text)
                .map_err(|e| Error::invalid("(top level)", e.to_string()).in_file(self.file.display().to_string())),
            Body::Doc(doc) => doc
                .value()
                .map_err(|e| Error::invalid("(top level)", e.to_string()).in_file(self.file.display().to_string())),
            Body::Fmus(_) => Ok(self.translate()?.network),
            Body::Fmu(v) => Ok(v.clone()),
        }
    }

    /// An FMU-only system's value (an .ssp: as its SSD translates), with the edits in place.
    pub fn fmus_value(&self) -> Option<&Value> {
        match &self.body {
            Body::Fmus(v) => Some(v),
            _ => None,
        }
    }

    /// An FMU-only system's network of signal blocks.
    fn translate(&self) -> Result<Translation> {
        let Body::Fmus(v) = &self.body else { unreachable!("only an FMU-only system is translated") };
        let name = self.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        stiction_fmi_master::translate(v, &name, &self.base_dir)
            .map_err(|e| self.blame(e.in_file(self.file.display().to_string())))
    }

    /// Stage 4: the checked specification read into a system, with the registry of every
    /// family ([`crate::registry`]). Errors name the file, the JSON path and the option
    /// that set it.
    pub fn system(&self) -> Result<Loaded> {
        let shown = self.file.display().to_string();
        let read = |text: &str| System::from_str(text, &self.file, &self.base_dir, &crate::registry());
        match &self.body {
            Body::Text(text) => Ok(Loaded::new(read(text).map_err(|e| e.in_file(shown))?, None)),
            // An indexed document (edited, or JSON text not from a file): serde's positions
            // point into text the user did not write; the JSON path says where.
            Body::Doc(doc) => {
                let system = read(&doc.text()).map_err(|e| self.blame(set::without_position(e).in_file(shown)))?;
                Ok(Loaded::new(system, None))
            }
            Body::Fmus(_) => {
                let t = self.translate()?;
                let system = read(&t.text()).map_err(|e| t.error(e.in_file(shown)))?;
                let mut loaded = Loaded::new(system, Some(t));
                loaded.package = self.package.clone();
                Ok(loaded)
            }
            Body::Fmu(v) => {
                let note = if self.is_edited() {
                    let sets: Vec<&str> = self.applied.iter().map(|(a, _)| a.arg.as_str()).collect();
                    format!("simulating the FMU alone with --set {}", sets.join(" --set "))
                } else {
                    "simulating the FMU alone".to_string()
                };
                let system = read(&v.to_string())
                    .map_err(|e| Error::invalid(note, set::without_position(e).in_file(shown).to_string()))?;
                Ok(Loaded::new(system, None))
            }
        }
    }

    /// Name the option behind a loader error at a path an edit set.
    fn blame(&self, e: Error) -> Error {
        set::blame(e, &self.applied)
    }
}

/// Stage 5: a checked system, and how to name its errors with the paths of the file the
/// user wrote (an FMU-only system's, not its translation's).
pub struct Loaded {
    pub system: System,
    pub relabel: Relabel,
    /// An SSP's unpacked archive (its FMUs' files stay while the system lives).
    package: Option<std::sync::Arc<stiction_fmi_schema::Package>>,
}

impl Loaded {
    fn new(system: System, translation: Option<Translation>) -> Loaded {
        Loaded { system, relabel: Relabel(translation), package: None }
    }

    /// Stage 6: the compiled simulator on `threads` worker threads and its run plan; errors
    /// name `file` and the user's paths, as the returned [`Relabel`] does for later ones.
    pub fn simulator(self, threads: usize, file: &str) -> Result<(Simulator, RunPlan, Relabel)> {
        let Loaded { system, relabel, .. } = self;
        match system.into_simulator(threads) {
            Ok((sim, plan)) => Ok((sim, plan, relabel)),
            Err(e) => Err(relabel.error(e.in_file(file.to_string()))),
        }
    }
}

/// Names an error of the loader or the engine with the paths of the file the user wrote.
pub struct Relabel(Option<Translation>);

impl Relabel {
    pub fn error(&self, e: Error) -> Error {
        match &self.0 {
            Some(t) => t.error(e),
            None => e,
        }
    }
}

/// Stages 1–4 for a command: read `path`, decide its dialect, parse it, apply the
/// options' edits and read the system. The one way a file is loaded.
pub fn open(path: &Path, options: &Options) -> Result<Loaded> {
    let mut doc = Source::read(path)?.document(&options.fmu)?;
    doc.edit_sets(&options.sets)?;
    let loaded = doc.system()?;
    // The text of a large file is freed (a large unmap) by a worker thread while this one
    // goes on to compile, when there is one.
    if rayon::current_num_threads() > 1 {
        rayon::spawn(move || drop(doc));
    }
    Ok(loaded)
}

/// [`open`] without options: the system of a file.
pub fn load(path: impl AsRef<Path>) -> Result<System> {
    open(path.as_ref(), &Options::default()).map(|l| l.system)
}

/// The one-component system that simulates the FMU at `path` alone: Co-Simulation stepped
/// by doStep every step, Model Exchange integrated by the modular RK4 (13); every numeric or
/// Boolean output variable a results column; stop time and step from `o` or the FMU's
/// DefaultExperiment.
fn fmu_system_value(path: &Path, o: &FmuOptions) -> Result<Value> {
    let shown = path.display().to_string();
    let fail = |message: String| Error::invalid("simulating the FMU alone", message);
    let archive = Archive::open(path, &shown).map_err(|e| fail(e.to_string()))?;
    let md = &archive.description;
    let interface = match o.interface.as_deref() {
        Some(i @ ("cs" | "me")) => i,
        Some(other) => return Err(Error::invalid(format!("--interface {other}"), "expected cs or me")),
        None if md.co_simulation.is_some() => "cs",
        None => "me",
    };
    let exp = md.default_experiment.as_ref();
    let stop = o.stop_time.or(exp.and_then(|e| e.stop_time)).unwrap_or(1.0);
    let step = o.step.or(exp.and_then(|e| e.step_size)).unwrap_or(stop / 500.0);
    let mut signals = Map::new();
    // Numeric and Boolean outputs are columns; a String (or Binary, Clock) output has no
    // place in a table of numbers and is left out (`stiction check X.fmu` lists the FMU's
    // variables with `fmu info`).
    for v in md.variables.iter().filter(|v| v.causality == Causality::Output && v.ty != VarType::Other) {
        // An FMI 2.0 name such as `a[1]` is a scalar of that literal name: the signal
        // reference finds it by its whole name first (an FMI 3.0 array `y` gives y[0], ...).
        signals.insert(v.name.clone(), json!(format!("fmu.{}", v.name)));
    }
    let abs = std::fs::canonicalize(path).map_err(|e| fail(format!("{shown}: {e}")))?;
    Ok(json!({
        "name": md.model_name,
        "solver": {"method": if interface == "me" { "rk4" } else { "euler" }, "step": step, "stop_time": stop},
        "output": {"signals": signals},
        "components": {"fmu": {
            "type": "fmu",
            "path": abs.to_string_lossy(),
            "interface": interface,
            "role": "admittance",
            "ports": {},
            "parameters": Value::Object(Map::new())
        }}
    }))
}
