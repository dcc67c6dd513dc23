//! The comparison of a result with a reference result by the tube method of the Modelica
//! Association's csv-compare tool, as the reference results of the Modelica Standard Library
//! are judged.
//!
//! Input: the result and the reference as [`SignalTable`]s (built from values, or parsed from
//! CSV text by [`SignalTable::parse_csv`]), the signals to compare (all of the reference's by
//! default; a `comparisonSignals.txt` is read by [`parse_signal_list`]) and the relative
//! tolerance. Output: a [`CompareReport`] with a [`Verdict`] per signal. Each reference signal
//! gets a tube ([`tube`]): half-width in value the tolerance times the signal's range (at least
//! its minimum's magnitude and a nominal floor), in time the tolerance times the time span, so
//! an event a little earlier or later stays inside. A signal passes when every row of the
//! result within the reference's interval lies inside the tube (at a start time the reference
//! holds once, the values after the start's event, only the result's last row there). Beyond
//! csv-compare, a result
//! that does not cover the reference's interval (a run that stopped early) fails too. This
//! module reads no files and decompresses nothing; the front ends do.

mod table;
mod tube;

pub use table::{SignalTable, TableError, parse_signal_list};
pub use tube::{NOMINAL_FLOOR, TubeBounds, TubeOutline, TubeSize};

use crate::format_number;
use std::collections::HashMap;
use std::fmt;

/// The tolerance the Modelica Association compares its reference results with: 0.2 %.
pub const DEFAULT_TOLERANCE: f64 = 0.002;

/// How one signal of the result compares with the reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every row of the result within the reference's interval lies inside the tube.
    Pass,
    /// The result leaves the tube: first at `time`, where its `value` lies outside
    /// `[lower, upper]`; `outside` of the `checked` rows lie outside.
    Leaves {
        time: f64,
        value: f64,
        lower: f64,
        upper: f64,
        outside: usize,
        checked: usize,
    },
    /// The result has no column of this name.
    Missing,
    /// The result's rows (the times of the first and the last, `None` for a result without
    /// rows) do not cover the reference's interval: they start later or end earlier than the
    /// time tolerance allows.
    NotCovered { rows: Option<(f64, f64)> },
}

impl Verdict {
    /// Whether the signal passes.
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }

    /// The verdict's kind as one word, the same in every front end: `pass`, `leaves`,
    /// `missing` or `not-covered`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Leaves { .. } => "leaves",
            Verdict::Missing => "missing",
            Verdict::NotCovered { .. } => "not-covered",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Pass => f.write_str("inside the tube"),
            Verdict::Leaves {
                time,
                value,
                lower,
                upper,
                outside,
                checked,
            } => {
                let side = if *value > *upper {
                    "above"
                } else if *value < *lower {
                    "below"
                } else {
                    "outside"
                };
                write!(
                    f,
                    "leaves the tube at time {}: {} is {side} [{}, {}] ({outside} of {checked} rows outside)",
                    format_number(*time),
                    format_number(*value),
                    format_number(*lower),
                    format_number(*upper)
                )
            }
            Verdict::Missing => f.write_str("missing in the result"),
            Verdict::NotCovered { rows: None } => f.write_str("the result has no rows"),
            Verdict::NotCovered {
                rows: Some((start, end)),
            } => write!(
                f,
                "the result's rows run from time {} to {}, which does not cover the reference's interval",
                format_number(*start),
                format_number(*end)
            ),
        }
    }
}

/// The comparison of one signal.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalComparison {
    pub name: String,
    pub verdict: Verdict,
    /// The tube's half-widths.
    pub size: TubeSize,
}

/// The comparison of a result with a reference: one entry per compared signal, in the order
/// they were asked for (or the reference's order).
#[derive(Debug, Clone, PartialEq)]
pub struct CompareReport {
    pub tolerance: f64,
    pub signals: Vec<SignalComparison>,
}

impl CompareReport {
    /// Whether every compared signal passes.
    pub fn passed(&self) -> bool {
        self.signals.iter().all(|s| s.verdict.passed())
    }

    /// The first signal that fails, if any.
    pub fn first_failure(&self) -> Option<&SignalComparison> {
        self.signals.iter().find(|s| !s.verdict.passed())
    }
}

/// Why a comparison cannot be made at all (the inputs are wrong, not the result).
#[derive(Debug, Clone, PartialEq)]
pub enum CompareError {
    /// The tolerance is not a number in (0, 1].
    Tolerance(f64),
    /// The reference has no rows.
    EmptyReference,
    /// A signal asked for is not in the reference.
    NotInReference(String),
    /// A reference signal has a value that is not finite.
    NonFiniteReference { signal: String, time: f64 },
}

impl fmt::Display for CompareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompareError::Tolerance(t) => write!(f, "the tolerance {} is not a number in (0, 1]", format_number(*t)),
            CompareError::EmptyReference => f.write_str("the reference has no rows"),
            CompareError::NotInReference(name) => write!(f, "the signal `{name}` is not in the reference"),
            CompareError::NonFiniteReference { signal, time } => write!(
                f,
                "the reference's signal `{signal}` is not a finite number at time {}",
                format_number(*time)
            ),
        }
    }
}

impl std::error::Error for CompareError {}

/// Compares `result` with `reference` signal by signal with tubes of relative `tolerance`
/// (see the module documentation): the signals named in `signals`, or every signal of the
/// reference. Names match when they are equal apart from spaces (`x[1, 2]` is `x[1,2]`).
pub fn compare(
    result: &SignalTable,
    reference: &SignalTable,
    signals: Option<&[String]>,
    tolerance: f64,
) -> Result<CompareReport, CompareError> {
    if !(tolerance.is_finite() && tolerance > 0.0 && tolerance <= 1.0) {
        return Err(CompareError::Tolerance(tolerance));
    }
    if reference.time().is_empty() {
        return Err(CompareError::EmptyReference);
    }
    let reference_columns = index_by_name(reference.names());
    let result_columns = index_by_name(result.names());
    let wanted: Vec<&str> = match signals {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => reference.names().iter().map(String::as_str).collect(),
    };
    let mut compared = Vec::with_capacity(wanted.len());
    for name in wanted {
        let Some(&column) = reference_columns.get(&spaceless(name)) else {
            return Err(CompareError::NotInReference(name.to_string()));
        };
        let values = reference.column(column);
        if let Some(row) = values.iter().position(|v| !v.is_finite()) {
            return Err(CompareError::NonFiniteReference {
                signal: name.to_string(),
                time: reference.time()[row],
            });
        }
        let size = TubeSize::for_reference(reference.time(), values, tolerance);
        let verdict = match result_columns.get(&spaceless(name)) {
            None => Verdict::Missing,
            Some(&own) => judge(result.time(), result.column(own), reference.time(), values, size),
        };
        compared.push(SignalComparison {
            name: name.to_string(),
            verdict,
            size,
        });
    }
    Ok(CompareReport {
        tolerance,
        signals: compared,
    })
}

/// The verdict on one signal of the result (`time`, `values`) against the tube of `size`
/// around the reference signal.
fn judge(time: &[f64], values: &[f64], reference_time: &[f64], reference: &[f64], size: TubeSize) -> Verdict {
    let (first, last) = (reference_time[0], reference_time[reference_time.len() - 1]);
    let (Some(&start), Some(&end)) = (time.first(), time.last()) else {
        return Verdict::NotCovered { rows: None };
    };
    if start > first + size.time || end < last - size.time {
        return Verdict::NotCovered {
            rows: Some((start, end)),
        };
    }
    let mut bounds = TubeBounds::new(reference_time, reference, size);
    let mut first_outside = None;
    let (mut outside, mut checked) = (0, 0);
    // A reference with one row at its start time holds there the values after the event
    // iteration at that time (a `sample(0, T)` that fires at the start): the rows of the
    // result before its own last row at that time are the values before that event, which
    // the reference does not have, so they are not judged.
    let one_start_row = reference_time.get(1).is_none_or(|&t| t > first);
    for (k, (&t, &value)) in time.iter().zip(values).enumerate() {
        // Like csv-compare, the rows outside the reference's interval are not judged.
        if t < first || t > last {
            continue;
        }
        if one_start_row && t == first && time.get(k + 1) == Some(&first) {
            continue;
        }
        checked += 1;
        let (lower, upper) = bounds.at(t);
        // A value that is not a number is outside every tube.
        if !(value >= lower && value <= upper) {
            outside += 1;
            first_outside.get_or_insert((t, value, lower, upper));
        }
    }
    match first_outside {
        None => Verdict::Pass,
        Some((time, value, lower, upper)) => Verdict::Leaves {
            time,
            value,
            lower,
            upper,
            outside,
            checked,
        },
    }
}

/// The tube of `size` around the reference's signal `name` as two polylines, for a picture.
pub fn tube(reference: &SignalTable, name: &str, size: TubeSize) -> Option<TubeOutline> {
    let column = index_by_name(reference.names()).get(&spaceless(name)).copied()?;
    (!reference.time().is_empty()).then(|| TubeOutline::new(reference.time(), reference.column(column), size))
}

/// The column of each name, by its text without spaces.
fn index_by_name(names: &[String]) -> HashMap<String, usize> {
    names.iter().enumerate().map(|(i, n)| (spaceless(n), i)).collect()
}

fn spaceless(name: &str) -> String {
    name.chars().filter(|c| !c.is_whitespace()).collect()
}
