//! `(out0, out1) = spatialDistribution(in0, in1, x, positiveVelocity, initialPoints,
//! initialValues)`: the checks of the call and its two outputs as internal built-in calls.
//!
//! Input: the call's arguments (positional or named, `initialPoints = {0, 1}` and
//! `initialValues = {0, 0}` by default) in a scope. Output: the values of `out0` and `out1`,
//! each a call of the internal built-in `$spatialDistribution` with the arguments `in0, in1, x,
//! positiveVelocity`, the output (0 or 1), the initial points and the initial values (numbers
//! known at translation); the event extraction turns both into reads of one profile. Wrong
//! calls are diagnostics: an unknown, repeated or missing argument or more than two outputs
//! (`E0309`), a value of the wrong type (`E0306`), initial points and values of different sizes
//! or not known at translation (`E0304`, `E0206`), initial points that do not go from 0 to 1
//! without decreasing (`E0326`), a call used as a value (`E0310`; one inside a function is
//! refused where statements are flattened). The vectorized form (arrays `in0` and `in1` of one
//! size, MLS §3.7.4.2) is one call per element, each with the shared `x` and
//! `positiveVelocity` and its own initial profile (a row of `initialPoints`/`initialValues`
//! given with one more dimension, or the vector shared by all); its outputs are arrays of the
//! same size. Deliberately not here: the position `x`, checked when the program is built.

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::ExprId;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

/// The inputs of `spatialDistribution`, in order.
const INPUTS: [&str; 6] = ["in0", "in1", "x", "positiveVelocity", "initialPoints", "initialValues"];

impl<'t, 'a> Flattener<'t, 'a> {
    /// The values of `out0` and `out1` of a `spatialDistribution` call with `targets` outputs
    /// listed (see the module documentation).
    pub(crate) fn spatial_distribution(
        &mut self,
        args: &'a ast::CallArgs,
        targets: (usize, Span),
        call_span: Span,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<Value>> {
        let wrong_call = |message: String, span: Span, label: &str| Diagnostic::error("E0309", message, span, label);
        if targets.0 > 2 {
            self.diagnostics.push(wrong_call(
                format!("`spatialDistribution` has 2 outputs, but {} are listed", targets.0),
                targets.1,
                "too many targets",
            ));
            return None;
        }
        let mut given: [Option<&'a ast::Expr>; 6] = [None; 6];
        if args.positional.len() > INPUTS.len() {
            self.diagnostics.push(wrong_call(
                format!(
                    "`spatialDistribution` has 6 inputs, but {} arguments are given",
                    args.positional.len()
                ),
                args.span,
                "too many arguments",
            ));
            return None;
        }
        for (k, a) in args.positional.iter().enumerate() {
            given[k] = Some(a);
        }
        for (name, a) in &args.named {
            match INPUTS.iter().position(|n| *n == name.name) {
                Some(k) if given[k].is_none() => given[k] = Some(a),
                Some(_) => {
                    self.diagnostics.push(wrong_call(
                        format!("the input `{}` of `spatialDistribution` is given twice", name.name),
                        a.span,
                        "given again",
                    ));
                    return None;
                }
                None => {
                    self.diagnostics.push(
                        wrong_call(
                            format!("`spatialDistribution` has no input `{}`", name.name),
                            a.span,
                            "unknown input",
                        )
                        .with_help(format!("its inputs are {}", INPUTS.join(", "))),
                    );
                    return None;
                }
            }
        }
        if let Some(k) = (0..4).find(|&k| given[k].is_none()) {
            self.diagnostics.push(wrong_call(
                format!("the input `{}` of `spatialDistribution` is missing", INPUTS[k]),
                call_span,
                "argument missing",
            ));
            return None;
        }
        let (dims, in0) = self.spatial_input(given[0].expect("checked above"), 0, None, scope, loops)?;
        let (_, in1) = self.spatial_input(given[1].expect("checked above"), 1, Some(&dims), scope, loops)?;
        let x = self.spatial_scalar(given[2].expect("checked above"), 2, scope, loops)?;
        let positive = self.spatial_scalar(given[3].expect("checked above"), 3, scope, loops)?;
        let points = self.initial_profile(given[4], &[0.0, 1.0], INPUTS[4], &dims, scope, loops)?;
        let values = self.initial_profile(given[5], &[0.0, 0.0], INPUTS[5], &dims, scope, loops)?;
        for (points, values) in points.iter().zip(&values) {
            self.check_profile(
                points,
                values,
                given[4].map_or(call_span, |a| a.span),
                given[5].map_or(call_span, |a| a.span),
            )?;
        }
        // One call per element: each element is a transport of its own, moved by the one `x`.
        let exprs = &mut self.model.exprs;
        let outputs = [0, 1].map(|output| {
            let elements: Vec<ExprId> = (0..in0.len())
                .map(|k| {
                    let mut call_args = vec![in0[k], in1[k], x, positive, exprs.int(output)];
                    call_args.extend(points[k].iter().chain(&values[k]).map(|&v| exprs.real(v)));
                    exprs.builtin(Builtin::SpatialDistribution, call_args)
                })
                .collect();
            if dims.is_empty() {
                Value::Scalar(elements[0], ScalarType::Real)
            } else {
                Value::Array(dims.clone(), elements, ScalarType::Real)
            }
        });
        Some(outputs.to_vec())
    }

    /// `in0` or `in1` (`k` 0 or 1): its size (empty for a scalar) and its elements, a Real
    /// scalar or array; `in1` must have the size `same` of `in0`.
    fn spatial_input(
        &mut self,
        a: &'a ast::Expr,
        k: usize,
        same: Option<&[usize]>,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Vec<usize>, Vec<ExprId>)> {
        let (dims, elements) = match self.eval(a, scope, loops)? {
            Value::Scalar(e, ty) if is_number(ty) => (Vec::new(), vec![e]),
            Value::Array(dims, elements, ty) if is_number(ty) => (dims, elements),
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!(
                        "the input `{}` of `spatialDistribution` must be a Real scalar or array",
                        INPUTS[k]
                    ),
                    a.span,
                    "not Real",
                ));
                return None;
            }
        };
        if let Some(same) = same
            && same != dims.as_slice()
        {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!(
                    "`in0` and `in1` of `spatialDistribution` must have the same size, but they are {} and {}",
                    shown_size(same),
                    shown_size(&dims)
                ),
                a.span,
                "sizes differ",
            ));
            return None;
        }
        Some((dims, elements))
    }

    /// `x` (`k` = 2, a Real scalar) or `positiveVelocity` (`k` = 3, a Boolean scalar): both are
    /// shared by every element of the vectorized form.
    fn spatial_scalar(&mut self, a: &'a ast::Expr, k: usize, scope: Scope, loops: &mut Loops) -> Option<ExprId> {
        let boolean = k == 3;
        match self.eval(a, scope, loops)? {
            Value::Scalar(e, ty) if boolean == (ty == ScalarType::Boolean) && ty != ScalarType::String => Some(e),
            _ => {
                let wanted = if boolean { "a Boolean" } else { "a Real scalar" };
                self.diagnostics.push(Diagnostic::error(
                    "E0306",
                    format!("the input `{}` of `spatialDistribution` must be {wanted}", INPUTS[k]),
                    a.span,
                    format!("not {wanted}"),
                ));
                None
            }
        }
    }

    /// Checks one element's initial profile: as many points as values, points going from 0 to
    /// 1 without decreasing, finite values.
    fn check_profile(&mut self, points: &[f64], values: &[f64], points_span: Span, values_span: Span) -> Option<()> {
        if points.len() != values.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!(
                    "`initialPoints` has {} elements but `initialValues` has {}",
                    points.len(),
                    values.len()
                ),
                values_span,
                "sizes differ",
            ));
            return None;
        }
        let increasing = points.windows(2).all(|w| w[0] <= w[1]);
        if points.len() < 2 || points[0] != 0.0 || points[points.len() - 1] != 1.0 || !increasing {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0326",
                    "the `initialPoints` of `spatialDistribution` must go from 0 to 1 without decreasing",
                    points_span,
                    format!("{points:?}"),
                )
                .with_help("give the positions of the initial profile, the first 0 and the last 1 (two equal positions are a jump)"),
            );
            return None;
        }
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            self.diagnostics.push(Diagnostic::error(
                "E0306",
                format!("the `initialValues` of `spatialDistribution` must be finite numbers, not {v}"),
                values_span,
                "not finite",
            ));
            return None;
        }
        Some(())
    }

    /// `E0310` for `spatialDistribution` called where one value is needed (at `span`).
    pub(crate) fn spatial_distribution_as_value(&mut self, span: Span) -> Option<Value> {
        self.diagnostics.push(
            Diagnostic::error(
                "E0310",
                "`spatialDistribution` has two outputs and is called only as an equation or a statement with both listed on the left",
                span,
                "used as a value",
            )
            .with_help("write `(out0, out1) = spatialDistribution(in0, in1, x, positiveVelocity)`, leaving out an output not needed: `(, out1) = ...`"),
        );
        None
    }

    /// The numbers of `initialPoints` or `initialValues` (`default` when not given), one row
    /// per element of `in0` (of size `dims`): a vector known at translation, shared by every
    /// element, or for the vectorized form an array of size `dims` and one more dimension, an
    /// element's own vector.
    fn initial_profile(
        &mut self,
        given: Option<&'a ast::Expr>,
        default: &[f64],
        name: &str,
        dims: &[usize],
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<Vec<f64>>> {
        let count: usize = dims.iter().product();
        let Some(a) = given else {
            return Some(vec![default.to_vec(); count]);
        };
        let value = self.eval(a, scope, loops)?;
        let (shared, elements) = match value {
            Value::Array(own, elements, ty) if is_number(ty) && own.len() == 1 => (true, elements),
            Value::Array(own, elements, ty)
                if is_number(ty) && !dims.is_empty() && own.len() == dims.len() + 1 && own[..dims.len()] == *dims =>
            {
                (false, elements)
            }
            _ => {
                let per_element = if dims.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", or an array of size {} with one more dimension (a vector per element of `in0`)",
                        shown_size(dims)
                    )
                };
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("`{name}` of `spatialDistribution` must be a vector of numbers{per_element}"),
                    a.span,
                    "not a vector of numbers",
                ));
                return None;
            }
        };
        let mut numbers = Vec::with_capacity(elements.len());
        for e in elements {
            match self.consts.eval(&self.model, e) {
                Some(v) => {
                    self.note_structural(e);
                    numbers.push(v);
                }
                None => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0206",
                            format!("`{name}` of `spatialDistribution` must be known at translation"),
                            a.span,
                            "depends on values only known during simulation",
                        )
                        .with_help("use parameters or constants with bindings"),
                    );
                    return None;
                }
            }
        }
        if shared {
            return Some(vec![numbers; count]);
        }
        let row = numbers.len() / count.max(1);
        Some(numbers.chunks(row.max(1)).map(<[f64]>::to_vec).collect())
    }
}

/// Whether a value of type `ty` is a number (Real or Integer).
fn is_number(ty: ScalarType) -> bool {
    ty != ScalarType::String && ty != ScalarType::Boolean
}

/// A size as Modelica writes it in a declaration: `[2, 3]`, or `scalar`.
fn shown_size(dims: &[usize]) -> String {
    if dims.is_empty() {
        return "scalar".to_string();
    }
    let sizes: Vec<String> = dims.iter().map(usize::to_string).collect();
    format!("[{}]", sizes.join(", "))
}
