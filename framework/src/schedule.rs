//! The network compiled to flat arrays for the hot loop: one contiguous state vector
//! (admittance states first, then impedance states), one force slot per impedance
//! port, and for each admittance port the list of slots that push on it (Φ), in a fixed
//! order so sums are bit-identical for any thread count.

use crate::component::{Admittance, Impedance};
use crate::error::{Error, Result};
use crate::network::{ground_motion, Network, Node};
use crate::port::{Domain, Force, Layout, Motion, Offset};
use nalgebra::Vector3;
use petgraph::graph::NodeIndex;
use std::collections::HashMap;

/// Where an impedance port takes its motion from (Ψ, (13d)).
#[derive(Clone, Debug)]
pub enum Attach {
    /// Fixed to the world.
    Ground(Motion),
    /// Port `port` of admittance `adm`, optionally at a body-frame offset.
    Port { adm: usize, port: usize, offset: Option<Offset> },
}

/// Output of one impedance port: its force and the world-frame lever arm from the
/// admittance port's reference point to where the force acts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot {
    pub force: Force,
    pub lever: Vector3<f64>,
}

/// The compiled network.
pub struct Schedule {
    pub(crate) adm: Vec<Box<dyn Admittance>>,
    pub(crate) adm_names: Vec<String>,
    /// State offsets of admittance i: `adm_x[i]..adm_x[i+1]` (into the global vector).
    pub(crate) adm_x: Vec<usize>,
    /// Port offsets of admittance i into the admittance-port force buffer.
    pub(crate) adm_ports: Vec<usize>,
    /// For each admittance port (global index): `incoming[in_off[p]..in_off[p+1]]` slots.
    pub(crate) in_off: Vec<usize>,
    pub(crate) incoming: Vec<u32>,

    pub(crate) imp: Vec<Box<dyn Impedance>>,
    pub(crate) imp_names: Vec<String>,
    pub(crate) imp_layouts: Vec<Layout>,
    /// State offsets of impedance i into the global vector (all ≥ `nx`).
    pub(crate) imp_y: Vec<usize>,
    /// Slot offsets of impedance i (one slot per port).
    pub(crate) imp_slots: Vec<usize>,
    /// Attachment of every slot.
    pub(crate) attach: Vec<Attach>,

    /// Number of admittance states; total number of states.
    pub(crate) nx: usize,
    pub(crate) n: usize,
    /// Zero offsets for unused split buffers.
    pub(crate) zeros_adm: Vec<usize>,
}

impl Schedule {
    pub(crate) fn build(mut net: Network) -> Result<Schedule> {
        // Take components out of the graph in insertion order.
        let mut adm_index: HashMap<NodeIndex, usize> = HashMap::new();
        let mut attachments = Vec::new();
        for &ix in &net.imp_order {
            attachments.push(net.attachments(ix));
        }
        let (adm_order, imp_order) = (net.adm_order.clone(), net.imp_order.clone());
        let mut adm = Vec::new();
        let mut adm_names = Vec::new();
        let mut adm_layouts = Vec::new();
        for (i, ix) in adm_order.iter().enumerate() {
            adm_index.insert(*ix, i);
            match std::mem::replace(&mut net.graph[*ix], Node::Ground) {
                Node::Admittance { name, layout, comp } => {
                    adm.push(comp);
                    adm_names.push(name);
                    adm_layouts.push(layout);
                }
                _ => unreachable!("admittance order holds admittances"),
            }
        }
        let mut imp = Vec::new();
        let mut imp_names = Vec::new();
        let mut imp_layouts = Vec::new();
        for ix in &imp_order {
            match std::mem::replace(&mut net.graph[*ix], Node::Ground) {
                Node::Impedance { name, layout, comp } => {
                    imp.push(comp);
                    imp_names.push(name);
                    imp_layouts.push(layout);
                }
                _ => unreachable!("impedance order holds impedances"),
            }
        }

        let mut adm_x = vec![0];
        let mut adm_ports = vec![0];
        for l in &adm_layouts {
            adm_x.push(adm_x.last().unwrap() + l.states);
            adm_ports.push(adm_ports.last().unwrap() + l.ports.len());
        }
        let nx = *adm_x.last().unwrap();
        let mut imp_y = vec![nx];
        let mut imp_slots = vec![0];
        let mut attach = Vec::new();
        for (i, l) in imp_layouts.iter().enumerate() {
            imp_y.push(imp_y.last().unwrap() + l.states);
            imp_slots.push(imp_slots.last().unwrap() + l.ports.len());
            for (target, link) in &attachments[i] {
                match adm_index.get(target) {
                    Some(&a) => attach.push(Attach::Port { adm: a, port: link.adm_port, offset: link.offset }),
                    None => attach.push(Attach::Ground(ground_motion(link.offset))),
                }
            }
        }
        let n = *imp_y.last().unwrap();

        // Φ: incoming slots per admittance port, in slot order (fixed).
        let n_adm_ports = *adm_ports.last().unwrap();
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n_adm_ports];
        for (s, a) in attach.iter().enumerate() {
            if let Attach::Port { adm, port, .. } = a {
                let slot = u32::try_from(s).map_err(|_| Error::Network("too many impedance ports".into()))?;
                lists[adm_ports[*adm] + port].push(slot);
            }
        }
        let mut in_off = vec![0];
        let mut incoming = Vec::new();
        for l in lists {
            incoming.extend_from_slice(&l);
            in_off.push(incoming.len());
        }
        let zeros_adm = vec![0; adm.len() + 1];
        Ok(Schedule {
            adm,
            adm_names,

            adm_x,
            adm_ports,
            in_off,
            incoming,
            imp,
            imp_names,
            imp_layouts,
            imp_y,
            imp_slots,
            attach,
            nx,
            n,
            zeros_adm,
        })
    }

    /// Total number of states.
    pub fn state_len(&self) -> usize {
        self.n
    }

    /// Number of admittances and impedances.
    pub fn counts(&self) -> (usize, usize) {
        (self.adm.len(), self.imp.len())
    }

    /// Motion of one impedance port for the admittance states `xa` (Ψ for one slot).
    #[inline]
    pub(crate) fn gather(&self, xa: &[f64], slot: usize) -> (Motion, Vector3<f64>) {
        match &self.attach[slot] {
            Attach::Ground(m) => (*m, Vector3::zeros()),
            Attach::Port { adm, port, offset } => {
                let (a, b) = (self.adm_x[*adm], self.adm_x[*adm + 1]);
                let m = self.adm[*adm].port_motion(&xa[a..b], *port);
                match offset {
                    Some(o) => o.apply(&m),
                    None => (m, Vector3::zeros()),
                }
            }
        }
    }

    /// Initial state vector: admittances first, then impedances initialised at the
    /// initial port motions.
    pub fn initial_state(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.n];
        for (i, a) in self.adm.iter().enumerate() {
            a.init(&mut x[self.adm_x[i]..self.adm_x[i + 1]]);
        }
        let mut motions = Vec::new();
        for (i, imp) in self.imp.iter().enumerate() {
            motions.clear();
            for s in self.imp_slots[i]..self.imp_slots[i + 1] {
                motions.push(self.gather(&x[..self.nx], s).0);
            }
            let (a, b) = (self.imp_y[i], self.imp_y[i + 1]);
            let y = &mut x[self.nx..];
            imp.init(&mut y[a - self.nx..b - self.nx], &motions);
        }
        x
    }

    /// Effective inertia at every port of impedance `i` (None for ground / unknown).
    pub fn port_inertias(&self, i: usize, x: &[f64]) -> Vec<Option<f64>> {
        (self.imp_slots[i]..self.imp_slots[i + 1])
            .map(|s| match &self.attach[s] {
                Attach::Ground(_) => None,
                Attach::Port { adm, port, .. } => {
                    self.adm[*adm].port_inertia(&x[self.adm_x[*adm]..self.adm_x[*adm + 1]], *port)
                }
            })
            .collect()
    }

    /// The state slice of admittance j within the full state vector `x`.
    pub fn admittance_state<'a>(&self, j: usize, x: &'a [f64]) -> &'a [f64] {
        &x[self.adm_x[j]..self.adm_x[j + 1]]
    }

    /// Names of the admittances, in schedule order.
    pub fn admittance_names(&self) -> &[String] {
        &self.adm_names
    }

    /// Names of the impedances, in schedule order.
    pub fn impedance_names(&self) -> &[String] {
        &self.imp_names
    }

    /// Impedance component i.
    pub fn impedance(&self, i: usize) -> &dyn Impedance {
        self.imp[i].as_ref()
    }

    /// Admittance component i.
    pub fn admittance(&self, i: usize) -> &dyn Admittance {
        self.adm[i].as_ref()
    }

    /// Domains of the ports of impedance i.
    pub fn impedance_domains(&self, i: usize) -> Vec<Domain> {
        self.imp_layouts[i].ports.iter().map(|p| p.domain).collect()
    }
}
