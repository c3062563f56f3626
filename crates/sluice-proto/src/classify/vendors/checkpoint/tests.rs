use super::{
    Fields, Format, Group, PRODUCT_PATTERNS, choose_host, group, is_splunk_format, one_element,
    pipe_pairs, product_groups,
};
use crate::classify::kv;
use crate::classify::testutil::classify_line;
use crate::message::StructuredData;
use proptest::prelude::*;

/// The groups SC4S's regexes give `product`.
fn by_regex(product: &[u8]) -> u16 {
    let mut set = 0;
    for (i, p) in PRODUCT_PATTERNS.iter().enumerate() {
        if regex::bytes::Regex::new(p).unwrap().is_match(product) {
            set |= 1 << i;
        }
    }
    set
}

#[test]
fn group_matches_regexes() {
    let mut samples: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"VPN".to_vec(),
        b" VPN".to_vec(),
        b"VPN ".to_vec(),
        b"Mobile".to_vec(),
        b"Mobile\tApp".to_vec(),
        b"Compliance".to_vec(),
        b"xCompliance".to_vec(),
        b"Compliance  \t Blade".to_vec(),
        b"url filtering".to_vec(),
        b"UrL \tFiltering".to_vec(),
        b"VPN-1 & FireWall-1".to_vec(),
        b"VPN-1 &Firewall-1".to_vec(),
        b"WiFi".to_vec(),
        b"wifi".to_vec(),
        b"Check Point  Security\tManagement Server".to_vec(),
        b"Anti Malware".to_vec(),
        b"Anti  Malware".to_vec(),
        b"Anti\t\tSpam".to_vec(),
        b"Endpoint\t".to_vec(),
    ];
    // Every alternative as written, and spaced, tabbed, cut and wrapped variants.
    for pat in PRODUCT_PATTERNS {
        for alt in pat.split('|') {
            for lit in super::expand(alt.trim_start_matches('^').trim_end_matches('$')) {
                samples.push(lit.clone());
                samples.push([b"x ".as_slice(), &lit, b" y"].concat());
                samples.push([b"Q".as_slice(), &lit].concat());
                samples.push(
                    lit.iter()
                        .map(|&b| if b == b' ' { b'\t' } else { b })
                        .collect(),
                );
                samples.push(
                    lit.iter()
                        .flat_map(|&b| if b == b' ' { vec![b' ', b' '] } else { vec![b] })
                        .collect(),
                );
                samples.push(lit[..lit.len() - 1].to_vec());
                samples.push(lit.to_ascii_lowercase());
            }
        }
    }
    for s in &samples {
        assert_eq!(
            product_groups(s),
            by_regex(s),
            "{:?}",
            String::from_utf8_lossy(s)
        );
    }
}

#[test]
fn product_group_order() {
    assert_eq!(group(b"Firewall", b"", Format::Splunk), Group::Firewall);
    assert_eq!(group(b"QoS", b"", Format::Splunk), Group::Firewall);
    assert_eq!(group(b"QoS", b"VPN", Format::Splunk), Group::Sessions);
    assert_eq!(group(b"URL Filtering", b"", Format::Syslog), Group::Web);
    assert_eq!(
        group(b"WEB_API_INTERNAL", b"", Format::Syslog),
        Group::Audit
    );
    assert_eq!(group(b"Anti Phishing", b"", Format::Splunk), Group::Email);
    assert_eq!(group(b"IPS", b"", Format::Splunk), Group::Ids);
    assert_eq!(
        group(b"Application", b"", Format::Splunk),
        Group::IdsMalware
    );
    assert_eq!(
        group(b"Identity Awareness", b"", Format::Syslog),
        Group::Sessions
    );
    assert_eq!(group(b"x", b"IKE VPN", Format::Syslog), Group::Sessions);
    assert_eq!(group(b"x", b"IKE VPN", Format::Splunk), Group::Default);
    assert_eq!(group(b"Other", b"", Format::Splunk), Group::Default);
}

#[test]
fn host_rules() {
    assert_eq!(choose_host(b"gw1 x", b"", b"", false), Some(&b"gw1"[..]));
    assert_eq!(
        choose_host(b"", b"CN\\=a-v_gw2,O\\=x", b"", false),
        Some(&b"gw2"[..])
    );
    assert_eq!(
        choose_host(b"", b"", b"cn=gw3,o=y", false),
        Some(&b"gw3"[..])
    );
    assert_eq!(choose_host(b"", b"O=x", b"", false), None);
    // SC4S_LISTEN_CHECKPOINT_SPLUNK_OLD_HOST_RULES: the certificate names first.
    assert_eq!(
        choose_host(b"gw1 x", b"CN=gw4,O=x", b"", true),
        Some(&b"gw4"[..])
    );
    assert_eq!(
        choose_host(b"gw1 x", b"", b"cn=gw5", true),
        Some(&b"gw5"[..])
    );
    assert_eq!(choose_host(b"gw1 x", b"O=x", b"", true), Some(&b"gw1"[..]));
}

#[test]
fn splunk_format() {
    let c = classify_line(
        "time=1710409224|hostname=gw2|product=Firewall|action=Drop|loguid={0x5d}|time=1710409224|src=1.1.1.2|",
    );
    assert_eq!(c.sourcetype, "cp_log");
    assert_eq!(c.index, "netfw");
    assert_eq!(c.source, "checkpoint:firewall");
    assert_eq!(c.vendor, "checkpoint");
    assert_eq!(c.product, "splunk");
    let c = classify_line(
        "time=1710444387|hostname=gw5|product=Syslog|default_device_message=<134>ctasd[5665]: Save done |facility=local use 0|",
    );
    assert_eq!(c.sourcetype, "nix:syslog");
    assert_eq!(c.index, "netops");
    assert_eq!(c.source, "program:ctasd");
}

#[test]
fn syslog_format() {
    let c = classify_line(
        r#"<134>1 2024-03-15T12:48:19.812409+00:00 gw2 CheckPoint 26203 - [sc4s@2620 loguid="{0x6}" originsicname="cn=gw2,o=x" time="1710506899" product="URL Filtering"]"#,
    );
    assert_eq!(c.sourcetype, "cp_log:syslog");
    assert_eq!(c.index, "netproxy");
    assert_eq!(c.source, "checkpoint:web");
    assert_eq!(c.product, "syslog");
}

#[test]
fn splunk_filter() {
    assert!(is_splunk_format(b"time=1710409224|hostname=gw"));
    assert!(is_splunk_format(b"time=1710409224|hostname="));
    assert!(!is_splunk_format(b"time=171040922|hostname=gw"));
    assert!(!is_splunk_format(b"time=17104092245|hostname=gw"));
    assert!(!is_splunk_format(b"time=171040922x|hostname=gw"));
    assert!(!is_splunk_format(b" time=1710409224|hostname=gw"));
    assert!(!is_splunk_format(b"time=1710409224|host=gw"));
}

/// `take_sd`'s general path: what `StructuredData`'s iterators give.
fn slow_fields(b: &[u8]) -> Vec<Option<Vec<u8>>> {
    let mut v = Fields::default();
    for e in StructuredData::from_validated(b)
        .elements()
        .filter(|e| e.id() == b"sc4s@2620")
    {
        for p in e.params() {
            v.take(p.name(), p.raw_value());
        }
    }
    fields(&v)
}

fn fields(v: &Fields<'_>) -> Vec<Option<Vec<u8>>> {
    [
        v.time,
        v.hostname,
        v.originsicname,
        v.origin_sic_name,
        v.product,
        v.fw_subproduct,
        v.default_device_message,
    ]
    .iter()
    .map(|s| Some(s.to_vec()))
    .collect()
}

#[test]
fn one_element_edges() {
    let mut v = Fields::default();
    let sd = br#"[sc4s@2620 product="a\"b" time="1" hostname="h\]x" product="Fire"]"#;
    assert!(one_element(sd, &mut v).is_some());
    assert_eq!(fields(&v), slow_fields(sd));
    assert_eq!(v.product, b"Fire");
    for other in [
        &br#"[sc4s@2620 product=x]"#[..],
        br#"[sc4s@2620 pro]duct="x"]"#,
        br#"[sc4s@2620 product="x"][b@1 a="b"]"#,
        br#"[sc4s@26201 product="x"]"#,
        br#"[sc4s@2620 product="x\"]"#,
        br#"[sc4s@2620 product="x""#,
    ] {
        assert!(one_element(other, &mut Fields::default()).is_none());
    }
    // A second space starts the name, as in the iterators.
    let sd = br#"[sc4s@2620  product="x"]"#;
    let mut v = Fields::default();
    assert!(one_element(sd, &mut v).is_some());
    assert_eq!(fields(&v), slow_fields(sd));
    assert!(one_element(b"[sc4s@2620]", &mut Fields::default()).is_some());
}

fn sd_text() -> impl Strategy<Value = Vec<u8>> {
    let name = prop::sample::select(vec![
        &b"time"[..],
        b"hostname",
        b"product",
        b"fw_subproduct",
        b"originsicname",
        b"origin_sic_name",
        b"default_device_message",
        b"x",
        b"a]b",
        b"q\"",
        b"",
    ]);
    let value = proptest::collection::vec(
        prop::sample::select(vec![b'a', b' ', b'"', b'\\', b']', b'=', b'[']),
        0..8,
    );
    let quoted = prop::bool::weighted(0.9);
    proptest::collection::vec((name, value, quoted), 0..6).prop_map(|params| {
        let mut b = b"[sc4s@2620".to_vec();
        for (n, v, q) in params {
            b.push(b' ');
            b.extend_from_slice(n);
            b.push(b'=');
            if q {
                b.push(b'"');
            }
            b.extend_from_slice(&v);
            if q {
                b.push(b'"');
            }
        }
        b.push(b']');
        b
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn one_element_agrees_with_the_iterators(sd in sd_text(), cut in 0usize..100) {
        for b in [&sd[..], &sd[..sd.len().min(cut)]] {
            let mut v = Fields::default();
            if one_element(b, &mut v).is_some() {
                prop_assert_eq!(fields(&v), slow_fields(b));
            }
        }
    }

    #[test]
    fn pipe_pairs_agrees_with_kv(text in proptest::collection::vec(
        prop::sample::select(vec![b'|', b'=', b'"', b'\\', b' ', b'\t', b'a', b'b']),
        0..60,
    )) {
        let mut got = Vec::new();
        pipe_pairs(&text, |k, v| got.push((k.to_vec(), v.to_vec())));
        let want: Vec<_> = kv::pairs(&text, b'|').map(|p| (p.key.to_vec(), p.value.to_vec())).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn product_groups_agree_with_regexes(words in proptest::collection::vec(
        prop::sample::select(vec![
            &b"Anti"[..], b"-", b"Malware", b"VPN", b"Mobile", b"App", b"Smart", b"Defense",
            b"Fire", b"wall", b"Wall", b"-1", b"&", b"URL", b"Url", b"Filtering", b"Wi", b"fI",
            b"IPS", b"Core", b"DLP", b"Syslog", b" ", b"  ", b"\t", b"Compliance", b"Blade",
        ]),
        0..6,
    )) {
        let text = words.concat();
        prop_assert_eq!(product_groups(&text), by_regex(&text));
    }
}
