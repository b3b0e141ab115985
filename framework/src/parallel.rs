//! Safe, allocation-free parallel loops over components whose data lie in contiguous,
//! variable-length slices of shared buffers (states, port slots).
//!
//! The component range is split recursively in halves with `split_at_mut` and
//! `rayon::join` (see [`Splits`] for how deep), and each part runs in order. No work is
//! shared between components, so results do not depend on the number of threads.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Mutable buffers of a range of components that can be cut in two at a component
/// boundary, e.g. a [`Cut`] or a tuple of them.
pub(crate) trait Parts: Sized + Send {
    /// Cut at component `mid`; the buffers start at component `start`.
    fn split(self, start: usize, mid: usize) -> (Self, Self);
}

/// A buffer cut into one slice per component by absolute offsets: `offs[i]..offs[i + 1]`
/// belongs to component i (`buf` starts at the first component of its range).
pub(crate) struct Cut<'a, T> {
    pub buf: &'a mut [T],
    offs: &'a [usize],
}

impl<'a, T> Cut<'a, T> {
    pub(crate) fn new(buf: &'a mut [T], offs: &'a [usize]) -> Self {
        Cut { buf, offs }
    }
}

impl<T: Send> Parts for Cut<'_, T> {
    fn split(self, start: usize, mid: usize) -> (Self, Self) {
        let (l, r) = self.buf.split_at_mut(self.offs[mid] - self.offs[start]);
        (Cut { buf: l, offs: self.offs }, Cut { buf: r, offs: self.offs })
    }
}

/// A buffer of one element per component (an empty one stays empty when cut).
pub(crate) struct Each<'a, T>(pub &'a mut [T]);

impl<T: Send> Parts for Each<'_, T> {
    fn split(self, start: usize, mid: usize) -> (Self, Self) {
        let at = (mid - start).min(self.0.len());
        let (l, r) = self.0.split_at_mut(at);
        (Each(l), Each(r))
    }
}

macro_rules! tuple_parts {
    ($($t:ident $v:ident $i:tt),+) => {
        impl<$($t: Parts),+> Parts for ($($t,)+) {
            fn split(self, start: usize, mid: usize) -> (Self, Self) {
                $(let $v = self.$i.split(start, mid);)+
                (($($v.0,)+), ($($v.1,)+))
            }
        }
    };
}
tuple_parts!(A a 0, B b 1);
tuple_parts!(A a 0, B b 1, C c 2);
tuple_parts!(A a 0, B b 1, C c 2, D d 3);
tuple_parts!(A a 0, B b 1, C c 2, D d 3, E e 4);

/// How far [`split_run`] may still cut a range; no part is cut below `min` components.
///
/// - Where the work is even (cut by count): one part per thread, in halves. Every part
///   another thread takes moves its components' data to that core's caches, and more parts
///   mean more joins: on chain-10k, 2 threads, this was 1 % faster (minimum step, 6 of 7
///   quiet runs) than rayon's adaptive rule below, and 2–6 % faster in all 6 runs while the
///   VM's two cores sat on different L3 caches of the host (where a cache line takes
///   340–380 ns there and back, against 60–90 ns on one).
/// - Where it is uneven (cut at measured work): rayon's adaptive rule (its `Splitter`): in
///   halves, `threads` times deep, and a half that another thread takes (`migrated`) is cut
///   `threads` times again, so that work is shared finely only where a thread ran out of
///   it. multibody-10k's phases are uneven and vary from step to step; one part per thread
///   was 1–4 % slower there (median). Cut into a fixed 4 parts per thread instead,
///   multibody-10k stepped about 3 % slower on 2 threads.
///
/// A range is cut at its middle component, or, given the running sum of the components'
/// work (`by_work`), where that sum is halved: equal work on either side. With measured
/// work, the top cut also leaves [`LEAD`] more to the part this thread keeps than to the
/// part another thread must steal, which starts that much later.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Splits<'w> {
    left: usize,
    threads: usize,
    min: usize,
    work: Work<'w>,
    /// The work this thread keeps beyond half (the top cut only).
    lead: u64,
}

/// The measured work of a phase's components (stepper/balance.rs), in 1/16 ns.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Work<'w> {
    /// The work before each component (one more entry than components); empty when it is
    /// even enough that the phase is cut by count.
    pub before: &'w [u64],
    /// A component's mean work (0: not measured).
    pub mean: u64,
}

/// How much later a thread starts on a part it steals than the thread that offered it goes
/// on with its own, in 1/16 ns: 1 µs. In an [`awake`] loop the other thread looks for parts
/// continuously; on chain-10k, 2-thread steps with a lead of 0.75–1 µs were 1 % shorter than
/// with 2 µs (minimum and 10th percentile of 40 × 50 steps, leads alternated in one process,
/// in 4 of 4 quiet runs). With rayon's own idle loop (a `yield_now` of about 0.5 µs between
/// looks) 1–3 µs had been best, 3–5 µs a step shorter than none.
const LEAD: u64 = 16_000;

impl<'w> Splits<'w> {
    /// A whole range: cut for the current pool's threads when `parallel`, else not at all.
    pub(crate) fn new(parallel: bool, min: usize) -> Splits<'static> {
        let threads = if parallel { rayon::current_num_threads() } else { 0 };
        Splits { left: threads, threads, min: min.max(1), work: Work::default(), lead: 0 }
    }

    /// Cut at equal measured `work` (not yet measured: by count), the top cut with [`LEAD`].
    pub(crate) fn by_work(self, work: Work<'_>) -> Splits<'_> {
        let lead = if work.mean > 0 && self.threads > 1 { LEAD } else { 0 };
        Splits { left: self.left, threads: self.threads, min: self.min, work, lead }
    }

    /// Whether a part is cut finer than one per thread: where the work was found uneven.
    fn fine(&self) -> bool {
        !self.work.before.is_empty()
    }

    /// How many threads' parts the two halves of a cut get: `left / 2` each by rayon's
    /// adaptive rule; one part per thread otherwise, so with an odd count the second half
    /// gets one more (and is cut by count in that proportion).
    fn shares(&self) -> (usize, usize) {
        let first = self.left / 2;
        (first, if self.fine() { first } else { self.left - first })
    }

    /// Where to cut `range` (of at least 2·min components): at least `min` on each side.
    fn cut(&self, range: &Range<usize>) -> usize {
        let (lo, hi) = (range.start + self.min, range.end - self.min);
        match self.work.before.get(range.start..=range.end) {
            Some(w) if w.len() == range.len() + 1 => {
                let half = w[0] + (w[range.len()] - w[0] + self.lead) / 2;
                // The first cut with at least half before it, or the one before if nearer.
                let i = w.partition_point(|&c| c < half).min(range.len());
                let i = if i > 0 && half - w[i - 1] < w[i].saturating_sub(half) { i - 1 } else { i };
                (range.start + i).clamp(lo, hi)
            }
            _ => {
                let lead = (self.lead / 2).checked_div(self.work.mean).unwrap_or(0);
                let (a, b) = self.shares();
                let first = if self.fine() || a + b == 0 { range.len() / 2 } else { range.len() * a / (a + b) };
                (range.start + first + lead as usize).clamp(lo, hi)
            }
        }
    }
}

/// Run `leaf(range, parts)` over parts of `range` cut as `splits` allows (in parallel when
/// it cuts at all). In each call the buffers start at component `range.start`. The error
/// of the lowest-indexed failing part is returned, else whether every part returned true.
pub(crate) fn split_run<P, E, F>(range: Range<usize>, parts: P, splits: Splits<'_>, leaf: &F) -> Result<bool, E>
where
    P: Parts,
    E: Send,
    F: Fn(Range<usize>, P) -> Result<bool, E> + Sync,
{
    if splits.left == 0 || (splits.left == 1 && !splits.fine()) || range.len() < 2 * splits.min {
        return leaf(range, parts);
    }
    let mid = splits.cut(&range);
    let (p1, p2) = parts.split(range.start, mid);
    let (l1, l2) = splits.shares();
    let (first, rest) = (Splits { left: l1, lead: 0, ..splits }, Splits { left: l2, lead: 0, ..splits });
    let second = Second::default();
    let (r1, r2) = rayon::join_context(
        |_| {
            let r = split_run(range.start..mid, p1, first, leaf);
            second.wait();
            r
        },
        |ctx| {
            let _running = second.start(ctx.migrated());
            let taken = Splits { left: if splits.fine() { splits.threads.max(l2) } else { l2 }, ..rest };
            split_run(mid..range.end, p2, if ctx.migrated() { taken } else { rest }, leaf)
        },
    );
    Ok(r1? & r2?)
}

/// The second half of a [`split_run`] cut, as the thread that runs the first half sees it:
/// 0 not started on another thread, 1 running there, 2 ended.
#[derive(Default)]
struct Second(AtomicU8);

impl Second {
    /// Called by the thread that runs the second half; it ends (even by a panic) when the
    /// guard is dropped.
    fn start(&self, migrated: bool) -> Ended<'_> {
        if migrated {
            self.0.store(1, Ordering::Release);
        }
        Ended(&self.0)
    }

    /// In an [`awake`] loop, wait for the second half that another thread runs awake: take
    /// parts that are offered ([`rayon::yield_now`]: the pieces of that half, cut again) and
    /// spin, where rayon's join would wait the same way but fall asleep after about 16 µs
    /// and need a futex wake when the half ends. A half not started elsewhere is left to the
    /// join, which runs it here.
    fn wait(&self) {
        if !AWAKE.get() {
            return;
        }
        let mut idle = Idle(0);
        while self.0.load(Ordering::Acquire) == 1 {
            idle.poll();
        }
    }
}

/// Marks the second half of a cut ended when dropped.
struct Ended<'a>(&'a AtomicU8);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.store(2, Ordering::Release);
    }
}

/// `a` and `b` on two threads ([`rayon::join`]) when the pool has more than one; otherwise
/// one after the other on this thread, whose memory allocator holds what the load freed (a
/// pool of one would run them on its own thread, with fresh memory to fault in).
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    if rayon::current_num_threads() > 1 {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// Run `f` (a loop of steps) while the pool's other threads wait for its parallel phases
/// awake: each runs a job that takes the phases' parts as soon as they are offered
/// ([`rayon::yield_now`]) and spins in between ([`Idle`]), until `f` returns. Left to themselves,
/// rayon's idle threads sleep about 16 µs after their last part, and a sleeping thread
/// needs a futex wake of 5 to 14 µs before it starts the next phase's part; on a busy host
/// that happens at most joins. Only when `active`, on a thread of a pool of more than one,
/// and not inside another `awake` (whose threads are awake already).
pub(crate) fn awake<R>(active: bool, f: impl FnOnce() -> R) -> R {
    let owner = rayon::current_thread_index();
    let others = rayon::current_num_threads().saturating_sub(1);
    if !active || owner.is_none() || others == 0 || AWAKE.get() {
        return f();
    }
    let done = AtomicBool::new(false);
    rayon::in_place_scope(|s| {
        for _ in 0..others {
            s.spawn(|_| wait_awake(&done));
        }
        // Ended when `f` returns or unwinds, so the scope's wait for the jobs ends too.
        let _end = End(&done);
        AWAKE.set(true);
        f()
    })
}

/// Ends an [`awake`]: its thread leaves it and the waiting jobs return.
struct End<'a>(&'a AtomicBool);

impl Drop for End<'_> {
    fn drop(&mut self) {
        AWAKE.set(false);
        self.0.store(true, Ordering::Release);
    }
}

thread_local! {
    /// This thread runs the loop of an [`awake`] or waits awake for one.
    static AWAKE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The job of [`awake`] on another thread: run the parts offered until `done`. A thread
/// that is itself in an `awake` (the owner, which takes back a job no other thread took
/// while it waits for a part, or a thread of another simulation's loop) returns at once,
/// so no thread waits for a loop below it on its own stack.
fn wait_awake(done: &AtomicBool) {
    if AWAKE.get() {
        return;
    }
    AWAKE.set(true);
    let mut idle = Idle(0);
    while !done.load(Ordering::Acquire) {
        idle.poll();
    }
    AWAKE.set(false);
}

/// Looks for a part to run ([`rayon::yield_now`]), spinning between looks; after [`SPINS`]
/// looks in a row that found none, it also lets the OS run other threads between looks
/// (`std::thread::yield_now`), in case more threads than cores are busy (several runs at once).
struct Idle(u32);

/// About 100 µs of looks: longer than the gap between two phases of a step.
const SPINS: u32 = 1024;

impl Idle {
    fn poll(&mut self) {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            self.0 = 0;
        } else if self.0 < SPINS {
            self.0 += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splits(min: usize) -> Splits<'static> {
        Splits { left: 2, threads: 2, min, work: Work::default(), lead: 0 }
    }

    fn work(before: &[u64]) -> Work<'_> {
        Work { before, mean: 0 }
    }

    #[test]
    fn a_range_is_cut_at_half_its_work_and_at_least_min_from_either_end() {
        // Components 0..10 of work 1 each, then 10..12 of work 9: 28 in all.
        let w: Vec<u64> = (0..=12).map(|i: u64| i.min(10) + 9 * i.saturating_sub(10)).collect();
        assert_eq!(splits(1).cut(&(0..12)), 6);
        assert_eq!(splits(1).by_work(work(&w)).cut(&(0..12)), 10);
        assert_eq!(splits(3).by_work(work(&w)).cut(&(0..12)), 9);
        assert_eq!(splits(1).by_work(work(&w)).cut(&(10..12)), 11);
        // Work that does not cover the range: by count.
        assert_eq!(splits(1).by_work(work(&w[..5])).cut(&(0..12)), 6);
        // The top cut leaves LEAD more to this thread: by count, in components of mean work.
        let even = Work { before: &[], mean: LEAD / 4 };
        assert_eq!(splits(1).by_work(even).cut(&(0..100)), 52);
        let mean = Work { before: &w, mean: 1 };
        assert_eq!(Splits { lead: 2, ..splits(1) }.by_work(mean).lead, LEAD);
        assert_eq!(Splits { lead: 9, ..splits(1) }.by_work(work(&w)).cut(&(0..12)), 10);
    }

    #[test]
    fn every_component_runs_once_whatever_the_cuts() {
        let work: Vec<u64> = (0..=1000u64).map(|i| i * i).collect();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut seen = vec![0u8; 1000];
        let run = pool.install(|| {
            let s = Splits::new(true, 8).by_work(Work { before: &work, mean: 1 });
            split_run(0..1000, Each(&mut seen), s, &|r: Range<usize>, each: Each<u8>| {
                assert_eq!(each.0.len(), r.len());
                each.0.iter_mut().for_each(|c| *c += 1);
                Ok::<_, ()>(r.len() >= 8)
            })
        });
        assert_eq!(run, Ok(true));
        assert!(seen.iter().all(|&c| c == 1));
    }

    #[test]
    fn even_work_runs_in_one_part_per_thread_and_uneven_work_finer() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let work: Vec<u64> = (0..=1000u64).map(|i| i * i).collect();
        let parts = |s: Splits<'_>| {
            let n = std::sync::atomic::AtomicUsize::new(0);
            let mut seen = vec![0u8; 1000];
            let run = pool.install(|| {
                split_run(0..1000, Each(&mut seen), s, &|_, _| {
                    n.fetch_add(1, Ordering::Relaxed);
                    Ok::<_, ()>(true)
                })
            });
            assert_eq!(run, Ok(true));
            n.into_inner()
        };
        let threads = pool.install(rayon::current_num_threads);
        assert_eq!(parts(Splits { threads, left: threads, ..splits(8) }), 2);
        let uneven = Splits { threads, left: threads, ..splits(8) }.by_work(Work { before: &work, mean: 1 });
        assert!(parts(uneven) >= 4);
        // Any number of threads: as many parts, the odd one cut in proportion.
        for threads in [3, 4, 5] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let n = std::sync::atomic::AtomicUsize::new(0);
            let mut seen = vec![0u8; 1000];
            let run = pool.install(|| {
                split_run(0..1000, Each(&mut seen), Splits::new(true, 8), &|r: Range<usize>, _| {
                    n.fetch_add(1, Ordering::Relaxed);
                    Ok::<_, ()>(r.len() == 1000 / threads || r.len() == 1000 / threads + 1)
                })
            });
            assert_eq!(run, Ok(true), "{threads} threads: parts of equal size");
            assert_eq!(n.into_inner(), threads);
        }
        assert_eq!(Splits { left: 3, threads: 3, ..splits(1) }.cut(&(0..99)), 33);
    }

    /// `f` on a thread of its own; fails if it has not ended within a minute (a deadlock).
    fn ends<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()));
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("ended within a minute")
    }

    /// `phases` parallel phases over 0..n; how many times each component ran.
    fn phases(n: usize, phases: usize) -> Vec<u32> {
        let mut seen = vec![0u32; n];
        for _ in 0..phases {
            let run = split_run(0..n, Each(&mut seen), Splits::new(true, 8), &|r: Range<usize>, each: Each<u32>| {
                assert_eq!(each.0.len(), r.len());
                for c in each.0.iter_mut() {
                    *c += 1;
                    // A little work, so that the threads wait for each other's parts.
                    (0..50).for_each(|i| _ = std::hint::black_box(i));
                }
                Ok::<_, ()>(true)
            });
            assert_eq!(run, Ok(true));
        }
        seen
    }

    #[test]
    fn awake_runs_every_part_once_and_returns_on_any_pool() {
        for threads in [1, 2, 3] {
            let seen = ends(move || {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| awake(true, || phases(1000, 50)))
            });
            assert!(seen.iter().all(|&c| c == 50), "{threads} threads");
        }
        // Outside a pool, and not active: `f` as it is.
        assert_eq!(awake(true, || 7), 7);
        assert_eq!(awake(false, || phases(100, 2)), vec![2; 100]);
    }

    #[test]
    fn two_awake_loops_at_once_on_one_pool_both_end() {
        for threads in [2, 3] {
            // Started again and again, so the two loops' jobs meet in many orders.
            let runs = ends(move || {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let two = || rayon::join(|| awake(true, || phases(3000, 5)), || awake(true, || phases(2000, 7)));
                (0..200).map(|_| pool.install(two)).collect::<Vec<_>>()
            });
            for (a, b) in runs {
                assert!(a.iter().all(|&c| c == 5) && b.iter().all(|&c| c == 7), "{threads} threads");
            }
        }
    }

    #[test]
    fn a_panic_in_a_part_of_an_awake_loop_reaches_the_caller() {
        // The last component fails once it runs on the thread that did not start the loop:
        // in the half that thread took, which the first thread waits for awake.
        let caught = ends(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let mut seen = vec![0u32; 1000];
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    let owner = rayon::current_thread_index();
                    awake(true, || {
                        // Until the other thread takes it (it panics), within a minute.
                        let start = std::time::Instant::now();
                        while start.elapsed().as_secs() < 50 {
                            let _ = split_run(0..1000, Each(&mut seen), Splits::new(true, 8), &|r: Range<usize>, _| {
                                for c in r {
                                    (0..50).for_each(|i| _ = std::hint::black_box(i));
                                    let other = rayon::current_thread_index() != owner;
                                    assert!(!(c == 999 && other), "a component failed");
                                }
                                Ok::<_, ()>(true)
                            });
                        }
                    })
                })
            }));
            (caught.is_err(), pool.install(|| awake(true, || phases(1000, 3))))
        });
        assert!(caught.0, "the other thread never took the last part");
        assert!(caught.1.iter().all(|&c| c == 3));
    }

    #[test]
    fn a_panic_in_an_awake_loop_reaches_the_caller() {
        let caught = ends(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                pool.install(|| {
                    awake(true, || -> Vec<u32> {
                        phases(1000, 20);
                        panic!("a component failed")
                    })
                })
            }));
            // The pool is free again afterwards.
            (caught.is_err(), pool.install(|| awake(true, || phases(1000, 3))))
        });
        assert!(caught.0);
        assert!(caught.1.iter().all(|&c| c == 3));
    }
}
