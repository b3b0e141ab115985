//! The output instant's evaluation limited to what the signals read: an output row costs
//! the components behind its columns, not a whole stage.
//!
//! [`Simulator::probe`] evaluates every component with τ = T (the Euler form (20)). A
//! signal of an admittance reads its state, its rate ξ and the forces Φ (13f) on its ports,
//! so it needs the impedances attached to it; a signal of an impedance reads its own
//! forces, motions and rate. [`Simulator::probe_only`] evaluates just those components,
//! each through its trait object, which computes what its batch computes bit for bit
//! (tests/batch.rs), so the values are those of a full probe. At chain-10k's output
//! interval (every 10 steps) the full probe cost 1.3 % of the run.

use crate::component::MAX_IMPEDANCE_PORTS;
use crate::error::{Error, Result};
use crate::output::signals::{SignalRef, Source};
use crate::port::{Force, Motion};
use crate::stepper::Simulator;
use std::collections::BTreeSet;

/// The components (schedule indices) a set of signals reads at an output instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeTargets {
    imp: Vec<usize>,
    adm: Vec<usize>,
}

impl ProbeTargets {
    /// The impedances the probe evaluates (in schedule order).
    pub fn impedances(&self) -> impl Iterator<Item = usize> + '_ {
        self.imp.iter().copied()
    }
}

impl Simulator {
    /// The components that the signals `refs` read: the impedances and admittances they
    /// name, and the impedances acting on those admittances (their forces make Φ).
    pub fn probe_targets<'a>(&self, refs: impl IntoIterator<Item = &'a SignalRef>) -> ProbeTargets {
        let s = &self.sched;
        let (mut imp, mut adm) = (BTreeSet::new(), BTreeSet::new());
        for r in refs {
            match r.source {
                Source::State { .. } | Source::Block { .. } | Source::BlockInput { .. } | Source::BlockVar { .. } => {}
                Source::Imp { i, .. } => {
                    imp.insert(i);
                }
                Source::Adm { i, .. } => {
                    adm.insert(i);
                    for gp in s.adm_ports[i]..s.adm_ports[i + 1] {
                        for &slot in &s.incoming[s.in_off[gp]..s.in_off[gp + 1]] {
                            let owner = s.imp_slots.partition_point(|&o| o <= slot as usize) - 1;
                            imp.insert(owner);
                        }
                    }
                }
            }
        }
        ProbeTargets { imp: imp.into_iter().collect(), adm: adm.into_iter().collect() }
    }

    /// [`probe`](Self::probe) for the components `targets` only: their forces, Φ and rates
    /// with τ = T at the current state, as a full probe gives them. Does not change the state.
    pub fn probe_only(&mut self, targets: &ProbeTargets) -> Result<()> {
        let (t, h) = (self.time(), self.step_size());
        self.write_signals_at_x()?;
        let Simulator { sched: s, x, work, .. } = self;
        let fail = |name: &str, f: crate::error::Fault| Error::Simulation {
            time: t,
            component: name.to_string(),
            message: f.0,
        };
        let xa = &x[..s.nx];
        for &i in &targets.imp {
            let (sa, sb) = (s.imp_slots[i], s.imp_slots[i + 1]);
            let (ya, yb) = (s.imp_y[i], s.imp_y[i + 1]);
            let mut motions = [Motion::REST; MAX_IMPEDANCE_PORTS];
            let mut forces = [Force::ZERO; MAX_IMPEDANCE_PORTS];
            for (p, m) in motions[..sb - sa].iter_mut().enumerate() {
                *m = s.motion(xa, sa + p);
            }
            let r = s.imp[i].evaluate(
                &motions[..sb - sa],
                &x[ya..yb],
                t,
                h,
                &mut forces[..sb - sa],
                &mut work.rate[ya..yb],
            );
            for (p, f) in forces[..sb - sa].iter().enumerate() {
                work.force[sa + p] = f.f;
                if let Some(m) = work.moment.get_mut(sa + p) {
                    *m = f.m;
                }
            }
            r.map_err(|f| fail(&s.imp_names[i], f))?;
        }
        for &j in &targets.adm {
            let (pa, pb) = (s.adm_ports[j], s.adm_ports[j + 1]);
            for gp in pa..pb {
                work.adm_forces[gp] = s.sum_port(xa, &work.force, &work.moment, j, gp - pa);
            }
            let (xa0, xb0) = (s.adm_x[j], s.adm_x[j + 1]);
            s.adm[j]
                .derivative(&x[xa0..xb0], &work.adm_forces[pa..pb], t, h, &mut work.rate[xa0..xb0])
                .map_err(|f| fail(&s.adm_names[j], f))?;
        }
        Ok(())
    }
}
