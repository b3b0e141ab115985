//! Small helpers shared by the component files.

use nalgebra::{Vector2, Vector3};

/// gsat(X, x) of (15): x if ‖x‖ ≤ X, else X·x/‖x‖. Scalar form.
#[inline]
pub fn sat(limit: f64, x: f64) -> f64 {
    x.clamp(-limit, limit)
}

/// gsat(X, x) of (15) for vectors.
#[inline]
pub fn gsat3(limit: f64, x: Vector3<f64>) -> Vector3<f64> {
    let n = x.norm();
    if n <= limit {
        x
    } else {
        x * (limit / n)
    }
}

/// gsat(X, x) of (15) in the plane.
#[inline]
pub fn gsat2(limit: f64, x: Vector2<f64>) -> Vector2<f64> {
    let n = x.norm();
    if n <= limit {
        x
    } else {
        x * (limit / n)
    }
}

use stiction_framework::component::Diagnostic;
use stiction_framework::port::{Domain, PortInfo};
use stiction_framework::system::Params;
use stiction_framework::Result;

/// Ports `a` and `b` of a two-port element in `domain`. The element sees the motion of
/// b relative to a and applies its force to b, the reaction to a.
pub fn two_ports(domain: Domain) -> Vec<PortInfo> {
    vec![PortInfo::new("a", domain), PortInfo::new("b", domain)]
}

/// The `domain` parameter of a two-port element: "scalar" (default) or "point3".
pub fn domain_param(p: &mut Params) -> Result<Domain> {
    Ok(match p.choice("domain", &["scalar", "point3"])? {
        "point3" => Domain::Point3,
        _ => Domain::Scalar,
    })
}

/// Number of vector components an element of `domain` works on.
pub fn dims(domain: Domain) -> usize {
    match domain {
        Domain::Scalar => 1,
        _ => 3,
    }
}

/// Stability warnings for a stiff element (stiffness `k`, viscosity `b`) acting on the
/// smallest of the inertias at its ports: explicit RK4 on M ẍ = −K x − B ẋ is stable for
/// ω T ≲ 2.8 (ω = √(K/M)) and B T / M ≲ 2.7; warn from 2.
pub fn stiffness_warnings(what: &str, k: f64, b: f64, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(m) = inertia.iter().flatten().cloned().reduce(f64::min) {
        let wt = (k / m).sqrt() * step;
        if wt > 2.0 {
            out.push(Diagnostic::Warning(format!(
                "{what} K = {k} on inertia {m} gives ω·T = {wt:.2} (> 2): expect instability; reduce the step or K"
            )));
        }
        let bt = b * step / m;
        if bt > 2.0 {
            out.push(Diagnostic::Warning(format!(
                "{what} B = {b} on inertia {m} gives B·T/M = {bt:.2} (> 2): expect instability"
            )));
        }
    }
    out
}
