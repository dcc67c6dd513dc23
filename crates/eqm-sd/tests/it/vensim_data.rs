//! Vensim's data functions (`GET XLS ...`, `GET DIRECT ...`) and data equations: the values
//! written into the representation, checked against the cells of small files this test
//! writes itself (a delimited text, and a spreadsheet built here as the `.xlsx` format lays
//! it out), each diagnostic at its line and column, and the subscript ranges of a suite file
//! against the element names Vensim's own output reports.

use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, SourceMap};
use eqm_sd::data::{DataFiles, ReadData};
use eqm_sd::ir::*;
use eqm_sd::vensim::read_with_data;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

const CONTROL: &str = "\
FINAL TIME = 20 ~ Month ~ |
INITIAL TIME = 0 ~ Month ~ |
SAVEPER = TIME STEP ~ Month ~ |
TIME STEP = 1 ~ Month ~ |
";

/// A reader of the files given (by their names), every other file not found.
fn reader(files: Vec<(&'static str, Vec<u8>)>) -> Arc<dyn ReadData> {
    Arc::new(move |path: &Path| {
        files
            .iter()
            .find(|(name, _)| path == Path::new(name))
            .map(|(_, bytes)| bytes.clone())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
    })
}

/// A diagnostic's code, line, column (from 1) and message.
type Located = (&'static str, usize, usize, String);

/// Reads `text` (the file `model.mdl`) with the data files given, and where each diagnostic is
/// (code, line, column, message).
fn read(files: Vec<(&'static str, Vec<u8>)>, text: &str) -> (Option<SdFile>, Vec<Located>) {
    let mut sources = SourceMap::new();
    let id = sources.add("model.mdl", text);
    let data = DataFiles::new(Some(reader(files)), "model.mdl");
    let (file, diagnostics) = read_with_data(id, text, Rc::new(data));
    let located = diagnostics
        .iter()
        .map(|d: &Diagnostic| {
            let span = d.primary_span().expect("every diagnostic has a span");
            let (line, col) = sources.get(id).line_col(span.start);
            (d.code, line, col, d.message.clone())
        })
        .collect();
    (file, located)
}

fn clean(files: Vec<(&'static str, Vec<u8>)>, text: &str) -> SdFile {
    let (file, diagnostics) = read(files, text);
    assert!(diagnostics.is_empty(), "unexpected diagnostics: {diagnostics:#?}");
    file.expect("a model")
}

fn variable<'f>(file: &'f SdFile, name: &str) -> &'f Variable {
    file.models[0]
        .variables
        .iter()
        .find(|v| v.name == name)
        .unwrap_or_else(|| panic!("no variable `{name}`"))
}

/// The equation of the element `element` of `v`.
fn element<'v>(v: &'v Variable, element: &[&str]) -> &'v Equation {
    match &v.definition {
        Definition::Uniform(e) if element.is_empty() => e,
        Definition::Elements(parts) => parts
            .iter()
            .find(|(s, _)| s.iter().map(String::as_str).eq(element.iter().copied()))
            .map(|(_, e)| e)
            .unwrap_or_else(|| panic!("no element {element:?} of {}", v.name)),
        other => panic!("{other:?}"),
    }
}

fn value(equation: &Equation) -> f64 {
    match equation {
        Equation::Value(Expr {
            kind: ExprKind::Number(v),
            ..
        }) => *v,
        other => panic!("not a number: {other:?}"),
    }
}

/// The table of a data variable's element, its kind, and whether it is read at `-Time`.
fn graph(equation: &Equation) -> (Vec<(f64, f64)>, GraphKind, bool) {
    let Equation::Graph { input, graph } = equation else {
        panic!("not a graphical function: {equation:?}");
    };
    let time = |e: &Expr| matches!(&e.kind, ExprKind::Call { function: Function::Builtin(Builtin::Time), args } if args.is_empty());
    let reversed = match &input.kind {
        ExprKind::Unary {
            op: UnaryOp::Minus,
            operand,
        } if time(operand) => true,
        _ if time(input) => false,
        other => panic!("read at {other:?}"),
    };
    let points = graph.x.iter().copied().zip(graph.y.iter().copied()).collect();
    (points, graph.kind, reversed)
}

/// A table of numbers with a header row and column, as a `.csv` file.
const TABLE: &str = "x,1,2,3\nr1,10,20,30\nr2,40,50,60\n";

#[test]
fn constants_fill_rows_and_columns_from_the_first_cell_and_a_star_turns_the_block() {
    let text = format!(
        "r: r1, r2 ~~|\nc: c1, c2, c3 ~~|\n\
m[r, c] = GET DIRECT CONSTANTS('table.csv', ',', 'B2') ~~|\n\
t[c, r] = GET DIRECT CONSTANTS('table.csv', ',', 'B2*') ~~|\n\
row[c] = GET DIRECT CONSTANTS('table.csv', ',', 'B3') ~~|\n\
column[r] = GET DIRECT CONSTANTS('table.csv', ',', 'D2*') ~~|\n\
one = GET DIRECT CONSTANTS('table.csv', ',', 'C3') ~~|\n{CONTROL}"
    );
    let file = clean(vec![("table.csv", TABLE.as_bytes().to_vec())], &text);
    let m = variable(&file, "m");
    assert_eq!(value(element(m, &["r1", "c1"])), 10.0);
    assert_eq!(value(element(m, &["r1", "c3"])), 30.0);
    assert_eq!(value(element(m, &["r2", "c2"])), 50.0);
    // Turned: the first subscript runs across, the second down.
    let t = variable(&file, "t");
    assert_eq!(value(element(t, &["c1", "r2"])), 40.0);
    assert_eq!(value(element(t, &["c3", "r1"])), 30.0);
    let row = variable(&file, "row");
    let across: Vec<f64> = ["c1", "c2", "c3"].iter().map(|c| value(element(row, &[c]))).collect();
    assert_eq!(across, [40.0, 50.0, 60.0]);
    let column = variable(&file, "column");
    assert_eq!(value(element(column, &["r1"])), 30.0);
    assert_eq!(value(element(column, &["r2"])), 60.0);
    assert_eq!(value(element(variable(&file, "one"), &[])), 50.0);
}

/// Times down column A from the second row, two elements' values in columns B and C; a
/// value left empty (B4) and a time that is no number (A5) are missing.
const SERIES: &str = "time,a,b\n0,1,5\n10,3,6\n20,,7\nn/a,9,9\n30,4,8\n";

#[test]
fn data_equations_read_between_times_as_their_option_says_and_skip_missing_values() {
    let text = format!(
        "dim: a, b ~~|\n\
series[dim] := GET DIRECT DATA('series.csv', ',', 'A', 'B2') ~~|\n\
held[dim] :HOLD BACKWARD: := GET DIRECT DATA('series.csv', ',', 'A', 'B2') ~~|\n\
ahead[dim] :LOOK FORWARD: := GET DIRECT DATA('series.csv', ',', 'A', 'B2') ~~|\n\
lines[dim] :INTERPOLATE: := GET DIRECT DATA('series.csv', ',', 'A', 'B2') ~~|\n\
table = GET DIRECT LOOKUPS('series.csv', ',', 'A', 'C2') ~~|\n\
table b( GET DIRECT LOOKUPS('series.csv', ',', 'A', 'C2')) ~~|\n{CONTROL}"
    );
    let file = clean(vec![("series.csv", SERIES.as_bytes().to_vec())], &text);
    let a = vec![(0.0, 1.0), (10.0, 3.0), (30.0, 4.0)];
    let b = vec![(0.0, 5.0), (10.0, 6.0), (20.0, 7.0), (30.0, 8.0)];
    let series = variable(&file, "series");
    assert!(matches!(series.kind, Kind::Aux));
    assert_eq!(
        graph(element(series, &["a"])),
        (a.clone(), GraphKind::Continuous, false)
    );
    assert_eq!(
        graph(element(series, &["b"])),
        (b.clone(), GraphKind::Continuous, false)
    );
    let lines = variable(&file, "lines");
    assert_eq!(graph(element(lines, &["b"])), (b.clone(), GraphKind::Continuous, false));
    let held = variable(&file, "held");
    assert_eq!(graph(element(held, &["a"])), (a, GraphKind::Discrete, false));
    // Looking forward is holding backward in reversed time: at 15 the value at -15 of the
    // reversed table is that of -10 or less, the point (20, 7) of b.
    let ahead = variable(&file, "ahead");
    let reversed = vec![(-30.0, 8.0), (-20.0, 7.0), (-10.0, 6.0), (0.0, 5.0)];
    assert_eq!(graph(element(ahead, &["b"])), (reversed, GraphKind::Discrete, true));
    for name in ["table", "table b"] {
        let table = variable(&file, name);
        assert!(matches!(table.kind, Kind::Lookup), "{name}");
        let Definition::Uniform(Equation::Table(g)) = &table.definition else {
            panic!("{:?}", table.definition);
        };
        assert_eq!(
            (g.x.as_slice(), g.y.as_slice()),
            (&[0.0, 10.0, 20.0, 30.0][..], &[5.0, 6.0, 7.0, 8.0][..])
        );
    }
}

#[test]
fn a_subscript_range_is_read_from_cells_with_its_prefix() {
    let text = format!(
        "rows: GET DIRECT SUBSCRIPT('table.csv', ',', 'A2', 'A3', 'e ') ~~|\n\
columns: GET DIRECT SUBSCRIPT('table.csv', ',', 'B1', '', 'n') ~~|\n\
x[rows] = 1 ~~|\ny[columns] = 2 ~~|\n{CONTROL}"
    );
    let file = clean(vec![("table.csv", TABLE.as_bytes().to_vec())], &text);
    let elements = |name: &str| {
        file.dimensions
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("no range {name}"))
            .elements
            .clone()
    };
    assert_eq!(elements("rows"), ["e r1", "e r2"]);
    // Down the column from B1 until the first empty cell: `1`, `10`, `40`.
    assert_eq!(elements("columns"), ["n1", "n10", "n40"]);
}

#[test]
fn each_problem_with_a_data_file_is_reported_at_the_argument_that_names_it() {
    let cases: [(&str, &'static str, usize, usize, &str); 6] = [
        (
            "x = GET XLS CONSTANTS('absent.xlsx', 'Sheet1', 'A1') ~~|",
            "E1008",
            1,
            23,
            "the data file `absent.xlsx` cannot be read",
        ),
        (
            "x = GET DIRECT CONSTANTS('table.csv', ',', 'A1') ~~|",
            "E1008",
            1,
            44,
            "holds the text `x` where a number is needed",
        ),
        (
            "x = GET DIRECT CONSTANTS('table.csv', ',', 'Z99') ~~|",
            "E1008",
            1,
            44,
            "the cell Z99 of the sheet `,` holds nothing",
        ),
        (
            "x = GET DIRECT CONSTANTS('table.csv', ',', 'nowhere') ~~|",
            "E1008",
            1,
            44,
            "`nowhere` is neither a cell nor a named range",
        ),
        (
            "x = GET XLS CONSTANTS('?inputs', 'Sheet1', 'A1') ~~|",
            "E1002",
            1,
            23,
            "the file tag `?inputs`",
        ),
        (
            "x :EXTRAPOLATE: := GET DIRECT DATA('table.csv', ',', '1', 'B2') ~~|",
            "E1002",
            1,
            3,
            "the data option `:EXTRAPOLATE:` is not supported",
        ),
    ];
    for (equation, code, line, column, message) in cases {
        let text = format!("{equation}\n{CONTROL}");
        let (_, diagnostics) = read(vec![("table.csv", TABLE.as_bytes().to_vec())], &text);
        assert!(
            diagnostics
                .iter()
                .any(|(c, l, k, m)| *c == code && (*l, *k) == (line, column) && m.contains(message)),
            "{equation}: {diagnostics:#?}"
        );
    }
}

/// The parts of a small `.xlsx` workbook with one sheet `Data` and the named range `rates`,
/// laid out as the format requires.
fn workbook(rows: &[(u32, &[(&str, &str)])]) -> Vec<u8> {
    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    const RELATIONS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    const PACKAGE: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
    let mut sheet = format!("<worksheet xmlns=\"{MAIN}\"><sheetData>");
    for (row, cells) in rows {
        sheet.push_str(&format!("<row r=\"{row}\">"));
        for (at, content) in *cells {
            match content.parse::<f64>() {
                Ok(_) => sheet.push_str(&format!("<c r=\"{at}\"><v>{content}</v></c>")),
                Err(_) => sheet.push_str(&format!("<c r=\"{at}\" t=\"inlineStr\"><is><t>{content}</t></is></c>")),
            }
        }
        sheet.push_str("</row>");
    }
    sheet.push_str("</sheetData></worksheet>");
    let parts = [
        (
            "[Content_Types].xml",
            "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">\
<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>\
<Default Extension=\"xml\" ContentType=\"application/xml\"/>\
<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>\
<Override PartName=\"/xl/worksheets/sheet1.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>\
</Types>"
                .to_string(),
        ),
        (
            "_rels/.rels",
            format!(
                "<Relationships xmlns=\"{PACKAGE}\"><Relationship Id=\"rId1\" Type=\"{RELATIONS}/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>"
            ),
        ),
        (
            "xl/workbook.xml",
            format!(
                "<workbook xmlns=\"{MAIN}\" xmlns:r=\"{RELATIONS}\"><sheets><sheet name=\"Data\" sheetId=\"1\" r:id=\"rId1\"/></sheets>\
<definedNames><definedName name=\"rates\">Data!$B$5:$C$5</definedName></definedNames></workbook>"
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!(
                "<Relationships xmlns=\"{PACKAGE}\"><Relationship Id=\"rId1\" Type=\"{RELATIONS}/worksheet\" Target=\"worksheets/sheet1.xml\"/></Relationships>"
            ),
        ),
        ("xl/worksheets/sheet1.xml", sheet),
    ];
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in parts {
        zip.start_file(name, zip::write::SimpleFileOptions::default())
            .expect("a part starts");
        zip.write_all(text.as_bytes()).expect("a part is written");
    }
    zip.finish().expect("the workbook is written").into_inner()
}

#[test]
fn a_spreadsheet_gives_data_across_a_row_and_constants_from_a_named_range() {
    let book = workbook(&[
        (1, &[("A1", "time"), ("B1", "0"), ("C1", "10"), ("D1", "20")]),
        (2, &[("A2", "a"), ("B2", "1"), ("C2", "3"), ("D2", "2")]),
        (3, &[("A3", "b"), ("B3", "5"), ("C3", "6")]),
        (5, &[("A5", "rates"), ("B5", "100"), ("C5", "200")]),
    ]);
    let text = format!(
        "dim: a, b ~~|\n\
series[dim] := GET XLS DATA('book.xlsx', 'Data', '1', 'B2') ~~|\n\
rate[dim] = GET XLS CONSTANTS('book.xlsx', 'data', 'rates') ~~|\n{CONTROL}"
    );
    let file = clean(vec![("book.xlsx", book)], &text);
    let series = variable(&file, "series");
    assert_eq!(
        graph(element(series, &["a"])),
        (vec![(0.0, 1.0), (10.0, 3.0), (20.0, 2.0)], GraphKind::Continuous, false)
    );
    assert_eq!(
        graph(element(series, &["b"])),
        (vec![(0.0, 5.0), (10.0, 6.0)], GraphKind::Continuous, false)
    );
    let rate = variable(&file, "rate");
    assert_eq!(value(element(rate, &["a"])), 100.0);
    assert_eq!(value(element(rate, &["b"])), 200.0);
    // A sheet the workbook does not have.
    let text = format!("x = GET XLS CONSTANTS('book.xlsx', 'Other', 'B5') ~~|\n{CONTROL}");
    let (_, diagnostics) = read(vec![("book.xlsx", workbook(&[]))], &text);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(
        diagnostics[0],
        (
            "E1008",
            1,
            36,
            "the data file `book.xlsx` has no sheet `Other`".to_string()
        )
    );
}

/// The suite's folder, where this machine has it.
fn suite_case(case: &str) -> Option<std::path::PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../../../shared", "../../../../shared"]
        .iter()
        .map(|up| manifest.join(up).join("sd-test-models/tests").join(case))
        .find(|p| p.is_dir())
}

#[test]
fn ranges_read_from_an_xls_file_have_the_elements_vensim_reports() {
    let Some(dir) = suite_case("get_subscript_3d_arrays_xls") else {
        eprintln!("the system-dynamics test suite is not on this machine; skipped");
        return;
    };
    let path = dir.join("test_get_subscript_3d_arrays_xls.mdl");
    let text = std::fs::read_to_string(&path).expect("the model reads");
    let reader: Arc<dyn ReadData> = Arc::new(|p: &Path| std::fs::read(p));
    let data = DataFiles::new(Some(reader), &path.to_string_lossy());
    let (file, diagnostics) = read_with_data(FileId(0), &text, Rc::new(data));
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let file = file.expect("a model");
    // Vensim's output names every element of the variable over the ranges read from cells.
    let output = std::fs::read_to_string(dir.join("output.tab")).expect("the output reads");
    let header = output.lines().next().expect("a header");
    let dimension = |name: &str| {
        file.dimensions
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("no range {name}"))
            .elements
            .clone()
    };
    let (first, third) = (
        dimension("One Dimensional Subscript"),
        dimension("Third Dimension Subscript"),
    );
    assert_eq!(first.len() * third.len(), 6, "{first:?} {third:?}");
    for one in &first {
        for depth in &third {
            let column = format!("Three Dimensional Variable[{one},Column1,{depth}]");
            assert!(
                header.split('\t').any(|h| h == column),
                "no column {column} in {header}"
            );
        }
    }
}
