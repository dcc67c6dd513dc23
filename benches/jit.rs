//! JIT throughput on a mass-spring chain: compile speed (assignments per second) and the cost
//! of one evaluation per assignment, against a hand-written Rust loop computing the same values
//! and the reference evaluator.
//!
//! Run with `cargo bench --bench jit` (release); sizes may be given as arguments (default 10^4
//! and 10^5 assignments). The model: masses `i` with position `x[2i]` and velocity `x[2i+1]`,
//! springs `k`, damping `c`, mass `m` in `p`. Per mass three assignments:
//! `work[i] := k*(s[i] - s[i-1])` (the spring force), `dx[2i] := v[i]` and
//! `dx[2i+1] := (work[i+1] - work[i] - c*v[i])/m` (written one step later, when the next
//! spring's force is known). Then, per example model (and a model with a nonlinear algebraic
//! loop), the time of one right-hand-side evaluation by the interpreter alone and with native
//! code attached (every instruction compiled; Newton iterations in Rust). Prints numbers only;
//! nothing is asserted about time.

use eqm_ir::expr::{BinOp, ExprArena, ExprId, VarId};
use eqm_ir::slot::Slot;
use eqm_ir::symbolic::evaluate;
use eqm_jit::{JitOptions, Segment, compile};
use std::hint::black_box;
use std::time::Instant;

mod common;

/// Variables: `k < 2n` is `x[k]`, `2n + j` is `p[j]`, `3n + i` is `work[i]`.
struct Chain {
    masses: usize,
    arena: ExprArena,
    segment: Segment,
}

impl Chain {
    fn new(assignments: usize) -> Chain {
        let n = assignments.div_ceil(3).max(2);
        let mut a = ExprArena::new();
        let state = |a: &mut ExprArena, k: usize| a.var(VarId(k as u32));
        let param = |a: &mut ExprArena, j: usize| a.var(VarId((2 * n + j) as u32));
        let force = |a: &mut ExprArena, i: usize| a.var(VarId((3 * n + i) as u32));
        let (k, c, m) = (param(&mut a, 0), param(&mut a, 1), param(&mut a, 2));
        let mut out: Vec<(Slot, ExprId)> = Vec::with_capacity(3 * n);
        // The acceleration of mass `i`, given the force of the spring to its right.
        let acceleration = |a: &mut ExprArena, i: usize, right: ExprId| {
            let left = force(a, i);
            let v = state(a, 2 * i + 1);
            let net = a.binary(BinOp::Sub, right, left);
            let damping = a.binary(BinOp::Mul, c, v);
            let net = a.binary(BinOp::Sub, net, damping);
            a.binary(BinOp::Div, net, m)
        };
        for i in 0..n {
            let s = state(&mut a, 2 * i);
            let stretch = if i == 0 {
                s
            } else {
                let left = state(&mut a, 2 * (i - 1));
                a.binary(BinOp::Sub, s, left)
            };
            let f = a.binary(BinOp::Mul, k, stretch);
            out.push((Slot::Work(i as u32), f));
            out.push((Slot::Der(2 * i as u32), state(&mut a, 2 * i + 1)));
            if i > 0 {
                let right = force(&mut a, i);
                out.push((Slot::Der(2 * i as u32 - 1), acceleration(&mut a, i - 1, right)));
            }
        }
        let free_end = a.real(0.0);
        out.push((Slot::Der(2 * n as u32 - 1), acceleration(&mut a, n - 1, free_end)));
        Chain {
            masses: n,
            arena: a,
            segment: Segment::assignments(out),
        }
    }

    fn slot(&self, v: VarId) -> Option<Slot> {
        let (n, v) = (self.masses, v.0 as usize);
        Some(if v < 2 * n {
            Slot::State(v as u32)
        } else if v < 3 * n {
            Slot::Param((v - 2 * n) as u32)
        } else {
            Slot::Work((v - 3 * n) as u32)
        })
    }

    fn assignments(&self) -> usize {
        self.segment.assignments.len()
    }
}

/// The same computation written by hand, in the same order of operations.
fn by_hand(x: &[f64], p: &[f64], dx: &mut [f64], work: &mut [f64]) {
    let (k, c, m) = (p[0], p[1], p[2]);
    let n = work.len();
    for i in 0..n {
        let stretch = if i == 0 { x[0] } else { x[2 * i] - x[2 * (i - 1)] };
        work[i] = k * stretch;
        dx[2 * i] = x[2 * i + 1];
        if i > 0 {
            dx[2 * i - 1] = (work[i] - work[i - 1] - c * x[2 * i - 1]) / m;
        }
    }
    dx[2 * n - 1] = (0.0 - work[n - 1] - c * x[2 * n - 1]) / m;
}

/// The reference evaluator, one assignment after another.
fn by_evaluator(chain: &Chain, x: &[f64], p: &[f64], dx: &mut [f64], work: &mut [f64]) {
    for &(target, e) in &chain.segment.assignments {
        let value = {
            let var = |v: VarId| match chain.slot(v) {
                Some(Slot::State(i)) => x[i as usize],
                Some(Slot::Param(j)) => p[j as usize],
                Some(Slot::Work(i)) => work[i as usize],
                _ => f64::NAN,
            };
            evaluate(&chain.arena, e, &var, 0.0).unwrap_or(f64::NAN)
        };
        match target {
            Slot::Der(i) => dx[i as usize] = value,
            Slot::Work(i) => work[i as usize] = value,
            _ => {}
        }
    }
}

/// Nanoseconds per assignment of the fastest of several batches of `reps` runs of `f`.
fn ns_per_assignment(assignments: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    let best = common::best_of(5, || {
        for _ in 0..reps {
            f();
        }
    });
    best.as_secs_f64() * 1e9 / (reps * assignments) as f64
}

/// A model whose right-hand side is mostly a torn nonlinear loop with a symbolic Jacobian.
const LOOP_MODEL: &str = "model Loop
  Real s(start = 0.5, fixed = true);
  Real u(start = 0.1);
  Real v(start = 0.2);
  Real w;
equation
  u = 0.2*cos(v) - s;
  w = u*u + s;
  v = 0.4*sin(w) + s*u*exp(-v);
  der(s) = u + v - w;
end Loop;";

/// Microseconds per right-hand-side evaluation of each example, interpreted and native.
fn models() {
    use eqm_sim::instance::Instance;
    use eqm_sim::interp::OdeRhs;
    use eqm_sim::native::NativeCode;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut sources: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
                .filter_map(|p| {
                    let name = p.file_name()?.to_str()?.to_string();
                    Some((name, std::fs::read_to_string(&p).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    sources.sort();
    sources.push(("(nonlinear loop)".to_string(), LOOP_MODEL.to_string()));
    println!();
    println!(
        "{:>24} {:>8} {:>10} {:>14} {:>10}",
        "model", "instrs", "compile ms", "interpreter µs", "native µs"
    );
    for (name, text) in sources {
        let mut session = eqm::Session::new();
        session.add_embedded_stdlib();
        session.add_file(name.as_str(), text);
        let Some(model) = session.compile(None, &eqm::ModelOptions::default()) else {
            eprintln!("{name}: does not compile");
            continue;
        };
        let program = model.program();
        let start = Instant::now();
        let Some(native) = NativeCode::compile(program) else {
            eprintln!("{name}: no native code");
            continue;
        };
        let compile_ms = start.elapsed().as_secs_f64() * 1e3;
        let (Ok(mut interpreted), Ok(mut fast)) = (Instance::new(program), Instance::new(program)) else {
            continue;
        };
        fast.attach_native(std::sync::Arc::new(native));
        let x = eqm_sim::instance::default_start_values(program).expect("start values");
        let mut dx = vec![0.0; x.len()];
        let mut time = |instance: &mut Instance<'_>| {
            let reps = 2000;
            let best = common::best_of(5, || {
                for _ in 0..reps {
                    let _ = instance.rhs(0.1, black_box(&x), &mut dx);
                }
            });
            best.as_secs_f64() * 1e6 / reps as f64
        };
        let (a, b) = (time(&mut interpreted), time(&mut fast));
        println!(
            "{:>24} {:>8} {:>10.1} {:>14.3} {:>10.3}",
            name,
            program.rhs().len(),
            compile_ms,
            a,
            b
        );
    }
}

fn main() {
    let sizes: Vec<usize> = {
        let given: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() { vec![10_000, 100_000] } else { given }
    };
    println!(
        "{:>8} {:>10} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "assign", "compile ms", "assign/s", "functions", "JIT ns", "Rust ns", "evaluator ns"
    );
    for size in sizes {
        let chain = Chain::new(size);
        let n = chain.masses;
        let options = JitOptions::default();
        let slot = |v: VarId| chain.slot(v);
        let start = Instant::now();
        let module = match compile(
            &chain.arena,
            &[],
            &[],
            &slot,
            std::slice::from_ref(&chain.segment),
            &options,
        ) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("compile failed: {e}");
                return;
            }
        };
        let compile_s = start.elapsed().as_secs_f64();
        let assignments = chain.assignments();
        let x: Vec<f64> = (0..2 * n).map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0).collect();
        let p = [40.0, 0.3, 1.5];
        let (mut dx, mut work) = (vec![0.0; 2 * n], vec![0.0; n]);
        let (mut dx_hand, mut work_hand) = (vec![0.0; 2 * n], vec![0.0; n]);
        let (mut dx_eval, mut work_eval) = (vec![0.0; 2 * n], vec![0.0; n]);
        if let Err(e) = module.call(0, 0.0, &x, &p, &mut dx, &mut work) {
            eprintln!("call failed: {e}");
            return;
        }
        by_hand(&x, &p, &mut dx_hand, &mut work_hand);
        by_evaluator(&chain, &x, &p, &mut dx_eval, &mut work_eval);
        let agree = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(u, v)| u.to_bits() == v.to_bits());
        if !(agree(&dx, &dx_hand) && agree(&work, &work_hand) && agree(&dx, &dx_eval)) {
            eprintln!("results differ between the JIT, the Rust loop and the evaluator");
        }
        let reps = (2_000_000 / assignments).max(1);
        let jit = ns_per_assignment(assignments, reps, || {
            let _ = module.call(0, 0.0, black_box(&x), &p, &mut dx, &mut work);
        });
        let hand = ns_per_assignment(assignments, reps, || {
            by_hand(black_box(&x), &p, &mut dx_hand, &mut work_hand);
        });
        let evaluator = ns_per_assignment(assignments, 1, || {
            by_evaluator(&chain, black_box(&x), &p, &mut dx_eval, &mut work_eval);
        });
        println!(
            "{:>8} {:>10.1} {:>12.0} {:>10} {:>10.2} {:>10.2} {:>12.1}",
            assignments,
            compile_s * 1e3,
            assignments as f64 / compile_s,
            module.function_count(0).unwrap_or(0),
            jit,
            hand,
            evaluator
        );
    }
    models();
}
