//! A Model Exchange FMU as a signal block (`"role": "signal"`, `"interface": "me"`): a
//! controller or a filter used by its inputs and outputs that takes part in every stage of
//! the network's method. It is a port-less admittance (framework `Admittance` with
//! [`inputs`](Admittance::inputs)) whose states are the FMU's continuous states, integrated
//! by the network's RK4 or Euler with the runtime of the Model Exchange component (me.rs:
//! CompletedIntegratorStep, time events and state events located within the step, the
//! event iteration, saved states, isolation).
//!
//! At every stage the engine writes the signals connected to its inputs into their wires
//! (framework/src/stepper/bus.rs); `derivative` sets the stage time, the stage states and
//! the inputs (gain × the wire) and reads the derivatives. An output is a function of the
//! time, the states and the inputs it depends on (ModelStructure; an output that declares no
//! dependencies is taken to depend on every input): it is written at every stage from the
//! stage's state, those with direct feedthrough after the signals they depend on, so a
//! controller in a loop with a body keeps RK4's order. An algebraic loop (a cycle of
//! feedthrough outputs and connections) is refused when the system is compiled.
//!
//! The FMU leaves its initialization with its inputs at their start values (the network's
//! signals are not known before the first stage), and its initial states are read then. An
//! input no connection sets keeps its start value. Inputs, outputs and the other readable
//! variables (for output columns) are one signal per element, as for a Co-Simulation block.

use crate::block::{self, Scratch, Vars};
use crate::me::{fault, ModelEx};
use crate::{FmiError, Instance, Loaded};
use std::sync::Mutex;
use stiction_fmi_schema::structure::read_structure;
use stiction_fmi_schema::{Causality, Interface};
use stiction_framework::signal::Wire;
use stiction_framework::{Admittance, Diagnostic, Fault, Force, Layout, Method, Motion, Probe, SignalInfo};

/// A Model Exchange FMU signal block.
pub(crate) struct MeBlock {
    m: ModelEx,
    inputs: Vars,
    outputs: Vars,
    /// The other readable variables (parameters, locals, the inputs as set), for output columns.
    observed: Vars,
    /// Per output element: the input elements it depends on (all when undeclared).
    feed: Vec<Vec<usize>>,
    declared: Vec<bool>,
    io: Mutex<Inputs>,
}

/// The connected inputs and the scratch of one input set.
struct Inputs {
    /// Per input element: the wire its connection writes and the gain.
    wires: Vec<Option<(Wire, f64)>>,
    u: Vec<(usize, f64)>,
    vrs: Vec<u32>,
    kinds: Vec<crate::binary::VarKind>,
    vals: Vec<f64>,
    arrays: Vec<Vec<f64>>,
    touched: Vec<bool>,
}

/// Make the block from an instance that has left initialization mode (now in event mode).
pub(crate) fn build(mut l: Loaded) -> Result<MeBlock, FmiError> {
    let fmu = &mut l.fmu;
    let me = Interface::ModelExchange;
    let mut skipped = 0;
    let inputs = block::vars_of(fmu, Some(Causality::Input), me, &mut skipped);
    let mut outputs = block::vars_of(fmu, Some(Causality::Output), me, &mut skipped);
    let observed = block::vars_of(fmu, None, me, &mut skipped);
    let md = fmu.archive.description.clone();
    let structure = read_structure(&fmu.archive.xml, &md).map_err(|e| fmu.error("modelDescription.xml", e))?;
    let (mut feed, declared) = block::feedthrough(&structure, &inputs, &outputs);
    for (f, d) in feed.iter_mut().zip(&declared) {
        if !d {
            *f = (0..inputs.infos.len()).collect();
        }
    }
    // Every output is read at every stage from the stage's state (and its inputs).
    for info in &mut outputs.infos {
        *info = info.of_state();
    }
    if skipped > 0 {
        l.notes.push(block::too_long(skipped));
    }
    let arrays = block::array_starts(fmu, &inputs)?;
    let n = inputs.infos.len();
    let io = Inputs {
        wires: vec![None; n],
        u: Vec::with_capacity(n),
        vrs: Vec::new(),
        kinds: Vec::new(),
        vals: Vec::new(),
        touched: vec![false; arrays.len()],
        arrays,
    };
    let m = crate::me::model(l)?;
    Ok(MeBlock { m, inputs, outputs, observed, feed, declared, io: Mutex::new(io) })
}

impl MeBlock {
    /// Set the connected inputs to gain × their wires (one call; none when nothing is connected).
    fn set_inputs(&self, fmu: &mut Instance) -> Result<(), Fault> {
        let mut io = self.io.lock().map_err(|_| Fault::new(format!("{}: an earlier call panicked", self.m.label)))?;
        let Inputs { wires, u, vrs, kinds, vals, arrays, touched } = &mut *io;
        u.clear();
        u.extend(wires.iter().enumerate().filter_map(|(j, w)| w.as_ref().map(|(w, g)| (j, g * w.get()))));
        if u.is_empty() {
            return Ok(());
        }
        block::set_inputs(fmu, &self.inputs, Scratch { vrs, kinds, vals, arrays, touched }, u).map_err(fault)
    }

    /// Variable element `which` of `vars` at the time, states and inputs of `probe`.
    fn value(&self, vars: &Vars, which: usize, probe: &Probe) -> Result<f64, Fault> {
        let k = *vars.var.get(which).ok_or_else(|| Fault::new(format!("{}: no signal {which}", self.m.label)))?;
        let mut rt = self.m.lock()?;
        if let Some(e) = &rt.failed {
            return Err(Fault::new(e.to_string()));
        }
        self.set_inputs(&mut rt.fmu)?;
        let fmu = &mut rt.fmu;
        // Read at every stage: a scalar (the usual output) needs no buffer on the heap.
        let (mut one, mut many) = ([0.0], Vec::new());
        let v: &mut [f64] = match vars.kinds[k].1 {
            1 => &mut one,
            n => {
                many.resize(n, 0.0);
                &mut many
            }
        };
        (|| {
            fmu.set_time(probe.t)?;
            if !probe.state.is_empty() {
                fmu.set_states(probe.state)?;
            }
            fmu.get_mixed(&[vars.vrs[k]], &[vars.kinds[k]], v)
        })()
        .map_err(fault)?;
        Ok(v[vars.elem[which]])
    }
}

impl Admittance for MeBlock {
    fn layout(&self) -> Layout {
        self.m.layout()
    }
    fn init(&self, x: &mut [f64]) {
        x.copy_from_slice(&self.m.x0);
    }
    /// A block has no ports.
    fn port_motion(&self, _x: &[f64], _port: usize) -> Motion {
        Motion::REST
    }
    /// SetTime, SetContinuousStates, the inputs (gain × the stage's signals), GetDerivatives.
    fn derivative(&self, x: &[f64], _forces: &[Force], t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let mut rt = self.m.lock()?;
        if let Some(e) = rt.failed.take() {
            return Err(fault(e));
        }
        self.set_inputs(&mut rt.fmu)?;
        self.m.evaluate(&mut rt, t, x, dx, |_, _| 0.0).map_err(fault)
    }
    /// CompletedIntegratorStep and the step's events (me.rs), the inputs as the last stage set them.
    fn post_step(&self, x: &mut [f64]) {
        self.m.post_step(x)
    }
    fn prepare(&self, method: Method, step: f64) -> Result<(), String> {
        self.m.prepare(method, step)
    }
    /// The outputs (read at every stage), then the other readable variables.
    fn signals(&self) -> Vec<SignalInfo> {
        self.outputs.infos.iter().chain(&self.observed.infos).copied().collect()
    }
    fn signal(&self, which: usize, _elem: usize, probe: &Probe) -> f64 {
        let n = self.outputs.infos.len();
        let r = if which < n {
            self.value(&self.outputs, which, probe)
        } else {
            self.value(&self.observed, which - n, probe)
        };
        r.unwrap_or(f64::NAN)
    }
    fn inputs(&self) -> Vec<SignalInfo> {
        self.inputs.infos.clone()
    }
    fn connect_input(&self, input: usize, wire: Wire, gain: f64) -> Result<(), String> {
        let mut io = self.io.lock().map_err(|_| format!("{}: an earlier call panicked", self.m.label))?;
        let slot = io.wires.get_mut(input).ok_or_else(|| format!("{} has no input {input}", self.m.label))?;
        *slot = Some((wire, gain));
        Ok(())
    }
    fn signal_inputs(&self, which: usize) -> Vec<usize> {
        self.feed.get(which).cloned().unwrap_or_default()
    }
    fn diagnose(&self, _x: &[f64], _step: f64) -> Vec<Diagnostic> {
        let outs: Vec<String> = (0..self.outputs.infos.len())
            .map(|o| {
                let name = self.outputs.infos[o].name;
                let on: Vec<&str> = self.feed[o].iter().map(|&j| self.inputs.infos[j].name).collect();
                match (on.is_empty(), self.declared[o]) {
                    (true, _) => format!("{name} (from the state)"),
                    (false, true) => format!("{name} (direct feedthrough from {})", on.join(", ")),
                    (false, false) => format!("{name} (no declared dependencies: taken to feed through)"),
                }
            })
            .collect();
        let mut d = vec![Diagnostic::Info(format!(
            "signal block ({}, FMI {} Model Exchange, {} continuous state(s)): inputs {}; outputs {}; it takes part \
             in every stage (its states integrated by the network's method, its inputs and outputs read at every \
             stage); its state events are located within the step to {:e} s and its time events taken exactly",
            self.m.label,
            self.m.version.label(),
            self.m.x0.len(),
            block::list_names(&self.inputs.infos),
            if outs.is_empty() { "none".to_string() } else { outs.join(", ") },
            crate::me::EVENT_TOLERANCE,
        ))];
        d.extend(self.m.notes.iter().cloned());
        d
    }
    fn may_request_stop(&self) -> bool {
        true
    }
    fn stop_request(&self) -> Option<(f64, String)> {
        self.m.rt.lock().ok().and_then(|rt| rt.stop.clone())
    }
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        self.m.save_hidden()
    }
    fn restore_hidden(&self, bytes: &[u8]) -> Result<(), String> {
        self.m.restore_hidden(bytes)
    }
}
