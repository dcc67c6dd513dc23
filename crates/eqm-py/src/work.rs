//! Running library work off the Python thread: the GIL released, on a thread with the
//! compiler's large stack, and Python's signals looked at while it runs.
//!
//! Input: a job (compiling, simulating) and the cancel flag its run settings carry. Output:
//! the job's value, or `KeyboardInterrupt` (or whatever a signal handler raised) after the job
//! stopped because a signal arrived and the flag was set. Not done here: deciding what a
//! cancelled job returns (the library stops the run at its next row).

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The stack of the thread a job runs on: compiling and evaluating deeply nested expressions
/// recurse (the library's compiler thread has as much).
const JOB_STACK: usize = 256 << 20;

/// How often the calling thread looks at Python's pending signals while a job runs.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Runs `job` with the GIL released on a thread of its own; when Python has a signal pending
/// (Ctrl-C), sets `cancel`, waits for the job to end and returns the signal handler's
/// exception. Without a cancel flag a signal is raised once the job ends.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    cancel: Option<&Arc<AtomicBool>>,
    job: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let mut raised: Option<PyErr> = None;
    let value = py.detach(|| {
        std::thread::scope(|scope| {
            // The job's value comes back through a channel, so that the caller wakes the moment
            // it is there and otherwise looks at Python's signals every `SIGNAL_POLL`.
            let (sender, receiver) = mpsc::channel();
            std::thread::Builder::new()
                .name("eqm".into())
                .stack_size(JOB_STACK)
                .spawn_scoped(scope, move || {
                    // The caller waits until the value is sent, so sending cannot fail.
                    let _ = sender.send(job());
                })
                .map_err(|e| format!("cannot start a thread: {e}"))?;
            loop {
                match receiver.recv_timeout(SIGNAL_POLL) {
                    Ok(value) => return Ok(value),
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Err("the EQM library panicked".to_string()),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
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
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    value.map_err(pyo3::exceptions::PyRuntimeError::new_err)
}
