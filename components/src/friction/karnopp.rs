//! Karnopp's stick–slip friction (papers/karnopp-stick-slip.md), the classical baseline the
//! Kikuuwe models are compared against. Continuous-time state equations with constant
//! causality, integrated by RK4 or Euler like any admittance (τ is not used):
//!
//! - a velocity band |V| < DV is "stuck"; there the friction takes whatever value keeps the
//!   momentum constant (the sticking force, (3)/(11)/(15)–(21)), limited to the breakaway
//!   level ±FH; outside it the slip law Φ(V) applies;
//! - the momentum–velocity relation is modified so that inside the momentum band
//!   |P| < DP = m·DV the velocity is exactly zero ((4)–(5)): true stopped motion.
//!
//! Three components:
//! - `karnopp_mass`: a mass on a frictional ground (Fig. 2);
//! - `karnopp_pair`: friction between two masses, sticking force (11); while stuck the
//!   relative momentum μ·Vr (μ = m1 m2/(m1 + m2)) lies in |·| < μ·DV and both masses move
//!   with the common velocity (P1 + P2)/(m1 + m2), so the relative velocity is exactly zero;
//! - `karnopp_stack`: m1 sliding on m2 sliding on the ground (Fig. 4) with the four
//!   stick/slip cases (a)–(d) of Fig. 4(c).
//!
//! Sign convention: G1, G2 are the external forces on the masses (from their ports and any
//! constant force), positive along the axis. Fr is the friction force that m2 exerts on m1
//! with a minus sign (m1 receives −Fr, m2 receives +Fr); Ff the ground's friction on m2
//! with a minus sign. Slip values are Φ(V) along the sliding velocity.

use super::law::{law_params, FrictionLaw, LAW_PARAMS};
use crate::doc_table::table;
use std::sync::OnceLock;
use stiction_framework::component::{Admittance, Diagnostic, Fault, Probe, SignalInfo, Sides};
use stiction_framework::port::{Domain, Force, Layout, Motion, PortInfo};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// One Karnopp friction contact: slip law, breakaway level FH and stick band DV.
#[derive(Clone, Debug)]
pub struct Contact {
    pub law: FrictionLaw,
    /// Breakaway force FH (N), ≥ the law's level at zero speed.
    pub fh: f64,
    /// Half-width DV of the stick band (m/s), > 0.
    pub dv: f64,
}

impl Contact {
    fn read(p: &mut Params) -> Result<Contact> {
        let law = FrictionLaw::from_params(p)?;
        let fh = p.nonneg("FH")?;
        if fh < law.static_level() {
            return Err(p.err(
                "FH",
                format!("breakaway force FH = {fh} must be ≥ the slip level at zero speed ({})", law.static_level()),
            ));
        }
        let dv = p.positive("DV")?;
        Ok(Contact { law, fh, dv })
    }

    #[inline]
    fn stick_force(&self, needed: f64) -> f64 {
        needed.clamp(-self.fh, self.fh)
    }

    /// The breakaway switch of a stuck contact: g = FH − |needed|, > 0 while the sticking
    /// force holds; the rates have a kink where it reaches ±FH. [`SLIPPING`] where the
    /// contact is not stuck.
    #[inline]
    fn holds(&self, needed: Option<f64>) -> f64 {
        needed.map_or(SLIPPING, |n| self.fh - n.abs())
    }

    fn diagnose(&self, mass: f64, step: f64, what: &str) -> Vec<Diagnostic> {
        let dv_step = step * self.fh / mass;
        if dv_step > self.dv {
            vec![Diagnostic::Warning(format!(
                "{what}: friction changes the velocity by up to T·FH/m = {dv_step:.3e} m/s per step, more than the stick band DV = {}: \
                 the velocity can jump across the band and chatter; use DV ≥ {dv_step:.3e} or a smaller step",
                self.dv
            ))]
        } else {
            Vec::new()
        }
    }
}

/// The keys of one contact ([`Contact::read`]) after `$prefix`: FH, DV and the friction law.
macro_rules! contact_params {
    ($prefix:literal) => {{
        use stiction_framework::system::ParamDoc as P;
        [
            P {
                name: concat!($prefix, "FH"),
                unit: "N",
                default: None,
                doc: "breakaway force (limit of the sticking force), ≥ slip level at v = 0",
            },
            P {
                name: concat!($prefix, "DV"),
                unit: "m/s",
                default: None,
                doc: "half-width of the stick band; momentum band DP = m·DV",
            },
        ]
    }};
}

/// The switching function of a momentum band |p| < `half`: |p| − `half`, positive exactly
/// where the velocity leaves the band, |p| ≥ `half`, as the components test it (the stepper
/// takes g > 0 as one side and g ≤ 0 as the other, and a − b is 0 only where a = b: on the
/// edge itself 0 becomes the least positive number). Else a state located exactly on the
/// edge would be on the band's side for the stepper and outside it for the component.
#[inline]
fn band_edge(p: f64, half: f64) -> f64 {
    let g = p.abs() - half;
    if g == 0.0 {
        f64::MIN_POSITIVE
    } else {
        g
    }
}

/// `p` moved onto the edge of its band |p| < `half` ([`band_edge`]), on the side it is on:
/// ±`half` outside, the largest magnitude below it inside (`Admittance::on_switch`).
#[inline]
fn onto_edge(p: f64, half: f64) -> f64 {
    let edge = if band_edge(p, half) > 0.0 { half } else { f64::from_bits(half.to_bits() - 1) };
    edge.copysign(p)
}

/// Momenta (p1, p2) whose relative momentum (m2 p1 − m1 p2)/(m1 + m2) is moved onto the
/// edge of its band |·| < `half` on the side it is on, their sum kept (to rounding); `None`
/// if rounding would change the side (then the state is left as it is).
fn relative_onto_edge(two: &Two, p1: f64, p2: f64, half: f64) -> Option<(f64, f64)> {
    let rel = two.rel_momentum(p1, p2);
    let sum = p1 + p2;
    let q1 = onto_edge(rel, half) + two.m1 * sum / two.total();
    let q2 = sum - q1;
    let same = (band_edge(two.rel_momentum(q1, q2), half) > 0.0) == (band_edge(rel, half) > 0.0);
    same.then_some((q1, q2))
}

/// The breakaway switching function of a contact that slips: a side that does not change.
const SLIPPING: f64 = 1.0;

fn scalar(n: &'static str) -> PortInfo {
    PortInfo::new(n, Domain::Scalar)
}

// ---------------------------------------------------------------------------------------
// karnopp_mass

/// A mass on a frictional ground (Fig. 2): state [q, P].
#[derive(Clone, Debug)]
pub struct KarnoppMass {
    pub mass: f64,
    pub contact: Contact,
    /// Constant applied force (N).
    pub force: f64,
    pub q0: f64,
    pub v0: f64,
    /// The band's side while the stepper locks it (1 stuck, 0 slipping).
    sides: Sides,
}

const MASS_SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q", 1, "m", "position"),
    SignalInfo::new("v", 1, "m/s", "velocity (exactly 0 inside the momentum band)"),
    SignalInfo::new("p", 1, "N·s", "momentum P"),
    SignalInfo::new("f", 1, "N", "friction force on the mass"),
    SignalInfo::new("stuck", 1, "", "1 inside the stick band, else 0"),
];

impl KarnoppMass {
    /// Velocity from momentum, (2) modified by (4)–(5).
    #[inline]
    pub fn velocity(&self, p: f64) -> f64 {
        if self.sides.get().map_or(p.abs() < self.mass * self.contact.dv, |c| c == 1) {
            0.0
        } else {
            p / self.mass
        }
    }

    /// Friction force Ff (the mass receives −Ff) for momentum P and net force G.
    #[inline]
    pub fn friction(&self, p: f64, g: f64) -> f64 {
        let v = self.velocity(p);
        if v == 0.0 {
            self.contact.stick_force(g)
        } else {
            self.contact.law.phi(v)
        }
    }
}

impl Admittance for KarnoppMass {
    fn layout(&self) -> Layout {
        Layout::new(2, vec![scalar("body")])
    }
    /// The momentum band's edge (4)–(5): g = |P| − m DV, > 0 outside it (the velocity
    /// jumps between 0 and ±DV there).
    fn state_switches(&self) -> usize {
        1
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        g[0] = band_edge(x[1], self.mass * self.contact.dv);
    }
    /// Breakaway inside the band: FH − |G| (`Contact::holds`).
    fn force_switches(&self) -> usize {
        1
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        self.sides.set(None);
        self.sides.set(x.map(|x| u8::from(self.velocity(x[1]) == 0.0)));
    }
    /// Onto the band's edge (the momentum that entered the band stays on its edge while
    /// held, as the exact solution does).
    fn on_switch(&self, _which: usize, x: &mut [f64]) {
        x[1] = onto_edge(x[1], self.mass * self.contact.dv);
    }
    fn force_switchings(&self, x: &[f64], f: &[Force], g: &mut [f64]) {
        let stuck = self.velocity(x[1]) == 0.0;
        g[0] = self.contact.holds(stuck.then(|| f[0].value() + self.force));
    }
    fn init(&self, x: &mut [f64]) {
        x[0] = self.q0;
        x[1] = self.mass * self.v0;
    }
    fn port_motion(&self, x: &[f64], _port: usize) -> Motion {
        Motion::scalar(x[0], self.velocity(x[1]))
    }
    fn derivative(&self, x: &[f64], f: &[Force], _t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let g = f[0].value() + self.force;
        dx[0] = self.velocity(x[1]);
        dx[1] = g - self.friction(x[1], g);
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        MASS_SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _e: usize, p: &Probe) -> f64 {
        let g = p.forces[0].value() + self.force;
        match which {
            0 => p.state[0],
            1 => self.velocity(p.state[1]),
            2 => p.state[1],
            3 => -self.friction(p.state[1], g),
            _ => f64::from(self.velocity(p.state[1]) == 0.0),
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let v = self.velocity(x[1]);
        Some(0.5 * self.mass * v * v - self.force * x[0])
    }
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        Some(self.mass)
    }
    fn diagnose(&self, _x: &[f64], step: f64) -> Vec<Diagnostic> {
        self.contact.diagnose(self.mass, step, "karnopp")
    }
}

fn build_mass(p: &mut Params) -> Result<Built> {
    let mass = p.positive("mass")?;
    let contact = Contact::read(p)?;
    let force = p.f64_or("force", 0.0)?;
    let (mut q0, mut v0) = (0.0, 0.0);
    if let Some(mut init) = p.object("init")? {
        q0 = init.f64_or("q", 0.0)?;
        v0 = init.f64_or("v", 0.0)?;
        init.finish()?;
    }
    Ok(Built::Admittance(Box::new(KarnoppMass { mass, contact, force, q0, v0, sides: Sides::default() })))
}

// ---------------------------------------------------------------------------------------
// Two masses: common machinery

/// Masses m1, m2 and the velocity map of a pair whose relative motion may stick.
#[derive(Clone, Copy, Debug)]
struct Two {
    m1: f64,
    m2: f64,
}

impl Two {
    fn total(&self) -> f64 {
        self.m1 + self.m2
    }
    fn reduced(&self) -> f64 {
        self.m1 * self.m2 / self.total()
    }
    /// Relative momentum μ (V1 − V2) = (m2 P1 − m1 P2)/(m1 + m2).
    fn rel_momentum(&self, p1: f64, p2: f64) -> f64 {
        (self.m2 * p1 - self.m1 * p2) / self.total()
    }
    /// Sticking force that keeps V1 − V2 constant under external forces g1, g2 (the
    /// relative-motion form (11) in this file's signs).
    fn relative_stick(&self, g1: f64, g2: f64) -> f64 {
        (self.m2 * g1 - self.m1 * g2) / self.total()
    }
}

fn read_two_init(p: &mut Params) -> Result<[f64; 4]> {
    let mut s = [0.0; 4];
    if let Some(mut init) = p.object("init")? {
        s = [init.f64_or("q1", 0.0)?, init.f64_or("q2", 0.0)?, init.f64_or("v1", 0.0)?, init.f64_or("v2", 0.0)?];
        init.finish()?;
    }
    Ok(s)
}

// ---------------------------------------------------------------------------------------
// karnopp_pair

/// Friction between two masses (Fig. 3, (6)–(11)): state [q1, q2, P1, P2].
#[derive(Clone, Debug)]
pub struct KarnoppPair {
    two: Two,
    pub contact: Contact,
    init: [f64; 4],
    /// The relative band's side while the stepper locks it (1 stuck, 0 slipping).
    sides: Sides,
}

const PAIR_SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q1", 1, "m", "position of m1"),
    SignalInfo::new("q2", 1, "m", "position of m2"),
    SignalInfo::new("v1", 1, "m/s", "velocity of m1"),
    SignalInfo::new("v2", 1, "m/s", "velocity of m2 (= v1 exactly while stuck)"),
    SignalInfo::new("f", 1, "N", "friction force on m1 (m2 receives the opposite)"),
    SignalInfo::new("stuck", 1, "", "1 while the relative motion sticks, else 0"),
];

impl KarnoppPair {
    /// (V1, V2, stuck) from the momenta.
    pub fn velocities(&self, p1: f64, p2: f64) -> (f64, f64, bool) {
        let t = self.two;
        let stuck = || t.rel_momentum(p1, p2).abs() < t.reduced() * self.contact.dv;
        if self.sides.get().map_or_else(stuck, |c| c == 1) {
            let v = (p1 + p2) / t.total();
            (v, v, true)
        } else {
            (p1 / t.m1, p2 / t.m2, false)
        }
    }

    /// Fr for momenta and external forces.
    pub fn friction(&self, p1: f64, p2: f64, g1: f64, g2: f64) -> f64 {
        let (v1, v2, stuck) = self.velocities(p1, p2);
        if stuck {
            self.contact.stick_force(self.two.relative_stick(g1, g2))
        } else {
            self.contact.law.phi(v1 - v2)
        }
    }
}

/// State [q1, q2, P1, P2] and ports m1, m2 of the two-mass Karnopp systems.
fn two_mass_layout() -> Layout {
    Layout::new(4, vec![scalar("m1"), scalar("m2")])
}

/// Initial [q1, q2, P1 = m1 v1, P2 = m2 v2] from `init` = [q1, q2, v1, v2].
fn two_mass_init(two: &Two, init: &[f64; 4], x: &mut [f64]) {
    x[0] = init[0];
    x[1] = init[1];
    x[2] = two.m1 * init[2];
    x[3] = two.m2 * init[3];
}

/// Motion of port m1 (0) or m2 (1).
fn two_mass_motion(x: &[f64], v1: f64, v2: f64, port: usize) -> Motion {
    if port == 0 {
        Motion::scalar(x[0], v1)
    } else {
        Motion::scalar(x[1], v2)
    }
}

impl Admittance for KarnoppPair {
    fn layout(&self) -> Layout {
        two_mass_layout()
    }
    /// The relative band's edge: g = |μ Vr| − μ DV (relative momentum), > 0 while the
    /// masses slip on each other.
    fn state_switches(&self) -> usize {
        1
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        let t = self.two;
        g[0] = band_edge(t.rel_momentum(x[2], x[3]), t.reduced() * self.contact.dv);
    }
    /// Breakaway while stuck: FH − |(11)| (`Contact::holds`).
    fn force_switches(&self) -> usize {
        1
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        self.sides.set(None);
        self.sides.set(x.map(|x| u8::from(self.velocities(x[2], x[3]).2)));
    }
    /// The relative momentum onto its band's edge.
    fn on_switch(&self, _which: usize, x: &mut [f64]) {
        if let Some((p1, p2)) = relative_onto_edge(&self.two, x[2], x[3], self.two.reduced() * self.contact.dv) {
            (x[2], x[3]) = (p1, p2);
        }
    }
    fn force_switchings(&self, x: &[f64], f: &[Force], g: &mut [f64]) {
        let stuck = self.velocities(x[2], x[3]).2;
        g[0] = self.contact.holds(stuck.then(|| self.two.relative_stick(f[0].value(), f[1].value())));
    }
    fn init(&self, x: &mut [f64]) {
        two_mass_init(&self.two, &self.init, x);
    }
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        let (v1, v2, _) = self.velocities(x[2], x[3]);
        two_mass_motion(x, v1, v2, port)
    }
    fn derivative(&self, x: &[f64], f: &[Force], _t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let (g1, g2) = (f[0].value(), f[1].value());
        let (v1, v2, _) = self.velocities(x[2], x[3]);
        let fr = self.friction(x[2], x[3], g1, g2);
        dx[0] = v1;
        dx[1] = v2;
        dx[2] = g1 - fr;
        dx[3] = g2 + fr;
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        PAIR_SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _e: usize, p: &Probe) -> f64 {
        let s = p.state;
        let (v1, v2, stuck) = self.velocities(s[2], s[3]);
        match which {
            0 => s[0],
            1 => s[1],
            2 => v1,
            3 => v2,
            4 => -self.friction(s[2], s[3], p.forces[0].value(), p.forces[1].value()),
            _ => f64::from(stuck),
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let (v1, v2, _) = self.velocities(x[2], x[3]);
        Some(0.5 * (self.two.m1 * v1 * v1 + self.two.m2 * v2 * v2))
    }
    fn port_inertia(&self, _x: &[f64], port: usize) -> Option<f64> {
        Some(if port == 0 { self.two.m1 } else { self.two.m2 })
    }
    fn diagnose(&self, _x: &[f64], step: f64) -> Vec<Diagnostic> {
        self.contact.diagnose(self.two.reduced(), step, "karnopp_pair")
    }
}

fn build_pair(p: &mut Params) -> Result<Built> {
    let two = Two { m1: p.positive("m1")?, m2: p.positive("m2")? };
    let contact = Contact::read(p)?;
    let init = read_two_init(p)?;
    Ok(Built::Admittance(Box::new(KarnoppPair { two, contact, init, sides: Sides::default() })))
}

// ---------------------------------------------------------------------------------------
// karnopp_stack

/// Which of the four cases of Fig. 4(c) holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// (a) both contacts stick: V1 = V2 = 0.
    BothStick,
    /// (b) m1 slips on m2, m2 sticks to the ground.
    UpperSlips,
    /// (c) m1 sticks to m2, m2 slips on the ground.
    LowerSlips,
    /// (d) both slip.
    BothSlip,
}

/// m1 on m2 on the ground (Fig. 4): state [q1, q2, P1, P2].
#[derive(Clone, Debug)]
pub struct KarnoppStack {
    two: Two,
    /// Contact between m1 and m2 (Fr).
    pub upper: Contact,
    /// Contact between m2 and the ground (Ff).
    pub lower: Contact,
    init: [f64; 4],
    /// The case while the stepper locks it (`Case as u8`).
    sides: Sides,
}

const STACK_SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("q1", 1, "m", "position of m1 (the upper mass)"),
    SignalInfo::new("q2", 1, "m", "position of m2 (the lower mass)"),
    SignalInfo::new("v1", 1, "m/s", "velocity of m1"),
    SignalInfo::new("v2", 1, "m/s", "velocity of m2"),
    SignalInfo::new("fr", 1, "N", "friction force of m2 on m1"),
    SignalInfo::new("ff", 1, "N", "friction force of the ground on m2"),
    SignalInfo::new(
        "case",
        1,
        "",
        "stick/slip case of Fig. 4(c): 0 = (a) both stick, 1 = (b) upper slips, 2 = (c) lower slips, 3 = (d) both slip",
    ),
];

impl KarnoppStack {
    /// (V1, V2, case) from the momenta: the relative band |μ Vr| < μ DV_upper and the
    /// ground band |P| < m DV_lower (m = m1 + m2 when m1 rides on m2).
    pub fn velocities(&self, p1: f64, p2: f64) -> (f64, f64, Case) {
        let t = self.two;
        let case = match self.sides.get() {
            Some(0) => Case::BothStick,
            Some(1) => Case::UpperSlips,
            Some(2) => Case::LowerSlips,
            Some(_) => Case::BothSlip,
            None if t.rel_momentum(p1, p2).abs() < t.reduced() * self.upper.dv => {
                if (p1 + p2).abs() < t.total() * self.lower.dv {
                    Case::BothStick
                } else {
                    Case::LowerSlips
                }
            }
            None if p2.abs() < t.m2 * self.lower.dv => Case::UpperSlips,
            None => Case::BothSlip,
        };
        match case {
            Case::BothStick => (0.0, 0.0, case),
            Case::LowerSlips => ((p1 + p2) / t.total(), (p1 + p2) / t.total(), case),
            Case::UpperSlips => (p1 / t.m1, 0.0, case),
            Case::BothSlip => (p1 / t.m1, p2 / t.m2, case),
        }
    }

    /// (Fr, Ff) of Fig. 5 for momenta and external forces g1, g2: (15)–(21).
    pub fn friction(&self, p1: f64, p2: f64, g1: f64, g2: f64) -> (f64, f64) {
        self.friction_and_needed(p1, p2, g1, g2).0
    }

    /// (Fr, Ff) as [`friction`](Self::friction), and the sticking forces the stuck contacts
    /// need before they are limited to ±FH (upper, lower; `None` where a contact slips).
    fn friction_and_needed(&self, p1: f64, p2: f64, g1: f64, g2: f64) -> ((f64, f64), (Option<f64>, Option<f64>)) {
        let (v1, v2, case) = self.velocities(p1, p2);
        match case {
            Case::BothStick => {
                // (15), (16): Fr holds m1, Ff holds m2 under g2 and the reaction of Fr.
                let fr = self.upper.stick_force(g1);
                ((fr, self.lower.stick_force(g2 + fr)), (Some(g1), Some(g2 + fr)))
            }
            Case::UpperSlips => {
                // (17), (18).
                let fr = self.upper.law.phi(v1 - v2);
                ((fr, self.lower.stick_force(g2 + fr)), (None, Some(g2 + fr)))
            }
            Case::LowerSlips => {
                // (19), (21).
                let ff = self.lower.law.phi(v2);
                let t = self.two;
                let needed = (t.m2 * g1 - t.m1 * (g2 - ff)) / t.total();
                ((self.upper.stick_force(needed), ff), (Some(needed), None))
            }
            Case::BothSlip => ((self.upper.law.phi(v1 - v2), self.lower.law.phi(v2)), (None, None)),
        }
    }
}

impl Admittance for KarnoppStack {
    fn layout(&self) -> Layout {
        two_mass_layout()
    }
    /// The band edges of [`velocities`](Self::velocities): the relative band between the
    /// masses, and the ground band of both masses together (|P1 + P2| − (m1 + m2) DV, while
    /// they stick to each other) and of m2 alone (|P2| − m2 DV, while m1 slips on it); each
    /// positive outside its band. Which ground band applies changes with the first; each function
    /// is continuous in the state.
    fn state_switches(&self) -> usize {
        3
    }
    fn state_switchings(&self, x: &[f64], g: &mut [f64]) {
        let (t, (p1, p2)) = (self.two, (x[2], x[3]));
        g[0] = band_edge(t.rel_momentum(p1, p2), t.reduced() * self.upper.dv);
        g[1] = band_edge(p1 + p2, t.total() * self.lower.dv);
        g[2] = band_edge(p2, t.m2 * self.lower.dv);
    }
    /// Breakaway of each stuck contact, upper and lower (`Contact::holds` of the
    /// sticking forces (15)–(21) need).
    fn force_switches(&self) -> usize {
        2
    }
    fn lock_sides(&self, x: Option<&[f64]>) {
        self.sides.set(None);
        self.sides.set(x.map(|x| self.velocities(x[2], x[3]).2 as u8));
    }
    /// The relative momentum, the total or m2's onto its band's edge (the total moved in
    /// proportion to the masses, so that their relative momentum stays).
    fn on_switch(&self, which: usize, x: &mut [f64]) {
        let (t, (p1, p2)) = (self.two, (x[2], x[3]));
        let moved = match which {
            0 => relative_onto_edge(&t, p1, p2, t.reduced() * self.upper.dv),
            1 => {
                let half = t.total() * self.lower.dv;
                let d = onto_edge(p1 + p2, half) - (p1 + p2);
                let (q1, q2) = (p1 + d * t.m1 / t.total(), p2 + d * t.m2 / t.total());
                ((band_edge(q1 + q2, half) > 0.0) == (band_edge(p1 + p2, half) > 0.0)).then_some((q1, q2))
            }
            _ => Some((p1, onto_edge(p2, t.m2 * self.lower.dv))),
        };
        if let Some((p1, p2)) = moved {
            (x[2], x[3]) = (p1, p2);
        }
    }
    fn force_switchings(&self, x: &[f64], f: &[Force], g: &mut [f64]) {
        let (_, (upper, lower)) = self.friction_and_needed(x[2], x[3], f[0].value(), f[1].value());
        g[0] = self.upper.holds(upper);
        g[1] = self.lower.holds(lower);
    }
    fn init(&self, x: &mut [f64]) {
        two_mass_init(&self.two, &self.init, x);
    }
    fn port_motion(&self, x: &[f64], port: usize) -> Motion {
        let (v1, v2, _) = self.velocities(x[2], x[3]);
        two_mass_motion(x, v1, v2, port)
    }
    /// (12)–(14): Ṗ1 = G1 − Fr, Ṗ2 = G2 + Fr − Ff.
    fn derivative(&self, x: &[f64], f: &[Force], _t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
        let (g1, g2) = (f[0].value(), f[1].value());
        let (v1, v2, _) = self.velocities(x[2], x[3]);
        let (fr, ff) = self.friction(x[2], x[3], g1, g2);
        dx[0] = v1;
        dx[1] = v2;
        dx[2] = g1 - fr;
        dx[3] = g2 + fr - ff;
        Ok(())
    }
    fn signals(&self) -> Vec<SignalInfo> {
        STACK_SIGNALS.to_vec()
    }
    fn signal(&self, which: usize, _e: usize, p: &Probe) -> f64 {
        let s = p.state;
        let (v1, v2, case) = self.velocities(s[2], s[3]);
        let (fr, ff) = self.friction(s[2], s[3], p.forces[0].value(), p.forces[1].value());
        match which {
            0 => s[0],
            1 => s[1],
            2 => v1,
            3 => v2,
            4 => -fr,
            5 => -ff,
            _ => case as u8 as f64,
        }
    }
    fn energy(&self, x: &[f64]) -> Option<f64> {
        let (v1, v2, _) = self.velocities(x[2], x[3]);
        Some(0.5 * (self.two.m1 * v1 * v1 + self.two.m2 * v2 * v2))
    }
    fn port_inertia(&self, _x: &[f64], port: usize) -> Option<f64> {
        Some(if port == 0 { self.two.m1 } else { self.two.m2 })
    }
    fn diagnose(&self, _x: &[f64], step: f64) -> Vec<Diagnostic> {
        let mut out = self.upper.diagnose(self.two.reduced(), step, "karnopp_stack upper contact");
        out.extend(self.lower.diagnose(self.two.m2, step, "karnopp_stack lower contact"));
        out
    }
}

fn build_stack(p: &mut Params) -> Result<Built> {
    let two = Two { m1: p.positive("m1")?, m2: p.positive("m2")? };
    let mut contact = |key: &str| -> Result<Contact> {
        let mut o = p
            .object(key)?
            .ok_or_else(|| p.err(key, "missing required parameter (an object with the contact's law, FH and DV)"))?;
        let c = Contact::read(&mut o)?;
        o.finish()?;
        Ok(c)
    };
    let upper = contact("upper")?;
    let lower = contact("lower")?;
    let init = read_two_init(p)?;
    Ok(Built::Admittance(Box::new(KarnoppStack { two, upper, lower, init, sides: Sides::default() })))
}

// ---------------------------------------------------------------------------------------

const TWO_INIT: &[ParamDoc] = &[
    ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"q1\", \"q2\", \"v1\", \"v2\"}" },
    ParamDoc { name: "init.q1", unit: "m", default: Some("0"), doc: "initial position of m1" },
    ParamDoc { name: "init.q2", unit: "m", default: Some("0"), doc: "initial position of m2" },
    ParamDoc { name: "init.v1", unit: "m/s", default: Some("0"), doc: "initial velocity of m1" },
    ParamDoc { name: "init.v2", unit: "m/s", default: Some("0"), doc: "initial velocity of m2" },
];

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    // No table law for karnopp_mass: `force` is both its scalar applied force and the table's forces.
    r#"{"type": "karnopp_mass", "mass": 1.0, "force": 0.5, "FH": 2.0, "DV": 0.001, "init": {"q": 0.1, "v": 0.2}, "law": "coulomb", "F": 2.0, "D": 0.1}"#,
    r#"{"type": "karnopp_mass", "mass": 1.0, "force": 0.5, "FH": 2.0, "DV": 0.001, "init": {"q": 0.1, "v": 0.2}, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}"#,
    r#"{"type": "karnopp_mass", "mass": 1.0, "force": 0.5, "FH": 2.0, "DV": 0.001, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}"#,
    r#"{"type": "karnopp_pair", "m1": 1.0, "m2": 2.0, "FH": 2.0, "DV": 0.001, "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}, "law": "coulomb", "F": 2.0, "D": 0.1}"#,
    r#"{"type": "karnopp_pair", "m1": 1.0, "m2": 2.0, "FH": 2.0, "DV": 0.001, "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}"#,
    r#"{"type": "karnopp_pair", "m1": 1.0, "m2": 2.0, "FH": 2.0, "DV": 0.001, "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}"#,
    r#"{"type": "karnopp_stack", "m1": 1.0, "m2": 2.0, "upper": {"FH": 2.0, "DV": 0.001, "law": "coulomb", "F": 2.0, "D": 0.1}, "lower": {"FH": 2.0, "DV": 0.001, "law": "coulomb", "F": 2.0, "D": 0.1}, "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}}"#,
    r#"{"type": "karnopp_stack", "m1": 1.0, "m2": 2.0, "upper": {"FH": 2.0, "DV": 0.001, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}, "lower": {"FH": 2.0, "DV": 0.001, "law": "stribeck", "Fc": 1.0, "Fs": 1.5, "vs": 0.01, "exponent": 1.5}, "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}}"#,
    r#"{"type": "karnopp_stack", "m1": 1.0, "m2": 2.0, "upper": {"FH": 2.0, "DV": 0.001, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}, "lower": {"FH": 2.0, "DV": 0.001, "law": "table", "speed": [0.0, 0.1, 1.0], "levels": [1.5, 1.0, 1.2]}, "init": {"q1": 0.1, "q2": 0.2, "v1": 0.3, "v2": 0.4}}"#,
];

/// Register `karnopp_mass`, `karnopp_pair` and `karnopp_stack`.
pub fn register(r: &mut Registry) {
    static MASS: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    static PAIR: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    static STACK: OnceLock<Vec<ParamDoc>> = OnceLock::new();
    r.register(ComponentType {
        name: "karnopp_mass",
        kind: Kind::Admittance,
        summary:
            "Karnopp stick–slip mass on a frictional ground (Fig. 2, (1)–(5)): stick band ±DV, exact zero velocity",
        params: table(
            &MASS,
            &[
                &[
                    ParamDoc { name: "mass", unit: "kg", default: None, doc: "mass m, > 0" },
                    ParamDoc { name: "force", unit: "N", default: Some("0"), doc: "constant applied force" },
                    ParamDoc { name: "init", unit: "", default: Some("{}"), doc: "initial state {\"q\", \"v\"}" },
                    ParamDoc { name: "init.q", unit: "m", default: Some("0"), doc: "initial position" },
                    ParamDoc { name: "init.v", unit: "m/s", default: Some("0"), doc: "initial velocity" },
                ],
                &contact_params!(""),
                LAW_PARAMS,
            ],
        ),
        ports: &[PortDoc { name: "body", domain: "scalar", doc: "the mass" }],
        signals: MASS_SIGNALS,
        build: build_mass,
    });
    r.register(ComponentType {
        name: "karnopp_pair",
        kind: Kind::Admittance,
        summary: "Karnopp friction between two masses, relative-motion sticking force (11)",
        params: table(
            &PAIR,
            &[
                &[
                    ParamDoc { name: "m1", unit: "kg", default: None, doc: "mass at port m1, > 0" },
                    ParamDoc { name: "m2", unit: "kg", default: None, doc: "mass at port m2, > 0" },
                ],
                TWO_INIT,
                &contact_params!(""),
                LAW_PARAMS,
            ],
        ),
        ports: &[
            PortDoc { name: "m1", domain: "scalar", doc: "first mass" },
            PortDoc { name: "m2", domain: "scalar", doc: "second mass" },
        ],
        signals: PAIR_SIGNALS,
        build: build_pair,
    });
    r.register(ComponentType {
        name: "karnopp_stack",
        kind: Kind::Admittance,
        summary:
            "Karnopp two-friction system (Fig. 4): m1 slides on m2, m2 on the ground; four stick/slip cases (15)–(21)",
        params: table(
            &STACK,
            &[
                &[
                    ParamDoc { name: "m1", unit: "kg", default: None, doc: "upper mass, > 0" },
                    ParamDoc { name: "m2", unit: "kg", default: None, doc: "lower mass, > 0" },
                    ParamDoc { name: "upper", unit: "", default: None, doc: "contact m1–m2: {FH, DV, law keys}" },
                ],
                &contact_params!("upper."),
                &law_params!("upper."),
                &[ParamDoc { name: "lower", unit: "", default: None, doc: "contact m2–ground: {FH, DV, law keys}" }],
                &contact_params!("lower."),
                &law_params!("lower."),
                TWO_INIT,
            ],
        ),
        ports: &[
            PortDoc { name: "m1", domain: "scalar", doc: "upper mass" },
            PortDoc { name: "m2", domain: "scalar", doc: "lower mass" },
        ],
        signals: STACK_SIGNALS,
        build: build_stack,
    });
}
