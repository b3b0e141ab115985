//! Efficiencies of a geared transmission and the asymmetry coefficients of the gear model
//! (papers/gear-transmission-asymmetric-friction.txt, section 4; shared/MODELS.md §4).
//!
//! * Forward efficiency ηf = (1 − γu)/(1 + γv) and backward efficiency
//!   ηb = (1 − γv)/(1 + γu)  (26): at the edge of sticking a forward drive delivers
//!   fv = ηf·fu, a back drive fu = ηb·fv.
//! * The inverse (27): γu = (1 − 2ηf + ηb ηf)/(1 − ηb ηf), γv = (1 − 2ηb + ηb ηf)/(1 − ηb ηf).
//! * Classification from the statics (23): backdrivable iff |γv| < 1, forward-drivable
//!   iff |γu| < 1 ("self-locking" = non-backdrivable).
//! * Set-valued multiplier λ of (31), its single-valued replacement λs (35) and Φ (34).
//!
//! The model is invariant to flipping the signs of both coefficients; efficiencies and the
//! classification are given for the representative with γu + γv ≥ 0 ([`normalise`]).

/// Stand-in for ±∞ in λs (35) when the gear model is ill-posed (|ρ̂| ≥ 1): large enough
/// to make any step static, small enough that h·λ/(m + M) stays finite.
pub const LAMBDA_BOUND: f64 = 1e100;

/// The representative of {γu, γv} with γu + γv ≥ 0 (the model is invariant to flipping both).
pub fn normalise(gamma_u: f64, gamma_v: f64) -> (f64, f64) {
    if gamma_u + gamma_v < 0.0 {
        (-gamma_u, -gamma_v)
    } else {
        (gamma_u, gamma_v)
    }
}

/// (26): forward and backward efficiencies (ηf, ηb) of coefficients (γu, γv), after
/// [`normalise`]. Infinite or NaN when 1 + γv = 0 or 1 + γu = 0 (no efficiency exists).
pub fn efficiencies(gamma_u: f64, gamma_v: f64) -> (f64, f64) {
    let (gu, gv) = normalise(gamma_u, gamma_v);
    ((1.0 - gu) / (1.0 + gv), (1.0 - gv) / (1.0 + gu))
}

/// (27): asymmetry coefficients (γu, γv) for forward and backward efficiencies in (0, 1].
/// Both efficiencies equal to 1 is the frictionless gear (0, 0); exactly one of them equal
/// to 1 has no gear model (the map (26) is singular there) and is an error.
pub fn asymmetry_from_efficiencies(eta_f: f64, eta_b: f64) -> Result<(f64, f64), String> {
    for (name, e) in [("forward", eta_f), ("backward", eta_b)] {
        if !(e.is_finite() && e > 0.0 && e <= 1.0) {
            return Err(format!(
                "{name} efficiency must be in (0, 1], got {e} (give gamma_u/gamma_v directly for a self-locking gear)"
            ));
        }
    }
    if eta_f == 1.0 && eta_b == 1.0 {
        return Ok((0.0, 0.0));
    }
    if eta_f == 1.0 || eta_b == 1.0 {
        return Err(format!(
            "efficiencies ({eta_f}, {eta_b}): a lossless drive in one direction only has no gear model; \
             use values below 1 or both equal to 1"
        ));
    }
    let d = 1.0 - eta_b * eta_f;
    Ok(((1.0 - 2.0 * eta_f + eta_b * eta_f) / d, (1.0 - 2.0 * eta_b + eta_b * eta_f) / d))
}

/// Drivability of a transmission, from the statics (23).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drivability {
    /// |γv| < 1: a torque on the output alone can move the gear.
    pub backdrivable: bool,
    /// |γu| < 1: a torque on the input alone can move the gear.
    pub forward_drivable: bool,
}

impl std::fmt::Display for Drivability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = if self.backdrivable { "backdrivable" } else { "non-backdrivable (self-locking)" };
        let fd = if self.forward_drivable { "forward-drivable" } else { "non-forward-drivable" };
        write!(f, "{b}, {fd}")
    }
}

/// Classification of coefficients (γu, γv).
pub fn classify(gamma_u: f64, gamma_v: f64) -> Drivability {
    let (gu, gv) = normalise(gamma_u, gamma_v);
    Drivability { backdrivable: gv.abs() < 1.0, forward_drivable: gu.abs() < 1.0 }
}

/// (29): ρ̂ = (γu m − γv M)/(m + M). The 1-DOF model is well-posed iff |ρ̂| < 1.
pub fn rho_hat(gamma_u: f64, gamma_v: f64, m: f64, big_m: f64) -> f64 {
    (gamma_u * m - gamma_v * big_m) / (m + big_m)
}

/// (32): φ(fu, fv, ρ) = γu fu + γv fv − ρ (fu − fv).
#[inline]
pub fn phi(gamma_u: f64, gamma_v: f64, fu: f64, fv: f64, rho: f64) -> f64 {
    gamma_u * fu + gamma_v * fv - rho * (fu - fv)
}

/// (35): the single-valued solution λs of λ − ρ|λ| = φ (equal to the unique solution (31)
/// when |ρ| < 1), with ±∞ replaced by ±[`LAMBDA_BOUND`].
#[inline]
pub fn lambda_s(phi: f64, rho: f64) -> f64 {
    if phi > 0.0 {
        if rho < 1.0 {
            phi / (1.0 - rho)
        } else {
            LAMBDA_BOUND
        }
    } else if phi < 0.0 {
        if rho > -1.0 {
            phi / (1.0 + rho)
        } else {
            -LAMBDA_BOUND
        }
    } else {
        0.0
    }
}

/// (34): Φ(s, φ, ρ) = s |λs(φ, ρ s)|, monotone in s ∈ [−1, 1].
#[inline]
pub fn big_phi(s: f64, phi: f64, rho: f64) -> f64 {
    s * lambda_s(phi, rho * s).abs()
}

/// A mode of the implicit step of a gear ((44); per joint, (69)): stuck, or sliding in
/// direction `s` (±1) with λ of (31) (φ of (32)) of sign `sigma` (±1). Within a mode the step
/// is affine in the torques (components/src/gear/stage.rs, the active-set solver of
/// components/src/robot/axproj.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// v = 0, the torques in the static set.
    Stuck,
    /// v of sign `s`, λ of sign `sigma`, the friction s |λ|.
    Slip { s: i8, sigma: i8 },
}

/// Every [`Mode`].
pub(crate) const MODES: [Mode; 5] = [
    Mode::Stuck,
    Mode::Slip { s: 1, sigma: 1 },
    Mode::Slip { s: 1, sigma: -1 },
    Mode::Slip { s: -1, sigma: 1 },
    Mode::Slip { s: -1, sigma: -1 },
];

/// (23): whether torques (fu, fv) (input torque referred to the output, output torque on
/// the load) can be held by static friction: fu − fv ∈ |γu fu + γv fv|·[−1, 1].
pub fn holds_statically(gamma_u: f64, gamma_v: f64, fu: f64, fv: f64) -> bool {
    (fu - fv).abs() <= (gamma_u * fu + gamma_v * fv).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_is_exact_and_classification() {
        for &(ef, eb) in &[(0.9, 0.8), (0.5, 0.2), (0.95, 0.99), (0.3, 0.7), (1.0, 1.0)] {
            let (gu, gv) = asymmetry_from_efficiencies(ef, eb).unwrap();
            let (f, b) = efficiencies(gu, gv);
            assert!((f - ef).abs() < 1e-12 && (b - eb).abs() < 1e-12, "{ef} {eb} -> {f} {b}");
            assert!(classify(gu, gv).backdrivable && classify(gu, gv).forward_drivable);
        }
        assert!(asymmetry_from_efficiencies(1.0, 0.5).is_err());
        assert!(asymmetry_from_efficiencies(0.0, 0.5).is_err());
        assert!(asymmetry_from_efficiencies(0.5, 1.2).is_err());
        assert!(!classify(0.2, 1.05).backdrivable);
        assert!(!classify(1.2, 0.1).forward_drivable);
        assert_eq!(classify(-0.2, -1.05), classify(0.2, 1.05));
    }

    #[test]
    fn lambda_s_solves_the_hidden_equation_when_well_posed() {
        for &rho in &[-0.9, -0.3, 0.0, 0.4, 0.95] {
            for &phi in &[-3.0, -0.1, 0.0, 0.2, 5.0] {
                let l = lambda_s(phi, rho);
                assert!((l - rho * l.abs() - phi).abs() < 1e-12);
            }
        }
        assert_eq!(lambda_s(1.0, 1.5), LAMBDA_BOUND);
        assert_eq!(lambda_s(-1.0, -1.0), -LAMBDA_BOUND);
        // φ < 0, ρ > 1: the continuous branch φ/(1 + ρ).
        assert!((lambda_s(-2.5, 1.5) + 1.0).abs() < 1e-15);
    }
}
