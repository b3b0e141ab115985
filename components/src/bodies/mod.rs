//! Bodies: admittances with inertia (force in, motion out) — a mass on a line, a point mass
//! in space, a rigid body with orientation (26).

family! {
    mass,
    point_mass,
    rigid_body,
}

pub use mass::Mass;
pub use point_mass::{PointMass, PointMassDynamics};
pub use rigid_body::RigidBody;
