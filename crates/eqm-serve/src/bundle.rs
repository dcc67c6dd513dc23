//! The page's bundle, built from `web/` by `build.rs` and embedded: each file by its path below
//! the page's root. Input: a path. Output: the media type and bytes. It deliberately knows
//! nothing of the requests that ask for them.

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
