//! Benchmark of loading and compiling a large system: chain-N (examples/generate_chain.rs,
//! 3N components) read from its JSON file, checked and built (`stiction::load`), then
//! compiled into a schedule and a simulator (`System::into_simulator`).
//!
//! The baseline, measured in the same run on the same file, is the least any loader of this
//! format must do: read the file and parse it with serde_json into a `serde_json::Value`.
//!
//! `cargo bench --bench load [-- N ...]` (default N = 10000 100000) prints, per N and for
//! both the loader and the baseline: the time in process (read to compiled), the whole
//! process (start to exit, as `stiction check` would see it, from outside) and the peak
//! memory (`VmHWM` of /proc/self/status), per component, with the ratio loader / baseline.
//! Each figure is the median of 5 runs; loader and baseline runs alternate, so a change in
//! the machine's load hits both. Every run is its own process (the bench starts itself with
//! `--child`), so its peak memory is its own.

#[path = "../examples/generate_chain.rs"]
#[allow(dead_code)]
mod generate_chain;

#[allow(dead_code)]
mod common;
use common::status_kib;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const RUNS: usize = 5;

/// One measured run in this process: prints "seconds peak_KiB".
fn child(mode: &str, path: &Path) {
    let t = Instant::now();
    match mode {
        "load" => {
            let system = stiction::load(path).expect("load");
            let loaded = (t.elapsed().as_secs_f64(), status_kib("VmHWM:"));
            let (sim, plan) = system.into_simulator(1).expect("compile");
            let secs = t.elapsed().as_secs_f64();
            println!("{secs} {}", status_kib("VmHWM:"));
            eprintln!("loaded: {} s, peak {} KiB", loaded.0, loaded.1);
            drop((sim, plan));
        }
        "parse" => {
            let text = std::fs::read_to_string(path).expect("read");
            let v: serde_json::Value = serde_json::from_str(&text).expect("parse");
            let secs = t.elapsed().as_secs_f64();
            println!("{secs} {}", status_kib("VmHWM:"));
            drop(v);
        }
        other => panic!("unknown mode {other}"),
    }
}

/// (in-process seconds, whole-process seconds, peak KiB) of one run in a new process.
fn run(mode: &str, path: &Path) -> (f64, f64, f64) {
    let exe = std::env::current_exe().expect("current exe");
    let t = Instant::now();
    let out = Command::new(exe).args(["--child", mode]).arg(path).output().expect("start child");
    let whole = t.elapsed().as_secs_f64();
    assert!(out.status.success(), "{mode} failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut f = text.split_whitespace().map(|x| x.parse::<f64>().expect("number"));
    (f.next().expect("seconds"), whole, f.next().expect("peak"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(&args[1], Path::new(&args[2]));
        return;
    }
    let sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![10_000, 100_000] } else { sizes };
    let dir = std::env::temp_dir().join(format!("stiction-load-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!("chain-N: load + compile (stiction::load, into_simulator(1)) vs serde_json::Value parse of the same file");
    println!("medians of {RUNS} runs, each in its own process; ratio = load / parse");
    println!();
    println!("| N | components | file | | in process | per component | whole process | peak | per component |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in sizes {
        let path = dir.join(format!("chain_{n}.json"));
        std::fs::write(&path, generate_chain::chain(n, false).to_string()).expect("write chain");
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64;
        let components = (3 * n) as f64; // n masses, n contacts, n − 1 springs, 1 drive
        let (mut load, mut parse) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            load.push(run("load", &path));
            parse.push(run("parse", &path));
        }
        let figures = |r: &[(f64, f64, f64)]| {
            (
                median(r.iter().map(|x| x.0).collect()),
                median(r.iter().map(|x| x.1).collect()),
                median(r.iter().map(|x| x.2).collect()),
            )
        };
        let (l, p) = (figures(&load), figures(&parse));
        let row = |name: &str, (inp, whole, peak): (f64, f64, f64)| {
            println!(
                "| {n} | {components} | {:.1} MB | {name} | {inp:.3} s | {:.2} µs | {whole:.3} s | {:.0} MiB | {:.0} B |",
                bytes / 1e6,
                inp / components * 1e6,
                peak / 1024.0,
                peak * 1024.0 / components
            );
        };
        row("load + compile", l);
        row("baseline: parse to Value", p);
        println!("| {n} | | | ratio | {:.2} | | {:.2} | {:.2} | |", l.0 / p.0, l.1 / p.1, l.2 / p.2);
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir(&dir);
}
