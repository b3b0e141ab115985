//! Single-state dynamic friction laws (Dahl (11), LuGre (12)) as an impedance between two
//! scalar ports.

use crate::two_port::two_ports;
use stiction_framework::component::{Fault, Impedance, Probe, SignalInfo};
use stiction_framework::port::{Domain, Force, Layout, Motion};

/// A single-state dynamic friction law between two scalar ports (Dahl (11), LuGre (12)):
/// friction force f and state rate ż from the relative velocity v and the state z.
pub trait BristleLaw: Send + Sync {
    /// (f, ż) for relative velocity `v` and state `z`.
    fn eval(&self, v: f64, z: f64) -> (f64, f64);
    /// Stiffness of the state, for the stored energy ½ k z².
    fn stiffness(&self) -> f64;
    /// The law linearised where it holds (presliding, |v| σ0 |z| ≪ g(v)|v|, so ż = v):
    /// f = K_s z + B_s ż with (K_s, B_s) returned, for the stuck-state stability analysis.
    fn presliding(&self) -> (f64, f64);
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
    /// The presliding spring–damper of the law ([`BristleLaw::presliding`]); explicit in τ.
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        let (k, b) = self.0.presliding();
        Some(stiction_framework::StageSpring { k, b, implicit: false, coupled: false })
    }
}

/// Signals of every [`Bristle`] impedance, for the registry.
pub fn bristle_signals() -> &'static [SignalInfo] {
    BRISTLE_SIGNALS
}
