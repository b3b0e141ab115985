//! What a batch sees: the port motions Ψ (13d) of its members' impedance ports
//! ([`PortMotions`]), the slots their forces go to ([`SlotForces`]), the
//! summed forces Φ (13f) on its members' admittance ports (a slice of [`Force`]), and the
//! two batch traits ([`ImpedanceBatch`], [`AdmittanceBatch`]). The batches themselves are in
//! [`crate::batch`]; the schedule forms them and the stepper fills the views.

use crate::error::Fault;
use crate::port::{Force, Motion};
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

/// How the motion of an impedance port (a *slot*) is gathered (Ψ, (13d)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tap {
    /// A point port: p = x[p..p+3], v = x[v..v+3] (absolute indices into the admittance states).
    Point { p: u32, v: u32 },
    /// A point port whose velocity follows its position: p = x[p..p+3], v = x[p+3..p+6]
    /// (one bounds check instead of two).
    PointPv { p: u32 },
    /// A scalar port: q = `x[p]`, q̇ = `x[v]`.
    Scalar { p: u32, v: u32 },
    /// Neither: ground, or `port_motion` of the admittance (and an offset).
    Other,
}

/// Ψ (13d) of one slot in full, for the slots whose [`Tap`] is `Other` (and for
/// [`PortMotions::motion`]).
pub trait SlotMotion: Sync {
    /// Motion of slot `slot` for the admittance states `xa`.
    fn motion(&self, xa: &[f64], slot: usize) -> Motion;
}

/// Ψ (13d) of the impedance ports of a range of batch members, gathered on demand from the
/// stage state: port `k·P + i` is port i of the k-th member of the range (P ports per
/// member; for a batch of members with different port counts, their ports back to back).
/// A point or scalar port with a [`Tap`] is two reads of the state; the others go through
/// `port_motion` ([`SlotMotion`]). Reading them in the batch loop instead of gathering
/// them into a buffer first keeps them in registers (chain-10k, 1 thread: a gathered
/// buffer cost 1.3× the run time, see the commit log).
#[derive(Clone, Copy)]
pub struct PortMotions<'a> {
    taps: &'a [Tap],
    xa: &'a [f64],
    base: usize,
    other: &'a dyn SlotMotion,
    /// When every port of the view has a [`Tap::PointPv`]: their position offsets, from
    /// port 0 of the view on ([`point_pv`](Self::point_pv)); empty otherwise.
    pv: &'a [u32],
    /// When the members' point ports lie in rows of point masses' states (member k's port i
    /// at `first + 6k + step·i`, see [`rows`](Self::rows)): (first, step).
    rows: Option<(usize, usize)>,
}

impl<'a> PortMotions<'a> {
    /// The ports of the members whose first slot is `base`: `taps` of every slot, the
    /// admittance states `xa`, and where the `Other` slots get their motion.
    pub fn new(taps: &'a [Tap], xa: &'a [f64], base: usize, other: &'a dyn SlotMotion) -> Self {
        PortMotions { taps, xa, base, other, pv: &[], rows: None }
    }

    /// The same view, with `pv` the position offsets of its ports from port 0 on, when
    /// every one of them has a [`Tap::PointPv`].
    pub fn with_pv(self, pv: &'a [u32]) -> Self {
        PortMotions { pv, ..self }
    }

    /// The same view, knowing that member k's port i has its position and velocity at
    /// `xa[first + 6k + step·i..][..6]` for every member of the view ([`rows`](Self::rows)).
    pub fn with_rows(self, first: usize, step: usize) -> Self {
        PortMotions { rows: Some((first, step)), ..self }
    }

    /// Where the members' ports lie in rows of six states (point masses in a row: a chain's
    /// springs and contacts): for port i of `members` members, the states from its first
    /// member's on, each member's six states after the last one's; `None` where they do not
    /// lie so. A batch reads them six at a time by slices, with no offset to load or bound
    /// per member.
    #[inline]
    pub fn rows(&self, port: usize, members: usize) -> Option<&'a [f64]> {
        let (first, step) = self.rows?;
        let from = first + step * port;
        self.xa.get(from..from + 6 * members)
    }

    /// Whether every port of the view has a [`Tap::PointPv`], read by
    /// [`point_pv`](Self::point_pv).
    #[inline]
    pub fn all_pv(&self) -> bool {
        !self.pv.is_empty()
    }

    /// Position and velocity of port `port` when [`all_pv`](Self::all_pv): six states
    /// from its offset, with no tap to decode (chain-10k: the tap's `match` was about a
    /// tenth of the impedance phase).
    #[inline(always)]
    pub fn point_pv(&self, port: usize) -> PointMotion {
        let p = self.pv[port] as usize;
        let pv: &[f64; 6] = self.xa[p..p + 6].try_into().expect("a range of six");
        PointMotion { p: Vector3::new(pv[0], pv[1], pv[2]), v: Vector3::new(pv[3], pv[4], pv[5]) }
    }

    /// Position and velocity of port `port`.
    #[inline(always)]
    pub fn point(&self, port: usize) -> PointMotion {
        let (xa, slot) = (self.xa, self.base + port);
        match self.taps[slot] {
            Tap::PointPv { p } => {
                let pv: &[f64; 6] = xa[p as usize..p as usize + 6].try_into().expect("a range of six");
                PointMotion { p: Vector3::new(pv[0], pv[1], pv[2]), v: Vector3::new(pv[3], pv[4], pv[5]) }
            }
            Tap::Point { p, v } => {
                let (p, v) = (&xa[p as usize..p as usize + 3], &xa[v as usize..v as usize + 3]);
                PointMotion { p: Vector3::new(p[0], p[1], p[2]), v: Vector3::new(v[0], v[1], v[2]) }
            }
            Tap::Scalar { p, v } => {
                PointMotion { p: Vector3::new(xa[p as usize], 0.0, 0.0), v: Vector3::new(xa[v as usize], 0.0, 0.0) }
            }
            Tap::Other => PointMotion::of(&self.other.motion(xa, slot)),
        }
    }

    /// The full motion of port `port` (frame fields included).
    #[inline]
    pub fn motion(&self, port: usize) -> Motion {
        self.other.motion(self.xa, self.base + port)
    }

    /// The view of the ports from `port` on (their `PointPv` offsets from there on; the
    /// rows, which count whole members from the view's first, left out).
    #[inline]
    pub fn from(&self, port: usize) -> PortMotions<'a> {
        let pv = self.pv.get(port..).unwrap_or(&[]);
        PortMotions { base: self.base + port, pv, rows: None, ..*self }
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

/// Φ (13f) on the admittance ports of a range of batch members: port `k·P + i` is port i
/// of the k-th member (members' ports back to back). In a probe every sum is kept in `phi`
/// (for signals); a step keeps only those the per-component kind reads. A batch of point-port members sums its ports itself, in its loop
/// ([`point`](Self::point): the forces stay in registers); for the others the stepper has
/// summed every port in full (moments of offset attachments included) before the call and
/// they read [`kept`](Self::kept).
pub struct PortForces<'a> {
    /// Admittance port p receives the slots `incoming[in_off[p]..in_off[p + 1]]`.
    in_off: &'a [usize],
    incoming: &'a [u32],
    force: &'a [Vector3<f64>],
    /// Global index of port 0 of the view.
    base: usize,
    phi: &'a mut [Force],
    /// Whether [`point`](Self::point) keeps its sums in `phi` (for signals: a probe).
    keep: bool,
    /// When every port of the view receives the same number c ≥ 1 of slots: c (their
    /// lists then lie back to back from `incoming[in_off[base]]`, see
    /// [`point_of`](Self::point_of)); 0 otherwise.
    uniform: usize,
    /// `in_off[base]`: where the slot list of port 0 of the view starts.
    first: usize,
}

impl<'a> PortForces<'a> {
    /// The ports from global admittance port `base` on: the CSR lists of the slots pushing
    /// on each port, the slot forces, and where the sums are kept.
    pub fn new(
        in_off: &'a [usize],
        incoming: &'a [u32],
        force: &'a [Vector3<f64>],
        base: usize,
        phi: &'a mut [Force],
        keep: bool,
    ) -> Self {
        PortForces { in_off, incoming, force, base, phi, keep, uniform: 0, first: 0 }
    }

    /// The same view, knowing that every one of its ports receives `count` slots.
    pub fn with_uniform(self, count: usize) -> Self {
        let first = self.in_off.get(self.base).copied().unwrap_or(0);
        PortForces { uniform: count, first, ..self }
    }

    /// [`with_uniform`](Self::with_uniform) with `first` = `in_off[base]` known (a stage's
    /// chunk keeps it: one offset less to read from the schedule).
    pub(crate) fn with_uniform_at(self, count: usize, first: usize) -> Self {
        PortForces { uniform: count, first, ..self }
    }

    /// How many slots every port of the view receives, if that is the same number ≥ 1 for
    /// all of them ([`point_of`](Self::point_of)); 0 otherwise.
    #[inline]
    pub fn uniform(&self) -> usize {
        self.uniform
    }

    /// [`point`](Self::point) when every port of the view receives `C` =
    /// [`uniform`](Self::uniform) slots: port `port`'s list is read at a fixed place, with
    /// no offsets to load, and summed in the same order (the same bits).
    #[inline(always)]
    pub fn point_of<const C: usize>(&mut self, port: usize) -> Vector3<f64> {
        debug_assert_eq!(C, self.uniform);
        let at = self.first + port * C;
        let slots: &[u32; C] = self.incoming[at..at + C].try_into().expect("C slots");
        let mut f = Vector3::zeros();
        for &s in slots {
            f += self.force[s as usize];
        }
        if self.keep {
            let kept = &mut self.phi[port];
            kept.f = f;
            kept.m = Vector3::zeros();
        }
        f
    }

    /// Total force on scalar or point port `port`, summed in the schedule's order (and
    /// kept, in a probe).
    #[inline(always)]
    pub fn point(&mut self, port: usize) -> Vector3<f64> {
        let gp = self.base + port;
        let f = sum_slots(&self.incoming[self.in_off[gp]..self.in_off[gp + 1]], self.force);
        if self.keep {
            // Field by field: a whole `Force` built on the stack and copied stalls store
            // forwarding when it is read back.
            let kept = &mut self.phi[port];
            kept.f = f;
            kept.m = Vector3::zeros();
        }
        f
    }

    /// The kept sums of ports `ports`.
    #[inline]
    pub fn kept(&self, ports: Range<usize>) -> &[Force] {
        &self.phi[ports]
    }
}

/// Impedances of one kind evaluated together (see [`crate::batch`]).
pub trait ImpedanceBatch: Send + Sync {
    /// Append the members of `other` if it is a batch of the same kind (concrete type and
    /// layout); return false, and change nothing, otherwise.
    fn merge(&mut self, other: &dyn ImpedanceBatch) -> bool;
    /// `self` as `Any`, so that [`merge`](Self::merge) can recognise its own kind.
    fn as_any(&self) -> &dyn Any;
    /// The same, mutable: a component joins a batch of its kind
    /// ([`Impedance::join_batch`](crate::component::Impedance::join_batch)).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// [`Impedance::prepare`](crate::component::Impedance::prepare) for members the batch
    /// holds by value (its own copies), called by `Simulator::new` with the network's
    /// components; a batch of shared components (the default) has nothing to do. On
    /// failure, the failing member's index (within the batch) and why.
    fn prepare(&mut self, _method: crate::Method, _step: f64) -> Result<(), (usize, String)> {
        Ok(())
    }
    /// [`Impedance::held_frequency`](crate::component::Impedance::held_frequency) for member
    /// `member` when the batch holds it by value (as [`prepare`](Self::prepare)).
    fn held_frequency(&self, _member: usize, _method: crate::Method, _step: f64, _omega2: Option<f64>, _couple: Option<f64>) {}
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
    /// The same, mutable ([`Admittance::join_batch`](crate::component::Admittance::join_batch)).
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Whether the batch sums the forces on its ports itself ([`PortForces::point`]); if
    /// not (the default), the stepper sums them in full before [`derivative`](Self::derivative).
    fn sums_points(&self) -> bool {
        false
    }
    /// Rates ξ (13g) of members `members`. `x` and `dx` hold their states and rates back to
    /// back; `forces` the total forces Φ on their ports. On failure, returns the index
    /// (within the batch) of the failing member.
    fn derivative(
        &self,
        members: Range<usize>,
        x: &[f64],
        forces: &mut PortForces<'_>,
        t: f64,
        tau: f64,
        dx: &mut [f64],
    ) -> Result<(), (usize, Fault)>;
    /// `Admittance::post_step` of members `members` on their states `x` (back to back).
    fn post_step(&self, members: Range<usize>, x: &mut [f64]);
}
