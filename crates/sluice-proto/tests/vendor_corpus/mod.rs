//! The SC4S vendor corpus (`corpus/sc4s-vendors.jsonl`, described in `corpus/sc4s-vendors.md`):
//! loading the cases, checking one HEC event against a case, and the known-failing list.
//! Shared by the in-process test (`tests/sc4s_vendors.rs`) and the end-to-end test over real
//! sockets (the workspace's `tests/e2e_sc4s_vendors.rs`, which includes this file by path).
//!
//! The known-failing list (`corpus/sc4s-vendors-known-failing.txt`, one id per line, `#`
//! comments) may only shrink: a listed case that passes fails the run, so whoever makes it
//! pass removes it.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// "Now" for year inference: 2024-04-15T00:00:00Z, inside the corpus's March-April 2024
/// window (year-less stamps have no expected time; this only keeps them plausible).
pub const NOW_UNIX_SECS: i64 = 1_713_139_200;

pub struct Case {
    pub id: String,
    pub raw: Vec<u8>,
    pub expect: Value,
}

pub fn corpus_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SLUICE_VENDOR_CORPUS") {
        return PathBuf::from(p);
    }
    corpus_dir().join("sc4s-vendors.jsonl")
}

/// `crates/sluice-proto/tests/corpus`, found from either package's manifest directory.
pub fn corpus_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("tests/corpus"),
        manifest.join("crates/sluice-proto/tests/corpus"),
    ]
    .into_iter()
    .find(|d| d.join("sc4s-vendors.jsonl").is_file())
    .unwrap_or_else(|| manifest.join("tests/corpus"))
}

pub fn load() -> Vec<Case> {
    let path = corpus_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the vendor corpus {}: {e}", path.display()));
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(n, l)| {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{} line {}: {e}", path.display(), n + 1));
            Case {
                id: v["id"].as_str().expect("id").to_owned(),
                raw: v["raw"].as_str().expect("raw").as_bytes().to_vec(),
                expect: v["expect"].clone(),
            }
        })
        .collect();
    assert!(
        !cases.is_empty(),
        "the vendor corpus {} is empty",
        path.display()
    );
    cases
}

pub fn known_failing() -> BTreeSet<String> {
    let path = corpus_dir().join("sc4s-vendors-known-failing.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    text.lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The differences between a HEC event and a case's expectation (empty: the case passes).
pub fn check(case: &Case, event: &Value) -> Vec<String> {
    let e = &case.expect;
    let mut diffs = Vec::new();
    let mut same = |what: &str, got: &Value, want: &Value| {
        if got != want {
            diffs.push(format!("{what}: got {got}, want {want}"));
        }
    };
    same("sourcetype", &event["sourcetype"], &e["sourcetype"]);
    same("index", &event["index"], &e["index"]);
    same("vendor", &event["fields"]["sc4s_vendor"], &e["vendor"]);
    same("product", &event["fields"]["sc4s_product"], &e["product"]);
    if !e["host"].is_null() {
        same("host", &event["host"], &e["host"]);
    }
    if let Some(want) = e["time_epoch"].as_f64() {
        let got = event["time"].as_str().and_then(|t| t.parse::<f64>().ok());
        match got {
            Some(g) if (g - want).abs() < 0.0015 => {}
            _ => diffs.push(format!(
                "time: got {}, want {want} ({})",
                event["time"], e["time_rfc3339"]
            )),
        }
    }
    if let Some(needle) = e["event_contains"].as_str() {
        let text = event["event"].as_str().unwrap_or_default();
        if !text.contains(needle) {
            diffs.push(format!("event: {text:?} does not contain {needle:?}"));
        }
    }
    diffs
}

/// Checks every case's outcome against the known-failing list; panics with a report when a
/// case fails that is not listed, or passes that is. Prints the pass count.
pub fn judge(label: &str, outcomes: &[(String, Vec<String>)]) {
    let known = known_failing();
    let total = outcomes.len();
    let passed = outcomes.iter().filter(|(_, d)| d.is_empty()).count();
    let mut report = String::new();
    let mut bad = false;
    for (id, diffs) in outcomes {
        let listed = known.contains(id);
        if diffs.is_empty() && listed {
            bad = true;
            report.push_str(&format!(
                "{id}: passes now; remove it from sc4s-vendors-known-failing.txt\n"
            ));
        } else if !diffs.is_empty() && !listed {
            bad = true;
            report.push_str(&format!("{id}: FAILS\n  {}\n", diffs.join("\n  ")));
        }
    }
    let ids: BTreeSet<&str> = outcomes.iter().map(|(id, _)| id.as_str()).collect();
    for id in &known {
        if !ids.contains(id.as_str()) {
            bad = true;
            report.push_str(&format!("{id}: listed as failing but not in the corpus\n"));
        }
    }
    println!(
        "{label}: {passed}/{total} SC4S vendor cases pass ({} known failing)",
        known.len()
    );
    if std::env::var_os("SLUICE_VENDOR_CORPUS_VERBOSE").is_some() {
        for (id, diffs) in outcomes.iter().filter(|(_, d)| !d.is_empty()) {
            println!("{id}:\n  {}", diffs.join("\n  "));
        }
    }
    assert!(
        !bad,
        "{label}: vendor corpus regressions or stale list entries:\n{report}"
    );
}
