//! LuGre friction (12) in its standard form: f = σ0 z + σ1 ż + σ2 v,
//! ż = v − σ0 |v| z / g(v), g(v) = Fc + (Fs − Fc) exp(−(v/vs)²), on the relative motion
//! of port b with respect to port a (scalar). The force on b is −f.

use super::bristle::{bristle_signals, Bristle, BristleLaw};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// LuGre's model: state z.
#[derive(Clone, Debug)]
pub struct LuGre {
    pub sigma0: f64,
    pub sigma1: f64,
    pub sigma2: f64,
    pub fc: f64,
    pub fs: f64,
    pub vs: f64,
}

impl LuGre {
    /// Stribeck curve g(v).
    #[inline]
    pub fn g(&self, v: f64) -> f64 {
        let r = v / self.vs;
        self.fc + (self.fs - self.fc) * (-r * r).exp()
    }
}

impl BristleLaw for LuGre {
    /// (12): friction force and ż.
    #[inline]
    fn eval(&self, v: f64, z: f64) -> (f64, f64) {
        let zd = v - self.sigma0 * v.abs() * z / self.g(v);
        (self.sigma0 * z + self.sigma1 * zd + self.sigma2 * v, zd)
    }
    fn stiffness(&self) -> f64 {
        self.sigma0
    }
    /// (12) at v → 0 (σ0|v||z|/g ≪ |v|): ż = v, f = σ0 z + (σ1 + σ2) v.
    fn presliding(&self) -> (f64, f64) {
        (self.sigma0, self.sigma1 + self.sigma2)
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let sigma0 = p.positive("sigma0")?;
    let sigma1 = p.nonneg("sigma1")?;
    let sigma2 = p.nonneg_or("sigma2", 0.0)?;
    let fc = p.positive("Fc")?;
    let fs = p.positive_or("Fs", fc)?;
    if fs < fc {
        return Err(p.err("Fs", format!("static level Fs = {fs} must be ≥ Fc = {fc}")));
    }
    let vs = p.positive_or("vs", 0.01)?;
    Ok(Built::Impedance(Box::new(Bristle(LuGre { sigma0, sigma1, sigma2, fc, fs, vs }))))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "lugre", "sigma0": 10000.0, "sigma1": 10.0, "sigma2": 0.1, "Fc": 1.0, "Fs": 1.5, "vs": 0.01}"#,
];

/// Register `lugre`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "lugre",
        kind: Kind::Impedance,
        summary: "LuGre friction (12), standard form with Stribeck curve g(v) (drifts under oscillating load)",
        params: &[
            ParamDoc { name: "sigma0", unit: "N/m", default: None, doc: "bristle stiffness, > 0" },
            ParamDoc { name: "sigma1", unit: "N·s/m", default: None, doc: "bristle damping, ≥ 0" },
            ParamDoc { name: "sigma2", unit: "N·s/m", default: Some("0"), doc: "viscous friction, ≥ 0" },
            ParamDoc { name: "Fc", unit: "N", default: None, doc: "Coulomb level, > 0" },
            ParamDoc { name: "Fs", unit: "N", default: Some("Fc"), doc: "static level, ≥ Fc" },
            ParamDoc { name: "vs", unit: "m/s", default: Some("0.01"), doc: "Stribeck velocity, > 0" },
        ],
        ports: &[
            PortDoc { name: "a", domain: "scalar", doc: "reference side" },
            PortDoc { name: "b", domain: "scalar", doc: "sliding side" },
        ],
        signals: bristle_signals(),
        build,
    });
}
