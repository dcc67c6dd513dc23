//! What a run reports about failing or unreliable steps: the time, the states or equations
//! involved and what to try.
//!
//! Input: the failure of an integration or of a hybrid run, the program (for names) and a
//! [`FailurePoint`] taken at the last accepted point of the run; or, before a run, the model at
//! its initial point and the method. Output: a [`SimError`] whose message names the states that
//! change fastest there (what drives a step size to collapse at a pole) or the stability limit
//! of an explicit fixed-step method whose values blew up, without repeating the time the error
//! carries; and the warning (`W0702`) that a fixed step is beyond an explicit method's
//! stability limit at the start, where the results would be growing garbage rather than an
//! error. It deliberately retries nothing.

use crate::ode::ModelOde;
use crate::run::{RunOptions, SimError};
use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;
use eqm_integrators::{IntegrationError, Method, OdeSystem, Stepper};
use eqm_ir::failure::EvalFailure;
use eqm_ir::slot::Slot;

/// The run at its last accepted point, as a failure message needs it.
#[derive(Debug, Default)]
pub(crate) struct FailurePoint {
    /// The states whose derivatives are largest relative to their tolerance there (at most
    /// three, fastest first), with the size of the derivative.
    fastest: Vec<(String, f64)>,
    /// An explicit fixed-step method and its step.
    explicit_step: Option<(String, f64)>,
}

impl FailurePoint {
    /// A point that tells nothing beyond the failure itself (where no stepper ran).
    pub(crate) fn unknown() -> FailurePoint {
        FailurePoint {
            fastest: Vec::new(),
            explicit_step: None,
        }
    }

    /// `fastest-changing states there: x (|der| = 1e15), ...`
    fn describe(&self) -> String {
        let list: Vec<String> = self
            .fastest
            .iter()
            .map(|(name, rate)| format!("{name} (|der({name})| = {rate:.3e})"))
            .collect();
        format!("the fastest-changing states there are {}", list.join(", "))
    }
}

/// Whether `method` takes fixed steps with an explicit formula (the methods whose stability
/// region is bounded, so that a fixed step can leave it).
fn explicit_fixed_step(method: &Method) -> bool {
    match method {
        Method::Euler | Method::Heun | Method::Midpoint | Method::Rk4 | Method::Ab2 | Method::Ab4 => true,
        Method::Tableau(t) => t.is_explicit() && t.b_hat().is_none(),
        _ => false,
    }
}

/// The warning (`W0702`) that the fixed step of an explicit method lies outside the method's
/// stability region for an eigenvalue of the model's Jacobian at `(t, x)` (its stability
/// function against every eigenvalue, complex ones included), so that errors grow by more than
/// a factor of two over the run; `None` for other methods, models above 200 states or a
/// Jacobian that cannot be evaluated. The factor over the run, not the growth per step, decides:
/// a method that is unstable by a hair on the imaginary axis (euler on an undamped oscillator)
/// gives results that drift slowly, not garbage.
pub(crate) fn stability_warning(ode: &mut ModelOde<'_>, t: f64, x: &[f64], options: &RunOptions) -> Option<Diagnostic> {
    use eqm_integrators::stability::{StabilityFunction, largest_stable_step, limiting};
    let h = options.integrator.step?;
    if !explicit_fixed_step(&options.method) {
        return None;
    }
    let function = StabilityFunction::of(&options.method)?;
    let n = x.len();
    if n == 0 || n > 200 {
        return None;
    }
    let failure = ode.failure.take();
    let mut jacobian = nalgebra::DMatrix::zeros(n, n);
    let evaluated = eqm_integrators::jacobian_of(ode, t, x, &mut jacobian).is_ok();
    ode.failure = failure;
    if !evaluated || jacobian.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let eigenvalues: Vec<_> = jacobian.complex_eigenvalues().iter().copied().collect();
    let limit = largest_stable_step(&function, &eigenvalues);
    if h <= limit {
        return None;
    }
    // The eigenvalue whose errors grow fastest, and by how much per step.
    let (lambda, growth) = limiting(&eigenvalues)
        .into_iter()
        .map(|l| (l, function.growth(l * h)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let steps = ((options.stop - options.start) / h).ceil().max(1.0);
    if growth.ln() * steps < 2f64.ln() {
        return None;
    }
    let number = eqm_diag::text::format_number;
    // Six significant digits: the bisection's last bits would read as 0.0019999999999999996.
    let rounded = |v: f64| eqm_diag::text::round_significant(v, 6);
    let complex = |re: f64, im: f64| {
        if im == 0.0 {
            number(re)
        } else {
            // Eigenvalues of a real matrix come in conjugate pairs: both are meant.
            format!("{} ± {}i", number(re), number(im.abs()))
        }
    };
    let program = ode.instance.program();
    let z = lambda * h;
    Some(
        Diagnostic::warning(
            "W0702",
            format!(
                "{} with the fixed step {} is unstable for this model: at the start its eigenvalue λ = {} gives h·λ = {} outside the method's stability region, where errors grow by a factor {} per step",
                options.method.name(),
                number(h),
                complex(rounded(lambda.re), rounded(lambda.im)),
                complex(rounded(z.re), rounded(z.im)),
                number(rounded(growth))
            ),
            program.model_span(),
            "this model",
        )
        .with_help(if limit > 0.0 {
            format!(
                "take --step below {} or an implicit method (bdf, radau5, implicit-euler); the results of this run grow without bound",
                number(rounded(limit))
            )
        } else {
            "no step is stable for this eigenvalue with this method: take another one (rk4 covers part of the imaginary axis; bdf, radau5 and implicit-euler every decaying mode)".to_string()
        }),
    )
}

/// The run at the stepper's last accepted point (see [`FailurePoint`]).
pub(crate) fn failure_point(ode: &mut ModelOde<'_>, stepper: &dyn Stepper, options: &RunOptions) -> FailurePoint {
    let program = ode.instance.program();
    let explicit = explicit_fixed_step(&options.method);
    let explicit_step = match options.integrator.step {
        Some(h) if explicit => Some((options.method.name().to_string(), h)),
        _ => None,
    };
    let (t, x) = (stepper.time(), stepper.state().to_vec());
    let mut dx = vec![0.0; x.len()];
    let failure = ode.failure.take();
    let evaluated = ode.rhs(t, &x, &mut dx).is_ok();
    ode.failure = failure;
    if !evaluated {
        return FailurePoint {
            fastest: Vec::new(),
            explicit_step,
        };
    }
    let rtol = options.integrator.rtol;
    let atol = match &options.integrator.atol {
        eqm_integrators::Atol::Scalar(a) => *a,
        _ => rtol,
    };
    let mut scored: Vec<(f64, usize)> = dx
        .iter()
        .zip(&x)
        .enumerate()
        .map(|(i, (d, v))| (d.abs() / (atol + rtol * v.abs()), i))
        .filter(|(score, _)| score.is_finite() && *score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    FailurePoint {
        fastest: scored
            .iter()
            .take(3)
            .map(|&(_, i)| (program.slot_name(Slot::State(i as u32)), dx[i].abs()))
            .collect(),
        explicit_step,
    }
}

/// The error of a failed hybrid run.
pub(crate) fn hybrid_failure(
    program: &ExecProgram,
    e: crate::hybrid::HybridError,
    failure: Option<EvalFailure>,
    point: FailurePoint,
) -> SimError {
    match e {
        crate::hybrid::HybridError::Integration(e) => integration_failure(program, e, failure, point),
        crate::hybrid::HybridError::Evaluation(f) => SimError::Failed {
            warnings: Vec::new(),
            time: f.time,
            message: "an event could not be handled".to_string(),
            diagnostic: Some(Box::new(program.failure_diagnostic(&f))),
        },
        crate::hybrid::HybridError::Event {
            code,
            time,
            message,
            span,
            help,
        } => SimError::Failed {
            warnings: Vec::new(),
            time,
            message: message.clone(),
            diagnostic: Some(Box::new(
                Diagnostic::error(code, message, span, "this switch").with_help(help),
            )),
        },
        crate::hybrid::HybridError::Assertion {
            time,
            message,
            span,
            condition,
        } => SimError::Failed {
            warnings: Vec::new(),
            time,
            message: message.clone(),
            diagnostic: Some(Box::new(
                Diagnostic::error("E0705", format!("at t = {time} {message}"), span, "this assertion")
                    .with_note(format!("`{condition}` is false")),
            )),
        },
    }
}

/// The error of a failed integration, naming the states involved. The message leaves the time
/// to [`SimError::Failed`], which carries it.
pub(crate) fn integration_failure(
    program: &ExecProgram,
    e: IntegrationError,
    failure: Option<EvalFailure>,
    point: FailurePoint,
) -> SimError {
    let time = e.time().unwrap_or(f64::NAN);
    let (message, diagnostic) = match &e {
        IntegrationError::NonFinite {
            components, quantity, ..
        } => {
            let names: Vec<String> = components
                .iter()
                .take(8)
                .map(|&i| program.slot_name(Slot::State(i as u32)))
                .collect();
            let what = match quantity {
                eqm_integrators::Quantity::State => "state",
                eqm_integrators::Quantity::Derivative => "derivative",
            };
            let mut message = format!("the {what} of {} became NaN or infinite", names.join(", "));
            if let Some((method, step)) = &point.explicit_step {
                message.push_str(&format!(
                    "; {method} with the fixed step {} is unstable where the step times the model's fastest rate |λ| exceeds its stability limit (2 for euler): a smaller --step or an implicit method (bdf, radau5) avoids that",
                    eqm_diag::text::format_number(*step)
                ));
            } else if !point.fastest.is_empty() {
                message.push_str(&format!("; {}", point.describe()));
            }
            (message, None)
        }
        IntegrationError::StepSizeUnderflow { step, .. } => {
            let mut message = format!("the step size {step:e} became too small to advance time");
            if !point.fastest.is_empty() {
                message.push_str(&format!(
                    "; {}: the solution may run into a singularity (a pole such as 1/(1 - time)) or a switch that is not written as a relation",
                    point.describe()
                ));
            }
            (message, None)
        }
        IntegrationError::TooManySteps { max_steps, .. } => (format!("more than {max_steps} steps"), None),
        IntegrationError::Rhs { message, .. } => (
            message.clone(),
            failure.map(|f| Box::new(program.failure_diagnostic(&f))),
        ),
        IntegrationError::InvalidInput { .. } => (e.to_string(), None),
    };
    SimError::Failed {
        warnings: Vec::new(),
        time,
        message,
        diagnostic,
    }
}
