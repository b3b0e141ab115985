//! modelDescription.xml for FMI 2.0 and FMI 3.0 written from a [`Description`], and the .fmu
//! zip ([`write_fmu`]). The exporter (`stiction-fmus`) fills the description from the same
//! variable table its binary uses, so the two cannot disagree.

use crate::vocab::{
    is_initial_unknown, Capabilities, Causality, DefaultExperiment, FmiVersion, Initial, Interface, Interfaces,
    VarType, Variability,
};
use std::fmt::Write;
use std::path::Path;

/// One variable of a [`Description`].
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarVariable<'a> {
    pub name: &'a str,
    pub vr: u32,
    /// Never [`VarType::Other`] (written as Real / Float64 if it is).
    pub ty: VarType,
    pub causality: Causality,
    pub variability: Variability,
    pub initial: Option<Initial>,
    /// The `start` attribute, if any: an Int32 is written as a whole number, a Boolean as
    /// `true`/`false`.
    pub start: Option<f64>,
    /// "" for none.
    pub unit: &'a str,
    pub description: &'a str,
    /// The `nominal` attribute, if any.
    pub nominal: Option<f64>,
    /// For a state derivative: the value reference of its state.
    pub derivative_of: Option<u32>,
}

/// What a modelDescription.xml declares.
#[derive(Clone, Debug, PartialEq)]
pub struct Description<'a> {
    pub version: FmiVersion,
    pub interfaces: Interfaces,
    /// modelName, and the modelIdentifier of every interface.
    pub model_name: &'a str,
    /// FMI 2.0 `guid` / FMI 3.0 `instantiationToken`.
    pub token: &'a str,
    pub description: &'a str,
    pub generation_tool: &'a str,
    /// Capability flags of the Model Exchange interface (written if declared).
    pub model_exchange: Capabilities,
    /// Capability flags of the Co-Simulation interface (written if declared).
    pub co_simulation: Capabilities,
    /// FMI 2.0 `numberOfEventIndicators` (written when Model Exchange is declared).
    pub event_indicators: usize,
    /// Unit definitions: name and exponents of kg, m, s, rad. The units the variables use
    /// are written, in this order.
    pub units: &'a [(&'a str, [i32; 4])],
    /// `<LogCategories>`: name and description.
    pub log_categories: &'a [(&'a str, &'a str)],
    pub default_experiment: DefaultExperiment,
    /// The variables, in `<ModelVariables>` order.
    pub variables: Vec<ScalarVariable<'a>>,
    /// Value references of the state derivatives, in state-vector order (ModelStructure).
    pub derivatives: Vec<u32>,
    /// Value references of the event indicators, in indicator order (FMI 3.0 ModelStructure).
    pub indicators: Vec<u32>,
    /// The outputs whose dependencies on the inputs at the same instant are known: output
    /// value reference → the value references of the inputs it depends on (empty: none),
    /// written as the `dependencies` of `<Outputs>` (FMI 2.0) / `<Output>` (FMI 3.0). An
    /// output not listed has no attribute, which FMI reads as "depends on every input".
    pub dependencies: Vec<(u32, Vec<u32>)>,
    /// The initial unknowns whose dependencies at initialization are known: value reference
    /// → the inputs and exact-start variables (parameters) it depends on, written as the
    /// `dependencies` of `<InitialUnknowns>` (FMI 2.0) / `<InitialUnknown>` (FMI 3.0); one not
    /// listed has no attribute (it depends on all of them).
    pub initial_dependencies: Vec<(u32, Vec<u32>)>,
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

fn start_text(ty: VarType, start: f64) -> String {
    match ty {
        VarType::Boolean => (if start != 0.0 { "true" } else { "false" }).to_string(),
        t if t.integer_range().is_some() => format!("{}", start as i64),
        _ => number(start),
    }
}

fn flag(on: bool) -> &'static str {
    if on {
        "true"
    } else {
        "false"
    }
}

/// The attributes of `<ModelExchange>` / `<CoSimulation>`, in the order of the FMI schemas.
/// What [`Capabilities`] does not describe is declared absent: no memory management callbacks
/// used (FMI 2.0), no input interpolation, no output derivatives, no asynchronous steps, no
/// adjoint derivatives, no event mode or intermediate update in Co-Simulation (FMI 3.0).
fn interface_element(out: &mut String, d: &Description, interface: Interface) {
    let (tag, caps) = match interface {
        Interface::ModelExchange => ("ModelExchange", d.model_exchange),
        Interface::CoSimulation => ("CoSimulation", d.co_simulation),
    };
    let mut attrs: Vec<(&str, &str)> = vec![("needsExecutionTool", flag(caps.needs_execution_tool))];
    let once = ("canBeInstantiatedOnlyOncePerProcess", flag(caps.once_per_process));
    match d.version {
        FmiVersion::V2 => {
            match interface {
                Interface::ModelExchange => {
                    attrs.push(("completedIntegratorStepNotNeeded", flag(!caps.needs_completed_integrator_step)))
                }
                Interface::CoSimulation => attrs.extend([
                    ("canHandleVariableCommunicationStepSize", flag(caps.variable_step)),
                    ("canInterpolateInputs", "false"),
                    ("maxOutputDerivativeOrder", "0"),
                    ("canRunAsynchronuously", "false"),
                ]),
            }
            attrs.extend([
                once,
                ("canNotUseMemoryManagementFunctions", "true"),
                ("canGetAndSetFMUstate", flag(caps.can_get_and_set_state)),
                ("canSerializeFMUstate", flag(caps.can_serialize_state)),
                ("providesDirectionalDerivative", flag(caps.directional_derivatives)),
            ]);
        }
        FmiVersion::V3 => {
            attrs.extend([
                once,
                ("canGetAndSetFMUState", flag(caps.can_get_and_set_state)),
                ("canSerializeFMUState", flag(caps.can_serialize_state)),
                ("providesDirectionalDerivatives", flag(caps.directional_derivatives)),
                ("providesAdjointDerivatives", "false"),
            ]);
            match interface {
                Interface::ModelExchange => {
                    attrs.push(("needsCompletedIntegratorStep", flag(caps.needs_completed_integrator_step)))
                }
                Interface::CoSimulation => attrs.extend([
                    ("canHandleVariableCommunicationStepSize", flag(caps.variable_step)),
                    ("maxOutputDerivativeOrder", "0"),
                    ("hasEventMode", "false"),
                    ("providesIntermediateUpdate", "false"),
                    ("canReturnEarlyAfterIntermediateUpdate", "false"),
                ]),
            }
        }
    }
    let _ = write!(out, "  <{tag} modelIdentifier=\"{}\"", escape(d.model_name));
    for (k, v) in attrs {
        let _ = write!(out, " {k}=\"{v}\"");
    }
    out.push_str("/>\n");
}

fn header(out: &mut String, d: &Description) {
    let _ = write!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription\n  fmiVersion=\"{ver}\"\n  modelName=\"{name}\"\n  \
         {tok}=\"{token}\"\n  description=\"{desc}\"\n  generationTool=\"{tool}\"\n  variableNamingConvention=\"structured\"",
        ver = d.version.label(),
        name = escape(d.model_name),
        tok = d.version.token_attribute(),
        token = escape(d.token),
        desc = escape(d.description),
        tool = escape(d.generation_tool),
    );
    if d.version == FmiVersion::V2 && d.interfaces.model_exchange {
        let _ = write!(out, "\n  numberOfEventIndicators=\"{}\"", d.event_indicators);
    }
    out.push_str(">\n");
    // fmi3ModelDescription.xsd: ModelExchange, then CoSimulation.
    if d.interfaces.model_exchange {
        interface_element(out, d, Interface::ModelExchange);
    }
    if d.interfaces.co_simulation {
        interface_element(out, d, Interface::CoSimulation);
    }
}

fn units_and_categories(out: &mut String, d: &Description) {
    let used: Vec<&str> =
        d.variables.iter().map(|v| v.unit).filter(|u| !u.is_empty()).fold(Vec::new(), |mut acc, u| {
            if !acc.contains(&u) {
                acc.push(u);
            }
            acc
        });
    out.push_str("  <UnitDefinitions>\n");
    for (name, exps) in d.units.iter().filter(|(n, _)| used.contains(n)) {
        let mut base = String::new();
        for (sym, e) in ["kg", "m", "s", "rad"].iter().zip(exps) {
            if *e != 0 {
                let _ = write!(base, " {sym}=\"{e}\"");
            }
        }
        let _ = writeln!(out, "    <Unit name=\"{}\">\n      <BaseUnit{base}/>\n    </Unit>", escape(name));
    }
    out.push_str("  </UnitDefinitions>\n  <LogCategories>\n");
    for (c, desc) in d.log_categories {
        let _ = writeln!(out, "    <Category name=\"{}\" description=\"{}\"/>", escape(c), escape(desc));
    }
    out.push_str("  </LogCategories>\n  <DefaultExperiment");
    let e = &d.default_experiment;
    for (k, x) in
        [("startTime", e.start_time), ("stopTime", e.stop_time), ("tolerance", e.tolerance), ("stepSize", e.step_size)]
    {
        if let Some(x) = x {
            let _ = write!(out, " {k}=\"{}\"", number(x));
        }
    }
    out.push_str("/>\n");
}

/// The attributes every variable element carries, from `name` to `initial`.
fn variable_attributes(out: &mut String, v: &ScalarVariable) {
    let _ = write!(
        out,
        "name=\"{}\" valueReference=\"{}\" description=\"{}\" causality=\"{}\" variability=\"{}\"",
        escape(v.name),
        v.vr,
        escape(v.description),
        v.causality,
        v.variability
    );
    if let Some(i) = v.initial {
        let _ = write!(out, " initial=\"{i}\"");
    }
}

/// The attributes of the type, from `start` to `nominal`.
fn type_attributes(out: &mut String, v: &ScalarVariable) {
    if let Some(s) = v.start {
        let _ = write!(out, " start=\"{}\"", start_text(v.ty, s));
    }
    if !v.unit.is_empty() {
        let _ = write!(out, " unit=\"{}\"", escape(v.unit));
    }
    if let Some(n) = v.nominal {
        let _ = write!(out, " nominal=\"{}\"", number(n));
    }
}

impl Description<'_> {
    /// The modelDescription.xml text.
    pub fn to_xml(&self) -> String {
        let mut out = String::new();
        header(&mut out, self);
        units_and_categories(&mut out, self);
        match self.version {
            FmiVersion::V2 => self.fmi2_body(&mut out),
            FmiVersion::V3 => self.fmi3_body(&mut out),
        }
        out
    }

    /// Whether ModelStructure lists variable `k` as an initial unknown.
    fn initial_unknown(&self, k: usize) -> bool {
        let v = &self.variables[k];
        let state = self.variables.iter().any(|d| d.derivative_of == Some(v.vr));
        let initial = v.initial.unwrap_or_else(|| Initial::fmi2_default(v.causality, v.variability));
        is_initial_unknown(v.causality, initial, state || v.derivative_of.is_some())
    }

    fn fmi2_body(&self, out: &mut String) {
        // FMI 2.0 refers to variables by their 1-based position in ModelVariables.
        let index = |vr: u32| self.variables.iter().position(|v| v.vr == vr).map(|p| p + 1);
        out.push_str("  <ModelVariables>\n");
        for (pos, v) in self.variables.iter().enumerate() {
            let _ = write!(out, "    <!-- index {} -->\n    <ScalarVariable ", pos + 1);
            variable_attributes(out, v);
            out.push_str(">\n      <");
            out.push_str(v.ty.element(FmiVersion::V2).unwrap_or("Real"));
            type_attributes(out, v);
            if let Some(i) = v.derivative_of.and_then(index) {
                let _ = write!(out, " derivative=\"{i}\"");
            }
            out.push_str("/>\n    </ScalarVariable>\n");
        }
        out.push_str("  </ModelVariables>\n  <ModelStructure>\n");
        let section = |out: &mut String, name: &str, idx: Vec<usize>| {
            if idx.is_empty() {
                return;
            }
            let _ = writeln!(out, "    <{name}>");
            for i in idx {
                let _ = writeln!(out, "      <Unknown index=\"{i}\"/>");
            }
            let _ = writeln!(out, "    </{name}>");
        };
        let n = self.variables.len();
        let outputs: Vec<usize> = (0..n).filter(|&k| self.variables[k].causality == Causality::Output).collect();
        if !outputs.is_empty() {
            out.push_str("    <Outputs>\n");
            for k in outputs {
                let _ = write!(out, "      <Unknown index=\"{}\"", k + 1);
                if let Some((_, deps)) = self.dependencies.iter().find(|(vr, _)| *vr == self.variables[k].vr) {
                    let idx: Vec<String> = deps.iter().filter_map(|&vr| index(vr)).map(|i| i.to_string()).collect();
                    let _ = write!(out, " dependencies=\"{}\"", idx.join(" "));
                }
                out.push_str("/>\n");
            }
            out.push_str("    </Outputs>\n");
        }
        section(out, "Derivatives", self.derivatives.iter().filter_map(|&vr| index(vr)).collect());
        let initial: Vec<usize> = (0..n).filter(|&k| self.initial_unknown(k)).collect();
        if !initial.is_empty() {
            out.push_str("    <InitialUnknowns>\n");
            for k in initial {
                let _ = write!(out, "      <Unknown index=\"{}\"", k + 1);
                if let Some((_, deps)) = self.initial_dependencies.iter().find(|(vr, _)| *vr == self.variables[k].vr) {
                    let idx: Vec<String> = deps.iter().filter_map(|&vr| index(vr)).map(|i| i.to_string()).collect();
                    let _ = write!(out, " dependencies=\"{}\"", idx.join(" "));
                }
                out.push_str("/>\n");
            }
            out.push_str("    </InitialUnknowns>\n");
        }
        out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    }

    fn fmi3_body(&self, out: &mut String) {
        out.push_str("  <ModelVariables>\n");
        for v in &self.variables {
            let tag = v.ty.element(FmiVersion::V3).unwrap_or("Float64");
            let _ = write!(out, "    <{tag} ");
            variable_attributes(out, v);
            type_attributes(out, v);
            if let Some(state) = v.derivative_of {
                let _ = write!(out, " derivative=\"{state}\"");
            }
            out.push_str("/>\n");
        }
        out.push_str("  </ModelVariables>\n  <ModelStructure>\n");
        // XSD order: Output*, ContinuousStateDerivative*, InitialUnknown*, EventIndicator*.
        let vrs = |pick: &dyn Fn(usize) -> bool| -> Vec<u32> {
            (0..self.variables.len()).filter(|&k| pick(k)).map(|k| self.variables[k].vr).collect()
        };
        let sections: [(&str, Vec<u32>); 4] = [
            ("Output", vrs(&|k| self.variables[k].causality == Causality::Output)),
            ("ContinuousStateDerivative", self.derivatives.clone()),
            ("InitialUnknown", vrs(&|k| self.initial_unknown(k))),
            ("EventIndicator", self.indicators.clone()),
        ];
        for (tag, vrs) in sections {
            for vr in vrs {
                let deps = match tag {
                    "Output" => self.dependencies.iter().find(|(o, _)| *o == vr),
                    "InitialUnknown" => self.initial_dependencies.iter().find(|(o, _)| *o == vr),
                    _ => None,
                };
                match deps {
                    Some((_, d)) => {
                        let d: Vec<String> = d.iter().map(u32::to_string).collect();
                        let _ = writeln!(out, "    <{tag} valueReference=\"{vr}\" dependencies=\"{}\"/>", d.join(" "));
                    }
                    None => {
                        let _ = writeln!(out, "    <{tag} valueReference=\"{vr}\"/>");
                    }
                }
            }
        }
        out.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    }
}

/// One file of an .fmu.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the archive, e.g. `binaries/linux64/Model.so`.
    pub name: String,
    pub data: Vec<u8>,
    /// Mode 0755 (the platform binary) instead of the default.
    pub executable: bool,
}

/// Whether a file may be written at `path` through a temporary file renamed onto it: a new
/// name or a regular file. A device, FIFO, socket, directory or symbolic link is refused
/// (the rename would replace the node itself: `/dev/null` would become a regular file).
pub fn replaceable(path: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", path.display())),
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => {
            let t = m.file_type();
            let what = if t.is_dir() {
                "a directory"
            } else if t.is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file (a device, FIFO or socket)"
            };
            Err(format!("{}: is {what}; stiction writes a file by replacing it, so it writes only to a new name or a regular file", path.display()))
        }
    }
}

/// Write the .fmu zip (deflated entries) to `out`, creating its directory, through an
/// [`OutFile`]: `out` is never a partial archive (a failed write, a signal, a crash). Errors
/// name `out`.
pub fn write_fmu(out: &Path, entries: &[Entry]) -> Result<(), String> {
    use std::io::Write as _;
    let mut file = OutFile::create(out)?;
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", out.display());
    {
        let mut zip = zip::ZipWriter::new(std::io::BufWriter::new(&mut file));
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for e in entries {
            let o = if e.executable { opts.unix_permissions(0o755) } else { opts };
            zip.start_file(e.name.as_str(), o).map_err(|err| fail(&err))?;
            zip.write_all(&e.data).map_err(|err| fail(&err))?;
        }
        zip.finish().map_err(|err| fail(&err))?.flush().map_err(|err| fail(&err))?;
    }
    file.commit()
}

/// A whole file being written under a temporary name beside `target`; [`commit`] renames it
/// onto the target, dropping it uncommitted removes it, and [`remove_partials`] removes it
/// for a process that ends at once (a second signal) while another thread writes it.
///
/// [`commit`]: OutFile::commit
pub struct OutFile {
    target: std::path::PathBuf,
    partial: std::path::PathBuf,
    file: Option<std::fs::File>,
}

impl OutFile {
    /// Check `target` ([`replaceable`]), create its directory, and open the temporary file
    /// (`.NAME.PID.partial.EXT`: the same extension, for writers that choose the format by it).
    pub fn create(target: &Path) -> Result<OutFile, String> {
        replaceable(target)?;
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create the directory: {e}", dir.display()))?;
        }
        let stem = target.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let ext = target.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        let name = format!(".{stem}.{}.partial{ext}", std::process::id());
        let partial = dir.map_or_else(|| std::path::PathBuf::from(&name), |d| d.join(&name));
        partials(|p| p.push(partial.clone()));
        let file = match std::fs::File::create(&partial) {
            Ok(f) => f,
            Err(e) => {
                partials(|p| p.retain(|x| *x != partial));
                return Err(format!("{}: {e}", target.display()));
            }
        };
        Ok(OutFile { target: target.to_path_buf(), partial, file: Some(file) })
    }

    /// The temporary file, for writers that take a path (the plot backends).
    pub fn partial_path(&self) -> &Path {
        &self.partial
    }

    /// Flush, close and rename onto the target; errors name the target.
    pub fn commit(mut self) -> Result<(), String> {
        use std::io::Write as _;
        let name = self.target.display().to_string();
        if let Some(mut f) = self.file.take() {
            f.flush().map_err(|e| format!("{name}: {e}"))?;
        }
        std::fs::rename(&self.partial, &self.target).map_err(|e| format!("{name}: {e}"))?;
        let done = std::mem::take(&mut self.partial);
        partials(|p| p.retain(|x| *x != done));
        Ok(())
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if !self.partial.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.partial);
            partials(|p| p.retain(|x| *x != self.partial));
        }
    }
}

impl std::io::Write for OutFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.as_mut().map_or(Ok(0), |f| f.write(buf))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}

impl std::io::Seek for OutFile {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.as_mut().map_or(Ok(0), |f| f.seek(pos))
    }
}

/// The temporary files of outputs being written (removed by [`remove_partials`]).
fn partials(f: impl FnOnce(&mut Vec<std::path::PathBuf>)) {
    static PARTIALS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    if let Ok(mut p) = PARTIALS.lock() {
        f(&mut p);
    }
}

/// Remove the temporary file of every output this process is writing: for a process that
/// ends at once (a second signal) while another thread writes one.
pub fn remove_partials() {
    partials(|p| {
        for x in p.drain(..) {
            let _ = std::fs::remove_file(x);
        }
    });
}

#[cfg(all(test, feature = "read"))]
mod tests {
    use super::*;
    use crate::description::ModelDescription;

    fn var<'a>(name: &'a str, vr: u32, causality: Causality, initial: Option<Initial>) -> ScalarVariable<'a> {
        ScalarVariable {
            name,
            vr,
            ty: VarType::Float64,
            causality,
            variability: Variability::Continuous,
            initial,
            start: None,
            unit: "",
            description: "",
            nominal: None,
            derivative_of: None,
        }
    }

    /// What the writer declares, the reader reads back, in both versions: the vocabulary is
    /// one definition on both sides.
    #[test]
    fn the_reader_reads_what_the_writer_writes() {
        let variables = vec![
            ScalarVariable {
                variability: Variability::Fixed,
                start: Some(2.5),
                ..var("k", 1, Causality::Parameter, Some(Initial::Exact))
            },
            ScalarVariable { start: Some(0.0), ..var("u", 2, Causality::Input, None) },
            ScalarVariable { start: Some(1.0), unit: "m", ..var("x", 3, Causality::Output, Some(Initial::Exact)) },
            ScalarVariable { derivative_of: Some(3), ..var("der(x)", 4, Causality::Local, Some(Initial::Calculated)) },
            ScalarVariable {
                ty: VarType::Int32,
                variability: Variability::Discrete,
                ..var("mode", 5, Causality::Output, Some(Initial::Calculated))
            },
            ScalarVariable { ty: VarType::Boolean, ..var("z", 6, Causality::Local, Some(Initial::Calculated)) },
        ];
        for version in [FmiVersion::V2, FmiVersion::V3] {
            let d = Description {
                version,
                interfaces: Interfaces { model_exchange: true, co_simulation: true },
                model_name: "M",
                token: "{t}",
                description: "a <test> & more",
                generation_tool: "test",
                model_exchange: Capabilities { can_get_and_set_state: true, ..Capabilities::default() },
                co_simulation: Capabilities { variable_step: true, ..Capabilities::default() },
                event_indicators: 1,
                units: &[("m", [0, 1, 0, 0])],
                log_categories: &[("logEvents", "events")],
                default_experiment: DefaultExperiment { stop_time: Some(2.0), ..DefaultExperiment::default() },
                variables: variables.clone(),
                derivatives: vec![4],
                indicators: vec![6],
                dependencies: Vec::new(),
                initial_dependencies: Vec::new(),
            };
            let md = ModelDescription::parse(&d.to_xml()).unwrap_or_else(|e| panic!("{version:?}: {e}"));
            assert_eq!(md.version, version);
            assert_eq!((md.token.as_str(), md.description.as_deref()), ("{t}", Some("a <test> & more")));
            assert_eq!(md.identifier(Interface::ModelExchange), Some("M"));
            assert_eq!(md.capabilities(Interface::ModelExchange), d.model_exchange);
            // (needs_completed_integrator_step means nothing for Co-Simulation.)
            let cs = Interface::CoSimulation;
            assert_eq!(md.capabilities(cs).declared(cs), d.co_simulation.declared(cs));
            assert_eq!(md.default_experiment, Some(d.default_experiment));
            assert_eq!((md.states.clone(), md.derivatives.clone(), md.event_indicators), (vec![2], vec![3], 1));
            assert!(md.warnings.is_empty(), "{version:?}: {:?}", md.warnings);
            for (w, r) in variables.iter().zip(&md.variables) {
                assert_eq!((w.name, w.vr, w.ty), (r.name.as_str(), r.vr, r.ty));
                assert_eq!((w.causality, w.variability, w.initial), (r.causality, r.variability, r.initial));
                assert_eq!(w.start.map(|s| start_text(w.ty, s)), r.start);
            }
        }
    }
}
