//! Long work without the GIL, stoppable with Ctrl-C: the work runs on a helper thread while
//! the calling (main) thread waits for it and, every 50 ms, takes the GIL for
//! `Python::check_signals`. On a pending signal (KeyboardInterrupt) it raises the cancel flag
//! the work polls (between output rows, between chunks of study runs), waits for the work
//! to stop and returns the signal's exception. The work owns everything it changes, so an
//! interrupted run leaves nothing half-written on the Python side.

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Run `work(cancel)` with the GIL released; see the module doc.
pub fn run<T: Send>(py: Python<'_>, work: impl FnOnce(&AtomicBool) -> T + Send) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    let (value, signal) = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let cancel = &cancel;
            s.spawn(move || {
                // A send fails only if the receiver is gone, which it is not before the scope ends.
                let _ = tx.send(work(cancel));
            });
            let mut signal: Option<PyErr> = None;
            loop {
                match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(v) => return (Some(v), signal),
                    Err(mpsc::RecvTimeoutError::Disconnected) => return (None, signal),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if signal.is_none() {
                            if let Err(e) = Python::attach(|py| py.check_signals()) {
                                cancel.store(true, Ordering::SeqCst);
                                signal = Some(e);
                            }
                        }
                    }
                }
            }
        })
    });
    if let Some(e) = signal {
        return Err(e);
    }
    // The helper thread dropped its sender without a value only if `work` panicked.
    value.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("internal error: the simulation thread panicked"))
}

/// True once Ctrl-C asked the work to stop.
pub fn cancelled(cancel: &AtomicBool) -> bool {
    cancel.load(Ordering::Relaxed)
}
