#![doc = include_str!("../README.md")]
//!
//! ## Layout
//!
//! One folder per physical family: [`bodies`], [`sources`], [`couplings`], [`contact`],
//! [`friction`], [`gear`] and [`robot`]. Each component file holds the component (an
//! [`Admittance`](stiction_framework::Admittance) or an
//! [`Impedance`](stiction_framework::Impedance)), its JSON type description (the
//! [`ParamDoc`](stiction_framework::system::ParamDoc) table is also the list of keys its
//! builder may read) and a `register` function. Each family's `mod.rs` lists its component
//! files once in `family!`; [`FAMILIES`] names the families and [`registry`] registers them.
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
mod modes;
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

/// A family of component types: one folder of this crate (or, in the `stiction` crate, the
/// imported FMUs). `stiction components --markdown` groups the reference by family.
#[derive(Clone, Copy)]
pub struct Family {
    /// The folder's name (`bodies`, `friction`, …).
    pub name: &'static str,
    /// The heading of its section in the reference (distinct from every type name, so that
    /// the headings' anchors are too).
    pub title: &'static str,
    /// One line: what its types have in common.
    pub summary: &'static str,
    /// Registers every type of the family.
    pub register: fn(&mut Registry),
}

/// The families of this crate, in the order of the reference; [`registry`] registers them.
pub const FAMILIES: &[Family] = &[
    Family {
        name: "bodies",
        title: "Bodies",
        summary: "Admittances with inertia (force in, motion out): a mass on a line, a point mass in space, a rigid body with orientation (26).",
        register: bodies::register,
    },
    Family {
        name: "sources",
        title: "Sources",
        summary: "Prescribed forces (a time function, gravity m g) as impedances and prescribed motion (a velocity u(t)) as an admittance.",
        register: sources::register,
    },
    Family {
        name: "couplings",
        title: "Couplings",
        summary: "Impedances joining two ports or bodies: a spring-damper, a penalty revolute joint with I_fricK joint friction (19).",
        register: couplings::register,
    },
    Family {
        name: "contact",
        title: "Contacts",
        summary: "Unilateral penalty contacts with Coulomb friction (I_fricKN, (23)–(24)) and a frictionless wall.",
        register: contact::register,
    },
    Family {
        name: "friction",
        title: "Friction elements",
        summary: "Kikuuwe's models A–D, the element I_fricK (19), Karnopp's stick band and the single-state dynamic models Dahl (11) and LuGre (12).",
        register: friction::register,
    },
    Family {
        name: "gear",
        title: "Gear transmissions",
        summary: "Transmissions with asymmetric, load-dependent friction: the 1-DOF transmission (14)/(44).",
        register: gear::register,
    },
    Family {
        name: "robot",
        title: "Robots",
        summary: "Serial chains of revolute joints (8): the serial robot and the robot driven through friction gears (48)/(69).",
        register: robot::register,
    },
];

/// Every component type of this crate, ready for [`System::from_str`](stiction_framework::system::System::from_str).
pub fn registry() -> Registry {
    let mut r = Registry::new();
    for f in FAMILIES {
        (f.register)(&mut r);
    }
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
