//! The text of `String(v, ...)`, Modelica: a Boolean, Integer or Real value with the
//! options `significantDigits` (a Real's significant digits, 6 by default), `minimumLength`
//! and `leftJustified` (the text padded with blanks to at least that many characters, on the
//! right or on the left), or a C format specifier (`format = "8.3f"`).
//!
//! Input: a [`StringFormat`], read once when the model is compiled (a format specifier is
//! parsed then, so a bad one is the flattener's diagnostic), and a value. Output: its text,
//! computed here in Rust for both back ends alike, with C's `printf` rules for `%g`, `%e`,
//! `%f`, `%d`, `%x` and `%o`. It deliberately formats values only: the literal parts of a message are the
//! message's own.

use super::ScalarType;

/// How `String(v, ...)` shows a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringFormat {
    /// The significant digits of a Real (`%.{n}g`), 6 unless given.
    pub significant_digits: usize,
    /// The text is padded with blanks to at least this many characters.
    pub minimum_length: usize,
    /// Padding goes on the right (`true`, the default) or on the left.
    pub left_justified: bool,
    /// `format = "..."`: a C format specifier, which replaces the three options above.
    pub c_format: Option<CFormat>,
    /// The names of the literals of the enumeration the value is of: the value `k` is shown as
    /// the `k`-th name, since an enumeration value is its position during the run.
    pub literals: Option<std::sync::Arc<[String]>>,
}

impl Default for StringFormat {
    fn default() -> StringFormat {
        StringFormat {
            significant_digits: 6,
            minimum_length: 0,
            left_justified: true,
            c_format: None,
            literals: None,
        }
    }
}

/// A C format specifier without its `%`: `[flags][width][.precision]conversion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CFormat {
    /// `-`: padding on the right.
    pub left: bool,
    /// `+`: a sign also for positive numbers.
    pub plus: bool,
    /// ` `: a blank where a positive number has no sign.
    pub space: bool,
    /// `#`: the alternative form (a `g` keeps its trailing zeros, `x` gets `0x`).
    pub alternative: bool,
    /// `0`: padding with zeros after the sign.
    pub zero: bool,
    pub width: usize,
    pub precision: Option<usize>,
    /// One of `f F e E g G` (Real) or `d i u x X o` (Integer).
    pub conversion: char,
}

impl CFormat {
    /// Parses `[flags][width][.precision]conversion` (a leading `%` is allowed); the error
    /// says what is wrong.
    pub fn parse(text: &str) -> Result<CFormat, String> {
        let spec = text.strip_prefix('%').unwrap_or(text);
        let mut chars = spec.chars().peekable();
        let mut f = CFormat {
            left: false,
            plus: false,
            space: false,
            alternative: false,
            zero: false,
            width: 0,
            precision: None,
            conversion: 'g',
        };
        while let Some(&c) = chars.peek() {
            match c {
                '-' => f.left = true,
                '+' => f.plus = true,
                ' ' => f.space = true,
                '#' => f.alternative = true,
                '0' => f.zero = true,
                _ => break,
            }
            chars.next();
        }
        let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut n: Option<usize> = None;
            while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize).min(1000));
                chars.next();
            }
            n
        };
        f.width = digits(&mut chars).unwrap_or(0);
        if chars.peek() == Some(&'.') {
            chars.next();
            f.precision = Some(digits(&mut chars).unwrap_or(0));
        }
        let rest: String = chars.collect();
        let mut conversion = rest.chars();
        match (conversion.next(), conversion.next()) {
            (Some(c @ ('f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'd' | 'i' | 'u' | 'x' | 'X' | 'o')), None) => {
                f.conversion = c;
                Ok(f)
            }
            (None, _) => Err(format!("`{text}` has no conversion (such as `f`, `e`, `g` or `d`)")),
            _ => Err(format!(
                "`{text}` is not `[flags][width][.precision]conversion` with a conversion among `f e E g G d i u x X o`"
            )),
        }
    }

    /// Whether the conversion is one of an Integer (`d i u x X o`).
    pub fn is_integer(&self) -> bool {
        matches!(self.conversion, 'd' | 'i' | 'u' | 'x' | 'X' | 'o')
    }
}

impl StringFormat {
    /// The text of `value`, of type `ty` (an Integer or Boolean value is exact in an f64).
    pub fn render(&self, value: f64, ty: ScalarType) -> String {
        if let Some(names) = &self.literals
            && value >= 1.0
            && let Some(name) = names.get(value as usize - 1)
        {
            return self.justify(name.clone());
        }
        if let Some(c) = &self.c_format {
            return c_format(c, value);
        }
        let text = match ty {
            ScalarType::Boolean => (if value != 0.0 { "true" } else { "false" }).to_string(),
            ScalarType::Integer => format!("{}", value as i64),
            ScalarType::Real | ScalarType::String => general(value, self.significant_digits, false, false),
        };
        self.justify(text)
    }

    /// `text` padded with blanks to `minimum_length`, as `leftJustified` says.
    pub fn justify(&self, text: String) -> String {
        pad(text, self.minimum_length, self.left_justified, false)
    }
}

/// `text` padded with blanks (or zeros after the sign, `zeros`) to `width` characters.
fn pad(text: String, width: usize, left_justified: bool, zeros: bool) -> String {
    let n = text.chars().count();
    if n >= width {
        return text;
    }
    let fill = width - n;
    if left_justified {
        return text + &" ".repeat(fill);
    }
    if zeros {
        let sign = text.starts_with(['-', '+', ' ']) as usize;
        let (head, tail) = text.split_at(sign);
        return format!("{head}{}{tail}", "0".repeat(fill));
    }
    " ".repeat(fill) + &text
}

/// `printf("%...", value)` for the specifier `c`.
fn c_format(c: &CFormat, value: f64) -> String {
    let upper = c.conversion.is_ascii_uppercase();
    let body = match c.conversion {
        'd' | 'i' | 'u' => format!("{}", (value as i64).unsigned_abs()),
        'x' | 'X' => {
            let hex = format!("{:x}", value as i64);
            let hex = if c.alternative && value as i64 != 0 {
                format!("0x{hex}")
            } else {
                hex
            };
            if upper { hex.to_uppercase() } else { hex }
        }
        'o' => {
            let oct = format!("{:o}", value as i64);
            if c.alternative && !oct.starts_with('0') {
                format!("0{oct}")
            } else {
                oct
            }
        }
        _ if !value.is_finite() => {
            let text = if value.is_nan() { "nan" } else { "inf" };
            if upper { text.to_uppercase() } else { text.to_string() }
        }
        'f' | 'F' => format!("{:.*}", c.precision.unwrap_or(6), value.abs()),
        'e' | 'E' => exponential(value.abs(), c.precision.unwrap_or(6), upper),
        _ => general(value.abs(), c.precision.unwrap_or(6), c.alternative, upper),
    };
    let negative = if c.is_integer() {
        (value as i64) < 0 && !matches!(c.conversion, 'x' | 'X' | 'o')
    } else {
        value.is_sign_negative() && !value.is_nan()
    };
    let sign = if negative {
        "-"
    } else if c.plus && !matches!(c.conversion, 'x' | 'X' | 'o' | 'u') {
        "+"
    } else if c.space && !matches!(c.conversion, 'x' | 'X' | 'o' | 'u') {
        " "
    } else {
        ""
    };
    let zeros = c.zero && !c.left && (value.is_finite() || c.is_integer());
    pad(format!("{sign}{body}"), c.width, c.left, zeros)
}

/// `%.{precision}e` as C writes it: at least two exponent digits, with a sign.
fn exponential(value: f64, precision: usize, upper: bool) -> String {
    let rust = format!("{:.*e}", precision, value);
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{sign}{:02}", exponent.abs())
}

/// `%.{precision}g` as C writes it: `%e` when the exponent is below -4 or not below the
/// precision, else `%f`, with trailing zeros removed unless `keep_zeros` (`#`).
fn general(value: f64, precision: usize, keep_zeros: bool, upper: bool) -> String {
    if !value.is_finite() {
        let text = if value.is_nan() {
            "nan"
        } else if value < 0.0 {
            "-inf"
        } else {
            "inf"
        };
        return if upper { text.to_uppercase() } else { text.to_string() };
    }
    let p = precision.max(1);
    // The exponent after rounding to p significant digits decides the style.
    let rounded = format!("{:.*e}", p - 1, value);
    let exponent: i64 = rounded.split_once('e').and_then(|(_, x)| x.parse().ok()).unwrap_or(0);
    let text = if exponent < -4 || exponent >= p as i64 {
        exponential(value, p - 1, upper)
    } else {
        format!("{:.*}", (p as i64 - 1 - exponent) as usize, value)
    };
    if keep_zeros {
        return text;
    }
    strip_zeros(&text)
}

/// Removes the trailing zeros of the fraction (and a point left alone) of a `%f` or `%e` text.
fn strip_zeros(text: &str) -> String {
    let (number, exponent) = match text.find(['e', 'E']) {
        Some(k) => text.split_at(k),
        None => (text, ""),
    };
    if !number.contains('.') {
        return text.to_string();
    }
    let number = number.trim_end_matches('0').trim_end_matches('.');
    format!("{number}{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real(v: f64, digits: usize) -> String {
        StringFormat {
            significant_digits: digits,
            ..StringFormat::default()
        }
        .render(v, ScalarType::Real)
    }

    fn c(spec: &str, v: f64) -> String {
        c_format(&CFormat::parse(spec).expect("a valid specifier"), v)
    }

    #[test]
    fn significant_digits_follow_printf_g() {
        // printf("%.6g") of each value, written out by hand.
        assert_eq!(real(0.1, 6), "0.1");
        assert_eq!(real(1.0 / 3.0, 6), "0.333333");
        assert_eq!(real(2.0 / 3.0, 3), "0.667");
        assert_eq!(real(123456.0, 6), "123456");
        assert_eq!(real(1234567.0, 6), "1.23457e+06");
        assert_eq!(real(999999.5, 6), "1e+06");
        assert_eq!(real(0.0001, 6), "0.0001");
        assert_eq!(real(0.00001234, 6), "1.234e-05");
        assert_eq!(real(-2.5, 6), "-2.5");
        assert_eq!(real(0.0, 6), "0");
        assert_eq!(real(100.0, 1), "1e+02");
        assert_eq!(real(1e300, 6), "1e+300");
        assert_eq!(real(f64::INFINITY, 6), "inf");
    }

    #[test]
    fn minimum_length_pads_with_blanks() {
        let f = |left| StringFormat {
            minimum_length: 5,
            left_justified: left,
            ..StringFormat::default()
        };
        assert_eq!(f(true).render(42.0, ScalarType::Integer), "42   ");
        assert_eq!(f(false).render(42.0, ScalarType::Integer), "   42");
        assert_eq!(f(false).render(1.0, ScalarType::Boolean), " true");
        assert_eq!(f(false).render(123456.0, ScalarType::Integer), "123456");
    }

    #[test]
    fn c_specifiers_follow_printf() {
        assert_eq!(c("8.3f", 1.23456), "   1.235");
        assert_eq!(c("-8.3f", 1.23456), "1.235   ");
        assert_eq!(c("08.3f", -1.23456), "-001.235");
        assert_eq!(c("+.2e", 12345.678), "+1.23e+04");
        assert_eq!(c(".3E", 0.000123456), "1.235E-04");
        assert_eq!(c("g", 0.5), "0.5");
        assert_eq!(c("#g", 0.5), "0.500000");
        assert_eq!(c(".10g", 1.0 / 3.0), "0.3333333333");
        assert_eq!(c("d", -42.0), "-42");
        assert_eq!(c("5d", 42.0), "   42");
        assert_eq!(c("05d", -42.0), "-0042");
        assert_eq!(c("x", 255.0), "ff");
        assert_eq!(c("#X", 255.0), "0XFF");
        assert_eq!(c("o", 8.0), "10");
        assert_eq!(c("%.1f", 0.25), "0.2");
        assert_eq!(c("f", 2.0), "2.000000");
    }

    #[test]
    fn bad_specifiers_are_refused() {
        assert!(CFormat::parse("8.3").is_err());
        assert!(CFormat::parse("s").is_err());
        assert!(CFormat::parse("fx").is_err());
    }
}
