//! One config file: its TOML layout, and errors that name the file, the line and the key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// The layout of `.deep-review.toml` and of the user's `config.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    pass_forge_tokens: Option<bool>,
    brief_template: Option<String>,
    #[serde(default)]
    agents: BTreeMap<String, Spanned<RawAgent>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    command: Option<String>,
    args: Option<Vec<String>>,
    model: Option<String>,
    effort: Option<String>,
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    enabled: Option<bool>,
    display: Option<String>,
    pass_forge_tokens: Option<bool>,
}

/// What one file says about one agent; `None` leaves the value to the layer below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentLayer {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub timeout: Option<Duration>,
    pub env: BTreeMap<String, String>,
    pub enabled: Option<bool>,
    pub display: Option<String>,
    pub pass_forge_tokens: Option<bool>,
}

/// What one file says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layer {
    pub pass_forge_tokens: Option<bool>,
    /// Resolved against the directory of the file that names it.
    pub brief_template: Option<PathBuf>,
    pub agents: BTreeMap<String, AgentLayer>,
}

impl Layer {
    /// This layer without what decides which programs run and what they see: `command`,
    /// `args`, `env`, `pass_forge_tokens`, and agents the registry does not know (they are
    /// nothing but a command). Returns the layer and the settings it dropped, by key.
    pub fn without_execution(mut self, known: &[&str]) -> (Layer, Vec<String>) {
        let mut dropped = Vec::new();
        if self.pass_forge_tokens.take().is_some() {
            dropped.push("`pass_forge_tokens`".to_string());
        }
        self.agents.retain(|name, _| {
            let keep = known.contains(&name.as_str());
            if !keep {
                dropped.push(format!("`[agents.{name}]`"));
            }
            keep
        });
        for (name, agent) in &mut self.agents {
            if agent.command.take().is_some() {
                dropped.push(format!("`agents.{name}.command`"));
            }
            if agent.args.take().is_some() {
                dropped.push(format!("`agents.{name}.args`"));
            }
            if !std::mem::take(&mut agent.env).is_empty() {
                dropped.push(format!("`agents.{name}.env`"));
            }
            if agent.pass_forge_tokens.take().is_some() {
                dropped.push(format!("`agents.{name}.pass_forge_tokens`"));
            }
        }
        (self, dropped)
    }
}

/// Parses the text of config file `path`. Agent names are lower-cased; besides the registry's
/// (`known`), a name of letters, digits, `-` and `_` is a custom agent, which needs a `command`
/// somewhere in the merged config (checked by [`super::load_files`]).
pub fn parse_layer(text: &str, path: &Path, known: &[&str]) -> anyhow::Result<Layer> {
    let raw: RawFile = toml::from_str(text).map_err(|err| {
        let at = err.span().map(|s| locate(text, s)).unwrap_or_default();
        anyhow::anyhow!(
            "{}{}: {}: fix it or remove it",
            path.display(),
            at,
            err.message().trim_end_matches('.')
        )
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut layer = Layer {
        pass_forge_tokens: raw.pass_forge_tokens,
        brief_template: raw.brief_template.map(|t| dir.join(t)),
        agents: BTreeMap::new(),
    };
    for (name, spanned) in raw.agents {
        let span = spanned.span();
        let agent = spanned.into_inner();
        let lname = name.to_ascii_lowercase();
        let plain = !lname.is_empty()
            && lname
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !known.contains(&lname.as_str()) && !plain {
            anyhow::bail!(
                "{}{}: `{name}` is not a usable agent name: use letters, digits, `-` and `_` \
                 (the registry's agents are {})",
                path.display(),
                locate(text, span),
                known.join(", ")
            );
        }
        let timeout = match agent.timeout {
            None => None,
            Some(t) => {
                let span = t.span();
                Some(parse_timeout(t.get_ref()).map_err(|msg| {
                    anyhow::anyhow!("{}{}: {msg}", path.display(), locate(text, span))
                })?)
            }
        };
        layer.agents.insert(
            lname,
            AgentLayer {
                command: agent.command,
                args: agent.args,
                model: agent.model,
                effort: agent.effort,
                timeout,
                env: agent.env,
                enabled: agent.enabled,
                display: agent.display,
                pass_forge_tokens: agent.pass_forge_tokens,
            },
        );
    }
    Ok(layer)
}

/// A timeout: a duration with units, longer than zero.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let d = crate::text::parse_duration(text)?;
    if d.is_zero() {
        return Err(format!(
            "`{text}` is zero: a timeout must be longer than that"
        ));
    }
    Ok(d)
}

/// ` line N, key `agents.claude.timeout`` for a byte span of `text`: the line, and the key
/// written on it (with the `[table]` it sits in) when the line is a `key = value`.
fn locate(text: &str, span: Range<usize>) -> String {
    let start = span.start.min(text.len());
    let line_no = text[..start].matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let before: Vec<&str> = text.lines().take(line_no).collect();
    let table = before
        .iter()
        .rev()
        .copied()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let key = line
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    match (key, table) {
        (Some(k), Some(t)) if line_no > 1 && !line.trim_start().starts_with('[') => {
            format!(" line {line_no}, key `{t}.{k}`")
        }
        (Some(k), _) => format!(" line {line_no}, key `{k}`"),
        (None, Some(t)) if line.trim_start().starts_with('[') => {
            format!(" line {line_no}, table `[{t}]`")
        }
        _ => format!(" line {line_no}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["claude", "codex", "gemini"];

    fn err(text: &str) -> String {
        parse_layer(text, Path::new("/r/.deep-review.toml"), KNOWN)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_full_file_parses() {
        let text = r#"
pass_forge_tokens = true
brief_template = "brief.j2"

[agents.claude]
command = "/opt/claude"
args = ["--verbose"]
model = "opus"
effort = "high"
timeout = "45m"
env = { A = "1" }
display = "Claude Opus 4.6"

[agents.gemini]
enabled = false
"#;
        let layer = parse_layer(text, Path::new("/r/.deep-review.toml"), KNOWN).unwrap();
        assert_eq!(layer.pass_forge_tokens, Some(true));
        assert_eq!(layer.brief_template, Some(PathBuf::from("/r/brief.j2")));
        let c = &layer.agents["claude"];
        assert_eq!(c.timeout, Some(Duration::from_secs(45 * 60)));
        assert_eq!(c.env["A"], "1");
        assert_eq!(layer.agents["gemini"].enabled, Some(false));
    }

    #[test]
    fn wrong_type_names_file_line_and_key() {
        let e = err("[agents.codex]\nmodel = \"x\"\ntimeout = 5\n");
        assert!(
            e.starts_with("/r/.deep-review.toml line 3, key `agents.codex.timeout`"),
            "{e}"
        );
    }

    #[test]
    fn unknown_key_names_it() {
        let e = err("[agents.claude]\nmodle = \"opus\"\n");
        assert!(e.contains("line 2"), "{e}");
        assert!(e.contains("modle"), "{e}");
    }

    #[test]
    fn bad_duration_names_line_and_key() {
        let e = err("[agents.claude]\ntimeout = \"30\"\n");
        assert!(e.contains("line 2, key `agents.claude.timeout`"), "{e}");
        assert!(e.contains("without a unit"), "{e}");
    }

    #[test]
    fn odd_agent_name_is_refused() {
        let e = err("[agents.\"my tool\"]\nmodel = \"x\"\n");
        assert!(e.contains("`my tool` is not a usable agent name"), "{e}");
        assert!(e.contains("line 1"), "{e}");
        let layer = parse_layer(
            "[agents.Custom-1]\ncommand = \"x\"\n",
            Path::new("c"),
            KNOWN,
        );
        assert!(layer.unwrap().agents.contains_key("custom-1"));
    }

    #[test]
    fn syntax_error_has_a_line() {
        let e = err("pass_forge_tokens = true\n[agents.claude\n");
        assert!(e.contains("line 2"), "{e}");
    }
}
