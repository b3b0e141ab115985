//! SIGINT and SIGTERM during `stiction run`: the run stops at the next step boundary, the
//! last whole row is flushed, temporary directories are removed as the run's values are
//! dropped, and the process exits 130 (SIGINT) or 143 (SIGTERM), saying where it stopped.
//! A second signal of the same kind ends the process at once with the same code.
//!
//! The handlers only set flags (async-signal-safe), through `signal-hook`: a well-kept,
//! small crate that registers handlers without replacing others, with the "second signal
//! terminates" pattern built in; `ctrlc` cannot tell SIGINT from SIGTERM.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

struct Flags {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

static FLAGS: OnceLock<Option<Flags>> = OnceLock::new();

/// Install the handlers (once; later calls do nothing). If they cannot be installed the
/// signals keep their default action.
pub fn install() {
    FLAGS.get_or_init(|| {
        use signal_hook::consts::{SIGINT, SIGTERM};
        use signal_hook::flag;
        let int = Arc::new(AtomicBool::new(false));
        let term = Arc::new(AtomicBool::new(false));
        // Registered first, so they run before the flag is set: a second signal exits.
        flag::register_conditional_shutdown(SIGINT, super::exit::SIGINT as i32, int.clone()).ok()?;
        flag::register_conditional_shutdown(SIGTERM, super::exit::SIGTERM as i32, term.clone()).ok()?;
        flag::register(SIGINT, int.clone()).ok()?;
        flag::register(SIGTERM, term.clone()).ok()?;
        Some(Flags { int, term })
    });
}

/// The signal received, if any: ("SIGINT", 130) or ("SIGTERM", 143).
pub fn received() -> Option<(&'static str, u8)> {
    let f = FLAGS.get()?.as_ref()?;
    if f.term.load(Ordering::Relaxed) {
        Some(("SIGTERM", super::exit::SIGTERM))
    } else if f.int.load(Ordering::Relaxed) {
        Some(("SIGINT", super::exit::SIGINT))
    } else {
        None
    }
}

/// Whether the run should stop now (checked once per step).
pub fn requested() -> bool {
    received().is_some()
}
