//! Spreadsheet cell references as Vensim's data functions and workbooks write them.
//!
//! Input: a reference (`B2`, `$B$2`), a column's letters (`A`), a row's number (`1`), or a
//! named range's formula (`Sheet1!$A$1:$B$2`, `'My sheet'!$C$4`). Output: rows and columns
//! from 0. What it does not do: read references of other styles (`R1C1`), ranges over several
//! areas, or formulas that compute a range; such a name is left out of the workbook's names.

use super::NamedRange;

/// The column of letters `A`, `B`, ..., `Z`, `AA`, ... (from 0), without regard to case.
pub fn column(letters: &str) -> Option<usize> {
    let letters = letters.trim().trim_start_matches('$');
    if letters.is_empty() || letters.len() > 3 || !letters.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut n = 0usize;
    for c in letters.chars() {
        n = n * 26 + (c.to_ascii_uppercase() as usize - 'A' as usize + 1);
    }
    Some(n - 1)
}

/// The row of a number `1`, `2`, ... (from 0).
pub fn row(digits: &str) -> Option<usize> {
    let digits = digits.trim().trim_start_matches('$');
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_sub(1)
}

/// A cell reference `B2` or `$B$2` as (row, column), from 0.
pub fn cell(reference: &str) -> Option<(usize, usize)> {
    let reference = reference.trim();
    let split = reference
        .char_indices()
        .find(|(i, c)| *i > 0 && (c.is_ascii_digit() || *c == '$'))
        .map(|(i, _)| i)?;
    let (letters, digits) = reference.split_at(split);
    Some((row(digits)?, column(letters)?))
}

/// A workbook's defined name with its formula, as a range of one area on one sheet.
pub fn named_range(name: &str, formula: &str) -> Option<NamedRange> {
    let formula = formula.trim().trim_start_matches('=');
    let (sheet, area) = formula.rsplit_once('!')?;
    let sheet = sheet.trim();
    let sheet = match sheet.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        Some(quoted) => quoted.replace("''", "'"),
        None => sheet.to_string(),
    };
    let (first, last) = match area.split_once(':') {
        Some((a, b)) => (cell(a)?, cell(b)?),
        None => (cell(area)?, cell(area)?),
    };
    Some(NamedRange {
        name: name.to_string(),
        sheet,
        first: (first.0.min(last.0), first.1.min(last.1)),
        last: (first.0.max(last.0), first.1.max(last.1)),
    })
}
