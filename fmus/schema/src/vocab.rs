//! The FMI vocabulary both directions share: version, interface, base types, causality,
//! variability, initial, capability flags, the default experiment. The importer reads it
//! from modelDescription.xml (`description`, feature `read`); the exporter writes it
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

    /// The attribute of `<fmiModelDescription>` holding the token: `guid` / `instantiationToken`.
    pub fn token_attribute(self) -> &'static str {
        match self {
            FmiVersion::V2 => "guid",
            FmiVersion::V3 => "instantiationToken",
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

/// Which interfaces a description declares (an exported FMU may declare both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interfaces {
    pub model_exchange: bool,
    pub co_simulation: bool,
}

/// The base types stiction gets and sets: every numeric type of FMI 3.0 and Boolean (the
/// exporter uses Float64, Int32 and Boolean). FMI 2.0 Real/Integer/Boolean/Enumeration map to
/// Float64/Int32/Boolean/Int32 (the FMI 2.0 API has one getter per type); an FMI 3.0
/// Enumeration is an Int64 (fmi3GetInt64/fmi3SetInt64, FMI 3.0 section 2.4.7.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarType {
    /// fmi2Real / fmi3Float64.
    Float64,
    /// fmi3Float32.
    Float32,
    /// fmi3Int8.
    Int8,
    /// fmi3UInt8.
    UInt8,
    /// fmi3Int16.
    Int16,
    /// fmi3UInt16.
    UInt16,
    /// fmi2Integer, fmi2 Enumeration / fmi3Int32.
    Int32,
    /// fmi3UInt32.
    UInt32,
    /// fmi3Int64, fmi3 Enumeration.
    Int64,
    /// fmi3UInt64.
    UInt64,
    /// fmi2Boolean / fmi3Boolean.
    Boolean,
    /// Any other type (String, Binary, Clock, ...): listed, never get or set.
    Other,
}

impl VarType {
    /// Every type stiction reads, in the order of one get call per type.
    pub const NUMERIC: [VarType; 11] = [
        VarType::Float64,
        VarType::Float32,
        VarType::Int8,
        VarType::UInt8,
        VarType::Int16,
        VarType::UInt16,
        VarType::Int32,
        VarType::UInt32,
        VarType::Int64,
        VarType::UInt64,
        VarType::Boolean,
    ];

    /// The type of a variable element (FMI 3.0) or type element (FMI 2.0) called `name`.
    pub fn from_element(version: FmiVersion, name: &str) -> VarType {
        match (version, name) {
            (FmiVersion::V2, "Real") | (FmiVersion::V3, "Float64") => VarType::Float64,
            (FmiVersion::V2, "Integer" | "Enumeration") | (FmiVersion::V3, "Int32") => VarType::Int32,
            (_, "Boolean") => VarType::Boolean,
            (FmiVersion::V3, "Float32") => VarType::Float32,
            (FmiVersion::V3, "Int8") => VarType::Int8,
            (FmiVersion::V3, "UInt8") => VarType::UInt8,
            (FmiVersion::V3, "Int16") => VarType::Int16,
            (FmiVersion::V3, "UInt16") => VarType::UInt16,
            (FmiVersion::V3, "UInt32") => VarType::UInt32,
            (FmiVersion::V3, "Int64" | "Enumeration") => VarType::Int64,
            (FmiVersion::V3, "UInt64") => VarType::UInt64,
            _ => VarType::Other,
        }
    }

    /// The range of an integer type as f64 (`None` for floating point, Boolean and Other).
    /// Int64/UInt64 values beyond ±2^53 are not all representable as f64.
    pub fn integer_range(self) -> Option<(f64, f64)> {
        Some(match self {
            VarType::Int8 => (i8::MIN.into(), i8::MAX.into()),
            VarType::UInt8 => (0.0, u8::MAX.into()),
            VarType::Int16 => (i16::MIN.into(), i16::MAX.into()),
            VarType::UInt16 => (0.0, u16::MAX.into()),
            VarType::Int32 => (i32::MIN.into(), i32::MAX.into()),
            VarType::UInt32 => (0.0, u32::MAX.into()),
            VarType::Int64 => (i64::MIN as f64, i64::MAX as f64),
            VarType::UInt64 => (0.0, u64::MAX as f64),
            _ => return None,
        })
    }

    /// Whether values of this type are real numbers (Float64, Float32): what a port carries.
    pub fn is_real(self) -> bool {
        matches!(self, VarType::Float64 | VarType::Float32)
    }

    /// The element name of the type in `version`'s modelDescription.xml (FMI 2.0: the child
    /// of `<ScalarVariable>`; FMI 3.0: the variable element); `None` for [`VarType::Other`]
    /// and the FMI 3.0-only types in FMI 2.0.
    pub fn element(self, version: FmiVersion) -> Option<&'static str> {
        match (self, version) {
            (VarType::Float64, FmiVersion::V2) => Some("Real"),
            (VarType::Float64, FmiVersion::V3) => Some("Float64"),
            (VarType::Int32, FmiVersion::V2) => Some("Integer"),
            (VarType::Int32, FmiVersion::V3) => Some("Int32"),
            (VarType::Boolean, _) => Some("Boolean"),
            (VarType::Float32, FmiVersion::V3) => Some("Float32"),
            (VarType::Int8, FmiVersion::V3) => Some("Int8"),
            (VarType::UInt8, FmiVersion::V3) => Some("UInt8"),
            (VarType::Int16, FmiVersion::V3) => Some("Int16"),
            (VarType::UInt16, FmiVersion::V3) => Some("UInt16"),
            (VarType::UInt32, FmiVersion::V3) => Some("UInt32"),
            (VarType::Int64, FmiVersion::V3) => Some("Int64"),
            (VarType::UInt64, FmiVersion::V3) => Some("UInt64"),
            _ => None,
        }
    }
}

/// Declares the three attribute enumerations: variants, their XML spelling, parsing and
/// `Display` (the XML spelling).
macro_rules! attribute_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// The attribute value as modelDescription.xml writes it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The variant an attribute value names, if any.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

attribute_enum! {
    /// The `causality` attribute (absent: `local`).
    Causality {
        Parameter = "parameter",
        CalculatedParameter = "calculatedParameter",
        /// FMI 3.0 only.
        StructuralParameter = "structuralParameter",
        Input = "input",
        Output = "output",
        Local = "local",
        /// The independent variable (time).
        Independent = "independent",
    }
}

attribute_enum! {
    /// The `variability` attribute (absent: `continuous`).
    Variability {
        Constant = "constant",
        Fixed = "fixed",
        Tunable = "tunable",
        Discrete = "discrete",
        Continuous = "continuous",
    }
}

attribute_enum! {
    /// The `initial` attribute: how a variable gets its value at initialization.
    Initial {
        /// From its start value.
        Exact = "exact",
        /// From its start value as a guess for an iteration.
        Approx = "approx",
        /// Computed from other variables.
        Calculated = "calculated",
    }
}

impl Initial {
    /// The FMI 2.0 default when the attribute is absent: a constant, a parameter, an input
    /// and the independent variable have an exact value (or none), everything else is
    /// calculated. Only to decide whether a variable is an initial unknown.
    pub fn fmi2_default(causality: Causality, variability: Variability) -> Initial {
        match (causality, variability) {
            (_, Variability::Constant) | (Causality::Parameter | Causality::Input | Causality::Independent, _) => {
                Initial::Exact
            }
            _ => Initial::Calculated,
        }
    }
}

/// Whether FMI 2.0's ModelStructure must list a variable among its `<InitialUnknowns>`
/// (FMI 2.0, 2.2.8): outputs, calculated parameters, continuous states and their derivatives
/// whose `initial` (given or by default) is approx or calculated.
pub fn is_initial_unknown(causality: Causality, initial: Initial, state_or_derivative: bool) -> bool {
    let listed_kind = matches!(causality, Causality::Output | Causality::CalculatedParameter) || state_or_derivative;
    listed_kind && matches!(initial, Initial::Approx | Initial::Calculated)
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
    /// canSerializeFMUstate (FMI 2.0) / canSerializeFMUState (FMI 3.0).
    pub can_serialize_state: bool,
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
