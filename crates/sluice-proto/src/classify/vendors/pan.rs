//! Palo Alto Networks PAN-OS (SC4S `addons/palo-alto/app-syslog-pan_panos.conf`): CSV
//! bodies `1,<receive_time>,<serial>,<TYPE>,...`, either without PROGRAM or from the
//! `logforwarder` program. The log type picks the sourcetype/index; the CSV's `dvc_name`
//! becomes HOST and its `high_res_time` (else `generated_time`) the event time.

use std::sync::LazyLock;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;
use crate::classify::vtime;

pub static VENDOR: Vendor = Vendor {
    name: "pan",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-pan_panos-pgm",
            topic: Topic::Pgm,
            order: "palo-alto/app-syslog-pan_panos.conf",
            when: When::Program(&["logforwarder"]),
            parse: panos_pgm,
        },
        App {
            name: "app-syslog-pan_panos",
            topic: Topic::Syslog,
            order: "palo-alto/app-syslog-pan_panos.conf",
            // SC4S's `message('1,' type(string) flags(prefix))`.
            when: When::BodyPrefix(&["1,"]),
            parse: panos,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("pan", "panos", "pan:log", "netops").template(Template::MsgOnly),
    Key::update("pan:threat", "netproxy").class("threat"),
    Key::update("pan:traffic", "netfw").class("traffic"),
    Key::update("pan:system", "netops").class("system"),
    Key::update("pan:config", "netops").class("config"),
    Key::update("pan:hipmatch", "epintel").class("hipmatch"),
    Key::update("pan:correlation", "").class("correlation"),
    Key::update("pan:userid", "netauth").class("userid"),
    Key::update("pan:globalprotect", "netfw").class("globalprotect"),
    Key::update("pan:decryption", "").class("decryption"),
    Key::update("pan:auth", "netauth").class("authentication"),
];

/// The CSV layouts SC4S tries for one log type (the longest first; a layout applies when
/// the message has at least that many columns): column count and the columns of
/// `generated_time`, `high_res_time` and `dvc_name`.
#[derive(Clone, Copy)]
struct Layout {
    columns: usize,
    generated: Option<usize>,
    high_res: Option<usize>,
    dvc_name: Option<usize>,
}

const fn l(
    columns: usize,
    generated: Option<usize>,
    high_res: Option<usize>,
    dvc: Option<usize>,
) -> Layout {
    Layout {
        columns,
        generated,
        high_res,
        dvc_name: dvc,
    }
}

/// In SC4S's order: the first type found (as `,TYPE,` anywhere in MESSAGE) wins.
static TYPES: &[(&[u8], usize, &[Layout])] = &[
    (
        b",THREAT,",
        1,
        &[
            l(121, Some(6), Some(107), Some(59)),
            l(60, Some(6), None, Some(59)),
        ],
    ),
    (
        b",TRAFFIC,",
        2,
        &[
            l(115, Some(6), Some(102), Some(52)),
            l(53, Some(6), None, Some(52)),
        ],
    ),
    (
        b",SYSTEM,",
        3,
        &[
            l(26, Some(6), Some(25), Some(22)),
            l(23, Some(6), None, Some(22)),
        ],
    ),
    (
        b",CONFIG,",
        4,
        &[
            l(26, Some(6), Some(25), Some(21)),
            l(24, Some(6), None, Some(23)),
        ],
    ),
    (
        b",HIPMATCH,",
        5,
        &[
            l(31, Some(6), Some(30), Some(24)),
            l(25, Some(6), None, Some(24)),
        ],
    ),
    (b",CORRELATION,", 6, &[l(22, Some(6), None, Some(17))]),
    (
        b",USERID,",
        7,
        &[
            l(34, Some(6), Some(33), Some(25)),
            l(25, Some(6), None, Some(24)),
        ],
    ),
    // SC4S names the time column `time_generated` here, so no time is taken from it.
    (b",GLOBALPROTECT,", 8, &[l(49, None, None, Some(47))]),
    (
        b",DECRYPTION,",
        9,
        &[l(91, Some(6), Some(72), None), l(91, Some(6), None, None)],
    ),
    (b",AUTH,", 10, &[l(47, Some(6), None, Some(29))]),
];

/// The columns of a CSV line (`,` separated, `"..."` quoting with `""` inside), up to
/// `MAX` of them; quoted values are returned without their outer quotes.
const MAX: usize = 128;

fn split_csv<'a>(line: &'a [u8], cols: &mut [&'a [u8]; MAX]) -> usize {
    let mut n = 0;
    let mut i = 0;
    loop {
        if n == MAX {
            // Enough for every layout; the count saturates.
            return n;
        }
        if line.get(i) == Some(&b'"') {
            let start = i + 1;
            let mut j = start;
            while j < line.len() {
                if line[j] == b'"' {
                    if line.get(j + 1) == Some(&b'"') {
                        j += 2;
                        continue;
                    }
                    break;
                }
                j += 1;
            }
            cols[n] = &line[start..j.min(line.len())];
            n += 1;
            // Skip to the next separator after the closing quote.
            i = match memchr::memchr(b',', line.get(j..).unwrap_or(&[])) {
                Some(k) => j + k + 1,
                None => return n,
            };
        } else {
            let rest = line.get(i..).unwrap_or(&[]);
            match memchr::memchr(b',', rest) {
                Some(k) => {
                    cols[n] = &rest[..k];
                    n += 1;
                    i += k + 1;
                }
                None => {
                    cols[n] = rest;
                    return n + 1;
                }
            }
        }
    }
}

/// SC4S's `^1,[^,]+,[^,]+,[A-Z]+,`.
/// The first entry of [`TYPES`] (in its order) whose `,TYPE,` occurs in `m`: one SIMD pass
/// over the message instead of a search per type.
fn first_type(m: &[u8]) -> Option<usize> {
    static SEARCH: LazyLock<Option<aho_corasick::packed::Searcher>> = LazyLock::new(|| {
        aho_corasick::packed::Config::new()
            .match_kind(aho_corasick::packed::MatchKind::LeftmostFirst)
            .only_teddy(true)
            .builder()
            .extend(TYPES.iter().map(|(t, _, _)| t))
            .build()
    });
    let Some(search) = SEARCH.as_ref() else {
        return TYPES
            .iter()
            .position(|(t, _, _)| memchr::memmem::find(m, t).is_some());
    };
    let mut best: Option<usize> = None;
    let mut at = 0;
    while at < m.len() {
        let Some(hit) = search.find_in(m, aho_corasick::Span::from(at..m.len())) else {
            break;
        };
        let i = hit.pattern().as_usize();
        best = Some(best.map_or(i, |b| b.min(i)));
        if i == 0 {
            break;
        }
        at = hit.start() + 1;
    }
    best
}

fn looks_like_panos(m: &[u8]) -> bool {
    let Some(rest) = m.strip_prefix(b"1,") else {
        return false;
    };
    let mut parts = rest.splitn(4, |&b| b == b',');
    let (Some(a), Some(b), Some(t), Some(_)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    !a.is_empty() && !b.is_empty() && !t.is_empty() && t.iter().all(u8::is_ascii_uppercase)
}

fn panos<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program.is_some_and(|p| !p.is_empty()) || !looks_like_panos(input.body) {
        return false;
    }
    parse(input, out);
    true
}

fn panos_pgm<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"logforwarder") {
        return false;
    }
    parse(input, out);
    if let Some(h) = input.host {
        out.field("pan_forwarder", Value::Bytes(h));
    }
    true
}

fn parse<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) {
    out.key(&KEYS[0]);
    let m = input.body;
    let Some(&(_, key, layouts)) = first_type(m).and_then(|i| TYPES.get(i)) else {
        return;
    };
    out.key(&KEYS[key]);
    let mut cols: [&'m [u8]; MAX] = [&[]; MAX];
    let n = split_csv(m, &mut cols);
    let Some(layout) = layouts.iter().find(|l| n >= l.columns) else {
        // No layout fits: SC4S's csv-parser fails and leaves HOST and the time as they were.
        return;
    };
    let col = |i: Option<usize>| i.map(|i| cols[i]).filter(|v| !v.is_empty());
    let ts = col(layout.high_res)
        .and_then(|v| vtime::strptime("%Y-%m-%dT%H:%M:%S.%f%z", v, input.zone, input.now_unix_secs))
        .or_else(|| {
            col(layout.generated).and_then(|v| {
                vtime::strptime_any(
                    &[
                        "%Y/%m/%d %H:%M:%S.%f",
                        "%Y/%m/%d %H:%M:%S",
                        "%Y-%m-%dT%H:%M:%S.%f%z",
                    ],
                    v,
                    input.zone,
                    input.now_unix_secs,
                )
            })
        });
    if let Some(ts) = ts {
        out.time(ts);
    }
    if let Some(h) = col(layout.dvc_name) {
        out.host(h);
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::registry::HostEdit;
    use crate::classify::testutil::classify_line;
    use crate::classify::value::Value;

    #[test]
    fn csv_split() {
        let mut cols = [&b""[..]; super::MAX];
        let n = super::split_csv(b"a,\"b,\"\"c\",,d", &mut cols);
        assert_eq!(n, 4);
        assert_eq!(cols[1], b"b,\"\"c");
        assert_eq!(cols[2], b"");
        assert_eq!(cols[3], b"d");
        assert!(super::looks_like_panos(
            b"1,2024/04/07 01:16:25,0072,TRAFFIC,end"
        ));
        assert!(!super::looks_like_panos(
            b"1,2024/04/07 01:16:25,0072,traffic,end"
        ));
        assert!(!super::looks_like_panos(b"1,,0072,TRAFFIC,end"));
    }

    #[test]
    fn system_long_layout_takes_host_and_high_res_time() {
        let c = classify_line(
            "<111> Apr 07 15:22:56 hdr 1,2024/04/07 15:22:56,0007021,SYSTEM,general,2049,2024/04/07 15:22:56,,general,,0,0,general,informational,\"User admin logged in\",1,0x0,0,0,0,0,,pa-fw-09,0,0,2024-04-07T11:07:56.859-04:00,x,y,z",
        );
        assert_eq!(c.sourcetype, "pan:system");
        assert_eq!(c.index, "netops");
        assert_eq!(c.vendor, "pan");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"pa-fw-09")));
        match c.time {
            crate::classify::registry::TimeEdit::Stamp(t) => {
                assert_eq!((t.unix_secs, t.micros), (1_712_502_476, 859_000));
            }
            other => panic!("time not set: {other:?}"),
        }
    }

    #[test]
    fn unknown_type_is_pan_log() {
        let c = classify_line("<111> Apr 07 15:22:56 hdr 1,2024/04/07 15:22:56,0007021,IPTAG,x,1");
        assert_eq!(c.sourcetype, "pan:log");
        assert_eq!(c.index, "netops");
    }
}
