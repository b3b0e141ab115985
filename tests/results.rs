//! Result files by extension: CSV with exact k·T times and short round-trip numbers; the
//! MATLAB v4 layout of OpenModelica read back by `scipy.io.loadmat` with names and units.

mod common;
use common::*;
use std::process::Command;

const MODEL_A: &str = "model_a_fig6_T1e-3.json";

#[test]
fn csv_times_are_exact_multiples_of_the_step_and_cells_are_short() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.csv");
    let r = cli(&["run", example(MODEL_A).to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut n = 0;
    for (k, line) in text.lines().skip(1).enumerate() {
        let t = line.split(',').next().unwrap();
        // T = 0.001 s: row k is at exactly k/1000 s, printed as that decimal.
        let want = if k == 0 {
            "0".to_string()
        } else {
            let s = format!("{}.{:03}", k / 1000, k % 1000);
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        };
        assert_eq!(t, want, "row {k}");
        for cell in line.split(',') {
            assert!(cell.len() <= 24, "long cell {cell}");
            cell.parse::<f64>().unwrap();
        }
        n += 1;
    }
    assert_eq!(n, 201);
    assert!(text.contains("\n0.009,"), "the float 9·0.001 = 0.009000000000000001 must print as 0.009");
}

#[test]
fn a_diverging_value_prints_in_exponent_notation() {
    // A 1e100 N force on 1 kg: every cell stays a short round-trip number.
    let sys = serde_json::json!({
        "solver": {"method": "euler", "step": 0.5, "stop_time": 1.0},
        "output": {"signals": {"v": "m.v"}},
        "components": {"m": {"type": "kikuuwe_a", "mass": 1.0, "F": 0.0, "force": 1e100, "init": {"v": 0}}}
    });
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.json");
    std::fs::write(&f, sys.to_string()).unwrap();
    let r = cli(&["run", f.to_str().unwrap(), "-o", "-", "--quiet"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let text = String::from_utf8_lossy(&r.stdout);
    assert_eq!(text, "time,v\n0,0\n0.5,5e99\n1,1e100\n");
}

/// Python with scipy (target/tmp/scipy-venv, made on first use).
fn scipy_python() -> std::path::PathBuf {
    python_venv("scipy-venv", &["scipy==1.14.1"], |py| {
        Command::new(py)
            .args(["-c", "import scipy.io"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

const READ_MAT: &str = r#"
import json, sys
import scipy.io
m = scipy.io.loadmat(sys.argv[1], chars_as_strings=False)
def strings(a):
    # binTrans: one string per column.
    return ["".join(a[:, j]).rstrip("\x00") for j in range(a.shape[1])]
print(json.dumps({
    "aclass": ["".join(r).rstrip("\x00") for r in m["Aclass"]],
    "name": strings(m["name"]),
    "description": strings(m["description"]),
    "dataInfo": m["dataInfo"].T.tolist(),
    "data_1": m["data_1"].tolist(),
    "data_2": m["data_2"].T.tolist(),
}))
"#;

#[test]
fn mat_results_load_in_scipy_with_names_and_units() {
    let dir = tempfile::tempdir().unwrap();
    let mat = dir.path().join("a.mat");
    let csv = dir.path().join("a.csv");
    for out in [&mat, &csv] {
        let r = cli(&["run", example(MODEL_A).to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let py = scipy_python();
    let out = Command::new(&py).args(["-c", READ_MAT]).arg(&mat).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["aclass"], serde_json::json!(["Atrajectory", "1.1", "", "binTrans"]));
    assert_eq!(got["name"], serde_json::json!(["time", "v", "f", "stuck"]));
    let desc: Vec<String> = serde_json::from_value(got["description"].clone()).unwrap();
    assert_eq!(desc[0], "Simulation time [s]");
    assert!(desc[1].starts_with("block.v: velocity") && desc[1].ends_with("[m/s]"), "{desc:?}");
    assert!(desc[2].ends_with("[N]"), "{desc:?}");
    assert!(!desc[3].contains('['), "stuck has no unit: {desc:?}");
    assert_eq!(got["dataInfo"], serde_json::json!([[0, 1, 0, -1], [2, 2, 0, 0], [2, 3, 0, 0], [2, 4, 0, 0]]));
    assert_eq!(got["data_1"], serde_json::json!([[0.0, 0.2]]));
    // data_2 holds the same numbers as the CSV, bit for bit (the CSV prints times as k·T).
    let data: Vec<Vec<f64>> = serde_json::from_value(got["data_2"].clone()).unwrap();
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let rows: Vec<Vec<f64>> =
        r.records().map(|x| x.unwrap().iter().map(|c| c.parse::<f64>().unwrap()).collect()).collect();
    assert_eq!(data.len(), 201);
    for (k, (a, b)) in data.iter().zip(&rows).enumerate() {
        assert_eq!(a[0], k as f64 * 0.001);
        assert_eq!(a[1..], b[1..], "row {k}");
    }
}
