//! Safe, allocation-free parallel loops over components whose data lie in contiguous,
//! variable-length slices of shared buffers (states, port slots).
//!
//! The component range is split recursively in halves with `split_at_mut` and
//! `rayon::join` until a part holds at most `grain` components, which then run in
//! order. No work is shared between components, so results do not depend on the
//! number of threads.

use std::ops::Range;

/// Three buffers, each cut into one slice per component by absolute offsets
/// (`offs.k[i]..offs.k[i + 1]` belongs to component i).
pub(crate) struct Bufs<'a, A, B, C> {
    pub a: &'a mut [A],
    pub b: &'a mut [B],
    pub c: &'a mut [C],
}

/// Offsets that go with [`Bufs`]; each has one more entry than there are components.
#[derive(Clone, Copy)]
pub(crate) struct Offs<'a> {
    pub a: &'a [usize],
    pub b: &'a [usize],
    pub c: &'a [usize],
}

/// Run `leaf(range, bufs)` over parts of `range` no larger than `grain`, in parallel
/// when `parallel` is set. In each call the buffers start at component `range.start`.
/// The error of the lowest-indexed failing part is returned.
pub(crate) fn split_run<A, B, C, E, F>(
    range: Range<usize>,
    bufs: Bufs<'_, A, B, C>,
    offs: Offs<'_>,
    grain: usize,
    parallel: bool,
    leaf: &F,
) -> Result<(), E>
where
    A: Send,
    B: Send,
    C: Send,
    E: Send,
    F: Fn(Range<usize>, Bufs<'_, A, B, C>) -> Result<(), E> + Sync,
{
    if !parallel || range.len() <= grain.max(1) {
        return leaf(range, bufs);
    }
    let mid = range.start + range.len() / 2;
    let (a1, a2) = bufs.a.split_at_mut(offs.a[mid] - offs.a[range.start]);
    let (b1, b2) = bufs.b.split_at_mut(offs.b[mid] - offs.b[range.start]);
    let (c1, c2) = bufs.c.split_at_mut(offs.c[mid] - offs.c[range.start]);
    let (r1, r2) = rayon::join(
        || split_run(range.start..mid, Bufs { a: a1, b: b1, c: c1 }, offs, grain, parallel, leaf),
        || split_run(mid..range.end, Bufs { a: a2, b: b2, c: c2 }, offs, grain, parallel, leaf),
    );
    r1.and(r2)
}

/// `dst[i] = f(i, dst[i])` over a flat vector, in parallel chunks when `parallel`.
pub(crate) fn for_each_flat(dst: &mut [f64], parallel: bool, f: impl Fn(usize, f64) -> f64 + Sync + Send) {
    const CHUNK: usize = 8192;
    if !parallel || dst.len() <= CHUNK {
        for (i, v) in dst.iter_mut().enumerate() {
            *v = f(i, *v);
        }
    } else {
        use rayon::prelude::*;
        dst.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
            let base = c * CHUNK;
            for (i, v) in chunk.iter_mut().enumerate() {
                *v = f(base + i, *v);
            }
        });
    }
}
