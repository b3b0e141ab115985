//! The whole simulation as bytes: [`Simulator::save_state`] and
//! [`Simulator::restore_state`], so that a run continued from a saved state gives the same
//! bits as the run that never stopped (`stiction run --save-state` / `--resume`, Python's
//! `Simulation.save()` / `restore()`).
//!
//! What a step depends on besides the system: the step count k (time kT), x(k), the contact
//! events' budget and switching values (stepper/events.rs), the system inputs' held values,
//! the signal blocks' outputs as last exchanged and the count of algebraic-loop iterations
//! (stepper/bus.rs), and the state components
//! keep outside x (an imported FMU's own state, through FMI's serialized FMU state:
//! [`Admittance::save_hidden`](crate::Admittance::save_hidden) and its kin). Everything else
//! a step reads is written before it is read (the stage buffers, the held signals, the
//! stage signals), so it is not saved.
//!
//! The format (all numbers little-endian; version [`VERSION`]):
//! ```text
//! magic "stiction-state\n\0" (16 bytes) | version u32 | body length u64 | body | CRC-32 u32
//! body: fingerprint | k u64 | x (f64 each) | events | inputs | block outputs |
//!       loop iterations u64 | hidden states
//! fingerprint: method, step T, each admittance, impedance and block (name, states, ports
//!              or outputs) in schedule order, each input's name, the events' member count
//! ```
//! The CRC-32 (IEEE) covers everything before it. Reading checks the magic, the version,
//! the length, the checksum, then the fingerprint against this simulator (a state of another
//! system is refused naming the first difference), and every length against what is left of
//! the input: a truncated, corrupted or foreign file is an error, never a panic, and costs at
//! most the file's size. Nothing is changed until the whole file has been read and checked,
//! except that the components' own states are restored first (the only part that can fail
//! on valid bytes: an FMU may refuse its state); if one fails, the simulation should not
//! be continued.

use super::codec::{bad, Reader, Writer};
use super::Simulator;
use crate::error::{Error, Result};
use crate::signal::TimeFunction;

/// The first bytes of a saved state.
pub const MAGIC: &[u8; 16] = b"stiction-state\n\0";

/// The version of the format this build writes and reads.
pub const VERSION: u32 = 1;

/// What identifies the system a state belongs to.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    method: String,
    step: f64,
    /// (kind, name, states, ports or outputs) of every admittance, impedance and block.
    parts: Vec<(u8, String, u64, u64)>,
    inputs: Vec<String>,
    /// Members of the contact events (u64::MAX: none).
    events: u64,
}

const KINDS: [&str; 3] = ["admittance", "impedance", "signal block"];

impl Fingerprint {
    fn of(sim: &Simulator) -> Fingerprint {
        let s = &sim.sched;
        let mut parts = Vec::with_capacity(s.adm.len() + s.imp.len() + s.blocks.len());
        for i in 0..s.adm.len() {
            let (st, p) = (s.adm_x[i + 1] - s.adm_x[i], s.adm_ports[i + 1] - s.adm_ports[i]);
            parts.push((0, s.adm_names[i].to_string(), st as u64, p as u64));
        }
        for i in 0..s.imp.len() {
            let (st, p) = (s.imp_y[i + 1] - s.imp_y[i], s.imp_slots[i + 1] - s.imp_slots[i]);
            parts.push((1, s.imp_names[i].to_string(), st as u64, p as u64));
        }
        for (b, name) in s.block_names.iter().enumerate() {
            parts.push((2, name.to_string(), 0, s.blocks[b].outputs().len() as u64));
        }
        Fingerprint {
            method: format!("{:?}", sim.method),
            step: sim.step,
            parts,
            inputs: sim.bus.inputs.iter().map(|i| i.name.clone()).collect(),
            events: sim.events.as_ref().map_or(u64::MAX, |e| e.members() as u64),
        }
    }

    fn write(&self, w: &mut Writer) {
        w.str(&self.method).f64(self.step).u64(self.parts.len() as u64);
        for (kind, name, states, ports) in &self.parts {
            w.u8(*kind).str(name).u64(*states).u64(*ports);
        }
        w.u64(self.inputs.len() as u64);
        for name in &self.inputs {
            w.str(name);
        }
        w.u64(self.events);
    }

    fn read(r: &mut Reader) -> Result<Fingerprint> {
        let method = r.str()?;
        let step = r.f64()?;
        let n = r.count(1 + 8 + 8 + 8)?;
        let mut parts = Vec::with_capacity(n);
        for _ in 0..n {
            let kind = r.u8()?;
            if kind as usize >= KINDS.len() {
                return Err(bad(format!("an unknown component kind {kind}")));
            }
            parts.push((kind, r.str()?, r.u64()?, r.u64()?));
        }
        let n = r.count(8)?;
        let inputs = (0..n).map(|_| r.str()).collect::<Result<Vec<_>>>()?;
        Ok(Fingerprint { method, step, parts, inputs, events: r.u64()? })
    }

    /// Why a state of `saved` cannot continue this system (`self`), naming the first
    /// difference.
    fn differs(&self, saved: &Fingerprint) -> Option<String> {
        if saved.method != self.method || saved.step.to_bits() != self.step.to_bits() {
            return Some(format!(
                "it was saved with method {} and step {} s, this system has method {} and step {} s",
                saved.method, saved.step, self.method, self.step
            ));
        }
        let show = |p: &(u8, String, u64, u64)| {
            let what = if p.0 == 2 { "outputs" } else { "ports" };
            format!("{} '{}' ({} states, {} {what})", KINDS[p.0 as usize], p.1, p.2, p.3)
        };
        for (i, (a, b)) in saved.parts.iter().zip(&self.parts).enumerate() {
            if a != b {
                return Some(format!("component {} is {} in the saved state and {} here", i + 1, show(a), show(b)));
            }
        }
        if saved.parts.len() != self.parts.len() {
            return Some(format!(
                "the saved state has {} components (admittances, impedances, signal blocks), this system {}",
                saved.parts.len(),
                self.parts.len()
            ));
        }
        if saved.inputs != self.inputs {
            return Some(format!(
                "the saved state has the inputs [{}], this system [{}]",
                saved.inputs.join(", "),
                self.inputs.join(", ")
            ));
        }
        if saved.events != self.events {
            let show = |n: u64| match n {
                u64::MAX => "no switch located within a step".to_string(),
                n => format!("{n} switching functions located within a step"),
            };
            return Some(format!(
                "{} in the saved state, {} here (another network or method, or another \"solver\": \
                 {{\"events\": ...}} setting: a state saved with --set solver.events=contacts continues with it)",
                show(saved.events),
                show(self.events)
            ));
        }
        None
    }
}

/// A saved input: held at a value, or driven by a function of time (`--input`).
const HELD: u8 = 0;
const DRIVEN: u8 = 1;

impl Simulator {
    /// The whole simulation's state at the current step, as bytes that
    /// [`restore_state`](Self::restore_state) takes back (module documentation: what is in
    /// them, the format). A component whose own state cannot be saved (an imported FMU
    /// that does not declare canSerializeFMUstate) is an error naming it.
    pub fn save_state(&mut self) -> Result<Vec<u8>> {
        let s = &self.sched;
        // The components' own states first: the only part that can fail.
        let mut hidden: Vec<(u8, usize, Vec<u8>)> = Vec::new();
        let fail =
            |name: &str, m: String| Error::invalid(format!("components.{name}"), format!("cannot save its state: {m}"));
        for (i, c) in s.adm.iter().enumerate() {
            if let Some(b) = c.save_hidden().map_err(|m| fail(&s.adm_names[i], m))? {
                hidden.push((0, i, b));
            }
        }
        for (i, c) in s.imp.iter().enumerate() {
            if let Some(b) = c.save_hidden().map_err(|m| fail(&s.imp_names[i], m))? {
                hidden.push((1, i, b));
            }
        }
        for (i, c) in s.blocks.iter().enumerate() {
            if let Some(b) = c.save_hidden().map_err(|m| fail(&s.block_names[i], m))? {
                hidden.push((2, i, b));
            }
        }
        let mut w = Writer(crate::sealed::begin(MAGIC, VERSION, 8 * self.x.len() + 256));
        Fingerprint::of(self).write(&mut w);
        w.u64(self.k).f64s(&self.x);
        if let Some(ev) = &self.events {
            ev.save(&mut w);
        }
        let now = self.time();
        for input in &self.bus.inputs {
            match input.value {
                TimeFunction::Constant(v) => w.u8(HELD).f64(v),
                _ => w.u8(DRIVEN).f64(input.value.eval(now)),
            };
        }
        for io in &self.bus.blocks {
            w.f64s(&io.y);
        }
        w.u64(self.bus.iterations);
        w.u64(hidden.len() as u64);
        for (kind, i, b) in &hidden {
            w.u8(*kind).u64(*i as u64).bytes(b);
        }
        Ok(crate::sealed::finish(w.0))
    }

    /// Continue from a state [`save_state`](Self::save_state) gave, of this same system
    /// (same components, names, state sizes, method and step; its parameters may differ).
    /// The bytes are checked first (module documentation); a truncated, corrupted or foreign
    /// state is an error that says which. A system input held at a value when the state was
    /// saved gets that value back, unless it is driven by a function of time now (which is
    /// kept); one driven then must be driven now (the same `--input`), else it is an error.
    pub fn restore_state(&mut self, bytes: &[u8]) -> Result<()> {
        let body = crate::sealed::open("saved state", MAGIC, VERSION, bytes).map_err(bad)?;
        let mut r = Reader(body);
        let saved = Fingerprint::read(&mut r)?;
        let here = Fingerprint::of(self);
        if let Some(why) = here.differs(&saved) {
            return Err(bad(format!("it belongs to another system: {why}")));
        }
        // Everything read and checked before anything changes.
        let k = r.u64()?;
        let x = r.f64s(self.x.len())?;
        let events = match &self.events {
            Some(ev) => Some(super::events::Events::load(&mut r, ev.members())?),
            None => None,
        };
        let mut inputs = Vec::with_capacity(self.bus.inputs.len());
        for input in &self.bus.inputs {
            let (tag, v) = (r.u8()?, r.f64()?);
            let driven_now = !matches!(input.value, TimeFunction::Constant(_));
            match tag {
                HELD => inputs.push((!driven_now).then_some(v)),
                DRIVEN if driven_now => inputs.push(None),
                DRIVEN => {
                    return Err(Error::invalid(
                        format!("inputs.{}", input.name),
                        "was driven by a function of time (--input) when the state was saved; \
                         give the continued run the same --input",
                    ))
                }
                _ => return Err(bad(format!("an unknown input record {tag}"))),
            }
        }
        let mut ys = Vec::with_capacity(self.bus.blocks.len());
        for io in &self.bus.blocks {
            ys.push(r.f64s(io.y.len())?);
        }
        let iterations = r.u64()?;
        let n = r.count(1 + 8 + 8)?;
        let s = &self.sched;
        let mut hidden = Vec::with_capacity(n);
        for _ in 0..n {
            let (kind, i) = (r.u8()?, r.u64()?);
            let count = [s.adm.len(), s.imp.len(), s.blocks.len()].get(kind as usize).copied();
            if count.is_none_or(|c| i >= c as u64) {
                return Err(bad(format!("a component's state for a component that does not exist ({kind}, {i})")));
            }
            hidden.push((kind, i as usize, r.bytes()?));
        }
        if !r.0.is_empty() {
            return Err(bad("bytes left after the last record"));
        }
        if k > u64::MAX / 2 || x.iter().any(|v| !v.is_finite()) {
            return Err(bad("the step count or the state is out of range"));
        }
        for (kind, i, b) in hidden {
            let (name, r) = match kind {
                0 => (&s.adm_names[i], s.adm[i].restore_hidden(b)),
                1 => (&s.imp_names[i], s.imp[i].restore_hidden(b)),
                _ => (&s.block_names[i], s.blocks[i].restore_hidden(b)),
            };
            r.map_err(|m| Error::invalid(format!("components.{name}"), format!("cannot restore its state: {m}")))?;
        }
        self.k = k;
        self.x.copy_from_slice(&x);
        if let (Some(ev), Some(saved)) = (&mut self.events, events) {
            ev.restore(saved);
        }
        for (input, v) in self.bus.inputs.iter_mut().zip(inputs) {
            if let Some(v) = v {
                input.value = TimeFunction::Constant(v);
                for w in &input.wires {
                    w.set(v);
                }
            }
        }
        for (io, y) in self.bus.blocks.iter_mut().zip(ys) {
            io.y = y;
            io.publish();
        }
        self.bus.iterations = iterations;
        Ok(())
    }
}
