//! Masses and bodies coupled implicitly with stiff held elements ([`Impedance::stage_law`],
//! [`Admittance::implicit_rate`]).
//!
//! A held I_fricK element (19) of spring K on a mass M is a stiff linear force under RK4:
//! its stage force f = K e + (B + τK) v is evaluated at the stage's motion, and RK4's step
//! map diverges once K T²/M is large (K = 1e7 on 1 kg at T = 1e-3). The element is implicit
//! in its own state (the τK), not in the mass's velocity. Where the stepper was told so
//! (`Impedance::held_frequency`'s `couple`, an element whose held spring RK4 would not
//! keep stable), each stage also gathers the
//! element's law on each mass, f = −gsat(F, w + c Δ) with c = B + τK (a [`StageLaw`]), and the
//! mass takes the rate that balances it at the stage's new velocity v + τ v̇
//! ([`StageLaw::implicit_rate`]), deciding there whether the element holds. While
//! it holds that is v̇ = (f_o − w)/(M + τ(B + τK)): the held state's step map is stable at
//! every K (spectral radius → 0.47 as K T²/M → ∞), and a mass at rest in equilibrium keeps
//! v̇ = 0, so static friction stays exact. Deciding stick or slip at the new velocity is
//! what lets a stop be caught: at the stage velocity alone the element holds only while
//! |v| < F/(τK), far finer than a stage's velocity change. A rigid body solves its stage with
//! all its coupled contacts at their levers ([`StageLaw::rigid_rates`]). Bodies joined by
//! coupled elements between them (boxes stacked on contacts) form a group whose stage is
//! solved as one system before the admittances' chunks run ([`group_rates`]): each
//! element's law is taken at the relative velocity change of its point.
//!
//! [`Impedance::stage_law`]: crate::component::Impedance::stage_law
//! [`Admittance::implicit_rate`]: crate::component::Admittance::implicit_rate

use crate::component::{Fault, PortLaws, StageLaw, MAX_IMPEDANCE_PORTS};
use crate::port::{Force, Motion};
use crate::schedule::Schedule;
use crate::views::SlotMotion;
use crate::stage_law::{group_rates, CrossMobility, Curve, GroupLaw, StageBody};
use petgraph::unionfind::UnionFind;
use nalgebra::Vector3;

/// The coupled impedances and the masses they hold, with the stage laws of the elements on
/// each mass port. Empty (and free) where nothing couples.
#[derive(Debug, Default)]
pub(crate) struct Coupling {
    /// The impedances that couple, in network order.
    imp: Vec<usize>,
    /// The admittances that hold a coupled element, in order.
    adm: Vec<usize>,
    /// The laws of the stage, grouped by admittance port.
    laws: Vec<StageLaw>,
    /// Per admittance port (the schedule's `adm_ports` numbering, one more entry): where its
    /// laws start in `laws`.
    starts: Vec<u32>,
    /// Per attached port of the coupled impedances, in the order `gather` meets them: its
    /// place in `laws`.
    places: Vec<u32>,
    /// Scratch: one impedance's port motions.
    motions: Vec<Motion>,
    /// Per place in `laws`: the place of the same element's law on its other body and that
    /// body's index within their group ([`NO_PARTNER`] where the element is not between
    /// two bodies of a group).
    partner: Vec<(u32, u32)>,
    /// The groups' bodies, group by group, each an admittance and the port whose laws it
    /// takes (a body's one port; each port of a robot that holds coupled laws is a point
    /// of its mechanism, the points of one admittance side by side), and where each group
    /// starts (one more entry).
    members: Vec<(usize, usize)>,
    group_starts: Vec<usize>,
    /// Per body of `members`: its port.
    ports: Vec<usize>,
    /// Per admittance of `adm`: its first place in `members` and how many (0: in no group).
    member_of: Vec<(u32, u32)>,
    /// Per body of `members`: its stage as the group's solve left it.
    solved: Vec<StageBody>,
}

/// The most times a group with set-valued members is solved in one stage
/// ([`Admittance::stage_mode`](crate::component::Admittance::stage_mode)).
const MAX_MODE_PASSES: usize = 8;

/// A member of a group whose response is set-valued ([`Admittance::stage_mode`](crate::component::Admittance::stage_mode)):
/// admittance `j`, its points in the group's members, the forces on its ports and the mode
/// of its explicit forces.
struct Modal {
    j: usize,
    points: std::ops::Range<usize>,
    phi: Vec<Force>,
    mode: usize,
}

/// The most combinations of modes a group with several set-valued members tries where the
/// modes its solutions select come round again.
const MAX_MODE_COMBINATIONS: usize = 625;

/// [`Coupling`]'s `partner` of a law with no partner in a group.
const NO_PARTNER: (u32, u32) = (u32::MAX, u32::MAX);

impl Coupling {
    /// The coupling of `s` after every impedance was told whether it may couple, at the
    /// initial state `x`.
    pub(crate) fn new(s: &Schedule, x: &[f64]) -> Coupling {
        let imp: Vec<usize> = (0..s.imp.len()).filter(|&i| s.imp[i].implicit_coupling()).collect();
        if imp.is_empty() {
            return Coupling::default();
        }
        let ports = *s.adm_ports.last().unwrap_or(&0);
        let mut count = vec![0u32; ports + 1];
        let mut held = vec![false; s.adm.len()];
        for &i in &imp {
            for (adm, port) in s.impedance_ports(i) {
                held[adm] = true;
                count[s.adm_ports[adm] + port + 1] += 1;
            }
        }
        let mut starts = count;
        for p in 0..ports {
            starts[p + 1] += starts[p];
        }
        let mut next = starts.clone();
        let mut places = Vec::new();
        for &i in &imp {
            for (adm, port) in s.impedance_ports(i) {
                let gp = s.adm_ports[adm] + port;
                places.push(next[gp]);
                next[gp] += 1;
            }
        }
        let adm: Vec<usize> = (0..s.adm.len()).filter(|&j| held[j]).collect();
        // The groups: bodies joined by an element between two of them that can both be
        // solved in a group (union–find over the admittances), each with the prescribed
        // motions its bodies' elements end on.
        let mut root = UnionFind::<usize>::new(s.adm.len());
        // A pair: the places of its body's law and of the other end's, the two admittances
        // and what the other end is.
        let mut pairs = Vec::new();
        let mut place = 0;
        // The ports of admittance j that hold coupled laws.
        let law_ports = |j: usize| {
            let pa = s.adm_ports[j];
            (pa..s.adm_ports[j + 1]).filter(|&q| starts[q + 1] > starts[q]).map(move |q| q - pa)
        };
        // An admittance of several ports (a robot) takes part through each of its ports that
        // holds coupled laws, every one of them a point of its mechanism (`mechanism`), or
        // through its one such port; else not at all (it solves its laws itself).
        let mechanism: Vec<bool> = (0..s.adm.len())
            .map(|j| law_ports(j).count() > 1 && s.mechanism_points(x, j, &law_ports(j).collect::<Vec<_>>()))
            .collect();
        let takes_part = |j: usize, port: usize| law_ports(j).all(|q| q == port) || mechanism[j];
        let end = |j: usize, port: usize| group_end(s, x, j, port).filter(|_| takes_part(j, port));
        for &i in &imp {
            let ends: Vec<(usize, usize)> = s.impedance_ports(i).collect();
            if let [(a, pa), (b, pb)] = ends[..] {
                match (end(a, pa), end(b, pb)) {
                    _ if a == b => {}
                    (Some(End::Body), Some(End::Body)) => {
                        pairs.push((place, place + 1, (a, pa), (b, pb), End::Body));
                        root.union(a, b);
                    }
                    (Some(End::Body), Some(End::Prescribed)) => pairs.push((place, place + 1, (a, pa), (b, pb), End::Prescribed)),
                    (Some(End::Prescribed), Some(End::Body)) => pairs.push((place + 1, place, (b, pb), (a, pa), End::Prescribed)),
                    _ => {}
                }
            }
            place += ends.len();
        }
        // (group, admittance, port) of every body; a mechanism's every point.
        let mut bodies: Vec<(usize, usize, usize)> = pairs.iter().map(|p| (root.find_mut(p.2 .0), p.2 .0, p.2 .1)).collect();
        bodies.extend(pairs.iter().filter(|p| p.4 == End::Body).map(|p| (root.find_mut(p.3 .0), p.3 .0, p.3 .1)));
        let points: Vec<(usize, usize, usize)> =
            bodies.iter().filter(|b| mechanism[b.1]).flat_map(|&(r, j, _)| law_ports(j).map(move |q| (r, j, q))).collect();
        bodies.extend(points);
        bodies.sort_unstable();
        bodies.dedup();
        // Per (group, admittance, port): its index within the group.
        let mut index: std::collections::HashMap<(usize, usize, usize), u32> = std::collections::HashMap::new();
        let (mut members, mut group_starts) = (Vec::new(), vec![0]);
        let mut member_of = vec![(u32::MAX, 0); adm.len()];
        for (n, &(r, j, port)) in bodies.iter().enumerate() {
            let start = group_starts[group_starts.len() - 1];
            index.insert((r, j, port), (members.len() - start) as u32);
            let of = &mut member_of[adm.partition_point(|&a| a < j)];
            if of.1 == 0 {
                of.0 = members.len() as u32;
            }
            of.1 += 1;
            members.push((j, port));
            if bodies.get(n + 1).is_none_or(|b| b.0 != r) {
                // The group's prescribed motions after its bodies.
                for p in pairs.iter().filter(|p| root.find_mut(p.2 .0) == r) {
                    if p.4 == End::Prescribed && !index.contains_key(&(r, p.3 .0, p.3 .1)) {
                        index.insert((r, p.3 .0, p.3 .1), (members.len() - start) as u32);
                        members.push(p.3);
                    }
                }
                group_starts.push(members.len());
            }
        }
        let mut partner = vec![NO_PARTNER; places.len()];
        for &(pa, pb, a, b, end_b) in &pairs {
            let r = root.find_mut(a.0);
            let (qa, qb) = (places[pa], places[pb]);
            partner[qa as usize] = (qb, index[&(r, b.0, b.1)]);
            if end_b == End::Body {
                partner[qb as usize] = (qa, index[&(r, a.0, a.1)]);
            }
        }
        let none = no_law();
        Coupling {
            laws: vec![none; places.len()],
            starts,
            places,
            motions: Vec::with_capacity(MAX_IMPEDANCE_PORTS),
            imp,
            partner,
            solved: vec![StageBody::point(1.0, Vector3::zeros(), Vector3::zeros()); members.len()],
            ports: members.iter().map(|m| m.1).collect(),
            members,
            group_starts,
            member_of,
            adm,
        }
    }

    /// Each group's stage solved together ([`group_rates`]) at the admittance states `xa`
    /// and the slot forces of the stage's impedances (its laws gathered): each body's
    /// explicit rates from its own `derivative`, then every body's accelerations, kept for
    /// [`apply`](Self::apply). The groups on the pool's threads where `parallel`. On a
    /// failing `derivative`, its admittance.
    pub(crate) fn solve_groups(
        &mut self,
        s: &Schedule,
        xa: &[f64],
        forces: (&[Vector3<f64>], &[Vector3<f64>]),
        t: f64,
        tau: f64,
        parallel: bool,
    ) -> Result<(), (usize, Fault)> {
        if self.members.is_empty() {
            return Ok(());
        }
        let mut solved = std::mem::take(&mut self.solved);
        let mut parts = Vec::with_capacity(self.group_starts.len());
        let mut rest = &mut solved[..];
        for w in self.group_starts.windows(2) {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
            parts.push((w[0], part));
            rest = tail;
        }
        let this = &*self;
        let one = |(start, out): &mut (usize, &mut [StageBody])| this.solve_group(s, xa, forces, t, tau, *start, out);
        let result = if parallel && parts.len() > 1 {
            use rayon::prelude::*;
            parts.par_iter_mut().try_for_each(one)
        } else {
            parts.iter_mut().try_for_each(one)
        };
        self.solved = solved;
        result
    }

    /// [`solve_groups`](Self::solve_groups) for the group whose bodies start at `start` in
    /// `members`, into `out` (one entry a member).
    #[allow(clippy::too_many_arguments)]
    fn solve_group(
        &self,
        s: &Schedule,
        xa: &[f64],
        (force, moment): (&[Vector3<f64>], &[Vector3<f64>]),
        t: f64,
        tau: f64,
        start: usize,
        out: &mut [StageBody],
    ) -> Result<(), (usize, Fault)> {
        // Sized once (no growth inside the loop): the group's laws, its largest port count and state.
        let members = &self.members[start..start + out.len()];
        let (mut nl, mut np, mut nx) = (0, 0, 0);
        for &(j, port) in members {
            let (pa, pb) = (s.adm_ports[j], s.adm_ports[j + 1]);
            nl += (self.starts[pa + port + 1] - self.starts[pa + port]) as usize;
            (np, nx) = (np.max(pb - pa), nx.max(s.adm_x[j + 1] - s.adm_x[j]));
        }
        // The laws of elements inside members (`Admittance::own_stage_law`), each with its body.
        let mut owns: Vec<(usize, StageLaw)> = Vec::new();
        let (mut phi, mut rates, mut laws) = (Vec::with_capacity(np), Vec::with_capacity(nx), Vec::with_capacity(nl));
        let mut cross = Vec::new();
        // The members whose response is set-valued (a gear): each with its port forces, the
        // range of its points in `members` and its mode (`Admittance::stage_mode`).
        let mut modal: Vec<Modal> = Vec::new();
        // No change on any port: the mode of the explicit forces.
        let mut none: Vec<Vector3<f64>> = Vec::with_capacity(np);
        for (m, &(j, port)) in members.iter().enumerate() {
            let pa = s.adm_ports[j];
            let x = &xa[s.adm_x[j]..s.adm_x[j + 1]];
            // A mechanism's next point: the same admittance's rates.
            let next_point = m > 0 && members[m - 1].0 == j;
            if !next_point {
                phi.clear();
                phi.resize(s.adm_ports[j + 1] - pa, Force::ZERO);
                s.scatter_phi(xa, force, moment, j..j + 1, &mut phi);
                rates.clear();
                rates.resize(x.len(), 0.0);
                s.adm[j].derivative(x, &phi, t, tau, &mut rates).map_err(|f| (j, f))?;
                none.clear();
                none.resize(phi.len(), Vector3::zeros());
                if let Some(mode) = s.adm[j].stage_mode(x, &phi, tau, &none) {
                    modal.push(Modal { j, points: m..m, phi: phi.clone(), mode });
                }
            }
            let body = match modal.last_mut().filter(|o| o.j == j) {
                Some(o) => {
                    o.points.end = m + 1;
                    s.adm[j].stage_mode_body(x, &phi, tau, o.mode, port)
                }
                None => match s.adm[j].own_stage_law(x, &phi, tau, port) {
                    Some((body, law)) => {
                        owns.push((m, law));
                        Some(body)
                    }
                    None => s.adm[j].stage_body(x, &rates, port),
                },
            };
            let Some(body) = body else { continue };
            out[m] = body;
            if body.prescribed {
                continue;
            }
            // The mobilities between this point and the mechanism's others (a set-valued
            // member's: its mode's, below).
            if body.mobility.is_some() && modal.last().is_none_or(|o| o.j != j) {
                for (k, &(_, from)) in members.iter().enumerate().filter(|&(k, o)| o.0 == j && k != m) {
                    if let Some(w) = s.adm[j].stage_mobility(x, port, from) {
                        cross.push(CrossMobility { body: m, from: k, w });
                    }
                }
            }
            for k in self.starts[pa + port] as usize..self.starts[pa + port + 1] as usize {
                let (q, other) = self.partner[k];
                let partner = (q != u32::MAX).then(|| (other as usize, self.laws[q as usize].point()));
                laws.push(GroupLaw { law: &self.laws[k], body: m, partner });
            }
        }
        laws.extend(owns.iter().map(|(m, law)| GroupLaw { law, body: *m, partner: None }));
        if modal.is_empty() {
            group_rates(out, &laws, &cross, tau);
            return Ok(());
        }
        // A set-valued member's mode is the one its forces at the solution select: solved
        // again from the explicit bodies with each member's mode so picked until the modes
        // agree (a stuck gear released, a sliding one stopped). Where the modes come round
        // again (one mode's solution selects a neighbour whose solution selects it back), every
        // other combination of the members' modes is tried, the first that selects itself
        // taken: within a combination the stage's solution is unique, so the solution's own
        // modes select themselves (where rounding on a mode's border leaves none, the last
        // tried stands; past MAX_MODE_COMBINATIONS, the last pass).
        let explicit: Vec<StageBody> = out.to_vec();
        let fixed = cross.len();
        let x_of = |j: usize| &xa[s.adm_x[j]..s.adm_x[j + 1]];
        // The group in the members' `modes`: their points' bodies and the mobilities between them.
        let set_modes = |out: &mut [StageBody], cross: &mut Vec<CrossMobility>, modes: &[usize]| {
            out.copy_from_slice(&explicit);
            cross.truncate(fixed);
            for (o, &mode) in modal.iter().zip(modes) {
                let x = x_of(o.j);
                for m in o.points.clone() {
                    let port = members[m].1;
                    if let Some(b) = s.adm[o.j].stage_mode_body(x, &o.phi, tau, mode, port) {
                        out[m] = b;
                    }
                    for k in o.points.clone().filter(|&k| k != m) {
                        if let Some(w) = s.adm[o.j].stage_mode_mobility(x, &o.phi, tau, mode, port, members[k].1) {
                            cross.push(CrossMobility { body: m, from: k, w });
                        }
                    }
                }
            }
        };
        // The mode each member's forces at the solution `out` select.
        let pick = |out: &[StageBody], o: &Modal| {
            let mut changes = vec![Vector3::zeros(); o.phi.len()];
            for m in o.points.clone() {
                if let Some(c) = changes.get_mut(members[m].1) {
                    *c = out[m].force;
                }
            }
            s.adm[o.j].stage_mode(x_of(o.j), &o.phi, tau, &changes)
        };
        let mut modes: Vec<usize> = modal.iter().map(|o| o.mode).collect();
        let mut seen: Vec<Vec<usize>> = Vec::new();
        for _ in 0..MAX_MODE_PASSES {
            set_modes(out, &mut cross, &modes);
            group_rates(out, &laws, &cross, tau);
            seen.push(modes.clone());
            let next: Vec<usize> = modal.iter().zip(&modes).map(|(o, &m)| pick(out, o).unwrap_or(m)).collect();
            if next == modes {
                return Ok(());
            }
            modes = next;
            if seen.contains(&modes) {
                break;
            }
        }
        // Every combination of the members' modes not yet tried (at most
        // MAX_MODE_COMBINATIONS: two gears' 25, one two-joint robot's 25), the first that
        // selects itself taken.
        let all: Vec<Vec<usize>> = modal.iter().map(|o| s.adm[o.j].stage_modes(x_of(o.j))).collect();
        let count = all.iter().try_fold(1usize, |n, m| n.checked_mul(m.len()));
        if count.is_some_and(|n| n > 0 && n <= MAX_MODE_COMBINATIONS) {
            let mut digits = vec![0; all.len()];
            'combinations: loop {
                let modes: Vec<usize> = all.iter().zip(&digits).map(|(m, &d)| m[d]).collect();
                if !seen.contains(&modes) {
                    set_modes(out, &mut cross, &modes);
                    group_rates(out, &laws, &cross, tau);
                    if modal.iter().zip(&modes).all(|(o, &m)| pick(out, o) == Some(m)) {
                        return Ok(());
                    }
                }
                // The next combination (the first member's mode the fastest digit).
                for (d, m) in digits.iter_mut().zip(&all) {
                    *d += 1;
                    if *d < m.len() {
                        continue 'combinations;
                    }
                    *d = 0;
                }
                break;
            }
        }
        Ok(())
    }

    /// Whether no element couples.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.imp.is_empty()
    }

    /// The coupled elements' laws of the stage at state `input` (admittances and impedance
    /// states) with stage step `tau`, their ports' motions read through `motions` (the
    /// stage's gathered frames).
    pub(crate) fn gather(&mut self, s: &Schedule, motions: &impl SlotMotion, input: &[f64], tau: f64) {
        let xa = &input[..s.nx];
        // Each element writes a law for every port (`Impedance::stage_law`), moved into its
        // place (the place's last law back into the buffer: no clone of a table's levels).
        let mut laws: [StageLaw; MAX_IMPEDANCE_PORTS] = std::array::from_fn(|_| no_law());
        let mut place = self.places.iter();
        for &i in &self.imp {
            self.motions.clear();
            self.motions.extend((s.imp_slots[i]..s.imp_slots[i + 1]).map(|slot| motions.motion(xa, slot)));
            let n = self.motions.len().min(MAX_IMPEDANCE_PORTS);
            s.imp[i].stage_law(&self.motions, &input[s.imp_y[i]..s.imp_y[i + 1]], tau, &mut laws[..n]);
            for (at, law) in s.impedance_attachments_iter(i).zip(&mut laws[..n]) {
                // A grounded port has no place.
                if at.is_none() {
                    continue;
                }
                if let Some(&k) = place.next() {
                    std::mem::swap(&mut self.laws[k as usize], law);
                }
            }
        }
    }

    /// The implicit rates of the coupled admittances among `members` (schedule indices),
    /// whose states start at `xa[0]` and whose rates `dx` start at the first member's; `phi`:
    /// the forces on the members' ports where the stage summed them (`Phi::Summed`), else
    /// summed here for each coupled admittance from the stage's slot forces.
    pub(crate) fn apply(&self, s: &Schedule, members: std::ops::Range<usize>, xa: &[f64], phi: Phi<'_>, tau: f64, dx: &mut [f64]) {
        let first = self.adm.partition_point(|&j| j < members.start);
        let x0 = s.adm_x[members.start];
        // A point body's batch sums its forces itself: summed here, on the stack for a body of
        // a few ports.
        let (mut own, mut many) = ([Force::ZERO; 4], Vec::new());
        for (k, &j) in self.adm.iter().enumerate().skip(first).take_while(|(_, &j)| j < members.end) {
            let (a, b) = (s.adm_x[j] - x0, s.adm_x[j + 1] - x0);
            let (pa, pb) = (s.adm_ports[j], s.adm_ports[j + 1]);
            let forces: &[Force] = match phi {
                Phi::Summed(phi) => &phi[pa - s.adm_ports[members.start]..pb - s.adm_ports[members.start]],
                Phi::Slots { xa: all, force, moment } => {
                    let buf = if pb - pa <= own.len() {
                        &mut own[..pb - pa]
                    } else {
                        many.resize(pb - pa, Force::ZERO);
                        &mut many[..]
                    };
                    s.scatter_phi(all, force, moment, j..j + 1, buf);
                    buf
                }
            };
            match self.member_of.get(k) {
                Some(&(first, count)) if count > 0 => {
                    let points = first as usize..(first + count) as usize;
                    let (ports, bodies) = (&self.ports[points.clone()], &self.solved[points]);
                    s.adm[j].set_stage_body(&xa[a..b], forces, tau, ports, bodies, &mut dx[a..b]);
                }
                _ => {
                    let laws = PortLaws::new(&self.laws, &self.starts[pa..=pb]);
                    s.adm[j].implicit_rate(&xa[a..b], forces, &laws, tau, &mut dx[a..b]);
                }
            }
        }
    }
}

/// The forces on the ports of a chunk of admittances ([`Coupling::apply`]): summed by the
/// stage (Φ of the chunk's ports), or to be summed from the slot forces (a batch that sums
/// its own, point bodies).
#[derive(Clone, Copy)]
pub(crate) enum Phi<'a> {
    Summed(&'a [Force]),
    Slots { xa: &'a [f64], force: &'a [Vector3<f64>], moment: &'a [Vector3<f64>] },
}

/// What an admittance is to a group ([`group_end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// A body whose stage the group solves.
    Body,
    /// A prescribed motion the group's elements end on.
    Prescribed,
}

/// What admittance `j`, through its port `port`, is to a group at state `x`
/// ([`Admittance::stage_body`]): `None` where it cannot take part.
///
/// [`Admittance::stage_body`]: crate::component::Admittance::stage_body
pub(crate) fn group_end(s: &Schedule, x: &[f64], j: usize, port: usize) -> Option<End> {
    let x = &x[s.adm_x[j]..s.adm_x[j + 1]];
    let body = s.adm[j].stage_body(x, &vec![0.0; x.len()], port)?;
    Some(if body.prescribed { End::Prescribed } else { End::Body })
}

/// A law that puts no force: a place not yet written, and a port an impedance left alone.
fn no_law() -> StageLaw {
    StageLaw::Friction { w: Vector3::zeros(), c: 0.0, level: 0.0, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat }
}
