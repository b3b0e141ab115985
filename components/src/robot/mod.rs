//! Robots: serial chains of revolute joints (8) — the multibody kernel (forward kinematics,
//! RNEA, CRBA), the serial robot, the robot driven through friction gears (48)/(69) with its
//! solver axproj, and the JSON readers of their links.

family! {
    geared,
    serial,
}

pub mod axproj;
mod crba;
pub mod json;
pub mod kinematics;
pub mod link;
mod rnea;

pub use geared::GearedRobot;
pub use kinematics::MAX_DOF;
pub use link::Link;
pub use serial::SerialRobot;
