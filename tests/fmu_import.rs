//! FMU import (fmus/import): the FMUs that `stiction fmu export` writes, imported back
//! as network components and compared with the native components they were made from.
//!
//! * (a) The gear as an FMI 2.0 / 3.0 Co-Simulation admittance in Fig. 9 (Euler, T = H =
//!   1e-3 s) against `gear_1dof_fig9_gv105.json`: ≤ 1e-12 (measured: identical). The
//!   doStep at t_k takes the port torques at x(k), exactly what the native step (44) takes,
//!   and runs the same arithmetic (q + T v_new); the only possible difference is the last
//!   bit of v, which the native solver reaches through the rate (v_new − v)/T.
//! * (b) The friction element as a Co-Simulation impedance in Fig. 11 against the native
//!   model C: ≤ 1e-12 (measured: identical). The force of doStep(t_k) is the element's
//!   implicit step from v(t_k), applied over [t_k, t_k+1), as the native element does.
//! * (c) The friction element as a Model Exchange impedance inside RK4: 4th-order
//!   convergence while it slides (error ratios 16 ± 2 as T halves).
//! * (d) Every error class names the FMU and the function and carries the FMU's log.

mod common;

use common::{cli, col, export_fmu as export, max_diff, run_example};
use serde_json::{json, Value};
use std::path::Path;
use stiction::framework::Recorder;

/// Write `system` as `name` into `dir` and load it (relative FMU paths resolve from `dir`).
fn load(dir: &Path, name: &str, system: &Value) -> stiction::framework::Result<stiction::framework::system::System> {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(system).unwrap()).unwrap();
    stiction::load(&path)
}

fn run(dir: &Path, name: &str, system: &Value) -> Recorder {
    let sys = load(dir, name, system).unwrap_or_else(|e| panic!("{e}"));
    let (mut sim, plan) = sys.into_simulator(1).unwrap_or_else(|e| panic!("{e}"));
    let mut rec = Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    rec
}

fn example_value(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(common::example(name)).unwrap()).unwrap()
}

/// examples/fmu_gear_fig9.json with the FMU at `fmu`.
fn fig9_with(fmu: &Path) -> Value {
    let mut s = example_value("fmu_gear_fig9.json");
    s["components"]["gear"]["path"] = json!(fmu);
    s
}

#[test]
fn gear_cosimulation_reproduces_the_native_fig9_run() {
    let dir = tempfile::tempdir().unwrap();
    let native = run_example("gear_1dof_fig9_gv105.json", 1);
    let (p, v, fv) = (col(&native, "p"), col(&native, "v"), col(&native, "fv"));
    let fmi2 = export(dir.path(), "gear", "2", "cs", &[]);
    let fmi3 = export(dir.path(), "gear", "3", "cs", &[]);
    for fmu in [fmi2, fmi3] {
        let rec = run(dir.path(), "fig9.json", &fig9_with(&fmu));
        assert_eq!(rec.labels, ["p", "v", "fv"]);
        assert_eq!(rec.time.len(), native.time.len());
        let (fp, fvel, ffv) = (col(&rec, "p"), col(&rec, "v"), col(&rec, "fv"));
        let (dp, dv) = (max_diff(&fp, &p), max_diff(&fvel, &v));
        // The FMU's fv is the load torque it is fed; the native fv adds the damping Be v.
        let native_load: Vec<f64> = fv.iter().zip(&v).map(|(f, v)| f - 10.0 * v).collect();
        let dfv = max_diff(&ffv, &native_load);
        println!(
            "{}: max |p - native| = {dp:.3e} rad, |v - native| = {dv:.3e} rad/s, |fv - native| = {dfv:.3e} N m",
            fmu.display()
        );
        assert!(dp <= 1e-12 && dv <= 1e-12 && dfv <= 1e-9, "FMU gear differs from native: {dp:e} {dv:e} {dfv:e}");
        // Stuck against the wall from 0.35 s until fu = +20 at 1.4 s: exactly zero.
        let stuck: Vec<usize> = (0..rec.time.len()).filter(|&k| rec.time[k] > 0.35 && rec.time[k] < 1.4).collect();
        assert!(stuck.len() > 1000 && stuck.iter().all(|&k| fvel[k] == 0.0), "v not exactly 0 while stuck");
        assert!((ffv[stuck[0]] + 169.76).abs() < 0.01, "holds the wall torque: {}", ffv[stuck[0]]);
    }
}

/// The contract: examples/fmu_gear_fig9.json runs from the CLI once the FMU is exported to
/// target/fmu/StictionGear.fmu, with exactly the columns p, v, fv.
#[test]
fn the_fmu_gear_example_runs_from_the_cli() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fmu = root.join("target/fmu/StictionGear.fmu");
    let o = cli(&["fmu", "export", "gear", "--fmi", "2", "--interface", "cs", "-o", fmu.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("out.csv");
    let example = common::example("fmu_gear_fig9.json");
    let o = cli(&["run", example.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().next(), Some("time,p,v,fv"));
    assert_eq!(text.lines().count(), 2002);
    let info = cli(&["fmu", "info", fmu.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&info.stdout);
    assert!(info.status.success());
    for needle in [
        "FMI 2.0",
        "Co-Simulation (modelIdentifier StictionGear)",
        "default experiment: start 0 s, stop 2 s, step 0.001 s",
        "fu              10  input",
        "damping         8   parameter    fixed        Real     0.0    N.m.s/rad",
    ] {
        assert!(out.contains(needle), "fmu info lacks {needle:?}:\n{out}");
    }
}

#[test]
fn communication_steps_and_rk4() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = export(dir.path(), "gear", "2", "cs", &[]);
    // H = 2 T: one doStep per two network steps, the motion held in between.
    let mut s = fig9_with(&fmu);
    s["components"]["gear"]["communication_step"] = json!(0.002);
    s["components"]["gear"]["parameters"]["substep"] = json!(0.002);
    let rec = run(dir.path(), "h2.json", &s);
    let (t, p, v) = (&rec.time, col(&rec, "p"), col(&rec, "v"));
    for k in (1..t.len() - 1).step_by(2) {
        assert_eq!((p[k], v[k]), (p[k - 1], v[k - 1]), "held between communication points at t = {}", t[k]);
    }
    assert!((0..t.len()).filter(|&k| t[k] > 0.36 && t[k] < 1.4).all(|k| v[k] == 0.0));
    // RK4 network with the Co-Simulation FMU: the same communication points.
    s["solver"]["method"] = json!("rk4");
    let rec4 = run(dir.path(), "rk4.json", &s);
    assert!(max_diff(&col(&rec4, "p"), &p) < 1e-12, "the gear sees the same sampled torques under RK4");
    // H not a multiple of T: a clear error naming the component.
    s["components"]["gear"]["communication_step"] = json!(0.0015);
    let e = load(dir.path(), "bad.json", &s).unwrap().into_simulator(1).err().expect("error").to_string();
    assert!(e.contains("components.gear") && e.contains("communication_step 0.0015 s is not a whole multiple"), "{e}");
}

/// examples/two_mass_model_c_fig11.json with both contacts replaced by the friction FMU
/// (`interface`) wired as a one-port impedance on each mass (v in, −f out).
fn fig11_with(fmu: &Path, interface: &str) -> Value {
    let mut s = example_value("two_mass_model_c_fig11.json");
    for (c, f) in [("contact1", 5.0), ("contact2", 2.5)] {
        s["components"][c] = json!({
            "type": "fmu", "path": fmu, "interface": interface, "role": "impedance",
            "inputs": {"velocity": "v"}, "outputs": {"force": "-f"}, "parameters": {"F": f}
        });
    }
    let conns: Vec<Value> = s["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            !(c["from"].as_str().unwrap().starts_with("contact") && c["from"].as_str().unwrap().ends_with(".a"))
        })
        .map(|c| {
            let from = c["from"].as_str().unwrap();
            match from.strip_suffix(".b") {
                Some(contact) if contact.starts_with("contact") => {
                    json!({"from": format!("{contact}.port"), "to": c["to"]})
                }
                _ => c.clone(),
            }
        })
        .collect();
    s["connections"] = json!(conns);
    s
}

#[test]
fn friction_cosimulation_impedance_reproduces_native_fig11() {
    let dir = tempfile::tempdir().unwrap();
    let native = run_example("two_mass_model_c_fig11.json", 1);
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "friction", fmi, "cs", &[]);
        let rec = run(dir.path(), "fig11.json", &fig11_with(&fmu, "cs"));
        let mut worst = 0.0f64;
        for c in ["v1", "v2", "stuck1", "stuck2"] {
            worst = worst.max(max_diff(&col(&rec, c), &col(&native, c)));
        }
        // The FMU's f resists the sliding; the native signal is the force on the mass, −f.
        for c in ["f1", "f2"] {
            let neg: Vec<f64> = col(&rec, c).iter().map(|f| -f).collect();
            worst = worst.max(max_diff(&neg, &col(&native, c)));
        }
        println!("friction FMI {fmi} CS in Fig. 11: max difference from native model C = {worst:.3e}");
        assert!(worst <= 1e-12, "FMI {fmi}: {worst:e}");
        let stuck = col(&rec, "stuck1");
        let cycles = stuck.windows(2).filter(|w| w[0] == 0.0 && w[1] == 1.0).count();
        assert!(cycles >= 10, "stick-slip in contact 1: {cycles} cycles");
    }
}

/// A 1 kg mass launched at 1 m/s, pushed by 4 + sin 10t N against the friction FMU (Model
/// Exchange, Coulomb F = 5 N): it decelerates but slides all through 0.2 s, so the
/// saturated friction law is smooth along the trajectory and RK4 is 4th order.
fn sliding_mass(fmu: &Path, step: f64) -> Value {
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 0.2},
        "output": {"interval": 0.004, "signals": {"q": "body.q", "v": "body.v", "e": "fric.e", "f": "fric.f"}},
        "components": {
            "body": {"type": "mass", "mass": 1.0, "init": {"q": 0.0, "v": 1.0}},
            "push": {"type": "force_source", "force": "4 + sin(10*t)"},
            "fric": {"type": "fmu", "path": fmu, "interface": "me", "role": "impedance",
                     "inputs": {"velocity": "v"}, "outputs": {"force": "-f"}}
        },
        "connections": [{"from": "push.body", "to": "body"}, {"from": "fric.port", "to": "body"}]
    })
}

/// FMI 2.0 and FMI 3.0 (same model behind both APIs): 4th order as T halves, and the two
/// versions give identical runs.
#[test]
fn friction_model_exchange_converges_at_fourth_order_in_rk4() {
    let dir = tempfile::tempdir().unwrap();
    let steps = [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4];
    let mut by_version: Vec<Vec<Recorder>> = Vec::new();
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "friction", fmi, "me", &[]);
        let runs: Vec<Recorder> =
            steps.iter().map(|&h| run(dir.path(), "slide.json", &sliding_mass(&fmu, h))).collect();
        let last = |r: &Recorder, c: &str| *col(r, c).last().unwrap();
        // Sliding all along, at the Coulomb level.
        for r in &runs {
            assert!(col(r, "v").iter().all(|&v| v > 0.1), "the mass keeps sliding");
            assert_eq!(last(r, "f"), 5.0);
        }
        // Ratios of successive differences (x_T − x_T/2)/(x_T/2 − x_T/4) of `series`.
        let ratios = |series: &[f64]| -> (Vec<f64>, Vec<f64>) {
            let d: Vec<f64> = series.windows(2).map(|w| w[0] - w[1]).collect();
            let r = d.windows(2).map(|w| w[0] / w[1]).collect();
            (d, r)
        };
        // q and v at 0.2 s (the force is constant, the drive sin 10t is integrated by RK4's
        // Simpson-like quadrature), T = 4e-3 .. 5e-4; below that the differences reach round-off.
        for c in ["q", "v"] {
            let (d, r) = ratios(&runs[..4].iter().map(|r| last(r, c)).collect::<Vec<_>>());
            println!("FMI {fmi}: {c}(0.2 s): differences as T halves from 4e-3 s {d:?}, ratios {r:.2?}");
            assert!(r.iter().all(|r| (14.0..18.0).contains(r)), "FMI {fmi}, {c}: not 4th order: {r:?}");
        }
        // The deflection relaxes as de/dt = (F − K e)/B, λ = K/B = 100 /s: the ratio is
        // 16 e^(λT/2) (1 − λT/6) ≈ 16.7 at T = 1e-3, so T = 1e-3 .. 1.25e-4, at t = 0.008 s.
        let (d, r) = ratios(&runs[2..].iter().map(|r| col(r, "e")[2]).collect::<Vec<_>>());
        println!(
            "FMI {fmi}: e(0.008 s) = {:.6e} m: differences as T halves from 1e-3 s {d:?}, ratios {r:.2?}",
            col(&runs[5], "e")[2]
        );
        assert!(r.iter().all(|r| (14.0..18.0).contains(r)), "FMI {fmi}, e: not 4th order: {r:?}");
        by_version.push(runs);
    }
    for (a, b) in by_version[0].iter().zip(&by_version[1]) {
        for c in ["q", "v", "e", "f"] {
            assert_eq!(col(a, c), col(b, c), "FMI 2.0 and 3.0 Model Exchange runs differ in {c}");
        }
    }
}

#[test]
fn gear_model_exchange_admittance_sticks_exactly_in_rk4() {
    let dir = tempfile::tempdir().unwrap();
    let native = run_example("gear_1dof_fig9_gv105.json", 1);
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "gear", fmi, "both", &[]);
        let mut s = fig9_with(&fmu);
        let gear = &mut s["components"]["gear"];
        gear["interface"] = json!("me");
        gear.as_object_mut().unwrap().remove("communication_step");
        gear["parameters"].as_object_mut().unwrap().remove("substep");
        s["solver"]["method"] = json!("rk4");
        let rec = run(dir.path(), "me.json", &s);
        let (t, v) = (&rec.time, col(&rec, "v"));
        let stuck: Vec<usize> = (0..t.len()).filter(|&k| t[k] > 0.36 && t[k] < 1.4).collect();
        assert!(stuck.iter().all(|&k| v[k] == 0.0), "FMI {fmi}: ME gear under RK4 not exactly stuck");
        let dp = max_diff(&col(&rec, "p"), &col(&native, "p"));
        println!(
            "FMI {fmi}: ME gear, RK4 T = 1e-3, events located within the step: max |p - native Euler| = {dp:.3e} rad"
        );
        // The native Euler run's own O(T) error (the angles differ by about |v| T per step of
        // timing difference at the impact), as in tests/fmu_export.rs.
        assert!(dp < 1e-2, "{dp}");
        assert!(*v.last().unwrap() > 0.7, "released after 1.4 s");
    }
}

/// A gear coasting against a constant load torque stops at an analytic instant: the ME
/// FMU's stick event is located within the (coarse) step, so the stop position is exact.
/// γu = 0.2, γv = 1.05, m = M = 1, v0 = 1, fu = 0, fv = 5: sliding forward,
/// (m + M) v̇ = −fv − Φ(+1, φ, ρ̂) with ρ̂ = −0.425, φ = 3.125, Φ(+1) = φ/(1 − ρ̂);
/// it stops at t* = v0/|v̇| and holds (non-backdrivable), at q* = v0²/(2|v̇|).
#[test]
fn gear_model_exchange_events_are_located_within_the_step() {
    let dir = tempfile::tempdir().unwrap();
    for fmi in ["2", "3"] {
        let fmu = export(dir.path(), "gear", fmi, "me", &[]);
        let phi = 1.05 * 5.0 - 0.425 * 5.0;
        let acc = (5.0 + phi / 1.425) / 2.0;
        let (t_stop, q_stop) = (1.0 / acc, 1.0 / (2.0 * acc));
        for step in [0.01, 0.05] {
            let s = json!({
                "name": "gear_me_coast",
                "solver": {"method": "rk4", "step": step, "stop_time": 0.6},
                "output": {"interval": step, "signals": {"q": "gear.q", "v": "gear.v"}},
                "components": {
                    "gear": {"type": "fmu", "path": fmu, "interface": "me", "role": "admittance",
                             "ports": {"input": {"force": "fu"},
                                       "output": {"force": "fv", "force_sign": -1, "position": "q", "velocity": "v"}},
                             "parameters": {"gamma_u": 0.2, "gamma_v": 1.05, "v": 1.0}},
                    "motor": {"type": "force_source", "force": 0.0},
                    "load": {"type": "force_source", "force": -5.0}
                },
                "connections": [{"from": "motor.body", "to": "gear.input"}, {"from": "load.body", "to": "gear.output"}]
            });
            let rec = run(dir.path(), "coast.json", &s);
            let (t, q, v) = (&rec.time, col(&rec, "q"), col(&rec, "v"));
            let after: Vec<usize> = (0..t.len()).filter(|&k| t[k] > t_stop).collect();
            assert!(after.iter().all(|&k| v[k] == 0.0), "T = {step}: not exactly stuck after t* = {t_stop}");
            let dq = after.iter().map(|&k| (q[k] - q_stop).abs()).fold(0.0, f64::max);
            println!("FMI {fmi}, T = {step}: stop at t* = {t_stop:.6} s (analytic), stuck position error {dq:.2e} m");
            // Located to 1e-10 s on the exact (quadratic) trajectory: q* to 1e-9.
            assert!(dq < 1e-9, "FMI {fmi}, T = {step}: stuck at {} instead of {q_stop}", q[after[0]]);
        }
    }
}

/// Run `stiction check` on a Fig. 9 system whose gear is `fmu` (with extra parameters) and
/// return its stderr, asserting exit code 2.
fn check_error(dir: &Path, fmu: &Path, params: Value) -> String {
    let mut s = fig9_with(fmu);
    for (k, v) in params.as_object().unwrap() {
        s["components"]["gear"]["parameters"][k] = v.clone();
    }
    let path = dir.join("err.json");
    std::fs::write(&path, serde_json::to_string(&s).unwrap()).unwrap();
    let o = cli(&["check", path.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    err
}

/// Rewrite an .fmu: `edit(name, bytes)` returns the new entry (None drops it).
fn rezip(src: &Path, dst: &Path, edit: impl Fn(&str, Vec<u8>) -> Option<(String, Vec<u8>)>) {
    use std::io::{Read, Write};
    let mut zin = zip::ZipArchive::new(std::fs::File::open(src).unwrap()).unwrap();
    let mut zout = zip::ZipWriter::new(std::fs::File::create(dst).unwrap());
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        if let Some((name, data)) = edit(&name, data) {
            zout.start_file(name.as_str(), zip::write::SimpleFileOptions::default()).unwrap();
            zout.write_all(&data).unwrap();
        }
    }
    zout.finish().unwrap();
}

#[test]
fn every_error_names_the_fmu_the_function_and_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = export(d, "gear", "2", "cs", &[]);
    let none = json!({});

    // Missing file.
    let e = check_error(d, &d.join("missing.fmu"), none.clone());
    assert!(e.contains("components.gear.path") && e.contains("missing.fmu: cannot open the FMU"), "{e}");

    // Corrupt zip.
    let corrupt = d.join("corrupt.fmu");
    std::fs::write(&corrupt, b"PK\x03\x04 this is not a zip archive").unwrap();
    let e = check_error(d, &corrupt, none.clone());
    assert!(e.contains("corrupt.fmu: not a valid FMU (zip archive)"), "{e}");

    // modelDescription.xml that does not parse (the line and column are named).
    let badxml = d.join("badxml.fmu");
    rezip(&good, &badxml, |n, b| {
        let b = if n == "modelDescription.xml" {
            String::from_utf8(b).unwrap().replace("<ModelVariables>", "<ModelVariables><unclosed>").into_bytes()
        } else {
            b
        };
        Some((n.to_string(), b))
    });
    let e = check_error(d, &badxml, none.clone());
    assert!(e.contains("badxml.fmu: modelDescription.xml does not parse: XML error") && e.contains("unclosed"), "{e}");

    // No Linux x86-64 binary (only a Windows one).
    let nobin = d.join("nobin.fmu");
    rezip(&good, &nobin, |n, b| Some((n.replace("binaries/linux64/", "binaries/win64/").replace(".so", ".dll"), b)));
    let e = check_error(d, &nobin, none.clone());
    assert!(
        e.contains("binaries/linux64/StictionGear.so is not in the archive") && e.contains("win64/StictionGear.dll"),
        "{e}"
    );

    // A binary without the FMI functions (the system's zlib in its place).
    let libz = ["/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib64/libz.so.1"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    if let Some(libz) = libz {
        let z = std::fs::read(libz).unwrap();
        let nosym = d.join("nosym.fmu");
        rezip(&good, &nosym, |n, b| Some((n.to_string(), if n.ends_with(".so") { z.clone() } else { b })));
        let e = check_error(d, &nosym, none.clone());
        assert!(
            e.contains("FMU 'StictionGear'")
                && e.contains("does not export the FMI 2.0 functions")
                && e.contains("fmi2DoStep"),
            "{e}"
        );
    } else {
        println!("no libz.so.1 on this system: the missing-symbol case is not run");
    }

    // An FMU call returning Error: m = -1 is refused at fmi2ExitInitializationMode; the
    // message carries the FMU's own log text.
    let e = check_error(d, &good, json!({"m": -1}));
    assert!(
        e.contains("FMU 'StictionGear'")
            && e.contains("fmi2ExitInitializationMode returned Error")
            && e.contains("FMU log:")
            && e.contains("parameter m must be > 0, got -1"),
        "{e}"
    );
    // A calculated variable cannot be set: fmi2SetReal, with the FMU's reason.
    let e = check_error(d, &good, json!({"lambda": 1}));
    assert!(
        e.contains("components.gear.parameters.lambda")
            && e.contains("fmi2SetReal returned Error")
            && e.contains("cannot be set"),
        "{e}"
    );
    // Mapping errors name the JSON path and the FMU's variables.
    let mut s = fig9_with(&good);
    s["components"]["gear"]["ports"]["output"]["position"] = json!("qq");
    let e = load(d, "map.json", &s).err().expect("error").to_string();
    assert!(
        e.contains("components.gear.ports.output.position") && e.contains("has no variable 'qq'") && e.contains("q, v"),
        "{e}"
    );
    let e = check_error(&d.join("."), &good, json!({"nonesuch": 1}));
    assert!(e.contains("components.gear.parameters.nonesuch") && e.contains("parameters: m, M"), "{e}");

    // A failure at run time: fu becomes infinite at t = 0.5 s, fmi2SetReal refuses it.
    // Exit code 1, and the CSV keeps the rows before the failure.
    let mut s = fig9_with(&good);
    s["components"]["actuator"]["force"] = json!({"piecewise": [{"until": 0.5, "value": -40}, {"value": "1/(t-0.5)"}]});
    let path = d.join("runtime.json");
    std::fs::write(&path, serde_json::to_string(&s).unwrap()).unwrap();
    let csv = d.join("runtime.csv");
    let o = cli(&["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("t = 0.5 s in component 'gear'")
            && err.contains("fmi2SetReal returned Error")
            && err.contains("value inf for fu (value reference 10) is not finite"),
        "{err}"
    );
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(rows.lines().count(), 501, "header and the rows of t = 0 .. 0.499 s");
    assert!(rows.lines().last().unwrap().starts_with("0.499,"));
}

/// Copy `src` to `dst` with modelDescription.xml edited by `edit`.
fn edit_description(src: &Path, dst: &Path, edit: impl Fn(String) -> String) {
    rezip(src, dst, |n, b| {
        let b = if n == "modelDescription.xml" { edit(String::from_utf8(b).unwrap()).into_bytes() } else { b };
        Some((n.to_string(), b))
    });
}

/// `stiction check FILE` → (exit code, stdout, stderr).
fn check(dir: &Path, name: &str, system: &Value) -> (Option<i32>, String, String) {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(system).unwrap()).unwrap();
    let o = cli(&["check", path.to_str().unwrap()]);
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Capability flags and incomplete descriptions (issue 6): needsExecutionTool is a warning of
/// `stiction check`, a second instance of an FMU declaring canBeInstantiatedOnlyOncePerProcess
/// is an error naming both components, a modelDescription.xml without ModelStructure is a
/// warning and runs exactly as the complete one.
#[test]
fn capability_flags_and_missing_model_structure_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = export(d, "gear", "2", "cs", &[]);

    let tool = d.join("tool.fmu");
    edit_description(&good, &tool, |x| x.replace("needsExecutionTool=\"false\"", "needsExecutionTool=\"true\""));
    let (code, out, err) = check(d, "tool.json", &fig9_with(&tool));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("info: gear: Co-Simulation declares needsExecutionTool, canGetAndSetFMUstate"), "{out}");
    assert!(out.contains("warning: gear: declares needsExecutionTool=\"true\""), "{out}");
    let (_, out, _) = check(d, "good.json", &fig9_with(&good));
    assert!(out.contains("no warnings"), "the exported FMU has nothing to warn about:\n{out}");

    // Two instances of an FMU that may be instantiated once per process.
    let once = d.join("once.fmu");
    edit_description(&good, &once, |x| {
        x.replace("canBeInstantiatedOnlyOncePerProcess=\"false\"", "canBeInstantiatedOnlyOncePerProcess=\"true\"")
    });
    let mut s = fig9_with(&once);
    let (code, out, err) = check(d, "once1.json", &s);
    assert_eq!(code, Some(0), "one instance is fine: {err}");
    assert!(out.contains("canBeInstantiatedOnlyOncePerProcess"), "{out}");
    s["components"]["gear2"] = s["components"]["gear"].clone();
    s["components"]["actuator2"] = s["components"]["actuator"].clone();
    s["connections"].as_array_mut().unwrap().push(json!({"from": "actuator2.body", "to": "gear2.input"}));
    let (code, _, err) = check(d, "once2.json", &s);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("components.gear2")
            && err.contains("FMU 'StictionGear'")
            && err.contains("declares canBeInstantiatedOnlyOncePerProcess=\"true\" and is already instantiated in this process (as 'gear'"),
        "{err}"
    );

    // No ModelStructure: a warning, and the same run.
    let bare = d.join("bare.fmu");
    edit_description(&good, &bare, |x| {
        let (a, b) = (x.find("<ModelStructure>").unwrap(), x.find("</ModelStructure>").unwrap());
        format!("{}{}", &x[..a], &x[b + "</ModelStructure>".len()..])
    });
    let (code, out, err) = check(d, "bare.json", &fig9_with(&bare));
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("warning: gear: modelDescription.xml has no <ModelStructure>"), "{out}");
    let (a, b) = (run(d, "a.json", &fig9_with(&bare)), run(d, "b.json", &fig9_with(&good)));
    for c in ["p", "v", "fv"] {
        assert_eq!(col(&a, c), col(&b, c), "column {c}");
    }
    // `stiction run` shows the warnings on standard error.
    let path = d.join("bare-run.json");
    std::fs::write(&path, serde_json::to_string(&fig9_with(&bare)).unwrap()).unwrap();
    let o = cli(&["run", path.to_str().unwrap(), "-o", d.join("bare.csv").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.contains("warning: gear: modelDescription.xml has no <ModelStructure>"), "{err}");
}
