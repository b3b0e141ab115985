//! `stiction fmu export SYSTEM.json`: whole systems as Co-Simulation FMUs, round trips.
//!
//! * FMPy (the venv of tests/common) validates the FMUs and simulates them; the outputs at
//!   the communication points are compared with `stiction run` of the same system and the
//!   same inputs: equal bit for bit (asserted as such; the issue's bound is 1e-12 relative).
//!   An output with direct feedthrough (a gear's mode "over the next step") differs at the
//!   instants an input jumps, and only there: FMPy samples the outputs after doStep and
//!   before it sets the next input, `stiction run` writes the row with the new input.
//! * Imported back into stiction as a `"type": "fmu", "role": "signal"` block, and nested
//!   in another exported system (a container of containers): the same bits.
//! * What cannot go into an FMU is refused at export, naming the file or JSON path; a step
//!   that ends between two solver steps ends there with a shortened last step (a rounding
//!   residue is no step); a start time other than 0 shifts the grid and the time functions.
//!
//! The system binary (libstiction_fmu_system.so) is built by the same `cargo test`: the
//! root package lists `stiction-fmu-system` as a dev-dependency.

#[path = "fixtures/pi_controller/mod.rs"]
mod pi_controller;

mod common;

use common::{cli, fmpy_script};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

/// `stiction fmu export SYSTEM --fmi F [--param ...] -o DIR/NAME`.
fn export(system: &Path, fmi: &str, params: &[&str], out: &Path) {
    let mut args = vec!["fmu", "export", system.to_str().unwrap(), "--fmi", fmi, "-o", out.to_str().unwrap()];
    for p in params {
        args.extend(["--param", p]);
    }
    let o = cli(&args);
    assert!(o.status.success(), "export failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// `stiction fmu export` that must fail; its message.
fn export_fails(system: &Path, params: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.fmu");
    let mut args = vec!["fmu", "export", system.to_str().unwrap(), "-o", out.to_str().unwrap()];
    for p in params {
        args.extend(["--param", p]);
    }
    let o = cli(&args);
    assert!(!o.status.success(), "export of {} succeeded", system.display());
    assert!(!out.exists(), "a refused export left {}", out.display());
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fmpy(request: &Value) -> Value {
    fmpy_script(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmpy/fmpy_run.py"), request)
}

fn validate(fmu: &Path) {
    let answer = fmpy(&json!({"action": "validate", "fmu": fmu}));
    let problems = answer["problems"].as_array().unwrap();
    assert!(problems.is_empty(), "{}: {problems:?}", fmu.display());
}

/// FMPy's Co-Simulation run: the named outputs, one value per communication point.
fn simulate(fmu: &Path, stop: f64, interval: f64, input: Value, start: Value, output: &[&str]) -> Value {
    fmpy(&json!({
        "action": "simulate", "fmu": fmu, "fmi_type": "CoSimulation", "stop_time": stop,
        "output_interval": interval, "input": input, "start_values": start, "output": output,
    }))
}

/// A CSV of `stiction run`: header and rows.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r.records().map(|rec| rec.unwrap().iter().map(|x| x.parse::<f64>().unwrap()).collect()).collect();
    (header, rows)
}

/// `stiction run SYSTEM -o DIR/out.csv ARGS…`, read back.
fn run(system: &Path, args: &[&str], dir: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let out = dir.join(format!("{}.csv", system.file_stem().unwrap().to_string_lossy()));
    let mut a = vec!["run", system.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet", "--no-warnings"];
    a.extend_from_slice(args);
    let o = cli(&a);
    assert!(o.status.success(), "run {} failed: {}", system.display(), String::from_utf8_lossy(&o.stderr));
    read_csv(&out)
}

/// Compare FMPy's answer with `stiction run`'s CSV column by column; the (row, column) pairs
/// whose bits differ. Every value must be within 1e-12 relative unless `loose` allows it.
fn differing(fmpy: &Value, csv: &(Vec<String>, Vec<Vec<f64>>), loose: &[&str]) -> Vec<(usize, String)> {
    let (header, rows) = csv;
    let time: Vec<f64> = fmpy["time"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(time.len(), rows.len(), "FMPy gave {} points, stiction run {} rows", time.len(), rows.len());
    let mut diff = Vec::new();
    for (c, name) in header.iter().enumerate().skip(1) {
        let col: Vec<f64> = fmpy[name.as_str()]
            .as_array()
            .unwrap_or_else(|| panic!("FMPy has no {name}"))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        for (k, row) in rows.iter().enumerate() {
            assert!((time[k] - row[0]).abs() <= 1e-9 * (1.0 + row[0].abs()), "row {k}: t {} vs {}", time[k], row[0]);
            if col[k].to_bits() != row[c].to_bits() {
                let rel = (col[k] - row[c]).abs() / row[c].abs().max(f64::MIN_POSITIVE);
                assert!(
                    loose.contains(&name.as_str()) || rel <= 1e-12,
                    "{name} at t = {}: {} vs {}",
                    row[0],
                    col[k],
                    row[c]
                );
                diff.push((k, name.clone()));
            }
        }
    }
    diff
}

#[test]
fn exported_system_in_fmpy_equals_stiction_run_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let system = example("pi_gear_hold.json");
    let reference = run(&system, &["--input", "w_ref=1.5"], dir.path());
    for fmi in ["2", "3"] {
        let fmu = dir.path().join(format!("pi{fmi}.fmu"));
        export(&system, fmi, &[], &fmu);
        validate(&fmu);
        let r = simulate(&fmu, 2.0, 0.01, Value::Null, json!({"w_ref": 1.5}), &["q", "v", "u", "mode"]);
        let diff = differing(&r, &reference, &[]);
        assert!(
            diff.is_empty(),
            "FMI {fmi}: {} values differ in their bits: {:?}",
            diff.len(),
            &diff[..diff.len().min(5)]
        );
        println!("FMI {fmi}: {} rows × 4 outputs bit for bit", reference.1.len());
    }
}

/// The drivetrain example driven by its torque table in FMPy, with the brake parameter.
#[test]
fn drivetrain_with_a_torque_profile_in_fmpy() {
    let dir = tempfile::tempdir().unwrap();
    let system = example("drivetrain_worm_brake.json");
    let table = example("drivetrain_worm_brake_torque.csv");
    let (_, rows) = read_csv(&table);
    let input = json!({
        "time": rows.iter().map(|r| r[0]).collect::<Vec<_>>(),
        "tau_motor": rows.iter().map(|r| r[1]).collect::<Vec<_>>(),
    });
    let outputs = ["q_out", "w_out", "mode", "tau_shaft", "w_brake", "tau_brake", "brake_stuck"];
    let fmu = dir.path().join("drivetrain.fmu");
    export(&system, "2", &[], &fmu);
    validate(&fmu);
    for f_brake in [2.0, 3.0] {
        let set = format!("brake.F={f_brake}");
        let reference =
            run(&system, &["--input", &format!("tau_motor={}", table.display()), "--set", &set], dir.path());
        let r = simulate(&fmu, 3.0, 1e-3, input.clone(), json!({"F_brake": f_brake}), &outputs);
        // Within 1e-12 relative (checked by `differing`), not bit for bit: FMPy interpolates
        // its input table as w0·v0 + w1·v1, which misses a constant segment's value by an ulp
        // at 132 of the 3001 points (0.15 comes out 0.15000000000000002); `stiction run`
        // reads the same table exactly.
        let diff = differing(&r, &reference, &["mode"]);
        // The gear's mode is its mode over the next step: it reads the torque set at the
        // communication point, which FMPy sets after sampling. It differs at the rows where
        // the torque has just jumped (on from rest at 0.101 s, reversed at 1.601 s), only there.
        let modes: Vec<f64> = diff.iter().filter(|(_, n)| n == "mode").map(|(k, _)| reference.1[*k][0]).collect();
        assert!(
            modes.iter().all(|t| [0.101, 1.201, 1.601, 2.201].contains(t)),
            "F = {f_brake}: mode differs at {modes:?}"
        );
        // The worm holds the load once the torque is off: the speed is exactly 0 at the end.
        let w = r["w_out"].as_array().unwrap();
        assert_eq!(w.last().unwrap().as_f64(), Some(0.0), "F = {f_brake}: the self-locking gear does not hold");
        println!(
            "F_brake = {f_brake}: {} rows × 7 outputs, {} values not bit for bit (mode at {modes:?})",
            reference.1.len(),
            diff.len()
        );
    }
}

/// The two-link arm with joint friction, its motor torques as the FMU's inputs.
#[test]
fn two_link_arm_driven_by_torque_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let system = example("two_link_arm_torque_inputs.json");
    let reference = run(&system, &["--input", "tau0=0.52", "--input", "tau1=0.3"], dir.path());
    let fmu = dir.path().join("arm.fmu");
    export(&system, "3", &[], &fmu);
    validate(&fmu);
    let outputs = ["theta0", "theta1", "omega0", "omega1", "tau_f0", "tau_f1"];
    let r = simulate(&fmu, 2.0, 1e-3, Value::Null, json!({"tau0": 0.52, "tau1": 0.3}), &outputs);
    let diff = differing(&r, &reference, &[]);
    assert!(diff.is_empty(), "{} values differ: {:?}", diff.len(), &diff[..diff.len().min(5)]);
}

/// A wrapper system around `fmu` as a signal block: its outputs, stepped at `step`.
fn wrapper(fmu: &Path, step: f64, stop: f64, outputs: &[&str]) -> Value {
    let signals: serde_json::Map<String, Value> =
        outputs.iter().map(|o| (o.to_string(), Value::String(format!("sys.{o}")))).collect();
    json!({
        "name": "wrapper",
        "solver": {"method": "euler", "step": step, "stop_time": stop},
        "output": {"interval": step, "signals": signals},
        "components": {"sys": {"type": "fmu", "role": "signal", "path": fmu.file_name().unwrap().to_str().unwrap()}}
    })
}

#[test]
fn imported_back_and_nested_in_another_exported_system() {
    let dir = tempfile::tempdir().unwrap();
    let system = example("pi_gear_hold.json");
    let reference = run(&system, &[], dir.path());
    let fmu = dir.path().join("pi.fmu");
    export(&system, "2", &[], &fmu);
    // Imported back as a signal block, stepped at the system's output interval.
    let outputs = ["q", "v", "u", "mode"];
    let wrap = dir.path().join("wrapper.json");
    std::fs::write(&wrap, wrapper(&fmu, 0.01, 2.0, &outputs).to_string()).unwrap();
    let back = run(&wrap, &[], dir.path());
    assert_eq!(back.0, reference.0);
    assert_eq!(back.1.len(), reference.1.len());
    for (a, b) in back.1.iter().zip(&reference.1) {
        let same = a.iter().zip(b).skip(1).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "imported back: {a:?} vs {b:?}");
    }
    // The wrapper, FMU inside, exported again and run in FMPy: a container of containers.
    let outer = dir.path().join("outer.fmu");
    export(&wrap, "3", &[], &outer);
    validate(&outer);
    let r = simulate(&outer, 2.0, 0.01, Value::Null, json!({}), &outputs);
    let diff = differing(&r, &reference, &[]);
    assert!(diff.is_empty(), "nested: {} values differ: {:?}", diff.len(), &diff[..diff.len().min(5)]);
}

/// examples/fmu_signals_gear_contact.json written into `dir` with the gear and friction FMUs
/// it names exported beside it.
fn gear_contact_system(dir: &Path) -> PathBuf {
    for (model, file) in [("gear", "StictionGear.fmu"), ("friction", "StictionFriction.fmu")] {
        let out = dir.join(file);
        let o = cli(&["fmu", "export", model, "--fmi", "2", "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(example("fmu_signals_gear_contact.json")).unwrap()).unwrap();
    v["components"]["contact"]["path"] = json!("StictionFriction.fmu");
    v["components"]["gear"]["path"] = json!("StictionGear.fmu");
    let system = dir.join("gear_contact.json");
    std::fs::write(&system, v.to_string()).unwrap();
    system
}

/// examples/fmu_signals_gear_contact.json (two FMUs joined by signal connections) as one FMU.
#[test]
fn gear_contact_fmus_exported_as_one_container() {
    let dir = tempfile::tempdir().unwrap();
    let system = gear_contact_system(dir.path());
    let reference = run(&system, &[], dir.path());
    let fmu = dir.path().join("container.fmu");
    export(&system, "2", &[], &fmu);
    validate(&fmu);
    let r = simulate(&fmu, 1.0, 1e-3, Value::Null, json!({}), &["q", "v", "f", "stuck"]);
    let diff = differing(&r, &reference, &[]);
    assert!(diff.is_empty(), "{} values differ: {:?}", diff.len(), &diff[..diff.len().min(5)]);
    // Stuck from 0.47 s on: exactly zero speed in the FMU as in the run.
    let v = r["v"].as_array().unwrap();
    assert_eq!(v.last().unwrap().as_f64(), Some(0.0));
    // The FMU-only form (examples/fmu_only_gear_contact.json) goes in as the network of
    // signal blocks it translates into: the same rows again.
    let mut only: Value =
        serde_json::from_str(&std::fs::read_to_string(example("fmu_only_gear_contact.json")).unwrap()).unwrap();
    only["fmus"]["contact"]["path"] = json!("StictionFriction.fmu");
    only["fmus"]["gear"]["path"] = json!("StictionGear.fmu");
    let only_file = dir.path().join("gear_contact_only.json");
    std::fs::write(&only_file, only.to_string()).unwrap();
    assert_eq!(run(&only_file, &[], dir.path()).1, reference.1);
    let fmu = dir.path().join("container_only.fmu");
    export(&only_file, "3", &[], &fmu);
    validate(&fmu);
    let r = simulate(&fmu, 1.0, 1e-3, Value::Null, json!({}), &["q", "v", "f", "stuck"]);
    let diff = differing(&r, &reference, &[]);
    assert!(diff.is_empty(), "FMU-only: {} values differ: {:?}", diff.len(), &diff[..diff.len().min(5)]);
}

#[test]
fn what_cannot_go_into_an_fmu_is_refused_at_export() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, v: &Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let base = |components: Value| json!({"solver": {"step": 1e-3, "stop_time": 0.1}, "components": components});
    // A table file that is not there: the message names the file and the JSON path.
    let missing = write(
        "missing.json",
        &base(
            json!({"m": {"type": "mass", "mass": 1}, "f": {"type": "force_source", "force": {"table": "nowhere.csv", "column": "f"}}}),
        ),
    );
    let e = export_fails(&missing, &[]);
    assert!(e.contains("nowhere.csv") && e.contains("components.f.force.table"), "{e}");
    // A parameter path with no value in the file, and one that is not a number.
    let ok = write("ok.json", &base(json!({"m": {"type": "mass", "mass": 1}})));
    let e = export_fails(&ok, &["k=m.init.q"]);
    assert!(e.contains("--param k=m.init.q") && e.contains("no value in the file"), "{e}");
    let e = export_fails(&ok, &["k=m"]);
    assert!(e.contains("--param k=m"), "{e}");
    // An FMU-only system the translation refuses, with the reason (its JSON path).
    let only = write("only.json", &json!({"fmus": {}, "connections": []}));
    let e = export_fails(&only, &[]);
    assert!(e.contains("FMU-only") && e.contains("master"), "{e}");
    // A name used twice.
    let twice = write(
        "twice.json",
        &json!({"solver": {"step": 1e-3, "stop_time": 0.1}, "inputs": {"q": {}},
        "output": {"signals": {"q": "m.q"}}, "components": {"m": {"type": "mass", "mass": 1, "force": 0}}}),
    );
    let e = export_fails(&twice, &[]);
    assert!(e.contains("\"q\""), "{e}");
}

/// A communication step that is not whole solver steps is integrated exactly to t + H: the
/// whole steps to the last grid point, then one shortened step (its stage sizes τ those of
/// the shorter step), the grid going on from there. pi_gear_hold (T = 1 ms, RK4, the gear
/// driven) stepped with H = 1.5 T is as close to a run at T/10 as `stiction run` at T is
/// (measured: q 1.4e-13 against 2.1e-13, v 7.0e-13 against 1.0e-12).
#[test]
fn a_step_that_is_not_whole_solver_steps_is_integrated_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("pi.fmu");
    export(&example("pi_gear_hold.json"), "2", &[], &fmu);
    let stop = ["--set", "solver.stop_time=0.9"];
    let (h, short) = {
        let out = dir.path().join("short.csv");
        let o =
            cli(&["run", fmu.to_str().unwrap(), "--step", "0.0015", "--stop-time", "0.9", "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        read_csv(&out)
    };
    assert_eq!(short.len(), 601, "rows at every 1.5 ms to 0.9 s");
    let fine_dir = dir.path().join("fine");
    let base_dir = dir.path().join("base");
    std::fs::create_dir_all(&fine_dir).unwrap();
    std::fs::create_dir_all(&base_dir).unwrap();
    let (_, fine) = run(
        &example("pi_gear_hold.json"),
        &[stop[0], stop[1], "--set", "solver.step=1e-4", "--set", "output.interval=0.0015"],
        &fine_dir,
    );
    let (_, base) =
        run(&example("pi_gear_hold.json"), &[stop[0], stop[1], "--set", "output.interval=0.003"], &base_dir);
    let at = |rows: &[Vec<f64>], t: f64| rows.iter().find(|r| (r[0] - t).abs() < 1e-9).cloned().unwrap();
    for name in ["q", "v"] {
        let j = h.iter().position(|x| x == name).unwrap();
        let (mut e_short, mut e_grid) = (0.0f64, 0.0f64);
        for b in &base {
            let f = at(&fine, b[0]);
            e_short = e_short.max((at(&short, b[0])[j] - f[j]).abs());
            e_grid = e_grid.max((b[j] - f[j]).abs());
        }
        eprintln!("{name}: H = 1.5 T differs from T/10 by {e_short:e}; the run at T by {e_grid:e}");
        assert!(e_short <= 2.0 * e_grid + 1e-12, "{name}: {e_short:e} against {e_grid:e}");
    }
    // With a signal block inside (the PIController FMU, which takes variable steps), the
    // block advances by the shortened step too: as close to T/10 as the run at T (measured:
    // q 5.0e-4 against 6.2e-4; the block's own coupling error dominates both).
    common::install_fmu("PIController.fmu", pi_controller::build);
    let fpi = dir.path().join("fpi.fmu");
    export(&example("fmu_pi_gear_hold.json"), "2", &[], &fpi);
    let out = dir.path().join("fpi_short.csv");
    let o = cli(&["run", fpi.to_str().unwrap(), "--step", "0.0015", "--stop-time", "0.9", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (hb, short_b) = read_csv(&out);
    let fine_dir = dir.path().join("fpi_fine");
    let base_dir = dir.path().join("fpi_base");
    std::fs::create_dir_all(&fine_dir).unwrap();
    std::fs::create_dir_all(&base_dir).unwrap();
    let system = example("fmu_pi_gear_hold.json");
    let (_, fine) =
        run(&system, &[stop[0], stop[1], "--set", "solver.step=1e-4", "--set", "output.interval=0.0015"], &fine_dir);
    let (_, base) = run(&system, &[stop[0], stop[1], "--set", "output.interval=0.003"], &base_dir);
    let j = hb.iter().position(|x| x == "q").unwrap();
    let (mut e_short, mut e_grid) = (0.0f64, 0.0f64);
    for b in &base {
        let f = at(&fine, b[0]);
        e_short = e_short.max((at(&short_b, b[0])[j] - f[j]).abs());
        e_grid = e_grid.max((b[j] - f[j]).abs());
    }
    eprintln!("with a signal block: H = 1.5 T differs from T/10 by {e_short:e}; the run at T by {e_grid:e}");
    assert!(e_short <= 2.0 * e_grid, "{e_short:e} against {e_grid:e}");
    // A whole number of steps (5 T) runs, and its rows are the run's rows at those instants.
    let csv = dir.path().join("five.csv");
    let o = cli(&["run", fmu.to_str().unwrap(), "--step", "0.005", "-o", csv.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (_, five) = read_csv(&csv);
    let (_, every) = run(&example("pi_gear_hold.json"), &["--set", "output.interval=0.005"], dir.path());
    assert_eq!(five.len(), every.len());
    for (a, b) in five.iter().zip(&every) {
        assert!(a.iter().zip(b).skip(1).all(|(x, y)| x.to_bits() == y.to_bits()), "{a:?} vs {b:?}");
    }
}

#[test]
fn resources_that_do_not_match_the_token_are_refused() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("pi.fmu");
    export(&example("pi_gear_hold.json"), "2", &[], &fmu);
    // Rewrite resources/system.json with another gear inertia; keep everything else.
    let mut zin = zip::ZipArchive::new(std::fs::File::open(&fmu).unwrap()).unwrap();
    let bad = dir.path().join("bad.fmu");
    let mut zout = zip::ZipWriter::new(std::fs::File::create(&bad).unwrap());
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        if name == "resources/system.json" {
            data = String::from_utf8(data).unwrap().replace("\"m\": 0.5", "\"m\": 0.6").into_bytes();
        }
        let opts = zip::write::SimpleFileOptions::default().unix_permissions(f.unix_mode().unwrap_or(0o644));
        zout.start_file(name, opts).unwrap();
        zout.write_all(&data).unwrap();
    }
    zout.finish().unwrap();
    let o = cli(&["run", bad.to_str().unwrap(), "--step", "0.01", "-o", dir.path().join("x.csv").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("come from different exports"), "{err}");
}

/// The time of a doStep is bounded: at most 10⁸ component steps. chain_1k has 3000
/// components (budget 33 333 steps of T = 1e-4 s): a 4 s step is refused before it starts,
/// a 0.1 s step (1000 steps) runs.
#[test]
fn a_step_beyond_the_component_step_budget_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("chain.fmu");
    export(&example("chain_1k.json"), "2", &[], &fmu);
    let out = dir.path().join("x.csv");
    let started = std::time::Instant::now();
    let o = cli(&["run", fmu.to_str().unwrap(), "--step", "4", "--stop-time", "4", "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("3000 components") && err.contains("33333"), "{err}");
    println!("refused in {:.2} s: {err}", started.elapsed().as_secs_f64());
    let o = cli(&["run", fmu.to_str().unwrap(), "--step", "0.1", "--stop-time", "0.1", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// FMU states through FMPy (tests/fmpy/fmpy_state.py): save the whole simulation mid-run,
/// step on (A); set the state and step again (B); serialize, deserialize, set, step (C); the
/// serialized state in a second, fresh instance (D): the same bits every time.
fn states_continue_bit_for_bit(fmu: &Path, outputs: &[&str], input: Option<(&str, Vec<f64>)>, k1: usize, k2: usize) {
    let (name, u) = input.map_or((Value::Null, Value::Null), |(n, u)| (json!(n), json!(u)));
    let r = fmpy_script(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmpy/fmpy_state.py"),
        &json!({"fmu": fmu, "outputs": outputs, "input": name, "u": u, "h": 1e-3, "k1": k1, "k2": k2}),
    );
    let rows = |k: &str| -> Vec<Vec<u64>> {
        r[k].as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap().to_bits()).collect())
            .collect()
    };
    let a = rows("A");
    assert_eq!(a.len(), k2);
    for k in ["B", "C", "D"] {
        assert!(rows(k) == a, "{}: {k} differs from the run that never left", fmu.display());
    }
    println!("{}: state of {} bytes continues bit for bit over {k2} steps", fmu.display(), r["bytes"]);
}

#[test]
fn fmu_states_save_and_restore_the_whole_simulation() {
    let dir = tempfile::tempdir().unwrap();
    // The drivetrain, saved at 1.5 s (between the torque pulses, the brake sliding) with
    // a torque profile as input, FMI 2 and 3.
    let u: Vec<f64> = (0..3000)
        .map(|k| match k {
            100..=1199 => 0.15,
            1600..=2199 => -0.1,
            _ => 0.0,
        })
        .collect();
    let outputs = ["q_out", "w_out", "mode", "tau_shaft", "w_brake", "tau_brake", "brake_stuck"];
    for fmi in ["2", "3"] {
        let fmu = dir.path().join(format!("drivetrain{fmi}.fmu"));
        export(&example("drivetrain_worm_brake.json"), fmi, &[], &fmu);
        validate(&fmu);
        states_continue_bit_for_bit(&fmu, &outputs, Some(("tau_motor", u.clone())), 1500, 1500);
    }
    // Two FMUs inside (signal blocks): their own states go in through FMI serialization.
    let system = gear_contact_system(dir.path());
    let fmu = dir.path().join("container.fmu");
    export(&system, "2", &[], &fmu);
    // Saved at 0.3 s while the gear still slides; it sticks at 0.47 s after the restore.
    states_continue_bit_for_bit(&fmu, &["q", "v", "f", "stuck"], None, 300, 700);
}

/// A serialized state that is not whole or not true is refused, and the instance goes on as
/// it was (tests/fmpy/fmpy_state_tamper.py): every cut (the 80 of 267 bytes the issue found
/// accepted among them), one byte more, single-bit flips at deserialize; the FMU time moved by
/// 0.01 s with the checksum made right, at set (the simulation's own time k·T + shift differs).
#[test]
fn a_cut_extended_or_edited_state_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("model_d_fig14.json", vec!["u", "f", "e"]),
        ("two_link_arm_torque_inputs.json", vec!["theta0", "theta1"]),
        ("fmu_pi_gear_hold.json", vec!["q", "v", "u"]),
    ];
    for (name, outputs) in cases {
        for fmi in ["2", "3"] {
            let fmu = dir.path().join(format!("{}-{fmi}.fmu", name.trim_end_matches(".json")));
            if name.starts_with("fmu_") {
                common::install_fmu("PIController.fmu", pi_controller::build);
            }
            export(&example(name), fmi, &[], &fmu);
            let r = fmpy_script(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmpy/fmpy_state_tamper.py"),
                &json!({"fmu": fmu, "outputs": outputs, "h": 1e-2, "k1": 10, "k2": 5}),
            );
            let what = format!("{name} FMI {fmi}");
            assert_eq!(r["accepted"], json!([]), "{what}: tampered states accepted: {}", r["accepted"]);
            assert_eq!(r["time_edit_set_refused"], json!(true), "{what}: an edited FMU time was set");
            assert_eq!(r["same"], json!(true), "{what}: a refused state changed the instance");
            println!(
                "{what}: {} bytes; {} cuts, 1 extension, {} bit flips refused; time edit refused at set",
                r["bytes"], r["cuts"], r["flips"]
            );
        }
    }
}

/// The FMI 2.0 and 3.0 exports of one system are different models for an importer: their
/// GUID / instantiationToken differ (the manifest they hash names the version), and each
/// export of the same version is the same token again.
#[test]
fn fmi_2_and_3_exports_of_one_system_have_distinct_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let system = example("pi_gear_hold.json");
    let token = |fmi: &str, name: &str| {
        let out = dir.path().join(name);
        let o = cli(&["fmu", "export", system.to_str().unwrap(), "--fmi", fmi, "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        let at = said.find("GUID {").unwrap_or_else(|| panic!("no GUID in {said}"));
        said[at + 5..].split('}').next().unwrap().to_string()
    };
    let (two, three) = (token("2", "a2.fmu"), token("3", "a3.fmu"));
    assert_ne!(two, three, "FMI 2.0 and 3.0 exports share a token");
    assert_eq!(two, token("2", "b2.fmu"));
}

/// ModelStructure's `dependencies`: an output read from a component whose time function
/// reads an input lists that input (the PI torque `u` of pi_gear_hold reads `w_ref`); an
/// output that no input reaches at the same instant lists none (the brake side of the
/// drivetrain), so a master wiring two such FMUs in a loop sees no algebraic loop there.
#[test]
fn outputs_declare_the_inputs_they_depend_on() {
    let dir = tempfile::tempdir().unwrap();
    let md = |system: &str, fmi: &str| {
        let fmu = dir.path().join(format!("{system}-{fmi}.fmu"));
        export(&example(&format!("{system}.json")), fmi, &[], &fmu);
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&fmu).unwrap()).unwrap();
        let mut xml = String::new();
        std::io::Read::read_to_string(&mut zip.by_name("modelDescription.xml").unwrap(), &mut xml).unwrap();
        xml
    };
    let pi2 = md("pi_gear_hold", "2");
    // FMI 2.0: 1-based indices; time 1, w_ref 2, q 3, v 4, u 5, mode 6.
    assert!(pi2.contains(r#"<Unknown index="5" dependencies="2"/>"#), "{pi2}");
    let dt3 = md("drivetrain_worm_brake", "3");
    // FMI 3.0: value references; the brake's outputs (w_brake 7, tau_brake 8) depend on no input.
    assert!(dt3.contains(r#"<Output valueReference="7" dependencies=""/>"#), "{dt3}");
    assert!(dt3.contains(r#"<Output valueReference="8" dependencies=""/>"#), "{dt3}");
    // The gear's speed is a state: no input; its mode "over the next step" depends on the
    // motor torque input (value reference 2).
    assert!(dt3.contains(r#"<Output valueReference="4" dependencies=""/>"#), "{dt3}");
    assert!(dt3.contains(r#"<Output valueReference="5" dependencies="2"/>"#), "{dt3}");
    // At initialization the parameter F_brake (value reference 1) counts too.
    assert!(dt3.contains(r#"<InitialUnknown valueReference="5" dependencies="1 2"/>"#), "{dt3}");
    assert!(dt3.contains(r#"<InitialUnknown valueReference="4" dependencies="1"/>"#), "{dt3}");
}

/// The declared independence is true: in every example with inputs, at the start and after
/// 200 steps, changing one input (to its start + 1 and to 100×) and reading the outputs as a
/// communication point does (the probe, no step) leaves every output that does not list the
/// input bit for bit the same.
#[test]
fn an_output_that_lists_no_input_does_not_change_with_it() {
    use stiction::framework::output::feedthrough::input_dependencies;
    use stiction::framework::TimeFunction;
    let (mut checked, mut moved) = (0, 0);
    common::install_fmu("PIController.fmu", pi_controller::build);
    for name in
        ["drivetrain_worm_brake", "pi_gear_hold", "fmu_pi_gear_hold", "two_link_arm_torque_inputs", "two_link_pd_fricK"]
    {
        let system = stiction::load(example(&format!("{name}.json"))).unwrap();
        let wires: Vec<(String, String)> = system.wires.iter().map(|w| (w.name.clone(), w.path.clone())).collect();
        let inputs: Vec<(String, f64)> = system.inputs.iter().map(|(n, s)| (n.clone(), s.start)).collect();
        let names: Vec<String> = inputs.iter().map(|i| i.0.clone()).collect();
        let (mut sim, plan) = system.into_simulator(1).unwrap();
        let deps = input_dependencies(&sim, &plan, &wires, &names);
        let targets = sim.probe_targets(plan.columns.iter().map(|c| &c.1));
        let read = |sim: &mut stiction::framework::Simulator| -> Vec<u64> {
            sim.probe_only(&targets).unwrap();
            plan.columns.iter().map(|(_, r)| sim.value(r).to_bits()).collect()
        };
        for (n, start) in &inputs {
            sim.set_input(n, TimeFunction::Constant(*start)).unwrap();
        }
        for steps in [0, 200] {
            for _ in 0..steps {
                sim.step().unwrap();
            }
            for (k, (n, start)) in inputs.iter().enumerate() {
                let before = read(&mut sim);
                for changed in [start + 1.0, 100.0 * start + 7.0] {
                    sim.set_input(n, TimeFunction::Constant(changed)).unwrap();
                    let after = read(&mut sim);
                    for (j, d) in deps.iter().enumerate() {
                        if d.as_ref().is_some_and(|d| d.contains(&k)) && before[j] != after[j] {
                            moved += 1;
                        }
                        if let Some(d) = d.as_ref().filter(|d| !d.contains(&k)) {
                            assert_eq!(
                                before[j], after[j],
                                "{name}: {} lists {d:?}, changed with input {n}",
                                plan.columns[j].0
                            );
                            checked += 1;
                        }
                    }
                }
                sim.set_input(n, TimeFunction::Constant(*start)).unwrap();
            }
        }
    }
    assert!(checked > 20, "only {checked} outputs checked");
    // The check can see a change: outputs that list an input do move with it.
    assert!(moved > 0, "no listed dependency ever showed");
}

/// The experiment's start time is where the system starts: FMPy simulating a mass pushed by
/// sin(3 t) from t0 = 0.5 s gives what `stiction run` gives for sin(3 (t + 0.5)) from 0.
#[test]
fn a_start_time_other_than_zero_shifts_the_time_functions() {
    let dir = tempfile::tempdir().unwrap();
    let system = |force: &str| {
        json!({"solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
               "output": {"interval": 0.01, "signals": {"q": "m.q", "v": "m.v"}},
               "components": {"m": {"type": "mass", "mass": 1.0},
                              "f": {"type": "force_source", "force": force}},
               "connections": [{"from": "f.body", "to": "m.body"}]})
    };
    let shifted = dir.path().join("shifted.json");
    std::fs::write(&shifted, system("sin(3*t)").to_string()).unwrap();
    let fmu = dir.path().join("shifted.fmu");
    export(&shifted, "2", &[], &fmu);
    let r = fmpy(&json!({"action": "simulate", "fmu": fmu, "fmi_type": "CoSimulation", "start_time": 0.5,
                         "stop_time": 1.5, "output_interval": 0.01, "output": ["q", "v"]}));
    let from_zero = dir.path().join("from_zero.json");
    std::fs::write(&from_zero, system("sin(3*(t + 0.5))").to_string()).unwrap();
    let (h, rows) = run(&from_zero, &[], dir.path());
    let time: Vec<f64> = r["time"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!((time[0] - 0.5).abs() < 1e-12 && (time.last().unwrap() - 1.5).abs() < 1e-9, "{:?}", (time[0], time.last()));
    let mut worst = 0.0f64;
    for name in ["q", "v"] {
        let j = h.iter().position(|x| x == name).unwrap();
        let got: Vec<f64> = r[name].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(got.len(), rows.len());
        for (g, row) in got.iter().zip(&rows) {
            worst = worst.max((g - row[j]).abs() / row[j].abs().max(1e-3));
        }
    }
    eprintln!("start time 0.5 s against the shifted law from 0: max relative difference {worst:e}");
    assert!(worst <= 1e-12, "{worst:e}");
    assert!(rows.last().unwrap()[1] != 0.0);
}
