//! The flattener: the state of one flattening and its two steps, instantiation and the passes
//! after it.
//!
//! Input: a [`ClassTable`], the model's class and the [`Options`]. Output: the flattener after
//! its run, whose `model` is the flat model and whose `diagnostics` are what it found. The
//! state is split by concern into owned parts, each a type of the module that holds it and
//! knows nothing of the flattener: the function table (`function_table`), the evaluation
//! context (`eval_context`), the connection state (`connections`), the shared caches and the
//! redeclarations checked (`caches`), the instances and their members (`layout`).
//! The work itself is done by the `impl Flattener` blocks of the job modules; this module only
//! holds the state, starts the run and orders its passes. It deliberately does not turn the
//! flattener into a product (the flat model or the diagram): its callers do.

use crate::caches::{Caches, Redeclarations};
use crate::connections::ConnectionState;
use crate::consteval::ConstCache;
use crate::datafiles::{DataFiles, ReadFiles};
use crate::eval_context::EvalContext;
use crate::experiment::experiment;
use crate::function_table::FunctionTable;
use crate::function_table::FunctionalParameter;
use crate::layout::{InstanceState, Member, VarKind};
use crate::modifier::Modifier;
use crate::resolve::{ClassId, ClassTable};
use eqm_diag::Diagnostic;
use eqm_ir::expr::ExprId;
use eqm_ir::flat::{self, FlatModel};
use eqm_syntax::ast;

/// Settings that change the flat model without editing files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--param NAME=VALUE` overrides of top-level parameters; of a name given twice, the last
    /// value counts.
    pub parameters: Vec<(String, f64)>,
    /// How the data files a model names (`readMatrix`) are read, and the source file names
    /// that relative paths start from: filled in by [`Sources::flatten`](crate::Sources::flatten).
    pub data_files: DataFiles,
    /// Leave out the check that the whole model has as many equations as unknowns (`E0401`):
    /// the check of a component class, which is not simulated alone, judges its local balance
    /// instead and needs the flat model to count it.
    pub skip_balance_check: bool,
    /// How external C functions are compiled and linked: filled in by
    /// [`Sources::flatten`](crate::Sources::flatten) from [`Sources::linker`](crate::Sources::linker);
    /// without one, a model calling an external function other than the C math library's is
    /// rejected with the reason.
    pub external: Option<std::sync::Arc<dyn eqm_ir::external::LinkExternal>>,
}

/// Flattens `model` and, when no error was found, hands the finished flattener to `finish` for
/// its product (the flat model, or the diagram); returns that product and all diagnostics.
/// `record_root_connects` makes the flattener keep the connects written in the model's own
/// class (see [`diagram`](crate::diagram::diagram)), which flattening alone does not need.
pub(crate) fn run_flattener<'t, 'a, T>(
    table: &'t ClassTable<'a>,
    model: &str,
    options: &'t Options,
    record_root_connects: bool,
    finish: impl FnOnce(Flattener<'t, 'a>) -> T,
) -> (Option<T>, Vec<Diagnostic>) {
    let Some(class) = table.find(model) else {
        let names = table.all_names();
        let last = model.rsplit('.').next().unwrap_or(model);
        // A class with the same last name (`Mechanics.Translational.Mass` for the
        // `Mechanics.Translational.Components.Mass` of the library) is the likelier meaning than
        // a name a few letters away, which may be its package.
        let same_last: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| n.rsplit('.').next() == Some(last))
            .collect();
        let suggestion = eqm_diag::did_you_mean(model, same_last.iter().copied())
            .or_else(|| same_last.first().copied())
            .or_else(|| eqm_diag::did_you_mean(model, names.iter().copied()));
        let mut d = Diagnostic {
            code: "E0201",
            severity: eqm_diag::Severity::Error,
            message: format!("no model named `{model}`"),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        };
        if let Some(s) = suggestion {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        return (None, vec![d]);
    };
    let mut f = Flattener::new(table, class, options);
    f.connections.root_connects = record_root_connects.then(Vec::new);
    f.run();
    let mut diagnostics = std::mem::take(&mut f.diagnostics);
    if f.too_large_reported {
        // Past a limit the model is only partly built: a connect, a balance or a lookup that
        // reads a part never built would report an error that is not in the model.
        diagnostics.truncate(f.diagnostics_at_limit);
    }
    // A declaration is evaluated for every element of an array and every instance of its
    // class, so the same error can be found many times; it is reported once.
    let mut seen = std::collections::HashSet::new();
    diagnostics.retain(|d| seen.insert((d.code, d.message.clone(), d.labels.first().map(|l| l.span))));
    // A flattening that stopped at an unread library class made no model: the caller reads
    // the class and flattens again.
    let ok = !eqm_diag::has_errors(&diagnostics) && !table.has_requests();
    (ok.then(|| finish(f)), diagnostics)
}

/// The state of one flattening. The fields that belong to one concern are grouped in a part
/// owned here and defined in the module that does that job.
pub(crate) struct Flattener<'t, 'a> {
    pub(crate) table: &'t ClassTable<'a>,
    pub(crate) root_class: ClassId,
    pub(crate) options: &'t Options,
    pub(crate) model: FlatModel,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) instances: Vec<InstanceState<'a>>,
    /// The members of all instances, each instance's in one run: one vector instead of a small
    /// one per instance.
    pub(crate) members: Vec<Member>,
    /// Class names, texts, layouts, resolved types and package constants, each computed once.
    pub(crate) caches: Caches<'a>,
    /// Connects, their scalar pairs and what `cardinality` counts.
    pub(crate) connections: ConnectionState<'a>,
    /// The expandable connectors and the connects that involve them.
    pub(crate) expandable: crate::connections::ExpandableState,
    /// The `inStream` and `actualStream` calls met so far.
    pub(crate) streams: crate::connections::StreamState,
    /// What connecting needs of each variable, by `VarId`: a few bytes each instead of the
    /// whole `flat::Variable`, so that connecting a large model reads a small array that stays in
    /// the cache rather than one cache line per variable.
    pub(crate) var_kinds: Vec<VarKind>,
    pub(crate) consts: ConstCache,
    /// Expressions whose compile-time values shaped the flat model (see
    /// [`FlatModel::structural`]).
    pub(crate) structural_roots: Vec<ExprId>,
    /// The if-equations (place and chosen branch) whose choice at translation is recorded
    /// already, so that each is told once.
    pub(crate) branch_choices_seen: std::collections::HashSet<(eqm_diag::source::Span, usize)>,
    /// Set once the flat model has been reported as too large (E0316). From then on nothing
    /// more is instantiated or flattened: the loops and components past the limit would each
    /// report it again, and every later check would read a model that was only partly built.
    pub(crate) too_large_reported: bool,
    /// The number of diagnostics when the limit was reported (meaningful once
    /// `too_large_reported` is set): what is reported after it is about the parts of the model
    /// that were never built, so it is dropped.
    pub(crate) diagnostics_at_limit: usize,
    /// Which `--param` overrides named a parameter, by their index in the options.
    pub(crate) used_overrides: Vec<bool>,
    /// The conditions under which the equations being flattened hold: one per enclosing
    /// branch of an if-equation decided during the run (that branch's condition, and that no
    /// earlier one holds). An assertion written there is checked only where they all hold.
    pub(crate) branch_guards: Vec<ExprId>,
    /// How many branches of if-equations chosen at translation enclose the equations being
    /// flattened: there a conditional component present under the branch's condition may be
    /// read (`if useHeatPort then T = heatPort.T;`).
    pub(crate) chosen_branches: u32,
    /// The functions instantiated so far and their callers' interfaces.
    pub(crate) functions: FunctionTable,
    /// Local names, bound iterators and `end` sizes of what is being evaluated.
    pub(crate) context: EvalContext,
    /// Reused by [`Self::flatten_equation`] for the flat equations of one equation.
    pub(crate) equation_buffer: Vec<flat::Equation>,
    /// Which redeclarations were checked, and whether any class is replaceable.
    pub(crate) redeclarations: Redeclarations,
    /// The data files `readMatrix` has read so far.
    pub(crate) data_files_read: ReadFiles,
    /// The text files `Streams.readLine` and `Streams.countLines` have read so far.
    pub(crate) text_files_read: crate::datafiles::TextFilesRead,
    /// The functions given to functional parameters, indexed by `Member::Function`.
    pub(crate) functional_parameters: Vec<FunctionalParameter<'a>>,
    /// Start values that read the array being instantiated (`Real a[2](start = {a[2] + 1,
    /// 2})`), and bindings of variables that read the variable itself (`Real x = f(x)`, an
    /// equation), evaluated once its member is complete (see `Self::ensure_member_at`): for a
    /// binding, with the variable's variability.
    pub(crate) deferred_starts: Vec<crate::modifier::LateBinding<'a>>,
    /// The literal names of each variable of an enumeration type, for `String(v)`.
    pub(crate) enumeration_names: eqm_ir::expr::FxHashMap<eqm_ir::expr::VarId, std::sync::Arc<[String]>>,
    /// The inner elements added for outer elements without one, by name (see `inner_outer`).
    pub(crate) automatic_inners: eqm_ir::expr::FxHashMap<String, crate::layout::AutomaticInner>,
    /// Set just before an outer element is instantiated as the automatic inner element itself,
    /// and taken by that instantiation.
    pub(crate) automatic_inner_next: bool,
    /// The inner declarations of `inner outer` elements, by the element's member slot (whose
    /// member is the outer declaration), made when an outer element below first needs one.
    pub(crate) inner_parts: eqm_ir::expr::FxHashMap<usize, crate::layout::Member>,
    /// The variables bound to a field of a whole record's value (`cellData[i] = if c then a else
    /// b`), whose binding's variability is the record's, not the field's declaration's.
    pub(crate) record_field_bindings: eqm_ir::expr::FxHashSet<eqm_ir::expr::VarId>,
    /// The components being made, innermost last: the instance declaring each, its name and
    /// its sizes, which `size(x, k)` in x's own binding reads (`Real x[2, 3] = ones(size(x,
    /// 1), size(x, 2))`) before x exists.
    pub(crate) declaring: Vec<(eqm_ir::flat::InstanceId, &'a str, Vec<usize>)>,
}

impl<'t, 'a> Flattener<'t, 'a> {
    fn new(table: &'t ClassTable<'a>, root_class: ClassId, options: &'t Options) -> Self {
        Flattener {
            table,
            root_class,
            options,
            model: FlatModel {
                name: table.get(root_class).full_name.clone(),
                ..FlatModel::default()
            },
            diagnostics: Vec::new(),
            instances: Vec::new(),
            members: Vec::new(),
            caches: Caches::new(table.classes.len()),
            connections: ConnectionState::default(),
            expandable: Default::default(),
            streams: Default::default(),
            var_kinds: Vec::new(),
            consts: ConstCache::default(),
            structural_roots: Vec::new(),
            branch_choices_seen: std::collections::HashSet::new(),
            too_large_reported: false,
            diagnostics_at_limit: 0,
            used_overrides: vec![false; options.parameters.len()],
            branch_guards: Vec::new(),
            chosen_branches: 0,
            functions: FunctionTable::default(),
            context: EvalContext::default(),
            equation_buffer: Vec::new(),
            redeclarations: Redeclarations::new(table),
            data_files_read: ReadFiles::new(),
            text_files_read: Default::default(),
            functional_parameters: Vec::new(),
            deferred_starts: Vec::new(),
            enumeration_names: Default::default(),
            automatic_inners: Default::default(),
            inner_parts: Default::default(),
            record_field_bindings: Default::default(),
            automatic_inner_next: false,
            declaring: Vec::new(),
        }
    }

    /// Whether flattening stops where it is: past a limit of the model's size (see `limits`),
    /// or once a lookup reached a library class not read yet (the caller reads it and flattens
    /// again, so the rest would be done twice, and stopping at the first such class keeps each
    /// repeated round short).
    pub(crate) fn stopped(&self) -> bool {
        self.too_large_reported || self.table.has_requests()
    }

    fn run(&mut self) {
        let entry = self.table.get(self.root_class);
        if matches!(
            entry.def.kind,
            ast::ClassKind::Package
                | ast::ClassKind::Function
                | ast::ClassKind::Type
                | ast::ClassKind::Operator
                | ast::ClassKind::OperatorFunction
        ) {
            self.diagnostics.push(Diagnostic::error(
                "E0211",
                format!("`{}` is a {}, not a model", entry.full_name, entry.def.kind.keyword()),
                entry.def.name.span,
                "cannot be simulated",
            ));
            return;
        }
        if self.table.is_partial(self.root_class) {
            self.diagnostics.push(Diagnostic::error(
                "E0211",
                format!(
                    "`{}` is partial: it is a base for other classes, not a model to simulate",
                    entry.full_name
                ),
                entry.def.name.span,
                "partial class",
            ));
            return;
        }
        let root = self.new_instance(
            String::new(),
            self.root_class,
            None,
            entry.def.name.span,
            Modifier::default(),
            flat::Variability::Continuous,
            flat::Causality::None,
            false,
        );
        self.model.experiment = experiment(entry.def, &mut self.diagnostics);
        self.instantiate(root);
        self.complete_shells();
        if self.stopped() {
            return;
        }
        self.elaborate_expandable();
        for (i, (name, _)) in self.options.parameters.iter().enumerate() {
            if !self.used_overrides[i] {
                self.diagnostics.push(Diagnostic {
                    code: "E0209",
                    severity: eqm_diag::Severity::Error,
                    message: format!("`--param {name}` names no parameter of `{}`", self.model.name),
                    labels: Vec::new(),
                    notes: Vec::new(),
                    help: eqm_diag::did_you_mean(
                        name,
                        self.model
                            .variables
                            .iter()
                            .filter(|v| v.variability == flat::Variability::Parameter)
                            .map(|v| v.name.as_str()),
                    )
                    .map(|s| format!("did you mean `{s}`?")),
                });
            }
        }
        // Every connect is known now, so `cardinality` is, and the connection graph can be cut.
        self.cut_connection_graph();
        self.connections.counting = true;
        self.finish_counting_bindings();
        for mut late in std::mem::take(&mut self.connections.counting_equations) {
            self.flatten_equation(late.equation, late.scope, &mut late.loops, late.initial);
        }
        self.connections.counting = false;
        if eqm_diag::has_errors(&self.diagnostics) {
            return;
        }
        self.build_connection_sets();
        self.build_stream_equations();
        // A connector already reported (a stream connector without its one flow) is not
        // reported again for its sizes.
        if !eqm_diag::has_errors(&self.diagnostics) {
            self.check_connector_sizes();
        }
        self.check_object_uses();
        self.check_printing_calls();
        self.check_binding_variability();
        self.check_delay_variability();
        self.check_discrete_reals();
        self.check_block_connectors();
        if eqm_diag::has_errors(&self.diagnostics) {
            return;
        }
        self.evaluate_parameter_values();
        self.check_fixed_pairs();
        self.model.structural = self.structural_parameters();
        if !eqm_diag::has_errors(&self.diagnostics) && !self.options.skip_balance_check {
            self.check_balance();
        }
        if !eqm_diag::has_errors(&self.diagnostics) {
            self.warn_parameters_without_value();
        }
    }
}
