//! Force and torque sources: an impedance with no state that applies a prescribed
//! function of time u(t) to one port (the stage time t = kT + T_{r−1} of (28b)).

use nalgebra::Vector3;
use stiction_framework::batch::{ImpedanceBatch, PointImpedance, PointImpedanceBatch, PointMotion};
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::signal::TimeFunction;
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// A prescribed force (and moment, on frames) at one port.
#[derive(Clone, Debug)]
pub struct ForceSource {
    pub domain: Domain,
    pub force: [TimeFunction; 3],
    pub moment: [TimeFunction; 3],
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "applied force (scalar: element 0)"),
    SignalInfo::new("m", 3, "N·m", "applied moment (frame ports)"),
];

impl ForceSource {
    /// A scalar force or torque u(t).
    pub fn scalar(f: TimeFunction) -> Self {
        let z = || TimeFunction::Constant(0.0);
        ForceSource { domain: Domain::Scalar, force: [f, z(), z()], moment: [z(), z(), z()] }
    }

    /// The force at time t.
    #[inline]
    pub fn at(&self, t: f64) -> Force {
        let f = Vector3::new(self.force[0].eval(t), self.force[1].eval(t), self.force[2].eval(t));
        match self.domain {
            Domain::Frame => {
                Force::wrench(f, Vector3::new(self.moment[0].eval(t), self.moment[1].eval(t), self.moment[2].eval(t)))
            }
            _ => Force::point(f),
        }
    }
}

impl Impedance for ForceSource {
    fn layout(&self) -> Layout {
        Layout::new(0, vec![PortInfo::new("body", self.domain)])
    }
    #[inline]
    fn evaluate(
        &self,
        _m: &[Motion],
        _y: &[f64],
        t: f64,
        _tau: f64,
        force: &mut [Force],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        force[0] = self.at(t);
        Ok(())
    }
    /// Scalar and point sources run in typed batches (frame sources, with a moment, do not).
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        PointImpedanceBatch::start(self)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        let n = if self.domain == Domain::Scalar { 1 } else { 3 };
        let mut v = vec![SignalInfo { len: n, ..SIGNALS[0] }];
        if self.domain == Domain::Frame {
            v.push(SIGNALS[1]);
        }
        v
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].f[e],
            _ => p.forces[0].m[e],
        }
    }
}

impl PointImpedance for ForceSource {
    type Shared = ();

    #[inline]
    fn evaluate_points(
        &self,
        _m: &[PointMotion],
        _y: &[f64],
        t: f64,
        _tau: f64,
        force: &mut [Vector3<f64>],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        force[0] = self.at(t).f;
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let domain = match p.choice("domain", &["scalar", "point3", "frame"])? {
        "point3" => Domain::Point3,
        "frame" => Domain::Frame,
        _ => Domain::Scalar,
    };
    let src = if domain == Domain::Scalar {
        let f = p.time_fn("force")?;
        ForceSource::scalar(f)
    } else {
        let force = p.time_fn3_or_zero("force")?;
        let moment = p.time_fn3_or_zero("moment")?;
        if domain == Domain::Point3 && p.has("moment") {
            return Err(p.err("moment", "only frame sources apply a moment"));
        }
        ForceSource { domain, force, moment }
    };
    Ok(Built::Impedance(Box::new(src)))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "force_source", "domain": "frame", "force": [1, 0, 0], "moment": [0, 0, 1]}"#,
    r#"{"type": "force_source", "domain": "scalar", "force": "sin(t)"}"#,
];

/// Register `force_source`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "force_source",
        kind: Kind::Impedance,
        summary: "prescribed force/torque u(t): constant, expression of t, piecewise or table",
        params: &[
            ParamDoc {
                name: "domain",
                unit: "",
                default: Some("\"scalar\""),
                doc: "\"scalar\", \"point3\" or \"frame\"",
            },
            ParamDoc {
                name: "force",
                unit: "N",
                default: None,
                doc: "scalar: one time function; point3/frame: [fx, fy, fz]",
            },
            ParamDoc { name: "moment", unit: "N·m", default: Some("[0, 0, 0]"), doc: "frame only: [mx, my, mz], each a time function" },
        ],
        ports: &[PortDoc { name: "body", domain: "scalar|point3|frame", doc: "where the force acts" }],
        signals: SIGNALS,
        build,
    });
}
