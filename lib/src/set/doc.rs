//! [`Doc`]: a system's JSON document kept as its text, with the assignments of `--set`,
//! `--vary` and the Python package's `with_set` held beside it as edits. An assignment
//! parses only the section or the component it sets, and the text handed to the loader is
//! the original with those values spliced in. Reading a 10⁴-component system into a
//! `serde_json::Value`, copying it for every run of a study and writing it out again cost
//! about twice its load; a copy of a `Doc` is a reference count and its few edits.
//!
//! The text keeps everything the assignments do not touch exactly as written, so a file
//! is read with overrides as it is read without them. Repeated keys are left to the
//! loader as in the file; an assignment to a repeated key sets its last occurrence, the one
//! a JSON object keeps.

use super::{apply_value, Assignment, Editable, Segment, SetError};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

/// The top-level section whose members are indexed one by one (each a component).
const MEMBERS: &str = "components";

/// The document's text and where its values are; shared by every copy of a [`Doc`].
#[derive(Debug)]
struct Index {
    text: Arc<str>,
    /// The span of the top-level object, braces included.
    object: Range<usize>,
    /// Each top-level key and the span of its value, in file order.
    top: Vec<(String, Range<usize>)>,
    /// Position in `top` of the last occurrence of each key.
    top_at: HashMap<String, usize>,
    /// The members of `components` when it is an object (indexed when an assignment first
    /// names one: a section's assignment does not pay for it).
    members: OnceLock<Option<Members>>,
}

impl Index {
    fn members(&self) -> Option<&Members> {
        self.members
            .get_or_init(|| {
                let r = self.top_at.get(MEMBERS).map(|&i| self.top[i].1.clone())?;
                if !self.text[r.clone()].starts_with('{') {
                    return None;
                }
                // The text was read whole, so its parts read again.
                let list = entries(&self.text, &self.text[r.clone()]).ok()?;
                Some(Members { object: r, at: last_positions(&list), list })
            })
            .as_ref()
    }
}

#[derive(Debug)]
struct Members {
    /// The span of the `components` object, braces included.
    object: Range<usize>,
    list: Vec<(String, Range<usize>)>,
    /// Position in `list` of the last occurrence of each name.
    at: HashMap<String, usize>,
}

/// The value an edit gives a top-level key, or a member of `components`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Target {
    Top(String),
    Member(String),
}

/// A system document: its text and the values assignments have set (see the module docs).
#[derive(Clone, Debug)]
pub struct Doc {
    index: Arc<Index>,
    /// Edited values in the order the keys were first set (new keys are appended in it).
    edits: Vec<(Target, Value)>,
}

impl Doc {
    /// Index the JSON text `text` (checked to be well formed; its top level an object).
    pub fn parse(text: impl Into<Arc<str>>) -> Result<Doc, serde_json::Error> {
        let text: Arc<str> = text.into();
        let whole: &RawValue = serde_json::from_str(&text)?;
        let object = span(&text, whole.get());
        let top = entries(&text, whole.get())?;
        let top_at = last_positions(&top);
        let index = Index { text, object, top, top_at, members: OnceLock::new() };
        Ok(Doc { index: Arc::new(index), edits: Vec::new() })
    }

    /// The document as JSON text: the original (borrowed when nothing is edited) with every
    /// edited value in place.
    pub fn text(&self) -> Cow<'_, str> {
        let ix = &*self.index;
        let text = &*ix.text;
        if self.edits.is_empty() {
            return Cow::Borrowed(text);
        }
        // Replacements of existing values, and insertions before a closing brace.
        let mut splices: Vec<(Range<usize>, String)> = Vec::new();
        let mut new_top = String::new();
        let mut new_members = String::new();
        for (target, value) in &self.edits {
            let at = match target {
                Target::Top(k) => ix.top_at.get(k).map(|&i| ix.top[i].1.clone()),
                Target::Member(m) => ix.members().and_then(|ms| ms.at.get(m).map(|&i| ms.list[i].1.clone())),
            };
            match (at, target) {
                (Some(r), _) => splices.push((r, value.to_string())),
                (None, Target::Top(k)) => push_entry(&mut new_top, ix.top.is_empty(), k, value),
                (None, Target::Member(m)) => {
                    let empty = ix.members().is_none_or(|ms| ms.list.is_empty());
                    push_entry(&mut new_members, empty, m, value)
                }
            }
        }
        if !new_members.is_empty() {
            if let Some(ms) = ix.members() {
                splices.push((ms.object.end - 1..ms.object.end - 1, new_members));
            }
        }
        if !new_top.is_empty() {
            splices.push((ix.object.end - 1..ix.object.end - 1, new_top));
        }
        splices.sort_by_key(|(r, _)| (r.start, r.end));
        let mut out = String::with_capacity(text.len() + splices.iter().map(|s| s.1.len()).sum::<usize>());
        let mut at = 0;
        for (r, with) in &splices {
            out.push_str(&text[at..r.start]);
            out.push_str(with);
            at = r.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// The document as a `Value` (for the readers that take one).
    pub fn value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.text())
    }

    fn edit(&self, target: &Target) -> Option<&Value> {
        self.edits.iter().find(|(t, _)| t == target).map(|(_, v)| v)
    }

    fn set_edit(&mut self, target: Target, value: Value) {
        match self.edits.iter_mut().find(|(t, _)| *t == target) {
            Some(e) => e.1 = value,
            None => self.edits.push((target, value)),
        }
    }

    /// The current value of top-level `key` (None: absent), parsed from the text.
    fn top_value(&self, key: &str) -> Result<Option<Value>, serde_json::Error> {
        if let Some(v) = self.edit(&Target::Top(key.to_string())) {
            return Ok(Some(v.clone()));
        }
        let ix = &*self.index;
        let Some(&i) = ix.top_at.get(key) else { return Ok(None) };
        let mut v: Value = serde_json::from_str(&ix.text[ix.top[i].1.clone()])?;
        // Member edits of `components` are folded into the whole section.
        if key == MEMBERS {
            if let Value::Object(map) = &mut v {
                for (t, mv) in &self.edits {
                    if let Target::Member(m) = t {
                        map.insert(m.clone(), mv.clone());
                    }
                }
            }
        }
        Ok(Some(v))
    }

    /// The current value of member `name` of `components` (None: absent).
    fn member_value(&self, name: &str) -> Result<Option<Value>, serde_json::Error> {
        if let Some(v) = self.edit(&Target::Member(name.to_string())) {
            return Ok(Some(v.clone()));
        }
        let ix = &*self.index;
        match ix.members().and_then(|ms| ms.at.get(name).map(|&i| ms.list[i].1.clone())) {
            Some(r) => serde_json::from_str(&ix.text[r]).map(Some),
            None => Ok(None),
        }
    }
}

impl Editable for Doc {
    fn has(&self, key: &str) -> bool {
        self.index.top_at.contains_key(key) || self.edit(&Target::Top(key.to_string())).is_some()
    }

    fn members(&self, section: &str) -> Option<Vec<String>> {
        if let Some(v) = self.edit(&Target::Top(section.to_string())) {
            return v.as_object().map(|m| m.keys().cloned().collect());
        }
        if section == MEMBERS {
            let ms = self.index.members()?;
            let mut names: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (n, _) in &ms.list {
                if seen.insert(n.as_str()) {
                    names.push(n.clone());
                }
            }
            for (t, _) in &self.edits {
                if let Target::Member(m) = t {
                    if !ms.at.contains_key(m) {
                        names.push(m.clone());
                    }
                }
            }
            return Some(names);
        }
        match self.top_value(section) {
            Ok(Some(Value::Object(m))) => Some(m.keys().cloned().collect()),
            _ => None,
        }
    }

    fn has_member(&self, section: &str, name: &str) -> Option<bool> {
        let member_index = if section == MEMBERS { self.index.members() } else { None };
        match (self.edit(&Target::Top(section.to_string())), member_index) {
            (None, Some(ms)) => {
                Some(ms.at.contains_key(name) || self.edit(&Target::Member(name.to_string())).is_some())
            }
            _ => self.members(section).map(|names| names.iter().any(|n| n == name)),
        }
    }

    /// Apply `a` to the one value it reaches into: a member of `components` (when the
    /// section is an object of the text, not replaced whole) or a top-level section.
    fn apply(&mut self, a: &Assignment) -> Result<(), SetError> {
        let Some(Segment::Key(top)) = a.path.first() else {
            return Err(SetError { arg: a.arg.clone(), message: "the path names no key".into() });
        };
        let whole_section = self.edit(&Target::Top(top.clone())).is_some();
        let member = match a.path.get(1) {
            Some(Segment::Key(m)) if top == MEMBERS && !whole_section && self.index.members().is_some() => {
                Some(m.clone())
            }
            _ => None,
        };
        // The value's text was checked to be JSON; it can still be nested beyond the
        // reader's depth. The message names the value (a position would be in its text).
        let at = match &member {
            Some(m) => format!("{top}.{m}"),
            None => top.clone(),
        };
        let bad = |e: serde_json::Error| {
            let text = e.to_string();
            let cut = if e.line() > 0 { text.rfind(" at line ") } else { None };
            SetError { arg: a.arg.clone(), message: format!("{at}: {}", &text[..cut.unwrap_or(text.len())]) }
        };
        // The assignment runs on a document of just that value, so its messages (which
        // name the path from the top) are those of the whole document.
        let mut one = Map::new();
        match &member {
            Some(m) => {
                let mut section = Map::new();
                if let Some(v) = self.member_value(m).map_err(bad)? {
                    section.insert(m.clone(), v);
                }
                one.insert(top.clone(), Value::Object(section));
            }
            None => {
                if let Some(v) = self.top_value(top).map_err(bad)? {
                    one.insert(top.clone(), v);
                }
            }
        }
        let mut one = Value::Object(one);
        apply_value(&mut one, a)?;
        let mut taken = one.as_object_mut().and_then(|o| o.remove(top.as_str())).unwrap_or(Value::Null);
        match member {
            Some(m) => {
                let v = taken.as_object_mut().and_then(|o| o.remove(m.as_str())).unwrap_or(Value::Null);
                self.set_edit(Target::Member(m), v);
            }
            None => {
                if top == MEMBERS {
                    // The whole section now holds the member edits.
                    self.edits.retain(|(t, _)| !matches!(t, Target::Member(_)));
                }
                self.set_edit(Target::Top(top.clone()), taken);
            }
        }
        Ok(())
    }
}

/// `,"key":value` (without the comma when the object is `empty`) appended to `out`.
fn push_entry(out: &mut String, empty: bool, key: &str, value: &Value) {
    if !(empty && out.is_empty()) {
        out.push(',');
    }
    out.push_str(&Value::from(key).to_string());
    out.push(':');
    out.push_str(&value.to_string());
}

/// The span of `part`, a slice of `text`, in `text`.
fn span(text: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    debug_assert!(start + part.len() <= text.len());
    start..start + part.len()
}

/// The keys of the JSON object `object` (a slice of `text`) and the spans of their values.
fn entries(text: &str, object: &str) -> Result<Vec<(String, Range<usize>)>, serde_json::Error> {
    let Entries(list) = serde_json::from_str(object)?;
    Ok(list.into_iter().map(|(k, v)| (k, span(text, v.get()))).collect())
}

fn last_positions(list: &[(String, Range<usize>)]) -> HashMap<String, usize> {
    list.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect()
}

/// An object's entries in order, each value as its text.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut list = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(k) = map.next_key::<String>()? {
                    list.push((k, map.next_value::<&RawValue>()?));
                }
                Ok(Entries(list))
            }
        }
        d.deserialize_map(Each)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{apply_set, Editable};
    use super::*;
    use serde_json::json;

    /// Apply `sets` to the file's `Value` and to its `Doc`: the same results, or the same errors.
    fn both(text: &str, sets: &[String]) -> (Value, Doc) {
        let mut value: Value = serde_json::from_str(text).unwrap();
        let mut doc = Doc::parse(text).unwrap();
        for s in sets {
            let v = apply_set(&mut value, s);
            let d = apply_set(&mut doc, s);
            assert_eq!(v, d, "{s}");
            // A failed assignment may leave a null on its way in the `Value` (either ends a
            // load); the next ones start again from the same document.
            if v.is_err() {
                value = doc.value().unwrap();
            }
            assert!(doc.value().unwrap() == value, "after {s}");
        }
        (value, doc)
    }

    #[test]
    fn every_example_reads_as_its_value_does_after_the_same_assignments() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut files = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            let Some(comps) = value.get("components").and_then(Value::as_object) else { continue };
            let (first, params) = comps.iter().next().unwrap();
            let number = params.as_object().unwrap().iter().find(|(_, v)| v.is_number()).map(|(k, _)| k.clone());
            let mut sets = vec![
                "solver.stop_time=0.25".to_string(),
                "output.interval=0.002".into(),
                "solver.extra_key=1".into(),
                "name=renamed".into(),
                r#"components.added={"type": "mass", "mass": 1}"#.into(),
                "added.mass=3".into(),
                format!("{first}.no_such_list[3]=1"),
                "solver.step.deeper=1".into(),
                "nobody.mass=1".into(),
            ];
            if let Some(k) = number {
                sets.push(format!("{first}.{k}=2.5"));
                sets.push(format!("components.{first}.{k}=3.5"));
            }
            let (_, doc) = both(&text, &sets);
            // What the assignments did not touch is the file's text.
            let out = doc.text();
            let untouched = comps.keys().nth(1).map(|k| &text[text.find(&format!("\"{k}\"")).unwrap()..]);
            if let Some(rest) = untouched {
                let head = &rest[..rest.len().min(60)];
                assert!(out.contains(head), "{}: {head}", path.display());
            }
            files += 1;
        }
        assert!(files >= 20, "{files} examples");
    }

    #[test]
    fn a_section_set_whole_takes_the_member_edits_before_it() {
        let text =
            r#"{"solver": {"step": 0.001}, "components": {"m": {"type": "mass", "mass": 1}, "k": {"type": "spring"}}}"#;
        let sets: Vec<String> = [
            "m.mass=2",
            "components.n={\"type\": \"mass\"}",
            "components={\"a\": {\"type\": \"mass\"}, \"m\": {\"mass\": 7}}",
            "a.mass=5",
            "m.mass=6",
        ]
        .map(String::from)
        .to_vec();
        let (value, doc) = both(text, &sets);
        assert_eq!(value["components"], json!({"a": {"type": "mass", "mass": 5}, "m": {"mass": 6}}));
        assert_eq!(doc.members("components").unwrap(), ["a", "m"]);
    }

    #[test]
    fn empty_objects_take_new_keys_as_json() {
        let (_, doc) = both("{}", &["solver.step=1".into(), "x.type=mass".into(), "x.mass=2".into()]);
        assert_eq!(doc.text(), r#"{"solver":{"step":1},"components":{"x":{"type":"mass","mass":2}}}"#);
        let (_, doc) = both(" {\"components\": { } } \n", &["components.x=1".into(), "components.y=2".into()]);
        assert_eq!(doc.text(), " {\"components\": { \"x\":1,\"y\":2} } \n");
    }

    #[test]
    fn a_repeated_key_is_set_at_its_last_occurrence_and_the_first_left_as_written() {
        let text = r#"{"components": {"a": {"mass": 1}, "a": {"mass": 2}}, "solver": {}}"#;
        let (value, doc) = both(text, &["a.mass=3".into()]);
        assert_eq!(value["components"]["a"], json!({"mass": 3}));
        assert_eq!(doc.text(), r#"{"components": {"a": {"mass": 1}, "a": {"mass":3}}, "solver": {}}"#);
    }

    #[test]
    fn a_value_too_deep_to_read_is_named_without_a_position() {
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        let text = format!(r#"{{"components": {{"m": {{"x": {deep}}}, "n": {{"mass": 1}}}}}}"#);
        let mut doc = Doc::parse(text.as_str()).unwrap();
        let e = apply_set(&mut doc, "m.mass=2").unwrap_err();
        assert_eq!(e.to_string(), "--set m.mass=2: components.m: recursion limit exceeded");
        // The others are set as usual.
        apply_set(&mut doc, "n.mass=2").unwrap();
        assert!(doc.text().contains(r#""n": {"mass":2}"#));
    }

    #[test]
    fn a_copy_keeps_its_own_edits() {
        let text = r#"{"components": {"m": {"mass": 1}}}"#;
        let mut base = Doc::parse(text).unwrap();
        apply_set(&mut base, "m.mass=2").unwrap();
        let mut copy = base.clone();
        apply_set(&mut copy, "m.mass=3").unwrap();
        assert_eq!(base.value().unwrap()["components"]["m"]["mass"], json!(2));
        assert_eq!(copy.value().unwrap()["components"]["m"]["mass"], json!(3));
        assert!(Doc::parse("[1, 2]").is_err() && Doc::parse("{").is_err());
    }
}
