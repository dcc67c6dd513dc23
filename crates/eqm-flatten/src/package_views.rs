//! Packages seen through the packages that extend them: the constants a package inherits, with
//! the modifiers of the `extends` clauses they were inherited through, and the names that a class
//! extending its inherited version (`redeclare model extends BaseProperties ... end
//! BaseProperties;`) inherits from another package.
//!
//! Input: the class table and, for a name used inside an instance, the instance's layout.
//! Output: the declaration of a package constant and the binding that holds for it
//! ([`Flattener::find_constant`]); and for a class the enclosing package in whose place the
//! extending package stands ([`Flattener::view_of`]): the equations of `PartialMedium
//! .BaseProperties`, inherited by `SimpleAir.BaseProperties`, read `nX` and `MassFraction` of
//! `SimpleAir`, which extends `PartialMedium` with its own values and redeclared classes, as
//! Modelica's section 7.3.1 says. It deliberately does not give a package inherited without a
//! class extending its inherited version such a view (a class reached as `SimpleAir.f` that
//! `PartialMedium` declares is still the class `PartialMedium.f`), nor functions called from
//! inside such classes, which are flattened once per class: a function called through a
//! package that inherits it with modifiers or redeclarations would read the declaring
//! package's values, so such a call is refused instead
//! ([`Flattener::inherited_with_other_meaning`]).

use crate::flattener::Flattener;
use crate::modifier::Scope;
use crate::resolve::{ClassId, TypeRef};
use eqm_syntax::ast;

/// A package constant found by [`Flattener::find_constant`].
#[derive(Clone, Copy)]
pub(crate) struct FoundConstant<'a> {
    pub(crate) decl: &'a ast::ComponentDecl,
    /// The binding that holds: that of the outermost `extends` modifier naming the constant on
    /// the way from the package asked for, or else the declaration's own.
    pub(crate) binding: Option<&'a ast::Expr>,
    /// The class the binding is written in, whose scope its names are looked up in.
    pub(crate) scope: ClassId,
    /// Whether `scope` is the package asked for or one it inherits, whose names are then those
    /// of the package asked for (false for the modifier of a short class definition, written
    /// in the class around it).
    pub(crate) inherited: bool,
    /// Whether its declaration is protected: then it is named by its simple name only.
    pub(crate) protected: bool,
}

/// How many `extends` levels the search for an inherited constant follows; an `extends` cycle
/// (reported where the classes are laid out) ends there.
const MAX_EXTENDS_DEPTH: usize = 256;

impl<'t, 'a> Flattener<'t, 'a> {
    /// The constant (or parameter) `name` of `class`: its own, or the one it inherits through
    /// its `extends` clauses (in their order), with the binding of the outermost modifier. A
    /// base of a kind the class may not extend is reported on the way (E0336), once.
    pub(crate) fn find_constant(&mut self, class: ClassId, name: &str) -> Option<FoundConstant<'a>> {
        self.check_class_restrictions(class);
        self.search_constant(class, name, 0)
    }

    fn search_constant(&mut self, class: ClassId, name: &str, depth: usize) -> Option<FoundConstant<'a>> {
        if let Some((decl, protected)) = self.find_constant_decl(class, name) {
            return Some(FoundConstant {
                decl,
                binding: decl.modification.as_ref().and_then(|m| m.binding.as_ref()),
                scope: class,
                inherited: true,
                protected,
            });
        }
        if depth > MAX_EXTENDS_DEPTH {
            return None;
        }
        let table = self.table;
        // `package Air = SimpleAir(n = 2)` has the constants of `SimpleAir`, with its modifiers.
        if let ast::ClassBody::Short { base, modification, .. } = &table.get(class).def.body {
            let scope = table.get(class).parent.unwrap_or(class);
            let Ok(TypeRef::Class(target)) = table.lookup(scope, base) else {
                return None;
            };
            let mut found = self.search_constant(target, name, depth + 1)?;
            if let Some(binding) = modification.as_ref().and_then(|m| modified_binding(m, name)) {
                found.binding = Some(binding);
                found.scope = scope;
                found.inherited = false;
            }
            return Some(found);
        }
        for x in table.get(class).extends() {
            let Ok(TypeRef::Class(base)) = table.extends_base(class, x) else {
                continue;
            };
            if self.redeclarations.base_kinds_checked.insert((class, base)) {
                self.check_base(class, base, x);
            }
            let Some(mut found) = self.search_constant(base, name, depth + 1) else {
                continue;
            };
            if let Some(binding) = x.modification.as_ref().and_then(|m| modified_binding(m, name)) {
                found.binding = Some(binding);
                found.scope = class;
                found.inherited = true;
            }
            return Some(found);
        }
        None
    }

    /// The class whose constants and classes stand for those of `class`, an enclosing class of
    /// a name used in `scope`: the innermost package a [`Flattener::with_view`] maps `class` to,
    /// or the package that extends `class` and holds a class extending its inherited version
    /// that the instance of `scope` is (or inherits); `class` itself otherwise.
    pub(crate) fn view_of(&self, scope: Scope, class: ClassId) -> ClassId {
        if let Some(&(_, to)) = self.caches.package_views.iter().rev().find(|(from, _)| *from == class) {
            return to;
        }
        let Some(instance) = scope.instance else {
            return class;
        };
        if !self.redeclarations.has_class_extends {
            return class;
        }
        let layout = &self.instances[instance.0 as usize].layout;
        // In a chain (`D2.X` extends `D1.X` extends `B.X`), `B` maps to `D1` and `D1` to `D2`:
        // the most derived package stands for all of them.
        let mut current = class;
        for _ in 0..layout.classes.len() {
            let next = layout.classes.iter().find_map(|&c| {
                let inherited = self.table.class_extends_base(c)?;
                (self.table.get(inherited).parent == Some(current))
                    .then_some(self.table.get(c).parent)
                    .flatten()
            });
            match next {
                Some(n) if n != current => current = n,
                _ => break,
            }
        }
        current
    }

    /// Runs `f` with `from` seen as `to` ([`Flattener::view_of`]): while a binding that the
    /// package `to` inherits from `from` is evaluated, the names it reads are `to`'s.
    pub(crate) fn with_view<T>(&mut self, from: ClassId, to: ClassId, f: impl FnOnce(&mut Self) -> T) -> T {
        if from == to {
            return f(self);
        }
        self.caches.package_views.push((from, to));
        let result = f(self);
        self.caches.package_views.pop();
        result
    }

    /// The packages that the function `class` sees as others: for a function extending its
    /// inherited version (`redeclare function extends h`), the package of each function it
    /// extends that way, seen as the package that declares `class`.
    pub(crate) fn function_views(&self, class: ClassId) -> Vec<(ClassId, ClassId)> {
        let mut views = Vec::new();
        let Some(package) = self.table.get(class).parent else {
            return views;
        };
        let mut current = class;
        while let Some(inherited) = self.table.class_extends_base(current) {
            match self.table.get(inherited).parent {
                Some(from) if from != package && views.len() <= MAX_EXTENDS_DEPTH => views.push((from, package)),
                _ => break,
            }
            current = inherited;
        }
        views
    }

    /// The class a name used in `scope` denotes when its first part is found in an enclosing
    /// class that [`Flattener::view_of`] maps to another package: the same name in that
    /// package. `None` for every other name (the caller looks it up as usual).
    pub(crate) fn viewed_class(&self, scope: Scope, name: &ast::Name) -> Option<TypeRef> {
        if name.global || (self.caches.package_views.is_empty() && !self.redeclarations.has_class_extends) {
            return None;
        }
        let first = name.parts[0].name.as_str();
        let mut current = Some(scope.class);
        while let Some(c) = current {
            let entry = self.table.get(c);
            if self.table.member_class(c, first, 0).is_some() {
                let viewed = self.view_of(scope, c);
                if viewed == c {
                    return None;
                }
                let mut found = self.table.member_class(viewed, first, 0)?;
                for part in &name.parts[1..] {
                    found = self.table.member_class(found, &part.name, 0)?;
                }
                return Some(TypeRef::Class(found));
            }
            if entry.imports().next().is_some() || entry.def.encapsulated {
                // An import may name it; the lookup of the class table answers.
                return None;
            }
            current = entry.parent;
        }
        None
    }
}

/// The binding that the class modification `m` gives the element `name` (`x = 1.4` in
/// `extends P(x = 1.4)`).
fn modified_binding<'a>(m: &'a ast::ClassModification, name: &str) -> Option<&'a ast::Expr> {
    m.arguments.iter().rev().find_map(|arg| {
        if arg.redeclare.is_some() || arg.name.parts.len() != 1 || arg.name.parts[0].name != name {
            return None;
        }
        arg.modification.as_ref()?.binding.as_ref()
    })
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether the classes that package `through` inherits from `declaring` mean something else
    /// in `through` than where they are declared: an `extends` clause on the way from `through`
    /// to `declaring` carries modifiers (`extends PartialMedium(reference_T = 300)`), a short
    /// definition on the way has modifiers, or a package on the way redeclares a class. A
    /// function of `declaring` called as `through.f` would then read `declaring`'s constants
    /// and classes, not `through`'s. Linear in the classes on the way, and found once per pair.
    pub(crate) fn inherited_with_other_meaning(&mut self, through: ClassId, declaring: ClassId) -> bool {
        if let Some(&known) = self.redeclarations.inherited_meanings.get(&(through, declaring)) {
            return known;
        }
        let answer = self.search_other_meaning(through, declaring);
        self.redeclarations
            .inherited_meanings
            .insert((through, declaring), answer);
        answer
    }

    fn search_other_meaning(&self, through: ClassId, declaring: ClassId) -> bool {
        let table = self.table;
        let mut stack = vec![through];
        let mut seen = std::collections::HashSet::new();
        while let Some(class) = stack.pop() {
            if class == declaring || !seen.insert(class) {
                continue;
            }
            let entry = table.get(class);
            if let ast::ClassBody::Short { base, modification, .. } = &entry.def.body {
                if modification.as_ref().is_some_and(|m| !m.arguments.is_empty()) {
                    return true;
                }
                if let Ok(TypeRef::Class(b)) = table.lookup(entry.parent.unwrap_or(class), base) {
                    stack.push(b);
                }
                continue;
            }
            let redeclares = entry
                .elements()
                .any(|(element, _)| matches!(element, ast::Element::Class(c) if c.redeclarable.redeclare));
            if redeclares {
                return true;
            }
            for x in entry.extends() {
                let Ok(TypeRef::Class(base)) = table.extends_base(class, x) else {
                    continue;
                };
                if x.modification.as_ref().is_some_and(|m| !m.arguments.is_empty()) && reaches(table, base, declaring) {
                    return true;
                }
                stack.push(base);
            }
        }
        false
    }
}

/// Whether `class` is `target` or inherits it through `extends` clauses or short definitions.
fn reaches(table: &crate::resolve::ClassTable<'_>, class: ClassId, target: ClassId) -> bool {
    let mut stack = vec![class];
    let mut seen = std::collections::HashSet::new();
    while let Some(c) = stack.pop() {
        if c == target {
            return true;
        }
        if !seen.insert(c) {
            continue;
        }
        let entry = table.get(c);
        if let ast::ClassBody::Short { base, .. } = &entry.def.body {
            if let Ok(TypeRef::Class(b)) = table.lookup(entry.parent.unwrap_or(c), base) {
                stack.push(b);
            }
            continue;
        }
        stack.extend(entry.extends().filter_map(|x| match table.extends_base(c, x) {
            Ok(TypeRef::Class(b)) => Some(b),
            _ => None,
        }));
    }
    false
}
