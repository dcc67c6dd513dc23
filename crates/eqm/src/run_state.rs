//! The state of a run its caller drives ([`crate::SteppedRun`], [`crate::ModelExchange`]) as
//! a value the caller owns, and as bytes.
//!
//! Input: the state a run gives ([`crate::SteppedRun::state`]) or bytes written before.
//! Output: a [`RunState`] that the run of the same model takes back
//! ([`crate::SteppedRun::restore`]), and its bytes ([`RunState::to_bytes`]). Every state names
//! its model by a fingerprint of the compiled program (its variables, their places, the sizes
//! of its arrays and events, and every expression), so that a state of another model (also one
//! that differs in a coefficient only) is refused with a message rather than misread. The byte format (version 2, little-endian):
//!
//! | bytes | what |
//! |---|---|
//! | 8 | `EQMSTATE` |
//! | 4 | the format's version, 2 |
//! | 4 + n | the length of the model's fingerprint and its UTF-8 text |
//! | 4 + m | the length of the caller's label (an FMU's GUID and mode) and its UTF-8 text |
//! | 8 + b | the length of the body and the body: the run's values in `postcard`'s encoding |
//! | 8 | the 64-bit FNV-1a hash of every byte before |
//!
//! A buffer with another beginning, version or hash, or one that ends early or goes on, is
//! refused. It deliberately reads and writes no files.

use crate::model::Model;
use crate::run::RunError;
use eqm_sim::simulate::RunState as Values;

/// The state of a run; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct RunState {
    pub(crate) values: Values,
    pub(crate) fingerprint: String,
    label: String,
}

const MAGIC: &[u8; 8] = b"EQMSTATE";
/// The format's version: 2 since a run's values hold the event the run stopped before for its
/// caller, which the values of version 1 lack, so bytes of version 1 are refused, not misread.
const VERSION: u32 = 2;

impl RunState {
    pub(crate) fn new(values: Values, fingerprint: String) -> RunState {
        RunState {
            values,
            fingerprint,
            label: String::new(),
        }
    }

    /// The time of the state's point.
    pub fn time(&self) -> f64 {
        self.values.time()
    }

    /// The continuous states at the state's point.
    pub fn states(&self) -> &[f64] {
        self.values.states()
    }

    /// The fingerprint of the model the state is of.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// What the caller keeps with the state (an FMU: its GUID and its mode); written with it.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn set_label(&mut self, label: String) {
        self.label = label;
    }

    /// The state as bytes (see the module documentation).
    pub fn to_bytes(&self) -> Vec<u8> {
        let body = postcard::to_stdvec(&self.values).unwrap_or_default();
        let mut bytes = Vec::with_capacity(body.len() + self.fingerprint.len() + self.label.len() + 40);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        for text in [&self.fingerprint, &self.label] {
            bytes.extend_from_slice(&(text.len() as u32).to_le_bytes());
            bytes.extend_from_slice(text.as_bytes());
        }
        bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&body);
        let hash = fnv1a(&bytes);
        bytes.extend_from_slice(&hash.to_le_bytes());
        bytes
    }

    /// The state `bytes` hold; an error for bytes that are not a state of this format.
    pub fn from_bytes(bytes: &[u8]) -> Result<RunState, RunError> {
        let refused = |why: &str| RunError::Settings(format!("the bytes are not a state of an EQM run: {why}"));
        let Some((content, hash)) = bytes.split_last_chunk::<8>() else {
            return Err(refused("they are too short"));
        };
        if !content.starts_with(MAGIC) {
            return Err(refused("they do not begin with `EQMSTATE`"));
        }
        let mut reader = Reader(&content[MAGIC.len()..]);
        let version = reader.u32().ok_or_else(|| refused("they end early"))?;
        if version != VERSION {
            return Err(refused(&format!(
                "they are of version {version} of the format, this EQM reads version {VERSION}"
            )));
        }
        if fnv1a(content) != u64::from_le_bytes(*hash) {
            return Err(refused("their checksum does not match (the buffer was changed or cut)"));
        }
        let fingerprint = reader.text().ok_or_else(|| refused("their fingerprint is cut"))?;
        let label = reader.text().ok_or_else(|| refused("their label is cut"))?;
        let body = reader.block().ok_or_else(|| refused("their body is cut"))?;
        if !reader.0.is_empty() {
            return Err(refused("they go on after the body"));
        }
        let values: Values =
            postcard::from_bytes(body).map_err(|e| refused(&format!("their body cannot be read ({e})")))?;
        Ok(RunState {
            values,
            fingerprint,
            label,
        })
    }

    /// An error unless the state is of `model`, whose fingerprint is `fingerprint`.
    pub(crate) fn check_model(&self, model: &Model, fingerprint: &str) -> Result<(), RunError> {
        match self.fingerprint == fingerprint {
            true => Ok(()),
            false => Err(RunError::Settings(format!(
                "the state is of another model (fingerprint {}), not of `{}` (fingerprint {fingerprint})",
                self.fingerprint,
                model.name()
            ))),
        }
    }
}

impl Model {
    /// An error unless `state` is of a run of this model.
    pub fn check_state(&self, state: &RunState) -> Result<(), RunError> {
        state.check_model(self, &fingerprint(self))
    }
}

/// Reads the parts of a state's bytes in order.
struct Reader<'b>(&'b [u8]);

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn text(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }

    fn block(&mut self) -> Option<&'b [u8]> {
        let n = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        self.take(usize::try_from(n).ok()?)
    }
}

/// The 64-bit FNV-1a hash of `bytes`: a check against changed or cut buffers, not against
/// forgery.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// FNV-1a as a [`std::hash::Hasher`], so that the fingerprint does not depend on the standard
/// library's choice of hash.
struct Fnv(u64);

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The fingerprint of `model`'s compiled program: a hash of its name, the sizes of its arrays
/// and events, each variable's name and place, and every expression of the program.
pub(crate) fn fingerprint(model: &Model) -> String {
    use std::hash::{Hash, Hasher};
    let program = model.program();
    let layout = program.layout();
    let events = program.events();
    let mut text = format!(
        "{}\n{} {} {} | {} {} {} {} {} {} | {} {}\n",
        model.name(),
        layout.states,
        layout.params,
        layout.work,
        events.surfaces.len(),
        events.samples.len(),
        events.whens.len(),
        events.delays.len(),
        events.spatials.len(),
        events.discrete.len(),
        program.rhs().len(),
        program.equations().len()
    );
    for (name, _, slot, _) in program.variables() {
        text.push_str(name);
        text.push_str(&format!(" {slot:?}\n"));
    }
    let mut hasher = Fnv(fnv1a(text.as_bytes()));
    let exprs = program.exprs();
    for k in 0..exprs.len() {
        exprs.get(eqm_ir::ids::ExprId(k as u32)).hash(&mut hasher);
    }
    format!("{:016x}", hasher.finish())
}
