//! Batches: every group of the schedule is one, evaluated with one dynamic call per group
//! and thread part.
//!
//! A batch sees the gathered motions Ψ (13d) of its members' impedance ports
//! ([`PortMotions`]), writes their forces into the slots ([`SlotForces`]), and for
//! admittances receives the summed forces Φ (13f) of their ports (a slice of [`Force`]).
//! There are two kinds:
//!
//! - typed batches ([`PointImpedanceBatch`], [`PointAdmittanceBatch`]): members of one
//!   concrete type whose ports are all scalar or point ports, called statically on
//!   [`PointMotion`]s (p and v, no frame fields) and bare force vectors, so their
//!   `evaluate`/`derivative` are inlined into the batch loop; and
//!   [`FrameImpedanceBatch`]: members of one concrete impedance type with frame ports, their
//!   own `evaluate` called statically on full [`Motion`]s and [`Force`]s (`body_contact`,
//!   `sphere_contact`; on the stacks of benches/multibody.rs `--contacts`, 5326 instead of
//!   5907 instructions per body_contact and step, callgrind);
//! - the per-component kind ([`EachImpedance`], [`EachAdmittance`]): trait objects of any
//!   type and layout (frame ports, moments, offsets), one dynamic call per member, with the
//!   full [`Motion`] and [`Force`] of every port. Every component type without a typed
//!   batch runs through it.
//!
//! A component type opts in to a typed batch by returning a one-member batch from
//! [`Impedance::batch`] or [`Admittance::batch`]; the schedule merges the batches of
//! components of the same type and layout ([`ImpedanceBatch::merge`]; see
//! [`crate::schedule`]) and wraps the others in the per-component kind. A typed batch must
//! compute exactly what the members' own `evaluate`/`derivative` compute, in the same
//! order; the ready-made batches below call them, so results do not depend on batching nor
//! on the number of threads (tests/batch.rs checks every example both ways, bit for bit).
//!
//! The ready-made typed batches serve components whose ports are all scalar or point ports:
//! implement [`PointImpedance`] (or [`PointAdmittance`]), let the trait's `evaluate`
//! (`derivative`) call [`evaluate_via_points`] ([`derivative_via_points`]) so the physics is
//! written once, and return [`PointImpedanceBatch::start`] ([`PointAdmittanceBatch::start`])
//! from `batch`.
//!
//! Performance notes (chain-N, issues 7 and 17): inside a batch loop the port count is a
//! compile-time constant (`run::<P, S>`), so the member's motions and forces stay in
//! registers; with a run-time count they went through the stack and the loop was 2–3 times
//! slower. The usual state counts are constants too (`S`; `ANY` reads the batch's): a
//! member's states are then a chunk of the buffer, with no bounds check of their own
//! (chain-10k: with the `PointPv` tap, 13.7 → 11.8 million instructions per step).
//! A type whose physics has square roots and divisions may also evaluate two members at a
//! time ([`PointImpedance::evaluate_points_pair`], in packed instructions with the scalar
//! operation order): for chain-10k's springs and contacts each took about 7 % off the whole
//! run. When every port of a chunk has a `PointPv` tap, their offsets are read directly
//! ([`PortMotions::point_pv`]), and when every admittance port receives the same number of
//! slots, their lists are read at fixed places ([`PortForces::point_of`]).

use crate::component::{Admittance, Impedance, MAX_IMPEDANCE_PORTS};
use crate::error::Fault;
use crate::port::{Domain, Force, Layout, Motion};
pub use crate::views::{
    sum_slots, AdmittanceBatch, ImpedanceBatch, PointMotion, PortForces, PortMotions, PortStates, SlotForces,
    SlotMotion, Tap,
};
use nalgebra::Vector3;
use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

/// Most ports of an admittance in a [`PointAdmittanceBatch`].
pub const MAX_POINT_ADMITTANCE_PORTS: usize = 8;

/// An impedance whose ports are all scalar or point ports, evaluated on [`PointMotion`]s
/// and bare force vectors. Implementing it (and calling [`evaluate_via_points`] from
/// [`Impedance::evaluate`], [`PointImpedanceBatch::start`] from [`Impedance::batch`]) lets
/// the schedule evaluate all components of the type in typed batches.
pub trait PointImpedance: Impedance + Clone + 'static {
    /// [`Impedance::evaluate`] with the frame fields left out: `force[i]` is the force on
    /// whatever is attached at port i.
    fn evaluate_points(
        &self,
        motion: &[PointMotion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Vector3<f64>],
        dy: &mut [f64],
    ) -> Result<(), Fault>;

    /// What all members of a batch have in common, found once when the batch is prepared
    /// ([`shared`](Self::shared), after each member's `prepare`) and handed to
    /// [`evaluate_points_pair`](Self::evaluate_points_pair), so that the pair kernel need
    /// not read it member by member (`plane_contact`: one stage form for all). Its
    /// `default` must mean "nothing shared": a batch never prepared, or merged since, has it.
    type Shared: Copy + Default + Send + Sync + 'static;

    /// What `members` (all prepared) share.
    fn shared(_members: &[Self]) -> Self::Shared {
        Self::Shared::default()
    }

    /// Whether the batch loop evaluates members two at a time
    /// ([`evaluate_points_pair`](Self::evaluate_points_pair)).
    const PAIRS: bool = false;

    /// `evaluate_points` of two members at once, with the same results bit for bit: a
    /// type whose physics runs lane by lane overrides it (and sets [`PAIRS`](Self::PAIRS))
    /// so that two members share each packed instruction (a square root, a division).
    /// `shared`: what the batch's members have in common ([`Shared`](Self::Shared)). On
    /// failure, the lane (0 or 1) that failed. The default evaluates one after the other.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn evaluate_points_pair(
        pair: [&Self; 2],
        _shared: Self::Shared,
        motion: [&[PointMotion]; 2],
        y: [&[f64]; 2],
        t: f64,
        tau: f64,
        force: [&mut [Vector3<f64>]; 2],
        dy: [&mut [f64]; 2],
    ) -> Result<(), (usize, Fault)> {
        let ([f0, f1], [d0, d1]) = (force, dy);
        pair[0].evaluate_points(motion[0], y[0], t, tau, f0, d0).map_err(|e| (0, e))?;
        pair[1].evaluate_points(motion[1], y[1], t, tau, f1, d1).map_err(|e| (1, e))
    }
}

/// [`Impedance::evaluate`] of a [`PointImpedance`] through its `evaluate_points`, so the
/// per-component path and the batches run the same code.
#[inline]
pub fn evaluate_via_points<T: PointImpedance>(
    c: &T,
    motion: &[Motion],
    y: &[f64],
    t: f64,
    tau: f64,
    force: &mut [Force],
    dy: &mut [f64],
) -> Result<(), Fault> {
    let n = motion.len().min(MAX_IMPEDANCE_PORTS);
    let mut m = [PointMotion::default(); MAX_IMPEDANCE_PORTS];
    let mut f = [Vector3::zeros(); MAX_IMPEDANCE_PORTS];
    for (a, b) in m.iter_mut().zip(motion) {
        *a = PointMotion::of(b);
    }
    let r = c.evaluate_points(&m[..n], y, t, tau, &mut f[..n], dy);
    for (a, b) in force.iter_mut().zip(&f[..n]) {
        *a = Force::point(*b);
    }
    r
}

/// The batch of a [`PointImpedance`] type: its members' parameters in one vector, each
/// member with the same number of ports and states.
pub struct PointImpedanceBatch<T: PointImpedance> {
    members: Vec<T>,
    ports: usize,
    states: usize,
    /// What the members share ([`PointImpedance::shared`]), found at `prepare` (read by
    /// every call of the pair kernel: a plain field, no lock; chain-10k spent 2.7 % of its
    /// time locking a mutex here).
    shared: T::Shared,
}

/// (ports, states) of layout `l`, if a batch of point ports holds it: none a frame port,
/// at most `max`.
fn point_shape(l: &Layout, max: usize) -> Option<(usize, usize)> {
    let point = !l.ports.iter().any(|p| p.domain == Domain::Frame) && l.ports.len() <= max;
    point.then_some((l.ports.len(), l.states))
}

/// A batch's `join`: `member`, of shape `shape` (`None`: no batch holds it), joins
/// `members`, a batch of shape `batch`, if the shapes are the same (as the merge of a batch
/// of one would).
fn push_if_shaped<T: Clone>(members: &mut Vec<T>, batch: (usize, usize), shape: Option<(usize, usize)>, member: &T) -> bool {
    let same = shape == Some(batch);
    if same {
        members.push(member.clone());
    }
    same
}

impl<T: PointImpedance> PointImpedanceBatch<T> {
    /// A batch holding `first`, or `None` if one of its ports is a frame port.
    pub fn start(first: &T) -> Option<Box<dyn ImpedanceBatch>> {
        let (ports, states) = Self::shape(first)?;
        let shared = Default::default();
        Some(Box::new(PointImpedanceBatch { members: vec![first.clone()], ports, states, shared }))
    }

    /// `comp` joins `open` if that is a batch of `T` of its shape (the merge of its own
    /// [`start`](Self::start), without making it): [`Impedance::join_batch`] of `T`.
    pub fn join(open: &mut dyn ImpedanceBatch, comp: &T) -> bool {
        let Some(b) = open.as_any_mut().downcast_mut::<Self>() else { return false };
        let joined = push_if_shaped(&mut b.members, (b.ports, b.states), Self::shape(comp), comp);
        if joined {
            b.shared = Default::default();
        }
        joined
    }

    fn shape(c: &T) -> Option<(usize, usize)> {
        point_shape(&c.layout(), MAX_IMPEDANCE_PORTS)
    }
}

impl<T: PointImpedance> ImpedanceBatch for PointImpedanceBatch<T> {
    fn merge(&mut self, other: &dyn ImpedanceBatch) -> bool {
        match other.as_any().downcast_ref::<Self>() {
            Some(o) if o.ports == self.ports && o.states == self.states => {
                self.members.extend_from_slice(&o.members);
                self.shared = Default::default();
                true
            }
            _ => false,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn prepare(&mut self, method: crate::Method, step: f64) -> Result<(), (usize, String)> {
        prepare_members(&self.members, method, step)?;
        self.shared = T::shared(&self.members);
        Ok(())
    }
    fn held_frequency(&self, member: usize, method: crate::Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        if let Some(m) = self.members.get(member) {
            m.held_frequency(method, step, omega2, couple);
        }
    }

    fn evaluate(
        &self,
        members: Range<usize>,
        motions: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        forces: &mut SlotForces<'_>,
        dy: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        // The port count (and the usual state counts) as constants, so that the motions
        // stay in registers and a member's states need no bounds check of their own.
        let (m, f) = (motions, &mut *forces.force);
        let n = members.len();
        let rows = m.all_pv() && (0..self.ports).all(|i| m.rows(i, n).is_some());
        match (self.ports, self.states, m.all_pv(), rows) {
            (1, 0, true, true) => self.run::<1, 0, true, true>(members, m, y, t, tau, f, dy),
            (1, 2, true, true) => self.run::<1, 2, true, true>(members, m, y, t, tau, f, dy),
            (2, 0, true, true) => self.run::<2, 0, true, true>(members, m, y, t, tau, f, dy),
            (1, 0, true, _) => self.run::<1, 0, true, false>(members, m, y, t, tau, f, dy),
            (1, 2, true, _) => self.run::<1, 2, true, false>(members, m, y, t, tau, f, dy),
            (2, 0, true, _) => self.run::<2, 0, true, false>(members, m, y, t, tau, f, dy),
            (1, 0, _, _) => self.run::<1, 0, false, false>(members, m, y, t, tau, f, dy),
            (1, 2, _, _) => self.run::<1, 2, false, false>(members, m, y, t, tau, f, dy),
            (2, 0, _, _) => self.run::<2, 0, false, false>(members, m, y, t, tau, f, dy),
            (1, _, _, _) => self.run::<1, ANY, false, false>(members, m, y, t, tau, f, dy),
            (2, _, _, _) => self.run::<2, ANY, false, false>(members, m, y, t, tau, f, dy),
            (3, _, _, _) => self.run::<3, ANY, false, false>(members, m, y, t, tau, f, dy),
            _ => self.run::<MAX_IMPEDANCE_PORTS, ANY, false, false>(members, m, y, t, tau, f, dy),
        }
    }
}

/// [`Impedance::prepare`] of a batch's own copies of its members; on failure the first
/// failing member's index and why.
fn prepare_members<T: Impedance>(members: &[T], method: crate::Method, step: f64) -> Result<(), (usize, String)> {
    members.iter().enumerate().try_for_each(|(k, m)| m.prepare(method, step).map_err(|e| (k, e)))
}

/// A state count known only at run time, in the batch loops' `S`.
const ANY: usize = usize::MAX;

impl<T: PointImpedance> PointImpedanceBatch<T> {
    /// The batch loop for members with `P` ports and `S` states (`ANY`: `self.states`);
    /// `PV`: every port's motion is read with [`PortMotions::point_pv`]; `ROWS`: from rows
    /// of six states ([`PortMotions::rows`]), with no offset to load.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn run<const P: usize, const S: usize, const PV: bool, const ROWS: bool>(
        &self,
        members: Range<usize>,
        motions: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Vector3<f64>],
        dy: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        debug_assert_eq!(P, self.ports);
        let ny = if S == ANY { self.states } else { S };
        let cs = &self.members[members.clone()];
        debug_assert!(force.len() == cs.len() * P && y.len() == cs.len() * ny && dy.len() == y.len());
        // Port i's rows, the same motions as `point_pv` reads (where `ROWS`).
        let rows: [&[f64]; P] = std::array::from_fn(|i| if ROWS { motions.rows(i, cs.len()).unwrap_or(&[]) } else { &[] });
        let motion = |k: usize| {
            let mut m = [PointMotion::default(); P];
            for (i, mi) in m.iter_mut().enumerate() {
                *mi = if ROWS {
                    let pv: &[f64; 6] = rows[i][6 * k..6 * k + 6].try_into().expect("a range of six");
                    PointMotion { p: Vector3::new(pv[0], pv[1], pv[2]), v: Vector3::new(pv[3], pv[4], pv[5]) }
                } else if PV {
                    motions.point_pv(k * P + i)
                } else {
                    motions.point(k * P + i)
                };
            }
            m
        };
        let eval = |k: usize, c: &T, f: &mut [Vector3<f64>], y: &[f64], dy: &mut [f64]| {
            c.evaluate_points(&motion(k), y, t, tau, f, dy).map_err(|e| (members.start + k, e))
        };
        if T::PAIRS {
            // Members two at a time; an odd last one alone.
            let shared = self.shared;
            let pair = |j: usize, c: &[T], f: &mut [Vector3<f64>], y: &[f64], dy: &mut [f64]| {
                let ((f0, f1), (y0, y1), (d0, d1)) = (f.split_at_mut(P), y.split_at(ny), dy.split_at_mut(ny));
                let m = [motion(2 * j), motion(2 * j + 1)];
                T::evaluate_points_pair([&c[0], &c[1]], shared, [&m[0], &m[1]], [y0, y1], t, tau, [f0, f1], [d0, d1])
                    .map_err(|(l, e)| (members.start + 2 * j + l, e))
            };
            let mut pairs = force.chunks_exact_mut(2 * P);
            if ny == 0 {
                for (j, (c, f)) in cs.chunks_exact(2).zip(&mut pairs).enumerate() {
                    pair(j, c, f, &[], &mut [])?;
                }
            } else {
                let states = y.chunks_exact(2 * ny).zip(dy.chunks_exact_mut(2 * ny));
                for (j, ((c, f), (y, dy))) in cs.chunks_exact(2).zip(&mut pairs).zip(states).enumerate() {
                    pair(j, c, f, y, dy)?;
                }
            }
            if cs.len() % 2 == 1 {
                let k = cs.len() - 1;
                eval(k, &cs[k], pairs.into_remainder(), &y[k * ny..], &mut dy[k * ny..])?;
            }
            return Ok(());
        }
        let forces = force.chunks_exact_mut(P);
        if ny == 0 {
            for (k, (c, f)) in cs.iter().zip(forces).enumerate() {
                eval(k, c, f, &[], &mut [])?;
            }
        } else {
            let states = y.chunks_exact(ny).zip(dy.chunks_exact_mut(ny));
            for (k, ((c, f), (y, dy))) in cs.iter().zip(forces).zip(states).enumerate() {
                eval(k, c, f, y, dy)?;
            }
        }
        Ok(())
    }
}

/// The typed batch of an impedance type with frame ports (moments, rotations; e.g.
/// `body_contact`): the members' own [`Impedance::evaluate`] called statically on the full
/// [`Motion`]s of their ports, with the port and usual state counts as constants, instead of
/// one dynamic call per member with run-time offsets ([`EachImpedance`]). The same code on
/// the same inputs, so the same bits.
pub struct FrameImpedanceBatch<T> {
    members: Vec<T>,
    ports: usize,
    states: usize,
}

impl<T: Impedance + Clone + 'static> FrameImpedanceBatch<T> {
    /// A batch holding `first`, or `None` if it has more than [`MAX_IMPEDANCE_PORTS`] ports.
    pub fn start(first: &T) -> Option<Box<dyn ImpedanceBatch>> {
        let (ports, states) = Self::shape(first)?;
        Some(Box::new(FrameImpedanceBatch { members: vec![first.clone()], ports, states }))
    }

    /// `comp` joins `open` if that is a batch of `T` of its shape (as
    /// [`PointImpedanceBatch::join`]).
    pub fn join(open: &mut dyn ImpedanceBatch, comp: &T) -> bool {
        let Some(b) = open.as_any_mut().downcast_mut::<Self>() else { return false };
        push_if_shaped(&mut b.members, (b.ports, b.states), Self::shape(comp), comp)
    }

    /// (ports, states) of `c`, if such a batch can hold it.
    fn shape(c: &T) -> Option<(usize, usize)> {
        let l = c.layout();
        (!l.ports.is_empty() && l.ports.len() <= MAX_IMPEDANCE_PORTS).then_some((l.ports.len(), l.states))
    }

    /// The batch loop for members with `P` ports and `S` states (`ANY`: `self.states`).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn run<const P: usize, const S: usize>(
        &self,
        members: Range<usize>,
        motions: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        forces: &mut SlotForces<'_>,
        dy: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        debug_assert_eq!(P, self.ports);
        let ny = if S == ANY { self.states } else { S };
        let cs = &self.members[members.clone()];
        debug_assert!(y.len() == cs.len() * ny && dy.len() == y.len());
        for (k, c) in cs.iter().enumerate() {
            let mut m = [Motion::REST; P];
            for (i, mi) in m.iter_mut().enumerate() {
                *mi = motions.motion(k * P + i);
            }
            let mut f = [Force::ZERO; P];
            let r = c.evaluate(&m, &y[k * ny..(k + 1) * ny], t, tau, &mut f, &mut dy[k * ny..(k + 1) * ny]);
            for (i, fi) in f.iter().enumerate() {
                forces.set(k * P + i, fi);
            }
            r.map_err(|e| (members.start + k, e))?;
        }
        Ok(())
    }
}

impl<T: Impedance + Clone + 'static> ImpedanceBatch for FrameImpedanceBatch<T> {
    fn merge(&mut self, other: &dyn ImpedanceBatch) -> bool {
        match other.as_any().downcast_ref::<Self>() {
            Some(o) if o.ports == self.ports && o.states == self.states => {
                self.members.extend_from_slice(&o.members);
                true
            }
            _ => false,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn prepare(&mut self, method: crate::Method, step: f64) -> Result<(), (usize, String)> {
        prepare_members(&self.members, method, step)
    }
    fn held_frequency(&self, member: usize, method: crate::Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        if let Some(m) = self.members.get(member) {
            m.held_frequency(method, step, omega2, couple);
        }
    }

    fn evaluate(
        &self,
        members: Range<usize>,
        motions: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        forces: &mut SlotForces<'_>,
        dy: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        let (m, f) = (motions, forces);
        match (self.ports, self.states) {
            (2, 2) => self.run::<2, 2>(members, m, y, t, tau, f, dy),
            (2, 3) => self.run::<2, 3>(members, m, y, t, tau, f, dy),
            (1, _) => self.run::<1, ANY>(members, m, y, t, tau, f, dy),
            (2, _) => self.run::<2, ANY>(members, m, y, t, tau, f, dy),
            (3, _) => self.run::<3, ANY>(members, m, y, t, tau, f, dy),
            _ => self.run::<MAX_IMPEDANCE_PORTS, ANY>(members, m, y, t, tau, f, dy),
        }
    }
}

/// An admittance whose ports are all scalar or point ports (at most
/// [`MAX_POINT_ADMITTANCE_PORTS`]), driven by bare force vectors. The admittance
/// counterpart of [`PointImpedance`].
pub trait PointAdmittance: Admittance + Clone + 'static {
    /// [`Admittance::derivative`] with `force[i]` the total force on port i.
    fn derivative_points(
        &self,
        x: &[f64],
        force: &[Vector3<f64>],
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), Fault>;
}

/// [`Admittance::derivative`] of a [`PointAdmittance`] through its `derivative_points`.
#[inline]
pub fn derivative_via_points<T: PointAdmittance>(
    c: &T,
    x: &[f64],
    force: &[Force],
    t: f64,
    tau: f64,
    dx: &mut [f64],
) -> Result<(), Fault> {
    if force.len() > MAX_POINT_ADMITTANCE_PORTS {
        return Err(Fault::new(format!("more than {MAX_POINT_ADMITTANCE_PORTS} point ports")));
    }
    let mut f = [Vector3::zeros(); MAX_POINT_ADMITTANCE_PORTS];
    for (a, b) in f.iter_mut().zip(force) {
        *a = b.f;
    }
    c.derivative_points(x, &f[..force.len()], t, tau, dx)
}

/// The batch of a [`PointAdmittance`] type.
pub struct PointAdmittanceBatch<T> {
    members: Vec<T>,
    ports: usize,
    states: usize,
}

impl<T: PointAdmittance> PointAdmittanceBatch<T> {
    /// A batch holding `first`, or `None` if it has a frame port or too many ports.
    pub fn start(first: &T) -> Option<Box<dyn AdmittanceBatch>> {
        let (ports, states) = Self::shape(first)?;
        Some(Box::new(PointAdmittanceBatch { members: vec![first.clone()], ports, states }))
    }

    /// `member` joins `open` if that is a batch of `T` of its shape (the merge of its own
    /// [`start`](Self::start), without making it): [`Admittance::join_batch`] of a
    /// component whose batch holds `member`.
    pub fn join(open: &mut dyn AdmittanceBatch, member: &T) -> bool {
        let Some(b) = open.as_any_mut().downcast_mut::<Self>() else { return false };
        push_if_shaped(&mut b.members, (b.ports, b.states), Self::shape(member), member)
    }

    fn shape(c: &T) -> Option<(usize, usize)> {
        point_shape(&c.layout(), MAX_POINT_ADMITTANCE_PORTS)
    }
}

impl<T: PointAdmittance> AdmittanceBatch for PointAdmittanceBatch<T> {
    fn merge(&mut self, other: &dyn AdmittanceBatch) -> bool {
        match other.as_any().downcast_ref::<Self>() {
            Some(o) if o.ports == self.ports && o.states == self.states => {
                self.members.extend_from_slice(&o.members);
                true
            }
            _ => false,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn sums_points(&self) -> bool {
        true
    }

    fn derivative(
        &self,
        members: Range<usize>,
        x: &[f64],
        forces: &mut PortForces<'_>,
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        let (m, f) = (members, forces);
        match (self.ports, self.states, f.uniform()) {
            (1, 6, 1) => self.run::<1, 6, 1>(m, x, f, t, tau, dx),
            (1, 6, 2) => self.run::<1, 6, 2>(m, x, f, t, tau, dx),
            (1, 6, 3) => self.run::<1, 6, 3>(m, x, f, t, tau, dx),
            (1, 6, 4) => self.run::<1, 6, 4>(m, x, f, t, tau, dx),
            (1, 6, _) => self.run::<1, 6, 0>(m, x, f, t, tau, dx),
            (1, 2, _) => self.run::<1, 2, 0>(m, x, f, t, tau, dx),
            (1, _, _) => self.run::<1, ANY, 0>(m, x, f, t, tau, dx),
            (2, _, _) => self.run::<2, ANY, 0>(m, x, f, t, tau, dx),
            _ => self.run::<MAX_POINT_ADMITTANCE_PORTS, ANY, 0>(m, x, f, t, tau, dx),
        }
    }

    fn post_step(&self, members: Range<usize>, x: &mut [f64]) {
        let nx = self.states;
        for (c, xk) in self.members[members].iter().zip(x.chunks_exact_mut(nx.max(1))) {
            c.post_step(xk);
        }
    }
}

impl<T: PointAdmittance> PointAdmittanceBatch<T> {
    /// The batch loop for members with `P` ports (`P` ≥ the port count; the extra forces
    /// are not read) and `S` states (`ANY`: `self.states`); `C` ≥ 1: every port receives
    /// `C` slots ([`PortForces::point_of`]), 0: any number.
    #[inline]
    fn run<const P: usize, const S: usize, const C: usize>(
        &self,
        members: Range<usize>,
        x: &[f64],
        forces: &mut PortForces<'_>,
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        let (np, nx) = (self.ports, if S == ANY { self.states } else { S });
        let cs = &self.members[members.clone()];
        debug_assert!(x.len() == cs.len() * nx && dx.len() == x.len());
        let mut eval = |k: usize, c: &T, x: &[f64], dx: &mut [f64]| {
            let mut f = [Vector3::zeros(); P];
            for (i, fi) in f[..np].iter_mut().enumerate() {
                *fi = if C > 0 { forces.point_of::<C>(k * np + i) } else { forces.point(k * np + i) };
            }
            c.derivative_points(x, &f[..np], t, tau, dx).map_err(|e| (members.start + k, e))
        };
        if nx == 0 {
            for (k, c) in cs.iter().enumerate() {
                eval(k, c, &[], &mut [])?;
            }
        } else {
            for (k, (c, (x, dx))) in cs.iter().zip(x.chunks_exact(nx).zip(dx.chunks_exact_mut(nx))).enumerate() {
                eval(k, c, x, dx)?;
            }
        }
        Ok(())
    }
}

/// The per-component batch kind for impedances: trait objects of any type and layout
/// (frame ports, moments), one dynamic [`Impedance::evaluate`] per member on the full
/// motions of its ports.
pub struct EachImpedance {
    members: Vec<Arc<dyn Impedance>>,
    /// Where each member's port slots and states start.
    at: MemberOffsets,
}

/// Where the members of a per-component batch start: member k has the ports
/// `ports[k]..ports[k + 1]` and the states `states[k]..states[k + 1]` of the batch.
struct MemberOffsets {
    ports: Vec<usize>,
    states: Vec<usize>,
}

impl MemberOffsets {
    /// The offsets of members with these layouts, in this order.
    fn of(layouts: impl Iterator<Item = Layout>) -> Self {
        let mut at = MemberOffsets { ports: vec![0], states: vec![0] };
        for l in layouts {
            at.push(l.ports.len(), l.states);
        }
        at
    }

    /// One more member with `ports` ports and `states` states.
    fn push(&mut self, ports: usize, states: usize) {
        self.ports.push(self.ports.last().copied().unwrap_or(0) + ports);
        self.states.push(self.states.last().copied().unwrap_or(0) + states);
    }

    /// The members of `other` after these.
    fn append(&mut self, other: &MemberOffsets) {
        for k in 0..other.ports.len().saturating_sub(1) {
            self.push(other.ports[k + 1] - other.ports[k], other.states[k + 1] - other.states[k]);
        }
    }
}

impl EachImpedance {
    /// A batch holding `members`, in this order.
    pub fn batch(members: Vec<Arc<dyn Impedance>>) -> Box<dyn ImpedanceBatch> {
        let at = MemberOffsets::of(members.iter().map(|c| c.layout()));
        Box::new(EachImpedance { members, at })
    }
}

impl ImpedanceBatch for EachImpedance {
    fn merge(&mut self, other: &dyn ImpedanceBatch) -> bool {
        let Some(o) = other.as_any().downcast_ref::<Self>() else { return false };
        self.members.extend(o.members.iter().cloned());
        self.at.append(&o.at);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn evaluate(
        &self,
        members: Range<usize>,
        motions: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        forces: &mut SlotForces<'_>,
        dy: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        let at = &self.at;
        let (s0, y0) = (at.ports[members.start], at.states[members.start]);
        for k in members {
            let (sa, sb) = (at.ports[k] - s0, at.ports[k + 1] - s0);
            let (ya, yb) = (at.states[k] - y0, at.states[k + 1] - y0);
            let np = sb - sa;
            let mut m = [Motion::REST; MAX_IMPEDANCE_PORTS];
            let mut f = [Force::ZERO; MAX_IMPEDANCE_PORTS];
            for (p, mp) in m[..np].iter_mut().enumerate() {
                *mp = motions.motion(sa + p);
            }
            let r = self.members[k].evaluate(&m[..np], &y[ya..yb], t, tau, &mut f[..np], &mut dy[ya..yb]);
            for (p, fp) in f[..np].iter().enumerate() {
                forces.set(sa + p, fp);
            }
            r.map_err(|e| (k, e))?;
        }
        Ok(())
    }
}

/// The per-component batch kind for admittances: trait objects of any type and layout, one
/// dynamic [`Admittance::derivative`] per member.
pub struct EachAdmittance {
    members: Vec<Arc<dyn Admittance>>,
    /// Where each member's ports and states start.
    at: MemberOffsets,
}

impl EachAdmittance {
    /// A batch holding `members`, in this order.
    pub fn batch(members: Vec<Arc<dyn Admittance>>) -> Box<dyn AdmittanceBatch> {
        let at = MemberOffsets::of(members.iter().map(|c| c.layout()));
        Box::new(EachAdmittance { members, at })
    }
}

impl AdmittanceBatch for EachAdmittance {
    fn merge(&mut self, other: &dyn AdmittanceBatch) -> bool {
        let Some(o) = other.as_any().downcast_ref::<Self>() else { return false };
        self.members.extend(o.members.iter().cloned());
        self.at.append(&o.at);
        true
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn derivative(
        &self,
        members: Range<usize>,
        x: &[f64],
        forces: &mut PortForces<'_>,
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), (usize, Fault)> {
        let at = &self.at;
        let (p0, x0) = (at.ports[members.start], at.states[members.start]);
        for k in members {
            let (pa, pb) = (at.ports[k] - p0, at.ports[k + 1] - p0);
            let (xa, xb) = (at.states[k] - x0, at.states[k + 1] - x0);
            let f = forces.kept(pa..pb);
            self.members[k].derivative(&x[xa..xb], f, t, tau, &mut dx[xa..xb]).map_err(|e| (k, e))?;
        }
        Ok(())
    }

    fn post_step(&self, members: Range<usize>, x: &mut [f64]) {
        let at = &self.at;
        let x0 = at.states[members.start];
        for k in members {
            self.members[k].post_step(&mut x[at.states[k] - x0..at.states[k + 1] - x0]);
        }
    }
}
