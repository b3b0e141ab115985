//! Output signals: `component.signal[i]` resolved once against the schedule, and read at an
//! output instant after [`Simulator::probe`] (the Euler-form evaluation (20) with τ = T).

use crate::component::Probe;
use crate::error::{Error, Result};
use crate::stepper::bus::Tap;
use crate::stepper::Simulator;

/// Where a signal value is read from.
#[derive(Clone, Debug, PartialEq)]
pub struct SignalRef {
    /// The name as written (`component.signal[i]`).
    pub name: String,
    pub(crate) source: Source,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Source {
    Adm {
        i: usize,
        which: usize,
        elem: usize,
    },
    Imp {
        i: usize,
        which: usize,
        elem: usize,
    },
    /// Raw state element of a component (`component.state[i]`).
    State {
        index: usize,
    },
    /// Output `out` of signal block `b`.
    Block {
        b: usize,
        out: usize,
    },
    /// Connected input `input` of signal block `b`: gain × the signal connected to it, as
    /// it is now (the value the input takes at the next communication point).
    BlockInput {
        b: usize,
        input: usize,
    },
    /// Observable `which` of signal block `b` ([`crate::Block::observables`]), read when
    /// the row is written.
    BlockVar {
        b: usize,
        which: usize,
    },
}

/// A component found by name.
#[derive(Clone, Copy, Debug)]
enum Found {
    Adm(usize),
    Imp(usize),
    Block(usize),
}

/// Components by name, for resolving many signals (each lookup otherwise walks the names).
type NameIndex = std::collections::HashMap<String, Found>;

impl Simulator {
    /// The component called `comp`, through `index` when given.
    fn find(&self, comp: &str, index: Option<&NameIndex>) -> Option<Found> {
        if let Some(ix) = index {
            return ix.get(comp).copied();
        }
        let s = &self.sched;
        (s.adm_names.position(comp).map(Found::Adm))
            .or_else(|| s.imp_names.position(comp).map(Found::Imp))
            .or_else(|| s.block_names.position(comp).map(Found::Block))
    }

    /// Every component by name.
    fn name_index(&self) -> NameIndex {
        let s = &self.sched;
        let adm = s.adm_names.iter().enumerate().map(|(i, n)| (n.to_string(), Found::Adm(i)));
        let imp = s.imp_names.iter().enumerate().map(|(i, n)| (n.to_string(), Found::Imp(i)));
        let blk = s.block_names.iter().enumerate().map(|(i, n)| (n.to_string(), Found::Block(i)));
        adm.chain(imp).chain(blk).collect()
    }

    /// Resolve `component.signal[i]` (or `component.signal` for a one-element signal,
    /// or `component.state[i]` for a raw state).
    pub fn resolve(&self, name: &str) -> Result<SignalRef> {
        self.resolve_in(name, None)
    }

    /// [`resolve`](Self::resolve), finding components through `index` when given.
    fn resolve_in(&self, name: &str, index: Option<&NameIndex>) -> Result<SignalRef> {
        let s = &self.sched;
        let bad = |msg: String| Error::invalid(format!("output.signals: '{name}'"), msg);
        let (comp, rest) = name.split_once('.').ok_or_else(|| bad("expected 'component.signal'".into()))?;
        // A signal whose name contains '[' (an FMU's FMI 2.0 variable `a[1]`, a scalar of that
        // literal name) is found by its whole name before `[` is read as an index.
        let literal = |list: &[crate::SignalInfo]| list.iter().any(|x| x.name == rest);
        let found = self.find(comp, index);
        if let Some(Found::Block(b)) = found {
            // An alias reads the variable it names.
            let rest = s.blocks[b].alias_of(rest).unwrap_or(rest);
            let outs = s.blocks[b].outputs();
            if !outs.iter().any(|x| x.name == rest) {
                if let Some(input) = s.blocks[b].inputs().iter().position(|x| x.name == rest) {
                    if self.block_input_connected(b, input) {
                        return Ok(SignalRef { name: name.to_string(), source: Source::BlockInput { b, input } });
                    }
                }
            }
            if !outs.iter().any(|x| x.name == rest) {
                if let Some(which) = s.blocks[b].observables().iter().position(|x| x.name == rest) {
                    return Ok(SignalRef { name: name.to_string(), source: Source::BlockVar { b, which } });
                }
            }
            let out = outs.iter().position(|x| x.name == rest).ok_or_else(|| {
                let hint = crate::error::suggestion(rest, outs.iter().map(|x| x.name));
                let list: Vec<&str> = outs.iter().map(|x| x.name).collect();
                bad(format!("signal block '{comp}' has no output '{rest}'{hint} (outputs: {})", list.join(", ")))
            })?;
            return Ok(SignalRef { name: name.to_string(), source: Source::Block { b, out } });
        }
        let named = match found {
            Some(Found::Adm(i)) => Some(literal(&s.adm[i].signals())),
            Some(Found::Imp(i)) => Some(literal(&s.imp[i].signals())),
            _ => None,
        };
        let (sig, elem) = match rest.split_once('[') {
            Some(_) if named == Some(true) => (rest, None),
            Some((sig, idx)) => {
                let idx = idx.strip_suffix(']').ok_or_else(|| bad("missing ']'".into()))?;
                let e: usize = idx.trim().parse().map_err(|_| bad(format!("'{idx}' is not an index")))?;
                (sig, Some(e))
            }
            None => (rest, None),
        };
        let (signals, kind, range) = match found {
            Some(Found::Adm(i)) => (s.adm[i].signals(), (true, i), s.adm_x[i]..s.adm_x[i + 1]),
            Some(Found::Imp(i)) => (s.imp[i].signals(), (false, i), s.imp_y[i]..s.imp_y[i + 1]),
            _ => {
                let names = s.adm_names.iter().chain(&s.imp_names).chain(&s.block_names);
                let hint = crate::error::suggestion(comp, names);
                return Err(bad(format!("there is no component named '{comp}'{hint}")));
            }
        };
        if sig == "state" {
            let e = elem.unwrap_or(0);
            if e >= range.len() || (elem.is_none() && range.len() != 1) {
                return Err(bad(format!("'{comp}' has {} states; use state[0..{}]", range.len(), range.len())));
            }
            return Ok(SignalRef { name: name.to_string(), source: Source::State { index: range.start + e } });
        }
        let which = signals.iter().position(|x| x.name == sig).ok_or_else(|| {
            let list: Vec<String> = signals.iter().map(|x| format!("{}[{}]", x.name, x.len)).collect();
            let hint = crate::error::suggestion(sig, signals.iter().map(|x| x.name));
            bad(format!("'{comp}' has no signal '{sig}'{hint} (signals: {}, state[..])", list.join(", ")))
        })?;
        let len = signals[which].len;
        let elem = match elem {
            Some(e) if e < len => e,
            Some(e) => return Err(bad(format!("index {e} out of range: '{sig}' has {len} element(s)"))),
            None if len == 1 => 0,
            None => return Err(bad(format!("'{sig}' has {len} elements; write '{comp}.{sig}[i]'"))),
        };
        let (is_adm, i) = kind;
        let source = if is_adm { Source::Adm { i, which, elem } } else { Source::Imp { i, which, elem } };
        Ok(SignalRef { name: name.to_string(), source })
    }

    /// [`resolve`](Self::resolve), except that a signal of several elements named without
    /// an index (`component.signal`) gives one column per element, `[0]`, `[1]`, ...: the
    /// suffix to append to the column's label, with each reference.
    pub fn resolve_columns(&self, name: &str) -> Result<Vec<(String, SignalRef)>> {
        if !name.contains('[') {
            if let Some((comp, sig)) = name.split_once('.') {
                let s = &self.sched;
                let signals = if let Some(i) = s.adm_names.position(comp) {
                    Some(s.adm[i].signals())
                } else {
                    s.imp_names.position(comp).map(|i| s.imp[i].signals())
                };
                let len = signals.and_then(|l| l.iter().find(|x| x.name == sig).map(|x| x.len)).unwrap_or(1);
                if len > 1 && sig != "state" {
                    return (0..len).map(|e| Ok((format!("[{e}]"), self.resolve(&format!("{name}[{e}]"))?))).collect();
                }
                // A block's array variable (its elements are signals `sig[0]`, `sig[1]`, …).
                if let Some(b) = s.block_names.position(comp) {
                    let blk = &s.blocks[b];
                    let all: Vec<crate::SignalInfo> =
                        blk.outputs().into_iter().chain(blk.inputs()).chain(blk.observables()).collect();
                    if !all.iter().any(|x| x.name == sig) {
                        let has = |e: usize| {
                            let el = format!("{sig}[{e}]");
                            all.iter().any(|x| x.name == el)
                        };
                        let n = (0..).take_while(|&e| has(e)).count();
                        if n > 0 {
                            return (0..n)
                                .map(|e| Ok((format!("[{e}]"), self.resolve(&format!("{name}[{e}]"))?)))
                                .collect();
                        }
                    }
                }
            }
        }
        Ok(vec![(String::new(), self.resolve(name)?)])
    }

    /// What the component declares of a resolved signal (its unit, documentation), or None
    /// for a raw `state[i]`. The unit is the column's unit in result files
    /// ([`crate::units::column_label`]); a translational component on a shaft gives
    /// rotational units ([`crate::Schedule::rotational`]).
    pub fn signal_info(&self, r: &SignalRef) -> Option<crate::SignalInfo> {
        fn turned(mut x: crate::SignalInfo, rotational: bool) -> crate::SignalInfo {
            if rotational {
                x.unit = crate::units::rotational(x.unit);
            }
            x
        }
        let s = &self.sched;
        match r.source {
            Source::Adm { i, which, .. } => {
                s.adm[i].signals().get(which).copied().map(|x| turned(x, s.rotational().0[i]))
            }
            Source::Imp { i, which, .. } => {
                s.imp[i].signals().get(which).copied().map(|x| turned(x, s.rotational().1[i]))
            }
            Source::State { .. } => None,
            Source::Block { b, out } => s.blocks[b].outputs().get(out).copied(),
            Source::BlockInput { b, input } => s.blocks[b].inputs().get(input).copied(),
            Source::BlockVar { b, which } => s.blocks[b].observables().get(which).copied(),
        }
    }

    /// Value of a resolved signal; call [`probe`](Self::probe) first at this state.
    pub fn value(&self, r: &SignalRef) -> f64 {
        let s = &self.sched;
        let t = self.time();
        match r.source {
            Source::State { index } => self.x[index],
            Source::Block { b, out } => {
                self.bus.blocks.get(b).and_then(|io| io.y.get(out)).copied().unwrap_or(f64::NAN)
            }
            Source::BlockInput { b, input } => self.block_input_value(b, input).unwrap_or(f64::NAN),
            Source::BlockVar { b, which } => s.blocks[b].observe(which).unwrap_or(f64::NAN),
            Source::Adm { i, which, elem } => {
                let (a, b) = (s.adm_x[i], s.adm_x[i + 1]);
                let probe = Probe {
                    t,
                    tau: self.step_size(),
                    state: &self.x[a..b],
                    rate: &self.work.rate[a..b],
                    motions: &[],
                    forces: &self.work.adm_forces[s.adm_ports[i]..s.adm_ports[i + 1]],
                };
                s.adm[i].signal(which, elem, &probe)
            }
            Source::Imp { i, which, elem } => {
                let (a, b) = (s.imp_y[i], s.imp_y[i + 1]);
                let (sa, sb) = (s.imp_slots[i], s.imp_slots[i + 1]);
                let np = sb - sa;
                let (forces, motions) = self.port_values(sa, np);
                let probe = Probe {
                    t,
                    tau: self.step_size(),
                    state: &self.x[a..b],
                    rate: &self.work.rate[a..b],
                    motions: &motions[..np],
                    forces: &forces[..np],
                };
                s.imp[i].signal(which, elem, &probe)
            }
        }
    }
}

impl Simulator {
    /// Give the simulation the system's `inputs` (name, start value) and have every wire of
    /// `uses` (the signals the components' time functions read) and every signal connection
    /// to a block's input read its signal; blocks step as `blocks` says
    /// (stepper/bus.rs says when each kind is read). An unknown signal, or an admittance
    /// signal that needs forces, is an error naming the JSON path that reads it.
    pub fn connect_signals(
        &mut self,
        inputs: &[(String, f64)],
        uses: Vec<crate::signal::WireUse>,
        blocks: crate::stepper::bus::BlockOptions,
    ) -> Result<()> {
        for (name, start) in inputs {
            self.add_input(name, *start);
        }
        for (b, name) in self.sched.block_names.iter().enumerate() {
            self.sched.blocks[b]
                .prepare(self.method(), self.step_size())
                .map_err(|m| Error::invalid(format!("components.{name}"), m))?;
        }
        for (i, name) in blocks.order.iter().enumerate() {
            if !self.sched.block_names.contains(name) {
                let names: Vec<&str> = self.sched.block_names.iter().collect();
                return Err(Error::invalid(
                    format!("solver.order[{i}]"),
                    format!(
                        "unknown signal block '{name}' (the signal blocks: {})",
                        if names.is_empty() { "none".to_string() } else { names.join(", ") }
                    ),
                ));
            }
        }
        self.add_blocks(blocks);
        // Many signals: components found through a table rather than by walking the names.
        let links = self.sched.signal_links.clone();
        let index = (uses.len() + links.len() > 64).then(|| self.name_index());
        let index = index.as_ref();
        for u in uses {
            let (name, path) = (u.name, u.path);
            self.wire(&name, u.wire, |sim| sim.tap(&name, &path, index))?;
        }
        for (from, b, input, i, gain) in links {
            let wire = crate::signal::Wire::default();
            let path = format!("connections[{i}]");
            self.wire(&from, wire.clone(), |sim| sim.tap(&from, &path, index))?;
            self.feed_block(b, input, wire, gain);
        }
        for link in self.sched.adm_inputs.clone() {
            let wire = crate::signal::Wire::default();
            let (from, path) = (&link.0, format!("connections[{}]", link.3));
            let tap = self.wire(from, wire.clone(), |sim| sim.tap(from, &path, index))?;
            self.feed_admittance(&link, tap, wire)?;
        }
        self.order_stage()?;
        self.order_blocks()?;
        self.wires_ready()
    }

    /// Where the signal `name`, read by the time function at `path`, is taken from.
    fn tap(&self, name: &str, path: &str, index: Option<&NameIndex>) -> Result<Tap> {
        let r = self.resolve_in(name, index).map_err(|e| match e {
            Error::Invalid { message, .. } => {
                let inputs: Vec<&str> = self.input_names().collect();
                let also = if name.contains('.') {
                    String::new()
                } else if inputs.is_empty() {
                    "; the system has no \"inputs\"".to_string()
                } else {
                    format!("; inputs: {}", inputs.join(", "))
                };
                Error::invalid(path, format!("signal '{name}': {message}{also}"))
            }
            other => other,
        })?;
        Ok(match r.source {
            Source::State { index } => Tap::State { index },
            Source::Block { b, out } => Tap::Block { b, out },
            Source::BlockInput { b, .. } | Source::BlockVar { b, .. } => {
                let block = &self.sched.block_names[b];
                return Err(Error::invalid(
                    path,
                    format!("signal '{name}' is not an output of the signal block '{block}' (a time function reads outputs)"),
                ));
            }
            Source::Imp { i, which, elem } => Tap::Imp { i, which, elem },
            Source::Adm { i, which, elem } => {
                let info = self.sched.adm[i].signals()[which];
                if !info.state && !self.sched.adm[i].inputs().is_empty() {
                    return Err(Error::invalid(
                        path,
                        format!(
                            "signal '{name}' is not an output of the Model Exchange signal block '{}' (a time \
                             function or a signal connection reads outputs)",
                            &self.sched.adm_names[i]
                        ),
                    ));
                }
                if !info.state {
                    return Err(Error::invalid(
                        path,
                        format!(
                            "signal '{name}' depends on the forces on '{}' or its rate, which a time function \
                             cannot read (read positions, velocities or states, or an impedance's signals)",
                            &self.sched.adm_names[i]
                        ),
                    ));
                }
                Tap::Adm { i, which, elem }
            }
        })
    }
}
