//! Contact: unilateral penalty contacts with the environment — a plane with Coulomb friction
//! (I_fricKN) and a wall.

family! {
    plane_contact,
    wall,
}

pub use plane_contact::PlaneContact;
pub use wall::Wall;
