//! An agent command configured with `..` in its path runs under the sandbox as it does outside:
//! bubblewrap mounts only the granted directories, so a path that passes through another one
//! (`tools/x/../agent.sh`) was found outside and not inside (issue 33).

use std::time::Duration;

use crate::support::run::{RunFixture, consolidated_part, review};

const LIMIT: Duration = Duration::from_secs(240);

#[test]
fn an_agent_command_with_dot_dot_runs_in_the_sandbox() {
    assert!(
        deep_review::dispatch::sandbox::available(),
        "this test needs a sandbox: bubblewrap or a kernel with Landlock"
    );
    let fx = RunFixture::new();
    let home = fx.home.path();
    let tools = home.join("tools");
    std::fs::create_dir_all(home.join("elsewhere")).unwrap();
    std::fs::create_dir_all(&tools).unwrap();
    let script = tools.join("agent.sh");
    let findings = review(
        "Parser panics on malformed input",
        "src/parse.rs:4",
        "important",
        "`unwrap()` on user-supplied text aborts the process.",
    );
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat > /dev/null\ncat <<'REVIEW'\n{findings}REVIEW\n"),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    let through = home.join("elsewhere/../tools/agent.sh");
    fx.config(&format!(
        "[agents.dotted]\ncommand = \"{}\"\ndisplay = \"Dotted\"\n",
        through.display()
    ));
    let out = fx.run(
        &[
            "run",
            "main..feature",
            "--agents",
            "dotted",
            "--format",
            "json",
        ],
        LIMIT,
    );
    assert!(
        !out.timed_out && out.status.success(),
        "{}",
        fx.context(&out)
    );
    let report = fx.the_report(&out);
    assert!(
        consolidated_part(&report).contains("Parser panics on malformed input"),
        "the agent did not run under the sandbox:\n{report}\n{}",
        fx.context(&out)
    );
    let json = fx.reports("json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json[0]).unwrap()).unwrap();
    let sandbox = json["agents"][0]["sandbox"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !sandbox.starts_with("none"),
        "the agent ran unconfined: {sandbox}"
    );
}
