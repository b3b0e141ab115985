//! The generated reference pages under docs/reference/: `stiction components --markdown`
//! (every component type, from the [`ParamDoc`] tables the loader checks every key against)
//! and the table helpers of `stiction help-markdown` (every subcommand's `--help`, written by
//! the CLI's src/help_markdown.rs from clap, and the exit codes).
//! tests/reference.rs fails when a checked-in page differs from what these functions write.

use stiction_components::Family;
use stiction_framework::system::{ComponentType, Kind, ParamDoc};

/// The command that rewrites both pages (printed by tests/reference.rs and in each page).
pub const REGENERATE: &str = "STICTION_BLESS=1 cargo test --release --test reference";

/// The anchor GitHub and mdBook give a heading: lower case, spaces to `-`, other characters
/// than letters, digits, `-` and `_` dropped.
pub fn anchor(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_lowercase().next().unwrap_or(c)),
            _ => None,
        })
        .collect()
}

/// `text` as Markdown prose in a table cell: code spans (between backticks) kept, `|`
/// escaped everywhere, and outside code the characters that would start emphasis, HTML or
/// strikethrough escaped.
pub fn prose(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut code = false;
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
        match c {
            '`' => code = !code,
            '|' => out.push('\\'),
            '\\' | '*' | '<' | '~' if !code => out.push('\\'),
            '_' if !code && (!word(i.checked_sub(1)) || !word(Some(i + 1))) => out.push('\\'),
            _ => {}
        }
        out.push(c);
    }
    out
}

/// `text` as a code span (it holds no backtick), `|` escaped for a table cell.
fn code(text: &str) -> String {
    format!("`{}`", text.replace('|', "\\|"))
}

/// A port or signal name: a code span when it is one identifier (`a`, `joint<i>`), else prose.
fn name(text: &str) -> String {
    if text.chars().all(|c| c.is_alphanumeric() || "_<>".contains(c)) {
        code(text)
    } else {
        prose(text)
    }
}

/// The default column: "required", a JSON value as code, or prose ("the solver step").
fn default(p: &ParamDoc) -> String {
    match p.default {
        None => "required".into(),
        Some(d) if !d.contains('`') && serde_json::from_str::<serde_json::Value>(d).is_ok() => code(d),
        Some(d) => prose(d),
    }
}

fn unit(u: &str) -> String {
    if u.is_empty() {
        "—".into()
    } else {
        prose(u)
    }
}

/// The section of one component type.
fn component(out: &mut String, t: &ComponentType) {
    let kind = match t.kind {
        // A type whose `role` parameter chooses (an imported FMU) is registered under one kind.
        _ if t.documents("role") => "admittance, impedance or signal block, by `role`",
        Kind::Admittance => "admittance (force in, motion out)",
        Kind::Impedance => "impedance (motion in, force out)",
    };
    out.push_str(&format!("### `{}`\n\n{}.\n\n*{kind}*\n\n", t.name, capital(&prose(t.summary))));
    if t.params.is_empty() {
        out.push_str("**Parameters**: none.\n\n");
    } else {
        out.push_str("**Parameters**\n\n");
        out.push_str("| parameter | unit | default | time function | description |\n|---|---|---|---|---|\n");
        for p in t.params {
            let tf = if p.takes_time_function() { "yes" } else { "" };
            out.push_str(&format!(
                "| {} | {} | {} | {tf} | {} |\n",
                code(p.name),
                unit(p.unit),
                default(p),
                prose(p.doc)
            ));
        }
        out.push('\n');
    }
    out.push_str("**Ports**\n\n| port | domain | description |\n|---|---|---|\n");
    for p in t.ports {
        let domains: Vec<String> = p.domain.split('|').map(code).collect();
        out.push_str(&format!("| {} | {} | {} |\n", name(p.name), domains.join(" or "), prose(p.doc)));
    }
    out.push('\n');
    if t.signals.is_empty() {
        out.push_str("**Signals**: none.\n\n");
        return;
    }
    out.push_str(
        "**Signals**\n\n| signal | size | unit | read by a time function | description |\n|---|---|---|---|---|\n",
    );
    for s in t.signals {
        let size = match s.len {
            0 => "n".to_string(),
            n => n.to_string(),
        };
        let when = if s.state { "at every stage" } else { "held over each step" };
        out.push_str(&format!("| {} | {size} | {} | {when} | {} |\n", name(s.name), unit(s.unit), prose(s.doc)));
    }
    out.push('\n');
}

/// `s` with its first letter in upper case.
fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// docs/reference/components.md: every type of `families`, by family, from the tables the
/// loader checks every key against.
pub fn components_markdown(families: &[Family]) -> String {
    let mut out = String::from("# Component reference\n\n");
    out.push_str(&format!(
        "<!-- Generated by `stiction components --markdown` from the parameter tables the loader checks; \
         do not edit. Regenerate with `{REGENERATE}`. -->\n\n"
    ));
    out.push_str(
        "Every component type a system file's `components` object can name, by family. \
         The same tables are printed by `stiction components [TYPE]`, give the JSON Schema \
         of `stiction schema`, and are checked by the loader: a key a table does not list is \
         an error naming its JSON path.\n\n\
         - **Parameters** are the keys of the component's JSON object besides `type`. A dotted \
         name (`law.F`) is a key of a nested object, `links[].mass` a key of every object of \
         the array `links`. A parameter without a default is required (some only in the case \
         its description names). *time function* marks the parameters that take a time \
         function: a number, an expression of `t` and of signals, `{\"piecewise\": …}`, \
         `{\"table\": …}` or `{\"signal\": …}`.\n\
         - **Ports** are what connections name (`component.port`); the domain says what \
         flows through them: `scalar` (one coordinate), `point3` (a point in space), `frame` \
         (a body's pose: force and moment).\n\
         - **Signals** can be written to the output (`component.signal[i]`) and read by \
         time functions and signal connections. Size `n` depends on the component (a robot's \
         joint count). A signal read *at every stage* comes from the state of each RK4 stage; \
         one *held over each step* is the value at the step's beginning.\n\n",
    );
    out.push_str("## Contents\n\n");
    for (f, types) in families.iter().map(|f| (f, family_types(f))) {
        let links: Vec<String> = types.iter().map(|t| format!("[`{}`](#{})", t.name, anchor(t.name))).collect();
        out.push_str(&format!("- [{}](#{}): {}\n", f.title, anchor(f.title), links.join(", ")));
    }
    out.push('\n');
    for f in families {
        out.push_str(&format!("## {}\n\n{}\n\n", f.title, prose(f.summary)));
        for t in family_types(f) {
            component(&mut out, &t);
        }
    }
    // One newline at the end of the file.
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// The types `f` registers, by name.
pub fn family_types(f: &Family) -> Vec<ComponentType> {
    let mut r = stiction_framework::system::Registry::new();
    (f.register)(&mut r);
    r.types().copied().collect()
}
