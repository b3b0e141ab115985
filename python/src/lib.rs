#![doc = include_str!("../README.md")]

mod errors;
mod interrupt;
mod simulation;
mod study;
mod system;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use stiction_framework::system::Kind;

/// The FMU binary (the cdylib of `stiction-fmus`), embedded so an installed wheel can export
/// FMUs without a cargo target directory (see build.rs).
static FMU_BINARY: &[u8] = include_bytes!(env!("STICTION_FMU_BINARY"));

/// Every component type: name, kind, summary, parameters, ports, signals (as dicts).
#[pyfunction]
fn components(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let reg = stiction::registry();
    let out = PyList::empty(py);
    for t in reg.types() {
        let d = PyDict::new(py);
        d.set_item("name", t.name)?;
        d.set_item(
            "kind",
            match t.kind {
                Kind::Admittance => "admittance",
                Kind::Impedance => "impedance",
            },
        )?;
        d.set_item("summary", t.summary)?;
        let params = PyList::empty(py);
        for p in t.params {
            params.append((p.name, p.unit, p.default, p.doc))?;
        }
        d.set_item("params", params)?;
        let ports = PyList::empty(py);
        for p in t.ports {
            ports.append((p.name, p.domain, p.doc))?;
        }
        d.set_item("ports", ports)?;
        let signals = PyList::empty(py);
        for s in t.signals {
            signals.append((s.name, s.len, s.unit, s.doc))?;
        }
        d.set_item("signals", signals)?;
        out.append(d)?;
    }
    Ok(out)
}

/// Export `model` as an FMU to `path` (the CLI's `stiction fmu export`); returns
/// (identifier, GUID). The binary is the embedded one, or `$STICTION_FMU_LIBRARY` if set.
#[pyfunction]
fn export_fmu(
    py: Python<'_>,
    model: &str,
    fmi: u32,
    interface: &str,
    params: Vec<String>,
    path: PathBuf,
) -> PyResult<(String, String)> {
    let iface = stiction::fmu_export::Interface::parse(interface).map_err(errors::input_error_msg)?;
    let result = py.detach(|| -> Result<(String, String), String> {
        if let Some(lib) = std::env::var_os("STICTION_FMU_LIBRARY") {
            let lib = PathBuf::from(lib);
            return stiction::fmu_export::export_fmu(model, fmi, iface, &params, || Ok(lib), &path);
        }
        // Export::write reads the binary from a file: give it the embedded one in a private
        // temporary directory, removed afterwards.
        let dir = std::env::temp_dir().join(format!(
            "stiction-fmu-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
        ));
        let lib = dir.join(stiction_fmus::package::LIBRARY);
        let embedded = || {
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            std::fs::write(&lib, FMU_BINARY).map_err(|e| format!("{}: {e}", lib.display()))?;
            Ok(lib.clone())
        };
        let r = stiction::fmu_export::export_fmu(model, fmi, iface, &params, embedded, &path);
        let _ = std::fs::remove_dir_all(&dir);
        r
    });
    result.map_err(errors::input_error_msg)
}

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InputError", py.get_type::<errors::InputError>())?;
    m.add("SimulationError", py.get_type::<errors::SimulationError>())?;
    m.add_class::<system::CoreSystem>()?;
    m.add_class::<simulation::CoreSimulation>()?;
    m.add_class::<simulation::CoreInputs>()?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(export_fmu, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_plan, m)?)?;
    m.add_function(wrap_pyfunction!(study::study_rows, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
