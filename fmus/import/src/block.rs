//! A Co-Simulation FMU as a signal block (`"role": "signal"`): a controller or a plant model
//! from another tool, used by its inputs and outputs (framework `Block`). It is left in
//! initialization mode when built: the network sets its connected inputs until the outputs
//! settle, then exits initialization. At each communication point t_k the network sets the
//! FMU's connected inputs and calls doStep(t_k, T); the outputs are held over the step
//! (framework/src/stepper/bus.rs).
//!
//! Inputs are the FMU's scalar variables of causality input, outputs those of causality
//! output, each of any numeric type or Boolean (values checked against the type by
//! [`Instance::set_mixed`]); their direct feedthrough is read from ModelStructure (only
//! declared dependencies count, as for the FMU-only master's loops).

use crate::binary::VarKind;
use crate::{FmiError, Instance};
use std::sync::{Mutex, MutexGuard};
use stiction_fmi_schema::structure::{read_structure, Deps};
use stiction_fmi_schema::Causality;
use stiction_framework::{Block, Diagnostic, Fault, Method, SignalInfo};

/// The FMU's scalar inputs or outputs: names (leaked, as the import's signal tables are),
/// value references, kinds and variable indices.
struct Vars {
    infos: Vec<SignalInfo>,
    vrs: Vec<u32>,
    kinds: Vec<VarKind>,
    index: Vec<usize>,
}

/// A Co-Simulation FMU signal block.
pub(crate) struct CsBlock {
    label: String,
    inputs: Vars,
    outputs: Vars,
    /// Per output: the inputs (positions in `inputs`) it declares to depend on, and whether
    /// it declares its dependencies at all.
    feed: Vec<Vec<usize>>,
    declared: Vec<bool>,
    notes: Vec<Diagnostic>,
    /// The FMU declares canGetAndSetFMUstate="true" and exports the FMU-state functions.
    can_roll_back: bool,
    rt: Mutex<Runtime>,
}

struct Runtime {
    fmu: Instance,
    /// Scratch for one input set.
    vrs: Vec<u32>,
    kinds: Vec<VarKind>,
    vals: Vec<f64>,
    /// The FMU failed: not called again.
    ended: Option<String>,
    /// The FMU asked to end the simulation in the last doStep: its last successful time,
    /// whether it made the whole step, the message.
    stop: Option<(f64, bool, String)>,
}

fn vars_of(fmu: &Instance, causality: Causality) -> Vars {
    let md = &fmu.archive.description;
    let mut v = Vars { infos: Vec::new(), vrs: Vec::new(), kinds: Vec::new(), index: Vec::new() };
    for (i, var) in md.variables.iter().enumerate() {
        if var.causality != causality || !var.dimensions.is_empty() || var.ty == stiction_fmi_schema::VarType::Other {
            continue;
        }
        let name: &'static str = Box::leak(var.name.clone().into_boxed_str());
        let unit: &'static str = Box::leak(var.unit.clone().unwrap_or_default().into_boxed_str());
        let doc = match causality {
            Causality::Input => "FMU input",
            _ => "FMU output",
        };
        v.infos.push(SignalInfo::new(name, 1, unit, doc));
        v.vrs.push(var.vr);
        v.kinds.push((var.ty, 1));
        v.index.push(i);
    }
    v
}

/// Make the signal block from an initialized Co-Simulation instance.
pub(crate) fn build(mut fmu: Instance, mut notes: Vec<Diagnostic>) -> Result<CsBlock, FmiError> {
    let inputs = vars_of(&fmu, Causality::Input);
    let outputs = vars_of(&fmu, Causality::Output);
    let md = fmu.archive.description.clone();
    let structure = read_structure(&fmu.archive.xml, &md).map_err(|e| fmu.error("modelDescription.xml", e))?;
    let feed = outputs
        .index
        .iter()
        .map(|o| match structure.deps.get(o) {
            Some(Deps::On(on)) => (0..inputs.index.len()).filter(|&j| on.contains(&inputs.index[j])).collect(),
            _ => Vec::new(),
        })
        .collect();
    let declared = outputs.index.iter().map(|o| matches!(structure.deps.get(o), Some(Deps::On(_)))).collect();
    let skipped = md
        .variables
        .iter()
        .filter(|v| matches!(v.causality, Causality::Input | Causality::Output) && !v.dimensions.is_empty())
        .count();
    if skipped > 0 {
        notes.push(Diagnostic::Warning(format!(
            "{skipped} array input(s)/output(s) are not offered as block signals (scalars only)"
        )));
    }
    let label = fmu.label.clone();
    let can_roll_back = structure.can_get_and_set_state && fmu.can_save_state();
    // The FMU's own start values must be readable before the first exchange.
    let mut y = vec![0.0; outputs.vrs.len()];
    fmu.get_mixed(&outputs.vrs, &outputs.kinds, &mut y)?;
    let rt = Runtime { fmu, vrs: Vec::new(), kinds: Vec::new(), vals: Vec::new(), ended: None, stop: None };
    Ok(CsBlock { label, inputs, outputs, feed, declared, notes, can_roll_back, rt: Mutex::new(rt) })
}

impl CsBlock {
    fn lock(&self) -> Result<MutexGuard<'_, Runtime>, Fault> {
        self.rt.lock().map_err(|_| Fault::new(format!("{}: an earlier call panicked", self.label)))
    }
}

impl Runtime {
    /// A call of the FMU, refused after it failed; a failure is remembered.
    fn call<T>(&mut self, f: impl FnOnce(&mut Runtime) -> Result<T, FmiError>) -> Result<T, Fault> {
        if let Some(why) = &self.ended {
            return Err(Fault::new(why.clone()));
        }
        f(self).map_err(|e| {
            let m = e.to_string();
            self.ended = Some(format!("not called again after: {m}"));
            Fault::new(m)
        })
    }
}

impl Block for CsBlock {
    fn inputs(&self) -> Vec<SignalInfo> {
        self.inputs.infos.clone()
    }
    fn outputs(&self) -> Vec<SignalInfo> {
        self.outputs.infos.clone()
    }
    fn prepare(&self, _method: Method, step: f64) -> Result<(), String> {
        if !(step.is_finite() && step > 0.0) {
            return Err(format!("{}: the step {step} s is not a communication step", self.label));
        }
        Ok(())
    }
    fn read(&self, y: &mut [f64]) -> Result<(), Fault> {
        let out = &self.outputs;
        self.lock()?.call(|rt| rt.fmu.get_mixed(&out.vrs, &out.kinds, y))
    }
    fn set_inputs(&self, u: &[(usize, f64)]) -> Result<(), Fault> {
        if u.is_empty() {
            return Ok(());
        }
        let ins = &self.inputs;
        let mut rt = self.lock()?;
        rt.call(|rt| {
            rt.vrs.clear();
            rt.kinds.clear();
            rt.vals.clear();
            for &(j, v) in u {
                rt.vrs.push(ins.vrs[j]);
                rt.kinds.push(ins.kinds[j]);
                rt.vals.push(v);
            }
            let Runtime { fmu, vrs, kinds, vals, .. } = rt;
            fmu.set_mixed(vrs, kinds, vals)
        })
    }
    fn start(&self, y: &mut [f64]) -> Result<(), Fault> {
        let out = &self.outputs;
        self.lock()?.call(|rt| {
            rt.fmu.exit_initialization()?;
            rt.fmu.get_mixed(&out.vrs, &out.kinds, y)
        })
    }
    fn advance(&self, t: f64, h: f64, y: &mut [f64]) -> Result<(), Fault> {
        let out = &self.outputs;
        let mut rt = self.lock()?;
        rt.call(|rt| {
            if let Some(last) = rt.fmu.do_step(t, h)? {
                // terminateSimulation: the run ends after this step; the outputs are read
                // only if the FMU made the whole step.
                let made = last >= t + h - 1e-9 * h;
                let name = rt.fmu.me_name("fmi2DoStep", "fmi3DoStep");
                let msg = rt
                    .fmu
                    .error(name, format!("asked to end the simulation; its last successful time is t = {last} s"));
                rt.stop = Some((last, made, msg.to_string()));
                if !made {
                    return Ok(());
                }
            }
            rt.fmu.get_mixed(&out.vrs, &out.kinds, y)
        })
    }
    fn stop_request(&self) -> Option<(f64, bool, String)> {
        self.rt.lock().ok()?.stop.clone()
    }
    fn can_save_state(&self) -> bool {
        self.can_roll_back
    }
    fn save_state(&self) -> Result<(), Fault> {
        self.lock()?.call(|rt| rt.fmu.save_state())
    }
    fn restore_state(&self) -> Result<(), Fault> {
        self.lock()?.call(|rt| rt.fmu.restore_state())
    }
    fn feedthrough(&self, output: usize) -> Vec<usize> {
        self.feed.get(output).cloned().unwrap_or_default()
    }
    fn may_feed_through(&self, output: usize, inputs: &[usize]) -> bool {
        match (self.declared.get(output), self.feed.get(output)) {
            (Some(true), Some(on)) => on.iter().any(|j| inputs.contains(j)),
            _ => true,
        }
    }
    fn diagnose(&self) -> Vec<Diagnostic> {
        let mut d = vec![Diagnostic::Info(format!(
            "signal block ({}): inputs {}; outputs {}",
            self.label,
            list(&self.inputs.infos),
            list(&self.outputs.infos)
        ))];
        d.extend(self.notes.iter().cloned());
        d
    }
}

fn list(v: &[SignalInfo]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
    }
}
