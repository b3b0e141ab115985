//! Issue 43, item 3: a held I_fricK element stiffer than RK4 can integrate explicitly is
//! held implicitly and is stable at every step (framework/src/stepper/coupling.rs).
//!
//! `fric_k` (K = 1e7 N/m, B = 1 N·s/m) on a 1 kg mass at T = 1e-3 s: ω T = 3.16, past RK4's
//! 2.83, and its paper form's τK per stage makes it worse (the held step map's spectral
//! radius 6.6). Before, the mass launched into it reached x = −108 m by 0.5 s. Now the mass
//! solves its stage with the element's law (framework/src/stage_law.rs): while it holds,
//! v̇ = f/(M + τ(B + τK)), and it decides stick or slip at its new velocity.

mod common;
use common::*;
use serde_json::{json, Value};
use stiction::framework::Recorder;
use stiction::framework::component::Diagnostic;

const K: f64 = 1e7;
const F: f64 = 5.0;

/// A 1 kg `mass` pushed by `push` N and launched at `v0` onto `element` (K = 1e7, B = 1,
/// F = 5) to the ground, RK4 at `step` for 1 s. Signals q, v, e.
fn launched(element: &str, step: f64, push: f64, v0: f64) -> Value {
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
        "output": {"signals": {"q": "m.q", "v": "m.v", "e": "f.e"}},
        "components": {"m": {"type": "mass", "mass": 1.0, "force": push, "init": {"v": v0}},
                       "f": {"type": element, "K": K, "B": 1.0, "F": F}},
        "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}]
    })
}

/// The warnings `stiction check` gives for `v`.
fn warnings(v: &Value) -> Vec<String> {
    let (sim, plan) = build_value(v);
    stiction::framework::system::diagnostics(&sim, &plan)
        .into_iter()
        .filter_map(|d| match d {
            Diagnostic::Warning(w) => Some(w),
            Diagnostic::Info(_) => None,
        })
        .collect()
}

/// Launched at 1 m/s against F = 5 N with a push of 3 N: it decelerates at 2 m/s², stops at
/// t = 0.5 s after 0.25 m and then holds the push on its spring (e = 3/K) with its position
/// constant bit for bit. The energy ½ M v² + ½ K e² − 3 q never grows. `check` says stable.
#[test]
fn a_stiff_held_element_on_a_mass_is_stable_and_exact_under_rk4() {
    for element in ["fric_k", "kikuuwe_c"] {
        let v = launched(element, 1e-3, 3.0, 1.0);
        assert_eq!(warnings(&v), Vec::<String>::new(), "{element}");
        let rec = run_value(&v);
        let (q, u, e) = (col(&rec, "q"), col(&rec, "v"), col(&rec, "e"));
        assert!(q.iter().chain(&u).chain(&e).all(|z| z.is_finite()), "{element}: not finite");
        // The stop: v ≤ 0 first within a step of 0.5 s.
        let stop = u.iter().position(|&v| v <= 1e-12).map(|i| rec.time[i]).expect("it stops");
        assert!((stop - 0.5).abs() <= 5e-3, "{element}: stops at {stop}");
        // Held from 0.55 s: the position constant bit for bit, the spring at the push.
        let from = rec.time.iter().position(|&t| t >= 0.55).expect("rows");
        assert!(q[from..].iter().all(|&x| x == q[from]), "{element}: creeps");
        assert!((q[from] - 0.25).abs() < 1e-6, "{element}: rests at {}", q[from]);
        assert!((e[from] - 3.0 / K).abs() < 1e-12, "{element}: e = {}", e[from]);
        assert!(u[from..].iter().all(|v| v.abs() < 1e-15), "{element}: v = {}", u[from]);
        let energy: Vec<f64> =
            (0..q.len()).map(|i| 0.5 * u[i] * u[i] + 0.5 * K * e[i] * e[i] - 3.0 * q[i]).collect();
        // RK4's stages are not dissipative term by term: at the stop a step may round up by
        // a few 1e-10 of the energy; before, this run diverged.
        let grows = energy.windows(2).map(|w| w[1] - w[0]).fold(f64::MIN, f64::max);
        assert!(grows <= 1e-9 * energy[0], "{element}: the energy grows by {grows:e} in a step");
        eprintln!("{element} (K T²/M = 10, rk4): stops at {stop} s, rests at q = {:.12} m, e = {:e}", q[from], e[from]);
    }
}

/// The same launch at T = 1e-3 and 5e-4 and stiffer still (K T²/M up to 1e5 at K = 1e11):
/// every run stable, stopping at 0.25 m within 1e-6 m and held. (At T = 2.5e-4, K = 1e7,
/// RK4 resolves the held spring with the margin of twice the step and the element returns
/// its continuous held law: the mass then rings on K with its own B = 1, ζ = 1.6e-4, as it
/// physically does; tests/rk4_order.rs.)
#[test]
fn a_stiff_held_element_is_stable_at_every_step() {
    for (step, k) in [(1e-3, K), (5e-4, K), (1e-3, 1e9), (1e-3, 1e11)] {
        let mut v = launched("fric_k", step, 3.0, 1.0);
        v["components"]["f"]["K"] = json!(k);
        let rec = run_value(&v);
        let q = col(&rec, "q");
        let end = *q.last().expect("rows");
        eprintln!("fric_k K = {k:e}, T = {step:e}: rests at {end:.12} m");
        assert!((end - 0.25).abs() < 1e-6 && q.iter().all(|x| x.is_finite()), "K = {k}, T = {step}: {end}");
        let from = rec.time.iter().position(|&t| t >= 0.6).expect("rows");
        assert!(q[from..].iter().all(|&x| x == end), "K = {k}, T = {step}: creeps");
    }
}

/// In 3-D: a 1 kg `point_mass` on a `fric_k` point3 (K = 1e7, F = 5 N), launched along x
/// at 1 m/s and pushed along y by 2 N: it slides on a curved path, stops, and holds the push
/// (|e| = 2/K, along y) with its position constant bit for bit. Two masses joined by a
/// stiff element alone: it slides, then holds them together, and `check` agrees; and a chain
/// with two stiff elements on one mass (ground–a–b), pushed at its end.
#[test]
fn stiff_held_elements_in_three_dimensions_and_between_masses_are_stable() {
    let mass = |v0: [f64; 3]| json!({"type": "point_mass", "mass": 1.0, "init": {"v": v0}});
    let element = json!({"type": "fric_k", "domain": "point3", "K": K, "B": 1.0, "F": F});
    let push = json!({"type": "force_source", "domain": "point3", "force": [0, 2.0, 0]});
    let one = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"x": "m.p[0]", "y": "m.p[1]", "ey": "f.e[1]", "ex": "f.e[0]"}},
        "components": {"m": mass([1.0, 0.0, 0.0]), "f": element, "push": push},
        "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}, {"from": "push.body", "to": "m"}]
    });
    assert_eq!(warnings(&one), Vec::<String>::new());
    let rec = run_value(&one);
    let (x, y, ex, ey) = (col(&rec, "x"), col(&rec, "y"), col(&rec, "ex"), col(&rec, "ey"));
    let from = rec.time.iter().position(|&t| t >= 0.5).expect("rows");
    assert!(x[from..].iter().all(|&z| z == x[from]) && y[from..].iter().all(|&z| z == y[from]), "creeps");
    assert!(x[from] > 0.05 && x[from] < 0.11 && y[from] > 0.0, "rests at ({}, {})", x[from], y[from]);
    assert!((ey[from] - 2.0 / K).abs() < 1e-12 && ex[from].abs() < 1e-12, "e = ({}, {})", ex[from], ey[from]);

    // Two masses joined by a stiff element alone, b launched at 0.5 m/s: ab slides until
    // both move at 0.25 m/s (momentum), then holds them together with e constant.
    let two = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"x1": "a.p[0]", "x2": "b.p[0]", "v1": "a.v[0]", "e": "ab.e[0]"}},
        "components": {"a": mass([0.0; 3]), "b": mass([0.5, 0.0, 0.0]), "ab": element.clone()},
        "connections": [{"from": "ab.a", "to": "a"}, {"from": "ab.b", "to": "b"}]
    });
    assert_eq!(warnings(&two), Vec::<String>::new());
    let rec = run_value(&two);
    let (x1, x2, v1, e) = (col(&rec, "x1"), col(&rec, "x2"), col(&rec, "v1"), col(&rec, "e"));
    assert!(x1.iter().chain(&x2).all(|z| z.is_finite()), "diverges");
    let from = rec.time.iter().position(|&t| t >= 0.2).expect("rows");
    // Held: e keeps within rounding of the moving masses' velocities (±1.7e-20 m, no drift).
    assert!(e[from..].iter().all(|&z| (z - e[from]).abs() < 1e-18), "ab slips after it held");
    assert!((v1[from] - 0.25).abs() < 1e-12, "a moves at {}", v1[from]);
    let gap = |i: usize| x2[i] - x1[i];
    assert!((from..x1.len()).all(|i| (gap(i) - gap(from)).abs() < 1e-12), "the gap changes");

    // Two stiff elements on one mass, b launched at 0.5 m/s: a held to the ground above
    // the pull ab can put on it (10 N against 5 N). The mass solves its stage with both laws
    // (Newton's method): stable, `check` agrees, and once b stopped both hold.
    let mut strong = element.clone();
    strong["F"] = json!(10.0);
    let chain = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"x1": "a.p[0]", "x2": "b.p[0]", "e1": "ground_a.e[0]", "e2": "ab.e[0]"}},
        "components": {"a": mass([0.0; 3]), "b": mass([0.5, 0.0, 0.0]), "ground_a": strong, "ab": element,
                       "push": {"type": "force_source", "domain": "point3", "force": [3.0, 0, 0]}},
        "connections": [{"from": "ground_a.a", "to": "ground"}, {"from": "ground_a.b", "to": "a"},
                        {"from": "ab.a", "to": "a"}, {"from": "ab.b", "to": "b"}, {"from": "push.body", "to": "b"}]
    });
    assert_eq!(warnings(&chain), Vec::<String>::new());
    let rec = run_value(&chain);
    let (x1, x2, e1) = (col(&rec, "x1"), col(&rec, "x2"), col(&rec, "e1"));
    assert!(x1.iter().chain(&x2).all(|z| z.is_finite() && z.abs() < 1.0), "diverges");
    let from = rec.time.iter().position(|&t| t >= 0.5).expect("rows");
    assert!(x1[from..].iter().all(|&z| z == x1[from]) && x2[from..].iter().all(|&z| z == x2[from]), "creeps");
    // At rest the push (3 N) goes through ab into a and through ground_a to the ground.
    assert!((e1[from] - 3.0 / K).abs() < 1e-12, "ground_a holds {} N", e1[from] * K);
}

/// Under Euler nothing couples: the paper's model C + mass at the same stiffness is the
/// alternative of Fig. 14, which rule (63) says cannot hold the mass, and `check` says so.
#[test]
fn euler_keeps_the_papers_model_c_with_its_warning() {
    let mut v = launched("kikuuwe_c", 1e-3, 3.0, 1.0);
    v["solver"]["method"] = json!("euler");
    let w = warnings(&v);
    assert!(w.iter().any(|w| w.contains("rule (63)")), "{w:?}");
}

/// Rule (63) is the paper's, for its Euler algorithm; under RK4 the stuck-state analysis of
/// the stage form decides. A 1 kg mass launched at 0.2 m/s and pushed by 2 N against a
/// grounded `kikuuwe_c` (K = 1e8, B = 1, F = 3 N): at T = 1.25e-4 and 1.4e-4 (ω T = 1.25,
/// 1.4: explicit, RK4 resolves the held spring with its τK) it stops and holds with q
/// constant bit for bit over the last half second, and `check` says nothing (the previous
/// landing warned "rule (63) fails: static friction will oscillate or diverge" there); under
/// Euler at the same steps the rule still warns.
#[test]
fn rule_63_is_the_euler_rule_and_rk4_holds_where_the_stuck_state_analysis_says() {
    let system = |method: &str, step: f64| {
        json!({
            "solver": {"method": method, "step": step, "stop_time": 1.0},
            "output": {"signals": {"q": "m.q", "v": "m.v"}},
            "components": {"m": {"type": "mass", "mass": 1.0, "init": {"v": 0.2}},
                           "push": {"type": "force_source", "force": 2.0},
                           "h": {"type": "kikuuwe_c", "K": 1e8, "B": 1.0, "F": 3.0}},
            "connections": [{"from": "push.body", "to": "m"}, {"from": "h.a", "to": "ground"}, {"from": "h.b", "to": "m"}]
        })
    };
    for step in [1.25e-4, 1.4e-4] {
        let held = system("rk4", step);
        assert!(warnings(&held).iter().all(|w| !w.contains("(63)") && !w.contains("stuck-state")), "{:?}", warnings(&held));
        let rec = run_value(&held);
        let q = col(&rec, "q");
        let from = rec.time.iter().position(|&t| t >= 0.5).expect("rows");
        assert!(q[from..].iter().all(|&x| x == q[from]), "T = {step}: q moves while held");
        assert!(q[from] > 0.0199 && q[from] < 0.0201, "stops after 0.02 m: {}", q[from]);
        assert!(warnings(&system("euler", step)).iter().any(|w| w.contains("rule (63)")), "Euler at {step}");
    }
}

/// A 1 kg `point_mass` resting on a stiff `plane_contact` (K = 1e8, B = 1, μ = 0.5; ω T = 10
/// at T = 1e-3) at its static depth, launched along x at `v0` m/s. Signals x, y, z, vx.
fn on_plane(k: f64, v0: [f64; 3], z0: f64, plane: Value) -> Value {
    let mut contact = json!({"type": "plane_contact", "K": k, "B": 1.0, "mu": 0.5});
    if let (Some(c), Some(p)) = (contact.as_object_mut(), plane.as_object()) {
        c.extend(p.clone());
    }
    json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"x": "m.p[0]", "y": "m.p[1]", "z": "m.p[2]", "vx": "m.v[0]"}},
        "components": {"m": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -9.81], "init": {"p": [0, 0, z0], "v": v0}},
                       "c": contact},
        "connections": [{"from": "c.body", "to": "m"}]
    })
}

/// The stiff plane contact is held implicitly with the point mass, its normal force too
/// (max(0, K δ − (B + τK) v_n)): launched at 1 m/s it slides 1/(2 μ g) = 0.1019368 m (to
/// 1.3e-6 m: the stop is first order in T here, the τK of (19b)) and
/// holds, its position and its depth m g/K constant bit for bit. In the paper's form the
/// same run never stopped (x still moving at 1 mm/s at 1 s: at the stage velocity the element
/// holds only while |v| < μ m g/(τK)) and `check` warned (radius 8.9e5). Dropped from 1 cm
/// with a sideways velocity it lands, slides and holds too.
#[test]
fn a_point_mass_on_a_stiff_plane_contact_slides_stops_and_holds() {
    let g = 9.81;
    let k = 1e8;
    let slide = on_plane(k, [1.0, 0.0, 0.0], -g / k, json!({}));
    assert_eq!(warnings(&slide), Vec::<String>::new());
    let rec = run_value(&slide);
    let (x, z) = (col(&rec, "x"), col(&rec, "z"));
    let from = rec.time.iter().position(|&t| t >= 0.3).expect("rows");
    let distance = 1.0 / (2.0 * 0.5 * g);
    eprintln!("plane_contact K = 1e8, T = 1e-3: slides {:.9} m (analytic {distance:.9}), rests at depth {:e}", x[from], -z[from]);
    assert!((x[from] - distance).abs() < 5e-6, "slides {}", x[from]);
    assert!(x[from..].iter().all(|&v| v == x[from]) && z[from..].iter().all(|&v| v == z[from]), "creeps");
    assert!((z[from] + g / k).abs() < 1e-15, "depth {}", -z[from]);

    let drop = on_plane(k, [0.5, 0.3, 0.0], 0.01, json!({}));
    let rec = run_value(&drop);
    let (x, y, z) = (col(&rec, "x"), col(&rec, "y"), col(&rec, "z"));
    assert!(x.iter().chain(&y).chain(&z).all(|v| v.is_finite() && v.abs() < 0.1), "diverges");
    let from = rec.time.iter().position(|&t| t >= 0.5).expect("rows");
    assert!(x[from..].iter().all(|&v| v == x[from]) && y[from..].iter().all(|&v| v == y[from]), "creeps");
    assert!((y[from] / x[from] - 0.6).abs() < 1e-9, "not along its launch: ({}, {})", x[from], y[from]);
}

/// On a stiff incline (20°, normal (−sin, 0, cos)): with μ = 0.5 > tan 20° a mass set on it
/// at rest stays (it settles on its springs within 0.2 s, 3.4e-8 m), its position then
/// within rounding (1e-23 m); with μ = 0.2 it slides down (−x: the normal leans to −x) at
/// g (sin θ − μ cos θ), its distance after 1 s within 1e-4 of the analytic ½ a t².
#[test]
fn a_point_mass_on_a_stiff_incline_holds_or_slides_as_coulomb_says() {
    let (g, k, th) = (9.81f64, 1e8, 20f64.to_radians());
    let n = [-th.sin(), 0.0, th.cos()];
    // The static depth m g cos θ/K along the normal, below the plane through the origin.
    let z0 = -g * th.cos() / k / th.cos();
    for (mu, slides) in [(0.5, false), (0.2, true)] {
        let mut v = on_plane(k, [0.0; 3], z0, json!({"normal": n, "point": [0, 0, 0]}));
        v["components"]["c"]["mu"] = json!(mu);
        assert_eq!(warnings(&v), Vec::<String>::new(), "μ = {mu}");
        let rec = run_value(&v);
        let (x, z) = (col(&rec, "x"), col(&rec, "z"));
        if slides {
            // Along the incline: down-slope is −x (the plane z = x tan θ).
            let a = g * (th.sin() - mu * th.cos());
            let along = -x.last().expect("rows") / th.cos();
            eprintln!("incline μ = {mu}: {along:.6} m along it after 1 s (analytic {:.6})", 0.5 * a);
            assert!((along - 0.5 * a).abs() < 1e-4, "μ = {mu}: {along}");
        } else {
            // Held: the tilted plane's forces cancel to rounding (velocity ~1e-21 m/s in a
            // four-step cycle), so the position keeps within a few units in the last place
            // (1e-23 m) with no drift.
            let from = rec.time.iter().position(|&t| t >= 0.2).expect("rows");
            let moved = |c: &[f64]| c[from..].iter().map(|v| (v - c[from]).abs()).fold(0.0, f64::max);
            assert!(moved(&x) < 1e-21 && moved(&z) < 1e-21, "μ = {mu}: creeps {:e}, {:e}", moved(&x), moved(&z));
            assert!(x[from].abs() < 1e-6, "μ = {mu}: moved {}", x[from]);
        }
    }
}

/// `body_contact` of a point mass against the ground is held implicitly too (a 1 kg point
/// on the ground's plane, K = 1e8, ω T = 10): launched at 1 m/s it slides 1/(2 μ g) and
/// holds bit for bit, as on a `plane_contact`. Between two masses the stiff contact is held
/// with both, the pair's stage solved as one (each mass solving with the other at its stage
/// motion overshoots from both sides, opens and chatters): a 1 kg point launched at 1 m/s
/// on a 2 kg point resting on the floor (K = 1e8 both) slides 1/(2 μ g) on it, the lower
/// point held by its floor, and then both hold bit for bit, each at its elastic depth.
#[test]
fn body_contacts_against_the_ground_are_held_implicitly() {
    let (g, k) = (9.81, 1e8);
    let one = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"x": "a.p[0]", "z": "a.p[2]"}},
        "components": {
            "a": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, -g / k], "v": [1.0, 0, 0]}},
            "c": {"type": "body_contact", "K": k, "B": 1.0, "mu": 0.5, "domain_b": "point3"}
        },
        "connections": [{"from": "c.a", "to": "a"}, {"from": "c.b", "to": "ground"}]
    });
    assert_eq!(warnings(&one), Vec::<String>::new());
    let rec = run_value(&one);
    let (x, z) = (col(&rec, "x"), col(&rec, "z"));
    let from = rec.time.iter().position(|&t| t >= 0.3).expect("rows");
    eprintln!("body_contact to the ground, K = 1e8: slides {:.7} m (1/(2μg) = {:.7})", x[from], 1.0 / (2.0 * 0.5 * g));
    assert!((x[from] - 1.0 / (2.0 * 0.5 * g)).abs() < 5e-6, "slides {}", x[from]);
    assert!(x[from..].iter().all(|&v| v == x[from]) && z[from..].iter().all(|&v| v == z[from]), "creeps");

    // a's depth in b: its weight over K; b's in the floor: both weights.
    let (zb, za) = (-3.0 * g / k, -3.0 * g / k - g / k);
    let stacked = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"xa": "a.p[0]", "za": "a.p[2]", "xb": "b.p[0]", "zb": "b.p[2]"}},
        "components": {
            "a": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, za], "v": [1.0, 0, 0]}},
            "b": {"type": "point_mass", "mass": 2.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, zb]}},
            "floor": {"type": "plane_contact", "K": k, "B": 1.0, "mu": 0.5},
            "ab": {"type": "body_contact", "K": k, "B": 1.0, "mu": 0.5, "domain_b": "point3"}
        },
        "connections": [{"from": "floor.body", "to": "b"}, {"from": "ab.a", "to": "a"}, {"from": "ab.b", "to": "b"}]
    });
    assert_eq!(warnings(&stacked), Vec::<String>::new());
    let rec = run_value(&stacked);
    let (xa, za_, xb, zb_) = (col(&rec, "xa"), col(&rec, "za"), col(&rec, "xb"), col(&rec, "zb"));
    let from = rec.time.iter().position(|&t| t >= 0.3).expect("rows");
    let slid = xa[from] - xb[from];
    eprintln!("point on a point on the floor, K = 1e8: slides {slid:.7} m on it (1/(2μg) = {:.7}), the lower moved {:e} m", 1.0 / (2.0 * 0.5 * g), xb[from]);
    assert!((slid - 1.0 / (2.0 * 0.5 * g)).abs() < 5e-6, "slides {slid}");
    // The lower point feels a's 4.9 N of friction on its elastic floor contact (1e-8 m).
    assert!(xb[from].abs() < 1e-7, "the lower point moved {}", xb[from]);
    // The upper point holds bit for bit; the lower one (at 1e-23 m from its start: no load
    // along the floor once a rests) and the normal depths (3.9e-7 m) wander within a few
    // units in their last place (the pair's Newton residual, 1e-15 of the forces), no drift.
    let moved = |c: &[f64]| c[from..].iter().map(|v| (v - c[from]).abs()).fold(0.0, f64::max);
    assert!(moved(&xa) == 0.0 && moved(&xb) < 1e-21, "creeps along: {:e} {:e}", moved(&xa), moved(&xb));
    assert!(moved(&za_) < 1e-21 && moved(&zb_) < 1e-21, "normal: {:e} {:e}", moved(&za_), moved(&zb_));
    assert!((za_[from] - za).abs() < 1e-9 && (zb_[from] - zb).abs() < 1e-9, "depths {} {}", za_[from], zb_[from]);
}

/// The box of examples/stack.json (1 kg, 0.2 × 0.2 × 0.02 m) on its four corner
/// `body_contact`s against the ground, made stiff (K = 1e8, B = 100) and stepped at
/// T = 1e-3 (the example: K = 1e5 at 2.5e-4), pushed at its top face by `push` N along x
/// (the top centre; or the centre of mass with `at_com`). Signals x, z, q2 (tilt about y).
fn stiff_box(push: Value, at_com: bool, stop: f64) -> Value {
    let mut components = serde_json::Map::new();
    components.insert(
        "box".into(),
        json!({"type": "rigid_body", "mass": 1.0, "inertia": [0.003366667, 0.003366667, 0.006666667],
               "gravity": [0, 0, -9.81], "init": {"p": [0, 0, 0.01 - 9.81 / 4.0 / 1e8]}}),
    );
    let mut connections = Vec::new();
    for (name, at) in [("bl", [-0.1, -0.1]), ("br", [-0.1, 0.1]), ("fl", [0.1, -0.1]), ("fr", [0.1, 0.1])] {
        components.insert(format!("c_{name}"), json!({"type": "body_contact", "K": 1e8, "B": 100.0, "mu": 0.5}));
        connections.push(json!({"from": format!("c_{name}.a"), "to": "box", "at": [at[0], at[1], -0.01]}));
        connections.push(json!({"from": format!("c_{name}.b"), "to": "ground"}));
    }
    components.insert("push".into(), json!({"type": "force_source", "domain": "point3", "force": [push, 0, 0]}));
    connections.push(json!({"from": "push.body", "to": "box", "at": [0, 0, if at_com { 0.0 } else { 0.01 }]}));
    json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": stop},
        "output": {"interval": 0.5, "signals": {"x": "box.p[0]", "z": "box.p[2]", "q2": "box.q[2]"}},
        "components": components,
        "connections": connections
    })
}

/// A rigid body's contacts against the ground are held implicitly too: the box solves its
/// stage with its four corners' laws at their levers (`StageLaw::rigid_rates`, Newton on
/// the 6-vector). Under the example's push 0.3 m g sin πt (below every static limit) it holds
/// with no creep: at the same phase 2 s apart its position and tilt agree to 1e-12 (3e-20 m
/// measured); the previous landing's box left the floor and became non-finite at 4.2 s, and
/// `check` found radius 2.1e10 where it now finds 0.47 and no warning. Pushed at its centre of
/// mass by 6 N (above μ m g = 4.905 N) it slides at 1.095 m/s²: 0.5475 m in 1 s.
#[test]
fn a_box_on_stiff_corner_contacts_holds_and_slides() {
    let held = stiff_box(json!("2.943*sin(pi*t)"), false, 6.0);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let rec = run_value(&held);
    for s in ["x", "z", "q2"] {
        let c = col(&rec, s);
        assert!(c.iter().all(|v| v.is_finite()), "{s}: not finite");
        // Rows every 0.5 s: t = 1, 3, 5 s and 2, 4, 6 s are the same phases.
        for (a, b) in [(2, 6), (6, 10), (4, 8), (8, 12)] {
            assert!((c[a] - c[b]).abs() <= 1e-12, "{s}: {} then {} 2 s later", c[a], c[b]);
        }
    }
    let x = col(&rec, "x");
    assert!(x.iter().all(|v| v.abs() < 1e-7), "the box moves {:e}", x.iter().fold(0.0f64, |m, v| m.max(v.abs())));

    let rec = run_value(&stiff_box(json!(6.0), true, 1.0));
    let end = *col(&rec, "x").last().expect("rows");
    eprintln!("box on stiff corners, 6 N at its centre of mass: {end:.9} m in 1 s (analytic 0.5475)");
    assert!((end - 0.5475).abs() < 1e-4, "slides {end}");
}

/// examples/stack.json with its twelve `body_contact`s 1000× stiffer (K = 1e8; the boxes
/// started at their elastic depths), pushed at the top box's centre of mass by `push` N
/// along x, RK4 at `step` for `stop` s. Signals x1, x2, x3, z3.
fn stiff_stack(push: Value, step: f64, stop: f64) -> Value {
    let text = std::fs::read_to_string(example("stack.json")).expect("stack.json");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    let k = 1e8;
    let depth = |above: f64| above * 9.81 / (4.0 * k);
    let mut z = 0.0;
    for (n, box_) in ["box1", "box2", "box3"].iter().enumerate() {
        // Box n carries the 3 − n boxes above it and itself.
        z += depth(3.0 - n as f64);
        v["components"][box_]["init"]["p"][2] = json!(0.01 + 0.02 * n as f64 - z);
    }
    for (_, c) in v["components"].as_object_mut().expect("components").iter_mut() {
        if c["type"] == "body_contact" {
            c["K"] = json!(k);
        }
    }
    v["components"]["push"]["force"] = json!([push, 0, 0]);
    v["solver"] = json!({"method": "rk4", "step": step, "stop_time": stop});
    v["output"] = json!({"interval": 0.5, "signals": {"x1": "box1.p[0]", "x2": "box2.p[0]", "x3": "box3.p[0]", "z3": "box3.p[2]"}});
    v
}

/// Three boxes stacked on stiff contacts between them are one group, their stage solved
/// together (framework/src/stage_law/group.rs): examples/stack.json at K = 1e8, where the
/// boxes' corners meet ω T = 10 at 1e-3 s (and `check` warned for every box–box contact
/// before), holds under the example's push 0.3 m g sin πt at T = 1e-3 and 4e-3 s with no
/// creep: at the same phase 2 s apart every box agrees to 1e-12 m (1e-20 measured), within
/// 1e-7 m of its start. Pushed at 0.8 m g, the top box slides on the middle one at
/// (0.8 − μ) g = 2.943 m/s² (5.886 cm in 0.2 s, to 1e-5 of it; 5e-8 m off measured, the
/// same at T = 5e-4 and 2.5e-4) while the two below hold (the middle box's friction from
/// below is 2 μ m g, twice what the top one puts on it).
#[test]
fn a_stiff_stack_of_boxes_is_held_as_one_group() {
    for step in [1e-3, 4e-3] {
        let held = stiff_stack(json!("2.943*sin(pi*t)"), step, 6.0);
        assert_eq!(warnings(&held), Vec::<String>::new(), "T = {step}");
        let rec = run_value(&held);
        for s in ["x1", "x2", "x3", "z3"] {
            let c = col(&rec, s);
            assert!(c.iter().all(|v| (v - c[0]).abs() < 1e-7), "T = {step}, {s}: moved from {} to {:?}", c[0], c);
            // Rows every 0.5 s: t = 1, 3, 5 s and 2, 4, 6 s are the same phases.
            for (a, b) in [(2, 6), (6, 10), (4, 8), (8, 12)] {
                assert!((c[a] - c[b]).abs() <= 1e-12, "T = {step}, {s}: {} then {} 2 s later", c[a], c[b]);
            }
        }
    }
    let g = 9.81;
    // 0.2 s: the box slides 6 cm, while its corners' contacts are on the middle box's top
    // (the contacts' planes are infinite: further on, its reaction tips the box below).
    let mut slides = stiff_stack(json!(0.8 * g), 1e-3, 0.2);
    slides["output"]["interval"] = json!(0.1);
    assert_eq!(warnings(&slides), Vec::<String>::new());
    let rec = run_value(&slides);
    let (x1, x2, x3) = (col(&rec, "x1"), col(&rec, "x2"), col(&rec, "x3"));
    let last = x3.len() - 1;
    let analytic = 0.5 * (0.8 - 0.5) * g * 0.2 * 0.2;
    eprintln!("stiff stack, top box pushed at 0.8 m g: {:.8} m in 0.2 s (analytic {analytic:.8}); below {:e} {:e} m", x3[last], x1[last], x2[last]);
    assert!((x3[last] - analytic).abs() < 1e-5 * analytic, "top box slid {}", x3[last]);
    assert!(x1[last].abs() < 1e-7 && x2[last].abs() < 1e-7, "the boxes below moved {} {}", x1[last], x2[last]);
}

/// A `sphere_contact` between two bodies is held with both, their stage solved as a pair: a
/// 1 kg point launched at 1 m/s on top of a 5 kg sphere of radius 100 m (its centre a point
/// mass) that rests on the floor (both contacts K = 1e8, T = 1e-3: ω T = 10) slides as on a
/// fixed sphere of that radius (0.1020943 m; the fixed sphere's test: 0.1020944) and holds,
/// along the sphere bit for bit, the lower body within 1e-18 m of its place and every depth
/// within 1e-13 m.
#[test]
fn a_stiff_sphere_contact_between_two_bodies_is_held_with_both() {
    let (g, k) = (9.81, 1e8);
    let zb = -100.0 - 6.0 * g / k;
    let v = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"interval": 0.05, "signals": {"xa": "a.p[0]", "za": "a.p[2]", "xb": "b.p[0]", "zb": "b.p[2]"}},
        "components": {
            "a": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, zb + 100.0 - g / k], "v": [1.0, 0, 0]}},
            "b": {"type": "point_mass", "mass": 5.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, zb]}},
            "c": {"type": "sphere_contact", "K": k, "B": 1.0, "mu": 0.5, "radius_a": 0.0, "radius_b": 100.0},
            "floor": {"type": "plane_contact", "K": k, "B": 1.0, "mu": 0.9, "normal": [0, 0, 1], "point": [0, 0, -100]}
        },
        "connections": [{"from": "c.a", "to": "a"}, {"from": "c.b", "to": "b"}, {"from": "floor.body", "to": "b"}]
    });
    assert_eq!(warnings(&v), Vec::<String>::new());
    let rec = run_value(&v);
    let (xa, za, xb, zb_) = (col(&rec, "xa"), col(&rec, "za"), col(&rec, "xb"), col(&rec, "zb"));
    let from = rec.time.iter().position(|&t| t >= 0.4).expect("rows");
    eprintln!("point on a 100 m sphere body on the floor: slides {:.7} m", xa[from]);
    assert!((xa[from] - 0.1020944).abs() < 2e-6, "slides {}", xa[from]);
    let moved = |c: &[f64]| c[from..].iter().map(|v| (v - c[from]).abs()).fold(0.0, f64::max);
    assert!(moved(&xa) == 0.0 && xb[from..].iter().all(|v| v.abs() < 1e-18), "creeps: {:e}, {:e}", moved(&xa), moved(&xb));
    assert!(moved(&za) < 1e-13 && moved(&zb_) < 1e-13, "depths: {:e} {:e}", moved(&za), moved(&zb_));
}

/// A stiff contact between a body and a prescribed motion is held with the body alone, the
/// source's change within the stage given: examples/conveyor.json at K = 1e8 (its box
/// started at its elastic depth) rides the tray through its acceleration, constant speed
/// and braking as the example does, at the tray's velocity to 1e-9 m/s and within 1e-7 m
/// of its own position on it (the example's elastic lag 1e-5 m, here 1000× smaller). With the
/// source's change left out, the box lagged τ a behind it and slid.
#[test]
fn a_stiff_contact_with_a_prescribed_motion_is_held_with_the_body() {
    let text = std::fs::read_to_string(example("conveyor.json")).expect("conveyor.json");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    for (_, c) in v["components"].as_object_mut().expect("components").iter_mut() {
        if c["type"] == "body_contact" {
            let k = c["K"].as_f64().expect("K");
            c["K"] = json!(k * 1e3);
        }
    }
    let z0 = v["components"]["box"]["init"]["p"][2].as_f64().expect("z0");
    v["components"]["box"]["init"]["p"][2] = json!(0.01 - (0.01 - z0) / 1e3);
    assert_eq!(warnings(&v), Vec::<String>::new());
    let rec = run_value(&v);
    let (x, vx, tx, tvx) = (col(&rec, "x"), col(&rec, "vx"), col(&rec, "tray_x"), col(&rec, "tray_vx"));
    for i in 0..x.len() {
        assert!((vx[i] - tvx[i]).abs() < 1e-9, "t = {}: box {} tray {} m/s", rec.time[i], vx[i], tvx[i]);
        assert!((x[i] - tx[i]).abs() < 1e-7, "t = {}: box {} m, tray {} m", rec.time[i], x[i], tx[i]);
    }
    assert!(tx[tx.len() - 1] > 1.9, "the tray moved {} m", tx[tx.len() - 1]);
}

/// A `sphere_contact` against a fixed sphere is held implicitly with its body too (the
/// contact's law at the stage's line of centres, `Pair::stage_laws`). A point on a sphere of
/// radius 100 m (K = 1e8, ω T = 10 at T = 1e-3) launched at 1 m/s slides about 1/(2 μ g)
/// (the curvature tilts gravity by x/R: a part in 1e3) and then holds. A solid ball
/// (1 kg, r = 0.1 m) thrown at 1 m/s without spin onto a sphere of radius 1e4 m slides and
/// rolls at 5/7 of it from t = 2 v₀/(7 μ g) = 0.058 s, ω r = v. Before, both were unstable
/// (`check` warned; the runs became non-finite).
#[test]
fn sphere_contacts_against_a_fixed_sphere_are_held_implicitly() {
    let (g, k, mu) = (9.81, 1e8, 0.5);
    let point = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"signals": {"x": "a.p[0]", "z": "a.p[2]"}},
        "components": {
            "a": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, -g / k], "v": [1.0, 0, 0]}},
            "c": {"type": "sphere_contact", "K": k, "B": 1.0, "mu": mu, "radius_a": 0.0, "radius_b": 100.0}
        },
        "connections": [{"from": "c.a", "to": "a"}, {"from": "c.b", "to": "ground", "at": [0, 0, -100.0]}]
    });
    assert_eq!(warnings(&point), Vec::<String>::new());
    let rec = run_value(&point);
    let (x, z) = (col(&rec, "x"), col(&rec, "z"));
    let from = rec.time.iter().position(|&t| t >= 0.3).expect("rows");
    let flat = 1.0 / (2.0 * mu * g);
    eprintln!("point on a stiff sphere contact (R = 100 m, K = 1e8): slides {:.7} m (flat 1/(2μg) = {flat:.7})", x[from]);
    assert!((x[from] - flat).abs() < 2e-4, "slides {}", x[from]);
    // Held on the sphere's slope (the friction holds g x/R): x moves by a few units in its
    // last place (6e-16 m in 0.7 s), z by 1e-14 m (measured 8e-15); a flat floor holds bit
    // for bit (above).
    let moved = |c: &[f64]| c[from..].iter().map(|v| (v - c[from]).abs()).fold(0.0, f64::max);
    let (mx, mz) = (moved(&x), moved(&z));
    eprintln!("  held from 0.3 s: x moves {mx:e} m, z {mz:e} m");
    assert!(mx <= 1e-14 && mz <= 1e-13, "held on the sphere's slope, it moves {mx:e} m along x, {mz:e} m along z");

    let (m, r, big) = (1.0, 0.1, 1e4);
    let inertia = 0.4 * m * r * r;
    let ball = |step: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 0.3},
            "output": {"interval": 1e-3, "signals": {"vx": "ball.v[0]", "wy": "ball.w[1]"}},
            "components": {
                "ball": {"type": "rigid_body", "mass": m, "inertia": [inertia, inertia, inertia], "gravity": [0, 0, -g],
                         "init": {"p": [0, 0, r - m * g / k], "v": [1.0, 0, 0]}},
                "c": {"type": "sphere_contact", "K": k, "B": 1.0, "mu": mu, "radius_a": r, "radius_b": big, "domain_a": "frame"}
            },
            "connections": [{"from": "c.a", "to": "ball"}, {"from": "c.b", "to": "ground", "at": [0, 0, -big]}]
        })
    };
    assert_eq!(warnings(&ball(1e-3)), Vec::<String>::new());
    let (rec, fine) = (run_value(&ball(1e-3)), run_value(&ball(1e-5)));
    let (vx, wy, vx_f) = (col(&rec, "vx"), col(&rec, "wy"), col(&fine, "vx"));
    assert!(vx.iter().chain(&wy).all(|v| v.is_finite()), "not finite");
    let analytic = 2.0 / (7.0 * mu * g);
    let off = |from: usize| (from..vx.len()).map(|i| (vx[i] - vx_f[i]).abs()).fold(0.0, f64::max);
    eprintln!(
        "ball on a stiff sphere contact: v = {:.7} m/s at 0.1 s (5/7 = {:.7}), ω r − v = {:e}; off the run at T = 1e-5: {:e} (to 0.3 s), {:e} (from 0.1 s)",
        vx[100],
        5.0 / 7.0,
        wy[100] * r - vx[100],
        off(0),
        off(100)
    );
    // Sliding: v = v₀ − μ g t until the roll at 2 v₀/(7 μ g); then it rolls at 5/7 v₀ (and
    // slowly faster: it rolls off the big sphere, 2e-5 m/s by 0.3 s).
    for (t, v) in rec.time.iter().zip(&vx).take(50) {
        assert!((v - (1.0 - mu * g * t)).abs() < 1e-5, "t {t}: v {v}");
    }
    assert!(rec.time[50] < analytic && rec.time[70] > analytic);
    for i in 100..vx.len() {
        assert!((vx[i] - 5.0 / 7.0).abs() < 5e-5 && (vx[i] - wy[i] * r).abs() < 1e-9, "t {}: v {} ω r {}", rec.time[i], vx[i], wy[i] * r);
    }
    assert!(off(0) < 2e-3 && off(100) < 1e-7, "off the fine run: {:e}, {:e}", off(0), off(100));
}

/// Model B (36) is stable at any stiffness as the paper gives it (Euler); under RK4 its own
/// mass sliding on its own spring was integrated explicitly, and past RK4's limit it
/// diverged (`check` warned). Where RK4 would not keep that mass stable at the step,
/// every stage now takes (36)'s implicit step (`StageForm::set_stage_implicit`; RK4's step
/// map of it has spectral radius ≤ 1 at every K T²/M and B T/M): first order, stable.
/// Fig. 13's block (M = 1 kg, F = 10 N, driven at u = 0.1 t) made stiff, K = 7.5e9 (ω T = 87
/// at T = 1e-3; the example: 7.5e5): before, non-finite at 0.049 s. Now it slides behind
/// the drive by a lag of first order in T and the force h it reports (the probe's view at
/// τ = T) is within 0.03 N of F + M du/dt = 10.1 N (Euler: 10.1 to 4e-13). Launched at 1 m/s
/// on a stiff spring to the ground (K = 1e7, F = 5 N) it comes to rest exactly (v = 0.0)
/// with |K e| ≤ F, its energy ½ M v² + ½ K e² never growing.
#[test]
fn a_stiff_model_b_slides_by_its_implicit_step_under_rk4() {
    for b in [1.0, 2.0 * 7.5e9f64.sqrt()] {
        let fig13 = |step: f64, method: &str| {
            json!({
                "solver": {"method": method, "step": step, "stop_time": 1.0},
                "output": {"interval": 0.1, "signals": {"h": "block.h", "v": "block.v", "u": "drive.v"}},
                "components": {"drive": {"type": "velocity_source", "velocity": "0.1*t"},
                               "block": {"type": "kikuuwe_b", "mass": 1.0, "K": 7.5e9, "B": b, "F": 10.0}},
                "connections": [{"from": "block.drive", "to": "drive"}]
            })
        };
        assert_eq!(warnings(&fig13(1e-3, "rk4")), Vec::<String>::new(), "B = {b}");
        let lag = |step: f64| {
            let rec = run_value(&fig13(step, "rk4"));
            let (h, v, u) = (col(&rec, "h"), col(&rec, "v"), col(&rec, "u"));
            assert!(h.iter().chain(&v).all(|z| z.is_finite()), "B = {b}: not finite");
            for (t, h) in rec.time.iter().zip(&h).skip(3) {
                assert!((h - 10.1).abs() < 0.03, "B = {b}, T = {step}: h = {h} at {t}");
            }
            u[10] - v[10]
        };
        let (l1, l2) = (lag(1e-3), lag(5e-4));
        let euler = run_value(&fig13(1e-3, "euler"));
        let h_euler = *col(&euler, "h").last().expect("rows");
        eprintln!("stiff model B (K = 7.5e9, B = {b:.1}): lag behind the drive {l1:e} (T = 1e-3), {l2:e} (5e-4); Euler h = {h_euler}");
        assert!(l1 > 0.0 && (1.9..2.1).contains(&(l1 / l2)), "B = {b}: lags {l1:e}, {l2:e}: not first order");
        assert!((h_euler - 10.1).abs() < 1e-9, "Euler: h = {h_euler}");
    }

    let (k, f) = (1e7, 5.0);
    let ringing = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"interval": 1e-3, "signals": {"v": "block.v", "e": "block.e", "stuck": "block.stuck"}},
        "components": {"block": {"type": "kikuuwe_b", "mass": 1.0, "K": k, "B": 1.0, "F": f, "init": {"v": 1.0}}},
        "connections": [{"from": "block.drive", "to": "ground"}]
    });
    assert_eq!(warnings(&ringing), Vec::<String>::new());
    let rec = run_value(&ringing);
    let (v, e, stuck) = (col(&rec, "v"), col(&rec, "e"), col(&rec, "stuck"));
    let energy: Vec<f64> = v.iter().zip(&e).map(|(v, e)| 0.5 * v * v + 0.5 * k * e * e).collect();
    assert!(energy.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-12)), "the energy grows");
    let rest = stuck.iter().position(|&s| s == 1.0).expect("it comes to rest");
    eprintln!("stiff model B on the ground's spring: at rest from {} s, K e = {:e} N", rec.time[rest], k * e[rest]);
    assert!(v[rest..].iter().all(|&v| v == 0.0) && e[rest..].iter().all(|&x| x == e[rest]), "moves after its rest");
    assert!((k * e[rest]).abs() <= f, "held by K e = {} > F", k * e[rest]);
}

/// A `plane_contact` attached to a rigid body at a point (not a body contact) is coupled too:
/// whether is decided on the effective mass at the point it is attached at. The paper's
/// rolling sphere (Sim I, examples/rolling_sphere.json: 0.3 kg, r = 0.2 m, μ = 0.1, launched
/// at 2 m/s without spin, T = 1e-4) with its floor made 1000 times stiffer (K = 1e10,
/// ω T = 18 at the contact point): before, it left the floor at its first touch and flew
/// (17 m up by 1.2 s). Now it slides and rolls at 5/7 of 2 m/s from 2 v₀/(7 μ g) = 0.583 s,
/// its contact point's velocity then exactly 0.0. The example itself is not coupled (its
/// CSV is unchanged).
#[test]
fn a_stiff_plane_contact_on_a_rigid_body_is_held_implicitly() {
    let text = std::fs::read_to_string(example("rolling_sphere.json")).expect("example");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    v["components"]["floor"]["K"] = json!(1e10);
    assert_eq!(warnings(&v), Vec::<String>::new());
    let rec = run_value(&v);
    let (vx, slip, h) = (col(&rec, "center_vx"), col(&rec, "contact_vx"), col(&rec, "height"));
    assert!(h.iter().all(|&z| (0.19..0.203).contains(&z)), "leaves the floor: {:?}", h.iter().fold(0.0f64, |m, z| m.max(*z)));
    let roll = rec.time.iter().zip(&slip).find(|(_, s)| **s == 0.0).map(|(t, _)| *t).expect("it rolls");
    let analytic = 2.0 * 2.0 / (7.0 * 0.1 * 9.8);
    eprintln!("Sim I's sphere on a floor of K = 1e10: rolls from {roll} s (analytic {analytic:.4}) at {} m/s (5/7 · 2 = {:.7})", vx[vx.len() - 1], 10.0 / 7.0);
    assert!((roll - analytic).abs() < 0.01, "rolls from {roll}");
    let from = rec.time.iter().position(|&t| t >= roll).expect("rows");
    assert!(slip[from..].iter().all(|&s| s == 0.0), "slips after rolling");
    assert!(vx[from..].iter().all(|&v| (v - 10.0 / 7.0).abs() < 1e-6), "rolls at {}", vx[from]);
}

/// `fric_k` on a serial robot's joints is coupled too: the joints solve their stage together
/// through H(θ) (`StageLaw::joint_rates`), coupling decided on the smallest inertia a joint
/// can show, 1/(H⁻¹)_ii. Simulation II (examples/two_link_fricK.json: two 0.1 kg links,
/// motors ramping 0.3 t N·m against F = 0.5 N·m, T = 1e-4) with its friction elements 1000
/// times stiffer (K = 5e6; ω T = 2.44 on joint 1): before, the held joints crept in a
/// stick–slip cycle (joint 1 1.5e-3 rad by 0.4 s, its friction at the limit) and `check`
/// warned (stable below 4.2e-5 s). Now each joint holds its motor on its spring, θ_i =
/// τ_m/K (to 1e-10 rad), until the ramp passes F at 1.67 s; then joint 1 slides.
#[test]
fn stiff_friction_on_a_robots_joints_is_held_implicitly() {
    let text = std::fs::read_to_string(example("two_link_fricK.json")).expect("example");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    let k = 5e6;
    v["components"]["fric0"]["K"] = json!(k);
    v["components"]["fric1"]["K"] = json!(k);
    v["solver"]["stop_time"] = json!(2.0);
    assert_eq!(warnings(&v), Vec::<String>::new());
    let rec = run_value(&v);
    let (q0, q1, w1) = (col(&rec, "theta0"), col(&rec, "theta1"), col(&rec, "omega1"));
    let (m0, m1) = (col(&rec, "tau_m0"), col(&rec, "tau_m1"));
    let mut off = 0.0f64;
    for i in (0..rec.time.len()).filter(|&i| rec.time[i] <= 1.6) {
        off = off.max((q0[i] - m0[i] / k).abs()).max((q1[i] - m1[i] / k).abs());
    }
    let last = rec.time.len() - 1;
    eprintln!("Sim II, fric_k K = 5e6: held on the springs to 1.6 s within {off:e} rad of τ_m/K; at 2 s θ1 = {}, ω1 = {}", q1[last], w1[last]);
    assert!(off < 1e-10, "held joints off their springs by {off:e}");
    assert!(w1[last] > 0.5 && q1[last] > 0.05, "joint 1 slides after 1.67 s: θ1 {}, ω1 {}", q1[last], w1[last]);
}

/// A stiff element at a serial robot's tip is coupled with its joints too: the joints' stage
/// takes the law at the tip's velocity change J Δω and its force through Jᵀ, coupling decided
/// on the smallest effective mass at the tip, 1/λ_max(J H⁻¹ Jᵀ). Simulation II's arm (its
/// joint friction removed), bent at θ1 = 1 rad, its tip held to the ground by a `fric_k`
/// (point3, K = 1e7, F = 5 N) at T = 1e-3, the motors ramping to 0.52 N·m: the tip stays on its
/// spring (it moves by the elastic f/K, 1.2e-7 m) and, the torques constant from 1.73 s, its
/// position is then constant bit for bit. Before, the explicit element chattered: the tip
/// crept 4.4 cm in 3 s with the friction flipping between ±2 N.
#[test]
fn a_stiff_element_at_a_robots_tip_is_held_implicitly() {
    let text = std::fs::read_to_string(example("two_link_fricK.json")).expect("example");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    let components = v["components"].as_object_mut().expect("components");
    components.remove("fric0");
    components.remove("fric1");
    components.insert("tipf".into(), json!({"type": "fric_k", "domain": "point3", "K": 1e7, "B": 1.0, "F": 5.0}));
    v["components"]["arm"]["init"] = json!({"q": [0.0, 1.0]});
    let tip = [0.5 + 0.5 * 1f64.cos(), 0.5 * 1f64.sin(), 0.0];
    let mut connections: Vec<Value> = v["connections"]
        .as_array()
        .expect("connections")
        .iter()
        .filter(|c| !c["from"].as_str().unwrap_or("").starts_with("fric"))
        .cloned()
        .collect();
    connections.push(json!({"from": "tipf.a", "to": "ground", "at": tip}));
    connections.push(json!({"from": "tipf.b", "to": "arm.tip"}));
    v["connections"] = json!(connections);
    v["solver"] = json!({"method": "rk4", "step": 1e-3, "stop_time": 3.0});
    v["output"] = json!({"interval": 1e-3, "signals": {"x": "arm.tip[0]", "y": "arm.tip[1]"}});
    let (sim, plan) = build_value(&v);
    let found = stiction::framework::system::diagnostics(&sim, &plan);
    let held = found.iter().any(|d| matches!(d, Diagnostic::Info(i) if i.contains("tipf") && i.contains("held implicitly")));
    assert!(held, "{found:?}");
    assert_eq!(warnings(&v), Vec::<String>::new());
    let rec = run_value(&v);
    let (x, y) = (col(&rec, "x"), col(&rec, "y"));
    let moved = x.iter().zip(&y).map(|(x, y)| ((x - tip[0]).powi(2) + (y - tip[1]).powi(2)).sqrt()).fold(0.0, f64::max);
    let from = rec.time.iter().position(|&t| t >= 1.8).expect("rows");
    eprintln!("robot tip on a stiff fric_k (K = 1e7, T = 1e-3): moves at most {moved:e} m; from 1.8 s x, y constant: {}", x[from..].iter().all(|&v| v == x[from]));
    assert!(moved < 1e-6, "the tip moves {moved:e} m");
    assert!(x[from..].iter().all(|&v| v == x[from]) && y[from..].iter().all(|&v| v == y[from]), "creeps under constant torques");
}

/// The largest |a − b| of each named signal over `a`'s sample times (each found in `b`).
fn worst_differences(a: &Recorder, b: &Recorder, names: &[&str]) -> Vec<f64> {
    let columns: Vec<(Vec<f64>, Vec<f64>)> = names.iter().map(|name| (col(a, name), col(b, name))).collect();
    let mut worst = vec![0.0f64; names.len()];
    for (i, t) in a.time.iter().enumerate() {
        let j = b.time.iter().position(|s| (s - t).abs() < 1e-9).expect("the same sample times");
        for (w, (ca, cb)) in worst.iter_mut().zip(&columns) {
            *w = w.max((ca[i] - cb[j]).abs());
        }
    }
    worst
}

/// The run of `held`, which `check` must not warn about, and of its explicit `reference`: the
/// two recordings and the worst differences of the signals `names` (printed under `what`).
fn against_reference(what: &str, held: &Value, reference: &Value, names: &[&str]) -> (Recorder, Recorder, Vec<f64>) {
    assert_eq!(warnings(held), Vec::<String>::new(), "{what}");
    let (a, b) = (run_value(held), run_value(reference));
    let worst = worst_differences(&a, &b, names);
    eprintln!("{what}: {:?}", worst.iter().map(|w| format!("{w:.1e}")).collect::<Vec<_>>());
    (a, b, worst)
}

/// A 2-link arm (Simulation II's links, no joint friction, free) whose tip holds a 1 kg
/// `point_mass` through a stiff `kikuuwe_c` (dims 3, K = 1e7, F = 5 N), the mass pushed by
/// (1, 0.5, 0) N: the element stays stuck and the mass drags the arm. At `step` with the
/// default hold (the tip's effective mass ~0.05 kg, ω T ≈ 14 at 1 ms) or `"explicit"`.
fn arm_holding_a_mass(step: f64, hold: &str) -> Value {
    let link = |origin: f64| json!({"origin": [origin, 0, 0], "axis": [0, 0, 1], "mass": 0.1, "com": [0.25, 0, 0], "inertia": [0.000125, 0.002145833333, 0.002145833333]});
    let (q0, q1) = (0.3f64, 0.5f64);
    let tip = [0.5 * q0.cos() + 0.5 * (q0 + q1).cos(), 0.5 * q0.sin() + 0.5 * (q0 + q1).sin(), 0.0];
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0, "hold": hold},
        "output": {"interval": 1e-3, "signals": {"q0": "arm.q[0]", "q1": "arm.q[1]", "x": "m.p[0]", "y": "m.p[1]", "e": "f.e[0]"}},
        "components": {
            "arm": {"type": "serial_robot", "links": [link(0.0), link(0.5)], "tip": [0.5, 0, 0], "init": {"q": [q0, q1]}},
            "m": {"type": "point_mass", "mass": 1.0, "init": {"p": tip}},
            "f": {"type": "kikuuwe_c", "dims": 3, "K": 1e7, "B": 1.0, "F": 5.0},
            "push": {"type": "force_source", "domain": "point3", "force": [1.0, 0.5, 0.0]}
        },
        "connections": [{"from": "f.a", "to": "arm.tip"}, {"from": "f.b", "to": "m"}, {"from": "push.body", "to": "m"}]
    })
}

/// A stiff element between a robot's tip and a body is solved with the body's group: the
/// tip is a point of the mechanism with inverse inertia W = J H⁻¹ Jᵀ and its acceleration
/// J ω̇ + J̇ ω (`SerialRobot::stage_body`), the joints then take H⁻¹ Jᵀ Δf. Against an
/// explicit run at T = 5e-6 (the element resolved): at T = 1e-3 the joint angles within
/// 1e-4 rad and the mass within 1e-5 m over 1 s. Before, each end solved its stage with
/// the other at its stage motion (a Jacobi sweep): 0.24 rad off at 1 s (0.38 at 0.5 s).
#[test]
fn a_stiff_element_between_a_robots_tip_and_a_body_is_solved_with_the_group() {
    let held = arm_holding_a_mass(1e-3, "auto");
    assert_eq!(warnings(&held), Vec::<String>::new());
    let reference = arm_holding_a_mass(5e-6, "explicit");
    assert_eq!(warnings(&reference), Vec::<String>::new(), "the reference is explicitly stable");
    let (a, b) = (run_value(&held), run_value(&reference));
    let worst = worst_differences(&a, &b, &["q0", "q1", "x", "y"]);
    // Stuck throughout: the element's deflection below F/K.
    assert!(col(&a, "e").iter().all(|e| e.abs() < F / K), "the element slipped");
    eprintln!("arm holding a mass on a stiff kikuuwe_c, T = 1e-3 held against 5e-6 explicit: |Δq0|, |Δq1|, |Δx|, |Δy| at most {:.1e} {:.1e} {:.1e} {:.1e}", worst[0], worst[1], worst[2], worst[3]);
    assert!(worst[0] < 1e-4 && worst[1] < 1e-4, "joint angles off by {worst:?}");
    assert!(worst[2] < 1e-5 && worst[3] < 1e-5, "the mass off by {worst:?}");
}

/// The same arm's joint 0 joined to a rotor (a 0.01 kg·m² `mass` driven by 0.2 N·m) by a
/// stuck `kikuuwe_c` (K = 1e6, T = 1e-3: ω T = 10 on the rotor): the joint solves its stage
/// with the rotor as a point of the mechanism ((H⁻¹)_00 along x), and `check` models the pair
/// solved together. Before, `check` gave a warning that contradicted its own "held
/// implicitly" (the pair modelled as two masses each dividing by its own M + τ(B + τK), ρ
/// just above 1) and the arm ran 2.8 rad off an explicit run at 2e-6 s after 1 s.
#[test]
fn a_stiff_element_between_a_robots_joint_and_a_body_is_solved_with_the_group() {
    let link = |origin: f64| json!({"origin": [origin, 0, 0], "axis": [0, 0, 1], "mass": 0.1, "com": [0.25, 0, 0], "inertia": [0.000125, 0.002145833333, 0.002145833333]});
    let system = |step: f64, hold: &str| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 1.0, "hold": hold},
            "output": {"interval": 1e-3, "signals": {"q0": "arm.q[0]", "q1": "arm.q[1]", "r": "rotor.q"}},
            "components": {
                "arm": {"type": "serial_robot", "links": [link(0.0), link(0.5)], "tip": [0.5, 0, 0], "init": {"q": [0.3, 0.5]}},
                "rotor": {"type": "mass", "mass": 0.01, "force": 0.2, "init": {"q": 0.3}},
                "f": {"type": "kikuuwe_c", "K": 1e6, "B": 0.1, "F": 5.0}
            },
            "connections": [{"from": "f.a", "to": "arm.joint0"}, {"from": "f.b", "to": "rotor"}]
        })
    };
    let held = system(1e-3, "auto");
    assert_eq!(warnings(&held), Vec::<String>::new());
    let reference = system(2e-6, "explicit");
    assert_eq!(warnings(&reference), Vec::<String>::new());
    let (a, b) = (run_value(&held), run_value(&reference));
    let worst = worst_differences(&a, &b, &["q0", "q1", "r"]);
    eprintln!("arm joint held to a rotor (K = 1e6, T = 1e-3) against 2e-6 explicit: |Δq0|, |Δq1|, |Δr| at most {:.1e} {:.1e} {:.1e}", worst[0], worst[1], worst[2]);
    assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
}

/// The same arm holding the mass at its tip with its joint 1 also held by a stiff grounded
/// `fric_k` (K = 1e6, F = 2 N·m; ω T = 10.9 on the joint): the robot holds coupled laws on two
/// ports, and each is a point of its mechanism in the mass's group, joined by the mobility
/// between them (G_p H⁻¹ G_qᵀ, `Admittance::stage_mobility`). Before, a robot took part in a
/// group through one port only; with two, the tip's element stayed a Jacobi sweep inside the
/// robot's own stage while `check` said "held implicitly": q0 3.7e-2 rad and the mass 3.1e-2 m
/// off an explicit run at 5e-6 s after 1 s. Now within 1e-6.
#[test]
fn a_robot_with_coupled_laws_on_two_ports_solves_them_with_its_group() {
    let system = |step: f64, hold: &str| {
        let mut v = arm_holding_a_mass(step, hold);
        v["components"]["jf"] = json!({"type": "fric_k", "K": 1e6, "B": 0.1, "F": 2.0});
        v["connections"].as_array_mut().expect("a list").extend([json!({"from": "jf.a", "to": "ground"}), json!({"from": "jf.b", "to": "arm.joint1"})]);
        v["output"]["signals"]["j"] = json!("jf.e");
        v
    };
    let held = system(1e-3, "auto");
    assert_eq!(warnings(&held), Vec::<String>::new());
    let reference = system(5e-6, "explicit");
    assert_eq!(warnings(&reference), Vec::<String>::new(), "the reference is explicitly stable");
    let (a, b) = (run_value(&held), run_value(&reference));
    let worst = worst_differences(&a, &b, &["q0", "q1", "x", "y"]);
    assert!(col(&a, "e").iter().all(|e| e.abs() < F / K), "the tip's element slipped");
    assert!(col(&a, "j").iter().all(|e| e.abs() < 2.0 / 1e6), "the joint's element slipped");
    eprintln!("arm holding a mass, joint 1 held too, T = 1e-3 against 5e-6 explicit: |Δq0|, |Δq1|, |Δx|, |Δy| at most {:.1e} {:.1e} {:.1e} {:.1e}", worst[0], worst[1], worst[2], worst[3]);
    assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
}

/// The arm holding the mass at its tip and its joint 0 held to a rotor (the two cases above at
/// once): the robot joins both bodies into one group, a point of its mechanism at each port.
/// Before, with coupled laws on two ports it took part in no group: `check` warned (the pair
/// arm–rotor, spectral radius 1.0000 > 1) and the run went 0.67 rad (q0) and 1.3 rad (q1) off
/// an explicit run at 2e-6 s; now within 1e-4 rad (the tip case's first-order error).
#[test]
fn a_robot_joined_to_two_bodies_solves_both_in_one_group() {
    let system = |step: f64, hold: &str| {
        let mut v = arm_holding_a_mass(step, hold);
        v["components"]["rotor"] = json!({"type": "mass", "mass": 0.01, "force": 0.2, "init": {"q": 0.3}});
        v["components"]["g"] = json!({"type": "kikuuwe_c", "K": 1e6, "B": 0.1, "F": 5.0});
        v["connections"].as_array_mut().expect("a list").extend([json!({"from": "g.a", "to": "arm.joint0"}), json!({"from": "g.b", "to": "rotor"})]);
        v["output"]["signals"]["r"] = json!("rotor.q");
        v
    };
    let held = system(1e-3, "auto");
    assert_eq!(warnings(&held), Vec::<String>::new());
    let reference = system(2e-6, "explicit");
    assert_eq!(warnings(&reference), Vec::<String>::new(), "the reference is explicitly stable");
    let (a, b) = (run_value(&held), run_value(&reference));
    let worst = worst_differences(&a, &b, &["q0", "q1", "x", "y", "r"]);
    eprintln!("arm holding a mass and joined to a rotor, T = 1e-3 against 2e-6 explicit: |Δq0|, |Δq1|, |Δx|, |Δy|, |Δr| at most {:.1e} {:.1e} {:.1e} {:.1e} {:.1e}", worst[0], worst[1], worst[2], worst[3], worst[4]);
    assert!(worst.iter().all(|w| *w < 1e-4), "off by {worst:?}");
}

/// A stiff `fric_k` attached at an offset point of a rigid body is coupled at its lever: the
/// law carries the point it acts at (`StageLaw::Friction`'s `at`), and the body's stage takes
/// its moment. A free 1 kg body held at x = 0.5 m and x = −0.2 m by two `fric_k` (K = 1e8,
/// T = 1e-3), pushed by 2 N along y at its centre of mass: the two share the push by their
/// levers, 2·0.2/0.7 and 2·0.5/0.7 N, and the body holds (position and attitude change by
/// rounding only, ≤ 1e-18). With the law taken at the centre of mass (measured on the way)
/// its turning was left to the explicit stiff springs: both elements at their 5 N limit,
/// the body slipping.
#[test]
fn a_stiff_element_at_an_offset_of_a_rigid_body_is_held_at_its_lever() {
    let v = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
        "output": {"interval": 0.01, "signals": {"x": "body.p[0]", "y": "body.p[1]", "q3": "body.q[3]", "f1": "p1.f[1]", "f2": "p2.f[1]"}},
        "components": {
            "body": {"type": "rigid_body", "mass": 1.0, "inertia": [0.01, 0.01, 0.01]},
            "p1": {"type": "fric_k", "domain": "point3", "K": 1e8, "B": 1.0, "F": 5.0},
            "p2": {"type": "fric_k", "domain": "point3", "K": 1e8, "B": 1.0, "F": 5.0},
            "push": {"type": "force_source", "domain": "point3", "force": [0, 2.0, 0]}
        },
        "connections": [
            {"from": "p1.a", "to": "ground", "at": [0.5, 0, 0]}, {"from": "p1.b", "to": "body", "at": [0.5, 0, 0]},
            {"from": "p2.a", "to": "ground", "at": [-0.2, 0, 0]}, {"from": "p2.b", "to": "body", "at": [-0.2, 0, 0]},
            {"from": "push.body", "to": "body"}
        ]
    });
    assert_eq!(warnings(&v), Vec::<String>::new());
    let rec = run_value(&v);
    let last = rec.time.len() - 1;
    let (f1, f2) = (col(&rec, "f1")[last], col(&rec, "f2")[last]);
    eprintln!("body held at two offsets: shares {f1} N and {f2} N (levers: {}, {})", 0.4 / 0.7, 1.0 / 0.7);
    assert!((f1 - 0.4 / 0.7).abs() < 1e-12 && (f2 - 1.0 / 0.7).abs() < 1e-12, "shares {f1}, {f2}");
    let from = rec.time.iter().position(|&t| t >= 0.2).expect("rows");
    for s in ["x", "y", "q3"] {
        let c = col(&rec, s);
        let moved = c[from..].iter().map(|v| (v - c[from]).abs()).fold(0.0, f64::max);
        assert!(moved <= 1e-18, "{s} moves {moved:e}");
    }
}

/// Coulomb friction with a viscous part couples too: while the element slides its force is
/// (57)'s (F c + D ‖x‖)/(c + D) along x (exact for this law), and the mass's stage solves it in
/// closed form. A 1 kg mass pushed by 3 N, launched at 1 m/s against `kikuuwe_c` (F = 5 N,
/// D = 2 N·s/m, K = 1e7, B = 1; T = 1e-3 and 5e-4, ω T = 3.2 and 1.6, both coupled): v̇ =
/// 3 − 5 − 2v, so v = 2e^(−2t) − 1 stops at ln 2/2 = 0.3466 s after (1 − ln 2)/2 = 0.1534 m,
/// and then holds the push on its spring (e = 3/K) bit for bit. The coupled regime is first
/// order: the rest position is 2.3e-4 m off at T = 1e-3, half that at 5e-4. Before, an element
/// with a viscous part was not coupled and diverged.
#[test]
fn stiff_coulomb_friction_with_a_viscous_part_is_held_implicitly() {
    let (t_stop, x_stop) = (2f64.ln() / 2.0, (1.0 - 2f64.ln()) / 2.0);
    let run = |step: f64| {
        let v = json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
            "output": {"interval": step, "signals": {"q": "m.q", "v": "m.v", "e": "f.e"}},
            "components": {"m": {"type": "mass", "mass": 1.0, "force": 3.0, "init": {"v": 1.0}},
                           "f": {"type": "kikuuwe_c", "K": K, "B": 1.0, "F": F, "D": 2.0}},
            "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}]
        });
        let (sim, plan) = build_value(&v);
        let found = stiction::framework::system::diagnostics(&sim, &plan);
        assert!(found.iter().any(|d| matches!(d, Diagnostic::Info(i) if i.contains("held implicitly"))), "T = {step}: {found:?}");
        let rec = run_value(&v);
        let (q, u, e) = (col(&rec, "q"), col(&rec, "v"), col(&rec, "e"));
        let stop = u.iter().position(|&v| v <= 1e-12).map(|i| rec.time[i]).expect("it stops");
        let from = rec.time.iter().position(|&t| t >= 0.4).expect("rows");
        assert!(q[from..].iter().all(|&x| x == q[from]), "T = {step}: creeps");
        assert!((e[from] - 3.0 / K).abs() < 1e-12, "T = {step}: e = {}", e[from]);
        eprintln!("kikuuwe_c with D = 2, K = 1e7, T = {step}: stops at {stop} s (analytic {t_stop:.4}), rests at {:.7} m (analytic {x_stop:.7})", q[from]);
        (stop, q[from] - x_stop)
    };
    let ((stop1, off1), (stop2, off2)) = (run(1e-3), run(5e-4));
    assert!((stop1 - t_stop).abs() <= 3e-3 && (stop2 - t_stop).abs() <= 1.5e-3, "stops at {stop1}, {stop2}");
    assert!(off1.abs() < 3e-4 && (1.7..2.3).contains(&(off1 / off2)), "rest off by {off1:e}, {off2:e}: not first order");
}

/// A `penalty_joint`'s translational spring is held implicitly with the two links it joins
/// where RK4 would not keep it stable (its stage force at the separation advanced by τ (v + Δ),
/// as (19)'s element; the links' group solves the stage): Simulation III's arm
/// (examples/two_link_penalty.json, K = 1e6, explicitly stable only below 2.8e-4 s) at
/// T = 1 ms follows the example's run at 0.1 ms within 2e-3 rad at 5 s and 9.9 s, with its
/// joints' articulation points within 1e-7 m of each other, and `check` reports both joints
/// held implicitly without a warning (their bending springs and twist friction too, past
/// RK4's limits on the links' rotation). At the example's step nothing is coupled.
#[test]
fn a_stiff_penalty_joint_is_held_implicitly_with_its_links() {
    let text = std::fs::read_to_string(example("two_link_penalty.json")).expect("example");
    let arm = |step: f64| {
        let mut v: Value = serde_json::from_str(&text).expect("json");
        v["solver"]["step"] = json!(step);
        v["output"]["interval"] = json!(0.1);
        v
    };
    let infos = |v: &Value| {
        let (sim, plan) = build_value(v);
        stiction::framework::system::diagnostics(&sim, &plan)
            .into_iter()
            .filter(|d| matches!(d, Diagnostic::Info(i) if i.contains("held implicitly")))
            .count()
    };
    assert_eq!(infos(&arm(1e-4)), 0, "coupled at the example's step");
    let coarse = arm(1e-3);
    assert_eq!(warnings(&coarse), Vec::<String>::new());
    // Each joint's translational spring, bending spring and twist friction.
    assert_eq!(infos(&coarse), 6, "both joints held implicitly");
    let (fine, coarse) = (run_value(&arm(1e-4)), run_value(&coarse));
    for t in [5.0, 9.9] {
        let row = |rec: &Recorder| rec.time.iter().position(|&s| (s - t).abs() < 1e-9).expect("row");
        for s in ["theta0", "theta1"] {
            let (a, b) = (col(&fine, s)[row(&fine)], col(&coarse, s)[row(&coarse)]);
            eprintln!("Sim III at 1 ms against 0.1 ms, {s}({t}) = {b:.6} against {a:.6}");
            assert!((a - b).abs() < 2e-3, "{s}({t}): {b} against {a}");
        }
        for s in ["gap1_x", "gap1_y"] {
            assert!(col(&coarse, s)[row(&coarse)].abs() < 1e-7, "{s}({t})");
        }
    }
}

/// `check` never calls a stiff system stable that then fails: every RK4 example (without
/// files beside it) with the stiffness of its friction elements and contacts raised 1000-fold
/// either gets a stability warning from `check` or runs to its end (at most 2 s) with every
/// output finite. Sim I's sphere (which flew off its floor), Sim II's joints (which crept with
/// warnings), the stack and the sphere on its cart (which became non-finite: contacts between
/// two bodies, now solved as groups), the conveyor and the pinch (contacts with a prescribed
/// motion, which warned) and the penalty-joint arm (which became non-finite) now run without
/// one: every example does.
#[test]
fn a_thousand_times_stiffer_example_warns_or_runs() {
    let (mut warned, mut ran) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(example("")).expect("examples") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if path.extension().is_none_or(|e| e != "json") || [".csv\"", ".fmu\"", ".ssp\"", "\"fmus\""].iter().any(|f| text.contains(f)) {
            continue;
        }
        let Ok(mut v) = serde_json::from_str::<Value>(&text) else { continue };
        if v["solver"]["method"].as_str().unwrap_or("rk4") != "rk4" || v["components"].as_object().is_none() {
            continue;
        }
        let mut stiffened = false;
        for (_, c) in v["components"].as_object_mut().expect("components").iter_mut() {
            let springs = ["spring_damper", "spring"].contains(&c["type"].as_str().unwrap_or(""));
            if let (Some(k), false) = (c["K"].as_f64(), springs) {
                c["K"] = json!(k * 1e3);
                stiffened = true;
            }
        }
        if !stiffened {
            continue;
        }
        let stop = v["solver"]["stop_time"].as_f64().unwrap_or(1.0).min(2.0);
        v["solver"]["stop_time"] = json!(stop);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !warnings(&v).is_empty() {
            warned.push(name);
            continue;
        }
        let (mut sim, plan) = build_value(&v);
        let mut rec = Recorder::default();
        let run = sim.run(&plan, &mut rec, &mut |_| {});
        assert!(run.is_ok(), "{name}: check was silent, the run failed: {run:?}");
        assert!(rec.rows.iter().flatten().all(|x| x.is_finite()), "{name}: check was silent, an output is not finite");
        ran.push(name);
    }
    warned.sort();
    ran.sort();
    eprintln!("1000× stiffer: ran without a warning {ran:?}; warned {warned:?}");
    for held in ["rolling_sphere.json", "two_link_fricK.json", "ramp_models.json", "stack.json", "sphere_on_cart.json", "conveyor.json", "pinch_lift.json", "two_link_penalty.json"] {
        assert!(ran.iter().any(|n| n == held), "{held} did not run without a warning: ran {ran:?}, warned {warned:?}");
    }
}

/// g(v) of a Stribeck curve: `fc` + (`fs` − `fc`) exp(−(v/`vs`)²).
fn stribeck_level(fc: f64, fs: f64, vs: f64, v: f64) -> f64 {
    fc + (fs - fc) * (-(v / vs).powi(2)).exp()
}

/// v and x at `t` of m v̇ = `f`(v), v(0) = `v0`, by RK4 at 1e-6 s (the reference).
fn reference(f: impl Fn(f64) -> f64, v0: f64, t: f64) -> (f64, f64) {
    let (h, mut v, mut x) = (1e-6, v0, 0.0);
    for _ in 0..(t / h).round() as usize {
        let (k1, l1) = (f(v), v);
        let (k2, l2) = (f(v + 0.5 * h * k1), v + 0.5 * h * k1);
        let (k3, l3) = (f(v + 0.5 * h * k2), v + 0.5 * h * k2);
        let (k4, l4) = (f(v + h * k3), v + h * k3);
        v += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
        x += h / 6.0 * (l1 + 2.0 * l2 + 2.0 * l3 + l4);
    }
    (v, x)
}

/// Issue 43, item 3, friction laws on a Stribeck curve: a stiff `kikuuwe_c` (K = 1e7, 1 kg,
/// T = 1e-3: ω T = 3.16) and a stiff `body_contact` (K = 1e8) under a Stribeck law are held
/// implicitly with their mass, the stage law's level g at the slider's speed (57) as the
/// element's own Φ_Z: no warning; below the breakaway level the mass holds bit for bit on
/// its spring; past it it slides as m v̇ = f − g(v) says. Before, they stayed explicit:
/// `check` warned and the runs diverged.
#[test]
fn stiff_elements_on_a_stribeck_curve_are_held_implicitly() {
    let (fc, fs, vs) = (3.0, 5.0, 0.1);
    let element = |push: f64| {
        json!({
            "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0},
            "output": {"signals": {"q": "m.q", "v": "m.v", "e": "f.e"}},
            "components": {"m": {"type": "mass", "mass": 1.0, "force": push},
                           "f": {"type": "kikuuwe_c", "K": K, "B": 1.0, "law": "stribeck", "Fc": fc, "Fs": fs, "vs": vs}},
            "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}]
        })
    };
    // Held below Fs: the spring at the push, the position constant bit for bit.
    let held = element(4.5);
    assert_eq!(warnings(&held), Vec::<String>::new());
    // (Explicit, `"hold": "explicit"`, `check` warns: ω T = 3.16.)
    let mut explicit = held.clone();
    explicit["solver"]["hold"] = json!("explicit");
    assert!(!warnings(&explicit).is_empty(), "no warning held explicitly");
    let rec = run_value(&held);
    let (q, e) = (col(&rec, "q"), col(&rec, "e"));
    let from = rec.time.iter().position(|&t| t >= 0.1).expect("rows");
    assert!(q[from..].iter().all(|&x| x == q[from]), "creeps: {} .. {}", q[from], q[q.len() - 1]);
    // (The mass first swings past the load on its spring and slips a little: q ≠ e.)
    assert!((e[from] - 4.5 / K).abs() < 1e-12 * 4.5 / K * 1e3, "e = {}", e[from]);
    // Broken away past Fs: the velocity of m v̇ = 6 − g(v).
    let slides = element(6.0);
    assert_eq!(warnings(&slides), Vec::<String>::new());
    let rec = run_value(&slides);
    let (q, v) = (col(&rec, "q"), col(&rec, "v"));
    assert!(q.iter().chain(&v).all(|z| z.is_finite()), "not finite");
    let (v_ref, q_ref) = reference(|v| 6.0 - stribeck_level(fc, fs, vs, v), 0.0, 1.0);
    let n = v.len() - 1;
    eprintln!("kikuuwe_c on a Stribeck curve, K = 1e7, T = 1e-3: v(1 s) = {:.6} (reference {v_ref:.6}), q = {:.6} ({q_ref:.6})", v[n], q[n]);
    assert!((v[n] - v_ref).abs() < 5e-3 * v_ref && (q[n] - q_ref).abs() < 5e-3 * q_ref, "v {} q {}", v[n], q[n]);

    // A point launched at 1 m/s on a stiff body contact to the ground, μ = 0.5 falling from
    // μ_s = 0.8 at rest (v_s = 0.05 m/s): stops where v̇ = −μ(v) g says, and holds.
    let (g, k, v0) = (9.81, 1e8, 1.0);
    let contact = json!({
        "solver": {"method": "rk4", "step": 1e-3, "stop_time": 0.5},
        "output": {"signals": {"x": "a.p[0]", "z": "a.p[2]"}},
        "components": {
            "a": {"type": "point_mass", "mass": 1.0, "gravity": [0, 0, -g], "init": {"p": [0, 0, -g / k], "v": [v0, 0, 0]}},
            "c": {"type": "body_contact", "K": k, "B": 1.0, "mu": 0.5, "law": "stribeck", "mu_s": 0.8, "vs": 0.05, "domain_b": "point3"}
        },
        "connections": [{"from": "c.a", "to": "a"}, {"from": "c.b", "to": "ground"}]
    });
    assert_eq!(warnings(&contact), Vec::<String>::new());
    let rec = run_value(&contact);
    let (x, z) = (col(&rec, "x"), col(&rec, "z"));
    // The distance to the stop: integrate v̇ = −μ(v) g until v reaches 0 (at 0.2 s or so).
    let mu = |v: f64| stribeck_level(0.5, 0.8, 0.05, v);
    let (mut vr, mut xr, h) = (v0, 0.0, 1e-6);
    while vr > 0.0 {
        let k1 = -mu(vr) * g;
        let k2 = -mu((vr + 0.5 * h * k1).max(0.0)) * g;
        xr += h * (vr + 0.5 * h * k1).max(0.0);
        vr += h * k2;
    }
    let from = rec.time.iter().position(|&t| t >= 0.3).expect("rows");
    eprintln!("body_contact on a Stribeck curve, K = 1e8, T = 1e-3: slides {:.6} m (reference {xr:.6})", x[from]);
    assert!((x[from] - xr).abs() < 2e-3 * xr, "slides {} against {xr}", x[from]);
    assert!(x[from..].iter().all(|&v| v == x[from]) && z[from..].iter().all(|&v| v == z[from]), "creeps");
}

/// Issue 43, item 3, friction levels from a table: a stiff `kikuuwe_c` (K = 1e7, 1 kg,
/// T = 1e-3: ω T = 3.16) whose levels fall from 5 N at rest to 3 N at 0.2 m/s and rise to
/// 4 N at 2 m/s is held implicitly with its mass as a Stribeck one is (the stage law's level
/// interpolated in the table at the slider's speed, its segment's slope in Newton's
/// Jacobian): no warning; under 4.5 N the mass holds bit for bit on its spring; under 6 N it
/// breaks away and slides as m v̇ = 6 − g(v) says. Before, a table law stayed explicit:
/// `check` warned (rule (63)) and the held mass crept.
#[test]
fn a_stiff_element_on_a_table_of_levels_is_held_implicitly() {
    let (speed, levels) = ([0.0, 0.05, 0.2, 2.0], [5.0, 4.0, 3.0, 4.0]);
    let table = |v: f64| {
        let i = speed.iter().rposition(|&s| s <= v).expect("from 0");
        if i + 1 == speed.len() {
            return levels[i];
        }
        levels[i] + (levels[i + 1] - levels[i]) * (v - speed[i]) / (speed[i + 1] - speed[i])
    };
    let element = |push: f64, hold: &str| {
        json!({
            "solver": {"method": "rk4", "step": 1e-3, "stop_time": 1.0, "hold": hold},
            "output": {"signals": {"q": "m.q", "v": "m.v", "e": "f.e"}},
            "components": {"m": {"type": "mass", "mass": 1.0, "force": push},
                           "f": {"type": "kikuuwe_c", "K": K, "B": 1.0, "law": "table", "speed": speed, "levels": levels}},
            "connections": [{"from": "f.a", "to": "ground"}, {"from": "f.b", "to": "m"}]
        })
    };
    let held = element(4.5, "auto");
    assert_eq!(warnings(&held), Vec::<String>::new());
    assert!(!warnings(&element(4.5, "explicit")).is_empty(), "no warning held explicitly");
    let rec = run_value(&held);
    let (q, e) = (col(&rec, "q"), col(&rec, "e"));
    let from = rec.time.iter().position(|&t| t >= 0.1).expect("rows");
    // The spring holds the push to rounding: K e = 4.5 N is not exact in floating point,
    // and the velocity that balances the rest, (4.5 − K e)/(B + τK) ~ 1e-19 m/s, moves the
    // tiny q (6.4e-7 m: an ulp of 1e-22 m) by an ulp a step. (The Stribeck case above rests
    // with half of that, below half an ulp of its q.)
    let drift = q[from..].iter().map(|&x| (x - q[from]).abs()).fold(0.0, f64::max);
    assert!(drift < 1e-18, "creeps {drift:e} m: {} .. {}", q[from], q[q.len() - 1]);
    assert!((e[from] - 4.5 / K).abs() < 1e-9 * 4.5 / K, "e = {}", e[from]);
    // Held explicitly instead, the same mass creeps (1e-4 m in 1 s).
    let rec = run_value(&element(4.5, "explicit"));
    let q_explicit = col(&rec, "q");
    let explicit = (q_explicit[q_explicit.len() - 1] - q_explicit[from]).abs();
    eprintln!("kikuuwe_c on a table of levels, K = 1e7, T = 1e-3, held by 4.5 N: moves {drift:.2e} m in 0.9 s (explicit: {explicit:.2e} m)");
    assert!(explicit > 1e-6, "held explicitly it moves {explicit:e} m");

    let slides = element(6.0, "auto");
    assert_eq!(warnings(&slides), Vec::<String>::new());
    let rec = run_value(&slides);
    let (q, v) = (col(&rec, "q"), col(&rec, "v"));
    assert!(q.iter().chain(&v).all(|z| z.is_finite()), "not finite");
    let (v_ref, q_ref) = reference(|v| 6.0 - table(v), 0.0, 1.0);
    let n = v.len() - 1;
    eprintln!("kikuuwe_c on a table of levels, K = 1e7, T = 1e-3: v(1 s) = {:.6} (reference {v_ref:.6}), q = {:.6} ({q_ref:.6})", v[n], q[n]);
    assert!((v[n] - v_ref).abs() < 5e-3 * v_ref && (q[n] - q_ref).abs() < 5e-3 * q_ref, "v {} q {}", v[n], q[n]);
}

/// Simulation III's arm (examples/two_link_penalty.json) with stiff rotation in its joints,
/// `stop` s, output every 0.05 s: bending springs K_rot and twist friction friction_K on both
/// joints, link 1 spinning about its length at `spin` rad/s (which excites the bending), the
/// actuators' `torque`, the solver's `hold` and `step`.
fn stiff_arm(k_rot: f64, friction_k: f64, spin: f64, torque: Value, hold: &str, step: f64, stop: f64) -> Value {
    let text = std::fs::read_to_string(example("two_link_penalty.json")).expect("example");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    for j in ["joint0", "joint1"] {
        v["components"][j]["K_rot"] = json!(k_rot);
        v["components"][j]["friction_K"] = json!(friction_k);
        v["components"][j]["torque"] = torque.clone();
    }
    v["components"]["link1"]["init"]["w"] = json!([spin, 0.0, 0.0]);
    v["solver"] = json!({"method": "rk4", "step": step, "stop_time": stop, "hold": hold});
    v["output"]["interval"] = json!(0.05);
    v
}

/// The smallest "use T < X s" of `check`'s warnings on `v`.
fn largest_step_warned(v: &Value) -> f64 {
    let found = warnings(v);
    let steps = found.iter().filter_map(|w| w.split("use T < ").nth(1)?.split(' ').next()?.parse::<f64>().ok());
    steps.fold(f64::INFINITY, f64::min)
}

/// Issue 43, items 1 and 3: a `penalty_joint`'s bending spring and twist friction act on the
/// links' rotation, which `check` did not model: the arm with K_rot = 1e6 and link 1
/// spinning at 0.1 rad/s about its length became non-finite within 0.4 ms at T = 1e-4 while
/// `check` said "no warnings". Now both springs are weighed on the links' rotational
/// inertias (summed along the chain of joints, as springs on masses are): held explicitly,
/// `check` warns with the largest stable step, at 0.95 of which the arm runs and at 1.2 of
/// which it diverges; by default they are held implicitly with the links, and the arm at
/// T = 1e-4 follows an explicit run at 1e-5 within 1e-11 rad. Twist friction of
/// friction_K = 1e7 holding 0.3 N·m (F = 0.5) keeps both joint angles constant to 1e-18 rad
/// held implicitly; explicitly `check` warns and they creep.
#[test]
fn a_penalty_joints_stiff_bending_and_twist_are_weighed_and_held() {
    let spin = |hold: &str, step: f64, stop: f64| stiff_arm(1e6, 5e3, 0.1, json!({"piecewise": [{"until": 4, "value": "min(0.52, 0.3*t)"}, {"value": 0.3}]}), hold, step, stop);
    let limit = largest_step_warned(&spin("explicit", 1e-4, 0.1));
    eprintln!("penalty arm, K_rot = 1e6, explicit: check's largest stable step {limit:e} s");
    assert!(limit > 1e-5 && limit < 1e-4, "no warning with a step: {limit}");
    let fails = |v: &Value| {
        let (mut sim, plan) = build_value(v);
        let mut rec = Recorder::default();
        let run = sim.run(&plan, &mut rec, &mut |_| {});
        run.is_err() || rec.rows.iter().flatten().any(|x| !x.is_finite() || x.abs() > 1.0)
    };
    assert!(!fails(&spin("explicit", 0.95 * limit, 0.1)), "diverges below check's step");
    assert!(fails(&spin("explicit", 1.2 * limit, 0.1)), "holds past check's step");
    let held = spin("auto", 1e-4, 0.5);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let (coarse, fine) = (run_value(&held), run_value(&spin("explicit", 1e-5, 0.5)));
    for s in ["theta0", "theta1"] {
        let (a, b) = (col(&coarse, s), col(&fine, s));
        let off = a.iter().zip(&b).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!("penalty arm, K_rot = 1e6, held at T = 1e-4 against explicit at 1e-5: {s} within {off:.2e} rad");
        assert!(off < 1e-11 && a.iter().all(|x| x.is_finite()), "{s} off by {off:e}");
    }

    let twist = |hold: &str| stiff_arm(1e3, 1e7, 0.0, json!(0.3), hold, 1e-4, 1.0);
    assert!(largest_step_warned(&twist("explicit")) < 1e-4, "no warning held explicitly");
    let held = twist("auto");
    assert_eq!(warnings(&held), Vec::<String>::new());
    let rec = run_value(&held);
    let from = rec.time.iter().position(|&t| t >= 0.2).expect("rows");
    for s in ["theta0", "theta1"] {
        let q = col(&rec, s);
        let drift = q[from..].iter().map(|&x| (x - q[from]).abs()).fold(0.0, f64::max);
        eprintln!("penalty arm, friction_K = 1e7 holding 0.3 N·m at T = 1e-4: {s} = {:.6e} rad, moves {drift:.1e} rad from 0.2 s to 1 s", q[from]);
        assert!(drift < 1e-18 && (q[from] - 0.3 / 1e7).abs() < 1e-12, "{s} = {} moves {drift:e}", q[from]);
    }
    let rec = run_value(&twist("explicit"));
    let q = col(&rec, "theta1");
    assert!((q[q.len() - 1] - q[from]).abs() > 1e-6, "held explicitly it does not creep");
}

/// A `gear` (γu = 0.2, γv = 0.5: backdrivable, m = M = 1 kg·m², output damping 10) driven on its
/// input by `drive` N·m, its output joined to a 0.05 kg·m² load (pushed by 0.5 N·m) through
/// a stiff `kikuuwe_c` (K = 1e6, B = `b`, F = 100), RK4 at `step` for `stop` s. Signals: the
/// gear's q and v, the load's q and v, the element's e.
fn gear_holding_a_load(step: f64, stop: f64, drive: Value, b: f64) -> Value {
    json!({
        "solver": {"method": "rk4", "step": step, "stop_time": stop},
        "output": {"interval": 1e-3, "signals": {"p": "gear.q", "v": "gear.v", "l": "load.q", "lv": "load.v", "e": "shaft.e"}},
        "components": {
            "gear": {"type": "gear", "gamma_u": 0.2, "gamma_v": 0.5, "m": 1.0, "M": 1.0, "damping": 10.0, "init": {"q": 0.3}},
            "actuator": {"type": "force_source", "force": drive},
            "load": {"type": "mass", "mass": 0.05, "force": 0.5, "init": {"q": 0.3}},
            "shaft": {"type": "kikuuwe_c", "K": 1e6, "B": b, "F": 100.0}
        },
        "connections": [{"from": "actuator.body", "to": "gear.input"}, {"from": "shaft.a", "to": "gear.output"}, {"from": "shaft.b", "to": "load"}]
    })
}

/// The gear's response to a torque is set-valued (it sticks over the static set (45)): within
/// a mode of its step (44), stuck or sliding one way, it is a point of mobility W (0 stuck),
/// and the group of gear and load is solved in the mode its solution selects (gear/stage.rs).
/// Driven at −40 N·m for 0.3 s and then held at −0.3 N·m against the load's push (inside the
/// static set), the gear slows, stops at t ≈ 0.93 s and holds with v = 0.0 exactly and its angle
/// constant bit for bit, as the explicit run at 5e-6 s does, within 1e-6 rad of it. Before,
/// the element stayed explicit: `check` warned (gear–load pair, radius 782) and the run went
/// 0.5 rad off.
#[test]
fn a_gear_and_its_load_joined_by_a_stiff_element_are_solved_as_one_group() {
    let drive = json!({"piecewise": [{"until": 0.3, "value": -40.0}, {"value": -0.3}]});
    let held = gear_holding_a_load(1e-3, 2.0, drive.clone(), 1.0);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let reference = gear_holding_a_load(5e-6, 2.0, drive, 1.0);
    assert_eq!(warnings(&reference), Vec::<String>::new(), "the reference is explicitly stable");
    let (a, b) = (run_value(&held), run_value(&reference));
    let worst = worst_differences(&a, &b, &["p", "l"]);
    eprintln!("gear holding a load, T = 1e-3 against 5e-6 explicit: |Δq| {:.1e}, |Δload| {:.1e} rad", worst[0], worst[1]);
    assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
    for rec in [&a, &b] {
        let (v, p) = (col(rec, "v"), col(rec, "p"));
        let stuck: Vec<usize> = (0..rec.time.len()).filter(|&i| rec.time[i] >= 0.93).collect();
        assert!(stuck.iter().all(|&i| v[i] == 0.0), "the gear does not hold exactly");
        assert!(stuck.iter().all(|&i| p[i] == p[stuck[0]]), "the held gear's angle moved");
        assert!(rec.time.iter().zip(&v).filter(|(t, _)| **t > 0.5 && **t < 0.9).all(|(_, v)| *v != 0.0), "stuck too early");
    }
}

/// A motor rotor (0.01 kg·m²) driving the gear's input through a stiff coupling (`kikuuwe_c`,
/// K = 1e6, B = 100: ω T = 10 on the rotor at 1 ms), a load torque on the output: the input
/// port is a point of the gear with mobility κ² (1 − u γu)/((1 − u ρ̂)(m + M)) in each mode.
/// Within 1e-3 rad of the explicit run at 2e-6 s (first order: 1.4e-4); before, `check` warned
/// and the run went 3.9 rad off. (With the coupling lightly damped, B = 0.1, the explicit run
/// rings at 1.6 kHz after the drive's step and the gear's load-dependent friction averages
/// the ringing: 1.3e-2 rad apart at 1 ms and at 0.5 ms alike, which is the ringing the
/// implicit stage does not resolve, not its error.)
#[test]
fn a_rotor_on_a_stiff_coupling_drives_the_gear_input_in_one_group() {
    let system = |step: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 2.0},
            "output": {"interval": 1e-3, "signals": {"q": "gear.q", "v": "gear.v", "r": "rotor.q"}},
            "components": {
                "gear": {"type": "gear", "gamma_u": 0.2, "gamma_v": 0.5, "m": 1.0, "M": 1.0, "damping": 1.0},
                "rotor": {"type": "mass", "mass": 0.01},
                "act": {"type": "force_source", "force": {"piecewise": [{"until": 0.5, "value": -20.0}, {"value": -0.3}]}},
                "c": {"type": "kikuuwe_c", "K": 1e6, "B": 100.0, "F": 50.0},
                "load": {"type": "force_source", "force": -0.5}
            },
            "connections": [{"from": "act.body", "to": "rotor"}, {"from": "c.a", "to": "rotor"}, {"from": "c.b", "to": "gear.input"}, {"from": "load.body", "to": "gear.output"}]
        })
    };
    let held = system(1e-3);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let (a, b) = (run_value(&held), run_value(&system(2e-6)));
    let worst = worst_differences(&a, &b, &["q", "r"]);
    eprintln!("rotor driving the gear input, T = 1e-3 against 2e-6 explicit: |Δq| {:.1e}, |Δrotor| {:.1e} rad", worst[0], worst[1]);
    assert!(worst.iter().all(|w| *w < 1e-3), "off by {worst:?}");
}

/// Stiff grounded brakes (`fric_k`, K = 1e8) on both ports of a gear driven by 8 sin 2πt N·m:
/// ω T = 7 at 1 ms. The gear solves its own stage with both laws, its two ports points of it
/// joined by the mobility between them, mode by mode. Before, `check` warned and the run went
/// 3.9e-4 rad off an explicit run at 1e-6 s; now within 2e-6 (8e-7). Where the gear stops
/// (t ≈ 0.55 s) and its torques stay in the static set it holds with v = 0.0 exactly.
#[test]
fn stiff_brakes_on_both_gear_ports_are_held_with_the_gear() {
    let system = |step: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 0.7},
            "output": {"interval": 1e-3, "signals": {"q": "gear.q", "v": "gear.v", "e": "bo.e", "f": "bi.e"}},
            "components": {
                "gear": {"type": "gear", "gamma_u": 0.2, "gamma_v": 0.5, "m": 1.0, "M": 1.0, "damping": 1.0},
                "act": {"type": "force_source", "force": "8*sin(2*pi*t)"},
                "bo": {"type": "fric_k", "K": 1e8, "B": 1.0, "F": 2.0},
                "bi": {"type": "fric_k", "K": 1e8, "B": 1.0, "F": 1.0}
            },
            "connections": [{"from": "act.body", "to": "gear.input"}, {"from": "bo.a", "to": "ground"}, {"from": "bo.b", "to": "gear.output"},
                            {"from": "bi.a", "to": "ground"}, {"from": "bi.b", "to": "gear.input"}]
        })
    };
    let held = system(1e-3);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let (a, b) = (run_value(&held), run_value(&system(1e-6)));
    let worst = worst_differences(&a, &b, &["q"]);
    eprintln!("brakes on both gear ports, T = 1e-3 against 1e-6 explicit: |Δq| {:.1e} rad", worst[0]);
    assert!(worst[0] < 2e-6, "off by {worst:?}");
    let v = col(&a, "v");
    let held_at = |t0: f64, t1: f64| a.time.iter().zip(&v).filter(|(t, _)| **t >= t0 && **t <= t1).all(|(_, v)| *v == 0.0);
    assert!(held_at(0.552, 0.562), "the stopped gear does not hold exactly");
}

/// The output of a self-locking gear (γv = 1.2) does not respond monotonically to its torque
/// (back-driven, a larger load brakes it harder): it takes no stage laws, the stiff element
/// between it and the load stays explicit, and `check` says so.
#[test]
fn a_stiff_element_on_a_self_locking_gear_output_is_explicit_and_check_warns() {
    let mut v = gear_holding_a_load(1e-3, 0.1, json!(-40.0), 1.0);
    v["components"]["gear"]["gamma_v"] = json!(1.2);
    let w = warnings(&v);
    assert!(w.iter().any(|w| w.contains("gear and load")), "no warning for the pair: {w:?}");
}

/// A model-A block (`kikuuwe_a`, 1 kg, F = 2 N, launched at 0.5 m/s) driven by 8 sin 2πt N and
/// held by `element` with K = `k`: to the ground, or joining it to a 0.05 kg mass pushed by
/// 0.5 N (`to_load`). RK4 at `step` for 2 s; signals q, v, the load's l.
fn model_a_held(step: f64, element: Value, to_load: bool) -> Value {
    let mut v = json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 2.0},
        "output": {"interval": 1e-3, "signals": {"q": "block.q", "v": "block.v"}},
        "components": {
            "block": {"type": "kikuuwe_a", "mass": 1.0, "F": 2.0, "init": {"v": 0.5}},
            "act": {"type": "force_source", "force": "8*sin(2*pi*t)"},
            "h": element
        },
        "connections": [{"from": "act.body", "to": "block"}, {"from": "h.a", "to": "block"}, {"from": "h.b", "to": "ground"}]
    });
    if to_load {
        v["components"]["load"] = json!({"type": "mass", "mass": 0.05, "force": 0.5});
        v["connections"][2] = json!({"from": "h.b", "to": "load"});
        v["output"]["signals"]["l"] = json!("load.q");
    }
    v
}

/// Model A's step (26) is set-valued in the force the same way (stuck over its static set),
/// and affine within a mode (stuck: W = 0; sliding on the friction of the stage velocity:
/// W = 1/M): a stiff element on it is held implicitly, the block solving its stage with the
/// element's law (to the ground) or with the load's group. Against explicit runs at 1e-6 and
/// 2e-6 s: a grounded `fric_k` (K = 1e8, ω T = 10): 2.1e-6 m (before 1.0e-3, `check` warning);
/// joined to the load by a `kikuuwe_c` (K = 1e6): block 7.9e-6 m, load 1.6e-4 m (before
/// 1.7e-3 and 9.0e-2 m, warnings).
#[test]
fn stiff_elements_on_a_model_a_block_are_held_with_it() {
    let grounded = json!({"type": "fric_k", "K": 1e8, "B": 1.0, "F": 3.0});
    let held = model_a_held(1e-3, grounded.clone(), false);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let (a, b) = (run_value(&held), run_value(&model_a_held(1e-6, grounded, false)));
    let worst = worst_differences(&a, &b, &["q"]);
    eprintln!("model A held by a grounded fric_k, T = 1e-3 against 1e-6 explicit: |Δq| {:.1e} m", worst[0]);
    assert!(worst[0] < 1e-5, "off by {worst:?}");
    let coupling = json!({"type": "kikuuwe_c", "K": 1e6, "B": 1.0, "F": 30.0});
    let held = model_a_held(1e-3, coupling.clone(), true);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let (a, b) = (run_value(&held), run_value(&model_a_held(2e-6, coupling, true)));
    let worst = worst_differences(&a, &b, &["q", "l"]);
    eprintln!("model A joined to a load, T = 1e-3 against 2e-6 explicit: |Δq| {:.1e}, |Δl| {:.1e} m", worst[0], worst[1]);
    assert!(worst[0] < 1e-4 && worst[1] < 1e-3, "off by {worst:?}");
}

/// A gear with stiff elements to bodies on both ports (a motor rotor on its input through a
/// coupling, a load on its output through a shaft, both `kikuuwe_c` K = 1e6: ω T = 10 and 4.5
/// at 1 ms): its two ports are points of one group joined by the mobility between them in the
/// gear's mode, κ (1 + u γv)/((1 − u ρ̂)(m + M)) and (1 − u γu)/(…) (gear/stage.rs), and the
/// mode is the one the torques of both ports at the solution select. Against the explicit
/// run at 2e-6 s: gear 4.4e-8, load 8.0e-7, rotor 2.0e-5 rad; the gear stops and holds with
/// v = 0.0 exactly and its angle constant bit for bit, as the reference does. Before, both
/// elements stayed explicit (`check` warned for both pairs) and the run went 0.56 / 0.75 /
/// 1.9 rad off; before that, each end was solved with the other at its stage motion (1.6 rad).
#[test]
fn stiff_elements_to_bodies_on_both_gear_ports_are_solved_as_one_group() {
    let system = |step: f64| {
        let drive = json!({"piecewise": [{"until": 0.3, "value": -40.0}, {"value": -0.3}]});
        let mut v = gear_holding_a_load(step, 2.0, drive, 100.0);
        v["output"]["signals"]["r"] = json!("rotor.q");
        v["components"]["rotor"] = json!({"type": "mass", "mass": 0.01, "init": {"q": 0.3}});
        v["components"]["c"] = json!({"type": "kikuuwe_c", "K": 1e6, "B": 100.0, "F": 50.0});
        v["connections"] = json!([{"from": "actuator.body", "to": "rotor"}, {"from": "c.a", "to": "rotor"}, {"from": "c.b", "to": "gear.input"},
                                  {"from": "shaft.a", "to": "gear.output"}, {"from": "shaft.b", "to": "load"}]);
        v
    };
    let held = system(1e-3);
    assert_eq!(warnings(&held), Vec::<String>::new());
    let (a, b) = (run_value(&held), run_value(&system(2e-6)));
    let worst = worst_differences(&a, &b, &["p", "l", "r"]);
    eprintln!("gear between a rotor and a load, T = 1e-3 against 2e-6 explicit: |Δq| {:.1e}, |Δload| {:.1e}, |Δrotor| {:.1e} rad", worst[0], worst[1], worst[2]);
    assert!(worst[0] < 1e-6 && worst[1] < 1e-5 && worst[2] < 1e-4, "off by {worst:?}");
    for rec in [&a, &b] {
        let (v, p) = (col(rec, "v"), col(rec, "p"));
        let stuck: Vec<usize> = (0..rec.time.len()).filter(|&i| rec.time[i] >= 1.5).collect();
        assert!(stuck.iter().all(|&i| v[i] == 0.0), "the gear does not hold exactly");
        assert!(stuck.iter().all(|&i| p[i] == p[stuck[0]]), "the held gear's angle moved");
    }
}

/// Section 6.2's two-link geared robot (links 1 m, 1 kg at each distal end, rotors 1 and 0.5
/// kg·m², γu = 0.3 / 0.2, γv = 0.4 / 0.3, joint viscosity 5) driven through its tip command by
/// (30 sin 2πt, 20 sin 3πt, 0) N, its tip gripping a 0.2 kg `point_mass` through a stuck
/// `kikuuwe_c` (dims 3, K = 1e8, B = 1000: ω T = 22 on the payload at 1 ms), optionally with a
/// stiff grounded brake on joint 0 (`fric_k`, K = 1e8, F = 6 N·m) and without the grip.
fn geared_robot_gripping(step: f64, grip: bool, brake: bool) -> Value {
    let link = |origin: f64| json!({"origin": [origin, 0, 0], "axis": [0, 0, 1], "mass": 1.0, "com": [1.0, 0, 0], "inertia": [0, 0, 0], "damping": 5.0});
    let mut v = json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
        "output": {"interval": 1e-3, "signals": {"q0": "robot.q[0]", "q1": "robot.q[1]", "v0": "robot.v[0]", "v1": "robot.v[1]"}},
        "components": {
            "robot": {"type": "geared_robot", "links": [link(0.0), link(1.0)], "tip": [1.0, 0, 0],
                      "gears": [{"m": 1.0, "gamma_u": 0.3, "gamma_v": 0.4}, {"m": 0.5, "gamma_u": 0.2, "gamma_v": 0.3}],
                      "init": {"q": [-0.2390033527628025, 1.4]}},
            "act": {"type": "force_source", "domain": "point3", "force": ["30*sin(2*pi*t)", "20*sin(3*pi*t)", 0]}
        },
        "connections": [{"from": "act.body", "to": "robot.tip_command"}]
    });
    if grip {
        v["components"]["load"] = json!({"type": "point_mass", "mass": 0.2, "init": {"p": [1.37, 0.6805, 0]}});
        v["components"]["grip"] = json!({"type": "kikuuwe_c", "dims": 3, "K": 1e8, "B": 1000.0, "F": 500.0});
        v["output"]["signals"]["px"] = json!("load.p[0]");
        v["output"]["signals"]["py"] = json!("load.p[1]");
        let c = v["connections"].as_array_mut().expect("connections");
        c.extend([json!({"from": "grip.a", "to": "robot.tip"}), json!({"from": "grip.b", "to": "load"})]);
    }
    if brake {
        v["components"]["brake"] = json!({"type": "fric_k", "K": 1e8, "B": 1.0, "F": 6.0});
        let c = v["connections"].as_array_mut().expect("connections");
        c.extend([json!({"from": "brake.a", "to": "ground"}), json!({"from": "brake.b", "to": "robot.joint0"})]);
    }
    v
}

/// A geared robot's response to its port forces is that of axproj (69), set-valued (joints
/// stick over their static sets) but affine within a pattern of joint modes: its tip is a
/// point of the group with the payload, pattern by pattern (robot/geared/stage.rs). Against
/// the explicit run at 5e-6 s: joints within 1.7e-8 / 4.8e-8 rad, payload within 4.6e-8 m,
/// and the joints stick at the same samples (v = 0.0 exactly) as the reference's. Before,
/// the grip stayed explicit: `check` warned and the arm ran 0.8 rad off.
#[test]
fn a_geared_robot_and_its_stiffly_gripped_payload_are_solved_as_one_group() {
    let (held, reference) = (geared_robot_gripping(1e-3, true, false), geared_robot_gripping(5e-6, true, false));
    let (a, b, worst) = against_reference("geared robot gripping a payload, T = 1e-3 against 5e-6 explicit", &held, &reference, &["q0", "q1", "px", "py"]);
    assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
    for name in ["v0", "v1"] {
        let stuck = |r: &Recorder| col(r, name).iter().filter(|v| **v == 0.0).count();
        assert_eq!(stuck(&a), stuck(&b), "{name}: samples held exactly");
        assert!(stuck(&b) > 20, "{name}: the reference's joint sticks");
    }
}

/// [`geared_robot_gripping`]'s robot driven at its tip by the same forces, with a stiff
/// element on its tip command (a force there is realised by the motors, τu += Jᵀ f, and the
/// port moves with the tip): a grounded `kikuuwe_c` (dims 3, K = 1e8, F = 25 N: the motors
/// holding the tip where it is, a virtual brake), or one (K = 1e7) pulling a 0.2 kg payload.
fn geared_robot_commanded(step: f64, payload: bool) -> Value {
    let mut v = geared_robot_gripping(step, false, false);
    v["connections"] = json!([{"from": "act.body", "to": "robot.tip"}]);
    let c = if payload {
        v["components"]["load"] = json!({"type": "point_mass", "mass": 0.2, "init": {"p": [1.37, 0.6805, 0]}});
        v["output"]["signals"]["px"] = json!("load.p[0]");
        v["output"]["signals"]["py"] = json!("load.p[1]");
        json!([{"from": "e.a", "to": "robot.tip_command"}, {"from": "e.b", "to": "load"}])
    } else {
        json!([{"from": "e.a", "to": "ground"}, {"from": "e.b", "to": "robot.tip_command"}])
    };
    let (k, f) = if payload { (1e7, 500.0) } else { (1e8, 25.0) };
    v["components"]["e"] = json!({"type": "kikuuwe_c", "dims": 3, "K": k, "B": 100.0, "F": f});
    let list = v["connections"].as_array_mut().expect("connections");
    list.extend(c.as_array().expect("two connections").iter().cloned());
    v
}

/// The tip command takes stage laws as the tip does (the same point of the robot, its force
/// through the motors): against explicit 5e-6 s runs, the virtual brake within 5.3e-9 rad,
/// its joints held at the reference's samples to within 2 (the previous landing: no `check`
/// warning, yet 5.3e-4 rad off: its check did not see the element), the payload's pull within
/// 7.3e-8 rad and 1.0e-7 m (before: `check` warned, 0.85 rad off).
#[test]
fn a_stiff_element_on_a_geared_robots_tip_command_is_held_with_the_robot() {
    for payload in [false, true] {
        let names: &[&str] = if payload { &["q0", "q1", "px", "py"] } else { &["q0", "q1"] };
        let (held, reference) = (geared_robot_commanded(1e-3, payload), geared_robot_commanded(5e-6, payload));
        let (a, b, worst) = against_reference(&format!("geared robot with a stiff element on its tip command (payload: {payload}), T = 1e-3 against 5e-6 explicit"), &held, &reference, names);
        assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
        if !payload {
            for name in ["v0", "v1"] {
                let stuck = |r: &Recorder| col(r, name).iter().filter(|v| **v == 0.0).count() as i64;
                assert!((stuck(&a) - stuck(&b)).abs() <= 3, "{name}: held samples {} against {}", stuck(&a), stuck(&b));
                assert!(stuck(&b) > 100, "{name}: the reference's joint sticks");
            }
        }
    }
}

/// A stiff grounded brake on joint 0 (K = 1e8: ω T = 4.8 on the joint at 1 ms), alone (the
/// robot solves its own stage with the brake's law) and with the tip's grip (joint and tip
/// two points of the robot in the payload's group, joined by the pattern's mobilities):
/// within 2.1e-4 rad of the explicit 5e-6 s run (first order through the brake's stick–slip:
/// 1.0e-4 at 5e-4 s). Before: `check` warned, and with the grip the arm ran 0.79 rad off.
#[test]
fn a_stiff_brake_on_a_geared_robot_joint_is_held_with_the_robot() {
    for grip in [false, true] {
        let (held, reference) = (geared_robot_gripping(1e-3, grip, true), geared_robot_gripping(5e-6, grip, true));
        let (_, _, worst) = against_reference(&format!("geared robot with a braked joint (grip: {grip}), T = 1e-3 against 5e-6 explicit"), &held, &reference, &["q0", "q1"]);
        assert!(worst.iter().all(|w| *w < 1e-3), "off by {worst:?}");
    }
}

/// A motor rotor (0.01 kg·m²) driving the geared robot's motor 0 through a stiff coupling
/// (`kikuuwe_c`, K = 1e6, B = 100: ω T = 10 on the rotor at 1 ms): the motor port is a point
/// of the robot in the rotor's group, of mobility κ² times its joint's in each pattern.
/// Within 1e-7 rad of the explicit 5e-6 s run, joint 0 held at the same samples; before,
/// `check` warned and the arm ran 0.17 rad off.
#[test]
fn a_rotor_on_a_stiff_coupling_drives_a_geared_robot_motor_in_one_group() {
    let system = |step: f64| {
        let mut v = geared_robot_gripping(step, false, false);
        v["components"]["rotor"] = json!({"type": "mass", "mass": 0.01});
        v["components"]["coupling"] = json!({"type": "kikuuwe_c", "K": 1e6, "B": 100.0, "F": 50.0});
        v["components"]["motor"] = json!({"type": "force_source", "force": "8*sin(2*pi*t)"});
        v["output"]["signals"]["r"] = json!("rotor.q");
        let c = v["connections"].as_array_mut().expect("connections");
        c.extend([json!({"from": "motor.body", "to": "rotor"}), json!({"from": "coupling.a", "to": "rotor"}), json!({"from": "coupling.b", "to": "robot.motor0"})]);
        v
    };
    let (held, reference) = (system(1e-3), system(5e-6));
    let (a, b, worst) = against_reference("rotor driving a geared robot's motor, T = 1e-3 against 5e-6 explicit", &held, &reference, &["q0", "q1", "r"]);
    assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
    let stuck = |r: &Recorder| col(r, "v0").iter().filter(|v| **v == 0.0).count();
    assert_eq!(stuck(&a), stuck(&b), "joint 0's samples held exactly");
    assert!(stuck(&b) > 20, "the reference's joint 0 sticks");
}

/// A model D block (1 kg on its presliding contact K = 1e4, B = 200, F = 6 N: RK4 resolves it
/// and its slider's relaxation at 1 ms, so every stage is the continuous law) with a stiff
/// element on it: a grounded `fric_k` (K = 1e8, F = 3 N, ω T = 10) under 8 sin 2πt N, or a
/// `kikuuwe_c` (K = 1e6) to a 0.05 kg load pushed by 0.5 N. The body is then a mass under its
/// contact's force, held implicitly as a `mass` is. Against explicit runs at 2e-6 s.
fn model_d_held(step: f64, joined: bool) -> Value {
    let mut v = json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
        "output": {"interval": 1e-3, "signals": {"q": "block.q", "u": "block.u", "w": "block.w"}},
        "components": {
            "block": {"type": "kikuuwe_d", "mass": 1.0, "K": 1e4, "B": 200.0, "F": 6.0},
            "act": {"type": "force_source", "force": "8*sin(2*pi*t)"},
            "h": {"type": "fric_k", "K": 1e8, "B": 1.0, "F": 3.0}
        },
        "connections": [{"from": "act.body", "to": "block"}, {"from": "h.a", "to": "ground"}, {"from": "h.b", "to": "block"}]
    });
    if joined {
        v["components"]["h"] = json!({"type": "kikuuwe_c", "K": 1e6, "B": 1.0, "F": 30.0});
        v["components"]["load"] = json!({"type": "mass", "mass": 0.05, "force": 0.5});
        v["connections"] = json!([{"from": "act.body", "to": "block"}, {"from": "h.a", "to": "block"}, {"from": "h.b", "to": "load"}]);
        v["output"]["signals"]["l"] = json!("load.q");
    }
    v
}

/// Model D's body under the continuous law is a mass: a stiff element on it is held
/// implicitly with it. Grounded: within 1.1e-8 m of the explicit run, the slider constant bit
/// for bit while held as in the reference (before: `check` warned, 6.3e-5 m off, and the
/// slider crept 1.2e-6 m in the last second); joined to a load: body 2.4e-7 m, load 3.8e-7 m
/// (before 8.5e-3 and 0.17 m).
#[test]
fn stiff_elements_on_a_model_d_body_are_held_with_it() {
    for joined in [false, true] {
        let names: &[&str] = if joined { &["q", "w", "l"] } else { &["q", "w"] };
        let (held, reference) = (model_d_held(1e-3, joined), model_d_held(2e-6, joined));
        let (_, _, worst) = against_reference(&format!("model D body with a stiff element (joined: {joined}), T = 1e-3 against 2e-6 explicit"), &held, &reference, names);
        assert!(worst.iter().all(|w| *w < 1e-6), "off by {worst:?}");
    }
}

/// [`model_d_held`] with the block's contact K, B too stiff or too little damped for the
/// continuous law at 1 ms (B < T K/2): every stage is (45)'s implicit step, whose response to
/// a force is set-valued (the slider holds over a range of forces).
fn model_d_implicit_held(step: f64, joined: bool, k: f64, b: f64) -> Value {
    let mut v = model_d_held(step, joined);
    v["components"]["block"]["K"] = json!(k);
    v["components"]["block"]["B"] = json!(b);
    v
}

/// Model D under (45)'s implicit stages (with Coulomb friction on its slider): (45) is the
/// implicit step of the mass with its own presliding element, so a stiff element on the body
/// is solved with it and that element's law together. Contacts K = 1e4, B = 1 (RK4 resolves
/// the held spring, not the slider's relaxation) and K = 1e7, B = 10 (neither: (45)'s held
/// rates). The previous landing warned on all four systems and was 7.2e-5 / 1.3e-5 m off the
/// explicit 2e-6 s run grounded (the stiffer one's slider moving 1.3e-5 m), 3.4e-3 / 2.2e-2 m
/// joined (the load 0.086 / 0.092 m). Now grounded within 1.6e-7 / 4.5e-9 m, the slider not
/// moving (0.0 at every sample, as in the reference); joined within 7.4e-5 / 9.9e-6 m, the
/// size of model D's own first-order error in this form (2.5e-5 / 3.6e-6 m with a soft
/// element, K = 1e3, in h's place). K = 1e6, B = 0.5 (RK4 resolves the held spring near its
/// edge): grounded 3.3e-8 m, joined 2.2e-5 m (soft 1.3e-5).
#[test]
fn stiff_elements_on_a_model_d_body_under_its_implicit_step_are_held_with_its_own_element() {
    // (K, B, the bound joined): K = 1e6, B = 0.5 resolves the held spring near RK4's edge,
    // where the own law's held branch with (45)'s τK made it 6.1e-5 m (now 2.2e-5).
    for (k, b, joined_bound) in [(1e4, 1.0, 1e-4), (1e7, 10.0, 1e-4), (1e6, 0.5, 4e-5)] {
        for joined in [false, true] {
            let names: &[&str] = if joined { &["q", "w", "l"] } else { &["q", "w"] };
            let (held, reference) = (model_d_implicit_held(1e-3, joined, k, b), model_d_implicit_held(2e-6, joined, k, b));
            let (a, r, worst) = against_reference(&format!("model D (K = {k}, B = {b}) with a stiff element (joined: {joined}), T = 1e-3 against 2e-6 explicit"), &held, &reference, names);
            let bound = if joined { joined_bound } else { 5e-7 };
            assert!(worst.iter().all(|w| *w < bound), "off by {worst:?}");
            if !joined {
                assert!(col(&r, "w").iter().all(|w| *w == 0.0), "the reference's slider holds");
                assert!(col(&a, "w").iter().all(|w| *w == 0.0), "the slider does not creep");
            }
        }
    }
}

/// Model D on a Stribeck curve (Fc = 5, Fs = 6 N, v_s = 0.1 m/s, exponent 2) or a table of
/// levels (6, 4.5, 5 N at 0, 0.05, 1 m/s) under (45)'s implicit stages, with a stiff element
/// as in [`model_d_implicit_held`]: its own element's law takes g at the slider's speed, as
/// a coupled element's does, and the stage's rates are that law's solution (`write_solved`).
/// Grounded (K = 1e8, F = 3 N; with the block's 6 N it holds under 8 sin 2πt N): within
/// 4.5e-9 / 3.9e-8 / 3.9e-8 m of the explicit 2e-6 s run, the slider 0.0 at every sample
/// (the previous landing: explicit, `check` warned, 1.2e-5 / 1.6e-4 / 2.2e-4 m). Joined to the
/// 0.05 kg load: 3.4e-2 / 3.2e-2 / 1.8e-2 m, model D's own error with these laws at 1 ms
/// against the continuous law of the reference (a soft element, K = 1e3, in h's place:
/// 3.4e-2 / 3.2e-2 / 2.1e-2 m); the previous landing 9.7e-2 / 1.0e-1 / 1.2e-1 m, warned.
#[test]
fn stiff_elements_on_a_model_d_body_with_a_stribeck_curve_or_a_table_are_held_with_its_own_element() {
    let stribeck = json!({"law": "stribeck", "Fc": 5.0, "Fs": 6.0, "vs": 0.1, "exponent": 2.0});
    let table = json!({"law": "table", "speed": [0.0, 0.05, 1.0], "levels": [6.0, 4.5, 5.0]});
    for (law, k, b) in [(&stribeck, 1e7, 10.0), (&stribeck, 1e6, 0.5), (&table, 1e6, 0.5)] {
        for joined in [false, true] {
            let system = |step: f64| {
                let mut v = model_d_implicit_held(step, joined, k, b);
                let block = v["components"]["block"].as_object_mut().expect("the block");
                block.remove("F");
                block.extend(law.as_object().expect("a law").clone());
                v
            };
            let names: &[&str] = if joined { &["q", "w", "l"] } else { &["q", "w"] };
            let what = format!("model D ({}, K = {k}, B = {b}) with a stiff element (joined: {joined}), T = 1e-3 against 2e-6 explicit", law["law"]);
            let (a, _, worst) = against_reference(&what, &system(1e-3), &system(2e-6), names);
            if joined {
                assert!(worst.iter().all(|w| *w < 4e-2), "off by {worst:?}");
            } else {
                assert!(worst.iter().all(|w| *w < 1e-7), "off by {worst:?}");
                assert!(col(&a, "w").iter().all(|w| *w == 0.0), "the slider does not creep");
            }
        }
    }
}

/// A planar model A block (`dims` 2 or 3, 1 kg, F = 2 N) with a stiff `kikuuwe_c` (dims
/// as the block's, K = 1e8, F = 3 N) to the ground: launched at (0.3, 0.1) m/s under a
/// constant (0.5, 0.3) N, or pushed by (8 sin 2πt, 5 sin(3πt + 1)) N (`held`: with F = 6 N,
/// the pair held but for short slips); or joined by one
/// (K = 1e6, F = 30 N) to a 0.05 kg point mass pushed by (0.5, 0.3) N.
fn model_a_planar(step: f64, case: &str, dims: usize) -> Value {
    let pad = |v: [f64; 2]| if dims == 3 { json!([v[0], v[1], 0.0]) } else { json!(v) };
    let mut v = json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
        "output": {"interval": 1e-3, "signals": {"qx": "blk.q[0]", "qy": "blk.q[1]", "vx": "blk.v[0]", "vy": "blk.v[1]"}},
        "components": {
            "blk": {"type": "kikuuwe_a", "dims": dims, "mass": 1.0, "F": 2.0},
            "act": {"type": "force_source", "domain": "point3", "force": ["8*sin(2*pi*t)", "5*sin(3*pi*t+1)", 0]},
            "h": {"type": "kikuuwe_c", "dims": dims, "K": 1e8, "B": 1.0, "F": 3.0}
        },
        "connections": [{"from": "act.body", "to": "blk"}, {"from": "h.a", "to": "ground"}, {"from": "h.b", "to": "blk"}]
    });
    match case {
        "launched" => {
            v["components"]["blk"]["init"] = json!({"v": pad([0.3, 0.1])});
            v["components"]["blk"]["force"] = pad([0.5, 0.3]);
            v["components"].as_object_mut().expect("components").remove("act");
            v["connections"] = json!([{"from": "h.a", "to": "ground"}, {"from": "h.b", "to": "blk"}]);
        }
        "held" => v["components"]["blk"]["F"] = json!(6.0),
        "joined" => {
            v["components"]["h"] = json!({"type": "kikuuwe_c", "dims": dims, "K": 1e6, "B": 1.0, "F": 30.0});
            v["components"]["load"] = json!({"type": "point_mass", "mass": 0.05, "gravity": [0, 0, 0]});
            v["components"]["push"] = json!({"type": "force_source", "domain": "point3", "force": [0.5, 0.3, 0]});
            v["connections"] = json!([{"from": "act.body", "to": "blk"}, {"from": "h.a", "to": "blk"}, {"from": "h.b", "to": "load"}, {"from": "push.body", "to": "load"}]);
            v["output"]["signals"]["lx"] = json!("load.p[0]");
            v["output"]["signals"]["ly"] = json!("load.p[1]");
        }
        _ => {}
    }
    v
}

/// Model A in two and three dimensions: (26) is the implicit step of the mass with a rigid
/// friction element on it, so a stiff element on the block is solved with that element's law
/// among the coupled elements' (`Admittance::own_stage_law`; c = 1e9 M/τ): held where the
/// solution holds it (v = 0.0), else the law's sliding solution. Against explicit 5e-6 s runs
/// at T = 1e-3, largest position differences: launched, 3.6e-6 m, resting with v = 0.0 from
/// 78 ms (the reference from 72 ms: the stop is the stages' own, not located, its last
/// velocities falling by about 3 a step); pushed by the sines 1.2e-3 m, the first-order error
/// of every coupled element through a reversal (a `mass` in the block's place: 1.1e-3 m);
/// with F = 6 N, held but for short slips, 1.4e-6 m; joined 5.1e-4 m. The previous landing:
/// explicit, `check` warned on all four, 2.5e-7 / 8.1e-4 / 6.8e-4 / 5.9e-2 m.
#[test]
fn stiff_elements_on_a_planar_model_a_block_are_held_with_its_own_rigid_element() {
    for dims in [2, 3] {
        for (case, bound) in [("launched", 1e-5), ("sines", 2e-3), ("held", 1e-5), ("joined", 1.5e-3)] {
            let names: &[&str] = if case == "joined" { &["qx", "qy", "lx", "ly"] } else { &["qx", "qy"] };
            let what = format!("model A (dims {dims}) with a stiff element ({case}), T = 1e-3 against 5e-6 explicit");
            let (a, r, worst) = against_reference(&what, &model_a_planar(1e-3, case, dims), &model_a_planar(5e-6, case, dims), names);
            assert!(worst.iter().all(|w| *w < bound), "{what}: off by {worst:?}");
            if case == "launched" {
                let rest = |r: &Recorder| col(r, "vx").iter().zip(col(r, "vy")).position(|(x, y)| *x == 0.0 && y == 0.0);
                let (at, reference) = (rest(&a).expect("the block stops"), rest(&r).expect("the reference stops"));
                assert!(at <= reference + 10, "at rest from sample {at}, the reference from {reference}");
                assert!(col(&a, "vx")[at..].iter().chain(&col(&a, "vy")[at..]).all(|v| *v == 0.0), "the block creeps after its stop");
            }
        }
    }
}

/// [`model_d_implicit_held`] in the plane: the block (`dims` 2) pushed by (8 sin 2πt,
/// 5 sin(3πt + 1)) N, held by a grounded `kikuuwe_c` (dims 2, K = 1e8, F = 3 N) or joined by
/// one (K = 1e6, F = 30 N) to a 0.05 kg point mass pushed by (0.5, 0.3) N.
fn model_d_planar(step: f64, joined: bool, k: f64, b: f64) -> Value {
    let mut v = json!({
        "solver": {"method": "rk4", "step": step, "stop_time": 1.0},
        "output": {"interval": 1e-3, "signals": {"qx": "block.q[0]", "qy": "block.q[1]", "wx": "block.w[0]", "wy": "block.w[1]"}},
        "components": {
            "block": {"type": "kikuuwe_d", "dims": 2, "mass": 1.0, "K": k, "B": b, "F": 6.0},
            "act": {"type": "force_source", "domain": "point3", "force": ["8*sin(2*pi*t)", "5*sin(3*pi*t+1)", 0]},
            "h": {"type": "kikuuwe_c", "dims": 2, "K": 1e8, "B": 1.0, "F": 3.0}
        },
        "connections": [{"from": "act.body", "to": "block"}, {"from": "h.a", "to": "ground"}, {"from": "h.b", "to": "block"}]
    });
    if joined {
        v["components"]["h"] = json!({"type": "kikuuwe_c", "dims": 2, "K": 1e6, "B": 1.0, "F": 30.0});
        v["components"]["load"] = json!({"type": "point_mass", "mass": 0.05, "gravity": [0, 0, 0]});
        v["components"]["push"] = json!({"type": "force_source", "domain": "point3", "force": [0.5, 0.3, 0]});
        v["connections"] = json!([{"from": "act.body", "to": "block"}, {"from": "h.a", "to": "block"}, {"from": "h.b", "to": "load"}, {"from": "push.body", "to": "load"}]);
        v["output"]["signals"]["lx"] = json!("load.p[0]");
        v["output"]["signals"]["ly"] = json!("load.p[1]");
    }
    v
}

/// Model D in the plane under (45)'s implicit stages: (45) is the implicit step of the mass
/// with its own presliding element, so the body is solved with that element's law among the
/// coupled elements' (`Admittance::own_stage_law`), in any dimension. Contacts K = 1e4, B = 1
/// and K = 1e7, B = 10 at 1 ms against explicit 2e-6 s runs: grounded within 1.2e-5 / 2.4e-6 m
/// (the previous landing: `check` warning, 7.9e-5 / 1.0e-4 m), joined 1.1e-4 / 3.1e-5 m (before
/// 1.3e-3 / 2.0e-2, the load 6.0e-2 / 6.4e-2 m): model D's own first-order error in this form
/// (2.8e-5 / 6.1e-6 m grounded and 1.2e-4 / 9.8e-6 m joined with soft elements, K = 1e3).
#[test]
fn stiff_elements_on_a_planar_model_d_body_are_held_with_its_own_element() {
    for (k, b) in [(1e4, 1.0), (1e7, 10.0)] {
        for joined in [false, true] {
            let names: &[&str] = if joined { &["qx", "qy", "wx", "wy", "lx", "ly"] } else { &["qx", "qy", "wx", "wy"] };
            let (held, reference) = (model_d_planar(1e-3, joined, k, b), model_d_planar(2e-6, joined, k, b));
            let (_, _, worst) = against_reference(&format!("planar model D (K = {k}, B = {b}) with a stiff element (joined: {joined}), T = 1e-3 against 2e-6 explicit"), &held, &reference, names);
            let bound = if joined { 2e-4 } else { 3e-5 };
            assert!(worst.iter().all(|w| *w < bound), "off by {worst:?}");
        }
    }
}

/// Two gears in series joined by a stiff shaft (`kikuuwe_c`, K = 2.8e7), the second driving a
/// load through another (K = 7.3e7), driven by three sines at T = 1e-3 (a random drivetrain of
/// the issue-43 sweep): in 30 stages the modes the two gears' solutions select come round
/// again, and every combination of their modes is tried until one selects itself. Against the
/// explicit 2e-6 s run: 2.9e-4 rad (taking the last pass instead, as a group with several
/// set-valued members did before: 8.4e-4 rad).
#[test]
fn two_gears_on_a_stiff_shaft_find_their_modes_together() {
    let system = |step: f64| {
        json!({
            "solver": {"method": "rk4", "step": step, "stop_time": 2.0},
            "output": {"interval": 1e-2, "signals": {"p": "g1.q", "v": "g1.v"}},
            "components": {
                "g1": {"type": "gear", "gamma_u": 0.5777968614772163, "gamma_v": 0.890373851488666, "ratio": 2, "m": 1.5619682006274611, "M": 0.821742360512932, "damping": 3.846310025307691},
                "g2": {"type": "gear", "gamma_u": 0.3326528370675811, "gamma_v": -0.3897096875036634, "ratio": 1, "m": 1.80257096322795, "M": 1.3427864192918397, "damping": 3.798593548370273},
                "actuator": {"type": "force_source", "force": TWO_GEAR_DRIVE},
                "load": {"type": "mass", "mass": 0.5789816394301934, "force": -0.5781739843285454},
                "shaft": {"type": "kikuuwe_c", "K": 28209933.772546176, "B": 131.43625501160852, "F": 1000.0},
                "out": {"type": "kikuuwe_c", "K": 73163377.68782851, "B": 145.8760166346446, "F": 1000.0}
            },
            "connections": [{"from": "actuator.body", "to": "g1.input"}, {"from": "shaft.a", "to": "g1.output"}, {"from": "shaft.b", "to": "g2.input"},
                            {"from": "out.a", "to": "g2.output"}, {"from": "out.b", "to": "load"}]
        })
    };
    let (held, reference) = (system(1e-3), system(2e-6));
    let (_, _, worst) = against_reference("two gears on a stiff shaft, T = 1e-3 against 2e-6 explicit", &held, &reference, &["p"]);
    assert!(worst[0] < 5e-4, "off by {worst:?}");
}

/// The drive of [`two_gears_on_a_stiff_shaft_find_their_modes_together`].
const TWO_GEAR_DRIVE: &str = "-0.440*sin(1.469*2*pi*t)+12.216*sin(4.042*2*pi*t)+22.960*sin(4.462*2*pi*t)";
