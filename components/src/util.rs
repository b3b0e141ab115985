//! Small helpers shared by the component files.

use nalgebra::{Vector2, Vector3};

/// gsat(X, x) of (15): x if ‖x‖ ≤ X, else X·x/‖x‖. Scalar form.
#[inline]
pub fn sat(limit: f64, x: f64) -> f64 {
    x.clamp(-limit, limit)
}

/// gsat(X, x) of (15) for vectors.
#[inline]
pub fn gsat3(limit: f64, x: Vector3<f64>) -> Vector3<f64> {
    let n = x.norm();
    if n <= limit {
        x
    } else {
        x * (limit / n)
    }
}

/// gsat(X, x) of (15) in the plane.
#[inline]
pub fn gsat2(limit: f64, x: Vector2<f64>) -> Vector2<f64> {
    let n = x.norm();
    if n <= limit {
        x
    } else {
        x * (limit / n)
    }
}

use stiction_framework::component::Diagnostic;
use stiction_framework::port::{Domain, PortInfo};
use stiction_framework::system::Params;
use stiction_framework::Result;

/// Ports `a` and `b` of a two-port element in `domain`. The element sees the motion of
/// b relative to a and applies its force to b, the reaction to a.
pub fn two_ports(domain: Domain) -> Vec<PortInfo> {
    vec![PortInfo::new("a", domain), PortInfo::new("b", domain)]
}

/// The `domain` parameter of a two-port element: "scalar" (default) or "point3".
pub fn domain_param(p: &mut Params) -> Result<Domain> {
    Ok(match p.choice("domain", &["scalar", "point3"])? {
        "point3" => Domain::Point3,
        _ => Domain::Scalar,
    })
}

/// Number of vector components an element of `domain` works on.
pub fn dims(domain: Domain) -> usize {
    match domain {
        Domain::Scalar => 1,
        _ => 3,
    }
}

/// Stability warnings for a stiff element (stiffness `k`, viscosity `b`) acting on the
/// smallest of the inertias at its ports: explicit RK4 on M ẍ = −K x − B ẋ is stable for
/// ω T ≲ 2.8 (ω = √(K/M)) and B T / M ≲ 2.7; warn from 2.
pub fn stiffness_warnings(what: &str, k: f64, b: f64, inertia: &[Option<f64>], step: f64) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if let Some(m) = inertia.iter().flatten().cloned().reduce(f64::min) {
        let wt = (k / m).sqrt() * step;
        if wt > 2.0 {
            out.push(Diagnostic::Warning(format!(
                "{what} K = {k} on inertia {m} gives ω·T = {wt:.2} (> 2): expect instability; reduce the step or K"
            )));
        }
        let bt = b * step / m;
        if bt > 2.0 {
            out.push(Diagnostic::Warning(format!(
                "{what} B = {b} on inertia {m} gives B·T/M = {bt:.2} (> 2): expect instability"
            )));
        }
    }
    out
}

use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Force, Layout, Motion};

/// A single-state dynamic friction law between two scalar ports (Dahl (11), LuGre (12)):
/// friction force f and state rate ż from the relative velocity v and the state z.
pub trait BristleLaw: Send + Sync {
    /// (f, ż) for relative velocity `v` and state `z`.
    fn eval(&self, v: f64, z: f64) -> (f64, f64);
    /// Stiffness of the state, for the stored energy ½ k z².
    fn stiffness(&self) -> f64;
}

/// The impedance of a [`BristleLaw`]: it sees port b relative to port a and applies −f to
/// b, +f to a. Signals: `f` and the state `z`.
#[derive(Clone, Debug)]
pub struct Bristle<L>(pub L);

const BRISTLE_SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 1, "N", "friction force (the force on port b is −f)"),
    SignalInfo::new("z", 1, "m", "internal state (bristle or elastic deflection)"),
];

impl<L: BristleLaw> Impedance for Bristle<L> {
    fn layout(&self) -> Layout {
        Layout::new(1, two_ports(Domain::Scalar))
    }
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        _t: f64,
        _tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let (f, zd) = self.0.eval(m[1].qd() - m[0].qd(), y[0]);
        dy[0] = zd;
        force[1] = Force::scalar(-f);
        force[0] = Force::scalar(f);
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        BRISTLE_SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].value(),
            _ => p.state[0],
        }
    }
    fn energy(&self, _m: &[Motion], y: &[f64]) -> Option<f64> {
        Some(0.5 * self.0.stiffness() * y[0] * y[0])
    }
}

/// Signals of every [`Bristle`] impedance, for the registry.
pub fn bristle_signals() -> &'static [SignalInfo] {
    BRISTLE_SIGNALS
}

/// Deterministic pseudo-random numbers in [lo, hi) for tests (64-bit LCG).
#[cfg(test)]
pub(crate) struct Lcg(pub u64);

#[cfg(test)]
impl Lcg {
    pub fn next(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}
