//! Rigid body with a unit quaternion, (25)–(26): ṗ = v, v̇ = f/M + g, q̇ = Q(ω, q),
//! ω̇ = J⁻¹(τ − ω × Jω), with ω and J in body coordinates. One frame port `body` at the
//! centre of mass; other points of the body are reached by connection offsets (`at`).

use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};
use stiction_framework::component::{Admittance, Fault, PortLaws, Probe, RigidInertia, SignalInfo, StageBody, StageLaw};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// A rigid body: state [p (3), v (3), q (4: w, x, y, z), ω_body (3)] as in (25).
#[derive(Clone, Debug)]
pub struct RigidBody {
    /// Mass (kg).
    pub mass: f64,
    /// Inertia about the centre of mass in body coordinates (kg·m²).
    pub inertia: Matrix3<f64>,
    inertia_inv: Matrix3<f64>,
    /// Gravitational acceleration (m/s²).
    pub gravity: Vector3<f64>,
    pub p0: Vector3<f64>,
    pub v0: Vector3<f64>,
    pub q0: UnitQuaternion<f64>,
    /// Initial angular velocity in world coordinates (rad/s).
    pub w0: Vector3<f64>,
}

impl RigidBody {
    /// A body with the given mass and body-frame inertia, at rest at the origin.
    /// Returns `None` if the inertia is not invertible.
    pub fn new(mass: f64, inertia: Matrix3<f64>, gravity: Vector3<f64>) -> Option<RigidBody> {
        let inertia_inv = inertia.try_inverse()?;
        Some(RigidBody {
            mass,
            inertia,
            inertia_inv,
            gravity,
            p0: Vector3::zeros(),
            v0: Vector3::zeros(),
            q0: UnitQuaternion::identity(),
            w0: Vector3::zeros(),
        })
    }

    #[inline]
    fn rotation(x: &[f64]) -> UnitQuaternion<f64> {
        UnitQuaternion::new_unchecked(Quaternion::new(x[6], x[7], x[8], x[9]))
    }
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("p", 3, "m", "position of the centre of mass").of_state(),
    SignalInfo::new("v", 3, "m/s", "velocity of the centre of mass").of_state(),
    SignalInfo::new("q", 4, "", "attitude quaternion (w, x, y, z)").of_state(),
    SignalInfo::new("w", 3, "rad/s", "angular velocity, world frame").of_state(),
    SignalInfo::new("w_body", 3, "rad/s", "angular velocity, body frame").of_state(),
    SignalInfo::new("f", 3, "N", "total force from the port (without gravity)"),
    SignalInfo::new("m", 3, "N·m", "total moment about the centre of mass, world frame"),
];

impl Admittance for RigidBody {
    fn layout(&self) -> Layout {
        Layout::new(13, vec![PortInfo::new("body", Domain::Frame)])
    }
    fn init(&self, x: &mut [f64]) {
        x[..3].copy_from_slice(self.p0.as_slice());
        x[3..6].copy_from_slice(self.v0.as_slice());
        let q = self.q0.quaternion();
        x[6..10].copy_from_slice(&[q.w, q.i, q.j, q.k]);
        let wb = self.q0.inverse() * self.w0;
        x[10..13].copy_from_slice(wb.as_slice());
    }
    #[inline]
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        let rot = Self::rotation(x);
        let wb = Vector3::new(x[10], x[11], x[12]);
        Motion::frame(Vector3::new(x[0], x[1], x[2]), Vector3::new(x[3], x[4], x[5]), rot, rot * wb)
    }
    /// (26): the Newton–Euler equations with q̇ = ½ q ⊗ (0, ω_body).
    #[inline]
    fn derivative(&self, x: &[f64], f: &[Force], _t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let inv_m = 1.0 / self.mass;
        for i in 0..3 {
            dx[i] = x[3 + i];
            dx[3 + i] = f[0].f[i] * inv_m + self.gravity[i];
        }
        let q = Quaternion::new(x[6], x[7], x[8], x[9]);
        let wb = Vector3::new(x[10], x[11], x[12]);
        let qd = q * Quaternion::new(0.0, wb.x, wb.y, wb.z) * 0.5;
        dx[6] = qd.w;
        dx[7] = qd.i;
        dx[8] = qd.j;
        dx[9] = qd.k;
        // Moment into body coordinates: Rᵀ m (q is unit up to round-off; normalised per step).
        let rot = UnitQuaternion::new_unchecked(q);
        let mb = rot.inverse_transform_vector(&f[0].m);
        let wd = self.inertia_inv * (mb - wb.cross(&(self.inertia * wb)));
        dx[10] = wd.x;
        dx[11] = wd.y;
        dx[12] = wd.z;
        Ok(())
    }
    /// Renormalise the quaternion after each step.
    fn post_step(&self, x: &mut [f64]) {
        let n = (x[6] * x[6] + x[7] * x[7] + x[8] * x[8] + x[9] * x[9]).sqrt();
        if n > 0.0 {
            for v in &mut x[6..10] {
                *v /= n;
            }
        }
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        let x = p.state;
        match which {
            0 => x[e],
            1 => x[3 + e],
            2 => x[6 + e],
            3 => (Self::rotation(x) * Vector3::new(x[10], x[11], x[12]))[e],
            4 => x[10 + e],
            5 => p.forces[0].f[e],
            _ => p.forces[0].m[e],
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let v = Vector3::new(x[3], x[4], x[5]);
        let wb = Vector3::new(x[10], x[11], x[12]);
        let p = Vector3::new(x[0], x[1], x[2]);
        Some(0.5 * self.mass * v.norm_squared() + 0.5 * wb.dot(&(self.inertia * wb)) - self.mass * self.gravity.dot(&p))
    }
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        Some(self.mass)
    }
    fn takes_stage_laws(&self, _port: usize) -> bool {
        true
    }
    /// The implicit stage with the coupled contacts' laws at their points
    /// ([`StageLaw::rigid_rates`]): v̇ and ω̇ (world, then back to body coordinates), the
    /// gyroscopic term kept as it was.
    fn implicit_rate(&self, x: &[f64], _forces: &[Force], laws: &PortLaws<'_>, tau: f64, dx: &mut [f64]) {
        let laws = laws.of(0);
        let rot = Self::rotation(x).to_rotation_matrix();
        let inertia = rot.matrix() * self.inertia * rot.matrix().transpose();
        let a = Vector3::new(dx[3], dx[4], dx[5]);
        let alpha = rot * Vector3::new(dx[10], dx[11], dx[12]);
        let com = Vector3::new(x[0], x[1], x[2]);
        let (a, alpha) = StageLaw::rigid_rates(laws, self.mass, &inertia, com, (a, alpha), tau);
        dx[3..6].copy_from_slice(a.as_slice());
        dx[10..13].copy_from_slice((rot.inverse() * alpha).as_slice());
    }
    /// World inertia R J Rᵀ, ω̇ in world coordinates (the gyroscopic term kept in it).
    fn stage_body(&self, x: &[f64], dx: &[f64], _port: usize) -> Option<StageBody> {
        let rot = Self::rotation(x).to_rotation_matrix();
        let inertia = rot.matrix() * self.inertia * rot.matrix().transpose();
        let (com, a) = (Vector3::new(x[0], x[1], x[2]), Vector3::new(dx[3], dx[4], dx[5]));
        let alpha = rot * Vector3::new(dx[10], dx[11], dx[12]);
        Some(StageBody::rigid(self.mass, inertia, com, a, alpha))
    }
    fn set_stage_body(&self, x: &[f64], _forces: &[Force], _tau: f64, _ports: &[usize], bodies: &[StageBody], dx: &mut [f64]) {
        let Some(body) = bodies.first() else { return };
        dx[3..6].copy_from_slice(body.a.as_slice());
        dx[10..13].copy_from_slice((Self::rotation(x).inverse() * body.alpha).as_slice());
    }
    /// The body at attitude R: I⁻¹_world = R J⁻¹ Rᵀ about the centre of mass p.
    fn port_rigid_inertia(&self, x: &[f64], _port: usize) -> Option<RigidInertia> {
        let r = Self::rotation(x).to_rotation_matrix();
        let inertia_inv = r.matrix() * self.inertia_inv * r.matrix().transpose();
        Some(RigidInertia { mass: self.mass, inertia_inv, com: Vector3::new(x[0], x[1], x[2]) })
    }
}

/// Inertia from `[Ixx, Iyy, Izz]` or `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` (kg·m²); checks that it
/// is symmetric positive definite and satisfies the triangle inequalities of a real body.
pub fn inertia_from_params(p: &mut Params, key: &str) -> Result<Matrix3<f64>> {
    let v = p.vec_f64(key, None)?;
    let m = match v.len() {
        3 => Matrix3::from_diagonal(&Vector3::new(v[0], v[1], v[2])),
        6 => Matrix3::new(v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2]),
        n => return Err(p.err(key, format!("expected 3 (principal) or 6 values, got {n}"))),
    };
    let eig = crate::ndim::symmetric_eigenvalues(&m).ok_or_else(|| p.err(key, crate::ndim::EIGEN_UNDECIDED))?;
    if eig.iter().any(|&e| e <= 0.0) {
        return Err(p.err(key, "inertia must be positive definite"));
    }
    let (a, b, c) = (eig[0], eig[1], eig[2]);
    let tol = 1e-9 * (a + b + c);
    if a + b < c - tol || a + c < b - tol || b + c < a - tol {
        return Err(p.err(key, "principal moments violate the triangle inequality (no real body has them)"));
    }
    Ok(m)
}

fn build(p: &mut Params) -> Result<Built> {
    let mass = p.positive("mass")?;
    let inertia = inertia_from_params(p, "inertia")?;
    let gravity = p.vec3_or("gravity", [0.0; 3])?;
    let mut body = RigidBody::new(mass, inertia, gravity).ok_or_else(|| p.err("inertia", "not invertible"))?;
    if let Some(mut init) = p.object("init")? {
        body.p0 = init.vec3_or("p", [0.0; 3])?;
        body.v0 = init.vec3_or("v", [0.0; 3])?;
        body.w0 = init.vec3_or("w", [0.0; 3])?;
        if let Some(q) = init.vec_f64_opt("q", Some(4))? {
            let quat = Quaternion::new(q[0], q[1], q[2], q[3]);
            if quat.norm() < 1e-12 {
                return Err(init.err("q", "quaternion must be non-zero"));
            }
            body.q0 = UnitQuaternion::from_quaternion(quat);
        }
        init.finish()?;
    }
    Ok(Built::Admittance(Box::new(body)))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "rigid_body", "mass": 1.0, "inertia": [0.1, 0.2, 0.25, 0.01, 0.0, 0.0], "gravity": [0, 0, -9.81], "init": {"p": [0, 0, 1], "v": [1, 0, 0], "q": [1, 0, 0, 0], "w": [0, 0, 1]}}"#,
];

/// Register `rigid_body`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "rigid_body",
        kind: Kind::Admittance,
        summary: "rigid body with unit quaternion, Newton–Euler equations (25)–(26)",
        params: &[
            ParamDoc { name: "mass", unit: "kg", default: None, doc: "mass, > 0" },
            ParamDoc {
                name: "inertia",
                unit: "kg·m²",
                default: None,
                doc: "about the centre of mass, body frame: [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]",
            },
            ParamDoc { name: "gravity", unit: "m/s²", default: Some("[0, 0, 0]"), doc: "gravitational acceleration" },
            ParamDoc {
                name: "init",
                unit: "",
                default: Some("{}"),
                doc: "initial state {\"p\", \"v\", \"q\", \"w\"}",
            },
            ParamDoc { name: "init.p", unit: "m", default: Some("[0, 0, 0]"), doc: "initial position of the centre of mass" },
            ParamDoc { name: "init.v", unit: "m/s", default: Some("[0, 0, 0]"), doc: "initial velocity" },
            ParamDoc {
                name: "init.q",
                unit: "",
                default: Some("[1, 0, 0, 0]"),
                doc: "initial orientation, quaternion [w, x, y, z] (normalised)",
            },
            ParamDoc { name: "init.w", unit: "rad/s", default: Some("[0, 0, 0]"), doc: "initial angular velocity, world frame" },
        ],
        ports: &[PortDoc {
            name: "body",
            domain: "frame",
            doc: "the centre of mass; connect with \"at\": [x, y, z] (body frame) for another point",
        }],
        signals: SIGNALS,
        build,
    });
}
