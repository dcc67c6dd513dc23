//! Results of compiled segments (residuals and partial derivatives), checked bit for bit
//! against the evaluator.
//!
//! Results are computed after the assignments into `out`, which is checked like the other
//! slices; a torn nonlinear loop compiled as the native back end compiles it gives the
//! evaluator's inner values, residuals and symbolic Jacobian.

use super::*;

// ---------------------------------------------------------------------------------------------
// Results: residuals and partial derivatives

/// Results are evaluated after the assignments (reading what they wrote) into `out`; `out`
/// is checked like the other slices.
#[test]
fn results_follow_the_assignments_and_land_in_out() {
    let mut a = ExprArena::new();
    let (x0, p0, w0) = (a.var(VarId(0)), a.var(VarId(2)), a.var(VarId(4)));
    let two = a.real(2.0);
    let doubled = a.binary(BinOp::Mul, x0, two);
    let sum = a.binary(BinOp::Add, w0, p0);
    let sine = a.builtin(Builtin::Sin, vec![x0]);
    let segment = Segment {
        assignments: vec![(Slot::Work(0), doubled)],
        statements: Vec::new(),
        results: vec![sum, sine],
    };
    let module = compile(&a, &[], &[], &slot_of, &[segment], &JitOptions::default()).expect("compiles");
    assert_eq!(module.results(0), Some(2));
    let (x, p, mut work) = ([0.7, 0.0], [1.25, 0.0], [f64::NAN, 0.0]);
    let mut out = [f64::NAN; 2];
    module
        .run(0, 0.0, [&x, &p], [&mut [], &mut work], &mut out, 100)
        .expect("runs");
    assert_eq!(work[0], 1.4);
    assert_eq!(out[0].to_bits(), (1.4f64 + 1.25).to_bits());
    assert_eq!(out[1].to_bits(), 0.7f64.sin().to_bits());
    let short = module.run(0, 0.0, [&x, &p], [&mut [], &mut work], &mut out[..1], 100);
    assert!(
        matches!(
            short,
            Err(JitError::SliceTooShort {
                slice: "out",
                needed: 2,
                got: 1,
                ..
            })
        ),
        "{short:?}"
    );
}

/// The program of `text`, from the driver.
fn program(text: &str) -> eqm_compile::exec::ExecProgram {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    session.add_file("test.eqm", text);
    let compiled = session.compile(None, &eqm_flatten::Options::default());
    compiled
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
        .program
}

/// The evaluation arrays of a program, read by the evaluator through the program's slots.
struct Memory<'p> {
    program: &'p eqm_compile::exec::ExecProgram,
    x: Vec<f64>,
    p: Vec<f64>,
    work: Vec<f64>,
}

impl Env for Memory<'_> {
    fn var(&self, v: VarId) -> f64 {
        match self.program.slot_of(v) {
            Some(Slot::State(i)) => self.x[i as usize],
            Some(Slot::Param(i)) => self.p[i as usize],
            Some(Slot::Work(i)) => self.work[i as usize],
            _ => f64::NAN,
        }
    }
    fn time(&self) -> f64 {
        0.0
    }
}

/// A torn nonlinear loop compiled as the native back end compiles it: one segment from the
/// tearing values through the inner assignments to the residuals, one with every partial
/// derivative of its symbolic Jacobian. At random tearing values, the inner values, residuals
/// and partial derivatives are the evaluator's, bit for bit.
#[test]
fn loop_residuals_and_symbolic_jacobian_match_the_evaluator() {
    let program = program(
        "model L
           Real x(start = 0.5, fixed = true);
           Real a(start = 0.1);
           Real b(start = 0.2);
           Real c;
           parameter Real k = 0.3;
         equation
           a = k*sin(b) + x;
           c = a*a - x;
           b = 0.5*cos(c) - x*a*exp(b);
           der(x) = a - b + c;
         end L;",
    );
    let Some(Instr::Loop(block)) = program.rhs().iter().find(|i| matches!(i, Instr::Loop(_))) else {
        panic!("no loop in {:#?}", program.rhs())
    };
    let jacobian = block.jacobian.as_ref().expect("a symbolic Jacobian");
    let partials: Vec<ExprId> = jacobian
        .inner
        .iter()
        .chain(&jacobian.residuals)
        .flatten()
        .map(|(_, e)| *e)
        .collect();
    assert!(!partials.is_empty());
    let evaluate = Segment {
        assignments: block.inner.iter().map(|a| (a.target, a.value)).collect(),
        statements: Vec::new(),
        results: block.residuals.iter().map(|(r, _)| *r).collect(),
    };
    let jacobian_segment = Segment {
        results: partials.clone(),
        ..Segment::default()
    };
    let module = compile(
        program.exprs(),
        program.functions(),
        program.externals(),
        &|v| program.slot_of(v),
        &[evaluate, jacobian_segment],
        &JitOptions::default(),
    )
    .expect("compiles");
    let layout = program.layout();
    let mut memory = Memory {
        program: &program,
        x: vec![0.4; layout.states],
        p: program.p0().to_vec(),
        work: vec![0.0; layout.work],
    };
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
    };
    for _ in 0..50 {
        for slot in &block.tearing {
            let Slot::Work(i) = slot else {
                panic!("tearing unknown in {slot:?}")
            };
            memory.work[*i as usize] = next();
        }
        let mut residuals = vec![f64::NAN; block.residuals.len()];
        let mut values = vec![f64::NAN; partials.len()];
        let mut dx = vec![0.0; layout.states];
        for (segment, out) in [(0, &mut residuals), (1, &mut values)] {
            module
                .run(
                    segment,
                    0.0,
                    [&memory.x, &memory.p],
                    [&mut dx, &mut memory.work],
                    out,
                    1000,
                )
                .expect("runs");
        }
        for a in &block.inner {
            let Slot::Work(i) = a.target else {
                panic!("inner unknown in {:?}", a.target)
            };
            let expected = evaluate_in(program.exprs(), a.value, &memory).expect("evaluates");
            assert!(same(memory.work[i as usize], expected));
        }
        let expected = |e: ExprId| evaluate_in(program.exprs(), e, &memory).expect("evaluates");
        for ((r, _), value) in block.residuals.iter().zip(&residuals) {
            assert!(same(*value, expected(*r)), "residual {value} vs {}", expected(*r));
        }
        for (e, value) in partials.iter().zip(&values) {
            assert!(same(*value, expected(*e)), "partial {value} vs {}", expected(*e));
        }
    }
}
