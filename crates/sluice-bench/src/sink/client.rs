//! A minimal blocking HTTP/1.1 client for driving the sink from tests and measurement tools
//! without pulling an HTTP client stack in: one keep-alive connection, `TCP_NODELAY`, head and
//! body handed to the kernel together (`writev`, no copy of the body), responses read by
//! `Content-Length`.

use std::io::{self, BufRead, BufReader, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// An answer: status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One keep-alive connection.
#[derive(Debug)]
pub struct RawClient {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
    request: Vec<u8>,
}

impl RawClient {
    pub fn connect(addr: SocketAddr) -> io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(RawClient {
            addr,
            reader: BufReader::with_capacity(64 * 1024, stream),
            request: Vec::new(),
        })
    }

    /// Sends a request and reads the answer. A connection closed without an answer is an
    /// `UnexpectedEof` error; the client then has to [`reconnect`](Self::reconnect).
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<RawResponse> {
        self.request.clear();
        write!(
            self.request,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        )?;
        for (k, v) in headers {
            write!(self.request, "{k}: {v}\r\n")?;
        }
        self.request.extend_from_slice(b"\r\n");
        write_all_vectored(self.reader.get_mut(), &self.request, body)?;
        self.read_response()
    }

    /// Reconnects (after a reset).
    pub fn reconnect(&mut self) -> io::Result<()> {
        *self = RawClient::connect(self.addr)?;
        Ok(())
    }

    fn read_response(&mut self) -> io::Result<RawResponse> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed without a response",
            ));
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse::<u16>().ok())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad status line {line:?}"),
                )
            })?;
        let mut len = 0usize;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "truncated headers",
                ));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("bad content-length {v:?}"),
                    )
                })?;
            }
        }
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body)?;
        Ok(RawResponse { status, body })
    }
}

fn write_all_vectored(w: &mut TcpStream, head: &[u8], body: &[u8]) -> io::Result<()> {
    let (mut h, mut b) = (head, body);
    while !h.is_empty() || !b.is_empty() {
        let n = w.write_vectored(&[IoSlice::new(h), IoSlice::new(b)])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "socket accepted no bytes",
            ));
        }
        let from_head = n.min(h.len());
        h = &h[from_head..];
        b = &b[n - from_head..];
    }
    Ok(())
}
