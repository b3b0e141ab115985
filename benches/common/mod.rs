//! What the bench binaries share. Include with `mod common;`.

use std::time::Instant;

/// Best of `reps` timings of `steps` calls of `f`, in seconds per call.
pub fn time_per_call(reps: usize, steps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..steps {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / steps as f64);
    }
    best
}
