//! Property tests over random ASTs, checked against the trees they were printed from.
//!
//! Random expressions and whole files are pretty-printed and parsed again; the result must be
//! the same tree once normalized, and printing must be a fixed point.

use super::*;

// ---------------------------------------------------------------------------------------------
// Property tests: random ASTs survive printing and parsing.

/// True when `s` lexes as exactly one identifier, i.e. it is not a keyword.
fn is_identifier(s: &str) -> bool {
    let (e, diagnostics) = parse_expr(FileId(0), s);
    diagnostics.is_empty() && matches!(e, Some(Expr { kind: ExprKind::Ref(ref c), .. }) if c.parts.len() == 1)
}

fn ident() -> impl Strategy<Value = Ident> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,6}"
        .prop_filter("keywords are not identifiers", |s| is_identifier(s))
        .prop_map(|name| Ident {
            name,
            span: Span::default(),
        })
}

fn name() -> impl Strategy<Value = Name> {
    (any::<bool>(), prop::collection::vec(ident(), 1..4)).prop_map(|(global, parts)| Name {
        global,
        parts,
        span: Span::default(),
    })
}

fn leaf_expr() -> impl Strategy<Value = Expr> {
    let kind = prop_oneof![
        (0..=i64::MAX).prop_map(ExprKind::Integer),
        prop_oneof![
            (0.0f64..1e6),
            any::<f64>().prop_filter("literals are finite and not negative", |v| v.is_finite()
                && v.is_sign_positive())
        ]
        .prop_map(ExprKind::Real),
        "\\PC{0,6}".prop_map(ExprKind::String),
        "[\"\\\\\n\t\r\u{7}\u{8}\u{b}\u{c}a]{0,4}".prop_map(ExprKind::String),
        any::<bool>().prop_map(ExprKind::Bool),
        (any::<bool>(), prop::collection::vec(ident(), 1..3)).prop_map(|(global, names)| {
            ExprKind::Ref(ComponentRef {
                global,
                parts: names
                    .into_iter()
                    .map(|name| RefPart {
                        name,
                        subscripts: Vec::new(),
                    })
                    .collect(),
                span: Span::default(),
            })
        }),
    ];
    kind.prop_map(|k| Expr::new(k, Span::default()))
}

fn subscripts(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = Vec<Subscript>> {
    prop::collection::vec(
        prop_oneof![
            1 => Just(Subscript::Colon(Span::default())),
            3 => inner.prop_map(Subscript::Expr),
        ],
        0..3,
    )
}

fn component_ref(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = ComponentRef> {
    (any::<bool>(), prop::collection::vec((ident(), subscripts(inner)), 1..3)).prop_map(|(global, parts)| {
        ComponentRef {
            global,
            parts: parts
                .into_iter()
                .map(|(name, subscripts)| RefPart { name, subscripts })
                .collect(),
            span: Span::default(),
        }
    })
}

fn call_args(inner: BoxedStrategy<Expr>) -> impl Strategy<Value = CallArgs> {
    (
        prop::collection::vec(inner.clone(), 0..3),
        prop::collection::vec((ident(), inner), 0..3),
    )
        .prop_map(|(positional, named)| CallArgs {
            positional,
            named,
            span: Span::default(),
        })
}

fn unary_op() -> impl Strategy<Value = UnaryOp> {
    prop::sample::select(vec![
        UnaryOp::Neg,
        UnaryOp::Plus,
        UnaryOp::Not,
        UnaryOp::ElemNeg,
        UnaryOp::ElemPlus,
    ])
}

fn binary_op() -> impl Strategy<Value = BinaryOp> {
    use BinaryOp::*;
    prop::sample::select(vec![
        Add, Sub, Mul, Div, Pow, ElemAdd, ElemSub, ElemMul, ElemDiv, ElemPow, Eq, Ne, Lt, Le, Gt, Ge, And, Or,
    ])
}

fn expr() -> BoxedStrategy<Expr> {
    leaf_expr()
        .prop_recursive(5, 48, 4, |inner| {
            let kind = prop_oneof![
                (unary_op(), inner.clone()).prop_map(|(op, e)| ExprKind::Unary {
                    op,
                    operand: Box::new(e)
                }),
                (binary_op(), inner.clone(), inner.clone()).prop_map(|(op, l, r)| ExprKind::Binary {
                    op,
                    lhs: Box::new(l),
                    rhs: Box::new(r)
                }),
                (
                    prop::collection::vec((inner.clone(), inner.clone()), 1..3),
                    inner.clone()
                )
                    .prop_map(|(branches, e)| ExprKind::If {
                        branches,
                        else_value: Box::new(e)
                    }),
                prop::collection::vec(inner.clone(), 0..4).prop_map(ExprKind::Array),
                prop::collection::vec(prop::collection::vec(inner.clone(), 1..3), 1..3).prop_map(ExprKind::Matrix),
                (inner.clone(), prop::option::of(inner.clone()), inner.clone()).prop_map(|(start, step, stop)| {
                    ExprKind::Range {
                        start: Box::new(start),
                        step: step.map(Box::new),
                        stop: Box::new(stop),
                    }
                }),
                prop::collection::vec(prop::option::of(inner.clone()), 2..4).prop_map(ExprKind::Tuple),
                (prop::collection::vec(ident(), 1..3), inner.clone()).prop_map(|(params, body)| ExprKind::Lambda {
                    params,
                    body: Box::new(body)
                }),
                (component_ref(inner.clone()), call_args(inner.clone()))
                    .prop_map(|(function, args)| ExprKind::Call { function, args }),
                call_args(inner.clone()).prop_map(|args| ExprKind::Call {
                    function: ComponentRef {
                        global: false,
                        parts: vec![RefPart {
                            name: Ident {
                                name: "initial".to_string(),
                                span: Span::default()
                            },
                            subscripts: Vec::new()
                        }],
                        span: Span::default()
                    },
                    args
                }),
                component_ref(inner).prop_map(ExprKind::Ref),
            ];
            kind.prop_map(|k| Expr::new(k, Span::default()))
        })
        .boxed()
}

fn description() -> impl Strategy<Value = Option<Description>> {
    prop::option::weighted(
        0.2,
        "\\PC{0,8}".prop_map(|text| Description {
            text,
            span: Span::default(),
        }),
    )
}

fn class_modification(depth: u32) -> BoxedStrategy<ClassModification> {
    let argument = (
        any::<bool>(),
        any::<bool>(),
        name(),
        if depth == 0 {
            Just(None).boxed()
        } else {
            prop::option::of(modification(depth - 1)).boxed()
        },
        description(),
    )
        .prop_map(|(each, is_final, name, modification, description)| ModArgument {
            each,
            is_final,
            name,
            modification,
            description,
            redeclare: None,
            span: Span::default(),
        });
    // `redeclare [each] [final] [replaceable] Type name(...)` and `redeclare model M = N(...)`.
    let redeclaration = (
        any::<bool>(),
        any::<bool>(),
        redeclarable(),
        any::<bool>(),
        type_prefix(),
        name(),
        ident(),
        if depth == 0 {
            Just(None).boxed()
        } else {
            prop::option::of(class_modification(depth - 1)).boxed()
        },
    )
        .prop_map(
            |(each, is_final, mut redeclarable, is_class, prefixes, type_name, element, class_modification)| {
                redeclarable.redeclare = true;
                let name = Name {
                    global: false,
                    parts: vec![element.clone()],
                    span: Span::default(),
                };
                let redeclared = if is_class {
                    RedeclaredElement::Class(ClassDef {
                        encapsulated: false,
                        partial: false,
                        kind: ClassKind::Model,
                        name: element,
                        body: ClassBody::Short {
                            prefixes,
                            base: type_name,
                            dims: Vec::new(),
                            modification: class_modification,
                            description: None,
                            annotation: None,
                        },
                        redeclarable,
                        is_final: false,
                        span: Span::default(),
                    })
                } else {
                    RedeclaredElement::Component(ComponentClause {
                        is_final: false,
                        redeclarable,
                        inner: false,
                        outer: false,
                        prefixes,
                        type_name,
                        type_dims: Vec::new(),
                        components: vec![ComponentDecl {
                            name: element,
                            dims: Vec::new(),
                            modification: class_modification.map(|m| Modification {
                                class_modification: Some(m),
                                binding: None,
                                span: Span::default(),
                            }),
                            condition: None,
                            description: None,
                            annotation: None,
                            span: Span::default(),
                        }],
                        span: Span::default(),
                    })
                };
                ModArgument {
                    each,
                    is_final,
                    name,
                    modification: None,
                    description: None,
                    redeclare: Some(Box::new(redeclared)),
                    span: Span::default(),
                }
            },
        );
    let argument = prop_oneof![4 => argument, 1 => redeclaration];
    prop::collection::vec(argument, 0..3)
        .prop_map(|arguments| ClassModification {
            arguments,
            span: Span::default(),
        })
        .boxed()
}

fn modification(depth: u32) -> BoxedStrategy<Modification> {
    (prop::option::of(class_modification(depth)), prop::option::of(expr()))
        .prop_filter("a modification has a class modification or a binding", |(m, b)| {
            m.is_some() || b.is_some()
        })
        .prop_map(|(class_modification, binding)| Modification {
            class_modification,
            binding,
            span: Span::default(),
        })
        .boxed()
}

fn annotation() -> impl Strategy<Value = Option<Annotation>> {
    prop::option::weighted(
        0.15,
        class_modification(1).prop_map(|modification| Annotation {
            modification,
            span: Span::default(),
        }),
    )
}

fn type_prefix() -> impl Strategy<Value = TypePrefix> {
    (
        prop::sample::select(vec![Connection::None, Connection::Flow, Connection::Potential]),
        prop::sample::select(vec![
            Variability::Continuous,
            Variability::Discrete,
            Variability::Parameter,
            Variability::Constant,
        ]),
        prop::sample::select(vec![Causality::None, Causality::Input, Causality::Output]),
    )
        .prop_map(|(connection, variability, causality)| TypePrefix {
            connection,
            variability,
            causality,
        })
}

fn for_indices() -> impl Strategy<Value = Vec<ForIndex>> {
    prop::collection::vec(
        (ident(), prop::option::of(expr())).prop_map(|(name, range)| ForIndex { name, range }),
        1..3,
    )
}

fn equation() -> BoxedStrategy<Equation> {
    let leaf = prop_oneof![
        (expr(), expr()).prop_map(|(lhs, rhs)| EquationKind::Simple { lhs, rhs }),
        (component_ref(expr()), component_ref(expr())).prop_map(|(a, b)| EquationKind::Connect { a, b }),
        (component_ref(expr()), call_args(expr())).prop_map(|(function, args)| EquationKind::Call { function, args }),
    ];
    let kind = leaf.prop_recursive(3, 12, 3, |inner| {
        let body = prop::collection::vec(inner.prop_map(plain_equation), 0..3);
        prop_oneof![
            (prop::collection::vec((expr(), body.clone()), 1..3), body.clone())
                .prop_map(|(branches, else_branch)| EquationKind::If { branches, else_branch }),
            (for_indices(), body.clone()).prop_map(|(indices, body)| EquationKind::For { indices, body }),
            prop::collection::vec((expr(), body), 1..3).prop_map(|branches| EquationKind::When { branches }),
        ]
    });
    (kind, description(), annotation())
        .prop_map(|(kind, description, annotation)| Equation {
            kind,
            description,
            annotation,
            span: Span::default(),
        })
        .boxed()
}

fn plain_equation(kind: EquationKind) -> Equation {
    Equation {
        kind,
        description: None,
        annotation: None,
        span: Span::default(),
    }
}

fn statement() -> BoxedStrategy<Statement> {
    let targets = prop::collection::vec(prop::option::of(component_ref(expr())), 1..4)
        .prop_filter("a lone empty target is not writable", |t| t.len() > 1 || t[0].is_some());
    let leaf = prop_oneof![
        (component_ref(expr()), expr()).prop_map(|(target, value)| StatementKind::Assign { target, value }),
        (targets, component_ref(expr()), call_args(expr())).prop_map(|(targets, function, args)| {
            StatementKind::MultiAssign {
                targets,
                function,
                args,
            }
        }),
        (component_ref(expr()), call_args(expr())).prop_map(|(function, args)| StatementKind::Call { function, args }),
        Just(StatementKind::Return),
        Just(StatementKind::Break),
    ];
    let kind = leaf.prop_recursive(3, 12, 3, |inner| {
        let body = prop::collection::vec(
            inner.prop_map(|kind| Statement {
                kind,
                description: None,
                annotation: None,
                span: Span::default(),
            }),
            0..3,
        );
        prop_oneof![
            (prop::collection::vec((expr(), body.clone()), 1..3), body.clone())
                .prop_map(|(branches, else_branch)| StatementKind::If { branches, else_branch }),
            (for_indices(), body.clone()).prop_map(|(indices, body)| StatementKind::For { indices, body }),
            (expr(), body.clone()).prop_map(|(condition, body)| StatementKind::While { condition, body }),
            prop::collection::vec((expr(), body), 1..3).prop_map(|branches| StatementKind::When { branches }),
        ]
    });
    (kind, description(), annotation())
        .prop_map(|(kind, description, annotation)| Statement {
            kind,
            description,
            annotation,
            span: Span::default(),
        })
        .boxed()
}

fn component_clause() -> impl Strategy<Value = Element> {
    let decl = (
        ident(),
        subscripts(expr()),
        prop::option::of(modification(2)),
        prop::option::weighted(0.2, expr()),
        description(),
        annotation(),
    )
        .prop_map(
            |(name, dims, modification, condition, description, annotation)| ComponentDecl {
                name,
                dims,
                modification,
                condition,
                description,
                annotation,
                span: Span::default(),
            },
        );
    (
        (any::<bool>(), any::<bool>(), any::<bool>()),
        redeclarable(),
        type_prefix(),
        name(),
        subscripts(expr()),
        prop::collection::vec(decl, 1..3),
    )
        .prop_map(
            |((is_final, inner, outer), redeclarable, prefixes, type_name, type_dims, components)| {
                Element::Component(ComponentClause {
                    is_final,
                    redeclarable,
                    inner,
                    outer,
                    prefixes,
                    type_name,
                    type_dims,
                    components,
                    span: Span::default(),
                })
            },
        )
}

/// `replaceable`/`redeclare` prefixes, with a `constrainedby` clause only after `replaceable`.
fn redeclarable() -> impl Strategy<Value = Redeclarable> {
    (any::<bool>(), any::<bool>(), prop::option::of(name())).prop_map(|(replaceable, redeclare, constraint)| {
        Redeclarable {
            replaceable,
            redeclare,
            constraint: constraint.filter(|_| replaceable).map(|name| {
                Box::new(Constraint {
                    name,
                    modification: None,
                    description: None,
                    annotation: None,
                    span: Span::default(),
                })
            }),
        }
    })
}

fn import() -> impl Strategy<Value = Element> {
    let kind = prop_oneof![
        name().prop_map(ImportKind::Qualified),
        name().prop_map(ImportKind::Unqualified),
        (ident(), name()).prop_map(|(alias, name)| ImportKind::Renamed { alias, name }),
        (name(), prop::collection::vec(ident(), 1..3))
            .prop_map(|(package, names)| ImportKind::Multiple { package, names }),
    ];
    (kind, description(), annotation()).prop_map(|(kind, description, annotation)| {
        Element::Import(Import {
            kind,
            description,
            annotation,
            span: Span::default(),
        })
    })
}

fn extends() -> impl Strategy<Value = Element> {
    (name(), prop::option::of(class_modification(2)), annotation()).prop_map(|(base, modification, annotation)| {
        Element::Extends(Extends {
            base,
            modification,
            annotation,
            span: Span::default(),
            // Only the parser makes a clause extending the inherited class, always first in a
            // class of the base's name; the valid corpus covers it.
            inherited: false,
        })
    })
}

fn class_kind() -> impl Strategy<Value = ClassKind> {
    use ClassKind::*;
    prop::sample::select(vec![Class, Model, Block, Connector, Package, Function, Record, Type])
}

fn section(element: BoxedStrategy<Element>) -> impl Strategy<Value = Section> {
    prop_oneof![
        (
            prop::sample::select(vec![Visibility::Public, Visibility::Protected]),
            prop::collection::vec(element, 0..4)
        )
            .prop_map(|(visibility, elements)| Section::Elements {
                visibility,
                elements,
                span: Span::default()
            }),
        (any::<bool>(), prop::collection::vec(equation(), 0..4)).prop_map(|(initial, equations)| {
            Section::Equations {
                initial,
                equations,
                span: Span::default(),
            }
        }),
        (any::<bool>(), prop::collection::vec(statement(), 0..4)).prop_map(|(initial, statements)| {
            Section::Algorithm {
                initial,
                statements,
                span: Span::default(),
            }
        }),
        prop::collection::vec(equation(), 0..3).prop_map(|equations| Section::Invariants {
            equations,
            span: Span::default()
        }),
    ]
}

fn class_def() -> BoxedStrategy<ClassDef> {
    let short = (
        type_prefix(),
        name(),
        subscripts(expr()),
        prop::option::of(class_modification(2)),
        description(),
        annotation(),
    )
        .prop_map(
            |(prefixes, base, dims, modification, description, annotation)| ClassBody::Short {
                prefixes,
                base,
                dims,
                modification,
                description,
                annotation,
            },
        );
    let leaf_class = (any::<bool>(), any::<bool>(), class_kind(), ident(), short).prop_map(
        |(encapsulated, partial, kind, name, body)| ClassDef {
            encapsulated,
            partial,
            kind,
            name,
            body,
            redeclarable: Redeclarable::default(),
            is_final: false,
            span: Span::default(),
        },
    );
    leaf_class
        .prop_recursive(2, 6, 3, |inner| {
            let element = prop_oneof![
                3 => component_clause(),
                1 => import(),
                1 => extends(),
                1 => inner.prop_map(|c| Element::Class(Box::new(c))),
            ]
            .boxed();
            (
                any::<bool>(),
                any::<bool>(),
                class_kind(),
                ident(),
                description(),
                prop::collection::vec(section(element), 0..4),
                annotation(),
            )
                .prop_map(
                    |(encapsulated, partial, kind, name, description, sections, annotation)| ClassDef {
                        encapsulated,
                        partial,
                        kind,
                        body: ClassBody::Long {
                            description,
                            sections,
                            annotation,
                            end_name: name.clone(),
                        },
                        name,
                        redeclarable: Redeclarable::default(),
                        is_final: false,
                        span: Span::default(),
                    },
                )
        })
        .boxed()
}

fn stored_definition() -> impl Strategy<Value = StoredDefinition> {
    (
        prop::option::of(prop::option::of(name())),
        prop::collection::vec(class_def(), 0..3),
    )
        .prop_map(|(within, classes)| StoredDefinition {
            within,
            classes,
            span: Span::default(),
        })
}

proptest! {
    // Failures print their minimal input; persisting seeds would need a source directory
    // layout that integration tests do not have.
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_e9f1), ..ProptestConfig::default() })]

    #[test]
    fn printed_expressions_parse_back(e in expr()) {
        let printed = pretty::print_expr(&e);
        let (parsed, diagnostics) = parse_expr(FileId(0), &printed);
        prop_assert!(diagnostics.is_empty(), "{printed:?} gave {diagnostics:?}");
        let mut parsed = parsed.expect("an expression without diagnostics");
        let mut expected = e;
        normalize_expr(&mut parsed);
        normalize_expr(&mut expected);
        prop_assert_eq!(parsed, expected, "printed as {:?}", printed);
    }

    #[test]
    fn printed_files_parse_back(file in stored_definition()) {
        assert_round_trip("generated.eqm", &file);
    }
}
