//! Cutting the parallel phases at equal work rather than equal numbers of components. In
//! the first steps of a parallel run each phase times its chunks; after [`TIMED_STEPS`],
//! the running sum of the components' work is kept, and `split_run` cuts a phase where
//! that sum is halved ([`Splits::by_work`](crate::parallel::Splits)). A rigid box on its
//! contacts and a six-joint geared robot differ in cost a hundredfold, so two halves of
//! equal count can hold very different work. Where a phase is cut never changes a result.

use crate::parallel::Work;
use std::ops::Range;
use std::time::Instant;

/// Steps whose chunks are timed; each component's work is the least time seen, so that a
/// chunk slowed once (a cold cache, the first step's page faults, a preempted thread) does
/// not count.
pub(super) const TIMED_STEPS: u64 = 3;

/// The least share of a phase's work that halving it by count must leave on either side
/// for the phase to stay cut by count (see [`even`]).
const EVEN: f64 = 0.45;

/// The measured work of the impedances and of the admittances.
#[derive(Debug, Default)]
pub(crate) struct Balance {
    /// Steps timed so far.
    timed: u64,
    /// Whether the buffers are made (the phases run in parallel).
    prepared: bool,
    /// While timing: the least time per member seen, in 1/16 ns, per component.
    imp_cost: Vec<u32>,
    adm_cost: Vec<u32>,
    /// Once timed: the work of the components before each (one more entry than
    /// components); empty before, and then phases are cut by count.
    imp_work: Vec<u64>,
    adm_work: Vec<u64>,
    /// Once timed: a component's mean work (0 before).
    imp_mean: u64,
    adm_mean: u64,
}

impl Balance {
    /// Make the buffers for `imps` impedances and `adms` admittances (once, before the
    /// first parallel step, so that no step allocates).
    pub(super) fn prepare(&mut self, imps: usize, adms: usize) {
        if !self.prepared {
            self.prepared = true;
            self.imp_cost = vec![u32::MAX; imps];
            self.adm_cost = vec![u32::MAX; adms];
            self.imp_work = Vec::with_capacity(imps + 1);
            self.adm_work = Vec::with_capacity(adms + 1);
        }
    }

    /// Whether this step's chunks are timed.
    pub(super) fn timing(&self) -> bool {
        self.prepared && self.timed < TIMED_STEPS
    }

    /// The impedances' costs to time into (empty when not `timing`) and their work.
    pub(super) fn impedances(&mut self, timing: bool) -> (&mut [u32], Work<'_>) {
        let work = Work { before: &self.imp_work, mean: self.imp_mean };
        (if timing { &mut self.imp_cost } else { &mut [] }, work)
    }

    /// The admittances' costs to time into (empty when not `timing`) and their work.
    pub(super) fn admittances(&mut self, timing: bool) -> (&mut [u32], Work<'_>) {
        let work = Work { before: &self.adm_work, mean: self.adm_mean };
        (if timing { &mut self.adm_cost } else { &mut [] }, work)
    }

    /// A timed step is over: after the last, the running sums replace the costs.
    pub(super) fn step_timed(&mut self) {
        self.timed += 1;
        if self.timed == TIMED_STEPS {
            running_sum(&self.imp_cost, &mut self.imp_work);
            running_sum(&self.adm_cost, &mut self.adm_work);
            for (work, mean) in [(&mut self.imp_work, &mut self.imp_mean), (&mut self.adm_work, &mut self.adm_mean)] {
                if let (Some(&total), n) = (work.last(), work.len().saturating_sub(1)) {
                    *mean = (total / n.max(1) as u64).max(1);
                }
                if even(work) {
                    work.clear();
                }
            }
            self.imp_cost = Vec::new();
            self.adm_cost = Vec::new();
        }
    }
}

/// Whether halving by count leaves at least [`EVEN`] of the work `work` on either side:
/// then phases keep their cuts by count. (On chain-N, where every part does the same work,
/// cuts at measured work stepped 2 % slower on 2 threads: the measured costs vary by a few
/// per cent, and a cut that moves between the phases moves the components at the border,
/// and their data, between the cores' caches.)
fn even(work: &[u64]) -> bool {
    // Fewer than two components are never cut.
    let (Some(&total), true) = (work.last(), work.len() > 2) else { return true };
    let half = work[(work.len() - 1) / 2] as f64;
    half >= EVEN * total as f64 && half <= (1.0 - EVEN) * total as f64
}

/// Into `sum` (empty, with room for one more than `cost`): the work before each
/// component; left empty if a component was never timed.
fn running_sum(cost: &[u32], sum: &mut Vec<u64>) {
    if cost.contains(&u32::MAX) {
        return;
    }
    let mut acc = 0u64;
    sum.push(0);
    for &c in cost {
        // At least 1: a component that took no measurable time still counts.
        acc += u64::from(c.max(1));
        sum.push(acc);
    }
}

/// The chunk clock of one part of a phase (components from `first` on), running only in a
/// timed step.
pub(super) struct Clock {
    first: usize,
    since: Option<Instant>,
}

impl Clock {
    pub(super) fn start(timing: bool, first: usize) -> Clock {
        Clock { first, since: timing.then(Instant::now) }
    }

    /// The chunk of components `members` is done: its time, per member, into `cost` (the
    /// part's costs, from `first`).
    pub(super) fn chunk(&mut self, cost: &mut [u32], members: Range<usize>) {
        if let Some(t) = self.since {
            self.since = Some(record(&mut cost[members.start - self.first..members.end - self.first], t));
        }
    }
}

/// Record the time since `since` as the cost of the chunk whose members' costs are `cost`
/// (each keeps the least per-member time seen); returns now, the next chunk's start.
fn record(cost: &mut [u32], since: Instant) -> Instant {
    let now = Instant::now();
    if !cost.is_empty() {
        let per = (now - since).as_nanos() * 16 / cost.len() as u128;
        let per = u32::try_from(per).unwrap_or(u32::MAX - 1);
        for c in cost {
            *c = (*c).min(per);
        }
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_sum_needs_every_component_timed() {
        let mut sum = Vec::new();
        running_sum(&[3, 0, 5], &mut sum);
        assert_eq!(sum, [0, 3, 4, 9]);
        let mut sum = Vec::new();
        running_sum(&[3, u32::MAX], &mut sum);
        assert!(sum.is_empty());
    }

    #[test]
    fn only_uneven_work_changes_the_cuts() {
        assert!(even(&[0, 10, 20, 30, 40]) && even(&[0, 9, 18, 29, 40]) && even(&[]));
        assert!(!even(&[0, 1, 2, 3, 40]) && !even(&[0, 30, 35, 38, 40]));
    }

    #[test]
    fn costs_are_timed_for_the_first_steps_only() {
        let mut b = Balance::default();
        assert!(!b.timing());
        b.prepare(2, 1);
        for _ in 0..TIMED_STEPS {
            assert!(b.timing());
            let t = record(b.impedances(true).0, Instant::now());
            record(b.admittances(true).0, t);
            b.step_timed();
        }
        assert!(!b.timing());
        // Members of one chunk share its time: even work, cut by count.
        assert!(b.imp_work.is_empty() && b.adm_work.is_empty());
        assert!(b.imp_cost.is_empty() && b.adm_cost.is_empty());
    }
}
