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

const PARSERS: &str = r#"
# regexp-parser: named groups into .values., HOST from the message.
block parser app-syslog-rexdev() {
    channel {
        parser {
            regexp-parser(
                prefix(".values.")
                patterns('^(?<host>\S+) (?<user>\w+) logged (?<what>in|out)$', '^other (?<x>.*)')
            );
        };
        rewrite {
            set("${.values.host}", value("HOST"));
            set("user=${.values.user} $(uppercase ${.values.what})", value("MESSAGE"));
            r_set_splunk_dest_default(index("auth") sourcetype("rex:dev") vendor("rex") product("dev"));
        };
    };
};
application app-syslog-rexdev[sc4s-syslog-pgm] {
    filter { program("rexdev" type(string)); };
    parser { app-syslog-rexdev(); };
};

# csv-parser with quotes, greedy last column, t_kv_values.
block parser app-syslog-csvdev() {
    channel {
        parser {
            csv-parser(
                columns("time", "level", "src", "msg")
                prefix(".values.")
                delimiters(",")
                flags(greedy, strip-whitespace)
            );
        };
        rewrite {
            r_set_splunk_dest_default(index("netops") sourcetype("csv:dev") vendor("csv") product("dev") template("t_kv_values"));
        };
    };
};
application app-syslog-csvdev[sc4s-syslog-pgm] {
    filter { program("csvdev"); };
    parser { app-syslog-csvdev(); };
};

# date-parser from a field, json-parser, t_json_values.
block parser app-syslog-jsondev() {
    channel {
        parser { json-parser(prefix(".values.")); };
        parser { date-parser(format("%Y-%m-%dT%H:%M:%S%z", "%s") template("${.values.ts}")); };
        rewrite {
            r_set_splunk_dest_default(index("main") sourcetype("json:dev") vendor("jsondev") product("box") template("t_json_values"));
            set("${.values.device.name}", value("fields.device"));
        };
    };
};
application app-syslog-jsondev[sc4s-syslog] {
    filter { message('{"ts"' type(string) flags(prefix)); };
    parser { app-syslog-jsondev(); };
};
"#;

#[test]
fn regexp_parser_and_rewrites() {
    let cx = classifier(&[("p.conf", PARSERS)]);
    let e = event(cx, "<38>Mar 31 02:08:27 relay rexdev: box-7 alice logged in");
    assert_eq!(s(&e, "sourcetype"), "rex:dev");
    assert_eq!(s(&e, "host"), "box-7");
    assert_eq!(s(&e, "event"), "rexdev: user=alice IN");
    // No pattern matches: the application declines, the message falls through.
    let e = event(cx, "<38>Mar 31 02:08:27 relay rexdev: nothing to see");
    assert_eq!(s(&e, "sourcetype"), "nix:syslog");
}

#[test]
fn csv_parser_and_kv_values() {
    let cx = classifier(&[("p.conf", PARSERS)]);
    let e = event(
        cx,
        "<38>Mar 31 02:08:27 relay csvdev: 12:00, warn ,\"10.0.0.1\",disk full, 91%",
    );
    assert_eq!(s(&e, "sourcetype"), "csv:dev");
    assert_eq!(s(&e, "event"), "level=warn msg=\"disk full, 91%\" src=10.0.0.1 time=12:00");
}

#[test]
fn json_date_and_json_values() {
    let cx = classifier(&[("p.conf", PARSERS)]);
    let e = event(
        cx,
        r#"<38>Mar 31 02:08:27 relay {"ts":"2024-03-30T10:00:00+0200","device":{"name":"d1"},"n":5}"#,
    );
    assert_eq!(s(&e, "sourcetype"), "json:dev");
    assert_eq!(s(&e, "time"), "1711785600.000");
    assert_eq!(s(&e, "fields/device"), "d1");
    let text: serde_json::Value = serde_json::from_str(&s(&e, "event")).unwrap();
    assert_eq!(text["device"]["name"], "d1");
    assert_eq!(text["n"], "5");
}

const FLOW: &str = r##"
@define ops_index "netops"
filter f_flow_deny { message("DENY" type(string) flags(substring)); };
rewrite r_flow_mark { set-tag("flowdev:marked"); };
parser p_flow_kv { kv-parser(prefix(".values.") pair-separator(";")); };
template t_flow { template("$(lowercase ${.values.act}) from ${.values.src} [$(substr ${.values.id} 0 4)]"); };
block parser app-syslog-flowdev(base_index("main")) {
    channel {
        parser(p_flow_kv);
        rewrite {
            r_set_splunk_dest_default(index("`base_index`") sourcetype("flow:dev") vendor("flow") product("dev") template("t_flow"));
            subst('\d', "#", value(".values.src") flags(global));
            unset(value(".values.junk"));
        };
        if (filter(f_flow_deny)) {
            rewrite { r_set_splunk_dest_update_v2(sourcetype("flow:deny") class("deny")); };
            rewrite(r_flow_mark);
        } elif (level(debug)) {
            rewrite { r_set_splunk_dest_update_v2(index("`ops_index`") class("debug")); };
        } else {
            rewrite { set("other", value("fields.flow_kind")); };
        };
        if {
            filter { "${.values.env}" eq "`SC4S_TEST_FLAG`" };
            rewrite { set("from-env", value("fields.flow_env")); };
        };
    };
};
application app-syslog-flowdev[sc4s-syslog-pgm] {
    filter { program('^flowdev$') and not netmask(10.99.0.0/16); };
    parser { app-syslog-flowdev(base_index("flowidx")); };
};
"##;

#[test]
fn branches_named_objects_and_substitutions() {
    let cx = classifier(&[("flow.conf", FLOW)]);
    let deny = event(cx, "<134>Mar 31 02:08:27 r1 flowdev: act=DENY;src=10.1.2.3;id=abcdef;junk=x");
    assert_eq!(s(&deny, "sourcetype"), "flow:deny");
    assert_eq!(s(&deny, "index"), "flowidx");
    assert_eq!(s(&deny, "fields/sc4s_class"), "deny");
    assert_eq!(s(&deny, "event"), "deny from ##.#.#.# [abcd]");
    assert!(s(&deny, "fields/sc4s_tags").ends_with("|.app.app-syslog-flowdev|flowdev:marked"), "{deny}");
    let debug = event(cx, "<135>Mar 31 02:08:27 r1 flowdev: act=ALLOW;src=1.2.3.4;id=1;env=yes");
    assert_eq!(s(&debug, "index"), "netops");
    assert_eq!(s(&debug, "fields/sc4s_class"), "debug");
    assert_eq!(s(&debug, "fields/flow_env"), "from-env");
    let other = event(cx, "<134>Mar 31 02:08:27 r1 flowdev: act=ALLOW;src=1.2.3.4;id=1");
    assert_eq!(s(&other, "fields/flow_kind"), "other");
    assert_eq!(s(&other, "sourcetype"), "flow:dev");
    assert_eq!(s(&other, "fields/flow_env"), "<none>");
    // The netmask excludes this sender.
    let excluded = event_from(
        cx,
        "<134>Mar 31 02:08:27 r1 flowdev: act=DENY;src=1;id=1",
        src_from([10, 99, 1, 1]),
    );
    assert_eq!(s(&excluded, "sourcetype"), "nix:syslog");
}

const FUNCS: &str = r#"
application app-syslog-funcs[sc4s-syslog-pgm] {
    filter { program("funcs") };
    parser {
        channel {
            parser { csv-parser(columns("a", "b", "c") delimiters(" ") prefix(".t.")); };
            rewrite {
                set("$(if ('${.t.a}' == 5) five other)|$(replace-delimiter ',' ';' ${.t.b})|$(implode '+' $(explode ':' ${.t.c}))|$(list-slice 1:3 a,b,c,d)|$(+ ${.t.a} 2)|$(sanitize --ctrl-chars 'x/y')|$(strip '  s  ')|${.t.none:-dflt}|$(length abc)|$(format-json x=1 y.z=$$2)", value("MESSAGE"));
                r_set_splunk_dest_default(index("main") sourcetype("funcs") vendor("f") product("f") template("t_msg_only"));
            };
        };
    };
};
"#;

#[test]
fn template_functions() {
    let cx = classifier(&[("funcs.conf", FUNCS)]);
    let e = event(cx, "<134>Mar 31 02:08:27 r1 funcs: 5 a,b x:y:z");
    assert_eq!(
        s(&e, "event"),
        r#"five|a;b|x+y+z|b,c|7|x_y|s|dflt|3|{"x":"1","y":{"z":"$2"}}"#
    );
}

const ALMOST: &str = r#"
rewrite set_rfc3164_oddbox { set-tag("wireformat:rfc3164_oddbox"); };
filter f_is_oddbox { message('^<\d+>ODD\|') };
block parser app-almost-syslog-oddbox() {
    channel {
        parser {
            regexp-parser(prefix(".tmp.") patterns('^<(?<pri>\d+)>ODD\|(?<host>[^|]+)\|(?<ts>\d+)\|(?<msg>.*)$'));
        };
        parser {
            syslog-parser(flags(assume-utf8, guess-timezone) template("<${.tmp.pri}>Jan  1 00:00:00 ${.tmp.host} oddbox: ${.tmp.msg}"));
        };
        parser { date-parser(format("%s") template("${.tmp.ts}")); };
        rewrite(set_rfc);
        rewrite(set_rfc3164);
        rewrite(set_rfc3164_oddbox);
    };
};
application app-almost-syslog-oddbox[sc4s-almost-syslog] {
    filter { filter(f_is_oddbox); };
    parser { app-almost-syslog-oddbox(); };
};
application app-syslog-oddbox[sc4s-syslog-pgm] {
    filter { program("oddbox") };
    parser { rewrite { r_set_splunk_dest_default(index("odd") sourcetype("odd:box") vendor("odd") product("box")); }; };
};
"#;

#[test]
fn an_almost_syslog_repair_then_a_pgm_application() {
    let cx = classifier(&[("odd.conf", ALMOST)]);
    let e = event(cx, "<134>ODD|Box-9|1711800000|power on");
    assert_eq!(s(&e, "sourcetype"), "odd:box");
    assert_eq!(s(&e, "host"), "box-9");
    assert_eq!(s(&e, "time"), "1711800000.000");
    assert_eq!(s(&e, "event"), "oddbox: power on");
    assert!(s(&e, "fields/sc4s_tags").contains("wireformat:rfc3164"), "{e}");
}
