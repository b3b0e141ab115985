//! Forward kinematics of a serial chain of revolute joints, in world coordinates, on
//! fixed-capacity stack storage (no allocation).

use super::link::Link;
use nalgebra::{Matrix3, Rotation3, SMatrix, SVector, Unit, Vector3};

/// Maximum number of joints of a [`SerialRobot`](super::SerialRobot) (capacity of the stack storage).
pub const MAX_DOF: usize = stiction_framework::stage_law::MAX_JOINTS;

/// n × n joint-space matrix on the stack (top-left block used).
pub(crate) type MatN = SMatrix<f64, MAX_DOF, MAX_DOF>;
/// n-vector of joint quantities on the stack (first n entries used).
pub(crate) type VecN = SVector<f64, MAX_DOF>;

/// Forward kinematics of all links in world coordinates (stack storage, first n used).
#[derive(Clone, Copy)]
pub(crate) struct Kinematics {
    /// Orientation of link i's frame.
    pub rot: [Matrix3<f64>; MAX_DOF],
    /// Position of joint i (origin of link i's frame).
    pub joint: [Vector3<f64>; MAX_DOF],
    /// Unit axis of joint i.
    pub axis: [Vector3<f64>; MAX_DOF],
    /// Centre of mass of link i.
    pub com: [Vector3<f64>; MAX_DOF],
}

impl Kinematics {
    /// Forward kinematics: link i's frame = parent · Trans(origin_i) · Rot(axis_i, θ_i).
    pub fn of(links: &[Link], q: &[f64]) -> Kinematics {
        let mut k = Kinematics {
            rot: [Matrix3::identity(); MAX_DOF],
            joint: [Vector3::zeros(); MAX_DOF],
            axis: [Vector3::zeros(); MAX_DOF],
            com: [Vector3::zeros(); MAX_DOF],
        };
        let mut r = Matrix3::identity();
        let mut p = Vector3::zeros();
        for (i, (l, &qi)) in links.iter().zip(q).enumerate() {
            p += r * l.origin;
            k.axis[i] = r * l.axis;
            r *= Rotation3::from_axis_angle(&Unit::new_unchecked(l.axis), qi).into_inner();
            k.rot[i] = r;
            k.joint[i] = p;
            k.com[i] = p + r * l.com;
        }
        k
    }

    /// World position of the point `local` of link `last` (its frame coordinates).
    pub fn point(&self, last: usize, local: &Vector3<f64>) -> Vector3<f64> {
        self.joint[last] + self.rot[last] * local
    }

    /// Column i of the tip Jacobian: z_i × (p_tip − p_i).
    pub fn jacobian_column(&self, i: usize, tip: &Vector3<f64>) -> Vector3<f64> {
        self.axis[i].cross(&(tip - self.joint[i]))
    }

    /// Tip velocity J ω of the first n joints.
    pub fn tip_velocity(&self, n: usize, tip: &Vector3<f64>, w: &[f64]) -> Vector3<f64> {
        (0..n).fold(Vector3::zeros(), |v, i| v + self.jacobian_column(i, tip) * w[i])
    }

    /// The tip's acceleration at zero joint accelerations, J̇ ω: the time derivative of
    /// Σ z_i × (p − p_i) ω_i with ż_i = Ω_{i−1} × z_i (Ω_{i−1} the parent link's angular
    /// velocity) and ṗ_i the velocity of joint i's origin.
    pub fn tip_bias(&self, n: usize, tip: &Vector3<f64>, w: &[f64]) -> Vector3<f64> {
        let v_tip = self.tip_velocity(n, tip, w);
        let (mut omega, mut acc) = (Vector3::zeros(), Vector3::zeros());
        for i in 0..n {
            let z = self.axis[i];
            let v_joint = self.tip_velocity(i, &self.joint[i], w);
            acc += (omega.cross(&z).cross(&(tip - self.joint[i])) + z.cross(&(v_tip - v_joint))) * w[i];
            omega += z * w[i];
        }
        acc
    }
}
