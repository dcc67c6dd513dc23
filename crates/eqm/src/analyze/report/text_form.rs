//! The readable report of an analysis, of an analysis sweep and of the advice.
//!
//! Input: a [`ModelAnalysis`] (or a sweep's runs) and its [`Advice`]. Output: the text `eqm
//! analyze` prints, one section per function, in the order the report shows them. It computes
//! nothing: the rounding to readable numbers is the parent module's.

use super::super::{JacobianSource, Point, SolveMethod, SweptAnalysis};
use super::*;
use eqm_diag::text::{format_number, round_significant};
use eqm_integrators::stability::Advice;

/// The report of `a` (see the module documentation of the parent), followed by `advice` on stop
/// time, step and method when there is one.
pub fn text(a: &ModelAnalysis, advice: Option<&Advice>) -> String {
    let mut out = String::new();
    let n = a.states.len();
    let names: Vec<String> = a.states.iter().map(|s| s.name.clone()).collect();
    header(&mut out, a);
    if n == 0 {
        out.push_str("\nthe model has no states: there is nothing to linearise\n");
        return out;
    }
    steady_section(&mut out, a, &names);
    invariants_section(&mut out, a, &names);
    linearisation_section(&mut out, a, &names);
    let shown = shown_eigenvalues(a);
    modes_section(&mut out, a, &names, &shown);
    time_scales_section(&mut out, a);
    solution_section(&mut out, a, &names, &shown);
    if let Some(advice) = advice {
        out.push_str("\nadvice: stop time, step and method\n");
        for line in advice_text(advice).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// The first lines: the model, its number of states and the time, then the notes and warnings.
fn header(out: &mut String, a: &ModelAnalysis) {
    let n = a.states.len();
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
}

/// The steady state: how it was found and its values (with the algebraic variables there), or
/// why there is none.
fn steady_section(out: &mut String, a: &ModelAnalysis, names: &[String]) {
    let n = a.states.len();
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
                combination_text(combination, names),
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
                point_text(x, names)
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
}

/// The linear invariants with the values the start fixes.
fn invariants_section(out: &mut String, a: &ModelAnalysis, names: &[String]) {
    out.push_str("\ninvariants (conserved combinations of the states)\n");
    if a.invariants.is_empty() {
        out.push_str("  none\n");
    }
    for inv in &a.invariants {
        let _ = writeln!(
            out,
            "  {} = {} (fixed by the start values)",
            combination_text(&inv.coefficients, names),
            num(inv.value)
        );
    }
}

/// Where the model was linearised and the matrices `A`, `B`, `C` and `D` (up to
/// [`PRINT_LIMIT`] states).
fn linearisation_section(out: &mut String, a: &ModelAnalysis, names: &[String]) {
    let n = a.states.len();
    let l = &a.linearization;
    let at = match a.point {
        Point::SteadyState => "at the steady state".to_string(),
        Point::Time(t) => format!("at time {} of a simulation from the start", num(t)),
        Point::Start => "at the start values (there is no steady state to linearise at)".to_string(),
    };
    let source = match l.source {
        JacobianSource::Symbolic => "symbolic Jacobian",
        JacobianSource::Differences => "central differences",
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
        matrix(out, "A = ∂der/∂x", &l.a, &rows, names);
        if !l.inputs.is_empty() {
            matrix(out, "B = ∂der/∂u", &l.b, &rows, &l.inputs);
        }
        if !l.outputs.is_empty() {
            matrix(out, "C = ∂y/∂x", &l.c, &l.outputs, names);
        }
        if !l.inputs.is_empty() && !l.outputs.is_empty() {
            matrix(out, "D = ∂y/∂u", &l.d, &l.outputs, &l.inputs);
        }
    } else {
        let _ = writeln!(out, "  A is {n}×{n}: `--json` prints it");
    }
}

/// The eigenvalues as the report shows them: the parts below the rounding of the largest are
/// shown as zero.
fn shown_eigenvalues(a: &ModelAnalysis) -> Vec<Complex<f64>> {
    let parts: Vec<f64> = a
        .modal
        .modes
        .iter()
        .flat_map(|m| [m.eigenvalue.re, m.eigenvalue.im])
        .collect();
    let parts = tidy(&parts);
    parts.chunks(2).map(|p| Complex::new(p[0], p[1])).collect()
}

/// The table of modes (a conjugate pair in one row) and the stability of the point.
fn modes_section(out: &mut String, a: &ModelAnalysis, names: &[String], shown: &[Complex<f64>]) {
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
}

/// The time scales and the verdict on the stiffness ratio.
fn time_scales_section(out: &mut String, a: &ModelAnalysis) {
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
}

/// The solution of the linearised system from the start values as a sum of modes (at a steady
/// state only, and up to [`PRINT_LIMIT`] states).
fn solution_section(out: &mut String, a: &ModelAnalysis, names: &[String], shown: &[Complex<f64>]) {
    let n = a.states.len();
    let modes = &a.modal.modes;
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
                    .zip(names)
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
pub fn sweep_text(axes: &[crate::SweepAxis], runs: &[SweptAnalysis], notes: &[String]) -> String {
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
                row.push(stability_word(a.modal.stability).into());
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

/// The advice as the lines of a report: the time scales and the stiffness, the simulation time,
/// step and output interval, a table of the methods (stable at the step or not, largest stable
/// step) and the recommendation with its reason.
pub fn advice_text(advice: &Advice) -> String {
    let number = |v: f64| {
        if v.is_infinite() {
            "any".to_string()
        } else {
            format_number(round_significant(v, 6))
        }
    };
    let s = &advice.scales;
    let mut out = String::new();
    out.push_str(&format!(
        "time scales: T_min = {}, T_max = {}, T_max/T_min = {} ({})\n",
        number(s.t_min),
        number(s.t_max),
        number(s.stiffness),
        if s.is_stiff() { "stiff" } else { "not stiff" }
    ));
    out.push_str(&format!(
        "simulation time 5·T_max = {}, step min(T_min/10, t_sim/200) = {}, output interval t_sim/200 = {}\n",
        number(advice.t_sim),
        number(advice.step),
        number(advice.interval)
    ));
    if advice.growing > 0 {
        out.push_str(&format!(
            "{} eigenvalue(s) with a positive real part (growing modes) do not limit the step\n",
            advice.growing
        ));
    }
    let width = advice
        .verdicts
        .iter()
        .map(|v| v.method.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    out.push_str(&format!("{:width$}  stable at h  largest stable step\n", "method"));
    for v in &advice.verdicts {
        out.push_str(&format!(
            "{:width$}  {:11}  {}\n",
            v.method,
            if v.stable { "yes" } else { "no" },
            number(v.largest_step)
        ));
    }
    if let Some(r) = &advice.recommended {
        let step = r.step.map(|h| format!(" --step {}", number(h))).unwrap_or_default();
        out.push_str(&format!("recommended: --solver {}{step}: {}\n", r.method, r.reason));
    }
    out
}
