//! [`FmiError`]: what went wrong with an FMU, named by FMU, function and the FMU's own log.

use std::fmt;

/// An error of an FMU: which FMU (model identifier and file), which FMI function, what
/// happened, and the messages the FMU logged.
#[derive(Clone, Debug, PartialEq)]
pub struct FmiError {
    /// "FMU 'StictionGear' (path/StictionGear.fmu)" or "FMU file path.fmu".
    pub fmu: String,
    pub function: Option<String>,
    pub message: String,
    pub log: Vec<String>,
}

impl FmiError {
    /// An error of `fmu` (a label), in `function` if given.
    pub fn new(fmu: &str, function: Option<&str>, message: impl Into<String>) -> FmiError {
        FmiError {
            fmu: fmu.to_string(),
            function: function.map(str::to_string),
            message: message.into(),
            log: Vec::new(),
        }
    }

    /// An error about the .fmu file itself (before its model identifier is known).
    pub fn file(shown: &str, message: impl Into<String>) -> FmiError {
        FmiError::new(&format!("FMU file {shown}"), None, message)
    }

    /// Attach the FMU's log messages.
    pub fn with_log(mut self, log: Vec<String>) -> FmiError {
        self.log = log;
        self
    }
}

impl fmt::Display for FmiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.fmu)?;
        if let Some(func) = &self.function {
            write!(f, "{func} ")?;
        }
        f.write_str(&self.message)?;
        if !self.log.is_empty() {
            write!(f, "; FMU log: {}", self.log.join(" | "))?;
        }
        Ok(())
    }
}

impl std::error::Error for FmiError {}
