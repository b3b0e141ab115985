#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! * [`archive`], [`description`] (from `stiction-fmi-schema`): the .fmu unpacked into a
//!   private temporary directory, removed on drop; its modelDescription.xml (version,
//!   interfaces, variables, states, default experiment);
//! * `binary`: the shared library and one instance (the FFI `unsafe` code is there), with the
//!   FMU's log messages collected per instance and attached to every error;
//! * [`isolate`]: `"isolation": "process"`, the instance in a child process (the `stiction
//!   fmu-host` program), so that its crash or hang cannot end stiction; [`Instance`] is
//!   either;
//! * [`mapping`]: FMU variables → scalar ports, checked against the description;
//! * `cs`, `me`: the Co-Simulation and Model Exchange components; `block`, `me_block`: a
//!   Co-Simulation and a Model Exchange FMU as a signal block (`"role": "signal"`).
//!
//! In JSON (`"type": "fmu"`, see [`register`]):
//!
//! ```json
//! "gear": { "type": "fmu", "path": "StictionGear.fmu", "interface": "cs", "role": "admittance",
//!           "ports": { "input":  { "force": "fu" },
//!                      "output": { "force": "fv", "force_sign": -1, "position": "q", "velocity": "v" } },
//!           "parameters": { "gamma_v": 1.05, "damping": 10, "q": 0.3 },
//!           "communication_step": 1e-3 }
//! ```
//!
//! **Co-Simulation.** The FMU is stepped once per communication interval H (a whole
//! multiple of the network step T) at the communication points t_c = jH. Its inputs are
//! sampled there (RK4: in the first stage of the step starting at t_c, i.e. at x(t_c);
//! Euler: in the step's single stage) and held over [t_c, t_c + H) by the FMU.
//! An admittance presents the motion outputs of the last completed doStep: the FMU's
//! outputs at t_c + H become the port motion at t_c + H (they are the component's state,
//! written after the step that reaches t_c + H, and held in between; the state is not
//! integrated). An impedance presents the force outputs of doStep(t_c, H) over
//! [t_c, t_c + H): the force the FMU applied over that interval (with the exported
//! StictionFriction that is exactly the force of its implicit step from the sampled input).
//! With H = T and the Euler method the network reproduces the native implicit-Euler
//! algorithms.
//!
//! **Model Exchange.** The FMU's continuous states are the component's states, integrated by
//! the network's method: every stage sets the time, the states and the inputs and reads the
//! derivatives (and, for an impedance, the force outputs). After every step the importer
//! calls CompletedIntegratorStep and compares the event indicators with those of the
//! previous step; a sign change (or a requested event or a reached time event) enters event
//! mode, iterates fmi2NewDiscreteStates / fmi3UpdateDiscreteStates and re-reads the states
//! into the network state. An admittance takes the events of a step in time order at their
//! own instants: a state event located by bisection on the indicators along the step's
//! cubic Hermite trajectory (`me::EVENT_TOLERANCE`), a time event at the FMU's
//! nextEventTime; it runs the event iteration there and integrates the rest of the step
//! again with one RK4 step of the FMU's equations in the new mode (`post_step`); an
//! impedance handles its events at the end of the step in which they occur, at the first
//! stage of the next step, and an event that changes an impedance's continuous states is
//! an error (the network owns those states and an impedance cannot write them).
//!
//! **Signal blocks** (`"role": "signal"`): a Co-Simulation FMU is a framework `Block`,
//! stepped at every step's beginning with its outputs held over the step (`block`); a Model
//! Exchange FMU is a port-less admittance with signal inputs (`me_block`), its states
//! integrated like those of a Model Exchange admittance, its inputs and outputs those of
//! every stage (framework/src/stepper/bus.rs).
#![deny(unsafe_code)]

mod binary;
mod block;
mod cs;
mod elf;
mod hidden;
mod instance;
pub mod isolate;
pub mod mapping;
mod me;
mod me_block;

pub use binary::{carries, carries_rule, status_name, EventInfo, MixedPlan, VarKind};
pub use binary::{foreign_code_loaded, preload};
pub use instance::Instance;
pub use isolate::Isolation;
pub use mapping::{PortMap, Role, VarRef};
pub use stiction_fmi_schema::{archive, description};
pub use stiction_fmi_schema::{
    Archive, Capabilities, Causality, DefaultExperiment, FmiError, FmiVersion, Initial, Interface, Interfaces,
    ModelDescription, VarType, Variability, Variable,
};

use mapping::{MappingSpec, Quantity};
use std::path::Path;
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::{Diagnostic, Error, Method, Probe, Result, SignalInfo};

/// The solver settings a component learns in `prepare`, and the communication step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Clock {
    pub method: Method,
    /// Network step T.
    pub step: f64,
    /// Co-Simulation: network steps per communication interval (H = n T).
    pub n: u64,
}

impl Clock {
    /// Check the communication step `h` (None: = T) against the step T.
    pub fn new(method: Method, step: f64, h: Option<f64>) -> std::result::Result<Clock, String> {
        let n = match h {
            None => 1,
            Some(h) => {
                let r = h / step;
                let n = r.round();
                if n < 1.0 || (r - n).abs() > 1e-9 * r.max(1.0) {
                    return Err(format!(
                        "communication_step {h} s is not a whole multiple of the solver step {step} s \
                         (the FMU is stepped at network steps; use e.g. {} s)",
                        n.max(1.0) * step
                    ));
                }
                n as u64
            }
        };
        Ok(Clock { method, step, n })
    }

    /// The network step index of a call at (t, τ) if it is the first stage of a step
    /// (RK4: the stage at x(k) with τ = T/2; Euler: the only stage, τ = T, which an output
    /// probe at the same instant repeats with the same inputs); `None` for the other RK4
    /// stages and the probe of RK4.
    pub fn first_stage(&self, t: f64, tau: f64) -> Option<u64> {
        let k = (t / self.step).round();
        if k < 0.0 || (t - k * self.step).abs() > 1e-9 * self.step {
            return None;
        }
        let stage1 = match self.method {
            Method::Rk4 => (tau - 0.5 * self.step).abs() <= 1e-9 * self.step,
            Method::Euler => true,
        };
        stage1.then_some(k as u64)
    }
}

/// A mapped FMU input: its port, the quantity, the sign and the element (of an array input).
pub(crate) type Fed = (usize, Quantity, f64, usize);

/// The FMU variables a component offers as signals, and how each is read.
pub(crate) struct SignalTable {
    pub infos: Vec<SignalInfo>,
    /// Per signal: the variable index and, if the variable is a mapped FMU input, the port,
    /// the quantity and the sign (its value is then computed from the probe).
    pub vars: Vec<(usize, Vec<Fed>)>,
    /// Per signal: where its elements start in the values [`SignalTable::read`] returns
    /// (one more entry: the total).
    offsets: Vec<usize>,
    /// The signal variables by type, for one get call per type: (type, value references,
    /// signals).
    groups: Vec<(VarType, Vec<u32>, Vec<usize>)>,
}

/// Whether variable `i` can be read by an instance of `interface`, decided from the model
/// description alone (no trial calls: an FMU that answers a call with Error may not be
/// called again), and its number of elements. Not offered: String, Binary and Clock
/// variables; arrays whose size is unknown or 0; and, for a Co-Simulation run of an FMU that
/// also declares Model Exchange, local variables other than continuous states (the
/// derivatives, event indicators and modes a Model Exchange description lists: FMI has no
/// way to say which locals a Co-Simulation instance computes, and a local is not meant to be
/// used outside the FMU anyway, FMI 2.0 section 2.2.7).
pub fn readable(md: &ModelDescription, i: usize, interface: Interface) -> std::result::Result<usize, String> {
    let v = &md.variables[i];
    if v.ty == VarType::Other {
        return Err(format!("'{}' is a {} variable, which is not a number", v.name, v.type_name));
    }
    if interface == Interface::CoSimulation
        && md.model_exchange.is_some()
        && v.causality == Causality::Local
        && md.state_position(i).is_none()
    {
        return Err(format!(
            "'{}' is a local variable of an FMU that also declares Model Exchange, which a Co-Simulation instance need not compute",
            v.name
        ));
    }
    let n: u64 = md.shape(i)?.iter().product();
    if n == 0 {
        return Err(format!("'{}' is an array with no elements", v.name));
    }
    Ok(n as usize)
}

impl SignalTable {
    /// Every variable [`readable`] by this interface, an array as one signal of its
    /// elements (row-major order). Names and units are leaked: a component's signals live
    /// as long as the program (a few bytes per variable and load).
    pub fn new(md: &ModelDescription, ports: &[PortMap], role: Role, interface: Interface) -> SignalTable {
        let mut infos = Vec::new();
        let mut vars = Vec::new();
        let mut offsets = vec![0];
        let mut fed_by: std::collections::HashMap<usize, Vec<Fed>> = std::collections::HashMap::new();
        for (p, port) in ports.iter().enumerate() {
            for (q, r) in port.vars() {
                let is_input = (role == Role::Admittance) == (q == Quantity::Force);
                if is_input {
                    fed_by.entry(r.index).or_default().push((p, q, r.sign, r.elem));
                }
            }
        }
        for (i, v) in md.variables.iter().enumerate() {
            if v.name == "state" {
                continue;
            }
            let Ok(len) = readable(md, i, interface) else { continue };
            let fed = fed_by.get(&i).cloned().unwrap_or_default();
            let unit: &'static str = Box::leak(v.unit.clone().unwrap_or_default().into_boxed_str());
            let doc = match (v.causality, !fed.is_empty()) {
                (_, true) => "FMU input fed from a port (at an output instant: the value the port gives now)",
                (Causality::Input, false) => "FMU input",
                (Causality::Output, false) => "FMU output",
                (Causality::Parameter, false) => "FMU parameter",
                _ => "FMU variable",
            };
            // The variable under its name and every FMI 3.0 alias.
            for n in std::iter::once(&v.name).chain(&v.aliases) {
                let name: &'static str = Box::leak(n.clone().into_boxed_str());
                infos.push(SignalInfo::new(name, len, unit, doc));
                vars.push((i, fed.clone()));
                offsets.push(offsets[offsets.len() - 1] + len);
            }
        }
        let mut groups = Vec::new();
        for ty in VarType::NUMERIC {
            let pos: Vec<usize> = (0..vars.len()).filter(|&k| md.variables[vars[k].0].ty == ty).collect();
            if !pos.is_empty() {
                let vrs = pos.iter().map(|&k| md.variables[vars[k].0].vr).collect();
                groups.push((ty, vrs, pos));
            }
        }
        SignalTable { infos, vars, offsets, groups }
    }

    /// The current values of every signal variable (one get call per type), every element
    /// of an array in turn.
    pub fn read(&self, fmu: &mut Instance) -> std::result::Result<Vec<f64>, FmiError> {
        let mut out = vec![0.0; self.offsets[self.offsets.len() - 1]];
        let mut buf = Vec::new();
        for (ty, vrs, pos) in &self.groups {
            let n: usize = pos.iter().map(|&k| self.offsets[k + 1] - self.offsets[k]).sum();
            buf.resize(n, 0.0);
            fmu.get_values(*ty, vrs, &mut buf)?;
            let mut at = 0;
            for &k in pos {
                let len = self.offsets[k + 1] - self.offsets[k];
                out[self.offsets[k]..self.offsets[k + 1]].copy_from_slice(&buf[at..at + len]);
                at += len;
            }
        }
        Ok(out)
    }

    /// Element `elem` of signal `which` among values returned by [`SignalTable::read`].
    pub fn pick(&self, values: &[f64], which: usize, elem: usize) -> f64 {
        self.offsets.get(which).and_then(|o| values.get(o + elem)).copied().unwrap_or(f64::NAN)
    }

    /// Read element `elem` of signal `which` from the instance now.
    pub fn read_one(&self, fmu: &mut Instance, which: usize, elem: usize) -> std::result::Result<f64, FmiError> {
        let Some(&(i, _)) = self.vars.get(which) else { return Ok(f64::NAN) };
        let len = self.offsets[which + 1] - self.offsets[which];
        let v = &fmu.archive.description.variables[i];
        let (ty, vr) = (v.ty, v.vr);
        let mut buf = vec![0.0; len];
        fmu.get_values(ty, &[vr], &mut buf)?;
        Ok(buf.get(elem).copied().unwrap_or(f64::NAN))
    }

    /// The live value of a mapped input from the probe, if signal `which` is one.
    pub fn fed(&self, which: usize, elem: usize, probe: &Probe) -> Option<f64> {
        let (_, fed) = self.vars.get(which)?;
        let &(p, q, sign, _) = fed.iter().find(|f| f.3 == elem)?;
        let x = match q {
            Quantity::Force => probe.forces.get(p)?.value(),
            Quantity::Position => probe.motions.get(p)?.q(),
            Quantity::Velocity => probe.motions.get(p)?.qd(),
        };
        Some(sign * x + 0.0)
    }
}

/// The start value(s) JSON value `v` gives variable `i` (at JSON path `at`): a number or a
/// boolean, or for an FMI 3.0 array a list of its elements (row-major). Refused before any
/// FMU call: String/Binary/Clock variables, structural parameters that size arrays (stiction
/// reads array sizes from the description and does not follow a change), non-integers and
/// values out of range for integer types.
pub fn start_values(md: &ModelDescription, i: usize, v: &serde_json::Value, at: &str) -> Result<Vec<f64>> {
    let var = &md.variables[i];
    let k = &var.name;
    if var.ty == VarType::Other {
        return Err(Error::invalid(at, format!("'{k}' is a {} variable, which cannot be set", var.type_name)));
    }
    let sized = md.sized_by(i);
    if !sized.is_empty() {
        let names: Vec<&str> = sized.iter().take(5).map(|&j| md.variables[j].name.as_str()).collect();
        return Err(Error::invalid(
            at,
            format!(
                "'{k}' is a structural parameter giving the size of {}; stiction does not change array sizes",
                names.join(", ")
            ),
        ));
    }
    let n: u64 = md.shape(i).map_err(|e| Error::invalid(at, e))?.iter().product();
    let values: Vec<f64> = match (var.dimensions.is_empty(), v) {
        (true, _) => vec![json_number(v)
            .ok_or_else(|| Error::invalid(at, format!("expected a finite number or a boolean, got {v}")))?],
        (false, serde_json::Value::Array(items)) if items.len() as u64 == n => items
            .iter()
            .map(|x| json_number(x).ok_or_else(|| Error::invalid(at, format!("expected finite numbers, got {x}"))))
            .collect::<Result<_>>()?,
        (false, _) => {
            return Err(Error::invalid(at, format!("'{k}' is an array of {n} elements: give a list of {n} numbers")))
        }
    };
    if let Some((lo, hi)) = var.ty.integer_range() {
        if let Some(x) = values.iter().find(|x| x.fract() != 0.0 || **x < lo || **x > hi) {
            return Err(Error::invalid(
                at,
                format!("{x} is not a value of '{k}', a {} variable ({lo} to {hi})", var.type_name),
            ));
        }
    }
    Ok(values)
}

/// Read a start value from JSON: a finite number, or a boolean.
pub fn json_number(v: &serde_json::Value) -> Option<f64> {
    match v {
        serde_json::Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => v.as_f64().filter(|x| x.is_finite()),
    }
}

/// A loaded, initialized FMU with its mapping, ready to become a component.
pub(crate) struct Loaded {
    pub fmu: Instance,
    pub ports: Vec<PortMap>,
    pub role: Role,
    pub signals: SignalTable,
    /// What `stiction check` reports about the FMU ([`notes`]).
    pub notes: Vec<Diagnostic>,
}

/// What `stiction check` reports about an FMU run through `interface`, besides its role: the
/// capability flags it declares, what its modelDescription.xml lacks (tolerated, see
/// [`ModelDescription::warnings`]) and the capabilities stiction cannot honour or check
/// (needsExecutionTool). canBeInstantiatedOnlyOncePerProcess is enforced when instantiating
/// (a second instance is an error); canGetAndSetFMUstate matters only to the FMU-only master's
/// algebraic loops (master.rs); canHandleVariableCommunicationStepSize is honoured because a
/// network steps a Co-Simulation FMU with one constant H, and the master shortens its last step
/// only when every FMU declares it; fmi2CompletedIntegratorStep is always called, which
/// completedIntegratorStepNotNeeded allows; directional derivatives are never used.
pub fn notes(md: &ModelDescription, interface: Interface) -> Vec<Diagnostic> {
    let caps = md.capabilities(interface);
    let mut out = Vec::new();
    let declared = caps.declared(interface);
    if !declared.is_empty() {
        out.push(Diagnostic::Info(format!("{} declares {}", interface.label(), declared.join(", "))));
    }
    if caps.needs_execution_tool {
        let hint = match &md.generation_tool {
            Some(g) if g.starts_with("PythonFMU") => {
                " (made by PythonFMU: the Python runtime library must be loaded first, see the `preload` option)"
            }
            _ => "",
        };
        out.push(Diagnostic::Warning(format!(
            "declares needsExecutionTool=\"true\": it needs a tool outside the FMU that stiction can neither provide \
             nor check{hint}; a missing tool shows as an error of the FMU when it is loaded or run"
        )));
    }
    out.extend(md.warnings.iter().map(|w| Diagnostic::Warning(w.clone())));
    out
}

/// The `preload` parameter: library paths (relative to the JSON file when they contain a
/// '/') or library names for the dynamic loader's search; `at` names it in errors.
pub fn preload_list(v: Option<&serde_json::Value>, base: &Path, at: &str) -> Result<Vec<std::path::PathBuf>> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let items = match v {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Error::invalid(at, format!("expected a list of library paths, got {v}")))?,
        _ => return Err(Error::invalid(at, format!("expected a list of library paths, got {v}"))),
    };
    Ok(items.into_iter().map(|s| if s.contains('/') { base.join(&s) } else { std::path::PathBuf::from(s) }).collect())
}

/// Build an `fmu` component from its JSON parameters.
fn build(p: &mut Params) -> Result<Built> {
    let comp_path = p.path().to_string();
    let name = comp_path.strip_prefix("components.").unwrap_or(&comp_path).to_string();
    let file = match p.get("path") {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) => return Err(p.err("path", format!("expected the path of an .fmu file, got {v}"))),
        None => return Err(p.err("path", "missing required parameter (the .fmu file, relative to this JSON file)")),
    };
    let full = p.base().join(&file);
    let shown = full.display().to_string();
    let archive = archive::Archive::shared(&full, &shown).map_err(|e| p.err("path", e.to_string()))?;
    let md = archive.description.clone();
    let interface = match p.get("interface").map(|v| v.as_str()) {
        None if md.co_simulation.is_some() => Interface::CoSimulation,
        None => Interface::ModelExchange,
        Some(Some("cs")) => Interface::CoSimulation,
        Some(Some("me")) => Interface::ModelExchange,
        Some(_) => return Err(p.err("interface", "expected \"cs\" (Co-Simulation) or \"me\" (Model Exchange)")),
    };
    if md.identifier(interface).is_none() {
        return Err(p.err(
            "interface",
            format!("{} declares no {} interface (it has: {})", archive.file, interface.label(), interfaces(&md)),
        ));
    }
    let role = match p.get("role").map(|v| v.as_str()) {
        Some(Some("admittance")) => Role::Admittance,
        Some(Some("impedance")) => Role::Impedance,
        Some(Some("signal")) => return build_block(p, archive, interface, &name),
        None => {
            return Err(p.err(
                "role",
                "missing required parameter: \"admittance\" (force in, motion out), \"impedance\" (motion in, \
             force out) or \"signal\" (a block of inputs and outputs)",
            ))
        }
        Some(_) => return Err(p.err("role", "expected \"admittance\", \"impedance\" or \"signal\"")),
    };
    let label = format!("FMU '{}'", md.identifier(interface).unwrap_or(&md.model_name));
    let spec = MappingSpec { ports: p.get("ports"), inputs: p.get("inputs"), outputs: p.get("outputs") };
    let ports = mapping::parse(&spec, &comp_path, &md, interface, role, &label)?;
    let h = match p.get("communication_step") {
        None => None,
        Some(_) if interface == Interface::ModelExchange => {
            return Err(p.err("communication_step", "only a Co-Simulation FMU has a communication step"))
        }
        Some(_) => Some(p.positive("communication_step")?),
    };
    let starts = parameter_starts(p, &md, &label)?;
    let fmu_err = |e: FmiError| load_error(&comp_path, e);
    let notes = notes(&md, interface);
    let mut fmu = instantiate(p, archive, interface, &name)?;
    for (at, ty, vr, x) in starts {
        fmu.set_values(ty, &[vr], &x).map_err(|e| load_error(&at, e))?;
    }
    fmu.enter_initialization(0.0).map_err(fmu_err)?;
    fmu.exit_initialization().map_err(fmu_err)?;
    let signals = SignalTable::new(&md, &ports, role, interface);
    let loaded = Loaded { fmu, ports, role, signals, notes };
    match interface {
        Interface::CoSimulation => cs::build(loaded, h).map_err(fmu_err),
        Interface::ModelExchange => me::build(loaded).map_err(fmu_err),
    }
}

/// A start value to set: its JSON path, type, value reference and value(s).
type Start = (String, VarType, u32, Vec<f64>);

/// The start values of `"parameters"` of the component read by `p`: (JSON path, type, value
/// reference, values), checked against the description.
fn parameter_starts(p: &mut Params, md: &ModelDescription, label: &str) -> Result<Vec<Start>> {
    let comp_path = p.path().to_string();
    let params: Vec<(String, serde_json::Value)> = match p.get("parameters") {
        None => Vec::new(),
        Some(serde_json::Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(v) => return Err(p.err("parameters", format!("expected an object {{\"name\": value}}, got {v}"))),
    };
    let mut starts = Vec::new();
    for (k, v) in &params {
        let at = format!("{comp_path}.parameters.{k}");
        let Some(i) = md.find(k) else {
            return Err(Error::invalid(
                at,
                format!(
                    "{label} has no variable '{k}'{} (parameters: {})",
                    stiction_framework::error::suggestion(k, md.variables.iter().map(|v| v.name.as_str())),
                    md.names_with(Causality::Parameter)
                ),
            ));
        };
        let values = start_values(md, i, v, &at)?;
        let var = &md.variables[i];
        starts.push((at, var.ty, var.vr, values));
    }
    Ok(starts)
}

/// An `fmu` with `"role": "signal"`: a Co-Simulation FMU as a signal block stepped at the
/// communication points (block.rs), or a Model Exchange FMU as a signal block that takes
/// part in every stage (me_block.rs).
fn build_block(p: &mut Params, archive: std::sync::Arc<Archive>, interface: Interface, name: &str) -> Result<Built> {
    let comp_path = p.path().to_string();
    let md = archive.description.clone();
    for key in ["ports", "inputs", "outputs", "communication_step"] {
        if p.has(key) {
            return Err(p.err(
                key,
                "not for a signal block: its inputs and outputs are the FMU's own, connected by signal \
                 connections, and it is stepped at every solver step",
            ));
        }
    }
    let label = format!("FMU '{}'", md.identifier(interface).unwrap_or(&md.model_name));
    let starts = parameter_starts(p, &md, &label)?;
    let fmu_err = |e: FmiError| load_error(&comp_path, e);
    let notes = notes(&md, interface);
    let mut fmu = instantiate(p, archive, interface, name)?;
    for (at, ty, vr, x) in starts {
        fmu.set_values(ty, &[vr], &x).map_err(|e| load_error(&at, e))?;
    }
    fmu.enter_initialization(0.0).map_err(fmu_err)?;
    if interface == Interface::ModelExchange {
        // A Model Exchange block leaves initialization with its inputs' start values and
        // takes part in every stage as a port-less admittance (me_block.rs).
        fmu.exit_initialization().map_err(fmu_err)?;
        let signals = SignalTable::new(&md, &[], Role::Admittance, interface);
        let loaded = Loaded { fmu, ports: Vec::new(), role: Role::Admittance, signals, notes };
        return Ok(Built::Admittance(Box::new(me_block::build(loaded).map_err(fmu_err)?)));
    }
    // Initialization mode is left once the signal connections have set the inputs.
    Ok(Built::Block(Box::new(block::build(fmu, notes).map_err(fmu_err)?)))
}

/// The instance of the component read by `p` (network component or signal block), named
/// `name`: its `preload` libraries opened and the FMU instantiated where its `isolation`
/// says (in this process, or in a child process which opens the libraries itself).
fn instantiate(p: &mut Params, archive: std::sync::Arc<Archive>, interface: Interface, name: &str) -> Result<Instance> {
    let comp_path = p.path().to_string();
    let libs = preload_list(p.get("preload"), p.base(), &format!("{comp_path}.preload"))?;
    let isolation = isolation(p)?;
    let child_libs = if isolation == Isolation::None {
        binary::preload(&libs).map_err(|e| Error::invalid(format!("{comp_path}.preload"), e))?;
        &[][..]
    } else {
        &libs[..]
    };
    Instance::with_isolation(archive, interface, name, &isolation, child_libs).map_err(|e| load_error(&comp_path, e))
}

/// An error of the FMU while the component (or `fmus` entry) at JSON path `at` is loaded: bad input naming the
/// path (exit code 2), except that an isolated FMU's process crashing, exiting or hanging is a
/// failure of the run at t = 0 in the component (exit code 1), as it is later in the run.
pub fn load_error(at: &str, e: FmiError) -> Error {
    if isolate::process_ended(&e) {
        let name = at.strip_prefix("components.").or_else(|| at.strip_prefix("fmus.")).unwrap_or(at);
        let component = name.split(".parameters.").next().unwrap_or(name).to_string();
        return Error::Simulation { time: 0.0, component, message: e.to_string() };
    }
    Error::invalid(at, e.to_string())
}

/// The `isolation` and `call_timeout` keys of a component that runs an FMU (the `fmu` type;
/// any other type built on [`Instance`] may read them too, with [`ISOLATION`] and
/// [`CALL_TIMEOUT`] in its parameter table): `"none"` (default) or `"process"`, and the
/// longest call in seconds with `"process"` (default [`isolate::DEFAULT_TIMEOUT`]).
pub fn isolation(p: &mut Params) -> Result<Isolation> {
    let at = p.path().to_string();
    let (iso, timeout) = (p.get("isolation"), p.get("call_timeout"));
    isolation_of(iso, timeout, &at)
}

/// [`isolation`] from the values of the two keys of the object at JSON path `at` (for
/// readers without [`Params`], such as the FMU-only master's `fmus` entries).
pub fn isolation_of(
    iso: Option<&serde_json::Value>,
    timeout: Option<&serde_json::Value>,
    at: &str,
) -> Result<Isolation> {
    let process = match iso {
        None => false,
        Some(serde_json::Value::String(s)) if s == "none" => false,
        Some(serde_json::Value::String(s)) if s == "process" => true,
        Some(v) => {
            return Err(Error::invalid(
                format!("{at}.isolation"),
                format!(
                    "expected \"none\" (the FMU in stiction's process) or \"process\" (in a child process), got {v}"
                ),
            ))
        }
    };
    let timeout = match timeout {
        None => isolate::DEFAULT_TIMEOUT,
        Some(_) if !process => {
            return Err(Error::invalid(
                format!("{at}.call_timeout"),
                "only an FMU with \"isolation\": \"process\" has a call timeout",
            ))
        }
        Some(v) => v
            .as_f64()
            .filter(|t| (MIN_CALL_TIMEOUT..=MAX_CALL_TIMEOUT).contains(t))
            .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok())
            .ok_or_else(|| {
                Error::invalid(
                    format!("{at}.call_timeout"),
                    format!("expected seconds from {MIN_CALL_TIMEOUT} to {MAX_CALL_TIMEOUT} (a day), got {v}"),
                )
            })?,
    };
    Ok(if process { Isolation::Process { timeout } } else { Isolation::None })
}

/// The shortest `call_timeout`, s: a child process needs milliseconds to answer at all.
pub const MIN_CALL_TIMEOUT: f64 = 0.01;
/// The longest `call_timeout`, s (a day): every deadline computed from it stays within what
/// the clock can represent.
pub const MAX_CALL_TIMEOUT: f64 = 86_400.0;

/// The `isolation` key's documentation, for the parameter tables of FMU components.
pub const ISOLATION: ParamDoc = ParamDoc {
    name: "isolation",
    unit: "",
    default: Some("\"none\""),
    doc: "\"none\": the FMU runs in stiction's process; \"process\": in a child process (the `stiction` program), so that its crash, abort, exit() or hang ends the run with an error (exit 1) instead of ending stiction",
};

/// The `call_timeout` key's documentation.
pub const CALL_TIMEOUT: ParamDoc = ParamDoc {
    name: "call_timeout",
    unit: "s",
    default: Some("60"),
    doc: "with \"isolation\": \"process\": the longest one FMU call may take, 0.01 to 86400 (a day); a longer call kills the FMU's process and ends the run (exit 1)",
};

/// "Co-Simulation (StictionGear), Model Exchange (StictionGear)".
pub fn interfaces(md: &ModelDescription) -> String {
    let mut v = Vec::new();
    if let Some(id) = &md.co_simulation {
        v.push(format!("Co-Simulation (modelIdentifier {id})"));
    }
    if let Some(id) = &md.model_exchange {
        v.push(format!("Model Exchange (modelIdentifier {id})"));
    }
    v.join(", ")
}

const PARAMS: &[ParamDoc] = &[
    ParamDoc { name: "path", unit: "", default: None, doc: "the .fmu file, relative to the JSON file" },
    ParamDoc {
        name: "interface",
        unit: "",
        default: Some("\"cs\" if declared, else \"me\""),
        doc: "\"cs\" Co-Simulation or \"me\" Model Exchange (FMI 2.0 or 3.0)",
    },
    ParamDoc {
        name: "role",
        unit: "",
        default: None,
        doc: "\"admittance\" (force in, motion out), \"impedance\" (motion in, force out) or \"signal\" (a block: \
              the FMU's inputs set by signal connections, its outputs read as signals; Co-Simulation: stepped at \
              each step's beginning, outputs held; Model Exchange: its states integrated by the network, inputs \
              and outputs at every stage)",
    },
    ParamDoc {
        name: "inputs",
        unit: "",
        default: Some("none"),
        doc: "one port called `port`: admittance {\"force\": var}, impedance {\"velocity\": var, \"position\": var}",
    },
    ParamDoc {
        name: "outputs",
        unit: "",
        default: Some("none"),
        doc: "admittance {\"position\": var, \"velocity\": var}, impedance {\"force\": var}; \"-var\" flips the sign",
    },
    ParamDoc {
        name: "ports",
        unit: "",
        default: Some("none"),
        doc: "instead of inputs/outputs: {\"<port>\": {\"force\": var, \"position\": var, \"velocity\": var, \"force_sign\": ±1}}",
    },
    ParamDoc {
        name: "parameters",
        unit: "",
        default: Some("{}"),
        doc: "start values set before initialization: {\"name\": number or boolean}",
    },
    ParamDoc {
        name: "communication_step",
        unit: "s",
        default: Some("the solver step"),
        doc: "Co-Simulation: doStep interval H, a whole multiple of the solver step",
    },
    ParamDoc {
        name: "preload",
        unit: "",
        default: Some("[]"),
        doc: "shared libraries opened with RTLD_GLOBAL before the FMU's binary (a path, relative to the JSON file, or a library name), e.g. the libpython3.x.so a PythonFMU FMU needs",
    },
    ISOLATION,
    CALL_TIMEOUT,
];

const SIGNALS: &[SignalInfo] =
    &[SignalInfo::new("<variable>", 1, "", "every Real/Integer/Boolean FMU variable, by its name")];

/// Register the `fmu` component type.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "fmu",
        kind: Kind::Admittance,
        summary: "an imported FMU (FMI 2.0 or 3.0, CS or ME); an admittance or, with role \"impedance\", an impedance; scalar ports",
        params: PARAMS,
        ports: &[PortDoc {
            name: "port (or the names in `ports`)",
            domain: "scalar",
            doc: "one port per mapping; admittance: force in, motion out; impedance: motion in, force out",
        }],
        signals: SIGNALS,
        build,
    });
}

/// The widest column of `stiction fmu info`'s variable table.
const INFO_WIDTH: usize = 40;

/// `stiction fmu info`: a description of an .fmu (FMI version, interfaces with their model
/// identifiers, platform binaries, default experiment and every variable).
pub fn info(path: &Path) -> std::result::Result<String, FmiError> {
    use std::fmt::Write;
    let shown = path.display().to_string();
    let a = archive::Archive::describe(path, &shown)?;
    let md = &a.description;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{shown}: FMI {} (fmiVersion \"{}\"), model '{}'",
        md.version.label(),
        md.version_text,
        md.model_name
    );
    if let Some(d) = &md.description {
        let _ = writeln!(s, "  description: {d}");
    }
    if let Some(g) = &md.generation_tool {
        let _ = writeln!(s, "  generated by: {g}");
    }
    let token = md.version.token_attribute();
    let _ = writeln!(s, "  {token}: {}", md.token);
    let _ = writeln!(s, "  interfaces: {}", interfaces(md));
    for (interface, present) in
        [(Interface::CoSimulation, md.co_simulation.is_some()), (Interface::ModelExchange, md.model_exchange.is_some())]
    {
        let declared = md.capabilities(interface).declared(interface);
        if present && !declared.is_empty() {
            let _ = writeln!(s, "  {} declares: {}", interface.label(), declared.join(", "));
        }
    }
    for w in &md.warnings {
        let _ = writeln!(s, "  warning: {w}");
    }
    let _ = writeln!(s, "  binaries: {}", a.binaries().join(", "));
    match &md.default_experiment {
        None => {
            let _ = writeln!(s, "  default experiment: none");
        }
        Some(d) => {
            let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x}"));
            let _ = writeln!(
                s,
                "  default experiment: start {} s, stop {} s, step {} s, tolerance {}",
                f(d.start_time),
                f(d.stop_time),
                f(d.step_size),
                f(d.tolerance)
            );
        }
    }
    let states: Vec<&str> = md.states.iter().map(|&i| md.variables[i].name.as_str()).collect();
    let _ = writeln!(
        s,
        "  continuous states: {}; event indicators: {}",
        if states.is_empty() { "none".to_string() } else { states.join(", ") },
        md.event_indicators
    );
    let _ = writeln!(s, "  variables ({}):", md.variables.len());
    // Two passes over the variables (column widths, then the text) through one row visitor
    // that borrows every cell: no String per cell (300 000 variables made 2.1 million).
    let visit = |f: &mut dyn FnMut(&[&str; 7])| {
        let (mut vr, mut ty, mut of) = (String::new(), String::new(), String::new());
        for v in &md.variables {
            vr.clear();
            let _ = write!(vr, "{}", v.vr);
            // FMI 3.0 arrays show their dimensions: Float64[3], Float64[n].
            ty.clear();
            ty.push_str(&v.type_name);
            for d in &v.dimensions {
                let _ = match *d {
                    stiction_fmi_schema::Dimension::Fixed(n) => write!(ty, "[{n}]"),
                    stiction_fmi_schema::Dimension::Parameter(p) => match md.variable_with_vr(p) {
                        Some(p) => write!(ty, "[{}]", p.name),
                        None => write!(ty, "[vr {p}]"),
                    },
                };
            }
            let start = v.start.as_deref().unwrap_or("-");
            let unit = v.unit.as_deref().unwrap_or("-");
            f(&[&v.name, &vr, v.causality.as_str(), v.variability.as_str(), &ty, start, unit]);
            for a in &v.aliases {
                of.clear();
                let _ = write!(of, "alias of {}", v.name);
                f(&[a, &vr, "-", "-", &of, "-", "-"]);
            }
        }
    };
    let head = ["name", "vr", "causality", "variability", "type", "start", "unit"];
    // Columns are as wide as their widest cell up to INFO_WIDTH characters; longer cells
    // are shown whole and push the rest of their row (a format width is at most 65 535).
    let chars = |c: &str| if c.is_ascii() { c.len() } else { c.chars().count() };
    let mut width = head.map(chars);
    let mut rows = 0usize;
    visit(&mut |r| {
        rows += 1;
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(chars(c).min(INFO_WIDTH));
        }
    });
    s.reserve(rows * (width.iter().sum::<usize>() + 20));
    let mut line = |r: &[&str; 7]| {
        let start = s.len();
        s.push_str("    ");
        for (k, (c, &w)) in r.iter().zip(&width).enumerate() {
            if k > 0 {
                s.push_str("  ");
            }
            s.push_str(c);
            let pad = w.saturating_sub(chars(c));
            s.extend(std::iter::repeat_n(' ', pad));
        }
        let end = s[start..].trim_end().len() + start;
        s.truncate(end);
        s.push('\n');
    };
    line(&head);
    visit(&mut line);
    Ok(s)
}
