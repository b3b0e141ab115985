//! What a batch sees: the port motions Ψ (13d) of its members' impedance ports, gathered
//! into plain slices ([`PortMotions`]), the slots their forces go to ([`SlotForces`]), the
//! summed forces Φ (13f) on its members' admittance ports (a slice of [`Force`]), and the
//! two batch traits ([`ImpedanceBatch`], [`AdmittanceBatch`]). The batches themselves are in
//! [`crate::batch`]; the schedule forms them and the stepper fills the views.

use crate::error::Fault;
use crate::port::{Force, Motion};
use nalgebra::{UnitQuaternion, Vector3};
use std::any::Any;
use std::ops::Range;

/// Motion of a scalar or point port without the frame fields of [`Motion`]: position and
/// velocity (a scalar port uses `p.x`, `v.x`; y and z are 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointMotion {
    pub p: Vector3<f64>,
    pub v: Vector3<f64>,
}

impl PointMotion {
    /// The position and velocity of `m`.
    #[inline]
    pub fn of(m: &Motion) -> PointMotion {
        PointMotion { p: m.p, v: m.v }
    }
}

/// The frame fields of a [`Motion`]: orientation and angular velocity. Gathered only when
/// some impedance port takes its motion through `Admittance::port_motion` (a frame, an
/// offset, a port without [`PortStates`]), so that those ports see exactly that motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameMotion {
    pub rot: UnitQuaternion<f64>,
    pub w: Vector3<f64>,
}

impl FrameMotion {
    /// Unrotated, not turning: the frame fields of a scalar or point motion.
    pub const REST: FrameMotion = FrameMotion { rot: Motion::REST.rot, w: Motion::REST.w };
}

/// Where the motion of a scalar or point admittance port lies in the admittance's state:
/// position `x[p..p + d]`, velocity `x[v..v + d]`, with d = 1 (scalar) or 3 (point).
/// Declared by `Admittance::port_states`; the schedule then gathers the port's motion
/// (Ψ) with two loads instead of a dynamic `port_motion` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortStates {
    pub p: usize,
    pub v: usize,
}

/// How the motion of an impedance port (a *slot*) is gathered (Ψ, (13d)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tap {
    /// A point port: p = x[p..p+3], v = x[v..v+3] (absolute indices into the admittance states).
    Point { p: u32, v: u32 },
    /// A scalar port: q = x[p], q̇ = x[v].
    Scalar { p: u32, v: u32 },
    /// Neither: ground, or `port_motion` of the admittance (and an offset).
    Other,
}

/// Ψ (13d) of the impedance ports of a range of batch members, gathered: port `k·P + i` is
/// port i of the k-th member of the range (P ports per member; for a batch of members
/// with different port counts, the members' ports back to back).
#[derive(Clone, Copy, Debug)]
pub struct PortMotions<'a> {
    /// Position and velocity of every port.
    pub points: &'a [PointMotion],
    /// Orientation and angular velocity of every port, or empty when every port is at
    /// rest in those ([`FrameMotion::REST`]).
    pub frames: &'a [FrameMotion],
}

impl PortMotions<'_> {
    /// Position and velocity of port `port`.
    #[inline(always)]
    pub fn point(&self, port: usize) -> PointMotion {
        self.points[port]
    }

    /// The full motion of port `port`.
    #[inline]
    pub fn motion(&self, port: usize) -> Motion {
        let PointMotion { p, v } = self.points[port];
        let FrameMotion { rot, w } = self.frames.get(port).copied().unwrap_or(FrameMotion::REST);
        Motion { p, v, rot, w }
    }

    /// The ports `range` of this view.
    #[inline]
    pub fn slice(&self, range: Range<usize>) -> PortMotions<'_> {
        let frames = if self.frames.is_empty() { self.frames } else { &self.frames[range.clone()] };
        PortMotions { points: &self.points[range], frames }
    }
}

/// Where the impedance ports of a range of batch members put their forces (the u of
/// (13e)): `force[k·P + i]` for port i of the k-th member, and `moment[k·P + i]` when
/// some impedance port of the network is a frame port (`moment` is empty otherwise).
#[derive(Debug)]
pub struct SlotForces<'a> {
    pub force: &'a mut [Vector3<f64>],
    pub moment: &'a mut [Vector3<f64>],
}

impl SlotForces<'_> {
    /// The slots `range` of this view.
    #[inline]
    pub fn slice(&mut self, range: Range<usize>) -> SlotForces<'_> {
        let moment = if self.moment.is_empty() { &mut self.moment[..] } else { &mut self.moment[range.clone()] };
        SlotForces { force: &mut self.force[range], moment }
    }

    /// Store `f` as the force (and moment) of slot `slot`.
    #[inline]
    pub fn set(&mut self, slot: usize, f: &Force) {
        self.force[slot] = f.f;
        if let Some(m) = self.moment.get_mut(slot) {
            *m = f.m;
        }
    }
}

/// Φ (13f): the sum of the slot forces `force[s]` for the slots `slots`, in their order.
#[inline(always)]
pub fn sum_slots(slots: &[u32], force: &[Vector3<f64>]) -> Vector3<f64> {
    let mut sum = Vector3::zeros();
    for &s in slots {
        sum += force[s as usize];
    }
    sum
}

/// Impedances of one kind evaluated together (see [`crate::batch`]).
pub trait ImpedanceBatch: Send + Sync {
    /// Append the members of `other` if it is a batch of the same kind (concrete type and
    /// layout); return false, and change nothing, otherwise.
    fn merge(&mut self, other: &dyn ImpedanceBatch) -> bool;
    /// `self` as `Any`, so that [`merge`](Self::merge) can recognise its own kind.
    fn as_any(&self) -> &dyn Any;
    /// Forces and state rates of members `members` (13e)/(22). The buffers start at the
    /// first member of the range: `y` and `dy` hold their states and rates back to back,
    /// `motions` the motions of their ports and `forces` receives their forces. On failure,
    /// returns the index (within the whole batch) of the failing member.
    #[allow(clippy::too_many_arguments)]
    fn evaluate(
        &self,
        members: Range<usize>,
        motions: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        forces: &mut SlotForces<'_>,
        dy: &mut [f64],
    ) -> Result<(), (usize, Fault)>;
}

/// Admittances of one kind evaluated together (see [`crate::batch`]).
pub trait AdmittanceBatch: Send + Sync {
    /// Append the members of `other` if it is a batch of the same kind; false otherwise.
    fn merge(&mut self, other: &dyn AdmittanceBatch) -> bool;
    /// `self` as `Any`, for [`merge`](Self::merge).
    fn as_any(&self) -> &dyn Any;
    /// Rates ξ (13g) of members `members`. `x` and `dx` hold their states and rates back to
    /// back; `forces` the total forces Φ on their ports, back to back. On failure, returns
    /// the index (within the batch) of the failing member.
    fn derivative(
        &self,
        members: Range<usize>,
        x: &[f64],
        forces: &[Force],
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), (usize, Fault)>;
    /// `Admittance::post_step` of members `members` on their states `x` (back to back).
    fn post_step(&self, members: Range<usize>, x: &mut [f64]);
}
