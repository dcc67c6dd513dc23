//! `Modelica.Utilities` beyond printing: `String(e)` of any expression of an enumeration type,
//! the string functions (`isEqual`, `repeat`, `find`, `replace`, `scanReal`, `scanInteger`),
//! and reading a text file the test writes (`Streams.readLine`, `countLines`, `close`,
//! `Files.exist`), each against values counted by hand, on both back ends.

use eqm::{Model, ModelOptions, RunSettings, Session, SimulationResult};
use std::path::{Path, PathBuf};

/// A session of `text` whose data files are read from the file system.
fn session(text: &str) -> Session {
    let mut session = Session::with_sources(&[("m.eqm".to_string(), text.to_string())], &[], None);
    session.set_data_reader(|path: &Path| std::fs::read(path));
    session
}

/// The compiled model of `text`; panics with the diagnostics when it does not compile.
fn compile(text: &str) -> Model {
    let mut session = session(text);
    session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)))
}

/// The run of `text` to `stop` by native code, checked to print the same lines and give the
/// same columns, bit for bit, as the interpreter's; and its printed lines.
fn run(text: &str, stop: f64) -> (SimulationResult, Vec<String>) {
    let settings = RunSettings {
        stop: Some(stop),
        ..RunSettings::default()
    };
    let native = compile(text).simulate(&settings).unwrap_or_else(|e| panic!("{e}"));
    let interpreted = compile(text)
        .simulate(&RunSettings {
            interpreter: true,
            ..settings
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let lines = crate::streams::printed_lines;
    assert_eq!(
        lines(&native),
        lines(&interpreted),
        "the back ends print different lines"
    );
    for column in native.columns() {
        let values = |r: &SimulationResult| -> Vec<u64> {
            r.column(&column.name)
                .expect("a column")
                .iter()
                .map(|v| v.to_bits())
                .collect()
        };
        assert_eq!(
            values(&native),
            values(&interpreted),
            "the back ends differ in {}",
            column.name
        );
    }
    let printed = lines(&native).into_iter().map(|(_, t)| t).collect();
    (native, printed)
}

/// The (code, message) of each diagnostic of `check` on `text`.
fn check_codes(text: &str) -> Vec<(String, String)> {
    let mut session = session(text);
    let _ = session.check(None, &ModelOptions::default());
    session
        .diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), d.message.clone()))
        .collect()
}

/// A directory of the test's own under the system's temporary directory, made empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eqm-utilities-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

#[test]
fn string_of_any_enumeration_expression_shows_the_literal_name() {
    let text = r#"
model EnumExpressions
  import Modelica.Utilities.Streams;
  import Modelica.Utilities.Strings;
  type Mode = enumeration(Off, Heating, Cooling);
  function next "The mode after m"
    input Mode m;
    output Mode n;
  algorithm
    n := if m == Mode.Cooling then Mode.Off elseif m == Mode.Off then Mode.Heating else Mode.Cooling;
  end next;
  Mode mode;
  Mode modes[3] = {Mode.Off, Mode.Heating, Mode.Cooling};
  discrete Integer k(start = 0, fixed = true);
equation
  when sample(0.5, 0.5) then
    k = pre(k) + 1;
    mode = next(pre(mode));
    Streams.print(String(next(mode)) + " " + String(if k > 1 then mode else pre(mode)) + " " + String(modes[k])
      + " " + String(noEvent(mode)) + " " + String(Strings.compare("b", "a")) + " " + String(next(Mode.Off)));
  end when;
end EnumExpressions;
"#;
    // Sample k: pre(mode) is the mode before it, mode = next(pre(mode)); Off -> Heating ->
    // Cooling -> Off. compare("b", "a") is Greater; next(Off) is Heating.
    let (_, printed) = run(text, 1.5);
    assert_eq!(
        printed,
        [
            "Cooling Off Off Heating Greater Heating",
            "Off Cooling Heating Cooling Greater Heating",
            "Heating Off Cooling Off Greater Heating",
        ]
    );
}

#[test]
fn the_string_functions_give_values_counted_by_hand() {
    let text = r#"
model StringFunctions
  import Modelica.Utilities.Strings;
  import Modelica.Utilities.Streams;
  parameter Boolean same = Strings.isEqual("Abc", "aBC", caseSensitive = false);
  parameter Boolean differ = Strings.isEqual("Abc", "aBC");
  parameter Integer first = Strings.find("hello world", "o");
  parameter Integer second = Strings.find("hello world", "o", 6);
  parameter Integer folded = Strings.find("Hello", "LL", 1, false);
  parameter Integer none = Strings.find("hello", "z");
  parameter Integer count = Strings.scanInteger("  42x");
  parameter Real scanned = Strings.scanReal("x=2.5e1;", 3);
  parameter Real negative = Strings.scanReal(" -0.125");
  Real y = 1000*first + 100*second + 10*folded + none;
equation
  when initial() then
    Streams.print(String(same) + " " + String(differ) + " " + String(none) + " " + String(count) + " " + String(scanned)
      + " " + String(negative));
    Streams.print(Strings.repeat(3, "ab") + "|" + Strings.repeat(0, "ab") + "|" + Strings.replace("a-b-c", "-", "+")
      + "|" + Strings.replace("a-b-c", "-", "+", replaceAll = false) + "|" + Strings.replace("a-b-c", "-", "--", 3)
      + "|" + Strings.replace("A-a-A", "a", "x", caseSensitive = false));
  end when;
end StringFunctions;
"#;
    let (result, printed) = run(text, 0.1);
    // isEqual: equal with letter case folded, not without; find of "z" in "hello": none;
    // "  42x": 42 after the blanks; "2.5e1" from byte 3 of "x=2.5e1;": 25.
    assert_eq!(
        printed,
        ["true false 0 42 25 -0.125", "ababab||a+b+c|a+b-c|a-b--c|x-x-x"]
    );
    // "hello world": the first "o" is byte 5, the next from byte 6 is byte 8; "LL" in "Hello"
    // starts at byte 3 with letter case ignored.
    assert_eq!(result.column("y").expect("y")[0], 5000.0 + 800.0 + 30.0);
}

#[test]
fn a_text_file_is_read_line_by_line_when_the_model_is_compiled() {
    let dir = scratch("read");
    let file = dir.join("data.txt");
    // Five lines: the third empty, the fourth ended by CR LF, the last without a line end.
    std::fs::write(&file, "alpha 1.5\nbeta 2\n\ngamma -3e2\r\nlast").expect("the data file");
    let path = file.display().to_string();
    let text = format!(
        r#"
model ReadData
  import Modelica.Utilities.Streams;
  import Modelica.Utilities.Strings;
  import Modelica.Utilities.Files;
  parameter String file = "{path}";
  parameter Integer n = Streams.countLines(file);
  parameter Real g = Strings.scanReal(Streams.readLine(file, 4), 6);
  parameter Integer empty = Strings.length(Streams.readLine(file, 3));
  parameter Integer past = Strings.length(Streams.readLine(file, 6));
  parameter Boolean here = Files.exist(file);
  parameter Boolean folder = Files.exist("{dir}");
  parameter Boolean missing = Files.exist(file + ".missing");
  Real y(start = 0, fixed = true);
equation
  der(y) = n;
  when initial() then
    Streams.print(Streams.readLine(file, 1) + "|" + Streams.readLine(file, 4) + "|" + Streams.readLine(file, 5));
    Streams.print(String(n) + " " + String(g) + " " + String(empty) + " " + String(past) + " " + String(here) + " "
      + String(folder) + " " + String(missing));
    Streams.close(file);
  end when;
end ReadData;
"#,
        dir = dir.display()
    );
    let (result, printed) = run(&text, 1.0);
    // Five lines; the number after "gamma" (byte 6 of line 4) is -300; lines 3 and 6 (past
    // the end) are empty; the file and its directory exist, a name beside it does not.
    assert_eq!(printed, ["alpha 1.5|gamma -3e2|last", "5 -300 0 0 true true false"]);
    // y' = 5 from 0: y(1) = 5.
    let y = result.column("y").expect("y");
    assert!((y[y.len() - 1] - 5.0).abs() < 1e-9, "y(1) = {}", y[y.len() - 1]);
    // The second output of readLine says whether the line is past the end.
    let end_of_file = format!(
        r#"
model EndOfFile
  import Modelica.Utilities.Streams;
  Boolean inside;
  Boolean past;
equation
  (, inside) = Streams.readLine("{path}", 5);
  (, past) = Streams.readLine("{path}", 6);
end EndOfFile;
"#
    );
    let (result, _) = run(&end_of_file, 0.1);
    assert_eq!(result.column("inside").expect("inside")[0], 0.0);
    assert_eq!(result.column("past").expect("past")[0], 1.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_cannot_be_read_or_scanned_is_a_diagnostic_at_check() {
    let dir = scratch("problems");
    let missing = dir.join("missing.txt").display().to_string();
    let model = |binding: &str| {
        format!(
            "model M\n  import Modelica.Utilities.Streams;\n  import Modelica.Utilities.Strings;\n  parameter Real p = {binding};\n  Real x(start = p, fixed = true);\nequation\n  der(x) = 0;\nend M;\n"
        )
    };
    let cases = [
        (
            format!("Streams.countLines(\"{missing}\")"),
            "ModelicaInternal_countLines",
        ),
        (
            format!("Strings.length(Streams.readLine(\"{missing}\", 1))"),
            "ModelicaInternal_readLine",
        ),
        ("Strings.scanReal(\"abc\")".to_string(), "no Real number at index 1"),
        (
            "Strings.scanInteger(\"2.5\")".to_string(),
            "no Integer number at index 1",
        ),
        ("Strings.find(\"abc\", \"b\", 9)".to_string(), "outside the string"),
        (
            "Strings.length(Strings.repeat(-1, \"a\"))".to_string(),
            "repeated -1 times",
        ),
    ];
    for (binding, said) in cases {
        let codes = check_codes(&model(&binding));
        assert!(
            codes
                .iter()
                .any(|(code, message)| code == "E0325" && message.contains(said)),
            "{binding}: {codes:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A function reads the lines of a file named by a String parameter into a String variable of
/// its own and scans them (a loop whose range is known when the model is compiled, so each
/// line's text is); a function's String output is the text it was given last; the file is
/// named by a `modelica://` URI resolved by `Files.fullPathName` against the directory of the
/// file that defines the top-level class; a function inheriting one interface through two
/// bases declares its inputs once; and a String variable assigned inside an if-statement
/// decided during the run is a diagnostic.
#[test]
fn a_function_reads_lines_of_a_file_into_string_variables() {
    let dir = scratch("lines");
    std::fs::write(dir.join("numbers.txt"), "1.5\n-2.25\n4e1\nlast line\n").expect("the data file");
    let text = r#"
model Lines
  import Modelica.Utilities.Streams;
  import Modelica.Utilities.Strings;
  function fullPath
    input String name;
    output String full;
  external "C" full = ModelicaInternal_fullPathName(name);
  end fullPath;
  partial function Named
    input String file;
  end Named;
  function NamedBase
    extends Named;
  end NamedBase;
  function sumOfLines "The sum of the numbers on the first three lines"
    extends Named;
    extends NamedBase;
    output Real total = 0;
  protected
    String line;
  algorithm
    for i in 1:3 loop
      line := Streams.readLine(file, i);
      total := total + Strings.scanReal(line);
    end for;
  end sumOfLines;
  function lastLine
    input String file;
    output String last;
  protected
    String line = "none";
  algorithm
    last := line;
    line := Streams.readLine(file, 4);
    last := line + "!";
  end lastLine;
  parameter String file = fullPath("modelica://Lines/numbers.txt");
  parameter Real total = sumOfLines(file);
  parameter Integer length = Strings.length(lastLine(file));
  Real y(start = 0, fixed = true);
equation
  der(y) = total;
  when initial() then
    Streams.print(lastLine(file) + " " + String(length));
  end when;
end Lines;
"#;
    let source = dir.join("lines.eqm").display().to_string();
    let mut session = Session::with_sources(&[(source, text.to_string())], &[], None);
    session.set_data_reader(|path: &Path| std::fs::read(path));
    let mut model = session
        .compile(None, &ModelOptions::default())
        .unwrap_or_else(|| panic!("{}", session.render_diagnostics(false)));
    let result = model
        .simulate(&RunSettings {
            stop: Some(1.0),
            ..RunSettings::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // 1.5 - 2.25 + 40 = 39.25 = y'(t), so y(1) = 39.25; "last line!" has 10 characters.
    let y = result.column("y").expect("y");
    assert!((y[y.len() - 1] - 39.25).abs() < 1e-9, "y(1) = {}", y[y.len() - 1]);
    let printed: Vec<String> = crate::streams::printed_lines(&result)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(printed, ["last line! 10"]);
    let refused = r#"
model Refused
  function pick
    input Real x;
    output Real y;
  protected
    String s = "a";
  algorithm
    if x > 0 then
      s := "b";
    end if;
    y := x;
  end pick;
  Real x(start = 1, fixed = true);
  Real y = pick(x);
equation
  der(x) = -x;
end Refused;
"#;
    let codes = check_codes(refused);
    assert!(
        codes
            .iter()
            .any(|(code, message)| code == "E0306" && message.contains("the String variable `s` is assigned inside")),
        "{codes:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
