//! 3-D point mass (7): ṗ = v, v̇ = f/M (+ gravity). One point port `body`.

use nalgebra::Vector3;
use stiction_framework::batch::{
    derivative_via_points, AdmittanceBatch, PointAdmittance, PointAdmittanceBatch, PortStates,
};
use stiction_framework::component::{Admittance, Fault, PortLaws, Probe, SignalInfo, StageBody, StageLaw};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// A point mass in space: state [p (3), v (3)]. Built with [`PointMass::new`]; the mass is
/// read-only ([`PointMass::mass`]) so that its inverse stays in step. Its batch steps only
/// [`PointMassDynamics`], so the mass and the initial state stay out of the stepper's way.
#[derive(Clone, Debug)]
pub struct PointMass {
    dynamics: PointMassDynamics,
    /// Mass (kg).
    mass: f64,
    pub p0: Vector3<f64>,
    pub v0: Vector3<f64>,
}

/// What a stage reads of a point mass for (7): 1/M and gravity, 32 bytes, so that two
/// members of a batch share a cache line (with the mass and initial state beside them,
/// 88 bytes, chain-10k's admittances missed the 1 MiB L2 cache 7 % more often, cachegrind).
/// As an admittance on its own it starts at rest at the origin.
#[derive(Clone, Debug)]
pub struct PointMassDynamics {
    /// Gravitational acceleration (m/s²).
    gravity: Vector3<f64>,
    /// 1/M, computed once ([`PointMass::new`]) rather than in every stage.
    inv_mass: f64,
}

impl PointMass {
    /// A point mass of `mass` (kg) under `gravity`, starting at `p0` with velocity `v0`.
    pub fn new(mass: f64, gravity: Vector3<f64>, p0: Vector3<f64>, v0: Vector3<f64>) -> PointMass {
        PointMass { dynamics: PointMassDynamics { gravity, inv_mass: 1.0 / mass }, mass, p0, v0 }
    }

    /// Mass (kg).
    pub fn mass(&self) -> f64 {
        self.mass
    }

    /// Gravitational acceleration (m/s²).
    pub fn gravity(&self) -> Vector3<f64> {
        self.dynamics.gravity
    }
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("p", 3, "m", "position").of_state(),
    SignalInfo::new("v", 3, "m/s", "velocity").of_state(),
    SignalInfo::new("a", 3, "m/s²", "acceleration"),
    SignalInfo::new("f", 3, "N", "total force from the port (without gravity)"),
];

impl Admittance for PointMass {
    fn layout(&self) -> Layout {
        self.dynamics.layout()
    }
    fn init(&self, x: &mut [f64]) {
        x[..3].copy_from_slice(self.p0.as_slice());
        x[3..6].copy_from_slice(self.v0.as_slice());
    }
    #[inline]
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        self.dynamics.port_motion(x, port)
    }
    #[inline]
    fn port_states(&self, port: usize) -> Option<PortStates> {
        self.dynamics.port_states(port)
    }
    #[inline]
    fn derivative(&self, x: &[f64], f: &[Force], t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        derivative_via_points(&self.dynamics, x, f, t, tau, dx)
    }
    fn batch(&self) -> Option<Box<dyn AdmittanceBatch>> {
        PointAdmittanceBatch::start(&self.dynamics)
    }
    fn join_batch(&self, open: &mut dyn AdmittanceBatch) -> bool {
        PointAdmittanceBatch::join(open, &self.dynamics)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        self.dynamics.signal(which, e, p)
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let v = Vector3::new(x[3], x[4], x[5]);
        let p = Vector3::new(x[0], x[1], x[2]);
        Some(0.5 * self.mass * v.norm_squared() - self.mass * self.dynamics.gravity.dot(&p))
    }
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        Some(self.mass)
    }
    fn takes_stage_laws(&self, _port: usize) -> bool {
        true
    }
    /// The implicit stage with the coupled element's law ([`StageLaw::implicit_rate`];
    /// gravity among the forces, so that a mass held at rest keeps v̇ = 0).
    fn implicit_rate(&self, _x: &[f64], _forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        let a = StageLaw::implicit_rate(laws.of(0), self.mass, Vector3::new(dx[3], dx[4], dx[5]), tau);
        dx[3..6].copy_from_slice(a.as_slice());
    }
    fn stage_body(&self, x: &[f64], dx: &[f64], _port: usize) -> Option<StageBody> {
        let (com, a) = (Vector3::new(x[0], x[1], x[2]), Vector3::new(dx[3], dx[4], dx[5]));
        Some(StageBody::point(self.mass, com, a))
    }
    fn set_stage_body(&self, _x: &[f64], _forces: &[Force], _tau: f64, _ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let Some(body) = bodies.first() else { return };
        dx[3..6].copy_from_slice(body.a.as_slice());
    }
}

impl Admittance for PointMassDynamics {
    fn layout(&self) -> Layout {
        Layout::new(6, vec![PortInfo::new("body", Domain::Point3)])
    }
    /// At rest at the origin ([`PointMass`] keeps an initial state).
    fn init(&self, x: &mut [f64]) {
        x[..6].fill(0.0);
    }
    #[inline]
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        Motion::point(Vector3::new(x[0], x[1], x[2]), Vector3::new(x[3], x[4], x[5]))
    }
    #[inline]
    fn port_states(&self, _port: usize) -> Option<PortStates> {
        Some(PortStates { p: 0, v: 3 })
    }
    #[inline]
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
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.state[e],
            1 => p.state[3 + e],
            2 => p.rate[3 + e],
            _ => p.forces[0].f[e],
        }
    }
}

impl PointAdmittance for PointMassDynamics {
    /// (7): [ṗ; v̇] = [v; f/M + g].
    #[inline]
    fn derivative_points(
        &self,
        x: &[f64],
        f: &[Vector3<f64>],
        _t: f64,
        _tau: f64,
        dx: &mut [f64],
    ) -> Result<(), Fault> {
        let (x, dx, f) = (&x[..6], &mut dx[..6], f[0]);
        let inv = self.inv_mass;
        for i in 0..3 {
            dx[i] = x[3 + i];
            dx[3 + i] = f[i] * inv + self.gravity[i];
        }
        Ok(())
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let mass = p.positive("mass")?;
    let gravity = p.vec3_or("gravity", [0.0; 3])?;
    let (mut p0, mut v0) = (Vector3::zeros(), Vector3::zeros());
    if let Some(mut init) = p.object("init")? {
        p0 = init.vec3_or("p", [0.0; 3])?;
        v0 = init.vec3_or("v", [0.0; 3])?;
        init.finish()?;
    }
    Ok(Built::Admittance(Box::new(PointMass::new(mass, gravity, p0, v0))))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] =
    &[r#"{"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -9.81], "init": {"p": [0, 0, 1], "v": [1, 0, 0]}}"#];

/// Register `point_mass`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "point_mass",
        kind: Kind::Admittance,
        summary: "3-D point mass, M v̇ = f + M g (7)",
        params: &[
            ParamDoc { name: "mass", unit: "kg", default: None, doc: "mass, > 0" },
            ParamDoc { name: "gravity", unit: "m/s²", default: Some("[0, 0, 0]"), doc: "gravitational acceleration" },
            ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"p\", \"v\"}" },
            ParamDoc { name: "init.p", unit: "m", default: Some("[0, 0, 0]"), doc: "initial position" },
            ParamDoc { name: "init.v", unit: "m/s", default: Some("[0, 0, 0]"), doc: "initial velocity" },
        ],
        ports: &[PortDoc { name: "body", domain: "point3", doc: "the mass" }],
        signals: SIGNALS,
        build,
    });
}
