//! The Vensim reader: representation of small models, one diagnostic per error code at its
//! line and column, every `.mdl` file of the system-dynamics test suite, truncated input and
//! the reader's speed on a large generated file.

use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, SourceMap};
use eqm_sd::ir::*;
use eqm_sd::vensim::read;
use std::path::{Path, PathBuf};

const FILE: FileId = FileId(0);

/// Reads a text that must read without any diagnostic.
fn clean(text: &str) -> SdFile {
    let (file, diagnostics) = read(FILE, text);
    assert!(diagnostics.is_empty(), "unexpected diagnostics: {diagnostics:#?}");
    file.expect("a file without diagnostics gives a model")
}

fn variable<'f>(file: &'f SdFile, name: &str) -> &'f Variable {
    file.models[0]
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable `{name}`"))
}

/// The control section most tests share (written with the layout Vensim writes).
const CONTROL: &str = "\
FINAL TIME = 30 ~ Minute ~ The final time. |
INITIAL TIME = 0 ~ Minute ~ The initial time. |
SAVEPER = TIME STEP ~ Minute [0,?] ~ The save period. |
TIME STEP = 0.125 ~ Minute [0,?] ~ The time step. |
";

/// `(code, line, column, message)` of each diagnostic, with 1-based line and column.
fn located(text: &str) -> Vec<(&'static str, usize, usize, String)> {
    let mut sources = SourceMap::new();
    let id = sources.add("model.mdl", text);
    let (_, diagnostics) = read(id, text);
    diagnostics
        .iter()
        .map(|d: &Diagnostic| {
            let span = d.primary_span().expect("every diagnostic has a span");
            let (line, col) = sources.get(id).line_col(span.start);
            (d.code, line, col, d.message.clone())
        })
        .collect()
}

fn num(expr: &Expr) -> f64 {
    match expr.kind {
        ExprKind::Number(v) => v,
        ref other => panic!("not a number: {other:?}"),
    }
}

#[test]
fn teacup_reads_into_stock_auxiliaries_and_specs() {
    let text = format!(
        "{{UTF-8}}\nCharacteristic Time = 10 ~ Minutes [0.0, inf] ~ How long to cool. |\n\
Heat Loss to Room = (Teacup Temperature - Room Temperature) / Characteristic Time ~ Degrees/Minute ~ The flow. |\n\
Room Temperature = 70 ~ Degrees ~ |\n\
Teacup Temperature = INTEG (-Heat Loss to Room, 180) ~ Degrees [32, 212] ~ The stock. |\n{CONTROL}\
\\\\\\---/// Sketch information - do not modify anything except names\nV300  Do not put anything below this section - it will be ignored\n*View 1\n\
10,1,Teacup Temperature,307,224,40,20,3,3,0,0,0,0,0,0\n10,2,Room Temperature,500,300,49,11,8,3,0,0,0,0,0,0\n///---\\\\\\\n:L<%^E!@\n15:0,0,0,0,0,0\n"
    );
    let file = clean(&text);
    assert_eq!(file.dialect, Dialect::Vensim);
    assert_eq!(
        file.specs,
        SimSpecs {
            start: 0.0,
            stop: 30.0,
            dt: 0.125,
            save_step: Some(0.125),
            method: Method::Euler,
            time_units: Some("Minute".to_string()),
        }
    );
    let stock = variable(&file, "Teacup Temperature");
    assert!(
        matches!(stock.kind, Kind::Stock { ref inflows, ref outflows, non_negative: false, special: None } if inflows.is_empty() && outflows.is_empty())
    );
    let Definition::Uniform(Equation::Stock {
        rate: Some(rate),
        initial,
    }) = &stock.definition
    else {
        panic!("not a stock: {:?}", stock.definition);
    };
    assert_eq!(num(initial), 180.0);
    let ExprKind::Unary {
        op: UnaryOp::Minus,
        operand,
    } = &rate.kind
    else {
        panic!("{rate:?}")
    };
    assert!(
        matches!(&operand.kind, ExprKind::Variable { name, subscripts } if name == "heat loss to room" && subscripts.is_empty())
    );
    assert_eq!(stock.units.as_deref(), Some("Degrees"));
    assert_eq!(stock.range, Some((32.0, 212.0)));
    assert_eq!(stock.doc.as_deref(), Some("The stock."));
    assert_eq!(stock.position, Some(Position { x: 307.0, y: 224.0 }));
    assert_eq!(
        variable(&file, "Room Temperature").position,
        Some(Position { x: 500.0, y: 300.0 })
    );
    let time = variable(&file, "Characteristic Time");
    assert_eq!(time.range, Some((0.0, f64::INFINITY)));
    assert_eq!(time.kind, Kind::Aux);
    let flow = variable(&file, "Heat Loss to Room");
    let Definition::Uniform(Equation::Value(e)) = &flow.definition else {
        panic!()
    };
    assert!(matches!(&e.kind, ExprKind::Binary { op: BinaryOp::Div, .. }));
    // The span of an expression is its text in the file.
    assert_eq!(
        &text[e.span.range()],
        "(Teacup Temperature - Room Temperature) / Characteristic Time"
    );
    // The control variables stay ordinary variables of the model.
    assert!(
        matches!(variable(&file, "SAVEPER").definition, Definition::Uniform(Equation::Value(ref e)) if matches!(&e.kind, ExprKind::Variable { name, .. } if name == "time step"))
    );
}

/// The suite's folder, where this machine has it.
fn suite() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("../../../shared/sd-test-models/tests"),
        manifest.join("../../../../shared/sd-test-models/tests"),
    ]
    .into_iter()
    .find(|p| p.is_dir())
}

fn suite_files() -> Vec<PathBuf> {
    let Some(dir) = suite() else { return Vec::new() };
    let mut files = Vec::new();
    for case in std::fs::read_dir(dir).expect("the suite's folder reads") {
        let case = case.expect("an entry of the suite").path();
        if !case.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&case).expect("a case's folder reads") {
            let f = f.expect("an entry of a case").path();
            if f.extension().is_some_and(|e| e.eq_ignore_ascii_case("mdl")) {
                files.push(f);
            }
        }
    }
    files.sort();
    files
}

/// The constructs the reader names as not supported (E1002), each by a piece of its message.
const UNSUPPORTED: &[&str] = &[
    "GET ",
    "reads data from a file",
    "data equations",
    "data variable",
    "data option",
    "VECTOR SELECT",
    "VECTOR SORT ORDER",
    "VECTOR REORDER",
    "VECTOR RANK",
    "ALLOCATE AVAILABLE",
    "ALLOCATE BY PRIORITY",
    "INVERT MATRIX",
    "`:NA:`",
    "subscripted lookup",
    "control variable",
    "stock (`INTEG`) for some elements",
];

#[test]
fn every_suite_file_reads_cleanly_or_names_what_is_not_supported() {
    let files = suite_files();
    if files.is_empty() {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    }
    let (mut cleanly, mut unsupported, mut failures) = (0, 0, Vec::new());
    for path in &files {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|_| String::from_utf8_lossy(&std::fs::read(path).expect("reads")).into_owned());
        let (file, diagnostics) = read(FILE, &text);
        if diagnostics.is_empty() {
            assert!(file.is_some(), "{}: no diagnostics but no model", path.display());
            cleanly += 1;
        } else if diagnostics
            .iter()
            .all(|d| d.code == "E1002" && UNSUPPORTED.iter().any(|u| d.message.contains(u)))
        {
            unsupported += 1;
        } else {
            failures.push(format!(
                "{}: {:?}",
                path.display(),
                diagnostics
                    .iter()
                    .map(|d| (d.code, &d.message, &text[d.primary_span().unwrap().range()]))
                    .collect::<Vec<_>>()
            ));
        }
    }
    eprintln!(
        "Vensim files of the suite: {} read cleanly, {} with unsupported constructs only, of {}",
        cleanly,
        unsupported,
        files.len()
    );
    assert!(
        failures.is_empty(),
        "{} files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
