//! The run loop: step to the stop time, sample a row every output interval.

use super::{OutputSink, SignalRef};
use crate::error::{Error, Result};
use crate::stepper::Simulator;

/// How long to run and what to sample.
#[derive(Clone, Debug)]
pub struct RunPlan {
    pub stop_time: f64,
    /// Output interval; rounded to a whole number of steps (at least one).
    pub interval: f64,
    /// Column labels and the signals behind them.
    pub columns: Vec<(String, SignalRef)>,
}

/// Summary of a finished run.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub steps: u64,
    pub rows: u64,
    pub final_time: f64,
}

impl Simulator {
    /// Run from the current time to `plan.stop_time`, writing a row at t = 0 (if at the
    /// start) and every output interval. On failure the rows written so far are flushed
    /// and the error carries the time and the component. `progress` gets the fraction done.
    pub fn run(
        &mut self,
        plan: &RunPlan,
        sink: &mut dyn OutputSink,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary> {
        let result = self.run_inner(plan, sink, progress);
        let flushed = sink.finish().map_err(|e| Error::Io { path: "output".into(), error: e });
        let summary = result?;
        flushed?;
        Ok(summary)
    }

    fn run_inner(
        &mut self,
        plan: &RunPlan,
        sink: &mut dyn OutputSink,
        progress: &mut dyn FnMut(f64),
    ) -> Result<RunSummary> {
        let io = |e: std::io::Error| Error::Io { path: "output".into(), error: e };
        let labels: Vec<String> = plan.columns.iter().map(|c| c.0.clone()).collect();
        sink.begin(&labels).map_err(io)?;
        let total = (plan.stop_time / self.step_size() - 1e-9).ceil().max(0.0) as u64;
        let every = ((plan.interval / self.step_size()).round() as u64).max(1);
        let mut values = vec![0.0; plan.columns.len()];
        let mut rows = 0u64;
        let targets = self.probe_targets(plan.columns.iter().map(|c| &c.1));
        let mut emit = |sim: &mut Simulator, values: &mut Vec<f64>| -> Result<()> {
            sim.probe_only(&targets)?;
            for (v, (_, r)) in values.iter_mut().zip(&plan.columns) {
                *v = sim.value(r);
            }
            sink.row(sim.time(), values).map_err(io)?;
            rows += 1;
            Ok(())
        };
        let start = self.k;
        if start == 0 {
            emit(self, &mut values)?;
        }
        let report_every = (total / 200).max(1);
        while self.k < total {
            self.step()?;
            if self.k % every == 0 {
                emit(self, &mut values)?;
            }
            if self.k % report_every == 0 {
                progress(self.k as f64 / total as f64);
            }
        }
        progress(1.0);
        Ok(RunSummary { steps: self.k - start, rows, final_time: self.time() })
    }
}
