//! The derivatives of outputs in Co-Simulation, FMI 2.0 (`fmi2GetRealOutputDerivatives`) and
//! FMI 3.0 (`fmi3GetOutputDerivatives`): the first derivative with respect to time of each
//! variable named, at the current communication point, which an importer uses to extrapolate
//! the outputs over its next step. Each function converts between C and
//! [`Instance::output_derivatives`] and nothing more; orders above 1 are refused there
//! (`maxOutputDerivativeOrder="1"`).

use crate::abi::with;
use crate::instance::{Error, Instance};
use crate::{Status, slice, slice_mut};
use std::ffi::{c_int, c_uint, c_void};

/// `fmi2GetRealOutputDerivatives`: one derivative per value reference, of the order given
/// for it (FMI 3's function with one value per reference: FMI 2 has no arrays).
///
/// # Safety
/// `c` is null or a live component of ours; each array is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    orders: *const c_int,
    values: *mut f64,
) -> Status {
    // SAFETY: by the caller's contract, `values` is `n` long.
    unsafe { fmi3GetOutputDerivatives(c, refs, n, orders, values, n) }
}

/// `fmi3GetOutputDerivatives`: an array's value reference stands for its elements (row-major),
/// each with the order given for the array, and `n_values` counts them all.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` and `orders` are null or `n` elements long,
/// `values` null or `n_values` long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetOutputDerivatives(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    orders: *const c_int,
    values: *mut f64,
    n_values: usize,
) -> Status {
    // SAFETY: each pointer is null or as long as its count, by the caller's contract.
    let arrays = unsafe { (slice(refs, n), slice(orders, n), slice_mut(values, n_values)) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (Some(refs), Some(orders), Some(values)) = arrays else {
                return Err(Error::Error("a null array was passed with a positive length".into()));
            };
            let (elements, element_orders) = elements_with_orders(i, refs, orders);
            if elements.len() != values.len() {
                return Err(Error::Error(format!(
                    "nValues is {}, while the value references name {} scalars",
                    values.len(),
                    elements.len()
                )));
            }
            i.output_derivatives(&elements, &element_orders, values)
        })
    }
}

/// The scalars the value references `refs` name (an array's elements), each with the order
/// given for its reference.
fn elements_with_orders(instance: &Instance, refs: &[u32], orders: &[i32]) -> (Vec<u32>, Vec<i32>) {
    let mut elements = Vec::with_capacity(refs.len());
    let mut element_orders = Vec::with_capacity(refs.len());
    for (&r, &order) in refs.iter().zip(orders) {
        let scalars = instance.elements(&[r]);
        element_orders.extend(std::iter::repeat_n(order, scalars.len()));
        elements.extend(scalars);
    }
    (elements, element_orders)
}
