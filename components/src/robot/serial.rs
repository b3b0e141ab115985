//! n-DOF serial robot with revolute joints: the admittance A_rob of (8),
//!
//! ```text
//!   θ̇ = ω,    ω̇ = H(θ)⁻¹ (τ − c(θ, ω))                                    (8)
//! ```
//!
//! * H(θ), the joint-space inertia matrix, comes from the composite-rigid-body algorithm
//!   (CRBA), with spatial inertias expressed in world coordinates about the base origin.
//! * c(θ, ω), Coriolis, centrifugal and gravity torques, comes from the recursive
//!   Newton–Euler algorithm (RNEA) with θ̈ = 0 and the base accelerating at −g.
//! * H ω̇ = τ − c − b ω is solved by Cholesky; a Cholesky failure (H not positive definite)
//!   is reported as a [`Fault`].
//!
//! Geometry: link i's frame is `parent · Trans(origin_i) · Rot(axis_i, θ_i)`, the parent of
//! link 0 being the fixed world (base) frame. The joint torque τ is the sum of the scalar
//! forces on the ports `joint0 … joint{n−1}`, Jᵀf for a force f on the `tip` port, and the
//! joint viscous friction −b ω.
//!
//! `derivative`, `port_motion` and `signal` do not allocate: all per-link quantities live in
//! fixed-capacity stack arrays of [`MAX_DOF`] entries (nalgebra `SMatrix`/`SVector`),
//! of which the top-left n × n block is used. The public helpers that return `DMatrix`/
//! `DVector`/`Matrix3xX` allocate their result.

use super::crba::{cholesky_solve, crba};
use super::json::{read_links, read_tip_gravity_init, LINK_PARAMS, TIP_GRAVITY_PARAMS};
use crate::doc_table::table;
use std::sync::OnceLock;
use super::kinematics::{Kinematics, MatN, VecN, MAX_DOF};
use super::link::Link;
use super::rnea::rnea;
use nalgebra::{DMatrix, DVector, Matrix3, Matrix3xX, SMatrix, Vector3};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::component::{PortLaws, StageBody, StageLaw};
use stiction_framework::{Admittance, Domain, Error, Fault, Force, Layout, Motion, PortInfo, Probe, Result, SignalInfo};

/// Isotropic inertia (kg·m²) given to the lumped point masses of [`SerialRobot::planar`].
pub const PLANAR_POINT_INERTIA: f64 = 1e-9;

/// A chain of revolute joints: the admittance A_rob of (8). State x = [θ (n), ω (n)].
///
/// Ports, in index order: `joint0 … joint{n−1}` (scalar: θ_i, ω_i / torque added to τ_i)
/// and `tip` (point: tip position and velocity J(θ)ω / force f adding Jᵀf to τ).
#[derive(Clone, Debug)]
pub struct SerialRobot {
    links: Vec<Link>,
    tip: Vector3<f64>,
    gravity: Vector3<f64>,
    q0: Vec<f64>,
    w0: Vec<f64>,
}

impl SerialRobot {
    /// A robot from its links (base to tip), the tip point in the last link's frame (m) and
    /// the gravitational acceleration (m/s², world frame). Validates every value and
    /// normalises the axes; the error text names the field, e.g. `links[1].mass: must be > 0`.
    /// The initial state is θ = ω = 0 (see [`with_init`](Self::with_init)).
    pub fn new(links: Vec<Link>, tip: Vector3<f64>, gravity: Vector3<f64>) -> Result<SerialRobot, String> {
        if links.is_empty() {
            return Err("links: a serial robot needs at least one link".to_string());
        }
        if links.len() > MAX_DOF {
            return Err(format!("links: at most {MAX_DOF} links are supported, got {}", links.len()));
        }
        if !tip.iter().all(|x| x.is_finite()) {
            return Err("tip: must be finite".to_string());
        }
        if !gravity.iter().all(|x| x.is_finite()) {
            return Err("gravity: must be finite".to_string());
        }
        let links = links
            .into_iter()
            .enumerate()
            .map(|(i, l)| l.validated().map_err(|(field, msg)| format!("links[{i}].{field}: {msg}")))
            .collect::<Result<Vec<Link>, String>>()?;
        let n = links.len();
        Ok(SerialRobot { links, tip, gravity, q0: vec![0.0; n], w0: vec![0.0; n] })
    }

    /// A planar arm in the x-y plane: joint axes along z, link i of length `lengths[i]`
    /// along its local x axis, a point mass `masses[i]` lumped at its distal end (with the
    /// tiny isotropic inertia [`PLANAR_POINT_INERTIA`]), the tip at the end of the last link,
    /// no gravity, no joint damping (see [`with_gravity`](Self::with_gravity)).
    ///
    /// # Panics
    /// If the slices are empty, of different lengths, longer than [`MAX_DOF`], or hold a
    /// non-finite length or a mass that is not > 0 (programming errors; JSON input goes
    /// through validated parameters instead).
    pub fn planar(lengths: &[f64], masses: &[f64]) -> SerialRobot {
        assert_eq!(lengths.len(), masses.len(), "SerialRobot::planar: one mass per link length");
        let mut links = Vec::with_capacity(lengths.len());
        let mut previous = 0.0;
        for (&l, &m) in lengths.iter().zip(masses) {
            links.push(Link::new(
                Vector3::new(previous, 0.0, 0.0),
                Vector3::z(),
                m,
                Vector3::new(l, 0.0, 0.0),
                Matrix3::identity() * PLANAR_POINT_INERTIA,
            ));
            previous = l;
        }
        match SerialRobot::new(links, Vector3::new(previous, 0.0, 0.0), Vector3::zeros()) {
            Ok(r) => r,
            Err(e) => panic!("SerialRobot::planar: {e}"),
        }
    }

    /// The same robot with gravitational acceleration `g` (m/s², world frame).
    pub fn with_gravity(mut self, g: Vector3<f64>) -> SerialRobot {
        self.gravity = g;
        self
    }

    /// The same robot with initial joint angles `q` (rad) and rates `w` (rad/s).
    pub fn with_init(mut self, q: Vec<f64>, w: Vec<f64>) -> Result<SerialRobot, String> {
        let n = self.dof();
        if q.len() != n || w.len() != n {
            return Err(format!("init: expected {n} angles and {n} rates, got {} and {}", q.len(), w.len()));
        }
        if !q.iter().chain(&w).all(|x| x.is_finite()) {
            return Err("init: must be finite".to_string());
        }
        self.q0 = q;
        self.w0 = w;
        Ok(self)
    }

    /// Number of joints n.
    pub fn dof(&self) -> usize {
        self.links.len()
    }

    /// The links, base to tip (axes normalised).
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Tip point in the last link's frame (m).
    pub fn tip(&self) -> Vector3<f64> {
        self.tip
    }

    /// Gravitational acceleration (m/s², world frame).
    pub fn gravity(&self) -> Vector3<f64> {
        self.gravity
    }

    fn check_len(&self, what: &str, v: &[f64]) {
        assert_eq!(v.len(), self.dof(), "SerialRobot: {what} must have one entry per joint");
    }

    /// Joint-space inertia matrix H(θ) of (8) (CRBA, including rotor inertias).
    ///
    /// # Panics
    /// If `q.len() != self.dof()`.
    pub fn inertia_matrix(&self, q: &[f64]) -> DMatrix<f64> {
        self.check_len("q", q);
        let n = self.dof();
        let h = self.crba(&self.kinematics(q));
        DMatrix::from_fn(n, n, |i, j| h[(i, j)])
    }

    /// Bias torques c(θ, ω) of (8): Coriolis, centrifugal and gravity (RNEA with θ̈ = 0),
    /// without joint damping.
    ///
    /// # Panics
    /// If `q` or `w` does not have `self.dof()` entries.
    pub fn bias_forces(&self, q: &[f64], w: &[f64]) -> DVector<f64> {
        self.check_len("q", q);
        self.check_len("w", w);
        let c = self.rnea(&self.kinematics(q), w, None, &self.gravity);
        DVector::from_fn(self.dof(), |i, _| c[i])
    }

    /// Inverse dynamics τ = H(θ) θ̈ + c(θ, ω) (full RNEA, with gravity and rotor inertias,
    /// without joint damping).
    ///
    /// # Panics
    /// If `q`, `w` or `wd` does not have `self.dof()` entries.
    pub fn inverse_dynamics(&self, q: &[f64], w: &[f64], wd: &[f64]) -> DVector<f64> {
        self.check_len("q", q);
        self.check_len("w", w);
        self.check_len("wd", wd);
        let t = self.rnea(&self.kinematics(q), w, Some(wd), &self.gravity);
        DVector::from_fn(self.dof(), |i, _| t[i])
    }

    /// Forward dynamics of (8): θ̈ = H⁻¹(τ − c − b ω) for joint torques `tau` (N·m).
    ///
    /// # Panics
    /// If `q`, `w` or `tau` does not have `self.dof()` entries.
    pub fn forward_dynamics(&self, q: &[f64], w: &[f64], tau: &[f64]) -> Result<DVector<f64>, Fault> {
        self.check_len("q", q);
        self.check_len("w", w);
        self.check_len("tau", tau);
        let n = self.dof();
        let k = self.kinematics(q);
        let mut rhs = VecN::zeros();
        for i in 0..n {
            rhs[i] = tau[i];
        }
        let wd = self.solve_accelerations(&k, w, rhs)?;
        Ok(DVector::from_fn(n, |i, _| wd[i]))
    }

    /// World position of the tip point (m).
    ///
    /// # Panics
    /// If `q.len() != self.dof()`.
    pub fn tip_position(&self, q: &[f64]) -> Vector3<f64> {
        self.check_len("q", q);
        self.tip_point(&self.kinematics(q))
    }

    /// Translational Jacobian J(θ) of the tip point (3 × n): tip velocity = J ω.
    ///
    /// # Panics
    /// If `q.len() != self.dof()`.
    pub fn tip_jacobian(&self, q: &[f64]) -> Matrix3xX<f64> {
        self.check_len("q", q);
        self.jacobian_of(&self.kinematics(q))
    }

    /// J(θ), c(θ, ω) and H(θ) of (8) from one pass of the kinematics: the values of
    /// [`tip_jacobian`](Self::tip_jacobian), [`bias_forces`](Self::bias_forces) and
    /// [`inertia_matrix`](Self::inertia_matrix), for an evaluation that needs all three
    /// (the geared robot's (69)); c and H fill their first n entries.
    pub(crate) fn jacobian_bias_inertia(&self, q: &[f64], w: &[f64]) -> (Matrix3xX<f64>, VecN, MatN) {
        self.check_len("q", q);
        self.check_len("w", w);
        let k = self.kinematics(q);
        (self.jacobian_of(&k), self.rnea(&k, w, None, &self.gravity), self.crba(&k))
    }

    // ----- the algorithms of kinematics.rs, rnea.rs and crba.rs on this robot -----

    fn kinematics(&self, q: &[f64]) -> Kinematics {
        Kinematics::of(&self.links, q)
    }

    /// The tip's acceleration at zero joint accelerations, J̇ ω, at state `x` = (θ, ω, …).
    pub(crate) fn tip_velocity_product(&self, x: &[f64]) -> Vector3<f64> {
        let n = self.dof();
        let k = self.kinematics(&x[..n]);
        k.tip_bias(n, &self.tip_point(&k), &x[n..2 * n])
    }

    fn tip_point(&self, k: &Kinematics) -> Vector3<f64> {
        k.point(self.dof() - 1, &self.tip)
    }

    /// The tip Jacobian J (3 × n) of kinematics `k`.
    fn jacobian_of(&self, k: &Kinematics) -> Matrix3xX<f64> {
        self.jacobian_fixed(k).columns(0, self.dof()).into_owned()
    }

    /// The tip Jacobian in the joint solve's fixed size (columns past n zero).
    fn jacobian_fixed(&self, k: &Kinematics) -> SMatrix<f64, 3, MAX_DOF> {
        let p = self.tip_point(k);
        let mut j = SMatrix::<f64, 3, MAX_DOF>::zeros();
        for i in 0..self.dof() {
            j.set_column(i, &k.jacobian_column(i, &p));
        }
        j
    }

    /// The tip's mobility at kinematics `k`: H⁻¹ Jᵀ (its first n rows) and the tip's inverse
    /// inertia W = J H⁻¹ Jᵀ (a unit force f at the tip changes ω̇ by H⁻¹ Jᵀ f and the tip's
    /// acceleration by W f); `None` where H is not positive definite.
    fn tip_mobility(&self, k: &Kinematics) -> Option<(SMatrix<f64, MAX_DOF, 3>, Matrix3<f64>)> {
        let (n, h, j) = (self.dof(), self.crba(k), self.jacobian_fixed(k));
        let mut hj = SMatrix::<f64, MAX_DOF, 3>::zeros();
        for r in 0..3 {
            let (mut l, mut b) = (h, j.row(r).transpose());
            cholesky_solve(&mut l, n, &mut b).ok()?;
            hj.set_column(r, &b);
        }
        Some((hj, j * hj))
    }

    /// H⁻¹ e_i (its first n entries): the joints' response to a unit torque at joint i.
    fn joint_mobility(&self, k: &Kinematics, i: usize) -> Option<VecN> {
        let (mut l, mut b) = (self.crba(k), VecN::zeros());
        b[i] = 1.0;
        cholesky_solve(&mut l, self.dof(), &mut b).ok().map(|_| b)
    }

    /// G_port H⁻¹ G_fromᵀ at kinematics `k` (G = e_iᵀ along x at joint i, J at the tip): the
    /// change of `port`'s acceleration per unit force at `from` (at one port, its W).
    fn mobility_between(&self, k: &Kinematics, port: usize, from: usize) -> Option<Matrix3<f64>> {
        let n = self.dof();
        let response = if from < n {
            let mut r = SMatrix::<f64, MAX_DOF, 3>::zeros();
            r.set_column(0, &self.joint_mobility(k, from)?);
            r
        } else {
            self.tip_mobility(k)?.0
        };
        Some(if port < n {
            let mut w = Matrix3::zeros();
            w.set_row(0, &response.row(port));
            w
        } else {
            self.jacobian_fixed(k) * response
        })
    }

    fn rnea(&self, k: &Kinematics, w: &[f64], wd: Option<&[f64]>, g: &Vector3<f64>) -> VecN {
        rnea(&self.links, k, w, wd, g)
    }

    fn crba(&self, k: &Kinematics) -> MatN {
        crba(&self.links, k)
    }

    /// θ̈ = H⁻¹(τ − c − b ω) for the joint torques `tau` from outside (first n entries).
    fn solve_accelerations(&self, k: &Kinematics, w: &[f64], tau: VecN) -> Result<VecN, Fault> {
        let n = self.dof();
        let c = self.rnea(k, w, None, &self.gravity);
        let mut rhs = VecN::zeros();
        for i in 0..n {
            rhs[i] = tau[i] - c[i] - self.links[i].damping * w[i];
        }
        if !rhs.iter().take(n).all(|x| x.is_finite()) {
            return Err(Fault::new(format!("non-finite joint torques {:?}", &rhs.as_slice()[..n])));
        }
        let mut h = self.crba(k);
        cholesky_solve(&mut h, n, &mut rhs)?;
        Ok(rhs)
    }

    /// Total joint torques from the ports (without damping): scalar joint forces plus Jᵀf.
    fn port_torques(&self, k: &Kinematics, forces: &[Force]) -> VecN {
        let n = self.dof();
        let mut tau = VecN::zeros();
        for (i, f) in forces.iter().take(n).enumerate() {
            tau[i] = f.value();
        }
        if let Some(ft) = forces.get(n) {
            let p = self.tip_point(k);
            for i in 0..n {
                tau[i] += k.jacobian_column(i, &p).dot(&ft.f);
            }
        }
        tau
    }

    /// Kinetic energy ½ ωᵀ H ω.
    fn kinetic_energy(&self, k: &Kinematics, w: &[f64]) -> f64 {
        let h = self.crba(k);
        let n = self.dof();
        let mut e = 0.0;
        for i in 0..n {
            for j in 0..n {
                e += w[i] * h[(i, j)] * w[j];
            }
        }
        0.5 * e
    }
}

/// Signal documentation for the registry (len 0 = one element per joint).
const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 0, "rad", "joint angles θ").of_state(),
    SignalInfo::new("w", 0, "rad/s", "joint rates ω").of_state(),
    SignalInfo::new("tau", 0, "N·m", "total joint torque from the ports (joint torques + Jᵀ f_tip), without damping"),
    SignalInfo::new("tip", 3, "m", "tip position (world frame)").of_state(),
    SignalInfo::new("tip_v", 3, "m/s", "tip velocity J(θ)ω (world frame)").of_state(),
];

impl Admittance for SerialRobot {
    fn layout(&self) -> Layout {
        let n = self.dof();
        let mut ports: Vec<PortInfo> = (0..n).map(|i| PortInfo::new(format!("joint{i}"), Domain::Scalar)).collect();
        ports.push(PortInfo::new("tip", Domain::Point3));
        Layout::new(2 * n, ports)
    }

    fn init(&self, x: &mut [f64]) {
        let n = self.dof();
        x[..n].copy_from_slice(&self.q0);
        x[n..2 * n].copy_from_slice(&self.w0);
    }

    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        let n = self.dof();
        let (q, w) = (&x[..n], &x[n..2 * n]);
        if port < n {
            Motion::scalar(q[port], w[port])
        } else {
            let k = self.kinematics(q);
            let p = self.tip_point(&k);
            Motion::point(p, k.tip_velocity(n, &p, w))
        }
    }

    /// (8): θ̇ = ω, ω̇ = H(θ)⁻¹(τ − c(θ, ω)) with τ = port torques + Jᵀ f_tip − b ω.
    fn derivative(&self, x: &[f64], forces: &[Force], _t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let n = self.dof();
        let (q, w) = (&x[..n], &x[n..2 * n]);
        let k = self.kinematics(q);
        let tau = self.port_torques(&k, forces);
        let wd = self.solve_accelerations(&k, w, tau)?;
        dx[..n].copy_from_slice(w);
        dx[n..2 * n].copy_from_slice(&wd.as_slice()[..n]);
        Ok(())
    }

    fn signals(&self) -> Vec<SignalInfo> {
        let n = self.dof();
        SIGNALS.iter().map(|s| if s.len == 0 { SignalInfo { len: n, ..*s } } else { *s }).collect()
    }

    fn signal(&self, which: usize, elem: usize, p: &Probe) -> f64 {
        let n = self.dof();
        let len = if which < 3 { n } else { 3 };
        if elem >= len || p.state.len() < 2 * n {
            return f64::NAN;
        }
        let (q, w) = (&p.state[..n], &p.state[n..2 * n]);
        match which {
            0 => q[elem],
            1 => w[elem],
            2 => self.port_torques(&self.kinematics(q), p.forces)[elem],
            3 => self.tip_point(&self.kinematics(q))[elem],
            4 => {
                let k = self.kinematics(q);
                let tip = self.tip_point(&k);
                k.tip_velocity(n, &tip, w)[elem]
            }
            _ => f64::NAN,
        }
    }

    /// ½ ωᵀHω − Σ m_i g·p_com,i.
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let n = self.dof();
        let k = self.kinematics(&x[..n]);
        let potential: f64 = self.links.iter().enumerate().map(|(i, l)| -l.mass * self.gravity.dot(&k.com[i])).sum();
        Some(self.kinetic_energy(&k, &x[n..2 * n]) + potential)
    }

    /// The joints and the tip take the stage laws of stiff elements on them
    /// ([`implicit_rate`](Self::implicit_rate)).
    fn takes_stage_laws(&self, port: usize) -> bool {
        port <= self.dof()
    }
    /// The implicit stage of the joints with the coupled elements' laws on them and at the
    /// tip, solved together through H(θ) ([`StageLaw::joint_rates`]):
    /// H Δω = τ (τ_o + Σ f(Δω_i) + Jᵀ Σ f_t(J Δω)).
    fn implicit_rate(&self, x: &[f64], _forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        let n = self.dof();
        let k = self.kinematics(&x[..n]);
        let h = self.crba(&k);
        let mut a = VecN::zeros();
        a.as_mut_slice()[..n].copy_from_slice(&dx[n..2 * n]);
        let tip = (!laws.of(n).is_empty()).then(|| self.jacobian_fixed(&k));
        let wd = StageLaw::joint_rates(&h, n, &a, |i| laws.of(i), tip.as_ref(), tau);
        dx[n..2 * n].copy_from_slice(&wd.as_slice()[..n]);
    }
    /// The smallest inertia the port can show (the coupling's estimate,
    /// [`Admittance::coupling_inertia`]): at joint i 1/(H⁻¹)_ii, the others free; at the tip
    /// 1/λ_max(J H⁻¹ Jᵀ), the smallest effective mass along any direction.
    fn coupling_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        let n = self.dof();
        let k = self.kinematics(&x[..n]);
        let m = if port < n {
            1.0 / self.joint_mobility(&k, port)?[port]
        } else {
            1.0 / nalgebra::SymmetricEigen::new(self.tip_mobility(&k)?.1).eigenvalues.max()
        };
        (m.is_finite() && m > 0.0).then_some(m)
    }
    /// A joint or the tip as a point of the mechanism, an element between it and another
    /// body being solved with that body's group (each port holding coupled laws a point,
    /// joined by [`stage_mobility`](Self::stage_mobility)): at the tip its inverse inertia W = J H⁻¹ Jᵀ and its whole acceleration
    /// J ω̇ + J̇ ω (left out, the velocity-product term made the held element first order
    /// with a large constant: 1.8e-3 rad off at 0.5 s, T = 1e-3, against 1.1e-6 with it);
    /// at joint i, along x, (H⁻¹)_ii and ω̇_i. Mass 1/λ_max(W).
    fn stage_body(&self, x: &[f64], dx: &[f64], port: usize) -> Option<StageBody> {
        let n = self.dof();
        let k = self.kinematics(&x[..n]);
        let w = self.mobility_between(&k, port, port)?;
        let (a, at) = if port < n {
            (Vector3::new(dx[n + port], 0.0, 0.0), Vector3::new(x[port], 0.0, 0.0))
        } else {
            let mut wd = VecN::zeros();
            wd.as_mut_slice()[..n].copy_from_slice(&dx[n..2 * n]);
            let tip = self.tip_point(&k);
            (self.jacobian_fixed(&k) * wd + k.tip_bias(n, &tip, &x[n..2 * n]), tip)
        };
        let top = nalgebra::SymmetricEigen::new(w).eigenvalues.max();
        (top.is_finite() && top > 0.0).then(|| StageBody { mobility: Some(w), ..StageBody::point(1.0 / top, at, a) })
    }
    /// Between two points of the arm: the response at `port` to a unit force at `from`,
    /// G_port H⁻¹ G_fromᵀ (G = e_iᵀ along x at joint i, J at the tip).
    fn stage_mobility(&self, x: &[f64], port: usize, from: usize) -> Option<Matrix3<f64>> {
        self.mobility_between(&self.kinematics(&x[..self.dof()]), port, from)
    }
    /// ω̇ += H⁻¹ e_i Δf_x at joint i, H⁻¹ Jᵀ Δf at the tip, Δf the change of the laws'
    /// force there that the group's solve found, port by port.
    fn set_stage_body(&self, x: &[f64], _forces: &[Force], _tau: f64, ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let n = self.dof();
        let k = self.kinematics(&x[..n]);
        for (&port, body) in ports.iter().zip(bodies) {
            let change = if port < n {
                self.joint_mobility(&k, port).map(|c| c * body.force.x)
            } else {
                self.tip_mobility(&k).map(|(hj, _)| hj * body.force)
            };
            for (d, c) in dx[n..2 * n].iter_mut().zip(change.unwrap_or_else(VecN::zeros).iter()) {
                *d += c;
            }
        }
    }
    /// H_ii for joint i; `None` for the tip.
    fn port_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        let n = self.dof();
        (port < n).then(|| self.crba(&self.kinematics(&x[..n]))[(port, port)])
    }
    /// H(θ) of (8) at the current joint angles (the joints are ports 0..n).
    fn inertia_matrix(&self, x: &[f64]) -> Option<(usize, Vec<f64>)> {
        let n = self.dof();
        let h = self.crba(&self.kinematics(&x[..n]));
        Some((n, (0..n * n).map(|i| h[(i / n, i % n)]).collect()))
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let links = read_links(p)?;
    let (tip, gravity, q0, w0) = read_tip_gravity_init(p, links.len(), "w")?;
    let robot = SerialRobot::new(links, tip, gravity)
        .and_then(|r| r.with_init(q0, w0))
        .map_err(|m| Error::invalid(p.path(), m))?;
    Ok(Built::Admittance(Box::new(robot)))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "serial_robot", "links": [{"origin": [0, 0, 0.1], "axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01], "damping": 0.1, "rotor": 0.01}], "tip": [0.2, 0, 0], "gravity": [0, 0, -9.81], "init": {"q": [0.1], "w": [0.2]}}"#,
];

/// Register `serial_robot`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    r.register(ComponentType {
        name: "serial_robot",
        kind: Kind::Admittance,
        summary: "n-DOF serial robot with revolute joints, θ̇ = ω, ω̇ = H(θ)⁻¹(τ − c(θ, ω)) (8); H by CRBA, c by RNEA",
        params: table(
            &ALL,
            &[
                &[ParamDoc {
                    name: "links",
                    unit: "",
                    default: None,
                    doc: "1 to 12 link objects, base to tip",
                }],
                LINK_PARAMS,
                TIP_GRAVITY_PARAMS,
                &[
                    ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"q\", \"w\"}" },
                    ParamDoc { name: "init.q", unit: "rad", default: Some("zeros"), doc: "initial joint angles [n]" },
                    ParamDoc { name: "init.w", unit: "rad/s", default: Some("zeros"), doc: "initial joint rates [n]" },
                ],
            ],
        ),
        ports: &[
            PortDoc {
                name: "joint<i>",
                domain: "scalar",
                doc: "joint i = 0..n−1: θ_i, ω_i; its torque (N·m) is added to τ_i",
            },
            PortDoc { name: "tip", domain: "point3", doc: "tip point: position, J(θ)ω; a force f (N) adds Jᵀf to τ" },
        ],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Isometry3, Matrix2, Point3, Translation3, Unit, UnitQuaternion, Vector2};
    use serde_json::json;
    use std::path::Path;

    use crate::test_util::Lcg;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    // ----- (1) 2-link planar arm of uniform rods vs. the textbook closed form -----

    const M1: f64 = 1.3;
    const L1: f64 = 0.9;
    const M2: f64 = 0.8;
    const L2: f64 = 0.7;
    const G: f64 = 9.81;

    fn rod(origin: f64, m: f64, l: f64) -> Link {
        let i = m * l * l / 12.0;
        Link::new(
            Vector3::new(origin, 0.0, 0.0),
            Vector3::z(),
            m,
            Vector3::new(l / 2.0, 0.0, 0.0),
            Matrix3::from_diagonal(&Vector3::new(0.0, i, i)),
        )
    }

    fn rods(gravity: f64) -> SerialRobot {
        SerialRobot::new(
            vec![rod(0.0, M1, L1), rod(L1, M2, L2)],
            Vector3::new(L2, 0.0, 0.0),
            Vector3::new(0.0, -gravity, 0.0),
        )
        .unwrap()
    }

    /// H, and c with gravity g along −y, of the 2-link rod arm (Spong, Hutchinson & Vidyasagar).
    fn closed_form(q: [f64; 2], w: [f64; 2], g: f64) -> (Matrix2<f64>, Vector2<f64>) {
        let (lc1, lc2) = (L1 / 2.0, L2 / 2.0);
        let (i1, i2) = (M1 * L1 * L1 / 12.0, M2 * L2 * L2 / 12.0);
        let c2 = q[1].cos();
        let h11 = i1 + i2 + M1 * lc1 * lc1 + M2 * (L1 * L1 + lc2 * lc2 + 2.0 * L1 * lc2 * c2);
        let h12 = i2 + M2 * (lc2 * lc2 + L1 * lc2 * c2);
        let h22 = i2 + M2 * lc2 * lc2;
        let hs = M2 * L1 * lc2 * q[1].sin();
        let g1 = (M1 * lc1 + M2 * L1) * g * q[0].cos() + M2 * lc2 * g * (q[0] + q[1]).cos();
        let g2 = M2 * lc2 * g * (q[0] + q[1]).cos();
        (
            Matrix2::new(h11, h12, h12, h22),
            Vector2::new(-hs * (2.0 * w[0] * w[1] + w[1] * w[1]) + g1, hs * w[0] * w[0] + g2),
        )
    }

    #[test]
    fn planar_rods_match_closed_form() {
        let configs = [
            ([0.0, 0.0], [0.0, 0.0]),
            ([0.3, -1.1], [1.5, -0.7]),
            ([2.0, 2.5], [-2.0, 3.0]),
            ([-1.2, 0.4], [0.4, 0.9]),
            ([3.0, -2.9], [-1.1, -2.2]),
        ];
        for g in [0.0, G] {
            let robot = rods(g);
            for (q, w) in configs {
                let (h_cf, c_cf) = closed_form(q, w, g);
                let h = robot.inertia_matrix(&q);
                let c = robot.bias_forces(&q, &w);
                for i in 0..2 {
                    for j in 0..2 {
                        assert!(
                            (h[(i, j)] - h_cf[(i, j)]).abs() < 1e-12,
                            "H[{i},{j}] at q={q:?}: {} vs {}",
                            h[(i, j)],
                            h_cf[(i, j)]
                        );
                    }
                    assert!(close(c[i], c_cf[i], 1e-12), "c[{i}] at q={q:?} w={w:?} g={g}: {} vs {}", c[i], c_cf[i]);
                }
                // The admittance (8) itself: ω̇ = H⁻¹(τ − c) with joint torques on the ports.
                let tau = [0.7, -0.3];
                let x = [q[0], q[1], w[0], w[1]];
                let forces = [Force::scalar(tau[0]), Force::scalar(tau[1]), Force::ZERO];
                let mut dx = [0.0; 4];
                robot.derivative(&x, &forces, 0.0, 1e-3, &mut dx).unwrap();
                let wd = h_cf.try_inverse().unwrap() * (Vector2::new(tau[0], tau[1]) - c_cf);
                assert_eq!(&dx[..2], &w[..]);
                for i in 0..2 {
                    assert!(close(dx[2 + i], wd[i], 1e-10), "ω̇[{i}] at q={q:?}: {} vs {}", dx[2 + i], wd[i]);
                }
            }
        }
    }

    // ----- (2) spatial chain: H SPD and ½ωᵀHω = kinetic energy from finite differences -----

    fn spatial_chain() -> SerialRobot {
        let full = |a: [f64; 6]| Matrix3::new(a[0], a[3], a[4], a[3], a[1], a[5], a[4], a[5], a[2]);
        SerialRobot::new(
            vec![
                Link::new(
                    Vector3::new(0.0, 0.0, 0.1),
                    Vector3::z(),
                    2.0,
                    Vector3::new(0.05, 0.02, 0.2),
                    full([0.05, 0.04, 0.03, 0.002, -0.001, 0.003]),
                ),
                Link::new(
                    Vector3::new(0.1, 0.0, 0.3),
                    Vector3::y(),
                    1.5,
                    Vector3::new(0.2, 0.01, -0.02),
                    full([0.01, 0.03, 0.025, 0.001, 0.0, -0.002]),
                )
                .with_damping(0.3)
                .with_rotor(0.02),
                Link::new(
                    Vector3::new(0.4, 0.05, 0.0),
                    Vector3::new(1.0, 1.0, 0.3),
                    0.7,
                    Vector3::new(0.1, 0.05, 0.03),
                    Matrix3::from_diagonal(&Vector3::new(0.004, 0.005, 0.006)),
                )
                .with_damping(0.1),
            ],
            Vector3::new(0.2, 0.0, 0.05),
            Vector3::new(0.0, 0.0, -9.81),
        )
        .unwrap()
    }

    /// Forward kinematics written independently (isometries): frame of every link.
    fn frames(robot: &SerialRobot, q: &[f64]) -> Vec<Isometry3<f64>> {
        let mut t = Isometry3::identity();
        robot
            .links()
            .iter()
            .zip(q)
            .map(|(l, &qi)| {
                t = t
                    * Translation3::from(l.origin)
                    * UnitQuaternion::from_axis_angle(&Unit::new_normalize(l.axis), qi);
                t
            })
            .collect()
    }

    fn offset(q: &[f64], w: &[f64], h: f64) -> Vec<f64> {
        q.iter().zip(w).map(|(a, b)| a + h * b).collect()
    }

    #[test]
    fn spatial_inertia_matrix_is_kinetic_energy() {
        let robot = spatial_chain();
        let mut rng = Lcg(7);
        for _ in 0..10 {
            let q: Vec<f64> = (0..3).map(|_| rng.next(-3.0, 3.0)).collect();
            let w: Vec<f64> = (0..3).map(|_| rng.next(-2.0, 2.0)).collect();
            let h = robot.inertia_matrix(&q);
            assert!((&h - h.transpose()).amax() < 1e-14, "H not symmetric: {h}");
            let eig = h.clone().symmetric_eigenvalues();
            assert!(eig.min() > 1e-4, "H not positive definite: eigenvalues {eig}");

            let dt = 1e-5;
            let (fp, fm, f0) =
                (frames(&robot, &offset(&q, &w, dt)), frames(&robot, &offset(&q, &w, -dt)), frames(&robot, &q));
            let mut ke = 0.0;
            for (i, l) in robot.links().iter().enumerate() {
                let c = |t: &Isometry3<f64>| t * Point3::from(l.com);
                let v = (c(&fp[i]) - c(&fm[i])) / (2.0 * dt);
                let r = f0[i].rotation.to_rotation_matrix().into_inner();
                let rd = (fp[i].rotation.to_rotation_matrix().into_inner()
                    - fm[i].rotation.to_rotation_matrix().into_inner())
                    / (2.0 * dt);
                let s = rd * r.transpose(); // skew(ω)
                let om = Vector3::new(s[(2, 1)] - s[(1, 2)], s[(0, 2)] - s[(2, 0)], s[(1, 0)] - s[(0, 1)]) / 2.0;
                ke += 0.5 * l.mass * v.norm_squared() + 0.5 * om.dot(&(r * l.inertia * r.transpose() * om));
                ke += 0.5 * l.rotor * w[i] * w[i];
            }
            let wv = DVector::from_column_slice(&w);
            let ke_h = 0.5 * wv.dot(&(&h * &wv));
            assert!((ke_h - ke).abs() < 1e-6 * ke, "½ωᵀHω = {ke_h}, Σ link KE = {ke} at q={q:?}");
        }
    }

    #[test]
    fn spatial_bias_forces_match_lagrange() {
        // Lagrange's equations: c(q, ω) = Ḣ ω − ∂(½ωᵀHω)/∂q + ∂V/∂q, with the derivatives of
        // H and of V = −Σ m g·p_com taken by central differences. Unlike a power balance,
        // this also sees the power-free (gyroscopic) terms.
        let robot = spatial_chain();
        let mut rng = Lcg(3);
        let dq = 1e-6;
        for _ in 0..10 {
            let q: Vec<f64> = (0..3).map(|_| rng.next(-3.0, 3.0)).collect();
            let w: Vec<f64> = (0..3).map(|_| rng.next(-2.0, 2.0)).collect();
            let wv = DVector::from_column_slice(&w);
            let h_dot =
                (robot.inertia_matrix(&offset(&q, &w, dq)) - robot.inertia_matrix(&offset(&q, &w, -dq))) / (2.0 * dq);
            let mut expect = &h_dot * &wv;
            for i in 0..3 {
                let (mut qp, mut qm) = (q.clone(), q.clone());
                qp[i] += dq;
                qm[i] -= dq;
                let dh = (robot.inertia_matrix(&qp) - robot.inertia_matrix(&qm)) / (2.0 * dq);
                let state = |q: &[f64]| -> Vec<f64> { q.iter().copied().chain([0.0; 3]).collect() };
                let dv = (robot.energy(&state(&qp)).unwrap() - robot.energy(&state(&qm)).unwrap()) / (2.0 * dq);
                expect[i] += -0.5 * wv.dot(&(&dh * &wv)) + dv;
            }
            let c = robot.bias_forces(&q, &w);
            assert!(
                (&c - &expect).amax() < 1e-7 * (1.0 + expect.amax()),
                "c = {c} vs Lagrange {expect} at q={q:?} w={w:?}"
            );
        }
    }

    /// J̇ω (`Kinematics::tip_bias`) is the derivative of the tip velocity J(θ)ω along θ̇ = ω
    /// (central differences), and the tip's stage body at zero joint accelerations has it
    /// as its acceleration, with W = J H⁻¹ Jᵀ.
    #[test]
    fn the_tip_bias_is_the_derivative_of_the_tip_velocity() {
        let robot = spatial_chain();
        let (q, w) = ([0.4, -1.3, 2.2], [0.7, -0.4, 1.1]);
        let tip_velocity = |h: f64| {
            let qh: Vec<f64> = q.iter().zip(&w).map(|(q, w)| q + h * w).collect();
            let k = robot.kinematics(&qh);
            k.tip_velocity(3, &robot.tip_point(&k), &w)
        };
        let h = 1e-6;
        let numeric = (tip_velocity(h) - tip_velocity(-h)) / (2.0 * h);
        let k = robot.kinematics(&q);
        let bias = k.tip_bias(3, &robot.tip_point(&k), &w);
        assert!((bias - numeric).norm() < 1e-7 * (1.0 + numeric.norm()), "{bias} against {numeric}");
        let x: Vec<f64> = q.iter().chain(&w).copied().collect();
        let body = robot.stage_body(&x, &[0.0; 6], 3).expect("a stage body");
        assert!((body.a - bias).norm() < 1e-12);
        let (hj, mobility) = robot.tip_mobility(&k).expect("H positive definite");
        assert_eq!(body.mobility, Some(mobility));
        let j = robot.jacobian_of(&k);
        let h = robot.crba(&k).fixed_view::<3, 3>(0, 0).into_owned();
        let expected = j.clone() * h.try_inverse().expect("H invertible") * j.transpose();
        assert!((mobility - expected).norm() < 1e-9 * expected.norm());
        assert!((hj.fixed_rows::<3>(0) - h.try_inverse().expect("H") * j.transpose()).norm() < 1e-9 * hj.norm());
    }

    /// The mobility between two ports (`stage_mobility`) is the change of one port's
    /// acceleration per unit force at the other, by differences of `derivative`: a torque at
    /// joint i or a force at the tip, the joint acceleration (along x) or the tip's J ω̇ read;
    /// at one port it is the stage body's W.
    #[test]
    fn the_mobility_between_two_ports_is_the_response_of_the_dynamics() {
        let robot = spatial_chain();
        let x = [0.4, -1.3, 2.2, 0.7, -0.4, 1.1];
        let k = robot.kinematics(&x[..3]);
        let j = robot.jacobian_of(&k);
        // The port accelerations (joint i along x, the tip's J ω̇: the bias cancels in the
        // difference) under a force at port `from` along `dir`.
        let response = |from: usize, dir: usize, f: f64| {
            let mut forces = [Force::scalar(0.0), Force::scalar(0.0), Force::scalar(0.0), Force::point(Vector3::zeros())];
            if from < 3 {
                forces[from] = Force::scalar(f);
            } else {
                forces[3] = Force::point(Vector3::ith(dir, f));
            }
            let mut dx = [0.0; 6];
            robot.derivative(&x, &forces, 0.0, 1e-3, &mut dx).expect("rates");
            let wd = nalgebra::Vector3::new(dx[3], dx[4], dx[5]);
            (wd, &j * wd)
        };
        for port in 0..4 {
            for from in 0..4 {
                let w = robot.stage_mobility(&x, port, from).expect("a mobility");
                let dirs = if from < 3 { 1 } else { 3 };
                for dir in 0..dirs {
                    let (wp, tp) = response(from, dir, 1.0);
                    let (wm, tm) = response(from, dir, -1.0);
                    let numeric = if port < 3 { Vector3::new((wp[port] - wm[port]) / 2.0, 0.0, 0.0) } else { (tp - tm) / 2.0 };
                    assert!((w.column(dir) - numeric).norm() < 1e-9 * (1.0 + numeric.norm()), "port {port} from {from} along {dir}: {} against {numeric}", w.column(dir));
                }
                if port == from {
                    let body = robot.stage_body(&x, &[0.0; 6], port).expect("a stage body");
                    assert_eq!(body.mobility, Some(w), "port {port}");
                }
            }
        }
    }

    #[test]
    fn crba_matches_rnea_columns() {
        let robot = spatial_chain();
        let zero_g = robot.clone().with_gravity(Vector3::zeros());
        let q = [0.4, -1.3, 2.2];
        let h = robot.inertia_matrix(&q);
        for j in 0..3 {
            let mut e = [0.0; 3];
            e[j] = 1.0;
            let col = zero_g.inverse_dynamics(&q, &[0.0; 3], &e);
            for i in 0..3 {
                assert!((col[i] - h[(i, j)]).abs() < 1e-13, "H[{i},{j}]: RNEA {} vs CRBA {}", col[i], h[(i, j)]);
            }
        }
        // And RNEA with accelerations = H θ̈ + c.
        let (w, wd) = ([0.5, -0.8, 1.7], [1.0, 2.0, -0.5]);
        let tau = robot.inverse_dynamics(&q, &w, &wd);
        let expect = &h * DVector::from_column_slice(&wd) + robot.bias_forces(&q, &w);
        assert!((tau - expect).amax() < 1e-12);
    }

    #[test]
    fn tip_matches_independent_kinematics() {
        let robot = spatial_chain();
        let q = [0.7, 0.2, -2.5];
        let t = frames(&robot, &q);
        let expect = t[2] * Point3::from(robot.tip());
        assert!((robot.tip_position(&q) - expect.coords).norm() < 1e-14);
        let arm = SerialRobot::planar(&[1.0, 0.5], &[1.0, 1.0]);
        let p = arm.tip_position(&[std::f64::consts::FRAC_PI_2, -std::f64::consts::FRAC_PI_2]);
        assert!((p - Vector3::new(0.5, 1.0, 0.0)).norm() < 1e-14, "{p}");
    }

    // ----- (3) virtual power at the tip port -----

    #[test]
    fn tip_port_virtual_power() {
        let robot = spatial_chain();
        let mut rng = Lcg(42);
        for _ in 0..20 {
            let q: Vec<f64> = (0..3).map(|_| rng.next(-3.0, 3.0)).collect();
            let w: Vec<f64> = (0..3).map(|_| rng.next(-2.0, 2.0)).collect();
            let f = Vector3::new(rng.next(-5.0, 5.0), rng.next(-5.0, 5.0), rng.next(-5.0, 5.0));
            let j = robot.tip_jacobian(&q);
            let wv = DVector::from_column_slice(&w);
            let p_cart = f.dot(&(&j * &wv));
            let jtf = j.transpose() * f;
            let p_joint = jtf.dot(&wv);
            assert!(close(p_cart, p_joint, 1e-13), "{p_cart} vs {p_joint}");

            // Port motion: position = tip_position, velocity = J ω = d/dt position.
            let x: Vec<f64> = q.iter().chain(&w).copied().collect();
            let m = robot.port_motion(&x, 3);
            assert!((m.p - robot.tip_position(&q)).norm() < 1e-15);
            assert!((m.v - &j * &wv).norm() < 1e-13);
            let dt = 1e-6;
            let fd = (robot.tip_position(&offset(&q, &w, dt)) - robot.tip_position(&offset(&q, &w, -dt))) / (2.0 * dt);
            assert!((fd - m.v).norm() < 1e-7 * (1.0 + m.v.norm()), "tip_v {} vs finite difference {}", m.v, fd);

            // The force enters (8) as Jᵀf: H Δω̇ = Jᵀf, so its power through the joints
            // equals f·v_tip; and the `tau` signal reports Jᵀf.
            let mut dx0 = [0.0; 6];
            let mut dx1 = [0.0; 6];
            let mut forces = [Force::ZERO; 4];
            robot.derivative(&x, &forces, 0.0, 1e-3, &mut dx0).unwrap();
            forces[3] = Force::point(f);
            robot.derivative(&x, &forces, 0.0, 1e-3, &mut dx1).unwrap();
            let dwd = DVector::from_fn(3, |i, _| dx1[3 + i] - dx0[3 + i]);
            let tau_f = robot.inertia_matrix(&q) * dwd;
            assert!((&tau_f - &jtf).amax() < 1e-10 * (1.0 + jtf.amax()), "H Δω̇ = {tau_f} vs Jᵀf = {jtf}");
            assert!(close(tau_f.dot(&wv), f.dot(&m.v), 1e-10));
            let probe = Probe { t: 0.0, tau: 1e-3, state: &x, rate: &dx1, motions: &[], forces: &forces };
            for i in 0..3 {
                assert!((robot.signal(2, i, &probe) - jtf[i]).abs() < 1e-13);
                assert!((robot.signal(4, i, &probe) - m.v[i]).abs() < 1e-15);
            }
        }
    }

    // ----- (4) energy: conservation without damping, power balance with ports -----

    fn rk4_step(robot: &SerialRobot, x: &mut [f64], forces: &[Force], dt: f64) {
        let n = x.len();
        let eval = |x: &[f64]| {
            let mut dx = vec![0.0; n];
            robot.derivative(x, forces, 0.0, dt, &mut dx).unwrap();
            dx
        };
        let add = |x: &[f64], k: &[f64], h: f64| -> Vec<f64> { x.iter().zip(k).map(|(a, b)| a + h * b).collect() };
        let k1 = eval(x);
        let k2 = eval(&add(x, &k1, dt / 2.0));
        let k3 = eval(&add(x, &k2, dt / 2.0));
        let k4 = eval(&add(x, &k3, dt));
        for i in 0..n {
            x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }

    #[test]
    fn free_arm_conserves_energy_under_rk4() {
        let robot = SerialRobot::planar(&[1.0, 0.8], &[1.0, 0.7]).with_gravity(Vector3::new(0.0, -9.81, 0.0));
        let mut x = [0.3, 0.5, 1.0, -2.0];
        let forces = [Force::ZERO; 3];
        let e0 = robot.energy(&x).unwrap();
        assert!(e0 > 5.0, "test needs a clearly non-zero energy, got {e0}");
        let mut travelled = 0.0;
        for _ in 0..1000 {
            let before = x[1];
            rk4_step(&robot, &mut x, &forces, 1e-3);
            travelled += (x[1] - before).abs();
        }
        assert!(travelled > 1.0, "the arm should actually move");
        let e1 = robot.energy(&x).unwrap();
        assert!(((e1 - e0) / e0).abs() < 1e-6, "energy drift {} relative ({e0} → {e1})", (e1 - e0) / e0);
    }

    #[test]
    fn power_balance_with_ports_and_damping() {
        // dE/dt = τ_portsᵀω − Σ b_i ω_i², for the spatial chain with gravity, rotors and damping.
        let robot = spatial_chain();
        let x = [0.4, -0.9, 1.3, 1.2, -0.8, 2.1];
        let forces =
            [Force::scalar(0.5), Force::scalar(-1.5), Force::scalar(0.8), Force::point(Vector3::new(2.0, -1.0, 3.0))];
        let mut dx = [0.0; 6];
        robot.derivative(&x, &forces, 0.0, 1e-3, &mut dx).unwrap();
        let h = 1e-6;
        let xs = |s: f64| -> Vec<f64> { x.iter().zip(&dx).map(|(a, b)| a + s * b).collect() };
        let de_dt = (robot.energy(&xs(h)).unwrap() - robot.energy(&xs(-h)).unwrap()) / (2.0 * h);
        let w = &x[3..];
        let j = robot.tip_jacobian(&x[..3]);
        let tip_v = &j * DVector::from_column_slice(w);
        let mut power = forces[3].f.dot(&Vector3::new(tip_v[0], tip_v[1], tip_v[2]));
        for i in 0..3 {
            power += forces[i].value() * w[i] - robot.links()[i].damping * w[i] * w[i];
        }
        assert!(close(de_dt, power, 1e-7), "dE/dt = {de_dt}, port power − dissipation = {power}");
    }

    #[test]
    fn singular_inertia_is_a_fault() {
        // One link with its mass on the joint axis and no rotational inertia: H = 0.
        let robot = SerialRobot::new(
            vec![Link::new(Vector3::zeros(), Vector3::z(), 1.0, Vector3::new(0.0, 0.0, 0.3), Matrix3::zeros())],
            Vector3::zeros(),
            Vector3::zeros(),
        )
        .unwrap();
        let mut dx = [0.0; 2];
        let r = robot.derivative(&[0.0, 1.0], &[Force::scalar(1.0), Force::ZERO], 0.0, 1e-3, &mut dx);
        assert!(matches!(r, Err(Fault(ref m)) if m.contains("positive definite")), "{r:?}");
    }

    // ----- (5) JSON -----

    fn from_json(v: serde_json::Value) -> Result<Box<dyn Admittance>> {
        let map = stiction_framework::system::Object::from_map(v.as_object().unwrap());
        let mut p = Params::new("components.arm", &map, Path::new("."));
        let built = build(&mut p)?;
        p.finish()?;
        match built {
            Built::Admittance(a) => Ok(a),
            _ => panic!("serial_robot must build an admittance"),
        }
    }

    fn err_text(v: serde_json::Value) -> String {
        match from_json(v) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    fn good_link() -> serde_json::Value {
        json!({ "origin": [0.5, 0, 0], "axis": [0, 0, 2], "mass": 1.0, "com": [0.25, 0, 0], "inertia": [0.001, 0.02, 0.02] })
    }

    #[test]
    fn json_builds_ports_signals_and_init() {
        let robot = from_json(json!({
            "links": [good_link(), { "axis": [0, 1, 0], "mass": 0.5, "inertia": [0.01, 0.01, 0.01, 0.001, 0, 0], "damping": 0.2, "rotor": 0.05 }],
            "tip": [0.3, 0, 0],
            "gravity": [0, 0, -9.81],
            "init": { "q": [0.1, 0.2], "w": [0.0, -1.0] }
        }))
        .unwrap();
        let layout = robot.layout();
        assert_eq!(layout.states, 4);
        let names: Vec<&str> = layout.ports.iter().map(|p| &*p.name).collect();
        assert_eq!(names, ["joint0", "joint1", "tip"]);
        assert_eq!(layout.ports[2].domain, Domain::Point3);
        let sigs: Vec<(&str, usize)> = robot.signals().iter().map(|s| (s.name, s.len)).collect();
        assert_eq!(sigs, [("q", 2), ("w", 2), ("tau", 2), ("tip", 3), ("tip_v", 3)]);
        let mut x = [0.0; 4];
        robot.init(&mut x);
        assert_eq!(x, [0.1, 0.2, 0.0, -1.0]);
        assert_eq!(robot.port_motion(&x, 1), Motion::scalar(0.2, -1.0));
        assert!(robot.port_inertia(&x, 1).unwrap() > 0.05);
        assert!(robot.port_inertia(&x, 2).is_none());
        let mut reg = Registry::new();
        register(&mut reg);
        assert!(reg.get("serial_robot").is_some());
    }

    #[test]
    fn json_errors_name_the_path() {
        let mut bad = good_link();
        bad["mass"] = json!(-1.0);
        let e = err_text(json!({ "links": [bad] }));
        assert!(e.contains("components.arm.links[0].mass"), "{e}");

        let mut zero_axis = good_link();
        zero_axis["axis"] = json!([0, 0, 0]);
        let e = err_text(json!({ "links": [good_link(), zero_axis] }));
        assert!(e.contains("links[1].axis") && e.contains("non-zero"), "{e}");

        let mut indefinite = good_link();
        indefinite["inertia"] = json!([0.01, 0.01, 0.01, 0.5, 0, 0]);
        assert!(err_text(json!({ "links": [indefinite] })).contains("links[0].inertia"));

        let mut four = good_link();
        four["inertia"] = json!([1, 1, 1, 0]);
        assert!(err_text(json!({ "links": [four] })).contains("links[0].inertia"));

        let mut unknown = good_link();
        unknown["length"] = json!(1.0);
        assert!(err_text(json!({ "links": [unknown] })).contains("links[0].length"));

        let mut negative_damping = good_link();
        negative_damping["damping"] = json!(-0.1);
        assert!(err_text(json!({ "links": [negative_damping] })).contains("links[0].damping"));

        assert!(err_text(json!({ "links": [] })).contains("components.arm.links"));
        assert!(err_text(json!({})).contains("components.arm.links"));
        let thirteen: Vec<_> = (0..13).map(|_| good_link()).collect();
        assert!(err_text(json!({ "links": thirteen })).contains("at most 12"));
        assert!(err_text(json!({ "links": [good_link()], "init": { "q": [0, 1] } })).contains("components.arm.init.q"));
        assert!(err_text(json!({ "links": [good_link()], "gravity": [0, 0] })).contains("components.arm.gravity"));
    }

    #[test]
    fn constructor_rejects_bad_links() {
        let l = || Link::new(Vector3::zeros(), Vector3::z(), 1.0, Vector3::zeros(), Matrix3::identity());
        assert!(SerialRobot::new(
            vec![l(), Link { axis: Vector3::zeros(), ..l() }],
            Vector3::zeros(),
            Vector3::zeros()
        )
        .unwrap_err()
        .contains("links[1].axis"));
        let asym = Matrix3::new(1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0);
        assert!(SerialRobot::new(vec![Link { inertia: asym, ..l() }], Vector3::zeros(), Vector3::zeros())
            .unwrap_err()
            .contains("symmetric"));
        assert!(SerialRobot::new(vec![], Vector3::zeros(), Vector3::zeros()).is_err());
        let robot = SerialRobot::new(
            vec![Link { axis: Vector3::new(0.0, 3.0, 4.0), ..l() }],
            Vector3::zeros(),
            Vector3::zeros(),
        )
        .unwrap();
        assert!((robot.links()[0].axis - Vector3::new(0.0, 0.6, 0.8)).norm() < 1e-15);
    }
}
