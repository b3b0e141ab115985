//! Frictional contact between two bodies, I_fricKN (23)–(24) with the Kikuuwe element in
//! the RK4 form (19): a point (or a sphere of radius r centred there) of port a against a
//! plane carried by port b.
//!
//! The plane is given in b's body frame (point c_b, unit normal n_b pointing out of b
//! towards a, fixed tangent basis t₁, t₂ of [`plane_basis`]); on a frame port it turns
//! with the body (c = p_b + R_b c_b, n = R_b n_b, t_i = R_b t_i), on a point3 port (or
//! ground) it translates with it (R_b = I). With the contact point x = p_a − r n on a's
//! sphere, the relative velocity of the two material points there
//! v = (v_a + ω_a × (−r n)) − (v_b + ω_b × (x − p_b)), v_n = n·v, v_t = (t₁·v, t₂·v):
//! δ   = r − (p_a − c)·n                                           (penetration)
//! f_n = max(0, K δ − B v_n) if δ > 0, else 0                      (23a)
//! f_t = gsat(μ f_n, (B + τK) v_t + K e),  ė = (f_t − K e)/(B + τK)  (23b)–(23d), (19)
//! a receives F = f_n n − f_t₁ t₁ − f_t₂ t₂ at x, b receives −F at x: equal and opposite,
//! with the moments of their lever arms on frame ports ((−r n) × F on a, (x − p_b) × (−F)
//! on b), so linear and angular momentum are kept. The element state e lives in b's plane
//! basis and turns with b. The tangential law is [`model_c_step`], the one implementation
//! of (19) that `fric_k` and `kikuuwe_c` run.
//!
//! Since v_n = −δ̇ exactly (ṅ ⊥ n), the normal spring stores ½Kδ² and the contact is passive.

use super::{plane_basis, unit_vector};
use crate::friction::law::{DryLaw, FrictionLaw};
use crate::friction::model_c::{model_c_step, slip_switch};
use crate::stability::{coupled_info, stiffness_warnings};
use crate::stage_form::StageForm;
use nalgebra::{Vector2, Vector3};
use stiction_framework::batch::{FrameImpedanceBatch, ImpedanceBatch};
use stiction_framework::component::{ContactPoint, Curve, Diagnostic, Fault, Impedance, MotionChange, Probe, SignalInfo, StageLaw, StageSpring, SwitchKept};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Method, Result};

/// What two-body contacts share: the penalty law and the port domains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pair {
    /// Normal and tangential stiffness K (N/m), > 0.
    pub k: f64,
    /// Normal and tangential viscosity B (N·s/m), ≥ 0.
    pub b: f64,
    /// Friction coefficient μ (the kinetic one under a Stribeck law), ≥ 0.
    pub mu: f64,
    /// The friction law's shape: Coulomb, or Stribeck's curve scaled by f_n.
    pub law: ContactLaw,
    /// Domain of port a (point3 or frame) and of port b.
    pub domain_a: Domain,
    pub domain_b: Domain,
}

/// The friction law of a contact as coefficients, scaled by the normal force f_n at each
/// evaluation: Coulomb μ f_n, or the Stribeck curve f_n (μ + (μ_s − μ) exp(−(s/v_s)^δ)),
/// whose Φ_Z is the closed form (57) of the friction paper (the one `kikuuwe_c` uses),
/// accurate while Z f_n max|dμ/ds| ≪ 1 ((48)/(58), Z = 1/(B + τK)): a contact pressed
/// harder needs a gentler curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactLaw {
    Coulomb,
    Stribeck { mu_s: f64, vs: f64, exponent: f64 },
}

/// The contact frame at one instant: unit normal n (out of b towards a), tangents t₁, t₂,
/// penetration δ and the contact point x (on a's sphere).
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub n: Vector3<f64>,
    pub t1: Vector3<f64>,
    pub t2: Vector3<f64>,
    pub depth: f64,
    pub x: Vector3<f64>,
    /// a's radius (the lever arm of F on a is −r n).
    pub r: f64,
}

/// The law's result at one instant.
#[derive(Clone, Copy, Debug)]
pub struct Contact {
    /// Force on a (b receives −f_a).
    pub f_a: Vector3<f64>,
    /// Normal force f_n ≥ 0.
    pub normal: f64,
    /// Tangential force f_t (components along t₁, t₂, and a third that is zero).
    pub ft: Vector3<f64>,
    /// Rate of the element state (along t₁, t₂, third zero).
    pub rate: Vector3<f64>,
    /// Relative velocity of a's contact point with respect to b's (world).
    pub v: Vector3<f64>,
}

impl Pair {
    /// Angular velocity of port `m` if it is a frame port (a point has none).
    #[inline]
    fn omega(domain: Domain, m: &Motion) -> Vector3<f64> {
        if domain == Domain::Frame {
            m.w
        } else {
            Vector3::zeros()
        }
    }

    /// Relative velocity at the contact point x of [`Geometry`].
    #[inline]
    pub fn slip(&self, a: &Motion, b: &Motion, g: &Geometry) -> Vector3<f64> {
        let va = a.v + Self::omega(self.domain_a, a).cross(&(g.n * -g.r));
        let vb = b.v + Self::omega(self.domain_b, b).cross(&(g.x - b.p));
        va - vb
    }

    /// (23) at geometry `g`, element state `e` (in the (t₁, t₂) basis) and stage step τ, in
    /// the element form of `form` ([`model_c_step`]). Where the contact is held implicitly
    /// with its masses ([`StageForm::coupled`]) the normal force counts the position's
    /// advance too: max(0, K δ − (B + τK) v_n).
    #[inline]
    pub fn law(&self, a: &Motion, b: &Motion, g: &Geometry, e: Vector3<f64>, tau: f64, form: &StageForm) -> Contact {
        let v = self.slip(a, b, g);
        let damping = if form.coupled() { self.b + tau * self.k } else { self.b };
        let normal = if g.depth > 0.0 { (self.k * g.depth - damping * g.n.dot(&v)).max(0.0) } else { 0.0 };
        let vt = Vector3::new(g.t1.dot(&v), g.t2.dot(&v), 0.0);
        let (ft, rate, _) = model_c_step(self.k, self.b, &self.friction(normal), vt, e, tau, form.element());
        let f_a = g.n * normal - g.t1 * ft.x - g.t2 * ft.y;
        Contact { f_a, normal, ft, rate, v }
    }

    /// The contact's normal force and tangential element as functions of each port's velocity
    /// change Δ within the stage ([`StageLaw::Contact`]), at geometry `g` and element state
    /// `e` (in the (t₁, t₂) basis): a's as the relative velocity, b's against it.
    pub fn stage_laws(&self, a: &Motion, b: &Motion, g: &Geometry, e: Vector2<f64>, tau: f64, laws: &mut [StageLaw]) {
        let v = self.slip(a, b, g);
        let (k, c) = (self.k, self.b + tau * self.k);
        let (wn, cn) = if g.depth > 0.0 { (k * g.depth - c * g.n.dot(&v), c) } else { (0.0, 0.0) };
        let wt = Vector2::new(g.t1.dot(&v), g.t2.dot(&v)) * c + e * k;
        let mu = self.mu;
        let curve = match self.law {
            ContactLaw::Coulomb => Curve::Flat,
            ContactLaw::Stribeck { mu_s, vs, exponent } => Curve::Stribeck { peak: mu_s, vs, exponent },
        };
        if let [la, lb, ..] = laws {
            *la = StageLaw::Contact { n: g.n, t1: g.t1, t2: g.t2, wn, cn, wt, c, mu, at: g.x, curve: curve.clone() };
            *lb = StageLaw::Contact { n: -g.n, t1: -g.t1, t2: -g.t2, wn, cn, wt, c, mu, at: g.x, curve };
        }
    }

    /// Whether RK4 resolves the held spring with the inertias on the ports, and whether a
    /// contact (Coulomb or Stribeck) is held implicitly with its body where it would not
    /// ([`StageForm::set_held_frequency`]; `couple` from the stepper: where its body takes
    /// stage laws, against the ground).
    pub fn held_frequency(&self, form: &StageForm, method: Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        form.set_held_frequency(method, step, self.k, self.b, omega2, couple);
    }

    /// The penalty spring (23a) between the two bodies, the held tangential element the same
    /// K and B ([`StageSpring`], in `form`).
    pub fn stuck_spring(&self, form: &StageForm) -> StageSpring {
        StageSpring { k: self.k, b: self.b, implicit: !form.held_rates(), coupled: form.coupled() }
    }

    /// `check`'s facts and warnings for the contact's stiffness in `form`: held implicitly
    /// (an info), or RK4's step limit on it.
    pub fn diagnose(&self, form: &StageForm, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
        if form.coupled() {
            return vec![coupled_info("contact stiffness", self.k, inertia, step)];
        }
        stiffness_warnings("contact stiffness", self.k, self.b, inertia, step)
    }

    /// The friction law at normal force f_n (no viscous part: nothing acts out of contact).
    #[inline]
    pub fn friction(&self, normal: f64) -> FrictionLaw {
        let dry = match self.law {
            ContactLaw::Coulomb => DryLaw::Coulomb { f: self.mu * normal },
            ContactLaw::Stribeck { mu_s, vs, exponent } => {
                DryLaw::Stribeck { fc: self.mu * normal, fs: mu_s * normal, vs, exponent }
            }
        };
        FrictionLaw { dry, d: 0.0 }
    }

    /// The forces on ports a and b: F at x on a, −F on b, moments from the lever arms.
    #[inline]
    pub fn forces(&self, b: &Motion, g: &Geometry, f_a: Vector3<f64>, force: &mut [Force]) {
        force[0] = match self.domain_a {
            Domain::Frame => Force::wrench(f_a, (g.n * -g.r).cross(&f_a)),
            _ => Force::point(f_a),
        };
        force[1] = match self.domain_b {
            Domain::Frame => Force::wrench(-f_a, (g.x - b.p).cross(&-f_a)),
            _ => Force::point(-f_a),
        };
    }

    /// The switch of (23a): g = min(K δ, K δ − B v_n) > 0 exactly while the normal force
    /// pushes (as `plane_contact`'s), so the stepper splits a step where the contact opens
    /// or closes (stepper/events.rs).
    #[inline]
    pub fn switching(&self, a: &Motion, b: &Motion, g: &Geometry) -> f64 {
        let kd = self.k * g.depth;
        kd.min(kd - self.b * g.n.dot(&self.slip(a, b, g)))
    }

    /// [`switching`](Self::switching) and the stick–slip switch of the tangential element
    /// under its continuous law ([`slip_switch`] at the normal force of [`law`](Self::law):
    /// positive while it holds; `None` in the paper's form, `continuous` false, and under a
    /// Stribeck law), the relative velocity computed once.
    #[inline]
    pub fn switchings(&self, a: &Motion, b: &Motion, g: &Geometry, e: Vector3<f64>, continuous: bool) -> [Option<f64>; 2] {
        let v = self.slip(a, b, g);
        let (kd, vn) = (self.k * g.depth, g.n.dot(&v));
        let contact = kd.min(kd - self.b * vn);
        if !continuous {
            return [Some(contact), None];
        }
        let normal = if g.depth > 0.0 { (self.k * g.depth - self.b * vn).max(0.0) } else { 0.0 };
        let vt = Vector3::new(g.t1.dot(&v), g.t2.dot(&v), 0.0);
        [Some(contact), slip_switch(self.k, self.b, &self.friction(normal), vt, e)]
    }

    /// The ports a and b.
    pub fn ports(&self) -> Vec<PortInfo> {
        vec![PortInfo::new("a", self.domain_a), PortInfo::new("b", self.domain_b)]
    }

    /// K, B, mu, domain_a and domain_b, with `domain_b`'s default.
    pub fn from_params(p: &mut Params, default_b: Domain) -> Result<Pair> {
        let k = p.positive("K")?;
        let b = p.nonneg("B")?;
        let mu = p.nonneg("mu")?;
        let law = match p.choice("law", &["coulomb", "stribeck"])? {
            "stribeck" => {
                let mu_s = p.nonneg("mu_s")?;
                if mu_s < mu {
                    return Err(p.err("mu_s", format!("breakaway coefficient mu_s = {mu_s} must be ≥ mu = {mu}")));
                }
                ContactLaw::Stribeck { mu_s, vs: p.positive("vs")?, exponent: p.positive_or("exponent", 2.0)? }
            }
            _ => ContactLaw::Coulomb,
        };
        let domain = |p: &mut Params, key: &str, first: Domain| -> Result<Domain> {
            let choices: &[&'static str] =
                if first == Domain::Frame { &["frame", "point3"] } else { &["point3", "frame"] };
            Ok(if p.choice(key, choices)? == "frame" { Domain::Frame } else { Domain::Point3 })
        };
        let domain_a = domain(p, "domain_a", Domain::Point3)?;
        let domain_b = domain(p, "domain_b", default_b)?;
        Ok(Pair { k, b, mu, law, domain_a, domain_b })
    }

    /// ½K(δ₊² + ‖e‖²).
    pub fn energy(&self, depth: f64, e: &[f64]) -> f64 {
        let d = depth.max(0.0);
        0.5 * self.k * (d * d + e.iter().map(|x| x * x).sum::<f64>())
    }
}

/// The keys of [`Pair::from_params`]; `$b` is domain_b's default.
macro_rules! pair_params {
    ($b:literal, $bdoc:literal) => {
        [
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "normal and tangential stiffness, > 0" },
            ParamDoc { name: "B", unit: "N·s/m", default: None, doc: "normal and tangential viscosity, ≥ 0" },
            ParamDoc { name: "mu", unit: "", default: None, doc: "friction coefficient (stribeck: the kinetic one), ≥ 0" },
            ParamDoc {
                name: "law",
                unit: "",
                default: Some("\"coulomb\""),
                doc: "\"coulomb\" (mu f_n) or \"stribeck\" (f_n (mu + (mu_s − mu) exp(−(v/vs)^exponent)))",
            },
            ParamDoc { name: "mu_s", unit: "", default: None, doc: "stribeck: breakaway coefficient, ≥ mu" },
            ParamDoc { name: "vs", unit: "m/s", default: None, doc: "stribeck: Stribeck speed, > 0" },
            ParamDoc { name: "exponent", unit: "", default: Some("2"), doc: "stribeck: shape exponent, > 0" },
            ParamDoc {
                name: "domain_a",
                unit: "",
                default: Some("\"point3\""),
                doc: "port a: \"point3\" (a point; on a body use \"at\") or \"frame\" (a body's frame: receives the moment of its radius)",
            },
            ParamDoc { name: "domain_b", unit: "", default: Some($b), doc: $bdoc },
        ]
    };
}
pub(crate) use pair_params;

/// A point or sphere of port a against a plane of port b.
#[derive(Clone, Debug)]
pub struct BodyContact {
    pub pair: Pair,
    /// Radius r ≥ 0 of the sphere centred at a's point.
    pub radius: f64,
    /// The plane in b's frame: a point, the unit normal and the tangent basis.
    pub point: Vector3<f64>,
    pub normal: Vector3<f64>,
    pub t1: Vector3<f64>,
    pub t2: Vector3<f64>,
    /// The method it runs under ([`StageForm::continuous_law`]).
    pub form: StageForm,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "force on port a (port b receives −f)"),
    SignalInfo::new("normal_force", 1, "N", "normal force f_n ≥ 0"),
    SignalInfo::new("slip_velocity", 3, "m/s", "velocity of a's contact point relative to b's (world)"),
    SignalInfo::new("penetration", 1, "m", "depth δ of a's sphere below b's plane (≤ 0: no contact)"),
    SignalInfo::new("e", 2, "m", "tangential element displacement, in b's plane basis"),
];

impl BodyContact {
    /// The contact frame for port motions a and b.
    #[inline]
    pub fn geometry(&self, a: &Motion, b: &Motion) -> Geometry {
        let (c, n, t1, t2) = if self.pair.domain_b == Domain::Frame {
            let r = &b.rot;
            (b.p + r * self.point, r * self.normal, r * self.t1, r * self.t2)
        } else {
            (b.p + self.point, self.normal, self.t1, self.t2)
        };
        let depth = self.radius - (a.p - c).dot(&n);
        Geometry { n, t1, t2, depth, x: a.p - n * self.radius, r: self.radius }
    }
}

impl Impedance for BodyContact {
    /// Records the method and whether the element runs its continuous law
    /// ([`StageForm::set_element`]).
    fn prepare(&self, method: stiction_framework::Method, step: f64) -> std::result::Result<(), String> {
        self.form.set_element(method, step, self.pair.k, self.pair.b);
        Ok(())
    }
    fn layout(&self) -> Layout {
        Layout::new(2, self.pair.ports())
    }
    #[inline]
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        _t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let g = self.geometry(&m[0], &m[1]);
        let c = self.pair.law(&m[0], &m[1], &g, Vector3::new(y[0], y[1], 0.0), tau, &self.form);
        self.pair.forces(&m[1], &g, c.f_a, force);
        dy[0] = c.rate.x;
        dy[1] = c.rate.y;
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        let g = self.geometry(&p.motions[0], &p.motions[1]);
        match which {
            0 => p.forces[0].f[e],
            1 => self.pair.law(&p.motions[0], &p.motions[1], &g, Vector3::new(p.state[0], p.state[1], 0.0), p.tau, &self.form).normal,
            2 => self.pair.slip(&p.motions[0], &p.motions[1], &g)[e],
            3 => g.depth,
            _ => p.state[e],
        }
    }
    fn energy(&self, m: &[Motion], y: &[f64]) -> Option<f64> {
        Some(self.pair.energy(self.geometry(&m[0], &m[1]).depth, y))
    }
    fn switching(&self, m: &[Motion], _y: &[f64], _t: f64) -> Option<f64> {
        Some(self.pair.switching(&m[0], &m[1], &self.geometry(&m[0], &m[1])))
    }
    fn slip_switching(&self, m: &[Motion], y: &[f64], t: f64) -> Option<f64> {
        self.switchings(m, y, t)[1]
    }
    fn switchings(&self, m: &[Motion], y: &[f64], _t: f64) -> [Option<f64>; 2] {
        let (g, e) = (self.geometry(&m[0], &m[1]), Vector3::new(y[0], y[1], 0.0));
        self.pair.switchings(&m[0], &m[1], &g, e, self.form.continuous_law())
    }
    /// With what bounds their change ([`switching_reach`](Impedance::switching_reach)): the
    /// lever |p_a − c| of the normal's turn, the slip speed |v|, the lever |x − p_b| of b's
    /// spin, the normal force, |B v_t + K e| and e.
    fn switchings_kept(&self, m: &[Motion], y: &[f64], t: f64) -> ([Option<f64>; 2], Option<SwitchKept>) {
        let (a, b) = (&m[0], &m[1]);
        let g = self.geometry(a, b);
        let e = Vector3::new(y[0], y[1], 0.0);
        let out = self.pair.switchings(a, b, &g, e, self.form.continuous_law());
        let _ = t;
        let c = if self.pair.domain_b == Domain::Frame { b.p + b.rot * self.point } else { b.p + self.point };
        let v = self.pair.slip(a, b, &g);
        let (kd, vn) = (self.pair.k * g.depth, g.n.dot(&v));
        let normal = if g.depth > 0.0 { (kd - self.pair.b * vn).max(0.0) } else { 0.0 };
        let w = Vector3::new(g.t1.dot(&v), g.t2.dot(&v), 0.0) * self.pair.b + e * self.pair.k;
        let kept = [(a.p - c).norm(), v.norm(), (g.x - b.p).norm(), normal, w.norm(), e.x, e.y, 0.0];
        (out, Some(SwitchKept(kept)))
    }
    /// From the ports' changes: |Δδ| ≤ |Δp_a| + |Δp_b| + |c_b| turn_b + |p_a − c| |Δn| with
    /// |Δn| ≤ turn_b, |Δv| ≤ |Δv_a| + r (|Δω_a| + |ω_a| |Δn|) + |Δv_b| + |Δω_b| |x − p_b|' +
    /// |ω_b| |Δ(x − p_b)|, |Δv_n| ≤ |Δv| + |Δn| |v|: the contact switch min(K δ, K δ − B v_n)
    /// moves at most K |Δδ| + B |Δv_n|; the stick–slip switch (μ f_n)² − |B v_t + K e|² at most
    /// μ² (2 f_n + Δf) Δf + (2 |w| + Δw) Δw with Δf that bound and Δw ≤ B (|Δv| + |Δn| |v|) + K |Δe|
    /// (Coulomb; a Stribeck law has no stick–slip switch).
    fn switching_reach(&self, kept: &SwitchKept, change: &[MotionChange], y: &[f64]) -> [f64; 2] {
        let [lever, speed, arm, normal, w, e0, e1, _] = kept.0;
        let (a, b) = (change[0], change[1]);
        let (k, bv, r) = (self.pair.k, self.pair.b, self.radius);
        let dn = b.turn;
        let depth = a.dp + b.dp + self.point.norm() * b.turn + lever * dn;
        let moved = a.dp + r * dn + b.dp;
        let dv = a.dv + r * (a.dw + a.w * dn) + b.dv + b.dw * (arm + moved) + b.w * moved;
        let contact = k * depth + bv * (dv + dn * speed);
        let de = ((y[0] - e0).powi(2) + (y[1] - e1).powi(2)).sqrt();
        let dw = bv * (dv + dn * speed) + k * de;
        let mu = self.pair.mu;
        [contact, mu * mu * (2.0 * normal + contact) * contact + (2.0 * w + dw) * dw]
    }
    /// Whether RK4 resolves the held spring with the inertias on the ports
    /// ([`StageForm::set_held_frequency`]).
    /// Where its body takes stage laws (a point mass or a rigid body, against the ground)
    /// and RK4 would not keep the paper's form stable, a Coulomb contact is held implicitly
    /// with it ([`StageForm::set_held_frequency`]).
    fn held_frequency(&self, method: Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        self.pair.held_frequency(&self.form, method, step, omega2, couple);
    }
    fn implicit_coupling(&self) -> bool {
        self.form.coupled()
    }
    /// The contact's normal force and tangential element in each port's velocity change
    /// ([`StageLaw::Contact`]): a's as the relative velocity, b's against it.
    fn stage_law(&self, m: &[Motion], y: &[f64], tau: f64, laws: &mut [StageLaw]) {
        let g = self.geometry(&m[0], &m[1]);
        self.pair.stage_laws(&m[0], &m[1], &g, Vector2::new(y[0], y[1]), tau, laws);
    }
    /// The penalty spring (23a) between the two bodies, the held tangential element the
    /// same K and B (τK more damping per stage in the paper's form, Euler or B < T K/2: [`StageForm::continuous_law`]);
    /// the stability analysis sees both bodies' inertias through it (framework/src/stability.rs).
    fn stuck_spring(&self) -> Option<StageSpring> {
        Some(self.pair.stuck_spring(&self.form))
    }
    /// The contact point x on a's sphere and the normal n: the analysis sees both bodies'
    /// rotational inertias there.
    fn is_body_contact(&self) -> bool {
        true
    }
    fn stuck_contact(&self, m: &[Motion]) -> Option<ContactPoint> {
        let g = self.geometry(&m[0], &m[1]);
        Some(ContactPoint { point: g.x, normal: g.n })
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
        self.pair.diagnose(&self.form, inertia, step)
    }
    /// A typed batch of frame-port members (framework/src/batch.rs): the same `evaluate`,
    /// called statically.
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        FrameImpedanceBatch::start(self)
    }
    fn join_batch(&self, open: &mut dyn ImpedanceBatch) -> bool {
        FrameImpedanceBatch::join(open, self)
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let pair = Pair::from_params(p, Domain::Frame)?;
    let radius = p.nonneg_or("radius", 0.0)?;
    let (mut point, mut normal) = (Vector3::zeros(), Vector3::z());
    if let Some(mut plane) = p.object("plane")? {
        if plane.has("point") {
            point = plane.vec3("point")?;
        }
        if plane.has("normal") {
            normal = unit_vector(&mut plane, "normal")?;
        }
        plane.finish()?;
    }
    let (t1, t2) = plane_basis(&normal);
    Ok(Built::Impedance(Box::new(BodyContact { pair, radius, point, normal, t1, t2, form: StageForm::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "body_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "radius": 0.01, "domain_a": "frame", "domain_b": "point3", "plane": {"point": [0, 0, 0.05], "normal": [0, 0, 1]}}"#,
    r#"{"type": "body_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "law": "stribeck", "mu_s": 0.7, "vs": 0.01, "exponent": 1.5}"#,
];

/// Register `body_contact`.
pub fn register(r: &mut Registry) {
    const PAIR: [ParamDoc; 9] = pair_params!(
        "\"frame\"",
        "port b: \"frame\" (a body's frame or ground: the plane turns with the body) or \"point3\" (the plane translates with the point)"
    );
    const PARAMS: &[ParamDoc] = &[
        PAIR[0],
        PAIR[1],
        PAIR[2],
        ParamDoc { name: "radius", unit: "m", default: Some("0"), doc: "radius r of a sphere centred at a's point, ≥ 0" },
        ParamDoc { name: "plane", unit: "", default: Some("{}"), doc: "b's plane {\"point\", \"normal\"} in b's body frame" },
        ParamDoc { name: "plane.point", unit: "m", default: Some("[0, 0, 0]"), doc: "a point of the plane, in b's frame" },
        ParamDoc {
            name: "plane.normal",
            unit: "",
            default: Some("[0, 0, 1]"),
            doc: "normal of the plane in b's frame, out of b towards a (normalised; non-zero)",
        },
        PAIR[3],
        PAIR[4],
        PAIR[5],
        PAIR[6],
        PAIR[7],
        PAIR[8],
    ];
    r.register(ComponentType {
        name: "body_contact",
        kind: Kind::Impedance,
        summary: "frictional contact of a point or sphere (port a) with a plane carried by a body (port b): I_fricKN (23)–(24)",
        params: PARAMS,
        ports: &[
            PortDoc { name: "a", domain: "point3|frame", doc: "the point (sphere centre); on a body use \"at\"" },
            PortDoc { name: "b", domain: "frame|point3", doc: "the body that carries the plane, or ground" },
        ],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::Lcg;
    use nalgebra::UnitQuaternion;
    use stiction_framework::port::Offset;

    fn vec3(r: &mut Lcg, s: f64) -> Vector3<f64> {
        Vector3::new(r.next(-s, s), r.next(-s, s), r.next(-s, s))
    }

    fn motion(r: &mut Lcg) -> Motion {
        Motion { p: vec3(r, 0.5), v: vec3(r, 1.0), rot: UnitQuaternion::from_scaled_axis(vec3(r, 2.0)), w: vec3(r, 3.0) }
    }

    /// `to` moved from `from` by up to `s` in each part.
    fn moved(r: &mut Lcg, from: &Motion, s: f64) -> Motion {
        let turn = UnitQuaternion::from_scaled_axis(vec3(r, s));
        Motion { p: from.p + vec3(r, s), v: from.v + vec3(r, s), rot: turn * from.rot, w: from.w + vec3(r, s) }
    }

    /// The reach bounds the change of both switching functions between any two port
    /// motions (frames carrying the ports at offsets, the element's state changed too), from
    /// changes a millionth of the scale to the scale itself: the check that reads kept values
    /// (stepper/events.rs) never misses a side.
    #[test]
    fn the_reach_bounds_how_far_the_switching_functions_move() {
        let mut r = Lcg(3);
        let (mut tight, mut checked) = (0.0f64, [0; 2]);
        for case in 0..20000 {
            let normal = vec3(&mut r, 1.0).normalize();
            let (t1, t2) = super::super::plane_basis(&normal);
            let (k, b) = (r.next(1e3, 1e6), r.next(1.0, 1e3));
            let form = StageForm::default();
            form.set_element(Method::Rk4, 1e-3, k, b);
            let pair = Pair { k, b, mu: r.next(0.1, 1.0), law: ContactLaw::Coulomb, domain_a: Domain::Frame, domain_b: Domain::Frame };
            let c = BodyContact { pair, radius: r.next(0.0, 0.1), point: vec3(&mut r, 0.3), normal, t1, t2, form };
            // Each port a point of a frame at an offset; the contact pressed about half the time.
            let (fa, fb) = (motion(&mut r), motion(&mut r));
            let (oa, ob) = (Offset::Body(vec3(&mut r, 0.2)), Offset::Body(vec3(&mut r, 0.2)));
            let mut fa = fa;
            let (ma, mb) = (oa.apply(&fa).0, ob.apply(&fb).0);
            let g0 = c.geometry(&ma, &mb);
            fa.p += c.geometry(&ma, &mb).n * (g0.depth - r.next(-1e-3, 1e-3));
            let (ma, mb) = (oa.apply(&fa).0, ob.apply(&fb).0);
            let y0 = [r.next(-1e-3, 1e-3), r.next(-1e-3, 1e-3)];
            let (g, kept) = c.switchings_kept(&[ma, mb], &y0, 0.0);
            let kept = kept.expect("a body contact keeps its numbers");
            let s = 10f64.powf(r.next(-6.0, 0.0));
            let (ta, tb) = (moved(&mut r, &fa, s), moved(&mut r, &fb, s));
            let y1 = [y0[0] + r.next(-s, s) * 1e-3, y0[1] + r.next(-s, s) * 1e-3];
            let after = c.switchings(&[oa.apply(&ta).0, ob.apply(&tb).0], &y1, 0.0);
            let change = [
                MotionChange::between(&fa, &ta).at_lever(oa.vector().norm()),
                MotionChange::between(&fb, &tb).at_lever(ob.vector().norm()),
            ];
            let reach = c.switching_reach(&kept, &change, &y1);
            // The stick–slip switch's bound holds where the contact keeps its side (the check
            // reads kept values only where both functions are clear of zero): where it opens or
            // closes, the normal force may jump.
            let kept_side = g[0].is_some_and(|g| g.abs() > reach[0]);
            for i in 0..2 {
                let (Some(before), Some(after)) = (g[i], after[i]) else { continue };
                if i == 1 && !kept_side {
                    continue;
                }
                checked[i] += 1;
                let moved = (after - before).abs();
                assert!(moved <= reach[i] * (1.0 + 1e-9) + 1e-9 * before.abs().max(after.abs()), "case {case}, function {i}: moved {moved} beyond {}", reach[i]);
                if reach[i] > 0.0 {
                    tight = tight.max(moved / reach[i]);
                }
            }
        }
        // Not a bound so loose that it bounds nothing.
        assert!(tight > 0.1, "largest share of the reach used: {tight}");
        assert!(checked[0] > 10000 && checked[1] > 2000, "{checked:?}");
    }
}
