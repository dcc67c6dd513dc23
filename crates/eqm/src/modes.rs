//! Runs of variable-structure models: one segment per mode, each with the program of that mode.
//!
//! Input: the flat model, its [`VariableStructure`] (from `eqm_compile::modes`) and the settings
//! of a run. Output: the rows of the whole run, handed to one sink, and one report; or the
//! error of the segment that failed (rows before it delivered). A mode's programs are analysed
//! and compiled the first time a run enters it and kept for later switches and runs; the mode a
//! run starts in is the one the start values suggest, corrected at the start when the consistent
//! initial values say otherwise (and, when that mode cannot even be initialized, the first other
//! mode that can). Each segment runs until a watched relation or Boolean variable changes at an
//! event; the next one starts there with every value carried over by name (the states as the
//! values its initialization assumes, the rest as first guesses) on the same output grid.
//! Nothing here reads files or prints.

use crate::results::{Column, RowSink};
use crate::run::RunError;
use eqm_compile::analysis::{self, AnalysisOptions, Compiled};
use eqm_compile::modes::{self, VariableStructure};
use eqm_diag::Diagnostic;
use eqm_diag::timing::Timings;
use eqm_ir::flat::FlatModel;
use eqm_ir::slot::Slot;
use eqm_sim::native::NativeCode;
use eqm_sim::simulate::{Backend, RunOptions, Summary, Watch};
use std::sync::Arc;

/// The most switches at one instant before the modes are declared inconsistent there: every
/// mode once, and once more.
fn switch_limit(atoms: usize) -> usize {
    (1usize << atoms.min(16)) + 2
}

/// How many switches within [`ACCUMULATION_SPAN`] (relative to the time) mean that the
/// structure does not settle: the modes take turns without time advancing.
const ACCUMULATING_SWITCHES: usize = 40;
const ACCUMULATION_SPAN: f64 = 1e-9;

/// The compiled program of one mode, for a run that starts (`resumed == false`) or one that
/// continues after a switch.
struct ModeProgram {
    key: Vec<bool>,
    resumed: bool,
    compiled: Compiled,
    /// The work slot watched for each atom.
    watched: Vec<u32>,
    native: Option<Option<Arc<NativeCode>>>,
    jacobian: bool,
    /// The warnings of this mode's analysis not yet reported (the first run that starts in
    /// it reports them; those of a resumed run concern start values it does not use).
    warnings: Vec<Diagnostic>,
}

/// A variable-structure model's modes; see the module documentation.
pub(crate) struct Modes {
    flat: FlatModel,
    structure: VariableStructure,
    options: AnalysisOptions,
    programs: Vec<ModeProgram>,
    /// The warnings the analysis of the whole model reported already (code and message).
    reported: Vec<(&'static str, String)>,
}

impl Modes {
    pub(crate) fn new(
        flat: FlatModel,
        structure: VariableStructure,
        options: AnalysisOptions,
        reported: &[Diagnostic],
    ) -> Modes {
        Modes {
            flat,
            structure,
            options,
            programs: Vec::new(),
            reported: reported.iter().map(|d| (d.code, d.message.clone())).collect(),
        }
    }

    pub(crate) fn structure(&self) -> &VariableStructure {
        &self.structure
    }

    /// The text of a mode for messages: `s > 1 false, s < -1 true`.
    fn describe(&self, key: &[bool]) -> String {
        self.structure
            .atoms
            .iter()
            .zip(key)
            .map(|(a, v)| format!("{} {}", a.text, v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The index of the program of mode `key`, analysed and compiled now if this is its first
    /// use; the diagnostics when the mode cannot be analysed or compiled.
    fn program(&mut self, key: &[bool], resumed: bool) -> Result<usize, Vec<Diagnostic>> {
        if let Some(i) = self.programs.iter().position(|p| p.key == key && p.resumed == resumed) {
            return Ok(i);
        }
        let flat = modes::specialize(&self.flat, &self.structure, key, resumed);
        let mut timings = Timings::default();
        let (analysis, mut warnings) = analysis::analyze(flat, &self.options, &mut timings)?;
        if resumed {
            warnings.clear();
        }
        warnings.retain(|w| {
            !self
                .reported
                .iter()
                .any(|(code, message)| *code == w.code && *message == w.message)
        });
        let watched_dummy = modes::watched_variables(&analysis.dae, &self.structure);
        let watched_embedding = analysis
            .embedding
            .as_ref()
            .map(|e| modes::watched_variables(&e.dae, &self.structure));
        let compiled = analysis::compile(analysis, &mut timings)?;
        let names = match (compiled.form.as_ref().is_some_and(|f| f.embedding), watched_embedding) {
            (true, Some(names)) => names,
            _ => watched_dummy,
        };
        let program = &compiled.program;
        let mut watched = Vec::new();
        for (atom, name) in self.structure.atoms.iter().zip(names) {
            match program.lookup(&name).and_then(|v| program.slot_of(v)) {
                Some(Slot::Work(w)) => watched.push(w),
                _ => {
                    return Err(vec![
                        Diagnostic::error(
                            "E0717",
                            format!(
                                "the structure of this model depends on `{}`, which its compiled program cannot watch",
                                atom.text
                            ),
                            program.model_span(),
                            "in this model",
                        )
                        .with_note("a run in this mode could not tell when the structure changes"),
                    ]);
                }
            }
        }
        self.programs.push(ModeProgram {
            key: key.to_vec(),
            resumed,
            compiled,
            watched,
            native: None,
            jacobian: false,
            warnings,
        });
        Ok(self.programs.len() - 1)
    }

    /// Runs `options` (start values and parameters included) through as many modes as it
    /// enters, writing `columns` to `sink`.
    pub(crate) fn simulate(
        &mut self,
        options: &RunOptions,
        columns: &[Column],
        sink: &mut dyn RowSink,
    ) -> Result<Summary, RunError> {
        if let Some(d) = self.flat_delay() {
            return Err(RunError::Model(Box::new(d)));
        }
        let names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
        let mut key = modes::initial_key(
            &self.flat,
            &self.structure,
            &options.params,
            &options.starts,
            options.start,
        );
        let mut time = options.start;
        let mut carried: Option<Vec<(String, f64)>> = None;
        let mut previous: Vec<(String, f64)> = Vec::new();
        let mut notes = Vec::new();
        let mut total: Option<Summary> = None;
        let mut at_this_time: Vec<Vec<bool>> = Vec::new();
        // The times of the latest switches, to notice switches that accumulate (each an
        // instant later than the last, so `at_this_time` never sees two at one time).
        let mut recent: std::collections::VecDeque<f64> = std::collections::VecDeque::new();
        let mut tried_at_start: Vec<Vec<bool>> = Vec::new();
        let mut first_error: Option<RunError> = None;
        loop {
            let resumed = carried.is_some();
            let failed = |diagnostics: Vec<Diagnostic>, modes: &Modes, key: &[bool]| {
                let mut diagnostics = diagnostics.into_iter();
                let first = diagnostics.next();
                RunError::Failed {
                    time,
                    message: format!("the model could not be analysed in the mode {}", modes.describe(key)),
                    diagnostic: first.map(Box::new),
                    warnings: diagnostics.collect(),
                }
            };
            let outcome = match self.program(&key, resumed) {
                Ok(index) => {
                    let resumed = carried.as_deref().map(|values| (values, previous.as_slice()));
                    self.run_segment(index, options, &key, time, resumed, &names, sink)
                }
                Err(d) => Err(Segment {
                    error: failed(d, self, &key),
                    rows: 0,
                }),
            };
            // A start in a mode that cannot be initialized: the first other mode that can be.
            let outcome = match outcome {
                Err(Segment { error, rows: 0 }) if !resumed && time == options.start => {
                    first_error.get_or_insert(error);
                    tried_at_start.push(key.clone());
                    match self.next_untried(&tried_at_start) {
                        Some(next) => {
                            notes.push(format!(
                                "t = {time}: the mode {} could not be initialized; trying {}",
                                self.describe(&key),
                                self.describe(&next)
                            ));
                            key = next;
                            continue;
                        }
                        None => return Err(first_error.expect("kept above")),
                    }
                }
                Err(Segment { error, .. }) => return Err(error),
                Ok(summary) => summary,
            };
            let switch = outcome.switched.clone();
            total = Some(match total {
                None => outcome,
                Some(t) => merge(t, outcome),
            });
            let Some(switch) = switch else { break };
            let mut new_key = switch.watched.clone();
            if switch.time != time {
                at_this_time.clear();
            }
            at_this_time.push(key.clone());
            let revisits = at_this_time.iter().filter(|k| **k == new_key).count();
            if at_this_time.len() > switch_limit(key.len()) {
                return Err(self.unsettled(switch.time, &at_this_time));
            }
            if revisits >= 2 {
                // The modes' own values lead round a cycle (sliding forward gives the
                // acceleration of sliding backward and the other way round): the event's mixed
                // system of Booleans and Reals is solved by a search instead, as Modelica's
                // mixed systems are, over the modes nearest to this one not tried at this
                // instant (a clutch that locks), each accepted only when its own values confirm it.
                match nearest_untried(&key, &at_this_time) {
                    Some(next) => new_key = next,
                    None => return Err(self.unsettled(switch.time, &at_this_time)),
                }
            }
            recent.push_back(switch.time);
            if recent.len() > ACCUMULATING_SWITCHES {
                recent.pop_front();
            }
            if recent.len() == ACCUMULATING_SWITCHES
                && switch.time - recent[0] <= ACCUMULATION_SPAN * switch.time.abs().max(1.0)
            {
                return Err(self.unsettled(switch.time, &[key.clone(), new_key.clone()]));
            }
            notes.push(format!(
                "t = {}: the structure changes from ({}) to ({})",
                switch.time,
                self.describe(&key),
                self.describe(&new_key)
            ));
            if switch.at_initialization && carried.is_none() {
                // Corrected at the start: the consistent initial values chose another mode,
                // which initializes from the model's own start values and initial equations,
                // unless it was tried there already. (A switch at the event right after the
                // initialization goes on from that event's values, as any other switch does.)
                tried_at_start.push(key.clone());
                if tried_at_start.contains(&new_key) {
                    return Err(first_error.unwrap_or_else(|| self.unsettled(options.start, &tried_at_start)));
                }
                key = new_key;
                continue;
            }
            key = new_key;
            time = switch.time;
            carried = Some(switch.values);
            previous = switch.previous;
        }
        let mut summary = total.expect("at least one segment ran");
        summary.events.notes.extend(notes);
        Ok(summary)
    }

    /// `E0712`: at `time` the structure switched through `modes` without settling.
    fn unsettled(&self, time: f64, modes: &[Vec<bool>]) -> RunError {
        let modes = modes
            .iter()
            .map(|k| format!("({})", self.describe(k)))
            .collect::<Vec<_>>()
            .join(", ");
        RunError::Failed {
            time,
            message: format!("no mode is consistent at t = {time}: the structure switches between {modes}"),
            diagnostic: Some(Box::new(
                Diagnostic::error(
                    "E0712",
                    format!("the structure of the model does not settle at t = {time}"),
                    self.structure
                        .equations
                        .first()
                        .map_or(self.flat.instances[0].span, |(s, _)| *s),
                    "its branches depend on relations that contradict each other here",
                )
                .with_note(format!("the modes tried: {modes}"))
                .with_help("check that the branches of this equation agree where their conditions change"),
            )),
            warnings: Vec::new(),
        }
    }

    /// `E0717` for a `delay` or `spatialDistribution` in the model: its history would be lost
    /// at each switch of program.
    fn flat_delay(&self) -> Option<Diagnostic> {
        use eqm_ir::builtins::Builtin;
        let arena = &self.flat.exprs;
        let used = (0..arena.len()).find_map(|i| match arena.get(eqm_ir::expr::ExprId(i as u32)) {
            eqm_ir::expr::Node::Call(
                eqm_ir::expr::Callee::Builtin(b @ (Builtin::Delay | Builtin::SpatialDistribution)),
                _,
            ) => Some(*b),
            _ => None,
        });
        used.map(|b| {
            let message = match b {
                Builtin::Delay => "`delay` is not supported in a variable-structure model: its history would be lost where the structure changes",
                _ => "`spatialDistribution` is not supported in a variable-structure model: its profile would be lost where the structure changes",
            };
            Diagnostic::error(
                "E0717",
                message,
                self.structure.equations.first().map_or(self.flat.instances[0].span, |(s, _)| *s),
                "the structure of this equation depends on the branch taken",
            )
        })
    }

    /// The first mode not in `tried`, in the order of the keys, when there are few enough modes
    /// to try them all (at most 2^6).
    fn next_untried(&self, tried: &[Vec<bool>]) -> Option<Vec<bool>> {
        let n = self.structure.atoms.len();
        if n > 6 {
            return None;
        }
        (0..1u32 << n)
            .map(|bits| (0..n).map(|k| bits & (1 << k) != 0).collect::<Vec<bool>>())
            .find(|key| !tried.contains(key))
    }

    /// One segment in mode program `index` from `time`, with the values `carried` over from
    /// the previous segment and the `pre` values of the pass that switched (or the run's own
    /// start values).
    #[allow(clippy::too_many_arguments)]
    fn run_segment(
        &mut self,
        index: usize,
        options: &RunOptions,
        key: &[bool],
        time: f64,
        carried: Option<(&[Named], &[Named])>,
        names: &[String],
        sink: &mut dyn RowSink,
    ) -> Result<Summary, Segment> {
        let description = self.describe(key);
        let mode = &mut self.programs[index];
        let mut segment = options.clone();
        segment.start = time;
        segment.origin = Some(options.start);
        if let Some((values, _)) = carried {
            // The parameters the first initialization computed keep their values; the rest
            // are start values.
            let program = &mode.compiled.program;
            let is_parameter = |name: &str| {
                program
                    .lookup(name)
                    .is_some_and(|v| matches!(program.slot_of(v), Some(Slot::Param(_))))
            };
            let (parameters, starts): (Vec<Named>, Vec<Named>) =
                values.iter().cloned().partition(|(name, _)| is_parameter(name));
            segment
                .params
                .retain(|(name, _)| !parameters.iter().any(|(p, _)| p == name));
            segment.params.extend(parameters);
            segment.starts = starts
                .into_iter()
                .filter(|(name, value)| eqm_sim::instance::check_start_value(program, name, *value).is_ok())
                .collect();
        }
        segment.watch = Watch {
            values: mode
                .watched
                .iter()
                .zip(key)
                .map(|(&slot, &value)| (slot, value))
                .collect(),
            resume: carried.is_some(),
            previous: carried.map_or_else(Vec::new, |(_, previous)| previous.to_vec()),
        };
        if !mode.jacobian {
            eqm_sim::simulate::prepare(&mut mode.compiled.program, &segment);
            mode.jacobian = true;
        }
        let native = match segment.backend {
            Backend::Auto => mode
                .native
                .get_or_insert_with(|| NativeCode::compile(&mode.compiled.program).map(Arc::new))
                .clone(),
            Backend::Interpreter => None,
        };
        // The columns come from the analysis with every branch: a derivative this mode's index
        // reduction did not introduce is written as NaN here, with a warning naming it.
        let (slots, missing) = eqm_sim::simulate::mode_columns(&mode.compiled.program, names);
        let mut warnings = std::mem::take(&mut mode.warnings);
        if !missing.is_empty() {
            let shown: Vec<String> = missing.iter().take(4).map(|n| format!("`{n}`")).collect();
            let more = missing.len().saturating_sub(shown.len());
            warnings.push(
                Diagnostic::warning(
                    "W0703",
                    format!(
                        "the mode ({description}) does not compute {}{}: written as NaN from t = {time} while the run is in it",
                        shown.join(", "),
                        if more > 0 { format!(" and {more} more") } else { String::new() }
                    ),
                    mode.compiled.program.model_span(),
                    "in this model",
                )
                .with_help("the other modes compute them; `--vars` chooses the columns of a run"),
            );
        }
        let mut forward = crate::results::ForwardSink { sink, rows: 0 };
        let result = eqm_sim::simulate::simulate_with(
            &mode.compiled.program,
            mode.compiled.init.as_ref(),
            &segment,
            &slots,
            native,
            &mut forward,
        );
        let rows = forward.rows;
        result
            .map(|mut summary| {
                summary.warnings.splice(0..0, warnings);
                summary
            })
            .map_err(|error| Segment { error, rows })
    }
}

/// The most atoms of another value than the current mode's that [`nearest_untried`] changes.
const MOST_FLIPPED: usize = 3;

/// The mode nearest to `key` that is not in `tried`: the fewest atoms of another value (at most
/// [`MOST_FLIPPED`]), the first atoms first.
fn nearest_untried(key: &[bool], tried: &[Vec<bool>]) -> Option<Vec<bool>> {
    let mut flips = Vec::new();
    (1..=key.len().min(MOST_FLIPPED)).find_map(|count| with_flips(key, tried, count, 0, &mut flips))
}

/// The first mode not in `tried` that differs from `key` in `count` atoms, those in `flips` and
/// others from atom `from` on.
fn with_flips(
    key: &[bool],
    tried: &[Vec<bool>],
    count: usize,
    from: usize,
    flips: &mut Vec<usize>,
) -> Option<Vec<bool>> {
    if flips.len() == count {
        let mut next = key.to_vec();
        for &i in flips.iter() {
            next[i] = !next[i];
        }
        return (!tried.contains(&next)).then_some(next);
    }
    for i in from..key.len() {
        flips.push(i);
        let found = with_flips(key, tried, count, i + 1, flips);
        flips.pop();
        if found.is_some() {
            return found;
        }
    }
    None
}

/// A value by the name of its variable.
type Named = (String, f64);

/// A segment that failed, and how many rows it wrote before.
struct Segment {
    error: RunError,
    rows: usize,
}

/// The summary of two consecutive segments as one run's.
fn merge(mut a: Summary, b: Summary) -> Summary {
    a.rows += b.rows;
    a.stats.steps += b.stats.steps;
    a.stats.rejected += b.stats.rejected;
    a.stats.rhs_evals += b.stats.rhs_evals;
    a.stats.jacobians += b.stats.jacobians;
    a.stats.symbolic_jacobians += b.stats.symbolic_jacobians;
    a.stats.sparse_jacobians += b.stats.sparse_jacobians;
    a.stats.factorizations += b.stats.factorizations;
    a.events.events += b.events.events;
    a.events.notes.extend(b.events.notes);
    a.events.warnings.extend(b.events.warnings);
    a.solver_notes.extend(b.solver_notes);
    a.warnings.extend(b.warnings);
    a.events.printed.extend(b.events.printed);
    a.stopped_at = b.stopped_at;
    a.terminated = b.terminated;
    a.switched = b.switched;
    a.invariants = b.invariants.or(a.invariants);
    a
}
