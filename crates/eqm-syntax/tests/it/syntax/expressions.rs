//! How expressions group and print, checked against a precedence table written as
//! parenthesised prefix forms.
//!
//! Operators must group as in Modelica, printed element-wise operators and negative literals
//! must parse back to the same structure, and normalization must ignore spans and redundant
//! parentheses.

use super::*;

/// Writes an expression fully parenthesised in prefix form, so tests can state its structure.
fn sexpr(e: &Expr) -> String {
    let list = |items: &[Expr]| items.iter().map(sexpr).collect::<Vec<_>>().join(" ");
    match &e.kind {
        ExprKind::Integer(v) => v.to_string(),
        ExprKind::Real(v) => format!("{v:?}"),
        ExprKind::String(s) => format!("{s:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Ref(c) => pretty::print_ref(c),
        ExprKind::Call { function, args } => {
            let mut parts: Vec<String> = args.positional.iter().map(sexpr).collect();
            parts.extend(args.named.iter().map(|(n, v)| format!("{}={}", n.name, sexpr(v))));
            format!("(call {} {})", pretty::print_ref(function), parts.join(" "))
        }
        ExprKind::PartialApplication { function, args } => {
            let parts: Vec<String> = args
                .named
                .iter()
                .map(|(n, v)| format!("{}={}", n.name, sexpr(v)))
                .collect();
            format!("(function {} {})", pretty::print_ref(function), parts.join(" "))
        }
        ExprKind::Lambda { params, body } => {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            format!("(lambda ({}) {})", names.join(" "), sexpr(body))
        }
        ExprKind::Unary { op, operand } => {
            let symbol = match op {
                UnaryOp::Neg => "neg",
                UnaryOp::Plus => "pos",
                UnaryOp::Not => "not",
                UnaryOp::ElemNeg => ".neg",
                UnaryOp::ElemPlus => ".pos",
            };
            format!("({symbol} {})", sexpr(operand))
        }
        ExprKind::Binary { op, lhs, rhs } => format!("({} {} {})", op.symbol(), sexpr(lhs), sexpr(rhs)),
        // A chain means the left-nested operations, and is written as them.
        ExprKind::Chain { first, rest } => rest.iter().fold(sexpr(first), |acc, (op, operand)| {
            format!("({} {acc} {})", op.symbol(), sexpr(operand))
        }),
        ExprKind::If { branches, else_value } => {
            let branches: Vec<String> = branches
                .iter()
                .map(|(c, v)| format!("{} {}", sexpr(c), sexpr(v)))
                .collect();
            format!("(if {} else {})", branches.join(" "), sexpr(else_value))
        }
        ExprKind::Array(items) => format!("(array {})", list(items)),
        ExprKind::Matrix(rows) => {
            let rows: Vec<String> = rows.iter().map(|r| format!("({})", list(r))).collect();
            format!("(matrix {})", rows.join(" "))
        }
        ExprKind::Range { start, step, stop } => match step {
            Some(step) => format!("(range {} {} {})", sexpr(start), sexpr(step), sexpr(stop)),
            None => format!("(range {} {})", sexpr(start), sexpr(stop)),
        },
        ExprKind::Tuple(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| i.as_ref().map_or("_".to_string(), sexpr))
                .collect();
            format!("(tuple {})", items.join(" "))
        }
        ExprKind::Error => "<error>".to_string(),
        ExprKind::End => "end".to_string(),
        ExprKind::Index { base, subscripts } => format!("(index {} {})", sexpr(base), subscripts.len()),
        ExprKind::Comprehension { body, indices } => format!("(for {} {})", sexpr(body), iterators(indices)),
        ExprKind::Reduction {
            function,
            body,
            indices,
        } => format!(
            "(reduce {} {} {})",
            pretty::print_ref(function),
            sexpr(body),
            iterators(indices)
        ),
    }
}

fn iterators(indices: &[ForIndex]) -> String {
    indices
        .iter()
        .map(|i| match &i.range {
            Some(r) => format!("({} {})", i.name.name, sexpr(r)),
            None => i.name.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn operators_group_as_in_modelica() {
    let table = [
        ("a + b - c", "(- (+ a b) c)"),
        ("a - b - c", "(- (- a b) c)"),
        ("a * b / c", "(/ (* a b) c)"),
        ("a / b * c", "(* (/ a b) c)"),
        ("a + b * c", "(+ a (* b c))"),
        ("a * b ^ c", "(* a (^ b c))"),
        ("-a ^ b", "(neg (^ a b))"),
        ("-a * b", "(neg (* a b))"),
        ("-a + b", "(+ (neg a) b)"),
        ("- 2 ^ 2", "(neg (^ 2 2))"),
        ("a .+ b .* c", "(.+ a (.* b c))"),
        ("a .^ b", "(.^ a b)"),
        (".-a .- b", "(.- (.neg a) b)"),
        ("a < b + c", "(< a (+ b c))"),
        ("not a < b", "(not (< a b))"),
        ("not a and b", "(and (not a) b)"),
        ("a or b and c", "(or a (and b c))"),
        ("a and b or c", "(or (and a b) c)"),
        ("a or b or c", "(or (or a b) c)"),
        ("1:n", "(range 1 n)"),
        ("1:2:n", "(range 1 2 n)"),
        ("a + 1:b or c", "(range (+ a 1) (or b c))"),
        ("if a then b else c + d", "(if a b else (+ c d))"),
        (
            "if a then b elseif c then d else if e then f else g",
            "(if a b c d else (if e f else g))",
        ),
        ("(a, , b)", "(tuple a _ b)"),
        ("f(x, y = 2)", "(call f x y=2)"),
        (
            "integrate(function poly(a = 2, b = k), 0)",
            "(call integrate (function poly a=2 b=k) 0)",
        ),
        (
            "function(s) = s * (1 - s / K) + 1",
            "(lambda (s) (+ (* s (- 1 (/ s K))) 1))",
        ),
        ("f(function(a, b) = a + b, 2)", "(call f (lambda (a b) (+ a b)) 2)"),
        ("initial()", "(call initial )"),
        ("[1, 2; 3, 4]", "(matrix (1 2) (3 4))"),
        ("{1, {2}}", "(array 1 (array 2))"),
        ("m[i].flange_a.s", "m[i].flange_a.s"),
        ("x[:, 1]", "x[:, 1]"),
        ("(((a)))", "a"),
        ("1 + .5 + 1e-3 + 2.5E+4", "(+ (+ (+ 1 0.5) 0.001) 25000.0)"),
        ("{i for i in 1:n}", "(for i (i (range 1 n)))"),
        (
            "{i*j for i in 1:2, j in 1:3}",
            "(for (* i j) (i (range 1 2)) (j (range 1 3)))",
        ),
        ("sum(x[i]^2 for i in 1:n)", "(reduce sum (^ x[i] 2) (i (range 1 n)))"),
        ("{{i for i in 1:2} for j in v}", "(for (for i (i (range 1 2))) (j v))"),
        ("x[end]", "x[end]"),
        ("x[end - 1] + y[2:end]", "(+ x[end - 1] y[2:end])"),
        ("A[end, :]", "A[end, :]"),
        ("f(x)[2]", "(index (call f x) 1)"),
        ("g(x, y)[end, :] + 1", "(+ (index (call g x y) 2) 1)"),
    ];
    let mut failures = Vec::new();
    for (text, expected) in table {
        let (e, diagnostics) = parse_expr(FileId(0), text);
        let got = e.as_ref().map_or("<none>".to_string(), sexpr);
        if got != expected || !diagnostics.is_empty() {
            failures.push(format!(
                "{text:?}: expected {expected}, got {got} ({} diagnostics)",
                diagnostics.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The printer must print element-wise operators so that a number before them is not read as a
/// real literal ending in a dot: `1 .* 2`, never `1.*2` (which is `1. * 2`).
#[test]
fn element_wise_operators_after_integers_survive_printing() {
    for text in ["1 .* 2", "1 ./ 2", "1 .^ 2", "1 .+ 2", "1 .- 2"] {
        let (e, diagnostics) = parse_expr(FileId(0), text);
        assert!(diagnostics.is_empty());
        let e = e.expect("the expression parses");
        let printed = pretty::print_expr(&e);
        let (again, _) = parse_expr(FileId(0), &printed);
        assert_eq!(
            again.as_ref().map(sexpr),
            Some(sexpr(&e)),
            "{text} printed as {printed}"
        );
    }
}

/// Later stages may build negative literals (constant folding); printed with their sign they
/// read as a unary minus, so they must get its parentheses.
#[test]
fn negative_literals_are_printed_as_valid_syntax() {
    let leaf = |kind| Expr::new(kind, Span::default());
    let a = leaf(ExprKind::Ref(ComponentRef {
        global: false,
        parts: vec![RefPart {
            name: Ident {
                name: "a".to_string(),
                span: Span::default(),
            },
            subscripts: Vec::new(),
        }],
        span: Span::default(),
    }));
    for literal in [ExprKind::Integer(-1), ExprKind::Real(-2.5), ExprKind::Real(-0.0)] {
        let product = leaf(ExprKind::Binary {
            op: BinaryOp::Pow,
            lhs: Box::new(a.clone()),
            rhs: Box::new(leaf(literal)),
        });
        let printed = pretty::print_expr(&product);
        let (parsed, diagnostics) = parse_expr(FileId(0), &printed);
        assert!(diagnostics.is_empty(), "{printed} does not parse");
        let parsed = sexpr(&parsed.expect("it parses"));
        assert!(parsed.starts_with("(^ a (neg "), "{printed} parsed as {parsed}");
    }
}

#[test]
fn normalization_ignores_spans_and_redundant_parentheses() {
    let (a, _) = parse_expr(FileId(0), "x * (y + 1)");
    let (b, _) = parse_expr(FileId(1), "  ((x)) *((y+(1)))");
    let (mut a, mut b) = (a.expect("parses"), b.expect("parses"));
    assert_ne!(a, b, "spans and parenthesis depth differ before normalising");
    normalize_expr(&mut a);
    normalize_expr(&mut b);
    assert_eq!(a, b);
    assert_eq!(a.span, Span::default());
    assert_eq!(
        a.depth, 3,
        "depth is structural after normalising: x * (y + 1) has three levels"
    );
}
