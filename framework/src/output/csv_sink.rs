//! Result writers. CSV first: header `time,<label>,...`, one row per output interval,
//! streamed to disk as the run goes (flushed every few rows and on failure, so a run
//! that fails part-way keeps every row written up to the failure).

use super::OutputSink;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Streams rows to a CSV file or any writer.
pub struct CsvSink<W: Write> {
    out: csv::Writer<W>,
    since_flush: usize,
    /// The step, when times are printed exactly as k·T ([`CsvSink::with_step`]).
    step: Option<f64>,
}

impl CsvSink<BufWriter<File>> {
    /// Create (truncate) `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self::new(BufWriter::new(File::create(path)?)))
    }
}

impl<W: Write> CsvSink<W> {
    pub fn new(w: W) -> Self {
        CsvSink { out: csv::WriterBuilder::new().from_writer(w), since_flush: 0, step: None }
    }

    /// Print each time as the exact decimal k·T of the run's step T ([`super::number::time_text`]).
    pub fn with_step(mut self, step: f64) -> Self {
        self.step = Some(step);
        self
    }
}

fn csv_err(e: csv::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl<W: Write + Send> OutputSink for CsvSink<W> {
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()> {
        self.out.write_field("time").map_err(csv_err)?;
        for l in labels {
            self.out.write_field(l).map_err(csv_err)?;
        }
        self.out.write_record(None::<&[u8]>).map_err(csv_err)
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
        if self.since_flush >= 256 {
            self.since_flush = 0;
            self.out.flush()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
