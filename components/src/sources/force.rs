//! Force and torque sources: an impedance with no state that applies a prescribed
//! function of time u(t) to one port (the stage time t = kT + T_{r−1} of (28b)). Under RK4
//! a table's rows and a piecewise `until` end a sub-step, and u is read from the piece of
//! the sub-step (as for `velocity_source`: fourth order through the kinks).

use nalgebra::Vector3;
use stiction_framework::batch::{ImpedanceBatch, PointImpedance, PointImpedanceBatch, PointMotion};
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::signal::{next_break_of, TimeFunction, Window};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// A prescribed force (and moment, on frames) at one port.
#[derive(Clone, Debug)]
pub struct ForceSource {
    pub domain: Domain,
    pub force: [TimeFunction; 3],
    pub moment: [TimeFunction; 3],
    /// The sub-step the stages belong to (RK4 with a table or piecewise input): u is read
    /// from the piece that holds inside it.
    pub window: Window,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "applied force (scalar: element 0)"),
    SignalInfo::new("m", 3, "N·m", "applied moment (frame ports)"),
];

impl ForceSource {
    /// A scalar force or torque u(t).
    pub fn scalar(f: TimeFunction) -> Self {
        let z = || TimeFunction::Constant(0.0);
        ForceSource { domain: Domain::Scalar, force: [f, z(), z()], moment: [z(), z(), z()], window: Window::default() }
    }

    /// The force at time t.
    #[inline]
    pub fn at(&self, t: f64) -> Force {
        let u = |f: &TimeFunction| self.window.eval(f, t);
        let f = Vector3::new(u(&self.force[0]), u(&self.force[1]), u(&self.force[2]));
        match self.domain {
            Domain::Frame => Force::wrench(f, Vector3::new(u(&self.moment[0]), u(&self.moment[1]), u(&self.moment[2]))),
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
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        next_break_of(self.force.iter().chain(&self.moment), t0, t1)
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.window.set(t0, t1);
    }
    /// Scalar and point sources run in typed batches (frame sources, with a moment, do not).
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        PointImpedanceBatch::start(self)
    }
    fn join_batch(&self, open: &mut dyn ImpedanceBatch) -> bool {
        PointImpedanceBatch::join(open, self)
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
        ForceSource { domain, force, moment, window: Window::default() }
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
