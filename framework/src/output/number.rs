//! Numbers as result files print them: the shortest text that reads back to the same f64,
//! in exponent notation outside 1e-4 ≤ |x| < 1e16 (so no cell is hundreds of digits long),
//! and sample times printed exactly as k·T with T the step's shortest decimal (so 9 steps of
//! 0.001 s print `0.009`, not the binary product `0.009000000000000001`).

/// Shortest round-trip text of `x`: `0.25`, `-3`, `1.5e-7`, `2e300`, `NaN`, `inf`; zero of
/// either sign is `0` (a held body's `-0` velocity reads as the 0 it equals).
pub fn float_text(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let a = x.abs();
    if a == 0.0 {
        return "0".into();
    }
    if (1e-4..1e16).contains(&a) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// The sample time `t` of a run with step `step`: when `t` is the float k·step of a whole
/// number of steps k (as the stepper computes it), the exact decimal product of k and the
/// step's shortest decimal; otherwise [`float_text`].
pub fn time_text(t: f64, step: f64) -> String {
    if !(t.is_finite() && step.is_finite() && step > 0.0 && t >= 0.0) {
        return float_text(t);
    }
    let k = (t / step).round();
    if k >= 2f64.powi(53) || k * step != t {
        return float_text(t);
    }
    // step = digits × 10^exp exactly in decimal (its shortest round-trip text).
    let s = format!("{step:e}");
    let Some((mant, exp)) = s.split_once('e') else { return float_text(t) };
    let Ok(mut exp) = exp.parse::<i32>() else { return float_text(t) };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    exp -= frac.len() as i32;
    let Ok(digits) = format!("{int}{frac}").parse::<u128>() else { return float_text(t) };
    let Some(product) = digits.checked_mul(k as u128) else { return float_text(t) };
    decimal_text(product, exp)
}

/// `m × 10^e` as decimal text, in the notation [`float_text`] would choose for its value.
fn decimal_text(mut m: u128, mut e: i32) -> String {
    if m == 0 {
        return "0".into();
    }
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    let digits = m.to_string();
    let n = digits.len() as i32;
    // The decimal exponent of the leading digit: value in [10^lead, 10^(lead+1)).
    let lead = n - 1 + e;
    if !(-4..16).contains(&lead) {
        let (first, rest) = digits.split_at(1);
        return if rest.is_empty() { format!("{first}e{lead}") } else { format!("{first}.{rest}e{lead}") };
    }
    if e >= 0 {
        format!("{digits}{}", "0".repeat(e as usize))
    } else if n + e > 0 {
        let (a, b) = digits.split_at((n + e) as usize);
        format!("{a}.{b}")
    } else {
        format!("0.{}{digits}", "0".repeat((-(n + e)) as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip() {
        for x in [0.1, -2.5, 1e-7, 123456.789, 1e300, -1e-300, 0.0001, 1e16, 9.999e15, f64::MIN_POSITIVE, 5e-324] {
            let s = float_text(x);
            assert_eq!(s.parse::<f64>().unwrap(), x, "{s}");
            assert!(s.len() <= 24, "{s}");
        }
        assert_eq!(float_text(1e300), "1e300");
        assert_eq!(float_text(0.5), "0.5");
        assert_eq!(float_text(1.5e-7), "1.5e-7");
        assert_eq!(float_text(-0.0), "0");
        assert_eq!(float_text(0.0), "0");
    }

    #[test]
    fn times_are_whole_steps() {
        assert_eq!(9.0 * 0.001, 0.009000000000000001);
        assert_eq!(time_text(9.0 * 0.001, 0.001), "0.009");
        assert_eq!(time_text(3.0 * 0.1, 0.1), "0.3");
        assert_eq!(time_text(0.0, 1e-4), "0");
        assert_eq!(time_text(12345.0 * 2.5e-4, 2.5e-4), "3.08625");
        assert_eq!(time_text(1000.0 * 0.001, 0.001), "1");
        assert_eq!(time_text(7.0 * 1e-6, 1e-6), "7e-6");
        assert_eq!(time_text(20.0 * 0.5, 0.5), "10");
        // Not a whole number of steps: the float itself.
        assert_eq!(time_text(0.0015, 0.001), "0.0015");
    }
}
