//! The bytes on the wire: loggen-shaped generated messages and replayed file lines.
//!
//! A generated message is rendered once per connection into a buffer that holds a whole
//! batch of copies back to back (one *slot* per message, each with its framing prefix).
//! Sending a batch only rewrites the 10 sequence digits of each slot it uses; the two
//! timestamps are rewritten in every slot when the wall-clock second changes. Nothing is
//! formatted or allocated per message.

use std::{io, path::Path};

use jiff::tz::TimeZone;

use super::{Format, LoggenError, Transport};

/// `seq` has 10 digits, as in loggen; it wraps to 0 after 9,999,999,999.
pub(crate) const SEQ_MODULUS: u64 = 10_000_000_000;
const SEQ_DIGITS: usize = 10;
const PADDING: &[u8] = b"PADD";
/// The UTF-8 byte order mark RFC 5424 puts before a UTF-8 MSG, as loggen -P does.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What precedes each message on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// UDP datagrams and LF-framed TCP: the message itself ends with LF.
    None,
    /// RFC 6587 octet counting (`tcp-octet`, `tls`): `"<len> "` before the message; the
    /// count includes the message's trailing LF, exactly as loggen -P frames it.
    Octet,
}

impl Framing {
    pub(crate) fn of(transport: Transport) -> Framing {
        match transport {
            Transport::Udp | Transport::Tcp => Framing::None,
            Transport::TcpOctet | Transport::Tls => Framing::Octet,
        }
    }

    fn prefix(self, message_len: usize) -> Vec<u8> {
        match self {
            Framing::None => Vec::new(),
            Framing::Octet => format!("{message_len} ").into_bytes(),
        }
    }
}

/// The wall-clock second as it appears in the messages: `YYYY-MM-DDTHH:MM:SS` in the
/// sender's local time, and the zone offset `+HH:MM` that RFC 5424 headers carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) unix: i64,
    pub(crate) local: [u8; 19],
    pub(crate) offset: [u8; 6],
}

impl Stamp {
    /// The stamp of `unix` seconds in `tz`. A second jiff cannot represent (far outside
    /// years -9999..9999) renders as the epoch rather than failing the run.
    pub(crate) fn at(unix: i64, tz: &TimeZone) -> Stamp {
        let zoned = jiff::Timestamp::from_second(unix)
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
            .to_zoned(tz.clone());
        let mut local = *b"0000-00-00T00:00:00";
        put_digits(&mut local[0..4], i64::from(zoned.year()).unsigned_abs());
        put_digits(&mut local[5..7], u64::from(zoned.month().unsigned_abs()));
        put_digits(&mut local[8..10], u64::from(zoned.day().unsigned_abs()));
        put_digits(&mut local[11..13], u64::from(zoned.hour().unsigned_abs()));
        put_digits(&mut local[14..16], u64::from(zoned.minute().unsigned_abs()));
        put_digits(&mut local[17..19], u64::from(zoned.second().unsigned_abs()));
        let off = zoned.offset().seconds();
        let mut offset = *b"+00:00";
        if off < 0 {
            offset[0] = b'-';
        }
        let off = u64::from(off.unsigned_abs());
        put_digits(&mut offset[1..3], off / 3600);
        put_digits(&mut offset[4..6], off % 3600 / 60);
        Stamp {
            unix,
            local,
            offset,
        }
    }
}

/// Write `v` as zero-padded decimal filling `dst` (higher digits that do not fit are
/// dropped, which is how `seq` wraps).
pub(crate) fn put_digits(dst: &mut [u8], mut v: u64) {
    for d in dst.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// Everything that decides the shape of a generated message.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    pub(crate) format: Format,
    pub(crate) sdata: Option<String>,
    pub(crate) run_id: u64,
    pub(crate) size: usize,
    pub(crate) framing: Framing,
}

/// Offsets inside one framed message.
#[derive(Debug, Clone, Copy)]
struct Layout {
    seq: usize,
    header_stamp: usize,
    /// RFC 5424 only: where the `+HH:MM` after the header stamp goes.
    offset: Option<usize>,
    body_stamp: usize,
}

/// The message without padding, up to and including the body stamp, with its offsets.
fn header(shape: &Shape, thread: u32, stamp: &Stamp) -> (Vec<u8>, Layout) {
    let mut h = Vec::with_capacity(160);
    let header_stamp;
    let mut offset = None;
    match shape.format {
        Format::Rfc5424 => {
            h.extend_from_slice(b"<38>1 ");
            header_stamp = h.len();
            h.extend_from_slice(&stamp.local);
            offset = Some(h.len());
            h.extend_from_slice(&stamp.offset);
            h.extend_from_slice(b" localhost prg00000 1234 - ");
            h.extend_from_slice(shape.sdata.as_deref().unwrap_or("-").as_bytes());
            h.push(b' ');
            h.extend_from_slice(BOM);
        }
        // Replay never renders a template; the rfc3164 shape is the default.
        Format::Rfc3164 | Format::Replay => {
            h.extend_from_slice(b"<38>");
            header_stamp = h.len();
            h.extend_from_slice(&stamp.local);
            h.extend_from_slice(b" localhost prg00000[1234]: ");
        }
    }
    h.extend_from_slice(b"seq: ");
    let seq = h.len();
    h.extend_from_slice(&[b'0'; SEQ_DIGITS]);
    h.extend_from_slice(
        format!(", thread: {thread:04}, runid: {}, stamp: ", shape.run_id).as_bytes(),
    );
    let body_stamp = h.len();
    h.extend_from_slice(&stamp.local);
    (
        h,
        Layout {
            seq,
            header_stamp,
            offset,
            body_stamp,
        },
    )
}

/// The smallest `--size` that holds the header of `thread` plus the trailing LF.
pub(crate) fn min_size(shape: &Shape, thread: u32) -> usize {
    let epoch = Stamp::at(0, &TimeZone::UTC);
    header(shape, thread, &epoch).0.len() + 1
}

/// One framed message of exactly `shape.size` bytes (plus framing); `None` when the size
/// cannot hold the header (callers validate with [`min_size`] first).
fn render(shape: &Shape, thread: u32, stamp: &Stamp) -> Option<(Vec<u8>, Layout)> {
    let (mut msg, mut layout) = header(shape, thread, stamp);
    if shape.size < msg.len() + 1 {
        return None;
    }
    let pad = shape.size - msg.len() - 1;
    if pad > 0 {
        msg.push(b' ');
        msg.extend(PADDING.iter().copied().cycle().take(pad - 1));
    }
    msg.push(b'\n');
    let prefix = shape.framing.prefix(msg.len());
    let shift = prefix.len();
    layout.seq += shift;
    layout.header_stamp += shift;
    layout.offset = layout.offset.map(|o| o + shift);
    layout.body_stamp += shift;
    let mut framed = prefix;
    framed.extend_from_slice(&msg);
    Some((framed, layout))
}

/// A batch of generated messages for one connection.
#[derive(Debug)]
pub(crate) struct Generated {
    buf: Vec<u8>,
    len: usize,
    slots: usize,
    layout: Layout,
    stamp: Stamp,
    tz: TimeZone,
    next_seq: u64,
}

impl Generated {
    pub(crate) fn new(
        shape: &Shape,
        thread: u32,
        slots: usize,
        now_unix: i64,
        tz: TimeZone,
    ) -> Result<Generated, LoggenError> {
        let stamp = Stamp::at(now_unix, &tz);
        let (one, layout) = render(shape, thread, &stamp).ok_or_else(|| {
            LoggenError::invalid(
                "--size",
                format!(
                    "{} bytes cannot hold the {} header of this run, which needs at least {} (including the LF)",
                    shape.size,
                    shape.format.name(),
                    min_size(shape, thread)
                ),
            )
        })?;
        let slots = slots.max(1);
        let mut buf = Vec::with_capacity(one.len() * slots);
        for _ in 0..slots {
            buf.extend_from_slice(&one);
        }
        Ok(Generated {
            buf,
            len: one.len(),
            slots,
            layout,
            stamp,
            tz,
            next_seq: 0,
        })
    }

    /// Rewrite the first `min(want, slots)` slots for the next sequence numbers (and all
    /// stamps if the second changed); returns how many are ready.
    pub(crate) fn prepare(&mut self, want: usize, now_unix: i64) -> usize {
        if now_unix != self.stamp.unix {
            self.restamp(Stamp::at(now_unix, &self.tz));
        }
        let n = want.min(self.slots);
        let Layout { seq, .. } = self.layout;
        for (i, slot) in self.buf.chunks_exact_mut(self.len).take(n).enumerate() {
            let v = (self.next_seq + i as u64) % SEQ_MODULUS;
            put_digits(&mut slot[seq..seq + SEQ_DIGITS], v);
        }
        n
    }

    fn restamp(&mut self, stamp: Stamp) {
        let l = self.layout;
        for slot in self.buf.chunks_exact_mut(self.len) {
            slot[l.header_stamp..l.header_stamp + 19].copy_from_slice(&stamp.local);
            if let Some(o) = l.offset {
                slot[o..o + 6].copy_from_slice(&stamp.offset);
            }
            slot[l.body_stamp..l.body_stamp + 19].copy_from_slice(&stamp.local);
        }
        self.stamp = stamp;
    }

    pub(crate) fn message(&self, i: usize) -> &[u8] {
        &self.buf[i * self.len..(i + 1) * self.len]
    }

    pub(crate) fn contiguous(&self, n: usize) -> &[u8] {
        &self.buf[..n * self.len]
    }

    pub(crate) fn complete_in(&self, written: usize) -> usize {
        written / self.len
    }

    pub(crate) fn advance(&mut self, k: usize) {
        self.next_seq += k as u64;
    }
}

/// The lines of a `--file`, framed for the transport, back to back.
#[derive(Debug)]
pub(crate) struct ReplayData {
    bytes: Vec<u8>,
    /// `ends[i]` is where message `i` ends in `bytes`; message 0 starts at 0.
    ends: Vec<usize>,
}

impl ReplayData {
    /// Read `path`: each non-empty line (its LF or CRLF terminator removed) becomes one
    /// message `line + "\n"`, preceded by its octet count when the framing asks for it.
    pub(crate) fn load(
        path: &Path,
        framing: Framing,
        max_message: usize,
    ) -> Result<ReplayData, LoggenError> {
        let file_err = |reason: String| LoggenError::ReplayFile {
            path: path.to_owned(),
            reason,
        };
        let raw = std::fs::read(path).map_err(|e| {
            file_err(match e.kind() {
                io::ErrorKind::NotFound => "no such file".to_owned(),
                _ => e.to_string(),
            })
        })?;
        let mut bytes = Vec::with_capacity(raw.len() + raw.len() / 8);
        let mut ends = Vec::new();
        for (n, line) in raw.split(|&b| b == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            let len = line.len() + 1;
            if len > max_message {
                return Err(file_err(format!(
                    "line {} is {len} bytes with its LF, more than the {max_message} this transport can send in one message",
                    n + 1
                )));
            }
            bytes.extend_from_slice(&framing.prefix(len));
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
            ends.push(bytes.len());
        }
        if ends.is_empty() {
            return Err(file_err(
                "the file has no non-empty line to send".to_owned(),
            ));
        }
        Ok(ReplayData { bytes, ends })
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    fn start(&self, i: usize) -> usize {
        if i == 0 { 0 } else { self.ends[i - 1] }
    }
}

/// One connection's position in the replayed file; it wraps to the first line at the end.
#[derive(Debug)]
pub(crate) struct ReplayCursor<'r> {
    data: &'r ReplayData,
    next: usize,
}

impl<'r> ReplayCursor<'r> {
    pub(crate) fn new(data: &'r ReplayData) -> ReplayCursor<'r> {
        ReplayCursor { data, next: 0 }
    }

    /// Stops at the end of the file so the batch stays one contiguous slice.
    fn prepare(&self, want: usize) -> usize {
        want.min(self.data.len() - self.next)
    }

    fn message(&self, i: usize) -> &[u8] {
        let k = self.next + i;
        &self.data.bytes[self.data.start(k)..self.data.ends[k]]
    }

    fn contiguous(&self, n: usize) -> &[u8] {
        &self.data.bytes[self.data.start(self.next)..self.data.start(self.next + n)]
    }

    fn complete_in(&self, written: usize) -> usize {
        let base = self.data.start(self.next);
        let ends = &self.data.ends[self.next..];
        ends.partition_point(|&e| e - base <= written)
    }

    fn advance(&mut self, k: usize) {
        self.next = (self.next + k) % self.data.len();
    }
}

/// The messages one connection sends.
#[derive(Debug)]
pub(crate) enum Messages<'r> {
    Generated(Generated),
    Replay(ReplayCursor<'r>),
}

impl Messages<'_> {
    /// Make up to `want` messages ready at indexes `0..n`; returns `n` (≥ 1 when want ≥ 1).
    pub(crate) fn prepare(&mut self, want: usize, now_unix: i64) -> usize {
        match self {
            Messages::Generated(g) => g.prepare(want, now_unix),
            Messages::Replay(r) => r.prepare(want),
        }
    }

    pub(crate) fn message(&self, i: usize) -> &[u8] {
        match self {
            Messages::Generated(g) => g.message(i),
            Messages::Replay(r) => r.message(i),
        }
    }

    /// The first `n` prepared messages as one byte string (stream transports).
    pub(crate) fn contiguous(&self, n: usize) -> &[u8] {
        match self {
            Messages::Generated(g) => g.contiguous(n),
            Messages::Replay(r) => r.contiguous(n),
        }
    }

    /// How many whole messages the first `written` bytes of [`contiguous`](Self::contiguous)
    /// hold.
    pub(crate) fn complete_in(&self, written: usize) -> usize {
        match self {
            Messages::Generated(g) => g.complete_in(written),
            Messages::Replay(r) => r.complete_in(written),
        }
    }

    /// The first `k` prepared messages were sent.
    pub(crate) fn advance(&mut self, k: usize) {
        match self {
            Messages::Generated(g) => g.advance(k),
            Messages::Replay(r) => r.advance(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(format: Format, size: usize, framing: Framing) -> Shape {
        Shape {
            format,
            sdata: None,
            run_id: 1_772_713_731,
            size,
            framing,
        }
    }

    const T: i64 = 1_772_713_731; // 2026-03-05T12:28:51Z

    #[test]
    fn rfc3164_matches_loggen_byte_for_byte() {
        let s = shape(Format::Rfc3164, 203, Framing::None);
        let mut g = Generated::new(&s, 3, 4, T, TimeZone::UTC).unwrap();
        assert_eq!(g.prepare(2, T), 2);
        g.advance(1);
        g.prepare(2, T);
        let want = "<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000001, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 PADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPAD\n";
        assert_eq!(std::str::from_utf8(g.message(0)).unwrap(), want);
        assert_eq!(g.message(0).len(), 203);
        assert_eq!(&g.message(1)[55..65], b"0000000002");
        // loggen's documented seq offset for the default format
        assert_eq!(&g.message(0)[55..65], b"0000000001");
    }

    #[test]
    fn rfc5424_with_and_without_sdata() {
        let mut s = shape(Format::Rfc5424, 203, Framing::None);
        let mut g = Generated::new(&s, 0, 1, T, TimeZone::UTC).unwrap();
        g.prepare(1, T);
        let want = b"<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - - \xEF\xBB\xBFseq: 0000000000, thread: 0000, runid: 1772713731, stamp: 2026-03-05T12:28:51 PADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPADDPA\n";
        assert_eq!(g.message(0), &want[..]);
        s.sdata = Some("[x@1 a=\"b\"]".to_owned());
        let mut g = Generated::new(&s, 0, 1, T, TimeZone::UTC).unwrap();
        g.prepare(1, T);
        let m = g.message(0);
        assert_eq!(m.len(), 203);
        assert!(m.starts_with(b"<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - [x@1 a=\"b\"] \xEF\xBB\xBFseq: 0000000000, thread: 0000,"));
    }

    #[test]
    fn octet_framing_counts_the_message_with_its_lf() {
        let s = shape(Format::Rfc3164, 200, Framing::Octet);
        let mut g = Generated::new(&s, 0, 3, T, TimeZone::UTC).unwrap();
        assert_eq!(g.prepare(5, T), 3);
        let all = g.contiguous(3);
        assert_eq!(all.len(), 3 * 204);
        for (i, frame) in all.chunks(204).enumerate() {
            assert!(frame.starts_with(b"200 <38>"));
            assert!(frame.ends_with(b"\n"));
            assert_eq!(&frame[4 + 55..4 + 65], format!("{i:010}").as_bytes());
        }
        assert_eq!(g.complete_in(204 * 2 + 203), 2);
    }

    #[test]
    fn stamps_follow_the_second_and_the_zone() {
        let s = shape(Format::Rfc5424, 300, Framing::None);
        let tz = TimeZone::get("Asia/Kolkata").unwrap();
        let mut g = Generated::new(&s, 0, 2, T, tz).unwrap();
        g.prepare(2, T + 61);
        for i in 0..2 {
            let m = std::str::from_utf8(g.message(i)).unwrap();
            assert!(m.starts_with("<38>1 2026-03-05T17:59:52+05:30 "), "{m}");
            assert!(m.contains("stamp: 2026-03-05T17:59:52 PADD"), "{m}");
        }
    }

    #[test]
    fn sequence_wraps_after_ten_digits() {
        let s = shape(Format::Rfc3164, 200, Framing::None);
        let mut g = Generated::new(&s, 0, 2, T, TimeZone::UTC).unwrap();
        g.advance((SEQ_MODULUS - 1) as usize);
        g.prepare(2, T);
        assert_eq!(&g.message(0)[55..65], b"9999999999");
        assert_eq!(&g.message(1)[55..65], b"0000000000");
    }

    #[test]
    fn min_size_is_the_header_plus_lf() {
        let s = shape(Format::Rfc3164, 0, Framing::None);
        let min = min_size(&s, 0);
        assert_eq!(min, 127);
        let ok = Shape {
            size: min,
            ..s.clone()
        };
        let mut g = Generated::new(&ok, 0, 1, T, TimeZone::UTC).unwrap();
        g.prepare(1, T);
        assert!(g.message(0).ends_with(b"stamp: 2026-03-05T12:28:51\n"));
        let small = Shape { size: min - 1, ..s };
        let err = Generated::new(&small, 0, 1, T, TimeZone::UTC).unwrap_err();
        assert!(err.to_string().contains("--size"), "{err}");
    }

    #[test]
    fn replay_frames_lines_and_wraps() {
        let dir = std::env::temp_dir().join(format!("loggen-replay-{}", std::process::id()));
        std::fs::write(&dir, b"first line\r\n\nsecond\nthird").unwrap();
        let data = ReplayData::load(&dir, Framing::Octet, 1000).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(data.len(), 3);
        let mut m = Messages::Replay(ReplayCursor::new(&data));
        assert_eq!(m.prepare(10, 0), 3);
        assert_eq!(m.message(0), b"11 first line\n");
        assert_eq!(m.message(2), b"6 third\n");
        assert_eq!(m.contiguous(2), b"11 first line\n7 second\n");
        assert_eq!(m.complete_in(14 + 9), 2);
        assert_eq!(m.complete_in(14 + 8), 1);
        m.advance(2);
        assert_eq!(m.prepare(10, 0), 1);
        m.advance(1);
        assert_eq!(m.prepare(1, 0), 1);
        assert_eq!(m.message(0), b"11 first line\n");
    }

    #[test]
    fn replay_rejects_missing_empty_and_oversized() {
        let missing = ReplayData::load(Path::new("/nonexistent/loggen.txt"), Framing::None, 100)
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("/nonexistent/loggen.txt") && missing.contains("no such file"),
            "{missing}"
        );
        let p = std::env::temp_dir().join(format!("loggen-empty-{}", std::process::id()));
        std::fs::write(&p, b"\n\r\n\n").unwrap();
        let empty = ReplayData::load(&p, Framing::None, 100)
            .unwrap_err()
            .to_string();
        std::fs::write(&p, b"ok\n0123456789\n").unwrap();
        let big = ReplayData::load(&p, Framing::None, 10)
            .unwrap_err()
            .to_string();
        std::fs::remove_file(&p).unwrap();
        assert!(empty.contains("no non-empty line"), "{empty}");
        assert!(big.contains("line 2"), "{big}");
    }
}
