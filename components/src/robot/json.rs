//! JSON readers shared by `serial_robot` and `geared_robot`: the links of a chain, the tip,
//! gravity and the initial state.

use super::kinematics::MAX_DOF;
use super::link::Link;
use nalgebra::{Matrix3, Vector3};
use stiction_framework::system::{ParamDoc, Params};
use stiction_framework::Result;

/// Read a 3- or 6-entry inertia `[Ixx, Iyy, Izz(, Ixy, Ixz, Iyz)]` into a tensor.
fn read_inertia(lp: &mut Params) -> Result<Matrix3<f64>> {
    let v = lp.vec_f64("inertia", None)?;
    match v.len() {
        3 => Ok(Matrix3::from_diagonal(&Vector3::new(v[0], v[1], v[2]))),
        6 => Ok(Matrix3::new(v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2])),
        k => Err(lp.err(
            "inertia",
            format!("expected 3 numbers [Ixx, Iyy, Izz] or 6 [Ixx, Iyy, Izz, Ixy, Ixz, Iyz], got {k}"),
        )),
    }
}

/// Largest bound on the joint-space inertia H(q) accepted (kg·m²): products of two such
/// entries (in the inverse and the SVD of the diagnostics) still fit in an f64.
pub const MAX_JOINT_INERTIA: f64 = 1e100;

/// Read `links` (1 to MAX_DOF link objects) of a serial chain; errors name each link's path.
pub fn read_links(p: &mut Params) -> Result<Vec<Link>> {
    let link_params = p.objects("links")?;
    if link_params.is_empty() {
        return Err(p.err("links", "a serial robot needs at least one link"));
    }
    if link_params.len() > MAX_DOF {
        return Err(p.err("links", format!("at most {MAX_DOF} links are supported, got {}", link_params.len())));
    }
    let mut links = Vec::with_capacity(link_params.len());
    let (mut reach, mut bound) = (0.0f64, 0.0f64);
    for mut lp in link_params {
        let origin = lp.vec3_or("origin", [0.0; 3])?;
        let axis = lp.vec3("axis")?;
        let mass = lp.positive("mass")?;
        let com = lp.vec3_or("com", [0.0; 3])?;
        let inertia = read_inertia(&mut lp)?;
        let damping = lp.nonneg_or("damping", 0.0)?;
        let rotor = lp.nonneg_or("rotor", 0.0)?;
        let link = Link { origin, axis, mass, com, inertia, damping, rotor }
            .validated()
            .map_err(|(field, msg)| lp.err(field, msg))?;
        // Derived: every entry of H(q) is at most Σ m_j (r_j)², r_j the reach of link j's
        // centre of mass from the base (sum of origins and com). Keep it well inside f64 so
        // H, its inverse and the SVD of P stay finite.
        reach += link.origin.norm();
        let arm = reach + link.com.norm();
        bound += link.mass * arm * arm + link.inertia.amax();
        if !(bound.is_finite() && bound <= MAX_JOINT_INERTIA) {
            let field = if link.com.norm() >= reach { "com" } else { "origin" };
            return Err(lp.err(
                field,
                format!(
                    "the inertia about the joints this gives (up to {bound:e} kg·m²) is out of range (at most \
                     {MAX_JOINT_INERTIA:e}): check the lengths and mass of the links"
                ),
            ));
        }
        lp.finish()?;
        links.push(link);
    }
    Ok(links)
}

/// `tip`, `gravity`, initial angles and initial velocities of a serial chain.
pub type ChainSetup = (Vector3<f64>, Vector3<f64>, Vec<f64>, Vec<f64>);

/// Read `tip`, `gravity` and `init` `{"q": [n], <vel>: [n]}` of a serial chain.
pub fn read_tip_gravity_init(p: &mut Params, n: usize, vel: &str) -> Result<ChainSetup> {
    let tip = p.vec3_or("tip", [0.0; 3])?;
    let gravity = p.vec3_or("gravity", [0.0; 3])?;
    let (mut q0, mut w0) = (vec![0.0; n], vec![0.0; n]);
    if let Some(mut init) = p.object("init")? {
        if let Some(q) = init.vec_f64_opt("q", Some(n))? {
            q0 = q;
        }
        if let Some(w) = init.vec_f64_opt(vel, Some(n))? {
            w0 = w;
        }
        init.finish()?;
    }
    Ok((tip, gravity, q0, w0))
}

/// Documentation of the keys of each link object ([`read_links`]).
pub const LINK_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "links[].origin",
        unit: "m",
        default: Some("[0, 0, 0]"),
        doc: "joint position in the parent frame; link frame = parent · Trans(origin) · Rot(axis, θ)",
    },
    ParamDoc { name: "links[].axis", unit: "", default: None, doc: "joint axis [3], non-zero (normalised)" },
    ParamDoc { name: "links[].mass", unit: "kg", default: None, doc: "link mass, > 0" },
    ParamDoc { name: "links[].com", unit: "m", default: Some("[0, 0, 0]"), doc: "centre of mass in the link frame" },
    ParamDoc {
        name: "links[].inertia",
        unit: "kg·m²",
        default: None,
        doc: "about the COM in the link frame, [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (tensor entries, positive semi-definite)",
    },
    ParamDoc { name: "links[].damping", unit: "N·m·s/rad", default: Some("0"), doc: "joint viscous friction b" },
    ParamDoc { name: "links[].rotor", unit: "kg·m²", default: Some("0"), doc: "rotor inertia added to H_ii" },
];

/// Documentation of `tip` and `gravity` ([`read_tip_gravity_init`]).
pub const TIP_GRAVITY_PARAMS: &[ParamDoc] = &[
    ParamDoc { name: "tip", unit: "m", default: Some("[0, 0, 0]"), doc: "tip point in the last link's frame" },
    ParamDoc {
        name: "gravity",
        unit: "m/s²",
        default: Some("[0, 0, 0]"),
        doc: "gravitational acceleration (world frame)",
    },
];
