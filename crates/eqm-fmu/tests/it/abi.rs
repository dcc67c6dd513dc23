//! The runtime's C functions called in the order an importer calls them: instantiation from
//! the resources, the experiment, initialization, steps, values, inputs, `terminate`, reset,
//! and every misuse answered with an error status instead of a crash.

use super::{exported, reference, uri};
use eqm_fmu::*;
use std::ffi::{CString, c_void};

/// An instance of the FMU at `dir` with `guid` for Co-Simulation (null when instantiation
/// failed).
fn instantiate(dir: &std::path::Path, guid: &str) -> *mut c_void {
    instantiate_as(dir, guid, 1)
}

/// An instance of the FMU at `dir` with `guid` for `fmu_type` (0: Model Exchange, 1:
/// Co-Simulation).
fn instantiate_as(dir: &std::path::Path, guid: &str, fmu_type: i32) -> *mut c_void {
    let name = CString::new("instance").unwrap();
    let guid = CString::new(guid).unwrap();
    let location = CString::new(uri(dir)).unwrap();
    let callbacks = Callbacks {
        logger: None,
        allocate_memory: None,
        free_memory: None,
        step_finished: None,
        component_environment: std::ptr::null_mut(),
    };
    // SAFETY: valid strings and callbacks that outlive the call (the instance keeps no pointer
    // to them but the logger, which is absent).
    unsafe {
        fmi2Instantiate(
            name.as_ptr(),
            fmu_type,
            guid.as_ptr(),
            location.as_ptr(),
            &callbacks,
            0,
            0,
        )
    }
}

/// The Real value of `vr`.
fn real(c: *mut c_void, vr: u32) -> f64 {
    let mut value = f64::NAN;
    // SAFETY: a live instance, one reference and one value.
    assert_eq!(unsafe { fmi2GetReal(c, &vr, 1, &mut value) }, OK);
    value
}

const DECAY: &str = "model Decay
  parameter Real k = 2;
  Real x(start = 1, fixed = true);
equation
  der(x) = -k*x;
end Decay;";

/// `x' = -k x` with `k` set before the initialization, stepped by 0.1 to 1: `exp(-k t)` at
/// every communication point; `fmi2Reset` brings back the exported value of `k`.
#[test]
fn a_decay_runs_through_the_c_functions_and_matches_its_closed_form() {
    let (dir, guid) = exported(DECAY, "Decay");
    let c = instantiate(&dir, &guid);
    assert!(!c.is_null());
    let (x, k) = (reference(&dir, "x"), reference(&dir, "k"));
    // SAFETY: `c` is a live instance; every array is one element long.
    unsafe {
        assert_eq!(fmi2SetReal(c, &k, 1, &3.0), OK);
        assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 1.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        for i in 0..10 {
            let t = i as f64 * 0.1;
            assert_eq!(fmi2DoStep(c, t, 0.1, 1), OK);
            let expected = (-3.0 * (t + 0.1)).exp();
            assert!((real(c, x) - expected).abs() < 1e-8, "x({}) = {}", t + 0.1, real(c, x));
        }
        let mut time = 0.0;
        assert_eq!(fmi2GetRealStatus(c, 2, &mut time), OK);
        assert!((time - 1.0).abs() < 1e-12);
        assert_eq!(fmi2Terminate(c), OK);
        assert_eq!(fmi2Reset(c), OK);
        assert_eq!(real(c, k), 2.0);
        fmi2FreeInstance(c);
    }
}

/// Misuse is an error status, never a crash: a wrong GUID or location gives no instance, a
/// step from another time, a step before the initialization, an unknown value reference, a
/// null array and a null instance are `fmi2Error`; a step past `terminate` is `fmi2Discard`.
#[test]
fn misuse_is_answered_with_an_error_status() {
    let (dir, guid) = exported(DECAY, "Decay");
    assert!(instantiate(&dir, "{not-the-guid}").is_null());
    assert!(instantiate(&dir.join("missing"), &guid).is_null());
    let c = instantiate(&dir, &guid);
    // SAFETY: `c` is a live instance or null where null is tested; arrays as documented.
    unsafe {
        assert_eq!(fmi2DoStep(c, 0.0, 0.1, 1), ERROR, "a step before the initialization");
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 1, 1.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(fmi2DoStep(c, 0.5, 0.1, 1), ERROR, "a step from another time");
        assert_eq!(fmi2DoStep(c, 0.0, 2.0, 1), ERROR, "a step past the stop time");
        let mut value = 0.0;
        assert_eq!(fmi2GetReal(c, &9999, 1, &mut value), ERROR);
        assert_eq!(fmi2GetReal(c, std::ptr::null(), 1, &mut value), ERROR);
        let mut integer = 0;
        assert_eq!(
            fmi2GetInteger(c, &reference(&dir, "x"), 1, &mut integer),
            ERROR,
            "a Real read as an Integer"
        );
        assert_eq!(fmi2DoStep(std::ptr::null_mut(), 0.0, 0.1, 1), ERROR);
        assert_eq!(fmi2DoStep(c, 0.0, 0.1, 1), OK, "the instance is still usable");
        fmi2FreeInstance(c);
        fmi2FreeInstance(std::ptr::null_mut());
    }
    let stop = "model Stop
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  when x >= 0.25 then
    terminate(\"done\");
  end when;
end Stop;";
    let (dir, guid) = exported(stop, "Stop");
    let c = instantiate(&dir, &guid);
    // SAFETY: a live instance; status values are written into one local each.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(fmi2DoStep(c, 0.0, 0.2, 1), OK);
        assert_eq!(fmi2DoStep(c, 0.2, 0.2, 1), DISCARD);
        let (mut terminated, mut time) = (0, 0.0);
        assert_eq!(fmi2GetBooleanStatus(c, 3, &mut terminated), OK);
        assert_eq!(terminated, 1);
        assert_eq!(fmi2GetRealStatus(c, 2, &mut time), OK);
        assert!((time - 0.25).abs() < 1e-9, "terminated at {time}");
        assert!((real(c, reference(&dir, "x")) - 0.25).abs() < 1e-9);
        fmi2FreeInstance(c);
    }
}

/// An input set between steps: `x' = u` with `u = 1` up to 1 and `u = -2` after gives
/// `x(2) = -1`.
#[test]
fn inputs_set_between_steps_drive_the_model() {
    let text = "model Driven
  input Real u(start = 1);
  Real x(start = 0, fixed = true);
equation
  der(x) = u;
end Driven;";
    let (dir, guid) = exported(text, "Driven");
    let c = instantiate(&dir, &guid);
    let (u, x) = (reference(&dir, "u"), reference(&dir, "x"));
    // SAFETY: a live instance; one element per array.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 2.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(fmi2DoStep(c, 0.0, 1.0, 1), OK);
        assert_eq!(fmi2SetReal(c, &u, 1, &-2.0), OK);
        assert_eq!(fmi2DoStep(c, 1.0, 1.0, 1), OK);
        assert!((real(c, x) + 1.0).abs() < 1e-9, "x(2) = {}", real(c, x));
        fmi2FreeInstance(c);
    }
}

/// Model Exchange through the C functions: the derivatives at points the importer sets are the
/// model's field (`x' = -k x`), the states round-trip, and what Model Exchange does not do (a
/// step of its own, arrays of the wrong length, an fmi2Type that does not exist) is an error.
#[test]
fn model_exchange_gives_the_field_at_the_importers_points() {
    let (dir, guid) = exported(DECAY, "Decay");
    assert!(instantiate_as(&dir, &guid, 7).is_null());
    let c = instantiate_as(&dir, &guid, 0);
    assert!(!c.is_null());
    // SAFETY: a live instance; every array has the length passed with it.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        let mut info = EventInfo {
            new_discrete_states_needed: 1,
            terminate_simulation: 1,
            nominals_of_continuous_states_changed: 1,
            values_of_continuous_states_changed: 1,
            next_event_time_defined: 1,
            next_event_time: 0.0,
        };
        assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
        assert_eq!(
            (
                info.new_discrete_states_needed,
                info.terminate_simulation,
                info.next_event_time_defined
            ),
            (0, 0, 0)
        );
        assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
        let mut x = [0.0];
        assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 1), OK);
        assert_eq!(x, [1.0]);
        assert_eq!(fmi2SetTime(c, 0.5), OK);
        assert_eq!(fmi2SetContinuousStates(c, [0.25].as_ptr(), 1), OK);
        let mut dx = [0.0];
        assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 1), OK);
        assert_eq!(dx, [-0.5], "x' = -k x with k = 2");
        let (mut enter, mut terminate) = (1, 1);
        assert_eq!(fmi2CompletedIntegratorStep(c, 1, &mut enter, &mut terminate), OK);
        assert_eq!((enter, terminate), (0, 0));
        let mut nominal = [0.0];
        assert_eq!(fmi2GetNominalsOfContinuousStates(c, nominal.as_mut_ptr(), 1), OK);
        assert_eq!(nominal, [1.0]);
        assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 0), ERROR, "the wrong length");
        assert_eq!(fmi2DoStep(c, 0.5, 0.1, 1), ERROR, "Model Exchange takes no steps");
        fmi2FreeInstance(c);
    }
}

/// Directional derivatives through `fmi2GetDirectionalDerivative` against finite differences the
/// test takes itself through the C functions: of the state derivatives with respect to the
/// states (Model Exchange), and of an output with respect to a state and an input.
#[test]
fn directional_derivatives_agree_with_finite_differences_through_the_c_functions() {
    let text = "model Partials
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
    let (dir, guid) = exported(text, "Partials");
    let c = instantiate_as(&dir, &guid, 0);
    let r = |name: &str| reference(&dir, name);
    // SAFETY: a live instance; every array has the length passed with it.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        let derivatives_at = |x: [f64; 2]| {
            assert_eq!(fmi2SetContinuousStates(c, x.as_ptr(), 2), OK);
            let mut dx = [0.0; 2];
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 2), OK);
            dx
        };
        let x = [0.7, 1.3];
        let (unknowns, knowns) = ([r("der(x1)"), r("der(x2)")], [r("x1"), r("x2")]);
        for seed in [[1.0, 0.0], [0.0, 1.0], [0.3, -2.0]] {
            derivatives_at(x);
            let mut sensitivity = [0.0; 2];
            let status = fmi2GetDirectionalDerivative(
                c,
                unknowns.as_ptr(),
                2,
                knowns.as_ptr(),
                2,
                seed.as_ptr(),
                sensitivity.as_mut_ptr(),
            );
            assert_eq!(status, OK);
            let h = 1e-6;
            let plus = derivatives_at([x[0] + h * seed[0], x[1] + h * seed[1]]);
            let minus = derivatives_at([x[0] - h * seed[0], x[1] - h * seed[1]]);
            for k in 0..2 {
                let difference = (plus[k] - minus[k]) / (2.0 * h);
                assert!(
                    (sensitivity[k] - difference).abs() < 1e-7,
                    "seed {seed:?}: {sensitivity:?} against {difference}"
                );
            }
        }
        // dy/du = 2u = 6 and dy/dx2 = x1 = 0.7 at x = (0.7, 1.3).
        derivatives_at(x);
        let mut dy = [0.0];
        let status = fmi2GetDirectionalDerivative(
            c,
            &r("y"),
            1,
            [r("x2"), r("u")].as_ptr(),
            2,
            [1.0, 1.0].as_ptr(),
            dy.as_mut_ptr(),
        );
        assert_eq!(status, OK);
        assert!((dy[0] - 6.7).abs() < 1e-7, "{dy:?}");
        let status = fmi2GetDirectionalDerivative(c, &r("y"), 1, &r("der(x1)"), 1, [1.0].as_ptr(), dy.as_mut_ptr());
        assert_eq!(status, ERROR, "a derivative is no known");
        fmi2FreeInstance(c);
    }
}

/// Two instances of one FMU and an instance of another, stepped in turns in one process: each
/// keeps its own model, parameters and time (`x' = -k x` with k = 1 and k = 4, and the driven
/// integrator).
#[test]
fn instances_of_one_and_of_two_fmus_run_side_by_side() {
    let (decay, decay_guid) = exported(DECAY, "Decay");
    let driven_text = "model Driven
  input Real u(start = 1);
  Real x(start = 0, fixed = true);
equation
  der(x) = u;
end Driven;";
    let (driven, driven_guid) = exported(driven_text, "Driven");
    let slow = instantiate(&decay, &decay_guid);
    let fast = instantiate(&decay, &decay_guid);
    let other = instantiate(&driven, &driven_guid);
    let (x, k) = (reference(&decay, "x"), reference(&decay, "k"));
    let y = reference(&driven, "x");
    // SAFETY: three live instances; every array is one element long.
    unsafe {
        assert_eq!(fmi2SetReal(slow, &k, 1, &1.0), OK);
        assert_eq!(fmi2SetReal(fast, &k, 1, &4.0), OK);
        for c in [slow, fast, other] {
            assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 1.0), OK);
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2ExitInitializationMode(c), OK);
        }
        for i in 0..4 {
            let t = i as f64 * 0.25;
            for c in [slow, fast, other] {
                assert_eq!(fmi2DoStep(c, t, 0.25, 1), OK);
            }
        }
        assert!((real(slow, x) - (-1.0f64).exp()).abs() < 1e-8, "{}", real(slow, x));
        assert!((real(fast, x) - (-4.0f64).exp()).abs() < 1e-8, "{}", real(fast, x));
        assert!((real(other, y) - 1.0).abs() < 1e-9, "{}", real(other, y));
        for c in [slow, fast, other] {
            fmi2FreeInstance(c);
        }
    }
}

/// Values set in initialization mode (a parameter and a start value) all take effect: the run
/// starts again from them once, at the end of the call.
#[test]
fn values_set_in_initialization_mode_start_the_run_from_them() {
    let (dir, guid) = exported(DECAY, "Decay");
    let c = instantiate(&dir, &guid);
    let (x, k) = (reference(&dir, "x"), reference(&dir, "k"));
    // SAFETY: a live instance; the arrays have the lengths passed with them.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 1.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2SetReal(c, [k, x].as_ptr(), 2, [3.0, 2.0].as_ptr()), OK);
        assert_eq!(real(c, x), 2.0);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(fmi2DoStep(c, 0.0, 1.0, 1), OK);
        assert!((real(c, x) - 2.0 * (-3.0f64).exp()).abs() < 1e-8, "{}", real(c, x));
        fmi2FreeInstance(c);
    }
}

/// A parameter marked `annotation(Evaluate = true)` is part of the compiled model (fixed in the
/// description): setting it is an error before and after the initialization, its value stays
/// the compiled one and the run uses it (`x = exp(-2 t)`); the tunable parameter beside it is
/// still set, before and after the initialization.
#[test]
fn an_evaluated_parameter_is_fixed_and_refuses_new_values() {
    let model = "model Fixed
  parameter Real k = 2 annotation(Evaluate = true);
  parameter Real g = 1;
  Real x(start = 1, fixed = true);
  Real y = g*x;
equation
  der(x) = -k*x;
end Fixed;";
    let (dir, guid) = exported(model, "Fixed");
    let c = instantiate(&dir, &guid);
    assert!(!c.is_null());
    let (k, g, x) = (reference(&dir, "k"), reference(&dir, "g"), reference(&dir, "x"));
    // SAFETY: `c` is a live instance; every array is one element long.
    unsafe {
        assert_eq!(
            fmi2SetReal(c, &k, 1, &3.0),
            ERROR,
            "a fixed parameter before the initialization"
        );
        assert_eq!(fmi2SetReal(c, &g, 1, &4.0), OK);
        assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 1.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(
            fmi2SetReal(c, &k, 1, &3.0),
            ERROR,
            "a fixed parameter after the initialization"
        );
        assert_eq!(
            fmi2SetReal(c, &g, 1, &5.0),
            OK,
            "a tunable parameter after the initialization"
        );
        assert_eq!(real(c, k), 2.0);
        assert_eq!(real(c, g), 5.0);
        assert_eq!(fmi2DoStep(c, 0.0, 0.5, 1), OK);
        let expected = (-2.0f64 * 0.5).exp();
        assert!((real(c, x) - expected).abs() < 1e-8, "x(0.5) = {}", real(c, x));
        fmi2FreeInstance(c);
    }
}

/// An enumeration through `fmi2GetInteger`/`fmi2SetInteger`: it starts at its start literal's
/// value, a value from 1 to the number of literals is set and read back, and one outside is an
/// error that leaves the value as it was; `fmi2GetReal` does not read it.
#[test]
fn an_enumeration_is_an_integer_from_one_to_its_number_of_literals() {
    let model = "model Modes
  type Mode = enumeration(Off, Heat, Cool);
  input Mode m(start = Mode.Heat);
  output Mode y;
equation
  y = m;
end Modes;";
    let (dir, guid) = exported(model, "Modes");
    let c = instantiate(&dir, &guid);
    assert!(!c.is_null());
    let (m, y) = (reference(&dir, "m"), reference(&dir, "y"));
    let integer = |vr: u32| {
        let mut value = -1;
        // SAFETY: a live instance, one reference and one value.
        assert_eq!(unsafe { fmi2GetInteger(c, &vr, 1, &mut value) }, OK);
        value
    };
    // SAFETY: `c` is a live instance; every array is one element long.
    unsafe {
        assert_eq!(integer(m), 2);
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 1, 1.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(integer(y), 2);
        assert_eq!(fmi2SetInteger(c, &m, 1, &1), OK);
        for bad in [0, 4, -1] {
            assert_eq!(fmi2SetInteger(c, &m, 1, &bad), ERROR, "{bad} names no literal");
        }
        assert_eq!(fmi2DoStep(c, 0.0, 0.5, 1), OK);
        assert_eq!(integer(y), 1);
        let mut real_value = 0.0;
        assert_eq!(
            fmi2GetReal(c, &y, 1, &mut real_value),
            ERROR,
            "an enumeration read as a Real"
        );
        fmi2FreeInstance(c);
    }
}
