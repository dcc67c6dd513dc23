//! Where a step crossed a surface: the signs of the surfaces, the location of the earliest
//! crossing on the stepper's dense output, and the decision at a
//! crossing whether the solution passes the surface or slides along it.
//!
//! Input: the hybrid model, a stepper that took a step, the surfaces' frozen signs and the part
//! of the step that `isolate` found to hold the earliest crossing. Output: its time, and rows up
//! to it. The event iteration itself is in `events`.

use super::*;

/// The sign surface `k` takes at value `d`: for a time event `time - T` the side time is
/// heading to (so that at `t = T` itself it already counts as passed, the event's
/// scheduled instant), otherwise [`sign_of`].
pub(super) fn surface_sign(program: &ExecProgram, k: usize, d: f64) -> i8 {
    match program.events().surfaces.get(k) {
        Some(s) if s.time_event.is_some() => {
            if d >= 0.0 {
                1
            } else {
                -1
            }
        }
        _ => sign_of(d),
    }
}

/// Whether surface `k` is a scheduled time event (never located by root finding).
pub(super) fn is_timed(program: &ExecProgram, k: usize) -> bool {
    program.events().surfaces.get(k).is_some_and(|s| s.time_event.is_some())
}

/// -1, 0 or 1.
pub(crate) fn sign_of(v: f64) -> i8 {
    if v > 0.0 {
        1
    } else if v < 0.0 {
        -1
    } else {
        0
    }
}

/// Rows at the output times up to `t`; `Break(time)` when the observer stopped.
pub(super) fn emit_through(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    schedule: &mut Schedule<'_>,
    t: f64,
    buffer: &mut [f64],
    row: &mut impl FnMut(&mut HybridModel<'_>, f64, &[f64]) -> ControlFlow<()>,
) -> Result<ControlFlow<f64>, HybridError> {
    while let Some(time) = schedule.next_until(t) {
        if time == stepper.time() {
            buffer.copy_from_slice(stepper.state());
        } else {
            stepper.interpolate(time, buffer);
        }
        if row(model, time, buffer).is_break() {
            return Ok(ControlFlow::Break(time));
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// The earliest event time in `(t_prev, t]`, a sub-interval of a step that
/// [`isolate`](super::isolate::isolate) found: for every candidate crossed at `t`, the root of
/// its function on the dense output by the Illinois method, and the smallest of those.
pub(super) fn locate(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    bracket: &Bracket,
    near: &[f64],
    buffer: &mut [f64],
) -> Result<f64, HybridError> {
    let (step_start, t_prev, t) = (bracket.step_start, bracket.start, bracket.end);
    let sliding = model.sliding.as_ref().map(|s| s.surface);
    let mut earliest = t;
    for &c in &bracket.candidates {
        // g > 0 on the side the step started on, g < 0 after the crossing.
        let mut g = |model: &mut HybridModel<'_>, time: f64| -> Result<f64, HybridError> {
            stepper.interpolate(time, buffer);
            let mut dx = std::mem::take(&mut model.check_dx);
            let value = (|| match c {
                Crossing::Surface(k) => {
                    // Only this surface's function is evaluated (after the right-hand side).
                    let d = model.ode.instance.surface_at(k, time, buffer, &mut dx)?;
                    // The root is that of the surface itself; the hysteresis only decides whether
                    // a step's end counts as crossed.
                    Ok(match model.signs[k] {
                        0 => near[k] - d.abs(),
                        s => f64::from(s) * d,
                    })
                }
                Crossing::SlidingEnds(positive) => {
                    let k = sliding.unwrap_or(0);
                    let alpha = model.sliding_rhs(k, time, buffer, &mut dx)?;
                    Ok(if positive { 1.0 - alpha } else { alpha })
                }
            })();
            model.check_dx = dx;
            value.map_err(HybridError::Evaluation)
        };
        let (mut a, mut b) = (t_prev, earliest);
        let mut ga = g(model, a)?;
        let mut gb = g(model, b)?;
        if gb >= 0.0 {
            // Not crossed before the earliest time found so far.
            continue;
        }
        if ga <= 0.0 && step_start < a {
            // The bracket starts within the hysteresis band past the root (its watched function
            // was not yet below zero there): the root lies earlier in the step.
            let g_start = g(model, step_start)?;
            if g_start > 0.0 {
                (a, ga) = (step_start, g_start);
            }
        }
        if ga <= 0.0 {
            // Already on the other side at the step's start: the event is there.
            earliest = a;
            continue;
        }
        let tolerance = 4.0 * f64::EPSILON * t.abs().max(1.0) + 1e-15;
        let mut side = 0;
        for _ in 0..200 {
            if b - a <= tolerance {
                break;
            }
            let mut m = (a * gb - b * ga) / (gb - ga);
            if !(m > a && m < b) {
                m = 0.5 * (a + b);
            }
            let gm = g(model, m)?;
            if gm < 0.0 {
                b = m;
                gb = gm;
                if side == -1 {
                    ga *= 0.5;
                }
                side = -1;
            } else {
                a = m;
                ga = gm;
                if side == 1 {
                    gb *= 0.5;
                }
                side = 1;
            }
        }
        earliest = b;
    }
    // Leave the model evaluated with the frozen relations (the sliding evaluation writes α).
    if let Some(k) = sliding
        && let Some(alpha) = model.sliding.as_ref().map(|s| s.alpha)
    {
        model.write_relations(k, 0, Some(alpha));
    }
    Ok(earliest)
}

/// Surfaces exactly at zero at the start slide when the fields on both sides push the
/// solution onto them; otherwise their relations keep the values the initialization gave them
/// (`x <= 0` holds at `x = 0`), and the solution leaving the surface is an event.
pub(super) fn decide_sides(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    zero: &mut Vec<usize>,
) -> Result<(), HybridError> {
    let before = vec![0i8; model.signs.len()];
    let list = std::mem::take(zero);
    decide_sliding(model, t, x, &before, &list, false)
}

/// For each surface in `changed` (its frozen sign before the event in `before`): when the
/// fields on both sides push the solution back onto it, sliding starts; with `choose_side`,
/// when the side it is on now pushes it back and the other does not, it takes the other side.
/// Sliding on more than one surface at once is an error.
pub(super) fn decide_sliding(
    model: &mut HybridModel<'_>,
    t: f64,
    x: &[f64],
    before: &[i8],
    changed: &[usize],
    choose_side: bool,
) -> Result<(), HybridError> {
    let events = model.program.events();
    let mut slides: Vec<usize> = Vec::new();
    for &k in changed {
        let now = model.signs[k];
        // A side whose field cannot be evaluated (a branch not taken there divides by zero) is
        // no side to slide on or to leave to: the surface keeps the side it is on, whose field
        // every step evaluates anyway (and reports, should it fail too).
        let Ok((a_plus, a_minus)) = model.sides(k, t, x) else {
            model.write_relations(k, now, None);
            continue;
        };
        // Restore the relations of the side it is on.
        model.write_relations(k, now, None);
        let pushed_back_from_plus = a_plus < 0.0;
        let pushed_back_from_minus = a_minus > 0.0;
        if pushed_back_from_plus && pushed_back_from_minus {
            slides.push(k);
        } else if choose_side && (now == 0 || before[k] == 0) {
            // On the surface: leave towards the side whose field points away from it.
            let side = if !pushed_back_from_plus && a_plus > 0.0 {
                1
            } else if !pushed_back_from_minus && a_minus < 0.0 {
                -1
            } else {
                now
            };
            if side != 0 {
                model.signs[k] = side;
                model.write_relations(k, side, None);
            }
        }
    }
    match slides.as_slice() {
        [] => Ok(()),
        [k] => {
            let k = *k;
            let mut dx = vec![0.0; x.len()];
            let alpha = model.sliding_rhs(k, t, x, &mut dx)?;
            model.sliding = Some(Sliding {
                surface: k,
                alpha,
                since: t,
            });
            model.stats.notes.push(format!(
                "t = {t}: the fields on both sides of `{}` point towards it: sliding mode (Filippov) starts",
                events.surfaces[k].text
            ));
            Ok(())
        }
        [k, others @ ..] => {
            let names: Vec<String> = std::iter::once(*k)
                .chain(others.iter().copied())
                .take(4)
                .map(|j| format!("`{}`", events.surfaces[j].text))
                .collect();
            Err(HybridError::Event {
                code: "E0710",
                time: t,
                message: format!(
                    "the solution is pushed onto several switching surfaces at once ({}), where sliding mode is not defined",
                    names.join(", ")
                ),
                span: events.surfaces[*k].span,
                help: "regularise one of the switches (for example with a smooth approximation inside noEvent) or change the model so that the surfaces are not met together".to_string(),
            })
        }
    }
}
