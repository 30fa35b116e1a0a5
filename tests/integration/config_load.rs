//! Config files on disk: the repository file over the user file, defaults with none, and errors
//! that name the file, the line and the key.

use std::path::PathBuf;
use std::time::Duration;

use deep_review::config::{Config, DEFAULT_TIMEOUT, RepoConfig, load, load_files};

fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn no_config_gives_three_default_agents() {
    let repo = tempfile::tempdir().unwrap();
    let config = load_files(&[repo.path().join("missing.toml")]).unwrap();
    assert_eq!(config, Config::default());
    let specs = config.agent_specs(None).unwrap();
    let names: Vec<(&str, &str, &str)> = specs
        .iter()
        .map(|s| (s.name.as_str(), s.display.as_str(), s.command.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("claude", "Claude", "claude"),
            ("codex", "Codex", "codex"),
            ("gemini", "Gemini", "gemini")
        ]
    );
    assert!(
        specs
            .iter()
            .all(|s| s.timeout == DEFAULT_TIMEOUT && !s.pass_forge_tokens)
    );
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(1800));
}

#[test]
fn load_reads_the_repo_file() {
    let repo = tempfile::tempdir().unwrap();
    write(
        repo.path(),
        ".deep-review.toml",
        "[agents.codex]\nenabled = false\n",
    );
    let specs = load(repo.path(), RepoConfig::WorkingTree)
        .unwrap()
        .config
        .agent_specs(None)
        .unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert!(!names.contains(&"codex"), "{names:?}");
}

#[test]
fn repo_file_overrides_user_file_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let user = write(
        dir.path(),
        "xdg/deep-review/config.toml",
        r#"
pass_forge_tokens = true
brief_template = "mine.j2"
[agents.claude]
model = "sonnet"
effort = "high"
timeout = "10m"
env = { A = "user", B = "user" }
display = "Claude Sonnet"
[agents.gemini]
enabled = false
"#,
    );
    let repo = write(
        dir.path(),
        "repo/.deep-review.toml",
        r#"
[agents.claude]
model = "opus"
env = { B = "repo", C = "repo" }
args = ["--max-turns", "60"]
[agents.codex]
command = "/opt/codex/bin/codex"
timeout = "1h30m"
"#,
    );
    let config = load_files(&[user.clone(), repo.clone()]).unwrap();
    assert_eq!(config.files, [user, repo]);
    assert_eq!(
        config.brief_template,
        Some(dir.path().join("xdg/deep-review/mine.j2"))
    );

    let specs = config.agent_specs(None).unwrap();
    assert_eq!(specs.len(), 2, "gemini is disabled");
    let claude = &specs[0];
    assert_eq!(claude.model.as_deref(), Some("opus"), "repo wins");
    assert_eq!(claude.effort.as_deref(), Some("high"), "user value kept");
    assert_eq!(claude.timeout, Duration::from_secs(600));
    assert_eq!(claude.display, "Claude Sonnet");
    assert_eq!(claude.extra_args, ["--max-turns", "60"]);
    let env: Vec<(&str, &str)> = claude
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, [("A", "user"), ("B", "repo"), ("C", "repo")]);
    assert!(claude.pass_forge_tokens);
    let codex = &specs[1];
    assert_eq!(codex.command, "/opt/codex/bin/codex");
    assert_eq!(codex.timeout, Duration::from_secs(5400));
    assert_eq!(codex.display, "Codex");
}

#[test]
fn agents_flag_selects_and_orders() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "c.toml", "[agents.gemini]\nenabled = false\n");
    let config = load_files(&[f]).unwrap();
    let specs = config.agent_specs(Some("gemini, Claude,gemini")).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["gemini", "claude"],
        "explicit selection wins over enabled = false"
    );

    let err = config
        .agent_specs(Some("claude,copilot"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown agent `copilot`") && err.contains("claude, codex, gemini"),
        "{err}"
    );
    let err = config.agent_specs(Some(" , ")).unwrap_err().to_string();
    assert!(err.contains("names no agent"), "{err}");
}

#[test]
fn all_disabled_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "c.toml",
        "[agents.claude]\nenabled = false\n[agents.codex]\nenabled = false\n[agents.gemini]\nenabled = false\n",
    );
    let err = load_files(std::slice::from_ref(&f))
        .unwrap()
        .agent_specs(None)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&f.display().to_string()), "{err}");
}

#[test]
fn bad_toml_names_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        ".deep-review.toml",
        "# comment\n[agents.claude]\nmodel = \"opus\"\nenabled = \"yes\"\n",
    );
    let err = load_files(std::slice::from_ref(&f))
        .unwrap_err()
        .to_string();
    let want = format!("{} line 4, key `agents.claude.enabled`", f.display());
    assert!(err.starts_with(&want), "{err}");

    let f2 = write(
        dir.path(),
        "two.toml",
        "[agents.codex]\ntimeout = \"soon\"\n",
    );
    let err = load_files(std::slice::from_ref(&f2))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("two.toml line 2, key `agents.codex.timeout`"),
        "{err}"
    );
    assert!(err.contains("30m"), "says how to write it: {err}");

    let f3 = write(dir.path(), "three.toml", "brief_templat = \"x\"\n");
    let err = load_files(&[f3]).unwrap_err().to_string();
    assert!(
        err.contains("three.toml line 1, key `brief_templat`"),
        "{err}"
    );
}

#[test]
fn unreadable_config_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: exists, but cannot be read as a file.
    std::fs::create_dir(dir.path().join(".deep-review.toml")).unwrap();
    let err = load(dir.path(), RepoConfig::WorkingTree)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read config file"), "{err}");
}

#[test]
fn custom_agents_need_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let user = write(
        dir.path(),
        "user.toml",
        "[agents.mytool]\ncommand = \"/usr/local/bin/mytool\"\n",
    );
    let repo = write(
        dir.path(),
        "repo.toml",
        "[agents.mytool]\nmodel = \"m1\"\ndisplay = \"My Tool\"\n",
    );
    let config = load_files(&[user, repo.clone()]).unwrap();
    let specs = config.agent_specs(None).unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["claude", "codex", "gemini", "mytool"]);
    let mine = &specs[3];
    assert_eq!(
        (mine.command.as_str(), mine.display.as_str()),
        ("/usr/local/bin/mytool", "My Tool")
    );
    assert_eq!(mine.model.as_deref(), Some("m1"));
    let picked = config.agent_specs(Some("mytool")).unwrap();
    assert_eq!(picked.len(), 1);

    let err = load_files(std::slice::from_ref(&repo))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`[agents.mytool]`") && err.contains("has no `command`"),
        "{err}"
    );
    assert!(err.contains(&repo.display().to_string()), "{err}");
}
