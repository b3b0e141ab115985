//! Expressions of time `t`: a small precedence-climbing parser compiled to a postfix
//! program, evaluated with a fixed stack (no allocation per evaluation).
//!
//! Grammar (usual precedence, `^` binds tighter than unary minus and is right-associative,
//! so `-2^2 = -4` and `2^3^2 = 2^9`):
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := atom ('^' unary)?
//! atom    := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
//! number  := digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]   (also '.5')
//! ```
//!
//! Names: the variable `t`; the constants `pi`/`PI`, `e`/`E`, `tau`; functions of one
//! argument (sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, ln, log, log2, log10,
//! sqrt, cbrt, abs, signum, sign, floor, ceil, round, trunc, fract) and of two (min, max,
//! atan2, pow, hypot).
//!
//! Parsing takes time linear in the length: every character is read once and the nesting
//! depth is bounded by [`MAX_DEPTH`] (deeper input is an error, not a stack overflow), the
//! text by [`MAX_LEN`] bytes. Errors give the column (1-based, in characters) and what was
//! expected there.

/// Longest expression accepted, in bytes.
pub const MAX_LEN: usize = 10_000;
/// Deepest nesting of parentheses, function calls, unary signs and powers accepted.
pub const MAX_DEPTH: usize = 64;
/// Evaluation stack size: a program needing more is rejected at parse time.
const STACK: usize = 256;

#[derive(Clone, Copy, Debug)]
enum Op {
    Num(f64),
    T,
    Neg,
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    F1(fn(f64) -> f64),
    F2(fn(f64, f64) -> f64),
    /// The value of variable i (a signal of the system, [`Expr::variables`]).
    Var(u16),
}

/// Most distinct signal names one expression reads.
pub const MAX_VARIABLES: usize = 64;

/// A parsed expression of `t` (and, parsed by [`Expr::parse_with_signals`], of signals).
#[derive(Clone, Debug)]
pub struct Expr {
    program: Vec<Op>,
    uses_t: bool,
    /// The signal names the expression reads, in order of first use (`Op::Var(i)` is the
    /// i-th); empty for an expression of `t` only.
    variables: Vec<String>,
    /// The most values pending at once (at most [`STACK`]).
    stack: usize,
}

/// The evaluation stack of the usual expression: zeroing all [`STACK`] values cost more than
/// evaluating `0.5*sin(2*PI*t)` (multibody-N's joints evaluate it every stage).
const SMALL_STACK: usize = 16;

/// A parse error: where (byte offset into the text) and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// Column, 1-based, counted in characters.
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at column {}: {}", self.column, self.message)
    }
}

fn func1(name: &str) -> Option<fn(f64) -> f64> {
    Some(match name {
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "asin" => f64::asin,
        "acos" => f64::acos,
        "atan" => f64::atan,
        "sinh" => f64::sinh,
        "cosh" => f64::cosh,
        "tanh" => f64::tanh,
        "exp" => f64::exp,
        "ln" | "log" => f64::ln,
        "log2" => f64::log2,
        "log10" => f64::log10,
        "sqrt" => f64::sqrt,
        "cbrt" => f64::cbrt,
        "abs" => f64::abs,
        "signum" | "sign" => |x: f64| if x == 0.0 || x.is_nan() { x } else { x.signum() },
        "floor" => f64::floor,
        "ceil" => f64::ceil,
        "round" => f64::round,
        "trunc" => f64::trunc,
        "fract" => f64::fract,
        _ => return None,
    })
}

fn func2(name: &str) -> Option<fn(f64, f64) -> f64> {
    Some(match name {
        "min" => f64::min,
        "max" => f64::max,
        "atan2" => f64::atan2,
        "pow" => f64::powf,
        "hypot" => f64::hypot,
        _ => return None,
    })
}

fn constant(name: &str) -> Option<f64> {
    match name {
        "pi" | "PI" | "Pi" => Some(std::f64::consts::PI),
        "e" | "E" => Some(std::f64::consts::E),
        "tau" | "TAU" => Some(std::f64::consts::TAU),
        _ => None,
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    out: Vec<Op>,
    depth: usize,
    stack: usize,
    max_stack: usize,
    uses_t: bool,
    /// Whether names other than t, the constants and functions are signals.
    signals: bool,
    variables: Vec<String>,
}

type PResult<T> = Result<T, ParseError>;

impl<'a> Parser<'a> {
    fn error_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        let column = self.text[..pos.min(self.text.len())].chars().count() + 1;
        ParseError { column, message: message.into() }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// What is at the current position, for messages.
    fn found(&mut self) -> String {
        match self.peek() {
            None => "the end".into(),
            Some(_) => {
                let c = self.text[self.pos..].chars().next().unwrap_or(' ');
                format!("'{c}'")
            }
        }
    }

    fn emit(&mut self, op: Op) -> PResult<()> {
        let (pops, pushes) = match op {
            Op::Num(_) | Op::T | Op::Var(_) => (0, 1),
            Op::Neg | Op::F1(_) => (1, 1),
            _ => (2, 1),
        };
        self.stack = self.stack - pops + pushes;
        if self.stack > STACK {
            return Err(self.error_at(self.pos, format!("expression too complex (more than {STACK} pending values)")));
        }
        self.max_stack = self.max_stack.max(self.stack);
        self.out.push(op);
        Ok(())
    }

    /// Consume the ')' that closes `opened` (the '(' at `open`), or an error saying what was
    /// `expected` there and where it was opened.
    fn close(&mut self, open: usize, expected: &str, opened: &str) -> PResult<()> {
        if self.peek() != Some(b')') {
            let found = self.found();
            let column = self.error_at(open, "").column;
            return Err(self.error_at(
                self.pos,
                format!("expected {expected} to close {opened} at column {column}, found {found}"),
            ));
        }
        self.pos += 1;
        Ok(())
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(self.pos, format!("nested more than {MAX_DEPTH} levels deep")));
        }
        Ok(())
    }

    fn expr(&mut self) -> PResult<()> {
        self.term()?;
        loop {
            let op = match self.peek() {
                Some(b'+') => Op::Add,
                Some(b'-') => Op::Sub,
                _ => return Ok(()),
            };
            self.pos += 1;
            self.term()?;
            self.emit(op)?;
        }
    }

    fn term(&mut self) -> PResult<()> {
        self.unary()?;
        loop {
            let op = match self.peek() {
                Some(b'*') if self.bytes.get(self.pos + 1) == Some(&b'*') => {
                    return Err(self.error_at(self.pos, "'**' is not an operator; write '^' for powers"))
                }
                Some(b'*') => Op::Mul,
                Some(b'/') => Op::Div,
                _ => return Ok(()),
            };
            self.pos += 1;
            self.unary()?;
            self.emit(op)?;
        }
    }

    fn unary(&mut self) -> PResult<()> {
        match self.peek() {
            Some(c @ (b'-' | b'+')) => {
                self.pos += 1;
                self.enter()?;
                self.unary()?;
                self.depth -= 1;
                if c == b'-' {
                    self.emit(Op::Neg)?;
                }
                Ok(())
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> PResult<()> {
        self.atom()?;
        if self.peek() == Some(b'^') {
            self.pos += 1;
            self.enter()?;
            self.unary()?;
            self.depth -= 1;
            self.emit(Op::Pow)?;
        }
        Ok(())
    }

    fn atom(&mut self) -> PResult<()> {
        let start = self.pos;
        match self.peek() {
            Some(b'(') => {
                let open = self.pos;
                self.pos += 1;
                self.enter()?;
                self.expr()?;
                self.depth -= 1;
                self.close(open, "an operator or ')'", "the '('")
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.name(),
            _ => {
                let found = self.found();
                Err(self
                    .error_at(start.max(self.pos), format!("expected a number, a name, '(' or a sign, found {found}")))
            }
        }
    }

    fn digits(&mut self) -> usize {
        let s = self.pos;
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        self.pos - s
    }

    fn number(&mut self) -> PResult<()> {
        let start = self.pos;
        let mut n = self.digits();
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            n += self.digits();
        }
        if n == 0 {
            return Err(self.error_at(start, "expected digits in the number"));
        }
        if matches!(self.bytes.get(self.pos), Some(b'e' | b'E')) {
            let mark = self.pos;
            self.pos += 1;
            if matches!(self.bytes.get(self.pos), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error_at(mark, "expected the digits of an exponent after 'e'"));
            }
        }
        let text = &self.text[start..self.pos];
        let v: f64 = text.parse().map_err(|_| self.error_at(start, format!("'{text}' is not a number")))?;
        if !v.is_finite() {
            return Err(self.error_at(start, format!("the number '{text}' is out of range")));
        }
        self.emit(Op::Num(v))
    }

    fn name(&mut self) -> PResult<()> {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && (self.bytes[self.pos].is_ascii_alphanumeric() || self.bytes[self.pos] == b'_')
        {
            self.pos += 1;
        }
        let (name, end) = (&self.text[start..self.pos], self.pos);
        if self.peek() == Some(b'(') {
            let (f1, f2) = (func1(name), func2(name));
            if f1.is_none() && f2.is_none() {
                return Err(self.error_at(
                    start,
                    format!(
                        "unknown function '{name}' (known: sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, exp, ln, \
                         log, log2, log10, sqrt, cbrt, abs, signum, floor, ceil, round, trunc, fract, min, max, \
                         atan2, pow, hypot)"
                    ),
                ));
            }
            let open = self.pos;
            self.pos += 1;
            self.enter()?;
            self.expr()?;
            let mut args = 1;
            while self.peek() == Some(b',') {
                self.pos += 1;
                self.expr()?;
                args += 1;
            }
            self.depth -= 1;
            self.close(open, "an operator, ',' or ')'", &format!("the call of '{name}' opened"))?;
            match (f1, f2, args) {
                (Some(f), _, 1) => self.emit(Op::F1(f)),
                (_, Some(f), 2) => self.emit(Op::F2(f)),
                _ => {
                    let want = if f1.is_some() { 1 } else { 2 };
                    Err(self.error_at(start, format!("'{name}' takes {want} argument(s), got {args}")))
                }
            }
        } else if name == "t" {
            self.uses_t = true;
            self.emit(Op::T)
        } else if let Some(c) = constant(name) {
            self.emit(Op::Num(c))
        } else if func1(name).is_some() || func2(name).is_some() {
            Err(self.error_at(self.pos, format!("expected '(' after the function '{name}'")))
        } else if self.signals {
            // The name again from its end (peek skipped the blanks after it).
            self.pos = end;
            self.signal(start)
        } else {
            Err(self.error_at(start, format!("unknown name '{name}' (the variable is t; constants: pi, e, tau)")))
        }
    }
}

impl Parser<'_> {
    /// A signal name that began at `start` with the name already read: more `.name` parts
    /// and an optional `[index]` (`arm.q[1]`, `gear.v`, `u`), read as a variable.
    fn signal(&mut self, start: usize) -> PResult<()> {
        let b = self.bytes;
        let is_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        while b.get(self.pos) == Some(&b'.') && b.get(self.pos + 1).is_some_and(|&c| is_name(c)) {
            self.pos += 1;
            while self.pos < b.len() && is_name(b[self.pos]) {
                self.pos += 1;
            }
        }
        if b.get(self.pos) == Some(&b'[') {
            let open = self.pos;
            self.pos += 1;
            if self.digits() == 0 || b.get(self.pos) != Some(&b']') {
                return Err(self.error_at(open, "expected an index [i] after the signal name"));
            }
            self.pos += 1;
        }
        let name = &self.text[start..self.pos];
        let i = match self.variables.iter().position(|v| v == name) {
            Some(i) => i,
            None if self.variables.len() < MAX_VARIABLES => {
                self.variables.push(name.to_string());
                self.variables.len() - 1
            }
            None => return Err(self.error_at(start, format!("an expression reads at most {MAX_VARIABLES} signals"))),
        };
        self.emit(Op::Var(i as u16))
    }
}

impl Expr {
    /// Parse `text`. Errors name the column and what was expected.
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        Self::parse_as(text, false)
    }

    /// Parse `text` in which names other than `t`, the constants and the functions are
    /// signals of the system (`arm.q[1]`, `u`): [`variables`](Self::variables) lists them
    /// and [`eval_with`](Self::eval_with) takes their values.
    pub fn parse_with_signals(text: &str) -> Result<Expr, ParseError> {
        Self::parse_as(text, true)
    }

    fn parse_as(text: &str, signals: bool) -> Result<Expr, ParseError> {
        if text.len() > MAX_LEN {
            return Err(ParseError {
                column: 1,
                message: format!("the expression is {} bytes long; at most {MAX_LEN} are accepted", text.len()),
            });
        }
        let mut p = Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            out: Vec::new(),
            depth: 0,
            stack: 0,
            max_stack: 0,
            uses_t: false,
            signals,
            variables: Vec::new(),
        };
        if p.peek().is_none() {
            return Err(p.error_at(0, "the expression is empty"));
        }
        p.expr()?;
        if p.peek().is_some() {
            let found = p.found();
            let what = if p.bytes[p.pos] == b')' { "there is no '(' for this ')'" } else { "expected an operator" };
            return Err(p.error_at(p.pos, format!("{what}, found {found}")));
        }
        Ok(Expr { program: p.out, uses_t: p.uses_t, variables: p.variables, stack: p.max_stack })
    }

    /// The signal names read, in the order [`eval_with`](Self::eval_with) takes their values.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// Whether the expression reads `t`.
    pub fn uses_t(&self) -> bool {
        self.uses_t
    }

    /// Value at time `t` (NaN or ±∞ where the arithmetic gives them).
    pub fn eval(&self, t: f64) -> f64 {
        self.eval_with(t, |_| f64::NAN)
    }

    /// Value at time `t` with variable i worth `var(i)`.
    #[inline]
    pub fn eval_with(&self, t: f64, var: impl Fn(usize) -> f64) -> f64 {
        if self.stack <= SMALL_STACK {
            run::<SMALL_STACK>(&self.program, t, var)
        } else {
            run::<STACK>(&self.program, t, var)
        }
    }
}

/// Run `program` at time `t` on a stack of `N` values (at least the program's most pending).
fn run<const N: usize>(program: &[Op], t: f64, var: impl Fn(usize) -> f64) -> f64 {
    let mut stack = [0.0f64; N];
    let mut n = 0usize;
    for op in program {
        match *op {
            Op::Num(v) => {
                stack[n] = v;
                n += 1;
            }
            Op::T => {
                stack[n] = t;
                n += 1;
            }
            Op::Var(i) => {
                stack[n] = var(i as usize);
                n += 1;
            }
            Op::Neg => stack[n - 1] = -stack[n - 1],
            Op::F1(f) => stack[n - 1] = f(stack[n - 1]),
            op => {
                let (a, b) = (stack[n - 2], stack[n - 1]);
                n -= 1;
                stack[n - 1] = match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div => a / b,
                    Op::Pow => a.powf(b),
                    Op::F2(f) => f(a, b),
                    _ => f64::NAN,
                };
            }
        }
    }
    if n == 1 {
        stack[0]
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str, t: f64) -> f64 {
        Expr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")).eval(t)
    }

    #[test]
    fn arithmetic_precedence_and_functions() {
        assert_eq!(v("1 + 2*3", 0.0), 7.0);
        assert_eq!(v("(1 + 2)*3", 0.0), 9.0);
        assert_eq!(v("-2^2", 0.0), -4.0);
        assert_eq!(v("2^3^2", 0.0), 512.0);
        assert_eq!(v("2^-1", 0.0), 0.5);
        assert_eq!(v("8/4/2", 0.0), 1.0);
        assert_eq!(v("1 - 2 - 3", 0.0), -4.0);
        assert_eq!(v("1e-3*sin(t)", 0.5), 1e-3 * 0.5f64.sin());
        assert_eq!(v("2.5E+2", 0.0), 250.0);
        assert_eq!(v(".5", 0.0), 0.5);
        assert_eq!(v("pi", 0.0), std::f64::consts::PI);
        assert_eq!(v("2*PI*t", 1.0), 2.0 * std::f64::consts::PI);
        assert_eq!(v("e", 0.0), std::f64::consts::E);
        assert_eq!(v("E^2", 0.0), std::f64::consts::E.powf(2.0));
        assert_eq!(v("min(0.52, 0.3*t)", 3.0), 0.52);
        assert_eq!(v("max(1, atan2(1, 1))", 0.0), 1.0);
        assert_eq!(v("atan2(1, 1)", 0.0), std::f64::consts::FRAC_PI_4);
        assert_eq!(v("--t", 2.0), 2.0);
        assert_eq!(v("abs(-t) + signum(-3)", 2.0), 1.0);
        assert!(!Expr::parse("3").unwrap().uses_t());
        assert!(Expr::parse("3*t").unwrap().uses_t());
    }

    #[test]
    fn errors_give_the_column_and_what_was_expected() {
        let e = Expr::parse("1 + * 2").unwrap_err();
        assert_eq!(e.column, 5, "{e}");
        assert!(e.message.contains("expected a number"), "{e}");
        let e = Expr::parse("sin(t").unwrap_err();
        assert_eq!(e.column, 6, "{e}");
        assert!(e.message.contains("')'"), "{e}");
        let e = Expr::parse("2*x").unwrap_err();
        assert_eq!(e.column, 3, "{e}");
        assert!(e.message.contains("unknown name 'x'"), "{e}");
        let e = Expr::parse("1e").unwrap_err();
        assert!(e.message.contains("exponent"), "{e}");
        let e = Expr::parse("1e999").unwrap_err();
        assert!(e.message.contains("out of range"), "{e}");
        let e = Expr::parse("min(1)").unwrap_err();
        assert!(e.message.contains("2 argument"), "{e}");
        let e = Expr::parse("2 t").unwrap_err();
        assert_eq!(e.column, 3, "{e}");
        let e = Expr::parse("t)").unwrap_err();
        assert!(e.message.contains("no '('"), "{e}");
        let e = Expr::parse("  ").unwrap_err();
        assert!(e.message.contains("empty"), "{e}");
        let e = Expr::parse("t**2").unwrap_err();
        assert!(e.message.contains("'^'"), "{e}");
        let e = Expr::parse("ü + 1").unwrap_err();
        assert_eq!(e.column, 1, "{e}");
    }

    #[test]
    fn signal_names_are_variables() {
        let e = Expr::parse_with_signals("4*(u - arm.q[1]) - 0.4 * arm.w[1] + u").unwrap();
        assert_eq!(e.variables(), ["u", "arm.q[1]", "arm.w[1]"]);
        let vals = [2.0, 0.5, 1.0];
        assert_eq!(e.eval_with(0.0, |i| vals[i]), 4.0 * 1.5 - 0.4 + 2.0);
        assert!(Expr::parse("u + 1").is_err());
        assert!(Expr::parse_with_signals("arm.q[").is_err());
        assert!(Expr::parse_with_signals("sin").is_err());
    }

    #[test]
    fn programs_needing_more_than_the_small_stack_evaluate_alike() {
        // Right-nested sums keep one value pending per level: 40 at the deepest.
        let text = format!("{}t{}", "1+(".repeat(39), ")".repeat(39));
        let e = Expr::parse(&text).unwrap();
        assert!(e.stack > SMALL_STACK, "{}", e.stack);
        assert_eq!(e.eval(0.5), 39.5);
        let e = Expr::parse("0.5*sin(2*PI*t)").unwrap();
        assert!(e.stack <= SMALL_STACK);
        assert_eq!(e.eval(0.25).to_bits(), (0.5 * (2.0 * std::f64::consts::PI * 0.25).sin()).to_bits());
    }

    #[test]
    fn depth_and_size_are_bounded() {
        let deep = format!("{}t{}", "sin(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(Expr::parse(&deep).is_ok());
        let deeper = format!("{}t{}", "sin(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        assert!(Expr::parse(&deeper).unwrap_err().message.contains("nested"));
        let e = Expr::parse(&"-".repeat(100_000)).unwrap_err();
        assert!(e.message.contains("bytes long"), "{e}");
        let e = Expr::parse(&format!("{}1", "-".repeat(1000))).unwrap_err();
        assert!(e.message.contains("nested"), "{e}");
        let long = vec!["t"; 4000].join("+");
        assert_eq!(Expr::parse(&long).unwrap().eval(1.0), 4000.0);
    }
}
