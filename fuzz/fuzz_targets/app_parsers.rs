//! Fuzz target `app_parsers`: the operator's app-parser loader and compiler
//! (`classify::local`) on arbitrary bytes taken as one `.conf` file of a directory, then,
//! when it loads, a classifier built with it classifying and encoding a few fixed messages
//! (syslog, CEF, key=value, JSON), and every destination selector and named filter run on
//! them. Nothing may panic (a bad file is an error with a place), and every event must be one
//! valid JSON object with a non-blank `event`.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use sluice_proto::classify::context::ContextFiles;
use sluice_proto::classify::local::{LoadOptions, Program, Scratch, SourceFile};
use sluice_proto::classify::{Classifier, Settings, SourceMeta, Transport, classify};
use sluice_proto::{EncodeOptions, encode_event};
use sluice_proto::{ParseOptions, Zone, parse};

const MESSAGES: &[&[u8]] = &[
    b"<134>Nov 28 15:00:00 acme-fw-01 widgetd[42]: user=bob action=login code=7",
    b"<166>Mar  5 12:28:50 asa-fw1 : %ASA-6-302013: Built inbound TCP connection",
    b"<134>Mar 31 02:08:27 h1 CEF:0|Acme|IDS|1.0|100|Probe|5|act=blocked src=10.0.0.1",
    b"<13>1 2024-04-04T12:29:53+00:00 h1 app 1 - - {\"a\":1,\"b\":\"x\"}",
];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let files = [SourceFile::new("app_parsers/fuzz.conf", text)];
    let env = |k: &str| (k == "SC4S_FUZZ").then(|| "yes".to_owned());
    let read = |name: &str| Err(format!("{name}: no files in the fuzzer"));
    let program = match Program::load(
        &files,
        &LoadOptions {
            env: &env,
            read: &read,
            strict: false,
        },
    ) {
        Ok(p) => p,
        Err(errors) => {
            assert!(!errors.is_empty(), "a failed load says why");
            for e in &errors {
                let _ = e.to_string();
            }
            return;
        }
    };
    let _ = program.applications();
    let selectors = program.selectors();
    let filter = program.filter_id("f_fuzz");
    let settings = Settings {
        app_parsers: Some(Arc::new(program)),
        loghost: "fuzz".into(),
        ..Settings::default()
    };
    let Ok(cx) = Classifier::new(ContextFiles::default(), &settings) else {
        return;
    };
    let zone = Zone::utc();
    let now = 1_711_850_907;
    let src = SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
        listener_id: "DEFAULT",
    };
    for m in MESSAGES {
        let scratch = Scratch::new();
        let msg = parse(
            m,
            &ParseOptions {
                now_unix_secs: now,
                zone: &zone,
            },
        );
        let class = classify(&msg, &src, now, &cx, &scratch);
        let mut out = Vec::new();
        encode_event(
            &mut out,
            &msg,
            &class,
            &src,
            now * 1_000_000,
            &EncodeOptions::new("fuzz"),
        );
        let v: serde_json::Value = serde_json::from_slice(&out).expect("the event is valid JSON");
        let event = v["event"].as_str().expect("event is a string");
        assert!(!event.is_empty(), "HEC rejects a blank event");
        for s in &selectors {
            let other = Scratch::new();
            let _ = cx.selector_takes(s.app, &msg, &src, &class, now, &other);
        }
        if let Some(id) = filter {
            let other = Scratch::new();
            let _ = cx.named_filter_matches(id, &msg, &src, &class, now, &other);
        }
    }
});
