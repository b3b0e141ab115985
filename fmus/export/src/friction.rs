//! `StictionFriction`: Kikuuwe's massless friction element (model C (38); with Coulomb
//! friction and one sub-step per step it is I_fricK (19) of the RK4 paper) as an FMU:
//! relative velocity v in, friction force f out. f has the sign of the paper: the force
//! resisting the motion, so the sliding body receives −f.
//!
//! * Co-Simulation: (38) with the fixed internal step `substep` τ:
//!   f = Φ_{1/(B+τK)}(v + K e/(B + τK)),  e ← e + τ ė with ė = (f − K e)/(B + τK)
//!   (ė = v exactly while stuck).
//! * Model Exchange: the limit τ → 0, ė = (sat_F(K e + B v) − K e)/B, f = sat_F(K e + B v)
//!   (with Φ_{1/B} for the Stribeck/viscous laws): Lipschitz in e and v, no events, and
//!   ė = v exactly while sticking, so the contact does not drift.
//!
//! Laws (`law`): 1 Coulomb F plus viscosity D; 2 Stribeck
//! g(s) = F + (Fs − F) exp(−(s/vs)^exponent) plus viscosity D.

use crate::model::{substeps, Check, Interface, Model, ModelInfo, Role, VarType, Variable};
use nalgebra::Vector3;
use stiction_components::friction::law::{DryLaw, FrictionLaw};
use stiction_components::friction::model_c::model_c_step;
use stiction_components::stage_form::ElementForm;

/// Value references (rows of `VARIABLES`).
pub mod vr {
    pub const K: usize = 1;
    pub const B: usize = 2;
    pub const LAW: usize = 3;
    pub const F: usize = 4;
    pub const FS: usize = 5;
    pub const VS: usize = 6;
    pub const EXPONENT: usize = 7;
    pub const D: usize = 8;
    pub const SUBSTEP: usize = 9;
    pub const V: usize = 10;
    pub const FORCE: usize = 11;
    pub const E: usize = 12;
    pub const STUCK: usize = 13;
    pub const DER_E: usize = 14;
}

const VARIABLES: &[Variable] = &[
    Variable::new("time", VarType::Float64, Role::Time, 0.0, "s", "simulation time"),
    Variable::new("K", VarType::Float64, Role::Parameter, 3e4, "N/m", "presliding stiffness, > 0"),
    Variable::new(
        "B",
        VarType::Float64,
        Role::Parameter,
        300.0,
        "N.s/m",
        "presliding damping (> 0 for Model Exchange, >= 0 for Co-Simulation)",
    ),
    Variable::new(
        "law",
        VarType::Int32,
        Role::Parameter,
        1.0,
        "",
        "friction law: 1 Coulomb (+ viscous D), 2 Stribeck (+ viscous D)",
    ),
    Variable::new("F", VarType::Float64, Role::Parameter, 5.0, "N", "Coulomb (kinetic) friction level, >= 0"),
    Variable::new(
        "Fs",
        VarType::Float64,
        Role::Parameter,
        7.5,
        "N",
        "Stribeck law: breakaway level at zero speed, >= F",
    ),
    Variable::new("vs", VarType::Float64, Role::Parameter, 0.1, "m/s", "Stribeck law: Stribeck speed, > 0"),
    Variable::new(
        "exponent",
        VarType::Float64,
        Role::Parameter,
        2.0,
        "",
        "Stribeck law: shape exponent of exp(-(v/vs)^exponent), > 0",
    ),
    Variable::new("D", VarType::Float64, Role::Parameter, 0.0, "N.s/m", "viscous friction coefficient, >= 0"),
    Variable::new(
        "substep",
        VarType::Float64,
        Role::Parameter,
        1e-3,
        "s",
        "Co-Simulation: internal fixed step of (38)",
    ),
    Variable::new(
        "v",
        VarType::Float64,
        Role::Input,
        0.0,
        "m/s",
        "sliding velocity (of the body relative to the surface)",
    ),
    Variable::new(
        "f",
        VarType::Float64,
        Role::Output,
        0.0,
        "N",
        "friction force resisting v (the body receives -f); Co-Simulation: over the last sub-step",
    ),
    Variable::new("e", VarType::Float64, Role::State { output: true }, 0.0, "m", "presliding deflection e"),
    Variable::new("stuck", VarType::Boolean, Role::DiscreteOutput, 0.0, "", "true while in static friction"),
    Variable::new("der(e)", VarType::Float64, Role::Derivative(vr::E as u32), 0.0, "m/s", "de/dt"),
];

pub static INFO: ModelInfo = ModelInfo {
    identifier: "StictionFriction",
    cli_name: "friction",
    description:
        "Kikuuwe friction element (model C (38) / I_fricK (19)): velocity in, friction force out, exact static friction",
    variables: VARIABLES,
    event_indicators: 0,
    model_exchange: true,
    default_stop: 2.0,
    default_step: 1e-3,
    documentation: "<p>Kikuuwe's friction element: a presliding spring K and damper B in series with a \
        friction law (Coulomb, Coulomb + viscous or Stribeck). Input the sliding velocity <code>v</code>, output the \
        friction force <code>f</code> (resisting v; apply <code>-f</code> to the body). While sticking the deflection \
        follows the motion exactly, so static friction holds without drift.</p>\
        <p>Co-Simulation runs the implicit-Euler element (38) with the fixed internal step <code>substep</code>; \
        Model Exchange its limit de/dt = (sat(K e + B v) - K e)/B, which needs B &gt; 0.</p>",
};

/// The friction element.
pub struct Friction;

/// The friction law and the element's K, B from the value array.
pub(crate) fn law(v: &[f64], info: &'static ModelInfo, base: usize) -> Result<FrictionLaw, String> {
    let c = Check { info, v };
    let f = c.nonneg("F")?;
    let d = c.nonneg("D")?;
    match v[base] {
        1.0 => Ok(FrictionLaw::coulomb(f, d)),
        2.0 => {
            let fs = c.nonneg("Fs")?;
            if fs < f {
                return Err(format!("parameter Fs = {fs} must be >= F = {f} (Stribeck breakaway level)"));
            }
            Ok(FrictionLaw {
                dry: DryLaw::Stribeck { fc: f, fs, vs: c.positive("vs")?, exponent: c.positive("exponent")? },
                d,
            })
        }
        x => Err(format!("parameter law must be 1 (Coulomb) or 2 (Stribeck), got {x}")),
    }
}

struct P {
    k: f64,
    b: f64,
    law: FrictionLaw,
}

fn params(v: &[f64]) -> Result<P, String> {
    let c = Check { info: &INFO, v };
    Ok(P { k: c.positive("K")?, b: c.nonneg("B")?, law: law(v, &INFO, vr::LAW)? })
}

/// One evaluation of (38) with step τ (τ = 0: the Model Exchange limit): (f, ė, stuck).
/// Co-Simulation takes implicit-Euler steps of (38), the paper's form (`hold` false).
fn element(p: &P, speed: f64, e: f64, tau: f64) -> (f64, f64, bool) {
    let (f, de, stuck) = model_c_step(p.k, p.b, &p.law, Vector3::new(speed, 0.0, 0.0), Vector3::new(e, 0.0, 0.0), tau, ElementForm::Paper);
    (f.x, de.x, stuck)
}

impl Model for Friction {
    fn info(&self) -> &'static ModelInfo {
        &INFO
    }

    fn initialize(&self, v: &mut [f64], interface: Interface) -> Result<(), String> {
        let p = params(v)?;
        let c = Check { info: &INFO, v };
        c.positive("substep")?;
        c.finite("e")?;
        if interface == Interface::ModelExchange {
            if p.b <= 0.0 {
                return Err("parameter B must be > 0 for Model Exchange (de/dt = (sat(K e + B v) - K e)/B)".into());
            }
            return self.derivatives(v);
        }
        let speed = c.finite("v")?;
        let (f, _, stuck) = element(&p, speed, v[vr::E], v[vr::SUBSTEP]);
        v[vr::FORCE] = f;
        v[vr::STUCK] = f64::from(stuck);
        Ok(())
    }

    fn do_step(&self, v: &mut [f64], h: f64) -> Result<(), String> {
        let p = params(v)?;
        let speed = Check { info: &INFO, v }.finite("v")?;
        let n = substeps(h, v[vr::SUBSTEP])?;
        let hs = h / n as f64;
        let mut e = v[vr::E];
        for _ in 0..n {
            let (f, de, stuck) = element(&p, speed, e, hs);
            e += hs * de;
            v[vr::FORCE] = f;
            v[vr::STUCK] = f64::from(stuck);
        }
        if !e.is_finite() {
            return Err(format!("the deflection e became non-finite ({e})"));
        }
        v[vr::E] = e;
        Ok(())
    }

    /// The deflection's scale is the presliding range max(F, Fs)/K.
    fn nominals(&self, v: &[f64], out: &mut [f64]) {
        let level = v[vr::F].max(if v[vr::LAW] == 2.0 { v[vr::FS] } else { 0.0 });
        let n = level / v[vr::K];
        out[0] = if n.is_finite() && n > 0.0 { n } else { 1.0 };
    }

    fn derivatives(&self, v: &mut [f64]) -> Result<(), String> {
        let p = params(v)?;
        if p.b <= 0.0 {
            return Err("parameter B must be > 0 for Model Exchange".into());
        }
        let speed = Check { info: &INFO, v }.finite("v")?;
        let (f, de, stuck) = element(&p, speed, v[vr::E], 0.0);
        v[vr::FORCE] = f;
        v[vr::DER_E] = de;
        v[vr::STUCK] = f64::from(stuck);
        Ok(())
    }
}
