//! What `run` and `check` do with `stiction check`'s warnings (issue 14): `run` prints them
//! on standard error before the first step, and `--strict` refuses a system that has any
//! (exit status 2 for both commands).

use stiction_framework::Diagnostic;

/// The warnings among `findings`.
pub fn warnings(findings: &[Diagnostic]) -> Vec<&str> {
    findings
        .iter()
        .filter_map(|d| match d {
            Diagnostic::Warning(w) => Some(w.as_str()),
            Diagnostic::Info(_) => None,
        })
        .collect()
}

/// Print every warning of `findings` on standard error as `warning: <text>` (the text
/// starts with the component's name); the number printed.
pub fn print_before_run(findings: &[Diagnostic]) -> usize {
    let found = warnings(findings);
    for w in &found {
        eprintln!("warning: {w}");
    }
    found.len()
}

/// The error of `--strict` for a system with `count` warnings.
pub fn strict_refusal(file: &str, count: usize, command: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{file}: {count} warning(s) (see `stiction check {file}`); {command} --strict refuses such a system — fix the \
         warnings (they name the component and the limit) or leave out --strict"
    )
}
