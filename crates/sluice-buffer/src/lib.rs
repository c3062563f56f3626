//! A crash-safe disk buffer: an append-only log of records in segment files, read back in
//! order by one or more named readers, each with its own persisted position.
//!
//! This module documentation is the specification of the on-disk format and of the
//! guarantees. Code and tests follow it; change it first.
//!
//! # Model
//!
//! A *record* is an opaque payload (for sluice: one encoded HEC batch) plus an event count,
//! optional event start offsets (one `u32` per event, the first 0, returned verbatim) and a
//! caller-supplied timestamp. [`Writer::append`] gives each record the next *record id* (a `u64`, strictly
//! increasing through the life of the directory). Every [`Reader`] sees every record, in id
//! order, starting at its first unfinished record. A reader *finishes* a record by
//! acknowledging it ([`Reader::ack`], [`Acker::ack`]; in any order). A record is *finished*
//! when every reader has finished it; disk space is reclaimed a whole segment at a time, once
//! every record in the segment is finished.
//!
//! # Directory layout
//!
//! ```text
//! <dir>/lock                          flock(LOCK_EX) held while open; holds the owner's pid
//! <dir>/seg-<20-digit id>.dat         segment files, ids increasing in write order
//! <dir>/reader-<name>.pos             one position file per reader
//! ```
//!
//! Other files are ignored. Segment ids and record ids are independent counters.
//!
//! ## Segment file
//!
//! A 48-byte header, then records back to back, nothing between them:
//!
//! ```text
//!  0  magic            "SLUICEBF"
//!  8  version          u16 = 2 (format 1 segments, from earlier releases, are still read)
//! 10  flags            u16 = 0
//! 12  reserved         u32 = 0
//! 16  segment_id       u64   = the id in the file name
//! 24  first_record_id  u64   = the id of the first record written to this segment
//! 32  created          i64   µs since the Unix epoch
//! 40  crc              u32   CRC32C of bytes 0..40
//! 44  reserved         u32 = 0
//! ```
//!
//! ## Record
//!
//! A 40-byte header and a body of `body_len` bytes:
//!
//! ```text
//!  0  magic       "SREC"
//!  4  flags       u32   the body's layout: 0, 1 or 3 (below)
//!  8  body_len    u32   ≤ 128 MiB
//! 12  events      u32
//! 16  id          u64
//! 24  timestamp   i64   µs since the Unix epoch (the caller's "oldest event" time)
//! 32  check       u32   checksum of the body: CRC32C (flags 0 and 1), CRC-32 (flags 3)
//! 36  header_crc  u32   CRC32C of bytes 0..36
//! ```
//!
//! Bodies ([`body`]):
//!
//! ```text
//! flags 0  [payload]                                        a record without offsets
//! flags 1  [events × start u32] [payload]                   format 1; format 2 when events = 0
//! flags 3  [table] [table] [payload]                        format 2, events ≥ 1
//!          table = events × (start u32, crc u32)            written twice, identical
//! ```
//!
//! Event `i` is the payload bytes from its start to the next event's start (the last one to
//! the end of the payload; the first starts at 0). An intact body is checked with its body
//! checksum alone. When that fails, flags 3 still proves every event on its own: each
//! entry's `crc` is the CRC-32 of its event's bytes (continued from a fixed seed, so that
//! zeroed bytes cannot prove an empty range), and each of the event's start, end and
//! crc may come from either copy of the table. So damaged payload bytes cost the events that
//! hold them, damage in one copy of the table costs nothing, damage to the same entry in both
//! copies costs its event (and, through its start, the one before); nothing else is lost.
//! Flags 0 and 1 have no per-event CRCs: damage costs the record.
//!
//! All integers are little-endian; CRC32C is the Castagnoli polynomial (iSCSI), CRC-32 the
//! ISO-HDLC one (zlib's, gzip's): format 2 checksums bodies and events with it because
//! carry-less multiplication computes it about twice as fast as CRC32C on x86-64. The header
//! has its own CRC so that a damaged length is never followed: a reader that finds an
//! invalid header resynchronises on the next offset holding a valid header (magic, header
//! CRC, length within the file, id above the previous one).
//!
//! ## Reader position file
//!
//! 64 bytes: two 32-byte slots, written alternately in place (the file is created full size,
//! so persisting a position needs no free space even when the disk is full):
//!
//! ```text
//!  0  magic        "SRDP"
//!  4  version      u16 = 1
//!  6  reserved     u16 = 0
//!  8  generation   u64   slot = generation % 2
//! 16  resume_from  u64   every record id below it is finished for this reader
//! 24  reserved     u32 = 0
//! 28  crc          u32   CRC32C of bytes 0..28
//! ```
//!
//! The valid slot with the higher generation wins; a torn write damages only the slot being
//! written. If both slots are damaged the reader restarts at the oldest unfinished record.
//!
//! # Durability modes
//!
//! Appends never do IO. They copy the record into a queue; one writer thread writes the
//! queue to the segment files with vectored writes and then `fdatasync`s every file it
//! touched (and the directory when it created a segment).
//!
//! * [`DurabilityMode::Normal`]: the queue is written and synced when it holds
//!   `flush_bytes`, or `flush_interval` after its oldest record was appended. A process
//!   crash (kill -9, OOM kill, panic) loses the records not yet handed to the kernel: those
//!   appended during the last `flush_interval`, plus any appended while the writer thread
//!   was still waiting on the previous fsync (the crash tests measure 66-88 ms with a
//!   100 ms interval on a loaded 2-core box). A machine crash or power loss can also lose
//!   the write in flight, whose fsync had not completed: one interval plus one flush.
//! * [`DurabilityMode::Reliable`]: group commit. The queue is written and synced
//!   `group_commit_window` after its oldest record was appended (or when it reaches
//!   `flush_bytes`); every record appended meanwhile shares that one fsync.
//!   [`Appended::durable`] resolves only after the fsync. A record whose `durable()`
//!   resolved survives any crash, including power loss.
//!
//! Readers only see records that are written and synced, so a reader never delivers a
//! record that a crash could take back.
//!
//! # Read positions and acknowledgement
//!
//! Each reader's *frontier* is its smallest unacknowledged id (or, if it has none in
//! flight, its next id). The writer thread persists frontiers every `flush_interval`, on
//! [`Buffer::checkpoint`] and on close. After a restart a reader resumes at its persisted
//! frontier: records it had read but not acknowledged, or acknowledged less than one
//! interval before the crash, are delivered again (at-least-once; duplicates are bounded by
//! what was in flight plus one interval of acknowledgements). Nothing unacknowledged is
//! skipped.
//!
//! A segment file is deleted only when it is not the one being written and every record in
//! it is below every reader's *persisted* frontier. Positions are synced before the
//! deletion, so no crash can leave a position that needs a deleted record.
//!
//! Readers are named at [`Buffer::open`]. A new name starts at the oldest record not
//! finished by the others. A position file whose name is no longer passed is removed (with
//! a warning that counts the records it had not finished).
//!
//! # Recovery at open
//!
//! Open takes the lock (a second process gets [`OpenError::Locked`] naming the holder's
//! pid), then scans every segment in id order: record headers of sealed segments (bodies
//! are checked when read), headers and bodies of the newest segment. It rebuilds the index
//! (id, offset, length, events, timestamp per record) and replays from each reader's
//! position. New records always go to a new segment.
//!
//! # Damage
//!
//! Damage never stops the buffer and never panics it. Every event that can be proven intact
//! is delivered. Every loss is logged with the file and byte offset and reported to the
//! observer as [`BufferEvent::Corrupt`], by records and events:
//!
//! * damaged bytes in a record body (format 2): found when the record is read; the events
//!   that cannot be proven intact are left out, counted and logged (with their indexes in
//!   the record), the others delivered — the record comes back with
//!   [`Record::lost_events`] set. Damage confined to one copy of the event table costs
//!   nothing (logged). A record with no intact event is skipped and counted whole;
//! * damaged bytes in a format 1 record body: the body CRC fails, the record is skipped and
//!   counted with its events;
//! * torn tail (the newest segment ends inside a record: a write cut short): cut off at
//!   open, 1 record counted;
//! * a flipped bit in a record header, a truncated segment, a missing segment: the scan
//!   resynchronises on the next valid record header; the ids it skipped are counted as
//!   records (record ids are consecutive, so the gap is the exact number lost; their event
//!   counts went with their headers);
//! * a damaged segment header: logged; the segment's records are still read, each checked
//!   by its own CRCs;
//! * a segment header with an intact CRC but a newer version: open refuses with
//!   [`OpenError::UnsupportedVersion`] rather than skipping data.
//!
//! A record read again (a reader taken again, a restart) is counted once per open.
//!
//! # Limits and backpressure
//!
//! `max_bytes` bounds the segment files plus the queue. An append that would pass it, any
//! append while more than `2 × flush_bytes` wait for the writer thread (the disk is not
//! keeping up), and any append while the filesystem is full (ENOSPC) or failing, returns
//! [`AppendError::Full`] without taking the record: the caller keeps it and applies
//! backpressure ([`Writer::wait_for_space`] resolves when it may retry). A write that fails
//! part-way commits the records that were written whole, cuts the partial one off and
//! retries the rest with backoff; the buffer recovers by itself when readers finish
//! segments or the filesystem frees space. Nothing accepted is dropped: records still
//! queued at [`Buffer::close`] because the disk stayed full are reported in
//! [`CloseError::Unwritten`].
//!
//! # Turning records into batches
//!
//! The daemon appends one encoded batch per record:
//! `RecordRef::new(&batch.body, batch.events, oldest).with_offsets(&batch.starts)`; a
//! replayed [`Record`] gives back `into_parts() -> (body, events, offsets)`, from which the
//! batch is rebuilt without copying the body. A record that lost events to damage gives back
//! the intact events only, each with its bytes as appended (its separator included).

#![forbid(unsafe_code)]

pub mod body;
mod buffer;
mod config;
mod dir;
mod error;
mod flusher;
pub mod format;
pub mod observe;
mod reader;
mod recover;
pub mod scan;
mod state;
mod stats;
mod writer;

#[cfg(test)]
mod tests;

pub use buffer::{Buffer, CloseReport};
pub use config::{BufferConfig, DEFAULT_DIR, DurabilityMode, MIN_SEGMENT_BYTES, parse_bytes};
pub use error::{AppendError, CloseError, ConfigError, FullReason, NotPersisted, OpenError};
pub use observe::{BufferEvent, BufferObserver, NoObserver, Tally};
pub use reader::{Acker, Reader, Record};
pub use recover::{Recovery, RetiredReader};
pub use stats::{BufferStats, LATENCY_BUCKETS_US, ReaderStats};
pub use writer::{Appended, RecordId, RecordRef, Writer};
