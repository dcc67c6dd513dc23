//! User-defined functions: their interfaces, bodies and calls.
//!
//! Input: `function` classes reached through calls. Output: [`flat::Function`]s (scalar slots and
//! a statement body, flattened by `statements`) and, for each call, the call node with the
//! values of its outputs. Arrays are expanded to scalar slots here, as everywhere in the flat
//! model, so array sizes inside functions must be known at compile time: a function whose
//! inputs are declared with `:` (`input Real u[:]`) is instantiated once for each combination of
//! its arguments' sizes, so that `size(u, 1)` and outputs sized from it (`output Real
//! y[size(u, 1)]`) are known in each instance. Calls are checked here: arity, named arguments,
//! defaults, argument types and sizes. This module deliberately does not inline, evaluate or
//! differentiate functions; later stages do.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::functionals::{FunctionRef, FunctionalKey, FunctionalLocal};
use crate::modifier::{Modifier, Scope};
use crate::resolve::{ClassId, TypeRef};
use crate::statements::StatementContext;
use crate::value::{self, Value};
use crate::value::{type_name, types_compatible};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{Callee, ExprId, FuncId, Node};
use eqm_ir::flat::{self, Place, ScalarType, Statement};
use eqm_syntax::ast;
use std::collections::BTreeMap;

/// A variable element of a function (an input, an output or a protected variable).
#[derive(Clone, Debug)]
pub(crate) struct LocalVar {
    pub dims: Vec<usize>,
    /// The scalar slots of its elements, row-major (of a record: of its fields, in order).
    pub slots: Vec<u32>,
    pub ty: ScalarType,
    pub assignable: bool,
    /// For a record: its fields, each also a local named `record.field`.
    pub record: Option<std::rc::Rc<Vec<(String, LocalVar)>>>,
    /// For a functional input: the function passed; `slots` then holds the values it binds.
    pub function: Option<std::rc::Rc<FunctionalLocal>>,
    /// For an array of records: its elements (records) in row-major order, whose slots
    /// together are `slots`.
    pub elements: Option<std::rc::Rc<Vec<LocalVar>>>,
}

impl LocalVar {
    /// The value of this variable read in a function body: its slots as `Local` nodes, a record
    /// as a record of its fields.
    pub(crate) fn value(&self, exprs: &mut eqm_ir::expr::ExprArena) -> Value {
        if let Some(elements) = &self.elements {
            let records: Vec<Value> = elements.iter().map(|e| e.value(exprs)).collect();
            return Value::Records(self.dims.clone(), records.into());
        }
        if let Some(fields) = &self.record {
            let fields = fields.iter().map(|(n, f)| (n.clone(), f.value(exprs))).collect();
            return Value::Record(std::rc::Rc::new(fields));
        }
        let elems: Vec<ExprId> = self.slots.iter().map(|s| exprs.add(Node::Local(*s))).collect();
        if self.dims.is_empty() {
            Value::Scalar(elems[0], self.ty)
        } else {
            Value::Array(self.dims.clone(), elems, self.ty)
        }
    }

    /// The value of this variable given the expressions of its slots in order (the outputs of
    /// a call).
    pub(crate) fn value_of(&self, exprs: &[ExprId]) -> Value {
        if let Some(elements) = &self.elements {
            let mut start = 0;
            let records: Vec<Value> = elements
                .iter()
                .map(|e| {
                    let v = e.value_of(&exprs[start..start + e.slots.len()]);
                    start += e.slots.len();
                    v
                })
                .collect();
            return Value::Records(self.dims.clone(), records.into());
        }
        if let Some(fields) = &self.record {
            let first = self.slots.first().copied().unwrap_or(0);
            let fields = fields
                .iter()
                .map(|(n, f)| {
                    let start = f.slots.first().map_or(0, |s| (s - first) as usize);
                    (n.clone(), f.value_of(&exprs[start..start + f.slots.len()]))
                })
                .collect();
            return Value::Record(std::rc::Rc::new(fields));
        }
        if self.dims.is_empty() {
            Value::Scalar(exprs[0], self.ty)
        } else {
            Value::Array(self.dims.clone(), exprs.to_vec(), self.ty)
        }
    }
}

/// The scalars of a record value in field order (nested records flattened), or `None` for a
/// value that is not a record.
pub(crate) fn record_scalars(v: &Value) -> Option<Vec<ExprId>> {
    if let Value::Records(_, records) = v {
        let mut out = Vec::new();
        for r in records.iter() {
            out.extend(record_scalars(r)?);
        }
        return Some(out);
    }
    let Value::Record(fields) = v else { return None };
    let mut out = Vec::new();
    for (_, f) in fields.iter() {
        match f {
            Value::Record(_) => out.extend(record_scalars(f)?),
            other => out.extend(other.elements()),
        }
    }
    Some(out)
}

/// A function's interface as seen by its callers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signature {
    pub inputs: Vec<(String, LocalVar, Option<Vec<ExprId>>)>,
    pub outputs: Vec<(String, LocalVar)>,
}

/// What a function instance is made for: its class, the sizes of the arguments of its inputs
/// declared with `:`, and the functions passed to its functional inputs.
pub(crate) type FunctionKey = (ClassId, Vec<Vec<usize>>, Vec<FunctionalKey>);

/// The functions instantiated so far, and their interfaces as their callers see them.
#[derive(Default)]
pub(crate) struct FunctionTable {
    /// Functions instantiated so far (`None`: its declaration has errors). Keyed by the class,
    /// the sizes of the arguments of its inputs declared with `:` and the functions passed to
    /// its functional inputs: such a function is instantiated once per combination it is
    /// called with.
    pub(crate) ids: BTreeMap<FunctionKey, Option<FuncId>>,
    /// Caller-side interfaces, indexed like the flat model's functions.
    pub(crate) signatures: Vec<Signature>,
}

/// The local names visible while a function body is flattened.
#[derive(Debug)]
pub(crate) struct Frame {
    pub locals: BTreeMap<String, LocalVar>,
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// The flat function for a `function` class, instantiated on first use. `None` when its
    /// declaration has errors (already reported).
    pub(crate) fn function_for(
        &mut self,
        class: ClassId,
        sizes: &[Vec<usize>],
        functionals: &[FunctionalKey],
    ) -> Option<FuncId> {
        let key = (class, sizes.to_vec(), functionals.to_vec());
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
        // Registered before the body is flattened, so that a recursive call finds it.
        self.functions.ids.insert(key.clone(), Some(id));
        // Errors in the body are reported once; callers are still checked against the interface.
        if !self.instantiate_function(class, id, sizes, functionals) {
            self.functions.ids.insert(key, None);
            return None;
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
    fn functional_type(&self, clause: &ast::ComponentClause, part: ClassId) -> Option<ClassId> {
        match self.table.lookup(part, &clause.type_name) {
            Ok(TypeRef::Class(c)) if self.table.get(c).def.kind == ast::ClassKind::Function => Some(c),
            _ => None,
        }
    }

    /// The inputs of a function class in order, each with whether its size is declared with
    /// `:` (taken from the argument of each call) and, for a functional input, its function
    /// type.
    fn input_declarations(&self, class: ClassId) -> Vec<(&'a str, bool, Option<ClassId>)> {
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
    fn function_parts(
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

    /// Flattens a function's declarations and body; false when its interface has errors.
    /// `sizes` are the sizes of the arguments of the inputs declared with `:`, in order.
    fn instantiate_function(
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
        // Declarations, grouped as inputs, outputs and the rest (protected variables), each with
        // the class that declares it.
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
                ast::Section::Elements { elements, .. } => {
                    for element in elements {
                        match element {
                            ast::Element::Component(clause) => {
                                let group = match clause.prefixes.causality {
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
                    language, call, span, ..
                } => externals.push((language, call, *span, part)),
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
        let diagnostics_before = self.diagnostics.len();
        // The declarations are in scope as they are made, so that a size may be computed from
        // an input (`output Real y[size(u, 1)]`).
        self.context.frames.push(Frame {
            locals: BTreeMap::new(),
        });
        let mut declared: Vec<(usize, &'a ast::ComponentDecl, LocalVar, ClassId)> = Vec::new();
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
                    (_, true) => match self.size_from_first_value(decl, &bodies, scope) {
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
                1 => function.outputs = count as u32,
                _ => {}
            }
        }
        let interface_ok = self.diagnostics.len() == diagnostics_before;
        // Defaults and initial values may refer to inputs, so they are evaluated with all
        // declarations in scope.
        let mut initial_values = Vec::new();
        for (group, decl, var, part) in &declared {
            let scope = Scope {
                instance: None,
                class: *part,
            };
            let (binding, scope) = match rebound.get(&(*decl as *const _)) {
                Some(&(expr, scope)) => (Some(expr), scope),
                None => (decl.modification.as_ref().and_then(|m| m.binding.as_ref()), scope),
            };
            let value = binding.and_then(|b| self.local_value(b, var, scope));
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
        if !interface_ok {
            // The body would only repeat the errors as unknown variables.
            self.context.frames.pop();
            return false;
        }
        let mut cx = StatementContext::in_function(id);
        let mut body = initial_values;
        for (statements, part) in bodies {
            let scope = Scope {
                instance: None,
                class: part,
            };
            body.extend(self.statements(statements, scope, &mut Vec::new(), &mut cx));
        }
        for (language, call, span, part) in externals {
            let scope = Scope {
                instance: None,
                class: part,
            };
            match self.external_body(class, id, language.as_deref(), call.as_ref(), span, scope) {
                Some(statement) => body.push(statement),
                None => {
                    self.context.frames.pop();
                    return false;
                }
            }
        }
        self.context.frames.pop();
        self.model.functions[id.0 as usize].body = body;
        interface_ok
    }

    /// The body of an external function: the assignment of the C math library function it
    /// names, which EQM evaluates itself (`external "C" y = hypot(a, b);`, or `external "C";`
    /// for the function's own name, its inputs and its one output). A function of any other
    /// library is a diagnostic.
    fn external_body(
        &mut self,
        class: ClassId,
        id: FuncId,
        language: Option<&str>,
        call: Option<&'a ast::ExternalCall>,
        span: Span,
        scope: Scope,
    ) -> Option<Statement> {
        let def = self.table.get(class).def;
        if !matches!(language, None | Some("C") | Some("builtin")) {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                format!(
                    "external functions in {:?} are not supported; only \"C\" ones of the C math library",
                    language.unwrap_or("")
                ),
                span,
                "not supported",
            ));
            return None;
        }
        let locals = self.context.frames.last()?.locals.clone();
        let (name, args, output) = match call {
            Some(call) => {
                let mut args = Vec::with_capacity(call.args.len());
                for a in &call.args {
                    match self.eval(a, scope, &mut Vec::new())? {
                        Value::Scalar(x, _) => args.push(x),
                        _ => {
                            self.diagnostics.push(Diagnostic::error(
                                "E0317",
                                "array arguments of external functions are not supported",
                                a.span,
                                "not a scalar",
                            ));
                            return None;
                        }
                    }
                }
                let output = call.output.as_ref().map(|o| o.parts[0].name.name.clone());
                (call.function.name.clone(), args, output)
            }
            None => {
                // The default call: the function's name, its inputs in order, its one output.
                let inputs: Vec<&str> = self.input_names(class);
                let mut args = Vec::new();
                for input in inputs {
                    let var = locals.get(input)?;
                    if var.slots.len() != 1 {
                        self.diagnostics.push(Diagnostic::error(
                            "E0317",
                            "array arguments of external functions are not supported",
                            span,
                            "not a scalar",
                        ));
                        return None;
                    }
                    args.push(self.model.exprs.add(Node::Local(var.slots[0])));
                }
                let outputs = &self.functions.signatures[id.0 as usize].outputs;
                let output = match outputs.as_slice() {
                    [(name, _)] => Some(name.clone()),
                    _ => None,
                };
                (def.name.name.clone(), args, output)
            }
        };
        let Some(value) = self.c_math(&name, &args) else {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0317",
                    format!("the external function `{name}` with {} argument(s) is not one EQM can call", args.len()),
                    span,
                    "not supported",
                )
                .with_help("EQM calls the functions of the C math library (sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, exp, log, log10, sqrt, fabs, floor, ceil, pow, fmod, hypot); write other functions with an algorithm section"),
            );
            return None;
        };
        let Some(target) = output.and_then(|o| locals.get(&o).filter(|v| v.slots.len() == 1).map(|v| v.slots[0]))
        else {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                "an external function needs one scalar output to assign",
                span,
                "no output",
            ));
            return None;
        };
        Some(Statement::Assign {
            target: Place::Local(target),
            value,
            span,
        })
    }

    /// `name(args)` of the C math library as an expression of EQM's built-ins, exactly.
    fn c_math(&mut self, name: &str, args: &[ExprId]) -> Option<ExprId> {
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

    /// The hidden input slots of a functional input, one per scalar of each value the function
    /// passed to it binds.
    fn functional_variable(&mut self, id: FuncId, name: &str, key: &FunctionalKey) -> LocalVar {
        let mut bound = Vec::with_capacity(key.bound.len());
        let mut slots = Vec::new();
        for (input, dims, ty) in &key.bound {
            let ty = crate::functionals::type_of_code(*ty);
            let count = dims.iter().product::<usize>();
            let function = &mut self.model.functions[id.0 as usize];
            let first = function.slots.len() as u32;
            for k in 0..count {
                function.slots.push(flat::FunctionSlot {
                    name: value::element_name(&format!("{name}.{input}"), &value::row_major_index(dims, k)),
                    ty,
                    default: None,
                });
            }
            let var = LocalVar {
                dims: dims.clone(),
                slots: (first..first + count as u32).collect(),
                ty,
                assignable: false,
                record: None,
                function: None,
                elements: None,
            };
            slots.extend_from_slice(&var.slots);
            bound.push((input.clone(), var));
        }
        LocalVar {
            dims: Vec::new(),
            slots,
            ty: ScalarType::Real,
            assignable: false,
            record: None,
            function: Some(std::rc::Rc::new(FunctionalLocal {
                class: key.class,
                bound,
            })),
            elements: None,
        }
    }

    /// The size of an output or protected variable declared with `:`: that of its binding, or of
    /// the value of its first assignment at the top level of the algorithm (`y := u[2:end];`),
    /// evaluated with the declarations made before it. A function instance has fixed sizes, so
    /// a later assignment of another size is an error, as for any of its variables.
    fn size_from_first_value(
        &mut self,
        decl: &'a ast::ComponentDecl,
        bodies: &[(&'a Vec<ast::Statement>, ClassId)],
        scope: Scope,
    ) -> Option<Vec<usize>> {
        let name = &decl.name.name;
        let first_assignment = || {
            bodies.iter().find_map(|(statements, part)| {
                statements.iter().find_map(|s| match &s.kind {
                    ast::StatementKind::Assign { target, value }
                        if target.parts.len() == 1
                            && target.parts[0].name.name == *name
                            && target.parts[0].subscripts.is_empty() =>
                    {
                        Some((
                            value,
                            Scope {
                                instance: None,
                                class: *part,
                            },
                        ))
                    }
                    _ => None,
                })
            })
        };
        let first = decl
            .modification
            .as_ref()
            .and_then(|m| m.binding.as_ref())
            .map(|b| (b, scope))
            .or_else(first_assignment);
        let unknown = |f: &mut Self, why: String| {
            f.diagnostics.push(
                Diagnostic::error("E0217", format!("the size of `{name}` (declared `:`) {why}"), decl.name.span, "unknown size")
                    .with_help("assign it a whole value at the top of the algorithm (`y := u[2:end];`), or declare its size from the inputs (`size(u, 1)`)"),
            );
            None
        };
        let Some((expr, scope)) = first else {
            return unknown(
                self,
                "follows from no binding and no assignment of the whole variable in the algorithm".into(),
            );
        };
        // Names declared after this variable are not in scope yet: their errors only mean
        // that the size cannot be known here.
        let before = self.diagnostics.len();
        let value = self.eval(expr, scope, &mut Vec::new());
        self.diagnostics.truncate(before);
        match value {
            Some(v) => Some(v.dims().to_vec()),
            None => unknown(
                self,
                format!(
                    "does not follow from its first value `{}`: it needs variables declared after `{name}`, or values known only when the function runs",
                    eqm_syntax::pretty::print_expr(expr).trim()
                ),
            ),
        }
    }

    /// Allocates the slots of one declared function variable.
    fn function_variable(
        &mut self,
        id: FuncId,
        clause: &'a ast::ComponentClause,
        decl: &'a ast::ComponentDecl,
        scope: Scope,
        assignable: bool,
        actual: Option<&Vec<usize>>,
    ) -> Option<LocalVar> {
        let resolved = self.resolve_type(scope.class, &clause.type_name, 0)?;
        if let TypeRef::Class(class) = resolved.target
            && self.is_record(class)
        {
            if clause.type_dims.is_empty() && decl.dims.is_empty() {
                return self.record_local(id, &decl.name.name, class, assignable, decl.name.span);
            }
            let dims = self.function_variable_dims(clause, decl, scope, &[], actual)?;
            return self.record_array_local(id, &decl.name.name, class, dims, assignable, decl.name.span);
        }
        let TypeRef::Builtin(ty) = resolved.target else {
            self.diagnostics.push(Diagnostic::error(
                "E0217",
                format!(
                    "function variables must be Real, Integer, Boolean or String; `{}` is a class",
                    resolved.class_name
                ),
                clause.type_name.span,
                "not a scalar type",
            ));
            return None;
        };
        let dims = self.function_variable_dims(clause, decl, scope, &resolved.dims, actual)?;
        Some(self.scalar_local(id, &decl.name.name, dims, ty, assignable))
    }

    /// Allocates the slots of a function variable of a built-in type, one per element, named
    /// `name[i, j]`.
    fn scalar_local(&mut self, id: FuncId, name: &str, dims: Vec<usize>, ty: ScalarType, assignable: bool) -> LocalVar {
        let count = dims.iter().product::<usize>();
        let function = &mut self.model.functions[id.0 as usize];
        let first = function.slots.len() as u32;
        for k in 0..count {
            function.slots.push(flat::FunctionSlot {
                name: value::element_name(name, &value::row_major_index(&dims, k)),
                ty,
                default: None,
            });
        }
        LocalVar {
            dims,
            slots: (first..first + count as u32).collect(),
            ty,
            assignable,
            record: None,
            function: None,
            elements: None,
        }
    }

    /// The sizes of a declared function variable: its declared dimensions (those written `:`
    /// from the argument, `actual`, of the call this instance is for, or for an output from its
    /// first value), then those of its type.
    fn function_variable_dims(
        &mut self,
        clause: &'a ast::ComponentClause,
        decl: &'a ast::ComponentDecl,
        scope: Scope,
        type_dims: &[&'a ast::Subscript],
        actual: Option<&Vec<usize>>,
    ) -> Option<Vec<usize>> {
        let mut dims = Vec::new();
        for sub in clause
            .type_dims
            .iter()
            .chain(&decl.dims)
            .chain(type_dims.iter().copied())
        {
            match sub {
                ast::Subscript::Expr(e) => {
                    let n = self.eval_structural_int(e, scope, "an array size in a function")?;
                    dims.push(n.max(0) as usize);
                }
                // An input's size comes from the argument of the call this instance is for.
                ast::Subscript::Colon(_) if actual.is_some_and(|a| a.len() > dims.len()) => {
                    dims.push(actual.map_or(0, |a| a[dims.len()]));
                }
                ast::Subscript::Colon(span) => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0217",
                        format!(
                            "`{}` has more dimensions than the value that gives its size",
                            decl.name.name
                        ),
                        *span,
                        "no size for this dimension",
                    ));
                    return None;
                }
            }
        }
        Some(dims)
    }

    /// The slots of an array of records of a function: a record local per element, named
    /// `name[i]`, whose fields are locals `name[i].field`.
    fn record_array_local(
        &mut self,
        id: FuncId,
        name: &str,
        class: ClassId,
        dims: Vec<usize>,
        assignable: bool,
        span: Span,
    ) -> Option<LocalVar> {
        let count = dims.iter().product::<usize>();
        let mut elements = Vec::with_capacity(count);
        let mut slots = Vec::new();
        for k in 0..count {
            let element_name = value::element_name(name, &value::row_major_index(&dims, k));
            let element = self.record_local(id, &element_name, class, assignable, span)?;
            slots.extend_from_slice(&element.slots);
            if let Some(frame) = self.context.frames.last_mut() {
                frame.locals.insert(element_name, element.clone());
            }
            elements.push(element);
        }
        Some(LocalVar {
            dims,
            slots,
            ty: ScalarType::Real,
            assignable,
            record: None,
            function: None,
            elements: Some(std::rc::Rc::new(elements)),
        })
    }

    /// The slots of a record variable of a function: one per scalar of its fields, in order,
    /// each field also a local `name.field` (nested records the same way).
    fn record_local(
        &mut self,
        id: FuncId,
        name: &str,
        class: ClassId,
        assignable: bool,
        span: Span,
    ) -> Option<LocalVar> {
        let layout = self.layout(class);
        let mut fields = Vec::with_capacity(layout.elements.len());
        let mut slots = Vec::new();
        for element in &layout.elements {
            let field_name = format!("{name}.{}", element.decl.name.name);
            let field_scope = Scope {
                instance: None,
                class: element.class,
            };
            let resolved = self.resolve_type(element.class, &element.clause.type_name, 0)?;
            let var = match resolved.target {
                TypeRef::Class(c) if self.is_record(c) => self.record_local(id, &field_name, c, assignable, span)?,
                TypeRef::Builtin(ty) => {
                    let mut dims = Vec::new();
                    for sub in element.clause.type_dims.iter().chain(&element.decl.dims) {
                        let ast::Subscript::Expr(e) = sub else {
                            self.diagnostics.push(Diagnostic::error(
                                "E0217",
                                "a record field of a function needs a known size",
                                span,
                                "unknown size",
                            ));
                            return None;
                        };
                        dims.push(self.eval_structural_int(e, field_scope, "an array size")?.max(0) as usize);
                    }
                    self.scalar_local(id, &field_name, dims, ty, assignable)
                }
                TypeRef::Class(_) => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0217",
                        format!(
                            "the field `{field_name}` of a function's record must be a scalar, an array or a record"
                        ),
                        span,
                        "not supported",
                    ));
                    return None;
                }
            };
            if let Some(frame) = self.context.frames.last_mut() {
                frame.locals.insert(field_name, var.clone());
            }
            slots.extend_from_slice(&var.slots);
            fields.push((element.decl.name.name.clone(), var));
        }
        Some(LocalVar {
            dims: Vec::new(),
            slots,
            ty: ScalarType::Real,
            assignable,
            record: Some(std::rc::Rc::new(fields)),
            function: None,
            elements: None,
        })
    }

    /// Evaluates an expression that initialises `var`, checking its size and type.
    fn local_value(&mut self, e: &'a ast::Expr, var: &LocalVar, scope: Scope) -> Option<Vec<ExprId>> {
        let v = self.eval(e, scope, &mut Vec::new())?;
        self.check_assignable(&v, &var.dims, var.ty, e.span, &String::new)?;
        Some(broadcast(&v, var.slots.len()))
    }

    /// Checks that `value` fits a place of the given size and type.
    /// `context` gives a prefix for the message (`argument `x` of `f`: `); it is only built when
    /// there is an error.
    pub(crate) fn check_assignable(
        &mut self,
        value: &Value,
        dims: &[usize],
        ty: ScalarType,
        span: Span,
        context: &dyn Fn() -> String,
    ) -> Option<()> {
        if !value::same_dims(value.dims(), dims) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!(
                    "{}expected a value of size {:?}, found {:?}",
                    context(),
                    dims,
                    value.dims()
                ),
                span,
                "sizes differ",
            ));
            return None;
        }
        if !types_compatible(ty, value.ty()) {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                format!(
                    "{}expected {}, found {}",
                    context(),
                    type_name(ty),
                    type_name(value.ty())
                ),
                span,
                "wrong type",
            ));
            return None;
        }
        Some(())
    }

    /// A reference to a function's local variable, when `name` is one in the current frame.
    pub(crate) fn eval_local(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Value> {
        if let Some(var) = self.local_record(c) {
            return Some(var.value(&mut self.model.exprs));
        }
        if let Some(target) = self.record_array_target(c, scope, loops) {
            let (var, subs) = target?;
            if var.record.is_some() || var.elements.is_some() {
                return Some(var.value(&mut self.model.exprs));
            }
            let (dims, picked) = self.subscript_selection(subs, &var.dims, scope, loops, c)?;
            let elems: Vec<ExprId> = picked
                .iter()
                .map(|&k| self.model.exprs.add(Node::Local(var.slots[k])))
                .collect();
            return Some(if dims.is_empty() {
                Value::Scalar(elems[0], var.ty)
            } else {
                Value::Array(dims, elems, var.ty)
            });
        }
        let (dims, slots, ty, _) = self.local_places(c, scope, loops)?;
        let elems: Vec<ExprId> = slots.iter().map(|s| self.model.exprs.add(Node::Local(*s))).collect();
        Some(if dims.is_empty() {
            Value::Scalar(elems[0], ty)
        } else {
            Value::Array(dims, elems, ty)
        })
    }

    /// Whether `name` is a local variable of the function being flattened.
    pub(crate) fn is_local(&self, scope: Scope, name: &str) -> bool {
        scope.instance.is_none() && self.context.frames.last().is_some_and(|f| f.locals.contains_key(name))
    }

    /// A reference that goes through an array of records (`ps`, `ps[2]`, `ps[i].x`, `ps.x`,
    /// `r.points[2].y`): the variable it ends at, with the subscripts of its last part left to
    /// apply when that is an array of scalars. `None` when the reference goes through no array
    /// of records; `Some(None)` after a diagnostic. `ps.x` (a field of every element) is the
    /// array of the elements' fields, for fields that are scalars.
    fn record_array_target(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<(LocalVar, &'a [ast::Subscript])>> {
        let frame = self.context.frames.last()?;
        let first = frame.locals.get(&c.parts[0].name.name)?;
        // A cheap exit, copying nothing, for every other local: no array of records on the path.
        let mut through = first.elements.is_some();
        let mut probe = first;
        for part in &c.parts[1..] {
            let Some((_, field)) = probe
                .record
                .as_ref()
                .and_then(|f| f.iter().find(|(n, _)| *n == part.name.name))
            else {
                break;
            };
            probe = field;
            through |= probe.elements.is_some();
        }
        if !through {
            return None;
        }
        let mut var = first.clone();
        let last = c.parts.len() - 1;
        for (k, part) in c.parts.iter().enumerate() {
            if k > 0 {
                var = match self.record_field(&var, &part.name.name, c) {
                    Some(v) => v,
                    None => return Some(None),
                };
            }
            let Some(elements) = var.elements.clone() else {
                if k == last {
                    return Some(Some((var, &part.subscripts)));
                }
                if !part.subscripts.is_empty() {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("`{}` is not an array of records", part.name.name),
                        part.name.span,
                        "cannot be subscripted here",
                    ));
                    return Some(None);
                }
                continue;
            };
            if part.subscripts.is_empty() {
                continue;
            }
            let Some((dims, picked)) = self.subscript_selection(&part.subscripts, &var.dims, scope, loops, c) else {
                return Some(None);
            };
            var = if dims.is_empty() {
                elements[picked[0]].clone()
            } else {
                let chosen: Vec<LocalVar> = picked.iter().map(|&i| elements[i].clone()).collect();
                LocalVar {
                    dims,
                    slots: chosen.iter().flat_map(|e| e.slots.iter().copied()).collect(),
                    ty: ScalarType::Real,
                    assignable: var.assignable,
                    record: None,
                    function: None,
                    elements: Some(std::rc::Rc::new(chosen)),
                }
            };
        }
        Some(Some((var, &[])))
    }

    /// Field `name` of a record local, or of every element of an array of records (an array of
    /// the field, for a scalar field).
    fn record_field(&mut self, var: &LocalVar, name: &str, c: &ast::ComponentRef) -> Option<LocalVar> {
        let field_of = |v: &LocalVar| {
            v.record
                .as_ref()?
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, f)| f.clone())
        };
        let found = match &var.elements {
            None => field_of(var),
            Some(elements) => {
                let fields: Option<Vec<LocalVar>> = elements.iter().map(field_of).collect();
                fields
                    .filter(|f| f.iter().all(|x| x.dims.is_empty() && x.record.is_none()))
                    .map(|fields| LocalVar {
                        dims: var.dims.clone(),
                        slots: fields.iter().flat_map(|f| f.slots.iter().copied()).collect(),
                        ty: fields.first().map_or(ScalarType::Real, |f| f.ty),
                        assignable: var.assignable,
                        record: None,
                        function: None,
                        elements: None,
                    })
            }
        };
        if found.is_none() {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!(
                    "`{}` has no scalar field `{name}` here",
                    eqm_syntax::pretty::print_ref(c)
                ),
                c.span,
                "no such field",
            ));
        }
        found
    }

    /// The record local a reference without subscripts names (`p`, `p.inner`), if any.
    fn local_record(&self, c: &ast::ComponentRef) -> Option<LocalVar> {
        if c.parts.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        let name = c
            .parts
            .iter()
            .map(|p| p.name.name.as_str())
            .collect::<Vec<_>>()
            .join(".");
        self.context
            .frames
            .last()?
            .locals
            .get(&name)
            .filter(|v| v.record.is_some())
            .cloned()
    }

    pub(crate) fn local_places(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Vec<usize>, Vec<u32>, ScalarType, bool)> {
        if let Some(var) = self.local_record(c) {
            return Some((Vec::new(), var.slots.clone(), var.ty, var.assignable));
        }
        if let Some(target) = self.record_array_target(c, scope, loops) {
            let (var, subs) = target?;
            if var.record.is_some() || var.elements.is_some() {
                return Some((var.dims.clone(), var.slots.clone(), var.ty, var.assignable));
            }
            let (dims, picked) = self.subscript_selection(subs, &var.dims, scope, loops, c)?;
            return Some((
                dims,
                picked.iter().map(|&k| var.slots[k]).collect(),
                var.ty,
                var.assignable,
            ));
        }
        let first = &c.parts[0];
        let mut var = self.context.frames.last()?.locals.get(&first.name.name)?.clone();
        if var.function.is_some() {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("`{}` is a functional input, not a value", first.name.name),
                    c.span,
                    "a function",
                )
                .with_help(format!(
                    "call it (`{}(x)`) or pass it on to another functional input",
                    first.name.name
                )),
            );
            return None;
        }
        // A field of a record variable (`p.x`, `p.inner.x[2]`): the local of that name.
        let dotted = c.parts.len() > 1 && c.parts[..c.parts.len() - 1].iter().all(|p| p.subscripts.is_empty());
        let field = dotted
            .then(|| {
                c.parts
                    .iter()
                    .map(|p| p.name.name.as_str())
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .and_then(|name| self.context.frames.last()?.locals.get(&name).cloned());
        let last = c.parts.last().unwrap_or(first);
        if let Some(field) = field {
            var = field;
            let (dims, picked) = self.subscript_selection(&last.subscripts, &var.dims, scope, loops, c)?;
            return Some((
                dims,
                picked.iter().map(|&k| var.slots[k]).collect(),
                var.ty,
                var.assignable,
            ));
        }
        if c.parts.len() > 1 {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!(
                    "`{}` is a variable and has no member `{}`",
                    first.name.name, c.parts[1].name.name
                ),
                c.parts[1].name.span,
                "no such member",
            ));
            return None;
        }
        let (dims, picked) = self.subscript_selection(&first.subscripts, &var.dims, scope, loops, c)?;
        Some((
            dims,
            picked.iter().map(|&k| var.slots[k]).collect(),
            var.ty,
            var.assignable,
        ))
    }

    /// Evaluates the argument `a` of input `k` of a call: a value, or for a functional input a
    /// function (checked against the input's function type).
    #[allow(clippy::too_many_arguments)]
    fn call_argument(
        &mut self,
        k: usize,
        a: &'a ast::Expr,
        declared: &[(&'a str, bool, Option<ClassId>)],
        given: &mut [Option<(Value, Span)>],
        passed: &mut [Option<FunctionRef<'a>>],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<()> {
        match declared[k].2 {
            Some(formal) => {
                let f = self.function_argument(a, scope, loops)?;
                self.check_function_fits(&f, formal, a.span, "functional input")?;
                passed[k] = Some(f);
                // Marks the input as given; its value is the function's bound values.
                given[k] = Some((Value::Str(eqm_ir::flat::Message::default()), a.span));
            }
            None => given[k] = Some((self.eval(a, scope, loops)?, a.span)),
        }
        Some(())
    }

    /// Checks a call of a user-defined function and returns the call node and the values of all
    /// its outputs (the first output is the call itself, further scalar outputs are
    /// `CallOutput(call, k)`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn user_call(
        &mut self,
        callee: &FunctionRef<'a>,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(ExprId, Vec<Value>)> {
        let name = eqm_syntax::pretty::print_ref(function);
        let class = callee.class;
        // The arguments first: the sizes of those of inputs declared with `:` and the functions
        // passed to functional inputs choose the function's instance.
        let declared = self.input_declarations(class);
        let mut given: Vec<Option<(Value, Span)>> = vec![None; declared.len()];
        let mut passed: Vec<Option<FunctionRef<'a>>> = vec![None; declared.len()];
        // Inputs bound by a partial application are no longer inputs of the call: positional
        // arguments skip them.
        for (bound, value) in &callee.bound {
            if let Some(k) = declared.iter().position(|(n, ..)| n == bound) {
                given[k] = Some((value.clone(), span));
            }
        }
        let open: Vec<usize> = (0..declared.len()).filter(|&k| given[k].is_none()).collect();
        if args.positional.len() > open.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{name}` takes {} input(s), found {} positional argument(s)",
                    open.len(),
                    args.positional.len()
                ),
                args.span,
                "too many arguments",
            ));
            return None;
        }
        for (a, &k) in args.positional.iter().zip(&open) {
            self.call_argument(k, a, &declared, &mut given, &mut passed, scope, loops)?;
        }
        for (arg_name, a) in &args.named {
            let Some(k) = declared.iter().position(|(n, ..)| *n == arg_name.name) else {
                let mut d = Diagnostic::error(
                    "E0309",
                    format!("`{name}` has no input named `{}`", arg_name.name),
                    arg_name.span,
                    "no such input",
                );
                if let Some(s) = eqm_diag::did_you_mean(&arg_name.name, declared.iter().map(|(n, ..)| *n)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.diagnostics.push(d);
                return None;
            };
            if given[k].is_some() {
                self.diagnostics.push(Diagnostic::error(
                    "E0309",
                    format!("input `{}` of `{name}` is given twice", arg_name.name),
                    arg_name.span,
                    "given twice",
                ));
                return None;
            }
            self.call_argument(k, a, &declared, &mut given, &mut passed, scope, loops)?;
        }
        // Defaults from a short definition or a redeclaration (`function f = g(a = 1)`) count as
        // if written in the call.
        for arg in &callee.defaults.args {
            let Some(k) = declared.iter().position(|(n, ..)| *n == arg.name) else {
                self.diagnostics.push(Diagnostic::error(
                    "E0317",
                    format!(
                        "`{}` modifies `{}`, which is not an input of `{name}`; EQM supports modifying only a function's inputs",
                        self.table.get(class).full_name,
                        arg.name
                    ),
                    arg.span,
                    "not an input",
                ));
                return None;
            };
            if given[k].is_some() {
                continue;
            }
            let Some(binding) = &arg.modifier.binding else { continue };
            given[k] = Some((
                self.eval(binding.expr, binding.scope, &mut Vec::new())?,
                binding.expr.span,
            ));
        }
        let mut sizes = Vec::new();
        let mut functionals = Vec::new();
        for (k, (input, open, functional)) in declared.iter().enumerate() {
            let missing = match (functional, &passed[k], open, &given[k]) {
                (Some(_), Some(f), ..) => {
                    functionals.push(f.key());
                    continue;
                }
                (Some(_), None, ..) => "it takes a function",
                (None, _, true, Some((v, _))) => {
                    sizes.push(v.dims().to_vec());
                    continue;
                }
                (None, _, true, None) => "its size `:` comes from the argument",
                (None, _, false, _) => continue,
            };
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!("missing argument `{input}` of `{name}`: {missing}"),
                span,
                "argument missing",
            ));
            return None;
        }
        let id = self.function_for(class, &sizes, &functionals)?;
        let signature = self.functions.signatures[id.0 as usize].clone();
        let mut call_args: Vec<ExprId> = Vec::new();
        for (k, ((input, var, default), value)) in signature.inputs.iter().zip(given).enumerate() {
            if let Some(local) = &var.function {
                // The values the passed function binds, in the order of its hidden inputs.
                let Some(f) = &passed[k] else { return None };
                for (bound, _) in &local.bound {
                    let v = f.bound.iter().find(|(n, _)| n == bound).map(|(_, v)| v)?;
                    call_args.extend(v.elements());
                }
                continue;
            }
            match value {
                Some((v, at)) if var.record.is_some() || var.elements.is_some() => match record_scalars(&v) {
                    Some(scalars) if scalars.len() == var.slots.len() && v.dims() == var.dims.as_slice() => {
                        call_args.extend(scalars)
                    }
                    _ => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0306",
                            format!("argument `{input}` of `{name}`: expected a record of its type"),
                            at,
                            "not that record",
                        ));
                        return None;
                    }
                },
                Some((v, at)) => {
                    self.check_assignable(&v, &var.dims, var.ty, at, &|| {
                        format!("argument `{input}` of `{name}`: ")
                    })?;
                    call_args.extend(broadcast(&v, var.slots.len()));
                }
                None => {
                    let Some(default) = default else {
                        self.diagnostics.push(Diagnostic::error(
                            "E0309",
                            format!("missing argument `{input}` of `{name}`"),
                            span,
                            "argument missing",
                        ));
                        return None;
                    };
                    // A default may refer to earlier inputs; it is evaluated with the actual
                    // arguments in their place.
                    let values: Vec<ExprId> = default
                        .iter()
                        .map(|&d| {
                            eqm_ir::symbolic::substitute(&mut self.model.exprs, d, &|arena, id| match arena.get(id) {
                                Node::Local(k) => call_args.get(*k as usize).copied(),
                                _ => None,
                            })
                        })
                        .collect();
                    call_args.extend(values);
                }
            }
        }
        if signature.outputs.is_empty() {
            return Some((self.model.exprs.call(Callee::User(id), call_args), Vec::new()));
        }
        let call = self.model.exprs.call(Callee::User(id), call_args);
        let mut outputs = Vec::new();
        let mut k = 0u32;
        for (_, var) in &signature.outputs {
            let elems: Vec<ExprId> = (0..var.slots.len())
                .map(|_| {
                    let e = if k == 0 {
                        call
                    } else {
                        self.model.exprs.add(Node::CallOutput(call, k))
                    };
                    k += 1;
                    e
                })
                .collect();
            outputs.push(var.value_of(&elems));
        }
        Some((call, outputs))
    }

    /// The outputs of `function(args)` assigned to a list of `targets` places (`(a, b) = f(x)`
    /// or `(a, b) := f(x)`): the call must be of a user function with at least that many
    /// outputs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn multi_output_call(
        &mut self,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        targets: usize,
        targets_span: Span,
        call_span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<Value>> {
        let Some(callee) = self.function_class(function, scope) else {
            self.diagnostics.push(Diagnostic::error(
                "E0307",
                "a parenthesised list on the left needs a call of a user-defined function on the right",
                call_span,
                "not a user-defined function",
            ));
            return None;
        };
        let (_, outputs) = self.user_call(&callee, function, args, call_span, scope, loops)?;
        if targets > outputs.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{}` has {} output(s), but {targets} are listed",
                    eqm_syntax::pretty::print_ref(function),
                    outputs.len(),
                ),
                targets_span,
                "too many targets",
            ));
            return None;
        }
        Some(outputs)
    }

    /// The class a reference without subscripts names (`f`, `Pkg.Point`), looked up from `scope`.
    pub(crate) fn class_named(&self, c: &ast::ComponentRef, scope: Scope) -> Option<ClassId> {
        if c.parts.is_empty() || c.parts.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        let name = ast::Name {
            global: c.global,
            parts: c.parts.iter().map(|p| p.name.clone()).collect(),
            span: c.span,
        };
        match self.table.lookup(scope.class, &name) {
            Ok(TypeRef::Class(class)) => Some(class),
            _ => None,
        }
    }

    /// The function a reference names, if it names one: its class, after short definitions
    /// (`function f = g(a = 1)`) and redeclarations of replaceable functions are followed, and
    /// the defaults that those give to its inputs (outermost first).
    /// Inside a function, a functional input names the function passed to it.
    pub(crate) fn function_class(&mut self, function: &ast::ComponentRef, scope: Scope) -> Option<FunctionRef<'a>> {
        if function.parts.is_empty() || function.parts.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        if function.parts.len() == 1
            && let Some(local) = self.functional_local(scope, &function.parts[0].name.name)
        {
            return Some(self.functional_ref(&local));
        }
        let name = ast::Name {
            global: function.global,
            parts: function.parts.iter().map(|p| p.name.clone()).collect(),
            span: function.span,
        };
        let Ok((TypeRef::Class(mut class), mut defaults)) = self.lookup_class(scope, &name) else {
            // Not a class: perhaps a functional parameter of the instance.
            return self.named_functional_parameter(function, scope);
        };
        // A chain of short definitions names each class once, so one longer than the table is
        // a cycle.
        for _ in 0..=self.table.classes.len() {
            let entry = self.table.get(class);
            if entry.def.kind != ast::ClassKind::Function {
                return None;
            }
            let ast::ClassBody::Short { base, modification, .. } = &entry.def.body else {
                return Some(FunctionRef::plain(class, defaults));
            };
            let parent = entry.parent.unwrap_or(class);
            // The modifiers are evaluated where the definition stands: in the instance when a
            // model declares it (`function g = f(k = k)` using the model's parameter `k`).
            let base_scope = Scope {
                instance: scope
                    .instance
                    .filter(|i| self.instances[i.0 as usize].layout.classes.contains(&parent)),
                class: parent,
            };
            if let Some(m) = modification {
                defaults = defaults.merge_owned(Modifier::from_class_modification(m, base_scope));
            }
            let (TypeRef::Class(next), more) = self.lookup_class(base_scope, base).ok()? else {
                return None;
            };
            defaults = defaults.merge_owned(more);
            class = next;
        }
        None
    }
}

/// The elements of a value assigned to `count` scalar places (a scalar fills all of them).
pub(crate) fn broadcast(v: &Value, count: usize) -> Vec<ExprId> {
    match v {
        Value::Scalar(x, _) => vec![*x; count.max(1)],
        _ => v.elements(),
    }
}
