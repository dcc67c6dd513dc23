//! Running library work off the Python thread: the GIL released, the job on one of the
//! library's kept threads with the compiler's stack ([`eqm::worker`]), and Python's signals
//! looked at while it runs.
//!
//! Input: a job (compiling, simulating) that owns what it uses, and the cancel flag its run
//! settings carry. Output: the job's value, or `KeyboardInterrupt` (or whatever a signal
//! handler raised) after the job stopped because a signal arrived and the flag was set. The
//! thread is the library's, kept between jobs, so a call pays no thread start (the library's
//! module says why); this module keeps only what is Python's: the GIL and the signals, which
//! only the calling (main) thread can look at. Not done here: deciding what a cancelled job
//! returns (the library stops the run before its next step or row).

use pyo3::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the calling thread looks at Python's pending signals while a job runs.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `job` with the GIL released on a thread of the library's; when Python has a signal
/// pending (Ctrl-C), sets `cancel`, waits for the job to end and returns the signal handler's
/// exception. Without a cancel flag a signal is raised once the job ends.
pub(crate) fn run<T: Send + 'static>(
    py: Python<'_>,
    cancel: Option<&Arc<AtomicBool>>,
    job: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let value = py.detach(|| {
        let pending = eqm::worker::submit(job);
        loop {
            if let Some(outcome) = pending.wait_for(SIGNAL_POLL) {
                return outcome.map_err(|_| "the EQM library panicked".to_string());
            }
            if raised.is_none()
                && let Err(e) = Python::attach(|py| py.check_signals())
            {
                raised = Some(e);
                if let Some(flag) = cancel {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        }
    });
    if let Some(e) = raised {
        return Err(e);
    }
    value.map_err(pyo3::exceptions::PyRuntimeError::new_err)
}
