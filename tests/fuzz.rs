//! Fuzzing of system files and expressions (issue 16), on stable Rust.
//!
//! * **System JSON**: structure-aware mutations of every example — keys deleted, duplicated
//!   (in the text) and retyped, numbers made extreme, huge strings and arrays, deep nesting,
//!   connections rewired, expressions put anywhere — each loaded, checked (`stiction check`'s
//!   diagnostics), and run for at most [`STEPS`] steps with 1 thread and with 2 threads in
//!   parallel phases, the two compared bit for bit. No input may panic, take more than
//!   [`SLOW`], or answer differently with 2 threads.
//! * **Expressions**: random expression trees printed to text, parsed and evaluated against
//!   the tree's own evaluation (bit for bit), and random and mutated texts that must parse or
//!   fail with a column, never panic, in time linear in the length.
//!
//! The mutators are seeded `fastrand` (small, no dependencies): the JSON mutations need the
//! example's own tree, which a seeded mutator walks directly; the FMI harness
//! (fmus/export/tests/host_fuzz) uses `arbitrary` for its typed calls.
//!
//! Short campaign: part of `cargo test --release --test fuzz`. Long campaign:
//! `STICTION_FUZZ_SECS=600 cargo test --release --test fuzz -- --nocapture --test-threads 1`
//! (each campaign runs that long and prints inputs per second); `STICTION_FUZZ_SEED` replays.
//! A failing input is written to `target/fuzz-failures/` and the test names it.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use stiction::framework::signal::TimeFunction;
use stiction::framework::system::{diagnostics, System};
use stiction::framework::Recorder;

/// The most steps one fuzzed system runs.
const STEPS: u64 = 60;
/// A hang: one input taking longer than this.
const SLOW: Duration = Duration::from_secs(10);

fn seed() -> u64 {
    std::env::var("STICTION_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(16)
}

/// Seconds of a long campaign (0: the short one).
fn campaign_secs() -> f64 {
    std::env::var("STICTION_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(0.0)
}

fn failure_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let p = dir.join(name);
    let _ = std::fs::write(&p, text);
    p
}

// ---------------------------------------------------------------------------------------
// System JSON.
// ---------------------------------------------------------------------------------------

/// The examples (chain_10k is chain_1k ten times over: left out for time).
fn examples() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_string_lossy().into_owned();
            (name.ends_with(".json") && name != "chain_10k.json").then(|| {
                let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
                (name, v)
            })
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// JSON pointers of every value in `v`.
fn paths(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                paths(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                paths(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn extreme(rng: &mut fastrand::Rng) -> Value {
    let xs = [
        json!(1e308),
        json!(-1e308),
        json!(0),
        json!(-0.0),
        json!(5e-324),
        json!(1e-300),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(2147483648.0),
        json!(-1),
        json!(1e15),
        json!(1e300),
        json!(0.5),
    ];
    xs[rng.usize(..xs.len())].clone()
}

fn random_expression_text(rng: &mut fastrand::Rng) -> String {
    let e = Expr::random(rng, 4);
    e.text()
}

/// One value of any JSON type.
fn retyped(rng: &mut fastrand::Rng) -> Value {
    match rng.u8(..11) {
        // Signals: names that may or may not resolve, and in expressions.
        8 => {
            let names = ["body.q", "arm.q[1]", "u", "gear.v", "x.f[9]", "", "a.b.c"];
            json!({ "signal": names[rng.usize(..names.len())] })
        }
        9 => {
            let texts = ["2*u + body.v", "-100*arm.q[0] - arm.w[0]", "gear.v[99]", "sin(t)*x.y"];
            json!(texts[rng.usize(..texts.len())])
        }
        10 => json!({"signal": 3}),
        0 => Value::Null,
        1 => json!(rng.bool()),
        2 => extreme(rng),
        3 => json!(random_expression_text(rng)),
        4 => json!([1, 2, 3]),
        5 => json!({"table": [[0, 0], [1, 1]]}),
        6 => json!({"piecewise": [{"until": 1, "value": "t"}, {"value": 2}]}),
        _ => json!("nonsense"),
    }
}

/// Apply one structure-aware mutation to `v`; returns the JSON text (the text is where
/// duplicate keys can be made).
fn mutate(v: &mut Value, rng: &mut fastrand::Rng) -> String {
    let mut ps = Vec::new();
    paths(v, String::new(), &mut ps);
    let p = ps[rng.usize(..ps.len())].clone();
    let kind = rng.u8(..11);
    match kind {
        // Delete a key or an array element.
        0 => {
            if let Some((parent, last)) = p.rsplit_once('/') {
                match v.pointer_mut(parent) {
                    Some(Value::Object(m)) => {
                        m.remove(&last.replace("~1", "/").replace("~0", "~"));
                    }
                    Some(Value::Array(a)) => {
                        if let Ok(i) = last.parse::<usize>() {
                            if i < a.len() {
                                a.remove(i);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        // Retype a value.
        1 | 2 => {
            if let Some(x) = v.pointer_mut(&p) {
                *x = retyped(rng);
            }
        }
        // An extreme number in place of a number.
        3 | 4 => {
            let nums: Vec<&String> = ps.iter().filter(|q| v.pointer(q).is_some_and(Value::is_number)).collect();
            if !nums.is_empty() {
                let q = nums[rng.usize(..nums.len())].clone();
                *v.pointer_mut(&q).unwrap() = extreme(rng);
            }
        }
        // A huge string or array.
        5 => {
            if let Some(x) = v.pointer_mut(&p) {
                *x = if rng.bool() { json!("x".repeat(200_000)) } else { Value::Array(vec![json!(1.0); 100_000]) };
            }
        }
        // Deep nesting.
        6 => {
            if let Some(x) = v.pointer_mut(&p) {
                let mut deep = json!(1);
                for _ in 0..rng.usize(50..400) {
                    deep = json!([deep]);
                }
                *x = deep;
            }
        }
        // Rewire a connection.
        7 => {
            let names: Vec<String> =
                v["components"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            if let Some(conns) = v.get_mut("connections").and_then(Value::as_array_mut) {
                let i = rng.usize(..conns.len().max(1));
                if conns.get(i).is_some_and(Value::is_object) && !names.is_empty() {
                    let end = if rng.bool() { "from" } else { "to" };
                    let n = &names[rng.usize(..names.len())];
                    conns[i][end] = match rng.u8(..4) {
                        0 => json!(n),
                        1 => json!(format!("{n}.body")),
                        2 => json!("ground"),
                        _ => json!(format!("{n}.{n}")),
                    };
                    if rng.bool() {
                        let c = conns[i].clone();
                        conns.push(c);
                    }
                }
            }
        }
        // An expression wherever a string or number is.
        8 => {
            if let Some(x) = v.pointer_mut(&p) {
                if x.is_string() || x.is_number() {
                    *x = json!(random_expression_text(rng));
                }
            }
        }
        // Duplicate a key (in the text).
        9 => {
            let text = serde_json::to_string_pretty(v).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let i = rng.usize(..lines.len());
            let mut out = lines.clone();
            if lines[i].trim_start().starts_with('"') {
                out.insert(i, lines[i]);
            }
            return out.join("\n");
        }
        // Swap two components' types.
        _ => {
            if let Some(m) = v.get_mut("components").and_then(Value::as_object_mut) {
                let keys: Vec<String> = m.keys().cloned().collect();
                if keys.len() >= 2 {
                    let (a, b) = (&keys[rng.usize(..keys.len())], &keys[rng.usize(..keys.len())]);
                    if m[a].is_object() && m[b].is_object() {
                        let ta = m[a]["type"].clone();
                        let tb = m[b]["type"].clone();
                        m[a]["type"] = tb;
                        m[b]["type"] = ta;
                    }
                }
            }
        }
    }
    serde_json::to_string_pretty(v).unwrap()
}

/// What one system text does: its error message, or its rows (bits) and diagnostics.
fn outcome(text: &str, base: &Path, threads: usize, pool: &rayon::ThreadPool) -> String {
    let registry = stiction::registry();
    let sys = match System::from_str(text, Path::new("fuzz.json"), base, &registry) {
        Ok(s) => s,
        Err(e) => return format!("load: {e}"),
    };
    let (mut sim, mut plan) = match sys.into_simulator(threads) {
        Ok(x) => x,
        Err(e) => return format!("compile: {e}"),
    };
    let diag: Vec<String> = diagnostics(&sim, &plan).iter().map(|d| format!("{d:?}")).collect();
    if threads > 1 {
        sim.set_parallel_threshold(1);
    }
    plan.interval = plan.interval.min(sim.step_size() * 4.0);
    let mut rec = Recorder::default();
    // Asked once per step, on the thread that calls run_until.
    let steps = AtomicU64::new(0);
    let stop = || steps.fetch_add(1, Ordering::Relaxed) >= STEPS;
    let r = pool.install(|| sim.run_until(&plan, &mut rec, &mut |_| {}, &stop));
    let rows: Vec<u64> = rec.rows.iter().flatten().chain(&rec.time).map(|x| x.to_bits()).collect();
    format!("{diag:?} {:?} {rows:?}", r.map(|s| s.rows).map_err(|e| e.to_string()))
}

/// Run one mutated text through everything; panics (with the file of the input) on a
/// panic, a hang or a difference between 1 and 2 threads.
fn check_system(name: &str, text: &str, pools: &[rayon::ThreadPool; 2]) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let t = Instant::now();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let one = outcome(text, &base, 1, &pools[0]);
        let two = outcome(text, &base, 2, &pools[1]);
        (one, two)
    }));
    let el = t.elapsed();
    match result {
        Err(_) => panic!("panic on a mutation of {name}: input in {}", failure_file("panic.json", text).display()),
        Ok((one, two)) => {
            if one != two {
                let f = failure_file("threads.json", text);
                panic!("1 and 2 threads differ on a mutation of {name}: input in {}", f.display());
            }
        }
    }
    assert!(el < SLOW, "a mutation of {name} took {el:?}: input in {}", failure_file("slow.json", text).display());
}

/// Run `one` on the examples in turn, `per_example` times each (the short campaign) or
/// for `STICTION_FUZZ_SECS`; print the inputs per second under `what`.
fn campaign(what: &str, per_example: u64, mut one: impl FnMut(&str, &Value)) {
    let examples = examples();
    let secs = campaign_secs();
    let started = Instant::now();
    let mut inputs = 0u64;
    'campaign: loop {
        for (name, v) in &examples {
            one(name, v);
            inputs += 1;
            let done = if secs > 0.0 {
                started.elapsed().as_secs_f64() >= secs
            } else {
                inputs >= per_example * examples.len() as u64
            };
            if done {
                break 'campaign;
            }
        }
    }
    let el = started.elapsed().as_secs_f64();
    eprintln!("{what} fuzz: {inputs} inputs in {el:.1} s: {:.1} inputs/s (seed {})", inputs as f64 / el, seed());
}

#[test]
fn system_json_mutations() {
    let pools = [1, 2].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
    let mut rng = fastrand::Rng::with_seed(seed());
    campaign("system JSON", 10, |name, v| {
        let mut v = v.clone();
        let mut text = String::new();
        for _ in 0..rng.usize(1..4) {
            text = mutate(&mut v, &mut rng);
            if let Ok(parsed) = serde_json::from_str(&text) {
                v = parsed;
            }
        }
        check_system(name, &text, &pools);
    });
}

/// A `--set` path to the value at JSON pointer `p` (`/components/m/init/v/0` →
/// `components.m.init.v[0]`); None when a key cannot be written in one.
fn set_path(p: &str) -> Option<String> {
    let mut out = String::new();
    for seg in p.split('/').skip(1) {
        let key = seg.replace("~1", "/").replace("~0", "~");
        if let Ok(i) = key.parse::<usize>() {
            if !out.is_empty() {
                out.push_str(&format!("[{i}]"));
                continue;
            }
        }
        if key.is_empty() || key.contains(['.', '[', ']', '=']) {
            return None;
        }
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&key);
    }
    (!out.is_empty()).then_some(out)
}

/// `--set`, `--vary` and `with_set` on mutated files: the text-backed document
/// (`stiction::set::Doc`, which parses only what an assignment touches) and the whole
/// `Value` must accept and refuse the same assignments with the same messages, and end as
/// the same JSON; neither may panic.
#[test]
fn set_assignments_on_mutated_files() {
    use stiction::set::{apply_set, Doc};
    let mut rng = fastrand::Rng::with_seed(seed() ^ 0x5e7);
    campaign("--set", 40, |name, v| {
        let mut v = v.clone();
        let text = if rng.bool() { mutate(&mut v, &mut rng) } else { v.to_string() };
        let mut ps = Vec::new();
        paths(&v, String::new(), &mut ps);
        let sets: Vec<String> = (0..rng.usize(1..5))
            .map(|_| {
                let value = match rng.u8(..4) {
                    0 => extreme(&mut rng).to_string(),
                    1 => retyped(&mut rng).to_string(),
                    2 => "bare words".to_string(),
                    _ => format!("{}", rng.f64() * 10.0),
                };
                match rng.u8(..6) {
                    0 => {
                        format!("{}={value}", ["solver.step", "output.interval", "name", "nobody.mass"][rng.usize(..4)])
                    }
                    1 => ["", "=", "a..b=1", "x[=1", "components=1", "components.q={\"type\":\"mass\"}"]
                        [rng.usize(..6)]
                    .to_string(),
                    _ => {
                        let p = set_path(&ps[rng.usize(..ps.len())]).unwrap_or_else(|| "solver.step".into());
                        format!("{}={value}", p.strip_prefix("components.").unwrap_or(&p))
                    }
                }
            })
            .collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let value: Result<Value, _> = serde_json::from_str(&text);
            let Ok(mut doc) = Doc::parse(text.as_str()) else {
                assert!(value.map_or(true, |v| !v.is_object()), "a JSON object the document refused");
                return;
            };
            let Ok(mut value) = value else {
                // Nested deeper than the reader of whole values goes: the document takes
                // the text (the loader refuses it). Its assignments must not panic.
                for s in &sets {
                    let _ = apply_set(&mut doc, s);
                }
                let _ = doc.text();
                return;
            };
            for s in &sets {
                let (a, b) = (apply_set(&mut value, s), apply_set(&mut doc, s));
                assert_eq!(a, b, "{s}");
                if a.is_err() {
                    // A refused assignment ends a load; go on from the document.
                    value = doc.value().expect("the document's text");
                }
            }
            assert!(doc.value().expect("the document's text") == value, "the documents differ");
        }));
        if let Err(e) = result {
            let why = e.downcast_ref::<String>().cloned().unwrap_or_default();
            let f = failure_file("set.json", &format!("{text}\n{sets:?}"));
            panic!("assignments {sets:?} on a mutation of {name}: {why}; input in {}", f.display());
        }
    });
}

// ---- regression tests: inputs the campaign (and the issue) found ----

/// Found by the campaign: a connection naming a component of 200 000 characters took ~10 s
/// in chain_1k (the did-you-mean compared it with every component name); the length alone
/// now rules candidates out.
#[test]
fn regression_huge_unknown_name_in_a_connection() {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(example("chain_1k.json")).unwrap()).unwrap();
    v["connections"][181]["from"] = json!("x".repeat(200_000));
    let pools = [1, 2].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
    check_system("chain_1k.json", &v.to_string(), &pools);
}

/// A link's `com` of 1e308 made the geared-robot diagnostics panic in the SVD.
#[test]
fn regression_geared_robot_com_1e308() {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(example("geared_robot_fig11_a.json")).unwrap()).unwrap();
    v["components"]["robot"]["links"][0]["com"] = json!([1e308, 0, 0]);
    let pools = [1, 2].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
    check_system("geared_robot_fig11_a.json", &v.to_string(), &pools);
}

/// Found by the campaign: a link origin of 1e15 m makes M̂ numerically singular; the
/// diagonal axproj got lo > hi and `f64::clamp` panicked during the run.
#[test]
fn regression_geared_robot_origin_1e15() {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(example("geared_robot_fig11_b.json")).unwrap()).unwrap();
    v["components"]["robot"]["links"][0]["origin"] = json!([1e15, 0, 0]);
    let pools = [1, 2].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
    check_system("geared_robot_fig11_b.json", &v.to_string(), &pools);
}

/// `f` on a thread of its own: a hang fails the test after `limit` (the thread is left
/// spinning) instead of hanging it.
fn finishes_within<T: Send + 'static>(limit: Duration, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).unwrap_or_else(|e| panic!("{what}: no result within {limit:?} ({e})"))
}

/// Issue 33: `components.fric1.B` = 1e15 in two_link_fricK made `check` compute for more
/// than 10 minutes (nalgebra's unbounded QR in the coupled-joint stability). It and its
/// relatives (1e300, 5e-324, scales mixed across the two joints and within one) load, get
/// a stuck-state result or a "could not be decided" warning within [`SLOW`], and run.
#[test]
fn regression_two_link_fric_k_extreme_dampers() {
    let base: Value = serde_json::from_str(&std::fs::read_to_string(example("two_link_fricK.json")).unwrap()).unwrap();
    let cases: &[&[(&str, f64)]] = &[
        &[("fric1/B", 1e15)],
        &[("fric1/B", 1e300)],
        &[("fric1/B", 5e-324)],
        &[("fric1/B", f64::MAX)],
        &[("fric0/B", 5e-324), ("fric1/B", 1e300)],
        &[("fric1/K", 1e300), ("fric1/B", 5e-324)],
        &[("fric0/K", 5e-324), ("fric1/K", 1e15), ("fric1/B", 1e15)],
        &[("fric0/B", 1e15), ("fric1/B", 1e15), ("fric0/F", 1e300)],
    ];
    for case in cases {
        let mut v = base.clone();
        for (at, x) in *case {
            *v.pointer_mut(&format!("/components/{at}")).unwrap() = json!(x);
        }
        let what = format!("two_link_fricK with {case:?}");
        let text = v.to_string();
        let findings = finishes_within(SLOW, &what, move || {
            let registry = stiction::registry();
            let sys = System::from_str(&text, Path::new("fuzz.json"), Path::new("."), &registry).unwrap();
            let (sim, plan) = sys.into_simulator(1).unwrap();
            let found: Vec<String> = diagnostics(&sim, &plan).iter().map(|d| format!("{d:?}")).collect();
            found
        });
        let stuck: Vec<&String> = findings.iter().filter(|d| d.contains("stuck-state stability")).collect();
        assert_eq!(stuck.len(), 1, "{what}: {findings:#?}");
        let s = stuck[0];
        let decided = s.contains("largest step-map radius") || s.contains("spectral radius");
        assert!(decided || s.contains("could not be decided"), "{what}: {s}");
        // And the whole fuzz path (1 and 2 threads, a few steps) on it.
        let text = v.to_string();
        finishes_within(SLOW * 2, &what, move || {
            let pools = [1, 2].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
            check_system("two_link_fricK.json", &text, &pools);
        });
    }
}

/// Deep nesting anywhere is an error, not a stack overflow.
#[test]
fn regression_deep_nesting() {
    let text = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let pools = [1, 2].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
    check_system("deep text", &text, &pools);
    let sphere = std::fs::read_to_string(example("rolling_sphere.json")).unwrap();
    let deep = format!("{}0.3{}", "[".repeat(1000), "]".repeat(1000));
    let text = sphere.replacen("\"mass\": 0.3", &format!("\"mass\": {deep}"), 1);
    assert_ne!(text, sphere);
    check_system("deep mass", &text, &pools);
}

// ---------------------------------------------------------------------------------------
// Expressions.
// ---------------------------------------------------------------------------------------

/// An expression tree, printed fully parenthesised and evaluated in the same order as the
/// parser's program, so text → parse → eval must equal the tree's value bit for bit.
#[derive(Clone, Debug)]
enum Expr {
    Num(f64),
    T,
    Pi,
    E,
    Neg(Box<Expr>),
    Bin(char, Box<Expr>, Box<Expr>),
    F1(&'static str, Box<Expr>),
    F2(&'static str, Box<Expr>, Box<Expr>),
}

/// A named function of one argument, and one of two.
type Fn1 = (&'static str, fn(f64) -> f64);
type Fn2 = (&'static str, fn(f64, f64) -> f64);

const F1: &[Fn1] = &[
    ("sin", f64::sin),
    ("cos", f64::cos),
    ("tan", f64::tan),
    ("exp", f64::exp),
    ("ln", f64::ln),
    ("sqrt", f64::sqrt),
    ("abs", f64::abs),
    ("atan", f64::atan),
    ("tanh", f64::tanh),
    ("floor", f64::floor),
];
const F2: &[Fn2] = &[("min", f64::min), ("max", f64::max), ("atan2", f64::atan2), ("pow", f64::powf)];

impl Expr {
    fn random(rng: &mut fastrand::Rng, depth: u32) -> Expr {
        let leaf = depth == 0 || rng.u8(..4) == 0;
        if leaf {
            return match rng.u8(..5) {
                0 => Expr::T,
                1 => Expr::Pi,
                2 => Expr::E,
                3 => Expr::Num([1e-3, 2.5e10, 0.125, 7.0, 1e-300, 3.0e5][rng.usize(..6)]),
                _ => Expr::Num(f64::from(rng.u16(..1000)) / 8.0),
            };
        }
        let d = depth - 1;
        match rng.u8(..5) {
            0 => Expr::Neg(Box::new(Expr::random(rng, d))),
            1 | 2 => {
                let op = ['+', '-', '*', '/', '^'][rng.usize(..5)];
                Expr::Bin(op, Box::new(Expr::random(rng, d)), Box::new(Expr::random(rng, d)))
            }
            3 => {
                let f = F1[rng.usize(..F1.len())].0;
                Expr::F1(f, Box::new(Expr::random(rng, d)))
            }
            _ => {
                let f = F2[rng.usize(..F2.len())].0;
                Expr::F2(f, Box::new(Expr::random(rng, d)), Box::new(Expr::random(rng, d)))
            }
        }
    }

    fn text(&self) -> String {
        match self {
            Expr::Num(x) => format!("{x:e}"),
            Expr::T => "t".into(),
            Expr::Pi => "pi".into(),
            Expr::E => "e".into(),
            Expr::Neg(a) => format!("(-{})", a.text()),
            Expr::Bin(op, a, b) => format!("({} {op} {})", a.text(), b.text()),
            Expr::F1(f, a) => format!("{f}({})", a.text()),
            Expr::F2(f, a, b) => format!("{f}({}, {})", a.text(), b.text()),
        }
    }

    fn eval(&self, t: f64) -> f64 {
        match self {
            Expr::Num(x) => *x,
            Expr::T => t,
            Expr::Pi => std::f64::consts::PI,
            Expr::E => std::f64::consts::E,
            Expr::Neg(a) => -a.eval(t),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(t), b.eval(t));
                match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a * b,
                    '/' => a / b,
                    _ => a.powf(b),
                }
            }
            Expr::F1(f, a) => (F1.iter().find(|x| x.0 == *f).unwrap().1)(a.eval(t)),
            Expr::F2(f, a, b) => (F2.iter().find(|x| x.0 == *f).unwrap().1)(a.eval(t), b.eval(t)),
        }
    }
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Mutate an expression text: delete, duplicate or insert a character.
fn mutate_text(s: &str, rng: &mut fastrand::Rng) -> String {
    let mut c: Vec<char> = s.chars().collect();
    let alphabet: Vec<char> = "()+-*/^,.eE0123456789tpisnx \u{e9}\u{0}".chars().collect();
    for _ in 0..rng.usize(1..4) {
        let i = rng.usize(..=c.len());
        match rng.u8(..3) {
            0 if i < c.len() => {
                c.remove(i);
            }
            1 if i < c.len() => c.insert(i, c[i]),
            _ => c.insert(i, alphabet[rng.usize(..alphabet.len())]),
        }
    }
    c.into_iter().collect()
}

#[test]
fn expressions() {
    let mut rng = fastrand::Rng::with_seed(seed());
    let secs = campaign_secs();
    let started = Instant::now();
    let mut inputs = 0u64;
    loop {
        let e = Expr::random(&mut rng, 6);
        let text = e.text();
        match TimeFunction::expression(&text) {
            Ok(f) => {
                for t in [0.0, 0.37, 1.0, -2.5] {
                    assert!(same(f.eval(t), e.eval(t)), "{text} at t = {t}: {} vs {}", f.eval(t), e.eval(t));
                }
            }
            // Only "not finite at t = 0 and t = 1" may refuse a well-formed expression.
            Err(m) => assert!(
                m.contains("not finite") || m.contains("nested"),
                "{text}: {m} (tree value at 0: {})",
                e.eval(0.0)
            ),
        }
        let bad = mutate_text(&text, &mut rng);
        let t = Instant::now();
        let r = std::panic::catch_unwind(|| TimeFunction::expression(&bad).map(|f| f.eval(0.5)));
        match r {
            Err(_) => panic!("panic on expression {bad:?}: in {}", failure_file("expression.txt", &bad).display()),
            Ok(Err(m)) => assert!(m.contains("column") || m.contains("not finite"), "{bad:?}: {m}"),
            Ok(Ok(_)) => {}
        }
        // A hang, not a slow machine: the linear parse time is tested in hardening.rs.
        assert!(t.elapsed() < SLOW, "{bad:?} took {:?}", t.elapsed());
        inputs += 2;
        let done = if secs > 0.0 { started.elapsed().as_secs_f64() >= secs } else { inputs >= 100_000 };
        if done {
            break;
        }
    }
    let el = started.elapsed().as_secs_f64();
    eprintln!("expression fuzz: {inputs} inputs in {el:.1} s: {:.0} inputs/s (seed {})", inputs as f64 / el, seed());
}

#[test]
fn regression_expressions_from_the_issue() {
    // Scientific notation, pi and e; a 0.5 MB nesting refused quickly, with a column.
    assert!(same(TimeFunction::expression("1e-3*sin(t)").unwrap().eval(1.0), 1e-3 * 1f64.sin()));
    assert!(same(TimeFunction::expression("pi").unwrap().eval(0.0), std::f64::consts::PI));
    let deep = format!("{}t{}", "sin(".repeat(100_000), ")".repeat(100_000));
    let t = Instant::now();
    let e = TimeFunction::expression(&deep).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(1) && e.contains("column"), "{:?} {e}", t.elapsed());
    let e = TimeFunction::expression(&format!("{}t{}", "(".repeat(500), ")".repeat(500))).unwrap_err();
    assert!(e.contains("nested"), "{e}");
}

/// Seeds at the edges of every size and duration a file or a command may ask for: each is
/// refused at load (exit 2) naming its JSON path or option, at once, never an internal error
/// or an allocation that takes the machine (`--samples 1e11` aborted the process with an
/// out-of-memory error; a grid of 10⁵ × 10⁵ values the same). `call_timeout` has its seeds
/// in tests/fmu_crash.rs (`isolation_keys_are_checked`: 1e300, 1e-9, −1).
#[test]
fn sizes_and_durations_at_their_edges_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let karnopp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("examples/karnopp_fig4.json")).unwrap()).unwrap();
    let fmus: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("examples/fmu_only_gear_contact.json")).unwrap())
            .unwrap();
    let stiction = env!("CARGO_BIN_EXE_stiction");
    let check = |v: &serde_json::Value, says: &str| {
        let path = dir.path().join("edge.json");
        std::fs::write(&path, v.to_string()).unwrap();
        let t = std::time::Instant::now();
        let o = std::process::Command::new(stiction).args(["check", path.to_str().unwrap()]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{says}: {err}");
        assert!(err.contains(says) && !err.contains("internal error"), "no {says:?} in {err}");
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "{says}: {:?}", t.elapsed());
    };
    for n in [json!(0), json!(100_001), json!(1u64 << 62), json!(-1), json!(1e300), json!(2.5)] {
        let mut v = karnopp.clone();
        v["solver"]["loop"] = json!({"max_iterations": n});
        check(&v, "solver.loop.max_iterations");
        let mut v = fmus.clone();
        v["master"]["loop"] = json!({"max_iterations": n});
        check(&v, "master.loop.max_iterations");
    }
    for t in [json!(0), json!(-1e-10), json!("1e-10")] {
        let mut v = karnopp.clone();
        v["solver"]["loop"] = json!({"tolerance": t});
        check(&v, "solver.loop.tolerance");
    }
    let system = root.join("examples/karnopp_fig4.json");
    for (args, says) in [
        (vec!["--vary", "stack.m1=uniform(1,2)", "--samples", "100000000000"], "--samples 100000000000"),
        (vec!["--vary", "stack.m1=1:2:100000", "--vary", "stack.m2=1:2:100000"], "more than 10000000 runs"),
        (vec!["--vary", "stack.m1=1:2:100000000000"], "count '100000000000'"),
        (vec!["--vary", "stack.m1=uniform(1,2)", "--samples", "0"], "--samples must be at least 1"),
    ] {
        let t = std::time::Instant::now();
        let o = std::process::Command::new(stiction)
            .args(["sweep", system.to_str().unwrap(), "-o", "-", "--quiet"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: no {says:?} in {err}");
        assert!(t.elapsed() < std::time::Duration::from_secs(5), "{args:?}: {:?}", t.elapsed());
    }
}
