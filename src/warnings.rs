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

/// The error of `--strict` for a system with `count` warnings: it names the exact `stiction
/// check` command that shows them, with the `--set`s of the refused command.
pub fn strict_refusal(file: &str, count: usize, command: &str, sets: &[String]) -> anyhow::Error {
    let mut check = format!("stiction check {}", shell_word(file));
    for s in sets {
        check.push_str(" --set ");
        check.push_str(&shell_word(s));
    }
    anyhow::anyhow!(
        "{file}: {count} warning(s) (see `{check}`); {command} --strict refuses such a system — fix the \
         warnings (they name the component and the limit) or leave out --strict"
    )
}

/// `word` as a POSIX shell reads it back: bare when it holds only characters no shell
/// treats specially, else in single quotes (a `'` inside written `'\''`).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_exact_check_command() {
        let sets = ["solver.step=2e-3".to_string(), "m.init.v[0]=1".to_string()];
        let e = strict_refusal("a b.json", 1, "run", &sets).to_string();
        assert!(e.contains("`stiction check 'a b.json' --set solver.step=2e-3 --set 'm.init.v[0]=1'`"), "{e}");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }
}
