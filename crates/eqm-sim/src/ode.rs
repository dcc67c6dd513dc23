//! The one adapter between a program instance and the integrators: the model's field (with the
//! constraint projection when the model has invariants), its symbolic Jacobian dense or sparse,
//! and the last evaluation failure, kept so that an error can name the equations involved.
//!
//! Input: an [`Instance`] and optionally a [`Projector`]. Output: [`ModelOde`], an
//! [`OdeSystem`] for any integrator. Plain simulation integrates it directly; hybrid simulation
//! wraps it (`hybrid::HybridModel`), freezing relations and replacing the field while sliding.
//! Nothing here handles events or writes results.

use crate::instance::Instance;
use crate::interp::{JacobianOut, OdeRhs};
use eqm_compile::exec::ExecProgram;
use eqm_integrators::{OdeSystem, RhsError};
use eqm_ir::failure::EvalFailure;

/// A model instance as the integrator sees it; see the module documentation.
pub struct ModelOde<'p> {
    pub instance: Instance<'p>,
    /// The last evaluation failure.
    pub failure: Option<EvalFailure>,
    /// The constraint projection of a model with invariants, if any.
    pub projector: Option<Projector>,
    /// The run's cancel flag ([`crate::run::RunOptions::cancel`]).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl<'p> ModelOde<'p> {
    pub fn new(instance: Instance<'p>) -> ModelOde<'p> {
        ModelOde {
            instance,
            failure: None,
            projector: None,
            cancel: None,
        }
    }

    /// Keeps a failure for the error message and turns it into the integrators' error.
    pub fn keep(&mut self, result: Result<(), EvalFailure>) -> Result<(), RhsError> {
        result.map_err(|f| {
            let message = f.to_string();
            self.failure = Some(f);
            RhsError::new(message)
        })
    }
}

impl OdeSystem for ModelOde<'_> {
    fn dim(&self) -> usize {
        self.instance.dim()
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed))
    }

    fn accepted(&mut self) {
        self.instance.keep_guesses();
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        let result = match &mut self.projector {
            Some(p) => p.rhs(&mut self.instance, t, x, dx),
            None => self.instance.rhs(t, x, dx),
        };
        self.keep(result)
    }

    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        match &mut self.projector {
            Some(p) => p.jacobian(&mut self.instance, &mut self.failure, t, x, jacobian),
            None => symbolic_jacobian(&mut self.instance, &mut self.failure, t, x, jacobian),
        }
    }

    /// The symbolic Jacobian's pattern; none with projection, whose correction is dense.
    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        let program = self.instance.program();
        program
            .jacobian()
            .filter(|_| self.projector.is_none())
            .map(|j| &j.rows[..])
    }

    fn sparse_jacobian(&mut self, t: f64, x: &[f64], values: &mut [f64]) -> Option<Result<(), RhsError>> {
        sparse_symbolic_jacobian(&mut self.instance, &mut self.failure, t, x, values)
    }
}

/// The symbolic Jacobian's values in pattern order for [`OdeSystem::sparse_jacobian`].
fn sparse_symbolic_jacobian(
    instance: &mut Instance<'_>,
    failure: &mut Option<EvalFailure>,
    t: f64,
    x: &[f64],
    values: &mut [f64],
) -> Option<Result<(), RhsError>> {
    let out = JacobianOut {
        f_values: Some(values),
        ..Default::default()
    };
    evaluate_jacobian(instance, failure, t, x, out)
}

/// Evaluates the symbolic Jacobian of `instance` at `(t, x)` into `out` for the integrators:
/// `None` when the program has none or it is not defined at this point; a failure is kept in
/// `failure`.
fn evaluate_jacobian(
    instance: &mut Instance<'_>,
    failure: &mut Option<EvalFailure>,
    t: f64,
    x: &[f64],
    out: JacobianOut,
) -> Option<Result<(), RhsError>> {
    if !instance.has_jacobian() {
        return None;
    }
    let mut dx = vec![0.0; x.len()];
    match instance.jacobian(t, x, &mut dx, out) {
        Ok(true) => Some(Ok(())),
        Ok(false) => None,
        Err(f) => {
            let message = f.to_string();
            *failure = Some(f);
            Some(Err(RhsError::new(message)))
        }
    }
}

/// The symbolic Jacobian of `instance` at `(t, x)` for [`OdeSystem::jacobian`] (see
/// [`evaluate_jacobian`]).
fn symbolic_jacobian(
    instance: &mut Instance<'_>,
    failure: &mut Option<EvalFailure>,
    t: f64,
    x: &[f64],
    jacobian: &mut nalgebra::DMatrix<f64>,
) -> Option<Result<(), RhsError>> {
    let out = JacobianOut {
        f_x: Some(jacobian),
        ..Default::default()
    };
    evaluate_jacobian(instance, failure, t, x, out)
}

/// The constraint projection of a model with invariants: its buffers and the evaluations of
/// `g` and `G` it needs (see [`crate::projection`]).
#[derive(Debug, Clone)]
pub struct Projector {
    projection: crate::projection::Projection,
    g: Vec<f64>,
    g_x: nalgebra::DMatrix<f64>,
    shifted_g_x: nalgebra::DMatrix<f64>,
    /// Whether the program reads `time`: then the invariants may depend on it explicitly, and
    /// `∂g/∂t` (a difference quotient in time at fixed states) enters the correction.
    time_dependent: bool,
    g_shifted: Vec<f64>,
    g_t: Vec<f64>,
    dx_shifted: Vec<f64>,
}

impl Projector {
    pub fn new(n: usize, m: usize, gain: f64) -> Projector {
        Projector {
            projection: crate::projection::Projection::new(n, m, gain),
            g: vec![0.0; m],
            g_x: nalgebra::DMatrix::zeros(m, n),
            shifted_g_x: nalgebra::DMatrix::zeros(m, n),
            time_dependent: false,
            g_shifted: vec![0.0; m],
            g_t: vec![0.0; m],
            dx_shifted: vec![0.0; n],
        }
    }

    /// This projector for `program`: with `∂g/∂t` when the program reads `time` anywhere.
    pub fn for_program(mut self, program: &ExecProgram) -> Projector {
        let exprs = program.exprs();
        self.time_dependent =
            (0..exprs.len()).any(|i| matches!(exprs.get(eqm_ir::expr::ExprId(i as u32)), eqm_ir::expr::Node::Time));
        self
    }

    /// Factors `G` at the start point; returns its numerical rank.
    pub fn factor(&mut self, g_x: &nalgebra::DMatrix<f64>) -> usize {
        self.projection.factor(g_x);
        self.projection.rank()
    }

    /// The corrected field at `(t, x)`. Where `G` is not defined (a partial derivative that
    /// is not finite), the plain field is returned: the next points correct the drift.
    pub fn rhs(&mut self, instance: &mut Instance<'_>, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), EvalFailure> {
        let out = JacobianOut {
            g: Some(&mut self.g),
            g_x: Some(&mut self.g_x),
            ..Default::default()
        };
        if !self.time_dependent {
            if instance.jacobian(t, x, dx, out)? {
                self.projection.correct(&self.g, None, &self.g_x, dx);
            }
            return Ok(());
        }
        // `g` a little later at the same states first, so that the evaluation at `t` is the
        // one the instance keeps.
        let delta = f64::EPSILON.sqrt() * t.abs().max(1.0);
        let shifted = JacobianOut {
            g: Some(&mut self.g_shifted),
            ..Default::default()
        };
        let has_shifted = instance.jacobian(t + delta, x, &mut self.dx_shifted, shifted)?;
        if instance.jacobian(t, x, dx, out)? {
            for ((d, later), now) in self.g_t.iter_mut().zip(&self.g_shifted).zip(&self.g) {
                *d = if has_shifted { (later - now) / delta } else { 0.0 };
            }
            self.projection.correct(&self.g, Some(&self.g_t), &self.g_x, dx);
        }
        Ok(())
    }

    /// The Jacobian of the corrected field: the symbolic `∂f/∂x` and `G`, and `G ∂f/∂x + H`
    /// with `H = ∂(G f̄)/∂x`: symbolically, as the Jacobian of the invariants' rates
    /// `Σ ∂g/∂x_j f_j`, when every invariant reads only states; otherwise `H` is the
    /// directional difference of `G` along `f` (one more evaluation of `G`).
    pub fn jacobian(
        &mut self,
        instance: &mut Instance<'_>,
        failure: &mut Option<EvalFailure>,
        t: f64,
        x: &[f64],
        jacobian: &mut nalgebra::DMatrix<f64>,
    ) -> Option<Result<(), RhsError>> {
        let mut f = vec![0.0; x.len()];
        let symbolic_rates = instance.program().jacobian().is_some_and(|j| !j.rates.is_empty());
        let mut evaluate = || -> Result<bool, EvalFailure> {
            let out = JacobianOut {
                f_x: Some(&mut *jacobian),
                g: Some(&mut self.g),
                g_x: Some(&mut self.g_x),
                rate_x: symbolic_rates.then_some(&mut self.shifted_g_x),
                ..Default::default()
            };
            if !instance.jacobian(t, x, &mut f, out)? {
                return Ok(false);
            }
            let rate_x = if symbolic_rates {
                // `G ∂f/∂x + H` is the rates' Jacobian; the correction wants it without the
                // `G ∂f/∂x` that `correct_jacobian` adds itself.
                &self.shifted_g_x - &self.g_x * &*jacobian
            } else {
                let size = x.iter().map(|v| v * v).sum::<f64>().sqrt();
                let speed = f.iter().map(|v| v * v).sum::<f64>().sqrt();
                if speed == 0.0 {
                    nalgebra::DMatrix::zeros(self.g_x.nrows(), self.g_x.ncols())
                } else {
                    let eps = f64::EPSILON.sqrt() * (1.0 + size) / speed;
                    let shifted: Vec<f64> = x.iter().zip(&f).map(|(xi, fi)| xi + eps * fi).collect();
                    let mut scratch = vec![0.0; x.len()];
                    let out = JacobianOut {
                        g_x: Some(&mut self.shifted_g_x),
                        ..Default::default()
                    };
                    if !instance.jacobian(t, &shifted, &mut scratch, out)? {
                        return Ok(false);
                    }
                    (&self.shifted_g_x - &self.g_x) / eps
                }
            };
            self.projection.correct_jacobian(&self.g_x, &rate_x, jacobian);
            Ok(true)
        };
        match evaluate() {
            Ok(true) => Some(Ok(())),
            Ok(false) => None,
            Err(e) => {
                let message = e.to_string();
                *failure = Some(e);
                Some(Err(RhsError::new(message)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Projector;
    use crate::instance::Instance;
    use eqm_compile::analysis::{self, AnalysisOptions, IndexForm};
    use eqm_diag::timing::Timings;
    use nalgebra::DMatrix;

    /// The program of `text` in `form`, with its symbolic Jacobian.
    fn program(text: &str, form: IndexForm) -> eqm_compile::exec::ExecProgram {
        let mut sources = eqm_flatten::Sources::new();
        sources.add_file("m.eqm", text.to_string());
        let flat = sources.flatten(None, &eqm_flatten::Options::default());
        let flat = flat.unwrap_or_else(|| panic!("{}", sources.render_diagnostics(false)));
        let options = AnalysisOptions {
            keep_aliases: false,
            index_form: form,
        };
        let (analysis, _) = analysis::analyze(flat, &options, &mut Timings::default()).expect("analysed");
        let mut compiled = analysis::compile(analysis, &mut Timings::default()).expect("compiled");
        compiled.program.add_jacobian().expect("a symbolic Jacobian");
        compiled.program
    }

    /// The Jacobian of the projected field against central differences of the projected
    /// field, at a point on the invariant manifold, where it is exact.
    fn check(text: &str, form: IndexForm, x: &[f64], rates: bool) {
        let program = program(text, form);
        let jac = program.jacobian().expect("a symbolic Jacobian");
        assert_eq!(!jac.rates.is_empty(), rates, "symbolic rates");
        let (n, m) = (program.layout().states, program.invariants().len());
        assert_eq!(x.len(), n);
        let mut instance = Instance::new(&program).expect("instance");
        let mut projector = Projector::new(n, m, 3.0);
        let mut failure = None;
        let mut symbolic = DMatrix::zeros(n, n);
        projector
            .jacobian(&mut instance, &mut failure, 0.0, x, &mut symbolic)
            .expect("defined")
            .expect("no failure");
        for j in 0..n {
            let h = 1e-6 * (1.0 + x[j].abs());
            let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
            xp[j] += h;
            xm[j] -= h;
            let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
            projector.rhs(&mut instance, 0.0, &xp, &mut fp).expect("rhs");
            projector.rhs(&mut instance, 0.0, &xm, &mut fm).expect("rhs");
            for i in 0..n {
                let d = (fp[i] - fm[i]) / (2.0 * h);
                assert!(
                    (symbolic[(i, j)] - d).abs() < 1e-6 * (1.0 + d.abs()),
                    "∂f{i}/∂x{j}: {} vs {d}",
                    symbolic[(i, j)]
                );
            }
        }
    }

    #[test]
    fn the_jacobian_of_the_projected_field_matches_differences() {
        // The pendulum's embedding form: invariants of states only, rates symbolic.
        let pendulum = "model P\n  parameter Real L = 1;\n  parameter Real g = 1;\n  Real x(start = 0.6, fixed = true);\n  Real y(start = -0.8);\n  Real vx(start = 0.3, fixed = true);\n  Real vy(start = 0.2);\n  Real F;\nequation\n  der(x) = vx;\n  der(y) = vy;\n  der(vx) = -F*x/L;\n  der(vy) = -F*y/L - g;\n  x^2 + y^2 = L^2;\nend P;\n";
        let program = program(pendulum, IndexForm::Embedding);
        // A point on the constraints (x^2 + y^2 = 1, x vx + y vy = 0, der(x) = vx), in the
        // program's state order.
        let names: Vec<String> = program
            .states()
            .iter()
            .map(|v| program.symbols().get(*v).name.clone())
            .collect();
        let value = |name: &str| match name {
            "x" => 0.6,
            "y" => -0.8,
            "vx" => 0.2,
            "vy" => 0.15,
            "der(x)" => 0.2,
            "der(y)" => 0.15,
            other => panic!("unexpected state {other}"),
        };
        let x: Vec<f64> = names.iter().map(|n| value(n)).collect();
        check(pendulum, IndexForm::Embedding, &x, true);
        // A declared invariant that reads an algebraic variable: H by a directional difference.
        let algebraic = "model A\n  Real u(start = 1, fixed = true);\n  Real w(start = 2, fixed = true);\n  Real e;\nequation\n  der(u) = 1.5*u - u*w;\n  der(w) = u*w - 3*w;\n  e = u - 3*log(u) + w - 1.5*log(w);\ninvariant\n  e = 3 - 1.5*log(2);\nend A;\n";
        check(algebraic, IndexForm::Auto, &[1.0, 2.0], false);
    }
}
