//! Gravity as a component: f = m g on a point or frame port (for bodies whose own
//! `gravity` parameter is not used, e.g. a load hung on another body).

use nalgebra::Vector3;
use stiction_framework::batch::{ImpedanceBatch, PointImpedance, PointImpedanceBatch, PointMotion};
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// Weight m g of a mass attached at a point.
#[derive(Clone, Debug)]
pub struct Gravity {
    pub weight: Vector3<f64>,
    pub domain: Domain,
}

const SIGNALS: &[SignalInfo] = &[SignalInfo::new("f", 3, "N", "weight")];

impl Impedance for Gravity {
    fn layout(&self) -> Layout {
        Layout::new(0, vec![PortInfo::new("body", self.domain)])
    }
    fn evaluate(
        &self,
        _m: &[Motion],
        _y: &[f64],
        _t: f64,
        _tau: f64,
        force: &mut [Force],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        force[0] = Force::point(self.weight);
        Ok(())
    }
    /// Weights on points run in typed batches (on frames they keep the per-component path).
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        PointImpedanceBatch::start(self)
    }
    fn join_batch(&self, open: &mut dyn ImpedanceBatch) -> bool {
        PointImpedanceBatch::join(open, self)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, _which: usize, e: usize, p: &Probe) -> f64 {
        p.forces[0].f[e]
    }
    fn energy(&self, m: &[Motion], _y: &[f64]) -> Option<f64> {
        Some(-self.weight.dot(&m[0].p))
    }
}

impl PointImpedance for Gravity {
    type Shared = ();

    #[inline]
    fn evaluate_points(
        &self,
        _m: &[PointMotion],
        _y: &[f64],
        _t: f64,
        _tau: f64,
        force: &mut [Vector3<f64>],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        force[0] = self.weight;
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let mass = p.positive("mass")?;
    let g = p.vec3_or("g", [0.0, 0.0, -9.81])?;
    let domain = match p.choice("domain", &["point3", "frame"])? {
        "frame" => Domain::Frame,
        _ => Domain::Point3,
    };
    Ok(Built::Impedance(Box::new(Gravity { weight: mass * g, domain })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "gravity", "mass": 2.0, "g": [0, 0, -9.81], "domain": "frame"}"#,
];

/// Register `gravity`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "gravity",
        kind: Kind::Impedance,
        summary: "weight m g applied at a point",
        params: &[
            ParamDoc { name: "mass", unit: "kg", default: None, doc: "mass, > 0" },
            ParamDoc { name: "g", unit: "m/s²", default: Some("[0, 0, -9.81]"), doc: "gravitational acceleration" },
            ParamDoc { name: "domain", unit: "", default: Some("\"point3\""), doc: "\"point3\" or \"frame\"" },
        ],
        ports: &[PortDoc { name: "body", domain: "point3|frame", doc: "where the weight acts" }],
        signals: SIGNALS,
        build,
    });
}
