//! FMPy drives the parts of an FMU the model structure describes: a model with an
//! initialization problem of its own, whose initial unknowns FMPy gets after setting the knowns
//! the description names, and FMI 3's adjoint derivatives, the transpose of the directional
//! ones. Values are checked against closed forms. Without `python3` and `fmpy` each test says
//! so and passes.

use super::exported_as;
use eqm::fmi::FmiVersion;
use std::process::Command;

/// The last line of `script`'s output as numbers; `None` (with a message) when Python or FMPy
/// is missing.
fn numbers(script: &str) -> Option<Vec<f64>> {
    let probe = Command::new("python3").args(["-c", "import fmpy"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("python3 with fmpy is not installed: skipped");
        return None;
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "FMPy failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().expect("the script prints its values");
    Some(last.split(' ').map(|v| v.parse().unwrap()).collect())
}

const OWN_INIT: &str = "model OwnInit
  parameter Real a = 2;
  input Real u(start = 1);
  Real x(start = 1);
  Real y(start = 0.5, fixed = true);
  output Real z;
initial equation
  der(x) = 0;
equation
  der(x) = -a*x + u;
  der(y) = x;
  z = 3*y + 2*x;
end OwnInit;";

/// The model starts at rest in `x` (`der(x) = 0`, so `x = u/a`): FMPy sets the knowns of the
/// initialization the description lists for its initial unknowns (the input `u`, the parameter
/// `a`, the state `y` with a fixed start) and simulates, in both versions and both interfaces,
/// after validating the description. The closed form: `x = u/a`, `y = y0 + t·u/a`,
/// `z = 3y + 2x`.
#[test]
fn fmpy_initializes_a_model_with_its_own_initial_equations_from_the_listed_knowns() {
    for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
        let (dir, _) = exported_as(OWN_INIT, "OwnInit", version);
        for kind in ["CoSimulation", "ModelExchange"] {
            let script = format!(
                "import fmpy\nfrom fmpy.validation import validate_fmu\nproblems = validate_fmu({dir:?})\nassert not problems, problems\n\
r = fmpy.simulate_fmu({dir:?}, fmi_type={kind:?}, stop_time=1, output_interval=0.5, start_values={{'u': 3, 'a': 4, 'y': 1}}, output=['x', 'y', 'z'])\n\
print(' '.join(repr(float(v)) for row in r for v in row))\n",
                dir = dir.display().to_string(),
            );
            let Some(values) = numbers(&script) else { return };
            let (u, a, y0) = (3.0, 4.0, 1.0);
            assert_eq!(values.len(), 12, "{version:?} {kind}: {values:?}");
            for row in values.chunks(4) {
                let t = row[0];
                let (x, y) = (u / a, y0 + t * u / a);
                let expected = [x, y, 3.0 * y + 2.0 * x];
                for (got, want) in row[1..].iter().zip(expected) {
                    assert!(
                        (got - want).abs() < 1e-6,
                        "{version:?} {kind} at {t}: {row:?} against {expected:?}"
                    );
                }
            }
        }
    }
}

const PARTIALS: &str = "model Partials
  parameter Real a = 0.5;
  input Real u(start = 3);
  output Real y;
  Real x1(start = 1, fixed = true);
  Real x2(start = 2, fixed = true);
equation
  der(x1) = -a*x1 + sin(x2);
  der(x2) = u*x1*x1;
  y = x1*x2 + u^2;
end Partials;";

/// FMI 3 Model Exchange through FMPy at the states (0.7, 1.3) with `u = 3`: the adjoint
/// derivative `sᵀJ` of (der(x1), der(x2), y) over (x1, x2, u) for two seeds against the closed
/// form of the Jacobian, and each column of the directional derivatives against the adjoint
/// of the unit seeds (the one is the other's transpose). The description declares
/// `providesAdjointDerivatives`.
#[test]
fn fmpy_gets_adjoint_derivatives_that_are_the_transpose_of_the_directional_ones() {
    let (dir, _) = exported_as(PARTIALS, "Partials", FmiVersion::Fmi3);
    let script = format!(
        r#"import ctypes
from fmpy import read_model_description
from fmpy.fmi3 import FMU3Model
from fmpy.validation import validate_fmu
d = {dir:?}
problems = validate_fmu(d)
assert not problems, problems
md = read_model_description(d)
assert md.modelExchange.providesAdjointDerivatives
vr = {{v.name: v.valueReference for v in md.modelVariables}}
me = FMU3Model(guid=md.guid, unzipDirectory=d, modelIdentifier='Partials', instanceName='me')
me.instantiate()
me.enterInitializationMode()
me.exitInitializationMode()
me.updateDiscreteStates()
me.enterContinuousTimeMode()
me.setContinuousStates((ctypes.c_double * 2)(0.7, 1.3), 2)
unknowns = [vr['der(x1)'], vr['der(x2)'], vr['y']]
knowns = [vr['x1'], vr['x2'], vr['u']]
out = []
for seed in ([1.0, 0.0, 0.0], [0.3, -2.0, 0.5]):
    out += me.getAdjointDerivative(unknowns, knowns, seed, nSensitivity=3)
for j in range(3):
    unit = [1.0 if k == j else 0.0 for k in range(3)]
    out += me.getDirectionalDerivative(unknowns, knowns, unit, nSensitivity=3)
for i in range(3):
    unit = [1.0 if k == i else 0.0 for k in range(3)]
    out += me.getAdjointDerivative(unknowns, knowns, unit, nSensitivity=3)
me.terminate(); me.freeInstance()
print(' '.join(repr(v) for v in out))
"#,
        dir = dir.display().to_string(),
    );
    let Some(values) = numbers(&script) else { return };
    assert_eq!(values.len(), 24, "{values:?}");
    let (a, u, x1, x2) = (0.5_f64, 3.0_f64, 0.7_f64, 1.3_f64);
    // Rows: der(x1), der(x2), y; columns: x1, x2, u.
    let jacobian = [[-a, x2.cos(), 0.0], [2.0 * u * x1, 0.0, x1 * x1], [x2, x1, 2.0 * u]];
    for (k, seed) in [[1.0, 0.0, 0.0], [0.3, -2.0, 0.5]].iter().enumerate() {
        for j in 0..3 {
            let expected: f64 = (0..3).map(|i| seed[i] * jacobian[i][j]).sum();
            let got = values[3 * k + j];
            // The derivatives of y come from central differences, the others are exact.
            assert!(
                (got - expected).abs() < 1e-6,
                "seed {seed:?}, known {j}: {got} against {expected}"
            );
        }
    }
    // The directional derivative along known j is column j; the adjoint of unit seed i is row
    // i: entry (i, j) the same in both, bit for bit (the same evaluations).
    let (columns, rows) = (&values[6..15], &values[15..24]);
    for i in 0..3 {
        for j in 0..3 {
            assert_eq!(columns[3 * j + i], rows[3 * i + j], "J[{i}][{j}]");
        }
    }
}
