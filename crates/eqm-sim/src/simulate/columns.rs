//! The choice of a run's result columns.
//!
//! Input: the executable program and the names a run asks for (or none). Output: the
//! [`Columns`]: each column's name, the slot its value is read from, the factor it is written
//! with and its variable; or the diagnostic for a name the program does not have. For a mode of a
//! variable-structure model, whose program may lack a column the analysis with every branch has,
//! [`mode_columns`] reads a derivative through its variable's alias and writes NaN for a column
//! the mode does not compute, naming it. It deliberately reads no values: the row writer does.

use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;
use eqm_ir::expr::VarId;
use eqm_ir::slot::Slot;

/// The result columns: full variable names and where their values are read.
#[derive(Debug, Clone)]
pub struct Columns {
    pub names: Vec<String>,
    /// Where each column's value is, parallel to `names`.
    pub slots: Vec<Slot>,
    /// The variable of each column, parallel to `names`.
    pub vars: Vec<eqm_ir::expr::VarId>,
    /// The factor each column's slot value is written with, parallel to `names`: 1, -1 for a
    /// derivative read through a negated alias, NaN for a column the program does not compute.
    pub factors: Vec<f64>,
}

/// The columns for `vars` (full names), or by default every state and every named variable
/// (not parameters, not names the compiler introduced), in natural name order (`x[2]` before
/// `x[10]`).
pub fn columns<S: AsRef<str>>(program: &ExecProgram, vars: Option<&[S]>) -> Result<Columns, Diagnostic> {
    let mut names = Vec::new();
    let mut slots = Vec::new();
    let mut var_ids = Vec::new();
    match vars {
        Some(list) => {
            for name in list {
                let name = name.as_ref();
                let found = program
                    .lookup(name)
                    .and_then(|v| Some((v, program.slot_of(v)?)))
                    .or_else(|| derivative_of_state(program, name));
                let Some((v, slot)) = found else {
                    let known = program.variables().map(|(n, ..)| n);
                    let mut d = Diagnostic::error(
                        "E0708",
                        format!("there is no variable `{name}` to write"),
                        program.model_span(),
                        "in this model",
                    );
                    if let Some(s) = eqm_diag::did_you_mean(name, known) {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    }
                    return Err(d);
                };
                names.push(name.to_string());
                slots.push(slot);
                var_ids.push(v);
            }
        }
        None => {
            for (name, v, slot, _) in program.variables() {
                // Parameters (independent ones in `p`, computed ones in `work`) and constants
                // are not results; names starting with `$` are the compiler's own, and so are
                // the derivatives of those that index reduction made variables (`der($v)`).
                let is_parameter = matches!(
                    program.symbols().get(v).kind,
                    eqm_compile::dae::VarKind::Parameter | eqm_compile::dae::VarKind::Constant
                );
                if !name.trim_start_matches("der(").starts_with('$') && !is_parameter {
                    names.push(name.to_string());
                    slots.push(slot);
                    var_ids.push(v);
                }
            }
            // Natural order: `x[2]` before `x[10]`, `m2.v` before `m10.v`.
            let mut order: Vec<usize> = (0..names.len()).collect();
            order.sort_by(|&a, &b| eqm_diag::text::natural_cmp(&names[a], &names[b]));
            names = order.iter().map(|&k| std::mem::take(&mut names[k])).collect();
            slots = order.iter().map(|&k| slots[k]).collect();
            var_ids = order.iter().map(|&k| var_ids[k]).collect();
        }
    }
    let factors = vec![1.0; names.len()];
    Ok(Columns {
        names,
        slots,
        vars: var_ids,
        factors,
    })
}

/// The columns `names` (chosen from the analysis of a variable-structure model with every
/// branch) in the program of one of its modes, and the names that mode does not compute. Each
/// mode's index reduction introduces its own derivative variables, named after the variable it
/// chose among aliases: a column `der(der(a.phi))` the mode has as `der(der(b.phi))` (where
/// `a.phi = b.phi`) or as the derivative of a state is read from there, with the sign of the
/// alias. A column still missing is written as NaN (its variable is then the model's first).
pub fn mode_columns<S: AsRef<str>>(program: &ExecProgram, names: &[S]) -> (Columns, Vec<String>) {
    let mut columns = Columns {
        names: Vec::with_capacity(names.len()),
        slots: Vec::with_capacity(names.len()),
        vars: Vec::with_capacity(names.len()),
        factors: Vec::with_capacity(names.len()),
    };
    let mut missing = Vec::new();
    for name in names {
        let name = name.as_ref();
        let found = program
            .lookup(name)
            .and_then(|v| Some((v, program.slot_of(v)?, 1.0)))
            .or_else(|| derivative_of_state(program, name).map(|(v, slot)| (v, slot, 1.0)))
            .or_else(|| derivative_through_alias(program, name));
        let (v, slot, factor) = found.unwrap_or_else(|| {
            missing.push(name.to_string());
            (VarId(0), Slot::Time, f64::NAN)
        });
        columns.names.push(name.to_string());
        columns.slots.push(slot);
        columns.vars.push(v);
        columns.factors.push(factor);
    }
    (columns, missing)
}

/// `der(...(a))` read as `±der(...(b))` where alias elimination replaced `a` by `b` or `-b`
/// (the same number of `der`s): the slot of the latter by name, or as the derivative of a
/// state, with the alias's sign.
fn derivative_through_alias(program: &ExecProgram, name: &str) -> Option<(VarId, Slot, f64)> {
    let mut inner = name;
    let mut depth = 0;
    while let Some(rest) = inner.strip_prefix("der(").and_then(|r| r.strip_suffix(')')) {
        inner = rest;
        depth += 1;
    }
    if depth == 0 {
        return None;
    }
    let eliminated = program.symbols().get(program.lookup(inner)?).eliminated?;
    let (target, sign) = match program.exprs().get(eliminated) {
        eqm_ir::expr::Node::Var(w) => (*w, 1.0),
        eqm_ir::expr::Node::Unary(eqm_ir::expr::UnOp::Neg, e) => match program.exprs().get(*e) {
            eqm_ir::expr::Node::Var(w) => (*w, -1.0),
            _ => return None,
        },
        _ => return None,
    };
    let mut renamed = program.symbols().get(target).name.clone();
    for _ in 0..depth {
        renamed = format!("der({renamed})");
    }
    program
        .lookup(&renamed)
        .and_then(|v| Some((v, program.slot_of(v)?)))
        .or_else(|| derivative_of_state(program, &renamed))
        .map(|(v, slot)| (v, slot, sign))
}

/// The slot of `der(x)` for a state `x` of `program`, with `x`'s variable: a column a run asks
/// for by the name of a dummy derivative of another mode of a variable-structure model, in
/// which `x` is a state and its derivative has no variable of its own.
fn derivative_of_state(program: &ExecProgram, name: &str) -> Option<(VarId, Slot)> {
    let inner = name.strip_prefix("der(")?.strip_suffix(')')?;
    let v = program.lookup(inner)?;
    match program.slot_of(v)? {
        Slot::State(i) => Some((v, Slot::Der(i))),
        _ => None,
    }
}
