//! Kikuuwe et al.'s friction element I_fricK (19), integrable by RK4:
//! f = gsat(F, (B + τK) v + K e),  ε = (f − K e)/(B + τK),  ė = ε.
//! With the Euler method (τ = T) this is exactly the discrete-time model (14)/(20).
//! It is model C (38) with Coulomb friction, (19) = (38): one implementation,
//! [`model_c_step`], under two names (`fric_k` has scalar and point3 ports, B > 0).
//! While ‖(B + τK) v + K e‖ < F, ε = v in every stage, so p − e stays constant: static
//! friction without drift. Scalar (joint) and 3-D (point) forms.

use super::law::FrictionLaw;
use super::model_c::{model_c_step, slip_switch, stage_laws};
use crate::stage_form::StageForm;
use crate::stability::{coupled_info, stiffness_warnings};
use crate::two_port::{dims, domain_param, two_ports};
use nalgebra::Vector3;
use stiction_framework::component::{Curve, Fault, Impedance, Probe, SignalInfo, StageLaw};
use stiction_framework::port::{Domain, Force, Layout, Motion};
use stiction_framework::system::{Built, ComponentType, Kind, ParamDoc, Params, PortDoc, Registry};
use stiction_framework::Result;

/// I_fricK between two ports: state e (1 or 3 values).
#[derive(Clone, Debug)]
pub struct FricK {
    pub domain: Domain,
    /// Stiffness K (N/m or N·m/rad), > 0.
    pub k: f64,
    /// Viscosity B (N·s/m or N·m·s/rad), > 0.
    pub b: f64,
    /// Kinetic friction level F (N or N·m), ≥ 0.
    pub f_max: f64,
    /// The method it runs under ([`StageForm::continuous_law`]).
    pub form: StageForm,
}

const SIGNALS: &[SignalInfo] = &[
    SignalInfo::new("f", 3, "N", "friction force f of (19) (the force on port b is −f)"),
    SignalInfo::new("e", 3, "m", "displacement e of the viscoelastic element"),
    SignalInfo::new("v", 3, "m/s", "relative velocity of b with respect to a"),
];

impl FricK {
    /// The law of (19): Coulomb at level F.
    fn law(&self) -> FrictionLaw {
        FrictionLaw::coulomb(self.f_max, 0.0)
    }

    /// (19): friction force and rate of e for one component set (scalar form). (19) is
    /// model C (38) with Coulomb friction, and both run the same code, [`model_c_step`]
    /// (issue 14): f = Φ_Z(v + K e/(B + τK)) with Z = 1/(B + τK) is gsat(F, (B + τK) v + K e)
    /// of (19b), and ε = v exactly while it holds (= (f − K e)/(B + τK) of (19c)).
    #[inline]
    pub fn scalar(&self, v: f64, e: f64, tau: f64) -> (f64, f64) {
        let (f, de, _) = model_c_step(self.k, self.b, &self.law(), Vector3::new(v, 0.0, 0.0), Vector3::new(e, 0.0, 0.0), tau, self.form.element());
        (f.x, de.x)
    }

    /// (19) in 3-D with the vector saturation gsat of (15): [`model_c_step`] in 3-D.
    #[inline]
    pub fn vector(&self, v: Vector3<f64>, e: Vector3<f64>, tau: f64) -> (Vector3<f64>, Vector3<f64>) {
        let (f, de, _) = model_c_step(self.k, self.b, &self.law(), v, e, tau, self.form.element());
        (f, de)
    }
}

impl Impedance for FricK {
    /// Records the method and whether the element runs its continuous law
    /// ([`StageForm::set_element`]).
    fn prepare(&self, method: stiction_framework::Method, step: f64) -> std::result::Result<(), String> {
        self.form.set_element(method, step, self.k, self.b);
        Ok(())
    }
    fn layout(&self) -> Layout {
        Layout::new(dims(self.domain), two_ports(self.domain))
    }
    #[inline]
    fn evaluate(
        &self,
        m: &[Motion],
        y: &[f64],
        _t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault> {
        let v = m[1].v - m[0].v;
        match self.domain {
            Domain::Scalar => {
                let (f, eps) = self.scalar(v.x, y[0], tau);
                dy[0] = eps;
                force[1] = Force::scalar(-f);
                force[0] = Force::scalar(f);
            }
            _ => {
                let (f, eps) = self.vector(v, Vector3::new(y[0], y[1], y[2]), tau);
                dy.copy_from_slice(eps.as_slice());
                force[1] = Force::point(-f);
                force[0] = Force::point(f);
            }
        }
        Ok(())
    }
    /// The stick–slip switch of the continuous law ([`slip_switch`]), under RK4 where B ≥ T K/2.
    fn slip_switching(&self, m: &[Motion], y: &[f64], _t: f64) -> Option<f64> {
        if !self.form.continuous_law() {
            return None;
        }
        let v = m[1].v - m[0].v;
        let (v, e) = match self.domain {
            Domain::Scalar => (Vector3::new(v.x, 0.0, 0.0), Vector3::new(y[0], 0.0, 0.0)),
            _ => (v, Vector3::new(y[0], y[1], y[2])),
        };
        slip_switch(self.k, self.b, &self.law(), v, e)
    }
    fn signals(&self) -> Vec<SignalInfo> {
        SIGNALS.iter().map(|s| SignalInfo { len: dims(self.domain), ..*s }).collect()
    }
    fn signal(&self, which: usize, e: usize, p: &Probe) -> f64 {
        match which {
            0 => p.forces[0].f[e],
            1 => p.state[e],
            _ => (p.motions[1].v - p.motions[0].v)[e],
        }
    }
    fn energy(&self, _m: &[Motion], y: &[f64]) -> Option<f64> {
        Some(0.5 * self.k * y.iter().map(|e| e * e).sum::<f64>())
    }
    /// Whether RK4 resolves the held spring with the inertias on the ports
    /// ([`StageForm::set_held_frequency`]).
    fn held_frequency(&self, method: stiction_framework::Method, step: f64, omega2: Option<f64>, couple: Option<f64>) {
        self.form.set_held_frequency(method, step, self.k, self.b, omega2, couple);
    }
    fn implicit_coupling(&self) -> bool {
        self.form.coupled()
    }
    /// −gsat(F, w + (B + τK) Δ) on each port ([`stage_laws`]).
    fn stage_law(&self, m: &[Motion], y: &[f64], tau: f64, laws: &mut [StageLaw]) {
        let v = m[1].v - m[0].v;
        let (v, e, n) = match self.domain {
            Domain::Scalar => (Vector3::new(v.x, 0.0, 0.0), Vector3::new(y[0], 0.0, 0.0), 1),
            _ => (v, Vector3::new(y[0], y[1], y[2]), 3),
        };
        let pair = stage_laws(self.k, self.b, (self.f_max, 0.0, Curve::Flat), v, e, tau, n, [m[0].p, m[1].p]);
        laws.iter_mut().zip(pair).for_each(|(l, p)| *l = p);
    }
    /// While it holds, a spring K with damper B: (19b), f = (B + τK) v + K e, in the paper's form
    /// (τK more damping per stage), the continuous law under RK4 where B ≥ T K/2 ([`StageForm::continuous_law`]).
    fn stuck_spring(&self) -> Option<stiction_framework::StageSpring> {
        Some(stiction_framework::StageSpring { k: self.k, b: self.b, implicit: !self.form.held_rates(), coupled: self.form.coupled() })
    }
    fn diagnose(&self, inertia: &[Option<f64>], step: f64) -> Vec<stiction_framework::Diagnostic> {
        if self.form.coupled() {
            return vec![coupled_info("friction stiffness", self.k, inertia, step)];
        }
        stiffness_warnings("friction stiffness", self.k, self.b, inertia, step)
    }
}

fn build(p: &mut Params) -> Result<Built> {
    let domain = domain_param(p)?;
    let k = p.positive("K")?;
    let b = p.positive("B")?;
    let f_max = p.nonneg("F")?;
    Ok(Built::Impedance(Box::new(FricK { domain, k, b, f_max, form: StageForm::default() })))
}

/// JSON samples of the type(s) of this file, together reading every key of the table
/// (tests/component_params.rs).
pub const SAMPLES: &[&str] = &[
    r#"{"type": "fric_k", "domain": "point3", "K": 1000.0, "B": 10.0, "F": 1.0}"#,
];

/// Register `fric_k`.
pub fn register(r: &mut Registry) {
    r.register(ComponentType {
        name: "fric_k",
        kind: Kind::Impedance,
        summary: "Kikuuwe friction I_fricK (19): exact static friction in RK4 (model C with Euler)",
        params: &[
            ParamDoc {
                name: "domain",
                unit: "",
                default: Some("\"scalar\""),
                doc: "\"scalar\" (joint, 1-D) or \"point3\" (3-D)",
            },
            ParamDoc { name: "K", unit: "N/m", default: None, doc: "stiffness of the viscoelastic element, > 0" },
            ParamDoc { name: "B", unit: "N·s/m", default: None, doc: "viscosity of the viscoelastic element, > 0" },
            ParamDoc { name: "F", unit: "N", default: None, doc: "kinetic friction level, ≥ 0" },
        ],
        ports: &[
            PortDoc { name: "a", domain: "scalar|point3", doc: "reference side (often ground)" },
            PortDoc { name: "b", domain: "scalar|point3", doc: "sliding side" },
        ],
        signals: SIGNALS,
        build,
    });
}
