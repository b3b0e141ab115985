//! Signal blocks (`"role": "signal"`): a Co-Simulation FMU from another tool used by its
//! inputs and outputs, with signal connections (`{"from": SIGNAL, "to": "block.input"}`),
//! stepped by the network's engine (framework/src/stepper/bus.rs). The controller is the
//! PIController test FMU (tests/fixtures/pi_controller).

#[path = "fixtures/pi_controller/mod.rs"]
mod pi_controller;

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// target/fmu/PIController.fmu, where examples/fmu_pi_gear_hold.json finds it, built once per
/// test binary (written to a temporary name and renamed, so a reader never sees half a file).
fn pi_fmu() -> &'static Path {
    static FMU: OnceLock<PathBuf> = OnceLock::new();
    FMU.get_or_init(|| install_fmu("PIController.fmu", pi_controller::build))
}

/// The PIController FMU with a description that declares no FMU state functions
/// (canGetAndSetFMUstate and canSerializeFMUstate false), built once.
fn pi_fmu_without_state() -> &'static Path {
    static FMU: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &FMU.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let fmu = pi_controller::build_edited(dir.path(), |x| {
            x.replace("=\"true\" canSerializeFMUstate=\"true\"", "=\"false\" canSerializeFMUstate=\"false\"")
        });
        (dir, fmu)
    })
    .1
}

fn example_value(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(example(name)).unwrap()).unwrap()
}

/// A system value with FMU paths made absolute (it runs from any directory).
fn absolute(mut v: Value) -> Value {
    if let Some(comps) = v["components"].as_object_mut() {
        for c in comps.values_mut() {
            if c["type"] == "fmu" {
                c["path"] = json!(pi_fmu().to_str().unwrap());
            }
        }
    }
    v
}

/// The physics of the PI speed controller driving a self-locking gear that lifts a load:
/// it tracks w_ref, and once the motor is off the gear holds the load exactly.
fn check_hold(rec: &stiction::framework::Recorder, what: &str) {
    let (t, v, q) = (&rec.time, col(rec, "v"), col(rec, "q"));
    for (i, &ti) in t.iter().enumerate() {
        if (0.8..1.0).contains(&ti) {
            assert!((v[i] - 1.0).abs() < 0.03, "{what}: v({ti}) = {} does not track w_ref = 1", v[i]);
        }
    }
    // Off at 1 s: the load decelerates the output and the gear self-locks (γv = 1.2 ≥ 1).
    let stuck = t.iter().position(|&x| x >= 1.35).unwrap();
    let q_held = q[stuck];
    assert!(q_held > 0.8, "{what}: the load was lifted to {q_held} rad");
    for i in stuck..t.len() {
        assert_eq!(v[i], 0.0, "{what}: v({}) = {} with the motor off", t[i], v[i]);
        assert_eq!(q[i].to_bits(), q_held.to_bits(), "{what}: the load moved at t = {}", t[i]);
    }
    assert_eq!(at(rec, "u", 1.5), 0.0, "{what}: the motor is off");
}

#[test]
fn a_pi_controller_fmu_drives_a_self_locking_gear_that_then_holds_its_load() {
    pi_fmu();
    let fmu = run_example("fmu_pi_gear_hold.json", 1);
    check_hold(&fmu, "FMU controller");
    // The same controller in native signals (continuous PI, integral in closed form).
    let native = run_example("pi_gear_hold.json", 1);
    check_hold(&native, "native controller");
    // The discrete PI (zero-order hold over T = 1 ms) and the continuous one agree closely.
    let (qf, qn) = (*col(&fmu, "q").last().unwrap(), *col(&native, "q").last().unwrap());
    assert!((qf - qn).abs() < 1e-3, "held at {qf} (FMU) and {qn} (native)");
    // The reference from the command line: a slower speed lifts the load less far.
    let out =
        cli(&["run", example("fmu_pi_gear_hold.json").to_str().unwrap(), "-o", "-", "--quiet", "--input", "w_ref=0.5"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let q_end: f64 = text.lines().last().unwrap().split(',').nth(1).unwrap().parse().unwrap();
    assert!(q_end > 0.2 && q_end < qf - 0.4, "w_ref = 0.5: held at {q_end} (w_ref = 1: {qf})");
}

#[test]
fn a_gain_scales_what_a_signal_connection_sets() {
    // The controller sees twice the speed: it settles the gear at w_ref / 2.
    let mut v = absolute(example_value("fmu_pi_gear_hold.json"));
    v["connections"][1]["gain"] = json!(2.0);
    let rec = run_value(&v);
    let speed = at(&rec, "v", 0.95);
    assert!((speed - 0.5).abs() < 0.02, "v(0.95) = {speed}");
}

#[test]
fn signal_blocks_give_the_same_bits_for_any_thread_count() {
    let mut v = absolute(example_value("fmu_pi_gear_hold.json"));
    // Enough other components for parallel phases.
    for i in 0..40 {
        v["components"][format!("m{i}")] = json!({"type": "mass", "mass": 1.0, "init": {"q": 0.01 * i as f64}});
        v["components"][format!("k{i}")] = json!({"type": "spring_damper", "K": 100, "B": 0.1});
        v["connections"].as_array_mut().unwrap().push(json!({"from": format!("k{i}.a"), "to": "ground"}));
        v["connections"].as_array_mut().unwrap().push(json!({"from": format!("k{i}.b"), "to": format!("m{i}")}));
    }
    let (one, two) = (run_value_parallel(&v, 1), run_value_parallel(&v, 2));
    check_hold(&one, "1 thread");
    same_bits(&one, &two).unwrap_or_else(|e| panic!("1 and 2 threads: {e}"));
}

#[test]
fn bad_signal_connections_and_blocks_are_refused_by_name() {
    let base = absolute(example_value("fmu_pi_gear_hold.json"));
    let check = |edit: &dyn Fn(&mut Value), says: &[&str]| {
        let mut v = base.clone();
        edit(&mut v);
        let (code, err) = run_json("check", &v);
        assert_eq!(code, 2, "{err}");
        for s in says {
            assert!(err.contains(s), "expected '{s}' in: {err}");
        }
    };
    check(
        &|v| v["connections"][1]["to"] = json!("pi.speed"),
        &["connections[1]", "no input 'speed'", "inputs: w_ref, w"],
    );
    check(&|v| v["connections"][1]["from"] = json!("gear.vv"), &["connections[1]", "has no signal 'vv'"]);
    check(&|v| v["connections"][1]["from"] = json!("w_rf"), &["connections[1]", "w_rf"]);
    check(
        &|v| v["connections"].as_array_mut().unwrap().push(json!({"from": "gear.q", "to": "pi.w"})),
        &["connections[4]", "'pi.w' is connected twice", "connections[1]"],
    );
    check(
        &|v| v["connections"].as_array_mut().unwrap().push(json!({"from": "motor.body", "to": "pi"})),
        &["connections[4]", "'pi' is a signal block, which has no ports"],
    );
    check(&|v| v["components"]["pi"]["ports"] = json!({}), &["components.pi.ports", "not for a signal block"]);
    check(&|v| v["connections"][2]["gain"] = json!(2.0), &["connections[2]", "'gain' is for signal connections"]);
    check(&|v| v["components"]["pi"]["role"] = json!("sink"), &["components.pi.role", "\"signal\""]);
    check(
        &|v| v["components"]["motor"]["force"] = json!({"signal": "pi.y"}),
        &["components.motor.force", "no output 'y'"],
    );
    // Two controllers whose outputs feed each other's inputs directly: an algebraic loop,
    // refused when its blocks cannot roll back (the fixture itself declares
    // canGetAndSetFMUstate, so it is built here without).
    let plain = pi_fmu_without_state();
    check(
        &|v| {
            v["components"]["pi"]["path"] = json!(plain.to_str().unwrap());
            v["components"]["pi2"] = v["components"]["pi"].clone();
            v["connections"][1]["from"] = json!("pi2.u");
            v["connections"].as_array_mut().unwrap().push(json!({"from": "pi.u", "to": "pi2.w"}));
        },
        &["algebraic loop", "pi.u", "pi2.u"],
    );
}

#[test]
fn check_and_graph_show_blocks_and_signal_connections() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pi.json");
    std::fs::write(&f, serde_json::to_string(&absolute(example_value("fmu_pi_gear_hold.json"))).unwrap()).unwrap();
    let out = cli(&["check", f.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for s in [
        "signal connection: gear.v -> pi.w",
        "signal connection: w_ref -> pi.w_ref",
        "pi: signal block (FMU 'PIController'",
        "inputs w_ref, w; outputs u",
        "signal read: pi.u (a signal block's output",
    ] {
        assert!(text.contains(s), "expected '{s}' in:\n{text}");
    }
    let out = cli(&["graph", f.to_str().unwrap()]);
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(dot.contains("\"pi\" [shape=component]"), "{dot}");
    assert!(dot.contains("\"gear\" -- \"pi\" [style=dashed, label=\"gear.v -> w\"]"), "{dot}");
    assert!(dot.contains("\"w_ref\" [shape=plaintext]"), "{dot}");
}

/// target/fmu/StictionGear.fmu and StictionFriction.fmu (FMI 2.0 Co-Simulation), where the
/// FMU-only example and its one-format twin find them: exported once per test binary.
fn gear_and_friction_fmus() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (model, file) in [("gear", "StictionGear.fmu"), ("friction", "StictionFriction.fmu")] {
            let dest = root.join("target/fmu").join(file);
            let tmp = dest.with_extension(format!("fmu.{}", std::process::id()));
            let o = cli(&["fmu", "export", model, "--fmi", "2", "--interface", "cs", "-o", tmp.to_str().unwrap()]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            std::fs::rename(&tmp, &dest).unwrap();
        }
    });
}

#[test]
fn the_fmu_only_example_in_the_one_format_writes_the_same_csv_byte_for_byte() {
    gear_and_friction_fmus();
    let dir = tempfile::tempdir().unwrap();
    let run = |v: &Value, name: &str| {
        let f = example("").join(format!("{name}-{}.json", std::process::id()));
        std::fs::write(&f, serde_json::to_string(v).unwrap()).unwrap();
        let csv = dir.path().join(format!("{name}.csv"));
        let o = cli(&["run", f.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"]);
        std::fs::remove_file(&f).unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::read(&csv).unwrap()
    };
    let (fmu_only, one) = (example_value("fmu_only_gear_contact.json"), example_value("fmu_signals_gear_contact.json"));
    for alg in ["gauss-seidel", "jacobi"] {
        let (mut a, mut b) = (fmu_only.clone(), one.clone());
        a["master"]["algorithm"] = json!(alg);
        b["solver"]["blocks"] = json!(alg);
        let (ca, cb) = (run(&a, &format!("master-{alg}")), run(&b, &format!("engine-{alg}")));
        assert_eq!(ca.len(), cb.len(), "{alg}");
        assert!(ca == cb, "{alg}: the one engine's CSV differs from the FMU-only master's");
        // The physics: the gear stops and stays exactly stuck.
        let text = String::from_utf8(cb).unwrap();
        let v: Vec<f64> = text.lines().skip(1).map(|l| l.split(',').nth(2).unwrap().parse().unwrap()).collect();
        assert!(v[..400].iter().all(|&x| x > 0.0) && v[500..].iter().all(|&x| x == 0.0), "{alg}");
    }
}

#[test]
fn gauss_seidel_orders_blocks_as_the_fmu_only_master_does() {
    // Three PI controllers in a chain c -> b -> a (each u feeds the next one's w_ref; u
    // declares feedthrough), listed against the chain: Gauss-Seidel steps c, b, a in both
    // engines (in file order a would read b's output before b stepped) and the CSVs are
    // the same bytes.
    let fmu = pi_fmu().to_str().unwrap().to_string();
    let pi = |kp: f64| json!({"path": fmu, "parameters": {"Kp": kp, "Ki": 1.0}});
    let conns = json!([{"from": "c.u", "to": "b.w_ref"}, {"from": "b.u", "to": "a.w_ref", "gain": 0.5}]);
    let output = json!({"interval": 0.01, "signals": {"a": "a.u", "b": "b.u", "c": "c.u"}});
    let (mut master, mut comps) = (json!({}), serde_json::Map::new());
    for (n, kp) in [("a", 0.5), ("b", 0.7), ("c", 1.1)] {
        master[n] = pi(kp);
        let mut c = pi(kp);
        c["type"] = json!("fmu");
        c["role"] = json!("signal");
        comps.insert(n.to_string(), c);
    }
    // c's reference starts at 1 (its w stays 0): c drives b, b drives a.
    master["c"]["parameters"]["w_ref"] = json!(1.0);
    comps["c"]["parameters"]["w_ref"] = json!(1.0);
    let master = json!({
        "master": {"algorithm": "gauss-seidel", "step": 0.01, "stop_time": 0.5},
        "fmus": master, "connections": conns, "output": output
    });
    let one = json!({
        "solver": {"method": "euler", "step": 0.01, "stop_time": 0.5, "blocks": "gauss-seidel"},
        "components": comps, "connections": conns, "output": output
    });
    let dir = tempfile::tempdir().unwrap();
    let csv = |v: &Value, name: &str| {
        let f = dir.path().join(format!("{name}.json"));
        std::fs::write(&f, serde_json::to_string(v).unwrap()).unwrap();
        let out = dir.path().join(format!("{name}.csv"));
        let o = cli(&["run", f.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&out).unwrap()
    };
    let (m, o) = (csv(&master, "master"), csv(&one, "one"));
    assert!(m.lines().count() == 52 && m == o, "master:\n{m}\none engine:\n{o}");
    let last: Vec<f64> = o.lines().last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    assert!(last[1..].iter().all(|&u| u > 0.0), "every controller acts: {last:?}");
}
