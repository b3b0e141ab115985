//! The two component kinds of the modular architecture (papers/modular-rk4-architecture.md,
//! section II.B): admittances (force in, motion out, (6)) and impedances (motion in,
//! force out, (9)). Both receive the stage time t = kT + T_{r−1} and the stage step size
//! τ = T_r of (21)/(22), so implicit-Euler models keep exact static friction inside RK4.

pub use crate::error::Fault;
use crate::method::Method;
use crate::port::{Force, Layout, Motion};
use crate::views::{AdmittanceBatch, ImpedanceBatch, PortStates};
pub use crate::stage_law::{Curve, LevelTable, PortLaws, StageBody, StageLaw};
use nalgebra::{Matrix3, Vector3};

/// Most ports of an impedance (a spring has 2, a contact 1).
pub const MAX_IMPEDANCE_PORTS: usize = 4;

/// What an impedance keeps of one evaluation of its switching functions to bound how far
/// they can move ([`Impedance::switchings_kept`], [`Impedance::switching_reach`]): its own
/// numbers (a contact's lever lengths, speeds and forces there).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SwitchKept(pub [f64; 8]);

/// Bounds on how far a port's motion moved between two instants
/// ([`Impedance::switching_reach`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MotionChange {
    /// |Δp| (m).
    pub dp: f64,
    /// |Δv| (m/s).
    pub dv: f64,
    /// |Δω| (rad/s).
    pub dw: f64,
    /// ‖R₁ − R₀‖₂ = 2 sin(θ/2), θ the angle turned: |R₁ u − R₀ u| ≤ turn |u|.
    pub turn: f64,
    /// |ω| at the first instant (rad/s).
    pub w: f64,
}

impl MotionChange {
    /// The change from `from` to `to`.
    pub fn between(from: &Motion, to: &Motion) -> MotionChange {
        // q₀⁻¹ q₁ = (cos θ/2, sin θ/2 · axis): its vector part's norm is sin θ/2 (either sign of q).
        let rel = from.rot.inverse() * to.rot;
        MotionChange {
            dp: (to.p - from.p).norm(),
            dv: (to.v - from.v).norm(),
            dw: (to.w - from.w).norm(),
            turn: 2.0 * rel.imag().norm(),
            w: from.w.norm(),
        }
    }

    /// The change of a point carried at distance `lever` from the frame whose change this
    /// is (p + R a, v + ω × R a with |a| = `lever`): |Δp| + lever turn, |Δv| + lever (|Δω| + |ω| turn).
    pub fn at_lever(self, lever: f64) -> MotionChange {
        MotionChange { dp: self.dp + lever * self.turn, dv: self.dv + lever * (self.dw + self.w * self.turn), ..self }
    }
}

/// The rigid body behind an admittance port in a state, for the stuck-state analysis of
/// `stiction check`: a force f at world point x moves the point at x by
/// ẍ = f/m + I⁻¹ (r × f) × r, r = x − c, so along a direction d it meets the effective mass
/// 1/m_eff(d) = 1/m + (r × d)ᵀ I⁻¹ (r × d) (framework/src/stability.rs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidInertia {
    /// Mass m (kg), > 0.
    pub mass: f64,
    /// The inverse inertia I⁻¹ about the centre of mass, world frame (1/(kg·m²)).
    pub inertia_inv: Matrix3<f64>,
    /// The centre of mass c, world frame (m).
    pub com: Vector3<f64>,
}

/// Where an impedance between two bodies acts in the stuck state ([`Impedance::stuck_contact`]):
/// the contact point and the unit normal, world frame. Its [`StageSpring`] acts along the
/// normal and in the tangent plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    pub point: Vector3<f64>,
    pub normal: Vector3<f64>,
}

/// A finding of `stiction check` about one component.
#[derive(Clone, Debug, PartialEq)]
pub enum Diagnostic {
    /// A fact worth showing (efficiencies, classification, conditioning).
    Info(String),
    /// A condition under which results are likely wrong (instability, ill-posedness).
    Warning(String),
}

/// The linear spring–damper an element presents at its ports in the stuck state (its
/// friction holding), for the system-wide stability analysis of `stiction check`
/// (framework/src/stability.rs): force −K·x − (B + τK·\[implicit\])·ẋ on each attached port.
/// `implicit` marks elements whose stage form carries the extra damping τK of I_fricK (19)
/// (the implicit-Euler step, paper's (20)); plain springs have `implicit: false`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageSpring {
    /// Stiffness K (N/m or N·m/rad).
    pub k: f64,
    /// Viscosity B.
    pub b: f64,
    /// Whether each stage adds τK to the damping ((19): f = (B + τK) v + K e while |f| < F).
    pub implicit: bool,
    /// Whether the masses it holds take it implicitly in each stage
    /// ([`Impedance::stage_law`]): while it holds, their velocity rate is the stage force
    /// over M + τ (B + τK) instead of M.
    pub coupled: bool,
}

/// A joint's springs on the relative rotation of the two bodies it joins, in the stuck state
/// ([`Impedance::held_moments`]): a bending spring on the rotation about the axes normal to
/// `axis` and a held spring about `axis` (a penalty joint's twist friction while it holds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldMoments {
    /// The joint axis, unit, in the frame of the element's first port (turned by that
    /// port's motion into the world frame).
    pub axis: Vector3<f64>,
    /// The bending spring (N·m/rad) and its damper, explicit (no τK).
    pub bend: StageSpring,
    /// The twist element's held spring and damper ((19): τK per stage).
    pub twist: StageSpring,
}

/// Description of an output signal a component offers, e.g. `v` with 3 elements.
/// In the static documentation of a type (`ComponentType::signals`), `len == 0` means
/// "one element per degree of freedom".
/// A signal is addressed as `component.name[i]`, or `component.name` when `len == 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalInfo {
    pub name: &'static str,
    pub len: usize,
    pub unit: &'static str,
    pub doc: &'static str,
    /// Whether the value depends on the admittance's state alone (positions, velocities),
    /// not on its forces or rates: a time function that reads it then sees it at every RK4
    /// stage, from that stage's state (framework/src/stepper/bus.rs). An output of a Model
    /// Exchange signal block is one: a function of the stage's state, time and (with direct
    /// feedthrough, [`Admittance::signal_inputs`]) the stage's values of its inputs.
    pub state: bool,
}

impl SignalInfo {
    pub const fn new(name: &'static str, len: usize, unit: &'static str, doc: &'static str) -> Self {
        SignalInfo { name, len, unit, doc, state: false }
    }
    /// The same signal, marked as read from the state alone ([`SignalInfo::state`]).
    pub const fn of_state(self) -> Self {
        SignalInfo { state: true, ..self }
    }
}

/// What a component sees when asked for a signal value at an output instant:
/// its state, its last computed rate, the motions at its ports (impedances) and
/// the forces at its ports (for an admittance: the sums Φ delivered; for an impedance:
/// the forces it produced). Computed by an evaluation with τ = T at the output time.
#[derive(Clone, Copy, Debug)]
pub struct Probe<'a> {
    pub t: f64,
    /// The τ of the evaluation (the step T).
    pub tau: f64,
    pub state: &'a [f64],
    pub rate: &'a [f64],
    pub motions: &'a [Motion],
    pub forces: &'a [Force],
}

/// The sides of a component's state switches while the stepper locks them
/// ([`Admittance::lock_sides`]): a code of the component's choosing, in an atomic shared by
/// its copies (a batch's too); none while unlocked. Not a state: set and cleared within a
/// step.
#[derive(Clone, Debug)]
pub struct Sides(std::sync::Arc<std::sync::atomic::AtomicU8>);

impl Default for Sides {
    fn default() -> Self {
        Sides(std::sync::Arc::new(std::sync::atomic::AtomicU8::new(Sides::NONE)))
    }
}

impl Sides {
    const NONE: u8 = u8::MAX;
    /// Lock to `code` (< 255), or unlock (`None`).
    pub fn set(&self, code: Option<u8>) {
        self.0.store(code.unwrap_or(Self::NONE), std::sync::atomic::Ordering::Relaxed);
    }
    /// The locked code, `None` while unlocked.
    #[inline]
    pub fn get(&self) -> Option<u8> {
        let c = self.0.load(std::sync::atomic::Ordering::Relaxed);
        (c != Self::NONE).then_some(c)
    }
}

/// Force in, motion out: ẋ = A(x, û, t; τ)  (6), generalised with τ as in (21).
pub trait Admittance: Send + Sync {
    /// State size and ports.
    fn layout(&self) -> Layout;
    /// Initial state x(0).
    fn init(&self, x: &mut [f64]);
    /// Motion of port `port` for state `x` (the admittance's share of Ψ, (13d)).
    fn port_motion(&self, x: &[f64], port: usize) -> Motion;
    /// Rate ξ = A(x, û, t; τ) (13g). `forces[i]` is the total force on port i.
    fn derivative(&self, x: &[f64], forces: &[Force], t: f64, tau: f64, dx: &mut [f64]) -> Result<(), Fault>;
    /// Called on x(k+1) after each full step (e.g. renormalise a quaternion).
    fn post_step(&self, _x: &mut [f64]) {}
    /// How many [state switching functions](Self::state_switchings) the component has
    /// (asked once by `Simulator::new`; 0 by default).
    fn state_switches(&self) -> usize {
        0
    }
    /// Switching functions of the component's own state `x` into `g` (`state_switches()`
    /// of them): each changes sign where the component's rates or port motion jump (a
    /// Karnopp band edge, where the velocity jumps between 0 and ±DV). Under RK4 the stepper
    /// locates a sign change within the step and splits the step there, as an impedance's
    /// [`switching`](Impedance::switching) (framework/src/stepper/events.rs).
    fn state_switchings(&self, _x: &[f64], _g: &mut [f64]) {}
    /// Called by the stepper with the state `x` right after it crossed the located state
    /// switch `which` (an index into [`state_switchings`](Self::state_switchings)): move `x`
    /// onto the switch's surface, on the side it is now on. The crossing is within 1e-9 T of
    /// the surface; where the motion after it depends on that distance ill-conditionedly (a
    /// Karnopp mass held just inside its band leaves it a time ∝ √distance after its
    /// breakaway) this removes it. Nothing by default.
    fn on_switch(&self, _which: usize, _x: &mut [f64]) {}
    /// How many [force switching functions](Self::force_switchings) the component has
    /// (asked once by `Simulator::new`; 0 by default).
    fn force_switches(&self) -> usize {
        0
    }
    /// Switching functions of the state `x` and the total forces `forces` on the ports (Φ
    /// at that state, every impedance on them evaluated with τ = T) into `g`
    /// (`force_switches()` of them): each changes sign where the rates have a kink that
    /// depends on the load (a Karnopp sticking force reaching its breakaway level FH).
    /// Located within the step like [`state_switchings`](Self::state_switchings), as kinks:
    /// the sub-step ends just past them.
    fn force_switchings(&self, _x: &[f64], _forces: &[Force], _g: &mut [f64]) {}
    /// Discontinuity locking of the state switches: with `Some(x)`, until called with
    /// `None`, the component evaluates its rates, port motions and switching functions on
    /// the side of each [state switch](Self::state_switchings) where `x` is, also at
    /// states past it (keep the side in a shared [`Sides`]). The stepper locks the sides at
    /// the start of the trial sub-steps that search a switch where the rates jump: a trial's
    /// end state is then a smooth function of its length, and the switch is found where the
    /// solution reaches it, not where one stage's state first does.
    fn lock_sides(&self, _x: Option<&[f64]>) {}
    /// Whether an input of the component has breaks ([`next_break`](Self::next_break) over
    /// all time): asked once by `Simulator::new`.
    fn has_breaks(&self) -> bool {
        self.next_break(f64::NEG_INFINITY, f64::INFINITY).is_some()
    }
    /// The first time in the open interval (`t0`, `t1`) at which an input of the component
    /// is not smooth (a table's row, a piecewise `until`:
    /// [`TimeFunction::next_break`](crate::signal::TimeFunction::next_break)). Under RK4 a
    /// step ends a sub-step there, so that its stages integrate smooth inputs (order 4).
    fn next_break(&self, _t0: f64, _t1: f64) -> Option<f64> {
        None
    }
    /// The (sub-)step [`t0`, `t1`] whose stages come next, told under RK4 to a component
    /// that [has breaks](Self::has_breaks): its stages read their inputs from the piece that
    /// holds inside it ([`TimeFunction::eval_on`](crate::signal::TimeFunction::eval_on)),
    /// also where they look past `t1`. After the span: NaN (a probe reads the functions' own
    /// values).
    fn set_window(&self, _t0: f64, _t1: f64) {}
    /// Called, after [`set_window`](Self::set_window), on the component's state at the start
    /// of a sub-step that begins at a break of its inputs: a state that tracks an input (a
    /// velocity source's velocity) takes the input's value on the new side of a jump.
    fn at_break(&self, _x: &mut [f64]) {}
    /// Called once by [`Simulator::new`](crate::Simulator::new), before any evaluation, with
    /// the method and the step T. A component whose behaviour depends on them (an imported
    /// FMU with its own communication step, stiction-fmi-import) checks and records them here.
    fn prepare(&self, _method: Method, _step: f64) -> Result<(), String> {
        Ok(())
    }
    /// Signals this component offers.
    fn signals(&self) -> Vec<SignalInfo> {
        Vec::new()
    }
    /// Element `elem` of signal `which` (index into `signals()`).
    fn signal(&self, _which: usize, _elem: usize, _probe: &Probe) -> f64 {
        f64::NAN
    }
    /// Kinetic plus potential (gravity) energy stored in the component (J), if defined.
    fn energy(&self, _x: &[f64]) -> Option<f64> {
        None
    }
    /// Facts and warnings for `stiction check` at the initial state `x` and step T.
    fn diagnose(&self, _x: &[f64], _step: f64) -> Vec<Diagnostic> {
        Vec::new()
    }
    /// Effective inertia seen at a scalar or point port (kg or kg·m²), used by
    /// `stiction check` for stability warnings. `None` when not meaningful.
    fn port_inertia(&self, _x: &[f64], _port: usize) -> Option<f64> {
        None
    }
    /// The smallest inertia the admittance can show at scalar or point port `port` (its
    /// other motions free), on which a stiff element decides whether to couple implicitly
    /// with it (`Impedance::held_frequency`'s `couple`): a robot's joint 1/(H⁻¹)_ii, below
    /// its H_ii. The default: [`port_inertia`](Self::port_inertia).
    fn coupling_inertia(&self, x: &[f64], port: usize) -> Option<f64> {
        self.port_inertia(x, port)
    }
    /// The rigid body behind frame port `port` at state `x` (mass, world inverse inertia,
    /// centre of mass), so that `stiction check` sees its rotation through a contact at a
    /// point of it ([`RigidInertia`]). `None` (the default): translational inertia only.
    fn port_rigid_inertia(&self, _x: &[f64], _port: usize) -> Option<RigidInertia> {
        None
    }
    /// The joint-space inertia matrix H (n×n, row-major) coupling scalar ports 0..n, for an
    /// admittance whose ports are coupled through its inertia (a serial robot's joints,
    /// H(θ) of (8)); the stuck-state analysis then linearises those ports together.
    /// `None` (the default): the ports are analysed one by one with [`port_inertia`](Self::port_inertia).
    fn inertia_matrix(&self, _x: &[f64]) -> Option<(usize, Vec<f64>)> {
        None
    }
    /// For the stability analysis (framework/src/stability.rs): whether, under `method`, the
    /// position rate of this admittance in the regime analysed carries the implicit term of
    /// the papers' step, q̇ = v + τ v̇ (q(k) = q(k−1) + T v(k)), instead of q̇ = v.
    fn implicit_position(&self, _method: Method) -> bool {
        false
    }
    /// Whether [`implicit_rate`](Self::implicit_rate) applies to `port` (a mass: M v̇ = f,
    /// f all the forces on it).
    fn takes_stage_laws(&self, _port: usize) -> bool {
        false
    }
    /// Whether the admittance's motion does not depend on the forces on it (a velocity
    /// source): a stiff element between it and a body is held implicitly with the body
    /// alone, as against the ground, the source's end at its stage motion.
    fn prescribes_motion(&self) -> bool {
        false
    }
    /// The implicit stage of a mass held by stiff friction elements: given the [`StageLaw`]s
    /// of the coupled elements on each port ([`PortLaws::of`]) and the rates `dx` that
    /// [`derivative`](Self::derivative) wrote, replace the velocity rates by those of
    /// [`StageLaw::implicit_rate`] (a body: [`StageLaw::rigid_rates`]; joints coupled
    /// through an inertia matrix: [`StageLaw::joint_rates`]): the elements' forces taken at
    /// the stage's new velocity v + τ v̇, with their stick–slip decisions made there. Called
    /// once per stage for an admittance with laws on any of its ports. `forces`: the forces
    /// on its ports (Φ) that `derivative` received (a gear's stage reads its torques).
    fn implicit_rate(&self, _x: &[f64], _forces: &[Force], _laws: &PortLaws<'_>, _tau: f64, _dx: &mut [f64]) {}
    /// The body a group of bodies joined by stiff coupled elements solves its stage with
    /// ([`crate::stage_law::group_rates`]), as seen at `port`: for an admittance of one port,
    /// its mass (and world inertia), centre and the explicit accelerations in the rates `dx`
    /// that [`derivative`](Self::derivative) wrote at state `x`; for one of several ports (a
    /// robot), the port as a point of its mechanism ([`StageBody::mobility`]): each of its
    /// ports that holds coupled laws is then a point of the group, the points joined by
    /// [`stage_mobility`](Self::stage_mobility). `None` (the default): it cannot be solved in
    /// a group, and an element between it and another body stays explicit.
    fn stage_body(&self, _x: &[f64], _dx: &[f64], _port: usize) -> Option<StageBody> {
        None
    }
    /// For an admittance whose own stage is the implicit step of a body with an element
    /// inside it (model D (45): a mass and its presliding spring–damper and slider, the
    /// implicit step of the mass with an I_fricK element (19)): the body at `port` under the
    /// port `forces` with that element's force at Δ = 0 in its acceleration, and the
    /// element's law on it. A group solves the body with that law among its coupled
    /// elements' (stepper/coupling.rs), and [`set_stage_body`](Self::set_stage_body) receives
    /// the solved body. `None` (the default): [`stage_body`](Self::stage_body) applies.
    fn own_stage_law(&self, _x: &[f64], _forces: &[Force], _tau: f64, _port: usize) -> Option<(StageBody, StageLaw)> {
        None
    }
    /// For an admittance whose velocity change over a stage is a set-valued function of the
    /// forces on its ports (a gear, which sticks over a range of torques): the mode of the
    /// stage (stuck, or sliding in one direction under one regime of its friction, numbered
    /// by the admittance) that the changes `changes` of the coupled laws' forces select, one
    /// per port (zero where no law acts), given the port forces `forces` that
    /// [`derivative`](Self::derivative) received (the laws' at Δ = 0 included). Within a mode
    /// the response is affine: each port a point of a mechanism
    /// ([`stage_mode_body`](Self::stage_mode_body)), joined by
    /// [`stage_mode_mobility`](Self::stage_mode_mobility). A group solves its stage in the
    /// mode its explicit forces select, and again in the mode its solution selects until they
    /// agree (stepper/coupling.rs). `None` (the default): the response is single-valued,
    /// [`stage_body`](Self::stage_body) applies.
    fn stage_mode(&self, _x: &[f64], _forces: &[Force], _tau: f64, _changes: &[Vector3<f64>]) -> Option<usize> {
        None
    }
    /// Every mode [`stage_mode`](Self::stage_mode) can select at state `x` (tried where the
    /// modes the solutions select come round again); empty (the default) where the response
    /// is single-valued.
    fn stage_modes(&self, _x: &[f64]) -> Vec<usize> {
        Vec::new()
    }
    /// `port` as a point of the group in stage mode `mode` at the explicit forces `forces`:
    /// its acceleration and mobility ([`StageBody::mobility`]); stuck, W = 0 and the
    /// acceleration that stops it. `None` where the port takes no stage laws.
    fn stage_mode_body(&self, _x: &[f64], _forces: &[Force], _tau: f64, _mode: usize, _port: usize) -> Option<StageBody> {
        None
    }
    /// In stage mode `mode`: the change of `port`'s acceleration per unit force at `from`
    /// ([`stage_mobility`](Self::stage_mobility) of that mode). `None` (the default): the
    /// ports are not joined in any mode.
    fn stage_mode_mobility(&self, _x: &[f64], _forces: &[Force], _tau: f64, _mode: usize, _port: usize, _from: usize) -> Option<Matrix3<f64>> {
        None
    }
    /// For an admittance whose ports are points of one mechanism ([`StageBody::mobility`]):
    /// the change of `port`'s acceleration per unit force at `from` (3 × 3, world; a scalar
    /// port along x), G_port H⁻¹ G_fromᵀ for a robot; for one with stage modes, `Some` where
    /// the two ports are joined in its modes ([`stage_mode_mobility`](Self::stage_mode_mobility)
    /// gives the value). `None` (the default): its ports cannot be solved in a group together.
    fn stage_mobility(&self, _x: &[f64], _port: usize, _from: usize) -> Option<Matrix3<f64>> {
        None
    }
    /// Write the accelerations of the group's solved `bodies` (as [`stage_body`](Self::stage_body)
    /// or [`stage_mode_body`](Self::stage_mode_body) gave them at the ports `ports`, one each)
    /// into the rates `dx`, in place of the explicit ones: a body's own, or for the points of
    /// a mechanism what their force changes do to its rates, all at once (`forces` as in
    /// [`implicit_rate`](Self::implicit_rate); `tau` the stage step).
    fn set_stage_body(&self, _x: &[f64], _forces: &[Force], _tau: f64, _ports: &[usize], _bodies: &[StageBody], _dx: &mut [f64]) {}
    /// A spring–damper inside the admittance between `port` and its own frictional contact
    /// (model D's presliding compliance), seen in the stuck state; `None` for most.
    fn internal_spring(&self, _port: usize) -> Option<StageSpring> {
        None
    }
    /// Where the motion of scalar or point port `port` lies in the state, if
    /// [`port_motion`](Self::port_motion) only copies it from there (position
    /// `x[p..p + d]`, velocity `x[v..v + d]`, d = 1 or 3). The schedule then gathers the
    /// port's motion without a dynamic call; it checks the claim against `port_motion` once.
    fn port_states(&self, _port: usize) -> Option<PortStates> {
        None
    }
    /// A batch holding this component, if its type can be evaluated in typed batches
    /// ([`crate::batch`]); the schedule merges consecutive admittances of the same kind.
    /// `None` (the default): one dynamic call per component and stage.
    fn batch(&self) -> Option<Box<dyn AdmittanceBatch>> {
        None
    }
    /// Join `open` if it is a batch of this component's kind, as
    /// `open.merge(&*self.batch())` would, without making a batch of one (the schedule
    /// groups every component so); false, and `open` unchanged, otherwise. The default
    /// makes that batch; a typed batch's components join it directly
    /// ([`PointAdmittanceBatch::join`](crate::batch::PointAdmittanceBatch::join)).
    fn join_batch(&self, open: &mut dyn AdmittanceBatch) -> bool {
        self.batch().is_some_and(|b| open.merge(b.as_ref()))
    }
    /// Whether this component may ask the run to end early ([`stop_request`](Self::stop_request));
    /// asked once per run, so that the run loop polls only those that may.
    fn may_request_stop(&self) -> bool {
        false
    }
    /// A request to end the run (an imported FMU's terminateSimulation): the time from which
    /// on the component cannot go on and what to report. The run ends normally once the
    /// network reaches that time (its last row is then), or at the last row written when a
    /// step fails after the request.
    fn stop_request(&self) -> Option<(f64, String)> {
        None
    }
    /// Whether a step may be computed, thrown away and computed again from the same x(k)
    /// (contact events, stepper/events.rs): false for a component with state outside x (an
    /// imported FMU, the components that may [request a stop](Self::may_request_stop)).
    fn rewindable(&self) -> bool {
        !self.may_request_stop()
    }
    /// State the component keeps outside x (an imported FMU's own state, its communication
    /// bookkeeping), for a whole-simulation checkpoint ([`Simulator::save_state`](crate::Simulator::save_state)):
    /// `Ok(None)` (the default) when there is none; an error (it cannot be saved) names why.
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    /// Return to what [`save_hidden`](Self::save_hidden) gave (untrusted bytes: checked, never a panic).
    fn restore_hidden(&self, _bytes: &[u8]) -> Result<(), String> {
        Err("has no state outside the state vector to restore".into())
    }
    /// The signal inputs of an admittance that is a signal block taking part in every stage
    /// (a Model Exchange FMU with `"role": "signal"`): set by signal connections
    /// `{"from": SIGNAL, "to": "component.input"}`, read by the component itself from the
    /// wires [`connect_input`](Self::connect_input) gives it. Empty for most.
    fn inputs(&self) -> Vec<SignalInfo> {
        Vec::new()
    }
    /// Have input `input` read gain × `wire` (one signal connection, wired once before the
    /// first evaluation). The engine writes the wire before every stage
    /// (framework/src/stepper/bus.rs); the component reads it in `derivative` and `signal`.
    fn connect_input(&self, _input: usize, _wire: crate::signal::Wire, _gain: f64) -> Result<(), String> {
        Err("has no signal inputs".into())
    }
    /// The inputs (positions in [`inputs`](Self::inputs)) that signal `which` depends on at
    /// the same instant (direct feedthrough). A [state signal](SignalInfo::state) with such
    /// inputs is written at every stage after the signals connected to them; a cycle of
    /// them is refused as an algebraic loop.
    fn signal_inputs(&self, _which: usize) -> Vec<usize> {
        Vec::new()
    }
}

/// Motion in, force out: [u; ẏ] = I(x̂, y, t; τ)  (9), generalised with τ as in (22).
///
/// Sign convention: `force[i]` is the force the impedance applies to whatever is attached
/// at its port i.
pub trait Impedance: Send + Sync {
    /// State size and ports (usually 1 or 2).
    fn layout(&self) -> Layout;
    /// Initial state y(0). `motion` holds the initial port motions, so a contact can start
    /// at its static deflection.
    fn init(&self, y: &mut [f64], _motion: &[Motion]) {
        y.fill(0.0);
    }
    /// Forces on the ports and the state rate η (13e)/(22).
    fn evaluate(
        &self,
        motion: &[Motion],
        y: &[f64],
        t: f64,
        tau: f64,
        force: &mut [Force],
        dy: &mut [f64],
    ) -> Result<(), Fault>;
    /// As [`Admittance::prepare`]: called once by `Simulator::new` with the method and step T.
    fn prepare(&self, _method: Method, _step: f64) -> Result<(), String> {
        Ok(())
    }
    /// As [`Admittance::has_breaks`].
    fn has_breaks(&self) -> bool {
        self.next_break(f64::NEG_INFINITY, f64::INFINITY).is_some()
    }
    /// As [`Admittance::next_break`]: a force table's row, a piecewise `until`.
    fn next_break(&self, _t0: f64, _t1: f64) -> Option<f64> {
        None
    }
    /// As [`Admittance::set_window`] (a batch's copies of the component see it too: keep
    /// it in a shared [`Window`](crate::signal::Window)).
    fn set_window(&self, _t0: f64, _t1: f64) {}
    /// Signals this component offers.
    fn signals(&self) -> Vec<SignalInfo> {
        Vec::new()
    }
    /// Element `elem` of signal `which`.
    fn signal(&self, _which: usize, _elem: usize, _probe: &Probe) -> f64 {
        f64::NAN
    }
    /// Energy stored elastically in the element (J), if defined.
    fn energy(&self, _motion: &[Motion], _y: &[f64]) -> Option<f64> {
        None
    }
    /// The spring–damper this element presents in the stuck state, for the system-wide
    /// stability analysis; `None` (the default) when it has none or is not linear there.
    fn stuck_spring(&self) -> Option<StageSpring> {
        None
    }
    /// Called once by `Simulator::new` under RK4, after [`prepare`](Self::prepare), on an
    /// impedance whose [stuck spring](Self::stuck_spring) adds τK per stage: an estimate ω̄² of
    /// the squared angular frequency of its held spring with the inertias on its ports
    /// (Σ K/M over its ports of the stuck springs on each, M the port's
    /// [`Admittance::port_inertia`]), `None` where a port's inertia is unknown or not a
    /// mass: a frame port (the body's rotation lowers it at the contact point), a port of an
    /// admittance with several (a robot's joints, coupled through its inertia matrix). Where RK4
    /// resolves that spring the element may return the continuous held rates (fourth order
    /// while it holds) and then reports its stuck spring without τK.
    ///
    /// `couple`: where every port is a body that takes [stage laws](Self::stage_law)
    /// ([`Admittance::implicit_rate`]), the estimate ω̄² of the held spring's squared
    /// frequency on those bodies (a rigid body: its effective mass at the contact point, its
    /// rotation included). Where RK4 would not keep the held spring stable with its τK
    /// there, the element may couple implicitly: it reports its stage law, the bodies solve
    /// their stages with it, and the held state is stable at every step.
    fn held_frequency(&self, _method: Method, _step: f64, _omega2: Option<f64>, _couple: Option<f64>) {}
    /// Whether the element's stuck spring is explicit ([`StageSpring::implicit`] false: no
    /// τK) and yet it can be held implicitly with its bodies where RK4 would not keep that
    /// spring stable (a penalty joint): the stepper tells it
    /// [`held_frequency`](Self::held_frequency) too. `false` (the default).
    fn couples_explicit_spring(&self) -> bool {
        false
    }
    /// A joint between two rigid bodies: its springs on their relative rotation in the stuck
    /// state ([`HeldMoments`]). `None` (the default): none.
    fn held_moments(&self) -> Option<HeldMoments> {
        None
    }
    /// Called once by `Simulator::new`, after [`held_frequency`](Self::held_frequency), on an
    /// impedance with [`held_moments`](Self::held_moments) whose ports are rigid bodies:
    /// ω̄² of its bending spring and of its twist spring on the bodies' rotational inertias,
    /// K λ_max(P (I_a⁻¹ + I_b⁻¹) P) with P the projection normal to the axis and
    /// K zᵀ (I_a⁻¹ + I_b⁻¹) z (world inverse inertias about the centres of mass, a grounded
    /// port none), and whether those bodies take stage laws (`couple`): where RK4 would not
    /// keep a spring stable, the element may hold it implicitly with them
    /// ([`stage_law`](Self::stage_law)'s moments) and `check` may warn where it stays explicit.
    fn held_moment_frequencies(&self, _method: Method, _step: f64, _omega2: [f64; 2], _couple: bool) {}
    /// Whether this element couples implicitly with the masses on its ports
    /// ([`held_frequency`](Self::held_frequency)): the stepper then asks for its
    /// [`stage_law`](Self::stage_law) in every stage. `false` (the default).
    fn implicit_coupling(&self) -> bool {
        false
    }
    /// The law of the force this element puts on each port as the stage `tau` at `motion`,
    /// `y` evaluates it, as a function of that port's velocity change Δ within the stage
    /// (its position advancing τ Δ too) ([`StageLaw`]: a friction element, a plane contact). Written
    /// into `laws`, one per port: every port's (the buffer holds other laws before the call). Called only where
    /// [`implicit_coupling`](Self::implicit_coupling) is true.
    fn stage_law(&self, _motion: &[Motion], _y: &[f64], _tau: f64, _laws: &mut [StageLaw]) {}
    /// For a contact between two bodies: its contact point and normal at the port motions
    /// `motion` ([`ContactPoint`]), so that the stability analysis sees the bodies' rotational
    /// inertias there. `None` (the default): the stuck spring acts on the ports' translation.
    fn stuck_contact(&self, _motion: &[Motion]) -> Option<ContactPoint> {
        None
    }
    /// Whether [`stuck_contact`](Self::stuck_contact) gives a contact point (a contact
    /// between bodies): the analysis of bodies held by contacts looks at these alone, and at
    /// nothing when there are none. `false` (the default).
    fn is_body_contact(&self) -> bool {
        false
    }
    /// Facts, well-posedness and stability warnings for this element, given the effective inertia
    /// at each port (`None` for ground or unknown) and the solver step T.
    fn diagnose(&self, _port_inertia: &[Option<f64>], _step: f64) -> Vec<Diagnostic> {
        Vec::new()
    }
    /// A batch holding this component, if its type can be evaluated in typed batches
    /// ([`crate::batch`]); the schedule merges the impedances of the same kind into batches
    /// (of up to 1024, see [`crate::schedule`]). `None` (the default): one dynamic call per
    /// component and stage.
    fn batch(&self) -> Option<Box<dyn ImpedanceBatch>> {
        None
    }
    /// Join `open` if it is a batch of this component's kind, as
    /// `open.merge(&*self.batch())` would, without making a batch of one (the schedule
    /// groups every component so); false, and `open` unchanged, otherwise. The default
    /// makes that batch; a typed batch's components join it directly
    /// ([`PointImpedanceBatch::join`](crate::batch::PointImpedanceBatch::join),
    /// [`FrameImpedanceBatch::join`](crate::batch::FrameImpedanceBatch::join)).
    fn join_batch(&self, open: &mut dyn ImpedanceBatch) -> bool {
        self.batch().is_some_and(|b| open.merge(b.as_ref()))
    }
    /// Whether this component may ask the run to end early ([`stop_request`](Self::stop_request));
    /// asked once per run, so that the run loop polls only those that may.
    fn may_request_stop(&self) -> bool {
        false
    }
    /// A request to end the run (an imported FMU's terminateSimulation): the time from which
    /// on the component cannot go on and what to report. The run ends normally once the
    /// network reaches that time (its last row is then), or at the last row written when a
    /// step fails after the request.
    fn stop_request(&self) -> Option<(f64, String)> {
        None
    }
    /// Whether [`post_step`](Self::post_step) does anything (asked once, after `prepare`), so
    /// that the stepper calls it only for those.
    fn needs_post_step(&self) -> bool {
        false
    }
    /// Called on the element's state y(k+1) after each full step (or sub-step), like
    /// [`Admittance::post_step`]: e.g. model B zeroes its mass velocity while stuck under RK4.
    fn post_step(&self, _y: &mut [f64]) {}
    /// As [`Admittance::rewindable`].
    fn rewindable(&self) -> bool {
        !self.may_request_stop()
    }
    /// As [`Admittance::save_hidden`].
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    /// As [`Admittance::restore_hidden`].
    fn restore_hidden(&self, _bytes: &[u8]) -> Result<(), String> {
        Err("has no state outside the state vector to restore".into())
    }
    /// The switching function of a force law with a kink or jump (a penalty contact that
    /// opens or closes): a value whose sign changes where the law switches (> 0: in
    /// contact and pushing), at port motions `motion`, state `y` and time `t`. The stepper
    /// locates such a switch within a step and splits the step there (stepper/events.rs), so
    /// that no RK4 stage straddles the kink. `None` (the default): a smooth law.
    fn switching(&self, _motion: &[Motion], _y: &[f64], _t: f64) -> Option<f64> {
        None
    }
    /// The switching function of a friction element between holding and sliding (> 0:
    /// holding; e.g. F² − ‖B v + K e‖², in N²), where its force law has a kink: an I_fricK
    /// element run as its continuous law (B v + K e saturated at F: the force is continuous
    /// across the switch, its derivative is not). The stepper locates it within a step as it does
    /// [`switching`](Self::switching), so that no RK4 stage straddles a stick–slip switch.
    /// `None` (the default): no such kink, or a form whose switch moves with the stage
    /// step τ (the papers' (19), whose damping is B + τK).
    fn slip_switching(&self, _motion: &[Motion], _y: &[f64], _t: f64) -> Option<f64> {
        None
    }
    /// [`switching`](Self::switching) and [`slip_switching`](Self::slip_switching) at once,
    /// the same values: a component whose two share work (a contact's geometry) overrides it.
    fn switchings(&self, motion: &[Motion], y: &[f64], t: f64) -> [Option<f64>; 2] {
        [self.switching(motion, y, t), self.slip_switching(motion, y, t)]
    }
    /// [`switchings`](Self::switchings), and what the component keeps of that evaluation to
    /// bound how far the functions can move from there ([`switching_reach`](Self::switching_reach)):
    /// `None` (the default) where it gives no bound.
    fn switchings_kept(&self, motion: &[Motion], y: &[f64], t: f64) -> ([Option<f64>; 2], Option<SwitchKept>) {
        (self.switchings(motion, y, t), None)
    }
    /// A bound on how far each of the two switching functions of
    /// [`switchings`](Self::switchings) can be from their values where `kept` was taken
    /// ([`switchings_kept`](Self::switchings_kept)), its ports' motions having changed by at
    /// most `change` (one per port) since and its state now `y`: the stepper's check of the
    /// switches reads the kept values where they are farther from zero than this, without
    /// the geometry (stepper/events.rs). Infinite (the default): always evaluated.
    fn switching_reach(&self, _kept: &SwitchKept, _change: &[MotionChange], _y: &[f64]) -> [f64; 2] {
        [f64::INFINITY; 2]
    }
    /// How many switching functions of its state and port motions the impedance has where
    /// its force or rates jump ([`state_switchings`](Self::state_switchings); asked once by
    /// `Simulator::new`; 0 by default).
    fn state_switches(&self) -> usize {
        0
    }
    /// As [`Admittance::state_switchings`], of the impedance's state `y` and its ports'
    /// `motion` (model B: its mass's stop, and its breakaway): located within the RK4 step
    /// with the sides locked ([`lock_sides`](Self::lock_sides)), crossed in at most 1e-9 T,
    /// then [`on_switch`](Self::on_switch).
    fn state_switchings(&self, _motion: &[Motion], _y: &[f64], _g: &mut [f64]) {}
    /// As [`Admittance::lock_sides`], with the impedance's state `y` where the (sub-)step
    /// starts (`None`: unlock). A batch's copies of the component must see it (keep the
    /// sides in shared atomics, as [`Sides`]).
    fn lock_sides(&self, _y: Option<&[f64]>) {}
    /// As [`Admittance::on_switch`]: the state `y` right after it crossed state switch
    /// `which`.
    fn on_switch(&self, _which: usize, _y: &mut [f64]) {}
    /// The same switching function when it is affine in the motion of port 0, constant in
    /// time and state-free ([`AffineSwitch`]): the stepper then checks it straight from the
    /// state vector, without gathering a port motion. Must agree with
    /// [`switching`](Self::switching) bit for bit. `None` (the default): use `switching`.
    fn affine_switching(&self) -> Option<AffineSwitch> {
        None
    }
    /// The same stick–slip switching function as [`slip_switching`](Self::slip_switching)
    /// in closed form ([`AffineSlip`]: port 0 a point port, the element's deflection in
    /// states 0 and 1), so that the stepper reads it straight from the state vector. Must
    /// agree with `slip_switching` bit for bit. `None` (the default): use `slip_switching`;
    /// but a component with an [`affine_switching`](Self::affine_switching) is not asked for
    /// `slip_switching` (it is not evaluated at load): it gives its stick–slip switch here.
    fn affine_slip_switching(&self) -> Option<AffineSlip> {
        None
    }
}

/// A penalty contact's switching function in closed form (port 0 a point port): with the
/// penetration d = `level` − `axis`·p and its rate ḋ = −`axis`·v,
/// g = min(K·d, K·d + B·ḋ): positive while penetrated and pushing ((23a), the wall's law).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AffineSwitch {
    /// Unit normal n (pointing out of the obstacle).
    pub axis: Vector3<f64>,
    /// n·p at which the contact closes.
    pub level: f64,
    /// Penalty stiffness K.
    pub k: f64,
    /// Penalty damping B.
    pub b: f64,
}

impl AffineSwitch {
    /// g at position `p` and velocity `v` of port 0 (see the type's doc).
    #[inline]
    pub fn eval(&self, p: &Vector3<f64>, v: &Vector3<f64>) -> f64 {
        let kd = self.k * (self.level - self.axis.dot(p));
        kd.min(kd + self.b * -self.axis.dot(v))
    }
}

/// A friction contact's stick–slip switching function in closed form: the penalty law of
/// `normal` ([`AffineSwitch`]) gives f_n = max(0, K d + B ḋ) while d > 0 (else 0), the
/// tangential velocity is (t₁·v, t₂·v), the element's deflection e = (y₀, y₁), and
/// g = (μ f_n)² − ‖B (t₁·v, t₂·v) + K e‖²: > 0 while the element's continuous law holds
/// ((23b) at τ = 0), squared as `slip_switch` of the components (no square root).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AffineSlip {
    pub normal: AffineSwitch,
    pub t1: Vector3<f64>,
    pub t2: Vector3<f64>,
    /// Friction coefficient μ.
    pub mu: f64,
}

impl AffineSlip {
    /// g at position `p`, velocity `v` of port 0 and deflection `e` (see the type's doc).
    #[inline]
    pub fn eval(&self, p: &Vector3<f64>, v: &Vector3<f64>, e: [f64; 2]) -> f64 {
        let AffineSwitch { axis, level, k, b } = self.normal;
        let depth = level - axis.dot(p);
        let fn_ = if depth > 0.0 { (k * depth - b * axis.dot(v)).max(0.0) } else { 0.0 };
        let (x, y) = (b * self.t1.dot(v) + k * e[0], b * self.t2.dot(v) + k * e[1]);
        let limit = self.mu * fn_;
        limit * limit - (x * x + y * y)
    }
}

/// A signal block: a component used by its inputs and outputs only, such as a controller or
/// a plant model exported from another tool as a Co-Simulation FMU (`"role": "signal"`).
/// A block is built in its initialization mode; the engine sets its connected inputs from
/// their signals until its outputs settle, then [`start`](Block::start)s it. It is stepped at
/// every step's beginning, the communication point t_k = kT (framework/src/stepper/bus.rs):
/// its connected inputs are set from their signals at x(k), and it advances to t_k + T; its
/// outputs are held over the step.
pub trait Block: Send + Sync {
    /// The inputs a signal connection may set (`{"from": SIGNAL, "to": "block.input"}`).
    fn inputs(&self) -> Vec<SignalInfo>;
    /// The outputs, readable as signals `block.output` (one element each).
    fn outputs(&self) -> Vec<SignalInfo>;
    /// The name of the input or output that `name` is another name of (an FMI 3.0
    /// `<Alias>`), if it is one.
    fn alias_of(&self, _name: &str) -> Option<&str> {
        None
    }
    /// As [`Admittance::prepare`]: called once with the method and the step T.
    fn prepare(&self, _method: Method, _step: f64) -> Result<(), String> {
        Ok(())
    }
    /// Set input `u[j].0` to `u[j].1` for each connected input.
    fn set_inputs(&self, u: &[(usize, f64)]) -> Result<(), Fault>;
    /// Read every output into `y`.
    fn read(&self, y: &mut [f64]) -> Result<(), Fault>;
    /// Leave the initialization mode (the inputs set), then read the outputs into `y`.
    fn start(&self, y: &mut [f64]) -> Result<(), Fault>;
    /// Advance from `t` to `t + h` with the inputs held, then read the outputs into `y`.
    fn advance(&self, t: f64, h: f64, y: &mut [f64]) -> Result<(), Fault>;
    /// The inputs that output `output` declares to depend on directly (direct feedthrough):
    /// such an output is read again after the inputs are set at t_k, and a cycle of signal
    /// connections through such dependencies is an algebraic loop.
    fn feedthrough(&self, _output: usize) -> Vec<usize> {
        Vec::new()
    }
    /// Whether output `output` may depend directly on any of `inputs`: true unless the block
    /// declares that it depends on none of them (the conservative reading of a missing
    /// declaration), for the Gauss-Seidel order.
    fn may_feed_through(&self, _output: usize, _inputs: &[usize]) -> bool {
        true
    }
    /// Facts and warnings for `stiction check`.
    fn diagnose(&self) -> Vec<Diagnostic> {
        Vec::new()
    }
    /// Further signals an output column may read (an FMU's parameters, locals, unconnected
    /// inputs): read when the row is written, with [`observe`](Self::observe).
    fn observables(&self) -> Vec<SignalInfo> {
        Vec::new()
    }
    /// The current value of observable `which`.
    fn observe(&self, _which: usize) -> Result<f64, Fault> {
        Err(Fault::new("this block has no observables"))
    }
    /// Whether the block can advance by a step shorter than the solver's (an FMU's
    /// canHandleVariableCommunicationStepSize): a system of signal blocks alone then ends
    /// exactly at a stop time that is not a whole number of steps.
    fn variable_step(&self) -> bool {
        false
    }
    /// Whether the block can save its state and roll back to it
    /// ([`save_state`](Self::save_state), [`restore_state`](Self::restore_state)): an
    /// algebraic loop through blocks is solved by fixed-point iteration with rollback only
    /// when every block in it can.
    fn can_save_state(&self) -> bool {
        false
    }
    /// Save the block's state (one slot, overwritten by the next save).
    fn save_state(&self) -> Result<(), Fault> {
        Err(Fault::new("this block cannot save its state"))
    }
    /// Roll back to the state last saved.
    fn restore_state(&self) -> Result<(), Fault> {
        Err(Fault::new("this block cannot restore a state"))
    }
    /// A request to end the run (an FMU's terminateSimulation) made by the last
    /// [`advance`](Self::advance): the block's last successful time, whether it reached the
    /// end of that step (its outputs were then read), and what to report. The run ends
    /// normally after that step (stepper/bus.rs).
    fn stop_request(&self) -> Option<(f64, bool, String)> {
        None
    }
    /// As [`Admittance::save_hidden`]: the block's own state (an FMU's serialized state).
    fn save_hidden(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    /// As [`Admittance::restore_hidden`].
    fn restore_hidden(&self, _bytes: &[u8]) -> Result<(), String> {
        Err("has no state of its own to restore".into())
    }
}
