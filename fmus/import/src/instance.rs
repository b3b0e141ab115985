//! [`Instance`]: one FMU instance, in this process ([`Local`], binary.rs) or isolated in a
//! child process (isolate.rs), behind one set of methods. Network components (cs.rs, me.rs),
//! FMU-only systems and signal blocks call these and need not know where the FMU runs.

use crate::binary::{EventInfo, Local, VarKind};
use crate::isolate::{Child, Isolation, Op};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use stiction_fmi_schema::{Archive, FmiError, FmiVersion, Interface, VarType};

enum Inner {
    Local(Box<Local>),
    /// The child process, behind a lock so that [`Instance::error`] (`&self`) can fetch the
    /// FMU's log; uncontended (every call has `&mut self`).
    Child(Mutex<Child>, bool),
}

/// One instance of an FMU. Dropping it terminates and frees the instance (in the child: then
/// the child exits), then the unpacked archive is removed when its last user goes.
pub struct Instance {
    inner: Inner,
    /// "FMU 'StictionGear' (path.fmu)", for messages.
    pub label: String,
    pub version: FmiVersion,
    pub interface: Interface,
    /// Shared by every instance of the same .fmu file ([`Archive::shared`]).
    pub archive: Arc<Archive>,
}

/// Dispatch a call: in-process, the `Local` method; isolated, the child's.
macro_rules! call {
    ($self:ident, $local:ident => $l:expr, $child:ident => $c:expr) => {
        match &mut $self.inner {
            Inner::Local($local) => $l,
            Inner::Child(m, _) => {
                let $child = m.get_mut().unwrap_or_else(|e| e.into_inner());
                $c
            }
        }
    };
}

impl Instance {
    /// Load the binary of `interface` from `archive` into this process and instantiate it as
    /// `name` (see `Local::new`).
    pub fn new(archive: Arc<Archive>, interface: Interface, name: &str) -> Result<Instance, FmiError> {
        Instance::with_isolation(archive, interface, name, &Isolation::None, &[])
    }

    /// [`Instance::new`] as `isolation` says: in this process (after opening the `preload`
    /// libraries here) or in a child process of its own (which opens them there).
    pub fn with_isolation(
        archive: Arc<Archive>,
        interface: Interface,
        name: &str,
        isolation: &Isolation,
        preload: &[PathBuf],
    ) -> Result<Instance, FmiError> {
        let md = &archive.description;
        let id = md.identifier(interface).unwrap_or(&md.model_name).to_string();
        let label = format!("FMU '{id}' ({})", archive.file);
        let version = md.version;
        let inner = match isolation {
            Isolation::None => {
                crate::binary::preload(preload).map_err(|e| FmiError::new(&label, None, e))?;
                Inner::Local(Box::new(Local::new(archive.clone(), interface, name)?))
            }
            Isolation::Process { timeout } => {
                let (child, state_fns) = Child::spawn(&archive, interface, name, &label, *timeout, preload)?;
                Inner::Child(Mutex::new(child), state_fns)
            }
        };
        Ok(Instance { inner, label, version, interface, archive })
    }

    /// Whether the FMU runs in a child process.
    pub fn is_isolated(&self) -> bool {
        matches!(self.inner, Inner::Child(..))
    }

    /// The names of the variables with value references `vrs` (for messages).
    pub fn names_of(&self, vrs: &[u32]) -> String {
        crate::binary::names_of(&self.archive.description, vrs)
    }

    /// An error of `function` with the FMU's log so far.
    pub fn error(&self, function: &str, message: impl Into<String>) -> FmiError {
        match &self.inner {
            Inner::Local(l) => l.error(function, message),
            Inner::Child(m, _) => {
                let log = m.lock().map(|mut c| c.take_log()).unwrap_or_default();
                FmiError::new(&self.label, Some(function), message).with_log(log)
            }
        }
    }

    /// The name of an ME function in this instance's FMI version.
    pub fn me_name(&self, fmi2: &'static str, fmi3: &'static str) -> &'static str {
        match self.version {
            FmiVersion::V2 => fmi2,
            FmiVersion::V3 => fmi3,
        }
    }

    /// SetupExperiment (FMI 2.0) and EnterInitializationMode at `start`.
    pub fn enter_initialization(&mut self, start: f64) -> Result<(), FmiError> {
        let f = self.me_name("fmi2EnterInitializationMode", "fmi3EnterInitializationMode");
        call!(self, l => l.enter_initialization(start), c => c.enter_initialization(f, start))
    }

    /// ExitInitializationMode.
    pub fn exit_initialization(&mut self) -> Result<(), FmiError> {
        let f = self.me_name("fmi2ExitInitializationMode", "fmi3ExitInitializationMode");
        call!(self, l => l.exit_initialization(), c => c.simple(f, Op::ExitInit))
    }

    /// Get Float64 values (fmi2GetReal / fmi3GetFloat64).
    pub fn get_f64(&mut self, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2GetReal", "fmi3GetFloat64");
        call!(self, l => l.get_f64(vrs, out), c => c.get_values(f, VarType::Float64, vrs, out))
    }

    /// Set Float64 values (fmi2SetReal / fmi3SetFloat64).
    pub fn set_f64(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2SetReal", "fmi3SetFloat64");
        call!(self, l => l.set_f64(vrs, values), c => c.set_values(f, VarType::Float64, vrs, values))
    }

    /// Get variables of mixed types, one call per type (`Local::get_mixed`).
    pub fn get_mixed(&mut self, vrs: &[u32], kinds: &[VarKind], out: &mut [f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2Get*", "fmi3Get*");
        call!(self, l => l.get_mixed(vrs, kinds, out), c => c.get_mixed(f, vrs, kinds, out))?;
        self.finite(f, vrs, out)
    }

    /// A value read from the FMU that is not finite (NaN, ±inf) is its failure, at the call
    /// that read it: it never reaches a port, a signal or a results row.
    fn finite(&self, function: &str, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        match values.iter().position(|x| !x.is_finite()) {
            None => Ok(()),
            Some(k) => {
                let name = vrs.get(k).map(|vr| self.names_of(&[*vr])).unwrap_or_default();
                Err(self.error(function, format!("returned {name} = {}, which is not finite", values[k])))
            }
        }
    }

    /// Get variables of mixed types by a plan made once (`Local::get_planned`; in a child
    /// process, as [`get_mixed`](Self::get_mixed)).
    pub fn get_planned(&mut self, plan: &mut crate::binary::MixedPlan, out: &mut [f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2Get*", "fmi3Get*");
        call!(self, l => l.get_planned(plan, out), c => c.get_mixed(f, plan.vrs(), plan.kinds(), out))?;
        self.finite(f, plan.vrs(), out)
    }

    /// Set variables of mixed types, each value checked against its type first
    /// (`Local::set_mixed`).
    pub fn set_mixed(&mut self, vrs: &[u32], kinds: &[VarKind], values: &[f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2Set*", "fmi3Set*");
        call!(self, l => l.set_mixed(vrs, kinds, values), c => c.set_mixed(f, vrs, kinds, values))
    }

    /// Read one variable of type `ty` as f64.
    pub fn get_value(&mut self, ty: VarType, vr: u32) -> Result<f64, FmiError> {
        let mut out = [0.0];
        self.get_values(ty, &[vr], &mut out)?;
        Ok(out[0])
    }

    /// Read variables of one type in one call (`Local::get_values`).
    pub fn get_values(&mut self, ty: VarType, vrs: &[u32], out: &mut [f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2Get*", "fmi3Get*");
        call!(self, l => l.get_values(ty, vrs, out), c => c.get_values(f, ty, vrs, out))
    }

    /// Set one variable of type `ty` from an f64.
    pub fn set_value(&mut self, ty: VarType, vr: u32, x: f64) -> Result<(), FmiError> {
        self.set_values(ty, &[vr], &[x])
    }

    /// Set variables of one type in one call (`Local::set_values`).
    pub fn set_values(&mut self, ty: VarType, vrs: &[u32], values: &[f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2Set*", "fmi3Set*");
        call!(self, l => l.set_values(ty, vrs, values), c => c.set_values(f, ty, vrs, values))
    }

    /// Co-Simulation: DoStep from `t` over `h` (`Local::do_step`).
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<Option<f64>, FmiError> {
        let f = self.me_name("fmi2DoStep", "fmi3DoStep");
        call!(self, l => l.do_step(t, h), c => c.do_step(f, t, h))
    }

    /// Model Exchange: SetTime.
    pub fn set_time(&mut self, t: f64) -> Result<(), FmiError> {
        let f = self.me_name("fmi2SetTime", "fmi3SetTime");
        call!(self, l => l.set_time(t), c => c.set_time(f, t))
    }

    /// Model Exchange: SetContinuousStates.
    pub fn set_states(&mut self, x: &[f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2SetContinuousStates", "fmi3SetContinuousStates");
        call!(self, l => l.set_states(x), c => c.set_states(f, x))
    }

    /// Model Exchange: GetContinuousStates.
    pub fn get_states(&mut self, x: &mut [f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2GetContinuousStates", "fmi3GetContinuousStates");
        call!(self, l => l.get_states(x), c => c.get_array(f, Op::GetStates, x))
    }

    /// Model Exchange: GetDerivatives / GetContinuousStateDerivatives.
    pub fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives");
        call!(self, l => l.get_derivatives(dx), c => c.get_array(f, Op::GetDerivatives, dx))
    }

    /// Model Exchange: GetEventIndicators.
    pub fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmiError> {
        if z.is_empty() {
            return Ok(());
        }
        let f = self.me_name("fmi2GetEventIndicators", "fmi3GetEventIndicators");
        call!(self, l => l.get_event_indicators(z), c => c.get_array(f, Op::GetEventIndicators, z))
    }

    /// Model Exchange: EnterEventMode.
    pub fn enter_event_mode(&mut self) -> Result<(), FmiError> {
        let f = self.me_name("fmi2EnterEventMode", "fmi3EnterEventMode");
        call!(self, l => l.enter_event_mode(), c => c.simple(f, Op::EnterEventMode))
    }

    /// Model Exchange: EnterContinuousTimeMode.
    pub fn enter_continuous_time_mode(&mut self) -> Result<(), FmiError> {
        let f = self.me_name("fmi2EnterContinuousTimeMode", "fmi3EnterContinuousTimeMode");
        call!(self, l => l.enter_continuous_time_mode(), c => c.simple(f, Op::EnterContinuousTimeMode))
    }

    /// The name of one event-iteration call: fmi2NewDiscreteStates / fmi3UpdateDiscreteStates.
    pub fn new_discrete_states_name(&self) -> &'static str {
        self.me_name("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates")
    }

    /// Model Exchange: one fmi2NewDiscreteStates / fmi3UpdateDiscreteStates call.
    pub fn new_discrete_states(&mut self) -> Result<EventInfo, FmiError> {
        let f = self.new_discrete_states_name();
        call!(self, l => l.new_discrete_states(), c => c.new_discrete_states(f))
    }

    /// fmi2CompletedIntegratorStep / fmi3CompletedIntegratorStep.
    pub fn completed_integrator_step_name(&self) -> &'static str {
        self.me_name("fmi2CompletedIntegratorStep", "fmi3CompletedIntegratorStep")
    }

    /// Model Exchange: CompletedIntegratorStep → (enterEventMode, terminateSimulation).
    pub fn completed_integrator_step(&mut self) -> Result<(bool, bool), FmiError> {
        let f = self.completed_integrator_step_name();
        call!(self, l => l.completed_integrator_step(), c => c.completed_integrator_step(f))
    }

    /// True if the binary exports GetFMUstate, SetFMUstate and FreeFMUstate.
    pub fn can_save_state(&self) -> bool {
        match &self.inner {
            Inner::Local(l) => l.can_save_state(),
            Inner::Child(_, state_fns) => *state_fns,
        }
    }

    /// GetFMUstate into the instance's one saved-state slot (`Local::save_state`).
    pub fn save_state(&mut self) -> Result<(), FmiError> {
        let f = self.me_name("fmi2GetFMUstate", "fmi3GetFMUState");
        call!(self, l => l.save_state(), c => c.simple(f, Op::SaveState))
    }

    /// SetFMUstate from the saved-state slot (`Local::restore_state`).
    pub fn restore_state(&mut self) -> Result<(), FmiError> {
        let f = self.me_name("fmi2SetFMUstate", "fmi3SetFMUState");
        call!(self, l => l.restore_state(), c => c.simple(f, Op::RestoreState))
    }

    /// Whether the FMU's state can be saved as bytes (`Local::serializable`); in a child
    /// process the binary's functions are checked when called.
    pub fn serializable(&self) -> Result<(), String> {
        match &self.inner {
            Inner::Local(l) => l.serializable(),
            Inner::Child(..) => {
                let caps = self.archive.description.capabilities(self.interface);
                if caps.can_serialize_state {
                    Ok(())
                } else {
                    let flag = self.me_name("canSerializeFMUstate", "canSerializeFMUState");
                    Err(format!("{} does not declare {flag}=\"true\", so its state cannot be saved", self.label))
                }
            }
        }
    }

    /// The instance's state as bytes (`Local::serialize_state`).
    pub fn serialize_state(&mut self) -> Result<Vec<u8>, FmiError> {
        let f = self.me_name("fmi2SerializeFMUstate", "fmi3SerializeFMUState");
        call!(self, l => l.serialize_state(), c => c.serialize_state(f))
    }

    /// Return to the state `bytes` hold (`Local::deserialize_state`).
    pub fn deserialize_state(&mut self, bytes: &[u8]) -> Result<(), FmiError> {
        let f = self.me_name("fmi2DeSerializeFMUstate", "fmi3DeserializeFMUState");
        call!(self, l => l.deserialize_state(bytes), c => c.deserialize_state(f, bytes))
    }
}
