//! PROXY protocol v1/v2 (HAProxy's, as sent by HAProxy, nginx, F5 and the cloud load
//! balancers) in front of a stream connection, for `SC4S_SOURCE_PROXYCONNECT=yes`.
//!
//! The header is read before anything else (before the TLS handshake on TLS ports, as
//! syslog-ng's `proxied-tls` does), within the connection's first deadline. Decoding is
//! sans-IO in [`sluice_proto::proxy`] (fuzzed there); this module reads until it has a
//! header or an answer. A `LOCAL` (v2) or `UNKNOWN` (v1) header — a load balancer's health
//! check — keeps the socket's own address.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use sluice_proto::proxy::{Decoded, decode};
pub use sluice_proto::proxy::{HeaderError, Proxied, V2_MAX};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

/// Why a PROXY header was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error(transparent)]
    Header(#[from] HeaderError),
    #[error("the connection closed inside the PROXY header")]
    Closed,
    #[error("reading the PROXY header: {0}")]
    Io(#[from] io::Error),
}

/// Reads the PROXY header from `stream`. Returns it with the bytes that arrived after it
/// (the start of the syslog or TLS stream), to be read first. Holds at most
/// [`V2_MAX`] bytes plus one read while waiting.
pub async fn read_header<S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<(Proxied, Vec<u8>), ProxyError> {
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 512];
    loop {
        if let Decoded::Header { len, proxied } = decode(&buf)? {
            return Ok((proxied, buf.split_off(len)));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(ProxyError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
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
    use sluice_proto::proxy::{V1_PREFIX, V2_SIGNATURE};

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
        assert!(
            matches!(e, ProxyError::Header(HeaderError::Missing(_))),
            "{e}"
        );
        assert!(e.to_string().contains("<13>Nov"), "{e}");
    }

    #[tokio::test]
    async fn bad_headers_are_errors_not_hangs() {
        let mut s: &[u8] = b"PROXY TCP4 not-an-ip 10.0.0.1 1 2\r\n";
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::Header(HeaderError::V1(_))
        ));
        let long = [b"PROXY TCP4 ".as_slice(), &[b'1'; 200]].concat();
        let mut s = long.as_slice();
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::Header(HeaderError::V1(_))
        ));
        let mut huge = V2_SIGNATURE.to_vec();
        huge.extend_from_slice(&[0x21, 0x11, 0xff, 0xff]);
        let mut s = huge.as_slice();
        assert!(matches!(
            read_header(&mut s).await.unwrap_err(),
            ProxyError::Header(HeaderError::TooLong(65551))
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
            ProxyError::Header(HeaderError::V2(_))
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
