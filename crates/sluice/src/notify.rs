//! systemd's notification protocol (`sd_notify(3)`): readiness for `Type=notify`, status
//! lines for `systemctl status`, and watchdog pings for `WatchdogSec=`.
//!
//! The protocol is one datagram of `KEY=value` lines to the `AF_UNIX` socket named by
//! `NOTIFY_SOCKET` (a path, or `@name` for an abstract socket). It is written here rather than
//! taken from a crate because the crates read `NOTIFY_SOCKET`/`WATCHDOG_USEC` from the process
//! environment themselves, and sluice reads every variable through one seam
//! ([`crate::env::Env`] → [`crate::config::ServiceEnv`]).
//!
//! Outside systemd (no `NOTIFY_SOCKET`) every call is a no-op. A failed send is logged once
//! and never stops the daemon: notification is advisory, delivery of events is not.
//!
//! The watchdog ping comes from a task on the daemon's async runtime, at half the interval
//! systemd asks for: if the runtime that serves the listeners, the output and the status
//! server stops making progress, the pings stop and systemd restarts the service.

use std::io;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::config::ServiceEnv;

/// A connection to the service manager's notification socket, or nothing.
#[derive(Clone, Debug, Default)]
pub struct Notifier {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    socket: UnixDatagram,
    addr: SocketAddr,
    watchdog: Option<Duration>,
    warned: AtomicBool,
}

impl Notifier {
    /// A notifier for `NOTIFY_SOCKET`, or a no-op one when it is unset. An address that
    /// cannot be used is an error naming the variable.
    pub fn new(service: &ServiceEnv) -> io::Result<Notifier> {
        let Some(name) = &service.notify_socket else {
            return Ok(Notifier::default());
        };
        let addr = socket_addr(name)
            .map_err(|e| io::Error::new(e.kind(), format!("NOTIFY_SOCKET={name:?}: {e}")))?;
        let socket = UnixDatagram::unbound()?;
        Ok(Notifier {
            inner: Some(Arc::new(Inner {
                socket,
                addr,
                watchdog: service.watchdog,
                warned: AtomicBool::new(false),
            })),
        })
    }

    /// Whether there is a service manager to notify.
    pub fn enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Startup is complete: every listener is bound and the output is running.
    pub fn ready(&self, status: &str) {
        self.send(&format!("READY=1\nSTATUS={}", one_line(status)));
    }

    /// Shutdown has begun (systemd shows the unit as deactivating while sluice drains).
    pub fn stopping(&self, status: &str) {
        self.send(&format!("STOPPING=1\nSTATUS={}", one_line(status)));
    }

    /// A free-form line for `systemctl status`.
    pub fn status(&self, status: &str) {
        self.send(&format!("STATUS={}", one_line(status)));
    }

    /// The watchdog interval systemd asked for, if any.
    pub fn watchdog(&self) -> Option<Duration> {
        self.inner.as_ref().and_then(|i| i.watchdog)
    }

    /// One watchdog ping.
    pub fn ping(&self) {
        self.send("WATCHDOG=1");
    }

    /// Pings the watchdog from the current tokio runtime at half the requested interval,
    /// for as long as the runtime lives. Nothing when no watchdog was asked for.
    pub fn spawn_watchdog(&self) -> Option<tokio::task::JoinHandle<()>> {
        let every = self.watchdog()? / 2;
        let me = self.clone();
        Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                me.ping();
            }
        }))
    }

    fn send(&self, message: &str) {
        let Some(inner) = &self.inner else { return };
        if let Err(e) = inner.socket.send_to_addr(message.as_bytes(), &inner.addr)
            && !inner.warned.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(
                error = %e,
                "cannot notify the service manager (NOTIFY_SOCKET); readiness and watchdog \
                 pings may be missing (logged once)"
            );
        }
    }
}

fn socket_addr(name: &str) -> io::Result<SocketAddr> {
    match name.strip_prefix('@') {
        Some(abstract_name) => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(abstract_name.as_bytes())
        }
        None if name.starts_with('/') => SocketAddr::from_pathname(name),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "expected an absolute path or @abstract-name",
        )),
    }
}

/// A status is one line of the datagram: newlines would start new (bogus) assignments.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(dir: &std::path::Path) -> (UnixDatagram, String) {
        let path = dir.join("notify.sock");
        let sock = UnixDatagram::bind(&path).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (sock, path.display().to_string())
    }

    fn recv(sock: &UnixDatagram) -> String {
        let mut buf = [0u8; 512];
        let n = sock.recv(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    fn tempdir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("sluice-notify-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn sends_readiness_status_and_stopping_to_a_path_socket() {
        let dir = tempdir("path");
        let (sock, path) = listener(&dir);
        let n = Notifier::new(&ServiceEnv {
            notify_socket: Some(path),
            ..ServiceEnv::default()
        })
        .unwrap();
        assert!(n.enabled());
        n.ready("listening on 3 ports\nsecond line");
        assert_eq!(
            recv(&sock),
            "READY=1\nSTATUS=listening on 3 ports second line"
        );
        n.status("draining");
        assert_eq!(recv(&sock), "STATUS=draining");
        n.stopping("stopping");
        assert_eq!(recv(&sock), "STOPPING=1\nSTATUS=stopping");
        n.ping();
        assert_eq!(recv(&sock), "WATCHDOG=1");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn abstract_socket_names_start_with_at() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("sluice-notify-test-{}", std::process::id());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let sock = UnixDatagram::bind_addr(&addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let n = Notifier::new(&ServiceEnv {
            notify_socket: Some(format!("@{name}")),
            ..ServiceEnv::default()
        })
        .unwrap();
        n.ready("ok");
        assert_eq!(recv(&sock), "READY=1\nSTATUS=ok");
    }

    #[test]
    fn without_a_socket_nothing_is_sent_and_nothing_fails() {
        let n = Notifier::new(&ServiceEnv::default()).unwrap();
        assert!(!n.enabled());
        n.ready("x");
        n.ping();
        assert!(n.watchdog().is_none());
    }

    #[test]
    fn a_relative_socket_name_is_an_error_naming_the_variable() {
        let e = Notifier::new(&ServiceEnv {
            notify_socket: Some("notify.sock".into()),
            ..ServiceEnv::default()
        })
        .unwrap_err();
        assert!(
            e.to_string().starts_with("NOTIFY_SOCKET=\"notify.sock\""),
            "{e}"
        );
    }

    #[test]
    fn a_gone_manager_does_not_fail_the_daemon() {
        let dir = tempdir("gone");
        let (sock, path) = listener(&dir);
        let n = Notifier::new(&ServiceEnv {
            notify_socket: Some(path),
            ..ServiceEnv::default()
        })
        .unwrap();
        drop(sock);
        n.ready("nobody listens");
        n.ping();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[tokio::test]
    async fn the_watchdog_pings_at_half_the_interval() {
        let dir = tempdir("wd");
        let (sock, path) = listener(&dir);
        sock.set_nonblocking(true).unwrap();
        let n = Notifier::new(&ServiceEnv {
            notify_socket: Some(path),
            watchdog: Some(Duration::from_millis(400)),
            ..ServiceEnv::default()
        })
        .unwrap();
        let task = n.spawn_watchdog().expect("a watchdog was asked for");
        // The first tick is immediate, then one per 200 ms: 6 in 1.1 s. A loaded machine
        // may delay some, but systemd's deadline is the full interval, so at least 3 must come.
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        task.abort();
        let mut pings = 0;
        let mut buf = [0u8; 64];
        while let Ok(k) = sock.recv(&mut buf) {
            assert_eq!(&buf[..k], b"WATCHDOG=1");
            pings += 1;
        }
        assert!(
            (3..=7).contains(&pings),
            "{pings} pings in 1.1 s at a 400 ms watchdog"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
