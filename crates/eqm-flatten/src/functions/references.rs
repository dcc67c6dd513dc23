//! References to a function's local variables in its body: reading them in expressions and
//! naming them as assignment targets, through records and arrays of records.
//!
//! Input: a component reference inside a function body, with the frame of the function being
//! flattened. Output: the value it reads (`Local` nodes) or the places it assigns. It
//! deliberately resolves no name outside the function (that is `names`).

use crate::eval::Loops;
use crate::flattener::Flattener;
use crate::function_table::LocalVar;
use crate::modifier::Scope;
use crate::value::Value;
use eqm_diag::Diagnostic;
use eqm_ir::expr::{ExprId, Node};
use eqm_ir::flat::ScalarType;
use eqm_syntax::ast;

impl<'t, 'a> Flattener<'t, 'a> {
    /// A reference to a function's local variable, when `name` is one in the current frame.
    pub(crate) fn eval_local(&mut self, c: &'a ast::ComponentRef, scope: Scope, loops: &mut Loops) -> Option<Value> {
        // A String input of a function instance made for its text reads as that text.
        if let [part] = c.parts.as_slice()
            && part.subscripts.is_empty()
            && let Some((_, text)) =
                (self.context.frames.last()).and_then(|f| f.strings.iter().find(|(name, _)| *name == part.name.name))
        {
            return Some(Value::Str(eqm_ir::flat::Message::literal(text.clone())));
        }
        // A String input of an instance made for the shape of a String with values known only
        // during the run reads as that String, its values from the hidden input slots.
        if let [part] = c.parts.as_slice()
            && part.subscripts.is_empty()
            && let Some((_, message)) =
                (self.context.frames.last()).and_then(|f| f.templates.iter().find(|(name, _)| *name == part.name.name))
        {
            return Some(Value::Str(message.clone()));
        }
        // A String variable of the function reads as the text it holds here.
        if let [part] = c.parts.as_slice()
            && part.subscripts.is_empty()
            && let Some((_, text)) =
                (self.context.frames.last()).and_then(|f| f.texts.iter().find(|(name, _)| *name == part.name.name))
        {
            return Some(Value::Str(text.clone()));
        }
        // A size-giving Integer input of an instance made for its value reads as that value,
        // so that sizes, ranges and conditions computed from it are known at compile time.
        if let [part] = c.parts.as_slice()
            && part.subscripts.is_empty()
            && let Some(&(_, value)) =
                (self.context.frames.last()).and_then(|f| f.integers.iter().find(|(name, _)| *name == part.name.name))
        {
            // A Boolean input made known with the Integers reads as a Boolean.
            let boolean = (self.context.frames.last())
                .and_then(|f| f.locals.get(part.name.name.as_str()))
                .is_some_and(|v| v.ty == ScalarType::Boolean);
            if boolean {
                return Some(Value::Scalar(self.model.exprs.boolean(value != 0), ScalarType::Boolean));
            }
            return Some(Value::Scalar(self.model.exprs.int(value), ScalarType::Integer));
        }
        // A protected Real that the body never assigns, with a binding known in this instance,
        // reads as that value for the same reason.
        if let [part] = c.parts.as_slice()
            && part.subscripts.is_empty()
            && let Some(&(_, value)) =
                (self.context.frames.last()).and_then(|f| f.reals.iter().find(|(name, _)| *name == part.name.name))
        {
            return Some(Value::Scalar(self.model.exprs.real(value), ScalarType::Real));
        }
        if let Some(var) = self.local_record(c) {
            return Some(var.value(&mut self.model.exprs));
        }
        if let Some(target) = self.record_array_target(c, scope, loops) {
            let (var, subs) = target?;
            if var.record.is_some() || var.elements.is_some() {
                return Some(var.value(&mut self.model.exprs));
            }
            let (dims, picked) = self.subscript_selection(subs, &var.dims, scope, loops, c)?;
            let slots = self.picked_slots(&var.slots, &picked, c)?;
            let elems: Vec<ExprId> = slots
                .iter()
                .map(|&slot| self.model.exprs.add(Node::Local(slot)))
                .collect();
            return Some(if dims.is_empty() {
                Value::Scalar(elems[0], var.ty)
            } else {
                Value::Array(dims, elems, var.ty)
            });
        }
        // `u[i]` (or `r.u[i]`) with a subscript computed when the function runs.
        if c.parts.last().is_some_and(|p| !p.subscripts.is_empty())
            && let Some(v) = self.dynamic_local_selection(c, scope, loops)
        {
            return Some(v);
        }
        let (dims, slots, ty, _) = self.local_places(c, scope, loops)?;
        let elems: Vec<ExprId> = slots.iter().map(|s| self.model.exprs.add(Node::Local(*s))).collect();
        Some(if dims.is_empty() {
            Value::Scalar(elems[0], ty)
        } else {
            Value::Array(dims, elems, ty)
        })
    }

    /// Whether `name` is a local variable of the function being flattened.
    pub(crate) fn is_local(&self, scope: Scope, name: &str) -> bool {
        scope.instance.is_none() && self.context.frames.last().is_some_and(|f| f.locals.contains_key(name))
    }

    /// A reference that goes through an array of records (`ps`, `ps[2]`, `ps[i].x`, `ps.x`,
    /// `r.points[2].y`): the variable it ends at, with the subscripts of its last part left to
    /// apply when that is an array of scalars. `None` when the reference goes through no array
    /// of records; `Some(None)` after a diagnostic. `ps.x` (a field of every element) is the
    /// array of the elements' fields, for fields that are scalars.
    pub(super) fn record_array_target(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<Option<(LocalVar, &'a [ast::Subscript])>> {
        let frame = self.context.frames.last()?;
        let first = frame.locals.get(&c.parts[0].name.name)?;
        // A cheap exit, copying nothing, for every other local: no array of records on the path.
        let mut through = first.elements.is_some();
        let mut probe = first;
        for part in &c.parts[1..] {
            let Some((_, field)) = probe
                .record
                .as_ref()
                .and_then(|f| f.iter().find(|(n, _)| *n == part.name.name))
            else {
                break;
            };
            probe = field;
            through |= probe.elements.is_some();
        }
        if !through {
            return None;
        }
        let mut var = first.clone();
        let last = c.parts.len() - 1;
        for (k, part) in c.parts.iter().enumerate() {
            if k > 0 {
                var = match self.record_field(&var, &part.name.name, c) {
                    Some(v) => v,
                    None => return Some(None),
                };
            }
            let Some(elements) = var.elements.clone() else {
                if k == last {
                    return Some(Some((var, &part.subscripts)));
                }
                if !part.subscripts.is_empty() {
                    self.diagnostics.push(Diagnostic::error(
                        "E0304",
                        format!("`{}` is not an array of records", part.name.name),
                        part.name.span,
                        "cannot be subscripted here",
                    ));
                    return Some(None);
                }
                continue;
            };
            if part.subscripts.is_empty() {
                continue;
            }
            let Some((dims, picked)) = self.subscript_selection(&part.subscripts, &var.dims, scope, loops, c) else {
                return Some(None);
            };
            var = if dims.is_empty() {
                elements[picked[0]].clone()
            } else {
                let chosen: Vec<LocalVar> = picked.iter().map(|&i| elements[i].clone()).collect();
                LocalVar {
                    dims,
                    slots: chosen.iter().flat_map(|e| e.slots.iter().copied()).collect(),
                    ty: ScalarType::Real,
                    assignable: var.assignable,
                    record: None,
                    function: None,
                    elements: Some(std::rc::Rc::new(chosen)),
                }
            };
        }
        Some(Some((var, &[])))
    }

    /// Field `name` of a record local, or of every element of an array of records (an array of
    /// the field, for a scalar field).
    pub(super) fn record_field(&mut self, var: &LocalVar, name: &str, c: &ast::ComponentRef) -> Option<LocalVar> {
        let field_of = |v: &LocalVar| {
            v.record
                .as_ref()?
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, f)| f.clone())
        };
        let found = match &var.elements {
            None => field_of(var),
            Some(elements) => {
                let fields: Option<Vec<LocalVar>> = elements.iter().map(field_of).collect();
                fields
                    .filter(|f| f.iter().all(|x| x.dims.is_empty() && x.record.is_none()))
                    .map(|fields| LocalVar {
                        dims: var.dims.clone(),
                        slots: fields.iter().flat_map(|f| f.slots.iter().copied()).collect(),
                        ty: fields.first().map_or(ScalarType::Real, |f| f.ty),
                        assignable: var.assignable,
                        record: None,
                        function: None,
                        elements: None,
                    })
            }
        };
        if found.is_none() {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!(
                    "`{}` has no scalar field `{name}` here",
                    eqm_syntax::pretty::print_ref(c)
                ),
                c.span,
                "no such field",
            ));
        }
        found
    }

    /// The record local a reference without subscripts names (`p`, `p.inner`), if any.
    pub(super) fn local_record(&self, c: &ast::ComponentRef) -> Option<LocalVar> {
        if c.parts.iter().any(|p| !p.subscripts.is_empty()) {
            return None;
        }
        let name = c
            .parts
            .iter()
            .map(|p| p.name.name.as_str())
            .collect::<Vec<_>>()
            .join(".");
        self.context
            .frames
            .last()?
            .locals
            .get(&name)
            .filter(|v| v.record.is_some())
            .cloned()
    }

    pub(crate) fn local_places(
        &mut self,
        c: &'a ast::ComponentRef,
        scope: Scope,
        loops: &mut Loops,
    ) -> Option<(Vec<usize>, Vec<u32>, ScalarType, bool)> {
        if let Some(var) = self.local_record(c) {
            return Some((Vec::new(), var.slots.clone(), var.ty, var.assignable));
        }
        if let Some(target) = self.record_array_target(c, scope, loops) {
            let (var, subs) = target?;
            if var.record.is_some() || var.elements.is_some() {
                return Some((var.dims.clone(), var.slots.clone(), var.ty, var.assignable));
            }
            let (dims, picked) = self.subscript_selection(subs, &var.dims, scope, loops, c)?;
            return Some((dims, self.picked_slots(&var.slots, &picked, c)?, var.ty, var.assignable));
        }
        let first = &c.parts[0];
        let mut var = self.context.frames.last()?.locals.get(&first.name.name)?.clone();
        if var.function.is_some() {
            self.diagnostics.push(
                Diagnostic::error(
                    "E0306",
                    format!("`{}` is a functional input, not a value", first.name.name),
                    c.span,
                    "a function",
                )
                .with_help(format!(
                    "call it (`{}(x)`) or pass it on to another functional input",
                    first.name.name
                )),
            );
            return None;
        }
        // A field of a record variable (`p.x`, `p.inner.x[2]`): the local of that name.
        let dotted = c.parts.len() > 1 && c.parts[..c.parts.len() - 1].iter().all(|p| p.subscripts.is_empty());
        let field = dotted
            .then(|| {
                c.parts
                    .iter()
                    .map(|p| p.name.name.as_str())
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .and_then(|name| self.context.frames.last()?.locals.get(&name).cloned());
        let last = c.parts.last().unwrap_or(first);
        if let Some(field) = field {
            var = field;
            let (dims, picked) = self.subscript_selection(&last.subscripts, &var.dims, scope, loops, c)?;
            return Some((dims, self.picked_slots(&var.slots, &picked, c)?, var.ty, var.assignable));
        }
        if c.parts.len() > 1 {
            self.diagnostics.push(Diagnostic::error(
                "E0205",
                format!(
                    "`{}` is a variable and has no member `{}`",
                    first.name.name, c.parts[1].name.name
                ),
                c.parts[1].name.span,
                "no such member",
            ));
            return None;
        }
        let (dims, picked) = self.subscript_selection(&first.subscripts, &var.dims, scope, loops, c)?;
        Some((dims, self.picked_slots(&var.slots, &picked, c)?, var.ty, var.assignable))
    }

    /// The slots of the elements `picked` of a local whose elements are `slots`; a position
    /// beyond them (an element of an array without elements, reached by a loop the compiler
    /// cannot prove empty) is a diagnostic at the reference instead of a read of another slot.
    fn picked_slots(&mut self, slots: &[u32], picked: &[usize], c: &ast::ComponentRef) -> Option<Vec<u32>> {
        let slots: Option<Vec<u32>> = picked.iter().map(|&k| slots.get(k).copied()).collect();
        if slots.is_none() {
            self.diagnostics.push(Diagnostic::error(
                "E0304",
                format!("`{}` has no element at this position", c.parts[0].name.name),
                c.span,
                "an element of an array with fewer elements",
            ));
        }
        slots
    }
}
