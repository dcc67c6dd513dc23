//! The logos lexer and the adapter that feeds the lalrpop parser.
//!
//! Input: one source text. Output: a stream of `(start, Token, end)` triples with byte offsets,
//! and lexical diagnostics (`E0101`..`E0104`, and `E0110` for reserved Modelica keywords EQM does
//! not support) collected on the side.
//! Lexing never stops at an error: a bad character, number, string or comment becomes a
//! diagnostic and the lexer goes on, so one run reports every problem in a file.
//! It deliberately knows nothing about the grammar beyond the token set.

use eqm_diag::Diagnostic;
use eqm_diag::source::{FileId, Span};
use logos::Logos;
use std::fmt;

/// The tokens of the EQM language (`docs/language.md`, "Lexical structure").
#[derive(Logos, Debug, Clone, Copy, PartialEq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Token<'src> {
    // Keywords. The reserved Modelica words EQM does not implement are keywords too, so that a
    // model using them gets a precise "not supported" message instead of a confusing one.
    #[token("algorithm")]
    Algorithm,
    #[token("and")]
    And,
    #[token("annotation")]
    Annotation,
    #[token("block")]
    Block,
    #[token("break")]
    Break,
    #[token("class")]
    Class,
    #[token("connect")]
    Connect,
    #[token("connector")]
    Connector,
    #[token("constant")]
    Constant,
    #[token("discrete")]
    Discrete,
    #[token("each")]
    Each,
    #[token("else")]
    Else,
    #[token("elseif")]
    Elseif,
    #[token("elsewhen")]
    Elsewhen,
    #[token("encapsulated")]
    Encapsulated,
    #[token("end")]
    End,
    /// `end` inside a subscript, the size of the dimension it indexes (`x[end]`); never produced
    /// by the scanner itself, the lexer turns `End` into it by context.
    EndIndex,
    #[token("equation")]
    Equation,
    #[token("extends")]
    Extends,
    #[token("false")]
    False,
    #[token("final")]
    Final,
    #[token("flow")]
    Flow,
    #[token("stream")]
    Stream,
    #[token("for")]
    For,
    #[token("function")]
    Function,
    #[token("if")]
    If,
    #[token("import")]
    Import,
    #[token("in")]
    In,
    #[token("initial")]
    Initial,
    /// `initial equation` and `initial algorithm` are single tokens: otherwise an LR(1) parser
    /// could not tell a new section from an equation starting with the call `initial()`.
    #[regex(r"initial[ \t\r\n\f]+equation")]
    InitialEquation,
    #[regex(r"initial[ \t\r\n\f]+algorithm")]
    InitialAlgorithm,
    #[token("input")]
    Input,
    #[token("invariant")]
    Invariant,
    #[token("loop")]
    Loop,
    #[token("model")]
    Model,
    #[token("not")]
    Not,
    #[token("or")]
    Or,
    #[token("output")]
    Output,
    #[token("package")]
    Package,
    #[token("parameter")]
    Parameter,
    #[token("partial")]
    Partial,
    #[token("potential")]
    Potential,
    #[token("protected")]
    Protected,
    #[token("public")]
    Public,
    #[token("record")]
    Record,
    #[token("return")]
    Return,
    #[token("then")]
    Then,
    #[token("true")]
    True,
    #[token("type")]
    Type,
    #[token("when")]
    When,
    #[token("enumeration")]
    Enumeration,
    #[token("external")]
    External,
    #[token("inner")]
    Inner,
    #[token("outer")]
    Outer,
    #[token("pure")]
    Pure,
    #[token("impure")]
    Impure,
    #[token("while")]
    While,
    #[token("within")]
    Within,
    #[token("replaceable")]
    Replaceable,
    #[token("redeclare")]
    Redeclare,
    #[token("constrainedby")]
    Constrainedby,
    #[token("expandable")]
    Expandable,
    #[token("operator")]
    Operator,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |l| l.slice())]
    Ident(&'src str),
    /// An integer literal, kept as text so that overflow is reported with its span.
    #[regex(r"[0-9]+", |l| l.slice(), priority = 3)]
    Integer(&'src str),
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", |l| l.slice())]
    #[regex(r"\.[0-9]+([eE][+-]?[0-9]+)?", |l| l.slice())]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", |l| l.slice())]
    Real(&'src str),
    /// A number whose exponent has no digits (`1e`, `2.5E+`): reported, then read as a number.
    #[regex(r"[0-9]+(\.[0-9]*)?[eE][+-]?", |l| l.slice())]
    #[regex(r"\.[0-9]+[eE][+-]?", |l| l.slice())]
    MalformedNumber(&'src str),
    /// A string literal with its quotes; escapes are decoded by the parser's action.
    #[token("\"", lex_string)]
    String(&'src str),
    #[token("/*", lex_block_comment)]
    BlockComment,
    /// A quoted identifier (`'my var'`): any characters but `'`, `\\` and line breaks between
    /// single quotes, with the escapes of strings. The quotes are part of the name (`'x'` and `x`
    /// are different names), and the parser sees it as an identifier.
    #[regex(r"'([^'\\\n]|\\.)*'", |l| l.slice())]
    QuotedIdent(&'src str),

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token(".")]
    Dot,
    #[token("=")]
    Eq,
    #[token(":=")]
    Assign,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("^")]
    Caret,
    #[token(".+")]
    DotPlus,
    #[token(".-")]
    DotMinus,
    #[token(".*")]
    DotStar,
    #[token("./")]
    DotSlash,
    #[token(".^")]
    DotCaret,
    #[token("==")]
    EqEq,
    #[token("<>")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
}

/// Scans a string body after the opening quote. An unterminated string runs to the end of the
/// file; the adapter reports it (the returned slice then has no closing quote).
fn lex_string<'src>(lex: &mut logos::Lexer<'src, Token<'src>>) -> &'src str {
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            b'"' => {
                lex.bump(i + 1);
                return lex.slice();
            }
            _ => i += 1,
        }
    }
    lex.bump(rest.len());
    lex.slice()
}

/// Skips a block comment after `/*`. Comments do not nest (as in Modelica). An unterminated
/// comment runs to the end of the file and is reported by the adapter.
fn lex_block_comment<'src>(lex: &mut logos::Lexer<'src, Token<'src>>) {
    let rest = lex.remainder();
    match rest.find("*/") {
        Some(end) => lex.bump(end + 2),
        None => lex.bump(rest.len()),
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(s) => write!(f, "identifier `{s}`"),
            Token::Integer(s) | Token::Real(s) | Token::MalformedNumber(s) => write!(f, "number `{s}`"),
            Token::String(s) if s.len() <= 24 => write!(f, "string {s}"),
            Token::String(_) => write!(f, "a string"),
            Token::BlockComment => write!(f, "a comment"),
            Token::QuotedIdent(s) => write!(f, "quoted identifier `{s}`"),
            other => write!(f, "`{}`", token_text(other)),
        }
    }
}

/// The fixed source text of a punctuation or keyword token.
/// Whether `name` can be written as it is to name a variable: it lexes as one plain
/// identifier (not a keyword, a reserved word, a number or anything else), so a writer of EQM
/// text knows when a name needs single quotes.
pub fn is_plain_identifier(name: &str) -> bool {
    let mut tokens = Token::lexer(name);
    matches!(tokens.next(), Some(Ok(Token::Ident(s))) if s == name) && tokens.next().is_none()
}

pub fn token_text(token: &Token<'_>) -> &'static str {
    use Token::*;
    match token {
        Algorithm => "algorithm",
        And => "and",
        Annotation => "annotation",
        Block => "block",
        Break => "break",
        Class => "class",
        Connect => "connect",
        Connector => "connector",
        Expandable => "expandable",
        Operator => "operator",
        Constant => "constant",
        Discrete => "discrete",
        Each => "each",
        Else => "else",
        Elseif => "elseif",
        Elsewhen => "elsewhen",
        Encapsulated => "encapsulated",
        Enumeration => "enumeration",
        External => "external",
        Inner => "inner",
        Outer => "outer",
        Pure => "pure",
        Impure => "impure",
        End | EndIndex => "end",
        Equation => "equation",
        Extends => "extends",
        False => "false",
        Final => "final",
        Flow => "flow",
        Stream => "stream",
        For => "for",
        Function => "function",
        If => "if",
        Import => "import",
        In => "in",
        Initial => "initial",
        InitialEquation => "initial equation",
        InitialAlgorithm => "initial algorithm",
        Input => "input",
        Invariant => "invariant",
        Loop => "loop",
        Model => "model",
        Not => "not",
        Or => "or",
        Output => "output",
        Package => "package",
        Parameter => "parameter",
        Partial => "partial",
        Potential => "potential",
        Protected => "protected",
        Public => "public",
        Record => "record",
        Return => "return",
        Then => "then",
        True => "true",
        Type => "type",
        When => "when",
        While => "while",
        Within => "within",
        Replaceable => "replaceable",
        Redeclare => "redeclare",
        Constrainedby => "constrainedby",
        LParen => "(",
        RParen => ")",
        LBracket => "[",
        RBracket => "]",
        LBrace => "{",
        RBrace => "}",
        Comma => ",",
        Semi => ";",
        Colon => ":",
        Dot => ".",
        Eq => "=",
        Assign => ":=",
        Plus => "+",
        Minus => "-",
        Star => "*",
        Slash => "/",
        Caret => "^",
        DotPlus => ".+",
        DotMinus => ".-",
        DotStar => ".*",
        DotSlash => "./",
        DotCaret => ".^",
        EqEq => "==",
        NotEq => "<>",
        Lt => "<",
        Le => "<=",
        Gt => ">",
        Ge => ">=",
        Ident(_) | Integer(_) | Real(_) | MalformedNumber(_) | String(_) | BlockComment | QuotedIdent(_) => "",
    }
}

/// The parser-facing lexer: yields tokens, skipping comments, and records lexical errors.
///
/// Lexical errors never reach the parser as errors: the offending text is reported and either
/// skipped (bad characters, unterminated comments) or turned into the nearest valid token
/// (a malformed number is still a number), so parsing continues with useful recovery.
pub struct Lexer<'src> {
    inner: logos::Lexer<'src, Token<'src>>,
    file: FileId,
    pub diagnostics: Vec<Diagnostic>,
    /// True once an unterminated string or block comment has run to the end of the file. The
    /// parser then knows that an unexpected end of file is a consequence, not a second error.
    pub unterminated: bool,
    /// Start and end of the run of invalid characters being merged into one diagnostic.
    invalid_run: Option<(usize, usize)>,
    /// How many `[` are open: inside brackets `end` can be the last index of a subscript.
    brackets: u32,
}

impl<'src> Lexer<'src> {
    pub fn new(source: &'src str, file: FileId) -> Self {
        let mut inner = Token::lexer(source);
        // A byte order mark opens files saved by some Windows editors; it marks the encoding
        // and is no part of the text (Modelica 13.4 allows it at the start of a file).
        if source.starts_with('\u{feff}') {
            inner.bump('\u{feff}'.len_utf8());
        }
        Lexer {
            inner,
            file,
            diagnostics: Vec::new(),
            unterminated: false,
            invalid_run: None,
            brackets: 0,
        }
    }

    /// Whether the `end` just read stands for the last index of a subscript (`x[end]`,
    /// `x[end - 1]`): inside brackets and not followed by what follows the `end` of a block
    /// (a name, `if`/`for`/`when`/`while`, `;`), so that a `]` missing before the end of a class
    /// does not turn that `end` into an index.
    fn is_end_index(&self) -> bool {
        if self.brackets == 0 {
            return false;
        }
        let next = self.inner.remainder().trim_start().chars().next();
        !matches!(next, Some(c) if c.is_alphabetic() || c == '_' || c == '\'' || c == ';') && next.is_some()
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.file, start, end)
    }

    fn flush_invalid_run(&mut self) {
        if let Some((start, end)) = self.invalid_run.take() {
            let text = &self.inner.source()[start..end];
            let shown: String = text.chars().take(20).collect();
            let (message, label) = if text.chars().count() == 1 {
                (
                    format!("invalid character `{}`", shown.escape_debug()),
                    "this character is not part of the EQM language",
                )
            } else {
                (
                    format!("invalid characters `{}`", shown.escape_debug()),
                    "these characters are not part of the EQM language",
                )
            };
            let mut d = Diagnostic::error("E0101", message, self.span(start, end), label);
            if text.starts_with('\'') {
                d = d.with_help("a quoted identifier ends on the line it starts on; strings use double quotes");
            }
            self.diagnostics.push(d);
        }
    }

    /// Checks the end of a number token: a number immediately followed by letters (`2x`,
    /// `1.5abc`, `1Bad`) is never valid, and neither is an exponent without digits (`1e`). Both
    /// are reported once, and the letters are consumed as part of the number, so that the parser
    /// sees one number instead of reporting the letters as a second, confusing error.
    /// Returns the end of the number including those letters.
    fn check_number(&mut self, start: usize, end: usize, malformed_exponent: bool) -> usize {
        let tail: usize = self.inner.source()[end..]
            .bytes()
            .take_while(|&c| c.is_ascii_alphanumeric() || c == b'_')
            .count();
        self.inner.bump(tail);
        if malformed_exponent {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0104",
                    "malformed number",
                    self.span(start, end + tail),
                    "the exponent has no digits",
                )
                .with_help("write the exponent's digits, for example `1e-3`"),
            );
        } else if tail > 0 {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0104",
                    "malformed number",
                    self.span(start, end + tail),
                    "a number cannot be followed directly by letters",
                )
                .with_help(
                    "names cannot start with a digit; between a number and a name write an operator, \
                     for example `2*x`",
                ),
            );
        }
        end + tail
    }
}

impl<'src> Iterator for Lexer<'src> {
    type Item = Result<(usize, Token<'src>, usize), LexicalError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let result = self.inner.next();
            let range = self.inner.span();
            match result {
                None => {
                    self.flush_invalid_run();
                    return None;
                }
                Some(Err(())) => {
                    // Merge adjacent invalid characters into one diagnostic.
                    self.invalid_run = match self.invalid_run {
                        Some((start, end)) if end == range.start => Some((start, range.end)),
                        _ => {
                            self.flush_invalid_run();
                            Some((range.start, range.end))
                        }
                    };
                    continue;
                }
                Some(Ok(token)) => {
                    self.flush_invalid_run();
                    let mut end = range.end;
                    let mut token = token;
                    match token {
                        Token::LBracket => self.brackets += 1,
                        Token::RBracket => self.brackets = self.brackets.saturating_sub(1),
                        Token::End if self.is_end_index() => token = Token::EndIndex,
                        Token::BlockComment => {
                            if !self.inner.slice().ends_with("*/") || self.inner.slice().len() < 4 {
                                self.unterminated = true;
                                self.diagnostics.push(
                                    Diagnostic::error(
                                        "E0103",
                                        "unterminated block comment",
                                        self.span(range.start, range.start + 2),
                                        "this comment is never closed",
                                    )
                                    .with_help("close it with `*/`; block comments do not nest"),
                                );
                            }
                            continue;
                        }
                        Token::String(s) if s.len() < 2 || !s.ends_with('"') || ends_in_escape(s) => {
                            self.unterminated = true;
                            self.diagnostics.push(
                                Diagnostic::error(
                                    "E0102",
                                    "unterminated string",
                                    self.span(range.start, range.start + 1),
                                    "this string is never closed",
                                )
                                .with_help("strings may span lines, so this one runs to the end of the file"),
                            );
                        }
                        Token::MalformedNumber(_) => end = self.check_number(range.start, range.end, true),
                        Token::Integer(_) | Token::Real(_) => end = self.check_number(range.start, range.end, false),
                        Token::QuotedIdent(quoted) => {
                            if quoted == "''" {
                                self.diagnostics.push(
                                    Diagnostic::error(
                                        "E0101",
                                        "an empty quoted identifier `''`",
                                        self.span(range.start, range.end),
                                        "no name between the quotes",
                                    )
                                    .with_help(
                                        "a quoted identifier holds at least one character; strings use double quotes",
                                    ),
                                );
                            }
                            token = Token::Ident(quoted);
                        }
                        _ => {}
                    }
                    return Some(Ok((range.start, token, end)));
                }
            }
        }
    }
}

/// A string slice like `"abc\"` whose last quote is escaped is still unterminated.
fn ends_in_escape(s: &str) -> bool {
    let body = &s[1..s.len() - 1];
    body.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// The lexer never hands an error to the parser (errors are collected as diagnostics); this
/// type exists because lalrpop's external-lexer interface requires one.
#[derive(Debug, Clone, PartialEq)]
pub enum LexicalError {}

/// Decodes the escapes of a string literal (with its quotes). Returns the text and the byte
/// offsets (relative to the literal) of unknown escapes.
pub fn unescape(literal: &str) -> (String, Vec<(usize, usize)>) {
    let inner = literal.strip_prefix('"').unwrap_or(literal);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut bad = Vec::new();
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some((_, e)) => match e {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                '\'' => out.push('\''),
                '?' => out.push('?'),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                other => {
                    bad.push((i + 1, i + 1 + 1 + other.len_utf8()));
                    out.push(other);
                }
            },
            None => bad.push((i + 1, i + 2)),
        }
    }
    (out, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> (Vec<String>, Vec<&'static str>) {
        let mut lexer = Lexer::new(src, FileId(0));
        let tokens = lexer.by_ref().map(|t| format!("{}", t.unwrap().1)).collect();
        (tokens, lexer.diagnostics.iter().map(|d| d.code).collect())
    }

    #[test]
    fn numbers_in_all_forms() {
        let (t, d) = kinds("1 1.5 .5 1e-3 2.5E+4 1. 3e2");
        assert_eq!(
            t,
            [
                "number `1`",
                "number `1.5`",
                "number `.5`",
                "number `1e-3`",
                "number `2.5E+4`",
                "number `1.`",
                "number `3e2`"
            ]
        );
        assert!(d.is_empty());
    }

    #[test]
    fn lexical_errors_are_reported_and_lexing_continues() {
        let (t, d) = kinds("a $$ b 1e+ c 2x \"open");
        assert_eq!(t.len(), 6, "{t:?}");
        assert_eq!(d, ["E0101", "E0104", "E0104", "E0102"]);
        // The letters after a number are swallowed into it and reported once.
        let (t, d) = kinds("1ex 2abc 'quoted name' x '' y");
        assert_eq!(
            t,
            [
                "number `1e`",
                "number `2`",
                "identifier `'quoted name'`",
                "identifier `x`",
                "identifier `''`",
                "identifier `y`"
            ]
        );
        assert_eq!(d, ["E0104", "E0104", "E0101"]);
        let (_, d) = kinds("x /* never closed");
        assert_eq!(d, ["E0103"]);
    }

    #[test]
    fn comments_and_keywords() {
        let (t, d) = kinds("within; // x\n /* y */ model potential stream");
        assert_eq!(t, ["`within`", "`;`", "`model`", "`potential`", "`stream`"]);
        assert!(d.is_empty());
    }

    #[test]
    fn string_escapes() {
        assert_eq!(unescape(r#""a\"b\\c\nd""#).0, "a\"b\\c\nd");
        assert_eq!(unescape(r#""bad\q""#).1, vec![(4, 6)]);
        let (_, d) = kinds(r#""ends in backslash\""#);
        assert_eq!(d, ["E0102"]);
    }
}
