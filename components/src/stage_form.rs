//! Which position rate an implicit-Euler admittance returns (papers/modular-rk4-architecture.md,
//! (13)–(22); the derivation is in docs/explanation/friction.md, "RK4-accurate admittances").
//!
//! The papers' discrete algorithms update the velocity implicitly and then the position with
//! the *new* velocity: v(k) = v(k−1) + T·a(k), q(k) = q(k−1) + T·v(k) ((26), (36), (45),
//! gear (44), robot (69)). Written as a rate for (13) with stage step τ this is
//! ξ_v = a(x; τ), ξ_q = v + τ·ξ_v. With `"method": "euler"` (τ = T) that *is* the paper's
//! algorithm, bit for bit. Inside RK4 the extra τ·ξ_v is an O(τ) perturbation of the
//! continuous law q̇ = v in every stage: free motion becomes first order and a frictionless
//! oscillator loses energy like exp(−¾ T ω² t). The RK4 form therefore returns ξ_q = v (the
//! stage velocity) in every stage that ends sliding, and keeps ξ_v: in free motion ξ_v is
//! the continuous acceleration, so the stages are exactly those of RK4 on the continuous
//! equations (fourth order). In a stage that ends stuck it keeps the implicit form
//! ξ_q = v_new, exactly as I_fricK (19) keeps its τ-terms ((B + τK) v) only while it holds:
//! the τ-form is what makes the stuck state exact and unconditionally stable (model D's
//! contact stays dissipative at any K), and v = 0.0 there anyway.
//!
//! A stuck state can still move elastically: model D's mass swings on its presliding
//! spring–damper while the slider is held. There the implicit form ξ_q = v_new (and the
//! τ-damped ξ_v of the implicit step) integrates the elastic ODE at first order only (a
//! stuck oscillator at ω T = 0.01 lost 52 % of its amplitude in 10 s). Where RK4 resolves
//! that spring–damper ([`StageForm::set_held_continuous`], decided in `prepare` from its
//! step map), a stage that ends stuck therefore returns the continuous rates of the held
//! system (ξ_q = v, M ξ_v = h − K e − B v, slider rate 0.0): τ only decides stick or slip,
//! and while stuck the stages are RK4 on the elastic ODE (fourth order). Where RK4 would not
//! resolve it (a stiff contact, ω T near RK4's limit 2.83), the implicit form stays, which
//! keeps the held mass dissipative at any K.
//!
//! The method is learned once in `prepare` (called by `Simulator::new`); a component that was
//! never prepared uses the RK4 form (and the implicit form in its held elastic state).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use nalgebra::Vector3;
use stiction_framework::component::Sides;
use stiction_framework::stability::PortModel;
use stiction_framework::Method;

/// The method a component was prepared for: whether to return the papers' Euler form.
#[derive(Debug, Default)]
pub struct StageForm {
    euler: AtomicBool,
    /// RK4, and the held elastic state is resolved: stuck stages return the continuous rates.
    held: AtomicBool,
    /// An I_fricK element in the paper's form (B < T K/2) whose held spring RK4 resolves with
    /// the inertias on its ports ([`set_held_frequency`](Self::set_held_frequency)): it
    /// holds by (19b) and returns the continuous rates while it holds.
    held_rates: AtomicBool,
    /// RK4 integrates the component's continuous law while it slides too, not only while
    /// it holds ([`set_sliding_continuous`](Self::set_sliding_continuous)).
    sliding: AtomicBool,
    /// An I_fricK element in the paper's form whose held spring RK4 would not keep stable,
    /// coupled implicitly with the masses on its ports ([`set_held_frequency`](Self::set_held_frequency)).
    coupled: AtomicBool,
    /// A component whose own mass on its own spring RK4's explicit stages would not keep
    /// stable: every stage takes its implicit step's rates, as under Euler
    /// ([`set_stage_implicit`](Self::set_stage_implicit)).
    stage_implicit: AtomicBool,
}

impl Clone for StageForm {
    fn clone(&self) -> Self {
        StageForm {
            euler: AtomicBool::new(self.is_euler()),
            held: AtomicBool::new(self.held_continuous()),
            held_rates: AtomicBool::new(self.held_rates_only()),
            sliding: AtomicBool::new(self.sliding_continuous()),
            coupled: AtomicBool::new(self.coupled()),
            stage_implicit: AtomicBool::new(self.stage_implicit()),
        }
    }
}

impl PartialEq for StageForm {
    fn eq(&self, other: &Self) -> bool {
        self.is_euler() == other.is_euler()
            && self.held_continuous() == other.held_continuous()
            && self.held_rates_only() == other.held_rates_only()
            && self.sliding_continuous() == other.sliding_continuous()
            && self.coupled() == other.coupled()
            && self.stage_implicit() == other.stage_implicit()
    }
}

impl StageForm {
    /// Record the method (from `Admittance::prepare`).
    pub fn set(&self, method: Method) {
        self.euler.store(method == Method::Euler, Ordering::Relaxed);
    }

    /// True when the component runs under `"method": "euler"`: return the papers' form.
    #[inline]
    pub fn is_euler(&self) -> bool {
        self.euler.load(Ordering::Relaxed)
    }

    /// Record whether a stage that ends stuck returns the continuous rates of the held
    /// elastic system (from `Admittance::prepare`; never under Euler).
    pub fn set_held_continuous(&self, on: bool) {
        self.held.store(on && !self.is_euler(), Ordering::Relaxed);
    }

    /// True when stuck stages integrate the held elastic state with its continuous rates.
    #[inline]
    pub fn held_continuous(&self) -> bool {
        self.held.load(Ordering::Relaxed)
    }

    /// Record whether every stage returns the continuous rates, sliding as well as held
    /// (from `prepare`; never under Euler): models A and B where RK4 resolves their viscous
    /// part (D T/M ≤ 1), model D where it resolves both its held spring–damper and its
    /// slider's relaxation K/B.
    pub fn set_sliding_continuous(&self, on: bool) {
        self.sliding.store(on && !self.is_euler(), Ordering::Relaxed);
    }

    /// True when every stage returns the continuous rates ([`set_sliding_continuous`](Self::set_sliding_continuous)).
    #[inline]
    pub fn sliding_continuous(&self) -> bool {
        self.sliding.load(Ordering::Relaxed)
    }

    /// Record, for an impedance with an I_fricK element (19) of spring K and damper B, the
    /// method and whether the element runs its continuous law under it (τ = 0 in (19):
    /// [`model_c_step`](crate::friction::model_c_step)'s `continuous`): under RK4 where
    /// B ≥ T K/2, never under Euler (the paper's (19) bit for bit).
    ///
    /// (19) with τ is the implicit-Euler step of the element, which stays stable however
    /// stiff the element's relaxation K/B is; its τK acts as a damper in every stage. Where
    /// B ≥ T K/2, K T/B ≤ 2 is within RK4's stable range, and RK4 integrates the element's
    /// continuous law at fourth order, held and sliding, without the τK, which RK4 sees as an
    /// explicit damper that lowers its stable step (a stack of boxes on corner contacts:
    /// 5.6e-4 s with it, 1.4e-3 s without). Where B is smaller, the continuous law is too
    /// stiff for RK4 and the τK is the held state's only real damping: the rolling sphere of
    /// the paper's Sim I (K = 1e7, B = 10, T = 1e-4) rolls without slip because of it. There
    /// the paper's form stays.
    pub fn set_element(&self, method: Method, step: f64, k: f64, b: f64) {
        self.set(method);
        self.set_held_continuous(continuous_law(method, step, k, b));
        // Told again by the stepper after `prepare` where it applies (never under Euler).
        self.held_rates.store(false, Ordering::Relaxed);
        self.coupled.store(false, Ordering::Relaxed);
    }

    /// Whether an I_fricK element runs its continuous law ([`set_element`](Self::set_element)).
    #[inline]
    pub fn continuous_law(&self) -> bool {
        self.held_continuous()
    }

    /// For an I_fricK element of spring K and damper B in the paper's form under RK4 (B <
    /// T K/2): told by the stepper an estimate ω̄² of the squared frequency of its held spring
    /// with the inertias on its ports (`Impedance::held_frequency`), record whether RK4
    /// resolves it: the step map of RK4 on a mass K/ω̄² held by K and B stable at twice the
    /// step (model D's margin). Then the element still holds by (19b), whose τK keeps the
    /// stiff slip relaxation K/B implicit, but a stage in which it holds returns the
    /// continuous law K e + B v and ė = v: the elastic presliding motion at fourth order.
    /// Where ω̄ is not known (a port on a rigid body, whose rotation lowers the inertia at the
    /// contact) or RK4 would not resolve it, (19b) stays.
    ///
    /// Where RK4 would not keep even the paper's form of the held spring stable (its τK
    /// damping included, at twice the step) on the inertia of `couple` (Some where every port
    /// is a body that takes stage laws: its estimate ω̄², [`unresolved_paper`]), the element
    /// couples implicitly with the bodies
    /// ([`coupled`](Self::coupled)): (19) as in the paper's form, and each mass solves its
    /// stage with the element's law, deciding stick or slip at its new velocity
    /// (framework/src/stepper/coupling.rs).
    ///
    /// `couple` = ω̄² = ∞: the stepper found the held state of the element's group of bodies
    /// unstable under the explicit stages (its continuous law included, which the estimate
    /// does not judge): the element couples in the paper's form whatever its B.
    pub fn set_held_frequency(&self, method: Method, step: f64, k: f64, b: f64, omega2: Option<f64>, couple: Option<f64>) {
        let forced = couple == Some(f64::INFINITY) && !self.is_euler();
        if forced {
            self.set_held_continuous(false);
        }
        let on = !forced && resolves_held(method, step, k, b, omega2) && !self.continuous_law();
        self.held_rates.store(on, Ordering::Relaxed);
        let stiff = !on && !self.continuous_law() && !self.is_euler() && (forced || unresolved_paper(method, step, k, b, couple));
        self.coupled.store(stiff, Ordering::Relaxed);
    }

    /// Whether the element couples implicitly with the masses it holds
    /// ([`set_held_frequency`](Self::set_held_frequency)).
    #[inline]
    pub fn coupled(&self) -> bool {
        self.coupled.load(Ordering::Relaxed)
    }

    /// Under RK4, for a component with a mass of its own (model B's) on a spring of its own:
    /// whether RK4's explicit stages would not keep that mass stable at the step
    /// ([`stiff_inner`]). Then every stage takes the rates of the component's implicit step,
    /// ξ_q = v_new, ξ_v = (v_new − v)/τ, as its Euler form does: RK4's step map on a mass
    /// and spring so integrated has spectral radius ≤ 1 at every K T²/M and B T/M (1/3 as
    /// K → ∞), so the component is stable at any stiffness, as the paper's step is, at first
    /// order. Never under Euler.
    pub fn set_stage_implicit(&self, on: bool) {
        self.stage_implicit.store(on && !self.is_euler(), Ordering::Relaxed);
    }

    /// [`set_stage_implicit`](Self::set_stage_implicit)'s decision.
    #[inline]
    pub fn stage_implicit(&self) -> bool {
        self.stage_implicit.load(Ordering::Relaxed)
    }

    /// Whether the element holds by (19b) and returns the continuous rates while it holds
    /// ([`set_held_frequency`](Self::set_held_frequency)).
    #[inline]
    pub fn held_rates_only(&self) -> bool {
        self.held_rates.load(Ordering::Relaxed)
    }

    /// The form [`model_c_step`](crate::friction::model_c_step) integrates the element in.
    #[inline]
    pub fn element(&self) -> ElementForm {
        if self.continuous_law() {
            ElementForm::Continuous
        } else if self.held_rates_only() {
            ElementForm::HeldRates
        } else {
            ElementForm::Paper
        }
    }

    /// Whether a held stage returns the continuous rates: the continuous law, or
    /// [`held_rates_only`](Self::held_rates_only). The stuck spring `stiction check` sees is
    /// then K and B without τK.
    #[inline]
    pub fn held_rates(&self) -> bool {
        self.continuous_law() || self.held_rates_only()
    }

    /// The position rate for stage velocity `v` and new velocity `v_new` = v + τ·ξ_v of the
    /// implicit step: `v_new` under Euler (the paper's q(k) = q(k−1) + T v(k)) and in a stage
    /// that ends `stuck`, else `v`.
    #[inline]
    pub fn position_rate<V>(&self, v: V, v_new: V, stuck: bool) -> V {
        if stuck || self.is_euler() {
            v_new
        } else {
            v
        }
    }
}

/// Whether RK4 resolves a held element of spring K and damper B whose held system has the
/// squared frequencies at most `omega2` ([`StageForm::set_held_frequency`]): the step map
/// of `method` on a mass K/ω̄² held by K and B stable at twice the step; never under Euler.
pub fn resolves_held(method: Method, step: f64, k: f64, b: f64, omega2: Option<f64>) -> bool {
    method != Method::Euler
        && omega2.is_some_and(|w2| {
            w2 > 0.0 && explicit_model(k / w2, k, b, false).stable(method.tableau(), 2.0 * step)
        })
}

/// Whether RK4 would not keep the paper's form of a held element (spring K, damper B + τK)
/// stable on a mass K/ω̄² at twice the step ([`StageForm::set_held_frequency`]); false under
/// Euler and where ω̄ is not known.
pub fn unresolved_paper(method: Method, step: f64, k: f64, b: f64, omega2: Option<f64>) -> bool {
    method != Method::Euler
        && omega2.is_some_and(|w2| {
            w2 > 0.0 && !explicit_model(k / w2, k, b, true).stable(method.tableau(), 2.0 * step)
        })
}

/// Whether `method`'s explicit stages would not keep a mass M on a spring K with damper B
/// (its other end held) stable at the step ([`StageForm::set_stage_implicit`]): exactly
/// where `check` warned of the explicit form before; false under Euler.
pub fn stiff_inner(method: Method, step: f64, mass: f64, k: f64, b: f64) -> bool {
    method != Method::Euler && !explicit_model(mass, k, b, false).stable(method.tableau(), step)
}

/// The model of a spring K with damper B on inertia M that RK4's explicit stages integrate
/// (`paper`: (19)'s τK of damping per stage too).
fn explicit_model(inertia: f64, k: f64, b: f64, paper: bool) -> PortModel {
    let k_implicit = if paper { k } else { 0.0 };
    PortModel { inertia, k, b, k_implicit, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false }
}

/// Whether RK4's explicit stages would not keep inertia M on spring K with damper B stable
/// at the step (`paper`: (19)'s τK of damping per stage too): `check`'s warning.
pub fn explicit_unstable(step: f64, inertia: f64, k: f64, b: f64, paper: bool) -> bool {
    !explicit_model(inertia, k, b, paper).stable(Method::Rk4.tableau(), step)
}

/// The largest step ≤ `step` at which [`explicit_unstable`] is false (0 if none).
pub fn largest_stable_step(step: f64, inertia: f64, k: f64, b: f64, paper: bool) -> f64 {
    explicit_model(inertia, k, b, paper).largest_stable_step(Method::Rk4.tableau(), step).unwrap_or(0.0)
}

/// How an I_fricK element (19) is integrated ([`StageForm::element`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementForm {
    /// (19) with the stage's τ: the paper's algorithm (Euler), and RK4 where B < T K/2.
    Paper,
    /// (19) with τ decides whether it holds; a held stage returns the continuous law K e +
    /// B v and ė = v ([`StageForm::set_held_frequency`]).
    HeldRates,
    /// The continuous law, τ = 0 (RK4 where B ≥ T K/2).
    Continuous,
}

/// Whether an I_fricK element of spring K and damper B runs its continuous law under `method`
/// and step T ([`StageForm::set_element`]): RK4 and B ≥ T K/2.
pub fn continuous_law(method: Method, step: f64, k: f64, b: f64) -> bool {
    method != Method::Euler && b >= 0.5 * step * k
}

/// The factor of τ in (19) for an element evaluated in packed pairs (`plane_contact`): 1
/// for the paper's form (the default, as a [`StageForm`] never prepared), 0 for the
/// continuous law ([`continuous_law`]), so that the damping B + (τ·factor) K is one
/// expression for both, bit for bit (19) where the factor is 1. An f64 in an atomic, set
/// by `prepare`.
#[derive(Debug)]
pub struct TauFactor(AtomicU64);

/// The bit of [`TauFactor`] that records held rates.
const HELD_RATES: u64 = 1;
/// The bit of [`TauFactor`] that records an element held implicitly with its mass
/// ([`StageForm::coupled`]).
const COUPLED: u64 = 2;

impl Default for TauFactor {
    fn default() -> Self {
        TauFactor(AtomicU64::new(1f64.to_bits()))
    }
}

impl Clone for TauFactor {
    fn clone(&self) -> Self {
        TauFactor(AtomicU64::new(self.0.load(Ordering::Relaxed)))
    }
}

impl TauFactor {
    /// Record the form ([`continuous_law`]).
    pub fn set(&self, continuous: bool) {
        self.0.store(if continuous { 0f64 } else { 1f64 }.to_bits(), Ordering::Relaxed);
    }

    /// The factor: 1 or 0.
    #[inline]
    pub fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed) & !(HELD_RATES | COUPLED))
    }

    /// With factor 1 (the paper's form), record whether the element returns its continuous
    /// law while it holds ([`StageForm::set_held_frequency`]'s `held rates`), in the
    /// factor's last mantissa bit, which [`get`](Self::get) masks off (no field of its own:
    /// 10⁵ contacts and their batch's copies).
    pub fn set_held_rates(&self, on: bool) {
        let factor = self.0.load(Ordering::Relaxed) & !(HELD_RATES | COUPLED);
        let on = on && f64::from_bits(factor) == 1.0;
        self.0.store(factor | if on { HELD_RATES } else { 0 }, Ordering::Relaxed);
    }

    /// With factor 1 and no held rates, record whether the element is held implicitly with
    /// its mass ([`StageForm::coupled`]), in the factor's second-last mantissa bit.
    pub fn set_coupled(&self, on: bool) {
        let bits = self.0.load(Ordering::Relaxed) & !COUPLED;
        let on = on && bits & HELD_RATES == 0 && f64::from_bits(bits) == 1.0;
        self.0.store(bits | if on { COUPLED } else { 0 }, Ordering::Relaxed);
    }

    /// Whether the element is held implicitly with its mass.
    #[inline]
    pub fn coupled(&self) -> bool {
        self.0.load(Ordering::Relaxed) & COUPLED != 0
    }

    /// The factor, held rates and coupled, in one load.
    #[inline]
    pub fn read(&self) -> Form {
        let bits = self.0.load(Ordering::Relaxed);
        Form {
            factor: f64::from_bits(bits & !(HELD_RATES | COUPLED)),
            held_rates: bits & HELD_RATES != 0,
            coupled: bits & COUPLED != 0,
        }
    }

    /// Whether the element holds by (19b) and returns its continuous law while it holds.
    #[inline]
    pub fn held_rates(&self) -> bool {
        self.0.load(Ordering::Relaxed) & HELD_RATES != 0
    }

    /// Whether the element runs its continuous law.
    #[inline]
    pub fn continuous(&self) -> bool {
        self.get() == 0.0
    }
}

/// What a [`TauFactor`] holds, read at once ([`TauFactor::read`]).
#[derive(Clone, Copy, Debug)]
pub struct Form {
    /// The factor of τ: 1 or 0.
    pub factor: f64,
    /// [`TauFactor::held_rates`].
    pub held_rates: bool,
    /// [`TauFactor::coupled`].
    pub coupled: bool,
}

/// The [`TauFactor`]s of a batch of elements (`PointImpedance::Shared` of `plane_contact`):
/// one form for every member, found once when the batch is prepared, so that the packed
/// kernel does not read and multiply each member's factor; or `Each` (the default, also for
/// a batch never prepared): read member by member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchForm {
    #[default]
    Each,
    /// Every factor is 1: (19)'s damping B + τK.
    Paper,
    /// Every factor is 0: the continuous law's B.
    Continuous,
}

impl BatchForm {
    /// The form shared by all of `factors`.
    pub fn of<'a>(mut factors: impl Iterator<Item = &'a TauFactor>) -> BatchForm {
        let Some(first) = factors.next().map(TauFactor::get) else { return BatchForm::Each };
        if !factors.all(|f| f.get() == first) {
            return BatchForm::Each;
        }
        if first == 0.0 {
            BatchForm::Continuous
        } else if first == 1.0 {
            BatchForm::Paper
        } else {
            BatchForm::Each
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held rates only where RK4 resolves the held spring with the margin of 2T, never under
    /// Euler, and a component prepared again (another method or step) starts from the
    /// paper's form until the stepper tells it again.
    #[test]
    fn held_rates_follow_the_method_and_the_margin() {
        let (k, b) = (100.0, 0.01);
        let form = StageForm::default();
        form.set_element(Method::Rk4, 1e-3, k, b);
        assert_eq!(form.element(), ElementForm::Paper);
        // ω̄² = K/M with M = 1 kg: ω T = 0.01.
        form.set_held_frequency(Method::Rk4, 1e-3, k, b, Some(k), None);
        assert_eq!(form.element(), ElementForm::HeldRates);
        assert!(form.held_rates() && form.clone().held_rates_only());
        // ω T = 1.5 at T = 1e-3: stable at T, not at 2T.
        form.set_held_frequency(Method::Rk4, 1e-3, k, b, Some(2.25e6), None);
        assert_eq!(form.element(), ElementForm::Paper);
        form.set_held_frequency(Method::Rk4, 1e-3, k, b, None, None);
        assert_eq!(form.element(), ElementForm::Paper);
        form.set_held_frequency(Method::Rk4, 1e-3, k, b, Some(k), None);
        form.set_element(Method::Euler, 1e-3, k, b);
        assert_eq!(form.element(), ElementForm::Paper, "prepared again under Euler");
        form.set_held_frequency(Method::Euler, 1e-3, k, b, Some(k), None);
        assert_eq!(form.element(), ElementForm::Paper, "never under Euler");
        // B ≥ T K/2: the continuous law, whatever the stepper tells.
        form.set_element(Method::Rk4, 1e-3, k, 1.0);
        form.set_held_frequency(Method::Rk4, 1e-3, k, 1.0, Some(k), None);
        assert_eq!(form.element(), ElementForm::Continuous);

        let factor = TauFactor::default();
        factor.set(false);
        factor.set_held_rates(true);
        assert!(factor.held_rates() && factor.get() == 1.0 && !factor.continuous());
        factor.set(false);
        assert!(!factor.held_rates(), "prepared again");
        factor.set(true);
        factor.set_held_rates(true);
        assert!(!factor.held_rates() && factor.get() == 0.0, "not with the continuous law");
    }
}

/// The stop and breakaway of an implicit-Euler admittance with a stick indicator s (model
/// A (26), the gear (44)), located within the RK4 step (issue 43, item 4;
/// framework/src/stepper/events.rs). A stage of the implicit step decides "stuck" once the
/// velocity is within τ·(deceleration) of zero, up to a step before it reaches zero: the
/// stop came early, first order through it. The component declares its sliding velocity
/// as a state switch ([`switching`](Self::switching): while sliding, v in 1-D (its sign the
/// direction) and v·d in 2-D and 3-D (d the direction where the sub-step started, |v| where
/// none is locked); a constant while stuck) and its breakaway as a force switch of its own.
/// While a search locks the sides, a sliding stage keeps its direction's sliding law past
/// zero ([`direction`](Self::direction)); a stuck one is not locked (its stages decide stick
/// or slip from the load, exactly as the implicit step does). At a located stop the
/// velocity is set to exactly 0.0 and s to 1 ([`on_switch`](Self::on_switch)).
#[derive(Clone, Debug, Default)]
pub struct StopSwitch {
    /// [`SLIDING`](Self::SLIDING) while a sliding direction is locked.
    sides: Sides,
    /// Where the last locked (sub-)step started: sliding or [`STUCK`](Self::STUCK).
    started: Sides,
    /// While a lock is on: 1 if it held where it started (a stuck start locks no
    /// direction), else 0.
    session: Sides,
    /// The locked direction (a unit vector; ±1 in 1-D), and the speed where it was locked,
    /// as bits.
    dir: std::sync::Arc<[AtomicU64; 4]>,
}

impl StopSwitch {
    const SLIDING: u8 = 0;
    const STUCK: u8 = 2;
    /// A switching function's value where it cannot change.
    pub const NEVER: f64 = 1.0;

    /// The locked sliding direction (a unit vector, ±1 in 1-D), if locked.
    #[inline]
    pub fn direction(&self) -> Option<Vector3<f64>> {
        let d = |i: usize| f64::from_bits(self.dir[i].load(Ordering::Relaxed));
        self.sides.get().map(|_| Vector3::new(d(0), d(1), d(2)))
    }

    /// Whether velocity `v` (1 to 3 components) with indicator `s` is stuck (not while a
    /// direction is locked): v = 0.0 and s > ½ (`post_step` leaves s at exactly 1 while
    /// stuck).
    #[inline]
    pub fn stuck(&self, v: &[f64], s: f64) -> bool {
        self.sides.get().is_none() && s > 0.5 && v.iter().all(|&v| v == 0.0)
    }

    /// The state switch: while sliding v (1-D), v·d (locked) or |v|; [`NEVER`](Self::NEVER)
    /// while stuck.
    pub fn switching(&self, v: &[f64], s: f64) -> f64 {
        if self.stuck(v, s) {
            return Self::NEVER;
        }
        match (v, self.direction()) {
            ([v], _) => *v,
            (v, Some(d)) => v.iter().zip(d.iter()).map(|(v, d)| v * d).sum(),
            (v, None) => v.iter().map(|v| v * v).sum::<f64>().sqrt(),
        }
    }

    /// `Admittance::lock_sides` with the velocity and indicator where the (sub-)step
    /// starts (`None`: unlock): a sliding direction is locked, a stuck state is not.
    pub fn lock(&self, at: Option<(&[f64], f64)>) {
        self.sides.set(None);
        self.session.set(at.map(|_| 0));
        let Some((v, s)) = at else {
            return;
        };
        if self.stuck(v, s) {
            self.session.set(Some(1));
            self.started.set(Some(Self::STUCK));
            return;
        }
        let r = v.iter().map(|v| v * v).sum::<f64>().sqrt();
        if r == 0.0 {
            // At rest without the indicator (within a step): its stages decide.
            return;
        }
        for (i, d) in self.dir.iter().enumerate() {
            let di = match (v.len(), v.get(i)) {
                (1, Some(&x)) => x.signum(),
                (_, Some(&x)) => x / r,
                _ if i == 3 => r,
                _ => 0.0,
            };
            d.store(di.to_bits(), Ordering::Relaxed);
        }
        self.started.set(Some(Self::SLIDING));
        self.sides.set(Some(Self::SLIDING));
    }

    /// Whether the component holds where its (sub-)step started: while a lock is on, at the
    /// lock; else in `v` and `s` ([`stuck`](Self::stuck)). A breakaway function is the
    /// static margin then, and a constant negative value ([`SLIDING_MARGIN`](Self::SLIDING_MARGIN))
    /// while it slides: its zeros while sliding are no switch (each cost a search).
    pub fn held_at_start(&self, v: &[f64], s: f64) -> bool {
        match self.session.get() {
            Some(held) => held == 1,
            None => self.stuck(v, s),
        }
    }

    /// A breakaway function's value while sliding ([`held_at_start`](Self::held_at_start)).
    pub const SLIDING_MARGIN: f64 = -1.0;

    /// A breakaway function at velocity `v` with indicator `s`: the static `margin` if the
    /// component held where its (sub-)step started, else [`SLIDING_MARGIN`](Self::SLIDING_MARGIN).
    pub fn breakaway(&self, v: &[f64], s: f64, margin: impl FnOnce() -> f64) -> f64 {
        if self.held_at_start(v, s) {
            margin()
        } else {
            Self::SLIDING_MARGIN
        }
    }

    /// `Admittance::on_switch`: a component that was sliding stops, v = 0.0 and s = 1
    /// (where the load exceeds the static level the next stages slide off: their σ = 0
    /// brings s to ⅓ by the end of the step); one that was stuck (it broke away) is left,
    /// and so is one whose velocity only turned across the locked direction (2-D, 3-D: v·d
    /// = 0 with a speed above 1e-6 of the locked one; the next sub-step locks its new
    /// direction).
    pub fn on_switch(&self, v: &mut [f64], s: &mut f64) {
        let speed = v.iter().map(|v| v * v).sum::<f64>().sqrt();
        let locked_speed = f64::from_bits(self.dir[3].load(Ordering::Relaxed));
        let stopped = v.len() == 1 || speed <= 1e-6 * locked_speed;
        if self.started.get() != Some(Self::STUCK) && stopped {
            v.fill(0.0);
            *s = 1.0;
        }
    }
}
