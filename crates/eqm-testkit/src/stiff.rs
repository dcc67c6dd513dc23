//! Stiff test problems with published reference solutions (Hairer and Wanner, "Solving
//! Ordinary Differential Equations II", and the IVP test set of Mazzia and Magherini): the
//! right-hand side, the initial values, the end time and the reference values there.

use eqm_integrators::{
    Atol, IntegrationError, Method, OdeSystem, Options, Output, RhsError, Stats, integrate, stepper_for,
};
use nalgebra::DMatrix;
use std::ops::ControlFlow;

/// Writes the exact Jacobian `∂f/∂x` at `(t, x)`.
pub type JacobianFn = fn(f64, &[f64], &mut DMatrix<f64>);

#[derive(Clone)]
pub struct StiffProblem {
    pub name: &'static str,
    pub x0: Vec<f64>,
    pub t_end: f64,
    pub rhs: fn(f64, &[f64], &mut [f64]),
    /// The exact Jacobian `∂f/∂x`, written out (every entry).
    pub jacobian: JacobianFn,
    pub reference: Vec<f64>,
    /// The same problem as an EQM model, its states named `y1`, `y2`, ... in order.
    pub model: &'static str,
}

/// Robertson's chemical kinetics, to `t_end` (published references for 40 and 1e11; none,
/// an empty vector, for other end times).
pub fn robertson(t_end: f64) -> StiffProblem {
    let reference = if t_end == 40.0 {
        vec![0.715_827_068_719_3, 9.185_534_764_529e-6, 0.284_163_745_745_9]
    } else if t_end == 1e11 {
        vec![2.083_340_149_701e-8, 8.333_360_770_334e-14, 9.999_999_791_665e-1]
    } else {
        Vec::new()
    };
    StiffProblem {
        name: "Robertson",
        x0: vec![1.0, 0.0, 0.0],
        t_end,
        rhs: |_, y, dy| {
            dy[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
            dy[2] = 3e7 * y[1] * y[1];
            dy[1] = -dy[0] - dy[2];
        },
        jacobian: |_, y, j| {
            let rows = [
                [-0.04, 1e4 * y[2], 1e4 * y[1]],
                [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                [0.0, 6e7 * y[1], 0.0],
            ];
            set_rows(j, &rows);
        },
        reference,
        model: "model Robertson\n  Real y1(start = 1, fixed = true);\n  Real y2(start = 0, fixed = true);\n  Real y3(start = 0, fixed = true);\nequation\n  der(y1) = -0.04*y1 + 1e4*y2*y3;\n  der(y3) = 3e7*y2^2;\n  der(y2) = -der(y1) - der(y3);\nend Robertson;\n",
    }
}

/// HIRES: eight reactions of plant physiology, to t = 321.8122.
pub fn hires() -> StiffProblem {
    StiffProblem {
        name: "HIRES",
        x0: vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057],
        t_end: 321.8122,
        rhs: |_, y, f| {
            f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
            f[1] = 1.71 * y[0] - 8.75 * y[1];
            f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
            f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
            f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
            f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
            f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6];
            f[7] = -f[6];
        },
        jacobian: |_, y, j| {
            let rows = [
                [-1.71, 0.43, 8.32, 0.0, 0.0, 0.0, 0.0, 0.0],
                [1.71, -8.75, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, -10.03, 0.43, 0.035, 0.0, 0.0, 0.0],
                [0.0, 8.32, 1.71, -1.12, 0.0, 0.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 0.0, -1.745, 0.43, 0.43, 0.0],
                [0.0, 0.0, 0.0, 0.69, 1.71, -280.0 * y[7] - 0.43, 0.69, -280.0 * y[5]],
                [0.0, 0.0, 0.0, 0.0, 0.0, 280.0 * y[7], -1.81, 280.0 * y[5]],
                [0.0, 0.0, 0.0, 0.0, 0.0, -280.0 * y[7], 1.81, -280.0 * y[5]],
            ];
            set_rows(j, &rows);
        },
        reference: vec![
            0.737_131_257_332_566_8e-3,
            0.144_248_572_631_618_5e-3,
            0.588_872_974_096_757_5e-4,
            0.117_565_134_328_314_9e-2,
            0.238_635_619_883_133_1e-2,
            0.623_896_825_274_279_6e-2,
            0.284_999_839_518_576_9e-2,
            0.285_000_160_481_423_1e-2,
        ],
        model: "model Hires\n  Real y1(start = 1, fixed = true);\n  Real y2(start = 0, fixed = true);\n  Real y3(start = 0, fixed = true);\n  Real y4(start = 0, fixed = true);\n  Real y5(start = 0, fixed = true);\n  Real y6(start = 0, fixed = true);\n  Real y7(start = 0, fixed = true);\n  Real y8(start = 0.0057, fixed = true);\nequation\n  der(y1) = -1.71*y1 + 0.43*y2 + 8.32*y3 + 0.0007;\n  der(y2) = 1.71*y1 - 8.75*y2;\n  der(y3) = -10.03*y3 + 0.43*y4 + 0.035*y5;\n  der(y4) = 8.32*y2 + 1.71*y3 - 1.12*y4;\n  der(y5) = -1.745*y5 + 0.43*y6 + 0.43*y7;\n  der(y6) = -280*y6*y8 + 0.69*y4 + 1.71*y5 - 0.43*y6 + 0.69*y7;\n  der(y7) = 280*y6*y8 - 1.81*y7;\n  der(y8) = -der(y7);\nend Hires;\n",
    }
}

/// Van der Pol's oscillator with μ = 1000 in Hairer's scaling (ε = 1/μ² = 1e-6), to t = 2.
pub fn van_der_pol() -> StiffProblem {
    StiffProblem {
        name: "Van der Pol (mu = 1000)",
        x0: vec![2.0, -0.66],
        t_end: 2.0,
        rhs: |_, y, f| {
            f[0] = y[1];
            f[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / 1e-6;
        },
        jacobian: |_, y, j| {
            let rows = [
                [0.0, 1.0],
                [(-2.0 * y[0] * y[1] - 1.0) / 1e-6, (1.0 - y[0] * y[0]) / 1e-6],
            ];
            set_rows(j, &rows);
        },
        reference: vec![0.170_616_773_217_046_9e1, -0.892_809_701_024_812_5],
        model: "model VanDerPol\n  Real y1(start = 2, fixed = true);\n  Real y2(start = -0.66, fixed = true);\nequation\n  der(y1) = y2;\n  der(y2) = ((1 - y1^2)*y2 - y1)/1e-6;\nend VanDerPol;\n",
    }
}

/// The Oregonator (Belousov–Zhabotinskii reaction), to t = 360.
pub fn oregonator() -> StiffProblem {
    StiffProblem {
        name: "Oregonator",
        x0: vec![1.0, 2.0, 3.0],
        t_end: 360.0,
        rhs: |_, y, f| {
            f[0] = 77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1]));
            f[1] = (y[2] - (1.0 + y[0]) * y[1]) / 77.27;
            f[2] = 0.161 * (y[0] - y[2]);
        },
        jacobian: |_, y, j| {
            let rows = [
                [77.27 * (1.0 - 2.0 * 8.375e-6 * y[0] - y[1]), 77.27 * (1.0 - y[0]), 0.0],
                [-y[1] / 77.27, -(1.0 + y[0]) / 77.27, 1.0 / 77.27],
                [0.161, 0.0, -0.161],
            ];
            set_rows(j, &rows);
        },
        reference: vec![
            0.100_081_487_031_852_3e1,
            0.122_817_852_154_991_7e4,
            0.132_055_494_284_670_6e3,
        ],
        model: "model Oregonator\n  Real y1(start = 1, fixed = true);\n  Real y2(start = 2, fixed = true);\n  Real y3(start = 3, fixed = true);\nequation\n  der(y1) = 77.27*(y2 + y1*(1 - 8.375e-6*y1 - y2));\n  der(y2) = (y3 - (1 + y1)*y2)/77.27;\n  der(y3) = 0.161*(y1 - y3);\nend Oregonator;\n",
    }
}

fn set_rows<const N: usize>(j: &mut DMatrix<f64>, rows: &[[f64; N]; N]) {
    for (i, row) in rows.iter().enumerate() {
        for (k, v) in row.iter().enumerate() {
            j[(i, k)] = *v;
        }
    }
}

/// A problem's right-hand side as an [`OdeSystem`], with its exact Jacobian or without (then
/// the integrators use difference quotients).
pub struct System {
    pub dim: usize,
    pub rhs: fn(f64, &[f64], &mut [f64]),
    pub jacobian: Option<JacobianFn>,
}

impl OdeSystem for System {
    fn dim(&self) -> usize {
        self.dim
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        (self.rhs)(t, x, dx);
        Ok(())
    }

    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut DMatrix<f64>) -> Option<Result<(), RhsError>> {
        let exact = self.jacobian?;
        exact(t, x, jacobian);
        Some(Ok(()))
    }
}

/// Solves `problem` to its end time with `method` at `rtol` and a scalar `atol`, with
/// difference-quotient Jacobians: the solution there and the statistics.
pub fn solve(
    method: &Method,
    problem: &StiffProblem,
    rtol: f64,
    atol: f64,
) -> Result<(Vec<f64>, Stats), IntegrationError> {
    solve_rust(method, problem, rtol, atol, false)
}

/// As [`solve`], with the problem's exact Jacobian when `exact_jacobian`.
pub fn solve_rust(
    method: &Method,
    problem: &StiffProblem,
    rtol: f64,
    atol: f64,
    exact_jacobian: bool,
) -> Result<(Vec<f64>, Stats), IntegrationError> {
    let options = Options {
        rtol,
        atol: Atol::Scalar(atol),
        ..Options::default()
    };
    let mut sys = System {
        dim: problem.x0.len(),
        rhs: problem.rhs,
        jacobian: exact_jacobian.then_some(problem.jacobian),
    };
    solve_system(method, &mut sys, problem, &options)
}

/// Integrates `sys` from the problem's initial values to its end time: the solution there
/// and the statistics.
fn solve_system(
    method: &Method,
    sys: &mut dyn OdeSystem,
    problem: &StiffProblem,
    options: &Options,
) -> Result<(Vec<f64>, Stats), IntegrationError> {
    let mut stepper = stepper_for(method, options);
    let mut last = Vec::new();
    integrate(
        sys,
        stepper.as_mut(),
        0.0,
        &problem.x0,
        problem.t_end,
        &Output::Times(vec![problem.t_end]),
        |_, x| {
            last = x.to_vec();
            ControlFlow::Continue(())
        },
    )?;
    Ok((last, stepper.stats()))
}

/// A problem compiled from its model: the executable program with its symbolic Jacobian.
pub fn compile_model(problem: &StiffProblem) -> eqm_compile::exec::ExecProgram {
    use crate::pipeline::Pipeline;
    let mut session = eqm_flatten::Sources::new();
    session.add_file("stiff.eqm", problem.model.to_string());
    let mut compiled = session
        .compile(None, &eqm_flatten::Options::default())
        .unwrap_or_else(|| panic!("{}: {}", problem.name, session.render_diagnostics(false)));
    compiled
        .program
        .add_jacobian()
        .expect("the stiff models have a symbolic Jacobian");
    compiled.program
}

/// A compiled model as the integrators see it: the right-hand side and the symbolic Jacobian
/// run as native code, as in `eqm run`.
pub struct ModelSystem<'p> {
    pub instance: eqm_sim::instance::Instance<'p>,
    scratch: Vec<f64>,
}

impl<'p> ModelSystem<'p> {
    pub fn new(
        program: &'p eqm_compile::exec::ExecProgram,
        native: &std::sync::Arc<eqm_sim::native::NativeCode>,
    ) -> Self {
        let mut instance = eqm_sim::instance::Instance::new(program).expect("an instance");
        instance.attach_native(native.clone());
        instance
            .interpreter()
            .set_finite_checks(eqm_sim::interp::FiniteChecks::Derivatives);
        ModelSystem {
            instance,
            scratch: vec![0.0; program.layout().states],
        }
    }
}

impl OdeSystem for ModelSystem<'_> {
    fn dim(&self) -> usize {
        self.scratch.len()
    }

    fn rhs(&mut self, t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        use eqm_sim::interp::OdeRhs;
        self.instance.rhs(t, x, dx).map_err(|e| RhsError::new(e.to_string()))
    }

    fn jacobian(&mut self, t: f64, x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        let out = eqm_sim::interp::JacobianOut {
            f_x: Some(jacobian),
            ..Default::default()
        };
        match self.instance.jacobian(t, x, &mut self.scratch, out) {
            Ok(true) => Some(Ok(())),
            Ok(false) => None,
            Err(e) => Some(Err(RhsError::new(e.to_string()))),
        }
    }
}

/// [`solve`] through the compiled model `system` instead of the hand-written right-hand side.
pub fn solve_model(
    method: &Method,
    system: &mut ModelSystem<'_>,
    problem: &StiffProblem,
    rtol: f64,
    atol: f64,
) -> Result<(Vec<f64>, Stats), IntegrationError> {
    let options = Options {
        rtol,
        atol: Atol::Scalar(atol),
        ..Options::default()
    };
    solve_system(method, system, problem, &options)
}
