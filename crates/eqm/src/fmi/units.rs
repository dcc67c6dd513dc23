//! The SI base-unit exponents of a Modelica unit string, for an FMU's `UnitDefinitions`.
//!
//! Input: a unit as a model writes it (`"m/s2"`, `"kg.m2"`, `"N.m"`, `"kOhm"`, `"degC"`).
//! Output: its [`BaseUnit`] (exponents of kg, m, s, A, K, mol, cd, rad, a factor and an
//! offset), or `None` when a symbol is not one of the SI units and prefixes listed here: the
//! unit is then written without a base unit, which FMI allows. This module does not check
//! that units agree, and knows no other unit systems.

/// A unit in SI base units: `value_in_base = factor * value + offset`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseUnit {
    /// Exponents of kg, m, s, A, K, mol, cd, rad.
    pub exponents: [i32; 8],
    pub factor: f64,
    pub offset: f64,
}

/// The attribute names of the exponents, in the order of [`BaseUnit::exponents`].
pub const BASE_NAMES: [&str; 8] = ["kg", "m", "s", "A", "K", "mol", "cd", "rad"];

/// The symbols known, with their exponents (kg, m, s, A, K, mol, cd, rad) and factor.
const SYMBOLS: &[(&str, [i32; 8], f64)] = &[
    ("m", [0, 1, 0, 0, 0, 0, 0, 0], 1.0),
    ("kg", [1, 0, 0, 0, 0, 0, 0, 0], 1.0),
    ("g", [1, 0, 0, 0, 0, 0, 0, 0], 1e-3),
    ("s", [0, 0, 1, 0, 0, 0, 0, 0], 1.0),
    ("A", [0, 0, 0, 1, 0, 0, 0, 0], 1.0),
    ("K", [0, 0, 0, 0, 1, 0, 0, 0], 1.0),
    ("mol", [0, 0, 0, 0, 0, 1, 0, 0], 1.0),
    ("cd", [0, 0, 0, 0, 0, 0, 1, 0], 1.0),
    ("rad", [0, 0, 0, 0, 0, 0, 0, 1], 1.0),
    ("sr", [0; 8], 1.0),
    ("Hz", [0, 0, -1, 0, 0, 0, 0, 0], 1.0),
    ("N", [1, 1, -2, 0, 0, 0, 0, 0], 1.0),
    ("Pa", [1, -1, -2, 0, 0, 0, 0, 0], 1.0),
    ("J", [1, 2, -2, 0, 0, 0, 0, 0], 1.0),
    ("W", [1, 2, -3, 0, 0, 0, 0, 0], 1.0),
    ("C", [0, 0, 1, 1, 0, 0, 0, 0], 1.0),
    ("V", [1, 2, -3, -1, 0, 0, 0, 0], 1.0),
    ("F", [-1, -2, 4, 2, 0, 0, 0, 0], 1.0),
    ("Ohm", [1, 2, -3, -2, 0, 0, 0, 0], 1.0),
    ("S", [-1, -2, 3, 2, 0, 0, 0, 0], 1.0),
    ("Wb", [1, 2, -2, -1, 0, 0, 0, 0], 1.0),
    ("T", [1, 0, -2, -1, 0, 0, 0, 0], 1.0),
    ("H", [1, 2, -2, -2, 0, 0, 0, 0], 1.0),
    ("lm", [0, 0, 0, 0, 0, 0, 1, 0], 1.0),
    ("lx", [0, -2, 0, 0, 0, 0, 1, 0], 1.0),
    ("min", [0, 0, 1, 0, 0, 0, 0, 0], 60.0),
    ("h", [0, 0, 1, 0, 0, 0, 0, 0], 3600.0),
    ("d", [0, 0, 1, 0, 0, 0, 0, 0], 86400.0),
    ("l", [0, 3, 0, 0, 0, 0, 0, 0], 1e-3),
    ("L", [0, 3, 0, 0, 0, 0, 0, 0], 1e-3),
    ("bar", [1, -1, -2, 0, 0, 0, 0, 0], 1e5),
    ("deg", [0, 0, 0, 0, 0, 0, 0, 1], std::f64::consts::PI / 180.0),
];

const PREFIXES: &[(&str, f64)] = &[
    ("Y", 1e24),
    ("Z", 1e21),
    ("E", 1e18),
    ("P", 1e15),
    ("T", 1e12),
    ("G", 1e9),
    ("M", 1e6),
    ("k", 1e3),
    ("h", 1e2),
    ("da", 1e1),
    ("d", 1e-1),
    ("c", 1e-2),
    ("m", 1e-3),
    ("u", 1e-6),
    ("n", 1e-9),
    ("p", 1e-12),
    ("f", 1e-15),
    ("a", 1e-18),
];

/// The base unit of `unit`; see the module documentation.
pub fn base_unit(unit: &str) -> Option<BaseUnit> {
    let unit = unit.trim();
    // The temperatures with an offset stand alone.
    if unit == "degC" {
        return Some(BaseUnit {
            exponents: [0, 0, 0, 0, 1, 0, 0, 0],
            factor: 1.0,
            offset: 273.15,
        });
    }
    let (numerator, denominator) = match unit.split_once('/') {
        Some((n, d)) => (n, Some(d.trim().trim_start_matches('(').trim_end_matches(')'))),
        None => (unit, None),
    };
    let mut result = BaseUnit {
        exponents: [0; 8],
        factor: 1.0,
        offset: 0.0,
    };
    if numerator != "1" {
        product(numerator, 1, &mut result)?;
    }
    if let Some(denominator) = denominator {
        product(denominator, -1, &mut result)?;
    }
    Some(result)
}

/// Multiplies `result` by the factors of `text` (separated by `.`), each raised to `sign`.
fn product(text: &str, sign: i32, result: &mut BaseUnit) -> Option<()> {
    for factor in text.split('.') {
        let digits = factor.trim_end_matches(|c: char| c.is_ascii_digit());
        let operand = digits.strip_suffix(['-', '+']).unwrap_or(digits);
        let exponent: i32 = if operand.len() == factor.len() {
            1
        } else {
            factor[operand.len()..].parse().ok()?
        };
        let (exponents, scale) = operand_unit(operand)?;
        for (r, e) in result.exponents.iter_mut().zip(exponents) {
            *r += sign * exponent * e;
        }
        result.factor *= scale.powi(sign * exponent);
    }
    Some(())
}

/// The exponents and factor of one unit symbol, with or without a prefix.
fn operand_unit(operand: &str) -> Option<([i32; 8], f64)> {
    let exact = |symbol: &str| SYMBOLS.iter().find(|s| s.0 == symbol).map(|s| (s.1, s.2));
    if let Some(found) = exact(operand) {
        return Some(found);
    }
    PREFIXES.iter().find_map(|(prefix, scale)| {
        let rest = operand.strip_prefix(prefix)?;
        // A prefix applies to a unit symbol other than the kilogram.
        let (exponents, factor) = exact(rest).filter(|_| rest != "kg")?;
        Some((exponents, factor * scale))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_and_prefixed_units_reduce_to_base_units() {
        let acceleration = base_unit("m/s2").unwrap();
        assert_eq!(acceleration.exponents, [0, 1, -2, 0, 0, 0, 0, 0]);
        let torque = base_unit("N.m").unwrap();
        assert_eq!(torque.exponents, [1, 2, -2, 0, 0, 0, 0, 0]);
        let resistance = base_unit("kOhm").unwrap();
        assert_eq!(resistance.exponents, [1, 2, -3, -2, 0, 0, 0, 0]);
        assert_eq!(resistance.factor, 1e3);
        let rate = base_unit("1/s").unwrap();
        assert_eq!(rate.exponents, [0, 0, -1, 0, 0, 0, 0, 0]);
        let millimetre = base_unit("mm").unwrap();
        assert!((millimetre.factor - 1e-3).abs() < 1e-18);
        assert_eq!(base_unit("degC").unwrap().offset, 273.15);
        assert_eq!(base_unit("s-1").unwrap().exponents, [0, 0, -1, 0, 0, 0, 0, 0]);
        assert!(base_unit("furlong").is_none());
    }
}
