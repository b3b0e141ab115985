//! Plane contact with Coulomb friction I_fricKN, (23)–(24), in the RK4 form of (19):
//! a penalty normal force below a fixed plane and a tangential I_fricK element whose
//! friction limit is μ times the normal force.
//!
//! The plane passes through the point c with unit normal n (default: z = h, n = +z); its
//! fixed orthonormal basis (t₁, t₂, n) is [`plane_basis`]. With penetration
//! δ = n·c − n·p, the contact point velocity v, v_n = n·v and v_t = (t₁·v, t₂·v):
//! f_n = max(0, K δ − B v_n) if δ > 0, else 0                      (23a)
//! f*  = (B + τK) v_t + K e                                        (23b)
//! f_t = gsat(μ f_n, f*),  ε = (f_t − K e)/(B + τK)                 (23c)/(23d)
//! The body receives f_n n − f_t₁ t₁ − f_t₂ t₂. The normal force only pushes (a contact
//! never pulls). The horizontal plane runs the arithmetic of z = h as written for it
//! (v_t = (v_x, v_y), δ = h − p_z), so files without `normal` and `point` keep their bits.

use super::plane_basis;
use crate::stability::{coupled_info, stiffness_warnings};
use crate::stage_form::{continuous_law, resolves_held, unresolved_paper, BatchForm, Form, TauFactor};
use nalgebra::{Vector2, Vector3};
use stiction_framework::batch::{
    evaluate_via_points, ImpedanceBatch, PointImpedance, PointImpedanceBatch, PointMotion,
};
use stiction_framework::component::{Curve, Fault, Impedance, Probe, SignalInfo, StageLaw};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;
use wide::{f64x2, CmpLe};

/// Frictional contact of a point with a fixed plane: z = `height` ([`Horizontal`], the common
/// one: 40 bytes, and two contacts at a time in packed instructions) or any plane ([`Tilt`]).
/// A plane's kind is its type, so a batch of contacts holds one kind and does not ask.
#[derive(Clone, Debug)]
pub struct PlaneContact<P = Horizontal> {
    /// Normal and tangential stiffness (N/m).
    pub k: f64,
    /// Normal and tangential viscosity (N·s/m).
    pub b: f64,
    /// Friction coefficient μ.
    pub mu: f64,
    /// Height of the horizontal plane (m); with a tilt, n·c, the plane's level along n.
    pub height: f64,
    /// The plane's orientation: [`Horizontal`] (no data) or a [`Tilt`].
    pub plane: P,
    /// The factor of τ in (23b): 1, the paper's form, or 0, the continuous law under RK4
    /// where B ≥ T K/2 ([`continuous_law`]), set by `prepare`.
    pub tau_factor: TauFactor,
}

/// The orientation of a plane that is not horizontal: unit normal n and the fixed
/// tangent basis t₁, t₂ of [`plane_basis`], in which the element state e lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tilt {
    pub n: Vector3<f64>,
    pub t1: Vector3<f64>,
    pub t2: Vector3<f64>,
}

impl Tilt {
    /// The tilt of the plane with normal `n` (unit).
    pub fn of(n: Vector3<f64>) -> Tilt {
        let (t1, t2) = plane_basis(&n);
        Tilt { n, t1, t2 }
    }
}

/// The plane z = height: n = +z, t₁ = x, t₂ = y.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Horizontal;

/// The orientation of a contact's plane: its normal n and tangent basis (t₁, t₂).
pub trait PlaneKind: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// Whether n = +z: then (23) runs on the coordinates as written for z = h.
    const HORIZONTAL: bool;
    fn normal(&self) -> Vector3<f64>;
    /// n·a.
    fn along(&self, a: &Vector3<f64>) -> f64;
    /// (t₁·a, t₂·a).
    fn across(&self, a: &Vector3<f64>) -> Vector2<f64>;
    /// The force on the body, f_n n − f_t₁ t₁ − f_t₂ t₂.
    fn force(&self, fn_: f64, ft: Vector2<f64>) -> Vector3<f64>;
    /// t₁ and t₂.
    fn tangents(&self) -> (Vector3<f64>, Vector3<f64>);
}

impl PlaneKind for Horizontal {
    const HORIZONTAL: bool = true;
    #[inline]
    fn normal(&self) -> Vector3<f64> {
        Vector3::z()
    }
    #[inline]
    fn along(&self, a: &Vector3<f64>) -> f64 {
        a.z
    }
    #[inline]
    fn across(&self, a: &Vector3<f64>) -> Vector2<f64> {
        Vector2::new(a.x, a.y)
    }
    #[inline]
    fn force(&self, fn_: f64, ft: Vector2<f64>) -> Vector3<f64> {
        Vector3::new(-ft.x, -ft.y, fn_)
    }
    fn tangents(&self) -> (Vector3<f64>, Vector3<f64>) {
        (Vector3::x(), Vector3::y())
    }
}

impl PlaneKind for Tilt {
    const HORIZONTAL: bool = false;
    fn normal(&self) -> Vector3<f64> {
        self.n
    }
    #[inline]
    fn along(&self, a: &Vector3<f64>) -> f64 {
        self.n.dot(a)
    }
    #[inline]
    fn across(&self, a: &Vector3<f64>) -> Vector2<f64> {
        Vector2::new(self.t1.dot(a), self.t2.dot(a))
    }
    #[inline]
    fn force(&self, fn_: f64, ft: Vector2<f64>) -> Vector3<f64> {
        self.n * fn_ - self.t1 * ft.x - self.t2 * ft.y
    }
    fn tangents(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.t1, self.t2)
    }
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "force on the body"),
    SignalInfo::new("slip_velocity", 3, "m/s", "velocity of the contact point"),
    SignalInfo::new("penetration", 1, "m", "depth below the plane (≤ 0: no contact)"),
    SignalInfo::new("e", 2, "m", "tangential element displacement"),
];

impl<P: PlaneKind> PlaneContact<P> {
    /// (23) with τ: returns the force on the body and the rate of e.
    #[inline]
    pub fn contact(
        &self,
        p: &Vector3<f64>,
        v: &Vector3<f64>,
        e: Vector2<f64>,
        tau: f64,
    ) -> (Vector3<f64>, Vector2<f64>) {
        // The element's form read once: the factor of τ, held rates, coupled.
        let form = self.tau_factor.read();
        let depth = self.height - self.plane.along(p);
        // Held implicitly with its mass, the normal force counts the position's advance τ v_n
        // too, as (19) counts e's.
        let damping = if form.coupled { self.b + tau * self.k } else { self.b };
        let fn_ = if depth > 0.0 { (self.k * depth - damping * self.plane.along(v)).max(0.0) } else { 0.0 };
        let vt = self.plane.across(v);
        let (ft, eps) = self.tangential(self.mu * fn_, vt, e, tau, form);
        (self.plane.force(fn_, ft), eps)
    }

    /// (23b)–(23d): the tangential force and ε for limit μ f_n, tangential velocity v_t and
    /// state e, with the damping B + (τ·factor) K ([`TauFactor`]: (19)'s implicit step, or
    /// the element's continuous law under RK4, as
    /// [`model_c_step`](crate::friction::model_c_step)'s `continuous`).
    #[inline]
    fn tangential(&self, limit: f64, vt: Vector2<f64>, e: Vector2<f64>, tau: f64, form: Form) -> (Vector2<f64>, Vector2<f64>) {
        let d = self.b + tau * form.factor * self.k;
        let fstar = d * vt + self.k * e;
        let n = fstar.norm();
        if n <= limit && form.held_rates {
            let held = self.b * vt + self.k * e;
            let h = held.norm();
            return (if h <= limit { held } else { held * (limit / h) }, vt);
        }
        let ft = if n <= limit { fstar } else { fstar * (limit / n) };
        (ft, (ft - self.k * e) / d)
    }

    /// Penetration δ below the plane at `p`.
    #[inline]
    fn depth(&self, p: &Vector3<f64>) -> f64 {
        self.height - self.plane.along(p)
    }
}

impl<P: PlaneKind> Impedance for PlaneContact<P> {
    /// Records whether the element runs its continuous law ([`continuous_law`]).
    fn prepare(&self, method: stiction_framework::Method, step: f64) -> std::result::Result<(), String> {
        self.tau_factor.set(continuous_law(method, step, self.k, self.b));
        Ok(())
    }
    fn layout(&self) -> Layout {
        Layout::new(2, vec![PortInfo::new("body", Domain::Point3)])
    }
    #[inline]
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        evaluate_via_points(self, m, y, t, tau, force, dy)
    }
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        PointImpedanceBatch::start(self)
    }
    fn join_batch(&self, open: &mut dyn ImpedanceBatch) -> bool {
        PointImpedanceBatch::join(open, self)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].f[e],
            1 => p.motions[0].v[e],
            2 => self.depth(&p.motions[0].p),
            _ => p.state[e],
        }
    }
    fn energy(&self, m: &[Motion], y: &[f64]) -> Option<f64> {
        let depth = self.depth(&m[0].p).max(0.0);
        Some(0.5 * self.k * (depth * depth + y[0] * y[0] + y[1] * y[1]))
    }
    /// The switch of (23a): g = min(K δ, K δ − B v_z) > 0 exactly while the normal force
    /// pushes; continuous, zero where the contact closes (δ = 0 while approaching) and where
    /// it opens (K δ = B v_z while leaving). The stepper splits a step there (stepper/events.rs).
    fn switching(&self, m: &[Motion], _y: &[f64], _t: f64) -> Option<f64> {
        if P::HORIZONTAL {
            let kd = self.k * (self.height - m[0].p.z);
            Some(kd.min(kd - self.b * m[0].v.z))
        } else {
            self.affine_switching().map(|a| a.eval(&m[0].p, &m[0].v))
        }
    }
    /// The stick–slip switch of the tangential element (23b) under its continuous law
    /// ([`slip_switch`](crate::friction::slip_switch)'s test): (μ f_n)² − ‖B v_t + K e‖², > 0
    /// while it holds; `None` in the paper's form.
    fn slip_switching(&self, m: &[Motion], y: &[f64], _t: f64) -> Option<f64> {
        self.affine_slip_switching().map(|a| a.eval(&m[0].p, &m[0].v, [y[0], y[1]]))
    }
    fn affine_slip_switching(&self) -> Option<stiction_framework::AffineSlip> {
        let normal = self.affine_switching()?;
        let (t1, t2) = self.plane.tangents();
        self.tau_factor.continuous().then_some(stiction_framework::AffineSlip { normal, t1, t2, mu: self.mu })
    }
    fn affine_switching(&self) -> Option<stiction_framework::AffineSwitch> {
        let axis = self.plane.normal();
        Some(stiction_framework::AffineSwitch { axis, level: self.height, k: self.k, b: self.b })
    }
    /// The penalty spring (23a) in contact; the held tangential element of (23b) is the
    /// same K and B, with τK more damping per stage in the paper's form ([`TauFactor`]).
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        let implicit = !self.tau_factor.continuous() && !self.tau_factor.held_rates();
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit, coupled: self.tau_factor.coupled() })
    }
    /// In the paper's form, whether RK4 resolves the held element ([`resolves_held`]); where
    /// it would not keep even (19b) stable, and the point mass takes it, the contact is held
    /// implicitly with the mass ([`StageForm::set_held_frequency`](crate::stage_form::StageForm::set_held_frequency)):
    /// its normal force then counts the position's advance too, max(0, K δ − (B + τK) v_n).
    fn held_frequency(&self, method: stiction_framework::Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        let held = resolves_held(method, step, self.k, self.b, omega2);
        self.tau_factor.set_held_rates(held);
        let paper = !self.tau_factor.continuous() && !held;
        self.tau_factor.set_coupled(paper && unresolved_paper(method, step, self.k, self.b, couple));
    }
    fn implicit_coupling(&self) -> bool {
        self.tau_factor.coupled()
    }
    /// The contact's normal force and tangential element in the stage's velocity change
    /// ([`StageLaw::Contact`]).
    fn stage_law(&self, m: &[Motion], y: &[f64], tau: f64, laws: &mut [StageLaw]) {
        let (p, v) = (&m[0].p, &m[0].v);
        let depth = self.depth(p);
        let c = self.b + tau * self.k;
        let (wn, cn) = if depth > 0.0 { (self.k * depth - c * self.plane.along(v), c) } else { (0.0, 0.0) };
        let wt = self.plane.across(v) * c + Vector2::new(y[0], y[1]) * self.k;
        let (t1, t2) = self.plane.tangents();
        if let Some(law) = laws.first_mut() {
            *law = StageLaw::Contact { n: self.plane.normal(), t1, t2, wn, cn, wt, c, mu: self.mu, at: *p, curve: Curve::Flat };
        }
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<stiction_framework::Diagnostic> {
        if self.tau_factor.coupled() {
            return vec![coupled_info("contact stiffness", self.k, inertia, step)];
        }
        stiffness_warnings("contact stiffness", self.k, self.b, inertia, step)
    }
}

impl<P: PlaneKind> PointImpedance for PlaneContact<P> {
    /// The stage form of the whole batch, where all members share it.
    type Shared = BatchForm;

    fn shared(members: &[Self]) -> BatchForm {
        BatchForm::of(members.iter().map(|c| &c.tau_factor))
    }

    #[inline]
    fn evaluate_points(
        &self,
        m: &[PointMotion],
        y: &[f64],
        _t: f64,
        tau: f64,
        force: &mut [Vector3<f64>],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let (y, dy) = (&y[..2], &mut dy[..2]);
        let (f, eps) = self.contact(&m[0].p, &m[0].v, Vector2::new(y[0], y[1]), tau);
        force[0] = f;
        dy[0] = eps.x;
        dy[1] = eps.y;
        Ok(())
    }

    const PAIRS: bool = true;

    /// (23) for two contacts at once: the normal forces lane by lane as in
    /// [`PlaneContact::contact`], the tangential element (23b)–(23d) in packed
    /// instructions (one square root, the divisions two at a time), each operation in the
    /// order of `contact` and [`gsat2`](crate::saturation::gsat2), so bit for bit the same (tests/batch.rs).
    #[inline(always)]
    fn evaluate_points_pair(
        pair: [&Self; 2],
        form: BatchForm,
        m: [&[PointMotion]; 2],
        y: [&[f64]; 2],
        _t: f64,
        tau: f64,
        force: [&mut [Vector3<f64>]; 2],
        dy: [&mut [f64]; 2],
    ) -> Result<(), (usize, Fault)> {
        let [a, b] = pair;
        // Held rates or a contact held implicitly with its mass: member by member.
        let own = |c: &Self| c.tau_factor.held_rates() || c.tau_factor.coupled();
        if !P::HORIZONTAL || (form != BatchForm::Continuous && (own(a) || own(b))) {
            let [fa, fb] = force;
            let [da, db] = dy;
            a.evaluate_points(m[0], y[0], _t, tau, fa, da).map_err(|f| (0, f))?;
            return b.evaluate_points(m[1], y[1], _t, tau, fb, db).map_err(|f| (1, f));
        }
        let normal = |c: &Self, m: &PointMotion| {
            let depth = c.height - m.p.z;
            if depth > 0.0 {
                (c.k * depth - c.b * m.v.z).max(0.0)
            } else {
                0.0
            }
        };
        let fn_ = [normal(a, &m[0][0]), normal(b, &m[1][0])];
        let lane = |g: fn(&Self) -> f64| f64x2::from([g(a), g(b)]);
        let (k, damp, mu) = (lane(|c| c.k), lane(|c| c.b), lane(|c| c.mu));
        // B + (τ·factor) K, with the factor of the whole batch where it has one (τ·1 = τ
        // and B + (τ·0)·K = B exactly, so the same bits as member by member).
        let d = match form {
            BatchForm::Continuous => damp,
            BatchForm::Paper => damp + f64x2::splat(tau) * k,
            BatchForm::Each => damp + f64x2::splat(tau) * lane(|c| c.tau_factor.get()) * k,
        };
        let (ex, ey) = (f64x2::from([y[0][0], y[1][0]]), f64x2::from([y[0][1], y[1][1]]));
        let (vx, vy) = (f64x2::from([m[0][0].v.x, m[1][0].v.x]), f64x2::from([m[0][0].v.y, m[1][0].v.y]));
        let (fx, fy) = (vx * d + ex * k, vy * d + ey * k);
        // gsat2(μ f_n, f*): f* where ‖f*‖ ≤ μ f_n, else f*·(μ f_n/‖f*‖).
        let limit = mu * f64x2::from(fn_);
        let n = (fx * fx + fy * fy).sqrt();
        let q = limit / n;
        let inside = n.cmp_le(limit);
        let (tx, ty) = (inside.blend(fx, fx * q), inside.blend(fy, fy * q));
        let (ex, ey) = (((tx - ex * k) / d).to_array(), ((ty - ey * k) / d).to_array());
        let (tx, ty) = (tx.to_array(), ty.to_array());
        for (l, (f, dy)) in force.into_iter().zip(dy).enumerate() {
            f[0] = Vector3::new(-tx[l], -ty[l], fn_[l]);
            dy[0] = ex[l];
            dy[1] = ey[l];
        }
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let k = p.positive("K")?;
    let b = p.nonneg("B")?;
    let mu = p.nonneg("mu")?;
    if p.has("height") && p.has("point") {
        return Err(p.err("point", "give either 'height' or 'point', not both"));
    }
    let height = p.f64_or("height", 0.0)?;
    let normal = if p.has("normal") { Some(super::unit_vector(p, "normal")?) } else { None };
    let point = if p.has("point") { Some(p.vec3("point")?) } else { None };
    // The horizontal plane through [0, 0, h] keeps the arithmetic of z = h (old files, bit for bit).
    let horizontal = normal.is_none_or(|n| n == Vector3::z()) && point.is_none_or(|c| c.x == 0.0 && c.y == 0.0);
    let tau_factor = TauFactor::default();
    if horizontal {
        let height = point.map_or(height, |c| c.z);
        return Ok(Built::Impedance(Box::new(PlaneContact { k, b, mu, height, plane: Horizontal, tau_factor })));
    }
    let n = normal.unwrap_or(Vector3::z());
    let c = point.unwrap_or(Vector3::new(0.0, 0.0, height));
    Ok(Built::Impedance(Box::new(PlaneContact { k, b, mu, height: n.dot(&c), plane: Tilt::of(n), tau_factor })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "plane_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "height": 0.1}"#,
    r#"{"type": "plane_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "normal": [0, -0.6, 0.8], "point": [0, 0, 0.1]}"#,
];

/// Register `plane_contact`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "plane_contact",
        kind: Kind::Impedance,
        summary: "point-on-plane contact with Coulomb friction I_fricKN (23)–(24), on any fixed plane",
        params: &[
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "normal and tangential stiffness, > 0" },
            ParamDoc { name: "B", unit: "N·s/m", default: None, doc: "normal and tangential viscosity, ≥ 0" },
            ParamDoc { name: "mu", unit: "", default: None, doc: "friction coefficient, ≥ 0" },
            ParamDoc {
                name: "height",
                unit: "m",
                default: Some("0"),
                doc: "the plane passes through [0, 0, height] (or give `point`)",
            },
            ParamDoc {
                name: "normal",
                unit: "",
                default: Some("[0, 0, 1]"),
                doc: "unit normal of the plane, pointing out of the obstacle (normalised; non-zero)",
            },
            ParamDoc {
                name: "point",
                unit: "m",
                default: Some("[0, 0, height]"),
                doc: "a point of the plane (instead of `height`)",
            },
        ],
        ports: &[PortDoc { name: "body", domain: "point3", doc: "the contact point (on a frame: use \"at\")" }],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pair of `cases` evaluated at once gives what one at a time gives, bit for bit,
    /// with the batch's form as `PointImpedance::shared` finds it for them.
    fn pairs_are_two_contacts<P: PlaneKind>(cases: &[(PlaneContact<P>, PointMotion, [f64; 2])]) {
        let form = BatchForm::of(cases.iter().map(|(c, _, _)| &c.tau_factor));
        let one = |c: &PlaneContact<P>, m: &PointMotion, y: &[f64; 2]| {
            let (mut f, mut dy) = ([Vector3::zeros()], [0.0; 2]);
            c.evaluate_points(&[*m], y, 0.0, 5e-5, &mut f, &mut dy).expect("contact");
            (f[0].map(f64::to_bits), dy.map(f64::to_bits))
        };
        for (a, ma, ya) in cases {
            for (b, mb, yb) in cases {
                let (mut fa, mut fb, mut da, mut db) = ([Vector3::zeros()], [Vector3::zeros()], [0.0; 2], [0.0; 2]);
                let (m, y) = ([&[*ma][..], &[*mb][..]], [&ya[..], &yb[..]]);
                PlaneContact::evaluate_points_pair([a, b], form, m, y, 0.0, 5e-5, [&mut fa, &mut fb], [&mut da, &mut db])
                    .expect("pair");
                let pair =
                    ((fa[0].map(f64::to_bits), da.map(f64::to_bits)), (fb[0].map(f64::to_bits), db.map(f64::to_bits)));
                assert_eq!(pair, (one(a, ma, ya), one(b, mb, yb)), "{ma:?} {ya:?} with {mb:?} {yb:?}");
            }
        }
    }

    /// Two contacts at once give what one at a time gives, bit for bit: free, sticking,
    /// sliding, pulling away (no normal force), at rest with no friction force at all; on the
    /// horizontal plane (the packed kernel) and on a tilted one (one at a time).
    #[test]
    fn a_pair_is_two_contacts_bit_for_bit() {
        let tau_factor = TauFactor::default;
        let plane = |mu: f64| PlaneContact { k: 1e5, b: 100.0, mu, height: 0.0, plane: Horizontal, tau_factor: tau_factor() };
        let tilt = Tilt::of(Vector3::new(0.0, -0.6, 0.8));
        let tilted = |mu: f64| PlaneContact { k: 1e5, b: 100.0, mu, height: 0.0, plane: tilt, tau_factor: tau_factor() };
        let at = |p: [f64; 3], v: [f64; 3]| PointMotion { p: Vector3::from(p), v: Vector3::from(v) };
        let motions = [
            (0.5, at([0.0, 0.0, 0.01], [1.0, 0.0, -1.0]), [0.0, 0.0]),
            (0.5, at([0.0, 0.0, -9.81e-5], [1e-7, -2e-7, 0.0]), [1e-6, 0.0]),
            (0.5, at([0.3, 0.1, -9.81e-5], [0.5, -0.25, 1e-3]), [3e-5, -1e-5]),
            (0.2, at([0.0, 0.0, -1e-4], [0.0, 0.0, 20.0]), [1e-5, 1e-5]),
            (0.0, at([0.0, 0.0, -1e-4], [0.0, 0.0, 0.0]), [0.0, -0.0]),
            (0.5, at([0.0, 0.0, -1e-4], [0.0, 0.0, 0.0]), [0.0, 0.0]),
        ];
        // The paper's form (the default), the continuous law, and the two mixed.
        let forms = [(BatchForm::Paper, [false; 6]), (BatchForm::Continuous, [true; 6])];
        let mixed = (BatchForm::Each, [true, false, false, true, true, false]);
        for (form, continuous) in forms.into_iter().chain([mixed]) {
            let flat: Vec<_> = motions.iter().map(|&(mu, m, y)| (plane(mu), m, y)).collect();
            let tilt: Vec<_> = motions.iter().map(|&(mu, m, y)| (tilted(mu), m, y)).collect();
            for (i, &c) in continuous.iter().enumerate() {
                flat[i].0.tau_factor.set(c);
                tilt[i].0.tau_factor.set(c);
            }
            assert_eq!(BatchForm::of(flat.iter().map(|(c, _, _)| &c.tau_factor)), form);
            pairs_are_two_contacts(&flat);
            pairs_are_two_contacts(&tilt);
        }
    }
}
