//! The diagnostic of a failed evaluation: the equations, variables and statements involved,
//! named with the program's symbols.
//!
//! Input: an [`EvalFailure`] of a program's back end. Output: a diagnostic (`E07xx`) with the
//! spans of the equations and declarations involved. It evaluates nothing.

use super::*;
use eqm_ir::failure::{EvalFailure, FailureKind, FailureSite};

impl ExecProgram {
    /// The diagnostic for an evaluation failure of this program (`E07xx`), naming the
    /// equations, variables and time.
    pub fn failure_diagnostic(&self, failure: &EvalFailure) -> Diagnostic {
        let program = self;
        let symbols = program.symbols();
        let fallback = program.model_span();
        let at_time = if failure.time.is_nan() {
            String::new()
        } else {
            format!(" at time {}", eqm_diag::text::format_number(failure.time))
        };
        let subject = match &failure.kind {
            FailureKind::Condition { condition, .. } => {
                format!("`{}`", program.expr_text(condition.expr()))
            }
            _ => String::new(),
        };
        let (code, what) = failure.kind.describe(&subject);
        let eq_label = |eq: usize| -> (Span, String) {
            match program.equations().get(eq) {
                Some(e) => (
                    e.span,
                    format!(
                        "e{}: {} ({})",
                        eq + 1,
                        program.equation_text(e),
                        e.origin.label(symbols)
                    ),
                ),
                None => (fallback, format!("equation e{}", eq + 1)),
            }
        };
        let var_name = |v: VarId| symbols.get(v).name.clone();
        let (message, labels): (String, Vec<(Span, String)>) = match &failure.site {
            FailureSite::Equations { eqs, unknowns } => {
                let names: Vec<String> = unknowns.iter().take(8).map(|s| program.slot_name(*s)).collect();
                let solving = if eqs.len() == 1 {
                    format!("solving equation e{} for {}", eqs[0] + 1, names.join(", "))
                } else {
                    format!(
                        "solving the algebraic loop of {} equations for {}{}",
                        eqs.len(),
                        names.join(", "),
                        if unknowns.len() > 8 { " and more" } else { "" }
                    )
                };
                (
                    format!("{solving} failed{at_time}: {what}"),
                    eqs.iter().take(10).map(|&e| eq_label(e)).collect(),
                )
            }
            FailureSite::Algorithm { index } => {
                let span = program.algorithms().get(*index).map_or(fallback, |a| a.span);
                (
                    format!("the algorithm section failed{at_time}: {what}"),
                    vec![(span, "in this algorithm section".to_string())],
                )
            }
            FailureSite::Parameter { var } => (
                format!("computing parameter `{}` failed: {what}", var_name(*var)),
                vec![(symbols.get(*var).span, "declared here".to_string())],
            ),
            FailureSite::Start { var } => (
                format!("computing the start value of `{}` failed: {what}", var_name(*var)),
                vec![(symbols.get(*var).span, "declared here".to_string())],
            ),
            FailureSite::Output { var } => (
                format!("computing `{}` failed{at_time}: {what}", var_name(*var)),
                vec![(symbols.get(*var).span, "declared here".to_string())],
            ),
            FailureSite::Condition { eq } => {
                let (span, label) = eq_label(*eq);
                (
                    format!("the parameters are not valid: {what}"),
                    vec![(span, format!("needed to solve {label}"))],
                )
            }
            FailureSite::Call => (what.clone(), Vec::new()),
            FailureSite::Event { span } => (
                format!("handling an event failed{at_time}: {what}"),
                vec![(*span, "evaluated at the event".to_string())],
            ),
            FailureSite::Delay { span } => (
                format!("reading a delayed value failed{at_time}: {what}"),
                vec![(*span, "in this delay".to_string())],
            ),
        };
        // A failure inside a statement points at the statement first.
        let statement = match &failure.kind {
            FailureKind::Assert { span, .. } | FailureKind::Terminate { span, .. } | FailureKind::ZeroStep { span } => {
                Some(*span)
            }
            _ => None,
        };
        let mut labels = labels.into_iter();
        let (primary, primary_label) = match statement {
            Some(span) => (span, "failed here".to_string()),
            None => labels.next().unwrap_or((fallback, "in this model".to_string())),
        };
        let mut d = Diagnostic::error(code, message, primary, primary_label);
        for (span, label) in labels {
            d = d.with_label(span, label);
        }
        self.with_equation_help(d, failure)
    }

    /// For a failure of equations: the help that fits why they failed (they switch branches on
    /// relations, are linear and dependent, or Newton's iteration did not converge) and the
    /// declarations of the first unknowns.
    fn with_equation_help(&self, mut d: Diagnostic, failure: &EvalFailure) -> Diagnostic {
        let program = self;
        let symbols = program.symbols();
        if let FailureSite::Equations { eqs, unknowns } = &failure.site
            && matches!(failure.kind, FailureKind::Singular | FailureKind::NoConvergence { .. })
        {
            let singular = matches!(failure.kind, FailureKind::Singular);
            let names: Vec<String> = unknowns.iter().take(4).map(|s| program.slot_name(*s)).collect();
            // A linear system is singular whatever the start values: its equations are dependent.
            let linear = program
                .rhs()
                .iter()
                .any(|i| matches!(i, Instr::Loop(l) if l.linear && l.eqs == *eqs));
            if singular && eqs.iter().any(|&e| switches_on_relations(program, e)) {
                // The structure may change with the branch (`v = if ... else 0` fixing a
                // velocity while stuck): say so, with what EQM does simulate.
                d = d.with_note(
                    "these equations switch branches on relations: in the branch active now they may not determine these unknowns at all, so the structure of the system changes with the branch (a variable-structure model); EQM runs such a model mode by mode only where every branch is chosen by relations that generate events (not inside `noEvent`) or by Boolean variables, and each mode's own equations determine its unknowns",
                ).with_help(
                    "write the element so that every branch determines the same unknowns; friction written with `sign` of the relative velocity runs through events and sliding mode",
                );
            } else if singular && unknowns.iter().any(|s| matches!(s, Slot::Der(_))) {
                // A derivative whose factor vanishes (a capacitance computed during the run
                // that is zero for these parameters): the equations constrain the state itself.
                let derivatives: Vec<String> = unknowns
                    .iter()
                    .filter(|s| matches!(s, Slot::Der(_)))
                    .take(4)
                    .map(|s| program.slot_name(*s))
                    .collect();
                d = d.with_help(format!(
                    "these equations are solved for {}, and the factors that multiply {} (a capacitance, inductance or mass computed during the run) are zero or dependent at this point: the equations do not say how the state changes here, they constrain it (a node without capacitance, windings coupled perfectly); give the element a capacitance or mass that is not zero, or write the model so that this variable is not a state",
                    derivatives.join(", "),
                    if derivatives.len() == 1 { "it" } else { "them" }
                ));
            } else if singular && linear {
                d = d.with_help(format!(
                    "these equations are linear in {} and not independent for these parameter values: one of them follows from the others (or contradicts them), so they do not determine the unknowns; remove or change one, or check the parameters",
                    names.join(", ")
                ));
            } else {
                d = d.with_help(format!(
                    "Newton's method starts from the start values of {} (at later times, from the last solution); give {} a start value near the solution you want, or check that the equations have one there",
                    names.join(", "),
                    if names.len() == 1 { "it" } else { "them" }
                ));
            }
        }
        if let FailureSite::Equations { unknowns, .. } = &failure.site {
            for s in unknowns.iter().take(4) {
                let var = match *s {
                    Slot::State(i) | Slot::Der(i) => program.states().get(i as usize),
                    Slot::Work(i) => program.work_vars().get(i as usize),
                    Slot::Param(i) => program.params().get(i as usize),
                    Slot::Time => None,
                };
                if let Some(v) = var {
                    d = d.with_label(
                        symbols.get(*v).span,
                        format!("`{}` declared here", program.slot_name(*s)),
                    );
                }
            }
        }
        d
    }
}

/// Whether equation `eq` of `program` contains an `if` whose condition reads a relation's
/// variable (a branch chosen by an event).
fn switches_on_relations(program: &ExecProgram, eq: usize) -> bool {
    let Some(equation) = program.equations().get(eq) else {
        return false;
    };
    let arena = program.exprs();
    let relations: Vec<VarId> = program
        .events()
        .surfaces
        .iter()
        .flat_map(|s| s.relation_vars.iter().copied())
        .collect();
    let mut stack = vec![equation.lhs, equation.rhs];
    let mut vars = Vec::new();
    while let Some(e) = stack.pop() {
        if let eqm_ir::expr::Node::If(condition, _, _) = arena.get(e) {
            vars.clear();
            arena.vars_in(*condition, &mut vars);
            if vars.iter().any(|v| relations.contains(v)) {
                return true;
            }
        }
        stack.extend(arena.children(e));
    }
    false
}
