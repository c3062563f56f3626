//! Record bodies: the three layouts a record header's flags select, how each is checked, and
//! how the intact events of a damaged one are recovered (see the crate docs for the spec).
//!
//! Format 2 writes a record with events as an *event table* — one `(start, crc)` pair per
//! event — then the payload. Event `i` is the bytes from its start to the next event's start
//! (the last one to the end of the payload); its CRC32C covers exactly those bytes, and the
//! record header's check field covers the table. So when damage hits a record, each event
//! can still be proven intact on its own: by its bytes matching its CRC, which also proves
//! the two table entries that bound it (a damaged start moves the range, and the CRC of the
//! moved range does not match). Damage costs the events it touches and no others.
//!
//! Format 1 (still read, never written) covers a whole body with one CRC: a damaged body
//! loses all of its record.

use crate::format::{RecordHeader, crc, u32_at};

/// Record flag: the body starts with a table of event start offsets.
pub const FLAG_OFFSETS: u32 = 1;
/// Record flag (with [`FLAG_OFFSETS`]): each table entry also holds its event's CRC32C.
pub const FLAG_EVENT_CRCS: u32 = 2;
/// Bytes of one entry of a format 2 event table: start offset, CRC32C.
pub const EVENT_ENTRY_LEN: usize = 8;

/// How a record's body is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Flags 0: the payload alone; the check field is the CRC32C of the body.
    Plain,
    /// Flags 1: `events` × u32 start offsets, then the payload; the check field is the
    /// CRC32C of the whole body. Written by format 1, and by format 2 for a record whose
    /// offsets table is empty (it has no event to give a CRC).
    Offsets,
    /// Flags 3 (format 2): `events` × (start u32, crc u32), then the payload; the check field
    /// is the CRC32C of the table, each entry's crc that of its event's bytes.
    Events,
}

impl Layout {
    pub fn from_flags(flags: u32) -> Option<Layout> {
        match flags {
            0 => Some(Layout::Plain),
            FLAG_OFFSETS => Some(Layout::Offsets),
            f if f == FLAG_OFFSETS | FLAG_EVENT_CRCS => Some(Layout::Events),
            _ => None,
        }
    }

    pub fn flags(self) -> u32 {
        match self {
            Layout::Plain => 0,
            Layout::Offsets => FLAG_OFFSETS,
            Layout::Events => FLAG_OFFSETS | FLAG_EVENT_CRCS,
        }
    }

    /// Bytes of the table in front of the payload of a record of `events` events.
    pub fn table_len(self, events: u32) -> u64 {
        match self {
            Layout::Plain => 0,
            Layout::Offsets => u64::from(events) * 4,
            Layout::Events => u64::from(events) * EVENT_ENTRY_LEN as u64,
        }
    }

    /// The layout the writer uses for a record with (or without) an offsets table.
    pub fn for_offsets(offsets: Option<&[u32]>) -> Layout {
        match offsets {
            None => Layout::Plain,
            Some([]) => Layout::Offsets,
            Some(_) => Layout::Events,
        }
    }
}

/// Why a record body was rejected whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyProblem {
    /// Format 1 layouts: the body CRC does not match.
    Crc,
    Length,
    /// An intact table (its CRC matches) whose offsets do not describe the payload: no
    /// record this crate wrote.
    Offsets,
    /// Format 2: not one event passes its checksum.
    NoIntactEvent,
}

impl BodyProblem {
    pub fn as_str(self) -> &'static str {
        match self {
            BodyProblem::Crc => "body CRC mismatch",
            BodyProblem::Length => "body length differs from header",
            BodyProblem::Offsets => "event offsets out of order or beyond the payload",
            BodyProblem::NoIntactEvent => "no event passes its checksum",
        }
    }
}

/// A body that passed [`check_body`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// Where the payload starts in the body.
    pub payload_start: usize,
    /// Format 2: the events (indexes, ascending) that failed their checksum; empty when the
    /// whole body is intact. Never every event ([`BodyProblem::NoIntactEvent`]).
    pub lost: Vec<u32>,
}

impl Checked {
    pub fn is_intact(&self) -> bool {
        self.lost.is_empty()
    }
}

/// Builds a complete record (header with a placeholder id, then body) in one allocation, in
/// the layout [`Layout::for_offsets`] picks. [`stamp_id`] fills in the id once the writer has
/// assigned one; the checksums do not cover the id, so they are computed here, outside the
/// writer's lock.
///
/// `offsets` are event starts as [`Writer::append`](crate::Writer::append) validates them
/// (the first 0, none decreasing, none beyond the payload); out-of-range ones are clamped so
/// that a bad table can never make this panic (such a record then fails its checks when read).
pub fn encode_record(
    payload: &[u8],
    events: u32,
    offsets: Option<&[u32]>,
    timestamp_micros: i64,
) -> Vec<u8> {
    let layout = Layout::for_offsets(offsets);
    let events = match offsets {
        Some(o) => u32::try_from(o.len()).unwrap_or(u32::MAX),
        None => events,
    };
    let table = layout.table_len(events) as usize;
    let head = crate::format::RECORD_HEADER_LEN;
    let mut buf = Vec::with_capacity(head + table + payload.len());
    buf.resize(head, 0);
    let offsets = offsets.unwrap_or(&[]);
    match layout {
        Layout::Plain => {}
        Layout::Offsets => {
            for v in offsets {
                buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        Layout::Events => {
            let len = payload.len();
            for (i, &start) in offsets.iter().enumerate() {
                let from = (start as usize).min(len);
                let to = offsets
                    .get(i + 1)
                    .map_or(len, |&n| (n as usize).clamp(from, len));
                buf.extend_from_slice(&start.to_le_bytes());
                buf.extend_from_slice(&crc(&payload[from..to]).to_le_bytes());
            }
        }
    }
    let check = match layout {
        Layout::Events => crc(&buf[head..]),
        Layout::Plain | Layout::Offsets => crc32c::crc32c_append(crc(&buf[head..]), payload),
    };
    buf.extend_from_slice(payload);
    let header = RecordHeader {
        flags: layout.flags(),
        body_len: (table + payload.len()) as u32,
        events,
        id: 0,
        timestamp_micros,
        check,
    };
    header.encode_into(&mut buf[..head]);
    buf
}

/// Writes `id` into a record built by [`encode_record`] and re-seals its header CRC.
pub fn stamp_id(record: &mut [u8], id: u64) {
    record[16..24].copy_from_slice(&id.to_le_bytes());
    let c = crc(&record[0..36]);
    record[36..40].copy_from_slice(&c.to_le_bytes());
}

/// Event `i`'s table entry in a format 2 body: (start, crc).
fn entry(table: &[u8], i: usize) -> (u32, u32) {
    let at = i * EVENT_ENTRY_LEN;
    (u32_at(table, at), u32_at(table, at + 4))
}

/// The byte range of event `i` of `n` as the table says, if it lies within the payload.
fn event_range(table: &[u8], n: usize, i: usize, payload_len: usize) -> Option<(usize, usize)> {
    let (start, _) = entry(table, i);
    let end = if i + 1 < n {
        entry(table, i + 1).0 as usize
    } else {
        payload_len
    };
    let start = start as usize;
    // The first event starts the payload: a table cannot leave bytes unchecked before it.
    (start <= end && end <= payload_len && (i > 0 || start == 0)).then_some((start, end))
}

/// Checks a body against its header. Format 1 layouts pass or fail whole; a format 2 body
/// passes with the list of the events that failed their own checksum, and fails only when
/// none passes.
pub fn check_body(h: &RecordHeader, body: &[u8]) -> Result<Checked, BodyProblem> {
    if body.len() != h.body_len as usize {
        return Err(BodyProblem::Length);
    }
    let layout = h.layout();
    let table = layout.table_len(h.events) as usize;
    if table > body.len() {
        return Err(BodyProblem::Length);
    }
    let (table, payload) = body.split_at(table);
    match layout {
        Layout::Plain | Layout::Offsets => {
            if crc(body) != h.check {
                return Err(BodyProblem::Crc);
            }
            let mut prev = 0u32;
            for chunk in table.chunks_exact(4) {
                let v = u32_at(chunk, 0);
                if v < prev || v as usize > payload.len() {
                    return Err(BodyProblem::Offsets);
                }
                prev = v;
            }
        }
        Layout::Events => {
            let n = h.events as usize;
            let table_ok = crc(table) == h.check;
            let mut lost = Vec::new();
            for i in 0..n {
                let intact = event_range(table, n, i, payload.len())
                    .is_some_and(|(a, b)| crc(&payload[a..b]) == entry(table, i).1);
                if !intact {
                    if table_ok && event_range(table, n, i, payload.len()).is_none() {
                        return Err(BodyProblem::Offsets);
                    }
                    lost.push(i as u32);
                }
            }
            if lost.len() == n {
                return Err(BodyProblem::NoIntactEvent);
            }
            return Ok(Checked {
                payload_start: table.len(),
                lost,
            });
        }
    }
    Ok(Checked {
        payload_start: table.len(),
        lost: Vec::new(),
    })
}

/// Decodes the start offsets of a body [`check_body`] found intact.
pub fn offsets_of(h: &RecordHeader, body: &[u8]) -> Option<Vec<u32>> {
    let n = h.events as usize;
    match h.layout() {
        Layout::Plain => None,
        Layout::Offsets => body
            .get(..n * 4)
            .map(|t| t.chunks_exact(4).map(|c| u32_at(c, 0)).collect()),
        Layout::Events => body
            .get(..n * EVENT_ENTRY_LEN)
            .map(|t| (0..n).map(|i| entry(t, i).0).collect()),
    }
}

/// The intact events of a format 2 body that [`check_body`] passed with losses: their bytes
/// back to back as a new payload, and where each starts in it. Each event's bytes are kept
/// exactly as written (a separator that ended an event stays with it).
pub fn salvage(h: &RecordHeader, body: &[u8], checked: &Checked) -> (Vec<u8>, Vec<u32>) {
    let n = h.events as usize;
    let Some((table, payload)) = body.split_at_checked(checked.payload_start) else {
        return (Vec::new(), Vec::new());
    };
    let mut out = Vec::with_capacity(payload.len());
    let mut starts = Vec::with_capacity(n - checked.lost.len().min(n));
    let mut lost = checked.lost.iter().copied().peekable();
    for i in 0..n {
        if lost.next_if_eq(&(i as u32)).is_some() {
            continue;
        }
        if let Some((a, b)) = event_range(table, n, i, payload.len()) {
            starts.push(out.len() as u32);
            out.extend_from_slice(&payload[a..b]);
        }
    }
    (out, starts)
}

#[cfg(test)]
mod tests;
