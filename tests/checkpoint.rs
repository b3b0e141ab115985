//! The whole-simulation checkpoint (framework/src/stepper/checkpoint.rs): a run from 0 to T
//! equals a run from 0 to t that saves its state (`stiction run --save-state`) followed by a
//! run that resumes it (`--resume`) to T, row for row and bit for bit: friction with stuck
//! phases, contact events under RK4, system inputs and signals, a signal block FMU (in the
//! process and isolated in its own) and an FMU network component. A truncated, corrupted or
//! foreign state is refused with a clear error, never a panic.

#[path = "fixtures/pi_controller/mod.rs"]
mod pi_controller;

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `stiction run SYSTEM -o OUT --quiet --no-warnings ARGS...`; the CSV's text.
fn run_csv(system: &Path, out: &Path, args: &[&str]) -> String {
    let mut all = vec!["run", system.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet", "--no-warnings"];
    all.extend_from_slice(args);
    let o = cli(&all);
    assert!(o.status.success(), "{all:?}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// Run `system` whole, and to `t` with --save-state then --resume to its stop time (each
/// with `args`); the joined rows must equal the whole run's byte for byte. Returns the
/// number of rows before and after t and the state file's size.
fn split_equals_whole(system: &Path, t: &str, args: &[&str]) -> (usize, usize, u64) {
    split_at_key(system, "solver.stop_time", t, args)
}

/// [`split_equals_whole`] with the stop time set through `key`.
fn split_at_key(system: &Path, key: &str, t: &str, args: &[&str]) -> (usize, usize, u64) {
    let dir = tempfile::tempdir().unwrap();
    let (full, a, b, state) =
        (dir.path().join("full.csv"), dir.path().join("a.csv"), dir.path().join("b.csv"), dir.path().join("s.state"));
    let whole = run_csv(system, &full, args);
    let stop = format!("{key}={t}");
    let mut first = vec!["--set", &stop, "--save-state", state.to_str().unwrap()];
    first.extend_from_slice(args);
    let head = run_csv(system, &a, &first);
    let mut second = vec!["--resume", state.to_str().unwrap()];
    second.extend_from_slice(args);
    let tail = run_csv(system, &b, &second);
    let (h, tl): (Vec<&str>, Vec<&str>) = (head.lines().collect(), tail.lines().collect());
    assert_eq!(h[0], tl[0], "{}: the header of the resumed run", system.display());
    let joined: Vec<&str> = h.iter().chain(&tl[1..]).copied().collect();
    let whole: Vec<&str> = whole.lines().collect();
    assert_eq!(joined.len(), whole.len(), "{}: rows", system.display());
    for (i, (x, y)) in joined.iter().zip(&whole).enumerate() {
        assert_eq!(x, y, "{}: row {i} differs after resuming at t = {t}", system.display());
    }
    assert!(h.len() > 2 && tl.len() > 2, "{}: t = {t} splits the run", system.display());
    (h.len() - 1, tl.len() - 1, std::fs::metadata(&state).unwrap().len())
}

#[test]
fn friction_with_stuck_phases_continues_bit_for_bit() {
    // Model D under Euler (stick-slip, the presliding spring), t off the output grid.
    split_equals_whole(&example("model_d_fig14.json"), "0.2373", &[]);
    // Two links with Kikuuwe friction under RK4: stuck and sliding joints.
    split_equals_whole(&example("two_link_fricK.json"), "4.31", &[]);
    // A self-locking lead screw holding its load.
    split_equals_whole(&example("leadscrew_hold.json"), "0.5", &[]);
}

#[test]
fn contact_events_continue_bit_for_bit() {
    // Located contact switches under RK4 (stepper/events.rs): the work budget and the
    // switching values at x(k) are part of the state.
    let sys = stiction::load(example("rolling_sphere.json")).unwrap();
    let (sim, _) = sys.into_simulator(1).unwrap();
    assert!(sim.contact_events().is_some(), "the example locates contact switches");
    split_equals_whole(&example("rolling_sphere.json"), "0.4567", &[]);
    split_equals_whole(&example("two_link_penalty.json"), "3.3", &[]);
    // Stick–slip switches and sub-steps ended at a velocity table's rows (the tray's
    // acceleration starts at 0.5 s and ends at 1.0 s).
    split_equals_whole(&example("conveyor.json"), "0.7", &[]);
}

#[test]
fn inputs_and_signals_continue_bit_for_bit() {
    // Held input at its start value, signals read by a PI law.
    split_equals_whole(&example("pi_gear_hold.json"), "1.0137", &[]);
    // The input driven by an expression of t in both runs.
    split_equals_whole(&example("pi_gear_hold.json"), "0.73", &["--input", "w_ref=0.5 + 0.5*sin(3*t)"]);
    // The same input from a table.
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("w.csv");
    std::fs::write(&table, "t,w_ref\n0,1\n0.5,0.2\n1,1.5\n2,0\n").unwrap();
    let arg = format!("w_ref={}", table.display());
    split_equals_whole(&example("pi_gear_hold.json"), "0.6", &["--input", &arg]);
}

#[test]
fn an_input_driven_when_saved_must_be_driven_when_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.state");
    let sys = example("pi_gear_hold.json");
    let s = state.to_str().unwrap();
    run_csv(
        &sys,
        &dir.path().join("a.csv"),
        &["--set", "solver.stop_time=0.5", "--input", "w_ref=t", "--save-state", s],
    );
    let o = cli(&["run", sys.to_str().unwrap(), "-o", "-", "--quiet", "--resume", s]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("inputs.w_ref") && e.contains("give the continued run the same --input"), "{e}");
}

/// The PIController test FMU (FMI 2.0 CS, serializable state), built once.
fn pi_fmu() -> &'static Path {
    static FMU: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &FMU.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let fmu = pi_controller::build(dir.path());
        (dir, fmu)
    })
    .1
}

/// examples/fmu_pi_gear_hold.json with the FMU at `fmu` and `edit` applied, written to `dir`.
fn pi_system(dir: &Path, fmu: &Path, edit: impl Fn(&mut Value)) -> PathBuf {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(example("fmu_pi_gear_hold.json")).unwrap()).unwrap();
    v["components"]["pi"]["path"] = json!(fmu.to_str().unwrap());
    edit(&mut v);
    let f = dir.join("sys.json");
    std::fs::write(&f, serde_json::to_string(&v).unwrap()).unwrap();
    f
}

#[test]
fn a_signal_block_fmu_continues_bit_for_bit_in_the_process_and_isolated() {
    let dir = tempfile::tempdir().unwrap();
    let sys = pi_system(dir.path(), pi_fmu(), |_| {});
    // While the controller tracks (its integral is the FMU's state) and after it switched off.
    split_equals_whole(&sys, "0.4321", &[]);
    split_equals_whole(&sys, "1.2", &[]);
    let iso = tempfile::tempdir().unwrap();
    let sys = pi_system(iso.path(), pi_fmu(), |v| v["components"]["pi"]["isolation"] = json!("process"));
    split_equals_whole(&sys, "0.4321", &[]);
}

#[test]
fn an_fmu_without_serializable_state_is_named_when_saving() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = pi_controller::build_edited(dir.path(), |x| {
        x.replace("canSerializeFMUstate=\"true\"", "canSerializeFMUstate=\"false\"")
    });
    let sys = pi_system(dir.path(), &fmu, |_| {});
    let state = dir.path().join("s.state");
    let o = cli(&["run", sys.to_str().unwrap(), "-o", "-", "--quiet", "--save-state", state.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("components.pi: cannot save its state") && e.contains("canSerializeFMUstate"), "{e}");
    assert!(!state.exists(), "no state file is written");
}

#[test]
fn an_fmu_network_component_continues_bit_for_bit() {
    // The exported StictionGear FMU as a Co-Simulation admittance (examples/fmu_gear_fig9.json):
    // its state, the pending outputs and the communication point are saved with the network's.
    let dir = tempfile::tempdir().unwrap();
    let fmu = export_fmu(dir.path(), "gear", "2", "cs", &[]);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(example("fmu_gear_fig9.json")).unwrap()).unwrap();
    v["components"]["gear"]["path"] = json!(fmu.to_str().unwrap());
    let sys = dir.path().join("gear.json");
    std::fs::write(&sys, serde_json::to_string(&v).unwrap()).unwrap();
    split_equals_whole(&sys, "0.777", &[]);
    // With a communication step of 5 network steps, resumed inside an interval.
    v["components"]["gear"]["communication_step"] = json!(0.005);
    std::fs::write(&sys, serde_json::to_string(&v).unwrap()).unwrap();
    split_equals_whole(&sys, "0.777", &[]);
}

#[test]
fn an_fmu_only_system_run_by_the_engine_continues_bit_for_bit() {
    // examples/fmu_only_gear_contact.json (top-level "fmus"): the engine runs it as signal
    // blocks (Gauss-Seidel), so its state is saved like any network's.
    let dir = tempfile::tempdir().unwrap();
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(example("fmu_only_gear_contact.json")).unwrap()).unwrap();
    for (name, model) in [("gear", "gear"), ("contact", "friction")] {
        let fmu = export_fmu(dir.path(), model, "2", "cs", &[]);
        v["fmus"][name]["path"] = json!(fmu.to_str().unwrap());
    }
    let sys = dir.path().join("fmu_only.json");
    std::fs::write(&sys, serde_json::to_string(&v).unwrap()).unwrap();
    // Sliding, then stuck.
    split_at_key(&sys, "master.stop_time", "0.3", &[]);
    split_at_key(&sys, "master.stop_time", "0.6", &[]);
}

#[test]
fn a_model_exchange_fmu_with_events_continues_bit_for_bit_in_fmi_2_and_3() {
    // The gear FMU as a Model Exchange admittance under RK4: its states are the network's,
    // its event indicators, the point of the last accepted step and its mode are saved.
    let dir = tempfile::tempdir().unwrap();
    for fmi in ["2", "3"] {
        let fmu = export_fmu(dir.path(), "gear", fmi, "both", &[]);
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(example("fmu_gear_fig9.json")).unwrap()).unwrap();
        let gear = &mut v["components"]["gear"];
        gear["path"] = json!(fmu.to_str().unwrap());
        gear["interface"] = json!("me");
        gear.as_object_mut().unwrap().remove("communication_step");
        gear["parameters"].as_object_mut().unwrap().remove("substep");
        v["solver"]["method"] = json!("rk4");
        let sys = dir.path().join(format!("me{fmi}.json"));
        std::fs::write(&sys, serde_json::to_string(&v).unwrap()).unwrap();
        // Before the impact on the wall, while stuck against it, after the release.
        for t in ["0.2", "0.777", "1.5003"] {
            split_equals_whole(&sys, t, &[]);
        }
    }
}

#[test]
fn a_state_of_another_system_or_a_damaged_file_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.state");
    let s = state.to_str().unwrap();
    run_csv(
        &example("model_d_fig14.json"),
        &dir.path().join("a.csv"),
        &["--set", "solver.stop_time=0.1", "--save-state", s],
    );
    let resume = |system: &str, extra: &[&str]| {
        let p = example(system);
        let mut args = vec!["run", p.to_str().unwrap(), "-o", "-", "--quiet", "--no-warnings", "--resume", s];
        args.extend_from_slice(extra);
        let o = cli(&args);
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (code, e) = resume("two_link_fricK.json", &[]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("s.state: saved state: it belongs to another system"), "{e}");
    // The same system with another step.
    let (code, e) = resume("model_d_fig14.json", &["--set", "solver.step=0.0005"]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("step 0.001 s, this system has method Euler and step 0.0005 s"), "{e}");
    // Saved with the stick–slip switches stepped over, resumed locating them: the message
    // names the setting that continues it.
    let fric_k = example("two_link_fricK.json");
    run_csv(
        &fric_k,
        &dir.path().join("a.csv"),
        &["--set", "solver.stop_time=0.1", "--set", "solver.events=contacts", "--save-state", s],
    );
    let (code, e) = resume("two_link_fricK.json", &[]);
    assert_eq!(code, Some(2), "{e}");
    assert!(e.contains("no switch located within a step in the saved state, 4 switching functions"), "{e}");
    assert!(e.contains("--set solver.events=contacts"), "{e}");
    let (code, e) = resume("two_link_fricK.json", &["--set", "solver.events=contacts"]);
    assert_eq!(code, Some(0), "{e}");
    run_csv(
        &example("model_d_fig14.json"),
        &dir.path().join("a.csv"),
        &["--set", "solver.stop_time=0.1", "--save-state", s],
    );
    // A flipped bit, a cut file, not a state at all.
    let good = std::fs::read(&state).unwrap();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    std::fs::write(&state, &flipped).unwrap();
    let (code, e) = resume("model_d_fig14.json", &[]);
    assert!(code == Some(2) && e.contains("the checksum does not match"), "{e}");
    std::fs::write(&state, &good[..good.len() - 5]).unwrap();
    let (code, e) = resume("model_d_fig14.json", &[]);
    assert!(code == Some(2) && e.contains("truncated"), "{e}");
    std::fs::write(&state, "time,x\n0,1\n").unwrap();
    let (code, e) = resume("model_d_fig14.json", &[]);
    assert!(code == Some(2) && e.contains("not a stiction saved state"), "{e}");
    std::fs::remove_file(&state).unwrap();
    let (code, e) = resume("model_d_fig14.json", &[]);
    assert!(code == Some(2) && e.contains("--resume"), "{e}");
}

/// Fuzz-style, through the library: every truncation and every single-bit flip of a state
/// is an error that leaves the simulation as it was; bytes rewritten anywhere in the body
/// with a valid checksum (the parser's own checks) never panic.
#[test]
fn truncations_bit_flips_and_rewritten_bodies_never_panic() {
    for name in ["pi_gear_hold.json", "rolling_sphere.json"] {
        let sys = stiction::load(example(name)).unwrap();
        let (mut sim, _) = sys.into_simulator(1).unwrap();
        for _ in 0..1234 {
            sim.step().unwrap();
        }
        let bytes = sim.save_state().unwrap();
        // Round trip in memory: 100 steps, back, the same 100 steps again.
        for _ in 0..100 {
            sim.step().unwrap();
        }
        let (x_ahead, k_ahead) = (sim.state().to_vec(), sim.steps_taken());
        sim.restore_state(&bytes).unwrap();
        assert_eq!(sim.steps_taken(), 1234);
        for _ in 0..100 {
            sim.step().unwrap();
        }
        assert_eq!(sim.steps_taken(), k_ahead);
        let same = sim.state().iter().zip(&x_ahead).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{name}: the restored run differs from the one that went on");
        let (x, k) = (sim.state().to_vec(), sim.steps_taken());
        let unchanged = |sim: &stiction::framework::Simulator, what: &str| {
            assert_eq!(sim.steps_taken(), k, "{name}: {what} changed the step count");
            assert!(sim.state().iter().zip(&x).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: {what}");
        };
        for cut in 0..bytes.len() {
            assert!(sim.restore_state(&bytes[..cut]).is_err(), "{name}: cut at {cut} accepted");
        }
        unchanged(&sim, "a truncated state");
        for bit in 0..8 * bytes.len() {
            let mut b = bytes.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            let e = sim.restore_state(&b).expect_err("a flipped bit is refused").to_string();
            assert!(e.starts_with("saved state: "), "{name}: {e}");
        }
        unchanged(&sim, "a flipped bit");
        // Rewritten bodies with a valid checksum: each byte of the body set to a few values.
        let mut rng = Lcg(7);
        let body = 28..bytes.len() - 4;
        let mut accepted = 0;
        for at in body.clone() {
            for _ in 0..4 {
                let mut b = bytes.clone();
                b[at] = (rng.next(0.0, 256.0) as u8) ^ if b[at] == 0 { 1 } else { 0 };
                let n = b.len();
                let crc = crc32(&b[..n - 4]);
                b[n - 4..].copy_from_slice(&crc.to_le_bytes());
                if sim.restore_state(&b).is_ok() {
                    accepted += 1;
                    sim.restore_state(&bytes).unwrap();
                }
            }
        }
        // A changed value of the state itself is a valid state; a changed name or length is not.
        assert!(accepted > 0 && accepted < 4 * body.len(), "{name}: {accepted} rewritten bodies accepted");
        assert!(sim.restore_state(&[]).is_err() && sim.restore_state(&bytes[..20]).is_err());
    }
}
