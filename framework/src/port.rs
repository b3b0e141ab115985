//! Ports, domains, and the motion/force quantities exchanged between components.
//!
//! A port carries motion from an admittance to an impedance (Ψ in (13d)) and force
//! back from the impedance to the admittance (Φ in (13f)). Every domain uses the same
//! two small `Copy` structs so the hot loop never allocates:
//!
//! | domain   | motion fields used                    | force fields used |
//! |----------|---------------------------------------|-------------------|
//! | `Scalar` | `p.x` (q, m or rad), `v.x` (q̇)         | `f.x` (N or N·m)  |
//! | `Point3` | `p`, `v` (m, m/s, world frame)         | `f` (N)           |
//! | `Frame`  | `p`, `v`, `rot`, `w` (world frame)     | `f`, `m` (N, N·m) |

use nalgebra::{UnitQuaternion, Vector3};
use std::borrow::Cow;

/// The physical domain of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// One generalised coordinate: a translation or a rotation about a fixed axis.
    Scalar,
    /// A point in 3-D space: position and velocity in, force out.
    Point3,
    /// A rigid frame: pose and twist in, wrench out.
    Frame,
}

impl Domain {
    /// Lower-case name used in JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            Domain::Scalar => "scalar",
            Domain::Point3 => "point3",
            Domain::Frame => "frame",
        }
    }

    /// Whether an impedance port of domain `self` may attach to an admittance port of
    /// domain `adm`. A point or a frame may be taken anywhere on a rigid frame (with an
    /// offset); scalars only meet scalars and points only meet points or frames.
    pub fn attaches_to(self, adm: Domain) -> bool {
        matches!(
            (self, adm),
            (Domain::Scalar, Domain::Scalar)
                | (Domain::Point3, Domain::Point3)
                | (Domain::Point3, Domain::Frame)
                | (Domain::Frame, Domain::Frame)
        )
    }
}

impl std::fmt::Display for Domain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Generalised position and velocity of a port (the x̂ of (9)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    /// Position (m); for a scalar port, `p.x` is the coordinate q.
    pub p: Vector3<f64>,
    /// Velocity (m/s); for a scalar port, `v.x` is q̇.
    pub v: Vector3<f64>,
    /// Orientation of a frame port (identity for other domains).
    pub rot: UnitQuaternion<f64>,
    /// Angular velocity of a frame port in the world frame (rad/s).
    pub w: Vector3<f64>,
}

impl Default for Motion {
    fn default() -> Self {
        Motion::REST
    }
}

impl Motion {
    /// At the origin, at rest, unrotated: the motion of ground.
    pub const REST: Motion = Motion {
        p: Vector3::new(0.0, 0.0, 0.0),
        v: Vector3::new(0.0, 0.0, 0.0),
        rot: UnitQuaternion::new_unchecked(nalgebra::Quaternion::new(1.0, 0.0, 0.0, 0.0)),
        w: Vector3::new(0.0, 0.0, 0.0),
    };

    /// A scalar coordinate `q` moving at `v`.
    pub fn scalar(q: f64, v: f64) -> Motion {
        Motion { p: Vector3::new(q, 0.0, 0.0), v: Vector3::new(v, 0.0, 0.0), ..Motion::REST }
    }

    /// A point at `p` moving at `v`.
    pub fn point(p: Vector3<f64>, v: Vector3<f64>) -> Motion {
        Motion { p, v, ..Motion::REST }
    }

    /// A frame with pose (`p`, `rot`) and twist (`v`, `w`).
    pub fn frame(p: Vector3<f64>, v: Vector3<f64>, rot: UnitQuaternion<f64>, w: Vector3<f64>) -> Motion {
        Motion { p, v, rot, w }
    }

    /// Scalar coordinate q.
    #[inline]
    pub fn q(&self) -> f64 {
        self.p.x
    }

    /// Scalar velocity q̇.
    #[inline]
    pub fn qd(&self) -> f64 {
        self.v.x
    }

    /// Motion of the point (and frame) fixed at body-frame offset `a` of this frame:
    /// p + R a, v + ω × R a (Ψ of an offset attachment). Returns it with the world-frame
    /// lever arm R a, which Φ needs to turn a force at that point into a moment.
    #[inline]
    pub fn at_offset(&self, a: &Vector3<f64>) -> (Motion, Vector3<f64>) {
        let r = self.rot * a;
        (Motion { p: self.p + r, v: self.v + self.w.cross(&r), rot: self.rot, w: self.w }, r)
    }

    /// Relative scalar motion `self − base` (for two-port scalar elements).
    #[inline]
    pub fn relative_to(&self, base: &Motion) -> Motion {
        Motion { p: self.p - base.p, v: self.v - base.v, rot: self.rot, w: self.w - base.w }
    }
}

/// Where on a frame port an impedance port attaches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Offset {
    /// A point fixed in the body: p + R a (turns with the body; a joint's articulation point).
    Body(Vector3<f64>),
    /// A point at a fixed world-frame offset from the body's reference point: p + a
    /// (does not turn with the body; the lowest point of a rolling sphere, a_z of (27)).
    World(Vector3<f64>),
}

impl Offset {
    /// The offset vector as given.
    pub fn vector(&self) -> Vector3<f64> {
        match self {
            Offset::Body(a) | Offset::World(a) => *a,
        }
    }

    /// Ψ of the attachment: the motion at the offset point and the world lever arm r.
    /// Body: p + R a, v + ω × R a. World: p + a, v + ω × a.
    #[inline]
    pub fn apply(&self, m: &Motion) -> (Motion, Vector3<f64>) {
        match self {
            Offset::Body(a) => m.at_offset(a),
            Offset::World(r) => (Motion { p: m.p + r, v: m.v + m.w.cross(r), rot: m.rot, w: m.w }, *r),
        }
    }
}

/// Generalised force at a port (the u of (9)): a force and, on frames, a moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Force {
    /// Force (N); for a scalar port, `f.x` is the generalised force (N or N·m).
    pub f: Vector3<f64>,
    /// Moment about the port's reference point (N·m), frames only.
    pub m: Vector3<f64>,
}

impl Force {
    /// No force.
    pub const ZERO: Force = Force { f: Vector3::new(0.0, 0.0, 0.0), m: Vector3::new(0.0, 0.0, 0.0) };

    /// A scalar generalised force.
    #[inline]
    pub fn scalar(f: f64) -> Force {
        Force { f: Vector3::new(f, 0.0, 0.0), ..Force::ZERO }
    }

    /// A pure force on a point.
    #[inline]
    pub fn point(f: Vector3<f64>) -> Force {
        Force { f, ..Force::ZERO }
    }

    /// A wrench.
    #[inline]
    pub fn wrench(f: Vector3<f64>, m: Vector3<f64>) -> Force {
        Force { f, m }
    }

    /// Scalar value.
    #[inline]
    pub fn value(&self) -> f64 {
        self.f.x
    }

    /// The force/moment this force exerts about a point at lever arm `r` from where it
    /// acts (Φ of an offset attachment): f, m + r × f.
    #[inline]
    pub fn moved_by(&self, r: &Vector3<f64>) -> Force {
        Force { f: self.f, m: self.m + r.cross(&self.f) }
    }
}

impl std::ops::AddAssign for Force {
    #[inline]
    fn add_assign(&mut self, o: Force) {
        self.f += o.f;
        self.m += o.m;
    }
}

impl std::ops::Neg for Force {
    type Output = Force;
    #[inline]
    fn neg(self) -> Force {
        Force { f: -self.f, m: -self.m }
    }
}

/// Name and domain of one port of a component. Most names are literals (`"body"`), kept
/// without an allocation per component; generated ones (`joint3`, FMU variables) are owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    pub name: Cow<'static, str>,
    pub domain: Domain,
}

impl PortInfo {
    pub fn new(name: impl Into<Cow<'static, str>>, domain: Domain) -> Self {
        PortInfo { name: name.into(), domain }
    }
}

/// State size and ports of a component, fixed once it is built.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Number of f64 states the component integrates.
    pub states: usize,
    /// Ports in index order: for the common lists (one `body` port, two ports `a` and
    /// `b` of one domain) a shared static list ([`Layout::new`]).
    pub ports: Cow<'static, [PortInfo]>,
}

/// A port with a literal name, as a constant.
const fn port(name: &'static str, domain: Domain) -> PortInfo {
    PortInfo { name: Cow::Borrowed(name), domain }
}

/// The port lists most components have, shared by every layout that has one of them
/// (a system of 10⁵ components would otherwise hold 10⁵ copies).
static COMMON_PORTS: [&[PortInfo]; 6] = [
    &[port("body", Domain::Scalar)],
    &[port("body", Domain::Point3)],
    &[port("body", Domain::Frame)],
    &[port("a", Domain::Scalar), port("b", Domain::Scalar)],
    &[port("a", Domain::Point3), port("b", Domain::Point3)],
    &[port("a", Domain::Frame), port("b", Domain::Frame)],
];

impl Layout {
    /// A layout of `states` states and `ports`; a list equal to a common one is replaced
    /// by the shared copy.
    pub fn new(states: usize, ports: Vec<PortInfo>) -> Self {
        let ports = match COMMON_PORTS.iter().find(|c| **c == ports.as_slice()) {
            Some(c) => Cow::Borrowed(*c),
            None => Cow::Owned(ports),
        };
        Layout { states, ports }
    }

    /// Index of the port called `name`.
    pub fn port_index(&self, name: &str) -> Option<usize> {
        self.ports.iter().position(|p| p.name == name)
    }
}
