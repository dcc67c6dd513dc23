//! `A ^ k` of a square matrix: the matrix power, not an element-wise one (that is `A .^ k`).
//!
//! Input: the evaluated matrix and exponent. Output: the identity matrix for `k = 0`, else the
//! products `A * A * ... * A` written out (by repeated squaring, so `k` costs about `log2 k`
//! products). The exponent must be a non-negative Integer known when the model is compiled,
//! as Modelica requires. It deliberately builds no new operator: each product is the ordinary
//! matrix product of the flat model's expressions.

use crate::flattener::Flattener;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

impl Flattener<'_, '_> {
    /// `a ^ b` with `a` an array: the matrix power of the square matrix `a`.
    pub(crate) fn matrix_power(&mut self, e: &ast::Expr, a: &Value, b: &Value, exponent: &ast::Expr) -> Option<Value> {
        let dims = a.dims().to_vec();
        if dims.len() != 2 || dims[0] != dims[1] {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0304",
                    format!("`^` of an array is the power of a square matrix, but this array has size {dims:?}"),
                    e.span,
                    "not a square matrix",
                )
                .with_help("for the power of each element, write `.^`"),
            );
            return None;
        }
        let Some(k) = self.known_exponent(b) else {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                "the exponent of a matrix power must be a non-negative Integer known when the model is compiled",
                exponent.span,
                "not such an Integer",
            ));
            return None;
        };
        let ty = a.ty();
        let mut result = self.identity(dims[0], ty);
        let mut square = a.clone();
        let mut remaining = k;
        while remaining > 0 {
            if remaining & 1 == 1 {
                result = self.matrix_product(e, &result, &square, ty)?;
            }
            remaining >>= 1;
            if remaining > 0 {
                square = self.matrix_product(e, &square, &square, ty)?;
            }
        }
        Some(result)
    }

    /// The value of an Integer exponent known at translation, if it is not negative.
    fn known_exponent(&mut self, b: &Value) -> Option<u64> {
        let Value::Scalar(x, ScalarType::Integer) = b else {
            return None;
        };
        let k = self.consts.eval(&self.model, *x)?;
        (k >= 0.0 && k.fract() == 0.0).then_some(k as u64)
    }

    /// The n-by-n identity matrix of element type `ty`.
    fn identity(&mut self, n: usize, ty: ScalarType) -> Value {
        let mut elements = Vec::with_capacity(n * n);
        for i in 0..n {
            for j in 0..n {
                let one = usize::from(i == j);
                elements.push(match ty {
                    ScalarType::Integer => self.model.exprs.int(one as i64),
                    _ => self.model.exprs.real(one as f64),
                });
            }
        }
        Value::Array(vec![n, n], elements, ty)
    }
}
