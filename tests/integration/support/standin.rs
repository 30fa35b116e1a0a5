//! Stand-in agents for tests of whole runs: shell scripts configured as custom agents in a
//! temporary user config (`XDG_CONFIG_HOME`), on a real repository, through the built binary as
//! a user runs it. Each may write only beside itself (`sandbox_write`), where it counts its runs.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use super::repo::Repo;

/// A repository whose branch `login` adds a login that accepts any password.
pub fn repo() -> Repo {
    let repo = Repo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.commit("initial");
    repo.git(&["checkout", "-q", "-b", "login"]);
    repo.write("src/lib.rs", "pub fn a() {}\npub mod auth;\n");
    repo.commit("Wire auth");
    repo.write("src/auth.rs", "pub fn login(_pw: &str) -> bool { true }\n");
    repo.commit("Add login");
    repo
}

/// A review with one important finding on `src/auth.rs:1`, and a suggestion when asked.
pub fn review(title: &str, suggestion: Option<&str>) -> String {
    let suggestion = match suggestion {
        Some(s) => format!(
            "1. **{s}** — `src/lib.rs:2` (suggestion, enhancement)\n\n`auth` could be `session`.\n"
        ),
        None => "None.\n".to_string(),
    };
    format!(
        "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nAdds a login function.\n\n\
         ## Findings\n\n### Critical Issues\n\nNone.\n\n### Important Issues\n\n\
         1. **{title}** — `src/auth.rs:1` (important, regression)\n\n\
         ```rust\npub fn login(_pw: &str) -> bool {{ true }}\n```\n\n\
         `login` returns true for every password, so anyone can log in.\n\n\
         Fix: compare the password with the stored hash.\n\n### Suggestions\n\n{suggestion}\n\
         ## Coverage Summary\n\n| File | Status |\n|------|--------|\n\
         | `src/auth.rs` | Important 1 |\n| `src/lib.rs` | Reviewed |\n"
    )
}

/// Lets every uid use `dir`: as root under bubblewrap an agent is an unprivileged uid outside
/// its sandbox, and a directory the stand-ins run from and write to (`sandbox_write`) must be
/// one that uid may use, as any directory a root user grants an agent must be.
pub fn open_to_agents(dir: &Path) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
}

/// Stand-in agents and the user config that names them.
pub struct Agents {
    tools: tempfile::TempDir,
    xdg: tempfile::TempDir,
}

impl Agents {
    pub fn new() -> Agents {
        let tools = tempfile::tempdir().unwrap();
        open_to_agents(tools.path());
        Agents {
            tools,
            xdg: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tools.path().join(name)
    }

    /// The user config the agents are written to (the last one added is its last table).
    pub fn config_file(&self) -> PathBuf {
        self.xdg.path().join("deep-review/config.toml")
    }

    /// An agent `name` running `body` (after reading the brief from stdin); each run appends a
    /// line to `<name>.runs`.
    pub fn add(&self, name: &str, body: &str) {
        let script = self.path(&format!("{name}.sh"));
        let runs = self.path(&format!("{name}.runs"));
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ncat >/dev/null\necho run >> '{}'\n{body}\n",
                runs.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let config = self.xdg.path().join("deep-review/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        let mut text = std::fs::read_to_string(&config).unwrap_or_default();
        // The stand-ins count their runs beside themselves: a directory the user's config lets
        // them write in their sandbox.
        text.push_str(&format!(
            "[agents.{name}]\ncommand = \"{}\"\nsandbox_write = [\"{}\"]\n",
            script.display(),
            self.tools.path().display()
        ));
        std::fs::write(config, text).unwrap();
    }

    /// Appends `text` to the user config: after [`Agents::add`], keys of the agent added last.
    pub fn append_config(&self, text: &str) {
        let config = self.xdg.path().join("deep-review/config.toml");
        let mut all = std::fs::read_to_string(&config).unwrap_or_default();
        all.push_str(text);
        std::fs::write(config, all).unwrap();
    }

    /// An agent that prints `review`.
    pub fn reviewing(&self, name: &str, review: &str) {
        let file = self.path(&format!("{name}.md"));
        std::fs::write(&file, review).unwrap();
        self.add(name, &format!("cat '{}'", file.display()));
    }

    /// Changes what agent `name` (added with [`Agents::reviewing`]) prints from its next run.
    pub fn set_review(&self, name: &str, review: &str) {
        std::fs::write(self.path(&format!("{name}.md")), review).unwrap();
    }

    pub fn runs_of(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(&format!("{name}.runs")))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    pub fn cmd(&self, repo: &Path) -> Command {
        let mut cmd = Command::cargo_bin("deep-review").unwrap();
        cmd.current_dir(repo)
            .env("XDG_CONFIG_HOME", self.xdg.path())
            .env("XDG_DATA_HOME", self.xdg.path().join("data"))
            .env_remove("CI");
        cmd
    }
}

pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn run(cmd: &mut Command) -> Ran {
    let out = cmd.output().unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The JSON report a run wrote (its path is printed on stdout).
pub fn json_report(ran: &Ran) -> Value {
    let path = ran
        .stdout
        .lines()
        .find(|l| l.ends_with(".json"))
        .unwrap_or_else(|| panic!("no JSON report: {}\n{}", ran.stdout, ran.stderr));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
