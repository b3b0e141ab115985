//! A unilateral elastic wall (penalty contact without friction) whose surface may move:
//! the surface sits at coordinate w(t) along a unit `axis` a; the free side is `"positive"`
//! (a·p > w) or `"negative"` (a·p < w). With penetration δ = max(w − a·p, 0) (positive
//! side) or max(a·p − w, 0) (negative side), the wall pushes the body out with
//! f_n = max(K δ + B δ̇, 0) while δ > 0, and nothing otherwise. One port `body` (scalar,
//! where a = 1, or point3).

use nalgebra::Vector3;
use stiction_framework::component::{Diagnostic, Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::signal::{TimeFunction, Window};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

use crate::stability::stiffness_warnings;

/// The wall.
#[derive(Clone, Debug)]
pub struct Wall {
    pub domain: Domain,
    /// Unit direction along which the wall position is measured.
    pub axis: Vector3<f64>,
    /// +1 when the free side is a·p > w, −1 when it is a·p < w.
    pub side: f64,
    pub position: TimeFunction,
    pub k: f64,
    pub b: f64,
    /// The sub-step the stages belong to (RK4 with a table or piecewise position).
    pub window: Window,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "force on the body (scalar: element 0)"),
    SignalInfo::new("normal_force", 1, "N", "normal (pushing) force magnitude f_n ≥ 0"),
    SignalInfo::new("depth", 1, "m", "penetration δ ≥ 0"),
    SignalInfo::new("w", 1, "m", "wall position w(t)"),
];

impl Wall {
    /// (normal force, penetration) for the body motion at time t.
    #[inline]
    pub fn contact(&self, m: &Motion, t: f64) -> (f64, f64) {
        let w = self.window.eval(&self.position, t);
        let d = self.side * (w - self.axis.dot(&m.p));
        if d <= 0.0 {
            return (0.0, 0.0);
        }
        let dd = -self.side * self.axis.dot(&m.v);
        ((self.k * d + self.b * dd).max(0.0), d)
    }
}

impl Impedance for Wall {
    fn layout(&self) -> Layout {
        Layout::new(0, vec![PortInfo::new("body", self.domain)])
    }
    fn next_break(&self, t0: f64, t1: f64) -> Option<f64> {
        self.position.next_break(t0, t1)
    }
    fn set_window(&self, t0: f64, t1: f64) {
        self.window.set(t0, t1);
    }
    #[inline]
    fn evaluate(
        &self,
        m: &[Motion],
        _y: &[f64],
        t: f64,
        _tau: f64,
        force: &mut [Force],
        _dy: &mut [f64],
    ) -> Result<(), Fault> {
        let (fnormal, _) = self.contact(&m[0], t);
        force[0] = Force::point(self.axis * (self.side * fnormal));
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        let n = if self.domain == Domain::Scalar { 1 } else { 3 };
        let mut v = SIGNALS.to_vec();
        v[0].len = n;
        v
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].f[e],
            1 => self.contact(&p.motions[0], p.t).0,
            2 => self.contact(&p.motions[0], p.t).1,
            _ => self.position.eval(p.t),
        }
    }
    fn energy(&self, m: &[Motion], _y: &[f64]) -> Option<f64> {
        let d = self.side * (self.position.eval(0.0) - self.axis.dot(&m[0].p));
        Some(0.5 * self.k * d.max(0.0).powi(2))
    }
    /// The switch of f_n: g = min(K δ, K δ + B δ̇) > 0 exactly while the wall pushes
    /// (δ signed here); zero where the contact closes and where it opens (stepper/events.rs).
    fn switching(&self, m: &[Motion], _y: &[f64], t: f64) -> Option<f64> {
        let d = self.side * (self.position.eval(t) - self.axis.dot(&m[0].p));
        let dd = -self.side * self.axis.dot(&m[0].v);
        Some((self.k * d).min(self.k * d + self.b * dd))
    }
    /// A point3 wall at a constant position (a moving one is checked through `switching`).
    fn affine_switching(&self) -> Option<stiction_framework::AffineSwitch> {
        match (&self.position, self.domain) {
            (TimeFunction::Constant(w), Domain::Point3) => Some(stiction_framework::AffineSwitch {
                axis: self.side * self.axis,
                level: self.side * w,
                k: self.k,
                b: self.b,
            }),
            _ => None,
        }
    }
    /// The penalty spring in contact.
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: false, coupled: false })
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
        stiffness_warnings("wall stiffness", self.k, self.b, inertia, step)
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let domain = match p.choice("domain", &["scalar", "point3"])? {
        "point3" => Domain::Point3,
        _ => Domain::Scalar,
    };
    let axis = if domain == Domain::Scalar {
        if p.has("axis") {
            return Err(p.err("axis", "only point3 walls have an axis"));
        }
        Vector3::x()
    } else {
        let a = p.vec3_or("axis", [1.0, 0.0, 0.0])?;
        let n = a.norm();
        if n < 1e-12 {
            return Err(p.err("axis", "must be a non-zero vector"));
        }
        a / n
    };
    let side = match p.choice("side", &["positive", "negative"])? {
        "negative" => -1.0,
        _ => 1.0,
    };
    let position = p.time_fn_or("position", 0.0)?;
    let k = p.positive("K")?;
    let b = p.nonneg_or("B", 0.0)?;
    Ok(Built::Impedance(Box::new(Wall { domain, axis, side, position, k, b, window: Window::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "wall", "domain": "point3", "axis": [0, 1, 0], "side": "negative", "position": 0.2, "K": 10000.0, "B": 1.0}"#,
    r#"{"type": "wall", "K": 10000.0}"#,
];

/// Register `wall`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "wall",
        kind: Kind::Impedance,
        summary: "unilateral elastic wall at a (moving) position w(t): pushes with max(K δ + B δ̇, 0) while penetrated",
        params: &[
            ParamDoc { name: "domain", unit: "", default: Some("\"scalar\""), doc: "\"scalar\" or \"point3\"" },
            ParamDoc {
                name: "axis",
                unit: "",
                default: Some("[1, 0, 0]"),
                doc: "point3: direction along which w is measured",
            },
            ParamDoc {
                name: "side",
                unit: "",
                default: Some("\"positive\""),
                doc: "free side: \"positive\" (a·p > w) or \"negative\" (a·p < w)",
            },
            ParamDoc {
                name: "position",
                unit: "m",
                default: Some("0"),
                doc: "wall position w(t): a time function (constant, expression, piecewise, table or signal)",
            },
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "stiffness, > 0" },
            ParamDoc {
                name: "B",
                unit: "N·s/m",
                default: Some("0"),
                doc: "contact damping (only while penetrated, force never pulls), ≥ 0",
            },
        ],
        ports: &[PortDoc { name: "body", domain: "scalar|point3", doc: "the body that touches the wall" }],
        signals: SIGNALS,
        build,
    });
}
