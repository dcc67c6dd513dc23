//! isee's conveyors (XMILE `<conveyor>` of a stock): what enters leaves after the transit
//! time.
//!
//! Input: a conveyor stock and its flows. Output: the rate of its outflow, the conveyor's
//! own equations being those of a plain stock (its contents change by its inflows minus its
//! outflow). As isee's "traditional conveyor" computes it with Euler's method: the belt has
//! `N` slats, the transit time over DT rounded half away from zero (at least one), read once
//! at the start; each step the slat at the exit leaves and what flowed in during the step
//! enters, so the outflow is the inflow of `N` steps before (read exactly from the history
//! the simulation keeps of it). The contents at the start lie evenly on the slats and leave
//! during the first `N` steps at `contents/(N*DT)`. The outflow's own equation in the file,
//! if any, is not read: the conveyor drives it, as XMILE says. Not supported (E1002, the
//! reader names each at its tag): capacity, inflow limit, arrest, sampling of the transit
//! time and discrete conveyors; here a transit time that does not follow from numbers and
//! constants at the start, leakage flows (a second outflow), and an arrayed conveyor.

use super::expr::{Helpers, Scope, unsupported};
use super::{Element, ModelWriter};
use crate::ir::{Kind, SpecialStock, Variable};
use crate::names::canonical;
use eqm_diag::Diagnostic;
use std::collections::HashMap;

/// The most slats a belt may have: beyond it the transit time or DT is surely wrong.
const MAX_SLATS: f64 = 1e6;

/// The conveyor that drives each flow (its first outflow), as its place among `variables`,
/// by the flow's canonical key.
pub(super) fn driven_flows(variables: &[Variable]) -> HashMap<String, usize> {
    let mut out = HashMap::new();
    for (index, v) in variables.iter().enumerate() {
        if let Kind::Stock { outflows, special, .. } = &v.kind
            && let Some(special) = special
            && matches!(**special, SpecialStock::Conveyor { .. })
            && let Some(first) = outflows.first()
        {
            out.insert(canonical(first), index);
        }
    }
    out
}

impl ModelWriter<'_> {
    /// The rate of the outflow of the conveyor at `index` among the model's variables, at
    /// `element`.
    pub(super) fn conveyor_outflow(
        &self,
        index: usize,
        element: &Element,
        scope: &Scope,
        helpers: &mut Helpers,
    ) -> Result<String, Diagnostic> {
        let v = &self.model.variables[index];
        let key = canonical(&v.name);
        let Kind::Stock {
            inflows,
            outflows,
            special: Some(special),
            ..
        } = &v.kind
        else {
            unreachable!("a driven flow belongs to a conveyor stock");
        };
        let SpecialStock::Conveyor { transit_time } = &**special else {
            unreachable!("a driven flow belongs to a conveyor");
        };
        let not_here = |what: &str| {
            Diagnostic::error(
                "E1002",
                format!("EQM does not import {what}"),
                v.origin,
                "this conveyor",
            )
        };
        if !v.dimensions.is_empty() {
            return Err(not_here("an arrayed conveyor"));
        }
        if outflows.len() > 1 {
            return Err(not_here("a conveyor's leakage flows (the outflows after its first)"));
        }
        let transit = scope.start_values.value(transit_time).ok_or_else(|| {
            unsupported(
                transit_time,
                "a conveyor's transit time that does not follow from numbers and constants at the start",
            )
        })?;
        let slats = (transit / scope.start_values.dt()).round().max(1.0);
        if !transit.is_finite() || transit <= 0.0 || slats > MAX_SLATS {
            return Err(Diagnostic::error(
                "E1009",
                format!(
                    "the transit time of the conveyor `{}` is {transit}: it must be positive and at most a million time steps",
                    v.name
                ),
                transit_time.span,
                "the transit time",
            ));
        }
        let contents = self.at(&key, element, v.origin)?;
        let initial = helpers.fresh("conveyor contents at the start");
        helpers.declarations.push(format!(
            "parameter Real {initial}(fixed = false) \"The contents of the conveyor {contents} at the start\";"
        ));
        helpers.initial_equations.push(format!("{initial} = {contents};"));
        let mut entering = super::net_rate(inflows, &[], |f| self.at(&canonical(f), element, v.origin))?;
        if entering.is_empty() {
            entering.push('0');
        }
        let (start, dt) = (scope.start, scope.dt);
        let slats = super::expr::number(slats);
        Ok(format!(
            "(if noEvent(time < {start} + {slats}*{dt} - {dt}/2) then {initial}/({slats}*{dt}) else delay({entering}, {slats}*{dt}))"
        ))
    }
}
