//! The variables, macros and dimensions of a Vensim file assembled from its entries.
//!
//! Input: the file's [`Layout`]. Output: the parts of an [`SdFile`](crate::ir::SdFile): the
//! simulation specs, dimensions, the main model and the macros, with diagnostics. Every entry
//! is read in two passes: the first reads left-hand sides (what is defined, with which
//! subscripts), the second reads right-hand sides against the names the first found. This
//! module does not evaluate equations beyond the control variables ([`super::specs`]).

use super::dims::{self, RangeDef};
use super::entry::{self, Head, Lhs, Named};
use super::lexer::{self, Tok, Token};
use super::parser::{Parser, Scope};
use super::sections::{Entry, EntryKind, Layout};
use crate::data::DataFiles;
use crate::ir::{Dimension, Macro, SdModel, SimSpecs, Variable};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The parts of a file the reader builds.
pub type Parts = (SimSpecs, Vec<Dimension>, Vec<SdModel>, Vec<Macro>, Option<String>);

/// One equation entry after the first pass.
struct Item {
    lhs: Lhs,
    tokens: Vec<Token>,
    /// The token where the right-hand side (or the lookup table) starts.
    rhs: usize,
    is_lookup: bool,
    units: Option<(usize, usize)>,
    comment: Option<(usize, usize)>,
    end: usize,
}

/// A macro's header.
struct MacroDef {
    name: Named,
    parameters: Vec<Named>,
    outputs: Vec<Named>,
    origin: Span,
}

/// The variables of one scope (the main model or a macro) in first-definition order, each
/// with the items that define it.
#[derive(Default)]
struct Group {
    order: Vec<String>,
    items: HashMap<String, Vec<Item>>,
}

impl Group {
    fn push(&mut self, item: Item) {
        let key = canonical(&item.lhs.name.name);
        let list = self.items.entry(key.clone()).or_default();
        if list.is_empty() {
            self.order.push(key);
        }
        list.push(item);
    }
}

/// What the first pass finds: the variables of the main model and of each macro, the range
/// definitions, the file's documentation and the names whose definitions cannot be read.
#[derive(Default)]
struct FirstPass {
    main: Group,
    macros: Vec<(MacroDef, Group)>,
    ranges: Vec<RangeDef>,
    doc: Option<String>,
    unreadable: HashSet<String>,
    /// The data files of the import (a range may be read from one).
    data: Rc<DataFiles>,
}

/// Builds the parts of a file, or `None` where nothing of a model could be read.
pub fn build(
    file: FileId,
    text: &str,
    layout: &Layout,
    data: Rc<DataFiles>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Parts> {
    let FirstPass {
        main,
        macros,
        ranges,
        doc,
        unreadable,
        data,
    } = first_pass(file, text, layout, data, diagnostics);
    let dimensions = dims::dimensions(&ranges, diagnostics);
    let mut scope = base_scope(&dimensions, &macros);
    scope.unreadable = unreadable;
    scope.data = data.clone();
    let main_dims = declare(&main, &scope, &dimensions, diagnostics);
    let declared: HashSet<&String> = main_dims.iter().map(|(k, _)| k).collect();
    let skipped: Vec<String> = main.order.iter().filter(|k| !declared.contains(k)).cloned().collect();
    scope.unreadable.extend(skipped);
    for (key, dims) in &main_dims {
        let is_lookup = main.items[key].iter().all(|i| i.is_lookup);
        if is_lookup {
            scope.lookups.insert(key.clone(), dims.clone());
        } else {
            scope.variables.insert(key.clone(), dims.clone());
        }
    }
    let ctx = Ctx {
        file,
        text,
        positions: layout,
    };
    let variables = read_variables(&ctx, &main, &main_dims, &scope, diagnostics);
    let mut out_macros = Vec::new();
    for (def, group) in &macros {
        // A macro's body sees its parameters and its own variables, the file's graphical
        // functions, ranges and macros, and nothing of the main model.
        let mut macro_scope = base_scope(&dimensions, &macros);
        macro_scope.lookups = scope.lookups.clone();
        macro_scope.unreadable = scope.unreadable.clone();
        macro_scope.in_macro = true;
        macro_scope.data = data.clone();
        for parameter in &def.parameters {
            macro_scope.variables.insert(canonical(&parameter.name), Vec::new());
        }
        let body_dims = declare(group, &macro_scope, &dimensions, diagnostics);
        for (key, dims) in &body_dims {
            macro_scope.variables.insert(key.clone(), dims.clone());
        }
        if !group.items.contains_key(&canonical(&def.name.name)) {
            let message = format!(
                "the macro `{}` defines no variable of its own name, its value",
                def.name.name
            );
            diagnostics.push(Diagnostic::error("E1007", message, def.name.span, "no value defined"));
        }
        let body = read_variables(&ctx, group, &body_dims, &macro_scope, diagnostics);
        out_macros.push(Macro {
            name: def.name.name.clone(),
            parameters: def.parameters.iter().map(|p| p.name.clone()).collect(),
            outputs: def.outputs.iter().map(|p| p.name.clone()).collect(),
            variables: body,
            value: None,
            origin: def.origin,
        });
    }
    let specs = super::specs::specs(file, text, layout, &variables, diagnostics)?;
    let model = SdModel {
        name: String::new(),
        variables,
        doc: None,
    };
    Some((specs, dimensions, vec![model], out_macros, doc))
}

/// Reads the left-hand side of every entry, in file order.
fn first_pass(
    file: FileId,
    text: &str,
    layout: &Layout,
    data: Rc<DataFiles>,
    diagnostics: &mut Vec<Diagnostic>,
) -> FirstPass {
    let mut found = FirstPass {
        data,
        ..FirstPass::default()
    };
    // Inside a macro: `Some(true)` for one whose header reads, `Some(false)` for one whose
    // header does not (its body is left out, the header's diagnostic says why).
    let mut in_macro: Option<bool> = None;
    let mut first_group = true;
    for e in &layout.entries {
        let (start, end) = e.equation;
        match e.kind {
            EntryKind::Group => {
                // The first group, unless it is the control group, holds the model's notes:
                // `****\n.name\n****~ text |`.
                if first_group {
                    first_group = false;
                    let name = text[start..end].trim_matches(|c: char| c == '*' || c.is_whitespace());
                    if !name.eq_ignore_ascii_case(".control") {
                        let notes = e.units.map(|(a, b)| lexer::collapse_space(&text[a..b]));
                        found.doc = notes.filter(|d| !d.is_empty());
                    }
                }
            }
            EntryKind::MacroEnd => {
                if in_macro.take().is_none() {
                    let span = Span::new(file, start, end);
                    diagnostics.push(Diagnostic::error(
                        "E1003",
                        "`:END OF MACRO:` without a `:MACRO:` before it",
                        span,
                        "no macro to end",
                    ));
                }
            }
            EntryKind::MacroStart => {
                if in_macro.is_some() {
                    let span = Span::new(file, start, end);
                    diagnostics.push(Diagnostic::error(
                        "E1003",
                        "a `:MACRO:` inside another macro",
                        span,
                        "the macro before is not ended",
                    ));
                }
                let def = macro_header(file, text, start, end, diagnostics);
                in_macro = Some(def.is_some());
                if let Some(def) = def {
                    found.macros.push((def, Group::default()));
                }
            }
            EntryKind::Equation => {
                let Some(item) = equation_entry(file, text, e, &mut found, diagnostics) else {
                    continue;
                };
                match (in_macro, found.macros.last_mut()) {
                    (None, _) => found.main.push(item),
                    (Some(true), Some((_, group))) => group.push(item),
                    _ => {}
                }
            }
        }
    }
    if in_macro == Some(true)
        && let Some((def, _)) = found.macros.last()
    {
        let message = format!("the macro `{}` has no `:END OF MACRO:`", def.name.name);
        diagnostics.push(Diagnostic::error("E1003", message, def.name.span, "not ended"));
    }
    found
}

/// The left-hand side of one equation entry: a variable's item, or `None` for a range (kept
/// in `found`) and for what cannot be read (reported, its name kept as unreadable).
fn equation_entry(
    file: FileId,
    text: &str,
    e: &Entry,
    found: &mut FirstPass,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Item> {
    let (start, end) = e.equation;
    let tokens = match lexer::tokens(&text[start..end], start) {
        Ok(tokens) => tokens,
        Err(error) => {
            entry::lex_error(diagnostics, file, error);
            return None;
        }
    };
    // The left-hand side needs no names, but a range read from a file needs the data files.
    let empty = Scope {
        data: found.data.clone(),
        ..Scope::default()
    };
    let mut p = Parser::new(&tokens, text, end, file, &empty, diagnostics);
    let Ok(head) = entry::head(&mut p) else {
        // A definition that cannot be read still names its variable: references to it are
        // not reported again.
        if let Some(Tok::Name(name)) = tokens.first().map(|t| &t.tok) {
            found.unreadable.insert(canonical(name));
        }
        return None;
    };
    let (lhs, rhs, is_lookup) = match head {
        Head::Range { name, items, mappings } => {
            found.ranges.push(RangeDef::Elements { name, items, mappings });
            return None;
        }
        Head::Equivalence { name, other } => {
            found.ranges.push(RangeDef::Equivalence { name, other });
            return None;
        }
        Head::RealityCheck { name } => {
            diagnostics.push(Diagnostic::warning(
                "W1001",
                format!(
                    "the reality check `{}` is read but not applied: it takes no part in a run",
                    name.name
                ),
                name.span,
                "reality check left out",
            ));
            return None;
        }
        Head::Equation { lhs, rhs } => (lhs, rhs, false),
        Head::Lookup { lhs, table } => (lhs, table, true),
    };
    // A table read from a file makes a lookup, however the entry writes it (`=` or `(`).
    let is_lookup = is_lookup || entry::reads_file(&tokens, rhs) == Some(super::data::What::Lookups);
    Some(Item {
        lhs,
        tokens,
        rhs,
        is_lookup,
        units: e.units,
        comment: e.comment,
        end,
    })
}

/// What reading right-hand sides needs besides the scope.
struct Ctx<'a> {
    file: FileId,
    text: &'a str,
    positions: &'a Layout,
}

/// The scope every equation shares: dimensions, elements and macros.
fn base_scope(dimensions: &[Dimension], macros: &[(MacroDef, Group)]) -> Scope {
    let mut scope = Scope::default();
    for dim in dimensions {
        scope
            .dimensions
            .insert(canonical(&dim.name), (dim.name.clone(), dim.elements.clone()));
        for element in &dim.elements {
            scope
                .elements
                .entry(canonical(element))
                .or_insert_with(|| element.clone());
        }
    }
    for dim in dimensions {
        let range_key = canonical(&dim.name);
        for element in &dim.elements {
            scope.members.insert((range_key.clone(), canonical(element)));
        }
        for mapping in &dim.maps_to {
            let (a, b) = (canonical(&dim.name), canonical(&mapping.to));
            scope.mapped.insert((a.clone(), b.clone()));
            scope.mapped.insert((b, a));
        }
    }
    for dim in dimensions.iter().filter(|d| d.subrange_of.is_none()) {
        for (at, element) in dim.elements.iter().enumerate() {
            scope.element_numbers.entry(canonical(element)).or_insert(at + 1);
        }
    }
    for (def, _) in macros {
        scope.macros.insert(canonical(&def.name.name), def.parameters.len());
    }
    scope
}

/// `:MACRO: name(parameters : outputs)`.
fn macro_header(
    file: FileId,
    text: &str,
    start: usize,
    end: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<MacroDef> {
    let tokens = match lexer::tokens(&text[start..end], start) {
        Ok(tokens) => tokens,
        Err(error) => {
            entry::lex_error(diagnostics, file, error);
            return None;
        }
    };
    let mut names: [Vec<Named>; 2] = [Vec::new(), Vec::new()];
    let mut part = 0;
    let bad = |diagnostics: &mut Vec<Diagnostic>| {
        let span = Span::new(file, start, end);
        diagnostics.push(Diagnostic::error(
            "E1003",
            "a macro header must read `:MACRO: name(parameters)`",
            span,
            "syntax error",
        ));
        None
    };
    let (
        Some(Token {
            tok: Tok::Name(name),
            start: s,
            end: e,
        }),
        Some(Token {
            tok: Tok::Punct("("), ..
        }),
    ) = (tokens.first(), tokens.get(1))
    else {
        return bad(diagnostics);
    };
    let mut closed = false;
    for token in &tokens[2..] {
        match &token.tok {
            Tok::Name(n) => names[part].push(Named {
                name: n.clone(),
                span: Span::new(file, token.start, token.end),
            }),
            Tok::Punct(",") => {}
            Tok::Punct(":") if part == 0 => part = 1,
            Tok::Punct(")") if !closed => closed = true,
            _ => return bad(diagnostics),
        }
    }
    if !closed {
        return bad(diagnostics);
    }
    let [parameters, outputs] = names;
    Some(MacroDef {
        name: Named {
            name: name.clone(),
            span: Span::new(file, *s, *e),
        },
        parameters,
        outputs,
        origin: Span::new(file, start, end),
    })
}

/// The dimensions of each variable of a group, from the subscripts of its left-hand sides.
fn declare(
    group: &Group,
    scope: &Scope,
    dimensions: &[Dimension],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<(String, Vec<String>)> {
    let mut holders: HashMap<String, Vec<usize>> = HashMap::new();
    for (at, dim) in dimensions.iter().enumerate() {
        for element in &dim.elements {
            holders.entry(canonical(element)).or_default().push(at);
        }
    }
    let mut out = Vec::with_capacity(group.order.len());
    'vars: for key in &group.order {
        let items = &group.items[key];
        let rank = items[0].lhs.subscripts.len();
        let mut result = Vec::with_capacity(rank);
        // A variable over a range that could not be read is itself left unread (the range's
        // diagnostic says why).
        if items.iter().any(|i| {
            i.lhs
                .subscripts
                .iter()
                .any(|s| scope.unreadable.contains(&canonical(&s.name)))
        }) {
            continue 'vars;
        }
        for item in items {
            if item.lhs.subscripts.len() != rank {
                let span = item.lhs.name.span;
                diagnostics.push(Diagnostic::error(
                    "E1006",
                    format!(
                        "`{}` is defined with {} subscript(s) here and {rank} elsewhere",
                        item.lhs.name.name,
                        item.lhs.subscripts.len()
                    ),
                    span,
                    "subscripts do not fit",
                ));
                continue 'vars;
            }
        }
        for position in 0..rank {
            match position_dimension(items, position, scope, dimensions, &holders, &result) {
                Ok(dim) => result.push(dim),
                Err(named) => {
                    diagnostics.push(Diagnostic::error(
                        "E1006",
                        format!(
                            "no subscript range holds every subscript `{}` is defined with at this place",
                            items[0].lhs.name.name
                        ),
                        named.span,
                        "subscripts do not fit",
                    ));
                    continue 'vars;
                }
            }
        }
        out.push((key.clone(), result));
    }
    out
}

/// The dimension of a variable at one subscript position: the range every definition names
/// there if they agree, else the first range (no subrange if one fits) holding all elements.
fn position_dimension(
    items: &[Item],
    position: usize,
    scope: &Scope,
    dimensions: &[Dimension],
    holders: &HashMap<String, Vec<usize>>,
    taken: &[String],
) -> Result<String, Named> {
    let first = &items[0].lhs.subscripts[position];
    let first_key = canonical(&first.name);
    if let Some((declared, _)) = scope.dimensions.get(&first_key)
        && items
            .iter()
            .all(|i| canonical(&i.lhs.subscripts[position].name) == first_key)
    {
        return Ok(declared.clone());
    }
    let mut wanted: HashSet<String> = HashSet::new();
    for item in items {
        let named = &item.lhs.subscripts[position];
        let key = canonical(&named.name);
        match scope.dimensions.get(&key) {
            Some((_, elements)) => wanted.extend(elements.iter().map(|e| canonical(e))),
            None if scope.elements.contains_key(&key) => {
                wanted.insert(key);
            }
            None => return Err(named.clone()),
        }
    }
    let Some(probe) = wanted.iter().next() else {
        return Err(first.clone());
    };
    let candidates = holders.get(probe).map_or(&[][..], Vec::as_slice);
    let fits = |&&at: &&usize| {
        let range = canonical(&dimensions[at].name);
        wanted.iter().all(|e| scope.holds(&range, e))
    };
    // A range the variable has at another place is passed over where an equivalent one fits:
    // two places of one range could not be told apart in an apply-to-all equation.
    let full = |at: usize| dimensions[at].subrange_of.is_none();
    let free = |at: usize| !taken.contains(&dimensions[at].name);
    let best = candidates
        .iter()
        .filter(fits)
        .find(|&&at| full(at) && free(at))
        .or_else(|| candidates.iter().filter(fits).find(|&&at| full(at)))
        .or_else(|| candidates.iter().find(fits));
    best.map(|&at| dimensions[at].name.clone()).ok_or_else(|| first.clone())
}

/// Reads the right-hand sides of a group's variables into [`Variable`]s.
fn read_variables(
    ctx: &Ctx,
    group: &Group,
    declared: &[(String, Vec<String>)],
    scope: &Scope,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Variable> {
    let mut out = Vec::with_capacity(declared.len());
    for (key, dims) in declared {
        let items = &group.items[key];
        if let Some(variable) = super::define::variable(ctx.file, ctx.text, items_view(items), dims, scope, diagnostics)
        {
            let mut variable = variable;
            variable.position = ctx
                .positions
                .positions
                .get(key)
                .map(|&(x, y)| crate::ir::Position { x, y });
            out.push(variable);
        }
    }
    out
}

/// The items of a variable as the definer reads them.
fn items_view(items: &[Item]) -> Vec<super::define::ItemView<'_>> {
    items
        .iter()
        .map(|i| super::define::ItemView {
            lhs: &i.lhs,
            tokens: &i.tokens,
            rhs: i.rhs,
            is_lookup: i.is_lookup,
            units: i.units,
            comment: i.comment,
            end: i.end,
        })
        .collect()
}
