//! axproj of the geared robot step (69)
//! (papers/gear-transmission-asymmetric-friction.txt, section 5).
//!
//! With the friction torque f = Φ(s, φ, P) = \[s\]|λ|, λ = φ + P f (the load-dependent "normal"
//! torque of each mesh), axproj(v*, A, φ, P) = A f where f, v = v* − A f satisfy, per joint,
//! f_i = Sgn(v_i)|λ_i|. This is the variational inequality 0 ∈ F(s) + N_[−1,1]ⁿ(s),
//! F(s) = A Φ(s) − v*. Solvers, in order:
//! 1. A and P diagonal: the closed form (70), joint by joint (the 1-DOF step (44)).
//! 2. Active-set (semismooth Newton) iteration on the joint modes {stuck, slipping ±
//!    with λ ≷ 0}: each mode pattern makes the conditions linear (a stuck row is
//!    (A f)_i = v*_i, a slipping row f_i = s σ (φ + P f)_i); solve, then switch the joints
//!    whose conditions fail. Warm-started from the signs of the current velocities; exact
//!    when it terminates (stuck joints get v = 0.0).
//! 3. If it cycles: enumeration of all 5ⁿ patterns for n ≤ 6, else
//! 4. the paper's projection iteration s ← clamp(s − c F(s)) (diagonally scaled), polished
//!    by the pattern solve.
//!
//! Failure of all of them is an `Err`, which the geared robot reports as a `Fault`.
//!
//! [`axproj_fixed`] imposes some joints' modes ([`Fix`]): a joint slipping in a locked
//! direction past v = 0, or held. The geared robot's stops and breakaways are located
//! within the RK4 step with it (issue 43, as the 1-DOF gear's).

use crate::gear::efficiency::{lambda_s, Mode, LAMBDA_BOUND, MODES};
use nalgebra::{DMatrix, DVector};

/// A joint's mode imposed on axproj ([`axproj_fixed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fix {
    /// Decided by axproj.
    Free,
    /// Held: v_i = 0, whatever its static condition |f_i| ≤ |λ_i| says.
    Stuck,
    /// Slipping in direction s = ±1, f_i = s |λ_i|, whatever the sign of the new v_i.
    Slip(i8),
}

/// The imposed mode of joint `i` (none imposed: `fixed` empty).
fn fix(fixed: &[Fix], i: usize) -> Fix {
    fixed.get(i).copied().unwrap_or(Fix::Free)
}

/// Which solver produced an axproj result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxprojMethod {
    Diagonal,
    ActiveSet,
    Enumeration,
    Projection,
}

/// Result of axproj.
#[derive(Clone, Debug)]
pub struct Axproj {
    /// y = A f (so v_new = v* − y).
    pub y: DVector<f64>,
    /// Friction torques f = Φ(s, φ, P).
    pub f: DVector<f64>,
    /// Joints in static friction (their v_new is exactly 0.0).
    pub stuck: Vec<bool>,
    /// Iterations of the method that succeeded (patterns tried, projection sweeps).
    pub iterations: usize,
    pub method: AxprojMethod,
}

fn sgn(x: f64) -> i8 {
    if x < 0.0 {
        -1
    } else {
        1
    }
}

/// Solve the linear system of one mode pattern.
pub(crate) fn solve_pattern(
    modes: &[Mode],
    a: &DMatrix<f64>,
    p: &DMatrix<f64>,
    phi: &DVector<f64>,
    vs: &DVector<f64>,
) -> Option<DVector<f64>> {
    let n = modes.len();
    let mut g = DMatrix::zeros(n, n);
    let mut r = DVector::zeros(n);
    for (i, m) in modes.iter().enumerate() {
        match *m {
            Mode::Stuck => {
                g.set_row(i, &a.row(i));
                r[i] = vs[i];
            }
            Mode::Slip { s, sigma } => {
                let k = (s * sigma) as f64;
                for j in 0..n {
                    g[(i, j)] = -k * p[(i, j)];
                }
                g[(i, i)] += 1.0;
                r[i] = k * phi[i];
            }
        }
    }
    let f = g.lu().solve(&r)?;
    f.iter().all(|x| x.is_finite()).then_some(f)
}

/// Check a pattern's solution; returns the corrected pattern (equal to `modes` when the
/// solution satisfies every condition). An imposed mode ([`Fix`]) stays; of an imposed
/// slip only the sign of λ is corrected.
fn correct(
    modes: &[Mode],
    f: &DVector<f64>,
    a: &DMatrix<f64>,
    p: &DMatrix<f64>,
    phi: &DVector<f64>,
    vs: &DVector<f64>,
    fixed: &[Fix],
) -> Vec<Mode> {
    let y = a * f;
    let lam = phi + p * f;
    let scale_f = 1.0 + lam.amax() + f.amax();
    let scale_v = vs.amax() + y.amax() + f64::MIN_POSITIVE;
    let (tol_f, tol_v) = (1e-10 * scale_f, 1e-10 * scale_v);
    modes
        .iter()
        .enumerate()
        .map(|(i, m)| match (fix(fixed, i), *m) {
            (Fix::Stuck, _) => Mode::Stuck,
            (Fix::Slip(s), m) => {
                let sigma = if let Mode::Slip { sigma, .. } = m { sigma } else { sgn(lam[i]) };
                Mode::Slip { s, sigma: if (sigma as f64) * lam[i] < -tol_f { -sigma } else { sigma } }
            }
            (Fix::Free, Mode::Stuck) => {
                if f[i].abs() > lam[i].abs() + tol_f {
                    Mode::Slip { s: sgn(f[i]), sigma: sgn(lam[i]) }
                } else {
                    Mode::Stuck
                }
            }
            (Fix::Free, Mode::Slip { s, sigma }) => {
                let v = vs[i] - y[i];
                if (s as f64) * v < -tol_v {
                    Mode::Stuck
                } else if (sigma as f64) * lam[i] < -tol_f {
                    Mode::Slip { s, sigma: -sigma }
                } else {
                    Mode::Slip { s, sigma }
                }
            }
        })
        .collect()
}

fn finish(modes: &[Mode], f: DVector<f64>, a: &DMatrix<f64>, iterations: usize, method: AxprojMethod) -> Axproj {
    Axproj { y: a * &f, f, stuck: modes.iter().map(|m| *m == Mode::Stuck).collect(), iterations, method }
}

/// axproj by the diagonal closed form (70); `None` unless A and P are diagonal. With the
/// joints' imposed modes `fixed` (empty: none) a slip takes the end of the static interval
/// on its side, a held joint y = v.
pub fn axproj_diagonal(
    v: &DVector<f64>,
    a: &DMatrix<f64>,
    phi: &DVector<f64>,
    p: &DMatrix<f64>,
    fixed: &[Fix],
) -> Option<Axproj> {
    let n = v.len();
    for i in 0..n {
        for j in 0..n {
            if i != j && (a[(i, j)] != 0.0 || p[(i, j)] != 0.0) {
                return None;
            }
        }
    }
    let mut y = DVector::zeros(n);
    let mut f = DVector::zeros(n);
    let mut stuck = vec![false; n];
    for i in 0..n {
        let (aii, rho) = (a[(i, i)], p[(i, i)]);
        let lo = aii * -lambda_s(phi[i], -rho).abs();
        let hi = aii * lambda_s(phi[i], rho).abs();
        // A = h M̂⁻¹ is positive definite in theory; garbage from a numerically singular M̂
        // (e.g. link positions ~1e15 m) must not reach `clamp`, which panics if lo > hi.
        if lo.partial_cmp(&hi).is_none_or(|o| o.is_gt()) {
            return None;
        }
        y[i] = match fix(fixed, i) {
            Fix::Free => v[i].clamp(lo, hi),
            Fix::Stuck => v[i],
            Fix::Slip(s) => if s > 0 { hi } else { lo },
        };
        stuck[i] = y[i] == v[i] && !matches!(fix(fixed, i), Fix::Slip(_));
        f[i] = y[i] / aii;
    }
    Some(Axproj { y, f, stuck, iterations: 1, method: AxprojMethod::Diagonal })
}

/// axproj by the active-set iteration from the modes `start` (at most `max_iter` patterns),
/// with the joints' imposed modes `fixed` (empty: none).
pub fn axproj_active_set(
    v: &DVector<f64>,
    a: &DMatrix<f64>,
    phi: &DVector<f64>,
    p: &DMatrix<f64>,
    start: Option<&[f64]>,
    max_iter: usize,
    fixed: &[Fix],
) -> Option<Axproj> {
    let n = v.len();
    let mut modes: Vec<Mode> = (0..n)
        .map(|i| match (fix(fixed, i), start.map(|s| s[i])) {
            (Fix::Stuck, _) => Mode::Stuck,
            (Fix::Slip(s), _) => Mode::Slip { s, sigma: sgn(phi[i]) },
            (Fix::Free, Some(x)) if x != 0.0 => Mode::Slip { s: sgn(x), sigma: sgn(phi[i]) },
            (Fix::Free, _) => Mode::Stuck,
        })
        .collect();
    for it in 1..=max_iter {
        let f = solve_pattern(&modes, a, p, phi, v)?;
        let next = correct(&modes, &f, a, p, phi, v, fixed);
        if next == modes {
            return Some(finish(&modes, f, a, it, AxprojMethod::ActiveSet));
        }
        modes = next;
    }
    None
}

/// axproj by trying every pattern (5ⁿ; used for n ≤ 6 when the active set cycles) that
/// keeps the joints' imposed modes `fixed` (empty: none).
pub fn axproj_enumerate(
    v: &DVector<f64>,
    a: &DMatrix<f64>,
    phi: &DVector<f64>,
    p: &DMatrix<f64>,
    fixed: &[Fix],
) -> Option<Axproj> {
    let n = v.len();
    let total = 5usize.pow(n as u32);
    let mut modes = vec![Mode::Stuck; n];
    for k in 0..total {
        let mut c = k;
        for m in modes.iter_mut() {
            *m = MODES[c % 5];
            c /= 5;
        }
        let keeps = |(i, m): (usize, &Mode)| match (fix(fixed, i), *m) {
            (Fix::Free, _) | (Fix::Stuck, Mode::Stuck) => true,
            (Fix::Slip(d), Mode::Slip { s, .. }) => s == d,
            _ => false,
        };
        if !modes.iter().enumerate().all(keeps) {
            continue;
        }
        if let Some(f) = solve_pattern(&modes, a, p, phi, v) {
            if correct(&modes, &f, a, p, phi, v, fixed) == modes {
                return Some(finish(&modes, f, a, k + 1, AxprojMethod::Enumeration));
            }
        }
    }
    None
}

/// λ(φ, P[s]) by the fixed point λ ← φ + P[s]|λ| from λ = φ (Remark 3).
fn lambda_fixed_point(phi: &DVector<f64>, p: &DMatrix<f64>, s: &DVector<f64>) -> Option<DVector<f64>> {
    let mut lam = phi.clone();
    let scale = 1.0 + phi.amax();
    for _ in 0..10_000 {
        let abs_s = lam.abs().component_mul(s);
        let next = phi + p * abs_s;
        let d = (&next - &lam).amax();
        lam = next;
        if d <= 1e-15 * scale {
            return Some(lam);
        }
        if !lam.iter().all(|x| x.is_finite() && x.abs() < LAMBDA_BOUND) {
            return None;
        }
    }
    None
}

/// The paper's baseline: projection iteration s ← clamp(s − c F(s)) with c scaled per joint
/// (c_i = 1/(n A_ii |λ_i|)), then the pattern of the limit is solved exactly.
pub fn axproj_projection(
    v: &DVector<f64>,
    a: &DMatrix<f64>,
    phi: &DVector<f64>,
    p: &DMatrix<f64>,
    max_iter: usize,
) -> Option<Axproj> {
    let n = v.len();
    let mut s = DVector::from_fn(n, |i, _| {
        if v[i] > 0.0 {
            1.0
        } else if v[i] < 0.0 {
            -1.0
        } else {
            0.0
        }
    });
    let omega = 1.0 / n as f64;
    let scale = v.amax() + f64::MIN_POSITIVE;
    let mut iterations = max_iter;
    let mut lam = phi.clone();
    for it in 1..=max_iter {
        lam = lambda_fixed_point(phi, p, &s)?;
        let fr = lam.abs().component_mul(&s);
        let big_f = a * &fr - v;
        let mut change: f64 = 0.0;
        for i in 0..n {
            let c = omega / (a[(i, i)] * lam[i].abs() + 1e-300);
            let si = (s[i] - c * big_f[i]).clamp(-1.0, 1.0);
            change = change.max((si - s[i]).abs() * a[(i, i)] * lam[i].abs());
            s[i] = si;
        }
        if change <= 1e-14 * scale {
            iterations = it;
            break;
        }
    }
    // Polish: joints with |s| < 1 stuck, the others slipping with the sign of λ.
    let modes: Vec<Mode> = (0..n)
        .map(|i| if s[i].abs() < 1.0 { Mode::Stuck } else { Mode::Slip { s: sgn(s[i]), sigma: sgn(lam[i]) } })
        .collect();
    let f = solve_pattern(&modes, a, p, phi, v)?;
    (correct(&modes, &f, a, p, phi, v, &[]) == modes).then(|| finish(&modes, f, a, iterations, AxprojMethod::Projection))
}

/// axproj(v*, A, φ, P) with the solvers in the order of the module documentation.
/// `start` holds the current joint velocities (warm start of the active set).
pub fn axproj(
    v: &DVector<f64>,
    a: &DMatrix<f64>,
    phi: &DVector<f64>,
    p: &DMatrix<f64>,
    start: Option<&[f64]>,
) -> std::result::Result<Axproj, String> {
    axproj_fixed(v, a, phi, p, start, &[])
}

/// [`axproj`] with the joints' imposed modes `fixed` (empty: none). With an imposed mode
/// the projection iteration is not tried (it cannot keep one).
pub fn axproj_fixed(
    v: &DVector<f64>,
    a: &DMatrix<f64>,
    phi: &DVector<f64>,
    p: &DMatrix<f64>,
    start: Option<&[f64]>,
    fixed: &[Fix],
) -> std::result::Result<Axproj, String> {
    if let Some(r) = axproj_diagonal(v, a, phi, p, fixed) {
        return Ok(r);
    }
    if let Some(r) = axproj_active_set(v, a, phi, p, start, 50, fixed) {
        return Ok(r);
    }
    if let Some(r) = axproj_active_set(v, a, phi, p, None, 50, fixed) {
        return Ok(r);
    }
    let free = fixed.iter().all(|f| *f == Fix::Free);
    let r = if v.len() <= 6 {
        axproj_enumerate(v, a, phi, p, fixed)
    } else if free {
        axproj_projection(v, a, phi, p, 200_000)
    } else {
        None
    };
    r.ok_or_else(|| {
        let smax = sigma_max(p).unwrap_or(f64::NAN);
        format!(
            "axproj did not converge (no consistent stick/slip pattern; σmax(P) = {smax:.4}{})",
            if smax >= 1.0 { ", ill-posed" } else { "" }
        )
    })
}

/// σmax(P), the condition (57) of a well-posed step (σmax(P) < 1), or `None` when P has a
/// non-finite entry (nalgebra's SVD panics on NaN).
pub(crate) fn sigma_max(p: &DMatrix<f64>) -> Option<f64> {
    if !p.iter().all(|x| x.is_finite()) {
        return None;
    }
    // Unordered: the ordered SVD sorts with `expect` and would panic on a NaN from overflow.
    let s = p.clone().try_svd_unordered(false, false, f64::EPSILON, 1000)?;
    let sv = s.singular_values;
    sv.iter().all(|x| x.is_finite()).then(|| sv.iter().fold(0.0f64, |m, &x| m.max(x)))
}
