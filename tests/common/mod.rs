//! Shared helpers of the integration tests: run an example through the library or the CLI.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use stiction::framework::Recorder;

/// Path of a file in examples/.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

/// Run an example with `threads` threads and keep every row in memory.
pub fn run_example(name: &str, threads: usize) -> Recorder {
    let system = stiction::load(example(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (mut sim, plan) = system.into_simulator(threads).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut rec = Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
    rec
}

/// The `stiction` binary with arguments.
pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stiction")).args(args).output().expect("run the stiction binary")
}

/// Column `label` of a recorder (panics with the available labels if missing).
pub fn col(rec: &Recorder, label: &str) -> Vec<f64> {
    rec.column(label).unwrap_or_else(|| panic!("no column '{label}' in {:?}", rec.labels))
}

/// Value of column `label` at the sample nearest to `t`.
pub fn at(rec: &Recorder, label: &str, t: f64) -> f64 {
    let i = rec
        .time
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1 - t).abs().total_cmp(&(b.1 - t).abs()))
        .map(|(i, _)| i)
        .expect("rows");
    col(rec, label)[i]
}

/// Mean of column `label` over samples with t0 ≤ t < t0 + width.
pub fn window_mean(rec: &Recorder, label: &str, t0: f64, width: f64) -> f64 {
    let c = col(rec, label);
    let v: Vec<f64> = rec.time.iter().zip(&c).filter(|(t, _)| **t >= t0 && **t < t0 + width).map(|(_, v)| *v).collect();
    assert!(!v.is_empty(), "no samples in [{t0}, {})", t0 + width);
    v.iter().sum::<f64>() / v.len() as f64
}

/// Load a system given as a JSON value (relative paths resolve from the current directory).
pub fn system_value(v: &serde_json::Value) -> stiction::framework::system::System {
    let text = serde_json::to_string(v).unwrap();
    let file = Path::new("inline.json");
    stiction::framework::system::System::from_str(&text, file, Path::new("."), &stiction::registry())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Build a system given as a JSON value (relative paths resolve from the current directory).
pub fn build_value(v: &serde_json::Value) -> (stiction::framework::Simulator, stiction::framework::RunPlan) {
    system_value(v).into_simulator(1).unwrap_or_else(|e| panic!("{e}"))
}

/// Run a system given as a JSON value on a pool of `threads` threads with its phases in
/// parallel from any size (a parallel threshold of 1), keeping every row.
pub fn run_value_parallel(v: &serde_json::Value, threads: usize) -> Recorder {
    let (mut sim, plan) = system_value(v).into_simulator(threads).unwrap_or_else(|e| panic!("{e}"));
    sim.set_parallel_threshold(1);
    assert_eq!(sim.is_parallel(), threads > 1, "phases in parallel with {threads} thread(s)");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut rec = Recorder::default();
    pool.install(|| sim.run(&plan, &mut rec, &mut |_| {})).unwrap_or_else(|e| panic!("{e}"));
    rec
}

/// Whether two recorders hold the same columns bit for bit (the first label that differs).
pub fn same_bits(a: &Recorder, b: &Recorder) -> Result<(), String> {
    for label in &a.labels {
        if !col(a, label).iter().zip(col(b, label)).all(|(x, y)| x.to_bits() == y.to_bits()) {
            return Err(format!("column {label} differs"));
        }
    }
    Ok(())
}

/// Run a system given as a JSON value and keep every row.
pub fn run_value(v: &serde_json::Value) -> Recorder {
    let (mut sim, plan) = build_value(v);
    let mut rec = Recorder::default();
    sim.run(&plan, &mut rec, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    rec
}

/// Write `v` to a temporary `system.json`, run `stiction <cmd>` on it (`run` writes its CSV
/// next to it, quietly) and return (exit code, stderr).
pub fn run_json(cmd: &str, v: &serde_json::Value) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.json");
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    let out_csv = dir.path().join("out.csv");
    let args: Vec<&str> = match cmd {
        "run" => vec!["run", path.to_str().unwrap(), "-o", out_csv.to_str().unwrap(), "--quiet"],
        c => vec![c, path.to_str().unwrap()],
    };
    let out = cli(&args);
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Deterministic pseudo-random numbers in [lo, hi) (64-bit LCG).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// `stiction fmu export MODEL --fmi F --interface I [--param ...] -o DIR/...fmu`.
pub fn export_fmu(dir: &Path, model: &str, fmi: &str, interface: &str, params: &[&str]) -> PathBuf {
    let out = dir.join(format!("{model}-fmi{fmi}-{interface}-{}.fmu", params.join("_")));
    let mut args = vec!["fmu", "export", model, "--fmi", fmi, "--interface", interface, "-o", out.to_str().unwrap()];
    for p in params {
        args.extend(["--param", p]);
    }
    let o = cli(&args);
    assert!(o.status.success(), "export failed: {}", String::from_utf8_lossy(&o.stderr));
    out
}

/// Largest |a[i] − b[i]| of two equally long series.
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "series lengths differ");
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// A Python venv `target/tmp/<name>` with `packages` (pinned) from PyPI, created unless
/// `ready(python)` already holds; returns the venv's python. Creating it needs PyPI: the
/// test says so on the terminal (past the harness's capture) and in its failure.
pub fn python_venv(name: &str, packages: &[&str], ready: impl Fn(&Path) -> bool) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let py = dir.join("bin").join("python");
    if !ready(&py) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "note: installing {} from PyPI into {} for the tests that need them (once; needs network access to PyPI)",
            packages.join(" "),
            dir.display()
        );
        let status = Command::new("python3").args(["-m", "venv"]).arg(&dir).status().expect("python3 -m venv");
        assert!(status.success(), "python3 -m venv {} failed", dir.display());
        let status = Command::new(&py)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(packages)
            .status()
            .expect("pip install");
        assert!(
            status.success(),
            "pip install {packages:?} failed: these tests need PyPI (or the venv {} made beforehand)",
            dir.display()
        );
        assert!(ready(&py), "{packages:?} do not import after installation");
    }
    py
}

/// FMPy version the FMU tests install.
pub const FMPY: &str = "fmpy==0.3.32";

/// The Python interpreter of the FMPy venv (target/tmp/fmpy-venv), created on first use.
pub fn fmpy_python() -> &'static Path {
    static PY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PY.get_or_init(|| {
        python_venv("fmpy-venv", &[FMPY], |py| {
            Command::new(py)
                .args(["-c", "import fmpy, numpy"])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    })
}

/// Run `script` with the FMPy venv's Python, `request` as JSON on its standard input, and
/// parse the JSON line it prints last.
pub fn fmpy_script(script: &Path, request: &serde_json::Value) -> serde_json::Value {
    use std::io::Write;
    use std::process::Stdio;
    let name = script.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut child = Command::new(fmpy_python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    child.stdin.take().expect("stdin").write_all(request.to_string().as_bytes()).expect("write request");
    let out = child.wait_with_output().expect("python output");
    assert!(out.status.success(), "{name} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    // The answer is the last line (FMPy prints the FMU's error messages before it).
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    serde_json::from_str(last).unwrap_or_else(|e| panic!("bad {name} answer ({e}): {text}"))
}

/// CRC-32 (IEEE) of `data`, bit by bit.
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// An FMU-only system (top-level `"fmus"`) as the engine runs it: translated into a network
/// of signal blocks (stiction_fmi_master::translate) and compiled for `threads` threads.
pub struct FmuOnly {
    pub sim: stiction::framework::Simulator,
    pub plan: stiction::framework::RunPlan,
    threads: usize,
}

impl FmuOnly {
    /// Load `path` for `threads` threads; errors name the file's own paths.
    pub fn load(path: &Path, threads: usize) -> stiction::framework::Result<FmuOnly> {
        let loaded = stiction::open(path, &stiction::Options::default())?;
        let (sim, plan, _) = loaded.simulator(threads, &path.display().to_string())?;
        Ok(FmuOnly { sim, plan, threads })
    }

    /// Run to the stop time, every row kept.
    pub fn run(&mut self) -> stiction::framework::Result<Recorder> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(self.threads).build().unwrap();
        let mut rec = Recorder::default();
        let FmuOnly { sim, plan, .. } = self;
        pool.install(|| sim.run(plan, &mut rec, &mut |_| {}))?;
        Ok(rec)
    }

    /// The algebraic loops between the blocks.
    pub fn loop_count(&self) -> usize {
        self.sim.block_loops().count()
    }

    /// Loop passes taken so far.
    pub fn loop_iterations(&self) -> u64 {
        self.sim.loop_iterations()
    }

    /// What `stiction check` says of the blocks: "order: ..." (Gauss-Seidel), "feedback: ...",
    /// "algebraic loop ...", and the findings ("info: ...", "warning: ...").
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some((order, cut)) = self.sim.block_order() {
            out.push(format!("order: {}", order.join(", ")));
            for c in cut {
                out.push(format!("feedback: {c} carries the value of the previous communication point"));
            }
        }
        for l in self.sim.block_loops() {
            out.push(format!("algebraic loop {l}"));
        }
        for d in stiction::framework::system::diagnostics(&self.sim, &self.plan) {
            out.push(match d {
                stiction::framework::Diagnostic::Info(s) => format!("info: {s}"),
                stiction::framework::Diagnostic::Warning(s) => format!("warning: {s}"),
            });
        }
        if !out.iter().any(|l| l.starts_with("warning: ")) {
            out.push("no warnings".into());
        }
        out
    }

    /// The findings that are warnings.
    pub fn warnings(&self) -> Vec<String> {
        self.describe().into_iter().filter_map(|l| l.strip_prefix("warning: ").map(str::to_string)).collect()
    }
}

/// Build a test FMU with `build` (into a scratch directory) and install it as
/// target/fmu/`name`, where the examples that use it find it: written to a temporary name and
/// renamed, so a reader never sees half a file.
pub fn install_fmu(name: &str, build: impl FnOnce(&Path) -> PathBuf) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dest = root.join("target/fmu").join(name);
    std::fs::create_dir_all(dest.parent().expect("target/fmu")).expect("create target/fmu");
    let dir = tempfile::tempdir_in(root.join("target")).expect("scratch directory under target/");
    let built = build(dir.path());
    // One temporary name per call: tests of one binary install the same FMU on several threads.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dest.with_extension(format!("fmu.{}.{call}", std::process::id()));
    std::fs::copy(&built, &tmp).expect("copy the built FMU");
    std::fs::rename(&tmp, &dest).expect("rename the built FMU");
    dest
}

/// Wait for `child` to end (at most `limit` from `since`, else kill it and fail naming
/// `what`); its exit status, the time from `since` to its end (the process's own end: its
/// standard error may stay open a little longer in the reaper) and its standard error.
#[allow(dead_code)]
pub fn wait_exit(
    child: &mut std::process::Child,
    since: std::time::Instant,
    limit: std::time::Duration,
    what: &str,
) -> (std::process::ExitStatus, std::time::Duration, String) {
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if since.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running {limit:?} later");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let took = since.elapsed();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    (status, took, err)
}

/// OMSimulator: `$STICTION_OMSIMULATOR`, else `../shared/tools/omsimulator` beside the
/// repository (None where neither is: the tests that need it skip, saying so).
#[allow(dead_code)]
pub fn omsimulator() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("STICTION_OMSIMULATOR").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/omsimulator/bin/OMSimulator")),
    ];
    candidates.into_iter().flatten().find(|p| p.is_file())
}

/// (header, rows) of a CSV file (stiction's or OMSimulator's): quoted names unquoted,
/// `name [unit]` cut to the name, a cell that is not a number NaN.
#[allow(dead_code)]
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(|h| h.trim().trim_matches('"').split(" [").next().unwrap_or_default().to_string())
        .collect();
    let rows = lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|x| x.trim().parse::<f64>().unwrap_or(f64::NAN)).collect())
        .collect();
    (header, rows)
}
