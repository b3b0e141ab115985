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

/// A field of /proc/self/status in KiB (`"VmRSS:"`, `"VmHWM:"`), NaN where there is none.
pub fn status_kib(key: &str) -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}
