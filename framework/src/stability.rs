//! Stability of the stuck state, system-wide (`stiction check`, issue 14).
//!
//! The per-element rules (ω T of one spring on the lightest mass it touches, rule (63) of
//! model C) cannot see that elements attached to the same body add up. Here every
//! admittance port is linearised together with every impedance attached to it, in the state
//! where their friction holds: each impedance is the spring–damper it then presents
//! ([`StageSpring`]), the other ends held still. On the port's inertia M this is
//!
//! ```text
//!   M v̇ = −(Σ K) q − (Σ B + τ Σ_implicit K) v,      q̇ = v            (or q̇ = v + τ v̇)
//! ```
//!
//! per stage with that stage's τ: the stiffnesses add, the dampers add, and every element
//! written like I_fricK (19) adds τK of damping (f = (B + τK) v + K e while it holds). The
//! position rate is q̇ = v + τ v̇ for an admittance that takes the papers' implicit step
//! (model A under Euler, model D's held slider, the gears under Euler,
//! [`Admittance::implicit_position`](crate::component::Admittance::implicit_position)).
//! The step map x(k) → x(k+1) is composed exactly as the stepper does it, stage by stage
//! from the method's [`Tableau`] ((13) with (22)); its spectral radius ρ above 1 means that
//! small vibrations of the held state grow by ρ every step until the friction saturates:
//! a creeping, chattering "stuck" body. The largest stable step is found by bisection.
//!
//! Two admittance ports joined by springs (a contact between two bodies, a spring between
//! two masses) are also analysed together ([`analyse_pairs`], [`PairModel`]): both inertias
//! move, joined by every spring between them (e.g. the four corner contacts of a box on a
//! tray), each also held by its other attachments. Their relative mode, the inertias in
//! series m_a m_b/(m_a + m_b), is stiffer than either body held against the other: a pair
//! can vibrate where each body alone is stable. The inertias are the ports' translational
//! ones ([`Admittance::port_inertia`](crate::component::Admittance::port_inertia)).
//!
//! A contact at a point of a rigid body also turns it: a force f at point x of a body
//! (mass m, world inverse inertia I⁻¹ about its centre of mass c, r = x − c) accelerates
//! x by f/m + (I⁻¹ (r × f)) × r, so along a unit direction d the contact meets the
//! effective mass 1/m_eff(d) = 1/m + (r × d)ᵀ I⁻¹ (r × d)
//! ([`RigidInertia`], [`Impedance::stuck_contact`](crate::component::Impedance::stuck_contact)).
//! For a pair with a rigid body on either side, every joining contact with a contact point
//! is also analysed alone, on its own spring, with both bodies' effective masses at its point
//! ([`contact_inverse_mass`]) along its normal and along the tangent direction of the
//! smallest effective mass; the pair's radius is the largest of these models and the
//! translational one, its largest stable step the smallest. The single contact is a lower
//! bound of the pair's highest frequency (Rayleigh's quotient of M⁻¹K at the response to
//! that contact's force: K ≥ its own spring), so it warns only where the full rigid-body
//! model would, and catches a stiff contact at the rim of a light-inertia body, where the
//! translational masses alone see a step limit several times too long.
//!
//! Every radius is found in a bounded time ([`spectral_radius`]), or said to be undecided;
//! a stop request ([`crate::cancel`]) ends the analysis with what it has found.

mod groups;

pub use groups::{analyse_groups, GroupFinding, GroupModel, MAX_GROUP_DOFS};
pub(crate) use groups::unstable_group_contacts;

use crate::component::{ContactPoint, Diagnostic, RigidInertia, StageSpring};
use crate::method::{Method, Tableau};
use crate::schedule::Schedule;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

type M2 = [[f64; 2]; 2];

fn mul(a: &M2, b: &M2) -> M2 {
    let mut c = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
        }
    }
    c
}

const ID: M2 = [[1.0, 0.0], [0.0, 1.0]];

/// The largest spectral radius taken as stable (1, with a margin for rounding).
const STABLE_RADIUS: f64 = 1.0 + 1e-9;

/// Results of the models analysed so far in one pass, keyed by the models' bits: a network
/// of 10⁵ alike masses and springs holds a handful of distinct models, and each is analysed
/// once (a radius of a 4×4 step map is a Schur decomposition; `run` checks before it steps).
/// The same bits give the same result, so the findings are those of analysing each again.
/// At most [`MEMO_ENTRIES`] models are kept: past that, the others are analysed each time.
struct Memo<const N: usize, V> {
    map: std::collections::HashMap<[u64; N], V, foldhash::fast::FixedState>,
}

/// Models a [`Memo`] keeps at most (about 1 MiB for the largest key).
const MEMO_ENTRIES: usize = 8192;

impl<const N: usize, V: Copy> Memo<N, V> {
    fn new() -> Self {
        Memo { map: Default::default() }
    }

    /// The result for `key`, computed by `f` unless it was before.
    fn get(&mut self, key: [u64; N], f: impl FnOnce() -> V) -> V {
        if let Some(v) = self.map.get(&key) {
            return *v;
        }
        let v = f();
        if self.map.len() < MEMO_ENTRIES {
            self.map.insert(key, v);
        }
        v
    }
}

/// How many models a pass analysed and the largest decided radius with what it belongs to
/// (the last of equal ones, as `Iterator::max_by`), so that the pass keeps only the results
/// worth a warning.
struct Tally<K> {
    count: usize,
    worst: Option<(f64, K)>,
}

impl<K> Tally<K> {
    fn new() -> Self {
        Tally { count: 0, worst: None }
    }

    /// One more result of radius `r` (NaN: not decided, counted but never the worst).
    fn see(&mut self, r: f64, what: impl FnOnce() -> K) {
        self.count += 1;
        if !r.is_nan() && self.worst.as_ref().is_none_or(|(w, _)| r.total_cmp(w).is_ge()) {
            self.worst = Some((r, what()));
        }
    }
}

/// Spectral radius of a real 2×2 matrix.
fn radius(m: &M2) -> f64 {
    let tr = m[0][0] + m[1][1];
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let disc = 0.25 * tr * tr - det;
    if disc >= 0.0 {
        let s = disc.sqrt();
        (0.5 * tr + s).abs().max((0.5 * tr - s).abs())
    } else {
        // Complex pair: |λ|² = det.
        det.abs().sqrt()
    }
}

/// One admittance port with everything attached to it, linearised in the stuck state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortModel {
    /// Inertia M of the port (kg or kg·m²), > 0.
    pub inertia: f64,
    /// Σ K of the attached springs.
    pub k: f64,
    /// Σ B of the attached dampers.
    pub b: f64,
    /// Σ K of the attached elements that add τK of damping per stage.
    pub k_implicit: f64,
    /// Σ K and Σ B of the attached elements coupled implicitly with the mass
    /// ([`StageSpring::coupled`]): the velocity rate is divided by M + τ (B_c + τ K_c).
    pub k_coupled: f64,
    pub b_coupled: f64,
    /// q̇ = v + τ v̇ instead of q̇ = v.
    pub implicit_position: bool,
}

impl PortModel {
    /// Add an attached (or internal) spring–damper.
    pub fn add(&mut self, s: StageSpring) {
        self.k += s.k;
        self.b += s.b;
        if s.implicit {
            self.k_implicit += s.k;
        }
        if s.coupled {
            self.k_coupled += s.k;
            self.b_coupled += s.b;
        }
    }

    /// The inertia the stage's velocity rate divides by: M + τ (B_c + τ K_c)
    /// ([`crate::component::Admittance::implicit_rate`]).
    fn stage_inertia(&self, tau: f64) -> f64 {
        self.inertia + tau * (self.b_coupled + tau * self.k_coupled)
    }

    /// The stage rate ξ = J(τ) x, x = (q, v).
    fn rate(&self, tau: f64) -> M2 {
        let m = self.stage_inertia(tau);
        let a = -self.k / m;
        let d = -(self.b + tau * self.k_implicit) / m;
        let q_row = if self.implicit_position { [tau * a, 1.0 + tau * d] } else { [0.0, 1.0] };
        [q_row, [a, d]]
    }

    /// The map x(k) → x(k+1) of one step T of `tab`, stage by stage as in (13).
    pub fn step_map(&self, tab: &Tableau, step: f64) -> M2 {
        let mut acc = [[0.0; 2]; 2];
        let mut prev = [[0.0; 2]; 2];
        for r in 0..tab.stages() {
            let h = tab.offset[r] * step;
            let xs = [[1.0 + h * prev[0][0], h * prev[0][1]], [h * prev[1][0], 1.0 + h * prev[1][1]]];
            let xi = mul(&self.rate(tab.tau[r] * step), &xs);
            for i in 0..2 {
                for j in 0..2 {
                    acc[i][j] += tab.weight[r] * xi[i][j];
                }
            }
            prev = xi;
        }
        let c = step / tab.weight_sum;
        let mut m = ID;
        for i in 0..2 {
            for j in 0..2 {
                m[i][j] += c * acc[i][j];
            }
        }
        m
    }

    /// The model's bits, as a [`Memo`] key.
    fn key(&self) -> [u64; 7] {
        [
            self.inertia.to_bits(),
            self.k.to_bits(),
            self.b.to_bits(),
            self.k_implicit.to_bits(),
            self.k_coupled.to_bits(),
            self.b_coupled.to_bits(),
            self.implicit_position as u64,
        ]
    }

    /// Spectral radius of the step map (closed form; NaN when the map overflows, an
    /// infinite entry with its neighbours: not decided).
    pub fn radius(&self, tab: &Tableau, step: f64) -> f64 {
        radius(&self.step_map(tab, step))
    }

    /// Whether the step map is stable (ρ ≤ 1, with a margin for rounding).
    pub fn stable(&self, tab: &Tableau, step: f64) -> bool {
        self.radius(tab, step) <= STABLE_RADIUS
    }

    /// The largest step ≤ `step` below which the map is stable, by halving down to a stable
    /// step and bisecting back up (`None` if even T·2⁻⁶⁰ is unstable).
    pub fn largest_stable_step(&self, tab: &Tableau, step: f64) -> Option<f64> {
        largest_stable(|t| self.stable(tab, t), step)
    }
}

/// The largest step ≤ `step` at which `stable` holds, by halving down to a stable step and
/// bisecting back up 60 times (`None` if even T·2⁻⁶⁰ is unstable).
fn largest_stable(stable: impl Fn(f64) -> bool, step: f64) -> Option<f64> {
    largest_stable_within(stable, step, 0.0)
}

/// [`largest_stable`], the bisection stopped once the bracket is within `precision` of
/// its lower end (at most 60 halvings of it).
fn largest_stable_within(stable: impl Fn(f64) -> bool, step: f64, precision: f64) -> Option<f64> {
    // On a stop request ([`crate::cancel`]) every trial answers "not stable" at once.
    let stable = |t: f64| !crate::cancel::requested() && stable(t);
    if stable(step) {
        return Some(step);
    }
    let mut hi = step;
    let mut lo = step;
    for _ in 0..60 {
        lo *= 0.5;
        if stable(lo) {
            break;
        }
        hi = lo;
    }
    if !stable(lo) {
        return None;
    }
    for _ in 0..60 {
        if hi - lo <= precision * lo {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if stable(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// The map x(k) → x(k+1) of one step T of `tab` for the stage rates ξ = J(τ) x of an
/// m-dimensional state (`rate(τ)` = J(τ)), composed stage by stage as the stepper does ((13)).
fn compose_step_map(m: usize, tab: &Tableau, step: f64, rate: impl Fn(f64) -> DMatrix<f64>) -> DMatrix<f64> {
    let (mut acc, mut prev) = (DMatrix::zeros(m, m), DMatrix::zeros(m, m));
    for r in 0..tab.stages() {
        let xs = DMatrix::identity(m, m) + &prev * (tab.offset[r] * step);
        let xi = rate(tab.tau[r] * step) * xs;
        acc += &xi * tab.weight[r];
        prev = xi;
    }
    DMatrix::identity(m, m) + acc * (step / tab.weight_sum)
}

/// Ports 0..n of one admittance coupled through its inertia matrix H (a serial robot's
/// joints, (8)), each with the spring–dampers attached to it, linearised in the stuck state:
///
/// ```text
///   H v̇ = −K q − (B + τ K_implicit) v,   q̇ = v (or v + τ v̇),   K, B, K_implicit diagonal
/// ```
///
/// The off-diagonal inertia raises the highest frequency above every √(K_i/H_ii) of the
/// one-port model, so the joints are analysed together: the 2n×2n step map is composed as in
/// [`PortModel::step_map`] and its spectral radius taken from its eigenvalues (Schur form).
#[derive(Clone, Debug, PartialEq)]
pub struct CoupledModel {
    /// H⁻¹.
    pub h_inv: DMatrix<f64>,
    pub k: Vec<f64>,
    pub b: Vec<f64>,
    pub k_implicit: Vec<f64>,
    pub implicit_position: bool,
    /// H with Σ K and Σ B of the elements coupled implicitly with each joint
    /// ([`StageSpring::coupled`], [`with_coupled`](Self::with_coupled)): the velocity rates
    /// then solve (H + τ diag(B_c + τ K_c)) v̇ = …, as the stage does
    /// ([`crate::component::StageLaw::joint_rates`]). `None`: nothing coupled.
    pub coupled: Option<(DMatrix<f64>, Vec<f64>, Vec<f64>)>,
}

impl CoupledModel {
    /// The model for inertia matrix `h` (n×n) and per-port sums; `None` if H is singular.
    pub fn new(
        h: DMatrix<f64>,
        k: Vec<f64>,
        b: Vec<f64>,
        k_implicit: Vec<f64>,
        implicit_position: bool,
    ) -> Option<Self> {
        let h_inv = h.try_inverse().filter(|m| m.iter().all(|v| v.is_finite()))?;
        Some(CoupledModel { h_inv, k, b, k_implicit, implicit_position, coupled: None })
    }

    /// The model with Σ K and Σ B of the coupled elements on each joint (`h` the inertia
    /// matrix [`new`](Self::new) inverted); unchanged where none couples.
    pub fn with_coupled(mut self, h: DMatrix<f64>, k_coupled: Vec<f64>, b_coupled: Vec<f64>) -> Self {
        if k_coupled.iter().chain(&b_coupled).any(|v| *v != 0.0) {
            self.coupled = Some((h, k_coupled, b_coupled));
        }
        self
    }

    /// The inverse of the matrix the stage's velocity rates divide by: H⁻¹, or
    /// (H + τ diag(B_c + τ K_c))⁻¹ where elements couple.
    fn stage_inverse(&self, tau: f64) -> std::borrow::Cow<'_, DMatrix<f64>> {
        use std::borrow::Cow;
        let Some((h, kc, bc)) = &self.coupled else { return Cow::Borrowed(&self.h_inv) };
        let diag = DVector::from_iterator(kc.len(), kc.iter().zip(bc).map(|(k, b)| tau * (b + tau * k)));
        (h + DMatrix::from_diagonal(&diag)).try_inverse().map_or(Cow::Borrowed(&self.h_inv), Cow::Owned)
    }

    fn dim(&self) -> usize {
        self.k.len()
    }

    /// The stage rate ξ = J(τ) x, x = (q, v).
    fn rate(&self, tau: f64) -> DMatrix<f64> {
        let n = self.dim();
        let h_inv = self.stage_inverse(tau);
        let a = -&*h_inv * DMatrix::from_diagonal(&DVector::from_column_slice(&self.k));
        let damp: Vec<f64> = self.b.iter().zip(&self.k_implicit).map(|(b, k)| b + tau * k).collect();
        let d = -&*h_inv * DMatrix::from_diagonal(&DVector::from_vec(damp));
        let mut j = DMatrix::zeros(2 * n, 2 * n);
        if self.implicit_position {
            j.view_mut((0, 0), (n, n)).copy_from(&(&a * tau));
            j.view_mut((0, n), (n, n)).copy_from(&(DMatrix::identity(n, n) + &d * tau));
        } else {
            j.view_mut((0, n), (n, n)).fill_with_identity();
        }
        j.view_mut((n, 0), (n, n)).copy_from(&a);
        j.view_mut((n, n), (n, n)).copy_from(&d);
        j
    }

    /// The map x(k) → x(k+1) of one step T of `tab`, stage by stage as in (13).
    pub fn step_map(&self, tab: &Tableau, step: f64) -> DMatrix<f64> {
        compose_step_map(2 * self.dim(), tab, step, |tau| self.rate(tau))
    }

    /// Spectral radius of the step map ([`spectral_radius`]): `None` when it cannot be
    /// decided (the eigenvalue iteration did not converge within its bound).
    pub fn radius(&self, tab: &Tableau, step: f64) -> Option<f64> {
        spectral_radius(self.step_map(tab, step))
    }

    /// Whether the step map is stable (ρ ≤ 1, with a margin for rounding); `None` when ρ
    /// cannot be decided.
    pub fn stable(&self, tab: &Tableau, step: f64) -> Option<bool> {
        self.radius(tab, step).map(|r| r <= STABLE_RADIUS)
    }

    /// As [`PortModel::largest_stable_step`]; a step whose radius cannot be decided counts
    /// as not stable, so the step returned is always one proven stable.
    pub fn largest_stable_step(&self, tab: &Tableau, step: f64) -> Option<f64> {
        largest_stable(|t| self.stable(tab, t) == Some(true), step)
    }
}

/// Iterations of the shifted QR (Schur) sweeps allowed per row of the matrix. LAPACK's
/// `dhseqr` allows 30 per eigenvalue; a well-scaled matrix needs 2 to 4.
const QR_SWEEPS_PER_ROW: usize = 100;

/// Spectral radius of a square matrix by its real Schur form, in a bounded time: the
/// implicit double-shift QR runs at most `QR_SWEEPS_PER_ROW` sweeps per row, on the
/// matrix balanced first (`balance`: a diagonal similarity by powers of 2, so the
/// eigenvalues are unchanged and exact), and if that does not converge, on the matrix as
/// it is (each converges on some maps where the other stalls). `None` if an entry is not
/// finite or neither converges: the radius is then not decided.
///
/// nalgebra's `complex_eigenvalues` iterates without a bound: on the step maps of
/// examples/two_link_fricK.json with fric1.B = 1e15 at the trial steps T ≈ 2e-17 … 4e-16 s
/// of the largest-stable-step search (entries from 1e-31 to 1e8) it never returned, which
/// is why `check` ran for more than ten minutes (issue 33).
pub fn spectral_radius(m: DMatrix<f64>) -> Option<f64> {
    if !m.iter().all(|v| v.is_finite()) {
        return None;
    }
    let limit = QR_SWEEPS_PER_ROW * m.nrows().max(1);
    let mut balanced = m.clone();
    balance(&mut balanced);
    let schur = nalgebra::linalg::Schur::try_new(balanced, f64::EPSILON, limit)
        .or_else(|| nalgebra::linalg::Schur::try_new(m, f64::EPSILON, limit))?;
    let r = schur.complex_eigenvalues().iter().map(|l| l.norm()).fold(0.0, f64::max);
    r.is_finite().then_some(r)
}

/// Balance `m` in place (Parlett & Reinsch, as LAPACK's `dgebal` without permutations): scale
/// row i by 1/f and column i by f, f a power of 2, until each row and column have norms
/// within a factor 2 of each other. A similarity, exact in floating point, that brings the
/// entries of a badly scaled matrix together so that QR converges and the eigenvalues are
/// accurate. At most 64 sweeps; each factor's search is bounded by the exponent range.
fn balance(m: &mut DMatrix<f64>) {
    let n = m.nrows();
    for _ in 0..64 {
        let mut done = true;
        for i in 0..n {
            let (mut c, mut r) = (0.0, 0.0);
            for j in (0..n).filter(|&j| j != i) {
                c += m[(j, i)].abs();
                r += m[(i, j)].abs();
            }
            if c == 0.0 || r == 0.0 || !(c + r).is_finite() {
                continue;
            }
            let s = c + r;
            let mut f = 1.0f64;
            while c < r / 2.0 && f < 1e150 {
                c *= 4.0;
                f *= 2.0;
            }
            while c >= r * 2.0 && f > 1e-150 {
                c /= 4.0;
                f /= 2.0;
            }
            if (c + r) / f < 0.95 * s {
                done = false;
                let g = 1.0 / f;
                m.row_mut(i).scale_mut(g);
                m.column_mut(i).scale_mut(f);
            }
        }
        if done {
            break;
        }
    }
}

/// What the analysis found at the coupled ports of one admittance.
#[derive(Clone, Debug, PartialEq)]
pub struct CoupledFinding {
    pub admittance: String,
    /// (port, impedance name, its spring) of every attachment.
    pub impedances: Vec<(usize, String, StageSpring)>,
    pub model: CoupledModel,
    /// ρ of the step map, `None` if it could not be decided ([`spectral_radius`]).
    pub radius: Option<f64>,
    pub largest_stable_step: Option<f64>,
}

/// What the analysis found at one admittance port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortFinding {
    pub admittance: String,
    pub port: usize,
    /// The attached impedances with their stuck-state spring–dampers.
    pub impedances: Vec<(String, StageSpring)>,
    pub model: PortModel,
    pub radius: f64,
    pub largest_stable_step: Option<f64>,
}

/// What the analysis found for two admittance ports joined by springs ([`analyse_pairs`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PairFinding {
    /// (admittance, port) of each side.
    pub a: (String, usize),
    pub b: (String, usize),
    /// The joining impedances with their stuck-state spring–dampers, in network order.
    pub impedances: Vec<(String, StageSpring)>,
    /// The model of the largest radius: the two inertias with their springs (translational,
    /// or the effective masses at one contact, see [`PairFinding::contact`]).
    pub model: PairModel,
    /// When the model of the largest radius is one contact alone on the bodies' effective
    /// masses at its point: that contact and its direction.
    pub contact: Option<(String, Direction)>,
    pub radius: f64,
    pub largest_stable_step: Option<f64>,
}

/// The direction of a contact model: along the contact normal, or the tangent direction in
/// which the two bodies' effective masses at the contact point are smallest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Normal,
    Tangential,
}

impl Direction {
    fn name(self) -> &'static str {
        match self {
            Direction::Normal => "normal",
            Direction::Tangential => "tangential",
        }
    }
}

/// The inverse effective-mass matrix W of one body at world point `x`: dᵀ W d = 1/m_eff(d)
/// = 1/m + (r × d)ᵀ I⁻¹ (r × d), r = x − c, so W = I₃/m + \[r\]ₓᵀ I⁻¹ \[r\]ₓ; a port without
/// a rigid body (`None`) gives I₃/m with m its translational inertia.
pub fn contact_inverse_mass(rigid: Option<&RigidInertia>, mass: f64, x: &Vector3<f64>) -> Matrix3<f64> {
    match rigid {
        Some(b) => {
            let c = (x - b.com).cross_matrix();
            Matrix3::identity() / b.mass + c.transpose() * b.inertia_inv * c
        }
        None => Matrix3::identity() / mass,
    }
}

/// The directions of a contact with normal `n` and inverse effective masses `w` (the two
/// bodies' [`contact_inverse_mass`]) that the analysis takes: n, and the unit tangent d ⊥ n
/// that maximises dᵀ (W_a + W_b) d (the largest eigenvector of the 2×2 tangential block).
fn contact_directions(n: &Vector3<f64>, w: &[Matrix3<f64>; 2]) -> [(Direction, Vector3<f64>); 2] {
    let a = if n.x.abs() > 0.9 { Vector3::y() } else { Vector3::x() };
    let t1 = (a - n * n.dot(&a)).normalize();
    let t2 = n.cross(&t1);
    let sum = w[0] + w[1];
    let (a11, a12, a22) = ((sum * t1).dot(&t1), (sum * t2).dot(&t1), (sum * t2).dot(&t2));
    // The eigenvector of the larger eigenvalue of [[a11, a12], [a12, a22]] at angle θ.
    let theta = 0.5 * (2.0 * a12).atan2(a11 - a22);
    [(Direction::Normal, *n), (Direction::Tangential, t1 * theta.cos() + t2 * theta.sin())]
}

/// The (admittance, port) at each end of a pair, in order.
type PairEnds = [(usize, usize); 2];

/// One analysed pair: the two (admittance, port) ends, the joining impedances, the model, ρ
/// and the largest stable step.
struct PairResult {
    ends: PairEnds,
    imps: Vec<(usize, StageSpring)>,
    model: PairModel,
    /// The contact (impedance) and direction of `model`, if it is a contact model.
    contact: Option<(usize, Direction)>,
    radius: f64,
    largest_stable_step: Option<f64>,
}

/// Two admittance ports (inertias m_a, m_b) joined by spring–dampers K_ab, B_ab (+ τK_ab
/// implicit), each also held by its other attachments (K_a, K_b, the far ends still),
/// linearised in the stuck state along one direction:
///
/// ```text
///   M v̇ = −K q − (B + τ K_implicit) v,   M = diag(m_a, m_b),   K = [K_a + K_ab, −K_ab; −K_ab, K_b + K_ab]
/// ```
///
/// (B and K_implicit alike), q̇ = v (or v + τ v̇ per port). The 4×4 step map is composed as
/// in [`PortModel::step_map`] and its spectral radius taken as in [`CoupledModel`].
#[derive(Clone, Debug, PartialEq)]
pub struct PairModel {
    /// m_a, m_b.
    pub inertia: [f64; 2],
    /// The port models of a and b without the joining springs (their other attachments).
    pub own: [PortModel; 2],
    /// The sum of the joining springs.
    pub joint: PortModel,
    /// The two solve their stage together (stepper/coupling.rs: bodies joined by coupled
    /// elements, a group): the coupled joint's B + τK enters both rows at once,
    /// [M_a + τ(c_a + c), −τc; −τc, M_b + τ(c_b + c)] v̇ = forces; else each mass divides by
    /// its own M + τ(c_own + c) with the other at its stage motion.
    pub grouped: bool,
}

impl PairModel {
    /// The stage rate ξ = J(τ) x, x = (q_a, q_b, v_a, v_b).
    fn rate(&self, tau: f64) -> DMatrix<f64> {
        let mut j = DMatrix::zeros(4, 4);
        let c = &self.joint;
        let joint = tau * (c.b_coupled + tau * c.k_coupled);
        let mut m = [0.0; 2];
        for i in 0..2 {
            let o = &self.own[i];
            // The mass with the coupled elements on its side and between (Admittance::implicit_rate).
            m[i] = self.inertia[i] + tau * (o.b_coupled + c.b_coupled + tau * (o.k_coupled + c.k_coupled));
            // Row of v̇_i: −(K_i + K_ab) q_i + K_ab q_other − (D_i + D_ab) v_i + D_ab v_other.
            let (k, d) = (c.k, c.b + tau * c.k_implicit);
            let (ko, dd) = (o.k, o.b + tau * o.k_implicit);
            j[(2 + i, i)] = -(ko + k) / m[i];
            j[(2 + i, 1 - i)] = k / m[i];
            j[(2 + i, 2 + i)] = -(dd + d) / m[i];
            j[(2 + i, 3 - i)] = d / m[i];
        }
        if self.grouped && joint != 0.0 {
            // Solved together: the rows above hold M_i⁻¹ n_i with M_i the diagonal of the
            // pair's stage matrix; with its off-diagonal −τc, v̇ = A⁻¹ n.
            let det = m[0] * m[1] - joint * joint;
            for col in 0..4 {
                let (n0, n1) = (j[(2, col)] * m[0], j[(3, col)] * m[1]);
                j[(2, col)] = (m[1] * n0 + joint * n1) / det;
                j[(3, col)] = (joint * n0 + m[0] * n1) / det;
            }
        }
        for i in 0..2 {
            if self.own[i].implicit_position {
                for col in 0..4 {
                    j[(i, col)] = tau * j[(2 + i, col)];
                }
                j[(i, 2 + i)] += 1.0;
            } else {
                j[(i, 2 + i)] = 1.0;
            }
        }
        j
    }

    /// The map x(k) → x(k+1) of one step T of `tab`, stage by stage as in (13).
    pub fn step_map(&self, tab: &Tableau, step: f64) -> DMatrix<f64> {
        compose_step_map(4, tab, step, |tau| self.rate(tau))
    }

    /// Spectral radius of the step map, `None` when it cannot be decided. A free pair (no
    /// other attachment on either side, the same position rate) is its relative mode
    /// ([`free_relative`](Self::free_relative)) and the common mode, whose step map has the
    /// double eigenvalue 1 exactly: ρ = max(1, ρ_relative). (The 4×4 map's computed
    /// eigenvalues split that defective pair by ≈ √ε·T, which the margin of 1 + 1e-9 does not
    /// cover: the search then stopped a few per cent short of the limit.)
    pub fn radius(&self, tab: &Tableau, step: f64) -> Option<f64> {
        if let Some(rel) = self.free_relative() {
            let r = rel.radius(tab, step);
            return r.is_finite().then_some(r.max(1.0));
        }
        spectral_radius(self.step_map(tab, step))
    }

    /// For a free pair (no spring or damper on either side but the joining ones, both
    /// positions with the same rate law): the relative motion q_a − q_b as one port model,
    /// the inertias in series on the joining springs; `None` otherwise.
    pub fn free_relative(&self) -> Option<PortModel> {
        let free = |o: &PortModel| o.k == 0.0 && o.b == 0.0 && o.k_implicit == 0.0;
        let [a, b] = &self.own;
        // Coupled masses divide by their own M + τD each: no one inertia in series.
        let coupled = self.joint.k_coupled != 0.0 || self.joint.b_coupled != 0.0;
        (free(a) && free(b) && !coupled && a.implicit_position == b.implicit_position).then_some(PortModel {
            inertia: self.reduced_inertia(),
            implicit_position: a.implicit_position,
            ..self.joint
        })
    }

    /// As [`CoupledModel::largest_stable_step`].
    pub fn largest_stable_step(&self, tab: &Tableau, step: f64) -> Option<f64> {
        largest_stable(|t| self.radius(tab, t).is_some_and(|r| r <= STABLE_RADIUS), step)
    }

    /// The model's bits, as a [`Memo`] key.
    fn key(&self) -> [u64; 24] {
        let mut k = [0; 24];
        k[23] = self.grouped as u64;
        k[0] = self.inertia[0].to_bits();
        k[1] = self.inertia[1].to_bits();
        for (i, m) in [&self.own[0], &self.own[1], &self.joint].into_iter().enumerate() {
            k[2 + 7 * i..9 + 7 * i].copy_from_slice(&m.key());
        }
        k
    }

    /// The inertias in series, m_a m_b/(m_a + m_b), of the relative mode.
    pub fn reduced_inertia(&self) -> f64 {
        self.inertia[0] * self.inertia[1] / (self.inertia[0] + self.inertia[1])
    }
}

/// The pairs of admittance ports joined by impedances with a stuck-state spring (each with
/// exactly two ports on two different admittances), every joining spring added, analysed as
/// the relative motion of the two inertias in series (see the module doc). Every pair is
/// counted in `tally`; the results whose radius `keep` accepts are returned, in the order of
/// their ends.
#[allow(clippy::too_many_arguments)]
fn pair_results(
    sched: &Schedule,
    att: &Attached,
    bases: &PortBases,
    x: &[f64],
    method: Method,
    step: f64,
    keep: impl Fn(f64) -> bool,
    tally: &mut Tally<PairEnds>,
) -> Vec<PairResult> {
    let mut memo = Memo::new();
    let mut out = Vec::new();
    let mut imps: Vec<(usize, StageSpring)> = Vec::new();
    // Per admittance j, its springs to an admittance after it as (its port, the other end,
    // the impedance), in network order, then grouped by ends (a stable sort): the pairs come
    // in the order of their ends with no list of all of them (only `Attached`).
    let mut local: Vec<(usize, (usize, usize), usize)> = Vec::new();
    for j in 0..att.admittances() {
        if crate::cancel::requested() {
            break;
        }
        local.clear();
        for a in att.of(j) {
            let mut ends = sched.impedance_ports(a.imp);
            let (Some(p), Some(q), None) = (ends.next(), ends.next(), ends.next()) else { continue };
            let other = if p.0 == j { q } else { p };
            if other.0 > j {
                local.push((a.port, other, a.imp));
            }
        }
        local.sort_by_key(|l| (l.0, l.1));
        for group in local.chunk_by(|p, q| (p.0, p.1) == (q.0, q.1)) {
            let ends: PairEnds = [(j, group[0].0), group[0].1];
            imps.clear();
            imps.extend(group.iter().filter_map(|&(_, _, imp)| Some((imp, att.spring(imp)?))));
            analyse_pair(sched, att, bases, x, method, step, ends, &imps, &mut memo, tally, &keep, &mut out);
        }
    }
    out
}

/// The pair `ends` joined by `imps` ([`pair_results`]).
#[allow(clippy::too_many_arguments)]
fn analyse_pair(
    sched: &Schedule,
    att: &Attached,
    bases: &PortBases,
    x: &[f64],
    method: Method,
    step: f64,
    ends: PairEnds,
    imps: &[(usize, StageSpring)],
    memo: &mut Memo<24, (Option<f64>, Option<f64>)>,
    tally: &mut Tally<PairEnds>,
    keep: &impl Fn(f64) -> bool,
    out: &mut Vec<PairResult>,
) {
    let tab = method.tableau();
    let side = |(j, port): (usize, usize)| {
        let mut own = bases.own(sched, j, port)?;
        for a in att.at(j, port).filter(|a| !imps.iter().any(|(i, _)| *i == a.imp)) {
            own.add(a.spring);
        }
        if bases.base(sched, j, port).rigid {
            own.inertia = own.inertia.min(lever_inertia(sched, att, x, (j, port)));
        }
        Some(own)
    };
    let (Some(oa), Some(ob)) = (side(ends[0]), side(ends[1])) else { return };
    let mut joint = PortModel { inertia: 1.0, k: 0.0, b: 0.0, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false };
    for (_, s) in imps {
        joint.add(*s);
    }
    // Bodies the stepper solves together (stepper/coupling.rs): joined by a coupled element,
    // each end a body that can take part through that port: the only one of its admittance
    // holding coupled elements, or each such port a point of its mechanism.
    let grouped = (joint.k_coupled != 0.0 || joint.b_coupled != 0.0)
        && ends.iter().all(|&(j, port)| {
            let xs = &x[sched.adm_x[j]..sched.adm_x[j + 1]];
            let mut coupled: Vec<usize> = att.of(j).filter(|a| a.spring.coupled).map(|a| a.port).collect();
            coupled.sort_unstable();
            coupled.dedup();
            let takes_part = coupled.iter().all(|&q| q == port) || sched.mechanism_points(x, j, &coupled);
            takes_part && sched.adm[j].stage_body(xs, &vec![0.0; xs.len()], port).is_some_and(|b| !b.prescribed)
        });
    let model = PairModel { inertia: [oa.inertia, ob.inertia], own: [oa, ob], joint, grouped };
    let mut models = vec![(None, model)];
    if ends.iter().any(|&(j, port)| bases.base(sched, j, port).rigid) {
        models.extend(contact_models(sched, x, &ends, imps, [oa, ob]));
    }
    for (_, m) in &mut models {
        m.grouped = grouped;
    }
    // The largest radius (any undecided: undecided), the smallest largest stable step;
    // each distinct model analysed once ([`Memo`]).
    let (mut worst, mut radius, mut largest_stable_step) = (0, 0.0f64, Some(step));
    for (k, (_, m)) in models.iter().enumerate() {
        let (r, limit) = memo.get(m.key(), || {
            let r = m.radius(tab, step);
            (r, r.filter(|r| *r > STABLE_RADIUS).and_then(|_| m.largest_stable_step(tab, step)))
        });
        let Some(r) = r else {
            (worst, radius, largest_stable_step) = (k, f64::NAN, None);
            break;
        };
        if r > radius {
            (worst, radius) = (k, r);
        }
        if r > STABLE_RADIUS {
            largest_stable_step = match (largest_stable_step, limit) {
                (Some(a), Some(b)) => Some(a.min(b)),
                _ => None,
            };
        }
    }
    tally.see(radius, || ends);
    if keep(radius) {
        let (contact, model) = models.swap_remove(worst);
        out.push(PairResult { ends, imps: imps.to_vec(), model, contact, radius, largest_stable_step });
    }
}

/// The models of each joining contact alone on the two bodies' effective masses at its
/// point, along its normal and its softest tangent ([`contact_directions`]), each body also
/// held by its other attachments `own` (see the module doc); none unless a side is a rigid
/// body ([`Admittance::port_rigid_inertia`](crate::component::Admittance::port_rigid_inertia)).
fn contact_models(
    sched: &Schedule,
    x: &[f64],
    ends: &PairEnds,
    imps: &[(usize, StageSpring)],
    own: [PortModel; 2],
) -> Vec<(Option<(usize, Direction)>, PairModel)> {
    let rigid = ends.map(|(j, port)| sched.admittance(j).port_rigid_inertia(sched.admittance_state(j, x), port));
    if rigid.iter().all(Option::is_none) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for &(imp, spring) in imps {
        let Some(ContactPoint { point, normal }) = sched.impedance(imp).stuck_contact(&sched.impedance_motions(imp, x))
        else {
            continue;
        };
        let w = [0, 1].map(|s| contact_inverse_mass(rigid[s].as_ref(), own[s].inertia, &point));
        for (dir, d) in contact_directions(&normal, &w) {
            let inertia = w.map(|w| 1.0 / (w * d).dot(&d));
            if !inertia.iter().all(|m| m.is_finite() && *m > 0.0) {
                continue;
            }
            let own = [0, 1].map(|s| PortModel { inertia: inertia[s], ..own[s] });
            let mut joint = PortModel { inertia: 1.0, k: 0.0, b: 0.0, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false };
            joint.add(spring);
            out.push((Some((imp, dir)), PairModel { inertia, own, joint, grouped: false }));
        }
    }
    out
}

/// Analyse every pair of admittance ports joined by spring–dampers (contacts between
/// bodies, springs between masses) at state `x`: the relative motion of their inertias in
/// series on the joining springs.
pub fn analyse_pairs(sched: &Schedule, x: &[f64], method: Method, step: f64) -> Vec<PairFinding> {
    let (adm, imp) = (sched.admittance_names(), sched.impedance_names());
    pair_results(sched, &Attached::new(sched), &PortBases::new(sched, x, method), x, method, step, |_| true, &mut Tally::new())
        .into_iter()
        .map(|r| PairFinding {
            a: (adm[r.ends[0].0].to_string(), r.ends[0].1),
            b: (adm[r.ends[1].0].to_string(), r.ends[1].1),
            impedances: r.imps.iter().map(|(i, s)| (imp[*i].to_string(), *s)).collect(),
            model: r.model,
            contact: r.contact.map(|(i, d)| (imp[i].to_string(), d)),
            radius: r.radius,
            largest_stable_step: r.largest_stable_step,
        })
        .collect()
}

/// One stuck-state spring–damper attached to an admittance port.
#[derive(Clone, Copy)]
struct Attachment {
    port: usize,
    /// The impedance (schedule index).
    imp: usize,
    spring: StageSpring,
}

/// The stuck-state spring–dampers attached to every admittance, grouped by admittance and in
/// network order within one: a flat list of (port, impedance) in 8 bytes each (no list per
/// port, no names copied), and each impedance's spring asked once and kept in a table of
/// the distinct ones (10⁵ alike springs are one entry).
struct Attached {
    list: Vec<[u32; 2]>,
    /// Admittance j's attachments are `list[start[j]..start[j + 1]]`.
    start: Vec<u32>,
    /// Per impedance (schedule index), its spring's index in `springs`, or `u32::MAX`.
    spring_of: Vec<u32>,
    springs: Vec<StageSpring>,
}

/// The stuck-state spring of every impedance ([`Impedance::stuck_spring`](crate::component::Impedance::stuck_spring)), each distinct one
/// kept once: recorded impedance by impedance by whoever walks the impedances anyway (the
/// elements' own warnings in `system::diagnostics`), so that the analyses do not walk them
/// again (for 10⁵ impedances each walk is 10⁵ cache misses).
pub struct Springs {
    /// Per impedance (schedule index), its spring's index in `springs`, or `u32::MAX`.
    spring_of: Vec<u32>,
    springs: Vec<StageSpring>,
    ids: std::collections::HashMap<[u64; 3], u32, foldhash::fast::FixedState>,
}

impl Springs {
    /// Room for the impedances of `sched`, none recorded.
    pub fn new(sched: &Schedule) -> Springs {
        // A system file holds at most 256 MiB (system/limits.rs), so fewer than 2³² components.
        Springs { spring_of: vec![u32::MAX; sched.impedance_names().len()], springs: Vec::new(), ids: Default::default() }
    }

    /// Every impedance of `sched` recorded.
    pub fn of(sched: &Schedule) -> Springs {
        let mut s = Springs::new(sched);
        for &imp in sched.impedances_in_network_order() {
            s.record(imp, sched.impedance(imp).stuck_spring());
        }
        s
    }

    /// Record impedance `imp`'s (schedule index) stuck-state spring.
    pub fn record(&mut self, imp: usize, spring: Option<StageSpring>) {
        let Some(s) = spring else { return };
        let key = |s: &StageSpring| [s.k.to_bits(), s.b.to_bits(), s.implicit as u64];
        // Most systems have a few kinds of spring: they are searched in the list first, and
        // the table is filled only past a few.
        const LISTED: usize = 8;
        let k = key(&s);
        let springs = &mut self.springs;
        self.spring_of[imp] = match springs.iter().take(LISTED).position(|t| key(t) == k) {
            Some(id) => id as u32,
            None if springs.len() < LISTED => {
                springs.push(s);
                springs.len() as u32 - 1
            }
            None => *self.ids.entry(k).or_insert_with(|| {
                springs.push(s);
                springs.len() as u32 - 1
            }),
        };
    }
}

impl Attached {
    fn new(sched: &Schedule) -> Self {
        Self::with(sched, Springs::of(sched))
    }

    fn with(sched: &Schedule, springs: Springs) -> Self {
        let n = sched.admittance_names().len();
        let Springs { spring_of, springs, .. } = springs;
        let spring_of_ref = &spring_of;
        let attachments =
            || {
                sched.impedances_in_network_order().iter().filter(|&&imp| spring_of_ref[imp] != u32::MAX).flat_map(
                    |&imp| sched.impedance_ports(imp).map(move |(adm, port)| (adm, [port as u32, imp as u32])),
                )
            };
        // Counted, then placed by admittance, in network order within one (two passes over
        // the impedances: no list of (admittance, attachment) beside the result; `start`
        // serves as the fill pointers, then is shifted back).
        let mut start = vec![0u32; n + 1];
        for (adm, _) in attachments() {
            start[adm + 1] += 1;
        }
        for j in 0..n {
            start[j + 1] += start[j];
        }
        let mut list = vec![[0; 2]; start[n] as usize];
        for (adm, a) in attachments() {
            list[start[adm] as usize] = a;
            start[adm] += 1;
        }
        // start[j] is now where admittance j + 1 begins.
        start.rotate_right(1);
        start[0] = 0;
        Attached { list, start, spring_of, springs }
    }

    /// How many admittances there are.
    fn admittances(&self) -> usize {
        self.start.len() - 1
    }

    /// The stuck-state spring of impedance `imp` (schedule index), if it has one.
    fn spring(&self, imp: usize) -> Option<StageSpring> {
        self.springs.get(*self.spring_of.get(imp)? as usize).copied()
    }

    /// Admittance j's attachments, in network order.
    fn of(&self, j: usize) -> impl Iterator<Item = Attachment> + '_ {
        self.list[self.start[j] as usize..self.start[j + 1] as usize].iter().filter_map(|&[port, imp]| {
            let (port, imp) = (port as usize, imp as usize);
            Some(Attachment { port, imp, spring: self.spring(imp)? })
        })
    }

    /// The ports of admittance j with attachments, in the order of their first attachment.
    fn ports(&self, j: usize, out: &mut Vec<usize>) {
        out.clear();
        for &[port, _] in &self.list[self.start[j] as usize..self.start[j + 1] as usize] {
            if !out.contains(&(port as usize)) {
                out.push(port as usize);
            }
        }
    }

    /// The attachments of port `port` of admittance j, in network order.
    fn at(&self, j: usize, port: usize) -> impl Iterator<Item = Attachment> + '_ {
        self.of(j).filter(move |a| a.port == port)
    }
}

/// What the analyses read of every admittance port, gathered in one pass over the
/// admittances. A dynamic call on a component reads its memory, a cache miss each for 10⁵
/// components; the ports' inertias are read by the elements' own warnings, the port models
/// and both ends of every pair, so they are read once here.
pub struct PortBases {
    /// Per admittance port (`Schedule::adm_ports[j] + port`).
    bases: Vec<PortBase>,
    /// The internal springs ([`Admittance::internal_spring`](crate::component::Admittance::internal_spring)) the bases point to.
    internal: Vec<StageSpring>,
}

/// [`PortBases`] of one port: its inertia (`has_inertia` false: none), whether its admittance
/// has the implicit position rate, whether it is a rigid body's, and its internal spring (an
/// index, or `u32::MAX`).
#[derive(Clone, Copy)]
struct PortBase {
    inertia: f64,
    has_inertia: bool,
    implicit_position: bool,
    /// Whether it is a rigid body's ([`Admittance::port_rigid_inertia`](crate::component::Admittance::port_rigid_inertia)).
    rigid: bool,
    internal: u32,
}

impl PortBases {
    /// Every port of every admittance of `sched` at state `x`, under `method`.
    pub fn new(sched: &Schedule, x: &[f64], method: Method) -> PortBases {
        let n = sched.adm_ports.last().copied().unwrap_or(0);
        let (mut bases, mut internal) = (Vec::with_capacity(n), Vec::new());
        for j in 0..sched.adm.len() {
            let (adm, xa) = (sched.admittance(j), sched.admittance_state(j, x));
            let implicit_position = adm.implicit_position(method);
            for port in 0..sched.adm_ports[j + 1] - sched.adm_ports[j] {
                let inertia = adm.port_inertia(xa, port);
                let spring = adm.internal_spring(port);
                bases.push(PortBase {
                    inertia: inertia.unwrap_or(0.0),
                    has_inertia: inertia.is_some(),
                    implicit_position,
                    rigid: adm.port_rigid_inertia(xa, port).is_some(),
                    internal: spring.map_or(u32::MAX, |s| {
                        internal.push(s);
                        internal.len() as u32 - 1
                    }),
                });
            }
        }
        PortBases { bases, internal }
    }

    fn base(&self, sched: &Schedule, j: usize, port: usize) -> PortBase {
        self.bases[sched.adm_ports[j] + port]
    }

    /// [`Admittance::port_inertia`](crate::component::Admittance::port_inertia) of port `port` of admittance `j`.
    pub fn inertia(&self, sched: &Schedule, j: usize, port: usize) -> Option<f64> {
        let b = self.base(sched, j, port);
        b.has_inertia.then_some(b.inertia)
    }

    /// The inertias ([`Admittance::port_inertia`](crate::component::Admittance::port_inertia))
    /// at impedance `i`'s ports, in port order (`None`: grounded, or none), into `out`.
    pub fn inertias_into(&self, sched: &Schedule, i: usize, out: &mut Vec<Option<f64>>) {
        out.clear();
        out.extend(sched.impedance_attachments_iter(i).map(|a| a.and_then(|(j, port)| self.inertia(sched, j, port))));
    }

    /// The model of port `port` of admittance `j` on its own, with its internal spring: its
    /// positive finite inertia, or `None`.
    fn own(&self, sched: &Schedule, j: usize, port: usize) -> Option<PortModel> {
        let b = self.base(sched, j, port);
        let m = Some(b.inertia).filter(|m| b.has_inertia && m.is_finite() && *m > 0.0)?;
        let mut own = PortModel { inertia: m, k: 0.0, b: 0.0, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: b.implicit_position };
        if let Some(s) = self.internal.get(b.internal as usize) {
            own.add(*s);
        }
        Some(own)
    }
}

/// The inertia matrix of admittance `j` at `x`, if it couples its ports 0..n (n ≥ 2) and is
/// finite.
fn inertia_matrix(sched: &Schedule, j: usize, x: &[f64]) -> Option<DMatrix<f64>> {
    let (n, h) = sched.admittance(j).inertia_matrix(sched.admittance_state(j, x))?;
    (n >= 2 && h.len() == n * n && h.iter().all(|v| v.is_finite())).then(|| DMatrix::from_row_slice(n, n, &h))
}

/// One analysed admittance port: admittance, port, model, ρ, largest stable step.
struct PortResult {
    adm: usize,
    port: usize,
    model: PortModel,
    radius: f64,
    largest_stable_step: Option<f64>,
}

/// Analyse every port of [`Attached`] outside an inertia matrix ([`analyse`]); every port is
/// counted in `tally` and the results whose radius `keep` accepts are returned.
#[allow(clippy::too_many_arguments)]
fn analyse_ports(
    sched: &Schedule,
    att: &Attached,
    bases: &PortBases,
    x: &[f64],
    method: Method,
    step: f64,
    keep: impl Fn(f64) -> bool,
    tally: &mut Tally<usize>,
) -> Vec<PortResult> {
    let tab = method.tableau();
    let mut memo = Memo::new();
    let mut out = Vec::new();
    let mut ports = Vec::new();
    for j in 0..att.admittances() {
        if crate::cancel::requested() {
            break;
        }
        att.ports(j, &mut ports);
        if ports.is_empty() {
            continue;
        }
        let coupled = inertia_matrix(sched, j, x).map_or(0, |h| h.nrows());
        for &port in ports.iter().filter(|p| **p >= coupled) {
            let Some(mut model) = bases.own(sched, j, port) else { continue };
            for a in att.at(j, port) {
                model.add(a.spring);
            }
            if bases.base(sched, j, port).rigid {
                model.inertia = model.inertia.min(lever_inertia(sched, att, x, (j, port)));
            }
            let radius = model.radius(tab, step);
            // As `model.largest_stable_step`, whose first test is this radius; none is
            // searched for when the radius is not decided (NaN from overflow).
            let largest_stable_step = if radius <= STABLE_RADIUS {
                Some(step)
            } else if radius.is_nan() {
                None
            } else {
                memo.get(model.key(), || model.largest_stable_step(tab, step))
            };
            tally.see(radius, || j);
            if keep(radius) {
                out.push(PortResult { adm: j, port, model, radius, largest_stable_step });
            }
        }
    }
    out
}

/// The smallest effective mass a rigid body's frame port (j, port) shows at the points its
/// springs other than contacts are attached at (a penalty joint's articulation point,
/// an element at an offset): 1/m_eff = 1/m + λ_max([r]ₓ I⁻¹ [r]ₓᵀ), r from the centre of
/// mass, as the stepper's coupling decision takes it; the body's mass where every spring
/// acts at its centre (contacts are analysed with their levers in their groups).
fn lever_inertia(sched: &Schedule, att: &Attached, x: &[f64], (j, port): (usize, usize)) -> f64 {
    let Some(body) = sched.admittance(j).port_rigid_inertia(sched.admittance_state(j, x), port) else { return f64::INFINITY };
    let mut least = body.mass;
    for a in att.at(j, port).filter(|a| !sched.impedance(a.imp).is_body_contact()) {
        let slots = sched.impedance_attachments_iter(a.imp).zip(sched.imp_slots[a.imp]..sched.imp_slots[a.imp + 1]);
        for (_, slot) in slots.filter(|(at, _)| *at == Some((j, port))) {
            let rx = (sched.motion(&x[..sched.nx], slot).p - body.com).cross_matrix();
            let top = largest_symmetric_eigenvalue(&(rx * body.inertia_inv * rx.transpose()));
            least = least.min(1.0 / (1.0 / body.mass + top));
        }
    }
    least
}

/// The largest eigenvalue of a symmetric 3×3 matrix, in closed form (the trigonometric
/// solution of its characteristic cubic): a port analysis asks it per attachment point.
fn largest_symmetric_eigenvalue(a: &Matrix3<f64>) -> f64 {
    let off = a[(0, 1)].powi(2) + a[(0, 2)].powi(2) + a[(1, 2)].powi(2);
    let q = a.trace() / 3.0;
    if off == 0.0 {
        return a[(0, 0)].max(a[(1, 1)]).max(a[(2, 2)]);
    }
    let p2 = (a[(0, 0)] - q).powi(2) + (a[(1, 1)] - q).powi(2) + (a[(2, 2)] - q).powi(2) + 2.0 * off;
    let p = (p2 / 6.0).sqrt();
    let b = (a - Matrix3::identity() * q) / p;
    let phi = (b.determinant() / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    q + 2.0 * p * phi.cos()
}

/// Analyse every admittance port that has spring–dampers attached, at state `x` (the initial
/// state), for `method` and step T; the ports coupled through an inertia matrix are left to
/// [`analyse_coupled`].
pub fn analyse(sched: &Schedule, x: &[f64], method: Method, step: f64) -> Vec<PortFinding> {
    let att = Attached::new(sched);
    let names = sched.impedance_names();
    analyse_ports(sched, &att, &PortBases::new(sched, x, method), x, method, step, |_| true, &mut Tally::new())
        .into_iter()
        .map(|r| PortFinding {
            admittance: sched.admittance_names()[r.adm].to_string(),
            port: r.port,
            impedances: att.at(r.adm, r.port).map(|a| (names[a.imp].to_string(), a.spring)).collect(),
            model: r.model,
            radius: r.radius,
            largest_stable_step: r.largest_stable_step,
        })
        .collect()
}

/// Analyse together the ports 0..n of every admittance with an
/// [inertia matrix](crate::component::Admittance::inertia_matrix) that has spring–dampers
/// attached to them ([`CoupledModel`]).
pub fn analyse_coupled(sched: &Schedule, x: &[f64], method: Method, step: f64) -> Vec<CoupledFinding> {
    coupled_findings(sched, &Attached::new(sched), x, method, step)
}

fn coupled_findings(sched: &Schedule, att: &Attached, x: &[f64], method: Method, step: f64) -> Vec<CoupledFinding> {
    let tab = method.tableau();
    let mut out = Vec::new();
    let mut ports = Vec::new();
    for j in 0..att.admittances() {
        if crate::cancel::requested() {
            break;
        }
        let Some(h) = inertia_matrix(sched, j, x) else { continue };
        let n = h.nrows();
        let adm = sched.admittance(j);
        let (mut k, mut b, mut ki) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let (mut kc, mut bc) = (vec![0.0; n], vec![0.0; n]);
        let mut impedances = Vec::new();
        att.ports(j, &mut ports);
        for &port in ports.iter().filter(|p| **p < n) {
            let list = att.at(j, port).map(|a| (sched.impedance_names()[a.imp].to_string(), a.spring));
            let internal = adm.internal_spring(port).map(|s| ("(internal)".to_string(), s));
            for (name, s) in list.chain(internal) {
                k[port] += s.k;
                b[port] += s.b;
                if s.implicit {
                    ki[port] += s.k;
                }
                if s.coupled {
                    kc[port] += s.k;
                    bc[port] += s.b;
                }
                impedances.push((port, name, s));
            }
        }
        if impedances.is_empty() {
            continue;
        }
        let Some(model) = CoupledModel::new(h.clone(), k, b, ki, adm.implicit_position(method)) else { continue };
        let model = model.with_coupled(h, kc, bc);
        let radius = model.radius(tab, step);
        // Stable at T: T itself; undecided at T: no search (each trial could be as hard).
        let largest_stable_step = match radius {
            Some(r) if r <= STABLE_RADIUS => Some(step),
            Some(_) => model.largest_stable_step(tab, step),
            None => None,
        };
        out.push(CoupledFinding {
            admittance: sched.admittance_names()[j].to_string(),
            impedances,
            model,
            radius,
            largest_stable_step,
        });
    }
    out
}

/// How a warning names a spring: "K = …, B = …" (with "+ τK" for an implicit one).
fn spring_text(s: &StageSpring) -> String {
    format!("K = {}, B = {}{}", num(s.k), num(s.b), if s.implicit { " + τK" } else { "" })
}

/// `x` as `{}` prints it, in exponent notation outside 1e-4 ≤ |x| < 1e16 (B = 1e300 is not
/// three hundred digits; output::number::float_text, which this layer may not name).
fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e16).contains(&x.abs()) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// The largest stable step of a warning, or that none was found.
fn limit_text(largest_stable_step: Option<f64>) -> String {
    match largest_stable_step {
        Some(t) => format!("stable for T < {t:.3e} s"),
        None => "no stable step found".to_string(),
    }
}

/// `stiction check`'s findings from [`analyse`]: a warning per unstable port, naming the
/// admittance, its impedances, ρ and the largest stable step; one summary line otherwise.
pub fn diagnostics(sched: &Schedule, x: &[f64], method: Method, step: f64) -> Vec<Diagnostic> {
    diagnostics_with(sched, &PortBases::new(sched, x, method), Springs::of(sched), x, method, step)
}

/// [`diagnostics`] with the ports' [`PortBases`] already gathered at `x` under `method`, and
/// the impedances' [`Springs`] recorded.
pub fn diagnostics_with(
    sched: &Schedule,
    bases: &PortBases,
    springs: Springs,
    x: &[f64],
    method: Method,
    step: f64,
) -> Vec<Diagnostic> {
    let att = Attached::with(sched, springs);
    // Only what a warning names is kept: the undecided and the unstable.
    let warn = |r: f64| r.is_nan() || r > STABLE_RADIUS;
    let mut port_tally = Tally::new();
    // Bodies held by contacts are analysed as groups (groups.rs); the port and pair models
    // of their ports, which only bound the group's modes, give no warning of their own.
    let groups = analyse_groups(sched, x, method, step);
    let covered: std::collections::HashSet<(usize, usize)> =
        groups.iter().flat_map(|g| g.model.bodies.iter().map(|b| b.port)).collect();
    let mut found = analyse_ports(sched, &att, bases, x, method, step, warn, &mut port_tally);
    found.retain(|f| !covered.contains(&(f.adm, f.port)));
    let adm_names = sched.admittance_names();
    let method_name = match method {
        Method::Rk4 => "rk4",
        Method::Euler => "euler",
    };
    let mut out = Vec::new();
    for f in found.iter().filter(|f| f.radius.is_nan()) {
        out.push(Diagnostic::Warning(format!(
            "{}: stuck-state stability could not be decided: inertia {} with ΣK = {:.4e}, ΣB = {:.4e}, ΣK_implicit = {:.4e} \
             overflows the {method_name} step map at T = {step} s (extreme parameters); check the scales of its parameters",
            &adm_names[f.adm], f.model.inertia, f.model.k, f.model.b, f.model.k_implicit,
        )));
    }
    // `!f.model.stable(…)`, from the radius already computed.
    for f in found.iter().filter(|f| f.radius > STABLE_RADIUS) {
        let names: Vec<String> = att
            .at(f.adm, f.port)
            .map(|a| format!("{} ({})", &sched.impedance_names()[a.imp], spring_text(&a.spring)))
            .collect();
        let limit = limit_text(f.largest_stable_step);
        out.push(Diagnostic::Warning(format!(
            "{}: stuck-state stability: inertia {} with {} attached (K's add: ΣK = {:.4e}; damping ΣB + τ·ΣK_implicit = {:.4e} + τ·{:.4e} per stage{}) \
             — the {method_name} step map at T = {step} s has spectral radius {:.4} > 1: small vibrations grow by that factor every step \
             until the friction saturates; {limit}",
            &adm_names[f.adm],
            f.model.inertia,
            names.join(", "),
            f.model.k,
            f.model.b,
            f.model.k_implicit,
            if f.model.implicit_position { "; position rate q̇ = v + τv̇" } else { "" },
            f.radius,
        )));
    }
    let coupled = coupled_findings(sched, &att, x, method, step);
    for f in &coupled {
        let names: Vec<String> =
            f.impedances.iter().map(|(p, n, s)| format!("{n} on port {p} ({})", spring_text(s))).collect();
        let Some(radius) = f.radius else {
            out.push(Diagnostic::Warning(format!(
                "{}: stuck-state stability of its {} joints coupled through the inertia matrix H, with {} attached, \
                 could not be decided: the {method_name} step map at T = {step} s overflows or its eigenvalues do not \
                 converge (extreme parameters); check the scales of its parameters",
                f.admittance,
                f.model.dim(),
                names.join(", "),
            )));
            continue;
        };
        if radius <= STABLE_RADIUS {
            continue;
        }
        let limit = limit_text(f.largest_stable_step);
        out.push(Diagnostic::Warning(format!(
            "{}: stuck-state stability of its {} joints coupled through the inertia matrix H, with {} attached \
             — the {method_name} step map at T = {step} s has spectral radius {:.4e} > 1: small vibrations grow by that factor \
             every step until the friction saturates; {limit}",
            f.admittance,
            f.model.dim(),
            names.join(", "),
            radius,
        )));
    }
    let mut pair_tally = Tally::new();
    let mut pairs = pair_results(sched, &att, bases, x, method, step, warn, &mut pair_tally);
    pairs.retain(|r| !r.ends.iter().all(|e| covered.contains(e)));
    let pair_name = |r: &PairResult| format!("{} and {}", &adm_names[r.ends[0].0], &adm_names[r.ends[1].0]);
    for r in &pairs {
        if r.radius.is_nan() {
            out.push(Diagnostic::Warning(format!(
                "{}: stuck-state stability of their relative motion could not be decided: inertias {} and {} joined by ΣK = {:.4e}, \
                 ΣB = {:.4e}: the {method_name} step map at T = {step} s overflows or its eigenvalues do not converge (extreme \
                 parameters); check the scales of its parameters",
                pair_name(r),
                r.model.inertia[0],
                r.model.inertia[1],
                r.model.joint.k,
                r.model.joint.b,
            )));
        } else if r.radius > STABLE_RADIUS {
            let (names, inertias): (Vec<String>, &str) = match r.contact {
                None => (
                    r.imps
                        .iter()
                        .map(|(i, s)| format!("{} ({})", &sched.impedance_names()[*i], spring_text(s)))
                        .collect(),
                    "inertias",
                ),
                Some((i, d)) => {
                    let s = r.imps.iter().find(|(k, _)| *k == i).map(|(_, s)| spring_text(s)).unwrap_or_default();
                    let at = format!("{} ({s}) alone, along its {}", &sched.impedance_names()[i], d.name());
                    (vec![at], "effective inertias at the contact point (the bodies' rotation included)")
                }
            };
            out.push(Diagnostic::Warning(format!(
                "{}: stuck-state stability of their relative motion: {inertias} {} and {} (in series {}) joined by {} \
                 (ΣK = {:.4e}; damping ΣB + τ·ΣK_implicit = {:.4e} + τ·{:.4e} per stage) — the {method_name} step map at T = {step} s \
                 has spectral radius {:.4} > 1: the two bodies vibrate against each other, growing by that factor every step until \
                 the friction saturates; {}",
                pair_name(r),
                r.model.inertia[0],
                r.model.inertia[1],
                r.model.reduced_inertia(),
                names.join(", "),
                r.model.joint.k,
                r.model.joint.b,
                r.model.joint.k_implicit,
                r.radius,
                limit_text(r.largest_stable_step),
            )));
        }
    }
    let imp_names = sched.impedance_names();
    for g in &groups {
        let bodies: Vec<&str> = g.model.bodies.iter().map(|b| &adm_names[b.port.0]).collect();
        let contacts: Vec<&str> = g.model.contacts.iter().map(|c| &imp_names[c.imp]).collect();
        let what = format!(
            "{} held by {} contact(s) ({})",
            bodies.join(", "),
            contacts.len(),
            if contacts.len() > 6 { format!("{}, …", contacts[..6].join(", ")) } else { contacts.join(", ") }
        );
        match g.radius {
            None => out.push(Diagnostic::Warning(format!(
                "{what}: stuck-state stability of the bodies together could not be decided: the {method_name} step map at \
                 T = {step} s overflows or its eigenvalues do not converge (extreme parameters); check the scales of its parameters"
            ))),
            Some(r) if !groups::is_stable(r) => out.push(Diagnostic::Warning(format!(
                "{what}: stuck-state stability of the bodies together ({} degrees of freedom: every contact's normal, tangential \
                 and rocking stiffness on both its bodies) — the {method_name} step map at T = {step} s has spectral radius {r:.4} > 1: \
                 the held bodies vibrate, growing by that factor every step until the friction saturates and they creep; {}",
                g.model.body_dofs(),
                limit_text(g.largest_stable_step),
            ))),
            Some(_) => {}
        }
    }
    let pair_text = |ends: &PairEnds| format!("{} and {}", &adm_names[ends[0].0], &adm_names[ends[1].0]);
    let radii = port_tally
        .worst
        .map(|(r, j)| (r, adm_names[j].to_string()))
        .into_iter()
        .chain(coupled.iter().filter_map(|f| Some((f.radius?, f.admittance.clone()))))
        .chain(pair_tally.worst.map(|(r, ends)| (r, pair_text(&ends))))
        // Reached only without warnings: a port or pair above 1 here is one a group covers.
        .filter(|(r, _)| *r <= STABLE_RADIUS)
        .chain(groups.iter().filter_map(|g| {
            let names: Vec<&str> = g.model.bodies.iter().map(|b| &adm_names[b.port.0]).collect();
            Some((g.radius?, names.join(" + ")))
        }));
    if let Some(worst) = radii.max_by(|a, b| a.0.total_cmp(&b.0)) {
        if out.is_empty() {
            out.push(Diagnostic::Info(format!(
                "stuck-state stability: {} admittance port(s) with springs checked{}{}, largest step-map radius {:.4} at {} ({method_name}, T = {step} s)",
                port_tally.count,
                if coupled.is_empty() { String::new() } else { format!(" and {} admittance(s) with coupled joints", coupled.len()) },
                if pair_tally.count == 0 { String::new() } else { format!(", {} pair(s) of bodies joined by springs", pair_tally.count) }
                    + &if groups.is_empty() { String::new() } else { format!(", {} group(s) of bodies held by contacts", groups.len()) },
                worst.0,
                worst.1
            )));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mass_spring(k: f64, b: f64, k_implicit: f64, implicit_position: bool) -> PortModel {
        PortModel { inertia: 1.0, k, b, k_implicit, k_coupled: 0.0, b_coupled: 0.0, implicit_position }
    }

    /// The closed form agrees with nalgebra's iterative solver.
    #[test]
    fn the_largest_symmetric_eigenvalue_in_closed_form() {
        for a in [
            Matrix3::new(2.0, 0.3, -0.1, 0.3, 1.0, 0.2, -0.1, 0.2, 0.5),
            Matrix3::new(4.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 1.0),
            Matrix3::new(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        ] {
            let exact = nalgebra::SymmetricEigen::new(a).eigenvalues.max();
            assert!((largest_symmetric_eigenvalue(&a) - exact).abs() < 1e-12 * exact, "{a}");
        }
    }

    #[test]
    fn rk4_on_an_undamped_spring_is_stable_up_to_omega_t_2_83() {
        // |R(iωT)| ≤ 1 for ωT ≤ 2√2 with R the RK4 stability polynomial.
        let m = mass_spring(1.0, 0.0, 0.0, false);
        let t = m.largest_stable_step(&Tableau::RK4, 10.0).unwrap();
        assert!((t - 2.0 * 2f64.sqrt()).abs() < 1e-6, "{t}");
    }

    #[test]
    fn a_held_element_coupled_with_its_mass_is_stable_at_every_stiffness() {
        // I_fricK held on 1 kg at T = 1e-3: its paper form (τK per stage) diverges from
        // K T²/M ≈ 5 on; coupled (the mass's rate over M + τ(B + τK)) it stays stable, the
        // radius falling to 0.47 as K → ∞ (stepper/coupling.rs).
        for k in [1e3, 1e5, 1e6, 1e7, 1e9, 1e13] {
            let paper = mass_spring(k, 1.0, k, false);
            let coupled = PortModel { k_coupled: k, b_coupled: 1.0, ..paper };
            let r = coupled.radius(&Tableau::RK4, 1e-3);
            // Soft: barely damped by B = 1 (ρ = 0.999 at K = 1e3); stiffer: damped by τK.
            assert!(r < if k < 1e5 { 1.0 } else { 0.97 }, "K = {k}: coupled ρ = {r}");
            if k >= 1e7 {
                assert!(paper.radius(&Tableau::RK4, 1e-3) > 6.0, "K = {k}");
            }
            if k >= 1e9 {
                assert!((r - 0.47).abs() < 0.02, "K = {k}: ρ = {r}");
            }
        }
    }

    #[test]
    fn explicit_euler_on_an_undamped_spring_is_unstable_at_any_step() {
        let m = mass_spring(1.0, 0.0, 0.0, false);
        assert!(!m.stable(&Tableau::EULER, 1e-3));
        assert!((m.radius(&Tableau::EULER, 0.1) - (1.0f64 + 0.01).sqrt()).abs() < 1e-12);
        // Symplectic Euler (q̇ = v + τv̇): |λ| = 1 for ωT < 2.
        let s = mass_spring(1.0, 0.0, 0.0, true);
        assert!((s.radius(&Tableau::EULER, 1.0) - 1.0).abs() < 1e-12);
        assert!(!s.stable(&Tableau::EULER, 2.1));
    }

    #[test]
    fn fig13_alternative_a_plus_spring_is_unstable_under_euler_only_at_the_high_stiffness() {
        // Model A (implicit position under Euler) on K, B = 2√K, M = 1, T = 1e-3.
        for (k, unstable) in [(8.3e4f64, false), (2.5e5, false), (7.5e5, true)] {
            let m = mass_spring(k, 2.0 * k.sqrt(), 0.0, true);
            assert_eq!(!m.stable(&Tableau::EULER, 1e-3), unstable, "K = {k}: ρ = {}", m.radius(&Tableau::EULER, 1e-3));
        }
    }
    #[test]
    fn coupled_joints_reach_the_highest_frequency_of_h_inverse_k() {
        // Diagonal H: the same radius as the one-port models.
        let diag = CoupledModel::new(
            DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 4.0]),
            vec![1.0, 1.0],
            vec![0.1, 0.0],
            vec![0.0; 2],
            false,
        )
        .unwrap();
        let (p1, p2) =
            (mass_spring(1.0, 0.1, 0.0, false), PortModel { inertia: 4.0, ..mass_spring(1.0, 0.0, 0.0, false) });
        for t in [0.5, 2.0, 3.0] {
            let expected = p1.radius(&Tableau::RK4, t).max(p2.radius(&Tableau::RK4, t));
            assert!((diag.radius(&Tableau::RK4, t).unwrap() - expected).abs() < 1e-12, "T = {t}");
        }
        // H = [[1, 0.9], [0.9, 1]], K = I: ω² of H⁻¹K are 1/1.9 and 1/0.1 = 10, so RK4 is
        // stable up to T = 2√2/√10 = 0.894, where each joint alone (ω = 1) allows 2√2 = 2.83.
        let m = CoupledModel::new(
            DMatrix::from_row_slice(2, 2, &[1.0, 0.9, 0.9, 1.0]),
            vec![1.0, 1.0],
            vec![0.0; 2],
            vec![0.0; 2],
            false,
        )
        .unwrap();
        let t = m.largest_stable_step(&Tableau::RK4, 10.0).unwrap();
        assert!((t - 2.0 * 2f64.sqrt() / 10f64.sqrt()).abs() < 1e-6, "{t}");
        assert!(
            mass_spring(1.0, 0.0, 0.0, false).stable(&Tableau::RK4, 2.0) && m.stable(&Tableau::RK4, 2.0) == Some(false)
        );
    }

    /// The two-link arm of examples/two_link_fricK.json at q = 0 with joint 1's B = 1e15
    /// (issue 33): nalgebra's unbounded QR never returned on some step of the bisection. Now
    /// every radius of the search is decided or not within the bound, and at each scale
    /// of B the search ends.
    #[test]
    fn extreme_dampers_on_coupled_joints_end_with_a_radius_or_undecided() {
        let (m, l, c, i) = (0.1, 0.5, 0.25, 0.002145833333);
        let h11 = i + m * c * c + i + m * (l * l + c * c + 2.0 * l * c);
        let h12 = i + m * (c * c + l * c);
        let h22 = i + m * c * c;
        for b in [1e15, 1e300, 5e-324, f64::MAX] {
            let h = DMatrix::from_row_slice(2, 2, &[h11, h12, h12, h22]);
            let model = CoupledModel::new(h, vec![5000.0, 5000.0], vec![1.0, b], vec![5000.0, 5000.0], false).unwrap();
            for t in [1e-4, 1e-6, 1e-10, 1e-20] {
                if let Some(r) = model.radius(&Tableau::RK4, t) {
                    assert!(r.is_finite() && r >= 0.0, "B = {b}, T = {t}: {r}");
                }
            }
            if let Some(t) = model.largest_stable_step(&Tableau::RK4, 1e-4) {
                assert_eq!(model.stable(&Tableau::RK4, t), Some(true), "B = {b}");
            }
        }
        // The trial steps of the search (1e-4 halved 40 to 42 times, T ≈ 9.1e-17, 4.5e-17, 2.3e-17 s) on which nalgebra's
        // unbounded QR never returned: now decided, unstable; the search ends at ≈ 5.18e-18 s.
        let h = DMatrix::from_row_slice(2, 2, &[h11, h12, h12, h22]);
        let model = CoupledModel::new(h, vec![5000.0, 5000.0], vec![1.0, 1e15], vec![5000.0, 5000.0], false).unwrap();
        for k in 40..=42 {
            let t = 1e-4 * 0.5f64.powi(k);
            let r = model.radius(&Tableau::RK4, t);
            assert!(r.is_some_and(|r| r > 100.0), "T = {t:e}: {r:?}");
        }
        let t = model.largest_stable_step(&Tableau::RK4, 1e-4).unwrap();
        assert!((5.1e-18..5.3e-18).contains(&t), "{t:e}");
    }

    /// A free pair is its relative mode: the 4×4 map's radius (away from 1, where the
    /// common mode's defective eigenvalue 1 does not matter) is the reduced model's, and the
    /// limit is the analytic 2√2/ω, ω² = K (1/m_a + 1/m_b).
    #[test]
    fn a_free_pair_is_its_relative_mode_on_the_inertias_in_series() {
        let own = |m: f64| PortModel { inertia: m, k: 0.0, b: 0.0, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false };
        let joint = PortModel { inertia: 1.0, k: 3.0, b: 0.2, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false };
        let pair = PairModel { inertia: [1.0, 2.0], own: [own(1.0), own(2.0)], joint, grouped: false };
        let rel = pair.free_relative().unwrap();
        assert_eq!((rel.inertia, rel.k, rel.b), (2.0 / 3.0, 3.0, 0.2));
        for t in [2.0, 3.0, 5.0] {
            let full = spectral_radius(pair.step_map(&Tableau::RK4, t)).unwrap();
            let r = pair.radius(&Tableau::RK4, t).unwrap();
            assert!(full > 1.01 && (full - r).abs() < 1e-9 * full, "T = {t}: {full} vs {r}");
        }
        let undamped = PairModel { joint: PortModel { b: 0.0, ..joint }, ..pair.clone() };
        let t = undamped.largest_stable_step(&Tableau::RK4, 10.0).unwrap();
        assert!((t - 2.0 * 2f64.sqrt() / (3.0f64 * 1.5).sqrt()).abs() < 1e-6, "{t}");
        // Held on one side: not free, the 4×4 map.
        let held = PairModel { own: [own(1.0), PortModel { k: 1.0, ..own(2.0) }], ..pair };
        assert!(held.free_relative().is_none());
    }

    /// The effective mass of a body at a point along a direction, 1/m + (r × d)ᵀ I⁻¹ (r × d):
    /// a thin rod (m = 1 kg, I = mL²/12 about y and z, L = 1 m) at its end, r = (0.5, 0, 0),
    /// across its axis is m/4; along its axis m; a point mass m in every direction.
    #[test]
    fn effective_mass_at_the_end_of_a_rod_is_a_quarter_across_and_whole_along() {
        let i = 1.0 / 12.0;
        let rod = RigidInertia {
            mass: 1.0,
            inertia_inv: Matrix3::from_diagonal(&Vector3::new(1.0 / 1e-3, 1.0 / i, 1.0 / i)),
            com: Vector3::new(1.0, 2.0, 3.0),
        };
        let x = Vector3::new(1.5, 2.0, 3.0);
        let w = contact_inverse_mass(Some(&rod), 1.0, &x);
        let inv = |d: Vector3<f64>| (w * d).dot(&d);
        assert!((inv(Vector3::y()) - 4.0).abs() < 1e-12 && (inv(Vector3::z()) - 4.0).abs() < 1e-12);
        assert!((inv(Vector3::x()) - 1.0).abs() < 1e-12);
        let p = contact_inverse_mass(None, 2.0, &x);
        assert_eq!(p, Matrix3::identity() * 0.5);
        // Normal x (along the rod): tangentially the softest direction lies in the y–z plane.
        let [(_, n), (_, t)] = contact_directions(&Vector3::x(), &[w, p]);
        assert_eq!(n, Vector3::x());
        assert!(t.x.abs() < 1e-12 && ((w + p) * t).dot(&t) > 4.5 - 1e-12, "{t:?}");
    }

    #[test]
    fn balancing_keeps_the_eigenvalues_of_a_badly_scaled_matrix() {
        // Similar to diag(2, -3) by D = diag(1, 1e-40): entries 1e40 and 1e-40 apart.
        let a = DMatrix::from_row_slice(2, 2, &[2.0, 0.0, 5.0, -3.0]);
        let d = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 1e-40]));
        let d_inv = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 1e40]));
        let m = &d * &a * &d_inv;
        assert!((spectral_radius(m.clone()).unwrap() - 3.0).abs() < 1e-12);
        let mut b = m;
        balance(&mut b);
        assert!(b.amax() < 1e3, "{b}");
        assert_eq!(spectral_radius(DMatrix::from_row_slice(1, 1, &[f64::NAN])), None);
    }
}
