//! modelDescription.xml for FMI 2.0 and FMI 3.0, generated from the same variable table
//! ([`crate::model::Variable`]) the binary uses, so the two cannot disagree.

use crate::model::{Causality, ModelInfo, Role, Type, Variable, UNITS};
use std::fmt::Write;

/// FMI version of an exported FMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmiVersion {
    V2,
    V3,
}

/// Which interfaces a description declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interfaces {
    pub model_exchange: bool,
    pub co_simulation: bool,
}

/// Escape text for an XML attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A number as XML text that parses back to the same f64.
pub fn number(x: f64) -> String {
    format!("{x:?}")
}

fn start_text(v: &Variable, start: f64) -> String {
    match v.ty {
        Type::Real => number(start),
        Type::Integer => format!("{}", start as i64),
        Type::Boolean => (if start != 0.0 { "true" } else { "false" }).to_string(),
    }
}

/// The variables a description lists (Model-Exchange-only rows only when ME is declared).
pub fn listed(info: &ModelInfo, interfaces: Interfaces) -> Vec<usize> {
    (0..info.variables.len()).filter(|&i| interfaces.model_exchange || !info.variables[i].me_only()).collect()
}

fn causality(v: &Variable) -> &'static str {
    match v.causality() {
        Causality::Independent => "independent",
        Causality::Parameter => "parameter",
        Causality::Input => "input",
        Causality::Output => "output",
        Causality::Local => "local",
    }
}

fn variability(v: &Variable) -> &'static str {
    match v.role {
        Role::Parameter => "fixed",
        Role::DiscreteOutput | Role::Mode => "discrete",
        _ if v.ty != Type::Real => "discrete",
        _ => "continuous",
    }
}

fn initial(v: &Variable) -> Option<&'static str> {
    match v.role {
        Role::Time | Role::Input => None,
        Role::Parameter | Role::State { .. } => Some("exact"),
        Role::Output | Role::DiscreteOutput | Role::Derivative(_) | Role::Mode | Role::Indicator(_) => {
            Some("calculated")
        }
    }
}

/// Whether the variable is an initial unknown (outputs and derivatives computed at init).
fn initial_unknown(v: &Variable) -> bool {
    matches!(v.role, Role::Output | Role::DiscreteOutput | Role::Derivative(_))
}

fn header(out: &mut String, info: &ModelInfo, version: FmiVersion, token: &str) {
    let (ver, tok) = match version {
        FmiVersion::V2 => ("2.0", "guid"),
        FmiVersion::V3 => ("3.0", "instantiationToken"),
    };
    let _ = write!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription\n  fmiVersion=\"{ver}\"\n  modelName=\"{id}\"\n  \
         {tok}=\"{token}\"\n  description=\"{desc}\"\n  generationTool=\"stiction {pkg}\"\n  variableNamingConvention=\"structured\"",
        id = info.identifier,
        desc = escape(info.description),
        pkg = env!("CARGO_PKG_VERSION"),
    );
}

fn units_and_categories(out: &mut String, info: &ModelInfo, interfaces: Interfaces) {
    let used: Vec<&str> = listed(info, interfaces)
        .into_iter()
        .map(|i| info.variables[i].unit)
        .filter(|u| !u.is_empty())
        .fold(Vec::new(), |mut acc, u| {
            if !acc.contains(&u) {
                acc.push(u);
            }
            acc
        });
    out.push_str("  <UnitDefinitions>\n");
    for (name, exps) in UNITS.iter().filter(|(n, _)| used.contains(n)) {
        let mut base = String::new();
        for (sym, e) in ["kg", "m", "s", "rad"].iter().zip(exps) {
            if *e != 0 {
                let _ = write!(base, " {sym}=\"{e}\"");
            }
        }
        let _ = writeln!(out, "    <Unit name=\"{}\">\n      <BaseUnit{base}/>\n    </Unit>", escape(name));
    }
    out.push_str("  </UnitDefinitions>\n  <LogCategories>\n");
    for (c, d) in [
        ("logEvents", "events of the hybrid model (debug logging)"),
        ("logStatusWarning", "warnings"),
        ("logStatusDiscard", "discarded calls"),
        ("logStatusError", "errors: illegal calls, invalid arguments, failed steps"),
        ("logStatusFatal", "fatal errors"),
    ] {
        let _ = writeln!(out, "    <Category name=\"{c}\" description=\"{d}\"/>");
    }
    let _ = writeln!(
        out,
        "  </LogCategories>\n  <DefaultExperiment startTime=\"0.0\" stopTime=\"{}\" stepSize=\"{}\"/>",
        number(info.default_stop),
        number(info.default_step)
    );
}

/// modelDescription.xml of `info` with the given start values (one per value reference).
pub fn model_description(
    info: &ModelInfo,
    version: FmiVersion,
    interfaces: Interfaces,
    starts: &[f64],
    token: &str,
) -> String {
    match version {
        FmiVersion::V2 => fmi2(info, interfaces, starts, token),
        FmiVersion::V3 => fmi3(info, interfaces, starts, token),
    }
}

/// Nominal value of each state variable (by value reference), from the model at its start values.
fn nominals(info: &ModelInfo, starts: &[f64]) -> Vec<(usize, f64)> {
    let states = info.states();
    let mut n = vec![1.0; states.len()];
    if let Some(m) = crate::instance::models().into_iter().find(|m| m.info().identifier == info.identifier) {
        m.nominals(starts, &mut n);
    }
    states.into_iter().zip(n).collect()
}

fn nominal_of(nominals: &[(usize, f64)], vr: usize) -> Option<f64> {
    nominals.iter().find(|(s, _)| *s == vr).map(|(_, n)| *n).filter(|n| *n != 1.0)
}

fn fmi2(info: &ModelInfo, interfaces: Interfaces, starts: &[f64], token: &str) -> String {
    let nominals = nominals(info, starts);
    let mut out = String::new();
    header(&mut out, info, FmiVersion::V2, token);
    if interfaces.model_exchange {
        let _ = write!(out, "\n  numberOfEventIndicators=\"{}\"", info.event_indicators);
    }
    out.push_str(">\n");
    let id = info.identifier;
    if interfaces.model_exchange {
        let _ = writeln!(
            out,
            "  <ModelExchange modelIdentifier=\"{id}\" needsExecutionTool=\"false\" completedIntegratorStepNotNeeded=\"true\" \
             canBeInstantiatedOnlyOncePerProcess=\"false\" canNotUseMemoryManagementFunctions=\"true\" \
             canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"true\" providesDirectionalDerivative=\"false\"/>"
        );
    }
    if interfaces.co_simulation {
        let _ = writeln!(
            out,
            "  <CoSimulation modelIdentifier=\"{id}\" needsExecutionTool=\"false\" canHandleVariableCommunicationStepSize=\"true\" \
             canInterpolateInputs=\"false\" maxOutputDerivativeOrder=\"0\" canRunAsynchronuously=\"false\" \
             canBeInstantiatedOnlyOncePerProcess=\"false\" canNotUseMemoryManagementFunctions=\"true\" \
             canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"true\" providesDirectionalDerivative=\"false\"/>"
        );
    }
    units_and_categories(&mut out, info, interfaces);
    let rows = listed(info, interfaces);
    // FMI 2.0 refers to variables by their 1-based position in ModelVariables.
    let index = |vr: usize| rows.iter().position(|&r| r == vr).map(|p| p + 1);
    out.push_str("  <ModelVariables>\n");
    for (pos, &vr) in rows.iter().enumerate() {
        let v = &info.variables[vr];
        let _ = write!(
            out,
            "    <!-- index {} -->\n    <ScalarVariable name=\"{}\" valueReference=\"{vr}\" description=\"{}\" causality=\"{}\" variability=\"{}\"",
            pos + 1,
            escape(v.name),
            escape(v.description),
            causality(v),
            variability(v)
        );
        if let Some(i) = initial(v) {
            let _ = write!(out, " initial=\"{i}\"");
        }
        out.push_str(">\n      <");
        out.push_str(match v.ty {
            Type::Real => "Real",
            Type::Integer => "Integer",
            Type::Boolean => "Boolean",
        });
        if v.has_start() {
            let _ = write!(out, " start=\"{}\"", start_text(v, starts[vr]));
        }
        if !v.unit.is_empty() {
            let _ = write!(out, " unit=\"{}\"", escape(v.unit));
        }
        if let Some(n) = nominal_of(&nominals, vr) {
            let _ = write!(out, " nominal=\"{}\"", number(n));
        }
        if let Role::Derivative(state) = v.role {
            if let Some(i) = index(state as usize) {
                let _ = write!(out, " derivative=\"{i}\"");
            }
        }
        out.push_str("/>\n    </ScalarVariable>\n");
    }
    out.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    let section = |out: &mut String, name: &str, pick: &dyn Fn(&Variable) -> bool| {
        let idx: Vec<usize> =
            rows.iter().filter(|&&vr| pick(&info.variables[vr])).filter_map(|&vr| index(vr)).collect();
        if idx.is_empty() {
            return;
        }
        let _ = writeln!(out, "    <{name}>");
        for i in idx {
            let _ = writeln!(out, "      <Unknown index=\"{i}\"/>");
        }
        let _ = writeln!(out, "    </{name}>");
    };
    section(&mut out, "Outputs", &|v| v.causality() == Causality::Output);
    if interfaces.model_exchange {
        section(&mut out, "Derivatives", &|v| matches!(v.role, Role::Derivative(_)));
    }
    section(&mut out, "InitialUnknowns", &|v| initial_unknown(v) && (interfaces.model_exchange || !v.me_only()));
    out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    out
}

fn fmi3(info: &ModelInfo, interfaces: Interfaces, starts: &[f64], token: &str) -> String {
    let nominals = nominals(info, starts);
    let mut out = String::new();
    header(&mut out, info, FmiVersion::V3, token);
    out.push_str(">\n");
    let id = info.identifier;
    // fmi3ModelDescription.xsd: ModelExchange, then CoSimulation.
    if interfaces.model_exchange {
        let _ = writeln!(
            out,
            "  <ModelExchange modelIdentifier=\"{id}\" needsExecutionTool=\"false\" canBeInstantiatedOnlyOncePerProcess=\"false\" \
             canGetAndSetFMUState=\"true\" canSerializeFMUState=\"true\" providesDirectionalDerivatives=\"false\" \
             providesAdjointDerivatives=\"false\" needsCompletedIntegratorStep=\"false\"/>"
        );
    }
    if interfaces.co_simulation {
        let _ = writeln!(
            out,
            "  <CoSimulation modelIdentifier=\"{id}\" needsExecutionTool=\"false\" canBeInstantiatedOnlyOncePerProcess=\"false\" \
             canGetAndSetFMUState=\"true\" canSerializeFMUState=\"true\" providesDirectionalDerivatives=\"false\" \
             providesAdjointDerivatives=\"false\" canHandleVariableCommunicationStepSize=\"true\" maxOutputDerivativeOrder=\"0\" \
             hasEventMode=\"false\" providesIntermediateUpdate=\"false\" canReturnEarlyAfterIntermediateUpdate=\"false\"/>"
        );
    }
    units_and_categories(&mut out, info, interfaces);
    let rows = listed(info, interfaces);
    out.push_str("  <ModelVariables>\n");
    for &vr in &rows {
        let v = &info.variables[vr];
        let tag = match v.ty {
            Type::Real => "Float64",
            Type::Integer => "Int32",
            Type::Boolean => "Boolean",
        };
        let _ = write!(
            out,
            "    <{tag} name=\"{}\" valueReference=\"{vr}\" description=\"{}\" causality=\"{}\" variability=\"{}\"",
            escape(v.name),
            escape(v.description),
            causality(v),
            variability(v)
        );
        if let Some(i) = initial(v) {
            let _ = write!(out, " initial=\"{i}\"");
        }
        if v.has_start() {
            let _ = write!(out, " start=\"{}\"", start_text(v, starts[vr]));
        }
        if !v.unit.is_empty() {
            let _ = write!(out, " unit=\"{}\"", escape(v.unit));
        }
        if let Some(n) = nominal_of(&nominals, vr) {
            let _ = write!(out, " nominal=\"{}\"", number(n));
        }
        if let Role::Derivative(state) = v.role {
            let _ = write!(out, " derivative=\"{state}\"");
        }
        out.push_str("/>\n");
    }
    out.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    // XSD order: Output*, ContinuousStateDerivative*, InitialUnknown*, EventIndicator*.
    // Derivatives follow the state order and indicators their index in GetEventIndicators.
    let pick = |f: &dyn Fn(&Variable) -> bool| rows.iter().copied().filter(|&vr| f(&info.variables[vr])).collect();
    let (derivatives, indicators) =
        if interfaces.model_exchange { (info.derivatives(), info.indicators()) } else { (Vec::new(), Vec::new()) };
    let sections: [(&str, Vec<usize>); 4] = [
        ("Output", pick(&|v| v.causality() == Causality::Output)),
        ("ContinuousStateDerivative", derivatives),
        ("InitialUnknown", pick(&initial_unknown)),
        ("EventIndicator", indicators),
    ];
    for (tag, vrs) in sections {
        for vr in vrs {
            let _ = writeln!(out, "    <{tag} valueReference=\"{vr}\"/>");
        }
    }
    out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    out
}
