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

/// Most columns a layout reads (the count saturates there).
const MAX: usize = 128;

/// The high bit of each byte of `x` that is zero (exact: no false positives from borrows).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// The eight bytes at `at` as a little-endian word, zero past the end.
#[inline]
fn word(hay: &[u8], at: usize) -> u64 {
    if let Some(w) = hay
        .get(at..at + 8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
    {
        return u64::from_le_bytes(w);
    }
    let mut buf = [0u8; 8];
    let rest = hay.get(at..).unwrap_or_default();
    let n = rest.len().min(8);
    buf[..n].copy_from_slice(&rest[..n]);
    u64::from_le_bytes(buf)
}

const COMMAS: u64 = 0x2c2c_2c2c_2c2c_2c2c;
const QUOTES: u64 = 0x2222_2222_2222_2222;

/// The CSV columns of `line` (`,` separated; a column that starts with `"` is read to its
/// closing quote, `""` standing for a quote, without the outer quotes, and whatever follows
/// the closing quote up to the next `,` is dropped). Returns the number of columns, or
/// `want` (at most [`MAX`]) when there are at least that many; `picks` (sorted by column)
/// receive the columns they name that exist.
///
/// Eight bytes per step: a word whose commas all end columns nobody asked for, and that
/// starts no quoted column, only counts its commas (PAN lines have 50-120 columns and the
/// layouts read two or three of them).
fn csv_pick<'a>(line: &'a [u8], want: usize, picks: &mut [(usize, &'a [u8])]) -> usize {
    let want = want.min(MAX);
    if want == 0 {
        return 0;
    }
    let mut next = 0;
    let mut need = picks.first().map_or(usize::MAX, |p| p.0);
    let mut n = 0;
    let mut start = 0;
    let mut at = 0;
    // The first quote at or after `at` (recomputed when passed): quotes are rare, and a
    // column is quoted exactly when it starts there.
    let mut next_quote = memchr::memchr(b'"', line).unwrap_or(usize::MAX);
    loop {
        if next_quote < at {
            next_quote = line
                .get(at..)
                .and_then(|r| memchr::memchr(b'"', r))
                .map_or(usize::MAX, |q| at + q);
        }
        if at == start && next_quote == start {
            let first = start + 1;
            // The closing quote: the first `"` not doubled.
            let mut j = first;
            while let Some(q) = line.get(j..).and_then(|r| memchr::memchr(b'"', r)) {
                j += q;
                if line.get(j + 1) == Some(&b'"') {
                    j += 2;
                    continue;
                }
                break;
            }
            if line.get(j) != Some(&b'"') {
                j = line.len();
            }
            if need == n {
                picks[next].1 = &line[first..j.min(line.len())];
                next += 1;
                need = picks.get(next).map_or(usize::MAX, |p| p.0);
            }
            n += 1;
            // Skip to the next separator after the closing quote.
            let Some(k) = line.get(j..).and_then(|r| memchr::memchr(b',', r)) else {
                return n;
            };
            if n == want {
                return n;
            }
            start = j + k + 1;
            at = start;
            continue;
        }
        if at >= line.len() {
            if need == n {
                picks[next].1 = line.get(start..).unwrap_or_default();
            }
            return n + 1;
        }
        let w = word(line, at);
        let mut commas = zero_bytes(w ^ COMMAS);
        // A comma followed (in this word) by a quote starts a quoted column: stop there.
        // Quotes are rare: the words before the next one skip the test.
        let mut stop = false;
        if next_quote < at + 8 {
            let quoted = (commas << 8) & zero_bytes(w ^ QUOTES);
            if quoted != 0 {
                stop = true;
                let last = 1u64 << (quoted.trailing_zeros() - 8);
                commas &= last | (last - 1);
            }
        }
        // One bit per comma byte summed by a multiply (the baseline x86-64 target has no
        // popcnt instruction).
        let c = ((commas >> 7).wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
        if n + c <= need && n + c < want {
            n += c;
            // Past the last comma, if any (a select, not a branch: half the words have none).
            let past_last = at + (63 - (commas | 1).leading_zeros() as usize) / 8 + 1;
            start = if c > 0 { past_last } else { start };
        } else {
            while commas != 0 {
                let pos = at + (commas.trailing_zeros() / 8) as usize;
                commas &= commas - 1;
                if need == n {
                    picks[next].1 = &line[start..pos];
                    next += 1;
                    need = picks.get(next).map_or(usize::MAX, |p| p.0);
                }
                n += 1;
                start = pos + 1;
                if n == want {
                    return n;
                }
            }
        }
        at = if stop { start } else { at + 8 };
    }
}

/// The first entry of [`TYPES`] (in its order) whose `,TYPE,` occurs in `m`.
///
/// A PAN line names its type in its fourth column, so that entry occurs; only the entries
/// before it can still come first, and one search for them (none for THREAT, the first)
/// settles it. Anything else takes the general search.
fn first_type(m: &[u8]) -> Option<usize> {
    if let Some(k) = fourth_column_type(m) {
        let earlier = &EARLIER[k];
        let found = match earlier {
            Earlier::None => false,
            Earlier::Unknown => true,
            Earlier::One(f) => f.find(m).is_some(),
            Earlier::Many(s) => s.find(m).is_some(),
        };
        if !found {
            return Some(k);
        }
    }
    any_type(m)
}

/// The entry of [`TYPES`] that the fourth `,`-separated column names (`,TYPE,` occurs).
fn fourth_column_type(m: &[u8]) -> Option<usize> {
    let mut at = 0;
    for _ in 0..3 {
        at += memchr::memchr(b',', m.get(at..)?)? + 1;
    }
    let len = memchr::memchr(b',', m.get(at..)?)?;
    let col = &m[at - 1..at + len + 1];
    TYPES.iter().position(|(t, _, _)| *t == col)
}

/// A search for the `,TYPE,` tokens before one entry of [`TYPES`].
enum Earlier {
    None,
    Unknown,
    One(memchr::memmem::Finder<'static>),
    Many(aho_corasick::packed::Searcher),
}

static EARLIER: LazyLock<Vec<Earlier>> = LazyLock::new(|| {
    (0..TYPES.len())
        .map(|k| match k {
            0 => Some(Earlier::None),
            1 => Some(Earlier::One(memchr::memmem::Finder::new(TYPES[0].0))),
            _ => aho_corasick::packed::Config::new()
                .builder()
                .extend(TYPES[..k].iter().map(|(t, _, _)| t))
                .build()
                .map(Earlier::Many),
        })
        // Without a packed searcher (no SIMD), the general search answers.
        .map(|e| e.unwrap_or(Earlier::Unknown))
        .collect()
});

/// The general search: one SIMD pass over the message for every type, keeping the hit
/// that comes first in [`TYPES`].
fn any_type(m: &[u8]) -> Option<usize> {
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
            .position(|(t, _, _)| crate::classify::vendors::util::find(m, t).is_some());
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
    // The columns any layout of the type reads, in order.
    let mut picks: [(usize, &'m [u8]); 8] = [(usize::MAX, &[]); 8];
    let mut np = 0;
    for l in layouts {
        for i in [l.generated, l.high_res, l.dvc_name].into_iter().flatten() {
            if np < picks.len() && !picks[..np].iter().any(|p| p.0 == i) {
                picks[np].0 = i;
                np += 1;
            }
        }
    }
    let picks = &mut picks[..np];
    picks.sort_unstable_by_key(|p| p.0);
    let want = layouts.iter().map(|l| l.columns).max().unwrap_or(0);
    let n = csv_pick(m, want, picks);
    let Some(layout) = layouts.iter().find(|l| n >= l.columns) else {
        // No layout fits: SC4S's csv-parser fails and leaves HOST and the time as they were.
        return;
    };
    let col = |i: Option<usize>| {
        i.and_then(|i| picks.iter().find(|p| p.0 == i))
            .map(|p| p.1)
            .filter(|v| !v.is_empty())
    };
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
        let cols = split(b"a,\"b,\"\"c\",,d", super::MAX);
        assert_eq!(cols.len(), 4);
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

    /// The split as first written (one `memchr` per column), the oracle for `csv_pick`.
    fn reference_split(line: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            if out.len() == super::MAX {
                return out;
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
                out.push(line[start..j.min(line.len())].to_vec());
                i = match memchr::memchr(b',', line.get(j..).unwrap_or(&[])) {
                    Some(k) => j + k + 1,
                    None => return out,
                };
            } else {
                let rest = line.get(i..).unwrap_or(&[]);
                match memchr::memchr(b',', rest) {
                    Some(k) => {
                        out.push(rest[..k].to_vec());
                        i += k + 1;
                    }
                    None => {
                        out.push(rest.to_vec());
                        return out;
                    }
                }
            }
        }
    }

    /// The first `want` columns through `csv_pick`, one pick per column.
    fn split(line: &[u8], want: usize) -> Vec<Vec<u8>> {
        let mut picks: Vec<(usize, &[u8])> = (0..super::MAX).map(|i| (i, &b"?"[..])).collect();
        let n = super::csv_pick(line, want, &mut picks);
        picks[..n].iter().map(|c| c.1.to_vec()).collect()
    }

    #[test]
    fn csv_split_edges() {
        for line in [
            &b""[..],
            b",",
            b"\"",
            b"\"\"",
            b"a,b,c,d,e,f,g,h,i,j,k,l",
            b",,,,,,,,,,,,,,,,,",
            b"abcdefgh,ijklmnop,",
            b"abcdefg,\"h,i\"x,j",
            b"\"abc\"\"def,ghi\",jkl",
            b"\"unterminated,a,b",
        ] {
            assert_eq!(split(line, super::MAX), reference_split(line), "{line:?}");
        }
        let wide = b"c,".repeat(200);
        assert_eq!(split(&wide, super::MAX), reference_split(&wide));
        assert_eq!(split(&wide, super::MAX).len(), super::MAX);
        assert_eq!(split(&wide, 121).len(), 121);
        assert_eq!(split(b"a,b", 121).len(), 2);
    }

    #[test]
    fn type_from_fourth_column() {
        use super::first_type;
        assert_eq!(first_type(b"1,t,s,TRAFFIC,end"), Some(1));
        assert_eq!(first_type(b"1,t,s,THREAT,x,TRAFFIC,"), Some(0));
        // An earlier type anywhere wins over the fourth column's.
        assert_eq!(first_type(b"1,t,s,TRAFFIC,x,THREAT,y"), Some(0));
        assert_eq!(first_type(b"1,t,s,AUTH,a,SYSTEM,b"), Some(2));
        assert_eq!(first_type(b"1,t,s,AUTH,a"), Some(9));
        assert_eq!(first_type(b"1,t,s,IPTAG,a,CONFIG,b"), Some(3));
        assert_eq!(first_type(b"1,t,s,IPTAG,a"), None);
        assert_eq!(first_type(b"1,t,s,AUTH"), None);
        assert_eq!(first_type(b",AUTH,"), Some(9));
    }

    use proptest::prelude::*;

    proptest::proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..Default::default() })]

        #[test]
        fn split_agrees_with_reference(line in proptest::collection::vec(
            proptest::sample::select(vec![b',', b'"', b'a', b'1']),
            0..300,
        ), want in 1usize..140) {
            let got = split(&line, want);
            let mut want_cols = reference_split(&line);
            want_cols.truncate(want.min(super::MAX));
            prop_assert_eq!(got, want_cols);
        }

        #[test]
        fn picks_agree_with_reference(line in proptest::collection::vec(
            proptest::sample::select(vec![b',', b',', b'"', b'a', b'1']),
            0..200,
        ), want in 0usize..140, wanted in proptest::collection::btree_set(0usize..130, 0..5)) {
            let mut picks: Vec<(usize, &[u8])> = wanted.iter().map(|&i| (i, &b"?"[..])).collect();
            let n = super::csv_pick(&line, want, &mut picks);
            let all = reference_split(&line);
            prop_assert_eq!(n, all.len().min(want).min(super::MAX));
            for (i, v) in picks {
                if i < n {
                    prop_assert_eq!(v, &all[i][..]);
                }
            }
        }

        #[test]
        fn first_type_agrees_with_the_general_search(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                &b"1"[..], b"x", b"THREAT", b"TRAFFIC", b"SYSTEM", b"CONFIG", b"HIPMATCH",
                b"CORRELATION", b"USERID", b"GLOBALPROTECT", b"DECRYPTION", b"AUTH", b"",
            ]),
            0..10,
        )) {
            let line = parts.join(&b","[..]);
            prop_assert_eq!(super::first_type(&line), super::any_type(&line));
        }
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
