//! `cargo bench --bench sweep`: a 100-run parameter study (the karnopp_fig4 10 × 10 grid of
//! the `stiction sweep` example in docs/how-to/parameter-studies.md) through `Study::run_range` on 1 and on 2
//! threads, in turn in the same run (the 1-thread study is the baseline), median wall times and their
//! ratio; the two tables must be identical.

use std::path::Path;
use std::time::Instant;
use stiction::study::{write_csv, Study};

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/karnopp_fig4.json");
    let mut base = stiction::pipeline::Document::read(&path).expect("example");
    base.index().expect("a JSON object");
    let vary = ["spring1.K=200:600:10".to_string(), "stack.upper.F=5:14:10".to_string()];
    let outputs = ["v1=final,max".to_string(), "q2=final".to_string()];
    let mut st = Study::parse(&vary, None, 0, &outputs).expect("study");
    st.prepare(&base).expect("prepare");
    let n = st.runs();
    let reps = 5;
    let mut times = [Vec::new(), Vec::new()];
    let mut tables = [Vec::new(), Vec::new()];
    for _ in 0..reps {
        for (k, threads) in [1usize, 2].into_iter().enumerate() {
            let t0 = Instant::now();
            let rows = st.run_range(&base, 0..n, threads, &|_| {});
            times[k].push(t0.elapsed().as_secs_f64());
            let mut csv = Vec::new();
            write_csv(&st, &rows, &mut csv).expect("table");
            tables[k] = csv;
        }
    }
    assert_eq!(tables[0], tables[1], "the table depends on the thread count");
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (t1, t2) = (median(&mut times[0]), median(&mut times[1]));
    println!("sweep: {n} runs of karnopp_fig4, median of {reps}: 1 thread {t1:.3} s, 2 threads {t2:.3} s, ratio 2/1 = {:.2}; tables identical", t2 / t1);
}
