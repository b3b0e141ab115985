//! Bodies held by contacts, analysed together (issue 43): every group of bodies joined by
//! contacts — a box on its four corners, a stack of boxes, a grasped part — is one linear
//! system in all the bodies' degrees of freedom, each contact a spring–damper at its
//! contact point.
//!
//! A contact at point x with normal n between bodies a and b presents, while it holds, the
//! force −K u − (B + τK_implicit P) u̇ on a (the opposite on b), u the relative displacement
//! of the two material points at x and P = I − n nᵀ the tangent plane: the penalty normal
//! spring K and damper B of (23a), and the held tangential element of (23b)–(23d) (spring K,
//! damper B, plus τK where its stage form carries the implicit step of (19), under
//! `"method": "euler"`). A rigid body moves its point x by δp + δθ × r, r = x − c, so
//! u = G_a q_a − G_b q_b with G = [I₃, −\[r\]ₓ] (a point mass: G = I₃), and the group is
//!
//! ```text
//!   M v̇ = −(Σ Gᵀ K G) q − (Σ Gᵀ (B + τ K_implicit P) G) v,   q̇ = v  (or v + τ v̇)
//! ```
//!
//! with M = diag(m I₃, I) per body (world inertia). The normal, tangential and rocking
//! modes of every body and the modes of bodies against each other are all in it, which the
//! per-port and per-pair models of the parent module only bound: a box on four corners
//! turning about its normal against the τK of its tangential elements, a stack rocking as a
//! whole. The step map is composed stage by stage from the method's [`Tableau`] as for the
//! other models; its spectral radius above 1 means the held state vibrates and grows.
//!
//! The geometric terms of the preload (the normal force turning with the bodies) are left
//! out: they are the contact force times a lever, against K times a lever squared.

use super::spectral_radius;
use crate::component::{RigidInertia, StageSpring};
use crate::method::{Method, Tableau};
use crate::port::Domain;
use crate::schedule::Schedule;
use nalgebra::{Complex, DMatrix, Matrix3, Vector3};

/// A group larger than this (degrees of freedom) is left to the pair and port models: its
/// step map (twice this size) would cost too much per trial step.
pub const MAX_GROUP_DOFS: usize = 96;

/// Margin on ρ = 1 for a group: a body whose contacts leave a motion free (a sphere's
/// spin on one contact) has the eigenvalue 1 of that free motion, computed within rounding
/// of a defective pair (√ε), which a growth of 1e-6 per step is not.
const GROUP_RADIUS: f64 = 1.0 + 1e-6;

/// Relative precision of the largest stable step of a group (the bisection stops there).
const STEP_PRECISION: f64 = 1e-4;

/// One body of a group: an admittance port with its inertia.
#[derive(Clone, Debug)]
pub struct Body {
    /// (admittance, port).
    pub port: (usize, usize),
    /// Mass and, for a rigid body, world inverse inertia and centre of mass.
    pub inertia: BodyInertia,
    /// q̇ = v + τ v̇ for this body.
    pub implicit_position: bool,
    /// First degree of freedom of the body in the group.
    offset: usize,
}

/// The inertia of a group body.
#[derive(Clone, Debug)]
pub enum BodyInertia {
    Rigid(RigidInertia),
    Point(f64),
}

impl BodyInertia {
    fn dofs(&self) -> usize {
        match self {
            BodyInertia::Rigid(_) => 6,
            BodyInertia::Point(_) => 3,
        }
    }
}

/// A contact of a group: the impedance, its spring and point, and the bodies at its ends
/// (index into the group's bodies; `None` for ground or a port outside the analysis).
#[derive(Clone, Debug)]
pub struct GroupContact {
    pub imp: usize,
    pub spring: StageSpring,
    pub point: Vector3<f64>,
    pub normal: Vector3<f64>,
    pub ends: [Option<usize>; 2],
}

/// A group of bodies joined by contacts, linearised in the held state.
#[derive(Clone, Debug)]
pub struct GroupModel {
    pub bodies: Vec<Body>,
    pub contacts: Vec<GroupContact>,
    /// Springs on a body without a contact point (its other attachments, far ends held):
    /// (body, spring) on its translation.
    pub held: Vec<(usize, StageSpring)>,
    /// −M⁻¹K, −M⁻¹B, −M⁻¹K_implicit (the τ-part of the damping).
    a: DMatrix<f64>,
    d0: DMatrix<f64>,
    d1: DMatrix<f64>,
    /// Per degree of freedom of the model: q̇ = v + τ v̇.
    implicit_rows: Vec<bool>,
    /// Where contacts are held implicitly with their bodies ([`StageSpring::coupled`]): the
    /// stage's inertia depends on τ, and the rate is formed per stage.
    coupled: Option<Box<CoupledStage>>,
    /// The eigenvalues of the stage rate where it does not depend on τ ([`Self::rate_eigenvalues`]).
    eigenvalues: std::sync::OnceLock<Option<Vec<Complex<f64>>>>,
}

/// The matrices of a group with contacts held implicitly with their bodies: the bodies'
/// stage takes the coupled contacts' damping B + τK on their relative motion, as the
/// stepper's group solve does (stepper/coupling.rs, stage_law/group.rs), so that
/// (M + τ D₀ + τ² D₁) v̇ = −K q − (C₀ + τ C₁) v, D = Σ Gᵀ (B, K) G over the coupled contacts.
#[derive(Clone, Debug)]
struct CoupledStage {
    mass: DMatrix<f64>,
    k: DMatrix<f64>,
    c0: DMatrix<f64>,
    c1: DMatrix<f64>,
    /// Σ Gᵀ B G and Σ Gᵀ K G over the coupled contacts.
    d0: DMatrix<f64>,
    d1: DMatrix<f64>,
}

/// The basis R' of the motions resisted by the symmetric positive semi-definite `s` (the sum
/// of the stiffness and damping matrices), M-orthogonal to the free ones (its null space Z):
/// R' = R − Z (ZᵀMZ)⁻¹ ZᵀM R, R and Z from the eigenvectors of `s` above and below
/// 1e-12 of its largest eigenvalue. `None` when nothing is free (no reduction needed) or the
/// decomposition fails.
fn resisted(s: &DMatrix<f64>, mass: &DMatrix<f64>) -> Option<DMatrix<f64>> {
    let n = s.nrows();
    if n == 0 || !s.iter().all(|v| v.is_finite()) {
        return None;
    }
    let eig = nalgebra::SymmetricEigen::try_new(s.clone(), f64::EPSILON, 100 * n)?;
    let top = eig.eigenvalues.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let free: Vec<usize> = (0..n).filter(|&i| eig.eigenvalues[i].abs() <= 1e-12 * top).collect();
    if free.is_empty() || free.len() == n {
        return None;
    }
    let kept: Vec<usize> = (0..n).filter(|i| !free.contains(i)).collect();
    let z = eig.eigenvectors.select_columns(&free);
    let r = eig.eigenvectors.select_columns(&kept);
    let zm = z.transpose() * mass;
    let proj = (&zm * &z).try_inverse()? * (&zm * &r);
    Some(&r - &z * proj)
}

/// R(T λ): the step map of the stages of `tab` (as the stepper composes them, (13)) on the
/// scalar equation ẋ = λ x.
fn stability_polynomial(tab: &Tableau, step: f64, l: Complex<f64>) -> Complex<f64> {
    let (mut acc, mut prev) = (Complex::new(0.0, 0.0), Complex::new(0.0, 0.0));
    for r in 0..tab.stages() {
        let xi = l * (prev * (tab.offset[r] * step) + 1.0);
        acc += xi * tab.weight[r];
        prev = xi;
    }
    acc * (step / tab.weight_sum) + 1.0
}

/// −\[r\]ₓ: δθ × r = −r × δθ.
fn lever(r: &Vector3<f64>) -> Matrix3<f64> {
    -r.cross_matrix()
}

impl GroupModel {
    /// The model of `bodies` joined by `contacts`, with `held` springs.
    pub fn new(mut bodies: Vec<Body>, contacts: Vec<GroupContact>, held: Vec<(usize, StageSpring)>) -> GroupModel {
        let mut n = 0;
        for b in &mut bodies {
            b.offset = n;
            n += b.inertia.dofs();
        }
        let (mut k, mut c0, mut c1) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        let mut g = DMatrix::zeros(3, n);
        let (mut own0, mut own1) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
        for c in &contacts {
            g.fill(0.0);
            for (side, end) in c.ends.iter().enumerate() {
                let Some(i) = end else { continue };
                let b = &bodies[*i];
                let sign = if side == 0 { 1.0 } else { -1.0 };
                let o = b.offset;
                g.view_mut((0, o), (3, 3)).copy_from(&(Matrix3::identity() * sign));
                if let BodyInertia::Rigid(r) = &b.inertia {
                    g.view_mut((0, o + 3), (3, 3)).copy_from(&(lever(&(c.point - r.com)) * sign));
                }
            }
            let gt = g.transpose();
            let gtg = &gt * &g;
            if c.spring.coupled {
                // Both ends' blocks and the blocks between them: a contact between two
                // bodies is solved with both (stepper/coupling.rs groups).
                own0 += &gtg * c.spring.b;
                own1 += &gtg * c.spring.k;
            }
            k += &gtg * c.spring.k;
            c0 += &gtg * c.spring.b;
            if c.spring.implicit {
                // The tangent plane; where the contact is held implicitly with its bodies
                // its normal force counts τK too (max(0, K δ − (B + τK) v_n)).
                let p = if c.spring.coupled {
                    Matrix3::identity()
                } else {
                    Matrix3::identity() - c.normal * c.normal.transpose()
                };
                c1 += &gt * (DMatrix::from_column_slice(3, 3, (p * c.spring.k).as_slice()) * &g);
            }
        }
        for (i, s) in &held {
            let o = bodies[*i].offset;
            for d in o..o + 3 {
                k[(d, d)] += s.k;
                c0[(d, d)] += s.b;
                if s.implicit {
                    c1[(d, d)] += s.k;
                }
                if s.coupled {
                    own0[(d, d)] += s.b;
                    own1[(d, d)] += s.k;
                }
            }
        }
        let mut mass = DMatrix::zeros(n, n);
        let mut rows = vec![false; n];
        for b in &bodies {
            let o = b.offset;
            match &b.inertia {
                BodyInertia::Rigid(r) => {
                    mass.view_mut((o, o), (3, 3)).fill_diagonal(r.mass);
                    let inertia = r.inertia_inv.try_inverse().unwrap_or_else(|| Matrix3::from_element(f64::NAN));
                    mass.view_mut((o + 3, o + 3), (3, 3)).copy_from(&inertia);
                }
                BodyInertia::Point(m) => mass.view_mut((o, o), (3, 3)).fill_diagonal(*m),
            }
            rows[o..o + b.inertia.dofs()].fill(b.implicit_position);
        }
        if own0.iter().chain(own1.iter()).any(|v| *v != 0.0) {
            // The stage inertia depends on τ: the rate is formed per stage, on the whole
            // model (the free motions keep a zero force whatever the inertia).
            let coupled = CoupledStage { mass, k, c0, c1, d0: own0, d1: own1 };
            let z = DMatrix::zeros(0, 0);
            return GroupModel {
                bodies,
                contacts,
                held,
                a: z.clone(),
                d0: z.clone(),
                d1: z,
                implicit_rows: rows,
                coupled: Some(Box::new(coupled)),
                eigenvalues: Default::default(),
            };
        }
        // The motions no contact resists (a pair of bodies moving together, a sphere's spin on
        // one contact) are free: q̈ = 0 there, the step map's eigenvalue 1 in a Jordan block,
        // which an eigenvalue solver splits by √ε. They are taken out: with Z spanning the
        // common null space of K, B and K_implicit and R the rest, q = Z a + R' b with R' =
        // R − Z (ZᵀMZ)⁻¹ ZᵀM R (M-orthogonal to Z) gives ä = 0 and the model in b alone. (Only
        // where every body has the same position rate, which the reduction keeps.)
        let uniform = rows.iter().all(|r| *r == rows[0]);
        let basis = if uniform { resisted(&(&k + &c0 + &c1), &mass) } else { None };
        let (mass, k, c0, c1, rows) = match basis {
            Some(r) => {
                let rt = r.transpose();
                let reduce = |m: &DMatrix<f64>| &rt * m * &r;
                let implicit = rows.first().copied().unwrap_or(false);
                (reduce(&mass), reduce(&k), reduce(&c0), reduce(&c1), vec![implicit; r.ncols()])
            }
            None => (mass, k, c0, c1, rows),
        };
        let m_inv = mass.clone().try_inverse().unwrap_or_else(|| DMatrix::from_element(mass.nrows(), mass.ncols(), f64::NAN));
        let a = -(&m_inv * k);
        let d0 = -(&m_inv * c0);
        let d1 = -(&m_inv * c1);
        GroupModel { bodies, contacts, held, a, d0, d1, implicit_rows: rows, coupled: None, eigenvalues: Default::default() }
    }

    /// The bodies' degrees of freedom (6 per rigid body, 3 per point).
    pub fn body_dofs(&self) -> usize {
        self.bodies.iter().map(|b| b.inertia.dofs()).sum()
    }

    /// Degrees of freedom n of the model, the free motions taken out (the step map is 2n × 2n).
    pub fn dofs(&self) -> usize {
        match &self.coupled {
            Some(c) => c.mass.nrows(),
            None => self.a.nrows(),
        }
    }

    /// The stage rate ξ = J(τ) x, x = (q, v).
    fn rate(&self, tau: f64) -> DMatrix<f64> {
        let n = self.dofs();
        let (a, d) = match &self.coupled {
            Some(c) => {
                let m = &c.mass + &c.d0 * tau + &c.d1 * (tau * tau);
                let inv = m.try_inverse().unwrap_or_else(|| DMatrix::from_element(n, n, f64::NAN));
                (-(&inv * &c.k), -(&inv * (&c.c0 + &c.c1 * tau)))
            }
            None => (self.a.clone(), &self.d0 + &self.d1 * tau),
        };
        let mut j = DMatrix::zeros(2 * n, 2 * n);
        j.view_mut((n, 0), (n, n)).copy_from(&a);
        j.view_mut((n, n), (n, n)).copy_from(&d);
        for (r, implicit) in self.implicit_rows.iter().enumerate() {
            if *implicit {
                for col in 0..2 * n {
                    j[(r, col)] = tau * j[(n + r, col)];
                }
                j[(r, n + r)] += 1.0;
            } else {
                j[(r, n + r)] = 1.0;
            }
        }
        j
    }

    /// The map x(k) → x(k+1) of one step T of `tab`, stage by stage as in (13).
    pub fn step_map(&self, tab: &Tableau, step: f64) -> DMatrix<f64> {
        super::compose_step_map(2 * self.dofs(), tab, step, |tau| self.rate(tau))
    }


    /// Spectral radius of the step map, `None` when it cannot be decided.
    ///
    /// Where the stage rate J does not depend on τ (no τK damping, q̇ = v: the held elements'
    /// continuous law under RK4), the step map is the method's stability polynomial R(T J)
    /// (RK4: 1 + z + z²/2 + z³/6 + z⁴/24) and its eigenvalues are R(T λ) for the eigenvalues
    /// λ of J: one eigenvalue problem serves every trial step.
    pub fn radius(&self, tab: &Tableau, step: f64) -> Option<f64> {
        match self.eigenvalues.get_or_init(|| self.rate_eigenvalues()) {
            Some(l) => {
                let r = l.iter().map(|l| stability_polynomial(tab, step, *l).norm()).fold(0.0, f64::max);
                r.is_finite().then_some(r)
            }
            None => spectral_radius(self.step_map(tab, step)),
        }
    }

    /// The eigenvalues of J (balanced Schur form, bounded as [`spectral_radius`]) if J does
    /// not depend on τ; `None` otherwise or if they cannot be computed (the step maps are
    /// then composed for each trial step).
    fn rate_eigenvalues(&self) -> Option<Vec<Complex<f64>>> {
        if self.coupled.is_some() || self.d1.iter().any(|v| *v != 0.0) || self.implicit_rows.iter().any(|r| *r) {
            return None;
        }
        let j = self.rate(0.0);
        if !j.iter().all(|v| v.is_finite()) {
            return None;
        }
        let limit = super::QR_SWEEPS_PER_ROW * j.nrows().max(1);
        let mut balanced = j.clone();
        super::balance(&mut balanced);
        let schur = nalgebra::linalg::Schur::try_new(balanced, f64::EPSILON, limit)
            .or_else(|| nalgebra::linalg::Schur::try_new(j, f64::EPSILON, limit))?;
        Some(schur.complex_eigenvalues().iter().copied().collect())
    }

    /// Whether the held group is stable at `step` (`None`: undecided).
    pub fn stable(&self, tab: &Tableau, step: f64) -> Option<bool> {
        self.radius(tab, step).map(|r| r <= GROUP_RADIUS)
    }

    /// The largest stable step ≤ `step`, to a relative precision of 1e-4: halving down to a
    /// stable step, then bisecting (`None` if even T·2⁻⁶⁰ is not proven stable).
    pub fn largest_stable_step(&self, tab: &Tableau, step: f64) -> Option<f64> {
        super::largest_stable_within(|t| self.stable(tab, t) == Some(true), step, STEP_PRECISION)
    }

    /// The model's matrices rounded to single precision, the memo key of [`analyse_groups`]: copies of one
    /// group placed elsewhere (the same bodies and contacts, positions differing in their
    /// last bits) share one analysis.
    fn key(&self) -> Vec<u32> {
        let mut k = Vec::with_capacity(3 * self.a.len() + self.bodies.len());
        k.extend(self.implicit_rows.iter().map(|r| *r as u32));
        for m in [&self.a, &self.d0, &self.d1] {
            k.extend(m.iter().map(|v| (*v as f32).to_bits()));
        }
        if let Some(c) = &self.coupled {
            for m in [&c.mass, &c.k, &c.c0, &c.c1, &c.d0, &c.d1] {
                k.extend(m.iter().map(|v| (*v as f32).to_bits()));
            }
        }
        k
    }
}

/// What the analysis found for one group.
#[derive(Clone, Debug)]
pub struct GroupFinding {
    pub model: GroupModel,
    /// ρ at the step T, `None` if undecided.
    pub radius: Option<f64>,
    pub largest_stable_step: Option<f64>,
}

/// The body of port (j, port) at state `x`: a rigid body, or a point3 port with a
/// translational inertia; `None` for anything else (a scalar port, no inertia).
fn body(sched: &Schedule, x: &[f64], method: Method, (j, port): (usize, usize)) -> Option<Body> {
    let adm = sched.admittance(j);
    let xa = sched.admittance_state(j, x);
    let inertia = match adm.port_rigid_inertia(xa, port) {
        Some(r) if r.mass > 0.0 && r.mass.is_finite() && r.inertia_inv.iter().all(|v| v.is_finite()) => {
            BodyInertia::Rigid(r)
        }
        Some(_) => return None,
        None => {
            let domain = adm.layout().ports.get(port)?.domain;
            let m = adm.port_inertia(xa, port).filter(|m| m.is_finite() && *m > 0.0)?;
            if domain != Domain::Point3 {
                return None;
            }
            BodyInertia::Point(m)
        }
    };
    Some(Body { port: (j, port), inertia, implicit_position: adm.implicit_position(method), offset: 0 })
}

/// The groups of bodies joined by held contacts at state `x` (contacts with a contact point,
/// [`Impedance::stuck_contact`](crate::component::Impedance::stuck_contact), that are
/// not open: their switching function, if any, not negative), each as a [`GroupModel`]; groups
/// above [`MAX_GROUP_DOFS`] are left out.
pub fn groups(sched: &Schedule, x: &[f64], method: Method) -> Vec<GroupModel> {
    group_parts(sched, x, method).into_iter().map(|(bs, cs, held)| GroupModel::new(bs, cs, held)).collect()
}

/// A group's bodies, contacts and other springs, before its model is built ([`groups`]).
type GroupParts = (Vec<Body>, Vec<GroupContact>, Vec<(usize, StageSpring)>);

/// [`groups`]'s groups as their parts.
fn group_parts(sched: &Schedule, x: &[f64], method: Method) -> Vec<GroupParts> {
    use std::collections::HashMap;
    let mut index: HashMap<(usize, usize), usize> = HashMap::new();
    let mut bodies: Vec<Body> = Vec::new();
    // Pairs of bodies (indices into `bodies`) joined by a contact.
    let mut joined: Vec<(usize, usize)> = Vec::new();
    let mut contacts: Vec<GroupContact> = Vec::new();
    let t = 0.0;
    let n_imp = sched.impedance_names().len();
    for i in 0..n_imp {
        if crate::cancel::requested() {
            break;
        }
        let imp = sched.impedance(i);
        if !imp.is_body_contact() {
            continue;
        }
        let Some(spring) = imp.stuck_spring() else { continue };
        let ends = sched.impedance_attachments(i);
        let motions = sched.impedance_motions(i, x);
        let Some(cp) = imp.stuck_contact(&motions) else { continue };
        if ends.len() > 2 || ends.iter().all(Option::is_none) {
            continue;
        }
        if imp.switching(&motions, sched.impedance_state(i, x), t).is_some_and(|g| g < 0.0) {
            continue;
        }
        let mut at = [None, None];
        let mut known = true;
        for (s, e) in ends.iter().enumerate() {
            let Some(port) = e else { continue };
            let k = match index.get(port) {
                Some(k) => *k,
                None => match body(sched, x, method, *port) {
                    Some(b) => {
                        bodies.push(b);
                        index.insert(*port, bodies.len() - 1);
                        bodies.len() - 1
                    }
                    None => {
                        known = false;
                        break;
                    }
                },
            };
            at[s] = Some(k);
        }
        if !known {
            continue;
        }
        if let [Some(a), Some(b)] = at {
            joined.push((a, b));
        }
        contacts.push(GroupContact { imp: i, spring, point: cp.point, normal: cp.normal, ends: at });
    }
    let mut parent = petgraph::unionfind::UnionFind::<usize>::new(bodies.len());
    for &(a, b) in &joined {
        parent.union(a, b);
    }
    // Bodies by group root, in order of first appearance.
    let mut order: HashMap<usize, usize> = HashMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for b in 0..bodies.len() {
        let r = parent.find_mut(b);
        let g = *order.entry(r).or_insert_with(|| {
            members.push(Vec::new());
            members.len() - 1
        });
        members[g].push(b);
    }
    let group_of: Vec<usize> = (0..bodies.len()).map(|b| order[&parent.find_mut(b)]).collect();
    let mut local = vec![0; bodies.len()];
    for m in &members {
        for (k, b) in m.iter().enumerate() {
            local[*b] = k;
        }
    }
    let mut group_contacts: Vec<Vec<GroupContact>> = vec![Vec::new(); members.len()];
    for c in contacts {
        let Some(first) = c.ends.iter().flatten().next() else { continue };
        let g = group_of[*first];
        group_contacts[g].push(GroupContact { ends: c.ends.map(|e| e.map(|b| local[b])), ..c });
    }
    // The other springs on the groups' bodies (a second pass, only when there are groups).
    let mut group_held: Vec<Vec<(usize, StageSpring)>> = vec![Vec::new(); members.len()];
    if !members.is_empty() {
        for i in 0..n_imp {
            let imp = sched.impedance(i);
            if imp.is_body_contact() {
                continue;
            }
            let Some(s) = imp.stuck_spring() else { continue };
            for p in sched.impedance_ports(i) {
                if let Some(b) = index.get(&p) {
                    group_held[group_of[*b]].push((local[*b], s));
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((m, cs), held) in members.into_iter().zip(group_contacts).zip(group_held) {
        let dofs: usize = m.iter().map(|b| bodies[*b].inertia.dofs()).sum();
        if dofs > MAX_GROUP_DOFS || cs.is_empty() {
            continue;
        }
        let bs = m.iter().map(|b| bodies[*b].clone()).collect();
        out.push((bs, cs, held));
    }
    out
}

/// Analyse every group of bodies held by contacts at state `x` for `method` and step T; identical
/// groups (copies of one scene) are analysed once.
pub fn analyse_groups(sched: &Schedule, x: &[f64], method: Method, step: f64) -> Vec<GroupFinding> {
    let tab = method.tableau();
    let mut memo: std::collections::HashMap<Vec<u32>, (Option<f64>, Option<f64>)> = Default::default();
    groups(sched, x, method)
        .into_iter()
        .map(|model| {
            let (radius, largest_stable_step) = *memo.entry(model.key()).or_insert_with(|| {
                let r = model.radius(tab, step);
                let limit = match r {
                    Some(r) if r <= GROUP_RADIUS => Some(step),
                    Some(_) => model.largest_stable_step(tab, step),
                    None => None,
                };
                (r, limit)
            });
            GroupFinding { model, radius, largest_stable_step }
        })
        .collect()
}

/// The contacts (impedance indices) of every group of bodies held by contacts at state `x`
/// whose held state the method's explicit stages would not keep stable at the step (ρ above
/// 1, the radius [`analyse_groups`] finds): the stepper holds them implicitly with their
/// bodies instead (framework/src/stepper.rs). Identical groups are analysed once; no
/// largest stable step is sought.
pub(crate) fn unstable_group_contacts(sched: &Schedule, x: &[f64], method: Method, step: f64) -> Vec<usize> {
    let tab = method.tableau();
    let mut memo: std::collections::HashMap<Vec<u32>, bool> = Default::default();
    let mut out = Vec::new();
    for (bodies, contacts, held) in group_parts(sched, x, method) {
        // Copies of one group (a scene of many alike) are one entry: keyed by what the model
        // is built from, seen from the first body, before it is built.
        let key = parts_key(&bodies, &contacts, &held);
        let unstable = *memo.entry(key).or_insert_with(|| {
            let model = GroupModel::new(bodies, contacts.clone(), held);
            model.radius(tab, step).is_some_and(|r| !is_stable(r))
        });
        if unstable {
            out.extend(contacts.iter().map(|c| c.imp));
        }
    }
    out
}

/// What a group's model is built from, positions relative to its first body, in single
/// precision ([`GroupModel::key`]'s rounding): alike groups at different places are equal.
fn parts_key(bodies: &[Body], contacts: &[GroupContact], held: &[(usize, StageSpring)]) -> Vec<u32> {
    let origin = match bodies.first().map(|b| &b.inertia) {
        Some(BodyInertia::Rigid(r)) => r.com,
        _ => Vector3::zeros(),
    };
    let mut k = Vec::new();
    let mut put = |v: f64| k.push((v as f32).to_bits());
    for b in bodies {
        put(f64::from(u8::from(b.implicit_position)));
        match &b.inertia {
            BodyInertia::Rigid(r) => {
                put(r.mass);
                r.inertia_inv.iter().for_each(|v| put(*v));
                (r.com - origin).iter().for_each(|v| put(*v));
            }
            BodyInertia::Point(m) => put(*m),
        }
    }
    let spring = |s: &StageSpring| [s.k, s.b, f64::from(u8::from(s.implicit)), f64::from(u8::from(s.coupled))];
    for c in contacts {
        spring(&c.spring).into_iter().for_each(&mut put);
        (c.point - origin).iter().chain(c.normal.iter()).for_each(|v| put(*v));
        c.ends.iter().for_each(|e| put(e.map_or(-1.0, |b| b as f64)));
    }
    for (b, s) in held {
        put(*b as f64);
        spring(s).into_iter().for_each(&mut put);
    }
    k
}

/// Whether a radius found for a group is stable.
pub fn is_stable(radius: f64) -> bool {
    radius <= GROUP_RADIUS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1 kg box (0.2 × 0.2 × 0.02 m) on four corner contacts to the ground (K 1e5, B 100;
    /// `implicit`: the paper's τK in the tangent plane).
    fn box_on_corners(implicit: bool) -> GroupModel {
        let inertia = RigidInertia {
            mass: 1.0,
            inertia_inv: Matrix3::from_diagonal(&Vector3::new(1.0 / 0.003366667, 1.0 / 0.003366667, 1.0 / 0.006666667)),
            com: Vector3::new(0.0, 0.0, 0.01),
        };
        let body = Body { port: (0, 0), inertia: BodyInertia::Rigid(inertia), implicit_position: false, offset: 0 };
        let spring = StageSpring { k: 1e5, b: 100.0, implicit, coupled: false };
        let contacts = [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)]
            .iter()
            .enumerate()
            .map(|(imp, (x, y))| GroupContact {
                imp,
                spring,
                point: Vector3::new(0.1 * x, 0.1 * y, 0.0),
                normal: Vector3::z(),
                ends: [Some(0), None],
            })
            .collect();
        GroupModel::new(vec![body], contacts, Vec::new())
    }

    /// The radius from the eigenvalues of J and the stability polynomial is the radius of the
    /// step map composed stage by stage, at steps on both sides of the limit.
    #[test]
    fn the_stability_polynomial_gives_the_step_maps_radius() {
        let m = box_on_corners(false);
        assert!(m.eigenvalues.get_or_init(|| m.rate_eigenvalues()).is_some());
        for tab in [Method::Rk4.tableau(), Method::Euler.tableau()] {
            for t in [1e-4, 5e-4, 1e-3, 1.3e-3, 1.6e-3, 3e-3] {
                let direct = spectral_radius(m.step_map(tab, t)).unwrap();
                let poly = m.radius(tab, t).unwrap();
                assert!((poly - direct).abs() <= 1e-9 * direct.max(1.0), "T = {t}: {poly} vs {direct}");
            }
        }
        // With τK the rate depends on τ: the step maps are composed.
        let m = box_on_corners(true);
        assert!(m.rate_eigenvalues().is_none());
    }

    /// The box turning about its normal against the paper's τK (implicit) is stable only to
    /// a shorter step than with the continuous held law (the stack of issue 43).
    #[test]
    fn the_tau_k_of_the_papers_form_shortens_the_stable_step() {
        let tab = Method::Rk4.tableau();
        let continuous = box_on_corners(false).largest_stable_step(tab, 1e-2).unwrap();
        let paper = box_on_corners(true).largest_stable_step(tab, 1e-2).unwrap();
        assert!(paper < 0.8 * continuous, "{paper} vs {continuous}");
    }
}
