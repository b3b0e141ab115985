//! A Model Exchange FMU (FMI 2.0) as an admittance or an impedance: its continuous states
//! are the component's states, integrated by the network's RK4 or Euler; an admittance's state
//! events are located within the step, others handled at the step end (see the module
//! documentation of [`crate::fmi`]).

use super::mapping::{PortMap, Quantity, Role};
use super::{Clock, FmiError, Instance, Loaded, SignalTable};
use crate::component::{Admittance, Diagnostic, Fault, Impedance, Probe, SignalInfo};
use crate::port::{Domain, Force, Layout, Motion, PortInfo};
use crate::solver::Method;
use crate::system::Built;
use std::sync::{Mutex, MutexGuard};

/// Event iterations (fmi2NewDiscreteStates calls) allowed at one event.
const MAX_EVENT_ITERATIONS: usize = 100;

/// A state event is located within its step to this absolute time tolerance (s), by
/// bisection on the event indicators along the step's cubic Hermite state trajectory.
pub const EVENT_TOLERANCE: f64 = 1e-10;

struct Runtime {
    fmu: Instance,
    clock: Option<Clock>,
    /// Steps completed (admittance: post_step calls; impedance: the last step whose end
    /// was checked for events).
    done: u64,
    /// Event indicators at the last accepted point.
    z: Vec<f64>,
    z_new: Vec<f64>,
    /// States and derivatives at the last accepted point (the start of the next step), for
    /// locating a state event within the step.
    x_prev: Vec<f64>,
    dx_prev: Vec<f64>,
    /// Reused copy of an impedance's states for the step-end event check.
    scratch: Vec<f64>,
    /// The next time event requested by the FMU.
    next_time_event: Option<f64>,
    /// An error of `post_step` (which cannot return one), reported by the next evaluation.
    failed: Option<FmiError>,
    in_vrs: Vec<u32>,
    in_vals: Vec<f64>,
    out_vrs: Vec<u32>,
    out_vals: Vec<f64>,
}

/// A Model Exchange FMU component.
pub(crate) struct ModelEx {
    ports: Vec<PortMap>,
    role: Role,
    label: String,
    signals: SignalTable,
    /// Continuous states after initialization.
    x0: Vec<f64>,
    /// Capabilities and description warnings (`super::notes`).
    notes: Vec<Diagnostic>,
    rt: Mutex<Runtime>,
}

/// Wrapper implementing [`Admittance`].
pub(crate) struct MeAdmittance(ModelEx);
/// Wrapper implementing [`Impedance`].
pub(crate) struct MeImpedance(ModelEx);

/// The event iteration after initialization or at an event: NewDiscreteStates until no
/// more are needed, then continuous-time mode. Returns whether the states changed.
fn event_iteration(fmu: &mut Instance, next_time_event: &mut Option<f64>) -> Result<bool, FmiError> {
    let mut changed = false;
    for _ in 0..MAX_EVENT_ITERATIONS {
        let info = fmu.new_discrete_states()?;
        if info.terminate_simulation {
            return Err(fmu.error("fmi2NewDiscreteStates", "requested the end of the simulation (terminateSimulation)"));
        }
        changed |= info.values_of_continuous_states_changed;
        *next_time_event = info.next_event_time;
        if !info.new_discrete_states_needed {
            fmu.enter_continuous_time_mode()?;
            return Ok(changed);
        }
    }
    Err(fmu.error(
        "fmi2NewDiscreteStates",
        format!("still needs new discrete states after {MAX_EVENT_ITERATIONS} iterations (event iteration does not converge)"),
    ))
}

/// Make the component from an instance that has left initialization mode (FMI 2.0 ME: now
/// in event mode): finish the initial event iteration and read the initial states.
pub(crate) fn build(l: Loaded) -> Result<Built, FmiError> {
    let Loaded { mut fmu, ports, role, signals, notes } = l;
    let md = fmu.archive.description.clone();
    let mut next_time_event = None;
    event_iteration(&mut fmu, &mut next_time_event)?;
    let mut x0 = vec![0.0; md.states.len()];
    if !x0.is_empty() {
        fmu.get_states(&mut x0)?;
    }
    let mut z = vec![0.0; md.event_indicators];
    fmu.get_event_indicators(&mut z)?;
    let mut dx0 = vec![0.0; x0.len()];
    if !dx0.is_empty() {
        fmu.get_derivatives(&mut dx0)?;
    }
    let (mut in_vrs, mut out_vrs) = (Vec::new(), Vec::new());
    for p in &ports {
        match role {
            Role::Admittance => in_vrs.extend(p.force.iter().map(|r| r.vr)),
            Role::Impedance => {
                in_vrs.extend(p.position.iter().chain(&p.velocity).map(|r| r.vr));
                out_vrs.extend(p.force.iter().map(|r| r.vr));
            }
        }
    }
    let label = fmu.label.clone();
    let rt = Runtime {
        fmu,
        clock: None,
        done: 0,
        z_new: z.clone(),
        z,
        x_prev: x0.clone(),
        dx_prev: dx0,
        scratch: Vec::new(),
        next_time_event,
        failed: None,
        in_vals: vec![0.0; in_vrs.len()],
        in_vrs,
        out_vals: vec![0.0; out_vrs.len()],
        out_vrs,
    };
    let c = ModelEx { ports, role, label, signals, x0, notes, rt: Mutex::new(rt) };
    Ok(match role {
        Role::Admittance => Built::Admittance(Box::new(MeAdmittance(c))),
        Role::Impedance => Built::Impedance(Box::new(MeImpedance(c))),
    })
}

fn fault(e: FmiError) -> Fault {
    Fault::new(e.to_string())
}

impl ModelEx {
    fn lock(&self) -> Result<MutexGuard<'_, Runtime>, Fault> {
        self.rt.lock().map_err(|_| Fault::new(format!("{}: an earlier call panicked", self.label)))
    }

    fn layout(&self) -> Layout {
        Layout::new(self.x0.len(), self.ports.iter().map(|p| PortInfo::new(p.name.clone(), Domain::Scalar)).collect())
    }

    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        let clock = Clock::new(method, step, None)?;
        let mut rt = self.rt.lock().map_err(|_| format!("{}: an earlier call panicked", self.label))?;
        rt.clock = Some(clock);
        Ok(())
    }

    /// Set the time, the states and the inputs (`input(port, quantity)`); read the
    /// derivatives into `dx` and the mapped outputs into `rt.out_vals`.
    fn evaluate(
        &self,
        rt: &mut Runtime,
        t: f64,
        x: &[f64],
        dx: &mut [f64],
        input: impl Fn(usize, Quantity) -> f64,
    ) -> Result<(), FmiError> {
        let mut i = 0;
        for (p, port) in self.ports.iter().enumerate() {
            let quantities: &[(Quantity, &Option<super::VarRef>)] = match self.role {
                Role::Admittance => &[(Quantity::Force, &port.force)],
                Role::Impedance => &[(Quantity::Position, &port.position), (Quantity::Velocity, &port.velocity)],
            };
            for (q, r) in quantities {
                if let Some(r) = r {
                    rt.in_vals[i] = r.sign * input(p, *q);
                    i += 1;
                }
            }
        }
        let Runtime { fmu, in_vrs, in_vals, out_vrs, out_vals, .. } = rt;
        fmu.set_time(t)?;
        if !x.is_empty() {
            fmu.set_states(x)?;
        }
        fmu.set_f64(in_vrs, in_vals)?;
        if !dx.is_empty() {
            fmu.get_derivatives(dx)?;
        }
        if !out_vrs.is_empty() {
            fmu.get_f64(out_vrs, out_vals)?;
        }
        Ok(())
    }

    /// The end of an accepted step [t − h, t] with states `x` (the inputs are those of the
    /// last evaluation): fmi2CompletedIntegratorStep and the event indicators against those
    /// of the previous step. At a state event (an indicator changed sign) the event time t*
    /// is located by bisection to [`EVENT_TOLERANCE`] along the cubic Hermite trajectory
    /// through (x_prev, dx_prev) and (x, dx) — exact for the polynomial motion of a constant
    /// force — the event iteration runs at (t*, x(t*)), and the rest of the step, t − t*,
    /// is completed with one Euler step of the FMU's derivatives in its new mode. Time events
    /// and step events are handled at t. Returns whether `x` was changed.
    fn step_end(&self, rt: &mut Runtime, t: f64, h: f64, x: &mut [f64]) -> Result<bool, FmiError> {
        let Runtime { fmu, z, z_new, next_time_event, x_prev, dx_prev, .. } = rt;
        fmu.set_time(t)?;
        if !x.is_empty() {
            fmu.set_states(x)?;
        }
        let (enter, terminate) = fmu.completed_integrator_step()?;
        if terminate {
            return Err(
                fmu.error("fmi2CompletedIntegratorStep", format!("requested the end of the simulation at t = {t}"))
            );
        }
        fmu.get_event_indicators(z_new)?;
        let crosses = |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(a, b)| (*a > 0.0) != (*b > 0.0));
        let crossed = crosses(z, z_new);
        let timed = next_time_event.is_some_and(|te| t >= te);
        let mut changed = false;
        if crossed && !x.is_empty() && h > 0.0 {
            let n = x.len();
            let mut dx = vec![0.0; n];
            fmu.get_derivatives(&mut dx)?;
            let hermite = |s: f64, out: &mut [f64]| {
                let (s2, s3) = (s * s, s * s * s);
                let (h00, h10, h01, h11) = (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, 3.0 * s2 - 2.0 * s3, s3 - s2);
                for i in 0..n {
                    out[i] = h00 * x_prev[i] + h10 * h * dx_prev[i] + h01 * x[i] + h11 * h * dx[i];
                }
            };
            let (mut lo, mut hi) = (0.0f64, 1.0f64);
            let (mut xs, mut zs) = (vec![0.0; n], vec![0.0; z.len()]);
            while (hi - lo) * h > EVENT_TOLERANCE {
                let mid = 0.5 * (lo + hi);
                hermite(mid, &mut xs);
                fmu.set_time(t - h + mid * h)?;
                fmu.set_states(&xs)?;
                fmu.get_event_indicators(&mut zs)?;
                if crosses(z, &zs) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            let t_event = t - h + hi * h;
            hermite(hi, &mut xs);
            fmu.set_time(t_event)?;
            fmu.set_states(&xs)?;
            fmu.enter_event_mode()?;
            event_iteration(fmu, next_time_event)?;
            fmu.get_states(&mut xs)?;
            fmu.get_derivatives(&mut dx)?;
            for i in 0..n {
                x[i] = xs[i] + (t - t_event) * dx[i];
            }
            fmu.set_time(t)?;
            fmu.set_states(x)?;
            changed = true;
        } else if crossed || enter || timed {
            fmu.enter_event_mode()?;
            changed = event_iteration(fmu, next_time_event)?;
            if changed && !x.is_empty() {
                fmu.get_states(x)?;
            }
        }
        fmu.get_event_indicators(z_new)?;
        z.copy_from_slice(z_new);
        x_prev.copy_from_slice(x);
        if !x.is_empty() {
            fmu.get_derivatives(dx_prev)?;
        }
        Ok(changed)
    }

    fn signal(&self, which: usize, probe: &Probe) -> f64 {
        if let Some(x) = self.signals.fed(which, probe) {
            return x;
        }
        let Some(&(i, _)) = self.signals.vars.get(which) else { return f64::NAN };
        let Ok(mut rt) = self.rt.lock() else { return f64::NAN };
        let v = &rt.fmu.archive.description.variables[i];
        let (ty, vr) = (v.ty, v.vr);
        // The FMU holds the probe's evaluation (the last one before signals are read).
        rt.fmu.get_value(ty, vr).unwrap_or(f64::NAN)
    }

    fn diagnose(&self) -> Vec<Diagnostic> {
        vec![Diagnostic::Info(format!(
            "{} (FMI 2.0 Model Exchange) as an {} with {} continuous state(s); state events of an admittance are located within the step to {EVENT_TOLERANCE:e} s (an impedance's at step ends)",
            self.label,
            match self.role {
                Role::Admittance => "admittance",
                Role::Impedance => "impedance",
            },
            self.x0.len()
        ))]
        .into_iter()
        .chain(self.notes.iter().cloned())
        .collect()
    }
}

impl Admittance for MeAdmittance {
    fn layout(&self) -> Layout {
        self.0.layout()
    }
    fn init(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.0.x0);
    }
    /// Position and velocity from the mapped states (0 when not mapped).
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        let p = &self.0.ports[port];
        let get = |r: &Option<super::VarRef>| r.as_ref().and_then(|r| r.state.map(|s| r.sign * x[s])).unwrap_or(0.0);
        Motion::scalar(get(&p.position), get(&p.velocity))
    }
    /// fmi2SetTime, fmi2SetContinuousStates, the force inputs, fmi2GetDerivatives.
    fn derivative(&self, x: &[f64], forces: &[Force], t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let mut rt = self.0.lock()?;
        if let Some(e) = rt.failed.take() {
            return Err(fault(e));
        }
        self.0.evaluate(&mut rt, t, x, dx, |p, _| forces[p].value()).map_err(fault)
    }
    /// Events at the end of each step; the states are re-read after an event that changed them.
    fn post_step(&self, x: &mut [f64]) {
        let Ok(mut rt) = self.0.rt.lock() else { return };
        rt.done += 1;
        let Some(clock) = rt.clock else { return };
        let t = rt.done as f64 * clock.step;
        if let Err(e) = self.0.step_end(&mut rt, t, clock.step, x) {
            rt.failed = Some(e);
        }
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals.infos.clone()
    }
    fn signal(&self, which: usize, _elem: usize, probe: &Probe) -> f64 {
        self.0.signal(which, probe)
    }
    fn diagnose(&self, _x: &[f64], _step: f64) -> Vec<Diagnostic> {
        self.0.diagnose()
    }
}

impl Impedance for MeImpedance {
    fn layout(&self) -> Layout {
        self.0.layout()
    }
    fn init(&self, y: &mut [f64], _motion: &[Motion]) {
        y.copy_from_slice(&self.0.x0);
    }
    /// At the first stage of a step: the events of the step that ended there. Then
    /// fmi2SetTime, fmi2SetContinuousStates, the motion inputs, fmi2GetDerivatives and the
    /// force outputs.
    fn evaluate(
        &self,
        motion: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let mut rt = self.0.lock()?;
        let clock = rt
            .clock
            .ok_or_else(|| Fault::new(format!("{}: evaluated before Simulator::new prepared it", self.0.label)))?;
        if let Some(k) = clock.first_stage(t, tau) {
            if k > rt.done {
                rt.done = k;
                // An impedance cannot write its states back: events are handled at t, on a
                // copy of the states kept in the runtime (no allocation per step).
                let mut ys = std::mem::take(&mut rt.scratch);
                ys.clear();
                ys.extend_from_slice(y);
                let changed = self.0.step_end(&mut rt, t, 0.0, &mut ys);
                rt.scratch = ys;
                if changed.map_err(fault)? {
                    return Err(Fault::new(format!(
                        "{}: an event at t = {t} changed the FMU's continuous states, which an impedance cannot \
                         write back into the network state; wire this FMU as an admittance",
                        self.0.label
                    )));
                }
            }
        }
        self.0
            .evaluate(&mut rt, t, y, dy, |p, q| match q {
                Quantity::Position => motion[p].q(),
                _ => motion[p].qd(),
            })
            .map_err(fault)?;
        let mut k = 0;
        for (f, port) in force.iter_mut().zip(&self.0.ports) {
            let value = port.force.as_ref().map_or(0.0, |r| {
                let v = r.sign * rt.out_vals[k];
                k += 1;
                v
            });
            *f = Force::scalar(value);
        }
        Ok(())
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals.infos.clone()
    }
    fn signal(&self, which: usize, _elem: usize, probe: &Probe) -> f64 {
        self.0.signal(which, probe)
    }
    fn diagnose(&self, _inertia: &[Option<f64>], _step: f64) -> Vec<Diagnostic> {
        self.0.diagnose()
    }
}
