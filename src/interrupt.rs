//! SIGINT and SIGTERM, in every command and every phase (issue 33): the handlers raise the
//! framework's stop request ([`stiction_framework::cancel`]), which the loader polls between
//! components (and FMUs), `check`'s analyses between components and in their searches,
//! sweeps between runs and steps, and a run at every step boundary. The command then ends
//! where it is: a run flushes its last whole row, temporary directories are removed as the
//! values are dropped, and the process exits 130 (SIGINT) or 143 (SIGTERM), saying in which
//! [`phase`] and, for a run, at which time it stopped.
//! A second signal of the same kind ends the process at once with the same code, after
//! removing every FMU extraction directory still alive
//! ([`stiction_fmi_schema::archive::remove_all`]): the run may be stuck inside an FMU's
//! call, or still loading, when the first signal asks it to stop at a step boundary.
//! When an FMU's code is loaded into the process, the first signal does the same by itself
//! after [`GRACE`] if the command has not ended by then: a call stuck inside the FMU's code
//! never returns to a poll point. The results are then written through row by row
//! (stiction_fmi_import::foreign_code_loaded), so the output holds whole rows when it ends.
//!
//! The handlers only set flags (async-signal-safe), through `signal-hook`: a well-kept,
//! small crate that registers handlers without replacing others; `ctrlc` cannot tell SIGINT
//! from SIGTERM. Removing directories is not async-signal-safe, so the second signal is
//! acted on by a watcher thread (signal-hook's `Signals` iterator, fed by a self-pipe).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The exit code of a command stopped by SIGINT: 128 + 2, as a shell reports a process the
/// signal ended (exit.rs lists it among the exit codes).
pub const SIGINT_EXIT: u8 = 130;
/// The exit code of a command stopped by SIGTERM: 128 + 15.
pub const SIGTERM_EXIT: u8 = 143;

/// How long a command has to end by itself after the first signal, where it cannot poll
/// often enough to be sure to (an FMU's code in the process, or a phase whose longest piece
/// of work — a JSON parse, a compile, an archive written — is not cut into polled pieces),
/// before it is ended as by a second signal: the whole stays within the second a signal may
/// take.
pub const GRACE: Duration = Duration::from_millis(600);

/// Phases that poll the stop request at every step or run and keep what they computed when
/// they stop (a run's rows, a sweep's table): not ended by force unless an FMU's code is in
/// the process.
const COOPERATIVE: [&str; 2] = ["running", "sweeping"];

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
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]).ok()?;
        flag::register(SIGINT, int.clone()).ok()?;
        flag::register(SIGTERM, term.clone()).ok()?;
        // After the flag of its kind, so that a poller that sees the request finds its kind.
        flag::register(SIGINT, stiction_framework::cancel::flag()).ok()?;
        flag::register(SIGTERM, stiction_framework::cancel::flag()).ok()?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let (mut ints, mut terms) = (0, 0);
                for sig in signals.forever() {
                    let (count, code) =
                        if sig == SIGINT { (&mut ints, SIGINT_EXIT) } else { (&mut terms, SIGTERM_EXIT) };
                    *count += 1;
                    let name = if sig == SIGINT { "SIGINT" } else { "SIGTERM" };
                    if *count >= 2 {
                        eprintln!("stiction: a second {name} while {}: ending now", current_phase());
                        end_now(code);
                    }
                    if *count == 1 {
                        let _ = std::thread::Builder::new().name("grace".into()).spawn(move || {
                            std::thread::sleep(GRACE);
                            let phase = current_phase();
                            let foreign = stiction_fmi_import::foreign_code_loaded();
                            if COOPERATIVE.contains(&phase) && !foreign {
                                return;
                            }
                            let inside = if foreign { " (inside an FMU's code?)" } else { "" };
                            let kept = if phase == "running" {
                                "the output holds the whole rows written so far"
                            } else {
                                "no partial file is left"
                            };
                            eprintln!(
                                "stiction: interrupted by {name} while {phase}, still {phase} {} s after the \
                                 signal{inside}: ending now; {kept}",
                                GRACE.as_secs_f64()
                            );
                            end_now(code);
                        });
                    }
                }
            })
            .ok()?;
        Some(Flags { int, term })
    });
}

/// End the process with `code` after removing the FMU extraction directories: `_exit`, so no
/// destructor or atexit handler runs while another thread may be inside an FMU's code.
fn end_now(code: u8) -> ! {
    stiction_fmi_schema::archive::remove_all();
    stiction_fmi_schema::write::remove_partials();
    signal_hook::low_level::exit(i32::from(code))
}

/// The signal received, if any: ("SIGINT", 130) or ("SIGTERM", 143).
pub fn received() -> Option<(&'static str, u8)> {
    let f = FLAGS.get()?.as_ref()?;
    if f.term.load(Ordering::Relaxed) {
        Some(("SIGTERM", SIGTERM_EXIT))
    } else if f.int.load(Ordering::Relaxed) {
        Some(("SIGINT", SIGINT_EXIT))
    } else {
        None
    }
}

/// Whether the run should stop now (checked once per step).
pub fn requested() -> bool {
    received().is_some()
}

/// What the command is doing, for the message of an interruption ("loading", "checking", …).
static PHASE: Mutex<&str> = Mutex::new("starting");

/// Enter phase `what` (named in the message if a signal stops the command in it).
pub fn phase(what: &'static str) {
    if let Ok(mut p) = PHASE.lock() {
        *p = what;
    }
}

/// The phase entered last.
pub fn current_phase() -> &'static str {
    PHASE.lock().map(|p| *p).unwrap_or("working")
}
