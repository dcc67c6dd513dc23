//! The native back end against the reference interpreter. On every example (the model and its
//! initialization problem) and on models built to exercise each kind of instruction (scalar
//! Newton blocks with and without symbolic derivatives, nonlinear and linear algebraic loops,
//! algorithm sections, the outputs program), the right-hand side run as native code (the
//! Newton and LU iterations in Rust, shared with the interpreter) computes the same bits as the
//! interpreter alone, at seeded pseudo-random states, times and parameter values; and where
//! evaluation fails, both report the same failure.

use crate::pipeline;

use eqm_compile::exec::{ExecProgram, Instr};
use eqm_flatten::Sources;
use eqm_ir::failure::{EvalFailure, FailureKind};
use eqm_sim::instance::Instance;
use eqm_sim::interp::OdeRhs;
use eqm_sim::native::NativeCode;
use std::sync::Arc;

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The model and initialization programs of the model in `text` (no initialization program
/// when the initialization is the model's program at the start values).
fn programs(name: &str, text: &str) -> (ExecProgram, Option<ExecProgram>) {
    let compiled = pipeline::compile(name, text);
    (compiled.program, compiled.init)
}

/// The initialization program of a model with initial equations, which always has one.
fn own_init(init: Option<ExecProgram>) -> ExecProgram {
    init.expect("a model with initial equations has an initialization program of its own")
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// An interpreter instance and one running `native`, with the same parameters.
fn pair<'p>(program: &'p ExecProgram, native: &Arc<NativeCode>) -> (Instance<'p>, Instance<'p>) {
    let interpreted = Instance::new(program).expect("instance");
    let mut native_instance = Instance::new(program).expect("instance");
    native_instance.attach_native(native.clone());
    (interpreted, native_instance)
}

/// Evaluates the right-hand side and the outputs on both instances at `(t, x)`; both must
/// succeed or fail alike, with the same values (every derivative and every `work` slot) or the
/// same failure. Returns whether the evaluation succeeded.
fn agree(name: &str, a: &mut Instance<'_>, b: &mut Instance<'_>, t: f64, x: &[f64]) -> bool {
    let n = x.len();
    let (mut dx_a, mut dx_b) = (vec![0.0; n], vec![0.0; n]);
    let ra: Result<(), EvalFailure> = a.rhs(t, x, &mut dx_a).and_then(|()| a.outputs(t, x, &mut dx_a));
    let rb: Result<(), EvalFailure> = b.rhs(t, x, &mut dx_b).and_then(|()| b.outputs(t, x, &mut dx_b));
    assert_eq!(ra, rb, "{name} at t = {t}, x = {x:?}: the back ends fail differently");
    if ra.is_err() {
        return false;
    }
    for (i, (u, v)) in dx_a.iter().zip(&dx_b).enumerate() {
        assert!(
            same(*u, *v),
            "{name}: der of state {i} at t = {t}: interpreter {u}, native {v}"
        );
    }
    for (i, (u, v)) in a.work().iter().zip(b.work()).enumerate() {
        let slot = a.program().slot_name(eqm_ir::slot::Slot::Work(i as u32));
        assert!(same(*u, *v), "{name}: `{slot}` at t = {t}: interpreter {u}, native {v}");
    }
    true
}

/// Compares the back ends on `program` at `points` random points, with parameters scaled by
/// random factors in [0.5, 1.5) where the model allows it. Returns the native code and how
/// many points could be evaluated.
fn compare(name: &str, program: &ExecProgram, rng: &mut Rng, points: usize) -> (Arc<NativeCode>, usize) {
    let native = Arc::new(NativeCode::compile(program).unwrap_or_else(|| panic!("{name}: nothing compiled")));
    let (mut a, mut b) = pair(program, &native);
    let params: Vec<(String, f64)> = program
        .params()
        .iter()
        .map(|v| program.symbols().get(*v).name.clone())
        .zip(program.p0().to_vec())
        .collect();
    for (param, value) in params {
        // Parameters change after compiling: they are inputs of the native code.
        let scaled = value * (0.5 + rng.next());
        if a.set_param(&param, scaled).is_ok() {
            b.set_param(&param, scaled).expect("same parameters");
        }
    }
    let n = a.dim();
    let mut evaluated = 0;
    for _ in 0..points {
        let t = 10.0 * rng.next();
        let x: Vec<f64> = (0..n).map(|_| 4.0 * rng.next() - 2.0).collect();
        if agree(name, &mut a, &mut b, t, &x) {
            evaluated += 1;
        }
    }
    (native, evaluated)
}

#[test]
fn native_code_agrees_with_the_interpreter_on_every_example() {
    let dir = std::path::Path::new(crate::REPO).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
        .collect();
    files.sort();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = Vec::new();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let (program, init) = programs(&name, &std::fs::read_to_string(&path).expect("readable"));
        let (native, evaluated) = compare(&name, &program, &mut rng, 40);
        // At random points a Newton block may fail to converge (a pendulum position off its
        // circle); then both back ends fail alike, and enough points remain.
        assert!(evaluated >= 5, "{name}: only {evaluated} points could be evaluated");
        assert!(native.is_complete(), "{name}: not every instruction is native");
        if let Some(init) = &init {
            let (native, _) = compare(&format!("{name} (initialization)"), init, &mut rng, 10);
            assert!(
                native.is_complete(),
                "{name} (initialization): not every instruction is native"
            );
        }
        compared.push(name);
    }
    for expected in [
        "decay.eqm",
        "spring_mass.eqm",
        "rc_circuit.eqm",
        "population.eqm",
        "pendulum.eqm",
        "rigid_masses.eqm",
        "two_springs_series.eqm",
        "cooling.eqm",
    ] {
        assert!(
            compared.iter().any(|c| c == expected),
            "{expected} not compared: {compared:?}"
        );
    }
}

/// Models with many identical stages: the JIT makes loops of them (one stage per repetition),
/// and they still compute the interpreter's bits, and fail where it fails (the assertion of a
/// stage in the middle of a loop).
#[test]
fn repeated_stages_run_as_loops_and_agree() {
    let chain = "model Chain
      import Mechanics.Translational.Components;
      parameter Integer n = 12;
      Components.Fixed ground;
      Components.Mass m[n](each m = 1, each s(start = 0, fixed = true), each v(start = 0, fixed = true));
      Components.Spring s[n](each c = 100);
    equation
      connect(ground.flange, s[1].flange_a);
      connect(s[1].flange_b, m[1].flange_a);
      for i in 2:n loop
        connect(m[i - 1].flange_b, s[i].flange_a);
        connect(s[i].flange_b, m[i].flange_a);
      end for;
    end Chain;";
    let stages = "model Stages
      function limited
        input Real u;
        output Real y;
      algorithm
        assert(u < 1.9, \"u must be below 1.9\");
        y := u;
      end limited;
      parameter Integer n = 20;
      parameter Real k[n] = fill(1.5, n);
      Real x[n](each start = 0, each fixed = true);
      Real y[n];
    equation
      der(x[1]) = -k[1]*x[1] + 1;
      y[1] = 0;
      for i in 2:n loop
        y[i] = if noEvent(x[i] > 0) then limited(x[i])*x[i - 1] else x[i - 1]/2;
        der(x[i]) = -k[i]*x[i] + y[i] + sin(time);
      end for;
    end Stages;";
    let mut rng = Rng(0x6a09_e667_f3bc_c908);
    for (name, text) in [("chain.eqm", chain), ("stages.eqm", stages)] {
        let (program, _) = programs(name, text);
        let (native, evaluated) = compare(name, &program, &mut rng, 60);
        assert!(native.loops() >= 1, "{name}: no loop");
        assert!(native.is_complete(), "{name}: not every instruction is native");
        assert!(evaluated >= 10, "{name}: only {evaluated} points could be evaluated");
    }
    // The assertion of stage 13 fails alike on both back ends.
    let (program, _) = programs("stages.eqm", stages);
    let mut x = vec![0.5; 20];
    let index = program
        .states()
        .iter()
        .position(|v| program.symbols().get(*v).name == "x[13]")
        .expect("x[13] is a state");
    x[index] = 1.95;
    let failure = same_failure(&program, &x, None);
    assert!(matches!(failure.kind, FailureKind::Assert { .. }), "{failure:?}");
}

/// The executable program of `text` built by the stages one by one, without event extraction:
/// the event operators stay in the equations (the program's contract evaluates them as false),
/// which is what the JIT cannot translate.
fn program_without_events(name: &str, text: &str) -> ExecProgram {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file(name, text.to_string());
    let flat = session
        .flatten(None, &eqm_flatten::Options::default())
        .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)));
    let (dae, _, _) = eqm_compile::alias::eliminate(eqm_compile::dae::lower(flat));
    let (dae, _) = eqm_compile::index::reduce(dae).unwrap_or_else(|d| panic!("{d:?}"));
    // Declared hybrid without extracting its events, by hand: the pipeline never does this.
    let mut dae = dae.into_stage(eqm_compile::events::Hybrid::default());
    let plan = eqm_compile::plan::analyze(&mut dae).unwrap_or_else(|d| panic!("{d:?}"));
    ExecProgram::build(dae, &plan).unwrap_or_else(|d| panic!("{d:?}"))
}

/// The index of the first right-hand-side instruction matching `kind`.
fn find(program: &ExecProgram, kind: impl Fn(&Instr) -> bool, what: &str) -> usize {
    program
        .rhs()
        .iter()
        .position(kind)
        .unwrap_or_else(|| panic!("no {what} in {:#?}", program.rhs()))
}

/// Compares the back ends on a targeted model and checks that instruction `k` (of the kind
/// `kind` describes) runs natively.
fn targeted(name: &str, text: &str, kind: impl Fn(&Instr) -> bool, what: &str) {
    let (program, _) = programs(name, text);
    let k = find(&program, kind, what);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (native, evaluated) = compare(name, &program, &mut rng, 60);
    assert!(native.is_native(k), "{name}: the {what} is not native");
    assert!(native.is_complete(), "{name}: not every instruction is native");
    assert!(evaluated >= 30, "{name}: only {evaluated} points could be evaluated");
}

#[test]
fn scalar_newton_blocks_run_natively_and_agree() {
    targeted(
        "newton.eqm",
        "model N
           Real x(start = 1, fixed = true);
           Real y(start = 1);
           parameter Real k = 2;
         equation
           der(x) = -y;
           y + exp(y) = k*x + 3;
         end N;",
        |i| {
            matches!(
                i,
                Instr::Newton1 {
                    derivative: Some(_),
                    ..
                }
            )
        },
        "Newton block with a symbolic derivative",
    );
    // A user function of the unknown has no symbolic derivative: a difference quotient.
    targeted(
        "newton_function.eqm",
        "model F
           function cube
             input Real u;
             input Integer n;
             output Real y;
           algorithm
             y := 1;
             for i in 1:n loop
               y := y*u;
             end for;
           end cube;
           Real x(start = 1, fixed = true);
           Real y(start = 1);
         equation
           der(x) = -y;
           cube(y, 3) + y = x + 4;
         end F;",
        |i| matches!(i, Instr::Newton1 { derivative: None, .. }),
        "Newton block without a symbolic derivative",
    );
}

#[test]
fn algebraic_loops_run_natively_and_agree() {
    let nonlinear = "model L
           Real x(start = 0.5, fixed = true);
           Real a(start = 0.1);
           Real b(start = 0.2);
           parameter Real c = 0.3;
         equation
           a = c*sin(b) + x;
           b = 0.5*cos(a) - x*a*a;
           der(x) = a - b;
         end L;";
    targeted(
        "nonlinear_loop.eqm",
        nonlinear,
        |i| matches!(i, Instr::Loop(b) if !b.linear),
        "nonlinear loop",
    );
    targeted(
        "linear_loop.eqm",
        "model Lin
           Real x(start = 0.5, fixed = true);
           Real a;
           Real b;
           Real c;
           parameter Real k = 3;
         equation
           a + 2*b + c = x;
           k*a - b + c = time;
           a - b - 2*c = 1;
           der(x) = a*b - c;
         end Lin;",
        |i| matches!(i, Instr::Loop(b) if b.linear),
        "linear loop",
    );
}

#[test]
fn algorithm_sections_and_outputs_run_natively_and_agree() {
    targeted(
        "algorithm.eqm",
        "model A
           Real x(start = 1, fixed = true);
           Real y;
           Real z;
           Real w;
           parameter Real h = 0.5;
         algorithm
           y := 0;
           z := abs(x) + 1;
           while z > 0.1 loop
             z := z*h;
             y := y + 1;
             if y > 100 then
               break;
             end if;
           end while;
           if y > 2 then
             y := y*x;
           elseif y > 1 then
             y := -y;
           else
             y := 0;
           end if;
         equation
           w = -y;
           der(x) = -0.1*w + z;
         end A;",
        |i| matches!(i, Instr::Algorithm { .. }),
        "algorithm section",
    );
    let (program, _) = programs(
        "outputs.eqm",
        "model O
           Real x(start = 1, fixed = true);
           Real v;
           Real w;
         equation
           v = -x;
           w = v;
           der(x) = w;
         end O;",
    );
    assert!(!program.outputs().is_empty(), "alias elimination removed nothing");
    let (native, evaluated) = compare("outputs.eqm", &program, &mut Rng(7), 20);
    assert!(native.outputs_native());
    assert_eq!(evaluated, 20);
}

/// An instruction the JIT cannot translate (an event operator, which `eqm run` refuses but the
/// executable program defines) stays with the interpreter, and everything else is still native
/// and agrees.
#[test]
fn an_instruction_that_does_not_compile_falls_back_to_the_interpreter() {
    let program = program_without_events(
        "fallback.eqm",
        "model Fb
           Real x(start = 1, fixed = true);
           Real y;
           Real z(start = 1);
           Real a(start = 0.1);
           Real b(start = 0.2);
         equation
           y = if initial() then 1 else x;
           z + exp(z) = y + 2;
           a + 0.1*b*b = x;
           b - 0.2*a*a = z;
           der(x) = -z + a - b;
         end Fb;",
    );
    let initial = find(
        &program,
        |i| match i {
            Instr::Assign { value, .. } => program.expr_text(*value).contains("initial"),
            _ => false,
        },
        "assignment with initial()",
    );
    let mut rng = Rng(99);
    let (native, evaluated) = compare("fallback.eqm", &program, &mut rng, 30);
    assert!(evaluated >= 20);
    assert!(!native.is_native(initial));
    assert!(!native.is_complete());
    assert_eq!(native.native_instructions(), program.rhs().len() - 1);
    let newton = find(&program, |i| matches!(i, Instr::Newton1 { .. }), "Newton block");
    let nonlinear = find(&program, |i| matches!(i, Instr::Loop(_)), "loop");
    assert!(native.is_native(newton) && native.is_native(nonlinear));
}

/// Evaluates `program` at states `x` on both back ends and returns the failure, which must be
/// the same (kind, site, time) and render the same diagnostic.
fn same_failure(program: &ExecProgram, x: &[f64], limit: Option<u64>) -> EvalFailure {
    let native = Arc::new(NativeCode::compile(program).expect("compiles"));
    assert!(native.is_complete());
    let (mut a, mut b) = pair(program, &native);
    if let Some(limit) = limit {
        a.interpreter().set_iteration_limit(limit);
        b.interpreter().set_iteration_limit(limit);
    }
    let mut dx = vec![0.0; x.len()];
    let fa = a.rhs(0.5, x, &mut dx).expect_err("the interpreter fails");
    let fb = b.rhs(0.5, x, &mut dx).expect_err("native code fails");
    assert_eq!(fa, fb);
    assert_eq!(
        format!("{:?}", program.failure_diagnostic(&fa)),
        format!("{:?}", program.failure_diagnostic(&fb))
    );
    fa
}

#[test]
fn failures_are_the_same_on_both_back_ends() {
    let (program, _) = programs(
        "failures.eqm",
        "model Failures
           function checked
             input Real u;
             output Real y;
           algorithm
             assert(u < 1.5, \"u must be below 1.5, not \" + String(u));
             y := 2*u;
           end checked;
           function stepped
             input Real u;
             input Integer s;
             output Real y;
           algorithm
             y := 0;
             for i in 1:s:3 loop
               y := y + u;
             end for;
           end stepped;
           function stop
             input Real u;
             output Real y;
           algorithm
             y := u;
             if u < -1.5 then
               terminate(\"u is too small: \" + String(u));
             end if;
           end stop;
           function spin
             input Real u;
             output Real y;
           algorithm
             y := u;
             while y > 0 loop
               y := y + 1;
             end while;
           end spin;
           parameter Integer s = 1;
           Real x(start = 0, fixed = true);
           Real x2(start = 0, fixed = true);
           Real y;
         algorithm
           assert(x2 < 5, \"x2 must be below 5, not \" + String(x2) + \" at \" + String(time));
           y := stop(x2);
         equation
           der(x) = checked(x) + stepped(x, s) + 1/(x + 3);
           der(x2) = y + spin(x2 - 3);
         end Failures;",
    );
    let fail = |x: [f64; 2], limit| same_failure(&program, &x, limit).kind;
    // The messages show the values they read when they fail, on both back ends.
    assert!(
        matches!(fail([2.0, 0.0], None), FailureKind::Assert { message, .. } if message == "u must be below 1.5, not 2")
    );
    assert!(
        matches!(fail([0.0, 6.0], None), FailureKind::Assert { message, .. } if message == "x2 must be below 5, not 6 at 0.5")
    );
    assert!(
        matches!(fail([0.0, -2.0], None), FailureKind::Terminate { message, .. } if message == "u is too small: -2")
    );
    assert!(matches!(fail([-3.0, 0.0], None), FailureKind::NotFinite { .. }));
    assert!(matches!(
        fail([0.0, 3.5], Some(1000)),
        FailureKind::IterationLimit { limit: 1000 }
    ));
    // A zero step: the same failure on both.
    let native = Arc::new(NativeCode::compile(&program).expect("compiles"));
    let (mut a, mut b) = pair(&program, &native);
    a.set_param("s", 0.0).expect("s");
    b.set_param("s", 0.0).expect("s");
    let mut dx = [0.0; 2];
    let fa = a.rhs(0.0, &[0.0, 0.0], &mut dx).expect_err("zero step");
    let fb = b.rhs(0.0, &[0.0, 0.0], &mut dx).expect_err("zero step");
    assert!(matches!(fa.kind, FailureKind::ZeroStep { .. }), "{fa:?}");
    assert_eq!(fa, fb);
}

/// Runaway recursion fails with the recursion limit on both back ends. Native frames live on
/// the machine stack (the CLI gives the compiler a large one), so the test does too.
#[test]
fn runaway_recursion_fails_alike() {
    let run = || {
        let (program, _) = programs(
            "recursion.eqm",
            "model R
               function recurse
                 input Real u;
                 output Real y;
               algorithm
                 y := recurse(u + 1);
               end recurse;
               Real x(start = 0, fixed = true);
             equation
               der(x) = recurse(x);
             end R;",
        );
        let failure = same_failure(&program, &[0.0], None);
        assert!(
            matches!(failure.kind, FailureKind::RecursionLimit { .. }),
            "{failure:?}"
        );
    };
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(run)
        .expect("thread")
        .join()
        .expect("no panic");
}

/// The parameter program and the parameter conditions run natively: dependent parameters get
/// the same bits, and a parameter that breaks a condition fails alike on both back ends.
#[test]
fn parameters_run_natively_and_fail_alike() {
    let (program, _) = programs(
        "parameters.eqm",
        "model P
           parameter Real m = 2;
           parameter Real k = 3*m + sqrt(m);
           parameter Real c = k/m;
           Real x(start = 1, fixed = true);
           Real v(start = 0, fixed = true);
         equation
           der(x) = v;
           m*der(v) = -k*x - c*v;
         end P;",
    );
    assert!(!program.parameter_program().is_empty() && !program.conditions().is_empty());
    let (native, evaluated) = compare("parameters.eqm", &program, &mut Rng(11), 20);
    assert!(native.parameters_native());
    assert_eq!(evaluated, 20);
    let (mut a, mut b) = pair(&program, &native);
    for m in [0.5, 7.25] {
        a.set_param("m", m).expect("valid");
        b.set_param("m", m).expect("valid");
        for name in ["k", "c"] {
            let (u, v) = (a.param(name).expect("k"), b.param(name).expect("k"));
            assert_eq!(u.to_bits(), v.to_bits(), "{name} with m = {m}");
        }
    }
    let (fa, fb) = (a.set_param("m", 0.0), b.set_param("m", 0.0));
    assert!(fa.is_err());
    assert_eq!(format!("{fa:?}"), format!("{fb:?}"));
}

/// Every expression has its own iteration budget and computes its own calls on both back ends,
/// even when native code could reuse a call an earlier expression made: the second equation
/// needs 62 + 47 units here (over the limit), though it shares its first call with the first.
#[test]
fn each_expression_spends_its_own_iteration_budget() {
    let (program, _) = programs(
        "budget.eqm",
        "model B
           function count
             input Real n;
             output Real y;
           algorithm
             y := 0;
             while y < n loop
               y := y + 1;
             end while;
           end count;
           parameter Real n1 = 60;
           parameter Real n2 = 45;
           Real x(start = 0, fixed = true);
           Real y1;
           Real y2;
         equation
           y1 = count(n1);
           y2 = 2*count(n1) + count(n2);
           der(x) = y1 - y2 + x;
         end B;",
    );
    let failure = same_failure(&program, &[0.0], Some(100));
    assert!(
        matches!(failure.kind, FailureKind::IterationLimit { limit: 100 }),
        "{failure:?}"
    );
}

/// The integrator's instance checks only the derivatives for being finite, and evaluates again
/// with every assignment checked when one is not: the failure it reports, and the values of a
/// good evaluation, must be those of the default checks, on both back ends.
#[test]
fn checking_only_the_derivatives_reports_the_same_failures() {
    let program = program_without_events(
        "checks.eqm",
        "model Checks\n  Real x(start = 1, fixed = true);\n  Real y;\n  Real unused;\n  Real z;\n\
         equation\n  unused = log(x);\n  y = sqrt(x);\n  z = 2*y;\n  der(x) = -z;\nend Checks;\n",
    );
    let native = Arc::new(NativeCode::compile(&program).expect("compiles"));
    for attach in [false, true] {
        let mut every = Instance::new(&program).expect("instance");
        let mut derivatives = Instance::new(&program).expect("instance");
        if attach {
            every.attach_native(native.clone());
            derivatives.attach_native(native.clone());
        }
        derivatives
            .interpreter()
            .set_finite_checks(eqm_sim::interp::FiniteChecks::Derivatives);
        for x in [4.0, -1.0, f64::INFINITY] {
            let (mut dx_every, mut dx_derivatives) = ([0.0], [0.0]);
            let a = every.rhs(0.0, &[x], &mut dx_every);
            let b = derivatives.rhs(0.0, &[x], &mut dx_derivatives);
            // Debug text, because a NaN in a failure is not equal to itself.
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "x = {x}, native: {attach}");
            if a.is_ok() {
                assert!(same(dx_every[0], dx_derivatives[0]));
                assert_eq!(every.work(), derivatives.work());
            }
        }
        // At x = 0, `log(x)` is not finite but reaches no derivative: the integrator's check
        // lets it pass (the rows written are checked in full), the full check reports it.
        let mut dx = [0.0];
        assert!(every.rhs(0.0, &[0.0], &mut dx).is_err());
        assert!(derivatives.rhs(0.0, &[0.0], &mut dx).is_ok());
    }
}

/// The zero-crossing functions of the event program run as one native function and give the
/// interpreter's bits, also where they read algebraic variables and `floor`, `min`, `max` and
/// `sign` became relations.
#[test]
fn zero_crossing_functions_are_native_and_agree_bit_for_bit() {
    let text = "model Switches
      parameter Real q = 0.4;
      Real y(start = 0.1, fixed = true);
      Real v(start = 0.2, fixed = true);
      Real w;
    equation
      w = sin(3*time) + v*y;
      der(y) = v + floor(w - 0.1) - max(y, q);
      der(v) = -sign(v - q) - y + (if w > 0.3 then 1 else min(v, -y));
    end Switches;";
    let (program, _) = programs("switches.eqm", text);
    let surfaces = program.events().surfaces.len();
    assert!(surfaces >= 5, "{surfaces} surfaces");
    let native = Arc::new(NativeCode::compile(&program).expect("compiles"));
    assert!(native.surfaces_native());
    let (mut a, mut b) = pair(&program, &native);
    let mut rng = Rng(0x5be0_cd19_137e_2179);
    for _ in 0..50 {
        let t = rng.next() * 4.0;
        let x = [rng.next() * 2.0 - 1.0, rng.next() * 2.0 - 1.0];
        let (mut dx_a, mut dx_b) = ([0.0; 2], [0.0; 2]);
        let (mut d_a, mut d_b) = (vec![0.0; surfaces], vec![0.0; surfaces]);
        a.surfaces(t, &x, &mut dx_a, &mut d_a)
            .expect("the interpreter evaluates");
        b.surfaces(t, &x, &mut dx_b, &mut d_b).expect("native code evaluates");
        for k in 0..surfaces {
            assert!(same(d_a[k], d_b[k]), "surface {k} at t = {t}: {} vs {}", d_a[k], d_b[k]);
            let alone = a.surface_at(k, t, &x, &mut dx_a).expect("one surface");
            assert!(same(alone, d_a[k]), "surface {k} alone");
        }
    }
}

/// Booleans and Integers defined by ordinary equations, conditions on them, an `abs` implicit
/// equation and an equation-section assertion: native code computes the interpreter's bits.
#[test]
fn discrete_unknowns_of_ordinary_equations_run_natively_and_agree() {
    let (program, init) = programs(
        "discrete_unknowns.eqm",
        "model DiscreteUnknowns
  Real x;
  Real w(start = 5);
  Boolean c = time > 0.5;
  Boolean b;
  Integer n;
equation
  der(x) = if b then 1 else 0.5*n;
  b = time > 1 and not c or x > 1.5;
  n = if b then 2 else 1;
  abs(w) = 2 + x;
  assert(w > 0, \"w positive\");
initial equation
  x = 0;
end DiscreteUnknowns;
",
    );
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (native, evaluated) = compare("discrete_unknowns.eqm", &program, &mut rng, 40);
    assert!(evaluated >= 20, "only {evaluated} points");
    assert!(native.is_complete(), "not every instruction is native");
    let (native, _) = compare("discrete_unknowns.eqm (initialization)", &own_init(init), &mut rng, 10);
    assert!(native.is_complete());
}

#[test]
fn when_statements_and_relations_of_algorithms_run_natively_and_agree() {
    // The edges of when-statements, a relation tested on a value the section assigns again
    // (its hidden variable), and discrete outputs restarting from their values before the
    // event, with every discrete value (relations, values before the event) set at random.
    let (program, init) = programs(
        "when_statements.eqm",
        "model W
           Real x;
           Real y;
           Integer k(start = 0);
           discrete Real hit(start = -1);
           Boolean close(start = true);
         initial equation
           x = 0;
         equation
           der(x) = 1 - 0.1*y;
         algorithm
           y := 2*x;
           if y > 1 then
             y := 1;
           end if;
           when {sample(0, 1), x > 3} then
             close := not close;
           end when;
           when y > 0.75 then
             k := k + 1;
             hit := time;
           elsewhen x < -1 then
             k := pre(k) - 1;
           end when;
         end W;",
    );
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let init = own_init(init);
    for (name, program) in [("when_statements.eqm", &program), ("when_statements.eqm (init)", &init)] {
        let native = Arc::new(NativeCode::compile(program).expect("compiled"));
        assert!(native.is_complete(), "{name}: not every instruction is native");
        let (mut a, mut b) = pair(program, &native);
        let n = a.dim();
        for _ in 0..60 {
            for &slot in &program.events().discrete {
                let value = if rng.next() < 0.5 { 0.0 } else { 1.0 };
                a.set_work(slot, value);
                b.set_work(slot, value);
            }
            let t = 4.0 * rng.next();
            let x: Vec<f64> = (0..n).map(|_| 8.0 * rng.next() - 2.0).collect();
            agree(name, &mut a, &mut b, t, &x);
        }
    }
}

/// A String built from a value during the run and passed to a function that stops the run with
/// it, called as a statement (a function without outputs): native code runs the call as the
/// interpreter does, and both fail alike, with the value in the message.
#[test]
fn a_call_statement_with_a_message_built_during_the_run_agrees() {
    let text = "model Message
      function fail
        input String why;
      algorithm
        assert(false, why);
      end fail;
      function limited
        input Real u;
        output Real y;
      algorithm
        if u > 1.5 then
          fail(\"u = \" + String(u) + \" is above the limit\");
        end if;
        y := 2*u;
      end limited;
      Real x(start = 0, fixed = true);
      Real y;
    equation
      y = limited(x);
      der(x) = y - x;
    end Message;";
    let (program, _) = programs("message.eqm", text);
    let mut rng = Rng(0x3c6e_f372_fe94_f82b);
    // The states are drawn from [-2, 2): about an eighth of the points fail.
    let (native, evaluated) = compare("message.eqm", &program, &mut rng, 60);
    assert!(native.is_complete(), "not every instruction is native");
    assert!((30..60).contains(&evaluated), "{evaluated} of 60 points evaluated");
    let failure = same_failure(&program, &[1.75], None);
    match failure.kind {
        FailureKind::Assert { message, .. } => assert_eq!(message, "u = 1.75 is above the limit"),
        other => panic!("{other:?}"),
    }
}
