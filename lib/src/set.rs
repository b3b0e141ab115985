//! Parameter overrides: `--set comp.param=VALUE` applied to the JSON of a system before it
//! is read, so an override is checked exactly like the same value written in the file.
//!
//! A path names a component and a key inside it (`m.mass`, `m.init.v[0]`, `gear.law.F`,
//! `arm.links[1].mass`), or the solver and output settings (`solver.step`,
//! `solver.stop_time`, `output.interval`). `components.NAME.…` names a component
//! explicitly (for a component called `solver` or `output`). VALUE is read as JSON
//! (number, `true`, `[0, 1, 0]`, `{"type": "stribeck", …}`, `"quoted"`); anything that is not
//! JSON is taken as a bare string (`--set floor.law=coulomb`).

use serde_json::Value;
use std::fmt;

mod doc;
pub use doc::Doc;
use std::path::{Path, PathBuf};
use stiction_framework::system::System;
use stiction_framework::Error;

/// One step of a `--set` path: an object key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A parsed `--set` assignment: where in the system JSON and what value.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// The argument as given, for messages.
    pub arg: String,
    /// The path as written left of `=` (`m.init.v[0]`).
    pub name: String,
    /// The path from the top of the system JSON (`components`, `m`, `init`, `v`, 0).
    pub path: Vec<Segment>,
    pub value: Value,
}

/// A `--set` argument that cannot be applied. The message names the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetError {
    /// The `--set` argument as given.
    pub arg: String,
    pub message: String,
}

impl fmt::Display for SetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--set {}: {}", self.arg, self.message)
    }
}

impl std::error::Error for SetError {}

pub use stiction_framework::error::{closest as did_you_mean, suggestion};

/// Split `a.b[2].c` into segments.
fn parse_path(text: &str) -> Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    for part in text.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() {
            return Err(format!("empty name in '{text}'"));
        }
        out.push(Segment::Key(key.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(|| format!("missing ']' in '{text}'"))?;
            let inner = &rest[1..close];
            let i: usize = inner.parse().map_err(|_| format!("'[{inner}]' is not an array index in '{text}'"))?;
            out.push(Segment::Index(i));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected '{rest}' after ']' in '{text}'"));
            }
        }
    }
    Ok(out)
}

/// The JSON path of `segments` as the loader writes it in its errors (`components.m.init.v[0]`).
pub fn json_path(segments: &[Segment]) -> String {
    let mut s = String::new();
    for seg in segments {
        match seg {
            Segment::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Segment::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// Read `VALUE` as JSON, else as a bare string.
pub fn parse_value(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Parse `comp.param=VALUE` against the system JSON `doc` (to tell components from the
/// solver and output sections, and to suggest a component name).
pub fn parse_assignment(doc: &impl Editable, arg: &str) -> Result<Assignment, SetError> {
    let err = |m: String| SetError { arg: arg.to_string(), message: m };
    let (name, value) =
        arg.split_once('=').ok_or_else(|| err("expected NAME=VALUE, e.g. m.mass=2 or solver.step=1e-4".into()))?;
    let name = name.trim();
    let segs = parse_path(name).map_err(err)?;
    let value = parse_value(value);
    let path = resolve(doc, name, segs).map_err(err)?;
    Ok(Assignment { arg: arg.to_string(), name: name.to_string(), path, value })
}

/// Place a user path in the document: `solver.*`, `output.*`, `components.*`, `fmus.*` as
/// written, `name`/`description` at the top, anything else under `components`.
fn resolve(doc: &impl Editable, name: &str, segs: Vec<Segment>) -> Result<Vec<Segment>, String> {
    let Some(Segment::Key(first)) = segs.first() else { return Err(format!("'{name}' names nothing")) };
    let top = |k: &str| doc.has(k);
    match first.as_str() {
        "solver" | "output" | "master" => {
            if segs.len() < 2 {
                return Err(format!("give a key of '{first}', e.g. solver.step or output.interval"));
            }
            return Ok(segs);
        }
        "name" | "description" if segs.len() == 1 => return Ok(segs),
        "components" if top("components") => return Ok(segs),
        "fmus" if top("fmus") => return Ok(segs),
        _ => {}
    }
    // An FMU-only system: `fmu.var` sets a start value of that FMU.
    let section = if top("fmus") && !top("components") { "fmus" } else { "components" };
    if doc.has_member(section, first) == Some(false) {
        let names = doc.members(section).unwrap_or_default();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let hint = suggestion(first, names.iter().copied());
        let known = if hint.is_empty() { format!(" (components: {})", names.join(", ")) } else { hint };
        return Err(format!("no component '{first}'{known}"));
    }
    if segs.len() < 2 {
        return Err(format!("give a parameter of '{first}', e.g. {first}.mass"));
    }
    let mut path = vec![Segment::Key(section.to_string())];
    // An FMU of an FMU-only system: `gear.fu` is the start value `fmus.gear.parameters.fu`.
    let own = matches!(&segs[1], Segment::Key(k) if ["path", "parameters", "preload"].contains(&k.as_str()));
    if section == "fmus" && !own {
        path.push(segs[0].clone());
        path.push(Segment::Key("parameters".into()));
        path.extend(segs.into_iter().skip(1));
    } else {
        path.extend(segs);
    }
    Ok(path)
}

/// A system document assignments are resolved against and applied to: a `Value`, or the
/// text-backed [`Doc`] that parses only what an assignment touches.
pub trait Editable {
    /// Whether the top level has `key`.
    fn has(&self, key: &str) -> bool;
    /// The keys of the top-level object `section`; None if it is absent or not an object.
    fn members(&self, section: &str) -> Option<Vec<String>>;
    /// Whether the top-level object `section` has `name`; None if it is not an object.
    fn has_member(&self, section: &str, name: &str) -> Option<bool>;
    /// Apply a parsed assignment.
    fn apply(&mut self, a: &Assignment) -> Result<(), SetError>;
}

impl Editable for Value {
    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    fn members(&self, section: &str) -> Option<Vec<String>> {
        self.get(section).and_then(Value::as_object).map(|m| m.keys().cloned().collect())
    }
    fn has_member(&self, section: &str, name: &str) -> Option<bool> {
        self.get(section).and_then(Value::as_object).map(|m| m.contains_key(name))
    }
    fn apply(&mut self, a: &Assignment) -> Result<(), SetError> {
        apply_value(self, a)
    }
}

/// Apply one `--set` assignment to the system JSON `doc`. Missing objects on the way are
/// created (the loader then checks every key, so a misspelt one is reported like in a file).
pub fn apply_set(doc: &mut impl Editable, assignment: &str) -> Result<(), SetError> {
    let a = parse_assignment(doc, assignment)?;
    doc.apply(&a)
}

/// Apply a parsed assignment.
pub fn apply(doc: &mut impl Editable, a: &Assignment) -> Result<(), SetError> {
    doc.apply(a)
}

/// [`apply`] to a `Value`: walk `a.path` from the top, creating missing objects.
fn apply_value(doc: &mut Value, a: &Assignment) -> Result<(), SetError> {
    let err = |m: String| SetError { arg: a.arg.clone(), message: m };
    let mut here = doc;
    let mut walked: Vec<Segment> = Vec::new();
    let n = a.path.len();
    for (i, seg) in a.path.iter().enumerate() {
        let last = i + 1 == n;
        here = match seg {
            Segment::Key(k) => {
                if here.is_null() {
                    *here = Value::Object(Default::default());
                }
                let shown = json_path(&walked);
                let obj = here
                    .as_object_mut()
                    .ok_or_else(|| err(format!("{shown} is not an object, so it has no key '{k}'")))?;
                if last {
                    obj.insert(k.clone(), a.value.clone());
                    return Ok(());
                }
                obj.entry(k.clone()).or_insert(Value::Null)
            }
            Segment::Index(j) => {
                let shown = json_path(&walked);
                let arr = match here {
                    Value::Array(arr) => arr,
                    Value::Null => {
                        return Err(err(format!("{shown} is not set: give the whole array, e.g. {shown}=[…]")))
                    }
                    other => return Err(err(format!("{shown} is {other}, not an array"))),
                };
                let len = arr.len();
                let slot = arr
                    .get_mut(*j)
                    .ok_or_else(|| err(format!("index {j} is outside {shown}, which has {len} element(s)")))?;
                if last {
                    *slot = a.value.clone();
                    return Ok(());
                }
                slot
            }
        };
        walked.push(seg.clone());
    }
    Ok(())
}

/// Read a system from its JSON value, checked exactly like the file `file`; relative file
/// names (tables, FMUs) are taken from `base_dir`.
fn system_from_value(doc: Value, file: &Path, base_dir: &Path) -> stiction_framework::Result<System> {
    let text = doc.to_string();
    System::from_str(&text, file, base_dir, &crate::registry())
        .map_err(|e| without_position(e).in_file(file.display().to_string()))
}

/// Drop serde's ` at line 1 column N`: the text was made from a value, so the position
/// points nowhere the user can see (the JSON path says where).
pub fn without_position(e: Error) -> Error {
    match e {
        Error::Invalid { path, message } => {
            let cut = message
                .rfind(" at line ")
                .filter(|&i| message[i..].split_whitespace().count() == 5 && message[i..].contains(" column "));
            let message = match cut {
                Some(i) => message[..i].to_string(),
                None => message,
            };
            Error::Invalid { path, message }
        }
        other => other,
    }
}

/// The [`Doc`] of the text of `path`; for text that is not a JSON object, the error the
/// reader of a whole value, or else the loader, gives.
pub fn doc_of(path: &Path, text: &str) -> stiction_framework::Result<Doc> {
    let e = match Doc::parse(text) {
        Ok(doc) => return Ok(doc),
        Err(e) => e,
    };
    let value = parse_json(path, text)?;
    Err(not_an_object(value, path, &base_dir(path), &e))
}

/// Why the JSON `value` of `file`, which [`Doc::parse`] refused (`why`) as not an object,
/// is not a system: the loader's error, as for the same file read whole.
pub fn not_an_object(value: Value, file: &Path, base_dir: &Path, why: &serde_json::Error) -> Error {
    match system_from_value(value, file, base_dir) {
        Err(reference) => reference,
        Ok(_) => Error::invalid("(top level)", why.to_string()).in_file(file.display().to_string()),
    }
}

/// The JSON document `text` read from `path`.
fn parse_json(path: &Path, text: &str) -> stiction_framework::Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::invalid("(top level)", e.to_string()).in_file(path.display().to_string()))
}

/// The directory relative names in `path` are taken from.
pub fn base_dir(path: &Path) -> PathBuf {
    path.parent().filter(|d| !d.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

/// Name the option behind a loader error: when the error's JSON path lies at or under (or
/// above) a path an assignment set, the message ends with `(from --set ARG)` (or the
/// assignment's other option, `--vary`), the last such assignment named.
pub fn blame(e: Error, applied: &[(Assignment, &str)]) -> Error {
    match e {
        Error::InFile { file, inner } => Error::InFile { file, inner: Box::new(blame(*inner, applied)) },
        Error::Invalid { path, message } => {
            let hit = applied.iter().rev().find(|(a, _)| related(&path, &json_path(&a.path)));
            match hit {
                Some((a, option)) => Error::Invalid { path, message: format!("{message} (from {option} {})", a.arg) },
                None => Error::Invalid { path, message },
            }
        }
        other => other,
    }
}

/// Whether one JSON path lies within the other (at a segment boundary).
fn related(a: &str, b: &str) -> bool {
    let within = |long: &str, short: &str| {
        long.starts_with(short) && matches!(long.as_bytes().get(short.len()), None | Some(b'.') | Some(b'['))
    };
    within(a, b) || within(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("m.init.v[0]").unwrap(),
            vec![Segment::Key("m".into()), Segment::Key("init".into()), Segment::Key("v".into()), Segment::Index(0)]
        );
        assert!(parse_path("m..x").is_err());
        assert!(parse_path("m.v[x]").is_err());
        assert!(parse_path("m.v[1]x").is_err());
    }

    #[test]
    fn sets_nested_values() {
        let mut doc = json!({"solver": {"step": 1e-3, "stop_time": 1}, "components": {"m": {"type": "mass", "mass": 1, "init": {"v": [0, 0, 0]}}}});
        apply_set(&mut doc, "m.init.v[1]=2.5").unwrap();
        apply_set(&mut doc, "solver.step=1e-4").unwrap();
        apply_set(&mut doc, "output.interval=0.01").unwrap();
        apply_set(&mut doc, "m.law=coulomb").unwrap();
        assert_eq!(doc["components"]["m"]["init"]["v"], json!([0, 2.5, 0]));
        assert_eq!(doc["solver"]["step"], json!(1e-4));
        assert_eq!(doc["output"]["interval"], json!(0.01));
        assert_eq!(doc["components"]["m"]["law"], json!("coulomb"));
        let e = apply_set(&mut doc, "masss.mass=2").unwrap_err();
        assert!(e.to_string().contains("did you mean 'm'") || e.to_string().contains("components: m"), "{e}");
        let e = apply_set(&mut doc, "m.init.v[3]=1").unwrap_err();
        assert!(e.to_string().starts_with("--set m.init.v[3]=1: index 3"), "{e}");
    }

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("spring_dampr", ["spring_damper", "mass", "point_mass"]), Some("spring_damper"));
        assert_eq!(did_you_mean("masss", ["spring_damper", "mass", "point_mass"]), Some("mass"));
        assert_eq!(did_you_mean("zzz", ["spring_damper", "mass"]), None);
    }
}
