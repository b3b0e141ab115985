//! `--input NAME=FILE.csv[:COLUMN]` and `--input NAME=EXPR`: a system input driven by a
//! table or an expression of t (framework/src/stepper/bus.rs reads it at every stage).

use anyhow::{anyhow, Result};
use std::path::Path;
use stiction_framework::signal::TimeFunction;

/// The input's name and value function from one `--input` argument. A value naming a
/// `.csv` file is a table (time in its first column, the value in COLUMN, by default the
/// column named like the input), interpolated as tables are; anything else is an
/// expression of t.
pub fn parse_input_arg(arg: &str) -> Result<(String, TimeFunction)> {
    let (name, value) = arg
        .split_once('=')
        .filter(|(n, v)| !n.trim().is_empty() && !v.trim().is_empty())
        .ok_or_else(|| anyhow!("--input {arg}: expected NAME=FILE.csv[:COLUMN] or NAME=EXPR"))?;
    let (name, value) = (name.trim(), value.trim());
    let (file, column) = match value.rsplit_once(':') {
        Some((f, c)) if f.to_ascii_lowercase().ends_with(".csv") => (Some(f), c),
        _ if value.to_ascii_lowercase().ends_with(".csv") => (Some(value), name),
        _ => (None, name),
    };
    let f = match file {
        Some(file) => {
            let spec = serde_json::json!({ "table": file, "column": column });
            TimeFunction::from_json(&spec, &format!("--input {name}"), Path::new("."))
                .map_err(|e| anyhow!("--input {arg}: {e}"))?
        }
        None => TimeFunction::expression(value).map_err(|e| anyhow!("--input {arg}: {e}"))?,
    };
    Ok((name.to_string(), f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_and_bad_arguments() {
        let (n, f) = parse_input_arg("u=2*t + 1").unwrap();
        assert_eq!(n, "u");
        assert_eq!(f.eval(0.5), 2.0);
        assert!(parse_input_arg("u").is_err());
        assert!(parse_input_arg("=1").is_err());
        assert!(parse_input_arg("u=").is_err());
        let e = parse_input_arg("u=2*tt").unwrap_err().to_string();
        assert!(e.contains("--input u=2*tt") && e.contains("unknown name 'tt'"), "{e}");
        let e = parse_input_arg("u=missing.csv").unwrap_err().to_string();
        assert!(e.contains("missing.csv"), "{e}");
    }
}
