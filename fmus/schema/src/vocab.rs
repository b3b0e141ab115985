//! The FMI vocabulary both directions share: version, interface, base types, causality,
//! variability, initial, capability flags, the default experiment. The importer reads it
//! from modelDescription.xml ([`crate::description`]); the exporter writes it
//! ([`crate::write`]).

/// FMI major version of a description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmiVersion {
    V2,
    V3,
}

impl FmiVersion {
    /// "2.0" / "3.0".
    pub fn label(self) -> &'static str {
        match self {
            FmiVersion::V2 => "2.0",
            FmiVersion::V3 => "3.0",
        }
    }

    /// Directory of the Linux x86-64 binary inside the archive (`binaries/<platform>/`).
    pub fn platform(self) -> &'static str {
        match self {
            FmiVersion::V2 => "linux64",
            FmiVersion::V3 => "x86_64-linux",
        }
    }
}

/// The FMI interface an instance runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interface {
    /// Model Exchange: the importer integrates the FMU's continuous states.
    ModelExchange,
    /// Co-Simulation: the FMU integrates itself between communication points (doStep).
    CoSimulation,
}

impl Interface {
    /// "Model Exchange" / "Co-Simulation".
    pub fn label(self) -> &'static str {
        match self {
            Interface::ModelExchange => "Model Exchange",
            Interface::CoSimulation => "Co-Simulation",
        }
    }
}

/// The base types an importer can get and set. FMI 2.0 Real/Integer/Boolean/Enumeration map
/// to Float64/Int32/Boolean/Int32 here (the FMI 2.0 API has one getter per type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    /// fmi2Real / fmi3Float64.
    Float64,
    /// fmi2Integer, fmi2 Enumeration / fmi3Int32.
    Int32,
    /// fmi2Boolean / fmi3Boolean.
    Boolean,
    /// Any other type (String, Binary, Float32, Int64, Clock, ...): listed, never get or set.
    Other,
}

/// The `<DefaultExperiment>` element.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DefaultExperiment {
    pub start_time: Option<f64>,
    pub stop_time: Option<f64>,
    pub tolerance: Option<f64>,
    pub step_size: Option<f64>,
}

/// The capability flags of one interface (`<CoSimulation ...>` / `<ModelExchange ...>`); an
/// absent attribute is false, as the standard says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// needsExecutionTool: the FMU needs a tool outside it (a runtime, a licence, a server).
    pub needs_execution_tool: bool,
    /// canBeInstantiatedOnlyOncePerProcess.
    pub once_per_process: bool,
    /// canGetAndSetFMUstate (FMI 2.0) / canGetAndSetFMUState (FMI 3.0).
    pub can_get_and_set_state: bool,
    /// providesDirectionalDerivative (FMI 2.0) / providesDirectionalDerivatives (FMI 3.0).
    pub directional_derivatives: bool,
    /// Co-Simulation: canHandleVariableCommunicationStepSize.
    pub variable_step: bool,
    /// Model Exchange: fmi2CompletedIntegratorStep must be called after every integrator step
    /// (FMI 2.0: completedIntegratorStepNotNeeded is not "true"; FMI 3.0:
    /// needsCompletedIntegratorStep="true").
    pub needs_completed_integrator_step: bool,
}

impl Capabilities {
    /// The flags that are set, by their FMI 2.0 attribute names, for messages.
    pub fn declared(&self, interface: Interface) -> Vec<&'static str> {
        let mut v = Vec::new();
        let flags = [
            (self.needs_execution_tool, "needsExecutionTool"),
            (self.once_per_process, "canBeInstantiatedOnlyOncePerProcess"),
            (self.can_get_and_set_state, "canGetAndSetFMUstate"),
            (self.directional_derivatives, "providesDirectionalDerivative"),
        ];
        for (on, name) in flags {
            if on {
                v.push(name);
            }
        }
        match interface {
            Interface::CoSimulation if self.variable_step => v.push("canHandleVariableCommunicationStepSize"),
            Interface::ModelExchange if !self.needs_completed_integrator_step => {
                v.push("completedIntegratorStepNotNeeded")
            }
            _ => {}
        }
        v
    }
}
