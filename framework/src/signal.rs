//! Time-varying inputs u(t): constants, expressions of `t`, piecewise definitions and
//! tables with linear interpolation (inline or from CSV).
//!
//! JSON forms (anywhere a component takes a time function):
//! - `0.5` — a constant;
//! - `"0.336 + 0.144*sin(100*t)"` — an expression of `t` (functions: sin, cos, tan, exp,
//!   ln, sqrt, abs, signum, min(a, b), max(a, b), atan2, ..., constants PI, E);
//! - `{"piecewise": [{"until": 4, "value": "min(0.52, 0.3*t)"}, {"value": 0.3}]}` — the first
//!   piece whose `until` is greater than t applies; the last piece has no `until`;
//! - `{"table": [[0, 0], [1, 2], [3, 2]]}` — (t, value) rows, linear interpolation, held
//!   constant outside the table;
//! - `{"table": "inputs.csv", "column": "fu", "time_column": "time"}` — the same from a CSV
//!   file with a header row (path relative to the JSON file; `time_column` defaults to
//!   the first column).

use crate::error::{Error, Result};
use exmex::prelude::*;
use serde_json::Value;
use std::path::Path;

/// A scalar function of time.
#[derive(Clone, Debug)]
pub enum TimeFunction {
    Constant(f64),
    Expression { text: String, expr: Box<FlatEx<f64>>, uses_t: bool },
    Piecewise { pieces: Vec<(f64, TimeFunction)>, last: Box<TimeFunction> },
    Table { t: Vec<f64>, v: Vec<f64> },
}

impl TimeFunction {
    /// Value at time `t`.
    pub fn eval(&self, t: f64) -> f64 {
        match self {
            TimeFunction::Constant(c) => *c,
            TimeFunction::Expression { expr, uses_t, .. } => {
                let r = if *uses_t { expr.eval(&[t]) } else { expr.eval(&[]) };
                r.unwrap_or(f64::NAN)
            }
            TimeFunction::Piecewise { pieces, last } => {
                for (until, f) in pieces {
                    if t < *until {
                        return f.eval(t);
                    }
                }
                last.eval(t)
            }
            TimeFunction::Table { t: ts, v } => interpolate(ts, v, t),
        }
    }

    /// Parse an expression of `t`.
    pub fn expression(text: &str) -> std::result::Result<TimeFunction, String> {
        let expr = exmex::parse::<f64>(text).map_err(|e| format!("cannot parse expression '{text}': {e}"))?;
        let names = expr.var_names().to_vec();
        if names.iter().any(|n| n != "t") {
            let others: Vec<&String> = names.iter().filter(|n| *n != "t").collect();
            return Err(format!("expression '{text}' uses unknown name(s) {others:?}; the only variable is t"));
        }
        let uses_t = !names.is_empty();
        let f = TimeFunction::Expression { text: text.to_string(), expr: Box::new(expr), uses_t };
        // Evaluate once so obviously broken expressions fail at load time.
        if !f.eval(0.0).is_finite() && !f.eval(1.0).is_finite() {
            return Err(format!("expression '{text}' is not finite at t = 0 and t = 1"));
        }
        Ok(f)
    }

    /// Parse the JSON forms listed in the module docs. `path` is the JSON path for
    /// messages; `base` the directory that relative CSV paths are taken from.
    pub fn from_json(v: &Value, path: &str, base: &Path) -> Result<TimeFunction> {
        match v {
            Value::Number(n) => {
                let c = n.as_f64().ok_or_else(|| Error::invalid(path, "not a finite number"))?;
                Ok(TimeFunction::Constant(c))
            }
            Value::String(s) => TimeFunction::expression(s).map_err(|m| Error::invalid(path, m)),
            Value::Object(map) => {
                if let Some(pw) = map.get("piecewise") {
                    if map.len() != 1 {
                        return Err(Error::invalid(path, "a piecewise function has only the key 'piecewise'"));
                    }
                    let arr = pw
                        .as_array()
                        .ok_or_else(|| Error::invalid(format!("{path}.piecewise"), "expected an array of pieces"))?;
                    if arr.is_empty() {
                        return Err(Error::invalid(format!("{path}.piecewise"), "needs at least one piece"));
                    }
                    let mut pieces = Vec::new();
                    let mut last = None;
                    let mut prev = f64::NEG_INFINITY;
                    for (i, p) in arr.iter().enumerate() {
                        let pp = format!("{path}.piecewise[{i}]");
                        let obj = p
                            .as_object()
                            .ok_or_else(|| Error::invalid(&pp, "expected {\"until\": t, \"value\": ...}"))?;
                        for k in obj.keys() {
                            if k != "until" && k != "value" {
                                return Err(Error::invalid(
                                    format!("{pp}.{k}"),
                                    "unknown key (expected 'until', 'value')",
                                ));
                            }
                        }
                        let value = obj.get("value").ok_or_else(|| Error::invalid(&pp, "missing 'value'"))?;
                        let f = TimeFunction::from_json(value, &format!("{pp}.value"), base)?;
                        let is_last = i + 1 == arr.len();
                        match (obj.get("until"), is_last) {
                            (Some(_), true) => {
                                return Err(Error::invalid(
                                    format!("{pp}.until"),
                                    "the last piece has no 'until': it applies from the previous 'until' on",
                                ))
                            }
                            (Some(u), false) => {
                                let u = u
                                    .as_f64()
                                    .ok_or_else(|| Error::invalid(format!("{pp}.until"), "expected a number"))?;
                                if u <= prev {
                                    return Err(Error::invalid(
                                        format!("{pp}.until"),
                                        "must increase from piece to piece",
                                    ));
                                }
                                prev = u;
                                pieces.push((u, f));
                            }
                            (None, true) => last = Some(f),
                            (None, false) => {
                                return Err(Error::invalid(
                                    format!("{pp}.until"),
                                    "only the last piece may omit 'until'",
                                ))
                            }
                        }
                    }
                    Ok(TimeFunction::Piecewise { pieces, last: Box::new(last.expect("set for the last piece")) })
                } else if let Some(tab) = map.get("table") {
                    for k in map.keys() {
                        if !["table", "column", "time_column"].contains(&k.as_str()) {
                            return Err(Error::invalid(
                                format!("{path}.{k}"),
                                "unknown key (expected 'table', 'column', 'time_column')",
                            ));
                        }
                    }
                    let (t, v) = match tab {
                        Value::Array(rows) => inline_table(rows, &format!("{path}.table"))?,
                        Value::String(file) => {
                            let column = map.get("column").and_then(|c| c.as_str()).ok_or_else(|| {
                                Error::invalid(format!("{path}.column"), "a CSV table needs 'column'")
                            })?;
                            let tcol = map.get("time_column").and_then(|c| c.as_str());
                            csv_table(&base.join(file), column, tcol, path)?
                        }
                        _ => {
                            return Err(Error::invalid(
                                format!("{path}.table"),
                                "expected rows [[t, v], ...] or a CSV file name",
                            ))
                        }
                    };
                    Ok(TimeFunction::Table { t, v })
                } else {
                    Err(Error::invalid(
                        path,
                        "expected a number, an expression string, {\"piecewise\": ...} or {\"table\": ...}",
                    ))
                }
            }
            _ => Err(Error::invalid(
                path,
                "expected a number, an expression string, {\"piecewise\": ...} or {\"table\": ...}",
            )),
        }
    }
}

/// Linear interpolation in a table sorted by time; constant outside it.
fn interpolate(ts: &[f64], vs: &[f64], t: f64) -> f64 {
    if t <= ts[0] {
        return vs[0];
    }
    let n = ts.len();
    if t >= ts[n - 1] {
        return vs[n - 1];
    }
    let i = ts.partition_point(|&x| x <= t); // ts[i-1] <= t < ts[i]
    let (t0, t1, v0, v1) = (ts[i - 1], ts[i], vs[i - 1], vs[i]);
    v0 + (v1 - v0) * (t - t0) / (t1 - t0)
}

fn check_table(t: &[f64], v: &[f64], path: &str) -> Result<()> {
    if t.is_empty() {
        return Err(Error::invalid(path, "table is empty"));
    }
    for i in 0..t.len() {
        if !t[i].is_finite() || !v[i].is_finite() {
            return Err(Error::invalid(path, format!("row {i} is not finite")));
        }
        if i > 0 && t[i] <= t[i - 1] {
            return Err(Error::invalid(path, format!("times must increase strictly (row {i})")));
        }
    }
    Ok(())
}

fn inline_table(rows: &[Value], path: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut t = Vec::new();
    let mut v = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let pair = r
            .as_array()
            .filter(|a| a.len() == 2)
            .ok_or_else(|| Error::invalid(format!("{path}[{i}]"), "expected a pair [t, value]"))?;
        let get = |x: &Value| x.as_f64().ok_or_else(|| Error::invalid(format!("{path}[{i}]"), "expected numbers"));
        t.push(get(&pair[0])?);
        v.push(get(&pair[1])?);
    }
    check_table(&t, &v, path)?;
    Ok((t, v))
}

fn csv_table(file: &Path, column: &str, tcol: Option<&str>, path: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let shown = file.display().to_string();
    let mut rdr = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(file)
        .map_err(|e| Error::invalid(format!("{path}.table"), format!("cannot read '{shown}': {e}")))?;
    let headers =
        rdr.headers().map_err(|e| Error::invalid(format!("{path}.table"), format!("'{shown}': {e}")))?.clone();
    let find = |name: &str| headers.iter().position(|h| h == name);
    let missing = |n: &str| {
        let hint = crate::error::suggestion(n, headers.iter());
        format!("'{shown}' has no column '{n}'{hint} (columns: {})", headers.iter().collect::<Vec<_>>().join(", "))
    };
    let ti = match tcol {
        Some(n) => find(n).ok_or_else(|| Error::invalid(format!("{path}.time_column"), missing(n)))?,
        None => 0,
    };
    let vi = find(column).ok_or_else(|| Error::invalid(format!("{path}.column"), missing(column)))?;
    let (mut t, mut v) = (Vec::new(), Vec::new());
    for (line, rec) in rdr.records().enumerate() {
        let rec = rec.map_err(|e| Error::invalid(format!("{path}.table"), format!("'{shown}': {e}")))?;
        let num = |i: usize| -> Result<f64> {
            rec.get(i).and_then(|s| s.parse::<f64>().ok()).ok_or_else(|| {
                Error::invalid(format!("{path}.table"), format!("'{shown}' line {}: not a number", line + 2))
            })
        };
        t.push(num(ti)?);
        v.push(num(vi)?);
    }
    check_table(&t, &v, &format!("{path}.table ('{shown}')"))?;
    Ok((t, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_piecewise_and_tables() {
        let base = Path::new(".");
        let f = TimeFunction::from_json(&serde_json::json!("0.336 + 0.144*sin(100*t)"), "x", base).unwrap();
        assert!((f.eval(0.01) - (0.336 + 0.144 * (1.0f64).sin())).abs() < 1e-15);
        let pw = serde_json::json!({"piecewise": [{"until": 4, "value": "min(0.52, 0.3*t)"}, {"value": 7}]});
        let f = TimeFunction::from_json(&pw, "x", base).unwrap();
        assert_eq!(f.eval(1.0), 0.3);
        assert_eq!(f.eval(3.0), 0.52);
        assert_eq!(f.eval(4.0), 7.0);
        let tab = serde_json::json!({"table": [[0, 0], [1, 2], [3, 2]]});
        let f = TimeFunction::from_json(&tab, "x", base).unwrap();
        assert_eq!(f.eval(-1.0), 0.0);
        assert_eq!(f.eval(0.5), 1.0);
        assert_eq!(f.eval(2.0), 2.0);
        assert_eq!(f.eval(9.0), 2.0);
    }

    #[test]
    fn bad_functions_name_the_path() {
        let base = Path::new(".");
        let e = TimeFunction::from_json(&serde_json::json!("sin(x)"), "components.f.force", base).unwrap_err();
        assert!(e.to_string().contains("components.f.force"), "{e}");
        let e = TimeFunction::from_json(&serde_json::json!({"table": [[1, 0], [0, 1]]}), "p", base).unwrap_err();
        assert!(e.to_string().contains("increase"), "{e}");
        let e = TimeFunction::from_json(&serde_json::json!({"piecewise": [{"value": 1}, {"value": 2}]}), "p", base)
            .unwrap_err();
        assert!(e.to_string().contains("p.piecewise[0].until"), "{e}");
    }
}
