//! The package's exceptions: `InputError` (a ValueError: bad system description or
//! argument, with the file and the JSON path) and `SimulationError` (a RuntimeError: a
//! component failed during the run, with the time and the component).

use pyo3::prelude::*;
use stiction_framework::Error;

pyo3::create_exception!(
    stiction,
    InputError,
    pyo3::exceptions::PyValueError,
    "Bad input: a system description, a --set assignment or an argument. Attributes: `file` \
     (or None), `path` (the JSON path, e.g. 'components.block.mass', or None), `message`."
);
pyo3::create_exception!(
    stiction,
    SimulationError,
    pyo3::exceptions::PyRuntimeError,
    "A component failed during the run. Attributes: `time` (s), `component`, `message`, `file`, \
     and from `System.run` `partial`: the Result of the rows before the failure."
);

/// An `InputError` with `file`, `path` and `message` set.
pub fn input_error(file: Option<String>, path: Option<String>, message: String, shown: String) -> PyErr {
    Python::attach(|py| {
        let err = InputError::new_err(shown);
        let v = err.value(py);
        // Setting attributes on a fresh exception cannot fail short of memory exhaustion;
        // the exception is raised either way.
        let _ = v.setattr("file", file);
        let _ = v.setattr("path", path);
        let _ = v.setattr("message", message);
        err
    })
}

/// An `InputError` from a plain message (no file, no JSON path).
pub fn input_error_msg(message: String) -> PyErr {
    input_error(None, None, message.clone(), message)
}

/// The exception for a framework error: `SimulationError` for failures during the run,
/// `InputError` for everything else.
pub fn from_framework(e: &Error) -> PyErr {
    let shown = e.to_string();
    let mut file = None;
    let mut inner = e;
    while let Error::InFile { file: f, inner: i } = inner {
        if file.is_none() {
            file = Some(f.clone());
        }
        inner = i;
    }
    match inner {
        Error::Simulation { time, component, message } => Python::attach(|py| {
            let err = SimulationError::new_err(shown);
            let v = err.value(py);
            let _ = v.setattr("time", *time);
            let _ = v.setattr("component", component.clone());
            let _ = v.setattr("message", message.clone());
            let _ = v.setattr("file", file);
            err
        }),
        Error::Invalid { path, message } => input_error(file, Some(path.clone()), message.clone(), shown),
        Error::Io { path, error } => input_error(file.or_else(|| Some(path.clone())), None, error.to_string(), shown),
        other => input_error(file, None, other.to_string(), shown),
    }
}
