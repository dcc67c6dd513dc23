//! The tube comparison of the library ([`eqm::compare`]) for Python.
//!
//! Input: tables as `(names, time, columns)` (the package turns a `Result`, a DataFrame or the
//! text of a CSV file into them), the signals to compare and the tolerance; CSV text and signal
//! lists to parse. Output: one dictionary per compared signal with its verdict, or the parsed
//! table or list; a table or comparison that cannot be made raises `ValueError` with the
//! library's message. Deliberately not here: reading or decompressing files (the package does).

use eqm::compare::{SignalTable, Verdict};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A table as Python hands it over: the signal names, the times and one column per name.
type TableParts = (Vec<String>, Vec<f64>, Vec<Vec<f64>>);

fn table(parts: TableParts, what: &str) -> PyResult<SignalTable> {
    let (names, time, columns) = parts;
    SignalTable::new(time, names, columns).map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// Parses the text of a CSV file into `(names, time, columns)`.
#[pyfunction]
pub(crate) fn parse_csv(text: &str) -> PyResult<TableParts> {
    let table = SignalTable::parse_csv(text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let columns = (0..table.names().len()).map(|i| table.column(i).to_vec()).collect();
    Ok((table.names().to_vec(), table.time().to_vec(), columns))
}

/// Parses a signal list (`comparisonSignals.txt`).
#[pyfunction]
pub(crate) fn parse_signal_list(text: &str) -> PyResult<Vec<String>> {
    eqm::compare::parse_signal_list(text).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Compares `result` with `reference`; one dictionary per signal: `name`, `passed`, `verdict`
/// (`pass`, `leaves`, `missing`, `not-covered`), `reason` (the text `eqm compare` prints), the
/// tube's half-widths `tube_time` and `tube_value`, and for `leaves` the first time outside
/// with the value and bounds there and the counts of rows outside and checked.
#[pyfunction]
#[pyo3(signature = (result, reference, signals, tolerance))]
pub(crate) fn compare<'py>(
    py: Python<'py>,
    result: TableParts,
    reference: TableParts,
    signals: Option<Vec<String>>,
    tolerance: f64,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let result = table(result, "the result")?;
    let reference = table(reference, "the reference")?;
    let report = eqm::compare::compare(&result, &reference, signals.as_deref(), tolerance)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    report
        .signals
        .iter()
        .map(|signal| {
            let d = PyDict::new(py);
            d.set_item("name", &signal.name)?;
            d.set_item("passed", signal.verdict.passed())?;
            d.set_item("reason", signal.verdict.to_string())?;
            d.set_item("tube_time", signal.size.time)?;
            d.set_item("tube_value", signal.size.value)?;
            if let Verdict::Leaves {
                time,
                value,
                lower,
                upper,
                outside,
                checked,
            } = &signal.verdict
            {
                d.set_item("time", time)?;
                d.set_item("value", value)?;
                d.set_item("lower", lower)?;
                d.set_item("upper", upper)?;
                d.set_item("outside", outside)?;
                d.set_item("checked", checked)?;
            }
            d.set_item("verdict", signal.verdict.kind())?;
            Ok(d)
        })
        .collect()
}
