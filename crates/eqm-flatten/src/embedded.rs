//! The embedded standard library, parsed package by package as lookups reach its packages.
//!
//! Input: the texts of the embedded library files (`crate::stdlib`, or the replacements a front
//! end read) whose top-level packages no library directory replaces. Output: the packages known
//! by name but not parsed yet ([`Embedded::unloaded`]; the class table marks them as it marks the
//! unread classes of a library directory, so that a lookup reaching one asks for it), and for a
//! package asked for, the text to parse ([`Embedded::take`]): the package's definition with the
//! long definitions of the packages nested in it blanked out (each handed out in turn when a
//! lookup reaches it), every byte outside it a space or its line break. The tree's spans are
//! therefore those of the whole file, which the source map holds once, and a diagnostic or
//! excerpt points where it would in the file parsed whole.
//!
//! A file is scanned with the lexer alone, the first time a lookup reaches its top-level
//! package: long class definitions nest by `end Name;`. Only long package definitions written
//! directly in a package, with no prefix but `encapsulated` or `partial`, become pieces of their
//! own; every other class stays in its package's piece. A file the scan cannot follow (an `end`
//! that closes no open class, a top-level definition that is not such a package) is handed out
//! whole. This deliberately parses nothing and decides no lookup: `Sources` parses the pieces and
//! the class table answers the lookups.

use eqm_diag::source::{FileId, SourceMap};
use eqm_syntax::lexer::Token;
use logos::Logos;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

/// The embedded library files of a session and which of their packages were handed out.
#[derive(Debug, Default)]
pub struct Embedded {
    files: Vec<File>,
    packages: Vec<Package>,
    /// Every package found by a scan, by its dotted name.
    by_name: BTreeMap<String, usize>,
}

#[derive(Debug)]
struct File {
    /// The name the source map gives the file (`<stdlib>/stdlib/Modelica.eqm`).
    name: String,
    text: Cow<'static, str>,
    /// The top-level package the file defines or adds to (`within` it).
    top_level: &'static str,
    scanned: bool,
    /// The file's id in the source map, once a piece of it was handed out.
    id: Option<FileId>,
}

#[derive(Debug)]
struct Package {
    file: usize,
    name: String,
    /// The dotted name of the enclosing package, `None` for a top-level package.
    within: Option<String>,
    /// The bytes of the file the piece keeps: the definition, and for a package at the top of
    /// its file also the file's `within` clause; the whole file when the scan failed.
    kept: Vec<Range<usize>>,
    /// The packages nested in this one that are pieces of their own (blanked in this piece).
    nested: Vec<usize>,
    /// The files handed out whole with this top-level package, because a file of it could not
    /// be scanned (each, after the first, a package without a name of its own).
    along: Vec<usize>,
    loaded: bool,
}

/// A package to parse: the text (of the whole file's length, outside the package blank), the
/// file's id in the source map, and the enclosing package when the text has no `within` clause
/// that says it.
#[derive(Debug)]
pub struct Piece {
    pub file: FileId,
    pub text: String,
    pub within: Option<String>,
}

impl Embedded {
    /// The embedded library of the files `files`, each `(source-map name, text, top-level
    /// package)`; nothing is scanned yet.
    pub fn new(files: Vec<(String, Cow<'static, str>, &'static str)>) -> Embedded {
        Embedded {
            files: files
                .into_iter()
                .map(|(name, text, top_level)| File {
                    name,
                    text,
                    top_level,
                    scanned: false,
                    id: None,
                })
                .collect(),
            ..Embedded::default()
        }
    }

    /// The packages known by name and not handed out yet whose enclosing package was, each
    /// `(enclosing package, name)` with `None` for a top-level package.
    pub fn unloaded(&self) -> Vec<(Option<&str>, &str)> {
        let mut found: Vec<(Option<&str>, &str)> = Vec::new();
        for file in self.files.iter().filter(|f| !f.scanned) {
            if !found.contains(&(None, file.top_level)) {
                found.push((None, file.top_level));
            }
        }
        for package in self.packages.iter().filter(|p| !p.loaded) {
            let enclosing_loaded = package
                .within
                .as_ref()
                .is_none_or(|w| self.by_name.get(w).is_none_or(|&k| self.packages[k].loaded));
            if enclosing_loaded {
                found.push((package.within.as_deref(), package.name.as_str()));
            }
        }
        found
    }

    /// The pieces of the package `full_name` when it is embedded and not handed out yet (one,
    /// or a top-level package's whole files when one of them could not be scanned); a file
    /// they are in is added to `map` the first time.
    pub fn take(&mut self, full_name: &str, map: &mut SourceMap) -> Vec<Piece> {
        let top_level = full_name.split('.').next().unwrap_or(full_name);
        self.scan_files_of(top_level);
        let Some(&k) = self.by_name.get(full_name) else {
            return Vec::new();
        };
        if self.packages[k].loaded {
            return Vec::new();
        }
        let along = self.packages[k].along.clone();
        std::iter::once(k).chain(along).map(|k| self.piece(k, map)).collect()
    }

    /// The piece of package `k`, marked as handed out.
    fn piece(&mut self, k: usize, map: &mut SourceMap) -> Piece {
        self.packages[k].loaded = true;
        let package = &self.packages[k];
        let file = &mut self.files[package.file];
        let id = *file
            .id
            .get_or_insert_with(|| map.add(file.name.clone(), file.text.to_string()));
        let blanked: Vec<Range<usize>> = package
            .nested
            .iter()
            .map(|&n| self.packages[n].kept.last().cloned().unwrap_or_default())
            .collect();
        let text = piece_text(&file.text, &package.kept, &blanked);
        // A package at the top of its file keeps the file's own `within` clause.
        let within = match package.kept.len() {
            1 => package.within.clone(),
            _ => None,
        };
        Piece { file: id, text, within }
    }

    /// The dotted names of every package not handed out yet, each after the package it is in:
    /// for a caller that needs the whole library (the suggestions for a model that is not
    /// found).
    pub fn all_unloaded(&mut self) -> Vec<String> {
        let top_levels: Vec<&'static str> = self.files.iter().map(|f| f.top_level).collect();
        for top_level in top_levels {
            self.scan_files_of(top_level);
        }
        let mut names: Vec<String> = (self.packages.iter().filter(|p| !p.loaded))
            .map(|p| match &p.within {
                Some(w) => format!("{w}.{}", p.name),
                None => p.name.clone(),
            })
            .collect();
        names.sort_by_key(|n| n.matches('.').count());
        names
    }

    /// Scans the files of the top-level package `top_level` not scanned yet. When one of them
    /// cannot be scanned, they are all handed out whole, together, as they were parsed before
    /// pieces existed.
    fn scan_files_of(&mut self, top_level: &str) {
        let files: Vec<usize> = (0..self.files.len())
            .filter(|&f| !self.files[f].scanned && self.files[f].top_level == top_level)
            .collect();
        let mut scans = Vec::new();
        for &f in &files {
            self.files[f].scanned = true;
            scans.push(scan(&self.files[f].text));
        }
        if scans.iter().all(Option::is_some) {
            for (f, scanned) in files.into_iter().zip(scans.into_iter().flatten()) {
                self.add_scanned(f, scanned);
            }
            return;
        }
        let Some((&first, rest)) = files.split_first() else {
            return;
        };
        let whole = |embedded: &mut Embedded, f: usize, name: String| {
            embedded.packages.push(Package {
                file: f,
                name,
                within: None,
                kept: vec![0..0, 0..embedded.files[f].text.len()],
                nested: Vec::new(),
                along: Vec::new(),
                loaded: false,
            });
            embedded.packages.len() - 1
        };
        let k = whole(self, first, top_level.to_string());
        for &f in rest {
            let other = whole(self, f, String::new());
            self.packages[k].along.push(other);
            // Handed out only with the package, never asked for by a name of its own.
            self.packages[other].within = Some(top_level.to_string());
            self.packages[other].loaded = true;
        }
        self.by_name.entry(top_level.to_string()).or_insert(k);
    }

    fn add_scanned(&mut self, file: usize, scanned: Scanned) {
        let first = self.packages.len();
        for found in scanned.packages {
            let within = match found.enclosing {
                Some(e) => Some(self.full_name(first + e)),
                None => scanned.within.clone(),
            };
            let mut kept = vec![found.range];
            if found.enclosing.is_none()
                && let Some(clause) = &scanned.within_clause
            {
                kept.insert(0, clause.clone());
            }
            let k = self.packages.len();
            self.packages.push(Package {
                file,
                name: found.name,
                within,
                kept,
                nested: Vec::new(),
                along: Vec::new(),
                loaded: false,
            });
            if let Some(e) = found.enclosing {
                self.packages[first + e].nested.push(k);
            }
            let full = self.full_name(k);
            self.by_name.entry(full).or_insert(k);
        }
    }

    fn full_name(&self, k: usize) -> String {
        let p = &self.packages[k];
        match &p.within {
            Some(w) => format!("{w}.{}", p.name),
            None => p.name.clone(),
        }
    }
}

/// `text` with every byte outside `kept` or inside `blanked` a space (line breaks kept), up to
/// the end of the last kept range: the same byte offsets, so the same spans.
fn piece_text(text: &str, kept: &[Range<usize>], blanked: &[Range<usize>]) -> String {
    let end = kept.iter().map(|r| r.end).max().unwrap_or(0);
    let mut bytes: Vec<u8> = text.as_bytes()[..end]
        .iter()
        .map(|&b| if b == b'\n' { b'\n' } else { b' ' })
        .collect();
    for range in kept {
        bytes[range.clone()].copy_from_slice(&text.as_bytes()[range.clone()]);
    }
    for range in blanked {
        for b in &mut bytes[range.clone()] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Every range starts and ends at a token's boundary, so whole characters were kept or
    // blanked; a text that is not UTF-8 would mean a broken scan, and is then left empty.
    String::from_utf8(bytes).unwrap_or_default()
}

/// What a scan found in one file.
#[derive(Debug)]
struct Scanned {
    /// The dotted name of the file's `within` clause, and the clause's bytes.
    within: Option<String>,
    within_clause: Option<Range<usize>>,
    /// The packages that are pieces of their own, each after the package it is in.
    packages: Vec<ScannedPackage>,
}

#[derive(Debug)]
struct ScannedPackage {
    name: String,
    /// Its index among the scanned packages, `None` at the top of the file.
    enclosing: Option<usize>,
    /// From its first prefix keyword to the `;` after `end Name`.
    range: Range<usize>,
}

/// A long class definition open during the scan.
struct Open<'s> {
    name: &'s str,
    /// Its index among the scanned packages when it is a piece of its own.
    package: Option<usize>,
}

/// The packages of `text` and how they nest, or `None` when the scan cannot follow the text.
fn scan(text: &str) -> Option<Scanned> {
    let mut tokens: Vec<(Token<'_>, Range<usize>)> = Vec::new();
    for (token, span) in Token::lexer(text).spanned() {
        match token {
            Ok(Token::BlockComment) => {}
            Ok(token) => tokens.push((token, span)),
            Err(_) => return None,
        }
    }
    let mut scanned = Scanned {
        within: None,
        within_clause: None,
        packages: Vec::new(),
    };
    let mut i = 0;
    if let Some((Token::Within, start)) = tokens.first() {
        let semi = tokens.iter().position(|(t, _)| *t == Token::Semi)?;
        let name: String = tokens[1..semi]
            .iter()
            .map(|(t, _)| match t {
                Token::Ident(s) => Some(*s),
                Token::Dot => Some("."),
                _ => None,
            })
            .collect::<Option<String>>()?;
        scanned.within = (!name.is_empty()).then_some(name);
        scanned.within_clause = Some(start.start..tokens[semi].1.end);
        i = semi + 1;
    }
    let mut open: Vec<Open<'_>> = Vec::new();
    while i < tokens.len() {
        let (token, span) = &tokens[i];
        if *token == Token::End {
            if let (Some((Token::Ident(name) | Token::QuotedIdent(name), _)), Some((Token::Semi, semi))) =
                (tokens.get(i + 1), tokens.get(i + 2))
            {
                let closed = open.pop()?;
                if closed.name != *name {
                    return None;
                }
                if let Some(k) = closed.package {
                    scanned.packages[k].range.end = semi.end;
                }
                i += 3;
                continue;
            }
        } else if let Some((name, after)) = long_class_name(&tokens, i) {
            let at_top = open.is_empty();
            let enclosing = open.last().and_then(|o| o.package);
            let (start, only_allowed_prefixes) = prefixes_start(&tokens, i);
            let is_piece = *token == Token::Package && only_allowed_prefixes && (at_top || enclosing.is_some());
            if at_top && !is_piece {
                return None;
            }
            let package = is_piece.then(|| {
                scanned.packages.push(ScannedPackage {
                    name: name.to_string(),
                    enclosing,
                    range: start..span.end,
                });
                scanned.packages.len() - 1
            });
            open.push(Open { name, package });
            i = after;
            continue;
        } else if open.is_empty() {
            // Only class definitions stand at the top of a file after its `within` clause.
            return None;
        }
        i += 1;
    }
    open.is_empty().then_some(scanned)
}

/// The name of the long class definition whose class keyword is token `i`, and the index of
/// the token after the name; `None` for a short definition (`type T = Real`), a function given
/// as an argument (`function f(k = 2)`) or a token that starts no definition.
fn long_class_name<'s>(tokens: &[(Token<'s>, Range<usize>)], i: usize) -> Option<(&'s str, usize)> {
    let is_class_keyword = matches!(
        tokens[i].0,
        Token::Class
            | Token::Model
            | Token::Block
            | Token::Connector
            | Token::Record
            | Token::Type
            | Token::Package
            | Token::Function
    ) || (tokens[i].0 == Token::Operator
        && matches!(tokens.get(i + 1), Some((Token::Ident(_) | Token::QuotedIdent(_), _))));
    if !is_class_keyword {
        return None;
    }
    let mut j = i + 1;
    if matches!(tokens.get(j), Some((Token::Extends, _))) {
        j += 1;
    }
    let name = match tokens.get(j) {
        Some((Token::Ident(name) | Token::QuotedIdent(name), _)) => *name,
        _ => return None,
    };
    match tokens.get(j + 1) {
        Some((Token::Eq | Token::LParen, _)) => None,
        _ => Some((name, j + 1)),
    }
}

/// Where the definition whose class keyword is token `i` starts (its first prefix keyword), and
/// whether its prefixes are only those a package that is a piece of its own may have.
fn prefixes_start(tokens: &[(Token<'_>, Range<usize>)], i: usize) -> (usize, bool) {
    let mut k = i;
    let mut allowed = true;
    while k > 0 {
        match tokens[k - 1].0 {
            Token::Encapsulated | Token::Partial => {}
            Token::Final
            | Token::Replaceable
            | Token::Redeclare
            | Token::Inner
            | Token::Outer
            | Token::Expandable
            | Token::Pure
            | Token::Impure
            | Token::Operator => allowed = false,
            _ => break,
        }
        k -= 1;
    }
    (tokens[k].1.start, allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_finds_the_packages_and_how_they_nest() {
        let text = "within A;\npackage B \"b\"\n  model M\n    Real x[end];\n  equation\n    if x > 0 then end if;\n  end M;\n  encapsulated package C\n    type T = Real;\n    function f input Real u; end f;\n  end C;\n  replaceable package D\n  end D;\nend B;\n";
        let scanned = scan(text).expect("the scan follows the text");
        assert_eq!(scanned.within.as_deref(), Some("A"));
        let names: Vec<(&str, Option<usize>)> = scanned
            .packages
            .iter()
            .map(|p| (p.name.as_str(), p.enclosing))
            .collect();
        // `D` has a prefix a piece may not have, so it stays in `B`'s piece.
        assert_eq!(names, [("B", None), ("C", Some(0))]);
        let c = &scanned.packages[1].range;
        assert!(text[c.clone()].starts_with("encapsulated package C"));
        assert!(text[c.clone()].ends_with("end C;"));
    }

    #[test]
    fn an_end_that_closes_another_class_fails_the_scan() {
        assert!(scan("package A\n  model M\n  end N;\nend A;\n").is_none());
        assert!(scan("package A\n  model M\n  end M;\n").is_none());
        assert!(scan("model A\nend A;\n").is_none());
    }

    use eqm_syntax::ast;

    /// Every class inside `class` (itself included), by dotted name, after `prefix`.
    fn classes<'t>(class: &'t ast::ClassDef, prefix: &str, out: &mut BTreeMap<String, &'t ast::ClassDef>) {
        let name = match prefix {
            "" => class.name.name.clone(),
            _ => format!("{prefix}.{}", class.name.name),
        };
        if let ast::ClassBody::Long { sections, .. } = &class.body {
            for section in sections {
                if let ast::Section::Elements { elements, .. } = section {
                    for element in elements {
                        if let ast::Element::Class(nested) = element {
                            classes(nested, &name, out);
                        }
                    }
                }
            }
        }
        out.insert(name, class);
    }

    /// `class` (named `name`) without the nested classes whose dotted names are in `left_out`,
    /// and without what a left-out class changes and nothing reads: the span of a list of
    /// elements, and a list left empty.
    fn without(class: &ast::ClassDef, name: &str, left_out: &BTreeMap<String, ast::ClassDef>) -> ast::ClassDef {
        let mut class = class.clone();
        if let ast::ClassBody::Long { sections, .. } = &mut class.body {
            for section in sections.iter_mut() {
                if let ast::Section::Elements { elements, span, .. } = section {
                    elements.retain(|e| match e {
                        ast::Element::Class(nested) => !left_out.contains_key(&format!("{name}.{}", nested.name.name)),
                        _ => true,
                    });
                    *span = class.span;
                }
            }
            sections.retain(|s| !matches!(s, ast::Section::Elements { elements, .. } if elements.is_empty()));
        }
        class
    }

    /// The shipped library read piece by piece has every class of the files parsed whole, each
    /// with the same tree and spans, save the nested packages that are pieces of their own.
    #[test]
    fn the_pieces_of_the_library_are_the_files_parsed_whole() {
        let files = (0..crate::stdlib::FILES.len())
            .map(|k| {
                let (path, text) = crate::stdlib::FILES[k];
                (
                    format!("<stdlib>/{path}"),
                    Cow::Borrowed(text),
                    crate::stdlib::PACKAGES[k],
                )
            })
            .collect();
        let mut embedded = Embedded::new(files);
        let mut map = SourceMap::default();
        // Each piece's tree by the dotted name of its package.
        let mut pieces: BTreeMap<String, ast::ClassDef> = BTreeMap::new();
        loop {
            let names = embedded.all_unloaded();
            if names.is_empty() {
                break;
            }
            for name in names {
                for piece in embedded.take(&name, &mut map) {
                    let (tree, diagnostics) = eqm_syntax::parse_file(piece.file, &piece.text);
                    assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
                    assert_eq!(tree.classes.len(), 1, "{name}");
                    pieces.insert(name.clone(), tree.classes[0].clone());
                }
            }
        }
        assert!(embedded.files.iter().all(|f| f.scanned));
        assert!(
            embedded.packages.iter().all(|p| p.along.is_empty()),
            "a file was not scanned"
        );
        let mut whole_trees = Vec::new();
        for k in 0..map.len() {
            let file = map.get(FileId(k as u32));
            let (tree, _) = eqm_syntax::parse_file(FileId(k as u32), &file.text);
            whole_trees.push(tree);
        }
        let mut whole: BTreeMap<String, &ast::ClassDef> = BTreeMap::new();
        for tree in &whole_trees {
            let prefix = match &tree.within {
                Some(Some(w)) => w.parts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join("."),
                _ => String::new(),
            };
            for class in &tree.classes {
                classes(class, &prefix, &mut whole);
            }
        }
        let mut read: BTreeMap<String, &ast::ClassDef> = BTreeMap::new();
        for (name, class) in &pieces {
            let prefix = name.rsplit_once('.').map_or("", |(p, _)| p);
            classes(class, prefix, &mut read);
        }
        assert_eq!(whole.keys().collect::<Vec<_>>(), read.keys().collect::<Vec<_>>());
        assert!(pieces.len() > 20, "only {} pieces", pieces.len());
        for (name, piece) in &pieces {
            // A nested package that is a piece of its own is blanked in its package's piece.
            let mut inside = BTreeMap::new();
            classes(piece, name.rsplit_once('.').map_or("", |(p, _)| p), &mut inside);
            inside.remove(name);
            assert!(inside.keys().all(|n| !pieces.contains_key(n)), "{name}");
            assert_eq!(
                without(whole[name], name, &pieces),
                without(piece, name, &pieces),
                "{name}"
            );
        }
    }

    #[test]
    fn a_piece_keeps_the_offsets_of_the_file() {
        let text = "package A\n  package B\n    model M end M;\n  end B;\n  model N end N;\nend A;\n";
        let a = 0..text.len() - 1;
        let b = text.find("package B").unwrap()..text.find("end B;").unwrap() + 6;
        let piece = piece_text(text, &[a], &[b]);
        assert_eq!(piece.len(), text.len() - 1);
        assert!(!piece.contains("model M"));
        assert_eq!(piece.find("model N"), text.find("model N"));
        assert_eq!(
            piece.matches('\n').count(),
            text[..text.len() - 1].matches('\n').count()
        );
    }
}
