//! Kikuuwe model C, the massless impedance (38): a frictional contact between two ports
//! with a spring K and damper B in series with the friction law Φ, velocity in, force out.
//! One step of size τ:
//! v* = v + K e/(B + τK),  y = Φ_{1/(B+τK)}(v*),  e_new = (B e + τ y)/(B + τK),
//! returned as the rate ė = (y − K e)/(B + τK) (= v while stuck, up to rounding, so the
//! contact point does not drift). With Coulomb friction and the Euler method this is I_fricK
//! ((19) of the RK4 paper); here any law of [`FrictionLaw`] and 1, 2 or 3
//! dimensions. Port b sees the motion relative to port a and receives the force −y
//! (which opposes the relative sliding); port a receives +y.
//!
//! Parameter rule (63): under the paper's Euler algorithm, a model-C element on a mass M in
//! static friction converges without oscillation only if T² < M/(4K) (with B = 2√(KM));
//! `stiction check` warns otherwise. Under RK4 its stuck-state analysis of the stage form
//! decides instead (framework/src/stability.rs): the rule would call steps unstable that hold.

use super::law::{DryLaw, FrictionLaw, LAW_PARAMS};
use crate::saturation::{gsat3, sat};
use crate::doc_table::table;
use crate::stage_form::{ElementForm, StageForm};
use crate::ndim::{dims_param, domain_of, first, load, store, DIMS_DOC};
use nalgebra::Vector3;
use std::sync::OnceLock;
use stiction_framework::component::{Curve, Diagnostic, Fault, Impedance, Probe, SignalInfo, StageLaw};
use stiction_framework::port::{Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// Model C between ports a and b: state e (n).
#[derive(Clone, Debug)]
pub struct ModelC {
    pub dims: usize,
    /// Stiffness K (N/m), > 0.
    pub k: f64,
    /// Viscosity B (N·s/m), ≥ 0.
    pub b: f64,
    pub law: FrictionLaw,
    /// The method it runs under ([`StageForm::continuous_law`]).
    pub form: StageForm,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 0, "N", "friction force on port b (opposes the sliding of b relative to a)"),
    SignalInfo::new("e", 0, "m", "deflection e of the spring–damper"),
    SignalInfo::new("v", 0, "m/s", "velocity of b relative to a"),
    SignalInfo::new("stuck", 1, "", "1 while in static friction, else 0"),
];

/// One model-C step: (y, ė, stuck) for relative velocity v, deflection e, step τ.
///
/// With Coulomb friction (no viscous part) this is I_fricK (19) of the RK4 paper, and it is
/// written as (19): y = gsat(F, (B + τK) v + K e) ((19b); Φ_Z of (23) at
/// v* = v + K e/(B + τK), Z = 1/(B + τK), is the same force), ė = (y − K e)/(B + τK) ((19c),
/// = (38)'s e_new = (B e + τ y)/(B + τK)); `fric_k` calls this too (issue 14: one
/// implementation). Other laws use Φ_Z of (25)/(46)/(55)/(57).
///
/// `form` ([`StageForm::element`](crate::stage_form::StageForm::element)): `Paper`, (19) as
/// written; `HeldRates` (RK4, B < T K/2, the held spring resolved on the masses it holds),
/// (19) decides whether it holds, and a held stage returns K e + B v and ė = v; `Continuous`
/// (RK4 with B ≥ T K/2): the element's continuous law, (19) at τ = 0 for Coulomb friction:
/// y = gsat(F, B v + K e), ė = (y − K e)/B, and ė = v exactly while it holds. B ≥ T K/2
/// makes its relaxation rate K/B one RK4 resolves (K T/B ≤ 2 < 2.79), so RK4 integrates
/// the element itself: fourth order held and sliding, in 1, 2 or 3 dimensions. The τK of
/// (19b) is the implicit-Euler step's own damping, which the paper's scheme needs where the
/// stage *is* the step (`"method": "euler"`) and where the element is too stiff for RK4
/// (B < T K/2); inside RK4's explicit stages it is a damper of rate τK/M that lowers the
/// stable step (one mass: ω T < 2.29 instead of 2.83; a stack of boxes on corner contacts:
/// 5.6e-4 s instead of 1.4e-3 s), makes the held elastic motion first order, and makes the
/// direction of the sliding force depend on τ (2-D sliding first order). Other laws keep
/// Φ_Z of the step and return the continuous law K e + B v while they hold.
#[inline]
pub fn model_c_step(
    k: f64,
    b: f64,
    law: &FrictionLaw,
    v: Vector3<f64>,
    e: Vector3<f64>,
    tau: f64,
    form: ElementForm,
) -> (Vector3<f64>, Vector3<f64>, bool) {
    let continuous = form == ElementForm::Continuous;
    if let (DryLaw::Coulomb { f }, 0.0) = (&law.dry, law.d) {
        let d = if continuous { b } else { b + tau * k };
        let x = v * d + e * k;
        let (y, stuck) = if x.y == 0.0 && x.z == 0.0 {
            (Vector3::new(sat(*f, x.x), 0.0, 0.0), x.x.abs() <= *f)
        } else {
            (gsat3(*f, x), x.norm() <= *f)
        };
        if continuous && stuck {
            return (y, v, true);
        }
        if stuck && form == ElementForm::HeldRates {
            return (held_force(k, b, *f, v, e), v, true);
        }
        return (y, (y - e * k) / d, stuck);
    }
    let d = b + tau * k;
    let vs = v + e * (k / d);
    let p = law.phi_z(1.0 / d, vs);
    if p.stuck && form != ElementForm::Paper {
        return (held_force(k, b, law.static_level(), v, e), v, true);
    }
    (p.y, (p.y - e * k) / d, p.stuck)
}

/// The stage laws of an I_fricK element (19) coupled implicitly with the masses on its two
/// ports (`Impedance::stage_law`), at relative velocity `v` = v_b − v_a and state `e`: the
/// force on port b is −gsat(F, w + (B + τK) Δ_b) with w = K e + (B + τK) v of (19b), on port
/// a −gsat(F, −w + (B + τK) Δ_a), each at its port's point `at` (a rigid body's lever);
/// `(level, viscous, curve)`: friction F (the kinetic level of a Stribeck `curve`) with a
/// viscous part D on the slider (while it slides, (57)'s (c g + D ‖x‖)/(c + D) along x).
#[allow(clippy::too_many_arguments)]
pub fn stage_laws(
    k: f64,
    b: f64,
    (level, viscous, curve): (f64, f64, Curve),
    v: Vector3<f64>,
    e: Vector3<f64>,
    tau: f64,
    dims: usize,
    at: [Vector3<f64>; 2],
) -> [StageLaw; 2] {
    let c = b + tau * k;
    let w = v * c + e * k;
    [
        StageLaw::Friction { w: -w, c, level, viscous, dims, at: at[0], curve: curve.clone() },
        StageLaw::Friction { w, c, level, viscous, dims, at: at[1], curve },
    ]
}

/// The law's kinetic level (a table's last) and [`Curve`] for [`stage_laws`]. Every law
/// couples implicitly with its masses where stiff: Coulomb friction, with or without a
/// viscous part, whose force is gsat(F, ·) while it holds and (57) exactly while it slides;
/// a Stribeck curve or a table of levels, (57) with g at the slider's speed as the
/// element's own Φ_Z.
pub fn stage_curve(law: &FrictionLaw) -> (f64, Curve) {
    match &law.dry {
        DryLaw::Coulomb { f } => (*f, Curve::Flat),
        &DryLaw::Stribeck { fc, fs, vs, exponent } => (fc, Curve::Stribeck { peak: fs, vs, exponent }),
        DryLaw::Table(table) => (table.levels().last().copied().unwrap_or(0.0), Curve::Table(table.clone())),
    }
}

/// The stick–slip switch of [`model_c_step`]'s continuous law: g = F² − ‖B v + K e‖²,
/// positive exactly while the element holds (the test ‖B v + K e‖ ≤ F of `model_c_step` at
/// τ = 0, squared: no square root per element and step, and g = (F − ‖x‖)(F + ‖x‖) has a
/// simple zero at the switch). Across g = 0 the element's force gsat(F, B v + K e) and
/// rate are continuous with a kink, which the stepper locates
/// (`Impedance::slip_switching`). For Coulomb friction without a viscous part; `None` for
/// other laws (their holding test is Φ_Z's at the stage step).
#[inline]
pub fn slip_switch(k: f64, b: f64, law: &FrictionLaw, v: Vector3<f64>, e: Vector3<f64>) -> Option<f64> {
    let (DryLaw::Coulomb { f }, 0.0) = (&law.dry, law.d) else { return None };
    let x = v * b + e * k;
    Some(f * f - x.norm_squared())
}

/// The force of a held element in the RK4 form ([`model_c_step`] with `continuous`): its
/// continuous law K e + B v, within the static level `limit` (gsat of (15)).
#[inline]
pub fn held_force(k: f64, b: f64, limit: f64, v: Vector3<f64>, e: Vector3<f64>) -> Vector3<f64> {
    let x = e * k + v * b;
    if x.y == 0.0 && x.z == 0.0 {
        Vector3::new(sat(limit, x.x), 0.0, 0.0)
    } else {
        gsat3(limit, x)
    }
}

impl Impedance for ModelC {
    /// Records the method and whether the element runs its continuous law
    /// ([`StageForm::set_element`]).
    fn prepare(&self, method: stiction_framework::Method, step: f64) -> std::result::Result<(), String> {
        self.form.set_element(method, step, self.k, self.b);
        Ok(())
    }
    fn layout(&self) -> Layout {
        let d = domain_of(self.dims);
        Layout::new(self.dims, vec![PortInfo::new("a", d), PortInfo::new("b", d)])
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
        let v = first(m[1].v - m[0].v, n);
        let (f, de, _) = model_c_step(self.k, self.b, &self.law, v, load(y, n), tau, self.form.element());
        store(&de, dy, n);
        force[1] = Force::point(-f);
        force[0] = Force::point(f);
        Ok(())
    }
    /// The stick–slip switch of the continuous law ([`slip_switch`]), under RK4 where B ≥ T K/2.
    fn slip_switching(&self, m: &[Motion], y: &[f64], _t: f64) -> Option<f64> {
        let n = self.dims;
        let held = self.form.continuous_law();
        held.then(|| slip_switch(self.k, self.b, &self.law, first(m[1].v - m[0].v, n), load(y, n))).flatten()
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| if s.len == 0 { SignalInfo { len: self.dims, ..*s } } else { *s }).collect()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        let n = self.dims;
        let v = first(p.motions[1].v - p.motions[0].v, n);
        match which {
            0 => p.forces[1].f[e],
            1 => p.state[e],
            2 => v[e],
            _ => f64::from(model_c_step(self.k, self.b, &self.law, v, load(p.state, n), p.tau, self.form.element()).2),
        }
    }
    fn energy(&self, _m: &[Motion], y: &[f64]) -> Option<f64> {
        Some(0.5 * self.k * y.iter().map(|e| e * e).sum::<f64>())
    }
    /// Whether RK4 resolves the held spring with the inertias on the ports
    /// ([`StageForm::set_held_frequency`]).
    fn held_frequency(&self, method: stiction_framework::Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        self.form.set_held_frequency(method, step, self.k, self.b, omega2, couple);
    }
    fn implicit_coupling(&self) -> bool {
        self.form.coupled()
    }
    /// −gsat(F, w + (B + τK) Δ) on each port ([`stage_laws`]).
    fn stage_law(&self, m: &[Motion], y: &[f64], tau: f64, laws: &mut [StageLaw]) {
        let n = self.dims;
        let v = first(m[1].v - m[0].v, n);
        let (level, curve) = stage_curve(&self.law);
        let pair = stage_laws(self.k, self.b, (level, self.law.d, curve), v, load(y, n), tau, n, [m[0].p, m[1].p]);
        laws.iter_mut().zip(pair).for_each(|(l, p)| *l = p);
    }
    /// While it holds, a spring K with damper B: I_fricK (19), B + τK per stage, in the paper's form (Euler, or B < T K/2);
    /// the continuous law under RK4 where B ≥ T K/2 ([`StageForm::continuous_law`]).
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: !self.form.held_rates(), coupled: self.form.coupled() })
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if self.form.coupled() {
            out.push(crate::stability::coupled_info("model C stiffness", self.k, inertia, step));
        } else if let Some(m) = inertia.iter().flatten().cloned().reduce(f64::min).filter(|_| self.form.is_euler()) {
            let limit = m / (4.0 * self.k);
            if step * step >= limit {
                out.push(Diagnostic::Warning(format!(
                    "model C (K = {}, B = {}) on mass {m}: T² = {:.3e} ≥ M/(4K) = {limit:.3e}, rule (63) fails: static friction \
                     will oscillate or diverge; use T < {:.3e} s, a smaller K, or model D (kikuuwe_d) for this mass",
                    self.k,
                    self.b,
                    step * step,
                    limit.sqrt()
                )));
            }
        }
        out.extend(self.law.diagnose(1.0 / (self.b + 0.5 * step * self.k), "model C, Z = 1/(B + τK), τ = T/2"));
        out
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let dims = dims_param(p)?;
    let k = p.positive("K")?;
    let b = p.nonneg_or("B", 0.0)?;
    let law = FrictionLaw::from_params(p)?;
    Ok(Built::Impedance(Box::new(ModelC { dims, k, b, law, form: StageForm::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "kikuuwe_c", "dims": 1, "K": 100.0, "B": 1.0, "law": "coulomb", "F": 2.0, "D": 0.1}"#,
    r#"{"type": "kikuuwe_c", "dims": 1, "K": 100.0, "B": 1.0, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}"#,
    r#"{"type": "kikuuwe_c", "dims": 1, "K": 100.0, "B": 1.0, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}"#,
];

/// Register `kikuuwe_c`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    const PARAMS: &[ParamDoc] = &[
        DIMS_DOC,
        ParamDoc { name: "K", unit: "N/m", default: None, doc: "contact stiffness (presliding spring), > 0" },
        ParamDoc {
            name: "B",
            unit: "N·s/m",
            default: Some("0"),
            doc: "contact damping, ≥ 0 (≈ 2√(K M) for critical damping)",
        },
    ];
    r.register(ComponentType {
        name: "kikuuwe_c",
        kind: Kind::Impedance,
        summary: "Kikuuwe model C (38): massless frictional contact between two ports, any law, 1-3 D (impedance)",
        params: table(&ALL, &[PARAMS, LAW_PARAMS]),
        ports: &[
            PortDoc { name: "a", domain: "scalar|point3", doc: "reference side (often ground); receives the reaction" },
            PortDoc { name: "b", domain: "scalar|point3", doc: "sliding side" },
        ],
        signals: SIGNALS,
        build,
    });
}
