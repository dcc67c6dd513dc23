//! Vensim's missing value `:NA:`, lookup tables whose points are not in order of x, calls of
//! one element of an arrayed lookup table (`table[dim](x)`) and `GET TIME VALUE`, read into
//! the representation.

use super::{CONTROL, clean, num, variable};
use eqm_sd::ir::*;

fn value<'f>(file: &'f SdFile, name: &str) -> &'f Expr {
    match &variable(file, name).definition {
        Definition::Uniform(Equation::Value(e)) => e,
        other => panic!("`{name}` is no value: {other:?}"),
    }
}

/// `:NA:` is Vensim's finite sentinel -2^109, exactly, so that `x = :NA:` can hold.
#[test]
fn na_is_the_finite_value_minus_two_to_the_109() {
    let file = clean(&format!(
        "v = IF THEN ELSE(Time > 5, :NA:, Time) ~~|\nw = :NA: ~~|\n{CONTROL}"
    ));
    let ExprKind::If { then, .. } = &value(&file, "v").kind else {
        panic!("an if-expression")
    };
    assert_eq!(num(then), -(2.0f64.powi(109)));
    assert_eq!(num(value(&file, "w")), -6.490_371_073_168_535e32);
}

/// Vensim reads a table's points in the order of their x values.
#[test]
fn table_points_out_of_order_are_read_in_order_of_x() {
    let file = clean(&format!("tbl((2,-3),(1,-7),(0,-1)) ~~|\n{CONTROL}"));
    let Definition::Uniform(Equation::Table(graph)) = &variable(&file, "tbl").definition else {
        panic!("a table")
    };
    assert_eq!(
        (graph.x.clone(), graph.y.clone()),
        (vec![0.0, 1.0, 2.0], vec![-1.0, -7.0, -3.0])
    );
}

/// `t[d](x)` calls the table of the element `d` stands for; `t[B](x)` a fixed one.
#[test]
fn a_call_of_an_arrayed_table_keeps_its_subscripts() {
    let file = clean(&format!(
        "d: A, B ~~|\nt[A]((0,0),(1,1)) ~~|\nt[B]((0,1),(1,0)) ~~|\ny[d] = t[d](Time) ~~|\nz = t[B](0.5) ~~|\n{CONTROL}"
    ));
    assert_eq!(variable(&file, "t").kind, Kind::Lookup);
    for (name, subscript) in [
        ("y", Subscript::Dimension("d".into())),
        ("z", Subscript::Element("B".into())),
    ] {
        let ExprKind::Call {
            function: Function::SubscriptedLookup(table, subscripts),
            args,
        } = &value(&file, name).kind
        else {
            panic!("`{name}` calls an element of the table")
        };
        assert_eq!(
            (table.as_str(), subscripts.clone(), args.len()),
            ("t", vec![subscript], 1)
        );
    }
}

/// `GET TIME VALUE(0, offset, 0)` is `Time + offset`.
#[test]
fn get_time_value_of_the_current_time_is_time_plus_the_offset() {
    let file = clean(&format!("a = GET TIME VALUE(0, 5, 0) ~~|\n{CONTROL}"));
    let ExprKind::Binary {
        op: BinaryOp::Add,
        left,
        right,
    } = &value(&file, "a").kind
    else {
        panic!("a sum")
    };
    assert!(
        matches!(&left.kind, ExprKind::Call { function: Function::Builtin(Builtin::Time), args } if args.is_empty()),
        "{left:?}"
    );
    assert_eq!(num(right), 5.0);
}

/// `INVERT MATRIX` and `VECTOR SELECT` keep their arguments, the selection's `d!` a wildcard
/// over `d`.
#[test]
fn invert_matrix_and_vector_select_map_onto_their_builtins() {
    let file = clean(&format!(
        "d: A, B ~~|\nd1: A, B ~~|\nm[d, d1] = 1, 2; 3, 4; ~~|\ninv[d, d1] = INVERT MATRIX(m[d, d1], 2) ~~|\n\
sel[d] = 1, 0 ~~|\nv = VECTOR SELECT(sel[d!], sel[d!], -1, 0, 0) ~~|\n{CONTROL}"
    ));
    let ExprKind::Call {
        function: Function::Builtin(Builtin::InvertMatrix),
        args,
    } = &value(&file, "inv").kind
    else {
        panic!("INVERT MATRIX")
    };
    assert_eq!(num(&args[1]), 2.0);
    let ExprKind::Call {
        function: Function::Builtin(Builtin::VectorSelect),
        args,
    } = &value(&file, "v").kind
    else {
        panic!("VECTOR SELECT")
    };
    assert_eq!(args.len(), 5);
    assert!(
        matches!(&args[0].kind, ExprKind::Variable { subscripts, .. } if subscripts == &vec![Subscript::Wildcard(Some("d".into()))]),
        "{:?}",
        args[0]
    );
}
