//! Safe, allocation-free parallel loops over components whose data lie in contiguous,
//! variable-length slices of shared buffers (states, port slots).
//!
//! The component range is split recursively in halves with `split_at_mut` and
//! `rayon::join` (see [`Splits`] for how deep), and each part runs in order. No work is
//! shared between components, so results do not depend on the number of threads.

use std::ops::Range;

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

/// How far [`split_run`] may still cut a range, by rayon's adaptive rule (its `Splitter`):
/// in halves, `threads` times deep, and a half that another thread takes (`migrated`) is
/// cut `threads` times again, so that work is shared finely only where a thread ran out of
/// it; no part is cut below `min` components. Cut into a fixed 4 parts per thread instead,
/// the multibody-10k benchmark stepped about 3 % slower on 2 threads (more, smaller parts
/// moved between the cores' caches), and chain-10k no faster.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Splits {
    left: usize,
    threads: usize,
    min: usize,
}

impl Splits {
    /// A whole range: cut for the current pool's threads when `parallel`, else not at all.
    pub(crate) fn new(parallel: bool, min: usize) -> Splits {
        let threads = if parallel { rayon::current_num_threads() } else { 0 };
        Splits { left: threads, threads, min: min.max(1) }
    }
}

/// Run `leaf(range, parts)` over parts of `range` cut as `splits` allows (in parallel when
/// it cuts at all). In each call the buffers start at component `range.start`. The error
/// of the lowest-indexed failing part is returned, else whether every part returned true.
pub(crate) fn split_run<P, E, F>(range: Range<usize>, parts: P, splits: Splits, leaf: &F) -> Result<bool, E>
where
    P: Parts,
    E: Send,
    F: Fn(Range<usize>, P) -> Result<bool, E> + Sync,
{
    if splits.left == 0 || range.len() < 2 * splits.min {
        return leaf(range, parts);
    }
    let mid = range.start + range.len() / 2;
    let (p1, p2) = parts.split(range.start, mid);
    let half = Splits { left: splits.left / 2, ..splits };
    let (r1, r2) = rayon::join_context(
        |_| split_run(range.start..mid, p1, half, leaf),
        |ctx| {
            let taken = Splits { left: splits.threads.max(half.left), ..splits };
            split_run(mid..range.end, p2, if ctx.migrated() { taken } else { half }, leaf)
        },
    );
    Ok(r1? & r2?)
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
