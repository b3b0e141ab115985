//! The force of a stiff element on a mass within a stage, as a function of the mass's
//! velocity change, and the mass's implicit stage with it (framework/src/stepper/coupling.rs).
//!
//! An element held implicitly with the mass on its port (`Impedance::stage_law`) gives the
//! force it would put on the port if the port's velocity changed by Δ within the stage (its
//! position advancing τ Δ with it, as (19)'s implicit step advances e); the mass
//! (`Admittance::implicit_rate`) then solves its own stage M Δ = τ (f_o + f(Δ)) for Δ,
//! f_o the other forces, and takes Δ/τ as its velocity rate. Each law's force is monotone in
//! Δ (a saturation (15) and a one-sided spring), so the solution is unique and in closed form:
//! the implicit step of models A and D ((26), (45)) for a mass with an element outside it.

use nalgebra::{Matrix3, Matrix6, OMatrix, OVector, SMatrix, SVector, Vector2, Vector3, Vector6};
use std::sync::Arc;

mod group;
pub use group::{group_rates, CrossMobility, GroupLaw, StageBody};

/// The law of a coupled element's force on one port within a stage, in the port's velocity
/// change Δ ([module doc](self)).
#[derive(Clone, Debug, PartialEq)]
pub enum StageLaw {
    /// An I_fricK element (19): f = −gsat(F, w + c Δ) on the first `dims` axes, gsat(F, x) = x
    /// where ‖x‖ ≤ F, else F x/‖x‖ ((15)); with a viscous part D on its slider, while it
    /// slides f = −(F c + D ‖x‖)/(c + D) x/‖x‖ ((57) at Z = 1/c, exact for Coulomb friction
    /// with a viscous part). Held to this port: w = K e + (B + τK) v, c = B + τK.
    Friction {
        /// The argument at Δ = 0 (N).
        w: Vector3<f64>,
        /// Its rate with Δ (N·s/m), > 0.
        c: f64,
        /// The friction level F (N), ≥ 0.
        level: f64,
        /// The viscous part D of the slider's friction (N·s/m), ≥ 0.
        viscous: f64,
        /// The axes it acts on: 1 (x, or a scalar port), 2 or 3.
        dims: usize,
        /// The world point it acts at (a rigid body's lever: the point the port is attached
        /// at; a mass ignores it).
        at: Vector3<f64>,
        /// How the level F falls with the slider's speed ([`Curve`]; `level` is the kinetic one).
        curve: Curve,
    },
    /// A contact with a plane of unit normal `n` and tangents `t1`, `t2` ((23)): the normal
    /// force f_n = max(0, w_n − c_n Δ_n) along n (w_n = K δ − (B + τK) v_n in contact, with
    /// c_n = B + τK; both 0 out of it) and the tangential element's −gsat(μ f_n, w_t + c Δ_t)
    /// along (t1, t2) (w_t = K e + (B + τK) v_t, c = B + τK), acting at the world point `at`
    /// (a rigid body's lever; a point mass ignores it).
    Contact {
        n: Vector3<f64>,
        t1: Vector3<f64>,
        t2: Vector3<f64>,
        wn: f64,
        cn: f64,
        wt: Vector2<f64>,
        c: f64,
        mu: f64,
        at: Vector3<f64>,
        /// How μ falls with the slider's speed ([`Curve`]; `mu` is the kinetic one).
        curve: Curve,
    },
    /// A joint between two rigid bodies held implicitly with them (a penalty joint), on one
    /// body's port: the translational spring–damper at the articulation point `at`,
    /// f = −(w + c Δ) (unbounded), and moments in the bodies' relative angular velocity change
    /// Δω (this body's less the other's): the bending spring's `bend` − c_bend (Δω − (Δω·z) z)
    /// and the twist element's −gsat(F, t + c_twist Δω·z) z about the unit axis z ((19) about
    /// the axis: t = K e + (B + τK) ω·z, c_twist = B + τK). A part not held has its value and
    /// its rate 0 (its force or moment is in the explicit stage accelerations).
    Joint {
        w: Vector3<f64>,
        c: f64,
        at: Vector3<f64>,
        axis: Vector3<f64>,
        bend: Vector3<f64>,
        c_bend: f64,
        twist: f64,
        c_twist: f64,
        level: f64,
    },
}

/// The shape of a coupled element's friction level over its slider's speed s = ‖x‖/c, the
/// argument of (57)'s g at Z = 1/c (the element's own Φ_Z, `FrictionLaw::phi_z`): constant
/// (Coulomb), a Stribeck curve from `peak` at rest down to the law's kinetic level,
/// g(s) = level + (peak − level) exp(−(s/v_s)^δ) (a contact's in μ, scaled by f_n), or a
/// table of levels over speed ([`LevelTable`], shared with the element that owns it).
#[derive(Clone, Debug, PartialEq)]
pub enum Curve {
    Flat,
    Stribeck { peak: f64, vs: f64, exponent: f64 },
    Table(Arc<LevelTable>),
}

/// A friction level tabulated over the slider's speed: piecewise linear through the points
/// (speed_i, level_i), speeds from 0 and increasing, held at the last level beyond the last
/// speed (a `"law": "table"` friction law's g).
#[derive(Clone, Debug, PartialEq)]
pub struct LevelTable {
    speed: Box<[f64]>,
    level: Box<[f64]>,
}

impl LevelTable {
    /// The table through `speed` and `level` (one level per speed); `None` where the two
    /// differ in length or are empty, or the speeds do not start at 0 and increase strictly.
    pub fn new(speed: Vec<f64>, level: Vec<f64>) -> Option<LevelTable> {
        let increasing = speed.windows(2).all(|w| w[0] < w[1]);
        (!speed.is_empty() && speed.len() == level.len() && speed[0] == 0.0 && increasing)
            .then(|| LevelTable { speed: speed.into(), level: level.into() })
    }

    /// The speeds (m/s or rad/s).
    pub fn speeds(&self) -> &[f64] {
        &self.speed
    }

    /// The levels, one per speed.
    pub fn levels(&self) -> &[f64] {
        &self.level
    }

    /// The level g(s) at speed `s` ≥ 0 and its slope g'(s): the segment's that starts at or
    /// below s (the right-hand slope at a point), 0 at and beyond the last speed.
    #[inline]
    pub fn at(&self, s: f64) -> (f64, f64) {
        let (speed, level) = (&self.speed, &self.level);
        let last = speed.len() - 1;
        if s >= speed[last] {
            return (level[last], 0.0);
        }
        let i = speed.partition_point(|&x| x <= s).max(1);
        let (s0, s1, g0, g1) = (speed[i - 1], speed[i], level[i - 1], level[i]);
        (g0 + (g1 - g0) * (s - s0) / (s1 - s0), (g1 - g0) / (s1 - s0))
    }
}

impl Curve {
    /// g and its slope dg/dx at ‖x‖ = `norm` for kinetic level `level` and rate `c` (speed
    /// norm/c); (level, 0) when flat.
    #[inline]
    fn level(&self, level: f64, norm: f64, c: f64) -> (f64, f64) {
        match *self {
            Curve::Table(ref table) => {
                let (g, slope) = table.at(norm / c);
                (g, slope / c)
            }
            Curve::Flat => (level, 0.0),
            Curve::Stribeck { peak, vs, exponent } => {
                let r = norm / (c * vs);
                let rd = r.powf(exponent);
                let drop = (peak - level) * (-rd).exp();
                // d drop/d‖x‖ = −δ r^(δ−1) drop/(c v_s) = −δ (r^δ/r) drop/(c v_s); 0 at rest.
                let slope = if r > 0.0 { -exponent * (rd / r) * drop / (c * vs) } else { 0.0 };
                (level + drop, slope)
            }
        }
    }
}

/// The most joints [`StageLaw::joint_rates`] solves together (a serial robot's links).
pub const MAX_JOINTS: usize = 12;

/// The stage laws of the coupled elements on each port of one admittance
/// (`Admittance::implicit_rate`; stepper/coupling.rs gathers them).
#[derive(Clone, Copy, Debug)]
pub struct PortLaws<'a> {
    laws: &'a [StageLaw],
    /// Per port (one more entry): where its laws start in `laws`.
    starts: &'a [u32],
}

impl<'a> PortLaws<'a> {
    /// The laws `laws[starts[p]..starts[p + 1]]` on port p.
    pub fn new(laws: &'a [StageLaw], starts: &'a [u32]) -> PortLaws<'a> {
        PortLaws { laws, starts }
    }

    /// The laws on `port` (none past the last port).
    pub fn of(&self, port: usize) -> &'a [StageLaw] {
        match (self.starts.get(port), self.starts.get(port + 1)) {
            (Some(&a), Some(&b)) => self.laws.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

impl StageLaw {
    /// The force the law gives at Δ = 0: what the element's `evaluate` put on the port.
    pub fn force(&self) -> Vector3<f64> {
        match *self {
            StageLaw::Friction { w, c, level, viscous, dims, ref curve, .. } => {
                let n = dims.clamp(1, 3);
                let norm = w.rows(0, n).norm();
                let (level, _) = curve.level(level, norm, c);
                let scale = if norm <= level { 1.0 } else { sliding(level, c, viscous, norm) / norm };
                let mut f = Vector3::zeros();
                for i in 0..n {
                    f[i] = -w[i] * scale;
                }
                f
            }
            StageLaw::Contact { n, t1, t2, wn, wt, c, mu, ref curve, .. } => {
                let fn_ = wn.max(0.0);
                let (mu, _) = curve.level(mu, wt.norm(), c);
                let ft = saturated(mu * fn_, wt);
                n * fn_ - t1 * ft.x - t2 * ft.y
            }
            StageLaw::Joint { w, .. } => -w,
        }
    }

    /// Whether the element holds at Δ = 0 (its argument within the level of its curve): a
    /// [`Friction`](StageLaw::Friction) law's slider, a [`Contact`](StageLaw::Contact)'s
    /// tangential element; a [`Joint`](StageLaw::Joint)'s twist element.
    pub fn holds(&self) -> bool {
        match *self {
            StageLaw::Friction { w, c, level, dims, ref curve, .. } => {
                let norm = w.rows(0, dims.clamp(1, 3)).norm();
                norm <= curve.level(level, norm, c).0
            }
            StageLaw::Contact { wn, wt, c, mu, ref curve, .. } => {
                let norm = wt.norm();
                norm <= curve.level(mu, norm, c).0 * wn.max(0.0)
            }
            StageLaw::Joint { twist, level, .. } => twist.abs() <= level,
        }
    }

    /// The point mass `m` at `at` under the applied force `h` with this law's force at Δ = 0
    /// in its acceleration: the body of an admittance whose own implicit step is a mass with
    /// this element on it (`Admittance::own_stage_law`: model A's rigid friction, model D's
    /// presliding element).
    pub fn own_body(&self, m: f64, at: Vector3<f64>, h: Vector3<f64>) -> StageBody {
        StageBody::point(m, at, (h + self.force()) / m)
    }

    /// [`own_body`](Self::own_body)'s `body` alone (no group) solved with the coupled `laws`
    /// on it and this one: the body with its solved acceleration.
    pub fn solve_own(&self, body: StageBody, laws: &[StageLaw], tau: f64) -> StageBody {
        let mut group: Vec<GroupLaw<'_>> = laws.iter().map(|law| GroupLaw { law, body: 0, partner: None }).collect();
        group.push(GroupLaw { law: self, body: 0, partner: None });
        let mut bodies = [body];
        group_rates(&mut bodies, &group, &[], tau);
        let [solved] = bodies;
        solved
    }

    /// The world point the law's force acts at (a rigid body's lever; a mass ignores it).
    pub fn point(&self) -> Vector3<f64> {
        match self {
            StageLaw::Contact { at, .. } | StageLaw::Friction { at, .. } | StageLaw::Joint { at, .. } => *at,
        }
    }

    /// Whether the law puts moments on its rigid body (a [`Joint`](StageLaw::Joint)).
    #[inline]
    pub fn has_moments(&self) -> bool {
        matches!(self, StageLaw::Joint { .. })
    }

    /// The moment the law puts on its rigid body at Δω = 0 (a [`Joint`](StageLaw::Joint)'s;
    /// none for the others).
    pub fn moment(&self) -> Vector3<f64> {
        self.moment_at(&Vector3::zeros()).0
    }

    /// The moment at relative angular velocity change `x` and its Jacobian, negated
    /// (−∂m/∂x: c_bend (I − z zᵀ), and c_twist z zᵀ while the twist element holds); zero for a
    /// law without moments.
    pub(crate) fn moment_at(&self, x: &Vector3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
        let StageLaw::Joint { axis, bend, c_bend, twist, c_twist, level, .. } = *self else {
            return (Vector3::zeros(), Matrix3::zeros());
        };
        let along = x.dot(&axis);
        let normal = Matrix3::identity() - axis * axis.transpose();
        let arg = twist + c_twist * along;
        let (held, f) = if arg.abs() <= level { (true, arg) } else { (false, level.copysign(arg)) };
        let m = bend - (x - axis * along) * c_bend - axis * f;
        let jac = normal * c_bend + if held { axis * axis.transpose() * c_twist } else { Matrix3::zeros() };
        (m, jac)
    }

    /// The acceleration of a mass `m` whose explicit stage acceleration is `a` (every force
    /// on it, this law's [`force`](Self::force) included, over m) when the law's force is
    /// taken at the stage's new velocity: Δ/τ with Δ the solution of m Δ = τ (f_o + f(Δ)),
    /// f_o = m a − f(0) the other forces. The normal part first (it does not depend on the
    /// tangential one), then the friction at its level (held, or sliding along w + k f_o). A mass at rest in
    /// equilibrium keeps a zero rate.
    /// A law on a Stribeck curve has no closed form: Newton's method ([`implicit_rate`](Self::implicit_rate)).
    pub fn implicit_acceleration(&self, m: f64, a: Vector3<f64>, tau: f64) -> Vector3<f64> {
        if !self.is_flat() {
            return Self::newton_rate(std::slice::from_ref(self), m, a, tau);
        }
        let fo = a * m - self.force();
        match *self {
            StageLaw::Friction { w, c, level, viscous, dims, .. } => {
                let n = dims.clamp(1, 3);
                let mut out = a;
                let acc = hold_or_slide(m, tau, &fo.as_slice()[..n], &w.as_slice()[..n], c, level, viscous);
                out.as_mut_slice()[..n].copy_from_slice(&acc.as_slice()[..n]);
                out
            }
            StageLaw::Contact { n, t1, t2, wn, cn, wt, c, mu, .. } => {
                let fon = n.dot(&fo);
                // m Δ_n = τ (f_o,n + max(0, w_n − c_n Δ_n)): pressed, or free of the plane.
                let pressed = (fon + wn) / (m + tau * cn);
                let f_n = wn - cn * tau * pressed;
                let (an, f_n) = if f_n >= 0.0 { (pressed, f_n) } else { (fon / m, 0.0) };
                let fot = [t1.dot(&fo), t2.dot(&fo)];
                let at = hold_or_slide(m, tau, &fot, wt.as_slice(), c, mu * f_n, 0.0);
                n * an + t1 * at[0] + t2 * at[1]
            }
            // (Not flat: solved above.)
            StageLaw::Joint { .. } => Self::newton_rate(std::slice::from_ref(self), m, a, tau),
        }
    }
}

impl StageLaw {
    /// The velocity rate of a mass `m` on which `laws` act, whose explicit stage
    /// acceleration is `a` (every force on it, the laws' [`force`](Self::force)s included,
    /// over m): Δ/τ with Δ the solution of m Δ = τ (f_o + Σ f_j(Δ)), f_o = m a − Σ f_j(0).
    /// One law: in closed form ([`implicit_acceleration`](Self::implicit_acceleration)).
    /// Several: Newton's method on the residual R(Δ) = m Δ − τ (f_o + Σ f_j(Δ)), whose
    /// Jacobian m I + τ Σ J_j is that of a mass with positive semidefinite dampings J_j, with
    /// halving steps while ‖R‖ does not fall; it starts at Δ = 0, where a mass at rest in
    /// equilibrium (a = 0) has R = 0 exactly and keeps a zero rate.
    pub fn implicit_rate(laws: &[StageLaw], m: f64, a: Vector3<f64>, tau: f64) -> Vector3<f64> {
        match laws {
            [] => a,
            [law] => law.implicit_acceleration(m, a, tau),
            _ => Self::newton_rate(laws, m, a, tau),
        }
    }

    /// [`implicit_rate`](Self::implicit_rate) by Newton's method on R(Δ) = m Δ − τ (f_o + Σ f_j(Δ)).
    fn newton_rate(laws: &[StageLaw], m: f64, a: Vector3<f64>, tau: f64) -> Vector3<f64> {
        let fo = laws.iter().fold(a * m, |f, l| f - l.force());
        let residual = |d: &Vector3<f64>, _: bool| {
            let (f, jac) = laws.iter().fold((fo, Matrix3::zeros()), |(f, j), l| {
                let (fl, jl) = l.at(d);
                (f + fl, j + jl)
            });
            let r = d * m - f * tau;
            (r, Some(Matrix3::from_diagonal_element(m) + jac * tau))
        };
        newton(residual, Vector3::zeros(), (fo.norm() + a.norm() * m) * tau) / tau
    }

    /// Whether the law's level is constant (Coulomb): its one-law stage is in closed form.
    pub fn is_flat(&self) -> bool {
        matches!(self, StageLaw::Friction { curve: Curve::Flat, .. } | StageLaw::Contact { curve: Curve::Flat, .. })
    }

    /// The rates of a rigid body (mass `m`, world inertia `inertia` about its centre of mass
    /// `com`) on which `laws` act at their points, whose explicit stage accelerations are `a`
    /// and `alpha` (world; every force and moment on it, the laws' included): the velocity
    /// changes Δv, Δω that solve m Δv = τ (f_o + Σ f_j), I Δω = τ (m_o + Σ r_j × f_j), each
    /// law at its point's change Δv + Δω × r_j (r_j = at_j − com), over τ. Newton's method
    /// on the 6-vector as in [`implicit_rate`](Self::implicit_rate); a body at rest in
    /// equilibrium keeps zero rates.
    pub fn rigid_rates(
        laws: &[StageLaw],
        m: f64,
        inertia: &Matrix3<f64>,
        com: Vector3<f64>,
        (a, alpha): (Vector3<f64>, Vector3<f64>),
        tau: f64,
    ) -> (Vector3<f64>, Vector3<f64>) {
        if laws.is_empty() {
            return (a, alpha);
        }
        let lever = |l: &StageLaw| l.point() - com;
        let (mut fo, mut mo) = (a * m, inertia * alpha);
        for l in laws {
            let f = l.force();
            fo -= f;
            mo -= lever(l).cross(&f);
            if l.has_moments() {
                mo -= l.moment();
            }
        }
        let residual = |d: &Vector6<f64>, _: bool| {
            let (dv, dw) = (d.fixed_rows::<3>(0).into_owned(), d.fixed_rows::<3>(3).into_owned());
            let mut r = Vector6::zeros();
            let mut jac = Matrix6::zeros();
            let (mut f, mut mm) = (fo, mo);
            for l in laws {
                let rl = lever(l);
                let (fl, jl) = l.at(&(dv + dw.cross(&rl)));
                f += fl;
                mm += rl.cross(&fl);
                // f_l depends on Δv − [r]ₓ Δω; its moment is [r]ₓ f_l.
                let rx = rl.cross_matrix();
                let g = nalgebra::Matrix3x6::from_columns(&[
                    Vector3::x(), Vector3::y(), Vector3::z(), -rx.column(0).into_owned(), -rx.column(1).into_owned(), -rx.column(2).into_owned(),
                ]);
                let top = jl * g;
                let bottom = rx * top;
                let mut upper = jac.fixed_view_mut::<3, 6>(0, 0);
                upper += top * tau;
                let mut lower = jac.fixed_view_mut::<3, 6>(3, 0);
                lower += bottom * tau;
                if l.has_moments() {
                    // Its moments in the body's Δω (the other end ground).
                    let (ml, jm) = l.moment_at(&dw);
                    mm += ml;
                    let mut angular = jac.fixed_view_mut::<3, 3>(3, 3);
                    angular += jm * tau;
                }
            }
            r.fixed_rows_mut::<3>(0).copy_from(&(dv * m - f * tau));
            r.fixed_rows_mut::<3>(3).copy_from(&(inertia * dw - mm * tau));
            let mut linear = jac.fixed_view_mut::<3, 3>(0, 0);
            linear += Matrix3::from_diagonal_element(m);
            let mut angular = jac.fixed_view_mut::<3, 3>(3, 3);
            angular += inertia;
            (r, Some(jac))
        };
        let d = newton(residual, Vector6::zeros(), (fo.norm() + a.norm() * m + mo.norm() + (inertia * alpha).norm()) * tau);
        (d.fixed_rows::<3>(0) / tau, d.fixed_rows::<3>(3) / tau)
    }

    /// The rates of an admittance whose D velocities (the first `n` used) are coupled through
    /// the inertia matrix `h` (a serial robot's joints, H(θ) of (8)), on whose scalar
    /// coordinates i the `laws_of(i)` act (each a 1-D law on its first axis), and, with the
    /// point's Jacobian `tip` (3 × n, its velocity J ω), the laws `laws_of(n)` at a point of it
    /// (its tip: a law of the point's velocity change J Δ, its force through Jᵀ), given the
    /// explicit accelerations `a` (every generalised force, the laws' included, through
    /// H⁻¹): the velocity changes Δ that solve H Δ = τ (f_o + Σ_i e_i Σ f_l(Δ_i) + Jᵀ Σ f_t(J Δ)),
    /// f_o = H a − (the same at Δ = 0), over τ. Newton's method as in
    /// [`implicit_rate`](Self::implicit_rate) (Jacobian H + τ diag(J_l) + τ Jᵀ J_t J); the
    /// unused rows keep Δ = 0. A robot at rest in equilibrium keeps zero rates.
    pub fn joint_rates<'a>(
        h: &SMatrix<f64, MAX_JOINTS, MAX_JOINTS>,
        n: usize,
        a: &SVector<f64, MAX_JOINTS>,
        laws_of: impl Fn(usize) -> &'a [StageLaw],
        tip: Option<&SMatrix<f64, 3, MAX_JOINTS>>,
        tau: f64,
    ) -> SVector<f64, MAX_JOINTS> {
        const D: usize = MAX_JOINTS;
        let n = n.min(D);
        let mut h = *h;
        for i in n..D {
            h.row_mut(i).fill(0.0);
            h.column_mut(i).fill(0.0);
            h[(i, i)] = 1.0;
        }
        let ha = h * a;
        let mut fo = ha;
        for i in n..D {
            fo[i] = 0.0;
        }
        for i in 0..n {
            fo[i] -= laws_of(i).iter().map(|l| l.force().x).sum::<f64>();
        }
        let at_tip = tip.map(|j| (j, laws_of(n)));
        if let Some((j, laws)) = at_tip {
            fo -= j.transpose() * laws.iter().map(StageLaw::force).sum::<Vector3<f64>>();
        }
        let residual = |d: &SVector<f64, MAX_JOINTS>, _: bool| {
            let mut f = fo;
            let mut jac = h;
            for i in 0..n {
                for l in laws_of(i) {
                    let (fl, jl) = l.at(&Vector3::new(d[i], 0.0, 0.0));
                    f[i] += fl.x;
                    jac[(i, i)] += jl[(0, 0)] * tau;
                }
            }
            if let Some((j, laws)) = at_tip {
                let v = j * d;
                for l in laws {
                    let (fl, jl) = l.at(&v);
                    f += j.transpose() * fl;
                    jac += j.transpose() * jl * j * tau;
                }
            }
            let r = h * d - f * tau;
            (r, Some(jac))
        };
        let scale = (fo.norm() + ha.norm()) * tau;
        newton(residual, SVector::<f64, MAX_JOINTS>::zeros(), scale) / tau
    }

    /// The force at velocity change `d` and its Jacobian with respect to `d`, negated
    /// (J = −∂f/∂Δ, positive semidefinite for a friction law; the contact's friction level
    /// also falls with Δ_n).
    fn at(&self, d: &Vector3<f64>) -> (Vector3<f64>, Matrix3<f64>) {
        match *self {
            StageLaw::Friction { w, c, level, viscous, dims, ref curve, .. } => {
                let n = dims.clamp(1, 3);
                let mut x = Vector3::zeros();
                for i in 0..n {
                    x[i] = w[i] + c * d[i];
                }
                let norm = x.norm();
                let (level, dg) = curve.level(level, norm, c);
                let mut jac = Matrix3::zeros();
                if norm <= level {
                    for i in 0..n {
                        jac[(i, i)] = c;
                    }
                    (-x, jac)
                } else {
                    // f = −u φ(‖x‖): −∂f/∂Δ = c (φ/‖x‖ (I − u uᵀ) + φ' u uᵀ), φ = (c g + D ‖x‖)/(c + D)
                    // with g at ‖x‖ (its slope dg/d‖x‖ on a Stribeck curve).
                    let u = x / norm;
                    let phi = sliding(level, c, viscous, norm);
                    let (k, slope) = (c * phi / norm, c * (c * dg + viscous) / (c + viscous));
                    for i in 0..n {
                        for j in 0..n {
                            jac[(i, j)] = k * (f64::from(u8::from(i == j)) - u[i] * u[j]) + slope * u[i] * u[j];
                        }
                    }
                    (-u * phi, jac)
                }
            }
            StageLaw::Contact { n, t1, t2, wn, cn, wt, c, mu, ref curve, .. } => {
                let xn = wn - cn * n.dot(d);
                let pressed = xn > 0.0;
                let fn_ = if pressed { xn } else { 0.0 };
                let x = wt + Vector2::new(t1.dot(d), t2.dot(d)) * c;
                let norm = x.norm();
                let (mu, dmu) = curve.level(mu, norm, c);
                let level = mu * fn_;
                let tm = nalgebra::Matrix3x2::from_columns(&[t1, t2]);
                let mut jac = if pressed { n * n.transpose() * cn } else { Matrix3::zeros() };
                let ft = if norm <= level {
                    jac += tm * tm.transpose() * c;
                    x
                } else {
                    let u = if norm > 0.0 { x / norm } else { Vector2::zeros() };
                    if norm > 0.0 {
                        let p = nalgebra::Matrix2::identity() - u * u.transpose();
                        jac += tm * p * tm.transpose() * (c * level / norm);
                        if dmu != 0.0 {
                            // The level μ(‖x‖) f_n along u on a Stribeck curve.
                            jac += tm * u * u.transpose() * tm.transpose() * (c * dmu * fn_);
                        }
                    }
                    if pressed {
                        // −f's tangential part T ft grows with μ f_n, which falls with Δ_n.
                        jac -= tm * u * n.transpose() * (mu * cn);
                    }
                    u * level
                };
                (n * fn_ - tm * ft, jac)
            }
            StageLaw::Joint { w, c, .. } => (-(w + d * c), Matrix3::from_diagonal_element(c)),
        }
    }
}

/// Newton's method on a residual `r(d)` of D unknowns (with its Jacobian) from d = `start` (0), with
/// halving steps while ‖r‖ does not fall, until ‖r‖ ≤ 1e-15 `scale`: a mass's 3
/// ([`StageLaw::implicit_rate`]), a rigid body's 6 ([`StageLaw::rigid_rates`]), a
/// robot's joints ([`StageLaw::joint_rates`]) or a group's bodies ([`group_rates`], their
/// number known at run time).
/// `residual(d, jacobian)` gives r(d) and, where asked (or where it is cheap), its Jacobian
/// J(d); the Newton step J⁻¹ r is solved (LU) only where it is taken, and J is asked for
/// only at a point the iteration goes on from (not at the trial that ends it).
fn newton<D: nalgebra::DimMin<D, Output = D>>(
    mut residual: impl FnMut(&OVector<f64, D>, bool) -> (OVector<f64, D>, Option<OMatrix<f64, D, D>>),
    start: OVector<f64, D>,
    scale: f64,
) -> OVector<f64, D>
where
    nalgebra::DefaultAllocator: nalgebra::allocator::Allocator<D, D> + nalgebra::allocator::Allocator<D>,
{
    let mut d = start;
    let (mut r, mut jac) = residual(&d, true);
    for _ in 0..MAX_NEWTON {
        if r.norm() <= 1e-15 * scale {
            break;
        }
        let Some(j) = jac.take().or_else(|| residual(&d, true).1) else { break };
        let Some(dir) = j.lu().solve(&r) else { break };
        let mut t = 1.0;
        let mut taken = false;
        for _ in 0..40 {
            let trial = &d - &dir * t;
            let (rt, jt) = residual(&trial, false);
            if rt.norm() < r.norm() {
                (d, r, jac, taken) = (trial, rt, jt, true);
                break;
            }
            t *= 0.5;
        }
        if !taken {
            break;
        }
    }
    d
}

/// Most Newton iterations of [`StageLaw::implicit_rate`] with several laws on one mass.
const MAX_NEWTON: usize = 50;

/// gsat(F, x) of (15) in 2-D.
fn saturated(level: f64, x: Vector2<f64>) -> Vector2<f64> {
    let norm = x.norm();
    if norm <= level {
        x
    } else {
        x * (level / norm)
    }
}

/// The rate Δ/τ (first `fo.len()` ≤ 3 entries) that solves m Δ = τ (f_o + f(w + c Δ)), f the
/// [`StageLaw::Friction`] force of level F and viscous part D: with k = c τ/m and
/// s = w + k f_o, the element holds iff ‖s‖ ≤ F (1 + k), and then Δ/τ = (f_o − w)/(m + τ c);
/// otherwise it slides along s with ‖x‖ + k φ(‖x‖) = ‖s‖ (φ of [`sliding`], linear in ‖x‖):
/// Δ/τ = (f_o − φ s/‖s‖)/m.
fn hold_or_slide(m: f64, tau: f64, fo: &[f64], w: &[f64], c: f64, level: f64, viscous: f64) -> Vector3<f64> {
    let k = c * tau / m;
    let s2: f64 = fo.iter().zip(w).map(|(f, w)| (w + k * f) * (w + k * f)).sum();
    let sn = s2.sqrt();
    let held = sn <= level * (1.0 + k);
    let phi = if held || viscous == 0.0 {
        level
    } else {
        let r = (sn - k * level * c / (c + viscous)) / (1.0 + k * viscous / (c + viscous));
        sliding(level, c, viscous, r)
    };
    let mut out = Vector3::zeros();
    for (i, (f, w)) in fo.iter().zip(w).enumerate() {
        out[i] = if held { (f - w) / (m + tau * c) } else { (f - phi * (w + k * f) / sn) / m };
    }
    out
}

/// The magnitude of a sliding I_fricK element's force at ‖x‖ = `norm` > F: (F c + D ‖x‖)/(c + D)
/// ((57) at Z = 1/c; F at D = 0, and F at ‖x‖ = F, where it holds).
#[inline]
fn sliding(level: f64, c: f64, viscous: f64, norm: f64) -> f64 {
    if viscous == 0.0 {
        level
    } else {
        (level * c + viscous * norm) / (c + viscous)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A contact with the plane z = const (normal z, tangents x, y), μ = 0.5, its normal and
    /// tangential rates both `c`, acting at `at`.
    fn on_z_plane(wn: f64, wt: [f64; 2], c: f64, at: Vector3<f64>) -> StageLaw {
        StageLaw::Contact { n: Vector3::z(), t1: Vector3::x(), t2: Vector3::y(), wn, cn: c, wt: Vector2::from(wt), c, mu: 0.5, at, curve: Curve::Flat }
    }

    /// The rate solves the stage: m Δ = τ (f_o + f(Δ)) with Δ = τ·rate, for a held and a
    /// sliding friction element and a pressed and a leaving contact.
    #[test]
    fn the_implicit_rate_solves_the_stage() {
        let (m, tau) = (2.0, 1e-3);
        let friction = |w: [f64; 3]| StageLaw::Friction { w: Vector3::from(w), c: 5e3, level: 4.0, viscous: 0.0, dims: 3, at: Vector3::zeros(), curve: Curve::Flat };
        let contact = |wn: f64, wt: [f64; 2]| on_z_plane(wn, wt, 5e3, Vector3::zeros());
        for law in [friction([1.0, 2.0, 0.5]), friction([30.0, -2.0, 0.0]), contact(20.0, [3.0, 1.0]), contact(20.0, [-30.0, 1.0]), contact(-5.0, [3.0, 1.0])] {
            for a in [Vector3::new(0.5, -1.0, -9.81), Vector3::new(-3.0, 2.0, 20.0)] {
                let rate = law.implicit_acceleration(m, a, tau);
                let fo = a * m - law.force();
                let delta = rate * tau;
                // f(Δ) of the law, evaluated directly.
                let f = match law.clone() {
                    StageLaw::Friction { w, c, level, viscous, at, curve, .. } => {
                        StageLaw::Friction { w: w + delta * c, c, level, viscous, dims: 3, at, curve }.force()
                    }
                    StageLaw::Contact { n, t1, t2, wn, cn, wt, c, mu, at, curve } => StageLaw::Contact {
                        n, t1, t2, wn: wn - cn * delta.z, cn, wt: wt + Vector2::new(delta.x, delta.y) * c, c, mu, at, curve
                    }
                    .force(),
                    StageLaw::Joint { w, c, .. } => -(w + delta * c),
                };
                let residual = delta * m - (fo + f) * tau;
                assert!(residual.norm() < 1e-12 * (1.0 + fo.norm()), "{law:?}, a = {a}: residual {residual}");
            }
        }
    }

    /// Laws on a Stribeck curve (no closed form: Newton's method): the one-law rate solves the
    /// stage for a held, a breaking-away and a fast-sliding element and contact, and the
    /// Jacobian `at` gives is the force's, by central differences.
    #[test]
    fn stribeck_laws_solve_the_stage_with_their_jacobian() {
        let (m, tau, c) = (2.0, 1e-3, 5e3);
        let stribeck = Curve::Stribeck { peak: 6.0, vs: 0.1, exponent: 2.0 };
        // A table of levels: falling from 6 to 3.5 N, then rising to 4 N and held.
        let levels = LevelTable::new(vec![0.0, 0.05, 0.2, 1.0], vec![6.0, 4.5, 3.5, 4.0]).expect("a valid table");
        let table = Curve::Table(Arc::new(levels));
        let with = |curve: &Curve, w: [f64; 3], viscous: f64| StageLaw::Friction { w: Vector3::from(w), c, level: 4.0, viscous, dims: 3, at: Vector3::zeros(), curve: curve.clone() };
        let friction = |w: [f64; 3], viscous: f64| with(&stribeck, w, viscous);
        let mu_curve = Curve::Stribeck { peak: 0.8, vs: 0.1, exponent: 1.5 };
        let contact = |wn: f64, wt: [f64; 2]| StageLaw::Contact {
            n: Vector3::z(), t1: Vector3::x(), t2: Vector3::y(), wn, cn: c, wt: Vector2::from(wt), c, mu: 0.5, at: Vector3::zeros(), curve: mu_curve.clone(),
        };
        let laws = [
            friction([1.0, 2.0, 0.5], 0.0),
            friction([5.0, 1.0, 0.0], 0.0),
            friction([300.0, -2.0, 0.0], 0.0),
            friction([300.0, -2.0, 0.0], 2.0),
            contact(20.0, [3.0, 1.0]),
            contact(20.0, [12.0, 8.0]),
            contact(20.0, [-600.0, 1.0]),
            with(&table, [1.0, 2.0, 0.5], 0.0),
            with(&table, [5.0, 1.0, 0.0], 0.0),
            with(&table, [300.0, -2.0, 0.0], 0.0),
            with(&table, [3000.0, -2.0, 0.0], 0.0),
            with(&table, [300.0, -2.0, 0.0], 2.0),
        ];
        for law in laws {
            for a in [Vector3::new(0.5, -1.0, -9.81), Vector3::new(-3.0, 2.0, 20.0)] {
                let delta = StageLaw::implicit_rate(std::slice::from_ref(&law), m, a, tau) * tau;
                let fo = a * m - law.force();
                let residual = delta * m - (fo + law.at(&delta).0) * tau;
                assert!(residual.norm() < 1e-12 * (1.0 + fo.norm()), "{law:?}, a = {a}: residual {residual}");
            }
            // −∂f/∂Δ by central differences at a point off the stick boundary.
            let d = Vector3::new(1e-3, -2e-3, 0.5e-3);
            let (_, jac) = law.at(&d);
            for k in 0..3 {
                let h = 1e-7 * Vector3::ith(k, 1.0);
                let diff = -(law.at(&(d + h)).0 - law.at(&(d - h)).0) / 2e-7;
                let err = (jac.column(k) - diff).norm();
                assert!(err < 1e-5 * (1.0 + jac.norm()), "{law:?}: column {k} {} against {diff}", jac.column(k));
            }
        }
    }

    /// Several laws on one mass (two friction elements and a contact, held, sliding,
    /// pressed, leaving): Newton's rate solves the stage m Δ = τ (f_o + Σ f_j(Δ)).
    #[test]
    fn several_laws_on_one_mass_are_solved_together() {
        let (m, tau) = (0.5, 1e-3);
        let friction = |w: [f64; 3], level: f64| StageLaw::Friction { w: Vector3::from(w), c: 1e5, level, viscous: 0.0, dims: 3, at: Vector3::zeros(), curve: Curve::Flat };
        let contact = |wn: f64, wt: [f64; 2]| on_z_plane(wn, wt, 1e5, Vector3::zeros());
        let sets = [
            vec![friction([1.0, 2.0, 0.5], 4.0), friction([-3.0, 0.0, 1.0], 6.0)],
            vec![friction([30.0, -2.0, 0.0], 4.0), friction([1.0, 1.0, 0.0], 2.0), contact(20.0, [3.0, 1.0])],
            vec![contact(20.0, [-30.0, 1.0]), friction([0.0, 50.0, 0.0], 1.0)],
            vec![contact(-5.0, [3.0, 1.0]), friction([0.5, 0.0, 0.0], 1.0)],
        ];
        for laws in &sets {
            for a in [Vector3::new(0.5, -1.0, -9.81), Vector3::new(-300.0, 200.0, 2000.0)] {
                let delta = StageLaw::implicit_rate(laws, m, a, tau) * tau;
                let fo = laws.iter().fold(a * m, |f, l| f - l.force());
                let f = laws.iter().fold(Vector3::zeros(), |f, l| f + l.at(&delta).0);
                let residual = delta * m - (fo + f) * tau;
                assert!(residual.norm() < 1e-12 * (1.0 + fo.norm()), "{laws:?}, a = {a}: residual {residual}");
            }
        }
    }

    /// A rigid body's rates solve its stage: m Δv = τ (f_o + Σ f_j), I Δω = τ (m_o + Σ r_j × f_j),
    /// each law at its point's change Δv + Δω × r_j; contacts held, sliding and leaving.
    #[test]
    fn a_rigid_bodys_rates_solve_its_stage() {
        let (m, tau) = (1.0, 1e-3);
        let inertia = Matrix3::new(0.0034, 0.0001, 0.0, 0.0001, 0.0034, 0.0, 0.0, 0.0, 0.0067);
        let com = Vector3::new(0.1, -0.2, 0.3);
        let corner = |at: [f64; 3], wn: f64, wt: [f64; 2]| on_z_plane(wn, wt, 1e5, com + Vector3::from(at));
        let laws = [
            corner([0.1, 0.1, -0.01], 3.0, [0.5, 0.1]),
            corner([-0.1, 0.1, -0.01], 2.0, [5.0, 0.0]),
            corner([0.1, -0.1, -0.01], -1.0, [0.2, 0.3]),
            corner([-0.1, -0.1, -0.01], 2.5, [0.0, -0.4]),
        ];
        for (a, alpha) in [(Vector3::new(0.5, -1.0, -9.81), Vector3::new(1.0, -2.0, 0.5)), (Vector3::zeros(), Vector3::new(30.0, 0.0, 0.0))] {
            let (ra, ralpha) = StageLaw::rigid_rates(&laws, m, &inertia, com, (a, alpha), tau);
            let (dv, dw) = (ra * tau, ralpha * tau);
            let (mut fo, mut mo) = (a * m, inertia * alpha);
            let (mut f, mut mm) = (Vector3::zeros(), Vector3::zeros());
            for l in &laws {
                let StageLaw::Contact { at, .. } = l else { unreachable!() };
                let r = at - com;
                fo -= l.force();
                mo -= r.cross(&l.force());
                let fl = l.at(&(dv + dw.cross(&r))).0;
                f += fl;
                mm += r.cross(&fl);
            }
            let rv = dv * m - (fo + f) * tau;
            let rw = inertia * dw - (mo + mm) * tau;
            assert!(rv.norm() < 1e-13 && rw.norm() < 1e-13, "residuals {rv}, {rw}");
        }
    }

    /// A rigid body held to the ground by a joint ([`StageLaw::Joint`]: its translational
    /// spring at a point off the centre, its bending spring and its twist friction held and
    /// slipping): its rates solve m Δv = τ (f_o + f), I Δω = τ (m_o + r × f + m(Δω)).
    #[test]
    fn a_rigid_body_on_a_joint_law_solves_its_stage() {
        let (m, tau) = (0.1, 1e-3);
        let inertia = Matrix3::from_diagonal(&Vector3::new(1.25e-4, 2.1e-3, 2.1e-3));
        let com = Vector3::new(0.25, 0.0, 0.0);
        for twist in [0.2, 0.6] {
            let law = StageLaw::Joint {
                w: Vector3::new(0.5, -0.2, 0.1),
                c: 1e3,
                at: Vector3::zeros(),
                axis: Vector3::z(),
                bend: Vector3::new(0.02, -0.01, 0.0),
                c_bend: 1e3,
                twist,
                c_twist: 1e4,
                level: 0.5,
            };
            let (a, alpha) = (Vector3::new(0.0, 1.0, -2.0), Vector3::new(3.0, -1.0, 40.0));
            let (ra, ralpha) = StageLaw::rigid_rates(std::slice::from_ref(&law), m, &inertia, com, (a, alpha), tau);
            let (dv, dw) = (ra * tau, ralpha * tau);
            let r = law.point() - com;
            let fo = a * m - law.force();
            let mo = inertia * alpha - r.cross(&law.force()) - law.moment();
            let fl = law.at(&(dv + dw.cross(&r))).0;
            let rv = dv * m - (fo + fl) * tau;
            let rw = inertia * dw - (mo + r.cross(&fl) + law.moment_at(&dw).0) * tau;
            assert!(rv.norm() < 1e-13 && rw.norm() < 1e-13, "twist {twist}: residuals {rv}, {rw}");
        }
    }

    /// At rest in equilibrium (the element's force balances the rest) the rate is zero.
    #[test]
    fn a_mass_in_equilibrium_keeps_a_zero_rate() {
        let law = StageLaw::Friction { w: Vector3::new(3.0, 0.0, 0.0), c: 1e4, level: 5.0, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat };
        assert_eq!(law.implicit_acceleration(1.0, Vector3::zeros(), 1e-3), Vector3::zeros());
        let other = StageLaw::Friction { w: Vector3::new(-1.0, 0.5, 0.0), c: 3e4, level: 5.0, viscous: 0.0, dims: 3, at: Vector3::zeros(), curve: Curve::Flat };
        assert_eq!(StageLaw::implicit_rate(&[law, other], 1.0, Vector3::zeros(), 1e-3), Vector3::zeros());
    }

    /// Joints coupled through H: the rates solve H Δ = τ (f_o + Σ_i e_i f_i(Δ_i)), one joint
    /// held (Δ₀ within its law's held band) and one sliding at its level; at rest in
    /// equilibrium the rates are zero; the unused rows stay zero.
    #[test]
    fn joint_rates_solve_the_joints_stage_together() {
        let tau = 1e-3;
        let mut h = SMatrix::<f64, MAX_JOINTS, MAX_JOINTS>::zeros();
        h[(0, 0)] = 0.07;
        h[(0, 1)] = 0.02;
        h[(1, 0)] = 0.02;
        h[(1, 1)] = 0.01;
        let held = [StageLaw::Friction { w: Vector3::new(0.3, 0.0, 0.0), c: 5e3, level: 0.5, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat }];
        let sliding = [StageLaw::Friction { w: Vector3::new(-2.0, 0.0, 0.0), c: 5e3, level: 0.5, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat }];
        let laws = |i: usize| -> &[StageLaw] {
            match i {
                0 => &held,
                _ => &sliding,
            }
        };
        let mut a = SVector::<f64, MAX_JOINTS>::zeros();
        a[0] = 4.0;
        a[1] = -700.0;
        let rates = StageLaw::joint_rates(&h, 2, &a, laws, None, tau);
        assert!(rates.rows(2, MAX_JOINTS - 2).iter().all(|v| *v == 0.0));
        let d = rates * tau;
        let mut fo = h * a;
        fo[0] -= held[0].force().x;
        fo[1] -= sliding[0].force().x;
        let f0 = held[0].at(&Vector3::new(d[0], 0.0, 0.0)).0.x;
        let f1 = sliding[0].at(&Vector3::new(d[1], 0.0, 0.0)).0.x;
        let r0 = (h * d)[0] - tau * (fo[0] + f0);
        let r1 = (h * d)[1] - tau * (fo[1] + f1);
        assert!(r0.abs() < 1e-14 && r1.abs() < 1e-14, "residuals {r0:e} {r1:e}");
        assert!((0.3 + 5e3 * d[0]).abs() < 0.5 && f1.abs() == 0.5, "joint 0 held ({f0}), joint 1 slides ({f1})");
        // In equilibrium: each law balancing its joint's other torques.
        let rest = StageLaw::joint_rates(&h, 2, &SVector::zeros(), laws, None, tau);
        assert_eq!(rest, SVector::<f64, MAX_JOINTS>::zeros());
    }
}
