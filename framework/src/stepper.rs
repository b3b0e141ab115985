//! The stepper: the modular RK4 of (13) with the stage step sizes of (21)/(22), and the
//! one-stage Euler special case (τ = T) that reproduces the papers' discrete-time
//! algorithms ((14), (20), (24), ...), both read from a [`Tableau`](crate::method::Tableau).
//! Sampling signals and the run loop are in [`crate::output`].
//!
//! One step reads like (13), each line a private phase of [`Simulator`]:
//! ```text
//! for each stage r of the tableau:
//!     offset       xs = x(k) + T_{r−1}·ξ_{r−1}             (13b)/(13c)  (stage 1 reads x(k))
//!     impedances   gather Ψ: port motions from xs          (13d)
//!                  u, η = I(x̂, y, t; T_r)                  (13e)/(22)
//!     admittances  scatter Φ: sum forces per port          (13f)
//!                  ξ = A(x, û, t; T_r)                     (13g)
//!     combine      acc = Σ w_r·ξ_r                         (13j)
//! advance          x(k+1) = x(k) + T/Σw · acc, post_step   (13j)/(13l)
//! ```
//! Every phase walks the batches of the schedule ([`crate::batch`]); the parallel ones split
//! the component (or state) range with [`split_run`], so no sum crosses a part and the
//! results are bit-identical for any number of threads. No step allocates.

use crate::component::MAX_IMPEDANCE_PORTS;
use crate::error::{Error, Result};
use crate::method::{Method, Tableau};
use crate::parallel::{split_run, Cut, CutRef, Flat, Shared};
use crate::port::{Force, Motion};
use crate::schedule::{groups_in, Schedule};
use crate::views::{FrameMotion, PointMotion, PortMotions, SlotForces};
use nalgebra::Vector3;

/// A running simulation: the compiled schedule and its buffers.
pub struct Simulator {
    pub(crate) sched: Schedule,
    method: Method,
    step: f64,
    pub(crate) k: u64,
    /// x(k).
    pub(crate) x: Vec<f64>,
    /// The stage state xs of (13b)/(13c).
    xs: Vec<f64>,
    pub(crate) work: Work,
    threads: usize,
    split: Split,
}

/// The buffers of a stage besides the stage state.
pub(crate) struct Work {
    /// ξ and η of the last stage.
    pub(crate) rate: Vec<f64>,
    /// Σ w_r·ξ_r of (13j), accumulated stage by stage.
    acc: Vec<f64>,
    /// Ψ (13d): position and velocity of every impedance port (slot).
    psi: Vec<PointMotion>,
    /// Orientation and angular velocity of every slot, when some slot's motion comes from
    /// `port_motion` (else empty).
    psi_frame: Vec<FrameMotion>,
    /// Force of every slot, as the impedance produced it.
    force: Vec<Vector3<f64>>,
    /// Moment of every slot; empty when no impedance port is a frame port.
    moment: Vec<Vector3<f64>>,
    /// Φ (13f): the total force on every admittance port, as the last stage delivered it.
    pub(crate) adm_forces: Vec<Force>,
}

/// Which state a stage reads.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// x(k): the first stage and `probe`.
    X,
    /// The stage state xs.
    Stage,
}

/// How the phases of a step are split.
#[derive(Clone, Copy, Debug)]
struct Split {
    parallel: bool,
    grain_adm: usize,
    grain_imp: usize,
    grain_vec: usize,
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
        let split = Split {
            parallel: false,
            grain_adm: (sched.adm.len() / parts).max(MIN_GRAIN),
            grain_imp: (sched.imp.len() / parts).max(MIN_GRAIN),
            grain_vec: (n / parts).max(16 * MIN_GRAIN),
        };
        let mut sim = Simulator {
            method,
            step,
            k: 0,
            xs: x.clone(),
            x,
            work: Work {
                rate: vec![0.0; n],
                acc: vec![0.0; n],
                psi: vec![PointMotion::default(); n_slots],
                psi_frame: vec![FrameMotion::REST; if sched.full_motion { n_slots } else { 0 }],
                force: vec![Vector3::zeros(); n_slots],
                moment: vec![Vector3::zeros(); if sched.has_moments { n_slots } else { 0 }],
                adm_forces: vec![Force::ZERO; n_adm_ports],
            },
            threads,
            split,
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
        self.split.parallel = self.threads > 1 && total >= components.max(1) && total > MIN_GRAIN;
    }

    /// Whether the phases of a step run in parallel.
    pub fn is_parallel(&self) -> bool {
        self.split.parallel
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

    /// Advance one step of size T: the stages of the method's tableau, (13).
    pub fn step(&mut self) -> Result<()> {
        let tab: &Tableau = self.method.tableau();
        let (t0, h) = (self.time(), self.step);
        for r in 0..tab.stages() {
            let (t, tau) = (t0 + tab.offset[r] * h, tab.tau[r] * h);
            let input = if r == 0 {
                Input::X
            } else {
                self.offset(tab.offset[r] * h);
                Input::Stage
            };
            self.impedances(input, t, tau)?;
            self.admittances(input, t, tau)?;
            self.combine(r == 0, tab.weight[r]);
        }
        self.advance(h / tab.weight_sum)
    }

    /// (13b)/(13c): the stage state xs = x(k) + c·ξ of the stage before, c = T_{r−1}.
    fn offset(&mut self, c: f64) {
        let parts = (Flat(&mut self.xs[..]), Shared(&self.x[..]), Shared(&self.work.rate[..]));
        let leaf = |_, (Flat(xs), Shared(x), Shared(rate)): (Flat<f64>, Shared<f64>, Shared<f64>)| {
            for ((s, &x), &r) in xs.iter_mut().zip(x).zip(rate) {
                *s = x + c * r;
            }
            Ok::<(), ()>(())
        };
        let _ = split_run(0..self.x.len(), parts, self.split.grain_vec, self.split.parallel, &leaf);
    }

    /// (13d)/(13e): each part of the impedances gathers the motions Ψ of its ports from the
    /// admittance states of `input`, then its batches evaluate them into slot forces and η.
    fn impedances(&mut self, input: Input, t: f64, tau: f64) -> Result<()> {
        let Simulator { sched, x, xs, work, split, .. } = self;
        let input = match input {
            Input::X => &x[..],
            Input::Stage => &xs[..],
        };
        let nx = sched.nx;
        let (xa, xy) = input.split_at(nx);
        let sched = &*sched;
        type Parts<'a> =
            (Cut<'a, PointMotion>, Cut<'a, FrameMotion>, Cut<'a, Vector3<f64>>, Cut<'a, Vector3<f64>>, Cut<'a, f64>);
        let leaf = |range: std::ops::Range<usize>, (psi, psi_frame, force, moment, rate): Parts<'_>| {
            let (s0, y0) = (sched.imp_slots[range.start], sched.imp_y[range.start]);
            let slots = s0..sched.imp_slots[range.end];
            sched.gather_psi(xa, slots, psi.buf, psi_frame.buf);
            let motions = PortMotions { points: psi.buf, frames: psi_frame.buf };
            let mut forces = SlotForces { force: force.buf, moment: moment.buf };
            for (group, part) in groups_in(&sched.imp_groups, range) {
                let (sa, sb) = (sched.imp_slots[part.start] - s0, sched.imp_slots[part.end] - s0);
                let (ya, yb) = (sched.imp_y[part.start], sched.imp_y[part.end]);
                group
                    .batch
                    .evaluate(
                        part.start - group.start..part.end - group.start,
                        &motions.slice(sa..sb),
                        &xy[ya - nx..yb - nx],
                        t,
                        tau,
                        &mut forces.slice(sa..sb),
                        &mut rate.buf[ya - y0..yb - y0],
                    )
                    .map_err(|(k, f)| (group.start + k, f))?;
            }
            Ok(())
        };
        let (frame_offs, moment_offs) = (
            if sched.full_motion { &sched.imp_slots } else { &sched.zeros_imp },
            if sched.has_moments { &sched.imp_slots } else { &sched.zeros_imp },
        );
        let parts = (
            Cut::new(&mut work.psi[..], &sched.imp_slots),
            Cut::new(&mut work.psi_frame[..], frame_offs),
            Cut::new(&mut work.force[..], &sched.imp_slots),
            Cut::new(&mut work.moment[..], moment_offs),
            Cut::new(&mut work.rate[nx..], &sched.imp_y),
        );
        split_run(0..sched.imp.len(), parts, split.grain_imp, split.parallel, &leaf)
            .map_err(|(i, f)| Error::Simulation { time: t, component: sched.imp_names[i].clone(), message: f.0 })
    }

    /// (13f)/(13g): each part of the admittances sums the slot forces on its ports (Φ, in
    /// the schedule's fixed order, with the moments of offset attachments), then its
    /// batches evaluate the rates ξ at the admittance states of `input`.
    fn admittances(&mut self, input: Input, t: f64, tau: f64) -> Result<()> {
        let Simulator { sched, x, xs, work, split, .. } = self;
        let input = match input {
            Input::X => &x[..],
            Input::Stage => &xs[..],
        };
        let nx = sched.nx;
        let xa = &input[..nx];
        let sched = &*sched;
        let (force, moment) = (&work.force[..], &work.moment[..]);
        let leaf = |range: std::ops::Range<usize>, (phi, rate): (Cut<'_, Force>, Cut<'_, f64>)| {
            let (p0, x0) = (sched.adm_ports[range.start], sched.adm_x[range.start]);
            sched.scatter_phi(xa, force, moment, range.clone(), phi.buf);
            for (group, part) in groups_in(&sched.adm_groups, range) {
                let (pa, pb) = (sched.adm_ports[part.start] - p0, sched.adm_ports[part.end] - p0);
                let (xa0, xb0) = (sched.adm_x[part.start], sched.adm_x[part.end]);
                group
                    .batch
                    .derivative(
                        part.start - group.start..part.end - group.start,
                        &xa[xa0..xb0],
                        &phi.buf[pa..pb],
                        t,
                        tau,
                        &mut rate.buf[xa0 - x0..xb0 - x0],
                    )
                    .map_err(|(k, f)| (group.start + k, f))?;
            }
            Ok(())
        };
        let parts =
            (Cut::new(&mut work.adm_forces[..], &sched.adm_ports), Cut::new(&mut work.rate[..nx], &sched.adm_x));
        split_run(0..sched.adm.len(), parts, split.grain_adm, split.parallel, &leaf)
            .map_err(|(j, f)| Error::Simulation { time: t, component: sched.adm_names[j].clone(), message: f.0 })
    }

    /// (13j): acc = ξ1 (`first`), else acc += w·ξ_r.
    fn combine(&mut self, first: bool, w: f64) {
        let parts = (Flat(&mut self.work.acc[..]), Shared(&self.work.rate[..]));
        let leaf = |_, (Flat(acc), Shared(rate)): (Flat<f64>, Shared<f64>)| {
            if first {
                acc.copy_from_slice(rate);
            } else {
                for (a, &r) in acc.iter_mut().zip(rate) {
                    *a += w * r;
                }
            }
            Ok::<(), ()>(())
        };
        let _ = split_run(0..self.x.len(), parts, self.split.grain_vec, self.split.parallel, &leaf);
    }

    /// (13j)/(13l): x(k+1) = x(k) + c·acc with c = T/Σw, then `post_step` of every
    /// admittance (quaternion renormalisation); an error names the first component whose
    /// new state is not finite.
    fn advance(&mut self, c: f64) -> Result<()> {
        let Simulator { sched, x, work, split, .. } = self;
        let sched = &*sched;
        let nx = sched.nx;
        let (x_a, x_y) = x.split_at_mut(nx);
        let (acc_a, acc_y) = work.acc.split_at(nx);
        let add = |x: &mut [f64], acc: &[f64]| {
            for (x, &a) in x.iter_mut().zip(acc) {
                *x += c * a;
            }
        };
        let finite = |x: &[f64]| if x.iter().fold(true, |ok, v| ok & v.is_finite()) { Ok(()) } else { Err(()) };
        let adm_leaf = |range: std::ops::Range<usize>, (x, acc): (Cut<'_, f64>, CutRef<'_, f64>)| {
            add(x.buf, acc.buf);
            let x0 = sched.adm_x[range.start];
            for (group, part) in groups_in(&sched.adm_groups, range) {
                let xg = &mut x.buf[sched.adm_x[part.start] - x0..sched.adm_x[part.end] - x0];
                group.batch.post_step(part.start - group.start..part.end - group.start, xg);
            }
            finite(x.buf)
        };
        let imp_leaf = |_, (Flat(x), Shared(acc)): (Flat<f64>, Shared<f64>)| {
            add(x, acc);
            finite(x)
        };
        let adm = split_run(
            0..sched.adm.len(),
            (Cut::new(x_a, &sched.adm_x), CutRef::new(acc_a, &sched.adm_x)),
            split.grain_adm,
            split.parallel,
            &adm_leaf,
        );
        let imp = split_run(0..x_y.len(), (Flat(x_y), Shared(acc_y)), split.grain_vec, split.parallel, &imp_leaf);
        self.k += 1;
        if adm.is_ok() && imp.is_ok() {
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
    /// that forces (Φ included) and rates are available to signals. Does not change the state.
    pub fn probe(&mut self) -> Result<()> {
        let (t, h) = (self.time(), self.step);
        self.impedances(Input::X, t, h)?;
        self.admittances(Input::X, t, h)
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
