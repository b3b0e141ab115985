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

use crate::component::{Admittance, Impedance, MAX_IMPEDANCE_PORTS};
use crate::error::{Error, Result};
use crate::port::{Domain, Layout, Offset};
use nalgebra::Vector3;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Graph;
use std::collections::HashMap;

/// Handle of an admittance in a [`Network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AdmittanceId(pub(crate) NodeIndex);

/// Handle of an impedance in a [`Network`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ImpedanceId(pub(crate) NodeIndex);

/// A node of the network.
pub enum Node {
    Admittance { name: String, layout: Layout, comp: Box<dyn Admittance> },
    Impedance { name: String, layout: Layout, comp: Box<dyn Impedance> },
    Ground,
}

impl Node {
    fn name(&self) -> &str {
        match self {
            Node::Admittance { name, .. } | Node::Impedance { name, .. } => name,
            Node::Ground => "ground",
        }
    }
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

/// A network of components under construction.
pub struct Network {
    pub(crate) graph: Graph<Node, Link>,
    pub(crate) ground: NodeIndex,
    names: HashMap<String, NodeIndex>,
    /// Admittances and impedances in insertion order (the schedule keeps this order).
    pub(crate) adm_order: Vec<NodeIndex>,
    pub(crate) imp_order: Vec<NodeIndex>,
}

impl Default for Network {
    fn default() -> Self {
        Self::new()
    }
}

impl Network {
    /// An empty network (with its ground node).
    pub fn new() -> Self {
        let mut graph = Graph::new();
        let ground = graph.add_node(Node::Ground);
        Network { graph, ground, names: HashMap::new(), adm_order: Vec::new(), imp_order: Vec::new() }
    }

    fn check_name(&self, name: &str) -> Result<()> {
        if name.is_empty() || name.contains('.') || name == "ground" {
            return Err(Error::Network(format!(
                "component name '{name}' is not allowed (empty, contains '.', or is 'ground')"
            )));
        }
        if self.names.contains_key(name) {
            return Err(Error::Network(format!("two components are named '{name}'")));
        }
        Ok(())
    }

    /// Add an admittance. Fails if the name is taken.
    pub fn add_admittance(&mut self, name: &str, comp: Box<dyn Admittance>) -> Result<AdmittanceId> {
        self.check_name(name)?;
        let layout = comp.layout();
        let ix = self.graph.add_node(Node::Admittance { name: name.to_string(), layout, comp });
        self.names.insert(name.to_string(), ix);
        self.adm_order.push(ix);
        Ok(AdmittanceId(ix))
    }

    /// Add an impedance. Fails if the name is taken.
    pub fn add_impedance(&mut self, name: &str, comp: Box<dyn Impedance>) -> Result<ImpedanceId> {
        self.check_name(name)?;
        let layout = comp.layout();
        if layout.ports.is_empty() || layout.ports.len() > MAX_IMPEDANCE_PORTS {
            return Err(Error::Network(format!(
                "impedance '{name}' has {} ports; an impedance has 1 to {MAX_IMPEDANCE_PORTS}",
                layout.ports.len()
            )));
        }
        let ix = self.graph.add_node(Node::Impedance { name: name.to_string(), layout, comp });
        self.names.insert(name.to_string(), ix);
        self.imp_order.push(ix);
        Ok(ImpedanceId(ix))
    }

    /// Look up a component by name.
    pub fn find(&self, name: &str) -> Option<Component> {
        let ix = *self.names.get(name)?;
        match &self.graph[ix] {
            Node::Admittance { .. } => Some(Component::Admittance(AdmittanceId(ix))),
            Node::Impedance { .. } => Some(Component::Impedance(ImpedanceId(ix))),
            Node::Ground => None,
        }
    }

    fn layout(&self, ix: NodeIndex) -> Option<&Layout> {
        match &self.graph[ix] {
            Node::Admittance { layout, .. } | Node::Impedance { layout, .. } => Some(layout),
            Node::Ground => None,
        }
    }

    fn name(&self, ix: NodeIndex) -> &str {
        self.graph[ix].name()
    }

    fn existing_link(&self, imp: NodeIndex, port: usize) -> Option<EdgeIndex> {
        self.graph.edges(imp).find(|e| e.weight().imp_port == port).map(|e| e.id())
    }

    /// Attach port `imp_port` of impedance `imp` to `target`. Checks domains and that
    /// the port is not connected yet; the error names both ends.
    pub fn try_connect(&mut self, imp: ImpedanceId, imp_port: &str, target: Target<'_>) -> Result<()> {
        let imp_name = self.name(imp.0).to_string();
        let layout = self.layout(imp.0).ok_or_else(|| Error::Network("not an impedance".into()))?;
        let ip = layout.port_index(imp_port).ok_or_else(|| {
            Error::Network(format!("impedance '{imp_name}' has no port '{imp_port}' (ports: {})", port_list(layout)))
        })?;
        let idomain = layout.ports[ip].domain;
        if let Some(e) = self.existing_link(imp.0, ip) {
            let (_, other) = self.graph.edge_endpoints(e).expect("edge exists");
            return Err(Error::Network(format!(
                "port '{imp_name}.{imp_port}' is connected twice (already to '{}')",
                self.name(other)
            )));
        }
        match target {
            Target::Ground { at } => {
                let g = self.ground;
                self.graph.add_edge(imp.0, g, Link { imp_port: ip, adm_port: 0, offset: at.map(Offset::World) });
            }
            Target::Port { adm, port, offset } => {
                let adm_name = self.name(adm.0).to_string();
                let alayout = match &self.graph[adm.0] {
                    Node::Admittance { layout, .. } => layout,
                    _ => {
                        return Err(Error::Network(format!(
                            "'{imp_name}.{imp_port}' can only connect to an admittance or to ground, \
                             and '{adm_name}' is an impedance (impedances never connect to impedances)"
                        )))
                    }
                };
                let ap = alayout.port_index(port).ok_or_else(|| {
                    Error::Network(format!(
                        "admittance '{adm_name}' has no port '{port}' (ports: {})",
                        port_list(alayout)
                    ))
                })?;
                let adomain = alayout.ports[ap].domain;
                if !idomain.attaches_to(adomain) {
                    return Err(Error::Network(format!(
                        "'{imp_name}.{imp_port}' is a {idomain} port and cannot attach to the {adomain} port '{adm_name}.{port}'"
                    )));
                }
                if offset.is_some() && adomain != Domain::Frame {
                    return Err(Error::Network(format!(
                        "'{imp_name}.{imp_port}' -> '{adm_name}.{port}': an offset ('at') needs a frame port, \
                         and '{adm_name}.{port}' is a {adomain} port"
                    )));
                }
                self.graph.add_edge(imp.0, adm.0, Link { imp_port: ip, adm_port: ap, offset });
            }
        }
        Ok(())
    }

    /// Connect by names as written in JSON: `from` and `to` are `component.port`,
    /// `component` (when it has exactly one port) or `ground`; one side must be an
    /// impedance port, the other an admittance port or ground.
    pub fn connect_names(&mut self, from: &str, to: &str, at: Option<Offset>) -> Result<()> {
        let a = self.resolve_end(from)?;
        let b = self.resolve_end(to)?;
        use End::*;
        let (imp, iport, other) = match (a, b) {
            (Imp(i, p), o) => (i, p, o),
            (o, Imp(i, p)) => (i, p, o),
            (Adm(..), Adm(..)) => {
                return Err(Error::Network(format!(
                    "'{from}' and '{to}' are both admittances; connect them through an impedance \
                     (a spring, a joint or a contact)",
                )))
            }
            (Ground, Ground) | (Adm(..), Ground) | (Ground, Adm(..)) => {
                return Err(Error::Network(format!(
                    "connection '{from}' -> '{to}' has no impedance port on either side"
                )))
            }
        };
        let target = match &other {
            Ground => Target::Ground { at: at.map(|o| o.vector()) },
            Adm(id, port) => Target::Port { adm: *id, port: port.as_str(), offset: at },
            Imp(j, _) => {
                return Err(Error::Network(format!(
                    "'{from}' and '{to}' are both impedances ('{}' and '{}'); an impedance connects \
                     only to an admittance or to ground",
                    self.name(imp.0),
                    self.name(j.0)
                )))
            }
        };
        self.try_connect(imp, &iport, target)
    }

    fn resolve_end(&self, s: &str) -> Result<End> {
        if s == "ground" {
            return Ok(End::Ground);
        }
        let (comp, port) = match s.split_once('.') {
            Some((c, p)) => (c, Some(p)),
            None => (s, None),
        };
        let ix = *self
            .names
            .get(comp)
            .ok_or_else(|| Error::Network(format!("'{s}': there is no component named '{comp}'")))?;
        let layout = self.layout(ix).expect("named nodes are components");
        let port = match port {
            Some(p) => p.to_string(),
            None if layout.ports.len() == 1 => layout.ports[0].name.clone(),
            None => {
                return Err(Error::Network(format!(
                    "'{s}' has several ports ({}); name one as '{comp}.PORT'",
                    port_list(layout)
                )))
            }
        };
        Ok(match &self.graph[ix] {
            Node::Admittance { .. } => End::Adm(AdmittanceId(ix), port),
            Node::Impedance { .. } => End::Imp(ImpedanceId(ix), port),
            Node::Ground => End::Ground,
        })
    }

    /// Check that every impedance port is connected exactly once.
    pub fn validate(&self) -> Result<()> {
        let mut missing = Vec::new();
        for &ix in &self.imp_order {
            let layout = self.layout(ix).expect("impedance");
            for (p, info) in layout.ports.iter().enumerate() {
                if self.existing_link(ix, p).is_none() {
                    missing.push(format!("{}.{}", self.name(ix), info.name));
                }
            }
        }
        if !missing.is_empty() {
            return Err(Error::Network(format!(
                "impedance port(s) not connected: {} (connect each to an admittance port or to 'ground')",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// Number of admittances and impedances.
    pub fn counts(&self) -> (usize, usize) {
        (self.adm_order.len(), self.imp_order.len())
    }

    /// The attachment of every impedance port, in port order (after [`validate`](Self::validate)).
    pub(crate) fn attachments(&self, imp: NodeIndex) -> Vec<(NodeIndex, Link)> {
        let n = self.layout(imp).map(|l| l.ports.len()).unwrap_or(0);
        let mut out: Vec<Option<(NodeIndex, Link)>> = vec![None; n];
        for e in self.graph.edges(imp) {
            out[e.weight().imp_port] = Some((e.target(), e.weight().clone()));
        }
        out.into_iter().map(|o| o.expect("validated")).collect()
    }

    /// The network in Graphviz DOT: admittances as ellipses, impedances as boxes,
    /// one edge per port connection labelled with the ports.
    pub fn to_dot(&self, title: &str) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "graph {} {{", dot_quote(title));
        let _ = writeln!(s, "  rankdir=LR;");
        let mut ground_used = false;
        for ix in self.graph.node_indices() {
            match &self.graph[ix] {
                Node::Admittance { name, .. } => {
                    let _ = writeln!(s, "  {} [shape=ellipse];", dot_quote(name));
                }
                Node::Impedance { name, .. } => {
                    let _ = writeln!(s, "  {} [shape=box];", dot_quote(name));
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
                n => {
                    let l = self.layout(other).expect("admittance");
                    (n.name().to_string(), l.ports[e.weight().adm_port].name.clone())
                }
            };
            let label = format!("{iport} / {oport}");
            let _ =
                writeln!(s, "  {} -- {} [label={}];", dot_quote(self.name(imp)), dot_quote(&oname), dot_quote(&label));
        }
        if ground_used {
            let _ = writeln!(s, "  \"ground\" [shape=plaintext];");
        }
        s.push_str("}\n");
        s
    }
}

/// A named component of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Admittance(AdmittanceId),
    Impedance(ImpedanceId),
}

enum End {
    Adm(AdmittanceId, String),
    Imp(ImpedanceId, String),
    Ground,
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
