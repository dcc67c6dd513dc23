//! How numbers are written in every text EQM produces, so that a value reads the same in the
//! pretty-printed source, the flat model, `explain` and the results.

/// Shortest text that reads back as the same `f64` and still lexes as a real literal.
pub fn real(out: &mut String, v: f64) {
    let s = format!("{v:?}");
    out.push_str(&s);
    if !s.contains(['.', 'e', 'E']) && v.is_finite() {
        out.push_str(".0");
    }
}

/// The shortest text that parses back to `v`: plain digits for ordinary magnitudes, an exponent
/// for very small or large ones (Rust's formatting of both is shortest round-trip).
pub fn push_number(line: &mut String, v: f64) {
    use std::fmt::Write as _;
    let a = v.abs();
    if v == 0.0 || (1e-5..1e16).contains(&a) || !v.is_finite() {
        let _ = write!(line, "{v}");
    } else {
        let _ = write!(line, "{v:e}");
    }
}

/// [`push_number`] into a new string.
pub fn format_number(v: f64) -> String {
    let mut s = String::new();
    push_number(&mut s, v);
    s
}
