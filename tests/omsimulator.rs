//! Every example system exported as a Co-Simulation FMU (FMI 2.0 and 3.0) runs in
//! OpenModelica's OMSimulator with its plain command, `OMSimulator X.fmu --stopTime=<stop>`,
//! exits 0 without an error line, and gives what `stiction run` gives at every output point
//! (to the 12 significant digits of OMSimulator's CSV cells).
//!
//! OMSimulator is found at $STICTION_OMSIMULATOR or ../shared/tools/omsimulator/bin/OMSimulator
//! (beside the repository); where it is absent the test says so and passes, so a user's
//! `cargo test` does not need it. `.ci/run` provides it.

// Both fixtures include the shared C-FMU builder (tests/fixtures/c_fmu.rs).
#![allow(clippy::duplicate_mod)]

#[path = "fixtures/pi_controller/mod.rs"]
mod pi_controller;
#[path = "fixtures/pi_me/mod.rs"]
mod pi_me;

mod common;
use common::{cli, install_fmu, omsimulator, read_csv};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The FMUs the examples read from target/fmu/, made here so this test does not depend on
/// other test binaries having run first: the two stiction element FMUs (exported by the CLI,
/// as the examples' descriptions say) and the two controller FMUs of tests/fixtures.
fn install_example_fmus() {
    for (model, file) in [("gear", "StictionGear.fmu"), ("friction", "StictionFriction.fmu")] {
        install_fmu(file, |dir| {
            let fmu = dir.join(file);
            let o = cli(&["fmu", "export", model, "--fmi", "2", "--interface", "cs", "-o", fmu.to_str().unwrap()]);
            assert!(o.status.success(), "{model}: {}", String::from_utf8_lossy(&o.stderr));
            fmu
        });
    }
    install_fmu("PIController.fmu", pi_controller::build);
    install_fmu("PIControllerME.fmu", pi_me::build);
}

/// The largest relative difference |a − b| / |a| between OMSimulator's rows and `stiction
/// run`'s at the times both have, over the columns of the run (every one must be in
/// OMSimulator's result); the number of values compared. OMSimulator writes CSV cells with
/// 12 significant digits, so equal doubles differ there by up to 5e-12 relative.
fn max_difference(run: &Path, oms: &Path) -> (f64, usize) {
    let (rh, rrows) = read_csv(run);
    let (oh, orows) = read_csv(oms);
    // OMSimulator's first column is its own time; the FMU's `time` output may follow.
    let mut at: HashMap<i64, &Vec<f64>> = HashMap::new();
    for r in &orows {
        at.insert((r[0] * 1e9).round() as i64, r);
    }
    let cols: Vec<(usize, usize)> = rh
        .iter()
        .enumerate()
        .skip(1)
        .map(|(j, name)| {
            let k = oh.iter().rposition(|h| h == name || h.rsplit('.').next() == Some(name));
            (j, k.unwrap_or_else(|| panic!("{}: no column {name} in {oh:?}", oms.display())))
        })
        .collect();
    let (mut worst, mut n) = (0.0f64, 0);
    for r in &rrows {
        let Some(o) = at.get(&((r[0] * 1e9).round() as i64)) else { continue };
        for &(j, k) in &cols {
            let d =
                if r[j] == o[k] || (r[j].is_nan() && o[k].is_nan()) { 0.0 } else { (r[j] - o[k]).abs() / r[j].abs() };
            worst = worst.max(d);
            n += 1;
        }
    }
    (worst, n)
}

#[test]
fn every_example_runs_in_omsimulators_plain_command_as_in_stiction_run() {
    let Some(oms) = omsimulator() else {
        eprintln!("skipped: OMSimulator not found (set STICTION_OMSIMULATOR or put it in ../shared/tools/omsimulator)");
        return;
    };
    install_example_fmus();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut systems: Vec<PathBuf> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    systems.sort();
    let dir = tempfile::tempdir().unwrap();
    let mut table = Vec::new();
    for system in &systems {
        let name = system.file_stem().unwrap().to_string_lossy().to_string();
        let stop = stiction::load(system).unwrap_or_else(|e| panic!("{e}")).stop_time;
        let run = dir.path().join(format!("{name}.csv"));
        let o = cli(&["run", system.to_str().unwrap(), "-o", run.to_str().unwrap(), "--quiet", "--no-warnings"]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        for fmi in ["2", "3"] {
            let fmu = dir.path().join(format!("{name}-{fmi}.fmu"));
            let o = cli(&["fmu", "export", system.to_str().unwrap(), "--fmi", fmi, "-o", fmu.to_str().unwrap()]);
            assert!(o.status.success(), "{name} FMI {fmi}: {}", String::from_utf8_lossy(&o.stderr));
            let result = dir.path().join(format!("{name}-{fmi}_res.csv"));
            let o = Command::new("timeout")
                .arg("600")
                .arg(&oms)
                .arg(&fmu)
                .arg(format!("--stopTime={stop}"))
                .arg(format!("--resultFile={}", result.display()))
                .current_dir(dir.path())
                .output()
                .expect("OMSimulator runs");
            let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{name} FMI {fmi}: OMSimulator exited {:?}:\n{said}", o.status.code());
            assert!(!said.lines().any(|l| l.starts_with("error")), "{name} FMI {fmi}:\n{said}");
            let (worst, n) = max_difference(&run, &result);
            assert!(n > 0, "{name} FMI {fmi}: no output point in common");
            assert!(worst <= 1e-11, "{name} FMI {fmi}: OMSimulator differs from stiction run by {worst:e} (relative)");
            table.push(format!("{name:32} FMI {fmi}  exit 0  {n:8} values  max relative diff {worst:e}"));
        }
    }
    eprintln!("{}", table.join("\n"));
}

/// The `Capi` script of docs/how-to/openmodelica.md, as written, run by OMSimulator's own
/// Python launcher on the drivetrain's FMU: it simulates and reads an output with status ok.
/// Needs `lxml` (PyPI) in the Python that runs it: a venv under target/ (skipped, saying
/// so, when OMSimulator or PyPI is not at hand).
#[test]
fn the_guides_capi_script_runs_in_omsimulator() {
    let Some(oms) = omsimulator() else {
        eprintln!("skipped: OMSimulator not found");
        return;
    };
    let launcher = oms.with_file_name("OMSimulatorPython3");
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/how-to/openmodelica.md")).unwrap();
    let start = page.find("from OMSimulator import Capi").expect("the guide's Capi block");
    let script = &page[start..start + page[start..].find("```").expect("closed block")];
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("omsimulator-lxml-venv");
    let python = venv.join("bin/python3");
    if !python.is_file() {
        let made = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().is_ok_and(|s| s.success())
            && Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "lxml"])
                .status()
                .is_ok_and(|s| s.success());
        if !made {
            let _ = std::fs::remove_dir_all(&venv);
            eprintln!("skipped: no venv with lxml from PyPI");
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("drivetrain.fmu");
    let system = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/drivetrain_worm_brake.json");
    let o = cli(&["fmu", "export", system.to_str().unwrap(), "--fmi", "2", "-o", fmu.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(dir.path().join("script.py"), script).unwrap();
    let path = std::env::join_paths(
        std::iter::once(venv.join("bin")).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let o = Command::new(&launcher).arg("script.py").env("PATH", path).current_dir(dir.path()).output().unwrap();
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("q_out = [") && said.contains("Status.ok"), "{said}");
    assert!(!said.lines().any(|l| l.starts_with("error")), "{said}");
    assert!(dir.path().join("drivetrain_res.csv").is_file(), "no result file: {said}");
}
