//! deep-review's helper inside bubblewrap: the last steps before the agent runs, which can only
//! be taken inside the sandbox.
//!
//! bwrap runs `deep-review __sandbox-exec [options] -- PROGRAM ARGS...` as the sandbox's command.
//! The helper:
//!
//! 1. makes the agent's listening sockets on the sandbox's own loopback (the proxy and the
//!    forwarded local endpoints) and hands them to deep-review over the control socket
//!    ([`crate::dispatch::network::handoff`]), then closes it;
//! 2. sets the agent's limits ([`crate::dispatch::sandbox::rlimits`]: here, inside the user
//!    namespace, the process limit counts the sandbox's own processes), drops every capability
//!    and applies the Landlock rules (which must come after bwrap's mounts: Landlock forbids
//!    mounting);
//! 3. replaces itself with the agent (`exec`), with nothing open but the standard streams:
//!    nothing of deep-review stays in the sandbox.
//!
//! Any failure is one line on standard error and exit status 126, which the report shows as
//! the agent's failure to start.

use std::ffi::{OsStr, OsString};
use std::net::SocketAddr;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;

use super::landlock::{self, Rules};
use crate::dispatch::network::handoff;
use crate::dispatch::sandbox::rlimits::Rlimits;

/// The hidden subcommand that runs the helper.
pub const SUBCOMMAND: &str = "__sandbox-exec";

/// The exit status of a helper that could not set up the sandbox (as a shell's "cannot
/// execute").
pub const FAILED: i32 = 126;

/// What the helper is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Listeners to make and hand over, by name (`proxy`, `forward:PORT`).
    pub listen: Vec<(String, SocketAddr)>,
    /// The Landlock rules, when the kernel has Landlock.
    pub rules: Option<Rules>,
    /// The agent's limits.
    pub limits: Option<Rlimits>,
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl Request {
    /// The helper's arguments after its own executable: the subcommand, the options, `--`, the
    /// agent's command.
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![SUBCOMMAND.into()];
        if !self.listen.is_empty() {
            out.push("--control-fd".into());
            out.push(handoff::CONTROL_FD.to_string().into());
        }
        for (name, addr) in &self.listen {
            out.push("--listen".into());
            out.push(format!("{name}={addr}").into());
        }
        if let Some(rules) = &self.rules {
            out.push("--landlock".into());
            out.push(serde_json::to_string(rules).unwrap_or_default().into());
        }
        if let Some(limits) = &self.limits {
            out.push("--limits".into());
            out.push(limits.to_arg().into());
        }
        out.push("--".into());
        out.push(self.program.clone());
        out.extend(self.args.iter().cloned());
        out
    }

    /// Reads the helper's arguments (after the subcommand).
    pub fn parse(args: &[OsString]) -> Result<(Option<i32>, Request), String> {
        let mut control = None;
        let mut request = Request {
            listen: Vec::new(),
            rules: None,
            limits: None,
            program: OsString::new(),
            args: Vec::new(),
        };
        let mut i = 0;
        let value = |i: usize| -> Result<&OsStr, String> {
            args.get(i + 1)
                .map(OsString::as_os_str)
                .ok_or_else(|| format!("{} needs a value", args[i].to_string_lossy()))
        };
        while i < args.len() {
            match args[i].to_str() {
                Some("--control-fd") => {
                    control = Some(
                        value(i)?
                            .to_str()
                            .and_then(|v| v.parse().ok())
                            .ok_or("--control-fd needs a number")?,
                    );
                    i += 2;
                }
                Some("--listen") => {
                    let text = value(i)?.to_string_lossy().into_owned();
                    let (name, addr) = text.split_once('=').ok_or("--listen needs NAME=ADDRESS")?;
                    let addr = addr
                        .parse()
                        .map_err(|_| format!("--listen: `{addr}` is not an address"))?;
                    request.listen.push((name.to_string(), addr));
                    i += 2;
                }
                Some("--landlock") => {
                    let text = value(i)?.to_string_lossy().into_owned();
                    request.rules = Some(
                        serde_json::from_str(&text)
                            .map_err(|e| format!("--landlock: not the rules: {e}"))?,
                    );
                    i += 2;
                }
                Some("--limits") => {
                    request.limits = Some(Rlimits::parse(&value(i)?.to_string_lossy())?);
                    i += 2;
                }
                Some("--") => {
                    let program = args.get(i + 1).ok_or("no program after --")?;
                    request.program = program.clone();
                    request.args = args[i + 2..].to_vec();
                    return Ok((control, request));
                }
                _ => {
                    return Err(format!(
                        "unexpected argument `{}`",
                        args[i].to_string_lossy()
                    ));
                }
            }
        }
        Err("no program after --".into())
    }
}

/// The helper's `main`: never returns (it becomes the agent, or exits 126).
pub fn main(args: &[OsString]) -> ! {
    let reason = match run(args) {
        Ok(never) => match never {},
        Err(reason) => reason,
    };
    eprintln!("deep-review sandbox: {reason}");
    std::process::exit(FAILED);
}

fn run(args: &[OsString]) -> Result<std::convert::Infallible, String> {
    let (control, request) = Request::parse(args)?;
    if let Some(fd) = control {
        hand_over_listeners(fd, &request.listen)?;
    }
    if let Some(limits) = &request.limits {
        limits
            .apply_all()
            .map_err(|e| format!("could not set the agent's limits: {e}"))?;
    }
    landlock::drop_capabilities(landlock::last_capability())
        .map_err(|e| format!("could not drop capabilities: {e}"))?;
    if let Some(rules) = &request.rules {
        let ruleset = rules.build()?;
        landlock::enforce(ruleset).map_err(|e| format!("could not apply Landlock: {e}"))?;
    }
    restore_term()?;
    // What bwrap or the control socket's handover left open stays out of the agent.
    crate::dispatch::descriptors::close_from(crate::dispatch::descriptors::FIRST_AFTER_STDIO)
        .map_err(|e| format!("could not close deep-review's descriptors: {e}"))?;
    let err = std::process::Command::new(&request.program)
        .args(&request.args)
        .exec();
    Err(format!(
        "could not run `{}`: {err}",
        crate::text::printable_line(&request.program.to_string_lossy())
    ))
}

/// Gives TERM its default action again: deep-review started bwrap with TERM ignored (so that
/// the group's TERM does not kill bwrap and, with it, the whole sandbox at once), and an ignored
/// signal stays ignored across `exec`. The agent must see the TERM that asks it to stop.
fn restore_term() -> Result<(), String> {
    // SAFETY: a plain signal disposition change, before `exec`, in a single-threaded process.
    if unsafe { libc::signal(libc::SIGTERM, libc::SIG_DFL) } == libc::SIG_ERR {
        return Err(format!(
            "could not restore TERM: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Makes the listeners and sends them over descriptor `fd`, which is then closed.
fn hand_over_listeners(fd: i32, listen: &[(String, SocketAddr)]) -> Result<(), String> {
    // SAFETY: deep-review put the control socket at this number for the helper alone; it is
    // owned here from now on and closed when dropped.
    let control = UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut listeners = Vec::with_capacity(listen.len());
    for (name, addr) in listen {
        match std::net::TcpListener::bind(addr) {
            Ok(listener) => listeners.push((name.clone(), listener)),
            // IPv6 may be off in the sandbox's namespace; its IPv4 twin serves.
            Err(_) if addr.is_ipv6() => {}
            Err(e) => return Err(format!("could not listen on {addr}: {e}")),
        }
    }
    handoff::send(&control, &listeners).map_err(|e| format!("could not hand over the network: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_survives_its_command_line() {
        let request = Request {
            listen: vec![
                ("proxy".into(), "127.0.0.1:3128".parse().unwrap()),
                ("forward:4567".into(), "[::1]:4567".parse().unwrap()),
            ],
            rules: Some(Rules {
                read: vec!["/usr".into()],
                write: vec!["/tmp/x".into()],
                write_files: vec!["/dev/null".into()],
                connect_tcp: Some(vec![3128, 4567]),
            }),
            limits: Some(Rlimits {
                processes: 64,
                memory_bytes: 1 << 30,
                cpu_secs: 60,
            }),
            program: "/usr/bin/claude".into(),
            args: vec!["-p".into(), "--".into(), "x y".into()],
        };
        let args = request.to_args();
        assert_eq!(args[0], SUBCOMMAND);
        let (control, back) = Request::parse(&args[1..]).unwrap();
        assert_eq!(control, Some(handoff::CONTROL_FD));
        assert_eq!(back, request);
    }

    #[test]
    fn a_bad_request_is_refused_with_its_reason() {
        let args: Vec<OsString> = ["--listen", "proxy"].map(OsString::from).to_vec();
        assert!(Request::parse(&args).unwrap_err().contains("NAME=ADDRESS"));
        let args: Vec<OsString> = ["--landlock", "{}"].map(OsString::from).to_vec();
        assert!(Request::parse(&args).is_err());
    }
}
