//! The cost per row of write-through (`OutputSink::set_write_through`, on when an FMU's code
//! runs in stiction's process): rows of C columns written to a file through the results
//! writers of `stiction run` (CSV, and MATLAB v4 .mat), with write-through (one `write` per
//! row; .mat: the row, then its count and stop time written in place) and without (a flush
//! every 256 rows; .mat: buffered), in the same run, interleaved, best of R repetitions.
//! Reports µs per row, the difference and the ratio.
//!
//! `cargo bench --bench write_through` (env: `ROWS_BENCH_ROWS=100000`, `ROWS_BENCH_COLS=3,20`,
//! `ROWS_BENCH_REPS=5`).

#[allow(dead_code)] // each bench uses some of it
mod common;
use common::env_list;
use std::path::Path;
use std::time::Instant;
use stiction::results::{open, Format};

/// Seconds per row for `rows` rows of `cols` columns written to `path` (created anew).
fn per_row(path: &Path, format: Format, rows: usize, cols: usize, through: bool) -> f64 {
    let mut sink = open(path, format, Some(1e-3), Vec::new()).expect("open the results file");
    sink.set_write_through(through);
    let labels: Vec<String> = (0..cols).map(|c| format!("s{c}")).collect();
    let mut values: Vec<f64> = (0..cols).map(|c| 0.1 * c as f64 + 1.0 / 3.0).collect();
    let t0 = Instant::now();
    sink.begin(&labels).expect("header");
    for k in 0..rows {
        for v in &mut values {
            *v += 1e-3;
        }
        sink.row(k as f64 * 1e-3, &values).expect("row");
    }
    sink.finish().expect("finish");
    t0.elapsed().as_secs_f64() / rows as f64
}

fn main() {
    let rows = env_list("ROWS_BENCH_ROWS", &[100_000])[0];
    let reps = env_list("ROWS_BENCH_REPS", &[5])[0];
    let dir = tempfile::tempdir().expect("temporary directory");
    println!("write_through: {rows} rows to a file in {}, best of {reps}, interleaved", dir.path().display());
    println!(
        "{:<6} {:>5} {:>16} {:>18} {:>14} {:>7}",
        "format", "cols", "buffered µs/row", "write-through µs/row", "difference µs", "ratio"
    );
    for cols in env_list("ROWS_BENCH_COLS", &[3, 20]) {
        for (name, format) in [("csv", Format::Csv), ("mat", Format::Mat)] {
            let path = dir.path().join(format!("rows.{name}"));
            let (mut a, mut b) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..reps {
                a = a.min(per_row(&path, format, rows, cols, false));
                b = b.min(per_row(&path, format, rows, cols, true));
            }
            println!("{name:<6} {cols:>5} {:>16.3} {:>20.3} {:>14.3} {:>7.2}", a * 1e6, b * 1e6, (b - a) * 1e6, b / a);
        }
    }
}
