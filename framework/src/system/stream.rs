//! The single-pass loader: a system file read once, front to back, each component built as
//! soon as it (one thread) or a chunk of them (worker threads) is read, then the
//! connections. On one thread a component is parsed straight into its [`Object`] tree and
//! built at once; with worker threads the reading thread (one of the pool's, which builds
//! too while it waits) only skips over it, and the worker that builds it parses it, while
//! the reading thread reads the next chunk and adds the previous one to the network; then
//! it reads the connections while a job of the pool makes them ([`Pipelined`]).
//!
//! The two-pass loader ([`System::from_spec`](super::System)) first skips over every
//! component to find the file's structure and then parses each one again; on chain-10k the
//! skip alone was a tenth of a one-step run, and at 10⁵ components it ran alone on one core
//! before any component was built.
//!
//! This loader handles the common case only and gives up (`None`) on anything else: a file
//! whose `"solver"` does not come before `"components"`, connections before the components,
//! and every error of any kind. The caller then loads the file with the two-pass loader,
//! whose errors (messages, JSON paths, their order) are the reference; so this loader need
//! not reproduce any error, only build exactly what the two-pass loader builds whenever it
//! succeeds: the same components from the same trees (a component's tree parsed in place
//! is the tree of its text parsed alone), added and connected in file order.

use super::json::{Json, Object};
use super::{
    build_object, check_name, check_solver, concat, connect_chunk, finish_system, Connect, ConnectionSpec, Name,
    OutputSpec, Registry, SolverSpec, System, LOAD_CHUNK, PARALLEL_LOAD_MIN,
};
use crate::error::{Error, Result};
use crate::network::{Network, NewNode};
use crate::signal::Wires;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// One component as read: its name and its value.
type Read<'a> = (Cow<'a, str>, Value<'a>);

/// A component's value as read: parsed on this thread (a serial load), or its text, to
/// be parsed by the worker that builds it (so that this thread only skips over it).
enum Value<'a> {
    Tree(Json<'a>),
    Text(&'a serde_json::value::RawValue),
}
/// One component as built: its node and type name.
type Made = Result<(NewNode, &'static str)>;

/// Load `text` in one pass, or `None` to have the two-pass loader do it (see the module).
pub(super) fn load(text: &str, file: &Path, base: &Path, registry: &Registry) -> Option<Result<System>> {
    let failed = std::sync::Mutex::new(None);
    let loaded = load_once(text, file, base, registry, &failed);
    // A component whose building failed at a cost (an FMU's process that ended or did not
    // answer within its call timeout) is not built again by the two-pass loader.
    match failed.into_inner().ok().flatten() {
        Some(e) => Some(Err(e)),
        None => loaded.map(Ok),
    }
}

fn load_once(
    text: &str,
    file: &Path,
    base: &Path,
    registry: &Registry,
    failed: &std::sync::Mutex<Option<Error>>,
) -> Option<System> {
    let mut state = State::default();
    let wires = Wires::default();
    let text_end = text.as_ptr() as usize + text.len();
    let outside = rayon::current_thread_index().is_none();
    let top = Top { registry, base, wires: &wires, failed, text_end, outside, state: &mut state };
    let de = &mut serde_json::Deserializer::from_str(text);
    let pipelined = rayon::current_num_threads() > 1 && outside;
    let read = if pipelined {
        // Chunks are built by jobs of this scope while the reading thread reads on. The
        // reading runs on a thread of the pool, which builds too while it waits for a
        // chunk: two busy threads on two cores, not a reader beside two builders (on
        // chain-10k, 2 threads, the components took a median 16.5 ms instead of 18.2 and the
        // connections 4.0 instead of 5.3).
        rayon::scope(|scope| top.deserialize_with(de, Some(scope)))
    } else {
        top.deserialize_with(de, None)
    };
    read.ok()?;
    de.end().ok()?;
    let solver = state.solver?;
    let output = state.output.unwrap_or_default();
    let interval = check_solver(&solver, &output).ok()?;
    let (network, kinds) = match (state.network, state.made) {
        (Some(n), _) => n,
        (None, Some(Components::Added(n))) => *n,
        // No connections key: the components are added now.
        (None, Some(Components::Built(made))) => add_all(made).ok()?,
        (None, None) => return None,
    };
    // A file with "inputs" is left to the two-pass loader (not a key read here).
    finish_system(state.name, &output, &solver, interval, network, kinds, file, Default::default(), wires).ok()
}

/// What has been read so far.
#[derive(Default)]
struct State {
    seen: [bool; 7],
    name: Option<String>,
    solver: Option<SolverSpec>,
    output: Option<OutputSpec>,
    /// The components, built or added (until the connections are read).
    made: Option<Components>,
    /// The network with every component added (once the connections are read).
    network: Option<Connected>,
}

/// The components as read.
enum Components {
    /// Built, a chunk per entry, in file order: to be added.
    Built(Vec<Vec<Made>>),
    /// Added to a network (a pipelined load adds each chunk as it is built).
    Added(Box<Connected>),
}

/// How many components a file holds at most, judged from its first chunk `read` of them
/// (their values' text) and the address just past the file's text, `text_end`.
fn estimate(read: &[Read], text_end: usize) -> usize {
    fn text<'a>(v: &Value<'a>) -> Option<&'a str> {
        match v {
            Value::Text(raw) => Some(raw.get()),
            Value::Tree(_) => None,
        }
    }
    let (Some(first), Some(last)) = (read.first().and_then(|r| text(&r.1)), read.last().and_then(|r| text(&r.1)))
    else {
        return read.len();
    };
    let start = first.as_ptr() as usize;
    let bytes = (last.as_ptr() as usize + last.len()).saturating_sub(start).max(1);
    let left = text_end.saturating_sub(start);
    // At least the chunk, at most one per two bytes left.
    (left.saturating_mul(read.len()) / bytes).clamp(read.len(), left / 2 + read.len())
}

/// Add every built component to a network sized for them, in file order.
fn add_all(made: Vec<Vec<Made>>) -> Result<Connected> {
    let count: usize = made.iter().map(Vec::len).sum();
    let mut added = (Network::with_capacity(count, 0), Vec::with_capacity(count));
    for chunk in made {
        add_chunk(&mut added, chunk)?;
    }
    Ok(added)
}

/// Add a chunk of built components, in order.
fn add_chunk((network, kinds): &mut Connected, chunk: Vec<Made>) -> Result<()> {
    for m in chunk {
        let (node, ty) = m?;
        kinds.push((network.add_new(node)?, ty));
    }
    Ok(())
}

/// The top-level object.
struct Top<'r, 's> {
    registry: &'r Registry,
    base: &'r Path,
    wires: &'r Wires,
    /// The first component error not worth repeating (an [`Error::Simulation`] at load).
    failed: &'r std::sync::Mutex<Option<Error>>,
    /// The address just past the text (to estimate how many components it holds).
    text_end: usize,
    /// Whether the load was called from outside a rayon pool (as the two-pass loader
    /// decides what runs serially).
    outside: bool,
    state: &'s mut State,
}

/// The keys of the top level, in the order of [`State::seen`].
const KEYS: [&str; 7] = ["$schema", "name", "description", "solver", "output", "components", "connections"];

/// Any reason to give up (its text is never shown).
fn give_up<E: serde::de::Error>() -> E {
    E::custom("left to the two-pass loader")
}

impl<'r, 's> Top<'r, 's> {
    fn deserialize_with<'de, 'sc>(
        self,
        de: &mut serde_json::Deserializer<serde_json::de::StrRead<'de>>,
        scope: Option<&rayon::Scope<'sc>>,
    ) -> std::result::Result<(), serde_json::Error>
    where
        'r: 'sc,
        'de: 'sc,
    {
        serde::Deserializer::deserialize_map(de, TopVisitor { top: self, scope })
    }
}

struct TopVisitor<'r, 's, 'c, 'sc> {
    top: Top<'r, 's>,
    scope: Option<&'c rayon::Scope<'sc>>,
}

impl<'de: 'sc, 'r: 'sc, 's, 'c, 'sc> Visitor<'de> for TopVisitor<'r, 's, 'c, 'sc> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a system object")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<(), M::Error> {
        let Top { registry, base, wires, failed, text_end, outside, state } = self.top;
        while let Some(Name(key)) = m.next_key()? {
            let k = KEYS.iter().position(|k| *k == key).ok_or_else(give_up)?;
            if std::mem::replace(&mut state.seen[k], true) {
                return Err(give_up());
            }
            match k {
                0 | 2 => drop(m.next_value::<Option<String>>()?),
                1 => state.name = m.next_value()?,
                3 => state.solver = Some(m.next_value()?),
                4 => state.output = Some(m.next_value()?),
                5 => {
                    let solver = state.solver.as_ref().ok_or_else(give_up)?;
                    // As the two-pass loader decides (a small system is built serially).
                    let serial = rayon::current_num_threads() == 1 || (outside && solver.threads == Some(1));
                    let seed = ComponentsSeed {
                        registry,
                        base,
                        wires,
                        failed,
                        stop_time: solver.stop_time,
                        serial,
                        scope: self.scope,
                        text_end,
                    };
                    state.made = Some(m.next_value_seed(seed)?);
                }
                _ => {
                    let (mut network, kinds) = match state.made.take().ok_or_else(give_up)? {
                        // Read while a job of the pool makes the connections.
                        Components::Added(added) => {
                            state.network = Some(m.next_value_seed(Pipelined { added: *added })?);
                            continue;
                        }
                        Components::Built(made) => add_all(made).map_err(|_| give_up::<M::Error>())?,
                    };
                    network.reserve_links();
                    let mut failed = None;
                    let serial = rayon::current_num_threads() == 1
                        || (outside && state.solver.as_ref().and_then(|s| s.threads) == Some(1))
                        || kinds.len() < PARALLEL_LOAD_MIN;
                    m.next_value_seed(Connect { network: &mut network, failed: &mut failed, parallel: !serial })?;
                    state.network = Some((network, kinds));
                }
            }
        }
        Ok(())
    }
}

/// The `"components"` object: read a chunk at a time, each chunk built (see [`load`]).
struct ComponentsSeed<'r, 'c, 'sc> {
    registry: &'r Registry,
    base: &'r Path,
    wires: &'r Wires,
    failed: &'r std::sync::Mutex<Option<Error>>,
    stop_time: f64,
    serial: bool,
    scope: Option<&'c rayon::Scope<'sc>>,
    text_end: usize,
}

impl<'de: 'sc, 'r: 'sc, 'c, 'sc> DeserializeSeed<'de> for ComponentsSeed<'r, 'c, 'sc> {
    type Value = Components;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de: 'sc, 'r: 'sc, 'c, 'sc> Visitor<'de> for ComponentsSeed<'r, 'c, 'sc> {
    type Value = Components;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> std::result::Result<Self::Value, M::Error> {
        let (registry, base, stop_time, wires, failed) =
            (self.registry, self.base, self.stop_time, self.wires, self.failed);
        let build = move |(name, value): Read<'de>| -> Made {
            let path = concat(&["components.", &name]);
            check_name(&name, &path)?;
            let map = match value {
                Value::Tree(Json::Object(map)) => map,
                Value::Text(raw) => match Object::parse(raw.get()) {
                    Ok(Some(map)) => map,
                    Ok(None) => return Err(Error::invalid(path, "expected an object")),
                    Err(e) => return Err(Error::invalid(path, e.to_string())),
                },
                Value::Tree(_) => return Err(Error::invalid(path, "expected an object")),
            };
            let made = build_object(&name, path, &map, registry, base, stop_time, wires);
            if let Err(Error::Simulation { time, component, message }) = &made {
                if let Ok(mut f) = failed.lock() {
                    f.get_or_insert_with(|| Error::Simulation {
                        time: *time,
                        component: component.clone(),
                        message: message.clone(),
                    });
                }
            }
            made
        };
        let mut made: Vec<Vec<Made>> = Vec::new();
        // With jobs of the scope, each chunk is added to this network as soon as it is
        // built, while the next one builds (its size is not known until the end).
        let mut added: Option<Connected> = None;
        let mut chunk: Vec<Read<'de>> = Vec::with_capacity(LOAD_CHUNK);
        // The chunk being built by a job of the scope, received here in file order.
        let (tx, rx) = std::sync::mpsc::channel::<Vec<Made>>();
        let mut pending = 0usize;
        let mut first = true;
        loop {
            // A stop request ([`crate::cancel`]) ends the read; the caller sees it.
            if crate::cancel::requested() {
                return Err(give_up());
            }
            let mut next = m.next_key::<Name>()?;
            if let Some(Name(name)) = next.take_if(|_| self.serial) {
                // On one thread each component is built as soon as it is parsed: its tree
                // is freed while still in the cache, and the next one's reuses its memory
                // (parsing a chunk of trees first and then building them was 1.5x the
                // allocator's time).
                let one = build((name, Value::Tree(m.next_value()?)));
                if made.last().is_none_or(|c| c.len() == LOAD_CHUNK) {
                    made.push(Vec::with_capacity(LOAD_CHUNK));
                }
                if let Some(c) = made.last_mut() {
                    c.push(one);
                }
                continue;
            }
            if let Some(Name(name)) = next {
                let value = Value::Text(m.next_value()?);
                chunk.push((name, value));
                if chunk.len() < LOAD_CHUNK {
                    continue;
                }
            }
            let end = chunk.len() < LOAD_CHUNK;
            let full = std::mem::replace(&mut chunk, if end { Vec::new() } else { Vec::with_capacity(LOAD_CHUNK) });
            // Serial as the two-pass loader: one thread, "threads": 1, or a small system.
            let serial = self.serial || (first && end && full.len() < PARALLEL_LOAD_MIN);
            first = false;
            if !full.is_empty() {
                use rayon::prelude::*;
                match self.scope {
                    Some(scope) if !serial => {
                        // At most one chunk in flight: the previous one is taken first,
                        // and added while this one builds.
                        let previous = match pending {
                            0 => None,
                            _ => Some(recv_helping(&rx).ok_or_else(give_up::<M::Error>)?),
                        };
                        // Sized once, from the first chunk: its components per byte times
                        // the bytes left in the file (more than enough: the connections
                        // follow). Grown by doubling, the name table would hash every name
                        // again at each step.
                        let room = match &added {
                            Some(_) => 0,
                            None if end => full.len(),
                            None => estimate(&full, self.text_end),
                        };
                        let tx = tx.clone();
                        scope.spawn(move |_| {
                            let _ = tx.send(full.into_par_iter().map(build).collect());
                        });
                        pending = 1;
                        let added =
                            added.get_or_insert_with(|| (Network::with_capacity(room, 0), Vec::with_capacity(room)));
                        if let Some(previous) = previous {
                            add_chunk(added, previous).map_err(|_| give_up::<M::Error>())?;
                        }
                    }
                    _ if !serial => made.push(full.into_par_iter().map(build).collect()),
                    _ => made.push(full.into_iter().map(build).collect()),
                }
            }
            if end {
                break;
            }
        }
        if let Some(mut added) = added {
            if pending > 0 {
                let last = recv_helping(&rx).ok_or_else(give_up::<M::Error>)?;
                add_chunk(&mut added, last).map_err(|_| give_up::<M::Error>())?;
            }
            return Ok(Components::Added(Box::new(added)));
        }
        if made.is_empty() || made.iter().flatten().any(|m| m.is_err()) {
            return Err(give_up());
        }
        Ok(Components::Built(made))
    }
}

/// The next value from `rx`, or `None` when every sender is gone. On a thread of a rayon
/// pool it runs the pool's pending jobs (the chunks being built) while it waits.
fn recv_helping<T>(rx: &std::sync::mpsc::Receiver<T>) -> Option<T> {
    use std::sync::mpsc::TryRecvError;
    if rayon::current_thread_index().is_none() {
        return rx.recv().ok();
    }
    loop {
        match rx.try_recv() {
            Ok(v) => return Some(v),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {
                if rayon::yield_now() != Some(rayon::Yield::Executed) {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// Connections per chunk handed from the reading thread to the connecting job.
const CONNECT_CHUNK: usize = 1024;

/// The `"connections"` array read on this thread while a job of the pool adds the built
/// components to the network and then makes the connections, a chunk at a time in file
/// order, as soon as each chunk is read: the reading and the connecting overlap (each is
/// about half of the work).
struct Pipelined {
    added: Connected,
}

/// The network with its components (and connections), and the component types.
type Connected = (Network, Vec<(petgraph::graph::NodeIndex, &'static str)>);

impl<'de> DeserializeSeed<'de> for Pipelined {
    type Value = Connected;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Connected, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Pipelined {
    type Value = Connected;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Connected, A::Error> {
        // The reader never waits for the connecting job: it reads on a thread of the pool,
        // and a reader blocked there could hold up the very job it waits for (no other
        // thread free to take it). A job no other thread took runs at the end of the scope.
        // The chunks read ahead cost at most the connections' borrowed specs.
        let (tx, rx) = std::sync::mpsc::channel::<Vec<ConnectionSpec<'de>>>();
        let added = self.added;
        let mut connected = None;
        let read = rayon::in_place_scope(|scope| {
            // Owned here, so that every way out of this closure closes the channel and the
            // job ends.
            let tx = tx;
            let out = &mut connected;
            scope.spawn(move |_| *out = connect_all(added, rx).ok());
            let mut chunk = Vec::with_capacity(CONNECT_CHUNK);
            while let Some(c) = seq.next_element::<ConnectionSpec<'de>>()? {
                chunk.push(c);
                if chunk.len() == CONNECT_CHUNK {
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(CONNECT_CHUNK));
                    // The job stopped (an error): give up.
                    tx.send(full).map_err(|_| give_up::<A::Error>())?;
                }
            }
            if !chunk.is_empty() {
                tx.send(chunk).map_err(|_| give_up::<A::Error>())?;
            }
            Ok(())
        });
        read?;
        connected.ok_or_else(give_up)
    }
}

/// Make the connections received from `rx`, in file order.
fn connect_all(added: Connected, rx: std::sync::mpsc::Receiver<Vec<ConnectionSpec>>) -> Result<Connected> {
    let (mut network, kinds) = added;
    network.reserve_links();
    let mut done = 0;
    for chunk in rx {
        connect_chunk(&mut network, done, &chunk, false)?;
        done += chunk.len();
    }
    Ok((network, kinds))
}
