//! The expressions of Vensim equations, read into the shared representation.
//!
//! Input: the tokens of an equation's right-hand side and the [`Scope`] of names the file
//! defines. Output: an [`Expr`] whose calls are already mapped onto [`Builtin`]s, graphical
//! function calls and macro calls (see [`crate::vensim::builtins`]), or diagnostics: E1003 for
//! a syntax error, E1004 for an unknown name, E1005 for an unknown function or a wrong number
//! of arguments, E1006 for subscripts that do not fit, E1002 for a construct the importer does
//! not support. This module does not read the left-hand side or the forms that only stand at
//! the top of an equation (`INTEG`, `WITH LOOKUP`, constant lists): [`crate::vensim::entry`]
//! does.

use super::lexer::{Tok, Token};
use crate::ir::{BinaryOp, Builtin, Expr, ExprKind, Function, Subscript, UnaryOp};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use std::collections::HashMap;

/// The names an equation may use.
#[derive(Debug, Default)]
pub struct Scope {
    /// Each variable's canonical key with the names of its dimensions.
    pub variables: HashMap<String, Vec<String>>,
    /// The canonical keys of the graphical functions (lookups) defined by name.
    pub lookups: HashMap<String, Vec<String>>,
    /// Each macro's canonical key with its number of parameters.
    pub macros: HashMap<String, usize>,
    /// Each dimension's canonical key with its name as declared and its elements.
    pub dimensions: HashMap<String, (String, Vec<String>)>,
    /// Each element's canonical key with its name as declared.
    pub elements: HashMap<String, String>,
    /// Whether the equations read are those of a macro's body.
    pub in_macro: bool,
    /// Whether one range holds the other, for each pair of ranges asked about so far (each
    /// pair's elements are compared once).
    pub nested: std::cell::RefCell<HashMap<(String, String), bool>>,
    /// Each range's canonical key with each of its elements' keys.
    pub members: std::collections::HashSet<(String, String)>,
    /// The pairs of ranges (canonical keys, both orders) that one maps onto the other (`->`,
    /// `<->`).
    pub mapped: std::collections::HashSet<(String, String)>,
    /// Each element's number as a value: its place (from 1) in the first range, in file order,
    /// that holds it and is no subrange.
    pub element_numbers: HashMap<String, usize>,
    /// The variables whose definitions could not be read (a diagnostic says why): references
    /// to them give no further diagnostic.
    pub unreadable: std::collections::HashSet<String>,
    /// The data files the `GET` functions read.
    pub data: std::rc::Rc<crate::data::DataFiles>,
}

/// The prefix of the placeholder name a subscript range used as a value stands under until
/// [`crate::vensim::define`] replaces it by the number of the element (no name of a file
/// can hold the NUL character).
pub const RANGE_VALUE: &str = "\u{0}range ";

impl Scope {
    /// Whether the range `range` stands for the range `other` (both canonical keys): the same
    /// range, one mapped onto the other, or one holding all elements of the other.
    pub fn ranges_fit(&self, range: &str, other: &str) -> bool {
        if range == other || self.mapped.contains(&(range.to_string(), other.to_string())) {
            return true;
        }
        let pair = (range.to_string(), other.to_string());
        if let Some(&known) = self.nested.borrow().get(&pair) {
            return known;
        }
        let (Some((_, a)), Some((_, b))) = (self.dimensions.get(range), self.dimensions.get(other)) else {
            return false;
        };
        let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        let large: std::collections::HashSet<String> = large.iter().map(|e| canonical(e)).collect();
        let fits = small.iter().all(|e| large.contains(&canonical(e)));
        self.nested.borrow_mut().insert(pair, fits);
        fits
    }

    /// Whether `element` (canonical key) is an element of the range `range` (canonical key).
    pub fn holds(&self, range: &str, element: &str) -> bool {
        self.members.contains(&(range.to_string(), element.to_string()))
    }
}

/// Vensim's `:NA:`: -2^109, the finite value Vensim gives a missing number.
pub const VENSIM_NA: f64 = -6.490_371_073_168_535e32;

/// How deep expressions may nest before the reader gives up (a guard for the stack of this
/// reader and of every walk over the expressions it gives).
const MAX_DEPTH: usize = 64;

/// How many operators one equation may hold: with [`MAX_DEPTH`] this bounds how deep an
/// expression tree can grow (a long chain `a + b + c ...` is as deep as it is long).
const MAX_OPERATORS: usize = 2000;

/// Reads expressions from a run of tokens.
pub struct Parser<'a> {
    pub tokens: &'a [Token],
    pub pos: usize,
    pub file: FileId,
    pub scope: &'a Scope,
    pub diagnostics: &'a mut Vec<Diagnostic>,
    /// Where the tokens end (for errors at the end of the input).
    pub end: usize,
    /// The whole file's text (the tokens' spans index it).
    pub source_text: &'a str,
    depth: usize,
    /// The operators read so far.
    operators: usize,
    /// Whether the reader is inside the argument of a function over arrays, where `dim!`
    /// stands for all elements of `dim`.
    array_arguments: bool,
}

/// A failure already reported as a diagnostic.
pub struct Reported;

pub type Parsed<T> = Result<T, Reported>;

impl<'a> Parser<'a> {
    pub fn new(
        tokens: &'a [Token],
        source_text: &'a str,
        end: usize,
        file: FileId,
        scope: &'a Scope,
        diagnostics: &'a mut Vec<Diagnostic>,
    ) -> Self {
        Parser {
            source_text,
            tokens,
            pos: 0,
            file,
            scope,
            diagnostics,
            end,
            depth: 0,
            operators: 0,
            array_arguments: false,
        }
    }

    pub fn peek(&self) -> Option<&'a Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    pub fn peek_is(&self, punct: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(p)) if *p == punct)
    }

    /// The span of the current token, or of the end of the input.
    pub fn here(&self) -> Span {
        match self.tokens.get(self.pos) {
            Some(t) => Span::new(self.file, t.start, t.end),
            None => Span::new(self.file, self.end, self.end),
        }
    }

    pub fn span_from(&self, start: usize) -> Span {
        let end = self.tokens[..self.pos].last().map_or(self.end, |t| t.end);
        Span::new(self.file, start, end.max(start))
    }

    pub fn start(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.end, |t| t.start)
    }

    pub fn error(&mut self, code: &'static str, message: impl Into<String>, span: Span, label: &str) -> Reported {
        self.diagnostics.push(Diagnostic::error(code, message, span, label));
        Reported
    }

    pub fn expect(&mut self, punct: &str) -> Parsed<()> {
        if self.peek_is(punct) {
            self.pos += 1;
            return Ok(());
        }
        let span = self.here();
        Err(self.error("E1003", format!("expected `{punct}` here"), span, "syntax error"))
    }

    /// A whole expression: the lowest precedence is `:OR:`.
    pub fn expr(&mut self) -> Parsed<Expr> {
        self.enter()?;
        let result = self.binary(0);
        self.depth -= 1;
        result
    }

    /// One level deeper in the reader's own recursion, within [`MAX_DEPTH`].
    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = self.here();
            return Err(self.error(
                "E1002",
                format!("an expression nested more than {MAX_DEPTH} deep is not supported"),
                span,
                "nested too deeply",
            ));
        }
        Ok(())
    }

    /// One more operator in the equation, within [`MAX_OPERATORS`].
    fn count_operator(&mut self) -> Parsed<()> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            let span = self.here();
            return Err(self.error(
                "E1002",
                format!("an equation with more than {MAX_OPERATORS} operators is not supported"),
                span,
                "equation too long",
            ));
        }
        Ok(())
    }

    /// Binary operators by precedence level: `:OR:`, `:AND:`, comparisons (with `:NOT:`
    /// before them), `+ -`, `* /`.
    fn binary(&mut self, level: usize) -> Parsed<Expr> {
        if level == 2 && matches!(self.peek(), Some(Tok::Keyword(k)) if k == "NOT") {
            let start = self.start();
            self.pos += 1;
            self.count_operator()?;
            self.enter()?;
            let operand = self.binary(level);
            self.depth -= 1;
            return Ok(Expr {
                span: self.span_from(start),
                kind: ExprKind::Unary {
                    op: UnaryOp::Not,
                    operand: Box::new(operand?),
                },
            });
        }
        if level == 5 {
            return self.unary();
        }
        let start = self.start();
        let mut left = self.binary(level + 1)?;
        while let Some(op) = self.binary_op(level) {
            self.pos += 1;
            self.count_operator()?;
            let right = self.binary(level + 1)?;
            left = Expr {
                span: self.span_from(start),
                kind: ExprKind::Binary {
                    op,
                    left: Box::new(left),
                    right: Box::new(right),
                },
            };
        }
        Ok(left)
    }

    fn binary_op(&self, level: usize) -> Option<BinaryOp> {
        match (level, self.peek()?) {
            (0, Tok::Keyword(k)) if k == "OR" => Some(BinaryOp::Or),
            (1, Tok::Keyword(k)) if k == "AND" => Some(BinaryOp::And),
            (2, Tok::Punct(p)) => match *p {
                "=" => Some(BinaryOp::Eq),
                "<>" => Some(BinaryOp::NotEq),
                "<" => Some(BinaryOp::Less),
                "<=" => Some(BinaryOp::LessEq),
                ">" => Some(BinaryOp::Greater),
                ">=" => Some(BinaryOp::GreaterEq),
                _ => None,
            },
            (3, Tok::Punct("+")) => Some(BinaryOp::Add),
            (3, Tok::Punct("-")) => Some(BinaryOp::Sub),
            (4, Tok::Punct("*")) => Some(BinaryOp::Mul),
            (4, Tok::Punct("/")) => Some(BinaryOp::Div),
            _ => None,
        }
    }

    /// Unary `-` and `+`, then `^` (right-associative, binding tighter than a unary sign).
    fn unary(&mut self) -> Parsed<Expr> {
        let start = self.start();
        let op = match self.peek() {
            Some(Tok::Punct("-")) => Some(UnaryOp::Minus),
            Some(Tok::Punct("+")) => Some(UnaryOp::Plus),
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            self.count_operator()?;
            self.enter()?;
            let operand = self.unary();
            self.depth -= 1;
            return Ok(Expr {
                span: self.span_from(start),
                kind: ExprKind::Unary {
                    op,
                    operand: Box::new(operand?),
                },
            });
        }
        let base = self.primary()?;
        if self.peek_is("^") {
            self.pos += 1;
            self.count_operator()?;
            self.enter()?;
            let exponent = self.unary();
            self.depth -= 1;
            return Ok(Expr {
                span: self.span_from(start),
                kind: ExprKind::Binary {
                    op: BinaryOp::Pow,
                    left: Box::new(base),
                    right: Box::new(exponent?),
                },
            });
        }
        Ok(base)
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let start = self.start();
        let Some(token) = self.tokens.get(self.pos) else {
            let span = self.here();
            return Err(self.error(
                "E1003",
                "the equation ends where a value was expected",
                span,
                "value expected",
            ));
        };
        match &token.tok {
            Tok::Number(value) => {
                self.pos += 1;
                Ok(Expr {
                    span: self.span_from(start),
                    kind: ExprKind::Number(*value),
                })
            }
            Tok::Punct("(") => {
                self.pos += 1;
                let inner = self.expr()?;
                self.expect(")")?;
                Ok(inner)
            }
            Tok::Name(name) => {
                self.pos += 1;
                self.name_use(name, start)
            }
            Tok::Keyword(k) if k == "NA" => {
                // Vensim's `:NA:` is no IEEE NaN but a finite sentinel, -2^109, so that a test
                // `x = :NA:` holds where it should and arithmetic on it stays finite.
                self.pos += 1;
                Ok(Expr {
                    span: self.span_from(start),
                    kind: ExprKind::Number(VENSIM_NA),
                })
            }
            _ => {
                let span = self.here();
                Err(self.error("E1003", "expected a value here", span, "syntax error"))
            }
        }
    }

    /// A name just read: a call, a subscripted reference or a plain reference.
    fn name_use(&mut self, name: &str, start: usize) -> Parsed<Expr> {
        let key = canonical(name);
        let name_span = self.span_from(start);
        if key == "elmcount" && self.peek_is("(") {
            return self.element_count(start);
        }
        if self.peek_is("(") {
            self.pos += 1;
            let args = self.arguments(&key)?;
            let span = self.span_from(start);
            return super::builtins::call(self, name, &key, args, name_span, span);
        }
        let subscripts = if self.peek_is("[") {
            self.subscripts()?
        } else {
            Vec::new()
        };
        if self.peek_is("(") {
            return self.subscripted_lookup(name, key, subscripts, start);
        }
        self.reference(name, key, subscripts, name_span, start)
    }

    /// The call `table[subscripts](x)` of one element of an arrayed lookup table, after its
    /// subscripts.
    fn subscripted_lookup(
        &mut self,
        name: &str,
        key: String,
        subscripts: Vec<(Subscript, Span)>,
        start: usize,
    ) -> Parsed<Expr> {
        // A table read from a file is named where it is defined; its calls are kept as written.
        let unreadable = self.scope.unreadable.contains(&key);
        let dimensions = match self.scope.lookups.get(&key) {
            Some(dimensions) => Some(dimensions.clone()),
            None if unreadable => Some(Vec::new()),
            None => None,
        };
        let Some(dimensions) = dimensions else {
            let span = self.span_from(start);
            return Err(self.error(
                "E1005",
                format!("`{name}[...]` is called but is no lookup table"),
                span,
                "not a lookup table",
            ));
        };
        if !unreadable {
            self.check_subscripts(name, &dimensions, &subscripts, start)?;
        }
        self.pos += 1;
        let args = self.arguments(&key)?;
        let span = self.span_from(start);
        if args.len() != 1 {
            return Err(self.error(
                "E1005",
                format!("the lookup table `{name}` takes 1 argument, given {}", args.len()),
                span,
                "wrong number of arguments",
            ));
        }
        Ok(Expr {
            span,
            kind: ExprKind::Call {
                function: Function::SubscriptedLookup(key, subscripts.into_iter().map(|(s, _)| s).collect()),
                args,
            },
        })
    }

    /// `ELMCOUNT(dim)`: the number of elements of a dimension, known when the file is read.
    fn element_count(&mut self, start: usize) -> Parsed<Expr> {
        self.expect("(")?;
        let name_span = self.here();
        let Some(Tok::Name(name)) = self.peek() else {
            return Err(self.error(
                "E1003",
                "`ELMCOUNT` takes the name of a subscript range",
                name_span,
                "syntax error",
            ));
        };
        self.pos += 1;
        let Some((_, elements)) = self.scope.dimensions.get(&canonical(name)) else {
            return Err(self.error(
                "E1004",
                format!("unknown subscript range `{name}`"),
                name_span,
                "no subscript range of this name",
            ));
        };
        let count = elements.len() as f64;
        self.expect(")")?;
        Ok(Expr {
            span: self.span_from(start),
            kind: ExprKind::Number(count),
        })
    }

    /// Checks a variable reference against the scope.
    fn reference(
        &mut self,
        name: &str,
        key: String,
        subscripts: Vec<(Subscript, Span)>,
        name_span: Span,
        start: usize,
    ) -> Parsed<Expr> {
        let span = self.span_from(start);
        // `Time` everywhere, and the control variables inside a macro (whose body sees no
        // variable of the model), are the run's own values.
        let run_value = match key.as_str() {
            "time" => Some(Builtin::Time),
            "time step" if self.scope.in_macro => Some(Builtin::Dt),
            "initial time" if self.scope.in_macro => Some(Builtin::StartTime),
            "final time" if self.scope.in_macro => Some(Builtin::StopTime),
            _ => None,
        };
        if let Some(builtin) = run_value.filter(|_| subscripts.is_empty() && !self.scope.variables.contains_key(&key)) {
            return Ok(Expr {
                span,
                kind: ExprKind::Call {
                    function: Function::Builtin(builtin),
                    args: Vec::new(),
                },
            });
        }
        if self.scope.unreadable.contains(&key) {
            return Ok(Expr {
                span,
                kind: ExprKind::Variable {
                    name: key,
                    subscripts: subscripts.into_iter().map(|(s, _)| s).collect(),
                },
            });
        }
        if self.scope.lookups.contains_key(&key) {
            let message = format!("the lookup table `{name}` is used as a value; call it with an input, `{name}(x)`");
            return Err(self.error("E1005", message, name_span, "a lookup table needs an input"));
        }
        let Some(dimensions) = self.scope.variables.get(&key).or_else(|| self.scope.lookups.get(&key)) else {
            if let Some((declared, _)) = self.scope.dimensions.get(&key).filter(|_| subscripts.is_empty()) {
                // The number of the element being defined, filled in when the equation is
                // written out element by element.
                return Ok(Expr {
                    span,
                    kind: ExprKind::Variable {
                        name: format!("{RANGE_VALUE}{declared}"),
                        subscripts: Vec::new(),
                    },
                });
            }
            if let Some(&number) = self.scope.element_numbers.get(&key).filter(|_| subscripts.is_empty()) {
                // An element used as a value is its number.
                return Ok(Expr {
                    span,
                    kind: ExprKind::Number(number as f64),
                });
            }
            let message = if self.scope.dimensions.contains_key(&key) || self.scope.elements.contains_key(&key) {
                format!("`{name}` is a subscript, used here as a value")
            } else {
                format!("unknown name `{name}`")
            };
            return Err(self.error("E1004", message, name_span, "no variable of this name"));
        };
        let dimensions = dimensions.clone();
        self.check_subscripts(name, &dimensions, &subscripts, start)?;
        Ok(Expr {
            span,
            kind: ExprKind::Variable {
                name: key,
                subscripts: subscripts.into_iter().map(|(s, _)| s).collect(),
            },
        })
    }

    /// Checks that `subscripts` fit the `dimensions` of the variable or table `name`: as many
    /// as it has, each an element, a range or a wildcard of the dimension at its place.
    fn check_subscripts(
        &mut self,
        name: &str,
        dimensions: &[String],
        subscripts: &[(Subscript, Span)],
        start: usize,
    ) -> Parsed<()> {
        if subscripts.len() != dimensions.len() {
            let count = dimensions.len();
            let span = self.span_from(start);
            return Err(self.error(
                "E1006",
                format!(
                    "`{name}` has {count} dimension(s) but is used with {} subscript(s)",
                    subscripts.len()
                ),
                span,
                "subscripts do not fit",
            ));
        }
        for ((subscript, at), range) in subscripts.iter().zip(dimensions) {
            let range_key = canonical(range);
            let fits = match subscript {
                Subscript::Element(element) => self.scope.holds(&range_key, &canonical(element)),
                Subscript::Dimension(other) | Subscript::Wildcard(Some(other)) => {
                    self.scope.ranges_fit(&canonical(other), &range_key)
                }
                Subscript::Wildcard(None) | Subscript::Index(_) => true,
            };
            if !fits {
                let message =
                    format!("`{name}` is defined over `{range}` at this place, which this subscript is not part of");
                return Err(self.error("E1006", message, *at, "subscripts do not fit"));
            }
        }
        Ok(())
    }

    /// The arguments of a call, after its `(`, through its `)`.
    fn arguments(&mut self, key: &str) -> Parsed<Vec<Expr>> {
        let mut args = Vec::new();
        if self.peek_is(")") {
            self.pos += 1;
            return Ok(args);
        }
        loop {
            if matches!(self.peek(), Some(Tok::Text)) {
                let span = self.here();
                return Err(self.error(
                    "E1002",
                    format!(
                        "`{key}` with a quoted argument inside an expression is not supported: a `GET` function that reads a data file must be the whole right-hand side"
                    ),
                    span,
                    "not supported",
                ));
            }
            let takes_lookup = matches!(
                key,
                "lookup invert" | "lookup extrapolate" | "lookup forward" | "lookup backward"
            );
            if takes_lookup && args.is_empty() {
                args.push(self.lookup_name(key)?);
            } else {
                let outer = self.array_arguments;
                self.array_arguments = outer || super::builtins::takes_arrays(key);
                let arg = self.expr();
                self.array_arguments = outer;
                args.push(arg?);
            }
            if self.peek_is(",") {
                self.pos += 1;
                continue;
            }
            self.expect(")")?;
            return Ok(args);
        }
    }

    /// The name of a lookup table standing alone, as `function` (`lookup invert`, ...) takes it.
    fn lookup_name(&mut self, function: &str) -> Parsed<Expr> {
        let span = self.here();
        if let Some(Tok::Name(name)) = self.peek() {
            let key = canonical(name);
            if self.scope.lookups.contains_key(&key) {
                self.pos += 1;
                return Ok(Expr {
                    span,
                    kind: ExprKind::Variable {
                        name: key,
                        subscripts: Vec::new(),
                    },
                });
            }
        }
        Err(self.error(
            "E1005",
            format!("`{}` takes the name of a lookup table first", function.to_uppercase()),
            span,
            "no lookup table",
        ))
    }

    /// The subscripts of a reference, after its name, through `]`.
    pub fn subscripts(&mut self) -> Parsed<Vec<(Subscript, Span)>> {
        self.expect("[")?;
        let mut out = Vec::new();
        loop {
            let start = self.start();
            let Some(Tok::Name(name)) = self.peek() else {
                let span = self.here();
                return Err(self.error("E1003", "expected a subscript name here", span, "syntax error"));
            };
            self.pos += 1;
            let key = canonical(name);
            let bang = self.peek_is("!");
            if bang {
                self.pos += 1;
            }
            let span = self.span_from(start);
            if bang && !self.array_arguments {
                let message = format!("`{name}!` outside the argument of SUM, PROD, VMIN or VMAX is not supported");
                return Err(self.error("E1002", message, span, "not supported"));
            }
            let subscript = if let Some((declared, _)) = self.scope.dimensions.get(&key) {
                if bang {
                    Subscript::Wildcard(Some(declared.clone()))
                } else {
                    Subscript::Dimension(declared.clone())
                }
            } else if let Some(declared) = self.scope.elements.get(&key).filter(|_| !bang) {
                Subscript::Element(declared.clone())
            } else if self.scope.unreadable.contains(&key) {
                Subscript::Dimension(name.clone())
            } else {
                return Err(self.error(
                    "E1004",
                    format!("unknown subscript `{name}`"),
                    span,
                    "no dimension or element of this name",
                ));
            };
            out.push((subscript, span));
            if self.peek_is(",") {
                self.pos += 1;
                continue;
            }
            self.expect("]")?;
            return Ok(out);
        }
    }
}
