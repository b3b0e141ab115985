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

use crate::batch::{PortForces, PortMotions};
use crate::component::Probe;
use crate::error::{Error, Result};
pub use crate::network::MAX_IMPEDANCE_PORTS;
use crate::parallel::{split_run, Cut};
use crate::port::{Force, Motion};
use crate::schedule::{groups_in, Schedule};
use nalgebra::Vector3;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// x(k).
    x: Vec<f64>,
    /// Stage states (13b)/(13c), used in turn as the input and the output of a stage.
    xs: [Vec<f64>; 2],
    work: Work,
    threads: usize,
    parallel: bool,
    grain_adm: usize,
    grain_imp: usize,
}

/// The buffers a stage writes besides the next stage state.
struct Work {
    /// ξ of the last stage.
    rate: Vec<f64>,
    /// ξ1 + 2ξ2 + 2ξ3 (+ ξ4) of (13j), accumulated stage by stage.
    acc: Vec<f64>,
    /// Force of every impedance port (slot), as the impedance produced it.
    force: Vec<Vector3<f64>>,
    /// Moment of every slot; empty when no impedance port is a frame port.
    moment: Vec<Vector3<f64>>,
    /// The summed forces Φ of every admittance port on the per-component path (after
    /// `probe`: of every port, for signals).
    adm_forces: Vec<Force>,
}

/// What a stage does with the rates ξ it has just computed, in the same parallel part,
/// for the states of that part: the vector operations of (13b)/(13c)/(13j).
#[derive(Clone, Copy, Debug)]
enum Update {
    /// Nothing (`probe`).
    None,
    /// acc = ξ (`first`) or acc += w ξ; next = x + c ξ: the next stage state.
    Stage { first: bool, w: f64, c: f64 },
    /// next = x + c ξ: x(k+1) of Euler.
    EulerEnd { c: f64 },
    /// next = x + c (acc + w ξ): x(k+1) of (13j)/(13l).
    Rk4End { w: f64, c: f64 },
}

impl Update {
    /// Whether `next` is x(k+1): then the stage also runs `post_step` and checks that the
    /// new states are finite.
    fn ends_step(self) -> bool {
        matches!(self, Update::EulerEnd { .. } | Update::Rk4End { .. })
    }

    /// Apply to one part: `x`, `rate`, `acc`, `next` hold the same states.
    #[inline]
    fn apply(self, x: &[f64], rate: &[f64], acc: &mut [f64], next: &mut [f64]) {
        match self {
            Update::None => {}
            Update::Stage { first, w, c } => {
                if first {
                    acc.copy_from_slice(rate);
                } else {
                    for (a, &r) in acc.iter_mut().zip(rate) {
                        *a += w * r;
                    }
                }
                for ((n, &x), &r) in next.iter_mut().zip(x).zip(rate) {
                    *n = x + c * r;
                }
            }
            Update::EulerEnd { c } => {
                for ((n, &x), &r) in next.iter_mut().zip(x).zip(rate) {
                    *n = x + c * r;
                }
            }
            Update::Rk4End { w, c } => {
                for (((n, &x), &a), &r) in next.iter_mut().zip(x).zip(&*acc).zip(rate) {
                    *n = x + c * (a + w * r);
                }
            }
        }
    }
}

/// How the phases of a stage are split.
#[derive(Clone, Copy, Debug)]
struct Split {
    parallel: bool,
    grain_adm: usize,
    grain_imp: usize,
}

/// Components per sequential part of a parallel phase.
const MIN_GRAIN: usize = 64;

/// Default [`Simulator::set_parallel_threshold`]: below this many components a step runs
/// serially even with several threads, because forking costs more than it saves.
pub const PARALLEL_THRESHOLD: usize = 4096;

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
        let mut sim = Simulator {
            method,
            step,
            k: 0,
            xs: [x.clone(), x.clone()],
            x,
            work: Work {
                rate: vec![0.0; n],
                acc: vec![0.0; n],
                force: vec![Vector3::zeros(); n_slots],
                moment: vec![Vector3::zeros(); if sched.has_moments { n_slots } else { 0 }],
                adm_forces: vec![Force::ZERO; n_adm_ports],
            },
            threads,
            parallel: false,
            grain_adm,
            grain_imp,
            sched,
        };
        sim.set_parallel_threshold(PARALLEL_THRESHOLD);
        let s = &sim.sched;
        let adm = s.adm.iter().zip(&s.adm_names).map(|(c, n)| (c.prepare(method, step), n));
        let imp = s.imp.iter().zip(&s.imp_names).map(|(c, n)| (c.prepare(method, step), n));
        for (r, name) in adm.chain(imp) {
            r.map_err(|m| Error::invalid(format!("components.{name}"), m))?;
        }
        Ok(sim)
    }

    /// Run the phases of a step in parallel only when the network has at least
    /// `components` admittances and impedances (and more than one thread was asked for).
    /// Results are bit-identical either way.
    pub fn set_parallel_threshold(&mut self, components: usize) {
        let total = self.sched.adm.len() + self.sched.imp.len();
        self.parallel = self.threads > 1 && total >= components.max(1) && total > MIN_GRAIN;
    }

    /// Whether the phases of a step run in parallel.
    pub fn is_parallel(&self) -> bool {
        self.parallel
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

    fn split(&self) -> Split {
        Split { parallel: self.parallel, grain_adm: self.grain_adm, grain_imp: self.grain_imp }
    }

    /// Advance one step of size T.
    pub fn step(&mut self) -> Result<()> {
        let t = self.time();
        let h = self.step;
        let split = self.split();
        let Simulator { sched, x, xs, work, .. } = self;
        let [a, b] = xs;
        let finite = match self.method {
            Method::Euler => {
                let finite = stage(sched, split, x, x, work, a, t, h, Update::EulerEnd { c: h })?;
                std::mem::swap(x, a);
                finite
            }
            Method::Rk4 => {
                // Stage r + 1 reads x(k) or the stage state of the stage before and writes
                // the next one (13b)/(13c); the last writes x(k+1) (13j)/(13l).
                let (w, at) = (RK4_WEIGHT, |r: usize| t + RK4_OFFSET[r] * h);
                let next = |r: usize| Update::Stage { first: r == 0, w: w[r], c: RK4_OFFSET[r + 1] * h };
                stage(sched, split, x, x, work, a, at(0), RK4_TAU[0] * h, next(0))?;
                stage(sched, split, a, x, work, b, at(1), RK4_TAU[1] * h, next(1))?;
                stage(sched, split, b, x, work, a, at(2), RK4_TAU[2] * h, next(2))?;
                let last = Update::Rk4End { w: w[3], c: h / 6.0 };
                let finite = stage(sched, split, a, x, work, b, at(3), RK4_TAU[3] * h, last)?;
                std::mem::swap(x, b);
                finite
            }
        };
        self.k += 1;
        if finite {
            Ok(())
        } else {
            Err(self.non_finite())
        }
    }

    /// Error naming the first component whose state is no longer finite.
    fn non_finite(&self) -> Error {
        let bad = self.x.iter().position(|v| !v.is_finite()).unwrap_or(0);
        let component = self.owner_of_state(bad);
        Error::Simulation {
            time: self.time(),
            component,
            message: "state became non-finite (NaN or infinite); the step may be too large for the stiffness".into(),
        }
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
        let (t, h) = (self.time(), self.step);
        let split = self.split();
        let Simulator { sched, x, xs, work, .. } = self;
        stage(sched, split, x, x, work, &mut xs[0], t, h, Update::None)?;
        // The forces Φ delivered to every admittance port, for signals (batches do not
        // keep them during the stages).
        let xa = &x[..sched.nx];
        for j in 0..sched.adm.len() {
            for port in 0..sched.adm_ports[j + 1] - sched.adm_ports[j] {
                work.adm_forces[sched.adm_ports[j] + port] = sched.sum_port(xa, &work.force, &work.moment, j, port);
            }
        }
        Ok(())
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
                    rate: &self.work.rate[a..b],
                    motions: &[],
                    forces: &self.work.adm_forces[s.adm_ports[i]..s.adm_ports[i + 1]],
                };
                s.adm[i].signal(which, elem, &probe)
            }
            Source::Imp { i, which, elem } => {
                let (a, b) = (s.imp_y[i], s.imp_y[i + 1]);
                let (sa, sb) = (s.imp_slots[i], s.imp_slots[i + 1]);
                let np = sb - sa;
                let (forces, motions) = self.port_values(sa, np);
                let probe = Probe {
                    t,
                    tau: self.step,
                    state: &self.x[a..b],
                    rate: &self.work.rate[a..b],
                    motions: &motions[..np],
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
        // In network order, so that the sum does not depend on the grouping into batches.
        for &i in s.impedances_in_network_order() {
            let imp = &s.imp[i];
            let (sa, np) = (s.imp_slots[i], s.imp_slots[i + 1] - s.imp_slots[i]);
            let (_, motions) = self.port_values(sa, np);
            e += imp.energy(&motions[..np], &self.x[s.imp_y[i]..s.imp_y[i + 1]]).unwrap_or(0.0);
        }
        e
    }

    /// Forces (as last evaluated) and motions (at the current state, as `probe` saw them)
    /// of the `np` impedance ports from slot `sa` on.
    fn port_values(&self, sa: usize, np: usize) -> ([Force; MAX_IMPEDANCE_PORTS], [Motion; MAX_IMPEDANCE_PORTS]) {
        let s = &self.sched;
        let mut forces = [Force::ZERO; MAX_IMPEDANCE_PORTS];
        let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
        for p in 0..np {
            let m = self.work.moment.get(sa + p).copied().unwrap_or_else(Vector3::zeros);
            forces[p] = Force { f: self.work.force[sa + p], m };
            motions[p] = s.motion(&self.x[..s.nx], sa + p);
        }
        (forces, motions)
    }
}

/// One stage of (13) on the stage state `input`: Ψ and the impedances (13d)/(13e), Φ and
/// the admittances (13f)/(13g), rates into `work.rate`; then, part by part while the rates
/// are fresh, `update` from x(k) = `x` into `next`. When `next` is x(k+1), each part also
/// runs `post_step` on its admittances and checks its states; the result is false if one
/// of them is not finite.
///
/// Each phase walks the groups of the schedule: a typed batch is one dynamic call for its
/// share of the range, the other components one call each. The parts of a phase touch
/// disjoint states and slots, so the result does not depend on how it is split.
#[allow(clippy::too_many_arguments)]
fn stage(
    sched: &Schedule,
    split: Split,
    input: &[f64],
    x: &[f64],
    work: &mut Work,
    next: &mut [f64],
    t: f64,
    tau: f64,
    update: Update,
) -> Result<bool> {
    let nx = sched.nx;
    let non_finite = AtomicBool::new(false);
    let check = |v: &[f64]| {
        if update.ends_step() && !v.iter().fold(true, |ok, x| ok & x.is_finite()) {
            non_finite.store(true, Ordering::Relaxed);
        }
    };
    let (xa, xy) = input.split_at(nx);
    let (x_a, x_y) = x.split_at(nx);
    let (rate_a, rate_y) = work.rate.split_at_mut(nx);
    let (acc_a, acc_y) = work.acc.split_at_mut(nx);
    let (next_a, next_y) = next.split_at_mut(nx);
    let has_moments = sched.has_moments;

    // Impedances (13d)/(13e): gather the motions of their ports, evaluate.
    type ImpParts<'a> = (Cut<'a, Vector3<f64>>, Cut<'a, Vector3<f64>>, Cut<'a, f64>, Cut<'a, f64>, Cut<'a, f64>);
    let imp_leaf = |range: std::ops::Range<usize>, (force, moment, rate, acc, next): ImpParts<'_>| {
        let (s0, y0) = (sched.imp_slots[range.start], sched.imp_y[range.start]);
        for (group, part) in groups_in(&sched.imp_groups, range) {
            let (sa, sb) = (sched.imp_slots[part.start], sched.imp_slots[part.end]);
            let (ya, yb) = (sched.imp_y[part.start], sched.imp_y[part.end]);
            if let Some(batch) = &group.batch {
                let ports = PortMotions::new(sched, xa, sa);
                batch
                    .evaluate(
                        part.start - group.start..part.end - group.start,
                        &ports,
                        &xy[ya - nx..yb - nx],
                        t,
                        tau,
                        &mut force.buf[sa - s0..sb - s0],
                        &mut rate.buf[ya - y0..yb - y0],
                    )
                    .map_err(|(k, f)| (group.start + k, f))?;
                continue;
            }
            for i in part {
                let (sa, sb) = (sched.imp_slots[i], sched.imp_slots[i + 1]);
                let np = sb - sa;
                let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
                let mut forces = [Force::ZERO; MAX_IMPEDANCE_PORTS];
                for (p, m) in motions[..np].iter_mut().enumerate() {
                    *m = sched.motion(xa, sa + p);
                }
                let (ya, yb) = (sched.imp_y[i], sched.imp_y[i + 1]);
                let res = sched.imp[i].evaluate(
                    &motions[..np],
                    &xy[ya - nx..yb - nx],
                    t,
                    tau,
                    &mut forces[..np],
                    &mut rate.buf[ya - y0..yb - y0],
                );
                for (p, f) in forces[..np].iter().enumerate() {
                    force.buf[sa - s0 + p] = f.f;
                    if has_moments {
                        moment.buf[sa - s0 + p] = f.m;
                    }
                }
                res.map_err(|f| (i, f))?;
            }
        }
        let y = y0 - nx..y0 - nx + rate.buf.len();
        update.apply(&x_y[y], rate.buf, acc.buf, next.buf);
        check(next.buf);
        Ok(())
    };
    let moment_offs = if has_moments { &sched.imp_slots } else { &sched.zeros_imp };
    let parts = (
        Cut::new(&mut work.force[..], &sched.imp_slots),
        Cut::new(&mut work.moment[..], moment_offs),
        Cut::new(rate_y, &sched.imp_y),
        Cut::new(acc_y, &sched.imp_y),
        Cut::new(next_y, &sched.imp_y),
    );
    split_run(0..sched.imp.len(), parts, split.grain_imp, split.parallel, &imp_leaf)
        .map_err(|(i, f)| Error::Simulation { time: t, component: sched.imp_names[i].clone(), message: f.0 })?;

    // Φ (13f) then admittances (13g).
    let (force, moment) = (&work.force[..], &work.moment[..]);
    type AdmParts<'a> = (Cut<'a, Force>, Cut<'a, f64>, Cut<'a, f64>, Cut<'a, f64>);
    let adm_leaf = |range: std::ops::Range<usize>, (adm_forces, rate, acc, next): AdmParts<'_>| {
        let (p0, x0) = (sched.adm_ports[range.start], sched.adm_x[range.start]);
        for (group, part) in groups_in(&sched.adm_groups, range.clone()) {
            let (xa0, xb0) = (sched.adm_x[part.start], sched.adm_x[part.end]);
            if let Some(batch) = &group.batch {
                let forces = PortForces::new(sched, force, sched.adm_ports[part.start]);
                batch
                    .derivative(
                        part.start - group.start..part.end - group.start,
                        &xa[xa0..xb0],
                        &forces,
                        t,
                        tau,
                        &mut rate.buf[xa0 - x0..xb0 - x0],
                    )
                    .map_err(|(k, f)| (group.start + k, f))?;
                continue;
            }
            for j in part {
                let (pa, pb) = (sched.adm_ports[j], sched.adm_ports[j + 1]);
                let forces = &mut adm_forces.buf[pa - p0..pb - p0];
                for (port, f) in forces.iter_mut().enumerate() {
                    *f = sched.sum_port(xa, force, moment, j, port);
                }
                let (xa0, xb0) = (sched.adm_x[j], sched.adm_x[j + 1]);
                sched.adm[j]
                    .derivative(&xa[xa0..xb0], forces, t, tau, &mut rate.buf[xa0 - x0..xb0 - x0])
                    .map_err(|f| (j, f))?;
            }
        }
        update.apply(&x_a[x0..x0 + rate.buf.len()], rate.buf, acc.buf, next.buf);
        if update.ends_step() {
            for (group, part) in groups_in(&sched.adm_groups, range) {
                let xg = &mut next.buf[sched.adm_x[part.start] - x0..sched.adm_x[part.end] - x0];
                match &group.batch {
                    Some(batch) => batch.post_step(part.start - group.start..part.end - group.start, xg),
                    None => {
                        let base = sched.adm_x[part.start];
                        for j in part {
                            sched.adm[j].post_step(&mut xg[sched.adm_x[j] - base..sched.adm_x[j + 1] - base]);
                        }
                    }
                }
            }
            check(next.buf);
        }
        Ok(())
    };
    let parts = (
        Cut::new(&mut work.adm_forces[..], &sched.adm_ports),
        Cut::new(rate_a, &sched.adm_x),
        Cut::new(acc_a, &sched.adm_x),
        Cut::new(next_a, &sched.adm_x),
    );
    split_run(0..sched.adm.len(), parts, split.grain_adm, split.parallel, &adm_leaf)
        .map_err(|(j, f)| Error::Simulation { time: t, component: sched.adm_names[j].clone(), message: f.0 })?;
    Ok(!non_finite.into_inner())
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
