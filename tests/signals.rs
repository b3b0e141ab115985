//! Signals read by components' time functions (framework/src/stepper/bus.rs): a system's
//! inputs, signals read from each RK4 stage's state, signals held over a step, and their
//! errors.

mod common;
use common::*;
use serde_json::json;

/// A 1 kg mass released from q = 1 under a PD law f = −K q − B v, written either through
/// signals (a force source reading the mass's position and velocity) or as a spring_damper
/// to ground.
fn pd_system(through_signals: bool, step: f64, method: &str) -> serde_json::Value {
    let (law, connections) = if through_signals {
        (
            json!({"type": "force_source", "force": "-100*body.q - 2*body.v"}),
            json!([{"from": "law.body", "to": "body"}]),
        )
    } else {
        (
            json!({"type": "spring_damper", "K": 100, "B": 2}),
            json!([{"from": "law.a", "to": "ground"}, {"from": "law.b", "to": "body"}]),
        )
    };
    json!({
        "solver": {"method": method, "step": step, "stop_time": 3.0},
        "output": {"interval": 0.04, "signals": {"q": "body.q", "v": "body.v"}},
        "components": {"body": {"type": "mass", "mass": 1.0, "init": {"q": 1.0, "v": 0.0}}, "law": law},
        "connections": connections
    })
}

/// The exact solution of q̈ = −100 q − 2 q̇, q(0) = 1, q̇(0) = 0.
fn damped(t: f64) -> f64 {
    let wd = (100.0f64 - 1.0).sqrt();
    (-t).exp() * ((wd * t).cos() + (wd * t).sin() / wd)
}

#[test]
fn a_pd_law_through_signals_is_the_spring_damper_to_rounding_and_keeps_rk4s_order() {
    for method in ["rk4", "euler"] {
        let a = run_value(&pd_system(true, 1e-3, method));
        let b = run_value(&pd_system(false, 1e-3, method));
        for label in ["q", "v"] {
            let (ca, cb) = (col(&a, label), col(&b, label));
            let scale = cb.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let worst = max_diff(&ca, &cb) / scale;
            assert!(worst <= 1e-12, "{method} {label}: relative difference {worst:e}");
        }
    }
    // RK4's order is kept: the error against the exact solution falls 16-fold per halving.
    let err = |step: f64| {
        let r = run_value(&pd_system(true, step, "rk4"));
        r.time.iter().zip(col(&r, "q")).map(|(t, q)| (q - damped(*t)).abs()).fold(0.0, f64::max)
    };
    let (e1, e2) = (err(0.02), err(0.01));
    let order = (e1 / e2).log2();
    assert!(order >= 3.8, "observed order {order:.2} (errors {e1:e}, {e2:e})");
}

#[test]
fn a_signal_of_an_impedance_is_held_over_each_step() {
    // `ramp` pushes a spare mass with f = t; `follower` reads ramp.f and pushes `body`. Held
    // at x(k), follower's force over step k is kT, so under RK4 v(kT) = T²·k(k−1)/2 exactly
    // (a force read at every stage would give (kT)²/2).
    let v = json!({
        "solver": {"method": "rk4", "step": 0.01, "stop_time": 1.0},
        "output": {"interval": 0.5, "signals": {"v": "body.v", "f": "follower.f", "g": "ramp.f"}},
        "components": {
            "spare": {"type": "mass", "mass": 1.0},
            "ramp": {"type": "force_source", "force": "t"},
            "body": {"type": "mass", "mass": 1.0},
            "follower": {"type": "force_source", "force": {"signal": "ramp.f"}}
        },
        "connections": [{"from": "ramp.body", "to": "spare"}, {"from": "follower.body", "to": "body"}]
    });
    let r = run_value(&v);
    let k = 100.0;
    let held = 0.01f64 * 0.01 * k * (k - 1.0) / 2.0;
    assert!((at(&r, "v", 1.0) - held).abs() < 1e-12, "v(1) = {} (held: {held})", at(&r, "v", 1.0));
    // At an output instant the follower's force is the ramp's force at that instant.
    assert_eq!(at(&r, "f", 1.0), at(&r, "g", 1.0));
}

/// A 1 kg mass pushed by the system input `u`.
fn driven() -> serde_json::Value {
    json!({
        "name": "driven",
        "solver": {"method": "rk4", "step": 0.01, "stop_time": 1.0},
        "inputs": {"u": {"unit": "N", "start": 2.0, "description": "push"}},
        "output": {"interval": 0.5, "signals": {"v": "body.v"}},
        "components": {
            "body": {"type": "mass", "mass": 1.0},
            "push": {"type": "force_source", "force": {"signal": "u"}}
        },
        "connections": [{"from": "push.body", "to": "body"}]
    })
}

#[test]
fn an_input_keeps_its_start_value_unless_set() {
    let r = run_value(&driven());
    assert!((at(&r, "v", 1.0) - 2.0).abs() < 1e-12);
    // Set from the library: a function of t, read at every stage (RK4 integrates 3t² exactly).
    let (mut sim, plan) = build_value(&driven());
    sim.set_input("u", stiction::framework::TimeFunction::expression("3*t^2").unwrap()).unwrap();
    let mut rec = stiction::framework::Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap();
    assert!((at(&rec, "v", 1.0) - 1.0).abs() < 1e-12, "{}", at(&rec, "v", 1.0));
    let e = sim.set_input("w", stiction::framework::TimeFunction::Constant(1.0)).unwrap_err().to_string();
    assert!(e.contains("no input 'w'") && e.contains("inputs: u"), "{e}");
}

#[test]
fn the_cli_drives_inputs_from_an_expression_or_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("driven.json");
    std::fs::write(&sys, serde_json::to_string(&driven()).unwrap()).unwrap();
    let table = dir.path().join("u.csv");
    std::fs::write(&table, "time,u,other\n0,0,5\n1,2,5\n").unwrap();
    let v1 = |extra: &[&str]| {
        let mut args = vec!["run", sys.to_str().unwrap(), "-o", "-", "--quiet"];
        args.extend_from_slice(extra);
        let out = cli(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let last = text.lines().last().unwrap().to_string();
        last.split(',').nth(1).unwrap().parse::<f64>().unwrap()
    };
    assert!((v1(&[]) - 2.0).abs() < 1e-12);
    assert!((v1(&["--input", "u=3*t^2"]) - 1.0).abs() < 1e-12);
    // A table 2t (linear interpolation), column named like the input or given.
    let t = table.to_str().unwrap();
    assert!((v1(&["--input", &format!("u={t}")]) - 1.0).abs() < 1e-12);
    assert!((v1(&["--input", &format!("u={t}:other")]) - 5.0).abs() < 1e-12);
    // Bad arguments: exit 2 with the argument named.
    for (arg, says) in [("w=1", "no input 'w'"), ("u=sin(", "--input u=sin("), ("u", "NAME=")] {
        let out = cli(&["run", sys.to_str().unwrap(), "-o", "-", "--quiet", "--input", arg]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(says), "{arg}: {err}");
    }
    // `check` lists the input and the signals read.
    let out = cli(&["check", sys.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("input: u [N], start 2: push"), "{text}");
    assert!(text.contains("signal read: u (a system input"), "{text}");
}

#[test]
fn bad_signals_are_refused_naming_the_json_path() {
    let with_force = |force: serde_json::Value| {
        let mut v = pd_system(true, 1e-3, "rk4");
        v["components"]["law"]["force"] = force;
        run_json("check", &v)
    };
    let cases = [
        (json!({"signal": "bdy.q"}), "components.law.force"),
        (json!({"signal": "bdy.q"}), "did you mean 'body'"),
        (json!("-100*body.qq"), "has no signal 'qq'"),
        (json!({"signal": "body.a"}), "depends on the forces on 'body'"),
        (json!({"signal": 3}), "components.law.force.signal"),
        (json!({"signal": "body.q", "gain": 2}), "only the key 'signal'"),
        (json!("2*u"), "the system has no \"inputs\""),
        (json!("body.q[7]"), "out of range"),
    ];
    for (force, says) in cases {
        let (code, err) = with_force(force.clone());
        assert_eq!(code, 2, "{force}: {err}");
        assert!(err.contains(says), "{force}: expected '{says}' in: {err}");
    }
    // An input may not share a component's name, nor be called t.
    for (name, says) in [("body", "a component is also named 'body'"), ("t", "is not 't'")] {
        let mut v = driven();
        v["inputs"] = json!({ name: {"start": 0} });
        let (code, err) = run_json("check", &v);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("inputs.{name}")) && err.contains(says), "{err}");
    }
    let mut v = driven();
    v["inputs"]["u"]["gain"] = json!(1);
    let (code, err) = run_json("check", &v);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("gain"), "{err}");
}

#[test]
fn signals_give_the_same_bits_for_any_thread_count() {
    // 40 masses, each under a PD law through signals and pulled by its neighbour's position:
    // enough components for parallel phases with a threshold of 1.
    let n = 40;
    let mut comps = serde_json::Map::new();
    let mut conns = Vec::new();
    for i in 0..n {
        let next = (i + 1) % n;
        comps.insert(format!("m{i}"), json!({"type": "mass", "mass": 1.0, "init": {"q": (i as f64 * 0.37).sin()}}));
        comps.insert(
            format!("f{i}"),
            json!({"type": "force_source", "force": format!("-50*m{i}.q - 0.5*m{i}.v + 10*m{next}.q")}),
        );
        conns.push(json!({"from": format!("f{i}.body"), "to": format!("m{i}")}));
    }
    let v = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 0.5},
        "output": {"interval": 0.05, "signals": (0..n).map(|i| format!("m{i}.q")).collect::<Vec<_>>()},
        "components": comps,
        "connections": conns
    });
    let (one, two) = (run_value_parallel(&v, 1), run_value_parallel(&v, 2));
    same_bits(&one, &two).unwrap_or_else(|e| panic!("1 and 2 threads: {e}"));
}

#[test]
fn a_joint_pd_controller_through_signals_stops_in_its_dead_band_and_holds() {
    // examples/two_link_pd_fricK.json: τ = Kp (ref − q) − Kd w against joint friction F.
    // A PD controller against Coulomb friction comes to rest where |Kp (ref − q)| ≤ F, and
    // there the friction holds the arm exactly.
    let (kp, f) = (4.0, 0.5);
    let check = |rec: &stiction::framework::Recorder, refs: [f64; 2]| {
        for (j, r) in refs.iter().enumerate() {
            let q = col(rec, &format!("theta{j}"));
            let end = *q.last().unwrap();
            assert!((r - end).abs() <= f / kp + 1e-9, "joint {j}: rests at {end}, reference {r}");
            // No drift over the last 1.2 s.
            let late = at(rec, &format!("theta{j}"), 2.8);
            assert!((end - late).abs() <= 1e-12, "joint {j} drifts: {late} -> {end}");
        }
    };
    check(&run_example("two_link_pd_fricK.json", 1), [1.0, -0.5]);
    // The references from the command line.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pd.csv");
    let ex = example("two_link_pd_fricK.json");
    let args = ["run", ex.to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"];
    let run = cli(&[&args[..], &["--input", "q0_ref=0.3", "--input", "q1_ref=0.4"]].concat());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let mut rec = stiction::framework::Recorder::default();
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    rec.labels = lines.next().unwrap().split(',').skip(1).map(String::from).collect();
    for l in lines {
        let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        rec.time.push(v[0]);
        rec.rows.push(v[1..].to_vec());
    }
    check(&rec, [0.3, 0.4]);
}
