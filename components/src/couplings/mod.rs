//! Couplings: impedances joining two ports or bodies — a spring-damper, a penalty revolute
//! joint with I_fricK joint friction (19).

family! {
    penalty_joint,
    spring_damper,
}

pub use penalty_joint::PenaltyJoint;
pub use spring_damper::SpringDamper;
