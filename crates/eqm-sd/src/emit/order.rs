//! Vensim's vector functions of order: `VECTOR SORT ORDER(vector[..., d], direction)`,
//! `VECTOR RANK(vector[..., d], direction)` and `VECTOR REORDER(vector[..., d], order)`.
//!
//! Input: the call in the context of the element being defined. Each function runs over the
//! last dimension `d` of its vector (a variable; its other subscripts name the element of the
//! equation as any reference does), and the element being defined names a place along `d`
//! (through a mapped dimension too: `x[sd] = VECTOR RANK(a[d], 1)` with `d -> sd`). Output: the
//! value at that place. The sort order and the ranks of one vector are one helper array,
//! computed once per step by a function the model holds (a stable merge sort, so equal values
//! keep the order of their elements); the sort order is the 0-based place in `d` of the
//! element that comes at each place, the rank the 1-based place of each element, ascending
//! for the direction 1 and descending for 0. `VECTOR REORDER` reads the element whose 0-based
//! place its order gives; an order that is no such place stops the run. Not supported
//! (E1002): a vector that is an expression rather than a variable or whose last subscript is
//! an element, a direction that is not the number 1 or 0 written in the call, and an equation
//! that names no place along `d`.

use super::expr::{ModelFunction, Writer, unsupported};
use crate::ir::{Expr, ExprKind, Subscript};
use eqm_diag::Diagnostic;

impl Writer<'_, '_> {
    /// `VECTOR SORT ORDER` (`rank` false) or `VECTOR RANK` (`rank` true) at the element being
    /// defined.
    pub(super) fn vector_order(&mut self, expr: &Expr, rank: bool, args: &[Expr]) -> Result<String, Diagnostic> {
        let name = if rank { "VECTOR RANK" } else { "VECTOR SORT ORDER" };
        let ascending = match args[1].kind {
            ExprKind::Number(1.0) => true,
            ExprKind::Number(0.0) => false,
            _ => {
                return Err(unsupported(
                    &args[1],
                    &format!("`{name}` with a direction other than the number 1 (ascending) or 0 (descending)"),
                ));
            }
        };
        let (vector, place) = self.vector(expr, &args[0], name)?;
        let function = self.sort_function();
        let call = format!("{function}({{{}}}, {ascending}, {rank})", vector.join(", "));
        Ok(self.shared_vector(call, vector.len(), place, name))
    }

    /// `VECTOR REORDER` at the element being defined.
    pub(super) fn vector_reorder(&mut self, expr: &Expr, args: &[Expr]) -> Result<String, Diagnostic> {
        let name = "VECTOR REORDER";
        let (vector, _) = self.vector(expr, &args[0], name)?;
        let n = vector.len();
        let values = self.shared_array(format!("{{{}}}", vector.join(", ")), n, name);
        let order = self.real(&args[1])?;
        let function = self.element_function();
        Ok(format!("{function}({values}, {order})"))
    }

    /// The references along the last dimension of a vector function's argument and the
    /// 1-based place along it that the element being defined names.
    fn vector(&mut self, expr: &Expr, arg: &Expr, name: &str) -> Result<(Vec<String>, usize), Diagnostic> {
        if self.scope.in_function {
            return Err(unsupported(expr, &format!("`{name}` in a macro")));
        }
        let ExprKind::Variable { name: var, subscripts } = &arg.kind else {
            return Err(unsupported(
                arg,
                &format!("`{name}` of an expression (only of a variable)"),
            ));
        };
        if matches!(subscripts.last(), Some(Subscript::Element(_) | Subscript::Index(_))) {
            return Err(unsupported(
                arg,
                &format!("`{name}` of a vector whose last subscript is no dimension"),
            ));
        }
        let id = self.id_of(arg, var)?;
        let (references, place) = self.scope.arrays.vector(arg, id, var, subscripts, self.element)?;
        let Some(place) = place.filter(|_| !references.is_empty()) else {
            return Err(unsupported(
                expr,
                &format!("`{name}` in an equation that names no element of the vector's last dimension"),
            ));
        };
        Ok((references, place))
    }

    /// Element `place` of the helper array that holds `call`: the elements of one vector
    /// share it.
    fn shared_vector(&mut self, call: String, n: usize, place: usize, name: &str) -> String {
        let id = self.shared_array(call, n, name);
        format!("{id}[{place}]")
    }

    /// The helper array of `n` values that holds `call`, declared the first time.
    fn shared_array(&mut self, call: String, n: usize, name: &str) -> String {
        if let Some(id) = self.helpers.arrays.get(&call) {
            return id.clone();
        }
        let id = self.helpers.fresh(&name.to_lowercase());
        self.helpers
            .declarations
            .push(format!("Real {id}[{n}] \"The values of a {name} over one vector\";"));
        self.helpers.equations.push(format!("{id} = {call};"));
        self.helpers.arrays.insert(call, id.clone());
        id
    }

    /// The name of the model's sorting function, written the first time.
    fn sort_function(&mut self) -> String {
        self.model_function(
            ModelFunction::VectorOrder,
            "vector order",
            "Vensim's VECTOR SORT ORDER and VECTOR RANK",
            SORT_BODY,
        )
    }

    /// The name of the model's function of an element by its place, written the first time.
    fn element_function(&mut self) -> String {
        self.model_function(
            ModelFunction::VectorElement,
            "vector element",
            "Vensim's VECTOR REORDER",
            ELEMENT_BODY,
        )
    }
}

/// The sort order (0-based places, `rank` false) or the ranks (1-based, `rank` true) of `v`:
/// a bottom-up merge sort of the places, stable, so equal values keep their places' order.
const SORT_BODY: &str = "    input Real v[:];
    input Boolean ascending;
    input Boolean rank;
    output Real y[size(v, 1)];
  protected
    Integer n = size(v, 1);
    Integer places[size(v, 1)];
    Integer merged[size(v, 1)];
    Integer width;
    Integer low;
    Integer middle;
    Integer high;
    Integer i;
    Integer j;
    Integer k;
  algorithm
    for m in 1:n loop
      places[m] := m;
    end for;
    width := 1;
    while width < n loop
      low := 1;
      while low <= n loop
        middle := min(low + width, n + 1);
        high := min(low + 2*width, n + 1);
        i := low;
        j := middle;
        k := low;
        while k < high loop
          // The right run's element goes first only where it comes strictly before.
          if i >= middle then
            merged[k] := places[j];
            j := j + 1;
          elseif j >= high then
            merged[k] := places[i];
            i := i + 1;
          elseif (if ascending then v[places[j]] < v[places[i]] else v[places[j]] > v[places[i]]) then
            merged[k] := places[j];
            j := j + 1;
          else
            merged[k] := places[i];
            i := i + 1;
          end if;
          k := k + 1;
        end while;
        low := high;
      end while;
      places := merged;
      width := 2*width;
    end while;
    for m in 1:n loop
      if rank then
        y[places[m]] := m;
      else
        y[m] := places[m] - 1;
      end if;
    end for;
";

/// The element of `v` at the 0-based place `order`.
const ELEMENT_BODY: &str = "    input Real v[:];
    input Real order;
    output Real y;
  algorithm
    assert(order == floor(order) and order >= 0 and order < size(v, 1),
      \"VECTOR REORDER: an order is no place of the vector (0 to its size less 1)\");
    y := v[integer(order) + 1];
";
