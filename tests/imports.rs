//! No two source files import each other (issue 41, part 3): a pair of files that each
//! name the other through a `crate::`/`super::`/`self::` path is one piece split in two,
//! or two pieces that share a third that belongs below both.
//!
//! Every crate of the tree is read as text: comments, strings and character literals are
//! blanked, inline `mod NAME { … }` blocks are followed so that `super::` resolves from where
//! it is written, and each path is resolved to the file of the longest module prefix it
//! names (`crate::stepper::codec::Writer` → stepper/codec.rs; `super::Failure` → the parent
//! module's file). A file naming itself is not an edge; a parent's bare `child::x` is not a
//! `crate::`/`super::` path and is not counted (declaring a child module is not an import).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The source directories of the crates of this repository, from the workspace root.
const CRATES: &[&str] = &[
    "src",
    "lib/src",
    "framework/src",
    "components/src",
    "fmus/sys/src",
    "fmus/schema/src",
    "fmus/export/src",
    "fmus/import/src",
    "fmus/master/src",
    "fmus/system/src",
    "python/src",
];

/// The text of `src` with comments, string literals and character literals replaced by
/// spaces (lifetimes kept), so that braces and paths in them are not read as code.
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, s: &[u8]| out.extend(s.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with(b"/*") {
            // Block comments nest in Rust.
            let (mut depth, mut j) = (0usize, 0);
            while j < rest.len() {
                if rest[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &rest[..j]);
            i += j;
        } else if let Some(len) = raw_string(rest) {
            blank(&mut out, &rest[..len]);
            i += len;
        } else if rest[0] == b'"' || rest.starts_with(b"b\"") {
            let mut j = if rest[0] == b'"' { 1 } else { 2 };
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            let j = (j + 1).min(rest.len());
            blank(&mut out, &rest[..j]);
            i += j;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{7f}', 'é'), else a lifetime or label.
            let len = if rest.get(1) == Some(&b'\\') {
                rest[2..].iter().position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let ch = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .ok()
                    .or_else(|| (2..=5).rev().find_map(|n| std::str::from_utf8(rest.get(1..n)?).ok()))
                    .and_then(|s| s.chars().next());
                ch.map(char::len_utf8).filter(|&n| rest.get(1 + n) == Some(&b'\'')).map(|n| n + 2)
            };
            let len = len.unwrap_or(1);
            if len == 1 {
                out.push(b'\'');
            } else {
                blank(&mut out, &rest[..len]);
            }
            i += len;
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII replaced")
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br#"…"#`) at the start of `s`.
fn raw_string(s: &[u8]) -> Option<usize> {
    let start = if s.starts_with(b"br") {
        2
    } else if s.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = s[start..].iter().take_while(|&&c| c == b'#').count();
    if s.get(start + hashes) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
    let body = start + hashes + 1;
    let end = s[body..].windows(close.len()).position(|w| w == close.as_slice())?;
    Some(body + end + close.len())
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths a file names through `crate::`, `super::` or `self::`, each with the module it
/// is written in (relative to the file's module: inline `mod` blocks it is inside).
fn paths_of(code: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    // (brace depth at which an inline module's body opened, its name)
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((depth, name));
            }
            i += 1;
            continue;
        }
        if c == b'}' {
            if inline.last().is_some_and(|(d, _)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == b';' {
            pending_mod = None;
        }
        if !is_ident(c) || (i > 0 && (is_ident(b[i - 1]) || b[i - 1] == b'$')) {
            i += 1;
            continue;
        }
        let end = i + b[i..].iter().take_while(|&&c| is_ident(c)).count();
        let word = &code[i..end];
        let here: Vec<String> = inline.iter().map(|(_, n)| n.clone()).collect();
        if word == "mod" {
            let rest = code[end..].trim_start();
            let n = rest.bytes().take_while(|&c| is_ident(c)).count();
            pending_mod = Some(rest[..n].to_string());
            i = end;
        } else if word == "use" {
            let stop = code[end..].find(';').map_or(code.len(), |p| end + p);
            for path in use_tree(&code[end..stop]) {
                if matches!(path.first().map(String::as_str), Some("crate" | "super" | "self")) {
                    out.push((here.clone(), path));
                }
            }
            i = stop;
        } else if matches!(word, "crate" | "super" | "self") && code[end..].starts_with("::") {
            let mut path = vec![word.to_string()];
            let mut j = end;
            while code[j..].starts_with("::") {
                let k = j + 2;
                let n = b[k..].iter().take_while(|&&c| is_ident(c)).count();
                if n == 0 {
                    break;
                }
                path.push(code[k..k + n].to_string());
                j = k + n;
            }
            out.push((here, path));
            i = j;
        } else {
            i = end;
        }
    }
    out
}

/// The paths of a `use` tree (`crate::a::{b, c::{d, e as f}, self}` → crate::a::b, …; a
/// glob or `self` names the module before it).
fn use_tree(text: &str) -> Vec<Vec<String>> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if matches!(c, '{' | '}' | ',' | '*') {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    // `::` was dropped: segments are consecutive words; `as NAME` ends a leaf.
    fn tree(t: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let mut path = prefix.to_vec();
        while *i < t.len() {
            match t[*i].as_str() {
                "{" => {
                    *i += 1;
                    while *i < t.len() && t[*i] != "}" {
                        tree(t, i, &path, out);
                        if t.get(*i).is_some_and(|s| s == ",") {
                            *i += 1;
                        }
                    }
                    *i += 1;
                    return;
                }
                "," | "}" => break,
                "self" if path.is_empty() => {
                    path.push("self".into());
                    *i += 1;
                }
                "*" | "self" => *i += 1,
                "as" => *i += 2,
                w => {
                    path.push(w.to_string());
                    *i += 1;
                }
            }
        }
        out.push(path);
    }
    let mut out = Vec::new();
    let mut i = 0;
    tree(&tokens, &mut i, &[], &mut out);
    out.retain(|p| !p.is_empty());
    out
}

/// The module path of a source file of a crate (`robot/geared.rs` → robot::geared).
fn module_of(rel: &Path) -> Vec<String> {
    let mut m: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let last = m.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !(m.is_empty() && matches!(stem, "lib" | "main")) && stem != "mod" {
        m.push(stem.to_string());
    }
    m
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            // src/bin/*: crates of their own.
            if p.file_name().is_some_and(|n| n != "bin") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The imports between the files of one crate, `files` = (module path, file name, text):
/// (importer, imported) pairs of file names.
fn edges(files: &[(Vec<String>, String, String)]) -> BTreeSet<(String, String)> {
    let by_module: BTreeMap<&[String], &str> = files.iter().map(|(m, f, _)| (m.as_slice(), f.as_str())).collect();
    let mut out = BTreeSet::new();
    for (module, file, text) in files {
        for (inside, path) in paths_of(&code_only(text)) {
            let mut at: Vec<String> = module.iter().cloned().chain(inside).collect();
            let mut segs = path.as_slice();
            match segs[0].as_str() {
                "crate" => {
                    at.clear();
                    segs = &segs[1..];
                }
                "self" => segs = &segs[1..],
                _ => {
                    while segs.first().is_some_and(|s| s == "super") {
                        at.pop();
                        segs = &segs[1..];
                    }
                }
            }
            at.extend(segs.iter().cloned());
            let target = (0..=at.len()).rev().find_map(|n| by_module.get(&at[..n]));
            if let Some(&target) = target {
                if target != file {
                    out.insert((file.clone(), target.to_string()));
                }
            }
        }
    }
    out
}

/// The pairs of files that import each other.
fn circles(edges: &BTreeSet<(String, String)>) -> Vec<(String, String)> {
    edges.iter().filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone()))).cloned().collect()
}

fn crate_files(root: &Path, dir: &str) -> Vec<(Vec<String>, String, String)> {
    let base = root.join(dir);
    let mut paths = Vec::new();
    rust_files(&base, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&base).expect("under the crate").to_path_buf();
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (module_of(&rel), format!("{dir}/{}", rel.display()), text)
        })
        .collect()
}

#[test]
fn no_two_files_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut total = 0;
    for dir in CRATES {
        let files = crate_files(root, dir);
        assert!(!files.is_empty(), "{dir}: no Rust files (a crate moved? update CRATES)");
        let e = edges(&files);
        total += e.len();
        found.extend(circles(&e));
    }
    // The reader finds the imports there are (a reader that finds none would pass anything).
    assert!(total > 200, "only {total} imports found between files: the reader is broken");
    assert!(found.is_empty(), "files that import each other: {found:?}");
}

fn sources(files: &[(&str, &str)]) -> Vec<(Vec<String>, String, String)> {
    files.iter().map(|(f, t)| (module_of(Path::new(f)), f.to_string(), t.to_string())).collect()
}

#[test]
fn finds_a_circle_through_super_and_crate_paths() {
    let files = sources(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use super::b::{Thing, other::{X as Y}};\n"),
        ("b.rs", "pub struct Thing;\nfn f() { crate::a::g(); }\n"),
    ]);
    let e = edges(&files);
    assert_eq!(circles(&e), vec![("a.rs".to_string(), "b.rs".to_string())], "{e:?}");
}

#[test]
fn a_test_module_of_a_file_is_the_file() {
    // `super::` in an inline test module is the file itself; `super::super::` its parent.
    let files = sources(&[
        ("lib.rs", "mod robot;\n"),
        ("robot/mod.rs", "mod axproj;\nmod geared;\n"),
        ("robot/axproj.rs", "pub fn axproj() {}\n"),
        (
            "robot/geared.rs",
            "use super::axproj::axproj;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::axproj::*;\n}\n",
        ),
    ]);
    let e = edges(&files);
    let want: BTreeSet<(String, String)> = [("robot/geared.rs".to_string(), "robot/axproj.rs".to_string())].into();
    assert_eq!(e, want);
}

#[test]
fn comments_and_strings_are_not_code() {
    let files = sources(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "// use crate::b::X;\n/* crate::b::Y { */ fn f() -> char { '{' }\nconst S: &str = \"crate::b::Z }\";\n",
        ),
        ("b.rs", "use crate::a::f;\nconst R: &str = r#\"crate::a \"# ;\n"),
    ]);
    let e = edges(&files);
    let want: BTreeSet<(String, String)> = [("b.rs".to_string(), "a.rs".to_string())].into();
    assert_eq!(e, want);
    assert!(circles(&e).is_empty());
}
