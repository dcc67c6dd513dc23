//! The Jacobian a run needs, and the projection the run sets up with it at the start.
//!
//! Input: the executable program and the run options; for the projection, the model's instance
//! at its consistent initial states. Output: the program with its symbolic Jacobian added when
//! the method, the invariants or the state-choice check need it (and a note for `-v`); the
//! projection's gain ([`default_gain`]) and its factored [`Projector`] with the
//! [`InvariantReport`] begun at the initial point. It deliberately integrates nothing.

use crate::instance::Instance;
use crate::ode::Projector;
use crate::run::{InvariantReport, RunOptions, SimError, Stabilize};
use eqm_compile::exec::ExecProgram;

/// Prepares `program` for a run with `options`: the symbolic Jacobian for implicit methods
/// and for the invariants (`g` and `G` come from it). Returns a note for `-v`.
pub fn prepare(program: &mut ExecProgram, options: &RunOptions) -> Option<String> {
    let needed = options.method.uses_jacobian() || !program.invariants().is_empty() || program.state_choice().is_some();
    if !needed {
        return None;
    }
    Some(match program.add_jacobian() {
        Ok(()) => {
            let j = program.jacobian().expect("just built");
            format!(
                "symbolic Jacobian: {} nonzeros, {} partial derivatives, {} colour(s)",
                j.nonzeros(),
                j.partials.len(),
                j.n_colors
            )
        }
        Err(reason) => format!("Jacobian by difference quotients: {reason}"),
    })
}

/// The largest eigenvalue modulus of `jacobian`: computed up to 200 rows, bounded by the
/// infinity norm above (eigenvalues of large matrices cost more than the run they inform).
fn spectral_radius(jacobian: &nalgebra::DMatrix<f64>) -> f64 {
    if jacobian.nrows() == 0 {
        0.0
    } else if jacobian.nrows() <= 200 {
        jacobian
            .clone()
            .complex_eigenvalues()
            .iter()
            .map(|l| l.norm())
            .fold(0.0, f64::max)
    } else {
        jacobian
            .row_iter()
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }
}

/// The default gain of the projection: the rate of the model's fastest motion at the start,
/// the larger of the largest eigenvalue modulus of `∂f/∂x` and the relative speed `‖f‖/‖x‖` of
/// the state (a system starting at rest has no velocity-dependent rates yet, so its Jacobian
/// alone underestimates how fast it is about to move), and at least ten over the run's length.
/// The constraint error then decays within the model's shortest time scale, so drift cannot
/// accumulate, while the correction adds no rate faster than the model's own: a method that
/// resolves the motion is stable and accurate for the correction too, and the problem does not
/// become stiff. (Ten times that rate keeps the residual no smaller at tight tolerances but makes
/// an explicit method take about three times as many steps on the pendulum.)
pub fn default_gain(jacobian: &nalgebra::DMatrix<f64>, f: &[f64], x: &[f64], span: f64) -> f64 {
    let radius = spectral_radius(jacobian);
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    let speed = if norm(x) > 0.0 { norm(f) / norm(x) } else { 0.0 };
    let floor = if span > 0.0 && span.is_finite() {
        10.0 / span
    } else {
        0.0
    };
    let gain = radius.max(speed).max(floor);
    if gain.is_finite() && gain > 0.0 { gain } else { 1.0 }
}

/// The projection of a run (none with `--stabilize off`, or when the program has no symbolic
/// Jacobian to give `G`) and the report started at the initial point `x0`.
pub(super) fn projector(
    instance: &mut Instance<'_>,
    options: &RunOptions,
    x0: &[f64],
) -> Result<(Option<Projector>, InvariantReport), SimError> {
    let (n, m) = (x0.len(), instance.program().invariants().len());
    let mut f_x = nalgebra::DMatrix::zeros(n, n);
    let mut g = vec![0.0; m];
    let mut g_x = nalgebra::DMatrix::zeros(m, n);
    let mut dx = vec![0.0; n];
    let out = crate::interp::JacobianOut {
        f_x: Some(&mut f_x),
        g: Some(&mut g),
        g_x: Some(&mut g_x),
        ..Default::default()
    };
    let available = instance
        .jacobian(options.start, x0, &mut dx, out)
        .map_err(|f| SimError::Failed {
            warnings: Vec::new(),
            time: options.start,
            message: "the invariants could not be evaluated at the start".to_string(),
            diagnostic: Some(Box::new(instance.program().failure_diagnostic(&f))),
        })?;
    let residual = g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let mut report = InvariantReport {
        gain: None,
        rank: 0,
        invariants: m,
        final_residual: residual,
        max_residual: residual,
    };
    if !available {
        return Ok((None, report));
    }
    let gain = match options.stabilize {
        Stabilize::Off => return Ok((None, report)),
        Stabilize::Gain(k) => (k, "given"),
        Stabilize::Default => (default_gain(&f_x, &dx, x0, options.stop - options.start), "default"),
    };
    let mut projector = Projector::new(n, m, gain.0).for_program(instance.program());
    report.rank = projector.factor(&g_x);
    report.gain = Some(gain);
    Ok((Some(projector), report))
}
