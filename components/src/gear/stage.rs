//! The gear's stage with stiff coupled elements on its ports (framework/src/stepper/coupling.rs):
//! the implicit step (44) taken with the elements' forces at the stage's new speed.
//!
//! Over a stage the step (44) maps the port torques to the new speed v_new, and that map is
//! set-valued in the sense that matters here: v_new = 0 over the whole static set (45). It is
//! affine within a *mode*: stuck, or sliding in direction s with φ of (32) of sign σ, where
//! |λs| = σ φ/(1 − σ ρ̂ s) and
//!
//! ```text
//!   (m + M) v̇ = (fu − fv) − s σ φ/(1 − σ ρ̂ s),      v̇ = (v_new − v)/τ.
//! ```
//!
//! With u = s σ, a torque F on the output (fv = −F + b v) changes v̇ by (1 + u γv)/((1 − u ρ̂)(m + M))
//! per unit, one on the input (fu = κ F) by κ (1 − u γu)/((1 − u ρ̂)(m + M)): positive in every
//! mode exactly where the gear is backdrivable (|γv| < 1), resp. forward-drivable (|γu| < 1),
//! for a well-posed gear (|ρ̂| < 1). There each port is, within a mode, a point of mobility
//! W > 0 (a mass 1/W), and a stuck gear a point that does not move (W = 0): the group solve of
//! framework/src/stage_law/group.rs applies, mode by mode, and the mode is the one the solution's
//! torques select ([`Gear::mode`]). The rates are then the step (44) itself at the torques of
//! the solution, so a gear held in its static set keeps v = 0.0 exactly. A port whose
//! response is not increasing (the output of a self-locking gear, back-driven) takes no
//! stage laws: an element there stays explicit and `stiction check` says so.

use super::efficiency::{phi, Mode, MODES};
use super::transmission::{exact_rate, Gear};
use nalgebra::{Matrix3, Vector3};
use stiction_framework::component::{PortLaws, StageBody};
use stiction_framework::port::Force;
use crate::modes::consistent_mode;
use stiction_framework::stage_law::{group_rates, CrossMobility, GroupLaw};

/// The modes of the stage, those sliding in direction `dir` where it is locked.
fn modes(dir: Option<f64>) -> impl Iterator<Item = Mode> {
    MODES.into_iter().filter(move |m| match (m, dir) {
        (Mode::Stuck, Some(_)) => false,
        (Mode::Slip { s, .. }, Some(d)) => f64::from(*s) == d,
        _ => true,
    })
}

impl Gear {
    /// Whether a stiff element on `port` can be held implicitly with the gear (module doc):
    /// well-posed, and the port's response to its torque increasing in every mode.
    pub(crate) fn stage_port(&self, port: usize) -> bool {
        let gamma = if port == 0 { self.model.gamma_u } else { self.model.gamma_v };
        self.rho_hat().abs() < 1.0 && gamma.abs() < 1.0
    }

    /// The mode that (44) takes from speed `v` under torques (fu, fv) over a stage τ, with
    /// the sliding direction `dir` locked where the events locked it.
    pub(crate) fn mode(&self, v: f64, fu: f64, fv: f64, tau: f64, dir: Option<f64>) -> Mode {
        let v_new = self.step_locked(v, fu, fv, tau, dir).v;
        if v_new == 0.0 && dir.is_none() {
            return Mode::Stuck;
        }
        let s = if dir.unwrap_or(v_new) > 0.0 { 1 } else { -1 };
        let rho = self.rho_hat();
        let sigma = if phi(self.model.gamma_u, self.model.gamma_v, fu, fv, rho) >= 0.0 { 1 } else { -1 };
        Mode::Slip { s, sigma }
    }

    /// In `mode`, at torques (fu, fv): the output's v̇ and its change per unit torque on the
    /// input and on the output (module doc); stuck: the v̇ that stops it, and none.
    fn mode_rates(&self, mode: Mode, v: f64, fu: f64, fv: f64, tau: f64) -> (f64, [f64; 2]) {
        let Mode::Slip { s, sigma } = mode else { return (-v / tau, [0.0; 2]) };
        let (s, sigma) = (f64::from(s), f64::from(sigma));
        let (gu, gv, rho) = (self.model.gamma_u, self.model.gamma_v, self.rho_hat());
        let (u, inertia) = (s * sigma, self.m + self.big_m);
        let q = 1.0 - sigma * rho * s;
        let acc = ((fu - fv) - u * phi(gu, gv, fu, fv, rho) / q) / inertia;
        let per = [self.model.ratio * (1.0 - u * gu) / (q * inertia), (1.0 + u * gv) / (q * inertia)];
        (acc, per)
    }

    /// The port's scale in speed: the input turns κ times the output.
    fn port_scale(&self, port: usize) -> f64 {
        if port == 0 {
            self.model.ratio
        } else {
            1.0
        }
    }

    /// The torques (fu, fv) of the port forces with `change` added to the torque on each port.
    fn stage_torques(&self, forces: &[Force], v: f64, change: [f64; 2]) -> (f64, f64) {
        let (fu, fv) = self.torques(forces, v);
        (fu + self.model.ratio * change[0], fv - change[1])
    }

    /// `port` as a point of the group in `mode` at the explicit torques (fu, fv): its
    /// acceleration along x and its mobility W = κ_p · (∂v̇/∂F_p) (0 stuck), scaled by its
    /// smallest inertia where it does not move.
    pub(crate) fn mode_body(&self, mode: Mode, x: &[f64], fu: f64, fv: f64, tau: f64, port: usize) -> StageBody {
        let (acc, per) = self.mode_rates(mode, x[1], fu, fv, tau);
        let k = self.port_scale(port);
        let w = k * per[port];
        let mass = if w > 0.0 { 1.0 / w } else { (self.m + self.big_m) / (k * k) };
        let at = Vector3::new(k * x[0], 0.0, 0.0);
        StageBody { mobility: Some(Matrix3::from_diagonal(&Vector3::new(w, 0.0, 0.0))), ..StageBody::point(mass, at, Vector3::new(k * acc, 0.0, 0.0)) }
    }

    /// The rates of (44) at torques (fu, fv), as `derivative` writes them.
    pub(crate) fn write_rates(&self, x: &[f64], fu: f64, fv: f64, tau: f64, dx: &mut [f64]) {
        let v = x[1];
        let s = self.step_locked(v, fu, fv, tau, self.stop.direction().map(|d| d.x));
        // (44) under Euler and while stuck: q(k) = q(k−1) + h v(k); else the stage velocity (docs/explanation/gear.md).
        dx[0] = self.form.position_rate(v, s.v, s.v == 0.0);
        dx[1] = exact_rate(v, s.v, tau);
        dx[2] = (if s.v == 0.0 { 1.0 } else { 0.0 } - x[2]) / tau;
    }

    /// `Admittance::stage_body`: a port that takes stage laws as a point of a group, stuck
    /// (the body of the stage's mode replaces it, `stage_mode_point`).
    pub(crate) fn stage_point(&self, x: &[f64], port: usize) -> Option<StageBody> {
        self.stage_port(port).then(|| self.mode_body(Mode::Stuck, x, 0.0, 0.0, 1.0, port))
    }

    /// `Admittance::stage_mode`: the mode (its index in [`MODES`]) that the changes `changes`
    /// of the coupled laws' torques on the ports select; `None` where neither port takes
    /// stage laws.
    pub(crate) fn stage_mode_index(&self, x: &[f64], forces: &[Force], tau: f64, changes: &[Vector3<f64>]) -> Option<usize> {
        if !(self.stage_port(0) || self.stage_port(1)) {
            return None;
        }
        let change = |p: usize| changes.get(p).map_or(0.0, |c| c.x);
        let (fu, fv) = self.stage_torques(forces, x[1], [change(0), change(1)]);
        let mode = self.mode(x[1], fu, fv, tau, self.stop.direction().map(|d| d.x));
        MODES.iter().position(|m| *m == mode)
    }

    /// `Admittance::stage_modes`: the indices of the modes (of the locked direction's where
    /// the events locked it).
    pub(crate) fn stage_mode_indices(&self) -> Vec<usize> {
        let dir = self.stop.direction().map(|d| d.x);
        (0..MODES.len()).filter(|&i| modes(dir).any(|m| m == MODES[i])).collect()
    }

    /// `Admittance::stage_mode_body`: `port` in mode `MODES[mode]` at the explicit torques.
    pub(crate) fn stage_mode_point(&self, x: &[f64], forces: &[Force], tau: f64, mode: usize, port: usize) -> Option<StageBody> {
        let mode = *MODES.get(mode)?;
        let (fu0, fv0) = self.torques(forces, x[1]);
        self.stage_port(port).then(|| self.mode_body(mode, x, fu0, fv0, tau, port))
    }

    /// `Admittance::stage_mode_mobility`: in mode `MODES[mode]`, `port`'s acceleration (in
    /// its own scale) per unit torque on `from`.
    pub(crate) fn stage_cross(&self, x: &[f64], forces: &[Force], tau: f64, mode: usize, port: usize, from: usize) -> Option<Matrix3<f64>> {
        let mode = *MODES.get(mode)?;
        if !(self.stage_port(port) && self.stage_port(from)) {
            return None;
        }
        let (fu0, fv0) = self.torques(forces, x[1]);
        let (_, per) = self.mode_rates(mode, x[1], fu0, fv0, tau);
        Some(self.cross(per, port, from))
    }

    /// `port`'s acceleration per unit torque on `from`, of a mode's `per` (`mode_rates`).
    fn cross(&self, per: [f64; 2], port: usize, from: usize) -> Matrix3<f64> {
        Matrix3::from_diagonal(&Vector3::new(self.port_scale(port) * per[from], 0.0, 0.0))
    }

    /// `Admittance::implicit_rate`: the stage with the coupled laws on either port or both
    /// (each a point of the gear, joined by the mobility between them), solved in the mode
    /// the explicit torques select and again in the one its solution selects until they
    /// agree; then the rates of (44) at the solution's torques.
    pub(crate) fn stage_rates(&self, x: &[f64], forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        let v = x[1];
        let dir = self.stop.direction().map(|d| d.x);
        let (fu0, fv0) = self.torques(forces, v);
        let ports: Vec<usize> = (0..2).filter(|&p| !laws.of(p).is_empty() && self.stage_port(p)).collect();
        if ports.is_empty() {
            return;
        }
        let mut group: Vec<GroupLaw<'_>> = Vec::new();
        for (i, &p) in ports.iter().enumerate() {
            group.extend(laws.of(p).iter().map(|law| GroupLaw { law, body: i, partner: None }));
        }
        // The laws' torque change on each port at the solution in `mode`.
        let solve = |mode: Mode| {
            let mut bodies = [StageBody::point(1.0, Vector3::zeros(), Vector3::zeros()); 2];
            for (b, &p) in bodies.iter_mut().zip(&ports) {
                *b = self.mode_body(mode, x, fu0, fv0, tau, p);
            }
            // Two ports: each one's acceleration per unit torque on the other.
            let (_, per) = self.mode_rates(mode, v, fu0, fv0, tau);
            let w = |port: usize, from: usize| self.cross(per, port, from);
            let cross: Vec<CrossMobility> = match ports[..] {
                [a, b] => vec![CrossMobility { body: 0, from: 1, w: w(a, b) }, CrossMobility { body: 1, from: 0, w: w(b, a) }],
                _ => Vec::new(),
            };
            group_rates(&mut bodies[..ports.len()], &group, &cross, tau);
            let mut change = [0.0; 2];
            for (b, &p) in bodies.iter().zip(&ports) {
                change[p] = b.force.x;
            }
            change
        };
        let select = |change: &[f64; 2]| {
            let (fu, fv) = self.stage_torques(forces, v, *change);
            self.mode(v, fu, fv, tau, dir)
        };
        let change = consistent_mode(self.mode(v, fu0, fv0, tau, dir), modes(dir), solve, select);
        let (fu, fv) = self.stage_torques(forces, v, change);
        self.write_rates(x, fu, fv, tau, dx);
    }

    /// `Admittance::set_stage_body`: the rates of (44) at the torques with the group's
    /// changes on the ports `ports` (`bodies`, one each).
    pub(crate) fn set_stage(&self, x: &[f64], forces: &[Force], tau: f64, ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let mut delta = [0.0; 2];
        for (&port, body) in ports.iter().zip(bodies) {
            if let Some(d) = delta.get_mut(port) {
                *d = body.force.x;
            }
        }
        let (fu, fv) = self.stage_torques(forces, x[1], delta);
        self.write_rates(x, fu, fv, tau, dx);
    }

    /// The smallest inertia `port` shows over the modes (`Admittance::coupling_inertia`):
    /// 1/max W ≥ (m + M)(1 − |ρ̂|)/(κ_p² (1 + |γ|)).
    pub(crate) fn smallest_port_inertia(&self, port: usize) -> f64 {
        let gamma = if port == 0 { self.model.gamma_u } else { self.model.gamma_v };
        let k = self.port_scale(port);
        (self.m + self.big_m) * (1.0 - self.rho_hat().abs()) / (k * k * (1.0 + gamma.abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gear::GearModel;
    use crate::test_util::Lcg;
    use stiction_framework::component::{Curve, StageLaw};

    fn gear(gu: f64, gv: f64, ratio: f64) -> Gear {
        let mut g = Gear::new(GearModel::direct(gu, gv), 0.7, 1.3);
        g.model.ratio = ratio;
        g.damping = 0.4;
        g
    }

    /// Within a sliding mode (44)'s new speed is affine in each port torque with the slopes
    /// of the module doc: against differences of `step` at torques that keep the mode.
    #[test]
    fn a_modes_response_is_affine_with_the_mobilities_of_the_module_doc() {
        let mut r = Lcg(7);
        let mut checked = 0;
        for _ in 0..2000 {
            let g = gear(r.next(-0.9, 0.9), r.next(-0.9, 0.9), r.next(0.5, 3.0));
            let (v, tau) = (r.next(-2.0, 2.0), r.next(1e-4, 1e-2));
            let (fu, fv) = (r.next(-30.0, 30.0), r.next(-30.0, 30.0));
            let mode = g.mode(v, fu, fv, tau, None);
            let Mode::Slip { .. } = mode else { continue };
            let (acc, per) = g.mode_rates(mode, v, fu, fv, tau);
            let v_new = g.step(v, fu, fv, tau).v;
            assert!((v + tau * acc - v_new).abs() <= 1e-12 * (1.0 + v_new.abs()), "v̇ of the mode");
            let eps = 1e-4;
            for (port, (du, dv)) in [(0, (g.model.ratio * eps, 0.0)), (1, (0.0, -eps))] {
                if g.mode(v, fu + du, fv + dv, tau, None) != mode {
                    continue;
                }
                let slope = (g.step(v, fu + du, fv + dv, tau).v - v_new) / (tau * eps);
                assert!((slope - per[port]).abs() <= 1e-6 * (1.0 + per[port].abs()), "port {port}: {slope} against {}", per[port]);
                checked += 1;
            }
            // Positive exactly where the port takes stage laws.
            for (port, w) in per.iter().enumerate() {
                if g.stage_port(port) {
                    assert!(*w > 0.0);
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// A 1-D Coulomb law −gsat(F, w + c Δ) at Δ (the port's speed change).
    fn law(w: f64, c: f64, level: f64) -> StageLaw {
        StageLaw::Friction { w: Vector3::new(w, 0.0, 0.0), c, level, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat }
    }

    fn force_at(l: &StageLaw, delta: f64) -> f64 {
        let StageLaw::Friction { w, c, level, .. } = *l else { unreachable!() };
        -(w.x + c * delta).clamp(-level, level)
    }

    /// The stage with coupled laws on one port or both is (44) at the laws' torques at its own
    /// new speed: v_new = step(v, fu + κ Σ f_in(κ Δ), fv − Σ f_out(Δ)), Δ = v_new − v; a gear
    /// held in its static set returns v_new = 0.0 exactly.
    #[test]
    fn the_stage_with_coupled_laws_is_the_implicit_step_at_their_torques() {
        let mut r = Lcg(11);
        let (mut stuck, mut sliding) = (0, 0);
        for case in 0..3000 {
            let g = gear(r.next(-0.9, 0.9), r.next(-0.9, 0.9), r.next(0.5, 3.0));
            let v = if case % 3 == 0 { 0.0 } else { r.next(-1.0, 1.0) };
            let x = [0.1, v, if v == 0.0 { 1.0 } else { 0.0 }];
            let tau = r.next(1e-4, 1e-3);
            let forces = [Force::scalar(r.next(-10.0, 10.0)), Force::scalar(r.next(-10.0, 10.0))];
            let c = r.next(1e2, 1e5);
            let on_in = case % 2 == 0;
            let laws_in: Vec<StageLaw> = if on_in { vec![law(r.next(-5.0, 5.0), c, r.next(0.5, 8.0))] } else { vec![] };
            let laws_out = vec![law(r.next(-5.0, 5.0), c * r.next(0.5, 2.0), r.next(0.5, 8.0))];
            let all: Vec<StageLaw> = laws_in.iter().chain(&laws_out).cloned().collect();
            let starts = [0u32, laws_in.len() as u32, all.len() as u32];
            let mut dx = [0.0; 3];
            g.stage_rates(&x, &forces, &PortLaws::new(&all, &starts), tau, &mut dx);
            let v_new = v + tau * dx[1];
            let delta = v_new - v;
            let (fu, fv) = g.torques(&forces, v);
            let f_in: f64 = laws_in.iter().map(|l| force_at(l, g.model.ratio * delta) - force_at(l, 0.0)).sum();
            let f_out: f64 = laws_out.iter().map(|l| force_at(l, delta) - force_at(l, 0.0)).sum();
            let step = g.step(v, fu + g.model.ratio * f_in, fv - f_out, tau).v;
            assert!((step - v_new).abs() <= 1e-9 * (1.0 + v.abs()), "case {case}: {v_new} against {step}");
            if step == 0.0 {
                assert_eq!(v + tau * dx[1], 0.0, "case {case}: held, not exactly");
                stuck += 1;
            } else {
                sliding += 1;
            }
        }
        assert!(stuck > 150 && sliding > 300, "{stuck} held, {sliding} sliding");
    }
}
