//! SC4S-shaped HEC events for throughput measurements of HEC clients and sinks.
//!
//! The text varies (words, addresses, ports, numbers) so gzip sees a realistic ratio:
//! identical padded events compress ~100x and would flatter every gzip figure.

const WORDS: &[&str] = &[
    "connection",
    "accepted",
    "denied",
    "from",
    "port",
    "user",
    "session",
    "opened",
    "closed",
    "for",
    "src",
    "dst",
    "proto",
    "TCP",
    "UDP",
    "bytes",
    "duration",
    "action",
    "allow",
    "drop",
    "policy",
    "rule",
    "interface",
    "outside",
    "inside",
    "login",
    "failed",
    "password",
    "publickey",
    "root",
    "admin",
    "service",
    "started",
    "stopped",
];

/// `events` SC4S-shaped events (about 740 bytes each), joined by `\n` as an HEC request body.
/// Deterministic for a given `seed`; event `s` carries loggen's `seq: s, thread: 0000`.
pub fn sample_body(events: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..events)
        .map(|s| {
            let words: Vec<&str> = (0..24).map(|_| WORDS[rng.usize(..WORDS.len())]).collect();
            format!(
                r#"{{"time":"{}.{:03}","host":"fw-{:02}","source":"program:prg00000","sourcetype":"nix:syslog","index":"osnix","event":"prg00000[{}]: seq: {s:010}, thread: 0000, runid: 1772713731, stamp: 2026-03-05T12:28:51 {} 10.{}.{}.{}:{} -> 192.168.{}.{}:{} {}","fields":{{"sc4s_vendor":"nix","sc4s_product":"syslog","sc4s_syslog_facility":"user","sc4s_syslog_severity":"info","sc4s_container":"sluice","sc4s_destport":"514","sc4s_fromhostip":"10.0.{}.{}","sc4s_proto":"UDP","sc4s_recv_time":"1710166925.{:03}","sc4s_tags":".source.s_DEFAULT|wireformat:rfc3164"}}}}"#,
                1_710_166_925 + s / 1000,
                rng.u32(..1000),
                rng.u32(..64),
                rng.u32(1000..65000),
                words.join(" "),
                rng.u8(..),
                rng.u8(..),
                rng.u8(..),
                rng.u16(1024..),
                rng.u8(..),
                rng.u8(..),
                rng.u16(..1024),
                rng.u64(..),
                rng.u8(..),
                rng.u8(..),
                rng.u32(..1000),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_sample_event_is_valid_json_with_a_sequence_number() {
        let body = super::sample_body(50, 7);
        let text = String::from_utf8(body).unwrap();
        for (i, line) in text.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let ev = v["event"].as_str().unwrap();
            assert_eq!(crate::seq::parse_seq(ev).unwrap().seq, i as u64);
        }
        assert_eq!(text.lines().count(), 50);
    }
}
