//! Which repository configs the user trusts, as direnv and mise do it: a repository's
//! `.deep-review.toml` may name programs to run and files to read only once the user has read
//! it and said so (`deep-review trust`), and only in the version they trusted. The record is a
//! file in the user's data directory that maps the config's path to the SHA-256 of its
//! content; any change to the file needs trusting again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// `$XDG_DATA_HOME/deep-review/trusted.json` (`~/.local/share/...`).
pub fn store_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("deep-review").join("trusted.json"))
}

/// The record: config path → content hashes trusted for it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    #[serde(default)]
    trusted: BTreeMap<String, Vec<String>>,
}

/// The SHA-256 of a config's text, as hex.
pub fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// The key a config is recorded under: its canonical path.
fn key(config_path: &Path) -> String {
    let parent = config_path.parent().unwrap_or(Path::new("."));
    let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    parent
        .join(config_path.file_name().unwrap_or_default())
        .display()
        .to_string()
}

fn read(store: &Path) -> Record {
    std::fs::read_to_string(store)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Whether the user trusts `text` as the content of `config_path`.
pub fn is_trusted(config_path: &Path, text: &str) -> bool {
    let Some(store) = store_path() else {
        return false;
    };
    read(&store)
        .trusted
        .get(&key(config_path))
        .is_some_and(|hashes| hashes.contains(&hash(text)))
}

/// Records `text` as trusted for `config_path` (and forgets the versions trusted before).
pub fn trust(config_path: &Path, text: &str) -> anyhow::Result<PathBuf> {
    let store =
        store_path().context("no data directory for the trust record: set XDG_DATA_HOME")?;
    let mut record = read(&store);
    record.trusted.insert(key(config_path), vec![hash(text)]);
    save(&store, &record)?;
    Ok(store)
}

/// Forgets every trusted version of `config_path`; true when one was recorded.
pub fn revoke(config_path: &Path) -> anyhow::Result<bool> {
    let Some(store) = store_path() else {
        return Ok(false);
    };
    let mut record = read(&store);
    let had = record.trusted.remove(&key(config_path)).is_some();
    save(&store, &record)?;
    Ok(had)
}

fn save(store: &Path, record: &Record) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(record)?;
    crate::store::write_atomic(store, text.as_bytes())
        .with_context(|| format!("cannot write the trust record {}", store.display()))
}
