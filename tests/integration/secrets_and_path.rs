//! Secrets and `PATH` (issue 20, item 4): every value of a secret-named variable is hidden
//! whatever its characters (an AWS secret key holds `/`, `+` and `=`), also when the agent's
//! output is cut between two reads right inside it, in every file written; and a relative
//! `PATH` entry (`node_modules/.bin`, `.`, an empty entry) never finds a program, so a change
//! that commits `node_modules/.bin/git` or `node_modules/.bin/claude` runs nothing.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::standin::{Agents, repo, run};

const AWS_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY+a=";
const GATEWAY: &str = "gw/tok+en==Zq81";

/// A review whose finding quotes both secrets, then a line of 8 MB with the key where the
/// agent's output is read in two pieces (the reader reads a line with no end 8 MB at a time).
fn leaky_agent() -> String {
    let review = format!(
        "**Verdict**: Merge with fixes\n\n## Executive Summary\n\nAdds a login.\n\n## Findings\n\n\
         ### Important Issues\n\n1. **Key committed** — `src/auth.rs:1` (important, regression)\n\n\
         The key {AWS_KEY} and the gateway token {GATEWAY} are in the code.\n"
    );
    let before = 8 * 1024 * 1024 - 10;
    format!(
        "cat <<'EOF'\n{review}EOF\nhead -c {before} /dev/zero | tr '\\0' x\nprintf '%s tail\\n' '{AWS_KEY}'"
    )
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn secrets_are_hidden_in_every_file_whatever_their_characters() {
    let repo = repo();
    let agents = Agents::new();
    agents.add("leaky", &leaky_agent());
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report.md");
    let ran = run(agents
        .cmd(repo.path())
        .env("AWS_SECRET_ACCESS_KEY", AWS_KEY)
        .env("GATEWAY_TOKEN", GATEWAY)
        .args(["run", "--agents", "leaky", "--quiet", "--out"])
        .arg(&report));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let json_path = files(&repo.store())
        .into_iter()
        .find(|p| {
            p.parent() == Some(repo.store().as_path()) && p.extension().is_some_and(|e| e == "json")
        })
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json_path).unwrap()).unwrap();
    assert!(
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["title"] == "Key committed"),
        "{json:#}"
    );

    let mut checked = 0;
    for file in files(&repo.store()).into_iter().chain([report]) {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        // Whole, or either side of a cut through it.
        for part in [
            AWS_KEY,
            &AWS_KEY[..12],
            &AWS_KEY[AWS_KEY.len() - 12..],
            GATEWAY,
        ] {
            assert!(!text.contains(part), "{} holds {part:?}", file.display());
        }
        checked += 1;
    }
    assert!(checked >= 8, "{checked} files");
    let raw = files(&repo.store())
        .into_iter()
        .find(|p| p.ends_with("leaky/stdout.jsonl"))
        .unwrap();
    let raw = std::fs::read_to_string(raw).unwrap();
    assert!(raw.contains("*** tail\n"), "the cut key is redacted whole");
    assert!(!ran.stdout.contains(AWS_KEY) && !ran.stderr.contains(AWS_KEY));
}

/// A script that leaves `marker` when it runs (then behaves like nothing happened).
fn planted(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}'\necho 1.0.0\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_relative_path_entry_never_runs_the_changes_program() {
    let repo = repo();
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("ran");
    // The change commits programs where a relative PATH entry would find them.
    for program in ["git", "claude", "codex", "gemini"] {
        planted(&repo.file(&format!("node_modules/.bin/{program}")), &marker);
        planted(&repo.file(program), &marker);
    }
    repo.commit("Add tools");
    // The system's directories only: no real agent CLI is found either.
    let system = "/usr/local/bin:/usr/bin:/bin";
    let agents = Agents::new();
    for path in [
        format!("node_modules/.bin:{system}"),
        format!(".:{system}"),
        format!(":{system}"),
        format!("{system}:"),
    ] {
        for args in [
            &["agents"][..],
            &["run", "--dry-run"],
            &["list"],
            &["run", "--agents", "claude", "--quiet"],
        ] {
            let ran = run(agents.cmd(repo.path()).env("PATH", &path).args(args));
            assert!(
                !marker.exists(),
                "PATH={path} deep-review {args:?} ran {}\n{}",
                std::fs::read_to_string(&marker).unwrap_or_default(),
                ran.stderr
            );
            if args == ["agents"] {
                assert!(
                    !ran.stdout.contains("node_modules/.bin/claude"),
                    "the change's program is not listed: {}",
                    ran.stdout
                );
            }
        }
    }
}
