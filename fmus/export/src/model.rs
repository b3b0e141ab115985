//! The variable table and equations an exported model supplies; everything FMI-specific
//! (state machine, C calling convention, XML, packaging) is written once elsewhere, the way
//! the Modelica Association's Reference FMUs separate `config.h`/`model.c` from the shared
//! FMI code.
//!
//! Every value of a model lives in one `[f64]` indexed by value reference: parameters,
//! inputs, outputs, continuous states, their derivatives and discrete modes (Integer and
//! Boolean variables are stored as whole numbers). An FMU state (fmi2GetFMUstate) is
//! therefore a copy of that array and the time.

pub use stiction_fmi_schema::{Causality, Initial, Interface, VarType, Variability};

/// Where a variable's value comes from, which fixes causality/variability/initial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The independent variable `time` (vr 0).
    Time,
    /// A fixed parameter with a start value (initial="exact").
    Parameter,
    /// A continuous input with a start value.
    Input,
    /// A continuous state; `output` says whether it is also an output. initial="exact".
    State { output: bool },
    /// A continuous output computed by the model (initial="calculated").
    Output,
    /// A discrete output computed by the model (initial="calculated").
    DiscreteOutput,
    /// The derivative of the state with this value reference (Model Exchange only).
    Derivative(u32),
    /// A discrete local mode of the hybrid model (Model Exchange only).
    Mode,
    /// Event indicator number k (0-based) of [`Model::event_indicators`] (Model Exchange
    /// only; FMI 3.0 lists it as `<EventIndicator>`). Computed when read, not stored.
    Indicator(u32),
}

/// One row of a model's variable table. The value reference is the row index.
#[derive(Clone, Copy, Debug)]
pub struct Variable {
    pub name: &'static str,
    /// Float64, Int32 or Boolean.
    pub ty: VarType,
    pub role: Role,
    /// Start value (parameters, inputs, states); 0 for calculated variables.
    pub start: f64,
    /// Unit ("" for none); must be one of [`UNITS`].
    pub unit: &'static str,
    pub description: &'static str,
}

impl Variable {
    pub const fn new(
        name: &'static str,
        ty: VarType,
        role: Role,
        start: f64,
        unit: &'static str,
        d: &'static str,
    ) -> Self {
        Variable { name, ty, role, start, unit, description: d }
    }
    pub fn causality(&self) -> Causality {
        match self.role {
            Role::Time => Causality::Independent,
            Role::Parameter => Causality::Parameter,
            Role::Input => Causality::Input,
            Role::State { output: true } | Role::Output | Role::DiscreteOutput => Causality::Output,
            Role::State { output: false } | Role::Derivative(_) | Role::Mode | Role::Indicator(_) => Causality::Local,
        }
    }
    pub fn variability(&self) -> Variability {
        match self.role {
            Role::Parameter => Variability::Fixed,
            Role::DiscreteOutput | Role::Mode => Variability::Discrete,
            _ if self.ty != VarType::Float64 => Variability::Discrete,
            _ => Variability::Continuous,
        }
    }
    pub fn initial(&self) -> Option<Initial> {
        match self.role {
            Role::Time | Role::Input => None,
            Role::Parameter | Role::State { .. } => Some(Initial::Exact),
            Role::Output | Role::DiscreteOutput | Role::Derivative(_) | Role::Mode | Role::Indicator(_) => {
                Some(Initial::Calculated)
            }
        }
    }
    /// Whether the variable carries a start value in modelDescription.xml.
    pub fn has_start(&self) -> bool {
        matches!(self.role, Role::Parameter | Role::Input | Role::State { .. })
    }
    /// Part of the Model Exchange description only.
    pub fn me_only(&self) -> bool {
        matches!(self.role, Role::Derivative(_) | Role::Mode | Role::Indicator(_))
    }
    pub fn is_state(&self) -> bool {
        matches!(self.role, Role::State { .. })
    }
}

/// The units the exported models use, with their SI base-unit exponents
/// (kg, m, s, rad) for the `<UnitDefinitions>` element.
pub const UNITS: &[(&str, [i32; 4])] = &[
    ("s", [0, 0, 1, 0]),
    ("m", [0, 1, 0, 0]),
    ("m/s", [0, 1, -1, 0]),
    ("m/s2", [0, 1, -2, 0]),
    ("kg", [1, 0, 0, 0]),
    ("N", [1, 1, -2, 0]),
    ("N/m", [1, 0, -2, 0]),
    ("N.s/m", [1, 0, -1, 0]),
    ("rad", [0, 0, 0, 1]),
    ("rad/s", [0, 0, -1, 1]),
    ("rad/s2", [0, 0, -2, 1]),
    ("kg.m2", [1, 2, 0, 0]),
    ("N.m", [1, 2, -2, 0]),
    ("N.m.s/rad", [1, 2, -1, -1]),
];

/// The static description of an exported model.
#[derive(Debug)]
pub struct ModelInfo {
    /// modelIdentifier and modelName, e.g. `StictionGear`.
    pub identifier: &'static str,
    /// The CLI name (`stiction fmu export <name>`).
    pub cli_name: &'static str,
    pub description: &'static str,
    pub variables: &'static [Variable],
    /// Number of event indicators of the Model Exchange form.
    pub event_indicators: usize,
    pub model_exchange: bool,
    /// DefaultExperiment (stop time, step size).
    pub default_stop: f64,
    pub default_step: f64,
    /// HTML body for documentation/index.html (the variable list is appended).
    pub documentation: &'static str,
}

impl ModelInfo {
    /// Value references of the continuous states, in state-vector order.
    pub fn states(&self) -> Vec<usize> {
        (0..self.variables.len()).filter(|&i| self.variables[i].is_state()).collect()
    }
    /// Value reference of the derivative of each state (Model Exchange).
    pub fn derivatives(&self) -> Vec<usize> {
        self.states()
            .into_iter()
            .filter_map(|s| self.variables.iter().position(|v| v.role == Role::Derivative(s as u32)))
            .collect()
    }
    /// Value reference of each event indicator, in indicator order (Model Exchange).
    pub fn indicators(&self) -> Vec<usize> {
        (0..self.event_indicators as u32)
            .filter_map(|k| self.variables.iter().position(|v| v.role == Role::Indicator(k)))
            .collect()
    }
    pub fn find(&self, name: &str) -> Option<usize> {
        self.variables.iter().position(|v| v.name == name)
    }
    /// The default start values (one per value reference).
    pub fn defaults(&self) -> Vec<f64> {
        self.variables.iter().map(|v| v.start).collect()
    }
}

/// What an event iteration changed (fmi2NewDiscreteStates / fmi3UpdateDiscreteStates).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EventUpdate {
    pub states_changed: bool,
}

/// The equations of one exported model. All methods work on the value array `v`.
pub trait Model: Sync {
    fn info(&self) -> &'static ModelInfo;
    /// Check the parameters, set the discrete modes and compute every calculated variable
    /// for the start of the simulation (called in and at the end of initialization mode).
    fn initialize(&self, v: &mut [f64], interface: Interface) -> Result<(), String>;
    /// Co-Simulation: advance the model over `h` with the inputs held.
    fn do_step(&self, v: &mut [f64], h: f64) -> Result<(), String>;
    /// Model Exchange: derivatives and outputs from states, inputs and modes.
    fn derivatives(&self, _v: &mut [f64]) -> Result<(), String> {
        Err("this model has no Model Exchange form".into())
    }
    /// Model Exchange: event indicators (a sign change is an event).
    fn event_indicators(&self, _v: &[f64], _z: &mut [f64]) {}
    /// Model Exchange: nominal magnitudes of the continuous states (the host scales its
    /// absolute error tolerance with them).
    fn nominals(&self, _v: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = 1.0);
    }
    /// Model Exchange: event iteration at the current time.
    fn event_update(&self, _v: &mut [f64]) -> EventUpdate {
        EventUpdate::default()
    }
}

/// One instance's computation, as the FMI state machine ([`crate::instance`]) drives it.
/// The hand-written models are stateless beyond the value array (a `&'static dyn Model`
/// is an engine); an engine that owns more (a whole simulation: the `stiction-fmu-system`
/// binary) keeps it here and saves it into FMU states through [`save`](Engine::save).
pub trait Engine {
    fn info(&self) -> &'static ModelInfo;
    /// [`Model::initialize`], at the start time `time` of the experiment.
    fn initialize(&mut self, time: f64, v: &mut [f64], interface: Interface) -> Result<(), String>;
    /// [`Model::do_step`] from `time` over `h`.
    fn do_step(&mut self, time: f64, v: &mut [f64], h: f64) -> Result<(), String>;
    fn derivatives(&mut self, v: &mut [f64]) -> Result<(), String>;
    fn event_indicators(&self, v: &[f64], z: &mut [f64]);
    fn nominals(&self, v: &[f64], out: &mut [f64]);
    fn event_update(&mut self, v: &mut [f64]) -> EventUpdate;
    /// Co-Simulation step mode: bring the outputs up to date with inputs set since the last
    /// step (outputs with direct feedthrough). The hand-written models have none: no-op.
    fn outputs(&mut self, _v: &mut [f64]) -> Result<(), String> {
        Ok(())
    }
    /// Whatever the engine keeps outside the value array, as bytes for an FMU state (empty
    /// for an engine that keeps nothing). An error refuses the GetFMUstate call.
    fn save(&mut self) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
    }
    /// Restore what [`save`](Engine::save) gave, taken at the FMU's time `time` (an engine
    /// that keeps its own clock refuses a state whose two times differ); an error leaves the
    /// engine as it was. `time` and the value array are restored by the caller.
    fn restore(&mut self, bytes: &[u8], time: f64) -> Result<(), String> {
        let _ = time;
        if bytes.is_empty() {
            Ok(())
        } else {
            Err(format!("{} keeps no state besides its variables", self.info().identifier))
        }
    }
    /// Back to the state after instantiation (fmi2Reset).
    fn reset(&mut self) {}
    /// After a [`do_step`](Engine::do_step) that returned `Ok`: the time it reached and why
    /// when a part of the model asked to end the simulation there (the FMU then reports
    /// fmi2Terminated / terminateSimulation); None to go on.
    fn stop_request(&self) -> Option<(f64, String)> {
        None
    }
    /// The largest [`save`](Engine::save) result a deserialized FMU state may carry.
    fn max_saved_bytes(&self) -> usize {
        0
    }
}

impl Engine for &'static dyn Model {
    fn info(&self) -> &'static ModelInfo {
        Model::info(*self)
    }
    fn initialize(&mut self, _time: f64, v: &mut [f64], interface: Interface) -> Result<(), String> {
        Model::initialize(*self, v, interface)
    }
    fn do_step(&mut self, _time: f64, v: &mut [f64], h: f64) -> Result<(), String> {
        Model::do_step(*self, v, h)
    }
    fn derivatives(&mut self, v: &mut [f64]) -> Result<(), String> {
        Model::derivatives(*self, v)
    }
    fn event_indicators(&self, v: &[f64], z: &mut [f64]) {
        Model::event_indicators(*self, v, z)
    }
    fn nominals(&self, v: &[f64], out: &mut [f64]) {
        Model::nominals(*self, v, out)
    }
    fn event_update(&mut self, v: &mut [f64]) -> EventUpdate {
        Model::event_update(*self, v)
    }
}

/// The sub-step budget of one doStep: at most this many internal steps (each a few
/// hundred nanoseconds, so a doStep stays well under a second). A step `h` that would need
/// more with the parameter `substep` is refused with an error naming both.
pub const MAX_SUBSTEPS: f64 = 1e6;

/// Number of equal sub-steps of at most `substep` that make up a communication step `h`;
/// an error beyond [`MAX_SUBSTEPS`].
pub fn substeps(h: f64, substep: f64) -> Result<usize, String> {
    let n = (h / substep * (1.0 - 1e-12)).ceil();
    // Also refuses NaN.
    if n.partial_cmp(&MAX_SUBSTEPS).is_none_or(|o| o.is_gt()) {
        return Err(format!(
            "the step h = {h} s needs {n:e} sub-steps of substep = {substep} s; the budget is {MAX_SUBSTEPS:e} per \
             doStep (raise substep or shorten the step)"
        ));
    }
    Ok(if n >= 1.0 { n as usize } else { 1 })
}

/// Validation helpers for [`Model::initialize`]: each returns an error naming the parameter.
pub struct Check<'a> {
    pub info: &'static ModelInfo,
    pub v: &'a [f64],
}

impl Check<'_> {
    pub fn get(&self, name: &str) -> f64 {
        self.info.find(name).map_or(f64::NAN, |i| self.v[i])
    }
    pub fn positive(&self, name: &str) -> Result<f64, String> {
        let x = self.get(name);
        if x > 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(format!("parameter {name} must be > 0, got {x}"))
        }
    }
    pub fn nonneg(&self, name: &str) -> Result<f64, String> {
        let x = self.get(name);
        if x >= 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(format!("parameter {name} must be ≥ 0, got {x}"))
        }
    }
    pub fn finite(&self, name: &str) -> Result<f64, String> {
        let x = self.get(name);
        if x.is_finite() {
            Ok(x)
        } else {
            Err(format!("{name} must be finite, got {x}"))
        }
    }
}

/// A 64-bit FNV-1a hash (for instantiation tokens; no security purpose).
pub fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The GUID / instantiation token of a model with the given start values: a hash of the
/// identifier, the crate version and every start value, formatted like a UUID.
pub fn guid(info: &ModelInfo, starts: &[f64]) -> String {
    let mut text = format!("{} {}", info.identifier, env!("CARGO_PKG_VERSION"));
    for (var, s) in info.variables.iter().zip(starts) {
        text.push_str(&format!(" {}={:e}", var.name, s));
    }
    let (a, b) = (fnv1a(text.as_bytes(), 0), fnv1a(text.as_bytes(), 0x9e37_79b9_7f4a_7c15));
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// The start values an exported FMU was packaged with, stored as
/// `resources/stiction-start.txt` (one `name = value` line each, plus `model = ...`), so the
/// binary's internal defaults always equal the start values in modelDescription.xml.
pub fn start_file(info: &ModelInfo, starts: &[f64]) -> String {
    let mut s = format!("# start values of this FMU (written by `stiction fmu export`)\nmodel = {}\n", info.identifier);
    for (var, x) in info.variables.iter().zip(starts) {
        if var.has_start() {
            s.push_str(&format!("{} = {:?}\n", var.name, x));
        }
    }
    s
}

/// Parse [`start_file`] text: (model identifier, start values).
pub fn parse_start_file(text: &str) -> Result<(String, Vec<(String, f64)>), String> {
    let mut model = None;
    let mut values = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, val) = line.split_once('=').ok_or_else(|| format!("line {}: expected `name = value`", n + 1))?;
        let (k, val) = (k.trim(), val.trim());
        if k == "model" {
            model = Some(val.to_string());
        } else {
            let x: f64 = val.parse().map_err(|_| format!("line {}: `{val}` is not a number", n + 1))?;
            values.push((k.to_string(), x));
        }
    }
    Ok((model.ok_or("no `model = ...` line")?, values))
}
