//! # stiction-components
//!
//! The component library, one folder per physical family: [`bodies`], [`sources`],
//! [`couplings`], [`contact`], [`friction`], [`gear`] and [`robot`]. Each component file
//! holds the component (an [`Admittance`](stiction_framework::Admittance) or an
//! [`Impedance`](stiction_framework::Impedance)), its JSON type description (the
//! [`ParamDoc`](stiction_framework::system::ParamDoc) table is also the list of keys its
//! builder may read) and a `register` function. Each family's `mod.rs` lists its component
//! files once in `family!`; [`registry`] calls every family's `register`.
//!
//! Helpers shared across families: [`saturation`] (gsat of (15)), [`two_port`] (ports `a`
//! and `b`), [`stability`] (stiff-element warnings), `ndim` (1-, 2- or 3-dimensional
//! elements) and `doc_table` (parameter tables built from shared parts).
#![deny(unsafe_code)]

/// Declares the component files of a family, `pub mod` each, the family's `register`,
/// which calls every member's `register`, and `samples`, every member's `SAMPLES`.
/// Adding a component type to a family is one new file and one line in this list.
macro_rules! family {
    ($($member:ident),* $(,)?) => {
        $(pub mod $member;)*

        /// Register every component type of this family.
        pub fn register(r: &mut stiction_framework::system::Registry) {
            $($member::register(r);)*
        }

        /// JSON samples of every component type of this family.
        pub fn samples() -> Vec<&'static str> {
            [$($member::SAMPLES),*].concat()
        }
    };
}

pub mod bodies;
pub mod contact;
pub mod couplings;
mod doc_table;
pub mod friction;
pub mod gear;
mod ndim;
pub mod robot;
pub mod saturation;
pub mod sources;
pub mod stability;
pub mod stage_form;
#[cfg(test)]
mod test_util;
pub mod two_port;

use stiction_framework::system::Registry;

/// Every component type of this crate, ready for [`System::load`](stiction_framework::system::System::load).
pub fn registry() -> Registry {
    let mut r = Registry::new();
    bodies::register(&mut r);
    contact::register(&mut r);
    couplings::register(&mut r);
    friction::register(&mut r);
    gear::register(&mut r);
    robot::register(&mut r);
    sources::register(&mut r);
    r
}

/// JSON samples of every component type of [`registry`] (each component file's `SAMPLES`),
/// which together read every documented key (tests/component_params.rs).
pub fn samples() -> Vec<&'static str> {
    [
        bodies::samples(),
        contact::samples(),
        couplings::samples(),
        friction::samples(),
        gear::samples(),
        robot::samples(),
        sources::samples(),
    ]
    .concat()
}
