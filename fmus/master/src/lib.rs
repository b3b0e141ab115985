//! # stiction-fmi-master
//!
//! FMU-only co-simulation systems: several Co-Simulation FMUs (FMI 2.0 or 3.0) connected
//! output to input by variable name and stepped by a master algorithm, as OMSimulator and
//! FMPy do.
//!
//! ```json
//! { "name": "gear_and_contact",
//!   "master": { "algorithm": "gauss-seidel", "step": 1e-3, "stop_time": 2, "threads": 2 },
//!   "fmus": { "contact": { "path": "StictionFriction.fmu", "parameters": { "F": 5 } },
//!             "gear":    { "path": "StictionGear.fmu", "parameters": { "fu": 3, "v": 2 } } },
//!   "connections": [ { "from": "gear.v", "to": "contact.v" },
//!                    { "from": "contact.f", "to": "gear.fv", "gain": 1 } ],
//!   "output": { "interval": 1e-3, "signals": { "q": "gear.q", "f": "contact.f" } } }
//! ```
//!
//! **Communication.** The FMUs are stepped from the communication points t_k = k h with
//! doStep(t_k, h); each connection sets its input to gain × the source output.
//! * Jacobi: every input takes its source's output at t_k; all FMUs then step concurrently
//!   (rayon; the result does not depend on the number of threads).
//! * Gauss-Seidel: the FMUs step one after the other in a topological order of the
//!   connection graph, each taking its inputs from the outputs as they are when its turn
//!   comes: at t_{k+1} from the FMUs already stepped, at t_k from the others. A feedback cycle
//!   has no topological order; the cycle is cut greedily (see [`gauss_seidel_order`]), and the
//!   connections it cuts carry the previous communication point's value.
//!
//! **Algebraic loops.** An output *feeds through* when ModelStructure declares that it
//! depends on an input (FMI 2.0 `<Outputs><Unknown dependencies=...>`, FMI 3.0
//! `<Output dependencies=...>`). A cycle of connections and feedthrough dependencies is an
//! algebraic loop. Only declared dependencies count for loops: an output without a
//! `dependencies` attribute may, by the standard, depend on every input, but a Co-Simulation
//! output that is the value of the last step (as in stiction's own FMUs) does not, and
//! treating every feedback connection as a loop would refuse ordinary systems. (The missing
//! information is treated conservatively only when ordering Gauss-Seidel.) A loop is solved
//! by fixed-point iteration with rollback when every FMU in it declares
//! canGetAndSetFMUstate="true": the FMUs of the loop save their state (GetFMUstate), step with
//! the current guess of the loop's connection values (initially the values at t_k), and the
//! outputs at t_{k+1} become the next guess; the step is rolled back (SetFMUstate) and
//! repeated until the inputs used equal gain × the outputs produced within the tolerance
//! (`master.loop.tolerance`, relative to max(1, |value|); `master.loop.max_iterations`).
//! The converged step couples the loop implicitly: its inputs over [t_k, t_{k+1}] are the
//! loop's values at t_{k+1}. Otherwise the loop is an error naming its FMUs and variables.
//!
//! **Stop time.** The run takes ⌈stop_time / h⌉ steps. When stop_time is not a whole number of
//! steps the last one is shortened to end at stop_time, if every FMU declares
//! canHandleVariableCommunicationStepSize="true"; otherwise every step keeps h (the run ends
//! after stop_time) and `stiction check` warns, naming the FMUs that prevent it.
#![deny(unsafe_code)]

use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use stiction_fmi_import::{interfaces, notes, preload_list, Instance, Isolation, VarKind};
use stiction_fmi_schema::structure::{read_structure, Deps, Structure};
use stiction_fmi_schema::{Archive, Causality, FmiError, Interface, VarType};
use stiction_framework::stepper::bus::gauss_seidel_order;
use stiction_framework::{Diagnostic, Error, OutputSink, Result, RunSummary};

pub mod translate;
pub use translate::{translate, translate_text, Translated};

/// How the master orders the FMUs' steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// All FMUs step concurrently with the inputs of the previous communication point.
    Jacobi,
    /// The FMUs step in a topological order, each with the outputs of those already stepped.
    GaussSeidel,
}

impl Algorithm {
    pub fn label(self) -> &'static str {
        match self {
            Algorithm::Jacobi => "jacobi",
            Algorithm::GaussSeidel => "gauss-seidel",
        }
    }
}

/// True if `text` is JSON with a top-level `"fmus"` object: an FMU-only system.
pub fn is_fmu_system(text: &str) -> bool {
    // A top-level key `fmus` is written either as the bytes `fmus` or with a `\u` escape;
    // a file with neither (as a network system usually is) is decided by two substring searches
    // instead of a second parse of the whole file.
    if !text.contains("fmus") && !text.contains("\\u") {
        return false;
    }
    // Only the top-level keys: the values are checked but not built (building a `Value` of
    // chain-10k cost a quarter of its load time).
    type TopLevel<'a> = std::collections::HashMap<String, &'a serde_json::value::RawValue>;
    serde_json::from_str::<TopLevel>(text).is_ok_and(|top| top.contains_key("fmus"))
}

/// One FMU of the system.
struct Unit {
    name: String,
    fmu: Instance,
    structure: Structure,
    /// Priority in ordering (position in `master.order`, else in `fmus`).
    priority: usize,
    /// Connected inputs, one slot per scalar or array element: variable indices, elements
    /// (`Some(e)` for element e of an array), values to set before doStep.
    in_vars: Vec<usize>,
    in_elems: Vec<Option<usize>>,
    in_vals: Vec<f64>,
    /// How the input slots are set (one call per type).
    in_io: Io,
    /// Connected outputs: variable indices, elements, values after the last doStep.
    out_vars: Vec<usize>,
    out_elems: Vec<Option<usize>>,
    out_vals: Vec<f64>,
    /// How the output slots are read.
    out_io: Io,
    /// Member of an algebraic loop (stepped by the loop iteration).
    in_loop: bool,
    /// The error of the last step, if it failed.
    failed: Option<FmiError>,
    /// The FMU asked to end the simulation: (its last successful time, whether the step
    /// that asked was made, message).
    stop: Option<(f64, bool, String)>,
}

impl Unit {
    /// Set the connected inputs, doStep(t, h), read the connected outputs. On failure the
    /// error is kept in `failed`.
    fn step(&mut self, t: f64, h: f64) {
        let r = (|| {
            self.in_io.set(&mut self.fmu, &self.in_vals)?;
            if let Some(last) = self.fmu.do_step(t, h)? {
                let made = last >= t + h - 1e-9 * h;
                let name = self.fmu.me_name("fmi2DoStep", "fmi3DoStep");
                let msg = self
                    .fmu
                    .error(name, format!("asked to end the simulation; its last successful time is t = {last} s"));
                self.stop = Some((last, made, format!("asked by FMU '{}': {msg}", self.name)));
                if !made {
                    return Ok(());
                }
            }
            self.out_io.get(&mut self.fmu, &mut self.out_vals)
        })();
        if let Err(e) = r {
            self.failed = Some(e);
        }
    }

    fn var(&self, i: usize) -> &str {
        &self.fmu.archive.description.variables[i].name
    }

    /// The name of an input (`input`) or output slot: "v" or "y[2]".
    fn slot_name(&self, input: bool, slot: usize) -> String {
        let (vars, elems) = if input { (&self.in_vars, &self.in_elems) } else { (&self.out_vars, &self.out_elems) };
        match elems[slot] {
            Some(e) => format!("{}[{e}]", self.var(vars[slot])),
            None => self.var(vars[slot]).to_string(),
        }
    }

    /// The slot of variable `var` (element `elem`) among the inputs or outputs, added if new.
    fn slot(&mut self, input: bool, var: usize, elem: Option<usize>) -> Result<usize> {
        let (vars, elems, vals, io) = if input {
            (&mut self.in_vars, &mut self.in_elems, &mut self.in_vals, &mut self.in_io)
        } else {
            (&mut self.out_vars, &mut self.out_elems, &mut self.out_vals, &mut self.out_io)
        };
        if let Some(s) = (0..vars.len()).find(|&s| vars[s] == var && elems[s] == elem) {
            return Ok(s);
        }
        let md = &self.fmu.archive.description;
        let v = &md.variables[var];
        let len = match elem {
            None => 1,
            Some(_) => md.shape(var).map_err(|e| Error::invalid(&self.name, e))?.iter().product::<u64>() as usize,
        };
        io.add(var, v.vr, v.ty, len, elem.unwrap_or(0));
        vars.push(var);
        elems.push(elem);
        vals.push(0.0);
        Ok(vars.len() - 1)
    }

    /// True unless ModelStructure declares that output `var` depends on none of `inputs`.
    fn may_feed_through(&self, var: usize, inputs: &[usize]) -> bool {
        match self.structure.deps.get(&var) {
            None | Some(Deps::Unknown) => true,
            Some(Deps::On(on)) => on.iter().any(|d| inputs.contains(d)),
        }
    }

    /// True if ModelStructure declares that output `var` depends on input `input`.
    fn declares_feedthrough(&self, var: usize, input: usize) -> bool {
        matches!(self.structure.deps.get(&var), Some(Deps::On(on)) if on.contains(&input))
    }
}

/// A connection: output slot `from.1` of unit `from.0` to input slot `to.1` of unit `to.0`.
#[derive(Clone, Debug)]
struct Conn {
    from: (usize, usize),
    to: (usize, usize),
    gain: f64,
    /// "gear.v -> contact.v" (with the gain if not 1).
    text: String,
}

/// The connected variables of one side (inputs or outputs) of an FMU, got or set in one
/// call per type ([`Instance::get_mixed`], [`Instance::set_mixed`]): the variables (an array
/// with all its elements), a buffer of their values, and where each slot's value lies in it.
#[derive(Debug, Default)]
struct Io {
    vars: Vec<usize>,
    vrs: Vec<u32>,
    kinds: Vec<VarKind>,
    /// Where each variable's values start in `buf`.
    starts: Vec<usize>,
    buf: Vec<f64>,
    /// Per slot: its position in `buf`.
    pos: Vec<usize>,
    /// Some variable is an array: the elements not connected keep the FMU's values.
    arrays: bool,
}

impl Io {
    /// Add a slot for element `elem` of variable `var` (value reference `vr`, `len` values).
    fn add(&mut self, var: usize, vr: u32, ty: VarType, len: usize, elem: usize) {
        let k = match self.vars.iter().position(|&v| v == var) {
            Some(k) => k,
            None => {
                self.vars.push(var);
                self.vrs.push(vr);
                self.kinds.push((ty, len));
                self.starts.push(self.buf.len());
                self.buf.resize(self.buf.len() + len, 0.0);
                self.arrays |= len > 1;
                self.vars.len() - 1
            }
        };
        self.pos.push(self.starts[k] + elem);
    }

    /// Read the variables; `vals[s]` = the value of slot s.
    fn get(&mut self, fmu: &mut Instance, vals: &mut [f64]) -> std::result::Result<(), FmiError> {
        if self.vrs.is_empty() {
            return Ok(());
        }
        fmu.get_mixed(&self.vrs, &self.kinds, &mut self.buf)?;
        for (v, &p) in vals.iter_mut().zip(&self.pos) {
            *v = self.buf[p];
        }
        Ok(())
    }

    /// Read the current values of the array variables (the elements no slot sets).
    fn load(&mut self, fmu: &mut Instance) -> std::result::Result<(), FmiError> {
        if self.arrays {
            fmu.get_mixed(&self.vrs, &self.kinds, &mut self.buf)?;
        }
        Ok(())
    }

    /// Set the variables with slot s taking `vals[s]` (checked against its type: an integer
    /// input takes a whole number in range, a Boolean 0 or 1).
    fn set(&mut self, fmu: &mut Instance, vals: &[f64]) -> std::result::Result<(), FmiError> {
        if self.vrs.is_empty() {
            return Ok(());
        }
        for (&v, &p) in vals.iter().zip(&self.pos) {
            self.buf[p] = v;
        }
        fmu.set_mixed(&self.vrs, &self.kinds, &self.buf)
    }
}

/// Whether an output of type `from` may feed an input of type `to` through `gain`, and why
/// not: a real input takes any numeric or Boolean output (scaled by the gain); an integer
/// input takes, with gain 1, an integer output whose type's range lies in its own, or a
/// Boolean (0 or 1); a Boolean input takes a Boolean output with gain 1. Anything else could
/// carry a value the input cannot hold, and is refused when the system is loaded.
fn connectable(from: VarType, to: VarType, gain: f64) -> std::result::Result<(), String> {
    if to.is_real() {
        return Ok(());
    }
    let range = |t: VarType| if t == VarType::Boolean { Some((0.0, 1.0)) } else { t.integer_range() };
    if gain != 1.0 {
        return Err(format!("a {to:?} input takes its source's values as they are (gain 1, not {gain})"));
    }
    if to == VarType::Boolean {
        return if from == VarType::Boolean {
            Ok(())
        } else {
            Err(format!("a Boolean input takes only Boolean outputs, and {from:?} values are not 0/1"))
        };
    }
    match (range(from), range(to)) {
        (Some((a, b)), Some((c, d))) if a >= c && b <= d => Ok(()),
        (Some((a, b)), Some((c, d))) => {
            Err(format!("{from:?} values ({a} to {b}) do not all fit an {to:?} input ({c} to {d})"))
        }
        _ => {
            Err(format!("an {to:?} input takes integer or Boolean outputs; {from:?} values need not be whole numbers"))
        }
    }
}

/// An algebraic loop: its FMUs in stepping order and the connections between them.
#[derive(Clone, Debug)]
struct Loop {
    members: Vec<usize>,
    conns: Vec<usize>,
    /// "gear.q -> load.x, load.f -> gear.fv; load.f depends on load.x", for messages.
    text: String,
}

/// One entry of the stepping order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Unit(usize),
    Loop(usize),
}

/// Where an output column comes from.
#[derive(Clone, Debug)]
enum Column {
    /// Read from the FMU at the row's time (grouped per FMU and type, see `groups`).
    Read,
    /// A connected input: gain × its source output at the row's time.
    Conn { from: (usize, usize), gain: f64 },
}

/// Columns read from one FMU's variables of one type: (unit, type, value references,
/// column positions).
type ReadGroup = (usize, VarType, Vec<u32>, Vec<Option<usize>>);

/// A loaded FMU-only system, instantiated and initialized at t = 0, ready to run.
pub struct FmuSystem {
    pub name: String,
    pub algorithm: Algorithm,
    /// Communication step h (s).
    pub step: f64,
    pub stop_time: f64,
    /// `master.threads`, if given.
    pub threads: Option<usize>,
    /// Output interval (s), a whole number of steps.
    pub interval: f64,
    every: u64,
    units: Vec<Unit>,
    conns: Vec<Conn>,
    /// Per unit, the connections into it.
    incoming: Vec<Vec<usize>>,
    loops: Vec<Loop>,
    /// Gauss-Seidel stepping order (Jacobi: loops only, after the parallel step).
    order: Vec<Stage>,
    /// Gauss-Seidel: connections whose target steps before their source.
    cut: Vec<usize>,
    labels: Vec<String>,
    columns: Vec<Column>,
    /// Columns read from FMUs: (unit, type, value references, column positions).
    groups: Vec<ReadGroup>,
    tolerance: f64,
    max_iterations: usize,
    /// Communication steps taken.
    k: u64,
    /// Steps of algebraic loops taken, counting every repetition after a rollback.
    iterations: u64,
    /// The shortened length of the last step, when stop_time is not a whole number of steps
    /// and every FMU can handle a variable communication step size.
    last_step: Option<f64>,
}

/// The number of communication steps of a run to `stop_time` with step `h`.
fn step_count(stop_time: f64, h: f64) -> u64 {
    (stop_time / h - 1e-9).ceil().max(0.0) as u64
}

/// The length of the last step if `stop_time` is not a whole number of steps `h`.
fn partial_step(stop_time: f64, h: f64) -> Option<f64> {
    let n = step_count(stop_time, h);
    let rest = stop_time - n.saturating_sub(1) as f64 * h;
    (n >= 1 && h - rest > 1e-9 * h).then_some(rest)
}

/// JSON helpers: every error names its JSON path.
fn object<'a>(v: &'a Value, at: &str) -> Result<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| Error::invalid(at, format!("expected an object, got {v}")))
}

fn only_keys(m: &Map<String, Value>, at: &str, known: &[&str]) -> Result<()> {
    for k in m.keys() {
        if !known.contains(&k.as_str()) {
            let p = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
            return Err(Error::invalid(p, format!("unknown key (expected one of: {})", known.join(", "))));
        }
    }
    Ok(())
}

fn join(at: &str, k: &str) -> String {
    if at.is_empty() {
        k.to_string()
    } else {
        format!("{at}.{k}")
    }
}

fn positive(m: &Map<String, Value>, at: &str, key: &str) -> Result<Option<f64>> {
    match m.get(key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
            _ => Err(Error::invalid(join(at, key), format!("expected a positive number, got {v}"))),
        },
    }
}

fn count(m: &Map<String, Value>, at: &str, key: &str) -> Result<Option<usize>> {
    match m.get(key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Ok(Some(n as usize)),
            _ => Err(Error::invalid(join(at, key), format!("expected a whole number >= 1, got {v}"))),
        },
    }
}

/// One end of a connection: the unit, the variable, which of its elements ("y[2]": Some(2);
/// a scalar or a whole array: None) and its number of elements.
#[derive(Clone, Copy)]
struct End {
    unit: usize,
    var: usize,
    elem: Option<usize>,
    n: usize,
}

/// "fmu.variable" or "fmu.array[e]" (0-based, row-major) → [`End`], naming `at` in errors;
/// `want` is the causality the endpoint needs ("output" or "input"). A name is looked up
/// literally first (an FMI 2.0 name may contain brackets), then as an element of an array.
fn endpoint(units: &[Unit], text: &str, at: &str, want: Causality) -> Result<End> {
    let Some((fmu, var)) = text.split_once('.') else {
        return Err(Error::invalid(at, format!("expected \"fmu.variable\", got \"{text}\"")));
    };
    let Some(u) = units.iter().position(|u| u.name == fmu) else {
        let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
        return Err(Error::invalid(at, format!("unknown FMU '{fmu}' (the FMUs: {})", names.join(", "))));
    };
    let md = &units[u].fmu.archive.description;
    let label = &units[u].fmu.label;
    let (found, elem) = match md.find(var) {
        Some(i) => (Some(i), None),
        None => match var.strip_suffix(']').and_then(|x| x.split_once('[')) {
            Some((base, idx)) => (md.find(base.trim()), Some(idx.trim().parse::<usize>().ok())),
            None => (None, None),
        },
    };
    let Some(i) = found else {
        return Err(Error::invalid(
            at,
            format!(
                "{label} ('{fmu}') has no variable '{var}'{} ({want}s: {})",
                stiction_framework::error::suggestion(var, md.variables.iter().map(|v| v.name.as_str())),
                md.names_with(want)
            ),
        ));
    };
    let v = &md.variables[i];
    if v.causality != want {
        let role = if want == Causality::Output { "the source of a connection" } else { "the target of a connection" };
        return Err(Error::invalid(
            at,
            format!(
                "'{text}' has causality \"{}\"; {role} must be an {want} ({want}s of '{fmu}': {})",
                v.causality,
                md.names_with(want)
            ),
        ));
    }
    if v.ty == VarType::Other {
        return Err(Error::invalid(
            at,
            format!("'{text}' is a {} variable; connections join numeric and Boolean variables", v.type_name),
        ));
    }
    let n = if v.dimensions.is_empty() {
        1
    } else {
        md.shape(i).map_err(|e| Error::invalid(at, format!("'{text}': {e}")))?.iter().product::<u64>() as usize
    };
    let elem = match elem {
        None => None,
        Some(Some(e)) if !v.dimensions.is_empty() && e < n => Some(e),
        Some(_) if v.dimensions.is_empty() => {
            return Err(Error::invalid(at, format!("'{text}': '{}' is not an array", v.name)));
        }
        Some(_) => {
            return Err(Error::invalid(
                at,
                format!("'{text}': '{}' has {n} elements (indices 0 to {})", v.name, n.saturating_sub(1)),
            ))
        }
    };
    Ok(End { unit: u, var: i, elem, n })
}

impl FmuSystem {
    /// Load an FMU-only system file: unpack, instantiate and initialize every FMU, check
    /// the connections and the output signals, find the algebraic loops and the order.
    /// Errors name the file and the JSON path.
    pub fn load(path: &Path) -> Result<FmuSystem> {
        let shown = path.display().to_string();
        let text = stiction_framework::system::read_system_file(path)
            .map_err(|e| Error::Io { path: shown.clone(), error: e })?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_else(|| ".".into());
        let default_name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        Self::from_str(&text, &default_name, &base).map_err(|e| e.in_file(shown))
    }

    /// Read a system from JSON text; FMU paths are relative to `base`.
    pub fn from_str(text: &str, default_name: &str, base: &Path) -> Result<FmuSystem> {
        let v: Value = serde_json::from_str(text).map_err(|e| Error::invalid("(top level)", e.to_string()))?;
        Self::from_value(&v, default_name, base)
    }

    /// Build a system from a parsed JSON value.
    pub fn from_value(v: &Value, default_name: &str, base: &Path) -> Result<FmuSystem> {
        let top = object(v, "(top level)")?;
        only_keys(top, "", &["$schema", "name", "description", "master", "fmus", "connections", "output"])?;
        let name = match top.get("name") {
            None => default_name.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(x) => return Err(Error::invalid("name", format!("expected a string, got {x}"))),
        };
        // master
        let master = object(
            top.get("master").ok_or_else(|| Error::invalid("master", "missing (algorithm, step, stop_time)"))?,
            "master",
        )?;
        only_keys(master, "master", &["algorithm", "step", "stop_time", "threads", "order", "loop"])?;
        let algorithm = match master.get("algorithm").map(|a| a.as_str()) {
            None | Some(Some("jacobi")) => Algorithm::Jacobi,
            Some(Some("gauss-seidel")) => Algorithm::GaussSeidel,
            Some(_) => {
                return Err(Error::invalid("master.algorithm", "expected \"jacobi\" or \"gauss-seidel\""));
            }
        };
        let step = positive(master, "master", "step")?
            .ok_or_else(|| Error::invalid("master.step", "missing: the communication step h (s)"))?;
        let stop_time = positive(master, "master", "stop_time")?
            .ok_or_else(|| Error::invalid("master.stop_time", "missing: the stop time (s)"))?;
        if step > stop_time {
            return Err(Error::invalid(
                "master.step",
                format!("the communication step {step} s is longer than the stop time {stop_time} s"),
            ));
        }
        let threads = count(master, "master", "threads")?;
        if let Some(n) = threads {
            stiction_framework::system::check_threads(n, "master.threads")?;
        }
        let (mut tolerance, mut max_iterations) = (1e-10, 100);
        if let Some(l) = master.get("loop") {
            let l = object(l, "master.loop")?;
            only_keys(l, "master.loop", &["tolerance", "max_iterations"])?;
            tolerance = positive(l, "master.loop", "tolerance")?.unwrap_or(tolerance);
            max_iterations = count(l, "master.loop", "max_iterations")?.unwrap_or(max_iterations);
        }
        // fmus
        let fmus = object(top.get("fmus").ok_or_else(|| Error::invalid("fmus", "missing"))?, "fmus")?;
        if fmus.is_empty() {
            return Err(Error::invalid("fmus", "no FMUs"));
        }
        let mut units = Vec::with_capacity(fmus.len());
        for (i, (name, spec)) in fmus.iter().enumerate() {
            units.push(load_unit(name, spec, base, i)?);
        }
        // master.order (after the FMUs are known)
        if let Some(o) = master.get("order") {
            let list = o
                .as_array()
                .ok_or_else(|| Error::invalid("master.order", format!("expected a list of FMU names, got {o}")))?;
            for (p, n) in list.iter().enumerate() {
                let at = format!("master.order[{p}]");
                let n = n.as_str().ok_or_else(|| Error::invalid(&at, format!("expected an FMU name, got {n}")))?;
                let Some(u) = units.iter().position(|u| u.name == n) else {
                    let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
                    return Err(Error::invalid(at, format!("unknown FMU '{n}' (the FMUs: {})", names.join(", "))));
                };
                if list[..p].iter().any(|m| m.as_str() == Some(n)) {
                    return Err(Error::invalid(at, format!("'{n}' is listed twice")));
                }
                units[u].priority = p;
            }
            // Unlisted FMUs follow the listed ones, in the order of "fmus".
            for (i, u) in units.iter_mut().enumerate() {
                if !list.iter().any(|m| m.as_str() == Some(&u.name)) {
                    u.priority = list.len() + i;
                }
            }
        }
        // connections
        let mut conns: Vec<Conn> = Vec::new();
        let mut fed: HashMap<(usize, usize, Option<usize>), usize> = HashMap::new();
        let list = match top.get("connections") {
            None => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(x) => return Err(Error::invalid("connections", format!("expected a list, got {x}"))),
        };
        for (i, c) in list.iter().enumerate() {
            let at = format!("connections[{i}]");
            let m = object(c, &at)?;
            only_keys(m, &at, &["from", "to", "gain"])?;
            let text = |key: &str| -> Result<&str> {
                m.get(key)
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::invalid(format!("{at}.{key}"), "missing or not a string: \"fmu.variable\""))
            };
            let (from_s, to_s) = (text("from")?, text("to")?);
            let from = endpoint(&units, from_s, &format!("{at}.from"), Causality::Output)?;
            let to = endpoint(&units, to_s, &format!("{at}.to"), Causality::Input)?;
            let gain = match m.get("gain") {
                None => 1.0,
                Some(g) => g.as_f64().filter(|g| g.is_finite()).ok_or_else(|| {
                    Error::invalid(format!("{at}.gain"), format!("expected a finite number, got {g}"))
                })?,
            };
            let ty = |e: &End| units[e.unit].fmu.archive.description.variables[e.var].ty;
            connectable(ty(&from), ty(&to), gain).map_err(|why| {
                Error::invalid(
                    &at,
                    format!("cannot connect '{from_s}' ({:?}) to '{to_s}' ({:?}): {why}", ty(&from), ty(&to)),
                )
            })?;
            // A whole array joins a whole array of as many elements, element by element.
            let pairs: Vec<(Option<usize>, Option<usize>)> = match (from.elem, from.n > 1, to.elem, to.n > 1) {
                (None, true, None, true) if from.n == to.n => (0..from.n).map(|e| (Some(e), Some(e))).collect(),
                (None, true, None, true) => {
                    return Err(Error::invalid(
                        &at,
                        format!(
                        "'{from_s}' has {} elements and '{to_s}' {}: whole arrays connect only when their sizes match",
                        from.n, to.n
                    ),
                    ))
                }
                (None, true, ..) | (.., None, true) => {
                    let whole = if from.elem.is_none() && from.n > 1 { from_s } else { to_s };
                    return Err(Error::invalid(
                        &at,
                        format!(
                            "'{whole}' is a whole array and the other end is not; connect one element ('{whole}[0]')"
                        ),
                    ));
                }
                (fe, _, te, _) => vec![(fe, te)],
            };
            for (fe, te) in pairs {
                if let Some(&j) = fed.get(&(to.unit, to.var, te)) {
                    return Err(Error::invalid(
                        format!("{at}.to"),
                        format!("input '{to_s}' is already connected by connections[{j}] (from {}); an input takes one connection", list[j]["from"].as_str().unwrap_or("?")),
                    ));
                }
                fed.insert((to.unit, to.var, te), i);
                let slot_out = units[from.unit].slot(false, from.var, fe)?;
                let slot_in = units[to.unit].slot(true, to.var, te)?;
                let gain_text = if gain == 1.0 { String::new() } else { format!(" (gain {gain})") };
                let name = |s: &str, e: Option<usize>, whole: bool| match e {
                    Some(e) if whole => format!("{s}[{e}]"),
                    _ => s.to_string(),
                };
                conns.push(Conn {
                    from: (from.unit, slot_out),
                    to: (to.unit, slot_in),
                    gain,
                    text: format!(
                        "{} -> {}{gain_text}",
                        name(from_s, fe, from.elem.is_none()),
                        name(to_s, te, to.elem.is_none())
                    ),
                });
            }
        }
        initialize(&mut units, &conns)?;
        let mut incoming = vec![Vec::new(); units.len()];
        for (i, c) in conns.iter().enumerate() {
            incoming[c.to.0].push(i);
        }
        // output
        let (interval, labels, columns, groups) = output_columns(top.get("output"), &units, &conns, step)?;
        let every = ((interval / step).round() as u64).max(1);
        let mut sys = FmuSystem {
            name,
            algorithm,
            step,
            stop_time,
            threads,
            interval: every as f64 * step,
            every,
            units,
            conns,
            incoming,
            loops: Vec::new(),
            order: Vec::new(),
            cut: Vec::new(),
            labels,
            columns,
            groups,
            tolerance,
            max_iterations,
            k: 0,
            iterations: 0,
            last_step: None,
        };
        if sys.fixed_step_units().is_empty() {
            sys.last_step = partial_step(stop_time, step);
        }
        sys.find_loops()?;
        sys.order();
        Ok(sys)
    }

    /// The algebraic loops: strongly connected components of the graph of connected
    /// variables (output → input along a connection, input → output along a declared
    /// dependency). FMUs shared by several such components are iterated together.
    fn find_loops(&mut self) -> Result<()> {
        let mut g: DiGraph<(usize, usize), ()> = DiGraph::new();
        let mut node: HashMap<(usize, usize), NodeIndex> = HashMap::new();
        let mut at = |g: &mut DiGraph<(usize, usize), ()>, key: (usize, usize)| {
            *node.entry(key).or_insert_with(|| g.add_node(key))
        };
        for c in &self.conns {
            let out = (c.from.0, self.units[c.from.0].out_vars[c.from.1]);
            let inp = (c.to.0, self.units[c.to.0].in_vars[c.to.1]);
            let (a, b) = (at(&mut g, out), at(&mut g, inp));
            g.add_edge(a, b, ());
        }
        for (ui, u) in self.units.iter().enumerate() {
            for &o in &u.out_vars {
                for &i in &u.in_vars {
                    if u.declares_feedthrough(o, i) {
                        let (a, b) = (at(&mut g, (ui, i)), at(&mut g, (ui, o)));
                        g.add_edge(a, b, ());
                    }
                }
            }
        }
        let sccs: Vec<Vec<NodeIndex>> = petgraph::algo::tarjan_scc(&g).into_iter().filter(|s| s.len() > 1).collect();
        if sccs.is_empty() {
            return Ok(());
        }
        // Merge components that share an FMU (union-find over units).
        let n = self.units.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let mut looped = vec![false; n];
        let mut descriptions: Vec<(BTreeSet<usize>, String)> = Vec::new();
        for scc in &sccs {
            let members: BTreeSet<usize> = scc.iter().map(|&ix| g[ix].0).collect();
            let first = *members.iter().next().unwrap_or(&0);
            for &m in &members {
                looped[m] = true;
                let (a, b) = (root(&mut parent, first), root(&mut parent, m));
                parent[b] = a;
            }
            let inside: BTreeSet<(usize, usize)> = scc.iter().map(|&ix| g[ix]).collect();
            let conns: Vec<&str> = self
                .conns
                .iter()
                .filter(|c| {
                    inside.contains(&(c.from.0, self.units[c.from.0].out_vars[c.from.1]))
                        && inside.contains(&(c.to.0, self.units[c.to.0].in_vars[c.to.1]))
                })
                .map(|c| c.text.as_str())
                .collect();
            let mut feeds = Vec::new();
            for &(u, o) in &inside {
                for &(u2, i) in &inside {
                    if u == u2 && self.units[u].declares_feedthrough(o, i) {
                        let unit = &self.units[u];
                        feeds.push(format!("{0}.{1} depends on {0}.{2}", unit.name, unit.var(o), unit.var(i)));
                    }
                }
            }
            descriptions.push((members, format!("{}; direct feedthrough: {}", conns.join(", "), feeds.join(", "))));
        }
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for (u, &l) in looped.iter().enumerate() {
            if l {
                let r = root(&mut parent, u);
                match groups.iter_mut().find(|g| g.0 == r) {
                    Some(g) => g.1.push(u),
                    None => groups.push((r, vec![u])),
                }
            }
        }
        for (_, mut members) in groups {
            members.sort_by_key(|&u| (self.units[u].priority, u));
            let text: Vec<String> = descriptions
                .iter()
                .filter(|(m, _)| m.iter().any(|u| members.contains(u)))
                .map(|(_, t)| t.clone())
                .collect();
            let text = text.join("; ");
            let names: Vec<String> = members.iter().map(|&u| self.units[u].name.clone()).collect();
            let refuse: Vec<String> = members
                .iter()
                .filter(|&&u| !(self.units[u].structure.can_get_and_set_state && self.units[u].fmu.can_save_state()))
                .map(|&u| {
                    let unit = &self.units[u];
                    if unit.structure.can_get_and_set_state {
                        format!("'{}' ({}) does not export the FMU-state functions", unit.name, unit.fmu.label)
                    } else {
                        format!("'{}' ({}) does not declare canGetAndSetFMUstate=\"true\"", unit.name, unit.fmu.label)
                    }
                })
                .collect();
            if !refuse.is_empty() {
                return Err(Error::invalid(
                    "connections",
                    format!(
                        "algebraic loop between the FMUs {}: {text}. It would be solved by fixed-point iteration with \
                         rollback (GetFMUstate/SetFMUstate), but {}",
                        names.join(", "),
                        refuse.join(" and ")
                    ),
                ));
            }
            let conns: Vec<usize> = (0..self.conns.len())
                .filter(|&i| members.contains(&self.conns[i].from.0) && members.contains(&self.conns[i].to.0))
                .collect();
            for &m in &members {
                self.units[m].in_loop = true;
            }
            self.loops.push(Loop { members, conns, text: format!("{} ({text})", names.join(", ")) });
        }
        Ok(())
    }

    /// The Gauss-Seidel stepping order and the connections it cuts (see [`gauss_seidel_order`]).
    fn order(&mut self) {
        // Blocks: every loop, and every FMU outside loops.
        let mut block_of = vec![usize::MAX; self.units.len()];
        let mut blocks: Vec<(Stage, usize)> = Vec::new();
        for (l, lp) in self.loops.iter().enumerate() {
            let prio = lp.members.iter().map(|&u| self.units[u].priority).min().unwrap_or(0);
            for &m in &lp.members {
                block_of[m] = blocks.len();
            }
            blocks.push((Stage::Loop(l), prio));
        }
        for (u, unit) in self.units.iter().enumerate() {
            if !unit.in_loop {
                block_of[u] = blocks.len();
                blocks.push((Stage::Unit(u), unit.priority));
            }
        }
        // Edges between blocks: strong if the source output may feed through (declared or
        // not declared), weak if ModelStructure declares it independent of the connected inputs.
        let mut edges = Vec::new();
        for c in &self.conns {
            let (a, b) = (block_of[c.from.0], block_of[c.to.0]);
            if a != b {
                let u = &self.units[c.from.0];
                let strong = u.may_feed_through(u.out_vars[c.from.1], &u.in_vars);
                edges.push((a, b, strong));
            }
        }
        let prio: Vec<usize> = blocks.iter().map(|b| b.1).collect();
        let seq = gauss_seidel_order(&prio, &edges);
        self.order = seq.iter().map(|&b| blocks[b].0).collect();
        // Position of each unit in the sequence, to find the cut connections.
        let mut pos = vec![0usize; self.units.len()];
        let mut p = 0;
        for s in &self.order {
            match *s {
                Stage::Unit(u) => {
                    pos[u] = p;
                    p += 1;
                }
                Stage::Loop(l) => {
                    for &m in &self.loops[l].members {
                        pos[m] = p;
                        p += 1;
                    }
                }
            }
        }
        self.cut = (0..self.conns.len())
            .filter(|&i| {
                let c = &self.conns[i];
                block_of[c.from.0] != block_of[c.to.0] && pos[c.from.0] > pos[c.to.0]
            })
            .collect();
    }

    /// The FMUs that do not declare canHandleVariableCommunicationStepSize="true".
    fn fixed_step_units(&self) -> Vec<usize> {
        (0..self.units.len())
            .filter(|&u| !self.units[u].fmu.archive.description.cs_capabilities.variable_step)
            .collect()
    }

    /// What `stiction check` reports as warnings (each names its FMU): capabilities that
    /// cannot be honoured or checked (see [`stiction_fmi_import::notes`]), what the FMUs'
    /// modelDescription.xml lack, and a stop time the FMUs do not let the master reach exactly.
    /// `stiction run` prints them on standard error.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for u in &self.units {
            for d in notes(&u.fmu.archive.description, Interface::CoSimulation) {
                if let Diagnostic::Warning(w) = d {
                    out.push(format!("FMU '{}' ({}): {w}", u.name, u.fmu.label));
                }
            }
        }
        if let (Some(rest), None) = (partial_step(self.stop_time, self.step), self.last_step) {
            let total = step_count(self.stop_time, self.step);
            let names: Vec<String> = self
                .fixed_step_units()
                .iter()
                .map(|&u| format!("'{}' ({})", self.units[u].name, self.units[u].fmu.label))
                .collect();
            out.push(format!(
                "stop_time {} s is not a whole number of communication steps of {} s: the last step would have to \
                 be shortened to {rest:.6e} s, but the FMU(s) {} do not declare \
                 canHandleVariableCommunicationStepSize=\"true\"; every step keeps {} s and the run ends at t = {} s",
                self.stop_time,
                self.step,
                names.join(", "),
                self.step,
                total as f64 * self.step
            ));
        }
        out
    }

    /// A summary for `stiction check`: the FMUs, the algorithm and order, the cut
    /// connections, the algebraic loops and the warnings ([`FmuSystem::warnings`]).
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        let total = step_count(self.stop_time, self.step);
        out.push(format!(
            "master: {}, communication step {} s, stop time {} s ({total} steps), {} FMU(s), {} connection(s)",
            self.algorithm.label(),
            self.step,
            self.stop_time,
            self.units.len(),
            self.conns.len()
        ));
        for u in &self.units {
            let f = &u.fmu;
            out.push(format!(
                "FMU '{}': {} (FMI {} Co-Simulation){}",
                u.name,
                f.label,
                f.version.label(),
                if u.structure.can_get_and_set_state { ", can get and set its state" } else { "" }
            ));
            for d in notes(&u.fmu.archive.description, Interface::CoSimulation) {
                if let Diagnostic::Info(i) = d {
                    out.push(format!("FMU '{}': {i}", u.name));
                }
            }
        }
        if let Some(rest) = self.last_step {
            out.push(format!(
                "stop time {} s is not a whole number of steps: the last step is shortened to {rest:.6e} s \
                 (every FMU declares canHandleVariableCommunicationStepSize)",
                self.stop_time
            ));
        }
        match self.algorithm {
            Algorithm::Jacobi => {
                out.push("order: all FMUs step concurrently with the inputs of the previous communication point".into())
            }
            Algorithm::GaussSeidel => {
                let names: Vec<String> = self
                    .order
                    .iter()
                    .map(|s| match *s {
                        Stage::Unit(u) => self.units[u].name.clone(),
                        Stage::Loop(l) => {
                            let m: Vec<&str> =
                                self.loops[l].members.iter().map(|&u| self.units[u].name.as_str()).collect();
                            format!("[loop {}]", m.join(", "))
                        }
                    })
                    .collect();
                out.push(format!("order: {}", names.join(", ")));
                for &c in &self.cut {
                    out.push(format!(
                        "feedback: {} carries the value of the previous communication point (its target steps first)",
                        self.conns[c].text
                    ));
                }
            }
        }
        for l in &self.loops {
            out.push(format!(
                "algebraic loop {}: fixed-point iteration with rollback (tolerance {}, at most {} iterations)",
                l.text, self.tolerance, self.max_iterations
            ));
        }
        out.push(format!("output: every {} s: {}", self.interval, self.labels.join(", ")));
        let warnings = self.warnings();
        if warnings.is_empty() {
            out.push("no warnings".into());
        }
        out.extend(warnings.into_iter().map(|w| format!("warning: {w}")));
        out
    }

    /// The FMUs and connections as Graphviz DOT (`stiction graph`); dashed edges are the
    /// connections Gauss-Seidel cuts, bold ones belong to algebraic loops.
    pub fn to_dot(&self) -> String {
        use std::fmt::Write;
        let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut s = format!("digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box];\n", q(&self.name));
        for u in &self.units {
            let id = u.fmu.archive.description.co_simulation.clone().unwrap_or_default();
            let _ = writeln!(s, "  \"{}\" [label=\"{}\\n{}\"];", q(&u.name), q(&u.name), q(&id));
        }
        for (i, c) in self.conns.iter().enumerate() {
            let (a, b) = (&self.units[c.from.0], &self.units[c.to.0]);
            let mut label = format!("{} → {}", a.slot_name(false, c.from.1), b.slot_name(true, c.to.1));
            if c.gain != 1.0 {
                label.push_str(&format!(" ×{}", c.gain));
            }
            let style = if self.loops.iter().any(|l| l.conns.contains(&i)) {
                ", style=bold"
            } else if self.algorithm == Algorithm::GaussSeidel && self.cut.contains(&i) {
                ", style=dashed"
            } else {
                ""
            };
            let _ = writeln!(s, "  \"{}\" -> \"{}\" [label=\"{}\"{style}];", q(&a.name), q(&b.name), q(&label));
        }
        s.push_str("}\n");
        s
    }

    /// Column labels.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The number of algebraic loops.
    pub fn loop_count(&self) -> usize {
        self.loops.len()
    }

    /// Loop steps taken so far (each fixed-point iteration of each loop counts one; a loop
    /// that converges at once takes one per communication step).
    pub fn loop_iterations(&self) -> u64 {
        self.iterations
    }

    /// Current time (s).
    pub fn time(&self) -> f64 {
        match self.last_step {
            Some(_) if self.k >= step_count(self.stop_time, self.step) => self.stop_time,
            _ => self.k as f64 * self.step,
        }
    }

    /// Run to `stop_time` on `threads` worker threads (Jacobi only; Gauss-Seidel is
    /// sequential), writing a row at t = 0 and every output interval. On failure the rows
    /// written so far are flushed and the error names the time and the FMU, with its log.
    pub fn run(
        &mut self,
        threads: usize,
        sink: &mut dyn OutputSink,
        progress: &mut (dyn FnMut(f64) + Send),
    ) -> Result<RunSummary> {
        self.run_until(threads, sink, progress, &|| false)
    }

    /// [`run`](Self::run), stopping early (with `Ok`, at a communication point) as soon as
    /// `stop()` is true; it is asked once per step.
    pub fn run_until(
        &mut self,
        threads: usize,
        sink: &mut dyn OutputSink,
        progress: &mut (dyn FnMut(f64) + Send),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<RunSummary> {
        let result = if threads > 1 && self.algorithm == Algorithm::Jacobi {
            match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(pool) => pool.install(|| self.run_inner(true, sink, progress, stop)),
                Err(e) => Err(Error::invalid("master.threads", format!("cannot start {threads} worker threads: {e}"))),
            }
        } else {
            self.run_inner(false, sink, progress, stop)
        };
        let flushed = sink.finish().map_err(|e| Error::Io { path: "output".into(), error: e });
        let summary = result?;
        flushed?;
        Ok(summary)
    }

    fn run_inner(
        &mut self,
        parallel: bool,
        sink: &mut dyn OutputSink,
        progress: &mut dyn FnMut(f64),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<RunSummary> {
        let io = |e: std::io::Error| Error::Io { path: "output".into(), error: e };
        sink.begin(&self.labels).map_err(io)?;
        let total = step_count(self.stop_time, self.step);
        let mut values = vec![0.0; self.columns.len()];
        let mut rows = 0u64;
        let start = self.k;
        if start == 0 {
            self.row(&mut values)?;
            sink.row(self.time(), &values).map_err(io)?;
            rows += 1;
        }
        let report_every = (total / 200).max(1);
        let mut stopped = None;
        let mut last_row = self.time();
        while self.k < total && !stop() {
            self.step_once(parallel)?;
            // The earliest termination request ends the whole system: with a row at the new
            // time if the requesting FMUs made the step, else at the last row written.
            let request = self
                .units
                .iter()
                .filter_map(|u| u.stop.as_ref())
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, _, m)| m.clone());
            if let Some(why) = request {
                if self.units.iter().all(|u| u.stop.as_ref().is_none_or(|s| s.1)) {
                    self.row(&mut values)?;
                    sink.row(self.time(), &values).map_err(io)?;
                    rows += 1;
                    last_row = self.time();
                }
                stopped = Some(format!("t = {last_row} s, {why}"));
                break;
            }
            // A shortened last step ends the run at stop_time: its row is written too.
            if self.k % self.every == 0 || (self.k == total && self.last_step.is_some()) {
                self.row(&mut values)?;
                sink.row(self.time(), &values).map_err(io)?;
                rows += 1;
                last_row = self.time();
            }
            if self.k % report_every == 0 {
                progress(self.k as f64 / total as f64);
            }
        }
        if self.k >= total {
            progress(1.0);
        }
        let final_time = if stopped.is_some() { last_row } else { self.time() };
        Ok(RunSummary { steps: self.k - start, rows, final_time, stopped })
    }

    /// The output values at the current time.
    fn row(&mut self, values: &mut [f64]) -> Result<()> {
        for (v, c) in values.iter_mut().zip(&self.columns) {
            if let Column::Conn { from, gain } = c {
                *v = gain * self.units[from.0].out_vals[from.1];
            }
        }
        let t = self.time();
        let mut buf = Vec::new();
        for (u, ty, vrs, pos) in &self.groups {
            buf.resize(pos.len(), 0.0);
            let unit = &mut self.units[*u];
            unit.fmu.get_values(*ty, vrs, &mut buf).map_err(|e| fail(t, &unit.name, e))?;
            for (p, &x) in pos.iter().zip(&buf) {
                if let Some(p) = p {
                    values[*p] = x;
                }
            }
        }
        Ok(())
    }

    /// Set the inputs of unit `u` from the current outputs.
    fn gather(&mut self, u: usize) {
        for &c in &self.incoming[u] {
            let c = &self.conns[c];
            let x = c.gain * self.units[c.from.0].out_vals[c.from.1];
            self.units[u].in_vals[c.to.1] = x;
        }
    }

    /// The first failure among `units` (in unit order), as a simulation error at `t`.
    fn check_failures(&mut self, t: f64) -> Result<()> {
        for u in &mut self.units {
            if let Some(e) = u.failed.take() {
                return Err(fail(t, &u.name, e));
            }
        }
        Ok(())
    }

    /// One communication step from t_k to t_{k+1}.
    fn step_once(&mut self, parallel: bool) -> Result<()> {
        let h = match self.last_step {
            Some(rest) if self.k + 1 == step_count(self.stop_time, self.step) => rest,
            _ => self.step,
        };
        let t = self.time();
        match self.algorithm {
            Algorithm::Jacobi => {
                for c in &self.conns {
                    let x = c.gain * self.units[c.from.0].out_vals[c.from.1];
                    self.units[c.to.0].in_vals[c.to.1] = x;
                }
                if parallel {
                    self.units.par_iter_mut().filter(|u| !u.in_loop).for_each(|u| u.step(t, h));
                } else {
                    for u in self.units.iter_mut().filter(|u| !u.in_loop) {
                        u.step(t, h);
                    }
                }
                self.check_failures(t)?;
                for l in 0..self.loops.len() {
                    self.iterate(l, t, h)?;
                }
            }
            Algorithm::GaussSeidel => {
                for s in 0..self.order.len() {
                    match self.order[s] {
                        Stage::Unit(u) => {
                            self.gather(u);
                            self.units[u].step(t, h);
                            if let Some(e) = self.units[u].failed.take() {
                                return Err(fail(t, &self.units[u].name, e));
                            }
                        }
                        Stage::Loop(l) => {
                            for m in 0..self.loops[l].members.len() {
                                self.gather(self.loops[l].members[m]);
                            }
                            self.iterate(l, t, h)?;
                        }
                    }
                }
            }
        }
        self.k += 1;
        Ok(())
    }

    /// Fixed-point iteration with rollback over the step [t, t + h] of loop `l`, whose
    /// members' inputs have been gathered (the initial guess). Jacobi: every member steps
    /// with the previous guess; Gauss-Seidel: in order, each with the outputs of the members
    /// already stepped in this iteration.
    fn iterate(&mut self, l: usize, t: f64, h: f64) -> Result<()> {
        let members = self.loops[l].members.clone();
        let internal = self.loops[l].conns.clone();
        let gs = self.algorithm == Algorithm::GaussSeidel;
        for &m in &members {
            let u = &mut self.units[m];
            u.fmu.save_state().map_err(|e| fail(t, &u.name, e))?;
        }
        let mut residual = f64::INFINITY;
        for it in 1..=self.max_iterations {
            self.iterations += 1;
            if it > 1 {
                for &m in &members {
                    let u = &mut self.units[m];
                    u.fmu.restore_state().map_err(|e| fail(t, &u.name, e))?;
                }
            }
            for &m in &members {
                if gs {
                    for &c in &internal {
                        let c = &self.conns[c];
                        if c.to.0 == m {
                            let x = c.gain * self.units[c.from.0].out_vals[c.from.1];
                            self.units[m].in_vals[c.to.1] = x;
                        }
                    }
                }
                self.units[m].step(t, h);
                if let Some(e) = self.units[m].failed.take() {
                    return Err(fail(t, &self.units[m].name, e));
                }
            }
            residual = 0.0f64;
            for &c in &internal {
                let c = &self.conns[c];
                let new = c.gain * self.units[c.from.0].out_vals[c.from.1];
                let used = &mut self.units[c.to.0].in_vals[c.to.1];
                residual = residual.max((new - *used).abs() / new.abs().max(1.0));
                *used = new;
            }
            if residual <= self.tolerance {
                return Ok(());
            }
        }
        let names: Vec<&str> = members.iter().map(|&u| self.units[u].name.as_str()).collect();
        Err(Error::Simulation {
            time: t,
            component: names.join(", "),
            message: format!(
                "the algebraic loop {} did not converge in {} iterations (relative residual {residual:.3e} > tolerance {})",
                self.loops[l].text, self.max_iterations, self.tolerance
            ),
        })
    }
}

/// Initialization: in initialization mode, set every connected input to gain × its source
/// output, sweeping until the outputs read no longer change (at most one sweep per FMU,
/// plus one), so that an input starts from its source's initial value rather than its own
/// start value; then exit initialization mode and read the connected outputs.
fn initialize(units: &mut [Unit], conns: &[Conn]) -> Result<()> {
    let bad = |u: &Unit, e: FmiError| Error::invalid(format!("fmus.{}", u.name), e.to_string());
    if !conns.is_empty() {
        for u in units.iter_mut() {
            // Array inputs of which only some elements are connected keep the others' values.
            let Unit { fmu, in_io, .. } = u;
            if let Err(e) = in_io.load(fmu) {
                return Err(bad(u, e));
            }
        }
        for sweep in 0..=units.len() {
            let mut changed = sweep == 0;
            for u in units.iter_mut() {
                let before = u.out_vals.clone();
                let Unit { fmu, out_io, out_vals, .. } = u;
                if let Err(e) = out_io.get(fmu, out_vals) {
                    return Err(bad(u, e));
                }
                changed |= before != u.out_vals;
            }
            if !changed {
                break;
            }
            for c in conns {
                let x = c.gain * units[c.from.0].out_vals[c.from.1];
                units[c.to.0].in_vals[c.to.1] = x;
            }
            for u in units.iter_mut() {
                let Unit { fmu, in_io, in_vals, .. } = u;
                if let Err(e) = in_io.set(fmu, in_vals) {
                    return Err(bad(u, e));
                }
            }
        }
    }
    for u in units.iter_mut() {
        let Unit { fmu, out_io, out_vals, .. } = u;
        let r = fmu.exit_initialization().and_then(|()| out_io.get(fmu, out_vals));
        if let Err(e) = r {
            return Err(bad(u, e));
        }
    }
    Ok(())
}

/// An FMU failure at time `t` as a simulation error (exit code 1).
fn fail(t: f64, name: &str, e: FmiError) -> Error {
    Error::Simulation { time: t, component: name.to_string(), message: e.to_string() }
}

/// Unpack and instantiate FMU `name` of `fmus`, set its start values and enter
/// initialization mode.
fn load_unit(name: &str, spec: &Value, base: &Path, index: usize) -> Result<Unit> {
    // Between FMUs, a stop request (SIGINT/SIGTERM in the CLI) ends the load.
    stiction_framework::cancel::check()?;
    let at = format!("fmus.{name}");
    if name.is_empty() || name.contains('.') {
        return Err(Error::invalid(&at, "an FMU name must be non-empty and contain no '.'"));
    }
    let m = object(spec, &at)?;
    only_keys(m, &at, &["path", "parameters", "preload", "isolation", "call_timeout"])?;
    let file = match m.get("path") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) => {
            return Err(Error::invalid(format!("{at}.path"), format!("expected the path of an .fmu file, got {v}")))
        }
        None => return Err(Error::invalid(format!("{at}.path"), "missing: the .fmu file, relative to this JSON file")),
    };
    let full = base.join(&file);
    let shown = full.display().to_string();
    let archive = Archive::shared(&full, &shown).map_err(|e| Error::invalid(format!("{at}.path"), e.to_string()))?;
    let md = archive.description.clone();
    if md.co_simulation.is_none() {
        return Err(Error::invalid(
            format!("{at}.path"),
            format!(
                "{shown} declares no Co-Simulation interface (it has: {}); an FMU-only system steps Co-Simulation FMUs",
                interfaces(&md)
            ),
        ));
    }
    let structure =
        read_structure(&archive.xml, &md).map_err(|e| Error::invalid(format!("{at}.path"), format!("{shown}: {e}")))?;
    let mut starts = Vec::new();
    match m.get("parameters") {
        None => {}
        Some(Value::Object(p)) => {
            for (k, v) in p {
                let pat = format!("{at}.parameters.{k}");
                let Some(i) = md.find(k) else {
                    return Err(Error::invalid(
                        pat,
                        format!(
                            "{shown} has no variable '{k}'{} (parameters: {}; inputs: {})",
                            stiction_framework::error::suggestion(k, md.variables.iter().map(|v| v.name.as_str())),
                            md.names_with(Causality::Parameter),
                            md.names_with(Causality::Input)
                        ),
                    ));
                };
                let values = stiction_fmi_import::start_values(&md, i, v, &pat)?;
                let var = &md.variables[i];
                starts.push((pat, var.ty, var.vr, values));
            }
        }
        Some(v) => {
            return Err(Error::invalid(
                format!("{at}.parameters"),
                format!("expected an object {{\"name\": value}}, got {v}"),
            ))
        }
    }
    let err = |e: FmiError| stiction_fmi_import::load_error(&at, e);
    let libs = preload_list(m.get("preload"), base, &format!("{at}.preload"))?;
    let isolation = stiction_fmi_import::isolation_of(m.get("isolation"), m.get("call_timeout"), &at)?;
    let child_libs = if isolation == Isolation::None {
        stiction_fmi_import::preload(&libs).map_err(|e| Error::invalid(format!("{at}.preload"), e))?;
        &[][..]
    } else {
        &libs[..]
    };
    let mut fmu =
        Instance::with_isolation(archive, Interface::CoSimulation, name, &isolation, child_libs).map_err(err)?;
    for (pat, ty, vr, x) in starts {
        fmu.set_values(ty, &[vr], &x).map_err(|e| stiction_fmi_import::load_error(&pat, e))?;
    }
    fmu.enter_initialization(0.0).map_err(err)?;
    Ok(Unit {
        name: name.to_string(),
        fmu,
        structure,
        priority: index,
        in_vars: Vec::new(),
        in_elems: Vec::new(),
        in_vals: Vec::new(),
        in_io: Io::default(),
        out_vars: Vec::new(),
        out_elems: Vec::new(),
        out_vals: Vec::new(),
        out_io: Io::default(),
        in_loop: false,
        failed: None,
        stop: None,
    })
}

type Columns = (f64, Vec<String>, Vec<Column>, Vec<(usize, VarType, Vec<u32>, Vec<Option<usize>>)>);

/// `"output"`: the interval (≥ the step, default every step) and the signals
/// (`["fmu.var", ...]` or `{"label": "fmu.var"}`), checked against the FMUs.
fn output_columns(out: Option<&Value>, units: &[Unit], conns: &[Conn], step: f64) -> Result<Columns> {
    let Some(out) = out else {
        return Ok((step, Vec::new(), Vec::new(), Vec::new()));
    };
    let m = object(out, "output")?;
    only_keys(m, "output", &["interval", "signals"])?;
    let interval = positive(m, "output", "interval")?.unwrap_or(step);
    if interval < step * (1.0 - 1e-9) {
        return Err(Error::invalid("output.interval", format!("must be at least the step {step} s, got {interval}")));
    }
    let signals: Vec<(String, String, String)> = match m.get("signals") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let at = format!("output.signals[{i}]");
                s.as_str()
                    .map(|r| (r.to_string(), r.to_string(), at.clone()))
                    .ok_or_else(|| Error::invalid(at, "expected \"fmu.variable\""))
            })
            .collect::<Result<_>>()?,
        Some(Value::Object(o)) => o
            .iter()
            .map(|(k, s)| {
                let at = format!("output.signals.{k}");
                s.as_str()
                    .map(|r| (k.clone(), r.to_string(), at.clone()))
                    .ok_or_else(|| Error::invalid(at, "expected \"fmu.variable\""))
            })
            .collect::<Result<_>>()?,
        Some(v) => return Err(Error::invalid("output.signals", format!("expected a list or an object, got {v}"))),
    };
    let mut labels = Vec::new();
    let mut columns = Vec::new();
    let mut groups: Vec<ReadGroup> = Vec::new();
    for (label, r, at) in signals {
        let Some((fmu, var)) = r.split_once('.') else {
            return Err(Error::invalid(at, format!("expected \"fmu.variable\", got \"{r}\"")));
        };
        let Some(u) = units.iter().position(|u| u.name == fmu) else {
            let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
            return Err(Error::invalid(at, format!("unknown FMU '{fmu}' (the FMUs: {})", names.join(", "))));
        };
        let md = &units[u].fmu.archive.description;
        // "y" or, for an FMI 3.0 array, "y[i]" (0-based) or "y" for every element.
        let (i, elem) = match md.find(var) {
            Some(i) => (Some(i), None),
            None => match var.strip_suffix(']').and_then(|x| x.split_once('[')) {
                Some((base, idx)) => (md.find(base), Some(idx.trim().parse::<usize>().ok())),
                None => (None, None),
            },
        };
        let Some(i) = i else {
            return Err(Error::invalid(
                at,
                format!(
                    "{} ('{fmu}') has no variable '{var}'{} (outputs: {})",
                    units[u].fmu.label,
                    stiction_framework::error::suggestion(var, md.variables.iter().map(|v| v.name.as_str())),
                    md.names_with(Causality::Output)
                ),
            ));
        };
        let n = stiction_fmi_import::readable(md, i, Interface::CoSimulation)
            .map_err(|e| Error::invalid(&at, format!("{e}: it cannot be read")))?;
        let v = &md.variables[i];
        let elems: Vec<usize> = match elem {
            None if v.dimensions.is_empty() => vec![0],
            None => (0..n).collect(),
            Some(Some(e)) if e < n && !v.dimensions.is_empty() => vec![e],
            Some(_) => {
                return Err(Error::invalid(
                    at,
                    format!(
                        "'{var}': '{}' is {}",
                        v.name,
                        if v.dimensions.is_empty() {
                            "not an array".to_string()
                        } else {
                            format!("an array of {n} elements (indices 0 to {})", n - 1)
                        }
                    ),
                ))
            }
        };
        for &e in &elems {
            let el = (!v.dimensions.is_empty()).then_some(e);
            let conn = (0..units[u].in_vars.len())
                .find(|&s| units[u].in_vars[s] == i && units[u].in_elems[s] == el)
                .and_then(|slot| conns.iter().find(|c| c.to == (u, slot)));
            let col = columns.len();
            match conn {
                Some(c) => columns.push(Column::Conn { from: c.from, gain: c.gain }),
                None => {
                    columns.push(Column::Read);
                    let mut pos = vec![None; if v.dimensions.is_empty() { 1 } else { n }];
                    pos[e] = Some(col);
                    match groups.iter_mut().find(|g| g.0 == u && g.1 == v.ty) {
                        Some(g) => {
                            g.2.push(v.vr);
                            g.3.extend(pos);
                        }
                        None => groups.push((u, v.ty, vec![v.vr], pos)),
                    }
                }
            }
            labels.push(if elem.is_none() && !v.dimensions.is_empty() {
                format!("{label}[{e}]")
            } else {
                label.clone()
            });
        }
    }
    Ok((interval, labels, columns, groups))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a top-level `fmus` key makes an FMU-only system, however it is spelt, and only
    /// in a file that reads as JSON.
    #[test]
    fn fmu_system_detection() {
        assert!(is_fmu_system(r#"{"fmus": {}, "solver": 1}"#));
        assert!(is_fmu_system(r#"{"\u0066mus": {}}"#));
        assert!(is_fmu_system(r#"{"f\u006dus": {"a": "\u00e9"}}"#));
        assert!(!is_fmu_system(r#"{"components": {"fmus": {}}}"#));
        assert!(!is_fmu_system(r#"{"components": {"\u0066mus": {}}}"#));
        assert!(!is_fmu_system(r#"{"fmus": {}, }"#));
        assert!(!is_fmu_system(r#"{"solver": {}, "components": {}}"#));
        assert!(!is_fmu_system(r#"[{"fmus": {}}]"#));
    }

    /// Exactly the connections whose every source value the target can hold are accepted.
    #[test]
    fn connectable_types() {
        use VarType::*;
        for from in VarType::NUMERIC {
            assert!(connectable(from, Float64, 2.5).is_ok() && connectable(from, Float32, 1.0).is_ok());
        }
        for (from, to) in
            [(Int8, Int16), (UInt8, Int16), (UInt16, Int32), (UInt32, Int64), (Boolean, UInt8), (Int64, Int64)]
        {
            assert!(connectable(from, to, 1.0).is_ok(), "{from:?} -> {to:?}");
        }
        for (from, to) in
            [(Int64, Int16), (Int8, UInt8), (UInt64, Int64), (Float64, Int32), (Float32, Int64), (Int8, Boolean)]
        {
            assert!(connectable(from, to, 1.0).is_err(), "{from:?} -> {to:?}");
        }
        assert!(connectable(Int8, Int16, 2.0).is_err() && connectable(Boolean, Boolean, -1.0).is_err());
        assert!(connectable(Boolean, Boolean, 1.0).is_ok());
    }
}
