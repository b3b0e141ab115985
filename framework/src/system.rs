//! JSON system descriptions: the file format, the registry of component types, and the
//! parameter reader that turns every bad value into an error naming its JSON path.
//!
//! ```json
//! {
//!   "name": "rolling-sphere",
//!   "solver": { "method": "rk4", "step": 1e-4, "stop_time": 1.0 },
//!   "output": { "interval": 1e-3, "signals": { "center_vx": "sphere.v[0]" } },
//!   "components": { "sphere": { "type": "rigid_body", ... }, "floor": { "type": "plane_contact", ... } },
//!   "connections": [ { "from": "floor.body", "to": "sphere", "at": [0, 0, -0.2] } ]
//! }
//! ```

use crate::component::{Admittance, Block, Diagnostic, Impedance, SignalInfo};
use crate::error::{Error, Result};
use crate::method::Method;
use crate::network::{Ends, Network, NewNode};
use crate::output::RunPlan;
use crate::port::Offset;
use crate::schedule::Schedule;
use crate::signal::{TimeFunction, WireUse, Wires};
use crate::stepper::bus::BlockOptions;
use crate::stepper::Simulator;
pub use crate::stepper::{Hold, Switches};
use nalgebra::Vector3;
use petgraph::graph::NodeIndex;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

mod json;
mod limits;
mod stream;
pub use json::{Json, Object};
pub use limits::{
    check_name, check_step_count, check_step_keys, check_threads, max_threads, read_system_file, MAX_LOOP_ITERATIONS,
    MAX_NAME_LEN, MAX_SYSTEM_BYTES, THREADS_PER_CORE,
};

/// The top level of a system file, borrowing from the file's text.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec<'a> {
    /// The JSON Schema an editor checks the file against (`stiction schema`); not read.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub solver: SolverSpec,
    #[serde(default)]
    pub output: OutputSpec,
    /// The system's inputs: signals fed from outside (`--input`, Python, an exported FMU's
    /// inputs), by name, in name order.
    #[serde(default)]
    pub inputs: BTreeMap<String, InputSpec>,
    /// Parameters an exported FMU offers (`stiction fmu export`), by name: each sets the
    /// `--set` path it names. Not read by a run.
    #[serde(default)]
    pub parameters: BTreeMap<String, ParameterSpec>,
    /// Each component's name and its raw JSON text, in file order, borrowed from the file
    /// and parsed one at a time while building, so a system of 10⁵ components never holds
    /// its whole value tree (nor a second copy of its text) in memory.
    #[serde(borrow)]
    pub components: Components<'a>,
    /// The `"connections"` array as raw text: its elements are read one at a time and
    /// connected as they are read (`Connect`), after the components are built.
    #[serde(default, borrow, deserialize_with = "present")]
    pub connections: Option<&'a RawValue>,
}

/// A raw value that is present, `null` included (which the connection reader rejects, as
/// it rejects any non-array).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The whole file with its connections typed, read with path tracking only to name where a
/// malformed connection is (the rest was checked by [`SystemSpec`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CheckedConnections<'a> {
    #[serde(default, rename = "$schema")]
    schema: IgnoredAny,
    #[serde(default)]
    name: IgnoredAny,
    #[serde(default)]
    description: IgnoredAny,
    solver: IgnoredAny,
    #[serde(default)]
    output: IgnoredAny,
    #[serde(default)]
    inputs: IgnoredAny,
    #[serde(default)]
    parameters: IgnoredAny,
    components: IgnoredAny,
    #[serde(default, borrow)]
    connections: Vec<ConnectionSpec<'a>>,
}

/// Reads the connections array element by element and connects them a chunk at a time,
/// so no list of 10⁵ connections is held. A network error is kept in `failed` (the reader
/// then stops with a placeholder error).
struct Connect<'n> {
    network: &'n mut Network,
    failed: &'n mut Option<Error>,
    /// Look the ends up on the worker threads.
    parallel: bool,
}

impl<'de, 'n> serde::de::DeserializeSeed<'de> for Connect<'n> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, 'n> serde::de::Visitor<'de> for Connect<'n> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        // A chunk of connections is read, its ends looked up on the worker threads (the
        // lookups are cache misses), and connected in file order: the first error, in file
        // order, is reported, whether the connection is wrong or the text after it.
        let mut chunk: Vec<ConnectionSpec<'de>> = Vec::with_capacity(LOAD_CHUNK);
        let mut done = 0;
        loop {
            let next = match seq.next_element::<ConnectionSpec<'de>>() {
                Ok(Some(c)) => {
                    chunk.push(c);
                    Ok(false)
                }
                Ok(None) => Ok(true),
                Err(e) => Err(e),
            };
            let stop = !matches!(next, Ok(false));
            if stop || chunk.len() == LOAD_CHUNK {
                if let Err(e) = connect_chunk(self.network, done, &chunk, self.parallel) {
                    *self.failed = Some(e);
                    return Err(serde::de::Error::custom("connection failed"));
                }
                done += chunk.len();
                chunk.clear();
            }
            if stop {
                return next.map(|_| ());
            }
        }
    }
}

/// Connect `chunk`, connections `first..` of the file: ends resolved on the worker threads
/// when `parallel`, connected in order.
fn connect_chunk<'c>(
    network: &mut Network,
    first: usize,
    chunk: &'c [ConnectionSpec<'c>],
    parallel: bool,
) -> Result<()> {
    // Between chunks, a stop request ends the load.
    crate::cancel::check()?;
    let net = &*network;
    let resolve = |c: &'c ConnectionSpec<'c>| -> Result<Ends<'c>> { net.resolve_ends(&c.from, &c.to) };
    let ends: Vec<Result<Ends>> = if parallel {
        use rayon::prelude::*;
        chunk.par_iter().map(resolve).collect()
    } else {
        chunk.iter().map(resolve).collect()
    };
    for (k, (c, e)) in chunk.iter().zip(ends).enumerate() {
        let i = first + k;
        let at = offset(i, c)?;
        let made = e.and_then(|e| match Network::signal_ends(&e) {
            Some(_) if at.is_some() => Err(Error::Network("a signal connection has no 'at' or 'at_world'".into())),
            Some(_) if c.gain.is_some_and(|g| !g.is_finite()) => Err(Error::Network("'gain' must be finite".into())),
            Some((from, block, input)) => network.add_signal_link(from, block, input, i, c.gain.unwrap_or(1.0)),
            None if c.gain.is_some() => Err(Error::Network(format!(
                "'gain' is for signal connections (to a signal block's input), and '{}' -> '{}' is a physical one",
                c.from, c.to
            ))),
            None => network.connect_ends(&c.from, &c.to, e, at),
        });
        made.map_err(|e| Error::invalid(format!("connections[{i}]"), e.to_string()))?;
    }
    Ok(())
}

/// The offset of connection `i`, checked.
fn offset(i: usize, c: &ConnectionSpec) -> Result<Option<Offset>> {
    let vec = |a: [f64; 3], key: &str| {
        if a.iter().all(|x| x.is_finite()) {
            Ok(Vector3::new(a[0], a[1], a[2]))
        } else {
            Err(Error::invalid(format!("connections[{i}].{key}"), "must be finite"))
        }
    };
    let at = match (c.at, c.at_world) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(format!("connections[{i}]"), "give either 'at' or 'at_world', not both"))
        }
        (Some(a), None) => Some(Offset::Body(vec(a, "at")?)),
        (None, Some(a)) => Some(Offset::World(vec(a, "at_world")?)),
        (None, None) => None,
    };
    Ok(at)
}

/// The `"components"` object: (name, raw value) in file order. A name given twice is kept
/// twice (the network then reports it).
#[derive(Debug, Default)]
pub struct Components<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Components<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Components<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, mut m: M) -> std::result::Result<Self::Value, M::Error> {
                let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
                while let Some(Name(name)) = m.next_key()? {
                    out.push((name, m.next_value()?));
                }
                Ok(Components(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A string borrowed from the text when it has no escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Name<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Name<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Self::Value, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Ok(Name(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Self::Value, E> {
                Ok(Name(Cow::Owned(v)))
            }
        }
        d.deserialize_str(Visit(std::marker::PhantomData))
    }
}

/// `"solver"`: method, step T (s), stop time (s), optional thread count.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    #[serde(default = "default_method")]
    pub method: Method,
    pub step: f64,
    pub stop_time: f64,
    #[serde(default)]
    pub threads: Option<usize>,
    /// How signal blocks step at a communication point (framework/src/stepper/bus.rs).
    #[serde(default)]
    pub blocks: BlockAlgorithm,
    /// Signal blocks by priority for the Gauss-Seidel order and inside algebraic loops.
    #[serde(default)]
    pub order: Vec<String>,
    /// The fixed-point iteration of algebraic loops between signal blocks.
    #[serde(default, rename = "loop")]
    pub loop_: Option<LoopSpec>,
    /// Which switches RK4 locates within a step (framework/src/stepper/events.rs).
    #[serde(default)]
    pub events: Switches,
    /// Whether stiff elements are held implicitly with their bodies (stepper/coupling.rs).
    #[serde(default)]
    pub hold: Hold,
}


/// `"solver": {"loop": {...}}`: how an algebraic loop between signal blocks is iterated.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    /// Relative tolerance (relative to max(1, |value|)); default 1e-10.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Most iterations per step; default 100.
    #[serde(default)]
    pub max_iterations: Option<usize>,
}

/// `"solver": {"blocks": ...}`: the signal blocks all step from the values at t_k
/// (`"jacobi"`, the default) or one after the other (`"gauss-seidel"`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BlockAlgorithm {
    #[default]
    Jacobi,
    GaussSeidel,
}

fn default_method() -> Method {
    Method::Rk4
}

/// `"output"`: sampling interval (s, default: every step) and signals, either a list of
/// names or an object `{ "label": "component.signal[i]" }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    #[serde(default)]
    pub interval: Option<f64>,
    #[serde(default)]
    pub signals: Signals,
}

/// Output signal selection.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Signals {
    List(Vec<String>),
    Labeled(Map<String, Value>),
}

impl Default for Signals {
    fn default() -> Self {
        Signals::List(Vec::new())
    }
}

/// One input of a system (top-level `"inputs"`): a signal whose value comes from outside.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// Unit, for the documentation and the exported FMU (e.g. "N·m").
    #[serde(default)]
    pub unit: Option<String>,
    /// The value before anything sets it (default 0).
    #[serde(default)]
    pub start: f64,
    #[serde(default)]
    pub description: Option<String>,
}

/// One parameter of an exported FMU (top-level `"parameters"`): the `--set` path whose value
/// it gives (its start value is the file's value there).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ParameterSpec {
    /// A `--set` path: `brake.law.F`, `solver.step`, `components.m.mass`.
    pub set: String,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

/// One connection: an impedance port to an admittance port or to `ground`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionSpec<'a> {
    #[serde(borrow)]
    pub from: Cow<'a, str>,
    #[serde(borrow)]
    pub to: Cow<'a, str>,
    /// Offset in the body frame of a frame port (or world position of a ground anchor).
    #[serde(default)]
    pub at: Option<[f64; 3]>,
    /// Offset from a frame port's reference point along fixed world axes (does not turn
    /// with the body), e.g. the contact point of a rolling sphere.
    #[serde(default)]
    pub at_world: Option<[f64; 3]>,
    /// A signal connection only: the input is set to gain × the signal (default 1).
    #[serde(default)]
    pub gain: Option<f64>,
}

/// A component built from JSON.
pub enum Built {
    Admittance(Box<dyn Admittance>),
    Impedance(Box<dyn Impedance>),
    /// A signal block (`"role": "signal"`).
    Block(Box<dyn Block>),
}

/// Documentation of one parameter. The table of a [`ComponentType`] is also the list of
/// keys its `build` may read: a key of a nested object is documented by its dotted name
/// (`law.F`, `init.q`), a key of the objects in an array with `[]` (`links[].mass`,
/// `gears[].leadscrew.mu`). See [`Params::for_type`].
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    /// The key as the builder reads it (dotted for nested objects).
    pub name: &'static str,
    pub unit: &'static str,
    /// Default value as text; `None` when the parameter is required.
    pub default: Option<&'static str>,
    pub doc: &'static str,
}

impl ParamDoc {
    /// Whether the parameter takes a time function (a number, an expression of t and of
    /// signals, a piecewise definition, a table or `{"signal": …}`): its doc line says
    /// "time function". The JSON Schema and the component reference read this.
    pub fn takes_time_function(&self) -> bool {
        self.doc.contains("time function")
    }
}

/// Documentation of one port.
#[derive(Clone, Copy, Debug)]
pub struct PortDoc {
    pub name: &'static str,
    pub domain: &'static str,
    pub doc: &'static str,
}

/// Whether a type builds an admittance or an impedance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Admittance,
    Impedance,
}

/// A component type known to the JSON loader.
#[derive(Clone, Copy)]
pub struct ComponentType {
    pub name: &'static str,
    pub kind: Kind,
    /// One line: what it is, with the paper equation.
    pub summary: &'static str,
    pub params: &'static [ParamDoc],
    pub ports: &'static [PortDoc],
    pub signals: &'static [SignalInfo],
    /// Builds the component. It may read only the keys of `params` (checked by the loader,
    /// [`Params::for_type`]).
    pub build: fn(&mut Params) -> Result<Built>,
}

impl ComponentType {
    /// Whether `params` documents the (dotted) key `name`.
    pub fn documents(&self, name: &str) -> bool {
        self.params.iter().any(|d| d.name == name)
    }
}

/// The component types available to JSON systems.
#[derive(Clone, Default)]
pub struct Registry {
    types: BTreeMap<&'static str, ComponentType>,
}

impl Registry {
    pub fn new() -> Self {
        Registry::default()
    }

    /// Register a type (a later registration of the same name replaces the earlier).
    pub fn register(&mut self, t: ComponentType) {
        self.types.insert(t.name, t);
    }

    pub fn get(&self, name: &str) -> Option<&ComponentType> {
        self.types.get(name)
    }

    /// All types, sorted by name.
    pub fn types(&self) -> impl Iterator<Item = &ComponentType> {
        self.types.values()
    }
}

/// The parameter table a checked reader and the readers of its nested objects share.
struct Schema {
    ty: ComponentType,
    /// Which rows of `ty.params` were read: bit i for row i (the first 128 rows).
    read: Cell<u128>,
    /// Dotted names read that have no bit: rows past the 128th and undocumented keys.
    read_other: RefCell<Vec<String>>,
    /// The first key read that the table does not document: (dotted name, JSON path).
    undocumented: RefCell<Option<(String, String)>>,
}

impl Schema {
    /// Record that the key `key` of the object at `prefix` was read; `path` gives its JSON
    /// path, built only for an undocumented key.
    fn record(&self, prefix: &str, key: &str, path: impl FnOnce() -> String) {
        let row = self.ty.params.iter().position(|d| dotted_eq(d.name, prefix, key));
        match row {
            Some(i) if i < 128 => self.read.set(self.read.get() | 1 << i),
            Some(_) => self.read_other.borrow_mut().push(format!("{prefix}{key}")),
            None => {
                let name = format!("{prefix}{key}");
                self.undocumented.borrow_mut().get_or_insert_with(|| (name.clone(), path()));
                self.read_other.borrow_mut().push(name);
            }
        }
    }
}

/// The pieces joined, allocated once (`format!` costs several times more, per component).
fn concat(pieces: &[&str]) -> String {
    let mut s = String::with_capacity(pieces.iter().map(|p| p.len()).sum());
    for p in pieces {
        s.push_str(p);
    }
    s
}

/// Whether the dotted name `name` is `prefix` followed by `key`.
fn dotted_eq(name: &str, prefix: &str, key: &str) -> bool {
    name.len() == prefix.len() + key.len() && name.starts_with(prefix) && name[prefix.len()..] == *key
}

/// Reads the parameters of one JSON object, recording which keys were used so that
/// [`finish`](Params::finish) can reject unknown keys. Every error names the JSON path.
///
/// A reader made by [`for_type`](Params::for_type) also checks every key it is asked for
/// against the type's [`ParamDoc`] table, so the documentation and the parsing cannot
/// drift apart, and records the keys read ([`keys_read`](Params::keys_read)).
pub struct Params<'a> {
    path: String,
    map: &'a Object<'a>,
    /// Keys of `map` read so far, by position: bit i for the i-th key (the first 64).
    used: u64,
    /// Keys read past the 64th position.
    used_more: Vec<&'a str>,
    base: &'a Path,
    schema: Option<Rc<Schema>>,
    /// Dotted name of this object within the component: "" at the top, "law.", "links[].".
    prefix: String,
    /// Where time functions register the signals they read (none: signals are refused).
    wires: Option<&'a Wires>,
}

impl<'a> Params<'a> {
    /// Reader over `map` at JSON path `path`; relative file names are taken from `base`.
    /// It reads any key (see [`for_type`](Params::for_type) for the checked reader).
    pub fn new(path: impl Into<String>, map: &'a Object<'a>, base: &'a Path) -> Self {
        Params {
            path: path.into(),
            map,
            used: 0,
            used_more: Vec::new(),
            base,
            schema: None,
            prefix: String::new(),
            wires: None,
        }
    }

    /// Let the time functions this reader reads take signals, registered in `wires`.
    pub fn with_wires(mut self, wires: &'a Wires) -> Self {
        self.wires = Some(wires);
        self
    }

    /// The reader the loader gives `ty.build`: reading a key that `ty.params` does not
    /// document, here or in a nested object, makes [`check_documented`](Params::check_documented)
    /// (and [`finish`](Params::finish)) return an internal error naming the type and the
    /// key. The key `type` is taken as read.
    pub fn for_type(ty: &ComponentType, path: impl Into<String>, map: &'a Object<'a>, base: &'a Path) -> Self {
        let mut p = Params::new(path, map, base);
        p.mark("type");
        p.schema = Some(Rc::new(Schema {
            ty: *ty,
            read: Cell::new(0),
            read_other: RefCell::new(Vec::new()),
            undocumented: RefCell::new(None),
        }));
        p
    }

    /// A reader for the nested object `map` at key `key` (`[]` appended for array items).
    fn nested(&self, key: &str, path: String, map: &'a Object<'a>) -> Params<'a> {
        let mut p = Params::new(path, map, self.base);
        p.schema = self.schema.clone();
        p.wires = self.wires;
        p.prefix = concat(&[&self.prefix, key, "."]);
        p
    }

    /// Mark `key` used and return its entry. The object is searched in order (no hashing,
    /// no allocation); in the first 64 keys the position gives the bit.
    fn mark(&mut self, key: &str) -> Option<&'a json::Entry<'a>> {
        let map = self.map;
        let (i, e) = map.0.iter().enumerate().find(|(_, e)| e.key == key)?;
        if map.len() <= 64 {
            self.used |= 1 << i;
        } else {
            self.used_more.push(&e.key);
        }
        Some(e)
    }

    /// Whether the key at position `i` of the map, `key`, was read.
    fn was_used(&self, i: usize, key: &str) -> bool {
        if self.map.len() <= 64 {
            self.used & (1 << i) != 0
        } else {
            self.used_more.contains(&key)
        }
    }

    /// The dotted names of the keys read so far by this reader and its nested readers
    /// (empty for a reader made by [`new`](Params::new)).
    pub fn keys_read(&self) -> Vec<String> {
        let Some(s) = &self.schema else { return Vec::new() };
        let bits = s.read.get();
        let rows = s.ty.params.iter().enumerate().filter(|(i, _)| *i < 128 && bits & (1 << i) != 0);
        let mut out: Vec<String> = rows.map(|(_, d)| d.name.to_string()).collect();
        out.extend(s.read_other.borrow().iter().cloned());
        out.sort();
        out.dedup();
        out
    }

    /// An internal error if the builder read a key its type does not document.
    pub fn check_documented(&self) -> Result<()> {
        let Some(s) = &self.schema else { return Ok(()) };
        match &*s.undocumented.borrow() {
            None => Ok(()),
            Some((name, path)) => Err(Error::invalid(
                path,
                format!(
                    "internal error: component type '{}' read parameter '{name}', which its parameter table does not document",
                    s.ty.name
                ),
            )),
        }
    }

    /// JSON path of this object.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// JSON path of a key of this object.
    pub fn key_path(&self, key: &str) -> String {
        concat(&[&self.path, ".", key])
    }

    /// An error at `key`.
    pub fn err(&self, key: &str, msg: impl Into<String>) -> Error {
        Error::invalid(self.key_path(key), msg)
    }

    /// Directory relative paths are resolved from.
    pub fn base(&self) -> &Path {
        self.base
    }

    /// The raw value of `key`, marking it used (and, for a checked reader, recording it).
    pub fn get(&mut self, key: &str) -> Option<&'a Value> {
        self.entry(key).map(json::Entry::as_value)
    }

    /// The entry of `key`, marking it used (and, for a checked reader, recording it).
    fn entry(&mut self, key: &str) -> Option<&'a json::Entry<'a>> {
        if let Some(s) = &self.schema {
            s.record(&self.prefix, key, || self.key_path(key));
        }
        self.mark(key)
    }

    /// The value of `key` as read from the text, marking it used.
    fn raw(&mut self, key: &str) -> Option<&'a Json<'a>> {
        self.entry(key).map(|e| &e.value)
    }

    /// Whether `key` is present (marks it used).
    pub fn has(&mut self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    fn number(&self, key: &str, v: &Json) -> Result<f64> {
        match v.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.err(key, format!("expected a finite number, got {v}"))),
        }
    }

    /// A required finite number.
    pub fn f64(&mut self, key: &str) -> Result<f64> {
        let v = self.raw(key).ok_or_else(|| self.err(key, "missing required parameter"))?;
        self.number(key, v)
    }

    /// An optional finite number.
    pub fn f64_or(&mut self, key: &str, default: f64) -> Result<f64> {
        match self.raw(key) {
            Some(v) => self.number(key, v),
            None => Ok(default),
        }
    }

    fn check_positive(&self, key: &str, x: f64) -> Result<f64> {
        if x > 0.0 {
            Ok(x)
        } else {
            Err(self.err(key, format!("must be > 0, got {x}")))
        }
    }

    fn check_nonneg(&self, key: &str, x: f64) -> Result<f64> {
        if x >= 0.0 {
            Ok(x)
        } else {
            Err(self.err(key, format!("must be ≥ 0, got {x}")))
        }
    }

    /// A required number > 0.
    pub fn positive(&mut self, key: &str) -> Result<f64> {
        let x = self.f64(key)?;
        self.check_positive(key, x)
    }

    /// An optional number > 0.
    pub fn positive_or(&mut self, key: &str, default: f64) -> Result<f64> {
        let x = self.f64_or(key, default)?;
        self.check_positive(key, x)
    }

    /// A required number ≥ 0.
    pub fn nonneg(&mut self, key: &str) -> Result<f64> {
        let x = self.f64(key)?;
        self.check_nonneg(key, x)
    }

    /// An optional number ≥ 0.
    pub fn nonneg_or(&mut self, key: &str, default: f64) -> Result<f64> {
        let x = self.f64_or(key, default)?;
        self.check_nonneg(key, x)
    }

    /// The array at `key` (present), of length `len` if given.
    fn numbers_at(&self, key: &str, v: &'a Json<'a>, len: Option<usize>) -> Result<&'a [Json<'a>]> {
        let arr = v.as_array().ok_or_else(|| self.err(key, format!("expected an array of numbers, got {v}")))?;
        if let Some(n) = len {
            if arr.len() != n {
                return Err(self.err(key, format!("expected {n} numbers, got {}", arr.len())));
            }
        }
        Ok(arr)
    }

    /// Element `i` of the array at `key` as a finite number.
    fn number_at(&self, key: &str, i: usize, x: &Json) -> Result<f64> {
        match x.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            _ => Err(self.err(&format!("{key}[{i}]"), format!("expected a finite number, got {x}"))),
        }
    }

    /// An array of finite numbers, of length `len` if given.
    pub fn vec_f64_opt(&mut self, key: &str, len: Option<usize>) -> Result<Option<Vec<f64>>> {
        let Some(v) = self.raw(key) else { return Ok(None) };
        let arr = self.numbers_at(key, v, len)?;
        arr.iter().enumerate().map(|(i, x)| self.number_at(key, i, x)).collect::<Result<Vec<f64>>>().map(Some)
    }

    /// A required array of numbers.
    pub fn vec_f64(&mut self, key: &str, len: Option<usize>) -> Result<Vec<f64>> {
        self.vec_f64_opt(key, len)?.ok_or_else(|| self.err(key, "missing required parameter"))
    }

    /// A 3-vector if present.
    fn vec3_opt(&mut self, key: &str) -> Result<Option<Vector3<f64>>> {
        let Some(v) = self.raw(key) else { return Ok(None) };
        let a = self.numbers_at(key, v, Some(3))?;
        Ok(Some(Vector3::new(
            self.number_at(key, 0, &a[0])?,
            self.number_at(key, 1, &a[1])?,
            self.number_at(key, 2, &a[2])?,
        )))
    }

    /// A 3-vector, with a default.
    pub fn vec3_or(&mut self, key: &str, default: [f64; 3]) -> Result<Vector3<f64>> {
        Ok(self.vec3_opt(key)?.unwrap_or_else(|| Vector3::from(default)))
    }

    /// A required 3-vector.
    pub fn vec3(&mut self, key: &str) -> Result<Vector3<f64>> {
        self.vec3_opt(key)?.ok_or_else(|| self.err(key, "missing required parameter"))
    }

    /// A non-negative integer with a default.
    pub fn usize_or(&mut self, key: &str, default: usize) -> Result<usize> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .map(|x| x as usize)
                .ok_or_else(|| self.err(key, format!("expected a non-negative integer, got {v}"))),
        }
    }

    /// A boolean with a default.
    pub fn bool_or(&mut self, key: &str, default: bool) -> Result<bool> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.err(key, format!("expected true or false, got {v}"))),
        }
    }

    /// One of `choices` (the first is the default).
    pub fn choice(&mut self, key: &str, choices: &[&'static str]) -> Result<&'static str> {
        match self.raw(key) {
            None => Ok(choices[0]),
            Some(v) => {
                let s = v.as_str().ok_or_else(|| self.err(key, format!("expected a string, got {v}")))?;
                choices
                    .iter()
                    .find(|c| **c == s)
                    .copied()
                    .ok_or_else(|| self.err(key, format!("'{s}' is not one of {}", choices.join(", "))))
            }
        }
    }

    /// A time function (number, expression, piecewise or table), with a default constant.
    pub fn time_fn_or(&mut self, key: &str, default: f64) -> Result<TimeFunction> {
        match self.get(key) {
            None => Ok(TimeFunction::Constant(default)),
            Some(v) => self.time_fn_value(v, &self.key_path(key)),
        }
    }

    /// A required time function.
    pub fn time_fn(&mut self, key: &str) -> Result<TimeFunction> {
        let v = self.get(key).ok_or_else(|| self.err(key, "missing required parameter"))?;
        self.time_fn_value(v, &self.key_path(key))
    }

    /// The time function `v` (any form, signals included when the system's loader gave
    /// this reader its wires), at JSON path `path`.
    pub fn time_fn_value(&self, v: &Value, path: &str) -> Result<TimeFunction> {
        TimeFunction::from_json_in(v, path, self.base, self.wires)
    }

    /// Three time functions `[fx, fy, fz]` (each any time-function form), default zeros.
    pub fn time_fn3_or_zero(&mut self, key: &str) -> Result<[TimeFunction; 3]> {
        let path = self.key_path(key);
        let zero = || TimeFunction::Constant(0.0);
        match self.get(key) {
            None => Ok([zero(), zero(), zero()]),
            Some(Value::Array(a)) if a.len() == 3 => {
                let f = |i: usize| self.time_fn_value(&a[i], &format!("{path}[{i}]"));
                Ok([f(0)?, f(1)?, f(2)?])
            }
            Some(v) => Err(Error::invalid(path, format!("expected three time functions [x, y, z], got {v}"))),
        }
    }

    /// A nested object, read by its own [`Params`] (finish it too).
    pub fn object(&mut self, key: &str) -> Result<Option<Params<'a>>> {
        match self.raw(key) {
            None => Ok(None),
            Some(Json::Object(m)) => Ok(Some(self.nested(key, self.key_path(key), m))),
            Some(v) => Err(self.err(key, format!("expected an object, got {v}"))),
        }
    }

    /// A required array of objects.
    pub fn objects(&mut self, key: &str) -> Result<Vec<Params<'a>>> {
        let path = self.key_path(key);
        let v = self.raw(key).ok_or_else(|| Error::invalid(&path, "missing required parameter"))?;
        let arr = v.as_array().ok_or_else(|| Error::invalid(&path, "expected an array of objects"))?;
        let item = format!("{key}[]");
        arr.iter()
            .enumerate()
            .map(|(i, x)| match x {
                Json::Object(m) => Ok(self.nested(&item, format!("{path}[{i}]"), m)),
                _ => Err(Error::invalid(format!("{path}[{i}]"), "expected an object")),
            })
            .collect()
    }

    /// Reject keys that were never read (after [`check_documented`](Params::check_documented)).
    pub fn finish(self) -> Result<()> {
        self.check_documented()?;
        let mut unknown: Vec<&str> =
            self.map.keys().enumerate().filter(|(i, k)| !self.was_used(*i, k)).map(|(_, k)| k).collect();
        unknown.sort();
        match unknown.first() {
            None => Ok(()),
            Some(k) => Err(self.err(k, self.unknown_message(k))),
        }
    }

    /// "unknown parameter", with the closest documented key of this object, or, for a key
    /// the table documents but this reading did not take (a parameter of another friction
    /// law or mode), which one takes it.
    fn unknown_message(&self, key: &str) -> String {
        let Some(s) = &self.schema else { return "unknown parameter".into() };
        let docs = s.ty.params;
        let full = format!("{}{key}", self.prefix);
        if let Some(d) = docs.iter().find(|d| d.name == full) {
            // Law-specific docs start with the law's name: "stribeck: …".
            let owner = d.doc.split_once(':').map(|(o, _)| o.trim()).filter(|o| !o.contains(' '));
            let default_law = || {
                let law = format!("{}law", self.prefix);
                docs.iter().find(|d| d.name == law).and_then(|d| d.default).map(|t| t.trim_matches('"'))
            };
            let law = self.map.get("law").and_then(Json::as_str).or_else(default_law);
            return match (owner, law) {
                (Some(o), Some(l)) => {
                    format!("unknown parameter for law \"{l}\": '{key}' is a parameter of law \"{o}\" ({})", d.doc)
                }
                (Some(o), None) => format!("unused parameter: '{key}' is taken only with {o} ({})", d.doc),
                _ => format!("parameter '{key}' is not used with these settings ({})", d.doc),
            };
        }
        let siblings = sibling_names(docs, &self.prefix);
        format!("unknown parameter{}", crate::error::suggestion(key, siblings.iter().map(String::as_str)))
    }
}

/// The keys a table documents directly in the object at `prefix` (`""`, `"law."`, `"links[]."`).
fn sibling_names(docs: &[ParamDoc], prefix: &str) -> Vec<String> {
    let mut out: Vec<String> = docs
        .iter()
        .filter_map(|d| d.name.strip_prefix(prefix))
        .map(|rest| rest.split(['.', '[']).next().unwrap_or(rest).to_string())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The first key of a component object that its type's table does not document at all,
/// as an "unknown parameter" error with the closest documented key.
fn stray_key(ty: &ComponentType, path: &str, map: &Object) -> Option<(String, String)> {
    // Whether k is the object key a table name starts with (`law` of `law.F`, `links` of
    // `links[].mass`), without splitting every name of the table.
    let documented = |k: &str| {
        !k.contains(['.', '['])
            && ty
                .params
                .iter()
                .any(|d| d.name.strip_prefix(k).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '['])))
    };
    let mut stray: Vec<&str> = map.keys().filter(|k| *k != "type" && !documented(k)).collect();
    stray.sort();
    stray.first().map(|k| {
        let known = sibling_names(ty.params, "");
        (format!("{path}.{k}"), crate::error::suggestion(k, known.iter().map(String::as_str)))
    })
}

/// The error of a connection that does not read as one (`plain`: the error of reading it
/// alone), with its JSON path and its place in the file: the file is read again with path
/// tracking and typed connections.
fn malformed_connection(text: &str, plain: serde_json::Error) -> Error {
    let de = &mut serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize::<_, CheckedConnections>(de) {
        Err(e) => Error::invalid(e.path().to_string(), e.into_inner().to_string()),
        Ok(_) => Error::invalid("connections", plain.to_string()),
    }
}

/// Components built per parallel chunk while loading: large enough to keep the workers
/// busy, small enough that the chunk's waiting nodes cost no peak memory.
const LOAD_CHUNK: usize = 4096;
/// Below this many components a load is serial (starting the workers costs more).
const PARALLEL_LOAD_MIN: usize = 256;

/// Parse component `name` from its raw JSON text `raw` and build it into a node (not yet
/// in a network). Runs on any thread; every error names the JSON path.
fn build_component(
    name: &str,
    raw: &str,
    registry: &Registry,
    base: &Path,
    stop_time: f64,
    wires: &Wires,
) -> Result<(NewNode, &'static str)> {
    let path = concat(&["components.", name]);
    check_name(name, &path)?;
    let map = Object::parse(raw).map_err(|e| Error::invalid(&path, e.to_string()))?;
    let map = &map.ok_or_else(|| Error::invalid(&path, "expected an object"))?;
    build_object(name, path, map, registry, base, stop_time, wires)
}

/// Build component `name`, at JSON path `path`, from its parsed object `map`.
fn build_object(
    name: &str,
    path: String,
    map: &Object,
    registry: &Registry,
    base: &Path,
    stop_time: f64,
    wires: &Wires,
) -> Result<(NewNode, &'static str)> {
    // Between components, a stop request ends the load (an FMU's instantiation included).
    crate::cancel::check()?;
    let type_name = map
        .get("type")
        .ok_or_else(|| Error::invalid(format!("{path}.type"), "missing component type"))?
        .as_str()
        .ok_or_else(|| Error::invalid(format!("{path}.type"), "expected a string"))?;
    let ty = registry.get(type_name).ok_or_else(|| {
        let known: Vec<&str> = registry.types().map(|t| t.name).collect();
        let msg = match crate::error::closest(type_name, known.iter().copied()) {
            Some(c) => format!("unknown component type '{type_name}' (did you mean '{c}'?)"),
            None => format!("unknown component type '{type_name}' (known: {})", known.join(", ")),
        };
        Error::invalid(format!("{path}.type"), msg)
    })?;
    let stray = stray_key(ty, &path, map);
    check_step_keys(map.get("communication_step").and_then(Json::as_f64), &path, stop_time)?;
    let mut p = Params::for_type(ty, path, map, base).with_wires(wires);
    let built = (ty.build)(&mut p);
    // An undocumented key is the builder's fault: report it before the build's own error.
    p.check_documented()?;
    // A stray key first (`mas` before "missing mass"); an old key name (`force` where
    // a table law now reads `levels`) has no near name, and then what the builder
    // misses says what to write instead.
    if let Some((at, hint)) = stray {
        return Err(match built {
            Err(missing) if hint.is_empty() => Error::invalid(at, format!("unknown parameter; {missing}")),
            _ => Error::invalid(at, format!("unknown parameter{hint}")),
        });
    }
    let built = built?;
    let node = match built {
        Built::Admittance(a) => NewNode::admittance(name, a),
        Built::Impedance(i) => NewNode::impedance(name, i),
        Built::Block(b) => NewNode::block(name, b),
    };
    // The reader's path, kept only for the node's error (reported after the reader's).
    let path = node.is_err().then(|| p.path().to_string());
    p.finish()?;
    Ok((node.map_err(|e| Error::invalid(path.unwrap_or_default(), e.to_string()))?, ty.name))
}

/// Check the solver settings and the output interval (which is returned).
fn check_solver(s: &SolverSpec, output: &OutputSpec) -> Result<f64> {
    if !(s.step.is_finite() && s.step > 0.0) {
        return Err(Error::invalid("solver.step", format!("must be a positive number, got {}", s.step)));
    }
    if !(s.stop_time.is_finite() && s.stop_time > 0.0) {
        return Err(Error::invalid("solver.stop_time", format!("must be a positive number, got {}", s.stop_time)));
    }
    if let Some(n) = s.threads {
        check_threads(n, "solver.threads")?;
    }
    check_step_count(s.step, s.stop_time)?;
    if let Some(l) = &s.loop_ {
        if let Some(t) = l.tolerance {
            if !(t.is_finite() && t > 0.0) {
                return Err(Error::invalid("solver.loop.tolerance", format!("expected a positive number, got {t}")));
            }
        }
        if let Some(n) = l.max_iterations.filter(|n| !(1..=MAX_LOOP_ITERATIONS).contains(n)) {
            return Err(Error::invalid(
                "solver.loop.max_iterations",
                format!("expected a whole number from 1 to {MAX_LOOP_ITERATIONS}, got {n}"),
            ));
        }
    }
    for (i, name) in s.order.iter().enumerate() {
        if s.order[..i].contains(name) {
            return Err(Error::invalid(format!("solver.order[{i}]"), format!("'{name}' is listed twice")));
        }
    }
    if s.step > s.stop_time {
        return Err(Error::invalid(
            "solver.step",
            format!("the step {} s is longer than the stop time {} s", s.step, s.stop_time),
        ));
    }
    let interval = output.interval.unwrap_or(s.step);
    if !(interval.is_finite() && interval >= s.step * (1.0 - 1e-9)) {
        return Err(Error::invalid(
            "output.interval",
            format!("must be at least the step {} s, got {interval}", s.step),
        ));
    }
    Ok(interval)
}

/// The end of a load: the network validated, the output columns and the system's name
/// checked.
#[allow(clippy::too_many_arguments)]
fn finish_system(
    name: Option<String>,
    output: &OutputSpec,
    s: &SolverSpec,
    interval: f64,
    network: Network,
    kinds: Vec<(NodeIndex, &'static str)>,
    file: &Path,
    inputs: BTreeMap<String, InputSpec>,
    wires: Wires,
) -> Result<System> {
    network.validate()?;
    for (n, spec) in &inputs {
        let path = format!("inputs.{n}");
        check_name(n, &path)?;
        if n.contains('.') || n.contains('[') || n == "t" || n == "ground" {
            return Err(Error::invalid(path, "an input's name has no '.' or '[' and is not 't' or 'ground'"));
        }
        if network.find(n).is_some() {
            return Err(Error::invalid(path, format!("a component is also named '{n}'")));
        }
        if !spec.start.is_finite() {
            return Err(Error::invalid(format!("{path}.start"), "must be a finite number"));
        }
    }
    let columns: Vec<(String, String)> = match &output.signals {
        Signals::List(v) => v.iter().map(|s| (s.clone(), s.clone())).collect(),
        Signals::Labeled(m) => m
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_string()))
                    .ok_or_else(|| Error::invalid(format!("output.signals.{k}"), "expected a signal name string"))
            })
            .collect::<Result<Vec<_>>>()?,
    };
    for (label, _) in &columns {
        check_name(label, &format!("output.signals.{label}"))?;
    }
    let name = name.unwrap_or_else(|| file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    check_name(&name, "name")?;
    Ok(System {
        name,
        file: file.to_path_buf(),
        network,
        method: s.method,
        step: s.step,
        stop_time: s.stop_time,
        interval,
        threads: s.threads,
        switches: s.events,
        hold: s.hold,
        blocks: BlockOptions {
            gauss_seidel: s.blocks == BlockAlgorithm::GaussSeidel,
            order: s.order.clone(),
            tolerance: s.loop_.and_then(|l| l.tolerance).unwrap_or(BlockOptions::default().tolerance),
            max_iterations: s.loop_.and_then(|l| l.max_iterations).unwrap_or(BlockOptions::default().max_iterations),
        },
        columns,
        kinds,
        inputs: inputs.into_iter().collect(),
        parameters: Vec::new(),
        wires: wires.into_sorted(),
    })
}

/// A system read from JSON, ready to compile.
pub struct System {
    pub name: String,
    pub file: PathBuf,
    pub network: Network,
    pub method: Method,
    pub step: f64,
    pub stop_time: f64,
    pub interval: f64,
    pub threads: Option<usize>,
    /// Which switches a step locates (`"solver": {"events": ...}`).
    pub switches: Switches,
    /// Whether stiff elements are held implicitly (`"solver": {"hold": ...}`).
    pub hold: Hold,
    /// How signal blocks step.
    pub blocks: BlockOptions,
    /// (label, signal name) per output column.
    pub columns: Vec<(String, String)>,
    /// Each component's node and type name, in file order (the names are the network's).
    kinds: Vec<(NodeIndex, &'static str)>,
    /// The system's inputs (top-level `"inputs"`), in name order.
    pub inputs: Vec<(String, InputSpec)>,
    /// The parameters an exported FMU offers (top-level `"parameters"`), in name order.
    pub parameters: Vec<(String, ParameterSpec)>,
    /// The signals the components' time functions read, in JSON-path order.
    pub wires: Vec<WireUse>,
}

impl System {
    /// Read a system from JSON text; `file` is only used for the system's default name.
    /// The engine's reader: a file is loaded through the library's pipeline
    /// (`stiction::open`, lib/src/pipeline.rs), which calls this once its edits are applied.
    pub fn from_str(text: &str, file: &Path, base: &Path, registry: &Registry) -> Result<System> {
        // One pass over the text when the file is well formed and its solver comes first;
        // otherwise (and for every error) the two-pass loader below.
        if let Some(system) = stream::load(text, file, base, registry) {
            return system;
        }
        // The one-pass loader gives up on a stop request too: no second pass then.
        crate::cancel::check()?;
        // The plain reader is fast; the path-tracking one runs only to name where the
        // error is (it stops at the same place).
        let spec: SystemSpec = match serde_json::from_str(text) {
            Ok(spec) => spec,
            Err(plain) => {
                let de = &mut serde_json::Deserializer::from_str(text);
                return Err(match serde_path_to_error::deserialize::<_, SystemSpec>(de) {
                    Err(e) => {
                        let p = e.path().to_string();
                        let p = if p == "." { "(top level)".to_string() } else { p };
                        Error::invalid(p, e.into_inner().to_string())
                    }
                    Ok(_) => Error::invalid("(top level)", plain.to_string()),
                });
            }
        };
        Self::from_spec(spec, text, file, base, registry)
    }

    fn from_spec(spec: SystemSpec, text: &str, file: &Path, base: &Path, registry: &Registry) -> Result<System> {
        let s = &spec.solver;
        let interval = check_solver(s, &spec.output)?;

        let mut network = Network::with_capacity(spec.components.0.len(), 0);
        let mut kinds = Vec::with_capacity(spec.components.0.len());
        if spec.components.0.is_empty() {
            return Err(Error::invalid("components", "a system needs at least one component"));
        }
        // Each component is parsed and built on the worker threads, a chunk at a time, and
        // added in file order while the workers build the next chunk: names, node indices,
        // results and the first error (in file order) are those of a serial load. One
        // thread, or "threads": 1 outside any pool, builds serially.
        let serial = rayon::current_num_threads() == 1
            || (rayon::current_thread_index().is_none() && s.threads == Some(1))
            || spec.components.0.len() < PARALLEL_LOAD_MIN;
        let wires = Wires::default();
        let build =
            |(name, raw): &(Cow<str>, &RawValue)| build_component(name, raw.get(), registry, base, s.stop_time, &wires);
        let add = |network: &mut Network, kinds: &mut Vec<_>, chunk: &[(Cow<str>, &RawValue)], made: &mut Vec<_>| {
            for ((name, _), m) in chunk.iter().zip(made.drain(..)) {
                let (node, ty) = m?;
                let added =
                    network.add_new(node).map_err(|e| Error::invalid(format!("components.{name}"), e.to_string()))?;
                kinds.push((added, ty));
            }
            Ok::<(), Error>(())
        };
        let chunks: Vec<_> = spec.components.0.chunks(LOAD_CHUNK).collect();
        let (mut made, mut next) = (Vec::new(), Vec::new());
        if serial {
            for chunk in chunks {
                made.extend(chunk.iter().map(build));
                add(&mut network, &mut kinds, chunk, &mut made)?;
            }
        } else {
            use rayon::prelude::*;
            chunks[0].par_iter().map(build).collect_into_vec(&mut made);
            for (k, chunk) in chunks.iter().enumerate() {
                let (added, ()) = rayon::join(
                    || add(&mut network, &mut kinds, chunk, &mut made),
                    || {
                        if let Some(c) = chunks.get(k + 1) {
                            c.par_iter().map(build).collect_into_vec(&mut next);
                        }
                    },
                );
                added?;
                std::mem::swap(&mut made, &mut next);
            }
        }
        if let Some(raw) = spec.connections {
            // Every impedance port takes exactly one connection.
            network.reserve_links();
            let mut failed = None;
            let de = &mut serde_json::Deserializer::from_str(raw.get());
            let seed = Connect { network: &mut network, failed: &mut failed, parallel: !serial };
            if let Err(e) = serde::de::DeserializeSeed::deserialize(seed, de) {
                return Err(match failed {
                    Some(e) => e,
                    None => malformed_connection(text, e),
                });
            }
        }
        let mut system = finish_system(spec.name, &spec.output, s, interval, network, kinds, file, spec.inputs, wires)?;
        for (n, p) in &spec.parameters {
            let path = format!("parameters.{n}");
            check_name(n, &path)?;
            if n.contains('.') || n.contains('[') || n == "time" {
                return Err(Error::invalid(path, "a parameter's name has no '.' or '[' and is not 'time'"));
            }
            if p.set.trim().is_empty() {
                return Err(Error::invalid(format!("{path}.set"), "expected a --set path, e.g. brake.law.F"));
            }
        }
        system.parameters = spec.parameters.into_iter().collect();
        Ok(system)
    }

    /// (component name, type name) in file order.
    pub fn components(&self) -> impl Iterator<Item = (&str, &'static str)> + '_ {
        self.kinds.iter().map(|&(ix, ty)| (self.network.name(ix), ty))
    }

    /// Compile and prepare a simulator for `threads` threads, and the run plan with the
    /// output signals resolved.
    pub fn into_simulator(self, threads: usize) -> Result<(Simulator, RunPlan)> {
        // What the simulator does not need goes before the schedule is built (the peak).
        drop(self.kinds);
        let sched = Schedule::compile(self.network)?;
        let mut sim = Simulator::with_hold(sched, self.method, self.step, threads, self.hold)?;
        sim.locate(self.switches);
        let inputs: Vec<(String, f64)> = self.inputs.iter().map(|(n, i)| (n.clone(), i.start)).collect();
        sim.connect_signals(&inputs, self.wires, self.blocks)?;
        let mut columns = Vec::new();
        for (label, sig) in &self.columns {
            let refs = sim.resolve_columns(sig).map_err(|e| match e {
                Error::Invalid { message, .. } => {
                    Error::invalid(format!("output.signals.{label}"), format!("'{sig}': {message}"))
                }
                other => other,
            })?;
            columns.extend(refs.into_iter().map(|(suffix, r)| (format!("{label}{suffix}"), r)));
        }
        Ok((sim, RunPlan { stop_time: self.stop_time, interval: self.interval, columns }))
    }
}

/// Findings about a compiled system, each prefixed with its component's name: stability
/// and well-posedness of every element ([`Impedance::diagnose`], [`Admittance::diagnose`])
/// and sampling that does not fall on steps. Polls [`crate::cancel`]: once a stop is
/// requested it returns what it found so far, and the caller should ask
/// [`crate::cancel::requested`] before trusting the list as complete.
pub fn diagnostics(sim: &Simulator, plan: &RunPlan) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let sched = sim.schedule();
    let ratio = plan.interval / sim.step_size();
    if (ratio - ratio.round()).abs() > 1e-6 * ratio.max(1.0) {
        out.push(Diagnostic::Warning(format!(
            "output.interval {} s is not a whole number of steps ({} s); rows are written every {} steps",
            plan.interval,
            sim.step_size(),
            ratio.round().max(1.0)
        )));
    }
    match sim.shortened_last_step(plan.stop_time) {
        Some(Ok(rest)) => out.push(Diagnostic::Info(format!(
            "stop time {} s is not a whole number of steps: the last step is shortened to {rest:.6e} s (every \
             signal block declares canHandleVariableCommunicationStepSize)",
            plan.stop_time
        ))),
        Some(Err((rest, fixed))) => {
            let n = crate::stepper::bus::step_count(plan.stop_time, sim.step_size());
            let names: Vec<String> = fixed.iter().map(|b| format!("'{b}'")).collect();
            out.push(Diagnostic::Warning(format!(
                "stop_time {} s is not a whole number of communication steps of {} s: the last step would have to \
                 be shortened to {rest:.6e} s, but the signal block(s) {} do not declare \
                 canHandleVariableCommunicationStepSize=\"true\"; every step keeps {} s and the run ends at t = {} s",
                plan.stop_time,
                sim.step_size(),
                names.join(", "),
                sim.step_size(),
                n as f64 * sim.step_size()
            )))
        }
        None => {}
    }
    let named = |name: &str, d: Diagnostic| match d {
        Diagnostic::Info(s) => Diagnostic::Info(format!("{name}: {s}")),
        Diagnostic::Warning(s) => Diagnostic::Warning(format!("{name}: {s}")),
    };
    // On a stop request ([`crate::cancel`]) the findings so far are returned.
    for (j, name) in sched.admittance_names().iter().enumerate() {
        if crate::cancel::requested() {
            return out;
        }
        for d in sched.admittance(j).diagnose(sched.admittance_state(j, sim.state()), sim.step_size()) {
            out.push(named(name, d));
        }
    }
    for (b, name) in sched.block_names.iter().enumerate() {
        for d in sched.blocks[b].diagnose() {
            out.push(named(name, d));
        }
    }
    let bases = crate::stability::PortBases::new(sched, sim.state(), sim.method());
    let mut springs = crate::stability::Springs::new(sched);
    let mut inertias = Vec::new();
    for &i in sched.impedances_in_network_order() {
        if crate::cancel::requested() {
            return out;
        }
        let name = &sched.impedance_names()[i];
        bases.inertias_into(sched, i, &mut inertias);
        let imp = sched.impedance(i);
        springs.record(i, imp.stuck_spring());
        for d in imp.diagnose(&inertias, sim.step_size()) {
            out.push(named(name, d));
        }
    }
    out.extend(crate::stability::diagnostics_with(sched, &bases, springs, sim.state(), sim.method(), sim.step_size()));
    out
}
