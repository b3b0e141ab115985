#![doc = include_str!("README.md")]
//!
//! ## Example
//!
//! ```no_run
//! let system = stiction::load("examples/rolling_sphere.json").unwrap();
//! let (mut sim, plan) = system.into_simulator(1).unwrap();
//! let mut rec = stiction::framework::Recorder::default();
//! sim.run(&plan, &mut rec, &mut |_| {}).unwrap();
//! println!("{:?}", rec.column("center_vx").unwrap().last());
//! ```
#![deny(unsafe_code)]

pub use stiction_components as components;
pub use stiction_fmi_import as fmi_import;
pub use stiction_fmi_master as fmi_master;
pub use stiction_fmi_schema as fmi_schema;
pub use stiction_framework as framework;

pub mod inputs;
pub mod outfile;
pub mod pipeline;
pub mod reference;
pub mod results;
pub mod schema;
pub mod set;
pub mod ssp;
pub mod study;

use stiction_components::Family;
use stiction_framework::system::Registry;

pub use pipeline::{load, open, Options};

/// The families of component types this build knows: the component library's
/// ([`stiction_components::FAMILIES`]) and the imported FMUs.
pub fn families() -> Vec<Family> {
    let mut f = stiction_components::FAMILIES.to_vec();
    f.push(Family {
        name: "fmu",
        title: "Imported FMUs",
        summary: "A Functional Mock-up Unit (FMI 2.0 or 3.0) as an admittance, an impedance or a signal block.",
        register: stiction_fmi_import::register,
    });
    f
}

/// Every component type this build knows: the types of every one of [`families`].
pub fn registry() -> Registry {
    let mut r = Registry::new();
    for f in families() {
        (f.register)(&mut r);
    }
    r
}

pub mod fmu_export;
pub mod fmu_system;
