//! Fuzz target `structured`: the vendor payload tokenizers on arbitrary bytes — key=value
//! pairs with every separator vendors use (sluice's reading and syslog-ng's kv-parser
//! readings), CEF extensions, the JSON member reader, the XML reader, BeyondTrust's header,
//! the ` key=-` message filter, and the strptime-style vendor time formats. Nothing may
//! panic, every pair must point into the input, a value is never longer than the input,
//! and the filtered message is never longer than the message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice_proto::Zone;
use sluice_proto::classify::vendors::{beyondtrust, cef};
use sluice_proto::classify::{MessageFilter, json_walk, kv, kvscan, vtime, xml};

fn within(outer: &[u8], inner: &[u8]) -> bool {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    i >= o && i + inner.len() <= o + outer.len()
}

fuzz_target!(|data: &[u8]| {
    for sep in [b' ', b'|', b';', b'\t', b','] {
        for p in kv::pairs(data, sep) {
            assert!(within(data, p.key) && within(data, p.value));
            let mut out = Vec::new();
            kv::unquote_into(p.value, &mut out);
            assert!(out.len() <= p.value.len());
        }
    }
    for (k, v) in cef::ext_pairs(data) {
        assert!(within(data, k) && within(data, v));
    }
    // syslog-ng's kv-parser scanner with the separators SC4S's parsers use: keys point into
    // the input, a value is at most the input's length (decoding only shortens).
    for (value_sep, pair_sep) in [(b']', b'['), (b'=', b','), (b'=', b' ')] {
        for (k, v) in kvscan::pairs(data, value_sep, pair_sep) {
            assert!(within(data, k) && !k.is_empty());
            assert!(v.len() <= data.len());
        }
    }
    for sep in [b' ', b';'] {
        for (k, v, _) in kv::syslog_ng_pairs(data, sep) {
            assert!(within(data, k) && within(data, v) && !k.is_empty());
        }
    }
    let _ = json_walk::walk(data, |path, v| {
        assert!(path.iter().all(|p| within(data, p)));
        if let Some(t) = v.text() {
            assert!(t.is_empty() || within(data, t) || t == b"true" || t == b"false");
        }
    });
    let (pairs, err) = xml::scan(data);
    if let Some(e) = err {
        assert!(e.at <= data.len());
    }
    for (k, _) in &pairs {
        assert!(!k.is_empty());
    }
    if let Some(p) = beyondtrust::parts(data) {
        assert!(within(data, p.siteid) && within(data, p.message));
    }
    let kept: usize = MessageFilter::DropDashValues.pieces(data).map(<[u8]>::len).sum();
    assert!(kept <= data.len());
    assert_eq!(kept == 0, MessageFilter::DropDashValues.is_empty(data));
    let zone = Zone::utc();
    for f in [
        "%Y/%m/%d %H:%M:%S.%f",
        "%b %d %Y %T %Z",
        "%s.%f",
        "%Y-%m-%dT%T%z",
        "%a %b %e %I:%M:%S %p",
    ] {
        if let Some(t) = vtime::strptime(f, data, &zone, 1_713_139_200) {
            assert!(t.micros < 1_000_000);
        }
    }
    let _ = vtime::parse_iso(data, &zone);
    let _ = vtime::parse_epoch(data, true);
});
