//! Running the `eqm` binary from tests and reading its CSV, the way a user does.
//!
//! Input: the path of the binary (only the CLI's own test binary knows it, through
//! `CARGO_BIN_EXE_eqm`) and the arguments. Output: the exit code and both streams, or the parsed
//! table of a successful run. It deliberately builds nothing: the binary must exist.

use std::process::Command;

/// Runs the `eqm` binary at `binary` with `args` in the repository root; returns (exit code,
/// stdout, stderr).
pub fn eqm(binary: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(binary)
        .args(args)
        .current_dir(crate::REPO)
        .output()
        .expect("the eqm binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A parsed result table.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

/// Splits a line of CSV: double quotes around a field that holds a comma (`"x[1,2]"`) are
/// removed, and the comma inside is kept.
pub fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

impl Table {
    /// A result table from its CSV text; the names of the header are unquoted.
    pub fn parse(csv: &str) -> Table {
        let mut lines = csv.lines();
        let header = csv_fields(lines.next().expect("a header"));
        let rows = lines
            .map(|l| {
                l.split(',')
                    .map(|v| v.parse::<f64>().unwrap_or_else(|_| panic!("`{v}` is a number")))
                    .collect()
            })
            .collect();
        Table { header, rows }
    }

    pub fn column(&self, name: &str) -> Vec<f64> {
        let k = self
            .header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header));
        self.rows.iter().map(|r| r[k]).collect()
    }
}

/// Runs `args` successfully and parses the CSV.
pub fn run(binary: &str, args: &[&str]) -> Table {
    let (code, out, err) = eqm(binary, args);
    assert_eq!(code, 0, "eqm {args:?} failed:\n{err}");
    Table::parse(&out)
}
