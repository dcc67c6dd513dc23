//! The FMI export's descriptions of the Modelica Association's Reference FMU models written in
//! EQM (`examples/fmi/`): each variable's causality, variability, initial kind, start value and
//! derivative link, the dependencies of outputs and derivatives, the event indicators, checked
//! against what the equations say by hand; the XML checked by FMPy's validator when Python and
//! FMPy are installed; the archive's layout and the manifest read back.

use eqm::fmi::{
    self, Capabilities, DescriptionOptions, FmiCausality as C, FmiInitial as I, FmiVariability as V, FmiVariable,
    FmiVersion, Kinds,
};
use eqm::{Model, ModelOptions, Session};

fn session_of(file: &str) -> Session {
    let text = super::example(&format!("fmi/{file}"));
    Session::with_sources(&[(format!("examples/fmi/{file}"), text)], &[], None)
}

fn compile(file: &str) -> Model {
    let mut session = session_of(file);
    session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

fn find<'v>(vars: &'v [FmiVariable], name: &str) -> &'v FmiVariable {
    vars.iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no FMI variable `{name}`"))
}

/// Asserts causality, variability, initial and start of variable `name`.
fn expect(vars: &[FmiVariable], name: &str, c: C, v: V, i: Option<I>, start: Option<f64>) {
    let var = find(vars, name);
    assert_eq!(
        (var.causality, var.variability, var.initial, var.start),
        (c, v, i, start),
        "{name}"
    );
}

/// The dependencies of unknown `name` among `list`, as variable names.
fn deps_of(vars: &[FmiVariable], list: &[(u32, fmi::Dependencies)], name: &str) -> Option<Vec<String>> {
    let vr = find(vars, name).value_reference;
    let (_, deps) = list
        .iter()
        .find(|(r, _)| *r == vr)
        .unwrap_or_else(|| panic!("`{name}` is not listed"));
    deps.as_ref().map(|d| {
        let mut names: Vec<String> = d.iter().map(|&(r, _)| vars[r as usize].name.clone()).collect();
        names.sort();
        names
    })
}

fn names(list: &[&str]) -> Option<Vec<String>> {
    Some(list.iter().map(|s| s.to_string()).collect())
}

fn options(version: FmiVersion) -> DescriptionOptions {
    DescriptionOptions {
        version,
        kinds: Kinds { me: true, cs: true },
        model_identifier: "M".into(),
        capabilities: Capabilities::default(),
        generation_tool: "EQM".into(),
        generation_date: None,
    }
}

#[test]
fn value_references_follow_the_documented_order() {
    let model = compile("Dahlquist.eqm");
    let vars = fmi::variables(&model);
    let order: Vec<(&str, u32)> = vars.iter().map(|v| (v.name.as_str(), v.value_reference)).collect();
    assert_eq!(order, [("time", 0), ("k", 1), ("x", 2), ("der(x)", 3)]);
    expect(&vars, "time", C::Independent, V::Continuous, None, None);
    expect(&vars, "k", C::Parameter, V::Tunable, Some(I::Exact), Some(1.0));
    expect(&vars, "x", C::Output, V::Continuous, Some(I::Exact), Some(1.0));
    expect(&vars, "der(x)", C::Local, V::Continuous, Some(I::Calculated), None);
    assert_eq!(find(&vars, "der(x)").derivative_of, Some(2));
    let structure = fmi::structure(&model, &vars);
    // der(x) = -k*x reads the state x; the output x is a state.
    assert_eq!(deps_of(&vars, &structure.derivatives, "der(x)"), names(&["x"]));
    assert_eq!(deps_of(&vars, &structure.outputs, "x"), names(&[]));
}

#[test]
fn van_der_pol_derivatives_depend_on_the_states_they_read() {
    let model = compile("VanDerPol.eqm");
    let vars = fmi::variables(&model);
    let structure = fmi::structure(&model, &vars);
    assert_eq!(deps_of(&vars, &structure.derivatives, "der(x0)"), names(&["x1"]));
    assert_eq!(deps_of(&vars, &structure.derivatives, "der(x1)"), names(&["x0", "x1"]));
    expect(&vars, "x0", C::Output, V::Continuous, Some(I::Exact), Some(2.0));
    expect(&vars, "x1", C::Output, V::Continuous, Some(I::Exact), Some(0.0));
    expect(&vars, "mu", C::Parameter, V::Tunable, Some(I::Exact), Some(1.0));
    assert_eq!(
        find(&vars, "der(x1)").derivative_of,
        Some(find(&vars, "x1").value_reference)
    );
}

#[test]
fn bouncing_ball_has_one_event_indicator_and_a_reinit_state() {
    let model = compile("BouncingBall.eqm");
    let vars = fmi::variables(&model);
    let structure = fmi::structure(&model, &vars);
    // der(h) = v reads the state v; der(v) = g reads a parameter only.
    assert_eq!(deps_of(&vars, &structure.derivatives, "der(h)"), names(&["v"]));
    assert_eq!(deps_of(&vars, &structure.derivatives, "der(v)"), names(&[]));
    assert!(find(&vars, "v").reinit && !find(&vars, "h").reinit);
    expect(&vars, "g", C::Parameter, V::Tunable, Some(I::Exact), Some(-9.81));
    expect(&vars, "h", C::Output, V::Continuous, Some(I::Exact), Some(1.0));
    // One zero-crossing surface, `h <= 0`.
    assert_eq!(model.program().events().surfaces.len(), 1);
    let fmi2 = fmi::model_description(&model, &options(FmiVersion::Fmi2));
    assert!(fmi2.contains("numberOfEventIndicators=\"1\""), "{fmi2}");
    assert!(
        fmi2.contains("<Unit name=\"m/s2\">\n      <BaseUnit m=\"1\" s=\"-2\"/>"),
        "{fmi2}"
    );
    assert!(
        fmi2.contains("<DefaultExperiment startTime=\"0\" stopTime=\"3\" stepSize=\"0.01\"/>"),
        "{fmi2}"
    );
    let fmi3 = fmi::model_description(&model, &options(FmiVersion::Fmi3));
    assert_eq!(fmi3.matches("<EventIndicator ").count(), 1, "{fmi3}");
    assert!(fmi3.contains("fmiVersion=\"3.0\"") && fmi3.contains("instantiationToken=\"{"));
}

#[test]
fn feedthrough_inputs_and_outputs() {
    let model = compile("Feedthrough.eqm");
    let vars = fmi::variables(&model);
    expect(
        &vars,
        "Float64_continuous_input",
        C::Input,
        V::Continuous,
        None,
        Some(0.0),
    );
    // Declared `discrete input Real`: set only at events.
    expect(&vars, "Float64_discrete_input", C::Input, V::Discrete, None, Some(0.0));
    expect(&vars, "Int32_input", C::Input, V::Discrete, None, Some(0.0));
    expect(&vars, "Boolean_input", C::Input, V::Discrete, None, Some(0.0));
    expect(
        &vars,
        "Float64_continuous_output",
        C::Output,
        V::Continuous,
        Some(I::Calculated),
        None,
    );
    expect(&vars, "Int32_output", C::Output, V::Discrete, Some(I::Calculated), None);
    expect(
        &vars,
        "Boolean_output",
        C::Output,
        V::Discrete,
        Some(I::Calculated),
        None,
    );
    // `annotation(Evaluate = true)`: fixed; the other parameter stays tunable.
    expect(
        &vars,
        "Float64_fixed_parameter",
        C::Parameter,
        V::Fixed,
        Some(I::Exact),
        Some(0.0),
    );
    expect(
        &vars,
        "Float64_tunable_parameter",
        C::Parameter,
        V::Tunable,
        Some(I::Exact),
        Some(0.0),
    );
    let structure = fmi::structure(&model, &vars);
    for (output, input) in [
        ("Float64_continuous_output", "Float64_continuous_input"),
        ("Float64_discrete_output", "Float64_discrete_input"),
        ("Int32_output", "Int32_input"),
        ("Boolean_output", "Boolean_input"),
        ("Enumeration_output", "Enumeration_input"),
    ] {
        assert_eq!(deps_of(&vars, &structure.outputs, output), names(&[input]), "{output}");
    }
    let fmi2 = fmi::model_description(&model, &options(FmiVersion::Fmi2));
    assert!(fmi2.contains("<Boolean start=\"false\"/>"), "{fmi2}");
    assert!(fmi2.contains("<Integer start=\"0\"/>"), "{fmi2}");
}

/// Feedthrough's enumeration input and output carry their type: its literals valued 1 and 2
/// with their descriptions, once in `TypeDefinitions`, and each variable declared with it, the
/// input starting at the first literal's value.
#[test]
fn feedthrough_enumerations_are_exported_with_their_type() {
    let model = compile("Feedthrough.eqm");
    let vars = fmi::variables(&model);
    expect(&vars, "Enumeration_input", C::Input, V::Discrete, None, Some(1.0));
    expect(
        &vars,
        "Enumeration_output",
        C::Output,
        V::Discrete,
        Some(I::Calculated),
        None,
    );
    let input = find(&vars, "Enumeration_input");
    assert_eq!(input.ty, fmi::FmiType::Enumeration);
    let ty = input.enumeration.as_ref().expect("an enumeration type");
    assert_eq!(ty.name, "Feedthrough.Option");
    assert_eq!(
        ty.literals,
        [
            ("Option1".to_string(), Some("First option".to_string())),
            ("Option2".to_string(), Some("Second option".to_string())),
        ]
    );
    let items = "<Item name=\"Option1\" value=\"1\" description=\"First option\"/>\n\
                 <Item name=\"Option2\" value=\"2\" description=\"Second option\"/>\n";
    let fmi2 = fmi::model_description(&model, &options(FmiVersion::Fmi2));
    let simple = format!(
        "  <TypeDefinitions>\n    <SimpleType name=\"Feedthrough.Option\">\n      <Enumeration>\n{}      </Enumeration>\n    </SimpleType>\n  </TypeDefinitions>\n",
        items
            .lines()
            .map(|l| format!("        {}\n", l.trim()))
            .collect::<String>()
    );
    assert!(fmi2.contains(&simple), "{fmi2}");
    assert!(
        fmi2.contains("<Enumeration declaredType=\"Feedthrough.Option\" start=\"1\"/>"),
        "{fmi2}"
    );
    assert!(
        fmi2.contains("<Enumeration declaredType=\"Feedthrough.Option\"/>"),
        "{fmi2}"
    );
    let fmi3 = fmi::model_description(&model, &options(FmiVersion::Fmi3));
    let enumeration_type = format!(
        "  <TypeDefinitions>\n    <EnumerationType name=\"Feedthrough.Option\">\n{}    </EnumerationType>\n  </TypeDefinitions>\n",
        items
            .lines()
            .map(|l| format!("      {}\n", l.trim()))
            .collect::<String>()
    );
    assert!(fmi3.contains(&enumeration_type), "{fmi3}");
    assert_eq!(fmi3.matches("<Enumeration name=\"Enumeration_").count(), 2, "{fmi3}");
    assert!(
        fmi3.contains("declaredType=\"Feedthrough.Option\" start=\"1\"/>"),
        "{fmi3}"
    );
}

#[test]
fn stair_counter_is_a_discrete_output_with_an_exact_start() {
    let model = compile("Stair.eqm");
    let vars = fmi::variables(&model);
    expect(&vars, "counter", C::Output, V::Discrete, Some(I::Exact), Some(1.0));
    let structure = fmi::structure(&model, &vars);
    assert_eq!(deps_of(&vars, &structure.outputs, "counter"), names(&[]));
    let fmi2 = fmi::model_description(&model, &options(FmiVersion::Fmi2));
    assert!(fmi2.contains("<Integer start=\"1\"/>"), "{fmi2}");
}

#[test]
fn state_space_dependencies_follow_the_zero_pattern_of_the_matrices() {
    let model = compile("StateSpace.eqm");
    let vars = fmi::variables(&model);
    let structure = fmi::structure(&model, &vars);
    // With identity matrices, y[i] = x[i] + u[i] and der(x[i]) = x[i] + u[i]; the zero
    // entries are structural (the structural analysis dropped their terms).
    for i in 1..=3 {
        let (x, u) = (format!("x[{i}]"), format!("u[{i}]"));
        assert_eq!(deps_of(&vars, &structure.outputs, &format!("y[{i}]")), names(&[&u, &x]));
        assert_eq!(
            deps_of(&vars, &structure.derivatives, &format!("der({x})")),
            names(&[&u, &x])
        );
        expect(&vars, &u, C::Input, V::Continuous, None, Some(i as f64));
    }
    // The states start at x0, a parameter expression: they are initial unknowns that depend on
    // x0, and so are the outputs and derivatives.
    for i in 1..=3 {
        let (x, u, x0) = (format!("x[{i}]"), format!("u[{i}]"), format!("x0[{i}]"));
        expect(&vars, &x, C::Local, V::Continuous, Some(I::Calculated), None);
        assert_eq!(deps_of(&vars, &structure.initial_unknowns, &x), names(&[&x0]));
        let (a, b, c, d) = (
            format!("A[{i},{i}]"),
            format!("B[{i},{i}]"),
            format!("C[{i},{i}]"),
            format!("D[{i},{i}]"),
        );
        assert_eq!(
            deps_of(&vars, &structure.initial_unknowns, &format!("der({x})")),
            names(&[&a, &b, &u, &x0])
        );
        assert_eq!(
            deps_of(&vars, &structure.initial_unknowns, &format!("y[{i}]")),
            names(&[&c, &d, &u, &x0])
        );
    }
    expect(&vars, "C[1,1]", C::Parameter, V::Tunable, Some(I::Exact), Some(1.0));
    expect(&vars, "C[1,2]", C::Parameter, V::Fixed, Some(I::Exact), Some(0.0));
}

#[test]
fn descriptions_are_deterministic_and_the_token_is_the_content_hash() {
    let a = fmi::model_description(&compile("VanDerPol.eqm"), &options(FmiVersion::Fmi2));
    let b = fmi::model_description(&compile("VanDerPol.eqm"), &options(FmiVersion::Fmi2));
    assert_eq!(a, b);
    let token = fmi::instantiation_token(&compile("VanDerPol.eqm"), FmiVersion::Fmi2);
    assert!(a.contains(&format!("guid=\"{token}\"")));
    let other = fmi::instantiation_token(&compile("Dahlquist.eqm"), FmiVersion::Fmi2);
    assert_ne!(token, other);
}

#[test]
fn every_model_is_supported_but_a_variable_structure_one() {
    let ball = compile("BouncingBall.eqm");
    assert!(fmi::supported(&ball).is_ok());
    // A delay's history is recorded at the importer's points: both kinds.
    let delayed = super::compile(
        "model Delayed
  Real x(start = 1, fixed = true);
equation
  der(x) = -delay(x, 0.5);
end Delayed;",
    );
    assert!(fmi::supported(&delayed).is_ok());
    // A profile of `spatialDistribution` moves at the points the caller reports.
    let transported = super::compile(
        "model Transported
  Real x(start = 0, fixed = true);
  Real out0;
  Real out1;
equation
  der(x) = 1;
  (out0, out1) = spatialDistribution(1 + time, 0, x, true, {0.0, 1.0}, {1, 2});
end Transported;",
    );
    assert!(fmi::supported(&transported).is_ok());
    // A clutch whose equations change with `locked` is a variable-structure model.
    let clutch = super::compile(
        "model Clutch
  Real v1(start = 0, fixed = true);
  Real v2(start = 0);
  Real f;
  Boolean locked = time < 1;
equation
  der(v1) = 1 - f;
  der(v2) = f;
  if locked then
    v1 = v2;
  else
    f = 0;
  end if;
end Clutch;
",
    );
    assert!(clutch.variable_structure().is_some());
    assert_eq!(fmi::supported(&clutch).unwrap_err().code, "E0902");
}

#[test]
fn the_manifest_reads_back() {
    let session = session_of("Dahlquist.eqm");
    let resources = fmi::resources_of(&session, "Dahlquist", &[("k".into(), 0.1)]);
    assert_eq!(resources[0].0, fmi::MANIFEST_PATH);
    assert_eq!(resources[1].0, "resources/model/user/0_Dahlquist.eqm");
    let manifest = fmi::read_manifest(std::str::from_utf8(&resources[0].1).unwrap()).unwrap();
    assert_eq!(manifest.model, "Dahlquist");
    assert_eq!(manifest.parameters, [("k".to_string(), 0.1)]);
    assert_eq!(
        manifest.user_files,
        [(
            "examples/fmi/Dahlquist.eqm".to_string(),
            "resources/model/user/0_Dahlquist.eqm".to_string()
        )]
    );
    assert!(manifest.library_files.is_empty());
    assert_eq!(fmi::read_manifest(&manifest.to_text()).unwrap(), manifest);
    assert_eq!(fmi::read_manifest("nonsense\n").unwrap_err().line, 1);
}

/// The data files a model read when it was compiled are resources of its FMU, each named in
/// the manifest by the path the compiler asked for: the Resource model's `y.txt`, read through
/// the session's reader (which here gives a text of its own).
#[test]
fn the_data_files_a_model_read_are_in_its_resources() {
    let text = super::example("fmi/Resource.eqm");
    let mut session = Session::with_sources(&[("/models/Resource.eqm".to_string(), text)], &[], None);
    session.set_data_reader(|path: &std::path::Path| match path.to_str() {
        Some("/models/y.txt") => Ok(b"z".to_vec()),
        _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
    });
    let model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    // `z` is ASCII 122.
    let y = fmi::variables(&model).into_iter().find(|v| v.name == "y").expect("y");
    let mut model = model;
    let result = model.simulate(&eqm::RunSettings::default()).unwrap();
    assert_eq!(result.column(&y.name).unwrap()[0], 122.0);
    let resources = fmi::resources_of(&session, "Resource", &[]);
    let data = resources
        .iter()
        .find(|(path, _)| path == "resources/model/data/0_y.txt")
        .expect("the data file is a resource");
    assert_eq!(data.1, b"z");
    let manifest = fmi::read_manifest(std::str::from_utf8(&resources[0].1).unwrap()).unwrap();
    assert_eq!(
        manifest.data_files,
        [("/models/y.txt".to_string(), "resources/model/data/0_y.txt".to_string())]
    );
    assert_eq!(fmi::read_manifest(&manifest.to_text()).unwrap(), manifest);
}

/// The archive's entries, in order.
fn entries(archive: &[u8]) -> Vec<String> {
    // The central directory lists each entry after the signature PK\x01\x02, its name 46
    // bytes after the signature, its length at byte 28.
    let mut names = Vec::new();
    let mut k = 0;
    while k + 46 <= archive.len() {
        if archive[k..k + 4] == [0x50, 0x4b, 0x01, 0x02] {
            let n = u16::from_le_bytes([archive[k + 28], archive[k + 29]]) as usize;
            names.push(String::from_utf8_lossy(&archive[k + 46..k + 46 + n]).into_owned());
            k += 46 + n;
        } else {
            k += 1;
        }
    }
    names
}

/// Whether FMPy's validator can be called (`pip install fmpy`); says so when it cannot.
fn fmpy_installed() -> bool {
    let found = std::process::Command::new("python3")
        .args(["-c", "import fmpy.validation"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("skipping FMPy's validation: python3 with fmpy is not installed (pip install fmpy)");
    }
    found
}

/// FMPy's problems with the FMU `archive` (written to `path`), or an empty string.
fn fmpy_problems(path: &std::path::Path, archive: &[u8]) -> String {
    std::fs::write(path, archive).unwrap();
    let script = format!(
        "from fmpy.validation import validate_fmu; problems = validate_fmu({:?}); print('\\n'.join(problems)); exit(1 if problems else 0)",
        path.display().to_string()
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    if out.status.success() {
        return String::new();
    }
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The FMU of `model` (sources from `session`) in FMI `version` with both interfaces.
fn archive_of(session: &Session, model: &Model, version: FmiVersion, identifier: &str) -> (String, Vec<u8>) {
    let mut opts = options(version);
    opts.model_identifier = identifier.to_string();
    let description = fmi::model_description(model, &opts);
    let platform = fmi::platform_dir(version, "x86_64-linux").unwrap();
    let resources = fmi::resources_of(session, model.name(), &[]);
    let archive = fmi::fmu_archive(&description, b"not a runtime", identifier, &[platform], &resources).unwrap();
    (description, archive)
}

/// Every Reference FMU model exported as FMI 2 and FMI 3 with both interfaces: the archive's
/// layout, and FMPy's validation of each description when FMPy is installed.
#[test]
fn every_reference_model_exports_a_valid_fmu() {
    let fmpy = fmpy_installed();
    let dir = std::env::temp_dir().join(format!("eqm-fmi-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for file in [
        "BouncingBall",
        "Dahlquist",
        "Feedthrough",
        "Stair",
        "StateSpace",
        "VanDerPol",
    ] {
        let session = session_of(&format!("{file}.eqm"));
        let model = compile(&format!("{file}.eqm"));
        for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
            let (description, archive) = archive_of(&session, &model, version, file);
            let binary = match version {
                FmiVersion::Fmi2 => format!("binaries/linux64/{file}.so"),
                FmiVersion::Fmi3 => format!("binaries/x86_64-linux/{file}.so"),
            };
            assert_eq!(
                entries(&archive),
                [
                    "modelDescription.xml".to_string(),
                    binary,
                    fmi::MANIFEST_PATH.to_string(),
                    format!("resources/model/user/0_{file}.eqm"),
                ]
            );
            if fmpy {
                let problems = fmpy_problems(&dir.join(format!("{file}-{version:?}.fmu")), &archive);
                assert!(problems.is_empty(), "{file} {version:?}: {problems}\n{description}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every example of `examples/` that can be exported (not a variable-structure model) gives
/// FMI 2 and FMI 3 descriptions FMPy finds no problem with.
#[test]
fn every_example_exports_a_valid_description() {
    if !fmpy_installed() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("eqm-fmi-examples-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(format!("{}/examples", super::REPO))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".eqm"))
        .collect();
    files.sort();
    let mut exported = 0;
    for file in &files {
        let text = super::example(file);
        let mut session = Session::with_sources(&[(file.clone(), text)], &[], None);
        let model = session
            .compile(None, &ModelOptions::default())
            .unwrap_or_else(|| panic!("{file}: {}", session.render_diagnostics(false)));
        if fmi::supported(&model).is_err() {
            continue;
        }
        exported += 1;
        for version in [FmiVersion::Fmi2, FmiVersion::Fmi3] {
            let (_, archive) = archive_of(&session, &model, version, "M");
            let problems = fmpy_problems(&dir.join(format!("{file}-{version:?}.fmu")), &archive);
            assert!(problems.is_empty(), "{file} {version:?}: {problems}");
        }
    }
    assert!(exported >= 30, "only {exported} examples exported");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The index-reduced pendulum keeps `der(x)` as a variable of its own: the solver's derivative
/// of `x` is exposed apart, as `$der(x)`, and every name is unique.
#[test]
fn an_index_reduced_model_has_unique_names() {
    let model = super::compile(&super::example("pendulum.eqm"));
    let vars = fmi::variables(&model);
    let mut names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "a name is given twice");
    let x = find(&vars, "x").value_reference;
    assert_eq!(find(&vars, "$der(x)").derivative_of, Some(x));
    assert_eq!(find(&vars, "der(x)").derivative_of, None);
}

/// A model imported from a system-dynamics file names the file's variables in the FMU as the
/// file does, as `eqm run` names its columns: the stock `Teacup Temperature` (a state) and its
/// derivative, the flow `Heat Loss`, the converter `Room Temperature` (the parts of the
/// library's classes they are built from keep their `.eqm` names); every name once.
#[test]
fn a_system_dynamics_file_is_exported_under_its_own_names() {
    let text = "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
         <sim_specs method=\"Euler\"><start>0</start><stop>30</stop><dt>0.125</dt></sim_specs>\n\
         <model><variables>\n\
         <stock name=\"Teacup Temperature\"><eqn>180</eqn><outflow>Heat_Loss</outflow></stock>\n\
         <flow name=\"Heat Loss\"><eqn>(Teacup_Temperature - Room_Temperature)/10</eqn></flow>\n\
         <aux name=\"Room Temperature\"><eqn>70</eqn></aux>\n\
         </variables></model>\n</xmile>\n";
    let mut session = Session::with_source_bytes(vec![("teacup.xmile".into(), text.as_bytes().to_vec())], &[], None);
    let model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let vars = fmi::variables(&model);
    let stock = find(&vars, "Teacup Temperature");
    assert!(stock.is_state);
    assert_eq!(
        find(&vars, "der(Teacup Temperature)").derivative_of,
        Some(stock.value_reference)
    );
    find(&vars, "Heat Loss");
    find(&vars, "Room Temperature");
    for quoted in ["'Teacup Temperature'", "'Heat Loss'", "'Room Temperature'"] {
        assert!(vars.iter().all(|v| v.name != quoted), "{quoted} is left");
    }
    let mut names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count, "a name is given twice");
}
