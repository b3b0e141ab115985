//! `run --set` and `stiction sweep`: overrides checked like the file, errors naming the
//! argument, grid and Monte Carlo studies whose rows follow the physics of model A (26)
//! and are the same for any thread count.

mod common;
use common::*;

const MODEL_A: &str = "model_a_fig6_T1e-3.json";

fn text(out: &std::process::Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn csv_rows(s: &str) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_reader(s.as_bytes());
    let mut out = vec![r.headers().unwrap().iter().map(String::from).collect::<Vec<_>>()];
    out.extend(r.records().map(|x| x.unwrap().iter().map(String::from).collect::<Vec<_>>()));
    out
}

/// Model A (26) sliding against Coulomb friction F with applied force h = −1 N from v0:
/// v(t) = v0 − (F + 1)/m · t until it sticks at exactly 0 (|h| ≤ F keeps it stuck).
fn model_a_v(v0: f64, f: f64, m: f64, t: f64) -> f64 {
    (v0 - (f + 1.0) / m * t).max(0.0)
}

#[test]
fn set_overrides_nested_solver_and_output_values() {
    let e = example(MODEL_A);
    let out = cli(&[
        "run",
        e.to_str().unwrap(),
        "--set",
        "block.init.v=0.5",
        "--set",
        "solver.stop_time=0.05",
        "--set",
        "output.interval=0.01",
        "--set",
        "block.mass=2",
        "-o",
        "-",
        "--quiet",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let rows = csv_rows(&stdout);
    assert_eq!(rows[0], ["time", "v", "f", "stuck"]);
    let times: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(times, ["0", "0.01", "0.02", "0.03", "0.04", "0.05"]);
    // Euler is exact for a constant deceleration (8 + 1)/2 = 4.5 m/s².
    let v_end: f64 = rows[6][1].parse().unwrap();
    assert!((v_end - model_a_v(0.5, 8.0, 2.0, 0.05)).abs() < 1e-12, "{v_end}");
}

#[test]
fn set_errors_name_the_argument_and_path() {
    let e = example(MODEL_A);
    let e = e.to_str().unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("block.mass=-2", &["components.block.mass", "must be > 0", "(from --set block.mass=-2)"]),
        ("blok.mass=2", &["--set blok.mass=2", "no component 'blok'", "did you mean 'block'"]),
        ("block.init.v[0]=1", &["--set block.init.v[0]=1", "not an array"]),
        ("solver.stepp=1e-4", &["solver.stepp", "(from --set solver.stepp=1e-4)"]),
        ("block.mass", &["--set block.mass", "NAME=VALUE"]),
        ("solver.step=fast", &["solver.step", "(from --set solver.step=fast)"]),
    ];
    for (arg, want) in cases {
        let out = cli(&["run", e, "--set", arg, "-o", "-", "--quiet"]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{arg}: {stderr}");
        for w in *want {
            assert!(stderr.contains(w), "{arg}: '{w}' not in: {stderr}");
        }
    }
}

#[test]
fn grid_sweep_rows_follow_model_a() {
    let e = example(MODEL_A);
    let out = cli(&[
        "sweep",
        e.to_str().unwrap(),
        "--vary",
        "block.mass=1:2:3",
        "--vary",
        "block.F=0.5,4",
        "--outputs",
        "v=final,max",
        "--outputs",
        "stuck",
        "-o",
        "-",
        "--quiet",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let rows = csv_rows(&stdout);
    assert_eq!(rows[0], ["run", "block.mass", "block.F", "v:final", "v:max", "stuck:final", "status", "message"]);
    assert_eq!(rows.len(), 7);
    let mut i = 0;
    for m in [1.0, 1.5, 2.0] {
        for f in [0.5, 4.0] {
            let r = &rows[1 + i];
            assert_eq!(r[0], i.to_string());
            assert_eq!(r[1].parse::<f64>().unwrap(), m);
            assert_eq!(r[2].parse::<f64>().unwrap(), f);
            let v: f64 = r[3].parse().unwrap();
            // F = 0.5 < |h|: it never sticks, v = 0.7 − 1.5/m · 0.2 (may pass through 0).
            let want = if f < 1.0 { 0.7 - (f + 1.0) / m * 0.2 } else { model_a_v(0.7, f, m, 0.2) };
            assert!((v - want).abs() < 1e-9, "run {i}: v {v} vs {want}");
            assert_eq!(r[4].parse::<f64>().unwrap(), 0.7);
            assert_eq!(r[6], "ok");
            i += 1;
        }
    }
}

#[test]
fn monte_carlo_failed_runs_do_not_stop_the_study_and_threads_do_not_change_the_table() {
    let e = example(MODEL_A);
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let study = |threads: &str, seed: &str, save: bool| {
        let mut args = vec![
            "sweep",
            e.to_str().unwrap(),
            "--samples",
            "24",
            "--seed",
            seed,
            "--vary",
            "block.mass=normal(0.6,0.5)",
            "--vary",
            "block.init.v=uniform(0.1,0.9)",
            "--outputs",
            "v=final,min,mean",
            "--threads",
            threads,
            "-o",
            "-",
            "--quiet",
        ];
        if save {
            args.extend(["--save-runs", runs.to_str().unwrap()]);
        }
        let out = cli(&args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        stdout
    };
    let one = study("1", "11", true);
    let two = study("2", "11", false);
    assert_eq!(one, two, "the table depends on the thread count");
    assert_ne!(one, study("2", "12", false), "the seed changes nothing");
    let rows = csv_rows(&one);
    assert_eq!(rows.len(), 25);
    let (mut ok, mut failed) = (0, 0);
    for r in &rows[1..] {
        let (m, v0): (f64, f64) = (r[1].parse().unwrap(), r[2].parse().unwrap());
        assert!((0.1..0.9).contains(&v0));
        if m > 0.0 {
            ok += 1;
            assert_eq!(r[6], "ok");
            let v: f64 = r[3].parse().unwrap();
            assert!((v - model_a_v(v0, 8.0, m, 0.2)).abs() < 1e-9, "{r:?}");
        } else {
            failed += 1;
            assert_eq!(r[6], "failed");
            assert!(r[7].contains("components.block.mass: must be > 0"), "{r:?}");
            assert_eq!(r[3], "NaN");
        }
    }
    assert!(ok > 0 && failed > 0, "normal(0.6, 0.5) should give both: {ok} ok, {failed} failed");
    // --save-runs: the full results of every run that ran.
    let saved = std::fs::read_dir(&runs).unwrap().count();
    assert_eq!(saved, ok, "one file per successful run");
    let first_ok = rows[1..].iter().find(|r| r[6] == "ok").unwrap();
    let f = runs.join(format!("run-{:0>4}.csv", first_ok[0]));
    let full = csv_rows(&std::fs::read_to_string(&f).unwrap());
    assert_eq!(full[0], ["time", "v", "f", "stuck"]);
    assert_eq!(full.len(), 202);
    assert_eq!(full[201][1], first_ok[3]);
}

#[test]
fn sweep_arguments_are_checked_before_any_run() {
    let e = example(MODEL_A);
    let e = e.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--vary", "blok.mass=1,2"], "did you mean 'block'"),
        (&["--vary", "block.mass=1,2", "--outputs", "vv=final"], "--outputs vv"),
        (&["--vary", "block.mass=1,2", "--outputs", "v=fnal"], "did you mean 'final'"),
        (&["--vary", "block.mass=uniform(1,2)"], "--samples"),
        (&["--vary", "block.mass=1,2", "-o", "x.xlsx"], ".csv"),
        (&["--vary", "block.mas=1,2"], "components.block.mas"),
    ];
    for (args, want) in cases {
        let mut a = vec!["sweep", e, "--quiet"];
        a.extend_from_slice(args);
        if !args.contains(&"-o") {
            a.extend(["-o", "-"]);
        }
        let out = cli(&a);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: a run happened: {stdout}");
        assert!(stderr.contains(want), "{args:?}: '{want}' not in {stderr}");
    }
}

#[test]
fn library_run_range_equals_run_one() {
    let path = example(MODEL_A);
    let mut base = stiction::pipeline::Document::read(&path).unwrap();
    base.index().unwrap();
    let vary = vec!["block.mass=0.5:1.5:5".to_string(), "block.F=2,6".to_string()];
    let mut st = stiction::study::Study::parse(&vary, None, 0, &[]).unwrap();
    st.prepare(&base).unwrap();
    assert_eq!(
        st.columns(),
        ["run", "block.mass", "block.F", "v:final", "f:final", "stuck:final", "status", "message"]
    );
    let done = std::sync::atomic::AtomicUsize::new(0);
    let rows = st.run_range(&base, 3..9, 2, &|n| {
        done.fetch_max(n, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(done.into_inner(), 6);
    assert_eq!(rows.iter().map(|r| r.run).collect::<Vec<_>>(), (3..9).collect::<Vec<_>>());
    for r in &rows {
        assert_eq!(*r, st.run_one(&base, r.run));
    }
    let mut out = Vec::new();
    stiction::study::write_csv(&st, &rows, &mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 7);
}

#[test]
fn a_bad_value_in_the_first_run_fails_only_that_run() {
    let e = example(MODEL_A);
    let out = cli(&["sweep", e.to_str().unwrap(), "--vary", "block.mass=-1,2", "-o", "-", "--quiet"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let rows = csv_rows(&stdout);
    assert_eq!(rows[1][5], "failed");
    assert!(rows[1][6].contains("must be > 0, got -1 (from --vary block.mass="), "{:?}", rows[1]);
    assert_eq!(rows[2][5], "ok");
    assert_eq!(rows[2][2].parse::<f64>().unwrap(), model_a_v(0.7, 8.0, 2.0, 0.2));
}
