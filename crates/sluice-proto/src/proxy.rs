//! PROXY protocol v1/v2 headers (HAProxy's, as sent by HAProxy, nginx, F5 and the cloud load
//! balancers), decoded from the bytes a connection has delivered so far.
//!
//! [`decode`] says whether the bytes hold a complete header (and how long it is), need more,
//! or can never become one. It refuses as early as it can: plaintext syslog sent without a
//! header is refused at its first byte instead of after 107, and a v2 header that announces
//! more than [`V2_MAX`] bytes is refused from its length field, so a connection never holds
//! more than that while waiting. The address parsing is `ppp`'s. A `LOCAL` (v2) or
//! `UNKNOWN` (v1) header — a load balancer's health check — has no source address.

use std::net::{IpAddr, SocketAddr};

/// v2 signature (12 bytes).
pub const V2_SIGNATURE: &[u8] = b"\r\n\r\n\0\r\nQUIT\n";
/// What every v1 header starts with.
pub const V1_PREFIX: &[u8] = b"PROXY ";
/// v1's longest header, CRLF included (the spec's 107 bytes).
pub const V1_MAX: usize = 107;
/// Largest v2 header accepted: the fixed part, the largest address block (UNIX, 216 bytes)
/// and room for the TLVs load balancers add (AWS's VPC endpoint id, Azure's link id, SSL
/// details). The spec allows 64 KiB; holding that per connection would be a memory lever.
pub const V2_MAX: usize = 16 + 216 + 1824;

/// Why bytes cannot be a PROXY header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("no PROXY protocol header: the connection starts with {0:?}")]
    Missing(String),
    #[error("malformed PROXY v1 header: {0}")]
    V1(String),
    #[error("malformed PROXY v2 header: {0}")]
    V2(String),
    #[error("PROXY v2 header of {0} bytes is longer than the {V2_MAX} accepted")]
    TooLong(usize),
}

/// A parsed header: the sender's address behind the proxy, `None` for LOCAL/UNKNOWN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proxied {
    pub source: Option<SocketAddr>,
}

/// What the bytes received so far amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    /// A complete header, the first `len` bytes; what follows is the payload.
    Header { len: usize, proxied: Proxied },
    /// A prefix of a header: read more. Never returned for `V2_MAX` bytes or more.
    NeedMore,
}

/// Decodes the header at the start of `buf` (everything the connection sent so far).
pub fn decode(buf: &[u8]) -> Result<Decoded, HeaderError> {
    let starts = |sig: &[u8]| {
        let n = buf.len().min(sig.len());
        buf[..n] == sig[..n]
    };
    if buf.is_empty() {
        return Ok(Decoded::NeedMore);
    }
    if starts(V2_SIGNATURE) {
        if buf.len() < 16 {
            return Ok(Decoded::NeedMore);
        }
        let total = 16 + usize::from(u16::from_be_bytes([buf[14], buf[15]]));
        if total > V2_MAX {
            return Err(HeaderError::TooLong(total));
        }
        if buf.len() < total {
            return Ok(Decoded::NeedMore);
        }
        return Ok(Decoded::Header {
            len: total,
            proxied: parse_v2(&buf[..total])?,
        });
    }
    if starts(V1_PREFIX) {
        // The spec ends the line with CRLF; syslog-ng's loggen (-H) sends a bare LF and
        // syslog-ng accepts it, so both are accepted.
        let window = &buf[..buf.len().min(V1_MAX)];
        return match memchr::memchr(b'\n', window) {
            Some(lf) => Ok(Decoded::Header {
                len: lf + 1,
                proxied: parse_v1(&buf[..=lf])?,
            }),
            None if buf.len() >= V1_MAX => Err(HeaderError::V1(format!(
                "no end of line within {V1_MAX} bytes"
            ))),
            None => Ok(Decoded::NeedMore),
        };
    }
    let shown: String = String::from_utf8_lossy(&buf[..buf.len().min(16)]).into_owned();
    Err(HeaderError::Missing(shown))
}

fn parse_v2(header: &[u8]) -> Result<Proxied, HeaderError> {
    let h = ppp::v2::Header::try_from(header).map_err(|e| HeaderError::V2(e.to_string()))?;
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
}

fn parse_v1(header: &[u8]) -> Result<Proxied, HeaderError> {
    let line = header.strip_suffix(b"\n").unwrap_or(header);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let crlf = [line, b"\r\n"].concat();
    let h =
        ppp::v1::Header::try_from(crlf.as_slice()).map_err(|e| HeaderError::V1(e.to_string()))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn header(input: &[u8]) -> (usize, Option<SocketAddr>) {
        match decode(input).unwrap() {
            Decoded::Header { len, proxied } => (len, proxied.source),
            Decoded::NeedMore => panic!("incomplete: {input:?}"),
        }
    }

    fn v2(command: u8, family: u8, addr: &[u8]) -> Vec<u8> {
        let mut h = V2_SIGNATURE.to_vec();
        h.push(command);
        h.push(family);
        h.extend_from_slice(&(addr.len() as u16).to_be_bytes());
        h.extend_from_slice(addr);
        h
    }

    #[test]
    fn v1_tcp4_tcp6_unknown_and_a_bare_lf() {
        let input = b"PROXY TCP4 10.1.2.3 10.0.0.1 51000 514\r\n<13>hello\n";
        assert_eq!(header(input), (40, Some("10.1.2.3:51000".parse().unwrap())));
        assert_eq!(
            header(b"PROXY TCP6 2001:db8::1 2001:db8::2 4000 6514\r\n").1,
            Some("[2001:db8::1]:4000".parse().unwrap())
        );
        assert_eq!(header(b"PROXY UNKNOWN\r\n"), (15, None));
        assert_eq!(
            header(b"PROXY TCP4 192.0.2.44 10.0.0.1 5000 514\n<38>x\n"),
            (40, Some("192.0.2.44:5000".parse().unwrap()))
        );
    }

    #[test]
    fn v2_ipv4_proxy_and_local() {
        let addr = [192, 0, 2, 7, 10, 0, 0, 1, 0x1f, 0x90, 0x02, 0x02];
        let mut input = v2(0x21, 0x11, &addr);
        input.extend_from_slice(b"<13>x\n");
        assert_eq!(
            header(&input),
            (28, Some("192.0.2.7:8080".parse().unwrap()))
        );
        assert_eq!(header(&v2(0x20, 0x00, &[])), (16, None));
    }

    #[test]
    fn every_prefix_of_a_header_needs_more() {
        let full = b"PROXY TCP4 10.1.2.3 10.0.0.1 51000 514\r\n";
        for n in 0..full.len() {
            assert_eq!(decode(&full[..n]), Ok(Decoded::NeedMore), "{n}");
        }
        let v2h = v2(0x21, 0x11, &[1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 0, 2]);
        for n in 0..v2h.len() {
            assert_eq!(decode(&v2h[..n]), Ok(Decoded::NeedMore), "{n}");
        }
    }

    #[test]
    fn bad_headers_are_refused_as_early_as_possible() {
        let e = decode(b"<13>Nov 22 10:00:00 host app: no header\n").unwrap_err();
        assert!(matches!(e, HeaderError::Missing(_)), "{e}");
        assert!(e.to_string().contains("<13>Nov"), "{e}");
        assert!(matches!(decode(b"<"), Err(HeaderError::Missing(_))));
        assert!(matches!(
            decode(b"PROXY TCP4 not-an-ip 10.0.0.1 1 2\r\n"),
            Err(HeaderError::V1(_))
        ));
        let long = [b"PROXY TCP4 ".as_slice(), &[b'1'; 200]].concat();
        assert!(matches!(decode(&long), Err(HeaderError::V1(_))));
        let mut huge = V2_SIGNATURE.to_vec();
        huge.extend_from_slice(&[0x21, 0x11, 0xff, 0xff]);
        assert_eq!(decode(&huge), Err(HeaderError::TooLong(65551)));
        // An address block shorter than its family needs.
        assert!(matches!(
            decode(&v2(0x21, 0x11, &[1, 2, 3])),
            Err(HeaderError::V2(_))
        ));
        // A v2 signature with a bad version nibble.
        assert!(matches!(
            decode(&v2(0x31, 0x11, &[0; 12])),
            Err(HeaderError::V2(_))
        ));
    }
}
