//! Masses coupled implicitly with stiff held elements ([`Impedance::stage_damping`],
//! [`Admittance::implicit_rate`]).
//!
//! A held I_fricK element (19) of spring K on a mass M is a stiff linear force under RK4:
//! its stage force f = K e + (B + τK) v is evaluated at the stage's motion, and RK4's step
//! map diverges once K T²/M is large (K = 1e7 on 1 kg at T = 1e-3). The element is implicit
//! in its own state (the τK), not in the mass's velocity. Where the stepper was told so
//! (`Impedance::held_frequency`'s `couplable`, an element whose held spring RK4 would not
//! keep stable, the only such element on each mass it holds), each stage also gathers the
//! element's law on each mass, f = −gsat(F, w + c Δ) with c = B + τK (a [`StageLaw`]), and the
//! mass takes the rate that balances it at the stage's new velocity v + τ v̇
//! ([`StageLaw::implicit_acceleration`]), deciding there whether the element holds. While
//! it holds that is v̇ = (f_o − w)/(M + τ(B + τK)): the held state's step map is stable at
//! every K (spectral radius → 0.47 as K T²/M → ∞), and a mass at rest in equilibrium keeps
//! v̇ = 0, so static friction stays exact. Deciding stick or slip at the new velocity is
//! what lets a stop be caught: at the stage velocity alone the element holds only while
//! |v| < F/(τK), far finer than a stage's velocity change.
//!
//! [`Impedance::stage_damping`]: crate::component::Impedance::stage_damping
//! [`Admittance::implicit_rate`]: crate::component::Admittance::implicit_rate

use crate::component::{StageLaw, MAX_IMPEDANCE_PORTS};
use crate::port::Motion;
use crate::schedule::Schedule;
use nalgebra::Vector3;

/// The coupled impedances and the masses they hold, with the stage dampings of the masses'
/// ports. Empty (and free) where nothing couples.
#[derive(Debug, Default)]
pub(crate) struct Coupling {
    /// The impedances that couple, in network order.
    imp: Vec<usize>,
    /// The admittances that hold a coupled element, in order.
    adm: Vec<usize>,
    /// Per admittance port (the schedule's `adm_ports` numbering): the stage law of the
    /// coupled element on it (one at most).
    laws: Vec<Option<StageLaw>>,
    /// Scratch: one impedance's port motions.
    motions: Vec<Motion>,
}

impl Coupling {
    /// The coupling of `s` after every impedance was told whether it may couple.
    pub(crate) fn new(s: &Schedule) -> Coupling {
        let imp: Vec<usize> = (0..s.imp.len()).filter(|&i| s.imp[i].implicit_coupling()).collect();
        if imp.is_empty() {
            return Coupling::default();
        }
        let mut held = vec![false; s.adm.len()];
        for &i in &imp {
            for (adm, _) in s.impedance_ports(i) {
                held[adm] = true;
            }
        }
        Coupling {
            adm: (0..s.adm.len()).filter(|&j| held[j]).collect(),
            laws: vec![None; *s.adm_ports.last().unwrap_or(&0)],
            motions: Vec::with_capacity(MAX_IMPEDANCE_PORTS),
            imp,
        }
    }

    /// Whether no element couples.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.imp.is_empty()
    }

    /// The coupled elements' laws of the stage at state `input` (admittances and impedance
    /// states) with stage step `tau`.
    pub(crate) fn gather(&mut self, s: &Schedule, input: &[f64], tau: f64) {
        let xa = &input[..s.nx];
        let none = StageLaw::Friction { w: Vector3::zeros(), c: 0.0, level: 0.0, dims: 0 };
        for &i in &self.imp {
            self.motions.clear();
            self.motions.extend((s.imp_slots[i]..s.imp_slots[i + 1]).map(|slot| s.motion(xa, slot)));
            let n = self.motions.len().min(MAX_IMPEDANCE_PORTS);
            let mut laws = [none; MAX_IMPEDANCE_PORTS];
            s.imp[i].stage_law(&self.motions, &input[s.imp_y[i]..s.imp_y[i + 1]], tau, &mut laws[..n]);
            for (at, law) in s.impedance_attachments_iter(i).zip(&laws[..n]) {
                if let Some((adm, port)) = at {
                    let given = !matches!(law, StageLaw::Friction { dims: 0, .. });
                    self.laws[s.adm_ports[adm] + port] = given.then_some(*law);
                }
            }
        }
    }

    /// The implicit rates of the coupled admittances among `members` (schedule indices),
    /// whose states start at `xa[0]` and whose rates `dx` start at the first member's.
    pub(crate) fn apply(&self, s: &Schedule, members: std::ops::Range<usize>, xa: &[f64], tau: f64, dx: &mut [f64]) {
        let first = self.adm.partition_point(|&j| j < members.start);
        let x0 = s.adm_x[members.start];
        for &j in self.adm[first..].iter().take_while(|&&j| j < members.end) {
            let (a, b) = (s.adm_x[j] - x0, s.adm_x[j + 1] - x0);
            let ports = &self.laws[s.adm_ports[j]..s.adm_ports[j + 1]];
            s.adm[j].implicit_rate(&xa[a..b], ports, tau, &mut dx[a..b]);
        }
    }
}
