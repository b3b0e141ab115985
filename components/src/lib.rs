//! # stiction-components
//!
//! The component library: one physical family per file. Each file holds the component
//! (an [`Admittance`](stiction_framework::Admittance) or an
//! [`Impedance`](stiction_framework::Impedance)), its JSON type description and a
//! `register` function. [`registry`] collects them all.
#![deny(unsafe_code)]

pub mod dahl;
pub mod gravity;
pub mod kikuuwe;
pub mod lugre;
pub mod mass;
pub mod penalty_joint;
pub mod plane_contact;
pub mod point_mass;
pub mod rigid_body;
pub mod serial_robot;
pub mod source;
pub mod spring_damper;
mod util;

use stiction_framework::system::Registry;

/// Every component type of this crate, ready for [`System::load`](stiction_framework::system::System::load).
pub fn registry() -> Registry {
    let mut r = Registry::new();
    dahl::register(&mut r);
    gravity::register(&mut r);
    kikuuwe::register(&mut r);
    lugre::register(&mut r);
    mass::register(&mut r);
    penalty_joint::register(&mut r);
    plane_contact::register(&mut r);
    point_mass::register(&mut r);
    rigid_body::register(&mut r);
    serial_robot::register(&mut r);
    source::register(&mut r);
    spring_damper::register(&mut r);
    r
}
