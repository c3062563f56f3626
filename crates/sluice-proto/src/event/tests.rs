use super::sdata::{sd_is_canonical, write_sdata_parts};
use super::*;
use crate::classify::{Classifier, Transport, classify};
use crate::message::Timestamp;
use crate::message::{Format, StructuredData};
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const RECV: i64 = 1_772_713_800_123_456;

fn udp() -> SourceMeta<'static> {
    SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    }
}

fn opts() -> EncodeOptions {
    EncodeOptions::new("sc4s-host")
}

/// The slice of `raw` where `needle` first occurs (so it points into `raw`, as a
/// parser's output would).
fn sub<'a>(raw: &'a [u8], needle: &str) -> &'a [u8] {
    let n = needle.as_bytes();
    let at = raw
        .windows(n.len())
        .position(|w| w == n)
        .expect("needle in raw");
    &raw[at..at + n.len()]
}

fn from<'a>(raw: &'a [u8], needle: &str) -> &'a [u8] {
    let s = sub(raw, needle);
    let at = s.as_ptr() as usize - raw.as_ptr() as usize;
    &raw[at..]
}

fn stamp(unix_secs: i64, micros: u32) -> Option<Timestamp> {
    Some(Timestamp {
        unix_secs,
        micros,
        offset_secs: 0,
    })
}

fn encode_with(
    msg: &Message<'_>,
    tables: &Classifier,
    src: &SourceMeta<'_>,
    o: &EncodeOptions,
) -> String {
    let class = classify(
        msg,
        src,
        RECV / 1_000_000,
        tables,
        crate::classify::testutil::scratch(),
    );
    let mut out = b"previous event".to_vec();
    encode_event(&mut out, msg, &class, src, RECV, o);
    let text = String::from_utf8(out).expect("UTF-8");
    let event = text
        .strip_prefix("previous event")
        .expect("appends")
        .to_owned();
    assert!(!event.ends_with('\n'));
    event
}

fn encode(msg: &Message<'_>) -> String {
    encode_with(msg, &Classifier::default(), &udp(), &opts())
}

/// Parses an event and checks the shape every event must have.
fn check(event: &str) -> Value {
    let v: Value = serde_json::from_str(event).expect("event parses as JSON");
    let obj = v.as_object().expect("object");
    for key in ["time", "host", "source", "sourcetype", "index", "event"] {
        let value = obj.get(key).and_then(Value::as_str);
        assert!(value.is_some_and(|s| !s.is_empty()), "{key} in {event}");
    }
    let time = obj["time"].as_str().unwrap();
    let (secs, frac) = time.split_once('.').expect("three decimals");
    assert!(secs.parse::<i64>().is_ok() && frac.len() == 3, "{time}");
    if let Some(fields) = obj.get("fields") {
        for (k, val) in fields.as_object().expect("fields object") {
            assert!(val.is_string(), "{k} is not a string");
        }
    }
    v
}

/// [`loggen_line`] as the parser reads it.
fn loggen_msg(raw: &[u8]) -> Message<'_> {
    bsd(
        raw,
        Some("localhost"),
        Some("prg00000"),
        Some("1234"),
        "seq:",
    )
}

fn loggen_line() -> Vec<u8> {
    let mut raw = b"<38>2026-03-05T12:28:51 localhost prg00000[1234]: seq: 0000000042, thread: 0003, runid: 1772713731, stamp: 2026-03-05T12:28:51 ".to_vec();
    while raw.len() < 799 {
        raw.extend_from_slice(b"PADD");
    }
    raw.truncate(799);
    raw
}

fn bsd<'a>(
    raw: &'a [u8],
    host: Option<&str>,
    program: Option<&str>,
    pid: Option<&str>,
    message_from: &str,
) -> Message<'a> {
    Message {
        raw,
        format: Format::Rfc3164,
        priority: Priority::new(38),
        timestamp: stamp(1_772_713_731, 0),
        year_inferred: false,
        hostname: host.map(|h| sub(raw, h)),
        appname: program.map(|p| sub(raw, p)),
        procid: pid.map(|p| sub(raw, p)),
        msgid: None,
        structured_data: None,
        message: Some(from(raw, message_from)),
    }
}

/// SC4S's `syslogng:loggen` (`addons/syslogng/app-syslog-syslog-ng_loggen.conf`): the
/// MESSAGE inside `t_json_values_msg`'s JSON object.
#[test]
fn golden_loggen_rfc3164() {
    let raw = loggen_line();
    let msg = loggen_msg(&raw);
    let event = encode(&msg);
    let body = String::from_utf8(from(&raw, "seq:").to_vec()).unwrap();
    let expected = format!(
        concat!(
            r#"{{"time":"1772713731.000","host":"localhost","source":"sc4s","#,
            r#""sourcetype":"syslogng:loggen","index":"main","event":"{{\"message\":\"{}\"}}","#,
            r#""fields":{{"sc4s_vendor":"syslogng","sc4s_product":"loggen","#,
            r#""sc4s_syslog_facility":"auth","sc4s_syslog_severity":"info","#,
            r#""sc4s_container":"sc4s-host","sc4s_destport":"514","#,
            r#""sc4s_fromhostip":"192.0.2.10","sc4s_proto":"UDP","#,
            r#""sc4s_recv_time":"1772713800.123","#,
            r#""sc4s_tags":".source.s_DEFAULT|wireformat:rfc|wireformat:rfc3164|.app.app-syslog-syslog-ng_loggen"}}}}"#
        ),
        body
    );
    assert!(body.starts_with("seq: 0000000042"));
    assert_eq!(event, expected);
    let v = check(&event);
    let inner: Value = serde_json::from_str(v["event"].as_str().unwrap()).unwrap();
    assert_eq!(inner["message"], body.as_str());
}

/// The same line from another program is `nix:syslog`: `PROGRAM[PID]: MESSAGE`.
#[test]
fn golden_nix_syslog_rfc3164() {
    let raw = String::from_utf8(loggen_line())
        .unwrap()
        .replace("prg00000", "prg10000")
        .into_bytes();
    let msg = bsd(
        &raw,
        Some("localhost"),
        Some("prg10000"),
        Some("1234"),
        "seq:",
    );
    let event = encode(&msg);
    let body = String::from_utf8(from(&raw, "prg10000").to_vec()).unwrap();
    let expected = format!(
        concat!(
            r#"{{"time":"1772713731.000","host":"localhost","source":"program:prg10000","#,
            r#""sourcetype":"nix:syslog","index":"osnix","event":"{}","#,
            r#""fields":{{"sc4s_vendor":"nix","sc4s_product":"syslog","#,
            r#""sc4s_syslog_facility":"auth","sc4s_syslog_severity":"info","#,
            r#""sc4s_container":"sc4s-host","sc4s_destport":"514","#,
            r#""sc4s_fromhostip":"192.0.2.10","sc4s_proto":"UDP","#,
            r#""sc4s_recv_time":"1772713800.123","#,
            r#""sc4s_tags":".source.s_DEFAULT|wireformat:rfc|wireformat:rfc3164|.app.app-fallback-nix_syslog"}}}}"#
        ),
        body
    );
    assert!(body.starts_with("prg10000[1234]: seq: 0000000042"));
    assert_eq!(event, expected);
    check(&event);
}

#[test]
fn append_tag_extends_sc4s_tags_and_nothing_else() {
    let raw = loggen_line();
    let msg = loggen_msg(&raw);
    let tables = Classifier::default();
    let class = classify(
        &msg,
        &udp(),
        RECV / 1_000_000,
        &tables,
        crate::classify::testutil::scratch(),
    );
    let mut out = b"previous".to_vec();
    encode_event(&mut out, &msg, &class, &udp(), RECV, &opts());
    let plain = out.clone();
    assert!(append_tag(&mut out, 8, "sluice:frame_timeout"));
    let v = check(std::str::from_utf8(&out[8..]).unwrap());
    assert!(
        v["fields"]["sc4s_tags"]
            .as_str()
            .unwrap()
            .ends_with("|.app.app-syslog-syslog-ng_loggen|sluice:frame_timeout")
    );
    assert_eq!(out.len(), plain.len() + "|sluice:frame_timeout".len());
    // No fields object: nothing to tag, nothing changed.
    let mut none = opts();
    none.indexed_fields = IndexedFields::from_sc4s("none");
    let mut out = Vec::new();
    encode_event(&mut out, &msg, &class, &udp(), RECV, &none);
    let before = out.clone();
    assert!(!append_tag(&mut out, 0, "x"));
    assert_eq!(out, before);
}

#[test]
fn golden_rfc5424_with_structured_data() {
    let raw: &[u8] = br#"<165>1 2003-10-11T22:14:15.003Z MyMachine.Example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application"][ex@1 a="1" a="2" q="say \"hi\" \\ \] \n"] An application event"#;
    let sd = from(raw, "[exampleSDID");
    let sd_end = sd.windows(4).position(|w| w == b"] An").unwrap() + 1;
    let msg = Message {
        raw,
        format: Format::Rfc5424,
        priority: Priority::new(165),
        timestamp: stamp(1_065_910_455, 3_999),
        year_inferred: false,
        hostname: Some(sub(raw, "MyMachine.Example.com")),
        appname: Some(sub(raw, "evntslog")),
        procid: None,
        msgid: Some(sub(raw, "ID47")),
        structured_data: Some(StructuredData::from_validated(&sd[..sd_end])),
        message: Some(from(raw, "An application")),
    };
    let event = encode(&msg);
    let v = check(&event);
    assert_eq!(v["time"], "1065910455.003");
    assert_eq!(v["host"], "mymachine.example.com");
    assert_eq!(v["source"], "program:evntslog");
    assert_eq!(v["sourcetype"], "nix:syslog");
    assert_eq!(
        v["event"],
        r#"- - evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application"][ex@1 a="1" a="2" q="say \"hi\" \\ \] \\n"]An application event"#
    );
    assert_eq!(v["fields"]["sc4s_syslog_facility"], "local4");
    assert_eq!(v["fields"]["sc4s_syslog_severity"], "notice");
    assert_eq!(
        v["fields"]["sc4s_tags"],
        ".source.s_DEFAULT|wireformat:rfc|wireformat:rfc5424|.app.app-fallback-nix_syslog"
    );
}

#[test]
fn rfc5424_nil_fields_and_no_message() {
    let raw: &[u8] = b"<14>1 - - - - - -";
    let msg = Message {
        format: Format::Rfc5424,
        priority: Priority::new(14),
        message: None,
        ..Message::unparsed(raw, None)
    };
    let v = check(&encode(&msg));
    assert_eq!(v["event"], "- - - - - -");
    assert_eq!(v["source"], "program:");
    assert_eq!(v["time"], "1772713800.123", "receive time without a stamp");
    assert_eq!(v["host"], "192.0.2.10");
}

#[test]
fn golden_program_less_rfc3164_falls_back() {
    let raw: &[u8] = b"<13>Mar  5 12:28:51 Host1 just, some text";
    let mut msg = bsd(raw, Some("Host1"), None, None, "just");
    msg.priority = Priority::new(13);
    let event = encode(&msg);
    let expected = concat!(
        r#"{"time":"1772713731.000","host":"host1","source":"sc4s","sourcetype":"sc4s:fallback","index":"main","#,
        r#""event":"PRI=13\nMESSAGE=just, some text\n","#,
        r#""fields":{"sc4s_vendor":"splunk","sc4s_product":"sc4s","sc4s_class":"fallback","#,
        r#""sc4s_syslog_facility":"user","sc4s_syslog_severity":"notice","sc4s_container":"sc4s-host","#,
        r#""sc4s_destport":"514","sc4s_fromhostip":"192.0.2.10","sc4s_proto":"UDP","#,
        r#""sc4s_recv_time":"1772713800.123","#,
        r#""sc4s_tags":".source.s_DEFAULT|wireformat:rfc|wireformat:rfc3164|.app.app-fix-invalid-program-z_bsdconvention|.app.app-fallbackz-lastchance"}}"#
    );
    assert_eq!(event, expected);
    check(&event);
}

#[test]
fn first_word_without_colon_is_the_program() {
    // syslog-ng (and so SC4S) takes "just" as PROGRAM: nix:syslog, text unchanged.
    let raw: &[u8] = b"<13>Mar  5 12:28:51 Host1 just some text";
    let v = check(&encode(&bsd(raw, Some("Host1"), None, None, "just")));
    assert_eq!(v["sourcetype"], "nix:syslog");
    assert_eq!(v["source"], "program:just");
    assert_eq!(v["event"], "just some text");
}

#[test]
fn unparsed_bad_pri_uses_default_pri_and_source_ip() {
    let raw: &[u8] = b"<999>hello \"world\"";
    let event = encode(&Message::unparsed(raw, None));
    let v = check(&event);
    assert_eq!(v["event"], "PRI=13\nMESSAGE=<999>hello \"world\"\n");
    assert_eq!(v["host"], "192.0.2.10");
    assert_eq!(v["fields"]["sc4s_syslog_facility"], "user");
    assert_eq!(
        v["fields"]["sc4s_tags"],
        ".source.s_DEFAULT|wireformat:raw|.app.app-fallbackz-lastchance"
    );
}

#[test]
fn empty_datagram_and_pri_only_are_never_blank() {
    let v = check(&encode(&Message::unparsed(b"", None)));
    assert_eq!(v["event"], "PRI=13\n");

    let raw: &[u8] = b"<30>";
    let pri_only = Message {
        format: Format::Rfc3164,
        priority: Priority::new(30),
        message: Some(&raw[4..]),
        ..Message::unparsed(raw, None)
    };
    let v = check(&encode(&pri_only));
    assert_eq!(v["event"], "PRI=30\n");

    // A template override that renders nothing falls back to the key=value text.
    let tables = Classifier::default();
    let empty = Message::unparsed(b"", None);
    let mut class = classify(
        &empty,
        &udp(),
        RECV / 1_000_000,
        &tables,
        crate::classify::testutil::scratch(),
    );
    class.template = Template::HdrMsg;
    let mut out = Vec::new();
    encode_event(&mut out, &empty, &class, &udp(), RECV, &opts());
    let v = check(std::str::from_utf8(&out).unwrap());
    assert_eq!(v["event"], "PRI=13\n");
}

#[test]
fn invalid_utf8_and_nul_bytes() {
    let raw: &[u8] = b"<38>Mar  5 12:28:51 h app: caf\xe9 \xe2\x82 nul\x00here\x01";
    let msg = bsd(raw, Some("h"), Some("app"), None, "caf");
    let event = encode(&msg);
    assert!(event.contains(r"nul\u0000here\u0001"));
    let v = check(&event);
    assert_eq!(v["event"], "app: caf\u{FFFD} \u{FFFD} nul\u{0}here\u{1}");
}

#[test]
fn large_message() {
    let mut raw = b"<38>Mar  5 12:28:51 h app[1]: ".to_vec();
    let header = raw.len();
    raw.resize(65_000, b'x');
    raw[header + 100] = b'"';
    let msg = bsd(&raw, Some("h"), Some("app"), Some("1"), "xxxx");
    let msg = Message {
        message: Some(&raw[header..]),
        ..msg
    };
    let v = check(&encode(&msg));
    let text = v["event"].as_str().unwrap();
    assert_eq!(text.len(), 65_000 - header + "app[1]: ".len());
    assert!(text.starts_with("app[1]: xxx"));
}

#[test]
fn tag_text_is_kept_as_sent() {
    // No colon after [pid]: the event repeats the original, not a rebuilt "app[7]: ".
    let raw: &[u8] = b"<38>Mar  5 12:28:51 h app[7] text";
    let v = check(&encode(&bsd(
        raw,
        Some("h"),
        Some("app"),
        Some("7"),
        "text",
    )));
    assert_eq!(v["event"], "app[7] text");
    // A BOM removed by the parser is not brought back.
    let raw: &[u8] = b"<38>Mar  5 12:28:51 h app: \xEF\xBB\xBFtext";
    let v = check(&encode(&bsd(raw, Some("h"), Some("app"), None, "text")));
    assert_eq!(v["event"], "app: text");
    // Hand-built fields outside `raw`: rebuilt header.
    let msg = Message {
        format: Format::Rfc3164,
        priority: Priority::new(38),
        appname: Some(b"prog"),
        procid: Some(b"9"),
        message: Some(b"hello"),
        ..Message::unparsed(b"<38>", None)
    };
    assert_eq!(check(&encode(&msg))["event"], "prog[9]: hello");
}

#[test]
fn invalid_host_moves_into_message() {
    let raw: &[u8] = b"<38>Mar  5 12:28:51 Bad:Host sshd[5]: session opened";
    let msg = bsd(raw, Some("Bad:Host"), Some("sshd"), Some("5"), "session");
    let v = check(&encode(&msg));
    assert_eq!(v["host"], "192.0.2.10");
    assert_eq!(v["sourcetype"], "sc4s:fallback");
    assert_eq!(
        v["event"],
        "PRI=38\nMESSAGE=Bad:Host sshd[5]: session opened\n"
    );
}

#[test]
fn invalid_program_moves_into_message() {
    // (A `%ASA-...` PROGRAM would be folded back too, but Cisco then claims the
    // message: use a PROGRAM no vendor parser takes.)
    let raw: &[u8] = b"<166>Mar  5 12:28:51 asa-1 app!x: Built inbound";
    let msg = bsd(raw, Some("asa-1"), Some("app!x"), None, "Built");
    let v = check(&encode(&msg));
    assert_eq!(v["host"], "asa-1");
    assert_eq!(v["event"], "PRI=38\nMESSAGE=app!x: Built inbound\n");
    assert_eq!(
        v["fields"]["sc4s_tags"],
        ".source.s_DEFAULT|wireformat:rfc|wireformat:rfc3164|.app.app-fix-invalid-program-z_bsdconvention|.app.app-fallbackz-lastchance"
    );
}

#[test]
fn fallback_kv_with_all_keys() {
    let raw: &[u8] = b"<38>Mar  5 12:28:51 h sshd[5]:";
    let mut msg = bsd(raw, Some("h"), Some("sshd"), Some("5"), ":");
    msg.message = Some(&raw[raw.len()..]);
    let mut o = opts();
    o.store_raw_message = true;
    let v = check(&encode_with(&msg, &Classifier::default(), &udp(), &o));
    assert_eq!(
        v["event"],
        "RAWMSG=<38>Mar  5 12:28:51 h sshd[5]:\nPRI=38\nLEGACY_MSGHDR=sshd[5]:\nPROGRAM=sshd\nPID=5\n"
    );
}

#[test]
fn indexed_fields_settings() {
    let raw = loggen_line();
    let msg = loggen_msg(&raw);

    let mut o = opts();
    o.indexed_fields = IndexedFields::from_sc4s("none");
    let v = check(&encode_with(&msg, &Classifier::default(), &udp(), &o));
    assert!(v.get("fields").is_none());

    o.indexed_fields = IndexedFields::from_sc4s("proto,dport");
    o.container_host = Some("docker-host-7".into());
    let v = check(&encode_with(&msg, &Classifier::default(), &udp(), &o));
    // serde_json's map is sorted by key.
    let keys: Vec<&str> = v["fields"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "sc4s_loghost",
            "sc4s_product",
            "sc4s_proto",
            "sc4s_tags",
            "sc4s_vendor"
        ]
    );
    assert_eq!(v["fields"]["sc4s_loghost"], "docker-host-7");

    o.container_host = Some(String::new());
    let v = check(&encode_with(&msg, &Classifier::default(), &udp(), &o));
    assert!(v["fields"].get("sc4s_loghost").is_none());
}

#[test]
fn tls_ipv6_source_and_vendor_listener() {
    let raw: &[u8] = b"<13>Mar  5 12:28:51 msg without host tag";
    let mut msg = bsd(raw, None, None, None, "msg");
    msg.hostname = None;
    let src = SourceMeta {
        transport: Transport::Tls,
        dest_port: 6514,
        source_ip: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
        listener_id: "CISCO_ASA",
    };
    let mut tables = Classifier::default();
    tables.add_listener("CISCO_ASA");
    let v = check(&encode_with(&msg, &tables, &src, &opts()));
    assert_eq!(v["host"], "2001:db8::1");
    assert_eq!(v["fields"]["sc4s_proto"], "TCP");
    assert_eq!(v["fields"]["sc4s_destport"], "6514");
    assert!(
        v["fields"]["sc4s_tags"]
            .as_str()
            .unwrap()
            .starts_with(".source.s_CISCO_ASA|")
    );

    let mapped = SourceMeta {
        source_ip: IpAddr::V6(Ipv4Addr::new(10, 1, 2, 3).to_ipv6_mapped()),
        ..src
    };
    let v = check(&encode_with(&msg, &tables, &mapped, &opts()));
    assert_eq!(v["host"], "10.1.2.3");
    assert_eq!(v["fields"]["sc4s_fromhostip"], "10.1.2.3");
}

#[test]
fn epoch_formatting() {
    let fmt = |micros| {
        let mut out = Vec::new();
        write_epoch_millis(&mut out, micros);
        String::from_utf8(out).unwrap()
    };
    assert_eq!(fmt(0), "0.000");
    assert_eq!(fmt(1_999_999), "1.999");
    assert_eq!(fmt(1_710_166_925_412_999), "1710166925.412");
    assert_eq!(fmt(-500_000), "-0.500");
    assert_eq!(fmt(i64::MIN), "-9223372036854.775");
    // Around the ten-digit fast path, compared with the general formatting.
    let general = |micros: i64| {
        let abs = micros.unsigned_abs();
        let sign = if micros < 0 { "-" } else { "" };
        format!("{sign}{}.{:03}", abs / 1_000_000, abs % 1_000_000 / 1000)
    };
    for micros in [
        999_999_999_999_999,
        1_000_000_000_000_000,
        1_000_000_000_000_999,
        1_000_000_000_001_000,
        1_234_567_890_123_456,
        9_999_999_999_999_999,
        10_000_000_000_000_000,
        i64::MAX,
    ] {
        assert_eq!(fmt(micros), general(micros), "{micros}");
    }
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..100_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let micros = 1_000_000_000_000_000 + (state % 9_000_000_000_000_000) as i64;
        assert_eq!(fmt(micros), general(micros), "{micros}");
    }
}

#[test]
fn number_and_address_formatting() {
    for v in [0, 7, 9, 10, 99, 100, 514, 65_535, 999_999_999, u32::MAX] {
        let mut out = b"x".to_vec();
        push_u32(&mut out, v);
        assert_eq!(out, format!("x{v}").as_bytes());
    }
    let every_octet = (0..=255u8).flat_map(|o| {
        [
            Ipv4Addr::new(o, 255 - o, o / 2, 7),
            Ipv4Addr::new(9, o, 100, o / 3),
        ]
    });
    for ip in [
        Ipv4Addr::new(0, 0, 0, 0),
        Ipv4Addr::new(9, 10, 99, 100),
        Ipv4Addr::new(255, 255, 255, 255),
        Ipv4Addr::new(192, 0, 2, 10),
    ]
    .into_iter()
    .chain(every_octet)
    {
        let mut out = b"x".to_vec();
        write_ip(&mut out, IpAddr::V4(ip));
        assert_eq!(out, format!("x{ip}").as_bytes());
    }
}

fn field() -> impl proptest::strategy::Strategy<Value = Option<Vec<u8>>> {
    use proptest::prelude::*;
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40))
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 500, ..Default::default() })]

    /// Whatever the parser hands over (any bytes in any field, any format, garbage SD,
    /// hostile CSV-free defaults), every template yields one valid, complete event.
    #[test]
    fn any_message_encodes_to_valid_json(
        raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        host in field(), app in field(), pid in field(), msgid in field(), body in field(),
        sd in proptest::option::of(proptest::prop_oneof![
            proptest::strategy::Just(br#"[a b="c\" d\]"][e]"#.to_vec()),
            proptest::strategy::Just(b"[x y=unquoted\"]".to_vec()),
            proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
        ]),
        format in 0u8..3,
        pri in proptest::option::of(0u8..=191),
        micros in proptest::option::of(-1_000_000_000_000i64..4_000_000_000_000_000),
        listener in proptest::prop_oneof![
            proptest::strategy::Just("DEFAULT"),
            proptest::strategy::Just("CISCO_ASA"),
            proptest::strategy::Just("we\"ird"),
        ],
        store_raw in proptest::prelude::any::<bool>(),
    ) {
        let msg = Message {
            raw: &raw,
            format: [Format::Rfc5424, Format::Rfc3164, Format::Unparsed][usize::from(format)],
            priority: pri.and_then(Priority::new),
            timestamp: micros.map(|m| Timestamp {
                unix_secs: m.div_euclid(1_000_000),
                micros: m.rem_euclid(1_000_000) as u32,
                offset_secs: 0,
            }),
            year_inferred: false,
            hostname: host.as_deref(),
            appname: app.as_deref(),
            procid: pid.as_deref(),
            msgid: msgid.as_deref(),
            structured_data: sd.as_deref().map(StructuredData::from_validated),
            message: body.as_deref(),
        };
        let mut tables = Classifier::default();
        tables.add_listener("CISCO_ASA");
        let src = SourceMeta { listener_id: listener, ..udp() };
        let mut o = opts();
        o.store_raw_message = store_raw;
        for template in [Template::HdrMsg, Template::Rfc5424Compact, Template::FallbackKv] {
            let mut class = classify(&msg, &src, RECV / 1_000_000, &tables, crate::classify::testutil::scratch());
            class.template = template;
            let mut out = Vec::new();
            encode_event(&mut out, &msg, &class, &src, RECV, &o);
            let text = std::str::from_utf8(&out).map_err(|e| {
                proptest::test_runner::TestCaseError::fail(e.to_string())
            })?;
            let v = check(text);
            proptest::prop_assert_eq!(
                v["fields"]["sc4s_tags"].as_str().map(|t| t.starts_with(".source.s_")),
                Some(true)
            );
        }
    }
}

#[test]
fn indexed_fields_parsing() {
    let d = IndexedFields::default();
    assert!(d.enabled && d.facility && d.severity && d.container && d.destport);
    assert!(d.fromhostip && d.proto && d.recv_time);
    let e = IndexedFields::from_sc4s("");
    assert!(e.enabled && !e.facility && !e.recv_time);
    assert!(!IndexedFields::from_sc4s(" none ").enabled);
    assert!(IndexedFields::from_sc4s("none,proto").enabled);
}

fn sdata_both_ways(raw: &[u8]) -> (Vec<u8>, bool, Vec<u8>, bool) {
    let sd = StructuredData::from_validated(raw);
    let mut fast = b"x".to_vec();
    let fast_any = write_sdata(&mut fast, sd);
    let mut parts = b"x".to_vec();
    let parts_any = write_sdata_parts(&mut parts, sd);
    (fast, fast_any, parts, parts_any)
}

#[test]
fn canonical_sdata_is_copied_whole() {
    for raw in [
        &br#"[meta sequenceId="42"]"#[..],
        br#"[a@1 x="1" y="two words"][b z="q\"uote \\ \]"]"#,
        br#"[id]"#,
        "[é k=\"ü\"]".as_bytes(),
    ] {
        assert!(sd_is_canonical(raw), "{raw:?}");
        let (fast, fast_any, parts, parts_any) = sdata_both_ways(raw);
        assert_eq!((fast, fast_any), (parts, parts_any));
    }
    // Each of these is rewritten (or cut) by the re-serialisation: no shortcut.
    for raw in [
        &br#"[a x="b]c"]"#[..],
        br#"[a x="lone \q"]"#,
        br#"[a x=unquoted]"#,
        br#"[a  x="1"]"#,
        br#"[a x="1"] "#,
        br#"[a x="1"y="2"]"#,
        br#"[a x="1"#,
        b"-",
        b"",
    ] {
        assert!(!sd_is_canonical(raw), "{raw:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 3000, ..Default::default() })]

    #[test]
    fn sdata_shortcut_writes_what_the_parts_write(
        raw in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(b'['),
                proptest::strategy::Just(b']'),
                proptest::strategy::Just(b' '),
                proptest::strategy::Just(b'='),
                proptest::strategy::Just(b'"'),
                proptest::strategy::Just(b'\\'),
                proptest::strategy::Just(b'a'),
                proptest::strategy::Just(0xc3u8),
                proptest::strategy::Just(0xa9u8),
                proptest::strategy::Just(0x0au8),
            ],
            0..40,
        )
    ) {
        let (fast, fast_any, parts, parts_any) = sdata_both_ways(&raw);
        proptest::prop_assert_eq!((fast, fast_any), (parts, parts_any));
    }

    #[test]
    fn well_formed_sdata_takes_the_shortcut_and_matches(
        elements in proptest::collection::vec(
            (
                "[a-z@0-9.]{1,8}",
                proptest::collection::vec(("[a-z]{1,6}", "([a-z é\\[]|\\\\[\\\\\"\\]])*"), 0..4),
            ),
            1..4,
        )
    ) {
        let mut raw = String::new();
        for (id, params) in &elements {
            raw.push('[');
            raw.push_str(id);
            for (name, value) in params {
                raw.push_str(&format!(" {name}=\"{value}\""));
            }
            raw.push(']');
        }
        proptest::prop_assert!(sd_is_canonical(raw.as_bytes()), "{}", raw);
        let (fast, fast_any, parts, parts_any) = sdata_both_ways(raw.as_bytes());
        proptest::prop_assert_eq!((fast, fast_any), (parts, parts_any));
    }
}
