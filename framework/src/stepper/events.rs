//! Contact events within a step (issue 14, item 5): a penalty contact's force law has a
//! kink or a jump where the contact closes (δ = 0, the damper's force −B·δ̇ appears at once)
//! and where it opens (K δ + B δ̇ = 0). An RK4 step whose stages straddle such a switch
//! integrates a non-smooth right-hand side; its error is O(T²) per crossing and of either
//! sign, so some bounces ended with more energy than they began with.
//!
//! For the networks whose impedances declare a [switching function](Impedance::switching)
//! g (> 0: pushing), every RK4 step is first taken whole; if the sign of some g at x(k+1)
//! differs from that at x(k), the switching instant t* is located (Illinois regula falsi on
//! the sub-step length, each trial a sub-step of the same method from x(k)) to 1e-9·T, and
//! the step is split there: x(k) → x(t*) → x(k+1), each sub-step on one side of the switch
//! (up to [`MAX_SWITCHES`] switches per step). The sub-step before the switch ends at the
//! bracket's lower end, so that all its stages, the last included, are on its own side, and
//! a sub-step of at most 1e-9·T crosses it: where the force jumps (a contact closing, the
//! damper's B·|δ̇| at once) a sub-step ending past the switch took T/6 of the jump into its
//! last stage (first order through every landing). Each sub-step then integrates a smooth law:
//! free flight exactly (constant gravity), contact with RK4's own dissipation
//! (|R(iωh)| < 1 for ωh < 2√2), so a bounce cannot gain energy but through the 1e-9·T tail.
//! Steps without a switch are unchanged bit for bit; the sample times stay kT.
//!
//! Stick–slip switches (issue 43) are located the same way: a friction element run as its
//! continuous law (B ≥ T K/2 under RK4: f = gsat(F, B v + K e)) has a force that is
//! continuous where it starts or stops slipping but whose derivative is not, so a step
//! straddling the switch is second order at best. Such an impedance declares a second
//! switching function ([`Impedance::slip_switching`], g = F² − ‖B v + K e‖², > 0 while
//! it holds) and each switch is split off like a contact's: a pushed body through three
//! stick–slip switches and the sphere on the cart through its slide → roll switch keep
//! order 3.9 (tests/rk4_order.rs). A general member's two functions are read together
//! ([`Impedance::switchings`]: a contact's geometry once); horizontal plane contacts' are
//! read straight from the state. An admittance may declare switching functions of its own
//! state where its rates or port velocity jump ([`Admittance::state_switchings`]: Karnopp's
//! band edges), and of its state and port forces where its rates have a kink that depends
//! on the load ([`Admittance::force_switchings`]: Karnopp's breakaways, its Φ summed from
//! the impedances on its ports at each checked state), located the same way (model A and
//! the gear declare their stops and breakaways so, `StopSwitch`); an impedance may declare
//! switching functions of its state and port motions the same way
//! ([`Impedance::state_switchings`]: model B's stop and breakaway). Such a component's
//! sides are locked where each (sub-)step starts until the switch is crossed
//! ([`Admittance::lock_sides`]): a stage past a band edge would take the other side's rates,
//! and a trial's end state would then jump with its length where a stage first crosses, so
//! the search found that point instead of the solution's (Karnopp: 1e-6 m off at any T; now
//! of order 4). `"solver": {"events": "contacts"}` keeps the contact switches only,
//! `"none"` steps over every switch ([`Switches`]).
//!
//! A contact read through its port motions (a body contact) keeps what its last check
//! evaluated ([`Impedance::switchings_kept`]) and bounds how far its two functions can have
//! moved since from its ports' changes ([`Impedance::switching_reach`], [`MotionChange`]:
//! its bodies' gathered frames against the kept ones, the offsets' levers added); where both
//! kept values are farther from zero than twice that, the check reads them, without the
//! geometry: a box resting on its corners, nearly every check (the stacks, −3.5 %
//! instructions). Only at the check of a whole step (or of its rest after a switch), whose
//! values are read for their sides: each kept value has the side a fresh one would have, and
//! a member whose side changed was evaluated, so the search, which interpolates the values,
//! sees fresh ones only and the steps are the same bit for bit. Where the bodies keep moving
//! the reach is tried again only after a doubling number of checks.
//!
//! Only under RK4 (Euler reproduces the papers' discrete algorithms) and only when every
//! component is [rewindable](Impedance::rewindable) (an imported FMU is not). The work is
//! budgeted ([`CREDIT_PER_STEP`]): a few contacts have every switch located (the rolling
//! sphere: 8.3 trial sub-steps per switch); in a network whose contacts switch in most steps
//! the located steps cost at most about one extra step per step, and the other switches are
//! stepped over as before (counted in [`EventCounts::unlocated`]).
//!
//! [`Impedance::switching`]: crate::component::Impedance::switching
//! [`Impedance::slip_switching`]: crate::component::Impedance::slip_switching
//! [`Impedance::switchings`]: crate::component::Impedance::switchings
//! [`Impedance::rewindable`]: crate::component::Impedance::rewindable
//! [`Admittance::state_switchings`]: crate::component::Admittance::state_switchings
//! [`Admittance::force_switchings`]: crate::component::Admittance::force_switchings
//! [`Admittance::lock_sides`]: crate::component::Admittance::lock_sides
//! [`Impedance::state_switchings`]: crate::component::Impedance::state_switchings
//! [`Impedance::switchings_kept`]: crate::component::Impedance::switchings_kept
//! [`Impedance::switching_reach`]: crate::component::Impedance::switching_reach

use super::Simulator;
use crate::component::{AffineSlip, AffineSwitch, MotionChange, SwitchKept, MAX_IMPEDANCE_PORTS};
use crate::error::Result;
use crate::method::Method;
use crate::port::{Force, Motion};
use crate::schedule::{Gathered, Schedule};
use crate::views::SlotMotion;
use crate::views::Tap;
use nalgebra::Vector3;

/// Switches located and split off within one step; a step with more takes its rest whole.
pub(crate) const MAX_SWITCHES: usize = 8;

/// Width of the bracket of a located switch, as a fraction of T.
const TOLERANCE: f64 = 1e-9;

/// Work budget of the located steps, in sub-steps (each about the cost of a step): every
/// step earns [`CREDIT_PER_STEP`], up to [`CREDIT_MAX`]; a switch is located only while the
/// credit covers [`MAX_TRIALS`] + 2 sub-steps, else the rest of the step is taken whole.
/// So a network whose contacts switch in nearly every step (thousands of bouncing
/// contacts) costs at most about twice the plain stepper, falling back to unlocated steps,
/// while sparse switches (a few contacts) are all located.
const CREDIT_PER_STEP: f64 = 1.0;
const CREDIT_MAX: f64 = 1024.0;

/// Members per parallel part of the switching check.
const PARALLEL_CHUNK: usize = 1024;

/// Extra sub-steps of 1e-9 T that carry a located switch's end past it, at most.
const MAX_CROSSINGS: usize = 3;

/// Trials per located switch at most (Illinois converges in a handful).
const MAX_TRIALS: usize = 60;

/// A trial past the switch whose |g| is below this fraction of the bracket's |g| ends the
/// search (its sub-step then has the switch within that fraction of its end).
const G_TOLERANCE: f64 = 1e-12;

/// The impedances with a switching function and the buffers of a located step.
pub(crate) struct Events {
    /// Whether the check of a whole step sweeps the state from its end (`Simulator::sweep_back`).
    pub(crate) sweep_back: bool,
    /// The members whose switching functions are read straight from the state (contacts on
    /// a coordinate axis, other affine contacts, horizontal plane contacts with their
    /// stick–slip switch), then the others; g, g0, g_lo and g_hi list them in this order
    /// (see `eval`).
    aligned: Vec<Aligned>,
    affine: Vec<Affine>,
    both: Vec<AlignedBoth>,
    /// The laws of `both`'s members (few: the distinct plane contacts).
    both_laws: Vec<BothLaw>,
    /// Where `both` is one run of contacts with one law on point masses in a row (a chain):
    /// the first member's port position and deflection indices and the strides between
    /// members ([`Strided`]), read by slices instead of three indices a member.
    both_strided: Option<Strided>,
    general: Vec<General>,
    /// Per general member: what its last evaluation left to bound its next ones by
    /// ([`Kept`]).
    kept: Vec<Kept>,
    /// The admittances with switching functions of their own state, then the impedances
    /// with switching functions of their state and port motions, after all the above in g
    /// (`Admittance::state_switchings`, `Impedance::state_switchings`).
    states: Vec<StateMember>,
    /// The components of `states`, shared with the [`Locked`] guard of each located step.
    lockable: Lockable,
    /// The admittances with switching functions of their state and port forces, after the
    /// state members in g (`Admittance::force_switchings`), and the buffers they use.
    forces: Vec<ForceMember>,
    force_work: ForceWork,
    /// τ of the impedances evaluated for the force members: T.
    tau: f64,
    /// g of each member at the start of the (sub-)step; `at_k`: the step they belong to.
    g0: Vec<f64>,
    at_k: Option<u64>,
    /// g at the end of a trial, at the bracket's ends (these two made at the first located
    /// switch, as `x0`).
    g: Vec<f64>,
    g_lo: Vec<f64>,
    g_hi: Vec<f64>,
    /// The state at the start of the current sub-step (taken from the stepper's buffers
    /// without a copy when the whole step has no switch). Made at the first step, so that
    /// what runs before it (`check`'s analyses) does not share the peak with it.
    x0: Vec<f64>,
    /// The motions of the schedule's frames at the state last checked (`Schedule::gather_frames`).
    frames: Vec<Motion>,
    /// Work budget in sub-steps (see [`CREDIT_PER_STEP`]).
    credit: f64,
    /// Switches located, trial sub-steps taken, switches left unlocated (budget or
    /// [`MAX_SWITCHES`]).
    pub(crate) counts: EventCounts,
}

/// The record of [`Events::save`], read back.
pub(crate) struct Saved {
    credit: f64,
    counts: EventCounts,
    at_k: Option<u64>,
    g0: Vec<f64>,
}

/// `"solver": {"events": ...}`: the switches an RK4 step locates within itself and splits
/// at (framework/src/stepper/events.rs): `"all"` (the default: contacts opening and closing,
/// friction elements sticking and slipping, Karnopp's band edges), `"contacts"` (contacts
/// only), or `"none"`
/// (every step taken whole, as the papers' scheme does).
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Switches {
    #[default]
    All,
    Contacts,
    None,
}

/// What the located steps did so far ([`Simulator::contact_events`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// Switches located and split off.
    pub located: u64,
    /// Trial sub-steps spent locating them.
    pub trials: u64,
    /// Steps with a switch taken whole (work budget or more than 8 switches in the step).
    pub unlocated: u64,
    /// Checks of a switching function that read its kept value, its ports not having moved
    /// far enough since to change its sign ([`Impedance::switching_reach`](crate::component::Impedance::switching_reach);
    /// not kept in checkpoints).
    pub kept: u64,
}

/// A member whose switching function is an [`AffineSwitch`] on a point port, read straight
/// from the state: position `x[p..p + 3]`, velocity `x[v..v + 3]`.
#[derive(Clone, Copy)]
struct Affine {
    a: AffineSwitch,
    p: usize,
    v: usize,
}

impl Affine {
    #[inline]
    fn g(&self, xa: &[f64]) -> f64 {
        let (p, v) = (&xa[self.p..self.p + 3], &xa[self.v..self.v + 3]);
        self.a.eval(&Vector3::new(p[0], p[1], p[2]), &Vector3::new(v[0], v[1], v[2]))
    }
}

/// An [`Affine`] member whose normal is a coordinate axis (a `plane_contact`, a wall along
/// x, y or z): g = min(K·d, K·d − B·ḋ) with d = `level` − x[p], ḋ = −x[v], one coordinate
/// read instead of two dot products. Equal to the member's `switching` bit for bit.
#[derive(Clone, Copy)]
struct Aligned {
    level: f64,
    k: f64,
    b: f64,
    p: usize,
    v: usize,
}

impl Aligned {
    /// The member for `a` on a point port with position `x[p..p + 3]` and velocity
    /// `x[v..v + 3]`, if its normal is +x, +y or +z.
    fn of(a: &AffineSwitch, p: usize, v: usize) -> Option<Aligned> {
        let c = (0..3).find(|&c| a.axis[c] == 1.0)?;
        let others_zero = (0..3).all(|i| i == c || a.axis[i] == 0.0);
        others_zero.then_some(Aligned { level: a.level, k: a.k, b: a.b, p: p + c, v: v + c })
    }

    #[inline]
    fn g(&self, xa: &[f64]) -> f64 {
        let kd = self.k * (self.level - xa[self.p]);
        kd.min(kd + self.b * -xa[self.v])
    }
}

/// A horizontal `plane_contact` with both switches read straight from the state: its
/// contact switch (an [`Aligned`] member along z) and its stick–slip switch, an
/// [`AffineSlip`] with tangents +x, +y. Position along z at `x[z]`, velocity at
/// `x[v..v + 3]`, deflection at `x[e..e + 2]`, the law's constants in `laws[law]`
/// ([`BothLaw`], shared by the contacts with the same bits): 16 bytes a member, read in one
/// pass over the contacts (10⁵ on chain-100k). Each g equal to `Aligned::g` and
/// `AffineSlip::eval` bit for bit.
#[derive(Clone, Copy)]
struct AlignedBoth {
    law: u32,
    z: u32,
    v: u32,
    e: u32,
}

/// The constants of [`AlignedBoth`] members: the contact's plane height `level`, its K and
/// B, and μ.
#[derive(Clone, Copy, PartialEq)]
struct BothLaw {
    level: f64,
    k: f64,
    b: f64,
    mu: f64,
}

impl BothLaw {
    /// The bits, to find equal laws.
    fn key(&self) -> [u64; 4] {
        [self.level, self.k, self.b, self.mu].map(f64::to_bits)
    }
}

impl AlignedBoth {
    /// The member for the contact switch `normal` (read at port position `x[p..p + 3]`,
    /// velocity `x[v..v + 3]`) and the stick–slip switch `a` (deflection at `x[e..e + 2]`), if
    /// `a` is horizontal with the same normal law on the same port, with its law; `None`
    /// also where an index does not fit 32 bits.
    fn of(a: &AffineSlip, normal: Aligned, p: usize, v: usize, e: usize) -> Option<(AlignedBoth, BothLaw)> {
        let horizontal = a.normal.axis == Vector3::z() && a.t1 == Vector3::x() && a.t2 == Vector3::y();
        let n = &normal;
        let same = (n.p, n.v, n.level, n.k, n.b) == (p + 2, v + 2, a.normal.level, a.normal.k, a.normal.b);
        let index = |i: usize| u32::try_from(i).ok();
        let member = AlignedBoth { law: 0, z: index(n.p)?, v: index(v)?, e: index(e)? };
        let law = BothLaw { level: n.level, k: n.k, b: n.b, mu: a.mu };
        (horizontal && same).then_some((member, law))
    }

    /// The contact switch alone (`"events": "contacts"`).
    fn normal(&self, law: &BothLaw) -> Aligned {
        Aligned { level: law.level, k: law.k, b: law.b, p: self.z as usize, v: self.v as usize + 2 }
    }

    /// (contact g, stick–slip g) with the member's law `n`.
    #[inline(always)]
    fn g(&self, n: &BothLaw, x: &[f64]) -> (f64, f64) {
        let (z, v, e) = (self.z as usize, self.v as usize, self.e as usize);
        n.g(x[z], &x[v..v + 3], &x[e..e + 2])
    }
}

impl BothLaw {
    /// (contact g, stick–slip g) of a contact at height `z`, velocity `v` and deflection `e`.
    #[inline(always)]
    fn g(&self, z: f64, v: &[f64], e: &[f64]) -> (f64, f64) {
        let n = self;
        let depth = n.level - z;
        let kd = n.k * depth;
        let contact = kd.min(kd + n.b * -v[2]);
        let fn_ = if depth > 0.0 { (kd - n.b * v[2]).max(0.0) } else { 0.0 };
        let (tx, ty) = (n.b * v[0] + n.k * e[0], n.b * v[1] + n.k * e[1]);
        let limit = n.mu * fn_;
        (contact, limit * limit - (tx * tx + ty * ty))
    }
}

/// [`AlignedBoth`] members in a row whose states lie at fixed strides (a chain's contacts on
/// point masses: member k's port position z at `z + 6k`, its velocity right after, its
/// deflection at `e + 2k`), all with the one law: the check reads them by slices, with no index to load
/// or bound per member (chain-10k: a fifth of the check's instructions). The same values as
/// [`AlignedBoth::g`], bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Strided {
    z: usize,
    pz: usize,
    e: usize,
    pe: usize,
    n: usize,
}

impl Strided {
    /// The run of `both`, if all its members lie so (and share one law of `laws` laws), each
    /// member's six port states and two deflections within the admittance states (`nx`)
    /// and the state (`len`).
    fn of(both: &[AlignedBoth], laws: usize, nx: usize, len: usize) -> Option<Strided> {
        let (first, second) = (both.first()?, both.get(1)?);
        let (z, e) = (first.z as usize, first.e as usize);
        let (pz, pe) = ((second.z as usize).checked_sub(z)?, (second.e as usize).checked_sub(e)?);
        // A port's velocity follows its position (p.z, then v.x), and a member's states do
        // not overlap the next one's.
        let n = both.len();
        let fits = (pz, pe) == (PORT_STATES, DEFLECTIONS) && laws == 1 && z >= 2 && z - 2 + pz * n <= nx && e + pe * n <= len;
        let all = both.iter().enumerate().all(|(k, m)| {
            (m.z as usize, m.v as usize, m.e as usize) == (z + k * pz, z + k * pz + 1, e + k * pe)
        });
        (fits && all).then_some(Strided { z, pz, e, pe, n })
    }

    /// g of the run at state `x` with `law` into `out_c`, `out_s` (g0 likewise); whether
    /// some side changed (as [`check_pairs`], in parts of [`PARALLEL_CHUNK`] when `parallel`).
    /// `back`: on one part, from the last member to the first (the same values; a sweep
    /// starts where the stage before it ended, `Simulator::sweep_back`).
    #[allow(clippy::too_many_arguments)]
    fn check(&self, out_c: &mut [f64], out_s: &mut [f64], (g0_c, g0_s): (&[f64], &[f64]), parallel: bool, back: bool, law: &BothLaw, x: &[f64]) -> bool {
        // Member k's port states (p, v) from z − 2 on, its deflection from e on.
        let ports = &x[self.z - 2..self.z - 2 + PORT_STATES * self.n];
        let defl = &x[self.e..self.e + DEFLECTIONS * self.n];
        let part = |oc: &mut [f64], os: &mut [f64], from: usize, back: bool| {
            // Arrays of known length (chunks of that length: the fallback is never taken).
            let p = ports[from * PORT_STATES..].chunks_exact(PORT_STATES).map(|p| <&[f64; PORT_STATES]>::try_from(p).unwrap_or(&[0.0; PORT_STATES]));
            let d = defl[from * DEFLECTIONS..].chunks_exact(DEFLECTIONS).map(|d| <&[f64; DEFLECTIONS]>::try_from(d).unwrap_or(&[0.0; DEFLECTIONS]));
            let members = p.zip(d).zip(oc.iter_mut().zip(os.iter_mut()));
            if g0_c.is_empty() {
                for ((p, d), (oc, os)) in members {
                    (*oc, *os) = law.g(p[2], &p[3..], d);
                }
                return false;
            }
            let members = members.zip(g0_c[from..].iter().zip(&g0_s[from..]));
            let mut any = false;
            let mut one = |(((p, d), (oc, os)), (&c0, &s0)): Sides<'_>| {
                let (c, s) = law.g(p[2], &p[3..], d);
                any |= ((c > 0.0) != (c0 > 0.0)) | ((s > 0.0) != (s0 > 0.0));
                (*oc, *os) = (c, s);
            };
            if back {
                members.rev().for_each(&mut one);
            } else {
                members.for_each(&mut one);
            }
            any
        };
        if !(parallel && self.n > PARALLEL_CHUNK) {
            return part(out_c, out_s, 0, back);
        }
        use rayon::prelude::*;
        out_c
            .par_chunks_mut(PARALLEL_CHUNK)
            .zip(out_s.par_chunks_mut(PARALLEL_CHUNK))
            .enumerate()
            .map(|(c, (oc, os))| part(oc, os, c * PARALLEL_CHUNK, false))
            .reduce(|| false, |a, b| a | b)
    }
}

/// One member of a [`Strided`] run as its check reads it: its port states, its deflections,
/// where its two switching functions go, and their values at the step's start.
type Sides<'a> = (((&'a [f64; PORT_STATES], &'a [f64; DEFLECTIONS]), (&'a mut f64, &'a mut f64)), (&'a f64, &'a f64));

/// The states of a point mass (p, v) and of a plane contact's deflection: the strides of
/// a [`Strided`] run.
const PORT_STATES: usize = 6;
const DEFLECTIONS: usize = 2;

/// A member whose switching functions are read through its port motions: schedule index,
/// slot range, state range, and which of its two it has: the contact switch
/// ([`Impedance::switching`](crate::component::Impedance::switching)) and the stick–slip
/// switch ([`Impedance::slip_switching`](crate::component::Impedance::slip_switching)),
/// read together ([`Impedance::switchings`](crate::component::Impedance::switchings)). Each
/// general member has a place for both in g (the contact's, then after all of them the
/// slip's); one it does not have reads [`ABSENT`].
#[derive(Clone, Copy)]
struct General {
    imp: usize,
    slots: (usize, usize),
    y: (usize, usize),
    contact: bool,
    slip: bool,
}

/// What a general member's last evaluation of its switching functions left: their values
/// (as g lists them), its two ports' motions there and what the component kept
/// ([`Impedance::switchings_kept`](crate::component::Impedance::switchings_kept)). Where the
/// ports have since moved so little that neither function can have reached zero
/// ([`Impedance::switching_reach`](crate::component::Impedance::switching_reach), with a
/// margin of two), the check reads these values: the same sides, so the same steps bit for
/// bit, without the geometry (a box resting on its corners).
#[derive(Clone, Copy, Default)]
struct Kept {
    g: (f64, f64),
    from: [Motion; 2],
    kept: SwitchKept,
    valid: bool,
    /// Checks to evaluate before the reach is tried again, and how many after the next miss
    /// (doubled at each miss, up to [`MAX_BACKOFF`]): where the ports keep moving (bodies in
    /// flight) the reach rarely clears, and trying it each time cost more than it saved.
    wait: u8,
    backoff: u8,
}

/// Most checks a member evaluates between tries of its reach.
const MAX_BACKOFF: u8 = 31;

/// How much farther from zero than its reach a kept value must be: twice, and a relative
/// 1e-12 against rounding.
const REACH_MARGIN: f64 = 2.0;

impl Kept {
    /// The kept values, if the member's ports moved from `from` to `motion` (its state now
    /// `y`) cannot have changed their sides.
    #[inline]
    fn still(&self, c: &dyn crate::component::Impedance, carriers: &[(Motion, f64); 2], y: &[f64], (contact, slip): (bool, bool)) -> Option<(f64, f64)> {
        if !self.valid {
            return None;
        }
        let change = [0, 1].map(|i| MotionChange::between(&self.from[i], &carriers[i].0).at_lever(carriers[i].1));
        let [rc, rs] = c.switching_reach(&self.kept, &change, y);
        let clear = |has: bool, g: f64, reach: f64| !has || g.abs() * (1.0 - 1e-12) > REACH_MARGIN * reach;
        (clear(contact, self.g.0, rc) && clear(slip, self.g.1, rs)).then_some(self.g)
    }
}

/// A component whose switching functions are read from its own state (an impedance's from
/// its port motions too): which, its state range, and where its `n` functions start in the
/// components' part of g.
#[derive(Clone, Copy)]
struct StateMember {
    of: Owner,
    x: (usize, usize),
    at: usize,
    n: usize,
}

/// The component of a [`StateMember`]: an admittance's schedule index, or an impedance's
/// with its slot range.
#[derive(Clone, Copy)]
enum Owner {
    Adm(usize),
    Imp { imp: usize, slots: (usize, usize) },
}

/// An admittance whose switching functions read its port forces as well
/// ([`Admittance::force_switchings`](crate::component::Admittance::force_switchings)):
/// schedule index, state range, where its `n` functions start after the state members',
/// and the impedances on its ports (evaluated at the state to sum its Φ).
struct ForceMember {
    adm: usize,
    x: (usize, usize),
    at: usize,
    n: usize,
    imps: Vec<usize>,
}

/// The buffers of the force members' Φ: the slot forces and moments of the impedances on
/// their ports (every slot of the schedule, made only when there is a force member), an
/// impedance's rates (discarded), the ports' forces.
#[derive(Default)]
struct ForceWork {
    force: Vec<Vector3<f64>>,
    moment: Vec<Vector3<f64>>,
    rates: Vec<f64>,
    phi: Vec<Force>,
}

/// The g of a switch a general member does not have: a side that never changes.
const ABSENT: f64 = 1.0;

impl Events {
    /// `None` unless the method is RK4, some impedance has a switching function at the
    /// initial state `x`, and every component can be rewound.
    pub(crate) fn new(sched: &Schedule, method: Method, x: &[f64]) -> Option<Box<Events>> {
        if method != Method::Rk4 {
            return None;
        }
        let rewindable = sched.adm.iter().all(|a| a.rewindable()) && sched.imp.iter().all(|i| i.rewindable());
        let mut ev = Events {
            sweep_back: false,
            aligned: Vec::new(),
            affine: Vec::new(),
            both: Vec::new(),
            both_laws: Vec::new(),
            both_strided: None,
            general: Vec::new(),
            kept: Vec::new(),
            states: Vec::new(),
            lockable: Lockable::from([]),
            forces: Vec::new(),
            force_work: ForceWork::default(),
            tau: 0.0,
            g0: Vec::new(),
            at_k: None,
            g: Vec::new(),
            g_lo: Vec::new(),
            g_hi: Vec::new(),
            x0: Vec::new(),
            frames: Vec::new(),
            credit: CREDIT_MAX,
            counts: EventCounts::default(),
        };
        // The distinct laws of the horizontal plane contacts, by their bits.
        let mut laws = std::collections::HashMap::new();
        for imp in 0..sched.imp.len() {
            let slots = (sched.imp_slots[imp], sched.imp_slots[imp + 1]);
            let tap = if slots.1 > slots.0 { sched.taps[slots.0] } else { Tap::Other };
            let pv = match tap {
                Tap::PointPv { p } => Some((p as usize, p as usize + 3)),
                Tap::Point { p, v } => Some((p as usize, v as usize)),
                _ => None,
            };
            // An affine switching function read straight from the state is the member's
            // `switching`, bit for bit (components/src/contact tests), and a member with one
            // gives its stick–slip switch in closed form too if it has one
            // (`affine_slip_switching`): such a member is not evaluated here (10⁵ plane
            // contacts).
            let y = (sched.imp_y[imp], sched.imp_y[imp + 1]);
            let c = &sched.imp[imp];
            let (affine, affine_slip) = (c.affine_switching(), c.affine_slip_switching());
            let [contact, slip] = match affine {
                Some(_) => [true, affine_slip.is_some()],
                None => switchings(sched, imp, x, 0.0).map(|g| g.is_some()),
            };
            let mut general = General { imp, slots, y, contact: false, slip: false };
            let slip_affine = if slip && y.1 >= y.0 + 2 { affine_slip } else { None };
            let mut slip_read = false;
            match (affine, pv) {
                (Some(a), Some((p, v))) => match Aligned::of(&a, p, v) {
                    Some(m) => match slip_affine.and_then(|s| AlignedBoth::of(&s, m, p, v, y.0)) {
                        Some((b, law)) => {
                            // Neighbouring contacts mostly share a law: compared with the
                            // last one first (hashing each of chain-100k's 10⁵ contacts cost
                            // 0.6 % of its load).
                            let n = ev.both_laws.len() as u32;
                            let law = match ev.both_laws.last() {
                                Some(last) if last.key() == law.key() => n - 1,
                                _ => *laws.entry(law.key()).or_insert_with(|| {
                                    ev.both_laws.push(law);
                                    n
                                }),
                            };
                            ev.both.push(AlignedBoth { law, ..b });
                            slip_read = true;
                        }
                        None => ev.aligned.push(m),
                    },
                    None => ev.affine.push(Affine { a, p, v }),
                },
                _ => general.contact = contact,
            }
            general.slip = slip && !slip_read;
            if general.contact || general.slip {
                ev.general.push(general);
            }
        }
        // The members that keep what bounds their next checks (two ports, a component that
        // gives a reach: body contacts) first, each with its record; the others (a plane
        // contact on a body's corner) on their own, touching no record.
        let keeps = |m: &General| {
            let two = m.slots.1 - m.slots.0 == 2;
            two && sched.imp[m.imp].switchings_kept(&sched.impedance_motions(m.imp, x), &x[m.y.0..m.y.1], 0.0).1.is_some()
        };
        let (keeping, plain): (Vec<General>, Vec<General>) = ev.general.drain(..).partition(keeps);
        ev.kept = vec![Kept::default(); keeping.len()];
        ev.general = keeping.into_iter().chain(plain).collect();
        let mut at = 0;
        for (adm, c) in sched.adm.iter().enumerate() {
            let n = c.state_switches();
            if n > 0 {
                ev.states.push(StateMember { of: Owner::Adm(adm), x: (sched.adm_x[adm], sched.adm_x[adm + 1]), at, n });
                at += n;
            }
        }
        for (imp, c) in sched.imp.iter().enumerate() {
            let n = c.state_switches();
            if n > 0 {
                let (slots, y) = ((sched.imp_slots[imp], sched.imp_slots[imp + 1]), (sched.imp_y[imp], sched.imp_y[imp + 1]));
                ev.states.push(StateMember { of: Owner::Imp { imp, slots }, x: y, at, n });
                at += n;
            }
        }
        ev.lockable = ev
            .states
            .iter()
            .map(|m| match m.of {
                Owner::Adm(adm) => Lockee::Adm(sched.adm[adm].clone()),
                Owner::Imp { imp, .. } => Lockee::Imp(sched.imp[imp].clone()),
            })
            .collect();
        for (adm, c) in sched.adm.iter().enumerate() {
            let n = c.force_switches();
            if n > 0 {
                let ports = sched.adm_ports[adm]..sched.adm_ports[adm + 1];
                let slots = ports.flat_map(|gp| sched.incoming[sched.in_off[gp]..sched.in_off[gp + 1]].iter());
                let mut imps: Vec<usize> =
                    slots.map(|&s| sched.imp_slots.partition_point(|&o| o <= s as usize) - 1).collect();
                imps.sort_unstable();
                imps.dedup();
                ev.forces.push(ForceMember { adm, x: (sched.adm_x[adm], sched.adm_x[adm + 1]), at, n, imps });
                at += n;
            }
        }
        if !ev.forces.is_empty() {
            let slots = *sched.imp_slots.last().unwrap_or(&0);
            let w = &mut ev.force_work;
            (w.force, w.moment) = (vec![Vector3::zeros(); slots], vec![Vector3::zeros(); slots]);
        }
        let n = ev.aligned.len() + ev.affine.len() + 2 * ev.both.len() + 2 * ev.general.len() + at;
        if n == 0 || !rewindable {
            return None;
        }
        (ev.g0, ev.g) = (vec![0.0; n], vec![0.0; n]);
        ev.both_strided = Strided::of(&ev.both, ev.both_laws.len(), sched.nx, x.len());
        Some(Box::new(ev))
    }

    /// Keep only the contact switches (`"events": "contacts"`); `false` if none is left.
    pub(crate) fn contacts_only(&mut self) -> bool {
        self.both_strided = None;
        let laws = std::mem::take(&mut self.both_laws);
        self.aligned.extend(self.both.drain(..).map(|b| b.normal(&laws[b.law as usize])));
        self.general.retain(|m| m.contact);
        for m in &mut self.general {
            m.slip = false;
        }
        self.states.clear();
        self.lockable = Lockable::from([]);
        self.forces.clear();
        let n = self.aligned.len() + self.affine.len() + 2 * self.general.len();
        (self.g0, self.g, self.g_lo, self.g_hi) = (vec![0.0; n], vec![0.0; n], Vec::new(), Vec::new());
        self.at_k = None;
        n > 0
    }

    /// Whether a switch in the bracket (sides differing between g0 and g_hi) is a jump of
    /// a force or rate rather than a kink: a contact closing (g from ≤ 0 to > 0: the
    /// damper's B·|δ̇| at once), or an admittance's state switch (a band edge). Contact
    /// openings, stick–slip switches and admittances' force switches (a breakaway) are
    /// kinks.
    fn jumps(&self) -> bool {
        let nb = self.aligned.len() + self.affine.len();
        let (nh, ng) = (self.both.len(), self.general.len());
        let nc = nb + 2 * nh;
        let contact = |j: usize| j < nb + nh || (nc..nc + ng).contains(&j);
        let states = self.state_base()..self.state_base() + self.states.last().map_or(0, |m| m.at + m.n);
        (0..self.g0.len()).any(|j| {
            let (a, b) = (self.g0[j] > 0.0, self.g_hi[j] > 0.0);
            a != b && (states.contains(&j) || (contact(j) && b))
        })
    }

    /// For an index of g: the index of its contact switch if it is a stick–slip switch of
    /// a member that has both (horizontal plane contacts, general members).
    fn slip_with_contact(&self) -> impl Fn(usize) -> Option<usize> + '_ {
        let nb = self.aligned.len() + self.affine.len();
        let (nh, ng) = (self.both.len(), self.general.len());
        let nc = nb + 2 * nh;
        move |j| {
            if (nb + nh..nc).contains(&j) {
                Some(j - nh)
            } else if (nc + ng..nc + 2 * ng).contains(&j) && self.general[j - nc - ng].contact {
                Some(j - ng)
            } else {
                None
            }
        }
    }

    /// Where the admittances' switching functions start in g.
    fn state_base(&self) -> usize {
        self.aligned.len() + self.affine.len() + 2 * self.both.len() + 2 * self.general.len()
    }

    /// The state was changed from outside: g at x(k) is computed again.
    pub(crate) fn forget(&mut self) {
        self.at_k = None;
    }

    /// Members with a switching function (the checkpoint's fingerprint).
    pub(crate) fn members(&self) -> usize {
        self.g0.len()
    }

    /// What the next steps depend on besides x(k) (stepper/checkpoint.rs): the work budget,
    /// the counts, and g at x(k) as the last step left it (it is not computed again, so a
    /// continued run takes the same decisions bit for bit).
    pub(crate) fn save(&self, w: &mut super::codec::Writer) {
        let c = &self.counts;
        w.f64(self.credit).u64(c.located).u64(c.trials).u64(c.unlocated);
        w.u8(u8::from(self.at_k.is_some())).u64(self.at_k.unwrap_or(0)).f64s(&self.g0);
    }

    /// Read what [`save`](Self::save) wrote (the number of members already checked).
    pub(crate) fn load(r: &mut super::codec::Reader, members: usize) -> Result<Saved> {
        let credit = r.f64()?;
        let counts = EventCounts { located: r.u64()?, trials: r.u64()?, unlocated: r.u64()?, kept: 0 };
        let has = r.u8()?;
        let at = r.u64()?;
        let g0 = r.f64s(members)?;
        if !(0.0..=CREDIT_MAX).contains(&credit) || has > 1 {
            return Err(super::codec::bad("the contact events' record is out of range"));
        }
        Ok(Saved { credit, counts, at_k: (has == 1).then_some(at), g0 })
    }

    /// Take the record [`load`](Self::load) read.
    pub(crate) fn restore(&mut self, s: Saved) {
        (self.credit, self.counts, self.at_k) = (s.credit, s.counts, s.at_k);
        self.g0.copy_from_slice(&s.g0);
        // The kept evaluations belong to the run before: each member evaluated afresh.
        self.kept.iter_mut().for_each(|k| k.valid = false);
    }

    /// g of every member at `x`, time `t`, into `self.g` (`into_g0`: into `self.g0`);
    /// returns whether the side (g > 0) of some member in `self.g` differs from `self.g0`
    /// (false when `into_g0`). With `parallel`, in chunks of [`PARALLEL_CHUNK`] members on
    /// the rayon pool (each g on its own: the same values for any number of threads).
    fn eval(&mut self, sched: &Schedule, x: &[f64], t: f64, into_g0: bool, parallel: bool) -> bool {
        self.eval_reading(sched, x, t, into_g0, parallel, false)
    }

    /// [`eval`](Self::eval), a member reading its kept values where `read_kept` and its reach
    /// allows ([`Kept`]): at the check of a whole (or the rest of a) step, whose values are
    /// read for their sides only; not within a search, which interpolates the values.
    fn eval_reading(&mut self, sched: &Schedule, x: &[f64], t: f64, into_g0: bool, parallel: bool, read_kept: bool) -> bool {
        let xa = &x[..sched.nx];
        // The general members read their ports through the frames, each body's motion
        // gathered once (as the stepper's impedance phase does: the same values).
        let imp_states = self.states.iter().any(|m| matches!(m.of, Owner::Imp { .. }));
        if !self.general.is_empty() || !self.forces.is_empty() || imp_states {
            sched.gather_frames(xa, &mut self.frames);
        }
        let gathered = Gathered { sched, frames: &self.frames };
        let (out, g0): (&mut [f64], &[f64]) = if into_g0 { (&mut self.g0, &[]) } else { (&mut self.g, &self.g0) };
        // g lists the aligned, the affine, the horizontal plane contacts' contact switches,
        // then their stick–slip switches, then the general members' two (`General`).
        let (na, nb) = (self.aligned.len(), self.aligned.len() + self.affine.len());
        let (nh, ng) = (self.both.len(), self.general.len());
        let (out_a, rest) = out.split_at_mut(na);
        let (out_b, rest) = rest.split_at_mut(nb - na);
        let (out_hc, rest) = rest.split_at_mut(nh);
        let (out_hs, out_g) = rest.split_at_mut(nh);
        let part = |r: std::ops::Range<usize>| if g0.is_empty() { g0 } else { &g0[r] };
        let mut any = check(out_a, &self.aligned, part(0..na), parallel, |m| m.g(xa));
        any |= check(out_b, &self.affine, part(na..nb), parallel, |m| m.g(xa));
        let (nc, laws) = (nb + 2 * nh, &self.both_laws);
        let (g0c, g0s) = (part(nb..nb + nh), part(nb + nh..nc));
        any |= match (&self.both_strided, &laws[..]) {
            (Some(run), [law]) => run.check(out_hc, out_hs, (g0c, g0s), parallel, self.sweep_back, law, x),
            // One law for all (a chain's contacts): its constants held out of the loop.
            (None, [law]) => check_pairs(out_hc, out_hs, &self.both, g0c, g0s, parallel, |m: &AlignedBoth| m.g(law, x)),
            _ => check_pairs(out_hc, out_hs, &self.both, g0c, g0s, parallel, BothG { laws, x }),
        };
        let pick = |has: bool, g: Option<f64>| if has { g.unwrap_or(0.0) } else { ABSENT };
        let general = |m: &General| {
            let &General { imp, slots: (sa, sb), y, contact, slip } = m;
            let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
            for (slot, m) in (sa..sb).zip(motions.iter_mut()) {
                *m = gathered.motion(xa, slot);
            }
            let [c, s] = sched.imp[imp].switchings(&motions[..sb - sa], &x[y.0..y.1], t);
            (pick(contact, c), pick(slip, s))
        };
        let keeping = |(m, kept): (&General, &mut Kept)| {
            let &General { imp, slots: (sa, _), y, contact, slip } = m;
            let (c, y) = (&*sched.imp[imp], &x[y.0..y.1]);
            // Its two ports' carriers' changes since the kept evaluation, each motion read as
            // its body's gathered frame (no offset to apply).
            let carriers = || [gathered.carrier(xa, sa), gathered.carrier(xa, sa + 1)];
            // Tried where the last check kept its evaluation and no miss asks to wait; after
            // a miss, `wait` checks evaluate before the one that keeps for the next try.
            let (mut wait, mut backoff) = (kept.wait, kept.backoff);
            if read_kept && wait > 0 {
                wait -= 1;
            } else if read_kept && kept.valid {
                if let Some(g) = kept.still(c, &carriers(), y, (contact, slip)) {
                    kept.backoff = 0;
                    return (g, true);
                }
                backoff = (2 * backoff + 1).min(MAX_BACKOFF);
                wait = backoff;
            }
            let motions = [gathered.motion(xa, sa), gathered.motion(xa, sa + 1)];
            let ([gc, gs], keep) = c.switchings_kept(&motions, y, t);
            let g = (pick(contact, gc), pick(slip, gs));
            match keep {
                Some(k) if wait == 0 => {
                    let [a, b] = carriers();
                    *kept = Kept { g, from: [a.0, b.0], kept: k, valid: true, wait, backoff };
                }
                _ => (kept.valid, kept.wait, kept.backoff) = (false, wait, backoff),
            }
            (g, false)
        };
        // In parallel too: on multibody-10k (6544 contacts on rigid bodies' corners, read
        // through their port motions) this check on one thread took 5.7 % of a 2-thread step.
        let (out_gc, out_gs) = out_g.split_at_mut(ng);
        let (out_gs, out_s) = out_gs.split_at_mut(ng);
        let (g0c, g0s) = if g0.is_empty() { (g0, g0) } else { g0[nc..nc + 2 * ng].split_at(ng) };
        let nk = self.kept.len();
        let ((out_kc, out_gc), (out_ks, out_gs)) = (out_gc.split_at_mut(nk), out_gs.split_at_mut(nk));
        let ((g0kc, g0c), (g0ks, g0s)) = if g0.is_empty() { ((g0, g0), (g0, g0)) } else { (g0c.split_at(nk), g0s.split_at(nk)) };
        let (members_k, members) = self.general.split_at(nk);
        let (changed, read) = check_general(out_kc, out_ks, members_k, &mut self.kept, g0kc, g0ks, parallel, keeping);
        any |= changed | check_pairs(out_gc, out_gs, members, g0c, g0s, parallel, general);
        self.counts.kept += read;
        // The admittances' own switches (few: on this thread).
        for m in &self.states {
            let out = &mut out_s[m.at..m.at + m.n];
            match m.of {
                Owner::Adm(adm) => sched.adm[adm].state_switchings(&x[m.x.0..m.x.1], out),
                Owner::Imp { imp, slots: (sa, sb) } => {
                    let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
                    for (slot, m) in (sa..sb).zip(motions.iter_mut()) {
                        *m = gathered.motion(xa, slot);
                    }
                    let np = (sb - sa).min(MAX_IMPEDANCE_PORTS);
                    sched.imp[imp].state_switchings(&motions[..np], &x[m.x.0..m.x.1], out);
                }
            }
            if !g0.is_empty() {
                let g0 = &g0[nc + 2 * ng + m.at..][..m.n];
                any |= out.iter().zip(g0).any(|(&g, &g0)| (g > 0.0) != (g0 > 0.0));
            }
        }
        // The admittances' switches that read their port forces: Φ at this state from the
        // impedances on their ports (few: on this thread).
        let w = &mut self.force_work;
        for m in &self.forces {
            for &i in &m.imps {
                let (sa, sb) = (sched.imp_slots[i], sched.imp_slots[i + 1]);
                let np = (sb - sa).min(MAX_IMPEDANCE_PORTS);
                let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
                for (slot, m) in (sa..sb).zip(motions.iter_mut()) {
                    *m = gathered.motion(xa, slot);
                }
                let mut f = [Force::ZERO; MAX_IMPEDANCE_PORTS];
                let y = &x[sched.imp_y[i]..sched.imp_y[i + 1]];
                w.rates.resize(y.len(), 0.0);
                // A fault here is met (and reported) by the stepper's own evaluation.
                if sched.imp[i].evaluate(&motions[..np], y, t, self.tau, &mut f[..np], &mut w.rates).is_err() {
                    f = [Force::ZERO; MAX_IMPEDANCE_PORTS];
                }
                for (p, f) in f[..np].iter().enumerate() {
                    (w.force[sa + p], w.moment[sa + p]) = (f.f, f.m);
                }
            }
            let ports = sched.adm_ports[m.adm + 1] - sched.adm_ports[m.adm];
            w.phi.clear();
            w.phi.extend((0..ports).map(|p| sched.sum_port(xa, &w.force, &w.moment, m.adm, p)));
            let out = &mut out_s[m.at..m.at + m.n];
            sched.adm[m.adm].force_switchings(&x[m.x.0..m.x.1], &w.phi, out);
            if !g0.is_empty() {
                let g0 = &g0[nc + 2 * ng + m.at..][..m.n];
                any |= out.iter().zip(g0).any(|(&g, &g0)| (g > 0.0) != (g0 > 0.0));
            }
        }
        any
    }
}

/// g of `members` into `out` by `g`; whether the side (g > 0) of some member differs
/// from `g0` (false when `g0` is empty). With `parallel`, in chunks of
/// [`PARALLEL_CHUNK`] members on the rayon pool (each g on its own: the same values for
/// any number of threads).
fn check<M: Sync>(out: &mut [f64], members: &[M], g0: &[f64], parallel: bool, g: impl Fn(&M) -> f64 + Sync) -> bool {
    if !(parallel && out.len() > PARALLEL_CHUNK) {
        return check_serial(out, members, g0, g);
    }
    use rayon::prelude::*;
    out.par_chunks_mut(PARALLEL_CHUNK)
        .zip(members.par_chunks(PARALLEL_CHUNK))
        .enumerate()
        .map(|(c, (o, m))| {
            let g0 = if g0.is_empty() { g0 } else { &g0[c * PARALLEL_CHUNK..][..o.len()] };
            check_serial(o, m, g0, &g)
        })
        .reduce(|| false, |a, b| a | b)
}

/// [`check_pairs`] for the general members, each with what its last evaluation kept
/// (`kept`, updated by `g`, which also says whether it read the kept values): whether some
/// side changed, and how many members read their kept values.
#[allow(clippy::too_many_arguments)]
fn check_general(
    out_a: &mut [f64],
    out_b: &mut [f64],
    members: &[General],
    kept: &mut [Kept],
    g0_a: &[f64],
    g0_b: &[f64],
    parallel: bool,
    g: impl Fn((&General, &mut Kept)) -> ((f64, f64), bool) + Sync,
) -> (bool, u64) {
    let serial = |oa: &mut [f64], ob: &mut [f64], ms: &[General], ks: &mut [Kept], ga: &[f64], gb: &[f64]| {
        let (mut any, mut read) = (false, 0);
        for (i, ((m, k), (oa, ob))) in ms.iter().zip(ks.iter_mut()).zip(oa.iter_mut().zip(ob.iter_mut())).enumerate() {
            let ((a, b), kept) = g((m, k));
            if !ga.is_empty() {
                any |= ((a > 0.0) != (ga[i] > 0.0)) | ((b > 0.0) != (gb[i] > 0.0));
            }
            (*oa, *ob) = (a, b);
            read += u64::from(kept);
        }
        (any, read)
    };
    if !(parallel && members.len() > PARALLEL_CHUNK) {
        return serial(out_a, out_b, members, kept, g0_a, g0_b);
    }
    use rayon::prelude::*;
    out_a
        .par_chunks_mut(PARALLEL_CHUNK)
        .zip(out_b.par_chunks_mut(PARALLEL_CHUNK))
        .zip(members.par_chunks(PARALLEL_CHUNK).zip(kept.par_chunks_mut(PARALLEL_CHUNK)))
        .enumerate()
        .map(|(c, ((oa, ob), (m, k)))| {
            let r = c * PARALLEL_CHUNK..c * PARALLEL_CHUNK + oa.len();
            let (ga, gb) = if g0_a.is_empty() { (g0_a, g0_b) } else { (&g0_a[r.clone()], &g0_b[r]) };
            serial(oa, ob, m, k, ga, gb)
        })
        .reduce(|| (false, 0), |a, b| (a.0 | b.0, a.1 + b.1))
}

/// [`check`] for members with two switching functions each: the first into `out_a`, the
/// second into `out_b` (g0 likewise).
#[allow(clippy::too_many_arguments)]
fn check_pairs<M: Sync>(
    out_a: &mut [f64],
    out_b: &mut [f64],
    members: &[M],
    g0_a: &[f64],
    g0_b: &[f64],
    parallel: bool,
    g: impl PairG<M>,
) -> bool {
    let serial = |oa: &mut [f64], ob: &mut [f64], ms: &[M], ga: &[f64], gb: &[f64]| check_pairs_serial(oa, ob, ms, ga, gb, &g);
    if !(parallel && members.len() > PARALLEL_CHUNK) {
        return serial(out_a, out_b, members, g0_a, g0_b);
    }
    use rayon::prelude::*;
    out_a
        .par_chunks_mut(PARALLEL_CHUNK)
        .zip(out_b.par_chunks_mut(PARALLEL_CHUNK))
        .zip(members.par_chunks(PARALLEL_CHUNK))
        .enumerate()
        .map(|(c, ((oa, ob), m))| {
            let r = c * PARALLEL_CHUNK..c * PARALLEL_CHUNK + oa.len();
            let (ga, gb) = if g0_a.is_empty() { (g0_a, g0_b) } else { (&g0_a[r.clone()], &g0_b[r]) };
            serial(oa, ob, m, ga, gb)
        })
        .reduce(|| false, |a, b| a | b)
}

/// [`check_pairs`] on this thread. Zipped, so that no index is checked against a length in
/// the loop.
#[inline(always)]
fn check_pairs_serial<M>(
    oa: &mut [f64],
    ob: &mut [f64],
    ms: &[M],
    ga: &[f64],
    gb: &[f64],
    g: &impl PairG<M>,
) -> bool {
    let outs = ms.iter().zip(oa.iter_mut().zip(ob.iter_mut()));
    if ga.is_empty() {
        for (m, (oa, ob)) in outs {
            (*oa, *ob) = g.g(m);
        }
        return false;
    }
    let mut any = false;
    for ((m, (oa, ob)), (&a0, &b0)) in outs.zip(ga.iter().zip(gb)) {
        let (a, b) = g.g(m);
        any |= ((a > 0.0) != (a0 > 0.0)) | ((b > 0.0) != (b0 > 0.0));
        (*oa, *ob) = (a, b);
    }
    any
}

/// The two switching functions of a member of [`check_pairs`].
trait PairG<M>: Sync {
    fn g(&self, m: &M) -> (f64, f64);
}

impl<M, F: Fn(&M) -> (f64, f64) + Sync> PairG<M> for F {
    #[inline(always)]
    fn g(&self, m: &M) -> (f64, f64) {
        self(m)
    }
}

/// [`AlignedBoth`] members read at state `x`, with their `laws`.
struct BothG<'a> {
    laws: &'a [BothLaw],
    x: &'a [f64],
}

impl PairG<AlignedBoth> for BothG<'_> {
    #[inline(always)]
    fn g(&self, m: &AlignedBoth) -> (f64, f64) {
        m.g(&self.laws[m.law as usize], self.x)
    }
}

/// [`check`] on this thread.
#[inline]
fn check_serial<M>(out: &mut [f64], members: &[M], g0: &[f64], mut g: impl FnMut(&M) -> f64) -> bool {
    if g0.is_empty() {
        for (o, m) in out.iter_mut().zip(members) {
            *o = g(m);
        }
        return false;
    }
    let mut any = false;
    for ((o, m), &g0) in out.iter_mut().zip(members).zip(g0) {
        let g = g(m);
        any |= (g > 0.0) != (g0 > 0.0);
        *o = g;
    }
    any
}

/// The contact and stick–slip switching functions of impedance `i` at state `x` and time
/// `t` ([`Impedance::switchings`](crate::component::Impedance::switchings)).
fn switchings(sched: &Schedule, i: usize, x: &[f64], t: f64) -> [Option<f64>; 2] {
    let (sa, sb) = (sched.imp_slots[i], sched.imp_slots[i + 1]);
    let mut m = [Motion::REST; MAX_IMPEDANCE_PORTS];
    for (slot, m) in (sa..sb).zip(m.iter_mut()) {
        *m = sched.motion(&x[..sched.nx], slot);
    }
    let (m, y) = (&m[..(sb - sa).min(MAX_IMPEDANCE_PORTS)], &x[sched.imp_y[i]..sched.imp_y[i + 1]]);
    sched.imp[i].switchings(m, y, t)
}

/// One step of `sim` with its switches located (module doc).
pub(crate) fn step_located(sim: &mut Simulator) -> Result<()> {
    step_located_by(sim, sim.step_size())
}

/// [`step_located`] of length `step` (T, or a shortened step of the system FMU).
pub(crate) fn step_located_by(sim: &mut Simulator, step: f64) -> Result<()> {
    let Some(mut ev) = sim.events.take() else {
        return sim.span(sim.time(), step, true);
    };
    let r = located(sim, &mut ev, step);
    sim.events = Some(ev);
    r
}

fn located(sim: &mut Simulator, ev: &mut Events, step: f64) -> Result<()> {
    let (t0, k, par) = (sim.time(), sim.k, sim.is_parallel());
    ev.tau = sim.step_size();
    if ev.at_k != Some(k) {
        ev.eval(&sim.sched, &sim.x, t0, true, par);
    }
    // The whole step first; x(k) is kept in ev.x0 (a buffer swap, no copy). Every
    // (sub-)step runs with the admittances' sides locked where it starts, until the switch
    // is crossed: a stage past a band edge does not take the other side's rates, so the end
    // state is smooth in the step's length and shows the switch where the solution
    // reaches it.
    if ev.x0.len() != sim.x.len() {
        ev.x0 = vec![0.0; sim.x.len()];
    }
    let locked = Locked(ev.lockable.clone());
    locked.at(&ev.states, &sim.x);
    sim.span(t0, step, false)?;
    sim.swap_previous(&mut ev.x0);
    // The check sweeps the state the other way from the last stage, and the next stage the
    // other way from it (each starts on states the sweep before left in the cache).
    sim.sweep_back = !sim.sweep_back;
    ev.sweep_back = sim.sweep_back;
    let mut switch = ev.eval_reading(&sim.sched, &sim.x, t0 + step, false, par, true);
    ev.sweep_back = false;
    ev.credit = (ev.credit + CREDIT_PER_STEP).min(CREDIT_MAX);
    // `done`: the part of the step already taken; ev.x0 holds the state there.
    let mut done = 0.0;
    for _ in 0..MAX_SWITCHES {
        if !switch {
            return finish(sim, ev, k);
        }
        if ev.credit < (MAX_TRIALS + 2) as f64 {
            break;
        }
        let rest = step - done;
        // Bracket (lo, hi] of sub-step lengths: no switch by lo, a switch by hi.
        let (mut lo, mut hi) = (0.0, rest);
        if ev.g_lo.len() != ev.g0.len() {
            (ev.g_lo, ev.g_hi) = (vec![0.0; ev.g0.len()], vec![0.0; ev.g0.len()]);
        }
        ev.g_lo.copy_from_slice(&ev.g0);
        ev.g_hi.copy_from_slice(&ev.g);
        let scale = changed(ev).fold(0.0f64, |m, j| m.max(ev.g0[j].abs()).max(ev.g[j].abs()));
        // Illinois weights of the bracket ends.
        let (mut w_lo, mut w_hi, mut kept) = (1.0, 1.0, 0i8);
        for _ in 0..MAX_TRIALS {
            if hi - lo <= TOLERANCE * step {
                break;
            }
            let trial = falsi(ev, lo, hi, w_lo, w_hi, scale);
            sim.x.copy_from_slice(&ev.x0);
            sim.span(t0 + done, trial, false)?;
            let switch = ev.eval(&sim.sched, &sim.x, t0 + done + trial, false, par);
            (ev.credit, ev.counts.trials) = (ev.credit - 1.0, ev.counts.trials + 1);
            if switch {
                hi = trial;
                ev.g_hi.copy_from_slice(&ev.g);
                if changed(ev).all(|j| ev.g[j].abs() <= G_TOLERANCE * scale) {
                    break;
                }
                (w_hi, w_lo) = (1.0, if kept < 0 { w_lo * 0.5 } else { 1.0 });
                kept = -1;
            } else {
                lo = trial;
                ev.g_lo.copy_from_slice(&ev.g);
                (w_lo, w_hi) = (1.0, if kept > 0 { w_hi * 0.5 } else { 1.0 });
                kept = 1;
            }
        }
        sim.x.copy_from_slice(&ev.x0);
        if ev.jumps() {
            // A force or rate that jumps at the switch (a contact closing, a band edge): the
            // sub-step to just before it (all its stages, the last included, on the side it
            // started on), across it (at most 1e-9 T), then the rest of the step from there.
            // A search ended by |g| at `hi` has the switch within about G_TOLERANCE of hi:
            // the sub-step before it ends 1e-9 T short of hi.
            lo = lo.max(hi - TOLERANCE * step);
            if lo > 0.0 {
                sim.span(t0 + done, lo, false)?;
            }
            locked.release();
            sim.span(t0 + done + lo, hi - lo, false)?;
            done += hi;
            // Where |g| at hi was tiny, rounding can leave the end of these two sub-steps on
            // the side they started from: cross on by sub-steps of 1e-9 T until it is past
            // (else the switch would be inside the rest of the step, unseen).
            let mut past = ev.eval(&sim.sched, &sim.x, t0 + done, false, par);
            for _ in 0..MAX_CROSSINGS {
                if past || step - done <= TOLERANCE * step {
                    break;
                }
                let h = TOLERANCE * step;
                sim.span(t0 + done, h, false)?;
                done += h;
                past = ev.eval(&sim.sched, &sim.x, t0 + done, false, par);
            }
            // The admittances' state switches crossed: onto their surfaces
            // (`Admittance::on_switch`), and g there.
            let base = ev.state_base();
            let mut moved = false;
            for m in &ev.states {
                for j in 0..m.n {
                    let at = base + m.at + j;
                    if (ev.g0[at] > 0.0) != (ev.g[at] > 0.0) {
                        let x = &mut sim.x[m.x.0..m.x.1];
                        match m.of {
                            Owner::Adm(adm) => sim.sched.adm[adm].on_switch(j, x),
                            Owner::Imp { imp, .. } => sim.sched.imp[imp].on_switch(j, x),
                        }
                        moved = true;
                    }
                }
            }
            if moved {
                ev.eval(&sim.sched, &sim.x, t0 + done, false, par);
            }
            // g at the new sub-step's start.
            std::mem::swap(&mut ev.g0, &mut ev.g);
        } else {
            // A kink (the force continuous: a contact opening, a stick–slip switch): the
            // sub-step to just past it, the trial at `hi` again, and its g.
            locked.release();
            sim.span(t0 + done, hi, false)?;
            done += hi;
            ev.g0.copy_from_slice(&ev.g_hi);
        }
        (ev.credit, ev.counts.located) = (ev.credit - 2.0, ev.counts.located + 1);
        if step - done <= TOLERANCE * step {
            ev.g.copy_from_slice(&ev.g0);
            return finish(sim, ev, k);
        }
        ev.x0.copy_from_slice(&sim.x);
        locked.at(&ev.states, &ev.x0);
        sim.span(t0 + done, step - done, false)?;
        switch = ev.eval_reading(&sim.sched, &sim.x, t0 + step, false, par, true);
    }
    // More switches than MAX_SWITCHES, or no credit left: the rest of the step is taken
    // whole (as it already was by the last span, but unlocked: past the switch a stage
    // takes the rates of the side it is on).
    if switch {
        ev.counts.unlocated += 1;
        if !locked.0.is_empty() {
            locked.release();
            sim.x.copy_from_slice(&ev.x0);
            sim.span(t0 + done, step - done, false)?;
            ev.eval(&sim.sched, &sim.x, t0 + step, false, par);
        }
    }
    finish(sim, ev, k)
}

/// Discontinuity locking of the admittances with state switches
/// ([`Admittance::lock_sides`](crate::component::Admittance::lock_sides)): their sides are
/// locked by [`at`](Self::at) and released by [`release`](Self::release) or when this is
/// dropped (also on an error's early return). It holds `Events::lockable` (one count more
/// on it per step, no copy).
struct Locked(Lockable);

/// The components with state switches, in the order of `Events::states`.
type Lockable = std::sync::Arc<[Lockee]>;

/// A component whose sides a [`Locked`] guard locks.
enum Lockee {
    Adm(std::sync::Arc<dyn crate::component::Admittance>),
    Imp(std::sync::Arc<dyn crate::component::Impedance>),
}

impl Lockee {
    fn lock_sides(&self, x: Option<&[f64]>) {
        match self {
            Lockee::Adm(a) => a.lock_sides(x),
            Lockee::Imp(i) => i.lock_sides(x),
        }
    }
}

impl Locked {
    /// Lock each at its sides in the state `x`.
    fn at(&self, states: &[StateMember], x: &[f64]) {
        for (a, m) in self.0.iter().zip(states) {
            a.lock_sides(Some(&x[m.x.0..m.x.1]));
        }
    }

    fn release(&self) {
        for a in self.0.iter() {
            a.lock_sides(None);
        }
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        self.release();
    }
}

/// The members whose side at `ev.g` differs from that at `ev.g0`.
fn changed(ev: &Events) -> impl Iterator<Item = usize> + '_ {
    (0..ev.g0.len()).filter(|&j| (ev.g0[j] > 0.0) != (ev.g[j] > 0.0))
}

/// The step is taken: count it and keep g at x(k+1) for the next one.
fn finish(sim: &mut Simulator, ev: &mut Events, k: u64) -> Result<()> {
    sim.k = k + 1;
    // g is written again before it is next read: a swap instead of a copy.
    std::mem::swap(&mut ev.g0, &mut ev.g);
    ev.at_k = Some(k + 1);
    Ok(())
}

/// The next trial length in (lo, hi): regula falsi on the member whose linear
/// interpolation switches first, with the Illinois weights `w_lo`, `w_hi` on the ends
/// (a bracket end kept twice has its g halved), kept off the ends by 1/64 of the bracket;
/// members whose g stayed at its start value up to lo > 0 and is below the search's end
/// tolerance (`G_TOLERANCE`·`scale`) are left out.
fn falsi(ev: &Events, lo: f64, hi: f64, w_lo: f64, w_hi: f64, scale: f64) -> f64 {
    let width = hi - lo;
    let mut best = f64::INFINITY;
    let closes = ev.slip_with_contact();
    for (j, ((&a, &b), &s)) in ev.g_lo.iter().zip(&ev.g_hi).zip(&ev.g0).enumerate() {
        if (b > 0.0) == (s > 0.0) {
            continue;
        }
        // A stick–slip function whose contact switches in the bracket too jumps there (the
        // friction limit μ f_n appears with the contact): its interpolation says nothing
        // of where, and kept each trial near lo (the rolling sphere of Sim I: 60 trials, a
        // bracket of 1e-8 T, the switch mislocated).
        if let Some(c) = closes(j) {
            if (ev.g_hi[c] > 0.0) != (ev.g0[c] > 0.0) {
                continue;
            }
        }
        // A member that stayed on its switch up to lo > 0 (g there the same as at the
        // sub-step's start and negligible, as for the search's end: a Karnopp momentum held on
        // its band's edge until a breakaway) says nothing of where it crosses: its
        // interpolation would keep every trial 1/64 of the bracket from lo.
        if lo > 0.0 && a == s && a.abs() <= G_TOLERANCE * scale {
            continue;
        }
        let (a, b) = (w_lo * a, w_hi * b);
        let f = if a != b { a / (a - b) } else { 0.5 };
        if f.is_finite() {
            best = best.min(f.clamp(0.0, 1.0));
        }
    }
    let f = if best.is_finite() { best } else { 0.5 };
    lo + width * f.clamp(1.0 / 64.0, 63.0 / 64.0)
}

impl Simulator {
    /// Which switches the steps locate (`"solver": {"events": ...}`; all by default).
    pub fn locate(&mut self, which: Switches) {
        match which {
            Switches::All => {}
            Switches::None => self.events = None,
            Switches::Contacts => {
                if self.events.as_mut().is_some_and(|ev| !ev.contacts_only()) {
                    self.events = None;
                }
            }
        }
    }

    /// What the located steps did so far (`None` when the network locates no switches:
    /// not RK4, no contact with a switching function, or an imported FMU).
    pub fn contact_events(&self) -> Option<EventCounts> {
        self.events.as_ref().map(|e| e.counts)
    }

    /// For every impedance with a [switching function](crate::component::Impedance::switching),
    /// in schedule order: whether it pushes (g > 0) at the current state x(k). Lets a test
    /// tell the steps in which a contact opens or closes from the others.
    pub fn contact_sides(&self) -> Vec<bool> {
        let (s, t) = (&self.sched, self.time());
        (0..s.imp.len()).filter_map(|i| switchings(s, i, &self.x, t)[0]).map(|g| g > 0.0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An axis-aligned member gives the same g as the general affine form, bit for bit, at
    /// positions and velocities of either sign (zeros included); other normals are not
    /// aligned.
    #[test]
    fn aligned_switch_is_the_affine_switch_bit_for_bit() {
        let values = [-2.5e-4, -1.0, -0.0, 0.0, 3.0e-5, 0.7, 1.0e3];
        for c in 0..3 {
            let mut axis = Vector3::zeros();
            axis[c] = 1.0;
            let a = AffineSwitch { axis, level: 0.25, k: 1e5, b: 100.0 };
            let m = Aligned::of(&a, 0, 3).expect("a coordinate axis is aligned");
            for (i, &p) in values.iter().enumerate() {
                for &v in &values {
                    let x = [values[(i + 1) % 7], p, values[(i + 3) % 7], v, values[(i + 5) % 7], v];
                    let mut xa = x;
                    xa[c] = p;
                    xa[3 + c] = v;
                    let general = Affine { a, p: 0, v: 3 }.g(&xa);
                    assert_eq!(m.g(&xa).to_bits(), general.to_bits(), "axis {c}, p {p}, v {v}");
                }
            }
        }
        let skewed = AffineSwitch { axis: Vector3::new(0.6, 0.0, 0.8), level: 0.0, k: 1.0, b: 1.0 };
        let negative = AffineSwitch { axis: -Vector3::z(), level: 0.0, k: 1.0, b: 1.0 };
        assert!(Aligned::of(&skewed, 0, 3).is_none() && Aligned::of(&negative, 0, 3).is_none());
    }

    /// A chain's contacts read as a strided run give the same g and the same "changed"
    /// as member by member, bit for bit, on one part and in parallel parts; a run out of
    /// order, with two laws or reaching past the state is not strided.
    #[test]
    fn strided_contacts_read_the_same_bits_as_member_by_member() {
        let n = 2 * PARALLEL_CHUNK + 37;
        let nx = 6 * n;
        let member = |k: usize| AlignedBoth { law: 0, z: (6 * k + 2) as u32, v: (6 * k + 3) as u32, e: (nx + 2 * k) as u32 };
        let both: Vec<AlignedBoth> = (0..n).map(member).collect();
        let law = BothLaw { level: 0.0, k: 1e5, b: 100.0, mu: 0.5 };
        // Heights about the plane (some exactly on it), velocities and deflections of either sign.
        let x: Vec<f64> = (0..nx + 2 * n).map(|i| ((i * 7919 % 1013) as f64 - 506.0) * 1e-6 * if i % 11 == 0 { 0.0 } else { 1.0 }).collect();
        let run = Strided::of(&both, 1, nx, x.len()).expect("a chain's contacts are strided");
        let g0: Vec<f64> = (0..2 * n).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
        let (g0c, g0s) = g0.split_at(n);
        for (parallel, back) in [(false, false), (false, true), (true, false)] {
            let (mut a, mut b) = (vec![0.0; 2 * n], vec![0.0; 2 * n]);
            let (ac, as_) = a.split_at_mut(n);
            let (bc, bs) = b.split_at_mut(n);
            let strided = run.check(ac, as_, (g0c, g0s), parallel, back, &law, &x);
            let each = check_pairs(bc, bs, &both, g0c, g0s, parallel, |m: &AlignedBoth| m.g(&law, &x));
            assert_eq!(strided, each);
            assert!(a.iter().zip(&b).all(|(p, q)| p.to_bits() == q.to_bits()), "parallel {parallel}, back {back}");
        }
        // A change only at the first or the last member is seen either way.
        for (j, back) in [(0, true), (n - 1, false), (n - 1, true)] {
            let (mut c, mut s) = (vec![0.0; n], vec![0.0; n]);
            run.check(&mut c, &mut s, (&[], &[]), false, back, &law, &x);
            let (mut c0, s0) = (c.clone(), s.clone());
            c0[j] = -c0[j];
            if c0[j] == 0.0 {
                c0[j] = 1.0;
            }
            assert!(run.check(&mut c, &mut s, (&c0, &s0), false, back, &law, &x), "member {j}, back {back}");
        }
        let mut swapped = both.clone();
        swapped.swap(3, 4);
        assert_eq!(Strided::of(&swapped, 1, nx, x.len()), None);
        assert_eq!(Strided::of(&both, 2, nx, x.len()), None);
        assert_eq!(Strided::of(&both, 1, nx - 1, x.len()), None);
        assert_eq!(Strided::of(&both, 1, nx, x.len() - 1), None);
    }

    /// A horizontal plane contact's two switches read together give the same g as
    /// [`Aligned::g`] and [`AffineSlip::eval`], bit for bit, penetrating or not, pushing or
    /// pulling away, holding or sliding, at values of either sign (zeros included); a tilted
    /// plane or a slip switch on another port is not read so.
    #[test]
    fn aligned_slip_is_the_affine_slip_bit_for_bit() {
        let normal = AffineSwitch { axis: Vector3::z(), level: 0.01, k: 1e5, b: 200.0 };
        let a = AffineSlip { normal, t1: Vector3::x(), t2: Vector3::y(), mu: 0.5 };
        let contact = Aligned::of(&normal, 0, 3).expect("aligned");
        let (m, law) = AlignedBoth::of(&a, contact, 0, 3, 6).expect("horizontal");
        let values = [-2.5e-4, -1.0, -0.0, 0.0, 3.0e-5, 0.7, 1.0e3, 1e-2];
        let mut sides = [0; 2];
        for (i, &z) in values.iter().enumerate() {
            for (j, &vz) in values.iter().enumerate() {
                for &e in &values {
                    let (p, v) = (Vector3::new(values[(i + 1) % 8], values[(j + 2) % 8], z), Vector3::new(values[(i + j) % 8], -e, vz));
                    let x = [p.x, p.y, p.z, v.x, v.y, v.z, 1e-3 * e, -1e-4 * values[(i + 3) % 8]];
                    let g = a.eval(&p, &v, [x[6], x[7]]);
                    let (gc, gs) = m.g(&law, &x);
                    assert_eq!(gs.to_bits(), g.to_bits(), "p {p:?}, v {v:?}, e {:?}", &x[6..]);
                    assert_eq!(gc.to_bits(), contact.g(&x).to_bits(), "p {p:?}, v {v:?}");
                    sides[usize::from(g > 0.0)] += 1;
                }
            }
        }
        assert!(sides[0] > 0 && sides[1] > 0, "both sides: {sides:?}");
        let alone = m.normal(&law);
        assert_eq!((alone.level, alone.k, alone.b, alone.p, alone.v), (contact.level, contact.k, contact.b, contact.p, contact.v));
        let tilted = AffineSlip { t1: Vector3::new(0.8, 0.0, -0.6), ..a };
        assert!(AlignedBoth::of(&tilted, contact, 0, 3, 6).is_none());
        assert!(AlignedBoth::of(&a, contact, 6, 9, 12).is_none(), "another port");
    }
}
