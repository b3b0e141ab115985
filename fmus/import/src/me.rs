//! A Model Exchange FMU (FMI 2.0 or 3.0) as an admittance or an impedance: its continuous
//! states are the component's states, integrated by the network's RK4 or Euler; an
//! admittance's state and time events are located within the step, an impedance's handled
//! at the step end (see the module documentation of [`crate`]).

use crate::mapping::{PortMap, Quantity, Role};
use crate::{Clock, FmiError, FmiVersion, Instance, Loaded, SignalTable};
use std::sync::{Mutex, MutexGuard};
use stiction_framework::system::Built;
use stiction_framework::{
    Admittance, Diagnostic, Domain, Fault, Force, Impedance, Layout, Method, Motion, PortInfo, Probe, SignalInfo,
    Tableau,
};

/// Event iterations (fmi2NewDiscreteStates / fmi3UpdateDiscreteStates calls) allowed at one event.
const MAX_EVENT_ITERATIONS: usize = 100;

/// A state event is located within its step to this absolute time tolerance (s), by
/// bisection on the event indicators along the step's cubic Hermite state trajectory.
pub const EVENT_TOLERANCE: f64 = 1e-10;

/// Events an admittance may locate within one network step before the FMU is taken to
/// chatter (Zeno behaviour) and the run stops with an error.
const MAX_EVENTS_PER_STEP: usize = 64;

/// One RK4 step of the FMU's own equations from (t, x, ẋ) over `r`, its inputs held at the
/// values last set, into `out`: the stages of the framework's [`Tableau::RK4`] (offsets
/// and weights of (13); its first rate is ẋ).
fn rk4_rest(fmu: &mut Instance, t: f64, r: f64, x: &[f64], dx: &[f64], out: &mut [f64]) -> Result<(), FmiError> {
    let tab = &Tableau::RK4;
    let n = x.len();
    let (mut k, mut xs) = (vec![0.0; n], vec![0.0; n]);
    let mut acc: Vec<f64> = dx.iter().map(|d| tab.weight[0] * d).collect();
    for stage in 1..tab.stages() {
        let (c, w) = (tab.offset[stage], tab.weight[stage]);
        let prev = if stage == 1 { dx } else { &k[..] };
        for i in 0..n {
            xs[i] = x[i] + c * r * prev[i];
        }
        fmu.set_time(t + c * r)?;
        fmu.set_states(&xs)?;
        fmu.get_derivatives(&mut k)?;
        for i in 0..n {
            acc[i] += w * k[i];
        }
    }
    for i in 0..n {
        out[i] = x[i] + r / tab.weight_sum * acc[i];
    }
    Ok(())
}

pub(crate) struct Runtime {
    pub(crate) fmu: Instance,
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
    /// Derivatives at the end of the step being checked (reused, no allocation per step).
    dx_end: Vec<f64>,
    /// Reused copy of an impedance's states for the step-end event check.
    scratch: Vec<f64>,
    /// The next time event requested by the FMU.
    next_time_event: Option<f64>,
    /// An error of `post_step` (which cannot return one), reported by the next evaluation.
    pub(crate) failed: Option<FmiError>,
    /// The FMU asked to end the simulation: (the network time of the end, message).
    pub(crate) stop: Option<(f64, String)>,
    in_vrs: Vec<u32>,
    in_kinds: Vec<crate::binary::VarKind>,
    in_vals: Vec<f64>,
    /// Per mapped input, in port order: its position in `in_vals`.
    in_pos: Vec<usize>,
    out_vrs: Vec<u32>,
    out_kinds: Vec<crate::binary::VarKind>,
    out_vals: Vec<f64>,
}

/// A Model Exchange FMU component.
pub(crate) struct ModelEx {
    ports: Vec<PortMap>,
    role: Role,
    pub(crate) label: String,
    pub(crate) version: FmiVersion,
    signals: SignalTable,
    /// Continuous states after initialization.
    pub(crate) x0: Vec<f64>,
    /// Capabilities and description warnings (`crate::notes`).
    pub(crate) notes: Vec<Diagnostic>,
    pub(crate) rt: Mutex<Runtime>,
}

/// Wrapper implementing [`Admittance`].
pub(crate) struct MeAdmittance(ModelEx);
/// Wrapper implementing [`Impedance`].
pub(crate) struct MeImpedance(ModelEx);

/// The event iteration after initialization or at an event: NewDiscreteStates until no
/// more are needed, then continuous-time mode. Returns whether the states changed, or `None`
/// if the FMU asked to end the simulation (terminateSimulation).
fn event_iteration(fmu: &mut Instance, next_time_event: &mut Option<f64>) -> Result<Option<bool>, FmiError> {
    let mut changed = false;
    for _ in 0..MAX_EVENT_ITERATIONS {
        let info = fmu.new_discrete_states()?;
        if info.terminate_simulation {
            return Ok(None);
        }
        changed |= info.values_of_continuous_states_changed;
        *next_time_event = info.next_event_time;
        if !info.new_discrete_states_needed {
            fmu.enter_continuous_time_mode()?;
            return Ok(Some(changed));
        }
    }
    Err(fmu.error(
        fmu.new_discrete_states_name(),
        format!("still needs new discrete states after {MAX_EVENT_ITERATIONS} iterations (event iteration does not converge)"),
    ))
}

/// Make the component from an instance that has left initialization mode (ME: now in
/// event mode): finish the initial event iteration and read the initial states.
pub(crate) fn build(l: Loaded) -> Result<Built, FmiError> {
    let role = l.role;
    let c = model(l)?;
    Ok(match role {
        Role::Admittance => Built::Admittance(Box::new(MeAdmittance(c))),
        Role::Impedance => Built::Impedance(Box::new(MeImpedance(c))),
    })
}

/// The runtime of a Model Exchange FMU from an instance that has left initialization mode
/// (now in event mode): the initial event iteration finished and the initial states read.
pub(crate) fn model(l: Loaded) -> Result<ModelEx, FmiError> {
    let Loaded { mut fmu, ports, role, signals, notes } = l;
    let md = fmu.archive.description.clone();
    let mut next_time_event = None;
    if event_iteration(&mut fmu, &mut next_time_event)?.is_none() {
        let name = fmu.new_discrete_states_name();
        return Err(fmu.error(name, "requested the end of the simulation (terminateSimulation) at initialization"));
    }
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
    // The mapped inputs and (impedance) force outputs; an admittance's motion is its states.
    let ((in_vrs, in_kinds), (mut out_vrs, mut out_kinds)) = crate::cs::vrs(&ports, role);
    if role == Role::Admittance {
        out_vrs.clear();
        out_kinds.clear();
    }
    let in_vals = crate::cs::input_values(&mut fmu, &in_vrs, &in_kinds)?;
    let (label, version) = (fmu.label.clone(), fmu.version);
    let rt = Runtime {
        fmu,
        clock: None,
        done: 0,
        z_new: z.clone(),
        z,
        x_prev: x0.clone(),
        dx_end: dx0.clone(),
        dx_prev: dx0,
        scratch: Vec::new(),
        next_time_event,
        failed: None,
        stop: None,
        in_pos: crate::cs::in_positions(&ports, role),
        in_vals,
        in_vrs,
        in_kinds,
        out_kinds,
        out_vals: vec![0.0; crate::cs::out_len(&ports, role)],
        out_vrs,
    };
    Ok(ModelEx { ports, role, label, version, signals, x0, notes, rt: Mutex::new(rt) })
}

pub(crate) fn fault(e: FmiError) -> Fault {
    Fault::new(e.to_string())
}

impl ModelEx {
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Runtime>, Fault> {
        self.rt.lock().map_err(|_| Fault::new(format!("{}: an earlier call panicked", self.label)))
    }

    pub(crate) fn layout(&self) -> Layout {
        Layout::new(self.x0.len(), self.ports.iter().map(|p| PortInfo::new(p.name.clone(), Domain::Scalar)).collect())
    }

    pub(crate) fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        let clock = Clock::new(method, step, None)?;
        let mut rt = self.rt.lock().map_err(|_| format!("{}: an earlier call panicked", self.label))?;
        rt.clock = Some(clock);
        Ok(())
    }

    /// Set the time, the states and the inputs (`input(port, quantity)`); read the
    /// derivatives into `dx` and the mapped outputs into `rt.out_vals`.
    pub(crate) fn evaluate(
        &self,
        rt: &mut Runtime,
        t: f64,
        x: &[f64],
        dx: &mut [f64],
        input: impl Fn(usize, Quantity) -> f64,
    ) -> Result<(), FmiError> {
        let mut j = 0;
        for (p, port) in self.ports.iter().enumerate() {
            let quantities: &[(Quantity, &Option<crate::VarRef>)] = match self.role {
                Role::Admittance => &[(Quantity::Force, &port.force)],
                Role::Impedance => &[(Quantity::Position, &port.position), (Quantity::Velocity, &port.velocity)],
            };
            for (q, r) in quantities {
                if let Some(r) = r {
                    // An element of an array input: the elements no port feeds keep their values.
                    rt.in_vals[rt.in_pos[j]] = r.sign * input(p, *q);
                    j += 1;
                }
            }
        }
        let Runtime { fmu, in_vrs, in_kinds, in_vals, out_vrs, out_kinds, out_vals, .. } = rt;
        fmu.set_time(t)?;
        if !x.is_empty() {
            fmu.set_states(x)?;
        }
        fmu.set_mixed(in_vrs, in_kinds, in_vals)?;
        if !dx.is_empty() {
            fmu.get_derivatives(dx)?;
        }
        if !out_vrs.is_empty() {
            fmu.get_mixed(out_vrs, out_kinds, out_vals)?;
        }
        Ok(())
    }

    /// The end of an accepted step [t − h, t] with states `x` (the inputs are those of the
    /// last evaluation): CompletedIntegratorStep, then the events of the step in time order.
    ///
    /// With h > 0 (an admittance, which may rewrite its states), the earliest event in
    /// (t₀, t], t₀ = t − h, is found: a state event (an indicator changed sign) located by
    /// bisection to [`EVENT_TOLERANCE`] along the cubic Hermite trajectory through (x₀, ẋ₀)
    /// and (x, ẋ) — exact for the polynomial motion of a constant force — or a time event
    /// t_e the FMU announced (nextEventTime), taken exactly. The event iteration runs at
    /// (t*, x(t*)), and the rest of the step, t − t*, is integrated again by one classical RK4
    /// step of the FMU's own equations in its new mode, its inputs held at their last values;
    /// the search repeats on [t*, t] for further events (at most [`MAX_EVENTS_PER_STEP`]).
    /// With h = 0 (an impedance) the events are handled at t. Returns whether `x` changed.
    fn step_end(&self, rt: &mut Runtime, t: f64, h: f64, x: &mut [f64]) -> Result<bool, FmiError> {
        let Runtime { fmu, z, z_new, next_time_event, x_prev, dx_prev, dx_end: dx, stop, .. } = rt;
        if stop.is_some() {
            return Ok(false);
        }
        fmu.set_time(t)?;
        if !x.is_empty() {
            fmu.set_states(x)?;
        }
        // A termination request ends the run at the end of this step (FMPy ends at the
        // time of the request too).
        let mut request = |fmu: &mut Instance, name: &'static str| {
            let msg = fmu.error(name, format!("asked to end the simulation at t = {t} s (terminateSimulation)"));
            *stop = Some((t, msg.to_string()));
        };
        let (enter, terminate) = fmu.completed_integrator_step()?;
        if terminate {
            let name = fmu.completed_integrator_step_name();
            request(fmu, name);
            return Ok(false);
        }
        fmu.get_event_indicators(z_new)?;
        let crosses = |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(a, b)| (*a > 0.0) != (*b > 0.0));
        let mut changed = false;
        if h > 0.0 && !x.is_empty() {
            let n = x.len();
            fmu.get_derivatives(dx)?;
            // The interval still to be searched, [t0, t], and its end points.
            let mut t0 = t - h;
            let mut located = 0;
            loop {
                let span = t - t0;
                let timed = next_time_event.filter(|&te| te <= t).map(|te| te.max(t0));
                let crossed = crosses(z, z_new);
                if span <= 0.0 || !(crossed || timed.is_some_and(|te| te < t)) {
                    break;
                }
                located += 1;
                if located > MAX_EVENTS_PER_STEP {
                    return Err(fmu.error(
                        fmu.new_discrete_states_name(),
                        format!(
                            "more than {MAX_EVENTS_PER_STEP} events within the step ending at t = {t} (chattering)"
                        ),
                    ));
                }
                let hermite = |s: f64, out: &mut [f64]| {
                    let (s2, s3) = (s * s, s * s * s);
                    let (h00, h10, h01, h11) =
                        (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, 3.0 * s2 - 2.0 * s3, s3 - s2);
                    for i in 0..n {
                        out[i] = h00 * x_prev[i] + h10 * span * dx_prev[i] + h01 * x[i] + h11 * span * dx[i];
                    }
                };
                // Fraction of the span at which the event happens: the time event, or the
                // state event found by bisection before it.
                let mut hi = timed.map_or(1.0, |te| (te - t0) / span);
                let mut xs = vec![0.0; n];
                if crossed {
                    let mut zs = vec![0.0; z.len()];
                    // Whether an indicator has changed sign by the fraction `s` of the span.
                    let mut crossed_by = |s: f64| -> Result<bool, FmiError> {
                        hermite(s, &mut xs);
                        fmu.set_time(t0 + s * span)?;
                        fmu.set_states(&xs)?;
                        fmu.get_event_indicators(&mut zs)?;
                        Ok(crosses(z, &zs))
                    };
                    if crossed_by(hi)? {
                        let mut lo = 0.0f64;
                        while (hi - lo) * span > EVENT_TOLERANCE {
                            let mid = 0.5 * (lo + hi);
                            if crossed_by(mid)? {
                                hi = mid;
                            } else {
                                lo = mid;
                            }
                        }
                    }
                }
                let t_event = t0 + hi * span;
                hermite(hi, &mut xs);
                fmu.set_time(t_event)?;
                fmu.set_states(&xs)?;
                fmu.enter_event_mode()?;
                if event_iteration(fmu, next_time_event)?.is_none() {
                    let name = fmu.new_discrete_states_name();
                    request(fmu, name);
                    return Ok(false);
                }
                fmu.get_states(&mut xs)?;
                // The rest of the step in the new mode: x_prev/dx_prev become the event point.
                x_prev.copy_from_slice(&xs);
                fmu.get_derivatives(dx_prev)?;
                fmu.get_event_indicators(z)?;
                rk4_rest(fmu, t_event, t - t_event, &xs, dx_prev, x)?;
                fmu.set_time(t)?;
                fmu.set_states(x)?;
                fmu.get_derivatives(dx)?;
                fmu.get_event_indicators(z_new)?;
                t0 = t_event;
                changed = true;
            }
        }
        let timed = next_time_event.is_some_and(|te| t >= te);
        if crosses(z, z_new) || enter || timed {
            fmu.enter_event_mode()?;
            let Some(c) = event_iteration(fmu, next_time_event)? else {
                let name = fmu.new_discrete_states_name();
                request(fmu, name);
                return Ok(false);
            };
            if c && !x.is_empty() {
                fmu.get_states(x)?;
            }
            changed |= c;
        }
        fmu.get_event_indicators(z_new)?;
        z.copy_from_slice(z_new);
        x_prev.copy_from_slice(x);
        if !x.is_empty() {
            fmu.get_derivatives(dx_prev)?;
        }
        Ok(changed)
    }

    /// The FMU's serialized state and the event bookkeeping (steps done, the indicators,
    /// states and derivatives at the last accepted point, the next time event, the inputs as
    /// last set, a stop request).
    pub(crate) fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        let mut rt = self.lock().map_err(|f| f.0)?;
        if let Some(e) = &rt.failed {
            return Err(e.to_string());
        }
        let fmu = rt.fmu.serialize_state().map_err(|e| e.to_string())?;
        let mut o = crate::hidden::Out::default();
        o.0.extend_from_slice(b"modelex1");
        o.u64(rt.done).f64s(&rt.z).f64s(&rt.x_prev).f64s(&rt.dx_prev).opt_f64(rt.next_time_event);
        o.f64s(&rt.in_vals);
        o.stop(&rt.stop);
        o.bytes(&fmu);
        Ok(Some(o.0))
    }

    pub(crate) fn restore_hidden(&self, bytes: &[u8]) -> Result<(), String> {
        let mut rt = self.lock().map_err(|f| f.0)?;
        let mut r = crate::hidden::In(bytes);
        r.tag(b"modelex1")?;
        let done = r.u64()?;
        let z = r.f64s(rt.z.len(), "event indicators")?;
        let x_prev = r.f64s(rt.x_prev.len(), "states")?;
        let dx_prev = r.f64s(rt.dx_prev.len(), "derivatives")?;
        let next_time_event = r.opt_f64()?;
        let in_vals = r.f64s(rt.in_vals.len(), "input values")?;
        let stop = r.stop()?;
        let fmu = r.bytes()?;
        r.end()?;
        rt.fmu.deserialize_state(fmu).map_err(|e| e.to_string())?;
        (rt.done, rt.z, rt.x_prev, rt.dx_prev, rt.next_time_event, rt.in_vals, rt.stop) =
            (done, z, x_prev, dx_prev, next_time_event, in_vals, stop);
        Ok(())
    }

    /// An admittance's step end: CompletedIntegratorStep and the events of the step
    /// ([`step_end`](Self::step_end)); an error is reported by the next evaluation.
    pub(crate) fn post_step(&self, x: &mut [f64]) {
        let Ok(mut rt) = self.rt.lock() else { return };
        rt.done += 1;
        let Some(clock) = rt.clock else { return };
        let t = rt.done as f64 * clock.step;
        if let Err(e) = self.step_end(&mut rt, t, clock.step, x) {
            rt.failed = Some(e);
        }
    }

    fn signal(&self, which: usize, elem: usize, probe: &Probe) -> f64 {
        if let Some(x) = self.signals.fed(which, elem, probe) {
            return x;
        }
        let Ok(mut rt) = self.rt.lock() else { return f64::NAN };
        // The FMU holds the probe's evaluation (the last one before signals are read).
        self.signals.read_one(&mut rt.fmu, which, elem).unwrap_or(f64::NAN)
    }

    fn diagnose(&self) -> Vec<Diagnostic> {
        vec![Diagnostic::Info(format!(
            "{} (FMI {} Model Exchange) as an {} with {} continuous state(s); {}",
            self.label,
            self.version.label(),
            match self.role {
                Role::Admittance => "admittance",
                Role::Impedance => "impedance",
            },
            self.x0.len(),
            match self.role {
                Role::Admittance => format!(
                    "its state events are located within the step to {EVENT_TOLERANCE:e} s and its time events taken \
                     exactly, the rest of the step integrated again in the new mode"
                ),
                Role::Impedance => "its events are handled at the end of the step in which they occur".to_string(),
            }
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
        let get = |r: &Option<crate::VarRef>| r.as_ref().and_then(|r| r.state.map(|s| r.sign * x[s])).unwrap_or(0.0);
        Motion::scalar(get(&p.position), get(&p.velocity))
    }
    /// SetTime, SetContinuousStates, the force inputs, GetDerivatives.
    fn derivative(&self, x: &[f64], forces: &[Force], t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let mut rt = self.0.lock()?;
        if let Some(e) = rt.failed.take() {
            return Err(fault(e));
        }
        self.0.evaluate(&mut rt, t, x, dx, |p, _| forces[p].value()).map_err(fault)
    }
    /// Events at the end of each step; the states are re-read after an event that changed them.
    fn post_step(&self, x: &mut [f64]) {
        self.0.post_step(x)
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals.infos.clone()
    }
    fn signal(&self, which: usize, elem: usize, probe: &Probe) -> f64 {
        self.0.signal(which, elem, probe)
    }
    fn diagnose(&self, _x: &[f64], _step: f64) -> Vec<Diagnostic> {
        self.0.diagnose()
    }
    fn may_request_stop(&self) -> bool {
        true
    }
    fn stop_request(&self) -> Option<(f64, String)> {
        self.0.rt.lock().ok().and_then(|rt| rt.stop.clone())
    }
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        self.0.save_hidden()
    }
    fn restore_hidden(&self, bytes: &[u8]) -> Result<(), String> {
        self.0.restore_hidden(bytes)
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
    /// SetTime, SetContinuousStates, the motion inputs, GetDerivatives and the
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
                let v = r.sign * rt.out_vals[k + r.elem];
                k += r.len;
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
    fn signal(&self, which: usize, elem: usize, probe: &Probe) -> f64 {
        self.0.signal(which, elem, probe)
    }
    fn diagnose(&self, _inertia: &[Option<f64>], _step: f64) -> Vec<Diagnostic> {
        self.0.diagnose()
    }
    fn may_request_stop(&self) -> bool {
        true
    }
    fn stop_request(&self) -> Option<(f64, String)> {
        self.0.rt.lock().ok().and_then(|rt| rt.stop.clone())
    }
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        self.0.save_hidden()
    }
    fn restore_hidden(&self, bytes: &[u8]) -> Result<(), String> {
        self.0.restore_hidden(bytes)
    }
}
