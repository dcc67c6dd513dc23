//! Vensim's subscript ranges turned into the representation's dimensions.
//!
//! Input: the range definitions of a file (`dim: a, b, (c1-c9) -> other`, `dim <-> other`) in
//! file order. Output: [`Dimension`]s with their elements expanded (numbered runs written out,
//! a range named among elements replaced by its elements), each range whose elements are a
//! strict part of another's marked as its subrange, mappings resolved to element lists, and
//! an equivalence (`<->`) given the other range's elements and a mapping onto it. A range may
//! name ranges defined after it: each range is resolved after the ranges it names.

use super::entry::{Named, RangeItem};
use crate::ir::{Dimension, DimensionMapping};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use std::collections::{HashMap, HashSet};

/// A range definition as the file gives it.
pub enum RangeDef {
    Elements {
        name: Named,
        items: Vec<RangeItem>,
        mappings: Vec<(Named, Vec<Named>)>,
    },
    Equivalence {
        name: Named,
        other: Named,
    },
}

/// The largest numbered run the reader writes out.
const MAX_RUN: u64 = 1_000_000;

/// Builds the dimensions of a file.
pub fn dimensions(defs: &[RangeDef], diagnostics: &mut Vec<Diagnostic>) -> Vec<Dimension> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut dims: Vec<Dimension> = Vec::with_capacity(defs.len());
    for def in defs {
        let (name, span) = match def {
            RangeDef::Elements { name, .. } | RangeDef::Equivalence { name, .. } => (&name.name, name.span),
        };
        let key = canonical(name);
        if index.contains_key(&key) {
            diagnostics.push(Diagnostic::error(
                "E1007",
                format!("the subscript range `{name}` is defined twice"),
                span,
                "defined again here",
            ));
            continue;
        }
        index.insert(key, dims.len());
        dims.push(Dimension {
            name: name.clone(),
            elements: Vec::new(),
            subrange_of: None,
            maps_to: Vec::new(),
            origin: span,
        });
    }
    let mut def_of = vec![usize::MAX; dims.len()];
    for (d, def) in defs.iter().enumerate() {
        let name = match def {
            RangeDef::Elements { name, .. } | RangeDef::Equivalence { name, .. } => name,
        };
        if let Some(&at) = index.get(&canonical(&name.name))
            && dims[at].origin == name.span
        {
            def_of[at] = d;
        }
    }
    resolve_in_order(defs, &def_of, &index, &mut dims, diagnostics);
    for def in defs {
        match def {
            RangeDef::Elements { name, mappings, .. } => {
                let Some(&at) = index.get(&canonical(&name.name)) else {
                    continue;
                };
                for (to, listed) in mappings {
                    if let Some(mapping) = mapping(&dims, at, &index, to, listed, diagnostics) {
                        dims[at].maps_to.push(mapping);
                    }
                }
            }
            RangeDef::Equivalence { name, other } => {
                let Some(&at) = index.get(&canonical(&name.name)) else {
                    continue;
                };
                if let Some(&o) = index.get(&canonical(&other.name)) {
                    let mapping = DimensionMapping {
                        to: dims[o].name.clone(),
                        elements: dims[o].elements.clone(),
                    };
                    dims[at].maps_to.push(mapping);
                }
            }
        }
    }
    mark_subranges(&mut dims);
    dims
}

fn unknown_range(name: &Named, diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.push(Diagnostic::error(
        "E1004",
        format!("unknown subscript range `{}`", name.name),
        name.span,
        "no subscript range of this name",
    ));
}

/// The ranges a definition names (as elements, or as the other side of `<->`).
fn dependencies(def: &RangeDef, index: &HashMap<String, usize>) -> Vec<usize> {
    match def {
        RangeDef::Elements { items, .. } => items
            .iter()
            .filter_map(|item| match item {
                RangeItem::Name(named) => index.get(&canonical(&named.name)).copied(),
                RangeItem::Run(..) => None,
            })
            .collect(),
        RangeDef::Equivalence { other, .. } => index.get(&canonical(&other.name)).copied().into_iter().collect(),
    }
}

/// Gives every range its elements, each after the ranges it names (a depth-first walk with
/// an explicit stack); ranges that name each other in a circle are a diagnostic.
fn resolve_in_order(
    defs: &[RangeDef],
    def_of: &[usize],
    index: &HashMap<String, usize>,
    dims: &mut [Dimension],
    diagnostics: &mut Vec<Diagnostic>,
) {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let mut state = vec![State::New; dims.len()];
    // `done[r]`: the range `r` has its elements (what `state` says, as `expand_items` reads it).
    let mut done = vec![false; dims.len()];
    for root in 0..dims.len() {
        if state[root] != State::New {
            continue;
        }
        state[root] = State::Open;
        let mut stack = vec![(root, dependencies(&defs[def_of[root]], index), 0)];
        while let Some((at, deps, next)) = stack.last_mut() {
            if let Some(&dep) = deps.get(*next) {
                *next += 1;
                match state[dep] {
                    State::New => {
                        state[dep] = State::Open;
                        let more = dependencies(&defs[def_of[dep]], index);
                        stack.push((dep, more, 0));
                    }
                    State::Open => {
                        let span = dims[*at].origin;
                        let message = format!(
                            "the subscript ranges `{}` and `{}` are defined through each other",
                            dims[*at].name, dims[dep].name
                        );
                        diagnostics.push(Diagnostic::error("E1003", message, span, "defined in a circle"));
                    }
                    State::Done => {}
                }
                continue;
            }
            let at = *at;
            stack.pop();
            let elements = match &defs[def_of[at]] {
                RangeDef::Elements { items, .. } => expand_items(items, index, dims, &done, diagnostics),
                RangeDef::Equivalence { other, .. } => match index.get(&canonical(&other.name)) {
                    Some(&o) if state[o] == State::Done => dims[o].elements.clone(),
                    Some(_) => Vec::new(),
                    None => {
                        unknown_range(other, diagnostics);
                        Vec::new()
                    }
                },
            };
            dims[at].elements = elements;
            state[at] = State::Done;
            done[at] = true;
        }
    }
}

/// The elements a range lists, with the ranges it names (all resolved before) written out.
fn expand_items(
    items: &[RangeItem],
    index: &HashMap<String, usize>,
    dims: &[Dimension],
    resolved: &[bool],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        match item {
            RangeItem::Name(named) => match index.get(&canonical(&named.name)) {
                Some(&at) if resolved[at] => out.extend(dims[at].elements.iter().cloned()),
                Some(_) => {}
                None => out.push(named.name.clone()),
            },
            RangeItem::Run(first, last) => match numbered_run(first, last) {
                Ok(run) => out.extend(run),
                Err(message) => {
                    diagnostics.push(Diagnostic::error(
                        "E1003",
                        message,
                        first.span.to(last.span),
                        "cannot be written out",
                    ));
                }
            },
        }
    }
    out
}

/// The elements of `(a1-a5)`: a common prefix and a run of numbers (zero-padded as the first
/// is).
fn numbered_run(first: &Named, last: &Named) -> Result<Vec<String>, String> {
    let split = |s: &str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        (s[..s.len() - digits].to_string(), s[s.len() - digits..].to_string())
    };
    let (prefix, from) = split(&first.name);
    let (prefix_last, to) = split(&last.name);
    let bad = || {
        format!(
            "`({}-{})` is no numbered run of subscript elements",
            first.name, last.name
        )
    };
    if prefix != prefix_last || from.is_empty() || to.is_empty() {
        return Err(bad());
    }
    let (Ok(a), Ok(b)) = (from.parse::<u64>(), to.parse::<u64>()) else {
        return Err(bad());
    };
    if b < a || b - a >= MAX_RUN {
        return Err(bad());
    }
    let width = if from.starts_with('0') && from.len() > 1 {
        from.len()
    } else {
        0
    };
    Ok((a..=b).map(|n| format!("{prefix}{n:0width$}")).collect())
}

fn mapping(
    dims: &[Dimension],
    at: usize,
    index: &HashMap<String, usize>,
    to: &Named,
    listed: &[Named],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<DimensionMapping> {
    let Some(&target) = index.get(&canonical(&to.name)) else {
        unknown_range(to, diagnostics);
        return None;
    };
    let elements: Vec<String> = if listed.is_empty() {
        dims[target].elements.clone()
    } else {
        let mut out = Vec::new();
        for named in listed {
            match index.get(&canonical(&named.name)) {
                Some(&sub) => out.extend(dims[sub].elements.iter().cloned()),
                None => out.push(named.name.clone()),
            }
        }
        out
    };
    if elements.len() != dims[at].elements.len() {
        let span: Span = to.span;
        diagnostics.push(Diagnostic::error(
            "E1006",
            format!(
                "`{}` has {} elements but maps onto {} elements of `{}`",
                dims[at].name,
                dims[at].elements.len(),
                elements.len(),
                to.name
            ),
            span,
            "the mapping does not fit",
        ));
        return None;
    }
    Some(DimensionMapping {
        to: dims[target].name.clone(),
        elements,
    })
}

/// Marks each range whose elements are a strict part of another range's as a subrange of
/// the largest range holding them all (the first in file order among equally large ones).
fn mark_subranges(dims: &mut [Dimension]) {
    let mut holders: HashMap<String, Vec<usize>> = HashMap::new();
    for (at, dim) in dims.iter().enumerate() {
        for element in &dim.elements {
            let list = holders.entry(canonical(element)).or_default();
            if list.last() != Some(&at) {
                list.push(at);
            }
        }
    }
    let sets: Vec<HashSet<String>> = dims
        .iter()
        .map(|d| d.elements.iter().map(|e| canonical(e)).collect())
        .collect();
    let mut parents = vec![None; dims.len()];
    for (at, dim) in dims.iter().enumerate() {
        let Some(first) = dim.elements.first() else { continue };
        let candidates = holders.get(&canonical(first)).map_or(&[][..], Vec::as_slice);
        parents[at] = candidates
            .iter()
            .copied()
            .filter(|&c| c != at && sets[c].len() > sets[at].len() && sets[at].is_subset(&sets[c]))
            .max_by_key(|&c| (sets[c].len(), std::cmp::Reverse(c)));
    }
    for (at, parent) in parents.into_iter().enumerate() {
        dims[at].subrange_of = parent.map(|p| dims[p].name.clone());
    }
}
