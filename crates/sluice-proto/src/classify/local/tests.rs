//! Local applications end to end in process: files loaded, a line classified and encoded,
//! the HEC event checked.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use crate::classify::context::ContextFiles;
use crate::classify::{Classifier, Settings, SourceMeta, Transport, classify};
use crate::event::{EncodeOptions, encode_event};
use crate::parse::{ParseOptions, parse};
use crate::time::Zone;

use super::{LoadOptions, Program, Severity, SourceFile};

pub(crate) const NOW: i64 = crate::classify::testutil::NOW;

pub(crate) fn load(files: &[(&str, &str)]) -> Result<Program, Vec<super::Diagnostic>> {
    load_with(files, false)
}

pub(crate) fn load_with(
    files: &[(&str, &str)],
    strict: bool,
) -> Result<Program, Vec<super::Diagnostic>> {
    let env = |n: &str| match n {
        "SC4S_TEST_FLAG" => Some("yes".to_owned()),
        _ => None,
    };
    let read = |p: &str| match p {
        "/etc/lists/hosts.txt" => Ok("alpha\nbeta\n".to_owned()),
        other => Err(format!("{other}: no such file")),
    };
    let files: Vec<SourceFile> = files.iter().map(|(p, t)| SourceFile::new(*p, *t)).collect();
    Program::load(
        &files,
        &LoadOptions {
            env: &env,
            read: &read,
            strict,
        },
    )
}

/// A classifier with the given app-parser files (leaked: tests only).
pub(crate) fn classifier(files: &[(&str, &str)]) -> &'static Classifier {
    classifier_with(files, ContextFiles::default())
}

pub(crate) fn classifier_with(
    files: &[(&str, &str)],
    context: ContextFiles,
) -> &'static Classifier {
    let program = match load(files) {
        Ok(p) => p,
        Err(d) => panic!("does not load: {d:#?}"),
    };
    let settings = Settings {
        app_parsers: Some(Arc::new(program)),
        loghost: "sluice-test".into(),
        ..Settings::default()
    };
    Box::leak(Box::new(
        Classifier::new(context, &settings).expect("builds"),
    ))
}

pub(crate) fn src_from(ip: [u8; 4]) -> SourceMeta<'static> {
    SourceMeta {
        transport: Transport::Udp,
        dest_port: 514,
        source_ip: IpAddr::V4(Ipv4Addr::from(ip)),
        listener_id: "DEFAULT",
    }
}

/// The HEC event of `line` from 192.0.2.10, as JSON.
pub(crate) fn event(cx: &Classifier, line: &str) -> serde_json::Value {
    event_from(cx, line, src_from([192, 0, 2, 10]))
}

pub(crate) fn event_from(cx: &Classifier, line: &str, src: SourceMeta<'_>) -> serde_json::Value {
    let zone = Zone::utc();
    let msg = parse(
        line.as_bytes(),
        &ParseOptions {
            now_unix_secs: NOW,
            zone: &zone,
        },
    );
    let scratch = super::Scratch::new();
    let class = classify(&msg, &src, NOW, cx, &scratch);
    let mut out = Vec::new();
    encode_event(
        &mut out,
        &msg,
        &class,
        &src,
        NOW * 1_000_000,
        &EncodeOptions::new("sluice-test"),
    );
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
}

pub(crate) fn s(v: &serde_json::Value, path: &str) -> String {
    let mut cur = v;
    for p in path.split('/') {
        cur = &cur[p];
    }
    match cur {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "<none>".into(),
        other => other.to_string(),
    }
}

const ACME: &str = r#"
block parser app-syslog-acme_fw() {
    channel {
        parser {
            kv-parser(prefix(".values.") template("${MESSAGE}"));
        };
        rewrite {
            r_set_splunk_dest_default(
                index("netfw")
                sourcetype("acme:fw")
                vendor("acme")
                product("fw")
            );
        };
        if (match("deny" value(".values.action"))) {
            rewrite {
                r_set_splunk_dest_update_v2(sourcetype("acme:fw:deny") class("deny"));
            };
        };
    };
};
application app-syslog-acme_fw[sc4s-syslog-pgm] {
    filter { program("acmefw" type(string)); };
    parser { app-syslog-acme_fw(); };
};
"#;

#[test]
fn a_pgm_application_takes_its_program() {
    let cx = classifier(&[("acme.conf", ACME)]);
    let e = event(
        cx,
        "<134>Mar 31 02:08:27 fw1 acmefw: action=allow src=10.0.0.1 dst=10.0.0.2",
    );
    assert_eq!(s(&e, "sourcetype"), "acme:fw");
    assert_eq!(s(&e, "index"), "netfw");
    assert_eq!(s(&e, "fields/sc4s_vendor"), "acme");
    assert_eq!(s(&e, "fields/sc4s_product"), "fw");
    assert_eq!(
        s(&e, "event"),
        "acmefw: action=allow src=10.0.0.1 dst=10.0.0.2"
    );
    assert!(
        s(&e, "fields/sc4s_tags").ends_with("|.app.app-syslog-acme_fw"),
        "{e}"
    );
    let e = event(
        cx,
        "<134>Mar 31 02:08:27 fw1 acmefw: action=deny src=10.0.0.1",
    );
    assert_eq!(s(&e, "sourcetype"), "acme:fw:deny");
    assert_eq!(s(&e, "fields/sc4s_class"), "deny");
    assert_eq!(s(&e, "index"), "netfw");
    // Another program: untouched.
    let e = event(cx, "<134>Mar 31 02:08:27 fw1 sshd[1]: hello");
    assert_eq!(s(&e, "sourcetype"), "nix:syslog");
}

#[test]
fn unsupported_constructs_skip_the_application_with_a_place() {
    let text = "application app-x[sc4s-syslog] {\n    filter { rate-limit(\"a\") };\n};\n";
    let p = load(&[("x.conf", text)]).expect("loads");
    assert!(p.is_empty());
    let d = &p.diagnostics()[0];
    assert_eq!((d.file.as_str(), d.line, d.column), ("x.conf", 2, 14));
    assert_eq!(d.severity, Severity::Unsupported);
    assert!(
        d.message
            .contains("application app-x[sc4s-syslog] is not loaded"),
        "{d}"
    );
    assert!(d.message.contains("rate-limit()"), "{d}");
    let strict = load_with(&[("x.conf", text)], true).unwrap_err();
    assert_eq!(strict[0].severity, Severity::Error);
}

#[test]
fn syntax_errors_fail_the_load_with_a_place() {
    let e = load(&[(
        "bad.conf",
        "application a[sc4s-syslog] {\n  filter { host(\"x\" };\n};\n",
    )])
    .unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].file, "bad.conf");
    assert_eq!(e[0].line, 2, "{}", e[0]);
    assert_eq!(e[0].severity, Severity::Error);
}
