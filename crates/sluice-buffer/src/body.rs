//! Record bodies: the three layouts a record header's flags select, how each is checked, and
//! how the intact events of a damaged one are recovered (see the crate docs for the spec).
//!
//! Every layout has one checksum over the whole body in the record header, as format 1 had:
//! an intact record is checked with one pass. Format 2 writes a record with events as an
//! *event table* — one `(start, crc)` entry per event — written twice, then the payload. Event
//! `i` is the bytes from its start to the next event's start (the last one to the end of the
//! payload); its CRC covers exactly those bytes. The entries are read only when the body
//! checksum fails: then each event can still be proven intact on its own, by its bytes
//! matching its CRC, which also proves the starts that bound it (a damaged start moves the
//! range, and the CRC of the moved range does not match). Each entry is taken from either
//! copy of the table, so damage in one copy costs nothing (a 64-byte run of damage in a
//! single table would cost the 8 to 9 events whose entries it covers); damage in the payload
//! costs the events it touches and no others.
//!
//! Format 1 (still read, never written) has no per-event CRCs: a damaged body loses all of
//! its record.

use crate::format::{RecordHeader, crc};

/// Record flag: the body starts with a table of event start offsets.
pub const FLAG_OFFSETS: u32 = 1;
/// Record flag (with [`FLAG_OFFSETS`]): each table entry also holds its event's CRC-32.
pub const FLAG_EVENT_CRCS: u32 = 2;
/// Bytes of one entry of a format 2 event table: start offset, CRC-32.
pub const EVENT_ENTRY_LEN: usize = 8;
/// Copies of the event table in a format 2 body.
pub const EVENT_TABLE_COPIES: usize = 2;

/// How a record's body is laid out. In each, the header's check field is the checksum of the
/// whole body: CRC32C for flags 0 and 1, CRC-32 for flags 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Flags 0: the payload alone.
    Plain,
    /// Flags 1: `events` × u32 start offsets, then the payload. Written by format 1, and by
    /// format 2 for a record whose offsets table is empty (it has no event to give a CRC).
    Offsets,
    /// Flags 3 (format 2): the event table (`events` × (start u32, crc u32)) twice, then the
    /// payload; each entry's crc is the CRC-32 of its event's bytes (from
    /// [`EVENT_CRC_SEED`]), and the body's is the CRC-32 of the body.
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
            Layout::Events => u64::from(events) * (EVENT_ENTRY_LEN * EVENT_TABLE_COPIES) as u64,
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
    /// The body CRC does not match (and the layout has no per-event CRCs to fall back on).
    Crc,
    Length,
    /// An intact body (its CRC matches) whose offsets do not describe its payload: no record
    /// this crate wrote.
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
    /// When events were lost: the byte range in the payload of each event proven intact, in
    /// order (what [`salvage`] keeps).
    pub kept: Vec<(usize, usize)>,
}

impl Checked {
    /// The body passed its checksum: the payload and offsets are used as they are. Otherwise
    /// [`salvage`] rebuilds them from the events proven intact (all of them, when the damage
    /// was only in one copy of the event table).
    pub fn is_intact(&self) -> bool {
        self.kept.is_empty()
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
    let mut r = encode_head(payload, events, offsets, timestamp_micros, payload.len());
    r.extend_from_slice(payload);
    r
}

/// [`encode_record`] without the payload: the header and the table, whose checksums cover
/// `payload`, in a vector with room for `spare` more bytes. The payload is written right
/// after them (a writer that shares the caller's buffer does not copy it).
pub fn encode_head(
    payload: &[u8],
    events: u32,
    offsets: Option<&[u32]>,
    timestamp_micros: i64,
    spare: usize,
) -> Vec<u8> {
    let layout = Layout::for_offsets(offsets);
    let events = match offsets {
        Some(o) => u32::try_from(o.len()).unwrap_or(u32::MAX),
        None => events,
    };
    let table = layout.table_len(events) as usize;
    let head = crate::format::RECORD_HEADER_LEN;
    let mut buf = Vec::with_capacity(head + table + spare);
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
                buf.extend_from_slice(&event_crc(&payload[from..to]).to_le_bytes());
            }
            buf.extend_from_within(head..);
        }
    }
    let check = body_crc(layout, &buf[head..], payload);
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

/// Where a format 2 event's CRC starts from, instead of CRC-32's usual 0: the CRC of an
/// empty event is then this, not 0, so zeroed bytes (what a torn write leaves) can never
/// prove an empty range as an event.
pub const EVENT_CRC_SEED: u32 = 0x5345_5645; // "EVES"

/// The checksum of one event of a format 2 body: CRC-32 (ISO-HDLC, zlib's and gzip's)
/// continued from [`EVENT_CRC_SEED`]. crc32fast computes it by carry-less multiplication
/// (PCLMULQDQ), about twice as fast as CRC32C on these sizes on x86-64, which is what keeps
/// checksumming every event affordable.
fn event_crc(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(EVENT_CRC_SEED);
    h.update(bytes);
    h.finalize()
}

/// The body checksum of `table` followed by `payload`: CRC-32 for the format 2 layout (as its
/// events), CRC32C for the others (as format 1 wrote them).
fn body_crc(layout: Layout, table: &[u8], payload: &[u8]) -> u32 {
    match layout {
        Layout::Events => {
            let mut h = crc32fast::Hasher::new();
            h.update(table);
            h.update(payload);
            h.finalize()
        }
        Layout::Plain | Layout::Offsets => crc32c::crc32c_append(crc(table), payload),
    }
}

/// Writes `id` into a record (or head) built by [`encode_record`] ([`encode_head`]) and
/// re-seals its header CRC.
pub fn stamp_id(record: &mut [u8], id: u64) {
    record[16..24].copy_from_slice(&id.to_le_bytes());
    let c = crc(&record[0..36]);
    record[36..40].copy_from_slice(&c.to_le_bytes());
}

/// The entries of one copy of a format 2 event table: (start, crc) each.
fn entries(table: &[u8]) -> impl ExactSizeIterator<Item = (u32, u32)> + Clone + '_ {
    let (entries, _) = table.as_chunks::<EVENT_ENTRY_LEN>();
    entries.iter().map(|e| {
        let [a, b, c, d, w, x, y, z] = *e;
        (
            u32::from_le_bytes([a, b, c, d]),
            u32::from_le_bytes([w, x, y, z]),
        )
    })
}

/// Both copies of a format 2 event table.
fn table_copies(table: &[u8]) -> (&[u8], &[u8]) {
    table.split_at(table.len() / EVENT_TABLE_COPIES)
}

/// Whether `start..end` can be an event's range: within the payload, and the first event
/// starting it (a table cannot leave bytes unchecked before the first event).
fn plausible(i: usize, start: u32, end: u32, payload_len: usize) -> bool {
    start <= end && end as usize <= payload_len && (i > 0 || start == 0)
}

/// Event `i`'s byte range, proven by its CRC, with its entries taken from either copy of the
/// table: `None` when no combination of the copies' starts and CRCs matches its bytes.
fn prove_event(
    i: usize,
    copies: [&[(u32, u32)]; EVENT_TABLE_COPIES],
    payload: &[u8],
) -> Option<(usize, usize)> {
    let end_of = |c: &[(u32, u32)]| c.get(i + 1).map_or(payload.len() as u32, |e| e.0);
    let mut tried: [(u32, u32); 4] = [(u32::MAX, 0); 4];
    let mut k = 0;
    for a in copies {
        for b in copies {
            let (start, end) = (a[i].0, end_of(b));
            if tried[..k].contains(&(start, end)) || !plausible(i, start, end, payload.len()) {
                continue;
            }
            tried[k] = (start, end);
            k += 1;
            let crc = event_crc(&payload[start as usize..end as usize]);
            if copies.iter().any(|c| c[i].1 == crc) {
                return Some((start as usize, end as usize));
            }
        }
    }
    None
}

/// Checks a body against its header. An intact body passes with one checksum pass. A damaged
/// one fails whole, unless it has per-event CRCs (format 2): then it passes with the list of
/// the events that failed theirs (and the ranges of those that did not), and fails only when
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
    let intact = |lost| Checked {
        payload_start: table.len(),
        lost,
        kept: Vec::new(),
    };
    if body_crc(layout, table, payload) == h.check {
        let well_formed = match layout {
            Layout::Plain => true,
            Layout::Offsets => {
                let (starts, _) = table.as_chunks::<4>();
                starts
                    .iter()
                    .map(|s| u32::from_le_bytes(*s) as usize)
                    .try_fold(0, |prev, s| (prev <= s && s <= payload.len()).then_some(s))
                    .is_some()
            }
            Layout::Events => {
                let (a, b) = table_copies(table);
                let ends = entries(a).skip(1).map(|e| e.0);
                a == b
                    && entries(a)
                        .zip(ends.chain(std::iter::once(payload.len() as u32)))
                        .enumerate()
                        .all(|(i, ((start, _), end))| plausible(i, start, end, payload.len()))
            }
        };
        return if well_formed {
            Ok(intact(Vec::new()))
        } else {
            Err(BodyProblem::Offsets)
        };
    }
    if layout != Layout::Events {
        return Err(BodyProblem::Crc);
    }
    let (a, b) = table_copies(table);
    let a: Vec<(u32, u32)> = entries(a).collect();
    let b: Vec<(u32, u32)> = entries(b).collect();
    let mut lost = Vec::new();
    let mut kept = Vec::new();
    for i in 0..a.len() {
        match prove_event(i, [&a, &b], payload) {
            Some(r) => kept.push(r),
            None => lost.push(i as u32),
        }
    }
    if kept.is_empty() {
        return Err(BodyProblem::NoIntactEvent);
    }
    // `lost` can only be empty if a damaged event still matched its CRC (odds 2^-32) or the
    // damage was all in one copy of the table: every event is proven, all are delivered.
    Ok(Checked {
        payload_start: table.len(),
        lost,
        kept,
    })
}

/// Decodes the start offsets of a body [`check_body`] found intact.
pub fn offsets_of(h: &RecordHeader, body: &[u8]) -> Option<Vec<u32>> {
    let table = body.get(..h.layout().table_len(h.events) as usize)?;
    match h.layout() {
        Layout::Plain => None,
        Layout::Offsets => Some(
            table
                .as_chunks::<4>()
                .0
                .iter()
                .map(|s| u32::from_le_bytes(*s))
                .collect(),
        ),
        Layout::Events => Some(
            entries(table_copies(table).0)
                .map(|(start, _)| start)
                .collect(),
        ),
    }
}

/// The intact events of a format 2 body that [`check_body`] passed with losses: their bytes
/// back to back as a new payload, and where each starts in it. Each event's bytes are kept
/// exactly as written (a separator that ended an event stays with it).
pub fn salvage(body: &[u8], checked: &Checked) -> (Vec<u8>, Vec<u32>) {
    let payload = body.get(checked.payload_start..).unwrap_or_default();
    let mut out = Vec::with_capacity(payload.len());
    let mut starts = Vec::with_capacity(checked.kept.len());
    for &(a, b) in &checked.kept {
        if let Some(bytes) = payload.get(a..b) {
            starts.push(out.len() as u32);
            out.extend_from_slice(bytes);
        }
    }
    (out, starts)
}

#[cfg(test)]
mod tests;
