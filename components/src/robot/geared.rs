//! n-DOF serial robot whose joints are driven through gears with asymmetric load-dependent
//! friction: the DAI (48) integrated by the implicit-Euler step (69)
//! (papers/gear-transmission-asymmetric-friction.txt, section 5; shared/MODELS.md §4).
//!
//! ```text
//!   M̂ = [m] + M(q),   P = ([γu][m] − [γv] M(q)) M̂⁻¹,   τv = h(q, v) + [b] v − τ_joint − Jᵀ f
//!   φ = [γu] τu + [γv] τv − P (τu − τv),   v* = v + τ M̂⁻¹ (τu − τv)
//!   v_new = v* − axproj(v*, τ M̂⁻¹, φ, P)
//! ```
//!
//! M(q) is the robot's inertia matrix (CRBA of [`SerialRobot`], the output-side gear inertia
//! being each link's `rotor`), h(q, v) its bias torques (RNEA), b the joint viscosities.
//! `derivative` returns v̇ = (v_new − v)/τ and, with `method: "euler"`, q̇ = v_new, so this is
//! (69) exactly and the velocity of a stuck joint is exactly 0.0. Under RK4 q̇ = v, the stage
//! velocity ([`StageForm`], docs/explanation/gear.md): with γ = 0 the stages are RK4 on the robot's
//! equations of motion (fourth order).
//!
//! v_new by axproj ([`axproj`](super::axproj)); failure of every axproj solver is a
//! [`Fault`]; the simulator names the robot and the time.
//!
//! Under RK4 each joint's stop, breakaway and change of driving direction are located within
//! the step (issue 43, as the 1-DOF gear's, [`StopSwitch`]): a joint's sliding velocity v_i is
//! a state switch (its direction locked past zero while the stepper searches:
//! [`Fix::Slip`] in axproj), and the joints' static margins |λ_i| − |f_i| and loads λ_i are
//! force switches, from the step's limit h → 0 with the modes of the sub-step's start
//! (`GearedRobot::margins`).

mod stage;

use super::axproj::{axproj_fixed, sigma_max, Axproj, Fix};
use super::json::{read_links, read_tip_gravity_init, LINK_PARAMS, TIP_GRAVITY_PARAMS};
use super::serial::SerialRobot;
use crate::doc_table::table;
use crate::gear::transmission::gear_model_params;
use crate::gear::transmission::{exact_rate, mode, read_input_inertia, read_model, GearModel};
use crate::stage_form::{StageForm, StopSwitch};
use std::sync::{Arc, Mutex};
use nalgebra::{DMatrix, DVector};
use std::sync::OnceLock;
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{
    Admittance, Diagnostic, Domain, Error, Fault, Force, Layout, Method, Motion, PortInfo, Probe, Result, SignalInfo,
};

/// The geared robot: state [q (n), v (n)].
#[derive(Clone, Debug)]
pub struct GearedRobot {
    pub robot: SerialRobot,
    pub gears: Vec<GearModel>,
    /// Input-side inertias referred to the outputs (> 0).
    pub m: Vec<f64>,
    /// Euler (paper (69)) or RK4 position rate, set by `prepare`.
    pub form: StageForm,
    /// Each joint's stop ([`StopSwitch`]), located under RK4.
    stops: Vec<StopSwitch>,
    /// While the stepper locks the sides: which joints were held where the (sub-)step
    /// started (the modes of the force switches, [`margins`](Self::margins)).
    held: Arc<Mutex<Option<Vec<bool>>>>,
    /// The kinematics of the last (q, v) ([`inertia_and_torques`](Self::inertia_and_torques)):
    /// the switches at a step's end and the next step's first stage read the same state.
    last: Arc<Mutex<Option<KinematicsAt>>>,
}

/// J(q), c(q, v) and M(q) at the state (q, v).
#[derive(Debug)]
struct KinematicsAt {
    qv: Vec<f64>,
    jac: nalgebra::Matrix3xX<f64>,
    bias: DVector<f64>,
    m: DMatrix<f64>,
}

/// Everything one step (69) computes.
#[derive(Clone, Debug)]
pub struct RobotStep {
    pub v: DVector<f64>,
    /// λ = φ + P f (the load-dependent mesh torque of each joint).
    pub lambda: DVector<f64>,
    pub axproj: Axproj,
    pub p: DMatrix<f64>,
}

impl GearedRobot {
    pub fn new(robot: SerialRobot, gears: Vec<GearModel>, m: Vec<f64>) -> std::result::Result<GearedRobot, String> {
        let n = robot.dof();
        if gears.len() != n || m.len() != n {
            return Err(format!("gears: expected one gear per joint ({n}), got {}", gears.len()));
        }
        if let Some(i) = m.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
            return Err(format!("gears[{i}].m: must be > 0, got {}", m[i]));
        }
        // One each: a clone shares its atomics.
        let stops = (0..n).map(|_| StopSwitch::default()).collect();
        let (held, last) = Default::default();
        Ok(GearedRobot { robot, gears, m, form: StageForm::default(), stops, held, last })
    }

    pub fn dof(&self) -> usize {
        self.robot.dof()
    }

    /// M̂ = \[m\] + M(q), M̂⁻¹ and P(q) of (52).
    pub fn matrices(&self, q: &[f64]) -> (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>) {
        self.matrices_of(self.robot.inertia_matrix(q))
    }

    /// [`matrices`](Self::matrices) from the link inertia M(q) = `big_m`.
    fn matrices_of(&self, big_m: DMatrix<f64>) -> (DMatrix<f64>, DMatrix<f64>, DMatrix<f64>) {
        let n = self.dof();
        let mut mhat = big_m.clone();
        for i in 0..n {
            mhat[(i, i)] += self.m[i];
        }
        let minv = match mhat.clone().cholesky() {
            Some(c) => c.inverse(),
            None => mhat.clone().try_inverse().unwrap_or_else(|| DMatrix::from_element(n, n, f64::NAN)),
        };
        let mut c = -big_m;
        for i in 0..n {
            for j in 0..n {
                c[(i, j)] *= self.gears[i].gamma_v;
            }
            c[(i, i)] += self.gears[i].gamma_u * self.m[i];
        }
        let p = c * &minv;
        (mhat, minv, p)
    }

    /// One step (69) of size h from (q, v) with actuator torques τu and output-side torques
    /// τv (bias, viscosity and external loads), all referred to the outputs.
    pub fn step(
        &self,
        q: &[f64],
        v: &[f64],
        tau_u: &DVector<f64>,
        tau_v: &DVector<f64>,
        h: f64,
    ) -> std::result::Result<RobotStep, String> {
        self.step_of(self.robot.inertia_matrix(q), v, tau_u, tau_v, h, &[])
    }

    /// [`step`](Self::step) from the link inertia M(q) = `big_m`.
    fn step_of(
        &self,
        big_m: DMatrix<f64>,
        v: &[f64],
        tau_u: &DVector<f64>,
        tau_v: &DVector<f64>,
        h: f64,
        fixed: &[Fix],
    ) -> std::result::Result<RobotStep, String> {
        let (minv, p, ta, phi) = self.loads(big_m, tau_u, tau_v);
        let vstar = DVector::from_column_slice(v) + (&minv * &ta) * h;
        let a = minv * h;
        if !(vstar.iter().chain(phi.iter()).all(|x| x.is_finite())) {
            return Err(format!(
                "non-finite torques or inertia (v* = {:?}, φ = {:?})",
                vstar.as_slice(),
                phi.as_slice()
            ));
        }
        let ax = axproj_fixed(&vstar, &a, &phi, &p, Some(v), fixed)?;
        let mut vn = &vstar - &ax.y;
        for i in 0..v.len() {
            if ax.stuck[i] {
                vn[i] = 0.0;
            }
        }
        let lambda = &phi + &p * &ax.f;
        Ok(RobotStep { v: vn, lambda, axproj: ax, p })
    }

    /// M̂⁻¹, P, τu − τv and φ (32) of the step (69) from the link inertia M(q) = `big_m`.
    fn loads(
        &self,
        big_m: DMatrix<f64>,
        tau_u: &DVector<f64>,
        tau_v: &DVector<f64>,
    ) -> (DMatrix<f64>, DMatrix<f64>, DVector<f64>, DVector<f64>) {
        let (_mhat, minv, p) = self.matrices_of(big_m);
        let ta = tau_u - tau_v;
        let mut phi = -(&p * &ta);
        for (i, g) in self.gears.iter().enumerate() {
            phi[i] += g.gamma_u * tau_u[i] + g.gamma_v * tau_v[i];
        }
        (minv, p, ta, phi)
    }

    /// M(q), τu and τv at state `x` = (q, v, …) with the port `forces`: one pass of the
    /// kinematics serves J, c and M.
    fn inertia_and_torques(&self, x: &[f64], forces: &[Force]) -> (DMatrix<f64>, DVector<f64>, DVector<f64>) {
        let n = self.dof();
        let (q, v) = (&x[..n], &x[n..2 * n]);
        let mut last = self.last.lock().ok();
        let kin = match last.as_deref_mut() {
            Some(Some(k)) if k.qv == x[..2 * n] => k,
            cache => {
                let (jac, bias, m) = self.robot.jacobian_bias_inertia(q, v);
                let m = DMatrix::from_fn(n, n, |i, j| m[(i, j)]);
                let bias = DVector::from_column_slice(bias.as_slice());
                let k = KinematicsAt { qv: x[..2 * n].to_vec(), jac, bias, m };
                match cache {
                    Some(c) => c.insert(k),
                    None => return self.torques_with(&k, v, forces),
                }
            }
        };
        self.torques_with(kin, v, forces)
    }

    /// (M(q), τu, τv) from the kinematics `k`.
    fn torques_with(&self, k: &KinematicsAt, v: &[f64], forces: &[Force]) -> (DMatrix<f64>, DVector<f64>, DVector<f64>) {
        let (tu, tv) = self.torques(&k.jac, k.bias.as_slice(), v, forces);
        (k.m.clone(), tu, tv)
    }

    /// One step (69) at state `x` = (q, v, …) with the port `forces`, the joints' imposed
    /// modes `fixed`: the step and (τu, τv).
    fn step_at(
        &self,
        x: &[f64],
        forces: &[Force],
        h: f64,
        fixed: &[Fix],
    ) -> (std::result::Result<RobotStep, String>, DVector<f64>, DVector<f64>) {
        let n = self.dof();
        let (big_m, tu, tv) = self.inertia_and_torques(x, forces);
        (self.step_of(big_m, &x[n..2 * n], &tu, &tv, h, fixed), tu, tv)
    }

    /// Whether joint `i` has friction (a frictionless gear, γu = γv = 0, switches nothing).
    fn rubs(&self, i: usize) -> bool {
        self.gears[i].gamma_u != 0.0 || self.gears[i].gamma_v != 0.0
    }

    /// Whether joint `i` is held: where the locked (sub-)step started, else in `x`.
    fn is_held(&self, held: Option<&[bool]>, x: &[f64], i: usize) -> bool {
        let n = self.dof();
        held.map_or_else(|| self.stops[i].stuck(&x[n + i..n + i + 1], x[2 * n + i]), |h| h[i])
    }

    /// The force switches at state `x` with the port `forces`, from the limit h → 0 of the
    /// step (69) with each joint's mode where the (sub-)step started (held, or slipping in
    /// the direction of its velocity): a held row keeps its acceleration zero, (M̂⁻¹ f)_i =
    /// (M̂⁻¹ (τu − τv))_i, a slipping row f_i = s_i |λ_i|. Returns, per joint, the static
    /// margin |λ_i| − |f_i| (held; −1 while slipping: no breakaway) and the load λ_i (the
    /// sign of φ + P f, a kink of |λ| (34)); `None` if no pattern solves.
    fn margins(&self, x: &[f64], forces: &[Force]) -> Option<(Vec<f64>, Vec<f64>)> {
        let n = self.dof();
        let (big_m, tu, tv) = self.inertia_and_torques(x, forces);
        let (minv, p, ta, phi) = self.loads(big_m, &tu, &tv);
        let accel = &minv * &ta;
        let held = self.held.lock().ok()?;
        let fixed: Vec<Fix> = (0..n)
            .map(|i| {
                let v = x[n + i];
                if self.is_held(held.as_deref(), x, i) {
                    Fix::Stuck
                } else if v != 0.0 {
                    Fix::Slip(if v > 0.0 { 1 } else { -1 })
                } else {
                    Fix::Slip(if accel[i] < 0.0 { -1 } else { 1 })
                }
            })
            .collect();
        drop(held);
        let ax = axproj_fixed(&accel, &minv, &phi, &p, None, &fixed).ok()?;
        let lambda = &phi + &p * &ax.f;
        let margin = (0..n)
            .map(|i| if fixed[i] == Fix::Stuck { lambda[i].abs() - ax.f[i].abs() } else { StopSwitch::SLIDING_MARGIN })
            .collect();
        Some((margin, lambda.iter().copied().collect()))
    }

    /// (τu, τv) from the port forces at speeds v, with the tip Jacobian J(q) = `jac` and the
    /// bias torques c(q, v) = `bias`.
    fn torques(
        &self,
        jac: &nalgebra::Matrix3xX<f64>,
        bias: &[f64],
        v: &[f64],
        forces: &[Force],
    ) -> (DVector<f64>, DVector<f64>) {
        let n = self.dof();
        let links = self.robot.links();
        let tip = forces[2 * n].f;
        let cmd = forces[2 * n + 1].f;
        let tau_u = DVector::from_fn(n, |i, _| self.gears[i].ratio * forces[i].value() + jac.column(i).dot(&cmd));
        let tau_v = DVector::from_fn(n, |i, _| {
            bias[i] + links[i].damping * v[i] - forces[n + i].value() - jac.column(i).dot(&tip)
        });
        (tau_u, tau_v)
    }

    /// The rates of (69) at the port `forces`, as `derivative` writes them.
    fn write_rates(&self, x: &[f64], forces: &[Force], tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let n = self.dof();
        let v = &x[n..2 * n];
        // A locked joint slides on in its direction past v = 0 ([`StopSwitch`]).
        let s = self.step_at(x, forces, tau, &self.locked()).0.map_err(Fault::new)?;
        let euler = self.form.is_euler();
        for i in 0..n {
            dx[i] = if euler || s.axproj.stuck[i] { s.v[i] } else { v[i] };
            dx[n + i] = exact_rate(v[i], s.v[i], tau);
            dx[2 * n + i] = (if s.v[i] == 0.0 { 1.0 } else { 0.0 } - x[2 * n + i]) / tau;
        }
        Ok(())
    }

    fn probe_step(&self, p: &Probe) -> Option<(RobotStep, DVector<f64>, DVector<f64>)> {
        let (s, tu, tv) = self.step_at(p.state, p.forces, p.tau, &[]);
        s.ok().map(|s| (s, tu, tv))
    }
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 0, "rad", "joint (output) angles").of_state(),
    SignalInfo::new("v", 0, "rad/s", "joint speeds (exactly 0.0 for a stuck joint with the euler method)").of_state(),
    SignalInfo::new("tip", 3, "m", "tip position (world frame)").of_state(),
    SignalInfo::new("lambda", 0, "N·m", "mesh load λ = φ + P f of each gear over the next step"),
    SignalInfo::new("mode", 0, "", "per joint: 0 stuck, +1 forward driving, −1 back driving (next step)"),
    SignalInfo::new("tau_u", 0, "N·m", "actuator torques referred to the outputs (motor ports and Jᵀ f_cmd)"),
    SignalInfo::new("tau_v", 0, "N·m", "output-side torques h(q, v) + b v − τ_joint − Jᵀ f_tip"),
];

impl Admittance for GearedRobot {
    fn layout(&self) -> Layout {
        let n = self.dof();
        let mut ports: Vec<PortInfo> = (0..n).map(|i| PortInfo::new(format!("motor{i}"), Domain::Scalar)).collect();
        ports.extend((0..n).map(|i| PortInfo::new(format!("joint{i}"), Domain::Scalar)));
        ports.push(PortInfo::new("tip", Domain::Point3));
        ports.push(PortInfo::new("tip_command", Domain::Point3));
        // [q, v, s]: s per joint is the stick indicator of the gear (docs/explanation/gear.md).
        Layout::new(3 * n, ports)
    }
    fn init(&self, x: &mut [f64]) {
        let n = self.dof();
        let mut tmp = vec![0.0; 2 * n];
        self.robot.init(&mut tmp);
        x[..2 * n].copy_from_slice(&tmp);
        for i in 0..n {
            x[2 * n + i] = if tmp[n + i] == 0.0 { 1.0 } else { 0.0 };
        }
    }
    fn post_step(&self, x: &mut [f64]) {
        let n = self.dof();
        for i in 0..n {
            if x[2 * n + i] > 0.5 {
                x[2 * n + i] = 1.0;
                x[n + i] = 0.0;
            } else {
                x[2 * n + i] = 0.0;
            }
        }
    }
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        let n = self.dof();
        if port < n {
            let k = self.gears[port].ratio;
            Motion::scalar(k * x[port], k * x[n + port])
        } else if port < 2 * n {
            Motion::scalar(x[port - n], x[port])
        } else {
            self.robot.port_motion(x, n)
        }
    }
    /// Each joint's stop or reversal ([`StopSwitch::switching`]).
    fn state_switches(&self) -> usize {
        self.dof()
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        let n = self.dof();
        for (i, g) in g.iter_mut().enumerate().take(n) {
            *g = if self.rubs(i) { self.stops[i].switching(&x[n + i..n + i + 1], x[2 * n + i]) } else { StopSwitch::NEVER };
        }
    }
    /// Per joint, its breakaway (the static margin while held) and its load λ_i through
    /// zero (`margins`).
    fn force_switches(&self) -> usize {
        2 * self.dof()
    }
    fn force_switchings(&self, x: &[f64], forces: &[Force], g: &mut [f64]) {
        let n = self.dof();
        let (margin, lambda) = self.margins(x, forces).unwrap_or_else(|| (vec![StopSwitch::NEVER; n], vec![StopSwitch::NEVER; n]));
        for i in 0..n {
            let rubs = self.rubs(i);
            g[i] = if rubs { margin[i] } else { StopSwitch::NEVER };
            g[n + i] = if rubs { lambda[i] } else { StopSwitch::NEVER };
        }
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        let n = self.dof();
        for (i, stop) in self.stops.iter().enumerate() {
            stop.lock(x.map(|x| (&x[n + i..n + i + 1], x[2 * n + i])));
        }
        if let Ok(mut held) = self.held.lock() {
            *held = x.map(|x| (0..n).map(|i| self.is_held(None, x, i)).collect());
        }
    }
    fn on_switch(&self, which: usize, x: &mut [f64]) {
        let n = self.dof();
        if which < n {
            let (mut v, mut s) = ([x[n + which]], x[2 * n + which]);
            self.stops[which].on_switch(&mut v, &mut s);
            (x[n + which], x[2 * n + which]) = (v[0], s);
        }
    }
    fn derivative(&self, x: &[f64], forces: &[Force], _t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        self.write_rates(x, forces, tau, dx)
    }
    /// A port that takes stage laws: its smallest inertia over the patterns (robot/geared/stage.rs).
    fn coupling_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        if self.stage_port(port) {
            self.stage_inertia(x, port)
        } else {
            self.port_inertia(x, port)
        }
    }
    // Motors, joints and tip: the coupled stage pattern by pattern of the joints' modes
    // (robot/geared/stage.rs).
    crate::modes::modal_stage_methods!();
    fn prepare(&self, method: Method, _step: f64) -> std::result::Result<(), String> {
        self.form.set(method);
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        let n = self.dof();
        SIGNALS.iter().map(|s| if s.len == 0 { SignalInfo { len: n, ..*s } } else { *s }).collect()
    }
    fn signal(&self, which: usize, elem: usize, p: &Probe) -> f64 {
        let n = self.dof();
        match which {
            0 => p.state[elem],
            1 => p.state[n + elem],
            2 => self.robot.tip_position(&p.state[..n])[elem],
            _ => match self.probe_step(p) {
                None => f64::NAN,
                Some((s, tu, tv)) => match which {
                    3 => s.lambda[elem],
                    4 => mode(s.v[elem], tu[elem], tv[elem]),
                    5 => tu[elem],
                    _ => tv[elem],
                },
            },
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let n = self.dof();
        let rotor: f64 = (0..n).map(|i| 0.5 * self.m[i] * x[n + i] * x[n + i]).sum();
        self.robot.energy(x).map(|e| e + rotor)
    }
    /// Moving: (69) moves q with v_new under Euler, with v under RK4.
    fn implicit_position(&self, method: Method) -> bool {
        method == Method::Euler
    }
    fn diagnose(&self, x: &[f64], _step: f64) -> Vec<Diagnostic> {
        let n = self.dof();
        let (_, _, p) = self.matrices(&x[..n]);
        let big_m = self.robot.inertia_matrix(&x[..n]);
        let mut out = Vec::new();
        for i in 0..n {
            for d in self.gears[i].diagnose(self.m[i], big_m[(i, i)]) {
                out.push(match d {
                    Diagnostic::Info(s) => {
                        Diagnostic::Info(format!("joint {i}: {s} (with M_ii at the initial configuration)"))
                    }
                    Diagnostic::Warning(s) => {
                        Diagnostic::Warning(format!("joint {i}: {s} (with M_ii at the initial configuration)"))
                    }
                });
            }
        }
        let Some(smax) = sigma_max(&p) else {
            out.push(Diagnostic::Warning(
                "P(q) is not finite at the initial configuration (the inertia overflows); σmax(P) is undefined".into(),
            ));
            return out;
        };
        if smax < 1.0 {
            out.push(Diagnostic::Info(format!(
                "σmax(P) = {smax:.6} at the initial configuration: the mesh loads λ are unique (57)"
            )));
        } else {
            out.push(Diagnostic::Warning(format!(
                "σmax(P) = {smax:.6} ≥ 1 at the initial configuration: (57) fails, λ may be non-unique or not exist; axproj may fail"
            )));
        }
        out
    }
    fn port_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        let n = self.dof();
        if port >= 2 * n {
            return None;
        }
        let i = port % n;
        let h = self.robot.inertia_matrix(&x[..n])[(i, i)] + self.m[i];
        let k = if port < n { self.gears[i].ratio } else { 1.0 };
        Some(h / (k * k))
    }
}

/// A validation message "links[1].mass: must be > 0" as an error at `path.links[1].mass`.
fn robot_error(path: &str, msg: String) -> Error {
    match msg.split_once(": ") {
        Some((field, rest)) if !field.contains(' ') => Error::invalid(format!("{path}.{field}"), rest),
        _ => Error::invalid(path, msg),
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let links = read_links(p)?;
    let n = links.len();
    let gear_params = p.objects("gears")?;
    if gear_params.len() != n {
        return Err(p.err("gears", format!("expected one gear per link ({n}), got {}", gear_params.len())));
    }
    let (mut gears, mut m) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for mut gp in gear_params {
        let model = read_model(&mut gp)?;
        m.push(read_input_inertia(&mut gp, model.ratio)?);
        gp.finish()?;
        gears.push(model);
    }
    let (tip, gravity, q0, w0) = read_tip_gravity_init(p, n, "v")?;
    let path = p.path().to_string();
    let robot =
        SerialRobot::new(links, tip, gravity).and_then(|r| r.with_init(q0, w0)).map_err(|m| robot_error(&path, m))?;
    let gr = GearedRobot::new(robot, gears, m).map_err(|m| robot_error(&path, m))?;
    Ok(Built::Admittance(Box::new(gr)))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "geared_robot", "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01]}], "gears": [{"gamma_u": 0.1, "gamma_v": 0.2, "ratio": 10.0, "m": 0.5}], "init": {"q": [0.1], "v": [0.2]}}"#,
    r#"{"type": "geared_robot", "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01]}], "gears": [{"efficiency": {"forward": 0.8, "backward": 0.6}, "input_inertia": 0.01, "ratio": 5.0}], "init": {"q": [0.1], "v": [0.2]}}"#,
    r#"{"type": "geared_robot", "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01]}], "gears": [{"leadscrew": {"lead_angle": 0.1, "mu": 0.2, "radius": 0.01, "thread_angle": 0.26}, "m": 0.5}], "init": {"q": [0.1], "v": [0.2]}}"#,
    r#"{"type": "geared_robot", "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01]}], "gears": [{"worm": {"lead_angle": 0.2, "pressure_angle": 0.35, "mu": 0.1, "worm_radius": 0.01, "gear_radius": 0.05}, "m": 0.5}], "init": {"q": [0.1], "v": [0.2]}}"#,
    r#"{"type": "geared_robot", "links": [{"axis": [0, 0, 1], "mass": 1.0, "com": [0.1, 0, 0], "inertia": [0.01, 0.01, 0.01]}], "gears": [{"spur": {"pressure_angle": 0.35, "mu": 0.1, "input_radius": 0.05, "output_radius": 0.1, "contact": 0.01}, "m": 0.5}], "init": {"q": [0.1], "v": [0.2]}}"#,
];

/// Register `geared_robot`.
pub fn register(r: &mut Registry) {
    static ALL: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    r.register(ComponentType {
        name: "geared_robot",
        kind: Kind::Admittance,
        summary: "n-DOF serial robot driven through gears with asymmetric load-dependent friction: DAI (48), step (69), axproj as a VI",
        params: table(
            &ALL,
            &[
                &[ParamDoc {
                    name: "links",
                    unit: "",
                    default: None,
                    doc: "as serial_robot: 1 to 12 links; damping is the joint viscosity (output side), rotor the \
                          output-side gear inertia m_v (added to M(q))",
                }],
                LINK_PARAMS,
                &[ParamDoc {
                    name: "gears",
                    unit: "",
                    default: None,
                    doc: "one object per joint: the keys of `gear` below, without M, damping and init",
                }],
                &gear_model_params!("gears[]."),
                TIP_GRAVITY_PARAMS,
                &[
                    ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"q\", \"v\"}" },
                    ParamDoc { name: "init.q", unit: "rad", default: Some("zeros"), doc: "initial joint angles [n]" },
                    ParamDoc { name: "init.v", unit: "rad/s", default: Some("zeros"), doc: "initial joint speeds [n]" },
                ],
            ],
        ),
        ports: &[
            PortDoc { name: "motor<i>", domain: "scalar", doc: "motor shaft of joint i: angle κ_i q_i; torque f̂ gives τu_i += κ_i f̂" },
            PortDoc { name: "joint<i>", domain: "scalar", doc: "output side of joint i: q_i, v_i; its torque acts on the link (τv_i −= torque)" },
            PortDoc { name: "tip", domain: "point3", doc: "end effector; an external force f on it gives τv −= Jᵀ f" },
            PortDoc { name: "tip_command", domain: "point3", doc: "Cartesian actuator command: a force f on it gives τu += Jᵀ f (the motors realise f by statics)" },
        ],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::axproj::*;
    use crate::test_util::Lcg;

    fn random_problem(
        rng: &mut Lcg,
        n: usize,
        gv_max: f64,
    ) -> (DVector<f64>, DMatrix<f64>, DVector<f64>, DMatrix<f64>) {
        let b = DMatrix::from_fn(n, n, |_, _| rng.next(-1.0, 1.0));
        let big_m = &b * b.transpose() + DMatrix::identity(n, n) * 0.3;
        let m = DVector::from_fn(n, |_, _| rng.next(0.2, 2.0));
        let mut mhat = big_m.clone();
        for i in 0..n {
            mhat[(i, i)] += m[i];
        }
        let minv = mhat.try_inverse().unwrap();
        let gu = DVector::from_fn(n, |_, _| rng.next(0.0, 0.3));
        let gv = DVector::from_fn(n, |_, _| rng.next(0.0, gv_max));
        let mut c = -big_m;
        for i in 0..n {
            for j in 0..n {
                c[(i, j)] *= gv[i];
            }
            c[(i, i)] += gu[i] * m[i];
        }
        let p = c * &minv;
        let h = 1e-3;
        let v = DVector::from_fn(n, |_, _| rng.next(-0.05, 0.05));
        let phi = DVector::from_fn(n, |_, _| rng.next(-20.0, 20.0));
        (v, minv * h, phi, p)
    }

    /// Every solver returns a solution of the VI, and they agree where P is small.
    #[test]
    fn solvers_satisfy_the_vi_and_agree() {
        let mut rng = Lcg(11);
        let mut checked = 0;
        for trial in 0..400 {
            let n = 2 + trial % 4;
            let (v, a, phi, p) = random_problem(&mut rng, n, 0.5);
            if p.singular_values().max() >= 0.9 {
                continue;
            }
            let r = axproj(&v, &a, &phi, &p, None).unwrap();
            let e = axproj_enumerate(&v, &a, &phi, &p, &[]).unwrap();
            let pr = axproj_projection(&v, &a, &phi, &p, 200_000).unwrap();
            for other in [&e, &pr] {
                assert!((&r.y - &other.y).amax() < 1e-9 * (1.0 + v.amax()), "{:?} vs {:?}", r.y, other.y);
            }
            // VI conditions.
            let vn = &v - &r.y;
            let lam = &phi + &p * &r.f;
            for i in 0..n {
                if r.stuck[i] {
                    assert!(r.f[i].abs() <= lam[i].abs() * (1.0 + 1e-9) + 1e-9);
                } else {
                    assert!(
                        vn[i] * r.f[i] >= -1e-12 && (r.f[i].abs() - lam[i].abs()).abs() < 1e-8 * (1.0 + lam[i].abs())
                    );
                }
            }
            checked += 1;
        }
        assert!(checked > 200, "{checked}");
    }
}
