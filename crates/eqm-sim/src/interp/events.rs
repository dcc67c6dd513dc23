//! What the interpreter evaluates for event handling and the symbolic Jacobian: the
//! zero-crossing functions, single surfaces and event expressions, and the partial derivatives
//! with the chain rule.
//!
//! Input: the interpreter with its compiled event program and Jacobian code, and the
//! evaluation arrays. Output: surface values, event values and Jacobian entries. Deciding when
//! events happen is the simulation's job.

use super::*;

impl Interpreter<'_> {
    /// Evaluates the zero-crossing functions of the event program into `out`; call after
    /// [`Interpreter::rhs`] and [`Interpreter::outputs`] with the same arrays.
    pub fn surfaces(
        &mut self,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
        out: &mut [f64],
    ) -> Result<(), EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        self.check(t, &[("surfaces", self.code.surfaces.len(), out.len())])?;
        let mut mem = Mem { t, x, p, dx, work };
        // Native code computes them all at once; a failure is located by the register code,
        // which reports it the same way.
        if let Some(native) = &self.native
            && let Some(segment) = native.surfaces
            && mem.native(&native.module, segment, out, self.m.iteration_limit).is_ok()
        {
            return Ok(());
        }
        for (k, value) in out.iter_mut().enumerate() {
            *value = self.m.eval(self.code.surfaces[k], &mut mem).map_err(|f| EvalFailure {
                time: t,
                kind: self.fault(f),
                site: FailureSite::Event {
                    span: self.program.events().surfaces[k].span,
                },
            })?;
        }
        Ok(())
    }

    /// The symbolic Jacobian at the point of the last right-hand-side evaluation (whose values
    /// `dx` and `work` hold): the program's partial derivatives evaluated (natively when
    /// compiled) and combined by the chain rule into `out`. `Ok(false)` when the program has no
    /// symbolic Jacobian or it is not defined at this point (a partial derivative that is not
    /// finite, a singular loop): the caller then uses difference quotients. The invariant
    /// values and extra expressions are written whenever the program has a Jacobian.
    #[allow(clippy::too_many_arguments)]
    pub fn jacobian(
        &mut self,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
        out: JacobianOut,
    ) -> Result<bool, EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        let Some(mut code) = self.jacobian.take() else {
            return Ok(false);
        };
        let evaluated = self.partial_values(&mut code, Mem { t, x, p, dx, work });
        let result = evaluated.map(|()| {
            let jac = self.program.jacobian().expect("the code was built from it");
            // The values of the invariants and of the extra expressions are there even where
            // the chain rule is not defined (a singular state choice shows in them).
            if let Some(g) = out.g {
                for (gi, row) in g.iter_mut().zip(&jac.invariants) {
                    *gi = code.values[row.value as usize];
                }
            }
            if let Some(extra) = out.extra {
                for (e, &k) in extra.iter_mut().zip(&jac.extra) {
                    *e = code.values[k as usize];
                }
            }
            let rate_x = out.rate_x.filter(|_| !jac.rates.is_empty());
            code.tangents
                .run(jac, &code.values, out.f_x, out.f_values, out.g_x, rate_x)
                .is_ok()
        });
        self.jacobian = Some(code);
        result
    }

    /// The values of the partial derivatives into `code.values`.
    fn partial_values(&mut self, code: &mut JacobianCode, mut mem: Mem) -> Result<(), EvalFailure> {
        if let Some(native) = &self.native
            && let Some(native) = native.partial_code(self.program)
            && let Some(segments) = &native.partials
        {
            let mut at = 0;
            let mut ok = true;
            for &segment in segments {
                let len = native.module.results(segment).unwrap_or(0);
                let out = &mut code.values[at..at + len];
                if mem
                    .native(&native.module, segment, out, self.m.iteration_limit)
                    .is_err()
                {
                    ok = false;
                    break;
                }
                at += len;
            }
            if ok {
                return Ok(());
            }
        }
        // The register code evaluates them when there is no native code, and locates a
        // failure of native code the same way.
        self.m
            .eval_shared(&code.partials, &mut mem, &mut code.values)
            .map_err(|f| EvalFailure {
                time: mem.t,
                kind: self.fault(f),
                site: FailureSite::Call,
            })
    }

    /// Evaluates zero-crossing function `k` alone (register code: one expression), at the point
    /// of the last evaluation.
    pub fn surface(
        &mut self,
        k: usize,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<f64, EvalFailure> {
        let program = self.program;
        let Some(surface) = program.events().surfaces.get(k) else {
            return Err(EvalFailure {
                time: t,
                kind: FailureKind::Dimension {
                    array: "surfaces",
                    expected: self.code.surfaces.len(),
                    found: k,
                },
                site: FailureSite::Event {
                    span: program.model_span(),
                },
            });
        };
        self.event_value(surface.expr, surface.span, t, x, p, dx, work)
    }

    /// Evaluates one expression of the event program (a zero-crossing function, a
    /// when-condition, an action's value or an assertion's condition); `span` locates a failure.
    #[allow(clippy::too_many_arguments)]
    pub fn event_value(
        &mut self,
        e: ExprId,
        span: Span,
        t: f64,
        x: &[f64],
        p: &[f64],
        dx: &mut [f64],
        work: &mut [f64],
    ) -> Result<f64, EvalFailure> {
        self.check_all(t, x, p, dx, work)?;
        let failure = |kind| EvalFailure {
            time: t,
            kind,
            site: FailureSite::Event { span },
        };
        let Ok(k) = self.code.event_exprs.binary_search_by_key(&e, |(id, _)| *id) else {
            // Only a caller that passes an expression of another program gets here.
            return Err(failure(FailureKind::Dimension {
                array: "event program",
                expected: self.code.event_exprs.len(),
                found: 0,
            }));
        };
        let code = self.code.event_exprs[k].1;
        let mut mem = Mem { t, x, p, dx, work };
        self.m.eval(code, &mut mem).map_err(|f| failure(self.fault(f)))
    }

    /// The lines `Streams.print` printed in the functions evaluated since the last call, in
    /// order (only an action of a when-clause calls a function that prints).
    pub fn take_printed(&mut self) -> Vec<String> {
        std::mem::take(&mut self.m.printed)
    }

    /// What went wrong, as reported.
    pub(super) fn kind(&self, e: SolveError) -> FailureKind {
        match e {
            SolveError::Fault(f) => self.fault(f),
            SolveError::Kind(kind) => kind,
        }
    }
}
