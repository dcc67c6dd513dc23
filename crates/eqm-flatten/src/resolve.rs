//! Name resolution: the class table and Modelica-style class lookup.
//!
//! Input: the parsed files (embedded stdlib, `EQMPATH` libraries, the user's files).
//! Output: a [`ClassTable`] with every class (nested ones included), its enclosing class and its
//! imports, and lookup functions that resolve a dotted class name from a scope: the class itself
//! and what it inherits, its imports, then the enclosing classes (stopping at `encapsulated`),
//! then the top level and the built-in types. Component names are resolved by the flattener,
//! which knows the instances; this module deliberately knows nothing about instances or values.

use eqm_diag::Diagnostic;
use eqm_ir::expr::FxHashMap;
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ClassId(pub u32);

/// What a type name denotes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TypeRef {
    Builtin(ScalarType),
    Class(ClassId),
}

#[derive(Debug)]
pub struct ClassEntry<'a> {
    pub def: &'a ast::ClassDef,
    pub parent: Option<ClassId>,
    pub full_name: String,
    pub nested: BTreeMap<&'a str, ClassId>,
    /// For a short class definition, the classes its modifier redeclares (`package P2 =
    /// P(redeclare model A = B)` holds `A`): members of the class it defines, in place of the
    /// base's, whose names are looked up where the modifier is written.
    redeclared: BTreeMap<&'a str, ClassId>,
    /// For a class a short class definition's modifier redeclares, that short class.
    pub redeclared_in: Option<ClassId>,
    /// Whether it is declared in a protected section of its enclosing class.
    pub protected: bool,
    /// The class's `extends` clauses and imports in source order, collected once when the
    /// class is added: every type name is looked up through them, so scanning all elements on
    /// each lookup made flattening a class of n components take time quadratic in n.
    extends: Vec<&'a ast::Extends>,
    imports: Vec<&'a ast::Import>,
}

impl<'a> ClassEntry<'a> {
    /// The sections of a long class definition (empty for short ones).
    pub fn sections(&self) -> &'a [ast::Section] {
        match &self.def.body {
            ast::ClassBody::Long { sections, .. } => sections,
            ast::ClassBody::Short { .. } | ast::ClassBody::Enumeration { .. } => &[],
        }
    }

    /// The literals of an enumeration type (`None` for any other class).
    pub fn enumeration(&self) -> Option<&'a [ast::EnumLiteral]> {
        match &self.def.body {
            ast::ClassBody::Enumeration { literals, .. } => Some(literals),
            _ => None,
        }
    }

    /// A new entry, with the `extends` clauses and imports of `def` collected.
    fn new(def: &'a ast::ClassDef, parent: Option<ClassId>, full_name: String) -> ClassEntry<'a> {
        let mut entry = ClassEntry {
            def,
            parent,
            full_name,
            nested: BTreeMap::new(),
            redeclared: BTreeMap::new(),
            redeclared_in: None,
            protected: false,
            extends: Vec::new(),
            imports: Vec::new(),
        };
        for section in entry.sections() {
            if let ast::Section::Elements { elements, .. } = section {
                for element in elements {
                    match element {
                        ast::Element::Extends(x) => entry.extends.push(x),
                        ast::Element::Import(i) => entry.imports.push(i),
                        ast::Element::Component(_) | ast::Element::Class(_) => {}
                    }
                }
            }
        }
        entry
    }

    pub fn elements(&self) -> impl Iterator<Item = (&'a ast::Element, ast::Visibility)> + 'a {
        self.sections().iter().flat_map(|s| match s {
            ast::Section::Elements {
                visibility, elements, ..
            } => elements.iter().map(move |e| (e, *visibility)).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    }

    pub fn extends(&self) -> impl Iterator<Item = &'a ast::Extends> + '_ {
        self.extends.iter().copied()
    }

    pub(crate) fn imports(&self) -> impl Iterator<Item = &'a ast::Import> + Clone + '_ {
        self.imports.iter().copied()
    }
}

#[derive(Debug, Default)]
pub struct ClassTable<'a> {
    pub classes: Vec<ClassEntry<'a>>,
    pub roots: BTreeMap<&'a str, ClassId>,
    pub diagnostics: Vec<Diagnostic>,
    /// The classes whose inherited members [`ClassTable::member_class`] is searching, outermost
    /// first. A class met again on this path inherits from itself, and its members are not
    /// searched a second time: this ends lookups through `extends` cycles (which flattening
    /// reports as E0212) without bounding the length of legitimate inheritance chains.
    searching: RefCell<Vec<ClassId>>,
    /// The classes of library directories known by name but not read yet, by their enclosing
    /// class (`None` for the top level); see [`ClassTable::mark_unloaded`].
    unloaded: BTreeMap<Option<ClassId>, BTreeSet<String>>,
    /// The dotted names of the unread classes a lookup reached, for the caller to read before
    /// it looks again ([`ClassTable::take_requested`]).
    requested: RefCell<BTreeSet<String>>,
    /// Which classes a lookup found, by id (grown on demand); see [`ClassTable::innermost_reached`].
    reached: RefCell<Vec<bool>>,
    /// The answers of the lookups the flattener asked for, by scope, kind and dotted name. A
    /// name is looked up again for every instance and call that uses it, and each lookup walks
    /// the enclosing classes and what they inherit; the Modelica Standard Library's deep
    /// scopes made that most of flattening a large circuit. The table does not change while it
    /// answers, and what a lookup records (the classes it reached or asked to read) a repeat
    /// would record again, so a remembered answer is the answer.
    answers: RefCell<FxHashMap<(ClassId, LookupKind), ByName<Answer>>>,
    /// The answers of [`ClassTable::member_class`] asked from outside a lookup, likewise.
    members: RefCell<FxHashMap<ClassId, ByName<Option<ClassId>>>>,
    /// The answers of [`ClassTable::class_extends_base`], likewise.
    inherited: RefCell<FxHashMap<ClassId, Option<ClassId>>>,
    /// The conversions that apply to the names written inside a top-level class, by the
    /// class's name: those of the libraries it says it uses in an earlier version (see
    /// `crate::converted_lookup`).
    pub(crate) conversions: BTreeMap<String, &'a crate::conversion::Conversions>,
}

/// What a lookup answers.
type Answer = Result<TypeRef, LookupError>;

/// Remembered answers of one scope, by the (dotted) name asked for.
type ByName<T> = FxHashMap<Box<str>, T>;

/// Which of the table's lookups an answer in [`ClassTable::answers`] is of.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum LookupKind {
    Name,
    Base,
}

/// The margin of the bound on nested lookup calls. A lookup nests a few calls per class of an
/// inheritance chain, and [`ClassTable::searching`] enters each class once, so no lookup nests
/// deeper than four calls per class of the table plus this margin; the bound is only a safety
/// net, and a lookup that reaches it fails as a cycle would.
const MAX_LOOKUP_DEPTH: usize = 64;

impl<'a> ClassTable<'a> {
    /// Builds the table. Files are given library first, user files last: a user class with a
    /// library class's name shadows it, while two user classes with one name are an error.
    pub fn build(library: &[&'a ast::StoredDefinition], user: &[&'a ast::StoredDefinition]) -> ClassTable<'a> {
        let mut table = ClassTable::default();
        let mut user_roots: BTreeMap<&'a str, &'a ast::ClassDef> = BTreeMap::new();
        for (is_user, file) in library
            .iter()
            .map(|f| (false, *f))
            .chain(user.iter().map(|f| (true, *f)))
        {
            let within = match &file.within {
                Some(Some(name)) => table.resolve_path(name.parts.iter().map(|p| p.name.as_str())),
                _ => None,
            };
            for class in &file.classes {
                if is_user
                    && within.is_none()
                    && let Some(previous) = user_roots.insert(&class.name.name, class)
                {
                    {
                        table.diagnostics.push(
                            Diagnostic::error(
                                "E0207",
                                format!("class `{}` is defined twice", class.name.name),
                                class.name.span,
                                "second definition",
                            )
                            .with_label(previous.name.span, "first definition"),
                        );
                        continue;
                    }
                }
                let id = table.add(class, within);
                match within {
                    Some(parent) => {
                        table.classes[parent.0 as usize].nested.insert(&class.name.name, id);
                    }
                    None => {
                        table.roots.insert(&class.name.name, id);
                    }
                }
            }
        }
        table
    }

    /// Marks classes stored in library directories but not read yet, each `(enclosing class,
    /// name)` (see `crate::library`). A lookup that reaches one records its dotted name
    /// ([`ClassTable::take_requested`]): its answer may then be wrong, as the class is missing,
    /// so the caller reads the classes asked for and looks again with a new table, until a
    /// round asks for nothing. A round that asks for nothing reached no unread class, so its
    /// answers are those of the whole library.
    pub fn mark_unloaded(&mut self, unloaded: &[(Option<&str>, &str)]) {
        for &(within, name) in unloaded {
            let owner = match within {
                Some(w) => match self.declared(w) {
                    Some(id) => Some(id),
                    None => continue,
                },
                None if self.roots.contains_key(name) => continue,
                None => None,
            };
            if owner.is_some_and(|o| self.get(o).nested.contains_key(name)) {
                continue;
            }
            self.unloaded.entry(owner).or_default().insert(name.to_string());
        }
        // An answer given before may have been "not found" where a class is now known unread.
        self.answers.get_mut().clear();
        self.members.get_mut().clear();
    }

    /// Whether a lookup reached an unread library class since the last
    /// [`ClassTable::take_requested`]: answers may then be wrong, and the work done on them is
    /// done again once the class is read.
    pub fn has_requests(&self) -> bool {
        !self.requested.borrow().is_empty()
    }

    /// The dotted names of the unread library classes lookups reached since the last call.
    pub fn take_requested(&self) -> Vec<String> {
        std::mem::take(&mut *self.requested.borrow_mut()).into_iter().collect()
    }

    /// A class by its dotted name through declared classes only (no inheritance, no unread
    /// classes recorded).
    fn declared(&self, dotted: &str) -> Option<ClassId> {
        let mut parts = dotted.split('.');
        let mut id = *self.roots.get(parts.next()?)?;
        for part in parts {
            id = *self.get(id).nested.get(part)?;
        }
        Some(id)
    }

    /// Records that a lookup found `id`.
    fn reach(&self, id: ClassId) -> ClassId {
        let mut reached = self.reached.borrow_mut();
        let k = id.0 as usize;
        if reached.len() <= k {
            reached.resize(self.classes.len().max(k + 1), false);
        }
        reached[k] = true;
        id
    }

    /// Whether the innermost class whose definition contains `span` was found by a lookup
    /// (`true` when no class contains it): a problem of a library file matters only when it is
    /// in a class the model uses.
    pub fn innermost_reached(&self, span: eqm_diag::source::Span) -> bool {
        let innermost = (0..self.classes.len())
            .filter(|&k| {
                let s = self.classes[k].def.span;
                s.file == span.file && s.start <= span.start && span.end <= s.end
            })
            .min_by_key(|&k| self.classes[k].def.span.end - self.classes[k].def.span.start);
        innermost.is_none_or(|k| self.reached.borrow().get(k).copied().unwrap_or(false))
    }

    /// Whether `name` inside `owner` (`None`: at the top level) is an unread library class;
    /// when it is, its dotted name is recorded for the caller to read it.
    fn reaches_unloaded(&self, owner: Option<ClassId>, name: &str) -> bool {
        if !self.unloaded.get(&owner).is_some_and(|names| names.contains(name)) {
            return false;
        }
        let full = match owner {
            Some(o) => format!("{}.{name}", self.get(o).full_name),
            None => name.to_string(),
        };
        self.requested.borrow_mut().insert(full);
        true
    }

    fn add(&mut self, def: &'a ast::ClassDef, parent: Option<ClassId>) -> ClassId {
        let id = ClassId(self.classes.len() as u32);
        let full_name = match parent {
            Some(p) => format!("{}.{}", self.classes[p.0 as usize].full_name, def.name.name),
            None => def.name.name.clone(),
        };
        self.classes.push(ClassEntry::new(def, parent, full_name));
        // Nested classes are added iteratively through an explicit work list.
        let mut work = vec![id];
        while let Some(owner) = work.pop() {
            let entry_def = self.classes[owner.0 as usize].def;
            let owner_name = self.classes[owner.0 as usize].full_name.clone();
            self.add_redeclared_classes(owner);
            if let ast::ClassBody::Long { sections, .. } = &entry_def.body {
                for section in sections {
                    if let ast::Section::Elements {
                        elements, visibility, ..
                    } = section
                    {
                        for element in elements {
                            if let ast::Element::Class(nested) = element {
                                let nid = ClassId(self.classes.len() as u32);
                                let mut entry =
                                    ClassEntry::new(nested, Some(owner), format!("{owner_name}.{}", nested.name.name));
                                entry.protected = *visibility == ast::Visibility::Protected;
                                self.classes.push(entry);
                                self.classes[owner.0 as usize].nested.insert(&nested.name.name, nid);
                                work.push(nid);
                            }
                        }
                    }
                }
            }
        }
        id
    }

    /// Adds the classes the modifier of a short class definition redeclares (see
    /// [`ClassEntry::redeclared`]). Their enclosing class is the one the short definition is
    /// written in, where the modifier's names are looked up.
    fn add_redeclared_classes(&mut self, owner: ClassId) {
        let entry = &self.classes[owner.0 as usize];
        let ast::ClassBody::Short {
            modification: Some(modification),
            ..
        } = &entry.def.body
        else {
            return;
        };
        let (scope, owner_name) = (entry.parent, entry.full_name.clone());
        for argument in &modification.arguments {
            if let Some(ast::RedeclaredElement::Class(def)) = argument.redeclare.as_deref() {
                let id = ClassId(self.classes.len() as u32);
                let name = format!("{owner_name}.{}", def.name.name);
                let mut redeclared = ClassEntry::new(def, scope, name);
                redeclared.redeclared_in = Some(owner);
                self.classes.push(redeclared);
                self.classes[owner.0 as usize].redeclared.insert(&def.name.name, id);
            }
        }
    }

    pub fn get(&self, id: ClassId) -> &ClassEntry<'a> {
        &self.classes[id.0 as usize]
    }

    /// The classes a short definition chain passes through: `class` itself, then the class
    /// each short definition names (`type A = B;` leads from `A` to `B`), ending at the first
    /// long definition, at a built-in type (yielded as [`TypeRef::Builtin`]) or where a base
    /// is not found. A chain longer than the table is a cycle, which flattening reports
    /// elsewhere, so the walk stops there instead of looping.
    pub fn short_definition_chain(&self, class: ClassId) -> impl Iterator<Item = TypeRef> + '_ {
        let mut next = Some(TypeRef::Class(class));
        let mut budget = self.classes.len() + 1;
        std::iter::from_fn(move || {
            let link = next.take()?;
            budget = budget.checked_sub(1)?;
            if let TypeRef::Class(c) = link {
                let entry = self.get(c);
                if let ast::ClassBody::Short { base, .. } = &entry.def.body {
                    next = self.lookup(entry.parent.unwrap_or(c), base).ok();
                }
            }
            Some(link)
        })
    }

    /// Resolves a fully qualified path from the top level, without imports or inheritance.
    pub fn resolve_path<'n>(&self, mut parts: impl Iterator<Item = &'n str>) -> Option<ClassId> {
        let first = parts.next()?;
        let Some(&root) = self.roots.get(first) else {
            self.reaches_unloaded(None, first);
            return None;
        };
        let mut id = self.reach(root);
        for part in parts {
            id = self.member_class(id, part, 0)?;
        }
        Some(id)
    }

    /// Finds a class by its full dotted name (`Mechanics.Translational.Mass`).
    pub fn find(&self, dotted: &str) -> Option<ClassId> {
        self.resolve_path(dotted.split('.'))
    }

    /// A nested class of `class` or of a class it extends.
    pub fn member_class(&self, class: ClassId, name: &str, depth: usize) -> Option<ClassId> {
        // Only a search that starts outside every other is remembered: inside one, the classes
        // being searched (`searching`) and the depth can change the answer.
        if depth > 0 || !self.searching.borrow().is_empty() {
            return self.search_member_class(class, name, depth);
        }
        if let Some(&answer) = self.members.borrow().get(&class).and_then(|m| m.get(name)) {
            return answer;
        }
        let answer = self.search_member_class(class, name, depth);
        self.members
            .borrow_mut()
            .entry(class)
            .or_default()
            .insert(name.into(), answer);
        answer
    }

    fn search_member_class(&self, class: ClassId, name: &str, depth: usize) -> Option<ClassId> {
        if depth > self.max_lookup_depth() {
            return None;
        }
        let entry = self.get(class);
        if let Some(&id) = entry.nested.get(name) {
            return Some(self.reach(id));
        }
        if self.reaches_unloaded(Some(class), name) {
            return None;
        }
        if self.searching.borrow().contains(&class) {
            return None;
        }
        // `package Air = Media.SimpleAir;` has the classes of the class it names. With modifiers
        // of its constants or redeclarations (`package P = Q(n = 2)`) it has none here: a class
        // of `Q` would read `Q`'s `n`. Bounds, nominal values and units of its types
        // (`SpecificEnthalpy(max = 1e6)`) change no value, and their classes are `Q`'s.
        if let Some(&id) = entry.redeclared.get(name) {
            return Some(self.reach(id));
        }
        if let ast::ClassBody::Short { base, modification, .. } = &entry.def.body {
            self.searching.borrow_mut().push(class);
            let found = match self.lookup_from(entry.parent.unwrap_or(class), base, depth + 1, false) {
                Ok(TypeRef::Class(b))
                    if modification.as_ref().is_none_or(|m| {
                        m.arguments.iter().all(|arg| {
                            only_bounds(arg) && self.member_class(b, &arg.name.parts[0].name, depth + 1).is_some()
                        })
                    }) =>
                {
                    self.member_class(b, name, depth + 1)
                }
                _ => None,
            };
            self.searching.borrow_mut().pop();
            return found;
        }
        if entry.extends.is_empty() {
            return None;
        }
        self.searching.borrow_mut().push(class);
        let mut found = None;
        for x in entry.extends() {
            if let Ok(TypeRef::Class(base)) = self.base_from(class, x, depth + 1)
                && let Some(member) = self.member_class(base, name, depth + 1)
            {
                found = Some(member);
                break;
            }
        }
        self.searching.borrow_mut().pop();
        found
    }

    /// See [`MAX_LOOKUP_DEPTH`].
    fn max_lookup_depth(&self) -> usize {
        4 * self.classes.len() + MAX_LOOKUP_DEPTH
    }

    /// Resolves a class name used inside `scope`.
    pub fn lookup(&self, scope: ClassId, name: &ast::Name) -> Result<TypeRef, LookupError> {
        self.remembered(scope, LookupKind::Name, name, || {
            self.lookup_from(scope, name, 0, false)
        })
    }

    /// Resolves a simple (undotted) class name used inside `scope`, without building a name.
    pub fn lookup_simple(&self, scope: ClassId, ident: &str) -> Option<TypeRef> {
        // A name written for an earlier version of a library is looked up by its new name.
        let look = || match self.converted_lookup(scope, false, &[ident]) {
            Some(converted) => converted.ok(),
            None => self.lookup_first(scope, ident, 0, false),
        };
        if !self.searching.borrow().is_empty() {
            return look();
        }
        let key = (scope, LookupKind::Name);
        if let Some(&answer) = self.answers.borrow().get(&key).and_then(|m| m.get(ident)) {
            return answer.ok();
        }
        let answer = look();
        // A simple name that is not found is `NotFound` at its first part, as `lookup` says.
        let remembered = answer.ok_or(LookupError::NotFound { resolved_parts: 0 });
        self.answers
            .borrow_mut()
            .entry(key)
            .or_default()
            .insert(ident.into(), remembered);
        answer
    }

    /// Resolves the base class of an `extends` clause written in `scope`. Modelica does not look
    /// the base up among the classes `scope` inherits, which also keeps lookup from cycling.
    pub fn lookup_base(&self, scope: ClassId, name: &ast::Name) -> Result<TypeRef, LookupError> {
        self.remembered(scope, LookupKind::Base, name, || self.lookup_from(scope, name, 0, true))
    }

    /// The base class of the `extends` clause `x` written in `scope`: for a class extending its
    /// inherited version ([`ast::Extends::inherited`]), the class of that name which the
    /// enclosing class inherits, and otherwise the class the base's name denotes
    /// ([`ClassTable::lookup_base`]).
    pub fn extends_base(&self, scope: ClassId, x: &ast::Extends) -> Result<TypeRef, LookupError> {
        if x.inherited {
            return self.base_from(scope, x, 0);
        }
        self.lookup_base(scope, &x.base)
    }

    /// [`ClassTable::extends_base`] inside a lookup `depth` calls deep.
    fn base_from(&self, scope: ClassId, x: &ast::Extends, depth: usize) -> Result<TypeRef, LookupError> {
        if !x.inherited {
            return self.lookup_from(scope, &x.base, depth, true);
        }
        self.inherited_class(scope, depth)
            .map(TypeRef::Class)
            .ok_or(LookupError::NotFound { resolved_parts: 0 })
    }

    /// For a class extending its inherited version (`model extends B ... end B;`), the class it
    /// extends; `None` for any other class.
    pub fn class_extends_base(&self, class: ClassId) -> Option<ClassId> {
        if !self.get(class).extends.first().is_some_and(|x| x.inherited) {
            return None;
        }
        // Asked for each name looked up inside such a class: remembered, as `members` is.
        if !self.searching.borrow().is_empty() {
            return self.inherited_class(class, 0);
        }
        if let Some(&answer) = self.inherited.borrow().get(&class) {
            return answer;
        }
        let answer = self.inherited_class(class, 0);
        self.inherited.borrow_mut().insert(class, answer);
        answer
    }

    /// Whether any class of the table extends its inherited version.
    pub fn has_class_extends(&self) -> bool {
        self.classes
            .iter()
            .any(|c| c.extends.first().is_some_and(|x| x.inherited))
    }

    /// The class that `class`, a class extending its inherited version, extends: the class of
    /// its name that one of the `extends` clauses of the enclosing class brings in, the first
    /// in the order of the clauses (Modelica's section 7.3.1). `None` when there is none.
    pub fn inherited_class(&self, class: ClassId, depth: usize) -> Option<ClassId> {
        if depth > self.max_lookup_depth() {
            return None;
        }
        let entry = self.get(class);
        let parent = entry.parent?;
        let name = entry.def.name.name.as_str();
        self.get(parent)
            .extends()
            .find_map(|y| match self.base_from(parent, y, depth + 1) {
                Ok(TypeRef::Class(base)) => self.member_class(base, name, depth + 1),
                _ => None,
            })
    }

    /// The answer of a lookup of `name` from `scope`, from [`ClassTable::answers`] or computed
    /// by `look` and remembered. Lookups nested in another (while `searching` holds a class)
    /// are not remembered, as [`ClassTable::member_class`] says.
    fn remembered(
        &self,
        scope: ClassId,
        kind: LookupKind,
        name: &ast::Name,
        look: impl FnOnce() -> Result<TypeRef, LookupError>,
    ) -> Result<TypeRef, LookupError> {
        if !self.searching.borrow().is_empty() {
            return look();
        }
        // A simple name is its own key; a dotted one is joined (with a leading `.` when global).
        let joined;
        let dotted: &str = match &name.parts[..] {
            [only] if !name.global => &only.name,
            parts => {
                let names: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
                joined = format!("{}{}", if name.global { "." } else { "" }, names.join("."));
                &joined
            }
        };
        let key = (scope, kind);
        if let Some(&answer) = self.answers.borrow().get(&key).and_then(|m| m.get(dotted)) {
            return answer;
        }
        let answer = look();
        self.answers
            .borrow_mut()
            .entry(key)
            .or_default()
            .insert(dotted.into(), answer);
        answer
    }

    fn lookup_from(
        &self,
        scope: ClassId,
        name: &ast::Name,
        depth: usize,
        skip_inherited_of_scope: bool,
    ) -> Result<TypeRef, LookupError> {
        if depth > self.max_lookup_depth() {
            return Err(LookupError::Cycle);
        }
        if !self.conversions.is_empty() {
            let parts: Vec<&str> = name.parts.iter().map(|p| p.name.as_str()).collect();
            if let Some(converted) = self.converted_lookup(scope, name.global, &parts) {
                return converted;
            }
        }
        let first = &name.parts[0].name;
        let mut found = if name.global {
            // The global scope holds the top-level classes and the predefined types (`.Real`).
            (self.roots.get(first.as_str()).map(|&c| TypeRef::Class(self.reach(c))))
                .or_else(|| builtin_type(first).map(TypeRef::Builtin))
                .or_else(|| {
                    self.reaches_unloaded(None, first);
                    None
                })
        } else {
            self.lookup_first(scope, first, depth, skip_inherited_of_scope)
        };
        for (i, part) in name.parts.iter().enumerate().skip(1) {
            // A protected class is named by its simple name only (Modelica's section 4.1).
            found = match found {
                Some(TypeRef::Class(c)) => self
                    .member_class(c, &part.name, depth + 1)
                    .filter(|&m| self.can_name_member(c, m))
                    .map(TypeRef::Class),
                _ => None,
            };
            if found.is_none() {
                return Err(LookupError::NotFound { resolved_parts: i });
            }
        }
        found.ok_or(LookupError::NotFound { resolved_parts: 0 })
    }

    /// Whether a dotted name may go on from `class` to its member class `member`: not when the
    /// member is protected (Modelica 4.1: it is named by its simple name only), nor when
    /// `class` is no package and the member is not encapsulated (Modelica 5.3.2: a class that
    /// does not satisfy the restrictions of a package has only its encapsulated classes named
    /// through it).
    fn can_name_member(&self, class: ClassId, member: ClassId) -> bool {
        let member_def = self.get(member).def;
        !self.get(member).protected
            && (member_def.encapsulated
                || member_def.kind.is_function()
                || member_def.kind == ast::ClassKind::Operator
                || self.satisfies_package(class))
    }

    /// Whether `class` is partial: declared so, or defined by a short class definition of a
    /// partial class (Modelica 4.5.1: `model B = A;` is partial when `A` is, whether or not
    /// it says so).
    pub fn is_partial(&self, class: ClassId) -> bool {
        self.short_definition_chain(class)
            .any(|link| matches!(link, TypeRef::Class(c) if self.get(c).def.partial))
    }

    /// Whether `class` satisfies the restrictions of a package as far as its own definition
    /// shows: a package, or a class whose own elements are classes, imports, base classes and
    /// constants, with no equations or algorithms. Its bases are not examined, so a class made
    /// a model only by what it inherits is taken for package-like.
    pub fn satisfies_package(&self, class: ClassId) -> bool {
        let entry = self.get(class);
        if entry.def.kind.is_package() {
            return true;
        }
        entry.sections().iter().all(|section| match section {
            ast::Section::Elements { elements, .. } => elements.iter().all(|element| match element {
                ast::Element::Component(clause) => clause.prefixes.variability == ast::Variability::Constant,
                ast::Element::Class(_) | ast::Element::Extends(_) | ast::Element::Import(_) => true,
            }),
            _ => false,
        })
    }

    /// The class that a dotted class name written in `scope` cannot pass through after its
    /// first part, which is why the name denotes nothing: a protected class (`A.B` with `B`
    /// protected in `A`), or a class that is no package and so names only its encapsulated
    /// classes (`M.B` with `M` a model and `B` not encapsulated). The answer is the member
    /// that cannot be named, and whether it is hidden by its protection.
    pub fn hidden_part(&self, scope: ClassId, name: &ast::Name) -> Option<(ClassId, HiddenBy)> {
        let mut current = match self.lookup_first(scope, &name.parts.first()?.name, 0, false)? {
            TypeRef::Class(c) => c,
            TypeRef::Builtin(_) => return None,
        };
        for part in &name.parts[1..] {
            let member = self.member_class(current, &part.name, 1)?;
            if self.get(member).protected {
                return Some((member, HiddenBy::Protection));
            }
            if !self.can_name_member(current, member) {
                return Some((member, HiddenBy::NonPackage(current)));
            }
            current = member;
        }
        None
    }

    fn lookup_first(
        &self,
        scope: ClassId,
        ident: &str,
        depth: usize,
        skip_inherited_of_scope: bool,
    ) -> Option<TypeRef> {
        let mut current = Some(scope);
        let mut first_scope = true;
        while let Some(c) = current {
            let entry = self.get(c);
            let member = if first_scope && skip_inherited_of_scope {
                let own = entry.nested.get(ident).map(|&id| self.reach(id));
                if own.is_none() {
                    self.reaches_unloaded(Some(c), ident);
                }
                own
            } else {
                self.member_class(c, ident, depth + 1)
            };
            if let Some(m) = member {
                return Some(TypeRef::Class(m));
            }
            if let Some(t) = self.lookup_import(c, ident) {
                return Some(t);
            }
            // An enclosing class can be named from inside itself, but its own elements come
            // first: in a package `Bjt` holding a record `Bjt`, the name `Bjt` is the record.
            if entry.def.name.name == ident && !first_scope {
                return Some(TypeRef::Class(self.reach(c)));
            }
            if entry.def.encapsulated {
                break;
            }
            first_scope = false;
            current = entry.parent;
        }
        if let Some(b) = builtin_type(ident) {
            return Some(TypeRef::Builtin(b));
        }
        let root = self.roots.get(ident).map(|&c| TypeRef::Class(self.reach(c)));
        if root.is_none() {
            self.reaches_unloaded(None, ident);
        }
        root
    }

    fn lookup_import(&self, class: ClassId, ident: &str) -> Option<TypeRef> {
        let path = |n: &ast::Name| self.resolve_path(n.parts.iter().map(|p| p.name.as_str()));
        for import in by_import_priority(self.get(class).imports()) {
            let found = match &import.kind {
                ast::ImportKind::Qualified(n) if n.parts.last().is_some_and(|p| p.name == ident) => path(n),
                ast::ImportKind::Renamed { alias, name } if alias.name == ident => path(name),
                ast::ImportKind::Unqualified(n) => path(n).and_then(|p| self.member_class(p, ident, 0)),
                ast::ImportKind::Multiple { package, names } if names.iter().any(|n| n.name == ident) => {
                    path(package).and_then(|p| self.member_class(p, ident, 0))
                }
                _ => None,
            };
            if let Some(c) = found {
                return Some(TypeRef::Class(c));
            }
        }
        None
    }

    /// The names of the classes nested in `class`, those of library classes not read yet
    /// included (for did-you-mean suggestions: the same whether or not they were read).
    pub fn nested_names(&self, class: ClassId) -> impl Iterator<Item = &str> {
        let unread = self.unloaded.get(&Some(class)).into_iter().flatten();
        (self.get(class).nested.keys().copied()).chain(unread.map(String::as_str))
    }

    /// Names visible from `scope` (for did-you-mean suggestions, library classes not read yet
    /// included), sorted.
    pub fn visible_names(&self, scope: ClassId) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let mut current = Some(scope);
        while let Some(c) = current {
            names.extend(self.nested_names(c).map(str::to_string));
            current = self.get(c).parent;
        }
        names.extend(self.roots.keys().map(|s| s.to_string()));
        names.extend(self.unloaded.get(&None).into_iter().flatten().cloned());
        names.extend(["Real", "Integer", "Boolean", "String"].map(String::from));
        names.sort();
        names.dedup();
        names
    }

    /// Every class name, fully qualified, for suggestions when a `--model` is not found.
    pub fn all_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.classes.iter().map(|c| c.full_name.as_str()).collect();
        v.sort_unstable();
        v
    }
}

/// Why a class that exists cannot be named with a dotted name ([`ClassTable::hidden_part`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HiddenBy {
    /// The class is protected in its enclosing class.
    Protection,
    /// The class is not encapsulated and the name reaches it through this class, which is
    /// no package.
    NonPackage(ClassId),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupError {
    /// The first `resolved_parts` parts of the name were found, the next one was not.
    NotFound {
        resolved_parts: usize,
    },
    Cycle,
}

pub fn builtin_type(name: &str) -> Option<ScalarType> {
    Some(match name {
        "Real" => ScalarType::Real,
        "Integer" => ScalarType::Integer,
        "Boolean" => ScalarType::Boolean,
        "String" => ScalarType::String,
        _ => return None,
    })
}

/// Whether a class of kind `derived` may extend one of kind `inherited` (Modelica's section
/// 7.1.3): a package, operator, function, type, record, operator record or expandable connector
/// extends its own kind only (an operator function also a function), a connector also a type
/// or a record, a block also a record, a model also a record or a block; every kind may extend
/// a `class`, and a class written `class` may extend any kind.
pub fn may_extend(derived: ast::ClassKind, inherited: ast::ClassKind) -> bool {
    use ast::ClassKind as K;
    match (derived, inherited) {
        (K::Class, _) | (_, K::Class) => true,
        (K::OperatorFunction, K::Function) => true,
        (K::Connector, K::Type | K::Record | K::OperatorRecord) => true,
        (K::Block, K::Record) => true,
        (K::Model, K::Record | K::Block) => true,
        (d, b) => d == b,
    }
}

/// Whether the modifier argument `arg` changes only attributes that give no value: `T(min = 0,
/// max = 1e6, nominal = 300, unit = "K")`, not a binding, a start value or a redeclaration.
fn only_bounds(arg: &ast::ModArgument) -> bool {
    let Some(m) = &arg.modification else {
        return arg.redeclare.is_none();
    };
    arg.redeclare.is_none()
        && arg.name.parts.len() == 1
        && m.binding.is_none()
        && m.class_modification.as_ref().is_none_or(|c| {
            c.arguments.iter().all(|a| {
                a.redeclare.is_none()
                    && a.name.parts.len() == 1
                    && a.modification.as_ref().is_none_or(|m| m.class_modification.is_none())
                    && matches!(
                        a.name.parts[0].name.as_str(),
                        "min" | "max" | "nominal" | "quantity" | "unit" | "displayUnit"
                    )
            })
        })
}

/// `imports` with the unqualified ones (`import P.*;`) last: a name an import gives by itself
/// (qualified, renamed or listed) wins over one an unqualified import finds, as Modelica
/// specifies.
pub(crate) fn by_import_priority<'i>(
    imports: impl Iterator<Item = &'i ast::Import> + Clone,
) -> impl Iterator<Item = &'i ast::Import> {
    let unqualified = |import: &&ast::Import| matches!(import.kind, ast::ImportKind::Unqualified(_));
    imports
        .clone()
        .filter(move |i| !unqualified(i))
        .chain(imports.filter(unqualified))
}

#[cfg(test)]
mod tests {
    use super::*;
    use eqm_diag::source::{FileId, Span};

    const SOURCE: &str = "
package A
  package B
    model C Real x; end C;
    model D extends C; model E end E; end D;
  end B;
  model F extends B.D; end F;
  package G
    import A.B.C;
    import H = A.B;
    import A.B.*;
    model I C c; end I;
  end G;
  model Loop1 extends Loop2; end Loop1;
  model Loop2 extends Loop1; end Loop2;
  encapsulated package J model K end K; end J;
end A;
model C Real y; end C;
";

    const NAMES: &[&str] = &[
        "A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K", "Loop1", "Loop2", "Real", "Missing", "A.B.C", "B.D.E",
        "F.E", "H.D.E", "Loop1.X", "Loop2.E", ".C", ".A.F.E", "A.J.K", "G.I",
    ];

    fn name(dotted: &str) -> ast::Name {
        let global = dotted.starts_with('.');
        let parts = dotted
            .trim_start_matches('.')
            .split('.')
            .map(|part| ast::Ident {
                name: part.to_string(),
                span: Span::default(),
            })
            .collect();
        ast::Name {
            global,
            parts,
            span: Span::default(),
        }
    }

    /// Every lookup from every scope, asked twice and in both orders, answers what the walk
    /// without remembered answers gives on a table that has answered nothing.
    #[test]
    fn remembered_answers_are_the_answers_of_the_walk() {
        let (file, diagnostics) = eqm_syntax::parse_file(FileId(0), SOURCE);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let table = ClassTable::build(&[], &[&file]);
        let fresh = || ClassTable::build(&[], &[&file]);
        let scopes: Vec<ClassId> = (0..table.classes.len() as u32).map(ClassId).collect();
        let mut questions: Vec<(ClassId, &str)> = Vec::new();
        for &scope in &scopes {
            questions.extend(NAMES.iter().map(|n| (scope, *n)));
        }
        let mut found = 0;
        for order in [false, true, false] {
            let asked: Vec<(ClassId, &str)> = if order {
                questions.iter().rev().copied().collect()
            } else {
                questions.clone()
            };
            for (scope, dotted) in asked {
                let n = name(dotted);
                let expected = fresh().lookup_from(scope, &n, 0, false);
                assert_eq!(table.lookup(scope, &n), expected, "{dotted} from {scope:?}");
                let base = fresh().lookup_from(scope, &n, 0, true);
                assert_eq!(table.lookup_base(scope, &n), base, "base {dotted} from {scope:?}");
                if !dotted.contains('.') {
                    assert_eq!(table.lookup_simple(scope, dotted), expected.ok(), "{dotted}");
                    let member = fresh().search_member_class(scope, dotted, 0);
                    assert_eq!(table.member_class(scope, dotted, 0), member, "{dotted} in {scope:?}");
                }
                found += usize::from(expected.is_ok());
            }
        }
        // The questions reach classes through nesting, inheritance, imports and the top level.
        assert!(found > 3 * scopes.len(), "{found}");
    }
}
