//! The XMILE reader's diagnostics, each expected next to the XML line it is about: a line
//! holding `<!-- expect: CODE -->` must get a diagnostic with that code whose primary span
//! starts on that line, and no other line may get one.

use eqm_diag::source::SourceMap;
use eqm_sd::{Format, import};

/// A model file around `variables` (the `<variables>` content) with Euler's method.
fn model(variables: &str) -> String {
    format!(
        "<xmile xmlns=\"http://docs.oasis-open.org/xmile/ns/XMILE/v1.0\" version=\"1.0\">\n\
         <sim_specs method=\"Euler\"><start>0</start><stop>10</stop><dt>1</dt></sim_specs>\n\
         <model><variables>\n{variables}\n</variables></model>\n</xmile>\n"
    )
}

/// Checks the diagnostics of importing `text` against its `expect` comments.
fn check(text: &str) {
    let mut map = SourceMap::new();
    let file = map.add("m.xmile", text);
    let imported = import(file, "m.xmile", text, Format::Xmile);
    let mut expected: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let code = line.split("<!-- expect: ").nth(1)?.split(' ').next()?;
            Some((n + 1, code.to_string()))
        })
        .collect();
    let mut found: Vec<(usize, String)> = imported
        .diagnostics
        .iter()
        .map(|d| {
            let span = d.primary_span().expect("an import diagnostic has a place");
            let line = text[..span.start as usize].lines().count().max(1);
            let line = if text[..span.start as usize].ends_with('\n') {
                line + 1
            } else {
                line
            };
            (line, d.code.to_string())
        })
        .collect();
    expected.sort();
    found.sort();
    assert_eq!(found, expected, "diagnostics (line, code) of:\n{text}");
    assert_eq!(
        imported.text.is_none(),
        !expected.is_empty(),
        "an error stops the import"
    );
}

#[test]
fn a_file_that_is_not_xml_is_e1001_where_it_breaks() {
    check("<xmile>\n<model>\n</xmile> <!-- expect: E1001 -->\n");
}

#[test]
fn a_file_that_is_no_xmile_is_e1001_at_its_root() {
    check("<svg> <!-- expect: E1001 -->\n</svg>\n");
}

#[test]
fn an_unknown_name_is_e1004_at_its_equation() {
    check(&model(
        "<aux name=\"a\"><eqn>1</eqn></aux>\n<aux name=\"b\"><eqn>a + c</eqn></aux> <!-- expect: E1004 -->",
    ));
}

#[test]
fn an_unknown_function_is_e1005_and_a_wrong_arity_too() {
    check(&model(
        "<aux name=\"a\"><eqn>FROB(1)</eqn></aux> <!-- expect: E1005 -->\n\
         <aux name=\"b\"><eqn>SQRT(1, 2)</eqn></aux> <!-- expect: E1005 -->",
    ));
}

#[test]
fn a_syntax_error_is_e1003_at_its_place() {
    check(&model("<aux name=\"a\"><eqn>1 +* 2</eqn></aux> <!-- expect: E1003 -->"));
}

#[test]
fn a_variable_defined_twice_is_e1007_at_the_second() {
    check(&model(
        "<aux name=\"a b\"><eqn>1</eqn></aux>\n<aux name=\"A_B\"><eqn>2</eqn></aux> <!-- expect: E1007 -->",
    ));
}

#[test]
fn unsupported_elements_are_e1002_at_their_element() {
    check(&model(
        "<module name=\"m\" resource=\"other.xmile\"/> <!-- expect: E1002 -->\n\
         <stock name=\"s\"><eqn>0</eqn><oven/></stock> <!-- expect: E1002 -->",
    ));
}

#[test]
fn a_graphical_function_with_unequal_lists_is_e1003() {
    check(&model(
        "<aux name=\"g\"><eqn>TIME</eqn><gf> <!-- expect: E1003 -->\n\
         <xpts>0,1,2</xpts><ypts>0,1</ypts></gf></aux>",
    ));
}

#[test]
fn a_model_without_errors_has_no_diagnostics() {
    check(&model(
        "<stock name=\"Teacup Temperature\"><eqn>180</eqn><outflow>Heat_Loss</outflow></stock>\n\
         <flow name=\"Heat Loss\"><eqn>(Teacup_Temperature - 70)/10</eqn></flow>",
    ));
}

#[test]
fn a_pause_interval_is_w1001_and_does_not_stop_the_import() {
    let text = model("<aux name=\"a\"><eqn>1</eqn></aux>").replace(
        "<sim_specs method=\"Euler\">",
        "<sim_specs method=\"Euler\" pause=\"5\">",
    );
    let text = text.replacen("</sim_specs>\n", "</sim_specs> <!-- expect: W1001 -->\n", 1);
    let mut map = SourceMap::new();
    let file = map.add("m.xmile", text.as_str());
    let imported = import(file, "m.xmile", &text, Format::Xmile);
    let codes: Vec<&str> = imported.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["W1001"]);
    assert!(imported.text.is_some(), "a warning does not stop the import");
}

#[test]
fn an_equation_nested_too_deeply_is_e1003_not_a_stack_overflow() {
    let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let minus = format!("{}1", "-".repeat(100_000));
    check(&model(&format!(
        "<aux name=\"a\"><eqn>{deep}</eqn></aux> <!-- expect: E1003 -->\n<aux name=\"b\"><eqn>{minus}</eqn></aux> <!-- expect: E1003 -->"
    )));
}

#[test]
fn a_dimension_too_large_to_write_is_refused() {
    let text = model("<aux name=\"a\"><dimensions><dim name=\"big\"/></dimensions><eqn>1</eqn></aux>").replace(
        "<model>",
        "<dimensions><dim name=\"big\" size=\"1000000000\"/> <!-- expect: E1003 -->\n</dimensions><model>",
    );
    check(&text);
}

#[test]
fn an_equation_nested_less_deeply_is_read_and_written() {
    let nested = format!("{}TIME{}", "(1 + ".repeat(90), ")".repeat(90));
    check(&model(&format!("<aux name=\"a\"><eqn>{nested}</eqn></aux>")));
}

#[test]
fn a_macro_that_reads_the_time_is_e1002_at_its_call_of_time() {
    let text = model("<aux name=\"a\"><eqn>LATER(1)</eqn></aux>").replace(
        "<model>",
        "<macro name=\"LATER\"><parm>x</parm><eqn>x + TIME</eqn></macro> <!-- expect: E1002 -->\n<model>",
    );
    check(&text);
}

#[test]
fn a_macro_with_its_own_simulation_specs_is_e1002() {
    let text = model("<aux name=\"a\"><eqn>KEEP(1)</eqn></aux>").replace(
        "<model>",
        "<macro name=\"KEEP\"><parm>x</parm><sim_specs/><eqn>x</eqn></macro> <!-- expect: E1002 -->\n<model>",
    );
    check(&text);
}

#[test]
fn a_module_of_no_model_of_the_file_is_e1004_at_the_module() {
    check(&model("<module name=\"elsewhere\"/> <!-- expect: E1004 -->"));
}
