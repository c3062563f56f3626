//! Fuzz target `classify`: parse → classify → encode on arbitrary bytes, with the first byte
//! choosing a vendor preamble (CEF header, PAN-OS CSV, FortiGate key=value, a JSON body, a
//! Cisco mnemonic or header variant, an ISE segment, a LEEF header, an almost-syslog header,
//! StealthINTERCEPT alert details, Prisma pairs, RSA SecurID columns, a Thales STA frame, the
//! cat3 layouts (kv-parser pairs, CEF as JSON values, Vectra JSON, ONTAP, NetIQ, Radware), or
//! none) so the vendor parsers are reached quickly, and the second byte a listener (the default or a vendor's,
//! for the network-source parsers, or a no-parse port). Nothing may panic, and every event must
//! be one valid JSON object with a non-blank `event`.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use sluice_proto::classify::context::ContextFiles;
use sluice_proto::classify::{
    Classifier, Settings, SourceMeta, Transport, VendorOptions, classify, classify_no_parse,
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
    // Issue 27 (cat3): syslog-ng kv-parser layouts, CEF rendered as JSON values, loggen's
    // t_json_values_msg with SD, Tanium's SD stamp, Vectra JSON, NetApp ONTAP audit/EMS,
    // NetIQ JSON, Radware's device prefix.
    b"<110>May 25 13:06:49 dsp Semperis.DSP [AdChanges@51802] [",
    b"<134>May 24 05:38:26 ns CEF:0|XYPRO|NONSTOP|3.0|SAFEGUARD|Logon|5|",
    b"<38>1 2024-05-26T09:44:02Z h prg00000 1234 - [meta sequenceId=\"1\"] ",
    b"<14>1 2024-05-26T09:44:02Z t Tanium 2324 - [tanium_droid@017472 Client-Time-UTC=\"",
    b"<13>May 27 10:41:43 c vectra_json_v2 -: {\"vectra_timestamp\": \"",
    b"<14>May 23 18:47:16 n: n: 00000030.00c8f1e2 11e5347f Thu May 23 2024 18:47:16 ",
    b"<13>May 23 19:52:23 [n-1:secd:notice]: ",
    b"<132>May 24 03:28:12 nam {\"appName\":\"Novell Access Manager\",\"timeStamp\":\"",
    b"<27>[Device: dp 10.0.0.1] M_2",
    // Issue 27's cat2 families: Epic's XML (t_json_values), FireEye's JSON, BeyondTrust's
    // pairs, Forcepoint's pairs and its ` key=-` removal, Avi's RFC 5424 tail, Guardicore's
    // header repair, DataPower's bracket header, Cylance's event types.
    b"<85>1 2024-05-15T20:05:35.246Z e Epic 7652 - [origin software=\"S\"] <?xml version=\"1.0\"?><EventLog>",
    b"<85>May 15 20:05:35 e Epic[1]: <",
    b"<164>fenotify-7441437.warning: {\"product\":\"HX\",\"alert\":{",
    b"<166>May 08 04:40:52 sra BG[123]: 1427:01:01:",
    b"<134>May 21 01:40:16 fp vendor=Forcepoint product=Web ",
    b"<46>2024-05-07 05:53:25,246 avi Avi-Controller - ",
    b"<14>2024-05-21T04:55Z gc CEF:0|Guardicore|Centra|",
    b"<166>May 21 08:10:58 dp [A][0x1][",
    b"<134>1 2024-05-14T20:13:01.246Z cy CylancePROTECT - - - Event Type:",
    // StealthINTERCEPT alert details, Prisma SD-WAN pairs, RSA SecurID columns (on the
    // DELL_RSA_SECUREID listener, see below), a Thales STA frame (no-parse listener).
    b"<166>May 25 19:37:31 NumberOfLogins=1 AttackedHostIp= AlertText=Activity.Account Sid: ",
    b"<11>1 2024-05-24T23:00:18.318529Z 10.64.12.21 log - - - ION_HOST=\"x\" FACILITY=",
    b"<166>May 15 09:14:25 am-01 2024-05-15 09:14:25,246, am-01, audit.admin.",
    b"<14>1 2024-05-26T14:04:30.318529+00:00 sta-1 - - RemoteLogging \xef\xbb\xbf{",
];

/// Listener ids the second byte picks (beyond the preamble): the network-source
/// applications run only on a vendor's listener.
const LISTENERS: &[&str] = &[
    "DEFAULT",
    "NETAPP_ONTAP",
    "PFSENSE_FIREWALL",
    "SPECTRACOM_NTP",
    "RIVERBED_SYSLOG",
    "RARITAN_DSX",
    "SCHNEIDER_APC",
    "DELL_RSA_SECUREID",
    "THALES_STA",
];

static CLASSIFIER: LazyLock<Classifier> = LazyLock::new(|| {
    let settings = Settings {
        listeners: LISTENERS.iter().map(|l| (*l).to_owned()).collect(),
        options: VendorOptions {
            netapp_ontap_new_format: true,
            ..VendorOptions::default()
        },
        ..Settings::default()
    };
    Classifier::new(ContextFiles::default(), &settings).expect("the classifier builds")
});
static ZONE: LazyLock<Zone> = LazyLock::new(Zone::utc);

fuzz_target!(|data: &[u8]| {
    let [choice, pick_listener, rest @ ..] = data else {
        return;
    };
    let choice = *choice;
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
    // The second byte picks the listener; Thales STA's is a no-parse port (its frames are
    // classified unparsed).
    let listener_id = LISTENERS[usize::from(*pick_listener) % LISTENERS.len()];
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
