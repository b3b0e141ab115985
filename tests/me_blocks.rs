//! Model Exchange signal blocks (`"type": "fmu", "role": "signal", "interface": "me"`): an
//! FMU used by its inputs and outputs whose continuous states the network integrates, taking
//! part in every stage (fmus/import/src/me_block.rs, framework/src/stepper/bus.rs). The
//! controller is the PIControllerME test FMU (tests/fixtures/pi_me): dI/dt = w_ref − w,
//! u = Kp (w_ref − w) + Ki I (direct feedthrough), ui = Ki I (from the state alone).
// Both fixtures include the shared C-FMU builder (tests/fixtures/c_fmu.rs).
#![allow(clippy::duplicate_mod)]

#[path = "fixtures/pi_controller/mod.rs"]
mod pi_controller;
#[path = "fixtures/pi_me/mod.rs"]
mod pi_me;
#[path = "fixtures/timed_mass/mod.rs"]
mod timed_mass;

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// target/fmu/PIControllerME.fmu, where examples/fmu_me_pi_gear_hold.json finds it, built
/// once per test binary (written to a temporary name and renamed).
fn me_fmu() -> &'static Path {
    static FMU: OnceLock<PathBuf> = OnceLock::new();
    FMU.get_or_init(|| install_fmu("PIControllerME.fmu", pi_me::build))
}

/// The Co-Simulation PIController (a discrete PI, its output held over each step), built once.
fn cs_fmu() -> &'static Path {
    static FMU: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &FMU.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let fmu = pi_controller::build(dir.path());
        (dir, fmu)
    })
    .1
}

const M: f64 = 2.0;
const KP: f64 = 4.0;
const KI: f64 = 6.0;
const LOAD: f64 = 1.0;
const W_REF: f64 = 1.0;

/// A mass (m = 2 kg, at rest) driven by a PI speed controller against a constant load of
/// 1 N: the controller as a signal block (`controller`: its JSON object, reading `w_ref` and
/// `body.v`), or, with `None`, the same law written natively in a force's expression with the
/// integral of the error in closed form, ∫(w_ref − v) dt = w_ref t − q.
fn speed_loop(controller: Option<Value>, step: f64, stop: f64) -> Value {
    let native = format!("{KP}*(w_ref - body.v) + {KI}*(w_ref*t - body.q)");
    let mut v = json!({
        "name": "pi_speed_loop",
        "solver": {"method": "rk4", "step": step, "stop_time": stop},
        "inputs": {"w_ref": {"start": W_REF}},
        "output": {"interval": 0.05, "signals": {"q": "body.q", "v": "body.v"}},
        "components": {
            "body": {"type": "mass", "mass": M},
            "motor": {"type": "force_source", "force": native},
            "load": {"type": "force_source", "force": -LOAD}
        },
        "connections": [
            {"from": "motor.body", "to": "body"},
            {"from": "load.body", "to": "body"}
        ]
    });
    if let Some(c) = controller {
        v["components"]["pi"] = c;
        v["components"]["motor"]["force"] = json!({"signal": "pi.u"});
        v["output"]["signals"]["u"] = json!("pi.u");
        let conns = v["connections"].as_array_mut().unwrap();
        conns.push(json!({"from": "w_ref", "to": "pi.w_ref"}));
        conns.push(json!({"from": "body.v", "to": "pi.w"}));
    }
    v
}

fn me_block(params: Value) -> Value {
    json!({"type": "fmu", "path": me_fmu().to_str().unwrap(), "role": "signal", "interface": "me", "parameters": params})
}

fn cs_block() -> Value {
    json!({"type": "fmu", "path": cs_fmu().to_str().unwrap(), "role": "signal", "parameters": {"Kp": KP, "Ki": KI}})
}

/// The closed loop's exact speed: with z = I − L/Ki, m z'' + Kp z' + Ki z = 0,
/// z(0) = −L/Ki, z'(0) = w_ref − v(0) = w_ref; v = w_ref − z'.
fn exact_speed(t: f64) -> f64 {
    // Roots −a ± iω of m s² + Kp s + Ki (underdamped here: Kp² < 4 m Ki).
    let a = KP / (2.0 * M);
    let w = (KI / M - a * a).sqrt();
    let (z0, dz0) = (-LOAD / KI, W_REF);
    let (c1, c2) = (z0, (dz0 + a * z0) / w);
    let dz = (-a * t).exp() * ((-a * c1 + w * c2) * (w * t).cos() + (-w * c1 - a * c2) * (w * t).sin());
    W_REF - dz
}

fn max_speed_error(rec: &stiction::framework::Recorder) -> f64 {
    let v = col(rec, "v");
    rec.time.iter().zip(&v).map(|(&t, &v)| (v - exact_speed(t)).abs()).fold(0.0, f64::max)
}

#[test]
fn a_model_exchange_pi_controller_closes_the_loop_like_the_native_law_at_every_stage() {
    let params = json!({"Kp": KP, "Ki": KI});
    let me = run_value(&speed_loop(Some(me_block(params)), 0.01, 10.0));
    let native = run_value(&speed_loop(None, 0.01, 10.0));
    // The same equations integrated by the same RK4: the FMU's integral I and the closed
    // form w_ref t − q are equal along the discrete solution (a linear invariant of RK4), so
    // the two runs agree to rounding.
    for label in ["q", "v"] {
        let (a, b) = (col(&me, label), col(&native, label));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                "{label}({}) = {x} (ME block) vs {y} (native)",
                me.time[i]
            );
        }
    }
    // Physics: the speed settles at w_ref against the load, the integral part carrying it
    // (ui = Ki I → L), and the loop follows the exact closed-loop solution.
    let v_end = *col(&me, "v").last().unwrap();
    assert!((v_end - W_REF).abs() < 1e-3, "v(10) = {v_end}");
    let ui_end = KI * (W_REF * 10.0 - *col(&me, "q").last().unwrap());
    assert!((ui_end - LOAD).abs() < 1e-3, "Ki I(10) = {ui_end}");
    assert!(max_speed_error(&me) < 1e-6, "RK4 at T = 10 ms: {}", max_speed_error(&me));
}

#[test]
fn halving_the_step_cuts_the_error_sixteenfold_for_a_model_exchange_block_and_twofold_for_a_co_simulation_block() {
    let err = |block: &dyn Fn() -> Value, step: f64| max_speed_error(&run_value(&speed_loop(Some(block()), step, 2.0)));
    let me = || me_block(json!({"Kp": KP, "Ki": KI}));
    let (me1, me2) = (err(&me, 0.02), err(&me, 0.01));
    let (cs1, cs2) = (err(&cs_block, 0.02), err(&cs_block, 0.01));
    eprintln!("max |v - exact|: ME block {me1:.3e} (T = 20 ms), {me2:.3e} (10 ms), ratio {:.2}", me1 / me2);
    eprintln!("max |v - exact|: CS block {cs1:.3e} (T = 20 ms), {cs2:.3e} (10 ms), ratio {:.2}", cs1 / cs2);
    assert!((12.0..20.0).contains(&(me1 / me2)), "ME block: fourth order, ratio {}", me1 / me2);
    assert!((1.6..2.5).contains(&(cs1 / cs2)), "CS block: first order, ratio {}", cs1 / cs2);
    assert!(me2 * 1e3 < cs2, "ME {me2} vs CS {cs2}");
}

#[test]
fn an_output_without_feedthrough_is_read_from_the_stage_state_and_can_close_a_loop() {
    // The motor reads ui = Ki I (no direct feedthrough) and Kp (w_ref − v) natively: the same
    // law again, the integral part from the FMU's state at every stage.
    let mut v = speed_loop(Some(me_block(json!({"Kp": 0.0, "Ki": KI}))), 0.01, 4.0);
    v["components"]["motor"]["force"] = json!({"signal": "pi.ui"});
    v["components"]["damper"] = json!({"type": "force_source", "force": format!("{KP}*(w_ref - body.v)")});
    v["connections"].as_array_mut().unwrap().push(json!({"from": "damper.body", "to": "body"}));
    let me = run_value(&v);
    let native = run_value(&speed_loop(None, 0.01, 4.0));
    let (a, b) = (col(&me, "v"), col(&native, "v"));
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} vs {y}");
    }
    // ui = Ki (w_ref t − q) at the output instants.
    let mut v2 = v.clone();
    v2["output"]["signals"]["ui"] = json!("pi.ui");
    let rec = run_value(&v2);
    for (i, &t) in rec.time.iter().enumerate() {
        let q = col(&rec, "q")[i];
        let ui = col(&rec, "ui")[i];
        assert!((ui - KI * (W_REF * t - q)).abs() < 1e-10, "ui({t}) = {ui}");
    }
}

#[test]
fn the_switch_off_time_event_is_taken_inside_the_step() {
    // off_at in the middle of a step: the FMU's integral grows until 1.005 exactly and is
    // held from then on; u = 0, and the body, with the load alone, decelerates at exactly
    // L/m from the next step on (the other components saw the block's outputs at the
    // stages of the step that holds the event).
    let off = 1.005;
    let mut v = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI, "off_at": off}))), 0.01, 2.0);
    v["output"]["signals"]["ui"] = json!("pi.ui");
    v["output"]["signals"]["I"] = json!("pi.integral");
    v["output"]["interval"] = json!(0.01);
    let rec = run_value(&v);
    let (u, vel, ui, integral) = (col(&rec, "u"), col(&rec, "v"), col(&rec, "ui"), col(&rec, "I"));
    let step_of = |t: f64| rec.time.iter().position(|&x| (x - t).abs() < 1e-9).unwrap();
    let (before, after) = (step_of(1.0), step_of(1.01));
    for (i, &t) in rec.time.iter().enumerate() {
        if i > after {
            assert_eq!(u[i], 0.0, "u({t})");
            assert_eq!(ui[i], 0.0, "ui({t})");
            assert_eq!(integral[i].to_bits(), integral[after].to_bits(), "I({t}) moved after the event");
            let dv = vel[i] - vel[i - 1];
            assert!((dv + LOAD / M * 0.01).abs() < 1e-12, "v'({t}) = {}", dv / 0.01);
        }
        if i <= before {
            assert!(u[i] != 0.0, "u({t}) = 0 before the event");
        }
    }
    // Half a step of integration: I grew by about (w_ref − v) · 5 ms in the event's step.
    let grown = integral[after] - integral[before];
    let expected = (W_REF - vel[before]) * 0.005;
    assert!((grown - expected).abs() < 0.02 * expected.abs(), "I grew by {grown}, expected about {expected}");
}

#[test]
fn a_model_exchange_block_gives_the_same_bits_for_any_thread_count() {
    let mut v = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI}))), 0.01, 1.0);
    for i in 0..40 {
        v["components"][format!("m{i}")] = json!({"type": "mass", "mass": 1.0, "init": {"q": 0.01 * i as f64}});
        v["components"][format!("k{i}")] = json!({"type": "spring_damper", "K": 100, "B": 0.1});
        v["connections"].as_array_mut().unwrap().push(json!({"from": format!("k{i}.a"), "to": "ground"}));
        v["connections"].as_array_mut().unwrap().push(json!({"from": format!("k{i}.b"), "to": format!("m{i}")}));
    }
    let (one, two) = (run_value_parallel(&v, 1), run_value_parallel(&v, 2));
    assert!(max_speed_error(&one) < 1e-6);
    same_bits(&one, &two).unwrap_or_else(|e| panic!("1 and 2 threads: {e}"));
}

/// `stiction run SYSTEM -o OUT --quiet --no-warnings ARGS...`; the CSV's text.
fn run_csv(system: &Path, out: &Path, args: &[&str]) -> String {
    let mut all = vec!["run", system.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet", "--no-warnings"];
    all.extend_from_slice(args);
    let o = cli(&all);
    assert!(o.status.success(), "{all:?}: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn a_model_exchange_block_continues_bit_for_bit_after_save_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("sys.json");
    let v = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI, "off_at": 1.2345}))), 0.01, 2.0);
    std::fs::write(&sys, serde_json::to_string(&v).unwrap()).unwrap();
    for (t, isolation) in [("0.7", "none"), ("1.5", "none"), ("0.7", "process")] {
        let mut v = v.clone();
        v["components"]["pi"]["isolation"] = json!(isolation);
        std::fs::write(&sys, serde_json::to_string(&v).unwrap()).unwrap();
        let (full, a, b, state) =
            (dir.path().join("full.csv"), dir.path().join("a.csv"), dir.path().join("b.csv"), dir.path().join("s"));
        let whole = run_csv(&sys, &full, &[]);
        let stop = format!("solver.stop_time={t}");
        let head = run_csv(&sys, &a, &["--set", &stop, "--save-state", state.to_str().unwrap()]);
        let tail = run_csv(&sys, &b, &["--resume", state.to_str().unwrap()]);
        let (h, tl): (Vec<&str>, Vec<&str>) = (head.lines().collect(), tail.lines().collect());
        let joined: Vec<&str> = h.iter().chain(&tl[1..]).copied().collect();
        let whole: Vec<&str> = whole.lines().collect();
        assert!(h.len() > 2 && tl.len() > 2, "t = {t} splits the run");
        assert_eq!(joined, whole, "resumed at t = {t} ({isolation})");
    }
}

#[test]
fn bad_connections_to_a_model_exchange_block_are_refused_by_name() {
    let base = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI}))), 0.01, 1.0);
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
        &|v| v["connections"][3]["to"] = json!("pi.speed"),
        &["connections[3]", "no input 'speed'", "inputs: w_ref, w"],
    );
    check(&|v| v["connections"][3]["from"] = json!("body.vv"), &["connections[3]", "has no signal 'vv'"]);
    check(
        &|v| v["connections"].as_array_mut().unwrap().push(json!({"from": "body.q", "to": "pi.w"})),
        &["connections[4]", "'pi.w' is connected twice", "connections[3]"],
    );
    // Its force or rate cannot be read by a connection.
    check(&|v| v["connections"][3]["from"] = json!("body.a"), &["connections[3]", "body"]);
    check(&|v| v["components"]["pi"]["ports"] = json!({}), &["components.pi.ports", "not for a signal block"]);
    check(&|v| v["components"]["motor"]["force"] = json!({"signal": "pi.y"}), &["components.motor.force", "'y'"]);
    // Not an output: a time function reads outputs.
    check(
        &|v| v["components"]["motor"]["force"] = json!({"signal": "pi.Kp"}),
        &["components.motor.force", "not an output of the Model Exchange signal block 'pi'"],
    );
    // Its output feeding its own input through direct feedthrough: an algebraic loop.
    check(
        &|v| v["connections"][3]["from"] = json!("pi.u"),
        &["algebraic loop", "pi.u -> pi.w", "pi.u depends on pi.w"],
    );
    // Two blocks in a feedthrough cycle.
    check(
        &|v| {
            v["components"]["pi2"] = v["components"]["pi"].clone();
            v["connections"][3]["from"] = json!("pi2.u");
            v["connections"].as_array_mut().unwrap().push(json!({"from": "pi.u", "to": "pi2.w"}));
        },
        &["algebraic loop", "pi2.u -> pi.w", "pi.u -> pi2.w"],
    );
}

#[test]
fn a_cycle_through_an_output_without_feedthrough_is_no_loop() {
    // pi2 reads pi.ui (from the state) and pi reads pi2.ui: no feedthrough, no loop; pi2's
    // integral is ∫ (0 − Ki I) dt.
    let mut v = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI}))), 0.01, 1.0);
    v["components"]["pi2"] = me_block(json!({"Kp": 1.0, "Ki": 1.0}));
    v["connections"].as_array_mut().unwrap().push(json!({"from": "pi.ui", "to": "pi2.w"}));
    v["connections"].as_array_mut().unwrap().push(json!({"from": "pi2.ui", "to": "pi.w_ref", "gain": 0.0}));
    v["connections"].as_array_mut().unwrap().retain(|c| !(c["to"] == "pi.w_ref" && c["from"] == "w_ref"));
    v["components"]["pi"]["parameters"]["Kp"] = json!(KP);
    let (code, err) = run_json("check", &v);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn check_and_graph_show_a_model_exchange_block_and_its_connections() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("pi.json");
    let v = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI}))), 0.01, 1.0);
    std::fs::write(&f, serde_json::to_string(&v).unwrap()).unwrap();
    let out = cli(&["check", f.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    for s in [
        "signal connection: w_ref -> pi.w_ref",
        "signal connection: body.v -> pi.w",
        "pi: signal block (FMU 'PIControllerME' (",
        "FMI 2.0 Model Exchange, 1 continuous state(s))",
        "inputs w_ref, w; outputs u (direct feedthrough from w_ref, w), ui (from the state)",
        "signal read: pi.u (from the state, at every stage)",
    ] {
        assert!(text.contains(s), "expected '{s}' in:\n{text}");
    }
    let out = cli(&["graph", f.to_str().unwrap()]);
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(dot.contains("\"pi\" [shape=component]"), "{dot}");
    assert!(dot.contains("\"body\" -- \"pi\" [style=dashed, label=\"body.v -> w\"]"), "{dot}");
}

#[test]
fn the_model_exchange_gear_example_holds_its_load_like_the_native_controller() {
    me_fmu();
    let me = run_example("fmu_me_pi_gear_hold.json", 1);
    let native = run_example("pi_gear_hold.json", 1);
    let (t, v, q) = (&me.time, col(&me, "v"), col(&me, "q"));
    for (i, &ti) in t.iter().enumerate() {
        if (0.8..1.0).contains(&ti) {
            assert!((v[i] - 1.0).abs() < 0.03, "v({ti}) = {} does not track w_ref = 1", v[i]);
        }
    }
    let stuck = t.iter().position(|&x| x >= 1.35).unwrap();
    let q_held = q[stuck];
    assert!(q_held > 0.8, "the load was lifted to {q_held} rad");
    for i in stuck..t.len() {
        assert_eq!(v[i], 0.0, "v({}) = {} with the motor off", t[i], v[i]);
        assert_eq!(q[i].to_bits(), q_held.to_bits(), "the load moved at t = {}", t[i]);
    }
    assert_eq!(at(&me, "u", 1.5), 0.0, "the motor is off");
    // The continuous PI through the FMU and the native one, whose closed-form integral
    // w_ref t − q differs from ∫(w_ref − v) dt by O(T) because the gear's position rate
    // carries the implicit term of its step (q(k+1) = q(k) + T v(k+1) when stuck).
    let qn = *col(&native, "q").last().unwrap();
    let diff = (q_held - qn).abs();
    eprintln!("held at {q_held} (ME block) and {qn} (native), difference {diff:.3e}");
    assert!(diff < 1e-3, "held at {q_held} (ME block) and {qn} (native)");
}

#[test]
fn another_model_exchange_block_reads_a_feedthrough_output_at_every_stage() {
    // pi2 integrates pi's output u: dI2/dt = u (Kp = 0, Ki = 1, w unconnected). The body's
    // momentum obeys m dv/dt = u − L, so m v + L t − I2 is a linear invariant of the loop,
    // kept to rounding by RK4 only if pi2 reads at every stage the u the motor applies
    // there (that u is evaluated after body.v, which it depends on, is written: the first
    // test fails without that order).
    let mut v = speed_loop(Some(me_block(json!({"Kp": KP, "Ki": KI}))), 0.01, 3.0);
    v["components"]["pi2"] = me_block(json!({"Kp": 0.0, "Ki": 1.0}));
    v["connections"].as_array_mut().unwrap().push(json!({"from": "pi.u", "to": "pi2.w_ref"}));
    v["output"]["signals"]["I2"] = json!("pi2.integral");
    let rec = run_value(&v);
    let (vel, i2) = (col(&rec, "v"), col(&rec, "I2"));
    for (i, &t) in rec.time.iter().enumerate() {
        let drift = M * vel[i] + LOAD * t - i2[i];
        assert!(drift.abs() < 1e-12 * i2[i].abs().max(1.0), "m v + L t − I2 = {drift} at t = {t}");
    }
    assert!(i2.last().unwrap() > &5.0, "pi2 integrated u: {}", i2.last().unwrap());
}

#[test]
fn a_model_exchange_block_reads_held_signals_as_constants_over_the_step() {
    // A mass on a spring; pi integrates the spring's force (an impedance signal: evaluated
    // at x(k), held over the step), pi2 the output of a Co-Simulation PI reading the speed
    // (u = −Kp v(t_k), held over the step). RK4 integrates a constant exactly: each step adds
    // T × the held value, which the output rows show (every step).
    let t_step = 0.01;
    let cs = json!({"type": "fmu", "path": cs_fmu().to_str().unwrap(), "role": "signal", "parameters": {"Kp": 3.0}});
    let v = json!({
        "name": "held_inputs",
        "solver": {"method": "rk4", "step": t_step, "stop_time": 0.5},
        "output": {"interval": t_step, "signals": {"f": "k.f", "I": "pi.integral", "u": "cs.u", "I2": "pi2.integral"}},
        "components": {
            "body": {"type": "mass", "mass": 1.0, "init": {"q": 0.1}},
            "k": {"type": "spring_damper", "K": 100.0, "B": 0.5},
            "pi": me_block(json!({"Kp": 0.0, "Ki": 1.0})),
            "pi2": me_block(json!({"Kp": 0.0, "Ki": 1.0})),
            "cs": cs
        },
        "connections": [
            {"from": "k.a", "to": "ground"}, {"from": "k.b", "to": "body"},
            {"from": "k.f", "to": "pi.w_ref"},
            {"from": "body.v", "to": "cs.w"},
            {"from": "cs.u", "to": "pi2.w_ref"}
        ]
    });
    let rec = run_value(&v);
    let (f, i1, u, i2) = (col(&rec, "f"), col(&rec, "I"), col(&rec, "u"), col(&rec, "I2"));
    let mut moving = 0;
    for i in 1..rec.time.len() {
        // The force held over step i − 1 is the one the row at its beginning shows.
        let want = t_step * f[i - 1];
        assert!(
            (i1[i] - i1[i - 1] - want).abs() < 1e-15 + 1e-12 * want.abs(),
            "step {i}: I grew by {}",
            i1[i] - i1[i - 1]
        );
        // The Co-Simulation output held over step i − 1 is the one the row at its end shows.
        let want = t_step * u[i];
        assert!(
            (i2[i] - i2[i - 1] - want).abs() < 1e-15 + 1e-12 * want.abs(),
            "step {i}: I2 grew by {}",
            i2[i] - i2[i - 1]
        );
        moving += (u[i] != u[i - 1]) as usize;
    }
    assert!(moving > 10 && f[0] != f[10], "the held values change from step to step");
}

#[test]
fn a_plant_as_a_model_exchange_block_takes_its_time_events_exactly_in_fmi_2_and_3() {
    // TimedMass (tests/fixtures/timed_mass): m v' = f + F s(t), s switched on and off by
    // time events inside steps. As a block, with its input f from a system input (0): its
    // states follow the exact piecewise polynomial (RK4 is exact on it, the events are
    // taken at their instants), and its output a = v' (direct feedthrough from f) reads the
    // stage's f.
    let dir = tempfile::tempdir().unwrap();
    for fmi in [2, 3] {
        let fmu = timed_mass::build(dir.path(), fmi);
        let v = json!({
            "name": "timed_mass_block",
            "solver": {"method": "rk4", "step": 0.01, "stop_time": 1.0},
            "inputs": {"push": {"start": 0.0}},
            "output": {"interval": 0.01, "signals": {"q": "plant.q", "v": "plant.v", "a": "plant.a"}},
            "components": {
                "plant": {"type": "fmu", "path": fmu.to_str().unwrap(), "role": "signal", "interface": "me"}
            },
            "connections": [{"from": "push", "to": "plant.f"}]
        });
        let rec = run_value(&v);
        let (q, vel, a) = (col(&rec, "q"), col(&rec, "v"), col(&rec, "a"));
        for (i, &t) in rec.time.iter().enumerate() {
            let (qe, ve, ae, _) = timed_mass::exact(t);
            assert!(
                (q[i] - qe).abs() < 1e-12 && (vel[i] - ve).abs() < 1e-12,
                "FMI {fmi}: t = {t}: q {} v {}",
                q[i],
                vel[i]
            );
            assert!((a[i] - ae).abs() < 1e-12, "FMI {fmi}: a({t}) = {}", a[i]);
        }
        // A push of 1 N from the command line's --input changes the acceleration by 1/m.
        let mut pushed = v.clone();
        pushed["inputs"]["push"]["start"] = json!(1.0);
        let rec = run_value(&pushed);
        let a_end = *col(&rec, "a").last().unwrap();
        assert!((a_end - 1.0 / timed_mass::M).abs() < 1e-12, "FMI {fmi}: a = {a_end} with f = 1 N");
    }
}
