//! `CoreSystem`: a validated system held as its JSON document (so it can be copied with
//! `--set` assignments, sent to Dask workers and rebuilt for every run), with its run and
//! its findings.

use crate::errors::{from_framework, input_error_msg};
use crate::interrupt;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyList};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use stiction::pipeline::{Dialect, Document, Opt};
use stiction_framework::output::number::time_text;
use stiction_framework::system::{diagnostics, System};
use stiction_framework::{Diagnostic, OutputSink, Recorder, TimeFunction};

/// A system description that passed validation.
#[pyclass(frozen, module = "stiction._core")]
pub struct CoreSystem {
    pub doc: Document,
    /// The file it came from (or a stand-in such as `<dict>`), for messages and the default name.
    pub file: PathBuf,
    /// Directory that relative paths in the system (tables, FMUs) are taken from.
    pub base: PathBuf,
    name: String,
    /// (label, signal) per output column.
    columns: Vec<(String, String)>,
    /// (component, type) in file order.
    comps: Vec<(String, String)>,
}

/// The value functions of `run(inputs=...)`: a number (constant), a callable f(t) (sampled
/// at every stage time kT and kT + T/2 up to the stop time, so that the table it becomes
/// gives f's own values at the stages) or rows (t, value) (a table, interpolated).
fn input_functions(d: &Bound<'_, PyDict>, step: f64, stop: f64) -> PyResult<Vec<(String, TimeFunction)>> {
    let mut out = Vec::new();
    for (k, v) in d.iter() {
        let name: String = k.extract().map_err(|_| input_error_msg("inputs: the keys are input names".into()))?;
        let path = format!("inputs['{name}']");
        let bad = |e: stiction_framework::Error| input_error_msg(e.to_string());
        let f = if let Ok(c) = v.extract::<f64>() {
            TimeFunction::Constant(c)
        } else if v.is_callable() {
            let n = (2.0 * stop / step).round() as usize;
            let ts: Vec<f64> = (0..=n).map(|k| k as f64 * step / 2.0).collect();
            let mut vs = Vec::with_capacity(ts.len());
            for &t in &ts {
                let y: f64 = v
                    .call1((t,))?
                    .extract()
                    .map_err(|_| input_error_msg(format!("{path}: the callable must return a number (at t = {t})")))?;
                vs.push(y);
            }
            TimeFunction::table(ts, vs, &path).map_err(bad)?
        } else if let Ok(rows) = v.extract::<Vec<Vec<f64>>>() {
            if rows.iter().any(|r| r.len() != 2) {
                return Err(input_error_msg(format!("{path}: expected rows (t, value)")));
            }
            TimeFunction::table(rows.iter().map(|r| r[0]).collect(), rows.iter().map(|r| r[1]).collect(), &path)
                .map_err(bad)?
        } else {
            return Err(input_error_msg(format!("{path}: expected a number, a callable f(t) or rows (t, value)")));
        };
        out.push((name, f));
    }
    Ok(out)
}

/// Build (validate) the system of `doc` (stiction's one loading pipeline). Errors name the
/// file, the JSON path and the `--set` behind it.
pub fn build(doc: &Document) -> stiction_framework::Result<System> {
    doc.system().map(|l| l.system)
}

impl CoreSystem {
    fn new(doc: Document, file: PathBuf, base: PathBuf) -> PyResult<CoreSystem> {
        if doc.dialect == Dialect::FmuOnly {
            let f = file.display().to_string();
            let m = "an FMU-only system (top-level \"fmus\") runs with the CLI (`stiction run`); \
                     the Python package loads networks (top-level \"components\", where FMUs are \
                     components of type \"fmu\")";
            return Err(crate::errors::input_error(
                Some(f.clone()),
                Some("fmus".into()),
                m.into(),
                format!("{f}: fmus: {m}"),
            ));
        }
        let system = build(&doc).map_err(|e| from_framework(&e))?;
        Ok(CoreSystem::of(doc, file, base, &system))
    }

    /// The holder of `doc`, already built (validated) as `system`.
    fn of(doc: Document, file: PathBuf, base: PathBuf, system: &System) -> CoreSystem {
        CoreSystem {
            name: system.name.clone(),
            columns: system.columns.clone(),
            comps: system.components().map(|(n, t)| (n.to_string(), t.to_string())).collect(),
            doc,
            file,
            base,
        }
    }

    /// The document with `sets` (`comp.param=VALUE`) applied, as `--set` does (a loader
    /// error at a path one of them set names it).
    fn doc_with(&self, sets: &[String]) -> PyResult<Document> {
        let mut doc = self.doc.clone();
        for s in sets {
            doc.edit(Opt::Set(s)).map_err(|e| input_error_msg(e.to_string()))?;
        }
        Ok(doc)
    }

    /// The unit of every output column of `system` (built from this document).
    pub(crate) fn units(&self, system: &System) -> Vec<String> {
        let reg = stiction::registry();
        system.columns.iter().map(|(_, s)| self.unit_of(&reg, s)).collect()
    }

    /// Unit of an output signal `comp.signal[i]` from the component type's documentation
    /// ("" when unknown: raw states, FMU variables).
    fn unit_of(&self, reg: &stiction_framework::system::Registry, signal: &str) -> String {
        let Some((comp, rest)) = signal.split_once('.') else { return String::new() };
        let name = rest.split('[').next().unwrap_or(rest);
        let Some((_, ty)) = self.comps.iter().find(|(n, _)| n == comp) else { return String::new() };
        reg.get(ty)
            .and_then(|t| t.signals.iter().find(|s| s.name == name))
            .map(|s| s.unit.to_string())
            .unwrap_or_default()
    }
}

/// Rows kept in memory; stops the run (an I/O error the caller discards) once Ctrl-C raised
/// the cancel flag.
struct Collect<'a> {
    rec: Recorder,
    cancel: &'a AtomicBool,
}

impl OutputSink for Collect<'_> {
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()> {
        self.rec.begin(labels)
    }
    fn row(&mut self, t: f64, values: &[f64]) -> std::io::Result<()> {
        if interrupt::cancelled(self.cancel) {
            return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"));
        }
        self.rec.row(t, values)
    }
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A run's rows for the Python `Result`: name, labels, units, time and columns (bytes of
/// little-endian f64), steps.
pub(crate) fn result_dict<'py>(
    py: Python<'py>,
    name: &str,
    units: &[String],
    rec: &Recorder,
    steps: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("name", name)?;
    out.set_item("labels", rec.labels.clone())?;
    out.set_item("units", units.to_vec())?;
    out.set_item("time", PyByteArray::new(py, &le_bytes(rec.time.iter().copied())))?;
    let cols = PyList::empty(py);
    for c in 0..rec.labels.len() {
        cols.append(PyByteArray::new(py, &le_bytes(rec.rows.iter().map(|r| r[c]))))?;
    }
    out.set_item("columns", cols)?;
    out.set_item("steps", steps)?;
    Ok(out)
}

fn le_bytes(v: impl Iterator<Item = f64>) -> Vec<u8> {
    v.flat_map(f64::to_le_bytes).collect()
}

#[pymethods]
impl CoreSystem {
    /// Load and validate a JSON file.
    #[staticmethod]
    fn from_file(path: PathBuf) -> PyResult<CoreSystem> {
        let mut doc = Document::read(&path).map_err(|e| from_framework(&e))?;
        if doc.dialect != Dialect::FmuOnly {
            doc.index().map_err(|e| from_framework(&e))?;
        }
        let base = doc.base_dir.clone();
        CoreSystem::new(doc, path, base)
    }

    /// Validate a system given as JSON text; `file` names it in messages, relative paths
    /// are taken from `base_dir`.
    #[staticmethod]
    fn from_json(text: &str, file: PathBuf, base_dir: PathBuf) -> PyResult<CoreSystem> {
        let doc = match Document::from_text(&file, &base_dir, text.to_string()) {
            Ok(doc) => doc,
            Err(e) => {
                // Not JSON: the JSON reader's error; not a JSON object: the loader's.
                if let Err(e) = serde_json::from_str::<Value>(text) {
                    let f = file.display().to_string();
                    return Err(crate::errors::input_error(Some(f.clone()), None, e.to_string(), format!("{f}: {e}")));
                }
                return Err(from_framework(&e));
            }
        };
        CoreSystem::new(doc, file, base_dir)
    }

    /// A new system with `sets` applied (validated).
    fn with_set(&self, sets: Vec<String>) -> PyResult<CoreSystem> {
        let doc = self.doc_with(&sets)?;
        let system = build(&doc).map_err(|e| from_framework(&e))?;
        Ok(CoreSystem::of(doc, self.file.clone(), self.base.clone(), &system))
    }

    /// The JSON document: its text as read, with the values of `with_set` in place.
    fn to_json(&self) -> String {
        self.doc.text().into_owned()
    }

    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    #[getter]
    fn file(&self) -> PathBuf {
        self.file.clone()
    }

    #[getter]
    fn base_dir(&self) -> PathBuf {
        self.base.clone()
    }

    /// (component, type) in file order.
    #[getter]
    fn component_names(&self) -> Vec<(String, String)> {
        self.comps.clone()
    }

    /// (label, signal) per output column.
    #[getter]
    fn columns(&self) -> Vec<(String, String)> {
        self.columns.clone()
    }

    /// Run with `sets` applied, on `threads` threads (None: the solver's `threads`, else all
    /// cores), to `stop_time` (None: the file's). Returns a dict: name, labels, units, time
    /// and columns (little-endian f64 bytes), steps. The GIL is released; Ctrl-C stops
    /// the run between output rows and raises KeyboardInterrupt.
    #[pyo3(signature = (sets, threads=None, stop_time=None, inputs=None))]
    // The run's error carries the rows so far with it, once, on the way out.
    #[allow(clippy::result_large_err)]
    fn run<'py>(
        &self,
        py: Python<'py>,
        sets: Vec<String>,
        threads: Option<usize>,
        stop_time: Option<f64>,
        inputs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let mut sets = sets;
        if let Some(t) = stop_time {
            // Through the same assignment as `--set solver.stop_time=...`; Display of f64
            // is the shortest text that reads back to the same number.
            sets.push(format!("solver.stop_time={t}"));
        }
        let doc = self.doc_with(&sets)?;
        let system = build(&doc).map_err(|e| from_framework(&e))?;
        let threads = match threads.or(system.threads) {
            Some(0) => return Err(input_error_msg("threads must be at least 1".into())),
            Some(n) => n,
            None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        };
        let driven = match &inputs {
            Some(d) => input_functions(d, system.step, system.stop_time)?,
            None => Vec::new(),
        };
        let reg = stiction::registry();
        let units: Vec<String> = system.columns.iter().map(|(_, s)| self.unit_of(&reg, s)).collect();
        let name = system.name.clone();
        let file = self.file.display().to_string();
        let step = system.step;
        let outcome = interrupt::run(py, |cancel| {
            let (mut sim, plan) = system.into_simulator(threads).map_err(|e| (e.in_file(file.clone()), None))?;
            for (name, f) in driven {
                sim.set_input(&name, f).map_err(|e| (e, None))?;
            }
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| {
                let e = stiction_framework::Error::Io {
                    path: "threads".into(),
                    error: std::io::Error::other(e.to_string()),
                };
                (e, None)
            })?;
            let mut sink = Collect { rec: Recorder::default(), cancel };
            let r = pool.install(|| sim.run(&plan, &mut sink, &mut |_| {}));
            // Sample times as the CLI's results print them: the exact decimal k·T read back
            // (0.009, not the binary product 0.009000000000000001).
            for t in &mut sink.rec.time {
                *t = time_text(*t, step).parse().unwrap_or(*t);
            }
            match r {
                Ok(s) => Ok((s.steps, sink.rec)),
                // The rows before a failure, as the CLI keeps them in its CSV.
                Err(e) => Err((e.in_file(file.clone()), Some(sink.rec))),
            }
        })?;
        match outcome {
            Ok((steps, rec)) => result_dict(py, &name, &units, &rec, steps),
            Err((e, rec)) => {
                let err = from_framework(&e);
                if let (Some(rec), true) = (rec, e.is_simulation_failure()) {
                    err.value(py).setattr("partial", result_dict(py, &name, &units, &rec, 0)?)?;
                }
                Err(err)
            }
        }
    }

    /// The findings of `stiction check`: (level "info"/"warning", component or None, message).
    fn check(&self, py: Python<'_>) -> PyResult<Vec<(String, Option<String>, String)>> {
        let system = build(&self.doc).map_err(|e| from_framework(&e))?;
        let file = self.file.display().to_string();
        let findings = py
            .detach(|| {
                let (sim, plan) = system.into_simulator(1).map_err(|e| e.in_file(file))?;
                Ok::<_, stiction_framework::Error>(diagnostics(&sim, &plan))
            })
            .map_err(|e| from_framework(&e))?;
        Ok(findings
            .into_iter()
            .map(|d| {
                let (level, text) = match d {
                    Diagnostic::Info(s) => ("info", s),
                    Diagnostic::Warning(s) => ("warning", s),
                };
                // Findings of a component are prefixed "name: "; take the longest name that fits.
                let comp = self
                    .comps
                    .iter()
                    .map(|(n, _)| n)
                    .filter(|n| text.strip_prefix(n.as_str()).is_some_and(|r| r.starts_with(": ")))
                    .max_by_key(|n| n.len())
                    .cloned();
                let message = match &comp {
                    Some(n) => text[n.len() + 2..].to_string(),
                    None => text,
                };
                (level.to_string(), comp, message)
            })
            .collect())
    }
}
