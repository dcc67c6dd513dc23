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
//! refused where statements are flattened). Deliberately not here: the vectorized form (arrays
//! `in0` and `in1`, `E0317`), and the position `x`, checked when the program is built.

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
        let mut scalars = Vec::with_capacity(4);
        for (k, a) in given[..4].iter().enumerate() {
            let a = a.expect("checked above");
            let value = self.eval(a, scope, loops)?;
            let boolean = k == 3;
            match value {
                Value::Scalar(e, ty) if boolean == (ty == ScalarType::Boolean) && ty != ScalarType::String => {
                    scalars.push(e)
                }
                Value::Array(..) if !boolean => {
                    self.diagnostics.push(
                        Diagnostic::error(
                            "E0317",
                            "`spatialDistribution` of arrays (its vectorized form) is not supported by EQM",
                            a.span,
                            "an array",
                        )
                        .with_help("call it once per element"),
                    );
                    return None;
                }
                _ => {
                    let wanted = if boolean { "a Boolean" } else { "a Real scalar" };
                    self.diagnostics.push(Diagnostic::error(
                        "E0306",
                        format!("the input `{}` of `spatialDistribution` must be {wanted}", INPUTS[k]),
                        a.span,
                        format!("not {wanted}"),
                    ));
                    return None;
                }
            }
        }
        let points = self.initial_profile(given[4], &[0.0, 1.0], INPUTS[4], scope, loops)?;
        let values = self.initial_profile(given[5], &[0.0, 0.0], INPUTS[5], scope, loops)?;
        let points_span = given[4].map_or(call_span, |a| a.span);
        if points.len() != values.len() {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!(
                    "`initialPoints` has {} elements but `initialValues` has {}",
                    points.len(),
                    values.len()
                ),
                given[5].map_or(call_span, |a| a.span),
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
                given[5].map_or(call_span, |a| a.span),
                "not finite",
            ));
            return None;
        }
        let exprs = &mut self.model.exprs;
        let profile: Vec<ExprId> = points.iter().chain(&values).map(|&v| exprs.real(v)).collect();
        let outputs = [0, 1].map(|output| {
            let mut call_args = scalars.clone();
            call_args.push(exprs.int(output));
            call_args.extend_from_slice(&profile);
            Value::Scalar(exprs.builtin(Builtin::SpatialDistribution, call_args), ScalarType::Real)
        });
        Some(outputs.to_vec())
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

    /// The numbers of `initialPoints` or `initialValues` (`default` when not given), which
    /// must be a vector known at translation.
    fn initial_profile(
        &mut self,
        given: Option<&'a ast::Expr>,
        default: &[f64],
        name: &str,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Vec<f64>> {
        let Some(a) = given else {
            return Some(default.to_vec());
        };
        let value = self.eval(a, scope, loops)?;
        let elements = match value {
            Value::Array(dims, elements, ty)
                if dims.len() == 1 && ty != ScalarType::String && ty != ScalarType::Boolean =>
            {
                elements
            }
            _ => {
                self.diagnostics.push(Diagnostic::error(
                    "E0304",
                    format!("`{name}` of `spatialDistribution` must be a vector of numbers"),
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
        Some(numbers)
    }
}
