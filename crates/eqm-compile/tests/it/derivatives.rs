//! `der` of parameter expressions: a variable that equals a parameter expression, or `der` of
//! such an expression itself, has the time derivative 0, whether the variable is removed, kept
//! or differentiated by index reduction; and chains of masses with dampers to the fixed
//! housing (whose position is a parameter) compile in every form with the masses' positions and
//! velocities as the states.

use crate::pipeline::Pipeline;
use eqm_compile::analysis::IndexForm;
use eqm_compile::exec::{ExecProgram, Instr};
use eqm_flatten::Sources;
use eqm_ir::slot::Slot;

fn compile(name: &str, text: &str, form: IndexForm) -> eqm_compile::analysis::Compiled {
    let mut sources = Sources::new();
    sources.add_embedded_stdlib();
    sources.add_file(name, text);
    sources
        .compile_with(None, &eqm_flatten::Options::default(), form)
        .unwrap_or_else(|| panic!("{name}: {}", sources.render_diagnostics(false)))
}

/// The value the right-hand side assigns to the variable named `name` (for a state, to its
/// derivative), as text.
fn assigned(program: &ExecProgram, name: &str) -> String {
    let v = program.lookup(name).unwrap_or_else(|| panic!("no variable {name}"));
    let slot = match program.states().iter().position(|s| *s == v) {
        Some(i) => Slot::Der(i as u32),
        None => program.slot_of(v).unwrap_or_else(|| panic!("{name} has no slot")),
    };
    program
        .rhs()
        .iter()
        .find_map(|instr| match instr {
            Instr::Assign { target, value, .. } if *target == slot => Some(program.expr_text(*value)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the right-hand side does not assign {name}"))
}

#[test]
fn der_of_a_parameter_expression_is_zero() {
    let text = "model DerParam\n  parameter Real p = 2;\n  parameter Real q = 3*p;\n  Real x;\n  Real z;\n  \
                Real y(start = 1, fixed = true);\n  Real w;\nequation\n  x = p;\n  z = q + 2*p;\n  \
                der(y) = -y + der(x) + der(z);\n  w = der(q*p + sin(p));\nend DerParam;\n";
    for form in [IndexForm::Auto, IndexForm::Dummy] {
        let compiled = compile("der_param.eqm", text, form);
        let program = &compiled.program;
        for name in ["der(x)", "der(z)"] {
            assert_eq!(assigned(program, name), "0.0", "{name} in {form:?}");
        }
        // w = der(q*p + sin(p)): the derivative of the parameter expression, 0.
        let w = assigned(program, "w");
        let w_value = if w == "0.0" { w } else { assigned(program, &w) };
        assert_eq!(w_value, "0.0", "w in {form:?}");
        // y is the only state.
        assert_eq!(program.layout().states, 1, "{form:?}");
    }
}

/// A chain of three masses with a spring and a damper in parallel between neighbours and from
/// the first mass to the fixed housing at position `L`.
fn damped_chain(package: &str) -> String {
    format!(
        "model DampedChain\n  import {package}.Mechanics.Translational.Components;\n  parameter Integer n = 3;\n  \
         parameter Real L = 0.5;\n  Components.Fixed fixed(s0 = L);\n  \
         Components.Mass m[n](each m = 1, s(start = {{0.5, 0.5, 0.6}}, each fixed = true), v(each start = 0, each fixed = true));\n  \
         Components.Spring sp[n](each c = 100);\n  Components.Damper d[n](each d = 0.1);\n\
         equation\n  connect(fixed.flange, sp[1].flange_a);\n  connect(fixed.flange, d[1].flange_a);\n  \
         for i in 1:n loop\n    connect(sp[i].flange_b, m[i].flange_a);\n    connect(d[i].flange_b, m[i].flange_a);\n  end for;\n  \
         for i in 1:n - 1 loop\n    connect(m[i].flange_b, sp[i + 1].flange_a);\n    connect(m[i].flange_b, d[i + 1].flange_a);\n  end for;\n\
         end DampedChain;\n"
    )
    .replace("import .Mechanics", "import Mechanics")
}

#[test]
fn a_damped_chain_fixed_at_a_parameter_compiles_in_every_form() {
    for package in ["", "Modelica"] {
        let text = damped_chain(package);
        for form in [IndexForm::Auto, IndexForm::Embedding, IndexForm::Dummy] {
            let mut compiled = compile("damped_chain.eqm", &text, form);
            let program = &mut compiled.program;
            let mut states: Vec<String> = program
                .states()
                .iter()
                .map(|v| program.symbols().get(*v).name.clone())
                .collect();
            states.sort();
            let masses = ["m[1].s", "m[1].v", "m[2].s", "m[2].v", "m[3].s", "m[3].v"];
            if form == IndexForm::Embedding {
                // Every differentiated variable is a state there, the masses' among them.
                assert!(masses.iter().all(|m| states.iter().any(|s| s == m)), "{states:?}");
            } else {
                assert_eq!(states, masses, "{package} {form:?}");
            }
            program
                .add_jacobian()
                .unwrap_or_else(|e| panic!("{package} {form:?}: {e}"));
        }
    }
}
