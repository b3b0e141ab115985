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
//!   function; it is refused when the system is compiled, naming the path that reads it;
//! - **a Co-Simulation signal block's output** ([`crate::Block`]): exchanged at the beginning
//!   of each step (the block advanced from t_k to t_k + T with its inputs from x(k)) and
//!   held over the step's stages;
//! - **a Model Exchange signal block's output** (an admittance with signal inputs,
//!   [`Admittance::inputs`](crate::Admittance::inputs); fmus/import/src/me_block.rs): a state
//!   signal, at every stage from that stage's state and time. An output with direct
//!   feedthrough ([`Admittance::signal_inputs`](crate::Admittance::signal_inputs)) also
//!   reads the stage's values of the inputs it depends on: the stage signals are written in
//!   the order of these dependencies (`Simulator::order_stage`), and a cycle of them (an
//!   algebraic loop) is refused when the system is compiled, naming its connections.
//!
//! A Model Exchange block's inputs are written like any signal a time function reads, by
//! their source's kind: at every stage when the source is a system input, a state signal
//! (a position, a velocity, another Model Exchange block's output, in dependency order) —
//! so a controller closing a loop on a body keeps RK4's order (tests/me_blocks.rs) —;
//! at the step's beginning, held, when it is an impedance's signal or a Co-Simulation
//! block's output. Its events (me.rs) are located within the step for its own states,
//! with its inputs as the step's last stage set them; the other components see the
//! event's effect on its outputs from the next step on.

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
    /// Signal `which`, element `elem`, of admittance `i`, read from its state alone (a Model
    /// Exchange block's output: and the stage's values of the inputs it depends on).
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

/// A signal connection to an admittance's input as the schedule holds it: (the signal read,
/// admittance, input, index of the connection in the file, gain).
pub(crate) type AdmLink = (String, usize, usize, usize, f64);

/// A signal connection to an input of a Model Exchange signal block (an admittance), kept
/// while the stage signals are ordered ([`Simulator::order_stage`]).
#[derive(Clone, Debug)]
pub(crate) struct Feed {
    /// The signal's tap (`None`: a system input).
    tap: Option<Tap>,
    a: usize,
    input: usize,
    /// "from -> block.input".
    text: String,
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
    /// Member of an algebraic loop (stepped by the loop's iteration).
    in_loop: bool,
}

/// An algebraic loop between signal blocks: its members in stepping order and the signal
/// connections between them.
#[derive(Clone, Debug)]
pub(crate) struct BlockLoop {
    pub(crate) members: Vec<usize>,
    /// (target block, position in its connected inputs, source block, source output, gain).
    links: Vec<(usize, usize, usize, usize, f64)>,
    /// "a, b (a.y -> b.u, b.z -> a.v; direct feedthrough: b.z depends on b.u, ...)".
    pub(crate) text: String,
}

/// One entry of the blocks' stepping order: a block, or an algebraic loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockStage {
    One(usize),
    Loop(usize),
}

/// How signal blocks step at a communication point (`"solver"`: `blocks`, `order`, `loop`).
#[derive(Clone, Debug)]
pub struct BlockOptions {
    /// One after the other (Gauss-Seidel), not all from t_k's values (Jacobi).
    pub gauss_seidel: bool,
    /// Block names in the order of priority for the Gauss-Seidel order and loop members
    /// (the others follow in file order).
    pub order: Vec<String>,
    /// Relative tolerance of an algebraic loop's fixed-point iteration (relative to
    /// max(1, |value|)).
    pub tolerance: f64,
    /// Most iterations of an algebraic loop per step.
    pub max_iterations: usize,
}

impl Default for BlockOptions {
    fn default() -> Self {
        BlockOptions { gauss_seidel: false, order: Vec::new(), tolerance: 1e-10, max_iterations: 100 }
    }
}

/// One system input: its current value function and the wires that read it.
#[derive(Clone, Debug)]
pub(crate) struct BusInput {
    pub(crate) name: String,
    pub(crate) value: TimeFunction,
    pub(crate) wires: Vec<Wire>,
}

/// The wires of a simulation, by when they are written.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bus {
    pub(crate) inputs: Vec<BusInput>,
    /// Written at every stage from the stage state.
    stage: Vec<(Tap, Vec<Wire>)>,
    /// Written at the beginning of each step.
    held: Vec<(Tap, Vec<Wire>)>,
    /// Each signal read, with when it is read (for `stiction check`), in the order wired.
    names: Vec<(String, When)>,
    /// While wiring: the names in `names`, and where each tap is in `stage` or `held`.
    named: HashSet<String>,
    tapped: HashMap<Tap, usize>,
    /// The signal blocks (schedule order), their algebraic loops and the Gauss-Seidel order.
    pub(crate) blocks: Vec<BlockIo>,
    pub(crate) loops: Vec<BlockLoop>,
    pub(crate) stages: Vec<BlockStage>,
    /// Gauss-Seidel: the signal connections (`connections[i]`) whose target steps before
    /// their source, so that they carry the previous communication point's value.
    pub(crate) cut: Vec<usize>,
    pub(crate) options: BlockOptions,
    /// Steps of algebraic loops taken, counting every repetition after a rollback.
    pub(crate) iterations: u64,
    /// A system of signal blocks alone whose stop time is not a whole number of steps, when
    /// every block can advance by a shorter step: (the step count k after the shortened last
    /// step, the stop time it ends at, its length).
    pub(crate) end: Option<(u64, f64, f64)>,
    /// The length of the step being taken when it is shorter than T
    /// ([`Simulator::step_short`]): the blocks advance by it.
    pub(crate) short: Option<f64>,
    /// While wiring: the signal connections to Model Exchange signal blocks' inputs.
    feeds: Vec<Feed>,
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
    /// Declare a system input `name` with start value `start` (before `wire`).
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

    /// The value of input `name` at the current time (`None`: no such input).
    pub fn input_value(&self, name: &str) -> Option<f64> {
        self.bus.inputs.iter().find(|i| i.name == name).map(|i| i.value.eval(self.time()))
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
    pub(crate) fn wire(
        &mut self,
        name: &str,
        wire: Wire,
        tap: impl FnOnce(&Self) -> Result<Tap>,
    ) -> Result<Option<Tap>> {
        let seen = |bus: &mut Bus, when| {
            if bus.named.insert(name.to_string()) {
                bus.names.push((name.to_string(), when));
            }
        };
        if let Some(input) = self.bus.inputs.iter_mut().find(|i| i.name == name) {
            input.wires.push(wire);
            seen(&mut self.bus, When::Input);
            return Ok(None);
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
            return Ok(Some(tap));
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
        Ok(Some(tap))
    }

    /// Have input `input` of admittance `a` (a Model Exchange signal block) read gain ×
    /// the signal `from` (`link` = (from, a, input, connection in the file, gain)), whose tap
    /// writes it into `wire` as [`wire`](Self::wire) says for its kind.
    pub(crate) fn feed_admittance(&mut self, link: &AdmLink, tap: Option<Tap>, wire: Wire) -> Result<()> {
        let (from, a, input, connection, gain) = (&link.0, link.1, link.2, link.3, link.4);
        let path = format!("connections[{connection}]");
        self.sched.adm[a]
            .connect_input(input, wire, gain)
            .map_err(|m| Error::invalid(&path, format!("'{}': {m}", &self.sched.adm_names[a])))?;
        let to = self.sched.adm[a].inputs().get(input).map_or("?", |i| i.name);
        let text = format!("{from} -> {}.{to}", &self.sched.adm_names[a]);
        self.bus.feeds.push(Feed { tap, a, input, text });
        Ok(())
    }

    /// Order the signals written at every stage so that an output of a Model Exchange
    /// signal block with direct feedthrough ([`Admittance::signal_inputs`](crate::Admittance::signal_inputs))
    /// is written after the signals connected to the inputs it depends on (a stable
    /// topological order: file order where nothing depends). A cycle of such outputs and
    /// connections is an algebraic loop, refused with its connections and dependencies.
    pub(crate) fn order_stage(&mut self) -> Result<()> {
        let feeds = std::mem::take(&mut self.bus.feeds);
        if feeds.is_empty() {
            return Ok(());
        }
        let s = &self.sched;
        let stage = &self.bus.stage;
        let pos: HashMap<Tap, usize> = stage.iter().enumerate().map(|(j, (t, _))| (*t, j)).collect();
        // Edge j -> k: stage signal j feeds an input that stage signal k depends on.
        let mut g = DiGraph::<usize, usize>::new();
        let nodes: Vec<NodeIndex> = (0..stage.len()).map(|j| g.add_node(j)).collect();
        for (k, (tap, _)) in stage.iter().enumerate() {
            let Tap::Adm { i, which, .. } = *tap else { continue };
            let deps = s.adm[i].signal_inputs(which);
            for (f, feed) in feeds.iter().enumerate() {
                if feed.a != i || !deps.contains(&feed.input) {
                    continue;
                }
                if let Some(&j) = feed.tap.as_ref().and_then(|t| pos.get(t)) {
                    g.add_edge(nodes[j], nodes[k], f);
                }
            }
        }
        let sccs = petgraph::algo::tarjan_scc(&g);
        if let Some(cycle) = sccs.iter().find(|c| c.len() > 1 || g.contains_edge(c[0], c[0])) {
            let inside: HashSet<NodeIndex> = cycle.iter().copied().collect();
            let mut conns = Vec::new();
            let mut deps = BTreeSet::new();
            for e in g.edge_indices() {
                let (a, b) = g.edge_endpoints(e).expect("an edge");
                if inside.contains(&a) && inside.contains(&b) {
                    let f = &feeds[g[e]];
                    if !conns.contains(&f.text) {
                        conns.push(f.text.clone());
                    }
                    if let Tap::Adm { i, which, .. } = stage[g[b]].0 {
                        let input = s.adm[f.a].inputs().get(f.input).map_or("?", |x| x.name);
                        deps.insert(format!(
                            "{}.{} depends on {}.{input}",
                            &s.adm_names[i],
                            s.adm[i].signals().get(which).map_or("?", |x| x.name),
                            &s.adm_names[f.a]
                        ));
                    }
                }
            }
            let deps: Vec<String> = deps.into_iter().collect();
            return Err(Error::invalid(
                "connections",
                format!(
                    "algebraic loop through Model Exchange signal blocks: {}; direct feedthrough: {}. Their \
                     outputs are evaluated at every stage in the order of their dependencies, which a cycle \
                     does not have; break the loop (an output without direct feedthrough, a Co-Simulation \
                     block, or an impedance's signal, which is held over the step)",
                    conns.join(", "),
                    deps.join(", ")
                ),
            ));
        }
        // Kahn's algorithm, the lowest index first among the ready ones.
        let mut indeg: Vec<usize> =
            nodes.iter().map(|&n| g.neighbors_directed(n, petgraph::Incoming).count()).collect();
        let mut ready: BTreeSet<usize> = (0..stage.len()).filter(|&j| indeg[j] == 0).collect();
        let mut order = Vec::with_capacity(stage.len());
        while let Some(j) = ready.pop_first() {
            order.push(j);
            for k in g.neighbors_directed(nodes[j], petgraph::Outgoing) {
                let k = g[k];
                indeg[k] -= 1;
                if indeg[k] == 0 {
                    ready.insert(k);
                }
            }
        }
        let mut old: Vec<Option<(Tap, Vec<Wire>)>> =
            std::mem::take(&mut self.bus.stage).into_iter().map(Some).collect();
        self.bus.stage = order.into_iter().filter_map(|j| old[j].take()).collect();
        for (j, (tap, _)) in self.bus.stage.iter().enumerate() {
            self.bus.tapped.insert(*tap, j);
        }
        Ok(())
    }

    /// Give the bus the schedule's signal blocks (before any [`wire`](Self::wire)), stepped
    /// as `options` say.
    pub(crate) fn add_blocks(&mut self, options: BlockOptions) {
        self.bus.options = options;
        self.bus.blocks = self
            .sched
            .blocks
            .iter()
            .map(|b| {
                let n = b.outputs().len();
                BlockIo { y: vec![0.0; n], out: vec![Vec::new(); n], ..Default::default() }
            })
            .collect();
    }

    /// The length of the last step when the stop time `stop` is not a whole number of steps
    /// (`step_count`) and the system is made of signal blocks alone that all can advance by
    /// a shorter step ([`crate::Block::variable_step`]); the run then ends at `stop` exactly.
    /// `Err` with that length and the names of the blocks that cannot, when some cannot
    /// (every step then keeps T and the run ends after `stop`).
    pub fn shortened_last_step(&self, stop: f64) -> Option<std::result::Result<f64, (f64, Vec<String>)>> {
        let s = &self.sched;
        let rest = partial_step(stop, self.step)?;
        if s.blocks.is_empty() || !s.adm.is_empty() || !s.imp.is_empty() {
            return None;
        }
        let fixed: Vec<String> =
            (0..s.blocks.len()).filter(|&b| !s.blocks[b].variable_step()).map(|b| s.block_names[b].to_string()).collect();
        Some(if fixed.is_empty() { Ok(rest) } else { Err((rest, fixed)) })
    }

    /// End the run of a system of signal blocks alone at `stop` with a shortened last step,
    /// when [`shortened_last_step`](Self::shortened_last_step) allows it (else nothing changes).
    pub(crate) fn end_blocks_at(&mut self, stop: f64) {
        if let Some(Ok(rest)) = self.shortened_last_step(stop) {
            self.bus.end = Some((step_count(stop, self.step), stop, rest));
        }
    }

    /// Whether input `input` of block `b` is connected.
    pub(crate) fn block_input_connected(&self, b: usize, input: usize) -> bool {
        self.bus.blocks.get(b).is_some_and(|io| io.inputs.iter().any(|x| x.0 == input))
    }

    /// gain × the signal connected to input `input` of block `b`, as it is now.
    pub(crate) fn block_input_value(&self, b: usize, input: usize) -> Option<f64> {
        let io = self.bus.blocks.get(b)?;
        io.inputs.iter().find(|x| x.0 == input).map(|(_, w, gain)| gain * w.get())
    }

    /// Steps of algebraic loops taken so far (each fixed-point iteration of each loop counts
    /// one; a loop that converges at once takes one per step).
    pub fn loop_iterations(&self) -> u64 {
        self.bus.iterations
    }

    /// The algebraic loops between signal blocks, each as "a, b (a.y -> b.u, ...; direct
    /// feedthrough: ...)".
    pub fn block_loops(&self) -> impl Iterator<Item = &str> {
        self.bus.loops.iter().map(|l| l.text.as_str())
    }

    /// The blocks' Gauss-Seidel stepping order as names (a loop as "[loop a, b]"), and the
    /// signal connections it cuts ("a.y -> b.u"); `None` under Jacobi.
    pub fn block_order(&self) -> Option<(Vec<String>, Vec<String>)> {
        if !self.bus.options.gauss_seidel {
            return None;
        }
        let s = &self.sched;
        let names = &s.block_names;
        let seq = self
            .bus
            .stages
            .iter()
            .map(|st| match *st {
                BlockStage::One(b) => names[b].to_string(),
                BlockStage::Loop(l) => {
                    let m: Vec<&str> = self.bus.loops[l].members.iter().map(|&b| &names[b]).collect();
                    format!("[loop {}]", m.join(", "))
                }
            })
            .collect();
        let cut = s
            .signal_links
            .iter()
            .filter(|l| self.bus.cut.contains(&l.3))
            .map(|l| link_text(l, &format!("{}.{}", &names[l.1], s.blocks[l.1].inputs()[l.2].name)))
            .collect();
        Some((seq, cut))
    }

    /// The blocks' loop options (tolerance, most iterations).
    pub fn block_options(&self) -> &BlockOptions {
        &self.bus.options
    }

    /// Have input `input` of block `b` read gain × `wire` (a signal connection).
    pub(crate) fn feed_block(&mut self, b: usize, input: usize, wire: Wire, gain: f64) {
        self.bus.blocks[b].inputs.push((input, wire, gain));
    }

    /// The blocks' algebraic loops and stepping order, as the FMU-only master found them.
    ///
    /// An algebraic loop is a cycle of signal connections and declared direct feedthrough
    /// (an output that depends on an input of its own block, [`Block::feedthrough`]); a
    /// cycle through a physical component never is one (a block's outputs reach the network
    /// only through time functions, read held). Loops that share a block are one loop. A
    /// loop is solved by fixed-point iteration with rollback when every block in it can save
    /// and restore its state ([`Block::can_save_state`]); otherwise it is an error naming
    /// its blocks, connections and dependencies.
    ///
    /// Gauss-Seidel order: [`gauss_seidel_order`] over the blocks and loops, with priorities
    /// from `solver.order` (else file order).
    pub(crate) fn order_blocks(&mut self) -> Result<()> {
        let s = &self.sched;
        let n = s.blocks.len();
        if n == 0 {
            return Ok(());
        }
        let listed = &self.bus.options.order;
        let priority: Vec<usize> =
            (0..n).map(|b| listed.iter().position(|x| *x == s.block_names[b]).unwrap_or(listed.len() + b)).collect();
        // Each link from a block output: (source block, output, target block, input, link).
        let links: Vec<(usize, usize, usize, usize, usize)> = s
            .signal_links
            .iter()
            .enumerate()
            .filter_map(|(l, (from, b, input, _, _))| self.block_output(from).map(|(a, o)| (a, o, *b, *input, l)))
            .collect();
        // Outputs as nodes; an edge from output (a, o) to output (b, p) when (a, o) feeds an
        // input of b that p depends on.
        let mut g = DiGraph::<(usize, usize), ()>::new();
        let node: Vec<Vec<NodeIndex>> =
            (0..n).map(|b| (0..s.blocks[b].outputs().len()).map(|o| g.add_node((b, o))).collect()).collect();
        for &(a, o, b, input, _) in &links {
            for p in 0..node[b].len() {
                if s.blocks[b].feedthrough(p).contains(&input) {
                    g.add_edge(node[a][o], node[b][p], ());
                }
            }
        }
        // Loops: union of the blocks of each cyclic strongly connected component.
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let mut looped = vec![false; n];
        let mut found: Vec<(BTreeSet<usize>, String)> = Vec::new();
        let out_name = |b: usize, o: usize| format!("{}.{}", &s.block_names[b], s.blocks[b].outputs()[o].name);
        let in_name = |b: usize, i: usize| format!("{}.{}", &s.block_names[b], s.blocks[b].inputs()[i].name);
        for scc in petgraph::algo::tarjan_scc(&g) {
            if !(scc.len() > 1 || g.contains_edge(scc[0], scc[0])) {
                continue;
            }
            let inside: BTreeSet<(usize, usize)> = scc.iter().map(|&ix| g[ix]).collect();
            let members: BTreeSet<usize> = inside.iter().map(|&(b, _)| b).collect();
            let first = *members.iter().next().unwrap_or(&0);
            for &m in &members {
                looped[m] = true;
                let (r1, r2) = (root(&mut parent, first), root(&mut parent, m));
                parent[r2] = r1;
            }
            // The connections inside the cycle and the dependencies that close it.
            let mut conns = Vec::new();
            let mut feeds = BTreeSet::new();
            for &(a, o, b, input, l) in &links {
                let deps: Vec<usize> = (0..node[b].len())
                    .filter(|&p| inside.contains(&(b, p)) && s.blocks[b].feedthrough(p).contains(&input))
                    .collect();
                if inside.contains(&(a, o)) && !deps.is_empty() {
                    conns.push(link_text(&s.signal_links[l], &in_name(b, input)));
                    for p in deps {
                        feeds.insert(format!("{} depends on {}", out_name(b, p), in_name(b, input)));
                    }
                }
            }
            let feeds: Vec<String> = feeds.into_iter().collect();
            found.push((members, format!("{}; direct feedthrough: {}", conns.join(", "), feeds.join(", "))));
        }
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for b in (0..n).filter(|&b| looped[b]) {
            let r = root(&mut parent, b);
            match groups.iter_mut().find(|g| g.0 == r) {
                Some(g) => g.1.push(b),
                None => groups.push((r, vec![b])),
            }
        }
        let mut loops = Vec::new();
        for (_, mut members) in groups {
            members.sort_by_key(|&b| (priority[b], b));
            let text: Vec<&str> =
                found.iter().filter(|(m, _)| m.iter().any(|b| members.contains(b))).map(|(_, t)| t.as_str()).collect();
            let text = text.join("; ");
            let names: Vec<&str> = members.iter().map(|&b| &s.block_names[b]).collect();
            let stuck: Vec<&str> = members
                .iter()
                .filter(|&&b| !s.blocks[b].can_save_state())
                .map(|&b| &s.block_names[b])
                .collect();
            if !stuck.is_empty() {
                return Err(Error::invalid(
                    "connections",
                    format!(
                        "algebraic loop between the signal blocks {}: {text}. It would be solved by fixed-point \
                         iteration with rollback, but {} cannot save and restore {} state (an FMU must declare \
                         canGetAndSetFMUstate=\"true\" and export the FMU-state functions); break the loop (a block \
                         without direct feedthrough, or a delay)",
                        names.join(", "),
                        stuck.iter().map(|b| format!("'{b}'")).collect::<Vec<_>>().join(" and "),
                        if stuck.len() == 1 { "its" } else { "their" }
                    ),
                ));
            }
            let member_links = (0..s.signal_links.len())
                .filter_map(|l| {
                    let (from, b, input, _, gain) = &s.signal_links[l];
                    let (a, o) = self.block_output(from)?;
                    if !(members.contains(&a) && members.contains(b)) {
                        return None;
                    }
                    // The link's position among its target's connected inputs (feed_block's order).
                    let pos = s.signal_links[..l].iter().filter(|x| x.1 == *b).count();
                    let _ = input;
                    Some((*b, pos, a, o, *gain))
                })
                .collect();
            loops.push(BlockLoop { members, links: member_links, text: format!("{} ({text})", names.join(", ")) });
        }
        // Stepping order: loops and the blocks outside them.
        let mut unit_of = vec![usize::MAX; n];
        let mut units: Vec<(BlockStage, usize)> = Vec::new();
        for (l, lp) in loops.iter().enumerate() {
            for &m in &lp.members {
                unit_of[m] = units.len();
            }
            units.push((BlockStage::Loop(l), lp.members.iter().map(|&m| priority[m]).min().unwrap_or(0)));
        }
        for b in 0..n {
            if !looped[b] {
                unit_of[b] = units.len();
                units.push((BlockStage::One(b), priority[b]));
            }
        }
        // Edges between units: strong where the source output may feed through from its
        // block's connected inputs (declared or not declared), weak where it is declared not to.
        let mut edges = Vec::new();
        for &(a, o, b, _, _) in &links {
            if unit_of[a] != unit_of[b] {
                let connected: Vec<usize> = s.signal_links.iter().filter(|l| l.1 == a).map(|l| l.2).collect();
                edges.push((unit_of[a], unit_of[b], s.blocks[a].may_feed_through(o, &connected)));
            }
        }
        let prio: Vec<usize> = units.iter().map(|u| u.1).collect();
        let seq = gauss_seidel_order(&prio, &edges);
        let stages: Vec<BlockStage> = seq.iter().map(|&u| units[u].0).collect();
        let mut pos = vec![0usize; n];
        let mut p = 0;
        for st in &stages {
            let members: &[usize] = match st {
                BlockStage::One(b) => std::slice::from_ref(b),
                BlockStage::Loop(l) => &loops[*l].members,
            };
            for &m in members {
                pos[m] = p;
                p += 1;
            }
        }
        let cut = links
            .iter()
            .filter(|&&(a, _, b, _, _)| unit_of[a] != unit_of[b] && pos[a] > pos[b])
            .map(|&(_, _, _, _, l)| s.signal_links[l].3)
            .collect();
        for (b, io) in self.bus.blocks.iter_mut().enumerate() {
            io.in_loop = looped[b];
        }
        self.bus.loops = loops;
        self.bus.stages = stages;
        self.bus.cut = cut;
        Ok(())
    }

    /// The block output a signal name reads, if it is one.
    fn block_output(&self, name: &str) -> Option<(usize, usize)> {
        let (comp, out) = name.split_once('.')?;
        let b = self.sched.block_names.position(comp)?;
        let o = self.sched.blocks[b].outputs().iter().position(|x| x.name == out)?;
        Some((b, o))
    }

    /// The signal blocks at the communication point t_k = kT, with the state signals at
    /// x(k) written just before, as the FMU-only master steps its FMUs.
    ///
    /// Jacobi (the default): every block takes its connected inputs from their signals at
    /// t_k (the blocks' outputs as their last step ended); the blocks outside algebraic
    /// loops advance to t_k + T (on several threads when the simulation has them; the
    /// result does not depend on it), then each loop is iterated ([`Self::iterate_loop`]).
    /// The outputs they end with are held over the step (an output row at t_{k+1} shows them).
    ///
    /// Gauss-Seidel (`"solver": {"blocks": "gauss-seidel"}`): in the order of
    /// [`order_blocks`](Self::order_blocks), each block (or loop) takes its inputs from the
    /// outputs as they are when its turn comes (of those before it: at t_{k+1}), advances
    /// and publishes its outputs.
    fn exchange_blocks(&mut self) -> Result<()> {
        let t = self.time();
        let h = match (self.bus.short, self.bus.end) {
            (Some(h), _) => h,
            (None, Some((k, _, last))) if self.k + 1 == k => last,
            _ => self.step,
        };
        let parallel = self.threads > 1;
        let Simulator { sched: s, bus, .. } = self;
        let fail = |b: usize, f: crate::error::Fault| Error::Simulation {
            time: t,
            component: s.block_names[b].to_string(),
            message: f.0,
        };
        if !bus.options.gauss_seidel {
            for io in bus.blocks.iter_mut() {
                io.take_inputs();
            }
            let step_one = |b: usize, io: &mut BlockIo| -> std::result::Result<(), crate::error::Fault> {
                s.blocks[b].set_inputs(&io.u)?;
                s.blocks[b].advance(t, h, &mut io.y)
            };
            let outside = bus.blocks.iter().filter(|io| !io.in_loop).count();
            if parallel && outside > 1 {
                use rayon::prelude::*;
                let results: Vec<_> = bus
                    .blocks
                    .par_iter_mut()
                    .enumerate()
                    .map(|(b, io)| if io.in_loop { Ok(()) } else { step_one(b, io) })
                    .collect();
                // The first failure in block order, whichever thread met it.
                for (b, r) in results.into_iter().enumerate() {
                    r.map_err(|f| fail(b, f))?;
                }
            } else {
                for (b, io) in bus.blocks.iter_mut().enumerate() {
                    if !io.in_loop {
                        step_one(b, io).map_err(|f| fail(b, f))?;
                    }
                }
            }
            for io in bus.blocks.iter().filter(|io| !io.in_loop) {
                io.publish();
            }
            for l in 0..bus.loops.len() {
                Self::iterate_loop(s, bus, l, t, h)?;
            }
            return Ok(());
        }
        for k in 0..bus.stages.len() {
            match bus.stages[k] {
                BlockStage::One(b) => {
                    let io = &mut bus.blocks[b];
                    io.take_inputs();
                    s.blocks[b].set_inputs(&io.u).map_err(|f| fail(b, f))?;
                    s.blocks[b].advance(t, h, &mut io.y).map_err(|f| fail(b, f))?;
                    io.publish();
                }
                BlockStage::Loop(l) => {
                    for &m in &bus.loops[l].members {
                        bus.blocks[m].take_inputs();
                    }
                    Self::iterate_loop(s, bus, l, t, h)?;
                }
            }
        }
        Ok(())
    }

    /// Fixed-point iteration with rollback over the step [t, t + h] of loop `l`, whose
    /// members have taken their inputs (the first guess: the loop's values at t_k under
    /// Jacobi, as they are when the loop's turn comes under Gauss-Seidel). The members save
    /// their state, step with the current guess (Gauss-Seidel: each with the outputs of the
    /// members already stepped in this pass), and the outputs they end with become the next
    /// guess; the step is rolled back and repeated until the inputs used equal gain × the
    /// outputs produced within the tolerance (relative to max(1, |value|)). The converged
    /// step couples the loop implicitly: its inputs over [t_k, t_{k+1}] are the loop's
    /// values at t_{k+1}.
    fn iterate_loop(s: &crate::schedule::Schedule, bus: &mut Bus, l: usize, t: f64, h: f64) -> Result<()> {
        let fail = |b: usize, f: crate::error::Fault| Error::Simulation {
            time: t,
            component: s.block_names[b].to_string(),
            message: f.0,
        };
        let lp = &bus.loops[l];
        let gs = bus.options.gauss_seidel;
        for &m in &lp.members {
            s.blocks[m].save_state().map_err(|f| fail(m, f))?;
        }
        let mut residual = f64::INFINITY;
        for pass in 1..=bus.options.max_iterations {
            bus.iterations += 1;
            if pass > 1 {
                for &m in &lp.members {
                    s.blocks[m].restore_state().map_err(|f| fail(m, f))?;
                }
            }
            for &m in &lp.members {
                if gs {
                    for &(to, pos, from, out, gain) in &lp.links {
                        if to == m {
                            let v = gain * bus.blocks[from].y[out];
                            bus.blocks[m].u[pos].1 = v;
                        }
                    }
                }
                let io = &mut bus.blocks[m];
                s.blocks[m].set_inputs(&io.u).map_err(|f| fail(m, f))?;
                s.blocks[m].advance(t, h, &mut io.y).map_err(|f| fail(m, f))?;
            }
            residual = 0.0f64;
            for &(to, pos, from, out, gain) in &lp.links {
                let new = gain * bus.blocks[from].y[out];
                let used = &mut bus.blocks[to].u[pos].1;
                residual = residual.max((new - *used).abs() / new.abs().max(1.0));
                *used = new;
            }
            if residual <= bus.options.tolerance {
                for &m in &lp.members {
                    bus.blocks[m].publish();
                }
                return Ok(());
            }
        }
        let names: Vec<&str> = lp.members.iter().map(|&b| &s.block_names[b]).collect();
        Err(Error::Simulation {
            time: t,
            component: names.join(", "),
            message: format!(
                "the algebraic loop {} did not converge in {} iterations (relative residual {residual:.3e} > tolerance {})",
                lp.text, bus.options.max_iterations, bus.options.tolerance
            ),
        })
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
            component: s.block_names[b].to_string(),
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
                for b in 0..n {
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
                component: s.imp_names[i].to_string(),
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
    pub(crate) fn publish(&self) {
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

/// The number of steps of T of a run to `stop` (the last may be shortened).
pub(crate) fn step_count(stop: f64, step: f64) -> u64 {
    (stop / step - 1e-9).ceil().max(0.0) as u64
}

/// The length of the last step if `stop` is not a whole number of steps `step`.
fn partial_step(stop: f64, step: f64) -> Option<f64> {
    let n = step_count(stop, step);
    let rest = stop - n.saturating_sub(1) as f64 * step;
    (n >= 1 && step - rest > 1e-9 * step).then_some(rest)
}

/// "a.y -> b.u" (with " (gain g)" when the gain is not 1) for signal link `link` into `to`.
fn link_text(link: &(String, usize, usize, usize, f64), to: &str) -> String {
    let gain = link.4;
    if gain == 1.0 {
        format!("{} -> {to}", link.0)
    } else {
        format!("{} -> {to} (gain {gain})", link.0)
    }
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
