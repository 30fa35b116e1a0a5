//! The sandbox's seams (issue 32): what deep-review hands an agent without meaning to, and what
//! an agent can take of the machine. Each attack is tried by a stand-in agent through the built
//! binary, as root (as CI containers run it): descriptors its parent left open, the devices of
//! `/dev` under Landlock alone, root-only files outside `/etc` under bubblewrap, and a fork
//! bomb, a memory hog and a busy loop against the per-agent limits.
//!
//! Linux only: these are the Linux layers (bubblewrap, Landlock, user namespaces).
#![cfg(target_os = "linux")]

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sandbox_attacks::{Attack, denied, find_file, needs_bwrap};
use crate::support::procs;
use crate::support::standin::{Ran, json_report, run};

/// Fails unless this test runs as root: the guarantees below are those that must hold as root.
fn needs_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test runs as root, as CI containers do"
    );
}

/// `attack.cmd(mode)` as a plain `Command`, to give deep-review descriptors of its parent's.
fn std_command(attack: &Attack, mode: &str) -> Command {
    let base = attack.cmd(mode);
    let mut cmd = Command::new(base.get_program());
    cmd.args(base.get_args()).current_dir(attack.repo.path());
    for (key, value) in base.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd
}

/// A pseudo-terminal pair: the master (the test's end) and the slave's path.
fn open_pty() -> (OwnedFd, PathBuf) {
    // SAFETY: posix_openpt, grantpt, unlockpt and ptsname_r on a descriptor owned here.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(
            master >= 0,
            "no pseudo-terminal: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (OwnedFd::from_raw_fd(master), PathBuf::from(path))
    }
}

/// What the master end of a pty has received so far (it never blocks).
fn pty_received(master: &OwnedFd) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let mut poll = libc::pollfd {
            fd: master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll and read on a descriptor owned by the caller, into a stack buffer.
        let n = unsafe {
            if libc::poll(&mut poll, 1, 0) <= 0 {
                break;
            }
            libc::read(master.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
        };
        if n <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A root-only file with `secret` in it, in a directory only root may enter.
fn root_only_file(dir: &Path, secret: &str) -> PathBuf {
    let file = dir.join("root-only.key");
    std::fs::write(&file, secret).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    file
}

/// A descriptor deep-review's parent left open without close-on-exec (a file only root may
/// read at 7, the user's terminal at 8) never reaches the agent, in any sandbox mode.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn descriptors_deep_review_inherited_never_reach_the_agent() {
    needs_bwrap();
    needs_root();
    let keys = tempfile::tempdir().unwrap();
    let key = root_only_file(keys.path(), "fd-secret-32");
    let attack = Attack::new();
    attack.probe(
        "try fd7 \"cat <&7\"\n\
         cat <&7 >> \"$R\" 2>&1\n\
         try fd8 \"printf 'PWNED-FD8' >&8\"\n\
         ls /proc/self/fd >> \"$R\" 2>&1\n\
         try stdout \"printf x >&1\"",
    );
    for mode in ["auto", "landlock", "none"] {
        attack.clear_results();
        let file = std::fs::File::open(&key).unwrap();
        let (master, slave_path) = open_pty();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&slave_path)
            .unwrap();
        let (file_fd, slave_fd) = (file.as_raw_fd(), slave.as_raw_fd());
        let mut cmd = std_command(&attack, mode);
        // SAFETY: dup2 only, between fork and exec; dup2 leaves the copies inheritable, as a
        // careless parent (a shell, a CI runner) leaves its descriptors.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(file_fd, 7) < 0 || libc::dup2(slave_fd, 8) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let results = attack.results();
        assert!(
            out.status.success(),
            "{mode}: {}\n{results}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            results.contains("ALLOWED stdout\n"),
            "{mode}: the probe is broken:\n{results}"
        );
        denied(&results, "fd7", mode);
        denied(&results, "fd8", mode);
        assert!(
            !results.contains("fd-secret-32"),
            "{mode}: the agent read fd 7:\n{results}"
        );
        let screen = pty_received(&master);
        assert!(
            !screen.contains("PWNED"),
            "{mode}: the agent wrote to the terminal: {screen}"
        );
    }
}

/// Under Landlock alone `/dev` is the host's: the agent gets the devices a CLI needs (null,
/// zero, full, random, urandom, its own standard streams) and nothing else, not `/dev/shm` nor
/// another terminal's `/dev/pts/N`.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn under_landlock_alone_dev_holds_only_the_devices_a_cli_needs() {
    needs_bwrap();
    needs_root();
    let marker = procs::marker("shm");
    let shm = PathBuf::from(format!("/dev/shm/{marker}"));
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _cleanup = Cleanup(shm.clone());
    std::fs::write(&shm, "shm-secret-32").unwrap();
    std::fs::set_permissions(&shm, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (master, slave) = open_pty();
    let attack = Attack::new();
    attack.probe(&format!(
        "try shm \"cat {shm}\"\n\
         try shm-list \"ls /dev/shm\"\n\
         try pts \"printf PWNED-PTS > {pts}\"\n\
         try pts-read \"true < {pts}\"\n\
         try null \"printf x > /dev/null && cat /dev/null\"\n\
         try zero \"head -c 8 /dev/zero | od >/dev/null\"\n\
         try full \"head -c 8 /dev/full >/dev/null\"\n\
         try urandom \"head -c 8 /dev/urandom | od >/dev/null\"\n\
         try random \"head -c 8 /dev/random | od >/dev/null\"\n\
         try stdin \"true < /dev/stdin\"\n\
         try fd \"ls /dev/fd/ >/dev/null\"",
        shm = shm.display(),
        pts = slave.display()
    ));
    for mode in ["landlock", "auto"] {
        attack.clear_results();
        attack.run(mode);
        let results = attack.results();
        for name in ["shm", "shm-list", "pts", "pts-read"] {
            denied(&results, name, mode);
        }
        for name in ["null", "zero", "full", "urandom", "random", "stdin", "fd"] {
            assert!(
                results.contains(&format!("ALLOWED {name}\n")),
                "{mode}: /dev/{name} is not there for the agent:\n{results}"
            );
        }
        assert!(!results.contains("shm-secret-32"), "{mode}:\n{results}");
        assert!(
            !pty_received(&master).contains("PWNED"),
            "{mode}: wrote to another terminal"
        );
    }
}

/// As root, bubblewrap's user namespace used to map the agent to root outside, so any root-only
/// file bound in (here under `/opt`, outside the masked `/etc`) was the agent's own. Now the
/// agent is an unprivileged uid outside too, and the kernel's own permissions refuse it; what
/// it must reach (the checkout under a root-only temporary directory, its program, its scratch
/// and home) still works.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn files_only_root_may_read_outside_etc_are_not_readable_under_bubblewrap() {
    needs_bwrap();
    needs_root();
    let marker = procs::marker("opt");
    let dir = PathBuf::from(format!("/opt/{marker}"));
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Cleanup(dir.clone());
    let private = dir.join("private");
    std::fs::create_dir_all(&private).unwrap();
    let key = root_only_file(&dir, "opt-secret-32");
    std::fs::write(private.join("admin.conf"), "opt-token-32").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(dir.join("public.txt"), "public").unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let attack = Attack::new();
    attack.probe(&format!(
        "try key \"cat {key}\"\n\
         try private \"cat {private}/admin.conf\"\n\
         try public \"cat {dir}/public.txt\"\n\
         try checkout \"cat src/auth.rs\"\n\
         try scratch \"echo x > \\\"$TMPDIR/x\\\" && cat \\\"$TMPDIR/x\\\"\"\n\
         try home \"echo x > \\\"$HOME/x\\\"\"\n\
         cat {key} {private}/admin.conf >> \"$R\" 2>&1\n\
         id -u >> \"$R\"",
        key = key.display(),
        private = private.display(),
        dir = dir.display()
    ));
    attack.run("auto");
    let results = attack.results();
    denied(&results, "key", "auto");
    denied(&results, "private", "auto");
    for name in ["public", "checkout", "scratch", "home"] {
        assert!(
            results.contains(&format!("ALLOWED {name}\n")),
            "the agent cannot reach what is its own ({name}):\n{results}"
        );
    }
    assert!(
        !results.contains("opt-secret-32") && !results.contains("opt-token-32"),
        "{results}"
    );
}

/// The failure line and the JSON report of `ran`, and the bundle's `meta.json` files, as one
/// text to search.
fn reported(attack: &Attack, ran: &Ran) -> String {
    let report = json_report(ran).to_string();
    let meta = find_file(attack.store.path(), "meta.json")
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap_or_default();
    format!("{report}\n{meta}")
}

/// A fork bomb stops at the agent's process limit, and the run says which limit it hit; the
/// report is still written. Under bubblewrap the limit binds also as root: the agent is an
/// unprivileged uid, counted in its own user namespace.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn a_fork_bomb_is_bounded_and_reported() {
    needs_bwrap();
    let attack = Attack::new();
    let count = attack.agents.path("forked");
    attack.agents.add(
        "probe",
        &format!(
            "i=0\nwhile [ $i -lt 2000 ]; do sleep 30 & i=$((i+1)); echo $i > '{}'; done\nwait",
            count.display()
        ),
    );
    attack
        .agents
        .append_config("max_processes = 64\ntimeout = \"60s\"\n");
    let ran = run(&mut attack.cmd("auto"));
    let forked: u32 = std::fs::read_to_string(&count)
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(0);
    assert!(forked > 0, "the bomb never started: {}", ran.stderr);
    assert!(
        forked < 100,
        "{forked} processes started past a limit of 64: {}",
        ran.stderr
    );
    assert_eq!(ran.code, Some(3), "no review, yet a report: {}", ran.stderr);
    let text = reported(&attack, &ran);
    assert!(
        text.contains("process limit (64"),
        "the run does not say which limit it hit:\n{}\n{text}",
        ran.stderr
    );
}

/// A memory hog fails at the agent's memory limit, under bubblewrap and under Landlock alone,
/// and the run says so.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn a_memory_hog_is_bounded_and_reported() {
    needs_bwrap();
    crate::sandbox_attacks::needs_program("python3");
    for mode in ["auto", "landlock"] {
        let attack = Attack::new();
        let got = attack.agents.path("got");
        attack.agents.add(
            "probe",
            &format!(
                "python3 -c 'b = bytearray(2 << 30); b[-1] = 1; open(\"{}\", \"w\").write(\"2 GiB\")'",
                got.display()
            ),
        );
        attack.agents.append_config("max_memory = \"256MiB\"\n");
        let ran = run(&mut attack.cmd(mode));
        assert!(
            !got.exists(),
            "{mode}: the agent took 2 GiB past a limit of 256 MiB"
        );
        assert_eq!(ran.code, Some(3), "{mode}: {}", ran.stderr);
        let text = reported(&attack, &ran);
        assert!(
            text.contains("memory limit (256 MiB"),
            "{mode}: the run does not say which limit it hit:\n{}\n{text}",
            ran.stderr
        );
    }
}

/// A busy loop is stopped at the agent's CPU-time limit, well before its timeout.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn a_busy_loop_is_stopped_at_its_cpu_time_limit() {
    needs_bwrap();
    for mode in ["auto", "landlock"] {
        let attack = Attack::new();
        attack.agents.add("probe", "while :; do :; done");
        attack
            .agents
            .append_config("max_cpu_time = \"1s\"\ntimeout = \"120s\"\n");
        let ran = run(&mut attack.cmd(mode));
        assert_eq!(ran.code, Some(3), "{mode}: {}", ran.stderr);
        let text = reported(&attack, &ran);
        assert!(
            text.contains("CPU-time limit (1s"),
            "{mode}: the run does not say which limit it hit:\n{}\n{text}",
            ran.stderr
        );
        assert!(
            !text.contains("timed out"),
            "{mode}: stopped by the timeout instead"
        );
    }
}
