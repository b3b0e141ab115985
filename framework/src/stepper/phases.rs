//! The two phases of a stage, (13d)/(13e) and (13f)/(13g), as loops over a range of
//! components ([`ImpStage::leaf`], [`AdmStage::leaf`]): run whole, one after the other, each
//! split between threads (`Simulator::impedances`, `Simulator::admittances`), or on one
//! thread interleaved block by block ([`Simulator::blocked`]), so that the slot forces an
//! admittance sums are still in the cache from the impedances that wrote them.

use super::balance::Clock;
use super::coupling::{self, Coupling};
use super::{Buffers, Combine, Input, Output, Simulator};
use crate::error::{Error, Fault, Result};
use crate::parallel::{Cut, Each};
use crate::port::{Force, Motion};
use crate::schedule::{chunks_in, AdmChunk, Gathered, ImpChunk, Schedule};
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
    /// (13d)/(13e) for impedances `range`, [`CHUNK`](crate::schedule::CHUNK) at a time, and `combine` on their
    /// states while their rates are fresh; whether every state `combine` ended is finite.
    /// The buffers of `parts` start at `range.start`.
    pub(super) fn leaf(&self, range: Range<usize>, (force, moment, acc, next, cost): ImpParts<'_>) -> Result<bool, (usize, Fault)> {
        let sched = self.sched;
        let (s0, y0) = (sched.imp_slots[range.start], sched.imp_y[range.start]);
        let mut forces = SlotForces { force: force.buf, moment: moment.buf };
        let mut finite = true;
        let mut clock = Clock::start(self.timing, range.start);
        for (g, members) in chunks_in(&sched.imp_groups, range) {
            let chunk = sched.imp_chunk(g, members);
            finite &= self.chunk(&chunk, &mut forces, s0, acc.buf, next.buf, y0)?;
            clock.chunk(cost.0, chunk.members);
        }
        Ok(finite)
    }

    /// One chunk: its batch evaluated, `combine` on its states. `forces` starts at slot
    /// `s0`, `acc` and `next` at state `y0`.
    #[inline]
    pub(super) fn chunk(
        &self,
        c: &ImpChunk,
        forces: &mut SlotForces<'_>,
        s0: usize,
        acc: &mut [f64],
        next: &mut [f64],
        y0: usize,
    ) -> Result<bool, (usize, Fault)> {
        let (sched, nx) = (self.sched, self.sched.nx);
        let group = &sched.imp_groups[c.group];
        let (ya, yb) = (c.y.start, c.y.end);
        let next = &mut next[ya - y0..yb - y0];
        group
            .batch
            .evaluate(
                c.members.start - group.start..c.members.end - group.start,
                &sched.chunk_motions(self.xa, c, self.gathered),
                &self.xy[ya - nx..yb - nx],
                self.t,
                self.tau,
                &mut forces.slice(c.slots.start - s0..c.slots.end - s0),
                next,
            )
            .map_err(|(k, f)| (group.start + k, f))?;
        Ok(self.combine.apply(&self.x_y[ya - nx..yb - nx], &mut acc[ya - y0..yb - y0], next))
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
    /// [`CHUNK`](crate::schedule::CHUNK) at a time, and `combine` (with `post_step` where it ends the step) on their
    /// states while their rates are fresh; whether every state `combine` ended is finite.
    pub(super) fn leaf(
        &self,
        range: Range<usize>,
        (phi, acc, next, cost): AdmParts<'_>,
        force: &[Vector3<f64>],
        moment: &[Vector3<f64>],
    ) -> Result<bool, (usize, Fault)> {
        let sched = self.sched;
        let (p0, x0) = (sched.adm_ports[range.start], sched.adm_x[range.start]);
        let mut finite = true;
        let mut clock = Clock::start(self.timing, range.start);
        for (g, members) in chunks_in(&sched.adm_groups, range) {
            let chunk = sched.adm_chunk(g, members);
            finite &= self.chunk(&chunk, (phi.buf, p0), (acc.buf, next.buf, x0), force, moment)?;
            clock.chunk(cost.0, chunk.members);
        }
        Ok(finite)
    }

    /// One chunk: Φ, its batch's rates, the held elements' part, `combine` (and
    /// `post_step`). `phi` starts at port `p0`, `acc` and `next` at state `x0`.
    #[inline]
    pub(super) fn chunk(
        &self,
        c: &AdmChunk,
        (phi, p0): (&mut [Force], usize),
        (acc, next, x0): (&mut [f64], &mut [f64], usize),
        force: &[Vector3<f64>],
        moment: &[Vector3<f64>],
    ) -> Result<bool, (usize, Fault)> {
        let (sched, xa) = (self.sched, self.xa);
        let group = &sched.adm_groups[c.group];
        let (xa0, xb0) = (c.x.start, c.x.end);
        let phi = &mut phi[c.ports.start - p0..c.ports.end - p0];
        if !group.batch.sums_points() {
            sched.scatter_phi(xa, force, moment, c.members.clone(), phi);
        }
        let mut forces = sched.chunk_forces(force, c, phi, self.keep);
        let members = c.members.start - group.start..c.members.end - group.start;
        let next = &mut next[xa0 - x0..xb0 - x0];
        group
            .batch
            .derivative(members.clone(), &xa[xa0..xb0], &mut forces, self.t, self.tau, next)
            .map_err(|(k, f)| (group.start + k, f))?;
        if let Some(cp) = self.coupling {
            let phi = if group.batch.sums_points() {
                coupling::Phi::Slots { xa, force, moment }
            } else {
                coupling::Phi::Summed(phi)
            };
            cp.apply(sched, c.members.clone(), &xa[xa0..xb0], phi, self.tau, next);
        }
        let finite = self.combine.apply(&self.x_a[xa0..xb0], &mut acc[xa0 - x0..xb0 - x0], next);
        if self.combine.ends_step() {
            group.batch.post_step(members, next);
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
    /// states through a 2 MB cache each stage. Every other stage takes the blocks from the
    /// last to the first (`Schedule::stage_blocks_back`), where the stage before ended.
    pub(super) fn blocked(&mut self, input: Input, t: f64, tau: f64, combine: Combine, out: Output) -> Result<bool> {
        self.sweep_back = !self.sweep_back;
        let back = self.sweep_back && !self.sched.stage_blocks_back.is_empty();
        let Buffers { input, next, x, acc, force, moment, adm_forces, frames, sched, coupling, .. } =
            self.buffers(input, out);
        let nx = sched.nx;
        let gathered = gather(sched, input, frames, coupling, tau);
        let (xa, xy) = input.split_at(nx);
        let imp = ImpStage { sched, xa, xy, x_y: &x[nx..], gathered: &gathered, t, tau, combine, timing: false };
        let adm = AdmStage { sched, xa, x_a: &x[..nx], coupling: None, keep: false, t, tau, combine, timing: false };
        let mut finite = true;
        let sim_error = |names: &crate::names::Names, (i, f): (usize, Fault)| Error::Simulation {
            time: t,
            component: names[i].to_string(),
            message: f.0,
        };
        let mut forces = SlotForces { force, moment };
        for b in if back { &sched.stage_blocks_back } else { &sched.stage_blocks } {
            for c in &b.imp {
                finite &= imp.chunk(c, &mut forces, 0, acc, next, 0).map_err(|e| sim_error(&sched.imp_names, e))?;
            }
            for c in &b.adm {
                let (force, moment) = (&forces.force[..], &forces.moment[..]);
                finite &= adm
                    .chunk(c, (&mut adm_forces[..], 0), (&mut acc[..], &mut next[..], 0), force, moment)
                    .map_err(|e| sim_error(&sched.adm_names, e))?;
            }
        }
        Ok(finite)
    }
}
