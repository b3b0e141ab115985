//! The README and the guide under docs/ cannot drift from the program. For README.md and
//! every docs/**/*.md page (the generated reference pages aside, tests/reference.rs checks
//! those):
//! - every ```sh block is valid sh (`sh -n`: a quoting error fails whatever the line), and
//!   every `stiction` command of it runs through `sh -c` (in order, in a scratch directory of
//!   the page holding a copy of examples/, with the binary under test first on PATH, as after
//!   `cargo install --path .`; `cargo run --release -- ARGS` and `target/release/stiction`
//!   run it too) and exits 0, or with the code its line documents in a trailing `# exit N`
//!   comment; lines that are not `stiction` commands must be one of the known kinds (cargo
//!   build/test/bench/install, python3, mdbook) or the test fails, so a new kind of command
//!   cannot go unchecked;
//! - a ```text output block right after a ```sh block is what its last command prints on
//!   standard output, line for line;
//! - every complete system in a ```json block passes `stiction check` and the JSON Schema,
//!   and every component snippet validates against its type's schema;
//! - every relative link (to a file, or to a heading with `#anchor` by GitHub's rules)
//!   resolves, in those pages, ARCHITECTURE.md and the generated pages alike;
//! - every page of docs/ is in docs/SUMMARY.md (the mdbook table of contents);
//! - no page names a path outside the repository (the papers, the design notes), and every
//!   page that names a paper's author links to the bibliography (docs/reference/bibliography.md).
//!
//! The ```python blocks run in the Python package's tests (python/tests/test_docs.py).

use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pages made by `stiction components --markdown` and from clap's help: their content is
/// checked against the program by tests/reference.rs, their links here.
const GENERATED: [&str; 2] = ["docs/reference/components.md", "docs/reference/cli.md"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown page under docs/, as paths relative to the repository.
fn pages() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut found = Vec::new();
    walk(&root().join("docs"), &mut found);
    let mut out: Vec<String> =
        found.iter().map(|p| p.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/")).collect();
    out.sort();
    out.insert(0, "README.md".to_string());
    out
}

/// One fenced block: its info string, body and the line (1-based) of its opening fence.
struct Block {
    info: String,
    body: String,
    line: usize,
}

/// Every fenced block, indented ones included.
fn fenced_blocks(page: &str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(Block, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let block = Block { info: info.trim().to_string(), body: String::new(), line: i + 1 };
                    open = Some((block, indent));
                }
            }
            Some((block, ind)) => {
                if trimmed.starts_with("```") {
                    out.push(open.take().unwrap().0);
                } else {
                    block.body.push_str(line.get(*ind..).unwrap_or(trimmed));
                    block.body.push('\n');
                }
            }
        }
    }
    assert!(open.is_none(), "{page}: an unclosed ``` block");
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
    assert!(quote.is_none(), "unbalanced quote in a documented command: {line}");
    if !cur.is_empty() || any {
        out.push(cur);
    }
    out
}

/// The `stiction` arguments of a command line, or None for a line that is not one.
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

/// A documented stiction command as the shell line that runs the binary under test: the
/// line itself for `stiction …`, with `stiction` for `target/release/stiction` and for
/// `cargo run --release --` (the binary that builds); None for a line that is not one.
fn as_installed(line: &str) -> Option<String> {
    stiction_args(line)?;
    if let Some(rest) = line.strip_prefix("target/release/stiction ") {
        return Some(format!("stiction {rest}"));
    }
    if line.starts_with("cargo ") {
        let (_, rest) = line.split_once(" -- ")?;
        return Some(format!("stiction {rest}"));
    }
    Some(line.to_string())
}

/// $PATH with the directory of the stiction binary under test first.
fn path_with_stiction() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_stiction")).parent().unwrap().to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap()
}

/// A command line without its comment, and the exit code its `# exit N` comment documents
/// (0 without one).
fn command_and_exit(raw: &str) -> (&str, i32) {
    match raw.split_once(" # ") {
        None => (raw.trim(), 0),
        Some((cmd, comment)) => {
            let code = comment.trim().strip_prefix("exit ").map(|c| {
                let digits: String = c.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().unwrap_or_else(|_| panic!("`# exit N` needs a number: {raw}"))
            });
            (cmd.trim(), code.unwrap_or(0))
        }
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

#[derive(Default)]
struct Counts {
    commands: usize,
    failing: usize,
    systems: usize,
    snippets: usize,
    outputs: usize,
}

/// Run the ```sh and ```json blocks of one page in `work` (a copy of examples/ inside).
fn check_page(page: &str, work: &Path, validator: &jsonschema::Validator, n: &mut Counts) {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    // The standard output of the last command of the last ```sh block, for a ```text output
    // block right after it.
    let mut last_output: Option<String> = None;
    for block in fenced_blocks(page, &text) {
        let at = format!("{page}:{}", block.line);
        match block.info.as_str() {
            "sh" => {
                // The whole block as a shell reads it: a quoting or syntax error fails here,
                // whichever kind of command the line is.
                let syntax = Command::new("sh").arg("-n").arg("-c").arg(&block.body).output().unwrap();
                assert!(
                    syntax.status.success(),
                    "{at}: the block is not valid sh:\n{}\n{}",
                    block.body,
                    String::from_utf8_lossy(&syntax.stderr)
                );
                let mut ran: Option<String> = None;
                for raw in block.body.lines() {
                    let (line, expected) = command_and_exit(raw);
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let Some(shell_line) = as_installed(line) else {
                        let known = [
                            "cargo build",
                            "cargo test",
                            "cargo bench",
                            "cargo run",
                            "cargo install",
                            "python3 ",
                            ".venv/bin/pip ",
                            ".venv/bin/python ",
                            "mdbook ",
                            // OpenModelica's simulator: tests/omsimulator.rs runs the plain
                            // command on every example where it is installed.
                            "OMSimulator ",
                        ];
                        // Leading environment assignments (`STICTION_FUZZ_SECS=600 cargo test …`).
                        let words = line.split_whitespace();
                        let bare: Vec<&str> = words.skip_while(|w| w.contains('=') && !w.starts_with('-')).collect();
                        let bare = bare.join(" ");
                        assert!(known.iter().any(|k| bare.starts_with(k)), "{at}: unknown command kind: {line}");
                        continue;
                    };
                    // Through a shell, with the stiction under test first on PATH, as a user
                    // who ran `cargo install --path .` types it.
                    let out = Command::new("sh")
                        .arg("-c")
                        .arg(&shell_line)
                        .env("PATH", path_with_stiction())
                        .current_dir(work)
                        .output()
                        .unwrap();
                    assert_eq!(
                        out.status.code(),
                        Some(expected),
                        "{at}: `{line}` should exit {expected}:\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    ran = Some(String::from_utf8_lossy(&out.stdout).into_owned());
                    n.commands += 1;
                    n.failing += usize::from(expected != 0);
                }
                last_output = ran;
            }
            "text output" => {
                // What the command before it prints: its standard output, line for line.
                let printed = last_output.take().unwrap_or_else(|| panic!("{at}: an output block after no command"));
                assert_eq!(
                    printed.trim_end(),
                    block.body.trim_end(),
                    "{at}: the page shows an output its command does not print"
                );
                n.outputs += 1;
            }
            "json" => {
                let body = &block.body;
                let v: Value = serde_json::from_str(body)
                    .or_else(|_| serde_json::from_str(&format!("{{{body}}}")))
                    .unwrap_or_else(|e| panic!("{at}: JSON does not parse ({e}):\n{body}"));
                if v.get("components").is_some() || v.get("fmus").is_some() {
                    // A complete system: checked where the examples are (relative FMU paths).
                    let f = work.join("examples").join(format!("doc-{}.json", block.line));
                    std::fs::write(&f, v.to_string()).unwrap();
                    let out = Command::new(env!("CARGO_BIN_EXE_stiction"))
                        .arg("check")
                        .arg(&f)
                        .current_dir(work)
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{at}: check failed:\n{}", String::from_utf8_lossy(&out.stderr));
                    let errs: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
                    assert!(errs.is_empty(), "{at}: {errs:?}");
                    n.systems += 1;
                } else {
                    // Component snippets: each named component against its type's schema.
                    for (name, c) in v.as_object().unwrap() {
                        assert!(c.get("type").is_some(), "{at}: '{name}' is not a component");
                        let doc = json!({"solver": {"step": 1e-3, "stop_time": 1}, "components": {name: c}});
                        let errs: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
                        assert!(errs.is_empty(), "{at}: '{name}': {errs:?}");
                        n.snippets += 1;
                    }
                }
            }
            _ => {}
        }
    }
}

#[test]
fn every_documented_command_and_json_snippet_works() {
    let schema = stiction::schema::system_schema(&stiction::registry());
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let mut n = Counts::default();
    // One scratch directory per page (a page's commands may use what its earlier ones made).
    let mut made: BTreeMap<String, tempfile::TempDir> = BTreeMap::new();
    for page in pages().into_iter().filter(|p| !GENERATED.contains(&p.as_str())) {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&root().join("examples"), &dir.path().join("examples"));
        check_page(&page, dir.path(), &validator, &mut n);
        made.insert(page, dir);
    }
    eprintln!(
        "{} commands ({} documented to fail, {} outputs compared), {} systems, {} snippets in {} pages",
        n.commands,
        n.failing,
        n.outputs,
        n.systems,
        n.snippets,
        made.len()
    );
    assert!(
        n.commands >= 40 && n.failing >= 2 && n.systems >= 6 && n.snippets >= 3 && n.outputs >= 1,
        "{} commands ({} documented to fail), {} systems, {} snippets",
        n.commands,
        n.failing,
        n.systems,
        n.snippets
    );
    // What the commands made, in the page that documents it.
    let file = |page: &str, f: &str| made[page].path().join(f);
    let lines = |page: &str, f: &str| {
        std::fs::read_to_string(file(page, f)).unwrap_or_else(|e| panic!("{page}: {f}: {e}")).lines().count()
    };
    assert_eq!(lines("README.md", "rolling_sphere.csv"), 1202);
    assert_eq!(lines("docs/how-to/parameter-studies.md", "karnopp-study.csv"), 101);
    assert_eq!(lines("docs/how-to/parameter-studies.md", "mc-study.csv"), 51);
    // The page promises a failed run (a negative mass) among the draws, as a row.
    let mc = std::fs::read_to_string(file("docs/how-to/parameter-studies.md", "mc-study.csv")).unwrap();
    let failed: Vec<&str> = mc.lines().filter(|l| l.contains(",failed,")).collect();
    assert!(
        failed.len() == 1 && failed[0].starts_with("34,") && failed[0].contains("block.mass: must be > 0"),
        "{failed:?}"
    );
    assert!(lines("docs/tutorials/first-fmu.md", "gear-alone.csv") > 100);
    assert!(std::fs::read(file("docs/how-to/read-results.md", "karnopp.mat")).unwrap().len() > 1000);
    let printed: Value = serde_json::from_str(
        &std::fs::read_to_string(file("docs/how-to/editor-schema.md", "system.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(printed, schema);
}

/// GitHub's anchor of a heading: markup removed, lower case, letters, digits, `-` and `_`
/// kept, spaces as `-`, everything else dropped.
fn slug(heading: &str) -> String {
    // [text](target) → text
    let mut plain = String::new();
    let mut rest = heading;
    while let Some(i) = rest.find('[') {
        plain.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match after.find("](").and_then(|j| after[j..].find(')').map(|k| (j, j + k))) {
            Some((j, k)) => {
                plain.push_str(&after[..j]);
                rest = &after[k + 1..];
            }
            None => {
                plain.push('[');
                rest = after;
            }
        }
    }
    plain.push_str(rest);
    plain
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside fenced blocks), duplicates numbered.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..]);
            let k = seen.entry(base.clone()).or_insert(0);
            out.insert(if *k == 0 { base.clone() } else { format!("{base}-{k}") });
            *k += 1;
        }
    }
    out
}

/// The targets of a page's inline links `[text](target)`, with their line, outside fenced
/// blocks and code spans.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Drop code spans.
        let mut plain = String::new();
        for (k, part) in line.split('`').enumerate() {
            if k % 2 == 0 {
                plain.push_str(part);
            }
        }
        let mut rest = plain.as_str();
        while let Some(j) = rest.find("](") {
            let after = &rest[j + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("").to_string();
            out.push((i + 1, target));
            rest = &after[end..];
        }
    }
    out
}

/// A path with `.` and `..` resolved without the file system.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut checked = 0;
    let mut broken = Vec::new();
    let mut all = pages();
    all.push("ARCHITECTURE.md".to_string());
    for page in &all {
        let path = root().join(page);
        let text = std::fs::read_to_string(&path).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() { path.clone() } else { normalize(&path.parent().unwrap().join(file)) };
            checked += 1;
            let generated = GENERATED.iter().any(|g| root().join(g) == dest);
            if !dest.exists() && generated {
                // Made by `stiction components --markdown` and from clap's help on another
                // branch; checked (anchors too) once the page is there.
                continue;
            }
            if !dest.exists() {
                broken.push(format!("{page}:{line}: {target}: no file {}", dest.display()));
                continue;
            }
            if let Some(a) = anchor {
                let Ok(dest_text) = std::fs::read_to_string(&dest) else {
                    broken.push(format!("{page}:{line}: {target}: an anchor into a file that is not text"));
                    continue;
                };
                if !anchors(&dest_text).contains(a) {
                    broken.push(format!("{page}:{line}: {target}: no heading with anchor #{a}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 100, "only {checked} links checked");
}

#[test]
fn every_guide_page_is_in_the_summary() {
    let summary = std::fs::read_to_string(root().join("docs/SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().map(|(_, t)| t).collect();
    for page in pages().into_iter().filter(|p| p.starts_with("docs/") && p != "docs/SUMMARY.md") {
        let rel = page.strip_prefix("docs/").unwrap();
        assert!(listed.contains(rel), "docs/SUMMARY.md does not list {rel}");
    }
}

#[test]
fn no_page_names_a_path_outside_the_repository_and_papers_link_the_bibliography() {
    let mut all = pages();
    all.push("ARCHITECTURE.md".to_string());
    let mut bad = Vec::new();
    for page in all.iter().filter(|p| !GENERATED.contains(&p.as_str())) {
        let text = std::fs::read_to_string(root().join(page)).unwrap();
        for (i, line) in text.lines().enumerate() {
            for outside in ["papers/", "shared/", "MODELS.md", "/root/", "/work/", "/home/"] {
                if line.contains(outside) {
                    bad.push(format!(
                        "{page}:{}: names `{outside}`, which a reader of the repository does not have",
                        i + 1
                    ));
                }
            }
        }
        let names_author = ["Kikuuwe", "Karnopp", "Dupont"].iter().any(|a| text.contains(a));
        if names_author && page != "docs/reference/bibliography.md" && !text.contains("bibliography.md") {
            bad.push(format!("{page}: names a paper's author but does not link docs/reference/bibliography.md"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let n = std::fs::read_to_string(root().join("README.md")).unwrap().lines().count();
    assert!(n <= 250, "README.md has {n} lines (at most 250: the rest belongs in docs/)");
}

#[test]
fn command_lines_split_like_a_shell() {
    assert_eq!(words("a 'b(1,2)' \"c d\" e"), ["a", "b(1,2)", "c d", "e"]);
    assert_eq!(stiction_args("cargo run --release -- run x.json").unwrap(), ["run", "x.json"]);
    assert_eq!(stiction_args("cargo run --release --example generate_chain -- 1000 out.json"), None);
    assert_eq!(command_and_exit("stiction run x.json   # exit 2: bad input"), ("stiction run x.json", 2));
    assert_eq!(command_and_exit("stiction run x.json # a comment"), ("stiction run x.json", 0));
    assert_eq!(as_installed("cargo run --release -- run x.json").unwrap(), "stiction run x.json");
    assert_eq!(as_installed("target/release/stiction fmu info a.fmu").unwrap(), "stiction fmu info a.fmu");
    assert_eq!(as_installed("stiction run x.json -o - | head -5").unwrap(), "stiction run x.json -o - | head -5");
    assert_eq!(as_installed("python3 python/bench/step_loop.py"), None);
}

#[test]
fn anchors_follow_github() {
    assert_eq!(
        slug(" Saving a run and continuing it: `--save-state`, `--resume`"),
        "saving-a-run-and-continuing-it---save-state---resume"
    );
    assert_eq!(
        slug(" Stuck-state stability of the whole system (`stiction check`, `run`, `--strict`)"),
        "stuck-state-stability-of-the-whole-system-stiction-check-run---strict"
    );
    assert_eq!(slug(" The [JSON](x.md) format"), "the-json-format");
    assert_eq!(slug(" Model C: T² < M/(4K)"), "model-c-t²--m4k");
    let a = anchors("# A\n## A\n```\n# B\n```\n");
    assert_eq!(a, ["a", "a-1"].iter().map(|s| s.to_string()).collect());
}
