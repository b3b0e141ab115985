//! An FMU-only system file (`"fmus"`, `"master"`) as a network of signal blocks: the same
//! FMUs as `"type": "fmu", "role": "signal"` components, the same connections as signal
//! connections, `master` as the solver's block options (`"blocks"`, `"order"`, `"loop"`).
//! The engine (framework/src/stepper/bus.rs) then steps them exactly as the master of this
//! crate does, and writes the same rows bit for bit (tests/fmu_master.rs compares both).
//!
//! Whole arrays connected to whole arrays become one connection per element (`"a.y[0]"` →
//! `"b.u[0]"`, …). A file the master would refuse is left to the master, so that its errors
//! keep naming the paths of the FMU-only format.

use crate::{connectable, is_fmu_system};
use serde_json::{json, Map, Value};
use std::path::Path;
use stiction_fmi_schema::{Archive, Causality, Interface, VarType};

/// What becomes of an FMU-only system file.
#[derive(Debug)]
pub enum Translated {
    /// The equivalent network system.
    Network(Value),
    /// Run by the FMU-only master, for the reason given.
    Master(String),
}

/// Translate the FMU-only system `v` (FMU paths relative to `base`) into a network of
/// signal blocks, or say why the master runs it.
pub fn translate(v: &Value, base: &Path) -> Translated {
    match try_translate(v, base) {
        Ok(net) => Translated::Network(net),
        Err(why) => Translated::Master(why),
    }
}

/// Whether `text` is an FMU-only system that translates into a network; the network then.
pub fn translate_text(text: &str, base: &Path) -> Option<Value> {
    if !is_fmu_system(text) {
        return None;
    }
    let v: Value = serde_json::from_str(text).ok()?;
    match translate(&v, base) {
        Translated::Network(n) => Some(n),
        Translated::Master(_) => None,
    }
}

fn obj<'a>(v: Option<&'a Value>, what: &str) -> Result<&'a Map<String, Value>, String> {
    v.and_then(Value::as_object).ok_or_else(|| format!("{what} is missing or not an object"))
}

fn keys(m: &Map<String, Value>, known: &[&str], what: &str) -> Result<(), String> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("{what} has the unknown key '{k}'")),
        None => Ok(()),
    }
}

fn positive(m: &Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    match m.get(key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x > 0.0 => Ok(Some(x)),
            _ => Err(format!("'{key}' is not a positive number")),
        },
    }
}

/// One FMU's variables as the translation needs them.
struct Fmu {
    name: String,
    archive: std::sync::Arc<Archive>,
}

impl Fmu {
    /// The variable `var` ("x", an FMI 2.0 name with brackets, or "y[2]", an element of an
    /// FMI 3.0 array, row-major) of causality `want` (any readable one if `None`): its type,
    /// its element count (1 for a scalar or an element, n for a whole array) and whether it
    /// is a whole array.
    fn end(&self, var: &str, want: Option<Causality>) -> Result<(VarType, usize, bool), String> {
        let md = &self.archive.description;
        let (i, elem) = match md.find(var) {
            Some(i) => (i, None),
            None => {
                let (base, idx) = var
                    .strip_suffix(']')
                    .and_then(|x| x.split_once('['))
                    .ok_or_else(|| format!("'{}.{var}' is not a variable of the FMU", self.name))?;
                let i = md.find(base.trim()).ok_or_else(|| format!("'{}.{base}' is not a variable", self.name))?;
                let e: usize = idx.trim().parse().map_err(|_| format!("'{var}': '{idx}' is not an index"))?;
                (i, Some(e))
            }
        };
        let v = &md.variables[i];
        if want.is_some_and(|w| v.causality != w) {
            return Err(format!("'{}.{var}' does not have the causality the connection needs", self.name));
        }
        let n = stiction_fmi_import::readable(md, i, Interface::CoSimulation)?;
        match elem {
            None => Ok((v.ty, n, !v.dimensions.is_empty())),
            Some(e) if !v.dimensions.is_empty() && e < n => Ok((v.ty, 1, false)),
            Some(_) => Err(format!("'{}.{var}' is not an element of an array", self.name)),
        }
    }
}

fn try_translate(v: &Value, base: &Path) -> Result<Value, String> {
    let top = v.as_object().ok_or("the file is not an object")?;
    keys(top, &["$schema", "name", "description", "master", "fmus", "connections", "output"], "the file")?;
    for k in ["name", "description"] {
        if top.get(k).is_some_and(|x| !x.is_string()) {
            return Err(format!("'{k}' is not a string"));
        }
    }
    let master = obj(top.get("master"), "master")?;
    keys(master, &["algorithm", "step", "stop_time", "threads", "order", "loop"], "master")?;
    let blocks = match master.get("algorithm").map(Value::as_str) {
        None | Some(Some("jacobi")) => "jacobi",
        Some(Some("gauss-seidel")) => "gauss-seidel",
        Some(_) => return Err("master.algorithm is not \"jacobi\" or \"gauss-seidel\"".into()),
    };
    let step = positive(master, "step")?.ok_or("master.step is missing")?;
    let stop_time = positive(master, "stop_time")?.ok_or("master.stop_time is missing")?;
    if step > stop_time {
        return Err("master.step is longer than the stop time".into());
    }
    let mut solver = json!({"method": "euler", "step": step, "stop_time": stop_time, "blocks": blocks});
    if let Some(t) = master.get("threads") {
        match t.as_u64() {
            Some(n) if n >= 1 && stiction_framework::system::check_threads(n as usize, "master.threads").is_ok() => {
                solver["threads"] = json!(n)
            }
            _ => return Err("master.threads is not a valid thread count".into()),
        }
    }
    if let Some(l) = master.get("loop") {
        let l = obj(Some(l), "master.loop")?;
        keys(l, &["tolerance", "max_iterations"], "master.loop")?;
        let mut spec = Map::new();
        if let Some(t) = positive(l, "tolerance")? {
            spec.insert("tolerance".into(), json!(t));
        }
        if let Some(m) = l.get("max_iterations") {
            match m.as_u64() {
                Some(n) if n >= 1 => spec.insert("max_iterations".into(), json!(n)),
                _ => return Err("master.loop.max_iterations is not a whole number >= 1".into()),
            };
        }
        solver["loop"] = Value::Object(spec);
    }
    // The FMUs.
    let fmus = obj(top.get("fmus"), "fmus")?;
    if fmus.is_empty() {
        return Err("fmus is empty".into());
    }
    let mut units = Vec::new();
    let mut components = Map::new();
    for (name, spec) in fmus {
        if name.is_empty() || name.contains('.') || name == "ground" {
            return Err(format!("the FMU name '{name}' is not a component name"));
        }
        let m = obj(Some(spec), "an FMU")?;
        keys(m, &["path", "parameters", "preload", "isolation", "call_timeout"], &format!("fmus.{name}"))?;
        let file = m.get("path").and_then(Value::as_str).filter(|s| !s.is_empty()).ok_or("an FMU has no path")?;
        let full = base.join(file);
        let archive = Archive::shared(&full, &full.display().to_string()).map_err(|e| e.to_string())?;
        let md = &archive.description;
        if md.co_simulation.is_none() {
            return Err(format!("'{name}' has no Co-Simulation interface"));
        }
        let mut c = m.clone();
        c.insert("type".into(), json!("fmu"));
        c.insert("role".into(), json!("signal"));
        c.insert("interface".into(), json!("cs"));
        components.insert(name.clone(), Value::Object(c));
        units.push(Fmu { name: name.clone(), archive });
    }
    let unit = |end: &str| -> Result<(&Fmu, String), String> {
        let (fmu, var) = end.split_once('.').ok_or_else(|| format!("'{end}' is not \"fmu.variable\""))?;
        let u = units.iter().find(|u| u.name == fmu).ok_or_else(|| format!("'{fmu}' is not an FMU of the file"))?;
        Ok((u, var.to_string()))
    };
    if let Some(o) = master.get("order") {
        let list = o.as_array().ok_or("master.order is not a list")?;
        let mut order = Vec::new();
        for n in list {
            let n = n.as_str().ok_or("master.order holds a non-string")?;
            if !units.iter().any(|u| u.name == n) || order.contains(&n) {
                return Err(format!("master.order names '{n}' wrongly"));
            }
            order.push(n);
        }
        solver["order"] = json!(order);
    }
    // The connections: scalar outputs to scalar inputs, each input fed once.
    let list = match top.get("connections") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err("connections is not a list".into()),
    };
    let mut fed: Vec<(String, String, f64)> = Vec::new(); // (input, source, gain)
    let mut conns = Vec::new();
    for c in &list {
        let m = obj(Some(c), "a connection")?;
        keys(m, &["from", "to", "gain"], "a connection")?;
        let from = m.get("from").and_then(Value::as_str).ok_or("a connection has no \"from\"")?;
        let to = m.get("to").and_then(Value::as_str).ok_or("a connection has no \"to\"")?;
        let gain = match m.get("gain") {
            None => 1.0,
            Some(g) => g.as_f64().filter(|g| g.is_finite()).ok_or("a gain is not a finite number")?,
        };
        let (fu, fv) = unit(from)?;
        let (tu, tv) = unit(to)?;
        let (ft, fnum, fwhole) = fu.end(&fv, Some(Causality::Output))?;
        let (tt, tnum, twhole) = tu.end(&tv, Some(Causality::Input))?;
        connectable(ft, tt, gain)?;
        // A whole array joins a whole array of as many elements, element by element.
        let pairs: Vec<(String, String)> = match (fwhole, twhole) {
            (false, false) => vec![(from.to_string(), to.to_string())],
            (true, true) if fnum == tnum => (0..fnum).map(|e| (format!("{from}[{e}]"), format!("{to}[{e}]"))).collect(),
            _ => return Err(format!("'{from}' -> '{to}' joins arrays of different sizes or an array and a scalar")),
        };
        for (f, t) in pairs {
            if fed.iter().any(|x| x.0 == t) {
                return Err(format!("'{t}' is connected twice"));
            }
            let mut link = json!({"from": f, "to": t});
            if m.contains_key("gain") {
                link["gain"] = json!(gain);
            }
            conns.push(link);
            fed.push((t, f, gain));
        }
    }
    // The output: scalar outputs, or connected inputs read as their source (gain 1).
    let mut output = Map::new();
    if let Some(out) = top.get("output") {
        let m = obj(Some(out), "output")?;
        keys(m, &["interval", "signals"], "output")?;
        if let Some(i) = positive(m, "interval")? {
            if i < step * (1.0 - 1e-9) {
                return Err("output.interval is shorter than the step".into());
            }
            output.insert("interval".into(), json!(i));
        }
        let signals: Vec<(String, String)> = match m.get("signals") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|s| s.as_str().map(|s| (s.to_string(), s.to_string())).ok_or("an output signal is not a string"))
                .collect::<Result<_, _>>()?,
            Some(Value::Object(o)) => o
                .iter()
                .map(|(k, s)| s.as_str().map(|s| (k.clone(), s.to_string())).ok_or("an output signal is not a string"))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("output.signals is not a list or an object".into()),
        };
        let mut cols = Map::new();
        for (label, sig) in signals {
            let (u, var) = unit(&sig)?;
            // Any readable variable: an output, a connected input (gain × its source, as the
            // master reads it), or another variable read when the row is written.
            u.end(&var, None)?;
            let read = sig.clone();
            if cols.insert(label.clone(), json!(read)).is_some() {
                return Err(format!("the output label '{label}' is used twice"));
            }
        }
        output.insert("signals".into(), Value::Object(cols));
    }
    let mut net = Map::new();
    for k in ["$schema", "name", "description"] {
        if let Some(x) = top.get(k) {
            if k != "$schema" {
                net.insert(k.into(), x.clone());
            }
        }
    }
    net.insert("solver".into(), solver);
    net.insert("components".into(), Value::Object(components));
    net.insert("connections".into(), Value::Array(conns));
    if top.contains_key("output") {
        net.insert("output".into(), Value::Object(output));
    }
    Ok(Value::Object(net))
}
