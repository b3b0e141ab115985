//! Integration methods as data: the stage offsets T_{r−1}, the stage step sizes τ = T_r
//! and the weights of the modular Runge–Kutta scheme (13) with (21)/(22)
//! (papers/modular-rk4-architecture.md). Every stepper of the project reads its stages
//! from a [`Tableau`], so the coefficients are written once.

/// Integration method of a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Modular RK4, (13) with (22): T_{0..3} = {0, T/2, T/2, T}, τ_{1..4} = {T/2, T/2, T, T}.
    Rk4,
    /// One stage, τ = T: x(k+1) = x(k) + T·ξ(x(k), kT; T).
    Euler,
}

impl Method {
    /// The stages of this method.
    pub fn tableau(self) -> &'static Tableau {
        match self {
            Method::Rk4 => &Tableau::RK4,
            Method::Euler => &Tableau::EULER,
        }
    }
}

/// The stages of an explicit method of the form (13), as fractions of the step T:
/// stage r (0-based) starts from x(k) + `offset[r]`·T·ξ_{r−1} at time kT + `offset[r]`·T and
/// gives its components the stage step size τ = `tau[r]`·T; x(k+1) = x(k) + T·Σ `weight[r]`·ξ_r / Σ weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tableau {
    /// T_{r−1}/T of (13b)/(13c) and (21).
    pub offset: &'static [f64],
    /// τ_r/T = T_r/T of (22).
    pub tau: &'static [f64],
    /// The weights of (13j): 1, 2, 2, 1 for RK4.
    pub weight: &'static [f64],
    /// Σ weight: (13j) divides by 6.
    pub weight_sum: f64,
}

impl Tableau {
    /// Modular RK4, (13) with the stage step sizes of (22).
    pub const RK4: Tableau = Tableau {
        offset: &[0.0, 0.5, 0.5, 1.0],
        tau: &[0.5, 0.5, 1.0, 1.0],
        weight: &[1.0, 2.0, 2.0, 1.0],
        weight_sum: 6.0,
    };

    /// Euler as the one-stage case, τ = T: the papers' discrete-time algorithms ((14), (20), ...).
    pub const EULER: Tableau = Tableau { offset: &[0.0], tau: &[1.0], weight: &[1.0], weight_sum: 1.0 };

    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.tau.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rk4_stage_sizes_are_those_of_22() {
        let t = Method::Rk4.tableau();
        assert_eq!(t.stages(), 4);
        // τ_r = T_r and the offsets are the T_{r−1} of (21).
        assert_eq!(&t.offset[1..], &t.tau[..3]);
        assert_eq!(t.weight.iter().sum::<f64>(), t.weight_sum);
        assert_eq!(Method::Euler.tableau().stages(), 1);
    }
}
