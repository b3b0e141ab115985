//! A process-wide request to stop long work (issue 33): the `stiction` binary raises it on
//! SIGINT or SIGTERM (its handler stores `true` into [`flag`], async-signal-safe), and the
//! work that can take long polls it where one more iteration is cheap: the loader between
//! components, `stiction check`'s analyses between components and in the stuck-state step
//! search, parameter studies between runs and steps. Work that notices it returns
//! [`Error::Interrupted`] (or, for analyses that return findings, what it found so far),
//! and the caller that raised it decides how to end.
//!
//! A library that never calls [`request`] never sees it raised. It is one flag for the
//! process, as a signal is: a caller that needs to stop one run among several passes its own
//! stop predicate to [`Simulator::run_until`](crate::stepper::Simulator).

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

static FLAG: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// The flag itself, for a signal handler that stores `true` into it
/// (`signal_hook::flag::register`).
pub fn flag() -> Arc<AtomicBool> {
    FLAG.clone()
}

/// Ask every poller to stop.
pub fn request() {
    FLAG.store(true, Ordering::Relaxed);
}

/// Withdraw the request (for a process that goes on after an interrupted piece of work).
pub fn clear() {
    FLAG.store(false, Ordering::Relaxed);
}

/// Whether a stop was requested (one relaxed load: cheap enough for any loop).
pub fn requested() -> bool {
    FLAG.load(Ordering::Relaxed)
}

/// `Err(Error::Interrupted)` once a stop was requested.
pub fn check() -> Result<()> {
    if requested() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
