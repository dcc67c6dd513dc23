//! Whether a step crossed a surface anywhere inside it, not only at its end: root isolation of
//! every watched function over the step's dense output.
//!
//! Input: the hybrid model, a stepper that just took a step from `t_prev` to `t`, the frozen
//! signs and hysteresis of the surfaces. Output: the earliest sub-interval `[a, b]` of the step
//! at whose left end no watched function has crossed and at whose right end some have (those
//! are the candidates [`locate`](super::crossing::locate) then finds the roots of), or nothing.
//!
//! A step may span two crossings of one surface (a fast `sin`, a surface that dips below zero
//! and comes back), so the signs at the step's ends say nothing. Each watched function `h`
//! (positive on the side the step started on) is known at the ends and at the midpoint of an
//! interval together with its slope (a difference quotient along the dense output). The
//! interval holds no root of `h` when `h` is positive at the three points, the cubic Hermite
//! interpolant of the ends predicts the midpoint value to within a quarter of the distance of
//! `h` from zero (the function is resolved at this scale), and the Hermite cubics of both halves
//! stay positive. Otherwise the interval is halved and its left half searched first, so the
//! sub-interval found is the earliest; intervals shorter than rounding of the time, or a budget
//! of evaluations per step, end the search (a surface that touches zero without crossing it
//! ends there). The test costs two evaluations of the model per step when the surfaces are
//! resolved by the step (the midpoint and the slope at the step's end), and more only where a
//! surface varies faster than the step or comes close to zero.
//!
//! Deliberately not here: locating the root itself ([`locate`](super::crossing::locate)), and
//! time events (scheduled exactly, never searched).

use super::*;

/// The most evaluations of the watched functions in one step's search.
const BUDGET: usize = 400;
/// The deepest halving of a step.
const MAX_DEPTH: usize = 60;

/// Where in a step the earliest crossing lies: `(start, end]` within the step that began at
/// `step_start`, and the crossings seen at `end`.
#[derive(Debug, Clone)]
pub(super) struct Bracket {
    pub step_start: f64,
    pub start: f64,
    pub end: f64,
    pub candidates: Vec<Crossing>,
}

/// The watched functions at one point of a step and their slopes along it.
#[derive(Debug, Clone)]
pub(super) struct Probe {
    pub t: f64,
    pub h: Vec<f64>,
    pub slope: Vec<f64>,
    /// The increment of the slopes' difference quotient (0 when there are no slopes).
    pub delta: f64,
}

/// The functions watched while integrating: per surface, `sign · d + near` (crossed below zero;
/// `near − |d|` for a surface that sits on zero); while sliding, then `α` and `1 − α` (sliding
/// ends below zero). `+∞` marks what is not watched (time events, the sliding surface).
pub(super) fn watched(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    t: f64,
    near: &[f64],
    out: &mut Vec<f64>,
) -> Result<(), HybridError> {
    let mut point = std::mem::take(&mut model.probe_point);
    if t == stepper.time() {
        point.copy_from_slice(stepper.state());
    } else {
        stepper.interpolate(t, &mut point);
    }
    let mut dx = std::mem::take(&mut model.check_dx);
    let result = (|| {
        let sliding = model.sliding.as_ref().map(|s| s.surface);
        let alpha = match sliding {
            Some(k) => {
                let alpha = model.sliding_rhs(k, t, &point, &mut dx)?;
                if let Some(s) = &mut model.sliding {
                    s.alpha = alpha;
                }
                Some(alpha)
            }
            None => None,
        };
        // While sliding, the relations hold α now; the other surfaces are read with them.
        model.surfaces_at(t, &point, &mut dx)?;
        out.clear();
        for (k, (&d, &sign)) in model.d.iter().zip(&model.signs).enumerate() {
            out.push(if Some(k) == sliding || is_timed(model.program, k) {
                f64::INFINITY
            } else if sign == 0 {
                near[k] - d.abs()
            } else {
                f64::from(sign) * d + near[k]
            });
        }
        match alpha {
            Some(a) => out.extend([a, 1.0 - a]),
            None => out.extend([f64::INFINITY, f64::INFINITY]),
        }
        Ok(())
    })();
    model.check_dx = dx;
    model.probe_point = point;
    result.map_err(HybridError::Evaluation)
}

/// The crossings a watched-function vector shows (indices below zero).
fn crossed_at(h: &[f64]) -> impl Iterator<Item = usize> + '_ {
    h.iter().enumerate().filter(|(_, v)| **v < 0.0).map(|(j, _)| j)
}

/// The crossing that watched function `j` stands for.
pub(super) fn crossing_of(j: usize, surfaces: usize) -> Crossing {
    if j < surfaces {
        Crossing::Surface(j)
    } else {
        Crossing::SlidingEnds(j > surfaces)
    }
}

/// A search over one step.
struct Search<'a, 'm, 'p> {
    model: &'a mut HybridModel<'p>,
    stepper: &'m dyn Stepper,
    near: &'a [f64],
    evaluations: usize,
    /// Scratch: the watched functions at the second point of a slope.
    shifted: Vec<f64>,
}

impl Search<'_, '_, '_> {
    /// The watched functions at `t` and their slopes: a forward difference quotient, or a
    /// backward one at the step's end (the dense output is not defined beyond it). The
    /// increment is a millionth of the interval the point belongs to, but not below rounding
    /// of the time.
    fn probe(&mut self, t: f64, length: f64, backward: bool) -> Result<Probe, HybridError> {
        let mut h = Vec::new();
        watched(self.model, self.stepper, t, self.near, &mut h)?;
        let delta = (1e-6 * length).max(64.0 * f64::EPSILON * t.abs().max(1.0));
        let mut slope = vec![0.0; h.len()];
        self.evaluations += 2;
        let with_slopes = delta < 0.25 * length;
        if with_slopes {
            let other = if backward { t - delta } else { t + delta };
            watched(self.model, self.stepper, other, self.near, &mut self.shifted)?;
            for ((s, a), b) in slope.iter_mut().zip(&h).zip(&self.shifted) {
                *s = if a.is_finite() && b.is_finite() {
                    if backward { (a - b) / delta } else { (b - a) / delta }
                } else {
                    0.0
                };
            }
        }
        Ok(Probe {
            t,
            h,
            slope,
            delta: if with_slopes { delta } else { 0.0 },
        })
    }

    /// The earliest crossing in `[a, b]` given the probes at both ends (none crossed at `a`):
    /// the sub-interval and the functions crossed at its right end.
    fn search(&mut self, a: &Probe, b: &Probe, depth: usize) -> Result<Option<(f64, f64, Vec<usize>)>, HybridError> {
        let length = b.t - a.t;
        let tiny = length <= 16.0 * f64::EPSILON * b.t.abs().max(1.0);
        if tiny || depth >= MAX_DEPTH || self.evaluations >= BUDGET {
            let crossed: Vec<usize> = crossed_at(&b.h).collect();
            return Ok((!crossed.is_empty()).then_some((a.t, b.t, crossed)));
        }
        let m = self.probe(a.t + 0.5 * length, 0.5 * length, false)?;
        let settled = (0..a.h.len()).all(|j| no_root(a, &m, b, j, length));
        if settled {
            return Ok(None);
        }
        if let Some(found) = self.search(a, &m, depth + 1)? {
            return Ok(Some(found));
        }
        self.search(&m, b, depth + 1)
    }
}

/// Whether watched function `j` certainly has no root in `[a.t, b.t]` (with `m` the midpoint).
fn no_root(a: &Probe, m: &Probe, b: &Probe, j: usize, length: f64) -> bool {
    let (ha, hm, hb) = (a.h[j], m.h[j], b.h[j]);
    if ha == f64::INFINITY {
        return true;
    }
    let lowest = ha.min(hm).min(hb);
    if lowest < 0.0 {
        return false;
    }
    let (da, dm, db) = (a.slope[j], m.slope[j], b.slope[j]);
    if a.delta == 0.0 || m.delta == 0.0 || b.delta == 0.0 {
        // No slopes: the interval is within rounding of the time, and the three values decide.
        return true;
    }
    let predicted = 0.5 * (ha + hb) + length / 8.0 * (da - db);
    if (predicted - hm).abs() > 0.25 * lowest {
        // Not resolved at this scale: the function varies faster than the interval.
        return false;
    }
    // The slopes are difference quotients: wrong by about `δ |h''|` (truncation) plus
    // `ε |h| / δ` (rounding). The cubics must stay above what that error moves them by, so
    // that a dip shallower than the slopes' accuracy is searched, not trusted.
    let curvature = (dm - da).abs().max((db - dm).abs()) / (0.5 * length);
    let uncertainty = [a, m, b]
        .iter()
        .map(|p| p.delta * curvature + 4.0 * f64::EPSILON * p.h[j].abs() / p.delta.max(f64::MIN_POSITIVE))
        .fold(0.0, f64::max);
    let margin = 0.5 * length * uncertainty;
    hermite_min(ha, da, hm, dm, 0.5 * length) > margin && hermite_min(hm, dm, hb, db, 0.5 * length) > margin
}

/// The smallest value on `[0, length]` of the cubic with values `h0`, `h1` and slopes `d0`, `d1`
/// at the ends.
pub(super) fn hermite_min(h0: f64, d0: f64, h1: f64, d1: f64, length: f64) -> f64 {
    // In s = τ / length: p(s) = c0 + c1 s + c2 s² + c3 s³.
    let c1 = length * d0;
    let c2 = 3.0 * (h1 - h0) - length * (2.0 * d0 + d1);
    let c3 = 2.0 * (h0 - h1) + length * (d0 + d1);
    let p = |s: f64| h0 + s * (c1 + s * (c2 + s * c3));
    let mut lowest = h0.min(h1);
    // p'(s) = c1 + 2 c2 s + 3 c3 s²: its roots inside (0, 1).
    let (qa, qb, qc) = (3.0 * c3, 2.0 * c2, c1);
    let mut consider = |s: f64| {
        if s > 0.0 && s < 1.0 {
            lowest = lowest.min(p(s));
        }
    };
    if qa.abs() <= 1e-14 * (qb.abs() + qc.abs()) {
        if qb != 0.0 {
            consider(-qc / qb);
        }
    } else {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            let root = disc.sqrt();
            consider((-qb + root) / (2.0 * qa));
            consider((-qb - root) / (2.0 * qa));
        }
    }
    lowest
}

/// The earliest crossing in the step `(t_prev, t]` just taken: the sub-interval that holds it
/// and the crossings at its right end; `start` is the probe at `t_prev` when it is still
/// valid (taken at the end of the previous step, with nothing changed since). Returns the
/// probe at `t` for the next step as well (none when nothing is watched).
pub(super) fn isolate(
    model: &mut HybridModel<'_>,
    stepper: &dyn Stepper,
    t_prev: f64,
    t: f64,
    near: &[f64],
    start: Option<Probe>,
) -> Result<(Option<Bracket>, Option<Probe>), HybridError> {
    let surfaces = model.signs.len();
    // Nothing watched (only time events, which are scheduled): nothing to search.
    let timed = (0..surfaces).all(|k| is_timed(model.program, k));
    if timed && model.sliding.is_none() {
        return Ok((None, None));
    }
    let mut search = Search {
        model,
        stepper,
        near,
        evaluations: 0,
        shifted: Vec::with_capacity(surfaces + 2),
    };
    let length = t - t_prev;
    let a = match start {
        Some(p) if p.t == t_prev => p,
        _ => search.probe(t_prev, length, false)?,
    };
    let b = search.probe(t, length, true)?;
    let found = search.search(&a, &b, 0)?;
    // Leave the model evaluated with the frozen relations (the sliding evaluation writes α).
    if let Some(s) = search.model.sliding.as_ref().map(|s| (s.surface, s.alpha)) {
        search.model.write_relations(s.0, 0, Some(s.1));
    }
    let found = found.map(|(start, end, js)| Bracket {
        step_start: t_prev,
        start,
        end,
        candidates: js.into_iter().map(|j| crossing_of(j, surfaces)).collect(),
    });
    Ok((found, Some(b)))
}

#[cfg(test)]
mod tests {
    use super::hermite_min;

    #[test]
    fn the_hermite_minimum_finds_a_dip_between_positive_ends() {
        // p(τ) = (τ − 0.5)² − 0.01 on [0, 1]: 0.24 at both ends, slopes −1 and 1, minimum −0.01.
        let lowest = hermite_min(0.24, -1.0, 0.24, 1.0, 1.0);
        assert!((lowest + 0.01).abs() < 1e-12, "{lowest}");
        // A monotone cubic's minimum is at an end.
        assert_eq!(hermite_min(1.0, 2.0, 3.0, 2.0, 1.0), 1.0);
        // Scaled interval: p(τ) = τ² − τ + 0.3 on [0, 2]: 0.3, slope −1; 2.3, slope 3; min 0.05.
        let lowest = hermite_min(0.3, -1.0, 2.3, 3.0, 2.0);
        assert!((lowest - 0.05).abs() < 1e-12, "{lowest}");
    }
}
