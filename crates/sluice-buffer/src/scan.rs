//! Walking a segment file: which byte ranges hold valid records and which are damaged.
//!
//! The scanner never trusts a length before the header CRC has confirmed it, never reads
//! beyond the source, and after damage it resynchronises on the next position that holds a
//! valid record header (magic, header CRC, increasing id). A record is accepted when it also
//! lies within the file and, in [`Verify::Full`] mode, its body passes its checks (its CRC,
//! or for a format 2 record at least one event's CRC; the events that fail theirs are the
//! reader's to count). A record rejected with an intact header is a damaged range of its
//! own, reported with its id and event count. It is generic over [`ReadAt`] so the open-time recovery uses it
//! on files and the fuzz target on byte slices. It does no logging and keeps no state: the
//! caller decides what damage means.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::format::{
    BodyProblem, HeaderProblem, RECORD_HEADER_LEN, RECORD_MAGIC, RecordHeader, SEGMENT_HEADER_LEN,
    SegmentHeader, check_body,
};

/// Positional reads from a segment's bytes.
pub trait ReadAt {
    /// Total bytes available.
    fn size(&self) -> u64;
    /// Fills `buf` from `offset`; the caller guarantees `offset + buf.len() <= size()`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

impl ReadAt for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
        let src = start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// A file of known length (the length is taken once, so a concurrent append cannot move the
/// end under the scanner).
#[derive(Debug)]
pub struct FileSource<'a> {
    pub file: &'a File,
    pub len: u64,
}

impl ReadAt for FileSource<'_> {
    fn size(&self) -> u64 {
        self.len
    }
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self.file, buf, offset)
    }
}

/// How much of each record to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Record headers only (CRC-checked). Bodies are checked later, when a reader reads them.
    /// Used for sealed segments: opening a large buffer then costs one small read per record.
    Headers,
    /// Headers and bodies (CRCs and offsets table). Used for the newest segment, whose tail may
    /// be torn: a crash can leave a header written with its body only partly on disk. A format
    /// 2 record with some events intact is accepted (the reader recovers them); one with none
    /// is damage.
    Full,
}

/// A record the scanner accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScannedRecord {
    pub id: u64,
    pub offset: u64,
    /// Whole record: header plus body.
    pub len: u64,
    pub events: u32,
    pub timestamp_micros: i64,
}

/// A byte range the scanner skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    pub offset: u64,
    pub len: u64,
    /// What was wrong at `offset`.
    pub what: &'static str,
    /// The record at `offset` when its header was intact (it ran beyond the end of the file,
    /// or its body failed its checks): the events this damage is known to cost.
    pub record: Option<LostRecord>,
}

/// A record the scanner rejected although its header was intact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostRecord {
    pub id: u64,
    pub events: u32,
}

/// Result of scanning one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentScan {
    pub header: Result<SegmentHeader, HeaderProblem>,
    /// Accepted records in file order; ids strictly increase.
    pub records: Vec<ScannedRecord>,
    /// Skipped ranges in file order. Records and damage tile `[records_start, len)` exactly.
    pub damage: Vec<Damage>,
    /// Where records start: [`SEGMENT_HEADER_LEN`], or 0 for a file shorter than a header.
    pub records_start: u64,
    /// End of the last accepted record (or `records_start`).
    pub valid_end: u64,
    pub len: u64,
}

impl SegmentScan {
    /// The damaged ranges after the last accepted record: what a torn write leaves at the
    /// end of the newest segment (one or more records cut short or never fully written).
    pub fn tail(&self) -> &[Damage] {
        let first = self.damage.partition_point(|d| d.offset < self.valid_end);
        &self.damage[first..]
    }

    /// Damage that runs to the end of the file: a torn or truncated tail.
    pub fn tail_damage(&self) -> Option<Damage> {
        self.damage
            .last()
            .copied()
            .filter(|d| d.offset + d.len == self.len && d.offset >= self.valid_end)
    }
}

enum Rejection {
    /// No valid header here (the common case while resynchronising).
    Header,
    Beyond(LostRecord),
    Order,
    Body(BodyProblem, LostRecord),
}

impl Rejection {
    fn what(&self) -> &'static str {
        match self {
            Rejection::Header => "record header invalid",
            Rejection::Beyond(_) => "record extends beyond the end of the file",
            Rejection::Order => "record id not above the previous one",
            Rejection::Body(p, _) => p.as_str(),
        }
    }

    fn record(&self) -> Option<LostRecord> {
        match self {
            Rejection::Beyond(r) | Rejection::Body(_, r) => Some(*r),
            Rejection::Header | Rejection::Order => None,
        }
    }
}

fn record_at<S: ReadAt + ?Sized>(
    src: &S,
    pos: u64,
    last_id: Option<u64>,
    verify: Verify,
    body: &mut Vec<u8>,
) -> io::Result<Result<ScannedRecord, Rejection>> {
    let len = src.size();
    if len.saturating_sub(pos) < RECORD_HEADER_LEN as u64 {
        return Ok(Err(Rejection::Header));
    }
    let mut hb = [0u8; RECORD_HEADER_LEN];
    src.read_exact_at(&mut hb, pos)?;
    let Some(h) = RecordHeader::decode(&hb) else {
        return Ok(Err(Rejection::Header));
    };
    let lost = LostRecord {
        id: h.id,
        events: h.events,
    };
    if last_id.is_some_and(|l| h.id <= l) {
        return Ok(Err(Rejection::Order));
    }
    if h.record_len() > len - pos {
        return Ok(Err(Rejection::Beyond(lost)));
    }
    if verify == Verify::Full {
        body.clear();
        body.resize(h.body_len as usize, 0);
        src.read_exact_at(body, pos + RECORD_HEADER_LEN as u64)?;
        if let Err(p) = check_body(&h, body) {
            return Ok(Err(Rejection::Body(p, lost)));
        }
    }
    Ok(Ok(ScannedRecord {
        id: h.id,
        offset: pos,
        len: h.record_len(),
        events: h.events,
        timestamp_micros: h.timestamp_micros,
    }))
}

const RESYNC_CHUNK: usize = 64 * 1024;

/// The first position at or after `from` that holds a valid record header with an id above
/// `last_id`. The record there may still be rejected (its body, or its length running beyond
/// the end): it is then damage of its own, so that every record whose header survived is
/// reported with its id and events, never swallowed by the damage before it.
fn resync<S: ReadAt + ?Sized>(
    src: &S,
    from: u64,
    last_id: Option<u64>,
    body: &mut Vec<u8>,
) -> io::Result<Option<u64>> {
    let len = src.size();
    let mut chunk = vec![0u8; RESYNC_CHUNK];
    let mut base = from;
    while len.saturating_sub(base) >= RECORD_HEADER_LEN as u64 {
        let n = usize::try_from((len - base).min(RESYNC_CHUNK as u64)).unwrap_or(RESYNC_CHUNK);
        src.read_exact_at(&mut chunk[..n], base)?;
        let window = &chunk[..n];
        // Candidate starts: every position in this chunk whose 4 bytes (possibly running into
        // the next chunk, which `record_at` reads itself) begin with the magic's first byte.
        for (i, _) in window
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == RECORD_MAGIC[0])
        {
            let at = base + i as u64;
            if i + 4 <= n && window[i..i + 4] != RECORD_MAGIC {
                continue;
            }
            if matches!(
                record_at(src, at, last_id, Verify::Headers, body)?,
                Ok(_) | Err(Rejection::Beyond(_))
            ) {
                return Ok(Some(at));
            }
        }
        base += n as u64;
    }
    Ok(None)
}

/// Scans a whole segment.
pub fn scan_segment<S: ReadAt + ?Sized>(src: &S, verify: Verify) -> io::Result<SegmentScan> {
    let len = src.size();
    let mut hb = [0u8; SEGMENT_HEADER_LEN];
    let header = if len >= SEGMENT_HEADER_LEN as u64 {
        src.read_exact_at(&mut hb, 0)?;
        SegmentHeader::decode(&hb)
    } else {
        Err(HeaderProblem::Short)
    };
    let records_start = if len >= SEGMENT_HEADER_LEN as u64 {
        SEGMENT_HEADER_LEN as u64
    } else {
        0
    };
    let mut scan = SegmentScan {
        header,
        records: Vec::new(),
        damage: Vec::new(),
        records_start,
        valid_end: records_start,
        len,
    };
    if records_start == 0 {
        if len > 0 {
            scan.damage.push(Damage {
                offset: 0,
                len,
                what: "file shorter than a segment header",
                record: None,
            });
        }
        return Ok(scan);
    }
    let mut body = Vec::new();
    let mut pos = records_start;
    let mut last_id = None;
    while pos < len {
        match record_at(src, pos, last_id, verify, &mut body)? {
            Ok(r) => {
                last_id = Some(r.id);
                pos += r.len;
                scan.valid_end = pos;
                scan.records.push(r);
            }
            Err(why) => {
                let end = resync(src, pos + 1, last_id, &mut body)?.unwrap_or(len);
                scan.damage.push(Damage {
                    offset: pos,
                    len: end - pos,
                    what: why.what(),
                    record: why.record(),
                });
                pos = end;
            }
        }
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{encode_record, stamp_id};

    fn segment(ids: &[u64]) -> (Vec<u8>, Vec<(u64, u64)>) {
        let mut b = SegmentHeader {
            segment_id: 1,
            first_record_id: ids[0],
            created_micros: 0,
        }
        .encode()
        .to_vec();
        let mut spans = Vec::new();
        for (n, &id) in ids.iter().enumerate() {
            let payload = vec![b'a' + (n % 26) as u8; 50 + n * 7];
            let mut r = encode_record(&payload, 1, None, id as i64);
            stamp_id(&mut r, id);
            spans.push((b.len() as u64, r.len() as u64));
            b.extend_from_slice(&r);
        }
        (b, spans)
    }

    fn ids(s: &SegmentScan) -> Vec<u64> {
        s.records.iter().map(|r| r.id).collect()
    }

    fn assert_tiles(s: &SegmentScan) {
        let mut parts: Vec<(u64, u64)> = s.records.iter().map(|r| (r.offset, r.len)).collect();
        parts.extend(s.damage.iter().map(|d| (d.offset, d.len)));
        parts.sort();
        let mut at = s.records_start;
        for (o, l) in parts {
            assert_eq!(o, at);
            at += l;
        }
        assert_eq!(at, s.len);
    }

    #[test]
    fn clean_segment() {
        let (b, _) = segment(&[5, 6, 7]);
        for v in [Verify::Headers, Verify::Full] {
            let s = scan_segment(&b[..], v).unwrap();
            assert_eq!(ids(&s), [5, 6, 7]);
            assert!(s.damage.is_empty() && s.tail_damage().is_none());
            assert_eq!(s.valid_end, b.len() as u64);
        }
    }

    #[test]
    fn torn_tail_is_reported_as_tail_damage() {
        let (b, spans) = segment(&[1, 2, 3]);
        let cut = spans[2].0 + 17;
        let s = scan_segment(&b[..cut as usize], Verify::Full).unwrap();
        assert_eq!(ids(&s), [1, 2]);
        let t = s.tail_damage().unwrap();
        assert_eq!((t.offset, t.len), (spans[2].0, 17));
        assert_tiles(&s);
    }

    #[test]
    fn body_flip_loses_one_record_in_full_mode_only() {
        let (mut b, spans) = segment(&[1, 2, 3, 4]);
        b[(spans[1].0 + 45) as usize] ^= 0x20;
        let full = scan_segment(&b[..], Verify::Full).unwrap();
        assert_eq!(ids(&full), [1, 3, 4]);
        assert_eq!(full.damage.len(), 1);
        assert_eq!(full.damage[0].offset, spans[1].0);
        assert_tiles(&full);
        // Header-only scans accept it; the reader catches the body later.
        assert_eq!(
            ids(&scan_segment(&b[..], Verify::Headers).unwrap()),
            [1, 2, 3, 4]
        );
    }

    #[test]
    fn header_flip_resyncs_on_next_record() {
        let (mut b, spans) = segment(&[1, 2, 3, 4]);
        b[(spans[2].0 + 9) as usize] ^= 0x01; // body_len
        for v in [Verify::Headers, Verify::Full] {
            let s = scan_segment(&b[..], v).unwrap();
            assert_eq!(ids(&s), [1, 2, 4]);
            assert_tiles(&s);
        }
    }

    #[test]
    fn bad_segment_header_still_yields_records() {
        let (mut b, _) = segment(&[1, 2]);
        b[3] ^= 0xff;
        let s = scan_segment(&b[..], Verify::Full).unwrap();
        assert_eq!(s.header, Err(HeaderProblem::Corrupt));
        assert_eq!(ids(&s), [1, 2]);
    }

    #[test]
    fn garbage_and_short_files_do_not_panic() {
        for n in [0usize, 1, 47, 48, 49, 100, 5000] {
            let g: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
            let s = scan_segment(&g[..], Verify::Full).unwrap();
            assert!(s.records.is_empty());
            if n > 0 && n != 48 {
                assert!(s.tail_damage().is_some());
            }
        }
    }

    #[test]
    fn ids_must_increase() {
        let (b, _) = segment(&[3, 2, 4]);
        let s = scan_segment(&b[..], Verify::Headers).unwrap();
        assert_eq!(ids(&s), [3, 4]);
        assert_eq!(s.damage[0].what, "record id not above the previous one");
    }

    /// The fuzz target's invariants, run in CI on damaged copies of valid segments.
    fn check_invariants(data: &[u8]) {
        for verify in [Verify::Headers, Verify::Full] {
            let s = scan_segment(data, verify).unwrap();
            assert_tiles(&s);
            assert!(s.records.windows(2).all(|w| w[0].id < w[1].id));
            for r in &s.records {
                let b = &data[r.offset as usize..(r.offset + r.len) as usize];
                let h = RecordHeader::decode(b).unwrap();
                assert_eq!(h.id, r.id);
                if verify == Verify::Full {
                    check_body(&h, &b[RECORD_HEADER_LEN..]).unwrap();
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn damaged_segments_keep_the_invariants(
            n in 1usize..8,
            edits in proptest::collection::vec((0usize..4096, proptest::num::u8::ANY, 0u8..3), 0..6),
            cut in proptest::option::of(0usize..4096),
        ) {
            let ids: Vec<u64> = (10..10 + n as u64).collect();
            let (mut b, _) = segment(&ids);
            for (at, v, kind) in edits {
                let at = at % b.len();
                match kind {
                    0 => b[at] ^= v | 1,
                    1 => b.insert(at, v),
                    _ => { b.remove(at); }
                }
                if b.is_empty() { break; }
            }
            if let Some(c) = cut {
                b.truncate(c % (b.len() + 1));
            }
            check_invariants(&b);
        }

        #[test]
        fn one_flipped_body_byte_loses_only_that_record(n in 2usize..8, pick in 0usize..8, at in 0usize..1000) {
            let all: Vec<u64> = (0..n as u64).collect();
            let (mut b, spans) = segment(&all);
            let victim = pick % n;
            let (off, len) = spans[victim];
            let body = len - RECORD_HEADER_LEN as u64;
            b[(off + RECORD_HEADER_LEN as u64 + at as u64 % body) as usize] ^= 0x80;
            let s = scan_segment(&b[..], Verify::Full).unwrap();
            let want: Vec<u64> = all.iter().copied().filter(|&i| i != victim as u64).collect();
            proptest::prop_assert_eq!(ids(&s), want);
            proptest::prop_assert_eq!(s.damage.len(), 1);
        }
    }
}
