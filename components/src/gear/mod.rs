//! Gears: transmissions with asymmetric, load-dependent friction
//! (papers/gear-transmission-asymmetric-friction.txt) — the efficiency algebra of the
//! coefficients γu, γv and the 1-DOF transmission (14)/(44).

family! {
    transmission,
}

pub mod efficiency;
mod stage;

pub use transmission::{Gear, GearModel, Geometry};
