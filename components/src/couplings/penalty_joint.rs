//! Penalty revolute joint I_joint of Simulation III (29): a stiff spring–damper on the
//! separation of two articulation points and on the bending of the joint axes, free
//! about the axis except for Kikuuwe friction (19) with one state e, plus an optional
//! actuator torque τ_M(t) about the axis.
//!
//! With articulation points p_a, p_b (the port motions, placed on the bodies by the
//! connections' `at` offsets), joint axes z_a = R_a n_a, z_b = R_b n_b and ω = ω_b − ω_a:
//! f_b = −K (p_b − p_a) − B (v_b − v_a)
//! m_b = K_r (z_b × z_a) − B_r (ω − (ω·z_a) z_a) + (τ_M(t) − f_fric) z_a
//! f_fric = gsat(F, (B_f + τK_f) ω·z_a + K_f e),  ė = (f_fric − K_f e)/(B_f + τK_f)
//! and port a receives the opposite wrench.
//!
//! Under RK4, where the links' inertias would not keep a spring stable at twice the step,
//! it is held implicitly with the two links ([`Impedance::stage_law`], one
//! [`StageLaw::Joint`] on each): the translational spring (its damping B + τK), the bending
//! spring (B_r + τK_r) and the twist friction ((19) in the paper's form), each decided on
//! its own estimate (the stepper's `held_frequency` and `held_moment_frequencies`); `check`
//! warns where one stays explicit and unstable.

use crate::friction::fric_k::FricK;
use crate::stage_form::{largest_stable_step, resolves_held, explicit_unstable};
use nalgebra::{UnitQuaternion, Vector3};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use stiction_framework::component::{Fault, HeldMoments, Impedance, Probe, SignalInfo, StageLaw};
use stiction_framework::StageSpring;
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::signal::{TimeFunction, Window};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// A revolute joint enforced by penalty forces, with joint friction and actuation.
#[derive(Clone, Debug)]
pub struct PenaltyJoint {
    /// Joint axis in the frame of body a and of body b (unit).
    pub axis_a: Vector3<f64>,
    pub axis_b: Vector3<f64>,
    /// Translational stiffness (N/m) and viscosity (N·s/m).
    pub k: f64,
    pub b: f64,
    /// Bending stiffness (N·m/rad) and viscosity (N·m·s/rad).
    pub k_rot: f64,
    pub b_rot: f64,
    /// Friction about the axis, (19).
    pub friction: FricK,
    /// Actuator torque about the axis, applied to b (reaction on a).
    pub torque: TimeFunction,
    /// The sub-step the stages belong to (RK4 with a table or piecewise torque).
    pub window: Window,
    /// Whether the translational spring is held implicitly with the two bodies
    /// ([`Impedance::held_frequency`]).
    pub coupled: Coupled,
}

/// [`PenaltyJoint::coupled`]: what the stepper decides once after `prepare`: whether the
/// translational spring and the bending spring are held implicitly with the bodies, and the
/// bending and twist springs' ω̄² on the bodies' rotational inertias (for `check`; NaN: not
/// told). The twist friction's decision is its [`FricK`]'s own.
#[derive(Debug)]
pub struct Coupled {
    translation: AtomicBool,
    bend: AtomicBool,
    omega2: [AtomicU64; 2],
}

impl Default for Coupled {
    fn default() -> Self {
        Coupled { translation: AtomicBool::new(false), bend: AtomicBool::new(false), omega2: [0, 1].map(|_| AtomicU64::new(f64::NAN.to_bits())) }
    }
}

impl Clone for Coupled {
    fn clone(&self) -> Self {
        let c = Coupled::default();
        c.set(self.get());
        c.set_bend(self.bend());
        c.set_omega2(self.omega2());
        c
    }
}

impl Coupled {
    fn get(&self) -> bool {
        self.translation.load(Ordering::Relaxed)
    }
    fn set(&self, on: bool) {
        self.translation.store(on, Ordering::Relaxed);
    }
    fn bend(&self) -> bool {
        self.bend.load(Ordering::Relaxed)
    }
    fn set_bend(&self, on: bool) {
        self.bend.store(on, Ordering::Relaxed);
    }
    fn omega2(&self) -> [f64; 2] {
        [0, 1].map(|k| f64::from_bits(self.omega2[k].load(Ordering::Relaxed)))
    }
    fn set_omega2(&self, w2: [f64; 2]) {
        for (a, w) in self.omega2.iter().zip(w2) {
            a.store(w.to_bits(), Ordering::Relaxed);
        }
    }
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("angle", 1, "rad", "rotation of b relative to a about the joint axis"),
    SignalInfo::new("rate", 1, "rad/s", "relative angular velocity about the axis"),
    SignalInfo::new("friction", 1, "N·m", "friction torque f of (19) about the axis"),
    SignalInfo::new("separation", 3, "m", "p_b − p_a"),
    SignalInfo::new("torque", 1, "N·m", "actuator torque"),
];

impl PenaltyJoint {
    /// Twist angle of b relative to a about the axis.
    pub fn angle(&self, ra: &UnitQuaternion<f64>, rb: &UnitQuaternion<f64>) -> f64 {
        let rel = ra.inverse() * rb;
        let q = rel.quaternion();
        2.0 * (q.imag().dot(&self.axis_a)).atan2(q.w)
    }
}

impl PenaltyJoint {
    /// The separation's damping in a stage of step τ: B, and B + τK where the spring is held
    /// implicitly with its bodies (the stage force at the separation advanced by τ v, as
    /// [`Impedance::stage_law`] takes it at Δ = 0).
    fn damping(&self, tau: f64) -> f64 {
        if self.coupled.get() {
            self.b + tau * self.k
        } else {
            self.b
        }
    }

    /// The bending damping in a stage of step τ: B_r, and B_r + τK_r where the bending spring
    /// is held implicitly (its angle advanced by τ ω within the stage, as the separation).
    fn bend_damping(&self, tau: f64) -> f64 {
        if self.coupled.bend() {
            self.b_rot + tau * self.k_rot
        } else {
            self.b_rot
        }
    }
}

impl Impedance for PenaltyJoint {
    /// Records the method in its joint friction ([`FricK`]'s prepare).
    fn prepare(&self, method: stiction_framework::Method, step: f64) -> std::result::Result<(), String> {
        self.coupled.set(false);
        self.coupled.set_bend(false);
        self.coupled.set_omega2([f64::NAN; 2]);
        self.friction.prepare(method, step)
    }
    fn couples_explicit_spring(&self) -> bool {
        true
    }
    /// Where RK4 would not keep the translational spring (K, B) stable at twice the step on
    /// the bodies' effective masses at the articulation points (`couple`, from the stepper),
    /// it is held implicitly with both bodies: their group solves its stage with the
    /// spring's law (never under Euler: the paper's Sim III is explicit).
    fn held_frequency(&self, method: stiction_framework::Method, step: f64, _omega2: Option<f64>, couple: Option<f64>) {
        let unresolved = couple.is_some_and(|w2| w2 == f64::INFINITY || !resolves_held(method, step, self.k, self.b, Some(w2)));
        self.coupled.set(method != stiction_framework::Method::Euler && unresolved);
    }
    fn implicit_coupling(&self) -> bool {
        self.coupled.get() || self.coupled.bend() || self.friction.form.coupled()
    }
    /// The bending spring (K_r, B_r) on the normal axes and the twist friction's held spring
    /// (K_f, B_f) about the axis z_a, as the stepper weighs them on the bodies' rotation.
    fn held_moments(&self) -> Option<HeldMoments> {
        let spring = |k, b, implicit| StageSpring { k, b, implicit, coupled: false };
        let f = &self.friction;
        Some(HeldMoments { axis: self.axis_a, bend: spring(self.k_rot, self.b_rot, false), twist: spring(f.k, f.b, true) })
    }
    /// Where RK4 would not keep the bending spring stable at twice the step on the bodies'
    /// rotational inertias (ω̄² from the stepper), it is held implicitly with them; the twist
    /// friction decides as any I_fricK element does (`StageForm::set_held_frequency`, its
    /// paper form: coupled where unstable at twice the step). Never under Euler.
    fn held_moment_frequencies(&self, method: stiction_framework::Method, step: f64, omega2: [f64; 2], couple: bool) {
        self.coupled.set_omega2(omega2);
        let rk4 = method != stiction_framework::Method::Euler;
        self.coupled.set_bend(rk4 && couple && !resolves_held(method, step, self.k_rot, self.b_rot, Some(omega2[0])));
        let f = &self.friction;
        f.form.set_held_frequency(method, step, f.k, f.b, None, couple.then_some(omega2[1]));
    }
    /// Held implicitly with its bodies: `check` says so (an info); a bending or twist spring
    /// RK4 would not keep stable at the step on the bodies' rotation, left explicit (the
    /// bodies take no stage laws, or `"hold": "explicit"`): a warning.
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<stiction_framework::component::Diagnostic> {
        use stiction_framework::component::Diagnostic;
        let mut out = Vec::new();
        if self.coupled.get() {
            out.push(crate::stability::coupled_info("penalty stiffness", self.k, inertia, step));
        }
        let [bend, twist] = self.coupled.omega2();
        let f = &self.friction;
        let parts = [
            ("bending spring K_rot", self.k_rot, self.b_rot, bend, self.coupled.bend(), false),
            ("twist friction's friction_K", f.k, f.b, twist, f.form.coupled(), !f.form.continuous_law()),
        ];
        for (what, k, b, w2, coupled, paper) in parts {
            if w2.is_nan() || w2 <= 0.0 {
                continue;
            }
            let inertia = k / w2;
            if coupled {
                out.push(Diagnostic::Info(format!(
                    "penalty joint: {what} = {k} on the bodies' rotational inertia {inertia:.3e} kg·m² (ω·T = {:.2}): held implicitly with them, stable at every step",
                    w2.sqrt() * step
                )));
            } else if explicit_unstable(step, inertia, k, b, paper) {
                out.push(Diagnostic::Warning(format!(
                    "penalty joint: {what} = {k} (damping {b}) on the bodies' rotational inertia {inertia:.3e} kg·m² gives ω·T = {:.2}: \
                     the explicit stages diverge; use T < {:.3e} s, a smaller stiffness, or let the bodies hold it implicitly (\"hold\": \"auto\")",
                    w2.sqrt() * step,
                    largest_stable_step(step, inertia, k, b, paper)
                )));
            }
        }
        out
    }
    /// The parts held implicitly as one [`StageLaw::Joint`] on each body: the translational
    /// spring–damper in the articulation points' relative velocity change Δ, their separation
    /// d = p_b − p_a advancing τ (v + Δ) within the stage as (19)'s element does:
    /// f_b = −(K d + (B + τK)(v + Δ)), v = v_b − v_a; the bending spring in the relative
    /// angular velocity change, its angle advanced by τ (ω + Δω) the same way:
    /// m_b = K_r (z_b × z_a) − (B_r + τK_r)(ω + Δω)_⊥; the twist friction (19) about z_a,
    /// −gsat(F, K_f e + (B_f + τK_f)(ω + Δω)·z_a) z_a; on a the opposite, in a's relative
    /// change. A part left explicit is absent from the law (0, rate 0).
    fn stage_law(&self, m: &[Motion], y: &[f64], tau: f64, laws: &mut [StageLaw]) {
        let (a, b) = (&m[0], &m[1]);
        let zero = Vector3::zeros();
        let (w, c) = if self.coupled.get() {
            let c = self.b + tau * self.k;
            ((b.p - a.p) * self.k + (b.v - a.v) * c, c)
        } else {
            (zero, 0.0)
        };
        let (za, zb) = (a.rot * self.axis_a, b.rot * self.axis_b);
        let omega = b.w - a.w;
        let along = omega.dot(&za);
        let (bend, c_bend) = if self.coupled.bend() {
            let c = self.bend_damping(tau);
            (self.k_rot * zb.cross(&za) - (omega - along * za) * c, c)
        } else {
            (zero, 0.0)
        };
        let f = &self.friction;
        let (twist, c_twist, level) = if f.form.coupled() {
            let c = f.b + tau * f.k;
            (along * c + y[0] * f.k, c, f.f_max)
        } else {
            (0.0, 0.0, 0.0)
        };
        let law = |s: f64, at: Vector3<f64>| StageLaw::Joint { w: w * s, c, at, axis: za, bend: bend * s, c_bend, twist: twist * s, c_twist, level };
        if let [la, lb, ..] = laws {
            *la = law(-1.0, a.p);
            *lb = law(1.0, b.p);
        }
    }
    fn layout(&self) -> Layout {
        Layout::new(1, vec![PortInfo::new("a", Domain::Frame), PortInfo::new("b", Domain::Frame)])
    }
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        self.torque.next_break(t0, t1)
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.window.set(t0, t1);
    }
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let (a, b) = (&m[0], &m[1]);
        let fb = -self.k * (b.p - a.p) - self.damping(tau) * (b.v - a.v);
        let za = a.rot * self.axis_a;
        let zb = b.rot * self.axis_b;
        let w = b.w - a.w;
        let w_axis = w.dot(&za);
        let (fric, eps) = self.friction.scalar(w_axis, y[0], tau);
        dy[0] = eps;
        let mb = self.k_rot * zb.cross(&za) - self.bend_damping(tau) * (w - w_axis * za) + (self.window.eval(&self.torque, t) - fric) * za;
        force[1] = Force::wrench(fb, mb);
        force[0] = Force::wrench(-fb, -mb);
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        let (a, b) = (&p.motions[0], &p.motions[1]);
        let za = a.rot * self.axis_a;
        match which {
            0 => self.angle(&a.rot, &b.rot),
            1 => (b.w - a.w).dot(&za),
            2 => self.friction.scalar((b.w - a.w).dot(&za), p.state[0], p.tau).0,
            3 => (b.p - a.p)[e],
            _ => self.torque.eval(p.t),
        }
    }
    fn energy(&self, m: &[Motion], y: &[f64]) -> Option<f64> {
        let (a, b) = (&m[0], &m[1]);
        let d = b.p - a.p;
        let c = (a.rot * self.axis_a).dot(&(b.rot * self.axis_b));
        Some(0.5 * self.k * d.norm_squared() + self.k_rot * (1.0 - c) + 0.5 * self.friction.k * y[0] * y[0])
    }
    /// The translational penalty spring–damper (K, B) between the articulation points, as
    /// the stuck-state analysis sees it on each body's mass (with τK and the bodies' stage
    /// where it is held implicitly with them); the bending spring K_r and the joint friction
    /// (19) act on rotational inertias that analysis does not model.
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        let coupled = self.coupled.get();
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: coupled, coupled })
    }
}

fn unit_axis(p: &mut Params, key: &str, default: Vector3<f64>) -> Result<Vector3<f64>> {
    let v = p.vec3_or(key, [default.x, default.y, default.z])?;
    let n = v.norm();
    if n < 1e-12 {
        return Err(p.err(key, "axis must be non-zero"));
    }
    Ok(v / n)
}

fn build(p: &mut Params) -> Result<Built> {
    let axis = unit_axis(p, "axis", Vector3::z())?;
    let axis_a = unit_axis(p, "axis_a", axis)?;
    let axis_b = unit_axis(p, "axis_b", axis)?;
    let k = p.positive("K")?;
    let b = p.nonneg("B")?;
    let k_rot = p.positive("K_rot")?;
    let b_rot = p.nonneg("B_rot")?;
    let friction = FricK {
        domain: Domain::Scalar,
        k: p.positive("friction_K")?,
        b: p.positive("friction_B")?,
        f_max: p.nonneg_or("friction_F", 0.0)?,
        form: Default::default(),
    };
    let torque = p.time_fn_or("torque", 0.0)?;
    Ok(Built::Impedance(Box::new(PenaltyJoint {
        axis_a,
        axis_b,
        k,
        b,
        k_rot,
        b_rot,
        friction,
        torque,
        window: Window::default(),
        coupled: Coupled::default(),
    })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "penalty_joint", "axis_a": [0, 0, 1], "axis_b": [0, 1, 0], "K": 10000.0, "B": 10.0, "K_rot": 1000.0, "B_rot": 1.0, "friction_K": 100.0, "friction_B": 1.0, "friction_F": 0.5, "torque": "0.1*t"}"#,
    r#"{"type": "penalty_joint", "axis": [0, 0, 1], "K": 10000.0, "B": 10.0, "K_rot": 1000.0, "B_rot": 1.0, "friction_K": 100.0, "friction_B": 1.0}"#,
];

/// Register `penalty_joint`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "penalty_joint",
        kind: Kind::Impedance,
        summary: "penalty revolute joint with friction (19) about its axis and an actuator torque (Sim III, (29))",
        params: &[
            ParamDoc { name: "axis", unit: "", default: Some("[0, 0, 1]"), doc: "joint axis in both body frames" },
            ParamDoc { name: "axis_a", unit: "", default: Some("axis"), doc: "joint axis in the frame of body a" },
            ParamDoc { name: "axis_b", unit: "", default: Some("axis"), doc: "joint axis in the frame of body b" },
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "separation stiffness, > 0" },
            ParamDoc { name: "B", unit: "N·s/m", default: None, doc: "separation viscosity, ≥ 0" },
            ParamDoc { name: "K_rot", unit: "N·m/rad", default: None, doc: "axis bending stiffness, > 0" },
            ParamDoc { name: "B_rot", unit: "N·m·s/rad", default: None, doc: "axis bending viscosity, ≥ 0" },
            ParamDoc { name: "friction_K", unit: "N·m/rad", default: None, doc: "joint friction stiffness K of (19)" },
            ParamDoc {
                name: "friction_B",
                unit: "N·m·s/rad",
                default: None,
                doc: "joint friction viscosity B of (19)",
            },
            ParamDoc { name: "friction_F", unit: "N·m", default: Some("0"), doc: "joint friction level F of (19)" },
            ParamDoc {
                name: "torque",
                unit: "N·m",
                default: Some("0"),
                doc: "actuator torque τ_M(t) on b about the axis: a time function (or a signal)",
            },
        ],
        ports: &[
            PortDoc { name: "a", domain: "frame", doc: "articulation point on the parent body (or ground)" },
            PortDoc { name: "b", domain: "frame", doc: "articulation point on the child body" },
        ],
        signals: SIGNALS,
        build,
    });
}
