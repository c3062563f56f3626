//! [`Shape`]: what the text after a message's PRI looks like, read once per message so the
//! almost-syslog header checks ([`When::Header`](super::registry::When::Header)) that cannot
//! hold are not called.

/// What the text after a message's `<PRI>` (`<\d+>`) starts with: the first-byte classes
/// the almost-syslog header checks test, and how a BSD-like stamp there ends, read once per
/// message ([`When::Header`]). `t` is that text with one leading space removed. Without a PRI
/// no bit is set; with a non-ASCII byte where its digits end, every bit (a regex's `\d` may
/// read it as a digit).
///
/// The stamp bits come from one walk over `\w\w\w *\d{1,2} ` at the start of `t` (the
/// loosest form any header check accepts), then either `hh:mm:ss HOST ` (HOST a run of
/// non-space bytes) or a year. They let a plain BSD line (`Nov 28 16:00:00 host1 sshd[1]: ...`)
/// skip the four checks that would each read its header again only to refuse it at HOST
/// or after it. Each bit is a necessary condition of the checks registered with it; the
/// checks' tests prove it over generated headers ([`assert_needs_shape`]).
///
/// [`assert_needs_shape`]: crate::classify::testutil::assert_needs_shape
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape(u16);

impl Shape {
    /// The text starts with a space.
    pub const SPACE: Shape = Shape(1);
    /// `t` starts with an ASCII digit.
    pub const DIGIT: Shape = Shape(16);
    /// A BSD month, the clock stamp, and HOST holds a `.` (Cisco's `facility.level` in its place).
    pub const HOST_DOT: Shape = Shape(32);
    /// The clock stamp, HOST, a space and a digit (a relay's IPv4 address after HOST).
    pub const HOST_THEN_DIGIT: Shape = Shape(64);
    /// The clock stamp, HOST, a space and a byte a syslog level word starts with
    /// (`alert crit debug emerg err error info notice warning`).
    pub const HOST_THEN_LEVEL: Shape = Shape(128);
    /// A BSD month, a day, a space, four digits and a space (`Mmm dd yyyy hh:mm:ss...`).
    pub const YEAR: Shape = Shape(256);
    /// `yyyy-mm-dd[ T]hh:mm:ss,` after an optional `1` and spaces (an ISO stamp with a comma
    /// before its fraction).
    pub const ISO_COMMA: Shape = Shape(512);
    /// `t` starts `yyyy-mm-ddThh:mmZ ` (an ISO stamp to the minute, in UTC).
    pub const ISO_MINUTE_Z: Shape = Shape(1024);
    /// `t` starts with an ASCII letter but not `[A-Z][a-z][a-z] ` (a BSD month and its space).
    pub const ALPHA_NOT_MONTH: Shape = Shape(2048);
    /// `t` starts with `[0-9a-f]` (a lower-case hexadecimal digit).
    pub const HEX: Shape = Shape(4096);

    /// Every bit: a PRI whose digits [`Shape::of`] cannot judge (non-ASCII).
    pub const UNSURE: Shape = Shape(u16::MAX);

    /// Either bit set.
    pub const fn or(self, other: Shape) -> Shape {
        Shape(self.0 | other.0)
    }

    /// Some bit of `need` is set here.
    pub fn any(self, need: Shape) -> bool {
        self.0 & need.0 != 0
    }

    /// The shape of a raw message. It runs on every message with a PRI, so it reads a fixed
    /// window of the bytes after the PRI (in place, or zero-padded when the text is shorter):
    /// each test is one load and compare, with no bounds check per byte.
    pub fn of(raw: &[u8]) -> Shape {
        let t = match after_pri(raw) {
            Pri::Ascii(t) => t,
            Pri::None => return Shape::default(),
            Pri::Unsure => return Shape::UNSURE,
        };
        let mut bits = 0;
        let t = match t.split_first() {
            Some((b' ', rest)) => {
                bits |= Shape::SPACE.0;
                rest
            }
            _ => t,
        };
        // Most lines are longer than the window: read it in place (a copy is a `memcpy` call).
        let mut short = [0u8; WINDOW];
        let w: &[u8; WINDOW] = match t.first_chunk() {
            Some(w) => w,
            None => {
                short[..t.len()].copy_from_slice(t);
                &short
            }
        };
        let (b0, b1, b2) = (w[0], w[1], w[2]);
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let month = b0.is_ascii_uppercase() && b1.is_ascii_lowercase() && b2.is_ascii_lowercase();
        let word3 = word(b0) && word(b1) && word(b2);
        if matches!(b0, b'0'..=b'9' | b'a'..=b'f') {
            bits |= Shape::HEX.0;
        }
        if b0.is_ascii_alphabetic() {
            if !(month && w[3] == b' ') {
                bits |= Shape::ALPHA_NOT_MONTH.0;
            }
        } else if b0.is_ascii_digit() {
            bits |= Shape::DIGIT.0 | iso_bits(t, w);
        } else if b0 == b' ' {
            bits |= iso_bits(t, w);
        }
        if word3 {
            bits |= stamp_bits(t, w, month);
        }
        Shape(bits)
    }
}

/// How many bytes after the PRI [`Shape::of`] reads at fixed offsets: `Mmm  d yyyy ` or
/// `Mmm  d hh:mm:ss ` with up to [`MAX_PAD`] spaces after the month.
const WINDOW: usize = 32;
/// The spaces after a three-byte month [`stamp_bits`] reads within [`WINDOW`]; a longer run
/// (no sender writes one) takes the byte-at-a-time path.
const MAX_PAD: usize = WINDOW - 3 - 3 - 9;
/// The same for the `1? *` before an ISO date with a comma ([`iso_bits`]).
const MAX_ISO_PAD: usize = WINDOW - 11 - 9 - 1;

/// What a message starts with, as far as [`Shape`] is concerned.
enum Pri<'a> {
    /// `<` and ASCII digits and `>`: the text after it.
    Ascii(&'a [u8]),
    /// No PRI.
    None,
    /// A non-ASCII byte where the digits end: a regex's `\d` may take it for a digit, so the
    /// checks' `^<\d+>` may hold.
    Unsure,
}

fn after_pri(raw: &[u8]) -> Pri<'_> {
    match pri_scan(raw) {
        Ok(n) => Pri::Ascii(&raw[n..]),
        Err(true) => Pri::Unsure,
        Err(false) => Pri::None,
    }
}

/// `^<[0-9]+>`: the length of the PRI, for the almost-syslog parsers that read what follows
/// it (one definition for them and [`Shape`]).
pub(crate) fn pri_len(raw: &[u8]) -> Option<usize> {
    pri_scan(raw).ok()
}

/// The PRI's length, or `Err(true)` when a non-ASCII byte ends its digits.
fn pri_scan(raw: &[u8]) -> Result<usize, bool> {
    if raw.first() != Some(&b'<') {
        return Err(false);
    }
    let mut i = 1;
    while i < raw.len() && raw[i].is_ascii_digit() {
        i += 1;
    }
    match raw.get(i) {
        Some(b'>') if i > 1 => Ok(i + 1),
        Some(b) => Err(!b.is_ascii()),
        None => Err(false),
    }
}

/// The ISO stamp bits of [`Shape`] for `t`; `w` is its first [`WINDOW`] bytes, zero-padded.
fn iso_bits(t: &[u8], w: &[u8; WINDOW]) -> u16 {
    let d = |k: usize| w[k].is_ascii_digit();
    let date = |k: usize| {
        d(k) && d(k + 1)
            && d(k + 2)
            && d(k + 3)
            && w[k + 4] == b'-'
            && d(k + 5)
            && d(k + 6)
            && w[k + 7] == b'-'
            && d(k + 8)
            && d(k + 9)
    };
    let mut bits = 0;
    // `yyyy-mm-ddThh:mmZ `: exactly, from the first byte.
    if date(0)
        && w[10] == b'T'
        && d(11)
        && d(12)
        && w[13] == b':'
        && d(14)
        && d(15)
        && w[16] == b'Z'
        && w[17] == b' '
    {
        bits |= Shape::ISO_MINUTE_Z.0;
    }
    // `1? *` then the date, an optional ` ` or `T`, `hh:mm:ss` and a comma.
    let mut k = usize::from(w[0] == b'1');
    while k < WINDOW && w[k] == b' ' {
        k += 1;
    }
    if k > MAX_ISO_PAD {
        return reference::iso_bits(t);
    }
    // Within the window from here: `k + 11 + 8 <= MAX_ISO_PAD + 19 < WINDOW`.
    if date(k) {
        let at = k + if matches!(w[k + 10], b' ' | b'T') {
            11
        } else {
            10
        };
        if d(at)
            && d(at + 1)
            && w[at + 2] == b':'
            && d(at + 3)
            && d(at + 4)
            && w[at + 5] == b':'
            && d(at + 6)
            && d(at + 7)
            && w[at + 8] == b','
        {
            bits |= Shape::ISO_COMMA.0;
        }
    }
    bits
}

/// The stamp bits of [`Shape`] for `t`, which starts with three word bytes; `w` is its first
/// [`WINDOW`] bytes, zero-padded.
fn stamp_bits(t: &[u8], w: &[u8; WINDOW], month: bool) -> u16 {
    let mut i = 3;
    while i < w.len() && w[i] == b' ' {
        i += 1;
    }
    if i > 3 + MAX_PAD {
        return reference::stamp_bits(t, month);
    }
    // Within the window from here: `i + 2 + 1 + 9 <= 3 + MAX_PAD + 12 < WINDOW`.
    let d = |k: usize| w[k].is_ascii_digit();
    let day = if !d(i) {
        return 0;
    } else if d(i + 1) {
        if d(i + 2) {
            return 0;
        }
        2
    } else {
        1
    };
    if w[i + day] != b' ' {
        return 0;
    }
    i += day + 1;
    if month && d(i) && d(i + 1) && d(i + 2) && d(i + 3) && w[i + 4] == b' ' {
        return Shape::YEAR.0;
    }
    let clock = d(i)
        && d(i + 1)
        && w[i + 2] == b':'
        && d(i + 3)
        && d(i + 4)
        && w[i + 5] == b':'
        && d(i + 6)
        && d(i + 7)
        && w[i + 8] == b' ';
    if !clock {
        return 0;
    }
    host_bits(&t[(i + 9).min(t.len())..], month)
}

/// The HOST bits of [`Shape`] for `host`, the text after the clock stamp's space.
fn host_bits(host: &[u8], month: bool) -> u16 {
    let mut bits = 0;
    let mut dot = false;
    let mut end = host.len();
    for (k, &c) in host.iter().enumerate() {
        if c == b' ' {
            end = k;
            break;
        }
        dot |= c == b'.';
    }
    if month && dot {
        bits |= Shape::HOST_DOT.0;
    }
    if end > 0 && end < host.len() {
        match host.get(end + 1).copied().unwrap_or(0) {
            c if c.is_ascii_digit() => bits |= Shape::HOST_THEN_DIGIT.0,
            b'a' | b'c' | b'd' | b'e' | b'i' | b'n' | b'w' => bits |= Shape::HOST_THEN_LEVEL.0,
            _ => {}
        }
    }
    bits
}

/// The byte-at-a-time form of [`Shape::of`]: the test oracle of the windowed one, and its
/// path for a month followed by more spaces than the window holds.
mod reference {
    use super::Shape;

    #[cfg(test)]
    pub(super) fn of(raw: &[u8]) -> Shape {
        let digits = raw
            .get(1..)
            .map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count());
        if raw.first() == Some(&b'<') && raw.get(1 + digits).is_some_and(|b| !b.is_ascii()) {
            return Shape::UNSURE;
        }
        if raw.first() != Some(&b'<') || digits == 0 || raw.get(1 + digits) != Some(&b'>') {
            return Shape::default();
        }
        let s = &raw[digits + 2..];
        let mut bits = 0;
        let t = match s.strip_prefix(b" ") {
            Some(t) => {
                bits |= Shape::SPACE.0;
                t
            }
            None => s,
        };
        let b = |i: usize| t.get(i).copied().unwrap_or(0);
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let month =
            b(0).is_ascii_uppercase() && b(1).is_ascii_lowercase() && b(2).is_ascii_lowercase();
        let word3 = word(b(0)) && word(b(1)) && word(b(2));
        if b(0).is_ascii_alphabetic() && !(month && b(3) == b' ') {
            bits |= Shape::ALPHA_NOT_MONTH.0;
        }
        if b(0).is_ascii_digit() || (b'a'..=b'f').contains(&b(0)) {
            bits |= Shape::HEX.0;
        }
        if b(0).is_ascii_digit() {
            bits |= Shape::DIGIT.0;
        }
        if b(0).is_ascii_digit() || b(0) == b' ' {
            bits |= iso_bits(t);
        }
        if word3 {
            bits |= stamp_bits(t, month);
        }
        Shape(bits)
    }

    pub(super) fn iso_bits(t: &[u8]) -> u16 {
        let mut bits = 0;
        let b = |s: &[u8], i: usize| s.get(i).copied().unwrap_or(0);
        let d = |s: &[u8], i: usize| b(s, i).is_ascii_digit();
        let date = |s: &[u8]| {
            d(s, 0)
                && d(s, 1)
                && d(s, 2)
                && d(s, 3)
                && b(s, 4) == b'-'
                && d(s, 5)
                && d(s, 6)
                && b(s, 7) == b'-'
                && d(s, 8)
                && d(s, 9)
        };
        // `yyyy-mm-ddThh:mmZ `: exactly, from the first byte.
        if date(t)
            && b(t, 10) == b'T'
            && d(t, 11)
            && d(t, 12)
            && b(t, 13) == b':'
            && d(t, 14)
            && d(t, 15)
            && b(t, 16) == b'Z'
            && b(t, 17) == b' '
        {
            bits |= Shape::ISO_MINUTE_Z.0;
        }
        // `1? *` then the date, an optional ` ` or `T`, `hh:mm:ss` and a comma.
        let s = t.strip_prefix(b"1").unwrap_or(t);
        let s = &s[s.iter().take_while(|&&c| c == b' ').count()..];
        if date(s) {
            let at = if matches!(b(s, 10), b' ' | b'T') {
                11
            } else {
                10
            };
            if d(s, at)
                && d(s, at + 1)
                && b(s, at + 2) == b':'
                && d(s, at + 3)
                && d(s, at + 4)
                && b(s, at + 5) == b':'
                && d(s, at + 6)
                && d(s, at + 7)
                && b(s, at + 8) == b','
            {
                bits |= Shape::ISO_COMMA.0;
            }
        }
        bits
    }

    pub(super) fn stamp_bits(t: &[u8], month: bool) -> u16 {
        let b = |i: usize| t.get(i).copied().unwrap_or(0);
        let mut i = 3;
        while b(i) == b' ' {
            i += 1;
        }
        let day = (i..i + 3).take_while(|&k| b(k).is_ascii_digit()).count();
        if !(1..=2).contains(&day) || b(i + day) != b' ' {
            return 0;
        }
        i += day + 1;
        let d = |k: usize| b(k).is_ascii_digit();
        if month && d(i) && d(i + 1) && d(i + 2) && d(i + 3) && b(i + 4) == b' ' {
            return Shape::YEAR.0;
        }
        let clock = d(i)
            && d(i + 1)
            && b(i + 2) == b':'
            && d(i + 3)
            && d(i + 4)
            && b(i + 5) == b':'
            && d(i + 6)
            && d(i + 7)
            && b(i + 8) == b' ';
        if !clock {
            return 0;
        }
        super::host_bits(&t[(i + 9).min(t.len())..], month)
    }

    #[cfg(test)]
    mod tests {
        use proptest::prelude::*;

        const PIECES: &[&str] = &[
            "<",
            ">",
            "<13>",
            "<1>",
            " ",
            "  ",
            "Nov",
            "nov",
            "NOV",
            "Jan",
            "abc",
            "a_1",
            "28",
            "1",
            "123",
            "2024",
            "16:00:00",
            "1:00:00",
            "-",
            "T",
            "Z",
            "2024-03-05",
            "T12:28",
            "T12:28:51",
            ",",
            ".",
            "host",
            "h.x",
            "info",
            "err",
            "emerg",
            "10.0.0.1",
            "9",
            "é",
            "\t",
            ":",
            "00",
            "Z ",
        ];

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(20_000))]
            #[test]
            fn windowed_shape_matches_the_reference(
                pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..16),
                bytes in proptest::collection::vec(any::<u8>(), 0..8),
            ) {
                let mut raw = pieces.concat().into_bytes();
                raw.extend(bytes);
                prop_assert_eq!(super::super::Shape::of(&raw), super::of(&raw));
            }
        }

        #[test]
        fn long_runs_of_spaces_after_the_month_match_too() {
            for pad in 0..40 {
                for tail in ["28 16:00:00 h.x info x", "8 2024 x", "28 16:00:00 host 9"] {
                    let raw = format!("<13>Nov{}{tail}", " ".repeat(pad));
                    assert_eq!(
                        super::super::Shape::of(raw.as_bytes()),
                        super::of(raw.as_bytes()),
                        "{raw}"
                    );
                }
            }
        }
    }
}
