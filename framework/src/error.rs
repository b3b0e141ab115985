//! Error types of the framework (thiserror). Every variant carries what a user needs to
//! find the problem: the JSON path, the component and port, or the time of failure.

use thiserror::Error;

/// Everything that can go wrong while building or running a system.
#[derive(Debug, Error)]
pub enum Error {
    /// A value in the system description is missing, ill-typed or non-physical.
    /// `path` is the JSON path, e.g. `components.sphere.mass`.
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },

    /// The network is not well formed (bipartite, domains, connections).
    #[error("network: {0}")]
    Network(String),

    /// A component failed during the simulation.
    #[error("simulation failed at t = {time} s in component '{component}': {message}")]
    Simulation { time: f64, component: String, message: String },

    /// A file could not be read or written.
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },

    /// The work stopped because a stop was requested ([`crate::cancel`]: SIGINT, SIGTERM).
    #[error("interrupted")]
    Interrupted,

    /// Any error, placed in the file it came from.
    /// (The inner error is part of the message, so it is not also reported as a source.)
    #[error("{file}: {inner}")]
    InFile { file: String, inner: Box<Error> },
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid { path: path.into(), message: message.into() }
    }

    /// Wrap in [`Error::InFile`].
    pub fn in_file(self, file: impl Into<String>) -> Self {
        Error::InFile { file: file.into(), inner: Box::new(self) }
    }

    /// True if the work stopped on a [`crate::cancel`] request.
    pub fn is_interrupted(&self) -> bool {
        match self {
            Error::Interrupted => true,
            Error::InFile { inner, .. } => inner.is_interrupted(),
            _ => false,
        }
    }

    /// True for failures of the simulation itself (exit code 1), false for bad input
    /// (exit code 2).
    pub fn is_simulation_failure(&self) -> bool {
        match self {
            Error::Simulation { .. } => true,
            Error::Io { .. } => false,
            Error::InFile { inner, .. } => inner.is_simulation_failure(),
            _ => false,
        }
    }
}

/// Result alias of the framework.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure inside a component during a step (non-finite state, solver non-convergence).
/// The solver attaches the time and the component name.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault(pub String);

impl Fault {
    pub fn new(msg: impl Into<String>) -> Self {
        Fault(msg.into())
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The closest of `candidates` to `word` by edit distance (optimal string alignment), when
/// close enough to be a likely typo: at most 2 edits, or a third of the word's length for
/// long names, and fewer edits than the longer of the two has letters.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let n = word.chars().count();
    let limit = (n / 3).max(2);
    // The distance is at least the difference of the lengths: a candidate further than the
    // limit by length alone is not compared (a 200 000-character name against 2 000
    // component names took seconds).
    candidates
        .into_iter()
        .filter(|c| *c != word && c.chars().count().abs_diff(n) <= limit)
        .map(|c| (strsim::osa_distance(word, c), c))
        .filter(|(d, c)| *d <= limit && *d < c.chars().count().max(word.chars().count()))
        .min()
        .map(|(_, c)| c)
}

/// ` (did you mean 'x'?)` for the [`closest`] candidate, or nothing.
pub fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates).map(|c| format!(" (did you mean '{c}'?)")).unwrap_or_default()
}
