//! The network compiled to flat arrays for the hot loop: one contiguous state vector
//! (admittance states first, then impedance states), one force slot per impedance port,
//! and for each admittance port the list of slots that push on it (Φ), in a fixed order so
//! sums are bit-identical for any thread count.
//!
//! **Schedule order and batches.** Every group of the schedule is a batch
//! ([`crate::batch`]). Admittances keep the order of the network (file order; the state
//! vector starts with their states, which callers index), and runs of consecutive
//! admittances of one kind form a batch (a typed batch, or the per-component kind
//! [`EachAdmittance`] for the types without one). Impedances are grouped: every impedance
//! whose type offers a batch ([`Impedance::batch`]) joins the open batch of its kind
//! (concrete type and layout), in network order; the impedances without one join the open
//! per-component batch ([`EachImpedance`]). A group is closed, and takes its place in
//! the schedule, when it holds `IMPEDANCE_BLOCK` (1024) members; the groups still open at
//! the end follow in order of their first member. So a network of one kind per component
//! role becomes blocks that alternate by kind and keep the locality of the network order.
//! The impedance states and slots follow this schedule order
//! ([`Schedule::impedance_names`]). Φ sums the slots of an admittance port in network order
//! regardless, so grouping does not change any sum.
//!
//! **Ψ without dynamic calls.** A slot attached without offset to a scalar or point port
//! whose admittance declares [`Admittance::port_states`] has a tap: its motion is read
//! from two fixed places of the state vector. Other slots call
//! [`Admittance::port_motion`] (frames, offsets) or use their ground position.

use crate::batch::{EachAdmittance, EachImpedance};
use crate::component::{Admittance, Block, Impedance};
use crate::error::{Error, Result};
use crate::names::Names;
use crate::network::{Network, Node};
use crate::parallel::{join, split_run, Cut, Splits};
use crate::port::{Domain, Force, Layout, Motion, Offset};
use crate::views::{AdmittanceBatch, ImpedanceBatch, PortForces, PortMotions, SlotMotion, Tap};
use nalgebra::Vector3;
use std::ops::Range;
use std::sync::Arc;

/// Where an impedance port takes its motion from (Ψ, (13d)), as [`Schedule::attachment`]
/// reads it from the schedule's 12-byte slot record.
#[derive(Clone, Debug)]
pub enum Attach {
    /// Fixed to the world at this position.
    Ground(Vector3<f64>),
    /// Port `port` of admittance `adm`, optionally at an offset (frame ports only).
    Port { adm: usize, port: usize, offset: Option<Offset> },
}

/// [`Slot::adm`] of a slot fixed to the world.
const GROUND: u32 = u32::MAX;
/// [`Slot::at`] of a slot without an offset (a port's) or position (ground's).
const NO_OFFSET: u32 = u32::MAX;

/// Where a slot is attached, in 12 bytes (a network of 10⁵ components has 10⁵ of them; the
/// offsets are rare): port `port` of admittance `adm`, or the world where `adm` is
/// [`GROUND`]; `at` indexes [`Schedule::offsets`] (a port's offset) or
/// [`Schedule::ground_points`] (a grounded port's position), or is [`NO_OFFSET`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    adm: u32,
    port: u32,
    at: u32,
}

impl Slot {
    /// The admittance port, (admittance, port); `None` for ground.
    #[inline]
    pub(crate) fn port(self) -> Option<(usize, usize)> {
        (self.adm != GROUND).then_some((self.adm as usize, self.port as usize))
    }
}

/// Most impedances in one group. Groups of different kinds alternate block by block in the
/// order in which they fill up, so the schedule keeps the locality of the network order: an
/// impedance stays near the others that act on the same admittances, and a thread's share of
/// the impedance phase mostly meets its share of the admittance phase (chain-10k on 2
/// threads: 498 instead of 543 µs/step with one group per kind; on 1 thread: no change).
pub(crate) const IMPEDANCE_BLOCK: usize = 1024;

/// Admittances per block of a stage run block by block ([`Schedule::stage_blocks`]).
const STAGE_BLOCK: usize = 256;

/// Most impedances in one block of a plan ([`Schedule::stage_blocks`]): a network whose
/// order needs more for some block (its admittances' slots written by impedances far
/// apart in the schedule) runs its stages phase by phase.
const STAGE_BLOCK_IMPEDANCES: usize = 4 * IMPEDANCE_BLOCK;

/// Most blocks × impedance groups a plan is worked out over ([`Schedule::stage_blocks`]).
const STAGE_PLAN_ENTRIES: usize = 1 << 22;

/// A block of a stage run on one thread: impedances in `imp`'s chunks, then admittances in
/// `adm`'s; every slot the admittances sum is written by the impedances of this block or of
/// an earlier one ([`Schedule::stage_blocks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StageBlock {
    pub imp: Vec<ImpChunk>,
    pub adm: Vec<AdmChunk>,
}

/// A block of [`stage_blocks`]'s plan before it is cut into chunks: ranges of impedances
/// (each within one group, in schedule order), then a range of admittances.
#[derive(Clone, Debug, PartialEq, Eq)]
struct BlockPlan {
    imp: Vec<Range<usize>>,
    adm: Range<usize>,
}

/// Components a phase evaluates at a time: their batch is called and their rates combined
/// while the rates are in the L1 cache.
pub(crate) const CHUNK: usize = 256;

/// A chunk of impedances of one group and where their data lie: members `members`
/// (schedule indices) of group `group`, their slots, their states, and the range of
/// [`Schedule::pv`] of their slots when all of them have a [`Tap::PointPv`]. Read once per
/// chunk from one place: a stage run block by block jumps between groups, and reading each
/// chunk's offsets from the schedule's arrays missed the cache several times a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImpChunk {
    pub group: usize,
    pub members: Range<usize>,
    pub slots: Range<usize>,
    pub y: Range<usize>,
    pub pv: Option<Range<usize>>,
    /// Where the members' ports lie in rows of point masses' states: member k's port i at
    /// `first + 6k + step·i` ([`PortMotions::rows`]), as (first, step).
    pub rows: Option<(usize, usize)>,
}

/// A chunk of admittances of one group (as [`ImpChunk`]): their ports and states, and
/// how many slots every port receives when that is the same number (0 otherwise,
/// [`PortForces::uniform`]) and where the slot list of their first port starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AdmChunk {
    pub group: usize,
    pub members: Range<usize>,
    pub ports: Range<usize>,
    pub x: Range<usize>,
    pub uniform: usize,
    pub first: usize,
}

/// Fewest components whose initial states one thread computes ([`Schedule::initial_state`]).
const INIT_GRAIN: usize = 1024;

/// A contiguous range of components in schedule order, evaluated by one batch.
pub(crate) struct Group<B: ?Sized> {
    pub start: usize,
    pub end: usize,
    pub batch: Box<B>,
}

/// The chunks of `range` (at most [`CHUNK`] members, each within one group of `groups`):
/// (index of the group, the chunk's members).
pub(crate) fn chunks_in<B: ?Sized>(
    groups: &[Group<B>],
    range: std::ops::Range<usize>,
) -> impl Iterator<Item = (usize, std::ops::Range<usize>)> + '_ {
    let first = groups.partition_point(|g| g.end <= range.start);
    groups[first..].iter().enumerate().take_while(move |(_, g)| g.start < range.end).flat_map(move |(i, g)| {
        let part = g.start.max(range.start)..g.end.min(range.end);
        part.clone().step_by(CHUNK).map(move |a| (first + i, a..(a + CHUNK).min(part.end)))
    })
}

/// The compiled network.
pub struct Schedule {
    /// The signal blocks in file order, their names, and the signal connections (the
    /// signal read, block, input, index of the connection in the file, gain) in file order.
    pub(crate) blocks: Vec<Arc<dyn Block>>,
    pub(crate) block_names: Names,
    pub(crate) signal_links: Vec<(String, usize, usize, usize, f64)>,
    /// The signal connections to admittances' inputs (Model Exchange signal blocks), in the
    /// same form (the signal read, admittance, input, connection, gain), in file order.
    pub(crate) adm_inputs: Vec<(String, usize, usize, usize, f64)>,
    pub(crate) adm: Vec<Arc<dyn Admittance>>,
    pub(crate) adm_names: Names,
    /// State offsets of admittance i: `adm_x[i]..adm_x[i+1]` (into the global vector).
    pub(crate) adm_x: Vec<usize>,
    /// Port offsets of admittance i into the admittance-port force buffer.
    pub(crate) adm_ports: Vec<usize>,
    /// Domain of every admittance port (global index).
    pub(crate) adm_port_domain: Vec<Domain>,
    /// For each admittance port (global index): `incoming[in_off[p]..in_off[p+1]]` slots,
    /// in network order.
    pub(crate) in_off: Vec<usize>,
    pub(crate) incoming: Vec<u32>,
    /// The batches of admittances.
    pub(crate) adm_groups: Vec<Group<dyn AdmittanceBatch>>,

    pub(crate) imp: Vec<Arc<dyn Impedance>>,
    pub(crate) imp_names: Names,
    pub(crate) imp_layouts: Vec<Layout>,
    /// Schedule index of the impedance at each network (file) position.
    pub(crate) imp_network_order: Vec<usize>,
    /// State offsets of impedance i into the global vector (all ≥ `nx`).
    pub(crate) imp_y: Vec<usize>,
    /// Slot offsets of impedance i (one slot per port).
    pub(crate) imp_slots: Vec<usize>,
    /// The batches of impedances.
    pub(crate) imp_groups: Vec<Group<dyn ImpedanceBatch>>,
    /// Attachment of every slot ([`Schedule::attach`] reads one whole).
    pub(crate) attach: Vec<Slot>,
    /// The offsets of the slots attached at one, and the positions of the grounded slots
    /// placed away from the origin ([`Slot::at`]).
    pub(crate) offsets: Vec<Offset>,
    pub(crate) ground_points: Vec<Vector3<f64>>,
    /// Fast motion read of every slot.
    pub(crate) taps: Vec<Tap>,
    /// The position offsets of the slots whose tap is [`Tap::PointPv`], in slot order, and
    /// for every slot s the number of them before s (`pv_before[s]`): a range of slots is
    /// all `PointPv` when the count grows by its length ([`Schedule::imp_chunk`]).
    pub(crate) pv: Vec<u32>,
    pub(crate) pv_before: Vec<u32>,
    /// Per impedance, the first member of the run of its group it ends whose ports lie in
    /// rows of point masses' states (`u32::MAX`: not so; [`ImpChunk::rows`], `row_starts`).
    pub(crate) row_start: Vec<u32>,
    /// For every admittance port p: how many ports q in 1..=p receive a different number
    /// of slots than port q − 1; ports a..b all receive the same number when
    /// `count_changes[b − 1] == count_changes[a]` ([`Schedule::adm_chunk`]).
    pub(crate) count_changes: Vec<u32>,
    /// Whether any impedance port is a frame port (then slots carry moments too).
    pub(crate) has_moments: bool,

    /// Number of admittance states; total number of states.
    pub(crate) nx: usize,
    pub(crate) n: usize,
    /// Zero offsets for an unused split buffer.
    pub(crate) zeros_imp: Vec<usize>,
    /// The (admittance, port) of every port whose motion comes from `port_motion` (a rigid
    /// body's frame), each once, and per slot its index there (`u32::MAX` for the others;
    /// both empty when there are none): a stage gathers each frame once for all the slots
    /// attached to it ([`Gathered`]).
    pub(crate) frames: Vec<(u32, u32)>,
    pub(crate) frame_of: Vec<u32>,
    /// The plan of a stage run block by block on one thread (stepper/phases.rs): the
    /// admittances in order, [`STAGE_BLOCK`] at a time, each block after the impedances
    /// (in schedule order) that write its slots; empty where that is no plan (one block, or
    /// a block of more than [`STAGE_BLOCK_IMPEDANCES`] impedances).
    pub(crate) stage_blocks: Vec<StageBlock>,
    /// The same from the last block of admittances to the first, each after the
    /// impedances (in schedule order from the last) that write its slots: a stage runs
    /// the other way from the one before (stepper/phases.rs), starting on the states that
    /// one left in the cache.
    pub(crate) stage_blocks_back: Vec<StageBlock>,
    /// Which admittances and impedances act on rotations ([`Schedule::rotational`]), found
    /// when first asked (result units, an FMU's model description), not at load.
    rotational: std::sync::OnceLock<(Vec<bool>, Vec<bool>)>,
}

impl Schedule {
    /// Validate `net` ([`Network::validate`], checked while building) and compile it into
    /// the flat arrays of the stepper.
    pub fn compile(net: Network) -> Result<Schedule> {
        Self::build(net)
    }

    fn build(net: Network) -> Result<Schedule> {
        let (na, ni) = net.counts();
        let links = net.signal_links.clone();
        let (graph, ground, node_names) = net.into_graph();
        // The graph taken apart: its nodes in insertion order (so admittances and
        // impedances each in network order) and its edges, each from an impedance port.
        let (mut nodes, edges) = graph.into_nodes_edges();
        // The rank of every node among the admittances or among the impedances, and the
        // nodes of each kind in network order, to be taken out by the two groupings.
        let mut rank = vec![0; nodes.len()];
        let mut is_adm = vec![false; nodes.len()];
        let mut adm_nodes = Vec::with_capacity(na);
        let mut imp_nodes = Vec::with_capacity(ni);
        let (mut blocks, mut block_names) = (Vec::new(), Names::default());
        // The admittances' names in network order; the impedances' node indices in network
        // order (their names are taken in schedule order below).
        let mut adm_names = Names::with_capacity(na, 0);
        let mut imp_ix = Vec::with_capacity(ni);
        for (ix, node) in nodes.iter_mut().enumerate() {
            match node.weight {
                Node::Admittance { .. } => {
                    rank[ix] = adm_nodes.len();
                    is_adm[ix] = true;
                    adm_nodes.push(&mut node.weight);
                    adm_names.push(&node_names[ix]);
                }
                Node::Impedance { .. } => {
                    rank[ix] = imp_nodes.len();
                    imp_nodes.push(&mut node.weight);
                    imp_ix.push(ix);
                }
                Node::Block { .. } => {
                    rank[ix] = blocks.len();
                    if let Node::Block { comp } = std::mem::replace(&mut node.weight, Node::Ground) {
                        blocks.push(comp);
                        block_names.push(&node_names[ix]);
                    }
                }
                Node::Ground => {}
            }
        }
        // Signal connections to a block's input, and to a Model Exchange signal block's
        // (an admittance's) input.
        let (mut signal_links, mut adm_inputs) = (Vec::new(), Vec::new());
        for l in links {
            let to_adm = is_adm[l.block.index()];
            let link = (l.from, rank[l.block.index()], l.input, l.connection, l.gain);
            if to_adm {
                adm_inputs.push(link);
            } else {
                signal_links.push(link);
            }
        }
        // The impedances and the admittances are grouped independently (on two threads
        // when there are).
        let (imps, adms) = join(|| group_impedances(imp_nodes), || group_admittances(adm_nodes, &adm_names));
        let ImpGroups { imp, imp_layouts, imp_groups, schedule_index } = imps;
        let mut imp_names = Names::with_capacity(ni, 0);
        let mut by_schedule = vec![0; ni];
        for (k, &i) in schedule_index.iter().enumerate() {
            by_schedule[i] = imp_ix[k];
        }
        for ix in by_schedule {
            imp_names.push(&node_names[ix]);
        }
        drop((node_names, imp_ix));
        let mut imp_slots = Vec::with_capacity(ni + 1);
        imp_slots.push(0);
        for l in &imp_layouts {
            imp_slots.push(imp_slots.last().unwrap() + l.ports.len());
        }
        let slots = *imp_slots.last().unwrap();
        // The edge of every slot (a port takes at most one: `Network::try_connect`); a slot
        // without one is a port left unconnected, reported as `Network::validate` does.
        const NO_EDGE: u32 = u32::MAX;
        let mut edge_of = vec![NO_EDGE; slots];
        for (e, edge) in edges.iter().enumerate() {
            let i = schedule_index[rank[edge.source().index()]];
            edge_of[imp_slots[i] + edge.weight.imp_port] =
                u32::try_from(e).map_err(|_| Error::Network("too many impedance ports".into()))?;
        }
        if edge_of.contains(&NO_EDGE) {
            let edge_of = &edge_of;
            let missing = schedule_index.iter().flat_map(|&i| {
                let (name, ports, first) = (&imp_names[i], &imp_layouts[i].ports, imp_slots[i]);
                let open = move |p: &usize| edge_of[first + p] == NO_EDGE;
                (0..ports.len()).filter(open).map(move |p| format!("{name}.{}", ports[p].name))
            });
            return Err(crate::network::not_connected(missing.collect()));
        }
        let AdmGroups { adm, adm_groups, adm_x, adm_ports, adm_port_domain, direct } = adms?;
        let nx = *adm_x.last().unwrap();
        let mut imp_y = Vec::with_capacity(ni + 1);
        imp_y.push(nx);
        let mut has_moments = false;
        for l in &imp_layouts {
            imp_y.push(imp_y.last().unwrap() + l.states);
            has_moments |= l.ports.iter().any(|p| p.domain == Domain::Frame);
        }
        let n = *imp_y.last().unwrap();
        // Ψ: the attachment and the tap of every slot.
        let too_many = std::sync::atomic::AtomicBool::new(false);
        let u32_of = |v: usize| {
            u32::try_from(v).unwrap_or_else(|_| {
                too_many.store(true, std::sync::atomic::Ordering::Relaxed);
                0
            })
        };
        let slot = |e: &u32| {
            let edge = &edges[*e as usize];
            let link = &edge.weight;
            // `at` is set below for the slots with an offset (PENDING here).
            let at = if link.offset.is_some() { PENDING } else { NO_OFFSET };
            if edge.target() == ground {
                return (Slot { adm: GROUND, port: 0, at }, Tap::Other);
            }
            let a = rank[edge.target().index()];
            let domain = imp_layouts[schedule_index[rank[edge.source().index()]]].ports[link.imp_port].domain;
            let tap = match (direct[adm_ports[a] + link.adm_port], link.offset, domain) {
                (Some((sp, sv)), None, Domain::Scalar) => Tap::Scalar { p: u32_of(sp), v: u32_of(sv) },
                (Some((sp, sv)), None, Domain::Point3) if sv == sp + 3 => Tap::PointPv { p: u32_of(sp) },
                (Some((sp, sv)), None, Domain::Point3) => Tap::Point { p: u32_of(sp), v: u32_of(sv) },
                _ => Tap::Other,
            };
            (Slot { adm: u32_of(a), port: u32_of(link.adm_port), at }, tap)
        };
        const PENDING: u32 = NO_OFFSET - 1;
        let (mut attach, mut taps) = (Vec::new(), Vec::new());
        if rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            edge_of.par_iter().map(slot).unzip_into_vecs(&mut attach, &mut taps);
        } else {
            (attach, taps) = edge_of.iter().map(slot).unzip();
        }
        if too_many.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Network("too many admittance states".into()));
        }
        let (mut offsets, mut ground_points) = (Vec::new(), Vec::new());
        for (a, e) in attach.iter_mut().zip(&edge_of).filter(|(a, _)| a.at == PENDING) {
            let Some(o) = edges[*e as usize].weight.offset else { unreachable!("PENDING slots have an offset") };
            if a.adm == GROUND {
                a.at = u32_of(ground_points.len());
                ground_points.push(o.vector());
            } else {
                a.at = u32_of(offsets.len());
                offsets.push(o);
            }
        }
        if too_many.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Network("too many impedance ports".into()));
        }
        // Φ and the indices of the fast paths, while the graph's edges are freed.
        let ((pv, pv_before), (in_off, incoming, count_changes)) = join(
            || {
                drop((nodes, edges, edge_of, rank));
                pv_index(&taps)
            },
            || {
                let (in_off, incoming) = phi(&attach, &adm_ports, &imp_slots, &schedule_index);
                let changes = count_changes(&in_off);
                (in_off, incoming, changes)
            },
        );
        let zeros_imp = vec![0; imp.len() + 1];
        let (frames, frame_of) = frame_index(&attach, &taps);
        let group_ranges: Vec<Range<usize>> = imp_groups.iter().map(|g| g.start..g.end).collect();
        let row_start = row_starts(&pv, &pv_before, &imp_slots, &group_ranges);
        let plan = stage_blocks(&attach, &imp_slots, &group_ranges, adm.len(), false);
        let plan_back = stage_blocks(&attach, &imp_slots, &group_ranges, adm.len(), true);
        let mut sched = Schedule {
            blocks,
            block_names,
            signal_links,
            adm_inputs,
            adm,
            adm_names,
            adm_x,
            adm_ports,
            adm_port_domain,
            in_off,
            incoming: incoming?,
            adm_groups,
            imp,
            imp_names,
            imp_layouts,
            imp_network_order: schedule_index,
            imp_y,
            imp_slots,
            imp_groups,
            attach,
            offsets,
            ground_points,
            taps,
            pv,
            pv_before,
            row_start,
            count_changes,
            has_moments,
            nx,
            n,
            zeros_imp,
            frames,
            frame_of,
            stage_blocks: Vec::new(),
            stage_blocks_back: Vec::new(),
            rotational: std::sync::OnceLock::new(),
        };
        sched.stage_blocks = plan.iter().map(|b| sched.chunked(b)).collect();
        sched.stage_blocks_back = plan_back.iter().map(|b| sched.chunked(b)).collect();
        Ok(sched)
    }

    /// The block `b` of a plan cut into chunks of at most [`CHUNK`] members of one group.
    fn chunked(&self, b: &BlockPlan) -> StageBlock {
        let imp = b.imp.iter().flat_map(|r| chunks_in(&self.imp_groups, r.clone())).map(|(g, c)| self.imp_chunk(g, c)).collect();
        let adm = chunks_in(&self.adm_groups, b.adm.clone()).map(|(g, c)| self.adm_chunk(g, c)).collect();
        StageBlock { imp, adm }
    }

    /// Which admittances and impedances (schedule order) are 1-D components written in
    /// translational units (m, m/s, N: a mass, a spring, a friction element) that act on
    /// rotations here: joined through scalar ports, directly or through other such
    /// components, to a component whose own signals are rotational (rad, rad/s: a gear, a
    /// robot's joints). Their signals' units read as the rotational ones
    /// ([`crate::units::rotational`]): the brake on a gear's output shaft gives N·m and rad/s.
    pub fn rotational(&self) -> (&[bool], &[bool]) {
        let (a, i) = self.rotational.get_or_init(|| self.find_rotational());
        (a, i)
    }

    fn find_rotational(&self) -> (Vec<bool>, Vec<bool>) {
        let (na, ni) = (self.adm.len(), self.imp.len());
        // Union–find over the components (admittances first), joined by scalar ports.
        let mut parent: Vec<usize> = (0..na + ni).collect();
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for i in 0..ni {
            for (p, port) in self.imp_layouts[i].ports.iter().enumerate() {
                if port.domain != Domain::Scalar {
                    continue;
                }
                if let Some((adm, _)) = self.attach.get(self.imp_slots[i] + p).and_then(|a| a.port()) {
                    let (x, y) = (root(&mut parent, adm), root(&mut parent, na + i));
                    parent[x] = y;
                }
            }
        }
        // Only a component joined to another by a scalar port can turn: the others' signal
        // tables are not read (a network of 3-D contacts reads none).
        let mut joined = vec![false; na + ni];
        for x in 0..na + ni {
            let r = root(&mut parent, x);
            if r != x {
                joined[x] = true;
                joined[r] = true;
            }
        }
        let native = |signals: &[crate::SignalInfo]| signals.iter().any(|s| matches!(s.unit, "rad" | "rad/s"));
        let natives: Vec<bool> = (0..na + ni)
            .map(|x| {
                joined[x] && if x < na { native(&self.adm[x].signals()) } else { native(&self.imp[x - na].signals()) }
            })
            .collect();
        let mut turns = vec![false; na + ni];
        for (x, &n) in natives.iter().enumerate() {
            if n {
                let r = root(&mut parent, x);
                turns[r] = true;
            }
        }
        let mut of = |x: usize| !natives[x] && turns[root(&mut parent, x)];
        let adm = (0..na).map(&mut of).collect();
        let imp = (na..na + ni).map(&mut of).collect();
        (adm, imp)
    }

    /// The signal blocks' names, in file order.
    pub fn block_names(&self) -> &Names {
        &self.block_names
    }

    /// The signal connections, in file order: (signal read, "block.input").
    pub fn signal_connections(&self) -> Vec<(String, String)> {
        let blocks = self.signal_links.iter().map(|(from, b, i, c, _)| {
            let input = self.blocks[*b].inputs().get(*i).map(|x| x.name).unwrap_or("?");
            (*c, from.clone(), format!("{}.{input}", &self.block_names[*b]))
        });
        let adms = self.adm_inputs.iter().map(|(from, a, i, c, _)| {
            let input = self.adm[*a].inputs().get(*i).map(|x| x.name).unwrap_or("?");
            (*c, from.clone(), format!("{}.{input}", &self.adm_names[*a]))
        });
        let mut all: Vec<_> = blocks.chain(adms).collect();
        all.sort_by_key(|l| l.0);
        all.into_iter().map(|(_, from, to)| (from, to)).collect()
    }

    /// Total number of states.
    pub fn state_len(&self) -> usize {
        self.n
    }

    /// Number of admittances and impedances.
    pub fn counts(&self) -> (usize, usize) {
        (self.adm.len(), self.imp.len())
    }

    /// Motion of the impedance port of slot `slot` for the admittance states `xa` (Ψ for
    /// one slot): read from the states ([`Tap`]), from ground, or from `port_motion` and
    /// the offset.
    pub(crate) fn motion(&self, xa: &[f64], slot: usize) -> Motion {
        SlotMotion::motion(self, xa, slot)
    }
}

/// The impedances in schedule order, grouped into batches (see the module docs).
struct ImpGroups {
    imp: Vec<Arc<dyn Impedance>>,
    imp_layouts: Vec<Layout>,
    imp_groups: Vec<Group<dyn ImpedanceBatch>>,
    /// The schedule position of the impedance at each network position.
    schedule_index: Vec<usize>,
}

/// Group the impedance nodes `net_imp` (in network order) into batches and take them out
/// of the graph: every impedance joins the open block of its kind (a batch, or None for
/// the per-component group), which is closed when it holds `IMPEDANCE_BLOCK` members.
fn group_impedances(mut net_imp: Vec<&mut Node>) -> ImpGroups {
    let ni = net_imp.len();
    type Block = (Option<Box<dyn ImpedanceBatch>>, Vec<usize>);
    let mut open: Vec<Block> = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    for (k, node) in net_imp.iter().enumerate() {
        let Node::Impedance { comp, .. } = &**node else { unreachable!("impedance nodes") };
        // An open batch of its kind takes it (`join_batch`, as `merge` of its own batch, made
        // only where none does); one of no batch joins the open per-component block.
        let joined = open.iter_mut().position(|(g, _)| g.as_mut().is_some_and(|g| comp.join_batch(g.as_mut())));
        let g = match joined {
            Some(g) => g,
            None => match comp.batch() {
                Some(b) => {
                    open.push((Some(b), Vec::new()));
                    open.len() - 1
                }
                None => open.iter().position(|(g, _)| g.is_none()).unwrap_or_else(|| {
                    open.push((None, Vec::new()));
                    open.len() - 1
                }),
            },
        };
        open[g].1.push(k);
        if open[g].1.len() == IMPEDANCE_BLOCK {
            blocks.push(open.remove(g));
        }
    }
    blocks.append(&mut open);
    let mut imp = Vec::with_capacity(ni);
    let mut imp_layouts = Vec::with_capacity(ni);
    let mut imp_network_index = Vec::with_capacity(ni);
    let mut imp_groups = Vec::new();
    for (batch, members) in blocks {
        let start = imp.len();
        for k in members {
            let Node::Impedance { layout, comp } = std::mem::replace(&mut *net_imp[k], Node::Ground) else {
                unreachable!("each impedance once")
            };
            imp.push(comp);
            imp_layouts.push(layout);
            imp_network_index.push(k);
        }
        let batch = batch.unwrap_or_else(|| EachImpedance::batch(imp[start..].to_vec()));
        imp_groups.push(Group { start, end: imp.len(), batch });
    }
    let mut schedule_index = vec![0; imp.len()];
    for (i, &k) in imp_network_index.iter().enumerate() {
        schedule_index[k] = i;
    }
    ImpGroups { imp, imp_layouts, imp_groups, schedule_index }
}

/// The admittances, their batches, state and port offsets, and direct state reads.
struct AdmGroups {
    adm: Vec<Arc<dyn Admittance>>,
    adm_groups: Vec<Group<dyn AdmittanceBatch>>,
    adm_x: Vec<usize>,
    adm_ports: Vec<usize>,
    adm_port_domain: Vec<Domain>,
    /// The (position, velocity) state offsets of every scalar or point port that
    /// declares them ([`Admittance::port_states`]).
    direct: Vec<Option<(usize, usize)>>,
}

/// Take the admittance nodes `nodes` (in network order) out of the graph, group them into
/// runs of one batch kind (None: the per-component kind), place their states and ports,
/// and check their direct state reads against `port_motion`.
fn group_admittances(nodes: Vec<&mut Node>, adm_names: &Names) -> Result<AdmGroups> {
    let na = nodes.len();
    let mut adm: Vec<Arc<dyn Admittance>> = Vec::with_capacity(na);
    let mut adm_layouts = Vec::with_capacity(na);
    for node in nodes {
        let Node::Admittance { layout, comp } = std::mem::replace(node, Node::Ground) else {
            unreachable!("admittance nodes")
        };
        adm.push(comp);
        adm_layouts.push(layout);
    }
    type Run = (Range<usize>, Option<Box<dyn AdmittanceBatch>>);
    let mut runs: Vec<Run> = Vec::new();
    for (j, a) in adm.iter().enumerate() {
        // The last run takes it if it is a batch of its kind (`join_batch`, without making a
        // batch of one), or if both have none.
        let (joined, b) = match runs.last_mut() {
            Some((_, Some(g))) => {
                if a.join_batch(g.as_mut()) {
                    (true, None)
                } else {
                    (false, a.batch())
                }
            }
            Some((_, None)) => match a.batch() {
                None => (true, None),
                b => (false, b),
            },
            None => (false, a.batch()),
        };
        match runs.last_mut() {
            Some((r, _)) if joined => r.end = j + 1,
            _ => runs.push((j..j + 1, b)),
        }
    }
    let adm_groups: Vec<Group<dyn AdmittanceBatch>> = runs
        .into_iter()
        .map(|(r, b)| {
            let batch = b.unwrap_or_else(|| EachAdmittance::batch(adm[r.clone()].to_vec()));
            Group { start: r.start, end: r.end, batch }
        })
        .collect();

    let mut adm_x = Vec::with_capacity(adm.len() + 1);
    let mut adm_ports = Vec::with_capacity(adm.len() + 1);
    adm_x.push(0);
    adm_ports.push(0);
    for l in &adm_layouts {
        adm_x.push(adm_x.last().unwrap() + l.states);
        adm_ports.push(adm_ports.last().unwrap() + l.ports.len());
    }
    let mut adm_port_domain = Vec::with_capacity(*adm_ports.last().unwrap());
    for l in &adm_layouts {
        adm_port_domain.extend(l.ports.iter().map(|p| p.domain));
    }
    // Direct state reads of scalar and point ports, checked against port_motion.
    let mut direct: Vec<Option<(usize, usize)>> = vec![None; adm_port_domain.len()];
    let longest = adm_x.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let probe_states: Vec<f64> = (0..longest).map(|i| 1.0 + 0.25 * i as f64).collect();
    for (j, a) in adm.iter().enumerate() {
        let len = adm_x[j + 1] - adm_x[j];
        let probe_x = &probe_states[..len];
        for (port, info) in adm_layouts[j].ports.iter().enumerate() {
            let Some(ps) = a.port_states(port) else { continue };
            let (d, read) = match info.domain {
                Domain::Scalar => (1, Motion::scalar(probe_x[ps.p], probe_x[ps.v])),
                Domain::Point3 if ps.p + 3 <= len && ps.v + 3 <= len => (
                    3,
                    Motion::point(
                        Vector3::from_column_slice(&probe_x[ps.p..ps.p + 3]),
                        Vector3::from_column_slice(&probe_x[ps.v..ps.v + 3]),
                    ),
                ),
                _ => (0, Motion::REST),
            };
            if d == 0 || ps.p + d > len || ps.v + d > len || a.port_motion(probe_x, port) != read {
                return Err(Error::Network(format!(
                    "admittance '{}': port_states of port '{}' disagree with its port_motion",
                    &adm_names[j], info.name
                )));
            }
            direct[adm_ports[j] + port] = Some((adm_x[j] + ps.p, adm_x[j] + ps.v));
        }
    }
    Ok(AdmGroups { adm, adm_groups, adm_x, adm_ports, adm_port_domain, direct })
}

/// Per impedance i (schedule order), the first member of the run of its group that i ends
/// whose ports lie in rows of point masses' states (`Schedule::row_start`): each member's
/// one or two ports all [`Tap::PointPv`], at `p0 + step·i` for its port i, each member's
/// `p0` 6 past the one before and the same `step`; `u32::MAX` for a member whose ports do
/// not lie so. A chunk `s..e` of a group then lies in rows when `row_start[e − 1] ≤ s`
/// ([`Schedule::imp_chunk`]), found without reading its offsets.
fn row_starts(pv: &[u32], pv_before: &[u32], imp_slots: &[usize], groups: &[Range<usize>]) -> Vec<u32> {
    let mut out = vec![u32::MAX; imp_slots.len().saturating_sub(1)];
    for r in groups {
        let mut prev: Option<(u32, u32, usize)> = None;
        for i in r.clone() {
            let (sa, sb) = (imp_slots[i], imp_slots[i + 1]);
            let (a, b) = (pv_before[sa] as usize, pv_before[sb] as usize);
            // The member's first port's offset, the step to its second, its ports.
            let own = match &pv[a..b] {
                [p0] if sb - sa == 1 => Some((*p0, 0, 1)),
                [p0, p1] if sb - sa == 2 => p1.checked_sub(*p0).map(|step| (*p0, step, 2)),
                _ => None,
            };
            out[i] = match (prev, own) {
                (Some((q0, q_step, q_ports)), Some((p0, step, ports)))
                    if (step, ports) == (q_step, q_ports) && q0.checked_add(6) == Some(p0) =>
                {
                    out[i - 1]
                }
                (_, Some(_)) => u32::try_from(i).unwrap_or(u32::MAX),
                (_, None) => u32::MAX,
            };
            prev = own;
        }
    }
    out
}

/// The plan of [`Schedule::stage_blocks`] (`back`: of [`Schedule::stage_blocks_back`]).
/// Forward, admittance block k (admittances `k·STAGE_BLOCK..`) needs, in each impedance
/// group, every member up to the last one with a slot on it, and gets those not yet in an
/// earlier block; backward, from the last block to the first, every member from the first
/// one with a slot on it on. One pass over the slots (`attach`, impedance i owning
/// `imp_slots[i]..imp_slots[i + 1]`); `groups`: each group's range of impedances, in order.
fn stage_blocks(attach: &[Slot], imp_slots: &[usize], groups: &[Range<usize>], n_adm: usize, back: bool) -> Vec<BlockPlan> {
    let blocks = n_adm.div_ceil(STAGE_BLOCK);
    if blocks < 2 || blocks.saturating_mul(groups.len()) > STAGE_PLAN_ENTRIES {
        return Vec::new();
    }
    // The cursor's start in each group: its first member forward, one past its last backward.
    let edge = |r: &Range<usize>| if back { r.end } else { r.start };
    // need[k·G + g]: forward, one past the last member of group g with a slot on block k;
    // backward, the first one.
    let n_groups = groups.len();
    let mut need: Vec<usize> = (0..blocks).flat_map(|_| groups.iter().map(edge)).collect();
    for (g, r) in groups.iter().enumerate() {
        for i in r.clone() {
            for s in &attach[imp_slots[i]..imp_slots[i + 1]] {
                if let Some((j, _)) = s.port() {
                    let n = &mut need[j / STAGE_BLOCK * n_groups + g];
                    *n = if back { (*n).min(i) } else { (*n).max(i + 1) };
                }
            }
        }
    }
    let mut done: Vec<usize> = groups.iter().map(edge).collect();
    let mut plan = Vec::with_capacity(blocks + 1);
    for step in 0..blocks {
        let k = if back { blocks - 1 - step } else { step };
        let mut imp = Vec::new();
        for (g, d) in done.iter_mut().enumerate() {
            let n = need[k * n_groups + g];
            let r = if back { n.min(*d)..*d } else { *d..n.max(*d) };
            *d = if back { r.start } else { r.end };
            if !r.is_empty() {
                imp.push(r);
            }
        }
        if imp.iter().map(|r| r.len()).sum::<usize>() > STAGE_BLOCK_IMPEDANCES {
            return Vec::new();
        }
        plan.push(BlockPlan { imp, adm: k * STAGE_BLOCK..((k + 1) * STAGE_BLOCK).min(n_adm) });
    }
    let rest = done.iter().zip(groups).map(|(&d, r)| if back { r.start..d } else { d..r.end });
    let rest: Vec<Range<usize>> = rest.filter(|r| !r.is_empty()).collect();
    if !rest.is_empty() {
        plan.push(BlockPlan { imp: rest, adm: n_adm..n_adm });
    }
    plan
}

/// [`Schedule::frames`] and [`Schedule::frame_of`] from the slots' attachments and taps.
fn frame_index(attach: &[Slot], taps: &[Tap]) -> (Vec<(u32, u32)>, Vec<u32>) {
    let from_port = |(a, t): (&Slot, &Tap)| a.adm != GROUND && matches!(t, Tap::Other);
    if !attach.iter().zip(taps).any(from_port) {
        return (Vec::new(), Vec::new());
    }
    let mut seen: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
    let mut frames = Vec::new();
    let frame_of = attach
        .iter()
        .zip(taps)
        .map(|(a, t)| match (a.adm, t) {
            (adm, Tap::Other) if adm != GROUND => *seen.entry((adm, a.port)).or_insert_with(|| {
                frames.push((adm, a.port));
                frames.len() as u32 - 1
            }),
            _ => u32::MAX,
        })
        .collect();
    (frames, frame_of)
}

/// The index of the slots whose tap is [`Tap::PointPv`]: their position offsets, and the
/// number of them before every slot (`Schedule::pv`, `Schedule::pv_before`).
fn pv_index(taps: &[Tap]) -> (Vec<u32>, Vec<u32>) {
    let mut pv = Vec::new();
    let mut pv_before = Vec::with_capacity(taps.len() + 1);
    pv_before.push(0);
    for tap in taps {
        if let Tap::PointPv { p } = *tap {
            pv.push(p);
        }
        pv_before.push(pv.len() as u32);
    }
    pv.shrink_to_fit();
    (pv, pv_before)
}

/// `Schedule::count_changes` from Φ's row offsets `in_off`.
fn count_changes(in_off: &[usize]) -> Vec<u32> {
    let ports = in_off.len().saturating_sub(1);
    let mut out = Vec::with_capacity(ports);
    let mut changes = 0u32;
    for p in 0..ports {
        if p > 0 && in_off[p + 1] - in_off[p] != in_off[p] - in_off[p - 1] {
            changes += 1;
        }
        out.push(changes);
    }
    out
}

/// Φ: the incoming slots of every admittance port, in network order of the slots
/// (fixed), as compressed rows: the slots of every port counted, then placed.
fn phi(
    attach: &[Slot],
    adm_ports: &[usize],
    imp_slots: &[usize],
    schedule_index: &[usize],
) -> (Vec<usize>, Result<Vec<u32>>) {
    let n_adm_ports = *adm_ports.last().unwrap();
    let port_of = |a: &Slot| a.port().map(|(adm, port)| adm_ports[adm] + port);
    let mut in_off = vec![0; n_adm_ports + 1];
    for gp in attach.iter().filter_map(port_of) {
        in_off[gp + 1] += 1;
    }
    for p in 0..n_adm_ports {
        in_off[p + 1] += in_off[p];
    }
    let mut fill = in_off.clone();
    let mut incoming = vec![0u32; in_off[n_adm_ports]];
    for &i in schedule_index {
        let slots = imp_slots[i]..imp_slots[i + 1];
        for (s, a) in slots.clone().zip(&attach[slots]) {
            if let Some(gp) = port_of(a) {
                match u32::try_from(s) {
                    Ok(s) => incoming[fill[gp]] = s,
                    Err(_) => return (in_off, Err(Error::Network("too many impedance ports".into()))),
                }
                fill[gp] += 1;
            }
        }
    }
    (in_off, Ok(incoming))
}

/// The motions of a stage's frames ([`Schedule::frames`]), each gathered once by
/// [`Schedule::gather_frames`]: the slots attached to a frame read it from here (and apply
/// their offset) instead of calling `port_motion` once per slot.
pub(crate) struct Gathered<'a> {
    pub(crate) sched: &'a Schedule,
    pub(crate) frames: &'a [Motion],
}

impl SlotMotion for Gathered<'_> {
    #[inline]
    fn motion(&self, xa: &[f64], slot: usize) -> Motion {
        let a = self.sched.attach[slot];
        if let (Tap::Other, false) = (&self.sched.taps[slot], a.adm == GROUND) {
            let m = self.frames[self.sched.frame_of[slot] as usize];
            return match self.sched.offsets.get(a.at as usize) {
                Some(o) => o.apply(&m).0,
                None => m,
            };
        }
        self.sched.motion(xa, slot)
    }
}

impl Gathered<'_> {
    /// What slot `slot`'s motion is carried by, and how far from it: the gathered frame and
    /// the length of the slot's offset on it, or the slot's own motion at distance 0 (a
    /// point port, the ground).
    #[inline]
    pub(crate) fn carrier(&self, xa: &[f64], slot: usize) -> (Motion, f64) {
        let a = self.sched.attach[slot];
        if let (Tap::Other, false) = (&self.sched.taps[slot], a.adm == GROUND) {
            let m = self.frames[self.sched.frame_of[slot] as usize];
            return (m, self.sched.offsets.get(a.at as usize).map_or(0.0, |o| o.vector().norm()));
        }
        (self.sched.motion(xa, slot), 0.0)
    }
}

impl Schedule {
    /// The motion of every frame of [`Schedule::frames`] at the admittance states `xa`, into
    /// `out` (cleared first).
    pub(crate) fn gather_frames(&self, xa: &[f64], out: &mut Vec<Motion>) {
        out.clear();
        out.extend(self.frames.iter().map(|&(a, p)| {
            let a = a as usize;
            self.adm[a].port_motion(&xa[self.adm_x[a]..self.adm_x[a + 1]], p as usize)
        }));
    }
}

impl SlotMotion for Schedule {
    fn motion(&self, xa: &[f64], slot: usize) -> Motion {
        match self.taps[slot] {
            Tap::PointPv { p } => {
                let p = p as usize;
                Motion::point(Vector3::new(xa[p], xa[p + 1], xa[p + 2]), Vector3::new(xa[p + 3], xa[p + 4], xa[p + 5]))
            }
            Tap::Point { p, v } => {
                let (p, v) = (p as usize, v as usize);
                Motion::point(Vector3::new(xa[p], xa[p + 1], xa[p + 2]), Vector3::new(xa[v], xa[v + 1], xa[v + 2]))
            }
            Tap::Scalar { p, v } => Motion::scalar(xa[p as usize], xa[v as usize]),
            Tap::Other => match self.attachment(slot) {
                Attach::Ground(p) => Motion::point(p, Vector3::zeros()),
                Attach::Port { adm, port, offset } => {
                    let m = self.adm[adm].port_motion(&xa[self.adm_x[adm]..self.adm_x[adm + 1]], port);
                    match offset {
                        Some(o) => o.apply(&m).0,
                        None => m,
                    }
                }
            },
        }
    }
}

impl Schedule {
    /// Φ (13f) on scalar or point admittance port `gp` (global index): the sum of the
    /// forces of the slots attached to it, in network order.
    #[inline(always)]
    pub(crate) fn sum_point(&self, force: &[Vector3<f64>], gp: usize) -> Vector3<f64> {
        crate::views::sum_slots(&self.incoming[self.in_off[gp]..self.in_off[gp + 1]], force)
    }

    /// The chunk of impedances `members` of group `group`.
    pub(crate) fn imp_chunk(&self, group: usize, members: Range<usize>) -> ImpChunk {
        let slots = self.imp_slots[members.start]..self.imp_slots[members.end];
        let y = self.imp_y[members.start]..self.imp_y[members.end];
        let (a, b) = (self.pv_before[slots.start] as usize, self.pv_before[slots.end] as usize);
        let pv = (b - a == slots.len() && !slots.is_empty()).then_some(a..b);
        let in_rows = self.row_start.get(members.end.wrapping_sub(1)).is_some_and(|&s| s as usize <= members.start);
        let rows = pv.as_ref().filter(|_| in_rows).map(|r| {
            let first = self.pv[r.start] as usize;
            let ports = r.len() / members.len();
            (first, if ports == 2 { self.pv[r.start + 1] as usize - first } else { 0 })
        });
        ImpChunk { group, members, slots, y, pv, rows }
    }

    /// The chunk of admittances `members` of group `group`.
    pub(crate) fn adm_chunk(&self, group: usize, members: Range<usize>) -> AdmChunk {
        let ports = self.adm_ports[members.start]..self.adm_ports[members.end];
        let x = self.adm_x[members.start]..self.adm_x[members.end];
        let uniform = if ports.is_empty() || self.count_changes[ports.end - 1] != self.count_changes[ports.start] {
            0
        } else {
            self.in_off[ports.start + 1] - self.in_off[ports.start]
        };
        let first = self.in_off.get(ports.start).copied().unwrap_or(0);
        AdmChunk { group, members, ports, x, uniform, first }
    }

    /// Ψ (13d) of the slots of `chunk` at the admittance states `xa`, read on demand, the
    /// `Other` slots' motions from `other` (the stage's [`Gathered`] frames); when every one
    /// of them has a [`Tap::PointPv`], the view reads their offsets directly
    /// ([`PortMotions::point_pv`]).
    #[inline]
    pub(crate) fn chunk_motions<'a>(&'a self, xa: &'a [f64], chunk: &ImpChunk, other: &'a dyn SlotMotion) -> PortMotions<'a> {
        let m = PortMotions::new(&self.taps, xa, chunk.slots.start, other);
        match (&chunk.pv, chunk.rows) {
            (Some(pv), Some((first, step))) => m.with_pv(&self.pv[pv.clone()]).with_rows(first, step),
            (Some(pv), None) => m.with_pv(&self.pv[pv.clone()]),
            _ => m,
        }
    }

    /// The Φ view of the ports of `chunk`, kept in `phi` if `keep`; it knows when they all
    /// receive the same number of slots.
    #[inline]
    pub(crate) fn chunk_forces<'a>(
        &'a self,
        force: &'a [Vector3<f64>],
        chunk: &AdmChunk,
        phi: &'a mut [Force],
        keep: bool,
    ) -> PortForces<'a> {
        let view = self.port_forces(force, chunk.ports.start, phi, keep);
        if chunk.uniform == 0 {
            view
        } else {
            view.with_uniform_at(chunk.uniform, chunk.first)
        }
    }

    /// The Φ view of the admittance ports from global port `base` on, kept in `phi` if
    /// `keep`.
    #[inline]
    pub(crate) fn port_forces<'a>(
        &'a self,
        force: &'a [Vector3<f64>],
        base: usize,
        phi: &'a mut [Force],
        keep: bool,
    ) -> PortForces<'a> {
        PortForces::new(&self.in_off, &self.incoming, force, base, phi, keep)
    }

    /// Φ (13f) on the ports of admittances `adms` at the admittance states `xa`, from the
    /// slot forces `force` (and `moment`), into `phi` (which starts at the first port of
    /// `adms`). Each port sums its slots in network order ([`Schedule::sum_port`]).
    #[inline]
    pub(crate) fn scatter_phi(
        &self,
        xa: &[f64],
        force: &[Vector3<f64>],
        moment: &[Vector3<f64>],
        adms: Range<usize>,
        phi: &mut [Force],
    ) {
        let p0 = self.adm_ports[adms.start];
        for j in adms {
            for gp in self.adm_ports[j]..self.adm_ports[j + 1] {
                let out = &mut phi[gp - p0];
                if self.adm_port_domain[gp] == Domain::Frame {
                    *out = self.sum_port(xa, force, moment, j, gp - self.adm_ports[j]);
                } else {
                    // Field by field: a whole `Force` built on the stack and copied cost a
                    // store-forwarding stall per port (chain-10k: 11 % of the run).
                    out.f = self.sum_point(force, gp);
                    out.m = Vector3::zeros();
                }
            }
        }
    }

    /// Φ (13f) on port `port` of admittance `j`, any domain. On a frame port every slot
    /// adds its force and its moment about the port's reference point, m + r × f, with the
    /// lever arm r of its offset at the admittance states `xa`; on other ports the moment is
    /// zero. `moment` is empty when no impedance port is a frame port.
    pub(crate) fn sum_port(
        &self,
        xa: &[f64],
        force: &[Vector3<f64>],
        moment: &[Vector3<f64>],
        j: usize,
        port: usize,
    ) -> Force {
        let gp = self.adm_ports[j] + port;
        if self.adm_port_domain[gp] != Domain::Frame {
            return Force::point(self.sum_point(force, gp));
        }
        let frame = self.adm[j].port_motion(&xa[self.adm_x[j]..self.adm_x[j + 1]], port);
        let mut sum = Force::ZERO;
        for &s in &self.incoming[self.in_off[gp]..self.in_off[gp + 1]] {
            let s = s as usize;
            let f = Force { f: force[s], m: moment.get(s).copied().unwrap_or_else(Vector3::zeros) };
            // The slots of a frame port are never grounded: `at` indexes the offsets.
            let lever = match self.offsets.get(self.attach[s].at as usize) {
                Some(o) => o.apply(&frame).1,
                None => Vector3::zeros(),
            };
            sum += f.moved_by(&lever);
        }
        sum
    }

    /// Initial state vector: admittances first, then impedances initialised at the
    /// initial port motions (each component on its own: on the worker threads for large
    /// networks, the same values).
    pub fn initial_state(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.n];
        let (xa, y) = x.split_at_mut(self.nx);
        let splits = Splits::new(rayon::current_num_threads() > 1, INIT_GRAIN);
        let never = |r: Result<bool, std::convert::Infallible>| r.unwrap_or_else(|e| match e {});
        never(split_run(0..self.adm.len(), Cut::new(&mut *xa, &self.adm_x), splits, &|adms, x: Cut<f64>| {
            let base = self.adm_x[adms.start];
            for i in adms {
                self.adm[i].init(&mut x.buf[self.adm_x[i] - base..self.adm_x[i + 1] - base]);
            }
            Ok(true)
        }));
        let xa: &[f64] = xa;
        never(split_run(0..self.imp.len(), Cut::new(y, &self.imp_y), splits, &|imps, y: Cut<f64>| {
            let base = self.imp_y[imps.start];
            let mut motions = Vec::new();
            for i in imps {
                motions.clear();
                motions.extend((self.imp_slots[i]..self.imp_slots[i + 1]).map(|s| self.motion(xa, s)));
                self.imp[i].init(&mut y.buf[self.imp_y[i] - base..self.imp_y[i + 1] - base], &motions);
            }
            Ok(true)
        }));
        x
    }

    /// Where each port of impedance `i` is attached: `Some((admittance, port))`, or `None`
    /// for ground, in port order.
    pub fn impedance_attachments_iter(&self, i: usize) -> impl Iterator<Item = Option<(usize, usize)>> + '_ {
        self.attach[self.imp_slots[i]..self.imp_slots[i + 1]].iter().map(|a| a.port())
    }

    /// Where each port of impedance `i` is attached: `Some((admittance, port))`, or `None`
    /// for ground (the stability analysis of `stiction check`).
    pub fn impedance_attachments(&self, i: usize) -> Vec<Option<(usize, usize)>> {
        self.impedance_attachments_iter(i).collect()
    }

    /// The motions Ψ of the ports of impedance `i` at the state `x` (offsets applied; a
    /// grounded port at rest), for the stability analysis.
    pub fn impedance_motions(&self, i: usize, x: &[f64]) -> Vec<Motion> {
        (self.imp_slots[i]..self.imp_slots[i + 1]).map(|s| self.motion(&x[..self.nx], s)).collect()
    }

    /// The state of impedance `i` within the state `x`.
    pub fn impedance_state<'a>(&self, i: usize, x: &'a [f64]) -> &'a [f64] {
        &x[self.imp_y[i]..self.imp_y[i + 1]]
    }

    /// Where slot `slot` is attached (its 12-byte record read whole).
    pub fn attachment(&self, slot: usize) -> Attach {
        let a = self.attach[slot];
        match a.port() {
            None => Attach::Ground(self.ground_points.get(a.at as usize).copied().unwrap_or_else(Vector3::zeros)),
            Some((adm, port)) => Attach::Port { adm, port, offset: self.offsets.get(a.at as usize).copied() },
        }
    }

    /// Whether the ports `ports` of admittance `j` (all those holding coupled laws) can each
    /// be a point of its mechanism in a group of bodies at state `x` (stepper/coupling.rs):
    /// a point with a mobility ([`StageBody::mobility`](crate::stage_law::StageBody::mobility))
    /// at each, and the mobilities between every two ([`Admittance::stage_mobility`]).
    pub(crate) fn mechanism_points(&self, x: &[f64], j: usize, ports: &[usize]) -> bool {
        let x = &x[self.adm_x[j]..self.adm_x[j + 1]];
        let rates = vec![0.0; x.len()];
        let adm = &self.adm[j];
        ports.iter().all(|&p| adm.stage_body(x, &rates, p).is_some_and(|b| b.mobility.is_some() && !b.prescribed))
            && ports.iter().all(|&p| ports.iter().all(|&q| p == q || adm.stage_mobility(x, p, q).is_some()))
    }

    /// The admittance ports impedance `i` is attached to, (admittance, port), in port order
    /// (its grounded ports left out).
    pub fn impedance_ports(&self, i: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.attach[self.imp_slots[i]..self.imp_slots[i + 1]].iter().filter_map(|a| a.port())
    }

    /// The state slice of admittance j within the full state vector `x`.
    pub fn admittance_state<'a>(&self, j: usize, x: &'a [f64]) -> &'a [f64] {
        &x[self.adm_x[j]..self.adm_x[j + 1]]
    }

    /// Names of the admittances, in schedule order.
    pub fn admittance_names(&self) -> &Names {
        &self.adm_names
    }

    /// Names of the impedances, in schedule order (grouped by batch, see the module docs).
    pub fn impedance_names(&self) -> &Names {
        &self.imp_names
    }

    /// Schedule indices of the impedances in network (file) order.
    pub fn impedances_in_network_order(&self) -> &[usize] {
        &self.imp_network_order
    }

    /// Number of typed batches (admittances, impedances) and the number of components they
    /// hold; the others are in per-component batches, one dynamic call per component.
    pub fn batch_counts(&self) -> (usize, usize, usize) {
        let adm: Vec<_> = self.adm_groups.iter().filter(|g| !g.batch.as_any().is::<EachAdmittance>()).collect();
        let imp: Vec<_> = self.imp_groups.iter().filter(|g| !g.batch.as_any().is::<EachImpedance>()).collect();
        let members =
            adm.iter().map(|g| g.end - g.start).sum::<usize>() + imp.iter().map(|g| g.end - g.start).sum::<usize>();
        (adm.len(), imp.len(), members)
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

#[cfg(test)]
// One range in a list of group ranges is a plan's shape, not a list of indices.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    fn port(adm: usize) -> Slot {
        Slot { adm: adm as u32, port: 0, at: NO_OFFSET }
    }

    /// Whether `plan` runs every impedance once and every admittance after each impedance
    /// with a slot on it.
    fn sound(plan: &[BlockPlan], attach: &[Slot], imp_slots: &[usize], n_adm: usize) -> bool {
        let n_imp = imp_slots.len() - 1;
        let mut block_of_imp = vec![usize::MAX; n_imp];
        let mut block_of_adm = vec![usize::MAX; n_adm];
        for (k, b) in plan.iter().enumerate() {
            for i in b.imp.iter().flat_map(|r| r.clone()) {
                if block_of_imp[i] != usize::MAX {
                    return false;
                }
                block_of_imp[i] = k;
            }
            b.adm.clone().for_each(|j| block_of_adm[j] = k);
        }
        let once = block_of_imp.iter().chain(&block_of_adm).all(|&k| k != usize::MAX);
        once && (0..n_imp).all(|i| {
            attach[imp_slots[i]..imp_slots[i + 1]]
                .iter()
                .all(|s| s.port().is_none_or(|(j, _)| block_of_imp[i] <= block_of_adm[j]))
        })
    }

    /// A chain's springs (j, j + 1), then one impedance on both ends (a far slot: its
    /// group's cursor runs ahead in the first block only) and a grounded one.
    #[test]
    fn a_chain_runs_block_by_block_with_every_slot_written_before_it_is_summed() {
        let n = 1000;
        let mut attach = Vec::new();
        let mut imp_slots = vec![0];
        for j in 0..n - 1 {
            attach.extend([port(j), port(j + 1)]);
            imp_slots.push(attach.len());
        }
        attach.extend([port(0), port(n - 1)]);
        imp_slots.push(attach.len());
        attach.push(Slot { adm: GROUND, port: 0, at: NO_OFFSET });
        imp_slots.push(attach.len());
        let groups = [0..n - 1, n - 1..n + 1];
        let plan = stage_blocks(&attach, &imp_slots, &groups, n, false);
        assert_eq!(plan.len(), 5, "four blocks of admittances, then the grounded impedance");
        assert_eq!(plan[0], BlockPlan { imp: vec![0..256, n - 1..n], adm: 0..256 });
        assert_eq!(plan[4], BlockPlan { imp: vec![n..n + 1], adm: n..n });
        assert!(sound(&plan, &attach, &imp_slots, n));
        // Backward: the last block first, with the springs from 767 (on admittances 767 and
        // 768) and, from the far one on, its whole group; no grounded block of its own.
        let back = stage_blocks(&attach, &imp_slots, &groups, n, true);
        assert_eq!(back.len(), 4);
        assert_eq!(back[0], BlockPlan { imp: vec![767..n - 1, n - 1..n + 1], adm: 768..n });
        assert_eq!(back[3], BlockPlan { imp: vec![0..255], adm: 0..256 });
        assert!(sound(&back, &attach, &imp_slots, n));
    }

    /// `row_starts` of members whose ports have these offsets (`None`: a port not read
    /// from a point mass's state), in `groups`.
    fn starts(members: &[Vec<Option<u32>>], groups: &[Range<usize>]) -> Vec<u32> {
        let (mut pv, mut pv_before, mut imp_slots) = (Vec::new(), vec![0], vec![0]);
        for m in members {
            for p in m {
                pv.extend(*p);
                pv_before.push(pv.len() as u32);
            }
            imp_slots.push(pv_before.len() - 1);
        }
        row_starts(&pv, &pv_before, &imp_slots, groups)
    }

    /// Springs between point masses in a row and contacts on them lie in rows (member k's
    /// port i at first + 6k + step·i), a run within one group; masses out of order, of
    /// other sizes, ports not on point masses or other than one or two do not. A chunk
    /// `s..e` lies in rows when `row_start[e − 1] ≤ s`.
    #[test]
    fn point_masses_in_a_row_are_rows() {
        const NO: u32 = u32::MAX;
        let springs: Vec<Vec<Option<u32>>> = (0..5).map(|k| vec![Some(12 + 6 * k), Some(18 + 6 * k)]).collect();
        assert_eq!(starts(&springs, &[0..5]), [0, 0, 0, 0, 0]);
        assert_eq!(starts(&springs, &[0..2, 2..5]), [0, 0, 2, 2, 2], "a run ends with its group");
        let contacts: Vec<Vec<Option<u32>>> = (0..5).map(|k| vec![Some(30 + 6 * k)]).collect();
        assert_eq!(starts(&contacts, &[0..5]), [0, 0, 0, 0, 0]);
        let mut shuffled = contacts.clone();
        shuffled.swap(1, 2);
        assert_eq!(starts(&shuffled, &[0..5]), [0, 1, 2, 3, 3]);
        let sevens: Vec<Vec<Option<u32>>> = (0..5).map(|k| vec![Some(7 * k)]).collect();
        assert_eq!(starts(&sevens, &[0..5]), [0, 1, 2, 3, 4]);
        let threes: Vec<Vec<Option<u32>>> = (0..3).map(|k| vec![Some(6 * k), Some(6 * k + 1), Some(6 * k + 2)]).collect();
        assert_eq!(starts(&threes, &[0..3]), [NO, NO, NO], "three ports a member");
        let mut framed = springs.clone();
        framed[2][1] = None;
        assert_eq!(starts(&framed, &[0..5]), [0, 0, NO, 3, 3]);
        let backwards: Vec<Vec<Option<u32>>> = (0..3).map(|k| vec![Some(18 + 6 * k), Some(12 + 6 * k)]).collect();
        assert_eq!(starts(&backwards, &[0..3]), [NO, NO, NO], "a second port before the first");
        // One port, then two on one mass (step 0): not one run.
        let mixed = vec![vec![Some(30)], vec![Some(36), Some(36)], vec![Some(42), Some(42)]];
        assert_eq!(starts(&mixed, &[0..3]), [0, 1, 1]);
    }

    /// Impedances in the reverse order of their admittances: the first block would need
    /// them all, so the stage runs phase by phase; and so does a network of one block.
    #[test]
    fn a_network_whose_order_has_no_blocks_runs_phase_by_phase() {
        let n = 20_000;
        let attach: Vec<Slot> = (0..n).map(|i| port(n - 1 - i)).collect();
        let imp_slots: Vec<usize> = (0..=n).collect();
        let small: Vec<Slot> = (0..100).map(port).collect();
        let forward: Vec<Slot> = (0..n).map(port).collect();
        for back in [false, true] {
            assert!(stage_blocks(&attach, &imp_slots, &[0..n], n, back).is_empty());
            assert!(stage_blocks(&small, &(0..=100).collect::<Vec<_>>(), &[0..100], 100, back).is_empty());
            let plan = stage_blocks(&forward, &imp_slots, &[0..n], n, back);
            assert_eq!(plan.len(), n.div_ceil(STAGE_BLOCK));
            assert!(sound(&plan, &forward, &imp_slots, n));
        }
    }
}
