//! RFC 6587 frame decoder for syslog over TCP and TLS: incremental and sans-IO.
//!
//! # Framing, decided per frame
//!
//! One connection may mix both RFC 6587 framings; the choice is made afresh at every frame
//! boundary by looking at the first bytes of the frame:
//!
//! * **Octet counting** when the frame starts with `MSG-LEN SP <`: one to ten ASCII digits
//!   with a value of at least 1, one space, and then a `<` (the start of a PRI). The frame is
//!   the next `MSG-LEN` bytes after the space, whatever they contain (LF included).
//!   A count is trusted only when a PRI follows, so an LF-framed line that happens to start
//!   with digits (`2024-01-01 ...`, `42 items`) is not misread as a length.
//!   Leading zeros are accepted (`000000256 <38>...` is what `loggen -R -P` sends, and
//!   syslog-ng's framed reader accepts it); RFC 6587 writes `NONZERO-DIGIT *DIGIT`, which
//!   this includes.
//! * **LF framing** otherwise: the frame runs up to the next `\n`, which is consumed and not
//!   part of the frame. A `\r` before it and any NUL bytes stay in the frame; the parser
//!   strips trailing LF/CR/NUL itself. A header with more than ten digits, a non-digit
//!   before the space, a count of zero, or a space not followed by `<` means LF framing.
//! * **Empty lines** (a `\n` at a frame boundary) are skipped and counted in
//!   [`FramingStats::empty_lines`], as syslog-ng does unless `flags(empty-lines)` is set.
//!   They carry no data, and forwarding them would only produce placeholder events. A line
//!   holding only `\r` or NUL is not empty and is delivered.
//!
//! # Maximum frame size
//!
//! `max_frame` (SC4S `log_msg_size`, 64 KiB by default, [`DEFAULT_MAX_FRAME`]) bounds what is
//! delivered and what the caller must buffer. Nothing is lost silently:
//!
//! * an LF frame longer than `max_frame` is delivered as its first `max_frame` bytes with
//!   [`Frame::truncated`] set; the rest of the line, up to and including the next `\n`, is
//!   discarded and added to [`FramingStats::discarded_bytes`]; decoding resumes at the next
//!   frame;
//! * an octet-counted frame whose count exceeds `max_frame` is delivered as its first
//!   `max_frame` bytes with `truncated` set, and exactly the remaining `count - max_frame`
//!   bytes are skipped and counted, so the stream resynchronises exactly on the next frame.
//!
//! # Incremental, zero-copy use
//!
//! The decoder never copies or owns frame bytes. The caller keeps a receive buffer (e.g. a
//! `BytesMut`), appends whatever the socket returned, and calls [`Decoder::decode`] (or the
//! [`Decoder::frames`] iterator) on the unconsumed part. A frame is reported as a range of
//! that buffer, valid until the caller drops the consumed prefix. Contract:
//!
//! 1. The slice passed to `decode` starts at the first byte not yet consumed; after a call,
//!    the caller treats `consumed` more bytes as gone.
//! 2. When `decode` returns no frame, everything from `consumed` on must be presented again,
//!    unchanged, at the start of the next call, followed by newly read bytes. The decoder
//!    remembers how far it already searched for `\n`, so a long line arriving in small reads
//!    is scanned once, not once per read.
//! 3. The buffer must be able to grow to [`Decoder::required_capacity`] bytes
//!    (`max_frame` + [`MAX_HEADER_LEN`]): with that much unconsumed input, `decode` always
//!    delivers a frame or consumes bytes.
//!
//! At end of stream (or an idle timeout that closes the connection) the caller passes the
//! unconsumed tail to [`Decoder::finish`], which delivers a pending partial frame flagged
//! [`Frame::partial`] (octet-counted: the payload bytes that arrived; LF: the unterminated
//! line). Bytes left over from a frame already delivered truncated are counted as discarded.
//!
//! ```
//! use sluice_proto::framing::Decoder;
//!
//! let mut decoder = Decoder::new(64 * 1024);
//! let mut buf: Vec<u8> = Vec::new(); // a `BytesMut` in the TCP task
//! let mut messages: Vec<Vec<u8>> = Vec::new();
//! for read in [&b"<13>one\n7 <13>t"[..], b"wo<13>thr", b"ee\n<13>four"] {
//!     buf.extend_from_slice(read);
//!     let mut frames = decoder.frames(&buf);
//!     for (_frame, bytes) in &mut frames {
//!         messages.push(bytes.to_vec()); // the task parses `bytes` in place instead
//!     }
//!     let consumed = frames.consumed();
//!     buf.drain(..consumed); // `BytesMut::advance`
//! }
//! // The connection closes: the unterminated last line is not lost.
//! let last = decoder.finish(&buf).expect("pending frame");
//! assert!(last.partial);
//! messages.push(last.bytes(&buf).to_vec());
//! assert_eq!(messages, [&b"<13>one"[..], b"<13>two", b"<13>three", b"<13>four"]);
//! ```
//!
//! Counters are plain integers in [`FramingStats`]; the caller reads them and publishes them
//! however it likes (no atomics here).

use std::ops::Range;

/// SC4S `log_msg_size`: 64 KiB.
pub const DEFAULT_MAX_FRAME: usize = 65536;

/// Maximum number of digits in an octet count (syslog-ng's `RFC6587_MAX_FRAME_LEN_DIGITS`).
pub const MAX_COUNT_DIGITS: usize = 10;

/// Longest octet-counting header: ten digits and the space.
pub const MAX_HEADER_LEN: usize = MAX_COUNT_DIGITS + 1;

/// Which RFC 6587 method delimited a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Framing {
    /// `MSG-LEN SP MSG` (RFC 6587 section 3.4.1).
    OctetCounting,
    /// Non-transparent framing with `\n` as trailer (RFC 6587 section 3.4.2).
    LineFeed,
}

/// One decoded frame: a range of the buffer that was passed to the decoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// First byte of the message (after an octet-counting header).
    pub start: usize,
    /// One past the last byte of the message (the `\n` of an LF frame is excluded).
    pub end: usize,
    pub framing: Framing,
    /// The frame was longer than `max_frame`; only its first `max_frame` bytes are here.
    pub truncated: bool,
    /// Delivered by [`Decoder::finish`]: the stream ended before the frame was complete.
    pub partial: bool,
}

impl Frame {
    pub fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The frame's bytes in `buf`, which must be the slice the frame was decoded from (an
    /// unrelated, shorter slice yields an empty result rather than a panic).
    pub fn bytes<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        buf.get(self.start..self.end).unwrap_or_default()
    }

    fn shifted(self, by: usize) -> Frame {
        Frame {
            start: self.start + by,
            end: self.end + by,
            ..self
        }
    }
}

/// What one [`Decoder::decode`] call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes at the start of the input the decoder is done with (the frame, if any, lies
    /// within them). The caller drops them once it has handled the frame.
    pub consumed: usize,
    /// `None` means: more input is needed; keep `input[consumed..]` and append to it.
    pub frame: Option<Frame>,
}

/// Counters since the decoder was created. All saturate at `u64::MAX` in theory; in practice
/// they do not wrap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramingStats {
    /// Frames delivered (complete, truncated and partial).
    pub frames: u64,
    /// Of `frames`, those delimited by octet counting.
    pub octet_counted: u64,
    /// Of `frames`, those cut to `max_frame`.
    pub truncated: u64,
    /// Of `frames`, those delivered incomplete by [`Decoder::finish`].
    pub partial: u64,
    /// Bytes thrown away after a truncated frame (including the `\n` that ended an oversized
    /// line).
    pub discarded_bytes: u64,
    /// Empty lines skipped at frame boundaries.
    pub empty_lines: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// At a frame boundary; nothing of the next frame is known.
    Boundary,
    /// Inside an LF frame; `scanned` bytes from its start contain no `\n`.
    Line { scanned: usize },
    /// An octet-counting header of `header` bytes announced `count` bytes.
    Counted { header: usize, count: u64 },
    /// Skipping the rest of an oversized octet-counted frame.
    SkipCounted { remaining: u64 },
    /// Skipping the rest of an oversized line, through its `\n`.
    SkipLine,
}

enum Detect {
    Counted { header: usize, count: u64 },
    Line,
    NeedMore,
}

/// Incremental RFC 6587 decoder for one connection. See the module docs.
#[derive(Clone, Debug)]
pub struct Decoder {
    max_frame: usize,
    state: State,
    stats: FramingStats,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new(DEFAULT_MAX_FRAME)
    }
}

impl Decoder {
    /// `max_frame` is the largest message delivered whole; 0 is treated as 1.
    pub fn new(max_frame: usize) -> Self {
        Decoder {
            max_frame: max_frame.max(1),
            state: State::Boundary,
            stats: FramingStats::default(),
        }
    }

    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Unconsumed input that guarantees progress: a receive buffer must be able to hold this
    /// many bytes.
    pub fn required_capacity(&self) -> usize {
        self.max_frame + MAX_HEADER_LEN
    }

    pub fn stats(&self) -> FramingStats {
        self.stats
    }

    /// `true` when no byte of an unfinished frame is pending, i.e. a connection closing now
    /// loses nothing that [`Decoder::finish`] would deliver.
    pub fn at_boundary(&self) -> bool {
        matches!(self.state, State::Boundary)
    }

    /// Finds the next frame in `input` (the unconsumed bytes; see the module docs for the
    /// contract). Returns at most one frame; call again on `input[consumed..]` for more.
    pub fn decode(&mut self, input: &[u8]) -> Decoded {
        let mut pos = 0;
        loop {
            let data = &input[pos..];
            match self.state {
                State::Boundary => {
                    let Some(&first) = data.first() else {
                        return Decoded {
                            consumed: pos,
                            frame: None,
                        };
                    };
                    if first == b'\n' {
                        pos += 1;
                        self.stats.empty_lines += 1;
                        continue;
                    }
                    match detect(data) {
                        Detect::Counted { header, count } => {
                            self.state = State::Counted { header, count };
                        }
                        Detect::Line => self.state = State::Line { scanned: 0 },
                        Detect::NeedMore => {
                            return Decoded {
                                consumed: pos,
                                frame: None,
                            };
                        }
                    }
                }
                State::Line { scanned } => {
                    // An LF at index `max_frame` still ends a frame of exactly `max_frame`.
                    let limit = data.len().min(self.max_frame + 1);
                    let from = scanned.min(limit);
                    if let Some(k) = memchr::memchr(b'\n', &data[from..limit]) {
                        let end = from + k;
                        self.state = State::Boundary;
                        let frame = self.deliver(pos, pos + end, Framing::LineFeed, false, false);
                        return Decoded {
                            consumed: pos + end + 1,
                            frame: Some(frame),
                        };
                    }
                    if data.len() > self.max_frame {
                        self.state = State::SkipLine;
                        let frame =
                            self.deliver(pos, pos + self.max_frame, Framing::LineFeed, true, false);
                        return Decoded {
                            consumed: pos + self.max_frame,
                            frame: Some(frame),
                        };
                    }
                    self.state = State::Line {
                        scanned: data.len(),
                    };
                    return Decoded {
                        consumed: pos,
                        frame: None,
                    };
                }
                State::Counted { header, count } => {
                    let truncated = count > self.max_frame as u64;
                    // Lossless: the minimum is at most `max_frame`, a usize.
                    let take = count.min(self.max_frame as u64) as usize;
                    if data.len() < header + take {
                        return Decoded {
                            consumed: pos,
                            frame: None,
                        };
                    }
                    self.state = if truncated {
                        State::SkipCounted {
                            remaining: count - take as u64,
                        }
                    } else {
                        State::Boundary
                    };
                    let frame = self.deliver(
                        pos + header,
                        pos + header + take,
                        Framing::OctetCounting,
                        truncated,
                        false,
                    );
                    return Decoded {
                        consumed: pos + header + take,
                        frame: Some(frame),
                    };
                }
                State::SkipCounted { remaining } => {
                    let n = remaining.min(data.len() as u64);
                    pos += n as usize;
                    self.stats.discarded_bytes += n;
                    if n == remaining {
                        self.state = State::Boundary;
                    } else {
                        self.state = State::SkipCounted {
                            remaining: remaining - n,
                        };
                        return Decoded {
                            consumed: pos,
                            frame: None,
                        };
                    }
                }
                State::SkipLine => match memchr::memchr(b'\n', data) {
                    Some(k) => {
                        pos += k + 1;
                        self.stats.discarded_bytes += (k + 1) as u64;
                        self.state = State::Boundary;
                    }
                    None => {
                        self.stats.discarded_bytes += data.len() as u64;
                        return Decoded {
                            consumed: input.len(),
                            frame: None,
                        };
                    }
                },
            }
        }
    }

    /// Iterates over the frames in `input`; afterwards [`Frames::consumed`] tells how many
    /// bytes of `input` to drop. Frame ranges are relative to `input`.
    pub fn frames<'d, 'b>(&'d mut self, input: &'b [u8]) -> Frames<'d, 'b> {
        Frames {
            decoder: self,
            input,
            pos: 0,
        }
    }

    /// End of stream: delivers the pending incomplete frame, if any, flagged `partial`, and
    /// resets the decoder to a frame boundary. `rest` is the unconsumed tail after `decode`
    /// last returned no frame (so it holds no complete frame). The range is relative to
    /// `rest`. Bytes of a frame that was already delivered truncated are counted as
    /// discarded instead. Afterwards the caller drops all of `rest`. Used on an idle timeout
    /// of a connection that stays open, it flushes the pending text; bytes of that frame
    /// arriving later are then read as the start of a new frame.
    pub fn finish(&mut self, rest: &[u8]) -> Option<Frame> {
        let state = std::mem::replace(&mut self.state, State::Boundary);
        match state {
            State::SkipCounted { .. } | State::SkipLine => {
                self.stats.discarded_bytes += rest.len() as u64;
                None
            }
            State::Counted { header, .. } => self.finish_partial(rest, header),
            State::Line { .. } => self.finish_partial(rest, 0),
            State::Boundary => {
                let skipped = rest.iter().take_while(|&&b| b == b'\n').count();
                self.stats.empty_lines += skipped as u64;
                let rest = &rest[skipped..];
                if rest.is_empty() {
                    return None;
                }
                let header = match detect(rest) {
                    Detect::Counted { header, .. } => header,
                    Detect::Line | Detect::NeedMore => 0,
                };
                self.finish_partial(rest, header)
                    .map(|frame| frame.shifted(skipped))
            }
        }
    }

    fn finish_partial(&mut self, rest: &[u8], header: usize) -> Option<Frame> {
        let framing = if header > 0 {
            Framing::OctetCounting
        } else {
            Framing::LineFeed
        };
        let start = header.min(rest.len());
        let available = rest.len() - start;
        if available == 0 {
            return None;
        }
        let take = available.min(self.max_frame);
        let truncated = available > take;
        self.stats.discarded_bytes += (available - take) as u64;
        Some(self.deliver(start, start + take, framing, truncated, true))
    }

    fn deliver(
        &mut self,
        start: usize,
        end: usize,
        framing: Framing,
        truncated: bool,
        partial: bool,
    ) -> Frame {
        self.stats.frames += 1;
        self.stats.octet_counted += u64::from(framing == Framing::OctetCounting);
        self.stats.truncated += u64::from(truncated);
        self.stats.partial += u64::from(partial);
        Frame {
            start,
            end,
            framing,
            truncated,
            partial,
        }
    }
}

/// Decides the framing of the frame that starts at `data[0]` (not `\n`, not empty).
fn detect(data: &[u8]) -> Detect {
    let mut count: u64 = 0;
    for (i, &b) in data.iter().enumerate() {
        match b {
            b'0'..=b'9' if i < MAX_COUNT_DIGITS => count = count * 10 + u64::from(b - b'0'),
            b' ' if i > 0 => {
                return match data.get(i + 1) {
                    None => Detect::NeedMore,
                    Some(b'<') if count > 0 => Detect::Counted {
                        header: i + 1,
                        count,
                    },
                    Some(_) => Detect::Line,
                };
            }
            _ => return Detect::Line,
        }
    }
    Detect::NeedMore
}

/// Iterator returned by [`Decoder::frames`]: yields each frame with its bytes.
pub struct Frames<'d, 'b> {
    decoder: &'d mut Decoder,
    input: &'b [u8],
    pos: usize,
}

impl<'b> Frames<'_, 'b> {
    /// Bytes of the input the decoder is done with so far.
    pub fn consumed(&self) -> usize {
        self.pos
    }
}

impl<'b> Iterator for Frames<'_, 'b> {
    type Item = (Frame, &'b [u8]);

    fn next(&mut self) -> Option<(Frame, &'b [u8])> {
        let base = self.pos;
        let step = self.decoder.decode(&self.input[base..]);
        self.pos += step.consumed;
        let frame = step.frame?.shifted(base);
        Some((frame, frame.bytes(self.input)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Out {
        bytes: Vec<u8>,
        framing: Framing,
        truncated: bool,
        partial: bool,
    }

    /// Feeds `stream` in chunks of the given sizes (cycled) through a caller-style buffer
    /// and returns every frame, including the one `finish` delivers.
    fn run(dec: &mut Decoder, stream: &[u8], chunks: &[usize]) -> Vec<Out> {
        let mut buf: Vec<u8> = Vec::new();
        let mut out = Vec::new();
        let mut fed = 0;
        let mut k = 0;
        let max = dec.max_frame();
        while fed < stream.len() {
            let size = chunks
                .get(k % chunks.len().max(1))
                .copied()
                .unwrap_or(4096)
                .max(1);
            k += 1;
            let end = fed.saturating_add(size).min(stream.len());
            buf.extend_from_slice(&stream[fed..end]);
            fed = end;
            let mut frames = dec.frames(&buf);
            for (frame, bytes) in &mut frames {
                assert!(frame.len() <= max && bytes.len() == frame.len());
                out.push(Out {
                    bytes: bytes.to_vec(),
                    framing: frame.framing,
                    truncated: frame.truncated,
                    partial: frame.partial,
                });
            }
            let consumed = frames.consumed();
            assert!(consumed <= buf.len());
            buf.drain(..consumed);
            assert!(
                buf.len() < dec.required_capacity(),
                "decoder stalled with {} buffered bytes",
                buf.len()
            );
        }
        if let Some(frame) = dec.finish(&buf) {
            out.push(Out {
                bytes: frame.bytes(&buf).to_vec(),
                framing: frame.framing,
                truncated: frame.truncated,
                partial: frame.partial,
            });
        }
        out
    }

    fn complete(bytes: &[u8], framing: Framing) -> Out {
        Out {
            bytes: bytes.to_vec(),
            framing,
            truncated: false,
            partial: false,
        }
    }

    fn octet(msg: &[u8]) -> Vec<u8> {
        let mut v = format!("{} ", msg.len()).into_bytes();
        v.extend_from_slice(msg);
        v
    }

    #[test]
    fn lf_frames_keep_cr_and_nul() {
        let mut d = Decoder::new(100);
        let out = run(&mut d, b"<13>a\r\n<14>b\0\n", &[1000]);
        assert_eq!(
            out,
            vec![
                complete(b"<13>a\r", Framing::LineFeed),
                complete(b"<14>b\0", Framing::LineFeed),
            ]
        );
        assert_eq!(d.stats().frames, 2);
    }

    #[test]
    fn octet_frames_may_contain_lf() {
        let mut stream = octet(b"<13>line one\nline two");
        stream.extend_from_slice(&octet(b"<14>x\n"));
        let out = run(&mut Decoder::new(100), &stream, &[1000]);
        assert_eq!(
            out,
            vec![
                complete(b"<13>line one\nline two", Framing::OctetCounting),
                complete(b"<14>x\n", Framing::OctetCounting),
            ]
        );
    }

    #[test]
    fn mixed_framing_on_one_connection_byte_by_byte() {
        let mut stream = b"<13>lf one\n".to_vec();
        stream.extend_from_slice(&octet(b"<13>counted"));
        stream.extend_from_slice(b"<13>lf two\n");
        stream.extend_from_slice(&octet(b"<13>counted two"));
        let out = run(&mut Decoder::new(100), &stream, &[1]);
        assert_eq!(
            out,
            vec![
                complete(b"<13>lf one", Framing::LineFeed),
                complete(b"<13>counted", Framing::OctetCounting),
                complete(b"<13>lf two", Framing::LineFeed),
                complete(b"<13>counted two", Framing::OctetCounting),
            ]
        );
    }

    #[test]
    fn digits_without_pri_are_not_a_count() {
        let stream: &[u8] = b"2024 is a year\n12 apples\n5 <13>x0 <13>zero\n12345678901 <13>eleven digits\n12x <13>\n1 \n";
        let out = run(&mut Decoder::new(100), stream, &[3]);
        let texts: Vec<_> = out.iter().map(|o| (o.bytes.clone(), o.framing)).collect();
        assert_eq!(
            texts,
            vec![
                (b"2024 is a year".to_vec(), Framing::LineFeed),
                (b"12 apples".to_vec(), Framing::LineFeed),
                (b"<13>x".to_vec(), Framing::OctetCounting),
                (b"0 <13>zero".to_vec(), Framing::LineFeed),
                (b"12345678901 <13>eleven digits".to_vec(), Framing::LineFeed),
                (b"12x <13>".to_vec(), Framing::LineFeed),
                (b"1 ".to_vec(), Framing::LineFeed),
            ]
        );
    }

    #[test]
    fn zero_padded_count_is_accepted() {
        let out = run(&mut Decoder::new(100), b"000000005 <13>x", &[2]);
        assert_eq!(out, vec![complete(b"<13>x", Framing::OctetCounting)]);
    }

    #[test]
    fn empty_lines_are_skipped_and_counted() {
        let mut d = Decoder::new(100);
        let out = run(&mut d, b"\n\n<13>a\n\n\r\n", &[1000]);
        assert_eq!(
            out,
            vec![
                complete(b"<13>a", Framing::LineFeed),
                complete(b"\r", Framing::LineFeed),
            ]
        );
        assert_eq!(d.stats().empty_lines, 3);
    }

    #[test]
    fn oversized_line_is_truncated_and_resyncs() {
        let mut d = Decoder::new(10);
        let mut stream = vec![b'a'; 25];
        stream.extend_from_slice(b"\n<13>next\n");
        let out = run(&mut d, &stream, &[4]);
        assert_eq!(
            out,
            vec![
                Out {
                    bytes: vec![b'a'; 10],
                    framing: Framing::LineFeed,
                    truncated: true,
                    partial: false
                },
                complete(b"<13>next", Framing::LineFeed),
            ]
        );
        // 15 more 'a' and the LF.
        assert_eq!(d.stats().discarded_bytes, 16);
        assert_eq!(d.stats().truncated, 1);
    }

    #[test]
    fn line_of_exactly_max_is_not_truncated() {
        let mut d = Decoder::new(10);
        let out = run(&mut d, b"0123456789\n", &[1000]);
        assert_eq!(out, vec![complete(b"0123456789", Framing::LineFeed)]);
        assert_eq!(d.stats().truncated, 0);
    }

    #[test]
    fn oversized_count_skips_exactly() {
        let mut d = Decoder::new(8);
        let big = b"<13>0123456789abcdef\n\n\n"; // 23 bytes, LFs inside
        let mut stream = octet(big);
        stream.extend_from_slice(&octet(b"<13>ok"));
        let out = run(&mut d, &stream, &[5]);
        assert_eq!(
            out,
            vec![
                Out {
                    bytes: b"<13>0123".to_vec(),
                    framing: Framing::OctetCounting,
                    truncated: true,
                    partial: false
                },
                complete(b"<13>ok", Framing::OctetCounting),
            ]
        );
        assert_eq!(d.stats().discarded_bytes, (big.len() - 8) as u64);
    }

    #[test]
    fn one_mebibyte_line() {
        let mut d = Decoder::default();
        let mut stream = vec![b'x'; 1 << 20];
        stream[0] = b'<';
        stream.push(b'\n');
        stream.extend_from_slice(b"<13>after\n");
        let out = run(&mut d, &stream, &[4096]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].bytes.len(), DEFAULT_MAX_FRAME);
        assert!(out[0].truncated);
        assert_eq!(out[1], complete(b"<13>after", Framing::LineFeed));
        assert_eq!(
            d.stats().discarded_bytes,
            ((1 << 20) - DEFAULT_MAX_FRAME + 1) as u64
        );
    }

    #[test]
    fn partial_frames_at_eof_are_delivered() {
        let mut d = Decoder::new(100);
        let out = run(&mut d, b"<13>done\n<13>no newline", &[3]);
        assert_eq!(out[1].bytes, b"<13>no newline");
        assert!(out[1].partial && out[1].framing == Framing::LineFeed);

        let mut stream = octet(b"<13>complete");
        stream.extend_from_slice(b"20 <13>cut");
        let out = run(&mut Decoder::new(100), &stream, &[1]);
        assert_eq!(out[1].bytes, b"<13>cut");
        assert!(out[1].partial && out[1].framing == Framing::OctetCounting);

        // An undecided header ("12" might become "12 <...") is delivered as text.
        let out = run(&mut Decoder::new(100), b"12", &[1]);
        assert_eq!(out[0].bytes, b"12");
        assert!(out[0].partial && out[0].framing == Framing::LineFeed);

        // The tail of a truncated frame is not delivered twice.
        let mut d = Decoder::new(4);
        let out = run(&mut d, b"abcdefgh", &[100]);
        assert_eq!(out.len(), 1);
        assert!(out[0].truncated && !out[0].partial);
        assert_eq!(d.stats().discarded_bytes, 4);
    }

    #[test]
    fn finish_without_prior_decode_still_reads_the_header() {
        let mut d = Decoder::new(100);
        let rest = b"\n\n30 <13>short";
        let frame = d.finish(rest).expect("partial frame");
        assert_eq!(frame.bytes(rest), b"<13>short");
        assert_eq!(frame.framing, Framing::OctetCounting);
        assert!(d.at_boundary());
        assert_eq!(d.finish(b""), None);
    }

    #[test]
    fn long_line_in_small_reads_is_scanned_once() {
        // Not a timing test: the `scanned` bookkeeping must not skip an LF that arrives in a
        // later read right at the boundary of what was already scanned.
        let mut d = Decoder::new(1000);
        let mut buf = b"<13>abc".to_vec();
        assert_eq!(d.decode(&buf).frame, None);
        buf.extend_from_slice(b"\n");
        let step = d.decode(&buf);
        assert_eq!(
            step.frame.map(|f| f.bytes(&buf).to_vec()),
            Some(b"<13>abc".to_vec())
        );
        assert_eq!(step.consumed, 8);
    }

    /// One message as the generator makes it, with the framing it will be sent with.
    fn message() -> impl Strategy<Value = (Vec<u8>, bool)> {
        prop_oneof![
            // Octet-counted: a PRI start, then anything, LFs and NULs included.
            proptest::collection::vec(any::<u8>(), 0..120).prop_map(|mut v| {
                v.insert(0, b'<');
                (v, true)
            }),
            // LF-framed: no LF inside; starts with a non-digit so it cannot look like a
            // count; may end in CR.
            (
                prop_oneof![Just(b'<'), b'a'..=b'z', Just(b' '), Just(0u8)],
                proptest::collection::vec(
                    any::<u8>().prop_filter("no LF", |b| *b != b'\n'),
                    0..120
                )
            )
                .prop_map(|(first, mut v)| {
                    v.insert(0, first);
                    (v, false)
                }),
        ]
    }

    fn expected(msgs: &[(Vec<u8>, bool)], max: usize) -> Vec<Out> {
        msgs.iter()
            .map(|(m, counted)| Out {
                bytes: m[..m.len().min(max)].to_vec(),
                framing: if *counted {
                    Framing::OctetCounting
                } else {
                    Framing::LineFeed
                },
                truncated: m.len() > max,
                partial: false,
            })
            .collect()
    }

    fn encode(msgs: &[(Vec<u8>, bool)]) -> Vec<u8> {
        let mut stream = Vec::new();
        for (m, counted) in msgs {
            if *counted {
                stream.extend_from_slice(&octet(m));
            } else {
                stream.extend_from_slice(m);
                stream.push(b'\n');
            }
        }
        stream
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn round_trip_over_random_chunks(
            msgs in proptest::collection::vec(message(), 0..30),
            chunks in proptest::collection::vec(1usize..300, 1..20),
        ) {
            let stream = encode(&msgs);
            let mut d = Decoder::new(1000);
            let out = run(&mut d, &stream, &chunks);
            prop_assert_eq!(out, expected(&msgs, 1000));
            prop_assert_eq!(d.stats().discarded_bytes, 0);
        }

        #[test]
        fn oversize_round_trip_resyncs_exactly(
            msgs in proptest::collection::vec(message(), 0..30),
            chunks in proptest::collection::vec(1usize..64, 1..20),
            max in 1usize..40,
        ) {
            let stream = encode(&msgs);
            let mut d = Decoder::new(max);
            let out = run(&mut d, &stream, &chunks);
            prop_assert_eq!(out, expected(&msgs, max));
        }

        #[test]
        fn garbage_never_stalls_and_is_chunking_independent(
            stream in proptest::collection::vec(
                prop_oneof![4 => any::<u8>(), 1 => Just(b'\n'), 1 => Just(b' '), 1 => Just(b'<'), 2 => b'0'..=b'9'],
                0..600,
            ),
            chunks in proptest::collection::vec(1usize..50, 1..10),
            max in 1usize..64,
        ) {
            let whole = run(&mut Decoder::new(max), &stream, &[usize::MAX]);
            let mut d = Decoder::new(max);
            let chunked = run(&mut d, &stream, &chunks);
            prop_assert_eq!(&whole, &chunked);
            for o in &chunked {
                prop_assert!(o.bytes.len() <= max);
            }
            prop_assert_eq!(d.stats().frames, chunked.len() as u64);
        }
    }
}
