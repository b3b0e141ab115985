//! Dahl friction (11): f = K e, ė = v − |v| K e / F, on the relative motion of port b
//! with respect to port a (scalar). The force on b is −f.

use crate::util::two_ports;
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// Dahl's model: state e.
#[derive(Clone, Debug)]
pub struct Dahl {
    /// Initial stiffness K (N/m), > 0.
    pub k: f64,
    /// Kinetic friction level F (N), > 0.
    pub f_max: f64,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 1, "N", "friction force (the force on port b is −f)"),
    SignalInfo::new("e", 1, "m", "elastic displacement"),
];

impl Impedance for Dahl {
    fn layout(&self) -> Layout {
        Layout::new(1, two_ports(Domain::Scalar))
    }
    /// (11).
    fn evaluate(&self, m: &[Motion], y: &[f64], _t: f64, _tau: f64, force: &mut [Force], dy: &mut [f64]) -> Result<(), Fault> {
        let v = m[1].qd() - m[0].qd();
        let f = self.k * y[0];
        dy[0] = v - v.abs() * f / self.f_max;
        force[1] = Force::scalar(-f);
        force[0] = Force::scalar(f);
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].value(),
            _ => p.state[0],
        }
    }
    fn energy(&self, _m: &[Motion], y: &[f64]) -> Option<f64> {
        Some(0.5 * self.k * y[0] * y[0])
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let k = p.positive("K")?;
    let f_max = p.positive("F")?;
    Ok(Built::Impedance(Box::new(Dahl { k, f_max })))
}

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
        signals: SIGNALS,
        build,
    });
}
