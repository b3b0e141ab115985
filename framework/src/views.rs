//! What a typed batch sees: the port motions Ψ (13d) and forces Φ (13f) of a range of
//! members as plain slice views ([`PortMotions`], [`PortForces`]), and the two batch
//! traits ([`ImpedanceBatch`], [`AdmittanceBatch`]). The ready-made batches for point-port
//! components are in [`crate::batch`]; the schedule builds the views.

use crate::error::Fault;
use crate::port::Motion;
use nalgebra::Vector3;
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

/// Where the motion of a scalar or point admittance port lies in the admittance's state:
/// position `x[p..p + d]`, velocity `x[v..v + d]`, with d = 1 (scalar) or 3 (point).
/// Declared by `Admittance::port_states`; the schedule then gathers the port's motion
/// (Ψ) with two loads instead of a dynamic `port_motion` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortStates {
    pub p: usize,
    pub v: usize,
}

/// How the motion of an impedance port (a *slot*) is read in the hot loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tap {
    /// A point port: p = x[p..p+3], v = x[v..v+3] (absolute indices into the admittance states).
    Point { p: u32, v: u32 },
    /// A scalar port: q = x[p], q̇ = x[v].
    Scalar { p: u32, v: u32 },
    /// Neither: ground, or `port_motion` of a frame port (and an offset), through [`SlotMotion`].
    Other,
}

/// Ψ (13d) of one slot in full, for the slots whose [`Tap`] is `Other`.
pub trait SlotMotion: Sync {
    /// Motion of slot `slot` for the admittance states `xa`.
    fn motion(&self, xa: &[f64], slot: usize) -> Motion;
}

/// The port motions (Ψ, (13d)) of a range of batch members, read from the stage state on
/// demand. Port `k·P + i` is port i of the k-th member of the range (P ports per member).
pub struct PortMotions<'a> {
    taps: &'a [Tap],
    xa: &'a [f64],
    base: usize,
    other: &'a dyn SlotMotion,
}

impl<'a> PortMotions<'a> {
    /// The ports of the members whose first slot is `base`: `taps` of every slot, the
    /// admittance states `xa`, and where the `Other` slots get their motion.
    pub fn new(taps: &'a [Tap], xa: &'a [f64], base: usize, other: &'a dyn SlotMotion) -> Self {
        PortMotions { taps, xa, base, other }
    }

    /// Position and velocity of port `port` of the range.
    #[inline(always)]
    pub fn point(&self, port: usize) -> PointMotion {
        let (xa, slot) = (self.xa, self.base + port);
        match self.taps[slot] {
            Tap::Point { p, v } => {
                let (p, v) = (p as usize, v as usize);
                PointMotion {
                    p: Vector3::new(xa[p], xa[p + 1], xa[p + 2]),
                    v: Vector3::new(xa[v], xa[v + 1], xa[v + 2]),
                }
            }
            Tap::Scalar { p, v } => {
                PointMotion { p: Vector3::new(xa[p as usize], 0.0, 0.0), v: Vector3::new(xa[v as usize], 0.0, 0.0) }
            }
            Tap::Other => PointMotion::of(&self.other.motion(xa, slot)),
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

/// The port forces (Φ, (13f)) of a range of batch members: for each admittance port, the
/// sum of the forces of the impedance ports attached to it, in the schedule's fixed order.
/// Port `k·P + i` is port i of the k-th member of the range (P ports per member).
pub struct PortForces<'a> {
    /// Admittance port p receives the slots `incoming[in_off[p]..in_off[p + 1]]`.
    in_off: &'a [usize],
    incoming: &'a [u32],
    force: &'a [Vector3<f64>],
    base: usize,
}

impl<'a> PortForces<'a> {
    /// The ports of the members whose first port is admittance port `base` (CSR lists of
    /// the slots pushing on each port, and the slot forces).
    pub fn new(in_off: &'a [usize], incoming: &'a [u32], force: &'a [Vector3<f64>], base: usize) -> Self {
        PortForces { in_off, incoming, force, base }
    }

    /// Total force on scalar or point port `port` of the range.
    #[inline(always)]
    pub fn point(&self, port: usize) -> Vector3<f64> {
        let gp = self.base + port;
        sum_slots(&self.incoming[self.in_off[gp]..self.in_off[gp + 1]], self.force)
    }
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
    /// `force[k·P + i]` receives the force of port i of the k-th member of the range (P ports
    /// per member), whose motion is `ports.point(k·P + i)`. On failure, returns the index
    /// (within the whole batch) of the failing member.
    #[allow(clippy::too_many_arguments)]
    fn evaluate(
        &self,
        members: Range<usize>,
        ports: &PortMotions<'_>,
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Vector3<f64>],
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
    /// back; `forces.point(k·P + i)` is the total force on port i of the k-th member of the
    /// range. On failure, returns the index (within the batch) of the failing member.
    fn derivative(
        &self,
        members: Range<usize>,
        x: &[f64],
        forces: &PortForces<'_>,
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), (usize, Fault)>;
    /// [`Admittance::post_step`] of members `members` on their states `x` (back to back).
    fn post_step(&self, members: Range<usize>, x: &mut [f64]);
}
