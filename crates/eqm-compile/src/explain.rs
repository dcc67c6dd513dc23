//! The text of `eqm explain`: the structural analysis as a person follows it.
//!
//! Input: an [`Analysis`] (the DAE, the aliases removed, index reduction and the form chosen,
//! the plan and the initialization problem). Output: a deterministic,
//! readable listing: counts, states and why they are states, the aliases removed, the matching
//! ("equation (origin) solves for variable"), and the sorted assignment list with algebraic loops,
//! their tearing variables and residuals. This module only formats; it decides nothing.

use crate::analysis::Analysis;
use crate::analysis::{EmbeddingForm, FormChoice, FormReason};
use crate::dae::{Dae, VarKind};
use crate::events::Hybrid;
use crate::index::IndexReduction;
use crate::init::InitSystem;
use crate::plan::{Block, Plan, Unknown, unknown_name};
use std::fmt::Write as _;

pub fn explain(analysis: &Analysis) -> String {
    let (dae, aliases, plan) = (&analysis.dae, &analysis.aliases, &analysis.plan);
    let index = analysis.index.as_ref();
    let mut out = String::new();
    let flat = &dae.flat;
    let text = |e| flat.expr_text(e);
    let _ = writeln!(
        out,
        "model {}: {} equations in {} unknowns after removing {} alias equation(s)",
        flat.name,
        // Algorithm sections count one row per output, like in the plan.
        plan.matching.len(),
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
        let why = match index.and_then(|r| r.states.iter().find(|(s, _)| s == x)) {
            Some((_, reason)) => format!("kept as a state by index reduction: {reason}"),
            None => format!("appears differentiated as der({})", v.name),
        };
        let _ = writeln!(out, "  {}  ({why}{start})", v.name);
    }
    if let Some(r) = index {
        index_reduction(&mut out, dae, r, analysis.embedding.as_ref());
    }
    invariants(&mut out, dae, analysis.form.as_ref());

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
    blocks(&mut out, dae, plan, &Numbering::default());
    let loops = plan.blocks.iter().filter(|b| matches!(b, Block::Loop(_))).count();
    let _ = writeln!(
        out,
        "\n{} block(s), {} algebraic loop(s); parameters: {}",
        plan.blocks.len(),
        loops,
        dae.kinds.iter().filter(|k| **k == VarKind::Parameter).count()
    );
    events(&mut out, analysis);
    initialization(&mut out, analysis);
    out
}

/// How [`blocks`] numbers the steps and equations of a plan: as they are, or as those of the
/// initial system that is the simulation system ([`InitSystem::Simulation`]), whose start values
/// come first and are equations after the model's.
#[derive(Debug, Default)]
struct Numbering {
    /// Steps listed before the plan's.
    steps_before: usize,
    /// Equations from this one on (rows of algorithm sections) move by `inserted`.
    first_moved: usize,
    inserted: usize,
    /// Derivatives are variables of the system, with no start value of their own.
    derivatives_are_variables: bool,
}

impl Numbering {
    /// The number (from 1) of equation `eq` in the listing.
    fn eq(&self, eq: usize) -> usize {
        if eq >= self.first_moved && self.inserted > 0 {
            eq + self.inserted + 1
        } else {
            eq + 1
        }
    }
}

/// The sorted assignment list of `plan`, whose equations are those of `dae`.
fn blocks(out: &mut String, dae: &Dae<Hybrid>, plan: &Plan, numbering: &Numbering) {
    let flat = &dae.flat;
    let text = |e| flat.expr_text(e);
    for (index, block) in plan.blocks.iter().enumerate() {
        let step = numbering.steps_before + index + 1;
        match block {
            Block::Explicit { eq, unknown, value } => {
                let _ = writeln!(
                    out,
                    "  {step}. {} := {}  // e{}",
                    unknown_name(dae, plan.unknowns[*unknown]),
                    text(*value),
                    numbering.eq(*eq)
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
                // Which start value the iteration starts from: with several roots, it chooses.
                let first = match plan.unknowns[*unknown] {
                    Unknown::Var(v) => match flat.var(v).attributes.start {
                        Some(start) => format!("from the start value {}", text(start)),
                        None => "from 0 (no start value)".to_string(),
                    },
                    Unknown::Der(_) if numbering.derivatives_are_variables => "from 0 (no start value)".to_string(),
                    Unknown::Der(_) => "from 0".to_string(),
                };
                let _ = writeln!(
                    out,
                    "  {step}. solve e{} for {} (implicit: scalar Newton iteration {first} at the start, then from the last solution)",
                    numbering.eq(*eq),
                    unknown_name(dae, plan.unknowns[*unknown])
                );
            }
            Block::Loop(l) => {
                let names = |us: &[usize]| -> String {
                    us.iter()
                        .map(|u| unknown_name(dae, plan.unknowns[*u]))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let _ = writeln!(
                    out,
                    "  {step}. algebraic loop of {} equations in {} ({}), torn at {}:",
                    l.eqs.len(),
                    names(&l.unknowns),
                    if l.linear {
                        "linear: solved by LU"
                    } else {
                        "nonlinear: Newton on the torn residuals"
                    },
                    names(&l.tearing)
                );
                for (e, u, value) in &l.inner {
                    let _ = writeln!(
                        out,
                        "       {} := {}  // e{}",
                        unknown_name(dae, plan.unknowns[*u]),
                        text(*value),
                        numbering.eq(*e)
                    );
                }
                for e in &l.residuals {
                    let _ = writeln!(
                        out,
                        "       residual e{}: {}",
                        numbering.eq(*e),
                        dae.equation_text(&dae.equations[*e])
                    );
                }
            }
        }
    }
}

/// The zero-crossing surfaces: which relation variables stand for which relations (frozen
/// between events), and the when-clauses.
fn events(out: &mut String, analysis: &Analysis) {
    let dae = &analysis.dae;
    let set = &dae.stage.events;
    if set.surfaces.is_empty()
        && set.samples.is_empty()
        && dae.flat.whens.is_empty()
        && set.delays.is_empty()
        && set.spatials.is_empty()
    {
        return;
    }
    let _ = writeln!(
        out,
        "\nevents: {} zero-crossing function(s), {} sample clock(s), {} when-clause(s); relations are frozen between events",
        set.surfaces.len(),
        set.samples.len(),
        dae.flat.whens.len()
    );
    for sample in &set.samples {
        let _ = writeln!(
            out,
            "  {} := sample({}, {})   (time events, scheduled exactly)",
            dae.flat.var(sample.var).name,
            dae.flat.expr_text(sample.start),
            dae.flat.expr_text(sample.interval)
        );
    }
    for d in &set.delays {
        let (name, expr, delay) = (
            &dae.flat.var(d.var).name,
            dae.flat.expr_text(d.expr),
            dae.flat.expr_text(d.delay),
        );
        let _ = match d.max.filter(|_| !dae.is_parameter_expression(d.delay)) {
            Some(max) => writeln!(
                out,
                "  {name} := `{expr}` as it was {delay} earlier   (from its history, kept by the simulation; the delay time changes, within [0, {}])",
                dae.flat.expr_text(max)
            ),
            None => writeln!(
                out,
                "  {name} := `{expr}` as it was {delay} earlier   (from its history, kept by the simulation; steps end where a jump reaches it)"
            ),
        };
    }
    for s in &set.spatials {
        let names = s.vars.map(|v| dae.flat.var(v).name.clone()).join(", ");
        let _ = writeln!(
            out,
            "  {names} := the first value, last value, value at 0 and value at 1 of the profile of spatialDistribution(in0 = `{}`, in1 = `{}`, x = `{}`)   (moved by the change of x, kept by the simulation at accepted points)",
            dae.flat.expr_text(s.in0),
            dae.flat.expr_text(s.in1),
            dae.flat.expr_text(s.x)
        );
    }
    for (k, s) in set.surfaces.iter().enumerate() {
        let relations: Vec<String> = s
            .relations
            .iter()
            .map(|(v, test)| {
                let symbol = match test {
                    crate::events::Test::Positive => ">",
                    crate::events::Test::NonNegative => ">=",
                    crate::events::Test::Negative => "<",
                    crate::events::Test::NonPositive => "<=",
                };
                format!("{} := d{} {symbol} 0", dae.flat.var(*v).name, k + 1)
            })
            .collect();
        let _ = writeln!(
            out,
            "  d{} = {}   ({})",
            k + 1,
            dae.flat.expr_text(s.expr),
            relations.join(", ")
        );
    }
    for p in &set.previous {
        let when = if p.left_limit {
            "its value just before the event; set to it when an event starts"
        } else {
            "its value before the event; set to it between the passes of an event"
        };
        let _ = writeln!(
            out,
            "  {} := {}   ({when})",
            dae.flat.var(p.var).name,
            dae.flat.expr_text(p.expr)
        );
    }
    for (w, conditions) in dae.flat.whens.iter().zip(&set.when_conditions) {
        let list: Vec<String> = conditions.iter().map(|c| dae.flat.expr_text(*c)).collect();
        let _ = writeln!(
            out,
            "  when {}: {} action(s)",
            list.join(" / elsewhen "),
            w.branches.iter().map(|b| b.actions.len()).sum::<usize>()
        );
    }
}

/// The initialization problem: what fixes the initial values, and its sorted assignments.
fn initialization(out: &mut String, analysis: &Analysis) {
    let init = &analysis.init;
    // The variables named here are the model's: an initial system of its own keeps their ids.
    let dae = init.dae().unwrap_or(&analysis.dae);
    let (equations, unknowns) = match &init.system {
        InitSystem::Own { plan, .. } => (plan.matching.len(), plan.unknowns.len()),
        InitSystem::Simulation { starts, unknowns } => (analysis.plan.matching.len() + starts.len(), *unknowns),
    };
    let _ = writeln!(
        out,
        "\ninitialization: {equations} equations in {unknowns} unknowns (states are unknowns too)"
    );
    let list = |vs: &[eqm_ir::expr::VarId]| -> String {
        if vs.is_empty() {
            return "none".to_string();
        }
        let texts: Vec<String> = vs.iter().map(|v| crate::init::start_text(dae, *v)).collect();
        texts.join(", ")
    };
    let _ = writeln!(out, "  fixed start values: {}", list(&init.fixed));
    let _ = writeln!(out, "  initial equations: {}", analysis.dae.initial_equations.len());
    if !init.assumed.is_empty() {
        let _ = writeln!(
            out,
            "  start values assumed fixed (warning W0502): {}",
            list(&init.assumed)
        );
    }
    let _ = writeln!(out, "  sorted assignments:");
    match &init.system {
        InitSystem::Own { dae, plan } => blocks(out, dae, plan, &Numbering::default()),
        InitSystem::Simulation { starts, .. } => {
            // The start values, then the simulation's own assignments.
            for (k, start) in starts.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  {}. {} := {}  // e{}",
                    k + 1,
                    analysis.dae.flat.var(start.var).name,
                    analysis.dae.flat.expr_text(start.value),
                    start.eq + 1
                );
            }
            let numbering = Numbering {
                steps_before: starts.len(),
                first_moved: analysis.dae.equations.len(),
                inserted: starts.len(),
                derivatives_are_variables: true,
            };
            blocks(out, &analysis.dae, &analysis.plan, &numbering);
        }
    }
}

/// The index-reduction steps and the embedding form.
fn index_reduction(out: &mut String, dae: &Dae<Hybrid>, r: &IndexReduction, embedding: Option<&EmbeddingForm>) {
    let flat = &dae.flat;
    let _ = writeln!(
        out,
        "\nindex reduction (Pantelides): the equations constrain states; structural index {}",
        r.index
    );
    for &(e, times) in &r.differentiated {
        let eq = &dae.equations[e];
        let _ = writeln!(
            out,
            "  e{} differentiated {} time{}: {}  // {}",
            e + 1,
            times,
            if times == 1 { "" } else { "s" },
            dae.equation_text(eq),
            dae.origin_label(&eq.origin)
        );
    }
    for &(new, of) in &r.new_equations {
        let _ = writeln!(
            out,
            "  e{} := d/dt e{}: {}",
            new + 1,
            of + 1,
            dae.equation_text(&dae.equations[new])
        );
    }
    let dummies = r.dummy_names();
    let _ = writeln!(
        out,
        "  dummy derivatives (algebraic variables now): {}",
        if dummies.is_empty() {
            "none".to_string()
        } else {
            dummies.join(", ")
        }
    );
    let derivative_states: Vec<&str> = r
        .derivative_variables
        .iter()
        .filter(|d| !d.dummy)
        .map(|d| d.name.as_str())
        .collect();
    if !derivative_states.is_empty() {
        let _ = writeln!(out, "  derivatives kept as states: {}", derivative_states.join(", "));
    }
    if !r.demoted.is_empty() {
        let names: Vec<&str> = r.demoted.iter().map(|v| flat.var(*v).name.as_str()).collect();
        let _ = writeln!(
            out,
            "  no longer states (their derivative is a dummy derivative): {}",
            names.join(", ")
        );
    }
    let Some(emb) = embedding else {
        let _ = writeln!(out, "  embedding form: not available for this model");
        return;
    };
    let states: Vec<&str> = emb.dae.states().map(|v| emb.dae.flat.var(v).name.as_str()).collect();
    let _ = writeln!(
        out,
        "\nembedding form: x' = f(x) with {} states {{{}}} and {} invariant(s) g(x) = 0:",
        states.len(),
        states.join(", "),
        emb.invariants.len()
    );
    for (k, inv) in emb.invariants.iter().enumerate() {
        let _ = writeln!(
            out,
            "  g{} = {}  // from e{}",
            k + 1,
            emb.dae.flat.expr_text(inv.residual),
            inv.equation + 1
        );
        for (v, d) in &inv.jacobian {
            let _ = writeln!(
                out,
                "      dg{}/d{} = {}",
                k + 1,
                emb.dae.flat.var(*v).name,
                emb.dae.flat.expr_text(*d)
            );
        }
    }
    let _ = writeln!(
        out,
        "  f: {} block(s), {} algebraic loop(s)",
        emb.plan.blocks.len(),
        emb.plan.blocks.iter().filter(|b| matches!(b, Block::Loop(_))).count()
    );
}

/// The invariants a run keeps by projection (declared ones, and the constraints of the
/// embedding form when that form is simulated), the form chosen, and the gain `K`.
fn invariants(out: &mut String, dae: &Dae<Hybrid>, form: Option<&FormChoice>) {
    let flat = &dae.flat;
    let sentence = form.and_then(|f| match (&f.why, f.embedding) {
        (FormReason::StaticChoiceValid, _) => Some(
            "simulated by default in the dummy-derivative form: the differentiated constraints are linear with constant coefficients, so the static state choice stays valid (--index-reduction embedding projects instead)",
        ),
        (FormReason::StaticChoiceMayFail, _) => Some(
            "simulated by default in the embedding form with projection: a static state choice may become singular during the run (--index-reduction dummy uses dummy derivatives)",
        ),
        (FormReason::Requested, true) => Some("simulated in the embedding form with projection (--index-reduction embedding)"),
        (FormReason::Requested, false) => Some("simulated in the dummy-derivative form (--index-reduction dummy)"),
        (FormReason::EmbeddingUnavailable | FormReason::EmbeddingNotCompiled(_), _) => None,
    });
    if let Some(sentence) = sentence {
        let _ = writeln!(out, "  {sentence}");
    }
    let projected = !flat.invariants.is_empty() || form.is_some_and(|f| f.embedding);
    if !projected {
        return;
    }
    if !flat.invariants.is_empty() {
        let _ = writeln!(
            out,
            "
declared invariants ({}), kept by projection:",
            flat.invariants.len()
        );
        for (k, eq) in flat.invariants.iter().enumerate() {
            let _ = writeln!(
                out,
                "  h{} = {} - ({})",
                k + 1,
                flat.expr_text(eq.lhs),
                flat.expr_text(eq.rhs)
            );
        }
    }
    let gain = match flat.experiment.stabilize {
        Some(k) => format!("K = {} (annotation stabilize)", eqm_diag::text::format_number(k)),
        None => "K = the fastest rate at the start: max(largest |eigenvalue| of df/dx, |f|/|x|), at least 10/(stop - start) (-v prints it)"
            .to_string(),
    };
    let _ = writeln!(
        out,
        "  projection: x' = f(x) - G+ (K g(x) + G f(x)), G = dg/dx from the symbolic Jacobian, LQ with pivoting; {gain}; --stabilize K=k or off overrides"
    );
}

/// `  // origin` for a listing line, or nothing when the origin is not known.
fn origin_comment(dae: &Dae<Hybrid>, origin: &Option<crate::dae::Origin>) -> String {
    origin
        .as_ref()
        .map(|o| format!("  // {}", dae.origin_label(o)))
        .unwrap_or_default()
}
