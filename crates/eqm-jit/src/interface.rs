//! The types of the crate's interface: the [`Segment`]s to compile, the [`JitOptions`] that say
//! how, and the [`JitError`] that says why compiling or running failed. Nothing here compiles.

use cranelift_module::ModuleError;
use eqm_ir::expr::{ExprId, FuncId, VarId};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat::Statement;
use eqm_ir::slot::Slot;

/// Code run in one call: each assignment's expression is evaluated and stored into its slot, in
/// order; then the statements run (an algorithm section: they may assign slots); then each
/// result expression is evaluated into `out[k]`. An expression may read slots written earlier
/// in the same segment.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    pub assignments: Vec<(Slot, ExprId)>,
    pub statements: Vec<Statement>,
    pub results: Vec<ExprId>,
}

impl Segment {
    /// A segment of assignments only.
    pub fn assignments(assignments: Vec<(Slot, ExprId)>) -> Segment {
        Segment {
            assignments,
            ..Segment::default()
        }
    }
}

/// How much Cranelift optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptLevel {
    /// No optimisation passes: the fastest compilation. Measurements showed no run-time gain
    /// from `Speed` on generated model code once loads are de-duplicated, which this module does.
    None,
    /// Cranelift's `speed` level (e-graph optimisations), about 25% more compile time.
    Speed,
}

#[derive(Debug, Clone, Copy)]
pub struct JitOptions {
    pub opt_level: OptLevel,
    /// Run Cranelift's IR verifier on every function (about +80% compile time): on in debug
    /// builds, off in release builds.
    pub verify: bool,
    /// A segment function ends after this many assignments ...
    pub max_assignments_per_function: usize,
    /// ... or once it holds this many Cranelift instructions, whichever comes first (a
    /// function always holds at least one assignment). `usize::MAX` for both never splits.
    /// A re-rolled loop counts as the assignments of its body.
    pub max_instructions_per_function: usize,
    /// Emit runs of assignments that repeat with a fixed stride as loops (`reroll`); the
    /// results are bit for bit those of straight-line code.
    pub reroll: bool,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::None,
            verify: cfg!(debug_assertions),
            max_assignments_per_function: 1000,
            max_instructions_per_function: 10_000,
            reroll: true,
        }
    }
}

/// Why compiling or calling failed.
#[derive(Debug, Clone, PartialEq)]
pub enum JitError {
    /// A variable the expressions read has no slot.
    NoSlot(VarId),
    /// An assignment to a slot that compiled code may not write (time, a state, a parameter).
    ReadOnlyTarget(Slot),
    /// A slot index too large for a 32-bit byte offset.
    SlotOutOfRange(Slot),
    /// An expression (or statement) the JIT does not translate.
    Unsupported {
        node: Option<ExprId>,
        what: String,
    },
    UnknownFunction(FuncId),
    /// An error inside the body of a user function.
    InFunction {
        name: String,
        error: Box<JitError>,
    },
    /// Cranelift rejected the code (a verifier error is a bug in this module).
    Codegen(String),
    /// The host machine is not supported by Cranelift.
    Host(String),
    NoSuchSegment(usize),
    /// The compiled code failed in root `site` of the segment, counting from 0 each assignment,
    /// the statements (one root together) and each result, in the order they run.
    Failed {
        site: usize,
        kind: FailureKind,
    },
    /// A slice given to [`CompiledModule::call`] is shorter than the segment needs.
    SliceTooShort {
        segment: usize,
        slice: &'static str,
        needed: usize,
        got: usize,
    },
}

impl JitError {
    pub(crate) fn codegen(e: ModuleError) -> JitError {
        JitError::Codegen(e.to_string())
    }
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitError::NoSlot(v) => write!(f, "variable #{} has no slot in the evaluation arrays", v.0),
            JitError::ReadOnlyTarget(s) => write!(f, "cannot assign {s:?}: compiled code only writes dx and work"),
            JitError::SlotOutOfRange(s) => write!(f, "{s:?} is beyond the largest index the JIT addresses"),
            JitError::Unsupported { node: Some(n), what } => write!(f, "expression #{}: {what}", n.0),
            JitError::Unsupported { node: None, what } => f.write_str(what),
            JitError::UnknownFunction(id) => write!(f, "no user function #{}", id.0),
            JitError::InFunction { name, error } => write!(f, "in function `{name}`: {error}"),
            JitError::Codegen(m) => write!(f, "code generation failed: {m}"),
            JitError::Host(m) => write!(f, "this machine is not supported by the JIT: {m}"),
            JitError::NoSuchSegment(s) => write!(f, "no segment {s}"),
            JitError::Failed { site, kind } => write!(f, "the compiled code failed in root {site}: {kind:?}"),
            JitError::SliceTooShort {
                segment,
                slice,
                needed,
                got,
            } => write!(
                f,
                "segment {segment} needs `{slice}` of length {needed} or more, got {got}"
            ),
        }
    }
}

impl std::error::Error for JitError {}
