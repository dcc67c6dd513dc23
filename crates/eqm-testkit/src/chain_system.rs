//! The chain of masses (`chain.rs`) as an [`OdeSystem`] for the benchmarks and tests that drive
//! the integrators on it directly: its Jacobian's pattern and the values of its constant
//! Jacobian (the chain is linear), each optional, so that one run can compare difference
//! quotients, exact values, sparse and dense factors on the same system.

use crate::chain::Chain;
use eqm_integrators::{OdeSystem, RhsError};

pub struct ChainSystem {
    pub chain: Chain,
    /// `Chain::jacobian_pattern`, row by row.
    pattern: Vec<Vec<u32>>,
    /// The Jacobian's values in the order of `pattern`.
    values: Vec<f64>,
    /// Whether the exact values are given (else the integrators use difference quotients).
    exact: bool,
    /// Whether the pattern is given (else the integrators use dense matrices).
    sparse: bool,
}

impl ChainSystem {
    pub fn new(chain: Chain, exact: bool, sparse: bool) -> ChainSystem {
        let n = chain.n;
        let (c, d) = (chain.c / chain.m, chain.d / chain.m);
        let pattern = chain.jacobian_pattern();
        // Row of s_i' = v_i: 1. Row of v_i' = (f_{i+1} − f_i)/m: c/m (positions) or d/m (speeds)
        // for the neighbours, and for mass i itself −2 times that, −1 times for the last mass,
        // which has no spring after it.
        let values = pattern
            .iter()
            .enumerate()
            .flat_map(|(row, columns)| {
                columns.iter().map(move |&column| {
                    if row < n {
                        return 1.0;
                    }
                    let (i, column) = (row - n, column as usize);
                    let (j, k) = if column < n { (column, c) } else { (column - n, d) };
                    if j != i {
                        k
                    } else if i + 1 < n {
                        -2.0 * k
                    } else {
                        -k
                    }
                })
            })
            .collect();
        ChainSystem {
            chain,
            pattern,
            values,
            exact,
            sparse,
        }
    }
}

impl OdeSystem for ChainSystem {
    fn dim(&self) -> usize {
        2 * self.chain.n
    }

    fn rhs(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) -> Result<(), RhsError> {
        self.chain.rhs(x, dx);
        Ok(())
    }

    fn jacobian(&mut self, _t: f64, _x: &[f64], jacobian: &mut nalgebra::DMatrix<f64>) -> Option<Result<(), RhsError>> {
        if !self.exact {
            return None;
        }
        jacobian.fill(0.0);
        let entries = self
            .pattern
            .iter()
            .enumerate()
            .flat_map(|(i, row)| row.iter().map(move |&j| (i, j as usize)));
        for ((i, j), &value) in entries.zip(&self.values) {
            jacobian[(i, j)] = value;
        }
        Some(Ok(()))
    }

    fn jacobian_pattern(&self) -> Option<&[Vec<u32>]> {
        self.sparse.then_some(&self.pattern[..])
    }

    fn sparse_jacobian(&mut self, _t: f64, _x: &[f64], values: &mut [f64]) -> Option<Result<(), RhsError>> {
        if !self.exact {
            return None;
        }
        values.copy_from_slice(&self.values);
        Some(Ok(()))
    }
}
