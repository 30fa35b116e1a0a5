//! SIGTERM, Ctrl-C (SIGINT), a closed terminal (SIGHUP) and SIGQUIT sent to deep-review stop
//! every agent's process group, remove the checkouts and the run's temporary directory, write
//! every agent's results and return a cancelled outcome (the CLI exits 130). The signals go to
//! this test process itself: it runs in a process of its own (nextest).

use crate::support::repo as repo_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use deep_review::dispatch::{AgentSpec, ProgressMode, dispatch};
use deep_review::types::RunStatus;
use repo_support::Repo;

fn gone(pid: i32) -> bool {
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z') =>
            {
                return true;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    false
}

async fn run_and_signal(tmp: &Path, repo: &Path, round: &str, signal: libc::c_int) {
    let mut agents = Vec::new();
    let mut pidfiles = Vec::new();
    for name in ["claude", "gemini"] {
        let pidfile = tmp.join(format!("{round}-{name}.pid"));
        let script = tmp.join(format!("{round}-{name}"));
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\npwd > '{p}.pwd'\nsleep 300 &\necho $! > '{p}'\nwait",
                p = pidfile.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        agents.push(AgentSpec {
            timeout: Duration::from_secs(600),
            // The stand-in records its pid beside itself (outside its sandbox otherwise).
            sandbox_write: {
                crate::support::standin::open_to_agents(tmp);
                vec![tmp.to_path_buf()]
            },
            ..AgentSpec::new(name, script.to_string_lossy())
        });
        pidfiles.push(pidfile);
    }
    let bundle = tmp.join(format!("{round}-bundle"));
    let task = {
        let (repo, bundle, agents) = (repo.to_path_buf(), bundle.clone(), agents.clone());
        tokio::spawn(async move {
            dispatch(
                &repo,
                "HEAD",
                "brief",
                &agents,
                &bundle,
                ProgressMode::Plain,
            )
            .await
        })
    };
    for _ in 0..400 {
        if pidfiles
            .iter()
            .all(|p| std::fs::read_to_string(p).is_ok_and(|s| s.ends_with('\n')))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // SAFETY: kill(2) on this process with a signal dispatch() handles.
    unsafe {
        libc::kill(libc::getpid(), signal);
    }
    let outcome = tokio::time::timeout(Duration::from_secs(60), task)
        .await
        .expect("dispatch returns after the signal")
        .unwrap();

    assert!(outcome.cancelled, "{round}");
    for r in &outcome.reviews {
        assert_eq!(
            r.status,
            RunStatus::Cancelled,
            "{round} {}: {:?}",
            r.agent,
            r.error
        );
    }
    for pidfile in &pidfiles {
        let pid: i32 = std::fs::read_to_string(pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(pid), "{round}: agent child {pid} survived");
        let pwd =
            std::fs::read_to_string(PathBuf::from(format!("{}.pwd", pidfile.display()))).unwrap();
        assert!(!Path::new(pwd.trim()).exists(), "{round}: worktree left");
        assert!(bundle.join(r_name(pidfile)).join("meta.json").is_file());
    }
    assert!(
        run_dirs().is_empty(),
        "{round}: temporary directories left: {:?}",
        run_dirs()
    );
}

/// This process's run directories in the temporary directory (`deep-review-run-<pid>-*`).
fn run_dirs() -> Vec<PathBuf> {
    let prefix = format!("deep-review-run-{}-", std::process::id());
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

fn r_name(pidfile: &Path) -> String {
    let stem = pidfile.file_stem().unwrap().to_string_lossy();
    stem.rsplit('-').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ctrl_c_sighup_and_sigquit_cancel_every_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let repo_dir = Repo::new();
    repo_dir.commit("one");
    let repo = repo_dir.path().to_path_buf();
    run_and_signal(tmp.path(), &repo, "term", libc::SIGTERM).await;
    run_and_signal(tmp.path(), &repo, "int", libc::SIGINT).await;
    run_and_signal(tmp.path(), &repo, "hup", libc::SIGHUP).await;
    run_and_signal(tmp.path(), &repo, "quit", libc::SIGQUIT).await;
    let list = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&list.stdout).lines().count(), 1);
}
