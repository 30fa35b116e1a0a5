//! The book's reference pages are the code's own words: the committed command and configuration
//! references must equal what the binary's definitions render now, and every `docs/...#anchor`
//! the code points users at (in `--help`, in error messages) must name a page and heading that
//! exist.

use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use regex::Regex;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compares a generated page with the committed one; `DEEP_REVIEW_BLESS=1` rewrites it instead.
fn check_page(relative: &str, rendered: &str) {
    let path = root().join(relative);
    if std::env::var_os("DEEP_REVIEW_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, rendered).unwrap_or_else(|e| panic!("writing {relative}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "{relative} differs from what the code renders now; run\n  \
         DEEP_REVIEW_BLESS=1 cargo nextest run -E 'test(reference_pages)'\n\
         and commit the page. First differing line: {:?}",
        first_difference(&committed, rendered)
    );
}

fn first_difference(committed: &str, rendered: &str) -> Option<(usize, String, String)> {
    let (mut old, mut new) = (committed.lines(), rendered.lines());
    for number in 1.. {
        match (old.next(), new.next()) {
            (None, None) => return None,
            (a, b) if a == b => continue,
            (a, b) => {
                let show = |l: Option<&str>| l.unwrap_or("<end of file>").to_string();
                return Some((number, show(a), show(b)));
            }
        }
    }
    None
}

#[test]
fn reference_pages_commands_match_clap() {
    let page = deep_review::cli::reference::commands_markdown();
    for command in ["run", "consolidate", "post", "stats", "schema"] {
        assert!(
            page.contains(&format!("## `deep-review {command}`")),
            "{command} missing"
        );
    }
    assert!(page.contains("--fail-on"), "run's options are in the page");
    check_page("docs/src/reference/commands.md", &page);
}

#[test]
fn reference_pages_config_matches_the_parsed_structs() {
    let page = deep_review::cli::reference::config_markdown();
    for key in [
        "`pass_forge_tokens`",
        "`context_tokens`",
        "`input_per_mtok`",
        "`[agents.NAME]`",
    ] {
        assert!(
            page.contains(key),
            "{key} missing from the configuration reference"
        );
    }
    check_page("docs/src/reference/config.md", &page);
}

/// A key the configuration reference lists is one the parser takes, and one it does not list is
/// refused: the page and the parser are one list.
#[test]
fn reference_pages_config_keys_are_the_parsers() {
    let page = deep_review::cli::reference::config_markdown();
    let file = Path::new("/nonexistent/config.toml");
    let parses = |text: &str| {
        deep_review::config::parse_layer(text, file, &["claude", "codex", "gemini"]).is_ok()
    };
    assert!(parses("[agents.claude]\ncontext_tokens = 1000\n"));
    assert!(!parses("[agents.claude]\ncontext_tokenz = 1000\n"));
    assert!(page.contains("| `context_tokens` | integer |"));
    assert!(!page.contains("context_tokenz"));
}

/// GitHub's and mdBook's heading ids: lowercase, letters, digits, `-` and `_` kept, spaces to
/// `-`, the rest dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn heading_ids(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let (mut ids, mut current) = (Vec::new(), None::<String>);
    for event in Parser::new(&text) {
        match event {
            Event::Start(Tag::Heading { .. }) => current = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => ids.extend(current.take().map(|h| slug(&h))),
            Event::Text(t) | Event::Code(t) => {
                if let Some(heading) = current.as_mut() {
                    heading.push_str(&t);
                }
            }
            _ => {}
        }
    }
    ids
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn docs_anchors_named_in_src_exist() {
    let pointer = Regex::new(r"docs/src/[A-Za-z0-9_/.-]+\.md(?:#[A-Za-z0-9_-]+)?").unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut seen = 0;
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for found in pointer.find_iter(&text) {
            seen += 1;
            let (page, anchor) = found
                .as_str()
                .split_once('#')
                .unwrap_or((found.as_str(), ""));
            let path = root().join(page);
            let ok = path.is_file()
                && (anchor.is_empty() || heading_ids(&path).contains(&anchor.to_string()));
            if !ok {
                broken.push(format!("{}: {}", file.display(), found.as_str()));
            }
        }
    }
    assert!(
        seen >= 2,
        "the CLI's pointers into the book (--help, exit codes) were not found"
    );
    assert!(
        broken.is_empty(),
        "pointers into the book that lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn docs_anchor_slugs_follow_github() {
    assert_eq!(slug("Exit codes"), "exit-codes");
    assert_eq!(slug("The store: `list`, `show`"), "the-store-list-show");
    assert_eq!(
        slug("Model APIs and local models"),
        "model-apis-and-local-models"
    );
}

/// `deep-review schema config` prints the schema the configuration reference is rendered from:
/// the keys a file may hold, with what they do.
#[test]
fn schema_config_prints_the_config_files_keys() {
    let out = assert_cmd::Command::cargo_bin("deep-review")
        .unwrap()
        .args(["schema", "config"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(schema["properties"]["agents"].is_object());
    let agent = &schema["$defs"]["RawAgent"]["properties"];
    assert!(
        agent["timeout"]["description"]
            .as_str()
            .unwrap()
            .contains("30m")
    );
    assert_eq!(schema["$defs"]["RawAgent"]["additionalProperties"], false);
}
