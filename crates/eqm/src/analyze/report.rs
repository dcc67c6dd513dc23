//! The text and JSON forms of a [`ModelAnalysis`].
//!
//! The text is for reading: numbers with six significant digits, the matrix `A` and the sum of
//! modes only up to [`PRINT_LIMIT`] states (the JSON has them always). The JSON has every number
//! in its shortest round-trip form (`null` for infinite or undefined ones), for scripts.

use super::{ModelAnalysis, Point, SolveMethod, Stability, Steady};
use crate::format_number;
use nalgebra::{Complex, DMatrix};
use std::fmt::Write;

/// The most states whose matrices and solution the text prints.
pub const PRINT_LIMIT: usize = 12;

/// A number with six significant digits, without trailing zeros.
fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() {
            "undefined".into()
        } else if v > 0.0 {
            "∞".into()
        } else {
            "-∞".into()
        };
    }
    let magnitude = v.abs().log10().floor();
    if !(-4.0..6.0).contains(&magnitude) {
        let s = format!("{v:.5e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = trim(mantissa);
        return format!("{mantissa}e{exponent}");
    }
    let decimals = (5.0 - magnitude).max(0.0) as usize;
    trim(&format!("{v:.decimals$}"))
}

/// `values` with the entries below the rounding of the largest (a relative 1e-12) set to zero:
/// what Newton's method or a decomposition leaves there is noise, and printing it would make
/// the report differ between machines. The JSON keeps the raw numbers.
fn tidy(values: &[f64]) -> Vec<f64> {
    let largest = values
        .iter()
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    values
        .iter()
        .map(|v| if v.abs() <= 1e-12 * largest { 0.0 } else { *v })
        .collect()
}

fn trim(s: &str) -> String {
    if s.contains('.') {
        let t = s.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" { "0".into() } else { t.into() }
    } else {
        s.into()
    }
}

fn complex(c: Complex<f64>) -> String {
    if c.im == 0.0 {
        num(c.re)
    } else if c.re == 0.0 {
        format!("{}i", num(c.im))
    } else {
        let sign = if c.im < 0.0 { "-" } else { "+" };
        format!("{} {sign} {}i", num(c.re), num(c.im.abs()))
    }
}

/// How the stiffness ratio is judged: stiffness starts somewhere between 1e3 and 1e7.
pub fn stiffness_verdict(ratio: f64) -> &'static str {
    if ratio < 1e3 {
        "not stiff (below 1e3)"
    } else if ratio < 1e7 {
        "stiff (between 1e3 and 1e7: an implicit method pays off as the ratio grows)"
    } else {
        "very stiff (above 1e7: use an implicit method)"
    }
}

fn stability_text(s: Stability, conserved: bool) -> &'static str {
    match s {
        Stability::Stable if conserved => {
            "asymptotically stable on the manifold of the invariants: every other eigenvalue has a negative real part"
        }
        Stability::Stable => "asymptotically stable: every eigenvalue has a negative real part",
        Stability::Unstable => "unstable: an eigenvalue has a positive real part",
        Stability::Marginal => {
            "marginal: the largest real part is zero, so the linearisation does not decide (a centre, or an integrator)"
        }
    }
}

/// A table with left-aligned columns.
fn table(rows: &[Vec<String>], indent: &str) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = indent.to_string();
        for (c, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if c + 1 < row.len() {
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn matrix(out: &mut String, name: &str, m: &DMatrix<f64>, rows: &[String], columns: &[String]) {
    let _ = writeln!(out, "  {name}:");
    let m = DMatrix::from_vec(m.nrows(), m.ncols(), tidy(m.as_slice()));
    let mut cells = vec![
        std::iter::once(String::new())
            .chain(columns.iter().cloned())
            .collect::<Vec<_>>(),
    ];
    for (i, r) in rows.iter().enumerate() {
        cells.push(
            std::iter::once(r.clone())
                .chain((0..m.ncols()).map(|j| num(m[(i, j)])))
                .collect(),
        );
    }
    out.push_str(&table(&cells, "    "));
}

/// The readable report; see the module documentation.
/// The report of `a`, followed by `advice` on stop time, step and method when there is one.
pub fn text(a: &ModelAnalysis, advice: Option<&crate::stability::Advice>) -> String {
    let mut out = String::new();
    let n = a.states.len();
    let names: Vec<String> = a.states.iter().map(|s| s.name.clone()).collect();
    let _ = writeln!(
        out,
        "analysis of {} ({} state{}) at time {}",
        a.model,
        n,
        if n == 1 { "" } else { "s" },
        num(a.time)
    );
    for note in &a.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for warning in &a.warnings {
        let _ = writeln!(out, "warning: {warning}");
    }
    if n == 0 {
        out.push_str("\nthe model has no states: there is nothing to linearise\n");
        return out;
    }

    out.push_str("\nsteady state\n");
    match &a.steady {
        Steady::Found(s) => {
            let how = match s.method {
                SolveMethod::Newton { iterations } => {
                    format!("Newton's method from the start values, {iterations} iteration(s)")
                }
                SolveMethod::Continuation { steps, iterations } => format!(
                    "pseudo-transient continuation ({steps} step(s)), then Newton's method ({iterations} iteration(s)), after Newton's method alone did not converge from the start values"
                ),
            };
            // A residual at rounding level differs between machines; it is only told when larger.
            let scale = 1.0 + a.linearization.a.amax() * s.x.iter().fold(0.0, |m: f64, v| m.max(v.abs()));
            if s.residual <= 1e-12 * scale {
                let _ = writeln!(out, "  found by {how}; the derivatives vanish there to rounding");
            } else {
                let _ = writeln!(out, "  found by {how}; max |der| there = {}", num(s.residual));
            }
            let _ = writeln!(
                out,
                "  condition number of the Jacobian: {} (about {} digit(s) lost of 16)",
                num(s.condition),
                num(s.digits_lost().round())
            );
            out.push_str(
                "  a nonlinear model may have other steady states: `--from NAME=VALUE` starts the search elsewhere\n",
            );
            let mut rows = vec![vec![
                "state".into(),
                "start".into(),
                "steady state".into(),
                "unit".into(),
            ]];
            let both: Vec<f64> = a.start.iter().chain(&s.x).copied().collect();
            let both = tidy(&both);
            let (start, x) = both.split_at(n);
            for (i, st) in a.states.iter().enumerate() {
                rows.push(vec![
                    st.name.clone(),
                    num(start[i]),
                    num(x[i]),
                    st.unit.as_deref().unwrap_or("").to_string(),
                ]);
            }
            out.push_str(&table(&rows, "  "));
            if !a.variables.is_empty() {
                out.push_str("  algebraic variables there:\n");
                let values: Vec<f64> = a.variables.iter().map(|(_, v)| *v).collect();
                let rows: Vec<Vec<String>> = a
                    .variables
                    .iter()
                    .zip(tidy(&values))
                    .map(|((k, _), v)| vec![k.clone(), num(v)])
                    .collect();
                out.push_str(&table(&rows, "    "));
            }
        }
        Steady::Impossible {
            combination,
            rate,
            relations,
        } => {
            let _ = writeln!(
                out,
                "  none: {} changes at the constant rate {} whatever the states are",
                combination_text(combination, &names),
                num(*rate)
            );
            if *relations {
                out.push_str(
                    "  (with the relations as they are at the start: where one changes on the way, the equations change, which this analysis does not follow; `--at T` linearises at a later time)\n",
                );
            }
        }
        Steady::Singular { x } => {
            let _ = writeln!(
                out,
                "  not determined: the Jacobian is singular at the point the search reached ({}), so the steady state is not isolated there (a nonlinear invariant, or a continuum of steady states); no point is reported as the steady state",
                point_text(x, &names)
            );
        }
        Steady::NotFound { reason } => {
            let _ = writeln!(out, "  not found: {reason}");
            out.push_str("  `--from NAME=VALUE` starts the search elsewhere\n");
        }
        Steady::NotSought => {
            let _ = writeln!(out, "  not sought: the model is linearised at time {}", num(a.time));
        }
    }

    out.push_str("\ninvariants (conserved combinations of the states)\n");
    if a.invariants.is_empty() {
        out.push_str("  none\n");
    }
    for inv in &a.invariants {
        let _ = writeln!(
            out,
            "  {} = {} (fixed by the start values)",
            combination_text(&inv.coefficients, &names),
            num(inv.value)
        );
    }

    let l = &a.linearization;
    let at = match a.point {
        Point::SteadyState => "at the steady state".to_string(),
        Point::Time(t) => format!("at time {} of a simulation from the start", num(t)),
        Point::Start => "at the start values (there is no steady state to linearise at)".to_string(),
    };
    let source = match l.source {
        super::JacobianSource::Symbolic => "symbolic Jacobian",
        super::JacobianSource::Differences => "central differences",
    };
    let _ = writeln!(out, "\nlinearisation {at} ({source})");
    if !matches!(a.point, Point::SteadyState) {
        let (x, f) = (tidy(&l.x), tidy(&l.f));
        let rows: Vec<Vec<String>> = a
            .states
            .iter()
            .enumerate()
            .map(|(i, s)| {
                vec![
                    s.name.clone(),
                    num(x[i]),
                    format!("der = {}", num(f[i])),
                    s.unit.as_deref().unwrap_or("").to_string(),
                ]
            })
            .collect();
        out.push_str(&table(&rows, "  "));
    }
    if n <= PRINT_LIMIT {
        let rows: Vec<String> = names.iter().map(|s| format!("der({s})")).collect();
        matrix(&mut out, "A = ∂der/∂x", &l.a, &rows, &names);
        if !l.inputs.is_empty() {
            matrix(&mut out, "B = ∂der/∂u", &l.b, &rows, &l.inputs);
        }
        if !l.outputs.is_empty() {
            matrix(&mut out, "C = ∂y/∂x", &l.c, &l.outputs, &names);
        }
        if !l.inputs.is_empty() && !l.outputs.is_empty() {
            matrix(&mut out, "D = ∂y/∂u", &l.d, &l.outputs, &l.inputs);
        }
    } else {
        let _ = writeln!(out, "  A is {n}×{n}: `--json` prints it");
    }

    out.push_str("\nmodes\n");
    let mut rows = vec![vec![
        "#".to_string(),
        "eigenvalue".into(),
        "T".into(),
        "damping".into(),
        "frequency".into(),
        "states taking part".into(),
    ]];
    let mut k = 0;
    let modes = &a.modal.modes;
    // The parts of eigenvalues below the rounding of the largest are shown as zero.
    let parts: Vec<f64> = modes.iter().flat_map(|m| [m.eigenvalue.re, m.eigenvalue.im]).collect();
    let parts = tidy(&parts);
    let shown: Vec<Complex<f64>> = parts.chunks(2).map(|p| Complex::new(p[0], p[1])).collect();
    let mut i = 0;
    while i < modes.len() {
        let m = &modes[i];
        let pair = m.eigenvalue.im > 0.0 && modes.get(i + 1).is_some_and(|o| o.eigenvalue == m.eigenvalue.conj());
        k += 1;
        let shown = shown[i];
        let eigenvalue = if pair {
            format!("{} ± {}i", num(shown.re), num(shown.im))
        } else {
            complex(shown)
        };
        let mut parts: Vec<(usize, f64)> = m.participation.iter().copied().enumerate().collect();
        parts.sort_by(|x, y| y.1.partial_cmp(&x.1).unwrap_or(std::cmp::Ordering::Equal));
        let taking_part: Vec<String> = parts
            .iter()
            .filter(|(_, p)| *p >= 0.1)
            .take(4)
            .map(|(s, p)| format!("{} {}", names[*s], num((p * 100.0).round() / 100.0)))
            .collect();
        rows.push(vec![
            if pair { format!("{k},{}", k + 1) } else { k.to_string() },
            eigenvalue,
            if m.zero {
                "∞ (λ = 0)".into()
            } else {
                num(m.time_constant)
            },
            m.damping.map(|_| num(-shown.re / shown.norm())).unwrap_or_default(),
            m.frequency.map(|f| format!("{} rad", num(f))).unwrap_or_default(),
            taking_part.join(", "),
        ]);
        if pair {
            k += 1;
            i += 1;
        }
        i += 1;
    }
    out.push_str(&table(&rows, "  "));
    let _ = writeln!(
        out,
        "  stability: {}",
        stability_text(a.modal.stability, !a.invariants.is_empty())
    );

    out.push_str("\ntime scales and stiffness (T = min(1/|Re λ|, 2π/|Im λ|))\n");
    match (a.modal.t_min, a.modal.t_max, a.modal.stiffness) {
        (Some(lo), Some(hi), Some(ratio)) => {
            let _ = writeln!(out, "  T_min = {}, T_max = {}", num(lo), num(hi));
            let _ = writeln!(
                out,
                "  stiffness ratio γ = T_max/T_min = {}: {}",
                num(ratio),
                stiffness_verdict(ratio)
            );
        }
        _ => out.push_str("  every eigenvalue is zero: the linearised system does not move\n"),
    }

    if matches!(a.point, Point::SteadyState) {
        out.push_str("\nsolution of the linearised system from the start values\n");
        if !a.modal.diagonalisable {
            out.push_str("  A has no basis of eigenvectors (a repeated eigenvalue): the sum of modes is not formed\n");
        } else if n > PRINT_LIMIT {
            out.push_str("  `--json` prints the coefficients of the sum of modes\n");
        } else {
            out.push_str("  x(t) = x_steady + Σ c_i e^(λ_i t) v_i, the terms of each mode:\n");
            let mut rows = Vec::new();
            // The terms below the rounding of the largest term of any mode are noise of the
            // decomposition (a mode the start does not excite has a coefficient of rounding size).
            let largest = modes
                .iter()
                .filter_map(|m| {
                    m.coefficient
                        .map(|c| m.vector.iter().map(|v| (c * v).norm()).fold(0.0, f64::max))
                })
                .fold(0.0, f64::max);
            let tidy = |v: f64| if v.abs() <= 1e-12 * largest { 0.0 } else { v };
            let mut i = 0;
            while i < modes.len() {
                let m = &modes[i];
                let Some(c) = m.coefficient else { break };
                let pair =
                    m.eigenvalue.im > 0.0 && modes.get(i + 1).is_some_and(|o| o.eigenvalue == m.eigenvalue.conj());
                let products: Vec<Complex<f64>> = m.vector.iter().map(|v| c * v).collect();
                let terms: Vec<String> = products
                    .iter()
                    .zip(&names)
                    .map(|(cv, s)| {
                        if pair {
                            // A pair adds up to e^(αt)(2Re(cv) cos βt − 2Im(cv) sin βt).
                            let (a, b) = (tidy(2.0 * cv.re), tidy(-2.0 * cv.im));
                            let sign = if b < 0.0 { "-" } else { "+" };
                            format!("{s}: {}·cos {sign} {}·sin", num(a), num(b.abs()))
                        } else {
                            format!("{s}: {}", num(tidy(cv.re)))
                        }
                    })
                    .collect();
                let factor = if pair {
                    format!("e^({} t), cos/sin({} t)", num(shown[i].re), num(shown[i].im))
                } else {
                    format!("e^({} t)", num(shown[i].re))
                };
                rows.push(vec![factor, terms.join(", ")]);
                i += if pair { 2 } else { 1 };
            }
            out.push_str(&table(&rows, "    "));
        }
    }
    if let Some(advice) = advice {
        out.push_str(
            "
advice: stop time, step and method
",
        );
        for line in crate::stability::advice_text(advice).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

fn combination_text(coefficients: &[f64], names: &[String]) -> String {
    let mut s = String::new();
    for (c, name) in coefficients.iter().zip(names) {
        if *c == 0.0 {
            continue;
        }
        let magnitude = c.abs();
        let sign = if *c < 0.0 { "-" } else { "+" };
        if s.is_empty() {
            if *c < 0.0 {
                s.push('-');
            }
        } else {
            let _ = write!(s, " {sign} ");
        }
        if magnitude != 1.0 {
            let _ = write!(s, "{}·", num(magnitude));
        }
        s.push_str(name);
    }
    if s.is_empty() { "0".into() } else { s }
}

fn point_text(x: &[f64], names: &[String]) -> String {
    names
        .iter()
        .zip(x)
        .map(|(n, v)| format!("{n} = {}", num(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON number (`null` when not finite).
fn jnum(v: f64) -> String {
    if v.is_finite() { format_number(v) } else { "null".into() }
}

fn jstr(s: &str) -> String {
    let mut out = String::from('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn jarr<T>(items: impl IntoIterator<Item = T>, f: impl Fn(T) -> String) -> String {
    format!("[{}]", items.into_iter().map(f).collect::<Vec<_>>().join(", "))
}

fn jmatrix(m: &DMatrix<f64>) -> String {
    jarr(0..m.nrows(), |i| jarr(0..m.ncols(), |j| jnum(m[(i, j)])))
}

/// Every number of the analysis (and of `advice`, under `"advice"`) as JSON; see the module
/// documentation.
pub fn json(a: &ModelAnalysis, advice: Option<&crate::stability::Advice>) -> String {
    let mut fields: Vec<(String, String)> = vec![
        ("model".into(), jstr(&a.model)),
        ("time".into(), jnum(a.time)),
        (
            "states".into(),
            jarr(&a.states, |s| {
                format!(
                    "{{\"name\": {}, \"unit\": {}}}",
                    jstr(&s.name),
                    s.unit.as_deref().map_or("null".into(), jstr)
                )
            }),
        ),
        ("start".into(), jarr(&a.start, |v| jnum(*v))),
    ];
    let steady = match &a.steady {
        Steady::Found(s) => {
            let (method, iterations, steps) = match s.method {
                SolveMethod::Newton { iterations } => ("newton", iterations, 0),
                SolveMethod::Continuation { steps, iterations } => ("continuation", iterations, steps),
            };
            format!(
                "{{\"status\": \"found\", \"x\": {}, \"method\": \"{method}\", \"iterations\": {iterations}, \"continuation_steps\": {steps}, \"residual\": {}, \"condition\": {}, \"digits_lost\": {}}}",
                jarr(&s.x, |v| jnum(*v)),
                jnum(s.residual),
                jnum(s.condition),
                jnum(s.digits_lost())
            )
        }
        Steady::Impossible {
            combination,
            rate,
            relations,
        } => format!(
            "{{\"status\": \"none\", \"combination\": {}, \"rate\": {}, \"relations_frozen\": {relations}}}",
            jarr(combination, |v| jnum(*v)),
            jnum(*rate)
        ),
        Steady::Singular { x } => format!("{{\"status\": \"singular\", \"x\": {}}}", jarr(x, |v| jnum(*v))),
        Steady::NotFound { reason } => format!("{{\"status\": \"not_found\", \"reason\": {}}}", jstr(reason)),
        Steady::NotSought => "{\"status\": \"not_sought\"}".into(),
    };
    fields.push(("steady_state".into(), steady));
    fields.push((
        "invariants".into(),
        jarr(&a.invariants, |i| {
            format!(
                "{{\"coefficients\": {}, \"value\": {}}}",
                jarr(&i.coefficients, |v| jnum(*v)),
                jnum(i.value)
            )
        }),
    ));
    let point = match a.point {
        Point::SteadyState => "\"steady_state\"",
        Point::Time(_) => "\"time\"",
        Point::Start => "\"start\"",
    };
    fields.push(("point".into(), point.into()));
    fields.push((
        "variables".into(),
        format!(
            "{{{}}}",
            a.variables
                .iter()
                .map(|(k, v)| format!("{}: {}", jstr(k), jnum(*v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ));
    let l = &a.linearization;
    fields.push((
        "linearization".into(),
        format!(
            "{{\"x\": {}, \"f\": {}, \"jacobian\": \"{}\", \"A\": {}, \"inputs\": {}, \"outputs\": {}, \"B\": {}, \"C\": {}, \"D\": {}}}",
            jarr(&l.x, |v| jnum(*v)),
            jarr(&l.f, |v| jnum(*v)),
            match l.source {
                super::JacobianSource::Symbolic => "symbolic",
                super::JacobianSource::Differences => "differences",
            },
            jmatrix(&l.a),
            jarr(&l.inputs, |s| jstr(s)),
            jarr(&l.outputs, |s| jstr(s)),
            jmatrix(&l.b),
            jmatrix(&l.c),
            jmatrix(&l.d)
        ),
    ));
    let opt = |v: Option<f64>| v.map_or("null".into(), jnum);
    fields.push((
        "modes".into(),
        jarr(&a.modal.modes, |m| {
            format!(
                "{{\"re\": {}, \"im\": {}, \"time_constant\": {}, \"damping\": {}, \"natural_frequency\": {}, \"frequency\": {}, \"zero\": {}, \"vector_re\": {}, \"vector_im\": {}, \"participation\": {}, \"coefficient_re\": {}, \"coefficient_im\": {}}}",
                jnum(m.eigenvalue.re),
                jnum(m.eigenvalue.im),
                jnum(m.time_constant),
                opt(m.damping),
                opt(m.natural_frequency),
                opt(m.frequency),
                m.zero,
                jarr(&m.vector, |c| jnum(c.re)),
                jarr(&m.vector, |c| jnum(c.im)),
                jarr(&m.participation, |v| jnum(*v)),
                opt(m.coefficient.map(|c| c.re)),
                opt(m.coefficient.map(|c| c.im))
            )
        }),
    ));
    let stability = match a.modal.stability {
        Stability::Stable => "stable",
        Stability::Unstable => "unstable",
        Stability::Marginal => "marginal",
    };
    fields.push(("stability".into(), jstr(stability)));
    fields.push(("t_min".into(), opt(a.modal.t_min)));
    fields.push(("t_max".into(), opt(a.modal.t_max)));
    fields.push(("stiffness_ratio".into(), opt(a.modal.stiffness)));
    fields.push((
        "stiffness".into(),
        a.modal.stiffness.map_or("null".into(), |r| jstr(stiffness_verdict(r))),
    ));
    fields.push(("diagonalisable".into(), a.modal.diagonalisable.to_string()));
    fields.push(("notes".into(), jarr(&a.notes, |s| jstr(s))));
    fields.push(("warnings".into(), jarr(&a.warnings, |s| jstr(s))));
    fields.push((
        "advice".into(),
        advice.map_or("null".into(), crate::stability::advice_json),
    ));
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("  {}: {v}", jstr(k))).collect();
    format!("{{\n{}\n}}\n", body.join(",\n"))
}

/// What an analysis found, in a few words: the steady state's values, or why there is none.
fn steady_summary(a: &ModelAnalysis) -> String {
    let names: Vec<String> = a.states.iter().map(|s| s.name.clone()).collect();
    match &a.steady {
        Steady::Found(s) => point_text(&s.x, &names),
        Steady::Impossible { .. } => "none (a combination changes at a constant rate)".into(),
        Steady::Singular { .. } => "not determined (singular)".into(),
        Steady::NotFound { reason } => format!("not found: {reason}"),
        Steady::NotSought => format!("not sought (at t = {})", num(a.time)),
    }
}

/// An analysis sweep as a table: a row per combination of the swept values with the steady
/// state, the eigenvalues, the stability and the slowest time scale; a failed analysis shows
/// its message.
pub fn sweep_text(axes: &[crate::SweepAxis], runs: &[super::SweptAnalysis], notes: &[String]) -> String {
    let mut rows: Vec<Vec<String>> = vec![
        axes.iter()
            .map(|a| a.name.clone())
            .chain(["steady state", "eigenvalues", "stability", "T_max"].map(String::from))
            .collect(),
    ];
    for run in runs {
        let mut row: Vec<String> = run.values.iter().map(|v| num(*v)).collect();
        match &run.outcome {
            Ok(a) => {
                row.push(steady_summary(a));
                row.push(a.eigenvalues().into_iter().map(complex).collect::<Vec<_>>().join(", "));
                row.push(
                    match a.modal.stability {
                        Stability::Stable => "stable",
                        Stability::Unstable => "unstable",
                        Stability::Marginal => "marginal",
                    }
                    .into(),
                );
                row.push(a.modal.t_max.map_or("-".into(), num));
            }
            Err(e) => row.push(format!("failed: {e}")),
        }
        rows.push(row);
    }
    let mut out = table(&rows, "");
    for note in notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// An analysis sweep as JSON: the axes, and for each combination its values and the whole
/// analysis ([`json`]) or its error.
pub fn sweep_json(axes: &[crate::SweepAxis], runs: &[super::SweptAnalysis], notes: &[String]) -> String {
    let runs = jarr(runs, |run| {
        let outcome = match &run.outcome {
            Ok(a) => format!("\"analysis\": {}", json(a, a.advice(None).as_ref()).trim_end()),
            Err(e) => format!("\"error\": {}", jstr(&e.to_string())),
        };
        format!("{{\"values\": {}, {outcome}}}", jarr(&run.values, |v| jnum(*v)))
    });
    format!(
        "{{\"parameters\": {}, \"runs\": {runs}, \"notes\": {}}}\n",
        jarr(axes, |a| jstr(&a.name)),
        jarr(notes, |n| jstr(n))
    )
}
