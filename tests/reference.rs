//! The generated reference pages: docs/reference/components.md (`stiction components
//! --markdown`, from the parameter tables the loader checks) and docs/reference/cli.md
//! (`stiction help-markdown`, from clap's help and src/exit.rs's codes) must be what the
//! code generates now. Regenerate both with
//! `STICTION_BLESS=1 cargo test --release --test reference`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use stiction::reference::{anchor, REGENERATE};

/// The pages and the arguments of `stiction` that print them.
const PAGES: [(&str, &[&str]); 2] =
    [("docs/reference/components.md", &["components", "--markdown"]), ("docs/reference/cli.md", &["help-markdown"])];

fn stiction(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_stiction")).args(args).output().unwrap();
    assert!(out.status.success(), "stiction {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn page(path: &str) -> String {
    let args = PAGES.iter().find(|p| p.0 == path).unwrap().1;
    stiction(args)
}

#[test]
fn the_checked_in_reference_pages_are_what_the_code_generates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("STICTION_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, args) in PAGES {
        let generated = stiction(args);
        let file = root.join(path);
        if bless {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &generated).unwrap();
            continue;
        }
        let checked_in = std::fs::read_to_string(&file).unwrap_or_default();
        if checked_in != generated {
            let line = checked_in.lines().zip(generated.lines()).position(|(a, b)| a != b);
            let line = line.unwrap_or_else(|| checked_in.lines().count().min(generated.lines().count()));
            stale.push(format!(
                "{path} is not what `stiction {}` prints (first difference at line {})",
                args.join(" "),
                line + 1
            ));
        }
    }
    assert!(stale.is_empty(), "{}.\nRegenerate with `{REGENERATE}` and commit the pages.", stale.join(";\n"));
}

/// The headings' anchors of a page (unique) and the anchors its links name.
fn anchors(md: &str) -> (BTreeSet<String>, Vec<String>) {
    let mut headings = BTreeSet::new();
    let mut in_code = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            let a = anchor(line.trim_start_matches('#').trim());
            assert!(headings.insert(a.clone()), "two headings have the anchor #{a}");
        }
    }
    let links = md.split("](#").skip(1).map(|s| s[..s.find(')').unwrap()].to_string()).collect();
    (headings, links)
}

#[test]
fn every_link_of_the_pages_names_a_heading_and_no_two_headings_share_an_anchor() {
    for (path, _) in PAGES {
        let (headings, links) = anchors(&page(path));
        assert!(links.len() > 5, "{path}: no contents");
        for l in links {
            assert!(headings.contains(&l), "{path}: link to #{l}, which no heading has");
        }
    }
}

/// The rows of the parameter tables of components.md by type: (name, default column).
fn parameter_rows(md: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let mut rows: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let (mut ty, mut in_params) = (String::new(), false);
    for line in md.lines() {
        if let Some(t) = line.strip_prefix("### ") {
            ty = t.trim_matches('`').to_string();
            rows.entry(ty.clone()).or_default();
        } else if line.starts_with("**") {
            in_params = line == "**Parameters**";
        } else if in_params && line.starts_with("| `") {
            let cells: Vec<&str> = line.split(" | ").collect();
            rows.get_mut(&ty).unwrap().push((cells[0][2..].trim_matches('`').to_string(), cells[2].to_string()));
        }
    }
    rows
}

/// Every registered type has one section, under its family, with one parameter row per
/// entry of its table, in order, "required" exactly where there is no default.
#[test]
fn the_component_page_lists_every_type_once_with_every_parameter() {
    let md = page("docs/reference/components.md");
    let rows = parameter_rows(&md);
    let registry = stiction::registry();
    let names: BTreeSet<&str> = registry.types().map(|t| t.name).collect();
    assert_eq!(rows.keys().map(String::as_str).collect::<BTreeSet<_>>(), names);
    assert_eq!(md.matches("\n### ").count(), names.len(), "a type is listed twice");
    for t in registry.types() {
        let got = &rows[t.name];
        let want: Vec<&str> = t.params.iter().map(|p| p.name).collect();
        assert_eq!(got.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), want, "{}", t.name);
        for (p, (_, default)) in t.params.iter().zip(got) {
            assert_eq!(default == "required", p.default.is_none(), "{}.{}: default column {default}", t.name, p.name);
        }
        let section = &md[md.find(&format!("### `{}`", t.name)).unwrap()..];
        let section = &section[..section[4..].find("\n#").map_or(section.len(), |i| i + 4)];
        for s in t.signals {
            assert!(section.contains(&format!("| `{}` |", s.name)), "{}: signal {} missing", t.name, s.name);
        }
        for p in t.ports {
            assert!(section.contains(p.domain.split('|').next().unwrap()), "{}: port {}", t.name, p.name);
        }
    }
    // Each family's section holds its types.
    for f in stiction::families() {
        let start = md.find(&format!("\n## {}\n", f.title)).unwrap_or_else(|| panic!("no section {}", f.title));
        let end = md[start + 1..].find("\n## ").map_or(md.len(), |i| i + start + 1);
        for t in stiction::reference::family_types(&f) {
            assert!(md[start..end].contains(&format!("### `{}`", t.name)), "{} not under {}", t.name, f.title);
        }
    }
}

/// The families partition the registry: no type in two families, none in none.
#[test]
fn every_component_type_is_in_exactly_one_family() {
    let mut seen = BTreeMap::new();
    for f in stiction::families() {
        for t in stiction::reference::family_types(&f) {
            if let Some(other) = seen.insert(t.name, f.name) {
                panic!("{} is in families {other} and {}", t.name, f.name);
            }
        }
    }
    let all: Vec<&str> = stiction::registry().types().map(|t| t.name).collect();
    assert_eq!(seen.keys().copied().collect::<Vec<_>>(), all);
}

/// cli.md has the help of every visible subcommand (not the internal ones) and the exit
/// codes; `stiction --help` ends with the same codes.
#[test]
fn the_cli_page_has_every_visible_subcommand_and_the_exit_codes() {
    let md = page("docs/reference/cli.md");
    for sub in ["run", "sweep", "check", "components", "schema", "graph", "fmu", "fmu export", "fmu info"] {
        let heading = format!("\n## `stiction {sub}`\n");
        assert!(md.contains(&heading), "no section for stiction {sub}");
        let usage = format!("Usage: stiction {sub}");
        assert!(md.contains(&usage), "no usage line for stiction {sub}");
    }
    for hidden in ["fmu-host", "fmu-reap", "help-markdown"] {
        let usage = format!("Usage: stiction {hidden}");
        assert!(!md.contains(&usage) && !md.contains(&format!("\n  {hidden} ")), "{hidden} is internal");
    }
    assert!(md.contains("--markdown"), "components --markdown is not in the page");
    let help = stiction(&["--help"]);
    for code in ["0", "1", "2", "3", "4", "130", "141", "143"] {
        assert!(md.contains(&format!("\n| {code} | ")), "cli.md lacks exit code {code}");
        assert!(help.contains(&format!(" {code}  ")), "--help lacks exit code {code}");
    }
}
