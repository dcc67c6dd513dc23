//! The Vensim reader: representation of small models, one diagnostic per error code at its
//! line and column, the precedence and meaning of operators and functions; the test suite's
//! files in [`suite`], scalar models run against Vensim's values in [`run`].

use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, SourceMap};
use eqm_sd::ir::*;
use eqm_sd::vensim::read;

mod run;
mod suite;
mod values;

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
Room Temperature = 70 ~ Degrees ~ The room. ~ :SUPPLEMENTARY |\n\
Teacup Temperature = INTEG (-Heat Loss to Room, 180) ~ Degrees [32, 212] ~ The stock. |\n{CONTROL}\
\\\\\\---/// Sketch information - do not modify anything except names\nV300  Do not put anything below this section - it will be ignored\n*View 1\n\
10,1,Teacup Temperature,307,224,40,20,3,3,0,0,0,0,0,0\n10,2,Room Temperature,500,300,49,11,8,3,0,0,0,0,0,0\n///---\\\\\\\n:L<%^E!@\n15:0,0,0,0,0,0\n"
    );
    let file = clean(&format!(
        "{{UTF-8}}\n****************\n\t.model doc\n****************~\n\tThe notes \\\n\tof the model.\n\t|\n{}",
        &text[8..]
    ));
    assert_eq!(file.doc.as_deref(), Some("The notes of the model."));
    let file = clean(&text);
    assert_eq!(file.doc, None);
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
            dynamic_stop: false,
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
    assert_eq!(variable(&file, "Room Temperature").doc.as_deref(), Some("The room."));
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

/// A diagnostic's code, line, column and message.
type Expected = (&'static str, usize, usize, &'static str);

#[test]
fn each_error_is_reported_at_its_line_and_column() {
    let cases: &[(&str, Expected)] = &[
        // A syntax error: the `*` where a value must stand.
        ("x = 1 + * 2 ~~|\n", ("E1003", 1, 9, "expected a value here")),
        // An unknown name.
        (
            "x = 1 ~~|\ny = 2 * zz top ~~|\n",
            ("E1004", 2, 9, "unknown name `zz top`"),
        ),
        // An unknown function and a wrong number of arguments.
        (
            "x = FROBNICATE(1) ~~|\n",
            ("E1005", 1, 5, "unknown function `FROBNICATE`"),
        ),
        (
            "x = ABS(1, 2) ~~|\n",
            ("E1005", 1, 5, "`ABS` takes 1 argument(s), given 2"),
        ),
        // Subscripts that do not fit: three numbers for two elements, and a 1-D variable
        // used with two subscripts.
        (
            "d: a, b ~~|\nx[d] =\n  1, 2, 3 ~~|\n",
            ("E1006", 3, 3, "3 numbers given for the 2 elements of `x` defined here"),
        ),
        (
            "d: a, b ~~|\nx[d] = 1 ~~|\ny = x[a, b] ~~|\n",
            ("E1006", 3, 5, "`x` has 1 dimension(s) but is used with 2 subscript(s)"),
        ),
        // A lookup table used without an input, and LOOKUP INVERT given no table.
        (
            "tbl((0,0),(1,1)) ~~|\nx = 2 * tbl ~~|\n",
            (
                "E1005",
                2,
                9,
                "the lookup table `tbl` is used as a value; call it with an input, `tbl(x)`",
            ),
        ),
        (
            "x = LOOKUP INVERT(3, 1) ~~|\n",
            ("E1005", 1, 19, "`LOOKUP INVERT` takes the name of a lookup table first"),
        ),
        (
            "d: a, b ~~|\nx[d] = 1 ~~|\ny = 2 * x ~~|\n",
            ("E1006", 3, 9, "`x` has 1 dimension(s) but is used with 0 subscript(s)"),
        ),
        // A subscript that is not part of the variable's range at its place.
        (
            "d: a, b ~~|\ne: p, q ~~|\nx[d] = 1 ~~|\ny[d] = x[e] ~~|\n",
            (
                "E1006",
                4,
                10,
                "`x` is defined over `d` at this place, which this subscript is not part of",
            ),
        ),
        (
            "d: a, b ~~|\ne: p, q ~~|\nx[d] = 1 ~~|\ny = x[q] ~~|\n",
            (
                "E1006",
                4,
                7,
                "`x` is defined over `d` at this place, which this subscript is not part of",
            ),
        ),
        // A range on the right that is none of the left-hand side's, and `dim!` outside an
        // array function.
        (
            "d: a, b ~~|\ne: p, q ~~|\nz[e] = 1 ~~|\ny[d] = z[e] ~~|\n",
            (
                "E1006",
                4,
                8,
                "the subscript range `e` is not among the ranges the left-hand side is defined over, nor mapped onto one",
            ),
        ),
        (
            "d: a, b ~~|\nx[d] = 1 ~~|\ny[d] = x[d!] ~~|\n",
            (
                "E1002",
                3,
                10,
                "`d!` outside the argument of SUM, PROD, VMIN or VMAX is not supported",
            ),
        ),
        // Macros without a value, or ended twice.
        (
            ":MACRO: M(a)\nN = a ~~|\n:END OF MACRO:\n",
            (
                "E1007",
                1,
                9,
                "the macro `M` defines no variable of its own name, its value",
            ),
        ),
        (
            ":MACRO: M(a)\nM = a ~~|\n:END OF MACRO:\n:END OF MACRO:\nx = 1 ~~|\n",
            ("E1003", 4, 1, "`:END OF MACRO:` without a `:MACRO:` before it"),
        ),
        // A variable defined twice, and as both a lookup and a variable.
        (
            "tbl((0,0),(1,1)) ~~|\ntbl = 3 ~~|\n",
            (
                "E1007",
                2,
                1,
                "`tbl` is defined both as a lookup table and by an equation",
            ),
        ),
        ("x = 1 ~~|\nx = 2 ~~|\n", ("E1007", 2, 1, "`x` is defined twice")),
        // A reality check: read, named, and left out of the run.
        (
            "x = 1 ~~|\nr :THE CONDITION: x > 0 :IMPLIES: x < 2 ~~|\n",
            (
                "W1001",
                2,
                1,
                "the reality check `r` is read but not applied: it takes no part in a run",
            ),
        ),
        // Data read from a file where the reader was given no way to read files.
        (
            "x = GET XLS CONSTANTS('a.xls', 'Sheet1', 'B2') ~~|\n",
            (
                "E1008",
                1,
                23,
                "the data file `a.xls` cannot be read here: no reader of data files was given",
            ),
        ),
        (
            "x = GET TIME VALUE(2, 0, 0) ~~|\n",
            (
                "E1002",
                1,
                5,
                "Vensim's `GET TIME VALUE` is supported only for the current time in the model's units (relativeto 0 and measure 0, written as numbers)",
            ),
        ),
    ];
    for (source, (code, line, col, message)) in cases {
        let text = format!("{source}{CONTROL}");
        let found = located(&text);
        assert_eq!(found, vec![(*code, *line, *col, message.to_string())], "for {source:?}");
    }
}

#[test]
fn a_macro_without_its_end_is_named_and_keeps_what_follows_out_of_the_model() {
    let text = format!("{CONTROL}:MACRO: M(a)\nM = a ~~|\nx = 1 ~~|\n");
    let found = located(&text);
    assert_eq!(
        found,
        vec![("E1003", 5, 9, "the macro `M` has no `:END OF MACRO:`".to_string())]
    );
}

#[test]
fn subscripts_ranges_mappings_except_and_lists() {
    let text = format!(
        "d: (a1-a3) ~~|\nsub: a1, a2 ~~|\ne: x, y -> (d: a1, a3) ~~|\nf <-> e ~~|\n\
m[d, e] = 1, 2; 3, 4; 5, 6; ~~|\n\
s[d] :EXCEPT: [a2] = m[d, x] * 2 ~~|\ns[a2] = SUM(m[a2, e!]) ~~|\n\
t[sub] = s[sub] ~~|\nu[d] = s[d] ~~|\n{CONTROL}"
    );
    let file = clean(&text);
    let names: Vec<(&str, &[String], Option<&str>)> = file
        .dimensions
        .iter()
        .map(|d| (d.name.as_str(), &d.elements[..], d.subrange_of.as_deref()))
        .collect();
    let s = |v: &[&str]| v.iter().map(|e| e.to_string()).collect::<Vec<_>>();
    assert_eq!(names[0], ("d", &s(&["a1", "a2", "a3"])[..], None));
    assert_eq!(names[1], ("sub", &s(&["a1", "a2"])[..], Some("d")));
    assert_eq!(
        file.dimensions[2].maps_to,
        vec![DimensionMapping {
            to: "d".into(),
            elements: s(&["a1", "a3"])
        }]
    );
    assert_eq!(file.dimensions[3].elements, s(&["x", "y"]));
    assert_eq!(
        file.dimensions[3].maps_to,
        vec![DimensionMapping {
            to: "e".into(),
            elements: s(&["x", "y"])
        }]
    );
    let m = variable(&file, "m");
    assert_eq!(m.dimensions, s(&["d", "e"]));
    let Definition::Elements(elements) = &m.definition else {
        panic!("{:?}", m.definition)
    };
    let flat: Vec<(Vec<String>, f64)> = elements
        .iter()
        .map(|(k, e)| {
            (
                k.clone(),
                match e {
                    Equation::Value(e) => num(e),
                    _ => panic!(),
                },
            )
        })
        .collect();
    assert_eq!(flat[1], (s(&["a1", "y"]), 2.0));
    assert_eq!(flat[4], (s(&["a3", "x"]), 5.0));
    assert_eq!(flat.len(), 6);
    let sv = variable(&file, "s");
    let Definition::Elements(elements) = &sv.definition else {
        panic!()
    };
    let keys: Vec<&Vec<String>> = elements.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, vec![&s(&["a1"]), &s(&["a3"]), &s(&["a2"])]);
    // Each element written out from `:EXCEPT:` names its own elements.
    let Equation::Value(first) = &elements[0].1 else {
        panic!()
    };
    let ExprKind::Binary { left, .. } = &first.kind else {
        panic!("{first:?}")
    };
    assert!(
        matches!(&left.kind, ExprKind::Variable { subscripts, .. } if subscripts == &vec![Subscript::Element("a1".into()), Subscript::Element("x".into())]),
        "{left:?}"
    );
    let Equation::Value(sum) = &elements[2].1 else { panic!() };
    let ExprKind::Call {
        function: Function::Builtin(Builtin::Sum),
        args,
    } = &sum.kind
    else {
        panic!("{sum:?}")
    };
    assert!(
        matches!(&args[0].kind, ExprKind::Variable { subscripts, .. } if subscripts == &vec![Subscript::Element("a2".into()), Subscript::Wildcard(Some("e".into()))])
    );
    // A variable defined over a subrange only keeps the subrange as its dimension.
    assert_eq!(variable(&file, "t").dimensions, s(&["sub"]));
    let u = variable(&file, "u");
    let Definition::Uniform(Equation::Value(e)) = &u.definition else {
        panic!()
    };
    assert!(
        matches!(&e.kind, ExprKind::Variable { subscripts, .. } if subscripts == &vec![Subscript::Dimension("d".into())])
    );
}

#[test]
fn macros_lookups_and_builtins_map_onto_the_representation() {
    let text = format!(
        ":MACRO: DOUBLE(input, gain : extra)\nDOUBLE = INTEG(input * gain, 0) ~ u ~ |\nextra = input * TIME STEP ~~|\n:END OF MACRO:\n\
y = DOUBLE(2, 3) ~~|\n\
tbl([(0,0)-(2,2)],(0,0),(1,0.5),(2,2)) ~~|\n\
a = tbl(Time) ~~|\n\
b = WITH LOOKUP(Time, ((0,1),(1,3))) ~~|\n\
c = SMOOTH N(a, 2, 5, 3) + DELAY FIXED(a, 1, 0) + INTEGER(-1.5) + LOG(8, 2) ~~|\n\
d = IF THEN ELSE(a > 1 :AND: :NOT: b < 0, 1e+06, .5) ~~|\n\
h = LOOKUP INVERT(tbl, 0.5) ~~|\nz = A FUNCTION OF(a, b) ~~|\n{CONTROL}"
    );
    let file = clean(&text);
    assert_eq!(file.macros.len(), 1);
    let m = &file.macros[0];
    assert_eq!(
        (m.name.as_str(), &m.parameters[..], &m.outputs[..]),
        (
            "DOUBLE",
            &["input".to_string(), "gain".to_string()][..],
            &["extra".to_string()][..]
        )
    );
    assert_eq!(
        m.variables.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        vec!["DOUBLE", "extra"]
    );
    assert!(matches!(m.variables[0].kind, Kind::Stock { .. }));
    // Inside a macro the control variables are the run's own values.
    let Definition::Uniform(Equation::Value(extra)) = &m.variables[1].definition else {
        panic!()
    };
    let mut calls = Vec::new();
    collect_calls(extra, &mut calls);
    assert_eq!(calls, vec![(Builtin::Dt, vec![])]);
    let Definition::Uniform(Equation::Value(y)) = &variable(&file, "y").definition else {
        panic!()
    };
    assert!(
        matches!(&y.kind, ExprKind::Call { function: Function::Macro(name), args } if name == "double" && args.len() == 2)
    );
    let tbl = variable(&file, "tbl");
    assert_eq!(tbl.kind, Kind::Lookup);
    let Definition::Uniform(Equation::Table(g)) = &tbl.definition else {
        panic!()
    };
    assert_eq!(
        (g.x.clone(), g.y.clone(), g.kind),
        (vec![0.0, 1.0, 2.0], vec![0.0, 0.5, 2.0], GraphKind::Continuous)
    );
    let Definition::Uniform(Equation::Value(a)) = &variable(&file, "a").definition else {
        panic!()
    };
    assert!(
        matches!(&a.kind, ExprKind::Call { function: Function::Lookup(name), args } if name == "tbl" && matches!(args[0].kind, ExprKind::Call { function: Function::Builtin(Builtin::Time), .. }))
    );
    let Definition::Uniform(Equation::Graph { graph, .. }) = &variable(&file, "b").definition else {
        panic!()
    };
    assert_eq!((graph.x.clone(), graph.y.clone()), (vec![0.0, 1.0], vec![1.0, 3.0]));
    let Definition::Uniform(Equation::Value(c)) = &variable(&file, "c").definition else {
        panic!()
    };
    let mut calls = Vec::new();
    collect_calls(c, &mut calls);
    // SMOOTH N(input, time, initial, n) becomes SmoothN(input, time, n, initial).
    let smooth = calls.iter().find(|(f, _)| *f == Builtin::SmoothN).expect("SmoothN");
    assert_eq!(smooth.1, vec![2.0, 3.0, 5.0]);
    assert!(calls.iter().any(|(f, _)| *f == Builtin::DelayFixed));
    assert!(calls.iter().any(|(f, _)| *f == Builtin::Ln));
    // INTEGER truncates toward zero: written as a choice between rounding down and up.
    assert!(calls.iter().filter(|(f, _)| *f == Builtin::Int).count() == 2);
    let Definition::Uniform(Equation::Value(d)) = &variable(&file, "d").definition else {
        panic!()
    };
    let ExprKind::If {
        condition,
        then,
        otherwise,
    } = &d.kind
    else {
        panic!()
    };
    assert!(
        matches!(&condition.kind, ExprKind::Binary { op: BinaryOp::And, right, .. } if matches!(right.kind, ExprKind::Unary { op: UnaryOp::Not, .. }))
    );
    assert_eq!((num(then), num(otherwise)), (1e6, 0.5));
    assert_lookup_invert(&file);
    assert_eq!(
        variable(&file, "z").definition,
        Definition::Uniform(Equation::Undefined)
    );
}

/// `LOOKUP INVERT(tbl, v)` keeps the table's name as its first argument.
fn assert_lookup_invert(file: &SdFile) {
    let Definition::Uniform(Equation::Value(h)) = &variable(file, "h").definition else {
        panic!()
    };
    let ExprKind::Call {
        function: Function::Builtin(Builtin::LookupInvert),
        args,
    } = &h.kind
    else {
        panic!("{h:?}")
    };
    assert!(matches!(&args[0].kind, ExprKind::Variable { name, subscripts } if name == "tbl" && subscripts.is_empty()));
    assert_eq!(num(&args[1]), 0.5);
}

/// Every builtin call in an expression, with its numeric arguments.
fn collect_calls(e: &Expr, out: &mut Vec<(Builtin, Vec<f64>)>) {
    match &e.kind {
        ExprKind::Call { function, args } => {
            if let Function::Builtin(b) = function {
                out.push((
                    *b,
                    args.iter()
                        .filter_map(|a| {
                            if let ExprKind::Number(v) = a.kind {
                                Some(v)
                            } else {
                                None
                            }
                        })
                        .collect(),
                ));
            }
            args.iter().for_each(|a| collect_calls(a, out));
        }
        ExprKind::Unary { operand, .. } => collect_calls(operand, out),
        ExprKind::Binary { left, right, .. } => {
            collect_calls(left, out);
            collect_calls(right, out);
        }
        ExprKind::If {
            condition,
            then,
            otherwise,
        } => {
            collect_calls(condition, out);
            collect_calls(then, out);
            collect_calls(otherwise, out);
        }
        _ => {}
    }
}

#[test]
fn integration_settings_other_than_euler_and_missing_control_variables_are_named() {
    let text =
        format!("x = 1 ~~|\n{CONTROL}\\\\\\---/// Sketch\n///---\\\\\\\n:L<%^E!@\n1:Current.vdf\n15:0,0,0,3,0,0\n");
    let found = located(&text);
    assert_eq!(
        found,
        vec![(
            "E1002",
            10,
            1,
            "integration settings other than Vensim's default (Euler) are not supported".to_string()
        )]
    );
    let found = located("x = 1 ~~|\nTIME STEP = 1 ~~|\n");
    let messages: Vec<&str> = found.iter().map(|f| f.3.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "the model has no `INITIAL TIME`, which a Vensim model needs",
            "the model has no `FINAL TIME`, which a Vensim model needs"
        ]
    );
}

#[test]
fn a_control_variable_that_changes_during_the_run_is_named() {
    // Only `FINAL TIME` may change during the run, and only through expressions of `Time`.
    let text = "x = 1 ~~|\nTIME STEP = IF THEN ELSE(Time < 5, 1, 0.5) ~~|\nINITIAL TIME = 0 ~~|\nFINAL TIME = 10 ~~|\n";
    let found = located(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1, found[0].2), ("E1002", 2, 1));
    assert!(found[0].3.contains("`TIME STEP`"), "{}", found[0].3);
    let text = "s = INTEG(1, 0) ~~|\nFINAL TIME = s + 5 ~~|\nINITIAL TIME = 0 ~~|\nTIME STEP = 1 ~~|\n";
    let found = located(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1, found[0].2), ("E1002", 2, 1));
    assert!(found[0].3.contains("`FINAL TIME`"), "{}", found[0].3);
}

/// The value of a constant expression (numbers and arithmetic only).
fn evaluate(e: &Expr) -> f64 {
    match &e.kind {
        ExprKind::Number(v) => *v,
        ExprKind::Unary {
            op: UnaryOp::Minus,
            operand,
        } => -evaluate(operand),
        ExprKind::Unary {
            op: UnaryOp::Plus,
            operand,
        } => evaluate(operand),
        ExprKind::Binary { op, left, right } => {
            let (l, r) = (evaluate(left), evaluate(right));
            match op {
                BinaryOp::Add => l + r,
                BinaryOp::Sub => l - r,
                BinaryOp::Mul => l * r,
                BinaryOp::Div => l / r,
                BinaryOp::Pow => l.powf(r),
                other => panic!("not arithmetic: {other:?}"),
            }
        }
        other => panic!("not constant: {other:?}"),
    }
}

#[test]
fn powers_bind_tighter_than_a_sign_and_group_to_the_right() {
    // The values Vensim computed for these expressions in the suite's `exponentiation` and
    // `arithmetics` cases: -2^2 = -4, 4^3^2 = 4^9, 2^-2^-3 = 2^-(2^-3).
    let text = format!(
        "a = -2^2 ~~|\nb = 4^3^2 ~~|\nc = 2^-2^-3 ~~|\nd = 1 - 2 * 3 + 8 / 4 / 2 ~~|\ne = 0001.50 + 1e+06 + .5e-1 ~~|\n{CONTROL}"
    );
    let file = clean(&text);
    let value = |name: &str| match &variable(&file, name).definition {
        Definition::Uniform(Equation::Value(e)) => evaluate(e),
        other => panic!("{other:?}"),
    };
    assert_eq!(value("a"), -4.0);
    assert_eq!(value("b"), 262_144.0);
    assert!((value("c") - 0.917_004).abs() < 1e-6, "{}", value("c"));
    assert_eq!(value("d"), -4.0);
    assert_eq!(value("e"), 1.5 + 1e6 + 0.05);
}

#[test]
fn integer_modulo_quantum_and_hyperbolic_functions_keep_vensim_meaning() {
    // INTEGER truncates toward zero; QUANTUM(x, q) is q * INTEGER(x / q), x itself where q
    // is not positive; TANH is written through EXP. Checked by evaluating the expressions
    // the reader builds with a small interpreter of their own.
    let text = format!(
        "a = INTEGER(-1.5) ~~|\nb = INTEGER(2.7) ~~|\nc = QUANTUM(-7, 2) ~~|\nd = QUANTUM(7, 0) ~~|\ne = TANH(0.5) ~~|\nf = SINH(0.5) + COSH(0.5) ~~|\ng = LOG(1000, 10) ~~|\nh = MODULO(-10, 3) ~~|\nk = MODULO(10, -3) ~~|\nm = MODULO(7.5, 2) ~~|\n{CONTROL}"
    );
    let file = clean(&text);
    let value = |name: &str| match &variable(&file, name).definition {
        Definition::Uniform(Equation::Value(e)) => eval_calls(e),
        other => panic!("{other:?}"),
    };
    assert_eq!(value("a"), -1.0);
    assert_eq!(value("b"), 2.0);
    assert_eq!(value("c"), -6.0);
    assert_eq!(value("d"), 7.0);
    assert!((value("e") - 0.5f64.tanh()).abs() < 1e-15);
    assert!((value("f") - 0.5f64.exp()).abs() < 1e-15);
    assert!((value("g") - 3.0).abs() < 1e-12);
    // MODULO keeps the dividend's sign, as Vensim computes it in the suite's `rounding` case.
    assert_eq!((value("h"), value("k"), value("m")), (-1.0, 1.0, 1.5));
}

/// [`evaluate`] with the builtins the composite functions are written in, and choices.
fn eval_calls(e: &Expr) -> f64 {
    match &e.kind {
        ExprKind::Call {
            function: Function::Builtin(b),
            args,
        } => {
            let x = eval_calls(&args[0]);
            match b {
                Builtin::Int => x.floor(),
                Builtin::Exp => x.exp(),
                Builtin::Ln => x.ln(),
                other => panic!("{other:?}"),
            }
        }
        ExprKind::If {
            condition,
            then,
            otherwise,
        } => {
            let ExprKind::Binary { op, left, right } = &condition.kind else {
                panic!()
            };
            let (l, r) = (eval_calls(left), eval_calls(right));
            let holds = match op {
                BinaryOp::GreaterEq => l >= r,
                BinaryOp::Greater => l > r,
                BinaryOp::Less => l < r,
                other => panic!("{other:?}"),
            };
            eval_calls(if holds { then } else { otherwise })
        }
        ExprKind::Unary {
            op: UnaryOp::Minus,
            operand,
        } => -eval_calls(operand),
        ExprKind::Binary { op, left, right } => {
            let (l, r) = (eval_calls(left), eval_calls(right));
            match op {
                BinaryOp::Add => l + r,
                BinaryOp::Sub => l - r,
                BinaryOp::Mul => l * r,
                BinaryOp::Div => l / r,
                // The representation's `Mod`: the remainder with the divisor's sign.
                BinaryOp::Mod => l - r * (l / r).floor(),
                other => panic!("{other:?}"),
            }
        }
        _ => evaluate(e),
    }
}

#[test]
fn ranges_and_elements_used_as_values_are_the_numbers_of_their_elements() {
    // As Vensim computes them in the suite's `subscript_definition` and `subscript_logicals`
    // cases: an element's number is its place in the first range holding it that is no
    // subrange, whichever range names it; a range may list a range defined after it.
    let text = format!(
        "dim: A, sub1, B ~~|\nsub1: (ab1-ab3) ~~|\nv[dim] = dim ~~|\nw[sub1] = sub1 * 10 ~~|\n\
e1: X, Y, Z ~~|\ne2: X, Z, Y ~~|\nc[e1, e2] = IF THEN ELSE(e1 = e2, 1, 0) ~~|\nk[e1] = e1 - Z ~~|\n{CONTROL}"
    );
    let file = clean(&text);
    assert_eq!(file.dimensions[0].elements, vec!["A", "ab1", "ab2", "ab3", "B"]);
    let values = |name: &str| -> Vec<(Vec<String>, Expr)> {
        match &variable(&file, name).definition {
            Definition::Elements(list) => list
                .iter()
                .map(|(k, e)| match e {
                    Equation::Value(e) => (k.clone(), e.clone()),
                    other => panic!("{other:?}"),
                })
                .collect(),
            other => panic!("{other:?}"),
        }
    };
    let v: Vec<f64> = values("v").iter().map(|(_, e)| evaluate(e)).collect();
    assert_eq!(v, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    let w: Vec<(Vec<String>, f64)> = values("w").iter().map(|(k, e)| (k.clone(), evaluate(e))).collect();
    assert_eq!(w[0], (vec!["ab1".to_string()], 20.0));
    assert_eq!(w[2], (vec!["ab3".to_string()], 40.0));
    // c[Y, Z] compares 2 with 3 (Z's number in e1, the first range holding it).
    let c = values("c");
    let (key, e) = &c[4];
    assert_eq!(key, &vec!["Y".to_string(), "Z".to_string()]);
    let ExprKind::If { condition, .. } = &e.kind else {
        panic!("{e:?}")
    };
    let ExprKind::Binary {
        op: BinaryOp::Eq,
        left,
        right,
    } = &condition.kind
    else {
        panic!()
    };
    assert_eq!((evaluate(left), evaluate(right)), (2.0, 3.0));
    let k: Vec<f64> = values("k").iter().map(|(_, e)| evaluate(e)).collect();
    assert_eq!(k, vec![-2.0, -1.0, 0.0]);
}

#[test]
fn deeply_nested_or_very_long_equations_are_refused_without_overflowing_the_stack() {
    let n = 100_000;
    let cases = [
        format!("x = {}1{} ~~|\n", "(".repeat(n), ")".repeat(n)),
        format!("x = {}1 ~~|\n", "-".repeat(n)),
        format!("x = 1{} ~~|\n", "^1".repeat(n)),
        format!("x = {}1 ~~|\n", ":NOT: ".repeat(n)),
        format!("x = {}1 ~~|\n", "1 + ".repeat(n)),
        format!("x = {}1{} ~~|\n", "ABS(".repeat(n), ")".repeat(n)),
    ];
    for case in &cases {
        let text = format!("{case}{CONTROL}");
        let found = located(&text);
        assert_eq!(found.len(), 1, "{:?}", &found);
        assert_eq!(found[0].0, "E1002");
        assert!(
            found[0].3.contains("nested more than 64") || found[0].3.contains("more than 2000 operators"),
            "{}",
            found[0].3
        );
    }
    // A long but reasonable equation reads.
    let text = format!("x = {}1 ~~|\n{CONTROL}", "1 + ".repeat(1500));
    clean(&text);
}
