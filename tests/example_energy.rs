//! Issue 14, item 5: in every example without sources (no force or velocity source, no
//! moving wall, no FMU; a constant applied force or torque is set to 0), the total energy
//! (kinetic, gravity and elastic, `Simulator::energy`) never grows over a step in which no
//! penalty contact opens or closes (`Simulator::contact_sides`). The examples that `check --strict`
//! refuses (built to show an instability) are left out, as they must grow. `cargo test --release --test
//! example_energy -- --nocapture` prints the largest rise per example.

mod common;
use common::*;
use serde_json::Value;

/// Component types that feed energy in.
const SOURCES: &[&str] = &["force_source", "velocity_source", "fmu"];

/// Applied forces and torques a component may carry (set to 0 for the closed variant).
const APPLIED: &[&str] = &["force", "torque"];

/// The closed variant of `v`: every applied force and torque set to zero; whether any was.
fn closed(v: &mut Value) -> bool {
    let mut any = false;
    if let Some(comps) = v.get_mut("components").and_then(Value::as_object_mut) {
        for c in comps.values_mut() {
            for key in APPLIED {
                if let Some(f) = c.get_mut(*key) {
                    any |= f.as_f64() != Some(0.0);
                    *f = if f.is_array() { serde_json::json!([0.0, 0.0, 0.0]) } else { serde_json::json!(0.0) };
                }
            }
        }
    }
    any
}

/// Why `v` is not a closed system, or `None` if it is.
fn source_in(v: &Value) -> Option<String> {
    let Some(comps) = v.get("components").and_then(Value::as_object) else {
        return Some("no components (FMU-only system)".into());
    };
    for (name, c) in comps {
        let ty = c.get("type").and_then(Value::as_str).unwrap_or("");
        if SOURCES.contains(&ty) {
            return Some(format!("{name} is a {ty}"));
        }
        if ty == "wall" && c.get("position").is_some_and(|p| !p.is_number()) {
            return Some(format!("{name} is a moving wall"));
        }
    }
    None
}

#[test]
fn energy_never_grows_without_a_contact_switch_in_closed_examples() {
    let mut dir: Vec<_> = std::fs::read_dir(example("")).unwrap().map(|e| e.unwrap().path()).collect();
    dir.sort();
    let mut checked = 0;
    for path in dir.iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        if let Some(why) = source_in(&v) {
            eprintln!("{name}: skipped ({why})");
            continue;
        }
        // An example of an unstable system (the papers' alternatives of Figs. 13–14 under
        // Euler) must be one that `check` warns about; its energy grows by design.
        let out = cli(&["check", "--strict", path.to_str().unwrap()]);
        if out.status.code() == Some(2) {
            eprintln!(
                "{name}: skipped (check warns: {})",
                String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("")
            );
            continue;
        }
        let variant = if closed(&mut v) { " (applied forces set to 0)" } else { "" };
        let (mut sim, _) = build_value(&v);
        let stop = v["solver"]["stop_time"].as_f64().unwrap();
        let steps = (stop / sim.step_size()).round() as u64;
        sim.probe().unwrap();
        let (mut e, mut sides) = (sim.energy(), sim.contact_sides());
        let scale = e.abs().max(1e-9);
        let (mut worst, mut at) = (f64::NEG_INFINITY, 0.0);
        let mut switches = 0;
        for _ in 0..steps {
            sim.step().unwrap();
            sim.probe().unwrap();
            let (e1, s1) = (sim.energy(), sim.contact_sides());
            if s1 == sides {
                if e1 - e > worst {
                    (worst, at) = (e1 - e, sim.time());
                }
            } else {
                switches += 1;
            }
            (e, sides) = (e1, s1);
        }
        eprintln!(
            "{name}{variant}: {steps} steps, {switches} with a contact switch; largest energy rise over the others \
             {worst:.3e} J ({:.1e} of E0 = {scale:.4e} J) at t = {at:.4}",
            worst / scale
        );
        assert!(worst <= 1e-12 * scale, "{name}: energy grows by {worst} J over the step ending at t = {at}");
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} closed examples");
}
