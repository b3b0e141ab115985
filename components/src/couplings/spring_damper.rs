//! Spring–damper (10): f = K p + B v on the relative motion of port b with respect to
//! port a, for scalar and point ports. With a rest length L > 0 on point ports it acts
//! along the line between the points: f = (K (‖d‖ − L) + B ḋ·n̂) n̂.

use crate::stability::stiffness_warnings;
use crate::two_port::{dims, domain_param, two_ports};
use nalgebra::Vector3;
use stiction_framework::batch::{
    evaluate_via_points, ImpedanceBatch, PointImpedance, PointImpedanceBatch, PointMotion,
};
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;
use wide::f64x2;

/// Linear spring–damper between two ports.
#[derive(Clone, Debug)]
pub struct SpringDamper {
    pub domain: Domain,
    /// Stiffness (N/m or N·m/rad).
    pub k: f64,
    /// Viscosity (N·s/m or N·m·s/rad).
    pub b: f64,
    /// Rest length (m); 0 gives the vector form K p + B v of (10).
    pub rest_length: f64,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "force on port b (scalar: element 0)"),
    SignalInfo::new("d", 3, "m", "displacement of b relative to a (scalar: element 0)"),
];

impl SpringDamper {
    /// Force on port b for relative position `d` and velocity `v`: (10).
    #[inline]
    pub fn force(&self, d: Vector3<f64>, v: Vector3<f64>) -> Vector3<f64> {
        if self.rest_length > 0.0 {
            let len = d.norm();
            if len == 0.0 {
                return -self.b * v;
            }
            let n = d / len;
            -(self.k * (len - self.rest_length) + self.b * v.dot(&n)) * n
        } else {
            -(self.k * d + self.b * v)
        }
    }
}

impl Impedance for SpringDamper {
    fn layout(&self) -> Layout {
        Layout::new(0, two_ports(self.domain))
    }
    #[inline]
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        f: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        evaluate_via_points(self, m, y, t, tau, f, dy)
    }
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        PointImpedanceBatch::start(self)
    }
    fn join_batch(&self, open: &mut dyn ImpedanceBatch) -> bool {
        PointImpedanceBatch::join(open, self)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| SignalInfo { len: dims(self.domain), ..*s }).collect()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[1].f[e],
            _ => (p.motions[1].p - p.motions[0].p)[e],
        }
    }
    /// The spring–damper itself (10).
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: false, coupled: false })
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<stiction_framework::Diagnostic> {
        stiffness_warnings("spring", self.k, self.b, inertia, step)
    }
    fn energy(&self, m: &[Motion], _y: &[f64]) -> Option<f64> {
        let d = m[1].p - m[0].p;
        let s = if self.rest_length > 0.0 { d.norm() - self.rest_length } else { d.norm() };
        Some(0.5 * self.k * s * s)
    }
}

impl PointImpedance for SpringDamper {
    type Shared = ();

    #[inline]
    fn evaluate_points(
        &self,
        m: &[PointMotion],
        _y: &[f64],
        _t: f64,
        _tau: f64,
        f: &mut [Vector3<f64>],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        let (m, f) = (&m[..2], &mut f[..2]);
        let fb = self.force(m[1].p - m[0].p, m[1].v - m[0].v);
        f[1] = fb;
        f[0] = -fb;
        Ok(())
    }

    const PAIRS: bool = true;

    /// (10) for two springs with a rest length at once, one per lane of packed
    /// instructions, each operation in the order of [`SpringDamper::force`] (so bit for
    /// bit the same, tests/batch.rs); any other pair goes one by one. chain-10k: the spring
    /// phase takes half the instructions.
    #[inline(always)]
    fn evaluate_points_pair(
        pair: [&Self; 2],
        _shared: (),
        m: [&[PointMotion]; 2],
        _y: [&[f64]; 2],
        t: f64,
        tau: f64,
        f: [&mut [Vector3<f64>]; 2],
        _dy: [&mut [f64]; 2],
    ) -> Result<(), (usize, Fault)> {
        let [a, b] = pair;
        let [f0, f1] = f;
        let lane = |g: fn(&[PointMotion]) -> f64| f64x2::from([g(&m[0][..2]), g(&m[1][..2])]);
        let d = [lane(|m| m[1].p.x - m[0].p.x), lane(|m| m[1].p.y - m[0].p.y), lane(|m| m[1].p.z - m[0].p.z)];
        let len = ((d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]).sqrt();
        let [l0, l1] = len.to_array();
        if !(a.rest_length > 0.0 && b.rest_length > 0.0 && l0 != 0.0 && l1 != 0.0) {
            a.evaluate_points(m[0], &[], t, tau, f0, &mut []).map_err(|e| (0, e))?;
            return b.evaluate_points(m[1], &[], t, tau, f1, &mut []).map_err(|e| (1, e));
        }
        let v = [lane(|m| m[1].v.x - m[0].v.x), lane(|m| m[1].v.y - m[0].v.y), lane(|m| m[1].v.z - m[0].v.z)];
        let n = [d[0] / len, d[1] / len, d[2] / len];
        let vn = (v[0] * n[0] + v[1] * n[1]) + v[2] * n[2];
        let (k, rest, damp) =
            (f64x2::from([a.k, b.k]), f64x2::from([a.rest_length, b.rest_length]), f64x2::from([a.b, b.b]));
        // −y as (−1)·y: exact, and −0 for +0 as the scalar `-` gives (`wide`'s negation is 0 − y).
        let s = f64x2::splat(-1.0) * (k * (len - rest) + damp * vn);
        let [x, y, z] = [(n[0] * s).to_array(), (n[1] * s).to_array(), (n[2] * s).to_array()];
        for (l, f) in [f0, f1].into_iter().enumerate() {
            let fb = Vector3::new(x[l], y[l], z[l]);
            f[1] = fb;
            f[0] = -fb;
        }
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let domain = domain_param(p)?;
    let k = p.positive("K")?;
    let b = p.nonneg_or("B", 0.0)?;
    let rest_length = p.nonneg_or("rest_length", 0.0)?;
    if rest_length > 0.0 && domain == Domain::Scalar {
        return Err(p.err("rest_length", "only point3 springs have a rest length (offset the scalar ports instead)"));
    }
    Ok(Built::Impedance(Box::new(SpringDamper { domain, k, b, rest_length })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] =
    &[r#"{"type": "spring_damper", "domain": "point3", "K": 100.0, "B": 1.0, "rest_length": 0.5}"#];

/// Register `spring_damper`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "spring_damper",
        kind: Kind::Impedance,
        summary: "linear spring–damper f = K p + B v (10), scalar or 3-D, optional rest length",
        params: &[
            ParamDoc { name: "domain", unit: "", default: Some("\"scalar\""), doc: "\"scalar\" or \"point3\"" },
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "stiffness, > 0" },
            ParamDoc { name: "B", unit: "N·s/m", default: Some("0"), doc: "viscosity, ≥ 0" },
            ParamDoc {
                name: "rest_length",
                unit: "m",
                default: Some("0"),
                doc: "point3 only: acts along the line between the points",
            },
        ],
        ports: &[
            PortDoc { name: "a", domain: "scalar|point3", doc: "reference end (receives the reaction)" },
            PortDoc { name: "b", domain: "scalar|point3", doc: "moving end" },
        ],
        signals: SIGNALS,
        build,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn motion(p: [f64; 3], v: [f64; 3]) -> PointMotion {
        PointMotion { p: Vector3::from(p), v: Vector3::from(v) }
    }

    /// Two springs at once give the forces of one at a time, bit for bit: stretched,
    /// compressed, at rest length with no rate (a force of exactly −0 or +0), of zero
    /// length, and without a rest length, in every pairing.
    #[test]
    fn a_pair_is_two_springs_bit_for_bit() {
        let spring = |rest_length: f64| SpringDamper { domain: Domain::Point3, k: 1e4, b: 10.0, rest_length };
        let cases: Vec<(SpringDamper, [PointMotion; 2])> = vec![
            (spring(0.1), [motion([0.0; 3], [0.0; 3]), motion([0.13, -0.02, 1e-5], [0.3, 0.0, -2.0])]),
            (spring(0.1), [motion([1.0, 2.0, 3.0], [1.0; 3]), motion([1.05, 2.0, 3.0], [-1.0, 0.5, 0.0])]),
            (spring(0.1), [motion([0.0; 3], [0.0; 3]), motion([0.1, 0.0, 0.0], [0.0; 3])]),
            (spring(0.1), [motion([0.0; 3], [0.0; 3]), motion([-0.1, 0.0, -0.0], [0.0, 1.0, 0.0])]),
            (spring(0.1), [motion([0.5; 3], [0.0; 3]), motion([0.5; 3], [2.0, 0.0, 0.0])]),
            (spring(0.0), [motion([0.0; 3], [0.0; 3]), motion([0.2, 0.1, 0.0], [0.0, 0.0, 1.0])]),
        ];
        for (a, ma) in &cases {
            for (b, mb) in &cases {
                let (mut fa, mut fb) = ([Vector3::zeros(); 2], [Vector3::zeros(); 2]);
                let (mut pa, mut pb) = ([Vector3::zeros(); 2], [Vector3::zeros(); 2]);
                a.evaluate_points(ma, &[], 0.0, 1e-4, &mut fa, &mut []).expect("spring");
                b.evaluate_points(mb, &[], 0.0, 1e-4, &mut fb, &mut []).expect("spring");
                SpringDamper::evaluate_points_pair(
                    [a, b],
                    (),
                    [ma, mb],
                    [&[], &[]],
                    0.0,
                    1e-4,
                    [&mut pa, &mut pb],
                    [&mut [], &mut []],
                )
                .expect("pair");
                let bits = |f: &[Vector3<f64>; 2]| f.map(|v| v.map(f64::to_bits));
                assert_eq!((bits(&pa), bits(&pb)), (bits(&fa), bits(&fb)), "{ma:?} with {mb:?}");
            }
        }
    }
}
