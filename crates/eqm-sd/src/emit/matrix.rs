//! Vensim's `INVERT MATRIX(m[..., rows, columns], n)` written out element by element.
//!
//! Input: the call, in the context of the element of the result being defined (which binds
//! the last two subscripts of the argument, `rows` and `columns`, to `i` and `j`). Output: the
//! element `(i, j)` of the inverse as an expression of the argument's elements, the cofactor
//! of `(j, i)` over the determinant (Laplace's expansion, so it holds for a matrix that changes
//! during the run), and an assertion that stops the run where the determinant is 0. Matrices
//! larger than 4 by 4 (whose expansion grows as `n!`) and arguments that are no variable are
//! E1002; a size that does not fit the dimensions is E1006.

use super::expr::{Writer, unsupported};
use crate::ir::{Expr, ExprKind, Subscript};
use crate::names::canonical;
use eqm_diag::Diagnostic;

/// The largest matrix whose inverse is written out.
const MAX_SIZE: usize = 4;

impl Writer<'_, '_> {
    /// The element of `INVERT MATRIX(args[0], args[1])` being defined.
    pub(super) fn invert_matrix(&mut self, expr: &Expr, args: &[Expr]) -> Result<String, Diagnostic> {
        let ExprKind::Variable { name, subscripts } = &args[0].kind else {
            return Err(unsupported(expr, "`INVERT MATRIX` of anything but a variable"));
        };
        let n = match args[1].kind {
            ExprKind::Number(v) if (1.0..=MAX_SIZE as f64).contains(&v) && v.fract() == 0.0 => v as usize,
            _ => {
                return Err(unsupported(
                    &args[1],
                    "`INVERT MATRIX` of a size that is not a number from 1 to 4",
                ));
            }
        };
        let [.., Subscript::Dimension(rows), Subscript::Dimension(columns)] = subscripts.as_slice() else {
            return Err(unsupported(
                expr,
                "`INVERT MATRIX` of a variable whose last two subscripts are not dimensions",
            ));
        };
        let (rows, columns) = (canonical(rows), canonical(columns));
        let bound = |dim: &str| self.element.iter().rev().find(|(d, _)| d == dim).map(|(_, i)| *i);
        let (Some(i), Some(j)) = (bound(&rows), bound(&columns)) else {
            return Err(unsupported(
                expr,
                "`INVERT MATRIX` in an equation that is not over the matrix's rows and columns",
            ));
        };
        let size = |dim: &str| self.scope.arrays.elements.get(dim).map_or(0, Vec::len);
        if size(&rows) != n || size(&columns) != n {
            return Err(Diagnostic::error(
                "E1006",
                format!("`INVERT MATRIX` of size {n} over `{rows}` and `{columns}`, which are not of that size"),
                expr.span,
                "subscripts that do not fit",
            ));
        }
        let id = self.scope.ids.get(name).ok_or_else(|| {
            Diagnostic::error(
                "E1004",
                format!("`{name}` is no variable of this model"),
                args[0].span,
                "unknown name",
            )
        })?;
        let mut entries = vec![vec![String::new(); n]; n];
        for (p, row) in entries.iter_mut().enumerate() {
            for (q, entry) in row.iter_mut().enumerate() {
                let mut context = self.element.clone();
                context.push((rows.clone(), p + 1));
                context.push((columns.clone(), q + 1));
                *entry = self.scope.arrays.reference(&args[0], id, name, subscripts, &context)?;
            }
        }
        let det = determinant(&entries);
        self.helpers.equations.push(format!(
            "assert(noEvent({det} <> 0), \"INVERT MATRIX of {}: the matrix is singular\");",
            name.replace('"', "'")
        ));
        // The inverse is the adjugate over the determinant: its (i, j) is the cofactor (j, i).
        let minor: Vec<Vec<String>> = entries
            .iter()
            .enumerate()
            .filter(|(p, _)| *p != j - 1)
            .map(|(_, row)| {
                row.iter()
                    .enumerate()
                    .filter(|(q, _)| *q != i - 1)
                    .map(|(_, e)| e.clone())
                    .collect()
            })
            .collect();
        let sign = if (i + j) % 2 == 0 { "" } else { "-" };
        Ok(format!("({sign}({})/({det}))", determinant(&minor)))
    }
}

/// The determinant of a square matrix of expressions by Laplace's expansion along its first
/// row (1 for the empty matrix).
fn determinant(m: &[Vec<String>]) -> String {
    match m.len() {
        0 => "1".to_string(),
        1 => m[0][0].clone(),
        n => {
            let mut terms = Vec::with_capacity(n);
            for q in 0..n {
                let minor: Vec<Vec<String>> = m[1..]
                    .iter()
                    .map(|row| {
                        row.iter()
                            .enumerate()
                            .filter(|(c, _)| *c != q)
                            .map(|(_, e)| e.clone())
                            .collect()
                    })
                    .collect();
                let sign = if q % 2 == 0 { "+" } else { "-" };
                terms.push(format!("{sign} {}*({})", m[0][q], determinant(&minor)));
            }
            let joined = terms.join(" ");
            joined.strip_prefix("+ ").map_or(joined.clone(), str::to_string)
        }
    }
}
