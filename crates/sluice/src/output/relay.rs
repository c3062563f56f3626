//! The syslog relays: SC4S's `SC4S_DEST_SYSLOG_<ID>_*` and `SC4S_DEST_BSD_<ID>_*`
//! destinations, over UDP, TCP or TLS.
//!
//! The batches this output gets are already relay lines (the receivers encode them beside the
//! HEC event, [`sluice_proto::event::encode_relay`]); it frames and writes them, one
//! connection per destination as syslog-ng's `syslog()` / `network()` drivers have:
//!
//! * framed RFC 5424 on a stream (`_IETF=yes`, syslog-ng's `syslog()`): `LEN SP line LF`,
//!   the length counting the line feed, as syslog-ng writes it;
//! * everything else: `line LF` (one datagram per event over UDP).
//!
//! **What "delivered" means.** A batch completes `Delivered` when every byte of it was handed
//! to the kernel: over TCP/TLS after the write (and the TLS flush) returned, over UDP once
//! every datagram was sent. Syslog has no acknowledgement, so that is all a sender can know,
//! syslog-ng included: a target that dies with bytes in its socket buffer loses them. Before
//! each batch the output checks that the target has not closed the connection (a read that
//! finds the end of the stream), so an idle connection the target closed is replaced instead
//! of written into and lost.
//!
//! **Failures.** Name resolution, connect, TLS handshake, write and timeouts close the
//! connection; the batch is retried on a new one with a backoff (0.5 s doubling to 10 s,
//! SC4S's `time_reopen(10)`), or, when it lives only in memory and the destination's disk
//! buffer has room, handed back (`Retry`) for the buffer to keep and replay. A batch that
//! failed part way is sent again whole: at least once. A line too large for a UDP datagram
//! is refused for good (`Rejected`, counted); syslog-ng drops it too. An empty line is an
//! event the relay's filter dropped (`ForwardFiltered`).

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::pki_types::ServerName;
use sluice_proto::batch::EncodedBatch;
use sluice_proto::delivery::{AbandonReason, Completion, Delivery, Rejection, RetryReason};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpStream, UdpSocket};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_util::sync::CancellationToken;

use super::start::{Limits, Started, start_forwarding};
use super::{Output, OutputTask};
use crate::config::{DestPlan, RelayDestination, RelayFilter, RelayKind, RelayTransport};
use crate::telemetry::InternalEvent;
use crate::telemetry::events::{
    ForwardConnected, ForwardEvents, ForwardFailed, ForwardFiltered, ForwardRefused, ForwardSent,
};

/// The largest UDP payload (IPv4; IPv6 allows 20 bytes more, which no syslog line needs).
const MAX_DATAGRAM: usize = 65_507;
const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// Whether a failing batch that lives only in memory may be handed back to the buffer.
type HandBack = Arc<OnceLock<Box<dyn Fn() -> bool + Send + Sync>>>;

/// A relay destination's output.
pub struct RelayOutput {
    host: String,
    port: u16,
    transport: RelayTransport,
    framed: bool,
    kind: RelayKind,
    tls: Option<(TlsConnector, ServerName<'static>)>,
    connect_timeout: Duration,
    write_timeout: Duration,
    hand_back: HandBack,
    events: Arc<ForwardEvents>,
}

impl std::fmt::Debug for RelayOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayOutput")
            .field("target", &format_args!("{}:{}", self.host, self.port))
            .field("transport", &self.transport)
            .field("framed", &self.framed)
            .finish()
    }
}

/// Why a send failed: the `kind` label and the words for the log.
#[derive(Debug)]
struct Failure {
    kind: &'static str,
    error: String,
}

impl Failure {
    fn new(kind: &'static str, error: impl std::fmt::Display) -> Failure {
        Failure {
            kind,
            error: error.to_string(),
        }
    }

    fn reason(&self) -> RetryReason {
        match self.kind {
            "resolve" | "connect" | "tls" => RetryReason::Unreachable,
            "timeout" => RetryReason::Timeout,
            _ => RetryReason::Other,
        }
    }
}

enum Conn {
    Udp(UdpSocket),
    Tcp(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl RelayOutput {
    /// The output of destination `name`; TLS settings are checked now, so a bad CA file or
    /// cipher string is a startup error naming the setting.
    pub fn new(
        name: &str,
        id: &str,
        cfg: &RelayDestination,
        events: Arc<ForwardEvents>,
    ) -> anyhow::Result<RelayOutput> {
        let prefix = RelayDestination::var_prefix(cfg.kind, id);
        let tls = match cfg.transport {
            RelayTransport::Tls => {
                let config = client_tls(cfg, &prefix)
                    .map_err(|e| anyhow::anyhow!("destination {name}: {e}"))?;
                let server = ServerName::try_from(cfg.host.clone()).map_err(|e| {
                    anyhow::anyhow!(
                        "destination {name}: {prefix}HOST={:?} is not a name TLS can check: {e}",
                        cfg.host
                    )
                })?;
                Some((TlsConnector::from(config), server))
            }
            _ => None,
        };
        Ok(RelayOutput {
            host: cfg.host.clone(),
            port: cfg.port(),
            transport: cfg.transport,
            framed: cfg.framed(),
            kind: cfg.kind,
            tls,
            connect_timeout: cfg.connect_timeout,
            write_timeout: cfg.write_timeout,
            hand_back: Arc::new(OnceLock::new()),
            events,
        })
    }

    /// Lets a failing in-memory batch go back to the destination's disk buffer while `may`
    /// says so (it has room), instead of being retried here.
    pub fn hand_back_when(&self, may: impl Fn() -> bool + Send + Sync + 'static) {
        let _ = self.hand_back.set(Box::new(may));
    }

    /// A handle on the same hand-back setting, for after the output moved into its task.
    pub fn hand_back_handle(&self) -> impl Fn(Box<dyn Fn() -> bool + Send + Sync>) + use<> {
        let h = Arc::clone(&self.hand_back);
        move |may| {
            let _ = h.set(may);
        }
    }

    async fn run_inner(self, queue: async_channel::Receiver<Delivery>, abort: CancellationToken) {
        let mut conn: Option<Conn> = None;
        let mut wire = Vec::new();
        let mut backoff = BACKOFF_FIRST;
        loop {
            let d = tokio::select! {
                d = queue.recv() => match d {
                    Ok(d) => d,
                    Err(_) => return,
                },
                () = abort.cancelled() => return,
            };
            loop {
                match self.deliver(&mut conn, d.batch(), &mut wire).await {
                    Ok(done) => {
                        backoff = BACKOFF_FIRST;
                        d.complete(done);
                        break;
                    }
                    Err(f) => {
                        conn = None;
                        ForwardFailed {
                            kind: f.kind,
                            error: &f.error,
                            events: d.events(),
                            retry_in: backoff,
                        }
                        .emit(&self.events);
                        let may = self.hand_back.get().is_some_and(|m| m());
                        if !d.is_persisted() && may {
                            d.complete(Completion::Retry {
                                after: backoff,
                                reason: f.reason(),
                            });
                            backoff = (backoff * 2).min(BACKOFF_MAX);
                            break;
                        }
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            () = abort.cancelled() => {
                                d.complete(Completion::Abandoned { reason: AbandonReason::Shutdown });
                                return;
                            }
                        }
                        backoff = (backoff * 2).min(BACKOFF_MAX);
                    }
                }
            }
        }
    }

    /// Sends one batch on `conn` (connecting first when there is none).
    async fn deliver(
        &self,
        conn: &mut Option<Conn>,
        batch: &EncodedBatch,
        wire: &mut Vec<u8>,
    ) -> Result<Completion, Failure> {
        if conn.as_ref().is_some_and(peer_closed) {
            *conn = None;
        }
        if conn.is_none() {
            *conn = Some(self.connect().await?);
        }
        let Some(c) = conn.as_mut() else {
            return Err(Failure::new("connect", "no connection"));
        };
        let mut filtered = 0u64;
        let mut refused = Vec::new();
        let mut sent = 0u64;
        wire.clear();
        match c {
            Conn::Udp(sock) => {
                for i in 0..batch.events() {
                    let line = batch.event(i).unwrap_or_default();
                    if line.is_empty() {
                        filtered += 1;
                        continue;
                    }
                    if line.len() + 1 > MAX_DATAGRAM {
                        refused.push(i);
                        continue;
                    }
                    wire.clear();
                    wire.extend_from_slice(line);
                    wire.push(b'\n');
                    let n = tokio::time::timeout(self.write_timeout, sock.send(wire))
                        .await
                        .map_err(|_| Failure::new("timeout", "sending a datagram timed out"))?
                        .map_err(|e| Failure::new("write", e))?;
                    if n != wire.len() {
                        return Err(Failure::new("write", "a datagram was cut short"));
                    }
                    sent += wire.len() as u64;
                }
            }
            Conn::Tcp(_) | Conn::Tls(_) => {
                for i in 0..batch.events() {
                    let line = batch.event(i).unwrap_or_default();
                    if line.is_empty() {
                        filtered += 1;
                        continue;
                    }
                    if self.framed {
                        wire.extend_from_slice(
                            itoa::Buffer::new().format(line.len() + 1).as_bytes(),
                        );
                        wire.push(b' ');
                    }
                    wire.extend_from_slice(line);
                    wire.push(b'\n');
                }
                let write = async {
                    match c {
                        Conn::Tcp(s) => s.write_all(wire).await,
                        Conn::Tls(s) => {
                            s.write_all(wire).await?;
                            s.flush().await
                        }
                        Conn::Udp(_) => Ok(()),
                    }
                };
                tokio::time::timeout(self.write_timeout, write)
                    .await
                    .map_err(|_| {
                        Failure::new(
                            "timeout",
                            format!(
                                "the target took no data for {:?} (its receive window is full)",
                                self.write_timeout
                            ),
                        )
                    })?
                    .map_err(|e| Failure::new("write", e))?;
                sent = wire.len() as u64;
            }
        }
        let delivered = u64::from(batch.events()) - filtered - refused.len() as u64;
        ForwardSent {
            events: delivered,
            bytes: sent,
        }
        .emit(&self.events);
        ForwardFiltered {
            events: filtered,
            reason: "empty_message",
        }
        .emit(&self.events);
        if refused.is_empty() {
            return Ok(Completion::Delivered);
        }
        let text = format!("larger than a UDP datagram ({MAX_DATAGRAM} bytes)");
        ForwardRefused {
            events: refused.len() as u64,
            reason: "too_large",
            detail: &text,
        }
        .emit(&self.events);
        Ok(Completion::Rejected {
            events: refused
                .into_iter()
                .map(|index| Rejection {
                    index,
                    code: None,
                    text: text.clone(),
                })
                .collect(),
        })
    }

    async fn connect(&self) -> Result<Conn, Failure> {
        let target = format!("{}:{}", self.host, self.port);
        let addrs: Vec<SocketAddr> = tokio::time::timeout(
            self.connect_timeout,
            tokio::net::lookup_host((self.host.as_str(), self.port)),
        )
        .await
        .map_err(|_| Failure::new("timeout", format!("resolving {} timed out", self.host)))?
        .map_err(|e| Failure::new("resolve", format!("cannot resolve {}: {e}", self.host)))?
        .collect();
        let mut last = Failure::new("resolve", format!("{} has no address", self.host));
        for addr in addrs {
            let attempt =
                async {
                    match self.transport {
                        RelayTransport::Udp => {
                            let local: SocketAddr = if addr.is_ipv4() {
                                "0.0.0.0:0"
                                    .parse()
                                    .map_err(|e| Failure::new("connect", e))?
                            } else {
                                "[::]:0".parse().map_err(|e| Failure::new("connect", e))?
                            };
                            let sock = UdpSocket::bind(local)
                                .await
                                .map_err(|e| Failure::new("connect", e))?;
                            sock.connect(addr)
                                .await
                                .map_err(|e| Failure::new("connect", e))?;
                            Ok(Conn::Udp(sock))
                        }
                        RelayTransport::Tcp | RelayTransport::Tls => {
                            let tcp = tokio::time::timeout(
                                self.connect_timeout,
                                TcpStream::connect(addr),
                            )
                            .await
                            .map_err(|_| {
                                Failure::new("timeout", format!("connecting to {addr} timed out"))
                            })?
                            .map_err(|e| {
                                Failure::new("connect", format!("cannot connect to {addr}: {e}"))
                            })?;
                            match &self.tls {
                                None => Ok(Conn::Tcp(tcp)),
                                Some((connector, server)) => {
                                    let tls = tokio::time::timeout(
                                        self.connect_timeout,
                                        connector.connect(server.clone(), tcp),
                                    )
                                    .await
                                    .map_err(|_| {
                                        Failure::new(
                                            "timeout",
                                            format!("TLS handshake with {addr} timed out"),
                                        )
                                    })?
                                    .map_err(|e| {
                                        Failure::new(
                                            "tls",
                                            format!("TLS handshake with {addr} failed: {e}"),
                                        )
                                    })?;
                                    Ok(Conn::Tls(Box::new(tls)))
                                }
                            }
                        }
                    }
                };
            match attempt.await {
                Ok(c) => {
                    ForwardConnected { peer: &target }.emit(&self.events);
                    return Ok(c);
                }
                Err(f) => last = f,
            }
        }
        Err(last)
    }
}

/// Whether the target closed a stream connection (a read finds its end) or it failed.
/// Data the target sent is read and ignored: syslog targets send nothing.
fn peer_closed(conn: &Conn) -> bool {
    let tcp = match conn {
        Conn::Udp(_) => return false,
        Conn::Tcp(s) => s,
        Conn::Tls(s) => s.get_ref().0,
    };
    let mut buf = [0u8; 512];
    match tcp.try_read(&mut buf) {
        Ok(0) => true,
        // TLS records (an alert, session tickets) are the TLS layer's; a plain target that
        // talks is ignored. Only the end of the stream or an error counts.
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    }
}

/// The TLS client configuration of a relay: the system's roots (and `tls_ca_file`), or no
/// verification with `_TLS_VERIFY=no`; `_SSL_VERSION` and `_CIPHER_SUITE` as syslog-ng takes
/// them.
fn client_tls(cfg: &RelayDestination, prefix: &str) -> Result<Arc<rustls::ClientConfig>, String> {
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = match &cfg.ssl_version {
        Some(v) => {
            vec![crate::config::tls_version(v).map_err(|e| format!("{prefix}SSL_VERSION: {e}"))?]
        }
        None => vec![&rustls::version::TLS13, &rustls::version::TLS12],
    };
    let suites = match &cfg.cipher_suite {
        Some(c) => {
            Some(crate::tls::policy::evaluate("", "", &format!("{prefix}CIPHER_SUITE"), c)?.suites)
        }
        None => None,
    };
    crate::tls::relay_client_config(cfg.tls_verify, cfg.tls_ca_file.clone(), &versions, suites)
        .map_err(|e| format!("{prefix}TLS_VERIFY / SLUICE_DEST_*_TLS_CA_FILE: {e}"))
}

impl Output for RelayOutput {
    fn kind(&self) -> &'static str {
        self.kind.name_word()
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(self.run_inner(queue, abort))
    }
}

/// The filter's effect on the encoding: whether the receivers leave empty-MESSAGE events out.
pub fn skips_empty_message(cfg: &RelayDestination) -> bool {
    cfg.filter == RelayFilter::NonEmptyMessage
}

/// Starts a relay destination (`d_syslog` / `d_bsd`): its output, its disk buffer, and
/// hand-back to that buffer.
pub(super) fn start(
    d: &DestPlan,
    r: &RelayDestination,
    limits: &Limits<'_>,
) -> anyhow::Result<Started> {
    let events = Arc::new(ForwardEvents::register(
        crate::telemetry::metrics(),
        &d.name,
        r.kind.name_word(),
    ));
    let output = RelayOutput::new(&d.name, d.id.var(), r, Arc::clone(&events))?;
    let set_hand_back = output.hand_back_handle();
    tracing::info!(
        destination = %d.name,
        target = %format_args!("{}:{}", r.host, r.port()),
        transport = r.transport.label(),
        framed = r.framed(),
        "relaying events (SC4S d_{})",
        d.name
    );
    start_forwarding(
        d,
        Box::new(output),
        set_hand_back,
        &r.buffer,
        &RelayDestination::var_prefix(r.kind, d.id.var()),
        limits,
        events,
    )
}

#[cfg(test)]
mod tests;
