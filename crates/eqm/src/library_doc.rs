//! The reference of the standard library, generated from the library itself.
//!
//! Input: the standard library as `eqm` reads it (the embedded `stdlib/*.eqm` files, or the
//! replacements of them a front end read), parsed and entered into the same class table that flattening uses.
//! Output: [`library_classes`], one [`LibraryClass`] per class of every package (and one per
//! constant a package declares), with its kind, its connectors, its parameters and its
//! description string, each connector's and parameter's type found by the real class lookup
//! (imports, enclosing scopes and inheritance, as flattening finds it); [`section_table`], the
//! Markdown table of the classes below one package; and [`update_generated_blocks`], which
//! rewrites the generated blocks of a document (`docs/library.md`) so that its tables cannot
//! drift from the library. [`session_classes`] gives the same rows for classes of any library a
//! session reads, so that the embedded library can be compared with the one it stands in for.
//!
//! Deliberately not done here: the classes are not flattened (a class's interface is read from
//! its declarations, and a modifier of an `extends` clause is applied only where it binds a
//! parameter by name), nested classes of models and blocks are parts of their class rather than
//! rows of their own, and nothing is read from or written to files: the caller passes the
//! document's text and writes the result.

use eqm_diag::Diagnostic;
use eqm_diag::source::SourceMap;
use eqm_flatten::Sources;
use eqm_flatten::resolve::{ClassId, ClassTable, TypeRef};
use eqm_syntax::ast;
use eqm_syntax::pretty::print_expr;

/// The line that opens the generated block of the package `P`: `<!-- generated: P -->`.
pub const BLOCK_START: &str = "<!-- generated: ";
/// The line that closes a generated block.
pub const BLOCK_END: &str = "<!-- end generated -->";

/// One row of the reference: a class of a package, or a constant a package declares.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryClass {
    /// The full dotted name (`Modelica.Blocks.Math.Gain`).
    pub full_name: String,
    /// The kind as written (`model`, `block`, `connector`, ...), `enumeration` for an
    /// enumeration type, or, for a component a package declares, its variability (`constant`,
    /// `parameter`, `variable`).
    pub kind: &'static str,
    pub partial: bool,
    /// The description string; `None` when the class has none.
    pub description: Option<String>,
    /// The public components whose class is a connector, and the public `input` and `output`
    /// components (a function's arguments and results, a block's bare signals), in declaration
    /// order with the inherited ones first. For a connector: its own variables.
    pub connectors: Vec<Port>,
    /// The public parameters, inherited ones first, with the defaults the class gives them.
    pub parameters: Vec<Parameter>,
    /// What a short class, an enumeration or a constant is: the attributes of a type
    /// (`unit = "N"`), the literals of an enumeration, the value of a constant.
    pub definition: Option<String>,
    /// The predefined type (`Real`, `Integer`, `Boolean`, `String`) that a short class ends in
    /// through its chain of short definitions (`type Position = Length`), or that the type of a
    /// constant is.
    pub scalar: Option<String>,
}

/// A connector or signal of a class.
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub name: String,
    /// The array dimensions as written (`nin`), empty for a scalar.
    pub dims: Vec<String>,
    pub causality: ast::Causality,
    /// `flow` for the flow variable of a connector.
    pub flow: bool,
    /// The full name of the connector class, `None` for a predefined type.
    pub class: Option<String>,
    /// The predefined type the component is, or the connector class is a short form of
    /// (`RealInput = input Real`): `Real`, `Integer`, `Boolean`; `None` for a connector with
    /// variables of its own, or an enumeration.
    pub scalar: Option<String>,
    /// Whether the connector class has a `flow` variable (a physical connector).
    pub physical: bool,
    /// The unit declared for it or for its type.
    pub unit: Option<String>,
    /// The condition of a conditional connector (`support if useSupport`), as written.
    pub condition: Option<String>,
}

/// A parameter of a class.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    pub name: String,
    pub dims: Vec<String>,
    /// The default value as written, or as an `extends` modifier of the class rebinds it.
    pub default: Option<String>,
    /// The `start` attribute as written (`R(start = 1)`): the value a parameter without a
    /// binding takes, with a warning.
    pub start: Option<String>,
    pub unit: Option<String>,
    /// The predefined type the parameter's type ends in (`Real`, `Integer`, `Boolean`,
    /// `String`); `None` for an enumeration, a record or a function.
    pub scalar: Option<String>,
    pub description: Option<String>,
}

/// Every class of the standard library's packages, in the order of the source files, and the
/// diagnostics of parsing them (empty when the library is sound); the files named in
/// `replacements` (each `(file name, text)`, see [`crate::Session::with_stdlib_replaced`]) read
/// from their texts there.
pub fn library_classes(replacements: &[(String, String)]) -> (Vec<LibraryClass>, Vec<Diagnostic>) {
    let mut sources = Sources::new();
    sources.stdlib_replacements = replacements.to_vec();
    sources.add_embedded_stdlib();
    let library: Vec<&ast::StoredDefinition> = sources.library.iter().map(|(_, f)| f).collect();
    let table = ClassTable::build(&library, &[]);
    let cx = Cx {
        table: &table,
        map: &sources.map,
    };
    let mut classes = Vec::new();
    // Top-level packages in file order (a package that continues in a later file is visited
    // once, with the members that file adds).
    let mut seen_roots = std::collections::BTreeSet::new();
    for file in &library {
        if matches!(file.within, Some(Some(_))) {
            continue;
        }
        for class in &file.classes {
            if let Some(&id) = table.roots.get(class.name.name.as_str())
                && seen_roots.insert(id)
            {
                visit_package_member(&cx, id, &mut classes);
            }
        }
    }
    let mut diagnostics = std::mem::take(&mut sources.diagnostics);
    diagnostics.extend(table.diagnostics.iter().cloned());
    (classes, diagnostics)
}

/// The rows of the classes `names` (full dotted names) as `session` finds them: in its library
/// directories (an installed Modelica Standard Library, read as the lookups reach its classes)
/// as well as in the embedded library; `None` for a name that no class has.
pub fn session_classes(session: &mut crate::Session, names: &[&str]) -> Vec<Option<LibraryClass>> {
    session.sources_mut().with_class_table(|table, map| {
        let cx = Cx { table, map };
        names
            .iter()
            .map(|n| table.find(n).map(|id| describe(&cx, id)))
            .collect()
    })
}

/// What the walk reads: the class table, and the source texts, whose expressions are shown as
/// written (`1e8`, not the `100000000.0` a printer would make of it).
struct Cx<'t, 'a> {
    table: &'t ClassTable<'a>,
    map: &'t SourceMap,
}

/// The text of `e` as written, with each run of white space (a line break within a long
/// expression) made one space.
fn expr_text(cx: &Cx<'_, '_>, e: &ast::Expr) -> String {
    let file = cx.map.get(e.span.file);
    match file.text.get(e.span.start as usize..e.span.end as usize) {
        Some(text) if !text.is_empty() => text.split_whitespace().collect::<Vec<_>>().join(" "),
        _ => print_expr(e),
    }
}

/// Adds the row of `id` (unless it is a package) and, for a package, the rows of its members.
fn visit_package_member(cx: &Cx<'_, '_>, id: ClassId, out: &mut Vec<LibraryClass>) {
    let table = cx.table;
    let entry = table.get(id);
    if !entry.def.kind.is_package() {
        out.push(describe(cx, id));
        return;
    }
    // A package that extends another one (`Modelica.SIunits`) gets a row of its own: its
    // members are those of its base, listed there.
    let bases: Vec<String> = entry
        .extends()
        .map(|x| eqm_syntax::pretty::name_text(&x.base))
        .collect();
    if !bases.is_empty() {
        let mut row = describe(cx, id);
        row.connectors.clear();
        row.parameters.clear();
        row.definition = Some(format!("`extends {}`", bases.join(", ")));
        out.push(row);
    }
    // The package's own declarations in source order, then the members that later files add
    // with `within` (they are only in the nested map).
    let mut visited = std::collections::BTreeSet::new();
    for (element, visibility) in entry.elements() {
        match element {
            ast::Element::Class(inner) => {
                if let Some(&inner_id) = entry.nested.get(inner.name.name.as_str())
                    && visited.insert(inner_id)
                {
                    visit_package_member(cx, inner_id, out);
                }
            }
            ast::Element::Component(clause) if visibility == ast::Visibility::Public => {
                for decl in &clause.components {
                    out.push(package_constant(cx, id, clause, decl));
                }
            }
            _ => {}
        }
    }
    let mut added: Vec<ClassId> = entry
        .nested
        .values()
        .copied()
        .filter(|c| !visited.contains(c))
        .collect();
    added.sort();
    for inner_id in added {
        visit_package_member(cx, inner_id, out);
    }
}

/// The row of a constant (or any component) that a package declares.
fn package_constant(
    cx: &Cx<'_, '_>,
    package: ClassId,
    clause: &ast::ComponentClause,
    decl: &ast::ComponentDecl,
) -> LibraryClass {
    let table = cx.table;
    let full_name = format!("{}.{}", table.get(package).full_name, decl.name.name);
    let resolved = table.lookup(package, &clause.type_name).ok();
    let unit = component_unit(table, decl, resolved);
    // The row shows the value where the other rows show parameters: `= 3.14` (unit).
    let mut definition = match decl.modification.as_ref().and_then(|m| m.binding.as_ref()) {
        Some(value) => format!("`= {}`", expr_text(cx, value)),
        None => String::new(),
    };
    if let Some(unit) = unit {
        definition.push_str(&format!(" ({unit})"));
    }
    LibraryClass {
        full_name,
        kind: match clause.prefixes.variability {
            ast::Variability::Constant => "constant",
            ast::Variability::Parameter => "parameter",
            _ => "variable",
        },
        partial: false,
        description: decl.description.as_ref().map(|d| d.text.clone()),
        connectors: Vec::new(),
        parameters: Vec::new(),
        definition: Some(definition),
        scalar: resolved.and_then(|t| scalar_of(table, t).0),
    }
}

/// The row of the class `id`.
fn describe(cx: &Cx<'_, '_>, id: ClassId) -> LibraryClass {
    let table = cx.table;
    let entry = table.get(id);
    let def = entry.def;
    let (description, definition) = match &def.body {
        ast::ClassBody::Long { description, .. } => (description, None),
        ast::ClassBody::Enumeration {
            literals, description, ..
        } => {
            let names: Vec<String> = literals.iter().map(|l| format!("`{}`", l.name.name)).collect();
            (description, Some(names.join(", ")))
        }
        ast::ClassBody::Short {
            prefixes,
            base,
            dims,
            modification,
            description,
            ..
        } => {
            let mut text = causality_prefix(prefixes.causality).to_string();
            text.push_str(&eqm_syntax::pretty::name_text(base));
            if !dims.is_empty() {
                text.push_str(&format!("[{}]", dims_text(cx, dims).join(", ")));
            }
            if let Some(m) = modification {
                text.push_str(&class_modification_text(cx, m));
            }
            (description, Some(text))
        }
    };
    let mut class = LibraryClass {
        full_name: entry.full_name.clone(),
        kind: if def.kind == ast::ClassKind::Type && entry.enumeration().is_some() {
            "enumeration"
        } else {
            def.kind.keyword()
        },
        partial: def.partial,
        description: description.as_ref().map(|d| d.text.clone()),
        connectors: Vec::new(),
        parameters: Vec::new(),
        definition,
        scalar: scalar_of(table, TypeRef::Class(id)).0,
    };
    let mut overrides = Vec::new();
    let mut path = Vec::new();
    collect_interface(cx, id, &mut overrides, &mut path, &mut class);
    class
}

/// Adds the public connectors, signals and parameters of `id` and of the classes it extends to
/// `class`. `overrides` are the parameter bindings of the `extends` modifiers met on the way
/// down, innermost last (the outermost one wins); `path` holds the classes being visited, so
/// that an `extends` cycle (an error flattening reports) ends the walk.
fn collect_interface(
    cx: &Cx<'_, '_>,
    id: ClassId,
    overrides: &mut Vec<(String, String)>,
    path: &mut Vec<ClassId>,
    class: &mut LibraryClass,
) {
    let table = cx.table;
    if path.contains(&id) {
        return;
    }
    path.push(id);
    let entry = table.get(id);
    let is_connector = entry.def.kind.is_connector();
    for (element, visibility) in entry.elements() {
        match element {
            ast::Element::Extends(x) => {
                if let Ok(TypeRef::Class(base)) = table.extends_base(id, x) {
                    let before = overrides.len();
                    if let Some(m) = &x.modification {
                        for arg in &m.arguments {
                            if let (Some(binding), [part]) = (
                                arg.modification.as_ref().and_then(|m| m.binding.as_ref()),
                                arg.name.parts.as_slice(),
                            ) {
                                overrides.push((part.name.clone(), expr_text(cx, binding)));
                            }
                        }
                    }
                    collect_interface(cx, base, overrides, path, class);
                    overrides.truncate(before);
                }
            }
            ast::Element::Component(clause) if visibility == ast::Visibility::Public => {
                for decl in &clause.components {
                    add_component(cx, id, clause, decl, is_connector, overrides, class);
                }
            }
            _ => {}
        }
    }
    path.pop();
}

/// Adds one declared component to the connectors or parameters of `class`.
fn add_component(
    cx: &Cx<'_, '_>,
    scope: ClassId,
    clause: &ast::ComponentClause,
    decl: &ast::ComponentDecl,
    in_connector: bool,
    overrides: &[(String, String)],
    class: &mut LibraryClass,
) {
    if clause.prefixes.variability == ast::Variability::Constant {
        return;
    }
    let table = cx.table;
    let name = decl.name.name.clone();
    let mut dims = dims_text(cx, &clause.type_dims);
    dims.extend(dims_text(cx, &decl.dims));
    let resolved = table.lookup(scope, &clause.type_name).ok();
    let unit = component_unit(table, decl, resolved);
    if clause.prefixes.variability == ast::Variability::Parameter {
        let default = overrides
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, value)| value.clone())
            .or_else(|| {
                decl.modification
                    .as_ref()
                    .and_then(|m| m.binding.as_ref())
                    .map(|e| expr_text(cx, e))
            });
        let start = (decl.modification.as_ref())
            .and_then(|m| m.class_modification.as_ref())
            .and_then(|m| attribute(m, "start"))
            .map(|e| expr_text(cx, e));
        class.parameters.push(Parameter {
            name,
            dims,
            default,
            start,
            unit,
            scalar: resolved.and_then(|t| scalar_of(table, t).0),
            description: decl.description.as_ref().map(|d| d.text.clone()),
        });
        return;
    }
    let connector = match resolved {
        Some(TypeRef::Class(c)) if table.get(c).def.kind.is_connector() => Some(c),
        _ => None,
    };
    let mut causality = clause.prefixes.causality;
    if connector.is_none() && causality == ast::Causality::None && !in_connector {
        return;
    }
    let (scalar, short_causality) = match resolved {
        Some(t) => scalar_of(table, t),
        None => (None, ast::Causality::None),
    };
    if causality == ast::Causality::None {
        causality = short_causality;
    }
    class.connectors.push(Port {
        name,
        dims,
        causality,
        flow: clause.prefixes.connection == ast::Connection::Flow,
        class: connector.map(|c| table.get(c).full_name.clone()),
        scalar,
        physical: connector.is_some_and(|c| has_flow(table, c, &mut Vec::new())),
        unit,
        condition: decl.condition.as_ref().map(|e| expr_text(cx, e)),
    });
}

/// The types that `t` passes through on its chain of short class definitions
/// (`type Position = Length`): `t` itself, then what each short class is defined as, up to the
/// first long class or predefined type. A chain names each class at most once, so it is cut at
/// the size of the table, which also ends a cycle.
fn short_chain<'t>(table: &'t ClassTable<'_>, t: TypeRef) -> impl Iterator<Item = TypeRef> + 't {
    std::iter::successors(Some(t), move |t| {
        let TypeRef::Class(c) = *t else {
            return None;
        };
        let entry = table.get(c);
        let ast::ClassBody::Short { base, .. } = &entry.def.body else {
            return None;
        };
        table.lookup(entry.parent?, base).ok()
    })
    .take(table.classes.len())
}

/// The predefined type a type reference ends in through short class definitions, and the
/// causality the short definitions give (`connector RealInput = input Real`).
fn scalar_of(table: &ClassTable<'_>, t: TypeRef) -> (Option<String>, ast::Causality) {
    let mut scalar = None;
    let mut causality = ast::Causality::None;
    for t in short_chain(table, t) {
        match t {
            TypeRef::Builtin(b) => scalar = Some(format!("{b:?}")),
            TypeRef::Class(c) => {
                if let ast::ClassBody::Short { prefixes, .. } = &table.get(c).def.body
                    && causality == ast::Causality::None
                {
                    causality = prefixes.causality;
                }
            }
        }
    }
    (scalar, causality)
}

/// Whether the connector class `id` (or a class it extends or is a short form of) declares a
/// `flow` variable.
fn has_flow(table: &ClassTable<'_>, id: ClassId, path: &mut Vec<ClassId>) -> bool {
    if path.contains(&id) {
        return false;
    }
    path.push(id);
    let entry = table.get(id);
    let scope = entry.parent.unwrap_or(id);
    let found = match &entry.def.body {
        ast::ClassBody::Short { base, .. } => {
            matches!(table.lookup(scope, base), Ok(TypeRef::Class(c)) if has_flow(table, c, path))
        }
        _ => entry.elements().any(|(element, _)| match element {
            ast::Element::Component(clause) => clause.prefixes.connection == ast::Connection::Flow,
            ast::Element::Extends(x) => {
                matches!(table.extends_base(id, x), Ok(TypeRef::Class(c)) if has_flow(table, c, path))
            }
            _ => false,
        }),
    };
    path.pop();
    found
}

/// The unit of a component: the `unit` its declaration's modification gives
/// (`Real x(unit = "m")`), or else the unit of its type `resolved`.
fn component_unit(table: &ClassTable<'_>, decl: &ast::ComponentDecl, resolved: Option<TypeRef>) -> Option<String> {
    decl.modification
        .as_ref()
        .and_then(|m| m.class_modification.as_ref())
        .and_then(unit_of_modification)
        .or_else(|| type_unit(table, resolved?))
}

/// The binding of the attribute `name` in a class modification (`start` in `R(start = 1)`).
fn attribute<'m>(m: &'m ast::ClassModification, name: &str) -> Option<&'m ast::Expr> {
    m.arguments.iter().find_map(|arg| match arg.name.parts.as_slice() {
        [part] if part.name == name => arg.modification.as_ref()?.binding.as_ref(),
        _ => None,
    })
}

/// The `unit` argument of a class modification, when it is a string literal.
fn unit_of_modification(m: &ast::ClassModification) -> Option<String> {
    m.arguments.iter().find_map(|arg| {
        let [part] = arg.name.parts.as_slice() else {
            return None;
        };
        if part.name != "unit" {
            return None;
        }
        match &arg.modification.as_ref()?.binding.as_ref()?.kind {
            ast::ExprKind::String(s) => Some(s.clone()),
            _ => None,
        }
    })
}

/// The unit of the type `t`: the `unit` of the first short definition on its chain that gives
/// one (`type Force = Real(unit = "N")`).
fn type_unit(table: &ClassTable<'_>, t: TypeRef) -> Option<String> {
    short_chain(table, t).find_map(|t| {
        let TypeRef::Class(c) = t else {
            return None;
        };
        match &table.get(c).def.body {
            ast::ClassBody::Short { modification, .. } => modification.as_ref().and_then(unit_of_modification),
            _ => None,
        }
    })
}

/// The dimensions as written.
fn dims_text(cx: &Cx<'_, '_>, dims: &[ast::Subscript]) -> Vec<String> {
    dims.iter()
        .map(|s| match s {
            ast::Subscript::Colon(_) => ":".to_string(),
            ast::Subscript::Expr(e) => expr_text(cx, e),
        })
        .collect()
}

/// A class modification as written (`(unit = "N", min = 0)`), for the row of a type.
fn class_modification_text(cx: &Cx<'_, '_>, m: &ast::ClassModification) -> String {
    let args: Vec<String> = m
        .arguments
        .iter()
        .map(|arg| {
            let mut text = String::new();
            if arg.each {
                text.push_str("each ");
            }
            if arg.is_final {
                text.push_str("final ");
            }
            text.push_str(&eqm_syntax::pretty::name_text(&arg.name));
            if let Some(m) = &arg.modification {
                if let Some(cm) = &m.class_modification {
                    text.push_str(&class_modification_text(cx, cm));
                }
                if let Some(b) = &m.binding {
                    text.push_str(" = ");
                    text.push_str(&expr_text(cx, b));
                }
            }
            text
        })
        .collect();
    format!("({})", args.join(", "))
}

/// The classes whose rows belong to the generated block of `section`: those below it that no
/// longer section of `sections` claims.
fn in_section<'c>(classes: &'c [LibraryClass], section: &str, sections: &[&str]) -> Vec<&'c LibraryClass> {
    classes
        .iter()
        .filter(|c| owning_section(&c.full_name, sections) == Some(section))
        .collect()
}

/// The longest section of `sections` that `full_name` lies below or is (a package that extends
/// another one may have a block of its own).
fn owning_section<'s>(full_name: &str, sections: &[&'s str]) -> Option<&'s str> {
    sections
        .iter()
        .filter(|s| {
            full_name == **s
                || (full_name.len() > s.len() && full_name.starts_with(*s) && full_name.as_bytes()[s.len()] == b'.')
        })
        .max_by_key(|s| s.len())
        .copied()
}

/// The Markdown table of the classes of `section` (a package's full name) among `classes`, for
/// a document whose generated blocks are `sections` (a class below a longer section is left to
/// that one's table). Names are relative to the section.
pub fn section_table(classes: &[LibraryClass], section: &str, sections: &[&str]) -> String {
    let mut out = String::from("| class | kind | connectors | parameters | description |\n");
    out.push_str("| --- | --- | --- | --- | --- |\n");
    for class in in_section(classes, section, sections) {
        // A package row in the block of its own name is named by its last part.
        let name = match class.full_name.get(section.len() + 1..) {
            Some(relative) => relative,
            None => class.full_name.rsplit('.').next().unwrap_or(&class.full_name),
        };
        let kind = if class.partial {
            format!("partial {}", class.kind)
        } else {
            class.kind.to_string()
        };
        let connectors: Vec<String> = class.connectors.iter().map(port_text).collect();
        let mut parameters: Vec<String> = class.parameters.iter().map(parameter_text).collect();
        // What a type, an enumeration or a constant is comes before the parameters.
        if let Some(definition) = &class.definition {
            let text = match class.kind {
                "enumeration" | "constant" | "parameter" | "variable" | "package" => definition.clone(),
                _ => format!("`= {definition}`"),
            };
            parameters.insert(0, text);
        }
        let row = [
            format!("`{name}`"),
            kind,
            connectors.join(", "),
            parameters.join(", "),
            class.description.clone().unwrap_or_default(),
        ];
        out.push_str("| ");
        out.push_str(&row.map(|cell| cell_text(&cell)).join(" | "));
        out.push_str(" |\n");
    }
    out
}

/// The keyword a causality is written with, followed by a space (nothing for none).
fn causality_prefix(causality: ast::Causality) -> &'static str {
    match causality {
        ast::Causality::Input => "input ",
        ast::Causality::Output => "output ",
        ast::Causality::None => "",
    }
}

/// A cell's text with the characters that would end a cell or a line escaped.
fn cell_text(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn port_text(port: &Port) -> String {
    let mut text = causality_prefix(port.causality).to_string();
    if port.flow {
        text.push_str("flow ");
    }
    text.push('`');
    text.push_str(&port.name);
    if !port.dims.is_empty() {
        text.push_str(&format!("[{}]", port.dims.join(", ")));
    }
    text.push('`');
    // A physical connector is named by its class; a signal by its type when it is not Real.
    let detail = match (&port.class, &port.scalar) {
        (Some(class), _) if port.physical => Some(class.rsplit('.').next().unwrap_or(class).to_string()),
        (_, Some(scalar)) if scalar != "Real" => Some(scalar.clone()),
        (None, None) => None,
        (Some(class), None) => Some(class.rsplit('.').next().unwrap_or(class).to_string()),
        _ => None,
    };
    let condition = port.condition.as_ref().map(|c| format!("if {c}"));
    let details: Vec<&str> = [detail.as_deref(), port.unit.as_deref(), condition.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    if !details.is_empty() {
        text.push_str(&format!(" ({})", details.join(", ")));
    }
    text
}

fn parameter_text(p: &Parameter) -> String {
    let mut text = format!("`{}", p.name);
    if !p.dims.is_empty() {
        text.push_str(&format!("[{}]", p.dims.join(", ")));
    }
    if let Some(default) = &p.default {
        text.push_str(&format!(" = {default}"));
    }
    text.push('`');
    if let Some(unit) = &p.unit {
        text.push_str(&format!(" ({unit})"));
    }
    text
}

/// The packages that hold classes directly (each row's enclosing name), in library order, each
/// once: the packages whose tables `eqm library PACKAGE` prints.
pub fn packages(classes: &[LibraryClass]) -> Vec<&str> {
    let mut seen = std::collections::BTreeSet::new();
    classes
        .iter()
        .filter_map(|c| c.full_name.rsplit_once('.').map(|(package, _)| package))
        .filter(|package| seen.insert(*package))
        .collect()
}

/// The Markdown table of every class below `package`, or `None` when the library has no class
/// below it.
pub fn package_table(classes: &[LibraryClass], package: &str) -> Option<String> {
    let prefix = format!("{package}.");
    classes
        .iter()
        .any(|c| c.full_name.starts_with(&prefix))
        .then(|| section_table(classes, package, &[package]))
}

/// The section a line opens, when it is the opening line of a generated block.
fn block_section(line: &str) -> Option<&str> {
    Some(line.trim().strip_prefix(BLOCK_START)?.strip_suffix("-->")?.trim())
}

/// The generated blocks of `document`, by section, in order.
pub fn generated_sections(document: &str) -> Vec<&str> {
    document.lines().filter_map(block_section).collect()
}

/// `document` with the content of every generated block replaced by the table of its section,
/// or the reason it cannot be: a block that is not closed, or names no package of the library.
pub fn update_generated_blocks(document: &str, classes: &[LibraryClass]) -> Result<String, String> {
    let sections = generated_sections(document);
    let mut out = String::with_capacity(document.len());
    let mut lines = document.split_inclusive('\n');
    while let Some(line) = lines.next() {
        out.push_str(line);
        let Some(section) = block_section(line) else {
            continue;
        };
        // The block's own section claims its package's row and every row below it.
        if !classes
            .iter()
            .any(|c| owning_section(&c.full_name, &[section]).is_some())
        {
            return Err(format!(
                "the generated block `{section}` names no package of the library"
            ));
        }
        // Skip the old content up to the closing line.
        let mut closed = false;
        for old in lines.by_ref() {
            if old.trim() == BLOCK_END {
                out.push('\n');
                out.push_str(&section_table(classes, section, &sections));
                out.push('\n');
                out.push_str(old);
                closed = true;
                break;
            }
        }
        if !closed {
            return Err(format!("the generated block `{section}` has no `{BLOCK_END}` line"));
        }
    }
    Ok(out)
}

/// The classes of `classes` that no generated block of `document` lists.
pub fn classes_outside_blocks<'c>(document: &str, classes: &'c [LibraryClass]) -> Vec<&'c str> {
    let sections = generated_sections(document);
    classes
        .iter()
        .filter(|c| owning_section(&c.full_name, &sections).is_none())
        .map(|c| c.full_name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_claims_the_classes_below_it_that_no_longer_section_claims() {
        let sections = ["A", "A.B"];
        assert_eq!(owning_section("A.B.C", &sections), Some("A.B"));
        assert_eq!(owning_section("A.C", &sections), Some("A"));
        assert_eq!(owning_section("AB.C", &sections), None);
        assert_eq!(owning_section("A", &sections), Some("A"));
        assert_eq!(owning_section("B", &sections), None);
    }

    #[test]
    fn a_block_without_its_end_or_with_an_unknown_package_is_refused() {
        let classes = [LibraryClass {
            full_name: "P.C".into(),
            kind: "model",
            partial: false,
            description: Some("a | b".into()),
            connectors: Vec::new(),
            parameters: vec![Parameter {
                name: "k".into(),
                dims: Vec::new(),
                default: Some("1".into()),
                start: None,
                unit: Some("m".into()),
                scalar: Some("Real".into()),
                description: None,
            }],
            definition: None,
            scalar: None,
        }];
        let doc = "intro\n<!-- generated: P -->\nold\n<!-- end generated -->\noutro\n";
        let updated = update_generated_blocks(doc, &classes).unwrap();
        assert_eq!(
            updated,
            "intro\n<!-- generated: P -->\n\n| class | kind | connectors | parameters | description |\n\
             | --- | --- | --- | --- | --- |\n| `C` | model |  | `k = 1` (m) | a \\| b |\n\n\
             <!-- end generated -->\noutro\n"
        );
        assert!(update_generated_blocks("<!-- generated: P -->\n", &classes).is_err());
        assert!(update_generated_blocks("<!-- generated: Q -->\n<!-- end generated -->\n", &classes).is_err());
        assert_eq!(classes_outside_blocks("no blocks", &classes), vec!["P.C"]);
        assert_eq!(packages(&classes), vec!["P"]);
        assert!(package_table(&classes, "P").is_some_and(|t| t.contains("| `C` |")));
        assert!(package_table(&classes, "Q").is_none());
    }
}
