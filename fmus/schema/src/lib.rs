#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! * [`vocab`]: the FMI 2.0 / 3.0 vocabulary: [`FmiVersion`], [`Interface`], [`VarType`],
//!   [`Causality`], [`Variability`], [`Initial`], [`Capabilities`], [`DefaultExperiment`];
//! * [`write`](mod@write): modelDescription.xml written from the same vocabulary, and the .fmu zip;
//! * [`description`] (feature `read`): modelDescription.xml read with [`xml`], a compact
//!   element tree built from quick-xml's streaming reader;
//! * [`structure`] (feature `read`): the outputs' dependencies, for the FMU-only master;
//! * [`archive`] (feature `read`): an .fmu unpacked into a private temporary directory;
//! * [`FmiError`]: an error of an FMU, naming the FMU, the function and its log.
//!
//! No `unsafe` code: the C side of FMI is in `stiction-fmi-import` (loading a binary) and
//! `stiction-fmus` (the exported binary).
#![forbid(unsafe_code)]

#[cfg(feature = "read")]
pub mod archive;
#[cfg(feature = "read")]
pub mod description;
mod error;
#[cfg(feature = "read")]
pub mod structure;
pub mod vocab;
pub mod write;
#[cfg(feature = "read")]
pub mod xml;

#[cfg(feature = "read")]
pub use archive::{Archive, Package};
#[cfg(feature = "read")]
pub use description::{Dimension, ModelDescription, Variable};
pub use error::FmiError;
pub use vocab::{
    Capabilities, Causality, DefaultExperiment, FmiVersion, Initial, Interface, Interfaces, VarType, Variability,
};
