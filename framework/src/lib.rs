//! # stiction-framework
//!
//! The machinery of stiction, with no physics of its own: components are
//! [`Admittance`]s (force in, motion out) and [`Impedance`]s (motion in, force out)
//! wired into a [`Network`], compiled to a [`Schedule`] and integrated by the modular
//! RK4 scheme of Kikuuwe & Yamamoto ((13) with the stage step sizes of (22)) or by
//! Euler in [`Simulator`]. Systems are described in JSON ([`system`]).
#![deny(unsafe_code)]

pub mod component;
pub mod error;
pub mod io;
pub mod network;
mod parallel;
pub mod port;
pub mod schedule;
pub mod signal;
pub mod solver;
pub mod system;

pub use component::{Admittance, Diagnostic, Fault, Impedance, Probe, SignalInfo};
pub use error::{Error, Result};
pub use nalgebra;
pub use network::{AdmittanceId, ImpedanceId, Network, Target};
pub use port::{Domain, Force, Layout, Motion, Offset, PortInfo};
pub use schedule::Schedule;
pub use signal::TimeFunction;
pub use solver::{Method, OutputSink, Recorder, RunPlan, RunSummary, SignalRef, Simulator};
