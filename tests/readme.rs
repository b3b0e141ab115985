//! The README cannot drift from the program: every `stiction` command of its ```sh blocks
//! runs (in order, in a scratch directory holding a copy of examples/) and succeeds, every
//! complete system in a ```json block passes `stiction check`, and every component snippet
//! validates against `stiction schema`. Lines that are not `stiction` commands must be one
//! of the known kinds (cargo build/test/bench, python3) or the test fails, so a new kind of
//! command cannot go unchecked.

mod common;

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// (info string, body) of every fenced block, indented ones included.
fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((info.trim().to_string(), indent, String::new()));
                }
            }
            Some((info, ind, body)) => {
                if trimmed.starts_with("```") {
                    out.push((std::mem::take(info), std::mem::take(body)));
                    open = None;
                } else {
                    body.push_str(line.get(*ind..).unwrap_or(trimmed));
                    body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "README: an unclosed ``` block");
    out
}

/// Split a command line as a shell would for plain words and '…' / "…" quoting.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() || any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    assert!(quote.is_none(), "unbalanced quote in README command: {line}");
    if !cur.is_empty() || any {
        out.push(cur);
    }
    out
}

/// The `stiction` arguments of a README command line, or None for a line that is not one.
fn stiction_args(line: &str) -> Option<Vec<String>> {
    let w = words(line);
    let skip = |n: usize| Some(w[n..].to_vec());
    match w.first().map(String::as_str) {
        Some("stiction") | Some("target/release/stiction") => skip(1),
        Some("cargo") if w.get(1).map(String::as_str) == Some("run") => {
            // `cargo run --release -- ARGS` runs the stiction binary; other `cargo run`s
            // (an example generator, the bindings tool) are not the CLI.
            let dd = w.iter().position(|x| x == "--")?;
            if w[..dd].iter().any(|x| x == "--example" || x == "--manifest-path") {
                None
            } else {
                skip(dd + 1)
            }
        }
        _ => None,
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn every_readme_command_and_json_snippet_works() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    copy_dir(&root.join("examples"), &work.join("examples"));
    let schema = stiction::schema::system_schema(&stiction::registry());
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let (mut commands, mut systems, mut snippets) = (0, 0, 0);
    for (n, (info, body)) in fenced_blocks(&readme).into_iter().enumerate() {
        match info.as_str() {
            "sh" => {
                for raw in body.lines() {
                    let line = raw.split(" # ").next().unwrap().trim();
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    // `a | b`: the stiction part; `> file`: standard output to the file.
                    let line = line.split(" | ").next().unwrap();
                    let (line, redirect) = match line.split_once(" > ") {
                        Some((l, f)) => (l, Some(f.trim())),
                        None => (line, None),
                    };
                    let Some(args) = stiction_args(line) else {
                        let known = [
                            "cargo build",
                            "cargo test",
                            "cargo bench",
                            "cargo run",
                            "python3 ",
                            ".venv/bin/pip ",
                            ".venv/bin/python ",
                        ];
                        // Leading environment assignments (`STICTION_FUZZ_SECS=600 cargo test …`).
                        let words = line.split_whitespace();
                        let bare: Vec<&str> = words.skip_while(|w| w.contains('=') && !w.starts_with('-')).collect();
                        let bare = bare.join(" ");
                        assert!(
                            known.iter().any(|k| bare.starts_with(k)),
                            "README block {n}: unknown command kind: {line}"
                        );
                        continue;
                    };
                    let out =
                        Command::new(env!("CARGO_BIN_EXE_stiction")).args(&args).current_dir(work).output().unwrap();
                    assert!(
                        out.status.success(),
                        "README block {n}: `{line}` failed:\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    if let Some(f) = redirect {
                        std::fs::write(work.join(f), &out.stdout).unwrap();
                    }
                    commands += 1;
                }
            }
            "json" => {
                let v: Value = serde_json::from_str(&body)
                    .or_else(|_| serde_json::from_str(&format!("{{{body}}}")))
                    .unwrap_or_else(|e| panic!("README block {n}: JSON does not parse ({e}):\n{body}"));
                if v.get("components").is_some() || v.get("fmus").is_some() {
                    // A complete system: checked where the examples are (relative FMU paths).
                    let f = work.join("examples").join(format!("readme-{n}.json"));
                    std::fs::write(&f, v.to_string()).unwrap();
                    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
                        .arg("check")
                        .arg(&f)
                        .current_dir(work)
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "README block {n}: check failed:\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let errs: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
                    assert!(errs.is_empty(), "README block {n}: {errs:?}");
                    systems += 1;
                } else {
                    // Component snippets: each named component against its type's schema.
                    for (name, c) in v.as_object().unwrap() {
                        assert!(c.get("type").is_some(), "README block {n}: '{name}' is not a component");
                        let doc = json!({"solver": {"step": 1e-3, "stop_time": 1}, "components": {name: c}});
                        let errs: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
                        assert!(errs.is_empty(), "README block {n}: '{name}': {errs:?}");
                        snippets += 1;
                    }
                }
            }
            _ => {}
        }
    }
    assert!(
        commands >= 15 && systems >= 3 && snippets >= 3,
        "{commands} commands, {systems} systems, {snippets} snippets"
    );
    // What the commands made.
    let lines = |f: &str| std::fs::read_to_string(work.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")).lines().count();
    assert_eq!(lines("karnopp-study.csv"), 101);
    assert_eq!(lines("mc-study.csv"), 51);
    assert_eq!(lines("rolling_sphere.csv"), 1202);
    assert!(lines("gear-alone.csv") > 100);
    assert!(std::fs::read(work.join("karnopp.mat")).unwrap().len() > 1000);
    let printed: Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("system.schema.json")).unwrap()).unwrap();
    assert_eq!(printed, schema);
}

#[test]
fn command_lines_split_like_a_shell() {
    assert_eq!(words("a 'b(1,2)' \"c d\" e"), ["a", "b(1,2)", "c d", "e"]);
    assert_eq!(stiction_args("cargo run --release -- run x.json").unwrap(), ["run", "x.json"]);
    assert_eq!(stiction_args("cargo run --release --example generate_chain -- 1000 out.json"), None);
}
