//! FMI 3.0 as the standard has it, with the hand-written TypedMass FMU
//! (tests/fixtures/typed_mass): every numeric type read exactly, an Enumeration read and set
//! through fmi3GetInt64/fmi3SetInt64, an array as one column per element and by element,
//! `<Alias>` names (FMI 3.0) and aliased value references (FMI 2.0) for ports, signals and
//! start values, refusals by name before any FMU call, termination requests that end the run
//! normally (FMI 2.0 and 3.0, network and FMU-only systems), and an FMU that returns Error in
//! the middle of a run and is then never called again but to free it.

mod common;
#[path = "fixtures/typed_mass/mod.rs"]
mod typed_mass;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Force on the mass (N), solver and communication step (s).
const U: f64 = 3.0;
const T: f64 = 0.01;

/// A network of the FMU (an admittance: force u in, motion x/position and v out) pushed by a
/// constant force `U`, run with Euler and H = T for `stop` seconds.
fn network(fmu: &Path, parameters: Value, signals: Value, stop: f64) -> Value {
    json!({
        "solver": {"method": "euler", "step": T, "stop_time": stop},
        "output": {"interval": T, "signals": signals},
        "components": {
            "mass": {"type": "fmu", "path": fmu.to_str().unwrap(), "role": "admittance",
                     "inputs": {"force": "u"}, "outputs": {"position": "position", "velocity": "v"},
                     "parameters": parameters},
            "push": {"type": "force_source", "force": U}
        },
        "connections": [{"from": "push.body", "to": "mass.port"}]
    })
}

/// Run `stiction run` on `system` (written into `dir`) with TYPED_MASS_CALLS set to a file
/// in `dir` and TMPDIR to a directory of its own, checked empty afterwards: (exit code,
/// stderr, the CSV's header and rows, the FMU calls made).
fn run_cli(dir: &Path, name: &str, system: &Value) -> (i32, String, Vec<String>, Vec<Vec<f64>>, Vec<String>) {
    let json_path = dir.join(format!("{name}.json"));
    std::fs::write(&json_path, serde_json::to_string_pretty(system).unwrap()).unwrap();
    let csv = dir.join(format!("{name}.csv"));
    let calls = dir.join(format!("{name}.calls"));
    let _ = std::fs::remove_file(&calls);
    let tmp = dir.join(format!("{name}.tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", json_path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
        .env("TYPED_MASS_CALLS", &calls)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    // Whatever the outcome (normal end, termination, refusal, error), the extraction
    // directory is gone.
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "{name}: left in TMPDIR: {left:?}");
    let text = std::fs::read_to_string(&csv).unwrap_or_default();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap_or("").split(',').map(str::to_string).collect();
    let rows = lines.map(|l| l.split(',').map(|x| x.trim().parse::<f64>().unwrap_or(f64::NAN)).collect()).collect();
    let calls = std::fs::read_to_string(&calls).unwrap_or_default().lines().map(str::to_string).collect();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned(), header, rows, calls)
}

fn column(header: &[String], rows: &[Vec<f64>], name: &str) -> Vec<f64> {
    let i = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    rows.iter().map(|r| r[i]).collect()
}

/// Every numeric type, the Enumeration (read and set as Int64), the array (whole and by
/// element), the alias `position` as a port and a signal and `count_start` as a start value:
/// the motion is the exact solution of m ẍ = U (the force is constant, H = T) and every
/// integer comes back exactly, including Int64/UInt64 values beyond 2^40.
#[test]
fn every_numeric_type_enumerations_arrays_and_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let signals = json!({
        "x": "mass.x", "position": "mass.position", "v": "mass.v", "x32": "mass.x32",
        "i8": "mass.i8", "u8": "mass.u8", "i16": "mass.i16", "u16": "mass.u16", "i32": "mass.i32",
        "u32": "mass.u32", "i64": "mass.i64", "u64": "mass.u64", "moving": "mass.moving",
        "phase": "mass.phase", "gain": "mass.gain", "y": "mass.y", "y1": "mass.y[1]", "n": "mass.n"
    });
    let c0 = 5.0;
    let gain = 3.0;
    let system = network(&fmu, json!({"count_start": c0, "gain": gain, "m": typed_mass::M}), signals, 0.1);
    let (code, stderr, h, rows, calls) = run_cli(dir.path(), "types", &system);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(rows.len(), 11, "rows at 0, 0.01, ..., 0.1");
    assert!(!calls.is_empty(), "TYPED_MASS_CALLS recorded nothing");
    let time = column(&h, &rows, "time");
    let mut worst: f64 = 0.0;
    for (r, &t) in time.iter().enumerate() {
        let k = (t / T).round();
        let (x, v) = typed_mass::exact(U, t);
        let col = |name: &str| column(&h, &rows, name)[r];
        worst = worst.max((col("x") - x).abs()).max((col("v") - v).abs());
        assert!((col("x") - x).abs() <= 1e-12, "x({t}) = {}, exact {x}", col("x"));
        assert_eq!(col("position"), col("x"), "the alias reads the same variable");
        assert!((col("v") - v).abs() <= 1e-12, "v({t})");
        assert_eq!(col("x32"), col("x") as f32 as f64, "Float32 converted exactly");
        let n = k + c0;
        assert_eq!(col("i8"), -n, "Int8 at t = {t}");
        assert_eq!(col("u8"), 200.0 + n, "UInt8");
        assert_eq!(col("i16"), -1000.0 * n, "Int16");
        assert_eq!(col("u16"), 60000.0 + n, "UInt16");
        assert_eq!(col("i32"), -100000.0 * n, "Int32");
        assert_eq!(col("u32"), 4e9 + n, "UInt32");
        assert_eq!(col("i64"), -((1u64 << 40) as f64) - n, "Int64");
        assert_eq!(col("u64"), (1u64 << 50) as f64 + n, "UInt64");
        assert_eq!(col("moving"), if t > 0.0 { 1.0 } else { 0.0 }, "Boolean");
        assert_eq!(col("phase"), 1.0 + (n % 3.0), "Enumeration (fmi3GetInt64)");
        assert_eq!(col("gain"), gain, "Enumeration parameter set with fmi3SetInt64");
        assert_eq!(col("n"), 3.0, "the structural parameter");
        for e in 0..3 {
            assert_eq!(col(&format!("y[{e}]")), (e + 1) as f64 * gain * col("x"), "array element {e}");
        }
        assert_eq!(col("y1"), col("y[1]"));
    }
    println!("TypedMass FMI 3.0: max |error| of x, v against the exact solution: {worst:.1e}; calls: {}", calls.len());
    // The Enumeration was read and set only through the Int64 functions.
    assert!(calls.iter().any(|c| c == "fmi3SetInt64"), "gain not set with fmi3SetInt64: {calls:?}");
    assert!(calls.iter().any(|c| c == "fmi3GetInt64"));
    assert!(calls.iter().any(|c| c == "fmi3SetInt32"), "count_start (Int32) is set with fmi3SetInt32");
}

/// What cannot be done is refused before the FMU is even instantiated, naming the variable
/// and why: a String start value, a structural parameter that sizes an array, an array or a
/// non-Float64 variable as a port, a value out of an integer type's range, a fractional
/// Enumeration value, an array start value of the wrong length.
#[test]
fn unsupported_uses_are_refused_by_name_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let sig = json!({"x": "mass.x"});
    let cases: Vec<(Value, &str)> = vec![
        (network(&fmu, json!({"label": 1}), sig.clone(), 0.1), "'label' is a String variable, which cannot be set"),
        (network(&fmu, json!({"n": 4}), sig.clone(), 0.1), "'n' is a structural parameter giving the size of y"),
        (network(&fmu, json!({"c0": 3e9}), sig.clone(), 0.1), "3000000000 is not a value of 'c0', a Int32 variable"),
        (network(&fmu, json!({"gain": 1.5}), sig.clone(), 0.1), "1.5 is not a value of 'gain', a Enumeration variable"),
        (
            {
                let mut s = network(&fmu, json!({}), sig.clone(), 0.1);
                s["components"]["mass"]["outputs"]["position"] = json!("y");
                s
            },
            "'y' is an array",
        ),
        (
            {
                let mut s = network(&fmu, json!({}), sig.clone(), 0.1);
                s["components"]["mass"]["outputs"]["position"] = json!("label");
                s
            },
            "'label' is a String variable; ports map numeric and Boolean variables",
        ),
    ];
    for (k, (system, needle)) in cases.iter().enumerate() {
        let (code, stderr, _, _, calls) = run_cli(dir.path(), &format!("refused{k}"), system);
        assert_eq!(code, 2, "case {k}: {stderr}");
        assert!(stderr.contains(needle), "case {k}: expected {needle:?} in:\n{stderr}");
        assert!(calls.is_empty(), "case {k}: the FMU was called: {calls:?}");
    }
    // A signal naming an element past the end of the array, or a String variable.
    let (code, stderr, ..) = run_cli(dir.path(), "oob", &network(&fmu, json!({}), json!({"y": "mass.y[3]"}), 0.1));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("index 3 out of range: 'y' has 3 element(s)"), "{stderr}");
}

/// A termination request ends the run like FMPy: exit code 0, the last row at the last
/// successful time, and stderr names the FMU, the function and the time. FMI 3.0: the step
/// reaching stop_at is made and terminateSimulation set (last row at stop_at); FMI 2.0:
/// fmi2DoStep returns Discard for the step that would pass stop_at, fmi2Terminated is true and
/// fmi2LastSuccessfulTime is its start (last row at stop_at too).
#[test]
fn termination_requests_end_the_run_normally() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [3, 2] {
        let fmu = typed_mass::build(dir.path(), fmi);
        let system = network(&fmu, json!({"stop_at": 0.05}), json!({"x": "mass.x", "v": "mass.v"}), 0.1);
        let (code, stderr, h, rows, calls) = run_cli(dir.path(), &format!("stop{fmi}"), &system);
        assert_eq!(code, 0, "FMI {fmi}: {stderr}");
        let time = column(&h, &rows, "time");
        assert_eq!(time.len(), 6, "FMI {fmi}: rows at 0 .. 0.05: {time:?}");
        assert!((time[5] - 0.05).abs() < 1e-12, "FMI {fmi}: last row at {}", time[5]);
        let (x, _) = typed_mass::exact(U, 0.05);
        assert!((column(&h, &rows, "x")[5] - x).abs() < 1e-12, "FMI {fmi}: the last row holds x(0.05)");
        let func = if fmi == 3 { "fmi3DoStep" } else { "fmi2DoStep" };
        assert!(
            stderr.contains("stopped at t = 0.05 s")
                && stderr.contains("FMU 'TypedMass'")
                && stderr.contains(func)
                && stderr.contains("asked to end the simulation"),
            "FMI {fmi}: {stderr}"
        );
        if fmi == 2 {
            assert!(
                calls.iter().any(|c| c == "fmi2GetBooleanStatus") && calls.iter().any(|c| c == "fmi2GetRealStatus")
            );
        }
        println!("FMI {fmi}: {}", stderr.trim());
    }
}

/// In an FMU-only system the whole system stops at the earliest request: an FMI 3.0 instance
/// asking at 0.03 s and an FMI 2.0 one asking at 0.07 s end the run at 0.03 s. The master's
/// columns read the Enumeration and every element of the array too.
#[test]
fn fmu_only_systems_stop_at_the_earliest_request() {
    let dir = tempfile::tempdir().unwrap();
    let d3 = dir.path().join("3");
    let d2 = dir.path().join("2");
    std::fs::create_dir_all(&d3).unwrap();
    std::fs::create_dir_all(&d2).unwrap();
    let f3 = typed_mass::build(&d3, 3);
    let f2 = typed_mass::build(&d2, 2);
    let system = json!({
        "master": {"algorithm": "jacobi", "step": T, "stop_time": 0.1},
        "fmus": {
            "a": {"path": f3.to_str().unwrap(), "parameters": {"stop_at": 0.03, "u": U, "gain": 1}},
            "b": {"path": f2.to_str().unwrap(), "parameters": {"stop_at": 0.07, "u": U}}
        },
        "connections": [],
        "output": {"interval": T, "signals": {"xa": "a.x", "xb": "b.position", "phase": "a.phase", "y": "a.y"}}
    });
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "master", &system);
    assert_eq!(code, 0, "{stderr}");
    let time = column(&h, &rows, "time");
    assert!((time[time.len() - 1] - 0.03).abs() < 1e-12, "last row at {:?}", time.last());
    assert!(stderr.contains("asked by component 'a'") && stderr.contains("stopped at t = 0.03 s"), "{stderr}");
    let (x, _) = typed_mass::exact(U, 0.03);
    assert!((column(&h, &rows, "xa")[3] - x).abs() < 1e-12);
    assert!((column(&h, &rows, "xb")[3] - x).abs() < 1e-12, "FMI 2.0 alias 'position' of x");
    assert_eq!(column(&h, &rows, "phase")[3], 1.0, "1 + 3 mod 3");
    for e in 0..3 {
        assert_eq!(column(&h, &rows, &format!("y[{e}]"))[3], (e + 1) as f64 * column(&h, &rows, "xa")[3]);
    }
}

/// An FMU that returns Error in the middle of a run: exit code 1, the message names the FMU,
/// the function and carries the FMU's own log line; afterwards the instance is only freed
/// (no Terminate, no getter: the FMU records every call it gets).
#[test]
fn an_error_mid_run_is_the_last_call_but_free() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [3, 2] {
        let fmu = typed_mass::build(dir.path(), fmi);
        let signals = if fmi == 3 { json!({"x": "mass.x", "y": "mass.y"}) } else { json!({"x": "mass.x"}) };
        let system = network(&fmu, json!({"fail_at": 0.05}), signals, 0.1);
        let (code, stderr, _, rows, calls) = run_cli(dir.path(), &format!("error{fmi}"), &system);
        let step = format!("fmi{fmi}DoStep");
        assert_eq!(code, 1, "FMI {fmi}: {stderr}");
        assert!(
            stderr.contains(&format!("{step} returned Error")) && stderr.contains("the mass broke at t = 0.05 s"),
            "FMI {fmi}: {stderr}"
        );
        // The failing doStep (from 0.05 s) is made when the row at 0.05 s is sampled (with
        // Euler and H = T the output instant is the first stage of the next step).
        assert_eq!(rows.len(), 5, "FMI {fmi}: rows up to the failure (0 .. 0.04)");
        let failed = calls.iter().rposition(|c| *c == step).expect("a doStep");
        let free = format!("fmi{fmi}FreeInstance");
        assert_eq!(&calls[failed + 1..], [free.as_str()], "FMI {fmi}: calls after the Error: {:?}", &calls[failed..]);
        assert!(!stderr.contains("called after Error"), "{stderr}");
    }
}

/// The same description read by the library: aliases resolve to their variable, arrays have
/// their shape, the Enumeration is an Int64.
#[test]
fn the_description_knows_aliases_arrays_and_types() {
    use stiction::fmi_import::{ModelDescription, VarType};
    let text = std::fs::read_to_string(typed_mass::source_dir().join("modelDescription3.xml")).unwrap();
    let md = ModelDescription::parse(&text).unwrap();
    let x = md.find("position").unwrap();
    assert_eq!(md.variables[x].name, "x");
    assert_eq!(md.variables[md.find("count_start").unwrap()].name, "c0");
    let y = md.find("y").unwrap();
    assert_eq!(md.shape(y).unwrap(), vec![3]);
    assert_eq!(md.sized_by(md.find("n").unwrap()), vec![y]);
    assert_eq!(md.variables[md.find("phase").unwrap()].ty, VarType::Int64);
    assert_eq!(md.variables[md.find("x32").unwrap()].ty, VarType::Float32);
    assert_eq!(md.variables[md.find("label").unwrap()].ty, VarType::Other);
    let _ = common::example;
}

/// A port may take its motion from an element of an array output: position = y[2] = 3 x
/// (gain 1), seen by a spring on the port as its displacement.
#[test]
fn a_port_binds_to_an_array_element() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let mut system = network(&fmu, json!({"gain": 1}), json!({"d": "spring.d[0]", "x": "mass.x"}), 0.05);
    system["components"]["mass"]["outputs"]["position"] = json!("y[2]");
    system["components"]["spring"] = json!({"type": "spring_damper", "K": 1e-9});
    system["connections"]
        .as_array_mut()
        .unwrap()
        .extend([json!({"from": "spring.b", "to": "mass.port"}), json!({"from": "spring.a", "to": "ground"})]);
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "element", &system);
    assert_eq!(code, 0, "{stderr}");
    let (d, x) = (column(&h, &rows, "d"), column(&h, &rows, "x"));
    assert!(x[5] > 0.0);
    for (d, x) in d.iter().zip(&x) {
        assert_eq!(*d, 3.0 * x, "the port's position is y[2] = 3 x");
    }
    // Not an output as an input, and not past the end.
    for (key, var, needle) in [
        ("position", "y[3]", "'y' has 3 elements"),
        ("position", "y", "a port maps one of them"),
        ("force", "y[0]", "has causality 'output'; this mapping needs an FMU input"),
    ] {
        let mut s = system.clone();
        if key == "force" {
            s["components"]["mass"]["inputs"]["force"] = json!(var);
        } else {
            s["components"]["mass"]["outputs"]["position"] = json!(var);
        }
        let (code, stderr, ..) = run_cli(dir.path(), "element-bad", &s);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
    }
}

/// One extraction per FMU file and run: two components naming the same .fmu share one
/// unpacked directory (each instance still loads its own copy of the binary), both run, and
/// the directory goes when the last of them is dropped.
#[test]
fn components_share_one_extraction_of_an_fmu() {
    use stiction::fmi_schema::Archive;
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let a = Archive::shared(&fmu, "a").unwrap();
    let b = Archive::shared(&fmu, "b").unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b), "the second open reuses the first extraction");
    let unpacked = a.dir().to_path_buf();
    assert!(unpacked.join("binaries/x86_64-linux/TypedMass.so").is_file());
    assert!(!unpacked.join("modelDescription.xml").exists(), "modelDescription.xml is read into memory only");
    drop(a);
    assert!(unpacked.is_dir());
    drop(b);
    assert!(!unpacked.exists(), "removed with the last user");

    // Two components of the same FMU in one network: both move as the exact solution.
    let mut system = network(&fmu, json!({}), json!({"x1": "mass.x", "x2": "mass2.x"}), 0.05);
    system["components"]["mass2"] = system["components"]["mass"].clone();
    system["connections"].as_array_mut().unwrap().push(json!({"from": "push2.body", "to": "mass2.port"}));
    system["components"]["push2"] = json!({"type": "force_source", "force": U});
    let (code, stderr, h, rows, calls) = run_cli(dir.path(), "shared", &system);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(calls.iter().filter(|c| *c == "fmi3InstantiateCoSimulation").count(), 2);
    let (x, _) = typed_mass::exact(U, 0.05);
    for c in ["x1", "x2"] {
        assert!((column(&h, &rows, c)[5] - x).abs() < 1e-12, "{c}");
    }
}

/// Float32 variables are ports too: the force fed to the Float32 input f32in, the position
/// read from the Float32 output x32 (the motion is the exact one, rounded to f32 where read).
#[test]
fn float32_variables_are_ports() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let mut system = network(&fmu, json!({}), json!({"d": "spring.d[0]", "x": "mass.x", "x32": "mass.x32"}), 0.05);
    system["components"]["mass"]["inputs"]["force"] = json!("f32in");
    system["components"]["mass"]["outputs"]["position"] = json!("x32");
    system["components"]["spring"] = json!({"type": "spring_damper", "K": 1e-9});
    system["connections"]
        .as_array_mut()
        .unwrap()
        .extend([json!({"from": "spring.b", "to": "mass.port"}), json!({"from": "spring.a", "to": "ground"})]);
    let (code, stderr, h, rows, calls) = run_cli(dir.path(), "f32", &system);
    assert_eq!(code, 0, "{stderr}");
    assert!(calls.iter().any(|c| c == "fmi3SetFloat32") && calls.iter().any(|c| c == "fmi3GetFloat32"));
    let (d, x) = (column(&h, &rows, "d"), column(&h, &rows, "x"));
    let (xe, _) = typed_mass::exact(U, 0.05);
    assert!((x[5] - xe).abs() < 1e-12 * xe.max(1.0) + 1e-9, "x(0.05) = {}, exact {xe}", x[5]);
    for (d, x) in d.iter().zip(&x) {
        assert_eq!(*d, *x as f32 as f64, "the port's position is x as Float32");
    }
}

/// Model Exchange: fmi3CompletedIntegratorStep asks to terminate once the time reaches
/// stop_at; the run ends there normally (exit 0, last row at 0.05 s), and the motion up to it
/// is the network's Euler integration of the FMU's derivatives.
#[test]
fn model_exchange_termination_ends_the_run_normally() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let mut system = network(&fmu, json!({"stop_at": 0.05}), json!({"x": "mass.x", "v": "mass.v"}), 0.1);
    system["components"]["mass"]["interface"] = json!("me");
    system["components"]["mass"]["outputs"]["position"] = json!("x");
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "me-stop", &system);
    // The same through the event iteration: a time event at 0.03 s where
    // fmi3UpdateDiscreteStates sets terminateSimulation.
    let mut by_event = system.clone();
    by_event["components"]["mass"]["parameters"] = json!({"event_stop_at": 0.03});
    let (code2, stderr2, h2, rows2, _) = run_cli(dir.path(), "me-event-stop", &by_event);
    assert_eq!(code2, 0, "{stderr2}");
    let time2 = column(&h2, &rows2, "time");
    assert!((time2[time2.len() - 1] - 0.03).abs() < 1e-12, "last row at {time2:?}");
    assert!(stderr2.contains("stopped at t = 0.03 s") && stderr2.contains("fmi3UpdateDiscreteStates"), "{stderr2}");
    assert_eq!(code, 0, "{stderr}");
    let time = column(&h, &rows, "time");
    assert_eq!(time.len(), 6, "rows at 0 .. 0.05: {time:?}");
    assert!(stderr.contains("stopped at t = 0.05 s") && stderr.contains("fmi3CompletedIntegratorStep"), "{stderr}");
    // Euler: v_k = k T U/m, x_k = T Σ_{j<k} v_j = T² U/m k(k-1)/2.
    let (x, v) = (column(&h, &rows, "x"), column(&h, &rows, "v"));
    for k in 0..6 {
        let kf = k as f64;
        assert!((v[k] - kf * T * U / typed_mass::M).abs() < 1e-12, "v at step {k}");
        assert!((x[k] - T * T * U / typed_mass::M * kf * (kf - 1.0) / 2.0).abs() < 1e-12, "x at step {k}");
    }
}

/// An element of an array input may take a port's force: fa[0] gets the push U, fa[1] keeps
/// the start value 5 N given as an array start value `[0, 5]` (setting the element sets the
/// whole array, with the other element as the FMU had it after initialization), so the mass
/// moves under U + 5 N exactly. Two ports may feed the two elements (the mass then moves under
/// U + 2 N from two force sources); one element mapped twice is refused.
#[test]
fn an_array_input_element_takes_a_force() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let mut system = network(&fmu, json!({"fa": [0, 5]}), json!({"x": "mass.x", "fa": "mass.fa"}), 0.05);
    system["components"]["mass"]["inputs"]["force"] = json!("fa[0]");
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "array-input", &system);
    assert_eq!(code, 0, "{stderr}");
    let x = column(&h, &rows, "x");
    let (xe, _) = typed_mass::exact(U + 5.0, 0.05);
    assert!((x[5] - xe).abs() < 1e-12, "x(0.05) = {}, exact {xe}", x[5]);
    assert_eq!(column(&h, &rows, "fa[1]")[5], 5.0);
    assert_eq!(column(&h, &rows, "fa[0]")[5], U, "the signal of a fed input is the port's value");
    let mut two = system.clone();
    two["components"]["mass"].as_object_mut().unwrap().remove("inputs");
    two["components"]["mass"].as_object_mut().unwrap().remove("outputs");
    two["components"]["mass"]["parameters"] = json!({});
    two["components"]["mass"]["ports"] = json!({
        "port": {"force": "fa[0]", "position": "x", "velocity": "v"},
        "second": {"force": "fa[1]"}
    });
    two["components"]["push2"] = json!({"type": "force_source", "force": 2.0});
    two["connections"].as_array_mut().unwrap().push(json!({"from": "push2.body", "to": "mass.second"}));
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "array-input-two", &two);
    assert_eq!(code, 0, "{stderr}");
    let (xe, _) = typed_mass::exact(U + 2.0, 0.05);
    assert!((column(&h, &rows, "x")[5] - xe).abs() < 1e-12, "x(0.05) = {:?}, exact {xe}", column(&h, &rows, "x"));
    assert_eq!(column(&h, &rows, "fa[0]")[5], U);
    assert_eq!(column(&h, &rows, "fa[1]")[5], 2.0);
    let mut twice = two.clone();
    twice["components"]["mass"]["ports"]["second"] = json!({"force": "fa[0]"});
    let (code, stderr, ..) = run_cli(dir.path(), "array-input-twice", &twice);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("FMU input 'fa[0]' is mapped twice (the same element of an array input)"), "{stderr}");
}

/// Integer and Boolean inputs as ports (the rule, docs/reference/fmu-import.md): the force on the
/// mass fed to the Int16 input `ni` (FMI 3.0) or the Integer input `ni` (FMI 2.0) as the
/// whole number it is (3 N: the motion is the exact one), to the Boolean input `bi` as 1
/// (true: the FMU adds 1 N); a force that is not a value of the input's type (2.5 N for an
/// integer, 3 N for a Boolean) stops the run with exit 1 and a message naming the time, the
/// component, the variable, the value and the rule — it is never rounded.
#[test]
fn integer_and_boolean_inputs_are_ports() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [3, 2] {
        let d = dir.path().join(format!("{fmi}"));
        std::fs::create_dir_all(&d).unwrap();
        let fmu = typed_mass::build(&d, fmi);
        let (setter_i, setter_b) =
            if fmi == 3 { ("fmi3SetInt16", "fmi3SetBoolean") } else { ("fmi2SetInteger", "fmi2SetBoolean") };
        for (input, push, setter) in [("ni", U, setter_i), ("bi", 1.0, setter_b)] {
            let mut system = network(&fmu, json!({}), json!({"x": "mass.x", "fed": format!("mass.{input}")}), 0.05);
            system["components"]["mass"]["inputs"]["force"] = json!(input);
            system["components"]["push"]["force"] = json!(push);
            let (code, stderr, h, rows, calls) = run_cli(&d, &format!("{input}-port"), &system);
            assert_eq!(code, 0, "FMI {fmi} {input}: {stderr}");
            assert!(calls.iter().any(|c| c == setter), "FMI {fmi}: {setter} not called: {calls:?}");
            let x = column(&h, &rows, "x");
            let (xe, _) = typed_mass::exact(push, 0.05);
            assert!((x[5] - xe).abs() < 1e-12, "FMI {fmi} {input}: x(0.05) = {}, exact {xe}", x[5]);
            assert!(column(&h, &rows, "fed").iter().all(|&f| f == push), "FMI {fmi} {input}: fed {push}");
        }
        for (input, push, rule) in [
            (
                "ni",
                2.5,
                if fmi == 3 {
                    "Int16 variable takes a whole number from -32768 to 32767"
                } else {
                    "Int32 variable takes a whole number"
                },
            ),
            ("bi", 3.0, "a Boolean variable takes exactly 0 (false) or 1 (true)"),
        ] {
            let mut system = network(&fmu, json!({}), json!({"x": "mass.x"}), 0.05);
            system["components"]["mass"]["inputs"]["force"] = json!(input);
            system["components"]["push"]["force"] = json!(push);
            let (code, stderr, _, _, calls) = run_cli(&d, &format!("{input}-bad"), &system);
            assert_eq!(code, 1, "FMI {fmi} {input}: {stderr}");
            for needle in [
                "at t = 0 s",
                "component 'mass'",
                "FMU 'TypedMass'",
                &format!("{push} is not a value of '{input}'"),
                rule,
            ] {
                assert!(stderr.contains(needle), "FMI {fmi} {input}: expected {needle:?} in:\n{stderr}");
            }
            let set = if input == "ni" { setter_i } else { setter_b };
            assert!(!calls.iter().any(|c| c == set), "FMI {fmi}: the bad value reached the FMU: {calls:?}");
        }
    }
}

/// Integer and Boolean outputs as ports convert exactly: the position of the port is the
/// Int64 output i64 = -(2^40 + k) (k the steps made), which the spring's displacement shows
/// bit for bit, and its velocity the Boolean output `moving` (0 at rest, then 1), which a
/// damper B = 1 N·s/m turns into a force of B × moving.
#[test]
fn integer_and_boolean_outputs_are_ports() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let mut system = network(
        &fmu,
        json!({}),
        json!({"d": "spring.d[0]", "f": "spring.f[0]", "i64": "mass.i64", "moving": "mass.moving"}),
        0.05,
    );
    system["components"]["mass"]["outputs"]["position"] = json!("i64");
    system["components"]["mass"]["outputs"]["velocity"] = json!("moving");
    system["components"]["spring"] = json!({"type": "spring_damper", "K": 1e-30, "B": 1.0});
    system["connections"]
        .as_array_mut()
        .unwrap()
        .extend([json!({"from": "spring.b", "to": "mass.port"}), json!({"from": "spring.a", "to": "ground"})]);
    let (code, stderr, h, rows, calls) = run_cli(dir.path(), "int-out", &system);
    assert_eq!(code, 0, "{stderr}");
    assert!(calls.iter().any(|c| c == "fmi3GetInt64") && calls.iter().any(|c| c == "fmi3GetBoolean"));
    let (d, i64_) = (column(&h, &rows, "d"), column(&h, &rows, "i64"));
    for (k, (d, i)) in d.iter().zip(&i64_).enumerate() {
        assert_eq!(*d, *i, "row {k}: the port's position is the Int64 output exactly");
        assert!(*i <= -(2f64.powi(40)), "row {k}: i64 = {i}");
    }
    let (f, moving) = (column(&h, &rows, "f"), column(&h, &rows, "moving"));
    assert_eq!(moving[0], 0.0, "at rest at t = 0");
    assert!(moving[1..].iter().all(|&m| m == 1.0), "moving after the first step: {moving:?}");
    for (k, (f, m)) in f.iter().zip(&moving).enumerate() {
        assert!((f.abs() - m).abs() < 1e-12, "row {k}: damper force {f}, Boolean velocity {m}");
    }
}

/// FMU-only systems connect every numeric type and Boolean, and array elements: a.i8 (Int8
/// = -k) → b.ni (Int16), a.moving (Boolean) → b.bi, a.y[1] (Float64 array element, 2·gain·x)
/// → b.fa[0] (array input element; fa[1] keeps its start value 0.5), a.x32 (Float32) →
/// b.f32in (Float32). With Jacobi every input takes its source's value at t_k, so b moves
/// under F_k = -k + [k ≥ 1] + 4 x_a(t_k) + f32(x_a(t_k)) + 0.5, integrated exactly over each
/// step; b's x matches that to rounding. Connections that could carry a value the input
/// cannot hold are refused at load, naming both ends.
#[test]
fn fmu_only_connections_of_every_type() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let master = |conns: Value| {
        json!({
            "master": {"algorithm": "jacobi", "step": T, "stop_time": 0.1},
            "fmus": {
                "a": {"path": fmu.to_str().unwrap(), "parameters": {"u": U}},
                "b": {"path": fmu.to_str().unwrap(), "parameters": {"fa": [0, 0.5]}}
            },
            "connections": conns,
            "output": {"interval": T, "signals": {"xa": "a.x", "xb": "b.x", "ni": "b.ni", "bi": "b.bi", "fa": "b.fa"}}
        })
    };
    let good = json!([
        {"from": "a.i8", "to": "b.ni"},
        {"from": "a.moving", "to": "b.bi"},
        {"from": "a.y[1]", "to": "b.fa[0]"},
        {"from": "a.x32", "to": "b.f32in"}
    ]);
    let (code, stderr, h, rows, calls) = run_cli(dir.path(), "typed-conns", &master(good));
    assert_eq!(code, 0, "{stderr}");
    for f in ["fmi3SetInt16", "fmi3SetBoolean", "fmi3GetInt8", "fmi3SetFloat32"] {
        assert!(calls.iter().any(|c| c == f), "{f} not called");
    }
    let (xa, xb) = (column(&h, &rows, "xa"), column(&h, &rows, "xb"));
    assert_eq!(column(&h, &rows, "fa[1]")[10], 0.5, "the unconnected element keeps its start value");
    let m = typed_mass::M;
    let (mut x, mut v) = (0.0f64, 0.0f64);
    for k in 0..10 {
        assert!((xb[k] - x).abs() < 1e-12, "step {k}: b.x = {}, expected {x}", xb[k]);
        let kf = k as f64;
        let f = -kf + if k >= 1 { 1.0 } else { 0.0 } + 4.0 * xa[k] + (xa[k] as f32) as f64 + 0.5;
        assert_eq!(column(&h, &rows, "ni")[k], -kf, "b.ni at step {k}");
        x += v * T + f * T * T / (2.0 * m);
        v += f * T / m;
    }
    assert!((xb[10] - x).abs() < 1e-12, "b.x(0.1) = {}, expected {x}", xb[10]);
    let bad: Vec<(Value, &str)> = vec![
        (json!({"from": "a.x", "to": "b.ni"}), "cannot connect 'a.x' (Float64) to 'b.ni' (Int16)"),
        (json!({"from": "a.i64", "to": "b.ni"}), "cannot connect 'a.i64' (Int64) to 'b.ni' (Int16)"),
        (json!({"from": "a.i8", "to": "b.bi"}), "cannot connect 'a.i8' (Int8) to 'b.bi' (Boolean)"),
        (json!({"from": "a.i8", "to": "b.ni", "gain": 2}), "gain 1, not 2"),
        (json!({"from": "a.y", "to": "b.fa"}), "'a.y' has 3 elements and 'b.fa' 2"),
        (json!({"from": "a.y", "to": "b.u"}), "'a.y' is a whole array"),
        (json!({"from": "a.y[3]", "to": "b.u"}), "'y' has 3 elements"),
    ];
    for (k, (conn, needle)) in bad.into_iter().enumerate() {
        let (code, stderr, _, _, _) = run_cli(dir.path(), &format!("bad-conn{k}"), &master(json!([conn])));
        assert_eq!(code, 2, "case {k}: {stderr}");
        assert!(
            stderr.contains(needle) && stderr.contains("connections[0]"),
            "case {k}: expected {needle:?} in:\n{stderr}"
        );
    }
}

/// FMI 2.0 Model Exchange termination requests: fmi2CompletedIntegratorStep asks once the
/// time reaches stop_at (0.05 s), fmi2NewDiscreteStates at the time event event_stop_at
/// (0.03 s). Each run ends there with exit 0, the last row at that time, and stderr names
/// the FMU, the function and the time; the motion up to it is the Euler integration of the
/// FMU's derivatives.
#[test]
fn fmi2_model_exchange_termination_ends_the_run_normally() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 2);
    let mut system = network(&fmu, json!({"stop_at": 0.05}), json!({"x": "mass.x", "v": "mass.v"}), 0.1);
    system["components"]["mass"]["interface"] = json!("me");
    system["components"]["mass"]["outputs"]["position"] = json!("x");
    let (code, stderr, h, rows, calls) = run_cli(dir.path(), "me2-stop", &system);
    assert_eq!(code, 0, "{stderr}");
    assert!(calls.iter().any(|c| c == "fmi2CompletedIntegratorStep"), "{calls:?}");
    let time = column(&h, &rows, "time");
    assert_eq!(time.len(), 6, "rows at 0 .. 0.05: {time:?}");
    assert!((time[5] - 0.05).abs() < 1e-12);
    for needle in
        ["stopped at t = 0.05 s", "FMU 'TypedMass'", "fmi2CompletedIntegratorStep", "asked to end the simulation"]
    {
        assert!(stderr.contains(needle), "expected {needle:?} in:\n{stderr}");
    }
    let (x, v) = (column(&h, &rows, "x"), column(&h, &rows, "v"));
    for k in 0..6 {
        let kf = k as f64;
        assert!((v[k] - kf * T * U / typed_mass::M).abs() < 1e-12, "v at step {k}");
        assert!((x[k] - T * T * U / typed_mass::M * kf * (kf - 1.0) / 2.0).abs() < 1e-12, "x at step {k}");
    }
    let mut by_event = system.clone();
    by_event["components"]["mass"]["parameters"] = json!({"event_stop_at": 0.03});
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "me2-event-stop", &by_event);
    assert_eq!(code, 0, "{stderr}");
    let time = column(&h, &rows, "time");
    assert!((time[time.len() - 1] - 0.03).abs() < 1e-12, "last row at {time:?}");
    for needle in ["stopped at t = 0.03 s", "FMU 'TypedMass'", "fmi2NewDiscreteStates"] {
        assert!(stderr.contains(needle), "expected {needle:?} in:\n{stderr}");
    }
}

/// `run X.fmu` on an FMI 2.0 FMU whose output is named `k[1]` (a scalar of that literal
/// name, as FMI 2.0 tools flatten arrays): the column is there, with the FMU's values
/// (k = steps made).
#[test]
fn run_fmu_keeps_fmi2_names_with_brackets() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build_with(dir.path(), 2, |x| x.replace("name=\"k\"", "name=\"k[1]\""));
    let csv = dir.path().join("brackets.csv");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", fmu.to_str().unwrap(), "--stop-time", "0.05", "--step", "0.01", "-o", csv.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "k[1]").unwrap_or_else(|| panic!("no column k[1] in {header:?}"));
    let k: Vec<f64> = lines.map(|l| l.split(',').nth(col).unwrap().trim().parse().unwrap()).collect();
    assert_eq!(k, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "k[1] counts the steps");
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "extraction directory left");
}

/// Integers are carried exactly or not at all: with u64_base = 2^53 the UInt64 output u64 is
/// 2^53 at t = 0 (an f64 holds it) and 2^53 + 1 after the first step (an f64 cannot): the run
/// stops with exit 1, naming the variable, its value and the reason, instead of writing a
/// rounded number. (With Euler and H = T the step from t = 0 is made before the row at 0 is
/// written, so no row is written.)
#[test]
fn a_64_bit_integer_that_f64_cannot_hold_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let big = 2f64.powi(53);
    let system = network(&fmu, json!({"u64_base": big}), json!({"u64": "mass.u64"}), 0.05);
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "u64-inexact", &system);
    assert_eq!(code, 1, "{stderr}");
    assert!(column(&h, &rows, "u64").iter().all(|&x| x == big), "only exact values written: {rows:?}");
    for needle in ["component 'mass'", "fmi3GetUInt64 'u64' has the value 9007199254740993", "cannot hold exactly"] {
        assert!(stderr.contains(needle), "expected {needle:?} in:\n{stderr}");
    }
}

/// Signal blocks that ask to end the simulation end the run normally at the earliest
/// request, as the FMU-only master ends: an FMI 3.0 block asking at 0.03 s and an FMI 2.0
/// one asking at 0.07 s end the run at 0.03 s with that row, exit 0 (framework/src/output/run.rs).
#[test]
fn signal_blocks_stop_the_run_at_the_earliest_request() {
    let dir = tempfile::tempdir().unwrap();
    let (d3, d2) = (dir.path().join("3"), dir.path().join("2"));
    std::fs::create_dir_all(&d3).unwrap();
    std::fs::create_dir_all(&d2).unwrap();
    let (f3, f2) = (typed_mass::build(&d3, 3), typed_mass::build(&d2, 2));
    let system = json!({
        "solver": {"method": "euler", "step": T, "stop_time": 0.1},
        "components": {
            "a": {"type": "fmu", "role": "signal", "path": f3.to_str().unwrap(), "parameters": {"stop_at": 0.03, "u": U}},
            "b": {"type": "fmu", "role": "signal", "path": f2.to_str().unwrap(), "parameters": {"stop_at": 0.07, "u": U}}
        },
        "output": {"interval": T, "signals": {"xa": "a.x", "xb": "b.x"}}
    });
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "blocks-stop", &system);
    assert_eq!(code, 0, "{stderr}");
    let time = column(&h, &rows, "time");
    assert!((time[time.len() - 1] - 0.03).abs() < 1e-12, "last row at {:?}", time.last());
    assert!(stderr.contains("stopped at t = 0.03 s, asked by component 'a'"), "{stderr}");
    let (x, _) = typed_mass::exact(U, 0.03);
    assert!((column(&h, &rows, "xa")[3] - x).abs() < 1e-12 && (column(&h, &rows, "xb")[3] - x).abs() < 1e-12);
}

/// An FMI 3.0 `<Alias>` names its variable wherever a signal block's output is read or an
/// FMU-only system connects or records it (`mass.position` is `mass.x`); an FMU with a String
/// output runs alone (`stiction run X.fmu`) with its numeric outputs as the columns.
#[test]
fn aliases_of_signal_blocks_and_string_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    // A signal block read by its alias, and a signal connection into its input.
    let block = json!({
        "solver": {"method": "euler", "step": T, "stop_time": 0.1},
        "inputs": {"push": {"start": U}},
        "output": {"interval": T, "signals": {"x": "mass.x", "position": "mass.position"}},
        "components": {"mass": {"type": "fmu", "path": fmu.to_str().unwrap(), "role": "signal",
                                 "parameters": {"m": typed_mass::M}}},
        "connections": [{"from": "push", "to": "mass.u"}]
    });
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "alias-block", &block);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(column(&h, &rows, "position"), column(&h, &rows, "x"));
    assert!(column(&h, &rows, "x").last().copied().unwrap_or_default() > 0.0, "the input pushed the mass");
    // An FMU-only system that records the alias.
    let only = json!({
        "master": {"step": T, "stop_time": 0.1},
        "fmus": {"mass": {"path": fmu.to_str().unwrap(), "parameters": {"u": U}}},
        "output": {"signals": {"x": "mass.x", "position": "mass.position"}}
    });
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "alias-only", &only);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(column(&h, &rows, "position"), column(&h, &rows, "x"));
    // A String output is left out of the columns of the FMU run alone.
    let with_string = typed_mass::build_with(dir.path(), 3, |xml| {
        xml.replace(
            r#"causality="parameter" variability="fixed"><Start value="mass"/>"#,
            r#"causality="output" variability="fixed"><Start value="mass"/>"#,
        )
    });
    let out = dir.path().join("alone.csv");
    let o = common::cli(&["run", with_string.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.starts_with("time,x,v,") && !header.contains("label"), "{header}");
}

/// A system exported as an FMU passes a component's request to end the run out as FMI says:
/// the TypedMass inside asks at 0.05 s; the system FMU's doStep ends there with
/// fmi2Discard + fmi2Terminated (FMI 2.0) or terminateSimulation (FMI 3.0), and a master (here
/// stiction's own importer, `stiction run sys.fmu`) ends normally with the rows of the system
/// run itself.
#[test]
fn a_system_fmu_passes_a_components_stop_request_out() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let system = network(&fmu, json!({"stop_at": 0.05}), json!({"x": "mass.x", "v": "mass.v"}), 0.1);
    let (code, stderr, h, rows, _) = run_cli(dir.path(), "inner", &system);
    assert_eq!(code, 0, "{stderr}");
    let direct_x = column(&h, &rows, "x");
    for fmi in ["2", "3"] {
        let sys = dir.path().join(format!("sys{fmi}.fmu"));
        let o = common::cli(&[
            "fmu",
            "export",
            dir.path().join("inner.json").to_str().unwrap(),
            "--fmi",
            fmi,
            "-o",
            sys.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = dir.path().join(format!("sys{fmi}.csv"));
        let o = common::cli(&["run", sys.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "FMI {fmi}: {stderr}");
        assert!(
            stderr.contains("asked to end the simulation") || stderr.contains("stopped at t = 0.05"),
            "FMI {fmi}: {stderr}"
        );
        let text = std::fs::read_to_string(&out).unwrap();
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
        let rows: Vec<Vec<f64>> =
            lines.map(|l| l.split(',').map(|x| x.parse().unwrap_or(f64::NAN)).collect()).collect();
        let time = column(&header, &rows, "time");
        assert!((time.last().unwrap() - 0.05).abs() < 1e-12, "FMI {fmi}: the run ends at {time:?}");
        assert_eq!(column(&header, &rows, "x"), direct_x, "FMI {fmi}: the rows of the system run");
    }
}
