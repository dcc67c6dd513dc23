//! Arrayed variables written element by element: the elements of a variable, the element a
//! subscripted reference names in the context of the element being defined, and the
//! elements an array builtin (`SUM(a[*])`) runs over.
//!
//! Input: the file's dimensions and each variable's dimensions (canonical names). Output:
//! `.eqm` references with 1-based indices (`'Stock A'[2]`), in the order of each dimension's
//! elements in the file. A reference that does not fit the variable's dimensions is E1006.
//! Mappings between different dimensions and computed indices are not written (E1002).

use crate::ir::{Expr, Subscript};
use eqm_diag::Diagnostic;
use std::collections::HashMap;

/// The element being defined: for each of its dimensions (canonical name), the 1-based index.
pub(crate) type Element = Vec<(String, usize)>;

#[derive(Debug, Default)]
pub(crate) struct Arrays {
    /// Each variable's dimensions, by the variable's canonical name (scalars have none).
    pub(crate) dims: HashMap<String, Vec<String>>,
    /// Each dimension's elements: canonical name and name as written.
    pub(crate) elements: HashMap<String, Vec<(String, String)>>,
}

fn mismatch(span: &Expr, message: String) -> Diagnostic {
    Diagnostic::error("E1006", message, span.span, "subscripts that do not fit")
}

impl Arrays {
    /// Every element of a variable with `dims`, in row-major order (one empty element for a
    /// scalar); `None` when a dimension is unknown or there are more than a million.
    pub(crate) fn elements_of(&self, dims: &[String]) -> Option<Vec<Element>> {
        let mut count: usize = 1;
        for dim in dims {
            count = count.checked_mul(self.elements.get(dim)?.len())?;
        }
        // Each element is written out: more than this is no model to write as text.
        if count > 1_000_000 {
            return None;
        }
        let mut out: Vec<Element> = vec![Vec::new()];
        for dim in dims {
            let n = self.elements.get(dim)?.len();
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    (1..=n).map(move |i| {
                        let mut e = prefix.clone();
                        e.push((dim.clone(), i));
                        e
                    })
                })
                .collect();
        }
        Some(out)
    }

    /// `id` with the indices of `element` (`id[1,2]`), or `id` for a scalar.
    pub(crate) fn indexed(id: &str, element: &Element) -> String {
        if element.is_empty() {
            return id.to_string();
        }
        let indices: Vec<String> = element.iter().map(|(_, i)| i.to_string()).collect();
        format!("{id}[{}]", indices.join(","))
    }

    /// The name of an element as the results report it: `name[a,b]` with the elements as
    /// the file writes them.
    pub(crate) fn display(&self, name: &str, element: &Element) -> String {
        if element.is_empty() {
            return name.to_string();
        }
        let names: Vec<&str> = element
            .iter()
            .map(|(dim, i)| self.elements[dim][i - 1].1.as_str())
            .collect();
        format!("{name}[{}]", names.join(","))
    }

    /// The 1-based index of element `key` of dimension `dim`.
    pub(crate) fn index_of(&self, dim: &str, key: &str) -> Option<usize> {
        self.elements
            .get(dim)?
            .iter()
            .position(|(k, _)| k == key)
            .map(|i| i + 1)
    }

    /// The indices a reference `var[subscripts]` names in the context `element`, each
    /// position either fixed (`Some`) or running over its whole dimension (`None`: a
    /// wildcard, or a dimension the context does not fix, which only array builtins take).
    fn positions(
        &self,
        expr: &Expr,
        var: &str,
        subscripts: &[Subscript],
        element: &Element,
    ) -> Result<Vec<(String, Option<usize>)>, Diagnostic> {
        let dims = self.dims.get(var).cloned().unwrap_or_default();
        let in_context = |d: &str| element.iter().find(|(c, _)| c == d).map(|(_, i)| *i);
        if subscripts.is_empty() {
            // An arrayed variable named without subscripts: the element of the same
            // dimensions being defined, or the whole array in an array builtin.
            return Ok(dims.iter().map(|d| (d.clone(), in_context(d))).collect());
        }
        if subscripts.len() != dims.len() {
            return Err(mismatch(
                expr,
                format!("`{var}` has {} dimensions, not {}", dims.len(), subscripts.len()),
            ));
        }
        let mut out = Vec::new();
        for (dim, subscript) in dims.iter().zip(subscripts) {
            let position = match subscript {
                Subscript::Element(key) => match self.index_of(dim, key) {
                    Some(i) => Some(i),
                    None => {
                        return Err(mismatch(
                            expr,
                            format!("`{key}` is no element of the dimension `{dim}`"),
                        ));
                    }
                },
                Subscript::Dimension(d) if d == dim => in_context(d),
                Subscript::Dimension(d) => match in_context(d) {
                    // A dimension of the same size stands for the element at the same place.
                    Some(i) if self.elements.get(d).map(Vec::len) == self.elements.get(dim).map(Vec::len) => Some(i),
                    _ => {
                        return Err(Diagnostic::error(
                            "E1002",
                            format!(
                                "EQM does not import a reference to `{var}` over the dimension `{d}` where it has `{dim}`"
                            ),
                            expr.span,
                            "not supported",
                        ));
                    }
                },
                Subscript::Wildcard(_) => None,
                Subscript::Index(_) => {
                    return Err(Diagnostic::error(
                        "E1002",
                        "EQM does not import computed subscripts",
                        expr.span,
                        "not supported",
                    ));
                }
            };
            out.push((dim.clone(), position));
        }
        Ok(out)
    }

    /// The reference of `id` (the variable `var`) with `subscripts` in the context `element`.
    pub(crate) fn reference(
        &self,
        expr: &Expr,
        id: &str,
        var: &str,
        subscripts: &[Subscript],
        element: &Element,
    ) -> Result<String, Diagnostic> {
        let positions = self.positions(expr, var, subscripts, element)?;
        let mut fixed = Vec::new();
        for (dim, position) in positions {
            match position {
                Some(i) => fixed.push((dim, i)),
                None => {
                    return Err(mismatch(
                        expr,
                        format!("`{var}` is an array over `{dim}` here; only an array function takes the whole array"),
                    ));
                }
            }
        }
        Ok(Arrays::indexed(id, &fixed))
    }

    /// The references of every element an array builtin's argument covers.
    pub(crate) fn expand(
        &self,
        expr: &Expr,
        id: &str,
        var: &str,
        subscripts: &[Subscript],
        element: &Element,
    ) -> Result<Vec<String>, Diagnostic> {
        let positions = self.positions(expr, var, subscripts, element)?;
        let mut out: Vec<Element> = vec![Vec::new()];
        for (dim, position) in positions {
            let range: Vec<usize> = match position {
                Some(i) => vec![i],
                None => (1..=self.elements.get(&dim).map_or(0, Vec::len)).collect(),
            };
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    let dim = dim.clone();
                    range.iter().map(move |&i| {
                        let mut e = prefix.clone();
                        e.push((dim.clone(), i));
                        e
                    })
                })
                .collect();
        }
        Ok(out.iter().map(|e| Arrays::indexed(id, e)).collect())
    }
}
