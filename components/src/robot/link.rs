//! One link of a serial chain and the revolute joint that moves it, with the checks of
//! every field.

use nalgebra::{Matrix3, Vector3};

/// One link of the chain together with the revolute joint that moves it.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Joint position in the parent frame (m).
    pub origin: Vector3<f64>,
    /// Joint axis in the parent frame (equal to the axis in the link frame); unit length
    /// once validated by [`SerialRobot::new`](crate::robot::SerialRobot::new).
    pub axis: Vector3<f64>,
    /// Mass (kg), > 0.
    pub mass: f64,
    /// Centre of mass in the link frame (m).
    pub com: Vector3<f64>,
    /// Inertia tensor about the centre of mass in the link frame (kg·m²), symmetric
    /// positive semi-definite. Off-diagonal entries are tensor entries (as URDF `ixy` and
    /// MuJoCo `fullinertia`), not negated products of inertia.
    pub inertia: Matrix3<f64>,
    /// Joint viscous friction b (N·m·s/rad), ≥ 0: adds −b ω to the joint torque.
    pub damping: f64,
    /// Rotor (reflected) inertia added to H_ii (kg·m²), ≥ 0.
    pub rotor: f64,
}

impl Link {
    /// A link without joint damping or rotor inertia.
    pub fn new(origin: Vector3<f64>, axis: Vector3<f64>, mass: f64, com: Vector3<f64>, inertia: Matrix3<f64>) -> Link {
        Link { origin, axis, mass, com, inertia, damping: 0.0, rotor: 0.0 }
    }

    /// The same link with joint viscous friction `b` (N·m·s/rad).
    pub fn with_damping(mut self, b: f64) -> Link {
        self.damping = b;
        self
    }

    /// The same link with rotor inertia `j` (kg·m²) added to H_ii.
    pub fn with_rotor(mut self, j: f64) -> Link {
        self.rotor = j;
        self
    }

    /// Check every field and normalise the axis. The error names the offending field.
    pub(crate) fn validated(mut self) -> std::result::Result<Link, (&'static str, String)> {
        let finite3 = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
        if !finite3(&self.origin) {
            return Err(("origin", format!("must be finite, got {:?}", self.origin.as_slice())));
        }
        if !finite3(&self.axis) {
            return Err(("axis", format!("must be finite, got {:?}", self.axis.as_slice())));
        }
        let norm = self.axis.norm();
        if norm <= 1e-12 {
            return Err(("axis", "must be a non-zero vector".to_string()));
        }
        self.axis /= norm;
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(("mass", format!("must be > 0, got {}", self.mass)));
        }
        if !finite3(&self.com) {
            return Err(("com", format!("must be finite, got {:?}", self.com.as_slice())));
        }
        let i = &self.inertia;
        if !i.iter().all(|x| x.is_finite()) {
            return Err(("inertia", "must be finite".to_string()));
        }
        let scale = i.amax();
        if (i - i.transpose()).amax() > 1e-12 * scale {
            return Err(("inertia", "must be symmetric".to_string()));
        }
        let Some(min_eig) = crate::ndim::symmetric_eigenvalues(i).map(|e| e.min()) else {
            return Err(("inertia", crate::ndim::EIGEN_UNDECIDED.to_string()));
        };
        if min_eig < -1e-12 * scale {
            return Err((
                "inertia",
                format!("must be positive semi-definite (smallest principal moment {min_eig} kg·m²)"),
            ));
        }
        if !(self.damping.is_finite() && self.damping >= 0.0) {
            return Err(("damping", format!("must be ≥ 0, got {}", self.damping)));
        }
        if !(self.rotor.is_finite() && self.rotor >= 0.0) {
            return Err(("rotor", format!("must be ≥ 0, got {}", self.rotor)));
        }
        Ok(self)
    }
}
