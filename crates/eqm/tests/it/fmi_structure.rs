//! The kinds of the FMI dependencies (`dependenciesKind`) and the initial unknowns of models with
//! an initialization problem of their own, checked against what the equations say by hand
//! (`y = c·u` is `constant` in `u` when `c` is a literal, `fixed`, `tunable` or `discrete` when
//! `c` is a fixed parameter, a tunable one or a value set at events, `dependent` when `c` reads
//! a continuous value), and the descriptions checked by FMPy's validator when it is installed.

use eqm::fmi::{self, Capabilities, DependencyKind as K, DescriptionOptions, FmiVariable, FmiVersion, Kinds};
use eqm::{ModelOptions, Session};

/// The dependencies of unknown `name` among `list`, as (variable name, kind) sorted by name.
fn kinds_of(vars: &[FmiVariable], list: &[(u32, fmi::Dependencies)], name: &str) -> Option<Vec<(String, K)>> {
    let vr = vars
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no FMI variable `{name}`"))
        .value_reference;
    let (_, deps) = list
        .iter()
        .find(|(r, _)| *r == vr)
        .unwrap_or_else(|| panic!("`{name}` is not listed"));
    deps.as_ref().map(|d| {
        let mut named: Vec<(String, K)> = d.iter().map(|&(r, k)| (vars[r as usize].name.clone(), k)).collect();
        named.sort();
        named
    })
}

fn expect(list: &[(&str, K)]) -> Option<Vec<(String, K)>> {
    Some(list.iter().map(|(n, k)| (n.to_string(), *k)).collect())
}

fn session_of(text: &str) -> Session {
    Session::with_sources(&[("M.eqm".to_string(), text.to_string())], &[], None)
}

/// The FMI 2 and FMI 3 descriptions of the model in `text`, each checked by FMPy's validator
/// when it is installed.
fn validated_descriptions(text: &str) -> [String; 2] {
    let mut session = session_of(text);
    let model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let dir = std::env::temp_dir().join(format!("eqm-fmi-structure-{}-{}", std::process::id(), model.name()));
    std::fs::create_dir_all(&dir).unwrap();
    let fmpy = std::process::Command::new("python3")
        .args(["-c", "import fmpy.validation"])
        .status()
        .is_ok_and(|s| s.success());
    if !fmpy {
        eprintln!("skipping FMPy's validation: python3 with fmpy is not installed (pip install fmpy)");
    }
    [FmiVersion::Fmi2, FmiVersion::Fmi3].map(|version| {
        let options = DescriptionOptions {
            version,
            kinds: Kinds { me: true, cs: true },
            model_identifier: "M".into(),
            capabilities: Capabilities::default(),
            generation_tool: "EQM".into(),
            generation_date: None,
        };
        let description = fmi::model_description(&model, &options);
        if fmpy {
            let platform = fmi::platform_dir(version, "x86_64-linux").unwrap();
            let resources = fmi::resources_of(&session, model.name(), &[]);
            let archive = fmi::fmu_archive(&description, b"not a runtime", "M", &[platform], &resources).unwrap();
            let path = dir.join(format!("M-{version:?}.fmu"));
            std::fs::write(&path, archive).unwrap();
            let script = format!(
                "from fmpy.validation import validate_fmu; problems = validate_fmu({:?}); print('\\n'.join(problems)); exit(1 if problems else 0)",
                path.display().to_string()
            );
            let out = std::process::Command::new("python3").args(["-c", &script]).output().unwrap();
            assert!(
                out.status.success(),
                "{version:?}: {}{}\n{description}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        description
    })
}

const KINDS: &str = "model Kinds
  parameter Real c = 2 annotation(Evaluate = true);
  parameter Real p = 3;
  input Real u(start = 1);
  input Real w(start = 2);
  input Integer n(start = 1);
  discrete Real d(start = 1, fixed = true);
  output Real y_constant, y_fixed, y_tunable, y_discrete, y_dependent, y_sum, y_quotient, y_branch;
  output Integer m;
  Real x(start = 0, fixed = true);
equation
  y_constant = -4*u + 2*w;
  y_fixed = c*u;
  y_tunable = p*(u + w)/c;
  y_discrete = d*p*u;
  y_dependent = u*w + x;
  y_sum = 3*u - u + sin(w);
  y_quotient = u/w;
  y_branch = if d > 0 then p*u else 2*u;
  m = n + 1;
  der(x) = -p*x + 5*u + time*w;
  when sample(0, 1) then
    d = pre(d) + 1;
  end when;
end Kinds;";

/// Each output's dependencies on the inputs and the state, with the kind of each: a literal
/// factor is `constant`, a fixed parameter's `fixed`, a tunable one's `tunable`, a factor read
/// at events `discrete`, anything else `dependent`; an Integer pair is `dependent` (FMI gives
/// kinds to Reals only). The descriptions carry the kinds, one per dependency.
#[test]
fn dependency_kinds_follow_how_each_known_enters() {
    let mut session = session_of(KINDS);
    let model = session.compile(None, &ModelOptions::default()).unwrap();
    let vars = fmi::variables(&model);
    let s = fmi::structure(&model, &vars);
    let o = &s.outputs;
    assert_eq!(
        kinds_of(&vars, o, "y_constant"),
        expect(&[("u", K::Constant), ("w", K::Constant)])
    );
    assert_eq!(kinds_of(&vars, o, "y_fixed"), expect(&[("u", K::Fixed)]));
    assert_eq!(
        kinds_of(&vars, o, "y_tunable"),
        expect(&[("u", K::Tunable), ("w", K::Tunable)])
    );
    assert_eq!(kinds_of(&vars, o, "y_discrete"), expect(&[("u", K::Discrete)]));
    assert_eq!(
        kinds_of(&vars, o, "y_dependent"),
        expect(&[("u", K::Dependent), ("w", K::Dependent), ("x", K::Constant)])
    );
    // 3u - u is 2u; sin(w) is no multiple of w.
    assert_eq!(
        kinds_of(&vars, o, "y_sum"),
        expect(&[("u", K::Constant), ("w", K::Dependent)])
    );
    // u/w: the numerator's factor 1/w is continuous, the denominator enters as no factor.
    assert_eq!(
        kinds_of(&vars, o, "y_quotient"),
        expect(&[("u", K::Dependent), ("w", K::Dependent)])
    );
    // The condition d > 0 is a relation of a discrete value: the factor is p or 2, set at events.
    assert_eq!(kinds_of(&vars, o, "y_branch"), expect(&[("u", K::Discrete)]));
    assert_eq!(kinds_of(&vars, o, "m"), expect(&[("n", K::Dependent)]));
    // der(x) = -p x + 5u + time w: x by a tunable factor, u by a literal, w by a continuous one.
    assert_eq!(
        kinds_of(&vars, &s.derivatives, "der(x)"),
        expect(&[("u", K::Constant), ("w", K::Dependent), ("x", K::Tunable)])
    );
    let [fmi2, fmi3] = validated_descriptions(KINDS);
    let index = |name: &str| vars.iter().find(|v| v.name == name).unwrap().value_reference;
    let line2 = format!(
        "<Unknown index=\"{}\" dependencies=\"{} {}\" dependenciesKind=\"constant constant\"/>",
        index("y_constant") + 1,
        index("u") + 1,
        index("w") + 1
    );
    assert!(fmi2.contains(&line2), "{line2}\n{fmi2}");
    let line3 = format!(
        "<ContinuousStateDerivative valueReference=\"{}\" dependencies=\"{} {} {}\" dependenciesKind=\"constant dependent tunable\"/>",
        index("der(x)"),
        index("u"),
        index("w"),
        index("x")
    );
    assert!(fmi3.contains(&line3), "{line3}\n{fmi3}");
}

const OWN_INIT: &str = "model OwnInit
  parameter Real a = 2;
  input Real u(start = 1);
  Real x(start = 1);
  Real y(start = 0.5, fixed = true);
  output Real z;
initial equation
  der(x) = 0;
equation
  der(x) = -a*x + u;
  der(y) = x;
  z = 3*y + 2*x;
end OwnInit;";

/// A model with an initialization problem of its own (`der(x) = 0` at the start, so `x = u/a`):
/// its initial unknowns depend on the knowns of that problem, the input, the parameter and the
/// state with a fixed start, with the kinds FMI allows there (`constant` or `dependent`).
#[test]
fn initial_unknowns_of_an_own_initialization_come_from_its_structure() {
    let mut session = session_of(OWN_INIT);
    let model = session.compile(None, &ModelOptions::default()).unwrap();
    assert!(
        model.init_program().is_some(),
        "the model has an initialization of its own"
    );
    let vars = fmi::variables(&model);
    let s = fmi::structure(&model, &vars);
    let i = &s.initial_unknowns;
    // x = u/a.
    assert_eq!(
        kinds_of(&vars, i, "x"),
        expect(&[("a", K::Dependent), ("u", K::Dependent)])
    );
    // der(y) = x = u/a; der(x) = 0 whatever the knowns.
    assert_eq!(
        kinds_of(&vars, i, "der(y)"),
        expect(&[("a", K::Dependent), ("u", K::Dependent)])
    );
    assert_eq!(kinds_of(&vars, i, "der(x)"), expect(&[]));
    // z = 3y + 2u/a: y by a literal factor.
    assert_eq!(
        kinds_of(&vars, i, "z"),
        expect(&[("a", K::Dependent), ("u", K::Dependent), ("y", K::Constant)])
    );
    // At an instant the state x is a known again.
    assert_eq!(
        kinds_of(&vars, &s.outputs, "z"),
        expect(&[("x", K::Constant), ("y", K::Constant)])
    );
    let [fmi2, _] = validated_descriptions(OWN_INIT);
    assert!(fmi2.contains("<InitialUnknowns>"), "{fmi2}");
}
