//! Elements of 1, 2 or 3 dimensions (the `dims` key): scalar ports for 1, point ports for
//! 2 and 3, states of n values. Shared by the Kikuuwe friction models and the velocity source.

use nalgebra::Vector3;
use stiction_framework::system::{ParamDoc, Params};
use stiction_framework::{Domain, Result};

/// Documentation of the `dims` key.
pub const DIMS_DOC: ParamDoc =
    ParamDoc { name: "dims", unit: "", default: Some("1"), doc: "1 (scalar port), 2 (x–y on a point port) or 3" };

/// The `dims` parameter (1, 2 or 3; default 1): scalar ports for 1, point ports for 2 and 3
/// (a 2-D element uses the x and y components and leaves z free).
pub fn dims_param(p: &mut Params) -> Result<usize> {
    let n = p.usize_or("dims", 1)?;
    if !(1..=3).contains(&n) {
        return Err(p.err("dims", format!("must be 1, 2 or 3, got {n}")));
    }
    Ok(n)
}

/// Port domain of an n-dimensional element.
pub fn domain_of(n: usize) -> Domain {
    if n == 1 {
        Domain::Scalar
    } else {
        Domain::Point3
    }
}

/// An n-vector parameter: a number (n = 1) or an array of exactly n numbers; zeros if absent.
pub fn vec_n_or_zero(p: &mut Params, key: &str, n: usize) -> Result<Vector3<f64>> {
    let mut out = Vector3::zeros();
    match p.get(key) {
        None => return Ok(out),
        Some(v) if v.is_number() && n == 1 => {
            out.x = p.f64(key)?;
            return Ok(out);
        }
        Some(v) if !v.is_array() => {
            return Err(
                p.err(key, format!("expected {} (dims = {n}), got {v}", if n == 1 { "a number" } else { "an array" }))
            )
        }
        Some(_) => {}
    }
    let v = p.vec_f64(key, None)?;
    if v.len() != n {
        return Err(p.err(key, format!("dimension mismatch: expected {n} numbers (dims = {n}), got {}", v.len())));
    }
    for (i, x) in v.iter().enumerate() {
        out[i] = *x;
    }
    Ok(out)
}

/// First n state values as a 3-vector (rest zero).
#[inline]
pub fn load(x: &[f64], n: usize) -> Vector3<f64> {
    let mut v = Vector3::zeros();
    for i in 0..n {
        v[i] = x[i];
    }
    v
}

/// Keep the first n components of a port quantity (zero the rest).
#[inline]
pub fn first(v: Vector3<f64>, n: usize) -> Vector3<f64> {
    let mut o = Vector3::zeros();
    for i in 0..n {
        o[i] = v[i];
    }
    o
}

/// Write the first n components of v into out.
#[inline]
pub fn store(v: &Vector3<f64>, out: &mut [f64], n: usize) {
    out[..n].copy_from_slice(&v.as_slice()[..n]);
}

/// Why [`symmetric_eigenvalues`] gave none, as an error message for an inertia.
pub const EIGEN_UNDECIDED: &str =
    "its principal moments could not be computed (entries too large or too far apart in scale); check its units";

/// Eigenvalues of a symmetric 3×3 matrix (an inertia tensor) in a bounded time: nalgebra's
/// `symmetric_eigenvalues` iterates without a bound, which on extreme entries (1e300,
/// 5e-324 beside 1) may never end. `None` if an entry or eigenvalue is not finite or the
/// QR iteration does not converge within 1000 sweeps (a well-scaled 3×3 needs a few).
pub fn symmetric_eigenvalues(m: &nalgebra::Matrix3<f64>) -> Option<Vector3<f64>> {
    if !m.iter().all(|x| x.is_finite()) {
        return None;
    }
    let e = nalgebra::SymmetricEigen::try_new(*m, f64::EPSILON, 1000)?.eigenvalues;
    e.iter().all(|x| x.is_finite()).then_some(e)
}
