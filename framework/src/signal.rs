//! Time-varying inputs u(t): constants, expressions of `t`, piecewise definitions and
//! tables with linear interpolation (inline or from CSV).
//!
//! JSON forms (anywhere a component takes a time function):
//! - `0.5` — a constant;
//! - `"0.336 + 0.144*sin(100*t)"` — an expression of `t` ([`expr`]: + - * / ^, numbers such
//!   as `1e-3`, functions sin, cos, tan, exp, ln, sqrt, abs, signum, min(a, b), max(a, b),
//!   atan2(y, x), ..., constants pi/PI, e/E);
//! - `{"piecewise": [{"until": 4, "value": "min(0.52, 0.3*t)"}, {"value": 0.3}]}` — the first
//!   piece whose `until` is greater than t applies; the last piece has no `until`;
//! - `{"table": [[0, 0], [1, 2], [3, 2]]}` — (t, value) rows, linear interpolation, held
//!   constant outside the table;
//! - `{"table": "inputs.csv", "column": "fu", "time_column": "time"}` — the same from a CSV
//!   file with a header row (path relative to the JSON file; `time_column` defaults to
//!   the first column);
//! - `{"signal": "arm.q[1]"}` — a signal of the system: a system input (`"inputs"`) or a
//!   signal of a component (`component.signal[i]`, `component.state[i]`); and inside an
//!   expression, signal names stand for their values: `"-100*arm.q[1] - 2*arm.v[1]"`.
//!   The engine writes a signal's value into the [`Wire`] the function reads before each
//!   stage (framework/src/stepper/bus.rs says when each kind of signal is read).

pub mod expr;

use crate::error::{Error, Result};
use expr::Expr;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where a time function reads one signal of the system: a value the engine writes before
/// the components that read it are evaluated (relaxed atomics: written between phases,
/// read during them, so the phases' joins order them).
#[derive(Clone, Debug, Default)]
pub struct Wire(Arc<AtomicU64>);

impl Wire {
    /// The value last written (0 before the first).
    #[inline]
    pub fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
    /// Write the value.
    #[inline]
    pub fn set(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed)
    }
}

/// A signal read by a time function: its name as written and the JSON path that reads it.
#[derive(Clone, Debug)]
pub struct WireUse {
    pub name: String,
    pub path: String,
    pub wire: Wire,
}

/// The signals the time functions of a system read, collected while it loads (on any
/// thread; [`Wires::into_sorted`] gives them in JSON-path order, the same for any thread count).
#[derive(Debug, Default)]
pub struct Wires(Mutex<Vec<WireUse>>);

impl Wires {
    /// A new wire for signal `name`, read at JSON path `path`.
    pub fn add(&self, name: &str, path: &str) -> Wire {
        let wire = Wire::default();
        let u = WireUse { name: name.to_string(), path: path.to_string(), wire: wire.clone() };
        match self.0.lock() {
            Ok(mut l) => l.push(u),
            Err(poisoned) => poisoned.into_inner().push(u),
        }
        wire
    }
    /// Every use, sorted by JSON path (then by name).
    pub fn into_sorted(self) -> Vec<WireUse> {
        let mut v = match self.0.into_inner() {
            Ok(v) => v,
            Err(poisoned) => poisoned.into_inner(),
        };
        v.sort_by(|a, b| (&a.path, &a.name).cmp(&(&b.path, &b.name)));
        v
    }
}

/// The (sub-)step whose stages a component's time functions are read in, as the stepper
/// tells it ([`Admittance::set_window`](crate::component::Admittance::set_window)): its
/// ends, f64 bits in atomics shared by the component's copies (a batch's too); NaN until
/// told (Euler, or no breaks) and after a span. Not a state: told again before every span.
#[derive(Clone, Debug)]
pub struct Window(Arc<[AtomicU64; 2]>);

impl Default for Window {
    fn default() -> Self {
        let nan = f64::NAN.to_bits();
        Window(Arc::new([AtomicU64::new(nan), AtomicU64::new(nan)]))
    }
}

impl Window {
    /// The stages to come belong to the sub-step [`t0`, `t1`] (NaN: to none; the
    /// functions' own values).
    pub fn set(&self, t0: f64, t1: f64) {
        self.0[0].store(t0.to_bits(), Ordering::Relaxed);
        self.0[1].store(t1.to_bits(), Ordering::Relaxed);
    }
    /// The sub-step's start (NaN when none).
    pub fn start(&self) -> f64 {
        f64::from_bits(self.0[0].load(Ordering::Relaxed))
    }
    /// The sub-step's end (NaN when none).
    pub fn end(&self) -> f64 {
        f64::from_bits(self.0[1].load(Ordering::Relaxed))
    }
    /// `f` at `t`, from the piece that holds inside the window
    /// ([`TimeFunction::eval_on`]); [`TimeFunction::eval`] before one is told.
    #[inline]
    pub fn eval(&self, f: &TimeFunction, t: f64) -> f64 {
        let mid = 0.5 * (self.start() + f64::from_bits(self.0[1].load(Ordering::Relaxed)));
        if mid.is_nan() {
            f.eval(t)
        } else {
            f.eval_on(t, mid)
        }
    }
}

/// The first [break](TimeFunction::next_break) of any of `fs` in (`t0`, `t1`): a
/// component's `next_break` (with t0, t1 = ∓∞ its `has_breaks`).
pub fn next_break_of<'a>(fs: impl IntoIterator<Item = &'a TimeFunction>, t0: f64, t1: f64) -> Option<f64> {
    fs.into_iter().filter_map(|f| f.next_break(t0, t1)).reduce(f64::min)
}

/// A scalar function of time.
#[derive(Clone, Debug)]
pub enum TimeFunction {
    Constant(f64),
    /// An expression of `t` and, when `wires` is not empty, of signals (`wires[i]` holds
    /// the value of the expression's i-th variable).
    Expression {
        text: String,
        expr: Box<Expr>,
        wires: Vec<Wire>,
    },
    Piecewise {
        pieces: Vec<(f64, TimeFunction)>,
        last: Box<TimeFunction>,
    },
    Table {
        t: Vec<f64>,
        v: Vec<f64>,
    },
    /// The value of a signal of the system.
    Signal {
        name: String,
        wire: Wire,
    },
}

impl TimeFunction {
    /// Value at time `t`.
    pub fn eval(&self, t: f64) -> f64 {
        match self {
            TimeFunction::Constant(c) => *c,
            TimeFunction::Expression { expr, wires, .. } if wires.is_empty() => expr.eval(t),
            TimeFunction::Expression { expr, wires, .. } => expr.eval_with(t, |i| wires[i].get()),
            TimeFunction::Signal { wire, .. } => wire.get(),
            TimeFunction::Piecewise { pieces, last } => piece_at(pieces, last, t).eval(t),
            TimeFunction::Table { t: ts, v } => interpolate(ts, v, t),
        }
    }

    /// The first time in the open interval (`lo`, `hi`) at which the function may be not
    /// smooth: a table row's time or a piecewise `until` (kinks and jumps of the forms this
    /// module defines; an expression's own kinks, as of `abs`, are not known). RK4 keeps its
    /// order only over smooth inputs: the stepper ends a sub-step there.
    pub fn next_break(&self, lo: f64, hi: f64) -> Option<f64> {
        match self {
            TimeFunction::Table { t, .. } => t.get(t.partition_point(|&x| x <= lo)).copied().filter(|&x| x < hi),
            TimeFunction::Piecewise { pieces, last } => {
                let mut from = f64::NEG_INFINITY;
                let all = pieces.iter().map(|(u, f)| (*u, f)).chain(std::iter::once((f64::INFINITY, &**last)));
                for (until, f) in all {
                    if until > lo {
                        // The piece holds on [from, until): its own breaks there, then its end.
                        if let Some(x) = f.next_break(lo.max(from), hi.min(until)) {
                            return Some(x);
                        }
                        return Some(until).filter(|&u| u < hi);
                    }
                    from = until;
                }
                None
            }
            _ => None,
        }
    }

    /// The value at `t` of the smooth piece that holds at `mid`, continued past that piece's
    /// ends (a table's segment as its straight line). A sub-step that ends at a
    /// [break](Self::next_break) reads its input so: its last RK4 stages look past its end
    /// (the stage size τ), and at the break itself the side it came from holds. Bit for bit
    /// [`eval`](Self::eval) where `t` and `mid` lie in the same piece (inside a table's
    /// segment).
    pub fn eval_on(&self, t: f64, mid: f64) -> f64 {
        match self {
            TimeFunction::Table { t: ts, v } => on_segment(ts, v, mid, t),
            TimeFunction::Piecewise { pieces, last } => piece_at(pieces, last, mid).eval_on(t, mid),
            _ => self.eval(t),
        }
    }

    /// Parse an expression of `t`.
    pub fn expression(text: &str) -> std::result::Result<TimeFunction, String> {
        let expr = Expr::parse(text).map_err(|e| format!("cannot parse expression '{}': {e}", shorten(text)))?;
        let f = TimeFunction::Expression { text: text.to_string(), expr: Box::new(expr), wires: Vec::new() };
        // Evaluate once so obviously broken expressions fail at load time.
        if !f.eval(0.0).is_finite() && !f.eval(1.0).is_finite() {
            return Err(format!("expression '{}' is not finite at t = 0 and t = 1", shorten(text)));
        }
        Ok(f)
    }

    /// An expression of `t` and signals; each signal it names gets a wire from `wires`
    /// (read at `path`). Without signal names it is [`expression`](Self::expression).
    pub fn expression_with_signals(text: &str, path: &str, wires: &Wires) -> std::result::Result<TimeFunction, String> {
        let expr =
            Expr::parse_with_signals(text).map_err(|e| format!("cannot parse expression '{}': {e}", shorten(text)))?;
        if expr.variables().is_empty() {
            return TimeFunction::expression(text);
        }
        let wires = expr.variables().iter().map(|n| wires.add(n, path)).collect();
        Ok(TimeFunction::Expression { text: text.to_string(), expr: Box::new(expr), wires })
    }

    /// A table of (t, value) rows with linear interpolation, held constant outside (times
    /// strictly increasing, values finite; errors name `path`).
    pub fn table(t: Vec<f64>, v: Vec<f64>, path: &str) -> Result<TimeFunction> {
        if t.len() != v.len() {
            return Err(Error::invalid(path, format!("{} times but {} values", t.len(), v.len())));
        }
        check_table(&t, &v, path)?;
        Ok(TimeFunction::Table { t, v })
    }

    /// Whether the function reads a signal of the system.
    pub fn reads_signals(&self) -> bool {
        match self {
            TimeFunction::Signal { .. } => true,
            TimeFunction::Expression { wires, .. } => !wires.is_empty(),
            TimeFunction::Piecewise { pieces, last } => {
                last.reads_signals() || pieces.iter().any(|(_, f)| f.reads_signals())
            }
            _ => false,
        }
    }

    /// Parse the JSON forms listed in the module docs, signals excluded. `path` is the JSON
    /// path for messages; `base` the directory that relative CSV paths are taken from.
    pub fn from_json(v: &Value, path: &str, base: &Path) -> Result<TimeFunction> {
        Self::from_json_in(v, path, base, None)
    }

    /// [`from_json`](Self::from_json), with signals (`{"signal": ...}`, names in
    /// expressions) read through wires from `wires` when given.
    pub fn from_json_in(v: &Value, path: &str, base: &Path, wires: Option<&Wires>) -> Result<TimeFunction> {
        match v {
            Value::Number(n) => {
                let c = n.as_f64().ok_or_else(|| Error::invalid(path, "not a finite number"))?;
                Ok(TimeFunction::Constant(c))
            }
            Value::String(s) => match wires {
                Some(w) => TimeFunction::expression_with_signals(s, path, w).map_err(|m| Error::invalid(path, m)),
                None => TimeFunction::expression(s).map_err(|m| Error::invalid(path, m)),
            },
            Value::Object(map) => {
                if let Some(sig) = map.get("signal") {
                    if map.len() != 1 {
                        return Err(Error::invalid(path, "a signal input has only the key 'signal'"));
                    }
                    let name = sig
                        .as_str()
                        .filter(|s| !s.is_empty() && s.len() <= 1024)
                        .ok_or_else(|| Error::invalid(format!("{path}.signal"), "expected a signal name string"))?;
                    let wires = wires.ok_or_else(|| {
                        Error::invalid(
                            format!("{path}.signal"),
                            "signals cannot be read here (only in a system's components)",
                        )
                    })?;
                    return Ok(TimeFunction::Signal { name: name.to_string(), wire: wires.add(name, path) });
                }
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
                        let f = TimeFunction::from_json_in(value, &format!("{pp}.value"), base, wires)?;
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
                    Err(Error::invalid(path, EXPECTED))
                }
            }
            _ => Err(Error::invalid(path, EXPECTED)),
        }
    }
}

/// What a time function may be, for messages.
const EXPECTED: &str =
    "expected a number, an expression string, {\"piecewise\": ...}, {\"table\": ...} or {\"signal\": ...}";

/// The text of an expression for a message: at most 80 characters.
fn shorten(text: &str) -> String {
    if text.chars().count() <= 80 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(80).collect::<String>())
    }
}

/// Linear interpolation in a table sorted by time; constant outside it.
fn interpolate(ts: &[f64], vs: &[f64], t: f64) -> f64 {
    on_segment(ts, vs, t, t)
}

/// The table's value at `t` on the segment (its straight line) that holds at `at`; held
/// constant before and after the table. [`interpolate`] is `at = t`.
fn on_segment(ts: &[f64], vs: &[f64], at: f64, t: f64) -> f64 {
    if at <= ts[0] {
        return vs[0];
    }
    let n = ts.len();
    if at >= ts[n - 1] {
        return vs[n - 1];
    }
    let i = ts.partition_point(|&x| x <= at); // ts[i-1] <= at < ts[i]
    let (t0, t1, v0, v1) = (ts[i - 1], ts[i], vs[i - 1], vs[i]);
    v0 + (v1 - v0) * (t - t0) / (t1 - t0)
}

/// The piece of a piecewise function that holds at `t`: the first whose `until` is greater.
fn piece_at<'a>(pieces: &'a [(f64, TimeFunction)], last: &'a TimeFunction, t: f64) -> &'a TimeFunction {
    pieces.iter().find(|(until, _)| t < *until).map_or(last, |(_, f)| f)
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

/// Largest table file read, in bytes (64 MiB, some two million rows).
pub const MAX_TABLE_BYTES: u64 = 64 << 20;

/// Open `file` for reading if it is a regular file of at most `max` bytes (not a device,
/// FIFO or directory: `/dev/zero` would never end). The error is a sentence for a message.
pub fn open_regular(file: &Path, max: u64) -> std::result::Result<std::fs::File, String> {
    let f = std::fs::File::open(file).map_err(|e| format!("cannot read '{}': {e}", file.display()))?;
    let meta = f.metadata().map_err(|e| format!("cannot read '{}': {e}", file.display()))?;
    if !meta.is_file() {
        return Err(format!("'{}' is not a regular file", file.display()));
    }
    if meta.len() > max {
        return Err(format!("'{}' is {} bytes; at most {max} are read", file.display(), meta.len()));
    }
    Ok(f)
}

fn csv_table(file: &Path, column: &str, tcol: Option<&str>, path: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let shown = file.display().to_string();
    let f = open_regular(file, MAX_TABLE_BYTES).map_err(|m| Error::invalid(format!("{path}.table"), m))?;
    // `take`: a file that grows while it is read still stops at the cap.
    let mut rdr = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(std::io::Read::take(f, MAX_TABLE_BYTES));
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

    /// Breaks are a table's rows and a piecewise `until` (with its pieces' own breaks inside
    /// them), strictly inside the interval; `eval_on` continues the piece that holds at its
    /// midpoint and is `eval` bit for bit inside that piece.
    #[test]
    fn breaks_and_pieces() {
        let base = Path::new(".");
        let tab = TimeFunction::from_json(&serde_json::json!({"table": [[0, 0], [1, 2], [3, 2]]}), "x", base).unwrap();
        assert_eq!(tab.next_break(f64::NEG_INFINITY, 0.5), Some(0.0));
        assert_eq!(tab.next_break(0.0, 5.0), Some(1.0));
        assert_eq!(tab.next_break(0.0, 1.0), None, "open interval");
        assert_eq!(tab.next_break(1.0, 3.5), Some(3.0));
        assert_eq!(tab.next_break(3.0, 9.0), None);
        // The first segment continued past its end (2 t), the last held (2), before the table 0.
        assert_eq!(tab.eval_on(1.5, 0.9), 3.0);
        assert_eq!(tab.eval_on(1.5, 1.1), 2.0);
        assert_eq!(tab.eval_on(-1.0, 0.5), -2.0);
        assert_eq!(tab.eval_on(0.5, -0.1), 0.0);
        for t in [0.1, 0.37, 0.999] {
            assert_eq!(tab.eval_on(t, 0.5).to_bits(), tab.eval(t).to_bits());
        }
        let pw = serde_json::json!({"piecewise": [
            {"until": 1, "value": "t"},
            {"until": 4, "value": {"table": [[2, 0], [3, 1]]}},
            {"value": 7}]});
        let f = TimeFunction::from_json(&pw, "x", base).unwrap();
        assert_eq!(f.next_break(0.0, 0.9), None);
        assert_eq!(f.next_break(0.0, 9.0), Some(1.0));
        assert_eq!(f.next_break(1.0, 9.0), Some(2.0), "the table's row inside its piece");
        assert_eq!(f.next_break(2.5, 9.0), Some(3.0));
        assert_eq!(f.next_break(3.0, 9.0), Some(4.0));
        assert_eq!(f.next_break(4.0, 9.0), None);
        // At the jump t = 4: the piece of the window's side.
        assert_eq!(f.eval(4.0), 7.0);
        assert_eq!(f.eval_on(4.0, 3.9), 1.0);
        assert_eq!(f.eval_on(1.5, 0.5), 1.5, "the first piece continued");
        let e = TimeFunction::from_json(&serde_json::json!("abs(t - 1)"), "x", base).unwrap();
        assert_eq!(e.next_break(0.0, 2.0), None, "an expression's kinks are not known");
        assert_eq!(e.eval_on(0.5, 1.5), 0.5);
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
