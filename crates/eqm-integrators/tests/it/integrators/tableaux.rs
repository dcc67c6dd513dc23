//! Methods by name and Butcher tableaux, checked against the orders they declare.
//!
//! Named methods parse back to themselves; user and built-in tableaux report the orders that
//! the order conditions give and round-trip through their text form; invalid tableaux are
//! rejected with a message and, where it applies, a line.

use super::*;

const BUILT_IN: [Tableau; 6] = [
    tableau::EULER,
    tableau::HEUN,
    tableau::MIDPOINT,
    tableau::RK4,
    tableau::FEHLBERG45,
    tableau::DORMAND_PRINCE54,
];

#[test]
fn methods_parse_by_name() {
    for method in Method::NAMED {
        assert_eq!(Method::parse(method.name()), Some(method.clone()));
        let options = Options {
            step: Some(0.1),
            ..Options::default()
        };
        assert_eq!(stepper_for(&method, &options).name(), method.name());
    }
    assert_eq!(Method::parse("rk5"), None);
    assert!(Method::Dopri5.is_adaptive() && !Method::Ab2.is_adaptive());
}

#[test]
fn user_tableaux_report_their_order_and_round_trip() {
    let kutta = Tableau::parse(KUTTA3).expect("parses");
    assert_eq!((kutta.name(), kutta.stages(), kutta.order()), ("kutta3", 3, 3));
    assert_eq!(kutta.a(2, 0), -1.0);
    assert_eq!(three_eighths().order(), 4);
    let bs = Tableau::parse(BOGACKI_SHAMPINE).expect("parses");
    assert_eq!((bs.order(), bs.embedded_order(), bs.is_fsal()), (3, Some(2), true));
    for t in [kutta, three_eighths(), bs].into_iter().chain(BUILT_IN) {
        let text = t.to_text();
        let back = Tableau::parse(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", t.name()));
        assert_eq!(back, t, "{text}");
    }
}

#[test]
fn built_in_tableaux_have_the_orders_they_declare() {
    for t in &BUILT_IN {
        let checked = rechecked(t);
        assert_eq!(
            (checked.order(), checked.embedded_order()),
            (t.order(), t.embedded_order()),
            "{}",
            t.name()
        );
        assert_eq!(t.is_fsal(), t.name() == "dopri5", "{}", t.name());
    }
    let orders: Vec<(u32, Option<u32>)> = BUILT_IN.iter().map(|t| (t.order(), t.embedded_order())).collect();
    assert_eq!(
        orders,
        vec![(1, None), (2, None), (2, None), (4, None), (5, Some(4)), (5, Some(4))]
    );
}

#[test]
fn invalid_tableaux_are_rejected_with_a_message() {
    let rejected = |text: &str, needle: &str, line: Option<usize>| {
        let e = Tableau::parse(text).expect_err(text);
        assert!(e.message.contains(needle), "{text}: {e}");
        assert_eq!(e.line, line, "{text}: {e}");
    };
    rejected("0 | 0 1\n1 | 1\n| 1/2 1/2\n", "above the diagonal", None);
    rejected("0 |\n1/2 | 1/2\n| 0.4 0.5\n", "sum to 1", None);
    rejected("0 |\n1/2 | 0.4\n| 0 1\n", "row sum", None);
    rejected("0 |\n1/2 | 1/2\n| 1\n", "1 entries but there are 2 stages", None);
    rejected("0 |\n1/2 | 1/2 0 0\n| 0 1\n", "more than the 2 stages", None);
    rejected("order 3\n0 |\n1/2 | 1/2\n| 0 1\n", "declared order 3", Some(1));
    rejected("0 |\n1/2 | x\n| 0 1\n", "`x` is not a number", Some(2));
    rejected("0 |\n1/2 | 1/0\n| 0 1\n", "`1/0` is not a number", Some(2));
    rejected("0 |\n1/2 | 1/2\n| 0 1\n| 0 1\n", "cannot estimate", None);
    rejected("0 |\n1/2 | 1/2\n", "no weight row", None);
    rejected("# nothing\n| 1\n", "at least one stage", None);
    rejected("0 |\n| 1\n0 |\n", "after the weights", Some(3));
    rejected("hello\n", "expected", Some(1));
    assert!(Tableau::new("bad", vec![0.0], vec![vec![0.0], vec![0.0]], vec![1.0], None).is_err());
}
