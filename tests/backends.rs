//! The JIT against the reference interpreter: on every example, the right-hand side with its
//! runs of explicit assignments in native code (scalar Newton blocks, loops and algorithm
//! sections staying in the interpreter) computes the same derivatives as the interpreter alone,
//! at seeded pseudo-random states, times and parameter values.

use eqm::driver::Session;
use eqm::interp::{Instance, NativeRuns, OdeRhs};

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

#[test]
fn jit_agrees_with_the_interpreter_on_every_example() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "eqm"))
        .collect();
    files.sort();
    let mut compared = Vec::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let mut session = Session::new();
        session.add_embedded_stdlib();
        session.add_file(name.as_str(), std::fs::read_to_string(&path).expect("readable"));
        let compiled = session
            .compile(None, &eqm::flatten::Options::default())
            .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)));
        let program = &compiled.program;
        let Some(native) = NativeRuns::compile(program) else {
            continue;
        };
        let mut instance = Instance::new(program).expect("instance");
        let mut hybrid = Instance::new(program).expect("instance");
        hybrid.attach_native(native);
        // Parameters scaled by a random factor in [0.5, 1.5), where the model allows it.
        let params: Vec<(String, f64)> = program
            .params()
            .iter()
            .map(|v| program.dae().flat.var(*v).name.clone())
            .zip(program.p0().to_vec())
            .collect();
        for (param, value) in params {
            // Parameters change after compiling: they are inputs of the native code.
            let scaled = value * (0.5 + rng.next());
            if instance.set_param(&param, scaled).is_ok() {
                hybrid.set_param(&param, scaled).expect("same parameters");
            }
        }
        let n = instance.dim();
        let mut evaluated = 0;
        for _ in 0..40 {
            let t = 10.0 * rng.next();
            let x: Vec<f64> = (0..n).map(|_| 4.0 * rng.next() - 2.0).collect();
            let (mut dx_interp, mut dx_jit) = (vec![0.0; n], vec![0.0; n]);
            let a = instance.rhs(t, &x, &mut dx_interp);
            let b = hybrid.rhs(t, &x, &mut dx_jit);
            // At random points a Newton block may fail to converge (a pendulum position off
            // its circle); then both back ends must fail alike.
            assert_eq!(a.is_ok(), b.is_ok(), "{name} at t = {t}: {a:?} vs {b:?}");
            if a.is_err() {
                continue;
            }
            evaluated += 1;
            for (i, (a, b)) in dx_interp.iter().zip(&dx_jit).enumerate() {
                // Both call the same Rust functions for every built-in, in the same order: the
                // results must agree bit for bit.
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{name}: der of state {i} at t = {t}: interpreter {a}, jit {b}"
                );
            }
        }
        assert!(evaluated >= 5, "{name}: only {evaluated} points could be evaluated");
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
