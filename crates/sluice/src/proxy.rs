//! PROXY protocol v1/v2 (HAProxy's, as sent by HAProxy, nginx, F5 and the cloud load
//! balancers) in front of a stream connection, for `SC4S_SOURCE_PROXYCONNECT=yes`.
//!
//! The header is read before anything else (before the TLS handshake on TLS ports, as
//! syslog-ng's `proxied-tls` does), within the connection's first deadline. The parsing is
//! `ppp`'s; this module only decides how many bytes to wait for and refuses early what
//! cannot become a header, so plaintext syslog sent without one is rejected at its first
//! byte instead of after 107. A `LOCAL` (v2) or `UNKNOWN` (v1) header — a load balancer's
//! health check — keeps the socket's own address.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// v2 signature (12 bytes).
const V2_SIGNATURE: &[u8] = b"\r\n\r\n\0\r\nQUIT\n";
const V1_PREFIX: &[u8] = b"PROXY ";
/// v1's longest header, CRLF included (the spec's 107 bytes).
const V1_MAX: usize = 107;
/// Largest v2 header accepted: the fixed part, the largest address block (UNIX, 216 bytes)
/// and room for the TLVs load balancers add (AWS's VPC endpoint id, Azure's link id, SSL
/// details). The spec allows 64 KiB; holding that per connection would be a memory lever.
pub const V2_MAX: usize = 16 + 216 + 1824;

/// Why a PROXY header was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("no PROXY protocol header: the connection starts with {0:?}")]
    Missing(String),
    #[error("malformed PROXY v1 header: {0}")]
    V1(String),
    #[error("malformed PROXY v2 header: {0}")]
    V2(String),
    #[error("PROXY v2 header of {0} bytes is longer than the {V2_MAX} accepted")]
    TooLong(usize),
    #[error("the connection closed inside the PROXY header")]
    Closed,
    #[error("reading the PROXY header: {0}")]
    Io(#[from] io::Error),
}

/// A parsed header: the sender's address behind the proxy, `None` for LOCAL/UNKNOWN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proxied {
    pub source: Option<SocketAddr>,
}

/// Reads the PROXY header from `stream`. Returns it with the bytes that arrived after it
/// (the start of the syslog or TLS stream), to be read first.
pub async fn read_header<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<(Proxied, Vec<u8>), ProxyError> {
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 512];
    loop {
        match inspect(&buf)? {
            Need::Header(len) => {
                let rest = buf.split_off(len);
                return Ok((parse(&buf)?, rest));
            }
            Need::More => {}
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(ProxyError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

enum Need {
    /// The header is complete and this long.
    Header(usize),
    More,
}

/// How much of `buf` is the header, or whether more bytes can still make one.
fn inspect(buf: &[u8]) -> Result<Need, ProxyError> {
    let starts = |sig: &[u8]| {
        let n = buf.len().min(sig.len());
        buf[..n] == sig[..n]
    };
    if buf.is_empty() {
        return Ok(Need::More);
    }
    if starts(V2_SIGNATURE) {
        if buf.len() < 16 {
            return Ok(Need::More);
        }
        let total = 16 + usize::from(u16::from_be_bytes([buf[14], buf[15]]));
        if total > V2_MAX {
            return Err(ProxyError::TooLong(total));
        }
        return Ok(if buf.len() >= total {
            Need::Header(total)
        } else {
            Need::More
        });
    }
    if starts(V1_PREFIX) {
        // The spec ends the line with CRLF; syslog-ng's loggen (-H) sends a bare LF and
        // syslog-ng accepts it, so both are accepted.
        let window = &buf[..buf.len().min(V1_MAX)];
        return match window.iter().position(|&b| b == b'\n') {
            Some(lf) => Ok(Need::Header(lf + 1)),
            None if buf.len() >= V1_MAX => Err(ProxyError::V1(format!(
                "no end of line within {V1_MAX} bytes"
            ))),
            None => Ok(Need::More),
        };
    }
    let shown: String = String::from_utf8_lossy(&buf[..buf.len().min(16)]).into_owned();
    Err(ProxyError::Missing(shown))
}

fn parse(header: &[u8]) -> Result<Proxied, ProxyError> {
    if header.starts_with(V2_SIGNATURE) {
        let h = ppp::v2::Header::try_from(header).map_err(|e| ProxyError::V2(e.to_string()))?;
        let source = match (h.command, h.addresses) {
            (ppp::v2::Command::Local, _) => None,
            (_, ppp::v2::Addresses::IPv4(a)) => {
                Some(SocketAddr::new(IpAddr::V4(a.source_address), a.source_port))
            }
            (_, ppp::v2::Addresses::IPv6(a)) => {
                Some(SocketAddr::new(IpAddr::V6(a.source_address), a.source_port))
            }
            (_, ppp::v2::Addresses::Unspecified | ppp::v2::Addresses::Unix(_)) => None,
        };
        Ok(Proxied { source })
    } else {
        let line = header.strip_suffix(b"\n").unwrap_or(header);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let crlf = [line, b"\r\n"].concat();
        let h = ppp::v1::Header::try_from(crlf.as_slice())
            .map_err(|e| ProxyError::V1(e.to_string()))?;
        let source = match h.addresses {
            ppp::v1::Addresses::Tcp4(a) => {
                Some(SocketAddr::new(IpAddr::V4(a.source_address), a.source_port))
            }
            ppp::v1::Addresses::Tcp6(a) => {
                Some(SocketAddr::new(IpAddr::V6(a.source_address), a.source_port))
            }
            ppp::v1::Addresses::Unknown => None,
        };
        Ok(Proxied { source })
    }
}

/// A stream with bytes already read from it put back in front: what followed the PROXY
/// header in the same segment. Writes go straight to the inner stream (TLS handshakes).
#[derive(Debug)]
pub struct Prefixed<S> {
    prefix: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S> Prefixed<S> {
    pub fn new(prefix: Vec<u8>, inner: S) -> Prefixed<S> {
        Prefixed {
            prefix,
            pos: 0,
            inner,
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pos < this.prefix.len() {
            let n = (this.prefix.len() - this.pos).min(buf.remaining());
            buf.put_slice(&this.prefix[this.pos..this.pos + n]);
            this.pos += n;
            if this.pos == this.prefix.len() {
                this.prefix = Vec::new();
                this.pos = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read(input: &[u8]) -> Result<(Proxied, Vec<u8>), ProxyError> {
        // Delivered one byte at a time: the header must be found across arbitrary reads.
        let mut b = tokio_test_stream(input);
        read_header(&mut b).await
    }

    fn tokio_test_stream(input: &[u8]) -> impl AsyncRead + Unpin {
        let (mut tx, rx) = tokio::io::duplex(4096);
        let data = input.to_vec();
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for b in data {
                if tx.write_all(&[b]).await.is_err() {
                    return;
                }
            }
        });
        rx
    }

    #[tokio::test]
    async fn v1_tcp4_with_payload_after_it() {
        let (p, rest) = read(b"PROXY TCP4 10.1.2.3 10.0.0.1 51000 514\r\n<13>hello\n")
            .await
            .unwrap();
        assert_eq!(p.source, Some("10.1.2.3:51000".parse().unwrap()));
        // What arrived after the header so far is handed back (at least part of it).
        assert!(b"<13>hello\n".starts_with(&rest), "{rest:?}");
    }

    #[tokio::test]
    async fn v1_with_a_bare_lf_as_loggen_sends_it() {
        let mut s: &[u8] = b"PROXY TCP4 192.0.2.44 10.0.0.1 5000 514\n<38>x\n";
        let (p, rest) = read_header(&mut s).await.unwrap();
        assert_eq!(p.source, Some("192.0.2.44:5000".parse().unwrap()));
        assert_eq!(rest, b"<38>x\n");
    }

    #[tokio::test]
    async fn v1_tcp6_and_unknown() {
        let (p, _) = read(b"PROXY TCP6 2001:db8::1 2001:db8::2 4000 6514\r\n")
            .await
            .unwrap();
        assert_eq!(p.source, Some("[2001:db8::1]:4000".parse().unwrap()));
        let (p, _) = read(b"PROXY UNKNOWN\r\n").await.unwrap();
        assert_eq!(p.source, None);
    }

    fn v2(command: u8, family: u8, addr: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.push(command);
        h.push(family);
        h.extend_from_slice(&(addr.len() as u16).to_be_bytes());
        h.extend_from_slice(addr);
        h
    }

    #[tokio::test]
    async fn v2_ipv4_proxy_and_local() {
        let addr = [192, 0, 2, 7, 10, 0, 0, 1, 0x1f, 0x90, 0x02, 0x02];
        let mut input = v2(0x21, 0x11, &addr);
        input.extend_from_slice(b"<13>x\n");
        let mut s = input.as_slice();
        let (p, rest) = read_header(&mut s).await.unwrap();
        assert_eq!(p.source, Some("192.0.2.7:8080".parse().unwrap()));
        assert_eq!(rest, b"<13>x\n");
        let local = v2(0x20, 0x00, &[]);
        let (p, _) = read(&local).await.unwrap();
        assert_eq!(p.source, None);
    }

    #[tokio::test]
    async fn plaintext_is_refused_at_the_first_byte() {
        let mut s: &[u8] = b"<13>Nov 22 10:00:00 host app: no header\n";
        let e = read_header(&mut s).await.unwrap_err();
        assert!(matches!(e, ProxyError::Missing(_)), "{e}");
        assert!(e.to_string().contains("<13>Nov"), "{e}");
    }

    #[tokio::test]
    async fn bad_headers_are_errors_not_hangs() {
        let mut s: &[u8] = b"PROXY TCP4 not-an-ip 10.0.0.1 1 2\r\n";
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::V1(_)
        ));
        let long = [b"PROXY TCP4 ".as_slice(), &[b'1'; 200]].concat();
        let mut s = long.as_slice();
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::V1(_)
        ));
        let mut huge = V2_SIGNATURE.to_vec();
        huge.extend_from_slice(&[0x21, 0x11, 0xff, 0xff]);
        let mut s = huge.as_slice();
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::TooLong(65551)
        ));
        let mut s: &[u8] = b"PROXY TC";
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::Closed
        ));
        // A v2 header whose address block is shorter than its family needs.
        let short = v2(0x21, 0x11, &[1, 2, 3]);
        let mut s = short.as_slice();
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::V2(_)
        ));
    }

    /// Arbitrary input after each signature never panics, never waits past what it was
    /// given (EOF is `Closed`), and a header never claims more bytes than arrived.
    #[tokio::test]
    async fn arbitrary_bytes_are_an_answer_not_a_panic() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..20_000u32 {
            let len = (next() % 300) as usize;
            let mut input: Vec<u8> = match case % 3 {
                0 => V2_SIGNATURE.to_vec(),
                1 => V1_PREFIX.to_vec(),
                _ => Vec::new(),
            };
            input.extend((0..len).map(|_| {
                let b = next() as u8;
                // Bias towards the bytes the parsers branch on.
                match b % 8 {
                    0 => b' ',
                    1 => b'\n',
                    2 => b'0' + b % 10,
                    3 => b'.',
                    _ => b,
                }
            }));
            let mut s = input.as_slice();
            if let Ok((_, rest)) = read_header(&mut s).await {
                assert!(rest.len() <= input.len());
            }
        }
    }

    #[tokio::test]
    async fn prefixed_reads_the_prefix_then_the_stream() {
        let inner: &[u8] = b" world";
        let mut p = Prefixed::new(b"hello".to_vec(), inner);
        let mut out = String::new();
        p.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "hello world");
    }
}
