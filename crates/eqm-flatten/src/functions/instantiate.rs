//! The flat function of a function class: its slots, defaults and statement body.
//!
//! Input: a function class, the id reserved for it and what the instance is made for. Output:
//! the `flat::Function` (inputs, outputs, protected slots, the body flattened by `statements`,
//! or the C math function an external body names) and the caller-side signature. It
//! deliberately resolves no call (that is `calls`) and allocates no slot itself (that is
//! `locals`).

use super::external::{ExternalArg, OutputArg};
use crate::flattener::Flattener;
use crate::function_table::FunctionalKey;
use crate::function_table::{Frame, LocalVar};
use crate::modifier::{Modifier, Scope};
use crate::resolve::ClassId;
use crate::statements::StatementContext;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, FuncId};
use eqm_ir::flat::ScalarType;
use eqm_ir::flat::{Place, Statement};
use eqm_syntax::ast;
use std::collections::BTreeMap;

/// The name of the hidden output of a function declared without outputs (see
/// `declare_function_locals`).
pub(crate) const EFFECT_OUTPUT: &str = eqm_ir::flat::EFFECT_SLOT;

/// A declaration of a function: its group (0 input, 1 output, 2 protected), the declaration,
/// its local and the class that declares it.
type DeclaredLocal<'a> = (usize, &'a ast::ComponentDecl, LocalVar, ClassId);

/// An external clause: its language, call, annotation and span, and the class that declares it.
type ExternalSection<'a> = (
    &'a Option<String>,
    &'a Option<ast::ExternalCall>,
    Option<&'a ast::Annotation>,
    Span,
    ClassId,
);

/// An external clause as `external_body` reads it.
pub(super) struct ExternalClause<'a> {
    pub language: Option<&'a str>,
    pub call: Option<&'a ast::ExternalCall>,
    pub annotation: Option<&'a ast::Annotation>,
    pub span: Span,
}

/// What the parts of a function declare, sorted by kind (see
/// [`Flattener::function_sections`]).
struct FunctionSections<'a> {
    groups: [Vec<(&'a ast::ComponentClause, &'a ast::ComponentDecl, ClassId)>; 3],
    bodies: Vec<(&'a Vec<ast::Statement>, ClassId)>,
    externals: Vec<ExternalSection<'a>>,
    rebound: BTreeMap<*const ast::ComponentDecl, (&'a ast::Expr, Scope)>,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Flattens a function's declarations and body; false when its interface has errors.
    /// `sizes` are the sizes of the arguments of the inputs declared with `:`, in order.
    pub(super) fn instantiate_function(
        &mut self,
        class: ClassId,
        id: FuncId,
        sizes: &[Vec<usize>],
        functionals: &[FunctionalKey],
    ) -> bool {
        let mut parts = Vec::new();
        if let Err(d) = self.function_parts(class, 0, Modifier::default(), &mut parts) {
            self.diagnostics.push(d);
            return false;
        }
        let sections = self.function_sections(&parts);
        let diagnostics_before = self.diagnostics.len();
        // The declarations are in scope as they are made, so that a size may be computed from
        // an input (`output Real y[size(u, 1)]`).
        let strings = self
            .functions
            .known_strings
            .get(id.0 as usize)
            .cloned()
            .unwrap_or_default();
        let integers = self
            .functions
            .known_integers
            .get(id.0 as usize)
            .cloned()
            .unwrap_or_default();
        self.context.frames.push(Frame {
            locals: BTreeMap::new(),
            strings,
            integers,
            reals: Vec::new(),
            templates: Vec::new(),
            texts: Vec::new(),
        });
        let declared = self.declare_function_locals(id, &sections, sizes, functionals);
        let interface_ok = self.diagnostics.len() == diagnostics_before;
        let initial_values = self.function_initial_values(id, &declared, &sections.rebound);
        if !interface_ok {
            // The body would only repeat the errors as unknown variables.
            self.context.frames.pop();
            return false;
        }
        let mut cx = StatementContext::in_function(id);
        let mut body = initial_values;
        for (statements, part) in sections.bodies {
            let scope = Scope {
                instance: None,
                class: part,
            };
            body.extend(self.statements(statements, scope, &mut Vec::new(), &mut cx));
        }
        for (language, call, annotation, span, part) in sections.externals {
            let scope = Scope {
                instance: None,
                class: part,
            };
            let clause = ExternalClause {
                language: language.as_deref(),
                call: call.as_ref(),
                annotation,
                span,
            };
            match self.external_body(class, id, clause, scope) {
                Some(statements) => body.extend(statements),
                None => {
                    self.context.frames.pop();
                    return false;
                }
            }
        }
        // The texts of the String outputs when the body ends are the texts every call gives.
        let outputs = &self.functions.signatures[id.0 as usize].outputs;
        let texts: Vec<(String, eqm_ir::flat::Message)> = (self.context.frames.last())
            .map(|f| {
                f.texts
                    .iter()
                    .filter(|(name, _)| outputs.iter().any(|(o, _)| o == name))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if !texts.is_empty() {
            let k = id.0 as usize;
            if self.functions.output_texts.len() <= k {
                self.functions.output_texts.resize(k + 1, Vec::new());
            }
            self.functions.output_texts[k] = texts;
        }
        self.context.frames.pop();
        self.model.functions[id.0 as usize].body = body;
        interface_ok
    }

    /// The declarations and sections of a function's parts: declarations grouped as inputs,
    /// outputs and the rest (protected variables), each with the class that declares it, the
    /// algorithm and external sections, and the bindings `extends` modifiers give.
    fn function_sections(&mut self, parts: &[(ClassId, &'a [ast::Section], Modifier<'a>)]) -> FunctionSections<'a> {
        let mut groups: [Vec<(&'a ast::ComponentClause, &'a ast::ComponentDecl, ClassId)>; 3] = Default::default();
        let mut bodies = Vec::new();
        let mut externals = Vec::new();
        // Bindings that `extends` modifiers give to inherited elements, by declaration.
        let mut rebound: BTreeMap<*const ast::ComponentDecl, (&'a ast::Expr, Scope)> = BTreeMap::new();
        for (part, section, modifier) in parts
            .iter()
            .flat_map(|(c, sections, m)| sections.iter().map(move |s| (*c, s, m)))
        {
            match section {
                ast::Section::Elements {
                    elements, visibility, ..
                } => {
                    for element in elements {
                        match element {
                            ast::Element::Component(clause) => {
                                let causality = self.declared_causality(clause, part);
                                if *visibility == ast::Visibility::Public {
                                    self.check_public_function_variable(clause, causality);
                                }
                                let group = match causality {
                                    ast::Causality::Input => 0,
                                    ast::Causality::Output => 1,
                                    ast::Causality::None => 2,
                                };
                                for decl in &clause.components {
                                    if let Some(b) = modifier.child(&decl.name.name).0.binding {
                                        rebound.insert(decl as *const _, (b.expr, b.scope));
                                    }
                                }
                                groups[group].extend(clause.components.iter().map(|d| (clause, d, part)));
                            }
                            // Followed by `function_parts`.
                            ast::Element::Extends(_) | ast::Element::Class(_) | ast::Element::Import(_) => {}
                        }
                    }
                }
                ast::Section::Algorithm {
                    initial: false,
                    statements,
                    ..
                } => bodies.push((statements, part)),
                ast::Section::External {
                    language,
                    call,
                    annotation,
                    span,
                } => externals.push((language, call, annotation.as_ref(), *span, part)),
                ast::Section::Algorithm { span, .. }
                | ast::Section::Equations { span, .. }
                | ast::Section::Invariants { span, .. } => self.diagnostics.push(Diagnostic::error(
                    "E0217",
                    "a function has only declarations and `algorithm` sections",
                    *span,
                    "not allowed in a function",
                )),
            }
        }
        // One algorithm section or one external interface, inherited or not (MLS 12.2).
        if bodies.len() + externals.len() > 1
            && let Some(&(_, part)) = bodies.get(1).or(bodies.first())
        {
            let span = self.table.get(part).def.name.span;
            self.diagnostics.push(Diagnostic::error(
                "E0217",
                "a function has at most one algorithm section or one external interface",
                span,
                "several bodies",
            ));
        }
        FunctionSections {
            groups,
            bodies,
            externals,
            rebound,
        }
    }

    /// A public variable of a function is an input or an output (MLS 12.2): E0217 otherwise.
    /// A constant is left alone.
    fn check_public_function_variable(&mut self, clause: &ast::ComponentClause, causality: ast::Causality) {
        if causality != ast::Causality::None || clause.prefixes.variability == ast::Variability::Constant {
            return;
        }
        for decl in &clause.components {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0217",
                    format!(
                        "`{}` is a public variable of a function without `input` or `output`",
                        decl.name.name
                    ),
                    decl.name.span,
                    "neither input nor output",
                )
                .with_help("declare it `protected`, or make it an input or an output"),
            );
        }
    }

    /// Declares a function's variables, group by group, in its frame (the innermost), and
    /// sets the counts of its input and output slots; returns each declaration with its group,
    /// local and declaring class.
    fn declare_function_locals(
        &mut self,
        id: FuncId,
        sections: &FunctionSections<'a>,
        sizes: &[Vec<usize>],
        functionals: &[FunctionalKey],
    ) -> Vec<DeclaredLocal<'a>> {
        let FunctionSections {
            groups,
            bodies,
            rebound,
            ..
        } = sections;
        let mut declared: Vec<DeclaredLocal<'a>> = Vec::new();
        let assigned = assigned_names(bodies);
        let mut open_sizes = sizes.iter();
        let mut passed_functions = functionals.iter();
        for (group, members) in groups.iter().enumerate() {
            for &(clause, decl, part) in members {
                let scope = Scope {
                    instance: None,
                    class: part,
                };
                let open = clause
                    .type_dims
                    .iter()
                    .chain(&decl.dims)
                    .any(|s| matches!(s, ast::Subscript::Colon(_)));
                let inferred;
                let actual = match (group, open) {
                    (0, true) => open_sizes.next(),
                    (_, true) => match self.size_from_first_value(decl, bodies, scope) {
                        Some(dims) => {
                            inferred = dims;
                            Some(&inferred)
                        }
                        None => continue,
                    },
                    _ => None,
                };
                let functional = if group == 0 {
                    self.functional_type(clause, part)
                } else {
                    None
                };
                let passed = if functional.is_some() {
                    passed_functions.next()
                } else {
                    None
                };
                let var = match (functional, passed) {
                    (Some(_), Some(key)) => Some(self.functional_variable(id, &decl.name.name, key)),
                    // A function instance is made for the functions passed to its functional
                    // inputs; the interface alone (for checking a call) has none.
                    (Some(_), None) => None,
                    (None, _) => self.function_variable(id, clause, decl, scope, group == 1 || group == 2, actual),
                };
                let Some(var) = var else {
                    continue;
                };
                let Some(frame) = self.context.frames.last_mut() else {
                    continue;
                };
                if frame.locals.insert(decl.name.name.clone(), var.clone()).is_some() {
                    self.diagnostics.push(Diagnostic::error(
                        "E0218",
                        format!("`{}` is declared twice", decl.name.name),
                        decl.name.span,
                        "second declaration",
                    ));
                }
                if group == 2 && !assigned.contains(decl.name.name.as_str()) {
                    self.note_constant_local(decl, &var, scope, rebound);
                }
                declared.push((group, decl, var, part));
            }
            let count = declared
                .iter()
                .filter(|(g, ..)| *g == group)
                .map(|(_, _, v, _)| v.slots.len())
                .sum::<usize>();
            let function = &mut self.model.functions[id.0 as usize];
            match group {
                0 => function.inputs = count as u32,
                // A function without outputs is called for its effect (an external C function
                // that keeps a state): a hidden output, which its external call sets, makes
                // each call a value the back ends evaluate like any other.
                1 if count == 0 => {
                    function.slots.push(eqm_ir::flat::FunctionSlot {
                        name: EFFECT_OUTPUT.to_string(),
                        ty: ScalarType::Integer,
                        default: None,
                    });
                    function.outputs = 1;
                }
                1 => function.outputs = count as u32,
                _ => {}
            }
        }
        declared
    }

    /// Makes a protected scalar Integer or Real variable that the body never assigns and whose
    /// binding is known at compile time (`Integer nu = size(u, 1);`, `Real d = 1/a;`) read as
    /// that value in this instance, so that sizes and ranges computed from it are known too:
    /// Modelica sizes a protected variable from the inputs and the variables declared before it
    /// (`Real v[:] = d:d:1;`), and such a variable holds its binding's value throughout the call.
    fn note_constant_local(
        &mut self,
        decl: &'a ast::ComponentDecl,
        var: &LocalVar,
        scope: Scope,
        rebound: &BTreeMap<*const ast::ComponentDecl, (&'a ast::Expr, Scope)>,
    ) {
        let numeric = matches!(var.ty, ScalarType::Integer | ScalarType::Real);
        if !var.dims.is_empty() || !numeric || var.record.is_some() || var.function.is_some() {
            return;
        }
        let (binding, scope) = match rebound.get(&(decl as *const _)) {
            Some(&(expr, scope)) => (expr, scope),
            None => match decl.modification.as_ref().and_then(|m| m.binding.as_ref()) {
                Some(b) => (b, scope),
                None => return,
            },
        };
        // The binding is evaluated again with the initial values; its errors are reported there.
        let mark = self.diagnostics.len();
        let value = self.eval(binding, scope, &mut Vec::new());
        self.diagnostics.truncate(mark);
        let Some(Value::Scalar(x, _)) = value else { return };
        let Some(v) = self.consts.eval(&self.model, x) else {
            return;
        };
        let Some(frame) = self.context.frames.last_mut() else {
            return;
        };
        match var.ty {
            ScalarType::Integer if v.fract() == 0.0 => frame.integers.push((decl.name.name.clone(), v as i64)),
            ScalarType::Real if v.is_finite() => frame.reals.push((decl.name.name.clone(), v)),
            _ => {}
        }
    }

    /// Evaluates the defaults and initial values of a function's declarations (with all
    /// declarations in scope, since they may refer to inputs), records the inputs and outputs
    /// in its signature, and returns the assignments that start its body.
    fn function_initial_values(
        &mut self,
        id: FuncId,
        declared: &[DeclaredLocal<'a>],
        rebound: &BTreeMap<*const ast::ComponentDecl, (&'a ast::Expr, Scope)>,
    ) -> Vec<Statement> {
        let mut initial_values = Vec::new();
        for (group, decl, var, part) in declared {
            let scope = Scope {
                instance: None,
                class: *part,
            };
            let (binding, scope) = match rebound.get(&(*decl as *const _)) {
                Some(&(expr, scope)) => (Some(expr), scope),
                None => (decl.modification.as_ref().and_then(|m| m.binding.as_ref()), scope),
            };
            // A String variable that is not an input holds its text while the body is
            // flattened; its binding is its first text.
            if *group != 0 && var.ty == ScalarType::String && var.dims.is_empty() && var.record.is_none() {
                if let Some(b) = binding {
                    self.string_variable_text(&decl.name.name, b, scope, &mut Vec::new());
                }
                if *group == 1 {
                    let name = decl.name.name.clone();
                    self.functions.signatures[id.0 as usize]
                        .outputs
                        .push((name, var.clone()));
                }
                continue;
            }
            let mut value = binding.and_then(|b| {
                // The default of an input sized `:` is the value of calls that omit the
                // argument; an instance made for an argument of another size has none.
                let open = decl.dims.iter().any(|d| matches!(d, ast::Subscript::Colon(_)));
                if *group == 0 && open {
                    let mark = self.diagnostics.len();
                    let v = self.eval_initial_value(b, &var.dims, scope);
                    if v.as_ref().is_some_and(|v| v.dims() != var.dims.as_slice()) {
                        self.diagnostics.truncate(mark);
                        return None;
                    }
                }
                self.local_value(b, var, scope)
            });
            if binding.is_none() && var.record.is_some() {
                value = self.record_field_modifiers(decl, var, scope);
            }
            let name = decl.name.name.clone();
            if *group == 0 {
                self.functions.signatures[id.0 as usize]
                    .inputs
                    .push((name, var.clone(), value.clone()));
            } else if *group == 1 {
                self.functions.signatures[id.0 as usize]
                    .outputs
                    .push((name, var.clone()));
            }
            if let Some(values) = value {
                for (&slot, &v) in var.slots.iter().zip(&values) {
                    self.model.functions[id.0 as usize].slots[slot as usize].default = Some(v);
                    if *group != 0 {
                        let span = binding.map_or(decl.span, |b| b.span);
                        initial_values.push(Statement::Assign {
                            target: Place::Local(slot),
                            value: v,
                            span,
                        });
                    }
                }
            }
        }
        initial_values
    }

    /// The values a record variable of a function gets from modifiers of its fields
    /// (`output Complex result(re = x, im = 0)`), field by field; `None` when it has none. A
    /// modifier EQM cannot apply here (a nested one, `each`, a redeclaration, or modifiers of
    /// only some of the fields) is reported rather than ignored.
    fn record_field_modifiers(
        &mut self,
        decl: &'a ast::ComponentDecl,
        var: &LocalVar,
        scope: Scope,
    ) -> Option<Vec<ExprId>> {
        let arguments = &decl.modification.as_ref()?.class_modification.as_ref()?.arguments;
        let fields = var.record.clone()?;
        let mut values: Vec<Option<ExprId>> = vec![None; var.slots.len()];
        let mut any = false;
        for arg in arguments {
            let binding = arg
                .modification
                .as_ref()
                .filter(|m| m.class_modification.is_none())
                .and_then(|m| m.binding.as_ref());
            let mut offset = 0;
            let field = fields.iter().find(|(name, field)| {
                let found = arg.name.parts.len() == 1 && *name == arg.name.parts[0].name;
                if !found {
                    offset += field.slots.len();
                }
                found
            });
            let (Some(binding), Some((_, field)), false, None) = (binding, field, arg.each, &arg.redeclare) else {
                self.diagnostics.push(Diagnostic::error(
                    "E0317",
                    "this modifier of a record variable of a function is not supported; bind the field in the algorithm",
                    arg.span,
                    "not supported",
                ));
                continue;
            };
            let field_values = self.local_value(binding, field, scope)?;
            for (k, v) in field_values.into_iter().enumerate() {
                values[offset + k] = Some(v);
            }
            any = true;
        }
        if !any {
            return None;
        }
        if values.iter().any(Option::is_none) {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                "modifiers of some but not all fields of a record variable of a function are not supported; bind the other fields too",
                decl.span,
                "not supported",
            ));
            return None;
        }
        Some(values.into_iter().flatten().collect())
    }

    /// The body of an external function: the assignments of its outputs from the function it
    /// names (`external "C" y = hypot(a, b);`, `external "C" f(x, size(x, 1), y);` with `y` an
    /// output written through a pointer, or `external "C";`: the function's own name, its inputs
    /// with the sizes of each array input after it, then its one scalar output as the result or,
    /// otherwise, every output through a pointer with its sizes, Modelica). A function of
    /// the C math library is evaluated by EQM itself; any other is compiled and linked through
    /// the front end (`external`). Another language is a diagnostic.
    // Long function: the explicit call and the default call are read into the same argument
    // list, each with its own rules, and then linked in one place.
    pub(super) fn external_body(
        &mut self,
        class: ClassId,
        id: FuncId,
        clause: ExternalClause<'a>,
        scope: Scope,
    ) -> Option<Vec<Statement>> {
        let def = self.table.get(class).def;
        let span = clause.span;
        let language = clause.language;
        // The LAPACK routines of the LU factorization run as EQM's own functions.
        if language.is_some_and(|l| l.eq_ignore_ascii_case("FORTRAN 77"))
            && Self::is_lapack_call(clause.call)
            && let Some(call) = clause.call
        {
            return self.lapack_body(id, call, scope, span);
        }
        if !matches!(language, None | Some("C") | Some("builtin")) {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                format!(
                    "external functions in {:?} are not supported; only \"C\" ones",
                    language.unwrap_or("")
                ),
                span,
                "not supported",
            ));
            return None;
        }
        let locals = self.context.frames.last()?.locals.clone();
        let outputs = self.functions.signatures[id.0 as usize].outputs.clone();
        // The inputs and outputs that are external objects, passed to C as `void*`.
        let objects = self.object_components(class);
        // The String inputs this instance was made for are passed as their texts.
        let strings = self
            .functions
            .known_strings
            .get(id.0 as usize)
            .cloned()
            .unwrap_or_default();
        let known_string = |name: &str| {
            strings
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, text)| Value::Str(eqm_ir::flat::Message::literal(text.clone())))
        };
        let output_arg = |f: &Self, name: &str| {
            let (_, var) = outputs.iter().find(|(n, _)| n == name)?;
            let bound = var
                .slots
                .iter()
                .map(|s| f.model.functions[id.0 as usize].slots[*s as usize].default.is_some())
                .collect();
            Some(OutputArg {
                slots: var.slots.clone(),
                ty: var.ty,
                bound,
                plain: var.record.is_none() && var.elements.is_none(),
            })
        };
        let (name, args, result) = match clause.call {
            Some(call) => {
                let mut args = Vec::with_capacity(call.args.len());
                for a in &call.args {
                    let is_size = matches!(&a.kind, ast::ExprKind::Call { function, .. }
                        if function.parts.len() == 1 && function.parts[0].name.name == "size");
                    // An output named as an argument is written through a pointer.
                    let written = match &a.kind {
                        ast::ExprKind::Ref(r) if r.parts.len() == 1 && r.parts[0].subscripts.is_empty() => {
                            output_arg(self, &r.parts[0].name.name)
                        }
                        _ => None,
                    };
                    if let Some(output) = written {
                        args.push(ExternalArg {
                            value: Value::Scalar(self.model.exprs.int(0), ScalarType::Integer),
                            is_size: false,
                            is_object: false,
                            output: Some(output),
                            span: a.span,
                        });
                        continue;
                    }
                    let known = match &a.kind {
                        ast::ExprKind::Ref(r) if r.parts.len() == 1 => known_string(&r.parts[0].name.name),
                        _ => None,
                    };
                    let value = match known {
                        Some(text) => text,
                        None => self.eval(a, scope, &mut Vec::new())?,
                    };
                    let is_object = matches!(&a.kind, ast::ExprKind::Ref(r)
                        if r.parts.len() == 1 && objects.contains(&r.parts[0].name.name.as_str()));
                    args.push(ExternalArg {
                        value,
                        is_size,
                        is_object,
                        output: None,
                        span: a.span,
                    });
                }
                let result = call.output.as_ref().map(|o| o.parts[0].name.name.clone());
                (call.function.name.clone(), args, result)
            }
            None => {
                // The default call: the function's name, its inputs in order (an array followed
                // by its sizes, Modelica), its one scalar output as the result, or else
                // every output through a pointer, each array followed by its sizes.
                let inputs: Vec<&str> = self.input_names(class);
                let mut args = Vec::new();
                let size_arg = |f: &mut Self, d: usize| ExternalArg {
                    value: Value::Scalar(f.model.exprs.int(d as i64), ScalarType::Integer),
                    is_size: true,
                    is_object: false,
                    output: None,
                    span,
                };
                for input in inputs {
                    let var = locals.get(input)?;
                    let value = known_string(input).unwrap_or_else(|| var.value(&mut self.model.exprs));
                    args.push(ExternalArg {
                        value,
                        is_size: false,
                        is_object: objects.contains(&input),
                        output: None,
                        span,
                    });
                    if var.record.is_none() {
                        for d in &var.dims {
                            let size = size_arg(self, *d);
                            args.push(size);
                        }
                    }
                }
                let result = match outputs.as_slice() {
                    [(name, var)] if var.slots.len() == 1 && var.dims.is_empty() && var.record.is_none() => {
                        Some(name.clone())
                    }
                    _ => {
                        for (name, var) in &outputs {
                            let output = output_arg(self, name)?;
                            args.push(ExternalArg {
                                value: Value::Scalar(self.model.exprs.int(0), ScalarType::Integer),
                                is_size: false,
                                is_object: false,
                                output: Some(output),
                                span,
                            });
                            for d in &var.dims {
                                let size = size_arg(self, *d);
                                args.push(size);
                            }
                        }
                        None
                    }
                };
                (def.name.name.clone(), args, result)
            }
        };
        let result_name = result.clone();
        let result = match result {
            Some(o) => {
                let Some((target, ty)) = locals
                    .get(&o)
                    .filter(|v| v.slots.len() == 1 && v.dims.is_empty() && v.record.is_none())
                    .map(|v| (v.slots[0], v.ty))
                else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0317",
                        format!(
                            "the result of an external function is one scalar; `{o}` is not (Modelica passes an array or record output as an argument)"
                        ),
                        span,
                        "not a scalar",
                    ));
                    return None;
                };
                Some((target, ty))
            }
            None => None,
        };
        if let (Some((target, _)), true) = (result, args.iter().all(|a| a.output.is_none())) {
            let scalars: Option<Vec<ExprId>> = args
                .iter()
                .map(|a| match a.value {
                    Value::Scalar(x, _) if !a.is_size => Some(x),
                    _ => None,
                })
                .collect();
            if let Some(value) = scalars.and_then(|scalars| self.c_math(&name, &scalars)) {
                return Some(vec![Statement::Assign {
                    target: Place::Local(target),
                    value,
                    span,
                }]);
            }
        }
        let result_is_object = result_name.as_deref().is_some_and(|o| objects.contains(&o));
        let function = self.table.get(class).full_name.clone();
        let assignments = self.external_c_call(
            &function,
            &name,
            &args,
            result,
            result_is_object,
            clause.annotation,
            span,
        )?;
        if let Some(object_class) = self.constructed_object_class(class) {
            // The constructor of an external object: its destructor is linked with it, so
            // that whoever creates an object can destroy it.
            let destructor = self.link_destructor(object_class, span)?;
            if let Some(constructor) = self.model.externals.last_mut() {
                constructor.destructor = Some(destructor);
            }
        }
        // The call of a function without outputs sets the hidden output.
        let effect = self.model.functions[id.0 as usize].inputs;
        Some(
            assignments
                .into_iter()
                .map(|(slot, value)| Statement::Assign {
                    target: Place::Local(if slot == super::external::EFFECT_ONLY {
                        effect
                    } else {
                        slot
                    }),
                    value,
                    span,
                })
                .collect(),
        )
    }

    /// `name(args)` of the C math library as an expression of EQM's built-ins, exactly.
    pub(super) fn c_math(&mut self, name: &str, args: &[ExprId]) -> Option<ExprId> {
        use eqm_ir::builtins::Builtin as B;
        let exprs = &mut self.model.exprs;
        let builtin = match (name, args) {
            ("sin", [_]) => B::Sin,
            ("cos", [_]) => B::Cos,
            ("tan", [_]) => B::Tan,
            ("asin", [_]) => B::Asin,
            ("acos", [_]) => B::Acos,
            ("atan", [_]) => B::Atan,
            ("atan2", [_, _]) => B::Atan2,
            ("sinh", [_]) => B::Sinh,
            ("cosh", [_]) => B::Cosh,
            ("tanh", [_]) => B::Tanh,
            ("erf", [_]) => B::Erf,
            ("erfc", [_]) => B::Erfc,
            ("exp", [_]) => B::Exp,
            ("log", [_]) => B::Log,
            ("log10", [_]) => B::Log10,
            ("sqrt", [_]) => B::Sqrt,
            ("fabs", [_]) => B::Abs,
            ("floor", [_]) => B::Floor,
            ("ceil", [_]) => B::Ceil,
            // C's fmod truncates like Modelica's rem.
            ("fmod", [_, _]) => B::Rem,
            ("pow", [a, b]) => return Some(exprs.binary(eqm_ir::expr::BinOp::Pow, *a, *b)),
            ("hypot", [a, b]) => {
                let two = exprs.int(2);
                let a2 = exprs.binary(eqm_ir::expr::BinOp::Pow, *a, two);
                let b2 = exprs.binary(eqm_ir::expr::BinOp::Pow, *b, two);
                let sum = exprs.binary(eqm_ir::expr::BinOp::Add, a2, b2);
                return Some(exprs.builtin(B::Sqrt, vec![sum]));
            }
            _ => return None,
        };
        // C's math functions never generate events.
        let call = exprs.builtin(builtin, args.to_vec());
        Some(match builtin.info().kind {
            eqm_ir::builtins::BuiltinKind::EventMath => exprs.builtin(B::NoEvent, vec![call]),
            _ => call,
        })
    }
}

/// The names that the statements of `bodies` assign, as a whole or in part (`x := ...`,
/// `x[i] := ...`, `(a, b) := f(...)`), walking the statements without recursion.
fn assigned_names<'a>(bodies: &[(&'a Vec<ast::Statement>, ClassId)]) -> std::collections::BTreeSet<&'a str> {
    let mut names = std::collections::BTreeSet::new();
    let mut stack: Vec<&'a ast::Statement> = bodies.iter().flat_map(|(b, _)| b.iter()).collect();
    while let Some(statement) = stack.pop() {
        match &statement.kind {
            ast::StatementKind::Assign { target, .. } => {
                names.extend(target.parts.first().map(|p| p.name.name.as_str()));
            }
            ast::StatementKind::MultiAssign { targets, .. } => {
                names.extend(
                    targets
                        .iter()
                        .flatten()
                        .filter_map(|t| t.parts.first())
                        .map(|p| p.name.name.as_str()),
                );
            }
            ast::StatementKind::If { branches, else_branch } => {
                stack.extend(branches.iter().flat_map(|(_, b)| b.iter()).chain(else_branch));
            }
            ast::StatementKind::When { branches } => stack.extend(branches.iter().flat_map(|(_, b)| b.iter())),
            ast::StatementKind::For { body, .. } | ast::StatementKind::While { body, .. } => stack.extend(body),
            ast::StatementKind::Call { .. } | ast::StatementKind::Return | ast::StatementKind::Break => {}
        }
    }
    names
}
