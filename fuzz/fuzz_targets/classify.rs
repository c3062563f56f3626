//! Fuzz target `classify`: parse → classify → encode on arbitrary bytes, with the first byte
//! choosing a vendor preamble (CEF header, PAN-OS CSV, FortiGate key=value, a JSON body, a
//! Cisco mnemonic or header variant, an ISE segment, a LEEF header, an almost-syslog header,
//! StealthINTERCEPT alert details, Prisma pairs, RSA SecurID columns, a Thales STA frame, or
//! none) so the vendor parsers are reached quickly, and a listener (the default, RSA
//! SecurID's, or a no-parse port). Nothing may panic, and every event must be one valid JSON object with a non-blank `event`.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use sluice_proto::classify::{
    Classifier, Settings, SourceMeta, Transport, classify, classify_no_parse,
};
use sluice_proto::parse::no_parse;
use sluice_proto::{EncodeOptions, encode_event};
use sluice_proto::{ParseOptions, Zone, parse};

const PREAMBLES: &[&[u8]] = &[
    b"",
    b"<134>Mar 31 02:08:27 h1 CEF:0|",
    b"<134>Mar 31 02:08:27 h1 prog: CEF:0|Imperva Inc.|SecureSphere|1|Signature|n|5|",
    b"<14>Apr 07 01:16:25 pa 1,2024/04/07 01:16:25,0072,TRAFFIC,",
    b"<14>Apr 07 01:16:25 pa 1,2024/04/07 01:16:25,0072,THREAT,url,1,",
    b"<111> Mar 29 17:34:57 fortigate date=2024-03-29 time=17:34:57 devid=FGT60D ",
    b"<13>Mar 31 02:08:27 h1 {",
    b"<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-",
    b"<190>30: sw-01: *Mar 16 07:15:18: %",
    b"<166>22191: rtr-4: 022546: .Mar 19 07:58:07.477 CDT: %SYS-5-",
    b"<189>8103: Mar 22 2024 05:21:53 PM.071 UTC : %UC_",
    b"<166>RP/0/RP0/CPU3:Mar 20 18:41:51: config[67105]: %MGBL-",
    b"<189>Mar 22 22:47:28 SYSMGR[919]: %Viptela-",
    b"<165> Mar 21 13:08:50 ise-1 CISE_RADIUS_Accounting 0006028545 1 0 ",
    b"<165>Mar 21 15:19:04 h Mar 21 15:19:04 ise-1 CISE_",
    b"Mar 16 2024 07:15:18 ftd-1 : %FTD-6-",
    b"<134>Mar 15 11:32:40 local0.info ",
    b"<111>Apr 02 09:29:24 ns1 named[42]: ",
    b"2024-03-16T06:10:11Z ",
    b"<13>Jan 18 11:07:53 h1 LEEF:2.0|Vendor|Product|1|Ev|",
    b"<13>1 2024-04-04T12:29:53+00:00 h1 LEEF:1.0|V|P|1|E|",
    // SC4S's almost-syslog header repairs: relay address after HOST, no stamp, ISO stamp
    // with a comma, BSD stamp with year and offset; a chassis `slotN/` HOST; VMware's
    // bad RFC 5424 header.
    b"<150>Apr 10 10:00:00 ib-01 10.0.0.1 ",
    b"<13>relay-7 ",
    b"<46>2024-04-10 10:00:00,",
    b"<13>Apr 10 2024 10:00:00.",
    b"<166>Mar 27 09:08:53 slot1/",
    b"<144>2024-04-13T15:43:27.912Z esx-08 Vpxa: verbose vpxa[4242] [Originator@6876 ",
    // StealthINTERCEPT alert details, Prisma SD-WAN pairs, RSA SecurID columns (on the
    // DELL_RSA_SECUREID listener, see below), a Thales STA frame (no-parse listener).
    b"<166>May 25 19:37:31 NumberOfLogins=1 AttackedHostIp= AlertText=Activity.Account Sid: ",
    b"<11>1 2024-05-24T23:00:18.318529Z 10.64.12.21 log - - - ION_HOST=\"x\" FACILITY=",
    b"<166>May 15 09:14:25 am-01 2024-05-15 09:14:25,246, am-01, audit.admin.",
    b"<14>1 2024-05-26T14:04:30.318529+00:00 sta-1 - - RemoteLogging \xef\xbb\xbf{",
];

static CLASSIFIER: LazyLock<Classifier> = LazyLock::new(|| {
    let settings = Settings {
        listeners: vec!["DELL_RSA_SECUREID".into(), "THALES_STA".into()],
        ..Settings::default()
    };
    Classifier::new(Default::default(), &settings).expect("builds")
});
static ZONE: LazyLock<Zone> = LazyLock::new(Zone::utc);

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let mut input = PREAMBLES[usize::from(choice) % PREAMBLES.len()].to_vec();
    input.extend_from_slice(rest);
    let now = 1_713_139_200;
    let msg = parse(
        &input,
        &ParseOptions {
            now_unix_secs: now,
            zone: &ZONE,
        },
    );
    // The choice byte's top bits also pick the listener: the default, RSA SecurID's, or
    // Thales STA's no-parse port (whose frames are classified unparsed).
    let listener_id = match choice >> 6 {
        1 => "DELL_RSA_SECUREID",
        2 => "THALES_STA",
        _ => "DEFAULT",
    };
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id,
    };
    let scratch = sluice_proto::classify::local::Scratch::new();
    let unparsed = no_parse(&input);
    let (msg, class) = if listener_id == "THALES_STA" {
        (unparsed, classify_no_parse(&unparsed, &src, now, &CLASSIFIER, &scratch))
    } else {
        (msg, classify(&msg, &src, now, &CLASSIFIER, &scratch))
    };
    let mut out = Vec::new();
    encode_event(
        &mut out,
        &msg,
        &class,
        &src,
        now * 1_000_000,
        &EncodeOptions::new("fuzz"),
    );
    let v: serde_json::Value = serde_json::from_slice(&out).expect("the event is valid JSON");
    let event = v["event"].as_str().expect("event is a string");
    assert!(!event.is_empty(), "HEC rejects a blank event");
});
