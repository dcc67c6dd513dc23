//! Builds the workbench page (`web/`, bundled by Vite from the packages its lock file pins) and
//! embeds the result in the crate: `OUT_DIR/assets.rs` lists every file of the bundle with its
//! media type and its bytes (`include_bytes!`), so the `eqm` binary serves the page from memory,
//! offline, with nothing installed beside it.
//!
//! The packages are installed with `npm ci` when `web/node_modules` is missing or older than
//! the lock file; nothing is downloaded but registry packages. Without Node.js and npm the
//! build stops with a message saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let web = manifest.join("../../web");
    for watched in [
        "src",
        "index.html",
        "package.json",
        "package-lock.json",
        "vite.config.js",
        "public",
    ] {
        println!("cargo:rerun-if-changed={}", web.join(watched).display());
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("web");
    if needs_install(&web) {
        npm(&web, &["ci", "--no-audit", "--no-fund", "--loglevel=error"], &out);
    }
    npm(&web, &["run", "build", "--silent"], &out);
    let mut files = Vec::new();
    collect(&out, &out, &mut files);
    files.sort();
    let mut listing = String::from(
        "/// Every file of the page's bundle: path below the root, media type, bytes.\npub(crate) static ASSETS: &[(&str, &str, &[u8])] = &[\n",
    );
    for relative in &files {
        let absolute = out.join(relative);
        listing.push_str(&format!(
            "    ({:?}, {:?}, include_bytes!({:?})),\n",
            relative,
            media_type(relative),
            absolute.display().to_string()
        ));
    }
    listing.push_str("];\n");
    let target = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("assets.rs");
    fs::write(&target, listing).expect("OUT_DIR is writable");
}

/// Whether `npm ci` must run: no installed packages, or a lock file newer than the installation.
fn needs_install(web: &Path) -> bool {
    let installed = web.join("node_modules/.package-lock.json");
    let modified = |path: &Path| fs::metadata(path).and_then(|m| m.modified()).ok();
    match (modified(&installed), modified(&web.join("package-lock.json"))) {
        (Some(installed), Some(lock)) => lock > installed,
        _ => true,
    }
}

fn npm(web: &Path, args: &[&str], out: &Path) {
    let status = Command::new("npm")
        .args(args)
        .current_dir(web)
        .env("EQM_WEB_OUT", out)
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => panic!("`npm {}` in {} failed ({status})", args.join(" "), web.display()),
        Err(error) => panic!(
            "the workbench page is built with npm, which could not be started ({error}): install Node.js 20 or newer with npm"
        ),
    }
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("the bundle {} cannot be read: {e}", dir.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(relative) = path.strip_prefix(root) {
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn media_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "woff2" => "font/woff2",
        "json" => "application/json",
        _ => "application/octet-stream",
    }
}
