//! The one path follower of EQM's continuations: the solution of a problem `H(x, λ) = 0`
//! followed in λ from 0 to 1 by predictor and corrector steps.
//!
//! Input: the solution at λ = 0 and a corrector that solves the problem at a given λ from a
//! prediction. Output: the solution at λ = 1, with the steps taken and rejected; or the last λ
//! reached with the failure of the last correction. The `homotopy()` continuation of an
//! initialization ([`crate::initial`]) and the continuation on the start values of one block
//! ([`super::start_path`]) both follow their paths here, so they take their steps alike.
//!
//! Each step predicts the solution at the next λ by the secant through the last two solutions
//! (the last solution alone after the first step), corrects it, halves the step when the
//! correction fails or jumps away from the prediction (another branch, past a turning point of
//! the path) and doubles it after a success. It deliberately does not search for roots by
//! bracketing along the path, which could jump to another branch, and does not follow a path
//! past a turning point in λ (that would need the arc length as parameter).

/// The first step in λ.
const FIRST_STEP: f64 = 0.05;
/// The largest step in λ: a larger one may jump to another branch of the solution path.
const LARGEST_STEP: f64 = 0.25;
/// The largest correction of a value from its prediction, relative to its magnitude, that
/// still counts as following the path.
const LARGEST_CORRECTION: f64 = 0.5;
/// The smallest step in λ before the continuation gives up.
const SMALLEST_STEP: f64 = 1e-6;

/// The steps a path took and the corrections that failed or left the path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathSteps {
    pub steps: usize,
    pub rejected: usize,
}

/// The corrector of a path: given λ and the prediction there, writes the solution there or
/// fails.
pub type Corrector<'c, E> = dyn FnMut(f64, &mut [f64]) -> Result<(), E> + 'c;

/// Follows the path from the solution at λ = 0 that `solution` holds to λ = 1. `correct(λ,
/// values)` receives the prediction at λ in `values` and replaces it by the solution there, or
/// fails. On success `solution` holds the solution at λ = 1; when the path is lost, the last
/// solution reached, and the error is that λ with the failure of the last correction (none when
/// the corrections converged but jumped away from the path).
pub fn follow<E>(
    solution: &mut Vec<f64>,
    correct: &mut Corrector<'_, E>,
    taken: &mut PathSteps,
) -> Result<(), (f64, Option<E>)> {
    let mut at = 0.0;
    // The solution before the last and its λ, for the secant predictor.
    let mut before: Option<(f64, Vec<f64>)> = None;
    let mut step = FIRST_STEP;
    let mut values = vec![0.0; solution.len()];
    while at < 1.0 {
        let next = if at + step >= 1.0 - SMALLEST_STEP {
            1.0
        } else {
            at + step
        };
        predict(
            &mut values,
            solution,
            before.as_ref().map(|(l, w)| (at - l, w.as_slice())),
            next - at,
        );
        let prediction = values.clone();
        let failure = match correct(next, &mut values) {
            Ok(()) if stays_on_path(solution, &prediction, &values) => {
                taken.steps += 1;
                let previous = std::mem::replace(solution, values.clone());
                before = Some((at, previous));
                at = next;
                step = (2.0 * step).min(LARGEST_STEP);
                continue;
            }
            Ok(()) => None,
            Err(failure) => Some(failure),
        };
        taken.rejected += 1;
        step /= 2.0;
        if step < SMALLEST_STEP {
            return Err((at, failure));
        }
    }
    Ok(())
}

/// Whether a converged correction stayed on the path: no value moved, in one step, by more than
/// [`LARGEST_CORRECTION`] of its magnitude at the last `solution` (of 1 for values below 1),
/// neither from that solution nor from its `prediction`. A larger move means the corrector left
/// the path for another branch, as it does past a turning point of the path in λ, where no
/// solution is near; a path that is followed moves less the smaller the step.
fn stays_on_path(solution: &[f64], prediction: &[f64], corrected: &[f64]) -> bool {
    solution.iter().zip(prediction).zip(corrected).all(|((s, p), c)| {
        let scale = s.abs().max(1.0);
        (c - p).abs() <= LARGEST_CORRECTION * scale.max(p.abs()) && (c - s).abs() <= LARGEST_CORRECTION * scale
    })
}

/// Writes into `out` the prediction of the solution a step `h` beyond `solution`: the secant
/// through the solution before (`h_before` earlier) and `solution` when there is one,
/// `solution` itself otherwise. Values that do not change along the path stay as they are; a
/// non-finite prediction falls back to the last solution.
fn predict(out: &mut [f64], solution: &[f64], before: Option<(f64, &[f64])>, h: f64) {
    for (k, &value) in solution.iter().enumerate() {
        out[k] = match before {
            Some((h_before, older)) if h_before > 0.0 => {
                let slope = (value - older[k]) / h_before;
                let p = value + slope * h;
                if p.is_finite() { p } else { value }
            }
            _ => value,
        };
    }
}
