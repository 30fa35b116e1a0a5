//! One config file: its TOML layout, and errors that name the file, the line and the key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::types::AgentKind;

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
    kind: Option<Spanned<String>>,
    command: Option<String>,
    #[serde(default)]
    pass_env: Vec<String>,
    #[serde(default)]
    sandbox_read: Vec<String>,
    #[serde(default)]
    sandbox_write: Vec<String>,
    args: Option<Vec<String>>,
    model: Option<String>,
    effort: Option<String>,
    context_tokens: Option<usize>,
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
    pub kind: Option<AgentKind>,
    /// A name on PATH, or a path (a relative one resolved against the file's directory).
    pub command: Option<String>,
    pub pass_env: Vec<String>,
    pub sandbox_read: Vec<PathBuf>,
    pub sandbox_write: Vec<PathBuf>,
    pub args: Option<Vec<String>>,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub context_tokens: Option<usize>,
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
    /// This layer without what decides which programs run, what they see and which files are
    /// read: `command`, `args`, `env`, `pass_env`, `pass_forge_tokens`, `brief_template`,
    /// `sandbox_read`, `sandbox_write`, `kind`, and agents the registry does not know (they are
    /// nothing but a command). Returns the layer and the settings it dropped, by key.
    pub fn without_execution(mut self, known: &[&str]) -> (Layer, Vec<String>) {
        let mut dropped = Vec::new();
        if self.pass_forge_tokens.take().is_some() {
            dropped.push("`pass_forge_tokens`".to_string());
        }
        if self.brief_template.take().is_some() {
            dropped.push("`brief_template`".to_string());
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
            if agent.kind.take().is_some() {
                dropped.push(format!("`agents.{name}.kind`"));
            }
            for (key, list) in [
                ("pass_env", std::mem::take(&mut agent.pass_env).len()),
                (
                    "sandbox_read",
                    std::mem::take(&mut agent.sandbox_read).len(),
                ),
                (
                    "sandbox_write",
                    std::mem::take(&mut agent.sandbox_write).len(),
                ),
            ] {
                if list > 0 {
                    dropped.push(format!("`agents.{name}.{key}`"));
                }
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
        let kind = match agent.kind {
            None => None,
            Some(k) => {
                let span = k.span();
                Some(parse_kind(k.get_ref()).map_err(|msg| {
                    anyhow::anyhow!("{}{}: {msg}", path.display(), locate(text, span))
                })?)
            }
        };
        layer.agents.insert(
            lname,
            AgentLayer {
                kind,
                command: agent.command.map(|c| resolve_command(&c, dir)),
                pass_env: agent.pass_env,
                sandbox_read: agent
                    .sandbox_read
                    .iter()
                    .map(|p| expand_path(p, dir))
                    .collect(),
                sandbox_write: agent
                    .sandbox_write
                    .iter()
                    .map(|p| expand_path(p, dir))
                    .collect(),
                args: agent.args,
                model: agent.model,
                effort: agent.effort,
                context_tokens: agent.context_tokens,
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

/// `kind = "..."`: which CLI layout (or, later, which API) an agent uses.
fn parse_kind(text: &str) -> Result<AgentKind, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "claude" => Ok(AgentKind::Claude),
        "codex" => Ok(AgentKind::Codex),
        "gemini" => Ok(AgentKind::Gemini),
        "command" => Ok(AgentKind::Generic),
        other => Err(format!(
            "`{other}` is not an agent kind: use claude, codex, gemini or command"
        )),
    }
}

/// A command as written in a config file: a bare name stays a name looked up on PATH; a path
/// with a `/` is made absolute against the file's directory, so it never depends on where an
/// agent runs (its checkout is the change under review).
fn resolve_command(command: &str, dir: &Path) -> String {
    if command.contains('/') && !command.starts_with('/') {
        let expanded = expand_path(command, dir);
        return expanded.display().to_string();
    }
    command.to_string()
}

/// `~/x` under the home directory, a relative path under `dir`, an absolute one as is.
fn expand_path(path: &str, dir: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        return home.join(rest);
    }
    dir.join(path)
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
