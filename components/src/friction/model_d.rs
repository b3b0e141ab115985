//! Kikuuwe model D, the compliant admittance (45): a mass M (the port `body`) attached
//! through a spring K and damper B to a slider that rubs on a fixed surface; force in,
//! velocity out. The mass, the compliance and the friction are solved in one implicit step,
//! so any stiffness is stable (K → ∞ gives model A) — unlike a model-C contact on a separate
//! mass, which oscillates once T² ≥ M/(4K) (63).
//!
//! State: mass position q and velocity u, slider position w (deflection e = q − w). One step
//! of size τ under applied force h, with A = (τ²K + τB + M)/(M(B + τK)):
//! v* = u + τh/M + K e/(B + τK),  y = Φ_A(v*),  u_new = u + τ(h − y)/M,
//! slider velocity v* − A y (exactly 0 while stuck, so w does not drift);
//! e_new = e + τ(u_new − slider velocity) equals (45c). Rates: u̇ = (h − y)/M, ẇ, and
//! q̇ = u_new under `"method": "euler"` ((45) bit for bit), else q̇ = u, the stage velocity
//! ([`StageForm`], docs/explanation/friction.md): with F = 0 the mass is free and the stages are RK4 on
//! M u̇ = h, q̇ = u (fourth order). The slider rate is exactly 0.0 while stuck.
//!
//! While the slider is stuck, (45)'s step decides only that it holds: under RK4 a stuck stage
//! returns the continuous mechanics of the mass on the presliding spring–damper, q̇ = u,
//! M u̇ = h − K e − B u, ẇ = 0, so the stuck state is fourth order (issue 33) — where RK4
//! resolves that spring–damper (its step map stable at 2T, checked in `prepare`). A contact
//! too stiff for that keeps (45)'s implicit rates, q̇ = u_new and u̇ = (h − y)/M, which keep
//! the held mass dissipative at any K (first order, as under Euler).
//!
//! Where RK4 also resolves the slider's relaxation (B ≥ T K/2, the rule of the I_fricK
//! elements: [`continuous_law`]), every stage, sliding too, returns the continuous law of
//! (45), its step at τ = 0 ([`ModelD::continuous`]): the massless slider holds while
//! |K e + B u| is within the static level, y = K e + B u, ẇ = 0, and slides otherwise with
//! y = Φ_{1/B}(u + K e/B), ẇ = u + (K e − y)/B. That vector field is continuous in the
//! state, with a kink where the slider sticks or slips; the kink is a state switch
//! located within the step (issue 43). With τ in (45) the sliding force's direction and the
//! slider's rate moved with the stage step: first order while sliding and through every
//! switch.

use super::common::{read_init, INIT_PARAMS};
use super::law::{DryLaw, FrictionLaw, LAW_PARAMS};
use super::model_c::stage_curve;
use crate::doc_table::table;
use crate::stage_form::{continuous_law, StageForm, StopSwitch};
use crate::ndim::{dims_param, domain_of, first, load, store, vec_n_or_zero, DIMS_DOC};
use nalgebra::Vector3;
use std::sync::OnceLock;
use stiction_framework::component::{Admittance, Curve, Diagnostic, Fault, PortLaws, Probe, SignalInfo, StageBody, StageLaw};
use stiction_framework::port::{Force, Layout, Motion, PortInfo};
use stiction_framework::stability::PortModel;
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Method, Result};

/// Model D: state [q (n), u (n), w (n)].
#[derive(Clone, Debug)]
pub struct ModelD {
    pub dims: usize,
    /// Mass M (kg), > 0.
    pub mass: f64,
    /// Stiffness K (N/m), > 0.
    pub k: f64,
    /// Viscosity B (N·s/m), ≥ 0.
    pub b: f64,
    pub law: FrictionLaw,
    /// Constant applied force (N).
    pub force: Vector3<f64>,
    pub q0: Vector3<f64>,
    pub v0: Vector3<f64>,
    /// Initial deflection e(0) = q(0) − w(0) (m).
    pub e0: Vector3<f64>,
    /// Euler (paper) or RK4 position rate, set by `prepare`.
    pub form: StageForm,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 0, "m", "position of the mass").of_state(),
    SignalInfo::new("u", 0, "m/s", "velocity of the mass (u of (45))").of_state(),
    SignalInfo::new("f", 0, "N", "friction force on the mass (−f of (45); opposes sliding)"),
    SignalInfo::new("e", 0, "m", "deflection e = q − w of the spring–damper").of_state(),
    SignalInfo::new("w", 0, "m", "slider position (constant while stuck)").of_state(),
    SignalInfo::new("stuck", 1, "", "1 while in static friction, else 0"),
];

impl ModelD {
    /// One step (45): (y, u̇, slider velocity, stuck).
    #[inline]
    pub fn step(
        &self,
        u: Vector3<f64>,
        e: Vector3<f64>,
        h: Vector3<f64>,
        tau: f64,
    ) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>, bool) {
        let d = self.b + tau * self.k;
        let a = (tau * tau * self.k + tau * self.b + self.mass) / (self.mass * d);
        let vs = u + h * (tau / self.mass) + e * (self.k / d);
        let p = self.law.phi_z(a, vs);
        let wv = if p.stuck { Vector3::zeros() } else { vs - p.y * a };
        (p.y, (h - p.y) / self.mass, wv, p.stuck)
    }

    /// The continuous law of (45), its step at τ = 0 (B > 0): (y, u̇, slider velocity,
    /// stuck). Held, y = K e + B u and the slider's velocity is exactly 0.0.
    #[inline]
    pub fn continuous(
        &self,
        u: Vector3<f64>,
        e: Vector3<f64>,
        h: Vector3<f64>,
    ) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>, bool) {
        let z = 1.0 / self.b;
        let vs = u + e * (self.k / self.b);
        let p = self.law.phi_z(z, vs);
        let (y, wv) = if p.stuck { (e * self.k + u * self.b, Vector3::zeros()) } else { (p.y, vs - p.y * z) };
        (y, (h - y) / self.mass, wv, p.stuck)
    }

    /// The stick–slip switch of [`continuous`](Self::continuous): Z g(r) − r with Z = 1/B
    /// and r = |u + K e/B| (> 0 while the slider holds), the test of Φ_Z (53)/(57).
    fn slip_switching(&self, u: Vector3<f64>, e: Vector3<f64>) -> f64 {
        let r = (u + e * (self.k / self.b)).norm();
        (1.0 / self.b) * self.law.g(r) - r
    }

    /// The rates of a stage under the applied force `h` (port force and constant force):
    /// the continuous law, the held continuous mechanics, or (45)'s implicit step.
    fn write_rates(&self, x: &[f64], h: Vector3<f64>, tau: f64, dx: &mut [f64]) {
        let n = self.dims;
        let (q, u, w) = (load(x, n), load(&x[n..], n), load(&x[2 * n..], n));
        let e = q - w;
        if self.form.sliding_continuous() {
            // Every stage: the continuous law, q̇ = u.
            let (_, du, wv, _) = self.continuous(u, e, h);
            store(&u, &mut dx[..n], n);
            store(&du, &mut dx[n..2 * n], n);
            store(&wv, &mut dx[2 * n..], n);
            return;
        }
        let (_, du, wv, stuck) = self.step(u, e, h, tau);
        if stuck && self.form.held_continuous() {
            // Held slider: the continuous M u̇ = h − K e − B u, q̇ = u, ẇ = 0.
            store(&u, &mut dx[..n], n);
            store(&((h - e * self.k - u * self.b) / self.mass), &mut dx[n..2 * n], n);
            dx[2 * n..3 * n].fill(0.0);
            return;
        }
        store(&self.form.position_rate(u, u + du * tau, stuck), &mut dx[..n], n);
        store(&du, &mut dx[n..2 * n], n);
        store(&wv, &mut dx[2 * n..], n);
    }

    /// Whether, under (45)'s implicit stages, the body takes stiff elements' stage laws with
    /// its own element's ([`own_law`](Self::own_law)): under RK4, with any friction law on the
    /// slider (Coulomb, with a viscous part: (45) exactly; a Stribeck curve or a table: (57)
    /// with g at the slider's speed, [`write_solved`](Self::write_solved)).
    fn own_law_port(&self) -> bool {
        !self.form.is_euler() && !self.form.sliding_continuous()
    }

    /// The applied force: the port's and the constant one.
    fn applied(&self, forces: &[Force]) -> Vector3<f64> {
        first(forces.first().map_or(Vector3::zeros(), |f| f.f), self.dims) + self.force
    }

    /// (45) as the implicit step of the mass M with its presliding element, an I_fricK
    /// element (19) on the mass: its force −gsat(F, w + c Δ) in the mass's velocity change Δ,
    /// w = K e + (B + τK) u, c = B + τK, sliding −(F c + D‖x‖)/(c + D) x/‖x‖ (x = w + c Δ).
    /// With A = 1/c + τ/M that is (45)'s y = Φ_A(v*) (v* = u + τh/M + K e/c), held and sliding
    /// with Coulomb's g = F and the viscous D ((46)). The body under the applied force `h`:
    /// the mass with that force at Δ = 0 in its acceleration. Where RK4 resolves the held
    /// spring (held stages return the continuous K e + B u), the law is taken without the τK
    /// (c = B): held, that continuous force (B Δ its only implicit part), sliding the
    /// continuous law's force where the stage's is (45)'s, ±F for Coulomb friction in 1-D.
    /// With c = B + τK there, the held mobility 1/(M + τB + τ²K) against the stage's 1/M cost
    /// accuracy: a joined load at K = 1e6, B = 0.5, 1 ms 6.1e-5 m off (now 2.2e-5, a soft
    /// element's error 1.3e-5).
    fn own_law(&self, x: &[f64], h: Vector3<f64>, tau: f64) -> (StageBody, StageLaw) {
        let law = self.element_law(x, tau, Vector3::zeros());
        (law.own_body(self.mass, load(x, self.dims), h), law)
    }

    /// The law of [`own_law`](Self::own_law) at the velocity change `delta` (Δ = 0: the law):
    /// c = B + τK, or B where the held spring's stages are continuous.
    fn element_law(&self, x: &[f64], tau: f64, delta: Vector3<f64>) -> StageLaw {
        let n = self.dims;
        let (q, u, w) = (load(x, n), load(&x[n..], n), load(&x[2 * n..], n));
        let (level, curve) = stage_curve(&self.law);
        // A curve's law at c = B would be ill-posed where (45)'s Φ_A is not (Z = 1/B).
        let flat = matches!(curve, Curve::Flat);
        let c = if self.form.held_continuous() && flat { self.b } else { self.b + tau * self.k };
        StageLaw::Friction { w: (q - w) * self.k + (u + delta) * c, c, level, viscous: self.law.d, dims: n, at: q, curve }
    }

    /// The rates of the stage whose body the coupled elements and its own law solved
    /// (`body`'s acceleration a): (45) at the applied force that gives that acceleration with
    /// its own element's force at the solution, h = M a − f(τ a). With a Stribeck curve or a
    /// table, (45)'s closed form (46)/(57) takes g at ‖v*‖ and the law at the slider's speed
    /// ‖x‖/c (x = w + c τ a): the two differ by O(Z max|g'|), so the rates are the law's own
    /// solution, u̇ = a, slider velocity (x − y)/c with y = −f(τ a) (exactly 0.0 while it
    /// holds), which is (45)'s for Coulomb friction.
    fn write_solved(&self, x: &[f64], body: &StageBody, tau: f64, dx: &mut [f64]) {
        let law = self.element_law(x, tau, body.a * tau);
        let own = law.force();
        let h = body.a * self.mass - own;
        let (StageLaw::Friction { w: arg, c, .. }, false) = (&law, matches!(self.law.dry, DryLaw::Coulomb { .. })) else {
            // Coulomb friction: (45) at that force is the law's solution.
            self.write_rates(x, h, tau, dx);
            return;
        };
        let (arg, c) = (*arg, *c);
        let n = self.dims;
        let (q, u, w) = (load(x, n), load(&x[n..], n), load(&x[2 * n..], n));
        let held = law.holds();
        if held && self.form.held_continuous() {
            // As `write_rates`: the continuous mechanics of the mass on the held spring.
            store(&u, &mut dx[..n], n);
            store(&((h - (q - w) * self.k - u * self.b) / self.mass), &mut dx[n..2 * n], n);
            dx[2 * n..3 * n].fill(0.0);
            return;
        }
        let slider = if held { Vector3::zeros() } else { (arg + own) / c };
        store(&self.form.position_rate(u, u + body.a * tau, held), &mut dx[..n], n);
        store(&body.a, &mut dx[n..2 * n], n);
        store(&slider, &mut dx[2 * n..], n);
    }
}

impl Admittance for ModelD {
    fn layout(&self) -> Layout {
        Layout::new(3 * self.dims, vec![PortInfo::new("body", domain_of(self.dims))])
    }
    fn init(&self, x: &mut [f64]) {
        let n = self.dims;
        store(&self.q0, &mut x[..n], n);
        store(&self.v0, &mut x[n..2 * n], n);
        store(&(self.q0 - self.e0), &mut x[2 * n..], n);
    }
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        let n = self.dims;
        Motion::point(load(x, n), load(&x[n..], n))
    }
    fn derivative(&self, x: &[f64], f: &[Force], _t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        self.write_rates(x, first(f[0].f, self.dims) + self.force, tau, dx);
        Ok(())
    }
    /// The method, whether RK4 resolves the held spring–damper (its step map on the mass
    /// alone stable at twice the step: a margin for springs attached to the port), and
    /// whether it also resolves the slider's relaxation K/B (B ≥ T K/2): then every stage
    /// returns the continuous law.
    fn prepare(&self, method: Method, step: f64) -> std::result::Result<(), String> {
        self.form.set(method);
        let held = PortModel { inertia: self.mass, k: self.k, b: self.b, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false };
        let held = held.stable(method.tableau(), 2.0 * step);
        self.form.set_held_continuous(held);
        self.form.set_sliding_continuous(held && self.b > 0.0 && continuous_law(method, step, self.k, self.b));
        Ok(())
    }
    /// The slider's stick–slip switch under the continuous law (a kink of the rates).
    fn state_switches(&self) -> usize {
        1
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        let n = self.dims;
        g[0] = if self.form.sliding_continuous() && self.law.static_level() > 0.0 {
            let (q, u, w) = (load(x, n), load(&x[n..], n), load(&x[2 * n..], n));
            self.slip_switching(u, q - w)
        } else {
            StopSwitch::NEVER
        };
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| if s.len == 0 { SignalInfo { len: self.dims, ..*s } } else { *s }).collect()
    }
    fn signal(&self, which: usize, i: usize, p: &Probe) -> f64 {
        let n = self.dims;
        match which {
            0 => p.state[i],
            1 => p.state[n + i],
            2 => self.mass * p.rate[n + i] - (p.forces[0].f[i] + self.force[i]),
            3 => p.state[i] - p.state[2 * n + i],
            4 => p.state[2 * n + i],
            _ => f64::from(p.rate[2 * n..3 * n].iter().all(|r| *r == 0.0)),
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let n = self.dims;
        let (q, u, w) = (load(x, n), load(&x[n..], n), load(&x[2 * n..], n));
        Some(0.5 * self.mass * u.norm_squared() + 0.5 * self.k * (q - w).norm_squared() - self.force.dot(&q))
    }
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        Some(self.mass)
    }
    /// Where every stage returns the continuous law (RK4 resolves the contact and the
    /// slider's relaxation), the body is a mass M under the contact's force at the stage
    /// state, so a stiff element on it is held implicitly as on a `mass`; under (45)'s
    /// implicit stages, the mass with its own element's law among the coupled elements' (with
    /// Coulomb friction on the slider: `ModelD::own_law`).
    fn takes_stage_laws(&self, _port: usize) -> bool {
        self.form.sliding_continuous() || self.own_law_port()
    }
    /// The body's velocity rate of [`StageLaw::implicit_rate`] (the contact's force explicit);
    /// under (45)'s stages, the mass solved with the coupled elements' laws and its own.
    fn implicit_rate(&self, x: &[f64], forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        let n = self.dims;
        if self.form.sliding_continuous() {
            let a = StageLaw::implicit_rate(laws.of(0), self.mass, load(&dx[n..], n), tau);
            store(&first(a, n), &mut dx[n..2 * n], n);
        } else if self.own_law_port() {
            let (body, own) = self.own_law(x, self.applied(forces), tau);
            self.write_solved(x, &own.solve_own(body, laws.of(0), tau), tau, dx);
        }
    }
    /// Under the continuous law, a point mass M (the contact's force in its acceleration);
    /// under (45)'s stages the body of [`own_stage_law`](Admittance::own_stage_law).
    fn stage_body(&self, x: &[f64], dx: &[f64], _port: usize) -> Option<StageBody> {
        let n = self.dims;
        let at = load(x, n);
        if self.own_law_port() {
            return Some(StageBody::point(self.mass, at, Vector3::zeros()));
        }
        self.form.sliding_continuous().then(|| StageBody::point(self.mass, at, load(&dx[n..], n)))
    }
    /// Under (45)'s stages: the mass and its own element's law (`ModelD::own_law`).
    fn own_stage_law(&self, x: &[f64], forces: &[Force], tau: f64, _port: usize) -> Option<(StageBody, StageLaw)> {
        self.own_law_port().then(|| self.own_law(x, self.applied(forces), tau))
    }
    fn set_stage_body(&self, x: &[f64], _forces: &[Force], tau: f64, _ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let n = self.dims;
        let Some(b) = bodies.first() else { return };
        if self.own_law_port() {
            self.write_solved(x, b, tau, dx);
        } else {
            store(&first(b.a, n), &mut dx[n..2 * n], n);
        }
    }
    /// With the slider held, (45) moves q with u_new under Euler, and under RK4 when the
    /// held spring–damper is too stiff for the continuous rates.
    fn implicit_position(&self, method: Method) -> bool {
        method == Method::Euler || !self.form.held_continuous()
    }
    /// The presliding spring–damper to the held slider. Where (45)'s held rates are used
    /// (see `implicit_position`) they are the implicit step of the mass with it:
    /// u̇ = (h − K e − (B + τK) u)/(M + τB + τ²K), its τK damping and its stage inertia.
    fn internal_spring(&self, _port: usize) -> Option<stiction_framework::StageSpring> {
        let implicit = !self.form.held_continuous();
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit, coupled: implicit })
    }
    fn diagnose(&self, _x: &[f64], step: f64) -> Vec<Diagnostic> {
        let a = |tau: f64| (tau * tau * self.k + tau * self.b + self.mass) / (self.mass * (self.b + tau * self.k));
        // Under the continuous law Z = A at τ = 0, 1/B.
        let z0 = if self.form.sliding_continuous() { a(0.0) } else { 0.0 };
        self.law.diagnose(a(step).max(a(0.5 * step)).max(z0), "model D, Z = A of (44)")
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let dims = dims_param(p)?;
    let mass = p.positive("mass")?;
    let k = p.positive("K")?;
    let b = p.nonneg_or("B", 0.0)?;
    let law = FrictionLaw::from_params(p)?;
    let force = vec_n_or_zero(p, "force", dims)?;
    let e0 = vec_n_or_zero(p, "e0", dims)?;
    let (q0, v0) = read_init(p, dims)?;
    Ok(Built::Admittance(Box::new(ModelD { dims, mass, k, b, law, force, q0, v0, e0, form: StageForm::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    // dims 3: `force` is the applied force (dims numbers), `levels` a table law's levels.
    r#"{"type": "kikuuwe_d", "dims": 3, "mass": 1.0, "K": 100.0, "B": 1.0, "e0": [0.001, 0.0, 0.0], "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}, "law": "coulomb", "F": 2.0, "D": 0.1}"#,
    r#"{"type": "kikuuwe_d", "dims": 3, "mass": 1.0, "K": 100.0, "B": 1.0, "e0": [0.001, 0.0, 0.0], "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}"#,
    r#"{"type": "kikuuwe_d", "dims": 3, "mass": 1.0, "K": 100.0, "B": 1.0, "e0": [0.001, 0.0, 0.0], "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}"#,
    r#"{"type": "kikuuwe_d", "dims": 1, "mass": 1.0, "K": 100.0, "force": 0.5, "F": 1.0}"#,
];

/// Register `kikuuwe_d`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    const PARAMS: &[ParamDoc] = &[
        DIMS_DOC,
        ParamDoc { name: "mass", unit: "kg", default: None, doc: "mass M, > 0" },
        ParamDoc { name: "K", unit: "N/m", default: None, doc: "stiffness between mass and slider, > 0" },
        ParamDoc { name: "B", unit: "N·s/m", default: Some("0"), doc: "damping between mass and slider, ≥ 0" },
        ParamDoc {
            name: "force",
            unit: "N",
            default: Some("0"),
            doc: "constant applied force (number, or array of dims numbers)",
        },
        ParamDoc { name: "e0", unit: "m", default: Some("0"), doc: "initial deflection q − w" },
    ];
    r.register(ComponentType {
        name: "kikuuwe_d",
        kind: Kind::Admittance,
        summary: "Kikuuwe model D (45): mass on a compliant frictional contact, stable at any stiffness (admittance)",
        params: table(&ALL, &[PARAMS, INIT_PARAMS, LAW_PARAMS]),
        ports: &[PortDoc { name: "body", domain: "scalar|point3", doc: "the mass" }],
        signals: SIGNALS,
        build,
    });
}
