//! An FMU whose own code ends the process (issue 33, item 1), with the TypedMass test FMU
//! (tests/fixtures/typed_mass: its doStep that would pass `crash_at` segfaults, aborts,
//! calls exit(7) or hangs, as `crash_how` says) as a Co-Simulation admittance in a 0.01 s
//! network, crashing in the step from 0.04 s to 0.05 s.
//!
//! In stiction's process (the default) the crash ends stiction, but every row computed
//! before it is in the CSV (write-through) and the extraction directory is removed (the
//! reaper). With `"isolation": "process"` the run ends with exit code 1 and a message naming
//! the component, the time and the signal, status or timeout, the rows before it kept and
//! nothing left in TMPDIR. Isolated runs give the same numbers as in-process runs.

// Both fixtures include tests/fixtures/c_fmu.rs, the shared C build.
#![allow(clippy::duplicate_mod)]

#[path = "fixtures/typed_mass/mod.rs"]
mod typed_mass;

#[path = "fixtures/pi_controller/mod.rs"]
mod pi_controller;

mod common;

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How the FMU ends its process (`crash_how`), what the isolated run's message names, and
/// how the in-process run ends (signal or exit code).
const CASES: [(&str, f64, &str, Ending); 3] = [
    ("segfault", 1.0, "ended by signal 11 (SIGSEGV)", Ending::Signal(11)),
    ("abort", 2.0, "ended by signal 6 (SIGABRT)", Ending::Signal(6)),
    ("exit", 3.0, "exited with status 7", Ending::Code(7)),
];

#[derive(Clone, Copy, Debug)]
enum Ending {
    Signal(i32),
    Code(i32),
}

/// TypedMass (FMI `fmi`) pushed by 3 N, crashing as `how` says at 0.05 s (none if 0).
fn network(fmu: &Path, how: f64, isolation: Option<Value>, interface: &str, stop: f64) -> Value {
    let mut mass = json!({"type": "fmu", "path": fmu.to_str().unwrap(), "role": "admittance", "interface": interface,
                          "inputs": {"force": "u"}, "outputs": {"position": "x", "velocity": "v"}});
    if interface == "cs" {
        mass["parameters"] = json!({"crash_at": 0.05, "crash_how": how});
    }
    if let Some(Value::Object(keys)) = isolation {
        for (k, v) in keys {
            mass[k] = v;
        }
    }
    json!({
        "solver": {"method": "euler", "step": 0.01, "stop_time": stop},
        "output": {"interval": 0.01, "signals": {"x": "mass.x", "v": "mass.v"}},
        "components": {"mass": mass, "push": {"type": "force_source", "force": 3.0}},
        "connections": [{"from": "push.body", "to": "mass.port"}]
    })
}

/// Write `system` as `dir/name.json`, run it with TMPDIR `tmp` and return the output and
/// the CSV's text. The CLI's standard error is read to its end, so the reaper (which
/// shares it) has finished too.
fn run(dir: &Path, name: &str, system: &Value, tmp: &Path) -> (Output, String) {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, system.to_string()).unwrap();
    let csv = dir.join(format!("{name}.csv"));
    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
        .env("TMPDIR", tmp)
        .output()
        .unwrap();
    (out, std::fs::read_to_string(&csv).unwrap_or_default())
}

fn fresh_tmp(dir: &Path, name: &str) -> std::path::PathBuf {
    let tmp = dir.join(format!("tmp-{name}"));
    std::fs::create_dir(&tmp).unwrap();
    tmp
}

fn assert_empty(tmp: &Path, what: &str) {
    let left: Vec<_> = std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{what}: left in TMPDIR: {left:?}");
}

/// The CSV holds exactly the rows at t = 0, 0.01, ..., 0.04, with the exact motion of the
/// mass under 3 N (integrated exactly by the FMU). (In a network, the row at 0.05 s is
/// never computed: its output probe is the first stage of the next step, whose doStep
/// crashes, as `Clock::first_stage` says for Euler.)
fn assert_five_rows(csv: &str, what: &str) {
    assert_rows(csv, 5, what)
}

/// The CSV holds exactly `n` rows, at t = 0, 0.01, ..., with the exact motion.
fn assert_rows(csv: &str, n: usize, what: &str) {
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.first(), Some(&"time,x,v"), "{what}: {csv}");
    assert_eq!(lines.len(), n + 1, "{what}: expected the header and {n} rows:\n{csv}");
    for (k, line) in lines[1..].iter().enumerate() {
        let f: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let t = k as f64 * 0.01;
        let (x, v) = typed_mass::exact(3.0, t);
        assert!(
            (f[0] - t).abs() < 1e-12 && (f[1] - x).abs() < 1e-12 && (f[2] - v).abs() < 1e-12,
            "{what}: row {k}: {line}"
        );
    }
}

/// In stiction's process: the segfault (the reported case), abort() and exit() end the process
/// as they do, yet the five rows computed before are in the CSV and no directory is left.
#[test]
fn a_crash_in_process_keeps_every_row_and_leaves_no_directory() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    for fmi in [2, 3] {
        let fmu = typed_mass::build(dir.path(), fmi);
        for (name, how, _, ending) in CASES {
            let what = format!("FMI {fmi}, {name}, in process");
            let tmp = fresh_tmp(dir.path(), &format!("{fmi}-{name}"));
            let (out, csv) = run(dir.path(), &format!("{fmi}-{name}"), &network(&fmu, how, None, "cs", 1.0), &tmp);
            let err = String::from_utf8_lossy(&out.stderr);
            match ending {
                Ending::Signal(s) => assert_eq!(out.status.signal(), Some(s), "{what}: {:?} {err}", out.status),
                Ending::Code(c) => assert_eq!(out.status.code(), Some(c), "{what}: {err}"),
            }
            assert_five_rows(&csv, &what);
            assert_empty(&tmp, &what);
        }
    }
}

/// The matrix `data_2` of a MATLAB v4 results file: (values per sample, samples as the
/// header counts them, the samples' times).
fn mat_data2(bytes: &[u8]) -> (usize, usize, Vec<f64>) {
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
    let mut at = 0;
    loop {
        let (ty, rows, cols, name_len) = (u32_at(at), u32_at(at + 4), u32_at(at + 8), u32_at(at + 16));
        let name = &bytes[at + 20..at + 20 + name_len - 1];
        let data = at + 20 + name_len;
        let size = match (ty / 10) % 10 {
            0 => 8,
            2 => 4,
            _ => 1,
        };
        if name == b"data_2" {
            let times = (0..cols)
                .map(|c| f64::from_le_bytes(bytes[data + c * rows * 8..data + c * rows * 8 + 8].try_into().unwrap()))
                .collect();
            return (rows, cols, times);
        }
        at = data + rows * cols * size;
    }
}

/// Results as .mat: the header's sample count is written through with each sample, so the
/// file read after the segfault holds the five samples.
#[test]
fn a_crash_in_process_keeps_every_sample_of_a_mat_file() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 2);
    let tmp = fresh_tmp(dir.path(), "mat");
    let path = dir.path().join("mat.json");
    std::fs::write(&path, network(&fmu, 1.0, None, "cs", 1.0).to_string()).unwrap();
    let mat = dir.path().join("mat.mat");
    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", mat.to_str().unwrap(), "--quiet"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let bytes = std::fs::read(&mat).unwrap();
    let (per_sample, samples, times) = mat_data2(&bytes);
    assert_eq!((per_sample, samples), (3, 5), "time, x, v in 5 samples");
    assert_eq!(times, [0.0, 0.01, 0.02, 0.03, 0.04]);
    assert_empty(&tmp, "mat");
}

/// A run of TypedMass (in stiction's process) hanging inside its sixth doStep, started under
/// `tmp` (its TMPDIR) with its CSV at the returned path; returns once the five rows before
/// the hang are in the CSV (written through as they are computed, not held in a buffer).
fn hanging_run(dir: &Path, tmp: &Path) -> (std::process::Child, std::path::PathBuf) {
    let fmu = typed_mass::build(dir, 2);
    let path = dir.join("hang.json");
    std::fs::write(&path, network(&fmu, 4.0, None, "cs", 1.0).to_string()).unwrap();
    let csv = dir.join("hang.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
        .env("TMPDIR", tmp)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::fs::read_to_string(&csv).unwrap_or_default().lines().count() < 6 {
        if t.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("the rows before the hang never appeared: {:?}", std::fs::read_to_string(&csv));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // It hangs in the sixth step: no row comes after the fifth.
    std::thread::sleep(Duration::from_millis(300));
    assert!(child.try_wait().unwrap().is_none(), "the run should hang inside the FMU");
    (child, csv)
}

/// In stiction's process, a hang: the rows before it are in the CSV as soon as they are
/// computed, and after SIGKILL nothing is left in TMPDIR.
#[test]
fn a_hang_in_process_shows_every_row_and_sigkill_leaves_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = fresh_tmp(dir.path(), "hang");
    let (mut child, csv) = hanging_run(dir.path(), &tmp);
    child.kill().unwrap();
    // Standard error read to its end: that waits for every process holding it, the reaper too.
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    child.wait().unwrap();
    assert_five_rows(&std::fs::read_to_string(&csv).unwrap(), "hang, in process");
    assert_empty(&tmp, "hang, in process, after SIGKILL");
}

/// In stiction's process, a hang and then SIGTERM: the call never returns to a poll point,
/// so the process ends itself interrupt::GRACE (0.6 s) after the signal, with 143, the five
/// whole rows and no directory left.
#[test]
fn a_hang_in_process_ends_after_sigterm_with_whole_rows() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = fresh_tmp(dir.path(), "hang-term");
    let (mut child, csv) = hanging_run(dir.path(), &tmp);
    let sent = Instant::now();
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if sent.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("SIGTERM did not end a run hanging inside an FMU");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(err.contains("still running 0.6 s after the signal"), "{err}");
    assert_five_rows(&std::fs::read_to_string(&csv).unwrap(), "hang, SIGTERM");
    assert_empty(&tmp, "hang, SIGTERM");
}

/// `"isolation": "process"`: the segfault, abort(), exit() and a hang (call_timeout 1 s) end
/// the run with exit code 1 and a message naming the component, the time and the signal,
/// status or timeout; the five rows are kept and nothing is left in TMPDIR.
#[test]
fn an_isolated_crash_or_hang_ends_the_run_with_exit_1_and_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let hang = ("hang", 4.0, "did not answer within 1 s (call_timeout); its process was killed", Ending::Code(1));
    for fmi in [2, 3] {
        let fmu = typed_mass::build(dir.path(), fmi);
        let step = if fmi == 2 { "fmi2DoStep" } else { "fmi3DoStep" };
        for (name, how, says, _) in CASES.into_iter().chain([hang]) {
            let what = format!("FMI {fmi}, {name}, isolated");
            let tmp = fresh_tmp(dir.path(), &format!("iso-{fmi}-{name}"));
            let iso = json!({"isolation": "process", "call_timeout": 1});
            let started = Instant::now();
            let (out, csv) =
                run(dir.path(), &format!("iso-{fmi}-{name}"), &network(&fmu, how, Some(iso), "cs", 1.0), &tmp);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what}: {err}");
            for part in ["simulation failed at t = 0.05 s in component 'mass'", step, says] {
                assert!(err.contains(part), "{what}: no {part:?} in: {err}");
            }
            assert!(started.elapsed() < Duration::from_secs(30), "{what}: took {:?}", started.elapsed());
            assert_five_rows(&csv, &what);
            assert_empty(&tmp, &what);
        }
    }
}

/// `"isolation": "process"` with a long `call_timeout` (8 s): SIGINT or SIGTERM while the
/// child hangs in doStep ends the run within 1 s of the signal (the child is killed, not
/// waited for until the timeout), with 130 / 143, the phase named, the five rows kept and
/// nothing left in TMPDIR. (Before: 6.5 s after the signal, when call_timeout ran out.)
#[test]
fn a_signal_ends_an_isolated_hang_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 2);
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let tmp = fresh_tmp(dir.path(), &format!("iso-sig-{sig}"));
        let iso = json!({"isolation": "process", "call_timeout": 8});
        let path = dir.path().join(format!("iso-sig-{sig}.json"));
        std::fs::write(&path, network(&fmu, 4.0, Some(iso), "cs", 1.0).to_string()).unwrap();
        let csv = dir.path().join(format!("iso-sig-{sig}.csv"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
            .args(["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
            .env("TMPDIR", &tmp)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The rows of an isolated run are buffered (no foreign code in this process): the
        // hang at 0.05 s is reached well within 2 s.
        std::thread::sleep(Duration::from_secs(2));
        assert!(child.try_wait().unwrap().is_none(), "the run should wait on the hanging child");
        let sent = Instant::now();
        assert!(Command::new("kill").args([format!("-{sig}"), child.id().to_string()]).status().unwrap().success());
        let (status, took, err) = common::wait_exit(&mut child, sent, Duration::from_secs(30), &format!("SIG{sig}"));
        assert_eq!(status.code(), Some(code), "SIG{sig}: {err}");
        assert!(took < Duration::from_secs(1), "SIG{sig}: the run ended {took:?} after the signal");
        assert!(err.contains(&format!("interrupted by SIG{sig}")) && err.contains("running"), "SIG{sig}: {err}");
        println!("SIG{sig}: ended {took:?} after the signal, exit {code}: {}", err.trim());
        assert_five_rows(&std::fs::read_to_string(&csv).unwrap(), &format!("isolated hang, SIG{sig}"));
        assert_empty(&tmp, &format!("isolated hang, SIG{sig}"));
    }
}

/// A child that hangs in instantiate (the fixture's instance named `hang_in_instantiate…`)
/// with `call_timeout` 2 s: the run ends with exit 1 naming the timeout within the timeout
/// plus 10 % of the call (measured from the start of the whole command, which also loads the
/// FMU: ≤ 2 s + 10 % + 1 s). Before: 4 s.
#[test]
fn a_hang_in_instantiate_ends_within_the_call_timeout() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [2, 3] {
        let fmu = typed_mass::build(dir.path(), fmi);
        let tmp = fresh_tmp(dir.path(), &format!("hang-inst-{fmi}"));
        let iso = json!({"isolation": "process", "call_timeout": 2});
        let mut system = network(&fmu, 0.0, Some(iso), "cs", 1.0);
        let mass = system["components"].as_object_mut().unwrap().remove("mass").unwrap();
        system["components"]["hang_in_instantiate"] = mass;
        system["connections"] = json!([{"from": "push.body", "to": "hang_in_instantiate.port"}]);
        system["output"] = json!({"interval": 0.01});
        let path = dir.path().join(format!("hang-inst-{fmi}.json"));
        std::fs::write(&path, system.to_string()).unwrap();
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
            .args(["run", path.to_str().unwrap(), "-o", "-", "--quiet"])
            .env("TMPDIR", &tmp)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (status, took, err) =
            common::wait_exit(&mut child, started, Duration::from_secs(60), "hang in instantiate");
        assert_ne!(status.code(), Some(0), "FMI {fmi}: {err}");
        assert!(
            err.contains("did not answer within 2 s (call_timeout)") && err.contains("Instantiate"),
            "FMI {fmi}: {err}"
        );
        assert!(took < Duration::from_millis(3200), "FMI {fmi}: ended {took:?} after the start: {err}");
        println!("FMI {fmi}: a hang in instantiate ended the command after {took:?}");
        assert_empty(&tmp, &format!("hang in instantiate, FMI {fmi}"));
    }
}

/// An FMU that returns a non-finite output (TypedMass with crash_how 5: a NaN position from
/// the step that passes 0.05 s): the run fails at that step naming the variable, in process
/// and isolated, FMI 2 and 3, and no row holds a non-finite value: the five rows before are
/// the file. (Before: a row with NaN at 0.05 s, the failure reported at 0.06 s.)
#[test]
fn a_non_finite_output_ends_the_run_at_the_step_that_produced_it() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [2, 3] {
        let fmu = typed_mass::build(dir.path(), fmi);
        for iso in [None, Some(json!({"isolation": "process"}))] {
            let what = format!("FMI {fmi}, {}", if iso.is_some() { "isolated" } else { "in process" });
            let tmp = fresh_tmp(dir.path(), &format!("nan-{fmi}-{}", iso.is_some()));
            let name = format!("nan-{fmi}-{}", iso.is_some());
            let (out, csv) = run(dir.path(), &name, &network(&fmu, 5.0, iso, "cs", 1.0), &tmp);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what}: {err}");
            for part in ["simulation failed at t = 0.05 s in component 'mass'", "'x' = NaN, which is not finite"] {
                assert!(err.contains(part), "{what}: no {part:?} in: {err}");
            }
            assert!(!csv.to_lowercase().contains("nan") && !csv.contains("inf"), "{what}: {csv}");
            assert_five_rows(&csv, &what);
            assert_empty(&tmp, &what);
        }
    }
}

/// The same system in process and isolated gives the same CSV, byte for byte: Co-Simulation
/// and Model Exchange, FMI 2.0 and 3.0 (every call of the instance goes through the child).
#[test]
fn isolated_runs_equal_in_process_runs() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in [2, 3] {
        let fmu = typed_mass::build(dir.path(), fmi);
        for interface in ["cs", "me"] {
            let what = format!("FMI {fmi}, {interface}");
            let tmp = fresh_tmp(dir.path(), &format!("eq-{fmi}-{interface}"));
            let (a, csv_a) = run(dir.path(), "a", &network(&fmu, 0.0, None, interface, 0.5), &tmp);
            let iso = json!({"isolation": "process"});
            let (b, csv_b) = run(dir.path(), "b", &network(&fmu, 0.0, Some(iso), interface, 0.5), &tmp);
            assert!(a.status.success(), "{what}: {}", String::from_utf8_lossy(&a.stderr));
            assert!(b.status.success(), "{what}: {}", String::from_utf8_lossy(&b.stderr));
            assert_eq!(csv_a.lines().count(), 52, "{what}");
            assert_eq!(csv_a, csv_b, "{what}");
            assert_empty(&tmp, &what);
        }
    }
}

/// A signal block (`"role": "signal"`) isolated too: examples/fmu_pi_gear_hold.json with its
/// PI controller FMU in a child process gives the same CSV as in stiction's process.
#[test]
fn an_isolated_signal_block_equals_the_in_process_one() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = pi_controller::build(dir.path());
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fmu_pi_gear_hold.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(example).unwrap()).unwrap();
    v["components"]["pi"]["path"] = json!(fmu.to_str().unwrap());
    let tmp = fresh_tmp(dir.path(), "block");
    let (a, csv_a) = run(dir.path(), "block-a", &v, &tmp);
    v["components"]["pi"]["isolation"] = json!("process");
    let (b, csv_b) = run(dir.path(), "block-b", &v, &tmp);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    assert_eq!(csv_a.lines().count(), 202);
    assert_eq!(csv_a, csv_b);
    assert_empty(&tmp, "signal block");
}

/// An FMU-only system (`"fmus"`) takes the same keys: a segfault there ends the isolated
/// run with exit 1 and the message, and in stiction's process keeps the rows before it (six:
/// the master writes the row at 0.05 s before the doStep from 0.05 s crashes).
#[test]
fn fmu_only_systems_keep_rows_and_isolate_too() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 2);
    for isolated in [false, true] {
        let mut a = json!({"path": fmu.to_str().unwrap(), "parameters": {"u": 3, "crash_at": 0.05, "crash_how": 1}});
        if isolated {
            a["isolation"] = json!("process");
        }
        let system = json!({
            "master": {"algorithm": "jacobi", "step": 0.01, "stop_time": 1.0},
            "fmus": {"a": a},
            "output": {"signals": {"x": "a.x", "v": "a.v"}}
        });
        let tmp = fresh_tmp(dir.path(), &format!("master-{isolated}"));
        let (out, csv) = run(dir.path(), &format!("master-{isolated}"), &system, &tmp);
        let err = String::from_utf8_lossy(&out.stderr);
        if isolated {
            assert_eq!(out.status.code(), Some(1), "{err}");
            assert!(err.contains("fmi2DoStep the FMU's process was ended by signal 11 (SIGSEGV)"), "{err}");
        } else {
            assert_eq!(out.status.signal(), Some(11), "{err}");
        }
        assert_rows(&csv, 6, &format!("FMU-only, isolated {isolated}"));
        assert_empty(&tmp, "FMU-only");
    }
}

/// A crash while the FMU is initialized (a negative `crash_at`: in ExitInitializationMode):
/// in process it ends stiction and leaves no directory; isolated, it is a failure of the run
/// at t = 0 in the component (exit 1), not bad input.
#[test]
fn a_crash_during_initialization() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    for fmi in [2, 3] {
        let fmu = typed_mass::build(dir.path(), fmi);
        let exit_init = if fmi == 2 { "fmi2ExitInitializationMode" } else { "fmi3ExitInitializationMode" };
        for isolated in [false, true] {
            let iso = isolated.then(|| json!({"isolation": "process"}));
            let mut system = network(&fmu, 1.0, iso, "cs", 1.0);
            system["components"]["mass"]["parameters"]["crash_at"] = json!(-1.0);
            let name = format!("init-{fmi}-{isolated}");
            let tmp = fresh_tmp(dir.path(), &name);
            let (out, _) = run(dir.path(), &name, &system, &tmp);
            let err = String::from_utf8_lossy(&out.stderr);
            if isolated {
                assert_eq!(out.status.code(), Some(1), "{name}: {err}");
                for part in ["simulation failed at t = 0 s in component 'mass'", exit_init, "signal 11 (SIGSEGV)"] {
                    assert!(err.contains(part), "{name}: no {part:?} in {err}");
                }
            } else {
                assert_eq!(out.status.signal(), Some(11), "{name}: {err}");
            }
            assert_empty(&tmp, &name);
        }
    }
}

/// Bad values of the keys are input errors naming the JSON path.
#[test]
fn isolation_keys_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 2);
    let tmp = fresh_tmp(dir.path(), "keys");
    for (keys, says) in [
        (json!({"isolation": "thread"}), "components.mass.isolation: expected \"none\""),
        (json!({"call_timeout": 5}), "components.mass.call_timeout: only an FMU with \"isolation\": \"process\""),
        (json!({"isolation": "process", "call_timeout": -1}), "components.mass.call_timeout"),
        // Past a day or below 10 ms: refused at load naming the path (a huge value was an
        // internal error, a deadline the clock cannot hold).
        (
            json!({"isolation": "process", "call_timeout": 1e300}),
            "components.mass.call_timeout: expected seconds from 0.01 to 86400",
        ),
        (
            json!({"isolation": "process", "call_timeout": 1e-9}),
            "components.mass.call_timeout: expected seconds from 0.01 to 86400",
        ),
    ] {
        let (out, _) = run(dir.path(), "keys", &network(&fmu, 0.0, Some(keys.clone()), "cs", 0.1), &tmp);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{keys}: {err}");
        assert!(err.contains(says), "{keys}: no {says:?} in {err}");
    }
}

/// Extraction directories of a process that is gone are removed by the next run; those of a
/// living process, and names without an owner mark, are left alone.
#[test]
fn directories_of_dead_owners_are_swept_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = fresh_tmp(dir.path(), "sweep");
    let mut owner = Command::new("sleep").arg("30").spawn().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", owner.id())).unwrap();
    let start: u64 = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().nth(19).unwrap().parse().unwrap();
    let marked = tmp.join(format!("stiction-fmu-p{}s{start}-abc", owner.id()));
    let unmarked = tmp.join("stiction-fmu-unmarked");
    for d in [&marked, &unmarked] {
        std::fs::create_dir_all(d.join("binaries")).unwrap();
        std::fs::write(d.join("binaries/x.so"), b"x").unwrap();
    }
    let system = json!({
        "solver": {"method": "euler", "step": 0.01, "stop_time": 0.02},
        "output": {"interval": 0.01, "signals": ["m.q"]},
        "components": {"m": {"type": "mass", "mass": 1.0}}, "connections": []
    });
    let (out, _) = run(dir.path(), "sweep", &system, &tmp);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(marked.exists(), "a living owner's directory was removed");
    owner.kill().unwrap();
    owner.wait().unwrap();
    let (out, _) = run(dir.path(), "sweep", &system, &tmp);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!marked.exists(), "a dead owner's directory was left");
    assert!(unmarked.exists(), "a directory without an owner mark was removed");
}
