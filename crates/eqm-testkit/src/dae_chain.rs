//! A generated flat model for benchmarks of the passes after flattening: a chain of masses and
//! springs written the way connections flatten it (flange positions and forces as aliases), so
//! that alias elimination, index reduction, the plan and the initialization all see a realistic
//! DAE without the cost of parsing and flattening 10^6 equations.
//!
//! Stage i has seven variables (position, velocity, two flange positions, two flange forces,
//! spring force) and seven equations, four of them aliases: `sa = s`, `sb = s`, `der(s) = v`,
//! `m*der(v) = fa + fb`, `f = c*(next sa - sb)`, `fb = f`, `next fa = -f` (the first `fa` is 0,
//! the last spring ends at a wall at position 0).

use eqm_diag::source::{FileId, Span};
use eqm_ir::expr::{BinOp, ExprArena, UnOp, VarId};
use eqm_ir::flat::{
    Attributes, Causality, ConnectorRole, Equation, FlatModel, Instance, InstanceId, Origin, ScalarType, Variability,
    Variable,
};
use std::sync::Arc;

/// Equations per stage.
pub const STAGE: usize = 7;

fn variable(name: String, variability: Variability, binding: Option<eqm_ir::expr::ExprId>, span: Span) -> Variable {
    Variable {
        name,
        instance: InstanceId(0),
        variability,
        ty: ScalarType::Real,
        causality: Causality::None,
        role: ConnectorRole::None,
        attributes: Attributes::default(),
        binding,
        value: binding.map(|_| 1.0),
        description: None,
        span,
    }
}

/// The flat model of `stages` masses and springs.
pub fn chain(stages: usize) -> FlatModel {
    let span = Span::new(FileId(0), 0, 0);
    let mut exprs = ExprArena::new();
    let one = exprs.real(1.0);
    let mut variables = vec![
        variable("m".into(), Variability::Parameter, Some(one), span),
        variable("c".into(), Variability::Parameter, Some(one), span),
    ];
    let (m, c) = (exprs.var(VarId(0)), exprs.var(VarId(1)));
    let base = variables.len();
    let id = |stage: usize, k: usize| VarId((base + STAGE * stage + k) as u32);
    for i in 0..stages {
        for field in ["s", "v", "sa", "sb", "fa", "fb", "f"] {
            variables.push(variable(
                format!("{field}[{}]", i + 1),
                Variability::Continuous,
                None,
                span,
            ));
        }
    }
    let mut equations = Vec::with_capacity(STAGE * stages);
    let eq = |lhs, rhs| Equation {
        lhs,
        rhs,
        origin: Origin::Equation {
            instance: InstanceId(0),
        },
        span,
        array: None,
    };
    for i in 0..stages {
        let [s, v, sa, sb, fa, fb, f] = std::array::from_fn(|k| exprs.var(id(i, k)));
        equations.push(eq(sa, s));
        equations.push(eq(sb, s));
        let ds = exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![s]);
        equations.push(eq(ds, v));
        let dv = exprs.builtin(eqm_ir::builtins::Builtin::Der, vec![v]);
        let lhs = exprs.binary(BinOp::Mul, m, dv);
        let rhs = exprs.binary(BinOp::Add, fa, fb);
        equations.push(eq(lhs, rhs));
        let next = if i + 1 < stages {
            exprs.var(id(i + 1, 2))
        } else {
            exprs.real(0.0)
        };
        let stretch = exprs.binary(BinOp::Sub, next, sb);
        let force = exprs.binary(BinOp::Mul, c, stretch);
        equations.push(eq(f, force));
        equations.push(eq(fb, f));
        let minus_f = exprs.unary(UnOp::Neg, f);
        if i + 1 < stages {
            let next_fa = exprs.var(id(i + 1, 4));
            equations.push(eq(next_fa, minus_f));
        } else {
            let first_fa = exprs.var(id(0, 4));
            let zero = exprs.real(0.0);
            equations.push(eq(first_fa, zero));
        }
    }
    FlatModel {
        name: "Chain".into(),
        exprs,
        instances: vec![Instance {
            name: String::new(),
            class_name: Arc::from("Chain"),
            parent: None,
            is_connector: false,
            span,
        }],
        variables,
        equations,
        ..FlatModel::default()
    }
}
