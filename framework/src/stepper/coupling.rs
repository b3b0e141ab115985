//! Masses and bodies coupled implicitly with stiff held elements ([`Impedance::stage_law`],
//! [`Admittance::implicit_rate`]).
//!
//! A held I_fricK element (19) of spring K on a mass M is a stiff linear force under RK4:
//! its stage force f = K e + (B + τK) v is evaluated at the stage's motion, and RK4's step
//! map diverges once K T²/M is large (K = 1e7 on 1 kg at T = 1e-3). The element is implicit
//! in its own state (the τK), not in the mass's velocity. Where the stepper was told so
//! (`Impedance::held_frequency`'s `couple`, an element whose held spring RK4 would not
//! keep stable), each stage also gathers the
//! element's law on each mass, f = −gsat(F, w + c Δ) with c = B + τK (a [`StageLaw`]), and the
//! mass takes the rate that balances it at the stage's new velocity v + τ v̇
//! ([`StageLaw::implicit_rate`]), deciding there whether the element holds. While
//! it holds that is v̇ = (f_o − w)/(M + τ(B + τK)): the held state's step map is stable at
//! every K (spectral radius → 0.47 as K T²/M → ∞), and a mass at rest in equilibrium keeps
//! v̇ = 0, so static friction stays exact. Deciding stick or slip at the new velocity is
//! what lets a stop be caught: at the stage velocity alone the element holds only while
//! |v| < F/(τK), far finer than a stage's velocity change. A rigid body solves its stage with
//! all its coupled contacts at their levers ([`StageLaw::rigid_rates`]).
//!
//! [`Impedance::stage_law`]: crate::component::Impedance::stage_law
//! [`Admittance::implicit_rate`]: crate::component::Admittance::implicit_rate

use crate::component::{PortLaws, StageLaw, MAX_IMPEDANCE_PORTS};
use crate::port::Motion;
use crate::schedule::Schedule;
use nalgebra::Vector3;

/// The coupled impedances and the masses they hold, with the stage laws of the elements on
/// each mass port. Empty (and free) where nothing couples.
#[derive(Debug, Default)]
pub(crate) struct Coupling {
    /// The impedances that couple, in network order.
    imp: Vec<usize>,
    /// The admittances that hold a coupled element, in order.
    adm: Vec<usize>,
    /// The laws of the stage, grouped by admittance port.
    laws: Vec<StageLaw>,
    /// Per admittance port (the schedule's `adm_ports` numbering, one more entry): where its
    /// laws start in `laws`.
    starts: Vec<u32>,
    /// Per attached port of the coupled impedances, in the order `gather` meets them: its
    /// place in `laws`.
    places: Vec<u32>,
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
        let ports = *s.adm_ports.last().unwrap_or(&0);
        let mut count = vec![0u32; ports + 1];
        let mut held = vec![false; s.adm.len()];
        for &i in &imp {
            for (adm, port) in s.impedance_ports(i) {
                held[adm] = true;
                count[s.adm_ports[adm] + port + 1] += 1;
            }
        }
        let mut starts = count;
        for p in 0..ports {
            starts[p + 1] += starts[p];
        }
        let mut next = starts.clone();
        let mut places = Vec::new();
        for &i in &imp {
            for (adm, port) in s.impedance_ports(i) {
                let gp = s.adm_ports[adm] + port;
                places.push(next[gp]);
                next[gp] += 1;
            }
        }
        let none = no_law();
        Coupling {
            adm: (0..s.adm.len()).filter(|&j| held[j]).collect(),
            laws: vec![none; places.len()],
            starts,
            places,
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
        let none = no_law();
        let mut place = self.places.iter();
        for &i in &self.imp {
            self.motions.clear();
            self.motions.extend((s.imp_slots[i]..s.imp_slots[i + 1]).map(|slot| s.motion(xa, slot)));
            let n = self.motions.len().min(MAX_IMPEDANCE_PORTS);
            let mut laws = [none; MAX_IMPEDANCE_PORTS];
            s.imp[i].stage_law(&self.motions, &input[s.imp_y[i]..s.imp_y[i + 1]], tau, &mut laws[..n]);
            for (at, law) in s.impedance_attachments_iter(i).zip(&laws[..n]) {
                // A grounded port has no place.
                if at.is_none() {
                    continue;
                }
                if let Some(&k) = place.next() {
                    self.laws[k as usize] = *law;
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
            let laws = PortLaws::new(&self.laws, &self.starts[s.adm_ports[j]..=s.adm_ports[j + 1]]);
            s.adm[j].implicit_rate(&xa[a..b], &laws, tau, &mut dx[a..b]);
        }
    }
}

/// A law that puts no force: a place not yet written, and a port an impedance left alone.
fn no_law() -> StageLaw {
    StageLaw::Friction { w: Vector3::zeros(), c: 0.0, level: 0.0, viscous: 0.0, dims: 1, at: Vector3::zeros() }
}
