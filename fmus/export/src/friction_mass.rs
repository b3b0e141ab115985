//! `StictionFrictionMass`: Kikuuwe's model D (45), a mass on a compliant frictional contact,
//! as a Co-Simulation FMU: applied force in; position, velocity and friction force out.
//! Mass, compliance and friction are solved in one implicit step, stable at any stiffness.
//! One sub-step of size τ (the fixed internal step `substep`) under force h, by
//! [`ModelD::step`]: q ← q + τ u_new, u ← u_new = u + τ (h − y)/M, w ← w + τ w', where w is
//! the slider (held exactly while stuck).

use crate::friction::law;
use crate::model::{substeps, Check, Interface, Model, ModelInfo, Role, VarType, Variable};
use nalgebra::Vector3;
use stiction_components::friction::model_d::ModelD;

/// Value references (rows of `VARIABLES`).
pub mod vr {
    pub const MASS: usize = 1;
    pub const K: usize = 2;
    pub const B: usize = 3;
    pub const LAW: usize = 4;
    pub const E0: usize = 10;
    pub const SUBSTEP: usize = 11;
    pub const FORCE: usize = 12;
    pub const Q: usize = 13;
    pub const V: usize = 14;
    pub const F: usize = 15;
    pub const STUCK: usize = 16;
    pub const W: usize = 17;
}

const VARIABLES: &[Variable] = &[
    Variable::new("time", VarType::Float64, Role::Time, 0.0, "s", "simulation time"),
    Variable::new("mass", VarType::Float64, Role::Parameter, 1.0, "kg", "mass M, > 0"),
    Variable::new("K", VarType::Float64, Role::Parameter, 1e4, "N/m", "stiffness between the mass and the slider, > 0"),
    Variable::new(
        "B",
        VarType::Float64,
        Role::Parameter,
        200.0,
        "N.s/m",
        "damping between the mass and the slider, >= 0",
    ),
    Variable::new(
        "law",
        VarType::Int32,
        Role::Parameter,
        1.0,
        "",
        "friction law: 1 Coulomb (+ viscous D), 2 Stribeck (+ viscous D)",
    ),
    Variable::new("F", VarType::Float64, Role::Parameter, 8.0, "N", "Coulomb (kinetic) friction level, >= 0"),
    Variable::new(
        "Fs",
        VarType::Float64,
        Role::Parameter,
        10.0,
        "N",
        "Stribeck law: breakaway level at zero speed, >= F",
    ),
    Variable::new("vs", VarType::Float64, Role::Parameter, 0.1, "m/s", "Stribeck law: Stribeck speed, > 0"),
    Variable::new("exponent", VarType::Float64, Role::Parameter, 2.0, "", "Stribeck law: shape exponent, > 0"),
    Variable::new("D", VarType::Float64, Role::Parameter, 0.0, "N.s/m", "viscous friction coefficient, >= 0"),
    Variable::new("e0", VarType::Float64, Role::Parameter, 0.0, "m", "initial deflection q - w"),
    Variable::new("substep", VarType::Float64, Role::Parameter, 1e-3, "s", "internal fixed step of (45)"),
    Variable::new("force", VarType::Float64, Role::Input, 0.0, "N", "force applied to the mass"),
    Variable::new("q", VarType::Float64, Role::State { output: true }, 0.0, "m", "position of the mass"),
    Variable::new(
        "v",
        VarType::Float64,
        Role::State { output: true },
        0.0,
        "m/s",
        "velocity of the mass (exactly 0 while stuck and at rest)",
    ),
    Variable::new(
        "f",
        VarType::Float64,
        Role::Output,
        0.0,
        "N",
        "friction force on the mass over the last sub-step (opposes sliding)",
    ),
    Variable::new("stuck", VarType::Boolean, Role::DiscreteOutput, 0.0, "", "true while in static friction"),
    Variable::new("w", VarType::Float64, Role::Output, 0.0, "m", "slider position (constant while stuck)"),
];

pub static INFO: ModelInfo = ModelInfo {
    identifier: "StictionFrictionMass",
    cli_name: "friction-mass",
    description: "Kikuuwe model D (45): mass on a compliant frictional contact, force in, motion out",
    variables: VARIABLES,
    event_indicators: 0,
    model_exchange: false,
    default_stop: 2.0,
    default_step: 1e-3,
    documentation: "<p>A mass on a frictional surface with presliding compliance (Kikuuwe's model D): input the \
        applied <code>force</code>; outputs the position <code>q</code>, velocity <code>v</code> and the friction \
        force <code>f</code> on the mass. The mass, the contact compliance and the friction are solved in one \
        implicit-Euler step (45) with the fixed internal step <code>substep</code>, stable at any stiffness, and the \
        mass rests exactly while the force stays below the breakaway level.</p>",
};

/// The model-D FMU.
pub struct FrictionMass;

fn element(v: &[f64]) -> Result<ModelD, String> {
    let c = Check { info: &INFO, v };
    Ok(ModelD {
        dims: 1,
        mass: c.positive("mass")?,
        k: c.positive("K")?,
        b: c.nonneg("B")?,
        law: law(v, &INFO, vr::LAW)?,
        force: Vector3::zeros(),
        q0: Vector3::zeros(),
        v0: Vector3::zeros(),
        e0: Vector3::zeros(),
        form: Default::default(),
    })
}

fn x(s: f64) -> Vector3<f64> {
    Vector3::new(s, 0.0, 0.0)
}

impl Model for FrictionMass {
    fn info(&self) -> &'static ModelInfo {
        &INFO
    }

    fn initialize(&self, v: &mut [f64], _interface: Interface) -> Result<(), String> {
        let d = element(v)?;
        let c = Check { info: &INFO, v };
        c.positive("substep")?;
        let (q, u, e0, h) = (c.finite("q")?, c.finite("v")?, c.finite("e0")?, c.finite("force")?);
        v[vr::W] = q - e0;
        let (y, _, _, stuck) = d.step(x(u), x(e0), x(h), v[vr::SUBSTEP]);
        v[vr::F] = -y.x;
        v[vr::STUCK] = f64::from(stuck);
        Ok(())
    }

    /// (45) sub-stepped, exactly as the native `kikuuwe_d` admittance under the Euler method.
    fn do_step(&self, v: &mut [f64], h: f64) -> Result<(), String> {
        let d = element(v)?;
        let force = Check { info: &INFO, v }.finite("force")?;
        let n = substeps(h, v[vr::SUBSTEP])?;
        let hs = h / n as f64;
        let (mut q, mut u, mut w) = (v[vr::Q], v[vr::V], v[vr::W]);
        for _ in 0..n {
            let (y, du, wv, stuck) = d.step(x(u), x(q - w), x(force), hs);
            q += hs * (u + du.x * hs);
            u += hs * du.x;
            w += hs * wv.x;
            v[vr::F] = -y.x;
            v[vr::STUCK] = f64::from(stuck);
        }
        if !(q.is_finite() && u.is_finite() && w.is_finite()) {
            return Err(format!("the state became non-finite (q = {q}, v = {u}, w = {w})"));
        }
        (v[vr::Q], v[vr::V], v[vr::W]) = (q, u, w);
        Ok(())
    }
}
