//! The LAPACK routines that external "FORTRAN 77" functions call, run as EQM's own functions.
//!
//! Input: the external clause of a function (`external "FORTRAN 77" dgetrf(m, n, LU, lda,
//! pivots, info)`, as the Modelica Standard Library's `Matrices.LAPACK` functions declare it)
//! and the function's locals. Output: the body that calls the function of the embedded package
//! `LinearAlgebra` named like the routine (its `_vec` variant when the right-hand side is a
//! vector) with the routine's inputs and the arrays it overwrites, and assigns its outputs to
//! the arguments the routine writes, as Fortran passes them by reference. It deliberately
//! supports only the routines whose arguments [`ROUTINES`] lists (the LU factorization and
//! what is built on it); a function calling any other routine, or passing an argument the
//! routine writes that is not a variable of the function, keeps its diagnostic (E0317).

use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::resolve::ClassId;
use crate::statements::StatementContext;
use eqm_diag::Diagnostic;
use eqm_diag::source::Span;
use eqm_ir::expr::FuncId;
use eqm_ir::flat::{Place, Statement};
use eqm_syntax::ast;

/// What a routine does with one of its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Read only: an input of the EQM function.
    In,
    /// Read and overwritten: an input and an output.
    InOut,
    /// Written only: an output.
    Out,
    /// A work array whose contents after the call mean nothing: neither passed nor written.
    Scratch,
    /// The `TRANS` character: only `"N"` (no transpose) is supported.
    NoTranspose,
}

/// A LAPACK routine: its name, the role of each argument in order, and which argument, when
/// a vector, selects the `_vec` variant of the EQM function.
struct Routine {
    name: &'static str,
    roles: &'static [Role],
    right_hand_side: Option<usize>,
}

use Role::{In, InOut, NoTranspose, Out, Scratch};

/// The routines EQM runs itself (`stdlib/LinearAlgebra.eqm`).
const ROUTINES: &[Routine] = &[
    Routine {
        // dgetrf(M, N, A, LDA, IPIV, INFO)
        name: "dgetrf",
        roles: &[In, In, InOut, In, Out, Out],
        right_hand_side: None,
    },
    Routine {
        // dgetrs(TRANS, N, NRHS, A, LDA, IPIV, B, LDB, INFO)
        name: "dgetrs",
        roles: &[NoTranspose, In, In, In, In, In, InOut, In, Out],
        right_hand_side: Some(6),
    },
    Routine {
        // dgetri(N, A, LDA, IPIV, WORK, LWORK, INFO)
        name: "dgetri",
        roles: &[In, InOut, In, In, Scratch, In, Out],
        right_hand_side: None,
    },
    Routine {
        // dgesv(N, NRHS, A, LDA, IPIV, B, LDB, INFO)
        name: "dgesv",
        roles: &[In, In, InOut, In, Out, InOut, In, Out],
        right_hand_side: Some(5),
    },
];

/// The package whose functions run the routines.
const PACKAGE: &str = "LinearAlgebra";

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether `call` is a call of a routine of [`ROUTINES`] with its number of arguments.
    pub(super) fn is_lapack_call(call: Option<&ast::ExternalCall>) -> bool {
        call.is_some_and(|c| c.output.is_none() && routine(c).is_some())
    }

    /// The body of a function whose external clause calls a LAPACK routine (see the module
    /// documentation); `None` after a reported error.
    pub(super) fn lapack_body(
        &mut self,
        id: FuncId,
        call: &'a ast::ExternalCall,
        scope: Scope,
        span: Span,
    ) -> Option<Vec<Statement>> {
        let routine = routine(call)?;
        let mut given = Vec::new();
        let mut written = Vec::new();
        let mut vector_rhs = false;
        for (k, (arg, role)) in call.args.iter().zip(routine.roles).enumerate() {
            match role {
                NoTranspose => {
                    if !matches!(&arg.kind, ast::ExprKind::String(s) if s == "N") {
                        return self.unsupported_argument(
                            routine,
                            arg.span,
                            "only `\"N\"` (no transpose) is supported",
                        );
                    }
                }
                Scratch => {}
                In | InOut | Out => {
                    if *role != In {
                        let Some((slots, rank)) = self.written_local(arg) else {
                            return self.unsupported_argument(
                                routine,
                                arg.span,
                                "the routine writes it, so it must be a variable of the function",
                            );
                        };
                        if routine.right_hand_side == Some(k) {
                            vector_rhs = rank == 1;
                        }
                        written.push((slots, arg.span));
                    }
                    if *role != Out {
                        given.push(Some((self.eval(arg, scope, &mut Vec::new())?, arg.span)));
                    }
                }
            }
        }
        let name = match vector_rhs {
            true => format!("{PACKAGE}.{}_vec", routine.name),
            false => format!("{PACKAGE}.{}", routine.name),
        };
        let class = self.lapack_function(&name, span)?;
        let declared = self.input_declarations(class);
        let passed = vec![None; declared.len()];
        if given.len() != declared.len() {
            return self.unsupported_argument(
                routine,
                span,
                "the routine's arguments are not those of its EQM function",
            );
        }
        let (_, outputs) = self.instance_call(class, &name, &declared, given, &passed, (None, span))?;
        // Every output is read before any is assigned: the call reads the arrays it overwrites.
        let (mut places, mut values) = (Vec::new(), Vec::new());
        for (value, (slots, at)) in outputs.iter().zip(written) {
            let elements = value.elements();
            if elements.len() != slots.len() {
                return self.unsupported_argument(routine, at, "its size is not the one the routine writes");
            }
            places.extend(slots.into_iter().map(Place::Local));
            values.extend(elements);
        }
        let mut body = Vec::new();
        let mut cx = StatementContext::in_function(id);
        self.simultaneous_assignment(places, values, span, &mut cx, &mut body);
        Some(body)
    }

    /// The function of the embedded package that runs a routine.
    fn lapack_function(&mut self, name: &str, span: Span) -> Option<ClassId> {
        let found = self.table.find(name);
        if found.is_none() && !self.table.has_requests() {
            self.diagnostics.push(Diagnostic::error(
                "E0317",
                format!("`{name}`, which runs the LAPACK routine, is not in the library"),
                span,
                "not supported",
            ));
        }
        found
    }

    /// The slots and the number of dimensions of the function variable `arg` names (without
    /// subscripts), which the routine writes.
    fn written_local(&self, arg: &ast::Expr) -> Option<(Vec<u32>, usize)> {
        let name = plain_name(arg)?;
        let local = self.context.frames.last()?.locals.get(name)?;
        (local.record.is_none() && local.function.is_none()).then(|| (local.slots.clone(), local.dims.len()))
    }

    /// E0317 for an argument of a routine that EQM cannot pass; `None`.
    fn unsupported_argument<T>(&mut self, routine: &Routine, span: Span, why: &str) -> Option<T> {
        self.diagnostics.push(Diagnostic::error(
            "E0317",
            format!(
                "this argument of the LAPACK routine `{}` is not supported: {why}",
                routine.name
            ),
            span,
            "not supported",
        ));
        None
    }
}

/// The routine `call` names, when it passes the routine's number of arguments.
fn routine(call: &ast::ExternalCall) -> Option<&'static Routine> {
    let name = call.function.name.to_ascii_lowercase();
    ROUTINES
        .iter()
        .find(|r| r.name == name && r.roles.len() == call.args.len())
}

/// The name of a reference without subscripts to one variable (`LU`).
fn plain_name(arg: &ast::Expr) -> Option<&str> {
    match &arg.kind {
        ast::ExprKind::Ref(r) if !r.global && r.parts.len() == 1 && r.parts[0].subscripts.is_empty() => {
            Some(&r.parts[0].name.name)
        }
        _ => None,
    }
}
