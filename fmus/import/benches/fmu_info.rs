//! `stiction fmu info` on an FMU with 300 000 variables (issue 15: under 2 s), timed in
//! process against a baseline measured in the same run: reading modelDescription.xml out of
//! the same .fmu with the zip crate and parsing it with roxmltree (the DOM parser stiction used
//! before fmus/schema/src/xml.rs), i.e. the least a roxmltree-based reader has to do. Prints
//! the medians and the ratios (below 1: faster than parsing alone with roxmltree).
//!
//! `cargo bench -p stiction-fmi-import --bench fmu_info [-- N]` (N variables, default 300 000).

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

#[path = "../../../tests/fixtures/many_variables.rs"]
mod many_variables;
use many_variables::many_variables;

fn write_fmu(path: &Path, xml: &str) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).expect("create the bench FMU"));
    let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    z.start_file("modelDescription.xml", o).expect("zip");
    z.write_all(xml.as_bytes()).expect("zip");
    z.finish().expect("zip");
}

/// The baseline: modelDescription.xml out of the zip, parsed by roxmltree.
fn baseline(path: &Path) -> usize {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).expect("open")).expect("zip");
    let mut xml = String::new();
    zip.by_name("modelDescription.xml").expect("entry").read_to_string(&mut xml).expect("read");
    let options = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: u32::MAX };
    let doc = roxmltree::Document::parse_with_options(&xml, options).expect("parse");
    doc.descendants().count()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let n: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(300_000);
    let dir = std::env::temp_dir().join(format!("stiction-bench-fmu-info-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench directory");
    let path = dir.join("big.fmu");
    write_fmu(&path, &many_variables(n));
    let runs = 7;
    let (mut base, mut info, mut describe) = (Vec::new(), Vec::new(), Vec::new());
    let mut out_len = 0;
    for _ in 0..runs {
        // Interleaved, so that a busy machine slows both alike.
        let t = Instant::now();
        std::hint::black_box(baseline(&path));
        base.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        drop(std::hint::black_box(
            stiction_fmi_import::archive::Archive::describe(&path, "big.fmu").expect("describe"),
        ));
        describe.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let text = stiction_fmi_import::info(&path).expect("fmu info");
        info.push(t.elapsed().as_secs_f64());
        out_len = text.len();
        drop(std::hint::black_box(text));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (b, i, d) = (median(base), median(info), median(describe));
    println!("fmu info, {n} variables ({out_len} bytes of output), median of {runs}:");
    println!("  baseline (unzip + roxmltree parse): {b:.3} s");
    println!("  of which reading the description:   {d:.3} s  ({:.2} x the baseline)", d / b);
    println!("  stiction_fmi_import::info:          {i:.3} s  ({:.2} x the baseline)", i / b);
}
