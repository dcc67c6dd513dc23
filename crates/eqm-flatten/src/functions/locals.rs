//! The local variables of a function: the slots of its inputs, outputs and protected
//! variables (scalars, arrays, records, arrays of records and functional inputs) and the checks
//! of values assigned to them.
//!
//! Input: a declaration of a function being instantiated. Output: its [`LocalVar`] with slots
//! allocated in the flat function, or a diagnostic when its size or type is wrong. It
//! deliberately does not read locals in expressions (that is `references`).

use crate::flattener::Flattener;
use crate::function_table::{FunctionalKey, FunctionalLocal};
use crate::function_table::{LocalVar, broadcast};
use crate::modifier::Scope;
use crate::resolve::{ClassId, TypeRef};
use crate::value::{self, Value};
use crate::value::{type_name, types_compatible};
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, FuncId};
use eqm_ir::flat::{self, ScalarType};
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The hidden input slots of a functional input, one per scalar of each value the function
    /// passed to it binds.
    pub(super) fn functional_variable(&mut self, id: FuncId, name: &str, key: &FunctionalKey) -> LocalVar {
        let mut bound = Vec::with_capacity(key.bound.len());
        let mut slots = Vec::new();
        for (input, dims, ty) in &key.bound {
            let ty = crate::function_table::type_of_code(*ty);
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
    pub(super) fn size_from_first_value(
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
    pub(super) fn function_variable(
        &mut self,
        id: FuncId,
        clause: &'a ast::ComponentClause,
        decl: &'a ast::ComponentDecl,
        scope: Scope,
        assignable: bool,
        actual: Option<&Vec<usize>>,
    ) -> Option<LocalVar> {
        // A class of a package seen as another one (`State` in a function extending its
        // inherited version) is the other package's.
        let resolved = self.component_type(scope, &clause.type_name)?;
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
        if ty == ScalarType::String
            && self.declared_causality(clause, scope.class) == ast::Causality::Input
            && let Some(template) = self.template_local(id, &decl.name.name)
        {
            return Some(template);
        }
        let dims = self.function_variable_dims(clause, decl, scope, &resolved.dims, actual)?;
        Some(self.scalar_local(id, &decl.name.name, dims, ty, assignable))
    }

    /// Allocates the slots of a function variable of a built-in type, one per element, named
    /// `name[i, j]`.
    pub(super) fn scalar_local(
        &mut self,
        id: FuncId,
        name: &str,
        dims: Vec<usize>,
        ty: ScalarType,
        assignable: bool,
    ) -> LocalVar {
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
    pub(super) fn function_variable_dims(
        &mut self,
        clause: &'a ast::ComponentClause,
        decl: &'a ast::ComponentDecl,
        scope: Scope,
        type_dims: &[&'a ast::Subscript],
        actual: Option<&Vec<usize>>,
    ) -> Option<Vec<usize>> {
        let mut dims = Vec::new();
        // `Real[2] y[3]` is a `Real[3, 2]`, as in a model.
        for sub in (decl.dims.iter())
            .chain(&clause.type_dims)
            .chain(type_dims.iter().copied())
        {
            match sub {
                // A dimension written as a type (`Real u[E]`, `Real b[Boolean]`).
                ast::Subscript::Expr(e) if let Some(n) = self.type_dimension(e, scope) => dims.push(n),
                ast::Subscript::Expr(e) if let Some(n) = self.own_size(e, decl, scope, actual) => dims.push(n),
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

    /// `size(x, k)` written in a dimension of `x`'s own declaration (`input Real A[:, size(A,
    /// 1)]`, a square matrix, as the library's matrix functions declare it): the size of
    /// dimension `k` of the argument, `actual`, of the call this instance is for. `None` for
    /// any other expression, and when there is no argument to read.
    fn own_size(
        &mut self,
        e: &'a ast::Expr,
        decl: &ast::ComponentDecl,
        scope: Scope,
        actual: Option<&Vec<usize>>,
    ) -> Option<usize> {
        let ast::ExprKind::Call { function, args } = &e.kind else {
            return None;
        };
        let ([array, dimension], []) = (&args.positional[..], &args.named[..]) else {
            return None;
        };
        let ast::ExprKind::Ref(r) = &array.kind else {
            return None;
        };
        let names_itself = |c: &ast::ComponentRef| !c.global && c.parts.len() == 1 && c.parts[0].subscripts.is_empty();
        if !names_itself(function) || function.parts[0].name.name != "size" {
            return None;
        }
        if !names_itself(r) || r.parts[0].name.name != decl.name.name {
            return None;
        }
        let actual = actual?;
        let k = self.eval_structural_int(dimension, scope, "the dimension of `size`")?;
        let k = usize::try_from(k).ok().filter(|&k| (1..=actual.len()).contains(&k))?;
        Some(actual[k - 1])
    }

    /// The slots of an array of records of a function: a record local per element, named
    /// `name[i]`, whose fields are locals `name[i].field`.
    pub(super) fn record_array_local(
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
    pub(super) fn record_local(
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
            let var = match resolved.target {
                // An array of records as a field: a record local per element.
                TypeRef::Class(c) if self.is_record(c) && !dims.is_empty() => {
                    self.record_array_local(id, &field_name, c, dims, assignable, span)?
                }
                TypeRef::Class(c) if self.is_record(c) => self.record_local(id, &field_name, c, assignable, span)?,
                TypeRef::Builtin(ty) => self.scalar_local(id, &field_name, dims, ty, assignable),
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
    pub(super) fn local_value(&mut self, e: &'a ast::Expr, var: &LocalVar, scope: Scope) -> Option<Vec<ExprId>> {
        let v = self.eval_initial_value(e, &var.dims, scope)?;
        // A record variable bound to a record value (`output Complex c = Complex(1, 2);`) takes
        // its fields' values in order.
        if var.record.is_some() || var.elements.is_some() {
            return match crate::function_table::record_scalars(&v) {
                Some(scalars) if scalars.len() == var.slots.len() && v.dims() == var.dims.as_slice() => Some(scalars),
                _ => {
                    self.diagnostics.push(Diagnostic::error(
                        "E0306",
                        "a record variable needs a record of its type as its value",
                        e.span,
                        "not that record",
                    ));
                    None
                }
            };
        }
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
}
