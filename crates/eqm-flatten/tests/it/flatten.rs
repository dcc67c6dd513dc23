//! Flattening tests: the spring–mass example's eleven equations one by one (a mass on a spring
//! fixed at one end, with its equations named (a) to (k)), snapshots of `eqm flatten` for every
//! example, and the resolver/flattener diagnostics.

use eqm_flatten::Sources;
use eqm_ir::flat::{FlatModel, Origin};

/// The one place these tests call the pipeline: parse `files` with the embedded stdlib, flatten
/// `model` (or the only model), and return the flat model and the rendered diagnostics.
fn check(files: &[(&str, &str)], model: Option<&str>) -> (Option<FlatModel>, String) {
    let mut session = Sources::new();
    session.add_embedded_stdlib();
    for (name, text) in files {
        session.add_file(*name, *text);
    }
    let flat = session.flatten(model, &eqm_flatten::Options::default());
    (flat, session.render_diagnostics(false))
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", crate::REPO)).expect("example exists")
}

/// The spring–mass example: equations (a)-(k) in the unknowns s1..s5 (positions of the flanges),
/// f1..f5 (their forces) and v (the mass's velocity).
#[test]
fn spring_mass_has_its_eleven_equations() {
    let text = example("spring_mass.eqm");
    let (flat, diagnostics) = check(&[("spring_mass.eqm", &text)], None);
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    let s = [
        "mass.flange_a.s",
        "mass.flange_b.s",
        "spring.flange_a.s",
        "spring.flange_b.s",
        "fixed.flange.s",
    ];
    let f = [
        "mass.flange_a.f",
        "mass.flange_b.f",
        "spring.flange_a.f",
        "spring.flange_b.f",
        "fixed.flange.f",
    ];
    let mut unknowns: Vec<&str> = flat.unknowns().map(|(_, v)| v.name.as_str()).collect();
    unknowns.sort_unstable();
    let mut expected: Vec<&str> = s.iter().chain(f.iter()).copied().chain(["mass.v"]).collect();
    expected.sort_unstable();
    assert_eq!(unknowns, expected);
    let equations: Vec<String> = flat
        .equations
        .iter()
        .map(|e| format!("{} = {}", flat.expr_text(e.lhs), flat.expr_text(e.rhs)))
        .collect();
    let expected_equations = [
        "mass.flange_a.s = mass.flange_b.s",                                    // (a) s1 = s2
        "mass.v = der(mass.flange_b.s)",                                        // (b) v = der(s2)
        "mass.m*der(mass.v) = mass.flange_a.f + mass.flange_b.f",               // (c)
        "spring.flange_a.f + spring.flange_b.f = 0",                            // (d) f3 + f4 = 0
        "spring.flange_b.f = spring.c*(spring.flange_b.s - spring.flange_a.s)", // (e)
        "fixed.flange.s = 0",                                                   // (f) s5 = 0
        "mass.flange_a.f = 0",                                                  // (g) f1 = 0
        "mass.flange_b.s = spring.flange_a.s",                                  // (h) s2 = s3
        "mass.flange_b.f + spring.flange_a.f = 0",                              // (i) f2 + f3 = 0
        "spring.flange_b.s = fixed.flange.s",                                   // (j) s4 = s5
        "spring.flange_b.f + fixed.flange.f = 0",                               // (k) f4 + f5 = 0
    ];
    assert_eq!(equations.len(), 11, "{equations:#?}");
    for e in expected_equations {
        assert!(
            equations.iter().any(|x| x == e),
            "missing equation `{e}` in {equations:#?}"
        );
    }
    // Provenance: (g) is the unconnected flow, (h)-(k) come from connection sets.
    let origin_of = |text: &str| {
        let i = equations.iter().position(|x| x == text).expect("present");
        flat.equations[i].origin.clone()
    };
    assert!(matches!(
        origin_of("mass.flange_a.f = 0"),
        Origin::UnconnectedFlow { .. }
    ));
    assert!(matches!(
        origin_of("mass.flange_b.s = spring.flange_a.s"),
        Origin::ConnectPotential { .. }
    ));
    assert!(matches!(
        origin_of("spring.flange_b.f + fixed.flange.f = 0"),
        Origin::ConnectFlow { .. }
    ));
}

#[test]
fn flatten_snapshots_of_every_example() {
    insta::glob!("../../../../examples", "*.eqm", |path| {
        let text = std::fs::read_to_string(path).expect("readable");
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("example");
        let (flat, diagnostics) = check(&[(name, &text)], None);
        let flat = flat.unwrap_or_else(|| panic!("{name}: {diagnostics}"));
        insta::assert_snapshot!(flat.print());
    });
}

#[test]
fn stdlib_spring_mass_is_balanced_and_matches_the_hand_written_one() {
    let text = example("spring_mass_stdlib.eqm");
    let (flat, diagnostics) = check(&[("spring_mass_stdlib.eqm", &text)], None);
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    assert_eq!(flat.unknowns().count(), flat.equations.len());
}

#[test]
fn arrays_for_loops_and_parameters_expand_to_scalars() {
    let src = "model Chain
  parameter Integer N = 3;
  parameter Real k[N] = {1, 2, 3};
  Real x[N](each start = 1);
equation
  for i in 1:N loop
    der(x[i]) = -k[i]*x[i];
  end for;
end Chain;";
    let (flat, diagnostics) = check(&[("chain.eqm", src)], None);
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    assert_eq!(flat.equations.len(), 3);
    assert_eq!(flat.expr_text(flat.equations[2].lhs), "der(x[3])");
    assert_eq!(flat.equations[2].array.as_ref().map(|a| a.index.clone()), Some(vec![3]));
    let (flat, _) = {
        let mut session = Sources::new();
        session.add_file("chain.eqm", src);
        let options = eqm_flatten::Options {
            parameters: vec![("N".to_string(), 5.0)],
            ..eqm_flatten::Options::default()
        };
        let f = session.flatten(None, &options);
        (f, ())
    };
    // `k` has 3 values for 5 elements, which must be reported, never silently truncated.
    assert!(flat.is_none());
}

#[test]
fn diagnostics_name_the_problem_and_its_place() {
    let cases: &[(&str, &str)] = &[
        ("model M\n  Real x;\nequation\n  x = y;\nend M;", "E0205"),
        ("model M\n  Sprng s;\nend M;", "E0202"),
        ("model M\n  Real x(strat = 1);\nequation\n  x = 1;\nend M;", "E0203"),
        ("model M\n  Real x;\n  Real y;\nequation\n  x = 1;\nend M;", "E0401"),
        ("model M\n  Real x;\nequation\n  x = 1;\n  x = 2;\nend M;", "E0401"),
        ("model M\n  Real n = 2;\n  Real x[n];\nend M;", "E0206"),
        ("model M\n  Real x[2];\nequation\n  x = {1, 2, 3};\nend M;", "E0304"),
        (
            "connector A\n  Real v;\n  flow Real i;\nend A;\nconnector B\n  Real s;\n  flow Real f;\nend B;\nmodel M\n  A a;\n  B b;\nequation\n  connect(a, b);\nend M;",
            "E0303",
        ),
    ];
    for (src, code) in cases {
        let (flat, diagnostics) = check(&[("m.eqm", src)], Some("M"));
        assert!(flat.is_none(), "expected an error for:\n{src}");
        assert!(
            diagnostics.contains(&format!("[{code}]")),
            "expected {code} for:\n{src}\ngot:\n{diagnostics}"
        );
        assert!(
            diagnostics.contains("m.eqm:"),
            "diagnostic without a location:\n{diagnostics}"
        );
    }
}

/// A class defined twice has its own code, not that of an unknown class (E0202); assigning an
/// undeclared name in a function is an unknown variable, not a modifier of nothing (E0203).
#[test]
fn duplicate_classes_and_unknown_assignment_targets_have_their_own_codes() {
    let twice = "model A\nend A;\nmodel A\nend A;\nmodel M\n  Real x = 1;\nend M;";
    let (_, diagnostics) = check(&[("m.eqm", twice)], Some("M"));
    assert!(
        diagnostics.contains("[E0207]") && diagnostics.contains("class `A` is defined twice"),
        "{diagnostics}"
    );
    let target = "function f\n  input Real u;\n  output Real y;\nalgorithm\n  z := u;\n  y := u;\nend f;\nmodel M\n  Real x = f(1);\nend M;";
    let (flat, diagnostics) = check(&[("m.eqm", target)], Some("M"));
    assert!(flat.is_none());
    assert!(
        diagnostics.contains("[E0205]") && diagnostics.contains("`z` is not a variable of this function"),
        "{diagnostics}"
    );
}

/// Calls of user functions: named arguments, defaults that refer to earlier inputs, several
/// outputs, and a function whose loop range is only known at run time.
#[test]
fn user_functions_and_algorithms_are_flattened() {
    let text = r#"
package P
  function poly
    input Real x;
    input Real a = 2;
    input Real b = a*3;
    output Real y;
    output Real dy;
  algorithm
    y := a*x*x + b;
    dy := 2*a*x;
  end poly;
  function sumTo
    input Integer n;
    output Real s = 0;
  algorithm
    for i in 1:n loop
      s := s + i;
    end for;
  end sumTo;
end P;
model M
  Real x(start = 1), y, z, w, q[2];
equation
  der(x) = -P.poly(x, b = 1);
  (y, z) = P.poly(x, a = 4);
  w = P.sumTo(3);
algorithm
  for i in 1:2 loop
    q[i] := i*x;
  end for;
end M;
"#;
    let (flat, diagnostics) = check(&[("m.eqm", text)], None);
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    let eqs: Vec<String> = flat
        .equations
        .iter()
        .map(|e| format!("{} = {}", flat.expr_text(e.lhs), flat.expr_text(e.rhs)))
        .collect();
    assert_eq!(
        eqs,
        [
            "der(x) = -P.poly(x, 2, 1)",
            "y = P.poly(x, 4, 4*3)",
            "z = P.poly(x, 4, 4*3).output2",
            "w = P.sumTo(3)",
        ]
    );
    assert_eq!(flat.functions.len(), 2);
    let sum_to = &flat.functions[1];
    assert_eq!((sum_to.inputs, sum_to.outputs), (1, 1));
    assert!(
        matches!(sum_to.body.last(), Some(eqm_ir::flat::Statement::For { .. })),
        "a loop over an input stays a loop"
    );
    let algorithm = &flat.algorithms[0];
    let outputs: Vec<&str> = algorithm.outputs.iter().map(|v| flat.var(*v).name.as_str()).collect();
    assert_eq!(outputs, ["q[1]", "q[2]"]);
    assert!(
        flat.print()
            .contains("6 unknowns, 4 equations, 2 assigned by algorithms")
    );
}

/// A block checked on its own: its inputs come from outside (they are not unknowns), so the
/// block balances; an input of a component inside a model is still an unknown.
#[test]
fn top_level_inputs_are_not_unknowns() {
    let (flat, diagnostics) = check(&[], Some("Blocks.Math.Gain"));
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    let unknowns: Vec<&str> = flat.unknowns().map(|(_, v)| v.name.as_str()).collect();
    assert_eq!(unknowns, ["y"]);
    let text = "model Uses\n  Blocks.Math.Gain gain(k = 2);\nequation\n  gain.u = time;\nend Uses;\n";
    let (flat, diagnostics) = check(&[("uses.eqm", text)], None);
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    let unknowns: Vec<&str> = flat.unknowns().map(|(_, v)| v.name.as_str()).collect();
    assert_eq!(unknowns, ["gain.u", "gain.y"]);
}

/// The embedded library is parsed only as far as lookups reach: nothing when it is added or for
/// a model that names a package only in a comment, and for a resistor of the electrical library
/// the packages on the way to it and to what it uses, not their other packages or other domains.
#[test]
fn the_stdlib_is_parsed_only_as_far_as_lookups_reach() {
    let parsed = |text: &str| {
        let mut session = Sources::new();
        session.add_embedded_stdlib_lazily();
        session.add_file("m.eqm", text);
        let flat = session.flatten(None, &eqm_flatten::Options::default());
        assert!(flat.is_some(), "{}", session.render_diagnostics(false));
        let mut names: Vec<String> = Vec::new();
        for (id, tree) in &session.library {
            if !session.map.get(*id).name.starts_with("<stdlib>") {
                continue;
            }
            let within = match &tree.within {
                Some(Some(w)) => w.parts.iter().map(|p| format!("{}.", p.name)).collect::<String>(),
                _ => String::new(),
            };
            names.extend(tree.classes.iter().map(|c| format!("{within}{}", c.name.name)));
        }
        names.sort();
        names
    };
    assert!(parsed("// uses Mechanics\nmodel M Real x = 1; equation end M;").is_empty());
    let electrical = parsed(
        "model C\n  Electrical.Analog.Basic.Resistor r(R = 2);\n  Electrical.Analog.Basic.Ground g;\n\
         equation\n  connect(r.n, g.p);\nend C;",
    );
    for needed in ["Electrical", "Electrical.Analog", "Electrical.Analog.Basic"] {
        assert!(electrical.iter().any(|n| n == needed), "{needed}: {electrical:?}");
    }
    for unused in ["Hydraulics", "SystemDynamics", "Modelica", "Mechanics"] {
        assert!(!electrical.iter().any(|n| n == unused), "{unused}: {electrical:?}");
    }
    // Every package the model reaches through the ones it names is parsed too, so it flattens.
    let mut session = Sources::new();
    session.add_embedded_stdlib_lazily();
    session.add_file("rc_circuit.eqm", example("rc_circuit.eqm"));
    let flat = session.flatten(None, &eqm_flatten::Options::default());
    assert!(flat.is_some(), "{}", session.render_diagnostics(false));
}

#[test]
fn the_parameters_that_shape_the_flat_model_are_recorded() {
    let (flat, errors) = check(
        &[(
            "s.eqm",
            "model S
               parameter Integer n = 2;
               parameter Integer m = n + 1;
               parameter Boolean useB = true;
               parameter Integer k = 1;
               parameter Real c = 3;
               Real x[m];
               Real y;
             equation
               for i in 1:m loop
                 x[i] = c*i;
               end for;
               if useB then
                 y = x[k];
               else
                 y = 0;
               end if;
             end S;",
        )],
        None,
    );
    let flat = flat.unwrap_or_else(|| panic!("{errors}"));
    let names: Vec<&str> = flat.structural.iter().map(|v| flat.var(*v).name.as_str()).collect();
    // m sets the array size and the range, through its binding n; useB chooses a branch; k is
    // a subscript. c only enters equations: it may change at run time.
    assert_eq!(names, ["n", "m", "useB", "k"]);
}

/// `readMatrix` reads through the reader the sources were given (here one that returns texts and
/// records what it was asked for): a relative name from the directory of the model's file, an
/// absolute one as it is, each file once however many instances read it. Rows may be separated
/// by commas or whitespace; a header, comments, empty lines and Windows line ends are skipped.
#[test]
fn read_matrix_reads_through_the_given_reader_relative_to_the_models_file() {
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};
    let asked: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let log = Arc::clone(&asked);
    let mut session = Sources::new();
    session.reader = Some(Arc::new(move |path: &Path| {
        log.lock().expect("not poisoned").push(path.to_path_buf());
        match path.to_str() {
            Some("models/points.csv") => Ok(b"# two points\r\nx, y\r\n0, 1.5\r\n\r\n2, -3e-1\r\n".to_vec()),
            Some("/data/row.txt") => Ok(b"1 2\t3\n".to_vec()),
            _ => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")),
        }
    }));
    session.add_file(
        "models/tables.eqm",
        "model Tables
  model Part
    parameter Real t[:, 2] = readMatrix(\"points.csv\");
  end Part;
  Part parts[3];
  parameter String name = \"/data/row.txt\";
  parameter Real row[1, 3] = readMatrix(name);
end Tables;
",
    );
    let flat = session
        .flatten(None, &eqm_flatten::Options::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let value = |name: &str| literal_binding(&flat, name);
    for part in 1..=3 {
        assert_eq!(value(&format!("parts[{part}].t[1,1]")), Some(0.0));
        assert_eq!(value(&format!("parts[{part}].t[1,2]")), Some(1.5));
        assert_eq!(value(&format!("parts[{part}].t[2,1]")), Some(2.0));
        assert_eq!(value(&format!("parts[{part}].t[2,2]")), Some(-0.3));
    }
    assert_eq!(value("row[1,3]"), Some(3.0));
    let asked = asked.lock().expect("not poisoned");
    assert_eq!(
        *asked,
        [PathBuf::from("models/points.csv"), PathBuf::from("/data/row.txt")]
    );
}

/// Without a reader, a model that reads a data file is told so, at the call.
#[test]
fn read_matrix_without_a_reader_is_a_located_diagnostic() {
    let (flat, errors) = check(
        &[(
            "m.eqm",
            "model M\n  parameter Real t[2, 2] = readMatrix(\"t.csv\");\nend M;\n",
        )],
        None,
    );
    assert!(flat.is_none());
    assert!(errors.contains("[E0318]"), "{errors}");
    assert!(
        errors.contains("cannot use the data file `t.csv`: no file reader was given to the compiler"),
        "{errors}"
    );
    assert!(errors.contains("m.eqm:2:28"), "{errors}");
}

/// The contents of a base class are looked up in the base class (Modelica 5.6.1): a name that
/// only a class extending it declares is not one of its elements, so `k` in `Base` is the
/// package's constant 3 even inside `Derived`, which declares a parameter `k` of its own.
#[test]
fn a_base_class_sees_the_enclosing_constant_and_not_the_derived_classs_element() {
    let source = "package P
  constant Real k = 3;
  model Base
    parameter Real x = k;
  end Base;
  model Derived
    parameter Real k = 2;
    extends Base;
  end Derived;
  model M
    Derived d;
  end M;
end P;
";
    let (flat, diagnostics) = check(&[("scoping.eqm", source)], Some("P.M"));
    let flat = flat.unwrap_or_else(|| panic!("{diagnostics}"));
    assert_eq!(literal_binding(&flat, "d.x"), Some(3.0));
    assert_eq!(literal_binding(&flat, "d.k"), Some(2.0));
}

/// The binding of variable `name` of `flat` when it is a number.
fn literal_binding(flat: &FlatModel, name: &str) -> Option<f64> {
    let v = flat
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("{name}"));
    v.binding.and_then(|b| flat.exprs.literal(b))
}
