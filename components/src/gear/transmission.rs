//! Gear transmission with asymmetric, load-dependent friction as an admittance
//! (papers/gear-transmission-asymmetric-friction.txt; shared/MODELS.md §4).
//!
//! The DAI (14) of a transmission with input-side inertia m (referred to the output shaft),
//! output-side inertia M and asymmetry coefficients γu, γv:
//!
//! ```text
//!   (m + M) v̇ ∈ fu − fv − |λ| Sgn(v),     (γu m − γv M) v̇ = γu fu + γv fv − λ
//! ```
//!
//! is integrated by the implicit-Euler step (44) with the stage step size τ:
//! v* = v + τ (fu − fv)/(m + M), v_new = v* − clamp(v*, τ Φ(−1)/(m + M), τ Φ(+1)/(m + M)),
//! with Φ(s) = s |λs(φ, ρ̂ s)| of (34)/(35). [`derivative`](Admittance::derivative) returns
//! the rates (q̇, v̇) = (v_new, (v_new − v)/τ), exactly as I_fricK (19) does for impedances, so
//! `method: "euler"` (one stage, τ = T) is the discrete algorithm (44) itself: v is exactly
//! 0.0 while the torques stay in the static set (45).
//!
//! Ports: `input` (the motor shaft: angle κ q, speed κ v; a torque f̂ on it is fu = κ f̂) and
//! `output` (q, v; the summed torque F on it is the reaction of the load, fv = −F, plus the
//! output-side viscous friction b v). κ = input speed / output speed (the reduction ratio).
//!
//! The coefficients come from one of: γu/γv directly; forward/backward efficiencies (27);
//! a leadscrew (γu = μ' tan θ, γv = μ'/tan θ, κ = 1/(r tan θ), μ' = μ/cos θ_thread); a worm
//! gear (17); a spur gear at one contact point (21), derived in [`spur_coefficients`].

use super::efficiency::{self, big_phi, classify, efficiencies, phi, rho_hat};
use crate::doc_table::table;
use crate::stage_form::{StageForm, StopSwitch};
use std::sync::OnceLock;
use stiction_framework::component::{Admittance, Diagnostic, Fault, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Error, Method, Result};

/// Where the asymmetry coefficients of a gear came from (kept for `stiction check`).
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// γu, γv given directly.
    Direct,
    /// Forward and backward efficiencies (27).
    Efficiency { forward: f64, backward: f64 },
    /// Leadscrew: lead (helix) angle θ (rad), thread friction μ, pitch radius r (m), thread
    /// (flank) angle (rad, 0 for a square thread).
    Leadscrew { lead_angle: f64, mu: f64, radius: f64, thread_angle: f64 },
    /// Worm gear (17): lead angle λl ∈ (0, π/4], normal pressure angle φn ∈ (0, π/2),
    /// friction μ, pitch radii of the worm and of the wheel (m).
    Worm { lead_angle: f64, pressure_angle: f64, mu: f64, worm_radius: f64, gear_radius: f64 },
    /// Spur gear (21) at contact offset ξ (m) along the line of action.
    Spur { pressure_angle: f64, mu: f64, input_radius: f64, output_radius: f64, contact: f64 },
}

/// Asymmetry coefficients and reduction ratio of one transmission.
#[derive(Clone, Debug, PartialEq)]
pub struct GearModel {
    pub gamma_u: f64,
    pub gamma_v: f64,
    /// κ = input speed / output speed (> 0).
    pub ratio: f64,
    pub geometry: Geometry,
}

impl GearModel {
    /// Coefficients given directly, ratio 1.
    pub fn direct(gamma_u: f64, gamma_v: f64) -> GearModel {
        GearModel { gamma_u, gamma_v, ratio: 1.0, geometry: Geometry::Direct }
    }

    /// Leadscrew of lead angle θ (rad), friction μ, radius r (m), thread angle (rad).
    pub fn leadscrew(lead_angle: f64, mu: f64, radius: f64, thread_angle: f64) -> GearModel {
        let mu_e = mu / thread_angle.cos();
        let t = lead_angle.tan();
        GearModel {
            gamma_u: mu_e * t,
            gamma_v: mu_e / t,
            ratio: 1.0 / (radius * t),
            geometry: Geometry::Leadscrew { lead_angle, mu, radius, thread_angle },
        }
    }

    /// Worm gear (17).
    pub fn worm(lead_angle: f64, pressure_angle: f64, mu: f64, worm_radius: f64, gear_radius: f64) -> GearModel {
        let (t, c) = (lead_angle.tan(), pressure_angle.cos());
        GearModel {
            gamma_u: mu * t / c,
            gamma_v: mu / (t * c),
            ratio: gear_radius / (worm_radius * t),
            geometry: Geometry::Worm { lead_angle, pressure_angle, mu, worm_radius, gear_radius },
        }
    }

    /// Spur gear at contact offset ξ, see [`spur_coefficients`].
    pub fn spur(pressure_angle: f64, mu: f64, input_radius: f64, output_radius: f64, contact: f64) -> GearModel {
        let (gamma_u, gamma_v) = spur_coefficients(pressure_angle, mu, input_radius, output_radius, contact);
        GearModel {
            gamma_u,
            gamma_v,
            ratio: output_radius / input_radius,
            geometry: Geometry::Spur { pressure_angle, mu, input_radius, output_radius, contact },
        }
    }

    /// Coefficients from forward/backward efficiencies (27).
    pub fn from_efficiencies(forward: f64, backward: f64) -> std::result::Result<GearModel, String> {
        let (gamma_u, gamma_v) = efficiency::asymmetry_from_efficiencies(forward, backward)?;
        Ok(GearModel { gamma_u, gamma_v, ratio: 1.0, geometry: Geometry::Efficiency { forward, backward } })
    }

    /// Facts for `stiction check` that depend only on the coefficients, and the screw
    /// conditions of Dupont (14)/(15) for a leadscrew with inertias m (input, referred to
    /// the output) and M (output).
    pub fn diagnose(&self, m: f64, big_m: f64) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let (gu, gv) = (self.gamma_u, self.gamma_v);
        let (ef, eb) = efficiencies(gu, gv);
        let source = match &self.geometry {
            Geometry::Direct => "given".to_string(),
            Geometry::Efficiency { forward, backward } => format!("from efficiencies {forward}/{backward} (27)"),
            Geometry::Leadscrew { .. } => "from leadscrew geometry".to_string(),
            Geometry::Worm { .. } => "from worm-gear geometry (17)".to_string(),
            Geometry::Spur { .. } => "from spur-gear geometry (21)".to_string(),
        };
        out.push(Diagnostic::Info(format!(
            "gear γu = {gu:.6}, γv = {gv:.6} ({source}), ratio κ = {:.6}; efficiencies ηf = {ef:.4}, ηb = {eb:.4} (26); {}",
            self.ratio,
            classify(gu, gv)
        )));
        let rho = rho_hat(gu, gv, m, big_m);
        if rho.abs() < 1.0 {
            out.push(Diagnostic::Info(format!("ρ̂ = {rho:.6}: well-posed (|ρ̂| < 1, (29))")));
        } else {
            out.push(Diagnostic::Warning(format!(
                "ρ̂ = {rho:.6}: ill-posed (|ρ̂| ≥ 1, dynamic jamming): λ of (31) may not exist or be unique; \
                 the step uses λs (35) with ±{:e} for ±∞, so a motion that needs it stops at once",
                efficiency::LAMBDA_BOUND
            )));
        }
        if let Geometry::Leadscrew { lead_angle, mu, thread_angle, .. } = self.geometry {
            let s = ScrewCheck::new(
                lead_angle,
                mu,
                thread_angle,
                m / (self.ratio * self.ratio),
                big_m / (self.ratio * self.ratio),
            );
            let over = if s.overhauling() {
                "overhauling (α > ρ, backdrivable)"
            } else {
                "not overhauling (α ≤ ρ, self-locking)"
            };
            out.push(Diagnostic::Info(format!(
                "leadscrew: helix angle α = {:.4}°, friction angle ρ = {:.4}°: {over}",
                lead_angle.to_degrees(),
                s.friction_angle.to_degrees()
            )));
            match s.dupont() {
                Some((a1, a2)) => {
                    let ok = a1 > 0.0 && a2 > 0.0;
                    let text = format!(
                        "Dupont (14): I + m l²/η1 = {a1:.6e}, I + m l²/η2 = {a2:.6e} kg·m² at the screw: {}{}",
                        if ok { "well-posed" } else { "ill-posed" },
                        if ok == (rho.abs() < 1.0) { " (agrees with ρ̂)" } else { " (DISAGREES with ρ̂)" }
                    );
                    out.push(if ok { Diagnostic::Info(text) } else { Diagnostic::Warning(text) });
                }
                None => out.push(Diagnostic::Info(
                    "Dupont (13)–(14) does not apply: α + ρ ≥ 90°, the nut cannot be driven from the screw".to_string(),
                )),
            }
        }
        out
    }
}

/// Dupont's screw drive (section 5 of papers/dupont-coulomb-existence-uniqueness.md):
/// helix angle α, friction angle ρ = atan(μ/cos θ_thread), screw inertia I and load inertia
/// referred to the screw m l² (kg·m²).
#[derive(Clone, Copy, Debug)]
pub struct ScrewCheck {
    pub helix_angle: f64,
    pub friction_angle: f64,
    pub screw_inertia: f64,
    pub load_inertia: f64,
}

impl ScrewCheck {
    pub fn new(helix_angle: f64, mu: f64, thread_angle: f64, screw_inertia: f64, load_inertia: f64) -> ScrewCheck {
        ScrewCheck { helix_angle, friction_angle: (mu / thread_angle.cos()).atan(), screw_inertia, load_inertia }
    }
    /// (15): α > ρ.
    pub fn overhauling(&self) -> bool {
        self.helix_angle > self.friction_angle
    }
    /// (13): η1 = tan α / tan(α + ρ), η2 = tan α / tan(α − ρ); `None` when α + ρ ≥ π/2.
    pub fn efficiencies(&self) -> Option<(f64, f64)> {
        let (a, r) = (self.helix_angle, self.friction_angle);
        (a + r < std::f64::consts::FRAC_PI_2).then(|| (a.tan() / (a + r).tan(), a.tan() / (a - r).tan()))
    }
    /// (14): the two effective inertias I + m l²/ηi; well-posed iff both > 0.
    pub fn dupont(&self) -> Option<(f64, f64)> {
        self.efficiencies()
            .map(|(e1, e2)| (self.screw_inertia + self.load_inertia / e1, self.screw_inertia + self.load_inertia / e2))
    }
}

/// (21), derived for a spur pair with pitch radii Ru (input), Rv (output), pressure angle
/// α and tooth friction μ, with one contact point at signed distance ξ from the pitch point
/// along the line of action (ξ > 0 towards the output gear's centre side).
///
/// Derivation (origin at the pitch point, input centre (−Ru, 0), output centre (Rv, 0),
/// contact c = ξ n, n = (sin α, cos α) the line of action, t = (cos α, −sin α)): the
/// contact force on the output gear is λn n + λt t. Moment balance, with u = κ v,
/// κ = Rv/Ru, m = κ² m̂, fu = κ f̂u:
///   m̂ u̇ = f̂u − λn Ru cos α + λt (ξ + Ru sin α),
///   M v̇ = −fv + λn Rv cos α + λt (ξ − Rv sin α).
/// The sliding velocity of the output tooth on the input tooth is (1 + κ) ξ v t, so
/// Coulomb's law gives λt ∈ −μ |λn| sgn(ξ) Sgn(v). Adding the equations gives
/// (m + M) v̇ = fu − fv + (1 + κ) ξ λt, i.e. (14a) with |λ| = μ (1 + κ) |ξ| |λn|;
/// eliminating λt gives (14b) with
///   γu = μ |ξ|/(Rv cos α) − sgn(ξ) μ tan α,  γv = μ |ξ|/(Ru cos α) + sgn(ξ) μ tan α.
/// At the pitch point (ξ = 0) γu = −γv: no sliding, ηf = ηb = 1.
pub fn spur_coefficients(
    pressure_angle: f64,
    mu: f64,
    input_radius: f64,
    output_radius: f64,
    contact: f64,
) -> (f64, f64) {
    let (c, t) = (pressure_angle.cos(), pressure_angle.tan());
    let sg = if contact > 0.0 {
        1.0
    } else if contact < 0.0 {
        -1.0
    } else {
        0.0
    };
    let a = contact.abs();
    (mu * a / (output_radius * c) - sg * mu * t, mu * a / (input_radius * c) + sg * mu * t)
}

/// One implicit-Euler step (44) of the 1-DOF gear.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GearStep {
    /// v_k (exactly 0.0 in the static set (45)).
    pub v: f64,
    /// λ of (14b) over the step.
    pub lambda: f64,
}

/// The smallest f64 above / below `x` (f64::next_up/next_down, kept for the MSRV).
fn next_toward(x: f64, up: bool) -> f64 {
    if x == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = x.to_bits();
    let away = (x > 0.0) == up;
    f64::from_bits(if away { b + 1 } else { b - 1 })
}

/// A rate d with v + τ·d == v_new in floating point when one exists within a few ulps of
/// (v_new − v)/τ: then an Euler step (x + T·rate) lands exactly on v_new = 0.0.
#[inline]
pub(crate) fn exact_rate(v: f64, v_new: f64, tau: f64) -> f64 {
    let d = (v_new - v) / tau;
    if v_new != 0.0 || v + tau * d == v_new {
        return d;
    }
    let (mut up, mut down) = (d, d);
    for _ in 0..4 {
        up = next_toward(up, true);
        down = next_toward(down, false);
        if v + tau * up == v_new {
            return up;
        }
        if v + tau * down == v_new {
            return down;
        }
    }
    d
}

/// The step (44) for inertia sum m + M = `inertia`, coefficient ρ̂ and φ_k.
#[inline]
pub fn implicit_step(v: f64, fu: f64, fv: f64, inertia: f64, rho: f64, phi_k: f64, h: f64) -> f64 {
    implicit_step_locked(v, fu, fv, inertia, rho, phi_k, h, None)
}

/// [`implicit_step`] with the sliding direction `dir` (±1) locked, if it is
/// ([`StopSwitch`]): where the step would stop the gear or turn it round, the sliding
/// branch of that direction, v* − h Φ(±1)/(m + M) (the continuous law, past zero too).
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn implicit_step_locked(v: f64, fu: f64, fv: f64, inertia: f64, rho: f64, phi_k: f64, h: f64, dir: Option<f64>) -> f64 {
    let v_star = v + h * (fu - fv) / inertia;
    let lo = h * big_phi(-1.0, phi_k, rho) / inertia;
    let hi = h * big_phi(1.0, phi_k, rho) / inertia;
    let v_new = v_star - v_star.clamp(lo, hi);
    match dir {
        Some(d) if v_new * d <= 0.0 => v_star - if d > 0.0 { hi } else { lo },
        _ => v_new,
    }
}

/// The 1-DOF gear admittance: state [q, v] (output angle and speed).
#[derive(Clone, Debug)]
pub struct Gear {
    pub model: GearModel,
    /// Input-side inertia referred to the output, m = κ² m̂ (> 0).
    pub m: f64,
    /// Output-side inertia M (> 0).
    pub big_m: f64,
    /// Output-side viscous friction b (≥ 0): adds b v to fv.
    pub damping: f64,
    pub q0: f64,
    pub v0: f64,
    /// Euler (paper (44)) or RK4 position rate, set by `prepare` (docs/explanation/gear.md).
    pub form: StageForm,
    /// Its stops located within the step (RK4).
    pub stop: StopSwitch,
}

impl Gear {
    pub fn new(model: GearModel, m: f64, big_m: f64) -> Gear {
        Gear { model, m, big_m, damping: 0.0, q0: 0.0, v0: 0.0, form: StageForm::default(), stop: StopSwitch::default() }
    }

    /// ρ̂ of (29).
    pub fn rho_hat(&self) -> f64 {
        rho_hat(self.model.gamma_u, self.model.gamma_v, self.m, self.big_m)
    }

    /// One step (44) from speed `v` under fu (input torque referred to the output) and fv
    /// (torque from the output shaft on its load, including the output viscosity).
    pub fn step(&self, v: f64, fu: f64, fv: f64, h: f64) -> GearStep {
        self.step_locked(v, fu, fv, h, None)
    }

    /// [`step`](Self::step) with the sliding direction `dir` locked, if it is
    /// ([`implicit_step_locked`]).
    pub fn step_locked(&self, v: f64, fu: f64, fv: f64, h: f64, dir: Option<f64>) -> GearStep {
        let (gu, gv) = (self.model.gamma_u, self.model.gamma_v);
        let rho = self.rho_hat();
        let inertia = self.m + self.big_m;
        let phi_k = phi(gu, gv, fu, fv, rho);
        let v_new = implicit_step_locked(v, fu, fv, inertia, rho, phi_k, h, dir);
        let acc = (v_new - v) / h;
        GearStep { v: v_new, lambda: gu * fu + gv * fv - (gu * self.m - gv * self.big_m) * acc }
    }

    /// (fu, fv) from the summed port forces and the speed v.
    #[inline]
    pub(crate) fn torques(&self, forces: &[Force], v: f64) -> (f64, f64) {
        (self.model.ratio * forces[0].value(), -forces[1].value() + self.damping * v)
    }
}

/// Mode of a step: 0 stuck, +1 forward driving (the input delivers the power), −1 back
/// driving (the output side delivers it).
pub fn mode(v_new: f64, fu: f64, fv: f64) -> f64 {
    if v_new == 0.0 {
        0.0
    } else if fu * v_new >= -fv * v_new {
        1.0
    } else {
        -1.0
    }
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 1, "rad", "output angle q (input angle is κ q)").of_state(),
    SignalInfo::new("v", 1, "rad/s", "output speed v (exactly 0.0 while stuck)").of_state(),
    SignalInfo::new("lambda", 1, "N·m", "internal force λ of (14b) over the next step"),
    SignalInfo::new("mode", 1, "", "0 stuck, +1 forward driving, −1 back driving (over the next step)"),
    SignalInfo::new("fu", 1, "N·m", "input torque referred to the output, κ × torque on `input`"),
    SignalInfo::new("fv", 1, "N·m", "torque from the output shaft on its load: −(torque on `output`) + b v"),
];

impl Admittance for Gear {
    /// State [q, v, s]: s is the stick indicator of model A (docs/explanation/gear.md): its rate is
    /// (σ − s)/τ with σ = 1 when a stage ends stuck, and `post_step` sets v = 0.0 when s > ½,
    /// so a stop is exact after one step under RK4 too (RK4 alone would only shrink v by 3 per step).
    fn layout(&self) -> Layout {
        Layout::new(3, vec![PortInfo::new("input", Domain::Scalar), PortInfo::new("output", Domain::Scalar)])
    }
    fn init(&self, x: &mut [f64]) {
        x[0] = self.q0;
        x[1] = self.v0;
        x[2] = if self.v0 == 0.0 { 1.0 } else { 0.0 };
    }
    fn post_step(&self, x: &mut [f64]) {
        if x[2] > 0.5 {
            x[2] = 1.0;
            x[1] = 0.0;
        } else {
            x[2] = 0.0;
        }
    }
    /// The stop or reversal ([`StopSwitch::switching`]).
    fn state_switches(&self) -> usize {
        1
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        // Without friction (γu = γv = 0) nothing jumps where the speed crosses zero.
        let frictionless = self.model.gamma_u == 0.0 && self.model.gamma_v == 0.0;
        g[0] = if frictionless { StopSwitch::NEVER } else { self.stop.switching(&x[1..2], x[2]) };
    }
    /// The breakaway: g = min(Φ(+1) − (fu − fv), (fu − fv) − Φ(−1)), positive while the
    /// static set (45) holds the torques, while the gear held where the (sub-)step started
    /// (a constant negative value while it slides: [`StopSwitch::held_at_start`]); and φ of
    /// (32), whose sign changes the friction's slope |λs| (34) (a kink of the rates: forward
    /// and back driving), at every state (its zeros while held change nothing and are
    /// located all the same, at the cost of a search).
    fn force_switches(&self) -> usize {
        2
    }
    fn force_switchings(&self, x: &[f64], forces: &[Force], g: &mut [f64]) {
        let (fu, fv) = self.torques(forces, x[1]);
        let rho = self.rho_hat();
        let phi_k = phi(self.model.gamma_u, self.model.gamma_v, fu, fv, rho);
        let d = fu - fv;
        // The breakaway while the gear held where the (sub-)step started.
        g[0] = self.stop.breakaway(&x[1..2], x[2], || (big_phi(1.0, phi_k, rho) - d).min(d - big_phi(-1.0, phi_k, rho)));
        g[1] = phi_k;
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        self.stop.lock(x.map(|x| (&x[1..2], x[2])));
    }
    fn on_switch(&self, _which: usize, x: &mut [f64]) {
        let (v, s) = x[1..3].split_at_mut(1);
        self.stop.on_switch(v, &mut s[0]);
    }
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        if port == 0 {
            Motion::scalar(self.model.ratio * x[0], self.model.ratio * x[1])
        } else {
            Motion::scalar(x[0], x[1])
        }
    }
    /// (44) with h = τ: q̇ = v_new, v̇ = (v_new − v)/τ.
    fn derivative(&self, x: &[f64], forces: &[Force], _t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let v = x[1];
        let (fu, fv) = self.torques(forces, v);
        if !(fu.is_finite() && fv.is_finite()) {
            return Err(Fault::new(format!("non-finite gear torques fu = {fu}, fv = {fv}")));
        }
        self.write_rates(x, fu, fv, tau, dx);
        Ok(())
    }
    // The output of a backdrivable gear, the input of a forward-drivable one: the coupled
    // stage mode by mode of (44) (gear/stage.rs).
    crate::modes::modal_stage_methods!();
    /// The smallest inertia over the modes of (44) where the port takes stage laws.
    fn coupling_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        if self.stage_port(port) {
            Some(self.smallest_port_inertia(port))
        } else {
            self.port_inertia(x, port)
        }
    }
    fn prepare(&self, method: Method, _step: f64) -> std::result::Result<(), String> {
        self.form.set(method);
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _elem: usize, p: &Probe) -> f64 {
        let v = p.state[1];
        let (fu, fv) = self.torques(p.forces, v);
        match which {
            0 => p.state[0],
            1 => v,
            2 => {
                let (gu, gv) = (self.model.gamma_u, self.model.gamma_v);
                gu * fu + gv * fv - (gu * self.m - gv * self.big_m) * p.rate[1]
            }
            3 => mode(self.step(v, fu, fv, p.tau).v, fu, fv),
            4 => fu,
            5 => fv,
            _ => f64::NAN,
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        Some(0.5 * (self.m + self.big_m) * x[1] * x[1])
    }
    /// Moving: (44) moves q with v_new under Euler, with v under RK4.
    fn implicit_position(&self, method: Method) -> bool {
        method == Method::Euler
    }
    fn diagnose(&self, _x: &[f64], _step: f64) -> Vec<Diagnostic> {
        self.model.diagnose(self.m, self.big_m)
    }
    fn port_inertia(&self, _x: &[f64], port: usize) -> Option<f64> {
        let k = if port == 0 { self.model.ratio } else { 1.0 };
        Some((self.m + self.big_m) / (k * k))
    }
}

fn angle(p: &mut Params, key: &str, hi: f64, inclusive_hi: bool) -> Result<f64> {
    let a = p.f64(key)?;
    let ok = a > 0.0 && if inclusive_hi { a <= hi } else { a < hi };
    if ok {
        Ok(a)
    } else {
        let b = if inclusive_hi { "]" } else { ")" };
        Err(p.err(key, format!("must be in (0, {hi:.6}{b} rad, got {a}")))
    }
}

/// Read the asymmetry coefficients and the ratio of one gear: exactly one of
/// `gamma_u` + `gamma_v`, `efficiency`, `leadscrew`, `worm`, `spur`; optional `ratio`
/// (must agree with the geometry when both are given).
pub fn read_model(p: &mut Params) -> Result<GearModel> {
    let direct = p.has("gamma_u") || p.has("gamma_v");
    let mut found: Vec<(&str, GearModel)> = Vec::new();
    if direct {
        let gu = p.f64("gamma_u")?;
        let gv = p.f64("gamma_v")?;
        found.push(("gamma_u/gamma_v", GearModel::direct(gu, gv)));
    }
    if let Some(mut e) = p.object("efficiency")? {
        let f = e.f64("forward")?;
        let b = e.f64("backward")?;
        for (k, x) in [("forward", f), ("backward", b)] {
            if !(x > 0.0 && x <= 1.0) {
                return Err(e.err(k, format!("efficiency must be in (0, 1], got {x}")));
            }
        }
        let model = GearModel::from_efficiencies(f, b).map_err(|msg| Error::invalid(e.path(), msg))?;
        e.finish()?;
        found.push(("efficiency", model));
    }
    if let Some(mut g) = p.object("leadscrew")? {
        let th = angle(&mut g, "lead_angle", std::f64::consts::FRAC_PI_2, false)?;
        let mu = g.nonneg("mu")?;
        let r = g.positive("radius")?;
        let ta = g.nonneg_or("thread_angle", 0.0)?;
        if ta >= std::f64::consts::FRAC_PI_2 {
            return Err(g.err("thread_angle", format!("must be below π/2 rad, got {ta}")));
        }
        g.finish()?;
        found.push(("leadscrew", GearModel::leadscrew(th, mu, r, ta)));
    }
    if let Some(mut g) = p.object("worm")? {
        let la = angle(&mut g, "lead_angle", std::f64::consts::FRAC_PI_4, true)?;
        let pa = angle(&mut g, "pressure_angle", std::f64::consts::FRAC_PI_2, false)?;
        let mu = g.nonneg("mu")?;
        let w = g.positive("worm_radius")?;
        let r = g.positive("gear_radius")?;
        g.finish()?;
        found.push(("worm", GearModel::worm(la, pa, mu, w, r)));
    }
    if let Some(mut g) = p.object("spur")? {
        let pa = angle(&mut g, "pressure_angle", std::f64::consts::FRAC_PI_2, false)?;
        let mu = g.nonneg("mu")?;
        let ru = g.positive("input_radius")?;
        let rv = g.positive("output_radius")?;
        let xi = g.f64("contact")?;
        let (lo, hi) = (-ru * pa.sin(), rv * pa.sin());
        if !(xi > lo && xi < hi) {
            return Err(g.err(
                "contact",
                format!("the contact point must lie on the line of action between the base-circle tangency points ({lo:.6}, {hi:.6}) m, got {xi}"),
            ));
        }
        g.finish()?;
        found.push(("spur", GearModel::spur(pa, mu, ru, rv, xi)));
    }
    if found.len() != 1 {
        let names: Vec<&str> = found.iter().map(|f| f.0).collect();
        return Err(Error::invalid(
            p.path(),
            format!(
                "give exactly one of gamma_u + gamma_v, efficiency, leadscrew, worm, spur (got {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ),
        ));
    }
    let (kind, mut model) = found.remove(0);
    for (k, g) in [("gamma_u", model.gamma_u), ("gamma_v", model.gamma_v)] {
        if !g.is_finite() {
            return Err(Error::invalid(p.path(), format!("{k} is not finite ({g})")));
        }
    }
    if let Some(r) = p.get("ratio") {
        let r = match r.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => x,
            _ => return Err(p.err("ratio", format!("must be a number > 0, got {r}"))),
        };
        let derived =
            matches!(model.geometry, Geometry::Leadscrew { .. } | Geometry::Worm { .. } | Geometry::Spur { .. });
        if derived && (r - model.ratio).abs() > 1e-9 * model.ratio {
            return Err(p.err(
                "ratio",
                format!("inconsistent geometry: ratio {r} given but the {kind} geometry gives κ = {}", model.ratio),
            ));
        }
        model.ratio = r;
    }
    if !(model.ratio.is_finite() && model.ratio > 0.0) {
        return Err(Error::invalid(
            p.path(),
            format!("the {kind} geometry gives a ratio κ = {} that is not > 0", model.ratio),
        ));
    }
    Ok(model)
}

/// Read the input-side inertia: `m` (referred to the output) or `input_inertia` m̂
/// (at the motor, m = κ² m̂).
pub fn read_input_inertia(p: &mut Params, ratio: f64) -> Result<f64> {
    match (p.has("m"), p.has("input_inertia")) {
        (true, true) => {
            Err(p.err("input_inertia", "give either m (referred to the output) or input_inertia, not both"))
        }
        (false, false) => Err(p.err("m", "missing required parameter (or give input_inertia)")),
        (true, false) => p.positive("m"),
        (false, true) => Ok(p.positive("input_inertia")? * ratio * ratio),
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let model = read_model(p)?;
    let m = read_input_inertia(p, model.ratio)?;
    let big_m = p.positive("M")?;
    let damping = p.nonneg_or("damping", 0.0)?;
    let (mut q0, mut v0) = (0.0, 0.0);
    if let Some(mut init) = p.object("init")? {
        q0 = init.f64_or("q", 0.0)?;
        v0 = init.f64_or("v", 0.0)?;
        init.finish()?;
    }
    Ok(Built::Admittance(Box::new(Gear { model, m, big_m, damping, q0, v0, form: StageForm::default(), stop: StopSwitch::default() })))
}

/// The keys [`read_model`] and [`read_input_inertia`] read, each name after `$prefix`
/// ("" for `gear`, "gears[]." for `geared_robot`): the coefficients from exactly one of
/// γu/γv, efficiencies (27), a leadscrew, a worm gear (17) or a spur gear (21), the ratio
/// and the input-side inertia. An array of `ParamDoc`.
macro_rules! gear_model_params {
    ($prefix:literal) => {{
        use stiction_framework::system::ParamDoc as P;
        [
            P { name: concat!($prefix, "gamma_u"), unit: "", default: None, doc: "asymmetry coefficient γu (with gamma_v); give exactly one of gamma_u + gamma_v, efficiency, leadscrew, worm, spur" },
            P { name: concat!($prefix, "gamma_v"), unit: "", default: None, doc: "asymmetry coefficient γv (with gamma_u)" },
            P { name: concat!($prefix, "efficiency"), unit: "", default: None, doc: "or {forward, backward} efficiencies (27)" },
            P { name: concat!($prefix, "efficiency.forward"), unit: "", default: None, doc: "forward efficiency ηf in (0, 1]" },
            P { name: concat!($prefix, "efficiency.backward"), unit: "", default: None, doc: "backward efficiency ηb in (0, 1]" },
            P {
                name: concat!($prefix, "leadscrew"),
                unit: "",
                default: None,
                doc: "or a leadscrew {lead_angle, mu, radius, thread_angle}: γu = μ' tan θ, γv = μ'/tan θ, κ = 1/(r tan θ)",
            },
            P { name: concat!($prefix, "leadscrew.lead_angle"), unit: "rad", default: None, doc: "lead angle θ in (0, π/2)" },
            P { name: concat!($prefix, "leadscrew.mu"), unit: "", default: None, doc: "thread friction coefficient μ, ≥ 0" },
            P { name: concat!($prefix, "leadscrew.radius"), unit: "m", default: None, doc: "mean thread radius r, > 0" },
            P {
                name: concat!($prefix, "leadscrew.thread_angle"),
                unit: "rad",
                default: Some("0"),
                doc: "thread half-angle (μ' = μ/cos), below π/2",
            },
            P { name: concat!($prefix, "worm"), unit: "", default: None, doc: "or a worm gear (17) {lead_angle, pressure_angle, mu, worm_radius, gear_radius}" },
            P { name: concat!($prefix, "worm.lead_angle"), unit: "rad", default: None, doc: "lead angle in (0, π/4]" },
            P { name: concat!($prefix, "worm.pressure_angle"), unit: "rad", default: None, doc: "pressure angle in (0, π/2)" },
            P { name: concat!($prefix, "worm.mu"), unit: "", default: None, doc: "friction coefficient, ≥ 0" },
            P { name: concat!($prefix, "worm.worm_radius"), unit: "m", default: None, doc: "worm pitch radius, > 0" },
            P { name: concat!($prefix, "worm.gear_radius"), unit: "m", default: None, doc: "wheel pitch radius, > 0" },
            P {
                name: concat!($prefix, "spur"),
                unit: "",
                default: None,
                doc: "or a spur gear at one contact point (21) {pressure_angle, mu, input_radius, output_radius, contact}",
            },
            P { name: concat!($prefix, "spur.pressure_angle"), unit: "rad", default: None, doc: "pressure angle α in (0, π/2)" },
            P { name: concat!($prefix, "spur.mu"), unit: "", default: None, doc: "friction coefficient, ≥ 0" },
            P { name: concat!($prefix, "spur.input_radius"), unit: "m", default: None, doc: "input (pinion) base radius, > 0" },
            P { name: concat!($prefix, "spur.output_radius"), unit: "m", default: None, doc: "output (wheel) base radius, > 0" },
            P {
                name: concat!($prefix, "spur.contact"),
                unit: "m",
                default: None,
                doc: "contact point ξ along the line of action, between the base-circle tangency points",
            },
            P {
                name: concat!($prefix, "ratio"),
                unit: "",
                default: Some("1 or from the geometry"),
                doc: "κ = input speed / output speed, > 0; must agree with a geometry",
            },
            P {
                name: concat!($prefix, "m"),
                unit: "kg·m²",
                default: None,
                doc: "input-side (motor) inertia referred to the output, > 0 (or input_inertia)",
            },
            P {
                name: concat!($prefix, "input_inertia"),
                unit: "kg·m²",
                default: None,
                doc: "or the input-side inertia m̂ at the motor: m = κ² m̂",
            },
        ]
    }};
}
pub(crate) use gear_model_params;

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "gear", "M": 1.0, "gamma_u": 0.1, "gamma_v": 0.2, "ratio": 10.0, "m": 0.5}"#,
    r#"{"type": "gear", "M": 1.0, "efficiency": {"forward": 0.8, "backward": 0.6}, "input_inertia": 0.01, "ratio": 5.0}"#,
    r#"{"type": "gear", "M": 1.0, "leadscrew": {"lead_angle": 0.1, "mu": 0.2, "radius": 0.01, "thread_angle": 0.26}, "m": 0.5}"#,
    r#"{"type": "gear", "M": 1.0, "worm": {"lead_angle": 0.2, "pressure_angle": 0.35, "mu": 0.1, "worm_radius": 0.01, "gear_radius": 0.05}, "m": 0.5}"#,
    r#"{"type": "gear", "M": 1.0, "spur": {"pressure_angle": 0.35, "mu": 0.1, "input_radius": 0.05, "output_radius": 0.1, "contact": 0.01}, "m": 0.5}"#,
    r#"{"type": "gear", "M": 1.0, "damping": 0.1, "init": {"q": 0.1, "v": 0.2}, "gamma_u": 0.1, "gamma_v": 0.2, "m": 0.5}"#,
];

/// Register `gear`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    r.register(ComponentType {
        name: "gear",
        kind: Kind::Admittance,
        summary: "1-DOF transmission with asymmetric load-dependent friction: DAI (14), implicit-Euler step (44), exact static friction",
        params: table(
            &ALL,
            &[
                &gear_model_params!(""),
                &[
                    ParamDoc { name: "M", unit: "kg·m²", default: None, doc: "output-side inertia (including a rigidly attached load), > 0" },
                    ParamDoc { name: "damping", unit: "N·m·s/rad", default: Some("0"), doc: "output-side viscous friction b, counted in fv" },
                    ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial output state {\"q\", \"v\"}" },
                    ParamDoc { name: "init.q", unit: "rad", default: Some("0"), doc: "initial output angle" },
                    ParamDoc { name: "init.v", unit: "rad/s", default: Some("0"), doc: "initial output speed" },
                ],
            ],
        ),
        ports: &[
            PortDoc { name: "input", domain: "scalar", doc: "motor shaft: angle κ q, speed κ v; torque f̂ gives fu = κ f̂" },
            PortDoc { name: "output", domain: "scalar", doc: "output shaft: q, v; the torque on it is −fv" },
        ],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_util::Lcg;

    /// Spur gear statics from the free bodies: at rest, the contact force (λn, λt) solves
    /// the two moment balances and static friction needs |λt| ≤ μ|λn|. This must agree with
    /// (23) for the coefficients (21).
    #[test]
    fn spur_statics_match_free_body_equilibrium() {
        let mut rng = Lcg(7);
        let mut agree = 0;
        for _ in 0..20000 {
            let alpha = rng.next(0.2, 0.5);
            let mu = rng.next(0.02, 0.4);
            let (ru, rv) = (rng.next(0.01, 0.1), rng.next(0.01, 0.2));
            let xi = rng.next(-ru * alpha.sin() * 0.99, rv * alpha.sin() * 0.99);
            let (fu_hat, fv) = (rng.next(-10.0, 10.0), rng.next(-10.0, 10.0));
            let g = GearModel::spur(alpha, mu, ru, rv, xi);
            let fu = g.ratio * fu_hat;
            // f̂u = λn Ru cos α − λt (ξ + Ru sin α);  fv = λn Rv cos α + λt (ξ − Rv sin α)
            let (a11, a12, a21, a22) =
                (ru * alpha.cos(), -(xi + ru * alpha.sin()), rv * alpha.cos(), xi - rv * alpha.sin());
            let det = a11 * a22 - a12 * a21;
            let ln = (fu_hat * a22 - a12 * fv) / det;
            let lt = (a11 * fv - a21 * fu_hat) / det;
            let free_body = lt.abs() <= mu * ln.abs();
            let margin = (lt.abs() - mu * ln.abs()).abs() / (1.0 + ln.abs());
            if margin < 1e-9 {
                continue;
            }
            assert_eq!(
                free_body,
                efficiency::holds_statically(g.gamma_u, g.gamma_v, fu, fv),
                "α {alpha} μ {mu} ξ {xi}"
            );
            agree += 1;
        }
        assert!(agree > 19000);
        // No sliding at the pitch point: lossless.
        let g = GearModel::spur(0.35, 0.1, 0.05, 0.1, 0.0);
        let (ef, eb) = efficiencies(g.gamma_u, g.gamma_v);
        assert!((ef - 1.0).abs() < 1e-12 && (eb - 1.0).abs() < 1e-12);
    }

    #[test]
    fn exact_rate_lands_on_zero() {
        let mut rng = Lcg(3);
        let mut exact = 0;
        for _ in 0..10000 {
            let v = rng.next(-2.0, 2.0);
            let d = exact_rate(v, 0.0, 1e-3);
            if v + 1e-3 * d == 0.0 {
                exact += 1;
            }
        }
        // About 97.8 % land exactly without the search, 98 % with it; the rest reach 0.0 a step later.
        assert!(exact > 9500, "{exact}");
    }

    #[test]
    fn leadscrew_and_worm_formulas() {
        let g = GearModel::leadscrew(0.1, 0.2, 0.01, 0.0);
        assert!((g.gamma_u - 0.2 * 0.1f64.tan()).abs() < 1e-15);
        assert!((g.gamma_v - 0.2 / 0.1f64.tan()).abs() < 1e-15);
        assert!((g.ratio - 1.0 / (0.01 * 0.1f64.tan())).abs() < 1e-9);
        let w = GearModel::worm(0.2, 0.35, 0.1, 0.01, 0.05);
        assert!((w.gamma_u * w.gamma_v - (0.1 / 0.35f64.cos()).powi(2)).abs() < 1e-15);
    }
}
