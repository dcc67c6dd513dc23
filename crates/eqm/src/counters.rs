//! How much compiling this process has done, and the cancellation of a run.
//!
//! Input: the compilations of models (`Session::compile`) and of their native code (on a
//! model's first run), counted as they happen, and a run's cancel flag
//! ([`crate::RunSettings::cancel`]). Output: the counts ([`compilations`]), so that a front end
//! or a test can tell that changing a parameter did not compile anything, and the row sink
//! that stops a cancelled run. The counts are of the whole process (every session, every
//! thread); nothing here decides when to cancel: a front end sets the flag (on Ctrl-C, say).

use crate::results::RowSink;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static MODELS_COMPILED: AtomicUsize = AtomicUsize::new(0);
static NATIVE_COMPILED: AtomicUsize = AtomicUsize::new(0);

/// The compilations this process has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Compilations {
    /// Models analysed and built into executable programs ([`crate::Session::compile`]).
    pub models: usize,
    /// Programs compiled to native code (once per model, on its first run that uses it).
    pub native: usize,
}

/// The compilations this process has done so far; see the module documentation.
pub fn compilations() -> Compilations {
    Compilations {
        models: MODELS_COMPILED.load(Ordering::Relaxed),
        native: NATIVE_COMPILED.load(Ordering::Relaxed),
    }
}

pub(crate) fn count_model_compiled() {
    MODELS_COMPILED.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn count_native_compiled() {
    NATIVE_COMPILED.fetch_add(1, Ordering::Relaxed);
}

/// Whether `error` is how a cancelled run ends (its sink refused a row because the run's
/// cancel flag was set).
pub fn is_cancelled(error: &crate::RunError) -> bool {
    matches!(error, crate::RunError::Io(e) if e.kind() == io::ErrorKind::Interrupted)
}

/// A sink that refuses the next row once `flag` is set, which ends the run.
pub(crate) struct Cancellable<'a> {
    pub(crate) flag: &'a AtomicBool,
    pub(crate) sink: &'a mut dyn RowSink,
}

impl RowSink for Cancellable<'_> {
    fn row(&mut self, time: f64, values: &[f64]) -> io::Result<()> {
        if self.flag.load(Ordering::Relaxed) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "the run was cancelled"));
        }
        self.sink.row(time, values)
    }
}
