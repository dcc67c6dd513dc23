//! The text of `eqm explain`: the structural analysis as a person follows it.
//!
//! Input: the lowered [`Dae`], the [`AliasReport`] and the [`Plan`]. Output: a deterministic,
//! readable listing: counts, states and why they are states, the aliases removed, the matching
//! ("equation (origin) solves for variable"), and the sorted assignment list with algebraic loops,
//! their tearing variables and residuals. This module only formats; it decides nothing.

use crate::alias::AliasReport;
use crate::dae::{Dae, VarKind};
use crate::plan::{Block, Plan, unknown_name};
use std::fmt::Write as _;

pub fn explain(dae: &Dae, aliases: &AliasReport, plan: &Plan) -> String {
    let mut out = String::new();
    let flat = &dae.flat;
    let text = |e| flat.expr_text(e);
    let _ = writeln!(
        out,
        "model {}: {} equations in {} unknowns after removing {} alias equation(s)",
        flat.name,
        dae.equations.len(),
        plan.unknowns.len(),
        aliases.removed_equations
    );

    let states: Vec<_> = dae.states().collect();
    let _ = writeln!(out, "\nstates ({}):", states.len());
    for x in &states {
        let v = flat.var(*x);
        let start = match v.attributes.start {
            Some(s) => format!(
                ", start = {}{}",
                text(s),
                if v.attributes.fixed == Some(true) {
                    " (fixed)"
                } else {
                    ""
                }
            ),
            None => String::new(),
        };
        let _ = writeln!(out, "  {}  (appears differentiated as der({}){start})", v.name, v.name);
    }

    let _ = writeln!(
        out,
        "\naliases removed ({} variables, {} constants):",
        aliases.aliases.len(),
        aliases.constants.len()
    );
    for (v, rep, sign, origin) in &aliases.aliases {
        let _ = writeln!(
            out,
            "  {} = {}{}{}",
            flat.var(*v).name,
            if *sign < 0.0 { "-" } else { "" },
            flat.var(*rep).name,
            origin_comment(dae, origin)
        );
    }
    for (v, value, origin) in &aliases.constants {
        let _ = writeln!(
            out,
            "  {} = {}{}",
            flat.var(*v).name,
            text(*value),
            origin_comment(dae, origin)
        );
    }

    let _ = writeln!(out, "\nmatching (equation solves for unknown):");
    for (k, eq) in dae.equations.iter().enumerate() {
        let Some(&u) = plan.matching.get(k) else { continue };
        let _ = writeln!(
            out,
            "  e{}: {}  // {}\n      solves for {}",
            k + 1,
            dae.equation_text(eq),
            dae.origin_label(&eq.origin),
            unknown_name(dae, plan.unknowns[u])
        );
    }

    let _ = writeln!(out, "\nsorted assignments:");
    let loops = plan.blocks.iter().filter(|b| matches!(b, Block::Loop { .. })).count();
    for (index, block) in plan.blocks.iter().enumerate() {
        let step = index + 1;
        match block {
            Block::Explicit { eq, unknown, value } => {
                let _ = writeln!(
                    out,
                    "  {step}. {} := {}  // e{}",
                    unknown_name(dae, plan.unknowns[*unknown]),
                    text(*value),
                    eq + 1
                );
            }
            Block::Algorithm { unknown, algorithm, .. } => {
                let _ = writeln!(
                    out,
                    "  {step}. {} := result of the algorithm section of {}",
                    unknown_name(dae, plan.unknowns[*unknown]),
                    flat.instance_label(flat.algorithms[*algorithm].instance)
                );
            }
            Block::Implicit { eq, unknown } => {
                let _ = writeln!(
                    out,
                    "  {step}. solve e{} for {} (implicit: scalar Newton iteration)",
                    eq + 1,
                    unknown_name(dae, plan.unknowns[*unknown])
                );
            }
            Block::Loop {
                eqs,
                unknowns,
                tearing,
                residuals,
                inner,
                linear,
            } => {
                let names = |us: &[usize]| -> String {
                    us.iter()
                        .map(|u| unknown_name(dae, plan.unknowns[*u]))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let _ = writeln!(
                    out,
                    "  {step}. algebraic loop of {} equations in {} ({}), torn at {}:",
                    eqs.len(),
                    names(unknowns),
                    if *linear {
                        "linear: solved by LU"
                    } else {
                        "nonlinear: Newton on the torn residuals"
                    },
                    names(tearing)
                );
                for (e, u, value) in inner {
                    let _ = writeln!(
                        out,
                        "       {} := {}  // e{}",
                        unknown_name(dae, plan.unknowns[*u]),
                        text(*value),
                        e + 1
                    );
                }
                for e in residuals {
                    let _ = writeln!(
                        out,
                        "       residual e{}: {}",
                        e + 1,
                        dae.equation_text(&dae.equations[*e])
                    );
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "\n{} block(s), {} algebraic loop(s); parameters: {}",
        plan.blocks.len(),
        loops,
        dae.kinds.iter().filter(|k| **k == VarKind::Parameter).count()
    );
    out
}

/// `  // origin` for a listing line, or nothing when the origin is not known.
fn origin_comment(dae: &Dae, origin: &Option<crate::dae::Origin>) -> String {
    origin
        .as_ref()
        .map(|o| format!("  // {}", dae.origin_label(o)))
        .unwrap_or_default()
}
