//! Friction laws Φ and their implicit counterparts Φ_Z (Kikuuwe et al., "Admittance and
//! impedance representations of friction based on implicit Euler integration",
//! papers/admittance-impedance-friction.md, section III).
//!
//! Every law here is isotropic: the force opposes the velocity and its magnitude depends on
//! the speed only, Φ(x) = φ(‖x‖)·x/‖x‖ with φ(s) = g(s) + D·s, where g is the dry
//! (rate-dependent) part and D ≥ 0 a viscous coefficient. Then the n-dimensional Φ_Z of
//! (52) acts along x and the scalar theory applies to ‖x‖.
//!
//! Φ_Z(x) is the unique y with y = Φ(x − Z y) (Theorem 1, (16)). It is computed
//! - exactly for Coulomb (g = F): (23) and, with D > 0, (25); in n dimensions (53)/(55);
//! - by the closed-form approximation (46)/(57) for rate-dependent g (Stribeck, tables).
//!   The viscous part is kept exact, only g(‖x − Z y‖) is replaced by g(‖x‖):
//!   y = (g(r) + D r)/(1 + Z D)·x/r when r > Z g(r), else x/Z  (r = ‖x‖).
//!   With g constant this is (25)/(55) exactly; with D = 0 it is (46)/(57) exactly.
//!   It is accurate when Z·|g'| ≪ 1, the validity condition (48)/(58), which
//!   [`FrictionLaw::diagnose`] checks for `stiction check`.
//!
//! For an isotropic law the general approximation (59) reduces to (57), because
//! x‖Φ(x)‖/‖x‖ = Φ(x); anisotropic laws are not offered.

use nalgebra::Vector3;
use std::sync::Arc;
use stiction_framework::component::{Diagnostic, LevelTable};
use stiction_framework::system::{ParamDoc, Params};
use stiction_framework::Result;

/// The dry part g(s) of a friction law (s = speed ≥ 0).
#[derive(Clone, Debug, PartialEq)]
pub enum DryLaw {
    /// Coulomb (2): g = F.
    Coulomb { f: f64 },
    /// Stribeck curve: g(s) = Fc + (Fs − Fc)·exp(−(s/vs)^δ).
    Stribeck { fc: f64, fs: f64, vs: f64, exponent: f64 },
    /// Piecewise-linear g through (speed, level) points, held constant beyond the last
    /// (shared with the stage laws of an element held implicitly: [`Curve::Table`]).
    ///
    /// [`Curve::Table`]: stiction_framework::component::Curve::Table
    Table(Arc<LevelTable>),
}

/// A friction law Φ(x) = (g(‖x‖) + D‖x‖)·x/‖x‖.
#[derive(Clone, Debug, PartialEq)]
pub struct FrictionLaw {
    pub dry: DryLaw,
    /// Viscous coefficient D (N·s/m), ≥ 0: (24)/(54).
    pub d: f64,
}

/// Result of Φ_Z: the force y and whether x/Z lies in the static set (stick).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhiZ {
    pub y: Vector3<f64>,
    /// True when y = x/Z, i.e. the velocity after the step, x − Z y, is exactly zero.
    pub stuck: bool,
}

impl FrictionLaw {
    /// Coulomb friction F plus viscosity D: (24) (D = 0: (2)).
    pub fn coulomb(f: f64, d: f64) -> Self {
        FrictionLaw { dry: DryLaw::Coulomb { f }, d }
    }

    /// Whether Φ_Z is computed exactly (Coulomb, Coulomb + viscous).
    pub fn is_exact(&self) -> bool {
        matches!(self.dry, DryLaw::Coulomb { .. })
    }

    /// Dry friction level g(s) at speed s ≥ 0.
    pub fn g(&self, s: f64) -> f64 {
        match &self.dry {
            DryLaw::Coulomb { f } => *f,
            DryLaw::Stribeck { fc, fs, vs, exponent } => fc + (fs - fc) * (-(s / vs).powf(*exponent)).exp(),
            DryLaw::Table(table) => table.at(s).0,
        }
    }

    /// Slope g'(s) (s > 0).
    pub fn dg(&self, s: f64) -> f64 {
        match &self.dry {
            DryLaw::Coulomb { .. } => 0.0,
            DryLaw::Stribeck { fc, fs, vs, exponent } => {
                let r = s / vs;
                -(fs - fc) * exponent / vs * r.powf(exponent - 1.0) * (-r.powf(*exponent)).exp()
            }
            DryLaw::Table(table) => table.at(s).1,
        }
    }

    /// Magnitude φ(s) = g(s) + D s of Φ at speed s > 0.
    pub fn magnitude(&self, s: f64) -> f64 {
        self.g(s) + self.d * s
    }

    /// Breakaway (maximum static) level Φ(+0) = g(0).
    pub fn static_level(&self) -> f64 {
        self.g(0.0)
    }

    /// Φ(x) for a scalar velocity (0 at x = 0, where Φ is set-valued).
    pub fn phi(&self, x: f64) -> f64 {
        if x == 0.0 {
            0.0
        } else {
            x.signum() * self.magnitude(x.abs())
        }
    }

    /// The continuous friction force on a body sliding at `v` under the applied force `h`:
    /// g(|v|) u + D v with u = v/|v|; past zero against a locked sliding direction `dir`
    /// (`StopSwitch`) u = −v/|v|, the law of that direction continued; at v = 0 the locked
    /// direction, else that of h (a body breaking away from rest).
    #[inline]
    pub fn sliding_force(&self, v: Vector3<f64>, h: Vector3<f64>, dir: Option<Vector3<f64>>) -> Vector3<f64> {
        let r = v.norm();
        let u = match dir {
            Some(d) if r > 0.0 && v.dot(&d) < 0.0 => -v / r,
            _ if r > 0.0 => v / r,
            Some(d) => d,
            None => h.try_normalize(0.0).unwrap_or_default(),
        };
        u * self.g(r) + v * self.d
    }

    /// Φ(x) for a vector velocity: (54) with g in place of F.
    pub fn phi_vec(&self, x: Vector3<f64>) -> Vector3<f64> {
        let r = x.norm();
        if r == 0.0 {
            Vector3::zeros()
        } else {
            x * (self.magnitude(r) / r)
        }
    }

    /// Φ_Z(x) in n dimensions (unused components of x must be zero): (53)/(55) exact for
    /// Coulomb, (57) with the viscous part exact otherwise. Z > 0.
    #[inline]
    pub fn phi_z(&self, z: f64, x: Vector3<f64>) -> PhiZ {
        let mut r = x.norm();
        if r.is_infinite() {
            // ‖x‖² overflows above 1.3e154: scale first, or D·r below would be 0·∞ = NaN.
            let s = x.amax();
            if s.is_finite() {
                r = s * (x / s).norm();
            }
        }
        if r == 0.0 {
            return PhiZ { y: Vector3::zeros(), stuck: true };
        }
        let g = self.g(r);
        if r <= z * g {
            PhiZ { y: x / z, stuck: true }
        } else {
            PhiZ { y: x * ((g + self.d * r) / ((1.0 + z * self.d) * r)), stuck: false }
        }
    }

    /// Φ_Z(x) for a scalar x: (23)/(25), or (46).
    #[inline]
    pub fn phi_z_scalar(&self, z: f64, x: f64) -> (f64, bool) {
        let p = self.phi_z(z, Vector3::new(x, 0.0, 0.0));
        (p.y.x, p.stuck)
    }

    /// (min g'(s) + D, max |g'(s)|) over s > 0, by the table's segments or by sampling the
    /// Stribeck curve densely over (0, 50 vs].
    pub fn slope_bounds(&self) -> (f64, f64) {
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        match &self.dry {
            DryLaw::Coulomb { .. } => {}
            DryLaw::Stribeck { vs, .. } => {
                let n = 20_000;
                for i in 1..=n {
                    let s = vs * 50.0 * (i as f64 / n as f64).powi(2);
                    let d = self.dg(s);
                    lo = lo.min(d);
                    hi = hi.max(d.abs());
                }
                // The slope at s → 0 for exponents < 1 is unbounded.
                let d0 = self.dg(vs * 1e-9);
                lo = lo.min(d0);
                hi = hi.max(d0.abs());
            }
            DryLaw::Table(table) => {
                let (speed, force) = (table.speeds(), table.levels());
                for i in 1..speed.len() {
                    let d = (force[i] - force[i - 1]) / (speed[i] - speed[i - 1]);
                    lo = lo.min(d);
                    hi = hi.max(d.abs());
                }
            }
        }
        (lo + self.d, hi)
    }

    /// Existence (15)/(56) and validity (48)/(58) of Φ_Z for the largest Z a model uses.
    /// `what` names the model's Z, e.g. "Z = τ/M".
    pub fn diagnose(&self, z: f64, what: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let (min_slope, max_abs) = self.slope_bounds();
        if 1.0 + z * min_slope <= 0.0 {
            out.push(Diagnostic::Warning(format!(
                "friction law: Φ' reaches {min_slope:.4e} ≤ −1/Z (Z = {z:.3e}, {what}): condition (15)/(56) fails, Φ_Z is not unique; \
                 lower the step or flatten the Stribeck drop (larger vs or smaller Fs − Fc)"
            )));
        }
        if !self.is_exact() {
            let ratio = z * max_abs;
            if ratio > 0.1 {
                out.push(Diagnostic::Warning(format!(
                    "friction law: Z·max|Φ'| = {ratio:.3} (Z = {z:.3e}, {what}) is not ≪ 1: the validity condition (48)/(58) of the \
                     closed-form approximation (46)/(57) fails, kinetic and breakaway forces are off by up to ~{:.0}%",
                    100.0 * ratio.min(10.0)
                )));
            } else {
                out.push(Diagnostic::Info(format!(
                    "friction law: approximation (46)/(57) with Z·max|Φ'| = {ratio:.2e} ({what}): condition (48)/(58) holds"
                )));
            }
        }
        out
    }

    /// Read a law from the component's own keys: `law` ("coulomb", "stribeck", "table")
    /// and its parameters (see [`LAW_PARAMS`]). Errors name the JSON path.
    pub fn from_params(p: &mut Params) -> Result<FrictionLaw> {
        let law = p.choice("law", &["coulomb", "stribeck", "table"])?;
        let d = p.nonneg_or("D", 0.0)?;
        let dry = match law {
            "stribeck" => {
                let fc = p.nonneg("Fc")?;
                let fs = p.nonneg("Fs")?;
                if fs < fc {
                    return Err(p.err("Fs", format!("breakaway level Fs = {fs} must be ≥ the Coulomb level Fc = {fc}")));
                }
                let vs = p.positive("vs")?;
                let exponent = p.positive_or("exponent", 2.0)?;
                DryLaw::Stribeck { fc, fs, vs, exponent }
            }
            "table" => {
                let speed = p.vec_f64("speed", None)?;
                // The levels have their own key: `force` is a component's constant applied
                // force (kikuuwe_a, kikuuwe_d, karnopp_mass), and one key for both made a table
                // law's levels push the body (issue 14).
                let Some(force) = p.vec_f64_opt("levels", Some(speed.len()))? else {
                    return Err(p.err(
                        "levels",
                        "missing: a table law's friction levels (N, one per speed) are given as `levels`, e.g. \"speed\": [0, 0.1], \"levels\": [1.5, 1.0]; `force` is not read by the law (where a component has it, it is the constant applied force)",
                    ));
                };
                if speed.is_empty() {
                    return Err(p.err("speed", "needs at least one point"));
                }
                if speed[0] != 0.0 {
                    return Err(p.err("speed", format!("must start at 0 (the breakaway level), got {}", speed[0])));
                }
                if let Some(i) = (1..speed.len()).find(|&i| speed[i] <= speed[i - 1]) {
                    return Err(p.err(&format!("speed[{i}]"), "speeds must increase strictly"));
                }
                if let Some(i) = force.iter().position(|&f| f < 0.0) {
                    return Err(p.err(&format!("levels[{i}]"), format!("must be ≥ 0, got {}", force[i])));
                }
                // Checked above: speeds from 0, strictly increasing, one level each.
                match LevelTable::new(speed, force) {
                    Some(table) => DryLaw::Table(Arc::new(table)),
                    None => return Err(p.err("speed", "a table needs one level per speed, speeds from 0 and increasing")),
                }
            }
            _ => DryLaw::Coulomb { f: p.nonneg("F")? },
        };
        Ok(FrictionLaw { dry, d })
    }
}

/// The friction-law keys, each name after `$prefix`: "" for a component's own keys,
/// "upper." for the keys of a nested contact object. An array of `ParamDoc`.
macro_rules! law_params {
    ($prefix:literal) => {{
        use stiction_framework::system::ParamDoc as P;
        [
            P {
                name: concat!($prefix, "law"),
                unit: "",
                default: Some("\"coulomb\""),
                doc: "\"coulomb\" (F), \"stribeck\" (Fc, Fs, vs, exponent) or \"table\" (speed, levels)",
            },
            P { name: concat!($prefix, "F"), unit: "N", default: None, doc: "coulomb: kinetic friction level, ≥ 0" },
            P {
                name: concat!($prefix, "Fc"),
                unit: "N",
                default: None,
                doc: "stribeck: Coulomb level at high speed, ≥ 0",
            },
            P {
                name: concat!($prefix, "Fs"),
                unit: "N",
                default: None,
                doc: "stribeck: breakaway level at zero speed, ≥ Fc",
            },
            P { name: concat!($prefix, "vs"), unit: "m/s", default: None, doc: "stribeck: Stribeck speed, > 0" },
            P {
                name: concat!($prefix, "exponent"),
                unit: "",
                default: Some("2"),
                doc: "stribeck: shape exponent δ of exp(−(v/vs)^δ), > 0",
            },
            P { name: concat!($prefix, "speed"), unit: "m/s", default: None, doc: "table: speeds, from 0, increasing" },
            P {
                name: concat!($prefix, "levels"),
                unit: "N",
                default: None,
                doc: "table: dry friction level at each speed, ≥ 0 (held beyond the last)",
            },
            P {
                name: concat!($prefix, "D"),
                unit: "N·s/m",
                default: Some("0"),
                doc: "viscous coefficient added to any law, ≥ 0 ((24)/(54))",
            },
        ]
    }};
}
pub(crate) use law_params;

/// Documentation of the friction-law keys shared by the Kikuuwe and Karnopp components.
pub const LAW_PARAMS: &[ParamDoc] = &law_params!("");

#[cfg(test)]
mod tests {
    use super::*;

    fn solve_implicit(law: &FrictionLaw, z: f64, x: f64) -> f64 {
        // Bisection on y − Φ(x − Z y) in the sliding case.
        let (mut lo, mut hi) = (0.0, x / z);
        for _ in 0..200 {
            let m = 0.5 * (lo + hi);
            if m - law.phi(x - z * m) < 0.0 {
                lo = m
            } else {
                hi = m
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn coulomb_viscous_phi_z_solves_the_implicit_equation_exactly() {
        let law = FrictionLaw::coulomb(8.0, 2.0);
        let z = 1e-3;
        for x in [-0.5, -0.009, -1e-4, 0.0, 3e-3, 0.0081, 0.2] {
            let (y, stuck) = law.phi_z_scalar(z, x);
            if stuck {
                assert!(x.abs() <= z * 8.0);
                assert_eq!(y, x / z);
            } else {
                let resid = y - law.phi(x - z * y);
                assert!(resid.abs() < 1e-12, "x = {x}: residual {resid}");
            }
        }
    }

    #[test]
    fn stribeck_approximation_is_close_when_48_holds() {
        let law = FrictionLaw { dry: DryLaw::Stribeck { fc: 1.0, fs: 1.5, vs: 0.1, exponent: 2.0 }, d: 0.5 };
        let z = 1e-4;
        let (_, slope) = law.slope_bounds();
        assert!(z * slope < 1e-3);
        for x in [0.001, 0.01, 0.05, 0.1, 0.3, 1.0] {
            let (y, stuck) = law.phi_z_scalar(z, x);
            assert!(!stuck);
            let exact = solve_implicit(&law, z, x);
            assert!((y - exact).abs() < 5.0 * z * slope * exact, "x = {x}: {y} vs {exact}");
        }
        assert!(law.diagnose(z, "test").iter().all(|d| matches!(d, Diagnostic::Info(_))));
        assert!(law.diagnose(1.0, "test").iter().any(|d| matches!(d, Diagnostic::Warning(_))));
    }

    #[test]
    fn vector_phi_z_has_magnitude_f_when_sliding() {
        let law = FrictionLaw::coulomb(4.0, 0.0);
        let p = law.phi_z(1e-3, Vector3::new(0.3, -0.4, 0.0));
        assert!(!p.stuck);
        assert!((p.y.norm() - 4.0).abs() < 1e-12);
        let p = law.phi_z(1e-3, Vector3::new(0.003, -0.001, 0.0));
        assert!(p.stuck);
    }

    #[test]
    fn huge_velocities_give_the_kinetic_level_not_nan() {
        let law = FrictionLaw { dry: DryLaw::Stribeck { fc: 1.0, fs: 1.5, vs: 0.1, exponent: 2.0 }, d: 0.0 };
        let p = law.phi_z(1e-3, Vector3::new(1e200, 0.0, 0.0));
        assert!(!p.stuck && (p.y.x - 1.0).abs() < 1e-12, "{:?}", p.y);
    }

    #[test]
    fn table_interpolates() {
        let table = LevelTable::new(vec![0.0, 1.0, 2.0], vec![3.0, 2.0, 2.5]).expect("a valid table");
        let law = FrictionLaw { dry: DryLaw::Table(Arc::new(table)), d: 0.0 };
        assert_eq!(law.g(0.5), 2.5);
        assert_eq!(law.g(1.5), 2.25);
        assert_eq!(law.g(5.0), 2.5);
        assert_eq!(law.slope_bounds(), (-1.0, 1.0));
    }
}
