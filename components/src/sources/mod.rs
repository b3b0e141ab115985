//! Sources: prescribed forces (a time function, gravity m g) as impedances and prescribed
//! motion (a velocity u(t)) as an admittance.

family! {
    force,
    gravity,
    velocity,
}

pub use force::ForceSource;
pub use gravity::Gravity;
pub use velocity::VelocitySource;
