//! Issue 14: `stiction check` analyses the stuck state of every admittance with all the
//! springs attached to it (framework/src/stability.rs); `run` prints the warnings before
//! stepping; `--strict` refuses.

mod common;
use common::*;
use serde_json::{json, Value};

/// A 0.1 kg mass held between two `fric_k` elements (K = 1e5, B = 141.4 each) under a 1 N
/// push; each holds up to 0.6 N (together 1.2× the load), RK4.
fn pinch(step: f64, stop: f64) -> Value {
    let contact = json!({"type": "fric_k", "K": 1e5, "B": 141.4, "F": 0.6});
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": stop},
        "output": {"interval": 0.1, "signals": {"q": "m.q", "v": "m.v"}},
        "components": {"m": {"type": "mass", "mass": 0.1}, "left": contact, "right": contact,
                       "push": {"type": "force_source", "force": 1.0}},
        "connections": [{"from": "left.a", "to": "ground"}, {"from": "left.b", "to": "m"},
                        {"from": "right.a", "to": "ground"}, {"from": "right.b", "to": "m"},
                        {"from": "push.body", "to": "m"}]
    })
}

/// Run `stiction <args…> system.json` on `v`: (exit code, stdout, stderr).
fn cli_on(args: &[&str], v: &Value) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("system.json");
    std::fs::write(&path, serde_json::to_string(v).unwrap()).unwrap();
    let csv = dir.path().join("out.csv");
    let mut all: Vec<&str> = args.to_vec();
    all.push(path.to_str().unwrap());
    if args[0] == "run" {
        all.extend(["-o", csv.to_str().unwrap()]);
    }
    let out = cli(&all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The radius printed in a stuck-state warning.
fn radius_in(text: &str) -> f64 {
    let i = text.find("spectral radius ").expect("a radius") + "spectral radius ".len();
    text[i..].split_whitespace().next().unwrap().parse().unwrap()
}

/// The pinch of the issue: at T = 2e-3 the two elements' K add and the stuck state is
/// unstable (the mass creeps); `check` and `run` say so, naming the mass, both elements, the
/// radius and the largest stable step (1.97e-3 s: RK4 on the held elements' continuous law,
/// B = 141.4 ≥ T K/2; under the paper's τK form of (19b) it was 8.1e-4 s). At T = 5e-4 it is
/// stable and runs silently.
#[test]
fn two_element_pinch_is_warned_about_and_its_stable_variant_runs_silently() {
    let unstable = pinch(2e-3, 20.0);
    let (code, out, _) = cli_on(&["check"], &unstable);
    eprintln!("{out}");
    assert_eq!(code, 0);
    let line = out.lines().find(|l| l.contains("stuck-state stability")).expect("a stuck-state warning");
    assert!(line.contains("warning: m:") && line.contains("left") && line.contains("right"), "{line}");
    let rho = radius_in(line);
    assert!(rho > 1.0, "{line}");
    let limit: f64 = line.split("stable for T < ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(limit < 2e-3 && limit > 1.5e-3, "largest stable step {limit}");
    // The physics agrees: the held mass creeps (friction saturates in the growing vibration).
    let rec = run_value(&unstable);
    let q = col(&rec, "q");
    let creep = q[q.len() - 1].abs();
    eprintln!("pinch, rk4 T = 2e-3: radius {rho}, largest stable T {limit:.4e} s; creeps {creep:.3e} m in 20 s");
    // 20 × the static deflection 5e-6 m (1.8e-4 m; 5.0e-3 m at T = 2.2e-3).
    assert!(creep > 1e-4, "expected creep, got {creep}");
    // `run` prints the warning on stderr before stepping; --strict refuses (2); check --strict too.
    let (code, _, err) = cli_on(&["run"], &unstable);
    assert!(code == 0 && err.contains("warning: m: stuck-state stability"), "{err}");
    let (code, _, err) = cli_on(&["run", "--strict"], &unstable);
    assert!(code == 2 && err.contains("--strict"), "{code}: {err}");
    let (code, _, _) = cli_on(&["check", "--strict"], &unstable);
    assert_ne!(code, 0);

    // Stable variant: a step below the printed limit.
    let stable = pinch(5e-4, 20.0);
    let (code, out, _) = cli_on(&["check", "--strict"], &stable);
    assert!(code == 0 && out.contains("no warnings"), "{out}");
    let (code, _, err) = cli_on(&["run", "--strict"], &stable);
    assert!(code == 0 && !err.contains("warning"), "{err}");
    let rec = run_value(&stable);
    let q = col(&rec, "q");
    // Held at the static deflection of the two springs, 1 N / 2e5 N/m = 5e-6 m (to 2 %).
    let last = q[q.len() - 1];
    eprintln!("pinch, rk4 T = 5e-4: q(20 s) = {last:.4e} m (static 5e-6 m)");
    assert!((last - 5e-6).abs() < 1e-7, "{last}");
}

/// The unstable examples of docs/how-to/choose-a-step.md are caught (and their stable counterparts are not):
/// Fig. 13's A + spring and Fig. 14's C + mass at K = 7.5e5 under Euler, T = 1e-3.
#[test]
fn readme_unstable_examples_are_caught() {
    for (file, unstable) in [
        ("model_b_alternative_fig13.json", true),
        ("model_d_alternative_fig14.json", true),
        ("model_b_fig13.json", false),
        ("model_d_fig14.json", false),
        ("two_mass_model_c_fig11.json", false),
        ("rolling_sphere.json", false),
        ("two_link_fricK.json", false),
    ] {
        let out = cli(&["check", example(file).to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        let warned = text.lines().any(|l| l.contains("warning:") && l.contains("stuck-state stability"));
        eprintln!("{file}: stuck-state warning {warned}");
        assert_eq!(warned, unstable, "{file}: {text}");
        let strict = cli(&["check", "--strict", example(file).to_str().unwrap()]);
        assert_eq!(strict.status.success(), !text.contains("warning:"), "{file}");
    }
}

/// `run` shows what `check` found before stepping: the ill-posed leadscrew.
#[test]
fn run_prints_check_warnings_on_stderr() {
    let csv = tempfile::tempdir().unwrap();
    let out_csv = csv.path().join("x.csv");
    let path = example("leadscrew_jam.json");
    let out = cli(&["run", path.to_str().unwrap(), "-o", out_csv.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && err.contains("warning: screw:") && err.contains("ill-posed"), "{err}");
    let strict = cli(&["run", "--strict", path.to_str().unwrap(), "-o", out_csv.to_str().unwrap()]);
    assert_eq!(strict.status.code(), Some(2));
    let (code, err) = run_json("run", &pinch(5e-4, 0.1));
    assert!(code == 0 && err.is_empty(), "{err}");
}

/// Issue 33: `--quiet` silences progress and the summary, not the physics: `run --quiet` on
/// the ill-posed leadscrew prints every warning `check` prints, and nothing else;
/// `--no-warnings` prints nothing, and with `--strict` still refuses the system.
#[test]
fn quiet_keeps_the_warnings_and_no_warnings_silences_them() {
    let dir = tempfile::tempdir().unwrap();
    let out_csv = dir.path().join("x.csv");
    let path = example("leadscrew_jam.json");
    let (p, o) = (path.to_str().unwrap(), out_csv.to_str().unwrap());
    let checked = cli(&["check", p]);
    let check_text = String::from_utf8_lossy(&checked.stdout);
    let expected: Vec<&str> = check_text.lines().filter_map(|l| l.trim_start().strip_prefix("warning: ")).collect();
    assert_eq!(expected.len(), 2, "{check_text}");
    let quiet = cli(&["run", p, "-o", o, "--quiet"]);
    let err = String::from_utf8_lossy(&quiet.stderr);
    let printed: Vec<&str> = err.lines().filter_map(|l| l.strip_prefix("warning: ")).collect();
    assert!(quiet.status.success(), "{err}");
    assert_eq!(printed, expected, "{err}");
    assert_eq!(err.lines().count(), 2, "only the warnings: no summary: {err}");
    let loud = cli(&["run", p, "-o", o]);
    let loud_err = String::from_utf8_lossy(&loud.stderr);
    assert!(loud_err.lines().count() > 2 && loud_err.contains(" rows -> "), "the summary without --quiet: {loud_err}");
    // The summary says how many switches the run located (and what that cost): a located
    // switch re-steps the whole network.
    let ramp = example("ramp_block.json");
    let located = cli(&["run", ramp.to_str().unwrap(), "-o", o, "--no-warnings"]);
    let located_err = String::from_utf8_lossy(&located.stderr);
    assert!(located_err.contains("; 1 switch located (1 trial sub-steps); "), "{located_err}");
    assert!(!loud_err.contains("located"), "no switch in the lead screw's run: {loud_err}");
    let silent = cli(&["run", p, "-o", o, "--quiet", "--no-warnings"]);
    assert!(silent.status.success() && silent.stderr.is_empty(), "{}", String::from_utf8_lossy(&silent.stderr));
    let strict = cli(&["run", p, "-o", o, "--no-warnings", "--strict"]);
    let strict_err = String::from_utf8_lossy(&strict.stderr);
    assert_eq!(strict.status.code(), Some(2), "{strict_err}");
    assert!(strict_err.contains("2 warning(s)") && !strict_err.contains("warning: screw"), "{strict_err}");
    let help = String::from_utf8_lossy(&cli(&["run", "--help"]).stdout).into_owned();
    assert!(help.contains("--no-warnings") && help.contains("warnings are still printed"), "{help}");
}

/// Model B under RK4 integrates its sliding mass explicitly on its own spring where that
/// step map is stable (Fig. 13's block with K = 1e8, B = 2e4: stable below 2.785e-4 s) and
/// takes (36)'s implicit step in every stage where it is not (radius 291 at T = 1e-3, which
/// diverged before): `check` says so (an info), and the run is stable both ways.
#[test]
fn model_b_under_rk4_is_explicit_where_stable_and_implicit_where_not() {
    let system = |step: f64, k: f64, b: f64| {
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(example("model_b_fig13.json")).unwrap()).unwrap();
        v["solver"] = json!({"method": "rk4", "step": step, "stop_time": 1.0});
        v["output"]["interval"] = json!(1e-3);
        v["components"]["block"]["K"] = json!(k);
        v["components"]["block"]["B"] = json!(b);
        v
    };
    let (code, out, _) = cli_on(&["check"], &system(1e-3, 1e8, 2e4));
    let line = out.lines().find(|l| l.contains("model B under rk4")).unwrap_or_else(|| panic!("{out}"));
    assert!(code == 0 && line.contains("info:") && line.contains("implicit step") && !out.contains("warning:"), "{out}");
    let rec = run_value(&system(1e-3, 1e8, 2e4));
    let h = col(&rec, "h");
    assert!(h.iter().all(|h| h.is_finite()) && (h[h.len() - 1] - 10.1).abs() < 0.03, "stable: h = {}", h[h.len() - 1]);
    let (code, out, _) = cli_on(&["check"], &system(2e-4, 1e8, 2e4));
    assert!(code == 0 && !out.contains("model B"), "{out}");
    let rec = run_value(&system(2e-4, 1e8, 2e4));
    let h = col(&rec, "h");
    assert!((h[h.len() - 1] - 10.1).abs() < 1e-6, "settles at 10.1 N: {}", h[h.len() - 1]);
    // Fig. 13's own stiffest case (K = 7.5e5) is stable under RK4 at T = 1e-3: no warning.
    let (_, out, _) = cli_on(&["check"], &system(1e-3, 7.5e5, 2.0 * 7.5e5f64.sqrt()));
    assert!(!out.contains("model B"), "{out}");
}

/// The bristle models in the stuck-state analysis (issue 14): presliding, LuGre (12) and Dahl
/// (11) are the spring–damper f = σ0 z + (σ1 + σ2) ż with ż = v. A 0.1 kg mass between a
/// LuGre (σ0 = 1e5, σ1 = 0) and a Dahl (K = 1e5) element: ΣK = 2e5, ω = 1414 rad/s, so RK4's
/// undamped limit ωT = 2√2 gives the largest stable T = 2√2/ω = 2.0e-3 s; T = 3e-3 is warned.
#[test]
fn lugre_and_dahl_are_in_the_stuck_state_analysis() {
    let system = |step: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 0.1},
            "components": {"m": {"type": "mass", "mass": 0.1},
                           "l": {"type": "lugre", "sigma0": 1e5, "sigma1": 0.0, "Fc": 0.6},
                           "d": {"type": "dahl", "K": 1e5, "F": 0.6}},
            "connections": [{"from": "l.a", "to": "ground"}, {"from": "l.b", "to": "m"},
                            {"from": "d.a", "to": "ground"}, {"from": "d.b", "to": "m"}]
        })
    };
    let (code, out, _) = cli_on(&["check"], &system(3e-3));
    assert_eq!(code, 0);
    let line = out.lines().find(|l| l.contains("stuck-state stability")).expect("a stuck-state warning");
    assert!(line.contains("warning: m:") && line.contains("l (K = 100000") && line.contains("d (K = 100000"), "{line}");
    let limit: f64 = line.split("stable for T < ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    let expected = 2.0 * 2f64.sqrt() / (2e5f64 / 0.1).sqrt();
    eprintln!("lugre + dahl on 0.1 kg: largest stable T {limit:.4e} s (2√2/ω = {expected:.4e} s)");
    assert!((limit / expected - 1.0).abs() < 1e-3, "{limit} vs {expected}");
    let (code, _, _) = cli_on(&["check", "--strict"], &system(1.5e-3));
    assert_eq!(code, 0, "T = 1.5e-3 is stable");
}

/// Coupled robot joints (issue 14): the two-link arm of Simulation II (`two_link_fricK.json`,
/// K = 5000 on each joint) analysed with its full inertia matrix H(θ). With friction elements
/// in the paper's form (here `kikuuwe_c` with a Stribeck law, Fc = 0.5, Fs = 0.55 N·m, whose
/// Φ_Z keeps the paper's τK, run with `"hold": "explicit"`): each joint alone (H_ii) looks stable up to T = 3e-3; coupled, the step map is
/// unstable above 1.43e-3 s, and the physics agrees: held by 0.45 N·m < Fc = 0.5 N·m for 1.5 s,
/// the arm stays at the static deflection τ/K = 9e-5 rad at T = 1.4e-3 and creeps (friction
/// saturated) at T = 2e-3. The example's own `fric_k`s (Coulomb) are held implicitly with the
/// joints at 2e-3 (issue 43): no warning, the analysis with H + τ diag(B + τK) in the stage
/// stable, and the arm holds.
#[test]
fn coupled_robot_joints_are_analysed_with_the_inertia_matrix() {
    let arm = |step: f64, viscous: bool| {
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(example("two_link_fricK.json")).unwrap()).unwrap();
        v["solver"]["step"] = json!(step);
        v["solver"]["stop_time"] = json!(1.5);
        v["output"]["interval"] = json!(step);
        if viscous {
            v["solver"]["hold"] = json!("explicit");
            for f in ["fric0", "fric1"] {
                v["components"][f] = json!({"type": "kikuuwe_c", "K": 5000, "B": 1, "law": "stribeck", "Fc": 0.5, "Fs": 0.55, "vs": 0.01, "exponent": 1.0});
            }
        }
        v
    };
    let (code, out, _) = cli_on(&["check"], &arm(2e-3, true));
    assert_eq!(code, 0);
    let line = out.lines().find(|l| l.contains("stuck-state stability")).expect("a stuck-state warning");
    assert!(line.contains("warning: arm:") && line.contains("coupled through the inertia matrix"), "{line}");
    assert!(line.contains("fric0 on port 0") && line.contains("fric1 on port 1"), "{line}");
    let limit: f64 = line.split("stable for T < ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    assert!(limit > 1.4e-3 && limit < 1.5e-3, "largest stable step {limit}");
    // (Model C's rule (63), the paper's Euler rule, is not asked under RK4.)
    let (_, out, _) = cli_on(&["check"], &arm(1.4e-3, true));
    assert!(!out.lines().any(|l| l.contains("warning: arm: stuck-state")), "T = 1.4e-3 is stable: {out}");
    let held = |step: f64, viscous: bool| col(&run_value(&arm(step, viscous)), "theta1").iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (stable, unstable) = (held(1.4e-3, true), held(2e-3, true));
    eprintln!("two-link arm held: max |θ1| {stable:.3e} rad at T = 1.4e-3, {unstable:.3e} rad at T = 2e-3 (limit {limit:.4e} s)");
    assert!(stable < 1e-4 && unstable > 1e-3, "{stable}, {unstable}");
    // The example's fric_k: held implicitly with the joints at 2e-3.
    let (code, out, _) = cli_on(&["check", "--strict"], &arm(2e-3, false));
    assert!(code == 0 && out.contains("info: fric1:") && out.contains("held implicitly"), "{out}");
    let coupled = held(2e-3, false);
    eprintln!("  fric_k held implicitly at T = 2e-3: max |θ1| {coupled:.3e} rad");
    assert!(coupled < 1e-4, "{coupled}");
}

/// Issue 35: the pair analysis sees the rotation of a rigid body through a contact at a
/// point of it. A 1 kg point pressed against a plane through the rim of a 1 kg body
/// (inertia diag(0.02, 0.05, 0.04) kg·m², plane normal y at r = (0.4, 0, 0) from its centre
/// of mass): along the normal the body's effective mass is 1/(1/m + (r × n)ᵀ I⁻¹ (r × n)) =
/// 1/(1 + 0.16/0.04) = 0.2 kg (tangentially 1/(1 + 0.16/0.05) ≥ 0.238 kg), in series with the
/// point's 1 kg: 1/6 kg. The relative mode is the mass–spring–damper of that reduced mass
/// (undamped it would be stable under RK4 up to ωT = 2√2 with ω = √(6K), a step 1/√3 of the
/// translational limit 2√2/√(2K)). With the body replaced by a 1 kg point, nothing changes
/// from the translational model. (Run with `"hold": "explicit"`: a contact this unstable is
/// otherwise held implicitly with the bodies, and its analysis is that of the coupled stage.)
#[test]
fn pair_analysis_sees_the_rotation_of_a_body_through_a_contact_at_its_rim() {
    use stiction::framework::stability::{analyse_pairs, Direction, PairModel, PortModel};
    use stiction::framework::{Method, Tableau};
    let (k, step): (f64, f64) = (1e4, 0.015);
    let sys = |body: Value, b: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 0.1, "hold": "explicit"},
            "components": {
                "p": {"type": "point_mass", "mass": 1.0, "init": {"p": [0.4, 0, 0]}},
                "body": body,
                "c": {"type": "body_contact", "K": k, "B": b, "mu": 0.5, "domain_b": "frame",
                      "plane": {"point": [0.4, 0, 0], "normal": [0, 1, 0]}}
            },
            "connections": [{"from": "c.a", "to": "p"}, {"from": "c.b", "to": "body"}]
        })
    };
    let rod = json!({"type": "rigid_body", "mass": 1.0, "inertia": [0.02, 0.05, 0.04]});
    let pairs = |v: &Value| {
        let text = v.to_string();
        let sys = stiction::framework::system::System::from_str(
            &text,
            std::path::Path::new("pair.json"),
            std::path::Path::new("."),
            &stiction::registry(),
        )
        .unwrap();
        let (sim, _) = sys.into_simulator(1).unwrap();
        analyse_pairs(sim.schedule(), sim.state(), Method::Rk4, step)
    };
    // B = 100 ≥ T K/2 = 75: the held contact is its continuous spring–damper (no τK).
    let b = 100.0;
    let found = pairs(&sys(rod.clone(), b));
    assert_eq!(found.len(), 1);
    let f = &found[0];
    assert_eq!(f.contact, Some(("c".to_string(), Direction::Normal)), "{f:?}");
    // Effective masses: the point 1 kg, the body 0.2 kg at its rim along y.
    let (ma, mb) =
        if f.a.0 == "p" { (f.model.inertia[0], f.model.inertia[1]) } else { (f.model.inertia[1], f.model.inertia[0]) };
    assert!((ma - 1.0).abs() < 1e-12 && (mb - 0.2).abs() < 1e-12, "{:?}", f.model.inertia);
    // The limit of one mass–spring–damper of the reduced mass 1/6 kg: the relative mode
    // along the normal (the common mode is free: λ = 1).
    let single = PortModel { inertia: 1.0 / 6.0, k, b, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false };
    let limit = single.largest_stable_step(&Tableau::RK4, step).unwrap();
    let t = f.largest_stable_step.unwrap();
    assert!((t / limit - 1.0).abs() < 1e-6, "{t} vs {limit}");
    assert!(f.radius > 1.0 && limit < step);
    // The translational model alone is stable at this step (ω T = √(2K) T = 2.12 < 2.83).
    let translational = PairModel {
        inertia: [1.0, 1.0],
        own: [PortModel { inertia: 1.0, k: 0.0, b: 0.0, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false }; 2],
        joint: PortModel { inertia: 1.0, k, b, k_implicit: 0.0, k_coupled: 0.0, b_coupled: 0.0, implicit_position: false },
        grouped: false,
    };
    assert!(translational.radius(&Tableau::RK4, step).unwrap() <= 1.0 + 1e-9);

    // Pure translation (the body a 1 kg point): the translational model, stable, unchanged.
    let point = json!({"type": "point_mass", "mass": 1.0});
    let mut v = sys(point, b);
    v["components"]["c"]["domain_b"] = json!("point3");
    let f = &pairs(&v)[0];
    assert_eq!(f.contact, None);
    assert_eq!(f.model, translational);
    assert_eq!(f.radius, translational.radius(&Tableau::RK4, step).unwrap());
    assert_eq!(f.largest_stable_step, Some(step));

    // `check` analyses the point and the body together (issue 43: all nine degrees of
    // freedom, the contact's normal and tangential spring): with a spring–damper
    // proportional to one matrix the modes part, and the stiffest is that relative mode.
    let (code, out, _) = cli_on(&["check"], &sys(rod, b));
    assert_eq!(code, 0, "{out}");
    let line = out.lines().find(|l| l.contains("stuck-state stability of the bodies together")).expect(&out);
    assert!(line.contains("warning: p, body held by 1 contact(s) (c)") && line.contains("9 degrees of freedom"), "{line}");
    let reported: f64 = line.split("stable for T < ").nth(1).unwrap().trim_end_matches(" s").parse().unwrap();
    assert!((reported / limit - 1.0).abs() < 1e-3, "{reported} vs {limit}");
}
