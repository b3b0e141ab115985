//! Test-only helpers.

/// Deterministic pseudo-random numbers in [lo, hi) for tests (64-bit LCG).
pub(crate) struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
}
