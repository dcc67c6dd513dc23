//! The tables a comparison reads: a time column and named signal columns, built from values or
//! parsed from the text of a CSV file, and the signal lists of `comparisonSignals.txt`.
//!
//! Input: CSV text (a header of names, quoted or not, whose first column is the time; one row
//! of numbers per line, comma separated) or a signal list (`time`, then one name per line).
//! Output: a [`SignalTable`] or the list of names, or a [`TableError`] naming the line. This
//! module reads no file and decompresses nothing: the front end hands over the text.

use std::fmt;

/// A table of signals over time: one time column, non-decreasing (two rows at the same time
/// are an event: the values before and after it), and one column of values per named signal.
#[derive(Debug, Clone, PartialEq)]
pub struct SignalTable {
    time: Vec<f64>,
    names: Vec<String>,
    columns: Vec<Vec<f64>>,
}

/// What is wrong with a table or a signal list, with the 1-based line of the text it was read
/// from (0 when it was not read from text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

impl std::error::Error for TableError {}

fn error(line: usize, message: impl Into<String>) -> TableError {
    TableError {
        line,
        message: message.into(),
    }
}

impl SignalTable {
    /// A table from its time column and one column per name. The columns must be as long as the
    /// time column, the times finite and non-decreasing and the names distinct.
    pub fn new(time: Vec<f64>, names: Vec<String>, columns: Vec<Vec<f64>>) -> Result<SignalTable, TableError> {
        if names.len() != columns.len() {
            return Err(error(0, format!("{} names for {} columns", names.len(), columns.len())));
        }
        for (name, column) in names.iter().zip(&columns) {
            if column.len() != time.len() {
                return Err(error(
                    0,
                    format!("column `{name}` has {} values for {} times", column.len(), time.len()),
                ));
            }
        }
        check_names(&names, 0)?;
        if let Some(row) = time_order_violation(&time) {
            return Err(error(0, time_order_message(&time, row)));
        }
        Ok(SignalTable { time, names, columns })
    }

    /// Parses the text of a CSV file: a header whose first column is the time (`time`, `Time`
    /// or `t`, quoted or not) and then one line of numbers per row. Blank lines are skipped.
    pub fn parse_csv(text: &str) -> Result<SignalTable, TableError> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((header_index, header)) = lines.next() else {
            return Err(error(0, "the table is empty: it has no header line"));
        };
        let mut fields = Vec::new();
        split_fields(header, &mut fields).map_err(|m| error(header_index + 1, m))?;
        let Some((first, names)) = fields.split_first() else {
            return Err(error(header_index + 1, "the header names no column"));
        };
        if !matches!(first.as_str(), "time" | "Time" | "t") {
            return Err(error(
                header_index + 1,
                format!("the first column is `{first}`; a result table starts with the time column `time`"),
            ));
        }
        let names: Vec<String> = names.to_vec();
        check_names(&names, header_index + 1)?;
        let mut time = Vec::new();
        let mut columns = vec![Vec::new(); names.len()];
        for (index, line) in lines {
            let number = index + 1;
            split_fields(line, &mut fields).map_err(|m| error(number, m))?;
            if fields.len() != names.len() + 1 {
                return Err(error(
                    number,
                    format!("{} fields for the header's {} columns", fields.len(), names.len() + 1),
                ));
            }
            let mut values = fields.iter().map(|field| {
                field
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| error(number, format!("`{field}` is not a number")))
            });
            let t = values.next().expect("a row has its time field")?;
            if !t.is_finite() {
                return Err(error(number, format!("the time `{t}` is not a finite number")));
            }
            if time.last().is_some_and(|&last| t < last) {
                return Err(error(
                    number,
                    format!(
                        "the time goes back from {} to {}",
                        crate::format_number(time[time.len() - 1]),
                        crate::format_number(t)
                    ),
                ));
            }
            time.push(t);
            for (column, value) in columns.iter_mut().zip(values) {
                column.push(value?);
            }
        }
        Ok(SignalTable { time, names, columns })
    }

    /// The time column.
    pub fn time(&self) -> &[f64] {
        &self.time
    }

    /// The names of the signal columns, in their order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The values of the signal at `index` of [`SignalTable::names`].
    pub fn column(&self, index: usize) -> &[f64] {
        &self.columns[index]
    }

    /// The values of the signal named `name`, if the table has it.
    pub fn column_named(&self, name: &str) -> Option<&[f64]> {
        self.names.iter().position(|n| n == name).map(|i| self.column(i))
    }
}

/// Parses a signal list as the reference results store it (`comparisonSignals.txt`): the first
/// line is `time`, then one signal name per line. Blank lines are skipped, surrounding spaces
/// ignored, and a name listed twice is compared once.
pub fn parse_signal_list(text: &str) -> Result<Vec<String>, TableError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    match lines.next() {
        Some((_, "time" | "Time" | "t")) => {}
        Some((line, first)) => {
            return Err(error(
                line,
                format!("a signal list starts with the line `time`, not `{first}`"),
            ));
        }
        None => return Err(error(0, "the signal list is empty: it has not even the line `time`")),
    }
    let mut seen = std::collections::HashSet::new();
    Ok(lines
        .map(|(_, name)| name.trim_matches('"').to_string())
        .filter(|name| seen.insert(name.clone()))
        .collect())
}

/// Checks that no name is empty or repeated.
fn check_names(names: &[String], line: usize) -> Result<(), TableError> {
    let mut seen = std::collections::HashSet::with_capacity(names.len());
    for name in names {
        if name.trim().is_empty() {
            return Err(error(line, "a column has no name"));
        }
        if !seen.insert(name.as_str()) {
            return Err(error(line, format!("the column `{name}` appears twice")));
        }
    }
    Ok(())
}

/// The first row whose time is not finite or goes back, if any.
fn time_order_violation(time: &[f64]) -> Option<usize> {
    (0..time.len()).find(|&i| !time[i].is_finite() || (i > 0 && time[i] < time[i - 1]))
}

fn time_order_message(time: &[f64], row: usize) -> String {
    if time[row].is_finite() {
        format!(
            "the time goes back from {} to {} at row {}",
            crate::format_number(time[row - 1]),
            crate::format_number(time[row]),
            row + 1
        )
    } else {
        format!("the time of row {} is not a finite number", row + 1)
    }
}

/// Splits one CSV line into its fields (into `fields`, cleared first): comma separated, a field
/// in double quotes may hold commas, and `""` inside quotes is one quote (RFC 4180).
fn split_fields(line: &str, fields: &mut Vec<String>) -> Result<(), String> {
    fields.clear();
    if !line.contains('"') {
        fields.extend(line.split(',').map(|f| f.trim().to_string()));
        return Ok(());
    }
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        let mut field = String::new();
        if chars.next_if_eq(&'"').is_some() {
            loop {
                match chars.next() {
                    Some('"') if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("a quoted field is not closed".to_string()),
                }
            }
            while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(());
                }
                Some(',') => fields.push(field),
                Some(c) => return Err(format!("`{c}` follows a quoted field; a comma should")),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim().to_string());
                        return Ok(());
                    }
                    Some(',') => break,
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim().to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_plain_fields_split_alike() {
        let mut fields = Vec::new();
        split_fields(r#""time", "a[1,2]","say ""hi""",b"#, &mut fields).unwrap();
        assert_eq!(fields, ["time", "a[1,2]", "say \"hi\"", "b"]);
        split_fields("1, 2 ,3", &mut fields).unwrap();
        assert_eq!(fields, ["1", "2", "3"]);
        assert!(split_fields(r#""open,1"#, &mut fields).is_err());
        assert!(split_fields(r#""a"x,1"#, &mut fields).is_err());
    }
}
