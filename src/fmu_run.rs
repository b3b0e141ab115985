//! `stiction run X.fmu`: simulate one FMU on its own, as `fmpy simulate` does. The FMU
//! becomes the only component of a system (an `fmu` component without ports, observed
//! through its signals): Co-Simulation stepped by doStep every step, Model Exchange
//! integrated by the modular RK4 (13). Every output variable is a results column; `--set`
//! gives start values; stop time and step default to the FMU's DefaultExperiment.

use anyhow::anyhow;
use serde_json::{json, Map, Value};
use std::path::Path;
use stiction_fmi_import::archive::Archive;
use stiction_fmi_import::Causality;
use stiction_framework::system::System;

/// Whether `path` names an .fmu file.
pub fn is_fmu(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fmu"))
}

/// What `run X.fmu` takes besides the file.
pub struct FmuRun<'a> {
    pub sets: &'a [String],
    pub stop_time: Option<f64>,
    pub step: Option<f64>,
    /// "cs" or "me"; default: Co-Simulation when the FMU declares it.
    pub interface: Option<&'a str>,
}

/// The system that simulates the FMU at `path` alone.
pub fn system(path: &Path, o: &FmuRun) -> anyhow::Result<System> {
    let shown = path.display().to_string();
    let archive = Archive::open(path, &shown)?;
    let md = &archive.description;
    let interface = match o.interface {
        Some(i @ ("cs" | "me")) => i,
        Some(other) => return Err(anyhow!("--interface {other}: expected cs or me")),
        None if md.co_simulation.is_some() => "cs",
        None => "me",
    };
    let exp = md.default_experiment.as_ref();
    let stop = o.stop_time.or(exp.and_then(|e| e.stop_time)).unwrap_or(1.0);
    let step = match o.step.or(exp.and_then(|e| e.step_size)) {
        Some(h) => h,
        None => stop / 500.0,
    };
    let mut params = Map::new();
    for arg in o.sets {
        let (k, v) = arg.split_once('=').ok_or_else(|| anyhow!("--set {arg}: expected VARIABLE=VALUE"))?;
        params.insert(k.trim().to_string(), stiction::set::parse_value(v));
    }
    let mut signals = Map::new();
    for v in md.variables.iter().filter(|v| v.causality == Causality::Output) {
        // An FMI 2.0 name such as `a[1]` is a scalar of that literal name: the signal
        // reference finds it by its whole name first (an FMI 3.0 array `y` gives y[0], ...).
        signals.insert(v.name.clone(), json!(format!("fmu.{}", v.name)));
    }
    let abs = std::fs::canonicalize(path).map_err(|e| anyhow!("{shown}: {e}"))?;
    let doc = json!({
        "name": md.model_name,
        "solver": {"method": if interface == "me" { "rk4" } else { "euler" }, "step": step, "stop_time": stop},
        "output": {"signals": signals},
        "components": {"fmu": {
            "type": "fmu",
            "path": abs.to_string_lossy(),
            "interface": interface,
            "role": "admittance",
            "ports": {},
            "parameters": Value::Object(params)
        }}
    });
    drop(archive);
    let dir = stiction::set::base_dir(path);
    let system = stiction::set::system_from_value(doc, path, &dir).map_err(|e| anyhow!("{e}").context(run_note(o)))?;
    // Test hook (tests/fmu_interrupt.rs): a panic with the FMU leaked, so that only the panic
    // path's `archive::remove_all()` (src/exit.rs) can remove its extraction directory.
    if std::env::var_os("STICTION_TEST_PANIC_WITH_FMU").is_some() {
        std::mem::forget(system);
        panic!("STICTION_TEST_PANIC_WITH_FMU is set");
    }
    Ok(system)
}

fn run_note(o: &FmuRun) -> String {
    if o.sets.is_empty() {
        "simulating the FMU alone".into()
    } else {
        format!("simulating the FMU alone with --set {}", o.sets.join(" --set "))
    }
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
