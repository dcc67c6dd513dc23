//! The FMU state of an instance (`fmi2GetFMUstate`, `fmi2SetFMUstate`, their serialization,
//! and FMI 3's): the whole state of its run ([`eqm::RunState`]) with the instance's mode.
//!
//! Input: an [`Instance`] whose run has started (initialization mode or later), or bytes an
//! importer kept. Output: an [`FmuState`], its bytes (the library's format, whose label names
//! the FMU's GUID or instantiation token, the interface and the mode), and an instance put
//! back into a state. A state can be set into any instance of the same FMU and interface (it
//! holds values only, no pointers into the instance); one of another FMU, the other
//! interface, or bytes that are not a state are an error with the reason. It deliberately
//! holds no C types: the pointers are `abi_state`'s.

use super::{Error, Instance, Interface, Phase, Run, rendered};
use eqm::RunState;
use std::cell::OnceCell;

/// An FMU state; see the module documentation.
pub struct FmuState {
    run: RunState,
    interface: Interface,
    /// Whether the initialization had ended (`fmi2ExitInitializationMode`).
    initialized: bool,
    /// The bytes of the state, made at the first request (size, then serialization).
    bytes: OnceCell<Vec<u8>>,
}

impl FmuState {
    /// The state as bytes (see the module documentation).
    pub fn bytes(&self) -> &[u8] {
        self.bytes.get_or_init(|| self.run.to_bytes())
    }

    /// The state `bytes` hold, for an instance of the FMU with `token` and `interface`.
    pub fn from_bytes(bytes: &[u8], token: &str, interface: Interface) -> Result<FmuState, Error> {
        let run = RunState::from_bytes(bytes).map_err(|e| Error::Error(e.to_string()))?;
        let mut words = run.label().split(' ');
        let (Some(of), Some(kind), Some(mode), None) = (words.next(), words.next(), words.next(), words.next()) else {
            return Err(Error::Error(format!(
                "the bytes are a state of an EQM run, but not of an FMU (their label is `{}`)",
                run.label()
            )));
        };
        if of != token {
            return Err(Error::Error(format!(
                "the state is of the FMU {of}, not of this one ({token})"
            )));
        }
        let interface_of = match kind {
            "cs" => Interface::CoSimulation,
            "me" => Interface::ModelExchange,
            other => return Err(Error::Error(format!("the state names no interface (`{other}`)"))),
        };
        if interface_of != interface {
            return Err(wrong_interface(interface_of, interface));
        }
        let initialized = match mode {
            "initialized" => true,
            "initializing" => false,
            other => return Err(Error::Error(format!("the state names no mode (`{other}`)"))),
        };
        Ok(FmuState {
            run,
            interface,
            initialized,
            bytes: OnceCell::from(bytes.to_vec()),
        })
    }
}

impl Instance {
    /// `fmi2GetFMUstate`: the state of the instance's run, once it has started.
    pub fn get_state(&mut self) -> Result<FmuState, Error> {
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error(match self.phase {
                Phase::Broken => "an earlier failure left the instance unusable; it has no state to get".into(),
                _ => "the FMU state is taken once the initialization has started".into(),
            }));
        };
        let state = running.with_dependent_mut(|_, run| match run {
            Run::Steps(run) => run.state(),
            Run::Exchange(run) => run.state(),
        });
        let mut run = state.map_err(|e| Error::Error(rendered(&e, &self.sources)))?;
        let kind = match self.interface {
            Interface::CoSimulation => "cs",
            Interface::ModelExchange => "me",
        };
        let mode = if self.initialized {
            "initialized"
        } else {
            "initializing"
        };
        run.set_label(format!("{} {kind} {mode}", self.token));
        Ok(FmuState {
            run,
            interface: self.interface,
            initialized: self.initialized,
            bytes: OnceCell::new(),
        })
    }

    /// `fmi2DeSerializeFMUstate`: the state `bytes` hold, if it is one of this FMU and
    /// interface.
    pub fn state_from_bytes(&self, bytes: &[u8]) -> Result<FmuState, Error> {
        let state = FmuState::from_bytes(bytes, &self.token, self.interface)?;
        let model = match &self.phase {
            Phase::Idle(model) => Some(&**model),
            Phase::Running(running) => Some(&running.borrow_owner().model),
            Phase::Broken => None,
        };
        if let Some(model) = model {
            model
                .check_state(&state.run)
                .map_err(|e| Error::Error(rendered(&e, &self.sources)))?;
        }
        Ok(state)
    }

    /// `fmi2SetFMUstate`: the instance continues from `state`. An instance whose run has not
    /// started (instantiated, or reset) starts it first from its current values.
    pub fn set_state(&mut self, state: &FmuState) -> Result<(), Error> {
        if state.interface != self.interface {
            return Err(wrong_interface(state.interface, self.interface));
        }
        if state.run.label().split(' ').next() != Some(self.token.as_str()) {
            return Err(Error::Error("the state is of another FMU".into()));
        }
        match self.phase {
            Phase::Idle(_) => self.enter_initialization()?,
            Phase::Broken => {
                return Err(Error::Error(
                    "an earlier failure left the instance unusable; reset it before setting a state".into(),
                ));
            }
            Phase::Running(_) => {}
        }
        let Phase::Running(running) = &mut self.phase else {
            return Err(Error::Error("the model is not running".into()));
        };
        let restored = running.with_dependent_mut(|_, run| match run {
            Run::Steps(run) => run.restore(&state.run).map(|()| run.terminated().map(|(t, _)| *t)),
            Run::Exchange(run) => run.restore(&state.run).map(|()| run.terminated().map(|(t, _)| *t)),
        });
        // A refused state leaves the run as it was.
        self.terminated_at = restored.map_err(|e| Error::Error(rendered(&e, &self.sources)))?;
        self.initialized = state.initialized;
        self.in_event_mode &= state.initialized;
        Ok(())
    }
}

fn wrong_interface(state: Interface, instance: Interface) -> Error {
    Error::Error(format!("the state is of an instance of {state:?}, not of {instance:?}"))
}
