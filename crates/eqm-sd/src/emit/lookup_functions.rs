//! Vensim's functions of a named lookup: `LOOKUP EXTRAPOLATE`, `LOOKUP FORWARD`,
//! `LOOKUP BACKWARD` and `LOOKUP INVERT`.
//!
//! Input: the call, its first argument the lookup's name (as the parser reads it) and its
//! second the input. Output: the `.eqm` text that reads the lookup's table parameter: through
//! the library's table lookup with another interpolation or extrapolation than the lookup's
//! own, on the table mirrored (`LOOKUP FORWARD`), or through a function the model holds
//! (`LOOKUP INVERT`). Deliberately not here: a lookup over dimensions (E1002) and
//! `LOOKUP AREA`.

use super::expr::{ModelFunction, Writer, lookup_call, unsupported, unwrap};
use crate::ir::{Builtin, Expr, ExprKind, GraphKind};
use eqm_diag::Diagnostic;

impl Writer<'_, '_> {
    /// Vensim's `LOOKUP EXTRAPOLATE`, `LOOKUP FORWARD`, `LOOKUP BACKWARD` and `LOOKUP INVERT`
    /// of the lookup named first: its table read as an extrapolating graphical function, as a
    /// step to the value of the first point at or right of the input (the table mirrored,
    /// `x -> -x`, and read as a step at `-input`), as a step to the value of the last point at
    /// or left of it, or inverted (the `x` where the lines through the points reach the input,
    /// by a function the model holds: the values must rise or fall strictly, else the run stops
    /// with an assertion; outside them the `x` of the nearer end).
    pub(super) fn lookup_read(&mut self, expr: &Expr, builtin: Builtin, args: &[Expr]) -> Result<String, Diagnostic> {
        let ExprKind::Variable { name, subscripts } = &args[0].kind else {
            return Err(unsupported(
                expr,
                "a lookup function whose first argument is not a lookup's name",
            ));
        };
        let Some((table, _)) = self.scope.tables.get(name).filter(|_| subscripts.is_empty()) else {
            return Err(unsupported(expr, "a lookup function of an arrayed lookup table"));
        };
        let input = self.real(&args[1])?;
        Ok(match builtin {
            Builtin::LookupExtrapolate => lookup_call(table, &input, GraphKind::Extrapolate),
            Builtin::LookupBackward => lookup_call(table, &input, GraphKind::Discrete),
            Builtin::LookupInvert => {
                let function = self.model_function(
                    ModelFunction::LookupInvert,
                    "lookup invert",
                    "The x at which the lines through a table's points reach a value",
                    LOOKUP_INVERT_BODY,
                );
                format!("{function}({table}, {})", unwrap(&input))
            }
            _ => {
                let mirrored = format!("[-{table}[end:-1:1, 1], {table}[end:-1:1, 2]]");
                lookup_call(&mirrored, &format!("-({input})"), GraphKind::Discrete)
            }
        })
    }
}

/// The body of `LOOKUP INVERT`'s function.
const LOOKUP_INVERT_BODY: &str = "    input Real table[:, 2] \"The points (x, y), x increasing\";
    input Real value \"The value of y sought\";
    output Real x \"Where the lines through the points reach it\";
  protected
    Integer n = size(table, 1);
    Real direction;
  algorithm
    direction := if n > 1 and table[n, 2] < table[1, 2] then -1 else 1;
    for k in 1:n - 1 loop
      assert(direction*(table[k + 1, 2] - table[k, 2]) > 0, \"LOOKUP INVERT needs a lookup whose values rise or fall strictly\");
    end for;
    if direction*(value - table[1, 2]) <= 0 then
      x := table[1, 1];
    elseif direction*(value - table[n, 2]) >= 0 then
      x := table[n, 1];
    else
      x := table[n, 1];
      for k in 1:n - 1 loop
        if direction*(value - table[k, 2]) >= 0 and direction*(value - table[k + 1, 2]) < 0 then
          x := table[k, 1] + (value - table[k, 2])*(table[k + 1, 1] - table[k, 1])/(table[k + 1, 2] - table[k, 2]);
        end if;
      end for;
    end if;
";
