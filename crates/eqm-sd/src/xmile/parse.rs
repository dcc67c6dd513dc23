//! XMILE's equation syntax parsed into [`Expr`].
//!
//! Input: the text of one equation, where it lies in the file, and the names the model
//! declares ([`Names`]). Output: the expression, with every name resolved to a variable, a
//! builtin, a graphical function or a macro, or the diagnostic (E1003 for a syntax error, E1004
//! for an unknown name, E1005 for an unknown function or a wrong number of arguments) at its
//! place. Operators bind as XMILE defines them, from the tightest: `^` (right-associative),
//! the unary `+ - NOT`, `* / MOD`, `+ -`, the comparisons, `=` and `<>`, `AND`, `OR`.
//! This module does not check units or dimensions of the arrays.

use super::lex::{Token, TokenKind, tokens};
use crate::ir::{BinaryOp, Builtin, Expr, ExprKind, Function, Subscript, UnaryOp};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use std::collections::{HashMap, HashSet};

/// The names an equation may use, each by its canonical key.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Every variable with its dimensions (canonical names).
    pub(crate) variables: HashMap<String, Vec<String>>,
    /// The variables with a graphical function, which an equation may call with an input.
    pub(crate) lookups: HashSet<String>,
    /// The macros with their number of parameters.
    pub(crate) macros: HashMap<String, usize>,
    /// Every dimension with its elements (canonical).
    pub(crate) dimensions: HashMap<String, Vec<String>>,
}

/// Where an equation's text lies in the file: its span, and the file offset of its first
/// character (an offset into the text maps to `base + offset`, cut at the span's end because
/// resolved XML entities make the text shorter than the file).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    pub(crate) file: FileId,
    pub(crate) base: usize,
    pub(crate) end: usize,
}

impl Place {
    fn span(&self, start: usize, end: usize) -> Span {
        let s = (self.base + start).min(self.end);
        let e = (self.base + end).min(self.end).max(s);
        Span::new(self.file, s, e)
    }
}

/// Parses `text`, an equation at `place`, with the names of `names`.
pub(crate) fn parse(text: &str, place: Place, names: &Names) -> Result<Expr, Diagnostic> {
    let toks = tokens(text).map_err(|(at, why)| {
        Diagnostic::error(
            "E1003",
            format!("cannot read this equation: {why}"),
            place.span(at, at + 1),
            "here",
        )
    })?;
    let mut parser = Parser {
        toks,
        pos: 0,
        place,
        names,
        text_len: text.len(),
        depth: 0,
    };
    if parser.toks.is_empty() {
        return Err(Diagnostic::error(
            "E1003",
            "this equation is empty",
            place.span(0, text.len()),
            "no expression here",
        ));
    }
    let expr = parser.expr()?;
    if let Some(tok) = parser.toks.get(parser.pos) {
        return Err(parser.error_at(tok.start, tok.end, "this does not continue the expression"));
    }
    Ok(expr)
}

struct Parser<'a> {
    toks: Vec<Token>,
    pos: usize,
    place: Place,
    names: &'a Names,
    text_len: usize,
    /// How deeply the expression being read is nested (parentheses, operands, arguments).
    depth: usize,
}

/// The deepest nesting of an equation read: deeper ones are E1003 rather than exhausting the
/// stack of the recursive parser (and no `.eqm` text could hold them either).
const MAX_DEPTH: usize = 100;

/// A word of the equation syntax (compared without regard to case), or `None` for a name.
fn keyword(tok: &Token) -> Option<&'static str> {
    let TokenKind::Name(name) = &tok.kind else {
        return None;
    };
    const KEYWORDS: &[&str] = &["IF", "THEN", "ELSE", "AND", "OR", "NOT", "MOD"];
    KEYWORDS.iter().copied().find(|k| k.eq_ignore_ascii_case(name))
}

impl Parser<'_> {
    fn error_at(&self, start: usize, end: usize, label: &str) -> Diagnostic {
        Diagnostic::error("E1003", "cannot read this equation", self.place.span(start, end), label)
    }

    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn is_symbol(&self, symbol: &str) -> bool {
        self.peek()
            .is_some_and(|t| t.kind == TokenKind::Symbol(symbol_static(symbol)))
    }

    fn is_keyword(&self, word: &str) -> bool {
        self.peek().is_some_and(|t| keyword(t) == Some(word))
    }

    fn expect_symbol(&mut self, symbol: &str) -> Result<usize, Diagnostic> {
        if self.is_symbol(symbol) {
            let end = self.toks[self.pos].end;
            self.pos += 1;
            return Ok(end);
        }
        let (start, end) = self
            .peek()
            .map(|t| (t.start, t.end))
            .unwrap_or((self.text_len, self.text_len));
        Err(self.error_at(start, end, &format!("`{symbol}` expected here")))
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), Diagnostic> {
        if self.is_keyword(word) {
            self.pos += 1;
            return Ok(());
        }
        let (start, end) = self
            .peek()
            .map(|t| (t.start, t.end))
            .unwrap_or((self.text_len, self.text_len));
        Err(self.error_at(start, end, &format!("`{word}` expected here")))
    }

    fn binary(&self, op: BinaryOp, left: Expr, right: Expr) -> Expr {
        let span = left.span.to(right.span);
        Expr {
            kind: ExprKind::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            },
            span,
        }
    }

    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.peek().map_or(self.text_len, |t| t.start);
            return Err(self.error_at(at, at + 1, "the expression is nested too deeply here"));
        }
        let result = self.or();
        self.depth -= 1;
        result
    }

    fn or(&mut self) -> Result<Expr, Diagnostic> {
        let mut left = self.and()?;
        while self.is_keyword("OR") || self.is_symbol("|") {
            self.pos += 1;
            let right = self.and()?;
            left = self.binary(BinaryOp::Or, left, right);
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, Diagnostic> {
        let mut left = self.equality()?;
        while self.is_keyword("AND") || self.is_symbol("&") {
            self.pos += 1;
            let right = self.equality()?;
            left = self.binary(BinaryOp::And, left, right);
        }
        Ok(left)
    }

    fn equality(&mut self) -> Result<Expr, Diagnostic> {
        let mut left = self.comparison()?;
        loop {
            let op = if self.is_symbol("=") {
                BinaryOp::Eq
            } else if self.is_symbol("<>") {
                BinaryOp::NotEq
            } else {
                return Ok(left);
            };
            self.pos += 1;
            let right = self.comparison()?;
            left = self.binary(op, left, right);
        }
    }

    fn comparison(&mut self) -> Result<Expr, Diagnostic> {
        let mut left = self.additive()?;
        loop {
            let op = match self.peek().map(|t| &t.kind) {
                Some(TokenKind::Symbol("<")) => BinaryOp::Less,
                Some(TokenKind::Symbol("<=")) => BinaryOp::LessEq,
                Some(TokenKind::Symbol(">")) => BinaryOp::Greater,
                Some(TokenKind::Symbol(">=")) => BinaryOp::GreaterEq,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.additive()?;
            left = self.binary(op, left, right);
        }
    }

    fn additive(&mut self) -> Result<Expr, Diagnostic> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek().map(|t| &t.kind) {
                Some(TokenKind::Symbol("+")) => BinaryOp::Add,
                Some(TokenKind::Symbol("-")) => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.multiplicative()?;
            left = self.binary(op, left, right);
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, Diagnostic> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek().map(|t| &t.kind) {
                Some(TokenKind::Symbol("*")) => BinaryOp::Mul,
                Some(TokenKind::Symbol("/")) => BinaryOp::Div,
                _ if self.is_keyword("MOD") => BinaryOp::Mod,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.unary()?;
            left = self.binary(op, left, right);
        }
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        let op = match self.peek().map(|t| &t.kind) {
            Some(TokenKind::Symbol("-")) => Some(UnaryOp::Minus),
            Some(TokenKind::Symbol("+")) => Some(UnaryOp::Plus),
            Some(TokenKind::Symbol("!")) => Some(UnaryOp::Not),
            _ if self.is_keyword("NOT") => Some(UnaryOp::Not),
            _ => None,
        };
        let Some(op) = op else {
            return self.power();
        };
        let start = self.toks[self.pos].start;
        self.pos += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(start, start + 1, "the expression is nested too deeply here"));
        }
        let operand = self.unary();
        self.depth -= 1;
        let operand = operand?;
        let span = self.place.span(start, start).to(operand.span);
        Ok(Expr {
            kind: ExprKind::Unary {
                op,
                operand: Box::new(operand),
            },
            span,
        })
    }

    fn power(&mut self) -> Result<Expr, Diagnostic> {
        let base = self.primary()?;
        if !self.is_symbol("^") {
            return Ok(base);
        }
        self.pos += 1;
        // Right-associative, and the exponent may carry its own sign (`2^-1`).
        let exponent = self.unary()?;
        Ok(self.binary(BinaryOp::Pow, base, exponent))
    }

    fn primary(&mut self) -> Result<Expr, Diagnostic> {
        let Some(tok) = self.peek().cloned() else {
            return Err(self.error_at(self.text_len, self.text_len, "the expression ends too early"));
        };
        match &tok.kind {
            TokenKind::Number(value) => {
                self.pos += 1;
                Ok(Expr {
                    kind: ExprKind::Number(*value),
                    span: self.place.span(tok.start, tok.end),
                })
            }
            TokenKind::Symbol("(") => {
                self.pos += 1;
                let inner = self.expr()?;
                self.expect_symbol(")")?;
                Ok(inner)
            }
            TokenKind::Name(_) if keyword(&tok) == Some("IF") => self.conditional(tok.start),
            TokenKind::Name(_) if keyword(&tok).is_some() => {
                Err(self.error_at(tok.start, tok.end, "a value is expected here, not this keyword"))
            }
            TokenKind::Name(name) => {
                self.pos += 1;
                self.name(name, tok.start, tok.end)
            }
            TokenKind::Symbol(_) => Err(self.error_at(tok.start, tok.end, "a value is expected here")),
        }
    }

    fn conditional(&mut self, start: usize) -> Result<Expr, Diagnostic> {
        self.pos += 1;
        let condition = self.expr()?;
        self.expect_keyword("THEN")?;
        let then = self.expr()?;
        self.expect_keyword("ELSE")?;
        let otherwise = self.expr()?;
        let span = self.place.span(start, start).to(otherwise.span);
        Ok(Expr {
            kind: ExprKind::If {
                condition: Box::new(condition),
                then: Box::new(then),
                otherwise: Box::new(otherwise),
            },
            span,
        })
    }

    /// A name just read: a qualified name `module.variable`, a call, a subscripted variable or
    /// a plain one, or one of the builtins written without parentheses (`TIME`, `DT`, `PI`).
    fn name(&mut self, first: &str, start: usize, mut end: usize) -> Result<Expr, Diagnostic> {
        let mut key = canonical(first);
        while self.is_symbol(".") {
            let Some(Token {
                kind: TokenKind::Name(part),
                end: part_end,
                ..
            }) = self.toks.get(self.pos + 1).cloned()
            else {
                break;
            };
            self.pos += 2;
            key = format!("{key}.{}", canonical(&part));
            end = part_end;
        }
        if self.is_symbol("(") {
            return self.call(&key, start, end);
        }
        let span = self.place.span(start, end);
        if !self.names.variables.contains_key(&key) {
            if let Some(builtin) = constant_builtin(&key) {
                return Ok(Expr {
                    kind: ExprKind::Call {
                        function: Function::Builtin(builtin),
                        args: Vec::new(),
                    },
                    span,
                });
            }
            if !key.contains('.') {
                return Err(Diagnostic::error(
                    "E1004",
                    format!("`{first}` is no variable of this model"),
                    span,
                    "unknown name",
                ));
            }
        }
        let subscripts = if self.is_symbol("[") {
            self.subscripts(&key)?
        } else {
            Vec::new()
        };
        let span = match self.toks.get(self.pos.wrapping_sub(1)) {
            Some(last) if !subscripts.is_empty() => self.place.span(start, last.end),
            _ => span,
        };
        Ok(Expr {
            kind: ExprKind::Variable { name: key, subscripts },
            span,
        })
    }

    fn subscripts(&mut self, variable: &str) -> Result<Vec<Subscript>, Diagnostic> {
        self.pos += 1;
        let dims = self.names.variables.get(variable).cloned().unwrap_or_default();
        let mut out = Vec::new();
        loop {
            let position = out.len();
            let tok = self.peek().cloned();
            let simple = match tok.as_ref().map(|t| &t.kind) {
                Some(TokenKind::Symbol("*")) => Some(Subscript::Wildcard(None)),
                Some(TokenKind::Name(name)) if keyword(tok.as_ref().unwrap()).is_none() => {
                    let key = canonical(name);
                    let after = self.toks.get(self.pos + 1).map(|t| &t.kind);
                    let ends = matches!(after, Some(TokenKind::Symbol(",")) | Some(TokenKind::Symbol("]")));
                    let is_dot_star = matches!(after, Some(TokenKind::Symbol(".")))
                        && matches!(
                            self.toks.get(self.pos + 2).map(|t| &t.kind),
                            Some(TokenKind::Symbol("*"))
                        );
                    if is_dot_star {
                        self.pos += 2;
                        Some(Subscript::Wildcard(Some(key)))
                    } else if !ends {
                        None
                    } else if self.names.dimensions.contains_key(&key) {
                        Some(Subscript::Dimension(key))
                    } else if self.is_element(&dims, position, &key) {
                        Some(Subscript::Element(key))
                    } else {
                        None
                    }
                }
                Some(TokenKind::Number(n)) if n.fract() == 0.0 => {
                    let after = self.toks.get(self.pos + 1).map(|t| &t.kind);
                    if matches!(after, Some(TokenKind::Symbol(",")) | Some(TokenKind::Symbol("]"))) {
                        Some(Subscript::Element(format!("{}", *n as i64)))
                    } else {
                        None
                    }
                }
                _ => None,
            };
            match simple {
                Some(s) => {
                    self.pos += 1;
                    out.push(s);
                }
                None => out.push(Subscript::Index(self.expr()?)),
            }
            if self.is_symbol(",") {
                self.pos += 1;
                continue;
            }
            self.expect_symbol("]")?;
            return Ok(out);
        }
    }

    /// Whether `key` is an element of the dimension at `position` of a variable with `dims`
    /// (or of any dimension, for a variable whose dimensions are not known here).
    fn is_element(&self, dims: &[String], position: usize, key: &str) -> bool {
        match dims.get(position) {
            Some(dim) => self
                .names
                .dimensions
                .get(dim)
                .is_some_and(|elements| elements.iter().any(|e| e == key)),
            None => self.names.dimensions.values().any(|els| els.iter().any(|e| e == key)),
        }
    }

    fn call(&mut self, key: &str, start: usize, name_end: usize) -> Result<Expr, Diagnostic> {
        self.pos += 1;
        let mut args = Vec::new();
        if !self.is_symbol(")") {
            loop {
                args.push(self.expr()?);
                if self.is_symbol(",") {
                    self.pos += 1;
                    continue;
                }
                break;
            }
        }
        let end = self.expect_symbol(")")?;
        let span = self.place.span(start, end);
        let name_span = self.place.span(start, name_end);
        if key == "lookup" && args.len() == 2 {
            return self.lookup_call(args, span);
        }
        let (function, arity) = if let Some((builtin, min, max)) = builtin(key) {
            (Function::Builtin(builtin), (min, max))
        } else if self.names.lookups.contains(key) {
            (Function::Lookup(key.to_string()), (1, 1))
        } else if let Some(&n) = self.names.macros.get(key) {
            (Function::Macro(key.to_string()), (n, n))
        } else {
            return Err(Diagnostic::error(
                "E1005",
                format!("`{key}` is no function EQM knows, nor a graphical function or macro of this model"),
                name_span,
                "unknown function",
            ));
        };
        if args.len() < arity.0 || args.len() > arity.1 {
            let expected = if arity.0 == arity.1 {
                format!("{}", arity.0)
            } else {
                format!("{} to {}", arity.0, arity.1)
            };
            return Err(Diagnostic::error(
                "E1005",
                format!("`{key}` takes {expected} arguments, not {}", args.len()),
                span,
                "this call",
            ));
        }
        Ok(Expr {
            kind: ExprKind::Call { function, args },
            span,
        })
    }

    /// XMILE's `LOOKUP(table, x)`: the call of the graphical function `table` at `x`.
    fn lookup_call(&self, mut args: Vec<Expr>, span: Span) -> Result<Expr, Diagnostic> {
        let table = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Variable { name, subscripts })
                if subscripts.is_empty() && self.names.lookups.contains(name) =>
            {
                name.clone()
            }
            _ => {
                return Err(Diagnostic::error(
                    "E1005",
                    "the first argument of `LOOKUP` must name a graphical function of the model",
                    args.first().map_or(span, |a| a.span),
                    "not a graphical function",
                ));
            }
        };
        let input = args.remove(1);
        Ok(Expr {
            kind: ExprKind::Call {
                function: Function::Lookup(table),
                args: vec![input],
            },
            span,
        })
    }
}

/// The static text of a symbol, for comparing with a token.
fn symbol_static(symbol: &str) -> &'static str {
    const ALL: &[&str] = &[
        "+", "-", "*", "/", "^", "(", ")", "[", "]", ",", ".", "=", "<", ">", "!", "&", "|", "<=", ">=", "<>",
    ];
    ALL.iter().copied().find(|s| *s == symbol).unwrap_or("")
}

/// The builtins written as a bare name.
fn constant_builtin(key: &str) -> Option<Builtin> {
    Some(match key {
        "time" => Builtin::Time,
        "dt" => Builtin::Dt,
        "starttime" | "start time" => Builtin::StartTime,
        "stoptime" | "stop time" => Builtin::StopTime,
        "pi" => Builtin::Pi,
        _ => return None,
    })
}

/// XMILE's builtin of a (canonical) name, with its least and greatest number of arguments.
fn builtin(key: &str) -> Option<(Builtin, usize, usize)> {
    use Builtin as B;
    Some(match key {
        "abs" => (B::Abs, 1, 1),
        "sqrt" => (B::Sqrt, 1, 1),
        "exp" => (B::Exp, 1, 1),
        "ln" => (B::Ln, 1, 1),
        "log10" => (B::Log10, 1, 1),
        "sin" => (B::Sin, 1, 1),
        "cos" => (B::Cos, 1, 1),
        "tan" => (B::Tan, 1, 1),
        "arcsin" => (B::ArcSin, 1, 1),
        "arccos" => (B::ArcCos, 1, 1),
        "arctan" => (B::ArcTan, 1, 1),
        "sinh" => (B::Sinh, 1, 1),
        "cosh" => (B::Cosh, 1, 1),
        "tanh" => (B::Tanh, 1, 1),
        "int" => (B::Int, 1, 1),
        "round" => (B::Round, 1, 1),
        "sign" => (B::Sign, 1, 1),
        "min" => (B::Min, 1, 2),
        "max" => (B::Max, 1, 2),
        "pi" => (B::Pi, 0, 0),
        "safediv" => (B::Xidz, 2, 3),
        "xidz" => (B::Xidz, 3, 3),
        "zidz" => (B::Zidz, 2, 2),
        "time" => (B::Time, 0, 0),
        "dt" => (B::Dt, 0, 0),
        "starttime" => (B::StartTime, 0, 0),
        "stoptime" => (B::StopTime, 0, 0),
        "init" => (B::Init, 1, 1),
        "previous" => (B::Previous, 1, 2),
        "step" => (B::Step, 2, 2),
        "ramp" => (B::Ramp, 2, 3),
        "pulse" => (B::PulseVolume, 1, 3),
        "smth1" => (B::Smooth1, 2, 3),
        "smth3" => (B::Smooth3, 2, 3),
        "smthn" => (B::SmoothN, 3, 4),
        "delay1" => (B::Delay1, 2, 3),
        "delay3" => (B::Delay3, 2, 3),
        "delayn" => (B::DelayN, 3, 4),
        "delay" => (B::DelayFixed, 2, 3),
        "trend" => (B::Trend, 2, 3),
        "forcst" => (B::Forecast, 3, 4),
        "npv" => (B::Npv, 2, 4),
        "sum" => (B::Sum, 1, 1),
        "mean" => (B::Mean, 1, usize::MAX),
        "prod" => (B::Prod, 1, 1),
        "stddev" => (B::Stddev, 1, 1),
        "random" => (B::RandomUniform, 2, 3),
        "normal" => (B::Normal, 2, 3),
        "exprnd" => (B::Exprnd, 1, 2),
        "lognormal" => (B::Lognormal, 2, 3),
        "poisson" => (B::Poisson, 1, 2),
        "beta" => (B::Beta, 2, 3),
        "binomial" => (B::Binomial, 2, 3),
        "gamma" => (B::Gamma, 2, 3),
        "triangular" => (B::Triangular, 3, 4),
        "weibull" => (B::Weibull, 2, 3),
        "size" => (B::Size, 1, 1),
        _ => return None,
    })
}
