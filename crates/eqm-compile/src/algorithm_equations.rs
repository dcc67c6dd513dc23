//! Algorithm sections inside algebraic loops, as equations.
//!
//! Input: a DAE and the algorithm sections that causalisation found inside an algebraic loop
//! (their outputs feed back into what they read through equations). Output: each such section
//! replaced by one equation per output, `output = the value the section computes`, found by
//! running the statements symbolically (an assignment replaces the variable's value, an `if`
//! becomes an if-expression of its branches' values), so that the loop solver treats the
//! section as the vector function of its inputs it is, with symbolic derivatives; or the reason
//! a section cannot be written so, for `E0502`.
//!
//! It deliberately handles only sections whose statements are assignments to model variables,
//! `if` statements and loops expanded when the model was compiled, and whose outputs are
//! continuous-time: a `while` loop, an assertion, `terminate`, `break`, `return` or an output
//! kept between events has no value as one expression and stays an error.

use crate::dae::{Dae, Equation, Origin, VarKind};
use eqm_ir::expr::{ExprId, FxHashMap, Node, VarId};
use eqm_ir::flat::{Algorithm, Place, Statement};

/// Replaces the algorithm sections `sections` (indices into `dae.flat.algorithms`) by their
/// equations; `Err` with the section and why when one of them cannot be (nothing changed then).
/// Returns the hidden variables (`$capN`, the value a relation tests where the section tests
/// it) that became unknowns: the equations compute them now, for their surfaces.
pub(crate) fn replace_by_equations<S>(
    dae: &mut Dae<S>,
    sections: &[usize],
) -> Result<Vec<VarId>, (usize, &'static str)> {
    let mut equations = Vec::new();
    let mut hidden = Vec::new();
    for &section in sections {
        let a = &dae.flat.algorithms[section];
        if a.outputs.iter().any(|v| dae.kinds[v.0 as usize] != VarKind::Algebraic) {
            return Err((section, "it assigns a discrete-time variable"));
        }
        let (values, captured) = section_values(dae, section).map_err(|why| (section, why))?;
        let a = &dae.flat.algorithms[section];
        hidden.extend(captured.iter().map(|&(v, _)| v));
        for (v, value) in values.into_iter().chain(captured) {
            equations.push(Equation {
                lhs: dae.flat.exprs.var(v),
                rhs: value,
                origin: Origin::AlgorithmOutput { var: v },
                span: a.span,
            });
        }
    }
    let mut removed = vec![false; dae.flat.algorithms.len()];
    for &section in sections {
        removed[section] = true;
    }
    let mut k = 0;
    dae.flat.algorithms.retain(|_| {
        k += 1;
        !removed[k - 1]
    });
    dae.equations.extend(equations);
    for &v in &hidden {
        dae.kinds[v.0 as usize] = VarKind::Algebraic;
    }
    Ok(hidden)
}

/// The values of one section's outputs and hidden variables.
type SectionValues = (Vec<(VarId, ExprId)>, Vec<(VarId, ExprId)>);

/// The value of each output of section `section` when it has run, in the order of its outputs,
/// and of each hidden variable where the section sets it.
fn section_values<S>(dae: &mut Dae<S>, section: usize) -> Result<SectionValues, &'static str> {
    let a: Algorithm = dae.flat.algorithms[section].clone();
    // Each run starts a continuous-time output from its start value (the section keeps no
    // memory), as the executed section does.
    let mut values: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    for &v in &a.outputs {
        let start = match dae.flat.var(v).attributes.start {
            Some(s) => s,
            None => dae.flat.exprs.real(0.0),
        };
        let node = dae.flat.exprs.var(v);
        values.insert(node, start);
    }
    let mut run = SymbolicRun {
        dae,
        values,
        hidden: Vec::new(),
    };
    run.statements(&a.statements, true)?;
    let SymbolicRun { dae, values, hidden } = run;
    let outputs = a.outputs.iter().map(|&v| (v, values[&dae.flat.exprs.var(v)])).collect();
    Ok((outputs, hidden))
}

/// The values of the outputs so far, by the expression node of each output.
struct SymbolicRun<'d, S> {
    dae: &'d mut Dae<S>,
    values: FxHashMap<ExprId, ExprId>,
    /// The hidden variables the section sets at the top level, with their values there.
    hidden: Vec<(VarId, ExprId)>,
}

impl<S> SymbolicRun<'_, S> {
    /// `e` with every output it reads replaced by the output's value so far.
    fn current(&mut self, e: ExprId) -> ExprId {
        let values = &self.values;
        eqm_ir::symbolic::substitute(&mut self.dae.flat.exprs, e, &|_, id| values.get(&id).copied())
    }

    fn statements(&mut self, statements: &[Statement], top_level: bool) -> Result<(), &'static str> {
        for st in statements {
            match st {
                Statement::Assign {
                    target: Place::Var(v),
                    value,
                    ..
                } => {
                    let node = self.dae.flat.exprs.var(*v);
                    if !self.values.contains_key(&node) {
                        // A hidden variable set once, outside any `if`, is the value of its
                        // expression there.
                        let hidden = self.dae.flat.var(*v).name.starts_with("$cap");
                        if !hidden || !top_level || self.hidden.iter().any(|(h, _)| h == v) {
                            return Err("it sets a value a relation tests inside a branch or loop");
                        }
                        let value = self.current(*value);
                        self.hidden.push((*v, value));
                        continue;
                    }
                    let value = self.current(*value);
                    self.values.insert(node, value);
                }
                Statement::If {
                    branches, else_branch, ..
                } => self.if_statement(branches, else_branch)?,
                Statement::Unrolled { iterations, .. } => {
                    for body in iterations {
                        self.statements(body, false)?;
                    }
                }
                Statement::Assign { .. } => return Err("it assigns a local variable"),
                Statement::For { .. } | Statement::While { .. } => {
                    return Err("it has a loop whose iterations are known only during the run");
                }
                Statement::Assert { .. } => return Err("it has an assertion"),
                Statement::Terminate { .. } => return Err("it calls `terminate`"),
                Statement::Print { .. } => return Err("it prints"),
                Statement::Call { .. } => return Err("it calls a function for what it does"),
                Statement::Break { .. } | Statement::Return { .. } => return Err("it leaves a statement early"),
            }
        }
        Ok(())
    }

    /// An `if` statement: each output's value afterwards is the if-expression of its values
    /// at the end of each branch (conditions read the values before the statement, in order).
    fn if_statement(
        &mut self,
        branches: &[(ExprId, Vec<Statement>)],
        else_branch: &[Statement],
    ) -> Result<(), &'static str> {
        let before = self.values.clone();
        let mut conditions = Vec::with_capacity(branches.len());
        let mut ends = Vec::with_capacity(branches.len());
        for (condition, body) in branches {
            let condition = self.current(*condition);
            conditions.push(condition);
            self.statements(body, false)?;
            ends.push(std::mem::replace(&mut self.values, before.clone()));
        }
        self.statements(else_branch, false)?;
        // Outputs in a fixed order, so that the expressions built do not depend on hashing.
        let mut outputs: Vec<ExprId> = before.keys().copied().collect();
        outputs.sort_unstable();
        for node in outputs {
            let mut value = self.values[&node];
            for (condition, end) in conditions.iter().zip(&ends).rev() {
                let branch = end[&node];
                if branch != value {
                    value = self.dae.flat.exprs.add(Node::If(*condition, branch, value));
                }
            }
            self.values.insert(node, value);
        }
        Ok(())
    }
}
