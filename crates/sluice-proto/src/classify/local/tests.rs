//! Local applications end to end in process: files loaded, a line classified and encoded,
//! the HEC event checked.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use crate::classify::context::ContextFiles;
use crate::classify::{Classification, Classifier, Settings, SourceMeta, Transport, classify};
use crate::event::{EncodeOptions, encode_event};
use crate::message::Message;
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
    event_and_text(cx, line).1
}

pub(crate) fn event_from(cx: &Classifier, line: &str, src: SourceMeta<'_>) -> serde_json::Value {
    event_and_text_from(cx, line, src).1
}

/// The HEC event as encoded and as read, from the usual source.
pub(crate) fn event_and_text(cx: &Classifier, line: &str) -> (String, serde_json::Value) {
    event_and_text_from(cx, line, src_from([192, 0, 2, 10]))
}

fn event_and_text_from(
    cx: &Classifier,
    line: &str,
    src: SourceMeta<'_>,
) -> (String, serde_json::Value) {
    let out = event_text(cx, line, src);
    let e = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (out, e)
}

/// The HEC event as encoded (a key twice would be lost in a `serde_json::Value`).
pub(crate) fn event_text(cx: &Classifier, line: &str, src: SourceMeta<'_>) -> String {
    with_class_from(cx, line, src, |msg, src, class| {
        let mut out = Vec::new();
        encode_event(
            &mut out,
            msg,
            class,
            src,
            NOW * 1_000_000,
            &EncodeOptions::new("sluice-test"),
        );
        String::from_utf8(out).expect("UTF-8")
    })
}

/// Parses and classifies `line` from 192.0.2.10 and hands the message, its source and its
/// classification to `f` (they borrow one another, so they cannot be returned).
pub(crate) fn with_class<'t, R>(
    cx: &'t Classifier,
    line: &str,
    f: impl FnOnce(&Message<'_>, &SourceMeta<'_>, &Classification<'_, 't>) -> R,
) -> R {
    with_class_from(cx, line, src_from([192, 0, 2, 10]), f)
}

fn with_class_from<'t, R>(
    cx: &'t Classifier,
    line: &str,
    src: SourceMeta<'_>,
    f: impl FnOnce(&Message<'_>, &SourceMeta<'_>, &Classification<'_, 't>) -> R,
) -> R {
    let zone = Zone::utc();
    let msg = parse(
        line.as_bytes(),
        &ParseOptions {
            now_unix_secs: NOW,
            zone: &zone,
        },
    );
    let scratch = super::Scratch::new();
    let c = classify(&msg, &src, NOW, cx, &scratch);
    f(&msg, &src, &c)
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
    let e = event(
        cx,
        "<38>Mar 31 02:08:27 relay rexdev: box-7 alice logged in",
    );
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
    assert_eq!(
        s(&e, "event"),
        "level=warn msg=\"disk full, 91%\" src=10.0.0.1 time=12:00"
    );
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
    let deny = event(
        cx,
        "<134>Mar 31 02:08:27 r1 flowdev: act=DENY;src=10.1.2.3;id=abcdef;junk=x",
    );
    assert_eq!(s(&deny, "sourcetype"), "flow:deny");
    assert_eq!(s(&deny, "index"), "flowidx");
    assert_eq!(s(&deny, "fields/sc4s_class"), "deny");
    assert_eq!(s(&deny, "event"), "deny from ##.#.#.# [abcd]");
    assert!(
        s(&deny, "fields/sc4s_tags").ends_with("|.app.app-syslog-flowdev|flowdev:marked"),
        "{deny}"
    );
    let debug = event(
        cx,
        "<135>Mar 31 02:08:27 r1 flowdev: act=ALLOW;src=1.2.3.4;id=1;env=yes",
    );
    assert_eq!(s(&debug, "index"), "netops");
    assert_eq!(s(&debug, "fields/sc4s_class"), "debug");
    assert_eq!(s(&debug, "fields/flow_env"), "from-env");
    let other = event(
        cx,
        "<134>Mar 31 02:08:27 r1 flowdev: act=ALLOW;src=1.2.3.4;id=1",
    );
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
                set("$(if ('${.t.a}' == 5) five other)|$(replace-delimiter ',' ';' ${.t.b})|$(implode '+' $(explode ':' ${.t.c}))|$(list-slice 1:3 a,b,c,d)|$(+ ${.t.a} 2)|$(sanitize --ctrl-chars 'x/y')|$(strip '  s  ')|${.t.none:-dflt}|$(length abc)|$(format-json x=1 y.z=$$2)|$(url-encode 'a b/é~')|$(lowercase ${.t.b} 'X Y')|$(uppercase $(lowercase Ab) c)", value("MESSAGE"));
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
        r#"five|a;b|x+y+z|b,c|7|x_y|s|dflt|3|{"x":"1","y":{"z":"$2"}}|a%20b%2F%C3%A9~|a,b x y|AB C"#
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
    assert!(
        s(&e, "fields/sc4s_tags").contains("wireformat:rfc3164"),
        "{e}"
    );
}

const VPS: &str = r#"
block parser app-vps-test-netgear() {
    channel {
        if {
            filter { host("^ng-fw-") };
            parser { p_set_netsource_fields(vendor('netgear') product('fw')); };
        } else {
            parser { p_set_netsource_fields(vendor('netgear') product('switch')); };
        };
    };
};
application app-vps-test-netgear[sc4s-vps] {
    filter { host("ng-*" type(glob)) or netmask(198.51.100.0/24) };
    parser { app-vps-test-netgear(); };
};
application app-netsource-netgear_fw[sc4s-network-source] {
    filter { "${.netsource.sc4s_vendor_product}" eq "netgear_fw" and tags("ns_vendor:netgear") };
    parser {
        rewrite {
            r_set_splunk_dest_default(index("netfw") sourcetype("netgear:fw") vendor("netgear") product("fw"));
        };
    };
};
"#;

#[test]
fn vps_applications_name_the_source() {
    let cx = classifier(&[("vps.conf", VPS)]);
    let fw = event(cx, "<134>Mar 31 02:08:27 NG-FW-1 kernel: dropped");
    assert_eq!(s(&fw, "sourcetype"), "netgear:fw");
    assert_eq!(s(&fw, "fields/sc4s_vendor"), "netgear");
    // The vendor/product without a parser of its own: SC4S's netsource fallback.
    let sw = event(cx, "<134>Mar 31 02:08:27 ng-sw-1 kernel: link up");
    assert_eq!(s(&sw, "sourcetype"), "nix:syslog");
    assert_eq!(s(&sw, "fields/sc4s_vendor"), "netgear");
    assert_eq!(s(&sw, "fields/sc4s_product"), "switch");
    assert_eq!(s(&sw, "fields/sc4s_class"), "nix_syslog");
    let by_net = event_from(
        cx,
        "<134>Mar 31 02:08:27 other kernel: x",
        src_from([198, 51, 100, 7]),
    );
    assert_eq!(s(&by_net, "fields/sc4s_product"), "switch");
    let none = event(cx, "<134>Mar 31 02:08:27 other kernel: x");
    assert_eq!(s(&none, "fields/sc4s_vendor"), "nix");
}

const POST: &str = r#"
application app-postfilter-tag_pci[sc4s-postfilter] {
    filter { "${fields.sc4s_vendor}" eq "nix" and host("^pci-") };
    parser {
        rewrite {
            r_set_splunk_dest_update_v2(index("pci_nix") sourcetype("nix:syslog:pci"));
            set("pci", value("fields.compliance_zone"));
        };
    };
};
application app-postfilter-drop_noise[sc4s-postfilter] {
    filter { program("noisy" type(string)) };
    parser { rewrite(r_set_dest_splunk_null_queue); };
};
"#;

#[test]
fn postfilter_applications_change_the_finished_event() {
    let cx = classifier(&[("post.conf", POST)]);
    let e = event(cx, "<134>Mar 31 02:08:27 pci-db1 sshd[4]: login");
    assert_eq!(s(&e, "index"), "pci_nix");
    assert_eq!(s(&e, "sourcetype"), "nix:syslog:pci");
    assert_eq!(s(&e, "source"), "program:sshd");
    assert_eq!(s(&e, "fields/compliance_zone"), "pci");
    let e = event(cx, "<134>Mar 31 02:08:27 web1 sshd[4]: login");
    assert_eq!(s(&e, "index"), "osnix");
    // The null queue is the caller's to honour (the destinations): the classification says so.
    let line = "<134>Mar 31 02:08:27 web1 noisy: chatter";
    assert!(with_class(cx, line, |_, _, c| c.null_queue()));
}

const CEF_LOCAL: &str = r#"
application app-cef-acme_ids[cef] {
    filter {
        match("Acme" value(".metadata.cef.device_vendor"))
        and match("IDS" value(".metadata.cef.device_product"));
    };
    parser {
        rewrite {
            r_set_splunk_dest_default(index("netids") sourcetype("acme:ids:cef") vendor("acme") product("ids"));
            set("${.values.act}", value("fields.acme_action"));
        };
    };
};
"#;

#[test]
fn a_cef_application_under_the_built_in_parent() {
    let cx = classifier(&[("cef.conf", CEF_LOCAL)]);
    let e = event(
        cx,
        "<134>Mar 31 02:08:27 h1 CEF:0|Acme|IDS|1.0|100|Probe|5|act=blocked src=10.0.0.1",
    );
    assert_eq!(s(&e, "sourcetype"), "acme:ids:cef");
    assert_eq!(s(&e, "index"), "netids");
    assert_eq!(s(&e, "fields/acme_action"), "blocked");
    let other = event(
        cx,
        "<134>Mar 31 02:08:27 h1 CEF:0|Other|IDS|1.0|100|Probe|5|act=x",
    );
    assert_eq!(s(&other, "sourcetype"), "cef");
}

const SELECT: &str = r#"
application sc4s-lp-cisco_asa_d_hec_fmt_other[sc4s-lp-dest-select-d_hec_fmt_other] {
    filter { 'cisco' eq "${fields.sc4s_vendor}" and 'asa' eq "${fields.sc4s_product}" };
};
application sc4s-lp-drop_debug_d_hec_fmt_other[sc4s-lp-dest-select-drop-d_hec_fmt_other] {
    filter { level(debug) };
};
"#;

#[test]
fn selectors_pick_events_for_a_destination() {
    let cx = classifier(&[("selectors/sel.conf", SELECT)]);
    let p = cx.app_parsers().unwrap();
    assert_eq!(
        p.selector_destinations(),
        vec!["d_hec_fmt_other".to_string()]
    );
    let verdict = |line: &str, dest: &str| {
        with_class(cx, line, |msg, src, c| {
            cx.selects(dest, msg, src, c, NOW, &super::Scratch::new())
        })
    };
    let asa = "<166>Mar 31 02:08:27 fw1 %ASA-6-302013: Built inbound TCP connection";
    let v = verdict(asa, "d_hec_fmt_other");
    assert!(v.has_selectors && v.selected && !v.dropped, "{v:?}");
    let v = verdict("<134>Mar 31 02:08:27 h1 sshd[1]: x", "d_hec_fmt_other");
    assert!(v.has_selectors && !v.selected, "{v:?}");
    let v = verdict(
        "<167>Mar 31 02:08:27 fw1 %ASA-7-302013: Built",
        "d_hec_fmt_other",
    );
    assert!(v.selected && v.dropped, "{v:?}");
    assert!(!verdict(asa, "d_hec_fmt").has_selectors);

    // The same, one application at a time, as the router asks (with a scratch of its own).
    let sels = p.selectors();
    assert_eq!(sels.len(), 2);
    assert!(!sels[0].drop && sels[1].drop);
    assert_eq!(sels[0].destination, "d_hec_fmt_other");
    assert_eq!(sels[0].line, 2);
    let takes = |line: &str, app: u32| {
        with_class(cx, line, |msg, src, c| {
            cx.selector_takes(app, msg, src, c, NOW, &super::Scratch::new())
        })
    };
    assert!(takes(asa, sels[0].app));
    assert!(!takes(asa, sels[1].app));
    assert!(!takes("<134>Mar 31 02:08:27 h1 sshd[1]: x", sels[0].app));
    // An index that is not a selector takes nothing.
    assert!(!takes(asa, 999));
}

#[test]
fn a_named_filter_runs_on_a_classified_event() {
    // A file of filters only (local/config/filters/): no application, so the classifier
    // runs none, but the filter is there for the routing.
    let files = [(
        "filters/f.conf",
        "filter f_asa_info { 'cisco' eq \"${fields.sc4s_vendor}\" and level(info) };\n",
    )];
    let cx = classifier(&files);
    assert!(cx.app_parsers().is_none());
    let id = load(&files)
        .unwrap()
        .filter_id("f_asa_info")
        .expect("defined");
    let matches = |line: &str| {
        with_class(cx, line, |msg, src, c| {
            cx.named_filter_matches(id, msg, src, c, NOW, &super::Scratch::new())
        })
    };
    assert!(matches(
        "<166>Mar 31 02:08:27 fw1 %ASA-6-302013: Built inbound"
    ));
    assert!(!matches(
        "<167>Mar 31 02:08:27 fw1 %ASA-7-302013: Built inbound"
    ));
    assert!(!matches("<134>Mar 31 02:08:27 h1 sshd[1]: x"));
}

/// Selectors and named filters read LOGHOST as every other context does: the host name
/// sluice runs under, not an empty string.
#[test]
fn selectors_and_named_filters_see_loghost() {
    let files = [
        (
            "selectors/sel.conf",
            r#"
application sc4s-lp-by_loghost[sc4s-lp-dest-select-d_here] {
    filter { "${LOGHOST}" eq "sluice-test" };
};
application sc4s-lp-by_other_loghost[sc4s-lp-dest-select-d_elsewhere] {
    filter { "${LOGHOST}" eq "elsewhere" };
};
"#,
        ),
        (
            "filters/f.conf",
            "filter f_here { \"$LOGHOST\" eq \"sluice-test\" };\n",
        ),
    ];
    let cx = classifier(&files);
    let id = load(&files).unwrap().filter_id("f_here").expect("defined");
    let sels = cx.app_parsers().unwrap().selectors();
    with_class(cx, "<134>Mar 31 02:08:27 h1 sshd[1]: x", |msg, src, c| {
        let own = super::Scratch::new();
        assert!(cx.selects("d_here", msg, src, c, NOW, &own).selected);
        assert!(!cx.selects("d_elsewhere", msg, src, c, NOW, &own).selected);
        assert!(cx.selector_takes(sels[0].app, msg, src, c, NOW, &own));
        assert!(!cx.selector_takes(sels[1].app, msg, src, c, NOW, &own));
        assert!(cx.named_filter_matches(id, msg, src, c, NOW, &own));
    });
}

const LOCAL_TEMPLATE: &str = r#"
template t_acme_compact { template("${PROGRAM}|${.values.code}|$(template t_msg_only)"); };
application app-syslog-acme_t[sc4s-syslog-pgm] {
    filter { program("acmet" type(string)) };
    parser {
        regexp-parser(prefix(".values.") patterns('code=(?<code>\d+)'));
        rewrite { r_set_splunk_dest_default(index("main") sourcetype("acme:t") vendor("acme") product("t") template("t_acme_compact")); };
    };
};
application app-syslog-acme_5424[sc4s-syslog-pgm] {
    filter { program("acme5424" type(string)) };
    parser { rewrite { r_set_splunk_dest_default(index("main") sourcetype("acme:5424") vendor("acme") product("x") template("t_5424_hdr_msg")); }; };
};
"#;

#[test]
fn local_and_library_templates_render_the_event() {
    let cx = classifier(&[("t.conf", LOCAL_TEMPLATE)]);
    let e = event(cx, "<134>Mar 31 02:08:27 h1 acmet: state code=42 ok");
    assert_eq!(s(&e, "event"), "acmet|42|state code=42 ok");
    let e = event(cx, "<134>Mar 31 02:08:27 H1 acme5424[7]: hi");
    assert_eq!(
        s(&e, "event"),
        "2024-03-31T02:08:27.000+00:00 h1 acme5424 7 - hi"
    );
}

#[test]
fn in_list_and_same_name_replacement() {
    let text = r#"
application app-syslog-listed[sc4s-syslog-pgm] {
    filter { in-list("/etc/lists/hosts.txt" value("HOST")) };
    parser { rewrite { r_set_splunk_dest_default(index("main") sourcetype("listed") vendor("l") product("l")); }; };
};
# Replaces the built-in application of the same name and topic.
application app-syslog-cef-pgm[sc4s-syslog-pgm] {
    filter { program('CEF' type(string) flags(prefix)) };
    parser { rewrite { r_set_splunk_dest_default(index("main") sourcetype("my:cef") vendor("my") product("cef")); }; };
};
"#;
    let cx = classifier(&[("l.conf", text)]);
    assert_eq!(
        s(&event(cx, "<134>Mar 31 02:08:27 beta x: y"), "sourcetype"),
        "listed"
    );
    assert_eq!(
        s(&event(cx, "<134>Mar 31 02:08:27 gamma x: y"), "sourcetype"),
        "nix:syslog"
    );
    let e = event(cx, "<134>Mar 31 02:08:27 h1 CEF:0|A|B|1|2|n|5|x=y");
    assert_eq!(s(&e, "sourcetype"), "my:cef");
    let missing = load(&[(
        "m.conf",
        "application a[sc4s-syslog] { filter { in-list(\"/nope\" value(\"HOST\")) }; };",
    )]);
    let d = missing.unwrap_err();
    assert!(d[0].message.contains("/nope"), "{d:?}");
}

#[test]
fn kv_keys_configured_or_not_and_literal_comparisons() {
    // `.values.user` is a configured name (a rewrite reads it), the other keys are not; one
    // quoted value has an escape, one has none; `"x" eq "y"` and `"x" eq "x"` are decided at
    // load.
    let text = r#"
block parser app-syslog-kvdev() {
    channel {
        parser { kv-parser(prefix(".values.")); };
        if {
            filter { "x" eq "y" };
            rewrite { set("never", value(".tmp.branch")); };
        } elif {
            filter { "x" eq "x" and "${.values.user}" ne "" };
            rewrite { set("user-${.values.user}", value(".tmp.branch")); };
        };
        rewrite {
            r_set_splunk_dest_default(index("main") sourcetype("kv:${.tmp.branch}") vendor("kv") product("dev") template("t_json_values"));
        };
    };
};
application app-syslog-kvdev[sc4s-syslog-pgm] {
    filter { program('kvdev' type(string)); };
    parser { app-syslog-kvdev(); };
};
"#;
    let cx = classifier(&[("kv.conf", text)]);
    let e = event(
        cx,
        r#"<38>Mar 31 02:08:27 h1 kvdev: user="ann" msg="say \"hi\"" n=3  z = 9"#,
    );
    assert_eq!(s(&e, "sourcetype"), "kv:user-ann", "{e}");
    let body: serde_json::Value = serde_json::from_str(&s(&e, "event")).expect("json");
    assert_eq!(body["user"], "ann", "{body}");
    assert_eq!(body["msg"], "say \"hi\"", "{body}");
    assert_eq!(body["n"], "3", "{body}");
    assert_eq!(body["z"], "9", "{body}");
    // The compiled chain holds the two conditions as constants.
    use super::ir::{Filter, Stmt};
    fn consts(f: &Filter, out: &mut Vec<bool>) {
        match f {
            Filter::Const(b) => out.push(*b),
            Filter::And(v) | Filter::Or(v) => v.iter().for_each(|f| consts(f, out)),
            Filter::Compare { left, right, .. } => assert!(
                left.as_literal().is_none() || right.as_literal().is_none(),
                "two literals are compared at load"
            ),
            _ => {}
        }
    }
    fn walk(stmts: &[Stmt], out: &mut Vec<bool>) {
        for st in stmts {
            match st {
                Stmt::Filter(f) => consts(f, out),
                Stmt::If { branches, .. } => branches.iter().for_each(|b| walk(b, out)),
                _ => {}
            }
        }
    }
    let p = load(&[("kv.conf", text)]).expect("loads");
    let mut found = Vec::new();
    for chain in &p.chains {
        walk(chain, &mut found);
    }
    for a in &p.apps {
        walk(&a.parser, &mut found);
    }
    assert!(found.contains(&false) && found.contains(&true), "{found:?}");
}

#[test]
fn a_name_set_again_is_read_and_written_once_at_its_latest() {
    // Set again within an application, across two (pgm, then postfilter), and set then unset.
    let text = r#"
application app-syslog-againdev[sc4s-syslog-pgm] {
    filter { program('againdev' type(string)); };
    parser {
        kv-parser(prefix(".values."));
        rewrite {
            set("one", value("fields.a"));
            set("b", value("fields.b"));
            set("two", value("fields.a"));
            set("gone", value(".values.tmp"));
            unset(value(".values.tmp"));
            r_set_splunk_dest_default(index("main") sourcetype("again:dev") vendor("again") product("dev") template("t_json_values"));
        };
    };
};
application app-postfilter-againdev[sc4s-postfilter] {
    filter { program('againdev' type(string)); };
    parser {
        rewrite {
            set("three", value("fields.a"));
            set("${.values.n}-${fields.a}", value(".values.n"));
        };
    };
};
"#;
    let cx = classifier(&[("again.conf", text)]);
    let (raw, e) = event_and_text(cx, "<38>Mar 31 02:08:27 h1 againdev: n=1 m=2");
    assert_eq!(s(&e, "sourcetype"), "again:dev", "{raw}");
    assert_eq!(raw.matches("\"a\":").count(), 1, "fields.a once: {raw}");
    assert_eq!(s(&e, "fields/a"), "three", "{raw}");
    assert_eq!(s(&e, "fields/b"), "b", "{raw}");
    // fields.a was set last: it is written after fields.b.
    assert!(
        raw.find("\"b\":\"b\"") < raw.find("\"a\":\"three\""),
        "{raw}"
    );
    let body: serde_json::Value = serde_json::from_str(&s(&e, "event")).expect("json");
    assert_eq!(body["n"], "1-three", "{body}");
    assert_eq!(body["m"], "2", "{body}");
    assert!(body.get("tmp").is_none(), "set then unset: {body}");
    assert_eq!(s(&e, "event").matches("\"n\":").count(), 1, "{body}");
}

#[test]
fn kv_names_under_every_kind_of_prefix() {
    // `fields.` itself, a prefix under it, one it starts, no prefix; and the same field from
    // two parsers (one with the prefix, one with the name whole), which is one field.
    let text = r#"
application app-syslog-prefixdev-split[sc4s-syslog-pgm] {
    filter { program('prefixdev' type(string)); };
    parser {
        rewrite {
            set("one=1 two=2", value(".tmp.a"));
            set("three=3", value(".tmp.b"));
            set("ds.four=4", value(".tmp.c"));
            set("fields.one=11 fields.five=5 plain=p", value(".tmp.d"));
            set("x=1 y=2", value(".tmp.e"));
        };
        app-syslog-prefixdev-parse();
    };
};
block parser app-syslog-prefixdev-parse() {
    channel {
        parser {
            kv-parser(prefix("fields.") template("${.tmp.a}"));
            kv-parser(prefix("fields.kv_") template("${.tmp.b}"));
            kv-parser(prefix("fiel") template("${.tmp.c}"));
            kv-parser(template("${.tmp.d}"));
            kv-parser(prefix(".values.") template("${.tmp.e}"));
        };
        rewrite {
            r_set_splunk_dest_default(index("main") sourcetype("prefix:dev") vendor("prefix") product("dev") template("t_json_values"));
        };
    };
};
"#;
    let cx = classifier(&[("prefix.conf", text)]);
    let (raw, e) = event_and_text(cx, "<38>Mar 31 02:08:27 h1 prefixdev: go");
    assert_eq!(s(&e, "sourcetype"), "prefix:dev", "{raw}");
    // Set by the parser with the prefix, then by the one without: one field, the latest.
    assert_eq!(s(&e, "fields/one"), "11", "{raw}");
    assert_eq!(raw.matches("\"one\":").count(), 1, "{raw}");
    assert_eq!(s(&e, "fields/two"), "2", "{raw}");
    assert_eq!(s(&e, "fields/kv_three"), "3", "{raw}");
    assert_eq!(s(&e, "fields/four"), "4", "{raw}");
    assert_eq!(s(&e, "fields/five"), "5", "{raw}");
    let body: serde_json::Value = serde_json::from_str(&s(&e, "event")).expect("json");
    assert_eq!(body["x"], "1", "{body}");
    assert_eq!(body["y"], "2", "{body}");
}
