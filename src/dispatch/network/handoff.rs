//! Listening sockets made inside an agent's network namespace and handed out to deep-review.
//!
//! A socket belongs to the network namespace it was made in, wherever it is used later. The
//! helper inside bwrap makes the agent's listeners on its own loopback (the proxy's port and the
//! forwarded local endpoints) and sends them over a socket pair that deep-review gave it
//! (`SCM_RIGHTS`), then closes its end and runs the agent. deep-review accepts on them from its
//! own tasks and connects out from the host's namespace: no process of deep-review's runs inside
//! the sandbox while the agent does, and the agent sees nothing but a proxy on `127.0.0.1`.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

/// The descriptor number the helper finds the control socket at.
pub const CONTROL_FD: i32 = 3;
/// The most listeners one agent gets (the proxy and its forwarded endpoints).
pub const MAX_LISTENERS: usize = 16;

/// Sends `listeners`, each with its name, in one message; the names go as the message's text,
/// one per line, in the order of the descriptors.
pub fn send(
    control: &UnixStream,
    listeners: &[(String, std::net::TcpListener)],
) -> std::io::Result<()> {
    if listeners.len() > MAX_LISTENERS {
        return Err(std::io::Error::other("too many listeners to hand over"));
    }
    let names: String = listeners.iter().map(|(n, _)| format!("{n}\n")).collect();
    let fds: Vec<_> = listeners.iter().map(|(_, l)| l.as_fd()).collect();
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_LISTENERS))];
    let mut control_buf = SendAncillaryBuffer::new(&mut space);
    if !control_buf.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other(
            "the listeners do not fit in one message",
        ));
    }
    let text = if names.is_empty() {
        "\n".to_string()
    } else {
        names
    };
    rustix::net::sendmsg(
        control,
        &[IoSlice::new(text.as_bytes())],
        &mut control_buf,
        SendFlags::empty(),
    )?;
    Ok(())
}

/// Receives the listeners the helper sent, waiting at most `timeout` (the helper starts in
/// milliseconds; a helper that died sends nothing and its end closes).
pub fn receive(
    control: &UnixStream,
    timeout: Duration,
) -> std::io::Result<Vec<(String, std::net::TcpListener)>> {
    let until = std::time::Instant::now() + timeout;
    let mut text = [0u8; 4096];
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_LISTENERS))];
    let mut control_buf = RecvAncillaryBuffer::new(&mut space);
    let got = loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        control.set_read_timeout(Some(left))?;
        // A socket with a receive timeout is not restarted after a signal (other agents'
        // processes ending send SIGCHLD all the time): wait again for what is left.
        match rustix::net::recvmsg(
            control,
            &mut [IoSliceMut::new(&mut text)],
            &mut control_buf,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Err(rustix::io::Errno::INTR) => continue,
            other => break other?,
        }
    };
    if got.bytes == 0 {
        return Err(std::io::Error::other(
            "the sandbox helper exited before it opened the network",
        ));
    }
    let mut fds: Vec<OwnedFd> = Vec::new();
    for message in control_buf.drain() {
        if let RecvAncillaryMessage::ScmRights(received) = message {
            fds.extend(received);
        }
    }
    let names = String::from_utf8_lossy(&text[..got.bytes]);
    let names: Vec<&str> = names.lines().filter(|l| !l.is_empty()).collect();
    if names.len() != fds.len() {
        return Err(std::io::Error::other(format!(
            "the sandbox helper sent {} names for {} sockets",
            names.len(),
            fds.len()
        )));
    }
    Ok(names
        .into_iter()
        .map(str::to_string)
        .zip(fds.into_iter().map(std::net::TcpListener::from))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_cross_the_socket_pair_and_still_accept() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        send(&theirs, &[("proxy".into(), listener)]).unwrap();
        drop(theirs);
        let got = receive(&ours, Duration::from_secs(5)).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, "proxy");
        assert_eq!(got[0].1.local_addr().unwrap(), addr);
        let _client = std::net::TcpStream::connect(addr).unwrap();
        got[0].1.accept().unwrap();
    }

    extern "C" fn ignore(_: libc::c_int) {}

    /// Other agents' processes end while one waits for its helper: SIGCHLD interrupts a receive
    /// with a timeout (the kernel does not restart it, SA_RESTART or not), and the wait goes on.
    #[test]
    fn a_signal_during_the_wait_does_not_lose_the_listeners() {
        // SAFETY: a handler that does nothing, for a signal this test sends to its own thread.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigaction(libc::SIGUSR2, &action, std::ptr::null_mut());
        }
        let (ours, theirs) = UnixStream::pair().unwrap();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            // SAFETY: pthread_self cannot fail.
            tid_tx.send(unsafe { libc::pthread_self() }).unwrap();
            receive(&ours, Duration::from_secs(10))
        });
        let thread = tid_rx.recv().unwrap();
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: the waiting thread is alive until it receives, which is after this loop.
            unsafe { libc::pthread_kill(thread, libc::SIGUSR2) };
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        send(&theirs, &[("proxy".into(), listener)]).unwrap();
        let got = waiter.join().unwrap().unwrap();
        assert_eq!(got.len(), 1);
    }

    #[test]
    fn a_helper_that_sent_nothing_is_an_error_not_a_hang() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        drop(theirs);
        let err = receive(&ours, Duration::from_secs(5)).unwrap_err();
        assert!(err.to_string().contains("exited"), "{err}");
    }
}
