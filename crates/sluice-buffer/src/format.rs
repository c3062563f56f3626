//! Byte layouts of the files in a buffer directory (see the crate docs for the prose spec).
//!
//! Everything is little-endian. Every structure carries a CRC32C (Castagnoli) of its own bytes
//! (format 2 record bodies a CRC-32, see [`crate::body`])
//! so that a reader never trusts a length it has not checked: a record's body length is only
//! used after the record header's CRC matched.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use crate::body::{
    BodyProblem, Checked, EVENT_ENTRY_LEN, FLAG_EVENT_CRCS, FLAG_OFFSETS, Layout, check_body,
    encode_head, encode_record, offsets_of, salvage, stamp_id,
};

/// First bytes of every segment file.
pub const SEGMENT_MAGIC: [u8; 8] = *b"SLUICEBF";
/// Segment format written by this version of the crate: 2, records with per-event CRCs. A
/// segment with a valid header and a higher version is refused at open (a newer sluice wrote
/// it; skipping it would drop data); a lower one down to [`OLDEST_FORMAT_VERSION`] is read.
pub const FORMAT_VERSION: u16 = 2;
/// Oldest segment format still read: 1, one CRC per record body.
pub const OLDEST_FORMAT_VERSION: u16 = 1;
/// Bytes of the segment header; records start right after it.
pub const SEGMENT_HEADER_LEN: usize = 48;

/// First bytes of every record header (`SREC`).
pub const RECORD_MAGIC: [u8; 4] = *b"SREC";
/// Bytes of the record header that precedes each record body.
pub const RECORD_HEADER_LEN: usize = 40;
/// Largest record body accepted on write and trusted on read. A batch is at most a few MB;
/// the cap keeps a corrupt-but-CRC-colliding length from asking for gigabytes.
pub const MAX_RECORD_BODY: usize = 128 << 20;

/// First bytes of each slot of a reader position file (`SRDP`).
pub const POSITION_MAGIC: [u8; 4] = *b"SRDP";
/// Bytes of one slot; a position file holds two.
pub const POSITION_SLOT_LEN: usize = 32;
/// Bytes of a position file.
pub const POSITION_FILE_LEN: usize = 2 * POSITION_SLOT_LEN;

pub(crate) fn crc(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Microseconds since the Unix epoch, saturating; times before 1970 are negative.
pub fn to_micros(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_micros()).map_or(i64::MIN, |m| -m),
    }
}

/// Inverse of [`to_micros`].
pub fn from_micros(us: i64) -> SystemTime {
    if us >= 0 {
        UNIX_EPOCH + Duration::from_micros(us.unsigned_abs())
    } else {
        UNIX_EPOCH
            .checked_sub(Duration::from_micros(us.unsigned_abs()))
            .unwrap_or(UNIX_EPOCH)
    }
}

/// The header at offset 0 of a segment file.
///
/// ```text
///  0  magic            [u8; 8]  "SLUICEBF"
///  8  version          u16      FORMAT_VERSION (OLDEST_FORMAT_VERSION.. are read)
/// 10  flags            u16      0
/// 12  reserved         u32      0
/// 16  segment_id       u64      the number in the file name
/// 24  first_record_id  u64      id the writer gave (or would give) the first record
/// 32  created          i64      microseconds since the Unix epoch
/// 40  crc              u32      CRC32C of bytes 0..40
/// 44  reserved         u32      0
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    pub segment_id: u64,
    pub first_record_id: u64,
    pub created_micros: i64,
}

/// Why a segment header was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderProblem {
    /// Fewer than [`SEGMENT_HEADER_LEN`] bytes.
    Short,
    /// Wrong magic or CRC: damaged.
    Corrupt,
    /// Intact, but of a format this crate does not read (a newer one).
    Version(u16),
}

impl SegmentHeader {
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut b = [0u8; SEGMENT_HEADER_LEN];
        b[0..8].copy_from_slice(&SEGMENT_MAGIC);
        b[8..10].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[16..24].copy_from_slice(&self.segment_id.to_le_bytes());
        b[24..32].copy_from_slice(&self.first_record_id.to_le_bytes());
        b[32..40].copy_from_slice(&self.created_micros.to_le_bytes());
        let c = crc(&b[0..40]);
        b[40..44].copy_from_slice(&c.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Result<SegmentHeader, HeaderProblem> {
        if b.len() < SEGMENT_HEADER_LEN {
            return Err(HeaderProblem::Short);
        }
        if b[0..8] != SEGMENT_MAGIC || u32_at(b, 40) != crc(&b[0..40]) {
            return Err(HeaderProblem::Corrupt);
        }
        let version = u16_at(b, 8);
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) || u16_at(b, 10) != 0 {
            return Err(HeaderProblem::Version(version));
        }
        Ok(SegmentHeader {
            segment_id: u64_at(b, 16),
            first_record_id: u64_at(b, 24),
            created_micros: u64_at(b, 32) as i64,
        })
    }
}

/// The header in front of each record body.
///
/// ```text
///  0  magic       [u8; 4]  "SREC"
///  4  flags       u32      the body's layout: 0, 1 (format 1) or 3 (format 2), see [`Layout`]
///  8  body_len    u32      bytes after this header (table + payload)
/// 12  events      u32      events in the payload
/// 16  id          u64      record id, strictly increasing through the buffer
/// 24  timestamp   i64      caller-supplied time of the oldest event, µs since the epoch
/// 32  check       u32      checksum of the body: CRC32C (flags 0, 1), CRC-32 (flags 3)
/// 36  header_crc  u32      CRC32C of bytes 0..36
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    pub flags: u32,
    pub body_len: u32,
    pub events: u32,
    pub id: u64,
    pub timestamp_micros: i64,
    pub check: u32,
}

impl RecordHeader {
    /// Bytes of the whole record (header and body).
    pub fn record_len(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + u64::from(self.body_len)
    }

    /// The body's layout ([`RecordHeader::decode`] accepts only known flags).
    pub fn layout(&self) -> Layout {
        Layout::from_flags(self.flags).unwrap_or(Layout::Plain)
    }

    pub fn has_offsets(&self) -> bool {
        self.layout() != Layout::Plain
    }

    pub fn encode_into(&self, b: &mut [u8]) {
        b[0..4].copy_from_slice(&RECORD_MAGIC);
        b[4..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..12].copy_from_slice(&self.body_len.to_le_bytes());
        b[12..16].copy_from_slice(&self.events.to_le_bytes());
        b[16..24].copy_from_slice(&self.id.to_le_bytes());
        b[24..32].copy_from_slice(&self.timestamp_micros.to_le_bytes());
        b[32..36].copy_from_slice(&self.check.to_le_bytes());
        let c = crc(&b[0..36]);
        b[36..40].copy_from_slice(&c.to_le_bytes());
    }

    /// A header whose magic, CRC, flags and length bounds are all valid; `None` otherwise.
    pub fn decode(b: &[u8]) -> Option<RecordHeader> {
        if b.len() < RECORD_HEADER_LEN || b[0..4] != RECORD_MAGIC {
            return None;
        }
        if u32_at(b, 36) != crc(&b[0..36]) {
            return None;
        }
        let h = RecordHeader {
            flags: u32_at(b, 4),
            body_len: u32_at(b, 8),
            events: u32_at(b, 12),
            id: u64_at(b, 16),
            timestamp_micros: u64_at(b, 24) as i64,
            check: u32_at(b, 32),
        };
        let layout = Layout::from_flags(h.flags)?;
        if h.body_len as usize > MAX_RECORD_BODY
            || layout.table_len(h.events) > u64::from(h.body_len)
            // The writer gives an empty table the format 1 layout: it has no event to check.
            || layout == Layout::Events && h.events == 0
        {
            return None;
        }
        Some(h)
    }
}

/// One slot of a reader position file. The file holds two slots, written alternately in
/// place (no rename, so persisting a position needs no free disk space); a torn write can
/// only damage the slot being written, and the reader picks the valid slot with the higher
/// generation.
///
/// ```text
///  0  magic        [u8; 4]  "SRDP"
///  4  version      u16      1
///  6  reserved     u16      0
///  8  generation   u64      increases with every write
/// 16  resume_from  u64      first record id this reader has not finished
/// 24  reserved     u32      0
/// 28  crc          u32      CRC32C of bytes 0..28
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionSlot {
    pub generation: u64,
    pub resume_from: u64,
}

impl PositionSlot {
    pub fn encode(&self) -> [u8; POSITION_SLOT_LEN] {
        let mut b = [0u8; POSITION_SLOT_LEN];
        b[0..4].copy_from_slice(&POSITION_MAGIC);
        b[4..6].copy_from_slice(&1u16.to_le_bytes());
        b[8..16].copy_from_slice(&self.generation.to_le_bytes());
        b[16..24].copy_from_slice(&self.resume_from.to_le_bytes());
        let c = crc(&b[0..28]);
        b[28..32].copy_from_slice(&c.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<PositionSlot> {
        if b.len() < POSITION_SLOT_LEN || b[0..4] != POSITION_MAGIC || u16_at(b, 4) != 1 {
            return None;
        }
        if u32_at(b, 28) != crc(&b[0..28]) {
            return None;
        }
        Some(PositionSlot {
            generation: u64_at(b, 8),
            resume_from: u64_at(b, 16),
        })
    }

    /// The newest valid slot of a position file's bytes.
    pub fn newest(file: &[u8]) -> Option<PositionSlot> {
        let a = file.get(..POSITION_SLOT_LEN).and_then(PositionSlot::decode);
        let b = file
            .get(POSITION_SLOT_LEN..POSITION_FILE_LEN)
            .and_then(PositionSlot::decode);
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.generation > a.generation { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Byte offset of the slot a given generation is written to.
    pub fn offset_for(generation: u64) -> u64 {
        (generation % 2) * POSITION_SLOT_LEN as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_header_round_trip_and_damage() {
        let h = SegmentHeader {
            segment_id: 7,
            first_record_id: 1234,
            created_micros: -5,
        };
        let b = h.encode();
        assert_eq!(SegmentHeader::decode(&b), Ok(h));
        for i in 0..44 {
            let mut d = b;
            d[i] ^= 0x10;
            assert!(SegmentHeader::decode(&d).is_err(), "flip at {i} accepted");
        }
        assert_eq!(SegmentHeader::decode(&b[..47]), Err(HeaderProblem::Short));
        let with_version = |v: u16| {
            let mut d = b;
            d[8..10].copy_from_slice(&v.to_le_bytes());
            let c = crc(&d[0..40]);
            d[40..44].copy_from_slice(&c.to_le_bytes());
            SegmentHeader::decode(&d)
        };
        assert_eq!(with_version(OLDEST_FORMAT_VERSION), Ok(h));
        assert_eq!(
            with_version(FORMAT_VERSION + 1),
            Err(HeaderProblem::Version(FORMAT_VERSION + 1))
        );
        assert_eq!(with_version(0), Err(HeaderProblem::Version(0)));
    }

    #[test]
    fn position_slots_pick_newest_valid() {
        let a = PositionSlot {
            generation: 4,
            resume_from: 10,
        };
        let b = PositionSlot {
            generation: 5,
            resume_from: 20,
        };
        let mut file = [0u8; POSITION_FILE_LEN];
        file[..32].copy_from_slice(&a.encode());
        file[32..].copy_from_slice(&b.encode());
        assert_eq!(PositionSlot::newest(&file), Some(b));
        file[40] ^= 1;
        assert_eq!(PositionSlot::newest(&file), Some(a));
        file[3] ^= 1;
        assert_eq!(PositionSlot::newest(&file), None);
    }

    #[test]
    fn micros_round_trip() {
        for us in [0i64, 1, -1, 1_700_000_000_000_000, -86_400_000_000] {
            assert_eq!(to_micros(from_micros(us)), us);
        }
    }
}
