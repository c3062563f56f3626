//! Validation of `/services/collector/event` bodies the way HEC judges them.
//!
//! A purpose-built JSON scanner instead of serde: the whole body is checked for UTF-8 once
//! (the ASCII fast path of `str::from_utf8`), then one pass checks the JSON grammar (strings
//! eight bytes at a time), recognises the HEC keys at the top level of each event and judges
//! their values, without allocating. That is about twice as fast as a borrowing serde pass,
//! which the sink needs to stay far ahead of the client under test.

use super::RejectReason;

/// Why a request is refused, in HEC's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reject {
    pub status: u16,
    pub reason: RejectReason,
    pub text: &'static str,
    pub code: u16,
    pub event_number: Option<usize>,
}

impl Reject {
    pub(crate) fn new(status: u16, reason: RejectReason, text: &'static str, code: u16) -> Self {
        Reject {
            status,
            reason,
            text,
            code,
            event_number: None,
        }
    }

    fn at(mut self, n: usize) -> Self {
        self.event_number = Some(n);
        self
    }

    pub(crate) fn body(&self) -> String {
        match self.event_number {
            Some(n) => format!(
                "{{\"text\":\"{}\",\"code\":{},\"invalid-event-number\":{}}}",
                self.text, self.code, n
            ),
            None => format!("{{\"text\":\"{}\",\"code\":{}}}", self.text, self.code),
        }
    }
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

/// A value reduced to what validation needs. `Str` is the raw text between the quotes
/// (escapes not decoded: nothing judged here needs them decoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind<'a> {
    Str(&'a str),
    Num,
    Bool,
    Null,
    Arr { scalars_only: bool },
    Obj,
}

/// Grammar error; the caller turns it into "Invalid data format" for the current event.
#[derive(Debug)]
struct Bad;

struct Scanner<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Flags (high bit of each byte) the bytes that are `"`, `\\` or control characters. The
/// lowest flagged byte is always a real one (false positives only occur above a real one),
/// so `trailing_zeros / 8` is the offset of the first special byte.
#[inline]
fn special_mask(word: u64) -> u64 {
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let quote = has_zero(word ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    quote | backslash | control
}

impl<'a> Scanner<'a> {
    fn new(s: &'a str) -> Self {
        Scanner {
            s,
            b: s.as_bytes(),
            i: 0,
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(c) = self.b.get(self.i) {
            if matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), Bad> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Bad)
        }
    }

    /// At an opening quote; returns the raw content.
    fn string(&mut self) -> Result<&'a str, Bad> {
        self.expect(b'"')?;
        let start = self.i;
        loop {
            while let Some(chunk) = self.b.get(self.i..self.i + 8) {
                let mut w = [0u8; 8];
                w.copy_from_slice(chunk);
                let mask = special_mask(u64::from_le_bytes(w));
                if mask != 0 {
                    self.i += (mask.trailing_zeros() / 8) as usize;
                    break;
                }
                self.i += 8;
            }
            let c = *self.b.get(self.i).ok_or(Bad)?;
            match c {
                b'"' => {
                    let raw = &self.s[start..self.i];
                    self.i += 1;
                    return Ok(raw);
                }
                b'\\' => {
                    self.i += 1;
                    match *self.b.get(self.i).ok_or(Bad)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                        b'u' => {
                            let hex = self.b.get(self.i + 1..self.i + 5).ok_or(Bad)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(Bad);
                            }
                            self.i += 5;
                        }
                        _ => return Err(Bad),
                    }
                }
                0..=0x1f => return Err(Bad),
                _ => self.i += 1,
            }
        }
    }

    fn digits(&mut self) -> Result<(), Bad> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i == start { Err(Bad) } else { Ok(()) }
    }

    fn number(&mut self) -> Result<(), Bad> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => self.digits()?,
            _ => return Err(Bad),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.digits()?;
        }
        Ok(())
    }

    fn literal(&mut self, lit: &[u8]) -> Result<(), Bad> {
        if self.b[self.i..].starts_with(lit) {
            self.i += lit.len();
            Ok(())
        } else {
            Err(Bad)
        }
    }

    /// One value of any kind, nested content checked and skipped.
    fn value(&mut self, depth: usize) -> Result<Kind<'a>, Bad> {
        if depth > MAX_DEPTH {
            return Err(Bad);
        }
        self.ws();
        match self.peek().ok_or(Bad)? {
            b'"' => Ok(Kind::Str(self.string()?)),
            b'{' => {
                self.members(depth, |_, _| {})?;
                Ok(Kind::Obj)
            }
            b'[' => {
                self.i += 1;
                let mut scalars_only = true;
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Kind::Arr { scalars_only });
                }
                loop {
                    let k = self.value(depth + 1)?;
                    scalars_only &= matches!(k, Kind::Str(_) | Kind::Num);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Kind::Arr { scalars_only });
                        }
                        _ => return Err(Bad),
                    }
                }
            }
            b't' => self.literal(b"true").map(|_| Kind::Bool),
            b'f' => self.literal(b"false").map(|_| Kind::Bool),
            b'n' => self.literal(b"null").map(|_| Kind::Null),
            b'-' | b'0'..=b'9' => self.number().map(|_| Kind::Num),
            _ => Err(Bad),
        }
    }

    /// An object at `{`: calls `member(raw key, value kind)` for each member.
    fn members(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&'a str, Kind<'a>),
    ) -> Result<(), Bad> {
        self.expect(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.expect(b':')?;
            let k = self.value(depth + 1)?;
            member(key, k);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Bad),
            }
        }
    }

    /// `fields`: true when flat (strings, numbers, arrays of those; `null` means none).
    fn fields(&mut self, depth: usize) -> Result<bool, Bad> {
        self.ws();
        match self.peek() {
            Some(b'{') => {
                let mut flat = true;
                self.members(depth, |_, k| {
                    flat &= matches!(
                        k,
                        Kind::Str(_) | Kind::Num | Kind::Arr { scalars_only: true }
                    );
                })?;
                Ok(flat)
            }
            _ => Ok(matches!(self.value(depth)?, Kind::Null)),
        }
    }
}

/// The HEC keys of one event, as found.
#[derive(Default)]
struct Event<'a> {
    event: Option<Kind<'a>>,
    time: Option<Kind<'a>>,
    meta_ok: bool,
    fields_ok: bool,
}

enum Key {
    Event,
    Time,
    Meta,
    Fields,
    Other,
}

fn hec_key(raw: &str) -> Key {
    match raw {
        "event" => Key::Event,
        "time" => Key::Time,
        "host" | "source" | "sourcetype" | "index" => Key::Meta,
        "fields" => Key::Fields,
        // An escaped spelling of a HEC key (never seen in practice) is decoded and matched.
        _ if raw.contains('\\') => match serde_json::from_str::<String>(&format!("\"{raw}\"")) {
            Ok(k) if !k.contains('\\') => hec_key(&k),
            _ => Key::Other,
        },
        _ => Key::Other,
    }
}

fn event_object<'a>(sc: &mut Scanner<'a>) -> Result<Event<'a>, Bad> {
    let mut ev = Event {
        meta_ok: true,
        fields_ok: true,
        ..Event::default()
    };
    sc.expect(b'{')?;
    sc.ws();
    if sc.peek() == Some(b'}') {
        sc.i += 1;
        return Ok(ev);
    }
    loop {
        sc.ws();
        let key = sc.string()?;
        sc.ws();
        sc.expect(b':')?;
        match hec_key(key) {
            Key::Fields => ev.fields_ok = sc.fields(1)?,
            Key::Event => ev.event = Some(sc.value(1)?),
            Key::Time => ev.time = Some(sc.value(1)?),
            Key::Meta => ev.meta_ok &= matches!(sc.value(1)?, Kind::Str(_)),
            Key::Other => {
                sc.value(1)?;
            }
        }
        sc.ws();
        match sc.peek() {
            Some(b',') => sc.i += 1,
            Some(b'}') => {
                sc.i += 1;
                return Ok(ev);
            }
            _ => return Err(Bad),
        }
    }
}

fn invalid_format(n: usize) -> Reject {
    Reject::new(400, RejectReason::InvalidJson, "Invalid data format", 6).at(n)
}

/// True when the body holds nothing but whitespace (HEC: 400 "No data", code 5).
pub(crate) fn is_blank(body: &[u8]) -> bool {
    body.iter().all(u8::is_ascii_whitespace)
}

/// Validates every event of an event-endpoint body (concatenated JSON objects, with or
/// without whitespace between them), calling `each` with the raw text of every string
/// `event` (escapes not decoded). Returns the number of events. `each` may have been called
/// for events of a body that is then rejected; callers apply side effects only on `Ok`.
pub(crate) fn scan_events(body: &[u8], mut each: impl FnMut(&str)) -> Result<usize, Reject> {
    if is_blank(body) {
        return Err(Reject::new(400, RejectReason::NoData, "No data", 5));
    }
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => {
            // Number the event the bad byte belongs to: count the objects before it.
            let n = count_objects(&body[..e.valid_up_to()]);
            return Err(invalid_format(n));
        }
    };
    let mut sc = Scanner::new(text);
    let mut n = 0;
    loop {
        sc.ws();
        match sc.peek() {
            None => return Ok(n),
            Some(b'{') => {}
            Some(_) => return Err(invalid_format(n)),
        }
        let ev = event_object(&mut sc).map_err(|_| invalid_format(n))?;
        match ev.event {
            None | Some(Kind::Null) => {
                return Err(Reject::new(
                    400,
                    RejectReason::EventMissing,
                    "Event field is required",
                    12,
                )
                .at(n));
            }
            Some(Kind::Str(s)) if s.trim().is_empty() => {
                return Err(Reject::new(
                    400,
                    RejectReason::EventBlank,
                    "Event field cannot be blank",
                    13,
                )
                .at(n));
            }
            Some(Kind::Str(s)) => each(s),
            Some(_) => {}
        }
        match ev.time {
            None | Some(Kind::Num) => {}
            Some(Kind::Str(s)) if s.trim().parse::<f64>().is_ok_and(f64::is_finite) => {}
            Some(_) => {
                return Err(
                    Reject::new(400, RejectReason::BadTime, "Invalid data format", 6).at(n),
                );
            }
        }
        if !ev.meta_ok {
            return Err(
                Reject::new(400, RejectReason::BadMetadata, "Invalid data format", 6).at(n),
            );
        }
        if !ev.fields_ok {
            return Err(Reject::new(
                400,
                RejectReason::BadFields,
                "Error in handling indexed fields",
                15,
            )
            .at(n));
        }
        n += 1;
    }
}

/// Complete top-level objects in a valid UTF-8 prefix (for numbering a UTF-8 error).
fn count_objects(prefix: &[u8]) -> usize {
    let Ok(text) = std::str::from_utf8(prefix) else {
        return 0;
    };
    let mut sc = Scanner::new(text);
    let mut n = 0;
    loop {
        sc.ws();
        if sc.peek() != Some(b'{') || event_object(&mut sc).is_err() {
            return n;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(body: &str) -> Result<(usize, Vec<String>), Reject> {
        let mut texts = Vec::new();
        let n = scan_events(body.as_bytes(), |t| texts.push(t.to_string()))?;
        Ok((n, texts))
    }

    #[test]
    fn accepts_sc4s_shaped_events_newline_separated_or_concatenated() {
        let one = r#"{"time":"1710166925.000","host":"h","source":"sc4s","sourcetype":"cisco:asa","index":"netfw","event":"%ASA-6-302013: Built \"x\"","fields":{"sc4s_vendor":"cisco","n":5,"tags":["a","b"]}}"#;
        let body = format!("{one}\n{one}{one}  \n");
        let (n, texts) = scan(&body).unwrap();
        assert_eq!(n, 3);
        assert_eq!(
            texts[0], r#"%ASA-6-302013: Built \"x\""#,
            "raw text, escapes kept"
        );
        assert_eq!(scan(r#"{"event":{"k":"v"},"time":17}"#).unwrap().0, 1);
    }

    #[test]
    fn rejections_carry_hec_codes_and_the_event_number() {
        let ok = r#"{"event":"a"}"#;
        let cases = [
            (
                format!("{ok}{{\"time\":1}}"),
                12,
                RejectReason::EventMissing,
            ),
            (
                format!("{ok}{ok}{{\"event\":\"\"}}"),
                13,
                RejectReason::EventBlank,
            ),
            (
                format!("{ok}{{\"event\":\"a\",\"time\":\"soon\"}}"),
                6,
                RejectReason::BadTime,
            ),
            (
                format!("{ok}{{\"event\":\"a\",\"index\":5}}"),
                6,
                RejectReason::BadMetadata,
            ),
            (
                format!("{ok}{{\"event\":\"a\",\"fields\":{{\"x\":{{\"nested\":1}}}}}}"),
                15,
                RejectReason::BadFields,
            ),
            (
                format!("{ok}{{\"event\":\"a\",\"fields\":{{\"x\":[[1]]}}}}"),
                15,
                RejectReason::BadFields,
            ),
            (
                format!("{ok}{{\"event\":\"a\""),
                6,
                RejectReason::InvalidJson,
            ),
            (format!("{ok}[1,2]"), 6, RejectReason::InvalidJson),
        ];
        for (body, code, reason) in cases {
            let r = scan(&body).expect_err(&body);
            assert_eq!((r.code, r.reason), (code, reason), "{body}");
            assert_eq!(r.status, 400);
            let expected_n = body.matches(ok).count();
            assert_eq!(r.event_number, Some(expected_n), "{body}");
            assert!(r.body().contains("\"invalid-event-number\""));
        }
        let r = scan(" \n ").unwrap_err();
        assert_eq!((r.code, r.reason), (5, RejectReason::NoData));
        assert_eq!(r.body(), r#"{"text":"No data","code":5}"#);
    }

    #[test]
    fn json_grammar_is_checked_exactly() {
        let good = [
            r#"{"event":"\u00e9t\u00E9 \n\t\"\\\/ cafÃ© â¬"}"#,
            r#"{"event":"a","time":-1.5e+3,"x":[true,false,null,{"y":[]}],"z":{}}"#,
            r#"{ "event" : "a" , "time" : 0 }"#,
            r#"{"event":"a","fields":null}"#,
            r#"{"event":"a","fields":{"k":["s",1,2.5],"e":[]}}"#,
            r#"{"\u0065vent":"escaped key still counts"}"#,
        ];
        for g in good {
            assert_eq!(scan(g).map(|r| r.0), Ok(1), "{g}");
        }
        let bad = [
            "{\"event\":\"a\u{1}b\"}",    // raw control character
            r#"{"event":"a\x"}"#,         // unknown escape
            r#"{"event":"a\u12G4"}"#,     // bad hex
            r#"{"event":"a","time":01}"#, // leading zero
            r#"{"event":"a","time":1.}"#, // no fraction digits
            r#"{"event":"a","x":tru}"#,   // bad literal
            r#"{"event":"a",}"#,          // trailing comma
            r#"{"event":"a" "b":1}"#,     // missing comma
            r#"{"event":"a"} x"#,         // garbage after an event
        ];
        for b in bad {
            let r = scan(b).expect_err(b);
            assert_eq!((r.code, r.reason), (6, RejectReason::InvalidJson), "{b}");
        }
        let deep = format!(
            "{{\"event\":\"a\",\"x\":{}{}}}",
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(scan(&deep).unwrap_err().code, 6, "nesting is bounded");
        // Invalid UTF-8 in the second event.
        let mut body = br#"{"event":"a"}{"event":"b"#.to_vec();
        body.push(0xff);
        body.extend_from_slice(br#""}"#);
        let r = scan_events(&body, |_| {}).unwrap_err();
        assert_eq!((r.code, r.event_number), (6, Some(1)));
    }

    #[test]
    fn word_at_a_time_string_scan_finds_every_special_byte() {
        for len in 0..24 {
            for p in 0..len {
                for (special, ok) in [
                    (b'"', false),
                    (b'\\', false),
                    (0x01, false),
                    (0x1f, false),
                    (b' ', true),
                    (0x7f, true),
                ] {
                    let mut content = vec![b'a'; len];
                    content[p] = special;
                    // The leading x keeps the event from being blank.
                    let mut body = br#"{"event":"x"#.to_vec();
                    body.extend_from_slice(&content);
                    body.extend_from_slice(br#""}"#);
                    let got = scan_events(&body, |_| {});
                    assert_eq!(got.is_ok(), ok, "len {len} pos {p} byte {special:#x}");
                }
            }
        }
    }
}
