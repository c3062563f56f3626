//! The message shapes the benches and allocation tests share: what dominates SC4S traffic and
//! its load tests (syslog-ng loggen's lines, a Cisco ASA line, an SD-heavy RFC 5424 line).

use sluice_proto::Format;

/// 2026-03-05T12:28:51Z, the stamp written in the loggen lines.
pub const NOW_UNIX: i64 = 1_772_713_731;

/// Pads `head` with `PADD` to `total` bytes including the trailing LF, as loggen does.
pub fn padded(head: &[u8], total: usize) -> Vec<u8> {
    let mut line = head.to_vec();
    while line.len() < total - 1 {
        line.push(b"PADD"[line.len() % 4]);
    }
    line.truncate(total - 1);
    line.push(b'\n');
    line
}

/// `loggen -s total` (RFC 3164, no offset in the stamp).
pub fn loggen_rfc3164(total: usize) -> Vec<u8> {
    padded(
        b"<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
        total,
    )
}

/// `loggen -P -F -s total` (RFC 5424 with a BOM before MSG).
pub fn loggen_rfc5424(total: usize) -> Vec<u8> {
    padded(
        b"<38>1 2026-03-05T12:28:51+00:00 localhost prg00000 1234 - - \xEF\xBB\xBFseq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ",
        total,
    )
}

pub const CISCO_ASA: &[u8] = b"<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built outbound TCP connection 102 for outside:198.51.100.1/443 (198.51.100.1/443) to inside:192.168.1.10/53211 (203.0.113.10/53211)\n";

pub const SD_HEAVY: &[u8] = b"<134>1 2021-02-08T10:19:34.123456Z gw-02bd87 CheckPoint 26203 - [sc4s@2620 action=\"Accept\" flags=\"280832\" ifdir=\"inbound\" ifname=\"eth0\" loguid=\"{0x4b397cf0,0x530e24fb,0x1b71ea26,0x27225237}\" origin=\"10.160.99.101\" originsicname=\"cn=gw-02bd87,o=gw-02bd87..4zrt7d\" sequencenum=\"5\" time=\"1612815085\" version=\"5\" dst=\"173.194.184.234\" http_host=\"r5---sn-p5qlsndd.gvt1.com\" http_status=\"206\" log_id=\"4000\" method=\"GET\" product=\"Threat Emulation\" proto=\"6\" s_port=\"57656\" service=\"80\" src=\"10.160.99.101\"][meta sequenceId=\"1\"] Check Point event\n";

/// The common shapes with the format each must parse as.
pub fn shapes() -> Vec<(&'static str, Vec<u8>, Format)> {
    vec![
        ("loggen_rfc3164_800", loggen_rfc3164(800), Format::Rfc3164),
        ("loggen_rfc5424_800", loggen_rfc5424(800), Format::Rfc5424),
        ("cisco_asa", CISCO_ASA.to_vec(), Format::Rfc3164),
        ("sd_heavy_rfc5424", SD_HEAVY.to_vec(), Format::Rfc5424),
    ]
}
