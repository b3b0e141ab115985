#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! * [`model`]: the variable table and equations each model supplies;
//! * [`gear`], [`friction`], [`friction_mass`]: `StictionGear`, `StictionFriction`,
//!   `StictionFrictionMass`;
//! * [`instance`]: the FMI state machine and argument checks, once, in safe Rust;
//! * `fmi2`, `fmi3`, `ffi`: the C entry points (the only `unsafe` code);
//! * [`package`]: modelDescription.xml from the same table (written by
//!   `stiction_fmi_schema::write`), and the .fmu zip.
//!
//! One shared library serves all three models: the binary is copied into each .fmu under
//! the model's identifier, and instantiate selects the model by the GUID /
//! instantiation token and the start values in `resources/stiction-start.txt`.
#![deny(unsafe_code)]

mod ffi;
mod fmi2;
mod fmi3;
pub mod friction;
pub mod friction_mass;
pub mod gear;
pub mod instance;
pub mod model;
pub mod package;

pub use package::{find_library, find_model, Export};
pub use stiction_fmi_schema::{FmiVersion, Interfaces};
