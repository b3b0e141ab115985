//! The saturation gsat(X, x) of (15) (papers/modular-rk4-architecture.md), shared by the
//! friction element I_fricK and the plane contact.

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
