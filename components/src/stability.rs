//! Stability of explicit RK4 on stiff elements, shared by springs, contacts and friction.

use stiction_framework::output::number::float_text as num;
use stiction_framework::Diagnostic;

/// Stability warnings for a stiff element (stiffness `k`, viscosity `b`) acting on the
/// smallest of the inertias at its ports: explicit RK4 on M ẍ = −K x − B ẋ is stable for
/// ω T ≲ 2.8 (ω = √(K/M)) and B T / M ≲ 2.7; warn from 2.
pub fn stiffness_warnings(what: &str, k: f64, b: f64, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(m) = inertia.iter().flatten().cloned().reduce(f64::min) {
        let wt = (k / m).sqrt() * step;
        if wt > 2.0 {
            out.push(Diagnostic::Warning(format!(
                "{what} K = {} on inertia {} gives ω·T = {} (> 2): expect instability; reduce the step or K",
                num(k),
                num(m),
                num_2(wt)
            )));
        }
        let bt = b * step / m;
        if bt > 2.0 {
            out.push(Diagnostic::Warning(format!(
                "{what} B = {} on inertia {} gives B·T/M = {} (> 2): expect instability",
                num(b),
                num(m),
                num_2(bt)
            )));
        }
    }
    out
}

/// For a held element coupled implicitly with the masses on its ports
/// (`StageForm::coupled`): what replaces [`stiffness_warnings`]' ω·T warning, which explicit
/// RK4 alone would deserve.
pub fn coupled_info(what: &str, k: f64, inertia: &[Option<f64>], step: f64) -> Diagnostic {
    // A port without a scalar inertia (a robot's tip) is named without one.
    let on = match inertia.iter().flatten().cloned().reduce(f64::min) {
        Some(m) => format!(" on inertia {} (ω·T = {})", num(m), num_2((k / m).sqrt() * step)),
        None => String::new(),
    };
    Diagnostic::Info(format!(
        "{what} K = {}{on}: held implicitly with the bodies it acts on (they solve their \
         stage with the element's law; bodies joined by such elements, as one group), \
         stable at every step",
        num(k),
    ))
}

/// A ratio with two decimals, in exponent notation from 1e6 on (B·T/M of B = 1e300).
fn num_2(x: f64) -> String {
    if x.abs() < 1e6 {
        format!("{x:.2}")
    } else {
        format!("{x:.2e}")
    }
}
