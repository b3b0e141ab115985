//! The stepper: the modular RK4 of (13) with the stage step sizes of (21)/(22), and the
//! one-stage Euler special case (τ = T) that reproduces the papers' discrete-time
//! algorithms ((14), (20), (24), ...), both read from a [`Tableau`](crate::method::Tableau).
//! Sampling signals and the run loop are in [`crate::output`].
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

use crate::component::MAX_IMPEDANCE_PORTS;
use crate::error::{Error, Result};
use crate::method::Method;
use crate::parallel::{split_run, Cut};
use crate::port::{Force, Motion};
use crate::schedule::{groups_in, Schedule};
use nalgebra::Vector3;
use std::sync::atomic::{AtomicBool, Ordering};

/// A running simulation: the compiled schedule and its buffers.
pub struct Simulator {
    pub(crate) sched: Schedule,
    method: Method,
    step: f64,
    pub(crate) k: u64,
    /// x(k).
    pub(crate) x: Vec<f64>,
    /// Stage states (13b)/(13c), used in turn as the input and the output of a stage.
    xs: [Vec<f64>; 2],
    pub(crate) work: Work,
    threads: usize,
    parallel: bool,
    grain_adm: usize,
    grain_imp: usize,
}

/// The buffers a stage writes besides the next stage state.
pub(crate) struct Work {
    /// ξ of the last stage.
    pub(crate) rate: Vec<f64>,
    /// ξ1 + 2ξ2 + 2ξ3 (+ ξ4) of (13j), accumulated stage by stage.
    acc: Vec<f64>,
    /// Force of every impedance port (slot), as the impedance produced it.
    force: Vec<Vector3<f64>>,
    /// Moment of every slot; empty when no impedance port is a frame port.
    moment: Vec<Vector3<f64>>,
    /// The summed forces Φ of every admittance port on the per-component path (after
    /// `probe`: of every port, for signals).
    pub(crate) adm_forces: Vec<Force>,
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

    /// The integration method.
    pub fn method(&self) -> Method {
        self.method
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
        // Stage r reads x(k) or the stage state of the stage before and writes the next one
        // (13b)/(13c); the last writes x(k+1) (13j)/(13l).
        let tab = self.method.tableau();
        let n = tab.stages();
        let mut finite = true;
        for r in 0..n {
            let (input, out): (&[f64], &mut Vec<f64>) = match r {
                0 => (&x[..], &mut *a),
                _ if r % 2 == 1 => (&a[..], &mut *b),
                _ => (&b[..], &mut *a),
            };
            let update = if n == 1 {
                Update::EulerEnd { c: tab.tau[0] * h }
            } else if r + 1 < n {
                Update::Stage { first: r == 0, w: tab.weight[r], c: tab.offset[r + 1] * h }
            } else {
                Update::Rk4End { w: tab.weight[r], c: h / tab.weight_sum }
            };
            finite = stage(sched, split, input, x, work, out, t + tab.offset[r] * h, tab.tau[r] * h, update)?;
        }
        // x(k+1) is in the buffer the last stage wrote.
        std::mem::swap(x, if n % 2 == 1 { a } else { b });
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
    pub(crate) fn port_values(
        &self,
        sa: usize,
        np: usize,
    ) -> ([Force; MAX_IMPEDANCE_PORTS], [Motion; MAX_IMPEDANCE_PORTS]) {
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
                let ports = sched.port_motions(xa, sa);
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
                let forces = sched.port_forces(force, sched.adm_ports[part.start]);
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
