//! Result files chosen by the extension of `-o`: `.csv` (shortest round-trip numbers, times
//! as exact k·T), `.mat` (the MATLAB v4 "binTrans" layout OpenModelica and Dymola write, as
//! their result readers expect; tested with `scipy.io.loadmat`), or `-` for CSV on standard output.
//! The format is decided from the path before a run starts.

pub mod mat;

use std::io::BufWriter;
use std::path::Path;
use stiction_framework::{CsvSink, OutputSink, RunPlan, Simulator};

/// A results file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Mat,
    /// CSV on standard output (`-`).
    Stdout,
}

impl Format {
    /// The format of `path`, or an error naming the extensions known.
    pub fn of(path: &Path) -> Result<Format, String> {
        if path.as_os_str() == "-" {
            return Ok(Format::Stdout);
        }
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => Ok(Format::Csv),
            Some("mat") => Ok(Format::Mat),
            other => Err(format!(
                "{}: results are written as .csv or .mat (or '-' for CSV on standard output), not {}",
                path.display(),
                other.map(|e| format!(".{e}")).unwrap_or_else(|| "a file without extension".into())
            )),
        }
    }
}

/// What a results file says about a column besides its values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnInfo {
    pub label: String,
    /// SI unit of the signal ("" when it has none, e.g. a raw state or a flag).
    pub unit: String,
    /// The signal's documentation and name.
    pub description: String,
}

/// Unit and description of every column of `plan`, from the signal tables of the compiled
/// components (`component.signal[i]`; a raw `state[i]` has no unit).
pub fn column_info(sim: &Simulator, plan: &RunPlan) -> Vec<ColumnInfo> {
    plan.columns.iter().map(|(label, r)| signal_info(sim, label, &r.name)).collect()
}

fn signal_info(sim: &Simulator, label: &str, name: &str) -> ColumnInfo {
    let sched = sim.schedule();
    let (comp, rest) = name.split_once('.').unwrap_or((name, ""));
    let sig = rest.split('[').next().unwrap_or("");
    let signals = if let Some(j) = sched.admittance_names().iter().position(|n| n == comp) {
        sched.admittance(j).signals()
    } else if let Some(i) = sched.impedance_names().iter().position(|n| n == comp) {
        sched.impedance(i).signals()
    } else {
        Vec::new()
    };
    let found = signals.iter().find(|s| s.name == sig);
    ColumnInfo {
        label: label.to_string(),
        unit: found.map(|s| s.unit.to_string()).unwrap_or_default(),
        description: match found {
            Some(s) if !s.doc.is_empty() => format!("{}: {}", name, s.doc),
            _ => name.to_string(),
        },
    }
}

/// Open the results sink for `path` in `format` (the directory is created). `step` makes
/// CSV times exact k·T; `columns` gives the .mat file its units and descriptions.
pub fn open(
    path: &Path,
    format: Format,
    step: Option<f64>,
    columns: Vec<ColumnInfo>,
) -> std::io::Result<Box<dyn OutputSink>> {
    if format == Format::Stdout {
        return Ok(Box::new(with_step(CsvSink::new(std::io::stdout()), step)));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    Ok(match format {
        Format::Mat => Box::new(mat::MatSink::create(path, columns)?),
        _ => Box::new(with_step(CsvSink::new(BufWriter::new(std::fs::File::create(path)?)), step)),
    })
}

fn with_step<W: std::io::Write>(s: CsvSink<W>, step: Option<f64>) -> CsvSink<W> {
    match step {
        Some(t) => s.with_step(t),
        None => s,
    }
}
