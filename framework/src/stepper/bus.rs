//! The signals that components' time functions read (`{"signal": ...}` and signal names in
//! expressions, framework/src/signal.rs), written into their [`Wire`]s by the stepper.
//! When each kind is read:
//!
//! - **a system input** (`"inputs"`): its value function at the stage time t = kT + T_{r−1}
//!   at every stage (a constant until Python or an FMU's caller sets it; `--input` gives a
//!   table or an expression of t, read like any time function);
//! - **an admittance signal of its state alone** ([`SignalInfo::state`](crate::SignalInfo):
//!   positions, velocities, joint angles) and `component.state[i]`: at every stage, from
//!   that stage's state x(k) + T_{r−1}·ξ_{r−1} (13b)/(13c). A law closed through such
//!   signals is therefore integrated exactly like the same law written as an impedance:
//!   RK4's order is kept (tests/signals.rs: a PD torque through signals against a
//!   spring_damper);
//! - **any other signal** (an impedance's force, a contact's slip or penetration): at the
//!   beginning of each step, from x(k) with τ = T as an output row sees it (the Euler form
//!   (20)), and held over the step's stages: a zero-order hold of one step. Reading it at
//!   every stage would need the impedances evaluated in the order of their signal
//!   dependencies inside the stage, and an impedance reading its own force would be an
//!   algebraic loop; held, no signal read by a component can form one. An admittance
//!   signal that needs its forces or its rate (an acceleration) cannot be read by a time
//!   function; it is refused when the system is compiled, naming the path that reads it.

use super::Simulator;
use crate::component::{Probe, MAX_IMPEDANCE_PORTS};
use crate::error::{Error, Result};
use crate::port::{Force, Motion};
use crate::signal::{TimeFunction, Wire};
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Where a wired signal's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tap {
    /// Element `index` of the state vector (`component.state[i]`).
    State { index: usize },
    /// Signal `which`, element `elem`, of admittance `i`, read from its state alone.
    Adm { i: usize, which: usize, elem: usize },
    /// Signal `which`, element `elem`, of impedance `i`: held over each step.
    Imp { i: usize, which: usize, elem: usize },
    /// Output `out` of signal block `b`: held over each step.
    Block { b: usize, out: usize },
}

/// When a signal read by a time function is read (stepper/bus.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// A system input, at every stage.
    Input,
    /// From each stage's state.
    Stage,
    /// At the beginning of each step, held over it.
    Held,
    /// A signal block's output, exchanged at the beginning of each step, held over it.
    Block,
}

/// A signal block as the bus steps it.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockIo {
    /// The connected inputs, the wires they read and their gains.
    inputs: Vec<(usize, Wire, f64)>,
    /// Their values at the last exchange.
    u: Vec<(usize, f64)>,
    /// The outputs as last read.
    pub(crate) y: Vec<f64>,
    /// The wires that read each output.
    out: Vec<Vec<Wire>>,
    /// Whether some output declares direct feedthrough (it is read again after the inputs).
    feeds_through: bool,
}

/// One system input: its current value function and the wires that read it.
#[derive(Clone, Debug)]
pub(crate) struct BusInput {
    pub(crate) name: String,
    pub(crate) value: TimeFunction,
    wires: Vec<Wire>,
}

/// The wires of a simulation, by when they are written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bus {
    inputs: Vec<BusInput>,
    /// Written at every stage from the stage state.
    stage: Vec<(Tap, Vec<Wire>)>,
    /// Written at the beginning of each step.
    held: Vec<(Tap, Vec<Wire>)>,
    /// Each signal read, with when it is read (for `stiction check`), in the order wired.
    names: Vec<(String, When)>,
    /// While wiring: the names in `names`, and where each tap is in `stage` or `held`.
    named: HashSet<String>,
    tapped: HashMap<Tap, usize>,
    /// The signal blocks (schedule order) and the order they exchange in.
    pub(crate) blocks: Vec<BlockIo>,
    order: Vec<usize>,
    /// Blocks step one after the other (Gauss-Seidel), not all from t_k's values (Jacobi).
    gauss_seidel: bool,
    /// Zeros for the rate and forces a state signal's probe does not read.
    zeros: Vec<f64>,
    no_forces: Vec<Force>,
    /// The rate an impedance evaluated for a held signal writes.
    rate: Vec<f64>,
}

impl Bus {
    pub(crate) fn is_empty(&self) -> bool {
        self.inputs.is_empty() && self.stage.is_empty() && self.held.is_empty() && self.blocks.is_empty()
    }
}

impl Simulator {
    /// Declare a system input `name` with start value `start` (before [`wire`](Self::wire)).
    pub fn add_input(&mut self, name: &str, start: f64) {
        self.bus.inputs.push(BusInput {
            name: name.to_string(),
            value: TimeFunction::Constant(start),
            wires: Vec::new(),
        });
    }

    /// Each signal the components' time functions read and when it is read.
    pub fn signals_read(&self) -> &[(String, When)] {
        &self.bus.names
    }

    /// The names of the system's inputs, in order.
    pub fn input_names(&self) -> impl Iterator<Item = &str> {
        self.bus.inputs.iter().map(|i| i.name.as_str())
    }

    /// Set input `name` to the function `value` of time (a constant for a value held until
    /// set again). An unknown name is an error that lists the inputs.
    pub fn set_input(&mut self, name: &str, value: TimeFunction) -> Result<()> {
        let now = self.time();
        let Some(input) = self.bus.inputs.iter_mut().find(|i| i.name == name) else {
            let names: Vec<&str> = self.input_names().collect();
            let hint = crate::error::suggestion(name, names.iter().copied());
            return Err(Error::invalid(
                "inputs",
                format!("the system has no input '{name}'{hint} (inputs: {})", list_or_none(&names)),
            ));
        };
        input.value = value;
        let v = input.value.eval(now);
        for w in &input.wires {
            w.set(v);
        }
        Ok(())
    }

    /// Have `wire` read the signal `name`: a system input, or a signal resolved by
    /// `resolve` (the output layer's `component.signal[i]`) into a [`Tap`]. `path` is the
    /// JSON path that reads it, for errors.
    pub(crate) fn wire(&mut self, name: &str, wire: Wire, tap: impl FnOnce(&Self) -> Result<Tap>) -> Result<()> {
        let seen = |bus: &mut Bus, when| {
            if bus.named.insert(name.to_string()) {
                bus.names.push((name.to_string(), when));
            }
        };
        if let Some(input) = self.bus.inputs.iter_mut().find(|i| i.name == name) {
            input.wires.push(wire);
            seen(&mut self.bus, When::Input);
            return Ok(());
        }
        let tap = tap(self)?;
        let when = match tap {
            Tap::Imp { .. } => When::Held,
            Tap::Block { .. } => When::Block,
            _ => When::Stage,
        };
        seen(&mut self.bus, when);
        if let Tap::Block { b, out } = tap {
            self.bus.blocks[b].out[out].push(wire);
            return Ok(());
        }
        let Bus { held, stage, tapped, .. } = &mut self.bus;
        let list = if matches!(tap, Tap::Imp { .. }) { held } else { stage };
        match tapped.get(&tap) {
            Some(&at) => list[at].1.push(wire),
            None => {
                tapped.insert(tap, list.len());
                list.push((tap, vec![wire]));
            }
        }
        Ok(())
    }

    /// Give the bus the schedule's signal blocks (before any [`wire`](Self::wire)), stepped
    /// one after the other when `gauss_seidel`.
    pub(crate) fn add_blocks(&mut self, gauss_seidel: bool) {
        self.bus.gauss_seidel = gauss_seidel;
        self.bus.blocks = self
            .sched
            .blocks
            .iter()
            .map(|b| {
                let n = b.outputs().len();
                let feeds_through = (0..n).any(|o| !b.feedthrough(o).is_empty());
                BlockIo { y: vec![0.0; n], out: vec![Vec::new(); n], feeds_through, ..Default::default() }
            })
            .collect();
    }

    /// Have input `input` of block `b` read gain × `wire` (a signal connection).
    pub(crate) fn feed_block(&mut self, b: usize, input: usize, wire: Wire, gain: f64) {
        self.bus.blocks[b].inputs.push((input, wire, gain));
    }

    /// The order in which the blocks exchange at a communication point: a block whose input
    /// reads an output of another that feeds through (depends directly on its own inputs)
    /// comes after it, so each reads the value at t_k; a cycle of connections through
    /// feedthrough dependencies is an algebraic loop, refused naming it.
    pub(crate) fn order_blocks(&mut self) -> Result<()> {
        let s = &self.sched;
        // Outputs as nodes; an edge from output (a, o) to output (b, p) when (a, o) feeds an
        // input of b that p depends on.
        let mut g = DiGraph::<(usize, usize), ()>::new();
        let mut node = Vec::new();
        for (b, blk) in s.blocks.iter().enumerate() {
            node.push((0..blk.outputs().len()).map(|o| g.add_node((b, o))).collect::<Vec<_>>());
        }
        let mut after = vec![Vec::new(); s.blocks.len()];
        for (from, b, input, _, _) in &s.signal_links {
            let Some((a, o)) = self.block_output(from) else { continue };
            let feeds: Vec<usize> =
                (0..node[*b].len()).filter(|&p| s.blocks[*b].feedthrough(p).contains(input)).collect();
            for p in &feeds {
                g.add_edge(node[a][o], node[*b][*p], ());
            }
            if !s.blocks[a].feedthrough(o).is_empty() && a != *b {
                after[*b].push(a);
            }
        }
        for scc in petgraph::algo::tarjan_scc(&g) {
            let looped = scc.len() > 1 || g.contains_edge(scc[0], scc[0]);
            if looped {
                let mut names: Vec<String> = scc
                    .iter()
                    .map(|&n| {
                        let (b, o) = g[n];
                        format!("{}.{}", s.block_names[b], s.blocks[b].outputs()[o].name)
                    })
                    .collect();
                names.sort();
                return Err(Error::invalid(
                    "connections",
                    format!(
                        "algebraic loop between signal blocks: the outputs {} depend on each other through                          connections and direct feedthrough; break it (a block without feedthrough, or a delay)",
                        names.join(", ")
                    ),
                ));
            }
        }
        let n = s.blocks.len();
        if self.bus.gauss_seidel {
            // As the FMU-only master orders its FMUs: the connections between blocks, strong
            // where the source output may feed through from the source's connected inputs.
            let mut edges = Vec::new();
            for (from, b, _, _, _) in &s.signal_links {
                let Some((a, o)) = self.block_output(from) else { continue };
                if a != *b {
                    let connected: Vec<usize> = s.signal_links.iter().filter(|l| l.1 == a).map(|l| l.2).collect();
                    edges.push((a, *b, s.blocks[a].may_feed_through(o, &connected)));
                }
            }
            self.bus.order = gauss_seidel_order(&(0..n).collect::<Vec<_>>(), &edges);
            return Ok(());
        }
        // Kahn's order, lowest index first among the ready ones (file order otherwise).
        let mut done = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let next = (0..n).find(|&b| !done[b] && after[b].iter().all(|&a| done[a])).unwrap_or_else(|| {
                // A cycle of blocks without an algebraic loop: the rest in file order.
                (0..n).find(|&b| !done[b]).unwrap_or(0)
            });
            done[next] = true;
            order.push(next);
        }
        self.bus.order = order;
        Ok(())
    }

    /// The block output a signal name reads, if it is one.
    fn block_output(&self, name: &str) -> Option<(usize, usize)> {
        let (comp, out) = name.split_once('.')?;
        let b = self.sched.block_names.iter().position(|n| n == comp)?;
        let o = self.sched.blocks[b].outputs().iter().position(|x| x.name == out)?;
        Some((b, o))
    }

    /// The signal blocks at the communication point t_k = kT, with the state signals at
    /// x(k) written just before.
    ///
    /// Jacobi (the default): each block, in [`order_blocks`](Self::order_blocks)'s order,
    /// sets its connected inputs from their signals, and a block with direct feedthrough
    /// reads its outputs again (so the blocks after it and the network see y(t_k) of u(t_k));
    /// then every block advances to t_k + T and reads the outputs it ends with, which the
    /// wires hold over the step (and an output row at t_{k+1} shows).
    ///
    /// Gauss-Seidel (`"solver": {"blocks": "gauss-seidel"}`): each block in turn sets its
    /// inputs from the outputs as they are when its turn comes (of the blocks before it: at
    /// t_{k+1}), advances and publishes its outputs.
    fn exchange_blocks(&mut self) -> Result<()> {
        let (t, h) = (self.time(), self.step);
        let Simulator { sched: s, bus, .. } = self;
        let fail = |b: usize, f: crate::error::Fault| Error::Simulation {
            time: t,
            component: s.block_names[b].clone(),
            message: f.0,
        };
        for k in 0..bus.order.len() {
            let b = bus.order[k];
            let io = &mut bus.blocks[b];
            io.take_inputs();
            s.blocks[b].set_inputs(&io.u).map_err(|f| fail(b, f))?;
            if bus.gauss_seidel {
                s.blocks[b].advance(t, h, &mut io.y).map_err(|f| fail(b, f))?;
                io.publish();
            } else if io.feeds_through {
                s.blocks[b].read(&mut io.y).map_err(|f| fail(b, f))?;
                io.publish();
            }
        }
        if !bus.gauss_seidel {
            for b in 0..bus.blocks.len() {
                let io = &mut bus.blocks[b];
                s.blocks[b].advance(t, h, &mut io.y).map_err(|f| fail(b, f))?;
                io.publish();
            }
        }
        Ok(())
    }

    /// The blocks' initialization (at t = 0, with the state signals at x(0)): their outputs
    /// read, then their connected inputs set from their signals and the outputs read again,
    /// sweep after sweep until no output changes (at most one sweep per block, plus one), so
    /// that an input starts from its source's initial value; then each block leaves its
    /// initialization mode and its outputs are read.
    fn start_blocks(&mut self) -> Result<()> {
        let Simulator { sched: s, bus, .. } = self;
        let fail = |b: usize, f: crate::error::Fault| Error::Simulation {
            time: 0.0,
            component: s.block_names[b].clone(),
            message: f.0,
        };
        let n = bus.blocks.len();
        for b in 0..n {
            let io = &mut bus.blocks[b];
            s.blocks[b].read(&mut io.y).map_err(|f| fail(b, f))?;
            io.publish();
        }
        if bus.blocks.iter().any(|io| !io.inputs.is_empty()) {
            let mut before = Vec::new();
            for _ in 0..=n {
                for k in 0..n {
                    let b = bus.order[k];
                    let io = &mut bus.blocks[b];
                    io.take_inputs();
                    s.blocks[b].set_inputs(&io.u).map_err(|f| fail(b, f))?;
                }
                let mut changed = false;
                for b in 0..n {
                    let io = &mut bus.blocks[b];
                    before.clone_from(&io.y);
                    s.blocks[b].read(&mut io.y).map_err(|f| fail(b, f))?;
                    changed |= before.iter().zip(&io.y).any(|(a, c)| a.to_bits() != c.to_bits());
                    io.publish();
                }
                if !changed {
                    break;
                }
            }
        }
        for b in 0..n {
            let io = &mut bus.blocks[b];
            s.blocks[b].start(&mut io.y).map_err(|f| fail(b, f))?;
            io.publish();
        }
        Ok(())
    }

    /// After the last [`wire`](Self::wire): size the scratch and write every wire for the
    /// current state, so that the first evaluation sees the signals.
    pub(crate) fn wires_ready(&mut self) -> Result<()> {
        // The wiring tables are not needed while stepping.
        self.bus.named = HashSet::new();
        self.bus.tapped = HashMap::new();
        let s = &self.sched;
        let most_states = (0..s.adm.len()).map(|i| s.adm_x[i + 1] - s.adm_x[i]).max().unwrap_or(0);
        let most_ports = (0..s.adm.len()).map(|i| s.adm_ports[i + 1] - s.adm_ports[i]).max().unwrap_or(0);
        self.bus.zeros = vec![0.0; most_states.max(s.n.min(1))];
        self.bus.no_forces = vec![Force::ZERO; most_ports];
        let imp_states = (0..s.imp.len()).map(|i| s.imp_y[i + 1] - s.imp_y[i]).max().unwrap_or(0);
        self.bus.rate = vec![0.0; imp_states];
        if !self.bus.blocks.is_empty() {
            self.write_held()?;
            self.write_stage(&self.x, self.time());
            self.start_blocks()?;
        }
        self.write_held()?;
        self.write_stage(&self.x, self.time());
        Ok(())
    }

    /// Write the inputs and the state signals for the stage that reads the state `x` at
    /// time `t`.
    pub(super) fn write_stage(&self, x: &[f64], t: f64) {
        let bus = &self.bus;
        for i in &bus.inputs {
            let v = i.value.eval(t);
            for w in &i.wires {
                w.set(v);
            }
        }
        if bus.stage.is_empty() {
            return;
        }
        let s = &self.sched;
        for (tap, wires) in &bus.stage {
            let v = match *tap {
                Tap::State { index } => x[index],
                Tap::Adm { i, which, elem } => {
                    let (a, b) = (s.adm_x[i], s.adm_x[i + 1]);
                    let probe = Probe {
                        t,
                        tau: self.step,
                        state: &x[a..b],
                        rate: &bus.zeros[..b - a],
                        motions: &[],
                        forces: &bus.no_forces[..s.adm_ports[i + 1] - s.adm_ports[i]],
                    };
                    s.adm[i].signal(which, elem, &probe)
                }
                Tap::Imp { .. } | Tap::Block { .. } => continue,
            };
            for w in wires {
                w.set(v);
            }
        }
    }

    /// At the beginning of a step: the held signals, and the signal blocks' exchange and
    /// advance (with the state signals at x(k) they read).
    pub(super) fn begin_step(&mut self) -> Result<()> {
        self.write_held()?;
        if !self.bus.blocks.is_empty() {
            self.write_stage(&self.x, self.time());
            self.exchange_blocks()?;
        }
        Ok(())
    }

    /// Write the held signals for the step that begins at x(k): each impedance evaluated at
    /// x(k) with τ = T (as an output row sees it).
    pub(super) fn write_held(&mut self) -> Result<()> {
        if self.bus.held.is_empty() {
            return Ok(());
        }
        let (t, h) = (self.time(), self.step);
        let Simulator { sched: s, x, bus, .. } = self;
        let xa = &x[..s.nx];
        for (tap, wires) in &bus.held {
            let Tap::Imp { i, which, elem } = *tap else { continue };
            let (sa, sb) = (s.imp_slots[i], s.imp_slots[i + 1]);
            let (ya, yb) = (s.imp_y[i], s.imp_y[i + 1]);
            let np = sb - sa;
            let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
            let mut forces = [Force::ZERO; MAX_IMPEDANCE_PORTS];
            for (p, m) in motions[..np].iter_mut().enumerate() {
                *m = s.motion(xa, sa + p);
            }
            let rate = &mut bus.rate[..yb - ya];
            let y = &x[ya..yb];
            s.imp[i].evaluate(&motions[..np], y, t, h, &mut forces[..np], rate).map_err(|f| Error::Simulation {
                time: t,
                component: s.imp_names[i].clone(),
                message: f.0,
            })?;
            let probe = Probe { t, tau: h, state: y, rate, motions: &motions[..np], forces: &forces[..np] };
            let v = s.imp[i].signal(which, elem, &probe);
            for w in wires {
                w.set(v);
            }
        }
        Ok(())
    }
}

impl BlockIo {
    /// The connected inputs' values from their wires.
    fn take_inputs(&mut self) {
        self.u.clear();
        self.u.extend(self.inputs.iter().map(|(i, w, gain)| (*i, gain * w.get())));
    }

    /// Write the outputs into the wires that read them.
    fn publish(&self) {
        for (v, wires) in self.y.iter().zip(&self.out) {
            for w in wires {
                w.set(*v);
            }
        }
    }
}

/// Order `prio.len()` blocks for Gauss-Seidel (signal blocks, and the FMU-only master's FMUs
/// and loops) given the connections between them
/// (`(from, to, strong)`): the strongly connected components in topological order (among
/// independent ones, the lowest priority first), and inside a component (a feedback
/// cycle) greedily the block with the fewest strong, then weak, connections from blocks
/// not yet placed, ties by priority. A connection into a block from one placed after it is
/// cut: it carries the value of the previous communication point. Strong connections come
/// from outputs that may feed through — declared, or not declared at all (the conservative
/// reading of a missing `dependencies` attribute) — whose value at t_k would still change
/// with their FMU's inputs; a weak one's source output is declared independent of the
/// connected inputs, so its previous value was final and cutting it costs least.
pub fn gauss_seidel_order(prio: &[usize], edges: &[(usize, usize, bool)]) -> Vec<usize> {
    let n = prio.len();
    let mut g: DiGraph<usize, bool> = DiGraph::new();
    let nodes: Vec<NodeIndex> = (0..n).map(|i| g.add_node(i)).collect();
    for &(a, b, s) in edges {
        g.add_edge(nodes[a], nodes[b], s);
    }
    let sccs = petgraph::algo::tarjan_scc(&g);
    let mut comp = vec![0usize; n];
    for (c, s) in sccs.iter().enumerate() {
        for &ix in s {
            comp[g[ix]] = c;
        }
    }
    let nc = sccs.len();
    let cprio: Vec<usize> = sccs.iter().map(|s| s.iter().map(|&ix| prio[g[ix]]).min().unwrap_or(0)).collect();
    let mut indeg = vec![0usize; nc];
    let mut succ: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nc];
    for &(a, b, _) in edges {
        let (ca, cb) = (comp[a], comp[b]);
        if ca != cb && succ[ca].insert(cb) {
            indeg[cb] += 1;
        }
    }
    let mut ready: BTreeSet<(usize, usize)> = (0..nc).filter(|&c| indeg[c] == 0).map(|c| (cprio[c], c)).collect();
    let mut seq = Vec::with_capacity(n);
    while let Some(&first) = ready.iter().next() {
        ready.remove(&first);
        let c = first.1;
        // Greedy order inside the component.
        let mut left: Vec<usize> = sccs[c].iter().map(|&ix| g[ix]).collect();
        while !left.is_empty() {
            let score = |b: usize| {
                let (mut strong, mut weak) = (0, 0);
                for &(a, t, s) in edges {
                    if t == b && a != b && left.contains(&a) {
                        if s {
                            strong += 1;
                        } else {
                            weak += 1;
                        }
                    }
                }
                (strong, weak, prio[b], b)
            };
            let best = left.iter().copied().min_by_key(|&b| score(b)).unwrap_or(left[0]);
            seq.push(best);
            left.retain(|&b| b != best);
        }
        for &s in &succ[c] {
            indeg[s] -= 1;
            if indeg[s] == 0 {
                ready.insert((cprio[s], s));
            }
        }
    }
    seq
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_topological_and_cuts_cycles_at_weak_connections() {
        // 0 -> 1 -> 2, independent 3: topological, 3 by priority among the ready ones.
        assert_eq!(gauss_seidel_order(&[0, 1, 2, 3], &[(0, 1, true), (1, 2, true)]), vec![0, 1, 2, 3]);
        assert_eq!(gauss_seidel_order(&[3, 2, 1, 0], &[(0, 1, true), (1, 2, true)]), vec![3, 0, 1, 2]);
        // Cycle 0 <-> 1 with priorities: the first by priority when both are strong.
        assert_eq!(gauss_seidel_order(&[0, 1], &[(0, 1, true), (1, 0, true)]), vec![0, 1]);
        assert_eq!(gauss_seidel_order(&[1, 0], &[(0, 1, true), (1, 0, true)]), vec![1, 0]);
        // 1 -> 0 is weak (declared without feedthrough): cut it, i.e. step 0 first.
        assert_eq!(gauss_seidel_order(&[1, 0], &[(0, 1, true), (1, 0, false)]), vec![0, 1]);
        // A cycle downstream of a source.
        assert_eq!(gauss_seidel_order(&[2, 1, 0], &[(0, 1, true), (1, 2, true), (2, 1, true)]), vec![0, 2, 1]);
    }
}
