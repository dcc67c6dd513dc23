//! The profiles of `spatialDistribution` calls met while extracting events.
//!
//! Input: a call's arguments (the inputs, the position, the direction, the output chosen and
//! the initial points and values). Output: the expression of the chosen output over the
//! profile's variables, one profile per call (shared by both outputs), recorded as a
//! [`Spatial`] of the event set. It deliberately does not move the profile: the simulation does.

use super::{Extractor, Spatial};
use crate::dae::Dae;
use crate::index::IndexOne;
use eqm_diag::source::Span;
use eqm_ir::expr::{ExprId, Node};

impl Extractor {
    /// The output of a `spatialDistribution` call (`args`: `in0, in1, x, positiveVelocity`,
    /// the output chosen (0 or 1), then the initial points and values), reading the
    /// variables of its profile (one profile for both outputs of a call).
    pub(super) fn spatial_output(&mut self, dae: &mut Dae<IndexOne>, args: &[ExprId], span: Span) -> ExprId {
        let mut key = args.to_vec();
        let chosen = key.remove(4);
        let index = match self.spatial_of.get(&key) {
            Some(&k) => k,
            None => {
                let number = self.spatials.len() + 1;
                let constant = |dae: &Dae<IndexOne>, e: ExprId| match dae.exprs().get(e) {
                    Node::Real(bits) => f64::from_bits(*bits),
                    Node::Int(v) => *v as f64,
                    _ => f64::NAN,
                };
                let n = (key.len() - 4) / 2;
                let points: Vec<f64> = key[4..4 + n].iter().map(|&e| constant(dae, e)).collect();
                let values: Vec<f64> = key[4 + n..].iter().map(|&e| constant(dae, e)).collect();
                let what = [
                    ("first", "its first value"),
                    ("last", "its last value"),
                    ("at0", "its value at 0"),
                    ("at1", "its value at 1"),
                ];
                let vars = what.map(|(which, what)| {
                    let var = dae.add_relation_variable(
                        format!("$spatial{number}_{which}"),
                        format!("the profile of spatialDistribution: {what}"),
                        span,
                    );
                    if let Some(variable) = dae.flat.variables.last_mut() {
                        variable.ty = eqm_ir::flat::ScalarType::Real;
                    }
                    self.moving.insert(var);
                    var
                });
                self.spatials.push(Spatial {
                    vars,
                    in0: key[0],
                    in1: key[1],
                    x: key[2],
                    positive: key[3],
                    points,
                    values,
                    span,
                });
                self.spatial_of.insert(key.clone(), self.spatials.len() - 1);
                self.spatials.len() - 1
            }
        };
        let [first, last, at0, at1] = self.spatials[index].vars.map(|v| dae.flat.exprs.var(v));
        let positive = key[3];
        match dae.exprs().get(chosen) {
            Node::Int(1) => dae.flat.exprs.add(Node::If(positive, at1, last)),
            _ => dae.flat.exprs.add(Node::If(positive, first, at0)),
        }
    }
}
