//! `inner` and `outer` elements (Modelica 3.6 section 5.4).
//!
//! Input: an `outer` element of an instance being instantiated. Output: the member it stands
//! for, the `inner` element of the same name in the nearest enclosing instance that declares
//! one. When no enclosing instance does, the specification lets the outer elements of one name
//! share an inner element that the tool adds, provided they all have the same non-partial
//! class: EQM instantiates that element where the first such outer element stands (so its
//! variables are named after that place, not the top level) and gives every other outer
//! element of the name the same member, with a warning (W0303). An outer element has no
//! modifiers (E0203): its value and attributes are those of its inner element. An element
//! declared `inner outer` is both: its name denotes the inner element above, and the outer
//! elements below find its own inner declaration, which takes its modifiers.
//!
//! That an inner element of a predefined or enumeration type has its outer's type and
//! dimensions is checked by `inner_types`; it deliberately does not check that an inner
//! element's class is a subtype of its outer's class: a member the outer's class lacks is
//! reported where it is used.

use crate::flattener::Flattener;
use crate::layout::{AutomaticInner, ElementDecl, Member};
use crate::modifier::Scope;
use crate::resolve::TypeRef;
use eqm_diag::Diagnostic;
use eqm_ir::flat::InstanceId;

impl<'t, 'a> Flattener<'t, 'a> {
    /// An `outer` element: the `inner` component of that name in the nearest enclosing instance
    /// that declares one, or else the automatic one ([`Self::automatic_inner`]). `None` for an
    /// `inner outer` one with no `inner` above it, which is its own.
    pub(crate) fn outer_element(&mut self, instance: InstanceId, element: &ElementDecl<'a>) -> Option<Member> {
        let (clause, decl) = (element.clause, element.decl);
        if let Some(member) = self.inner_member(instance, &decl.name.name) {
            return Some(member);
        }
        if clause.inner {
            return None;
        }
        let reason = match self.automatic_inner(instance, element) {
            Ok(member) => return Some(member),
            Err(reason) => reason,
        };
        self.diagnostics.push(
            Diagnostic::error(
                "E0205",
                format!(
                    "`outer {}` has no `inner {}` in a component that encloses it, and none can be added: {reason}",
                    decl.name.name, decl.name.name
                ),
                decl.name.span,
                "no matching inner declaration",
            )
            .with_help(format!(
                "declare `inner {} {}` in the model that contains this component",
                eqm_syntax::pretty::name_text(&clause.type_name),
                decl.name.name
            )),
        );
        Some(Member::Failed)
    }

    /// The inner element added for the outer elements named like `element` that have no inner
    /// one (see the module's documentation), made on the first request; `Err` with the reason
    /// when none can be added (a partial class, or outer elements of different classes).
    fn automatic_inner(&mut self, instance: InstanceId, element: &ElementDecl<'a>) -> Result<Member, String> {
        let (clause, decl) = (element.clause, element.decl);
        let scope = Scope {
            instance: Some(instance),
            class: element.class,
        };
        let Some(resolved) = self.component_type(scope, &clause.type_name) else {
            return Ok(Member::Failed);
        };
        let class = resolved.target;
        let name = decl.name.name.as_str();
        if let Some(added) = self.automatic_inners.get(name) {
            if added.class == class {
                return Ok(added.member.clone());
            }
            return Err(format!(
                "another `outer {name}` without an inner element has another class than `{}`",
                resolved.class_name
            ));
        }
        if let TypeRef::Class(c) = class
            && self.table.is_partial(c)
        {
            return Err(format!("its class `{}` is partial", resolved.class_name));
        }
        let slot = self.instances[instance.0 as usize].first_member
            + self.instances[instance.0 as usize]
                .layout
                .index(name)
                .unwrap_or_default();
        self.automatic_inner_next = true;
        let member = self.instantiate_element(instance, element, slot);
        self.automatic_inner_next = false;
        self.automatic_inners.insert(
            name.to_string(),
            AutomaticInner {
                class,
                member: member.clone(),
            },
        );
        let mut warning = Diagnostic::warning(
            "W0303",
            format!(
                    "`outer {name}` has no `inner {name}` in a component that encloses it: EQM adds one of class `{}` for every such `outer {name}`",
                    resolved.class_name
                ),
                decl.name.span,
                "inner element added here",
            )
        .with_help(format!(
            "declare `inner {} {name}` in the model to choose its class and parameters",
            eqm_syntax::pretty::name_text(&clause.type_name)
        ));
        if let TypeRef::Class(c) = class
            && let Some(message) = missing_inner_message(self.table.get(c).def)
        {
            warning = warning.with_note(format!("the class says: {message}"));
        }
        self.diagnostics.push(warning);
        Ok(member)
    }

    /// The member an `outer` element named `name` of `instance` refers to: the `inner` one of
    /// the nearest enclosing instance that declares one (of an `inner outer` element, its inner
    /// declaration).
    fn inner_member(&mut self, instance: InstanceId, name: &str) -> Option<Member> {
        let mut current = self.model.instances[instance.0 as usize].parent;
        while let Some(p) = current {
            let layout = self.instances[p.0 as usize].layout.clone();
            if let Some(k) = layout.index(name)
                && layout.elements[k].clause.inner
            {
                if layout.elements[k].clause.outer {
                    return Some(self.inner_part(p, k));
                }
                return Some(self.ensure_member_at(p, k));
            }
            current = self.model.instances[p.0 as usize].parent;
        }
        None
    }

    /// The inner declaration of the `inner outer` element `k` of instance `p` (MLS 5.4): an
    /// element of its own, with the element's modifiers, which the outer elements below find,
    /// while the element's name in `p` (its member slot) denotes the outer declaration, the
    /// inner element above. Its binding may read that name (`inner outer Boolean on = on and
    /// enabled;`), so the outer declaration is made first. The inner declaration's instances
    /// are published in a slot of their own, not in the element's.
    fn inner_part(&mut self, p: InstanceId, k: usize) -> Member {
        let slot = self.instances[p.0 as usize].first_member + k;
        if let Some(member) = self.inner_parts.get(&slot) {
            return member.clone();
        }
        self.ensure_member_at(p, k);
        let layout = self.instances[p.0 as usize].layout.clone();
        let own_slot = self.members.len();
        self.members.push(Member::InProgress);
        self.inner_parts.insert(slot, Member::InProgress);
        self.caches.members_in_progress.push((p, k));
        self.automatic_inner_next = true;
        let member = self.instantiate_element(p, &layout.elements[k], own_slot);
        self.automatic_inner_next = false;
        self.caches.members_in_progress.pop();
        self.members[own_slot] = member.clone();
        self.inner_parts.insert(slot, member.clone());
        member
    }
}

/// The text a class gives for a missing inner element (`annotation(missingInnerMessage = "...")`).
fn missing_inner_message(def: &eqm_syntax::ast::ClassDef) -> Option<&str> {
    let argument = (def.annotation()?.modification.arguments.iter())
        .find(|a| a.name.parts.len() == 1 && a.name.parts[0].name == "missingInnerMessage")?;
    match &argument.modification.as_ref()?.binding.as_ref()?.kind {
        eqm_syntax::ast::ExprKind::String(text) => Some(text),
        _ => None,
    }
}

impl<'t, 'a> Flattener<'t, 'a> {
    /// Whether the `outer` (not `inner outer`) element is written without modifiers, in its
    /// declaration, an extends clause or the enclosing instance's modifier (Modelica 5.4:
    /// outer component declarations shall not have modifications); E0203 otherwise.
    pub(crate) fn outer_unmodified(&mut self, instance: InstanceId, element: &ElementDecl<'a>) -> bool {
        if element.clause.inner {
            return true;
        }
        let name = element.decl.name.name.as_str();
        let own = element.decl.modification.as_ref().map(|m| m.span);
        let from_extends = element
            .extends_modifier
            .args
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.span);
        let outer = match &self.instances[instance.0 as usize].modifier {
            Some(m) => m
                .args
                .iter()
                .find(|a| a.name == name && !a.modifier.is_empty())
                .map(|a| a.span),
            None => None,
        };
        let Some(span) = own.or(from_extends).or(outer) else {
            return true;
        };
        self.diagnostics.push(
            Diagnostic::error(
                "E0203",
                format!("`{name}` is an outer component and cannot be modified"),
                span,
                "modifies an outer component",
            )
            .with_help("an outer component is its inner component: modify the inner declaration instead"),
        );
        false
    }
}
