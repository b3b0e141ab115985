//! Steppers: the modular RK4 of (13) with the stage step sizes of (21)/(22), and the
//! one-stage Euler special case (τ = T) that reproduces the papers' discrete-time
//! algorithms ((14), (20), (24), ...). Output sampling at a fixed interval.
//!
//! One RK4 step reads like (13):
//! ```text
//! for r in 1..=4:  xs = x(k) + T_{r−1}·ξ_{r−1}          (13b)/(13c)
//!                  Ψ: gather port motions from xs        (13d)
//!                  impedances: u, η = I(x̂, y, t; T_r)   (13e)/(22)
//!                  Φ: sum forces per admittance port     (13f)
//!                  admittances: ξ = A(x, û, t; T_r)      (13g)
//! x(k+1) = x(k) + T/6 (ξ1 + 2ξ2 + 2ξ3 + ξ4)              (13j)/(13l)
//! ```

use crate::component::Probe;
use crate::error::{Error, Result};
pub use crate::network::MAX_IMPEDANCE_PORTS;
use crate::parallel::{for_each_flat, split_run, Bufs, Offs};
use crate::port::{Force, Motion};
use crate::schedule::{Schedule, Slot};

/// Integration method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Modular RK4, (13) with (22): T_{0..3} = {0, T/2, T/2, T}, τ_{1..4} = {T/2, T/2, T, T}.
    Rk4,
    /// One stage, τ = T: x(k+1) = x(k) + T·ξ(x(k), kT; T).
    Euler,
}

/// Stage offsets T_{r−1} and stage step sizes τ = T_r of (21), as fractions of T.
const RK4_OFFSET: [f64; 4] = [0.0, 0.5, 0.5, 1.0];
const RK4_TAU: [f64; 4] = [0.5, 0.5, 1.0, 1.0];
const RK4_WEIGHT: [f64; 4] = [1.0, 2.0, 2.0, 1.0];

/// Where a signal value is read from.
#[derive(Clone, Debug, PartialEq)]
pub struct SignalRef {
    /// The name as written (`component.signal[i]`).
    pub name: String,
    pub(crate) source: Source,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    Adm {
        i: usize,
        which: usize,
        elem: usize,
    },
    Imp {
        i: usize,
        which: usize,
        elem: usize,
    },
    /// Raw state element of a component (`component.state[i]`).
    State {
        index: usize,
    },
}

/// A running simulation: the compiled schedule and its buffers.
pub struct Simulator {
    sched: Schedule,
    method: Method,
    step: f64,
    k: u64,
    x: Vec<f64>,
    xs: Vec<f64>,
    rate: Vec<f64>,
    acc: Vec<f64>,
    motions: Vec<Motion>,
    slots: Vec<Slot>,
    adm_forces: Vec<Force>,
    parallel: bool,
    grain_adm: usize,
    grain_imp: usize,
}

/// Components per sequential part of a parallel phase (below this, no parallelism).
const MIN_GRAIN: usize = 64;

impl Simulator {
    /// Prepare to integrate `sched` with `method` and step `step` (> 0). `threads` is the
    /// number of rayon threads the caller will run it on (1 = strictly serial).
    pub fn new(sched: Schedule, method: Method, step: f64, threads: usize) -> Result<Simulator> {
        if !(step.is_finite() && step > 0.0) {
            return Err(Error::invalid("solver.step", format!("must be a positive number, got {step}")));
        }
        let x = sched.initial_state();
        let n = sched.n;
        let n_slots = sched.attach.len();
        let n_adm_ports = *sched.adm_ports.last().unwrap_or(&0);
        let threads = threads.max(1);
        let parts = threads * 4;
        let grain_adm = (sched.adm.len() / parts).max(MIN_GRAIN);
        let grain_imp = (sched.imp.len() / parts).max(MIN_GRAIN);
        let parallel = threads > 1 && (sched.adm.len() > MIN_GRAIN || sched.imp.len() > MIN_GRAIN);
        Ok(Simulator {
            method,
            step,
            k: 0,
            xs: x.clone(),
            x,
            rate: vec![0.0; n],
            acc: vec![0.0; n],
            motions: vec![Motion::REST; n_slots],
            slots: vec![Slot::default(); n_slots],
            adm_forces: vec![Force::ZERO; n_adm_ports],
            parallel,
            grain_adm,
            grain_imp,
            sched,
        })
    }

    /// Current time kT.
    pub fn time(&self) -> f64 {
        self.k as f64 * self.step
    }

    /// Step size T.
    pub fn step_size(&self) -> f64 {
        self.step
    }

    /// Number of steps taken.
    pub fn steps_taken(&self) -> u64 {
        self.k
    }

    /// The full state vector x(k) (admittance states first, then impedance states).
    pub fn state(&self) -> &[f64] {
        &self.x
    }

    /// Mutable access to the state (for tests that perturb it).
    pub fn state_mut(&mut self) -> &mut [f64] {
        &mut self.x
    }

    /// The compiled schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.sched
    }

    /// One stage: Ψ, impedances, Φ, admittances on `self.xs`, rates into `self.rate`.
    fn stage(&mut self, t: f64, tau: f64) -> Result<()> {
        let sched = &self.sched;
        let nx = sched.nx;
        let (xa, xy) = self.xs.split_at(nx);
        let (ra, ry) = self.rate.split_at_mut(nx);
        let par = self.parallel;

        // Impedances (13d)/(13e): gather the motions of their ports, evaluate.
        let offs = Offs { a: &sched.imp_slots, b: &sched.imp_slots, c: &sched.imp_y };
        let imp_leaf = |range: std::ops::Range<usize>, b: Bufs<'_, Motion, Slot, f64>| {
            let (s0, y0) = (sched.imp_slots[range.start], sched.imp_y[range.start]);
            for i in range {
                let (sa, sb) = (sched.imp_slots[i] - s0, sched.imp_slots[i + 1] - s0);
                let (ya, yb) = (sched.imp_y[i] - y0, sched.imp_y[i + 1] - y0);
                let motions = &mut b.a[sa..sb];
                let slots = &mut b.b[sa..sb];
                let np = sb - sa;
                let mut forces = [Force::ZERO; MAX_IMPEDANCE_PORTS];
                for p in 0..np {
                    let (m, lever) = sched.gather(xa, sched.imp_slots[i] + p);
                    motions[p] = m;
                    slots[p].lever = lever;
                }
                let y = &xy[sched.imp_y[i] - nx..sched.imp_y[i + 1] - nx];
                let res = sched.imp[i].evaluate(motions, y, t, tau, &mut forces[..np], &mut b.c[ya..yb]);
                for p in 0..np {
                    slots[p].force = forces[p];
                }
                res.map_err(|f| (i, f))?;
            }
            Ok(())
        };
        split_run(
            0..sched.imp.len(),
            Bufs { a: &mut self.motions[..], b: &mut self.slots[..], c: ry },
            offs,
            self.grain_imp,
            par,
            &imp_leaf,
        )
        .map_err(|(i, f)| Error::Simulation {
            time: t,
            component: sched.imp_names[i].clone(),
            message: f.0,
        })?;

        // Φ (13f) then admittances (13g).
        let slots = &self.slots;
        let offs = Offs { a: &sched.adm_ports, b: &sched.adm_x, c: &sched.zeros_adm };
        let adm_leaf = |range: std::ops::Range<usize>, b: Bufs<'_, Force, f64, ()>| {
            let (p0, x0) = (sched.adm_ports[range.start], sched.adm_x[range.start]);
            for j in range {
                let (pa, pb) = (sched.adm_ports[j], sched.adm_ports[j + 1]);
                let forces = &mut b.a[pa - p0..pb - p0];
                for (k, gp) in (pa..pb).enumerate() {
                    let mut sum = Force::ZERO;
                    for &s in &sched.incoming[sched.in_off[gp]..sched.in_off[gp + 1]] {
                        let slot = &slots[s as usize];
                        sum += slot.force.moved_by(&slot.lever);
                    }
                    forces[k] = sum;
                }
                let (xa0, xb0) = (sched.adm_x[j], sched.adm_x[j + 1]);
                sched.adm[j]
                    .derivative(&xa[xa0..xb0], forces, t, tau, &mut b.b[xa0 - x0..xb0 - x0])
                    .map_err(|f| (j, f))?;
            }
            Ok(())
        };
        let mut unit: [(); 0] = [];
        split_run(
            0..sched.adm.len(),
            Bufs { a: &mut self.adm_forces[..], b: ra, c: &mut unit[..] },
            offs,
            self.grain_adm,
            par,
            &adm_leaf,
        )
        .map_err(|(j, f)| Error::Simulation { time: t, component: sched.adm_names[j].clone(), message: f.0 })
    }

    /// Advance one step of size T.
    pub fn step(&mut self) -> Result<()> {
        let t = self.time();
        let h = self.step;
        let par = self.parallel;
        match self.method {
            Method::Euler => {
                self.xs.copy_from_slice(&self.x);
                self.stage(t, h)?;
                let rate = &self.rate;
                for_each_flat(&mut self.x, par, |i, x| x + h * rate[i]);
            }
            Method::Rk4 => {
                for r in 0..4 {
                    if r == 0 {
                        self.xs.copy_from_slice(&self.x);
                    } else {
                        let c = RK4_OFFSET[r] * h;
                        let (x, rate) = (&self.x, &self.rate);
                        for_each_flat(&mut self.xs, par, |i, _| x[i] + c * rate[i]);
                    }
                    self.stage(t + RK4_OFFSET[r] * h, RK4_TAU[r] * h)?;
                    let rate = &self.rate;
                    if r == 0 {
                        self.acc.copy_from_slice(rate);
                    } else {
                        let w = RK4_WEIGHT[r];
                        for_each_flat(&mut self.acc, par, |i, a| a + w * rate[i]);
                    }
                }
                let c = h / 6.0;
                let acc = &self.acc;
                for_each_flat(&mut self.x, par, |i, x| x + c * acc[i]);
            }
        }
        for (j, a) in self.sched.adm.iter().enumerate() {
            a.post_step(&mut self.x[self.sched.adm_x[j]..self.sched.adm_x[j + 1]]);
        }
        self.k += 1;
        self.check_finite()
    }

    /// Error naming the first component whose state is no longer finite.
    fn check_finite(&self) -> Result<()> {
        if self.x.iter().all(|v| v.is_finite()) {
            return Ok(());
        }
        let bad = self.x.iter().position(|v| !v.is_finite()).unwrap_or(0);
        let component = self.owner_of_state(bad);
        Err(Error::Simulation {
            time: self.time(),
            component,
            message: "state became non-finite (NaN or infinite); the step may be too large for the stiffness".into(),
        })
    }

    fn owner_of_state(&self, index: usize) -> String {
        let s = &self.sched;
        if index < s.nx {
            let j = s.adm_x.partition_point(|&o| o <= index).saturating_sub(1);
            s.adm_names.get(j).cloned().unwrap_or_default()
        } else {
            let i = s.imp_y.partition_point(|&o| o <= index).saturating_sub(1);
            s.imp_names.get(i).cloned().unwrap_or_default()
        }
    }

    /// Evaluate every component at the current state with τ = T (the Euler form (20)) so
    /// that forces and rates are available to signals. Does not change the state.
    pub fn probe(&mut self) -> Result<()> {
        self.xs.copy_from_slice(&self.x);
        let (t, h) = (self.time(), self.step);
        self.stage(t, h)
    }

    /// Resolve `component.signal[i]` (or `component.signal` for a one-element signal,
    /// or `component.state[i]` for a raw state).
    pub fn resolve(&self, name: &str) -> Result<SignalRef> {
        let s = &self.sched;
        let bad = |msg: String| Error::invalid(format!("output.signals: '{name}'"), msg);
        let (comp, rest) = name.split_once('.').ok_or_else(|| bad("expected 'component.signal'".into()))?;
        let (sig, elem) = match rest.split_once('[') {
            Some((sig, idx)) => {
                let idx = idx.strip_suffix(']').ok_or_else(|| bad("missing ']'".into()))?;
                let e: usize = idx.trim().parse().map_err(|_| bad(format!("'{idx}' is not an index")))?;
                (sig, Some(e))
            }
            None => (rest, None),
        };
        let (signals, kind, range) = if let Some(i) = s.adm_names.iter().position(|n| n == comp) {
            (s.adm[i].signals(), (true, i), s.adm_x[i]..s.adm_x[i + 1])
        } else if let Some(i) = s.imp_names.iter().position(|n| n == comp) {
            (s.imp[i].signals(), (false, i), s.imp_y[i]..s.imp_y[i + 1])
        } else {
            return Err(bad(format!("there is no component named '{comp}'")));
        };
        if sig == "state" {
            let e = elem.unwrap_or(0);
            if e >= range.len() || (elem.is_none() && range.len() != 1) {
                return Err(bad(format!("'{comp}' has {} states; use state[0..{}]", range.len(), range.len())));
            }
            return Ok(SignalRef { name: name.to_string(), source: Source::State { index: range.start + e } });
        }
        let which = signals.iter().position(|x| x.name == sig).ok_or_else(|| {
            let list: Vec<String> = signals.iter().map(|x| format!("{}[{}]", x.name, x.len)).collect();
            bad(format!("'{comp}' has no signal '{sig}' (signals: {}, state[..])", list.join(", ")))
        })?;
        let len = signals[which].len;
        let elem = match elem {
            Some(e) if e < len => e,
            Some(e) => return Err(bad(format!("index {e} out of range: '{sig}' has {len} element(s)"))),
            None if len == 1 => 0,
            None => return Err(bad(format!("'{sig}' has {len} elements; write '{comp}.{sig}[i]'"))),
        };
        let (is_adm, i) = kind;
        let source = if is_adm { Source::Adm { i, which, elem } } else { Source::Imp { i, which, elem } };
        Ok(SignalRef { name: name.to_string(), source })
    }

    /// Value of a resolved signal; call [`probe`](Self::probe) first at this state.
    pub fn value(&self, r: &SignalRef) -> f64 {
        let s = &self.sched;
        let t = self.time();
        match r.source {
            Source::State { index } => self.x[index],
            Source::Adm { i, which, elem } => {
                let (a, b) = (s.adm_x[i], s.adm_x[i + 1]);
                let probe = Probe {
                    t,
                    tau: self.step,
                    state: &self.x[a..b],
                    rate: &self.rate[a..b],
                    motions: &[],
                    forces: &self.adm_forces[s.adm_ports[i]..s.adm_ports[i + 1]],
                };
                s.adm[i].signal(which, elem, &probe)
            }
            Source::Imp { i, which, elem } => {
                let (a, b) = (s.imp_y[i], s.imp_y[i + 1]);
                let (sa, sb) = (s.imp_slots[i], s.imp_slots[i + 1]);
                let mut forces = [Force::ZERO; MAX_IMPEDANCE_PORTS];
                let np = sb - sa;
                for (f, slot) in forces.iter_mut().zip(&self.slots[sa..sb]) {
                    *f = slot.force;
                }
                let probe = Probe {
                    t,
                    tau: self.step,
                    state: &self.x[a..b],
                    rate: &self.rate[a..b],
                    motions: &self.motions[sa..sb],
                    forces: &forces[..np],
                };
                s.imp[i].signal(which, elem, &probe)
            }
        }
    }

    /// Total energy of all components that define one (J): kinetic + gravity potential of
    /// admittances, elastic energy of impedances. Call after [`probe`](Self::probe).
    pub fn energy(&self) -> f64 {
        let s = &self.sched;
        let mut e = 0.0;
        for (j, a) in s.adm.iter().enumerate() {
            e += a.energy(&self.x[s.adm_x[j]..s.adm_x[j + 1]]).unwrap_or(0.0);
        }
        for (i, imp) in s.imp.iter().enumerate() {
            e += imp
                .energy(&self.motions[s.imp_slots[i]..s.imp_slots[i + 1]], &self.x[s.imp_y[i]..s.imp_y[i + 1]])
                .unwrap_or(0.0);
        }
        e
    }
}

/// Receives sampled output rows as the run goes.
pub trait OutputSink: Send {
    /// Column labels (without the time column).
    fn begin(&mut self, labels: &[String]) -> std::io::Result<()>;
    /// One row at time `t`.
    fn row(&mut self, t: f64, values: &[f64]) -> std::io::Result<()>;
    /// Flush; called on success and on failure.
    fn finish(&mut self) -> std::io::Result<()>;
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
}

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
        let total = (plan.stop_time / self.step - 1e-9).ceil().max(0.0) as u64;
        let every = ((plan.interval / self.step).round() as u64).max(1);
        let mut values = vec![0.0; plan.columns.len()];
        let mut rows = 0u64;
        let mut emit = |sim: &mut Simulator, values: &mut Vec<f64>| -> Result<()> {
            sim.probe()?;
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
