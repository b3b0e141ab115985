//! The composite-rigid-body algorithm (CRBA): the joint-space inertia matrix H(θ) of (8),
//! and the Cholesky solve of H ω̇ = τ − c − b ω.

use super::kinematics::{Kinematics, MatN, VecN, MAX_DOF};
use super::link::Link;
use nalgebra::{Matrix3, Matrix6, Vector6};
use stiction_framework::Fault;

/// Spatial inertia (angular part first) of link i about the world origin.
fn spatial_inertia(links: &[Link], k: &Kinematics, i: usize) -> Matrix6<f64> {
    let l = &links[i];
    let c = k.com[i].cross_matrix();
    let ic = k.rot[i] * l.inertia * k.rot[i].transpose();
    let mut s = Matrix6::zeros();
    s.fixed_view_mut::<3, 3>(0, 0).copy_from(&(ic + c * c.transpose() * l.mass));
    s.fixed_view_mut::<3, 3>(0, 3).copy_from(&(c * l.mass));
    s.fixed_view_mut::<3, 3>(3, 0).copy_from(&(c.transpose() * l.mass));
    s.fixed_view_mut::<3, 3>(3, 3).copy_from(&(Matrix3::identity() * l.mass));
    s
}

/// Composite-rigid-body algorithm: H_ij = S_jᵀ I^c_i S_i for j ≤ i, with I^c_i the
/// spatial inertia of links i..n−1 and S_i = [z_i; p_i × z_i] the motion of joint i,
/// all in world coordinates about the origin. Rotor inertias are added to H_ii.
pub(crate) fn crba(links: &[Link], k: &Kinematics) -> MatN {
    let n = links.len();
    let mut s = [Vector6::zeros(); MAX_DOF];
    for (si, (z, p)) in s.iter_mut().zip(k.axis.iter().zip(&k.joint)).take(n) {
        let v = p.cross(z);
        *si = Vector6::new(z.x, z.y, z.z, v.x, v.y, v.z);
    }
    let mut h = MatN::zeros();
    let mut composite = Matrix6::zeros();
    for i in (0..n).rev() {
        composite += spatial_inertia(links, k, i);
        let fi = composite * s[i];
        for j in 0..=i {
            let hij = s[j].dot(&fi);
            h[(i, j)] = hij;
            h[(j, i)] = hij;
        }
        h[(i, i)] += links[i].rotor;
    }
    h
}

/// Solve H x = b in place on the top-left n × n block by Cholesky (H = L Lᵀ, L stored in
/// the lower triangle of `h`); `b` is overwritten by x. Fails if H is not (numerically)
/// positive definite.
pub(crate) fn cholesky_solve(h: &mut MatN, n: usize, b: &mut VecN) -> Result<(), Fault> {
    for j in 0..n {
        let hjj = h[(j, j)];
        let mut d = hjj;
        for k in 0..j {
            d -= h[(j, k)] * h[(j, k)];
        }
        if !(d.is_finite() && d > 0.0 && d > 1e-13 * hjj) {
            return Err(Fault::new(format!(
                "inertia matrix H is not positive definite (Cholesky pivot {d:e} at joint {j}, H_jj = {hjj:e})"
            )));
        }
        let ljj = d.sqrt();
        h[(j, j)] = ljj;
        for i in j + 1..n {
            let mut s = h[(i, j)];
            for k in 0..j {
                s -= h[(i, k)] * h[(j, k)];
            }
            h[(i, j)] = s / ljj;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= h[(i, k)] * b[k];
        }
        b[i] = s / h[(i, i)];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= h[(k, i)] * b[k];
        }
        b[i] = s / h[(i, i)];
    }
    Ok(())
}
