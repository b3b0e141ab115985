//! Result files chosen by the extension of `-o`: `.csv` (shortest round-trip numbers, times
//! as exact k·T), `.mat` (the MATLAB v4 "binTrans" layout OpenModelica and Dymola write, as
//! their result readers expect; tested with `scipy.io.loadmat`), or `-` for CSV on standard output.
//! The format is decided from the path before a run starts.

pub mod mat;

use std::io::BufWriter;
use std::path::Path;
use stiction_framework::{CsvSink, OutputSink, RunPlan, Simulator, UnitsIn};

/// A results file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Mat,
    /// CSV on standard output (`-`).
    Stdout,
}

impl Format {
    /// The format of `path` (CSV when it has no extension), or an error naming the extensions known.
    pub fn of(path: &Path) -> Result<Format, String> {
        if path.as_os_str() == "-" {
            return Ok(Format::Stdout);
        }
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => Ok(Format::Csv),
            Some("mat") => Ok(Format::Mat),
            // No extension (/dev/null, a pipe, a device): CSV, the default format.
            None => Ok(Format::Csv),
            other => Err(format!(
                "{}: results are written as .csv or .mat (or '-' for CSV on standard output), not {}",
                path.display(),
                other.map(|e| format!(".{e}")).unwrap_or_default()
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

/// Unit and description of every column of `plan`, from what the components declare of
/// each signal ([`Simulator::signal_info`]; a raw `state[i]` has no unit).
pub fn column_info(sim: &Simulator, plan: &RunPlan) -> Vec<ColumnInfo> {
    plan.columns
        .iter()
        .map(|(label, r)| {
            let found = sim.signal_info(r);
            ColumnInfo {
                label: label.clone(),
                unit: found.map(|s| s.unit.to_string()).unwrap_or_default(),
                description: match found {
                    Some(s) if !s.doc.is_empty() => format!("{}: {}", r.name, s.doc),
                    _ => r.name.clone(),
                },
            }
        })
        .collect()
}

/// Open the results sink for `path` in `format` (the directory is created). `step` makes
/// CSV times exact k·T; `columns` gives the .mat file its units and descriptions. A CSV
/// file states no units ([`open_with_units`] for `run --units`).
pub fn open(
    path: &Path,
    format: Format,
    step: Option<f64>,
    columns: Vec<ColumnInfo>,
) -> std::io::Result<Box<dyn OutputSink>> {
    open_with_units(path, format, step, columns, UnitsIn::None)
}

/// [`open`], a CSV file stating its columns' units where `units` says (`run --units`).
pub fn open_with_units(
    path: &Path,
    format: Format,
    step: Option<f64>,
    columns: Vec<ColumnInfo>,
    units: UnitsIn,
) -> std::io::Result<Box<dyn OutputSink>> {
    let csv = |s: CsvSink<Box<dyn std::io::Write + Send>>| {
        let s = s.with_units(units, columns.iter().map(|c| c.unit.clone()).collect());
        match step {
            Some(t) => s.with_step(t),
            None => s,
        }
    };
    if format == Format::Stdout {
        return Ok(Box::new(csv(CsvSink::new(Box::new(std::io::stdout()) as Box<dyn std::io::Write + Send>))));
    }
    // Streamed in place (crate::outfile: rows survive whatever ends the process), never
    // through a directory or a symbolic link.
    let file = crate::outfile::in_place(path)?;
    Ok(match format {
        Format::Mat => Box::new(mat::MatSink::new(file, columns)),
        _ => Box::new(csv(CsvSink::new(Box::new(BufWriter::new(file))))),
    })
}
