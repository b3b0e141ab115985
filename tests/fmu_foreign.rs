//! FMUs made by other tools, built during the test run from pinned PyPI packages (installed
//! into a venv under target/ on first use, separate from tests/fmu_export.rs's FMPy venv), and
//! imported by stiction (fmus/import).
//!
//! * PythonFMU 0.7.0 (FMI 2.0 Co-Simulation, built offline from a Python class): a linear
//!   spring-damper f = −(k x + c v) written in Python. Its binary calls the CPython API
//!   without linking libpython, so the FMU components name the interpreter's shared library in
//!   `"preload"`; its modelDescription.xml has no ModelStructure/InitialUnknowns, which is a
//!   warning. Run in `stiction` processes (the FMU's embedded interpreter lives in the process):
//!   - as an impedance on a native `mass` (Euler, T = H = 1e-3 s) against the native
//!     `spring_damper` with the same k, c: ≤ 1e-12 (the FMU's force is the spring force at
//!     x(t_k), exactly what the native Euler step uses; measured: identical), and against the
//!     analytic damped oscillation: ≤ ½ ω² x0 T t = 6.25e-3 m (the O(T) error of the Euler
//!     method over 0.5 s; measured 3.8e-3 m);
//!   - in an FMU-only system (Gauss-Seidel) with StictionFrictionMass against
//!     the network of the StictionFrictionMass FMU and the native spring: ≤ 1e-12.
//! * FMPy 0.3.32's container FMU (`fmpy.container_fmu`: one binary that steps nested FMUs with
//!   a fixed step and connects them) around stiction's own FMUs, FMI 2.0 and 3.0:
//!   - StictionFrictionMass in a container, driven by a force, against the same FMU imported
//!     directly: ≤ 1e-12 (measured: identical);
//!   - StictionGear + StictionFriction connected inside the container (gear.v → contact.v,
//!     contact.f → gear.fv), against the same two FMUs in stiction's Jacobi master (the
//!     container sets every connection from the outputs of the previous communication point,
//!     as Jacobi does): ≤ 1e-12 (measured: identical).

mod common;

use common::{cli, max_diff};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use stiction::framework::Recorder;

/// The packages the tests build FMUs with (exact versions: the FMUs they write differ
/// between releases).
const PACKAGES: &[&str] = &["pythonfmu==0.7.0", "fmpy==0.3.32"];

/// The venv with PythonFMU and FMPy, created on first use.
fn venv() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let py = common::python_venv("fmu-tools-venv", PACKAGES, |py| {
            Command::new(py)
                .args(["-c", "import pythonfmu, fmpy, fmpy.container_fmu.cli; assert pythonfmu.__version__ == '0.7.0'"])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        py.parent().and_then(Path::parent).expect("venv/bin/python").to_path_buf()
    })
}

fn python() -> PathBuf {
    venv().join("bin").join("python")
}

/// The shared CPython library of the venv's interpreter (`LIBDIR/LDLIBRARY`), or why there is
/// none (an interpreter built without --enable-shared has only libpython3.x.a, and a
/// PythonFMU binary cannot be loaded into a process that is not Python).
fn libpython() -> Result<PathBuf, String> {
    let out = Command::new(python())
        .args([
            "-c",
            "import sysconfig as s; print(s.get_config_var('LIBDIR')); print(s.get_config_var('LDLIBRARY')); \
             print(s.get_config_var('Py_ENABLE_SHARED'))",
        ])
        .output()
        .expect("python");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let [libdir, ldlibrary, shared] = lines[..] else { return Err(format!("unexpected sysconfig answer {text:?}")) };
    let lib = Path::new(libdir).join(ldlibrary);
    if shared != "1" || !ldlibrary.ends_with(".so") || !lib.is_file() {
        return Err(format!(
            "the interpreter is static-only (Py_ENABLE_SHARED={shared}, LDLIBRARY={ldlibrary}, {} {})",
            lib.display(),
            if lib.is_file() { "exists" } else { "does not exist" }
        ));
    }
    Ok(lib)
}

/// `stiction fmu export MODEL --fmi F --interface cs [--param ...] -o DIR/...fmu`.
fn export(dir: &Path, model: &str, fmi: &str, params: &[&str]) -> PathBuf {
    common::export_fmu(dir, model, fmi, "cs", params)
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    path
}

/// `stiction run FILE -o CSV --quiet` in its own process; the CSV as columns by label.
fn run_cli(file: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let csv = file.with_extension("csv");
    let o = cli(&["run", file.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let labels: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
    let mut cols = vec![Vec::new(); labels.len()];
    for l in lines {
        for (c, x) in cols.iter_mut().zip(l.split(',')) {
            c.push(x.parse::<f64>().unwrap());
        }
    }
    (labels, cols)
}

fn column<'a>(run: &'a (Vec<String>, Vec<Vec<f64>>), label: &str) -> &'a [f64] {
    let i = run.0.iter().position(|l| l == label).unwrap_or_else(|| panic!("no column {label} in {:?}", run.0));
    &run.1[i]
}

/// The PythonFMU slave: a linear spring-damper on a moving body, f = −(k x + c v), the force
/// of the inputs held over the step (computed at exitInitializationMode and at each doStep).
const SPRING_PY: &str = r#"from pythonfmu import Fmi2Causality, Fmi2Variability, Fmi2Slave, Real


class PySpring(Fmi2Slave):
    description = "linear spring-damper f = -(k x + c v)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.k = 400.0
        self.c = 2.0
        self.x = 0.0
        self.v = 0.0
        self.f = 0.0
        self.register_variable(Real("k", causality=Fmi2Causality.parameter, variability=Fmi2Variability.tunable))
        self.register_variable(Real("c", causality=Fmi2Causality.parameter, variability=Fmi2Variability.tunable))
        self.register_variable(Real("x", causality=Fmi2Causality.input))
        self.register_variable(Real("v", causality=Fmi2Causality.input))
        self.register_variable(Real("f", causality=Fmi2Causality.output))

    def exit_initialization_mode(self):
        self.f = -(self.k * self.x + self.c * self.v)

    def do_step(self, current_time, step_size):
        self.f = -(self.k * self.x + self.c * self.v)
        return True
"#;

/// Build PySpring.fmu in `dir` with `pythonfmu build`.
fn build_python_fmu(dir: &Path) -> PathBuf {
    let script = dir.join("spring.py");
    std::fs::write(&script, SPRING_PY).unwrap();
    let o = Command::new(venv().join("bin").join("pythonfmu"))
        .args(["build", "-f"])
        .arg(&script)
        .arg("-d")
        .arg(dir)
        .output()
        .expect("pythonfmu build");
    assert!(o.status.success(), "pythonfmu build failed: {}", String::from_utf8_lossy(&o.stderr));
    let fmu = dir.join("PySpring.fmu");
    assert!(fmu.is_file(), "pythonfmu wrote no PySpring.fmu: {}", String::from_utf8_lossy(&o.stdout));
    fmu
}

#[test]
#[ignore = "needs a Python built with a shared libpython (Py_ENABLE_SHARED=1) for PythonFMU; run with `cargo test --release --test fmu_foreign -- --ignored`"]
fn a_pythonfmu_spring_on_a_native_mass_matches_the_native_spring() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fmu = build_python_fmu(d);
    let lib = match libpython() {
        Ok(l) => l,
        Err(why) => panic!("PythonFMU needs a shared libpython: {why}"),
    };
    let (k, c, x0, m, step, stop): (f64, f64, f64, f64, f64, f64) = (250.0, 1.5, 0.1, 1.0, 1e-3, 0.5);
    let system = |spring: Value, connections: Value| {
        json!({
            "name": "spring",
            "solver": {"method": "euler", "step": step, "stop_time": stop},
            "output": {"signals": {"q": "body.q", "v": "body.v"}},
            "components": {"body": {"type": "mass", "mass": m, "init": {"q": x0, "v": 0}}, "spring": spring},
            "connections": connections
        })
    };
    let fmu_sys = system(
        json!({
            "type": "fmu", "path": fmu, "role": "impedance", "preload": [lib],
            "inputs": {"position": "x", "velocity": "v"}, "outputs": {"force": "f"},
            "parameters": {"k": k, "c": c}
        }),
        json!([{"from": "spring.port", "to": "body.body"}]),
    );
    let native_sys = system(
        json!({"type": "spring_damper", "K": k, "B": c}),
        json!([{"from": "spring.a", "to": "ground"}, {"from": "spring.b", "to": "body.body"}]),
    );

    // Without the preload the binary does not load, and the error says what to do.
    let mut bare = fmu_sys.clone();
    bare["components"]["spring"].as_object_mut().unwrap().remove("preload");
    let o = cli(&["check", write(d, "bare.json", &bare).to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("undefined symbol") && err.contains("\"preload\""), "{err}");

    // `stiction check`: loads, and warns about the execution tool and the missing InitialUnknowns.
    let file = write(d, "pyspring.json", &fmu_sys);
    let o = cli(&["check", file.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    println!("{out}");
    assert!(out.contains("warning: spring: declares needsExecutionTool=\"true\""), "{out}");
    assert!(out.contains("warning: spring: ModelStructure has no <InitialUnknowns> (expected f)"), "{out}");

    let run = run_cli(&file);
    let native = run_cli(&write(d, "native.json", &native_sys));
    let (q, v) = (column(&run, "q"), column(&run, "v"));
    let (dq, dv) = (max_diff(q, column(&native, "q")), max_diff(v, column(&native, "v")));
    // Analytic: x'' + (c/m) x' + (k/m) x = 0 from (x0, 0).
    let w0 = (k / m).sqrt();
    let zeta = c / (2.0 * (k * m).sqrt());
    let wd = w0 * (1.0 - zeta * zeta).sqrt();
    let exact: Vec<f64> = column(&run, "time")
        .iter()
        .map(|&t| x0 * (-zeta * w0 * t).exp() * ((wd * t).cos() + zeta * w0 / wd * (wd * t).sin()))
        .collect();
    let da = max_diff(q, &exact);
    println!(
        "PythonFMU spring on a native mass (T = H = {step} s, {} rows): max |q - native| = {dq:.3e} m, \
         |v - native| = {dv:.3e} m/s, |q - analytic| = {da:.3e} m",
        q.len()
    );
    assert_eq!(q.len(), 501);
    assert!(dq <= 1e-12 && dv <= 1e-12, "PythonFMU spring differs from the native spring: {dq:e} {dv:e}");
    // The Euler method's global error, about ½ ω² x0 T t = 6.25e-3 m at t = 0.5 s (local
    // error ½ T² |x''| ≤ ½ T² ω² x0 per step, t / T steps).
    assert!(da <= 0.5 * (k / m) * x0 * step * stop, "Euler run too far from the analytic oscillation: {da:e}");
}

#[test]
#[ignore = "needs a Python built with a shared libpython (Py_ENABLE_SHARED=1) for PythonFMU; run with `cargo test --release --test fmu_foreign -- --ignored`"]
fn a_pythonfmu_spring_in_an_fmu_only_system() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spring = build_python_fmu(d);
    let lib = match libpython() {
        Ok(l) => l,
        Err(why) => panic!("PythonFMU needs a shared libpython: {why}"),
    };
    let mass = export(d, "friction-mass", "2", &["F=0.5", "q=0.1"]);
    let (k, c) = (250.0, 1.5);
    let master = json!({
        "name": "pyspring_master",
        "master": {"algorithm": "gauss-seidel", "step": 1e-3, "stop_time": 0.5},
        "fmus": {
            "spring": {"path": spring, "preload": [lib], "parameters": {"k": k, "c": c}},
            "mass": {"path": mass}
        },
        "connections": [
            {"from": "mass.q", "to": "spring.x"},
            {"from": "mass.v", "to": "spring.v"},
            {"from": "spring.f", "to": "mass.force"}
        ],
        "output": {"signals": {"q": "mass.q", "v": "mass.v"}}
    });
    let file = write(d, "master.json", &master);
    let o = cli(&["check", file.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Neither FMU declares its outputs' dependencies; the cycle is cut at spring.f -> mass.force
    // (one connection against two). The spring then steps with the mass's motion at t_k+1 and
    // its force reaches the mass at the next step: the force of the motion at t_k, as in the
    // network's Euler step.
    assert!(out.contains("order: mass, spring"), "{out}");
    assert!(out.contains("warning: FMU 'spring' (FMU 'PySpring'"), "{out}");
    let run = run_cli(&file);
    // The same system as a network: the StictionFrictionMass FMU as an admittance, the native spring.
    let network = json!({
        "solver": {"method": "euler", "step": 1e-3, "stop_time": 0.5},
        "output": {"signals": {"q": "mass.q", "v": "mass.v"}},
        "components": {
            "mass": {"type": "fmu", "path": mass, "role": "admittance",
                     "inputs": {"force": "force"}, "outputs": {"position": "q", "velocity": "v"}},
            "spring": {"type": "spring_damper", "K": k, "B": c}
        },
        "connections": [{"from": "spring.a", "to": "ground"}, {"from": "spring.b", "to": "mass.port"}]
    });
    let native = run_cli(&write(d, "network.json", &network));
    let (dq, dv) =
        (max_diff(column(&run, "q"), column(&native, "q")), max_diff(column(&run, "v"), column(&native, "v")));
    println!("PythonFMU spring + StictionFrictionMass, Gauss-Seidel: max |q - network| = {dq:.3e} m, |v - network| = {dv:.3e} m/s");
    assert!(dq <= 1e-12 && dv <= 1e-12, "{dq:e} {dv:e}");
    let v = column(&run, "v");
    assert!(v.iter().any(|&x| x < -0.1), "the spring pulls the mass back");
}

/// Build an FMPy container FMU `name`.fmu in `dir`; `request` is what [`MAKE_CONTAINER_PY`]
/// reads: the FMI version, the fixed step, the components (name → .fmu), the container's
/// inputs and outputs (name → [component, variable]), start values and the connections.
fn container(dir: &Path, name: &str, request: Value) -> PathBuf {
    let script = dir.join("make_container.py");
    std::fs::write(&script, MAKE_CONTAINER_PY).unwrap();
    let out = dir.join(format!("{name}.fmu"));
    let mut req = request;
    req["name"] = json!(name);
    req["work"] = json!(dir.join(format!("{name}-build")));
    req["out"] = json!(out);
    let o = Command::new(python()).arg(&script).arg(req.to_string()).output().expect("python");
    assert!(o.status.success(), "container build failed: {}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Container FMU with FMPy 0.3.32 (`fmpy.container_fmu`, as in FMPy's
/// tests/container_fmu/test_feedthrough.py). FMPy writes the type of a connection as its first
/// variable's type, "Real" for an FMI 2.0 component, which its container binary refuses
/// ("unknown variant `Real`"): the connectors are passed as copies typed "Float64".
const MAKE_CONTAINER_PY: &str = r#"import copy, json, sys
from pathlib import Path
from fmpy import read_model_description
from fmpy.container_fmu.cli import create_container_fmu
from fmpy.container_fmu.config import Configuration, Component, Connection
from fmpy.model_description import ModelDescription, ModelVariable, CoSimulation, DefaultExperiment

req = json.loads(sys.argv[1])
major = req["fmi"]
T = "Real" if major == 2 else "Float64"
comps, cvars = {}, {}
for name, path in req["components"].items():
    md = read_model_description(path)
    comps[name] = Component(name=name, filename=Path(path), modelDescription=md)
    cvars[name] = {v.name: v for v in md.modelVariables}
variables = [ModelVariable(type=T, variability="continuous", causality="independent", name="time")]
mappings = {}
for name, (comp, var) in req["inputs"].items():
    v = ModelVariable(type=T, variability="continuous", causality="input", name=name, start=str(req["start"].get(name, 0.0)))
    variables.append(v)
    mappings[v] = [(comps[comp], cvars[comp][var])]
for name, (comp, var) in req["outputs"].items():
    v = ModelVariable(type=T, variability="continuous", causality="output", initial="calculated", name=name)
    variables.append(v)
    mappings[v] = [(comps[comp], cvars[comp][var])]

def float64(v):
    v = copy.copy(v)
    if v.type == "Real":
        v.type = "Float64"
    return v

md = ModelDescription(fmiVersion=f"{major}.0", modelName=req["name"], instantiationToken="",
                      defaultExperiment=DefaultExperiment(stopTime="1", stepSize=str(req["step"])),
                      coSimulation=CoSimulation(fixedInternalStepSize=req["step"]), modelVariables=variables)
connections = [Connection(comps[a], [float64(cvars[a][av])], comps[b], [float64(cvars[b][bv])])
               for (a, av, b, bv) in req["connections"]]
config = Configuration(parallelDoStep=False, modelDescription=md, components=list(comps.values()),
                       connections=connections, variableMappings=mappings)
work = Path(req["work"])
work.mkdir(parents=True, exist_ok=True)
create_container_fmu(config, work, Path(req["out"]))
"#;

fn run_network(dir: &Path, name: &str, v: &Value) -> Recorder {
    let path = write(dir, name, v);
    let sys = stiction::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let (mut sim, plan) = sys.into_simulator(1).unwrap_or_else(|e| panic!("{e}"));
    let mut rec = Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    rec
}

/// A network driving `fmu` (an admittance: force in, q and v out) with a constant force.
fn driven(fmu: &Path, input: &str, force: f64, stop: f64, outputs: &[&str]) -> Value {
    let signals: serde_json::Map<String, Value> =
        outputs.iter().map(|o| (o.to_string(), json!(format!("fmu.{o}")))).collect();
    json!({
        "solver": {"method": "euler", "step": 1e-3, "stop_time": stop},
        "output": {"signals": signals},
        "components": {
            "drive": {"type": "force_source", "force": force},
            "fmu": {"type": "fmu", "path": fmu, "role": "admittance",
                    "inputs": {"force": input}, "outputs": {"position": "q", "velocity": "v"}}
        },
        "connections": [{"from": "drive.body", "to": "fmu.port"}]
    })
}

#[test]
fn an_fmpy_container_of_stiction_fmus_matches_them_imported_directly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for fmi in [2u8, 3] {
        let f = fmi.to_string();
        // One FMU in a container: identical to the FMU itself.
        let mass = export(d, "friction-mass", &f, &[]);
        let boxed = container(
            d,
            &format!("MassContainer{fmi}"),
            json!({"fmi": fmi, "step": 1e-3, "components": {"mass": mass},
                   "inputs": {"force": ["mass", "force"]}, "start": {},
                   "outputs": {"q": ["mass", "q"], "v": ["mass", "v"], "f": ["mass", "f"]}, "connections": []}),
        );
        let info = cli(&["fmu", "info", boxed.to_str().unwrap()]);
        let info = String::from_utf8_lossy(&info.stdout);
        assert!(info.contains("interfaces: Co-Simulation (modelIdentifier container_fmu)"), "{info}");
        assert!(info.contains("warning: ModelStructure does not list the output(s) q, v, f"), "{info}");
        let a = run_network(d, "boxed.json", &driven(&boxed, "force", 10.0, 0.5, &["q", "v", "f"]));
        let b = run_network(d, "direct.json", &driven(&mass, "force", 10.0, 0.5, &["q", "v", "f"]));
        let worst =
            ["q", "v", "f"].iter().map(|c| max_diff(&common::col(&a, c), &common::col(&b, c))).fold(0.0, f64::max);
        println!("FMI {fmi}: StictionFrictionMass in an FMPy container vs directly: max difference {worst:.3e}");
        assert!(worst <= 1e-12, "FMI {fmi}: {worst:e}");
        assert!(common::col(&a, "v").last().unwrap() > &0.5, "the mass slides under 10 N > F = 8 N");

        // Gear and contact connected inside the container, against stiction's Jacobi master.
        let gear = export(d, "gear", &f, &["v=2", "fu=3"]);
        let contact = export(d, "friction", &f, &["F=5", "D=4"]);
        let gc = container(
            d,
            &format!("GearContact{fmi}"),
            json!({"fmi": fmi, "step": 1e-3, "components": {"gear": gear, "contact": contact},
                   "inputs": {"fu": ["gear", "fu"]}, "start": {"fu": 3},
                   "outputs": {"q": ["gear", "q"], "v": ["gear", "v"], "f": ["contact", "f"]},
                   "connections": [["gear", "v", "contact", "v"], ["contact", "f", "gear", "fv"]]}),
        );
        let a = run_network(d, "gc.json", &driven(&gc, "fu", 3.0, 1.0, &["q", "v", "f"]));
        let master = json!({
            "master": {"algorithm": "jacobi", "step": 1e-3, "stop_time": 1.0},
            "fmus": {"gear": {"path": gear}, "contact": {"path": contact}},
            "connections": [{"from": "gear.v", "to": "contact.v"}, {"from": "contact.f", "to": "gear.fv"}],
            "output": {"signals": {"q": "gear.q", "v": "gear.v", "f": "contact.f"}}
        });
        let mut sys = common::FmuOnly::load(&write(d, "jacobi.json", &master), 1).unwrap_or_else(|e| panic!("{e}"));
        let b = sys.run().unwrap_or_else(|e| panic!("{e}"));
        let worst =
            ["q", "v", "f"].iter().map(|c| max_diff(&common::col(&a, c), &common::col(&b, c))).fold(0.0, f64::max);
        let v = common::col(&a, "v");
        let stop = a.time[v.iter().position(|&x| x == 0.0).unwrap()];
        println!(
            "FMI {fmi}: StictionGear + StictionFriction in an FMPy container vs stiction's Jacobi master: \
             max difference {worst:.3e}; the gear stops at {stop} s"
        );
        assert!(worst <= 1e-12, "FMI {fmi}: {worst:e}");
        assert!(stop > 0.4 && stop < 0.5 && v[v.len() - 1] == 0.0, "stops at {stop} s and stays stuck");
    }
}
