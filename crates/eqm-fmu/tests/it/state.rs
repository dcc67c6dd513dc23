//! The FMU state through the runtime's C functions, FMI 2 and 3, Co-Simulation and Model
//! Exchange: a state taken before a bouncing ball's impact and set back makes the instance
//! meet the impact again (the steps after it agree with the first ones within the run's
//! tolerance, and with the closed form); getting into a pointer that holds a state overwrites
//! it in place; the serialized state deserialized in the instance or in a second instance of
//! the same FMU continues bit for bit as the state itself; changed bytes, a buffer too small,
//! a state of another FMU or of the other interface are answered with an error status.

use super::{exported, exported_as, reference, uri};
use eqm::fmi::FmiVersion;
use eqm_fmu::*;
use std::ffi::{CString, c_void};

const BALL: &str = "model Ball
  Real h(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
  Integer n(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -9.81;
  when h <= 0 then
    reinit(v, -0.8*pre(v));
    n = pre(n) + 1;
  end when;
end Ball;";

/// The first impact of [`BALL`] and the height at `t` after it, before the second, by the
/// closed form.
fn after_first_impact(t: f64) -> f64 {
    let t1 = (2.0f64 / 9.81).sqrt();
    let s = t - t1;
    0.8 * 9.81 * t1 * s - 0.5 * 9.81 * s * s
}

/// An FMI 2 instance of the FMU at `dir` for `fmu_type` (0: Model Exchange, 1: Co-Simulation).
fn instantiate2(dir: &std::path::Path, guid: &str, fmu_type: i32) -> *mut c_void {
    let (name, guid, location) = (
        CString::new("state").unwrap(),
        CString::new(guid).unwrap(),
        CString::new(uri(dir)).unwrap(),
    );
    let callbacks = Callbacks {
        logger: None,
        allocate_memory: None,
        free_memory: None,
        step_finished: None,
        component_environment: std::ptr::null_mut(),
    };
    // SAFETY: valid strings and callbacks that outlive the call.
    let c = unsafe {
        fmi2Instantiate(
            name.as_ptr(),
            fmu_type,
            guid.as_ptr(),
            location.as_ptr(),
            &callbacks,
            0,
            0,
        )
    };
    assert!(!c.is_null());
    c
}

/// An FMI 2 Co-Simulation instance of [`BALL`] initialized at 0 with the stop time 2.
fn ball2(dir: &std::path::Path, guid: &str) -> *mut c_void {
    let c = instantiate2(dir, guid, 1);
    // SAFETY: a live instance.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 1, 2.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
    }
    c
}

/// Steps the Co-Simulation instance `c` from `from` to `to` by 0.1 (FMI 2).
fn steps2(c: *mut c_void, from: f64, to: f64) {
    let mut t = from;
    while t < to - 1e-9 {
        let h = (to - t).min(0.1);
        // SAFETY: a live instance.
        assert_eq!(unsafe { fmi2DoStep(c, t, h, 1) }, OK, "step at {t}");
        t += h;
    }
}

/// The values of `h`, `v` (Reals) and `n` (an Integer), by the references `refs` (FMI 2).
fn reals2(c: *mut c_void, refs: &[u32; 3]) -> Vec<f64> {
    let mut values = vec![f64::NAN; 2];
    // SAFETY: a live instance; the arrays have the length passed.
    assert_eq!(unsafe { fmi2GetReal(c, refs.as_ptr(), 2, values.as_mut_ptr()) }, OK);
    values.push(f64::from(reals_or_integer(c, refs[2])));
    values
}

/// The serialized bytes of `state` of instance `c` (FMI 2).
fn serialized2(c: *mut c_void, state: *mut c_void) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: a live instance and a live state of it; the buffer is `size` long.
    unsafe {
        assert_eq!(fmi2SerializedFMUstateSize(c, state, &mut size), OK);
        let mut bytes = vec![0u8; size];
        assert_eq!(fmi2SerializeFMUstate(c, state, bytes.as_mut_ptr() as *mut _, size), OK);
        let mut short = vec![0u8; size - 1];
        assert_eq!(
            fmi2SerializeFMUstate(c, state, short.as_mut_ptr() as *mut _, size - 1),
            ERROR
        );
        bytes
    }
}

/// FMI 2 Co-Simulation: a state at 0.3 set back after the run went to 1.2 makes the impact
/// happen again (its count and the heights after it as the first time and as the closed
/// form); `fmi2GetFMUstate` into the pointer overwrites the state in place; the bytes, read
/// back in this instance and in a second one, continue bit for bit as the state; changed
/// bytes and a state of another FMU are refused.
#[test]
fn a_co_simulation_state_set_back_meets_the_impact_again() {
    let (dir, guid) = exported(BALL, "Ball");
    let refs = [reference(&dir, "h"), reference(&dir, "v"), reference(&dir, "n")];
    let c = ball2(&dir, &guid);
    steps2(c, 0.0, 0.3);
    let at_03 = reals2(c, &refs);
    let mut state: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live instance; `state` is the importer's variable.
    unsafe { assert_eq!(fmi2GetFMUstate(c, &mut state), OK) };
    assert!(!state.is_null());
    steps2(c, 0.3, 1.2);
    let first = reals2(c, &refs);
    assert_eq!(first[2], 2.0, "two impacts by 1.2: {first:?}");
    // SAFETY: a live instance and its state.
    unsafe { assert_eq!(fmi2SetFMUstate(c, state), OK) };
    assert_eq!(reals2(c, &refs), at_03);
    steps2(c, 0.3, 0.8);
    let at_08 = reals2(c, &refs);
    assert_eq!(at_08[2], 1.0);
    assert!(
        (at_08[0] - after_first_impact(0.8)).abs() < 1e-7,
        "h(0.8) = {}",
        at_08[0]
    );
    steps2(c, 0.8, 1.2);
    let second = reals2(c, &refs);
    for (a, b) in first.iter().zip(&second) {
        assert!((a - b).abs() < 1e-7, "{first:?} before the set, {second:?} after");
    }

    let bytes = serialized2(c, state);
    // Overwritten in place: the same pointer holds the state at 1.2 now.
    let before = state;
    // SAFETY: a live instance; `state` holds a live state of ours.
    unsafe { assert_eq!(fmi2GetFMUstate(c, &mut state), OK) };
    assert_eq!(state, before);
    let mut read: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live instance; the bytes are `len` long; `read` is the importer's variable.
    unsafe {
        assert_eq!(
            fmi2DeSerializeFMUstate(c, bytes.as_ptr() as *const _, bytes.len(), &mut read),
            OK
        );
        assert_eq!(fmi2SetFMUstate(c, read), OK);
    }
    steps2(c, 0.3, 0.8);
    steps2(c, 0.8, 1.2);
    assert_eq!(reals2(c, &refs), second, "the bytes continue as the state");
    // SAFETY: a live instance and its state at 1.2.
    unsafe { assert_eq!(fmi2SetFMUstate(c, state), OK) };
    assert_eq!(reals2(c, &refs), second);

    // A second instance of the same FMU takes the bytes.
    let other = ball2(&dir, &guid);
    let mut there: *mut c_void = std::ptr::null_mut();
    // SAFETY: live instances; the bytes are `len` long.
    unsafe {
        assert_eq!(
            fmi2DeSerializeFMUstate(other, bytes.as_ptr() as *const _, bytes.len(), &mut there),
            OK
        );
        assert_eq!(fmi2SetFMUstate(other, there), OK);
    }
    steps2(other, 0.3, 0.8);
    steps2(other, 0.8, 1.2);
    assert_eq!(reals2(other, &refs), second, "a second instance continues bit for bit");

    let mut changed = bytes.clone();
    let k = changed.len() - 20;
    changed[k] ^= 1;
    let (foreign_dir, foreign_guid) = exported(&BALL.replace("0.8*", "0.5*"), "Ball");
    let foreign = ball2(&foreign_dir, &foreign_guid);
    let mut refused: *mut c_void = std::ptr::null_mut();
    // SAFETY: live instances and states of ours; the bytes are `len` long.
    unsafe {
        assert_eq!(
            fmi2DeSerializeFMUstate(c, changed.as_ptr() as *const _, changed.len(), &mut refused),
            ERROR
        );
        assert_eq!(
            fmi2DeSerializeFMUstate(c, bytes.as_ptr() as *const _, 10, &mut refused),
            ERROR
        );
        assert_eq!(
            fmi2DeSerializeFMUstate(foreign, bytes.as_ptr() as *const _, bytes.len(), &mut refused),
            ERROR
        );
        assert!(refused.is_null());
        assert_eq!(fmi2SetFMUstate(foreign, state), ERROR, "a state of another FMU");
        assert_eq!(fmi2SetFMUstate(c, std::ptr::null_mut()), ERROR);
        for s in [&mut state, &mut read, &mut there] {
            assert_eq!(fmi2FreeFMUstate(c, s), OK);
            assert!(s.is_null());
        }
        assert_eq!(fmi2FreeFMUstate(c, &mut refused), OK, "a null state is ignored");
        fmi2FreeInstance(foreign);
        fmi2FreeInstance(other);
        fmi2FreeInstance(c);
    }
}

/// FMI 2 Model Exchange: a state taken at the start, the importer's point moved through the
/// impact (the event sets `v` to -0.8 times its value and counts it), the state set back: the
/// time, the states and the count are those of the start, and the same event gives the same
/// outcome. A Co-Simulation state is refused by a Model Exchange instance.
#[test]
fn a_model_exchange_state_set_back_restores_the_point_and_the_discrete_values() {
    let (dir, guid) = exported(BALL, "Ball");
    let n_ref = [reference(&dir, "n")];
    let c = instantiate2(&dir, &guid, 0);
    let mut info = EventInfo {
        new_discrete_states_needed: 0,
        terminate_simulation: 0,
        nominals_of_continuous_states_changed: 0,
        values_of_continuous_states_changed: 0,
        next_event_time_defined: 0,
        next_event_time: 0.0,
    };
    let t1 = (2.0f64 / 9.81).sqrt();
    let mut state: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live instance; every array has the length passed with it.
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
        assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
        assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
        assert_eq!(fmi2GetFMUstate(c, &mut state), OK);
        let impact = |c: *mut c_void, info: &mut EventInfo| {
            assert_eq!(fmi2SetTime(c, t1), OK);
            assert_eq!(fmi2SetContinuousStates(c, [0.0, -9.81 * t1].as_ptr(), 2), OK);
            assert_eq!(fmi2EnterEventMode(c), OK);
            assert_eq!(fmi2NewDiscreteStates(c, info), OK);
            let mut x = [0.0; 2];
            assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 2), OK);
            (
                x,
                reals_or_integer(c, n_ref[0]),
                info.values_of_continuous_states_changed,
            )
        };
        let first = impact(c, &mut info);
        assert_eq!(first.1, 1);
        assert_eq!(first.2, 1);
        assert!((first.0[1] - 0.8 * 9.81 * t1).abs() < 1e-12);
        assert_eq!(fmi2SetFMUstate(c, state), OK);
        let mut x = [f64::NAN; 2];
        assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 2), OK);
        assert_eq!(x, [1.0, 0.0]);
        assert_eq!(reals_or_integer(c, n_ref[0]), 0);
        assert_eq!(impact(c, &mut info), first);

        let cs = ball2(&dir, &guid);
        let mut cs_state: *mut c_void = std::ptr::null_mut();
        assert_eq!(fmi2GetFMUstate(cs, &mut cs_state), OK);
        assert_eq!(fmi2SetFMUstate(c, cs_state), ERROR, "a Co-Simulation state");
        let bytes = serialized2(cs, cs_state);
        let mut refused: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            fmi2DeSerializeFMUstate(c, bytes.as_ptr() as *const _, bytes.len(), &mut refused),
            ERROR
        );
        assert_eq!(fmi2FreeFMUstate(cs, &mut cs_state), OK);
        assert_eq!(fmi2FreeFMUstate(c, &mut state), OK);
        fmi2FreeInstance(cs);
        fmi2FreeInstance(c);
    }
}

/// The Integer value of `vr` (FMI 2).
fn reals_or_integer(c: *mut c_void, vr: u32) -> i32 {
    let mut value = -1;
    // SAFETY: a live instance, one reference and one value.
    assert_eq!(unsafe { fmi2GetInteger(c, &vr, 1, &mut value) }, OK);
    value
}

/// An FMI 3 instance of the FMU at `dir`: Co-Simulation or Model Exchange.
fn instantiate3(dir: &std::path::Path, token: &str, co_simulation: bool) -> *mut c_void {
    let (name, token) = (CString::new("state3").unwrap(), CString::new(token).unwrap());
    let resources = CString::new(format!("{}/resources/", dir.display())).unwrap();
    // SAFETY: valid strings that outlive the call; no logger.
    let c = unsafe {
        match co_simulation {
            true => fmi3InstantiateCoSimulation(
                name.as_ptr(),
                token.as_ptr(),
                resources.as_ptr(),
                false,
                false,
                false,
                false,
                std::ptr::null(),
                0,
                std::ptr::null_mut(),
                None,
                std::ptr::null_mut(),
            ),
            false => fmi3InstantiateModelExchange(
                name.as_ptr(),
                token.as_ptr(),
                resources.as_ptr(),
                false,
                false,
                std::ptr::null_mut(),
                None,
            ),
        }
    };
    assert!(!c.is_null());
    // SAFETY: a live instance.
    unsafe {
        assert_eq!(fmi3EnterInitializationMode(c, true, 1e-10, 0.0, true, 2.0), OK);
        assert_eq!(fmi3ExitInitializationMode(c), OK);
    }
    c
}

/// The Float64 value of `vr` (FMI 3).
fn float3(c: *mut c_void, vr: u32) -> f64 {
    let mut value = f64::NAN;
    // SAFETY: a live instance, one reference and one value.
    assert_eq!(unsafe { fmi3GetFloat64(c, &vr, 1, &mut value, 1) }, OK);
    value
}

/// FMI 3 Co-Simulation and Model Exchange: the state functions of FMI 3 round-trip the state
/// and its bytes as FMI 2's do (the impact met again after the state is set back; the point
/// of Model Exchange put back).
#[test]
fn fmi3_states_round_trip_in_both_interfaces() {
    let (dir, token) = exported_as(BALL, "Ball", FmiVersion::Fmi3);
    let h = reference(&dir, "h");
    let c = instantiate3(&dir, &token, true);
    let step = |c: *mut c_void, from: f64, to: f64| {
        let (mut event, mut terminate, mut early, mut last) = (false, false, false, 0.0);
        let mut t = from;
        while t < to - 1e-9 {
            let dt = (to - t).min(0.1);
            // SAFETY: a live instance; the outputs are the test's variables.
            let status = unsafe { fmi3DoStep(c, t, dt, true, &mut event, &mut terminate, &mut early, &mut last) };
            assert_eq!(status, OK);
            t += dt;
        }
    };
    step(c, 0.0, 0.3);
    let mut state: *mut c_void = std::ptr::null_mut();
    let mut size = 0;
    // SAFETY: a live instance; `state` and `size` are the test's variables.
    let bytes = unsafe {
        assert_eq!(fmi3GetFMUState(c, &mut state), OK);
        assert_eq!(fmi3SerializedFMUStateSize(c, state, &mut size), OK);
        let mut bytes = vec![0u8; size];
        assert_eq!(fmi3SerializeFMUState(c, state, bytes.as_mut_ptr(), size), OK);
        bytes
    };
    step(c, 0.3, 1.0);
    let first = float3(c, h);
    assert!((first - after_first_impact(1.0)).abs() < 1e-7, "h(1) = {first}");
    let mut read: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live instance and its states; the bytes are `len` long.
    unsafe {
        assert_eq!(fmi3DeserializeFMUState(c, bytes.as_ptr(), bytes.len(), &mut read), OK);
        assert_eq!(fmi3SetFMUState(c, read), OK);
    }
    step(c, 0.3, 1.0);
    let second = float3(c, h);
    assert!((second - first).abs() < 1e-7, "{first} before, {second} after");
    // SAFETY: a live instance and its state.
    unsafe { assert_eq!(fmi3SetFMUState(c, state), OK) };
    step(c, 0.3, 1.0);
    assert_eq!(float3(c, h), second, "the state and its bytes continue alike");

    let me = instantiate3(&dir, &token, false);
    let mut me_state: *mut c_void = std::ptr::null_mut();
    // SAFETY: live instances and their states; every array has the length passed with it.
    unsafe {
        assert_eq!(fmi3SetFMUState(me, state), ERROR, "a Co-Simulation state");
        assert_eq!(fmi3EnterContinuousTimeMode(me), OK);
        assert_eq!(fmi3GetFMUState(me, &mut me_state), OK);
        assert_eq!(fmi3SetTime(me, 0.4), OK);
        assert_eq!(fmi3SetContinuousStates(me, [0.5, -1.0].as_ptr(), 2), OK);
        assert_eq!(fmi3SetFMUState(me, me_state), OK);
        let mut x = [f64::NAN; 2];
        assert_eq!(fmi3GetContinuousStates(me, x.as_mut_ptr(), 2), OK);
        assert_eq!(x, [1.0, 0.0]);
        assert_eq!(float3(me, h), 1.0);
        for (i, s) in [(c, &mut state), (c, &mut read), (me, &mut me_state)] {
            assert_eq!(fmi3FreeFMUState(i, s), OK);
        }
        fmi3FreeInstance(me);
        fmi3FreeInstance(c);
    }
}

/// A state set into an instance after `fmi2Reset` (whose run has not started) starts the run
/// and puts it into the state: the values and the time of the state, and steps from there.
/// Before the initialization, getting a state is an error.
#[test]
fn a_state_set_after_a_reset_starts_the_run_in_that_state() {
    let (dir, guid) = exported(BALL, "Ball");
    let refs = [reference(&dir, "h"), reference(&dir, "v"), reference(&dir, "n")];
    let c = ball2(&dir, &guid);
    steps2(c, 0.0, 0.6);
    let at_06 = reals2(c, &refs);
    assert_eq!(at_06[2], 1.0);
    let mut state: *mut c_void = std::ptr::null_mut();
    let mut time = f64::NAN;
    // SAFETY: a live instance; `state` and `time` are the test's variables.
    unsafe {
        assert_eq!(fmi2GetFMUstate(c, &mut state), OK);
        assert_eq!(fmi2Reset(c), OK);
        let mut none: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            fmi2GetFMUstate(c, &mut none),
            ERROR,
            "no state before the initialization"
        );
        assert!(none.is_null());
        assert_eq!(fmi2SetFMUstate(c, state), OK);
        assert_eq!(fmi2GetRealStatus(c, 2, &mut time), OK);
    }
    assert!((time - 0.6).abs() < 1e-12, "at {time}");
    assert_eq!(reals2(c, &refs), at_06);
    steps2(c, time, 0.9);
    let h = reals2(c, &refs)[0];
    assert!((h - after_first_impact(0.9)).abs() < 1e-7, "h(0.9) = {h}");
    // SAFETY: a live instance and its state.
    unsafe {
        assert_eq!(fmi2FreeFMUstate(c, &mut state), OK);
        fmi2FreeInstance(c);
    }
}
