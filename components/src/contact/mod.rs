//! Contact: unilateral penalty contacts with Coulomb friction (I_fricKN, (23)–(24)) — a
//! point on a fixed plane, a point or sphere on a plane carried by another body, two
//! spheres — and a frictionless wall.

family! {
    body_contact,
    plane_contact,
    sphere_contact,
    wall,
}

pub use body_contact::{BodyContact, ContactLaw, Pair};
pub use plane_contact::{Horizontal, PlaneContact, PlaneKind, Tilt};
pub use sphere_contact::SphereContact;
pub use wall::Wall;

use nalgebra::Vector3;
use stiction_framework::system::Params;
use stiction_framework::Result;

/// A fixed orthonormal basis (t₁, t₂) of the plane with unit normal `n`, right-handed with
/// it (t₁ × t₂ = n): t₁ is the x axis projected onto the plane (the y axis when n is
/// within 25° of x), so the horizontal plane gets (x, y). The tangential element state
/// of a contact lives in this basis.
pub fn plane_basis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = if n.x.abs() > 0.9 { Vector3::y() } else { Vector3::x() };
    let t1 = (a - n * n.dot(&a)).normalize();
    (t1, n.cross(&t1))
}

/// The 3-vector at `key`, normalised; an error naming the key when it is zero or not finite.
pub(crate) fn unit_vector(p: &mut Params, key: &str) -> Result<Vector3<f64>> {
    let v = p.vec3(key)?;
    let n = v.norm();
    if !(n > 1e-12 && n.is_finite()) {
        return Err(p.err(key, format!("must be a non-zero finite vector, got {:?}", [v.x, v.y, v.z])));
    }
    Ok(v / n)
}

#[cfg(test)]
mod tests {
    use super::{Horizontal, PlaneContact, Tilt, Wall};
    use nalgebra::Vector3;
    use stiction_framework::component::Impedance;
    use stiction_framework::port::{Domain, Motion};
    use stiction_framework::signal::TimeFunction;

    /// Motions around the contact surface (positions and velocities of both signs, some
    /// exactly on it), from a fixed linear congruential sequence.
    fn motions() -> Vec<(Vector3<f64>, Vector3<f64>)> {
        let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.02
        };
        let mut out = vec![(Vector3::zeros(), Vector3::zeros())];
        for _ in 0..2000 {
            let p = Vector3::new(next(), next(), next());
            let v = Vector3::new(next(), next(), next()) * 100.0;
            out.push((p, v));
        }
        out
    }

    /// The stepper checks these contacts through `affine_switching` (stepper/events.rs):
    /// it must give the same g as `switching`, bit for bit, or a switch would be located
    /// where the law does not switch.
    #[test]
    fn affine_switching_is_the_switching_function_bit_for_bit() {
        let plane =
            PlaneContact { k: 1e7, b: 10.0, mu: 0.1, height: 1e-3, plane: Horizontal, tau_factor: Default::default() };
        let wall = |side: f64, axis: Vector3<f64>, w: f64| Wall {
            domain: Domain::Point3,
            axis,
            side,
            position: TimeFunction::Constant(w),
            k: 1e5,
            b: 3.0,
            window: Default::default(),
        };
        let skew = Vector3::new(0.48, -0.6, 0.64);
        let tilted = PlaneContact { k: 1e5, b: 3.0, mu: 0.1, height: -1e-3, plane: Tilt::of(skew), tau_factor: Default::default() };
        let cases: Vec<Box<dyn Impedance>> =
            vec![Box::new(plane), Box::new(tilted), Box::new(wall(1.0, Vector3::x(), 0.004)), Box::new(wall(-1.0, skew, -0.002))];
        for imp in &cases {
            let a = imp.affine_switching().expect("a constant point contact is affine");
            for (p, v) in motions() {
                let g = imp.switching(&[Motion::point(p, v)], &[0.0, 0.0], 0.3).unwrap();
                assert_eq!(a.eval(&p, &v).to_bits(), g.to_bits(), "p {p:?} v {v:?}");
            }
        }
        let moving =
            Wall { position: TimeFunction::Table { t: vec![0.0, 1.0], v: vec![0.0, 1.0] }, ..wall(1.0, skew, 0.0) };
        assert!(moving.affine_switching().is_none(), "a moving wall is checked through `switching`");
    }
}
