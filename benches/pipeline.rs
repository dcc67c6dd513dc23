//! The whole pipeline on a chain of N masses and springs built from the stdlib: source text to
//! native right-hand side (parse, flatten, alias elimination, index reduction, the plan, the
//! initialization, code generation, the interpreter's register code and the JIT), and then the
//! cost of one right-hand-side evaluation against a hand-written Rust function computing the
//! same derivatives and algebraic variables.
//!
//! Run with `cargo bench --bench pipeline` (release); sizes may be given as arguments (default
//! N = 10^3, 10^4, 10^5). Each size runs in its own process (this program re-executes itself
//! with `--one N`) so that the peak resident memory is that size's alone. Prints the flat
//! equations, each stage's wall time, the end-to-end rate in equations per second, the peak
//! memory, and the nanoseconds per right-hand-side evaluation of EQM and of the Rust function
//! with their ratio. Goals: at least 50 000 equations per second end to end, and the
//! right-hand side within 1.3x of the hand-written Rust. Nothing is asserted about time.

use eqm::{ModelOptions, Session};
use eqm_ir::slot::Slot;
use eqm_sim::instance::Instance;
use eqm_sim::interp::{FiniteChecks, OdeRhs};
use eqm_sim::native::NativeCode;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

fn main() {
    if let Some(n) = common::one_size() {
        one(n);
        return;
    }
    common::run_sizes_in_own_processes(&[1_000, 10_000, 100_000], |n, output| {
        print!("{}", String::from_utf8_lossy(&output.stdout));
        if !output.status.success() {
            println!("N = {n} failed: {}", String::from_utf8_lossy(&output.stderr));
        }
    });
}

/// The chain: a fixed end, N springs and N masses in turn, and a constant force on the last
/// mass. Every mass starts at rest at position 0 (fixed start values).
fn source(n: usize) -> String {
    format!(
        "model Chain\n  import Mechanics.Translational.Components;\n  import Mechanics.Translational.Sources;\n  \
         parameter Integer n = {n};\n  Components.Fixed ground;\n  \
         Components.Mass m[n](each m = 1, each s(start = 0, fixed = true), each v(start = 0, fixed = true));\n  \
         Components.Spring s[n](each c = 100);\n  Sources.ConstantForce f(f_constant = 1);\n\
         equation\n  connect(ground.flange, s[1].flange_a);\n  connect(s[1].flange_b, m[1].flange_a);\n  \
         for i in 2:n loop\n    connect(m[i - 1].flange_b, s[i].flange_a);\n    connect(s[i].flange_b, m[i].flange_a);\n  \
         end for;\n  connect(m[n].flange_b, f.flange);\nend Chain;\n"
    )
}

/// Compiles and measures one chain of `n` stages.
fn one(n: usize) {
    let text = source(n);
    // The number of flat equations, from a separate untimed flattening.
    let equations = {
        let mut session = Session::new();
        session.add_embedded_stdlib_lazily();
        session.add_file("chain.eqm", text.clone());
        match session.flatten(Some("Chain"), &ModelOptions::default()) {
            Some(flat) => flat.equations.len(),
            None => fail(&mut session),
        }
    };
    let before = common::reset_peak_memory();
    let start = Instant::now();
    let mut session = Session::new();
    session.add_embedded_stdlib_lazily();
    session.add_file("chain.eqm", text);
    let Some(model) = session.compile(Some("Chain"), &ModelOptions::default()) else {
        fail(&mut session)
    };
    let t = Instant::now();
    let mut instance = match Instance::new(model.program()) {
        Ok(instance) => instance,
        Err(d) => panic!("the interpreter refuses the chain: {}", d.message),
    };
    let interpreter = t.elapsed();
    let t = Instant::now();
    let native = NativeCode::compile(model.program());
    let jit = t.elapsed();
    let native_code = match &native {
        Some(code) if code.is_complete() => "all",
        Some(_) => "partly",
        None => "none",
    };
    if let Some(native) = native {
        instance.attach_native(Arc::new(native));
    }
    let total = start.elapsed();
    let peak = match (before, common::peak_memory_kib()) {
        (Some(b), Some(p)) => format!("{:.0}", p.saturating_sub(b) as f64 / 1024.0),
        _ => "?".into(),
    };

    println!(
        "N = {n}: {equations} flat equations, {} states",
        model.program().layout().states
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for stage in session.timings().stages() {
        println!("  {:<16} {:>10.1} ms", stage.stage, ms(stage.time));
    }
    println!("  {:<16} {:>10.1} ms", "interpreter", ms(interpreter));
    println!(
        "  {:<16} {:>10.1} ms (native code: {native_code})",
        "jit compile",
        ms(jit)
    );
    println!(
        "  {:<16} {:>10.1} ms = {:.0} equations/s end to end, peak {peak} MiB",
        "total",
        ms(total),
        equations as f64 / total.as_secs_f64()
    );

    // As the simulation's integrator evaluates it: only the derivatives are checked for being
    // finite (a failure is evaluated again with every assignment checked).
    instance.interpreter().set_finite_checks(FiniteChecks::Derivatives);
    let by_hand = HandWritten::new(n);
    let (ns_eqm, ns_hand) = compare_rhs(&mut instance, model.program(), &by_hand);
    println!(
        "  rhs: EQM {:.0} ns, hand-written Rust {:.0} ns per evaluation ({:.2} vs {:.2} ns per state), ratio {:.2}",
        ns_eqm,
        ns_hand,
        ns_eqm / (2 * n) as f64,
        ns_hand / (2 * n) as f64,
        ns_eqm / ns_hand
    );
}

fn fail(session: &mut Session) -> ! {
    eprintln!("{}", session.render_diagnostics(false));
    std::process::exit(1)
}

/// The chain's right-hand side written by hand, with the stdlib's equations: per stage the
/// mass's flange positions `s -+ L/2`, the spring's stretch `s_rel` and force
/// `f = c*(s_rel - s_rel0)`, and the acceleration `a = (f_next - f)/m` (the last mass is pulled
/// by the constant force). Parameters are per component, as in the generated code.
struct HandWritten {
    n: usize,
    m: Vec<f64>,
    length: Vec<f64>,
    c: Vec<f64>,
    s_rel0: Vec<f64>,
    s0: f64,
    force: f64,
}

impl HandWritten {
    fn new(n: usize) -> HandWritten {
        HandWritten {
            n,
            m: vec![1.0; n],
            length: vec![0.0; n],
            c: vec![100.0; n],
            s_rel0: vec![0.0; n],
            s0: 0.0,
            force: 1.0,
        }
    }

    /// `x` holds (s, v) per mass; `dx` gets (v, a); `work` gets the five algebraic variables
    /// of each stage.
    fn rhs(&self, x: &[f64], dx: &mut [f64], work: &mut [f64]) {
        let mut previous_b = self.s0;
        for i in 0..self.n {
            let s = x[2 * i];
            let flange_a = s - self.length[i] / 2.0;
            let flange_b = s + self.length[i] / 2.0;
            let s_rel = flange_a - previous_b;
            let f = self.c[i] * (s_rel - self.s_rel0[i]);
            work[5 * i] = flange_a;
            work[5 * i + 1] = flange_b;
            work[5 * i + 2] = s_rel;
            work[5 * i + 3] = f;
            previous_b = flange_b;
            dx[2 * i] = x[2 * i + 1];
        }
        for i in 0..self.n {
            let next = if i + 1 < self.n {
                work[5 * (i + 1) + 3]
            } else {
                self.force
            };
            let a = (next - work[5 * i + 3]) / self.m[i];
            work[5 * i + 4] = a;
            dx[2 * i + 1] = a;
        }
    }
}

/// Checks that EQM and the hand-written function compute the same accelerations at a varied
/// state, then times both; returns nanoseconds per evaluation (EQM, hand-written).
fn compare_rhs(instance: &mut Instance, program: &eqm_compile::exec::ExecProgram, hand: &HandWritten) -> (f64, f64) {
    let n = hand.n;
    let mut names: Vec<String> = Vec::with_capacity(3 * n);
    for i in 1..=n {
        names.extend([format!("m[{i}].s"), format!("m[{i}].v"), format!("m[{i}].a")]);
    }
    let columns = eqm_sim::simulate::columns(program, Some(&names)).expect("the chain's variables exist");
    let slot_index = |k: usize| match columns.slots[k] {
        Slot::State(j) | Slot::Der(j) | Slot::Work(j) | Slot::Param(j) => j as usize,
        Slot::Time => usize::MAX,
    };
    let states = program.layout().states;
    let mut x = vec![0.0; states];
    let mut x_hand = vec![0.0; 2 * n];
    for i in 0..n {
        let (s, v) = (0.01 * (i as f64).sin(), 0.1 * (i as f64).cos());
        x[slot_index(3 * i)] = s;
        x[slot_index(3 * i + 1)] = v;
        x_hand[2 * i] = s;
        x_hand[2 * i + 1] = v;
    }
    let mut dx = vec![0.0; states];
    let (mut dx_hand, mut work_hand) = (vec![0.0; 2 * n], vec![0.0; 5 * n]);
    instance.rhs(0.0, &x, &mut dx).expect("the chain evaluates");
    hand.rhs(&x_hand, &mut dx_hand, &mut work_hand);
    let mut worst: f64 = 0.0;
    for i in 0..n {
        let a = match columns.slots[3 * i + 2] {
            Slot::Der(j) => dx[j as usize],
            Slot::Work(j) => instance.work()[j as usize],
            _ => f64::NAN,
        };
        worst = worst.max((a - dx_hand[2 * i + 1]).abs() / dx_hand[2 * i + 1].abs().max(1.0));
    }
    if worst > 1e-12 {
        println!("  warning: EQM and the hand-written right-hand side differ by {worst:e} (relative)");
    }
    let reps = (20_000_000 / (2 * n)).max(3);
    let eqm = best_ns(reps, || {
        let _ = instance.rhs(0.0, black_box(&x), &mut dx);
    });
    let rust = best_ns(reps, || hand.rhs(black_box(&x_hand), &mut dx_hand, &mut work_hand));
    (eqm, rust)
}

/// The best of five rounds of `reps` calls, in nanoseconds per call.
fn best_ns(reps: usize, mut f: impl FnMut()) -> f64 {
    let round = common::best_of(5, || {
        for _ in 0..reps {
            f();
        }
    });
    round.as_secs_f64() * 1e9 / reps as f64
}
