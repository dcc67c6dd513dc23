//! The language corpus (`tests/language/*.eqm`): one model per construct, each with the values
//! it must produce written next to it as `// expect: NAME(T) = VALUE [tol TOL]` (derived by hand
//! or independently, never from EQM's output). Each expected value is the last row of a run
//! from the model's start to `T`; without `tol` the value must be exact. A file with several
//! models names the one to run with `// model: NAME`. Data files a model reads lie beside it.
//! Each file has a test of its own, and a test fails when a file has none.

use crate::compile;
use eqm::RunSettings;

/// One `// expect:` line: variable, time, value, tolerance.
struct Expectation {
    name: String,
    time: f64,
    value: f64,
    tol: f64,
}

fn expectations(text: &str) -> Vec<Expectation> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("// expect:"))
        .map(|rest| {
            let (lhs, rhs) = rest.split_once('=').expect("NAME(T) = VALUE");
            let lhs = lhs.trim();
            let open = lhs.rfind('(').expect("NAME(T)");
            let name = lhs[..open].trim().to_string();
            let time = lhs[open + 1..lhs.len() - 1].trim().parse().expect("a time");
            let mut words = rhs.split_whitespace();
            let value = words.next().expect("a value").parse().expect("a number");
            let tol = match (words.next(), words.next()) {
                (Some("tol"), Some(t)) => t.parse().expect("a tolerance"),
                _ => 0.0,
            };
            Expectation { name, time, value, tol }
        })
        .collect()
}

/// The corpus files, each with a test of its own named after it (`corpus::records` runs
/// `tests/language/records.eqm`), so that a failure names its model and hides no other.
macro_rules! corpus {
    ($($file:ident),* $(,)?) => {
        /// The files that have a test, by name without `.eqm`.
        const CORPUS: &[&str] = &[$(stringify!($file)),*];

        mod corpus {
            $(
                #[test]
                fn $file() {
                    super::check_corpus_file(stringify!($file));
                }
            )*
        }
    };
}

corpus!(
    algorithm_when_sequence,
    same_value_aliases,
    expandable_unsized,
    short_type_causality,
    partial_derivatives,
    array_functions,
    automatic_inner,
    cardinality,
    boolean_dimensions,
    class_extends,
    class_extends_chain,
    component_functions,
    conditional_components,
    connection_roots,
    constant_tables,
    declaration_dependencies,
    declaration_dimensions,
    deduced_ranges,
    delayed_enumerations,
    delay_assertions,
    derived_enumerations,
    dynamic_assignments,
    dynamic_subscripts,
    element_attributes,
    enumerations,
    excluded_branches,
    external_functions,
    flow_records,
    for_over_arrays,
    free_parameters,
    function_extends,
    functional_arguments,
    functional_parameters,
    get_instance_name,
    global_names,
    imported_constants,
    inherited_constants,
    imported_literals,
    inner_outer,
    inner_outer_both,
    integer_results,
    own_name_lookup,
    overconstrained_loops,
    overloaded_operators,
    matrix_blocks,
    matrix_power,
    modifier_scopes,
    nested_class_modifiers,
    parameter_if_equations,
    iterators,
    initial_derivatives,
    long_form_types,
    quoted_identifiers,
    read_matrix,
    record_algorithms,
    record_array_functions,
    record_arrays,
    record_constructor_defaults,
    record_defaults,
    record_equations,
    record_field_arrays,
    record_functions,
    real_ranges,
    records,
    replaceable,
    short_functions,
    simultaneous_events,
    sized_from_locals,
    state_select,
    stream_mixing,
    stream_network,
    stream_pipes,
    stream_reversal,
    stream_unconnected,
    stream_zero_flow,
    subscripted_constants,
    system_dynamics_dt,
    unsized_arrays,
    unused_calls,
    unsized_outputs,
    when_initial,
    string_variables,
    initial_pre_values,
    free_parameter_dependents,
    bound_model_inputs,
    initial_when_values,
    redeclaration_chains,
    flow_connector_components,
    short_class_redeclarations,
    redeclaration_constraints,
    unbound_structural_parameters,
    long_type_aliases,
    self_bindings,
    reinit_in_if_statements,
    string_arrays,
    multiple_root_equations,
    expandable_arrays,
    redeclared_dimensions,
    vector_functions,
    unit_conversions,
    error_function,
    variable_delay_block,
);

/// The corpus directory.
fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(crate::REPO).join("tests/language")
}

/// Runs `tests/language/<file>.eqm` and checks each of its `// expect:` lines; every failure
/// names the file.
fn check_corpus_file(file: &str) {
    let name = format!("{file}.eqm");
    let path = corpus_dir().join(&name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let expected = expectations(&text);
    assert!(!expected.is_empty(), "{name}: no `// expect:` line");
    let chosen = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// model:"))
        .map(|m| m.trim().to_string());
    // Named by its path, so that the data files it reads (`readMatrix`) are found beside
    // it, through a reader of the file system as the command line has.
    let mut session = eqm::Session::with_sources(&[(path.display().to_string(), text.clone())], &[], chosen.as_deref());
    session.set_data_reader(|path: &std::path::Path| std::fs::read(path));
    let mut model = session
        .compile(chosen.as_deref(), &eqm::ModelOptions::default())
        .unwrap_or_else(|| panic!("{name}: {}", session.render_diagnostics(false)));
    for e in expected {
        let result = model
            .simulate(&RunSettings {
                stop: Some(e.time),
                rtol: Some(1e-10),
                atol: Some(1e-10),
                variables: Some(vec![e.name.clone()]),
                ..RunSettings::default()
            })
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let got = *result.column(&e.name).unwrap().last().unwrap();
        assert!(
            (got - e.value).abs() <= e.tol,
            "{name}: {}({}) = {got}, expected {} (tol {})",
            e.name,
            e.time,
            e.value,
            e.tol
        );
    }
}

#[test]
fn every_corpus_file_has_a_test_of_its_own() {
    let mut files: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("the corpus directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "eqm"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let untested: Vec<&String> = files.iter().filter(|f| !CORPUS.contains(&f.as_str())).collect();
    assert!(
        untested.is_empty(),
        "corpus files without a test (add them to `corpus!` in this file): {untested:?}"
    );
    let missing: Vec<&&str> = CORPUS.iter().filter(|t| !files.iter().any(|f| f == *t)).collect();
    assert!(
        missing.is_empty(),
        "tests of corpus files that do not exist: {missing:?}"
    );
}

#[test]
fn a_subscript_computed_during_the_run_is_checked_against_the_bounds() {
    let mut model = compile(
        "model OutOfBounds
  parameter Real a[3] = {10, 20, 30};
  Integer i = if time < 1 then 1 else 4;
  Real y = a[i];
end OutOfBounds;
",
    );
    let failure = model
        .simulate(&RunSettings {
            stop: Some(2.0),
            ..RunSettings::default()
        })
        .expect_err("index 4 of 3 elements");
    let eqm::RunError::Failed { time, diagnostic, .. } = failure else {
        panic!("{failure}")
    };
    assert!((time - 1.0).abs() < 1e-9, "at {time}");
    let d = diagnostic.expect("a diagnostic");
    assert_eq!(d.code, "E0705");
    assert!(d.message.contains("outside 1..3"), "{}", d.message);
}

#[test]
fn string_of_values_known_at_compile_time_is_their_text() {
    let mut session = eqm::Session::with_sources(
        &[(
            "m.eqm".to_string(),
            "model Messages
  type Mode = enumeration(Off, On);
  parameter Real limit = 2.5;
  parameter Integer n = 3;
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  assert(x < limit, \"x exceeds \" + String(limit) + \" (n = \" + String(n) + \", \" + String(Mode.On) + \", \" + String(true) + \"): \" + String(x));
end Messages;
"
            .to_string(),
        )],
        &[],
        None,
    );
    let flat = session.flatten(None, &eqm::ModelOptions::default()).expect("flattens");
    assert_eq!(
        flat.assertions[0].message.written(),
        "x exceeds 2.5 (n = 3, On, true): [x]"
    );
}

#[test]
fn an_external_function_outside_the_c_math_library_without_a_c_compiler_is_a_located_diagnostic() {
    let text = "function f
  input Real x;
  output Real y;
  external \"C\" y = my_solver(x);
end f;
model M
  Real y = f(1);
end M;
";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    assert!(session.compile(None, &eqm::ModelOptions::default()).is_none());
    let d = &session.diagnostics()[0];
    // A session without a linker compiles no C code.
    assert_eq!(d.code, "E0325");
    assert_eq!(
        d.message,
        "the external function `my_solver` of `f` cannot be provided: this front end compiles no C code"
    );
    assert_eq!(d.labels[0].span.file, session.files()[0].0);
}

/// The records of `record_equations.eqm` (record values through functions, if-expressions and
/// when-clauses) give the same rows, bit for bit, from native code and from the interpreter.
#[test]
fn record_equations_agree_between_native_code_and_the_interpreter() {
    corpus_file_agrees_between_back_ends("record_equations.eqm");
}

/// The records of `record_algorithms.eqm` (whole records assigned in algorithms and
/// when-statements, `fill` of records) give the same rows, bit for bit, from both back ends.
#[test]
fn record_algorithms_agree_between_native_code_and_the_interpreter() {
    corpus_file_agrees_between_back_ends("record_algorithms.eqm");
}

/// The tests an algorithm reads literally at events (`$event`) are the same expressions in
/// both back ends.
#[test]
fn algorithm_tests_at_events_agree_between_native_code_and_the_interpreter() {
    corpus_file_agrees_between_back_ends("algorithm_when_sequence.eqm");
}

/// Runs the corpus file `file` on native code and on the interpreter to 1 s and asserts that
/// every column agrees bit for bit.
fn corpus_file_agrees_between_back_ends(file: &str) {
    let text = std::fs::read_to_string(corpus_dir().join(file)).expect("the corpus file");
    let mut model = compile(&text);
    let run = |model: &mut eqm::Model, interpreter: bool| {
        model
            .simulate(&RunSettings {
                stop: Some(1.0),
                interpreter,
                ..RunSettings::default()
            })
            .expect("runs")
    };
    let native = run(&mut model, false);
    let interpreted = run(&mut model, true);
    assert_eq!(native.time().len(), interpreted.time().len());
    for column in native.columns() {
        let a = native.column(&column.name).unwrap();
        let b = interpreted.column(&column.name).expect("the same columns");
        let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
        assert!(same, "{}: native and interpreted rows differ", column.name);
    }
}

/// The branches chosen inside library classes are not the user's: `check` of a model built
/// from a standard-library flow (whose `uniflow` if-equation is chosen at translation) lists the
/// user's own choice only.
#[test]
fn check_lists_the_branches_chosen_in_the_users_files_only() {
    let text = "model Drain
  parameter Boolean fast = true;
  Real k;
  SystemDynamics.Flows.Flow drain;
  SystemDynamics.Reservoirs.Stock S(m0 = 1);
  SystemDynamics.Reservoirs.Stock S2(m0 = 0);
  SystemDynamics.Converters.ConstantConverter rate(constValue = 0.5);
equation
  connect(S.outflow, drain.inflow);
  connect(drain.outflow, S2.inflow);
  connect(rate.y, drain.u);
  if fast then
    k = 2;
  else
    k = 1;
  end if;
end Drain;
";
    let mut session = eqm::Session::with_sources(&[("d.eqm".to_string(), text.to_string())], &[], None);
    let summary = session.check(None, &eqm::ModelOptions::default()).expect("checks");
    assert_eq!(
        summary.branch_choices,
        ["if-equation at d.eqm:12:3: branch 1 chosen at translation because `fast` = true"]
    );
}

/// `check` tells which branch of an if-equation on parameters was chosen at translation, and
/// why. Such a parameter is structural: setting it without compiling again is refused with a
/// diagnostic that names it, and compiling with another value takes the other branches.
#[test]
fn a_parameter_if_equation_chooses_its_branch_at_translation() {
    let text = "model Switch
  parameter Boolean useX = false;
  Real x;
  Real y;
equation
  if useX then
    x = 1;
    y = 2;
  else
    y = 3;
  end if;
  if not useX then
    x = 4;
  end if;
end Switch;
";
    let mut session = eqm::Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    let summary = session.check(None, &eqm::ModelOptions::default()).expect("checks");
    assert_eq!(
        summary.branch_choices,
        [
            "if-equation at m.eqm:6:3: branch 2 (else) chosen at translation because `useX` = false",
            "if-equation at m.eqm:12:3: branch 1 chosen at translation because `not useX` = true",
        ]
    );
    let mut model = session.compile(None, &eqm::ModelOptions::default()).expect("compiles");
    let refused = model.set_parameter("useX", 1.0).expect_err("a structural parameter");
    assert_eq!(refused.code, "E0707");
    assert!(refused.message.contains("`useX`"), "{}", refused.message);
    let options = eqm::ModelOptions {
        parameters: vec![("useX".to_string(), 1.0)],
        ..eqm::ModelOptions::default()
    };
    let mut model = session.compile(None, &options).expect("compiles with useX = true");
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .expect("runs");
    assert_eq!(result.column("x").unwrap().last(), Some(&1.0));
    assert_eq!(result.column("y").unwrap().last(), Some(&2.0));
}
