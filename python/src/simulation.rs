//! `CoreSimulation`: a running simulation driven step by step from Python (the base class of
//! `stiction.Simulation`): steps with the GIL released and Ctrl-C honoured between steps,
//! system inputs held at values set from Python, any signal read at the current step, the
//! rows of the output interval recorded as `run` records them, and the whole state saved and
//! restored (framework/src/stepper/checkpoint.rs).
//!
//! Per-call cost is what a controller loop pays, so each call does only its own work: a
//! signal name is resolved once and kept with the components its value needs
//! (`ProbeTargets`), `inputs` is one object made at construction, and the lock around the
//! simulator is taken inside the GIL-free section of a step (a thread that waits for it then
//! never holds the GIL the stepping thread needs back).

use crate::errors::{from_framework, input_error_msg};
use crate::system::{build, result_dict, CoreSystem};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use stiction_framework::output::number::time_text;
use stiction_framework::output::ProbeTargets;
use stiction_framework::{Recorder, RunPlan, SignalRef, Simulator, TimeFunction};

/// Longest stretch of steps taken without the GIL before Ctrl-C is checked.
const SLICE: Duration = Duration::from_millis(20);

/// The simulator and what the Python side reads from it.
struct State {
    sim: Simulator,
    plan: RunPlan,
    /// Steps per output row.
    every: u64,
    /// The components the output columns read, and their values at the last row.
    targets: ProbeTargets,
    values: Vec<f64>,
    /// The rows so far and each one's step index.
    rec: Recorder,
    row_k: Vec<u64>,
    /// Signals read by name, resolved once.
    reads: HashMap<String, (SignalRef, ProbeTargets)>,
    /// The last list `read_many` resolved.
    many: (Vec<String>, Vec<SignalRef>, ProbeTargets),
    pool: Option<rayon::ThreadPool>,
    name: String,
    units: Vec<String>,
    file: String,
}

type Shared = Arc<Mutex<Option<State>>>;

fn lock(s: &Shared) -> MutexGuard<'_, Option<State>> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

fn closed() -> PyErr {
    input_error_msg("the simulation is closed".into())
}

impl State {
    /// Whether the current step is on the output interval and its row is not recorded.
    fn due(&self) -> bool {
        let k = self.sim.steps_taken();
        k % self.every == 0 && self.row_k.last() != Some(&k)
    }

    /// The output columns at the current step into `self.values`.
    fn sample(&mut self) -> stiction_framework::Result<()> {
        self.sim.probe_only(&self.targets)?;
        for (v, (_, r)) in self.values.iter_mut().zip(&self.plan.columns) {
            *v = self.sim.value(r);
        }
        Ok(())
    }

    /// Record the row of the current step if one is due. A row is recorded when the step
    /// after it begins (with the inputs set for that step, as a function of time gives them
    /// at t_k to `stiction run`), or asked for by `result()`.
    fn row_due(&mut self) -> stiction_framework::Result<()> {
        if !self.due() {
            return Ok(());
        }
        self.sample()?;
        self.rec.time.push(self.sim.time());
        self.rec.rows.push(self.values.clone());
        self.row_k.push(self.sim.steps_taken());
        Ok(())
    }

    /// The row of the current step, if due, then one step.
    fn step_once(&mut self) -> stiction_framework::Result<()> {
        self.row_due()?;
        self.sim.step()
    }

    /// Up to `n` steps, for at most [`SLICE`] of wall time: (steps taken, outcome).
    fn steps(&mut self, n: u64) -> (u64, stiction_framework::Result<()>) {
        let start = Instant::now();
        let mut done = 0;
        let run = |st: &mut State, done: &mut u64| -> stiction_framework::Result<()> {
            while *done < n {
                st.step_once()?;
                *done += 1;
                if *done % 64 == 0 && start.elapsed() >= SLICE {
                    break;
                }
            }
            Ok(())
        };
        let r = match self.pool.take() {
            Some(pool) => {
                let r = pool.install(|| run(self, &mut done));
                self.pool = Some(pool);
                r
            }
            None => run(self, &mut done),
        };
        (done, r)
    }

    /// Signal `name` resolved (once) with the components its value needs.
    fn resolved(&mut self, name: &str) -> PyResult<&(SignalRef, ProbeTargets)> {
        if !self.reads.contains_key(name) {
            let r = self.sim.resolve(name).map_err(|e| from_framework(&e))?;
            let t = self.sim.probe_targets(std::iter::once(&r));
            self.reads.insert(name.to_string(), (r, t));
        }
        Ok(&self.reads[name])
    }
}

/// A simulation stepped from Python.
#[pyclass(subclass, module = "stiction._core")]
pub struct CoreSimulation {
    state: Shared,
    inputs: Py<CoreInputs>,
    /// The time at the step count it was computed for (as `Result.time` prints it).
    time: Mutex<(u64, f64)>,
}

/// `Simulation.inputs`: the system's inputs by name; a value set is held until set again.
#[pyclass(mapping, module = "stiction._core")]
pub struct CoreInputs {
    state: Shared,
    names: Vec<String>,
}

fn sim_error(st: &State, e: stiction_framework::Error) -> PyErr {
    from_framework(&e.in_file(st.file.clone()))
}

#[pymethods]
impl CoreSimulation {
    /// Build the simulation of `system` (its document with its `set` values) on `threads`
    /// threads (None: the solver's `threads`, else all cores), at t = 0.
    #[new]
    #[pyo3(signature = (system, threads=None))]
    fn new(py: Python<'_>, system: &CoreSystem, threads: Option<usize>) -> PyResult<Self> {
        let sys = build(&system.doc).map_err(|e| from_framework(&e))?;
        let threads = match threads.or(sys.threads) {
            Some(0) => return Err(input_error_msg("threads must be at least 1".into())),
            Some(n) => n,
            None => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        };
        let units = system.units(&sys);
        let name = sys.name.clone();
        let file = system.file.display().to_string();
        let built = py.detach(|| sys.into_simulator(threads).map_err(|e| e.in_file(file.clone())));
        let (sim, plan) = built.map_err(|e| from_framework(&e))?;
        let names: Vec<String> = sim.input_names().map(str::to_string).collect();
        let pool = if sim.is_parallel() {
            let p = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            Some(p.map_err(|e| input_error_msg(format!("cannot start {threads} threads: {e}")))?)
        } else {
            None
        };
        let every = ((plan.interval / sim.step_size()).round() as u64).max(1);
        let targets = sim.probe_targets(plan.columns.iter().map(|c| &c.1));
        let rec = Recorder { labels: plan.columns.iter().map(|c| c.0.clone()).collect(), ..Default::default() };
        let values = vec![0.0; plan.columns.len()];
        let empty = sim.probe_targets(std::iter::empty::<&SignalRef>());
        let st = State {
            sim,
            plan,
            every,
            targets,
            values,
            rec,
            row_k: Vec::new(),
            reads: HashMap::new(),
            many: (Vec::new(), Vec::new(), empty),
            pool,
            name,
            units,
            file,
        };
        let state: Shared = Arc::new(Mutex::new(Some(st)));
        let inputs = Py::new(py, CoreInputs { state: state.clone(), names })?;
        Ok(CoreSimulation { state, inputs, time: Mutex::new((u64::MAX, 0.0)) })
    }

    /// Take `n` steps (≥ 0) with the GIL released; Ctrl-C stops at the next step
    /// boundary (KeyboardInterrupt, the simulation at that step).
    #[pyo3(signature = (n=1))]
    fn step(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        let mut left = n;
        while left > 0 {
            let (done, r) = py.detach(|| match lock(&self.state).as_mut() {
                Some(st) => {
                    let (done, r) = st.steps(left);
                    (done, r.map_err(|e| e.in_file(st.file.clone())))
                }
                None => (0, Err(stiction_framework::Error::invalid("simulation", "closed"))),
            });
            r.map_err(|e| from_framework(&e))?;
            left -= done;
            if left > 0 {
                py.check_signals()?;
            }
        }
        Ok(())
    }

    /// Step to time `t` (s): the whole steps up to the first at or after t (as a run to
    /// stop time t takes them). A time before the current one is an error.
    fn advance_to(&self, py: Python<'_>, t: f64) -> PyResult<()> {
        let (k, step) = {
            let g = lock(&self.state);
            let st = g.as_ref().ok_or_else(closed)?;
            (st.sim.steps_taken(), st.sim.step_size())
        };
        if !t.is_finite() {
            return Err(input_error_msg(format!("advance_to({t}): not a time")));
        }
        let target = (t / step - 1e-9).ceil().max(0.0);
        if target < k as f64 {
            let now = time_text(k as f64 * step, step);
            return Err(input_error_msg(format!("advance_to({t}): the simulation is already at t = {now} s")));
        }
        self.step(py, target as u64 - k)
    }

    /// The current time kT (s), as `Result.time` gives it.
    #[getter]
    fn time(&self) -> PyResult<f64> {
        let (k, step) = {
            let g = lock(&self.state);
            let st = g.as_ref().ok_or_else(closed)?;
            (st.sim.steps_taken(), st.sim.step_size())
        };
        let mut cached = self.time.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0 != k {
            let t = k as f64 * step;
            *cached = (k, time_text(t, step).parse().unwrap_or(t));
        }
        Ok(cached.1)
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> PyResult<u64> {
        Ok(lock(&self.state).as_ref().ok_or_else(closed)?.sim.steps_taken())
    }

    /// The step size T (s).
    #[getter]
    fn step_size(&self) -> PyResult<f64> {
        Ok(lock(&self.state).as_ref().ok_or_else(closed)?.sim.step_size())
    }

    /// The system's inputs (a mapping: `sim.inputs["u"] = 2.0`).
    #[getter]
    fn inputs(&self, py: Python<'_>) -> Py<CoreInputs> {
        self.inputs.clone_ref(py)
    }

    /// The value of every output column at the current step, by label.
    #[getter]
    fn outputs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        st.sim.probe_only(&st.targets).map_err(|e| sim_error(st, e))?;
        let d = PyDict::new(py);
        for (label, r) in &st.plan.columns {
            d.set_item(label, st.sim.value(r))?;
        }
        Ok(d)
    }

    /// The value of signal `name` (`comp.signal[i]`, `comp.state[i]`, a block's output) at
    /// the current step, as an output row at this instant would show it.
    fn read(&self, name: &str) -> PyResult<f64> {
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        st.resolved(name)?;
        let (r, t) = &st.reads[name];
        st.sim.probe_only(t).map_err(|e| from_framework(&e.in_file(st.file.clone())))?;
        Ok(st.sim.value(r))
    }

    /// The values of `names` at the current step, one call: little-endian f64 bytes (the
    /// Python side wraps them as a numpy array).
    fn _read_many<'py>(&self, py: Python<'py>, names: Vec<String>) -> PyResult<Bound<'py, PyByteArray>> {
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        if st.many.0 != names {
            let refs = names
                .iter()
                .map(|n| st.sim.resolve(n).map_err(|e| from_framework(&e)))
                .collect::<PyResult<Vec<_>>>()?;
            let targets = st.sim.probe_targets(refs.iter());
            st.many = (names, refs, targets);
        }
        st.sim.probe_only(&st.many.2).map_err(|e| from_framework(&e.in_file(st.file.clone())))?;
        let mut out = Vec::with_capacity(8 * st.many.1.len());
        for r in &st.many.1 {
            out.extend_from_slice(&st.sim.value(r).to_le_bytes());
        }
        Ok(PyByteArray::new(py, &out))
    }

    /// The rows so far (every output interval, from t = 0, the current step's included), as
    /// `run` returns them: a dict for `Result`.
    fn _result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        let step = st.sim.step_size();
        let mut rec = st.rec.clone();
        // The current step's row, with the inputs as they are now (recorded for good when
        // the next step begins).
        if st.due() {
            st.sample().map_err(|e| sim_error(st, e))?;
            rec.time.push(st.sim.time());
            rec.rows.push(st.values.clone());
        }
        for t in &mut rec.time {
            *t = time_text(*t, step).parse().unwrap_or(*t);
        }
        result_dict(py, &st.name, &st.units, &rec, st.sim.steps_taken())
    }

    /// The whole simulation's state as bytes (the format of `stiction run --save-state`).
    fn save<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        let bytes = st.sim.save_state().map_err(|e| sim_error(st, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Return to a state `save` gave (of this system, or from `--save-state`); the rows
    /// recorded from its time on are dropped. Bad bytes raise InputError and change nothing.
    fn restore(&self, state: &[u8]) -> PyResult<()> {
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        st.sim.restore_state(state).map_err(|e| from_framework(&e))?;
        let k = st.sim.steps_taken();
        let keep = st.row_k.partition_point(|&r| r < k);
        st.row_k.truncate(keep);
        st.rec.time.truncate(keep);
        st.rec.rows.truncate(keep);
        Ok(())
    }

    /// Free the simulation (its FMU instances among others); later calls raise InputError.
    fn close(&self) {
        let taken = lock(&self.state).take();
        drop(taken);
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        lock(&self.state).is_none()
    }
}

#[pymethods]
impl CoreInputs {
    fn __setitem__(&self, name: &str, value: f64) -> PyResult<()> {
        if !value.is_finite() {
            return Err(input_error_msg(format!("inputs['{name}']: {value} is not a finite number")));
        }
        let mut g = lock(&self.state);
        let st = g.as_mut().ok_or_else(closed)?;
        st.sim.set_input(name, TimeFunction::Constant(value)).map_err(|e| from_framework(&e))
    }

    fn __getitem__(&self, name: &str) -> PyResult<f64> {
        let g = lock(&self.state);
        let st = g.as_ref().ok_or_else(closed)?;
        st.sim.input_value(name).ok_or_else(|| {
            pyo3::exceptions::PyKeyError::new_err(format!("no input '{name}' (inputs: {})", self.names.join(", ")))
        })
    }

    fn __len__(&self) -> usize {
        self.names.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    fn keys(&self) -> Vec<String> {
        self.names.clone()
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = pyo3::types::PyList::new(py, &self.names)?;
        Ok(list.try_iter()?.into_any().unbind())
    }

    fn __repr__(&self) -> PyResult<String> {
        let g = lock(&self.state);
        let st = g.as_ref().ok_or_else(closed)?;
        let items: Vec<String> =
            self.names.iter().map(|n| format!("'{n}': {}", st.sim.input_value(n).unwrap_or(f64::NAN))).collect();
        Ok(format!("{{{}}}", items.join(", ")))
    }
}
