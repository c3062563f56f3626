//! One connection: its socket, its send loop and its orderly close.
//!
//! * UDP: a connected [`UdpSender`]; each burst is one `sendmmsg`. A failed call (e.g.
//!   `ECONNREFUSED` after an ICMP port unreachable because nothing listens) is counted and
//!   the same messages are offered again after [`TICK`](super::pacer::TICK), so the
//!   sequence numbers the receiver sees stay contiguous for what was sent.
//! * TCP / TLS: the burst's messages are one contiguous buffer written with as few `write`
//!   calls as the kernel allows (`TCP_NODELAY` stays off, as for any bulk sender). A write
//!   error ends the connection: whole messages written before it are counted as sent. A
//!   receiver that stops reading blocks the sender (that is TCP backpressure, and part of
//!   what is measured) until a stop is requested or [`CLOSE_WAIT`] after the end of the
//!   duration; then the connection ends with a "stopped reading" error and the partly written
//!   message is not counted.
//! * Close: TCP half-closes and reads until the receiver closes (at most
//!   [`CLOSE_WAIT`]), so that no unread byte in our receive buffer turns the close into a
//!   reset that could discard data the receiver has not read yet; TLS first sends
//!   `close_notify` and drains the server's post-handshake messages the same way.

use std::{
    io::{self, Read, Write},
    net::{IpAddr, Shutdown, SocketAddr, TcpStream},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use rustls::{ClientConfig, ClientConnection, StreamOwned, pki_types::ServerName};
use sluice_net::{NetError, UdpSender, UdpSenderConfig};
use socket2::{Domain, Protocol, Socket, Type};

use super::{
    ConnectionReport, LoggenError, Transport,
    message::Messages,
    pacer::{Pacer, TICK},
};

/// How long a TCP connect or a TLS handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the close waits for the receiver to close its side.
pub(crate) const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// The longest single sleep, so a stop request or the deadline is noticed promptly.
const MAX_SLEEP: Duration = Duration::from_millis(50);
/// `SO_SNDTIMEO` of stream sockets: how often a blocked write looks at the stop conditions.
const WRITE_CHECK: Duration = Duration::from_millis(200);

/// An open connection of any transport.
#[derive(Debug)]
pub(crate) enum Link {
    Udp(UdpSender),
    Tcp(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// The TLS client settings shared by all connections.
#[derive(Debug, Clone)]
pub(crate) struct TlsClient {
    pub(crate) config: Arc<ClientConfig>,
    pub(crate) name: ServerName<'static>,
}

/// `io::Error`'s text without the `(os error N)` suffix, starting in lower case, so it reads
/// well after a colon.
pub(crate) fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => &text[..i],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn source_addr(source: Option<IpAddr>) -> Option<SocketAddr> {
    source.map(|ip| SocketAddr::new(ip, 0))
}

/// Open one connection to `dest`, from `source` when given (bound before connecting).
pub(crate) fn connect(
    transport: Transport,
    dest: SocketAddr,
    source: Option<IpAddr>,
    tls: Option<&TlsClient>,
) -> Result<Link, LoggenError> {
    let connect_err = |e: &io::Error| LoggenError::Connect {
        addr: dest,
        transport: transport.label(),
        reason: describe(e),
    };
    match transport {
        Transport::Udp => {
            let cfg = UdpSenderConfig {
                dest,
                bind: source_addr(source),
                sndbuf: None,
            };
            UdpSender::connect(&cfg)
                .map(Link::Udp)
                .map_err(|e| match e {
                    NetError::Bind {
                        addr, ref cause, ..
                    } => LoggenError::BindSource {
                        addr,
                        reason: describe(cause),
                    },
                    other => LoggenError::Connect {
                        addr: dest,
                        transport: transport.label(),
                        reason: match other.io_error() {
                            Some(io) => describe(io),
                            None => other.to_string(),
                        },
                    },
                })
        }
        Transport::Tcp | Transport::TcpOctet | Transport::Tls => {
            let socket = Socket::new(Domain::for_address(dest), Type::STREAM, Some(Protocol::TCP))
                .map_err(|e| connect_err(&e))?;
            if let Some(addr) = source_addr(source) {
                socket
                    .bind(&addr.into())
                    .map_err(|e| LoggenError::BindSource {
                        addr,
                        reason: describe(&e),
                    })?;
            }
            socket
                .connect_timeout(&dest.into(), CONNECT_TIMEOUT)
                .map_err(|e| connect_err(&e))?;
            // Bulk sender: let the kernel coalesce; our writes are already large.
            socket.set_tcp_nodelay(false).map_err(|e| connect_err(&e))?;
            socket
                .set_write_timeout(Some(WRITE_CHECK))
                .map_err(|e| connect_err(&e))?;
            let stream: TcpStream = socket.into();
            match (transport, tls) {
                (Transport::Tls, Some(tls)) => handshake(stream, dest, tls),
                (Transport::Tls, None) => Err(LoggenError::Tls {
                    what: format!("connect to {dest} over TLS"),
                    reason: "no TLS client settings (internal error)".to_owned(),
                }),
                _ => Ok(Link::Tcp(stream)),
            }
        }
    }
}

fn handshake(mut tcp: TcpStream, dest: SocketAddr, tls: &TlsClient) -> Result<Link, LoggenError> {
    let fail = |reason: String| LoggenError::Tls {
        what: format!("complete the TLS handshake with {dest}"),
        reason,
    };
    let mut conn = ClientConnection::new(tls.config.clone(), tls.name.clone())
        .map_err(|e| fail(e.to_string()))?;
    tcp.set_read_timeout(Some(CONNECT_TIMEOUT))
        .and_then(|()| tcp.set_write_timeout(Some(CONNECT_TIMEOUT)))
        .map_err(|e| fail(describe(&e)))?;
    while conn.is_handshaking() {
        match conn.complete_io(&mut tcp) {
            Ok((0, 0)) => return Err(fail("the server closed the connection".to_owned())),
            Ok(_) => {}
            Err(e) => return Err(fail(describe(&e))),
        }
    }
    tcp.set_read_timeout(None)
        .and_then(|()| tcp.set_write_timeout(Some(WRITE_CHECK)))
        .map_err(|e| fail(describe(&e)))?;
    Ok(Link::Tls(Box::new(StreamOwned::new(conn, tcp))))
}

impl Link {
    pub(crate) fn local_addr(&self) -> Option<SocketAddr> {
        match self {
            Link::Udp(s) => s.local_addr().ok(),
            Link::Tcp(s) => s.local_addr().ok(),
            Link::Tls(s) => s.get_ref().local_addr().ok(),
        }
    }

    fn is_stream(&self) -> bool {
        !matches!(self, Link::Udp(_))
    }

    /// Send the first `n` prepared messages. `Ok(k)`: the first `k` were sent (UDP may
    /// accept fewer than `n`); `Err((k, e))`: the first `k` were sent, then `e`.
    fn send(
        &mut self,
        msgs: &Messages<'_>,
        n: usize,
        give_up: &dyn Fn() -> bool,
    ) -> Result<usize, (usize, io::Error)> {
        match self {
            Link::Udp(s) => {
                let datagrams: Vec<&[u8]> = (0..n).map(|i| msgs.message(i)).collect();
                s.send_batch(&datagrams).map_err(|e| (0, e))
            }
            Link::Tcp(s) => write_messages(s, msgs, n, give_up),
            Link::Tls(s) => write_messages(s.as_mut(), msgs, n, give_up),
        }
    }

    /// Close in order (see module docs); an error means data may not have left.
    fn finish(self) -> Option<io::Error> {
        match self {
            Link::Udp(_) => None,
            Link::Tcp(mut s) => {
                if let Err(e) = s.shutdown(Shutdown::Write) {
                    return Some(e);
                }
                drain(&mut s, |s| s);
                None
            }
            Link::Tls(mut s) => {
                s.conn.send_close_notify();
                if let Err(e) = s.flush() {
                    return Some(e);
                }
                if let Err(e) = s.sock.shutdown(Shutdown::Write) {
                    return Some(e);
                }
                drain(s.as_mut(), |s| &mut s.sock);
                None
            }
        }
    }
}

/// Write the first `n` prepared messages; a write that times out (the receiver is not
/// reading) is retried until `give_up` says otherwise.
fn write_messages<W: Write>(
    w: &mut W,
    msgs: &Messages<'_>,
    n: usize,
    give_up: &dyn Fn() -> bool,
) -> Result<usize, (usize, io::Error)> {
    let buf = msgs.contiguous(n);
    let mut off = 0;
    while off < buf.len() {
        match w.write(&buf[off..]) {
            Ok(0) => {
                let e = io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the connection accepts no more data",
                );
                return Err((msgs.complete_in(off), e));
            }
            Ok(k) => off += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if give_up() {
                    let e = io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the receiver stopped reading (a write was still blocked when the run ended)",
                    );
                    return Err((msgs.complete_in(off), e));
                }
            }
            Err(e) => return Err((msgs.complete_in(off), e)),
        }
    }
    Ok(n)
}

/// Read and discard until EOF, an error, or [`CLOSE_WAIT`].
fn drain<R: Read>(r: &mut R, tcp: impl Fn(&mut R) -> &mut TcpStream) {
    let deadline = Instant::now() + CLOSE_WAIT;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || tcp(r).set_read_timeout(Some(left)).is_err() {
            return;
        }
        match r.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// What one connection sends and when it stops.
#[derive(Debug)]
pub(crate) struct Job<'a> {
    pub(crate) thread: u32,
    pub(crate) link: Link,
    pub(crate) messages: Messages<'a>,
    pub(crate) rate: u64,
    pub(crate) count: Option<u64>,
    pub(crate) duration: Option<Duration>,
    pub(crate) batch: usize,
    /// Messages sent so far, read by the progress printer.
    pub(crate) progress: &'a AtomicU64,
    pub(crate) stop: &'a AtomicBool,
    pub(crate) abort: &'a AtomicBool,
}

/// Run the send loop, then close. Returns the report and when sending ended (before the
/// close, so the close's wait does not count as sending time).
pub(crate) fn drive(job: Job<'_>) -> (ConnectionReport, Instant) {
    let Job {
        thread,
        mut link,
        mut messages,
        rate,
        count,
        duration,
        batch,
        progress,
        stop,
        abort,
    } = job;
    let mut report = ConnectionReport {
        thread,
        local_addr: link.local_addr(),
        sent: 0,
        bytes: 0,
        lagged: 0,
        errors: 0,
        first_error: None,
    };
    let mut pacer = Pacer::new(rate, duration);
    let t0 = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed) {
            break;
        }
        let left = count.map_or(u64::MAX, |c| c.saturating_sub(report.sent));
        if left == 0 {
            break;
        }
        let elapsed = t0.elapsed();
        let over = duration.is_some_and(|d| elapsed >= d);
        if over && rate == 0 {
            break;
        }
        let available = pacer.available(elapsed);
        if available == 0 {
            if over {
                break;
            }
            std::thread::sleep(pacer.wait(elapsed).min(MAX_SLEEP));
            continue;
        }
        let want = usize::try_from(available.min(left))
            .unwrap_or(usize::MAX)
            .min(batch);
        let n = messages.prepare(want, unix_now());
        let give_up = || {
            stop.load(Ordering::Relaxed)
                || abort.load(Ordering::Relaxed)
                || duration.is_some_and(|d| t0.elapsed() >= d + CLOSE_WAIT)
        };
        let (k, err) = match link.send(&messages, n, &give_up) {
            Ok(k) => (k, None),
            Err((k, e)) => (k, Some(e)),
        };
        if k > 0 {
            report.sent += k as u64;
            report.bytes += messages.contiguous(k).len() as u64;
            messages.advance(k);
            pacer.take(k as u64);
            progress.store(report.sent, Ordering::Relaxed);
        }
        if let Some(e) = err {
            report.errors += 1;
            if report.first_error.is_none() {
                report.first_error = Some(describe(&e));
            }
            if link.is_stream() {
                break;
            }
            std::thread::sleep(TICK);
        }
    }
    let ended = Instant::now();
    report.lagged = pacer.lagged();
    if let Some(e) = link.finish() {
        report.errors += 1;
        if report.first_error.is_none() {
            report.first_error = Some(format!("closing: {}", describe(&e)));
        }
    }
    (report, ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_reads_well_after_a_colon() {
        let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(describe(&e), "connection refused");
        let e = io::Error::other("Weird thing");
        assert_eq!(describe(&e), "weird thing");
    }
}
