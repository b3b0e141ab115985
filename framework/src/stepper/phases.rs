//! The two phases of a stage, (13d)/(13e) and (13f)/(13g), as loops over a range of
//! components ([`ImpStage::leaf`], [`AdmStage::leaf`]): run whole, one after the other, each
//! split between threads (`Simulator::impedances`, `Simulator::admittances`), or on one
//! thread interleaved block by block ([`Simulator::blocked`]), so that the slot forces an
//! admittance sums are still in the cache from the impedances that wrote them.

use super::balance::Clock;
use super::coupling::{self, Coupling};
use super::{Buffers, Combine, Input, Output, Simulator, CHUNK};
use crate::error::{Error, Fault, Result};
use crate::parallel::{Cut, Each};
use crate::port::{Force, Motion};
use crate::schedule::{groups_in, Gathered, Schedule};
use crate::views::SlotForces;
use nalgebra::Vector3;
use std::ops::Range;

/// The impedance phase's buffers of a range of impedances: slot forces, slot moments, the
/// accumulated rates and the output of their states, and their costs (when timed).
pub(super) type ImpParts<'a> =
    (Cut<'a, Vector3<f64>>, Cut<'a, Vector3<f64>>, Cut<'a, f64>, Cut<'a, f64>, Each<'a, u32>);

/// The admittance phase's buffers of a range of admittances: Φ of their ports, the
/// accumulated rates and the output of their states, and their costs (when timed).
pub(super) type AdmParts<'a> = (Cut<'a, Force>, Cut<'a, f64>, Cut<'a, f64>, Each<'a, u32>);

/// Each frame's motion at the stage state `input`, once for all the slots attached to it
/// (the coupled elements' stage laws read them too, gathered here).
pub(super) fn gather<'a>(
    sched: &'a Schedule,
    input: &[f64],
    frames: &'a mut Vec<Motion>,
    coupling: &mut Coupling,
    tau: f64,
) -> Gathered<'a> {
    sched.gather_frames(&input[..sched.nx], frames);
    let gathered = Gathered { sched, frames: &frames[..] };
    if !coupling.is_empty() {
        coupling.gather(sched, &gathered, input, tau);
    }
    gathered
}

/// The buffers of impedances `range`: `force`, `moment`, `acc` and `next` whole (`acc` and
/// `next` of the full state), `cost` of the range.
pub(super) fn imp_parts<'a>(
    sched: &'a Schedule,
    range: Range<usize>,
    force: &'a mut [Vector3<f64>],
    moment: &'a mut [Vector3<f64>],
    acc: &'a mut [f64],
    next: &'a mut [f64],
    cost: &'a mut [u32],
) -> ImpParts<'a> {
    let (slots, y) = (&sched.imp_slots, &sched.imp_y);
    let moment_offs = if sched.has_moments { slots } else { &sched.zeros_imp };
    (
        Cut::new(&mut force[slots[range.start]..slots[range.end]], slots),
        Cut::new(&mut moment[moment_offs[range.start]..moment_offs[range.end]], moment_offs),
        Cut::new(&mut acc[y[range.start]..y[range.end]], y),
        Cut::new(&mut next[y[range.start]..y[range.end]], y),
        Each(cost),
    )
}

/// The buffers of admittances `range` (as [`imp_parts`]).
pub(super) fn adm_parts<'a>(
    sched: &'a Schedule,
    range: Range<usize>,
    phi: &'a mut [Force],
    acc: &'a mut [f64],
    next: &'a mut [f64],
    cost: &'a mut [u32],
) -> AdmParts<'a> {
    let (ports, x) = (&sched.adm_ports, &sched.adm_x);
    (
        Cut::new(&mut phi[ports[range.start]..ports[range.end]], ports),
        Cut::new(&mut acc[x[range.start]..x[range.end]], x),
        Cut::new(&mut next[x[range.start]..x[range.end]], x),
        Each(cost),
    )
}

/// What the impedance phase of a stage reads.
pub(super) struct ImpStage<'a> {
    pub sched: &'a Schedule,
    /// The stage state's admittance and impedance parts, and x(k)'s impedance part.
    pub xa: &'a [f64],
    pub xy: &'a [f64],
    pub x_y: &'a [f64],
    pub gathered: &'a Gathered<'a>,
    pub t: f64,
    pub tau: f64,
    pub combine: Combine,
    pub timing: bool,
}

impl ImpStage<'_> {
    /// (13d)/(13e) for impedances `range`, [`CHUNK`] at a time, and `combine` on their
    /// states while their rates are fresh; whether every state `combine` ended is finite.
    /// The buffers of `parts` start at `range.start`.
    pub(super) fn leaf(
        &self,
        range: Range<usize>,
        (force, moment, acc, next, cost): ImpParts<'_>,
    ) -> Result<bool, (usize, Fault)> {
        let (sched, nx) = (self.sched, self.sched.nx);
        let (s0, y0) = (sched.imp_slots[range.start], sched.imp_y[range.start]);
        let mut forces = SlotForces { force: force.buf, moment: moment.buf };
        let mut finite = true;
        let mut clock = Clock::start(self.timing, range.start);
        for (group, part) in groups_in(&sched.imp_groups, range) {
            for a in part.clone().step_by(CHUNK) {
                let chunk = a..(a + CHUNK).min(part.end);
                let (sa, sb) = (sched.imp_slots[chunk.start], sched.imp_slots[chunk.end]);
                let (ya, yb) = (sched.imp_y[chunk.start], sched.imp_y[chunk.end]);
                let next = &mut next.buf[ya - y0..yb - y0];
                group
                    .batch
                    .evaluate(
                        chunk.start - group.start..chunk.end - group.start,
                        &sched.slot_motions_from(self.xa, sa..sb, self.gathered),
                        &self.xy[ya - nx..yb - nx],
                        self.t,
                        self.tau,
                        &mut forces.slice(sa - s0..sb - s0),
                        next,
                    )
                    .map_err(|(k, f)| (group.start + k, f))?;
                finite &= self.combine.apply(&self.x_y[ya - nx..yb - nx], &mut acc.buf[ya - y0..yb - y0], next);
                clock.chunk(cost.0, chunk.clone());
            }
        }
        Ok(finite)
    }
}

/// What the admittance phase of a stage reads (besides the slot forces, which the blocked
/// stage writes between its calls).
pub(super) struct AdmStage<'a> {
    pub sched: &'a Schedule,
    /// The stage state's admittance part, and x(k)'s.
    pub xa: &'a [f64],
    pub x_a: &'a [f64],
    pub coupling: Option<&'a Coupling>,
    /// Φ is kept for signals (a probe).
    pub keep: bool,
    pub t: f64,
    pub tau: f64,
    pub combine: Combine,
    pub timing: bool,
}

impl AdmStage<'_> {
    /// (13f)/(13g) for admittances `range` on the slot forces `force` (and `moment`),
    /// [`CHUNK`] at a time, and `combine` (with `post_step` where it ends the step) on their
    /// states while their rates are fresh; whether every state `combine` ended is finite.
    pub(super) fn leaf(
        &self,
        range: Range<usize>,
        (phi, acc, next, cost): AdmParts<'_>,
        force: &[Vector3<f64>],
        moment: &[Vector3<f64>],
    ) -> Result<bool, (usize, Fault)> {
        let (sched, xa) = (self.sched, self.xa);
        let (p0, x0) = (sched.adm_ports[range.start], sched.adm_x[range.start]);
        let mut finite = true;
        let mut clock = Clock::start(self.timing, range.start);
        for (group, part) in groups_in(&sched.adm_groups, range) {
            for a in part.clone().step_by(CHUNK) {
                let chunk = a..(a + CHUNK).min(part.end);
                let (pa, pb) = (sched.adm_ports[chunk.start], sched.adm_ports[chunk.end]);
                let (xa0, xb0) = (sched.adm_x[chunk.start], sched.adm_x[chunk.end]);
                let phi = &mut phi.buf[pa - p0..pb - p0];
                if !group.batch.sums_points() {
                    sched.scatter_phi(xa, force, moment, chunk.clone(), phi);
                }
                let mut forces = sched.ports_forces(force, pa..pb, phi, self.keep);
                let members = chunk.start - group.start..chunk.end - group.start;
                let next = &mut next.buf[xa0 - x0..xb0 - x0];
                group
                    .batch
                    .derivative(members.clone(), &xa[xa0..xb0], &mut forces, self.t, self.tau, next)
                    .map_err(|(k, f)| (group.start + k, f))?;
                if let Some(c) = self.coupling {
                    let phi = if group.batch.sums_points() {
                        coupling::Phi::Slots { xa, force, moment }
                    } else {
                        coupling::Phi::Summed(phi)
                    };
                    c.apply(sched, chunk.clone(), &xa[xa0..xb0], phi, self.tau, next);
                }
                finite &= self.combine.apply(&self.x_a[xa0..xb0], &mut acc.buf[xa0 - x0..xb0 - x0], next);
                if self.combine.ends_step() {
                    group.batch.post_step(members, next);
                }
                clock.chunk(cost.0, chunk.clone());
            }
        }
        Ok(finite)
    }
}

impl Simulator {
    /// Whether a stage writing `out` runs block by block ([`blocked`](Self::blocked)): on
    /// one thread, in a step (not a probe, which keeps Φ), where no element is held with
    /// its body (those groups are solved on every slot force first) and the schedule has
    /// a plan.
    pub(super) fn runs_blocked(&self, out: Output) -> bool {
        !self.split.parallel
            && !matches!(out, Output::Rate)
            && self.coupling.is_empty()
            && !self.sched.stage_blocks.is_empty()
    }

    /// A stage as [`impedances`](Self::impedances) then [`admittances`](Self::admittances),
    /// with the same results bit for bit, interleaved by the schedule's blocks: each block's
    /// impedances write their slot forces, then its admittances sum them while they are in
    /// the cache. On chain-10k the two whole phases streamed 3 MB of slot forces and
    /// states through a 2 MB cache each stage.
    pub(super) fn blocked(&mut self, input: Input, t: f64, tau: f64, combine: Combine, out: Output) -> Result<bool> {
        let Buffers { input, next, x, acc, force, moment, adm_forces, frames, sched, coupling, .. } =
            self.buffers(input, out);
        let nx = sched.nx;
        let gathered = gather(sched, input, frames, coupling, tau);
        let (xa, xy) = input.split_at(nx);
        let imp = ImpStage { sched, xa, xy, x_y: &x[nx..], gathered: &gathered, t, tau, combine, timing: false };
        let adm = AdmStage { sched, xa, x_a: &x[..nx], coupling: None, keep: false, t, tau, combine, timing: false };
        let mut finite = true;
        for b in &sched.stage_blocks {
            for r in &b.imp {
                let parts = imp_parts(sched, r.clone(), force, moment, acc, next, &mut []);
                finite &= imp.leaf(r.clone(), parts).map_err(|(i, f)| Error::Simulation {
                    time: t,
                    component: sched.imp_names[i].to_string(),
                    message: f.0,
                })?;
            }
            if !b.adm.is_empty() {
                let parts = adm_parts(sched, b.adm.clone(), adm_forces, acc, next, &mut []);
                finite &= adm.leaf(b.adm.clone(), parts, force, moment).map_err(|(j, f)| Error::Simulation {
                    time: t,
                    component: sched.adm_names[j].to_string(),
                    message: f.0,
                })?;
            }
        }
        Ok(finite)
    }
}
