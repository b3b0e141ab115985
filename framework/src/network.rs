//! The component network: a petgraph graph of admittances, impedances and ground,
//! with one edge per impedance port connection. It is for building, validating and
//! drawing; `Schedule::compile` (one layer up) turns it into the flat arrays the stepper
//! runs.
//!
//! Invariants checked here (each violation is an error naming components and ports):
//! names are unique; the graph is bipartite (an impedance port connects to an
//! admittance port or to ground, never to another impedance; admittances never connect
//! to each other); domains match ([`Domain::attaches_to`]); every impedance port is
//! connected exactly once.

use crate::component::{Admittance, Block, Impedance, MAX_IMPEDANCE_PORTS};
use crate::error::{Error, Result};
use crate::names::Names;
use crate::port::{Domain, Layout, Offset};
use nalgebra::Vector3;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Graph;
use std::hash::BuildHasher;
use std::sync::Arc;

/// Handle of an admittance in a [`Network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AdmittanceId(pub(crate) NodeIndex);

/// Handle of an impedance in a [`Network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImpedanceId(pub(crate) NodeIndex);

/// A node of the network. Components are shared (`Arc`) from the start, as the schedule
/// holds them: made at load time, right after each component is built, the copy out of
/// its `Box` leaves a hole the next component fills, where copying 10⁵ of them at compile
/// time would leave 10⁵ holes.
/// Its name is the network's (`Network::name`: one [`Names`] for all nodes).
pub enum Node {
    Admittance {
        layout: Layout,
        comp: Arc<dyn Admittance>,
    },
    Impedance {
        layout: Layout,
        comp: Arc<dyn Impedance>,
    },
    /// A signal block: no ports; its inputs are set by signal connections.
    Block {
        comp: Arc<dyn Block>,
    },
    Ground,
}

/// A signal connection: the signal `from` (any signal of the system, resolved when it is
/// compiled) sets input `input` of the block `block`; `connection` is its index in the file.
#[derive(Clone, Debug)]
pub struct SignalLink {
    pub from: String,
    pub block: NodeIndex,
    pub input: usize,
    pub connection: usize,
    /// The input is set to gain × the signal.
    pub gain: f64,
}

/// An edge: impedance port `imp_port` attached to admittance port `adm_port`
/// (or to ground) with an optional offset in the admittance port's frame
/// (for ground: a fixed world position).
#[derive(Clone, Debug)]
pub struct Link {
    pub imp_port: usize,
    pub adm_port: usize,
    pub offset: Option<Offset>,
}

/// Where an impedance port is attached.
#[derive(Clone, Debug)]
pub enum Target<'a> {
    /// Fixed to the world, at position `at` (origin when `None`).
    Ground { at: Option<Vector3<f64>> },
    /// On port `port` of an admittance, with an optional body-frame offset.
    Port { adm: AdmittanceId, port: &'a str, offset: Option<Offset> },
}

/// A component made into a node, with its name checked and its layout read, but not yet in
/// a network: the loader makes these on worker threads and adds them in file order
/// ([`Network::add_new`]), so the network is the same for any thread count.
pub struct NewNode {
    name: NodeName,
    node: Node,
}

/// A node's name on its way into the network: inline up to 22 bytes. The loader's workers
/// make 10⁵ nodes and the adding thread copies their names into [`Names`]; a `String` each
/// would be 10⁵ small blocks freed there, which glibc consolidates at every large free.
enum NodeName {
    Inline(u8, [u8; 22]),
    Heap(Box<str>),
}

impl NodeName {
    fn new(s: &str) -> NodeName {
        let mut b = [0u8; 22];
        match b.get_mut(..s.len()) {
            Some(head) => {
                head.copy_from_slice(s.as_bytes());
                NodeName::Inline(s.len() as u8, b)
            }
            None => NodeName::Heap(s.into()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // The bytes of a whole &str, so always UTF-8.
            NodeName::Inline(n, b) => std::str::from_utf8(&b[..*n as usize]).unwrap_or_default(),
            NodeName::Heap(s) => s,
        }
    }
}

impl NewNode {
    fn check_name(name: &str) -> Result<()> {
        if name.is_empty() || name.contains('.') || name == "ground" {
            return Err(Error::Network(format!(
                "component name '{name}' is not allowed (empty, contains '.', or is 'ground')"
            )));
        }
        Ok(())
    }

    pub fn admittance(name: &str, comp: Box<dyn Admittance>) -> Result<NewNode> {
        Self::check_name(name)?;
        let layout = comp.layout();
        Ok(NewNode { name: NodeName::new(name), node: Node::Admittance { layout, comp: Arc::from(comp) } })
    }

    pub fn block(name: &str, comp: Box<dyn Block>) -> Result<NewNode> {
        Self::check_name(name)?;
        Ok(NewNode { name: NodeName::new(name), node: Node::Block { comp: Arc::from(comp) } })
    }

    pub fn impedance(name: &str, comp: Box<dyn Impedance>) -> Result<NewNode> {
        Self::check_name(name)?;
        let layout = comp.layout();
        if layout.ports.is_empty() || layout.ports.len() > MAX_IMPEDANCE_PORTS {
            return Err(Error::Network(format!(
                "impedance '{name}' has {} ports; an impedance has 1 to {MAX_IMPEDANCE_PORTS}",
                layout.ports.len()
            )));
        }
        Ok(NewNode { name: NodeName::new(name), node: Node::Impedance { layout, comp: Arc::from(comp) } })
    }
}

/// A network of components under construction.
pub struct Network {
    pub(crate) graph: Graph<Node, Link>,
    pub(crate) ground: NodeIndex,
    /// The name of every node, by node index (the ground's is "ground").
    node_names: Names,
    /// The components by name: a table of node indices hashed by the node's name (no
    /// second copy of the names; foldhash, seeded per process, instead of SipHash).
    names: hashbrown::HashTable<NodeIndex>,
    hasher: foldhash::fast::RandomState,
    /// Admittances and impedances in insertion order (the schedule keeps this order).
    pub(crate) adm_order: Vec<NodeIndex>,
    pub(crate) imp_order: Vec<NodeIndex>,
    /// Signal blocks in insertion order, and the signal connections in file order.
    pub(crate) block_order: Vec<NodeIndex>,
    pub(crate) signal_links: Vec<SignalLink>,
}

impl Default for Network {
    fn default() -> Self {
        Self::new()
    }
}

impl Network {
    /// An empty network (with its ground node).
    pub fn new() -> Self {
        Self::with_capacity(0, 0)
    }

    /// An empty network with room for `components` components and `links` port
    /// connections (a graph grown by doubling can hold twice the memory it needs).
    pub fn with_capacity(components: usize, links: usize) -> Self {
        let mut graph = Graph::with_capacity(components + 1, links);
        let ground = graph.add_node(Node::Ground);
        let mut node_names = Names::with_capacity(components + 1, 0);
        node_names.push("ground");
        Network {
            graph,
            ground,
            node_names,
            names: hashbrown::HashTable::with_capacity(components),
            hasher: Default::default(),
            adm_order: Vec::with_capacity(components),
            imp_order: Vec::with_capacity(components),
            block_order: Vec::new(),
            signal_links: Vec::new(),
        }
    }

    /// The node called `name`.
    fn lookup(&self, name: &str) -> Option<NodeIndex> {
        let h = self.hasher.hash_one(name);
        self.names.find(h, |&ix| &self.node_names[ix.index()] == name).copied()
    }

    /// Make room for one link per impedance port (each takes exactly one).
    pub fn reserve_links(&mut self) {
        let ports: usize = self.imp_order.iter().filter_map(|&ix| self.layout(ix)).map(|l| l.ports.len()).sum();
        self.graph.reserve_exact_edges(ports.saturating_sub(self.graph.edge_count()));
    }

    /// The component names, for suggestions.
    fn all_names(&self) -> impl Iterator<Item = &str> {
        self.adm_order.iter().chain(&self.imp_order).map(|&ix| self.name(ix))
    }

    /// Add an admittance. Fails if the name is taken.
    pub fn add_admittance(&mut self, name: &str, comp: Box<dyn Admittance>) -> Result<AdmittanceId> {
        let node = NewNode::admittance(name, comp)?;
        self.add_new(node).map(AdmittanceId)
    }

    /// Add an impedance. Fails if the name is taken.
    pub fn add_impedance(&mut self, name: &str, comp: Box<dyn Impedance>) -> Result<ImpedanceId> {
        let node = NewNode::impedance(name, comp)?;
        self.add_new(node).map(ImpedanceId)
    }

    /// Add a component made into a node by [`NewNode`] (on any thread). Fails if the name
    /// is taken.
    pub fn add_new(&mut self, node: NewNode) -> Result<NodeIndex> {
        // One hash and one probe of the name table: its free slot takes the new node.
        let NewNode { name, node } = node;
        let name = name.as_str();
        let h = self.hasher.hash_one(name);
        let (names, hasher) = (&self.node_names, &self.hasher);
        let slot = match self.names.entry(h, |&i| &names[i.index()] == name, |&i| hasher.hash_one(&names[i.index()])) {
            hashbrown::hash_table::Entry::Occupied(_) => {
                return Err(Error::Network(format!("two components are named '{name}'")))
            }
            hashbrown::hash_table::Entry::Vacant(v) => v,
        };
        let (adm, block) = (matches!(node, Node::Admittance { .. }), matches!(node, Node::Block { .. }));
        let ix = self.graph.add_node(node);
        debug_assert_eq!(ix.index(), self.node_names.len());
        self.node_names.push(name);
        slot.insert(ix);
        if adm {
            self.adm_order.push(ix);
        } else if block {
            self.block_order.push(ix);
        } else {
            self.imp_order.push(ix);
        }
        Ok(ix)
    }

    /// Look up a component by name.
    pub fn find(&self, name: &str) -> Option<Component> {
        let ix = self.lookup(name)?;
        match &self.graph[ix] {
            Node::Admittance { .. } => Some(Component::Admittance(AdmittanceId(ix))),
            Node::Impedance { .. } => Some(Component::Impedance(ImpedanceId(ix))),
            Node::Block { .. } => Some(Component::Block),
            Node::Ground => None,
        }
    }

    fn layout(&self, ix: NodeIndex) -> Option<&Layout> {
        match &self.graph[ix] {
            Node::Admittance { layout, .. } | Node::Impedance { layout, .. } => Some(layout),
            Node::Block { .. } | Node::Ground => None,
        }
    }

    /// Record a signal connection resolved by [`resolve_ends`](Self::resolve_ends), the
    /// `connection`-th of the file.
    pub(crate) fn add_signal_link(
        &mut self,
        from: &str,
        block: NodeIndex,
        input: usize,
        connection: usize,
        gain: f64,
    ) -> Result<()> {
        if let Some(l) = self.signal_links.iter().find(|l| l.block == block && l.input == input) {
            return Err(Error::Network(format!(
                "input '{}.{}' is connected twice (already from '{}', connections[{}])",
                self.name(block),
                self.block_input_name(block, input),
                l.from,
                l.connection
            )));
        }
        self.signal_links.push(SignalLink { from: from.to_string(), block, input, connection, gain });
        Ok(())
    }

    fn block_input_name(&self, ix: NodeIndex, input: usize) -> &'static str {
        match &self.graph[ix] {
            Node::Block { comp, .. } => comp.inputs().get(input).map(|i| i.name).unwrap_or("?"),
            Node::Admittance { comp, .. } => comp.inputs().get(input).map(|i| i.name).unwrap_or("?"),
            _ => "?",
        }
    }

    pub(crate) fn name(&self, ix: NodeIndex) -> &str {
        &self.node_names[ix.index()]
    }

    fn existing_link(&self, imp: NodeIndex, port: usize) -> Option<EdgeIndex> {
        self.graph.edges(imp).find(|e| e.weight().imp_port == port).map(|e| e.id())
    }

    /// Attach port `imp_port` of impedance `imp` to `target`. Checks domains and that
    /// the port is not connected yet; the error names both ends.
    pub fn try_connect(&mut self, imp: ImpedanceId, imp_port: &str, target: Target<'_>) -> Result<()> {
        let target = match target {
            Target::Ground { at } => End::Ground(at),
            Target::Port { adm, port, offset } => End::Adm(adm.0, PortSel::Named(port), offset),
        };
        self.attach(imp.0, PortSel::Named(imp_port), target)
    }

    /// The index of the port `sel` of node `ix` (`Only`: its single port); the error
    /// names the component's ports.
    fn port_of(&self, ix: NodeIndex, sel: PortSel<'_>, kind: &str) -> Result<usize> {
        let layout = self.layout(ix).ok_or_else(|| Error::Network(format!("not an {kind}")))?;
        match sel {
            PortSel::Only => Ok(0),
            PortSel::Named(port) => layout.port_index(port).ok_or_else(|| {
                let hint = crate::error::suggestion(port, layout.ports.iter().map(|p| &*p.name));
                Error::Network(format!(
                    "{kind} '{}' has no port '{port}'{hint} (ports: {})",
                    self.name(ix),
                    port_list(layout)
                ))
            }),
        }
    }

    fn port_name(&self, ix: NodeIndex, p: usize) -> &str {
        self.layout(ix).map(|l| &*l.ports[p].name).unwrap_or("")
    }

    /// [`try_connect`](Self::try_connect) by node and port selection.
    fn attach(&mut self, imp: NodeIndex, iport: PortSel<'_>, target: End<'_>) -> Result<()> {
        let ip = self.port_of(imp, iport, "impedance")?;
        let idomain = self.layout(imp).expect("checked by port_of").ports[ip].domain;
        if let Some(e) = self.existing_link(imp, ip) {
            let (_, other) = self.graph.edge_endpoints(e).expect("edge exists");
            return Err(Error::Network(format!(
                "port '{}.{}' is connected twice (already to '{}')",
                self.name(imp),
                self.port_name(imp, ip),
                self.name(other)
            )));
        }
        match target {
            End::Ground(at) => {
                let g = self.ground;
                self.graph.add_edge(imp, g, Link { imp_port: ip, adm_port: 0, offset: at.map(Offset::World) });
            }
            End::Adm(adm, port, offset) => {
                let ends = |this: &Self| format!("'{}.{}'", this.name(imp), this.port_name(imp, ip));
                if !matches!(self.graph[adm], Node::Admittance { .. }) {
                    return Err(Error::Network(format!(
                        "{} can only connect to an admittance or to ground, \
                         and '{}' is an impedance (impedances never connect to impedances)",
                        ends(self),
                        self.name(adm)
                    )));
                }
                let ap = self.port_of(adm, port, "admittance")?;
                let adomain = self.layout(adm).expect("an admittance").ports[ap].domain;
                let aport = || format!("'{}.{}'", self.name(adm), self.port_name(adm, ap));
                if !idomain.attaches_to(adomain) {
                    return Err(Error::Network(format!(
                        "{} is a {idomain} port and cannot attach to the {adomain} port {}",
                        ends(self),
                        aport()
                    )));
                }
                if offset.is_some() && adomain != Domain::Frame {
                    return Err(Error::Network(format!(
                        "{} -> {}: an offset ('at') needs a frame port, and {} is a {adomain} port",
                        ends(self),
                        aport(),
                        aport()
                    )));
                }
                self.graph.add_edge(imp, adm, Link { imp_port: ip, adm_port: ap, offset });
            }
            End::Imp(..) | End::Signal(_) | End::BlockIn(..) => unreachable!("attach takes an admittance or ground"),
        }
        Ok(())
    }

    /// Connect by names as written in JSON: `from` and `to` are `component.port`,
    /// `component` (when it has exactly one port) or `ground`; one side must be an
    /// impedance port, the other an admittance port or ground.
    pub fn connect_names(&mut self, from: &str, to: &str, at: Option<Offset>) -> Result<()> {
        let ends = self.resolve_ends(from, to)?;
        self.connect_ends(from, to, ends, at)
    }

    /// The two ends of a connection, looked up by name (read only: the loader resolves
    /// many connections on the worker threads, then connects them in file order).
    pub(crate) fn resolve_ends<'s>(&self, from: &'s str, to: &'s str) -> Result<Ends<'s>> {
        // To a signal block's input: a signal connection, from any signal (resolved when the
        // system is compiled).
        if let Some((comp, input)) = to.split_once('.') {
            // A Model Exchange signal block (an admittance with signal inputs): an input by
            // its name; one without ports has nothing else to connect to.
            let adm_inputs = |ix: NodeIndex| match &self.graph[ix] {
                Node::Admittance { comp, layout, .. } => {
                    let inputs = comp.inputs();
                    let named = inputs.iter().any(|x| x.name == input);
                    (!inputs.is_empty() && (named || layout.ports.is_empty())).then_some(inputs)
                }
                _ => None,
            };
            let mut alias = None;
            let found = self.lookup(comp).and_then(|ix| match &self.graph[ix] {
                Node::Block { comp: block, .. } => {
                    alias = block.alias_of(input).map(str::to_string);
                    Some((ix, block.inputs()))
                }
                Node::Admittance { .. } => adm_inputs(ix).map(|i| (ix, i)),
                _ => None,
            });
            if let Some((ix, inputs)) = found {
                let input = alias.as_deref().unwrap_or(input);
                let i = inputs.iter().position(|x| x.name == input).ok_or_else(|| {
                    let hint = crate::error::suggestion(input, inputs.iter().map(|x| x.name));
                    let names: Vec<&str> = inputs.iter().map(|x| x.name).collect();
                    Error::Network(format!(
                        "signal block '{comp}' has no input '{input}'{hint} (inputs: {})",
                        if names.is_empty() { "none".to_string() } else { names.join(", ") }
                    ))
                })?;
                return Ok(Ends(End::Signal(from), End::BlockIn(ix, i)));
            }
        }
        Ok(Ends(self.resolve_end(from)?, self.resolve_end(to)?))
    }

    /// The signal connection `ends` makes, if it is one: (signal, block, input).
    pub(crate) fn signal_ends<'s>(ends: &Ends<'s>) -> Option<(&'s str, NodeIndex, usize)> {
        match ends {
            Ends(End::Signal(from), End::BlockIn(ix, i)) => Some((from, *ix, *i)),
            _ => None,
        }
    }

    /// Connect two ends resolved by [`resolve_ends`](Self::resolve_ends).
    pub(crate) fn connect_ends(&mut self, from: &str, to: &str, ends: Ends, at: Option<Offset>) -> Result<()> {
        let Ends(a, b) = ends;
        use End::*;
        let (imp, iport, other) = match (a, b) {
            (Signal(_), _) | (_, Signal(_)) | (BlockIn(..), _) | (_, BlockIn(..)) => {
                return Err(Error::Network(format!("'{from}' -> '{to}' is a signal connection")))
            }
            (Imp(i, p), o) => (i, p, o),
            (o, Imp(i, p)) => (i, p, o),
            (Adm(..), Adm(..)) => {
                return Err(Error::Network(format!(
                    "'{from}' and '{to}' are both admittances; connect them through an impedance \
                     (a spring, a joint or a contact)",
                )))
            }
            (Ground(_), Ground(_)) | (Adm(..), Ground(_)) | (Ground(_), Adm(..)) => {
                return Err(Error::Network(format!(
                    "connection '{from}' -> '{to}' has no impedance port on either side"
                )))
            }
        };
        let target = match other {
            Ground(_) => Ground(at.map(|o| o.vector())),
            Adm(id, port, _) => Adm(id, port, at),
            Signal(_) | BlockIn(..) => unreachable!("refused above"),
            Imp(j, _) => {
                return Err(Error::Network(format!(
                    "'{from}' and '{to}' are both impedances ('{}' and '{}'); an impedance connects \
                     only to an admittance or to ground",
                    self.name(imp),
                    self.name(j)
                )))
            }
        };
        self.attach(imp, iport, target)
    }

    fn resolve_end<'s>(&self, s: &'s str) -> Result<End<'s>> {
        if s == "ground" {
            return Ok(End::Ground(None));
        }
        let (comp, port) = match s.split_once('.') {
            Some((c, p)) => (c, Some(p)),
            None => (s, None),
        };
        let ix = self.lookup(comp).ok_or_else(|| {
            let hint = crate::error::suggestion(comp, self.all_names());
            Error::Network(format!("'{s}': there is no component named '{comp}'{hint}"))
        })?;
        let Some(layout) = self.layout(ix) else {
            return Err(Error::Network(format!(
                "'{s}': '{comp}' is a signal block, which has no ports; its outputs are signals, read by \
                 connections to a block's input or by a parameter's {{\"signal\": \"{comp}.OUTPUT\"}}"
            )));
        };
        let port = match port {
            Some(p) => PortSel::Named(p),
            None if layout.ports.len() == 1 => PortSel::Only,
            None => {
                return Err(Error::Network(format!(
                    "'{s}' has several ports ({}); name one as '{comp}.PORT'",
                    port_list(layout)
                )))
            }
        };
        Ok(match &self.graph[ix] {
            Node::Admittance { .. } => End::Adm(ix, port, None),
            Node::Impedance { .. } => End::Imp(ix, port),
            Node::Block { .. } | Node::Ground => End::Ground(None),
        })
    }

    /// Check that every impedance port is connected exactly once.
    pub fn validate(&self) -> Result<()> {
        let open = |&ix: &NodeIndex| {
            let layout = self.layout(ix).expect("impedance");
            let open = layout.ports.iter().enumerate().filter(move |&(p, _)| self.existing_link(ix, p).is_none());
            open.map(move |(_, info)| format!("{}.{}", self.name(ix), info.name))
        };
        // Large networks are checked on the worker threads (in order: the same list).
        let missing: Vec<String> = if self.imp_order.len() >= PARALLEL_VALIDATE && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            self.imp_order.par_iter().flat_map_iter(open).collect()
        } else {
            self.imp_order.iter().flat_map(open).collect()
        };
        if !missing.is_empty() {
            return Err(not_connected(missing));
        }
        Ok(())
    }

    /// Number of admittances and impedances.
    pub fn counts(&self) -> (usize, usize) {
        (self.adm_order.len(), self.imp_order.len())
    }

    /// The graph and its ground node, the network taken apart (for the schedule).
    pub(crate) fn into_graph(self) -> (Graph<Node, Link>, NodeIndex, Names) {
        (self.graph, self.ground, self.node_names)
    }

    /// The network in Graphviz DOT: admittances as ellipses, impedances as boxes, signal
    /// blocks as components, one edge per port connection labelled with the ports and one
    /// dashed edge per signal connection.
    pub fn to_dot(&self, title: &str) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "graph {} {{", dot_quote(title));
        let _ = writeln!(s, "  rankdir=LR;");
        let mut ground_used = false;
        for ix in self.graph.node_indices() {
            match &self.graph[ix] {
                // A Model Exchange signal block (an admittance with signal inputs and no
                // ports) is drawn as a block.
                Node::Admittance { comp, layout } if layout.ports.is_empty() && !comp.inputs().is_empty() => {
                    let _ = writeln!(s, "  {} [shape=component];", dot_quote(self.name(ix)));
                }
                Node::Admittance { .. } => {
                    let _ = writeln!(s, "  {} [shape=ellipse];", dot_quote(self.name(ix)));
                }
                Node::Impedance { .. } => {
                    let _ = writeln!(s, "  {} [shape=box];", dot_quote(self.name(ix)));
                }
                Node::Block { .. } => {
                    let _ = writeln!(s, "  {} [shape=component];", dot_quote(self.name(ix)));
                }
                Node::Ground => {}
            }
        }
        for e in self.graph.edge_references() {
            let (imp, other) = (e.source(), e.target());
            let ilayout = self.layout(imp).expect("impedance");
            let iport = &ilayout.ports[e.weight().imp_port].name;
            let (oname, oport) = match &self.graph[other] {
                Node::Ground => {
                    ground_used = true;
                    ("ground".to_string(), String::new())
                }
                _ => {
                    let l = self.layout(other).expect("admittance");
                    (self.name(other).to_string(), l.ports[e.weight().adm_port].name.to_string())
                }
            };
            let label = format!("{iport} / {oport}");
            let _ =
                writeln!(s, "  {} -- {} [label={}];", dot_quote(self.name(imp)), dot_quote(&oname), dot_quote(&label));
        }
        if ground_used {
            let _ = writeln!(s, "  \"ground\" [shape=plaintext];");
        }
        // Signal connections, dashed, from the component whose signal is read (or the
        // system input, a plain-text node) to the block.
        for l in &self.signal_links {
            let src = l.from.split(['.', '[']).next().unwrap_or(&l.from);
            if self.lookup(src).is_none() {
                let _ = writeln!(s, "  {} [shape=plaintext];", dot_quote(src));
            }
            let label = format!("{} -> {}", l.from, self.block_input_name(l.block, l.input));
            let _ = writeln!(
                s,
                "  {} -- {} [style=dashed, label={}];",
                dot_quote(src),
                dot_quote(self.name(l.block)),
                dot_quote(&label)
            );
        }
        s.push_str("}\n");
        s
    }
}

/// Impedances from which [`Network::validate`] runs on the worker threads.
const PARALLEL_VALIDATE: usize = 4096;

/// The error of the impedance ports `missing` ("component.port") left unconnected.
pub(crate) fn not_connected(missing: Vec<String>) -> Error {
    Error::Network(format!(
        "impedance port(s) not connected: {} (connect each to an admittance port or to 'ground')",
        missing.join(", ")
    ))
}

/// A named component of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Admittance(AdmittanceId),
    Impedance(ImpedanceId),
    /// A signal block.
    Block,
}

/// Both ends of a connection, resolved.
pub(crate) struct Ends<'s>(End<'s>, End<'s>);

/// One end of a connection: a port of an admittance (with the offset of the link), a
/// port of an impedance, or ground (with its anchor).
enum End<'s> {
    Adm(NodeIndex, PortSel<'s>, Option<Offset>),
    Imp(NodeIndex, PortSel<'s>),
    Ground(Option<Vector3<f64>>),
    /// Any signal of the system, the source of a signal connection.
    Signal(&'s str),
    /// Input i of a signal block.
    BlockIn(NodeIndex, usize),
}

/// A port as a connection names it: by name, or the component's only port.
#[derive(Clone, Copy)]
enum PortSel<'s> {
    Named(&'s str),
    Only,
}

fn port_list(l: &Layout) -> String {
    l.ports.iter().map(|p| format!("{} ({})", p.name, p.domain)).collect::<Vec<_>>().join(", ")
}

/// `text` as a DOT double-quoted string: backslashes and quotes escaped (so no name can end
/// the string or start an escape such as `\n`), control characters as spaces.
pub fn dot_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::NodeName;

    #[test]
    fn node_names_read_back_inline_and_on_the_heap() {
        for s in ["", "m0", "é".repeat(11).as_str(), "x".repeat(22).as_str(), "y".repeat(23).as_str(), "ü".repeat(40).as_str()] {
            let n = NodeName::new(s);
            assert_eq!(n.as_str(), s);
            assert_eq!(matches!(n, NodeName::Inline(..)), s.len() <= 22, "{s}");
        }
    }
}
