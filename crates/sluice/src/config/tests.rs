use super::*;
use crate::env::Env;
use std::time::Duration;

fn env(pairs: &[(&str, &str)]) -> Env {
    let mut e = Env::default();
    e.merge_process(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    e
}

#[test]
fn defaults_match_sc4s() {
    let c = Config::default();
    assert_eq!(c.listen.udp_ports, [514]);
    assert_eq!(c.listen.tcp_ports, [514]);
    assert_eq!(c.udp.sockets, 4);
    assert_eq!(c.udp.window, 250_000);
    assert_eq!(c.udp.fetch_limit, 1000);
    assert_eq!(c.tcp.window, 20_000_000);
    assert_eq!(c.stream.tcp.max_connections, 2000);
    assert_eq!(c.stream.rfc5425.max_connections, 2000);
    assert_eq!(c.listen.tls_ports, [6514]);
    assert_eq!(c.listen.rfc5425_ports, [5425]);
    assert!(!c.tls.enable);
    assert_eq!(c.tls.dir, std::path::PathBuf::from("/etc/syslog-ng/tls"));
    assert_eq!(c.tls.options, SC4S_TLS_OPTIONS);
    assert_eq!(c.tls.cipher_suite, SC4S_CIPHER_SUITE);
    assert_eq!(c.hec.workers, 10);
    assert_eq!(c.hec.batch_lines, 5000);
    assert_eq!(c.hec.batch_bytes, ByteSize(4_096_000));
    assert_eq!(c.hec.batch_timeout, Duration::from_millis(300));
    assert!(!c.hec.compression);
    assert!(c.hec.tls_verify);
    assert_eq!(c.parse.default_timezone, "GMT");
    assert_eq!(c.admin.port, 8080);
    assert_eq!(c.listen.max_message_size, 65_536);
    c.validate().unwrap();
}

#[test]
fn the_documented_example_config_parses_and_is_the_defaults() {
    let text = include_str!("../../../../config/sluice.toml");
    let c = Config::from_toml_str(text).unwrap();
    assert_eq!(
        c,
        Config::default(),
        "config/sluice.toml must document the defaults"
    );
}

#[test]
fn toml_rejects_unknown_keys_and_names_them() {
    let err = Config::from_toml_str("[udp]\nsockts = 4\n").unwrap_err();
    assert!(err.contains("sockts"), "{err}");
    let err = Config::from_toml_str("[udpp]\n").unwrap_err();
    assert!(err.contains("udpp"), "{err}");
}

#[test]
fn toml_values() {
    let c = Config::from_toml_str(
        "[udp]\nsockets = 8\nrcvbuf = \"64MiB\"\nbalance = \"cbpf\"\n\
         [hec]\nurls = [\"https://a:8088\"]\ntoken = \"t\"\nbatch_timeout = 50\ntimeout = 2.5\n",
    )
    .unwrap();
    assert_eq!(c.udp.sockets, 8);
    assert_eq!(c.udp.rcvbuf, ByteSize(64 << 20));
    assert_eq!(c.udp.balance, Balance::Cbpf);
    assert_eq!(c.hec.batch_timeout, Duration::from_millis(50));
    assert_eq!(c.hec.timeout, Duration::from_millis(2500));
    c.validate().unwrap();
}

#[test]
fn sc4s_env_overrides() {
    let mut c = Config::default();
    let e = env(&[
        ("SC4S_LISTEN_DEFAULT_UDP_PORT", "5514,5515"),
        ("SC4S_LISTEN_DEFAULT_TCP_PORT", "disabled"),
        ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "8"),
        ("SC4S_SOURCE_UDP_SO_RCVBUFF", "536870912"),
        ("SC4S_SOURCE_UDP_IW_SIZE", "1000000"),
        ("SC4S_SOURCE_UDP_FETCH_LIMIT", "64"),
        ("SC4S_SOURCE_TCP_IW_SIZE", "500"),
        (
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
            "https://idx1:8088/services/collector, https://idx2:8088",
        ),
        (
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
            "00000000-0000-0000-0000-000000000000",
        ),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY", "no"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "4"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES", "1000"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_BYTES", "1024kb"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", "100"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_HTTP_COMPRESSION", "yes"),
        ("SC4S_DEFAULT_TIMEZONE", "America/Chicago"),
        ("SC4S_LISTEN_STATUS_PORT", "9080"),
        ("SC4S_ENABLE_EBPF", "yes"),
        ("SC4S_ARCHIVE_GLOBAL", "yes"),
    ]);
    let report = c.apply_env(&e).unwrap();
    assert_eq!(c.listen.udp_ports, [5514, 5515]);
    assert!(c.listen.tcp_ports.is_empty());
    assert_eq!(c.udp.sockets, 8);
    assert_eq!(c.udp.rcvbuf, ByteSize(536_870_912));
    assert_eq!(c.udp.window, 1_000_000);
    assert_eq!(c.udp.fetch_limit, 64);
    assert_eq!(c.tcp.window, 500);
    assert_eq!(c.hec.urls.len(), 2);
    assert!(!c.hec.tls_verify);
    assert_eq!(c.hec.workers, 4);
    assert_eq!(c.hec.batch_lines, 1000);
    assert_eq!(c.hec.batch_bytes, ByteSize(1_024_000));
    assert_eq!(c.hec.batch_timeout, Duration::from_millis(100));
    assert!(c.hec.compression);
    assert_eq!(c.parse.default_timezone, "America/Chicago");
    assert_eq!(c.admin.port, 9080);
    assert_eq!(c.udp.balance, Balance::Ebpf);
    assert!(report.unsupported.is_empty(), "{:?}", report.unsupported);
    assert!(c.archive.global);
    c.validate().unwrap();
}

#[test]
fn bad_env_values_name_variable_value_and_origin() {
    let cases = [
        (
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            "51a4",
            "is not a port number",
        ),
        (
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            "70000",
            "is not a port number",
        ),
        ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "0", "at least 1"),
        (
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS",
            "ten",
            "positive whole number",
        ),
        (
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_BYTES",
            "4096xb",
            "unknown size suffix",
        ),
        (
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY",
            "maybe",
            "expected yes/no",
        ),
        ("SC4S_LISTEN_STATUS_PORT", "-1", "port number"),
    ];
    for (var, value, reason) in cases {
        let mut c = Config::default();
        let err = c.apply_env(&env(&[(var, value)])).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{var}={value:?} (from the process environment): ")),
            "{err}"
        );
        assert!(err.contains(reason), "{err}");
    }
}

#[test]
fn rcvbuf_minus_one_means_kernel_default() {
    let mut c = Config::default();
    c.apply_env(&env(&[("SC4S_SOURCE_UDP_SO_RCVBUFF", "-1")]))
        .unwrap();
    assert_eq!(c.udp.rcvbuf, ByteSize(0));
}

#[test]
fn url_without_token_starts_with_a_warning_naming_the_variable() {
    let mut c = Config::default();
    c.apply_env(&env(&[(
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
        "https://x:8088",
    )]))
    .unwrap();
    c.validate().unwrap();
    let w = c.warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].contains("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN"), "{w:?}");
    assert!(Config::default().warnings().is_empty());
}

#[test]
fn ebpf_socket_count() {
    let mut c = Config::default();
    c.apply_env(&env(&[
        ("SC4S_ENABLE_EBPF", "yes"),
        ("SC4S_EBPF_NO_SOCKETS", "6"),
    ]))
    .unwrap();
    assert_eq!(c.udp.sockets, 6);
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[
            ("SC4S_ENABLE_EBPF", "yes"),
            ("SC4S_EBPF_NO_SOCKETS", "6"),
            ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "2"),
        ]))
        .unwrap();
    assert_eq!(c.udp.sockets, 2);
    assert_eq!(r.notes.len(), 1);
}

#[test]
fn default_and_vendor_listeners() {
    let c = Config::default();
    let l: Vec<_> = c
        .listeners()
        .unwrap()
        .into_iter()
        .map(|l| (l.id, l.kind, l.port))
        .collect();
    assert_eq!(
        l,
        [
            ("DEFAULT".into(), Transport::Udp, 514),
            ("DEFAULT".into(), Transport::Udp, 601),
            ("DEFAULT".into(), Transport::Tcp, 514),
            ("DEFAULT".into(), Transport::Tcp, 601),
        ]
    );
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[
            ("SC4S_LISTEN_CISCO_ASA_UDP_PORT", "5000,5001"),
            ("SC4S_LISTEN_CISCO_ASA_TCP_PORT", "5000"),
            ("SC4S_LISTEN_PALOALTO_PANOS_RFC6587_PORT", "6000"),
            ("SC4S_LISTEN_JUNIPER_NETSCREEN_TLS_PORT", "7000"),
            ("SC4S_LISTEN_DEFAULT_RFC5426_PORT", "disabled"),
        ]))
        .unwrap();
    assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
    // TLS ports open only with SC4S_SOURCE_TLS_ENABLE=yes; until then a warning says so.
    assert!(
        c.warnings()
            .iter()
            .any(|w| w.contains("SC4S_LISTEN_JUNIPER_NETSCREEN_TLS_PORT") && w.contains("7000"))
    );
    let l = c.listeners().unwrap();
    let asa: Vec<_> = l
        .iter()
        .filter(|x| x.id == "CISCO_ASA")
        .map(|x| (x.kind, x.port))
        .collect();
    assert_eq!(
        asa,
        [
            (Transport::Udp, 5000),
            (Transport::Udp, 5001),
            (Transport::Tcp, 5000)
        ]
    );
    assert!(
        l.iter()
            .any(|x| x.id == "PALOALTO_PANOS" && x.kind == Transport::Tcp && x.port == 6000)
    );
    assert!(!l.iter().any(|x| x.port == 601 && x.kind == Transport::Udp));
}

#[test]
fn sc4s_test_env_listeners_noparse_and_rfc5424_ids() {
    // The vendor ports of SC4S's own test environment, with the ids SC4S derives.
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[
            ("SC4S_LISTEN_THALES_STA_RFC6587_NOPARSE_PORT", "9003"),
            ("SC4S_LISTEN_CITRIX_NETSCALER_RFC5424_TCP_PORT", "9002"),
            ("SC4S_LISTEN_SIMPLE_TEST_ONE_UDP_PORT", "5514"),
            ("SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL", "yes"),
            ("SC4S_USE_VPS_CACHE", "yes"),
            ("SC4S_NETAPP_ONTAP_NEW_FORMAT", "yes"),
        ]))
        .unwrap();
    assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
    let l = c.listeners().unwrap();
    let find = |port: u16| {
        l.iter()
            .find(|x| x.port == port)
            .map(|x| (x.id.as_str(), x.kind, x.proto))
    };
    assert_eq!(
        find(9003),
        Some(("THALES_STA", Transport::Tcp, SourceProto::Rfc6587NoParse))
    );
    assert_eq!(
        find(9002),
        Some(("CITRIX_NETSCALER_RFC5424", Transport::Tcp, SourceProto::Tcp))
    );
    assert_eq!(
        find(5514),
        Some(("SIMPLE_TEST_ONE", Transport::Udp, SourceProto::Udp))
    );
    assert!(c.parse.vendor_options.checkpoint.noise_control);
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert!(c.parse.vendor_options.use_vps_cache);
    assert!(c.parse.vendor_options.netapp_ontap_new_format);
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[(
            "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_INCOMPLETE_EVENTS",
            "yes",
        )]))
        .unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("discards nothing")),
        "{:?}",
        r.notes
    );
    // A NOPARSE port on a TCP port is a conflict naming both settings.
    let mut c = Config::default();
    c.apply_env(&env(&[(
        "SC4S_LISTEN_THALES_STA_RFC6587_NOPARSE_PORT",
        "514",
    )]))
    .unwrap();
    let e = c.listeners().unwrap_err().to_string();
    assert!(
        e.contains("SC4S_LISTEN_THALES_STA_RFC6587_NOPARSE_PORT"),
        "{e}"
    );
}

#[test]
fn a_port_claimed_twice_names_both_settings() {
    let mut c = Config::default();
    c.apply_env(&env(&[("SC4S_LISTEN_CISCO_ASA_UDP_PORT", "514")]))
        .unwrap();
    let err = c.validate().unwrap_err().to_string();
    assert!(
        err.contains("UDP port 514")
            && err.contains("SC4S_LISTEN_DEFAULT_UDP_PORT")
            && err.contains("SC4S_LISTEN_CISCO_ASA_UDP_PORT"),
        "{err}"
    );
}

#[test]
fn byte_sizes() {
    assert_eq!("4096kb".parse::<ByteSize>().unwrap(), ByteSize(4_096_000));
    assert_eq!("16MiB".parse::<ByteSize>().unwrap(), ByteSize(16 << 20));
    assert_eq!("512".parse::<ByteSize>().unwrap(), ByteSize(512));
    assert_eq!("1g".parse::<ByteSize>().unwrap(), ByteSize(1_000_000_000));
    assert!("kb".parse::<ByteSize>().is_err());
    assert!("99999999999999999999".parse::<ByteSize>().is_err());
}

#[test]
fn port_sharing_and_lock_dir() {
    let c = Config::default();
    assert!(!c.listen.share_ports, "refusing a held port is the default");
    assert_eq!(c.listen.lock_dir, None);

    let c = Config::from_toml_str("[listen]\nshare_ports = true\nlock_dir = \"/run/x\"\n").unwrap();
    assert!(c.listen.share_ports);
    assert_eq!(c.listen.lock_dir, Some(std::path::PathBuf::from("/run/x")));

    let mut c = Config::default();
    c.apply_env(&env(&[
        ("SLUICE_LISTEN_SHARE_PORTS", "yes"),
        ("SLUICE_LISTEN_LOCK_DIR", "/var/run/sluice-a"),
    ]))
    .unwrap();
    assert!(c.listen.share_ports);
    assert_eq!(
        c.listen.lock_dir,
        Some(std::path::PathBuf::from("/var/run/sluice-a"))
    );
    let err = Config::default()
        .apply_env(&env(&[("SLUICE_LISTEN_SHARE_PORTS", "perhaps")]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("SLUICE_LISTEN_SHARE_PORTS=\"perhaps\""),
        "{err}"
    );
    let err = Config::default()
        .apply_env(&env(&[("SLUICE_LISTEN_LOCK_DIR", "")]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("SLUICE_LISTEN_LOCK_DIR"), "{err}");
}

#[test]
fn tls_and_stream_settings_from_sc4s_variables() {
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[
            ("SC4S_SOURCE_TLS_ENABLE", "yes"),
            ("SC4S_TLS", "/opt/sc4s/tls"),
            ("SC4S_RUNTIME_ENV", "k8s"),
            ("SC4S_SOURCE_TLS_SELFSIGNED", "yes"),
            ("SC4S_SOURCE_TLS_OPTIONS", "no-tlsv12"),
            ("SC4S_SOURCE_RFC5425_CIPHER_SUITE", "HIGH:!aRSA"),
            ("SC4S_LISTEN_DEFAULT_TLS_PORT", "16514"),
            ("SC4S_LISTEN_DEFAULT_RFC5425_PORT", "15425"),
            ("SC4S_LISTEN_JUNIPER_NETSCREEN_TLS_PORT", "7000"),
            ("SC4S_LISTEN_JUNIPER_NETSCREEN_RFC5425_PORT", "7001"),
            ("SC4S_SOURCE_TLS_MAX_CONNECTIONS", "50"),
            ("SC4S_SOURCE_RFC6587_MAX_CONNECTIONS", "60"),
            ("SC4S_SOURCE_LISTEN_RFC5425_SOCKETS", "2"),
            ("SC4S_SOURCE_TCP_SO_RCVBUFF", "1048576"),
            ("SC4S_SOURCE_RFC5425_SO_RCVBUFF", "-1"),
            ("SC4S_SOURCE_RFC5426_SO_RCVBUFF", "4MiB"),
            ("SC4S_SOURCE_PROXYCONNECT", "yes"),
            ("SC4S_ENABLE_PARALLELIZE", "yes"),
            ("SLUICE_TCP_FRAME_TIMEOUT", "2.5"),
            ("SLUICE_TCP_IDLE_TIMEOUT", "0"),
            ("SLUICE_TLS_PEER_VERIFY", "optional"),
            ("SLUICE_TLS_CA_DIR", "/opt/ca"),
        ]))
        .unwrap();
    assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
    assert!(c.tls.enable && c.tls.self_signed);
    assert_eq!(
        c.tls.cert_path(),
        std::path::Path::new("/opt/sc4s/tls/tls.crt")
    );
    assert_eq!(
        c.tls.key_path(),
        std::path::Path::new("/opt/sc4s/tls/tls.key")
    );
    assert_eq!(c.tls.options, "no-tlsv12");
    assert_eq!(c.tls.rfc5425_options, SC4S_TLS_OPTIONS);
    assert_eq!(c.tls.rfc5425_cipher_suite, "HIGH:!aRSA");
    assert_eq!(c.tls.peer_verify, PeerVerify::Optional);
    assert_eq!(
        c.tls.ca_dir.as_deref(),
        Some(std::path::Path::new("/opt/ca"))
    );
    assert_eq!(c.stream.tls.max_connections, 50);
    assert_eq!(c.stream.rfc6587.max_connections, 60);
    assert_eq!(c.stream.tcp.max_connections, 2000);
    assert_eq!(c.stream.rfc5425.sockets, 2);
    assert_eq!(c.stream.tcp.rcvbuf, ByteSize(1 << 20));
    assert_eq!(c.stream.rfc5425.rcvbuf, ByteSize(0));
    assert_eq!(c.udp.rfc5426_rcvbuf, ByteSize(4 << 20));
    assert!(c.tcp.proxy_protocol);
    assert_eq!(c.tcp.parallelize, 4, "SC4S's default partition count");
    assert_eq!(c.tcp.frame_timeout, Duration::from_millis(2500));
    assert_eq!(c.tcp.idle_timeout, Duration::ZERO);
    c.validate().unwrap();
    let l = c.listeners().unwrap();
    let tls: Vec<_> = l
        .iter()
        .filter(|s| s.kind == Transport::Tls)
        .map(|s| (s.id.as_str(), s.proto, s.port))
        .collect();
    assert_eq!(
        tls,
        [
            ("DEFAULT", SourceProto::Tls, 16514),
            ("DEFAULT", SourceProto::Rfc5425, 15425),
            ("JUNIPER_NETSCREEN", SourceProto::Tls, 7000),
            ("JUNIPER_NETSCREEN", SourceProto::Rfc5425, 7001),
        ]
    );
    assert!(c.warnings().is_empty(), "{:?}", c.warnings());
}

#[test]
fn parallelize_partitions_and_bad_stream_values() {
    let mut c = Config::default();
    c.apply_env(&env(&[
        ("SC4S_ENABLE_PARALLELIZE", "yes"),
        ("SC4S_PARALLELIZE_NO_PARTITION", "2"),
    ]))
    .unwrap();
    assert_eq!(c.tcp.parallelize, 2);
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[("SC4S_PARALLELIZE_NO_PARTITION", "2")]))
        .unwrap();
    assert_eq!(c.tcp.parallelize, 0);
    assert_eq!(r.notes.len(), 1);
    for (var, value) in [
        ("SC4S_SOURCE_TLS_MAX_CONNECTIONS", "0"),
        ("SLUICE_TCP_FRAME_TIMEOUT", "0"),
        ("SLUICE_TCP_IDLE_TIMEOUT", "-1"),
        ("SLUICE_TLS_PEER_VERIFY", "sometimes"),
        ("SC4S_SOURCE_PROXYCONNECT", "maybe"),
        ("SLUICE_TCP_KEEPALIVE", "soon"),
        ("SC4S_SOURCE_LISTEN_RFC5426_SOCKETS", "0"),
    ] {
        let err = Config::default()
            .apply_env(&env(&[(var, value)]))
            .unwrap_err()
            .to_string();
        assert!(err.contains(var) && err.contains(value), "{err}");
    }
}

#[test]
fn a_tls_port_on_a_tcp_port_is_a_conflict() {
    let mut c = Config::default();
    c.apply_env(&env(&[
        ("SC4S_SOURCE_TLS_ENABLE", "yes"),
        ("SC4S_LISTEN_DEFAULT_TLS_PORT", "514"),
    ]))
    .unwrap();
    let err = c.validate().unwrap_err().to_string();
    assert!(
        err.contains("TCP port 514")
            && err.contains("SC4S_LISTEN_DEFAULT_TCP_PORT")
            && err.contains("SC4S_LISTEN_DEFAULT_TLS_PORT"),
        "{err}"
    );
    // TLS on with every TLS port disabled: valid, with a warning.
    let mut c = Config::default();
    c.apply_env(&env(&[
        ("SC4S_SOURCE_TLS_ENABLE", "yes"),
        ("SC4S_LISTEN_DEFAULT_TLS_PORT", "disabled"),
        ("SC4S_LISTEN_DEFAULT_RFC5425_PORT", ""),
    ]))
    .unwrap();
    c.validate().unwrap();
    assert!(c.warnings().iter().any(|w| w.contains("no TLS port")));
}

#[test]
fn rfc5426_sockets_keepalive_and_the_per_socket_connection_limit() {
    let mut c = Config::default();
    assert_eq!(c.udp.rfc5426_sockets, 4);
    assert_eq!(c.tcp.keepalive, Duration::from_secs(60));
    assert_eq!(c.stream.tcp.port_limit(), 2000);
    c.apply_env(&env(&[
        ("SC4S_SOURCE_LISTEN_RFC5426_SOCKETS", "2"),
        ("SC4S_SOURCE_LISTEN_UDP_SOCKETS", "6"),
        ("SLUICE_TCP_KEEPALIVE", "0"),
        ("SC4S_SOURCE_RFC6587_MAX_CONNECTIONS", "300"),
        ("SC4S_SOURCE_LISTEN_RFC6587_SOCKETS", "3"),
    ]))
    .unwrap();
    assert_eq!((c.udp.rfc5426_sockets, c.udp.sockets), (2, 6));
    assert!(c.tcp.keepalive.is_zero());
    // SC4S gives each socket's source its own max-connections().
    assert_eq!(c.stream.rfc6587.port_limit(), 900);
    assert_eq!(c.stream.tcp.port_limit(), 2000);
}

#[test]
fn unknown_sluice_variables_are_reported_not_ignored() {
    let mut c = Config::default();
    let r = c
        .apply_env(&env(&[
            ("SLUICE_TCP_IDEL_TIMEOUT", "5"),
            ("SLUICE_TCP_IDLE_TIMEOUT", "5"),
            ("SLUICE_LOG", "debug"),
        ]))
        .unwrap();
    assert_eq!(r.unsupported, ["SLUICE_TCP_IDEL_TIMEOUT"]);
    assert_eq!(c.tcp.idle_timeout, Duration::from_secs(5));
}

#[test]
fn the_commit_cargo_run_leaks_into_the_environment_is_not_reported() {
    // `cargo run` sets the build script's rustc-env variables for the program: the commit
    // compiled in is not a setting anyone made.
    let mut c = Config::default();
    let built = env!("SLUICE_GIT_COMMIT");
    let r = c.apply_env(&env(&[("SLUICE_GIT_COMMIT", built)])).unwrap();
    assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
    // Set by hand to something else, it is a variable sluice does not read.
    let r = c
        .apply_env(&env(&[("SLUICE_GIT_COMMIT", "not-this-build")]))
        .unwrap();
    assert_eq!(r.unsupported, ["SLUICE_GIT_COMMIT"]);
}

#[test]
fn destinations_routing_and_archive_from_toml() {
    let c = Config::from_toml_str(
        r#"
[hec]
urls = ["https://a:8088"]
[destinations.other]
mode = "select"
[destinations.other.hec]
urls = ["https://b:8088"]
workers = 2
[destinations.other.buffer]
dir = "/srv/b"
[routing]
default_global = false
[routing.alternates]
cisco_asa = ["d_hec_fmt_other", "d_hec_fmt"]
[archive]
vendor_products = ["pan_panos"]
mode = "diode"
"#,
    )
    .unwrap();
    c.validate().unwrap();
    let plan = c.destination_plan();
    assert_eq!(
        plan.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["default", "other", "archive"]
    );
    assert_eq!(plan[1].mode, DestMode::Select);
    assert_eq!(plan[0].mode, DestMode::Select);
    let err = Config::from_toml_str("[destinations.other]\nmode = \"sometimes\"\n").unwrap_err();
    assert!(err.contains("sometimes"), "{err}");
    let err = Config::from_toml_str("[routing]\nalternatives = {}\n").unwrap_err();
    assert!(err.contains("alternatives"), "{err}");
}
