//! Parameter studies: the rows of `stiction sweep`, from `stiction::study` (one
//! implementation for the CLI and Python). The Python layer runs them on local threads
//! (`study_rows` over the whole range) or sends run ranges to Dask workers (`study_rows` on
//! each worker with the system as JSON); a run's varied values depend only on the seed and
//! its run id, so any chunk gives the same rows anywhere.

use crate::errors::{from_framework, input_error_msg};
use crate::interrupt;
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use stiction::pipeline::Document;
use stiction::study::{Row, Study};

/// The study of the CLI's strings, checked against its base system (`Study::prepare`: the
/// varied parameters exist, the outputs are signals; default outputs filled in).
#[allow(clippy::too_many_arguments)]
fn prepared(
    base: &Document,
    vary: &[String],
    samples: Option<usize>,
    seed: u64,
    outputs: &[String],
) -> PyResult<Study> {
    let mut study = Study::parse(vary, samples, seed, outputs).map_err(|e| input_error_msg(e.to_string()))?;
    study.prepare(base).map_err(|e| input_error_msg(e.to_string()))?;
    Ok(study)
}

/// The system's JSON text as a document (an object; what the Python layer sends), read as
/// the file `file` with relative names taken from `base_dir`.
fn parse_json(system_json: &str, file: &Path, base_dir: &Path) -> PyResult<Document> {
    Document::from_text(file, base_dir, system_json.to_string())
        .map_err(|e| input_error_msg(format!("system JSON: {e}")))
}

/// (number of runs, column names) of a study given by the CLI's strings on a system given
/// as JSON text.
#[pyfunction]
#[pyo3(signature = (system_json, file, base_dir, vary, samples, seed, outputs))]
#[allow(clippy::too_many_arguments)]
pub fn study_plan(
    system_json: &str,
    file: PathBuf,
    base_dir: PathBuf,
    vary: Vec<String>,
    samples: Option<usize>,
    seed: u64,
    outputs: Vec<String>,
) -> PyResult<(usize, Vec<String>)> {
    let base = parse_json(system_json, &file, &base_dir)?;
    let study = prepared(&base, &vary, samples, seed, &outputs)?;
    Ok((study.runs(), study.columns()))
}

/// One row as Python values: (run, varied values, statistics, status, message).
type PyRow = (usize, Vec<f64>, Vec<f64>, String, String);

fn to_py(r: Row) -> PyRow {
    (r.run, r.varied, r.stats, r.status.as_str().to_string(), r.message)
}

/// The rows of runs `start..stop` of the study on `threads` threads, for the system given as
/// JSON text (`file` names it, relative paths are taken from `base_dir`). `progress(done)`
/// is called, with the GIL, after every chunk of runs. The GIL is released; Ctrl-C stops
/// between chunks and raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (system_json, file, base_dir, vary, samples, seed, outputs, start, stop, threads, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn study_rows(
    py: Python<'_>,
    system_json: &str,
    file: PathBuf,
    base_dir: PathBuf,
    vary: Vec<String>,
    samples: Option<usize>,
    seed: u64,
    outputs: Vec<String>,
    start: usize,
    stop: usize,
    threads: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Vec<PyRow>> {
    if threads == 0 {
        return Err(input_error_msg("threads must be at least 1".into()));
    }
    let base = parse_json(system_json, &file, &base_dir)?;
    // Validate once here, so a bad base system is an InputError rather than every row failing.
    crate::system::build(&base).map_err(|e| from_framework(&e))?;
    let study = prepared(&base, &vary, samples, seed, &outputs)?;
    let stop = stop.min(study.runs());
    // Ctrl-C and progress are looked at between chunks of runs: a few runs per thread at
    // first, doubled while a chunk takes under 0.25 s (so short runs are not held up by the
    // pause at the end of each chunk), at most 1/10 of the study.
    let mut chunk = (threads * 4).max(8);
    let max_chunk = (stop.saturating_sub(start) / 10).max(chunk);
    let mut rows = Vec::with_capacity(stop.saturating_sub(start));
    let mut at = start;
    while at < stop {
        let end = (at + chunk).min(stop);
        let (study, base) = (&study, &base);
        let started = std::time::Instant::now();
        let part = interrupt::run(py, |_cancel| study.run_range(base, at..end, threads, &|_| {}))?;
        if started.elapsed().as_secs_f64() < 0.25 {
            chunk = (chunk * 2).min(max_chunk);
        }
        rows.extend(part.into_iter().map(to_py));
        at = end;
        if let Some(p) = &progress {
            p.call1(py, (at - start,))?;
        }
    }
    Ok(rows)
}
