//! Parameter sweeps: every combination against single runs with the same values, a structural
//! parameter that compiles again, the parsing of the axes, the one CSV table, and the pictures
//! of stability regions.

use eqm::stability::{self, C64};
use eqm::sweep::{self, SweepAxis, combinations};
use eqm::{Method, ModelOptions, RunSettings, Session};

fn session(text: &str) -> Session {
    Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None)
}

const OSCILLATOR: &str = "model Oscillator
  parameter Real c = 4;
  parameter Real m = 1;
  parameter Real d = 0.1;
  Real x(start = 1, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(x) = v;
  m*der(v) = -c*x - d*v;
end Oscillator;";

fn settings() -> RunSettings {
    RunSettings {
        stop: Some(2.0),
        interval: Some(0.25),
        ..RunSettings::default()
    }
}

#[test]
fn axes_parse_ranges_and_lists() {
    let a = SweepAxis::parse("c=1:0.5:3").unwrap();
    assert_eq!((a.name.as_str(), a.values), ("c", vec![1.0, 1.5, 2.0, 2.5, 3.0]));
    // 0.3/0.1 is 2.9999999999999996 in floating point; the end is still included, exactly.
    assert_eq!(
        SweepAxis::parse("k=0:0.1:0.3").unwrap().values,
        vec![0.0, 0.1, 0.2, 0.3]
    );
    assert_eq!(SweepAxis::parse("k=3:-1:1").unwrap().values, vec![3.0, 2.0, 1.0]);
    // The end is not on the grid: the last value below it.
    assert_eq!(SweepAxis::parse("k=0:2:5").unwrap().values, vec![0.0, 2.0, 4.0]);
    assert_eq!(SweepAxis::parse("m=1,2,true").unwrap().values, vec![1.0, 2.0, 1.0]);
    for bad in [
        "c",
        "=1,2",
        "c=1:0:3",
        "c=1:-1:3",
        "c=1:2",
        "c=a,b",
        "c=1,,2",
        "c=inf",
        "c=0:1e-9:1",
    ] {
        assert!(SweepAxis::parse(bad).is_err(), "{bad}");
    }
    let axes = [
        SweepAxis::parse("a=1,2").unwrap(),
        SweepAxis::parse("b=10,20,30").unwrap(),
    ];
    let all = combinations(&axes);
    assert_eq!(all.len(), 6);
    assert_eq!(all[0], vec![1.0, 10.0]);
    assert_eq!(all[1], vec![1.0, 20.0], "the last axis changes fastest");
    assert_eq!(all[5], vec![2.0, 30.0]);
}

#[test]
fn a_sweep_gives_what_single_runs_give() {
    let axes = [SweepAxis::parse("c=1:1:3").unwrap(), SweepAxis::parse("m=1,2").unwrap()];
    let mut s = session(OSCILLATOR);
    let swept = sweep::sweep(&mut s, None, &ModelOptions::default(), &axes, &settings(), Some(2))
        .unwrap_or_else(|_| panic!("{}", s.render_diagnostics(false)));
    assert_eq!(swept.runs.len(), 6);
    assert_eq!(swept.compilations, 1);
    assert!(swept.notes.is_empty());
    for run in &swept.runs {
        let options = ModelOptions {
            parameters: vec![("c".to_string(), run.values[0]), ("m".to_string(), run.values[1])],
            ..ModelOptions::default()
        };
        let mut single = s.compile(None, &options).expect("compiles");
        let result = single.simulate(&settings()).expect("runs");
        assert!(run.outcome.is_ok());
        assert_eq!(run.time, result.time(), "{:?}", run.values);
        for name in ["x", "v"] {
            assert_eq!(
                run.column(name).unwrap(),
                result.column(name).unwrap(),
                "{name} at {:?}",
                run.values
            );
        }
    }
    // The one table: a column per parameter in front of time, every run's rows in order.
    let mut csv = Vec::new();
    swept.write_csv(&mut csv).unwrap();
    let text = String::from_utf8(csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("c,m,time,v,x"));
    assert_eq!(lines.next(), Some("1,1,0,0,1"));
    assert_eq!(text.lines().count(), 1 + 6 * 9);
    assert!(text.lines().last().unwrap().starts_with("3,2,2,"));
}

#[test]
fn a_structural_parameter_compiles_again_and_says_so() {
    let text = "model Chain
      parameter Integer n = 2;
      parameter Real k = 1;
      Real x[n](each start = 1, each fixed = true);
    equation
      for i in 1:n loop
        der(x[i]) = -i*k*x[i];
      end for;
    end Chain;";
    let axes = [SweepAxis::parse("n=1,3").unwrap(), SweepAxis::parse("k=1,2").unwrap()];
    let mut s = session(text);
    let swept = sweep::sweep(&mut s, None, &ModelOptions::default(), &axes, &settings(), Some(2))
        .unwrap_or_else(|_| panic!("{}", s.render_diagnostics(false)));
    // Compiled with n = 2 first (to tell the structural parameters), then for n = 1 and 3.
    assert_eq!(swept.compilations, 3);
    assert!(
        swept.notes[0].contains("`n` shapes") && swept.notes[0].contains("compiled for each of its 2 values"),
        "{:?}",
        swept.notes
    );
    assert_eq!(swept.runs.len(), 4);
    let run = &swept.runs[3];
    assert_eq!(run.values, vec![3.0, 2.0]);
    let x3 = run.final_value("x[3]").unwrap();
    assert!((x3 - (-12.0f64).exp()).abs() < 1e-6, "{x3}");
    assert!(swept.runs[0].column("x[3]").is_none(), "n = 1 has one state");
    // The table has the union of the columns; the smaller model leaves its cells empty.
    let mut csv = Vec::new();
    swept.write_csv(&mut csv).unwrap();
    let text = String::from_utf8(csv).unwrap();
    assert_eq!(text.lines().next(), Some("n,k,time,x[1],x[2],x[3]"));
    assert!(text.lines().nth(1).unwrap().ends_with(",,"), "{text}");
    // The model compiled first serves the value it was compiled with.
    let axes = [SweepAxis::parse("n=2,3").unwrap()];
    let swept = sweep::sweep(&mut s, None, &ModelOptions::default(), &axes, &settings(), Some(2)).expect("runs");
    assert_eq!(swept.compilations, 2);
}

#[test]
fn a_name_that_is_no_parameter_is_the_models_error() {
    let mut s = session(OSCILLATOR);
    let axes = [SweepAxis::parse("q=1,2").unwrap()];
    assert!(sweep::sweep(&mut s, None, &ModelOptions::default(), &axes, &settings(), Some(2)).is_err());
    assert!(s.has_errors());
}

#[test]
fn the_stability_picture_marks_each_eigenvalue() {
    let eigenvalues = [
        C64::new(-1.0, 0.0),
        C64::new(-2.0, 30.0),
        C64::new(-2.0, -30.0),
        C64::new(0.5, 0.0),
    ];
    let svg = stability::svg(&Method::Rk4, &eigenvalues, 0.05).expect("rk4 has a region");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<circle").count(), 4);
    // h·λ = −0.1 − 1.5i lies inside rk4's region, −0.05 too; the growing mode is grey.
    assert_eq!(svg.matches("fill=\"#1f5fa8\"").count(), 3);
    assert_eq!(svg.matches("fill=\"#777777\"").count(), 1);
    assert!(svg.contains("class=\"region\"") && svg.contains("<rect"));
    // At a larger step the pair leaves the region: drawn hollow.
    let svg = stability::svg(&Method::Rk4, &eigenvalues, 0.2).expect("drawn");
    assert_eq!(svg.matches("fill=\"none\" stroke=\"#c62828\"").count(), 2);
    assert!(stability::svg(&Method::Auto, &eigenvalues, 0.1).is_none());
    // The same bytes every time.
    assert_eq!(svg, stability::svg(&Method::Rk4, &eigenvalues, 0.2).unwrap());
}

/// The warning before a fixed-step run judges every eigenvalue against the method's region:
/// ab2 on a lightly damped oscillator (λ ≈ −0.1 ± 10i) is unstable at h = 0.05 although
/// h·|λ| = 0.5 lies inside its real interval (−1, 0]; euler on an undamped oscillator over a
/// short run drifts too little to warn.
#[test]
fn a_fixed_step_outside_the_region_for_complex_eigenvalues_is_a_warning() {
    let warnings = |method: Method, step: f64, stop: f64| {
        let mut model = crate::compile(OSCILLATOR);
        model.set_parameter("c", 100.0).unwrap();
        model.set_parameter("d", 0.2).unwrap();
        let settings = RunSettings {
            stop: Some(stop),
            step: Some(step),
            method: Some(method),
            ..RunSettings::default()
        };
        model.simulate(&settings).expect("runs").summary.warnings
    };
    let w = warnings(Method::Ab2, 0.05, 10.0);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].code, "W0702");
    assert!(w[0].message.contains("± 9.9995i"), "{}", w[0].message);
    assert!(
        warnings(Method::Rk4, 0.05, 10.0).is_empty(),
        "rk4 covers h·λ ≈ −0.005 ± 0.5i"
    );
    let mut undamped = crate::compile(OSCILLATOR);
    undamped.set_parameter("d", 0.0).unwrap();
    let settings = RunSettings {
        stop: Some(1.0),
        step: Some(0.01),
        method: Some(Method::Euler),
        ..RunSettings::default()
    };
    assert!(undamped.simulate(&settings).unwrap().summary.warnings.is_empty());
}

#[test]
fn the_advice_reads_as_a_table() {
    let eigenvalues = [C64::new(-0.1, 0.0), C64::new(-1000.0, 0.0)];
    let advice = stability::advise(&eigenvalues, &stability::judged_methods(None)).expect("advice");
    let text = stability::advice_text(&advice);
    assert!(
        text.contains("T_min = 0.001, T_max = 10, T_max/T_min = 10000 (stiff)"),
        "{text}"
    );
    assert!(text.contains("step min(T_min/10, t_sim/200) = 0.0001"), "{text}");
    let euler = text.lines().find(|l| l.starts_with("euler ")).expect("a row for euler");
    assert!(euler.contains("yes") && euler.ends_with("0.002"), "{euler}");
    assert!(
        text.lines().any(|l| l.starts_with("radau5") && l.ends_with("any")),
        "{text}"
    );
    assert!(text.contains("recommended: --solver bdf: stiff"), "{text}");
    let json = stability::advice_json(&advice);
    assert!(json.starts_with("{\"t_min\": 0.001, \"t_max\": 10,"), "{json}");
    assert!(
        json.contains("{\"method\": \"radau5\", \"stable\": true, \"largest_step\": null, \"implicit\": true}"),
        "{json}"
    );
    assert!(
        json.contains("\"recommended\": {\"method\": \"bdf\", \"step\": null,"),
        "{json}"
    );
}

#[test]
fn the_api_refuses_a_sweep_that_names_a_parameter_twice_or_also_fixes_it() {
    let mut s = session(OSCILLATOR);
    let twice = [SweepAxis::parse("c=1,2").unwrap(), SweepAxis::parse("c=3,4").unwrap()];
    let refused = sweep::sweep(&mut s, None, &ModelOptions::default(), &twice, &settings(), None);
    assert_eq!(
        refused.err(),
        Some(sweep::SweepError::Axes("--sweep names `c` twice".to_string()))
    );
    let fixed = ModelOptions {
        parameters: vec![("c".to_string(), 2.0)],
        ..ModelOptions::default()
    };
    let axes = [SweepAxis::parse("c=1,2").unwrap()];
    assert!(matches!(
        sweep::sweep(&mut s, None, &fixed, &axes, &settings(), None),
        Err(sweep::SweepError::Axes(_))
    ));
    let many = [
        SweepAxis::parse("c=1:1:1000").unwrap(),
        SweepAxis::parse("m=1:1:1000").unwrap(),
    ];
    assert!(matches!(
        sweep::sweep(&mut s, None, &ModelOptions::default(), &many, &settings(), None),
        Err(sweep::SweepError::Axes(_))
    ));
    // Nothing ran, so nothing was reported about the model.
    assert!(!s.has_errors());
}

#[test]
fn a_sweep_without_a_stop_time_stops_where_a_single_run_would() {
    let mut s = session(OSCILLATOR);
    let axes = [SweepAxis::parse("d=0.1,0.2").unwrap()];
    let settings = RunSettings::default();
    let swept = sweep::sweep(&mut s, None, &ModelOptions::default(), &axes, &settings, None).expect("runs");
    assert!(swept.threads >= 1);
    assert!(swept.notes[0].starts_with("no stop time given"), "{:?}", swept.notes);
    let mut model = s.compile(None, &ModelOptions::default()).unwrap();
    let single = model.simulate(&settings).unwrap();
    assert_eq!(swept.runs[0].time.last(), single.time().last());
}
