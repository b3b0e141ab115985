//! Which position rate an implicit-Euler admittance returns (papers/modular-rk4-architecture.md,
//! (13)–(22); the derivation is in docs/friction.md, "RK4-accurate admittances").
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
//! The method is learned once in `prepare` (called by `Simulator::new`); a component that was
//! never prepared uses the RK4 form.

use std::sync::atomic::{AtomicBool, Ordering};
use stiction_framework::Method;

/// The method a component was prepared for: whether to return the papers' Euler form.
#[derive(Debug, Default)]
pub struct StageForm {
    euler: AtomicBool,
}

impl Clone for StageForm {
    fn clone(&self) -> Self {
        StageForm { euler: AtomicBool::new(self.is_euler()) }
    }
}

impl PartialEq for StageForm {
    fn eq(&self, other: &Self) -> bool {
        self.is_euler() == other.is_euler()
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
