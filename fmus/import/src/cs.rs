//! A Co-Simulation FMU as an admittance or an impedance (see the module documentation of
//! [`crate`] for the timing). The FMU instance lives behind a mutex: the traits take
//! `&self`, and the FMU is stepped from whichever thread evaluates the component.

use crate::mapping::{PortMap, Quantity, Role};
use crate::{Clock, FmiError, Instance, Loaded, SignalTable};
use std::sync::{Mutex, MutexGuard};
use stiction_framework::system::Built;
use stiction_framework::{
    Admittance, Diagnostic, Domain, Fault, Force, Impedance, Layout, Method, Motion, PortInfo, Probe, SignalInfo,
};

/// The mutable part: the instance and the communication bookkeeping.
struct Runtime {
    fmu: Instance,
    clock: Option<Clock>,
    /// Network step index of the next communication point.
    next: u64,
    /// Admittance: steps completed (post_step calls).
    done: u64,
    /// Admittance: the outputs of the last doStep, shown from step `at` on.
    pending: Option<Pending>,
    /// What the component presents now: admittance port motions [q0, v0, q1, v1, ...]
    /// (also in the state); impedance port forces.
    held: Vec<f64>,
    /// Values of the signal variables as presented (see [`SignalTable`]).
    shown: Vec<f64>,
    in_vrs: Vec<u32>,
    in_kinds: Vec<crate::binary::VarKind>,
    in_vals: Vec<f64>,
    /// Per mapped input, in port order: its position in `in_vals`.
    in_pos: Vec<usize>,
    out_vrs: Vec<u32>,
    out_kinds: Vec<crate::binary::VarKind>,
    out_vals: Vec<f64>,
    /// The FMU asked to end the simulation: (the network time of the end, message).
    stop: Option<(f64, String)>,
}

struct Pending {
    at: u64,
    held: Vec<f64>,
    shown: Vec<f64>,
}

/// A Co-Simulation FMU component.
pub(crate) struct CoSim {
    ports: Vec<PortMap>,
    role: Role,
    label: String,
    /// The communication step as given (None: the network step).
    h: Option<f64>,
    signals: SignalTable,
    /// Initial presented values (motion or force per port).
    initial: Vec<f64>,
    /// Capabilities and description warnings (`crate::notes`).
    notes: Vec<Diagnostic>,
    rt: Mutex<Runtime>,
}

/// Wrapper implementing [`Admittance`].
pub(crate) struct CsAdmittance(CoSim);
/// Wrapper implementing [`Impedance`].
pub(crate) struct CsImpedance(CoSim);

/// Read the presented outputs (per role) and every signal variable after a doStep or the
/// initialization.
fn read_outputs(
    fmu: &mut Instance,
    ports: &[PortMap],
    role: Role,
    signals: &SignalTable,
    out_vrs: &[u32],
    out_kinds: &[crate::binary::VarKind],
    out_vals: &mut [f64],
) -> Result<(Vec<f64>, Vec<f64>), FmiError> {
    fmu.get_mixed(out_vrs, out_kinds, out_vals)?;
    let mut held = Vec::new();
    let mut k = 0;
    for p in ports {
        let mut take = |r: &Option<crate::VarRef>| {
            r.as_ref().map_or(0.0, |r| {
                let x = r.sign * out_vals[k + r.elem];
                k += r.len;
                x
            })
        };
        match role {
            Role::Admittance => {
                let q = take(&p.position);
                let v = take(&p.velocity);
                held.extend([q, v]);
            }
            Role::Impedance => held.push(take(&p.force)),
        }
    }
    let shown = signals.read(fmu)?;
    Ok((held, shown))
}

/// The number of values the presented outputs return (an array output: all its elements).
pub(crate) fn out_len(ports: &[PortMap], role: Role) -> usize {
    ports
        .iter()
        .flat_map(|p| match role {
            Role::Admittance => [&p.position, &p.velocity],
            Role::Impedance => [&p.force, &None],
        })
        .flatten()
        .map(|r| r.len)
        .sum()
}

/// The values the mapped inputs start from: zeros, and for an element of an array input the
/// array's values after initialization (setting the element sets the whole array, so the
/// others are kept as the FMU had them).
pub(crate) fn input_values(
    fmu: &mut Instance,
    vrs: &[u32],
    kinds: &[crate::binary::VarKind],
) -> Result<Vec<f64>, FmiError> {
    let mut vals = vec![0.0; kinds.iter().map(|k| k.1).sum()];
    if kinds.iter().any(|k| k.1 > 1) {
        fmu.get_mixed(vrs, kinds, &mut vals)?;
    }
    Ok(vals)
}

/// The mapped inputs (fed from ports) and presented outputs, in port order.
pub(crate) fn port_vars(ports: &[PortMap], role: Role) -> (Vec<&crate::VarRef>, Vec<&crate::VarRef>) {
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    for p in ports {
        match role {
            Role::Admittance => {
                ins.extend(p.force.iter());
                outs.extend(p.position.iter().chain(&p.velocity));
            }
            Role::Impedance => {
                ins.extend(p.position.iter().chain(&p.velocity));
                outs.extend(p.force.iter());
            }
        }
    }
    (ins, outs)
}

/// The mapped inputs, each variable once (several elements of one array input share it):
/// value references, (type, number of values), and where each mapped input, in port order,
/// lies among their values (the variable's first value + the element).
fn unique_inputs(ins: &[&crate::VarRef]) -> (Vec<u32>, Vec<crate::binary::VarKind>, Vec<usize>) {
    let (mut vrs, mut kinds, mut starts, mut pos) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut total = 0;
    for r in ins {
        let k = match vrs.iter().position(|&v| v == r.vr) {
            Some(k) => k,
            None => {
                vrs.push(r.vr);
                kinds.push((r.ty, r.len));
                starts.push(total);
                total += r.len;
                vrs.len() - 1
            }
        };
        pos.push(starts[k] + r.elem);
    }
    (vrs, kinds, pos)
}

/// Where each mapped input (in port order) lies among the input values ([`vrs`]).
pub(crate) fn in_positions(ports: &[PortMap], role: Role) -> Vec<usize> {
    unique_inputs(&port_vars(ports, role).0).2
}

/// Value references and (type, number of values) of the mapped inputs (each variable once)
/// and outputs, in port order (see [`Instance::get_mixed`]).
#[allow(clippy::type_complexity)]
pub(crate) fn vrs(
    ports: &[PortMap],
    role: Role,
) -> ((Vec<u32>, Vec<crate::binary::VarKind>), (Vec<u32>, Vec<crate::binary::VarKind>)) {
    let (ins, outs) = port_vars(ports, role);
    let (in_vrs, in_kinds, _) = unique_inputs(&ins);
    ((in_vrs, in_kinds), (outs.iter().map(|r| r.vr).collect(), outs.iter().map(|r| (r.ty, r.len)).collect()))
}

/// Make the component from an initialized instance; `h` is the communication step.
pub(crate) fn build(l: Loaded, h: Option<f64>) -> Result<Built, FmiError> {
    let Loaded { mut fmu, ports, role, signals, notes } = l;
    let ((in_vrs, in_kinds), (out_vrs, out_kinds)) = vrs(&ports, role);
    let in_vals = input_values(&mut fmu, &in_vrs, &in_kinds)?;
    let mut out_vals = vec![0.0; out_len(&ports, role)];
    let (held, shown) = read_outputs(&mut fmu, &ports, role, &signals, &out_vrs, &out_kinds, &mut out_vals)?;
    let label = fmu.label.clone();
    let rt = Runtime {
        fmu,
        clock: None,
        next: 0,
        done: 0,
        pending: None,
        held: held.clone(),
        shown,
        in_pos: in_positions(&ports, role),
        in_vals,
        in_vrs,
        in_kinds,
        out_vals,
        out_vrs,
        out_kinds,
        stop: None,
    };
    let c = CoSim { ports, role, label, h, signals, initial: held, notes, rt: Mutex::new(rt) };
    Ok(match role {
        Role::Admittance => Built::Admittance(Box::new(CsAdmittance(c))),
        Role::Impedance => Built::Impedance(Box::new(CsImpedance(c))),
    })
}

impl CoSim {
    fn lock(&self) -> Result<MutexGuard<'_, Runtime>, Fault> {
        self.rt.lock().map_err(|_| Fault::new(format!("{}: an earlier call panicked", self.label)))
    }

    fn layout(&self, states: usize) -> Layout {
        Layout::new(states, self.ports.iter().map(|p| PortInfo::new(p.name.clone(), Domain::Scalar)).collect())
    }

    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        let clock = Clock::new(method, step, self.h)?;
        let mut rt = self.rt.lock().map_err(|_| format!("{}: an earlier call panicked", self.label))?;
        rt.clock = Some(clock);
        Ok(())
    }

    /// At the first stage of a step that starts at a communication point: set the inputs
    /// from `input(port, quantity)`, doStep over H and read the outputs. Returns the
    /// network step index of the communication point when a doStep was made.
    fn communicate(
        &self,
        rt: &mut Runtime,
        t: f64,
        tau: f64,
        input: impl Fn(usize, Quantity) -> f64,
    ) -> Result<Option<u64>, Fault> {
        let clock = rt
            .clock
            .ok_or_else(|| Fault::new(format!("{}: evaluated before Simulator::new prepared it", self.label)))?;
        let Some(k) = clock.first_stage(t, tau) else { return Ok(None) };
        if rt.stop.is_some() {
            // The FMU asked to end the simulation: it is not stepped again.
            return Ok(None);
        }
        if k < rt.next {
            return Ok(None);
        }
        if k > rt.next {
            return Err(Fault::new(format!(
                "{}: missed the communication point at step {} (now at step {k})",
                self.label, rt.next
            )));
        }
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
        let h = clock.n as f64 * clock.step;
        let Runtime { fmu, in_vrs, in_kinds, in_vals, out_vrs, out_kinds, out_vals, .. } = rt;
        fmu.set_mixed(in_vrs, in_kinds, in_vals).map_err(|e| Fault::new(e.to_string()))?;
        if let Some(last) = fmu.do_step(t, h).map_err(|e| Fault::new(e.to_string()))? {
            // A termination request (FMI 2.0 fmi2Terminated, FMI 3.0 terminateSimulation):
            // if the step was made, the run ends once the network reaches t + H, with these
            // outputs; else it ends at t, the communication point, with the outputs at t.
            let name = fmu.me_name("fmi2DoStep", "fmi3DoStep");
            let made = last >= t + h - 1e-9 * h;
            let msg = fmu
                .error(name, format!("asked to end the simulation; its last successful time is t = {last} s"))
                .to_string();
            if !made {
                // The outputs at t stay presented.
                rt.stop = Some((t, msg));
                return Ok(Some(k));
            }
            rt.stop = Some((t + h, msg));
        }
        let (held, shown) = read_outputs(fmu, &self.ports, self.role, &self.signals, out_vrs, out_kinds, out_vals)
            .map_err(|e| Fault::new(e.to_string()))?;
        rt.next = k + clock.n;
        match self.role {
            Role::Admittance => rt.pending = Some(Pending { at: rt.next, held, shown }),
            Role::Impedance => {
                rt.held = held;
                rt.shown = shown;
            }
        }
        Ok(Some(k))
    }

    /// The FMU's serialized state and the communication bookkeeping (next point, steps
    /// done, the outputs pending and presented, the inputs as last set, a stop request).
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        let mut rt = self.lock().map_err(|f| f.0)?;
        let fmu = rt.fmu.serialize_state().map_err(|e| e.to_string())?;
        let mut o = crate::hidden::Out::default();
        o.0.extend_from_slice(b"cosim1");
        o.u64(rt.next).u64(rt.done);
        match &rt.pending {
            Some(p) => o.u8(1).u64(p.at).f64s(&p.held).f64s(&p.shown),
            None => o.u8(0),
        };
        o.f64s(&rt.held).f64s(&rt.shown).f64s(&rt.in_vals);
        o.stop(&rt.stop);
        o.bytes(&fmu);
        Ok(Some(o.0))
    }

    fn restore_hidden(&self, bytes: &[u8]) -> Result<(), String> {
        let mut rt = self.lock().map_err(|f| f.0)?;
        let mut r = crate::hidden::In(bytes);
        r.tag(b"cosim1")?;
        let (next, done) = (r.u64()?, r.u64()?);
        let (nh, ns) = (rt.held.len(), rt.shown.len());
        let pending = if r.flag()? {
            Some(Pending { at: r.u64()?, held: r.f64s(nh, "presented values")?, shown: r.f64s(ns, "signal values")? })
        } else {
            None
        };
        let held = r.f64s(nh, "presented values")?;
        let shown = r.f64s(ns, "signal values")?;
        let in_vals = r.f64s(rt.in_vals.len(), "input values")?;
        let stop = r.stop()?;
        let fmu = r.bytes()?;
        r.end()?;
        rt.fmu.deserialize_state(fmu).map_err(|e| e.to_string())?;
        (rt.next, rt.done, rt.pending, rt.held, rt.shown, rt.in_vals, rt.stop) =
            (next, done, pending, held, shown, in_vals, stop);
        Ok(())
    }

    fn signals(&self) -> Vec<SignalInfo> {
        self.signals.infos.clone()
    }

    fn signal(&self, which: usize, elem: usize, probe: &Probe) -> f64 {
        if let Some(x) = self.signals.fed(which, elem, probe) {
            return x;
        }
        self.rt.lock().map(|rt| self.signals.pick(&rt.shown, which, elem)).unwrap_or(f64::NAN)
    }

    fn diagnose(&self) -> Vec<Diagnostic> {
        let h = self.h.map_or("the solver step".to_string(), |h| format!("{h} s"));
        let v = self.rt.lock().map(|rt| rt.fmu.version.label()).unwrap_or("?");
        vec![Diagnostic::Info(format!(
            "{} (FMI {v} Co-Simulation) as an {}, communication step {h}",
            self.label,
            match self.role {
                Role::Admittance => "admittance",
                Role::Impedance => "impedance",
            }
        ))]
        .into_iter()
        .chain(self.notes.iter().cloned())
        .collect()
    }
}

impl Admittance for CsAdmittance {
    /// State: the held motion [q, v] of every port (not integrated: the rates are zero and
    /// `post_step` writes the FMU's outputs).
    fn layout(&self) -> Layout {
        self.0.layout(2 * self.0.ports.len())
    }
    fn init(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.0.initial);
    }
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        Motion::scalar(x[2 * port], x[2 * port + 1])
    }
    /// Zero rates; at a communication point, the doStep with the port forces as inputs.
    fn derivative(&self, _x: &[f64], forces: &[Force], t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        dx.fill(0.0);
        let mut rt = self.0.lock()?;
        self.0.communicate(&mut rt, t, tau, |p, _| forces[p].value())?;
        Ok(())
    }
    /// After the step that reaches the end of a communication interval: present the FMU's
    /// outputs (exactly, not through a rate).
    fn post_step(&self, x: &mut [f64]) {
        let Ok(mut rt) = self.0.rt.lock() else { return };
        rt.done += 1;
        if rt.pending.as_ref().is_some_and(|p| p.at == rt.done) {
            if let Some(p) = rt.pending.take() {
                x.copy_from_slice(&p.held);
                rt.held = p.held;
                rt.shown = p.shown;
            }
        }
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals()
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

impl Impedance for CsImpedance {
    fn layout(&self) -> Layout {
        self.0.layout(0)
    }
    /// The forces of the last doStep; at a communication point, first the doStep with the
    /// port motions as inputs.
    fn evaluate(
        &self,
        motion: &[Motion],
        _y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        let mut rt = self.0.lock()?;
        self.0.communicate(&mut rt, t, tau, |p, q| match q {
            Quantity::Position => motion[p].q(),
            _ => motion[p].qd(),
        })?;
        for (f, h) in force.iter_mut().zip(&rt.held) {
            *f = Force::scalar(*h);
        }
        Ok(())
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.0.prepare(method, step)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        self.0.signals()
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
