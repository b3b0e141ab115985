//! Direct feedthrough of a system's outputs: which of its inputs (top-level `"inputs"`) an
//! output's value at a communication point depends on at the same instant, for the
//! `dependencies` of an exported FMU's ModelStructure (an FMI master orders its calls, and
//! finds algebraic loops, from them).
//!
//! An output row is the probe (20) at the current state with the inputs as now held:
//! - a state (`comp.state[i]`) depends on no input;
//! - an impedance's signal depends on what its own time functions read;
//! - an admittance's signal of its state alone (a position, a velocity:
//!   [`crate::SignalInfo::state`]) on no input; its other signals on what its own time
//!   functions read and on the forces of the impedances attached to its ports (Φ), so on
//!   what they read;
//! - a time function that reads another component's signal reads what that component
//!   depends on (transitively); one that reads a signal block's output reads no input (the
//!   output is held from the step's beginning); one that reads a name that is neither an
//!   input nor a component's signal may read any input;
//! - a signal block's output, input or observable: no input (held from the exchange at the
//!   step's beginning; a Model Exchange block's outputs are an admittance's signals, above).

use super::signals::Source;
use super::RunPlan;
use crate::stepper::Simulator;
use std::collections::{BTreeSet, HashMap};

/// What a component's time functions read, as far as inputs go.
#[derive(Clone, Debug, Default, PartialEq)]
struct Reads {
    inputs: BTreeSet<usize>,
    /// Some input through a path not analysed (a signal block, an unknown name).
    any: bool,
}

impl Reads {
    fn merge(&mut self, other: &Reads) -> bool {
        let before = (self.inputs.len(), self.any);
        self.inputs.extend(other.inputs.iter().copied());
        self.any |= other.any;
        before != (self.inputs.len(), self.any)
    }
}

/// For each output column of `plan`, the indices into `inputs` of the system inputs it
/// depends on at the same instant (`Some(vec![])`: none), or `None` where that is not
/// known (treated as every input). `wires`: (signal read, JSON path of the time function
/// that reads it) of every time function of the system (`System::wires`).
pub fn input_dependencies(
    sim: &Simulator,
    plan: &RunPlan,
    wires: &[(String, String)],
    inputs: &[String],
) -> Vec<Option<Vec<usize>>> {
    let s = sim.schedule();
    let blocks: BTreeSet<&str> = s.block_names().iter().collect();
    let mut reads: HashMap<&str, Reads> = HashMap::new();
    let mut edges: Vec<(&str, &str)> = Vec::new();
    for (name, path) in wires {
        let Some(comp) = path.strip_prefix("components.").and_then(|p| p.split(['.', '[']).next()) else {
            continue;
        };
        let r = reads.entry(comp).or_default();
        if let Some(k) = inputs.iter().position(|i| i == name) {
            r.inputs.insert(k);
        } else if let Some((other, _)) = name.split_once('.') {
            // A signal block's output is held from the step's beginning (no input reaches
            // it at the instant); another component's signal reads what that one reads.
            if !blocks.contains(other) {
                edges.push((comp, other));
            }
        } else if name != "t" {
            r.any = true;
        }
    }
    // What a component reads through the signals of others, to a fixed point.
    let mut changed = true;
    while changed {
        changed = false;
        for &(comp, other) in &edges {
            let from = reads.get(other).cloned().unwrap_or_default();
            changed |= reads.entry(comp).or_default().merge(&from);
        }
    }
    let of = |name: &str, acc: &mut Reads| {
        if let Some(r) = reads.get(name) {
            acc.merge(r);
        }
    };
    plan.columns
        .iter()
        .map(|(_, r)| {
            let mut acc = Reads::default();
            match r.source {
                Source::State { .. } => {}
                Source::Imp { i, .. } => of(&s.impedance_names()[i], &mut acc),
                // A signal of the admittance's state alone (a position, a velocity) depends
                // on no input at the same instant.
                Source::Adm { .. } if sim.signal_info(r).is_some_and(|x| x.state) => {}
                Source::Adm { i, .. } => {
                    of(&s.admittance_names()[i], &mut acc);
                    for imp in sim.probe_targets(std::iter::once(r)).impedances() {
                        of(&s.impedance_names()[imp], &mut acc);
                    }
                }
                // A signal block's output, input or observable is what its last exchange at
                // the beginning of a step left (held over the step): the probe at a
                // communication point reads it without exchanging again, so an input set
                // there does not reach it until the next step.
                Source::Block { .. } | Source::BlockInput { .. } | Source::BlockVar { .. } => {}
            }
            (!acc.any).then(|| acc.inputs.into_iter().collect())
        })
        .collect()
}
