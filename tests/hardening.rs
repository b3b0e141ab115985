//! Hardening (issue 16): every case of the issue's "Why" as a test. No input crashes (exit
//! 101 or an abort), hangs or corrupts the output; every bad value gets exit code 2 and a
//! message naming it; signals, closed pipes and failed plots get the exit codes of the table
//! in README.md (src/exit.rs).

mod common;
use common::*;
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn load(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(example(name)).unwrap()).unwrap()
}

/// (exit code, stdout, stderr) of `stiction ARGS` with `v` written to DIR/system.json
/// (the `{}` in ARGS).
fn cli_json(v: &Value, args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.json");
    std::fs::write(&path, serde_json::to_string_pretty(v).unwrap()).unwrap();
    let out_csv = dir.path().join("out.csv");
    let args: Vec<&str> = args
        .iter()
        .map(|a| match *a {
            "{}" => path.to_str().unwrap(),
            "{csv}" => out_csv.to_str().unwrap(),
            a => a,
        })
        .collect();
    let o = Command::new(env!("CARGO_BIN_EXE_stiction")).args(&args).current_dir(dir.path()).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn assert_rejected(what: &str, v: &Value, cmds: &[&str], needles: &[&str]) {
    for cmd in cmds {
        let (code, err) = run_json(cmd, v);
        assert_eq!(code, 2, "{what} ({cmd}): exit {code}, stderr: {err}");
        for n in needles {
            assert!(err.contains(n), "{what} ({cmd}): message lacks '{n}': {err}");
        }
    }
}

// ---- 1. numbers and derived quantities ----

#[test]
fn geared_robot_with_a_huge_com_is_rejected_naming_it_not_a_panic_in_the_svd() {
    let mut v = load("geared_robot_fig11_a.json");
    v["components"]["robot"]["links"][0]["com"] = json!([1e308, 0, 0]);
    assert_rejected("com 1e308", &v, &["check", "run"], &["components.robot.links[0].com", "out of range"]);
    let mut v = load("geared_robot_fig11_a.json");
    v["components"]["robot"]["links"][1]["origin"] = json!([1e200, 0, 0]);
    assert_rejected("origin 1e200", &v, &["check"], &["components.robot.links[1]", "out of range"]);
}

#[test]
fn a_table_file_that_is_not_a_regular_file_is_rejected() {
    let mut v = load("model_b_fig13.json");
    v["components"]["drive"]["velocity"] = json!({"table": "/dev/zero", "column": "f"});
    let t = Instant::now();
    assert_rejected("table /dev/zero", &v, &["check"], &["/dev/zero", "not a regular file"]);
    assert!(t.elapsed() < Duration::from_secs(10));
    // A system file that is not a regular file.
    let o = cli(&["check", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a regular file"));
}

// ---- 2. bounds ----

#[test]
fn thread_counts_are_bounded() {
    let mut v = load("rolling_sphere.json");
    v["solver"]["threads"] = json!(10000);
    assert_rejected("threads 10000", &v, &["check", "run"], &["solver.threads", "at most"]);
    let v = load("rolling_sphere.json");
    for n in ["18446744073709551615", "100000"] {
        let (code, _, err) = cli_json(&v, &["run", "{}", "-o", "{csv}", "--quiet", "--threads", n]);
        assert_eq!(code, 2, "--threads {n}: {err}");
        assert!(err.contains("--threads") && err.contains("at most"), "{err}");
    }
}

#[test]
fn steps_longer_than_the_stop_time_are_rejected() {
    let mut v = load("rolling_sphere.json");
    v["solver"]["step"] = json!(2147483648.0);
    assert_rejected("step 2^31", &v, &["check"], &["solver.step", "stop time"]);
    // An FMU component's communication step (checked before the FMU is opened).
    let mut v = load("fmu_gear_fig9.json");
    let fmu = v["components"].as_object().unwrap().iter().find(|(_, c)| c["type"] == "fmu").unwrap().0.clone();
    v["components"][&fmu]["communication_step"] = json!(2147483648.0);
    assert_rejected("communication_step 2^31", &v, &["check"], &["communication_step", "stop time"]);
    // The master of an FMU-only system.
    let mut v = load("fmu_only_gear_contact.json");
    v["master"]["step"] = json!(2147483648.0);
    assert_rejected("master.step 2^31", &v, &["check"], &["master.step", "stop time"]);
}

#[test]
fn names_are_bounded() {
    let mut v = load("model_a_fig7.json");
    let comps = v["components"].as_object_mut().unwrap();
    let (k, c) = comps.iter().next().map(|(k, c)| (k.clone(), c.clone())).unwrap();
    let long = "m".repeat(100_000);
    let text = serde_json::to_string(&v).unwrap().replace(&format!("\"{k}\""), &format!("\"{long}\""));
    let v: Value = serde_json::from_str(&text).unwrap();
    let _ = c;
    assert_rejected("long name", &v, &["check"], &["at most 256"]);
}

// ---- 3. expressions ----

fn with_force(expr: Value) -> Value {
    let mut v = load("model_b_fig13.json");
    v["components"]["drive"]["velocity"] = expr;
    v
}

#[test]
fn expressions_take_scientific_notation_and_pi() {
    for e in ["1e-3*sin(t)", "2.5E+2*cos(pi*t)", "PI + e - E", "-2^2 + 1e0"] {
        let (code, err) = run_json("check", &with_force(json!(e)));
        assert_eq!(code, 0, "'{e}': {err}");
    }
}

#[test]
fn expression_errors_are_in_the_users_terms() {
    let (code, err) = run_json("check", &with_force(json!("1 + * t")));
    assert_eq!(code, 2);
    assert!(err.contains("column 5") && err.contains("expected a number"), "{err}");
    assert!(!err.contains("node"), "{err}");
    let (_, err) = run_json("check", &with_force(json!("sin(t")));
    assert!(err.contains("column 6") && err.contains("')'"), "{err}");
}

#[test]
fn deep_and_long_expressions_are_refused_quickly() {
    let n = 100_000;
    let deep = format!("{}t{}", "sin(".repeat(n), ")".repeat(n));
    let t = Instant::now();
    let (code, err) = run_json("check", &with_force(json!(deep)));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("at most") || err.contains("nested"), "{}", &err[..err.len().min(400)]);
    assert!(err.len() < 2000, "the message repeats the whole expression");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // Within the length bound, parsing is linear: 50 times longer, well under 50² slower.
    let time = |n: usize| {
        let e = vec!["(t+1)"; n].join("*");
        let t = Instant::now();
        for _ in 0..20 {
            stiction::framework::signal::TimeFunction::expression(&e).unwrap();
        }
        t.elapsed().as_secs_f64()
    };
    let (small, big) = (time(30), time(1500));
    assert!(big / small < 500.0, "parse time grows faster than linear: {small} s → {big} s");
}

// ---- 4. output ----

/// The rolling sphere run long enough to be interrupted, a row every step.
fn long_sphere() -> Value {
    let mut v = load("rolling_sphere.json");
    v["solver"]["stop_time"] = json!(1000.0);
    v["output"]["interval"] = v["solver"]["step"].clone();
    v
}

#[test]
fn closed_stdout_ends_quietly_with_its_own_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.json");
    std::fs::write(&path, serde_json::to_string(&long_sphere()).unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", "-", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 4096];
    child.stdout.as_mut().unwrap().read_exact(&mut head).unwrap();
    drop(child.stdout.take()); // like `| head`
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(141), "stderr: {err}");
    assert!(err.is_empty(), "a closed pipe is not an error to report: {err}");
}

#[test]
fn plot_types_are_checked_before_the_run_and_plot_failures_are_output_errors() {
    let v = load("model_a_fig7.json");
    let (code, _, err) = cli_json(&v, &["run", "{}", "-o", "{csv}", "--quiet", "--plot", "out.pdf"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".png or .svg"), "{err}");
    // A plot that fails after the run (its path is a directory): exit 4, not 1.
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("plot.png");
    std::fs::create_dir(&blocked).unwrap();
    let (code, _, err) = cli_json(&v, &["run", "{}", "-o", "{csv}", "--quiet", "--plot", blocked.to_str().unwrap()]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("plot"), "{err}");
}

/// The exit-code table of the guide (docs/reference/exit-codes.md) lists every code of src/exit.rs.
#[test]
fn the_guide_documents_every_exit_code() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/exit-codes.md");
    let text = std::fs::read_to_string(&page).unwrap();
    for code in ["0", "1", "2", "3", "4", "130", "141", "143"] {
        assert!(text.contains(&format!("| {code} |")), "{} lacks exit code {code} in its table", page.display());
    }
}

#[test]
fn a_panic_is_an_internal_error_with_exit_3() {
    let o = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["components"])
        .env("STICTION_TEST_INTERNAL_PANIC", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("internal error"));
}

/// Every line of `csv` is a whole row: as many fields as the header, each a number.
fn assert_whole_rows(csv: &str, what: &str) {
    if csv.is_empty() {
        return;
    }
    assert!(csv.ends_with('\n'), "{what}: the last row is cut: {:?}", &csv[csv.len().saturating_sub(80)..]);
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    let n = header.split(',').count();
    for (i, l) in lines.enumerate() {
        let fields: Vec<&str> = l.split(',').collect();
        assert_eq!(fields.len(), n, "{what}: row {i} has {} fields: {l}", fields.len());
        for f in fields {
            assert!(f.parse::<f64>().is_ok(), "{what}: row {i}: '{f}' is not a number");
        }
    }
}

/// SIGINT/SIGTERM at random times: exit 130/143, a message, every line a whole row.
/// `STICTION_INTERRUPT_RUNS` sets the number of runs (default 12).
#[test]
fn interrupted_runs_keep_whole_rows() {
    let runs: usize = std::env::var("STICTION_INTERRUPT_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(12);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.json");
    std::fs::write(&path, serde_json::to_string(&long_sphere()).unwrap()).unwrap();
    let mut rng = Lcg(16);
    let mut stopped = [0usize; 2];
    for i in 0..runs {
        let csv = dir.path().join(format!("out{i}.csv"));
        let (sig, code) = if i % 2 == 0 { ("-INT", 130) } else { ("-TERM", 143) };
        let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
            .args(["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs_f64(rng.next(0.0, 0.4)));
        let k = Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap();
        assert!(k.success());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(&csv).unwrap_or_default();
        match status.code() {
            Some(c) => {
                assert_eq!(c, code, "run {i} ({sig}): {err}");
                // At a step boundary ("at t = …"), or before stepping ("while loading", …).
                assert!(
                    err.contains("interrupted by") && (err.contains("t = ") || err.contains(" while ")),
                    "run {i}: {err}"
                );
                stopped[i % 2] += 1;
            }
            // The signal came before the handlers were installed: nothing was written yet.
            None => assert!(text.is_empty(), "run {i}: killed by the signal after writing"),
        }
        assert_whole_rows(&text, &format!("run {i} ({sig})"));
    }
    assert!(stopped[0] + stopped[1] >= runs / 2, "too few runs got past start-up: {stopped:?}");
    eprintln!("{runs} interrupted runs, {stopped:?} stopped by SIGINT/SIGTERM, all rows whole");
}

// ---- 5. DOT ----

/// A minimal DOT lexer: the quoted strings of a line, or an error if one is unterminated or
/// uses an escape other than \" and \\.
fn dot_strings(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            let mut s = String::new();
            loop {
                match chars.next() {
                    None => return Err(format!("unterminated string in {line}")),
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(e @ ('"' | '\\')) => s.push(e),
                        e => return Err(format!("escape \\{e:?} in {line}")),
                    },
                    Some(c) => s.push(c),
                }
            }
            out.push(s);
        }
    }
    Ok(out)
}

#[test]
fn dot_output_escapes_every_name() {
    let mut v = load("model_a_fig7.json");
    let evil = "a \"quoted\" \\ name\\";
    let text = serde_json::to_string(&v).unwrap();
    let first = v["components"].as_object().unwrap().keys().next().unwrap().clone();
    let text = text.replace(&format!("\"{first}\""), &serde_json::to_string(evil).unwrap());
    v = serde_json::from_str(&text).unwrap();
    v["name"] = json!("title \"with\" quotes");
    let (code, dot, err) = cli_json(&v, &["graph", "{}"]);
    assert_eq!(code, 0, "{err}");
    let mut names = Vec::new();
    for line in dot.lines() {
        names.extend(dot_strings(line).unwrap_or_else(|e| panic!("{e}\n{dot}")));
    }
    assert!(names.iter().any(|n| n == evil), "{names:?}");
    assert!(names.iter().any(|n| n == "title \"with\" quotes"), "{names:?}");
}

// ---- FMU components in a network, interrupted and sub-stepped ----

/// examples/fmu_gear_fig9.json with the gear FMU exported into `dir`.
fn fmu_gear(dir: &Path) -> Value {
    let fmu = export_fmu(dir, "gear", "2", "cs", &[]);
    let mut v = load("fmu_gear_fig9.json");
    v["components"]["gear"]["path"] = json!(fmu.to_str().unwrap());
    v
}

#[test]
fn an_fmu_substep_beyond_the_budget_fails_the_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = fmu_gear(dir.path());
    v["components"]["gear"]["parameters"]["substep"] = json!(1e-12);
    let t = Instant::now();
    let (code, err) = run_json("run", &v);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("budget") && err.contains("substep"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn an_interrupted_fmu_run_removes_its_temporary_directories() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = fmu_gear(dir.path());
    v["solver"]["stop_time"] = json!(100000.0);
    let path = dir.path().join("system.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let csv = dir.path().join("out.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
        .env("TMPDIR", &tmp)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run writes rows (the FMU is unpacked by then).
    let t = Instant::now();
    while std::fs::metadata(&csv).map(|m| m.len()).unwrap_or(0) < 2000 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(std::fs::read_dir(&tmp).unwrap().count() > 0, "the FMU was not unpacked under TMPDIR");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{err}");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "temporary directories left: {left:?}");
    assert_whole_rows(&std::fs::read_to_string(&csv).unwrap(), "fmu run");
}

#[test]
fn too_many_steps_are_refused() {
    let mut v = load("rolling_sphere.json");
    v["solver"]["step"] = json!(1e-300);
    assert_rejected("stop_time/step = 1e300", &v, &["check"], &["solver.stop_time", "steps"]);
}

#[test]
fn closed_stdout_of_other_commands_is_quiet_too() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["graph", example("chain_1k.json").to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.as_mut().unwrap().read_exact(&mut head).unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(141), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn an_output_that_cannot_be_written_is_exit_4() {
    let v = load("model_a_fig7.json");
    let dir = tempfile::tempdir().unwrap();
    // A directory where the CSV should be.
    let (code, _, err) = cli_json(&v, &["run", "{}", "-o", dir.path().to_str().unwrap(), "--quiet"]);
    assert_eq!(code, 4, "{err}");
    // A full device.
    if Path::new("/dev/full").exists() {
        let (code, _, err) = cli_json(&v, &["run", "{}", "-o", "/dev/full", "--quiet"]);
        assert_eq!(code, 4, "{err}");
        assert!(err.contains("output") || err.contains("No space"), "{err}");
    }
}

#[test]
fn an_interrupted_fmu_only_run_stops_at_a_communication_point() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = load("fmu_only_gear_contact.json");
    v["fmus"]["gear"]["path"] = json!(export_fmu(dir.path(), "gear", "2", "cs", &[]).to_str().unwrap());
    v["fmus"]["contact"]["path"] = json!(export_fmu(dir.path(), "friction", "2", "cs", &[]).to_str().unwrap());
    v["master"]["stop_time"] = json!(100000.0);
    let path = dir.path().join("system.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let csv = dir.path().join("out.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["run", path.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"])
        .env("TMPDIR", &tmp)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::fs::metadata(&csv).map(|m| m.len()).unwrap_or(0) < 2000 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    assert!(std::fs::read_dir(&tmp).unwrap().next().is_none(), "temporary directories left");
    assert_whole_rows(&std::fs::read_to_string(&csv).unwrap(), "FMU-only run");
}

/// `--save-state` and `fmu export -o` write through a temporary file renamed onto the target:
/// a device, FIFO, directory or symbolic link is refused with exit 4 naming it, before any
/// simulation, and is left as it was (before, /dev/null became a regular file).
#[test]
fn outputs_never_replace_a_device_fifo_directory_or_link() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
    let system = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/karnopp_fig4.json");
    let csv = dir.path().join("k.csv");
    for target in [Path::new("/dev/null"), fifo.as_path(), sub.as_path(), link.as_path()] {
        let before = std::fs::symlink_metadata(target).unwrap().file_type();
        let o = cli(&[
            "run",
            system.to_str().unwrap(),
            "-o",
            csv.to_str().unwrap(),
            "--quiet",
            "--save-state",
            target.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "--save-state {}: {err}", target.display());
        assert!(err.contains(&format!("--save-state {}", target.display())), "{err}");
        assert!(!csv.exists(), "the run went ahead before refusing its state file");
        let o = cli(&["fmu", "export", system.to_str().unwrap(), "-o", target.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(4),
            "fmu export -o {}: {}",
            target.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let after = std::fs::symlink_metadata(target).unwrap().file_type();
        assert_eq!(
            (before.is_char_device(), before.is_fifo(), before.is_dir(), before.is_symlink()),
            (after.is_char_device(), after.is_fifo(), after.is_dir(), after.is_symlink()),
            "{} was replaced",
            target.display()
        );
    }
}

/// Every output (stiction::outfile): `--plot`, the sweep table and `--save-runs` are written
/// whole through a temporary file and refuse (exit 4, naming the path, before any run) a FIFO,
/// a directory or a symbolic link, leaving it as it was; `-o` streams its rows in place, so it
/// refuses a directory or a link and writes into a device (`-o /dev/null`) without replacing it.
#[test]
fn plots_tables_and_results_never_replace_a_node_that_is_not_a_file() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let system = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/karnopp_fig4.json");
    let sys = system.to_str().unwrap();
    let kinds = |p: &Path| {
        let t = std::fs::symlink_metadata(p).unwrap().file_type();
        (t.is_char_device(), t.is_fifo(), t.is_dir(), t.is_symlink())
    };
    let csv = dir.path().join("k.csv");
    let csv = csv.to_str().unwrap();
    for ext in ["png", "csv"] {
        let fifo = dir.path().join(format!("fifo.{ext}"));
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let sub = dir.path().join(format!("sub.{ext}"));
        std::fs::create_dir(&sub).unwrap();
        let link = dir.path().join(format!("link.{ext}"));
        std::os::unix::fs::symlink(dir.path().join(format!("elsewhere.{ext}")), &link).unwrap();
        for target in [fifo.as_path(), sub.as_path(), link.as_path()] {
            let before = kinds(target);
            let t = target.to_str().unwrap();
            let runs = dir.path().join("runs");
            let cmds: Vec<Vec<&str>> = if ext == "png" {
                vec![vec!["run", sys, "-o", csv, "--quiet", "--plot", t]]
            } else {
                vec![
                    vec!["sweep", sys, "--vary", "stack.m1=1,2", "-o", t, "--quiet"],
                    vec!["run", sys, "-o", t, "--quiet"],
                ]
            };
            for args in cmds {
                if args[0] == "run" && args[3] == t && target == fifo.as_path() {
                    continue; // a FIFO is streamed into in place, as asked
                }
                let o = cli(&args);
                let err = String::from_utf8_lossy(&o.stderr);
                assert_eq!(o.status.code(), Some(4), "{args:?}: {err}");
                assert!(err.contains(t), "{args:?}: the message does not name {t}: {err}");
                assert!(!Path::new(csv).exists() && !runs.exists(), "{args:?}: ran before refusing");
                assert_eq!(kinds(target), before, "{args:?}: {t} was replaced");
                assert!(!dir.path().join(format!("elsewhere.{ext}")).exists(), "{args:?}: written through the link");
            }
        }
    }
    // --save-runs onto a file that is not a directory.
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let o = cli(&["sweep", sys, "--vary", "stack.m1=1,2", "-o", "-", "--quiet", "--save-runs", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    // A device takes the streamed rows in place and stays a device.
    let o = cli(&["run", sys, "-o", "/dev/null", "--quiet"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(kinds(Path::new("/dev/null")).0);
    // Whole files land whole, no temporary file left beside them.
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let png = dir.path().join("out/plot.png");
    let table = dir.path().join("out/table.csv");
    let runs = dir.path().join("out/runs");
    let o = cli(&["run", sys, "-o", csv, "--quiet", "--plot", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cli(&[
        "sweep",
        sys,
        "--vary",
        "stack.m1=1,2",
        "-o",
        table.to_str().unwrap(),
        "--quiet",
        "--save-runs",
        runs.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(std::fs::read_to_string(&table).unwrap().lines().count(), 3);
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 2);
    let left: Vec<_> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// A chain of `n` point masses on plane contacts joined by springs (examples/chain_10k.json's
/// system), as JSON text.
fn chain_text(n: usize) -> String {
    let mut parts = Vec::with_capacity(3 * n);
    for i in 0..n {
        parts.push(format!(
            r#""m{i}":{{"type":"point_mass","mass":1.0,"gravity":[0,0,-9.81],"init":{{"p":[{},0,-0.0000981]}}}},"c{i}":{{"type":"plane_contact","K":100000.0,"B":100.0,"mu":0.5}}"#,
            0.1 * i as f64
        ));
        if i > 0 {
            parts.push(format!(
                r#""s{i}":{{"type":"spring_damper","domain":"point3","K":10000.0,"B":10.0,"rest_length":0.1}}"#
            ));
        }
    }
    let mut links = Vec::with_capacity(3 * n);
    for i in 0..n {
        links.push(format!(r#"{{"from":"m{i}.body","to":"c{i}.body"}}"#));
        if i > 0 {
            links.push(format!(r#"{{"from":"m{}.body","to":"s{i}.a"}},{{"from":"m{i}.body","to":"s{i}.b"}}"#, i - 1));
        }
    }
    format!(
        r#"{{"name":"chain","solver":{{"method":"rk4","step":0.0001,"stop_time":0.1}},"output":{{"interval":0.001,"signals":{{"x0":"m0.p[0]"}}}},"components":{{{}}},"connections":[{}]}}"#,
        parts.join(","),
        links.join(",")
    )
}

/// `stiction fmu export` of a 200 000-mass chain (seconds of parsing, compiling,
/// serializing and compressing, none of it cut into polled pieces): SIGINT at any moment ends
/// it within 1 s (interrupt::GRACE, then as by a second signal), exit 130, the phase named,
/// no archive and no temporary file left; a second SIGINT ends it at once, saying so.
/// (Before: 1.4 to 3.5 s, the archive written anyway; the second signal said nothing.)
#[test]
fn a_signal_ends_a_long_export_within_a_second_and_the_second_one_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let system = dir.path().join("chain.json");
    std::fs::write(&system, chain_text(200_000)).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let fmu = out_dir.join("chain.fmu");
    let start = |delay: Duration, second: bool| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_stiction"))
            .args(["fmu", "export", system.to_str().unwrap(), "-o", fmu.to_str().unwrap()])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let signal = |c: &std::process::Child| {
            assert!(Command::new("kill").args(["-INT", &c.id().to_string()]).status().unwrap().success());
        };
        signal(&child);
        let sent = Instant::now();
        if second {
            std::thread::sleep(Duration::from_millis(50));
            signal(&child);
        }
        let (status, took, err) = wait_exit(&mut child, sent, Duration::from_secs(30), "export after SIGINT");
        (status.code(), took, err)
    };
    for delay in [300, 1500, 3000] {
        let (code, took, err) = start(Duration::from_millis(delay), false);
        if code == Some(0) {
            // The export was done before the signal could stop it (a fast machine).
            std::fs::remove_file(&fmu).unwrap();
            continue;
        }
        assert_eq!(code, Some(130), "SIGINT at {delay} ms: {err}");
        assert!(took < Duration::from_secs(1), "SIGINT at {delay} ms: ended {took:?} after it: {err}");
        assert!(err.contains("interrupted by SIGINT") && err.contains("exporting"), "{err}");
        let left: Vec<_> = std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty() || left == [std::ffi::OsString::from("chain.fmu")], "left: {left:?}");
        let _ = std::fs::remove_file(&fmu);
        println!("SIGINT at {delay} ms: exit 130 {took:?} after it: {}", err.trim());
    }
    let (code, took, err) = start(Duration::from_millis(1500), true);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_millis(500), "the second SIGINT: ended {took:?} after the first: {err}");
    assert!(err.contains("a second SIGINT while exporting: ending now"), "{err}");
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0, "something was left after the second signal");
}
