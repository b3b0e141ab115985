//! The stepper: the modular RK4 of (13) with the stage step sizes of (21)/(22), and the
//! one-stage Euler special case (τ = T) that reproduces the papers' discrete-time
//! algorithms ((14), (20), (24), ...), both read from a [`Tableau`].
//! Sampling signals and the run loop are in [`crate::output`].
//!
//! One step reads like (13); `step` runs, per stage of the tableau, two phases, and each
//! phase runs the named parts of (13) on 64 members at a time:
//! ```text
//! for each stage r:  (t = kT + T_{r−1}, τ = T_r; stage 1 reads x(k), the others xs)
//!   impedances   gather Ψ   port motions from the stage state       (13d)  PortMotions
//!                evaluate   u, η = I(x̂, y, t; τ)                    (13e)/(22)
//!                combine    on η (below)
//!                (coupled)  stiff elements' stage laws per mass port        stepper/coupling.rs
//!   admittances  scatter Φ  forces summed per port, fixed order     (13f)  PortForces, scatter_phi
//!                evaluate   ξ = A(x, û, t; τ)                       (13g)
//!                (coupled)  the masses' implicit velocity rates             Admittance::implicit_rate
//!                combine    acc = Σ w_r·ξ_r                         (13j)
//!                offset     next xs = x(k) + T_r·ξ_r                (13b)/(13c)
//!                (last r)   x(k+1) = x(k) + T/Σw·acc, post_step     (13j)/(13l)
//! ```
//! `Combine` is the combine/offset part, fused into the phases while the rates are in
//! cache: as separate passes over the state vectors chain-10k took 1.35× as long. Every
//! phase walks the batches of the schedule ([`crate::batch`]); the parallel ones split the
//! component range with `split_run` (crate::parallel), so no sum crosses a part and the results are
//! bit-identical for any number of threads; after the first steps they cut it at equal
//! measured work (stepper/balance.rs). No step allocates.

use crate::component::MAX_IMPEDANCE_PORTS;
use crate::error::{Error, Result};
use crate::method::{Method, Tableau};
use crate::parallel::{split_run, Splits};
use crate::port::{Domain, Force, Layout, Motion};
use crate::schedule::Schedule;
use nalgebra::Vector3;

mod balance;
pub mod bus;
mod checkpoint;
mod codec;
mod coupling;
mod events;
mod phases;
use balance::Balance;
pub use checkpoint::{MAGIC as STATE_MAGIC, VERSION as STATE_VERSION};
pub use events::{EventCounts, Switches};

/// A running simulation: the compiled schedule and its buffers.
pub struct Simulator {
    pub(crate) sched: Schedule,
    method: Method,
    step: f64,
    pub(crate) k: u64,
    /// The time of step 0 plus what shortened steps took off T: time() = k·T + shift
    /// (0 for every run of `stiction run`; a system FMU started at t ≠ 0 or stepped off its
    /// grid: [`Simulator::step_short`]).
    shift: f64,
    /// x(k).
    pub(crate) x: Vec<f64>,
    /// Stage states (13b)/(13c), used in turn as the input and the output of a stage.
    xs: [Vec<f64>; 2],
    pub(crate) work: Work,
    threads: usize,
    split: Split,
    /// Contact switching within a step (stepper/events.rs), when the network has any.
    pub(crate) events: Option<Box<events::Events>>,
    /// The impedances whose `post_step` runs after each step (model B under RK4).
    imp_post: Vec<usize>,
    /// The admittances and impedances whose inputs have breaks (RK4 only): sub-steps end
    /// there.
    breaks: Vec<Breaking>,
    /// The state a span split at a break started from (kept for `swap_previous`).
    keep: Vec<f64>,
    /// Where parallel phases are cut (stepper/balance.rs).
    balance: Balance,
    /// The signals time functions read, written before the stages (stepper/bus.rs).
    pub(crate) bus: bus::Bus,
    /// Masses coupled implicitly with stiff held elements (stepper/coupling.rs).
    coupling: coupling::Coupling,
    /// Whether the last sweep over the state (a stage run block by block, a step's switching
    /// check) ran from its end to its start: each runs the other way from the one before,
    /// so that it starts on the states that one left in the cache (chain-10k: 3 %).
    pub(crate) sweep_back: bool,
}

/// A component whose inputs have breaks ([`Admittance::next_break`]).
#[derive(Clone, Copy, Debug)]
enum Breaking {
    Adm(usize),
    Imp(usize),
}

impl Breaking {
    fn next_break(self, s: &Schedule, t0: f64, t1: f64) -> Option<f64> {
        match self {
            Breaking::Adm(i) => s.adm[i].next_break(t0, t1),
            Breaking::Imp(i) => s.imp[i].next_break(t0, t1),
        }
    }
    fn set_window(self, s: &Schedule, t0: f64, t1: f64) {
        match self {
            Breaking::Adm(i) => s.adm[i].set_window(t0, t1),
            Breaking::Imp(i) => s.imp[i].set_window(t0, t1),
        }
    }
}

/// The buffers of a stage besides the stage state.
pub(crate) struct Work {
    /// ξ and η at the last probe (a step writes its rates into the stage buffers).
    pub(crate) rate: Vec<f64>,
    /// Σ w_r·ξ_r of (13j), accumulated stage by stage.
    acc: Vec<f64>,
    /// Force of every slot, as the impedance produced it.
    pub(crate) force: Vec<Vector3<f64>>,
    /// Moment of every slot; empty when no impedance port is a frame port.
    pub(crate) moment: Vec<Vector3<f64>>,
    /// Φ (13f): the total force on every admittance port, as the last probe delivered it
    /// (and a scratch for the per-component kind during a step).
    pub(crate) adm_forces: Vec<Force>,
    /// The motions of the schedule's frames at the stage state (`Schedule::gather_frames`).
    frames: Vec<Motion>,
}

/// Which state a stage reads.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// x(k): the first stage and `probe`.
    X,
    /// The stage state buffer the stage does not write.
    Stage,
}

/// Where a stage writes: a stage state buffer (the rates, then in place the next stage
/// state or x(k+1)), or the rate buffer (`probe`: the rates, kept for signals with Φ).
#[derive(Clone, Copy, Debug)]
enum Output {
    Stage0,
    Stage1,
    Rate,
}

/// The buffers of a stage, borrowed apart.
struct Buffers<'a> {
    input: &'a [f64],
    next: &'a mut [f64],
    x: &'a [f64],
    acc: &'a mut [f64],
    force: &'a mut [Vector3<f64>],
    moment: &'a mut [Vector3<f64>],
    adm_forces: &'a mut [Force],
    frames: &'a mut Vec<Motion>,
    sched: &'a Schedule,
    split: Split,
    balance: &'a mut Balance,
    coupling: &'a mut coupling::Coupling,
}

/// The vector operations of (13) on the rates ξ (and η) a stage has just computed, run by
/// each phase on its chunk of states while the rates are fresh (as separate passes over the
/// state vectors, chain-10k on 1 thread took 1.35× as long; see the commit log).
#[derive(Clone, Copy, Debug)]
enum Combine {
    /// `probe`: nothing.
    None,
    /// (13j) and (13b)/(13c): acc = ξ_r (`first`) or acc += w·ξ_r; the next stage state
    /// x(k) + c·ξ_r with c = T_r.
    Stage { first: bool, w: f64, c: f64 },
    /// (13j)/(13l): x(k+1) = x(k) + c·(acc + w·ξ_r), c = T/Σw.
    Last { w: f64, c: f64 },
    /// A one-stage method: x(k+1) = x(k) + c·ξ, c = T.
    Only { c: f64 },
}

impl Combine {
    /// Whether the output is x(k+1).
    fn ends_step(self) -> bool {
        matches!(self, Combine::Last { .. } | Combine::Only { .. })
    }

    /// Apply to one chunk: `x`, `acc`, `next` hold the same states, and `next` holds the
    /// rates ξ_r the stage has just written there; they are replaced by the stage's output
    /// in place (the rates need no buffer of their own during a step). Returns false if
    /// this ends the step and a new state is not finite.
    #[inline]
    fn apply(self, x: &[f64], acc: &mut [f64], next: &mut [f64]) -> bool {
        // Indexed loops over slices of one length: the compiler drops the bounds checks
        // and vectorises them.
        let n = next.len();
        let (x, acc) = (&x[..n], &mut acc[..n]);
        match self {
            Combine::None => {}
            Combine::Stage { first: true, c, .. } => {
                for i in 0..n {
                    let r = next[i];
                    acc[i] = r;
                    next[i] = x[i] + c * r;
                }
            }
            Combine::Stage { first: false, w, c } => {
                for i in 0..n {
                    let r = next[i];
                    acc[i] += w * r;
                    next[i] = x[i] + c * r;
                }
            }
            Combine::Last { w, c } => return map_finite(x, acc, next, |x, a, r| x + c * (a + w * r)),
            Combine::Only { c } => return map_finite(x, acc, next, |x, _, r| x + c * r),
        }
        true
    }
}

/// `next[i] = f(x[i], acc[i], next[i])` for every i (the three of one length); whether
/// every new value is finite. Each value v adds v·0 to one of four sums (0 if v is finite,
/// NaN if not), so the check is a multiply-add per value inside the vectorised loop instead
/// of a pass of its own.
#[inline(always)]
fn map_finite(x: &[f64], acc: &[f64], next: &mut [f64], f: impl Fn(f64, f64, f64) -> f64) -> bool {
    let mut z = [0.0f64; 4];
    let mut n4 = next.chunks_exact_mut(4);
    let (x4, a4) = (x.chunks_exact(4), acc.chunks_exact(4));
    let (xr, ar) = (x4.remainder(), a4.remainder());
    for ((n, x), a) in (&mut n4).zip(x4).zip(a4) {
        for j in 0..4 {
            let v = f(x[j], a[j], n[j]);
            n[j] = v;
            z[j] += v * 0.0;
        }
    }
    for ((n, &x), &a) in n4.into_remainder().iter_mut().zip(xr).zip(ar) {
        *n = f(x, a, *n);
        z[0] += *n * 0.0;
    }
    z.iter().all(|&z| z == 0.0)
}

/// Whether the phases of a step are split between threads.
#[derive(Clone, Copy, Debug)]
struct Split {
    parallel: bool,
    /// This step's chunks are timed (stepper/balance.rs).
    timing: bool,
}

/// Fewest components in a sequential part of a parallel phase.
const MIN_GRAIN: usize = 64;

/// The weight of a frame-port impedance in [`Simulator::set_parallel_threshold`]'s count:
/// per component and step, 50 stacks of boxes on body contacts take 0.45 µs, chain-10k's
/// point masses, plane contacts and springs 0.03 µs.
const FRAME_WEIGHT: usize = 10;

/// Default [`Simulator::set_parallel_threshold`]: below this many components a step runs
/// serially even with several threads, because forking costs more than it saves.
pub const PARALLEL_THRESHOLD: usize = 4096;

/// A break of an input closer than this fraction of a span to either of its ends does not
/// split it (no sub-step shorter than 1e-6 of a step, where τ would cancel digits).
const BREAK_TOLERANCE: f64 = 1e-6;

/// [`Impedance::held_frequency`](crate::component::Impedance::held_frequency) for every
/// impedance whose stuck spring adds τK per stage: the estimate Σ_ports (Σ K of the
/// stuck springs on the port)/M of the held system's largest squared frequency (exact for
/// one element between a mass and ground or two masses, Gershgorin's row sums along a
/// chain; the components keep a margin of twice the step on it), at the initial
/// state `x`, where every port is an admittance's only port and of a scalar or point domain
/// (a mass, a point mass); `None` elsewhere (nothing is computed where no stuck spring adds
/// τK).
fn tell_held_frequencies(s: &Schedule, x: &[f64], method: Method, step: f64, hold: Hold) {
    // Every end a body that takes the stage laws (stepper/coupling.rs) or a prescribed
    // motion, and an element between two bodies only where their group's stage is solved
    // together: each body solving its stage with the other at its stage motion, a stiff
    // contact solved so from both sides overshoots, opens and chatters (measured: a point on
    // a point on the floor, K = 1e8, T = 1e-3, bounced at mm/s with the normal force 0 to 40×
    // the weight).
    let couplable = |i: usize| {
        let takes = |&(adm, port): &(usize, usize)| s.adm[adm].takes_stage_laws(port);
        let bodies = s.impedance_ports(i).filter(takes).count();
        hold == Hold::Auto
            && bodies > 0
            && (bodies <= 1 || in_group(s, x, i))
            && s.impedance_ports(i).all(|p| takes(&p) || s.adm[p.0].prescribes_motion())
    };
    // Tell impedance i (and the batch's own copy of it).
    let tell = |i: usize, omega2: Option<f64>, couple: Option<f64>| {
        s.imp[i].held_frequency(method, step, omega2, couple);
        let g = s.imp_groups.partition_point(|g| g.start <= i);
        if let Some(g) = g.checked_sub(1).and_then(|g| s.imp_groups.get(g)).filter(|g| i < g.end) {
            g.batch.held_frequency(i - g.start, method, step, omega2, couple);
        }
    };
    let mut told = vec![None; s.imp.len()];
    let told_of = |c: &dyn crate::component::Impedance| c.stuck_spring().is_some_and(|k| k.implicit) || c.couples_explicit_spring();
    let mut any = s.imp.iter().any(|c| told_of(&**c));
    if any {
        let mut k_on = vec![0.0; *s.adm_ports.last().unwrap_or(&0)];
        for (i, c) in s.imp.iter().enumerate() {
            if let Some(spring) = c.stuck_spring() {
                for (adm, port) in s.impedance_ports(i) {
                    k_on[s.adm_ports[adm] + port] += spring.k;
                }
            }
        }
        for (i, c) in s.imp.iter().enumerate() {
            if !told_of(&**c) {
                continue;
            }
            let omega2 = s.impedance_ports(i).try_fold(0.0, |sum, (adm, port)| {
                let gp = s.adm_ports[adm] + port;
                // A mass only where the port is the admittance's only one (a robot's joints
                // are coupled through its inertia matrix: H_ii is no bound there).
                let single = s.adm_ports[adm + 1] - s.adm_ports[adm] == 1;
                let mass = match s.adm_port_domain[gp] {
                    Domain::Frame => None,
                    _ if !single => None,
                    _ => s.adm[adm].port_inertia(&x[s.adm_x[adm]..s.adm_x[adm + 1]], port),
                };
                mass.filter(|m| *m > 0.0).map(|m| sum + k_on[gp] / m)
            });
            let couple = if couplable(i) { coupling_frequency(s, x, i, &k_on) } else { None };
            tell(i, omega2, couple);
            told[i] = omega2;
        }
    }
    // Contacts whose group of bodies the explicit stages would not keep stable (their
    // continuous law, B ≥ T K/2, under RK4: the per-element estimate above does not judge
    // it, nor see a stack's rocking) are held implicitly with their bodies too: told ω̄² = ∞.
    // The groups are analysed (as `check` does) only where there is such a contact.
    let explicit = |i: usize| {
        let c = &s.imp[i];
        c.is_body_contact()
            && !c.implicit_coupling()
            && c.stuck_spring().is_some_and(|k| k.b >= 0.5 * step * k.k)
            && couplable(i)
    };
    let mut forced = Vec::new();
    if (0..s.imp.len()).any(explicit) {
        any = true;
        for i in crate::stability::unstable_group_contacts(s, x, method, step) {
            if explicit(i) {
                tell(i, told[i], Some(f64::INFINITY));
                forced.push(i);
            }
        }
        forced.sort_unstable();
    }
    // Joints' springs on the relative rotation of their bodies (a penalty joint's bending
    // spring and twist friction), on the bodies' rotational inertias.
    let moments = if s.has_moments { moment_frequencies(s, x) } else { Vec::new() };
    for &(i, omega2) in &moments {
        s.imp[i].held_moment_frequencies(method, step, omega2, couplable(i));
        any = true;
    }
    // A group too large to solve densely stays explicit: its elements between bodies are
    // told again, not to couple.
    if !any {
        return;
    }
    let mut joined: Vec<usize> = (0..s.imp.len()).filter(|&i| s.imp[i].implicit_coupling() && in_group(s, x, i)).collect();
    if joined.is_empty() {
        return;
    }
    // An admittance with coupled laws on several ports takes part in groups only where they
    // are points of its mechanism (stepper/coupling.rs); else an element between it and
    // another body would be solved from each end with the other at its stage motion (a gear
    // with stiff elements to bodies on both ports: 1.6 rad off): told again, not to couple.
    let mut law_ports: Vec<Vec<usize>> = vec![Vec::new(); s.adm.len()];
    for i in (0..s.imp.len()).filter(|&i| s.imp[i].implicit_coupling()) {
        for (adm, port) in s.impedance_ports(i) {
            if !law_ports[adm].contains(&port) {
                law_ports[adm].push(port);
            }
        }
    }
    let apart = |adm: usize| law_ports[adm].len() > 1 && !s.mechanism_points(x, adm, &law_ports[adm]);
    joined.retain(|&i| {
        let keep = !s.impedance_ports(i).any(|(adm, _)| apart(adm)) || forced.binary_search(&i).is_ok();
        if !keep {
            tell(i, told[i], None);
        }
        keep
    });
    let mut root = petgraph::unionfind::UnionFind::<usize>::new(s.adm.len());
    for &i in &joined {
        let mut ends = s.impedance_ports(i).map(|(adm, _)| adm);
        if let (Some(a), Some(b)) = (ends.next(), ends.next()) {
            root.union(a, b);
        }
    }
    let mut size = vec![0usize; s.adm.len()];
    for j in 0..s.adm.len() {
        size[root.find_mut(j)] += 1;
    }
    for &i in &joined {
        let Some((a, _)) = s.impedance_ports(i).next() else { continue };
        // (A contact coupled because its group was unstable keeps its coupling: explicit it
        // is unstable; its group, within check's 16 bodies, grew only by other couplings.)
        if size[root.find_mut(a)] > MAX_GROUP_BODIES && forced.binary_search(&i).is_err() {
            tell(i, told[i], None);
            if let Some(&(_, omega2)) = moments.iter().find(|(j, _)| *j == i) {
                s.imp[i].held_moment_frequencies(method, step, omega2, false);
            }
        }
    }
}

/// The most bodies a group joined by coupled elements between them may hold
/// (stepper/coupling.rs solves each group's stage densely, 6 unknowns a body).
pub const MAX_GROUP_BODIES: usize = 16;

/// Whether impedance `i` joins two bodies that can be solved in a group (stepper/coupling.rs).
fn in_group(s: &Schedule, x: &[f64], i: usize) -> bool {
    let ends: Vec<(usize, usize)> = s.impedance_ports(i).collect();
    let body = |(j, port)| coupling::group_end(s, x, j, port) == Some(coupling::End::Body);
    matches!(ends[..], [(a, pa), (b, pb)] if a != b && body((a, pa)) && body((b, pb)))
}

/// For impedance `i`, whose ports all take stage laws: Σ_ports (Σ K of the stuck springs on
/// the port)/M as [`tell_held_frequencies`]'s ω̄², with M a mass's inertia or, on a rigid
/// body's frame port, the smallest effective mass at the element's contact point (a body
/// contact's, else the point the port is attached at),
/// 1/M = 1/m + λ_max([r]ₓ I⁻¹ [r]ₓᵀ) (r from the centre of mass): the estimate on which the
/// element decides whether to couple implicitly (`Impedance::held_frequency`'s `couple`).
fn coupling_frequency(s: &Schedule, x: &[f64], i: usize, k_on: &[f64]) -> Option<f64> {
    let slots = s.impedance_attachments_iter(i).zip(s.imp_slots[i]..s.imp_slots[i + 1]);
    slots.filter_map(|(at, slot)| at.map(|at| (at, slot))).try_fold(0.0, |sum, ((adm, port), slot)| {
        // Asked only on a frame port: the motions are not gathered for the rest.
        let point = || {
            let contact = s.imp[i].stuck_contact(&s.impedance_motions(i, x)).map(|c| c.point);
            contact.or_else(|| Some(s.motion(&x[..s.nx], slot).p))
        };
        let gp = s.adm_ports[adm] + port;
        // A prescribed motion: an end of infinite inertia.
        if s.adm[adm].prescribes_motion() {
            return Some(sum);
        }
        let xs = &x[s.adm_x[adm]..s.adm_x[adm + 1]];
        let mass = match s.adm_port_domain[gp] {
            Domain::Frame => {
                let body = s.adm[adm].port_rigid_inertia(xs, port)?;
                let rx = (point()? - body.com).cross_matrix();
                let top = largest_eigenvalue(rx * body.inertia_inv * rx.transpose())?;
                1.0 / (1.0 / body.mass + top)
            }
            _ => s.adm[adm].coupling_inertia(xs, port)?,
        };
        (mass > 0.0).then(|| sum + k_on[gp] / mass)
    })
}

/// For each impedance with [held moments](crate::component::Impedance::held_moments) between
/// rigid bodies: ω̄² of its bending and its twist spring,
/// [`held_moment_frequencies`](crate::component::Impedance::held_moment_frequencies)'s
/// estimate, as [`tell_held_frequencies`]' for springs (Gershgorin's row sums along a chain
/// of joints): λ_max(P Σ_b K_b I_b⁻¹ P) and zᵀ (Σ_b K_b I_b⁻¹) z over the joint's bodies b,
/// K_b the sum of the bending (twist) stiffnesses of every such joint on body b, I_b⁻¹ its
/// world inverse inertia, P the projection normal to the axis z (a grounded port and a
/// prescribed motion add none). An impedance one of whose ports is not a rigid body, or
/// with none, is left out.
fn moment_frequencies(s: &Schedule, x: &[f64]) -> Vec<(usize, [f64; 2])> {
    use nalgebra::Matrix3;
    let held: Vec<(usize, crate::component::HeldMoments)> = (0..s.imp.len())
        .filter_map(|i| {
            let mut h = s.imp[i].held_moments()?;
            // The axis from its first port's frame into the world.
            h.axis = s.motion(&x[..s.nx], s.imp_slots[i]).rot * h.axis;
            Some((i, h))
        })
        .collect();
    if held.is_empty() {
        return Vec::new();
    }
    // Σ K over the joints on each admittance (the bending's, the twist's).
    let mut on = vec![[0.0f64; 2]; s.adm.len()];
    for (i, h) in &held {
        for (adm, _) in s.impedance_attachments_iter(*i).flatten() {
            on[adm][0] += h.bend.k;
            on[adm][1] += h.twist.k;
        }
    }
    let mut out = Vec::with_capacity(held.len());
    'joints: for (i, h) in held {
        let (mut bend, mut twist, mut bodies) = (Matrix3::zeros(), Matrix3::zeros(), 0);
        for (adm, port) in s.impedance_attachments_iter(i).flatten() {
            if s.adm[adm].prescribes_motion() {
                continue;
            }
            let Some(body) = s.adm[adm].port_rigid_inertia(&x[s.adm_x[adm]..s.adm_x[adm + 1]], port) else { continue 'joints };
            bend += body.inertia_inv * on[adm][0];
            twist += body.inertia_inv * on[adm][1];
            bodies += 1;
        }
        let z = h.axis;
        let normal = Matrix3::identity() - z * z.transpose();
        let Some(top) = largest_eigenvalue(normal * bend * normal) else { continue };
        if bodies > 0 {
            out.push((i, [top, z.dot(&(twist * z))]));
        }
    }
    out
}

/// The largest eigenvalue of a symmetric 3 × 3 matrix (≥ 0), `None` where it is not found.
fn largest_eigenvalue(m: nalgebra::Matrix3<f64>) -> Option<f64> {
    let eig = nalgebra::SymmetricEigen::try_new(m, f64::EPSILON, 100)?;
    Some(eig.eigenvalues.iter().fold(0.0f64, |m, v| m.max(*v)))
}

/// `"solver": {"hold": ...}`: whether stiff elements are held implicitly with the bodies they
/// act on where RK4's explicit stages would not keep their held springs stable
/// (stepper/coupling.rs): `"auto"` (the default), or `"explicit"` (never: every stage the
/// elements' own forms, `stiction check` warning where the step is too large for them).
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Hold {
    #[default]
    Auto,
    Explicit,
}

impl Simulator {
    /// Prepare to integrate `sched` with `method` and step `step` (> 0). `threads` is the
    /// number of rayon threads the caller will run it on (1 = strictly serial).
    pub fn new(sched: Schedule, method: Method, step: f64, threads: usize) -> Result<Simulator> {
        Self::with_hold(sched, method, step, threads, Hold::Auto)
    }

    /// [`new`](Self::new), with stiff elements held implicitly or not ([`Hold`]).
    pub fn with_hold(sched: Schedule, method: Method, step: f64, threads: usize, hold: Hold) -> Result<Simulator> {
        if !(step.is_finite() && step > 0.0) {
            return Err(Error::invalid("solver.step", format!("must be a positive number, got {step}")));
        }
        let x = sched.initial_state();
        let n = sched.n;
        let n_slots = sched.attach.len();
        let n_adm_ports = *sched.adm_ports.last().unwrap_or(&0);
        let threads = threads.max(1);
        let split = Split { parallel: false, timing: false };
        let mut sched = sched;
        // The batches' own copies of their members (framework/src/batch.rs), before they
        // are told the held frequencies (below).
        for g in &mut sched.imp_groups {
            g.batch.prepare(method, step).map_err(|(k, m)| {
                let name = sched.imp_names.get(g.start + k).map_or("", |n| n);
                Error::invalid(format!("components.{name}"), m)
            })?;
        }
        // The components prepared and the events found while the buffers are allocated
        // (on two threads when there are).
        let s = &sched;
        let (ready, (xs, work)) = crate::parallel::join(
            || {
                let adm = s.adm.iter().zip(&s.adm_names).map(|(c, n)| (c.prepare(method, step), n));
                let imp = s.imp.iter().zip(&s.imp_names).map(|(c, n)| (c.prepare(method, step), n));
                for (r, name) in adm.chain(imp) {
                    r.map_err(|m| Error::invalid(format!("components.{name}"), m))?;
                }
                if method != Method::Euler {
                    tell_held_frequencies(s, &x, method, step, hold);
                }
                let imp_post: Vec<usize> = (0..s.imp.len()).filter(|&i| s.imp[i].needs_post_step()).collect();
                let breaks = match method {
                    Method::Euler => Vec::new(),
                    _ => (s.adm.iter().enumerate().filter(|(_, c)| c.has_breaks()).map(|(i, _)| Breaking::Adm(i)))
                        .chain(s.imp.iter().enumerate().filter(|(_, c)| c.has_breaks()).map(|(i, _)| Breaking::Imp(i)))
                        .collect(),
                };
                Ok((events::Events::new(s, method, &x), imp_post, breaks))
            },
            || {
                let work = Work {
                    rate: vec![0.0; n],
                    acc: vec![0.0; n],
                    force: vec![Vector3::zeros(); n_slots],
                    moment: vec![Vector3::zeros(); if s.has_moments { n_slots } else { 0 }],
                    adm_forces: vec![Force::ZERO; n_adm_ports],
                    frames: Vec::with_capacity(s.frames.len()),
                };
                ([x.clone(), x.clone()], work)
            },
        );
        let (events, imp_post, breaks) = ready?;
        let coupling = coupling::Coupling::new(&sched, &x);
        let mut sim = Simulator {
            method,
            step,
            k: 0,
            shift: 0.0,
            xs,
            x,
            work,
            threads,
            split,
            sched,
            events,
            imp_post,
            breaks,
            keep: Vec::new(),
            balance: Balance::default(),
            bus: bus::Bus::default(),
            coupling,
            sweep_back: false,
        };
        sim.set_parallel_threshold(PARALLEL_THRESHOLD);
        Ok(sim)
    }

    /// Run the phases of a step in parallel only when the network has at least
    /// `components` admittances and impedances (and more than one thread was asked for).
    /// Results are bit-identical either way.
    pub fn set_parallel_threshold(&mut self, components: usize) {
        // A frame-port impedance (a contact between bodies, a joint) counts as FRAME_WEIGHT
        // components: it costs about ten point contacts per stage, so a scene of a few
        // hundred body contacts gains from two threads where a chain of as many points does not.
        let frames = if self.sched.has_moments {
            let frame = |l: &Layout| l.ports.iter().any(|p| p.domain == Domain::Frame);
            self.sched.imp_layouts.iter().filter(|l| frame(l)).count()
        } else {
            0
        };
        let total = self.sched.adm.len() + self.sched.imp.len() + (FRAME_WEIGHT - 1) * frames;
        self.split.parallel = self.threads > 1 && total >= components.max(1) && total > MIN_GRAIN;
        if self.split.parallel {
            self.balance.prepare(self.sched.imp.len(), self.sched.adm.len());
        }
    }

    /// Run `f` (a loop of steps) on this simulator while, if its phases run in parallel, the
    /// pool's other threads wait for them awake instead of falling asleep between phases
    /// (crate::parallel::awake). [`run`](Self::run) steps this way.
    pub fn with_threads_awake<R>(&mut self, f: impl FnOnce(&mut Simulator) -> R) -> R {
        crate::parallel::awake(self.split.parallel, || f(self))
    }

    /// Whether the phases of a step run in parallel.
    pub fn is_parallel(&self) -> bool {
        self.split.parallel
    }

    /// In how many blocks a stage runs on one thread, each block's impedances then its
    /// admittances (so that the slot forces they sum are still in the cache); 0 where it
    /// runs phase by phase (in parallel, with elements held with their bodies, or in a
    /// network too small or whose order has no such plan).
    pub fn stage_blocks(&self) -> usize {
        if self.runs_blocked(Output::Stage0) {
            self.sched.stage_blocks.len()
        } else {
            0
        }
    }

    /// Current time kT.
    pub fn time(&self) -> f64 {
        match self.bus.end {
            // A shortened last step (stepper/bus.rs) ends at the stop time itself.
            Some((k, stop, _)) if self.k >= k => stop,
            _ => self.k as f64 * self.step + self.shift,
        }
    }

    /// What [`time`](Self::time) adds to k·T (see `shift`).
    pub fn time_shift(&self) -> f64 {
        self.shift
    }

    /// Set what [`time`](Self::time) adds to k·T: before the first step, the start time
    /// (time functions then see absolute time from there); after a restored state, the
    /// shift saved with it.
    pub fn set_time_shift(&mut self, shift: f64) {
        self.shift = shift;
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
        if let Some(ev) = &mut self.events {
            ev.forget();
        }
        &mut self.x
    }

    /// The compiled schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.sched
    }

    /// Write the signals time functions read for the state x(k) (the step's first stage
    /// and an output instant see the same values).
    pub(crate) fn write_signals_at_x(&mut self) -> Result<()> {
        if !self.bus.is_empty() {
            self.write_held()?;
            self.write_stage(&self.x, self.time());
        }
        Ok(())
    }

    /// Advance one step of size T: the stages of the method's tableau, (13).
    pub fn step(&mut self) -> Result<()> {
        if !self.bus.is_empty() {
            self.begin_step()?;
        }
        self.split.timing = self.split.parallel && self.balance.timing();
        let stepped =
            if self.events.is_some() { events::step_located(self) } else { self.span(self.time(), self.step, true) };
        if std::mem::take(&mut self.split.timing) && stepped.is_ok() {
            self.balance.step_timed();
        }
        stepped
    }

    /// One step of length `h` shorter than T (0 < h < T), counted as a step: the stages of
    /// (13) with the stage sizes τ of h, switches located as in a step of T; time goes on
    /// from t + h (the shift grows by h − T). A Co-Simulation master's communication point
    /// between two solver steps is reached this way (the system FMU). Signal blocks advance
    /// by h too; one that cannot take a variable step is refused, named.
    pub fn step_short(&mut self, h: f64) -> Result<()> {
        if !(h > 0.0 && h < self.step) {
            return Err(Error::Invalid {
                path: "step".into(),
                message: format!("a shortened step of {h} s is not in (0, T = {} s)", self.step),
            });
        }
        let fixed: Vec<&str> = (0..self.sched.blocks.len())
            .filter(|&b| !self.sched.blocks[b].variable_step())
            .map(|b| &self.sched.block_names[b])
            .collect();
        if !fixed.is_empty() {
            return Err(Error::Invalid {
                path: "step".into(),
                message: format!(
                    "a step of {h} s, shorter than T = {} s: the signal blocks {} advance by whole steps of T only \
                     (canHandleVariableCommunicationStepSize is false)",
                    self.step,
                    fixed.join(", ")
                ),
            });
        }
        if !self.bus.is_empty() {
            // The blocks advance by h too.
            self.bus.short = Some(h);
            let begun = self.begin_step();
            self.bus.short = None;
            begun?;
        }
        let stepped =
            if self.events.is_some() { events::step_located_by(self, h) } else { self.span(self.time(), h, true) };
        self.shift += h - self.step;
        stepped
    }

    /// The stages of one step of size `h` from time `t0` on x(k) (x(k+1) replaces it);
    /// `count`: the step ends at (k+1)T (k advances), else it is a sub-step (stepper/events.rs).
    /// Under RK4 a span ends a sub-step at each break of a component's inputs inside it
    /// (a table's row, a piecewise `until`; [`Admittance::next_break`]), and tells those
    /// components each sub-step's window: RK4's stages then integrate smooth inputs only
    /// (fourth order through a velocity table's kink). As for any span, the buffer
    /// [`swap_previous`](Self::swap_previous) hands over holds the state it started from.
    pub(crate) fn span(&mut self, t0: f64, h: f64, count: bool) -> Result<()> {
        if self.breaks.is_empty() {
            return self.stages(t0, h, count);
        }
        let (end, near) = (t0 + h, BREAK_TOLERANCE * h);
        let mut from = t0;
        loop {
            let s = &self.sched;
            let next = self.breaks.iter().filter_map(|b| b.next_break(s, from + near, end - near)).reduce(f64::min);
            let to = next.unwrap_or(end);
            for b in &self.breaks {
                b.set_window(s, from, to);
            }
            // A state that tracks an input starts a sub-step at its break on the new side.
            for &b in &self.breaks {
                if let Breaking::Adm(i) = b {
                    if from != t0 || b.next_break(&self.sched, from - near, from + near).is_some() {
                        let (x0, x1) = (self.sched.adm_x[i], self.sched.adm_x[i + 1]);
                        self.sched.adm[i].at_break(&mut self.x[x0..x1]);
                    }
                }
            }
            // The sub-step's length from its ends, as ever; but an h below an ulp of t0 (a
            // located switch's last sub-step) gives to − from = 0, and its stages then had
            // τ = 0: what is left of h instead.
            let length = match to - from {
                l if l > 0.0 => l,
                _ => (t0 - from) + h,
            };
            self.stages(from, length, count && next.is_none())?;
            let last = self.method.tableau().stages() - 1;
            match next {
                Some(_) if from == t0 => {
                    self.keep.clear();
                    self.keep.extend_from_slice(&self.xs[last % 2]);
                }
                None if from != t0 => std::mem::swap(&mut self.keep, &mut self.xs[last % 2]),
                _ => {}
            }
            if next.is_none() {
                // Outside a span (a probe, the signals at x(k)) the functions' own values.
                for b in &self.breaks {
                    b.set_window(&self.sched, f64::NAN, f64::NAN);
                }
                return Ok(());
            }
            from = to;
        }
    }

    /// [`span`](Self::span) without breaks: the stages of the method's tableau.
    fn stages(&mut self, t0: f64, h: f64, count: bool) -> Result<()> {
        let tab: &Tableau = self.method.tableau();
        let last = tab.stages() - 1;
        for r in 0..=last {
            let (t, tau) = (t0 + tab.offset[r] * h, tab.tau[r] * h);
            let combine = match r {
                _ if last == 0 => Combine::Only { c: h },
                _ if r == last => Combine::Last { w: tab.weight[r], c: h / tab.weight_sum },
                _ => Combine::Stage { first: r == 0, w: tab.weight[r], c: tab.offset[r + 1] * h },
            };
            // Stage r reads x(k) or the stage state the stage before wrote, and writes the
            // next stage state or x(k+1) into the other buffer.
            let (input, buf) = if r == 0 { (Input::X, 0) } else { (Input::Stage, r % 2) };
            if !self.bus.is_empty() {
                // The signals the stage's time functions read, from the state it reads.
                self.write_stage(if r == 0 { &self.x } else { &self.xs[1 - buf] }, t);
            }
            let out = if buf == 0 { Output::Stage0 } else { Output::Stage1 };
            let finite = if self.runs_blocked(out) {
                self.blocked(input, t, tau, combine, out)?
            } else {
                self.impedances(input, t, tau, combine, out)? & self.admittances(input, t, tau, combine, out)?
            };
            if r == last {
                std::mem::swap(&mut self.x, &mut self.xs[buf]);
                for &i in &self.imp_post {
                    self.sched.imp[i].post_step(&mut self.x[self.sched.imp_y[i]..self.sched.imp_y[i + 1]]);
                }
                self.k += count as u64;
                if !finite {
                    return Err(self.non_finite());
                }
            }
        }
        Ok(())
    }

    /// After [`span`](Self::span): swap `buf` (of the state's length) with the buffer that
    /// holds the state the span started from (stepper/events.rs keeps it to step again).
    pub(crate) fn swap_previous(&mut self, buf: &mut Vec<f64>) {
        let last = self.method.tableau().stages() - 1;
        std::mem::swap(buf, &mut self.xs[last % 2]);
    }

    /// The buffers of a stage that reads `input` and writes `out`.
    fn buffers(&mut self, input: Input, out: Output) -> Buffers<'_> {
        let Simulator { sched, x, xs, work, split, balance, coupling, .. } = self;
        let Work { rate, acc, force, moment, adm_forces, frames } = work;
        let [a, b] = xs;
        let (input, next): (&[f64], &mut [f64]) = match (input, out) {
            (Input::X, Output::Rate) => (&x[..], &mut rate[..]),
            (Input::X, Output::Stage0) => (&x[..], &mut a[..]),
            (Input::X, Output::Stage1) => (&x[..], &mut b[..]),
            (Input::Stage, Output::Stage0) => (&b[..], &mut a[..]),
            (Input::Stage, _) => (&a[..], &mut b[..]),
        };
        Buffers { input, next, x: &x[..], acc, force, moment, adm_forces, frames, sched, split: *split, balance, coupling }
    }

    /// (13d)/(13e): the impedances' batches, [`CHUNK`](crate::schedule::CHUNK) members at a time, gather the motions
    /// Ψ of their ports from the admittance states of `input` (on demand, see
    /// [`PortMotions`](crate::views::PortMotions)) and evaluate them into slot forces and
    /// the rates η, which they write into `out`; then, while η is fresh, `combine` turns
    /// them into their states of the stage's output in place. Returns false if `combine`
    /// ends the step and a new state is not finite.
    fn impedances(&mut self, input: Input, t: f64, tau: f64, combine: Combine, out: Output) -> Result<bool> {
        let Buffers { input, next, x, acc, force, moment, frames, sched, split, balance, coupling, .. } =
            self.buffers(input, out);
        let nx = sched.nx;
        let gathered = phases::gather(sched, input, frames, coupling, tau);
        let (cost, work) = balance.impedances(split.timing);
        let (xa, xy) = input.split_at(nx);
        let stage = phases::ImpStage {
            sched,
            xa,
            xy,
            x_y: &x[nx..],
            gathered: &gathered,
            t,
            tau,
            combine,
            timing: split.timing,
        };
        let all = 0..sched.imp.len();
        let parts = phases::imp_parts(sched, all.clone(), force, moment, acc, next, cost);
        split_run(all, parts, Splits::new(split.parallel, MIN_GRAIN).by_work(work), &|r, p| stage.leaf(r, p))
            .map_err(|(i, f)| Error::Simulation { time: t, component: sched.imp_names[i].to_string(), message: f.0 })
    }

    /// (13f)/(13g): the admittances sum the slot forces on their ports (Φ, in the schedule's
    /// fixed order, with the moments of offset attachments), [`CHUNK`](crate::schedule::CHUNK) at a time, and their
    /// batches evaluate the rates ξ at the admittance states of `input` into `out`; then,
    /// while ξ is fresh, `combine` turns them into their states of the stage's output in
    /// place (with `post_step` when it ends the step). Φ is kept for signals when `out` is
    /// the rate buffer (a probe). Returns false if `combine` ends the step and a new state
    /// is not finite.
    fn admittances(&mut self, input: Input, t: f64, tau: f64, combine: Combine, out: Output) -> Result<bool> {
        let keep = matches!(out, Output::Rate);
        let Buffers { input, next, x, acc, force, moment, adm_forces, sched, split, balance, coupling, .. } =
            self.buffers(input, out);
        let xa = &input[..sched.nx];
        coupling
            .solve_groups(sched, xa, (&force[..], &moment[..]), t, tau, split.parallel)
            .map_err(|(j, f)| Error::Simulation { time: t, component: sched.adm_names[j].to_string(), message: f.0 })?;
        let coupling = (!coupling.is_empty()).then_some(&*coupling);
        let (cost, work) = balance.admittances(split.timing);
        let stage =
            phases::AdmStage { sched, xa, x_a: &x[..sched.nx], coupling, keep, t, tau, combine, timing: split.timing };
        let all = 0..sched.adm.len();
        let parts = phases::adm_parts(sched, all.clone(), adm_forces, acc, next, cost);
        let (force, moment) = (&force[..], &moment[..]);
        split_run(all, parts, Splits::new(split.parallel, MIN_GRAIN).by_work(work), &|r, p| {
            stage.leaf(r, p, force, moment)
        })
        .map_err(|(j, f)| Error::Simulation {
            time: t,
            component: sched.adm_names[j].to_string(),
            message: f.0,
        })
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
            s.adm_names.get(j).map(str::to_string).unwrap_or_default()
        } else {
            let i = s.imp_y.partition_point(|&o| o <= index).saturating_sub(1);
            s.imp_names.get(i).map(str::to_string).unwrap_or_default()
        }
    }

    /// Evaluate every component at the current state with τ = T (the Euler form (20)) so
    /// that forces (Φ included) and rates are available to signals. Does not change the state.
    pub fn probe(&mut self) -> Result<()> {
        let (t, h) = (self.time(), self.step);
        self.write_signals_at_x()?;
        self.impedances(Input::X, t, h, Combine::None, Output::Rate)?;
        self.admittances(Input::X, t, h, Combine::None, Output::Rate)?;
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

#[cfg(test)]
mod tests {
    use super::map_finite;

    /// The fused finiteness check sees a NaN or an infinity in any lane of the vectorised
    /// part and in the remainder, and passes finite values of any sign (−0 included).
    #[test]
    fn map_finite_finds_every_non_finite_value() {
        for n in [1usize, 3, 4, 7, 8, 11] {
            let x: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { -0.0 } else { -1.5e300 }).collect();
            let acc = vec![0.0; n];
            let mut next = x.clone();
            assert!(map_finite(&x, &acc, &mut next, |x, _, _| x), "n {n}: all finite");
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                for at in 0..n {
                    let mut next: Vec<f64> = (0..n).map(|i| if i == at { 0.0 } else { 1.0 }).collect();
                    let ok = map_finite(&x, &acc, &mut next, |x, _, r| if r == 0.0 { bad } else { x });
                    assert!(!ok, "n {n}: {bad} at {at} not seen");
                    assert!(next[at].is_nan() || next[at].is_infinite());
                }
            }
        }
        // Values whose products with 0 are −0 or +0 still pass; an overflow to ∞ does not.
        let x = [f64::MAX, -f64::MAX, 1e-320, -1e-320, 5.0];
        let mut next = [0.0; 5];
        assert!(map_finite(&x, &[0.0; 5], &mut next, |x, _, _| x));
        assert!(!map_finite(&x, &[0.0; 5], &mut next, |x, _, _| x * 2.0));
    }
}
