//! Fuzzes the segment reader (`sluice_buffer::scan`) and the record decoder the buffer's
//! readers use, on arbitrary bytes taken as a segment file.
//!
//! Checked for both verification levels: no panic; accepted records and skipped ranges tile
//! the file exactly from the end of the header, in order, with record ids strictly
//! increasing; nothing is reported beyond the input; the scan is deterministic; in full
//! mode every accepted record decodes and passes its body check (header CRC, body CRC or, in
//! format 2, at least one event's CRC, event offsets within the payload), what it salvages of
//! a partly damaged record is events the table bounds, and a torn tail is exactly the bytes
//! after the last valid record. Also decodes the input as a reader position file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_buffer::format::{
    PositionSlot, RECORD_HEADER_LEN, RecordHeader, check_body, offsets_of, salvage,
};
use sluice_buffer::scan::{SegmentScan, Verify, scan_segment};

fn check(data: &[u8], verify: Verify) -> SegmentScan {
    let scan = scan_segment(data, verify).expect("slices do not fail");
    assert_eq!(scan.len, data.len() as u64);
    let mut parts: Vec<(u64, u64)> = scan.records.iter().map(|r| (r.offset, r.len)).collect();
    parts.extend(scan.damage.iter().map(|d| (d.offset, d.len)));
    parts.sort_unstable();
    let mut at = scan.records_start;
    for (offset, len) in parts {
        assert_eq!(offset, at, "gap or overlap at {at}");
        assert!(len > 0, "empty part at {offset}");
        at += len;
    }
    assert_eq!(at, data.len() as u64, "parts do not reach the end");
    assert!(scan.records.windows(2).all(|w| w[0].id < w[1].id), "ids not increasing");
    assert!(scan.valid_end <= scan.len);
    if let Some(last) = scan.records.last() {
        assert_eq!(scan.valid_end, last.offset + last.len);
    }
    for r in &scan.records {
        let bytes = &data[r.offset as usize..(r.offset + r.len) as usize];
        let h = RecordHeader::decode(bytes).expect("accepted header decodes");
        assert_eq!((h.id, h.events, h.record_len()), (r.id, r.events, r.len));
        if verify == Verify::Full {
            let body = &bytes[RECORD_HEADER_LEN..];
            let checked = check_body(&h, body).expect("accepted body checks");
            let start = checked.payload_start;
            assert!(start <= body.len());
            assert!(checked.lost.len() < h.events.max(1) as usize);
            assert!(checked.lost.windows(2).all(|w| w[0] < w[1]));
            if checked.is_intact() {
                if let Some(offsets) = offsets_of(&h, body) {
                    let payload = body.len() - start;
                    assert!(offsets.len() == h.events as usize);
                    assert!(offsets.iter().all(|&o| o as usize <= payload));
                }
            } else {
                let (kept, starts) = salvage(body, &checked);
                assert_eq!(starts.len() + checked.lost.len(), h.events as usize);
                assert!(kept.len() <= body.len() - start);
                assert!(starts.windows(2).all(|w| w[0] <= w[1]));
                assert!(starts.iter().all(|&s| s as usize <= kept.len()));
                assert_eq!(starts.first(), Some(&0));
            }
        }
    }
    if let Some(t) = scan.tail_damage() {
        assert_eq!(t.offset + t.len, scan.len);
        assert!(t.offset >= scan.valid_end);
    }
    scan
}

fuzz_target!(|data: &[u8]| {
    let headers = check(data, Verify::Headers);
    let full = check(data, Verify::Full);
    assert_eq!(scan_segment(data, Verify::Full).unwrap(), full, "not deterministic");
    assert_eq!(headers.header, full.header);
    // Both modes finding nothing wrong must mean they read the same records.
    if headers.damage.is_empty() && full.damage.is_empty() {
        assert_eq!(headers.records, full.records);
    }
    let _ = PositionSlot::newest(data);
});
