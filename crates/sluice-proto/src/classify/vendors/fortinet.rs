//! Fortinet FortiGate/FortiOS and FortiWeb/FortiMail (SC4S
//! `addons/fortinet/app-syslog-fortigate_fortios.conf`, `app-syslog-fortigate_fortiweb.conf`):
//! space-separated `key=value` bodies; HOST from `devname`, the time from `eventtime`
//! (epoch with a fraction) or `date` + `time` (+ `tz`), the sourcetype from `type`.

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vtime;
use crate::message::Timestamp;

use super::util::contains;
use memchr::memmem;
use std::sync::LazyLock;

pub static VENDOR: Vendor = Vendor {
    name: "fortinet",
    keys: KEYS,
    apps: &[
        App {
            name: "fortinet_fortios",
            topic: Topic::Syslog,
            order: "fortinet/app-syslog-fortigate_fortios.conf",
            when: When::Token(&["devid="]),
            parse: fortios,
        },
        App {
            name: "app-syslog-fortigate_fortiweb",
            topic: Topic::Syslog,
            order: "fortinet/app-syslog-fortigate_fortiweb.conf",
            when: When::Token(&["device_id="]),
            parse: fortiweb,
        },
    ],
};

const FGT_LOG: usize = 0;
const FGT_NETOPS: usize = 1;
const FGT_NETFW: usize = 2;
const FGT_OTHER: usize = 3;
const FWB_LOG: usize = 4;
const FWB_TRAFFIC: usize = 5;
const FWB_ATTACK: usize = 6;
const FWB_EVENT: usize = 7;
const FWB_OTHER: usize = 8;
const FML_LOG: usize = 9;
const FML_TYPE: usize = 10;

// SC4S writes MESSAGE := t_hdr_msg, unsets PROGRAM and renders t_msg_only: the event text
// is the program header followed by the body, which `t_hdr_msg` renders directly.
static KEYS: &[Key] = &[
    Key::new("fortinet", "fortios", "fgt_log", "netops")
        .class("log")
        .template(Template::HdrMsg),
    Key::update("fgt_log", "netops"),
    Key::update("fgt_log", "netfw"),
    Key::update("fgt_log", ""),
    Key::new("fortinet", "fortiweb", "fwb_log", "netops").template(Template::MsgOnly),
    Key::update("fwb_traffic", "netfw").class("traffic"),
    Key::update("fwb_attack", "netids").class("attack"),
    Key::update("fwb_event", "netops").class("event"),
    Key::update("fwb_log", "netops").class("log"),
    Key::new("fortinet", "fortimail", "fml:log", "email")
        .class("log")
        .template(Template::MsgOnly),
    Key::update("fml:log", "email"),
];

/// `eventtime`: ten digits of seconds, then 3 to 6 digits of fraction (longer values, e.g.
/// nanoseconds, keep only those).
fn eventtime(v: &[u8]) -> Option<Timestamp> {
    if v.len() < 10 || !v[..10].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs: i64 = std::str::from_utf8(&v[..10]).ok()?.parse().ok()?;
    let rest = v[10..].strip_prefix(b".").unwrap_or(&v[10..]);
    let n = rest
        .iter()
        .take(6)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let micros = if n >= 3 {
        let digits = rest[..n].iter().map(|&d| u32::from(d - b'0'));
        digits
            .chain(std::iter::repeat(0))
            .take(6)
            .fold(0u32, |m, d| m * 10 + d)
    } else if rest.is_empty() {
        0
    } else {
        return None;
    };
    Some(Timestamp {
        unix_secs: secs,
        micros,
        offset_secs: 0,
    })
}

/// `date` `sep` `time` `tz` parsed with the first matching format.
fn date_time(
    input: &Input<'_, '_>,
    date: &[u8],
    sep: u8,
    time: &[u8],
    tz: &[u8],
    formats: &[&str],
) -> Option<Timestamp> {
    let mut buf = [0u8; 96];
    let len = date.len() + 1 + time.len() + tz.len();
    if len > buf.len() {
        return None;
    }
    buf[..date.len()].copy_from_slice(date);
    buf[date.len()] = sep;
    buf[date.len() + 1..date.len() + 1 + time.len()].copy_from_slice(time);
    buf[len - tz.len()..len].copy_from_slice(tz);
    vtime::strptime_any(formats, &buf[..len], input.zone, input.now_unix_secs)
}

struct Fields<'m> {
    eventtime: Option<&'m [u8]>,
    date: Option<&'m [u8]>,
    time: Option<&'m [u8]>,
    tz: Option<&'m [u8]>,
    devname: Option<&'m [u8]>,
    devid: Option<&'m [u8]>,
    kind: Option<&'m [u8]>,
}

fn fields<'m>(body: &'m [u8], id_key: &[u8]) -> Fields<'m> {
    let mut f = Fields {
        eventtime: None,
        date: None,
        time: None,
        tz: None,
        devname: None,
        devid: None,
        kind: None,
    };
    for p in kv::pairs(body, b' ') {
        let slot = match p.key {
            b"eventtime" => &mut f.eventtime,
            b"date" => &mut f.date,
            b"time" => &mut f.time,
            b"tz" => &mut f.tz,
            b"devname" => &mut f.devname,
            b"type" => &mut f.kind,
            k if k == id_key => &mut f.devid,
            _ => continue,
        };
        // syslog-ng's kv-parser keeps the last value of a repeated key.
        *slot = Some(p.value);
    }
    f
}

fn nonempty(v: Option<&[u8]>) -> bool {
    v.is_some_and(|v| !v.is_empty())
}

/// The device type of a Fortinet serial (`FGT60D...` → `G`, `FE...` → `E`, `F1K...` →
/// `1K`), SC4S's `^F(?<dev_type>[A-Z]|\dK)(?<serial>.+)`. `None` when the serial does not
/// have that shape: SC4S's regexp-parser then fails and the application does not take the
/// message (this is what leaves Sophos XG's `device_id=C4207...` to Sophos).
fn dev_type(serial: &[u8]) -> Option<&[u8]> {
    match serial {
        [b'F', c, _, ..] if c.is_ascii_uppercase() => Some(&serial[1..2]),
        [b'F', d, b'K', _, ..] if d.is_ascii_digit() => Some(&serial[1..3]),
        _ => None,
    }
}

/// The filters' literals, with their searchers built once.
macro_rules! finder {
    ($name:ident, $lit:literal) => {
        static $name: LazyLock<memmem::Finder<'static>> =
            LazyLock::new(|| memmem::Finder::new($lit));
    };
}
finder!(EVENTTYPE, b"eventtype=");
finder!(TIME, b"time=");
finder!(DEVID, b"devid=");
finder!(EVENTTIME, b"eventtime=");
finder!(DATE, b"date=");
finder!(DEVICE_ID, b"device_id=");
finder!(DEVID_KEY, b"devid");
finder!(DEVICE_ID_KEY, b"device_id");

/// Whether a pair `key=F...` (value quoted or not; `key` as the tokenizer trims it) may be
/// in `body`: necessary for [`dev_type`] to take the key's value. Checked before the whole
/// body is tokenized, since Sophos XG sends `device_id=` too.
fn may_have_serial(body: &[u8], key: &LazyLock<memmem::Finder<'static>>) -> bool {
    key.find_iter(body).any(|at| {
        let rest = &body[at + key.needle().len()..];
        let ws = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
        matches!(&rest[ws..], [b'=', b'F', ..] | [b'=', b'"', b'F', ..])
    })
}

fn fortios<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    let has = |t: &LazyLock<memmem::Finder<'static>>| contains(t, input.msg.raw);
    if !((has(&EVENTTYPE) || has(&TIME)) && has(&DEVID)) || !may_have_serial(m, &DEVID_KEY) {
        return false;
    }
    let f = fields(m, b"devid");
    if !(nonempty(f.eventtime) || (nonempty(f.date) && nonempty(f.time)))
        || dev_type(f.devid.unwrap_or_default()).is_none()
    {
        return false;
    }
    out.key(&KEYS[FGT_LOG]);
    if let Some(h) = f.devname {
        out.host(h);
    }
    let ts = match f.eventtime.filter(|v| !v.is_empty()) {
        Some(e) => eventtime(e),
        None => date_time(
            input,
            f.date.unwrap_or_default(),
            b':',
            f.time.unwrap_or_default(),
            f.tz.unwrap_or_default(),
            &["%Y-%m-%d:%H:%M:%S%z", "%Y-%m-%d:%H:%M:%S"],
        ),
    };
    if let Some(ts) = ts {
        out.time(ts);
    }
    let kind = f.kind.unwrap_or_default();
    let key = if kind == b"event" {
        FGT_NETOPS
    } else if [&b"traffic"[..], b"utm", b"anomaly"]
        .iter()
        .any(|t| crate::classify::vendors::util::find(kind, t).is_some())
    {
        FGT_NETFW
    } else {
        FGT_OTHER
    };
    out.key(&KEYS[key]);
    let prefix = input.options.fortinet_sourcetype_prefix.as_bytes();
    if !out.sourcetype_inline(&[prefix, b"_", kind]) && prefix != b"fgt" {
        // Too long to build inline: at least the operator's prefix.
        out.sourcetype_inline(&[prefix, b"_log"]);
    }
    out.class = Some(Value::Bytes(kind));
    true
}

fn fortiweb<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    let has = |t: &LazyLock<memmem::Finder<'static>>| contains(t, input.msg.raw);
    if !((has(&EVENTTIME) || (has(&DATE) && has(&TIME))) && has(&DEVICE_ID))
        || !may_have_serial(m, &DEVICE_ID_KEY)
    {
        return false;
    }
    let f = fields(m, b"device_id");
    let Some(dev) = dev_type(f.devid.unwrap_or_default()) else {
        return false;
    };
    if !(nonempty(f.eventtime) || (nonempty(f.date) && nonempty(f.time))) {
        return false;
    }
    out.key(&KEYS[FWB_LOG]);
    if let Some(h) = f.devname {
        out.host(h);
    }
    let ts = match f.eventtime.filter(|v| !v.is_empty()) {
        Some(e) => eventtime(e),
        None => date_time(
            input,
            f.date.unwrap_or_default(),
            b'T',
            f.time.unwrap_or_default(),
            f.tz.unwrap_or_default(),
            &[
                "%Y-%m-%dT%H:%M:%S%z",
                "%Y-%m-%dT%H:%M:%S.%f%z",
                "%Y-%m-%dT%H:%M:%S",
                "%Y-%m-%dT%H:%M:%S.%f",
            ],
        ),
    };
    if let Some(ts) = ts {
        out.time(ts);
    }
    let kind = f.kind.unwrap_or_default();
    let has_kind = |t: &[u8]| crate::classify::vendors::util::find(kind, t).is_some();
    if dev == b"E" {
        out.key(&KEYS[FML_LOG]);
        if !kind.is_empty() {
            out.key(&KEYS[FML_TYPE]);
            out.sourcetype_inline(&[b"fml:", kind]);
            out.class = Some(Value::Bytes(kind));
        }
    } else if has_kind(b"traffic") {
        out.key(&KEYS[FWB_TRAFFIC]);
    } else if has_kind(b"attack") {
        out.key(&KEYS[FWB_ATTACK]);
    } else if has_kind(b"event") {
        out.key(&KEYS[FWB_EVENT]);
    } else {
        out.key(&KEYS[FWB_OTHER]);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::registry::HostEdit;
    use crate::classify::testutil::classify_line;
    use crate::classify::value::Value;

    #[test]
    fn sourcetype_prefix_is_a_setting() {
        let c = crate::classify::testutil::classifier_with(crate::classify::VendorOptions {
            fortinet_sourcetype_prefix: "fortigate".into(),
            ..Default::default()
        });
        let c = crate::classify::testutil::classify_line_with(
            c,
            "<111> Mar 29 18:40:04 fortigate date=2024-03-29 time=18:40:04 devname=fgt-br-02 devid=FG800C3912801080 logid=0004000017 type=traffic subtype=sniffer",
        );
        assert_eq!(c.sourcetype, "fortigate_traffic");
        assert_eq!(c.index, "netfw");
    }

    #[test]
    fn serial_precheck_keeps_every_serial_dev_type_takes() {
        use super::{DEVICE_ID_KEY, dev_type, fields, may_have_serial};
        for body in [
            &b"date=1 device_id=FV-1KD3 x=1"[..],
            b"device_id=\"FGT60\" x",
            b"a=1 \tdevice_id\t=F1K2",
            b"device_id=C4207 log_type=\"F\"",
            b"device_id=\"C42\" device_id=FE1",
            b"device_id=FE1 device_id=C42",
            b"xdevice_id=FGT1",
            b"device_id= F1K2",
            b"msg=\"device_id=FGT1\" device_id=C4",
        ] {
            let takes = dev_type(fields(body, b"device_id").devid.unwrap_or_default()).is_some();
            assert!(
                !takes || may_have_serial(body, &DEVICE_ID_KEY),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
        assert!(!may_have_serial(
            b"device_id=C4207 device=\"SFW\"",
            &DEVICE_ID_KEY
        ));
    }

    #[test]
    fn fortigate_types() {
        let c = classify_line(
            "<111> Mar 29 18:40:04 fortigate date=2024-03-29 time=18:40:04 devname=fgt-br-02 devid=FG800C3912801080 logid=0004000017 type=traffic subtype=sniffer",
        );
        assert_eq!(c.sourcetype, "fgt_traffic");
        assert_eq!(c.index, "netfw");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"fgt-br-02")));
        assert_eq!(c.vendor, "fortinet");
        assert_eq!(c.product, "fortios");
        let c = classify_line(
            "<111> Mar 29 18:40:04 fortigate date=2024-03-29 time=18:40:04 devname=a devid=FG800C39 type=event subtype=system",
        );
        assert_eq!(c.sourcetype, "fgt_event");
        assert_eq!(c.index, "netops");
        let c = classify_line(
            "<111>Mar 29 18:40:04 fw eventtime=1711737604123456789 devname=b devid=FG800C39 type=dns",
        );
        assert_eq!(c.sourcetype, "fgt_dns");
        assert_eq!(c.index, "netops");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"b")));
    }

    #[test]
    fn fortiweb_and_fortimail() {
        let c = classify_line(
            "<111>Mar 29 18:40:04 fwb date=2024-03-29 time=18:40:04 devname=w1 device_id=FV-1KD3A14800059 log_id=1 type=attack",
        );
        assert_eq!(c.sourcetype, "fwb_attack");
        assert_eq!(c.index, "netids");
        assert_eq!(c.product, "fortiweb");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"w1")));
        let c = classify_line(
            "<111>Mar 29 18:40:04 fml date=2024-03-29 time=18:40:04 devname=m1 device_id=FE-3KE3R17000047 type=statistics",
        );
        assert_eq!(c.sourcetype, "fml:statistics");
        assert_eq!(c.index, "email");
        assert_eq!(c.product, "fortimail");
    }

    #[test]
    fn eventtime_fraction() {
        let t = super::eventtime(b"1711737604123456789").expect("stamp");
        assert_eq!((t.unix_secs, t.micros), (1711737604, 123456));
        assert!(super::eventtime(b"17117").is_none());
        assert_eq!(super::dev_type(b"FGT60D"), Some(&b"G"[..]));
        assert_eq!(super::dev_type(b"F1K2"), Some(&b"1K"[..]));
        assert_eq!(super::dev_type(b"C4207AY8"), None);
        assert_eq!(super::dev_type(b"FG"), None);
    }
}
