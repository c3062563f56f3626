//! The second SC4S vendor corpus in process, under SC4S's own test configuration
//! (`tests/fixtures/sc4s-test-env/`): the classifier is built from its env_file (vendor
//! options, vendor listeners) and its context files; each case is framed as the daemon's
//! stream listener frames what it reads on the case's port, parsed, classified with that
//! port's listener id, and encoded. Parts of a multi-part case go through the group stage's
//! rules (`classify::group`) and are joined after their timeout, as the daemon's group task
//! joins them. With `SC4S_USE_VPS_CACHE=yes` (as here) each event teaches an in-memory cache
//! its host's vendor and product, as the daemon's does. Prints `X/295 SC4S vendor cases pass`; the known-failing list may only shrink.

mod vendor_corpus;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sluice_proto::classify::group::{GroupLimits, Grouper, Rule, finish_joined, part};
use sluice_proto::classify::local::{LoadOptions, Program, Scratch};
use sluice_proto::classify::{
    Classifier, Settings, SourceMeta, Transport, VendorOptions, VendorProduct, VpsCache, build,
    classify, classify_no_parse, host_is_nil_or_ip,
};
use sluice_proto::event::{EncodeOptions, encode_event};
use sluice_proto::parse::no_parse;
use sluice_proto::{Decoder, ParseOptions, Zone, parse};

use vendor_corpus::test_env::TestEnv;

/// SC4S's TCP message size (`SC4S_SOURCE_TCP_MAX_MESSAGE_SIZE` default, as the daemon).
const MAX_FRAME: usize = 65_536;

const SENDER: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10));

/// `SC4S_USE_VPS_CACHE` as the daemon keeps it, learning from each event at once (SC4S's
/// tests wait for every event before the next, and the daemon merges every second).
#[derive(Debug, Default)]
struct Remembered(Mutex<HashMap<String, (String, String)>>);

impl VpsCache for Remembered {
    fn lookup(&self, host: &[u8]) -> Option<VendorProduct> {
        let key = String::from_utf8_lossy(host).to_ascii_lowercase();
        let map = self.0.lock().unwrap();
        let (v, p) = map.get(&key)?;
        VendorProduct::new(v.as_bytes(), p.as_bytes())
    }
}

impl Remembered {
    fn learn(&self, event: &Value) {
        let host = event["host"].as_str();
        if host_is_nil_or_ip(host.map(str::as_bytes), SENDER) {
            return;
        }
        let (Some(h), Some(v), Some(p)) = (
            host,
            event["fields"]["sc4s_vendor"].as_str(),
            event["fields"]["sc4s_product"].as_str(),
        ) else {
            return;
        };
        self.0
            .lock()
            .unwrap()
            .insert(h.to_ascii_lowercase(), (v.to_owned(), p.to_owned()));
    }
}

fn classifier(env: &TestEnv, vps: &Arc<Remembered>) -> Classifier {
    let options = VendorOptions::from_env(|k| env.get(k))
        .unwrap_or_else(|e| panic!("the test env_file's vendor options: {e}"));
    let zone = match env.get("SC4S_DEFAULT_TIMEZONE") {
        Some(z) => Zone::from_name(&z).expect("SC4S_DEFAULT_TIMEZONE"),
        None => Zone::utc(),
    };
    let lookup = |k: &str| env.get(k);
    let read = |p: &str| {
        Err(format!(
            "{p}: in-list files are not part of the test configuration"
        ))
    };
    let program = Program::load(
        &env.app_parser_files(),
        &LoadOptions {
            env: &lookup,
            read: &read,
            strict: true,
        },
    )
    .unwrap_or_else(|e| panic!("the test configuration's app-parsers: {e:?}"));
    assert!(
        program.diagnostics().is_empty(),
        "the test app-parsers load cleanly: {:?}",
        program.diagnostics()
    );
    let settings = Settings {
        app_parsers: Some(Arc::new(program)),
        listeners: env.vendor_listener_ids(),
        zone,
        options,
        ..Settings::default()
    };
    let use_vps = settings.options.use_vps_cache;
    let mut cx = build(Some(&env.context_dir()), &settings)
        .unwrap_or_else(|e| panic!("the test configuration's classifier: {e}"));
    if use_vps {
        cx.set_vps_cache(vps.clone());
    }
    cx
}

/// The HEC events one case gives: every frame its bytes hold on its listener, parts joined.
fn replay(case: &vendor_corpus::Case, env: &TestEnv, classifier: &Classifier) -> Vec<Value> {
    let listener = env.listener(case.port, &case.transport);
    let transport = if listener.is_udp() {
        Transport::Udp
    } else {
        Transport::Tcp
    };
    let src = SourceMeta {
        transport,
        dest_port: case.port,
        source_ip: SENDER,
        listener_id: &listener.id,
    };
    let zone = Zone::utc();
    let now = vendor_corpus::NOW_UNIX_SECS_2;
    let popts = ParseOptions {
        now_unix_secs: now,
        zone: &zone,
    };
    let opts = EncodeOptions::new("sluice-test");
    let recv = now * 1_000_000;
    let groups = classifier.group_options();
    let mut grouper: Grouper<Rule> = Grouper::new(GroupLimits::default());
    let mut joined = Vec::new();
    let mut events = Vec::new();
    let scratch = Scratch::new();
    let encode = |line: &[u8], rule: Option<Rule>, events: &mut Vec<Value>| {
        let msg = parse(line, &popts);
        let mut class = classify(&msg, &src, now, classifier, &scratch);
        if let Some(rule) = rule {
            finish_joined(rule, &mut class);
        }
        let mut out = Vec::new();
        encode_event(&mut out, &msg, &class, &src, recv, &opts);
        events.push(
            serde_json::from_slice(&out)
                .unwrap_or_else(|e| panic!("{}: the event is not JSON ({e})", case.id)),
        );
    };
    let frames: Vec<Vec<u8>> = if listener.is_udp() {
        vec![case.raw.clone()]
    } else {
        let bytes = case.stream_bytes();
        let mut decoder = Decoder::new(MAX_FRAME);
        let mut frames = Vec::new();
        let mut it = decoder.frames(&bytes);
        for (_, frame) in it.by_ref() {
            frames.push(frame.to_vec());
        }
        let consumed = it.consumed();
        if let Some(f) = decoder.finish(&bytes[consumed..]) {
            frames.push(f.bytes(&bytes[consumed..]).to_vec());
        }
        frames
    };
    // An RFC6587_NOPARSE listener parses nothing: its network-source applications do.
    let no_parse_listener = listener.proto == "RFC6587_NOPARSE";
    let mut clock_ms = now * 1000;
    for frame in &frames {
        clock_ms += 1;
        if no_parse_listener {
            let msg = no_parse(frame);
            let class = classify_no_parse(&msg, &src, now, classifier, &scratch);
            let mut out = Vec::new();
            encode_event(&mut out, &msg, &class, &src, recv, &opts);
            events.push(serde_json::from_slice(&out).expect("the event is JSON"));
            continue;
        }
        let msg = parse(frame, &popts);
        let class = classify(&msg, &src, now, classifier, &scratch);
        match part(&msg, &class, src.source_ip, &groups) {
            Some(p) => grouper.offer(&p, &p.rule, clock_ms, &mut joined),
            None => encode(frame, None, &mut events),
        }
    }
    // The daemon's group task joins a group once its timeout has passed.
    grouper.expire(clock_ms + 60_000, &mut joined);
    for (rule, line) in joined {
        encode(&line, Some(rule), &mut events);
    }
    events
}

#[test]
fn sc4s_vendor_corpus_2_in_process() {
    let corpus = &vendor_corpus::SECOND;
    let cases = vendor_corpus::load_corpus(corpus);
    let env = TestEnv::load();
    let vps = Arc::new(Remembered::default());
    let classifier = classifier(&env, &vps);
    let mut outcomes = Vec::new();
    // Two waves, as the end-to-end test sends them: the vendor ports' cases, then (after
    // the daemon's VPS cache has learnt from them) the default ports'.
    for wave in vendor_corpus::waves(&cases, &env) {
        let mut learnt = Vec::new();
        for case in wave {
            let events = replay(case, &env, &classifier);
            let diffs = match events.as_slice() {
                [event] => vendor_corpus::check(case, event),
                [] => vec!["no event".to_owned()],
                many => {
                    let mut d = vec![format!("{} events, want one", many.len())];
                    d.extend(vendor_corpus::check(case, &many[0]));
                    d
                }
            };
            outcomes.push((case.id.clone(), diffs));
            learnt.extend(events);
        }
        for e in &learnt {
            vps.learn(e);
        }
    }
    vendor_corpus::judge_corpus(corpus, "in process", &outcomes);
}
