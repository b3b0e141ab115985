//! Plots: the unit on every y axis, `--plot-signals` and `--plot-overlay`, clean tick
//! labels, and the plot's extension (and the columns asked for) checked before the run.

mod common;
use common::*;

/// The text elements of an SVG plot.
fn svg_texts(path: &std::path::Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    svg.split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>'))
        .map(|(_, r)| r.split('<').next().unwrap_or("").trim().to_string())
        .collect()
}

#[test]
fn panels_name_their_units_and_ticks_are_clean() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("k.svg");
    let e = example("karnopp_fig4.json");
    let out = cli(&[
        "run",
        e.to_str().unwrap(),
        "-o",
        "-",
        "--plot",
        svg.to_str().unwrap(),
        "--plot-signals",
        "v1,F1,case",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let texts = svg_texts(&svg);
    for want in ["v1 [m/s]", "F1 [N]", "case [-]", "t [s]"] {
        assert!(texts.iter().any(|t| t == want), "no '{want}' in {texts:?}");
    }
    assert!(!texts.iter().any(|t| t.starts_with("v2") || t.starts_with("q1")), "unselected columns drawn: {texts:?}");
    for t in &texts {
        if let Ok(x) = t.parse::<f64>() {
            assert!(x != 0.0 || t == "0", "tick {t}");
            assert!(t.len() <= 6, "noisy tick {t}");
        }
    }

    let overlay = dir.path().join("o.svg");
    let out = cli(&[
        "run",
        e.to_str().unwrap(),
        "-o",
        "-",
        "--plot",
        overlay.to_str().unwrap(),
        "--plot-signals",
        "v1,v2",
        "--plot-overlay",
        "--quiet",
    ]);
    assert!(out.status.success());
    let texts = svg_texts(&overlay);
    assert_eq!(texts.iter().filter(|t| *t == "t [s]").count(), 1, "one shared axis");
    assert!(texts.iter().any(|t| t == "[m/s]"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "v1") && texts.iter().any(|t| t == "v2"), "legend: {texts:?}");
}

#[test]
fn bad_plot_arguments_stop_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("k.csv");
    let e = example("karnopp_fig4.json");
    for (args, want) in [
        (vec!["--plot", "k.pdf"], "plots are written as .png or .svg, not .pdf"),
        (vec!["--plot", "k.png", "--plot-signals", "v1,vv2"], "no output column 'vv2' (did you mean 'v2'?)"),
    ] {
        let mut a = vec!["run", e.to_str().unwrap(), "-o", csv.to_str().unwrap(), "--quiet"];
        a.extend(args);
        let out = cli(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(!csv.exists(), "the run happened");
    }
}
