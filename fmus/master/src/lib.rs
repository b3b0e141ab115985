#![doc = include_str!("../README.md")]
//!
//! ## The format
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
//! Such a file is one spelling of a network of signal blocks: [`translate`] checks it
//! against the FMUs' model descriptions (keys, causalities, types that can carry the values,
//! array elements, readable output columns; every error names its JSON path in the file) and
//! writes the network the engine steps (framework/src/stepper/bus.rs): each FMU a
//! `"type": "fmu", "role": "signal"` component, each connection a signal connection (a whole
//! array element by element), `master` the solver's block options (`algorithm` as `blocks`,
//! `order`, `loop`, `threads`), Euler with T = h. The engine steps the blocks as this crate's
//! own master did (Jacobi or Gauss-Seidel, algebraic loops by fixed-point iteration with
//! rollback, termination requests, a shortened last step): the rows are the same bit for bit
//! (compared system by system before the master's stepping was removed). What stays here is
//! what is specific to the format: its keys and checks, and the file's paths in the engine's
//! errors ([`Translation::error`]).
#![deny(unsafe_code)]

use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use stiction_fmi_import::{interfaces, preload_list};
use stiction_fmi_schema::{Archive, Causality, Interface, VarType};
use stiction_framework::{Error, Result};

/// How the blocks of an FMU-only system step (`master.algorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// All FMUs step from the values of the previous communication point.
    Jacobi,
    /// The FMUs step in a topological order, each with the outputs of those already stepped.
    GaussSeidel,
}

/// True if `text` is JSON with a top-level `"fmus"` object: an FMU-only system.
pub fn is_fmu_system(text: &str) -> bool {
    // A top-level key `fmus` is written either as the bytes `fmus` or with a `\u` escape;
    // a file with neither (as a network system usually is) is decided by two vectorised
    // searches (memchr's, 256 bits wide where the processor has them: chain-100k's 36 MB
    // in 0.77 of the time of `str::contains`) instead of a second parse of the whole file.
    let escaped = || memchr::memchr_iter(b'\\', text.as_bytes()).any(|i| text.as_bytes().get(i + 1) == Some(&b'u'));
    if memchr::memmem::find(text.as_bytes(), b"fmus").is_none() && !escaped() {
        return false;
    }
    // Only the top-level keys: the values are checked but not built (building a `Value` of
    // chain-10k cost a quarter of its load time).
    type TopLevel<'a> = std::collections::HashMap<String, &'a serde_json::value::RawValue>;
    serde_json::from_str::<TopLevel>(text).is_ok_and(|top| top.contains_key("fmus"))
}

/// One FMU of the file: its name, its archive and its label as an instance names it.
struct Unit {
    name: String,
    archive: Arc<Archive>,
    label: String,
}

/// An FMU-only file as a network of signal blocks.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The network system.
    pub network: Value,
    /// Per connection of the network, the file's connection it comes from.
    conn_of: Vec<usize>,
}

impl Translation {
    /// The network as JSON text.
    pub fn text(&self) -> String {
        self.network.to_string()
    }

    /// An error the engine reports about the network, with the paths of the FMU-only file:
    /// `components.x` is `fmus.x`, `solver.blocks` is `master.algorithm`, `solver.*` is
    /// `master.*`, and `connections[i]` the file's connection it was made from.
    pub fn error(&self, e: Error) -> Error {
        match e {
            Error::InFile { file, inner } => Error::InFile { file, inner: Box::new(self.error(*inner)) },
            Error::Invalid { path, message } => Error::Invalid { path: self.path(&path), message },
            other => other,
        }
    }

    fn path(&self, p: &str) -> String {
        if let Some(rest) = p.strip_prefix("components.") {
            return format!("fmus.{rest}");
        }
        if let Some(rest) = p.strip_prefix("solver.blocks") {
            return format!("master.algorithm{rest}");
        }
        if let Some(rest) = p.strip_prefix("solver.") {
            return format!("master.{rest}");
        }
        if let Some(rest) = p.strip_prefix("connections[") {
            if let Some((i, tail)) = rest.split_once(']') {
                if let Some(&orig) = i.parse::<usize>().ok().and_then(|i| self.conn_of.get(i)) {
                    return format!("connections[{orig}]{tail}");
                }
            }
        }
        p.to_string()
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
    let md = &units[u].archive.description;
    let label = &units[u].label;
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

/// Check the FMU-only system `v` (FMU paths relative to `base`; `default_name` if it has no
/// `name`) and translate it into the network of signal blocks the engine steps. Errors name
/// the JSON path in the file.
pub fn translate(v: &Value, default_name: &str, base: &Path) -> Result<Translation> {
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
        let most = stiction_framework::system::MAX_LOOP_ITERATIONS;
        if max_iterations > most {
            return Err(Error::invalid(
                "master.loop.max_iterations",
                format!("expected a whole number from 1 to {most}, got {max_iterations}"),
            ));
        }
    }
    // fmus
    let fmus = object(top.get("fmus").ok_or_else(|| Error::invalid("fmus", "missing"))?, "fmus")?;
    if fmus.is_empty() {
        return Err(Error::invalid("fmus", "no FMUs"));
    }
    let mut units = Vec::with_capacity(fmus.len());
    for (name, spec) in fmus {
        units.push(check_unit(name, spec, base)?);
    }
    // master.order (after the FMUs are known)
    let mut order = Vec::new();
    if let Some(o) = master.get("order") {
        let list = o
            .as_array()
            .ok_or_else(|| Error::invalid("master.order", format!("expected a list of FMU names, got {o}")))?;
        for (p, n) in list.iter().enumerate() {
            let at = format!("master.order[{p}]");
            let n = n.as_str().ok_or_else(|| Error::invalid(&at, format!("expected an FMU name, got {n}")))?;
            if !units.iter().any(|u| u.name == n) {
                let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
                return Err(Error::invalid(at, format!("unknown FMU '{n}' (the FMUs: {})", names.join(", "))));
            }
            if order.contains(&n) {
                return Err(Error::invalid(at, format!("'{n}' is listed twice")));
            }
            order.push(n);
        }
    }
    // connections
    let mut conns: Vec<Value> = Vec::new();
    let mut conn_of: Vec<usize> = Vec::new();
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
            Some(g) => g
                .as_f64()
                .filter(|g| g.is_finite())
                .ok_or_else(|| Error::invalid(format!("{at}.gain"), format!("expected a finite number, got {g}")))?,
        };
        let ty = |e: &End| units[e.unit].archive.description.variables[e.var].ty;
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
                    format!("'{whole}' is a whole array and the other end is not; connect one element ('{whole}[0]')"),
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
            let name = |s: &str, e: Option<usize>, whole: bool| match e {
                Some(e) if whole => format!("{s}[{e}]"),
                _ => s.to_string(),
            };
            let mut link = json!({
                "from": name(from_s, fe, from.elem.is_none()),
                "to": name(to_s, te, to.elem.is_none())
            });
            if m.contains_key("gain") {
                link["gain"] = json!(gain);
            }
            conns.push(link);
            conn_of.push(i);
        }
    }
    let output = output_columns(top.get("output"), &units, step)?;
    // The network: the FMUs as signal blocks, `master` as the solver's block options.
    let mut solver = json!({
        "method": "euler", "step": step, "stop_time": stop_time,
        "blocks": if algorithm == Algorithm::GaussSeidel { "gauss-seidel" } else { "jacobi" }
    });
    if let Some(n) = threads {
        solver["threads"] = json!(n);
    }
    if !order.is_empty() {
        solver["order"] = json!(order);
    }
    solver["loop"] = json!({"tolerance": tolerance, "max_iterations": max_iterations});
    let mut components = Map::new();
    for (name, spec) in fmus {
        let mut c = spec.as_object().cloned().unwrap_or_default();
        c.insert("type".into(), json!("fmu"));
        c.insert("role".into(), json!("signal"));
        c.insert("interface".into(), json!("cs"));
        components.insert(name.clone(), Value::Object(c));
    }
    let mut network = json!({
        "name": name,
        "solver": solver,
        "components": components,
        "connections": conns
    });
    if let Some(o) = output {
        network["output"] = o;
    }
    if let Some(d) = top.get("description") {
        network["description"] = d.clone();
    }
    Ok(Translation { network, conn_of })
}

/// Check FMU `name` of `fmus` against its model description: its keys, its file, a
/// Co-Simulation interface, its start values and preload list; the FMU is instantiated
/// later, by the engine, as a signal block.
fn check_unit(name: &str, spec: &Value, base: &Path) -> Result<Unit> {
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
    let md = &archive.description;
    if md.co_simulation.is_none() {
        return Err(Error::invalid(
            format!("{at}.path"),
            format!(
                "{shown} declares no Co-Simulation interface (it has: {}); an FMU-only system steps Co-Simulation FMUs",
                interfaces(md)
            ),
        ));
    }
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
                stiction_fmi_import::start_values(md, i, v, &pat)?;
            }
        }
        Some(v) => {
            return Err(Error::invalid(
                format!("{at}.parameters"),
                format!("expected an object {{\"name\": value}}, got {v}"),
            ))
        }
    }
    preload_list(m.get("preload"), base, &format!("{at}.preload"))?;
    stiction_fmi_import::isolation_of(m.get("isolation"), m.get("call_timeout"), &at)?;
    let id = md.identifier(Interface::CoSimulation).unwrap_or(&md.model_name).to_string();
    let label = format!("FMU '{id}' ({})", archive.file);
    Ok(Unit { name: name.to_string(), archive, label })
}

/// `"output"`: the interval (≥ the step, default every step) and the signals
/// (`["fmu.var", ...]` or `{"label": "fmu.var"}`), checked against the FMUs.
fn output_columns(out: Option<&Value>, units: &[Unit], step: f64) -> Result<Option<Value>> {
    let Some(out) = out else {
        return Ok(None);
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
    let mut cols = Map::new();
    for (label, r, at) in signals {
        let Some((fmu, var)) = r.split_once('.') else {
            return Err(Error::invalid(at, format!("expected \"fmu.variable\", got \"{r}\"")));
        };
        let Some(u) = units.iter().position(|u| u.name == fmu) else {
            let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
            return Err(Error::invalid(at, format!("unknown FMU '{fmu}' (the FMUs: {})", names.join(", "))));
        };
        let md = &units[u].archive.description;
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
                    units[u].label,
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
        let _ = elems;
        if cols.insert(label.clone(), json!(r)).is_some() {
            return Err(Error::invalid(at, format!("the label '{label}' is used twice")));
        }
    }
    let mut o = Map::new();
    if m.contains_key("interval") {
        o.insert("interval".into(), json!(interval));
    }
    o.insert("signals".into(), Value::Object(cols));
    Ok(Some(Value::Object(o)))
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
