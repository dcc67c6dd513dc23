//! Work on threads with the compiler's large stack, kept between jobs.
//!
//! Input: jobs (closures that own everything they use) from any front end: the binary runs its
//! whole command as one, the Python module each compilation and each run. Output: each job's
//! value through a [`Pending`], which the caller waits on, with a timeout when it has other
//! things to look at meanwhile (Python's signals), and a panic of the job handed to the caller.
//!
//! Every job needs the stack of [`eqm_syntax::stack`]: compiling recurses over the nesting of
//! classes and equations, and evaluation over expressions. Starting a thread with such a stack
//! for each job costs tens of microseconds (mapping the stack, creating and ending the thread),
//! more than a whole run of a small model; so a thread that has finished its job waits for the
//! next one instead of ending, and a front end calling the library many times pays for a
//! thread once. A job never waits for a busy thread: when every kept thread is busy (two
//! threads of a front end at once, or a job that itself submits one) a new thread starts, and
//! at most [`KEPT_IDLE`] threads stay waiting once their jobs are done.
//!
//! Jobs are `'static`: a kept thread outlives any borrow of its caller, and the library lifts
//! that with no `unsafe`; a caller hands over owned values (an `Arc` of a shared model, say).
//! Deliberately not here: bounding the work (the parser bounds expression depth), and stopping
//! a job (a run's cancel flag does that).

use eqm_syntax::stack::COMPILER_STACK_SIZE;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// How many threads without a job are kept waiting for the next one; more than one so that a
/// front end using several threads (a job submitting another) does not start threads anew.
const KEPT_IDLE: usize = 4;

/// A job as a kept thread sees it: it computes, and returns how to deliver its value. The
/// thread first makes itself available for the next job and then delivers, so that a caller
/// woken by the value and submitting at once finds the thread idle.
type Job = Box<dyn FnOnce() -> Delivery + Send>;
type Delivery = Box<dyn FnOnce() + Send>;

/// The kept threads waiting for a job, each by the sender of its queue.
static IDLE: Mutex<Vec<Sender<Job>>> = Mutex::new(Vec::new());

/// The value of a submitted job, on its way; see the module documentation.
pub struct Pending<T> {
    receiver: Receiver<std::thread::Result<T>>,
}

impl<T> Pending<T> {
    /// Waits up to `timeout` for the job: `None` while it is still running, else its value or
    /// the payload of its panic.
    pub fn wait_for(&self, timeout: Duration) -> Option<std::thread::Result<T>> {
        match self.receiver.recv_timeout(timeout) {
            Ok(value) => Some(value),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err(Box::new(VANISHED))),
        }
    }

    /// Waits for the job and returns its value; a panic of the job continues here.
    pub fn wait(self) -> T {
        match self.receiver.recv() {
            Ok(Ok(value)) => value,
            Ok(Err(panic)) => resume_unwind(panic),
            Err(_) => resume_unwind(Box::new(VANISHED)),
        }
    }
}

/// Why a job has no value when its thread dropped it unanswered. The thread catches every
/// panic of a job, so this means the process is going down.
const VANISHED: &str = "the worker thread ended without finishing its job";

/// Runs `job` on a kept thread with the compiler's stack (a new one when none is idle) and
/// returns its value on its way.
///
/// # Panics
///
/// When the operating system refuses to start a thread and none is idle.
pub fn submit<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> Pending<T> {
    let (reply, receiver) = mpsc::channel();
    let mut job: Job = Box::new(move || {
        let value = catch_unwind(AssertUnwindSafe(job));
        Box::new(move || {
            // A caller that stopped waiting has dropped its end; the value is not needed.
            let _ = reply.send(value);
        })
    });
    loop {
        // A poisoned lock only means a thread panicked while pushing; the list is whole.
        let idle = IDLE.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let Some(worker) = idle else {
            start_worker(job);
            break;
        };
        match worker.send(job) {
            Ok(()) => break,
            // That thread has ended: try the next.
            Err(mpsc::SendError(back)) => job = back,
        }
    }
    Pending { receiver }
}

/// Runs `f` with the compiler's stack and returns its value, as a front end runs its whole
/// work: [`submit`], then [`Pending::wait`].
pub fn with_compiler_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    submit(f).wait()
}

/// Starts a kept thread with `first` as its first job.
fn start_worker(first: Job) {
    std::thread::Builder::new()
        .name("eqm-worker".to_string())
        .stack_size(COMPILER_STACK_SIZE)
        .spawn(move || {
            let (sender, jobs) = mpsc::channel::<Job>();
            let mut job = first;
            loop {
                let deliver = job();
                let kept = {
                    let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
                    let kept = idle.len() < KEPT_IDLE;
                    if kept {
                        idle.push(sender.clone());
                    }
                    kept
                };
                deliver();
                if !kept {
                    return;
                }
                match jobs.recv() {
                    Ok(next) => job = next,
                    Err(_) => return,
                }
            }
        })
        .expect("the operating system refused to start a worker thread");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_kept_threads_and_return_their_values() {
        let first = submit(|| std::thread::current().id()).wait();
        let values: Vec<usize> = (0..100).map(|i| submit(move || i * 2).wait()).collect();
        assert_eq!(values, (0..100).map(|i| i * 2).collect::<Vec<_>>());
        assert_ne!(first, std::thread::current().id());
    }

    #[test]
    fn a_job_may_submit_another() {
        let value = submit(|| submit(|| 21).wait() * 2).wait();
        assert_eq!(value, 42);
    }

    #[test]
    fn a_panic_reaches_the_caller_and_the_threads_go_on() {
        let pending = submit(|| -> usize { panic!("a bad job") });
        let outcome = loop {
            if let Some(outcome) = pending.wait_for(Duration::from_millis(10)) {
                break outcome;
            }
        };
        let payload = outcome.expect_err("the job panicked");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a bad job"));
        assert_eq!(submit(|| 7).wait(), 7);
    }

    #[test]
    fn the_jobs_have_the_compiler_stack() {
        // Recursion far deeper than a default thread's 2 MB stack allows.
        fn depth(n: usize) -> usize {
            let pad = std::hint::black_box([0u8; 512]);
            if n == 0 { pad[0] as usize } else { depth(n - 1) + 1 }
        }
        assert_eq!(submit(|| depth(100_000)).wait(), 100_000);
    }
}
