//! Output: where sampled rows go ([`OutputSink`]: CSV, an in-memory [`Recorder`], both
//! through [`Tee`]), the signals behind the columns ([`SignalRef`]) and the run loop that
//! steps a [`Simulator`](crate::Simulator) and writes a row every output interval.

mod csv_sink;
pub mod feedthrough;
pub mod number;
mod probe;
mod run;
mod signals;

pub use csv_sink::{CsvSink, UnitsIn};
pub use probe::ProbeTargets;
pub use run::{RunPlan, RunSummary};
pub use signals::SignalRef;

/// Receives sampled output rows as the run goes.
pub trait OutputSink: Send {
    /// Column labels (without the time column).
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()>;
    /// One row at time `t`.
    fn row(&mut self, t: f64, values: &[f64]) -> std::io::Result<()>;
    /// Flush; called on success and on failure.
    fn finish(&mut self) -> std::io::Result<()>;
    /// Write-through: hand every row to the operating system as soon as it is complete
    /// (`true`), so that rows survive the process ending without unwinding (a crash,
    /// abort or exit() inside foreign code, SIGKILL); `false` (the default) may keep rows
    /// in memory until a flush. A sink that keeps nothing outside the process ignores it.
    fn set_write_through(&mut self, _on: bool) {}
}

/// Rows kept in memory (for tests, plots and library users).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub labels: Vec<String>,
    pub time: Vec<f64>,
    pub rows: Vec<Vec<f64>>,
}

impl Recorder {
    /// The column called `label`, if any.
    pub fn column(&self, label: &str) -> Option<Vec<f64>> {
        let c = self.labels.iter().position(|l| l == label)?;
        Some(self.rows.iter().map(|r| r[c]).collect())
    }
}

impl OutputSink for Recorder {
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()> {
        self.labels = labels.to_vec();
        Ok(())
    }
    fn row(&mut self, t: f64, values: &[f64]) -> std::io::Result<()> {
        self.time.push(t);
        self.rows.push(values.to_vec());
        Ok(())
    }
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Fan one output stream to two sinks (e.g. CSV on disk and a recorder for the plot).
pub struct Tee<'a>(pub &'a mut dyn OutputSink, pub &'a mut dyn OutputSink);

impl OutputSink for Tee<'_> {
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()> {
        self.0.begin(labels)?;
        self.1.begin(labels)
    }
    fn row(&mut self, t: f64, values: &[f64]) -> std::io::Result<()> {
        self.0.row(t, values)?;
        self.1.row(t, values)
    }
    fn finish(&mut self) -> std::io::Result<()> {
        let a = self.0.finish();
        let b = self.1.finish();
        a.and(b)
    }
    fn set_write_through(&mut self, on: bool) {
        self.0.set_write_through(on);
        self.1.set_write_through(on);
    }
}
