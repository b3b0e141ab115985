//! What the bench binaries share. Include with `#[allow(dead_code)] mod common;` (each uses some of it).

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

/// A list of numbers from the environment variable `name` ("10,100"), else `default`.
#[allow(dead_code)] // not every bench reads it
pub fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(name)
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

/// `stiction fmu export friction-mass --fmi 2 --param force=10` into `dir`.
#[allow(dead_code)] // not every bench exports
pub fn export_friction_mass(dir: &std::path::Path) -> std::path::PathBuf {
    let out = dir.join("StictionFrictionMass.fmu");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["fmu", "export", "friction-mass", "--fmi", "2", "--param", "force=10", "-o"])
        .arg(&out)
        .output()
        .expect("run stiction");
    assert!(o.status.success(), "export failed: {}", String::from_utf8_lossy(&o.stderr));
    out
}
