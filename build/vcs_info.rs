//! The commit a crates.io package was made from: `cargo package` writes `.cargo_vcs_info.json`
//! (`{"git": {"sha1": "<40 hex>"}, ...}`) into the tarball, which has no `.git`. Read by build.rs
//! (no JSON crate at build time, so a plain scan) and by its test.

/// The `git.sha1` of a `.cargo_vcs_info.json`, or `None` when it has none that is 40 hex digits.
/// One pass over the text; it is at most a few hundred bytes.
pub fn sha_from_vcs_info(json: &str) -> Option<String> {
    let after_key = &json[json.find("\"sha1\"")? + "\"sha1\"".len()..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let sha = value.strip_prefix('"')?.get(..40)?;
    let closed = value[1 + 40..].starts_with('"');
    (closed && sha.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha.to_ascii_lowercase())
}
