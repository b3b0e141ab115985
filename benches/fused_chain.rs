//! Hand-written baseline of the chain-N benchmark system (examples/generate_chain.rs): the
//! same equations as the framework's point_mass, spring_damper (rest length), plane_contact
//! (I_fricKN (23)–(24)) and force_source, written as a plain RK4 loop with no framework:
//! per stage one pass over the springs (each evaluated once), one over the masses with
//! their contacts, then the vector operations of (13). It does the work of the reference
//! loop of the issue (shared/bench/fused-chain: same equations, each spring once, separate
//! passes), reimplemented here so that `cargo bench --bench chain` measures its baseline
//! in the same run. It is the yardstick the framework is measured against, not a product
//! feature.
//!
//! The arithmetic follows the framework's order (stage offsets, force sums per mass in
//! the schedule's slot order: contact, spring to the left, spring to the right, drive), so
//! the two agree to round-off.
#![allow(dead_code)]

use stiction::framework::nalgebra::{Vector2, Vector3};

/// Parameters of chain-N (see examples/generate_chain.rs).
#[derive(Clone, Copy, Debug)]
pub struct ChainParams {
    pub mass: f64,
    pub g: f64,
    pub k_spring: f64,
    pub b_spring: f64,
    pub rest: f64,
    pub k_contact: f64,
    pub b_contact: f64,
    pub mu: f64,
}

impl ChainParams {
    pub fn standard() -> Self {
        ChainParams {
            mass: 1.0,
            g: 9.81,
            k_spring: 1e4,
            b_spring: 10.0,
            rest: 0.1,
            k_contact: 1e5,
            b_contact: 100.0,
            mu: 0.5,
        }
    }
    pub fn frictionless() -> Self {
        ChainParams { b_spring: 0.0, b_contact: 0.0, mu: 0.0, ..Self::standard() }
    }
}

/// State: per mass [p (3), v (3)], then per contact e (2) — the framework's layout.
pub struct FusedChain {
    pub n: usize,
    pub prm: ChainParams,
    pub x: Vec<f64>,
    xs: Vec<f64>,
    rate: Vec<f64>,
    acc: Vec<f64>,
    force: Vec<Vector3<f64>>,
    /// Force of spring i (between masses i and i + 1) on mass i + 1.
    spring: Vec<Vector3<f64>>,
    pub k: u64,
    pub h: f64,
}

impl FusedChain {
    pub fn new(n: usize, prm: ChainParams, h: f64) -> Self {
        let mut x = vec![0.0; 8 * n];
        let z0 = -prm.mass * prm.g / prm.k_contact;
        for i in 0..n {
            x[6 * i] = 0.1 * i as f64;
            x[6 * i + 2] = z0;
        }
        FusedChain {
            n,
            prm,
            xs: x.clone(),
            x,
            rate: vec![0.0; 8 * n],
            acc: vec![0.0; 8 * n],
            force: vec![Vector3::zeros(); n],
            spring: vec![Vector3::zeros(); n.saturating_sub(1)],
            k: 0,
            h,
        }
    }

    #[inline]
    fn p(x: &[f64], i: usize) -> Vector3<f64> {
        Vector3::new(x[6 * i], x[6 * i + 1], x[6 * i + 2])
    }
    #[inline]
    fn v(x: &[f64], i: usize) -> Vector3<f64> {
        Vector3::new(x[6 * i + 3], x[6 * i + 4], x[6 * i + 5])
    }

    /// One stage: rates of all states at `self.xs`, time t, stage step τ.
    fn stage(&mut self, t: f64, tau: f64) {
        let (n, prm) = (self.n, self.prm);
        let xs = &self.xs;
        let ne = 6 * n;
        // Each spring once.
        for (i, f) in self.spring.iter_mut().enumerate() {
            *f = Self::spring(&prm, xs, i, i + 1);
        }
        // Forces on each mass, summed in the framework's slot order.
        for i in 0..n {
            let (p, v) = (Self::p(xs, i), Self::v(xs, i));
            // Contact (23): normal penalty, tangential I_fricK with limit μ f_n.
            let depth = 0.0 - p.z;
            let fn_ = if depth > 0.0 { (prm.k_contact * depth - prm.b_contact * v.z).max(0.0) } else { 0.0 };
            let d = prm.b_contact + tau * prm.k_contact;
            let e = Vector2::new(xs[ne + 2 * i], xs[ne + 2 * i + 1]);
            let fstar = d * Vector2::new(v.x, v.y) + prm.k_contact * e;
            let lim = prm.mu * fn_;
            let nrm = fstar.norm();
            // Held (RK4): the element's continuous law within the cone, ε = v_t.
            let vt = Vector2::new(v.x, v.y);
            let h = prm.b_contact * vt + prm.k_contact * e;
            let hn = h.norm();
            let (ft, eps) = if nrm <= lim || hn <= lim {
                (if hn <= lim { h } else { h * (lim / hn) }, vt)
            } else {
                let ft = fstar * (lim / nrm);
                (ft, (ft - prm.k_contact * e) / d)
            };
            self.rate[ne + 2 * i] = eps.x;
            self.rate[ne + 2 * i + 1] = eps.y;
            let mut sum = Vector3::zeros();
            sum += Vector3::new(-ft.x, -ft.y, fn_);
            if i > 0 {
                sum += self.spring[i - 1];
            }
            if i + 1 < n {
                sum += -self.spring[i];
            }
            if i == 0 {
                sum += Vector3::new(50.0 * (2.0 * std::f64::consts::PI * t).sin(), 0.0, 0.0);
            }
            self.force[i] = sum;
        }
        let inv = 1.0 / prm.mass;
        for i in 0..n {
            for c in 0..3 {
                self.rate[6 * i + c] = xs[6 * i + 3 + c];
                self.rate[6 * i + 3 + c] = self.force[i][c] * inv + if c == 2 { -prm.g } else { 0.0 };
            }
        }
    }

    /// Force of the spring between masses a and b on b, (10) along the line.
    #[inline]
    fn spring(prm: &ChainParams, xs: &[f64], a: usize, b: usize) -> Vector3<f64> {
        let d = Self::p(xs, b) - Self::p(xs, a);
        let v = Self::v(xs, b) - Self::v(xs, a);
        let len = d.norm();
        let nhat = d / len;
        -(prm.k_spring * (len - prm.rest) + prm.b_spring * v.dot(&nhat)) * nhat
    }

    /// One RK4 step, (13) with (22).
    pub fn step(&mut self) {
        let h = self.h;
        let t = self.k as f64 * h;
        const OFF: [f64; 4] = [0.0, 0.5, 0.5, 1.0];
        const TAU: [f64; 4] = [0.5, 0.5, 1.0, 1.0];
        const W: [f64; 4] = [1.0, 2.0, 2.0, 1.0];
        for r in 0..4 {
            if r == 0 {
                self.xs.copy_from_slice(&self.x);
            } else {
                let c = OFF[r] * h;
                for i in 0..self.x.len() {
                    self.xs[i] = self.x[i] + c * self.rate[i];
                }
            }
            self.stage(t + OFF[r] * h, TAU[r] * h);
            if r == 0 {
                self.acc.copy_from_slice(&self.rate);
            } else {
                for i in 0..self.acc.len() {
                    self.acc[i] += W[r] * self.rate[i];
                }
            }
        }
        let c = h / 6.0;
        for i in 0..self.x.len() {
            self.x[i] += c * self.acc[i];
        }
        self.k += 1;
    }

    /// Kinetic + gravity + spring + contact energy (J), the framework's `energy()` terms.
    pub fn energy(&self) -> f64 {
        let prm = self.prm;
        let ne = 6 * self.n;
        let mut e = 0.0;
        for i in 0..self.n {
            let (p, v) = (Self::p(&self.x, i), Self::v(&self.x, i));
            e += 0.5 * prm.mass * v.norm_squared() + prm.mass * prm.g * p.z;
            let depth = (0.0 - p.z).max(0.0);
            let (ex, ey) = (self.x[ne + 2 * i], self.x[ne + 2 * i + 1]);
            e += 0.5 * prm.k_contact * (depth * depth + ex * ex + ey * ey);
            if i > 0 {
                let s = (p - Self::p(&self.x, i - 1)).norm() - prm.rest;
                e += 0.5 * prm.k_spring * s * s;
            }
        }
        e
    }
}
