//! Nothing of an agent outlives deep-review, where the kernel has no `PR_SET_PDEATHSIG` (macOS).
//!
//! On Linux the child asks the kernel for SIGKILL when deep-review goes, and bwrap's PID
//! namespace takes every process of the agent with it. macOS has neither. deep-review kills an
//! agent's process group when its run ends, times out or is cancelled, but a deep-review killed
//! by SIGKILL (or crashing) runs no code. So a tiny watcher process, started once, holds the
//! read end of a pipe whose write end only deep-review holds (close-on-exec: no agent inherits
//! it). deep-review writes `+PGID` when it starts an agent's group and `-PGID` when that group
//! is gone. When deep-review exits in any way, the kernel closes the write end: the watcher
//! reads end-of-file and kills every group still listed, then exits. This is the kqueue
//! `NOTE_EXIT` watch the issue suggests, done with what POSIX gives every platform: a pipe's
//! end-of-file is the parent's death, delivered by the kernel, with no polling and no race with
//! a reused pid (the watcher never looks deep-review up by pid).
//!
//! The watcher is `/bin/sh` running [`WATCHER_SCRIPT`] (in every macOS and Linux install), in a
//! session of its own and deaf to the terminal's INT and HUP, so a Ctrl-C that stops
//! deep-review does not stop it first. A group that ends on its own is taken off the list, so a
//! later process that reuses the number is never killed.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// The watcher: reads `+PGID` and `-PGID` lines; at end-of-file, kills what is listed.
pub const WATCHER_SCRIPT: &str = r#"trap '' INT HUP TERM
live=' '
while IFS= read -r line; do
  case "$line" in
    +[0-9]*) live="$live${line#+} " ;;
    -[0-9]*) live=$(printf '%s' "$live" | sed "s/ ${line#-} / /g") ;;
  esac
done
for pgid in $live; do kill -KILL "-$pgid" 2>/dev/null; done
"#;

/// The running watcher of this process, started at the first group registered.
static WATCHER: Mutex<Option<Watcher>> = Mutex::new(None);

/// A watcher process and the write end of its pipe.
pub struct Watcher {
    child: Child,
    input: ChildStdin,
}

impl Watcher {
    /// Starts a watcher in a session of its own.
    pub fn start() -> std::io::Result<Watcher> {
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", WATCHER_SCRIPT])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: setsid is async-signal-safe and touches no memory.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        let input = child
            .stdin
            .take()
            .ok_or_else(|| std::io::Error::other("the watcher has no input"))?;
        Ok(Watcher { child, input })
    }

    /// Lists `pgid` to be killed if deep-review ends while it runs.
    pub fn register(&mut self, pgid: i32) -> std::io::Result<()> {
        writeln!(self.input, "+{pgid}")
    }

    /// Takes `pgid` off the list: it is gone.
    pub fn unregister(&mut self, pgid: i32) -> std::io::Result<()> {
        writeln!(self.input, "-{pgid}")
    }

    /// Closes the pipe as deep-review's exit would, and waits for the watcher to have killed
    /// what was listed.
    pub fn finish(self) -> std::io::Result<std::process::ExitStatus> {
        let Watcher { mut child, input } = self;
        drop(input);
        child.wait()
    }
}

/// Lists `pgid` with this process's watcher, starting it on first use. Where the platform's
/// child set-up ties the agent to deep-review already (Linux), nothing is started.
pub fn register(pgid: i32) {
    if !super::platform::NEEDS_WATCHER {
        return;
    }
    let Ok(mut watcher) = WATCHER.lock() else {
        return;
    };
    if watcher.is_none() {
        *watcher = Watcher::start().ok();
    }
    if let Some(w) = watcher.as_mut()
        && w.register(pgid).is_err()
    {
        *watcher = None;
    }
}

/// Takes `pgid` off this process's watcher's list.
pub fn unregister(pgid: i32) {
    if !super::platform::NEEDS_WATCHER {
        return;
    }
    if let Ok(mut watcher) = WATCHER.lock()
        && let Some(w) = watcher.as_mut()
    {
        let _ = w.unregister(pgid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A process group of its own that sleeps: its pgid.
    fn sleeping_group() -> Child {
        let mut command = Command::new("sleep");
        command.arg("300");
        // SAFETY: setsid only.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        command.spawn().unwrap()
    }

    /// Whether `child` was ended by SIGKILL, waiting up to 10 s for it to end at all.
    fn killed(child: &mut Child) -> bool {
        use std::os::unix::process::ExitStatusExt;
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Some(status) = child.try_wait().unwrap() {
                return status.signal() == Some(libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The pipe closing (what deep-review's death does) kills a listed group and spares one
    /// taken off the list.
    #[test]
    fn the_watcher_kills_listed_groups_when_its_pipe_closes() {
        let mut listed = sleeping_group();
        let mut spared = sleeping_group();
        let mut watcher = Watcher::start().unwrap();
        watcher.register(listed.id() as i32).unwrap();
        watcher.register(spared.id() as i32).unwrap();
        watcher.unregister(spared.id() as i32).unwrap();
        assert!(watcher.finish().unwrap().success());
        assert!(killed(&mut listed), "the listed group outlived its parent");
        assert!(
            spared.try_wait().unwrap().is_none(),
            "a group taken off the list was killed"
        );
        spared.kill().unwrap();
        spared.wait().unwrap();
    }
}
