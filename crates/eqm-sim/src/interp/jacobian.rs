//! The chain rule of the symbolic Jacobian ([`eqm_compile::jacobian`]) at run time.
//!
//! Input: the values of the program's partial derivatives at a point (computed by the register
//! code or by native code, see `Interpreter::jacobian`), and the tangent steps. Output: the
//! dense `∂f/∂x` and, when the program has invariants, `g` and `G = ∂g/∂x`. One forward pass
//! carries one tangent per colour of the column colouring, so a Jacobian costs one evaluation
//! of the partials plus a number of multiply-adds proportional to the number of partials times
//! the number of colours. A loop's own linear system (its torn Jacobian) is assembled from its
//! partials and solved by LU once per Jacobian. This module does not evaluate expressions.

use eqm_compile::jacobian::{ExecJacobian, TangentStep, Term};
use eqm_ir::slot::Slot;
use nalgebra::DMatrix;

/// The buffers of the forward pass, sized once for a program.
#[derive(Clone)]
pub(super) struct Tangents {
    n: usize,
    width: usize,
    /// `tangent[index(slot) * width + colour]`.
    tangent: Vec<f64>,
    /// Per loop step: for each own term of the inner assignments and residuals, the index of
    /// its slot among the loop's unknowns (tearing first, then inner targets).
    loop_locals: Vec<Vec<Vec<usize>>>,
    scratch: Vec<f64>,
}

/// Why the forward pass gave no Jacobian (the caller falls back to difference quotients).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NoJacobian {
    /// A partial derivative is not finite at this point.
    NotFinite,
    /// A loop's torn Jacobian is singular at this point.
    SingularLoop,
}

impl Tangents {
    pub(super) fn new(jac: &ExecJacobian, states: usize, work: usize) -> Tangents {
        let width = jac.n_colors.max(1);
        let loop_locals = jac
            .steps
            .iter()
            .filter_map(|s| match s {
                TangentStep::Loop(l) => {
                    let unknowns: Vec<Slot> = l.tearing.iter().copied().chain(l.inner.iter().map(|i| i.0)).collect();
                    let local = |terms: &[Term]| -> Vec<usize> {
                        terms
                            .iter()
                            .map(|t| unknowns.iter().position(|u| *u == t.slot).unwrap_or(usize::MAX))
                            .collect()
                    };
                    Some(
                        l.inner
                            .iter()
                            .map(|(_, _, own)| local(own))
                            .chain(l.residuals.iter().map(|(_, own)| local(own)))
                            .collect(),
                    )
                }
                _ => None,
            })
            .collect();
        Tangents {
            n: states,
            width,
            tangent: vec![0.0; (2 * states + work) * width],
            loop_locals,
            scratch: Vec::new(),
        }
    }

    fn index(&self, slot: Slot) -> Option<usize> {
        match slot {
            Slot::State(i) => Some(i as usize),
            Slot::Der(i) => Some(self.n + i as usize),
            Slot::Work(k) => Some(2 * self.n + k as usize),
            Slot::Time | Slot::Param(_) => None,
        }
    }

    /// `out[c] = Σ partial · tangent(slot)[c]` over `terms`, for every colour `c`.
    fn sum(&self, terms: &[Term], values: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        let w = self.width;
        for t in terms {
            let Some(i) = self.index(t.slot) else { continue };
            let p = values[t.partial as usize];
            for (o, tv) in out.iter_mut().zip(&self.tangent[i * w..(i + 1) * w]) {
                *o += p * tv;
            }
        }
    }

    fn store(&mut self, slot: Slot, value: &[f64]) {
        if let Some(i) = self.index(slot) {
            let w = self.width;
            self.tangent[i * w..(i + 1) * w].copy_from_slice(value);
        }
    }

    /// Runs the forward pass with the partial values `values` and writes `∂f/∂x` into `f_x`
    /// (n × n) and, for the invariants, `G` into `g_x` (m × n) when given. The invariant values
    /// themselves are `values[row.value]`.
    pub(super) fn run(
        &mut self,
        jac: &ExecJacobian,
        values: &[f64],
        f_x: Option<&mut DMatrix<f64>>,
        f_values: Option<&mut [f64]>,
        g_x: Option<&mut DMatrix<f64>>,
        rate_x: Option<&mut DMatrix<f64>>,
    ) -> Result<(), NoJacobian> {
        if !values.iter().all(|v| v.is_finite()) {
            return Err(NoJacobian::NotFinite);
        }
        let w = self.width;
        self.tangent.fill(0.0);
        for (j, &c) in jac.colors.iter().enumerate() {
            self.tangent[j * w + c as usize] = 1.0;
        }
        // The sums of one step, on the stack for the usual few colours: a Jacobian of a small
        // model costs a few hundred nanoseconds, which an allocation would add to noticeably.
        let (mut stack, mut heap) = ([0.0; 16], Vec::new());
        let acc: &mut [f64] = if w <= stack.len() {
            &mut stack[..w]
        } else {
            heap.resize(w, 0.0);
            &mut heap
        };
        let mut loop_index = 0;
        // Without `∂f/∂x` (or the rates, which read it) only the steps the invariants depend on
        // run.
        let all = f_x.is_some() || f_values.is_some() || rate_x.is_some();
        for (step, &needed) in jac.steps.iter().zip(&jac.for_invariants) {
            if !all && !needed {
                if matches!(step, TangentStep::Loop(_)) {
                    loop_index += 1;
                }
                continue;
            }
            match step {
                TangentStep::Assign { target, terms } => {
                    self.sum(terms, values, acc);
                    self.store(*target, acc);
                }
                TangentStep::Newton1 { target, own, terms } => {
                    self.sum(terms, values, acc);
                    let d = values[*own as usize];
                    if d == 0.0 {
                        return Err(NoJacobian::SingularLoop);
                    }
                    acc.iter_mut().for_each(|a| *a = -*a / d);
                    self.store(*target, acc);
                }
                TangentStep::Loop(l) => {
                    self.loop_step(l, values, loop_index)?;
                    loop_index += 1;
                }
            }
        }
        if let Some(f_x) = f_x {
            f_x.fill(0.0);
            for (i, row) in jac.rows.iter().enumerate() {
                let base = (self.n + i) * w;
                for &j in row {
                    f_x[(i, j as usize)] = self.tangent[base + jac.colors[j as usize] as usize];
                }
            }
        }
        if let Some(f_values) = f_values {
            // The pattern's entries row by row, as `OdeSystem::sparse_jacobian` wants them.
            let mut k = 0;
            for (i, row) in jac.rows.iter().enumerate() {
                let base = (self.n + i) * w;
                for &j in row {
                    if let Some(v) = f_values.get_mut(k) {
                        *v = self.tangent[base + jac.colors[j as usize] as usize];
                    }
                    k += 1;
                }
            }
        }
        if let Some(g_x) = g_x {
            self.rows(jac, &jac.invariants, 0, values, acc, g_x);
        }
        if let Some(rate_x) = rate_x {
            self.rows(jac, &jac.rates, jac.invariants.len(), values, acc, rate_x);
        }
        Ok(())
    }

    /// The Jacobian of expression rows (the invariants, or their rates whose patterns follow
    /// the invariants' in `invariant_rows` from `offset`) into `out`, from the tangents of a
    /// finished pass.
    fn rows(
        &self,
        jac: &ExecJacobian,
        rows: &[eqm_compile::jacobian::InvariantRow],
        offset: usize,
        values: &[f64],
        acc: &mut [f64],
        out: &mut DMatrix<f64>,
    ) {
        out.fill(0.0);
        for (r, g) in rows.iter().enumerate() {
            self.sum(&g.terms, values, acc);
            for &j in &jac.invariant_rows[offset + r] {
                out[(r, j as usize)] = acc[jac.colors[j as usize] as usize];
            }
        }
    }

    /// The tangents of a torn loop's unknowns: first with the tearing tangents at zero (the
    /// outside terms alone), then the loop's own linear system `M dt = −ρ`, `M` assembled from
    /// unit tearing tangents through the inner assignments.
    fn loop_step(
        &mut self,
        l: &eqm_compile::jacobian::LoopTangent,
        values: &[f64],
        index: usize,
    ) -> Result<(), NoJacobian> {
        let w = self.width;
        let (nt, ni) = (l.tearing.len(), l.inner.len());
        // Pass 0: every colour at once, tearing tangents zero (they were cleared).
        let mut acc = vec![0.0; w];
        let mut part = vec![0.0; w];
        for (target, outside, own) in &l.inner {
            self.sum(outside, values, &mut acc);
            self.sum(own, values, &mut part);
            acc.iter_mut().zip(&part).for_each(|(a, p)| *a += p);
            self.store(*target, &acc);
        }
        let mut rho = DMatrix::zeros(nt, w);
        for (i, (outside, own)) in l.residuals.iter().enumerate() {
            self.sum(outside, values, &mut acc);
            self.sum(own, values, &mut part);
            for c in 0..w {
                rho[(i, c)] = -(acc[c] + part[c]);
            }
        }
        // The torn Jacobian M and dz/dt, one unit tearing tangent at a time.
        let locals = &self.loop_locals[index];
        let mut m = DMatrix::zeros(nt, nt);
        let mut dz_dt = DMatrix::zeros(ni, nt);
        let local = &mut self.scratch;
        local.clear();
        local.resize(nt + ni, 0.0);
        for j in 0..nt {
            local.fill(0.0);
            local[j] = 1.0;
            for (k, (_, _, own)) in l.inner.iter().enumerate() {
                let v: f64 = own
                    .iter()
                    .zip(&locals[k])
                    .map(|(t, &at)| values[t.partial as usize] * local.get(at).copied().unwrap_or(0.0))
                    .sum();
                local[nt + k] = v;
                dz_dt[(k, j)] = v;
            }
            for (i, (_, own)) in l.residuals.iter().enumerate() {
                m[(i, j)] = own
                    .iter()
                    .zip(&locals[ni + i])
                    .map(|(t, &at)| values[t.partial as usize] * local.get(at).copied().unwrap_or(0.0))
                    .sum();
            }
        }
        let lu = m.lu();
        let dt = lu.solve(&rho).ok_or(NoJacobian::SingularLoop)?;
        if !dt.iter().all(|v| v.is_finite()) {
            return Err(NoJacobian::SingularLoop);
        }
        for (j, s) in l.tearing.iter().enumerate() {
            let row: Vec<f64> = (0..w).map(|c| dt[(j, c)]).collect();
            self.store(*s, &row);
        }
        for (k, (target, ..)) in l.inner.iter().enumerate() {
            let Some(i) = self.index(*target) else { continue };
            for c in 0..w {
                let add: f64 = (0..nt).map(|j| dz_dt[(k, j)] * dt[(j, c)]).sum();
                self.tangent[i * w + c] += add;
            }
        }
        Ok(())
    }
}
