//! Validation of `/services/collector/event` bodies the way HEC judges them, in one
//! borrowing pass (no `serde_json::Value` per event).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

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

/// A JSON value reduced to what validation needs; strings borrow from the body when they
/// have no escapes.
#[derive(Debug)]
enum Val<'a> {
    Str(Cow<'a, str>),
    Num,
    Bool,
    Null,
    Arr { scalars_only: bool },
    Obj,
}

impl<'de: 'a, 'a> Deserialize<'de> for Val<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValVisitor(PhantomData))
    }
}

struct ValVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ValVisitor<'a> {
    type Value = Val<'a>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Val::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Val::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Val::Str(Cow::Owned(v)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Val::Bool)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Val::Num)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Val::Num)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Val::Num)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Val::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Val::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut scalars_only = true;
        while let Some(scalar) = seq.next_element::<IsScalar>()? {
            scalars_only &= scalar.0;
        }
        Ok(Val::Arr { scalars_only })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Val::Obj)
    }
}

/// Whether an array element is a string or a number (what indexed-field arrays may hold).
struct IsScalar(bool);

impl<'de> Deserialize<'de> for IsScalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Val::deserialize(d)? {
            Val::Str(_) | Val::Num => Ok(IsScalar(true)),
            _ => Ok(IsScalar(false)),
        }
    }
}

/// `fields`: a flat object whose values are strings, numbers or arrays of those.
struct FieldsOk(bool);

impl<'de> Deserialize<'de> for FieldsOk {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FieldsVisitor)
    }
}

struct FieldsVisitor;

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = FieldsOk;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of indexed fields")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut ok = true;
        while let Some((_, v)) = map.next_entry::<IgnoredAny, Val<'_>>()? {
            ok &= matches!(v, Val::Str(_) | Val::Num | Val::Arr { scalars_only: true });
        }
        Ok(FieldsOk(ok))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(FieldsOk(false))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(FieldsOk(false))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(FieldsOk(false))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(FieldsOk(false))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(FieldsOk(false))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(FieldsOk(false))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        // `"fields": null` carries no fields; HEC ignores it.
        Ok(FieldsOk(true))
    }
}

#[derive(serde::Deserialize)]
struct EventProbe<'a> {
    #[serde(borrow, default)]
    event: Option<Val<'a>>,
    #[serde(borrow, default)]
    time: Option<Val<'a>>,
    #[serde(borrow, default)]
    host: Option<Val<'a>>,
    #[serde(borrow, default)]
    source: Option<Val<'a>>,
    #[serde(borrow, default)]
    sourcetype: Option<Val<'a>>,
    #[serde(borrow, default)]
    index: Option<Val<'a>>,
    #[serde(default)]
    fields: Option<FieldsOk>,
}

fn invalid_format(n: usize) -> Reject {
    Reject::new(400, RejectReason::InvalidJson, "Invalid data format", 6).at(n)
}

/// True when the body holds nothing but whitespace (HEC: 400 "No data", code 5).
pub(crate) fn is_blank(body: &[u8]) -> bool {
    body.iter().all(u8::is_ascii_whitespace)
}

/// Validates every event of an event-endpoint body (concatenated JSON objects, with or
/// without whitespace between them), calling `each` with the text of every string `event`.
/// Returns the number of events. `each` may have been called for events of a body that is
/// then rejected; callers apply side effects only on `Ok`.
pub(crate) fn scan_events(body: &[u8], mut each: impl FnMut(&str)) -> Result<usize, Reject> {
    if is_blank(body) {
        return Err(Reject::new(400, RejectReason::NoData, "No data", 5));
    }
    let mut n = 0;
    let mut stream = serde_json::Deserializer::from_slice(body).into_iter::<EventProbe<'_>>();
    loop {
        // serde also reads a struct from a JSON array; HEC wants objects.
        match body[stream.byte_offset()..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
        {
            None => break,
            Some(b'{') => {}
            Some(_) => return Err(invalid_format(n)),
        }
        let Some(item) = stream.next() else { break };
        let ev = item.map_err(|_| invalid_format(n))?;
        match &ev.event {
            None | Some(Val::Null) => {
                return Err(Reject::new(
                    400,
                    RejectReason::EventMissing,
                    "Event field is required",
                    12,
                )
                .at(n));
            }
            Some(Val::Str(s)) if s.trim().is_empty() => {
                return Err(Reject::new(
                    400,
                    RejectReason::EventBlank,
                    "Event field cannot be blank",
                    13,
                )
                .at(n));
            }
            Some(Val::Str(s)) => each(s),
            Some(_) => {}
        }
        match &ev.time {
            None | Some(Val::Num) => {}
            Some(Val::Str(s)) if s.trim().parse::<f64>().is_ok_and(f64::is_finite) => {}
            Some(_) => {
                return Err(
                    Reject::new(400, RejectReason::BadTime, "Invalid data format", 6).at(n),
                );
            }
        }
        for meta in [&ev.host, &ev.source, &ev.sourcetype, &ev.index] {
            if !matches!(meta, None | Some(Val::Str(_))) {
                return Err(
                    Reject::new(400, RejectReason::BadMetadata, "Invalid data format", 6).at(n),
                );
            }
        }
        if matches!(ev.fields, Some(FieldsOk(false))) {
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
    Ok(n)
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
        assert_eq!(texts[0], "%ASA-6-302013: Built \"x\"");
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
}
