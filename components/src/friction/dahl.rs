//! Dahl friction (11): f = K e, ė = v − |v| K e / F, on the relative motion of port b
//! with respect to port a (scalar). The force on b is −f.

use super::bristle::{bristle_signals, Bristle, BristleLaw};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// Dahl's model: state e (the `z` signal).
#[derive(Clone, Debug)]
pub struct Dahl {
    /// Initial stiffness K (N/m), > 0.
    pub k: f64,
    /// Kinetic friction level F (N), > 0.
    pub f_max: f64,
}

impl BristleLaw for Dahl {
    /// (11): f = K e, ė = v − |v| K e / F.
    fn eval(&self, v: f64, e: f64) -> (f64, f64) {
        let f = self.k * e;
        (f, v - v.abs() * f / self.f_max)
    }
    fn stiffness(&self) -> f64 {
        self.k
    }
    /// (11) at v → 0 (|v| e K/F ≪ |v|): f = K e, ė = v.
    fn presliding(&self) -> (f64, f64) {
        (self.k, 0.0)
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let k = p.positive("K")?;
    let f_max = p.positive("F")?;
    Ok(Built::Impedance(Box::new(Bristle(Dahl { k, f_max }))))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "dahl", "K": 1000.0, "F": 1.0}"#,
];

/// Register `dahl`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "dahl",
        kind: Kind::Impedance,
        summary: "Dahl friction (11): f = K e, ė = v − |v| K e / F (drifts under oscillating load)",
        params: &[
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "initial stiffness, > 0" },
            ParamDoc { name: "F", unit: "N", default: None, doc: "kinetic friction level, > 0" },
        ],
        ports: &[
            PortDoc { name: "a", domain: "scalar", doc: "reference side" },
            PortDoc { name: "b", domain: "scalar", doc: "sliding side" },
        ],
        signals: bristle_signals(),
        build,
    });
}
