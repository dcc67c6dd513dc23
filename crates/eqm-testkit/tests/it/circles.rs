//! No import circle between the top-level modules of a crate.
//!
//! Input: the `src/` files of each crate (`source`). Output: one failure naming every circle
//! (its modules in order) with one import per edge as `path:line`.
//!
//! The nodes are the crate's top-level modules (`src/name.rs` or `src/name/`) and the crate
//! root (`lib.rs` or `main.rs`, with the modules written inline in it), named `crate`. A module
//! has an edge to another when its code names `crate::other` (or `crate::{.., other, ..}`, or
//! reaches the root with `super::`); a name the root re-exports with `pub use other::..` counts
//! as `other`, any other name defined in the root as the root. The root has an edge to a module
//! when its code names `module::` or imports it with a `use` that is not `pub`; its `mod` lines
//! and its `pub use` re-exports are not edges. It deliberately resolves no further: a `use` of
//! a glob re-export or a macro's path counts as the root.

use crate::source::{SourceFile, Token, crates, group_members, is_path_sep, repository_files};
use std::collections::BTreeMap;

/// The name of the crate root's node.
const ROOT: &str = "crate";

/// A crate's import graph: for each node, the nodes it imports from, each with the first
/// import that makes the edge (`path:line`).
type Graph = BTreeMap<String, BTreeMap<String, String>>;

/// The top-level module of a file under `src/` (`None` for the root and for `src/bin/`), and
/// how many `super::` lead from the file to the root.
fn module_of(src_relative: &str) -> Option<(String, usize)> {
    let parts: Vec<&str> = src_relative.trim_end_matches(".rs").split('/').collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") || parts[0] == "bin" {
        return None;
    }
    let depth = if parts.last() == Some(&"mod") {
        parts.len() - 1
    } else {
        parts.len()
    };
    Some((parts[0].to_string(), depth))
}

/// The import graph of one crate from its files (paths relative to the repository).
pub fn graph(files: &[&SourceFile]) -> Graph {
    let src_of = |f: &SourceFile| f.path.split_once("/src/").map(|(_, rest)| rest.to_string());
    let root = files
        .iter()
        .find(|f| matches!(src_of(f).as_deref(), Some("lib.rs" | "main.rs")));
    let mut modules: BTreeMap<String, Vec<(&SourceFile, usize)>> = BTreeMap::new();
    for file in files {
        if let Some((module, depth)) = src_of(file).as_deref().and_then(module_of) {
            modules.entry(module).or_default().push((file, depth));
        }
    }
    let mut graph: Graph = modules.keys().map(|m| (m.clone(), BTreeMap::new())).collect();
    graph.insert(ROOT.to_string(), BTreeMap::new());
    let Some(root) = root else {
        return graph;
    };
    let reexports = reexports(root, &modules);
    let resolve = |name: &str| -> Option<String> {
        if modules.contains_key(name) {
            Some(name.to_string())
        } else if let Some(m) = reexports.get(name) {
            Some(m.clone())
        } else if matches!(name, "self" | "super" | "crate") {
            None
        } else {
            Some(ROOT.to_string())
        }
    };
    for (module, files) in &modules {
        for (file, depth) in files {
            for (name, line) in root_names(file, *depth) {
                if let Some(target) = resolve(&name).filter(|t| t != module) {
                    let edges = graph.get_mut(module).expect("a node");
                    edges.entry(target).or_insert_with(|| file.at(line));
                }
            }
        }
    }
    for (target, line) in root_edges(root, &modules) {
        let edges = graph.get_mut(ROOT).expect("the root");
        edges.entry(target).or_insert_with(|| root.at(line));
    }
    graph
}

/// The names a file reaches at the crate root: the first segment after `crate::` (or after
/// `depth` times `super::`), each name of a `crate::{...}` group, with their lines.
fn root_names(file: &SourceFile, depth: usize) -> Vec<(String, usize)> {
    let t = &file.tokens;
    let mut names = Vec::new();
    let mut k = 0;
    while k < t.len() {
        let after = if t[k].is("crate") && is_path_sep(t, k + 1) && !(k > 0 && t[k - 1].is("$")) {
            Some(k + 3)
        } else if t[k].is("super") && !(k >= 3 && t[k - 1].is(":") && t[k - 3].is("super")) {
            let mut j = k;
            let mut supers = 0;
            while j < t.len() && t[j].is("super") && is_path_sep(t, j + 1) {
                supers += 1;
                j += 3;
            }
            (supers >= depth && supers > 0).then_some(j)
        } else {
            None
        };
        if let Some(at) = after {
            names.extend(segment_names(t, at));
        }
        k += 1;
    }
    names
}

/// The first names of the path that continues at token `at`: one name, or each name at the
/// top level of a `{...}` group.
fn segment_names(t: &[Token], at: usize) -> Vec<(String, usize)> {
    match t.get(at) {
        Some(tok) if tok.is("{") => group_members(t, at)
            .into_iter()
            .filter(|m| m.is_ident())
            .map(|m| (m.text.clone(), m.line))
            .collect(),
        Some(tok) if tok.is_ident() => vec![(tok.text.clone(), tok.line)],
        _ => Vec::new(),
    }
}

/// A `use` statement of the root: the index of its `use` token, of its `;`, and whether it
/// is a re-export (`pub use`, `pub(crate) use`).
fn use_statements(root: &SourceFile) -> Vec<(usize, usize, bool)> {
    let t = &root.tokens;
    let mut found = Vec::new();
    for k in 0..t.len() {
        if !t[k].is("use") {
            continue;
        }
        let public = k > 0 && (t[k - 1].is("pub") || (t[k - 1].is(")") && pub_restricted_before(t, k - 1)));
        let end = (k..t.len()).find(|&j| t[j].is(";")).unwrap_or(t.len() - 1);
        found.push((k, end, public));
    }
    found
}

/// Whether the `)` at `close` ends a `pub(...)` visibility.
fn pub_restricted_before(t: &[Token], close: usize) -> bool {
    (0..close)
        .rev()
        .find(|&j| t[j].is("("))
        .is_some_and(|open| open > 0 && t[open - 1].is("pub"))
}

/// The names the root re-exports from a module: `pub use module::path::{A, B as C}` maps `A`
/// and `C` to `module`.
fn reexports(root: &SourceFile, modules: &BTreeMap<String, Vec<(&SourceFile, usize)>>) -> BTreeMap<String, String> {
    let t = &root.tokens;
    let mut map = BTreeMap::new();
    for (start, end, public) in use_statements(root) {
        if !public {
            continue;
        }
        let mut first = start + 1;
        while first < end && (t[first].is("crate") || t[first].is("self") || t[first].is(":")) {
            first += 1;
        }
        let module = &t[first].text;
        if !modules.contains_key(module) {
            continue;
        }
        for j in first + 1..end {
            let leaf = t[j].is_ident() && matches!(t[j + 1].text.as_str(), "," | "}" | ";");
            if leaf && !t[j].is("self") {
                map.insert(t[j].text.clone(), module.clone());
            }
        }
    }
    map
}

/// The root's edges to modules, with their lines: every `module::` outside `pub use`
/// statements and `mod` lines, and every module named by a `use` that is not `pub`.
fn root_edges(root: &SourceFile, modules: &BTreeMap<String, Vec<(&SourceFile, usize)>>) -> Vec<(String, usize)> {
    let t = &root.tokens;
    let mut skipped = vec![false; t.len()];
    let mut private_uses = vec![false; t.len()];
    for (start, end, public) in use_statements(root) {
        for k in start..=end {
            skipped[k] = public;
            private_uses[k] = !public;
        }
    }
    let mut edges = Vec::new();
    for k in 0..t.len() {
        if skipped[k] || !modules.contains_key(&t[k].text) {
            continue;
        }
        let declared = k > 0 && t[k - 1].is("mod");
        let qualified = k > 0 && t[k - 1].is(":") && !(k >= 3 && (t[k - 3].is("crate") || t[k - 3].is("self")));
        if declared || qualified {
            continue;
        }
        if is_path_sep(t, k + 1) || private_uses[k] {
            edges.push((t[k].text.clone(), t[k].line));
        }
    }
    edges
}

/// The circles of `graph`: its strongly connected components of more than one node, each
/// sorted, in order of their first node.
pub fn circles(graph: &Graph) -> Vec<Vec<String>> {
    // Tarjan's algorithm, written with an explicit stack of (node, next edge) so that no
    // recursion depth depends on the input.
    let nodes: Vec<&String> = graph.keys().collect();
    let index_of = |n: &str| nodes.iter().position(|m| *m == n).expect("a node");
    let edges: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| graph[*n].keys().map(|m| index_of(m)).collect())
        .collect();
    let mut index = vec![usize::MAX; nodes.len()];
    let mut low = vec![0; nodes.len()];
    let mut on_stack = vec![false; nodes.len()];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut found = Vec::new();
    for start in 0..nodes.len() {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0)];
        while let Some(&mut (v, ref mut e)) = work.last_mut() {
            if *e == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(*e) {
                *e += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(nodes[w].clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    found.push(component);
                }
            }
        }
    }
    found.sort();
    found
}

/// Every circle of every crate, described with one import per edge inside it.
pub fn violations(files: &[SourceFile]) -> Vec<String> {
    let mut found = Vec::new();
    for (name, crate_files) in crates(files) {
        let graph = graph(&crate_files);
        for circle in circles(&graph) {
            let mut text = format!("{name}: circle {}", circle.join(" <-> "));
            for from in &circle {
                for (to, at) in &graph[from] {
                    if circle.contains(to) {
                        text.push_str(&format!("\n    {from} -> {to}: {at}"));
                    }
                }
            }
            found.push(text);
        }
    }
    found
}

#[test]
fn no_import_circle_between_the_top_level_modules_of_a_crate() {
    let found = violations(repository_files());
    assert!(
        found.is_empty(),
        "{} import circles:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn circles_through_modules_and_the_root_are_found_with_their_imports() {
    let files = [
        (
            "crates/k/src/lib.rs",
            "mod a;\nmod b;\nmod c;\npub use c::Item;\nuse a::helper;\nfn f() { b::g(); }\n",
        ),
        ("crates/k/src/a.rs", "use crate::{b::x, Item};\n"),
        (
            "crates/k/src/b.rs",
            "// crate::a in a comment\nuse crate::a::y;\nfn g() { let s = \"crate::c\"; }\n",
        ),
        ("crates/k/src/c.rs", "use super::Defined;\n"),
        (
            "crates/k/src/c/inner.rs",
            "use super::super::Other;\nuse super::sibling;\n",
        ),
    ];
    let files: Vec<SourceFile> = files.iter().map(|(p, t)| SourceFile::parse(p.to_string(), t)).collect();
    let refs: Vec<&SourceFile> = files.iter().collect();
    let g = graph(&refs);
    let targets = |n: &str| g[n].keys().cloned().collect::<Vec<_>>();
    assert_eq!(targets("a"), ["b", "c"]);
    assert_eq!(targets("b"), ["a"]);
    assert_eq!(targets("c"), [ROOT]);
    assert_eq!(targets(ROOT), ["a", "b"]);
    assert_eq!(g["b"]["a"], "crates/k/src/b.rs:2");
    assert_eq!(circles(&g), [vec!["a", "b", "c", ROOT]]);
    let found = violations(&files);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].starts_with("k: circle a <-> b <-> c <-> crate"),
        "{}",
        found[0]
    );
    assert!(found[0].contains("a -> c: crates/k/src/a.rs:1"), "{}", found[0]);
    assert!(found[0].contains("crate -> a: crates/k/src/lib.rs:5"), "{}", found[0]);
}
