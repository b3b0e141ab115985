//! A Co-Simulation FMU as a signal block (`"role": "signal"`): a controller or a plant model
//! from another tool, used by its inputs and outputs (framework `Block`). It is left in
//! initialization mode when built: the network sets its connected inputs until the outputs
//! settle, then exits initialization. At each communication point t_k the network sets the
//! FMU's connected inputs and calls doStep(t_k, T); the outputs are held over the step
//! (framework/src/stepper/bus.rs).
//!
//! Inputs are the FMU's variables of causality input, outputs those of causality output,
//! each of any numeric type or Boolean (values checked against the type by
//! [`Instance::set_mixed`]); an FMI 3.0 array is one signal per element, `y[0]`, `y[1]`, …
//! (row-major), and setting one element of an array input sets the whole array with the
//! other elements as they were (their start values until connected). Every other readable
//! variable (parameters, locals, unconnected inputs) can be read by an output column
//! ([`Block::observables`]). Direct feedthrough is read from ModelStructure (only declared
//! dependencies count, as for the FMU-only master's loops).

use crate::binary::{MixedPlan, VarKind};
use crate::{FmiError, Instance};
use std::sync::{Mutex, MutexGuard};
use stiction_fmi_schema::structure::{read_structure, Deps};
use stiction_fmi_schema::{Causality, Interface};
use stiction_framework::{Block, Diagnostic, Fault, Method, SignalInfo};

/// Most elements of one array variable offered as signals (each has a name of its own).
const MAX_ELEMENTS: usize = 1 << 16;

/// Variables of the FMU as signals, one per element: names (leaked, as the import's signal
/// tables are), and per variable its value reference, kind (type, elements), index in the
/// model description and first element.
#[derive(Default)]
pub(crate) struct Vars {
    pub(crate) infos: Vec<SignalInfo>,
    /// Per element: its variable (position in `vrs`) and its index in that variable.
    pub(crate) var: Vec<usize>,
    pub(crate) elem: Vec<usize>,
    pub(crate) vrs: Vec<u32>,
    pub(crate) kinds: Vec<VarKind>,
    pub(crate) index: Vec<usize>,
    first: Vec<usize>,
}

impl Vars {
    fn add(&mut self, fmu: &Instance, i: usize, n: usize, doc: &'static str) {
        let var = &fmu.archive.description.variables[i];
        let unit: &'static str = Box::leak(var.unit.clone().unwrap_or_default().into_boxed_str());
        let slot = self.vrs.len();
        self.vrs.push(var.vr);
        self.kinds.push((var.ty, n));
        self.index.push(i);
        self.first.push(self.infos.len());
        for e in 0..n {
            let name = if var.dimensions.is_empty() { var.name.clone() } else { format!("{}[{e}]", var.name) };
            self.infos.push(SignalInfo::new(Box::leak(name.into_boxed_str()), 1, unit, doc));
            self.var.push(slot);
            self.elem.push(e);
        }
    }
}

/// The variables of causality `causality` (`None`: every readable variable that is not an
/// output, for output columns); arrays of more than [`MAX_ELEMENTS`] elements are counted in
/// `skipped`.
pub(crate) fn vars_of(fmu: &Instance, causality: Option<Causality>, interface: Interface, skipped: &mut usize) -> Vars {
    let md = &fmu.archive.description;
    let mut v = Vars::default();
    for (i, var) in md.variables.iter().enumerate() {
        let wanted = match causality {
            Some(c) => var.causality == c,
            None => var.causality != Causality::Output,
        };
        if !wanted {
            continue;
        }
        let Ok(n) = crate::readable(md, i, interface) else { continue };
        if n > MAX_ELEMENTS {
            *skipped += 1;
            continue;
        }
        let doc = match causality {
            Some(Causality::Input) => "FMU input",
            Some(_) => "FMU output",
            None => "FMU variable",
        };
        v.add(fmu, i, n, doc);
    }
    v
}

/// A Co-Simulation FMU signal block.
pub(crate) struct CsBlock {
    label: String,
    inputs: Vars,
    outputs: Vars,
    /// The other readable variables, for output columns.
    observed: Vars,
    /// Per output: the inputs (positions in `inputs`) it declares to depend on, and whether
    /// it declares its dependencies at all.
    feed: Vec<Vec<usize>>,
    declared: Vec<bool>,
    notes: Vec<Diagnostic>,
    /// The FMU declares canGetAndSetFMUstate="true" and exports the FMU-state functions.
    can_roll_back: bool,
    /// The FMU declares canHandleVariableCommunicationStepSize="true".
    variable_step: bool,
    /// FMI 3.0 aliases of the variables: alias → the variable's name.
    aliases: std::collections::HashMap<String, String>,
    rt: Mutex<Runtime>,
}

struct Runtime {
    fmu: Instance,
    /// Scratch for one input set.
    vrs: Vec<u32>,
    kinds: Vec<VarKind>,
    vals: Vec<f64>,
    /// Per input variable: its elements' values if it is an array (set whole), else empty.
    arrays: Vec<Vec<f64>>,
    touched: Vec<bool>,
    /// The outputs' get, grouped by type once.
    out_plan: MixedPlan,
    /// The FMU failed: not called again.
    ended: Option<String>,
    /// The FMU asked to end the simulation in the last doStep: its last successful time,
    /// whether it made the whole step, the message.
    stop: Option<(f64, bool, String)>,
}

/// Make the signal block from an initialized Co-Simulation instance.
pub(crate) fn build(mut fmu: Instance, mut notes: Vec<Diagnostic>) -> Result<CsBlock, FmiError> {
    let mut skipped = 0;
    let cs = Interface::CoSimulation;
    let inputs = vars_of(&fmu, Some(Causality::Input), cs, &mut skipped);
    let outputs = vars_of(&fmu, Some(Causality::Output), cs, &mut skipped);
    let observed = vars_of(&fmu, None, cs, &mut skipped);
    let md = fmu.archive.description.clone();
    let structure = read_structure(&fmu.archive.xml, &md).map_err(|e| fmu.error("modelDescription.xml", e))?;
    let (feed, declared) = feedthrough(&structure, &inputs, &outputs);
    if skipped > 0 {
        notes.push(too_long(skipped));
    }
    let label = fmu.label.clone();
    let can_roll_back = structure.can_get_and_set_state && fmu.can_save_state();
    let variable_step = md.cs_capabilities.variable_step;
    let aliases = md.variables.iter().flat_map(|v| v.aliases.iter().map(|a| (a.clone(), v.name.clone()))).collect();
    let arrays = array_starts(&mut fmu, &inputs)?;
    // The FMU's own start values must be readable before the first exchange.
    let mut y = vec![0.0; outputs.infos.len()];
    fmu.get_mixed(&outputs.vrs, &outputs.kinds, &mut y)?;
    let touched = vec![false; arrays.len()];
    let rt = Runtime {
        fmu,
        vrs: Vec::new(),
        kinds: Vec::new(),
        vals: Vec::new(),
        arrays,
        touched,
        out_plan: MixedPlan::new(&outputs.vrs, &outputs.kinds),
        ended: None,
        stop: None,
    };
    Ok(CsBlock {
        label,
        inputs,
        outputs,
        observed,
        feed,
        declared,
        notes,
        can_roll_back,
        variable_step,
        aliases,
        rt: Mutex::new(rt),
    })
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
    fn alias_of(&self, name: &str) -> Option<&str> {
        self.aliases.get(name).map(String::as_str)
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
        self.lock()?.call(|rt| rt.fmu.get_planned(&mut rt.out_plan, y))
    }
    fn set_inputs(&self, u: &[(usize, f64)]) -> Result<(), Fault> {
        if u.is_empty() {
            return Ok(());
        }
        let ins = &self.inputs;
        let mut rt = self.lock()?;
        rt.call(|rt| {
            let Runtime { fmu, vrs, kinds, vals, arrays, touched, .. } = rt;
            set_inputs(fmu, ins, Scratch { vrs, kinds, vals, arrays, touched }, u)
        })
    }
    fn start(&self, y: &mut [f64]) -> Result<(), Fault> {
        self.lock()?.call(|rt| {
            rt.fmu.exit_initialization()?;
            rt.fmu.get_planned(&mut rt.out_plan, y)
        })
    }
    fn advance(&self, t: f64, h: f64, y: &mut [f64]) -> Result<(), Fault> {
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
            rt.fmu.get_planned(&mut rt.out_plan, y)
        })
    }
    fn observables(&self) -> Vec<SignalInfo> {
        self.observed.infos.clone()
    }
    fn observe(&self, which: usize) -> Result<f64, Fault> {
        let obs = &self.observed;
        let k = *obs.var.get(which).ok_or_else(|| Fault::new(format!("{}: no variable {which}", self.label)))?;
        let mut v = vec![0.0; obs.kinds[k].1];
        self.lock()?.call(|rt| rt.fmu.get_mixed(&[obs.vrs[k]], &[obs.kinds[k]], &mut v))?;
        Ok(v[obs.elem[which]])
    }
    fn variable_step(&self) -> bool {
        self.variable_step
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
    /// The FMU's serialized state (its outputs as last read are the bus's).
    /// The FMU's serialized state, the array inputs' values as last set (an element input
    /// sets its array whole) and a stop request (its outputs as last read are the bus's).
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        let mut rt = self.lock().map_err(|f| f.0)?;
        if let Some(why) = &rt.ended {
            return Err(why.clone());
        }
        let fmu = rt.fmu.serialize_state().map_err(|e| e.to_string())?;
        let mut o = crate::hidden::Out::default();
        o.0.extend_from_slice(b"block2");
        o.u64(rt.arrays.len() as u64);
        for a in &rt.arrays {
            o.f64s(a);
        }
        match &rt.stop {
            Some((t, made, m)) => o.u8(1).f64(*t).u8(u8::from(*made)).bytes(m.as_bytes()),
            None => o.u8(0),
        };
        o.bytes(&fmu);
        Ok(Some(o.0))
    }
    fn restore_hidden(&self, bytes: &[u8]) -> Result<(), String> {
        let mut rt = self.lock().map_err(|f| f.0)?;
        let mut r = crate::hidden::In(bytes);
        r.tag(b"block2")?;
        if r.u64()? != rt.arrays.len() as u64 {
            return Err("the saved state has another number of inputs".into());
        }
        let arrays = rt.arrays.iter().map(|a| r.f64s(a.len(), "array elements")).collect::<Result<Vec<_>, _>>()?;
        let stop = if r.flag()? {
            let (t, made) = (r.f64()?, r.flag()?);
            Some((t, made, String::from_utf8_lossy(r.bytes()?).into_owned()))
        } else {
            None
        };
        let fmu = r.bytes()?;
        r.end()?;
        rt.call(|rt| rt.fmu.deserialize_state(fmu)).map_err(|f| f.0)?;
        rt.arrays = arrays;
        rt.touched.iter_mut().for_each(|t| *t = false);
        rt.stop = stop;
        Ok(())
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

/// The reused buffers of one input set: value references, kinds and values, and per input
/// variable its elements if it is an array (set whole) and whether it was touched.
pub(crate) struct Scratch<'a> {
    pub vrs: &'a mut Vec<u32>,
    pub kinds: &'a mut Vec<VarKind>,
    pub vals: &'a mut Vec<f64>,
    pub arrays: &'a mut [Vec<f64>],
    pub touched: &'a mut [bool],
}

/// Set input element `u[j].0` of `ins` to `u[j].1`, in one call: an element of an array input
/// sets its array whole, with the other elements as they were.
pub(crate) fn set_inputs(fmu: &mut Instance, ins: &Vars, b: Scratch<'_>, u: &[(usize, f64)]) -> Result<(), FmiError> {
    let Scratch { vrs, kinds, vals, arrays, touched } = b;
    vrs.clear();
    kinds.clear();
    vals.clear();
    for &(j, v) in u {
        let k = ins.var[j];
        if arrays[k].is_empty() {
            vrs.push(ins.vrs[k]);
            kinds.push(ins.kinds[k]);
            vals.push(v);
        } else {
            arrays[k][ins.elem[j]] = v;
            touched[k] = true;
        }
    }
    // Each array input set touched, whole.
    for k in 0..arrays.len() {
        if std::mem::take(&mut touched[k]) {
            vrs.push(ins.vrs[k]);
            kinds.push(ins.kinds[k]);
            vals.extend_from_slice(&arrays[k]);
        }
    }
    fmu.set_mixed(vrs, kinds, vals)
}

/// The array inputs' current values (their start values), empty for a scalar input: an
/// element set alone keeps the others.
pub(crate) fn array_starts(fmu: &mut Instance, inputs: &Vars) -> Result<Vec<Vec<f64>>, FmiError> {
    let md = fmu.archive.description.clone();
    let mut arrays = Vec::with_capacity(inputs.vrs.len());
    for (k, &(ty, n)) in inputs.kinds.iter().enumerate() {
        let mut a = Vec::new();
        if !md.variables[inputs.index[k]].dimensions.is_empty() {
            a.resize(n, 0.0);
            fmu.get_mixed(&[inputs.vrs[k]], &[(ty, n)], &mut a)?;
        }
        arrays.push(a);
    }
    Ok(arrays)
}

/// Per output element: the input elements it declares to depend on (ModelStructure), and
/// whether it declares its dependencies at all.
pub(crate) fn feedthrough(
    structure: &stiction_fmi_schema::structure::Structure,
    inputs: &Vars,
    outputs: &Vars,
) -> (Vec<Vec<usize>>, Vec<bool>) {
    let deps = |o: usize| structure.deps.get(&outputs.index[outputs.var[o]]);
    let feed = (0..outputs.infos.len())
        .map(|o| match deps(o) {
            Some(Deps::On(on)) => {
                (0..inputs.infos.len()).filter(|&j| on.contains(&inputs.index[inputs.var[j]])).collect()
            }
            _ => Vec::new(),
        })
        .collect();
    let declared = (0..outputs.infos.len()).map(|o| matches!(deps(o), Some(Deps::On(_)))).collect();
    (feed, declared)
}

/// The note that `skipped` arrays are too long to be offered as signals.
pub(crate) fn too_long(skipped: usize) -> Diagnostic {
    Diagnostic::Warning(format!(
        "{skipped} array variable(s) of more than {MAX_ELEMENTS} elements are not offered as signals"
    ))
}

pub(crate) fn list_names(v: &[SignalInfo]) -> String {
    list(v)
}
