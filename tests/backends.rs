//! The JIT against the reference interpreter: on every example whose right-hand side the JIT
//! path covers, both back ends compute the same derivatives at seeded pseudo-random states,
//! times and parameter values.

use eqm::driver::Session;
use eqm::integrators::OdeSystem;
use eqm::interp::{Instance, OdeRhs};
use eqm::sim::JitRhs;

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
        let Some(module) = JitRhs::compile(program) else {
            continue;
        };
        let mut instance = Instance::new(program).expect("instance");
        // Parameters scaled by a random factor in [0.5, 1.5), where the model allows it.
        let params: Vec<(String, f64)> = program
            .params()
            .iter()
            .map(|v| program.dae().flat.var(*v).name.clone())
            .zip(program.p0().to_vec())
            .collect();
        for (param, value) in params {
            let _ = instance.set_param(&param, value * (0.5 + rng.next()));
        }
        let mut jit = JitRhs::new(module, &instance);
        let n = instance.dim();
        for _ in 0..20 {
            let t = 10.0 * rng.next();
            let x: Vec<f64> = (0..n).map(|_| 4.0 * rng.next() - 2.0).collect();
            let (mut dx_interp, mut dx_jit) = (vec![0.0; n], vec![0.0; n]);
            instance.rhs(t, &x, &mut dx_interp).expect("interpreter evaluates");
            jit.rhs(t, &x, &mut dx_jit).expect("jit evaluates");
            for (i, (a, b)) in dx_interp.iter().zip(&dx_jit).enumerate() {
                // Both call the same Rust functions for every built-in, in the same order: the
                // results must agree bit for bit.
                assert!(
                    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    "{name}: der of state {i} at t = {t}: interpreter {a}, jit {b}"
                );
            }
        }
        compared.push(name);
    }
    for expected in ["decay.eqm", "spring_mass.eqm", "rc_circuit.eqm", "population.eqm"] {
        assert!(
            compared.iter().any(|c| c == expected),
            "{expected} not compared: {compared:?}"
        );
    }
}
