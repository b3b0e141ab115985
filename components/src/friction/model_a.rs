//! Kikuuwe model A, the rigid admittance (26): a rigid body of mass M sliding on a fixed
//! surface, force in, velocity out. One implicit-Euler step of size τ:
//! v* = v + τ h/M,  f = Φ_{τ/M}(v*),  v_new = v* − τ f/M,
//! which is exactly zero when M v*/τ lies in the static set: stopping without chattering,
//! holding without drift. The component returns the rates v̇ = (v_new − v)/τ and, under
//! `"method": "euler"`, q̇ = v_new, so the Euler method (τ = T) reproduces (26) bit for bit;
//! under RK4 q̇ = v, the stage velocity, in every stage that ends sliding ([`StageForm`],
//! docs/explanation/friction.md): with F = 0 the stages are exactly RK4 on M v̇ = h, q̇ = v (fourth
//! order), while stuck q̇ = v_new = 0.0 as before.
//! Scalar (dims = 1) or 2-D/3-D (dims = 2, 3) with the n-dimensional Φ_Z of (53)/(55)/(57).
//!
//! Exact zero: floating point leaves v + T·(−v/T) a few ulps away from zero, so the state
//! carries a stick indicator s (rate (σ − s)/τ, σ = 1 when a stage ends stuck) and
//! `post_step` sets v to exactly 0.0 when s > ½ (with Euler s is σ of the step; with RK4 it
//! is a weighted vote of the four stages).
//!
//! Under RK4 a stage that ends sliding returns the continuous law at the stage velocity,
//! M v̇ = h − g(|v|) v/|v| − D v (the τ-form's v* = v + τh/M turned the friction's direction
//! and evaluated g and the viscous part at τ: first order in 2-D sliding and for Stribeck or
//! viscous laws), where RK4 resolves the viscous part (D T/M ≤ 1; else the τ-form stays).
//! Its stops, reversals and breakaways are then located within the step ([`StopSwitch`];
//! breakaway g = g(0) − |h|): a locked sliding stage keeps its direction's law past zero.

use super::common::{read_init, INIT_PARAMS};
use super::law::{FrictionLaw, LAW_PARAMS};
use super::model_c::stage_curve;
use crate::doc_table::table;
use crate::stage_form::{StageForm, StopSwitch};
use crate::ndim::{dims_param, domain_of, first, load, store, vec_n_or_zero, DIMS_DOC};
use crate::modes::consistent_mode;
use nalgebra::{Matrix3, Vector3};
use std::sync::OnceLock;
use stiction_framework::component::{Admittance, Diagnostic, Fault, PortLaws, Probe, SignalInfo, StageBody, StageLaw};
use stiction_framework::stage_law::{group_rates, GroupLaw};
use stiction_framework::port::{Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Method, Result};

/// Model A: state [q (n), v (n), s].
#[derive(Clone, Debug)]
pub struct ModelA {
    pub dims: usize,
    /// Mass M (kg), > 0.
    pub mass: f64,
    pub law: FrictionLaw,
    /// Constant applied force (N), added to the port force.
    pub force: Vector3<f64>,
    pub q0: Vector3<f64>,
    pub v0: Vector3<f64>,
    /// Euler (paper) or RK4 position rate, set by `prepare`.
    pub form: StageForm,
    /// The located stop (RK4).
    pub stop: StopSwitch,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 0, "m", "position").of_state(),
    SignalInfo::new("v", 0, "m/s", "velocity (exactly 0 while stuck)").of_state(),
    SignalInfo::new("f", 0, "N", "friction force on the body (opposes sliding; −f of (26))"),
    SignalInfo::new("h", 0, "N", "applied force h (port force + constant force)"),
    SignalInfo::new("stuck", 1, "", "1 while in static friction, else 0"),
];

impl ModelA {
    /// One step (26) of size τ from velocity v under applied force h: (v_new, stuck).
    #[inline]
    pub fn step(&self, v: Vector3<f64>, h: Vector3<f64>, tau: f64) -> (Vector3<f64>, bool) {
        let z = tau / self.mass;
        let vs = v + h * z;
        let p = self.law.phi_z(z, vs);
        if p.stuck {
            (Vector3::zeros(), true)
        } else {
            (vs - p.y * z, false)
        }
    }

    /// [`step`](Self::step) of a scalar model A with its sliding direction `dir` (±1)
    /// locked, if it is, in the τ-form (D T/M > 1): (26)'s sliding branch of that direction
    /// where the step would stop it or turn it round, y = (±g(|v*|) + D v*)/(1 + Z D).
    #[inline]
    fn step_locked(&self, v: Vector3<f64>, h: Vector3<f64>, tau: f64, dir: Option<f64>) -> (Vector3<f64>, bool) {
        let (vn, stuck) = self.step(v, h, tau);
        let Some(dir) = dir else {
            return (vn, stuck);
        };
        if !stuck && vn.x * dir > 0.0 {
            return (vn, false);
        }
        let z = tau / self.mass;
        let vs = v.x + h.x * z;
        let y = (dir * self.law.g(vs.abs()) + self.law.d * vs) / (1.0 + z * self.law.d);
        (Vector3::new(vs - y * z, 0.0, 0.0), false)
    }

    /// RK4, and RK4 resolves the viscous part (D T/M ≤ 1): sliding stages return the
    /// continuous law.
    #[inline]
    fn smooth(&self) -> bool {
        self.form.sliding_continuous()
    }

    /// The rates of (26) under the applied force `h` (port force and constant force): the
    /// stage that [`derivative`](Admittance::derivative) returns.
    fn write_rates(&self, x: &[f64], h: Vector3<f64>, tau: f64, dx: &mut [f64]) {
        let n = self.dims;
        let v = load(&x[n..], n);
        let dir = self.stop.direction();
        if self.smooth() {
            // (26) decides stick or slip (a locked stage slides); sliding, the continuous law.
            let (vn, stuck) = self.step(v, h, tau);
            if dir.is_some() || !stuck {
                store(&v, &mut dx[..n], n);
                store(&((h - self.law.sliding_force(v, h, dir)) / self.mass), &mut dx[n..2 * n], n);
                dx[2 * n] = -x[2 * n] / tau;
            } else {
                store(&vn, &mut dx[..n], n);
                store(&((vn - v) / tau), &mut dx[n..2 * n], n);
                dx[2 * n] = (1.0 - x[2 * n]) / tau;
            }
            return;
        }
        let (vn, stuck) = if n == 1 { self.step_locked(v, h, tau, dir.map(|d| d.x)) } else { self.step(v, h, tau) };
        store(&self.form.position_rate(v, vn, stuck), &mut dx[..n], n);
        store(&((vn - v) / tau), &mut dx[n..2 * n], n);
        dx[2 * n] = (if stuck { 1.0 } else { 0.0 } - x[2 * n]) / tau;
    }

    /// Whether the port takes stage laws ([`Admittance::takes_stage_laws`]).
    fn stage_port(&self) -> bool {
        self.dims == 1 && self.smooth()
    }

    /// Whether, in two or three dimensions under RK4, the body takes stiff elements' stage
    /// laws with its own friction's ([`own_law`](Self::own_law)).
    fn own_law_port(&self) -> bool {
        self.dims > 1 && !self.form.is_euler()
    }

    /// (26) as the implicit step of the mass with a rigid friction element on it: the force
    /// −gsat(g, c (v + Δ)) with c → ∞ holds exactly where M v*/τ is within the static set
    /// and slides along v* otherwise. Taken as an I_fricK law with c = [`RIGID`] M/τ (its held
    /// velocity g/c, 1e-9 of τ g/M); the body under the applied force `h` with that force at
    /// Δ = 0 in its acceleration.
    fn own_law(&self, x: &[f64], h: Vector3<f64>, tau: f64) -> (StageBody, StageLaw) {
        let law = self.rigid_law(x, tau, Vector3::zeros());
        (law.own_body(self.mass, load(x, self.dims), h), law)
    }

    /// The law of [`own_law`](Self::own_law) at the velocity change `delta`.
    fn rigid_law(&self, x: &[f64], tau: f64, delta: Vector3<f64>) -> StageLaw {
        let n = self.dims;
        let (q, v) = (load(x, n), load(&x[n..], n));
        let c = RIGID * self.mass / tau;
        let (level, curve) = stage_curve(&self.law);
        StageLaw::Friction { w: (v + delta) * c, c, level, viscous: self.law.d, dims: n, at: q, curve }
    }

    /// The stage with the coupled elements' `laws` on the body alone (no group): the mass
    /// solved with them and its rigid element ([`own_law`](Self::own_law)), as in a group.
    /// (Sliding stages on the continuous law's friction along v with the elements solved on
    /// the mass, the rigid law deciding only the hold, ran as close or farther: a planar
    /// block held by F = 6 N and a K = 1e8 element under the sines 2.5e-4 m off the 5e-6 s
    /// run against 1.4e-6.)
    fn own_rates(&self, x: &[f64], forces: &[Force], laws: &[StageLaw], tau: f64, dx: &mut [f64]) {
        let (body, own) = self.own_law(x, self.applied_n(forces), tau);
        self.write_solved(x, &own.solve_own(body, laws, tau), tau, dx);
    }

    /// The rates of the stage whose body the coupled elements and its own law solved: held
    /// (the law within its level at the solution), (26)'s stuck stage, v_new = 0.0; sliding,
    /// the solved acceleration, q̇ = v under RK4.
    fn write_solved(&self, x: &[f64], body: &StageBody, tau: f64, dx: &mut [f64]) {
        let n = self.dims;
        let v = load(&x[n..], n);
        let held = self.rigid_law(x, tau, body.a * tau).holds();
        let (vn, a) = if held { (Vector3::zeros(), -v / tau) } else { (v + body.a * tau, body.a) };
        store(&self.form.position_rate(v, vn, held), &mut dx[..n], n);
        store(&a, &mut dx[n..2 * n], n);
        dx[2 * n] = (if held { 1.0 } else { 0.0 } - x[2 * n]) / tau;
    }

    /// The applied force: the port's and the constant one.
    fn applied_n(&self, forces: &[Force]) -> Vector3<f64> {
        first(forces.first().map_or(Vector3::zeros(), |f| f.f), self.dims) + self.force
    }

    /// The applied force along x: the port's and the constant one.
    fn applied(&self, forces: &[Force]) -> f64 {
        forces.first().map_or(0.0, |f| f.f.x) + self.force.x
    }

    /// The mode (26) takes from velocity `v` under the applied force `h` over a stage τ.
    fn stage_mode_of(&self, v: f64, h: f64, tau: f64) -> StageMode {
        let locked = self.stop.direction().is_some();
        let (_, stuck) = self.step(Vector3::new(v, 0.0, 0.0), Vector3::new(h, 0.0, 0.0), tau);
        match () {
            _ if stuck && !locked => StageMode::Stuck,
            _ if v != 0.0 || locked => StageMode::Slide(0.0),
            _ => StageMode::Slide(if h >= 0.0 { 1.0 } else { -1.0 }),
        }
    }

    /// The modes of the stage from velocity `v` (a breakaway from rest in either direction).
    fn stage_modes_of(&self, v: f64) -> impl Iterator<Item = StageMode> {
        let locked = self.stop.direction().is_some();
        STAGE_MODES.into_iter().filter(move |m| match m {
            StageMode::Stuck => !locked,
            StageMode::Slide(s) => (*s == 0.0) == (v != 0.0 || locked),
        })
    }

    /// The port in `mode` under the explicit applied force `h0`: stuck, a point that does not
    /// move (W = 0, the acceleration that stops it); sliding, the mass M under the friction of
    /// the stage velocity (from rest, of the mode's direction).
    fn mode_body(&self, mode: StageMode, x: &[f64], h0: f64, tau: f64) -> StageBody {
        let v = x[1];
        let (w, a) = match mode {
            StageMode::Stuck => (0.0, -v / tau),
            StageMode::Slide(s) => {
                let f = if s == 0.0 {
                    self.law.sliding_force(Vector3::new(v, 0.0, 0.0), Vector3::new(h0, 0.0, 0.0), self.stop.direction()).x
                } else {
                    s * self.law.g(0.0)
                };
                (1.0 / self.mass, (h0 - f) / self.mass)
            }
        };
        let at = Vector3::new(x[0], 0.0, 0.0);
        StageBody { mobility: Some(Matrix3::from_diagonal(&Vector3::new(w, 0.0, 0.0))), ..StageBody::point(self.mass, at, Vector3::new(a, 0.0, 0.0)) }
    }
}

/// A mode of model A's stage in one dimension (components/src/modes.rs): stuck, or sliding on
/// the friction of the stage velocity (`Slide(0)`), from rest in direction ±1.
#[derive(Clone, Copy, Debug, PartialEq)]
enum StageMode {
    Stuck,
    Slide(f64),
}

/// The rate c τ/M of model A's rigid element in [`ModelA::own_law`].
const RIGID: f64 = 1e9;

/// Every [`StageMode`], numbered for `Admittance::stage_mode`.
const STAGE_MODES: [StageMode; 4] = [StageMode::Stuck, StageMode::Slide(0.0), StageMode::Slide(1.0), StageMode::Slide(-1.0)];

impl Admittance for ModelA {
    fn layout(&self) -> Layout {
        Layout::new(2 * self.dims + 1, vec![PortInfo::new("body", domain_of(self.dims))])
    }
    fn init(&self, x: &mut [f64]) {
        let n = self.dims;
        store(&self.q0, &mut x[..n], n);
        store(&self.v0, &mut x[n..2 * n], n);
        x[2 * n] = if self.v0 == Vector3::zeros() { 1.0 } else { 0.0 };
    }
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        let n = self.dims;
        Motion::point(load(x, n), load(&x[n..], n))
    }
    /// The stop or reversal ([`StopSwitch::switching`]); in 2-D and 3-D only where sliding
    /// is continuous (D T/M ≤ 1).
    fn state_switches(&self) -> usize {
        1
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        let n = self.dims;
        // Without dry friction (g(0) = 0) nothing jumps where the velocity crosses zero.
        let located = (n == 1 || self.smooth()) && self.law.static_level() > 0.0;
        g[0] = if located { self.stop.switching(&x[n..2 * n], x[2 * n]) } else { StopSwitch::NEVER };
    }
    /// The breakaway: g = g(0) − |h|, the static level (26) holds up to less the applied
    /// force, while the body held where the (sub-)step started; a constant negative value
    /// while it slides ([`StopSwitch::held_at_start`]).
    fn force_switches(&self) -> usize {
        1
    }
    fn force_switchings(&self, x: &[f64], f: &[Force], g: &mut [f64]) {
        let (n, level) = (self.dims, self.law.static_level());
        g[0] = if level > 0.0 {
            self.stop.breakaway(&x[n..2 * n], x[2 * n], || level - (first(f[0].f, n) + self.force).norm())
        } else {
            StopSwitch::NEVER
        };
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        let n = self.dims;
        self.stop.lock(x.map(|x| (&x[n..2 * n], x[2 * n])));
    }
    fn on_switch(&self, _which: usize, x: &mut [f64]) {
        let n = self.dims;
        let (v, s) = x[n..].split_at_mut(n);
        self.stop.on_switch(v, &mut s[0]);
    }
    fn derivative(&self, x: &[f64], f: &[Force], _t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        self.write_rates(x, first(f[0].f, self.dims) + self.force, tau, dx);
        Ok(())
    }
    /// Where a stiff element on it can be held implicitly with it: in one dimension, with
    /// sliding stages on the continuous law (RK4, D T/M ≤ 1), where each mode of the stage
    /// is affine in the force (components/src/modes.rs); in two and three dimensions under
    /// RK4, solved with its own rigid element's law (`ModelA::own_law`).
    fn takes_stage_laws(&self, _port: usize) -> bool {
        self.stage_port() || self.own_law_port()
    }
    /// (26) with the coupled elements' forces at the stage's new velocity, in the mode its
    /// solution selects; in 2-D and 3-D, the mass solved with their laws and its own.
    fn implicit_rate(&self, x: &[f64], forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        if self.own_law_port() {
            self.own_rates(x, forces, laws.of(0), tau, dx);
            return;
        }
        let h0 = self.applied(forces);
        let group: Vec<GroupLaw<'_>> = laws.of(0).iter().map(|law| GroupLaw { law, body: 0, partner: None }).collect();
        let solve = |mode: StageMode| {
            let mut body = [self.mode_body(mode, x, h0, tau)];
            group_rates(&mut body, &group, &[], tau);
            body[0].force.x
        };
        let select = |change: &f64| self.stage_mode_of(x[1], h0 + change, tau);
        let change = consistent_mode(self.stage_mode_of(x[1], h0, tau), self.stage_modes_of(x[1]), solve, select);
        self.write_rates(x, Vector3::new(h0 + change, 0.0, 0.0), tau, dx);
    }
    /// As a point of a group, stuck (the body of the stage's mode replaces it, `stage_mode`).
    fn stage_body(&self, x: &[f64], _dx: &[f64], _port: usize) -> Option<StageBody> {
        if self.own_law_port() {
            return Some(StageBody::point(self.mass, load(x, self.dims), Vector3::zeros()));
        }
        self.stage_port().then(|| self.mode_body(StageMode::Stuck, x, 0.0, 1.0))
    }
    /// In 2-D and 3-D under RK4: the mass and its own rigid element's law (`ModelA::own_law`).
    fn own_stage_law(&self, x: &[f64], forces: &[Force], tau: f64, _port: usize) -> Option<(StageBody, StageLaw)> {
        self.own_law_port().then(|| self.own_law(x, self.applied_n(forces), tau))
    }
    /// The mode of (26) (its index in `STAGE_MODES`) that the force with the change selects.
    fn stage_mode(&self, x: &[f64], forces: &[Force], tau: f64, changes: &[Vector3<f64>]) -> Option<usize> {
        let h = self.applied(forces) + changes.first().map_or(0.0, |c| c.x);
        let mode = self.stage_mode_of(x[1], h, tau);
        self.stage_port().then(|| STAGE_MODES.iter().position(|m| *m == mode)).flatten()
    }
    /// The modes the stage can take from `x`'s velocity.
    fn stage_modes(&self, x: &[f64]) -> Vec<usize> {
        if !self.stage_port() {
            return Vec::new();
        }
        self.stage_modes_of(x[1]).filter_map(|m| STAGE_MODES.iter().position(|n| *n == m)).collect()
    }
    /// The body of mode `mode` under the explicit force.
    fn stage_mode_body(&self, x: &[f64], forces: &[Force], tau: f64, mode: usize, _port: usize) -> Option<StageBody> {
        let mode = *STAGE_MODES.get(mode)?;
        self.stage_port().then(|| self.mode_body(mode, x, self.applied(forces), tau))
    }
    /// (26) at the force with the group's change.
    fn set_stage_body(&self, x: &[f64], forces: &[Force], tau: f64, _ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        if let (true, Some(b)) = (self.own_law_port(), bodies.first()) {
            self.write_solved(x, b, tau, dx);
            return;
        }
        let change = bodies.first().map_or(0.0, |b| b.force.x);
        self.write_rates(x, Vector3::new(self.applied(forces) + change, 0.0, 0.0), tau, dx);
    }

    fn prepare(&self, method: Method, step: f64) -> std::result::Result<(), String> {
        self.form.set(method);
        self.form.set_sliding_continuous(method == Method::Rk4 && self.law.d * step <= self.mass);
        Ok(())
    }
    fn post_step(&self, x: &mut [f64]) {
        let n = self.dims;
        if x[2 * n] > 0.5 {
            x[2 * n] = 1.0;
            x[n..2 * n].fill(0.0);
        } else {
            x[2 * n] = 0.0;
        }
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| if s.len == 0 { SignalInfo { len: self.dims, ..*s } } else { *s }).collect()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        let n = self.dims;
        let h = p.forces[0].f[e] + self.force[e];
        match which {
            0 => p.state[e],
            1 => p.state[n + e],
            2 => self.mass * p.rate[n + e] - h,
            3 => h,
            _ => {
                let h = first(p.forces[0].f, n) + self.force;
                f64::from(self.step(load(&p.state[n..], n), h, p.tau).1)
            }
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let n = self.dims;
        let (q, v) = (load(x, n), load(&x[n..], n));
        Some(0.5 * self.mass * v.norm_squared() - self.force.dot(&q))
    }
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        Some(self.mass)
    }
    /// Sliding (the regime in which it can vibrate): (26) moves q with v_new under Euler, with v under RK4.
    fn implicit_position(&self, method: Method) -> bool {
        method == Method::Euler
    }
    fn diagnose(&self, _x: &[f64], step: f64) -> Vec<Diagnostic> {
        self.law.diagnose(step / self.mass, "model A, Z = T/M")
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let dims = dims_param(p)?;
    let mass = p.positive("mass")?;
    let law = FrictionLaw::from_params(p)?;
    let force = vec_n_or_zero(p, "force", dims)?;
    let (q0, v0) = read_init(p, dims)?;
    Ok(Built::Admittance(Box::new(ModelA { dims, mass, law, force, q0, v0, form: StageForm::default(), stop: StopSwitch::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    // dims 3: `force` is the applied force (dims numbers), `levels` a table law's levels.
    r#"{"type": "kikuuwe_a", "dims": 3, "mass": 1.0, "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}, "law": "coulomb", "F": 2.0, "D": 0.1}"#,
    r#"{"type": "kikuuwe_a", "dims": 3, "mass": 1.0, "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}"#,
    r#"{"type": "kikuuwe_a", "dims": 3, "mass": 1.0, "init": {"q": [0.1, 0.0, 0.0], "v": [0.2, 0.0, 0.0]}, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}"#,
    r#"{"type": "kikuuwe_a", "dims": 2, "mass": 1.0, "force": [0.5, 0.0], "F": 1.0}"#,
];

/// Register `kikuuwe_a`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    const PARAMS: &[ParamDoc] = &[
        DIMS_DOC,
        ParamDoc { name: "mass", unit: "kg", default: None, doc: "sliding mass M, > 0" },
        ParamDoc {
            name: "force",
            unit: "N",
            default: Some("0"),
            doc: "constant applied force (number, or array of dims numbers)",
        },
    ];
    r.register(ComponentType {
        name: "kikuuwe_a",
        kind: Kind::Admittance,
        summary: "Kikuuwe model A (26): rigid mass on a frictional surface, exact stop and hold (admittance)",
        params: table(&ALL, &[PARAMS, INIT_PARAMS, LAW_PARAMS]),
        ports: &[PortDoc { name: "body", domain: "scalar|point3", doc: "the sliding mass" }],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::Lcg;
    use stiction_framework::component::{Curve, StageLaw};

    /// The stage with a coupled law −gsat(F, w + c Δ) is (26) at the law's force at its own
    /// new velocity: in one dimension under RK4, v̇ = (26)'s rate at h + f(Δ) − f(0) with
    /// Δ = τ v̇; held in its static set, v̇ = −v/τ (the indicator then sets v = 0.0).
    #[test]
    fn the_stage_with_a_coupled_law_is_the_step_at_its_force() {
        let mut r = Lcg(5);
        let (mut stuck, mut sliding) = (0, 0);
        for case in 0..3000 {
            let a = ModelA {
                dims: 1,
                mass: r.next(0.2, 3.0),
                law: FrictionLaw::coulomb(r.next(0.5, 6.0), r.next(0.0, 2.0)),
                force: Vector3::zeros(),
                q0: Vector3::zeros(),
                v0: Vector3::zeros(),
                form: StageForm::default(),
                stop: StopSwitch::default(),
            };
            a.prepare(Method::Rk4, 1e-3).expect("prepared");
            assert!(a.takes_stage_laws(0));
            let v = if case % 3 == 0 { 0.0 } else { r.next(-1.0, 1.0) };
            let x = [0.0, v, f64::from(v == 0.0)];
            let tau = r.next(1e-4, 1e-3);
            let forces = [Force::scalar(r.next(-10.0, 10.0))];
            let (w, c, level) = (r.next(-5.0, 5.0), r.next(1e2, 1e5), r.next(0.5, 8.0));
            let laws = [StageLaw::Friction { w: Vector3::new(w, 0.0, 0.0), c, level, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat }];
            let mut dx = [0.0; 3];
            a.implicit_rate(&x, &forces, &PortLaws::new(&laws, &[0, 1]), tau, &mut dx);
            let delta = tau * dx[1];
            let force = |d: f64| -(w + c * d).clamp(-level, level);
            let (mut want, h) = ([0.0; 3], forces[0].f.x + force(delta) - force(0.0));
            a.write_rates(&x, Vector3::new(h, 0.0, 0.0), tau, &mut want);
            assert!((want[1] - dx[1]).abs() <= 1e-9 * (1.0 + dx[1].abs()), "case {case}: {} against {}", dx[1], want[1]);
            if a.stage_mode_of(v, h, tau) == StageMode::Stuck {
                assert_eq!(dx[1], -v / tau, "case {case}: held, not exactly");
                stuck += 1;
            } else {
                sliding += 1;
            }
        }
        assert!(stuck > 150 && sliding > 300, "{stuck} held, {sliding} sliding");
    }
}
