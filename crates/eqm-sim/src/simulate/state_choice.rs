//! The check of a dummy-derivative form's static state choice, and the failures that name it.
//!
//! Input: the executable program with its state choice, and at each row the choice's matrix
//! and row norms (evaluated by the row writer with the Jacobian). Output: whether the choice
//! is singular at the row or became singular since the last one, the failure (`E0713`) that
//! says so, and the note added to another failure of a dummy-derivative run. It deliberately
//! evaluates nothing itself and changes no state choice.

use crate::run::SimError;
use eqm_compile::exec::ExecProgram;
use eqm_diag::Diagnostic;

/// The distance from singular of a normalised state-choice matrix (its smallest singular value,
/// or for a square one the estimate `1/‖M⁻¹‖₁`) below which the choice counts as singular.
const SINGULAR_CHOICE: f64 = 1e-6;

/// The check of a dummy-derivative form's state choice at each row.
///
/// Every row is checked, since a row written after the choice became singular would be wrong.
/// A matrix that is square once its rows and columns of structural zeros are left out (as many
/// constraints as variables they determine, the usual case) is checked by its sparse LU on the pattern of its structurally nonzero entries, analysed once
/// ([`eqm_integrators::linalg::SparseSingularity`]): the sign of the determinant, and
/// `1/‖M⁻¹‖₁` from Hager's estimate (within a factor `√k` of the smallest singular value) as the
/// distance from singularity. Each row then costs about as much as evaluating the matrix,
/// instead of the `O(k³)` singular value decomposition, which made a chain of 1000 rigidly
/// coupled stages take two minutes for 500 rows. Other shapes keep the decomposition.
pub(super) struct ChoiceCheck {
    /// The matrix (rows × variables, row-major) followed by the row norms.
    pub(super) values: Vec<f64>,
    rows: usize,
    /// The sign of the determinant at the last row (square matrices), to notice a singular
    /// configuration passed between two rows.
    sign: Option<f64>,
    /// For a matrix square without its zero rows and columns: its sparse check, and the positions in
    /// `values` of its structurally nonzero entries with the normalised values handed to the
    /// check.
    sparse: Option<(eqm_integrators::linalg::SparseSingularity, Vec<usize>, Vec<f64>)>,
}

impl ChoiceCheck {
    pub(super) fn new(program: &ExecProgram, choice: &eqm_compile::exec::ExecStateChoice) -> ChoiceCheck {
        let (k, entries) = (choice.norms.len(), choice.matrix.len());
        let l = entries.checked_div(k).unwrap_or(0);
        // An entry whose derivative is the constant 0 is 0 at every row.
        let zero = |e: eqm_ir::expr::ExprId| program.exprs().literal(e) == Some(0.0);
        let at: Vec<usize> = (0..entries).filter(|&p| !zero(choice.matrix[p])).collect();
        // Rows and columns that are 0 everywhere (a demoted velocity when only positions are
        // constrained, a differentiated equation that no demoted variable enters) change no
        // singular value: the matrix without them is checked, with the sparse check when it is
        // square and as large as the smaller side (else the choice is structurally singular,
        // which the decomposition reports at the first row).
        let (mut row_of, mut column_of) = (vec![usize::MAX; k], vec![usize::MAX; l]);
        let (mut rows_used, mut columns_used) = (0, 0);
        for &p in &at {
            if row_of[p / l] == usize::MAX {
                row_of[p / l] = rows_used;
                rows_used += 1;
            }
            if column_of[p % l] == usize::MAX {
                column_of[p % l] = columns_used;
                columns_used += 1;
            }
        }
        let size = k.min(l);
        let sparse = (rows_used == size && columns_used == size && size > 0)
            .then(|| {
                let positions: Vec<(usize, usize)> = at.iter().map(|&p| (row_of[p / l], column_of[p % l])).collect();
                let check = eqm_integrators::linalg::SparseSingularity::new(size, &positions)?;
                Some((check, at.clone(), vec![0.0; at.len()]))
            })
            .flatten();
        ChoiceCheck {
            values: vec![0.0; entries + k],
            rows: k,
            sign: None,
            sparse,
        }
    }

    /// `Some(description)` when the choice is singular at this row or became singular since
    /// the last one.
    pub(super) fn check(&mut self) -> Option<String> {
        let k = self.rows;
        let l = (self.values.len() - k).checked_div(k).unwrap_or(0);
        if k == 0 || l == 0 {
            return None;
        }
        if let Some((check, at, normalised)) = &mut self.sparse {
            for (v, &p) in normalised.iter_mut().zip(at.iter()) {
                let norm = self.values[k * l + p / l];
                *v = if norm > 0.0 { self.values[p] / norm } else { 0.0 };
            }
            let Some(found) = check.examine(normalised) else {
                return Some("the differentiated constraints no longer determine them (a zero pivot)".to_string());
            };
            let distance = 1.0 / found.inverse_norm;
            if distance.is_nan() || distance < SINGULAR_CHOICE {
                return Some(format!(
                    "the differentiated constraints no longer determine them (estimated distance from singular {distance:.1e})"
                ));
            }
            if self.sign.is_some_and(|s| s != found.sign) {
                return Some(
                    "the solution passed a configuration where the constraints do not determine them".to_string(),
                );
            }
            self.sign = Some(found.sign);
            return None;
        }
        let mut m = nalgebra::DMatrix::zeros(k, l);
        for i in 0..k {
            let norm = self.values[k * l + i];
            for j in 0..l {
                m[(i, j)] = if norm > 0.0 { self.values[i * l + j] / norm } else { 0.0 };
            }
        }
        let smallest = m
            .clone()
            .singular_values()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        if smallest.is_nan() || smallest < SINGULAR_CHOICE {
            return Some(format!(
                "the differentiated constraints no longer determine them (smallest normalised singular value {smallest:.1e})"
            ));
        }
        if k == l {
            let sign = m.determinant().signum();
            if self.sign.is_some_and(|s| s != sign) {
                return Some(
                    "the solution passed a configuration where the constraints do not determine them".to_string(),
                );
            }
            self.sign = Some(sign);
        }
        None
    }
}

/// A failure of a dummy-derivative run inside a step (a Newton iteration that cannot solve a
/// constraint for a variable that is no longer a state) is most likely the static state choice
/// becoming singular between two rows: the diagnostic says so and names the way out.
pub(super) fn with_state_choice_note(program: &ExecProgram, e: SimError) -> SimError {
    let Some(choice) = program.state_choice() else {
        return e;
    };
    match e {
        SimError::Failed {
            time,
            message,
            diagnostic: Some(d),
            warnings,
        } if d.code != "E0713" && d.code != "E0714" => {
            let names = |vars: &[eqm_ir::expr::VarId]| quoted_names(program, vars);
            let note = format!(
                "this run uses dummy derivatives with the static state choice {}; where that choice becomes singular, {} cannot be computed from the constraints",
                names(&choice.states),
                names(&choice.variables)
            );
            let d = d
                .with_note(note)
                .with_help("simulate the embedding form, which keeps every differentiated variable a state and the constraints by projection: --index-reduction embedding");
            SimError::Failed {
                warnings,
                time,
                message,
                diagnostic: Some(Box::new(d)),
            }
        }
        other => other,
    }
}

/// The names of `vars` in backquotes, separated by commas.
fn quoted_names(program: &ExecProgram, vars: &[eqm_ir::expr::VarId]) -> String {
    vars.iter()
        .map(|v| format!("`{}`", program.symbols().get(*v).name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The failure of a dummy-derivative run whose state choice became singular.
pub(super) fn state_choice_failure(program: &ExecProgram, t: f64, problem: &str) -> SimError {
    let choice = program.state_choice().expect("checked");
    let names = |vars: &[eqm_ir::expr::VarId]| quoted_names(program, vars);
    let message = format!(
        "the static state choice is singular at time {t}: with the states {} the variables {} cannot be computed: {problem}",
        names(&choice.states),
        names(&choice.variables)
    );
    let diagnostic = Diagnostic::error("E0713", message.clone(), choice.span, "this constraint")
        .with_help("simulate the embedding form, which keeps every differentiated variable a state and the constraints by projection: --index-reduction embedding (the default for this model)");
    SimError::Failed {
        warnings: Vec::new(),
        time: t,
        message,
        diagnostic: Some(Box::new(diagnostic)),
    }
}
