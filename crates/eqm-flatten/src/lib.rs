//! Instantiation and flattening: a class becomes one flat model.
//!
//! Input: a [`ClassTable`] and the name of the model to simulate. Output: a [`FlatModel`] with
//! scalar variables and equations (each with origin and span), connection sets, when-clauses and
//! assertions, plus diagnostics (`E02xx` names, `E03xx` instantiation and connections, `E04xx`
//! balance). Components are instantiated on demand, so declaration order never matters;
//! structural parameters (array sizes, for ranges, parameter-only if conditions) are evaluated at
//! compile time. This stage deliberately does no symbolic simplification and no alias
//! elimination: the flat model shows the equations exactly as the model produces them.
//!
//! The crate root holds the entry points and the `Flattener` state; each job has its module:
//! class layouts, instances and their members (`layout`), what a declared element becomes
//! (`instantiate`), variables with the modifiers applied to them (`variables`), expressions
//! (`eval`, with references in `names` and calls in `calls`), equations (`equations`),
//! connection sets (`connect`), user functions (`functions`) and algorithm statements
//! (`statements`), compile-time evaluation (`consteval`), data files read at compile time
//! (`datafiles`), the experiment annotation (`experiment`) and the balance check (`balance`).
//! `diagram` gives, instead of the flat model, the model's component diagram, from the same
//! instances and connects.

pub mod diagram;
pub mod resolve;
pub mod sources;
pub mod stdlib;

mod balance;
mod calls;
mod connect;
mod consteval;
mod datafiles;
mod enumerations;
mod equations;
mod eval;
mod experiment;
mod functionals;
mod functions;
mod instantiate;
mod iterators;
mod layout;
mod modifier;
mod names;
mod records;
mod redeclare;
mod statements;
mod value;
mod variables;

pub use datafiles::{DataFiles, ReadFile};
pub use sources::Sources;

use crate::resolve::{ClassId, ClassTable};
use eqm_diag::Diagnostic;
use eqm_ir::expr::FxHashMap;
use eqm_ir::flat::{self, FlatModel, ScalarType};
use eqm_syntax::ast;
use experiment::experiment;
use instantiate::ResolvedType;
use layout::{ClassLayout, InstanceState, Member};
use modifier::{Modifier, Scope};
use names::Target;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use value::Value;
use variables::VarKind;

/// Settings that change the flat model without editing files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--param NAME=VALUE` overrides of top-level parameters; of a name given twice, the last
    /// value counts.
    pub parameters: Vec<(String, f64)>,
    /// How the data files a model names (`readMatrix`) are read, and the source file names
    /// that relative paths start from: filled in by [`Sources::flatten`].
    pub data_files: DataFiles,
    /// Leave out the check that the whole model has as many equations as unknowns (`E0401`):
    /// the check of a component class, which is not simulated alone, judges its local balance
    /// instead and needs the flat model to count it.
    pub skip_balance_check: bool,
}

/// Flattens `model`. Returns the model when no error was found, and all diagnostics.
pub fn flatten(table: &ClassTable<'_>, model: &str, options: &Options) -> (Option<FlatModel>, Vec<Diagnostic>) {
    run_flattener(table, model, options, false, |f| f.model)
}

/// Flattens `model` and, when no error was found, hands the finished flattener to `finish` for
/// its product (the flat model, or the diagram); returns that product and all diagnostics.
/// `record_root_connects` makes the flattener keep the connects written in the model's own
/// class (see [`diagram`]), which flattening alone does not need.
fn run_flattener<'t, 'a, T>(
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
    f.root_connects = record_root_connects.then(Vec::new);
    f.run();
    let mut diagnostics = std::mem::take(&mut f.diagnostics);
    // A declaration is evaluated for every element of an array and every instance of its
    // class, so the same error can be found many times; it is reported once.
    let mut seen = std::collections::HashSet::new();
    diagnostics.retain(|d| seen.insert((d.code, d.message.clone(), d.labels.first().map(|l| l.span))));
    let ok = !eqm_diag::has_errors(&diagnostics);
    (ok.then(|| finish(f)), diagnostics)
}

/// Names the single top-level model among the user's classes, for commands without `--model`.
pub fn default_model(files: &[&ast::StoredDefinition]) -> Result<String, Vec<String>> {
    let candidates: Vec<String> = files
        .iter()
        .flat_map(|f| &f.classes)
        .filter(|c| {
            matches!(
                c.kind,
                ast::ClassKind::Model | ast::ClassKind::Block | ast::ClassKind::Class
            ) && !c.partial
        })
        .map(|c| c.name.name.clone())
        .collect();
    if candidates.len() == 1 {
        Ok(candidates[0].clone())
    } else {
        Err(candidates)
    }
}

/// What a function instance is made for: its class, the sizes of the arguments of its inputs
/// declared with `:`, and the functions passed to its functional inputs.
type FunctionKey = (ClassId, Vec<Vec<usize>>, Vec<functionals::FunctionalKey>);

pub(crate) struct Flattener<'t, 'a> {
    table: &'t ClassTable<'a>,
    root_class: ClassId,
    options: &'t Options,
    pub(crate) model: FlatModel,
    pub(crate) diagnostics: Vec<Diagnostic>,
    instances: Vec<InstanceState<'a>>,
    /// The members of all instances, each instance's in one run: one vector instead of a small
    /// one per instance.
    members: Vec<Member>,
    /// Full class names by class id, shared by the instances of a class.
    class_names: Vec<Option<Arc<str>>>,
    /// Descriptions and units, one shared copy per text of the source, keyed by the text's
    /// address and length: every instance of a class shares its declarations' texts, and a
    /// pointer hashes faster than the text.
    strings: FxHashMap<(*const u8, usize), Arc<str>>,
    /// Layouts by class id, once collected without errors.
    layouts: Vec<Option<Rc<ClassLayout<'a>>>>,
    /// Resolved `connect` equations, turned into connection sets after instantiation.
    connects: Vec<connect::ResolvedConnect>,
    /// The scalar pairs of all connects.
    connect_pairs: Vec<connect::ConnectPair>,
    /// What connecting needs of each variable, by `VarId`: a few bytes each instead of the
    /// whole `flat::Variable`, so that connecting a large model reads a small array that stays in
    /// the cache rather than one cache line per variable.
    var_kinds: Vec<VarKind>,
    consts: consteval::ConstCache,
    /// Expressions whose compile-time values shaped the flat model (see
    /// [`FlatModel::structural`]).
    structural_roots: Vec<eqm_ir::expr::ExprId>,
    package_constants: BTreeMap<(ClassId, String), Option<Value>>,
    /// Set once the flat model has been reported as too large (E0316), so that the loops and
    /// components past the limit do not each report it again.
    too_large_reported: bool,
    used_overrides: Vec<bool>,
    /// Functions instantiated so far (`None`: its declaration has errors).
    /// Keyed by the class, the sizes of the arguments of its inputs declared with `:` and the
    /// functions passed to its functional inputs: such a function is instantiated once per
    /// combination it is called with.
    function_ids: BTreeMap<FunctionKey, Option<eqm_ir::expr::FuncId>>,
    /// Caller-side interfaces, indexed like `model.functions`.
    signatures: Vec<functions::Signature>,
    /// Local names of the function bodies being flattened (innermost last).
    frames: Vec<functions::Frame>,
    /// Resolved component types by (scope, the type name's node in the AST): every instance of
    /// a class resolves the same declarations, so a chain of 10^5 masses resolves `Units.Mass`
    /// once. Shared (`Rc`), so that a lookup copies no modifier or name. Only used for lookups,
    /// never iterated.
    type_cache: FxHashMap<(ClassId, *const ast::Name), Option<Rc<ResolvedType<'a>>>>,
    /// Reused by [`Self::flatten_equation`] for the flat equations of one equation.
    equation_buffer: Vec<flat::Equation>,
    /// The attributes of a variable before they are known: empty, and shared.
    no_attributes: flat::Attributes,
    /// See [`Self::share_attributes`].
    recent_attributes: Vec<Option<flat::Attributes>>,
    /// Iterators of array constructors and reductions bound to values (innermost last).
    iterators: Vec<iterators::BoundIterator>,
    /// The sizes of the dimensions whose subscripts are being evaluated (innermost last): what
    /// `end` stands for.
    end_sizes: Vec<usize>,
    /// Whether any class is replaceable: only then may a class name denote different classes
    /// in different instances (see `redeclare`).
    has_replaceable_classes: bool,
    /// The (new class, constraining class, redeclaration's offset) already checked by
    /// `check_subtype`: a redeclaration applied to every element of an array is checked once.
    subtypes_checked: std::collections::BTreeSet<(ClassId, ClassId, u32)>,
    /// Element redeclarations already checked (by their declaration's address).
    redeclarations_checked: std::collections::HashSet<*const ast::ComponentDecl>,
    /// How many connects name each connector (`cardinality`): counted only once a class
    /// calling `cardinality` is instantiated. Its connectors are connected in its own equations
    /// or in those of the enclosing class, both flattened after it, so no connect is missed.
    connector_uses: Option<FxHashMap<Target, u32>>,
    /// The equations calling `cardinality`, flattened after all others (see
    /// [`layout::ClassLayout::counting_equations`]).
    counting_equations: Vec<(&'a ast::Equation, Scope, bool)>,
    /// Set while they are flattened: only then is `cardinality` known, and a `connect` wrong.
    counting: bool,
    /// The data files `readMatrix` has read so far.
    data_files_read: datafiles::ReadFiles,
    /// The connects written in the model's own class (and its base classes), kept only when a
    /// diagram is asked for ([`diagram::diagram`]); `None` otherwise, so flattening pays nothing.
    root_connects: Option<Vec<diagram::RootConnect>>,
    /// The functions given to functional parameters, indexed by `Member::Function`.
    functional_parameters: Vec<functionals::FunctionalParameter<'a>>,
    /// How many bodies of functional parameters are being evaluated, one inside another.
    lambda_depth: usize,
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
            class_names: vec![None; table.classes.len()],
            strings: FxHashMap::default(),
            layouts: vec![None; table.classes.len()],
            connects: Vec::new(),
            connect_pairs: Vec::new(),
            var_kinds: Vec::new(),
            consts: consteval::ConstCache::default(),
            structural_roots: Vec::new(),
            package_constants: BTreeMap::new(),
            too_large_reported: false,
            used_overrides: vec![false; options.parameters.len()],
            function_ids: BTreeMap::new(),
            signatures: Vec::new(),
            frames: Vec::new(),
            iterators: Vec::new(),
            end_sizes: Vec::new(),
            type_cache: FxHashMap::default(),
            equation_buffer: Vec::new(),
            no_attributes: flat::Attributes::default(),
            recent_attributes: vec![None; 256],
            has_replaceable_classes: table.classes.iter().any(|c| c.def.redeclarable.replaceable),
            subtypes_checked: std::collections::BTreeSet::new(),
            redeclarations_checked: std::collections::HashSet::new(),
            connector_uses: None,
            counting_equations: Vec::new(),
            counting: false,
            data_files_read: datafiles::ReadFiles::new(),
            root_connects: None,
            functional_parameters: Vec::new(),
            lambda_depth: 0,
        }
    }

    fn run(&mut self) {
        let entry = self.table.get(self.root_class);
        if matches!(
            entry.def.kind,
            ast::ClassKind::Package | ast::ClassKind::Function | ast::ClassKind::Type
        ) {
            self.diagnostics.push(Diagnostic::error(
                "E0211",
                format!("`{}` is a {}, not a model", entry.full_name, entry.def.kind.keyword()),
                entry.def.name.span,
                "cannot be simulated",
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
        // Every connect is known now, so `cardinality` is.
        self.counting = true;
        for (eq, scope, initial) in std::mem::take(&mut self.counting_equations) {
            self.flatten_equation(eq, scope, &mut Vec::new(), initial);
        }
        self.counting = false;
        if eqm_diag::has_errors(&self.diagnostics) {
            return;
        }
        self.build_connection_sets();
        self.evaluate_parameter_values();
        self.model.structural = self.structural_parameters();
        if !eqm_diag::has_errors(&self.diagnostics) && !self.options.skip_balance_check {
            balance::check(self);
        }
    }
}

pub(crate) fn types_compatible(expected: ScalarType, actual: ScalarType) -> bool {
    expected == actual || (expected == ScalarType::Real && actual == ScalarType::Integer)
}

pub(crate) fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Real => "Real",
        ScalarType::Integer => "Integer",
        ScalarType::Boolean => "Boolean",
        ScalarType::String => "String",
    }
}
