//! The implicit stage of a group of bodies joined by stiff coupled elements (a stack of
//! boxes on contacts between them, a grasp, a penalty joint): every body's velocity change
//! and every element's law solved together (framework/src/stepper/coupling.rs).
//!
//! A stiff element between two bodies a and b is held implicitly in the same way as one
//! against the ground ([module doc](super)), with its law taken at the *relative* velocity
//! change of its point, Δ_a(x) − Δ_b(x). Each body solving its own stage with the other at
//! its stage motion (a Jacobi sweep) would correct the same gap from both sides and chatter;
//! here the stage of the whole group is one system,
//!
//!   M_i Δ_i = τ (f_o,i + Σ_l G_i(r_l)ᵀ f_l(G_i(r_l) Δ_i − G_j(r'_l) Δ_j)),
//!
//! G(r) = [I, −[r]ₓ] the map from a body's (Δv, Δω) to the change at its point r from the
//! centre of mass (I alone for a point mass), f_o,i the body's other forces and moments. Each
//! law's force is monotone in its argument (a saturation (15), a one-sided spring), so the
//! system is that of masses with positive semidefinite dampings between them and Newton's
//! method from Δ = 0 (with halving steps) solves it; a group at rest in equilibrium keeps
//! zero rates, so static friction between the bodies stays exact.

use super::StageLaw;
use nalgebra::allocator::Allocator;
use nalgebra::{Const, DefaultAllocator, DimMin, Dyn, Matrix3, OMatrix, OVector, Vector3};

/// A body of a group as its stage sees it ([`Admittance::stage_body`]): its inertia and its
/// explicit stage accelerations (every force on it included, the coupled laws' at Δ = 0),
/// world frame; after [`group_rates`], the accelerations that solve the group's stage.
///
/// [`Admittance::stage_body`]: crate::component::Admittance::stage_body
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageBody {
    /// Mass m (kg), > 0.
    pub mass: f64,
    /// Inertia about the centre of mass, world frame (kg·m²); `None`: a point mass (3
    /// unknowns, every law at its one point).
    pub inertia: Option<Matrix3<f64>>,
    /// Centre of mass (m), the levers' origin.
    pub com: Vector3<f64>,
    /// Linear acceleration (m/s²).
    pub a: Vector3<f64>,
    /// Angular acceleration (rad/s², world; zero for a point mass).
    pub alpha: Vector3<f64>,
    /// A prescribed motion (a velocity source): its accelerations are given, not solved
    /// for, and no law acts on it; an element to it is taken at the relative change.
    pub prescribed: bool,
    /// A point of a mechanism (a robot's tip or joint) rather than a free body: its inverse
    /// inertia W there (symmetric, positive semidefinite: J H⁻¹ Jᵀ), so that its velocity change
    /// under the laws' forces is Δ = τ (a + W Σ (f_l(Δ) − f_l(0))); `mass` is then the
    /// smallest effective mass 1/λ_max(W) (the rows' scale), `inertia` `None`.
    pub mobility: Option<Matrix3<f64>>,
    /// After [`group_rates`], for a body with `mobility`: the change of the laws' total
    /// force on it, Σ (f_l(Δ) − f_l(0)), which the mechanism maps to its own rates.
    pub force: Vector3<f64>,
}

impl StageBody {
    /// A point mass `mass` at `com` with the explicit acceleration `a`.
    pub fn point(mass: f64, com: Vector3<f64>, a: Vector3<f64>) -> StageBody {
        StageBody { mass, inertia: None, com, a, alpha: Vector3::zeros(), prescribed: false, mobility: None, force: Vector3::zeros() }
    }

    /// A rigid body: mass, world inertia, centre, linear and angular explicit accelerations.
    pub fn rigid(mass: f64, inertia: Matrix3<f64>, com: Vector3<f64>, a: Vector3<f64>, alpha: Vector3<f64>) -> StageBody {
        StageBody { inertia: Some(inertia), alpha, ..StageBody::point(mass, com, a) }
    }

    /// The rotation part R = −[r]ₓ of the lever G(r) = [I, R] at world point `at` (the change
    /// of that point per unit Δω); `None` for a point mass (its Δω moves no point).
    #[inline]
    fn arm(&self, at: &Vector3<f64>) -> Option<Matrix3<f64>> {
        self.inertia.map(|_| -(at - self.com).cross_matrix())
    }
}

/// One coupled element's law on a body of the group ([`group_rates`]).
#[derive(Clone, Copy, Debug)]
pub struct GroupLaw<'a> {
    /// The law on `body`'s port, in the relative velocity change at its point.
    pub law: &'a StageLaw,
    /// The body (index into the group) the law acts on.
    pub body: usize,
    /// The element's other end: its body and the world point of its port there; `None`
    /// against the ground.
    pub partner: Option<(usize, Vector3<f64>)>,
}

/// Two points of one mechanism in a group (a robot's joint and its tip, each holding coupled
/// laws): the change of `body`'s acceleration per unit force at `from` (both indices into
/// the group), W_body,from = G_body H⁻¹ G_fromᵀ ([`Admittance::stage_mobility`]).
///
/// [`Admittance::stage_mobility`]: crate::component::Admittance::stage_mobility
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossMobility {
    pub body: usize,
    pub from: usize,
    pub w: Matrix3<f64>,
}

/// Solve the group's stage (module doc) and write each body's accelerations Δv/τ, Δω/τ
/// into `bodies`. `laws`: every coupled law on every body of the group (both ends of an
/// element between two of them); `cross`: the mobilities between points of one mechanism
/// (none for free bodies). Newton's method on the residual over all the bodies'
/// unknowns, its Jacobian blockwise M_i + τ Σ G_iᵀ J_l G_i on the diagonal and
/// −τ G_iᵀ J_l G_j between an element's two bodies (J_l = −∂f_l/∂Δ). Groups of up to four
/// bodies (a stack of three, a grasp) are solved in fixed-size matrices on the stack.
pub fn group_rates(bodies: &mut [StageBody], laws: &[GroupLaw<'_>], cross: &[CrossMobility], tau: f64) {
    match bodies.len() {
        1 => solve(Const::<6>, bodies, laws, cross, tau),
        2 => solve(Const::<12>, bodies, laws, cross, tau),
        3 => solve(Const::<18>, bodies, laws, cross, tau),
        4 => solve(Const::<24>, bodies, laws, cross, tau),
        n => solve(Dyn(6 * n), bodies, laws, cross, tau),
    }
}

/// [`group_rates`] in `n` = 6 × bodies unknowns (fixed or known at run time).
fn solve<D>(n: D, bodies: &mut [StageBody], laws: &[GroupLaw<'_>], cross: &[CrossMobility], tau: f64)
where
    D: DimMin<D, Output = D>,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    // Six unknowns a body: a point mass's rotation is a dummy of unit inertia that no
    // force reaches, so it stays at Δω = 0.
    let mut inertia = OMatrix::<f64, D, D>::zeros_generic(n, n);
    // The other forces: the explicit ones less the laws' at Δ = 0.
    let mut fo = OVector::<f64, D>::zeros_generic(n, Const::<1>);
    let mut scale = 0.0;
    for (i, b) in bodies.iter().enumerate() {
        let o = 6 * i;
        if b.prescribed {
            // Its unknowns are dummies (Δ = 0); the laws see its given change below.
            inertia.fixed_view_mut::<6, 6>(o, o).fill_with_identity();
            continue;
        }
        inertia.fixed_view_mut::<3, 3>(o, o).fill_diagonal(b.mass);
        let f = b.a * b.mass;
        // A mechanism's point: its rows hold only the laws' change (below).
        if b.mobility.is_none() {
            fo.fixed_rows_mut::<3>(o).copy_from(&f);
        }
        scale += f.norm();
        match b.inertia {
            Some(j) => {
                inertia.fixed_view_mut::<3, 3>(o + 3, o + 3).copy_from(&j);
                let m = j * b.alpha;
                fo.fixed_rows_mut::<3>(o + 3).copy_from(&m);
                scale += m.norm();
            }
            None => inertia.fixed_view_mut::<3, 3>(o + 3, o + 3).fill_diagonal(1.0),
        }
    }
    for l in laws {
        let o = 6 * l.body;
        let f0 = l.law.force();
        let mut rows = fo.fixed_rows_mut::<3>(o);
        rows -= f0;
        if let Some(r) = bodies[l.body].arm(&l.law.point()) {
            let mut rows = fo.fixed_rows_mut::<3>(o + 3);
            rows -= r.transpose() * f0;
            if l.law.has_moments() {
                rows -= l.law.moment();
            }
        }
    }
    scale = (scale + fo.norm()) * tau;
    // Points of a mechanism in the group (a robot's port): their rows below, and the laws'
    // force change on them at the solution kept in `at_mechanism`.
    let mechanism = bodies.iter().any(|b| b.mobility.is_some());
    let mut at_mechanism = mechanism.then(|| fo.clone());
    let mut residual = |d: &OVector<f64, D>, jacobian: bool| {
        let mut f = fo.clone();
        let mut jac = jacobian.then(|| inertia.clone());
        for l in laws {
            let (i, o) = (l.body, 6 * l.body);
            let at = l.law.point();
            let ri = bodies[i].arm(&at);
            // The change of the law's argument: its point on its body less the partner's,
            // Δv + R Δω on each (G = [I, R]).
            let at_body = |r: &Option<Matrix3<f64>>, q: usize| {
                let mut x: Vector3<f64> = d.fixed_rows::<3>(q).into_owned();
                if let Some(r) = r {
                    x += r * d.fixed_rows::<3>(q + 3);
                }
                x
            };
            let mut x = at_body(&ri, o);
            // The partner solved for: its body, offset and arm.
            let mut other = None;
            if let Some((j, p)) = l.partner {
                let b = &bodies[j];
                if b.prescribed {
                    x -= (b.a + b.alpha.cross(&(p - b.com))) * tau;
                } else {
                    let rj = b.arm(&p);
                    x -= at_body(&rj, 6 * j);
                    other = Some((6 * j, rj));
                }
            }
            let (fl, jl) = l.law.at(&x);
            let mut rows = f.fixed_rows_mut::<3>(o);
            rows += fl;
            if let Some(ri) = &ri {
                let mut rows = f.fixed_rows_mut::<3>(o + 3);
                rows += ri.transpose() * fl;
                if l.law.has_moments() {
                    joint_moments(l, bodies, d, tau, &mut f, jac.as_mut());
                }
            }
            let Some(jac) = jac.as_mut() else { continue };
            let jt = jl * tau;
            // G_iᵀ J G_i on the diagonal block, −G_iᵀ J G_j off it: [[J, J R_j], [R_iᵀ J, R_iᵀ J R_j]]
            // (the rows of R_i and the columns of R_j only where the body turns).
            let rt = ri.map(|ri| ri.transpose() * jt);
            let mut block = |q: usize, rj: &Option<Matrix3<f64>>, sign: f64| {
                let mut b = jac.fixed_view_mut::<3, 3>(o, q);
                b += jt * sign;
                if let Some(rj) = rj {
                    let mut b = jac.fixed_view_mut::<3, 3>(o, q + 3);
                    b += jt * rj * sign;
                }
                if let Some(rt) = &rt {
                    let mut b = jac.fixed_view_mut::<3, 3>(o + 3, q);
                    b += rt * sign;
                    if let Some(rj) = rj {
                        let mut b = jac.fixed_view_mut::<3, 3>(o + 3, q + 3);
                        b += rt * rj * sign;
                    }
                }
            };
            block(o, &ri, 1.0);
            if let Some((q, rj)) = other {
                block(q, &rj, -1.0);
            }
        }
        if !mechanism {
            return (&inertia * d - f * tau, jac);
        }
        let mut r = &inertia * d - &f * tau;
        // A mechanism's point: m (Δ − τ a − τ W Σ (f_l(Δ) − f_l(0)) − τ Σ_k W_k F_k), its
        // Jacobian rows m I + W (the laws' part) + Σ_k W_k (point k's laws' part) with m its
        // rows' scale, F_k and W_k the force change on each other point k of its mechanism
        // and the mobility from there (`cross`; their rows read before any is replaced).
        let before = (!cross.is_empty()).then(|| jac.clone()).flatten();
        for (i, b) in bodies.iter().enumerate() {
            let Some(w) = b.mobility.filter(|_| !b.prescribed) else { continue };
            let o = 6 * i;
            let mut change = w * f.fixed_rows::<3>(o) + b.a;
            for x in cross.iter().filter(|x| x.body == i) {
                change += x.w * f.fixed_rows::<3>(6 * x.from);
            }
            r.fixed_rows_mut::<3>(o).copy_from(&((d.fixed_rows::<3>(o) - change * tau) * b.mass));
            if let Some(jac) = jac.as_mut() {
                for c in 0..jac.ncols() {
                    let own: Vector3<f64> = inertia.fixed_view::<3, 1>(o, c).into_owned();
                    let laws_of = |q: usize| {
                        let rows = before.as_ref().map_or(jac.fixed_view::<3, 1>(q, c).into_owned(), |j| j.fixed_view::<3, 1>(q, c).into_owned());
                        rows - inertia.fixed_view::<3, 1>(q, c)
                    };
                    let mut add = w * laws_of(o);
                    for x in cross.iter().filter(|x| x.body == i) {
                        add += x.w * laws_of(6 * x.from);
                    }
                    jac.fixed_view_mut::<3, 1>(o, c).copy_from(&(own + add * b.mass));
                }
            }
        }
        if let Some(at) = at_mechanism.as_mut() {
            at.copy_from(&f);
        }
        (r, jac)
    };
    let d = super::newton(&mut residual, OVector::<f64, D>::zeros_generic(n, Const::<1>), scale);
    if mechanism {
        // The forces at the solution itself (Newton's last evaluation may be a rejected trial).
        residual(&d, false);
        if let Some(at) = &at_mechanism {
            for (i, b) in bodies.iter_mut().enumerate().filter(|(_, b)| b.mobility.is_some()) {
                b.force = at.fixed_rows::<3>(6 * i).into_owned();
            }
        }
    }
    for (i, b) in bodies.iter_mut().enumerate().filter(|(_, b)| !b.prescribed) {
        b.a = d.fixed_rows::<3>(6 * i) / tau;
        if b.inertia.is_some() {
            b.alpha = d.fixed_rows::<3>(6 * i + 3) / tau;
        }
    }
}

/// A joint law's moments on its body (which turns) in the relative change of the two bodies'
/// Δω (the partner's given change where it is prescribed, none where it is a point mass or
/// the ground) into the residual's forces `f` and, where asked, the Jacobian's rotation
/// blocks ([`StageLaw::Joint`]).
fn joint_moments<D>(l: &GroupLaw<'_>, bodies: &[StageBody], d: &OVector<f64, D>, tau: f64, f: &mut OVector<f64, D>, jac: Option<&mut OMatrix<f64, D, D>>)
where
    D: nalgebra::Dim,
    DefaultAllocator: Allocator<D, D> + Allocator<D>,
{
    let o = 6 * l.body + 3;
    let mut x: Vector3<f64> = d.fixed_rows::<3>(o).into_owned();
    let mut other = None;
    if let Some((j, _)) = l.partner {
        let b = &bodies[j];
        if b.prescribed {
            x -= b.alpha * tau;
        } else if b.inertia.is_some() {
            x -= d.fixed_rows::<3>(6 * j + 3);
            other = Some(6 * j + 3);
        }
    }
    let (ml, jm) = l.law.moment_at(&x);
    let mut rows = f.fixed_rows_mut::<3>(o);
    rows += ml;
    if let Some(jac) = jac {
        let jt = jm * tau;
        let mut b = jac.fixed_view_mut::<3, 3>(o, o);
        b += jt;
        if let Some(q) = other {
            let mut b = jac.fixed_view_mut::<3, 3>(o, q);
            b -= jt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stage_law::Curve;
    use nalgebra::Vector2;

    /// A contact on the plane of normal n = z at `at` (μ = 0.5, both rates `c`), as a body
    /// contact gives it to its lower body's upper partner.
    fn contact(wn: f64, wt: [f64; 2], c: f64, at: Vector3<f64>, sign: f64) -> StageLaw {
        let (n, t1, t2) = (Vector3::z() * sign, Vector3::x() * sign, Vector3::y() * sign);
        StageLaw::Contact { n, t1, t2, wn, cn: c, wt: Vector2::from(wt), c, mu: 0.5, at, curve: Curve::Flat }
    }

    fn cube(mass: f64, com: Vector3<f64>, a: Vector3<f64>, alpha: Vector3<f64>) -> StageBody {
        let i = mass * 0.02 / 6.0;
        StageBody::rigid(mass, Matrix3::from_diagonal_element(i), com, a, alpha)
    }

    /// The residual of the group's stage at the solved accelerations, body by body.
    fn residuals(before: &[StageBody], after: &[StageBody], laws: &[GroupLaw<'_>], tau: f64) -> f64 {
        let mut worst: f64 = 0.0;
        for (i, (b, s)) in before.iter().zip(after).enumerate() {
            let (dv, dw) = (s.a * tau, s.alpha * tau);
            let mut f = b.a * b.mass;
            let mut m = b.inertia.map_or(Vector3::zeros(), |j| j * b.alpha);
            for l in laws.iter().filter(|l| l.body == i) {
                let at = l.law.point();
                let own = dv + dw.cross(&(at - b.com));
                let other = l.partner.map_or(Vector3::zeros(), |(j, p)| after[j].a * tau + (after[j].alpha * tau).cross(&(p - after[j].com)));
                let f0 = l.law.force();
                let fl = l.law.at(&(own - other)).0;
                f += fl - f0;
                m += (at - b.com).cross(&(fl - f0));
                // A joint's moments in the relative change of the bodies' Δω.
                let turn = l.partner.map_or(Vector3::zeros(), |(j, _)| after[j].alpha * tau);
                m += l.law.moment_at(&(dw - turn)).0 - l.law.moment();
            }
            let rv = dv * b.mass - f * tau;
            let rw = b.inertia.map_or(Vector3::zeros(), |j| j * dw - m * tau);
            worst = worst.max(rv.norm()).max(rw.norm());
        }
        worst
    }

    /// Two boxes, the lower on four corner contacts with the ground, the upper on four with
    /// the lower (held, sliding and leaving): the accelerations solve the stage of both.
    #[test]
    fn a_stack_of_two_solves_its_stage_together() {
        let tau = 1e-3;
        let c = 1e6;
        let low = Vector3::new(0.0, 0.0, 0.05);
        let up = Vector3::new(0.0, 0.0, 0.15);
        let mut owned = Vec::new();
        for (k, (x, y)) in [(0.05, 0.05), (-0.05, 0.05), (0.05, -0.05), (-0.05, -0.05)].into_iter().enumerate() {
            let ground = Vector3::new(x, y, 0.0);
            owned.push((contact(5.0 + k as f64, [0.3, -0.2], c, ground, 1.0), 0, None));
            let top = Vector3::new(x, y, 0.1);
            let wt = [[0.1, 0.0], [3.0, 1.0], [0.0, -0.2], [0.5, 0.5]][k];
            let wn = [2.5, 2.0, -0.5, 3.0][k];
            // The upper box's law (a's, relative to the lower), and the lower's against it.
            owned.push((contact(wn, wt, c, top, 1.0), 1, Some((0, top))));
            owned.push((contact(wn, wt, c, top, -1.0), 0, Some((1, top))));
        }
        let laws: Vec<GroupLaw<'_>> = owned.iter().map(|(law, body, partner)| GroupLaw { law, body: *body, partner: *partner }).collect();
        for (a0, a1) in [(Vector3::new(0.5, -1.0, -9.81), Vector3::new(0.0, 2.0, -9.81)), (Vector3::new(30.0, 0.0, 5.0), Vector3::new(-20.0, 0.0, -40.0))] {
            let before = [cube(1.0, low, a0, Vector3::new(1.0, 0.0, -2.0)), cube(0.5, up, a1, Vector3::new(0.0, 3.0, 0.0))];
            let mut after = before;
            group_rates(&mut after, &laws, &[], tau);
            let r = residuals(&before, &after, &laws, tau);
            assert!(r < 1e-12, "residual {r:e}");
        }
    }

    /// Two links joined by a stiff penalty joint and the first to the ground by another
    /// ([`StageLaw::Joint`]: the translational spring, the bending spring and the twist
    /// friction, held and slipping): the accelerations solve the stage of both, moments
    /// included; and each joint law's moment Jacobian is its central differences.
    #[test]
    fn links_joined_by_joint_laws_solve_their_stage_together() {
        let tau = 1e-3;
        let rod = |com: Vector3<f64>, a: Vector3<f64>, alpha: Vector3<f64>| StageBody::rigid(0.1, Matrix3::from_diagonal(&Vector3::new(1.25e-4, 2.1e-3, 2.1e-3)), com, a, alpha);
        let joint = |sign: f64, at: Vector3<f64>, twist: f64| StageLaw::Joint {
            w: Vector3::new(0.5, -0.2, 0.1) * sign,
            c: 1e6 * tau + 100.0,
            at,
            axis: Vector3::z(),
            bend: Vector3::new(0.02, -0.01, 0.0) * sign,
            c_bend: 1e6 * tau + 0.05,
            twist: twist * sign,
            c_twist: 1e7 * tau + 1.0,
            level: 0.5,
        };
        for twist in [0.3, 0.49, 2.0] {
            let (base, mid) = (Vector3::zeros(), Vector3::new(0.5, 0.0, 0.0));
            let (ground, up, down) = (joint(1.0, base, twist), joint(1.0, mid, twist), joint(-1.0, mid, twist));
            let laws = [
                GroupLaw { law: &ground, body: 0, partner: None },
                GroupLaw { law: &down, body: 0, partner: Some((1, mid)) },
                GroupLaw { law: &up, body: 1, partner: Some((0, mid)) },
            ];
            let before = [
                rod(Vector3::new(0.25, 0.0, 0.0), Vector3::new(0.0, 1.0, 0.0), Vector3::new(3.0, -1.0, 40.0)),
                rod(Vector3::new(0.75, 0.0, 0.0), Vector3::new(0.0, -2.0, 0.5), Vector3::new(-20.0, 5.0, 10.0)),
            ];
            let mut after = before;
            group_rates(&mut after, &laws, &[], tau);
            let r = residuals(&before, &after, &laws, tau);
            assert!(r < 1e-12, "twist {twist}: residual {r:e}");
            // −∂m/∂x by central differences.
            let x = Vector3::new(1e-4, -2e-4, 3e-6);
            let (_, jac) = up.moment_at(&x);
            for k in 0..3 {
                let h = 1e-9 * Vector3::ith(k, 1.0);
                let diff = -(up.moment_at(&(x + h)).0 - up.moment_at(&(x - h)).0) / 2e-9;
                assert!((jac.column(k) - diff).norm() < 1e-5 * (1.0 + jac.norm()), "twist {twist}: column {k} {} against {diff}", jac.column(k));
            }
        }
    }

    /// A point mass held by a stiff element to a prescribed motion accelerating at 4 m/s²
    /// follows it: the law at the relative change sees the source's given τ a, so a held
    /// element (w = 0 at the stage) makes the body take the source's acceleration but the
    /// share m/(m + τ c) the element's stage compliance leaves (4 % here; the next stage's w
    /// sees the difference).
    #[test]
    fn a_body_held_to_a_prescribed_motion_follows_it() {
        let tau = 5e-4;
        let c = 1e8 * tau + 100.0;
        let law = StageLaw::Friction { w: Vector3::zeros(), c, level: 50.0, viscous: 0.0, dims: 3, at: Vector3::zeros(), curve: Curve::Flat };
        let laws = [GroupLaw { law: &law, body: 0, partner: Some((1, Vector3::zeros())) }];
        let body = StageBody::point(1.0, Vector3::zeros(), Vector3::zeros());
        let source = StageBody { a: Vector3::new(4.0, 0.0, 0.0), prescribed: true, ..body };
        let mut bodies = [body, source];
        group_rates(&mut bodies, &laws, &[], tau);
        // m Δ = τ (−c (Δ − τ a_s)) ⇒ Δ/τ = c τ a_s / (m + τ c).
        let expected = c * tau * 4.0 / (1.0 + tau * c);
        assert!((bodies[0].a.x - expected).abs() < 1e-12 && (expected - 4.0).abs() < 0.2, "{} against {expected}", bodies[0].a.x);
        assert_eq!(bodies[1], source, "the source's motion is given");
    }

    /// A point mass held by a stiff element to another that rests on the ground with
    /// friction: at rest in equilibrium (each law balancing the other forces) both keep
    /// zero rates exactly.
    #[test]
    fn a_group_at_rest_in_equilibrium_keeps_zero_rates() {
        let tau = 1e-3;
        let friction = |w: f64, at: Vector3<f64>| StageLaw::Friction { w: Vector3::new(w, 0.0, 0.0), c: 1e7, level: 5.0, viscous: 0.0, dims: 3, at, curve: Curve::Flat };
        let p = |x: f64| Vector3::new(x, 0.0, 0.0);
        // Body 1 pushed by 2 N along x (its element to body 0 takes it: f = −w on 1, +w on 0),
        // body 0 held by its element to the ground (takes 2 N back).
        let (up, down, ground) = (friction(2.0, p(1.0)), friction(-2.0, p(0.0)), friction(2.0, p(0.0)));
        let laws = [
            GroupLaw { law: &up, body: 1, partner: Some((0, p(0.0))) },
            GroupLaw { law: &down, body: 0, partner: Some((1, p(1.0))) },
            GroupLaw { law: &ground, body: 0, partner: None },
        ];
        let point = |x: f64| StageBody::point(1.0, p(x), Vector3::zeros());
        let mut bodies = [point(0.0), point(1.0)];
        group_rates(&mut bodies, &laws, &[], tau);
        assert_eq!(bodies, [point(0.0), point(1.0)]);
    }

    /// A point of a mechanism (its inverse inertia W): with W = I/m it is the point mass m
    /// (the same stage to rounding); with W singular along z (a planar arm's tip) the laws
    /// cannot change its z motion, Δ_z = τ a_z, and its partner takes the element's whole
    /// z law; the force change it reports is what maps its rates (W Δf = Δ/τ − a).
    #[test]
    fn a_point_of_a_mechanism_solves_its_stage_with_its_mobility() {
        let tau = 1e-3;
        let p = |x: f64| Vector3::new(x, 0.0, 0.0);
        let law = |w: [f64; 3], at: Vector3<f64>| StageLaw::Friction { w: Vector3::from(w), c: 1e7 * tau, level: 5.0, viscous: 0.0, dims: 3, at, curve: Curve::Flat };
        let (on_tip, on_mass) = (law([1.0, -0.5, 0.8], p(0.0)), law([-1.0, 0.5, -0.8], p(0.0)));
        let laws = [GroupLaw { law: &on_tip, body: 0, partner: Some((1, p(0.0))) }, GroupLaw { law: &on_mass, body: 1, partner: Some((0, p(0.0))) }];
        let (a_tip, a_mass) = (Vector3::new(3.0, -1.0, 2.0), Vector3::new(-0.5, 0.2, 1.0));
        let m = 0.05;
        let mut points = [StageBody::point(m, p(0.0), a_tip), StageBody::point(1.0, p(0.0), a_mass)];
        group_rates(&mut points, &laws, &[], tau);
        let tip = |w: Matrix3<f64>| StageBody { mobility: Some(w), ..StageBody::point(m, p(0.0), a_tip) };
        let mut mech = [tip(Matrix3::from_diagonal_element(1.0 / m)), StageBody::point(1.0, p(0.0), a_mass)];
        group_rates(&mut mech, &laws, &[], tau);
        for (a, b) in mech.iter().zip(&points) {
            assert!((a.a - b.a).norm() < 1e-9 * b.a.norm().max(1.0), "{} against {}", a.a, b.a);
        }
        assert!((mech[0].force / m - (mech[0].a - a_tip)).norm() < 1e-9, "the force change maps the rates");
        // Stuck together: the element's spring keeps them moving as one (rates within
        // (c τ)⁻¹ of each other).
        assert!((mech[0].a - mech[1].a).norm() < 1e-2 * (a_tip - a_mass).norm());
        let w = Matrix3::from_diagonal(&Vector3::new(1.0 / m, 2.0 / m, 0.0));
        let mut planar = [tip(w), StageBody::point(1.0, p(0.0), a_mass)];
        group_rates(&mut planar, &laws, &[], tau);
        assert!((planar[0].a.z - a_tip.z).abs() < 1e-9, "no law moves the tip along z: {}", planar[0].a.z);
        assert!((w * planar[0].force - (planar[0].a - a_tip)).norm() < 1e-9 * planar[0].a.norm());
        assert!((planar[0].a.xy() - planar[1].a.xy()).norm() < 1e-2 * (a_tip - a_mass).norm());
    }

    /// Two points of one mechanism (a 2-joint arm's joint 0 and its tip, each held by a
    /// grounded law): the group with the mobilities between them (`cross`) is the joint-space
    /// stage H Δ = τ (f_o + e_0 f_0(Δ_0) + Jᵀ f_t(J Δ)) of [`StageLaw::joint_rates`] (its
    /// residual to rounding, in two load cases); without `cross` it is not.
    #[test]
    fn points_of_one_mechanism_solve_its_joint_space_stage() {
        use crate::stage_law::MAX_JOINTS;
        use nalgebra::{SMatrix, SVector};
        let tau = 1e-3;
        let mut h = SMatrix::<f64, MAX_JOINTS, MAX_JOINTS>::zeros();
        (h[(0, 0)], h[(0, 1)], h[(1, 0)], h[(1, 1)]) = (0.07, 0.02, 0.02, 0.011);
        let mut jac = SMatrix::<f64, 3, MAX_JOINTS>::zeros();
        (jac[(0, 0)], jac[(0, 1)], jac[(1, 0)], jac[(1, 1)]) = (-0.6, -0.3, 0.8, 0.1);
        let mut a = SVector::<f64, MAX_JOINTS>::zeros();
        (a[0], a[1]) = (40.0, -25.0);
        let h2 = nalgebra::Matrix2::new(h[(0, 0)], h[(0, 1)], h[(1, 0)], h[(1, 1)]);
        let hi = h2.try_inverse().expect("positive definite");
        let j2 = jac.fixed_columns::<2>(0).into_owned();
        // G_0 = e_0ᵀ (along x), G_tip = J: W = G H⁻¹ Gᵀ.
        let e0 = nalgebra::Matrix3x2::new(1.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let w = |g: &nalgebra::Matrix3x2<f64>, k: &nalgebra::Matrix3x2<f64>| g * hi * k.transpose();
        for (joint_w, tip_w) in [(0.3, [1.0, -0.5, 0.0]), (-2.0, [9.0, 4.0, 0.0])] {
            let joint = [StageLaw::Friction { w: Vector3::new(joint_w, 0.0, 0.0), c: 1e6 * tau, level: 0.5, viscous: 0.0, dims: 1, at: Vector3::zeros(), curve: Curve::Flat }];
            let tip = [StageLaw::Friction { w: Vector3::from(tip_w), c: 1e7 * tau, level: 5.0, viscous: 0.0, dims: 3, at: Vector3::zeros(), curve: Curve::Flat }];
            let expected = StageLaw::joint_rates(&h, 2, &a, |i| match i {
                0 => &joint[..],
                2 => &tip[..],
                _ => &[],
            }, Some(&jac), tau);
            let a2 = nalgebra::Vector2::new(a[0], a[1]);
            let point = |g: &nalgebra::Matrix3x2<f64>| {
                let wp = w(g, g);
                let top = wp.symmetric_eigenvalues().max();
                StageBody { mobility: Some(wp), ..StageBody::point(1.0 / top, Vector3::zeros(), g * a2) }
            };
            let laws = [GroupLaw { law: &joint[0], body: 0, partner: None }, GroupLaw { law: &tip[0], body: 1, partner: None }];
            let cross = [CrossMobility { body: 0, from: 1, w: w(&e0, &j2) }, CrossMobility { body: 1, from: 0, w: w(&j2, &e0) }];
            let mut points = [point(&e0), point(&j2)];
            group_rates(&mut points, &laws, &cross, tau);
            // The joints' rates: a + H⁻¹ (e_0 F_0 + Jᵀ F_tip).
            let rates = a2 + hi * (e0.transpose() * points[0].force + j2.transpose() * points[1].force);
            let resid = |r: nalgebra::Vector2<f64>| {
                let d = r * tau;
                let f0 = joint[0].at(&Vector3::new(d[0], 0.0, 0.0)).0.x - joint[0].force().x;
                let ft = tip[0].at(&(j2 * d)).0 - tip[0].force();
                h2 * d - tau * (h2 * a2 + nalgebra::Vector2::new(f0, 0.0) + j2.transpose() * ft)
            };
            assert!(resid(rates).norm() < 1e-15, "the joint-space stage's residual {}", resid(rates).norm());
            for i in 0..2 {
                assert!((rates[i] - expected[i]).abs() < 1e-9 * expected[i].abs().max(1.0), "joint {i}: {} against {}", rates[i], expected[i]);
            }
            assert!((points[1].a - j2 * rates).norm() < 1e-9 * rates.norm(), "the tip moves with the joints");
            let mut alone = [point(&e0), point(&j2)];
            group_rates(&mut alone, &laws, &[], tau);
            let rates = a2 + hi * (e0.transpose() * alone[0].force + j2.transpose() * alone[1].force);
            assert!((rates - nalgebra::Vector2::new(expected[0], expected[1])).norm() > 1e-3, "the mobilities between the points matter here");
        }
    }
}
