//! # stiction-components
//!
//! The component library: one physical family per file. Each file holds the component
//! (an [`Admittance`](stiction_framework::Admittance) or an
//! [`Impedance`](stiction_framework::Impedance)), its JSON type description and a
//! `register` function. [`registry`] collects them all.
#![deny(unsafe_code)]

pub mod dahl;
pub mod efficiency;
pub mod friction_law;
pub mod gear;
pub mod geared_robot;
pub mod gravity;
pub mod karnopp;
pub mod kikuuwe;
pub mod lugre;
pub mod mass;
pub mod model_a;
pub mod model_b;
pub mod model_c;
pub mod model_d;
pub mod penalty_joint;
pub mod plane_contact;
pub mod point_mass;
pub mod rigid_body;
pub mod serial_robot;
pub mod source;
pub mod spring_damper;
mod util;
pub mod velocity_source;
pub mod wall;

use stiction_framework::system::Registry;

/// Every component type of this crate, ready for [`System::load`](stiction_framework::system::System::load).
pub fn registry() -> Registry {
    let mut r = Registry::new();
    dahl::register(&mut r);
    gear::register(&mut r);
    geared_robot::register(&mut r);
    gravity::register(&mut r);
    karnopp::register(&mut r);
    kikuuwe::register(&mut r);
    lugre::register(&mut r);
    mass::register(&mut r);
    model_a::register(&mut r);
    model_b::register(&mut r);
    model_c::register(&mut r);
    model_d::register(&mut r);
    penalty_joint::register(&mut r);
    plane_contact::register(&mut r);
    point_mass::register(&mut r);
    rigid_body::register(&mut r);
    serial_robot::register(&mut r);
    source::register(&mut r);
    spring_damper::register(&mut r);
    wall::register(&mut r);
    velocity_source::register(&mut r);
    r
}
