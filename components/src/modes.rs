//! The stage of an admittance whose response to a port force is set-valued (a gear, model A:
//! stuck over a range of forces): affine within each *mode* of its implicit step (stuck, or
//! sliding one way), solved with the coupled elements' laws in the mode that its own solution
//! selects (framework/src/stepper/coupling.rs does the same for a group).

/// Most modes of one admittance's stage.
const MAX_MODES: usize = 8;

/// The solution `solve` gives in the mode that its own solution selects (`select`): from
/// `first`, each solution's mode in turn; where a mode comes round again (the solution of
/// one mode selects a neighbour whose solution selects it back: the true one is a third, the
/// gear's φ of (32) of the other sign between them), every mode of `all` not yet tried, the
/// first that selects itself. Within a mode the stage is affine and its solution unique, so
/// the mode of the stage's solution selects itself and is found; the last tried where
/// rounding leaves none.
pub(crate) fn consistent_mode<M: Copy + PartialEq, C>(
    first: M,
    all: impl Iterator<Item = M>,
    mut solve: impl FnMut(M) -> C,
    select: impl Fn(&C) -> M,
) -> C {
    let mut tried: [Option<M>; MAX_MODES] = [None; MAX_MODES];
    let (mut mode, mut n) = (first, 0);
    loop {
        let c = solve(mode);
        let next = select(&c);
        if next == mode {
            return c;
        }
        tried[n] = Some(mode);
        n += 1;
        if tried.contains(&Some(next)) || n == tried.len() {
            // A cycle: the modes not yet tried.
            let mut last = c;
            for m in all.filter(|m| !tried.contains(&Some(*m))) {
                last = solve(m);
                if select(&last) == m {
                    return last;
                }
            }
            return last;
        }
        mode = next;
    }
}

/// The `Admittance` methods of an admittance whose coupled stage is solved mode by mode,
/// delegated to its inherent methods of the same shape (components/src/gear/stage.rs,
/// components/src/robot/geared/stage.rs): `stage_port`, `stage_rates`, `stage_point`,
/// `stage_mode_index`, `stage_mode_indices`, `stage_mode_point`, `stage_cross`, `set_stage`.
macro_rules! modal_stage_methods {
    () => {
        /// A port takes the stage laws of stiff elements where its response increases in
        /// every mode of the implicit step.
        fn takes_stage_laws(&self, port: usize) -> bool {
            self.stage_port(port)
        }
        /// The implicit step with the coupled elements' forces at the stage's new speeds,
        /// mode by mode.
        fn implicit_rate(
            &self,
            x: &[f64],
            forces: &[stiction_framework::port::Force],
            laws: &stiction_framework::component::PortLaws<'_>,
            tau: f64,
            dx: &mut [f64],
        ) {
            self.stage_rates(x, forces, laws, tau, dx);
        }
        /// A port that takes stage laws as a point of a group, stuck (the body of the stage's
        /// mode replaces it).
        fn stage_body(&self, x: &[f64], _dx: &[f64], port: usize) -> Option<stiction_framework::component::StageBody> {
            self.stage_point(x, port)
        }
        /// The mode of the step that the forces with the changes `changes` select.
        fn stage_mode(
            &self,
            x: &[f64],
            forces: &[stiction_framework::port::Force],
            tau: f64,
            changes: &[nalgebra::Vector3<f64>],
        ) -> Option<usize> {
            self.stage_mode_index(x, forces, tau, changes)
        }
        /// The modes of the step (of the locked directions where the events locked them).
        fn stage_modes(&self, _x: &[f64]) -> Vec<usize> {
            self.stage_mode_indices()
        }
        /// `port` as a point in mode `mode`.
        fn stage_mode_body(
            &self,
            x: &[f64],
            forces: &[stiction_framework::port::Force],
            tau: f64,
            mode: usize,
            port: usize,
        ) -> Option<stiction_framework::component::StageBody> {
            self.stage_mode_point(x, forces, tau, mode, port)
        }
        /// In mode `mode`: `port`'s acceleration per unit force at `from`.
        fn stage_mode_mobility(
            &self,
            x: &[f64],
            forces: &[stiction_framework::port::Force],
            tau: f64,
            mode: usize,
            port: usize,
            from: usize,
        ) -> Option<nalgebra::Matrix3<f64>> {
            self.stage_cross(x, forces, tau, mode, port, from)
        }
        /// Two ports that take stage laws are joined in every mode (the value is the mode's).
        fn stage_mobility(&self, _x: &[f64], port: usize, from: usize) -> Option<nalgebra::Matrix3<f64>> {
            (self.stage_port(port) && self.stage_port(from)).then(nalgebra::Matrix3::zeros)
        }
        /// The step at the forces with the group's changes on the ports.
        fn set_stage_body(
            &self,
            x: &[f64],
            forces: &[stiction_framework::port::Force],
            tau: f64,
            ports: &[usize],
            bodies: &[stiction_framework::component::StageBody],
            dx: &mut [f64],
        ) {
            self.set_stage(x, forces, tau, ports, bodies, dx);
        }
    };
}
pub(crate) use modal_stage_methods;

#[cfg(test)]
mod tests {
    use super::*;

    /// Modes 0..5 on a line, each solution selecting the mode `target` picks for it: a chain
    /// ends where a mode selects itself; a two-cycle 1 ↔ 2 is broken by trying the others.
    #[test]
    fn the_mode_that_selects_itself_is_found_through_a_cycle() {
        let chain = consistent_mode(0, 0..5, |m| m, |&m| if m < 3 { m + 1 } else { m });
        assert_eq!(chain, 3);
        let cycle = consistent_mode(1, 0..5, |m| m, |&m| match m {
            1 => 2,
            2 => 1,
            m => 4.max(m),
        });
        assert_eq!(cycle, 4, "0 selects 4, 3 selects 4, 4 itself");
        let none = consistent_mode(0, 0..2, |m| m, |&m| 1 - m);
        assert!(none == 0 || none == 1);
    }
}
