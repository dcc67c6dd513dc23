//! Vensim's `ALLOCATE BY PRIORITY(request[..., d], priority[..., d], size, width, supply)`
//! and `ALLOCATE AVAILABLE(request[..., d], profile[..., d, ptype], available)`: the supply
//! shared among the requesters along the last dimension `d` of the request.
//!
//! Input: the call, in the context of the element being defined, which binds `d` to the
//! requester whose allocation it is. Output: that element of a helper array, the allocations of
//! every requester of `d` at once, computed by a function the model holds. The function gives
//! each requester `i` the share `request[i]*clamp((priority[i] + width/2 - level)/width, 0, 1)`
//! (a requester's priority spread evenly over a band `width` wide around it), at the one level
//! where the shares sum to the supply; so all requests are filled when the supply covers them,
//! none gets anything from a supply of 0 or less, and within a band the requesters share by
//! the size of their requests. The level is found by bisection to the precision of a double,
//! since the shares' sum is piecewise linear and falls with the level.
//!
//! `ALLOCATE AVAILABLE` reads each requester's priority profile from four consecutive elements
//! of the profile's last dimension, starting at the one the call names (`ptype`, `ppriority`,
//! `pwidth`, `pextra`), and gives requester `i` the share `request[i]*(1 - F(level))`, where
//! `F` is the distribution function of the profile's type centred on its priority: 1 uniform
//! over a band `pwidth` wide (as `ALLOCATE BY PRIORITY`), 2 triangular over such a band, 3
//! normal with standard deviation `pwidth`, 4 Laplace (the two-sided exponential) of scale
//! `pwidth`. The normal one is computed through `erfc` as Vensim computes it (Abramowitz and
//! Stegun's approximation 7.1.25, within 2.5e-5 of the exact function). The fixed-quantity (0) and constant-elasticity (5) types,
//! and any other, stop the run with a message naming them, as does a `pwidth` not above 0.
//!
//! One helper array is written per requester group (the elements that differ only in `d`), so
//! the text and the run grow with the number of elements, not its square. The run stops with a
//! message where a request is negative or the width is not above 0, as Vensim refuses them;
//! a size that is not the number of elements of `d` is E1006. What it does not do: a request
//! whose last subscript is not a dimension the equation is over, and a profile whose last
//! subscript is not an element of its dimension with three more after it (E1002).

use super::expr::{ModelFunction, Writer, unsupported};
use crate::ir::{Expr, ExprKind, Subscript};
use crate::names::canonical;
use eqm_diag::Diagnostic;

/// The dimension of the requesters, the requester the element being defined names (from 1),
/// and their number.
struct Requesters {
    dim: String,
    k: usize,
    n: usize,
}

impl Writer<'_, '_> {
    /// The values of `fields` at each requester `1..=n` of dimension `dim`: one column per
    /// field, one entry per requester.
    fn requester_columns(&mut self, dim: &str, n: usize, fields: &[&Expr]) -> Result<Vec<Vec<String>>, Diagnostic> {
        let mut columns: Vec<Vec<String>> = fields.iter().map(|_| Vec::with_capacity(n)).collect();
        for i in 1..=n {
            let mut context = self.element.clone();
            context.push((dim.to_string(), i));
            let mut writer = Writer {
                scope: self.scope,
                helpers: &mut *self.helpers,
                element: &context,
            };
            for (column, field) in columns.iter_mut().zip(fields) {
                column.push(writer.real(field)?);
            }
        }
        Ok(columns)
    }

    /// The element of `ALLOCATE BY PRIORITY(args...)` being defined.
    pub(super) fn allocate_by_priority(&mut self, expr: &Expr, args: &[Expr]) -> Result<String, Diagnostic> {
        let Requesters { dim, k, n } = self.requesters(expr, &args[0], "ALLOCATE BY PRIORITY")?;
        let size = match args[2].kind {
            ExprKind::Number(v) if v == n as f64 => None,
            ExprKind::Number(v) => {
                return Err(Diagnostic::error(
                    "E1006",
                    format!("`ALLOCATE BY PRIORITY` of size {v} over `{dim}`, which has {n} elements"),
                    args[2].span,
                    "not the number of requesters",
                ));
            }
            _ => Some(self.real(&args[2])?),
        };
        let columns = self.requester_columns(&dim, n, &[&args[0], &args[1]])?;
        let width = self.real(&args[3])?;
        let supply = self.real(&args[4])?;
        let function = self.allocation_function(Profiles::ByPriority);
        let call = format!("{function}({}, {width}, {supply})", vectors(&columns));
        let check = size.map(|size| {
            format!("assert({size} == {n}, \"ALLOCATE BY PRIORITY: the size is not the number of requesters ({n})\");")
        });
        Ok(self.shared_allocation(call, check, n, k))
    }

    /// The element of `ALLOCATE AVAILABLE(args...)` being defined.
    pub(super) fn allocate_available(&mut self, expr: &Expr, args: &[Expr]) -> Result<String, Diagnostic> {
        let Requesters { dim, k, n } = self.requesters(expr, &args[0], "ALLOCATE AVAILABLE")?;
        let profile = self.profile_elements(expr, &args[1])?;
        let fields: Vec<&Expr> = std::iter::once(&args[0]).chain(profile.iter()).collect();
        let columns = self.requester_columns(&dim, n, &fields)?;
        let available = self.real(&args[2])?;
        let function = self.allocation_function(Profiles::Available);
        let call = format!("{function}({}, {available})", vectors(&columns));
        Ok(self.shared_allocation(call, None, n, k))
    }

    /// The requesters of an allocation: the last subscript of its request, a dimension the
    /// element being defined binds.
    fn requesters(&self, expr: &Expr, request: &Expr, name: &str) -> Result<Requesters, Diagnostic> {
        if self.scope.in_function {
            return Err(unsupported(expr, &format!("`{name}` in a macro")));
        }
        let ExprKind::Variable { subscripts, .. } = &request.kind else {
            return Err(unsupported(expr, &format!("`{name}` of a request that is no variable")));
        };
        let Some(Subscript::Dimension(dim)) = subscripts.last() else {
            return Err(unsupported(
                expr,
                &format!("`{name}` of a request whose last subscript is not a dimension"),
            ));
        };
        let dim = canonical(dim);
        let bound = self.element.iter().rev().find(|(d, _)| *d == dim).map(|(_, i)| *i);
        let (Some(k), Some(n)) = (bound, self.scope.arrays.elements.get(&dim).map(Vec::len)) else {
            return Err(unsupported(
                expr,
                &format!("`{name}` over `{dim}` in an equation that is not over `{dim}`"),
            ));
        };
        Ok(Requesters { dim, k, n })
    }

    /// The four fields of a priority profile (`profile[..., ptype]`): the argument with its last
    /// subscript moved to the element it names and the three after it.
    fn profile_elements(&self, expr: &Expr, profile: &Expr) -> Result<Vec<Expr>, Diagnostic> {
        let not_a_profile = || {
            unsupported(
                expr,
                "`ALLOCATE AVAILABLE` of a profile whose last subscript is not an element with three more after it",
            )
        };
        let ExprKind::Variable { name, subscripts } = &profile.kind else {
            return Err(not_a_profile());
        };
        let Some(Subscript::Element(first)) = subscripts.last() else {
            return Err(not_a_profile());
        };
        let dims = self.scope.arrays.dims.get(&canonical(name)).ok_or_else(not_a_profile)?;
        let elements = dims
            .last()
            .and_then(|d| self.scope.arrays.elements.get(d))
            .ok_or_else(not_a_profile)?;
        let start = elements
            .iter()
            .position(|(key, _)| *key == canonical(first))
            .filter(|p| p + 4 <= elements.len())
            .ok_or_else(not_a_profile)?;
        Ok(elements[start..start + 4]
            .iter()
            .map(|(_, written)| {
                let mut subscripts = subscripts.clone();
                *subscripts.last_mut().expect("a last subscript") = Subscript::Element(written.clone());
                Expr {
                    kind: ExprKind::Variable {
                        name: name.clone(),
                        subscripts,
                    },
                    span: profile.span,
                }
            })
            .collect())
    }

    /// Element `k` of the helper array that holds `call`, declared the first time (with the
    /// equation `check`, if any): the elements of one group share it.
    fn shared_allocation(&mut self, call: String, check: Option<String>, n: usize, k: usize) -> String {
        if let Some(id) = self.helpers.arrays.get(&call) {
            return format!("{id}[{k}]");
        }
        let id = self.helpers.fresh("allocation");
        self.helpers.declarations.push(format!(
            "Real {id}[{n}] \"The allocations of the requesters of one group\";"
        ));
        self.helpers.equations.push(format!("{id} = {call};"));
        self.helpers.equations.extend(check);
        self.helpers.arrays.insert(call, id.clone());
        format!("{id}[{k}]")
    }

    /// The name of the model's function of an allocation, written the first time.
    fn allocation_function(&mut self, profiles: Profiles) -> String {
        let (kind, base, text, share) = match profiles {
            Profiles::ByPriority => (
                ModelFunction::AllocateByPriority,
                "allocate by priority",
                BY_PRIORITY,
                "request[i]*min(max((priority[i] + width/2 - level)/width, 0), 1)".to_string(),
            ),
            Profiles::Available => {
                let erfc = self.model_function(ModelFunction::Erfc, "erfc", "The complementary error function", ERFC);
                (
                    ModelFunction::AllocateAvailable,
                    "allocate available",
                    AVAILABLE,
                    AVAILABLE_SHARE.replace("ERFC", &erfc),
                )
            }
        };
        let body = format!("{text}{}", SOLVE.replace("SHARE", &share));
        self.model_function(kind, base, &format!("Vensim's {}", base.to_uppercase()), &body)
    }
}

/// Which allocation function.
#[derive(Clone, Copy)]
enum Profiles {
    ByPriority,
    Available,
}

/// Columns of values, one per requester each, as array literals.
fn vectors(columns: &[Vec<String>]) -> String {
    let literals: Vec<String> = columns.iter().map(|c| format!("{{{}}}", c.join(", "))).collect();
    literals.join(", ")
}

/// The declarations and checks of `ALLOCATE BY PRIORITY`'s function, and its `share` of a
/// requester at a level: the band around the priority, `width` wide.
const BY_PRIORITY: &str = "    input Real request[:];
    input Real priority[size(request, 1)];
    input Real width;
    input Real supply;
    output Real allocation[size(request, 1)];
  protected
    Real low;
    Real high;
    Real level;
    Real total;
  algorithm
    assert(width > 0, \"ALLOCATE BY PRIORITY: the width is not above 0\");
    assert(min(request) >= 0, \"ALLOCATE BY PRIORITY: a request is negative\");
    // Below the lowest band every share is whole, above the highest none is.
    low := min(priority) - width;
    high := max(priority) + width;
";

/// The declarations and checks of `ALLOCATE AVAILABLE`'s function.
const AVAILABLE: &str = "    input Real request[:];
    input Real ptype[size(request, 1)];
    input Real ppriority[size(request, 1)];
    input Real pwidth[size(request, 1)];
    input Real pextra[size(request, 1)];
    input Real supply;
    output Real allocation[size(request, 1)];
  protected
    Real low;
    Real high;
    Real level;
    Real total;
  algorithm
    assert(min(request) >= 0, \"ALLOCATE AVAILABLE: a request is negative\");
    assert(min(pwidth) > 0, \"ALLOCATE AVAILABLE: a pwidth is not above 0\");
    for i in 1:size(request, 1) loop
      assert(ptype[i] == 1 or ptype[i] == 2 or ptype[i] == 3 or ptype[i] == 4,
        \"ALLOCATE AVAILABLE: only the priority profiles 1 to 4 (rectangular, triangular, normal, exponential) are supported\");
    end for;
    // Forty widths below the lowest priority every share is whole to a double's precision,
    // forty above the highest none is left.
    low := min(ppriority - 40*pwidth);
    high := max(ppriority + 40*pwidth);
";

/// Requester `i`'s share at `level` in `ALLOCATE AVAILABLE`: its request times the part of
/// its profile's distribution above the level (`ERFC` stands for the function's name).
const AVAILABLE_SHARE: &str = "request[i]*(if ptype[i] == 1 then min(max((ppriority[i] + pwidth[i]/2 - level)/pwidth[i], 0), 1)
            elseif ptype[i] == 2 then (if level <= ppriority[i] then 1 - 2*(max(level - ppriority[i] + pwidth[i]/2, 0)/pwidth[i])^2
              else 2*(max(ppriority[i] + pwidth[i]/2 - level, 0)/pwidth[i])^2)
            elseif ptype[i] == 3 then 0.5*ERFC((level - ppriority[i])/(sqrt(2)*pwidth[i]))
            elseif level < ppriority[i] then 1 - 0.5*exp((level - ppriority[i])/pwidth[i])
            else 0.5*exp((ppriority[i] - level)/pwidth[i]))";

/// `erfc(x)` as Vensim computes it for the normal profile: Abramowitz and Stegun's
/// approximation 7.1.25, `(a1 t + a2 t^2 + a3 t^3) exp(-x^2)` with `t = 1/(1 + p x)`, within
/// 2.5e-5 of the exact value (the suite's Vensim results follow it, not the exact function,
/// by up to that much), and `2 - erfc(-x)` below 0.
const ERFC: &str = "    input Real x;
    output Real y;
  protected
    Real z;
    Real t;
  algorithm
    z := abs(x);
    t := 1/(1 + 0.47047*z);
    y := (0.3480242*t - 0.0958798*t^2 + 0.7478556*t^3)*exp(-z*z);
    if x < 0 then
      y := 2 - y;
    end if;
";

/// The bisection for the level whose shares sum to the supply, and the shares at it; `share`
/// stands for the expression of requester `i`'s share at `level`, filled in per function.
const SOLVE: &str = "    if supply >= sum(request) then
      allocation := request;
    elseif supply <= 0 then
      allocation := zeros(size(request, 1));
    else
      level := (low + high)/2;
      for iteration in 1:200 loop
        level := (low + high)/2;
        total := 0;
        for i in 1:size(request, 1) loop
          total := total + SHARE;
        end for;
        if total > supply then
          low := level;
        else
          high := level;
        end if;
      end for;
      for i in 1:size(request, 1) loop
        allocation[i] := SHARE;
      end for;
    end if;
";
