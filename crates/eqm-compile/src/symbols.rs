//! The symbol table of an executable program: what the stages after code generation need to
//! know about each variable to name it and to let a user change it.
//!
//! Input: the DAE an executable program is built from, which it consumes. Output: [`Symbols`]
//! with, per variable, its full name, kind, type, unit, description, declaration, binding,
//! start value and, for a variable alias elimination removed, the value that replaced it; the
//! model's instances (for naming equations' origins) and a lookup by name. Names, units and
//! descriptions are moved out of the flat model, not copied. This module does not keep the
//! model's equations, connection sets or classes: a program's messages need only names.

use crate::dae::{Dae, VarKind};
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, VarId};
use eqm_ir::flat::{EnumerationType, InstanceId, ModelSymbols, ScalarType};
use std::sync::Arc;

/// One variable as later stages see it.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// Full name with indices: `m[3].flange_a.s`.
    pub name: String,
    pub kind: VarKind,
    pub ty: ScalarType,
    pub unit: Option<Arc<str>>,
    pub display_unit: Option<Arc<str>>,
    pub description: Option<Arc<str>>,
    /// The declaration.
    pub span: Span,
    /// The binding of a parameter or constant.
    pub binding: Option<ExprId>,
    pub start: Option<ExprId>,
    pub fixed: Option<bool>,
    /// The `min` and `max` attributes.
    pub min: Option<ExprId>,
    pub max: Option<ExprId>,
    /// For a variable alias elimination removed: its value in terms of the others.
    pub eliminated: Option<ExprId>,
    /// A parameter or constant whose value the flattener used (an array size, a range, a
    /// condition): changing it needs compiling again.
    pub structural: bool,
    /// A variable whose start expression read this variable's start value (the first one):
    /// its start value was computed from the one the model gives, so this start value cannot
    /// be set at run time.
    pub start_read_by: Option<VarId>,
    /// The enumeration type the variable is declared with (its value is the literal's
    /// position).
    pub enumeration: Option<Arc<EnumerationType>>,
}

/// The variables of a model by id and by name, and its instances.
#[derive(Debug, Clone, Default)]
pub struct Symbols {
    model: String,
    model_span: Span,
    vars: Vec<Symbol>,
    /// The full name and class name of each instance.
    instances: Vec<(String, Arc<str>)>,
    /// The variables' ids in the order of their names: a lookup is a binary search, and no
    /// name is stored twice (a model of a million variables would keep a second copy of every
    /// name in a map).
    by_name: Vec<VarId>,
}

impl Symbols {
    /// The symbols of `dae`, which is consumed: its names and attributes move here.
    pub fn take<S>(dae: &mut Dae<S>) -> Symbols {
        let flat = &mut dae.flat;
        let model_span = flat.instances.first().map_or_else(Span::default, |i| i.span);
        let instances = std::mem::take(&mut flat.instances)
            .into_iter()
            .map(|i| (i.name, i.class_name))
            .collect();
        let structural = std::mem::take(&mut flat.structural);
        let enumerations = std::mem::take(&mut flat.enumerations);
        let vars: Vec<Symbol> = std::mem::take(&mut flat.variables)
            .into_iter()
            .enumerate()
            .map(|(i, v)| Symbol {
                kind: dae.kinds.get(i).copied().unwrap_or(VarKind::Algebraic),
                ty: v.ty,
                unit: v.attributes.unit.clone(),
                display_unit: v.attributes.display_unit.clone(),
                start: v.attributes.start,
                fixed: v.attributes.fixed,
                min: v.attributes.min,
                max: v.attributes.max,
                description: v.description,
                span: v.span,
                binding: v.binding,
                eliminated: dae.eliminated.get(i).copied().flatten(),
                structural: structural.binary_search(&VarId(i as u32)).is_ok(),
                start_read_by: dae
                    .start_readers
                    .binary_search_by_key(&VarId(i as u32), |r| r.0)
                    .ok()
                    .map(|k| dae.start_readers[k].1),
                enumeration: enumerations
                    .binary_search_by_key(&VarId(i as u32), |e| e.0)
                    .ok()
                    .map(|k| enumerations[k].1.clone()),
                name: v.name,
            })
            .collect();
        let mut by_name: Vec<VarId> = (0..vars.len() as u32).map(VarId).collect();
        by_name.sort_unstable_by(|a, b| vars[a.0 as usize].name.cmp(&vars[b.0 as usize].name));
        Symbols {
            model: std::mem::take(&mut flat.name),
            model_span,
            vars,
            instances,
            by_name,
        }
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The span of the model's declaration, for messages about the model as a whole.
    pub fn model_span(&self) -> Span {
        self.model_span
    }

    pub fn len(&self) -> usize {
        self.vars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// Variable `v`.
    pub fn get(&self, v: VarId) -> &Symbol {
        &self.vars[v.0 as usize]
    }

    /// Every variable with its id, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (VarId, &Symbol)> + '_ {
        self.vars.iter().enumerate().map(|(i, s)| (VarId(i as u32), s))
    }

    /// The variable with full name `name`.
    pub fn lookup(&self, name: &str) -> Option<VarId> {
        let k = self
            .by_name
            .binary_search_by(|v| self.vars[v.0 as usize].name.as_str().cmp(name))
            .ok()?;
        Some(self.by_name[k])
    }

    /// Every variable by full name, in name order.
    pub fn by_name(&self) -> impl Iterator<Item = (&str, VarId)> + '_ {
        self.by_name.iter().map(|&v| (self.vars[v.0 as usize].name.as_str(), v))
    }
}

impl ModelSymbols for Symbols {
    fn var_name(&self, v: VarId) -> &str {
        &self.get(v).name
    }

    fn instance_names(&self, instance: InstanceId) -> (&str, &str) {
        match self.instances.get(instance.0 as usize) {
            Some((name, class)) => (name, class),
            None => ("?", "?"),
        }
    }
}
