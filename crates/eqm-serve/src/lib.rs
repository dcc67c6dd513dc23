//! The web workbench of `eqm serve`. (Being built: so far the page's bundle, embedded.)

mod assets {
    include!(concat!(env!("OUT_DIR"), "/assets.rs"));
}

/// The bundled file at `path` below the page's root (`index.html`, `assets/...`): its media
/// type and bytes.
pub fn asset(path: &str) -> Option<(&'static str, &'static [u8])> {
    assets::ASSETS
        .iter()
        .find(|(name, _, _)| *name == path)
        .map(|(_, media, bytes)| (*media, *bytes))
}
