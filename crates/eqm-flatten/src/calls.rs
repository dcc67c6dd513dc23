//! Calls in expressions: built-in functions and operators (checked for arity and argument types,
//! applied element-wise to arrays where Modelica vectorises them), the array built-ins evaluated
//! at compile time (`size`, `sum`, `fill`, `identity`, `linspace`, `cross`, ...), and calls of user
//! functions, whose first output is the call's value; `readMatrix`, whose data file is read
//! through `datafiles`.
//!
//! Input: the call's function name and arguments, its [`Scope`] and the loop indices in scope.
//! Output: the [`Value`] of the call, or `None` after a reported diagnostic. It deliberately
//! evaluates no call at compile time beyond the array built-ins: the flat model keeps calls as
//! built-in nodes for later stages.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::layout::Target;
use crate::modifier::Scope;
use crate::value::{self, Value};
use eqm_diag::Diagnostic;
use eqm_ir::builtins::{Builtin, BuiltinKind};
use eqm_ir::expr::{BinOp, ExprId, UnOp};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// A call in an expression: operators rewritten to other expressions, built-in functions,
    /// record constructors, user functions and functional parameters.
    pub(crate) fn eval_call(
        &mut self,
        e: &'a ast::Expr,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let name = crate::names::ref_text(function);
        let rewritten = self.rewritten_call(e, &name, args, scope, loops);
        let rewritten = rewritten.or_else(|| self.stream_operator(e, &name, args, scope, loops));
        if let Some(value) = rewritten.or_else(|| self.graph_query(e, function, args, scope, loops)) {
            return value;
        }
        // The built-in functions live in the global scope, so `.asin(u)` (how a library
        // function named `asin` reaches the built-in one) is the built-in `asin`.
        let builtin_name = match function.parts.as_slice() {
            [part] if function.global && part.subscripts.is_empty() => part.name.name.as_str(),
            _ => &*name,
        };
        let Some(builtin) = Builtin::by_name(builtin_name).filter(|_| !self.shadows_builtin(function, scope)) else {
            return self.non_builtin_call(e, function, args, scope, loops, &name);
        };
        let info = builtin.info();
        let n = args.positional.len();
        if !args.named.is_empty() || n < info.min_args as usize || n > info.max_args as usize {
            let expected = if info.min_args == info.max_args {
                format!("{}", info.min_args)
            } else {
                format!("{} to {}", info.min_args, info.max_args)
            };
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!(
                    "`{name}` takes {expected} positional argument(s), found {n}{}",
                    if args.named.is_empty() { "" } else { " and named ones" }
                ),
                e.span,
                "wrong number of arguments",
            ));
            return None;
        }
        if info.kind == BuiltinKind::Array {
            return self.eval_array_builtin(e, builtin, args, scope, loops);
        }
        if matches!(builtin, Builtin::Min | Builtin::Max)
            && n == 1
            && let Some(reduced) = self.run_time_slice_reduction(&args.positional[0], builtin, scope, loops)
        {
            return Some(reduced);
        }
        let mut values = Vec::with_capacity(n);
        for a in &args.positional {
            values.push(self.eval(a, scope, loops)?);
        }
        match builtin {
            Builtin::Initial | Builtin::Terminal => {
                return Some(Value::Scalar(
                    self.model.exprs.builtin(builtin, Vec::new()),
                    ScalarType::Boolean,
                ));
            }
            Builtin::Sample | Builtin::Edge | Builtin::Change => {
                let elems: Vec<ExprId> = values.iter().flat_map(|v| v.elements()).collect();
                return Some(Value::Scalar(
                    self.model.exprs.builtin(builtin, elems),
                    ScalarType::Boolean,
                ));
            }
            Builtin::Reinit | Builtin::Assert | Builtin::Terminate => {
                self.diagnostics.push(Diagnostic::error(
                    "E0310",
                    format!("`{name}` is an equation, not a value"),
                    e.span,
                    "cannot be used in an expression",
                ));
                return None;
            }
            Builtin::Min | Builtin::Max if n == 1 => {
                let elems = values[0].elements();
                let ty = values[0].ty();
                let exprs = &mut self.model.exprs;
                let Some(r) = value::fold_balanced(&elems, |a, b| exprs.builtin(builtin, vec![a, b])) else {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("`{name}` of an empty array"),
                        e.span,
                        "no elements",
                    ));
                    return None;
                };
                return Some(Value::Scalar(r, ty));
            }
            _ => {}
        }
        self.vectorised_builtin(e, builtin, &name, &values, args)
    }

    /// A call of something that is not a built-in function: a record constructor, a user
    /// function, a functional parameter; otherwise an unknown function (E0204).
    fn non_builtin_call(
        &mut self,
        e: &'a ast::Expr,
        function: &'a ast::ComponentRef,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
        name: &str,
    ) -> Option<Value> {
        if let Some(class) = self.record_class(function, scope) {
            return self.record_call(e, class, function, args, scope, loops);
        }
        let errors = self.diagnostics.len();
        if let Some(callee) = self.function_class(function, scope) {
            let (_, outputs) = self.user_call(&callee, function, args, e.span, scope, loops)?;
            let Some(first) = outputs.into_iter().next() else {
                self.diagnostics.push(Diagnostic::error(
                    "E0309",
                    format!("`{name}` has no output, so its call has no value"),
                    e.span,
                    "no value",
                ));
                return None;
            };
            return Some(first);
        }
        // A redeclared function that does not fit has been reported; it is not unknown.
        if self.diagnostics.len() > errors {
            return None;
        }
        match self.member_named(function, scope) {
            Some(crate::layout::Member::Function(k)) => {
                return self.call_lambda(k, function, args, e.span, scope, loops);
            }
            // A functional parameter without a usable function has been reported.
            Some(crate::layout::Member::Failed) => return None,
            _ => {}
        }
        if name == "spatialDistribution" && !function.global {
            return self.spatial_distribution_as_value(e.span);
        }
        if name.starts_with("Modelica.") && self.modelica_is_embedded() {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0204",
                    format!("`{name}` is part of the Modelica Standard Library but not of EQM's library"),
                    function.span,
                    "no function with this name in EQM's package `Modelica`",
                )
                .with_help("docs/library.md lists the Modelica Standard Library functions that EQM provides; with the library installed, `--library` reads it"),
            );
            return None;
        }
        let mut d = Diagnostic::error(
            "E0204",
            format!("unknown function `{name}`"),
            function.span,
            "no such function",
        );
        let known = eqm_ir::builtins::ALL
            .iter()
            .map(|b| b.name())
            .filter(|n| !n.starts_with('$')) // internal built-ins cannot be written
            .chain(REWRITTEN.iter().copied());
        if let Some(s) = eqm_diag::did_you_mean(name, known) {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        self.diagnostics.push(d);
        None
    }

    /// A scalar built-in function of evaluated arguments, applied element-wise to arrays
    /// (Modelica's vectorisation), with the type of its result.
    fn vectorised_builtin(
        &mut self,
        e: &'a ast::Expr,
        builtin: Builtin,
        name: &str,
        values: &[Value],
        args: &'a ast::CallArgs,
    ) -> Option<Value> {
        for (v, a) in values.iter().zip(&args.positional) {
            if builtin != Builtin::Pre && builtin != Builtin::Smooth && builtin != Builtin::NoEvent {
                self.expect_numeric(v, a)?;
            }
        }
        // A derivative is of a Real expression (MLS 3.7.4): an Integer or Boolean one changes
        // only at events and has none.
        if builtin == Builtin::Der
            && let (Some(v), Some(a)) = (values.first(), args.positional.first())
            && v.ty() != ScalarType::Real
        {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!(
                        "`der` takes a Real expression, not a value of type {}",
                        crate::value::type_name(v.ty())
                    ),
                    a.span,
                    "not a Real",
                )
                .with_help("an Integer changes only at events: it has no derivative"),
            );
            return None;
        }
        let ty = match builtin {
            Builtin::Pre | Builtin::NoEvent | Builtin::Der => {
                if builtin == Builtin::Der {
                    ScalarType::Real
                } else {
                    values[0].ty()
                }
            }
            Builtin::Smooth => values[1].ty(),
            Builtin::Abs | Builtin::Min | Builtin::Max | Builtin::Mod | Builtin::Rem
                if values.iter().all(|v| v.ty() == ScalarType::Integer) =>
            {
                ScalarType::Integer
            }
            // `sign(v)` is `if v > 0 then 1 else if v < 0 then -1 else 0`, an Integer for any `v`.
            Builtin::Integer | Builtin::Sign => ScalarType::Integer,
            Builtin::Div if values.iter().all(|v| v.ty() == ScalarType::Integer) => ScalarType::Integer,
            _ => ScalarType::Real,
        };
        // Scalar functions apply element-wise to arrays (Modelica's vectorisation).
        let dims = values
            .iter()
            .map(|v| v.dims().to_vec())
            .find(|d| !d.is_empty())
            .unwrap_or_default();
        // A scalar call is one element (the empty product); an array with a dimension of size
        // 0 has none.
        let count = dims.iter().product::<usize>();
        let mut out = Vec::with_capacity(count);
        for k in 0..count {
            let mut call_args = Vec::with_capacity(values.len());
            for v in values {
                match v {
                    Value::Scalar(x, _) => call_args.push(*x),
                    Value::Array(d, xs, _) if *d == dims => call_args.push(xs[k]),
                    _ => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            format!("arguments of `{name}` have different array sizes"),
                            e.span,
                            "sizes differ",
                        ));
                        return None;
                    }
                }
            }
            out.push(self.model.exprs.builtin(builtin, call_args));
        }
        Some(if dims.is_empty() {
            Value::Scalar(out[0], ty)
        } else {
            Value::Array(dims, out, ty)
        })
    }

    /// The array functions (`size`, `sum`, `fill`, `linspace`, `transpose`, `cat`, `vector`,
    /// ...), whose arguments are whole arrays rather than elements. The sizes, reductions and
    /// constructors are here; the others are in [`Self::rearranging_builtin`].
    fn eval_array_builtin(
        &mut self,
        e: &'a ast::Expr,
        builtin: Builtin,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let a = &args.positional;
        let int = |f: &mut Self, v: i64| Value::Scalar(f.model.exprs.int(v), ScalarType::Integer);
        match builtin {
            Builtin::Size => {
                let dims = match self.sizes_being_declared(&a[0], scope) {
                    Some(dims) => dims,
                    None => self.eval(&a[0], scope, loops)?.dims().to_vec(),
                };
                if a.len() == 2 {
                    let k = self.eval_structural_int(&a[1], scope, "the dimension of `size`")?;
                    match dims.get((k - 1).max(0) as usize).filter(|_| k >= 1) {
                        Some(&n) => Some(int(self, n as i64)),
                        None => {
                            self.diagnostics.push(Diagnostic::error(
                                "E0304",
                                format!("dimension {k} does not exist"),
                                a[1].span,
                                "out of range",
                            ));
                            None
                        }
                    }
                } else {
                    let elems: Vec<ExprId> = dims.iter().map(|&n| self.model.exprs.int(n as i64)).collect();
                    Some(Value::Array(vec![elems.len()], elems, ScalarType::Integer))
                }
            }
            Builtin::Ndims => {
                let v = self.eval(&a[0], scope, loops)?;
                Some(int(self, v.dims().len() as i64))
            }
            Builtin::Sum | Builtin::Product => {
                if let Some(reduced) = self.run_time_slice_reduction(&a[0], builtin, scope, loops) {
                    return Some(reduced);
                }
                let v = self.eval(&a[0], scope, loops)?;
                if v.is_record() {
                    return self.overloaded_reduction(e, builtin, v, &a[0], scope);
                }
                let ty = v.ty();
                let elems = v.elements();
                let op = if builtin == Builtin::Sum {
                    BinOp::Add
                } else {
                    BinOp::Mul
                };
                let exprs = &mut self.model.exprs;
                let r = match value::fold_balanced(&elems, |a, b| exprs.binary(op, a, b)) {
                    Some(r) => r,
                    None if builtin == Builtin::Sum => exprs.int(0),
                    None => exprs.int(1),
                };
                Some(Value::Scalar(r, ty))
            }
            Builtin::Fill | Builtin::Zeros | Builtin::Ones => {
                let (fill, dim_args) = match builtin {
                    Builtin::Fill => (self.eval(&a[0], scope, loops)?, &a[1..]),
                    Builtin::Zeros => (int(self, 0), &a[..]),
                    _ => (int(self, 1), &a[..]),
                };
                if matches!(fill, Value::Str(_)) {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`fill` of a String is not supported: EQM has no arrays of Strings",
                        a[0].span,
                        "String value",
                    ));
                    return None;
                }
                let mut dims = Vec::new();
                for d in dim_args {
                    dims.push(self.eval_structural_int(d, scope, "an array size")?.max(0) as usize);
                }
                let count = self.check_array_size(&dims, e.span, &format!("`{}`", builtin.name()))?;
                // Modelica: `fill(s, n1, n2, ...)` of any `s` has the dimensions
                // `n1, n2, ...` followed by those of `s`, every element `s`.
                Some(match fill {
                    Value::Scalar(x, ty) => Value::Array(dims, vec![x; count], ty),
                    Value::Array(inner, items, ty) => {
                        dims.extend(&inner);
                        self.check_array_size(&dims, e.span, &format!("`{}`", builtin.name()))?;
                        Value::Array(dims, items.repeat(count), ty)
                    }
                    record @ Value::Record(_) => Value::Records(dims, vec![record; count].into()),
                    Value::Records(inner, records) => {
                        dims.extend(&inner);
                        self.check_array_size(&dims, e.span, &format!("`{}`", builtin.name()))?;
                        let elements: Vec<Value> = (0..count).flat_map(|_| records.iter().cloned()).collect();
                        Value::Records(dims, elements.into())
                    }
                    Value::Str(_) => return None,
                })
            }
            Builtin::Identity => {
                let n = self.eval_structural_int(&a[0], scope, "the size of `identity`")?.max(0) as usize;
                self.check_array_size(&[n, n], e.span, "`identity`")?;
                let (zero, one) = (self.model.exprs.int(0), self.model.exprs.int(1));
                let elems = (0..n * n).map(|k| if k / n == k % n { one } else { zero }).collect();
                Some(Value::Array(vec![n, n], elems, ScalarType::Integer))
            }
            _ => self.rearranging_builtin(e, builtin, args, scope, loops),
        }
    }

    /// The array functions that rearrange or combine their arguments' elements: `transpose`,
    /// `cross`, `diagonal`, `outerProduct` and `cat`; the reshaping ones in
    /// [`Self::reshaping_builtin`].
    fn rearranging_builtin(
        &mut self,
        e: &'a ast::Expr,
        builtin: Builtin,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let a = &args.positional;
        match builtin {
            Builtin::Transpose => {
                let v = self.eval(&a[0], scope, loops)?;
                let Value::Array(d, xs, ty) = &v else { return Some(v) };
                if d.len() != 2 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`transpose` needs a matrix",
                        a[0].span,
                        "not a matrix",
                    ));
                    return None;
                }
                let (r, c) = (d[0], d[1]);
                let elems = (0..r * c).map(|k| xs[(k % r) * c + k / r]).collect();
                Some(Value::Array(vec![c, r], elems, *ty))
            }
            Builtin::Linspace => {
                let x1 = self.eval(&a[0], scope, loops)?;
                let x2 = self.eval(&a[1], scope, loops)?;
                let n = self.eval_structural_int(&a[2], scope, "the count of `linspace`")?;
                if n < 2 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`linspace` needs at least 2 points",
                        a[2].span,
                        "too few points",
                    ));
                    return None;
                }
                self.check_array_size(&[n as usize], e.span, "`linspace`")?;
                let (Value::Scalar(x1, _), Value::Scalar(x2, _)) = (x1, x2) else {
                    return None;
                };
                let diff = self.model.exprs.binary(BinOp::Sub, x2, x1);
                let denom = self.model.exprs.int(n - 1);
                let step = self.model.exprs.binary(BinOp::Div, diff, denom);
                let elems = (0..n)
                    .map(|k| {
                        let kk = self.model.exprs.int(k);
                        let off = self.model.exprs.binary(BinOp::Mul, kk, step);
                        self.model.exprs.binary(BinOp::Add, x1, off)
                    })
                    .collect();
                Some(Value::Array(vec![n as usize], elems, ScalarType::Real))
            }
            Builtin::Cross => {
                let x = self.eval(&a[0], scope, loops)?.elements();
                let y = self.eval(&a[1], scope, loops)?.elements();
                self.cross(x, y, e)
            }
            Builtin::Diagonal => {
                let v = self.eval(&a[0], scope, loops)?;
                let n = self.one_dimensional(&v, &a[0], "diagonal")?;
                let xs = v.elements();
                let zero = self.model.exprs.int(0);
                let elems = (0..n * n)
                    .map(|k| if k / n == k % n { xs[k / n] } else { zero })
                    .collect();
                Some(Value::Array(vec![n, n], elems, v.ty()))
            }
            Builtin::OuterProduct => {
                let x = self.eval(&a[0], scope, loops)?;
                let y = self.eval(&a[1], scope, loops)?;
                let n = self.one_dimensional(&x, &a[0], "outerProduct")?;
                let m = self.one_dimensional(&y, &a[1], "outerProduct")?;
                let (xs, ys) = (x.elements(), y.elements());
                let ty = value::numeric_result(x.ty(), y.ty(), BinOp::Mul);
                let elems = (0..n * m)
                    .map(|k| self.model.exprs.binary(BinOp::Mul, xs[k / m], ys[k % m]))
                    .collect();
                Some(Value::Array(vec![n, m], elems, ty))
            }
            Builtin::Cat => {
                let k = self.eval_structural_int(&a[0], scope, "the dimension of `cat`")?;
                let mut parts = Vec::with_capacity(a.len() - 1);
                for x in &a[1..] {
                    parts.push(self.eval(x, scope, loops)?);
                }
                self.cat(k, parts, e)
            }
            _ => self.reshaping_builtin(e, builtin, args, scope, loops),
        }
    }

    /// The array functions that give their argument another shape (`vector`, `matrix`,
    /// `scalar`, `symmetric`, `skew`) and `readMatrix`.
    fn reshaping_builtin(
        &mut self,
        e: &'a ast::Expr,
        builtin: Builtin,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let a = &args.positional;
        match builtin {
            Builtin::Vector => {
                let v = self.eval(&a[0], scope, loops)?;
                if v.dims().iter().filter(|&&d| d > 1).count() > 1 {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("`vector` needs at most one dimension larger than 1, not {:?}", v.dims()),
                        a[0].span,
                        "not a vector",
                    ));
                    return None;
                }
                let elems = v.elements();
                Some(Value::Array(vec![elems.len()], elems, v.ty()))
            }
            Builtin::Matrix => {
                let v = self.eval(&a[0], scope, loops)?;
                let dims = v.dims().to_vec();
                if dims.iter().skip(2).any(|&d| d != 1) {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("`matrix` needs the dimensions after the second to be 1, not {dims:?}"),
                        a[0].span,
                        "not a matrix",
                    ));
                    return None;
                }
                let (r, c) = (dims.first().copied().unwrap_or(1), dims.get(1).copied().unwrap_or(1));
                Some(Value::Array(vec![r, c], v.elements(), v.ty()))
            }
            Builtin::Scalar => {
                let v = self.eval(&a[0], scope, loops)?;
                match (v.dims().iter().all(|&d| d == 1), v.as_slice()) {
                    (true, [x]) => Some(Value::Scalar(*x, v.ty())),
                    _ => {
                        self.diagnostics.push(Diagnostic::error(
                            "E0304",
                            format!("`scalar` needs an array with one element, not of size {:?}", v.dims()),
                            a[0].span,
                            "not a single element",
                        ));
                        None
                    }
                }
            }
            Builtin::Symmetric | Builtin::Skew => {
                let v = self.eval(&a[0], scope, loops)?;
                self.symmetric_or_skew(builtin, v, &a[0])
            }
            // A data file read now: the matrix is constant in the flat model.
            Builtin::ReadMatrix => self.read_matrix(e, &a[0], scope),
            _ => None,
        }
    }

    /// `cross(x, y)` of the elements of two 3-vectors.
    fn cross(&mut self, x: Vec<ExprId>, y: Vec<ExprId>, e: &ast::Expr) -> Option<Value> {
        if x.len() != 3 || y.len() != 3 {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "`cross` needs two 3-vectors",
                e.span,
                "not 3-vectors",
            ));
            return None;
        }
        let mut comp = |i: usize, j: usize| {
            let p = self.model.exprs.binary(BinOp::Mul, x[i], y[j]);
            let q = self.model.exprs.binary(BinOp::Mul, x[j], y[i]);
            self.model.exprs.binary(BinOp::Sub, p, q)
        };
        let elems = vec![comp(1, 2), comp(2, 0), comp(0, 1)];
        Some(Value::Array(vec![3], elems, ScalarType::Real))
    }

    /// `symmetric(A)` of a square matrix (its upper triangle mirrored) or `skew(x)` of a
    /// 3-vector (the matrix of the cross product with `x`).
    fn symmetric_or_skew(&mut self, builtin: Builtin, v: Value, at: &ast::Expr) -> Option<Value> {
        let xs = v.elements();
        match (builtin, v.dims()) {
            (Builtin::Symmetric, &[n, m]) if n == m => {
                // The upper triangle mirrored: element (i, j) is a[min(i, j), max(i, j)].
                let elems = (0..n * n)
                    .map(|k| xs[(k / n).min(k % n) * n + (k / n).max(k % n)])
                    .collect();
                Some(Value::Array(vec![n, n], elems, v.ty()))
            }
            (Builtin::Skew, &[3]) => {
                let arena = &mut self.model.exprs;
                let zero = arena.int(0);
                let (x0, x1, x2) = (xs[0], xs[1], xs[2]);
                let (n0, n1, n2) = (
                    arena.unary(UnOp::Neg, x0),
                    arena.unary(UnOp::Neg, x1),
                    arena.unary(UnOp::Neg, x2),
                );
                let elems = vec![zero, n2, x1, x2, zero, n0, n1, x0, zero];
                Some(Value::Array(vec![3, 3], elems, v.ty()))
            }
            _ => {
                let wanted = if builtin == Builtin::Skew {
                    "a 3-vector"
                } else {
                    "a square matrix"
                };
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!(
                        "`{}` needs {wanted}, not an array of size {:?}",
                        builtin.name(),
                        v.dims()
                    ),
                    at.span,
                    "wrong size",
                ));
                None
            }
        }
    }

    /// The length of `v` when it is a vector; a diagnostic naming `function` otherwise.
    fn one_dimensional(&mut self, v: &Value, at: &ast::Expr, function: &str) -> Option<usize> {
        match *v.dims() {
            [n] => Some(n),
            ref dims => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("`{function}` needs a vector, not an array of size {dims:?}"),
                    at.span,
                    "not a vector",
                ));
                None
            }
        }
    }

    /// `cat(k, a, b, ...)`: the arrays joined along dimension `k` (1 is the first); all other
    /// dimensions must agree.
    fn cat(&mut self, k: i64, parts: Vec<Value>, e: &ast::Expr) -> Option<Value> {
        let first = parts.first().map(|p| p.dims().to_vec()).unwrap_or_default();
        let fits = |p: &Value| {
            p.dims().len() == first.len()
                && p.dims()
                    .iter()
                    .zip(&first)
                    .enumerate()
                    .all(|(d, (x, y))| d as i64 == k - 1 || x == y)
                && !matches!(p, Value::Str(_) | Value::Record(_) | Value::Records(..))
        };
        if k < 1 || k as usize > first.len() || !parts.iter().all(fits) {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("`cat({k}, ...)` needs arrays of one rank of at least {k} whose other dimensions agree"),
                e.span,
                "sizes differ",
            ));
            return None;
        }
        let d = k as usize - 1;
        // Blocks of the dimensions before `d` (outer) are interleaved part by part.
        let outer: usize = first[..d].iter().product();
        let inner: usize = first[d + 1..].iter().product();
        let mut elements = Vec::new();
        for o in 0..outer {
            for p in &parts {
                let n = p.dims()[d] * inner;
                elements.extend_from_slice(&p.as_slice()[o * n..(o + 1) * n]);
            }
        }
        let ty = if parts.iter().all(|p| p.ty() == ScalarType::Integer) {
            ScalarType::Integer
        } else {
            ScalarType::Real
        };
        let mut dims = first;
        dims[d] = parts.iter().map(|p| p.dims()[d]).sum();
        Some(Value::Array(dims, elements, ty))
    }
}

/// The names of the operators [`Flattener::rewritten_call`] turns into other expressions.
const REWRITTEN: &[&str] = &[
    "semiLinear",
    "Integer",
    "String",
    "cardinality",
    "getInstanceName",
    "array",
];

impl<'t, 'a> Flattener<'t, 'a> {
    /// `Integer(e)` of an enumeration value (its position; enumerations are Integers already)
    /// and `String(x, options)`: the text of a Boolean, Integer or Real known at compile time
    /// (a Real with 6 significant digits unless the options say otherwise), or of an
    /// enumeration literal (`"Heating"`). A `String` of a value that changes during the run is
    /// a part of the message that the run fills in when the message is reported.
    fn conversion(
        &mut self,
        e: &'a ast::Expr,
        name: &str,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        let ([arg], named) = (&args.positional[..], &args.named[..]) else {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!("`{name}` takes one positional argument"),
                e.span,
                "wrong arguments",
            ));
            return None;
        };
        if name == "String"
            && let Some(literal) = self.enumeration_literal_name(arg, scope)
        {
            let format = self.string_format(&args.named, ScalarType::Boolean, scope, loops)?;
            return Some(Value::Str(eqm_ir::flat::Message::literal(format.justify(literal))));
        }
        let v = self.eval(arg, scope, loops)?;
        if name == "String" && v.is_record() {
            return self.overloaded_string(e, v, arg, named, scope, loops);
        }
        let Value::Scalar(x, ty) = v else {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("`{name}` needs a scalar"),
                arg.span,
                "not a scalar",
            ));
            return None;
        };
        if name == "Integer" {
            if !named.is_empty() {
                self.diagnostics.push(Diagnostic::error(
                    "E0309",
                    "`Integer` takes one positional argument",
                    e.span,
                    "wrong arguments",
                ));
                return None;
            }
            if ty != ScalarType::Integer {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    "`Integer(e)` converts an enumeration value; for a Real use `integer(x)`",
                    arg.span,
                    "not an enumeration",
                ));
                return None;
            }
            return Some(Value::Scalar(x, ScalarType::Integer));
        }
        if name == "String" && ty == ScalarType::String {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                "`String` converts a Real, Integer, Boolean or enumeration value",
                arg.span,
                "not a number",
            ));
            return None;
        }
        let mut format = self.string_format(&args.named, ty, scope, loops)?;
        format.literals = self.enumeration_names_of_expr(arg, x, scope, loops);
        let known = self.model.exprs.literal(x).or_else(|| self.consts.eval(&self.model, x));
        // A value known only during the run is a part of the text that the run fills in.
        let text = eqm_ir::flat::Message {
            parts: vec![eqm_ir::flat::MessagePart::Formatted {
                expr: x,
                ty,
                written: eqm_syntax::pretty::print_expr(arg).trim().to_string(),
                format: Box::new(format),
            }],
        };
        Some(Value::Str(match known {
            Some(k) => eqm_ir::flat::Message::literal(text.render(&mut |_| Some(k))),
            None => text,
        }))
    }

    /// `cardinality(c)`: the number of connects that name the connector `c`, a constant. Only
    /// known once every connect is (see
    /// [`ConnectionState::counting_equations`](crate::connections::ConnectionState::counting_equations)),
    /// so only allowed in the equations flattened then: if-equations and asserts, as Modelica
    /// restricts it.
    fn cardinality(
        &mut self,
        e: &'a ast::Expr,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        if !self.connections.counting {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0310",
                    "`cardinality` is only allowed in the equations of a model (in if-conditions and asserts) and in the bindings of variables that are not parameters",
                    e.span,
                    "not allowed here",
                )
                .with_help("it counts the connects of a connector, which are known only once the model is"),
            );
            return None;
        }
        let ([arg], []) = (&args.positional[..], &args.named[..]) else {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                "`cardinality` takes one connector",
                e.span,
                "wrong arguments",
            ));
            return None;
        };
        let not_a_connector = |f: &mut Self, what: &str| {
            f.diagnostics.push(
                Diagnostic::error("E0301", "`cardinality` needs one connector", arg.span, what)
                    .with_help("for an array of connectors, apply it to one element: `cardinality(c[1])`"),
            );
            None
        };
        let ast::ExprKind::Ref(c) = &arg.kind else {
            return not_a_connector(self, "not a connector");
        };
        let (dims, targets) = self.resolve_targets(c, scope, loops)?;
        let [target] = &targets[..] else {
            return not_a_connector(self, "an array of connectors");
        };
        let is_connector = match *target {
            Target::Inst(i) => self.instances[i.0 as usize].is_connector,
            Target::Var(v) => self.var_kinds[v.0 as usize].is_connector_type,
        };
        if !dims.is_empty() || !is_connector {
            return not_a_connector(
                self,
                if is_connector {
                    "an array of connectors"
                } else {
                    "not a connector"
                },
            );
        }
        let count = self
            .connections
            .connector_uses
            .as_ref()
            .and_then(|uses| uses.get(target))
            .copied();
        Some(Value::Scalar(
            self.model.exprs.int(i64::from(count.unwrap_or(0))),
            ScalarType::Integer,
        ))
    }

    /// The operators whose arguments are given by name: `homotopy(actual, simplified)` is the
    /// built-in call with its arguments in that order, element by element for arrays (the
    /// compiler decides what it means where: see `eqm_compile::homotopy`), and
    /// `semiLinear(x, kp, kn)` is `smooth(0, if x >= 0 then kp*x else kn*x)` (continuous, so no
    /// events). `None` when `name` is neither; `Some(None)` after a diagnostic.
    fn rewritten_call(
        &mut self,
        e: &'a ast::Expr,
        name: &str,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<Value>> {
        let formals: &[&str] = match name {
            "homotopy" => &["actual", "simplified"],
            "semiLinear" => &["x", "positiveSlope", "negativeSlope"],
            "Integer" | "String" => return Some(self.conversion(e, name, args, scope, loops)),
            "cardinality" => return Some(self.cardinality(e, args, scope, loops)),
            "getInstanceName" => return Some(self.instance_name(e, args, scope)),
            "array" => return Some(self.array_call(e, args, scope, loops)),
            _ => return None,
        };
        // Positional arguments first, then the named ones by their formal names.
        let mut given: Vec<Option<&'a ast::Expr>> = vec![None; formals.len()];
        let mut wrong = args.positional.len() > formals.len();
        for (slot, a) in given.iter_mut().zip(&args.positional) {
            *slot = Some(a);
        }
        for (ident, a) in &args.named {
            match formals.iter().position(|f| *f == ident.name) {
                Some(k) if given[k].is_none() => given[k] = Some(a),
                _ => wrong = true,
            }
        }
        if wrong || given.iter().any(Option::is_none) {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                format!("`{name}` takes the arguments ({})", formals.join(", ")),
                e.span,
                "wrong arguments",
            ));
            return Some(None);
        }
        let mut values = Vec::with_capacity(formals.len());
        for a in given.into_iter().flatten() {
            let Some(v) = self.eval(a, scope, loops) else {
                return Some(None);
            };
            if self.expect_numeric(&v, a).is_none() {
                return Some(None);
            }
            values.push(v);
        }
        let scalar = |v: &Value| v.elements().first().copied();
        Some(match name {
            "homotopy" => {
                let simplified = values.pop()?;
                let actual = values.pop()?;
                if actual.dims() != simplified.dims() {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        "`homotopy` needs `actual` and `simplified` of the same size",
                        e.span,
                        "sizes differ",
                    ));
                    return Some(None);
                }
                let elements: Vec<_> = actual
                    .elements()
                    .into_iter()
                    .zip(simplified.elements())
                    .map(|(a, s)| self.model.exprs.builtin(Builtin::Homotopy, vec![a, s]))
                    .collect();
                match actual {
                    Value::Scalar(..) => elements.first().map(|h| Value::Scalar(*h, ScalarType::Real)),
                    Value::Array(dims, _, _) => Some(Value::Array(dims, elements, ScalarType::Real)),
                    _ => None,
                }
            }
            _ => {
                let (Some(x), Some(kp), Some(kn)) = (scalar(&values[0]), scalar(&values[1]), scalar(&values[2])) else {
                    return Some(None);
                };
                let exprs = &mut self.model.exprs;
                let zero = exprs.real(0.0);
                let condition = exprs.binary(eqm_ir::expr::BinOp::Ge, x, zero);
                let positive = exprs.binary(eqm_ir::expr::BinOp::Mul, kp, x);
                let negative = exprs.binary(eqm_ir::expr::BinOp::Mul, kn, x);
                let choice = exprs.add(eqm_ir::expr::Node::If(condition, positive, negative));
                let order = exprs.int(0);
                Some(Value::Scalar(
                    exprs.builtin(Builtin::Smooth, vec![order, choice]),
                    ScalarType::Real,
                ))
            }
        })
    }

    /// `array(a, b, c)`: the array of its arguments, as `{a, b, c}` (Modelica 10.4.1).
    fn array_call(
        &mut self,
        e: &'a ast::Expr,
        args: &'a ast::CallArgs,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Value> {
        if args.positional.is_empty() || !args.named.is_empty() {
            self.diagnostics.push(Diagnostic::error(
                "E0309",
                "`array` takes the elements of the array as positional arguments",
                e.span,
                "wrong arguments",
            ));
            return None;
        }
        let values: Option<Vec<Value>> = (args.positional.iter()).map(|a| self.eval(a, scope, loops)).collect();
        self.concat(values?, e)
    }
}
