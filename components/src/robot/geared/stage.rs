//! The geared robot's stage with stiff coupled elements on its ports (a brake on a joint, a
//! grip at the tip holding a payload; framework/src/stepper/coupling.rs): the step (69) taken
//! with the elements' forces at the stage's new speeds.
//!
//! Over a stage (69) maps the port forces to the new joint speeds through axproj, whose
//! solution is that of one *pattern* of joint modes (each joint stuck, or slipping in
//! direction s with its mesh load λ of sign σ: [`Mode`]). Within a pattern the conditions
//! are linear (`solve_pattern`) and the speeds v* = v + τ M̂⁻¹ (τu − τv) and loads φ are
//! affine in the port forces, so each port is a point of mobility W (its speed change per
//! unit force, over τ), joined to the others by the pattern's mobilities between them, the
//! way a 1-DOF gear's ports are (components/src/gear/stage.rs). The pattern is numbered
//! base 5 over the joints (`MODES`), the group solve finds the pattern its solution selects,
//! and the rates are then (69) itself at the solution's forces, so a held joint keeps
//! v = 0.0 exactly. W and the accelerations are found by solving the pattern at the
//! explicit forces and at a unit force along each of the port's axes (exact: affine).
//!
//! Ports that take stage laws: the motors, the joints, the tip and the tip command where
//! every gear is backdrivable and forward-drivable (|γu|, |γv| < 1), as a 1-DOF gear's input
//! and output take them. A force f on the tip command is realised by the motors (τu += Jᵀ f)
//! and the port moves with the tip: a stiff element there (a Cartesian spring to a target,
//! a virtual brake) is the motors' stiffness, solved with the robot as an element at the tip is.

use super::GearedRobot;
use stiction_framework::Admittance;
use crate::gear::efficiency::{Mode, MODES};
use crate::modes::consistent_mode;
use crate::robot::axproj::{sigma_max, solve_pattern, Fix};
use nalgebra::{DVector, Matrix3, Vector3};
use stiction_framework::component::{PortLaws, StageBody};
use stiction_framework::port::Force;
use stiction_framework::stage_law::{group_rates, CrossMobility, GroupLaw};

/// Most joints whose every pattern is tried where the patterns the solutions select come
/// round again (5ⁿ of them: 625).
const MAX_ENUMERATED_DOF: usize = 4;

impl GearedRobot {
    /// Whether a stiff element on `port` can be held implicitly with the robot (module doc).
    pub(crate) fn stage_port(&self, port: usize) -> bool {
        let n = self.dof();
        port <= 2 * n + 1 && self.gears.iter().all(|g| g.gamma_u.abs() < 1.0 && g.gamma_v.abs() < 1.0)
    }

    /// `Admittance::coupling_inertia` of a port that takes stage laws: the smallest inertia it
    /// shows, 1/λ_max(G M̂⁻¹ Gᵀ) without friction (G = e_iᵀ at joint i, κ_i e_iᵀ at motor i,
    /// J at the tip and the tip command), scaled by (1 − σmax(P))/(1 + max |γv|) for the
    /// gears' load-dependent friction (their slipping modes' mobility, as a 1-DOF gear's,
    /// `Gear::smallest_port_inertia`; the tip command's force passes the gears forward:
    /// max |γu| too).
    pub(crate) fn stage_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        let n = self.dof();
        if !self.stage_port(port) {
            return None;
        }
        let (_, minv, p) = self.matrices(&x[..n]);
        let top = if port < n {
            self.gears[port].ratio.powi(2) * minv[(port, port)]
        } else if port < 2 * n {
            minv[(port - n, port - n)]
        } else {
            let (jac, _, _) = self.robot.jacobian_bias_inertia(&x[..n], &x[n..2 * n]);
            let w = &jac * &minv * jac.transpose();
            nalgebra::SymmetricEigen::new(Matrix3::from_fn(|r, c| w[(r, c)])).eigenvalues.max()
        };
        let command = port == 2 * n + 1;
        let gamma = self.gears.iter().map(|g| if command { g.gamma_u.abs().max(g.gamma_v.abs()) } else { g.gamma_v.abs() }).fold(0.0, f64::max);
        let scale = (1.0 - sigma_max(&p)?) / (1.0 + gamma);
        let m = scale / top;
        (m.is_finite() && m > 0.0).then_some(m)
    }

    /// The joints' pattern numbered `mode` (base 5 over the joints, joint 0 the lowest digit).
    fn pattern(&self, mode: usize) -> Option<Vec<Mode>> {
        let mut rest = mode;
        let pattern = (0..self.dof())
            .map(|_| {
                let m = MODES[rest % MODES.len()];
                rest /= MODES.len();
                m
            })
            .collect();
        (rest == 0).then_some(pattern)
    }

    /// The number of `pattern`.
    fn pattern_index(pattern: &[Mode]) -> usize {
        pattern.iter().rev().fold(0, |acc, m| acc * MODES.len() + MODES.iter().position(|k| k == m).unwrap_or(0))
    }

    /// The joints' new speeds of (69) over τ at the port `forces` in `pattern`.
    fn pattern_speeds(&self, x: &[f64], forces: &[Force], tau: f64, pattern: &[Mode]) -> Option<DVector<f64>> {
        let n = self.dof();
        let (big_m, tu, tv) = self.inertia_and_torques(x, forces);
        let (minv, p, ta, phi) = self.loads(big_m, &tu, &tv);
        let vstar = DVector::from_column_slice(&x[n..2 * n]) + (&minv * &ta) * tau;
        let a = minv * tau;
        let f = solve_pattern(pattern, &a, &p, &phi, &vstar)?;
        let mut v = &vstar - &a * f;
        for (vi, m) in v.iter_mut().zip(pattern) {
            if *m == Mode::Stuck {
                *vi = 0.0;
            }
        }
        Some(v)
    }

    /// `port`'s velocity (a joint's along x) at joint speeds `v` in configuration `x`.
    fn port_speed(&self, x: &[f64], port: usize, v: &[f64]) -> Vector3<f64> {
        let n = self.dof();
        let mut at = x[..2 * n].to_vec();
        at[n..].copy_from_slice(v);
        self.port_motion(&at, port).v
    }

    /// The port forces with `changes` (one per port) added.
    fn forces_with(forces: &[Force], changes: impl Iterator<Item = (usize, Vector3<f64>)>) -> Vec<Force> {
        let mut f = forces.to_vec();
        for (port, c) in changes {
            if let Some(f) = f.get_mut(port) {
                f.f += c;
            }
        }
        f
    }

    /// The unit forces along `port`'s axes: one for a joint, three at the tip and its command.
    fn axes(&self, port: usize) -> usize {
        if port >= 2 * self.dof() {
            3
        } else {
            1
        }
    }

    /// In `pattern` at the port `forces`: `port`'s speed change per unit force along each
    /// axis of `from`, over τ (columns of W).
    fn mobility(&self, x: &[f64], forces: &[Force], tau: f64, pattern: &[Mode], port: usize, from: usize) -> Option<Matrix3<f64>> {
        let base = self.port_speed(x, port, self.pattern_speeds(x, forces, tau, pattern)?.as_slice());
        let mut w = Matrix3::zeros();
        for axis in 0..self.axes(from) {
            let push = Self::forces_with(forces, std::iter::once((from, Vector3::ith(axis, 1.0))));
            let v = self.pattern_speeds(x, &push, tau, pattern)?;
            w.set_column(axis, &((self.port_speed(x, port, v.as_slice()) - base) / tau));
        }
        Some(w)
    }

    /// `Admittance::stage_mode`: the number of the pattern that (69) takes at the forces
    /// with the changes, with the joints' locked directions.
    pub(crate) fn stage_mode_index(&self, x: &[f64], forces: &[Force], tau: f64, changes: &[Vector3<f64>]) -> Option<usize> {
        if !(0..=2 * self.dof()).any(|p| self.stage_port(p)) {
            return None;
        }
        let n = self.dof();
        let pushed = Self::forces_with(forces, changes.iter().copied().enumerate());
        let s = self.step_at(x, &pushed, tau, &self.locked()).0.ok()?;
        let lambda = &s.lambda;
        let pattern: Vec<Mode> = (0..n)
            .map(|i| {
                if s.axproj.stuck[i] {
                    return Mode::Stuck;
                }
                let f = s.axproj.f[i];
                let s = if f != 0.0 { f } else { s.v[i] };
                Mode::Slip { s: if s < 0.0 { -1 } else { 1 }, sigma: if lambda[i] < 0.0 { -1 } else { 1 } }
            })
            .collect();
        Some(Self::pattern_index(&pattern))
    }

    /// The joints' locked directions (as `derivative` imposes them).
    pub(crate) fn locked(&self) -> Vec<Fix> {
        self.stops.iter().map(|s| s.direction().map_or(Fix::Free, |d| Fix::Slip(if d.x < 0.0 { -1 } else { 1 }))).collect()
    }

    /// `Admittance::stage_modes`: every pattern the locked directions allow (none past
    /// [`MAX_ENUMERATED_DOF`] joints).
    pub(crate) fn stage_mode_indices(&self) -> Vec<usize> {
        let n = self.dof();
        if n > MAX_ENUMERATED_DOF {
            return Vec::new();
        }
        let locked = self.locked();
        (0..MODES.len().pow(n as u32))
            .filter(|&k| {
                self.pattern(k).is_some_and(|p| {
                    p.iter().zip(&locked).all(|(m, l)| match (m, l) {
                        (_, Fix::Free) => true,
                        (Mode::Slip { s, .. }, Fix::Slip(d)) => s == d,
                        _ => false,
                    })
                })
            })
            .collect()
    }

    /// `Admittance::stage_mode_body`: `port` as a point in pattern `mode` at the explicit forces.
    pub(crate) fn stage_mode_point(&self, x: &[f64], forces: &[Force], tau: f64, mode: usize, port: usize) -> Option<StageBody> {
        if !self.stage_port(port) {
            return None;
        }
        let n = self.dof();
        let pattern = self.pattern(mode)?;
        let v = self.pattern_speeds(x, forces, tau, &pattern)?;
        let mut a = (self.port_speed(x, port, v.as_slice()) - self.port_speed(x, port, &x[n..2 * n])) / tau;
        if port >= 2 * n {
            a += self.robot.tip_velocity_product(x);
        }
        let w = self.mobility(x, forces, tau, &pattern, port, port)?;
        Some(self.point(x, port, a, w))
    }

    /// `port` as a point with acceleration `a` and mobility `w` (its mass the inverse of W's
    /// largest eigenvalue, the port's inertia where W is zero).
    fn point(&self, x: &[f64], port: usize, a: Vector3<f64>, w: Matrix3<f64>) -> StageBody {
        let top = nalgebra::SymmetricEigen::new((w + w.transpose()) * 0.5).eigenvalues.max();
        let mass = if top > 0.0 { 1.0 / top } else { self.joint_inertia(x, port) };
        StageBody { mobility: Some(w), ..StageBody::point(mass, self.port_motion(x, port).p, a) }
    }

    /// A scale of `port`'s inertia: its joint's M̂_ii (a motor's over κ², the tip: joint n − 1's).
    fn joint_inertia(&self, x: &[f64], port: usize) -> f64 {
        let n = self.dof();
        let i = if port < n { port } else { (port - n).min(n - 1) };
        let k = if port < n { self.gears[i].ratio } else { 1.0 };
        (self.robot.inertia_matrix(&x[..n])[(i, i)] + self.m[i]) / (k * k)
    }

    /// `Admittance::stage_body`: a port that takes stage laws as a point of a group, every
    /// joint stuck (the body of the stage's pattern replaces it).
    pub(crate) fn stage_point(&self, x: &[f64], port: usize) -> Option<StageBody> {
        let n = self.dof();
        self.stage_port(port).then(|| self.point(x, port, -self.port_speed(x, port, &x[n..2 * n]), Matrix3::zeros()))
    }

    /// `Admittance::stage_mode_mobility`: in pattern `mode`, `port`'s acceleration per unit
    /// force at `from`.
    pub(crate) fn stage_cross(&self, x: &[f64], forces: &[Force], tau: f64, mode: usize, port: usize, from: usize) -> Option<Matrix3<f64>> {
        if !(self.stage_port(port) && self.stage_port(from)) {
            return None;
        }
        self.mobility(x, forces, tau, &self.pattern(mode)?, port, from)
    }

    /// `Admittance::set_stage_body`: the rates of (69) at the forces with the group's changes.
    pub(crate) fn set_stage(&self, x: &[f64], forces: &[Force], tau: f64, ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let pushed = Self::forces_with(forces, ports.iter().copied().zip(bodies.iter().map(|b| b.force)));
        // A failing step leaves the explicit rates (the stage's `derivative` reported it).
        let _ = self.write_rates(x, &pushed, tau, dx);
    }

    /// `Admittance::implicit_rate`: the stage with the coupled laws on the robot's ports
    /// (each a point, joined by the pattern's mobilities), solved in the pattern the
    /// explicit forces select and again in the one its solution selects until they agree;
    /// then (69) at the solution's forces.
    pub(crate) fn stage_rates(&self, x: &[f64], forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        let ports: Vec<usize> = (0..forces.len()).filter(|&p| !laws.of(p).is_empty() && self.stage_port(p)).collect();
        if ports.is_empty() {
            return;
        }
        let mut group: Vec<GroupLaw<'_>> = Vec::new();
        for (i, &p) in ports.iter().enumerate() {
            group.extend(laws.of(p).iter().map(|law| GroupLaw { law, body: i, partner: None }));
        }
        let none = vec![Vector3::zeros(); forces.len()];
        let Some(first) = self.stage_mode_index(x, forces, tau, &none) else { return };
        let solve = |mode: usize| {
            let mut bodies: Vec<StageBody> = ports
                .iter()
                .map(|&p| self.stage_mode_point(x, forces, tau, mode, p).unwrap_or_else(|| self.point(x, p, Vector3::zeros(), Matrix3::zeros())))
                .collect();
            let mut cross = Vec::new();
            for (i, &p) in ports.iter().enumerate() {
                for (k, &from) in ports.iter().enumerate().filter(|&(k, _)| k != i) {
                    if let Some(w) = self.stage_cross(x, forces, tau, mode, p, from) {
                        cross.push(CrossMobility { body: i, from: k, w });
                    }
                }
            }
            group_rates(&mut bodies, &group, &cross, tau);
            let mut changes = vec![Vector3::zeros(); forces.len()];
            for (b, &p) in bodies.iter().zip(&ports) {
                changes[p] = b.force;
            }
            changes
        };
        let select = |changes: &Vec<Vector3<f64>>| self.stage_mode_index(x, forces, tau, changes).unwrap_or(first);
        let changes = consistent_mode(first, self.stage_mode_indices().into_iter(), solve, select);
        let pushed = Self::forces_with(forces, changes.into_iter().enumerate());
        let _ = self.write_rates(x, &pushed, tau, dx);
    }
}
