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
    /// Why the run ended before the stop time: a component's stop request
    /// ([`crate::Admittance::stop_request`]).
    pub stopped: Option<String>,
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
        self.run_until(plan, sink, progress, &|| false)
    }

    /// [`run`](Self::run), stopping early (with `Ok`, at a step boundary, after the row of
    /// that step if one is due) as soon as `stop()` is true; it is asked once per step.
    pub fn run_until(
        &mut self,
        plan: &RunPlan,
        sink: &mut dyn OutputSink,
        progress: &mut dyn FnMut(f64),
        stop: &dyn Fn() -> bool,
    ) -> Result<RunSummary> {
        let result = self.run_inner(plan, sink, progress, stop);
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
        stop: &dyn Fn() -> bool,
    ) -> Result<RunSummary> {
        let io = |e: std::io::Error| Error::Io { path: "output".into(), error: e };
        let labels: Vec<String> = plan.columns.iter().map(|c| c.0.clone()).collect();
        sink.begin(&labels).map_err(io)?;
        let total = crate::stepper::bus::step_count(plan.stop_time, self.step_size());
        self.end_blocks_at(plan.stop_time);
        let shortened = self.bus.end.is_some();
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
        let stoppers = self.stop_sources();
        let mut stopped = None;
        let mut last_row = self.time();
        let mut ended_at = None;
        let now = |sim: &Simulator| sim.time() + 1e-9 * sim.step_size();
        // On several threads, they wait for the phases awake between steps and rows.
        self.with_threads_awake(|sim| -> Result<()> {
            while sim.k < total && !stop() {
                // A request made while sampling the last row (or due now) ends the run here.
                if !stoppers.is_empty() {
                    if let Some(why) = sim.stop_due(&stoppers, now(sim)) {
                        stopped = Some(why);
                        break;
                    }
                }
                if let Err(e) = sim.step() {
                    // A failure after a component asked to stop ends the run at the last row.
                    match sim.stop_due(&stoppers, f64::INFINITY) {
                        Some(why) => {
                            stopped = Some(why);
                            break;
                        }
                        None => return Err(e),
                    }
                }
                // A signal block asked to end the run (an FMU's terminateSimulation) in this
                // step: the run ends here, with a row at the new time if every block that
                // asked made the whole step, else at the last row written (as the FMU-only
                // master ends).
                if let Some((made, why)) = sim.block_stop() {
                    if made {
                        emit(sim, &mut values)?;
                        last_row = sim.time();
                    }
                    stopped = Some(format!("t = {last_row} s, {why}"));
                    ended_at = Some(last_row);
                    break;
                }
                // A request due before this step's end: its row is not written.
                if !stoppers.is_empty() {
                    if let Some(why) = sim.stop_due(&stoppers, sim.time() - 0.5 * sim.step_size()) {
                        stopped = Some(why);
                        break;
                    }
                }
                // A shortened last step ends the run at the stop time: its row is written too.
                if sim.k % every == 0 || (shortened && sim.k == total) {
                    emit(sim, &mut values)?;
                    last_row = sim.time();
                }
                if !stoppers.is_empty() {
                    if let Some(why) = sim.stop_due(&stoppers, now(sim)) {
                        stopped = Some(why);
                        break;
                    }
                }
                if sim.k % report_every == 0 {
                    progress(sim.k as f64 / total as f64);
                }
            }
            Ok(())
        })?;
        if self.k >= total {
            progress(1.0);
        }
        Ok(RunSummary { steps: self.k - start, rows, final_time: ended_at.unwrap_or(self.time()), stopped })
    }

    /// The earliest request of a signal block to end the run made in the last step
    /// ([`crate::Block::stop_request`]): whether every block that asked made the whole step,
    /// and "asked by component '..': message".
    fn block_stop(&self) -> Option<(bool, String)> {
        let s = &self.sched;
        let mut made = true;
        let mut first: Option<(f64, String)> = None;
        for (b, blk) in s.blocks.iter().enumerate() {
            if let Some((t, whole, m)) = blk.stop_request() {
                made &= whole;
                if first.as_ref().is_none_or(|f| t < f.0) {
                    first = Some((t, format!("asked by component '{}': {m}", &s.block_names[b])));
                }
            }
        }
        first.map(|(_, why)| (made, why))
    }

    /// Whether a component asked to end the run by now (`sources` from
    /// [`stop_sources`](Self::stop_sources), found once): a signal block in the last step
    /// (an FMU's terminateSimulation), or an admittance or impedance whose request is due.
    /// The message says when and who, as `stiction run` reports it. For a caller that steps
    /// the simulator itself (the system FMU's doStep).
    pub fn stop_requested(&self, sources: &[(bool, usize)]) -> Option<String> {
        if let Some((_, why)) = self.block_stop() {
            return Some(format!("t = {} s, {why}", self.time()));
        }
        if sources.is_empty() {
            return None;
        }
        self.stop_due(sources, self.time() + 1e-9 * self.step_size())
    }

    /// The components that may ask to stop: (admittance?, index).
    pub fn stop_sources(&self) -> Vec<(bool, usize)> {
        let s = &self.sched;
        let adm = (0..s.adm.len()).filter(|&i| s.adm[i].may_request_stop()).map(|i| (true, i));
        let imp = (0..s.imp.len()).filter(|&i| s.imp[i].may_request_stop()).map(|i| (false, i));
        adm.chain(imp).collect()
    }

    /// The earliest stop request of `sources` due by time `by`, as "t = .. s, asked by
    /// component '..': message".
    fn stop_due(&self, sources: &[(bool, usize)], by: f64) -> Option<String> {
        let s = &self.sched;
        sources
            .iter()
            .filter_map(|&(adm, i)| {
                let (name, req) = if adm {
                    (&s.adm_names[i], s.adm[i].stop_request())
                } else {
                    (&s.imp_names[i], s.imp[i].stop_request())
                };
                req.filter(|(t, _)| *t <= by).map(|(t, m)| (t, format!("t = {t} s, asked by component '{name}': {m}")))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, m)| m)
    }
}
