//! Prescribed motion: an admittance whose port moves with a given velocity u(t) whatever
//! force acts on it (an ideal, infinitely stiff actuator or a moving wall). It drives
//! impedances such as springs and model B/C contacts.
//!
//! The velocity state tracks u implicitly: v̇ = (u(t + τ) − v)/τ, so the Euler method gives
//! v(k) = u(kT) exactly. The position rate is q̇ = u(t + τ) under `"method": "euler"`
//! (q(k) = q(k−1) + T u(kT), the papers' form) and q̇ = u(t) under RK4, whose stages then
//! integrate u with Simpson's rule (fourth order; a ramp or cubic exactly) instead of
//! drifting by ¾·u̇·T² per step ([`StageForm`], docs/explanation/friction.md).
//!
//! A table or piecewise u has breaks (kinks, jumps). Under RK4 the step ends a sub-step at
//! each ([`Admittance::next_break`]) and tells the source the sub-step it is in
//! ([`Window`]): u(t) and the look-ahead u(t + τ) of the last stages, which reaches past the
//! sub-step's end, are read from the piece that holds inside it, and at a jump the velocity
//! state starts the sub-step after it on the new side ([`Admittance::at_break`]). Read across
//! the kink they cost the run its order (the conveyor example: 1–2, now 4.6;
//! docs/explanation/modular-rk4.md).
//!
//! Under RK4 the port's velocity in each stage is u at the stage's time, so that what the
//! source drives sees the prescribed motion at fourth order. With v̇ = (u(t + τ) − v)/τ the
//! third stage's velocity was v₀ + u(t₀ + T) − u(t₀ + T/2), off by T² ü/4: a mass driven
//! through a spring by u = 0.4 sin 2πt m/s was second order. Told every (sub-)step
//! ([`Window`]), the source gives each stage r the rate k_r that makes the next stage state
//! u there and the step's end u(t₀ + h) (`stage_rate`).

use crate::stage_form::StageForm;
use crate::ndim::{dims_param, domain_of, load, store, vec_n_or_zero, DIMS_DOC};
use nalgebra::Vector3;
use stiction_framework::component::{Admittance, Fault, Probe, SignalInfo, StageBody};
use stiction_framework::port::{Force, Layout, Motion, PortInfo};
use stiction_framework::signal::{next_break_of, TimeFunction, Window};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Error, Method, Result};

/// A port moving with velocity u(t): state [q (n), v (n)].
#[derive(Clone, Debug)]
pub struct VelocitySource {
    pub dims: usize,
    pub velocity: Vec<TimeFunction>,
    pub q0: Vector3<f64>,
    /// Euler (paper) or RK4 position rate, set by `prepare`.
    pub form: StageForm,
    /// The sub-step whose stages come next (RK4 with a table or piecewise velocity; none
    /// before the stepper tells one): u is read from the piece that holds inside it.
    pub window: Window,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 0, "m", "position").of_state(),
    SignalInfo::new("v", 0, "m/s", "velocity").of_state(),
    SignalInfo::new("f", 0, "N", "force the network applies to the source (the actuator supplies −f)"),
];

/// The rate of the velocity state in RK4 stage `t`, `tau` of the (sub-)step [t0, t0 + h]
/// with u0, u½, u1 the velocity at its start, middle and end: the next stage states are u½,
/// u½ and u1 (x₂ = v₀ + h k₁/2, x₃ = v₀ + h k₂/2, x₄ = v₀ + h k₃) and the step ends at v₀ +
/// h (k₁ + 2k₂ + 2k₃ + k₄)/6 = u1, from v₀ = u0. `None` for a stage that is not one of RK4's
/// four in that (sub-)step (then v̇ = (u(t + τ) − v)/τ).
fn stage_rate(t: f64, tau: f64, t0: f64, h: f64, u: impl Fn(f64) -> Vector3<f64>) -> Option<Vector3<f64>> {
    // Also no window (NaN).
    if h.is_nan() || h <= 0.0 {
        return None;
    }
    let (c, w) = ((t - t0) / h, tau / h);
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-9;
    let stage = [(0.0, 0.5), (0.5, 0.5), (0.5, 1.0), (1.0, 1.0)].iter().position(|&(ci, wi)| near(c, ci) && near(w, wi))?;
    let (u0, uh, u1) = (u(t0), u(t0 + 0.5 * h), u(t0 + h));
    let (dh, d1) = (uh - u0, u1 - u0);
    Some(match stage {
        0 | 1 => dh * (2.0 / h),
        2 => d1 / h,
        _ => (d1 * 4.0 - dh * 6.0) / h,
    })
}

impl VelocitySource {
    /// u(t); within a sub-step the stepper bounded by the velocity's breaks, from the
    /// piece that holds inside it ([`TimeFunction::eval_on`]).
    fn u(&self, t: f64) -> Vector3<f64> {
        let mut v = Vector3::zeros();
        for (i, f) in self.velocity.iter().enumerate() {
            v[i] = self.window.eval(f, t);
        }
        v
    }
}

impl Admittance for VelocitySource {
    fn layout(&self) -> Layout {
        Layout::new(2 * self.dims, vec![PortInfo::new("body", domain_of(self.dims))])
    }
    fn init(&self, x: &mut [f64]) {
        let n = self.dims;
        store(&self.q0, &mut x[..n], n);
        store(&self.u(0.0), &mut x[n..], n);
    }
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        let n = self.dims;
        Motion::point(load(x, n), load(&x[n..], n))
    }
    fn derivative(&self, x: &[f64], _f: &[Force], t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let n = self.dims;
        let target = self.u(t + tau);
        if !target.iter().all(|v| v.is_finite()) {
            return Err(Fault::new(format!("velocity is not finite at t = {}", t + tau)));
        }
        let rate = if self.form.is_euler() { target } else { self.u(t) };
        if !rate.iter().all(|v| v.is_finite()) {
            return Err(Fault::new(format!("velocity is not finite at t = {t}")));
        }
        store(&rate, &mut dx[..n], n);
        let (t0, t1) = (self.window.start(), self.window.end());
        let staged = if self.form.is_euler() { None } else { stage_rate(t, tau, t0, t1 - t0, |t| self.u(t)) };
        store(&staged.unwrap_or_else(|| (target - load(&x[n..], n)) / tau), &mut dx[n..], n);
        Ok(())
    }
    fn prepare(&self, method: Method, _step: f64) -> std::result::Result<(), String> {
        self.form.set(method);
        Ok(())
    }
    /// Its velocity follows its input, whatever the forces on it.
    fn prescribes_motion(&self) -> bool {
        true
    }
    /// Its point with the acceleration of its input's stage (the rates `derivative` wrote).
    fn stage_body(&self, x: &[f64], dx: &[f64], _port: usize) -> Option<StageBody> {
        let n = self.dims;
        let (com, a) = (load(x, n), load(&dx[n..], n));
        Some(StageBody { prescribed: true, ..StageBody::point(1.0, com, a) })
    }
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        next_break_of(&self.velocity, t0, t1)
    }
    /// Under RK4 the stepper tells the source every (sub-)step (`stage_rate`).
    fn has_breaks(&self) -> bool {
        true
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.window.set(t0, t1);
    }
    /// The velocity state takes u at the sub-step's start on its own side of the break.
    fn at_break(&self, x: &mut [f64]) {
        let n = self.dims;
        let t0 = self.window.start();
        store(&self.u(t0), &mut x[n..], n);
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| SignalInfo { len: self.dims, ..*s }).collect()
    }
    fn signal(&self, which: usize, i: usize, p: &Probe) -> f64 {
        match which {
            0 => p.state[i],
            1 => p.state[self.dims + i],
            _ => p.forces[0].f[i],
        }
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let dims = dims_param(p)?;
    let path = p.key_path("velocity");
    let raw = p.get("velocity").ok_or_else(|| Error::invalid(&path, "missing required parameter"))?;
    let velocity = if dims == 1 && !raw.is_array() {
        vec![p.time_fn_value(raw, &path)?]
    } else {
        let a = raw
            .as_array()
            .ok_or_else(|| Error::invalid(&path, format!("expected an array of {dims} time functions")))?;
        if a.len() != dims {
            return Err(Error::invalid(
                &path,
                format!("dimension mismatch: expected {dims} time functions (dims = {dims}), got {}", a.len()),
            ));
        }
        a.iter()
            .enumerate()
            .map(|(i, v)| p.time_fn_value(v, &format!("{path}[{i}]")))
            .collect::<Result<Vec<_>>>()?
    };
    let mut q0 = Vector3::zeros();
    if let Some(mut init) = p.object("init")? {
        q0 = vec_n_or_zero(&mut init, "q", dims)?;
        init.finish()?;
    }
    Ok(Built::Admittance(Box::new(VelocitySource { dims, velocity, q0, form: StageForm::default(), window: Window::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "velocity_source", "dims": 2, "velocity": [1.0, "t"], "init": {"q": [0.5, 0.0]}}"#,
];

/// Register `velocity_source`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "velocity_source",
        kind: Kind::Admittance,
        summary: "prescribed velocity u(t) at a port (ideal actuator / moving wall), 1-3 D",
        params: &[
            DIMS_DOC,
            ParamDoc {
                name: "velocity",
                unit: "m/s",
                default: None,
                doc: "time function (dims = 1) or array of dims time functions",
            },
            ParamDoc {
                name: "init",
                unit: "",
                default: Some("{}"),
                doc: "initial state {\"q\"}",
            },
            ParamDoc {
                name: "init.q",
                unit: "m",
                default: Some("0"),
                doc: "initial position (number, or array of dims numbers)",
            },
        ],
        ports: &[PortDoc { name: "body", domain: "scalar|point3", doc: "the moving point" }],
        signals: SIGNALS,
        build,
    });
}
