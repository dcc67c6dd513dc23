//! The interfaces of function classes: their inputs, outputs and sections (with those of the
//! functions they extend), and the instance of a function made for a call.
//!
//! Input: a `function` class and what a call passes to it (sizes of inputs declared with `:`,
//! functions passed to functional inputs). Output: the function's id in the flat model (made on
//! first use by `instantiate`), the names of its inputs and outputs and its declarations. It
//! deliberately flattens no body and checks no call.

use crate::flattener::Flattener;
use crate::function_table::Signature;
use crate::function_table::{FunctionalKey, KnownIntegers, KnownStrings};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use eqm_diag::Diagnostic;
use eqm_ir::expr::FuncId;
use eqm_ir::flat::{self};
use eqm_syntax::ast;

/// How many short class definitions [`Flattener::declared_causality`] follows at most.
const MAX_SHORT_CHAIN: usize = 64;

/// An Integer input that sizes variables of its function: its position among the inputs, its
/// name and its default with the class that declares it.
pub(super) type SizeInput<'a> = (usize, &'a str, Option<(&'a ast::Expr, ClassId)>);

impl<'t, 'a> Flattener<'t, 'a> {
    /// The flat function for a `function` class, instantiated on first use. `None` when its
    /// declaration has errors (already reported).
    pub(crate) fn function_for(
        &mut self,
        class: ClassId,
        sizes: &[Vec<usize>],
        functionals: &[FunctionalKey],
        strings: KnownStrings,
        integers: KnownIntegers,
        templates: crate::function_table::StringTemplates,
    ) -> Option<FuncId> {
        let key = (
            class,
            sizes.to_vec(),
            functionals.to_vec(),
            strings.clone(),
            integers.clone(),
            super::string_inputs::template_key(&templates),
        );
        if let Some(known) = self.functions.ids.get(&key) {
            return *known;
        }
        let entry = self.table.get(class);
        let id = FuncId(self.model.functions.len() as u32);
        self.model.functions.push(flat::Function {
            name: entry.full_name.clone(),
            inputs: 0,
            outputs: 0,
            slots: Vec::new(),
            body: Vec::new(),
            span: entry.def.name.span,
        });
        self.functions.signatures.push(Signature::default());
        // Functions the flattener makes itself have no entry, so the table is filled up to `id`.
        self.functions.known_strings.resize(id.0 as usize, Vec::new());
        self.functions.known_strings.push(strings);
        self.functions.known_integers.resize(id.0 as usize, Vec::new());
        self.functions.known_integers.push(integers);
        self.functions.string_templates.resize(id.0 as usize, Vec::new());
        self.functions.string_templates.push(templates);
        // Registered before the body is flattened, so that a recursive call finds it.
        self.functions.ids.insert(key.clone(), Some(id));
        self.functions.entered.push(key.clone());
        // Errors in the body are reported once; callers are still checked against the interface.
        // Until its body is complete, a call of it is not evaluated at compile time.
        self.consts.unfinished.push(id);
        // A function is flattened once for all its callers: the packages it sees as others are
        // its own (a function extending its inherited version), not those of a caller.
        let views = self.function_views(class);
        let callers_views = std::mem::replace(&mut self.caches.package_views, views);
        let instantiated = self.instantiate_function(class, id, sizes, functionals);
        self.caches.package_views = callers_views;
        self.consts.unfinished.retain(|f| *f != id);
        if !instantiated {
            self.functions.ids.insert(key, None);
            return None;
        }
        // A derivative function would take the String as one input, not as its values.
        if key.5.is_empty() {
            self.derivative_annotations(class, id, sizes, functionals, (&key.3, &key.4));
        }
        Some(id)
    }

    /// The names of a function's inputs, in order.
    pub(crate) fn input_names(&self, class: ClassId) -> Vec<&'a str> {
        self.input_declarations(class).into_iter().map(|(n, ..)| n).collect()
    }

    /// The names of a function's outputs, in order.
    pub(crate) fn output_names(&self, class: ClassId) -> Vec<&'a str> {
        self.function_components(class)
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Output)
            .map(|(_, decl, _)| decl.name.name.as_str())
            .collect()
    }

    /// The causality of a function variable declared with `clause` in `part`: its own prefix, or
    /// else the one a short class definition of its type gives (`type InArgument = input Real;`
    /// makes `InArgument u;` an input, MLS 4.5.1). It follows at most `MAX_SHORT_CHAIN`
    /// definitions, so a cycle of short definitions (reported where the type is resolved) ends
    /// here too.
    pub(crate) fn declared_causality(&self, clause: &ast::ComponentClause, part: ClassId) -> ast::Causality {
        let mut causality = clause.prefixes.causality;
        let (mut scope, mut name) = (part, &clause.type_name);
        for _ in 0..MAX_SHORT_CHAIN {
            if causality != ast::Causality::None {
                break;
            }
            let Ok(TypeRef::Class(c)) = self.table.lookup(scope, name) else {
                break;
            };
            let entry = self.table.get(c);
            let ast::ClassBody::Short { prefixes, base, .. } = &entry.def.body else {
                break;
            };
            causality = prefixes.causality;
            (scope, name) = (entry.parent.unwrap_or(c), base);
        }
        causality
    }

    /// The declared components of a function and of the functions it extends, bases first,
    /// each with the class that declares it.
    pub(crate) fn function_components(
        &self,
        class: ClassId,
    ) -> impl Iterator<Item = (&'a ast::ComponentClause, &'a ast::ComponentDecl, ClassId)> + use<'a, '_> {
        let mut parts = Vec::new();
        // A function with errors in its `extends` has no components to speak of; they are
        // reported when it is instantiated.
        let _ = self.function_parts(class, 0, Modifier::default(), &mut parts);
        parts.into_iter().flat_map(|(part, sections, _)| {
            sections
                .iter()
                .flat_map(|s| match s {
                    ast::Section::Elements { elements, .. } => elements.as_slice(),
                    _ => &[],
                })
                .filter_map(|e| match e {
                    ast::Element::Component(clause) => Some(clause),
                    _ => None,
                })
                .flat_map(move |clause| clause.components.iter().map(move |d| (clause, d, part)))
        })
    }

    /// The function type of a functional input declared with `clause` in `part`, if its type is
    /// a function.
    pub(super) fn functional_type(&self, clause: &ast::ComponentClause, part: ClassId) -> Option<ClassId> {
        match self.table.lookup(part, &clause.type_name) {
            Ok(TypeRef::Class(c)) if self.table.get(c).def.kind.is_function() => Some(c),
            _ => None,
        }
    }

    /// The inputs of a function class in order, each with whether its size is declared with
    /// `:` (taken from the argument of each call) and, for a functional input, its function
    /// type.
    pub(crate) fn input_declarations(&self, class: ClassId) -> Vec<(&'a str, bool, Option<ClassId>)> {
        self.function_components(class)
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Input)
            .map(|(clause, decl, part)| {
                let open = clause
                    .type_dims
                    .iter()
                    .chain(&decl.dims)
                    .any(|s| matches!(s, ast::Subscript::Colon(_)));
                (decl.name.name.as_str(), open, self.functional_type(clause, part))
            })
            .collect()
    }

    /// The scalar Integer inputs of a function that its declarations name in their sizes
    /// (`input Integer n; output Real y[n];`), each with its position among the inputs and its
    /// default (the expression and the class that declares it). A function instance is made
    /// for their values.
    pub(super) fn size_inputs(&self, class: ClassId) -> Vec<SizeInput<'a>> {
        let components: Vec<_> = self.function_components(class).collect();
        let mut named = Vec::new();
        for (clause, decl, _) in &components {
            for sub in clause.type_dims.iter().chain(&decl.dims) {
                if let ast::Subscript::Expr(e) = sub {
                    names_read(e, &mut named);
                }
            }
        }
        if named.is_empty() {
            return Vec::new();
        }
        // A size may read a protected variable (`Integer m = n + 1; Real v[m];`): the names its
        // binding reads give sizes too.
        let mut next = 0;
        while next < named.len() {
            let name = named[next];
            next += 1;
            for (clause, decl, part) in &components {
                if self.declared_causality(clause, *part) == ast::Causality::None
                    && decl.name.name == name
                    && let Some(binding) = decl.modification.as_ref().and_then(|m| m.binding.as_ref())
                {
                    let before = named.len();
                    names_read(binding, &mut named);
                    // Each name once, so that bindings that read each other end.
                    let mut k = before;
                    while k < named.len() {
                        if named[..k].contains(&named[k]) {
                            named.swap_remove(k);
                        } else {
                            k += 1;
                        }
                    }
                }
            }
        }
        components
            .iter()
            .filter(|(clause, _, part)| self.declared_causality(clause, *part) == ast::Causality::Input)
            .enumerate()
            .filter(|(_, (clause, decl, part))| {
                clause.type_dims.is_empty()
                    && decl.dims.is_empty()
                    && named.contains(&decl.name.name.as_str())
                    && matches!(
                        self.table.lookup(*part, &clause.type_name),
                        Ok(TypeRef::Builtin(eqm_ir::flat::ScalarType::Integer))
                    )
            })
            .map(|(k, (_, decl, part))| {
                let default = decl.modification.as_ref().and_then(|m| m.binding.as_ref());
                (k, decl.name.name.as_str(), default.map(|d| (d, *part)))
            })
            .collect()
    }

    /// The sections of a function class and of the functions it extends, each with the class
    /// that declares it (its scope) and the modifiers of the `extends` clauses it was reached
    /// through (outermost first), the bases first; or the diagnostic for an `extends` EQM
    /// cannot follow (a base that is not a function, a cycle).
    pub(super) fn function_parts(
        &self,
        class: ClassId,
        depth: usize,
        modifier: Modifier<'a>,
        out: &mut Vec<(ClassId, &'a [ast::Section], Modifier<'a>)>,
    ) -> Result<(), Diagnostic> {
        // A class inherited a second time without modifiers (a function extending a partial
        // interface and an implementation that extends it too) adds nothing: Modelica keeps
        // one of identical inherited elements.
        if modifier.is_empty() && out.iter().any(|(c, _, m)| *c == class && m.is_empty()) {
            return Ok(());
        }
        let def = self.table.get(class).def;
        let ast::ClassBody::Long { sections, .. } = &def.body else {
            return Err(Diagnostic::error(
                "E0217",
                format!(
                    "`{}` is a short function definition, which EQM does not support",
                    def.name.name
                ),
                def.name.span,
                "write the function out with inputs, outputs and an algorithm",
            ));
        };
        for section in sections {
            let ast::Section::Elements { elements, .. } = section else {
                continue;
            };
            for element in elements {
                let ast::Element::Extends(x) = element else { continue };
                if x.inherited
                    && let Some(d) = self.class_extends_error(class, self.table.inherited_class(class, 0), x)
                {
                    return Err(d);
                }
                let base = match self.table.extends_base(class, x) {
                    Ok(TypeRef::Class(b)) if self.table.get(b).def.kind.is_function() => b,
                    _ => {
                        return Err(Diagnostic::error(
                            "E0217",
                            "a function can only extend another function",
                            x.span,
                            "not a function",
                        ));
                    }
                };
                if depth > 64 {
                    return Err(Diagnostic::error(
                        "E0217",
                        "these functions extend each other in a cycle",
                        x.span,
                        "not supported in functions",
                    ));
                }
                // `extends g(a = 2)`: the modifier replaces the bindings of `g`'s elements.
                let scope = Scope { instance: None, class };
                let inner = match &x.modification {
                    Some(m) => modifier
                        .clone()
                        .merge_owned(Modifier::from_class_modification(m, scope)),
                    None => modifier.clone(),
                };
                self.function_parts(base, depth + 1, inner, out)?;
            }
        }
        out.push((class, sections, modifier));
        Ok(())
    }
}

/// Adds to `out` the first names of the references that `e` reads (`n` in `y[n + 1]`,
/// `u` in `size(u, 1)`).
fn names_read<'a>(e: &'a ast::Expr, out: &mut Vec<&'a str>) {
    eqm_syntax::visit::refs_in_expr(e, &mut |c| out.extend(c.parts.first().map(|p| p.name.name.as_str())));
}
