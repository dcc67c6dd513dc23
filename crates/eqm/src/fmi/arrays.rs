//! The array variables of an FMI 3 FMU: the scalars of [`variables()`](super::variables) that
//! are the elements of one array of the model, exposed as one FMI 3 variable with a
//! `<Dimension>` per dimension, read and written with all its values at once.
//!
//! Input: the FMI variables of a model, in value-reference order. Output: the
//! [`FmiArray`]s, each named by the array's name (`x`, `A`, `der(x)` for the derivatives of a
//! state array) with the value reference of its first element and the value references of
//! every element in FMI's order (row-major: the last subscript runs fastest). An array is
//! formed only when its elements make a whole rectangle of subscripts from 1 and agree on
//! every attribute FMI 3 gives an array once (type, causality, variability, initial, unit,
//! declared type, start given or not, state or not; a derivative array's elements are the
//! derivatives of one state array's, in its order); any other array stays scalars, named
//! element by element as in FMI 2. Only the last part of a name may be subscripted (`b.x[2]`
//! is an element of `b.x`, `b[1].x` is a scalar). The pass is linear in the number of
//! variables. FMI 2 has no arrays; this module does not write XML and sizes are never
//! structural parameters (they are fixed when the model is compiled).

use super::{FmiSource, FmiVariable};
use std::collections::HashMap;

/// One FMI 3 array variable; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmiArray {
    pub name: String,
    /// The value reference of its first element, which FMI 3 names the array by.
    pub value_reference: u32,
    pub dimensions: Vec<usize>,
    /// The value references of its elements, row-major.
    pub elements: Vec<u32>,
}

/// The array an element name belongs to and its subscripts: `x[2]` is `("x", [2])`,
/// `der(A[1,2])` is `("der(A)", [1, 2])`; `None` for a name that is no element of an array
/// FMI 3 can expose.
fn element_of(name: &str) -> Option<(String, Vec<usize>)> {
    if name.starts_with('$') {
        return None;
    }
    let (inner, derivative) = match name.strip_prefix("der(").and_then(|n| n.strip_suffix(')')) {
        Some(inner) => (inner, true),
        None => (name, false),
    };
    let inner = inner.strip_suffix(']')?;
    let open = inner.find('[')?;
    let (base, subscripts) = (&inner[..open], &inner[open + 1..]);
    // Only the last part of the name is subscripted, with positive integers.
    if base.is_empty() || base.contains(['[', ']', '(', ')']) {
        return None;
    }
    let subscripts: Vec<usize> = subscripts
        .split(',')
        .map(|s| s.trim().parse::<usize>().ok().filter(|&i| i >= 1))
        .collect::<Option<_>>()?;
    let base = match derivative {
        true => format!("der({base})"),
        false => base.to_string(),
    };
    Some((base, subscripts))
}

/// The FMI 3 arrays of `variables` (in value-reference order, value reference `k` at index
/// `k`), sorted by value reference; see the module documentation.
pub fn arrays(variables: &[FmiVariable]) -> Vec<FmiArray> {
    let mut groups: HashMap<String, Vec<(Vec<usize>, u32)>> = HashMap::new();
    for v in variables {
        if let (FmiSource::Variable { .. } | FmiSource::Derivative { .. }, Some((base, subscripts))) =
            (v.source, element_of(&v.name))
        {
            groups.entry(base).or_default().push((subscripts, v.value_reference));
        }
    }
    let mut arrays: Vec<FmiArray> = groups
        .into_iter()
        .filter_map(|(name, elements)| rectangle(name, elements))
        .filter(|a| agree(variables, a))
        .collect();
    arrays.sort_unstable_by_key(|a| a.value_reference);
    // A derivative array stands only beside the state array its elements derive, in order.
    let firsts: HashMap<u32, usize> = arrays.iter().enumerate().map(|(k, a)| (a.value_reference, k)).collect();
    let keep: Vec<bool> = arrays
        .iter()
        .map(|a| match variables[a.elements[0] as usize].derivative_of {
            None => true,
            Some(first) => firsts.get(&first).is_some_and(|&k| {
                let of = &arrays[k];
                of.dimensions == a.dimensions
                    && a.elements
                        .iter()
                        .zip(&of.elements)
                        .all(|(&d, &x)| variables[d as usize].derivative_of == Some(x))
            }),
        })
        .collect();
    let mut k = 0;
    arrays.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    arrays
}

/// The array `name` of `elements` (subscripts and value references) when they fill a whole
/// rectangle from 1, each subscript once; its elements row-major.
fn rectangle(name: String, elements: Vec<(Vec<usize>, u32)>) -> Option<FmiArray> {
    let rank = elements[0].0.len();
    if elements.iter().any(|(s, _)| s.len() != rank) {
        return None;
    }
    let dimensions: Vec<usize> = (0..rank)
        .map(|d| elements.iter().map(|(s, _)| s[d]).max().unwrap_or(0))
        .collect();
    let size = dimensions.iter().try_fold(1usize, |n, &d| n.checked_mul(d))?;
    if size != elements.len() {
        return None;
    }
    let mut ordered: Vec<Option<u32>> = vec![None; size];
    for (subscripts, reference) in elements {
        let at = subscripts
            .iter()
            .zip(&dimensions)
            .fold(0, |at, (&i, &n)| at * n + (i - 1));
        if ordered[at].replace(reference).is_some() {
            return None;
        }
    }
    let elements: Vec<u32> = ordered.into_iter().collect::<Option<_>>()?;
    Some(FmiArray {
        name,
        value_reference: elements[0],
        dimensions,
        elements,
    })
}

/// Whether the elements of `array` agree on every attribute FMI 3 gives an array once.
fn agree(variables: &[FmiVariable], array: &FmiArray) -> bool {
    let first = &variables[array.elements[0] as usize];
    array.elements.iter().all(|&r| {
        let v = &variables[r as usize];
        v.ty == first.ty
            && v.causality == first.causality
            && v.variability == first.variability
            && v.initial == first.initial
            && v.unit == first.unit
            && v.enumeration.as_ref().map(|e| &e.name) == first.enumeration.as_ref().map(|e| &e.name)
            && v.start.is_some() == first.start.is_some()
            && v.is_state == first.is_state
            && v.derivative_of.is_some() == first.derivative_of.is_some()
    })
}

/// Per value reference of `variables`, the value reference FMI 3 names it by: its array's
/// for an element of one of `arrays`, its own otherwise.
pub fn owners(variables: &[FmiVariable], arrays: &[FmiArray]) -> Vec<u32> {
    let mut owner: Vec<u32> = (0..variables.len() as u32).collect();
    for a in arrays {
        for &e in &a.elements {
            owner[e as usize] = a.value_reference;
        }
    }
    owner
}
