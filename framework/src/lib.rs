#![doc = include_str!("../README.md")]
//!
//! ## Example
//!
//! A component is any type implementing one of the two traits. A mass on a spring, built
//! in code and stepped by RK4:
//!
//! ```
//! use stiction_framework::{Admittance, Domain, Fault, Force, Impedance, Layout, Method, Motion,
//!     Network, PortInfo, Schedule, Simulator, Target};
//!
//! struct Mass;              // force in, motion out: q̈ = f
//! impl Admittance for Mass {
//!     fn layout(&self) -> Layout { Layout::new(2, vec![PortInfo::new("body", Domain::Scalar)]) }
//!     fn init(&self, x: &mut [f64]) { x[0] = 1.0; x[1] = 0.0; }
//!     fn port_motion(&self, x: &[f64], _: usize) -> Motion { Motion::scalar(x[0], x[1]) }
//!     fn derivative(&self, x: &[f64], f: &[Force], _t: f64, _tau: f64, dx: &mut [f64]) -> Result<(), Fault> {
//!         dx[0] = x[1];
//!         dx[1] = f[0].value();
//!         Ok(())
//!     }
//! }
//! struct Spring;            // motion in, force out: f = −q
//! impl Impedance for Spring {
//!     fn layout(&self) -> Layout { Layout::new(0, vec![PortInfo::new("end", Domain::Scalar)]) }
//!     fn evaluate(&self, m: &[Motion], _y: &[f64], _t: f64, _tau: f64, f: &mut [Force], _dy: &mut [f64])
//!         -> Result<(), Fault> {
//!         f[0] = Force::scalar(-m[0].q());
//!         Ok(())
//!     }
//! }
//!
//! let mut net = Network::new();
//! let mass = net.add_admittance("mass", Box::new(Mass))?;
//! let spring = net.add_impedance("spring", Box::new(Spring))?;
//! net.try_connect(spring, "end", Target::Port { adm: mass, port: "body", offset: None })?;
//! let mut sim = Simulator::new(Schedule::compile(net)?, Method::Rk4, 1e-3, 1)?;
//! for _ in 0..1000 {
//!     sim.step()?;
//! }
//! assert!((sim.state()[0] - 1f64.cos()).abs() < 1e-12);   // q(1) = cos 1
//! # Ok::<(), stiction_framework::Error>(())
//! ```
//!
//! ## Layers
//!
//! Each module uses only the ones listed before it:
//! [`error`], [`units`], [`cancel`], [`port`], [`signal`] → [`method`] → [`views`] → [`component`] → [`batch`] → [`network`] →
//! [`schedule`] → [`stepper`] → [`output`] → [`system`].
#![forbid(unsafe_code)]

// Bottom: errors, units, the stop request, port kinds, time functions.
pub mod cancel;
pub mod error;
pub mod port;
pub mod stage_law;
pub mod sealed;
pub mod signal;
pub mod units;
// Components: the method tableau, what a batch sees, the two traits, ready-made batches.
pub mod batch;
pub mod component;
pub mod method;
pub mod views;
// The network, built and validated; compiled into a schedule.
pub mod names;
pub mod network;
pub mod schedule;
// Stepping.
mod parallel;
pub mod stepper;
// Output: sinks, signals, the run loop; the stability analysis of `stiction check`.
pub mod output;
pub mod stability;
// JSON systems: format, registry, parameter reader.
pub mod system;

pub use batch::{PointAdmittance, PointImpedance, PointMotion, PortStates};
pub use component::{
    Admittance, AffineSlip, AffineSwitch, Block, ContactPoint, Diagnostic, Fault, HeldMoments, Impedance, Probe, RigidInertia, SignalInfo,
    Curve, StageLaw, StageSpring, MAX_IMPEDANCE_PORTS,
};
pub use error::{Error, Result};
pub use method::{Method, Tableau};
pub use nalgebra;
pub use network::{AdmittanceId, ImpedanceId, Network, Target};
pub use output::{CsvSink, OutputSink, Recorder, RunPlan, RunSummary, SignalRef, Tee, UnitsIn};
pub use port::{Domain, Force, Layout, Motion, Offset, PortInfo};
pub use schedule::Schedule;
pub use signal::TimeFunction;
pub use stepper::bus::{BlockOptions, When};
pub use stepper::{EventCounts, Hold, Simulator, Switches};
