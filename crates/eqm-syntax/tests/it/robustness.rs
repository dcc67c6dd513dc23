//! The front end on hostile input: deep nesting, huge files and random or mutated text.
//!
//! The contract under test (the crate root, `src/lib.rs`): parsing never panics and never overflows
//! the stack; broken input gives diagnostics whose spans lie inside the file. Expression depth is
//! bounded by the parser (E0106), and so are the nesting of classes (E0112) and of equations and
//! statements (E0113); trees just below those bounds are still deep, so tests that build them
//! run on the compiler's large stack, as the CLI does.

use crate::models::*;
use eqm_diag::source::{FileId, SourceMap};
use eqm_diag::{self as diag, Diagnostic};
use eqm_syntax::ast::{BinaryOp, Expr, ExprKind, MAX_BLOCK_DEPTH, MAX_CLASS_DEPTH, StoredDefinition};
use eqm_syntax::lexer::Lexer;
use eqm_syntax::normalize::normalize_file;
use eqm_syntax::with_compiler_stack;
use eqm_syntax::{parse_file, pretty};
use std::path::{Path, PathBuf};

/// Parses `text` and checks the invariants every parse must keep, whatever the input.
fn parse_checked(text: &str) -> (StoredDefinition, Vec<Diagnostic>) {
    let (ast, diagnostics) = parse_file(FileId(0), text);
    for d in &diagnostics {
        assert!(!d.labels.is_empty(), "a parse diagnostic without a location: {d:?}");
        for label in &d.labels {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(
                start <= end && end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end),
                "span {start}..{end} of {} is outside the text ({} bytes) or splits a character:\n{text:?}",
                d.code,
                text.len()
            );
        }
    }
    (ast, diagnostics)
}

fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|d| d.code).collect()
}

// ---------------------------------------------------------------------------------------------
// Deep nesting.

/// Each of these expressions nests 10 000 levels deep; each must give exactly one E0106.
fn deep_expressions() -> Vec<(&'static str, String)> {
    vec![
        ("parentheses", format!("{}a{}", "(".repeat(DEEP), ")".repeat(DEEP))),
        (
            "if-expressions",
            format!("{}0{}", "if c then ".repeat(DEEP), " else 1".repeat(DEEP)),
        ),
        (
            "if-expressions in the else branch",
            format!("{}0", "if c then 1 else ".repeat(DEEP)),
        ),
        ("calls", format!("{}0{}", "f(".repeat(DEEP), ")".repeat(DEEP))),
        ("arrays", format!("{}0{}", "{".repeat(DEEP), "}".repeat(DEEP))),
        ("negations", format!("{}0{}", "-(".repeat(DEEP), ")".repeat(DEEP))),
        ("subscripts", format!("{}0{}", "x[".repeat(DEEP), "]".repeat(DEEP))),
        // Long flat sums are not deep (see below), but sums nested on the right are.
        (
            "right-nested sums",
            format!("{}a{}", "a + (".repeat(DEEP), ")".repeat(DEEP)),
        ),
        (
            "right-nested conjunctions",
            format!("{}p{}", "p and (".repeat(DEEP), ")".repeat(DEEP)),
        ),
    ]
}

#[test]
fn deeply_nested_expressions_are_rejected_once_without_overflow() {
    with_compiler_stack(|| {
        for (what, rhs) in deep_expressions() {
            let (_, diagnostics) = parse_checked(&model_with_equation(&rhs));
            assert_eq!(codes(&diagnostics), ["E0106"], "{what}");
        }
    });
}

/// Expression depth is bounded while the tree is built, so even the ordinary 2 MiB test-thread
/// stack suffices to parse, inspect and drop a maximally deep expression.
#[test]
fn the_expression_bound_protects_ordinary_stacks() {
    let text = model_with_equation(&format!("{}a{}", "(".repeat(DEEP), ")".repeat(DEEP)));
    let (ast, diagnostics) = parse_checked(&text);
    assert_eq!(codes(&diagnostics), ["E0106"]);
    let mut copy = ast.clone();
    normalize_file(&mut copy);
    assert!(pretty::print_file(&ast).contains("/* error */"));
}

#[test]
fn expressions_just_below_the_bound_are_accepted() {
    // A leaf has depth 1 and each pair of parentheses adds one level.
    let depth = eqm_syntax::ast::MAX_EXPR_DEPTH as usize - 1;
    let text = model_with_equation(&format!("{}a{}", "(".repeat(depth), ")".repeat(depth)));
    let (_, diagnostics) = parse_checked(&text);
    assert!(diagnostics.is_empty(), "{:?}", codes(&diagnostics));
}

/// Long runs of one left-associative operator are one flat chain, not nesting: 20 000 operands
/// parse without a diagnostic into a node two levels deep, and printing, reparsing, normalising,
/// comparing, cloning and dropping them work on the ordinary 2 MiB test-thread stack, which
/// a pass recursing once per term would overflow.
#[test]
fn long_flat_chains_are_not_nesting() {
    let n = 20_000;
    for op in ["+", "-", ".*", "and"] {
        let operand = if matches!(op, "and" | "or") { "p" } else { "a" };
        let rhs = vec![operand; n].join(&format!(" {op} "));
        let (ast, diagnostics) = parse_checked(&model_with_equation(&rhs));
        assert!(diagnostics.is_empty(), "{op}: {:?}", codes(&diagnostics));
        let expr = first_equation_rhs(&ast);
        let ExprKind::Chain { rest, .. } = &expr.kind else {
            panic!("{op}: not one chain");
        };
        assert_eq!(rest.len(), n - 1, "{op}");
        assert_eq!(expr.depth, 2, "{op}");
        let printed = pretty::print_file(&ast);
        let (reparsed, diagnostics) = parse_checked(&printed);
        assert!(diagnostics.is_empty(), "{op}: {:?}", codes(&diagnostics));
        let (mut a, mut b) = (ast.clone(), reparsed);
        normalize_file(&mut a);
        normalize_file(&mut b);
        assert!(a == b, "{op}: the chain does not survive printing");
    }
}

/// A chain is what nested left-associative operations mean: parentheses around the left operand
/// change nothing, parentheses around a right operand make a new operand, and operators of
/// different levels nest as usual.
#[test]
fn chains_keep_the_meaning_of_the_operators() {
    let normalized = |rhs: &str| {
        let (mut ast, diagnostics) = parse_checked(&model_with_equation(rhs));
        assert!(diagnostics.is_empty(), "{rhs}: {:?}", codes(&diagnostics));
        normalize_file(&mut ast);
        ast
    };
    assert!(normalized("(a + b) - c + d") == normalized("a + b - c + d"));
    assert!(normalized("a - (b - c)") != normalized("a - b - c"));
    assert!(normalized("a * b + c * d + e") != normalized("a * (b + c) * d + e"));
    let (ast, _) = parse_checked(&model_with_equation("a - (b - c) + d * e * f"));
    let ExprKind::Chain { first, rest } = &first_equation_rhs(&ast).kind else {
        panic!("a sum of three operands is a chain");
    };
    assert!(matches!(first.kind, ExprKind::Ref(_)));
    assert!(matches!(
        rest[0],
        (
            BinaryOp::Sub,
            Expr {
                kind: ExprKind::Binary { op: BinaryOp::Sub, .. },
                ..
            }
        )
    ));
    assert!(matches!(&rest[1].1.kind, ExprKind::Chain { rest, .. } if rest.len() == 2));
    assert_eq!(
        pretty::print_file(&ast).lines().nth(3).map(str::trim),
        Some("x = a - (b - c) + d*e*f;")
    );
}

/// A syntax error after an expression that is too deep gives one diagnostic of its own, not a
/// cascade: the depth error is reported once, recovery resumes at the next `;`, and the
/// equations after it parse.
#[test]
fn a_syntax_error_after_the_depth_error_does_not_cascade() {
    let deep = 2 * eqm_syntax::ast::MAX_EXPR_DEPTH as usize;
    let open = "(".repeat(deep);
    let close = ")".repeat(deep);
    let cases = [
        (format!("{open}1{close} + ) ) )"), vec!["E0106", "E0110"]),
        (format!("{open}1{}", ")".repeat(deep / 2)), vec!["E0106", "E0110"]),
        (format!("{open}1 + "), vec!["E0110"]),
        (
            format!("{}1{} }}}}}}", "{".repeat(deep), "}".repeat(deep)),
            vec!["E0106", "E0110"],
        ),
        (format!("{}1, ", "f(".repeat(deep)), vec!["E0110"]),
    ];
    for (rhs, expected) in cases {
        let text = format!("model M\n  Real x;\nequation\n  x = {rhs};\n  y = 2;\n  z = = 3;\n  w = 4;\nend M;\n");
        let (_, diagnostics) = parse_checked(&text);
        let mut expected = expected;
        // The deliberate second error, two lines further down.
        expected.push("E0110");
        assert_eq!(
            codes(&diagnostics),
            expected,
            "{}",
            &rhs[rhs.len().saturating_sub(40)..]
        );
    }
}

/// The right-hand side of the first equation of the generated model.
fn first_equation_rhs(ast: &StoredDefinition) -> &Expr {
    let eqm_syntax::ast::ClassBody::Long { sections, .. } = &ast.classes[0].body else {
        panic!("the generated model is a long class");
    };
    sections
        .iter()
        .find_map(|s| match s {
            eqm_syntax::ast::Section::Equations { equations, .. } => equations.first(),
            _ => None,
        })
        .and_then(|eq| match &eq.kind {
            eqm_syntax::ast::EquationKind::Simple { rhs, .. } => Some(rhs),
            _ => None,
        })
        .expect("the generated model has a simple equation")
}

/// Nested blocks far below `MAX_BLOCK_DEPTH` (which real models never come near) must parse,
/// print and compare on the compiler stack; classes are bounded at `MAX_CLASS_DEPTH` levels.
#[test]
fn deeply_nested_blocks_parse_on_the_compiler_stack() {
    with_compiler_stack(|| {
        for (what, text) in [
            ("if-equations", nested_if_equations(DEEP)),
            ("for-loops", nested_for_loops(DEEP)),
            ("while and when statements", nested_when_statements(DEEP / 2)),
            // `nested_classes(d)` is d packages around a model.
            ("classes", nested_classes(MAX_CLASS_DEPTH - 1)),
        ] {
            let (ast, diagnostics) = parse_checked(&text);
            assert!(diagnostics.is_empty(), "{what}: {:?}", codes(&diagnostics));
            // The recursive passes over the tree (normalising, cloning, comparing, dropping)
            // must cope with it too.
            let mut normalized = ast.clone();
            normalize_file(&mut normalized);
            assert_eq!(normalized, normalized.clone(), "{what}");
        }
    });
}

/// Printing indents by nesting level, so the round trip of deep blocks uses a smaller depth to
/// keep the printed text (quadratic in the depth) small.
#[test]
fn deeply_nested_blocks_round_trip() {
    with_compiler_stack(|| {
        for text in [
            nested_if_equations(1000),
            nested_for_loops(1000),
            nested_when_statements(500),
            nested_classes(MAX_CLASS_DEPTH - 1),
        ] {
            let (ast, diagnostics) = parse_checked(&text);
            assert!(diagnostics.is_empty());
            let (reparsed, diagnostics) = parse_checked(&pretty::print_file(&ast));
            assert!(diagnostics.is_empty());
            let (mut a, mut b) = (ast, reparsed);
            normalize_file(&mut a);
            normalize_file(&mut b);
            assert!(a == b, "deep nesting does not survive printing");
        }
    });
}

/// A file with unbalanced deep nesting reports where it ends, without overflowing.
#[test]
fn unclosed_deep_nesting_is_one_error() {
    with_compiler_stack(|| {
        let text = format!("model M\nequation\n{}x = 1;\n", "if c then\n".repeat(DEEP));
        let (_, diagnostics) = parse_checked(&text);
        assert_eq!(codes(&diagnostics), ["E0111"]);
        let text = "package P\n".repeat(DEEP);
        let (_, diagnostics) = parse_checked(&text);
        assert_eq!(codes(&diagnostics), ["E0111"]);
    });
}

/// Broken text deep inside nested blocks. Error recovery skips it in the innermost block; if it
/// left the skipping to lalrpop, every skipped token would cost time quadratic in the depth
/// (this input took six minutes before the grammar skipped by itself).
#[test]
fn garbage_in_deep_nesting_is_skipped_quickly() {
    with_compiler_stack(|| {
        let text = format!(
            "model M\nequation\n{}{}\n{}end M;\n",
            "if c then\n".repeat(DEEP),
            ") ".repeat(2 * DEEP),
            "end if;\n".repeat(DEEP)
        );
        let start = std::time::Instant::now();
        let (_, diagnostics) = parse_checked(&text);
        assert!(!diagnostics.is_empty());
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "recovery took {:?}",
            start.elapsed()
        );
    });
}

// ---------------------------------------------------------------------------------------------
// Large files.

/// A model of `lines` lines of ordinary declarations and equations (the benchmark uses the same
/// shape at a million lines).
fn large_model(lines: usize) -> String {
    let n = lines / 2;
    let mut text = String::with_capacity(lines * 40);
    text.push_str("model Large \"generated\"\n");
    for i in 0..n {
        text.push_str(&format!("  Real x{i}(start = {i}.5, fixed = true) \"state {i}\";\n"));
    }
    text.push_str("equation\n");
    for i in 0..n {
        text.push_str(&format!(
            "  der(x{i}) = -0.5*x{i} + sin(time)*x{} / (1 + x{i}^2);\n",
            (i + 1) % n
        ));
    }
    text.push_str("end Large;\n");
    text
}

#[test]
fn a_large_file_parses() {
    let text = large_model(100_000);
    let (ast, diagnostics) = parse_checked(&text);
    assert!(diagnostics.is_empty());
    let eqm_syntax::ast::ClassBody::Long { sections, .. } = &ast.classes[0].body else {
        panic!("the generated model is a long class");
    };
    assert_eq!(sections.len(), 2);
}

/// Files full of errors: every missing `;` and every invalid character is reported once. The
/// bookkeeping per error is constant, so these stay fast; a quadratic regression shows up here
/// as a test that takes minutes.
#[test]
fn files_full_of_errors_report_each_once() {
    let n = 5_000;
    let text = format!("model M\nequation\n{}end M;\n", "x = 1\ny = 2;\n".repeat(n));
    let (_, diagnostics) = parse_checked(&text);
    assert_eq!(codes(&diagnostics), vec!["E0107"; n]);
    let text = format!("model M\n{}end M;\n", "  Real x = 1 $ 2;\n".repeat(n));
    let (_, diagnostics) = parse_checked(&text);
    assert_eq!(codes(&diagnostics), vec!["E0101"; n]);
    let text = format!(
        "model M\n{}end M;\n",
        "  Real x = 1 /* c */\n  Real y = 2 */ z;\n".repeat(n)
    );
    let (_, diagnostics) = parse_checked(&text);
    assert_eq!(
        diagnostics.len(),
        2 * n,
        "one missing `;` and one unexpected `/` per pair of lines"
    );
}

// ---------------------------------------------------------------------------------------------
// Random and mutated input.

/// SplitMix64: a small, seedable generator, so every failure reproduces from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Fragments of EQM text, valid and invalid, from which token soup is made.
const VOCABULARY: &[&str] = &[
    "model",
    "block",
    "connector",
    "package",
    "function",
    "record",
    "type",
    "class",
    "end",
    "within",
    "extends",
    "import",
    "encapsulated",
    "partial",
    "final",
    "each",
    "flow",
    "potential",
    "stream",
    "discrete",
    "parameter",
    "constant",
    "input",
    "output",
    "public",
    "protected",
    "equation",
    "initial equation",
    "algorithm",
    "initial algorithm",
    "invariant",
    "if",
    "then",
    "elseif",
    "else",
    "for",
    "in",
    "loop",
    "while",
    "when",
    "elsewhen",
    "connect",
    "der",
    "initial",
    "annotation",
    "return",
    "break",
    "and",
    "or",
    "not",
    "true",
    "false",
    "replaceable",
    "x",
    "M",
    "Real",
    "a.b",
    "m[i].s",
    "1",
    "1.5",
    ".5",
    "1e-3",
    "2.5E+4",
    "1e",
    "2x",
    "99999999999999999999",
    "1e999",
    "\"s\"",
    "\"esc\\q\"",
    "\"open",
    "/* c */",
    "/* open",
    "// line\n",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    ".",
    "=",
    ":=",
    "+",
    "-",
    "*",
    "/",
    "^",
    ".+",
    ".-",
    ".*",
    "./",
    ".^",
    "==",
    "<>",
    "<",
    "<=",
    ">",
    ">=",
    "$",
    "'q'",
    "'",
    "€",
    "é",
    "\u{0}",
    "\t",
    "\n",
    " ",
    "\r\n",
];

fn random_bytes(rng: &mut Rng) -> String {
    let len = rng.below(120);
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            // Mostly printable ASCII, so that the lexer sees plausible tokens, and some raw bytes.
            if rng.below(8) == 0 {
                rng.next() as u8
            } else {
                32 + rng.below(95) as u8
            }
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn token_soup(rng: &mut Rng) -> String {
    let len = rng.below(60);
    let mut text = String::new();
    for _ in 0..len {
        let word: &&str = rng.pick(VOCABULARY);
        text.push_str(word);
        if rng.below(3) > 0 {
            text.push(' ');
        }
    }
    text
}

/// Splits a corpus file into tokens, each with the trivia (spaces, comments) before it, so
/// that mutations work on tokens and joining the pieces gives back the file.
fn tokenize(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut last = 0;
    for (_, _, end) in Lexer::new(text, FileId(0)).flatten() {
        pieces.push(text[last..end].to_string());
        last = end;
    }
    pieces.push(text[last..].to_string());
    pieces
}

fn mutate(rng: &mut Rng, tokens: &[String]) -> String {
    let mut tokens = tokens.to_vec();
    for _ in 0..1 + rng.below(4) {
        let n = tokens.len();
        let i = rng.below(n);
        match rng.below(6) {
            0 => {
                tokens.remove(i);
            }
            1 => tokens.insert(i, tokens[i].clone()),
            2 => tokens.swap(i, rng.below(n)),
            3 => tokens.insert(i, format!(" {}", rng.pick(VOCABULARY))),
            4 => tokens[i] = format!(" {}", rng.pick(VOCABULARY)),
            _ => {
                // Truncate, which exercises every "unexpected end of file" path.
                tokens.truncate(i.max(1));
            }
        }
        if tokens.is_empty() {
            tokens.push(String::new());
        }
    }
    tokens.concat()
}

fn corpus() -> Vec<Vec<String>> {
    let mut files: Vec<PathBuf> = ["tests/it/syntax/valid", "tests/it/syntax/invalid"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).expect("corpus dir"))
        .map(|entry| entry.expect("corpus entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "eqm"))
        // Deep nesting has its own tests above; mutating it here would only make this test slow.
        .filter(|p| !p.ends_with("too_deep.eqm"))
        .collect();
    // Directory order is unspecified; sorting keeps every seed reproducing the same input.
    files.sort();
    files
        .iter()
        .map(|p| tokenize(&std::fs::read_to_string(p).expect("corpus file")))
        .collect()
}

/// Runs `count` random inputs of one kind from `seed`. Every 64th input also has its diagnostics
/// rendered, since rendering must cope with whatever spans the parser produces.
///
/// `EQM_FUZZ_SCALE=N` multiplies the count for longer local runs (best in release mode); the
/// default keeps the suite fast in debug builds.
fn fuzz(seed: u64, count: usize, generate: impl Fn(&mut Rng) -> String) {
    let scale: usize = std::env::var("EQM_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng(seed);
    for i in 0..count * scale {
        let text = generate(&mut rng);
        let result = std::panic::catch_unwind(|| parse_checked(&text));
        let (_, diagnostics) =
            result.unwrap_or_else(|_| panic!("input {i} of seed {seed:#x} panicked the parser:\n{text:?}"));
        if i % 64 == 0 {
            let mut sources = SourceMap::new();
            sources.add("input.eqm", text.as_str());
            diag::render_all(&diagnostics, &sources, false);
        }
    }
}

// 100 000 inputs in all, split over tests so that the test harness runs them in parallel.

#[test]
fn random_bytes_never_panic() {
    fuzz(0x5eed_0001, 30_000, random_bytes);
}

#[test]
fn token_soup_never_panics() {
    fuzz(0x5eed_0002, 30_000, token_soup);
}

fn mutated_corpus(seed: u64, count: usize) {
    let corpus = corpus();
    fuzz(seed, count, |rng| {
        let file = rng.pick(&corpus);
        mutate(rng, file)
    });
}

#[test]
fn mutated_corpus_files_never_panic() {
    mutated_corpus(0x5eed_0003, 20_000);
}

#[test]
fn more_mutated_corpus_files_never_panic() {
    mutated_corpus(0x5eed_0004, 20_000);
}

/// One level of classes more than `MAX_CLASS_DEPTH` is E0112, once, at the class too deep; the
/// walk that finds it is iterative, so a far deeper file is reported the same way.
#[test]
fn classes_nested_too_deeply_are_rejected_once() {
    with_compiler_stack(|| {
        for depth in [MAX_CLASS_DEPTH, DEEP] {
            let text = nested_classes(depth);
            let (_, diagnostics) = parse_checked(&text);
            assert_eq!(codes(&diagnostics), ["E0112"], "depth {depth}");
            // The first class beyond the bound: the model inside 1000 packages, or package P1000.
            let span = diagnostics[0].primary_span().expect("a located diagnostic");
            let name = &text[span.start as usize..span.end as usize];
            assert_eq!(
                name,
                if depth == MAX_CLASS_DEPTH { "M" } else { "P1000" },
                "depth {depth}"
            );
        }
    });
}

/// One level of blocks more than `MAX_BLOCK_DEPTH` is E0113, once, at the start of the first
/// equation or statement too deep; a tree exactly `MAX_BLOCK_DEPTH` deep is accepted. The walk
/// that finds it is iterative, so a far deeper file is reported the same way.
#[test]
fn blocks_nested_too_deeply_are_rejected_once() {
    with_compiler_stack(|| {
        // `nested_if_equations(d)` is d ifs around `x = 1`, which is at depth d + 1.
        let (_, diagnostics) = parse_checked(&nested_if_equations(MAX_BLOCK_DEPTH - 1));
        assert!(diagnostics.is_empty(), "{:?}", codes(&diagnostics));
        // `nested_when_statements(d)` alternates d whiles and d whens, 2d levels around `x := 1`:
        // one more pair puts the while at depth MAX_BLOCK_DEPTH + 1 (the bound is even).
        let too_deep = [
            (nested_if_equations(MAX_BLOCK_DEPTH), "x = 1;"),
            (nested_if_equations(2 * MAX_BLOCK_DEPTH), "if c then"),
            (nested_for_loops(MAX_BLOCK_DEPTH + 1), "for i in"),
            (nested_when_statements(MAX_BLOCK_DEPTH / 2 + 1), "while true"),
        ];
        for (text, first_too_deep) in too_deep {
            let (_, diagnostics) = parse_checked(&text);
            assert_eq!(codes(&diagnostics), ["E0113"], "{first_too_deep}");
            let span = diagnostics[0].primary_span().expect("a located diagnostic");
            let at = &text[span.start as usize..];
            assert!(at.starts_with(first_too_deep), "{first_too_deep}: {:?}", &at[..20]);
            // It is the equation or statement at depth MAX_BLOCK_DEPTH + 1: as many blocks open
            // before it as the bound allows.
            let opens_block = |line: &&str| ["if ", "for ", "while ", "when "].iter().any(|k| line.starts_with(k));
            let opened_blocks = text[..span.start as usize].lines().filter(opens_block).count();
            assert_eq!(opened_blocks, MAX_BLOCK_DEPTH, "{first_too_deep}");
        }
    });
}
