//! Plane contact with Coulomb friction I_fricKN, (23)–(24), in the RK4 form of (19):
//! a penalty normal force below the plane z = h and a tangential I_fricK element whose
//! friction limit is μ times the normal force.
//!
//! With penetration δ = h − p_z and the contact point velocity v:
//! f_n = max(0, K δ − B v_z) if δ > 0, else 0                      (23a)
//! f*  = (B + τK) v_xy + K e                                       (23b)
//! f_t = gsat(μ f_n, f*),  ε = (f_t − K e)/(B + τK)                 (23c)/(23d)
//! The body receives [−f_t, f_n]. The normal force only pushes (a contact never pulls).

use crate::saturation::gsat2;
use crate::stability::stiffness_warnings;
use nalgebra::{Vector2, Vector3};
use stiction_framework::batch::{
    evaluate_via_points, ImpedanceBatch, PointImpedance, PointImpedanceBatch, PointMotion,
};
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;
use wide::{f64x2, CmpLe};

/// Frictional contact of a point with the horizontal plane z = `height`.
#[derive(Clone, Debug)]
pub struct PlaneContact {
    /// Normal and tangential stiffness (N/m).
    pub k: f64,
    /// Normal and tangential viscosity (N·s/m).
    pub b: f64,
    /// Friction coefficient μ.
    pub mu: f64,
    /// Height of the plane (m).
    pub height: f64,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "force on the body"),
    SignalInfo::new("slip_velocity", 3, "m/s", "velocity of the contact point"),
    SignalInfo::new("penetration", 1, "m", "depth below the plane (≤ 0: no contact)"),
    SignalInfo::new("e", 2, "m", "tangential element displacement"),
];

impl PlaneContact {
    /// (23) with τ: returns the force on the body and the rate of e.
    #[inline]
    pub fn contact(
        &self,
        p: &Vector3<f64>,
        v: &Vector3<f64>,
        e: Vector2<f64>,
        tau: f64,
    ) -> (Vector3<f64>, Vector2<f64>) {
        let depth = self.height - p.z;
        let fn_ = if depth > 0.0 { (self.k * depth - self.b * v.z).max(0.0) } else { 0.0 };
        let d = self.b + tau * self.k;
        let fstar = d * Vector2::new(v.x, v.y) + self.k * e;
        let ft = gsat2(self.mu * fn_, fstar);
        (Vector3::new(-ft.x, -ft.y, fn_), (ft - self.k * e) / d)
    }
}

impl Impedance for PlaneContact {
    fn layout(&self) -> Layout {
        Layout::new(2, vec![PortInfo::new("body", Domain::Point3)])
    }
    #[inline]
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        evaluate_via_points(self, m, y, t, tau, force, dy)
    }
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        PointImpedanceBatch::start(self)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].f[e],
            1 => p.motions[0].v[e],
            2 => self.height - p.motions[0].p.z,
            _ => p.state[e],
        }
    }
    fn energy(&self, m: &[Motion], y: &[f64]) -> Option<f64> {
        let depth = (self.height - m[0].p.z).max(0.0);
        Some(0.5 * self.k * (depth * depth + y[0] * y[0] + y[1] * y[1]))
    }
    /// The switch of (23a): g = min(K δ, K δ − B v_z) > 0 exactly while the normal force
    /// pushes; continuous, zero where the contact closes (δ = 0 while approaching) and where
    /// it opens (K δ = B v_z while leaving). The stepper splits a step there (stepper/events.rs).
    fn switching(&self, m: &[Motion], _y: &[f64], _t: f64) -> Option<f64> {
        let kd = self.k * (self.height - m[0].p.z);
        Some(kd.min(kd - self.b * m[0].v.z))
    }
    fn affine_switching(&self) -> Option<stiction_framework::AffineSwitch> {
        Some(stiction_framework::AffineSwitch { axis: Vector3::z(), level: self.height, k: self.k, b: self.b })
    }
    /// The normal penalty spring (23a) in contact (the tangential one of (23b) is the same K with the extra τK of damping, so the normal direction is the limit).
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: false })
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<stiction_framework::Diagnostic> {
        stiffness_warnings("contact stiffness", self.k, self.b, inertia, step)
    }
}

impl PointImpedance for PlaneContact {
    #[inline]
    fn evaluate_points(
        &self,
        m: &[PointMotion],
        y: &[f64],
        _t: f64,
        tau: f64,
        force: &mut [Vector3<f64>],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let (y, dy) = (&y[..2], &mut dy[..2]);
        let (f, eps) = self.contact(&m[0].p, &m[0].v, Vector2::new(y[0], y[1]), tau);
        force[0] = f;
        dy[0] = eps.x;
        dy[1] = eps.y;
        Ok(())
    }

    const PAIRS: bool = true;

    /// (23) for two contacts at once: the normal forces lane by lane as in
    /// [`PlaneContact::contact`], the tangential element (23b)–(23d) in packed
    /// instructions (one square root, the divisions two at a time), each operation in the
    /// order of `contact` and [`gsat2`], so bit for bit the same (tests/batch.rs).
    #[inline(always)]
    fn evaluate_points_pair(
        pair: [&Self; 2],
        m: [&[PointMotion]; 2],
        y: [&[f64]; 2],
        _t: f64,
        tau: f64,
        force: [&mut [Vector3<f64>]; 2],
        dy: [&mut [f64]; 2],
    ) -> Result<(), (usize, Fault)> {
        let [a, b] = pair;
        let normal = |c: &Self, m: &PointMotion| {
            let depth = c.height - m.p.z;
            if depth > 0.0 {
                (c.k * depth - c.b * m.v.z).max(0.0)
            } else {
                0.0
            }
        };
        let fn_ = [normal(a, &m[0][0]), normal(b, &m[1][0])];
        let lane = |g: fn(&Self) -> f64| f64x2::from([g(a), g(b)]);
        let (k, damp, mu) = (lane(|c| c.k), lane(|c| c.b), lane(|c| c.mu));
        let d = damp + f64x2::splat(tau) * k;
        let (ex, ey) = (f64x2::from([y[0][0], y[1][0]]), f64x2::from([y[0][1], y[1][1]]));
        let (vx, vy) = (f64x2::from([m[0][0].v.x, m[1][0].v.x]), f64x2::from([m[0][0].v.y, m[1][0].v.y]));
        let (fx, fy) = (vx * d + ex * k, vy * d + ey * k);
        // gsat2(μ f_n, f*): f* where ‖f*‖ ≤ μ f_n, else f*·(μ f_n/‖f*‖).
        let limit = mu * f64x2::from(fn_);
        let n = (fx * fx + fy * fy).sqrt();
        let q = limit / n;
        let inside = n.cmp_le(limit);
        let (tx, ty) = (inside.blend(fx, fx * q), inside.blend(fy, fy * q));
        let (ex, ey) = (((tx - ex * k) / d).to_array(), ((ty - ey * k) / d).to_array());
        let (tx, ty) = (tx.to_array(), ty.to_array());
        for (l, (f, dy)) in force.into_iter().zip(dy).enumerate() {
            f[0] = Vector3::new(-tx[l], -ty[l], fn_[l]);
            dy[0] = ex[l];
            dy[1] = ey[l];
        }
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let k = p.positive("K")?;
    let b = p.nonneg("B")?;
    let mu = p.nonneg("mu")?;
    let height = p.f64_or("height", 0.0)?;
    Ok(Built::Impedance(Box::new(PlaneContact { k, b, mu, height })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[r#"{"type": "plane_contact", "K": 10000.0, "B": 10.0, "mu": 0.5, "height": 0.1}"#];

/// Register `plane_contact`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "plane_contact",
        kind: Kind::Impedance,
        summary: "point-on-plane contact with Coulomb friction I_fricKN (23)–(24)",
        params: &[
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "normal and tangential stiffness, > 0" },
            ParamDoc { name: "B", unit: "N·s/m", default: None, doc: "normal and tangential viscosity, ≥ 0" },
            ParamDoc { name: "mu", unit: "", default: None, doc: "friction coefficient, ≥ 0" },
            ParamDoc { name: "height", unit: "m", default: Some("0"), doc: "the plane is z = height, normal +z" },
        ],
        ports: &[PortDoc { name: "body", domain: "point3", doc: "the contact point (on a frame: use \"at\")" }],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two contacts at once give what one at a time gives, bit for bit: free, sticking,
    /// sliding, pulling away (no normal force), and at rest with no friction force at all.
    #[test]
    fn a_pair_is_two_contacts_bit_for_bit() {
        let plane = |mu: f64| PlaneContact { k: 1e5, b: 100.0, mu, height: 0.0 };
        let at = |p: [f64; 3], v: [f64; 3]| PointMotion { p: Vector3::from(p), v: Vector3::from(v) };
        let cases = [
            (plane(0.5), at([0.0, 0.0, 0.01], [1.0, 0.0, -1.0]), [0.0, 0.0]),
            (plane(0.5), at([0.0, 0.0, -9.81e-5], [1e-7, -2e-7, 0.0]), [1e-6, 0.0]),
            (plane(0.5), at([0.3, 0.1, -9.81e-5], [0.5, -0.25, 1e-3]), [3e-5, -1e-5]),
            (plane(0.2), at([0.0, 0.0, -1e-4], [0.0, 0.0, 20.0]), [1e-5, 1e-5]),
            (plane(0.0), at([0.0, 0.0, -1e-4], [0.0, 0.0, 0.0]), [0.0, -0.0]),
            (plane(0.5), at([0.0, 0.0, -1e-4], [0.0, 0.0, 0.0]), [0.0, 0.0]),
        ];
        for (a, ma, ya) in &cases {
            for (b, mb, yb) in &cases {
                let one = |c: &PlaneContact, m: &PointMotion, y: &[f64; 2]| {
                    let (mut f, mut dy) = ([Vector3::zeros()], [0.0; 2]);
                    c.evaluate_points(&[*m], y, 0.0, 5e-5, &mut f, &mut dy).expect("contact");
                    (f[0].map(f64::to_bits), dy.map(f64::to_bits))
                };
                let (mut fa, mut fb, mut da, mut db) = ([Vector3::zeros()], [Vector3::zeros()], [0.0; 2], [0.0; 2]);
                let (m, y) = ([&[*ma][..], &[*mb][..]], [&ya[..], &yb[..]]);
                PlaneContact::evaluate_points_pair([a, b], m, y, 0.0, 5e-5, [&mut fa, &mut fb], [&mut da, &mut db])
                    .expect("pair");
                let pair =
                    ((fa[0].map(f64::to_bits), da.map(f64::to_bits)), (fb[0].map(f64::to_bits), db.map(f64::to_bits)));
                assert_eq!(pair, (one(a, ma, ya), one(b, mb, yb)), "{ma:?} {ya:?} with {mb:?} {yb:?}");
            }
        }
    }
}
