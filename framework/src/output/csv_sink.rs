//! Result writers. CSV first: header `time,<label>,...`, one row per output interval,
//! streamed to disk as the run goes (flushed every few rows and on failure, so a run
//! that fails part-way keeps every row written up to the failure). Rows are written whole:
//! what the CSV writer produces is kept in a [`RowBuffer`] and handed to the file in one
//! `write_all` only when the CSV writer is flushed, which happens only after a complete
//! record, so a run stopped or killed at any moment never leaves half a row. With
//! write-through ([`OutputSink::set_write_through`]) every row is flushed as it is written:
//! one `write` system call per row, so the rows are in the operating system's hands even if
//! the process dies without unwinding.
//!
//! Units, off by default so that readers expecting bare names keep working, in one of the
//! two forms CSV readers of FMI tools know ([`UnitsIn`]): in the header (`time [s],q [m]`)
//! or as a second row under it (`s,m`).

use super::OutputSink;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Where a CSV file states its columns' units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnitsIn {
    /// Nowhere: the header is `time,q,...` (the default).
    #[default]
    None,
    /// In the header: `time [s],q [m],stuck` ([`crate::units::column_label`]; a column
    /// without a unit keeps its bare label).
    Header,
    /// A second row under the header: `s,m,` (empty for a column without a unit).
    Row,
}

/// Streams rows to a CSV file or any writer.
pub struct CsvSink<W: Write> {
    out: csv::Writer<RowBuffer<W>>,
    since_flush: usize,
    /// Rows between flushes: 256, or 1 with write-through.
    flush_every: usize,
    /// The step, when times are printed exactly as k·T ([`CsvSink::with_step`]).
    step: Option<f64>,
    /// Where the units go, and the unit of each column after time ([`CsvSink::with_units`]).
    units: (UnitsIn, Vec<String>),
}

/// The writer under the CSV writer: keeps every byte until [`Write::flush`] — which the CSV
/// writer calls only from its own `flush`, after a whole record here — then writes them
/// all in one `write_all`. (The CSV writer spills its internal buffer with `write` in the
/// middle of records; those bytes wait here.)
pub struct RowBuffer<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Write for RowBuffer<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.write_all(&self.pending).and_then(|()| self.inner.flush());
        self.pending.clear();
        r
    }
}

impl CsvSink<BufWriter<File>> {
    /// Create (truncate) `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self::new(BufWriter::new(File::create(path)?)))
    }
}

impl<W: Write> CsvSink<W> {
    pub fn new(w: W) -> Self {
        let rows = RowBuffer { inner: w, pending: Vec::new() };
        CsvSink {
            out: csv::WriterBuilder::new().from_writer(rows),
            since_flush: 0,
            flush_every: 256,
            step: None,
            units: (UnitsIn::None, Vec::new()),
        }
    }

    /// Print each time as the exact decimal k·T of the run's step T ([`super::number::time_text`]).
    pub fn with_step(mut self, step: f64) -> Self {
        self.step = Some(step);
        self
    }

    /// State the unit of each column (in the order of the labels [`OutputSink::begin`]
    /// receives; time's is `s`) where `at` says.
    pub fn with_units(mut self, at: UnitsIn, units: Vec<String>) -> Self {
        self.units = (at, units);
        self
    }
}

fn csv_err(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl<W: Write + Send> OutputSink for CsvSink<W> {
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()> {
        let (at, units) = &self.units;
        let unit = |i: usize| units.get(i).map_or("", String::as_str);
        let header = |label: &str, unit: &str| match at {
            UnitsIn::Header => crate::units::column_label(label, unit),
            _ => label.to_string(),
        };
        self.out.write_field(header("time", "s")).map_err(csv_err)?;
        for (i, l) in labels.iter().enumerate() {
            self.out.write_field(header(l, unit(i))).map_err(csv_err)?;
        }
        self.out.write_record(None::<&[u8]>).map_err(csv_err)?;
        if *at == UnitsIn::Row {
            self.out.write_field("s").map_err(csv_err)?;
            for i in 0..labels.len() {
                self.out.write_field(unit(i)).map_err(csv_err)?;
            }
            self.out.write_record(None::<&[u8]>).map_err(csv_err)?;
        }
        self.out.flush()
    }

    fn row(&mut self, t: f64, values: &[f64]) -> std::io::Result<()> {
        // Shortest text that reads back to the same bits, exponent notation for tiny/huge.
        let t = self.step.map_or_else(|| super::number::float_text(t), |s| super::number::time_text(t, s));
        self.out.write_field(t).map_err(csv_err)?;
        for v in values {
            self.out.write_field(super::number::float_text(*v)).map_err(csv_err)?;
        }
        self.out.write_record(None::<&[u8]>).map_err(csv_err)?;
        self.since_flush += 1;
        if self.since_flush >= self.flush_every {
            self.since_flush = 0;
            self.out.flush()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    fn set_write_through(&mut self, on: bool) {
        self.flush_every = if on { 1 } else { 256 };
    }
}
