//! The SC4S vendor corpora (`corpus/sc4s-vendors.jsonl` and `corpus/sc4s-vendors-2.jsonl`,
//! described in their `.md`): loading the cases, checking one HEC event against a case, and
//! the known-failing lists. Shared by the in-process tests (`tests/sc4s_vendors*.rs`) and the
//! end-to-end tests over real sockets (the workspace's `tests/e2e_sc4s_vendors*.rs`, which
//! include this file by path). The second corpus is judged under SC4S's own test
//! configuration ([`test_env`]).
//!
//! Each known-failing list (`corpus/sc4s-vendors[-2]-known-failing.txt`, one id per line,
//! `#` comments) may only shrink: a listed case that passes fails the run, so whoever makes
//! it pass removes it.

#![allow(dead_code)]

pub mod test_env;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// "Now" for year inference: 2024-04-15T00:00:00Z, inside the corpus's March-April 2024
/// window (year-less stamps have no expected time; this only keeps them plausible).
pub const NOW_UNIX_SECS: i64 = 1_713_139_200;

/// "Now" for the second corpus: 2024-05-15T00:00:00Z, inside its May 2024 window.
pub const NOW_UNIX_SECS_2: i64 = 1_715_731_200;

pub struct Case {
    pub id: String,
    /// The message (empty for a multi-part case). An octet-counted one (`578 <111>...`) is
    /// sent exactly as written; any other is followed by a newline on a stream.
    pub raw: Vec<u8>,
    /// A multi-part case: messages sent in order on one connection, each followed by a
    /// newline, expected to arrive as ONE event.
    pub parts: Vec<Vec<u8>>,
    /// The port the SC4S test sends to (514 when the case names none).
    pub port: u16,
    /// `tcp` or `udp`.
    pub transport: String,
    pub expect: Value,
}

impl Case {
    /// The bytes a stream sender writes for this case: parts and plain messages each
    /// followed by `\n`, an octet-counted message exactly as written.
    pub fn stream_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.parts.is_empty() {
            out.extend_from_slice(&self.raw);
            if !self.octet_counted() {
                out.push(b'\n');
            }
        } else {
            for p in &self.parts {
                out.extend_from_slice(p);
                out.push(b'\n');
            }
        }
        out
    }

    /// `MSG-LEN SP <`: an RFC 6587 octet-counted frame.
    pub fn octet_counted(&self) -> bool {
        let digits = self.raw.iter().take_while(|b| b.is_ascii_digit()).count();
        digits > 0 && self.raw.get(digits) == Some(&b' ') && self.raw.get(digits + 1) == Some(&b'<')
    }
}

/// One corpus: its file, its known-failing list, and the variable that points elsewhere.
pub struct Corpus {
    pub file: &'static str,
    pub known_failing: &'static str,
    pub env_var: &'static str,
}

/// The first corpus (default listener, built-in configuration).
pub const FIRST: Corpus = Corpus {
    file: "sc4s-vendors.jsonl",
    known_failing: "sc4s-vendors-known-failing.txt",
    env_var: "SLUICE_VENDOR_CORPUS",
};

/// The second corpus (vendor ports, host hints, multi-part; SC4S's test configuration).
pub const SECOND: Corpus = Corpus {
    file: "sc4s-vendors-2.jsonl",
    known_failing: "sc4s-vendors-2-known-failing.txt",
    env_var: "SLUICE_VENDOR_CORPUS_2",
};

pub fn corpus_path() -> PathBuf {
    corpus_path_of(&FIRST)
}

pub fn corpus_path_of(corpus: &Corpus) -> PathBuf {
    if let Some(p) = std::env::var_os(corpus.env_var) {
        return PathBuf::from(p);
    }
    corpus_dir().join(corpus.file)
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

/// The order the second corpus is replayed in, in two waves: first the cases sent to
/// vendor listeners, then those sent to the default ones (multi-part cases first, their
/// groups time out while the rest is sent). Between the waves the daemon's
/// `SC4S_USE_VPS_CACHE` learns what the first wave's hosts are (it merges every second);
/// within a wave nothing is learnt, as everything is sent at once.
pub fn waves<'c>(cases: &'c [Case], env: &test_env::TestEnv) -> [Vec<&'c Case>; 2] {
    let vendor_port = |c: &Case| env.listener(c.port, &c.transport).id != "DEFAULT";
    let first = cases.iter().filter(|c| vendor_port(c)).collect();
    let mut second: Vec<&Case> = cases
        .iter()
        .filter(|c| !vendor_port(c) && !c.parts.is_empty())
        .collect();
    second.extend(
        cases
            .iter()
            .filter(|c| !vendor_port(c) && c.parts.is_empty()),
    );
    [first, second]
}

pub fn load() -> Vec<Case> {
    load_corpus(&FIRST)
}

pub fn load_corpus(corpus: &Corpus) -> Vec<Case> {
    let path = corpus_path_of(corpus);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the vendor corpus {}: {e}", path.display()));
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(n, l)| {
            let v: Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{} line {}: {e}", path.display(), n + 1));
            let parts: Vec<Vec<u8>> = v["parts"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| p.as_str().expect("parts are strings").as_bytes().to_vec())
                        .collect()
                })
                .unwrap_or_default();
            let raw = match v["raw"].as_str() {
                Some(r) => r.as_bytes().to_vec(),
                None => {
                    assert!(!parts.is_empty(), "line {}: neither raw nor parts", n + 1);
                    Vec::new()
                }
            };
            Case {
                id: v["id"].as_str().expect("id").to_owned(),
                raw,
                parts,
                port: v["port"]
                    .as_u64()
                    .map_or(514, |p| u16::try_from(p).expect("port")),
                transport: v["transport"].as_str().unwrap_or("tcp").to_owned(),
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
    known_failing_of(&FIRST)
}

pub fn known_failing_of(corpus: &Corpus) -> BTreeSet<String> {
    let path = corpus_dir().join(corpus.known_failing);
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
    judge_corpus(&FIRST, label, outcomes);
}

/// [`judge`] for `corpus`.
pub fn judge_corpus(corpus: &Corpus, label: &str, outcomes: &[(String, Vec<String>)]) {
    let list = corpus.known_failing;
    let known = known_failing_of(corpus);
    let total = outcomes.len();
    let passed = outcomes.iter().filter(|(_, d)| d.is_empty()).count();
    let mut report = String::new();
    let mut bad = false;
    for (id, diffs) in outcomes {
        let listed = known.contains(id);
        if diffs.is_empty() && listed {
            bad = true;
            report.push_str(&format!("{id}: passes now; remove it from {list}\n"));
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
