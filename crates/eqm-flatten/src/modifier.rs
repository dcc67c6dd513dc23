//! Modifications as merged trees with their evaluation scopes.
//!
//! Input: `ast::Modification`s from declarations, `extends` clauses, short class definitions and
//! enclosing instances. Output: [`Modifier`] trees in which, for any element, the outermost
//! modification wins (Modelica's precedence: instance > extends > declaration > type).
//! Each binding remembers the scope it was written in, because `m(c = 2*k)` evaluates `k` where
//! the modifier stands, not inside `m`. It deliberately evaluates no binding and checks no
//! target: `variables` and `instantiate` do, where the modifier is applied.

use crate::conversion::ElementConversion;
use crate::resolve::ClassId;
use eqm_diag::source::Span;
use eqm_ir::flat::InstanceId;
use eqm_syntax::ast;
use std::rc::Rc;

/// Where an expression is evaluated: the instance whose components its names refer to (none for
/// package constants) and the class whose scope resolves class and constant names.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    pub instance: Option<InstanceId>,
    pub class: ClassId,
}

#[derive(Clone, Debug)]
pub struct Binding<'a> {
    pub expr: &'a ast::Expr,
    pub scope: Scope,
    /// Array element indices (0-based) to pick from the evaluated value, outermost first: a
    /// modifier without `each` on an array component gives element `i` the `i`-th value.
    pub select: Vec<usize>,
    /// Record fields to pick after the elements, outermost first, each with the element
    /// indices to pick from it in turn: the binding of a record component (`Point p =
    /// Point(1, 2)`) gives each field its part, and an array field's elements each theirs
    /// (`d.table[2, 1]` of `CellData d = data`).
    pub fields: Vec<(&'a str, Vec<usize>)>,
}

#[derive(Clone, Debug)]
pub struct ModArg<'a> {
    pub name: &'a str,
    pub each: bool,
    /// Written `final`: no modifier outside it may change the element.
    pub is_final: bool,
    pub modifier: Modifier<'a>,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Modifier<'a> {
    pub binding: Option<Binding<'a>>,
    /// Arguments, outermost first.
    pub args: Args<'a>,
    /// `redeclare Capacitor load(C = 1)` or `redeclare model Load = Capacitor`: the element that
    /// takes the place of the one this modifier is for.
    pub redeclare: Option<Redeclare<'a>>,
}

/// A redeclaration in a modifier, with the scope it was written in (where its type name and
/// its own modifiers are looked up and evaluated).
#[derive(Clone, Copy, Debug)]
pub struct Redeclare<'a> {
    pub element: &'a ast::RedeclaredElement,
    pub scope: Scope,
    pub span: Span,
    /// The redeclaration this one replaces, with its scope, when an outer modifier redeclares
    /// what an inner one redeclared already (`extends E(redeclare C b)` where `E` has `extends
    /// D(replaceable B b constrainedby B(x = 2))`): its constraining clause's modifiers carry
    /// over to this one (Modelica 7.3.2).
    pub replaces: Option<(&'a ast::RedeclaredElement, Scope)>,
}

impl<'a> Redeclare<'a> {
    /// `outer` (which wins) and `inner`, with `outer` remembering the one it replaces.
    pub fn over(outer: Option<Redeclare<'a>>, inner: Option<Redeclare<'a>>) -> Option<Redeclare<'a>> {
        match (outer, inner) {
            (Some(mut outer), Some(inner)) => {
                if outer.replaces.is_none() {
                    outer.replaces = Some((inner.element, inner.scope));
                }
                Some(outer)
            }
            (outer, inner) => outer.or(inner),
        }
    }
}

/// The arguments of a modifier, shared (`Rc`): a merge with an empty modifier, and every
/// element of an array with only `each` arguments, take them without copying, which is what
/// most variables of a large model do with the modifiers of their types. Empty without an
/// allocation.
#[derive(Clone, Debug, Default)]
pub struct Args<'a>(Option<Rc<[ModArg<'a>]>>);

impl<'a> Args<'a> {
    fn new(args: Vec<ModArg<'a>>) -> Args<'a> {
        Args((!args.is_empty()).then(|| args.into()))
    }

    /// `self` followed by `inner`.
    fn concat(self, inner: Args<'a>) -> Args<'a> {
        match (&self.0, &inner.0) {
            (_, None) => self,
            (None, _) => inner,
            (Some(a), Some(b)) => Args(Some(a.iter().chain(b.iter()).cloned().collect())),
        }
    }
}

impl<'a> std::ops::Deref for Args<'a> {
    type Target = [ModArg<'a>];

    fn deref(&self) -> &[ModArg<'a>] {
        self.0.as_deref().unwrap_or(&[])
    }
}

impl<'s, 'a> IntoIterator for &'s Args<'a> {
    type Item = &'s ModArg<'a>;
    type IntoIter = std::slice::Iter<'s, ModArg<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> Modifier<'a> {
    /// This modifier with its arguments converted: renamed or dropped as `convert` says of
    /// each (the others as they are).
    pub fn converted(mut self, convert: impl Fn(&str) -> Option<ElementConversion<'a>>) -> Modifier<'a> {
        if self.args.iter().all(|a| convert(a.name).is_none()) {
            return self;
        }
        let args = self.args.iter().filter_map(|a| match convert(a.name) {
            None => Some(a.clone()),
            Some(ElementConversion::Removed) => None,
            Some(ElementConversion::Renamed(name)) => Some(ModArg { name, ..a.clone() }),
        });
        self.args = Args::new(args.collect());
        self
    }

    /// No binding, no arguments, no redeclaration.
    pub fn is_empty(&self) -> bool {
        self.binding.is_none() && self.args.is_empty() && self.redeclare.is_none()
    }

    /// This modifier with its binding (a record value) handed to the record's `fields`, each
    /// taking its part: `Point p = e` becomes `Point p(x = e.x, y = e.y)`. Modifiers written for
    /// the fields themselves stay first, so they win.
    pub fn bind_fields(mut self, fields: &[&'a str]) -> Modifier<'a> {
        let Some(binding) = self.binding.take() else {
            return self;
        };
        let span = binding.expr.span;
        let args = fields
            .iter()
            .map(|&name| {
                let mut path = binding.fields.clone();
                path.push((name, Vec::new()));
                ModArg {
                    name,
                    each: false,
                    is_final: false,
                    modifier: Modifier {
                        binding: Some(Binding {
                            expr: binding.expr,
                            scope: binding.scope,
                            select: binding.select.clone(),
                            fields: path,
                        }),
                        args: Args::default(),
                        redeclare: None,
                    },
                    span,
                }
            })
            .collect();
        self.args = std::mem::take(&mut self.args).concat(Args::new(args));
        self
    }

    /// Builds a modifier from source, evaluated later in `scope`.
    pub fn from_ast(m: &'a ast::Modification, scope: Scope) -> Modifier<'a> {
        Modifier {
            binding: m.binding.as_ref().map(|expr| Binding {
                expr,
                scope,
                select: Vec::new(),
                fields: Vec::new(),
            }),
            args: m
                .class_modification
                .as_ref()
                .map(|cm| Self::args_from_ast(cm, scope))
                .unwrap_or_default(),
            redeclare: None,
        }
    }

    /// Builds the arguments of a class modification (`(a = 1, b.c(start = 2))`).
    pub fn from_class_modification(cm: &'a ast::ClassModification, scope: Scope) -> Modifier<'a> {
        Modifier {
            binding: None,
            args: Self::args_from_ast(cm, scope),
            redeclare: None,
        }
    }

    fn args_from_ast(cm: &'a ast::ClassModification, scope: Scope) -> Args<'a> {
        let args = cm
            .arguments
            .iter()
            .map(|arg| {
                // A dotted argument `a.b.c = 1` is the nested modifier `a(b(c = 1))`.
                let mut modifier = arg
                    .modification
                    .as_ref()
                    .map(|m| Modifier::from_ast(m, scope))
                    .unwrap_or_default();
                modifier.redeclare = arg.redeclare.as_deref().map(|element| Redeclare {
                    element,
                    scope,
                    span: arg.span,
                    replaces: None,
                });
                let last = arg.name.parts.len() - 1;
                for (k, part) in arg.name.parts.iter().enumerate().skip(1).rev() {
                    modifier = Modifier {
                        binding: None,
                        args: Args::new(vec![ModArg {
                            name: &part.name,
                            each: false,
                            // `final a.b = 1` fixes `b`, the last part, only.
                            is_final: arg.is_final && k == last,
                            modifier,
                            span: part.span,
                        }]),
                        redeclare: None,
                    };
                }
                ModArg {
                    name: &arg.name.parts[0].name,
                    each: arg.each,
                    is_final: arg.is_final && last == 0,
                    modifier,
                    span: arg.span,
                }
            })
            .collect();
        Args::new(args)
    }

    /// Combines two modifiers: `self` is outer and wins.
    pub fn merge(mut self, inner: &Modifier<'a>) -> Modifier<'a> {
        if self.binding.is_none() {
            self.binding = inner.binding.clone();
        }
        self.redeclare = Redeclare::over(self.redeclare, inner.redeclare);
        self.args = self.args.concat(inner.args.clone());
        self
    }

    /// [`Self::merge`] for an inner modifier that is not needed again.
    pub fn merge_owned(mut self, inner: Modifier<'a>) -> Modifier<'a> {
        if self.binding.is_none() {
            self.binding = inner.binding;
        }
        self.redeclare = Redeclare::over(self.redeclare, inner.redeclare);
        self.args = self.args.concat(inner.args);
        self
    }

    /// The first argument that changes an element which a `final` argument inside it fixes
    /// (`tf(b = {1})` over `tf(final b = {2})`): the outer argument's span with the final one's.
    /// Arguments are outermost first, so the outer one comes before the final one; the same
    /// argument reached twice (one span) is no change.
    pub fn overridden_final(&self) -> Option<(Span, Span)> {
        for (k, arg) in self.args.iter().enumerate() {
            if !arg.is_final {
                continue;
            }
            if let Some(outer) = self.args[..k]
                .iter()
                .find(|a| a.name == arg.name && a.span != arg.span && !a.modifier.is_empty())
            {
                return Some((outer.span, arg.span));
            }
        }
        None
    }

    /// The merged modifier for element `name`, with whether any argument for it used `each`.
    pub fn child(&self, name: &str) -> (Modifier<'a>, bool) {
        let mut result = Modifier::default();
        let mut each = false;
        for arg in self.args.iter().filter(|a| a.name == name) {
            each |= arg.each;
            result = result.merge(&arg.modifier);
        }
        (result, each)
    }

    /// The modifier without the values it gives the fields of a record (`r(a = 5)` loses
    /// `a = 5`; the attributes of a field, `r(a(start = 5))`, stay): what is left of a
    /// record's inner modifier when an outer one binds the whole record (`r = other`), whose
    /// value gives every field its own.
    pub fn without_field_values(&self) -> Modifier<'a> {
        let mut stripped = self.clone();
        if let Some(args) = &mut stripped.args.0 {
            for arg in Rc::make_mut(args) {
                arg.modifier.binding = None;
            }
        }
        stripped
    }

    /// The modifier with every binding evaluated in the instance `place` gives for the class the
    /// binding was written in: for modifiers of a class layout, which is shared by all
    /// instances and so written without one. The instance is the one whose class holds the
    /// modifier's text, which is not always the instance being built: the modifier of a short
    /// class definition (`model B = A(y = x)`) is written in the class that declares `B`.
    pub fn in_instance(mut self, place: &dyn Fn(ClassId) -> InstanceId) -> Modifier<'a> {
        self.set_instance(place);
        self
    }

    fn set_instance(&mut self, place: &dyn Fn(ClassId) -> InstanceId) {
        if let Some(b) = &mut self.binding {
            b.scope.instance = Some(place(b.scope.class));
        }
        if let Some(r) = &mut self.redeclare {
            r.scope.instance = Some(place(r.scope.class));
        }
        if let Some(args) = &mut self.args.0 {
            for arg in Rc::make_mut(args) {
                arg.modifier.set_instance(place);
            }
        }
    }

    /// True when [`Self::select`] gives every element this same modifier: no binding outside
    /// `each` picks an element. The elements of an array with such a modifier are then built
    /// alike, with the same variables and equations.
    pub fn same_for_every_element(&self) -> bool {
        self.binding.is_none() && self.args.iter().all(|a| a.each || a.modifier.same_for_every_element())
    }

    /// The modifier for element `index` of an array component: every binding not under `each`
    /// picks its `index`-th element.
    pub fn select(&self, index: usize) -> Modifier<'a> {
        if self.binding.is_none() && self.args.iter().all(|a| a.each) {
            return self.clone();
        }
        Modifier {
            // A redeclaration is the same for every element (Modelica requires `each` for it).
            redeclare: self.redeclare,
            binding: self.binding.as_ref().map(|b| {
                let mut b = b.clone();
                // Past a record field, the element is one of that field's value.
                match b.fields.last_mut() {
                    Some((_, after)) => after.push(index),
                    None => b.select.push(index),
                }
                b
            }),
            args: Args::new(
                self.args
                    .iter()
                    .map(|a| {
                        if a.each {
                            a.clone()
                        } else {
                            ModArg {
                                modifier: a.modifier.select(index),
                                ..a.clone()
                            }
                        }
                    })
                    .collect(),
            ),
        }
    }
}

/// A binding or start value evaluated later than its variable is made: the variable, the
/// binding, its type, and for a binding the variable's variability (`None` for a start value).
pub(crate) type LateBinding<'a> = (
    eqm_ir::expr::VarId,
    Binding<'a>,
    eqm_ir::flat::ScalarType,
    Option<eqm_ir::flat::Variability>,
);
