//! `eqm serve`: the web workbench of a folder (`eqm_serve`). This module checks the folder,
//! hands the workbench the sessions the other commands use (`load::workbench_sessions`),
//! prints the page's address with its token as the first line of standard output, opens the
//! browser when asked, and serves until Ctrl-C (the workbench handles SIGINT and SIGTERM
//! itself and stops cleanly, exit 0). Usage errors (no such folder, a port that is taken)
//! exit 2.

use crate::load;
use crate::output::usage;
use std::io::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs `eqm serve`; see the module documentation.
pub(crate) fn main(dir: Option<PathBuf>, port: Option<u16>, host: Option<IpAddr>, open: bool) -> ExitCode {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    if !dir.is_dir() {
        return usage(format!("{} is not a folder", dir.display()));
    }
    let mut config = eqm_serve::Config::new(dir, load::workbench_sessions());
    config.port = port;
    if let Some(host) = host {
        if !host.is_loopback() {
            eprintln!(
                "warning: listening on {host}: anyone who can reach this address and knows the token can read and write the folder's model files"
            );
        }
        config.host = host;
        config.host_given = true;
    }
    let served = eqm_serve::run(config, |server| {
        let url = server.url();
        println!("EQM workbench: {url}");
        let _ = std::io::stdout().flush();
        if open {
            open_browser(&url);
        }
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => usage(message),
    }
}

/// Starts the system's browser on `url`; a failure is a warning (the address is printed).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!("warning: cannot start the browser with `{opener}`: {e}; open the address above");
    }
}
