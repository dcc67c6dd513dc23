//! The external objects of a run (Modelica's `ExternalObject`): each created once by its
//! constructor and destroyed once by its destructor when the run ends.
//!
//! Input: the calls of constructors, in the order the parameter program makes them, with their
//! arguments. Output: each call's object handle (a C pointer's bits in a double). The parameter
//! program runs again whenever a parameter changes, so a constructor's call is matched to the
//! call made at the same position of the previous evaluation: with the same constructor and
//! the same arguments (bit for bit) it gives the same object, otherwise a new one. An object
//! replaced so is kept until the end, since an instance sharing the store may still hold its
//! handle. The store is shared by the instances of one run (clones of one interpreter) and
//! destroys every object it created, exactly once, when the last of them is dropped: at the end
//! of the run, also when the run stops with an error. It deliberately knows nothing of
//! what the objects are: it calls the linked wrappers.

use eqm_ir::external::LinkedSymbol;

/// One object created: the constructor and arguments it was made with, its handle and its
/// destructor.
struct Created {
    constructor: usize,
    arguments: Vec<u64>,
    handle: f64,
    destructor: LinkedSymbol,
}

/// The objects of one run.
#[derive(Default)]
pub(super) struct ObjectStore {
    /// Every object created, in the order of creation (also those a later evaluation replaced:
    /// they are destroyed with the rest).
    created: Vec<Created>,
    /// The objects of the latest evaluation of the parameter program, by call position: indices
    /// into `created`.
    current: Vec<usize>,
    /// The position of the next constructor call in the current evaluation.
    next: usize,
}

impl ObjectStore {
    /// Starts an evaluation of the parameter program: its first constructor call is matched
    /// to the previous evaluation's first.
    pub(super) fn begin(&mut self) {
        self.next = 0;
    }

    /// The handle of the object that `constructor` makes from `arguments` at the current call
    /// position: the existing one when the previous evaluation made it with the same
    /// arguments, else a new one. `Err` with the C code's message when the constructor failed.
    pub(super) fn construct(
        &mut self,
        constructor: &LinkedSymbol,
        destructor: &LinkedSymbol,
        arguments: &[f64],
    ) -> Result<f64, String> {
        let position = self.next;
        self.next += 1;
        let bits: Vec<u64> = arguments.iter().map(|a| a.to_bits()).collect();
        if let Some(known) = self.current.get(position).map(|&k| &self.created[k])
            && known.constructor == constructor.address()
            && known.arguments == bits
        {
            return Ok(known.handle);
        }
        let handle = eqm_jit::call_external(constructor, arguments)
            .ok_or_else(|| "a constructor called with the wrong number of arguments".to_string())?;
        if handle.is_nan() {
            return Err(eqm_jit::external_error(constructor)
                .unwrap_or_else(|| "the constructor returned no object".to_string()));
        }
        let created = Created {
            constructor: constructor.address(),
            arguments: bits,
            handle,
            destructor: destructor.clone(),
        };
        self.created.push(created);
        let index = self.created.len() - 1;
        if position < self.current.len() {
            self.current[position] = index;
        } else {
            self.current.push(index);
        }
        Ok(handle)
    }
}

impl Drop for ObjectStore {
    fn drop(&mut self) {
        // Destroyed in the reverse order of creation, so an object made from another goes
        // first. A destructor's error cannot stop a run that has ended; it is ignored.
        for object in self.created.iter().rev() {
            let _ = eqm_jit::call_external(&object.destructor, &[object.handle]);
        }
    }
}
