//! The framework's modules form layers that only point down (ARCHITECTURE.md): a module
//! may name `crate::m` only for modules `m` of a lower layer (or its own). Doc comments are
//! not code and are skipped.

use std::path::Path;

/// Bottom to top; modules in one inner list are one layer and may not name each other.
const LAYERS: &[&[&str]] = &[
    &["error", "names", "parallel", "sealed", "units"],
    &["cancel"],
    &["port", "signal", "stage_law"],
    &["method"],
    &["views"],
    &["component"],
    &["batch"],
    &["network"],
    &["schedule"],
    &["stability"],
    &["stepper"],
    &["output"],
    &["system"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_module_names_only_modules_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut seen = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        let own = layer_of(&top).unwrap_or_else(|| panic!("module {top} is in no layer of this test"));
        seen += 1;
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for (i, _) in code.match_indices("crate::") {
                let name: String =
                    code[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if let Some(l) = layer_of(&name) {
                    if name != top && l >= own {
                        violations.push(format!("{}:{}: {top} names crate::{name}", rel.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(seen >= 12, "only {seen} modules found");
    assert!(violations.is_empty(), "upward or sideways references:\n{}", violations.join("\n"));
}

#[test]
fn the_framework_has_no_unsafe_code_and_no_fmi_dependency() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    assert!(lib.contains("#![forbid(unsafe_code)]"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for dep in ["zip", "roxmltree", "libloading", "fmi-sys", "cc", "tempfile"] {
        let found = manifest.lines().any(|l| l.split(['=', ' ', '.']).next() == Some(dep));
        assert!(!found, "framework/Cargo.toml depends on {dep}");
    }
}
