//! Bounds on what a system file may ask for, each with its reason: sizes that would exhaust
//! memory, thread counts that would stall the machine, steps that do not fit the run.

use crate::error::{Error, Result};
use crate::signal::open_regular;
use std::io::Read;
use std::path::Path;

/// Largest system file read, in bytes (256 MiB; `examples/chain_10k.json`, 10⁴ components,
/// is 3.5 MB).
pub const MAX_SYSTEM_BYTES: u64 = 256 << 20;

/// Longest component name or output label accepted, in characters.
pub const MAX_NAME_LEN: usize = 256;

/// The most iterations of an algebraic loop per step (`solver.loop.max_iterations`,
/// `master.loop.max_iterations`): each is an exchange with every block of the loop, and a
/// loop that has not converged by then will not.
pub const MAX_LOOP_ITERATIONS: usize = 100_000;

/// Worker threads accepted per available core (`--threads`, `solver.threads`): more than
/// this only adds switching, and a huge count would spawn threads until the machine stalls.
pub const THREADS_PER_CORE: usize = 4;

/// The most worker threads accepted on this machine: [`THREADS_PER_CORE`] × its cores
/// (at least 4).
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    (THREADS_PER_CORE * cores).max(4)
}

/// Check a thread count from `source` (`--threads`, `solver.threads`).
pub fn check_threads(n: usize, source: &str) -> Result<usize> {
    let max = max_threads();
    if n == 0 {
        return Err(Error::invalid(source, "must be at least 1"));
    }
    if n > max {
        return Err(Error::invalid(
            source,
            format!("{n} threads asked; at most {max} ({THREADS_PER_CORE} per core on this machine)"),
        ));
    }
    Ok(n)
}

/// Check a component name or label at `path`.
pub fn check_name(name: &str, path: &str) -> Result<()> {
    let n = name.chars().count();
    if n > MAX_NAME_LEN {
        return Err(Error::invalid(
            path,
            format!("the name is {n} characters long; at most {MAX_NAME_LEN} are accepted"),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid(path, "a name may not contain control characters (newlines, tabs, ...)"));
    }
    Ok(())
}

/// Read a system file: a regular file of at most [`MAX_SYSTEM_BYTES`].
pub fn read_system_file(path: &Path) -> std::io::Result<String> {
    let f = open_regular(path, MAX_SYSTEM_BYTES).map_err(std::io::Error::other)?;
    // Sized from the file (checked to be at most the cap): read in place, not grown by
    // doubling and copied (chain-100k is 36 MB).
    let len = f.metadata().map(|m| m.len().min(MAX_SYSTEM_BYTES)).unwrap_or(0);
    let mut text = String::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    f.take(MAX_SYSTEM_BYTES).read_to_string(&mut text)?;
    Ok(text)
}

/// A component's own step key (`communication_step` of an FMU, its value if a number) may not exceed the stop
/// time: a single step past the end of the run would be taken whole.
pub fn check_step_keys(communication_step: Option<f64>, path: &str, stop_time: f64) -> Result<()> {
    if let Some(h) = communication_step {
        if h > stop_time {
            return Err(Error::invalid(
                format!("{path}.communication_step"),
                format!("{h} s is longer than the stop time {stop_time} s"),
            ));
        }
    }
    Ok(())
}

/// Most steps one run may take: beyond 2⁴⁰ (about 10¹²) the step counter and the times
/// kT stop being meaningful and the run would not end in any useful time.
pub const MAX_STEPS: f64 = (1u64 << 40) as f64;

/// Check that stop_time / step is at most `MAX_STEPS`.
pub fn check_step_count(step: f64, stop_time: f64) -> Result<()> {
    let n = stop_time / step;
    if n > MAX_STEPS {
        return Err(Error::invalid(
            "solver.stop_time",
            format!("{stop_time} s at a step of {step} s is {n:e} steps; at most {MAX_STEPS:e} are accepted"),
        ));
    }
    Ok(())
}
