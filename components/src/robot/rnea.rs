//! The recursive Newton–Euler algorithm (RNEA): the bias torques c(θ, ω) of (8) and
//! inverse dynamics.

use super::kinematics::{Kinematics, VecN, MAX_DOF};
use super::link::Link;
use nalgebra::Vector3;

/// Recursive Newton–Euler in world coordinates: the joint torques that produce the
/// accelerations `wd` (zero when `None`) at rates `w` under gravity `g` (the base is
/// given the acceleration −g). Rotor inertias add rotor_i ẅ_i; no joint damping.
pub(crate) fn rnea(links: &[Link], k: &Kinematics, w: &[f64], wd: Option<&[f64]>, g: &Vector3<f64>) -> VecN {
    let n = links.len();
    let mut force = [Vector3::zeros(); MAX_DOF]; // m a_c of link i
    let mut moment = [Vector3::zeros(); MAX_DOF]; // I α + ω × I ω + r_c × m a_c, about joint i

    // Forward pass: angular velocity/acceleration of the previous link, acceleration of
    // the previous joint point.
    let mut om = Vector3::zeros();
    let mut al = Vector3::zeros();
    let mut acc = -g;
    let mut prev = Vector3::zeros();
    for (i, l) in links.iter().enumerate() {
        let z = k.axis[i];
        let r = k.joint[i] - prev;
        acc += al.cross(&r) + om.cross(&om.cross(&r));
        let qd = w[i];
        let qdd = wd.map_or(0.0, |a| a[i]);
        al += z * qdd + om.cross(&z) * qd;
        om += z * qd;
        let rc = k.com[i] - k.joint[i];
        let ac = acc + al.cross(&rc) + om.cross(&om.cross(&rc));
        let iw = k.rot[i] * l.inertia * k.rot[i].transpose();
        let f = ac * l.mass;
        force[i] = f;
        moment[i] = iw * al + om.cross(&(iw * om)) + rc.cross(&f);
        prev = k.joint[i];
    }
    // Backward pass: force and moment (about joint i) transmitted through joint i.
    let mut tau = VecN::zeros();
    let mut f = Vector3::zeros();
    let mut m = Vector3::zeros();
    for i in (0..n).rev() {
        let lever = if i + 1 < n { k.joint[i + 1] - k.joint[i] } else { Vector3::zeros() };
        m = moment[i] + m + lever.cross(&f);
        f += force[i];
        tau[i] = k.axis[i].dot(&m) + links[i].rotor * wd.map_or(0.0, |a| a[i]);
    }
    tau
}
