//! One FMU instance and the FMI state machine, written once in safe Rust for FMI 2.0 and
//! FMI 3.0; `fmi2.rs` and `fmi3.rs` only translate the C calling convention.
//!
//! Every operation checks that the instance is in a state where the FMI standard allows
//! the call and that its arguments are valid (known value references, settable variables,
//! finite numbers, matching array lengths). A violation returns [`Status::Error`] with a
//! log message and leaves the instance unchanged, so a faulty host cannot crash it.

use crate::model::{parse_start_file, Engine, EventUpdate, Interface, Model, ModelInfo, Role, VarType};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::OnceLock;

/// fmi2Status / fmi3Status (same numbering for OK..Fatal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok = 0,
    Warning = 1,
    Discard = 2,
    Error = 3,
    Fatal = 4,
}

/// The phases of the FMI state machine that the models use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Instantiated,
    Initialization,
    /// Model Exchange event mode.
    Event,
    /// Model Exchange continuous-time mode.
    ContinuousTime,
    /// Co-Simulation step mode (stepComplete).
    Step,
    Terminated,
    /// After a failed computation: only get, reset and free are allowed.
    Failed,
}

/// FMI version of the host's calls (FMI 3.0 names some functions differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Fmi2,
    Fmi3,
}

/// Sink for log messages: (status, category, message).
pub type Logger = Box<dyn Fn(Status, &str, &str) + Send>;

/// Objects alive in this process (instances and FMU states), for the leak check of the
/// misuse harness (`stiction_fmu_live_objects`).
pub static LIVE: AtomicIsize = AtomicIsize::new(0);

/// A saved FMU state: the time, the whole value array and what the engine keeps besides
/// ([`Engine::save`]; empty for the hand-written models).
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub model: &'static str,
    pub time: f64,
    pub values: Vec<f64>,
    pub phase: Phase,
    pub extra: Vec<u8>,
}

impl Snapshot {
    pub fn new(model: &'static str, time: f64, values: Vec<f64>, phase: Phase, extra: Vec<u8>) -> Snapshot {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Snapshot { model, time, values, phase, extra }
    }

    /// The envelope's magic and format version (stiction_framework::sealed).
    const MAGIC: &'static [u8; 16] = b"stiction-fmu-st\0";
    const VERSION: u32 = 2;
    /// The body's size beyond the values and the engine's part: hash, phase, time, n, length.
    const FIXED: usize = 4 * 8 + 8;

    /// The largest serialized size of a state of `n` values whose engine part is at most
    /// `max_extra` bytes (what a deserialize call may be handed at most).
    pub fn max_serialized(n: usize, max_extra: usize) -> usize {
        stiction_framework::sealed::OVERHEAD
            .saturating_add(Self::FIXED)
            .saturating_add(n.saturating_mul(8))
            .saturating_add(max_extra)
    }

    /// Serialized form, sealed (length and CRC-32 over everything: time, phase, values, the
    /// engine's part): model hash, phase, time, n, values, the engine's part's length and
    /// bytes (little endian).
    pub fn serialize(&self) -> Vec<u8> {
        let size = Self::FIXED + 8 * self.values.len() + self.extra.len();
        let mut out = stiction_framework::sealed::begin(Self::MAGIC, Self::VERSION, size);
        out.extend_from_slice(&crate::model::fnv1a(self.model.as_bytes(), 0).to_le_bytes());
        out.extend_from_slice(&(phase_code(self.phase)).to_le_bytes());
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend_from_slice(&(self.values.len() as u64).to_le_bytes());
        for v in &self.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(self.extra.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.extra);
        stiction_framework::sealed::finish(out)
    }

    /// Read [`serialize`](Self::serialize)'s bytes: the envelope first (a cut, extended or
    /// edited state is refused before anything is read), then every field against this
    /// model; the engine's part may be at most `max_extra` bytes.
    pub fn deserialize(model: &ModelInfo, bytes: &[u8], max_extra: usize) -> Result<Snapshot, String> {
        let body = stiction_framework::sealed::open("FMU state", Self::MAGIC, Self::VERSION, bytes)
            .map_err(|e| format!("serialized FMU state: {e}"))?;
        let word = |i: usize| -> Result<[u8; 8], String> {
            body.get(i * 8..i * 8 + 8)
                .and_then(|s| s.try_into().ok())
                .ok_or_else(|| format!("serialized FMU state ends early ({} bytes)", bytes.len()))
        };
        if u64::from_le_bytes(word(0)?) != crate::model::fnv1a(model.identifier.as_bytes(), 0) {
            return Err(format!("serialized FMU state belongs to another model than {}", model.identifier));
        }
        let phase = phase_from(u64::from_le_bytes(word(1)?)).ok_or("serialized FMU state has an unknown phase")?;
        let time = f64::from_le_bytes(word(2)?);
        if !time.is_finite() {
            return Err(format!("serialized FMU state has the time {time}, which is not finite"));
        }
        // The count is compared as read, never used to size anything.
        let count = u64::from_le_bytes(word(3)?);
        let n = model.variables.len();
        if count != n as u64 {
            return Err(format!("serialized FMU state has {count} values, this model {n}"));
        }
        let len = u64::from_le_bytes(word(4 + n)?);
        let rest = (body.len() - (Self::FIXED + 8 * n)) as u64;
        if len != rest || len > max_extra as u64 {
            return Err(format!(
                "serialized FMU state has an engine part of {len} bytes in {rest} (at most {max_extra})"
            ));
        }
        let extra = body[Self::FIXED + 8 * n..].to_vec();
        let values = (0..n).map(|i| word(4 + i).map(f64::from_le_bytes)).collect::<Result<Vec<_>, _>>()?;
        if let Some((i, x)) = values.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(format!(
                "serialized FMU state has the value {x} for {} (value reference {i}), which is not finite",
                model.variables[i].name
            ));
        }
        Ok(Snapshot::new(model.identifier, time, values, phase, extra))
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

fn phase_code(p: Phase) -> u64 {
    match p {
        Phase::Instantiated => 0,
        Phase::Initialization => 1,
        Phase::Event => 2,
        Phase::ContinuousTime => 3,
        Phase::Step => 4,
        Phase::Terminated => 5,
        Phase::Failed => 6,
    }
}

fn phase_from(c: u64) -> Option<Phase> {
    Some(match c {
        0 => Phase::Instantiated,
        1 => Phase::Initialization,
        2 => Phase::Event,
        3 => Phase::ContinuousTime,
        4 => Phase::Step,
        5 => Phase::Terminated,
        6 => Phase::Failed,
        _ => return None,
    })
}

/// The models this binary contains.
pub fn models() -> [&'static dyn Model; 3] {
    [&crate::gear::Gear, &crate::friction::Friction, &crate::friction_mass::FrictionMass]
}

/// A binary's own models beyond the hand-written ones: given the token and the resource
/// directory, `None` if the FMU is not one of them, else the engine and its start values.
pub type Resolver = fn(&str, &std::path::Path) -> Option<Resolved>;

/// An engine and its start values, or why the FMU cannot be instantiated.
pub type Resolved = Result<(Box<dyn Engine>, Vec<f64>), String>;

static RESOLVER: OnceLock<Resolver> = OnceLock::new();

/// Install the binary's [`Resolver`] (the `stiction-fmu-system` binary does, when it is
/// loaded); asked before the hand-written models. A second call is ignored.
pub fn set_resolver(r: Resolver) {
    let _ = RESOLVER.set(r);
}

/// Select the model for a GUID / instantiation token, reading the start values the FMU was
/// packaged with from `resources/stiction-start.txt` when the resource directory is known.
pub fn resolve(token: &str, resources: Option<&std::path::Path>) -> Resolved {
    if let (Some(dir), Some(r)) = (resources, RESOLVER.get()) {
        if let Some(found) = r(token, dir) {
            return found;
        }
    }
    let (model, values) = resolve_model(token, resources)?;
    Ok((Box::new(model), values))
}

/// [`resolve`] among the hand-written models.
pub fn resolve_model(
    token: &str,
    resources: Option<&std::path::Path>,
) -> Result<(&'static dyn Model, Vec<f64>), String> {
    if let Some(dir) = resources {
        let file = dir.join("stiction-start.txt");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let (id, starts) = parse_start_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            let model = models()
                .into_iter()
                .find(|m| m.info().identifier == id)
                .ok_or_else(|| format!("{}: unknown model {id}", file.display()))?;
            let info = model.info();
            let mut values = info.defaults();
            for (name, x) in starts {
                let i = info.find(&name).ok_or_else(|| format!("{}: unknown variable {name}", file.display()))?;
                values[i] = x;
            }
            let expected = crate::model::guid(info, &values);
            if expected != token {
                return Err(format!(
                    "GUID/instantiation token {token} does not match this FMU's resources ({expected}): \
                     modelDescription.xml and resources/ come from different exports"
                ));
            }
            return Ok((model, values));
        }
    }
    for model in models() {
        let values = model.info().defaults();
        if crate::model::guid(model.info(), &values) == token {
            return Ok((model, values));
        }
    }
    Err(format!(
        "unknown GUID/instantiation token {token} and no resources/stiction-start.txt found{}",
        resources.map(|p| format!(" in {}", p.display())).unwrap_or_default()
    ))
}

/// One instance of an exported model.
pub struct Instance {
    pub name: String,
    pub model: Box<dyn Engine>,
    pub interface: Interface,
    pub version: Version,
    pub phase: Phase,
    pub time: f64,
    pub values: Vec<f64>,
    /// Start values, restored by reset.
    starts: Vec<f64>,
    logger: Logger,
    /// Debug messages (events) only when logging is on; errors are always reported.
    pub logging_on: bool,
    /// Calculated variables are stale (an input or state was set).
    dirty: bool,
    /// The last doStep failed: fmi2GetStatus reports it.
    pub last_step_failed: bool,
    /// The model asked to end the simulation in a doStep ([`Engine::stop_request`]): the
    /// doStep ended at [`Instance::time`] with Discard, fmi2GetBooleanStatus(fmi2Terminated)
    /// and FMI 3.0's terminateSimulation say so, and no doStep follows.
    pub terminate_requested: bool,
    /// The values before the current doStep, restored if it fails (kept to reuse its memory).
    backup: Vec<f64>,
    /// The C function being called (set by the entry points), named in log messages.
    pub call: &'static str,
}

impl Drop for Instance {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

type R<T = ()> = Result<T, Status>;

impl Instance {
    pub fn new(
        name: String,
        model: Box<dyn Engine>,
        starts: Vec<f64>,
        interface: Interface,
        version: Version,
        logger: Logger,
        logging_on: bool,
    ) -> Instance {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Instance {
            name,
            model,
            interface,
            version,
            phase: Phase::Instantiated,
            time: 0.0,
            values: starts.clone(),
            starts,
            logger,
            logging_on,
            dirty: true,
            last_step_failed: false,
            terminate_requested: false,
            backup: Vec::new(),
            call: "",
        }
    }

    pub fn info(&self) -> &'static ModelInfo {
        self.model.info()
    }

    pub fn log(&self, status: Status, message: &str) {
        let category = match status {
            Status::Ok => "logEvents",
            Status::Warning => "logStatusWarning",
            Status::Discard => "logStatusDiscard",
            Status::Error => "logStatusError",
            Status::Fatal => "logStatusFatal",
        };
        if status != Status::Ok || self.logging_on {
            (self.logger)(status, category, &self.qualify(message));
        }
    }

    /// Name the host's C function in a message: "DoStep: …" logged during fmi2DoStep
    /// becomes "fmi2DoStep: …"; a message naming another step is prefixed with it.
    fn qualify(&self, message: &str) -> String {
        let call = self.call;
        if call.is_empty() || message.starts_with(call) {
            return message.to_string();
        }
        match message.split_once(": ") {
            Some((head, rest)) if call.get(4..).is_some_and(|c| c.eq_ignore_ascii_case(head)) => {
                format!("{call}: {rest}")
            }
            _ => format!("{call}: {message}"),
        }
    }

    /// Log an error and return it.
    pub fn error<T>(&self, message: impl AsRef<str>) -> R<T> {
        self.log(Status::Error, message.as_ref());
        Err(Status::Error)
    }

    /// The call `function` is allowed only in `allowed` phases.
    pub fn expect(&self, function: &str, allowed: &[Phase]) -> R {
        if allowed.contains(&self.phase) {
            Ok(())
        } else {
            self.error(format!("{function}: not allowed in state {:?} (illegal call sequence)", self.phase))
        }
    }

    fn fail(&mut self, function: &str, message: &str) -> Status {
        self.phase = Phase::Failed;
        self.log(Status::Error, &format!("{function}: {message}"));
        Status::Error
    }

    // ---- life cycle ----

    pub fn setup_experiment(&mut self, start: f64) -> R {
        self.expect("SetupExperiment", &[Phase::Instantiated])?;
        if !start.is_finite() {
            return self.error(format!("SetupExperiment: start time {start} is not finite"));
        }
        self.time = start;
        Ok(())
    }

    pub fn enter_initialization(&mut self) -> R {
        self.expect("EnterInitializationMode", &[Phase::Instantiated])?;
        self.phase = Phase::Initialization;
        self.dirty = true;
        Ok(())
    }

    pub fn exit_initialization(&mut self) -> R {
        self.expect("ExitInitializationMode", &[Phase::Initialization])?;
        if let Err(e) = self.model.initialize(self.time, &mut self.values, self.interface) {
            return self.error(format!("ExitInitializationMode: {e}"));
        }
        self.dirty = false;
        self.phase = match self.interface {
            Interface::ModelExchange => Phase::Event,
            Interface::CoSimulation => Phase::Step,
        };
        Ok(())
    }

    pub fn terminate(&mut self) -> R {
        self.expect("Terminate", &[Phase::Event, Phase::ContinuousTime, Phase::Step, Phase::Failed])?;
        self.phase = Phase::Terminated;
        Ok(())
    }

    pub fn reset(&mut self) {
        self.values = self.starts.clone();
        self.model.reset();
        self.time = 0.0;
        self.phase = Phase::Instantiated;
        self.dirty = true;
        self.last_step_failed = false;
        self.terminate_requested = false;
    }

    // ---- variables ----

    fn lookup(&self, function: &str, vr: u32, ty: VarType) -> R<usize> {
        let i = vr as usize;
        match self.info().variables.get(i) {
            Some(v) if v.ty == ty && !(self.interface == Interface::CoSimulation && v.me_only()) => Ok(i),
            Some(v) if v.ty != ty => self
                .error(format!("{function}: value reference {vr} ({}) is a {:?} variable, not {ty:?}", v.name, v.ty)),
            _ => self.error(format!("{function}: unknown value reference {vr} for {}", self.info().identifier)),
        }
    }

    /// Bring calculated variables up to date with the inputs and states.
    fn refresh(&mut self, function: &str) -> R {
        if !self.dirty {
            return Ok(());
        }
        let result = match (self.phase, self.interface) {
            (Phase::Initialization, i) => self.model.initialize(self.time, &mut self.values, i),
            (Phase::Event | Phase::ContinuousTime, Interface::ModelExchange) => {
                self.model.derivatives(&mut self.values)
            }
            (Phase::Step, Interface::CoSimulation) => self.model.outputs(&mut self.values),
            _ => Ok(()),
        };
        match result {
            Ok(()) => {
                self.dirty = false;
                Ok(())
            }
            Err(e) => self.error(format!("{function}: {e}")),
        }
    }

    pub fn get(&mut self, function: &str, vrs: &[u32], ty: VarType, out: &mut [f64]) -> R {
        self.expect(
            function,
            &[
                Phase::Initialization,
                Phase::Event,
                Phase::ContinuousTime,
                Phase::Step,
                Phase::Terminated,
                Phase::Failed,
            ],
        )?;
        if out.len() != vrs.len() {
            return self.error(format!("{function}: {} values for {} value references", out.len(), vrs.len()));
        }
        let idx = vrs.iter().map(|&vr| self.lookup(function, vr, ty)).collect::<R<Vec<_>>>()?;
        self.refresh(function)?;
        let vars = self.info().variables;
        // Event indicators are computed from the current values, as GetEventIndicators does.
        let mut z = Vec::new();
        if idx.iter().any(|&i| matches!(vars[i].role, Role::Indicator(_))) {
            z = vec![f64::NAN; self.info().event_indicators];
            self.model.event_indicators(&self.values, &mut z);
        }
        for (o, i) in out.iter_mut().zip(idx) {
            *o = match vars[i].role {
                Role::Time => self.time,
                Role::Indicator(k) => z.get(k as usize).copied().unwrap_or(f64::NAN),
                _ => self.values[i],
            };
        }
        Ok(())
    }

    /// Whether variable `i` may be set in the current phase.
    fn settable(&self, i: usize) -> bool {
        let role = self.info().variables[i].role;
        match self.phase {
            Phase::Instantiated | Phase::Initialization => {
                matches!(role, Role::Parameter | Role::Input | Role::State { .. })
            }
            Phase::Event | Phase::ContinuousTime | Phase::Step => role == Role::Input,
            _ => false,
        }
    }

    pub fn set(&mut self, function: &str, vrs: &[u32], ty: VarType, values: &[f64]) -> R {
        self.expect(
            function,
            &[Phase::Instantiated, Phase::Initialization, Phase::Event, Phase::ContinuousTime, Phase::Step],
        )?;
        if values.len() != vrs.len() {
            return self.error(format!("{function}: {} values for {} value references", values.len(), vrs.len()));
        }
        let mut idx = Vec::with_capacity(vrs.len());
        for (&vr, &x) in vrs.iter().zip(values) {
            let i = self.lookup(function, vr, ty)?;
            let var = &self.info().variables[i];
            if !self.settable(i) {
                return self.error(format!(
                    "{function}: variable {} (value reference {vr}, {:?}) cannot be set in state {:?}",
                    var.name, var.role, self.phase
                ));
            }
            if !x.is_finite() {
                return self
                    .error(format!("{function}: value {x} for {} (value reference {vr}) is not finite", var.name));
            }
            idx.push(i);
        }
        for (i, &x) in idx.into_iter().zip(values) {
            self.values[i] = x;
        }
        self.dirty = true;
        Ok(())
    }

    // ---- Co-Simulation ----

    pub fn do_step(&mut self, t: f64, h: f64) -> R {
        self.expect("DoStep", &[Phase::Step])?;
        if self.interface != Interface::CoSimulation {
            return self.error("DoStep: instance is not Co-Simulation");
        }
        if !(h > 0.0 && h.is_finite()) {
            return self.error(format!("DoStep: communication step size {h} must be finite and > 0"));
        }
        // Written so that a NaN anywhere fails the check.
        if !(t.is_finite() && (t - self.time).abs() <= 1e-9 * (1.0 + self.time.abs())) {
            return self
                .error(format!("DoStep: currentCommunicationPoint {t} does not match the FMU time {}", self.time));
        }
        if self.terminate_requested {
            return self.error(format!("DoStep: the model asked to end the simulation at t = {}", self.time));
        }
        self.backup.clone_from(&self.values);
        match self.model.do_step(t, &mut self.values, h) {
            Ok(()) => {
                self.last_step_failed = false;
                // The step computed the outputs from the inputs it held.
                self.dirty = false;
                if let Some((reached, why)) = self.model.stop_request() {
                    self.time = reached;
                    self.terminate_requested = true;
                    self.log(Status::Discard, &format!("DoStep: the simulation ends at t = {reached}: {why}"));
                    return Err(Status::Discard);
                }
                self.time = t + h;
                Ok(())
            }
            Err(e) => {
                self.values.clone_from(&self.backup);
                self.last_step_failed = true;
                Err(self.fail("DoStep", &format!("at t = {t}: {e}")))
            }
        }
    }

    // ---- Model Exchange ----

    fn me(&self, function: &str, allowed: &[Phase]) -> R {
        if self.interface != Interface::ModelExchange {
            return self.error(format!("{function}: instance is Co-Simulation, not Model Exchange"));
        }
        self.expect(function, allowed)
    }

    pub fn set_time(&mut self, t: f64) -> R {
        self.me("SetTime", &[Phase::Event, Phase::ContinuousTime])?;
        if !t.is_finite() {
            return self.error(format!("SetTime: time {t} is not finite"));
        }
        self.time = t;
        self.dirty = true;
        Ok(())
    }

    pub fn enter_event_mode(&mut self) -> R {
        self.me("EnterEventMode", &[Phase::ContinuousTime, Phase::Event])?;
        self.phase = Phase::Event;
        Ok(())
    }

    pub fn enter_continuous_time_mode(&mut self) -> R {
        self.me("EnterContinuousTimeMode", &[Phase::Event])?;
        self.phase = Phase::ContinuousTime;
        Ok(())
    }

    /// The name of a function that FMI 2.0 and FMI 3.0 call differently.
    fn named(&self, fmi2: &'static str, fmi3: &'static str) -> &'static str {
        match self.version {
            Version::Fmi2 => fmi2,
            Version::Fmi3 => fmi3,
        }
    }

    /// Event iteration; the models settle in one pass.
    pub fn update_discrete_states(&mut self) -> R<EventUpdate> {
        let function = self.named("NewDiscreteStates", "UpdateDiscreteStates");
        self.me(function, &[Phase::Event])?;
        let before = self.values[..].to_vec();
        let u = self.model.event_update(&mut self.values);
        self.dirty = true;
        self.refresh(function)?;
        if self.logging_on && before != self.values {
            self.log(Status::Ok, &format!("event at t = {}: discrete state updated", self.time));
        }
        Ok(u)
    }

    fn state_vrs(&self) -> Vec<usize> {
        self.info().states()
    }

    fn check_len(&self, function: &str, n: usize, expected: usize) -> R {
        if n == expected {
            Ok(())
        } else {
            self.error(format!("{function}: array length {n}, the model has {expected}"))
        }
    }

    pub fn get_states(&mut self, out: &mut [f64]) -> R {
        self.me(
            "GetContinuousStates",
            &[Phase::Initialization, Phase::Event, Phase::ContinuousTime, Phase::Terminated],
        )?;
        let s = self.state_vrs();
        self.check_len("GetContinuousStates", out.len(), s.len())?;
        for (o, i) in out.iter_mut().zip(s) {
            *o = self.values[i];
        }
        Ok(())
    }

    pub fn set_states(&mut self, x: &[f64]) -> R {
        self.me("SetContinuousStates", &[Phase::ContinuousTime])?;
        let s = self.state_vrs();
        self.check_len("SetContinuousStates", x.len(), s.len())?;
        if let Some(bad) = x.iter().find(|v| !v.is_finite()) {
            return self.error(format!("SetContinuousStates: state value {bad} is not finite"));
        }
        for (i, v) in s.into_iter().zip(x) {
            self.values[i] = *v;
        }
        self.dirty = true;
        Ok(())
    }

    pub fn get_derivatives(&mut self, out: &mut [f64]) -> R {
        let function = self.named("GetDerivatives", "GetContinuousStateDerivatives");
        self.me(
            function,
            &[Phase::Initialization, Phase::Event, Phase::ContinuousTime, Phase::Terminated, Phase::Failed],
        )?;
        let d = self.info().derivatives();
        self.check_len(function, out.len(), d.len())?;
        self.refresh(function)?;
        for (o, i) in out.iter_mut().zip(d) {
            *o = self.values[i];
        }
        Ok(())
    }

    pub fn get_event_indicators(&mut self, out: &mut [f64]) -> R {
        self.me(
            "GetEventIndicators",
            &[Phase::Initialization, Phase::Event, Phase::ContinuousTime, Phase::Terminated, Phase::Failed],
        )?;
        self.check_len("GetEventIndicators", out.len(), self.info().event_indicators)?;
        // The same values as getting the indicator variables (which refreshes first).
        self.refresh("GetEventIndicators")?;
        self.model.event_indicators(&self.values, out);
        Ok(())
    }

    pub fn get_nominals(&mut self, out: &mut [f64]) -> R {
        self.me(
            "GetNominalsOfContinuousStates",
            &[Phase::Instantiated, Phase::Initialization, Phase::Event, Phase::ContinuousTime, Phase::Terminated],
        )?;
        self.check_len("GetNominalsOfContinuousStates", out.len(), self.state_vrs().len())?;
        self.model.nominals(&self.values, out);
        Ok(())
    }

    pub fn completed_integrator_step(&mut self) -> R {
        self.me("CompletedIntegratorStep", &[Phase::ContinuousTime])
    }

    // ---- FMU state ----

    /// The whole model state (in any phase; before initialization it is the start values).
    pub fn snapshot(&mut self) -> R<Snapshot> {
        let extra = match self.model.save() {
            Ok(x) => x,
            Err(e) => return self.error(format!("GetFMUState: {e}")),
        };
        Ok(Snapshot::new(self.info().identifier, self.time, self.values.clone(), self.phase, extra))
    }

    pub fn restore(&mut self, s: &Snapshot) -> R {
        if s.model != self.info().identifier || s.values.len() != self.values.len() {
            return self.error(format!(
                "SetFMUState: the state belongs to model {}, not {}",
                s.model,
                self.info().identifier
            ));
        }
        let foreign = match s.phase {
            Phase::Event | Phase::ContinuousTime => self.interface != Interface::ModelExchange,
            Phase::Step => self.interface != Interface::CoSimulation,
            _ => false,
        };
        if foreign {
            return self.error(format!(
                "SetFMUState: the state was taken in phase {:?}, which a {:?} instance does not have",
                s.phase, self.interface
            ));
        }
        if let Err(e) = self.model.restore(&s.extra, s.time) {
            return self.error(format!("SetFMUState: {e}"));
        }
        self.time = s.time;
        self.values.clone_from(&s.values);
        self.phase = s.phase;
        self.dirty = true;
        self.last_step_failed = false;
        self.terminate_requested = false;
        Ok(())
    }
}

/// Turn a resource location (FMI 2.0 URI `file:///...` or FMI 3.0 path) into a path.
pub fn resource_dir(location: &str) -> Option<std::path::PathBuf> {
    let rest = if let Some(r) = location.strip_prefix("file://") {
        r.strip_prefix("localhost").unwrap_or(r)
    } else if let Some(r) = location.strip_prefix("file:") {
        r
    } else {
        location
    };
    if rest.is_empty() {
        return None;
    }
    // percent-decoding (%20 etc.)
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(std::path::PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}
