//! The relations of one pass of the event iteration, solved with the `pre` values held.
//!
//! Input: the hybrid model at an event, after the relations were set from the surfaces once.
//! Output: relations consistent with the values they give (each relation's surface on the side
//! the relation says), or the news that the program's structure does not hold at this event
//! (a watched value of a variable-structure run differs from the one the run was started for).
//! The relations are unknowns of the event's equations like any other, so a relation read with
//! a value of the structure the previous pass chose (a friction element's `sa > tau0_max` read
//! with the `sa` of sliding backward) is evaluated again before the `pre` values move on. Where
//! evaluating again cycles (each choice of the relations gives the other: a mixed system of
//! Booleans and Reals whose fixed point iteration does not converge), every combination of the
//! relations in the cycle is tried, as Modelica's mixed systems are solved by a search over
//! their Boolean unknowns. It does not advance `pre` values or fire when-clauses: the event
//! iteration does.

use super::crossing::{sign_of, surface_sign};
use super::events::update_relations;
use super::{HybridError, HybridModel};

/// The most relations of a cycle whose combinations are tried (2^6 evaluations).
const MOST_SEARCHED: usize = 6;

/// Sets the relations of this pass to values consistent with the model's values at `(t, x)`;
/// true when a watched value differs from the one the run was started for (its structure is
/// not this event's: the caller ends the run for a switch). A cycle with no consistent
/// combination is left as the last evaluation left it, for the passes to go on from.
pub(super) fn settle_relations(
    model: &mut HybridModel<'_>,
    sliding: Option<usize>,
    initial: bool,
    changing: &mut Vec<usize>,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<bool, HybridError> {
    let mut seen: Vec<Vec<i8>> = vec![model.signs.clone()];
    let mut moved: Vec<usize> = Vec::new();
    for _ in 0..model.signs.len() + 2 {
        if watched_differ(model, t, x)? {
            return Ok(true);
        }
        let mut moved_now = Vec::new();
        if !update_relations(model, sliding, initial, &mut moved_now) {
            return Ok(false);
        }
        for &k in &moved_now {
            if !moved.contains(&k) {
                moved.push(k);
            }
            if !changing.contains(&k) {
                changing.push(k);
            }
        }
        model.surfaces_at(t, x, dx)?;
        if seen.contains(&model.signs) {
            return search(model, &moved, initial, t, x, dx);
        }
        seen.push(model.signs.clone());
    }
    Ok(false)
}

/// Whether a watched value differs from the one the run was started for at `(t, x)`.
fn watched_differ(model: &mut HybridModel<'_>, t: f64, x: &[f64]) -> Result<bool, HybridError> {
    Ok(!model.watch.values.is_empty() && model.switched(t, x)?)
}

/// Tries every combination of the relations of `surfaces` (in the order of their bits, the
/// values they have now first): the first that its own evaluation confirms is kept; else the
/// first under which a watched value differs (true: the caller switches); else the values of
/// the last evaluation of the cycle stay.
fn search(
    model: &mut HybridModel<'_>,
    surfaces: &[usize],
    initial: bool,
    t: f64,
    x: &[f64],
    dx: &mut [f64],
) -> Result<bool, HybridError> {
    if surfaces.is_empty() || surfaces.len() > MOST_SEARCHED {
        return Ok(false);
    }
    let now: Vec<i8> = surfaces.iter().map(|&k| model.signs[k]).collect();
    let mut switching: Option<Vec<i8>> = None;
    for bits in 0..1u32 << surfaces.len() {
        let choice: Vec<i8> = now
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let side = if s == 0 { 1 } else { s };
                if bits & (1 << i) == 0 { side } else { -side }
            })
            .collect();
        set_signs(model, surfaces, &choice);
        model.surfaces_at(t, x, dx)?;
        if watched_differ(model, t, x)? {
            switching.get_or_insert(choice);
            continue;
        }
        let program = model.program;
        let confirmed = surfaces.iter().zip(&choice).all(|(&k, &s)| {
            let d = model.d[k];
            let side = if initial {
                sign_of(d)
            } else {
                surface_sign(program, k, d)
            };
            side == s || side == 0
        });
        if confirmed {
            return Ok(false);
        }
    }
    let Some(choice) = switching else {
        set_signs(model, surfaces, &now);
        model.surfaces_at(t, x, dx)?;
        return Ok(false);
    };
    set_signs(model, surfaces, &choice);
    model.surfaces_at(t, x, dx)?;
    Ok(true)
}

/// Writes the relations of `surfaces` for the signs `signs`.
fn set_signs(model: &mut HybridModel<'_>, surfaces: &[usize], signs: &[i8]) {
    for (&k, &s) in surfaces.iter().zip(signs) {
        model.signs[k] = s;
        model.write_relations(k, s, None);
    }
}
