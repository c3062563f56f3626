//! Fuzzes the PROXY protocol v1/v2 header decoder (`sluice_proto::proxy::decode`), which
//! sees the first bytes of every stream connection when `SC4S_SOURCE_PROXYCONNECT=yes`.
//!
//! Checked for every input: no panic; the answer for each prefix of the input, shortest
//! first, is "need more" for a while and then final — once a header is found it stays the
//! same header (same length, same source) whatever follows, and once refused it stays
//! refused — so the answer never depends on how the bytes were split into reads; a header
//! lies inside the input and is no longer than `V2_MAX`; "need more" is never the answer
//! for `V2_MAX` bytes (a connection waits for a bounded amount). Then a round trip: v1 and
//! v2 headers built from the input's bytes as addresses decode to those addresses.
#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use libfuzzer_sys::fuzz_target;
use sluice_proto::proxy::{Decoded, V1_PREFIX, V2_MAX, V2_SIGNATURE, decode};

fn prefixes_settle(data: &[u8]) {
    let mut settled: Option<Result<Decoded, ()>> = None;
    for n in 0..=data.len() {
        let now = decode(&data[..n]);
        if let Ok(Decoded::Header { len, .. }) = now {
            assert!(len <= n && len <= V2_MAX, "header of {len} in {n} bytes");
        }
        if let Ok(Decoded::NeedMore) = now {
            assert!(n < V2_MAX, "still waiting after {n} bytes");
        }
        let now = now.map_err(|_| ());
        match &settled {
            Some(first) => assert_eq!(&now, first, "the answer changed at {n} bytes"),
            None if now != Ok(Decoded::NeedMore) => settled = Some(now),
            None => {}
        }
    }
}

fn v2(family: u8, addr: &[u8]) -> Vec<u8> {
    let mut h = V2_SIGNATURE.to_vec();
    h.push(0x21);
    h.push(family);
    h.extend_from_slice(&(addr.len() as u16).to_be_bytes());
    h.extend_from_slice(addr);
    h
}

fn source(h: &[u8]) -> Option<SocketAddr> {
    match decode(h) {
        Ok(Decoded::Header { len, proxied }) => {
            assert_eq!(len, h.len());
            proxied.source
        }
        other => panic!("{h:?} decoded as {other:?}"),
    }
}

fn round_trip(data: &[u8]) {
    let Some(b) = data.get(..36) else {
        return;
    };
    let port = |i: usize| u16::from_be_bytes([b[i], b[i + 1]]);
    let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3])), port(4));
    let mut a6 = [0u8; 16];
    a6.copy_from_slice(&b[6..22]);
    let v6 = SocketAddr::new(IpAddr::V6(Ipv6Addr::from(a6)), port(22));
    // v1 text.
    let line = format!("PROXY TCP4 {} 10.0.0.1 {} 514\r\n", v4.ip(), v4.port());
    assert_eq!(source(line.as_bytes()), Some(v4));
    let line = format!("PROXY TCP6 {} ::1 {} 514\r\n", v6.ip(), v6.port());
    assert!(line.len() <= 107);
    assert_eq!(source(line.as_bytes()), Some(v6));
    // v2 binary, with the rest of the input as TLVs after the addresses.
    let mut addr = b[..4].to_vec();
    addr.extend_from_slice(&[10, 0, 0, 1]);
    addr.extend_from_slice(&b[4..6]);
    addr.extend_from_slice(&[2, 2]);
    assert_eq!(source(&v2(0x11, &addr)), Some(v4));
    let mut addr = b[6..22].to_vec();
    addr.extend_from_slice(&[0; 16]);
    addr.extend_from_slice(&b[22..24]);
    addr.extend_from_slice(&[2, 2]);
    assert_eq!(source(&v2(0x21, &addr)), Some(v6));
}

fuzz_target!(|data: &[u8]| {
    prefixes_settle(data);
    // The same bytes behind each signature, so the fuzzer does not have to find them.
    for sig in [V2_SIGNATURE, V1_PREFIX] {
        let mut with = sig.to_vec();
        with.extend_from_slice(data);
        with.truncate(V2_MAX + 64);
        prefixes_settle(&with);
    }
    round_trip(data);
});
