//! The interfaces of function classes: their inputs, outputs and sections (with those of the
//! functions they extend), and the instance of a function made for a call.
//!
//! Input: a `function` class and what a call passes to it (sizes of inputs declared with `:`,
//! functions passed to functional inputs). Output: the function's id in the flat model (made on
//! first use by `instantiate`), the names of its inputs and outputs and its declarations. It
//! deliberately flattens no body and checks no call.

use crate::flattener::Flattener;
use crate::function_table::Signature;
use crate::function_table::{FunctionalKey, KnownStrings};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use eqm_diag::Diagnostic;
use eqm_ir::expr::FuncId;
use eqm_ir::flat::{self};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The flat function for a `function` class, instantiated on first use. `None` when its
    /// declaration has errors (already reported).
    pub(crate) fn function_for(
        &mut self,
        class: ClassId,
        sizes: &[Vec<usize>],
        functionals: &[FunctionalKey],
        strings: KnownStrings,
    ) -> Option<FuncId> {
        let key = (class, sizes.to_vec(), functionals.to_vec(), strings.clone());
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
        // Registered before the body is flattened, so that a recursive call finds it.
        self.functions.ids.insert(key.clone(), Some(id));
        self.functions.entered.push(key.clone());
        // Errors in the body are reported once; callers are still checked against the interface.
        if !self.instantiate_function(class, id, sizes, functionals) {
            self.functions.ids.insert(key, None);
            return None;
        }
        self.derivative_annotations(class, id, sizes, functionals, &key.3);
        Some(id)
    }

    /// The names of a function's inputs, in order.
    pub(crate) fn input_names(&self, class: ClassId) -> Vec<&'a str> {
        self.input_declarations(class).into_iter().map(|(n, ..)| n).collect()
    }

    /// The names of a function's outputs, in order.
    pub(crate) fn output_names(&self, class: ClassId) -> Vec<&'a str> {
        self.function_components(class)
            .filter(|(clause, _, _)| clause.prefixes.causality == ast::Causality::Output)
            .map(|(_, decl, _)| decl.name.name.as_str())
            .collect()
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
            Ok(TypeRef::Class(c)) if self.table.get(c).def.kind == ast::ClassKind::Function => Some(c),
            _ => None,
        }
    }

    /// The inputs of a function class in order, each with whether its size is declared with
    /// `:` (taken from the argument of each call) and, for a functional input, its function
    /// type.
    pub(super) fn input_declarations(&self, class: ClassId) -> Vec<(&'a str, bool, Option<ClassId>)> {
        self.function_components(class)
            .filter(|(clause, _, _)| clause.prefixes.causality == ast::Causality::Input)
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
                let base = match self.table.lookup_base(class, &x.base) {
                    Ok(TypeRef::Class(b)) if self.table.get(b).def.kind == ast::ClassKind::Function => b,
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
