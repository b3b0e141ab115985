//! 1-D mass: M q̈ = f, the scalar case of (7). One scalar port `body`.

use nalgebra::Vector3;
use stiction_framework::batch::{
    derivative_via_points, AdmittanceBatch, PointAdmittance, PointAdmittanceBatch, PortStates,
};
use stiction_framework::component::{Admittance, Fault, PortLaws, Probe, SignalInfo, StageBody, StageLaw};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// A point mass on a line (or a rotor on an axis): state [q, v].
#[derive(Clone, Debug)]
pub struct Mass {
    /// Mass (kg) or moment of inertia (kg·m²).
    pub mass: f64,
    /// Constant external force (N), e.g. weight along the line.
    pub force: f64,
    pub q0: f64,
    pub v0: f64,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 1, "m", "position (or angle)").of_state(),
    SignalInfo::new("v", 1, "m/s", "velocity").of_state(),
    SignalInfo::new("a", 1, "m/s²", "acceleration"),
    SignalInfo::new("f", 1, "N", "total force on the body from its port (without `force`)"),
];

impl Admittance for Mass {
    fn layout(&self) -> Layout {
        Layout::new(2, vec![PortInfo::new("body", Domain::Scalar)])
    }
    fn init(&self, x: &mut [f64]) {
        x[0] = self.q0;
        x[1] = self.v0;
    }
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        Motion::scalar(x[0], x[1])
    }
    fn port_states(&self, _port: usize) -> Option<PortStates> {
        Some(PortStates { p: 0, v: 1 })
    }
    fn derivative(&self, x: &[f64], f: &[Force], t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        derivative_via_points(self, x, f, t, tau, dx)
    }
    fn batch(&self) -> Option<Box<dyn AdmittanceBatch>> {
        PointAdmittanceBatch::start(self)
    }
    fn join_batch(&self, open: &mut dyn AdmittanceBatch) -> bool {
        PointAdmittanceBatch::join(open, self)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _elem: usize, p: &Probe) -> f64 {
        match which {
            0 => p.state[0],
            1 => p.state[1],
            2 => p.rate[1],
            _ => p.forces[0].value(),
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        Some(0.5 * self.mass * x[1] * x[1] - self.force * x[0])
    }
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        Some(self.mass)
    }
    fn takes_stage_laws(&self, _port: usize) -> bool {
        true
    }
    /// The implicit stage with the coupled element's law ([`StageLaw::implicit_rate`]).
    fn implicit_rate(&self, _x: &[f64], _forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        dx[1] = StageLaw::implicit_rate(laws.of(0), self.mass, Vector3::new(dx[1], 0.0, 0.0), tau).x;
    }
    /// Along its one axis (x), the group's other two at rest.
    fn stage_body(&self, x: &[f64], dx: &[f64], _port: usize) -> Option<StageBody> {
        let (com, a) = (Vector3::new(x[0], 0.0, 0.0), Vector3::new(dx[1], 0.0, 0.0));
        Some(StageBody::point(self.mass, com, a))
    }
    fn set_stage_body(&self, _x: &[f64], _forces: &[Force], _tau: f64, _ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let Some(body) = bodies.first() else { return };
        dx[1] = body.a.x;
    }
}

impl PointAdmittance for Mass {
    /// (7) in one dimension: q̇ = v, v̇ = f/M.
    #[inline]
    fn derivative_points(
        &self,
        x: &[f64],
        f: &[Vector3<f64>],
        _t: f64,
        _tau: f64,
        dx: &mut [f64],
    ) -> Result<(), Fault> {
        dx[0] = x[1];
        dx[1] = (f[0].x + self.force) / self.mass;
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let mass = p.positive("mass")?;
    let force = p.f64_or("force", 0.0)?;
    let (mut q0, mut v0) = (0.0, 0.0);
    if let Some(mut init) = p.object("init")? {
        q0 = init.f64_or("q", 0.0)?;
        v0 = init.f64_or("v", 0.0)?;
        init.finish()?;
    }
    Ok(Built::Admittance(Box::new(Mass { mass, force, q0, v0 })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "mass", "mass": 1.0, "force": 0.5, "init": {"q": 0.1, "v": -0.2}}"#,
];

/// Register `mass`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "mass",
        kind: Kind::Admittance,
        summary: "1-D mass or rotor, M q̈ = f (7)",
        params: &[
            ParamDoc { name: "mass", unit: "kg", default: None, doc: "mass (or inertia), > 0" },
            ParamDoc { name: "force", unit: "N", default: Some("0"), doc: "constant external force along the line" },
            ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"q\", \"v\"}" },
            ParamDoc { name: "init.q", unit: "m", default: Some("0"), doc: "initial position" },
            ParamDoc { name: "init.v", unit: "m/s", default: Some("0"), doc: "initial velocity" },
        ],
        ports: &[PortDoc { name: "body", domain: "scalar", doc: "the mass" }],
        signals: SIGNALS,
        build,
    });
}
