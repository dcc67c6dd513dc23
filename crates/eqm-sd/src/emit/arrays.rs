//! Arrayed variables written element by element: the elements of a variable, the element a
//! subscripted reference names in the context of the element being defined, and the
//! elements an array builtin (`SUM(a[*])`) runs over.
//!
//! Input: the file's dimensions with their mappings and each variable's dimensions (canonical
//! names). Output: `.eqm` references with 1-based indices (`'Stock A'[2]`), in the order of
//! each dimension's elements in the file. A dimension named in a reference stands for an
//! element by its name: the element being defined of that dimension (found in the
//! referenced variable's dimension by name, so subranges and the same dimension in another
//! spelling resolve), the element a mapping (`dim: a, b -> other`) pairs with a bound one, or
//! a bound element that the dimension holds; two dimensions of the same size with different
//! element names pair by place. A reference that does not fit the variable's dimensions is
//! E1006; computed indices are not written (E1002).

use crate::ir::{Expr, Subscript};
use crate::names::canonical;
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
    /// Each dimension's mappings: the dimension it maps to and, for each of its elements in
    /// order, the canonical name of the element of that dimension (all canonical).
    pub(crate) mappings: HashMap<String, Vec<(String, Vec<String>)>>,
}

/// Where one position of a reference points: one element, or several (an array function's
/// whole dimension or subrange).
enum Position {
    One(usize),
    Many(Vec<usize>),
}

/// The one element each dimension of `positions` names, or the mismatch (saying `why` a whole
/// dimension is not allowed here) at the first dimension that names several.
fn single_positions(
    expr: &Expr,
    var: &str,
    positions: Vec<(String, Position)>,
    why: &str,
) -> Result<Vec<(String, usize)>, Diagnostic> {
    let mut fixed = Vec::with_capacity(positions.len());
    for (dim, position) in positions {
        match position {
            Position::One(i) => fixed.push((dim, i)),
            Position::Many(_) => {
                return Err(mismatch(expr, format!("`{var}` is an array over `{dim}` here; {why}")));
            }
        }
    }
    Ok(fixed)
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

    /// The 1-based index of element `key` (any spelling) of dimension `dim`.
    pub(crate) fn index_of(&self, dim: &str, key: &str) -> Option<usize> {
        let key = canonical(key);
        self.elements
            .get(dim)?
            .iter()
            .position(|(k, _)| *k == key)
            .map(|i| i + 1)
    }

    /// The canonical name of the `i`-th (1-based) element of `dim`.
    fn name_at(&self, dim: &str, i: usize) -> Option<&str> {
        self.elements.get(dim)?.get(i.checked_sub(1)?).map(|(k, _)| k.as_str())
    }

    /// The canonical name of the element of `to` that the `i`-th element of `from` pairs with
    /// through a mapping of either dimension onto the other.
    fn mapped(&self, from: &str, i: usize, to: &str) -> Option<String> {
        if let Some((_, pairs)) = self.mappings.get(from).and_then(|ms| ms.iter().find(|(t, _)| t == to)) {
            return pairs.get(i.checked_sub(1)?).cloned();
        }
        let (_, pairs) = self.mappings.get(to)?.iter().find(|(t, _)| t == from)?;
        let name = self.name_at(from, i)?;
        let at = pairs.iter().position(|p| p == name)?;
        self.name_at(to, at + 1).map(str::to_string)
    }

    /// The index in `dim` (the referenced variable's dimension) that the dimension `range`
    /// named in a reference stands for in the context `element`, where the context fixes it.
    fn resolve(&self, dim: &str, range: &str, element: &Element) -> Option<usize> {
        if let Some((_, i)) = element.iter().rev().find(|(c, _)| c == range) {
            if range == dim {
                return Some(*i);
            }
            if let Some(j) = self.name_at(range, *i).and_then(|name| self.index_of(dim, name)) {
                return Some(j);
            }
            if let Some(j) = self.mapped(range, *i, dim).and_then(|name| self.index_of(dim, &name)) {
                return Some(j);
            }
            // Two dimensions of the same size with other element names pair by place.
            let size = |d: &str| self.elements.get(d).map(Vec::len);
            return (size(range) == size(dim)).then_some(*i);
        }
        for (bound, i) in element.iter().rev() {
            if let Some(name) = self.mapped(bound, *i, range) {
                return self.index_of(dim, &name);
            }
        }
        // A bound element that the named dimension holds (a subrange of a bound dimension).
        for (bound, i) in element.iter().rev() {
            if let Some(name) = self.name_at(bound, *i)
                && self.index_of(range, name).is_some()
            {
                return self.index_of(dim, name);
            }
        }
        None
    }

    /// The indices in `dim` of every element of the dimension `range` (all of `dim` for
    /// itself), or `None` where some element of `range` is not one of `dim`.
    fn all_of(&self, dim: &str, range: &str) -> Option<Vec<usize>> {
        if range == dim {
            return Some((1..=self.elements.get(dim)?.len()).collect());
        }
        self.elements
            .get(range)?
            .iter()
            .map(|(k, _)| self.index_of(dim, k))
            .collect()
    }

    /// The indices a reference `var[subscripts]` names in the context `element`, each
    /// position either fixed or running over several elements (a wildcard, or a dimension
    /// the context does not fix, which only array builtins take).
    fn positions(
        &self,
        expr: &Expr,
        var: &str,
        subscripts: &[Subscript],
        element: &Element,
    ) -> Result<Vec<(String, Position)>, Diagnostic> {
        let dims = self.dims.get(var).cloned().unwrap_or_default();
        if subscripts.is_empty() {
            // An arrayed variable named without subscripts: the element of the same
            // dimensions being defined, or the whole array in an array builtin.
            return Ok(dims
                .iter()
                .map(|d| {
                    let position = match self.resolve(d, d, element) {
                        Some(i) => Position::One(i),
                        None => Position::Many((1..=self.elements.get(d).map_or(0, Vec::len)).collect()),
                    };
                    (d.clone(), position)
                })
                .collect());
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
                    Some(i) => Position::One(i),
                    None => {
                        return Err(mismatch(
                            expr,
                            format!("`{key}` is no element of the dimension `{dim}`"),
                        ));
                    }
                },
                Subscript::Dimension(d) | Subscript::Wildcard(Some(d)) => {
                    let range = canonical(d);
                    // A `d!` that `VECTOR SELECT` runs over is bound as `d!`, apart from the
                    // element of `d` that the equation defines (which a plain `d` names).
                    let bang = format!("{range}!");
                    let over = match subscript {
                        Subscript::Wildcard(_) => element.iter().rev().find(|(c, _)| *c == bang),
                        _ => None,
                    };
                    let rebound;
                    let element = match over {
                        Some((_, i)) => {
                            rebound = [element.as_slice(), &[(range.clone(), *i)]].concat();
                            &rebound
                        }
                        None => element,
                    };
                    match self.resolve(dim, &range, element) {
                        Some(i) => Position::One(i),
                        None => match self.all_of(dim, &range) {
                            Some(all) => Position::Many(all),
                            None => {
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
                    }
                }
                Subscript::Wildcard(None) => Position::Many((1..=self.elements.get(dim).map_or(0, Vec::len)).collect()),
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
        let fixed = single_positions(expr, var, positions, "only an array function takes the whole array")?;
        Ok(Arrays::indexed(id, &fixed))
    }

    /// The references of the elements of `var` along its last dimension, the other subscripts
    /// in the context `element`, and the 1-based place along it that the context names
    /// (`None` where the context names none): the vector a vector function reads.
    pub(crate) fn vector(
        &self,
        expr: &Expr,
        id: &str,
        var: &str,
        subscripts: &[Subscript],
        element: &Element,
    ) -> Result<(Vec<String>, Option<usize>), Diagnostic> {
        let mut positions = self.positions(expr, var, subscripts, element)?;
        let Some((last, place)) = positions.pop() else {
            return Err(mismatch(expr, format!("`{var}` is no array")));
        };
        let fixed = single_positions(
            expr,
            var,
            positions,
            "a vector function runs over its last dimension only",
        )?;
        let n = self.elements.get(&last).map_or(0, Vec::len);
        let references = (1..=n)
            .map(|k| {
                let mut e = fixed.clone();
                e.push((last.clone(), k));
                Arrays::indexed(id, &e)
            })
            .collect();
        let place = match place {
            Position::One(i) => Some(i),
            Position::Many(_) => None,
        };
        Ok((references, place))
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
                Position::One(i) => vec![i],
                Position::Many(all) => all,
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
