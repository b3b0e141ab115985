//! Kikuuwe model B, the inertial impedance (36): a mass M sliding on a fixed frictional
//! surface, pulled through a spring K and damper B by the port `drive`; velocity in, force
//! out. Mass, compliance and friction are solved together in one implicit step, so the
//! element stays stable for any stiffness (section IV-B) — unlike a model-A mass joined to
//! a separate spring, which adds a step of delay.
//!
//! State: the mass's position x and velocity v (the deflection is e = p_drive − x). One
//! step of size τ with drive velocity u, C = M + τB + τ²K:
//! v* = (M v + τK e + τ(τK + B) u)/C,  y = Φ_{τ/C}(v*),  v_new = v* − τ y/C,
//! h = K e + (τK + B)(u − v_new)   — this is (34)–(36) written with v instead of e_{k−2};
//! the drive receives −h. Rates under `"method": "euler"` (the paper's (36), bit for bit):
//! ẋ = v_new, v̇ = (v_new − v)/τ.
//!
//! Under RK4 ([`StageForm`], docs/explanation/friction.md) the implicit step decides stick or slip and
//! gives the friction force y; the mechanics then take the continuous rates of the stage
//! state: sliding, ẋ = v, M v̇ = K e + B(u − v) − y, h = K e + B(u − v) (with F = 0 this is
//! RK4 on the mass–spring–damper, fourth order; explicit, so stable for ω T < 2.8,
//! ω = √(K/M)); stuck, ẋ = v_new = 0, v̇ = −v/τ and h = K e + (τK + B) u as in the Euler form, so
//! the mass velocity is exactly 0.0 in every stage once it is 0.0.
//!
//! Where RK4 resolves the viscous part (D T/M ≤ 1) the sliding friction is the continuous
//! law at the stage velocity, g(|v|) v/|v| + D v (as model A's), not (36)'s y = Φ_Z(v*)
//! whose direction and Stribeck level moved with τ; and the mass's stop and breakaway are
//! located within the step (issue 43, [`StopSwitch`]): its velocity is a state switch (the
//! sliding direction locked past zero while the stepper searches; at the stop v = 0.0 and
//! s = 1) and g(0) − |K e + B u|, the static level less the force the held mass needs, the
//! breakaway.

use super::law::{FrictionLaw, LAW_PARAMS};
use crate::doc_table::table;
use crate::stage_form::{stiff_inner, StageForm, StopSwitch};
use crate::ndim::{dims_param, domain_of, first, load, store, vec_n_or_zero, DIMS_DOC};
use nalgebra::Vector3;
use std::sync::OnceLock;
use stiction_framework::component::{Diagnostic, Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Method, Result};

/// Model B: state [x (n), v (n)] of the internal mass.
#[derive(Clone, Debug)]
pub struct ModelB {
    pub dims: usize,
    /// Mass M (kg), > 0.
    pub mass: f64,
    /// Stiffness K (N/m), > 0.
    pub k: f64,
    /// Viscosity B (N·s/m), ≥ 0.
    pub b: f64,
    pub law: FrictionLaw,
    /// Initial deflection e(0) (m) and mass velocity v(0) (m/s).
    pub e0: Vector3<f64>,
    pub v0: Vector3<f64>,
    /// Euler (paper) or RK4 rates, set by `prepare`.
    pub form: StageForm,
    /// The mass's stop and breakaway, located under RK4.
    pub stop: StopSwitch,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("h", 0, "N", "force h of the spring–damper on the mass (the drive receives −h)"),
    SignalInfo::new("v", 0, "m/s", "velocity of the internal mass (0 while stuck)"),
    SignalInfo::new("x", 0, "m", "position of the internal mass"),
    SignalInfo::new("e", 0, "m", "deflection e = p_drive − x"),
    SignalInfo::new("stuck", 1, "", "1 while in static friction, else 0"),
];

impl ModelB {
    /// One step (36): (h, v_new, stuck).
    #[inline]
    pub fn step(
        &self,
        u: Vector3<f64>,
        e: Vector3<f64>,
        v: Vector3<f64>,
        tau: f64,
    ) -> (Vector3<f64>, Vector3<f64>, bool) {
        let (h, vn, _, stuck) = self.step_with_friction(u, e, v, tau);
        (h, vn, stuck)
    }

    /// [`step`](Self::step) and the friction force y = Φ_Z(v*) on the mass.
    #[inline]
    fn step_with_friction(
        &self,
        u: Vector3<f64>,
        e: Vector3<f64>,
        v: Vector3<f64>,
        tau: f64,
    ) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>, bool) {
        let c = self.mass + tau * self.b + tau * tau * self.k;
        let kb = tau * self.k + self.b;
        let vs = (v * self.mass + e * (tau * self.k) + u * (tau * kb)) / c;
        let z = tau / c;
        let p = self.law.phi_z(z, vs);
        let vn = if p.stuck { Vector3::zeros() } else { vs - p.y * z };
        (e * self.k + (u - vn) * kb, vn, p.y, p.stuck)
    }

    /// (drive velocity u, deflection e, mass velocity v).
    fn parts(&self, m: &Motion, y: &[f64]) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>) {
        let n = self.dims;
        (first(m.v, n), first(m.p, n) - load(y, n), load(&y[n..2 * n], n))
    }

    /// The mass velocity as reported (signal `v`, energy): under RK4 exactly 0.0 while the
    /// stick indicator s > ½. RK4 alone only shrinks a stopped v by 3 per step (its stability
    /// function has no real root); [`post_step`](Impedance::post_step) sets the state to
    /// 0.0 at the end of every step that ends stuck, as (36) does.
    fn reported_v(&self, y: &[f64]) -> Vector3<f64> {
        let n = self.dims;
        if !self.form.is_euler() && y[2 * n] > 0.5 {
            Vector3::zeros()
        } else {
            load(&y[n..2 * n], n)
        }
    }
}

impl Impedance for ModelB {
    fn layout(&self) -> Layout {
        Layout::new(2 * self.dims + 1, vec![PortInfo::new("drive", domain_of(self.dims))])
    }
    fn init(&self, y: &mut [f64], motion: &[Motion]) {
        let n = self.dims;
        store(&(first(motion[0].p, n) - self.e0), &mut y[..n], n);
        store(&self.v0, &mut y[n..2 * n], n);
        // At rest on dry friction the stick indicator is set (no stop to find).
        let rest = self.v0 == Vector3::zeros() && self.law.static_level() > 0.0;
        y[2 * n] = if rest { 1.0 } else { 0.0 };
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
        let n = self.dims;
        let (u, e, v) = self.parts(&m[0], y);
        let (h, vn, friction, stuck) = self.step_with_friction(u, e, v, tau);
        // A stage with the sliding direction locked slides on past v = 0. With the sliding
        // continuous, the mass holds by the force of its spring–damper h = K e + B (u − v) as
        // model A by its load (26), v + τh/M within τ g/M: at rest exactly the breakaway of
        // `state_switchings` (|h| ≤ g(0)), without (36)'s τK u, which the located switch
        // does not see.
        let dir = self.stop.direction();
        let stuck = match dir {
            Some(_) => false,
            None if self.form.sliding_continuous() => {
                let h = e * self.k + (u - v) * self.b;
                let level = self.law.static_level();
                if v == Vector3::zeros() {
                    // Without dry friction (g(0) = 0) nothing holds it.
                    level > 0.0 && h.norm() <= level
                } else {
                    self.law.phi_z(tau / self.mass, v + h * (tau / self.mass)).stuck
                }
            }
            None => stuck,
        };
        if self.form.is_euler() || stuck || self.form.stage_implicit() {
            // (36): the paper's step (Euler, and every stage of a model B too stiff for RK4's
            // explicit stages), and every stuck stage; with B ≥ T K/2 under RK4
            // the drive sees the continuous law of the held element, K e + B u
            // ([`StageForm::continuous_law`]): RK4 on its spring–damper, fourth order. Held
            // by the continuous condition, the mass does not move whatever (36) says.
            let vn = if stuck && self.form.sliding_continuous() { Vector3::zeros() } else { vn };
            store(&vn, &mut dy[..n], n);
            store(&((vn - v) / tau), &mut dy[n..2 * n], n);
            let h = if stuck && self.form.held_rates() { e * self.k + u * self.b } else { h };
            force[0] = Force::point(-h);
        } else {
            // Sliding: the continuous mechanics of the stage state, friction from the step.
            let spring = e * self.k + (u - v) * self.b;
            let friction = if self.form.sliding_continuous() { self.law.sliding_force(v, spring, dir) } else { friction };
            store(&v, &mut dy[..n], n);
            store(&((spring - friction) / self.mass), &mut dy[n..2 * n], n);
            force[0] = Force::point(-spring);
        }
        dy[2 * n] = (if stuck { 1.0 } else { 0.0 } - y[2 * n]) / tau;
        Ok(())
    }
    /// Records the method and whether the held element presents its continuous law under
    /// RK4 ([`StageForm::set_element`]: B ≥ T K/2).
    /// Where RK4 would not keep the mass on its spring stable at the step, every stage
    /// takes (36)'s implicit step, sliding too ([`StageForm::set_stage_implicit`]): stable at
    /// any K, as the paper's model B is, at first order.
    fn prepare(&self, method: Method, step: f64) -> std::result::Result<(), String> {
        self.form.set_element(method, step, self.k, self.b);
        let stiff = stiff_inner(method, step, self.mass, self.k, self.b);
        self.form.set_stage_implicit(stiff);
        self.form.set_sliding_continuous(method == Method::Rk4 && self.law.d * step <= self.mass && !stiff);
        Ok(())
    }
    /// The mass's stop or reversal ([`StopSwitch::switching`]) and its breakaway, g(0) −
    /// |K e + B u| while it held where the (sub-)step started ([`StopSwitch::held_at_start`]),
    /// where sliding is continuous and there is dry friction.
    fn state_switches(&self) -> usize {
        2
    }
    fn state_switchings(&self, m: &[Motion], y: &[f64], g: &mut [f64]) {
        let n = self.dims;
        let level = self.law.static_level();
        if !self.form.sliding_continuous() || level <= 0.0 {
            g[..2].fill(StopSwitch::NEVER);
            return;
        }
        let (u, e, _) = self.parts(&m[0], y);
        g[0] = self.stop.switching(&y[n..2 * n], y[2 * n]);
        g[1] = self.stop.breakaway(&y[n..2 * n], y[2 * n], || level - (e * self.k + u * self.b).norm());
    }
    /// Only where its switches are located (sliding continuous): otherwise each stage
    /// decides stick or slip by (36), also in a step that started sliding.
    fn lock_sides(&self, y: Option<&[f64]>) {
        let n = self.dims;
        self.stop.lock(y.filter(|_| self.form.sliding_continuous()).map(|y| (&y[n..2 * n], y[2 * n])));
    }
    fn on_switch(&self, which: usize, y: &mut [f64]) {
        let n = self.dims;
        if which == 0 {
            let (v, s) = y[n..].split_at_mut(n);
            self.stop.on_switch(v, &mut s[0]);
        }
    }
    /// Under RK4 only (Euler is the paper's (36) bit for bit).
    fn needs_post_step(&self) -> bool {
        !self.form.is_euler()
    }
    /// The exact stop under RK4: v = 0.0 in the state while the stick indicator s > ½
    /// (the stages that end stuck give v_new = 0 as (36); this makes the state agree).
    fn post_step(&self, y: &mut [f64]) {
        let n = self.dims;
        if !self.form.is_euler() && y[2 * n] > 0.5 {
            y[n..2 * n].fill(0.0);
        }
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| if s.len == 0 { SignalInfo { len: self.dims, ..*s } } else { *s }).collect()
    }
    fn signal(&self, which: usize, i: usize, p: &Probe) -> f64 {
        let (u, e, v) = self.parts(&p.motions[0], p.state);
        match which {
            0 => -p.forces[0].f[i],
            1 => self.reported_v(p.state)[i],
            2 => p.state[i],
            3 => e[i],
            _ => f64::from(self.step(u, e, v, p.tau).2),
        }
    }
    fn energy(&self, m: &[Motion], y: &[f64]) -> Option<f64> {
        let (_, e, _) = self.parts(&m[0], y);
        let v = self.reported_v(y);
        Some(0.5 * self.mass * v.norm_squared() + 0.5 * self.k * e.norm_squared())
    }
    /// Whether RK4 resolves the held spring with the inertias on the ports
    /// ([`StageForm::set_held_frequency`]).
    fn held_frequency(&self, method: stiction_framework::Method, step: f64, omega2: Option<f64>, _couple: Option<f64>) {
        self.form.set_held_frequency(method, step, self.k, self.b, omega2, None);
    }
    /// While stuck, (36) gives the drive h = K e + (τK + B) u: a spring K with damping B + τK
    /// per stage; under RK4 with B ≥ T K/2, K e + B u ([`StageForm::continuous_law`]).
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: !self.form.held_rates(), coupled: false })
    }
    fn diagnose(&self, _inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
        let z = |tau: f64| tau / (self.mass + tau * self.b + tau * tau * self.k);
        let mut out = self.law.diagnose(z(step).max(z(0.5 * step)), "model B, Z = τ/(M + τB + τ²K)");
        // Under RK4 the sliding mass moves on its spring explicitly where RK4's step map of
        // M v̇ = −K x − B v is stable, and by (36)'s implicit step where it is not (`prepare`,
        // which ran before `check`, decided which): said, as a fact.
        if self.form.stage_implicit() {
            out.push(Diagnostic::Info(format!(
                "model B under rk4: its mass M = {} on its spring K = {}, B = {} is stiffer than RK4's explicit stages \
                 at T = {step} s; every stage takes (36)'s implicit step, stable at any stiffness (first order in this regime)",
                self.mass, self.k, self.b
            )));
        }
        out
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let dims = dims_param(p)?;
    let mass = p.positive("mass")?;
    let k = p.positive("K")?;
    let b = p.nonneg_or("B", 0.0)?;
    let law = FrictionLaw::from_params(p)?;
    let (mut e0, mut v0) = (Vector3::zeros(), Vector3::zeros());
    if let Some(mut init) = p.object("init")? {
        e0 = vec_n_or_zero(&mut init, "e", dims)?;
        v0 = vec_n_or_zero(&mut init, "v", dims)?;
        init.finish()?;
    }
    Ok(Built::Impedance(Box::new(ModelB { dims, mass, k, b, law, e0, v0, form: StageForm::default(), stop: StopSwitch::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "kikuuwe_b", "dims": 1, "mass": 1.0, "K": 100.0, "B": 1.0, "init": {"e": 0.01, "v": 0.1}, "law": "coulomb", "F": 2.0, "D": 0.1}"#,
    r#"{"type": "kikuuwe_b", "dims": 1, "mass": 1.0, "K": 100.0, "B": 1.0, "init": {"e": 0.01, "v": 0.1}, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}"#,
    r#"{"type": "kikuuwe_b", "dims": 1, "mass": 1.0, "K": 100.0, "B": 1.0, "init": {"e": 0.01, "v": 0.1}, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}"#,
];

/// Register `kikuuwe_b`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    const PARAMS: &[ParamDoc] = &[
        DIMS_DOC,
        ParamDoc { name: "mass", unit: "kg", default: None, doc: "internal sliding mass M, > 0" },
        ParamDoc { name: "K", unit: "N/m", default: None, doc: "stiffness of the spring between drive and mass, > 0" },
        ParamDoc { name: "B", unit: "N·s/m", default: Some("0"), doc: "damping of that spring, ≥ 0" },
        ParamDoc {
            name: "init",
            unit: "",
            default: Some("{}"),
            doc: "initial state {\"e\", \"v\"}",
        },
        ParamDoc { name: "init.e", unit: "m", default: Some("0"), doc: "initial spring deflection (number or array of dims)" },
        ParamDoc { name: "init.v", unit: "m/s", default: Some("0"), doc: "initial mass velocity (number or array of dims)" },
    ];
    r.register(ComponentType {
        name: "kikuuwe_b",
        kind: Kind::Impedance,
        summary: "Kikuuwe model B (36): mass on a frictional surface pulled through a spring–damper (impedance)",
        params: table(&ALL, &[PARAMS, LAW_PARAMS]),
        ports: &[PortDoc { name: "drive", domain: "scalar|point3", doc: "the pulling end of the spring" }],
        signals: SIGNALS,
        build,
    });
}
