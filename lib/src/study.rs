//! Parameter studies: a grid (outer product of value lists) or a Monte Carlo sample of a
//! system's parameters, one single-threaded run per parameter set, summarised as one table
//! row per run (the varied values, statistics of output signals, status and message).
//!
//! The values of run i depend only on the study and i (the grid index, or a counter-based
//! generator keyed by (seed, i, parameter)), so any range of runs computed anywhere (a thread,
//! a process, a Dask worker) gives the same rows bit for bit. `stiction sweep` and the Python
//! package are thin wrappers over [`Study`].

use crate::pipeline::{Document, Opt};
use crate::set::{self, SetError};
use std::io::{self, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use stiction_framework::output::number::float_text;
use stiction_framework::{OutputSink, Tee};

/// How one parameter varies.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Grid: these values (`v1,v2,…`, or `start:stop:count` expanded to `count` equally
    /// spaced values including both ends).
    List(Vec<f64>),
    /// Monte Carlo: uniform on [a, b).
    Uniform(f64, f64),
    /// Monte Carlo: normal with mean μ and standard deviation σ.
    Normal(f64, f64),
}

/// One `--vary NAME=SPEC`.
#[derive(Clone, Debug, PartialEq)]
pub struct Vary {
    /// The parameter as `--set` names it (`m.mass`, `solver.step`).
    pub name: String,
    pub values: Values,
}

/// A statistic of an output signal over the rows of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stat {
    /// Value at the first row (t = 0).
    Initial,
    /// Value at the last row (the stop time).
    Final,
    Min,
    Max,
    /// Arithmetic mean of the rows (the time average over equally spaced samples).
    Mean,
    /// Root mean square of the rows.
    Rms,
    /// Standard deviation of the rows (population).
    Std,
    /// Largest |value|.
    AbsMax,
    /// max − min.
    Ptp,
}

impl Stat {
    pub const ALL: [Stat; 9] =
        [Stat::Initial, Stat::Final, Stat::Min, Stat::Max, Stat::Mean, Stat::Rms, Stat::Std, Stat::AbsMax, Stat::Ptp];

    pub fn name(self) -> &'static str {
        match self {
            Stat::Initial => "initial",
            Stat::Final => "final",
            Stat::Min => "min",
            Stat::Max => "max",
            Stat::Mean => "mean",
            Stat::Rms => "rms",
            Stat::Std => "std",
            Stat::AbsMax => "absmax",
            Stat::Ptp => "ptp",
        }
    }

    fn parse(s: &str) -> Option<Stat> {
        Stat::ALL.into_iter().find(|x| x.name() == s)
    }
}

/// The statistics wanted of one output signal (`--outputs x=final,max`).
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// An output label of the system, or a signal name `component.signal[i]`.
    pub signal: String,
    pub stats: Vec<Stat>,
}

/// Whether a run finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    Failed,
    /// Not run, or stopped part-way, on a stop request ([`stiction_framework::cancel`]):
    /// no statistics; `stiction sweep` leaves such rows out of its table.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// One row of the summary table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub run: usize,
    /// The value of each `--vary` parameter, in the order given.
    pub varied: Vec<f64>,
    /// One value per output statistic, in [`Study::columns`] order (NaN for a failed run).
    pub stats: Vec<f64>,
    pub status: RunStatus,
    /// Why a failed run failed (empty when ok).
    pub message: String,
}

/// A bad study description; the message names the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StudyError(pub String);

impl std::fmt::Display for StudyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StudyError {}

impl From<SetError> for StudyError {
    fn from(e: SetError) -> Self {
        StudyError(e.to_string())
    }
}

/// A parameter study. Build with [`Study::parse`], then [`Study::prepare`] against the base
/// system (checks every name, fills in the default outputs), then run any range of runs.
#[derive(Clone, Debug)]
pub struct Study {
    pub vary: Vec<Vary>,
    /// `Some(N)`: Monte Carlo with N samples; `None`: the grid.
    pub samples: Option<usize>,
    pub seed: u64,
    pub outputs: Vec<Output>,
    /// Keep each run's full results in this directory (`run-0007.csv`, …).
    pub save_runs: Option<PathBuf>,
    prepared: bool,
}

/// Parse `v1,v2,…`, `start:stop:count`, `uniform(a,b)`, `normal(mu,sigma)`.
fn parse_values(name: &str, spec: &str, arg: &str) -> Result<Values, StudyError> {
    let bad = |m: String| StudyError(format!("--vary {arg}: {m}"));
    let num = |s: &str| -> Result<f64, StudyError> {
        match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(bad(format!("'{}' is not a finite number", s.trim()))),
        }
    };
    let spec = spec.trim();
    let call = |f: &str| spec.strip_prefix(f).and_then(|r| r.strip_prefix('(')).and_then(|r| r.strip_suffix(')'));
    for (f, normal) in [("uniform", false), ("normal", true)] {
        if let Some(inner) = call(f) {
            let (a, b) = inner.split_once(',').ok_or_else(|| bad(format!("expected {f}(a,b)")))?;
            let (a, b) = (num(a)?, num(b)?);
            return if normal {
                if b < 0.0 {
                    return Err(bad(format!("the standard deviation of normal(μ,σ) must be ≥ 0, got {b}")));
                }
                Ok(Values::Normal(a, b))
            } else {
                if b < a {
                    return Err(bad(format!("uniform(a,b) needs a ≤ b, got {a} > {b}")));
                }
                Ok(Values::Uniform(a, b))
            };
        }
    }
    if spec.contains(':') {
        let parts: Vec<&str> = spec.split(':').collect();
        if parts.len() != 3 {
            return Err(bad("expected start:stop:count".into()));
        }
        let (a, b) = (num(parts[0])?, num(parts[1])?);
        let n: usize =
            parts[2].trim().parse().ok().filter(|&n| (1..=MAX_RUNS).contains(&n)).ok_or_else(|| {
                bad(format!("count '{}' must be a whole number from 1 to {MAX_RUNS}", parts[2].trim()))
            })?;
        let v = if n == 1 { vec![a] } else { (0..n).map(|i| a + (b - a) * i as f64 / (n - 1) as f64).collect() };
        return Ok(Values::List(v));
    }
    if spec.is_empty() {
        return Err(bad(format!("no values for '{name}'")));
    }
    Ok(Values::List(spec.split(',').map(num).collect::<Result<_, _>>()?))
}

/// The most runs a study takes (`--samples`, a grid's product): each run keeps a row in
/// memory, and more would not end in a working day anyway.
pub const MAX_RUNS: usize = 10_000_000;

/// SplitMix64's finaliser: a bijective 64-bit mix (Steele, Lea & Flood 2014).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in (0, 1) that depends only on (seed, run, parameter, stream): a
/// counter-based generator, so runs can be computed in any order and place.
fn unit(seed: u64, run: usize, param: usize, stream: u64) -> f64 {
    let h = mix(mix(mix(seed) ^ run as u64) ^ ((param as u64) << 8 | stream));
    ((h >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

impl Study {
    /// Build a study from the command-line strings: `vary` as `NAME=v1,v2,…`,
    /// `NAME=start:stop:count`, `NAME=uniform(a,b)`, `NAME=normal(mu,sigma)`; `samples` for
    /// Monte Carlo; `outputs` as `SIGNAL=stat,stat,…` (stats: initial, final, min, max,
    /// mean, rms, std, absmax, ptp; default for a signal without `=`: final).
    pub fn parse(vary: &[String], samples: Option<usize>, seed: u64, outputs: &[String]) -> Result<Study, StudyError> {
        if vary.is_empty() {
            return Err(StudyError("give at least one --vary NAME=VALUES".into()));
        }
        let mut vs = Vec::new();
        for arg in vary {
            let (name, spec) =
                arg.split_once('=').ok_or_else(|| StudyError(format!("--vary {arg}: expected NAME=VALUES")))?;
            let name = name.trim().to_string();
            if vs.iter().any(|v: &Vary| v.name == name) {
                return Err(StudyError(format!("--vary {arg}: '{name}' is varied twice")));
            }
            let values = parse_values(&name, spec, arg)?;
            match (&values, samples) {
                (Values::List(_), Some(_)) => {
                    return Err(StudyError(format!(
                        "--vary {arg}: a value list is a grid; with --samples give uniform(a,b) or normal(mu,sigma)"
                    )))
                }
                (Values::Uniform(..) | Values::Normal(..), None) => {
                    return Err(StudyError(format!("--vary {arg}: a distribution needs --samples N (Monte Carlo)")))
                }
                _ => {}
            }
            vs.push(Vary { name, values });
        }
        if samples == Some(0) {
            return Err(StudyError("--samples must be at least 1".into()));
        }
        if let Some(n) = samples.filter(|&n| n > MAX_RUNS) {
            return Err(StudyError(format!("--samples {n}: a study has at most {MAX_RUNS} runs")));
        }
        let grid = vs.iter().try_fold(1usize, |acc, v: &Vary| match &v.values {
            Values::List(l) => acc.checked_mul(l.len()).filter(|&n| n <= MAX_RUNS),
            _ => Some(acc),
        });
        if samples.is_none() && grid.is_none() {
            return Err(StudyError(format!(
                "--vary: the grid of {} parameters has more than {MAX_RUNS} runs (a study has at most {MAX_RUNS})",
                vs.len()
            )));
        }
        let mut outs: Vec<Output> = Vec::new();
        for arg in outputs {
            let (signal, stats) = match arg.rsplit_once('=') {
                Some((s, list)) => {
                    let mut stats = Vec::new();
                    for w in list.split(',').map(str::trim) {
                        let st = Stat::parse(w).ok_or_else(|| {
                            let names: Vec<&str> = Stat::ALL.iter().map(|s| s.name()).collect();
                            StudyError(format!(
                                "--outputs {arg}: unknown statistic '{w}'{} (known: {})",
                                set::suggestion(w, names.iter().copied()),
                                names.join(", ")
                            ))
                        })?;
                        stats.push(st);
                    }
                    (s.trim().to_string(), stats)
                }
                None => (arg.trim().to_string(), vec![Stat::Final]),
            };
            if signal.is_empty() {
                return Err(StudyError(format!("--outputs {arg}: no signal named")));
            }
            outs.push(Output { signal, stats });
        }
        Ok(Study { vary: vs, samples, seed, outputs: outs, save_runs: None, prepared: false })
    }

    /// Check the study against its base system: every varied name is a parameter the system
    /// takes (the first run's values are applied and the system is read), every output is a
    /// signal of it; without `--outputs`, the final value of every output signal.
    pub fn prepare(&mut self, base: &Document) -> Result<(), StudyError> {
        let mut doc = base.clone();
        for (v, x) in self.vary.iter().zip(self.values(0)) {
            let arg = format!("{}={}", v.name, json_number(x));
            doc.edit(Opt::Vary(&arg)).map_err(|e: SetError| StudyError(format!("--vary {}: {}", v.name, e.message)))?;
        }
        // A misspelt name fails the study here; a bad value of run 0 only fails that run (its
        // row), so the outputs are then taken from the base system.
        let mut system = match doc.system() {
            Ok(s) => s.system,
            Err(e) => {
                let msg = e.to_string();
                let base_sys = base.system().map(|l| l.system);
                match base_sys {
                    Ok(s) if !msg.contains("unknown") => s,
                    _ => return Err(StudyError(format!("{msg} (with the values of run 0)"))),
                }
            }
        };
        let labels: Vec<String> = system.columns.iter().map(|c| c.0.clone()).collect();
        if self.outputs.is_empty() {
            if labels.is_empty() {
                return Err(StudyError(
                    "the system has no output signals: give --outputs SIGNAL=final,max,… or list output.signals".into(),
                ));
            }
            self.outputs = labels.iter().map(|l| Output { signal: l.clone(), stats: vec![Stat::Final] }).collect();
        }
        for o in &self.outputs {
            if !labels.contains(&o.signal) {
                system.columns.push((o.signal.clone(), o.signal.clone()));
            }
        }
        if let Err(e) = system.into_simulator(1) {
            // Name the --outputs argument when it is the unknown signal.
            let msg = e.to_string();
            if let Some(o) = self.outputs.iter().find(|o| !labels.contains(&o.signal) && msg.contains(&o.signal)) {
                return Err(StudyError(format!(
                    "--outputs {}: not an output label{} nor a signal of the system ({msg})",
                    o.signal,
                    set::suggestion(&o.signal, labels.iter().map(String::as_str))
                )));
            }
            return Err(StudyError(format!("run 0: {msg}")));
        }
        self.prepared = true;
        Ok(())
    }

    /// Number of runs: the product of the list lengths, or the sample count.
    pub fn runs(&self) -> usize {
        match self.samples {
            Some(n) => n,
            None => self
                .vary
                .iter()
                .map(|v| match &v.values {
                    Values::List(l) => l.len(),
                    _ => 1,
                })
                .product(),
        }
    }

    /// The varied values of run `run`: the grid point (first `--vary` slowest, last fastest)
    /// or the Monte Carlo draw keyed by (seed, run, parameter).
    pub fn values(&self, run: usize) -> Vec<f64> {
        let mut out = vec![0.0; self.vary.len()];
        let mut rest = run;
        for (j, v) in self.vary.iter().enumerate().rev() {
            out[j] = match &v.values {
                Values::List(l) => {
                    let x = l[rest % l.len()];
                    rest /= l.len();
                    x
                }
                Values::Uniform(a, b) => a + (b - a) * unit(self.seed, run, j, 0),
                Values::Normal(mu, sigma) => {
                    // Box-Muller: z = √(−2 ln u₁) cos(2π u₂).
                    let (u1, u2) = (unit(self.seed, run, j, 0), unit(self.seed, run, j, 1));
                    mu + sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
                }
            };
        }
        out
    }

    /// The header: `run`, each varied name, `SIGNAL:stat` per output statistic, `status`,
    /// `message`.
    pub fn columns(&self) -> Vec<String> {
        let mut c = vec!["run".to_string()];
        c.extend(self.vary.iter().map(|v| v.name.clone()));
        c.extend(self.stat_columns());
        c.push("status".into());
        c.push("message".into());
        c
    }

    fn stat_columns(&self) -> Vec<String> {
        self.outputs.iter().flat_map(|o| o.stats.iter().map(move |s| format!("{}:{}", o.signal, s.name()))).collect()
    }

    /// Run `run` on one thread. Never panics: a failure (bad value, diverging simulation,
    /// even a panic inside a component) is a row with status failed and its message.
    pub fn run_one(&self, base: &Document, run: usize) -> Row {
        let varied = self.values(run);
        let nstats = self.stat_columns().len();
        let interrupted = |varied| Row {
            run,
            varied,
            stats: vec![f64::NAN; nstats],
            status: RunStatus::Interrupted,
            message: "interrupted".into(),
        };
        if stiction_framework::cancel::requested() {
            return interrupted(varied);
        }
        let attempt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.simulate(base, run, &varied)));
        let result = match attempt {
            Ok(r) => r,
            Err(p) => {
                let what = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                Err(format!("internal error (panic): {what}"))
            }
        };
        if stiction_framework::cancel::requested() {
            // Stopped part-way (or its load gave up): not a result.
            return interrupted(varied);
        }
        match result {
            Ok(stats) => Row { run, varied, stats, status: RunStatus::Ok, message: String::new() },
            Err(message) => Row { run, varied, stats: vec![f64::NAN; nstats], status: RunStatus::Failed, message },
        }
    }

    fn simulate(&self, base: &Document, run: usize, varied: &[f64]) -> Result<Vec<f64>, String> {
        if !self.prepared {
            return Err("the study was not prepared against its system (Study::prepare)".into());
        }
        let mut doc = base.clone();
        for (v, x) in self.vary.iter().zip(varied) {
            let arg = format!("{}={}", v.name, json_number(*x));
            doc.edit(Opt::Vary(&arg)).map_err(|e: SetError| format!("--vary {}: {}", v.name, e.message))?;
        }
        let mut system = doc.system().map_err(|e| e.to_string())?.system;
        let labels: Vec<String> = system.columns.iter().map(|c| c.0.clone()).collect();
        let mut index = Vec::new();
        for o in &self.outputs {
            match labels.iter().position(|l| *l == o.signal) {
                Some(i) => index.push(i),
                None => {
                    index.push(system.columns.len());
                    system.columns.push((o.signal.clone(), o.signal.clone()));
                }
            }
        }
        let step = system.step;
        let (mut sim, plan) = system.into_simulator(1).map_err(|e| e.to_string())?;
        let mut acc = Accumulator::new(index.clone());
        let result = match &self.save_runs {
            Some(dir) => {
                let width = self.runs().saturating_sub(1).to_string().len().max(4);
                let path = dir.join(format!("run-{run:0width$}.csv"));
                // Whole or not at all, never over a device or link (crate::outfile); the rows
                // of a failed run are kept as those of `stiction run`.
                let mut file = crate::outfile::OutFile::create(&path)?;
                let mut csv = stiction_framework::CsvSink::new(io::BufWriter::new(&mut file)).with_step(step);
                let mut tee = Tee(&mut acc, &mut csv);
                let r = sim.run_until(&plan, &mut tee, &mut |_| {}, &stiction_framework::cancel::requested);
                drop(csv);
                file.commit()?;
                r
            }
            None => sim.run_until(&plan, &mut acc, &mut |_| {}, &stiction_framework::cancel::requested),
        };
        result.map_err(|e| e.to_string())?;
        Ok(self
            .outputs
            .iter()
            .enumerate()
            .flat_map(|(k, o)| o.stats.iter().map(move |s| (k, *s)))
            .map(|(k, s)| acc.stat(k, s))
            .collect())
    }

    /// Runs `runs` on a pool of `threads` threads, one run per thread at a time (each run
    /// single-threaded); rows in run order, identical for any thread count. `progress` is
    /// called after each run with the number of runs of this range finished so far.
    pub fn run_range(
        &self,
        base: &Document,
        runs: Range<usize>,
        threads: usize,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<Row> {
        use rayon::prelude::*;
        let done = AtomicUsize::new(0);
        let work = || {
            runs.clone()
                .into_par_iter()
                .with_max_len(1)
                .map(|i| {
                    let row = self.run_one(base, i);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    row
                })
                .collect::<Vec<Row>>()
        };
        match rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build() {
            Ok(pool) => pool.install(work),
            // No threads to be had: run here, in order.
            Err(_) => runs
                .clone()
                .map(|i| {
                    let row = self.run_one(base, i);
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1);
                    row
                })
                .collect(),
        }
    }
}

/// `x` as JSON text for a `--set` value (shortest round trip).
fn json_number(x: f64) -> String {
    if x.is_finite() {
        serde_json::Value::from(x).to_string()
    } else {
        "null".into()
    }
}

/// Running statistics of the chosen columns of a run.
struct Accumulator {
    index: Vec<usize>,
    first: Vec<f64>,
    last: Vec<f64>,
    min: Vec<f64>,
    max: Vec<f64>,
    sum: Vec<f64>,
    sumsq: Vec<f64>,
    n: usize,
}

impl Accumulator {
    fn new(index: Vec<usize>) -> Self {
        let k = index.len();
        Accumulator {
            index,
            first: vec![f64::NAN; k],
            last: vec![f64::NAN; k],
            min: vec![f64::INFINITY; k],
            max: vec![f64::NEG_INFINITY; k],
            sum: vec![0.0; k],
            sumsq: vec![0.0; k],
            n: 0,
        }
    }

    fn stat(&self, k: usize, s: Stat) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let n = self.n as f64;
        let mean = self.sum[k] / n;
        match s {
            Stat::Initial => self.first[k],
            Stat::Final => self.last[k],
            Stat::Min => self.min[k],
            Stat::Max => self.max[k],
            Stat::Mean => mean,
            Stat::Rms => (self.sumsq[k] / n).sqrt(),
            Stat::Std => (self.sumsq[k] / n - mean * mean).max(0.0).sqrt(),
            Stat::AbsMax => self.max[k].abs().max(self.min[k].abs()),
            Stat::Ptp => self.max[k] - self.min[k],
        }
    }
}

impl OutputSink for Accumulator {
    fn begin(&mut self, _labels: &[String]) -> io::Result<()> {
        Ok(())
    }
    fn row(&mut self, _t: f64, values: &[f64]) -> io::Result<()> {
        for (k, &c) in self.index.iter().enumerate() {
            let v = values[c];
            if self.n == 0 {
                self.first[k] = v;
            }
            self.last[k] = v;
            self.min[k] = self.min[k].min(v);
            self.max[k] = self.max[k].max(v);
            self.sum[k] += v;
            self.sumsq[k] += v * v;
        }
        self.n += 1;
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The summary table as CSV: [`Study::columns`], one line per row, shortest round-trip
/// numbers (exponent notation when tiny or huge), NaN for the statistics of a failed run.
pub fn write_csv(study: &Study, rows: &[Row], w: impl Write) -> io::Result<()> {
    let mut out = csv::Writer::from_writer(w);
    let err = |e: csv::Error| io::Error::other(e.to_string());
    out.write_record(study.columns()).map_err(err)?;
    for r in rows {
        let mut rec = vec![r.run.to_string()];
        rec.extend(r.varied.iter().map(|x| float_text(*x)));
        rec.extend(r.stats.iter().map(|x| float_text(*x)));
        rec.push(r.status.as_str().to_string());
        rec.push(r.message.clone());
        out.write_record(&rec).map_err(err)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn grid_is_the_outer_product() {
        let st = Study::parse(&s(&["a.x=1,2", "b.y=0:1:3"]), None, 0, &[]).unwrap();
        assert_eq!(st.runs(), 6);
        assert_eq!(st.values(0), vec![1.0, 0.0]);
        assert_eq!(st.values(1), vec![1.0, 0.5]);
        assert_eq!(st.values(3), vec![2.0, 0.0]);
        assert_eq!(st.values(5), vec![2.0, 1.0]);
    }

    #[test]
    fn monte_carlo_depends_on_seed_and_run_only() {
        let st = Study::parse(&s(&["a.x=uniform(2,3)", "b.y=normal(10,0.5)"]), Some(2000), 7, &[]).unwrap();
        let v: Vec<Vec<f64>> = (0..2000).map(|i| st.values(i)).collect();
        assert!(v.iter().all(|r| (2.0..3.0).contains(&r[0])));
        let mean = v.iter().map(|r| r[1]).sum::<f64>() / 2000.0;
        let sd = (v.iter().map(|r| (r[1] - mean).powi(2)).sum::<f64>() / 2000.0).sqrt();
        // Sample mean within 4 standard errors (0.5/√2000 ≈ 0.011), sd within 10 %.
        assert!((mean - 10.0).abs() < 0.045, "{mean}");
        assert!((sd - 0.5).abs() < 0.05, "{sd}");
        assert_eq!(st.values(1234), v[1234]);
        let other = Study::parse(&s(&["a.x=uniform(2,3)", "b.y=normal(10,0.5)"]), Some(2000), 8, &[]).unwrap();
        assert_ne!(other.values(0), v[0]);
    }

    #[test]
    fn bad_specs_name_the_argument() {
        let e = Study::parse(&s(&["a.x=uniform(3,2)"]), Some(3), 0, &[]).unwrap_err();
        assert!(e.0.starts_with("--vary a.x=uniform(3,2)"), "{e}");
        let e = Study::parse(&s(&["a.x=1,2"]), Some(3), 0, &[]).unwrap_err();
        assert!(e.0.contains("grid"), "{e}");
        let e = Study::parse(&s(&["a.x=normal(0,1)"]), None, 0, &[]).unwrap_err();
        assert!(e.0.contains("--samples"), "{e}");
        let e = Study::parse(&s(&["a.x=1:2:0"]), None, 0, &[]).unwrap_err();
        assert!(e.0.contains("count"), "{e}");
        let e = Study::parse(&s(&["a.x=1,2"]), None, 0, &s(&["x=fnal"])).unwrap_err();
        assert!(e.0.contains("did you mean 'final'"), "{e}");
    }
}
