//! How `stiction` ends: one exit code per kind of outcome ([`CODES`]: printed by `stiction
//! --help`, in docs/reference/cli.md and docs/reference/exit-codes.md, checked by tests/hardening.rs), and a panic
//! anywhere caught at the top as an internal error.

use std::process::ExitCode;
use stiction_framework::Error;

pub const SIMULATION: u8 = 1;
pub const INPUT: u8 = 2;
pub const INTERNAL: u8 = 3;
pub const OUTPUT: u8 = 4;
pub use crate::interrupt::SIGINT_EXIT as SIGINT;
/// 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe.
pub const CLOSED_STDOUT: u8 = 141;
pub use crate::interrupt::SIGTERM_EXIT as SIGTERM;

/// Every exit code and what it means.
pub const CODES: &[(u8, &str)] = &[
    (0, "success"),
    (SIMULATION, "simulation failure (the message names the time and the component)"),
    (INPUT, "bad input (file, JSON path, argument)"),
    (INTERNAL, "internal error (a panic: a defect of stiction, please report it)"),
    (OUTPUT, "the output could not be written (disk full, plot failed, ...)"),
    (SIGINT, "interrupted by SIGINT (Ctrl-C): the rows up to the last whole step are kept"),
    (CLOSED_STDOUT, "standard output was closed by its reader (`-o - | head`): ends quietly"),
    (SIGTERM, "interrupted by SIGTERM"),
];

/// The exit codes as the end of `stiction --help`.
pub fn help() -> String {
    let mut s = String::from("Exit codes:\n");
    for (code, meaning) in CODES {
        s.push_str(&format!("  {code:>3}  {meaning}\n"));
    }
    s
}

/// Why a command failed; each maps to one exit code.
pub enum Failure {
    Simulation(anyhow::Error),
    Input(anyhow::Error),
    /// Writing the CSV or the plot failed.
    Output(anyhow::Error),
    /// The reader of standard output went away: no message.
    ClosedStdout,
    /// Stopped by a signal (the message was printed where the run stopped): its exit code.
    Interrupted(u8),
    /// Work that stopped on the stop request ([`Error::Interrupted`]): the message (the
    /// signal and the phase) is printed by [`report`].
    Stopped,
}

/// True if `e` is (or wraps) an I/O error of the run's output.
fn output_io(e: &Error) -> Option<&std::io::Error> {
    match e {
        Error::Io { path, error } if path == "output" => Some(error),
        Error::InFile { inner, .. } => output_io(inner),
        _ => None,
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        if e.is_interrupted() {
            return Failure::Stopped;
        }
        match output_io(&e) {
            Some(io) if io.kind() == std::io::ErrorKind::BrokenPipe => Failure::ClosedStdout,
            Some(_) => Failure::Output(e.into()),
            None if e.is_simulation_failure() => Failure::Simulation(e.into()),
            None => Failure::Input(e.into()),
        }
    }
}

impl Failure {
    /// Add a line of context to the message (kinds without a message are unchanged).
    pub fn context(self, note: String) -> Failure {
        match self {
            Failure::Simulation(e) => Failure::Simulation(e.context(note)),
            Failure::Input(e) => Failure::Input(e.context(note)),
            Failure::Output(e) => Failure::Output(e.context(note)),
            other => other,
        }
    }
}

/// Print the message of a failure and give its exit code. After SIGINT/SIGTERM the code is
/// the signal's whatever the command returned (a failure not caused by the signal is still
/// printed), with a line naming the phase unless the command printed where it stopped.
pub fn report(result: Result<(), Failure>) -> ExitCode {
    if let Some((sig, code)) = crate::interrupt::received() {
        match result {
            Err(Failure::Interrupted(c)) => return ExitCode::from(c),
            Err(Failure::Simulation(e) | Failure::Input(e) | Failure::Output(e)) if !caused_by_stop(&e) => {
                eprintln!("error: {e:#}")
            }
            _ => {}
        }
        eprintln!("stiction: interrupted by {sig} while {}", crate::interrupt::current_phase());
        return ExitCode::from(code);
    }
    let (code, e) = match result {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Failure::Simulation(e)) => (SIMULATION, e),
        Err(Failure::Input(e)) => (INPUT, e),
        Err(Failure::Output(e)) => (OUTPUT, e),
        Err(Failure::ClosedStdout) => return ExitCode::from(CLOSED_STDOUT),
        Err(Failure::Interrupted(code)) => return ExitCode::from(code),
        // Not without a signal: a library call raised the request.
        Err(Failure::Stopped) => (INTERNAL, anyhow::anyhow!("interrupted without a signal")),
    };
    if is_broken_pipe(&e) {
        return ExitCode::from(CLOSED_STDOUT);
    }
    let text = format!("{e:#}");
    eprintln!("error: {text}");
    if code == INPUT {
        if let Some(h) = export_hint(&text) {
            eprintln!("hint: {h}");
        }
    }
    ExitCode::from(code)
}

/// Whether an error anywhere in the chain is the framework's [`Error::Interrupted`].
fn caused_by_stop(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<Error>().is_some_and(Error::is_interrupted))
}

/// Whether an error anywhere in the chain is a broken pipe (printing to a closed stdout).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// Run the command `f`, turning a panic into "internal error" with exit code 3 (the panic's
/// message and place are printed by the hook, once).
pub fn catch_panics(f: impl FnOnce() -> ExitCode) -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        if is_closed_stdout_panic(&msg) {
            return;
        }
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        eprintln!(
            "internal error: {msg}{at}\nThis is a defect of stiction: please report it with the input that caused it."
        );
    }));
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(payload) => {
            // FMU extraction directories the unwinding did not drop (none, normally).
            stiction_fmi_schema::archive::remove_all();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned());
            if msg.is_some_and(|m| is_closed_stdout_panic(&m)) {
                ExitCode::from(CLOSED_STDOUT)
            } else {
                ExitCode::from(INTERNAL)
            }
        }
    }
}

/// `println!` panics when standard output is a closed pipe (`stiction components | head`):
/// that is the reader going away, not a defect.
fn is_closed_stdout_panic(msg: &str) -> bool {
    msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe")
}

/// For a missing FMU of stiction's own models (the examples'), the command that makes it.
pub fn export_hint(message: &str) -> Option<String> {
    if !message.contains("No such file") {
        return None;
    }
    let models = [
        ("StictionFrictionMass.fmu", "friction-mass"),
        ("StictionFriction.fmu", "friction"),
        ("StictionGear.fmu", "gear"),
    ];
    let (file, model) = models.iter().find(|(f, _)| message.contains(f))?;
    // The path as the message shows it: "FMU file PATH: cannot open".
    let path = message
        .split_whitespace()
        .find(|w| w.trim_end_matches(':').ends_with(file))
        .map(|w| w.trim_end_matches(':').to_string())
        .unwrap_or_else(|| format!("target/fmu/{file}"));
    Some(format!("{file} is made by `stiction fmu export {model} --fmi 2 --interface both -o {path}`"))
}

/// If a signal was received: say so, naming `file` and the phase, and the failure that ends
/// the command with the signal's exit code.
pub fn stop_here(file: &str) -> Result<(), Failure> {
    match crate::interrupt::received() {
        Some((sig, code)) => {
            eprintln!("{file}: interrupted by {sig} while {}", crate::interrupt::current_phase());
            Err(Failure::Interrupted(code))
        }
        None => Ok(()),
    }
}
