//! Friction: the friction laws Φ and their implicit forms Φ_Z (papers/admittance-impedance-friction.md),
//! Kikuuwe's models A–D, the element I_fricK (19), Karnopp's stick band, and the
//! single-state dynamic models Dahl (11) and LuGre (12).

family! {
    dahl,
    fric_k,
    karnopp,
    lugre,
    model_a,
    model_b,
    model_c,
    model_d,
}

pub mod bristle;
mod common;
pub mod law;

pub use bristle::{Bristle, BristleLaw};
pub use dahl::Dahl;
pub use fric_k::FricK;
pub use karnopp::{KarnoppMass, KarnoppPair, KarnoppStack};
pub use law::{DryLaw, FrictionLaw, PhiZ};
pub use lugre::LuGre;
pub use model_a::ModelA;
pub use model_b::ModelB;
pub use model_c::{model_c_step, slip_switch, ModelC};
pub use model_d::ModelD;
