//! How an evaluation of an executable program fails: the contract between the program, its
//! back ends (the interpreter and native code) and whoever reports the failure.
//!
//! Every back end reports the same [`EvalFailure`] for the same failure, so that native code
//! and the interpreter can be compared bit for bit, failures included. The limits that make
//! every evaluation end are here too, because native code must enforce them exactly as the
//! interpreter does. Turning a failure into a diagnostic with the names of the equations and
//! variables involved needs the program's symbols; that is the executable program's job.

use crate::expr::VarId;
use crate::slot::Slot;
use crate::symbolic::Condition;
use eqm_diag::source::Span;

/// Loop iterations and function calls allowed in one evaluation before it fails.
pub const DEFAULT_ITERATION_LIMIT: u64 = 10_000_000;
/// Nested user-function calls allowed before evaluation fails (runaway recursion).
pub const MAX_CALL_DEPTH: usize = 10_000;

/// Why an evaluation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum FailureKind {
    /// A computed value is NaN or infinite.
    NotFinite { value: f64 },
    /// The derivative of an implicit equation is zero, or the Jacobian of a loop is singular or
    /// not finite.
    Singular,
    /// Newton's method did not converge (or its line search could not reduce the residual).
    NoConvergence { iterations: u32, residual: f64 },
    /// A condition the plan's symbolic solutions need does not hold for these parameters.
    Condition { condition: Condition, value: f64 },
    /// `assert` in an algorithm or function failed.
    Assert { message: String, span: Span },
    /// `terminate` was called in an algorithm or function.
    Terminate { message: String, span: Span },
    /// Loops and function calls ran longer than the interpreter's iteration limit (an endless
    /// `while` loop, or recursion that branches without end).
    IterationLimit { limit: u64 },
    /// Function calls nested deeper than the limit (runaway recursion).
    RecursionLimit { limit: usize },
    /// A `for` loop with step 0.
    ZeroStep { span: Span },
    /// The delay time of `delay(e, d, dmax)` is outside `[0, dmax]` (or not finite).
    DelayTime { delay: f64, max: f64 },
    /// An external C function stopped with `ModelicaError` (or an external object's
    /// constructor created no object).
    External { function: String, message: String },
    /// An evaluation array has the wrong length.
    Dimension {
        array: &'static str,
        expected: usize,
        found: usize,
    },
}

/// What was being computed when an evaluation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum FailureSite {
    /// Equations (indices into the model's equations) and the unknowns they were solved for.
    Equations { eqs: Vec<usize>, unknowns: Vec<Slot> },
    /// An algorithm section (index into the program's algorithm sections).
    Algorithm { index: usize },
    /// The value of a parameter or constant (parameter program).
    Parameter { var: VarId },
    /// The start value of a variable.
    Start { var: VarId },
    /// The value of a variable removed by alias elimination.
    Output { var: VarId },
    /// A parameter condition of equation `eq`.
    Condition { eq: usize },
    /// The call itself (wrong array lengths).
    Call,
    /// Event handling: a zero-crossing function, a when-condition or a when-equation.
    Event { span: Span },
    /// The delayed value of a `delay` (its delay time, read at every evaluation).
    Delay { span: Span },
}

/// A failed evaluation: what went wrong, where, and at which time (NaN outside the simulation:
/// parameters and start values). Back ends return it; the program's diagnostic for it turns it into
/// a user-facing message with the spans of the equations involved.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalFailure {
    pub time: f64,
    pub kind: FailureKind,
    pub site: FailureSite,
}

impl FailureKind {
    /// The diagnostic code and a description; `subject` names the expression of a condition.
    pub fn describe(&self, subject: &str) -> (&'static str, String) {
        match self {
            FailureKind::NotFinite { value } => ("E0701", format!("the computed value is {value}")),
            FailureKind::Singular => (
                "E0703",
                "the derivative with respect to the unknowns is zero (a singular Jacobian)".to_string(),
            ),
            FailureKind::NoConvergence { iterations, residual } => (
                "E0702",
                format!("Newton's method did not converge in {iterations} iterations (residual {residual:.3e})"),
            ),
            FailureKind::Condition { condition, value } => {
                ("E0704", format!("{subject} {}, but it is {value}", condition.need()))
            }
            FailureKind::Assert { message, .. } => ("E0705", format!("assertion failed: {message}")),
            FailureKind::Terminate { message, .. } => ("E0705", format!("terminate was called: {message}")),
            FailureKind::External { function, message } => (
                "E0705",
                format!("the external function `{function}` reported an error: {message}"),
            ),
            FailureKind::IterationLimit { limit } => (
                "E0706",
                format!("the evaluation ran more than {limit} loop iterations and function calls"),
            ),
            FailureKind::RecursionLimit { limit } => ("E0706", format!("function calls nested deeper than {limit}")),
            FailureKind::ZeroStep { .. } => ("E0706", "a for-loop has step 0".to_string()),
            FailureKind::DelayTime { delay, max } => (
                "E0714",
                format!("the delay time must lie between 0 and the largest delay {max}, but it is {delay}"),
            ),
            FailureKind::Dimension { array, expected, found } => (
                "E0799",
                format!("internal error: `{array}` has {found} entries instead of {expected}"),
            ),
        }
    }
}

/// A short text without names (those need the program: see the program's diagnostic for it).
impl std::fmt::Display for EvalFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (code, what) = self.kind.describe("a parameter expression");
        let site = match &self.site {
            FailureSite::Equations { eqs, .. } => {
                let list: Vec<String> = eqs.iter().take(8).map(|e| format!("e{}", e + 1)).collect();
                format!("solving {}", list.join(", "))
            }
            FailureSite::Algorithm { index } => format!("running algorithm section {}", index + 1),
            FailureSite::Parameter { .. } => "computing a parameter".to_string(),
            FailureSite::Start { .. } => "computing a start value".to_string(),
            FailureSite::Output { .. } => "computing an output".to_string(),
            FailureSite::Condition { eq } => format!("checking the parameters of e{}", eq + 1),
            FailureSite::Call => "checking the arrays".to_string(),
            FailureSite::Event { .. } => "handling an event".to_string(),
            FailureSite::Delay { .. } => "reading a delayed value".to_string(),
        };
        write!(f, "[{code}] {site} failed")?;
        if !self.time.is_nan() {
            write!(f, " at time {}", eqm_diag::text::format_number(self.time))?;
        }
        write!(f, ": {what}")
    }
}

impl std::error::Error for EvalFailure {}
