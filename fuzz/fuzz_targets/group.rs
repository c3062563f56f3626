//! Fuzz target `group`: the multi-part grouping (`classify::group`) on a stream of lines.
//! The input is split at LF into messages; each is parsed, classified and, when it is a part
//! (an ISE/ACS segment, a vSphere line with GROUPMSG on, a Brightmail part, a BeyondTrust SRA part; the first byte of each line picks
//! a preamble that makes one likely), offered to a small bounded `Grouper` with a clock that
//! the line's second byte advances. Nothing may panic; the grouper stays within its limits;
//! every joined line parses and classifies again without being a multi-segment part again
//! (ISE/ACS joins are `serial 1 0`), and after the final drain nothing is held and there
//! are no more joined events than parts.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use sluice_proto::classify::group::{GroupLimits, GroupOptions, Grouper, Rule, part};
use sluice_proto::classify::context::ContextFiles;
use sluice_proto::classify::{
    Classifier, Settings, SourceMeta, Transport, VendorOptions, classify,
};
use sluice_proto::{ParseOptions, Zone, parse};

const PREAMBLES: &[&[u8]] = &[
    b"",
    b"<165>Mar 21 13:08:50 ise-1 CISE_RADIUS_Accounting 0006028545 3 ",
    b"<165>Mar 21 13:08:50 ise-1 CISE_X 7 2 ",
    b"<165> Mar 15 23:39:29 acs-1 CSCOacs_Passed_Authentications: 0765855540 2 ",
    b"<14>2024-04-10T10:00:00.123Z esx-01 localcli[100]: ",
    b"<14>2024-04-10T10:00:00.123Z esx-01 cmmdsTimeMachineDump: ",
    b"<14>2024-04-10T10:00:00.123Z esx-01 storageRM[1]: ",
    b"<14>2024-04-10T10:00:00.123Z esx-01 sdrsInjector[1]: ",
    b"<14>2024-04-10T10:00:00.123Z esx-01 Hostd[1]: --> ",
    b"<1>Apr 10 10:00:00 smg-01 bmserver: 1576195989|",
    b"<166>May 08 04:40:52 sra-01 BG[123]: 1427:0",
    b"<166>May 08 04:40:52 sra-01 BG[123]: 7:",
];

static CLASSIFIER: LazyLock<Classifier> = LazyLock::new(|| {
    let settings = Settings {
        options: VendorOptions {
            vsphere_groupmsg: true,
            ..VendorOptions::default()
        },
        ..Settings::default()
    };
    Classifier::new(ContextFiles::default(), &settings).expect("builds")
});
static ZONE: LazyLock<Zone> = LazyLock::new(Zone::utc);

const LIMITS: GroupLimits = GroupLimits {
    max_groups: 4,
    max_bytes: 4096,
    max_parts: 8,
};

fuzz_target!(|data: &[u8]| {
    let now = 1_713_139_200;
    let opts = ParseOptions {
        now_unix_secs: now,
        zone: &ZONE,
    };
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    let group_opts = GroupOptions {
        vsphere: true,
        brightmail: true,
        checkpoint_noise_secs: Some(2),
    };
    let mut grouper: Grouper<usize> = Grouper::new(LIMITS);
    let mut joined = Vec::new();
    let mut clock_ms = 0i64;
    let mut parts = 0usize;
    for line in data.split(|&b| b == b'\n').take(64) {
        let Some((&choice, rest)) = line.split_first() else {
            continue;
        };
        let (step, rest) = rest.split_first().map_or((0, rest), |(s, r)| (*s, r));
        clock_ms += i64::from(step) * 50;
        let mut input = PREAMBLES[usize::from(choice) % PREAMBLES.len()].to_vec();
        input.extend_from_slice(rest);
        let msg = parse(&input, &opts);
        let scratch = sluice_proto::classify::local::Scratch::new();
        let class = classify(&msg, &src, now, &CLASSIFIER, &scratch);
        if let Some(p) = part(&msg, &class, src.source_ip, &group_opts) {
            grouper.offer(&p, &1, clock_ms, &mut joined);
            parts += 1;
            assert!(grouper.len() <= LIMITS.max_groups);
        }
        grouper.expire(clock_ms, &mut joined);
    }
    grouper.drain(&mut joined);
    assert!(grouper.is_empty());
    assert!(joined.len() <= parts);
    for (origin, line) in &joined {
        assert_eq!(*origin, 1);
        let msg = parse(line, &opts);
        let scratch = sluice_proto::classify::local::Scratch::new();
        let class = classify(&msg, &src, now, &CLASSIFIER, &scratch);
        if let Some(p) = part(&msg, &class, src.source_ip, &group_opts) {
            assert!(
                !matches!(p.rule, Rule::Ise | Rule::Acs),
                "a joined ISE/ACS record is a multi-segment part again: {:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
});
