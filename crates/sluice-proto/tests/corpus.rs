//! Replays the shared conformance corpus (`syslog-parse.jsonl`, rules in its `README.md`)
//! through the parser and compares every field of every case.
//!
//! Which corpus: `SLUICE_CORPUS` (path to a `.jsonl` file) when set, only that one. Otherwise
//! the copy committed in `tests/corpus/` — a clean clone has nothing else — and, when the
//! project's shared corpus is present too (`shared/corpus/syslog-parse.jsonl` in an ancestor
//! of this crate's directory, e.g. `../shared/` next to the main checkout), that one as well,
//! so a newer upstream corpus is checked the day it appears and the committed copy can be
//! refreshed from it. A missing corpus fails the test: a conformance check that silently
//! skips is not one.
//!
//! Harness settings required by the README: year pinned to 2026 ("now" is 2026-07-02T12:00Z,
//! the middle of the year, so every year-less stamp resolves to 2026) and default zone UTC.
//! Timestamps are compared as instants (µs) plus UTC offset, so `Z` equals `+00:00`.
//! Mismatches on `optional` cases are printed as warnings; any other mismatch fails with a
//! per-field diff.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sluice_proto::{ParseOptions, ParsedRecord, Zone, parse};

const CORPUS_FILE: &str = "syslog-parse.jsonl";

fn corpus_paths() -> Vec<PathBuf> {
    if let Some(p) = std::env::var_os("SLUICE_CORPUS") {
        let p = PathBuf::from(p);
        assert!(
            p.is_file(),
            "SLUICE_CORPUS={} does not name a readable file",
            p.display()
        );
        return vec![p];
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let committed = manifest.join("tests").join("corpus").join(CORPUS_FILE);
    assert!(
        committed.is_file(),
        "the committed corpus {} is missing",
        committed.display()
    );
    let mut paths = vec![committed];
    if let Some(shared) = manifest
        .ancestors()
        .map(|dir| dir.join("shared").join("corpus").join(CORPUS_FILE))
        .find(|p| p.is_file())
    {
        paths.push(shared);
    }
    paths
}

/// The README's byte convention: UTF-8 by default, one byte per code point for `latin1`.
fn input_bytes(case: &Value, id: &str) -> Vec<u8> {
    let input = case["input"]
        .as_str()
        .unwrap_or_else(|| panic!("{id}: `input` is not a string"));
    match case.get("input_encoding").and_then(Value::as_str) {
        None => input.as_bytes().to_vec(),
        Some("latin1") => input
            .chars()
            .map(|c| {
                u8::try_from(u32::from(c))
                    .unwrap_or_else(|_| panic!("{id}: latin1 input has code point {c:?} > U+00FF"))
            })
            .collect(),
        Some(other) => panic!("{id}: unknown input_encoding {other:?}"),
    }
}

/// (instant in µs since the epoch, offset in seconds) of an RFC 3339 string.
fn instant_and_offset(s: &str) -> Result<(i128, i32), String> {
    let ts: jiff::Timestamp = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    let offset = if s.ends_with('Z') || s.ends_with('z') {
        0
    } else {
        let tail = s
            .get(s.len().saturating_sub(6)..)
            .ok_or_else(|| format!("{s:?}: no offset"))?;
        let b = tail.as_bytes();
        if !(b[0] == b'+' || b[0] == b'-') || b[3] != b':' {
            return Err(format!("{s:?}: offset is not Z or ±hh:mm"));
        }
        let h: i32 = tail[1..3].parse().map_err(|e| format!("{s:?}: {e}"))?;
        let m: i32 = tail[4..6].parse().map_err(|e| format!("{s:?}: {e}"))?;
        let secs = h * 3600 + m * 60;
        if b[0] == b'-' { -secs } else { secs }
    };
    Ok((ts.as_microsecond() as i128, offset))
}

fn opt_str(v: &Option<String>) -> Value {
    v.as_ref().map_or(Value::Null, |s| Value::String(s.clone()))
}

fn sd_json(r: &ParsedRecord) -> Value {
    match &r.structured_data {
        None => Value::Null,
        Some(els) => Value::Array(
            els.iter()
                .map(|el| {
                    serde_json::json!({
                        "id": el.id,
                        "params": el.params.iter().map(|(n, v)| serde_json::json!([n, v])).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        ),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        let head: String = s.chars().take(160).collect();
        format!("{head}… ({} chars)", s.chars().count())
    } else {
        s
    }
}

/// Field-by-field differences between `expect` and the parser's record.
fn diff(expect: &Value, actual: &ParsedRecord) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut check = |field: &str, want: &Value, got: Value| {
        if *want != got {
            out.push((field.to_string(), short(want), short(&got)));
        }
    };
    check(
        "format",
        &expect["format"],
        Value::from(actual.format.as_str()),
    );
    check(
        "facility",
        &expect["facility"],
        serde_json::json!(actual.facility),
    );
    check(
        "severity",
        &expect["severity"],
        serde_json::json!(actual.severity),
    );
    check(
        "year_inferred",
        &expect["year_inferred"],
        Value::Bool(actual.year_inferred),
    );
    check("hostname", &expect["hostname"], opt_str(&actual.hostname));
    check("appname", &expect["appname"], opt_str(&actual.appname));
    check("procid", &expect["procid"], opt_str(&actual.procid));
    check("msgid", &expect["msgid"], opt_str(&actual.msgid));
    check(
        "structured_data",
        &expect["structured_data"],
        sd_json(actual),
    );
    check("message", &expect["message"], opt_str(&actual.message));

    let want_ts = &expect["timestamp"];
    let got_ts = opt_str(&actual.timestamp);
    let same = match (want_ts.as_str(), actual.timestamp.as_deref()) {
        (None, None) => want_ts.is_null(),
        (Some(w), Some(g)) => match (instant_and_offset(w), instant_and_offset(g)) {
            (Ok(a), Ok(b)) => a == b,
            (Err(e), _) => panic!("corpus timestamp unreadable: {e}"),
            (_, Err(e)) => {
                out.push((
                    "timestamp".into(),
                    short(want_ts),
                    format!("unreadable: {e}"),
                ));
                return out;
            }
        },
        _ => false,
    };
    if !same {
        out.push(("timestamp".into(), short(want_ts), short(&got_ts)));
    }
    out
}

#[test]
fn corpus_conformance() {
    for path in corpus_paths() {
        check_corpus(&path);
    }
}

fn check_corpus(path: &Path) {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read corpus {}: {e}", path.display()));
    let zone = Zone::utc();
    let now: jiff::Timestamp = "2026-07-02T12:00:00Z".parse().expect("literal");
    let opts = ParseOptions {
        now_unix_secs: now.as_second(),
        zone: &zone,
    };

    let (mut req_total, mut req_pass, mut opt_total, mut opt_pass) = (0, 0, 0, 0);
    let mut failures = String::new();
    let mut warnings = String::new();
    for (lineno, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: bad JSON: {e}", path.display(), lineno + 1));
        let id = case["id"].as_str().unwrap_or("<no id>").to_string();
        let optional = case.get("optional").and_then(Value::as_bool) == Some(true);
        let bytes = input_bytes(&case, &id);
        let record = ParsedRecord::from(&parse(&bytes, &opts));
        let d = diff(&case["expect"], &record);
        if optional {
            opt_total += 1;
        } else {
            req_total += 1;
        }
        if d.is_empty() {
            if optional {
                opt_pass += 1;
            } else {
                req_pass += 1;
            }
            continue;
        }
        let sink = if optional {
            &mut warnings
        } else {
            &mut failures
        };
        let _ = writeln!(sink, "{id}{}:", if optional { " (optional)" } else { "" });
        for (field, want, got) in d {
            let _ = writeln!(
                sink,
                "    {field}:\n      expected {want}\n      actual   {got}"
            );
        }
    }

    println!(
        "corpus: {req_pass}/{req_total} required cases pass, {opt_pass}/{opt_total} optional ({})",
        path.display()
    );
    if !warnings.is_empty() {
        println!("warning: optional cases that differ:\n{warnings}");
    }
    assert!(
        req_total + opt_total > 0,
        "corpus {} has no cases",
        path.display()
    );
    assert!(
        failures.is_empty(),
        "corpus: {req_pass}/{req_total} required cases pass; mismatches:\n{failures}"
    );
}
