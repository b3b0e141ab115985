//! `StictionGear`: the 1-DOF gear transmission with asymmetric load-dependent friction
//! (papers/gear-transmission-asymmetric-friction.txt; shared/MODELS.md §4) as an FMU.
//!
//! * Co-Simulation: the implicit-Euler step (44) of [`stiction_components::gear::transmission`],
//!   sub-stepped with the fixed internal step `substep`; v is exactly 0.0 while the torques
//!   stay in the static set (23).
//! * Model Exchange: the DAI (14) as a hybrid model. In a sliding mode of direction s = ±1,
//!   (m + M) v̇ = fu − fv − Φ(s, φ, ρ̂) with Φ of (34) — smooth, so the host's integrator
//!   is accurate. In the stuck mode v̇ = 0 and v is held at exactly 0.0. Event indicators:
//!   s·v while sliding (the speed reaching zero), and Φ(+1) − (fu − fv), (fu − fv) − Φ(−1)
//!   while stuck (the applied torque leaving the static set (23)). At an event,
//!   fmi2NewDiscreteStates resets v to 0.0 and picks stuck, forward or backward sliding.

use crate::model::{substeps, Check, EventUpdate, Interface, Model, ModelInfo, Role, VarType, Variable};
use stiction_components::gear::efficiency::{asymmetry_from_efficiencies, big_phi, phi, rho_hat};
use stiction_components::gear::transmission::{mode, Gear as GearComponent, GearModel};

/// Value references (rows of `VARIABLES`).
pub mod vr {
    pub const M_IN: usize = 1;
    pub const M_OUT: usize = 2;
    pub const GAMMA_U: usize = 3;
    pub const GAMMA_V: usize = 4;
    pub const USE_EFFICIENCY: usize = 5;
    pub const ETA_F: usize = 6;
    pub const ETA_B: usize = 7;
    pub const DAMPING: usize = 8;
    pub const SUBSTEP: usize = 9;
    pub const FU: usize = 10;
    pub const FV: usize = 11;
    pub const Q: usize = 12;
    pub const V: usize = 13;
    pub const LAMBDA: usize = 14;
    pub const MODE: usize = 15;
    pub const DER_Q: usize = 16;
    pub const DER_V: usize = 17;
    pub const SLIDE: usize = 18;
    pub const Z1: usize = 19;
    pub const Z2: usize = 20;
}

const VARIABLES: &[Variable] = &[
    Variable::new("time", VarType::Float64, Role::Time, 0.0, "s", "simulation time"),
    Variable::new(
        "m",
        VarType::Float64,
        Role::Parameter,
        1.0,
        "kg.m2",
        "input-side inertia referred to the output shaft, > 0",
    ),
    Variable::new("M", VarType::Float64, Role::Parameter, 1.0, "kg.m2", "output-side inertia, > 0"),
    Variable::new(
        "gamma_u",
        VarType::Float64,
        Role::Parameter,
        0.2,
        "",
        "asymmetry coefficient of the input torque (14)",
    ),
    Variable::new(
        "gamma_v",
        VarType::Float64,
        Role::Parameter,
        0.5,
        "",
        "asymmetry coefficient of the output torque (14); |gamma_v| >= 1: non-backdrivable",
    ),
    Variable::new(
        "use_efficiency",
        VarType::Boolean,
        Role::Parameter,
        0.0,
        "",
        "true: take gamma_u, gamma_v from eta_f, eta_b by (27)",
    ),
    Variable::new(
        "eta_f",
        VarType::Float64,
        Role::Parameter,
        0.9,
        "",
        "forward efficiency in (0, 1] (used when use_efficiency)",
    ),
    Variable::new(
        "eta_b",
        VarType::Float64,
        Role::Parameter,
        0.8,
        "",
        "backward efficiency in (0, 1] (used when use_efficiency)",
    ),
    Variable::new(
        "damping",
        VarType::Float64,
        Role::Parameter,
        0.0,
        "N.m.s/rad",
        "output-side viscous friction b >= 0, added to fv as b*v",
    ),
    Variable::new(
        "substep",
        VarType::Float64,
        Role::Parameter,
        1e-3,
        "s",
        "Co-Simulation: internal fixed step of the implicit-Euler step (44)",
    ),
    Variable::new("fu", VarType::Float64, Role::Input, 0.0, "N.m", "actuator torque, referred to the output shaft"),
    Variable::new("fv", VarType::Float64, Role::Input, 0.0, "N.m", "torque the output shaft applies to its load"),
    Variable::new("q", VarType::Float64, Role::State { output: true }, 0.0, "rad", "output angle"),
    Variable::new(
        "v",
        VarType::Float64,
        Role::State { output: true },
        0.0,
        "rad/s",
        "output speed (exactly 0 while stuck)",
    ),
    Variable::new(
        "lambda",
        VarType::Float64,
        Role::Output,
        0.0,
        "N.m",
        "internal force lambda of (14b) (Co-Simulation: over the last sub-step)",
    ),
    Variable::new(
        "mode",
        VarType::Int32,
        Role::DiscreteOutput,
        0.0,
        "",
        "0 stuck, +1 forward driving, -1 back driving",
    ),
    Variable::new("der(q)", VarType::Float64, Role::Derivative(vr::Q as u32), 0.0, "rad/s", "dq/dt"),
    Variable::new("der(v)", VarType::Float64, Role::Derivative(vr::V as u32), 0.0, "rad/s2", "dv/dt"),
    Variable::new("slide", VarType::Int32, Role::Mode, 0.0, "", "hybrid mode: 0 stuck, +1/-1 sliding forward/backward"),
    Variable::new(
        "z1",
        VarType::Float64,
        Role::Indicator(0),
        0.0,
        "",
        "event indicator: stuck Phi(+1) - (fu - fv) (N.m), sliding slide*v (rad/s)",
    ),
    Variable::new(
        "z2",
        VarType::Float64,
        Role::Indicator(1),
        0.0,
        "",
        "event indicator: stuck (fu - fv) - Phi(-1) (N.m), sliding 1",
    ),
];

pub static INFO: ModelInfo = ModelInfo {
    identifier: "StictionGear",
    cli_name: "gear",
    description: "Gear transmission with asymmetric load-dependent friction (1-DOF), implicit-Euler step (44) / hybrid DAI (14)",
    variables: VARIABLES,
    event_indicators: 2,
    model_exchange: true,
    default_stop: 2.0,
    default_step: 1e-3,
    documentation: "<p>A gear transmission whose friction depends on the transmitted load, with different \
        coefficients for the input and output torques, so a worm or leadscrew can be non-backdrivable \
        (|gamma_v| &ge; 1) while still driven from the motor. Inputs: the motor torque <code>fu</code> (referred to the \
        output) and the torque <code>fv</code> the output shaft applies to its load. Outputs: angle <code>q</code>, \
        speed <code>v</code> (exactly 0 while stuck), internal force <code>lambda</code> and <code>mode</code>.</p>\
        <p>Co-Simulation runs the implicit-Euler step (44) with the fixed internal step <code>substep</code>. \
        Model Exchange runs the DAI (14) as a hybrid model with a stuck mode that holds v at exactly 0.</p>",
};

/// The gear model.
pub struct Gear;

/// Parameters read from the value array.
struct P {
    gu: f64,
    gv: f64,
    m: f64,
    big_m: f64,
    b: f64,
}

fn params(v: &[f64]) -> Result<P, String> {
    let c = Check { info: &INFO, v };
    let m = c.positive("m")?;
    let big_m = c.positive("M")?;
    let b = c.nonneg("damping")?;
    let (gu, gv) = if v[vr::USE_EFFICIENCY] != 0.0 {
        asymmetry_from_efficiencies(c.finite("eta_f")?, c.finite("eta_b")?)?
    } else {
        (c.finite("gamma_u")?, c.finite("gamma_v")?)
    };
    Ok(P { gu, gv, m, big_m, b })
}

fn inputs(v: &[f64]) -> Result<(f64, f64), String> {
    let c = Check { info: &INFO, v };
    Ok((c.finite("fu")?, c.finite("fv")?))
}

impl P {
    fn rho(&self) -> f64 {
        rho_hat(self.gu, self.gv, self.m, self.big_m)
    }
    /// The static interval [Φ(−1), Φ(+1)] of fu − fv at zero speed (23)/(34).
    fn static_set(&self, fu: f64, fv: f64) -> (f64, f64) {
        let rho = self.rho();
        let ph = phi(self.gu, self.gv, fu, fv, rho);
        (big_phi(-1.0, ph, rho), big_phi(1.0, ph, rho))
    }
    /// λ of (14b) for acceleration a.
    fn lambda(&self, fu: f64, fv: f64, a: f64) -> f64 {
        self.gu * fu + self.gv * fv - (self.gu * self.m - self.gv * self.big_m) * a
    }
    /// The sliding direction chosen at zero speed: 0 when fu − fv is in the static set.
    fn start_direction(&self, fu: f64, fv: f64) -> f64 {
        let (lo, hi) = self.static_set(fu, fv);
        let a = fu - fv;
        if a > hi {
            1.0
        } else if a < lo {
            -1.0
        } else {
            0.0
        }
    }
}

impl Model for Gear {
    fn info(&self) -> &'static ModelInfo {
        &INFO
    }

    fn initialize(&self, v: &mut [f64], interface: Interface) -> Result<(), String> {
        let p = params(v)?;
        Check { info: &INFO, v }.positive("substep")?;
        let (fu, fv) = inputs(v)?;
        let speed = v[vr::V];
        let fv_total = fv + p.b * speed;
        v[vr::SLIDE] = if speed > 0.0 {
            1.0
        } else if speed < 0.0 {
            -1.0
        } else {
            p.start_direction(fu, fv_total)
        };
        match interface {
            Interface::ModelExchange => self.derivatives(v),
            Interface::CoSimulation => {
                // Preview of the first step: λ and mode as in (44) with h = substep.
                let g = GearComponent::new(GearModel::direct(p.gu, p.gv), p.m, p.big_m);
                let s = g.step(speed, fu, fv_total, v[vr::SUBSTEP]);
                v[vr::LAMBDA] = s.lambda;
                v[vr::MODE] = mode(s.v, fu, fv_total);
                Ok(())
            }
        }
    }

    /// (44) sub-stepped: v_k = v* − clamp(v*, lo, hi), q_k = q_{k−1} + h v_k.
    fn do_step(&self, v: &mut [f64], h: f64) -> Result<(), String> {
        let p = params(v)?;
        let (fu, fv) = inputs(v)?;
        let g = GearComponent::new(GearModel::direct(p.gu, p.gv), p.m, p.big_m);
        let n = substeps(h, v[vr::SUBSTEP])?;
        let hs = h / n as f64;
        let (mut q, mut speed) = (v[vr::Q], v[vr::V]);
        for _ in 0..n {
            let fv_total = fv + p.b * speed;
            let s = g.step(speed, fu, fv_total, hs);
            speed = s.v;
            q += hs * speed;
            v[vr::LAMBDA] = s.lambda;
            v[vr::MODE] = mode(s.v, fu, fv_total);
        }
        if !(q.is_finite() && speed.is_finite()) {
            return Err(format!("the gear state became non-finite (q = {q}, v = {speed})"));
        }
        v[vr::Q] = q;
        v[vr::V] = speed;
        Ok(())
    }

    /// (14) in the current mode: stuck v̇ = 0; sliding (m + M) v̇ = fu − fv − Φ(s, φ, ρ̂).
    fn derivatives(&self, v: &mut [f64]) -> Result<(), String> {
        let p = params(v)?;
        let (fu, fv) = inputs(v)?;
        let speed = v[vr::V];
        let s = v[vr::SLIDE];
        let fv_total = fv + p.b * speed;
        let acc = if s == 0.0 {
            0.0
        } else {
            let rho = p.rho();
            (fu - fv_total - big_phi(s, phi(p.gu, p.gv, fu, fv_total, rho), rho)) / (p.m + p.big_m)
        };
        v[vr::DER_Q] = speed;
        v[vr::DER_V] = acc;
        v[vr::LAMBDA] = p.lambda(fu, fv_total, acc);
        v[vr::MODE] = if s == 0.0 { 0.0 } else { mode(speed, fu, fv_total) };
        Ok(())
    }

    fn event_indicators(&self, v: &[f64], z: &mut [f64]) {
        let s = v[vr::SLIDE];
        let Ok(p) = params(v) else {
            return z.iter_mut().for_each(|z| *z = 1.0);
        };
        let (fu, fv) = (v[vr::FU], v[vr::FV]);
        if s == 0.0 {
            let (lo, hi) = p.static_set(fu, fv);
            z[0] = hi - (fu - fv);
            z[1] = (fu - fv) - lo;
        } else {
            z[0] = s * v[vr::V];
            z[1] = 1.0;
        }
    }

    /// Stuck: start sliding when fu − fv left the static set. Sliding: when the speed has
    /// reached or crossed zero, reset v to exactly 0 and choose stuck or the new direction.
    fn event_update(&self, v: &mut [f64]) -> EventUpdate {
        let Ok(p) = params(v) else { return EventUpdate::default() };
        let (fu, fv) = (v[vr::FU], v[vr::FV]);
        let s = v[vr::SLIDE];
        let mut out = EventUpdate::default();
        if s == 0.0 {
            v[vr::SLIDE] = p.start_direction(fu, fv);
        } else if s * v[vr::V] <= 0.0 {
            out.states_changed = v[vr::V] != 0.0;
            v[vr::V] = 0.0;
            v[vr::SLIDE] = p.start_direction(fu, fv);
        }
        out
    }
}
