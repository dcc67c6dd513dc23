//! The table of every diagnostic code (see the parent module for what a code is), kept apart
//! from the types that describe it because it grows with every new diagnostic.

use super::Stage::*;
use super::{CodeInfo, code};
use crate::Severity::{Error, Warning};

/// Every diagnostic code, sorted by code (string order), each exactly once.
pub static CODES: &[CodeInfo] = &[
    code(
        "E0101",
        Error,
        Syntax,
        "Invalid character or token, such as `$` or an empty quoted identifier `''`",
    ),
    code(
        "E0102",
        Error,
        Syntax,
        "Malformed string literal: a string that is never closed, or an unknown escape sequence in a string",
    ),
    code(
        "E0103",
        Error,
        Syntax,
        "A block comment `/* ... */` that is never closed",
    ),
    code(
        "E0104",
        Error,
        Syntax,
        "Malformed number: an exponent without digits (`1e`), or letters right after a number (`2x`)",
    ),
    code(
        "E0105",
        Error,
        Syntax,
        "Numeric literal out of range: an integer that does not fit in 64 bits, or a real larger than the \
         largest 64-bit floating-point number",
    ),
    code(
        "E0106",
        Error,
        Syntax,
        "An expression nested more than 1000 levels deep (a long run of one operator, such as a sum of many \
         terms, is not nesting)",
    ),
    code(
        "E0107",
        Error,
        Syntax,
        "Missing `;` at the end of a declaration, equation or statement",
    ),
    code(
        "E0108",
        Error,
        Syntax,
        "An `end` that does not match what it closes: `end B` for class `A`, or `end if` after `when`",
    ),
    code("E0109", Error, Syntax, "A source file that is not valid UTF-8"),
    code("E0110", Error, Syntax, "Unexpected token"),
    code(
        "E0111",
        Error,
        Syntax,
        "The file ends before the class or construct being read is complete",
    ),
    code(
        "E0112",
        Error,
        Syntax,
        "Classes nested more than 1000 levels deep (a class inside a class inside a class, and so on)",
    ),
    code(
        "E0113",
        Error,
        Syntax,
        "Equations or statements nested more than 50000 levels deep in if, for, when and while blocks",
    ),
    code(
        "E0114",
        Error,
        Syntax,
        "A class or component named like a predefined type (`Real`, `Integer`, `Boolean`, `String`), or an \
         enumeration literal named like an attribute of its type (`quantity`, `min`, `max`, `start`, `fixed`): \
         Modelica reserves these names",
    ),
    code(
        "E0201",
        Error,
        Names,
        "The model to use cannot be found: no class has the name given, or the files define no model or \
         several models and none was chosen",
    ),
    code(
        "E0202",
        Error,
        Names,
        "Unknown class: no class with this name is visible here",
    ),
    code(
        "E0203",
        Error,
        Names,
        "A modifier that applies to nothing: it names no element of the class or no attribute of the \
         variable, gives an attribute no value, or modifies an `outer` component (whose value and \
         attributes are its inner component's)",
    ),
    code(
        "E0204",
        Error,
        Names,
        "Unknown function: neither a built-in nor a visible user-defined function",
    ),
    code(
        "E0205",
        Error,
        Names,
        "Unknown variable, component, member or package constant",
    ),
    code(
        "E0206",
        Error,
        Names,
        "A value needed at compile time is not known then: an array size, a for-loop range, a subscript, a \
         constant without a value, or another structural expression",
    ),
    code(
        "E0207",
        Error,
        Names,
        "Two classes with the same name at the top level of the files",
    ),
    code(
        "E0209",
        Error,
        Names,
        "A parameter override (`--param NAME=VALUE`) names no parameter of the model",
    ),
    code(
        "E0211",
        Error,
        Names,
        "The class chosen to simulate is a package, function or type, not a model",
    ),
    code(
        "E0212",
        Error,
        Names,
        "A class that extends itself, directly or through other classes",
    ),
    code(
        "E0214",
        Error,
        Names,
        "A package or function used as the type of a component, a partial class as the type of a component of the model, or a constant looked up inside a partial class",
    ),
    code(
        "E0215",
        Error,
        Names,
        "A conditional component used other than in a `connect` or its own modifier (in an equation, an \
         algorithm, a binding or a call), or reached when its condition is false, so that it is not present",
    ),
    code("E0216", Error, Names, "A component whose declaration depends on itself"),
    code(
        "E0217",
        Error,
        Names,
        "A function uses something EQM functions do not support, or breaks a rule of functions: `extends` of \
         a class that is not a function, a section other than `algorithm`, more than one algorithm section or \
         external interface, a public variable that is neither input nor output, a variable of a class type \
         other than a record or a function, an array size `:` of an output or protected variable that its \
         first value does not give, or a partial derivative `der(f, x)` of a function without exactly one \
         scalar Real output, by no input, or by a name that is not a scalar Real input of it",
    ),
    code(
        "E0218",
        Error,
        Names,
        "A name declared twice: a variable in one function, a literal in one enumeration, two elements (components \
         or classes) in one class, or a class declared again differently beside an inherited one",
    ),
    code(
        "E0219",
        Error,
        Names,
        "A statement where it is not allowed: a when-statement in an algorithm, `break` outside a loop, \
         `return` outside a function, or `reinit` outside a when-statement or inside its loops or, like a \
         `print` there, reading what its algorithm section assigns after it",
    ),
    code(
        "E0220",
        Error,
        Names,
        "An assignment to a function input, a parameter or a constant",
    ),
    code(
        "E0221",
        Error,
        Names,
        "A redeclaration that is not allowed: of an element that is not replaceable or is final, of a \
         constant, of a name that the class does not have, of a protected element from outside or as \
         public (or of a public one as protected), of an element redeclared before without `replaceable`, \
         or with a class that lacks a public element of the constraining class (also a replaceable \
         element's own type, and a new `constrainedby` class); a class extending its inherited version \
         (`redeclare model extends B`) when no base class has a replaceable `B`",
    ),
    code(
        "E0222",
        Error,
        Names,
        "An import that takes classes from a class that is not a package (`import M.C;` or `import M.*;` \
         with `M` a model, block, record or other non-package class)",
    ),
    code(
        "E0223",
        Error,
        Names,
        "A binding of higher variability than its variable: a constant bound to an expression that reads a \
         parameter or a variable, a parameter bound to one that reads `time` or a variable that changes \
         during the run; a `discrete Real` that no when-clause assigns",
    ),
    code(
        "E0240",
        Error,
        Names,
        "A file of a library directory that does not hold the class its place says: its `within` clause names \
         another package, or it defines another class or several",
    ),
    code(
        "E0241",
        Error,
        Names,
        "A file of a library directory that a lookup reached cannot be read",
    ),
    code(
        "E0301",
        Error,
        Instantiation,
        "`connect` of something that is not a connector, or of a connector reached through a component that \
         is neither the first part of the reference nor a connector (`a.b.c` with `b` a model)",
    ),
    code(
        "E0302",
        Error,
        Instantiation,
        "`connect` of two connector arrays of different sizes",
    ),
    code(
        "E0303",
        Error,
        Instantiation,
        "`connect` of connectors that do not have the same variables with the same types, flow and potential \
         kinds, causality (input/output or none) and variability (parameter, constant or time-varying), or \
         that join constants or parameters of different values",
    ),
    code(
        "E0304",
        Error,
        Instantiation,
        "Array size or shape error: sizes that do not match, an index out of bounds, too many subscripts, a \
         negative or unknown (`:`) size, an array where a scalar is needed, a range with step 0, or branches of an \
         if-expression that are records of different types or arrays of records of different sizes",
    ),
    code(
        "E0305",
        Error,
        Instantiation,
        "An attribute value of the wrong kind: a string attribute given something else, or a `stateSelect` \
         value that is not of the enumeration `StateSelect`",
    ),
    code(
        "E0306",
        Error,
        Instantiation,
        "Type mismatch: a value of the wrong type, such as a Real where a Boolean condition, an Integer or a \
         String is needed; or a String variable of a function given a text not known when the model is \
         compiled, or assigned inside a statement decided during the run or after a `return` or `break`",
    ),
    code(
        "E0307",
        Error,
        Instantiation,
        "A parenthesised list `(a, b)` used other than on the left of a call of a user-defined function",
    ),
    code(
        "E0308",
        Error,
        Instantiation,
        "A component (an instance of a class) used where a variable is needed",
    ),
    code(
        "E0309",
        Error,
        Instantiation,
        "A call that does not match the function: wrong number of arguments, an unknown, repeated or missing \
         input, more outputs listed than it has, no output where a value is needed, an option of \
         `String` that it does not take, is not known at compile time, or a bad `format`, or a call of an \
         operator record that no function of its `'constructor'` matches, or more than one, or an \
         operator on records that no function of the operator records' operators matches, or more than \
         one, or an operator on a record of no operator record",
    ),
    code(
        "E0310",
        Error,
        Instantiation,
        "A call in a place it cannot take: `reinit`, `assert` or `terminate` used as a value, a call written \
         as an equation or statement that is none, a call not allowed in a when-clause, `cardinality` \
         outside the equations of a model, or `spatialDistribution` used as a value or inside a function",
    ),
    code(
        "E0311",
        Error,
        Instantiation,
        "`connect` in an initial equation section, in an if-equation whose condition is not known at compile \
         time, or in an equation that depends on `cardinality` or on the connection graph \
         (`Connections.isRoot`, `Connections.rooted`)",
    ),
    code(
        "E0312",
        Error,
        Instantiation,
        "Misuse of when-clauses: `reinit` or `terminate` outside a when-clause, \
         `Modelica.Utilities.Streams.print` outside a when-clause or the top level of a when-statement, or \
         inside one a left side that is not a variable, a `reinit` without a scalar variable and value, or \
         an equation not allowed there",
    ),
    code(
        "E0313",
        Error,
        Instantiation,
        "An if-equation whose branches have different numbers of equations while its conditions are not parameter \
         expressions (branches may differ only when every condition is known at translation)",
    ),
    code(
        "E0314",
        Error,
        Instantiation,
        "An annotation value that no run can use: an interval, tolerance or step that is not positive, a stop \
         time before the start time, or in `__eqm(...)` a setting it does not have, a value of the wrong kind \
         or a solver that is no method",
    ),
    code(
        "E0315",
        Error,
        Instantiation,
        "A class that contains itself: a component of the class of a component enclosing it, directly, \
         through other classes or through `extends`",
    ),
    code(
        "E0316",
        Error,
        Instantiation,
        "An array or model too large: more than 100 000 000 scalar elements in one array, more than \
         10 000 000 scalar variables or equations in the flat model, or components nested more than 1000 \
         levels deep",
    ),
    code(
        "E0317",
        Error,
        Instantiation,
        "A Modelica construct EQM does not support yet, named in the message",
    ),
    code(
        "E0318",
        Error,
        Instantiation,
        "A data file `readMatrix` cannot use: missing or unreadable, without rows of numbers, with rows of \
         different lengths, or with a field that is not a number (its line is named)",
    ),
    code(
        "E0325",
        Error,
        Instantiation,
        "An external C function that cannot be provided: no C compiler, the compiler's message (a C syntax \
         error, a library not found, an undefined symbol), an argument, output or result EQM cannot pass to \
         or from C (a String result or output, a String argument known only during the run, a record \
         with an array field), or an annotation that is not a literal string; a function of \
         `Modelica.Utilities` evaluated at compile time whose argument is not known then, whose file \
         cannot be read, or whose string holds no number where `scanReal` or `scanInteger` looks",
    ),
    code(
        "E0326",
        Error,
        Instantiation,
        "The `initialPoints` of `spatialDistribution` do not go from 0 to 1 without decreasing",
    ),
    code(
        "E0329",
        Error,
        Instantiation,
        "An external object (a component of a class extending `ExternalObject`) misused: used as a number \
         (in arithmetic, a comparison, a condition or an equation; it can only be passed to functions), \
         a constructor called anywhere but as the whole binding of a component, declared without a binding that calls its constructor, or its class without a `constructor` or \
         `destructor` function, or a destructor that is not an external C function taking the object only",
    ),
    code(
        "E0333",
        Error,
        Instantiation,
        "An expandable connector misused: connected to a connector that is not expandable, a connect \
         whose two sides are both members that no declaration has, a flow variable declared in the \
         expandable connector itself, or a declared member read in an expression although no connect \
         makes it present",
    ),
    code(
        "E0334",
        Error,
        Instantiation,
        "Overconstrained connections that cannot be cut into spanning trees: a `Connections.branch` that \
         closes a cycle of branches or joins two `Connections.root` nodes, an operator of `Connections` \
         applied to something that is not an instance of an overdetermined type or record (one declaring \
         `equalityConstraint`) or written where the graph cannot take it (an initial equation, a \
         when-clause, an if-equation decided during the run, an equation using `cardinality` or the \
         graph), a negative priority, `Connections.rooted` without exactly one branch from its argument, \
         `Connections.isRoot` or `rooted` outside the equations of a model, a connect of overdetermined \
         instances with others, or an `equalityConstraint` without two inputs and one output",
    ),
    code(
        "E0335",
        Error,
        Instantiation,
        "A `flow` prefix where it cannot be: on a component of a class that is not a type, record or \
         connector, on an element of a component that is `flow` already, or on a variable that is not a Real",
    ),
    code(
        "E0336",
        Error,
        Instantiation,
        "An `extends` clause naming a class of a kind the deriving class cannot inherit from (a block \
         extending a model or a connector, a record extending a model, a model extending a type, ...), or \
         an `extends` of a predefined or enumeration type, an array class or a class defined with a prefix \
         beside components, equations or other base classes, or an `extends` of a replaceable class",
    ),
    code(
        "E0340",
        Error,
        Instantiation,
        "Stream connectors misused: a `stream` prefix outside a connector, on a variable that is not a \
         Real, on a component of a class that is not a type, record or connector, or on an element of a \
         component that is `flow` or `stream` already; a connector with stream variables and not exactly \
         one scalar flow variable; `inStream` or `actualStream` applied to something that is not a \
         stream variable",
    ),
    code(
        "E0341",
        Error,
        Instantiation,
        "A connector whose flow variables are not as many as its potential variables (those neither \
         parameter, constant, input, output, stream nor flow), unless it is partial, expandable, simple \
         (no such prefixed variables) or holds an overdetermined type or record",
    ),
    code(
        "E0342",
        Error,
        Instantiation,
        "An element or section that the class's kind does not allow: equations, algorithms or protected \
         components in a record or connector, `inner` or `outer` components in either, and `input`, \
         `output` or `flow` components in a record, components other than constants in a package, anything but \
         functions in an operator, a constructor function with more than one output",
    ),
    code(
        "E0343",
        Error,
        Instantiation,
        "A connection set of causal variables with more than one source of its signal: two inside `output` \
         connectors, two public outside `input` connectors, or one of each",
    ),
    code(
        "E0344",
        Error,
        Instantiation,
        "A type prefix where it is not allowed: `input`, `output`, `parameter`, `constant` or `discrete` on \
         a component of a model or block, `parameter` or `constant` on a connector component, `input` \
         with `parameter` or `constant`, `input`/`output` on a component whose elements have `input` \
         or `output` already, or `flow` on an element of an `input` or `output` component; a variable \
         of a block's public connector that is neither `input` nor `output`",
    ),
    code(
        "E0345",
        Error,
        Instantiation,
        "A modifier that changes an element declared `final` or given its value by a `final` modifier, or \
         a protected element from outside its class (only an `extends` clause may modify it)",
    ),
    code(
        "E0346",
        Error,
        Instantiation,
        "An element or attribute modified twice in one modification (`c(x = 1, x = 2)`, `a(x = 1), a.x = 2`)",
    ),
    code(
        "E0347",
        Error,
        Instantiation,
        "An `inner` element whose type is not a subtype of its `outer` element's: another predefined or \
         enumeration type, or other array dimensions",
    ),
    code(
        "E0401",
        Error,
        Balance,
        "The model has more or fewer equations than unknowns; the components whose own counts are off are \
         named",
    ),
    code(
        "E0402",
        Error,
        Balance,
        "A component of a package checked without `--model` is not locally balanced: its equations, with one \
         for each flow variable of its connectors and each input at its top level, differ from its unknowns \
         (the counting is shown)",
    ),
    code(
        "E0501",
        Error,
        Structural,
        "The system is structurally singular: some equations determine fewer unknowns than their number, or \
         no equation determines some unknowns",
    ),
    code(
        "E0502",
        Error,
        Structural,
        "An algorithm section is part of an algebraic loop and cannot be written as equations (a loop with a \
         run-time range or a `while` loop, an assertion, `terminate`, `break`, `return`, or a discrete-time output)",
    ),
    code(
        "E0503",
        Error,
        Structural,
        "Index reduction would have to differentiate an algorithm section, or a call of a function that has no \
         `derivative` annotation that applies and whose body is not one expression (an external function, a \
         `while` loop, a loop over a range known only during the run, `return` or `break` in a branch)",
    ),
    code(
        "E0504",
        Error,
        Structural,
        "The initial system is over-determined: initial equations or fixed start values conflict (also two variables an equation makes equal with different fixed start values)",
    ),
    code(
        "E0505",
        Error,
        Structural,
        "The initial system is under-determined: nothing determines the initial value of some unknowns",
    ),
    code(
        "E0599",
        Error,
        Structural,
        "Internal error in the structural analysis (please report the model)",
    ),
    code(
        "E0601",
        Error,
        CodeGeneration,
        "The values of some parameters, or the start values of some variables, depend on each other in a cycle",
    ),
    code(
        "E0602",
        Error,
        CodeGeneration,
        "An expression that has no numeric value at run time, such as a String or `der` of something that \
         is not a state",
    ),
    code(
        "E0603",
        Error,
        CodeGeneration,
        "A parameter's value or a start value depends on a variable that changes during the simulation",
    ),
    code(
        "E0604",
        Error,
        CodeGeneration,
        "An algorithm section assigns a variable that the simulation does not compute there: a state, a \
         parameter or a variable replaced by an alias",
    ),
    code(
        "E0605",
        Error,
        CodeGeneration,
        "A when-clause changes a variable it cannot change: an assignment to a variable that does not change \
         at events, or `reinit` of something that is not a state",
    ),
    code(
        "E0606",
        Error,
        CodeGeneration,
        "The start or interval of `sample` is not a parameter expression",
    ),
    code(
        "E0607",
        Error,
        CodeGeneration,
        "The equations of a when-clause depend on each other in a cycle",
    ),
    code(
        "E0608",
        Error,
        CodeGeneration,
        "The delay time of `delay(expression, delay)` is not a parameter expression, the largest delay of `delay(expression, delay, delayMax)` is not one, or a delay time that changes reads its own delayed value (through the equations, or through the times of other delays that read it)",
    ),
    code(
        "E0609",
        Error,
        CodeGeneration,
        "The position `x` of `spatialDistribution` reads something computed from the equations (an algebraic variable, a derivative, a delayed value); it must be known before them",
    ),
    code(
        "E0610",
        Error,
        CodeGeneration,
        "The embedding form of a high-index model (asked for with `--index-reduction embedding`) cannot be initialized: its initialization, the dummy-derivative form's, reads a relation that no relation of the embedding form sets",
    ),
    code(
        "E0611",
        Error,
        CodeGeneration,
        "An Integer variable is computed from an equation that equates it with a Real value (`k = r` with `r` Real, `k = time`, `k = 1.5`): such an equation is a Real equation and cannot determine an Integer",
    ),
    code(
        "E0699",
        Error,
        CodeGeneration,
        "Internal error while building or compiling the executable program (please report the model)",
    ),
    code(
        "E0701",
        Error,
        Simulation,
        "A computed value is not finite (NaN or infinite)",
    ),
    code(
        "E0702",
        Error,
        Simulation,
        "Newton's method did not converge while solving an implicit equation or algebraic loop",
    ),
    code(
        "E0703",
        Error,
        Simulation,
        "Singular Jacobian: the derivative of the equations with respect to their unknowns is zero",
    ),
    code(
        "E0704",
        Error,
        Simulation,
        "A condition that the symbolic solution of an equation needs does not hold, such as a divisor that \
         must not be zero (a coefficient known at translation to be zero instead removes its unknown from \
         the equation)",
    ),
    code(
        "E0705",
        Error,
        Simulation,
        "An `assert` failed (in an equation section, an algorithm or a function; one on parameters \
         before the run), an algorithm section or function called `terminate`, or an external C function \
         stopped with `ModelicaError` (its message is shown)",
    ),
    code(
        "E0706",
        Error,
        Simulation,
        "An evaluation that would not end: more loop iterations and function calls than the limit, function \
         calls nested too deeply, or a for-loop with step 0",
    ),
    code(
        "E0707",
        Error,
        Simulation,
        "A parameter cannot be set: there is no such parameter, its value is computed from other \
         parameters, it is a constant, the value is not a finite number, or it fixes the model's structure \
         (an array size, a range, a condition, a coefficient that is zero at translation)",
    ),
    code(
        "E0708",
        Error,
        Simulation,
        "A variable asked for in the output or a plot does not exist in the model",
    ),
    code(
        "E0710",
        Error,
        Simulation,
        "The solution is pushed onto several switching surfaces at once, where sliding mode is not defined",
    ),
    code(
        "E0711",
        Error,
        Simulation,
        "Events accumulate (Zeno behaviour) and nothing in the model brings the motion to rest there, so the simulation cannot pass the accumulation point",
    ),
    code(
        "E0712",
        Error,
        Simulation,
        "The event iteration does not settle: relations and when-clauses keep triggering each other, or the structure of a variable-structure model switches back and forth at one instant",
    ),
    code(
        "E0713",
        Error,
        Simulation,
        "The static state choice of a dummy-derivative run becomes singular",
    ),
    code(
        "E0714",
        Error,
        Simulation,
        "A `sample(start, interval)` whose start is not finite or whose interval is not positive, a `delay` whose delay time is not positive and finite, or a delay time outside `[0, delayMax]` (checked at the start for a parameter delay time, at every evaluation for one that changes)",
    ),
    code(
        "E0715",
        Error,
        Simulation,
        "A start value that cannot be set for a run: no such variable, a parameter or constant, an alias, or a value that is not finite",
    ),
    code(
        "E0716",
        Error,
        Simulation,
        "The output interval of the experiment annotation would write more rows than the run's limit",
    ),
    code(
        "E0717",
        Error,
        Simulation,
        "A variable-structure model that cannot be switched between its modes: a relation choosing its structure that a mode's program cannot watch, or a `delay` or `spatialDistribution` whose history a switch would lose",
    ),
    code(
        "E0720",
        Error,
        Simulation,
        "A run advanced step by step by its caller (co-simulation, an FMU) of a variable-structure model: such a model is run as a whole",
    ),
    code(
        "E0799",
        Error,
        Simulation,
        "Internal error in an evaluation: an array of the wrong length (please report the model)",
    ),
    code(
        "E0801",
        Error,
        Analysis,
        "A variable-structure model cannot be analysed: its equations change at events, so it has no one linearisation",
    ),
    code(
        "E0802",
        Error,
        Analysis,
        "A model compiled in the embedding form of index reduction cannot be linearised: analyse its dummy-derivative form",
    ),
    code(
        "E0803",
        Error,
        Analysis,
        "A model with `delay` or `spatialDistribution` cannot be analysed: its linearisation is a delay or transport equation, not a state-space system",
    ),
    code(
        "E0804",
        Error,
        Analysis,
        "A model with external objects can be analysed only at its start time: their functions keep state that only the run's events advance",
    ),
    code(
        "E0902",
        Error,
        Export,
        "A variable-structure model cannot be exported as an FMU: its equations change at events",
    ),
    code(
        "E0903",
        Error,
        Export,
        "The FMU runtime library `libeqm_fmu.so` is not found, or the FMU cannot be written",
    ),
    code(
        "E1001",
        Error,
        Import,
        "A system-dynamics file that cannot be read as a model: XML that is not well formed, or a file that is neither XMILE nor a Vensim model",
    ),
    code(
        "E1002",
        Error,
        Import,
        "A construct of a system-dynamics file that EQM's importer does not support; it is named at its line, never left out silently",
    ),
    code(
        "E1003",
        Error,
        Import,
        "A syntax error in an equation or a graphical function of a system-dynamics file",
    ),
    code(
        "E1004",
        Error,
        Import,
        "A name in a system-dynamics equation that is no variable, dimension or element of the model",
    ),
    code(
        "E1005",
        Error,
        Import,
        "A call of an unknown function or macro in a system-dynamics equation, or with the wrong number of arguments",
    ),
    code(
        "E1006",
        Error,
        Import,
        "Subscripts in a system-dynamics equation that do not fit the dimensions of the variable",
    ),
    code(
        "E1007",
        Error,
        Import,
        "A variable of a system-dynamics file that is defined twice, or declared without a definition",
    ),
    code(
        "E1008",
        Error,
        Import,
        "A data file that a system-dynamics model reads (Vensim's `GET XLS ...`) cannot be read, or has no such sheet, named range or number where the call points",
    ),
    code(
        "E1009",
        Error,
        Import,
        "A system-dynamics model that cannot be built as its file gives it: a model that contains itself through \
         its modules, modules nested more than 100 deep or written out to more than a million variables, a \
         conveyor whose transit time is not positive or spans more than a million time steps",
    ),
    code(
        "W0101",
        Warning,
        Syntax,
        "A class annotation among a class's declarations or equations (as Modelica 2 allowed): it is read as \
         part of the class annotation, which Modelica 3 puts last",
    ),
    code(
        "W0240",
        Warning,
        Names,
        "A library directory (of `--library`, `EQMPATH` or `MODELICAPATH`) that cannot be listed; it is skipped",
    ),
    code(
        "W0241",
        Warning,
        Names,
        "A model says it uses a version of a library (`uses(Modelica(version = ...))`) other than the version \
         of the library found",
    ),
    code(
        "W0301",
        Warning,
        Instantiation,
        "A call as a statement of a function without outputs in a model's algorithm section is checked but \
         not run (such a call runs for its effect only in a function)",
    ),
    code(
        "W0302",
        Warning,
        Instantiation,
        "A parameter that nothing gives a value (no binding, no modifier, no `--param`): its start value \
         (0 without one) is used as its value",
    ),
    code(
        "W0303",
        Warning,
        Instantiation,
        "An `outer` element without an `inner` element of its name in an enclosing component: EQM adds one \
         inner element of the outer's class, shared by every such outer element of that name",
    ),
    code(
        "W0501",
        Warning,
        Structural,
        "Variables merged by alias elimination have different start values; the fixed one is used (both fixed is E0504), else the kept variable's",
    ),
    code(
        "W0502",
        Warning,
        Structural,
        "The initial conditions are not fully specified: the start values of some states are assumed fixed",
    ),
    code(
        "W0503",
        Warning,
        Structural,
        "A `stateSelect` request the state choice cannot honour: `always` on a variable that is no state (it \
         does not appear differentiated, or index reduction chose another), or `never` on one that had to be",
    ),
    code(
        "W0504",
        Warning,
        Structural,
        "An initial equation on Boolean or Integer values repeats what the other equations of the initial system \
         determine; it is checked after the initialization (E0705 when it does not hold) instead of solved",
    ),
    code(
        "W0505",
        Warning,
        Structural,
        "Fixed start values of states that index reduction made dummy states, which the other equations of the \
         initial system determine, are dropped; each is checked after the initialization (E0705 when it does not hold)",
    ),
    code(
        "W0701",
        Warning,
        Simulation,
        "An `assert` of level `AssertionLevel.warning` does not hold; the run goes on",
    ),
    code(
        "W0702",
        Warning,
        Simulation,
        "The fixed step of an explicit method is beyond its stability limit for the model's fastest rate at the start",
    ),
    code(
        "W0703",
        Warning,
        Simulation,
        "A result column that a mode of a variable-structure model does not compute (a derivative that mode's index \
         reduction did not introduce): its rows in that mode are written as NaN",
    ),
    code(
        "W1001",
        Warning,
        Import,
        "A setting of a system-dynamics file that EQM reads but does not apply (a display or vendor option that does not change the results)",
    ),
    code(
        "W1002",
        Warning,
        Import,
        "Elements of a Vensim array that no definition covers: they are 0 and left out of the results, as Vensim does",
    ),
];
