//! The command line: components listing, DOT graph, plots, labelled and plain signal
//! lists, time-varying inputs from a CSV table.

mod common;
use common::*;
use serde_json::json;

#[test]
fn components_lists_every_registered_type_with_parameters_ports_and_signals() {
    let out = cli(&["components"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for t in stiction::registry().types() {
        assert!(text.contains(&format!("{} (", t.name)), "missing {}", t.name);
        for p in t.params {
            assert!(text.contains(p.name), "{}: parameter {} not listed", t.name, p.name);
        }
    }
    assert!(text.contains("signals:") && text.contains("ports:"));
    let one = cli(&["components", "rigid_body"]);
    let one = String::from_utf8_lossy(&one.stdout);
    assert!(one.starts_with("rigid_body (admittance)") && !one.contains("plane_contact ("));
    let bad = cli(&["components", "nosuch"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn graph_prints_the_network_as_dot() {
    let out = cli(&["graph", example("two_link_fricK.json").to_str().unwrap()]);
    assert!(out.status.success());
    let dot = String::from_utf8_lossy(&out.stdout);
    assert!(dot.starts_with("graph \"two_link_fricK\" {"), "{dot}");
    assert!(dot.contains("\"arm\" [shape=ellipse]"));
    assert!(dot.contains("\"fric0\" [shape=box]"));
    assert!(dot.contains("\"fric0\" -- \"arm\" [label=\"b / joint0\"]"), "{dot}");
    assert!(dot.contains("\"fric1\" -- \"ground\""));
    assert_eq!(dot.matches(" -- ").count(), 6);
}

#[test]
fn run_writes_csv_and_png_and_svg_plots() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("sphere.csv");
    let png = dir.path().join("sphere.png");
    let out = cli(&[
        "run",
        example("rolling_sphere.json").to_str().unwrap(),
        "-o",
        csv.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("time,center_vx,contact_vx,height,spin_y\n0,2,2,0.202,0\n"));
    assert_eq!(text.lines().count(), 1 + 1201);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // Not a terminal: no progress bar, one summary line.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("12000 steps") && err.contains("1201 rows"), "{err}");
    let svg = dir.path().join("sphere.svg");
    let out = cli(&[
        "run",
        example("rolling_sphere.json").to_str().unwrap(),
        "-o",
        "-",
        "--plot",
        svg.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("time,center_vx"));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
}

/// A mass pushed by a force read from a CSV table (linear interpolation) and listed with a
/// plain signal list: v(t) is the integral of the piecewise-linear force.
#[test]
fn csv_table_inputs_and_plain_signal_lists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("push.csv"), "time,force\n0,0\n1,2\n2,2\n").unwrap();
    let sys = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 2.0},
        "output": {"interval": 0.5, "signals": ["m.v", "m.q", "push.f"]},
        "components": {
            "m": {"type": "mass", "mass": 2.0},
            "push": {"type": "force_source", "force": {"table": "push.csv", "column": "force", "time_column": "time"}}
        },
        "connections": [{"from": "push.body", "to": "m"}]
    });
    let path = dir.path().join("push.json");
    std::fs::write(&path, sys.to_string()).unwrap();
    let rec = {
        let system = stiction::load(&path).unwrap();
        let (mut sim, plan) = system.into_simulator(1).unwrap();
        let mut rec = stiction::framework::Recorder::default();
        sim.run(&plan, &mut rec, &mut |_| {}).unwrap();
        rec
    };
    assert_eq!(rec.labels, vec!["m.v", "m.q", "push.f"]);
    // F = 2t on [0, 1], 2 after, M = 2: v = t²/2, then 0.5 + (t − 1).
    let v = col(&rec, "m.v");
    let f = col(&rec, "push.f");
    let expect_v = [0.0, 0.125, 0.5, 1.0, 1.5];
    let expect_f = [0.0, 1.0, 2.0, 2.0, 2.0];
    for i in 0..5 {
        assert!((v[i] - expect_v[i]).abs() < 1e-9, "v[{i}] = {}", v[i]);
        assert!((f[i] - expect_f[i]).abs() < 1e-12, "f[{i}] = {}", f[i]);
    }
    // The CLI writes the same header.
    let out = cli(&["run", path.to_str().unwrap(), "-o", "-", "--quiet"]);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("time,m.v,m.q,push.f\n"));
}

/// `run --units`: off by default (the header of names that readers look columns up by); in
/// the header (`q [m]`) or as a second row; each unit the one the component declares for the
/// signal. No cell is `-0` (karnopp_fig4 and ramp_block wrote some before).
#[test]
fn run_states_csv_units_on_request_and_writes_no_negative_zero() {
    let run = |name: &str, extra: &[&str]| {
        let path = example(name);
        let mut args = vec!["run", path.to_str().unwrap(), "-o", "-", "--quiet"];
        args.extend_from_slice(extra);
        let o = cli(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let plain = run("ramp_block.json", &[]);
    assert!(plain.starts_with("time,q,v,friction,hand_force,stuck\n0,0,0,"), "{plain}");
    let header = run("ramp_block.json", &["--units", "header"]);
    let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    let (p, h) = (lines(&plain), lines(&header));
    assert_eq!(h[0], "time [s],q [m],v [m/s],friction [N],hand_force [N],stuck");
    assert_eq!(h[1..], p[1..], "only the header changes");
    let row = lines(&run("ramp_block.json", &["--units", "row"]));
    assert_eq!((row[0].as_str(), row[1].as_str()), (p[0].as_str(), "s,m,m/s,N,N,"));
    assert_eq!(row[2..], p[1..]);
    for name in ["karnopp_fig4.json", "ramp_block.json"] {
        let text = run(name, &[]);
        assert!(!text.split([',', '\n']).any(|cell| cell == "-0"), "{name} writes -0");
    }
    let bad = cli(&["run", example("ramp_block.json").to_str().unwrap(), "-o", "-", "--units", "footer"]);
    assert_eq!(bad.status.code(), Some(2), "an unknown --units value is a usage error");
}

/// Every unit a component type declares for a parameter or a signal is in the framework's
/// one unit table (its quantity and SI base units, for result files and exported FMUs).
#[test]
fn every_declared_unit_is_in_the_framework_unit_table() {
    use stiction::framework::units::unit;
    for t in stiction::registry().types() {
        let declared = t.params.iter().map(|p| p.unit).chain(t.signals.iter().map(|s| s.unit));
        for u in declared.filter(|u| !u.is_empty()) {
            assert!(unit(u).is_some(), "{}: unit '{u}' is not in framework/src/units.rs", t.name);
        }
    }
}

/// A 1-D component written in translational units (spring, friction element, mass, force)
/// that acts on a shaft states rotational units: in the drivetrain the shaft spring and the
/// model D brake sit on the gear's output, so their torque is N·m and their speed rad/s, in
/// the CSV header, `check` and the exported FMU's model description alike; a system without
/// a rotational component keeps m, m/s, N. Every unit of every example's columns is in the
/// framework's unit table (and is a rotational one wherever a gear or robot joint is reached).
#[test]
fn components_on_a_shaft_state_rotational_units_everywhere() {
    let path = example("drivetrain_worm_brake.json");
    let o = cli(&["run", path.to_str().unwrap(), "-o", "-", "--quiet", "--units", "header"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.lines().next().unwrap(),
        "time [s],q_out [rad],w_out [rad/s],mode,tau_shaft [N·m],w_brake [rad/s],tau_brake [N·m],brake_stuck"
    );
    let o = cli(&["check", path.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("tau_shaft [N·m], w_brake [rad/s], tau_brake [N·m]"), "{out}");
    let dir = tempfile::tempdir().unwrap();
    let fmu = dir.path().join("d.fmu");
    let o = cli(&["fmu", "export", path.to_str().unwrap(), "-o", fmu.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = stiction_fmi_schema::Archive::describe(&fmu, "d.fmu").unwrap().description;
    let unit = |n: &str| md.variables.iter().find(|v| v.name == n).and_then(|v| v.unit.clone()).unwrap_or_default();
    assert_eq!((unit("tau_shaft"), unit("w_brake"), unit("tau_brake")), ("N.m".into(), "rad/s".into(), "N.m".into()));
    // Translational systems keep their units.
    let o = cli(&["run", example("model_d_fig14.json").to_str().unwrap(), "-o", "-", "--quiet", "--units", "row"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let units = out.lines().nth(1).unwrap();
    assert!(!units.contains("rad") && units.contains("m/s"), "{units}");
    // Every example: known units only.
    for e in std::fs::read_dir(path.parent().unwrap()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") || p.to_string_lossy().contains("fmu") {
            continue;
        }
        let o = cli(&["check", p.to_str().unwrap()]);
        let out = String::from_utf8_lossy(&o.stdout);
        let line =
            out.lines().find(|l| l.starts_with("  output: every")).unwrap_or_else(|| panic!("{}: {out}", p.display()));
        for u in line.split('[').skip(1).map(|x| x.split(']').next().unwrap()) {
            assert!(
                stiction::framework::units::unit(u).is_some(),
                "{}: unit {u} not in the table: {line}",
                p.display()
            );
        }
    }
}
