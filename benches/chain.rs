//! Benchmark of the chain-N system (examples/generate_chain.rs) against the hand-written
//! baseline (benches/fused_chain.rs: the work of the reference loop
//! shared/bench/fused-chain, each spring evaluated once, reimplemented here and agreeing
//! with the framework to round-off), measured in the same run.
//!
//! `cargo bench --bench chain [-- N ...]` (default N = 1000 10000 100000) prints, per N:
//! JSON load + compile time, time per RK4 step of the framework on 1 and 2 threads and of
//! the baseline loop on 1 thread, their ratio (framework / baseline), the 2-thread speed-up, and memory (peak and
//! resident after building, from /proc/self/status). Each N runs in its own process so the
//! peak memory is its own. Times are the best of 5 repetitions (the machine may be shared).
//! Below `PARALLEL_THRESHOLD` components the 2-thread simulator steps serially; its
//! speed-up is then marked "(serial)".
//!
//! `-- N --whole K` also times the whole process (`stiction run FILE -o /dev/null --threads
//! T --quiet`: load, compile, the 1000 steps, exit) K times at 1 and 2 threads, in turn, and
//! prints the medians and their ratio: the issue-17 figure, with the 1-thread run as the
//! baseline measured in the same run. It prints them for all pairs, and apart for the pairs
//! during which the machine's two cores shared a cache (their round trip for a cache line
//! near its best, measured before and after each pair) and the pairs during which they did
//! not.

#[path = "fused_chain.rs"]
mod fused_chain;
#[path = "../examples/generate_chain.rs"]
#[allow(dead_code)]
mod generate_chain;

use fused_chain::{ChainParams, FusedChain};
mod common;
use common::{status_kib, time_per_call};
use std::time::Instant;

fn one(n: usize, path: &std::path::Path) {
    let rss0 = status_kib("VmRSS:");
    let t = Instant::now();
    let system = stiction::load(path).expect("load");
    let (mut sim1, _) = system.into_simulator(1).expect("compile");
    let load = t.elapsed().as_secs_f64();
    let peak_load = status_kib("VmHWM:");
    let rss_built = status_kib("VmRSS:");
    let components = 3 * n; // n masses, n contacts, n − 1 springs, 1 drive
    let steps = (2_000_000 / n).clamp(10, 1000);
    let reps = 5;
    sim1.step().expect("step");
    let fw1 = time_per_call(reps, steps, || sim1.step().expect("step"));
    let (mut sim2, _) = stiction::load(path).expect("load").into_simulator(2).expect("compile");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("pool");
    let serial = if sim2.is_parallel() { "" } else { " (serial)" };
    // Stepped as `run` steps: the other thread waits for the phases awake.
    let fw2 = pool.install(|| {
        sim2.with_threads_awake(|sim| {
            sim.step().expect("step");
            time_per_call(reps, steps, || sim.step().expect("step"))
        })
    });
    drop(sim2);
    let mut fused = FusedChain::new(n, ChainParams::standard(), 1e-4);
    fused.step();
    let fu = time_per_call(reps, steps, || fused.step());
    let peak = status_kib("VmHWM:");
    println!(
        "| {n} | {components} | {load:.3} | {:.1} | {:.1} | {:.2} | {:.1} | {:.2}{serial} | {:.0} | {:.0} | {:.0} |",
        fw1 * 1e6,
        fu * 1e6,
        fw1 / fu,
        fw2 * 1e6,
        fw1 / fw2,
        peak_load / 1024.0,
        (rss_built - rss0) * 1024.0 / components as f64,
        peak / 1024.0,
    );
}

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let whole: Option<usize> = all.iter().position(|a| a == "--whole").and_then(|i| all.get(i + 1)?.parse().ok());
    let args: Vec<String> = all
        .iter()
        .enumerate()
        .filter(|(i, a)| !(a.starts_with("--") || (*i > 0 && all[i - 1] == "--whole")))
        .map(|(_, a)| a.clone())
        .collect();
    if let Some(pos) = all.iter().position(|a| a == "--one") {
        let n = all.get(pos + 1).and_then(|s| s.parse().ok()).expect("--one N FILE");
        let file = all.get(pos + 2).expect("--one N FILE");
        one(n, std::path::Path::new(&file));
        return;
    }
    let ns: Vec<usize> = if args.is_empty() {
        vec![1000, 10_000, 100_000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    println!(
        "chain-N, RK4, T = 1e-4 s; times per step; ratio = framework / baseline loop (1 thread); speed-up = 1 / 2 threads"
    );
    println!("| N | components | load + compile (s) | framework 1 thr (µs/step) | baseline loop (µs/step) | ratio | framework 2 thr (µs/step) | speed-up | peak after load (MiB) | resident after build (B/component) | peak (MiB) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let exe = std::env::current_exe().expect("exe");
    let dir = std::env::temp_dir().join(format!("stiction-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for n in ns {
        // The JSON is written here so that the measuring process only reads it.
        let path = dir.join(format!("chain_{n}.json"));
        std::fs::write(&path, generate_chain::chain(n, false).to_string()).expect("write chain");
        let st = std::process::Command::new(&exe)
            .args(["--one", &n.to_string(), path.to_str().expect("utf-8 temp path")])
            .status()
            .expect("run");
        if !st.success() {
            eprintln!("N = {n} failed");
        }
        if let Some(k) = whole {
            whole_process(n, &path, k);
        }
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The whole `stiction run` of `path` at 1 and 2 threads, `k` times each in turn: medians
/// and the speed-up, over all pairs and over the pairs during which the two cores passed a
/// cache line to each other as fast as they do at best (see [`round_trip`]).
fn whole_process(n: usize, path: &std::path::Path, k: usize) {
    let run = |threads: &str| {
        let t = Instant::now();
        let st = std::process::Command::new(env!("CARGO_BIN_EXE_stiction"))
            .arg("run")
            .arg(path)
            .args(["-o", "/dev/null", "--threads", threads, "--quiet"])
            .status()
            .expect("run stiction");
        assert!(st.success(), "stiction run failed");
        t.elapsed().as_secs_f64()
    };
    // (1 thread, 2 threads, the slower of the round trips before and after the pair).
    let mut pairs = Vec::new();
    for _ in 0..k.max(1) {
        let before = round_trip();
        let (one, two) = (run("1"), run("2"));
        pairs.push((one, two, before.max(round_trip())));
    }
    let best = pairs.iter().map(|p| p.2).fold(f64::INFINITY, f64::min);
    let report = |what: &str, pairs: Vec<&(f64, f64, f64)>| {
        if pairs.is_empty() {
            println!("whole process, chain-{n}, {what}: no pairs");
            return;
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (m1, m2) = (median(pairs.iter().map(|p| p.0).collect()), median(pairs.iter().map(|p| p.1).collect()));
        let ratio = median(pairs.iter().map(|p| p.1 / p.0).collect());
        println!(
            "whole process, chain-{n}, {what}, {} pairs: 1 thread {m1:.3} s, 2 threads {m2:.3} s (medians); 2 threads / 1 thread {:.3} ({:.2}x faster), median of the pairs' ratios {ratio:.3}",
            pairs.len(),
            m2 / m1,
            m1 / m2,
        );
    };
    report("all runs", pairs.iter().collect());
    println!(
        "  cores' round trip: {:.0} ns at best; up to {:.0} ns",
        best * 1e9,
        pairs.iter().map(|p| p.2).fold(0.0, f64::max) * 1e9
    );
    report("cores close (round trip below 2x the best)", pairs.iter().filter(|p| p.2 < 2.0 * best).collect());
    report("cores apart", pairs.iter().filter(|p| p.2 >= 2.0 * best).collect());
}

/// The time two threads take to pass a cache line to each other and back (the median of 5
/// bursts of 20 000, after 20 000 to wake both cores up; they poll without a pause
/// instruction, which would add its own latency), in s. A VM's two cores may sit on one L3
/// cache of the host or on two; on this machine the round trip is 60–90 ns in the first
/// case and 340–380 ns in the second, and a 2-thread step of chain-10k is about 15 % slower
/// in the second (a 1-thread step not at all), so the speed-up is measured apart for each.
fn round_trip() -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    const N: u64 = 20_000;
    const BURSTS: u64 = 6;
    /// The line passed, alone in its own cache lines.
    #[repr(align(128))]
    struct Line(AtomicU64);
    let line = Line(AtomicU64::new(0));
    let ball = &line.0;
    let mut bursts: Vec<f64> = std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..N * BURSTS {
                while ball.load(Ordering::Acquire) != 2 * i + 1 {}
                ball.store(2 * i + 2, Ordering::Release);
            }
        });
        (0..BURSTS)
            .map(|b| {
                let t = Instant::now();
                for i in b * N..(b + 1) * N {
                    ball.store(2 * i + 1, Ordering::Release);
                    while ball.load(Ordering::Acquire) != 2 * i + 2 {}
                }
                t.elapsed().as_secs_f64() / N as f64
            })
            .collect()
    });
    // The first burst wakes the cores up.
    bursts.remove(0);
    bursts.sort_by(f64::total_cmp);
    bursts[2]
}
