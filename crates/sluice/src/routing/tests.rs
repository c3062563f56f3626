use super::*;
use crate::config::{ArchiveMode, DestKind};
use crate::env::Env;

fn load(vars: &[(&str, &str)]) -> Result<(Config, crate::config::EnvReport), ConfigError> {
    let mut e = Env::default();
    e.merge_process(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut c = Config::default();
    let r = c.apply_env(&e)?;
    Ok((c, r))
}

fn routing(vars: &[(&str, &str)]) -> Result<Routing, ConfigError> {
    let (c, _) = load(vars)?;
    Routing::build(&c, &c.destination_plan())
}

const BASE: [(&str, &str); 2] = [
    ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088"),
    ("SC4S_DEST_SPLUNK_HEC_OTHER_URL", "http://b:8088"),
];

fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut v = BASE.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn one_destination_needs_no_routing() {
    let r = routing(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088")]).unwrap();
    assert!(r.is_uniform());
    assert_eq!(r.fallback(), 1);
}

#[test]
fn a_global_destination_gets_every_event() {
    let r = routing(&BASE).unwrap();
    assert!(r.is_uniform());
    assert_eq!(r.fallback(), 0b11);
}

#[test]
fn select_destinations_get_only_their_alternates() {
    let r = routing(&with(&[
        ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
        ("SC4S_DEST_CISCO_ASA_ALTERNATES", "d_hec_fmt_other"),
    ]))
    .unwrap();
    assert!(!r.is_uniform());
    assert_eq!(r.fallback(), 0b01);
    for sev in 0..8 {
        assert_eq!(r.dests(b"cisco", b"asa", sev), 0b11);
    }
    assert_eq!(r.dests(b"cisco", b"ios", 6), 0b01);
    assert_eq!(r.dests(b"pan", b"asa", 6), 0b01);
}

#[test]
fn vendors_and_products_with_underscores_are_found() {
    let r = routing(&with(&[
        ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "select"),
        ("SC4S_DEST_PALO_ALTO_NGFW_ALTERNATES", "d_hec_other"),
    ]))
    .unwrap();
    assert_eq!(r.dests(b"palo_alto", b"ngfw", 5), 0b11);
    assert_eq!(r.dests(b"palo", b"alto_ngfw", 5), 0b11);
    assert_eq!(r.dests(b"palo", b"alto", 5), 0b01);
}

#[test]
fn default_in_select_mode_and_hec_global() {
    // SC4S_DEST_SPLUNK_HEC_GLOBAL=no: the default destination only gets what is routed to it.
    let r = routing(&with(&[
        ("SC4S_DEST_SPLUNK_HEC_GLOBAL", "no"),
        ("SC4S_DEST_CISCO_ASA_ALTERNATES", "d_hec_fmt"),
    ]))
    .unwrap();
    assert_eq!(r.fallback(), 0b10);
    assert_eq!(r.dests(b"cisco", b"asa", 5), 0b11);
    // _MODE on DEFAULT, and HEC_GLOBAL winning over it.
    let (c, _) = load(&with(&[("SC4S_DEST_SPLUNK_HEC_DEFAULT_MODE", "SELECT")])).unwrap();
    assert!(!c.routing.default_global);
    let (c, _) = load(&with(&[
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_MODE", "SELECT"),
        ("SC4S_DEST_SPLUNK_HEC_GLOBAL", "yes"),
    ]))
    .unwrap();
    assert!(c.routing.default_global);
}

#[test]
fn filtered_alternates_replace_the_normal_destinations() {
    let r = routing(&with(&[
        ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
        ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "level(debug)"),
        ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_fmt_other"),
    ]))
    .unwrap();
    assert_eq!(
        r.dests(b"cisco", b"asa", 7),
        0b10,
        "debug: only the alternate"
    );
    assert_eq!(
        r.dests(b"cisco", b"asa", 3),
        0b01,
        "err: the normal destinations"
    );
    // Without a filter SC4S uses f_is_nevermatch: nothing changes.
    let r = routing(&with(&[(
        "SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES",
        "d_hec_fmt_other",
    )]))
    .unwrap();
    for sev in 0..8 {
        assert_eq!(r.dests(b"cisco", b"asa", sev), 0b11);
    }
    // A filter per alternate, and ranges.
    let r = routing(&with(&[
        (
            "SC4S_DEST_CISCO_ASA_ALT_FILTER",
            "level(emerg..err),level(info, debug)",
        ),
        (
            "SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES",
            "d_hec_fmt,d_hec_fmt_other",
        ),
    ]))
    .unwrap();
    assert_eq!(r.dests(b"cisco", b"asa", 0), 0b01);
    assert_eq!(r.dests(b"cisco", b"asa", 3), 0b01);
    assert_eq!(
        r.dests(b"cisco", b"asa", 4),
        0b11,
        "warning matches neither"
    );
    assert_eq!(r.dests(b"cisco", b"asa", 6), 0b10);
}

#[test]
fn unknown_filters_and_destinations_name_the_setting() {
    // A name is looked up among the operator's filters; none defines this one.
    let e = routing(&with(&[
        ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "f_is_rfc5424_strict"),
        ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_other"),
    ]))
    .unwrap()
    .resolve_filters(|_| None)
    .unwrap_err()
    .to_string();
    assert!(e.contains("SC4S_DEST_CISCO_ASA_ALT_FILTER"), "{e}");
    assert!(e.contains("f_is_rfc5424_strict"), "{e}");
    // An inline expression other than level(...) is not supported.
    let e = routing(&with(&[
        ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "program(\"asa\")"),
        ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_other"),
    ]))
    .unwrap_err()
    .to_string();
    assert!(e.contains("SC4S_DEST_CISCO_ASA_ALT_FILTER"), "{e}");
    let e = routing(&with(&[(
        "SC4S_DEST_CISCO_ASA_ALTERNATES",
        "d_syslog_relay",
    )]))
    .unwrap_err()
    .to_string();
    assert!(e.contains("SC4S_DEST_CISCO_ASA_ALTERNATES"), "{e}");
    assert!(e.contains("d_syslog_relay"), "{e}");
    let e = routing(&with(&[("SC4S_DEST_CISCO_ASA_ALT_FILTER", "level(bogus)")])).unwrap_err();
    assert!(e.to_string().contains("ALT_FILTER"), "{e}");
    // validate() runs the same checks.
    let (c, _) = load(&with(&[("SC4S_DEST_CISCO_ASA_ALTERNATES", "d_hec_nope")])).unwrap();
    assert!(c.validate().unwrap_err().to_string().contains("d_hec_nope"));
}

#[test]
fn archive_global_and_by_vendor_product() {
    let r = routing(&[
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088"),
        ("SC4S_DEST_CISCO_ASA_ARCHIVE", "yes"),
    ])
    .unwrap();
    assert_eq!(r.fallback(), 0b01);
    assert_eq!(r.dests(b"cisco", b"asa", 5), 0b11);
    let (c, report) = load(&[
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088"),
        ("SC4S_ARCHIVE_GLOBAL", "yes"),
        ("SC4S_GLOBAL_ARCHIVE_MODE", "diode"),
        ("SC4S_VAR", "/srv/sc4s"),
    ])
    .unwrap();
    assert!(report.unsupported.is_empty(), "{:?}", report.unsupported);
    let plan = c.destination_plan();
    assert_eq!(
        plan[1].kind,
        DestKind::Archive {
            dir: "/srv/sc4s/archive".into(),
            mode: ArchiveMode::Diode
        }
    );
    let r = Routing::build(&c, &plan).unwrap();
    assert!(r.is_uniform());
    assert_eq!(r.fallback(), 0b11);
}

#[test]
fn additional_destinations_read_every_per_destination_setting() {
    let (c, report) = load(&with(&[
        ("SC4S_VAR", "/srv/sc4s"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_TOKEN", "tok"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_WORKERS", "3"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_BATCH_LINES", "100"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_TLS_VERIFY", "no"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_DISKBUFF_RELIABLE", "yes"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_DISKBUFF_DISKBUFSIZE", "1gb"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "7"),
        ("SLUICE_HEC_INDEXER_ACK", "yes"),
        ("SC4S_DEST_SPLUNK_HEC_NOURL_WORKERS", "2"),
    ]))
    .unwrap();
    let o = &c.destinations["other"];
    assert_eq!(o.hec.urls, ["http://b:8088"]);
    assert_eq!(o.hec.token, "tok");
    assert_eq!(o.hec.workers, 3, "its own, not the default's 7");
    assert_eq!(o.hec.batch_lines, 100);
    assert!(!o.hec.tls_verify);
    assert!(
        o.hec.indexer_ack,
        "sluice's delivery settings apply to every destination"
    );
    assert_eq!(o.mode, DestMode::Select);
    assert!(o.buffer.reliable);
    assert_eq!(o.buffer.dir, std::path::Path::new("/srv/sc4s/buffer-other"));
    assert_eq!(c.buffer.dir, std::path::Path::new("/srv/sc4s/buffer"));
    assert_eq!(o.buffer.effective_size_for("OTHER", 3).bytes, 3_000_000_000);
    assert_eq!(
        o.hec.dead_letter_dir.as_deref(),
        Some(std::path::Path::new("/srv/sc4s/dead-letter/other"))
    );
    assert_eq!(c.hec.workers, 7);
    // A variable of a destination that has no URL is not read.
    assert_eq!(report.unsupported, ["SC4S_DEST_SPLUNK_HEC_NOURL_WORKERS"]);
    c.validate().unwrap();
    let plan = c.destination_plan();
    assert_eq!(
        plan.iter().map(|d| d.sc4s_name()).collect::<Vec<_>>(),
        ["d_hec_fmt", "d_hec_fmt_other"]
    );
    // Errors name the destination's variables.
    let e = load(&with(&[("SC4S_DEST_SPLUNK_HEC_OTHER_WORKERS", "0")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("SC4S_DEST_SPLUNK_HEC_OTHER_WORKERS"), "{e}");
    let e = load(&with(&[("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SOMETIMES")]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("SC4S_DEST_SPLUNK_HEC_OTHER_MODE"), "{e}");
    let (c, _) = load(&with(&[("SC4S_DEST_SPLUNK_HEC_OTHER_URL", "ftp://x")])).unwrap();
    let d = &c.destinations["other"];
    let e = d
        .hec
        .client_config_for("OTHER", "destinations.other.hec")
        .unwrap_err()
        .to_string();
    assert!(e.contains("SC4S_DEST_SPLUNK_HEC_OTHER_URL"), "{e}");
}

#[test]
fn two_destinations_cannot_share_a_buffer_directory() {
    let (c, _) = load(&with(&[
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", "/data/buf"),
        ("SC4S_DEST_SPLUNK_HEC_OTHER_DISKBUFF_DIR", "/data/buf"),
    ]))
    .unwrap();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("SC4S_DEST_SPLUNK_HEC_OTHER_DISKBUFF_DIR"), "{e}");
}

/// Relay and Kafka destinations are routed by the same plan as the HEC ones: GLOBAL gets
/// everything, SELECT only its alternates, and a filtered alternate by severity.
#[test]
fn relay_and_kafka_destinations_route_like_hec_ones() {
    let base = [
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088"),
        ("SC4S_DEST_SYSLOG_R1_HOST", "relay.example"),
        ("SC4S_DEST_BSD_R2_HOST", "relay.example"),
        ("SLUICE_DEST_KAFKA_K1_BROKERS", "kafka.example:9092"),
    ];
    let (c, _) = load(&base).unwrap();
    let names: Vec<String> = c.destination_plan().iter().map(|d| d.sc4s_name()).collect();
    assert_eq!(
        names,
        ["d_hec_fmt", "d_bsd_r2", "d_syslog_r1", "d_kafka_k1"]
    );
    // All GLOBAL (SC4S's default mode for its relays).
    let r = routing(&base).unwrap();
    assert!(r.is_uniform());
    assert_eq!(r.fallback(), 0b1111);
    let mut vars = base.to_vec();
    vars.extend([
        ("SC4S_DEST_SYSLOG_R1_MODE", "SELECT"),
        ("SC4S_DEST_BSD_R2_MODE", "SELECT"),
        ("SLUICE_DEST_KAFKA_K1_MODE", "SELECT"),
        ("SC4S_DEST_CISCO_ASA_ALTERNATES", "d_syslog_r1,D_KAFKA_K1"),
        ("SC4S_DEST_PAN_NGFW_ALT_FILTER", "level(debug)"),
        ("SC4S_DEST_PAN_NGFW_FILTERED_ALTERNATES", "d_bsd_r2"),
    ]);
    let r = routing(&vars).unwrap();
    assert_eq!(r.fallback(), 0b0001);
    assert_eq!(r.dests(b"cisco", b"asa", 5), 0b1101);
    assert_eq!(r.dests(b"cisco", b"ios", 5), 0b0001);
    assert_eq!(
        r.dests(b"pan", b"ngfw", 7),
        0b0010,
        "debug: only the filtered alternate"
    );
    assert_eq!(r.dests(b"pan", b"ngfw", 3), 0b0001);
}

mod selector_routing {
    use super::*;
    use sluice_proto::classify::local::Selector;

    fn sel(destination: &str, drop: bool, app: u32) -> Selector {
        Selector {
            destination: destination.into(),
            drop,
            app,
            name: format!("sc4s-lp-{app}"),
            file: "sel.conf".into(),
            line: app + 1,
        }
    }

    /// Every kind of destination, the extra ones in SELECT mode unless `global`.
    fn all_kinds(global: bool) -> (Config, Vec<DestPlan>) {
        let mode = if global { "GLOBAL" } else { "SELECT" };
        let (c, _) = load(&[
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088"),
            ("SC4S_DEST_SPLUNK_HEC_OTHER_URL", "http://b:8088"),
            ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", mode),
            ("SC4S_DEST_SYSLOG_RELAY_HOST", "127.0.0.1"),
            ("SC4S_DEST_SYSLOG_RELAY_MODE", mode),
            ("SC4S_DEST_BSD_OLD_HOST", "127.0.0.1"),
            ("SC4S_DEST_BSD_OLD_MODE", mode),
            ("SLUICE_DEST_KAFKA_BUS_BROKERS", "127.0.0.1:9092"),
            ("SLUICE_DEST_KAFKA_BUS_TOPIC", "t"),
            ("SLUICE_DEST_KAFKA_BUS_MODE", mode),
            ("SC4S_DEST_CISCO_ASA_ALTERNATES", "d_hec_fmt_other"),
        ])
        .unwrap();
        let plan = c.destination_plan();
        (c, plan)
    }

    fn bit(plan: &[DestPlan], name: &str) -> u64 {
        1 << Config::resolve_destination(plan, "test", name).unwrap()
    }

    #[test]
    fn a_selector_sends_matching_events_to_a_select_destination_of_every_kind() {
        let (c, plan) = all_kinds(false);
        let names = [
            "d_hec_fmt_other",
            "d_syslog_relay",
            "d_bsd_old",
            "d_kafka_bus",
        ];
        let sels: Vec<Selector> = names
            .iter()
            .enumerate()
            .map(|(i, n)| sel(n, false, i as u32))
            .collect();
        let (s, warnings) = Selectors::build(&sels, &plan);
        assert!(warnings.is_empty(), "{warnings:?}");
        let r = Routing::build(&c, &plan).unwrap().with_selectors(s);
        assert!(!r.is_uniform());
        let default = bit(&plan, "d_hec_fmt");
        assert_eq!(r.fallback(), default);
        for (i, n) in names.iter().enumerate() {
            // Only application i takes the event: only its destination is added.
            let got = r.dests_selected(b"pan", b"ngfw", 6, |a| a == Ask::Selector(i as u32));
            assert_eq!(got, default | bit(&plan, n), "{n}");
        }
        // No selector takes it: the table's set.
        assert_eq!(r.dests_selected(b"pan", b"ngfw", 6, |_| false), default);
        // The alternates already route cisco_asa to OTHER; a selector adds to that.
        let other = bit(&plan, "d_hec_fmt_other");
        assert_eq!(
            r.dests_selected(b"cisco", b"asa", 6, |a| a == Ask::Selector(3)),
            default | other | bit(&plan, "d_kafka_bus")
        );
    }

    #[test]
    fn the_default_hec_destination_answers_to_sc4s_names_and_drop_works_in_both_modes() {
        for global in [false, true] {
            let (c, plan) = all_kinds(global);
            let sels = [
                sel("d_hec_fmt", true, 0),
                sel("d_syslog_relay", true, 1),
                sel("d_syslog_relay", false, 2),
            ];
            let (s, warnings) = Selectors::build(&sels, &plan);
            let r = Routing::build(&c, &plan).unwrap().with_selectors(s);
            let default = bit(&plan, "d_hec_fmt");
            let relay = bit(&plan, "d_syslog_relay");
            let base = r.dests(b"pan", b"ngfw", 6);
            // The drop selector of the default destination keeps the event from it.
            assert_eq!(
                r.dests_selected(b"pan", b"ngfw", 6, |a| a == Ask::Selector(0)) & default,
                0,
                "global={global}"
            );
            // Select and drop of one destination: drop wins (SC4S drops after selecting).
            assert_eq!(
                r.dests_selected(b"pan", b"ngfw", 6, |a| a == Ask::Selector(1)
                    || a == Ask::Selector(2))
                    & relay,
                0
            );
            if global {
                // GLOBAL: every event goes there already; the select is reported as
                // having no effect.
                assert_eq!(base & relay, relay);
                assert!(
                    warnings.iter().any(|w| w.contains("GLOBAL")),
                    "{warnings:?}"
                );
                assert_eq!(r.dests_selected(b"pan", b"ngfw", 6, |_| false), base);
            } else {
                assert_eq!(base & relay, 0);
                assert!(warnings.is_empty(), "{warnings:?}");
                assert_eq!(
                    r.dests_selected(b"pan", b"ngfw", 6, |a| a == Ask::Selector(2)),
                    base | relay
                );
            }
        }
    }

    #[test]
    fn an_unknown_destination_and_the_archive_are_warnings_with_file_and_line() {
        let (c, _) = load(&[
            ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "http://a:8088"),
            ("SC4S_ARCHIVE_GLOBAL", "yes"),
            ("SC4S_VAR", "/tmp/sluice-sel-test"),
        ])
        .unwrap();
        let plan = c.destination_plan();
        let (s, warnings) = Selectors::build(
            &[sel("d_hec_fmt_nosuch", false, 4), sel("d_archive", true, 6)],
            &plan,
        );
        assert!(s.is_none());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("sel.conf:5"), "{}", warnings[0]);
        assert!(warnings[0].contains("d_hec_fmt_nosuch"), "{}", warnings[0]);
        assert!(warnings[1].contains("sel.conf:7"), "{}", warnings[1]);
        assert!(warnings[1].contains("archive"), "{}", warnings[1]);
    }

    #[test]
    fn filtered_alternates_are_final_and_selectors_do_not_see_those_events() {
        let (c, _) = load(&with(&[
            ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
            ("SC4S_DEST_SYSLOG_RELAY_HOST", "127.0.0.1"),
            ("SC4S_DEST_SYSLOG_RELAY_MODE", "SELECT"),
            ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_fmt_other"),
            ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "level(debug)"),
        ]))
        .unwrap();
        let plan = c.destination_plan();
        let (s, _) = Selectors::build(
            &[
                sel("d_syslog_relay", false, 0),
                sel("d_hec_fmt_other", true, 1),
            ],
            &plan,
        );
        let r = Routing::build(&c, &plan).unwrap().with_selectors(s);
        let other = bit(&plan, "d_hec_fmt_other");
        let relay = bit(&plan, "d_syslog_relay");
        let default = bit(&plan, "d_hec_fmt");
        // debug: filtered alternates only, the selectors are not asked.
        assert_eq!(
            r.dests_selected(b"cisco", b"asa", 7, |_| panic!("not asked")),
            other
        );
        // info: the normal set, and the selectors apply.
        assert_eq!(
            r.dests_selected(b"cisco", b"asa", 6, |_| true),
            default | relay
        );
    }

    #[test]
    fn without_selectors_nothing_is_asked() {
        let (c, plan) = all_kinds(false);
        let r = Routing::build(&c, &plan).unwrap().with_selectors(None);
        assert!(r.selectors().is_none());
        assert_eq!(
            r.dests_selected(b"pan", b"ngfw", 6, |_| panic!("not asked")),
            r.dests(b"pan", b"ngfw", 6)
        );
    }
}

#[test]
fn a_named_alt_filter_is_resolved_against_the_operators_filters_and_run_per_event() {
    let vars = with(&[
        ("SC4S_DEST_SPLUNK_HEC_OTHER_MODE", "SELECT"),
        ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_fmt_other"),
        ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "f_asa_denies"),
    ]);
    let r = routing(&vars).unwrap();
    assert!(r.needs_eval());
    // Undefined: the error names the setting and the filter.
    let e = r.resolve_filters(|_| None).unwrap_err().to_string();
    assert!(e.contains("SC4S_DEST_CISCO_ASA_ALT_FILTER"), "{e}");
    assert!(e.contains("f_asa_denies"), "{e}");
    let r = r
        .resolve_filters(|n| (n == "f_asa_denies").then_some(7))
        .unwrap();
    // The filter matches: OTHER only (filtered alternates replace the rest).
    assert_eq!(
        r.dests_selected(b"cisco", b"asa", 6, |a| a == Ask::Filter(7)),
        0b10
    );
    // It does not: the normal destinations.
    assert_eq!(r.dests_selected(b"cisco", b"asa", 6, |_| false), 0b01);
    // Other vendors never run it.
    assert_eq!(
        r.dests_selected(b"pan", b"ngfw", 6, |_| panic!("not asked")),
        0b01
    );
    // `filter(name)` is the same name.
    let vars = with(&[
        ("SC4S_DEST_CISCO_ASA_FILTERED_ALTERNATES", "d_hec_fmt_other"),
        ("SC4S_DEST_CISCO_ASA_ALT_FILTER", "filter(f_asa_denies)"),
    ]);
    assert!(routing(&vars).unwrap().resolve_filters(|_| Some(1)).is_ok());
}
