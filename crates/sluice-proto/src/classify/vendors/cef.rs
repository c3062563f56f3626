//! CEF (SC4S `conflib/syslog/app-syslog-cef.conf`, `pylib/parser_cef.py`): generic CEF
//! with SC4S's vendor/product mapping, then the `cef` topic for vendor specifics (in their
//! own files: `Topic::Sub("cef")`).
//!
//! * Matched by PROGRAM `CEF...` (syslog-ng splits `CEF:0|...` into PROGRAM `CEF` and
//!   MESSAGE `0|...`) or by `CEF:0` anywhere in the message. A message starting `CEF:0`
//!   loses its PROGRAM; `<preamble> ... CEF:0...` makes the preamble HOST and the CEF part
//!   MESSAGE.
//! * The header is split on `|` into version, device_vendor, device_product,
//!   device_version, device_event_class, name, severity and the extension (the rest); fewer
//!   than eight parts is invalid and the message goes on to the next parser (SC4S drops
//!   it), unless `SC4S_DISABLE_DROP_INVALID_CEF=yes` ([`VendorOptions::lenient_cef`]): then
//!   it is CEF with the fields it has.
//!
//! [`VendorOptions::lenient_cef`]: crate::classify::VendorOptions::lenient_cef
//! * sourcetype `cef`, index `main`, vendor/product/class = device vendor/product/event
//!   class (so `splunk_metadata.csv` keys are `<device_vendor>_<device_product>`),
//!   template `t_hdr_msg`.
//! * Time: `rt`, else `end` (epoch seconds, or `Mmm dd [yyyy] hh:mm:ss [zone]`), unless one
//!   of `start`/`end`/`rt` starts with 12 digits (SC4S ignores such misused fields).
//! * `dvchost`, when set, is HOST.

use crate::classify::kv;
use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::Value;
use crate::classify::vtime;

use memchr::memmem;
use std::sync::LazyLock;

pub static VENDOR: Vendor = Vendor {
    name: "cef",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-cef-pgm",
            topic: Topic::Pgm,
            order: "syslog/app-syslog-cef.conf",
            when: When::ProgramPrefix(&["CEF"]),
            parse: cef,
        },
        App {
            name: "app-syslog-cef",
            topic: Topic::Syslog,
            order: "syslog/app-syslog-cef.conf",
            when: When::Token(&["CEF:0"]),
            parse: cef,
        },
    ],
};

static KEYS: &[Key] = &[
    // The second r_set_splunk_dest_default: index back to main, sourcetype kept (cef).
    Key::new("", "", "cef", "main").template(crate::classify::Template::HdrMsg),
];

/// The parsed CEF header, as the `cef` topic's applications read it from `out.nv`.
pub const NV_VENDOR: &str = "device_vendor";
pub const NV_PRODUCT: &str = "device_product";
pub const NV_VERSION: &str = "device_version";
pub const NV_CLASS: &str = "device_event_class";
pub const NV_NAME: &str = "name";
pub const NV_SEVERITY: &str = "severity";
pub const NV_EXT: &str = "ext";

/// `CEF:0`, searched on every message the token scan sends here.
static CEF0: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(b"CEF:0"));

fn cef<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let body = input.body;
    let pgm = input.program.is_some_and(|p| p.starts_with(b"CEF"));
    // Where the first `CEF:0` is, when it had to be searched for.
    let first = match pgm {
        true => 0,
        false => match CEF0.find(body) {
            Some(at) => at,
            None => return false,
        },
    };
    let mut text = body;
    if body.starts_with(b"CEF:0") {
        out.program = Some(None);
        out.pid = Some(None);
    } else if let Some((preamble, cef_part)) = preamble(body, first) {
        out.host(preamble);
        out.message(cef_part);
        text = cef_part;
    }
    let mut parts = text.splitn(8, |&b| b == b'|');
    let fields: [&'m [u8]; 8] = match std::array::from_fn(|_| parts.next()) {
        [
            Some(a),
            Some(b),
            Some(c),
            Some(d),
            Some(e),
            Some(f),
            Some(g),
            Some(h),
        ] => [a, b, c, d, e, f, g, h],
        // SC4S_DISABLE_DROP_INVALID_CEF: the csv-parser without drop-invalid keeps the
        // columns it found and leaves the rest empty.
        short if input.options.lenient_cef => short.map(Option::unwrap_or_default),
        _ => return false,
    };
    let [
        _,
        dev_vendor,
        dev_product,
        dev_version,
        dev_class,
        name,
        severity,
        ext,
    ] = fields;
    out.key(&KEYS[0]);
    out.vendor = Some(Value::Bytes(dev_vendor));
    out.product = Some(Value::Bytes(dev_product));
    if !dev_class.is_empty() {
        out.class = Some(Value::Bytes(dev_class));
    }
    for (n, v) in [
        (NV_VENDOR, dev_vendor),
        (NV_PRODUCT, dev_product),
        (NV_VERSION, dev_version),
        (NV_CLASS, dev_class),
        (NV_NAME, name),
        (NV_SEVERITY, severity),
        (NV_EXT, ext),
    ] {
        out.nv.set(n, v);
    }
    // One pass over the extension for the four keys read here.
    let (mut rt, mut end, mut start, mut dvchost) = (None, None, None, None);
    for (k, v) in ext_pairs(ext) {
        let slot = match k {
            b"rt" => &mut rt,
            b"end" => &mut end,
            b"start" => &mut start,
            b"dvchost" => &mut dvchost,
            _ => continue,
        };
        if slot.is_none() {
            *slot = Some(v);
        }
    }
    let twelve = |v: Option<&[u8]>| {
        v.is_some_and(|v| v.len() >= 12 && v[..12].iter().all(u8::is_ascii_digit))
    };
    if !(twelve(start) || twelve(end) || twelve(rt)) {
        let stamp = rt
            .filter(|v| !v.is_empty())
            .or(end.filter(|v| !v.is_empty()))
            .and_then(|v| parse_cef_time(v, input));
        if let Some(ts) = stamp {
            out.time(ts);
        }
    }
    if let Some(h) = dvchost.filter(|h: &&[u8]| !h.is_empty()) {
        out.host(h);
    }
    input.topic("cef", out);
    true
}

/// `^(?<preamble>(?!-)[a-zA-Z-\/0-9\.]+).*(?<message>CEF:0.*)`: the last `CEF:0`. No
/// `CEF:0` starts before `first`.
fn preamble(body: &[u8], first: usize) -> Option<(&[u8], &[u8])> {
    let n = body
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'/' | b'.'))
        .count();
    if n == 0 || body[0] == b'-' {
        return None;
    }
    // Forward (vectorised) to the last one: a reverse search cost more on long events.
    let from = n.max(first);
    let at = CEF0.find_iter(&body[from..]).last()? + from;
    Some((&body[..n], &body[at..]))
}

/// SC4S's formats for `rt`/`end`, in its order.
const CEF_TIME_FORMATS: [&str; 8] = [
    "%s.%f",
    "%s",
    "%b %d %T",
    "%b %d %T UTC",
    "%b %d %T %Z",
    "%b %d %Y %T",
    "%b %d %Y %T UTC",
    "%b %d %Y %T %Z",
];

fn parse_cef_time(v: &[u8], input: &Input<'_, '_>) -> Option<crate::message::Timestamp> {
    vtime::strptime_any(cef_time_formats(v), v, input.zone, input.now_unix_secs)
}

/// The formats of [`CEF_TIME_FORMATS`] that can parse `v`, in the same order. The stamps
/// with a month name differ by their digit runs: without a year every run has at most two
/// digits (`%d`, `%T`), with one `%Y` takes exactly four. Skipping the formats that cannot
/// match saves their attempts (each reads the month name again).
fn cef_time_formats(v: &[u8]) -> &'static [&'static str] {
    if v.first().is_some_and(u8::is_ascii_digit) {
        // Only `%s` can start with a digit.
        return &CEF_TIME_FORMATS[..2];
    }
    let mut longest = 0;
    let mut run = 0;
    for b in v {
        run = if b.is_ascii_digit() { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    match longest {
        0..=2 => &CEF_TIME_FORMATS[2..5],
        3 => &[],
        _ => &CEF_TIME_FORMATS[5..],
    }
}

/// The value of `key` in a CEF extension, as SC4S's `cef_kv` reads it: pairs
/// `key=value` where a key is a run without spaces or `=`, and a value runs to the space
/// before the next key (so values may contain spaces); `\=` is an escaped `=`.
pub fn ext_get<'a>(ext: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    ext_pairs(ext).find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// Every `(key, value)` of a CEF extension, in order (see [`ext_get`]).
pub fn ext_pairs(ext: &[u8]) -> ExtPairs<'_> {
    ExtPairs {
        ext,
        next: next_key(ext, 0),
    }
}

/// The iterator of [`ext_pairs`]: one forward pass, `memchr` from one `=` to the next.
#[derive(Clone, Debug)]
pub struct ExtPairs<'a> {
    ext: &'a [u8],
    /// The next key's `(start, end)`; its `=` is at `end`.
    next: Option<(usize, usize)>,
}

/// The next key at or after `from`: the run before an unescaped `=` back to the last space
/// or `=` (an empty run is no key: its `=` belongs to the value before).
fn next_key(ext: &[u8], mut from: usize) -> Option<(usize, usize)> {
    loop {
        let i = from + kv::find_byte(ext.get(from..)?, b'=')?;
        from = i + 1;
        if i > 0 && ext[i - 1] == b'\\' {
            continue;
        }
        // Bounded by the previous `=`, so the backward walks add up to one pass.
        let mut start = i;
        while start > 0 && !(ext[start - 1].is_ascii_whitespace() || ext[start - 1] == b'=') {
            start -= 1;
        }
        if start < i {
            return Some((start, i));
        }
    }
}

impl<'a> Iterator for ExtPairs<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let ext = self.ext;
        let (ks, ke) = self.next?;
        self.next = next_key(ext, ke + 1);
        // A value runs to the space before the next key.
        let vend = match self.next {
            Some((ns, _)) => ns,
            None => ext.len(),
        };
        let value = &ext[ke + 1..vend.max(ke + 1)];
        Some((&ext[ks..ke], trim_end_ws(value)))
    }
}

/// Without trailing ASCII whitespace as `u8::is_ascii_whitespace` sees it (no vertical tab).
fn trim_end_ws(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    while end > 0 && s[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    &s[..end]
}

/// `match("<needle>" value(".metadata.cef.<field>"))`: SC4S's unanchored match, for the
/// literal needles the `cef` applications use.
pub fn nv_contains(out: &Out<'_>, field: &str, needle: &[u8]) -> bool {
    // Header fields are short: a plain search costs less than building a searcher.
    out.nv.get(field).is_some_and(|v| match v.len() {
        0..64 => needle.is_empty() || v.windows(needle.len()).any(|w| w == needle),
        _ => memmem::find(v, needle).is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::testutil::classify_line;

    #[test]
    fn extension_pairs() {
        let ext = b"act=block dst=1.1.1.1 cs1=Suspicious File Access - 1 cs1Label=Policy rt=Mar 31 02:08:27 e=";
        let got: Vec<(&[u8], &[u8])> = ext_pairs(ext).collect();
        assert_eq!(got[0], (&b"act"[..], &b"block"[..]));
        assert_eq!(got[2], (&b"cs1"[..], &b"Suspicious File Access - 1"[..]));
        assert_eq!(got[4], (&b"rt"[..], &b"Mar 31 02:08:27"[..]));
        assert_eq!(ext_get(ext, b"e"), Some(&b""[..]));
        assert_eq!(ext_pairs(b"").count(), 0);
        assert_eq!(ext_pairs(b"===").count(), 0);
    }

    /// The scan this file used before the forward one: every unescaped `=`, a key back to
    /// the last space or `=`, a value to the last non-space before the next key.
    fn reference_pairs(ext: &[u8]) -> Vec<(&[u8], &[u8])> {
        let eqs =
            (0..ext.len()).filter(move |&i| ext[i] == b'=' && (i == 0 || ext[i - 1] != b'\\'));
        let keys: Vec<(usize, usize)> = eqs
            .filter_map(move |i| {
                let start = ext[..i]
                    .iter()
                    .rposition(|b| b.is_ascii_whitespace() || *b == b'=')
                    .map_or(0, |p| p + 1);
                (start < i).then_some((start, i))
            })
            .collect();
        let mut out = Vec::new();
        for (n, &(ks, ke)) in keys.iter().enumerate() {
            let vend = match keys.get(n + 1) {
                Some(&(ns, _)) => ext[..ns]
                    .iter()
                    .rposition(|b| !b.is_ascii_whitespace())
                    .map_or(ke + 1, |p| (p + 1).max(ke + 1)),
                None => ext.len(),
            };
            let value = ext.get(ke + 1..vend).unwrap_or_default();
            let value = value
                .iter()
                .rposition(|b| !b.is_ascii_whitespace())
                .map_or(&value[..0], |p| &value[..=p]);
            out.push((&ext[ks..ke], value));
        }
        out
    }

    #[test]
    fn cef_time_formats_keep_every_format_that_parses() {
        let zone = crate::time::Zone::utc();
        let now = 1_713_139_200;
        for v in [
            &b"1712358817.566"[..],
            b"1712358817",
            b"Apr 11 14:53:12",
            b"Apr 11 14:53:12 UTC",
            b"Apr 11 14:53:12 CEST",
            b"Apr 11 2024 14:53:12",
            b"Apr 11 2024 14:53:12 UTC",
            b"Apr 11 2024 14:53:12 GMT",
            b"April  1 4:5:6",
            b"Apr 1 2024 4:53:12 UTC",
            b"Apr 11 202 14:53:12",
            b"Apr 11 20245 14:53:12",
            b"Apr 11 14:53:123",
            b"",
            b"x",
            b"12",
        ] {
            let all = vtime::strptime_any(&CEF_TIME_FORMATS, v, &zone, now);
            let some = vtime::strptime_any(cef_time_formats(v), v, &zone, now);
            assert_eq!(some, all, "{:?}", String::from_utf8_lossy(v));
            for f in CEF_TIME_FORMATS {
                if vtime::strptime(f, v, &zone, now).is_some() {
                    assert!(cef_time_formats(v).contains(&f), "{f} {v:?}");
                }
            }
        }
        assert_eq!(cef_time_formats(b"Apr 11 2024 14:53:12 UTC").len(), 3);
    }

    #[test]
    fn nv_contains_is_a_substring_test() {
        let long = [b'x'; 80];
        let mut out = Out::default();
        out.nv.set(NV_VENDOR, b"Trend Micro");
        out.nv.set(NV_PRODUCT, &long);
        assert!(nv_contains(&out, NV_VENDOR, b"Trend Micro"));
        assert!(nv_contains(&out, NV_VENDOR, b"d M"));
        assert!(nv_contains(&out, NV_VENDOR, b""));
        assert!(!nv_contains(&out, NV_VENDOR, b"Trend Micro Inc"));
        assert!(!nv_contains(&out, NV_VENDOR, b"micro"));
        assert!(nv_contains(&out, NV_PRODUCT, b"xxx"));
        assert!(!nv_contains(&out, NV_PRODUCT, b"xy"));
        assert!(!nv_contains(&out, NV_CLASS, b""));
    }

    #[test]
    fn preamble_takes_the_last_cef() {
        for (body, first) in [
            (&b"h-1 junk CEF:0|a|CEF:0|b"[..], 9),
            (b"hCEF:0x CEF:0|a", 1),
            (b"h.x/y CEF:0", 6),
            (b"-h CEF:0|a", 3),
            (b"CEF:0|a", 0),
            (b"h CEF:|a", 0),
        ] {
            let n = body
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'/' | b'.'))
                .count();
            let want = (n > 0 && body[0] != b'-')
                .then(|| memchr::memmem::rfind(&body[n..], b"CEF:0").map(|at| at + n))
                .flatten()
                .map(|at| (&body[..n], &body[at..]));
            assert_eq!(
                preamble(body, first),
                want,
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
        assert_eq!(
            preamble(b"h-1 junk CEF:0|a|CEF:0|b", 9),
            Some((&b"h-1"[..], &b"CEF:0|b"[..]))
        );
    }

    #[test]
    fn extension_edge_cases() {
        for ext in [
            &b"a=1 b=2"[..],
            b"=a=1",
            b"a==1 b= 2  ",
            b"a\\=b=c d=e\\= f",
            b"k=v\t\x0bq=r",
            b"x = y z=",
            b"  lead=1\r\n",
            b"a=b=c=d",
            b"\\=x=1",
        ] {
            let got: Vec<_> = ext_pairs(ext).collect();
            assert_eq!(
                got,
                reference_pairs(ext),
                "{:?}",
                String::from_utf8_lossy(ext)
            );
        }
        assert_eq!(
            ext_pairs(b"a\\=b=c d=e").collect::<Vec<_>>(),
            vec![(&b"b"[..], &b"c"[..]), (b"d", b"e")]
        );
    }

    proptest::proptest! {
        #[test]
        fn extension_pairs_match_the_reference(ext in proptest::collection::vec(
            proptest::sample::select(&b"ab= \\\t\x0b|"[..]), 0..48)) {
            let got: Vec<_> = ext_pairs(&ext).collect();
            proptest::prop_assert_eq!(got, reference_pairs(&ext));
        }
    }

    #[test]
    fn short_header_is_cef_only_when_lenient() {
        let line = "<134>Mar 31 02:08:27 h1 CEF:0|Acme|Box|1.0";
        assert_eq!(classify_line(line).sourcetype, "nix:syslog");
        let lenient = crate::classify::testutil::classifier_with(crate::classify::VendorOptions {
            lenient_cef: true,
            ..Default::default()
        });
        let c = crate::classify::testutil::classify_line_with(lenient, line);
        assert_eq!(c.sourcetype, "cef");
        assert_eq!(
            (c.vendor, c.product),
            (Value::Bytes(b"Acme"), Value::Bytes(b"Box"))
        );
    }

    #[test]
    fn generic_cef() {
        let c = classify_line(
            "<134>Mar 31 02:08:27 h1 CEF:0|Acme|Box|1.0|100|Thing|5|src=1.2.3.4 rt=1712358817.566 dvchost=box-7",
        );
        assert_eq!(c.sourcetype, "cef");
        assert_eq!(c.index, "main");
        assert_eq!(
            (c.vendor, c.product),
            (Value::Bytes(b"Acme"), Value::Bytes(b"Box"))
        );
        assert_eq!(c.class, Some(Value::Bytes(b"100")));
        assert_eq!(
            c.host,
            crate::classify::HostEdit::Set(Value::Bytes(b"box-7"))
        );
        assert_eq!(
            c.time_micros(
                &crate::parse::parse(
                    b"<1>x",
                    &crate::parse::ParseOptions {
                        now_unix_secs: 0,
                        zone: &crate::time::Zone::utc()
                    }
                ),
                0
            ),
            1_712_358_817_566_000
        );
        // Not CEF enough: falls through to nix:syslog.
        let c = classify_line("<134>Mar 31 02:08:27 h1 prog: CEF:0|Acme|Box");
        assert_eq!(c.sourcetype, "nix:syslog");
        // Program before CEF: unset, the event starts at CEF.
        let c = classify_line("<111>Mar 31 08:39:09 h named[42]: CEF:0|A|B|1|C|N|7|x=1");
        assert_eq!(c.edit.program, Some(None));
        assert_eq!(c.sourcetype, "cef");
    }
}
