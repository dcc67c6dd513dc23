//! The REPL's list of colon commands with their help, and how a command line is split into
//! words; the text `:help` prints and the completion of command names come from here.

/// A command: its name, its arguments, what it does and an example.
pub(crate) struct Help {
    pub(crate) name: &'static str,
    args: &'static str,
    about: &'static str,
    example: &'static str,
}

/// Every command, in the order `:help` lists them.
pub(crate) const COMMANDS: &[Help] = &[
    Help {
        name: "load",
        args: "FILE...",
        about: "load .eqm files into the session",
        example: ":load examples/spring_mass.eqm",
    },
    Help {
        name: "reload",
        args: "",
        about: "read the files again, keeping the parameter changes that still apply",
        example: ":reload",
    },
    Help {
        name: "models",
        args: "",
        about: "list the models with their description strings",
        example: ":models",
    },
    Help {
        name: "use",
        args: "MODEL",
        about: "choose the current model",
        example: ":use Decay",
    },
    Help {
        name: "check",
        args: "",
        about: "check the current model",
        example: ":check",
    },
    Help {
        name: "flatten",
        args: "",
        about: "print the flat model",
        example: ":flatten",
    },
    Help {
        name: "explain",
        args: "[--keep-aliases] [--steps]",
        about: "explain the structural analysis",
        example: ":explain --steps",
    },
    Help {
        name: "analyze",
        args: "[eqm analyze options]",
        about: "steady state, linearisation, eigenvalues and advice",
        example: ":analyze --at 1",
    },
    Help {
        name: "run",
        args: "[eqm run options] [as NAME]",
        about: "simulate, keeping the run by name (the latest is `last`)",
        example: ":run --stop 10 as base",
    },
    Help {
        name: "set",
        args: "NAME=VALUE ...",
        about: "set parameters (without recompiling unless structural) and start values",
        example: ":set k=2",
    },
    Help {
        name: "unset",
        args: "[NAME...]",
        about: "forget parameter and start value changes (all without NAME)",
        example: ":unset k",
    },
    Help {
        name: "show",
        args: "NAME",
        about: "show a parameter or variable: value, unit, description",
        example: ":show k",
    },
    Help {
        name: "params",
        args: "",
        about: "list the parameters with their values",
        example: ":params",
    },
    Help {
        name: "vars",
        args: "",
        about: "list the variables with units and descriptions",
        example: ":vars",
    },
    Help {
        name: "value",
        args: "NAME at T [in RUN]",
        about: "a variable's value at a time (interpolated)",
        example: ":value x at 2.5",
    },
    Help {
        name: "stats",
        args: "[RUN]",
        about: "steps, events and time per stage of a run",
        example: ":stats",
    },
    Help {
        name: "runs",
        args: "",
        about: "list the kept runs",
        example: ":runs",
    },
    Help {
        name: "compare",
        args: "NAME RUN1 RUN2",
        about: "a variable in two runs at common times",
        example: ":compare x base last",
    },
    Help {
        name: "save",
        args: "[RUN] FILE",
        about: "write a run as .csv, .parquet, .arrow or .mat",
        example: ":save base out.csv",
    },
    Help {
        name: "sweep",
        args: "NAME=A:STEP:B|v1,v2,... ...",
        about: "run every combination and tabulate final values",
        example: ":sweep k=1:1:3",
    },
    Help {
        name: "plot",
        args: "a, b [over x] [in RUN] [> FILE.svg|png]",
        about: "plot variables of a run",
        example: ":plot x over v > phase.svg",
    },
    Help {
        name: "help",
        args: "[COMMAND]",
        about: "list the commands, or explain one",
        example: ":help run",
    },
    Help {
        name: "quit",
        args: "",
        about: "end the session (also Ctrl-D)",
        example: ":quit",
    },
];

/// Splits a command line into words; double quotes group words with spaces.
pub(crate) fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// Prints a clap error or help text of a command's options.
pub(crate) fn print_clap(e: &clap::Error) {
    let text = e.to_string();
    match e.kind() {
        clap::error::ErrorKind::DisplayHelp => print!("{text}"),
        _ => eprint!("{text}"),
    }
}

/// `:help [COMMAND]`.
pub(crate) fn help(command: Option<&str>) {
    match command.map(|c| c.trim_start_matches(':')) {
        None => {
            println!("commands (`:help COMMAND` for one, with an example):");
            for c in COMMANDS {
                println!("  :{:<8} {:<28} {}", c.name, c.args, c.about);
            }
            println!("a line starting a class (model, package, function, ...) defines it; any other line");
            println!("is an expression over the last run: max(x) - min(x), x(2.5), final(x), x[end]");
        }
        Some(name) => match COMMANDS.iter().find(|c| c.name == name) {
            Some(c) => {
                println!(":{} {}", c.name, c.args);
                println!("  {}", c.about);
                println!("  example: {}", c.example);
                if c.name == "run" || c.name == "analyze" {
                    println!("  `:{} --help` lists the options", c.name);
                }
            }
            None => eprintln!("error: no command `:{name}`; `:help` lists them"),
        },
    }
}
