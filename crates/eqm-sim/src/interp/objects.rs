//! The external objects of a run (Modelica's `ExternalObject`): each created once by its
//! constructor and destroyed once by its destructor when the run ends.
//!
//! Input: the calls of constructors, in the order a parameter program makes them, with their
//! arguments. Output: each call's object handle (a C pointer's bits in a double). The parameter
//! program runs again whenever a parameter changes, and the model's program and its
//! initialization program each run their own, so a call is matched to an object made before
//! with the same constructor and the same arguments (bit for bit): the n-th such call of an
//! evaluation gets the n-th such object, else a new one is made. One object is thereby one
//! model object in every program of the run, and what its functions remember (a table's
//! current event interval, which the initialization sets) is there for the simulation too.
//! The store is shared by the instances of one run (clones of one interpreter, and the
//! instance that solves the initialization) and destroys every object it created, exactly
//! once, when the last of them is dropped: at the end of the run, also when the run stops with
//! an error. It deliberately knows nothing of what the objects are: it calls the linked
//! wrappers.

use eqm_ir::external::LinkedSymbol;

/// One object created: its handle and its destructor.
struct Created {
    handle: f64,
    destructor: LinkedSymbol,
}

/// What identifies an object: its constructor's address and its arguments' bits.
type ObjectKey = (usize, Vec<u64>);

/// The objects of one run.
#[derive(Default)]
pub(super) struct ObjectStore {
    /// Every object created, in the order of creation (also those no longer made by any
    /// evaluation: they are destroyed with the rest).
    created: Vec<Created>,
    /// The objects made by each constructor and arguments, in the order of creation: indices
    /// into `created`.
    by_key: std::collections::HashMap<ObjectKey, Vec<usize>>,
    /// How many calls with each constructor and arguments the current evaluation has made.
    calls: std::collections::HashMap<ObjectKey, usize>,
}

impl ObjectStore {
    /// Whether no object has been created: nothing of the run lives outside EQM's values.
    pub(super) fn is_empty(&self) -> bool {
        self.created.is_empty()
    }

    /// Starts an evaluation of a parameter program: its calls are matched to the objects
    /// from the first again.
    pub(super) fn begin(&mut self) {
        self.calls.clear();
    }

    /// The handle of the object that `constructor` makes from `arguments`: the existing one
    /// when this is the n-th call with them in the current evaluation and n objects were
    /// made with them before, else a new one. `Err` with the C code's message when the
    /// constructor failed.
    pub(super) fn construct(
        &mut self,
        constructor: &LinkedSymbol,
        destructor: &LinkedSymbol,
        arguments: &[f64],
    ) -> Result<f64, String> {
        let key: ObjectKey = (constructor.address(), arguments.iter().map(|a| a.to_bits()).collect());
        let occurrence = self.calls.get(&key).copied().unwrap_or(0);
        if let Some(&known) = self.by_key.get(&key).and_then(|made| made.get(occurrence)) {
            self.calls.insert(key, occurrence + 1);
            return Ok(self.created[known].handle);
        }
        let handle = eqm_jit::call_external(constructor, arguments)
            .ok_or_else(|| "a constructor called with the wrong number of arguments".to_string())?;
        if handle.is_nan() {
            return Err(eqm_jit::external_error(constructor)
                .unwrap_or_else(|| "the constructor returned no object".to_string()));
        }
        self.created.push(Created {
            handle,
            destructor: destructor.clone(),
        });
        self.by_key.entry(key.clone()).or_default().push(self.created.len() - 1);
        self.calls.insert(key, occurrence + 1);
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
