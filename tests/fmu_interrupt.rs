//! SIGINT and SIGTERM during `stiction run` on systems with FMUs (the TypedMass test FMU,
//! tests/fixtures/typed_mass): the extraction directories under TMPDIR are removed on every
//! way out. One signal stops the run at the next step boundary (exit 130/143, the values
//! dropped normally); a second one while the FMU is stuck inside fmi3DoStep (its parameter
//! step_sleep makes each step sleep, whatever signals arrive) ends the process at once,
//! after removing every extraction directory (`archive::remove_all`, src/interrupt.rs). A
//! panic with the FMU leaked (a test hook) leaves nothing either: the panic path calls
//! `remove_all` too.

#[path = "fixtures/typed_mass/mod.rs"]
mod typed_mass;

use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A network of TypedMass (CS admittance, pushed by 3 N) whose doStep sleeps `sleep` s.
fn network(fmu: &Path, sleep: f64) -> Value {
    json!({
        "solver": {"method": "euler", "step": 0.01, "stop_time": 1000.0},
        "output": {"interval": 0.01, "signals": {"x": "mass.x"}},
        "components": {
            "mass": {"type": "fmu", "path": fmu.to_str().unwrap(), "role": "admittance",
                     "inputs": {"force": "u"}, "outputs": {"position": "x", "velocity": "v"},
                     "parameters": {"step_sleep": sleep}},
            "push": {"type": "force_source", "force": 3.0}
        },
        "connections": [{"from": "push.body", "to": "mass.port"}]
    })
}

/// An FMU-only system of two TypedMass instances, a.x feeding b.u, whose doStep sleeps.
fn master(fmu: &Path, sleep: f64) -> Value {
    json!({
        "master": {"algorithm": "jacobi", "step": 0.01, "stop_time": 1000.0},
        "fmus": {
            "a": {"path": fmu.to_str().unwrap(), "parameters": {"u": 3, "step_sleep": sleep}},
            "b": {"path": fmu.to_str().unwrap(), "parameters": {"step_sleep": sleep}}
        },
        "connections": [{"from": "a.x", "to": "b.u"}],
        "output": {"signals": {"xa": "a.x", "xb": "b.x"}}
    })
}

/// Start `stiction run` on `system` with TMPDIR `tmp`, TYPED_MASS_CALLS `calls`, and wait
/// until the FMU has been stepped (the extraction directory exists by then).
fn start(dir: &Path, name: &str, system: &Value, tmp: &Path) -> Child {
    start_until(dir, name, system, tmp, "fmi3DoStep")
}

/// [`start`], waiting until the FMU has been called with `function`.
fn start_until(dir: &Path, name: &str, system: &Value, tmp: &Path, function: &str) -> Child {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, system.to_string()).unwrap();
    let calls = dir.join(format!("{name}.calls"));
    let child = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", dir.join(format!("{name}.csv")).to_str().unwrap(), "--quiet"])
        .env("TMPDIR", tmp)
        .env("TYPED_MASS_CALLS", &calls)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !std::fs::read_to_string(&calls).unwrap_or_default().contains(function) {
        assert!(t.elapsed() < Duration::from_secs(60), "{name}: the FMU was never stepped");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(std::fs::read_dir(tmp).unwrap().count() > 0, "{name}: nothing unpacked under TMPDIR");
    child
}

fn kill(child: &Child, sig: &str) {
    assert!(Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success());
}

/// Wait for the exit: (code, stderr, seconds since `since`).
fn finish(mut child: Child, since: Instant) -> (Option<i32>, String, f64) {
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let code = child.wait().unwrap().code();
    (code, err, since.elapsed().as_secs_f64())
}

fn assert_empty(tmp: &Path, what: &str) {
    let left: Vec<_> = std::fs::read_dir(tmp).unwrap().collect();
    assert!(left.is_empty(), "{what}: left in TMPDIR: {left:?}");
}

#[test]
fn one_signal_stops_at_a_step_boundary_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    for (k, (name, system, sig, code)) in
        [("network", network(&fmu, 0.002), "-INT", 130), ("master", master(&fmu, 0.002), "-TERM", 143)]
            .into_iter()
            .enumerate()
    {
        let tmp = dir.path().join(format!("tmp{k}"));
        std::fs::create_dir(&tmp).unwrap();
        let child = start(dir.path(), name, &system, &tmp);
        kill(&child, sig);
        let (c, err, _) = finish(child, Instant::now());
        assert_eq!(c, Some(code), "{name}: {err}");
        assert!(err.contains("interrupted by SIG"), "{name}: {err}");
        assert_empty(&tmp, name);
    }
}

/// The FMU sleeps 60 s inside fmi3DoStep: the first signal cannot be acted on at a step
/// boundary; the second ends the process within seconds, with the signal's exit code and
/// no extraction directory left.
#[test]
fn a_second_signal_while_the_fmu_is_stuck_exits_at_once_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    for (k, (name, system, sig, code)) in
        [("network-stuck", network(&fmu, 60.0), "-TERM", 143), ("master-stuck", master(&fmu, 60.0), "-INT", 130)]
            .into_iter()
            .enumerate()
    {
        let tmp = dir.path().join(format!("stuck{k}"));
        std::fs::create_dir(&tmp).unwrap();
        let child = start(dir.path(), name, &system, &tmp);
        let t = Instant::now();
        kill(&child, sig);
        std::thread::sleep(Duration::from_millis(300));
        assert!(std::fs::read_dir(&tmp).unwrap().count() > 0, "{name}: cleaned up before the second signal");
        kill(&child, sig);
        let (c, err, secs) = finish(child, t);
        assert_eq!(c, Some(code), "{name}: {err}");
        assert!(secs < 20.0, "{name}: took {secs} s to exit after the second signal");
        assert_empty(&tmp, name);
    }
}

/// The panic path: with STICTION_TEST_PANIC_WITH_FMU, `run X.fmu` leaks the loaded system (its
/// extraction directory is never dropped) and panics; the top-level catch reports an internal
/// error (exit 3) and `archive::remove_all()` removes the directory.
#[test]
fn a_panic_with_an_fmu_loaded_leaves_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let tmp = dir.path().join("panic-tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", fmu.to_str().unwrap(), "--stop-time", "0.05", "-o", dir.path().join("p.csv").to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .env("STICTION_TEST_PANIC_WITH_FMU", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("internal error") && err.contains("STICTION_TEST_PANIC_WITH_FMU"), "{err}");
    assert_empty(&tmp, "panic");
}

/// Signals while the system is still loading (the FMU sleeps in fmi3ExitInitializationMode):
/// one SIGTERM ends the process within a second, the FMU still in its call (exit 143 and the
/// message naming the signal and the phase, issues 33 and 45); two SIGINTs while it sleeps
/// 60 s there end the process at once (exit 130). No directory is left either way.
#[test]
fn signals_during_loading_are_honoured_and_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = typed_mass::build(dir.path(), 3);
    let with_init_sleep = |s: f64| {
        let mut v = network(&fmu, 0.0);
        v["components"]["mass"]["parameters"]["init_sleep"] = json!(s);
        v
    };
    let tmp = dir.path().join("load-one");
    std::fs::create_dir(&tmp).unwrap();
    let child = start_until(dir.path(), "load-one", &with_init_sleep(1.0), &tmp, "fmi3ExitInitializationMode");
    kill(&child, "-TERM");
    let (c, err, _) = finish(child, Instant::now());
    assert_eq!(c, Some(143), "{err}");
    // The FMU's call (1 s) outlasts interrupt::GRACE: the process ends 0.6 s after the
    // signal, naming it and the phase.
    assert!(err.contains("interrupted by SIGTERM while loading"), "{err}");
    assert_empty(&tmp, "load-one");

    let tmp = dir.path().join("load-two");
    std::fs::create_dir(&tmp).unwrap();
    let child = start_until(dir.path(), "load-two", &with_init_sleep(60.0), &tmp, "fmi3ExitInitializationMode");
    let t = Instant::now();
    kill(&child, "-INT");
    std::thread::sleep(Duration::from_millis(300));
    kill(&child, "-INT");
    let (c, err, secs) = finish(child, t);
    assert_eq!(c, Some(130), "{err}");
    assert!(secs < 20.0, "took {secs} s to exit after the second signal");
    assert_empty(&tmp, "load-two");
}
