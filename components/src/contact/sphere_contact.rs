//! Frictional contact between two spheres, I_fricKN (23)–(24) with the Kikuuwe element
//! (19): radius r_a centred at port a's point, r_b at port b's, normal along the line of
//! centres n = (p_a − p_b)/‖p_a − p_b‖, penetration δ = r_a + r_b − ‖p_a − p_b‖, contact
//! point x = p_a − r_a n. The law is [`Pair::law`] (the one of `body_contact`): the normal
//! force max(0, Kδ − B v_n) and the tangential element in the plane ⊥ n.
//!
//! The tangential plane turns as n does, so the element state is a world vector e kept in
//! it by transport: ė = ε − n (e·ṅ) with ṅ = (v_a − v_b)⊥/‖p_a − p_b‖, so that d(e·n)/dt = 0
//! and d‖e‖²/dt = 2 e·ε (the turning neither stores nor releases elastic energy). The law
//! sees e in the basis (t₁, t₂) of [`plane_basis`] at n; its rate is
//! turned back into the world.

use super::body_contact::{pair_params, Geometry, Pair};
use super::plane_basis;
use crate::stage_form::StageForm;
use nalgebra::{Vector2, Vector3};
use stiction_framework::batch::{FrameImpedanceBatch, ImpedanceBatch};
use stiction_framework::component::{ContactPoint, Diagnostic, Fault, Impedance, Probe, SignalInfo, StageLaw, StageSpring};
use stiction_framework::port::{Domain, Force, Layout, Motion};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// Sphere a against sphere b.
#[derive(Clone, Debug)]
pub struct SphereContact {
    pub pair: Pair,
    pub radius_a: f64,
    pub radius_b: f64,
    /// The method it runs under ([`StageForm::continuous_law`]).
    pub form: StageForm,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "force on port a (port b receives −f)"),
    SignalInfo::new("normal_force", 1, "N", "normal force f_n ≥ 0"),
    SignalInfo::new("slip_velocity", 3, "m/s", "velocity of a's contact point relative to b's (world)"),
    SignalInfo::new("penetration", 1, "m", "overlap δ = r_a + r_b − ‖p_a − p_b‖ (≤ 0: no contact)"),
    SignalInfo::new("e", 3, "m", "tangential element displacement (world, ⊥ the line of centres)"),
];

impl SphereContact {
    /// The contact frame (and the distance of the centres) for port motions a and b; a
    /// coincident pair of centres takes n = +z.
    #[inline]
    fn geometry(&self, a: &Motion, b: &Motion) -> (Geometry, f64) {
        let d = a.p - b.p;
        let dist = d.norm();
        let n = if dist > 0.0 { d / dist } else { Vector3::z() };
        let (t1, t2) = plane_basis(&n);
        let depth = self.radius_a + self.radius_b - dist;
        (Geometry { n, t1, t2, depth, x: a.p - n * self.radius_a, r: self.radius_a }, dist)
    }

    /// The world state e in the basis of `g` (its component along n dropped).
    #[inline]
    fn local(g: &Geometry, y: &[f64]) -> Vector3<f64> {
        let e = Vector3::new(y[0], y[1], y[2]);
        Vector3::new(g.t1.dot(&e), g.t2.dot(&e), 0.0)
    }
}

impl Impedance for SphereContact {
    /// Records the method and whether the element runs its continuous law
    /// ([`StageForm::set_element`]).
    fn prepare(&self, method: stiction_framework::Method, step: f64) -> std::result::Result<(), String> {
        self.form.set_element(method, step, self.pair.k, self.pair.b);
        Ok(())
    }
    fn layout(&self) -> Layout {
        Layout::new(3, self.pair.ports())
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
        let (g, dist) = self.geometry(&m[0], &m[1]);
        let c = self.pair.law(&m[0], &m[1], &g, Self::local(&g, y), tau, &self.form);
        self.pair.forces(&m[1], &g, c.f_a, force);
        let dv = m[0].v - m[1].v;
        let ndot = if dist > 0.0 { (dv - g.n * g.n.dot(&dv)) / dist } else { Vector3::zeros() };
        let e = Vector3::new(y[0], y[1], y[2]);
        let rate = g.t1 * c.rate.x + g.t2 * c.rate.y - g.n * e.dot(&ndot);
        dy[..3].copy_from_slice(rate.as_slice());
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        let (g, _) = self.geometry(&p.motions[0], &p.motions[1]);
        match which {
            0 => p.forces[0].f[e],
            1 => self.pair.law(&p.motions[0], &p.motions[1], &g, Self::local(&g, p.state), p.tau, &self.form).normal,
            2 => self.pair.slip(&p.motions[0], &p.motions[1], &g)[e],
            3 => g.depth,
            _ => p.state[e],
        }
    }
    fn energy(&self, m: &[Motion], y: &[f64]) -> Option<f64> {
        let (g, _) = self.geometry(&m[0], &m[1]);
        let e = Self::local(&g, y);
        Some(self.pair.energy(g.depth, &[e.x, e.y]))
    }
    fn switching(&self, m: &[Motion], _y: &[f64], _t: f64) -> Option<f64> {
        Some(self.pair.switching(&m[0], &m[1], &self.geometry(&m[0], &m[1]).0))
    }
    fn slip_switching(&self, m: &[Motion], y: &[f64], t: f64) -> Option<f64> {
        self.switchings(m, y, t)[1]
    }
    fn switchings(&self, m: &[Motion], y: &[f64], _t: f64) -> [Option<f64>; 2] {
        let (g, _) = self.geometry(&m[0], &m[1]);
        self.pair.switchings(&m[0], &m[1], &g, Self::local(&g, y), self.form.continuous_law())
    }
    /// Whether RK4 resolves the held spring with the inertias on the ports
    /// ([`StageForm::set_held_frequency`]). Where its sphere's body takes stage laws (a point
    /// mass or a rigid body, against a fixed sphere) and RK4 would not keep the paper's form
    /// stable, a Coulomb contact is held implicitly with it, as `body_contact`'s
    /// ([`Pair::held_frequency`]).
    fn held_frequency(&self, method: stiction_framework::Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        self.pair.held_frequency(&self.form, method, step, omega2, couple);
    }
    fn implicit_coupling(&self) -> bool {
        self.form.coupled()
    }
    /// The contact's normal force and tangential element in each port's velocity change
    /// ([`Pair::stage_laws`]), the normal and the element's plane those of the stage's
    /// geometry.
    fn stage_law(&self, m: &[Motion], y: &[f64], tau: f64, laws: &mut [StageLaw]) {
        let (g, _) = self.geometry(&m[0], &m[1]);
        let e = Self::local(&g, y);
        self.pair.stage_laws(&m[0], &m[1], &g, Vector2::new(e.x, e.y), tau, laws);
    }
    /// The penalty spring (23a) between the two bodies (τK more tangential damping per
    /// stage in the paper's form, Euler or B < T K/2: [`StageForm::continuous_law`]).
    fn stuck_spring(&self) -> Option<StageSpring> {
        Some(self.pair.stuck_spring(&self.form))
    }
    /// The contact point x on a's sphere and the normal n: the analysis sees both bodies'
    /// rotational inertias there.
    fn is_body_contact(&self) -> bool {
        true
    }
    fn stuck_contact(&self, m: &[Motion]) -> Option<ContactPoint> {
        let (g, _) = self.geometry(&m[0], &m[1]);
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
    let pair = Pair::from_params(p, Domain::Point3)?;
    let radius_a = p.nonneg("radius_a")?;
    let radius_b = p.nonneg("radius_b")?;
    Ok(Built::Impedance(Box::new(SphereContact { pair, radius_a, radius_b, form: StageForm::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "sphere_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "radius_a": 0.05, "radius_b": 0.1, "domain_a": "frame", "domain_b": "frame"}"#,
    r#"{"type": "sphere_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "law": "stribeck", "mu_s": 0.6, "vs": 0.02, "exponent": 1.0, "radius_a": 0.05, "radius_b": 0.1}"#,
];

/// Register `sphere_contact`.
pub fn register(r: &mut Registry) {
    const PAIR: [ParamDoc; 9] = pair_params!(
        "\"point3\"",
        "port b: \"point3\" (a point; on a body use \"at\") or \"frame\" (a body's frame: receives the moment of its radius)"
    );
    const PARAMS: &[ParamDoc] = &[
        PAIR[0],
        PAIR[1],
        PAIR[2],
        ParamDoc { name: "radius_a", unit: "m", default: None, doc: "radius of the sphere centred at a's point, ≥ 0" },
        ParamDoc { name: "radius_b", unit: "m", default: None, doc: "radius of the sphere centred at b's point, ≥ 0" },
        PAIR[3],
        PAIR[4],
        PAIR[5],
        PAIR[6],
        PAIR[7],
        PAIR[8],
    ];
    r.register(ComponentType {
        name: "sphere_contact",
        kind: Kind::Impedance,
        summary: "frictional contact of two spheres (ports a, b) along the line of centres: I_fricKN (23)–(24)",
        params: PARAMS,
        ports: &[
            PortDoc { name: "a", domain: "point3|frame", doc: "centre of sphere a" },
            PortDoc { name: "b", domain: "point3|frame", doc: "centre of sphere b, or ground" },
        ],
        signals: SIGNALS,
        build,
    });
}
