use std::collections::BTreeMap;

use super::*;
use crate::config::{SourceProto, VendorPorts, parse_ports};

fn base() -> Config {
    let mut c = Config::default();
    c.listen.udp_ports = vec![514];
    c.listen.tcp_ports = vec![514];
    c.listen.rfc5426_ports = vec![601];
    c.listen.rfc6587_ports = vec![601];
    c
}

fn topo(c: &Config) -> Topology {
    Topology::from_config(c).expect("valid listeners")
}

fn changes(pairs: &[(u16, Change)]) -> BTreeMap<u16, Change> {
    pairs.iter().copied().collect()
}

fn udp(t: &Topology, port: u16) -> &UdpPlan {
    let key = PortKey {
        net: Namespace::Udp,
        port,
    };
    match &t.listeners[&key] {
        ListenerPlan::Udp(p) => p,
        ListenerPlan::Stream(_) => panic!("{key} is not UDP"),
    }
}

#[test]
fn built_from_config_one_plan_per_port() {
    let mut c = base();
    c.listen.vendor.insert(
        "CISCO_ASA".into(),
        VendorPorts {
            udp: vec![5000],
            tcp: vec![5000],
            ..VendorPorts::default()
        },
    );
    let t = topo(&c);
    let ports = |v: Vec<u16>| v;
    assert_eq!(
        ports(t.udp().map(|p| p.spec.port).collect()),
        [514, 601, 5000]
    );
    assert_eq!(
        ports(t.streams().map(|p| p.spec.port).collect()),
        [514, 601, 5000]
    );
    assert_eq!(udp(&t, 601).spec.proto, SourceProto::Rfc5426);
    assert_eq!(udp(&t, 5000).spec.id, "CISCO_ASA");
    assert_eq!(t.streams().last().unwrap().spec.id, "CISCO_ASA");
    assert!(t.tls.is_none(), "TLS ports open only with tls.enable");
    let ids: Vec<&str> = t.listener_ids().collect();
    assert!(ids.contains(&"CISCO_ASA") && ids.contains(&"DEFAULT"));
}

#[test]
fn the_same_configuration_changes_nothing() {
    let t = topo(&base());
    let tr = t.transition(topo(&base()));
    assert!(tr.leaves_listeners_alone(), "{tr:?}");
    assert!(tr.needs_restart.is_empty());
    assert_eq!(tr.next, t);
}

#[test]
fn a_changed_port_opens_the_new_one_and_closes_the_old_one() {
    let running = topo(&base());
    let mut c = base();
    c.listen.udp_ports = vec![5514];
    c.listen.tcp_ports = vec![5514];
    let tr = running.transition(topo(&c));
    assert_eq!(
        tr.changes_of(Namespace::Udp),
        changes(&[(514, Change::Close), (5514, Change::Open)])
    );
    assert_eq!(
        tr.changes_of(Namespace::Tcp),
        changes(&[(514, Change::Close), (5514, Change::Open)])
    );
    assert!(tr.needs_restart.is_empty());
}

#[test]
fn udp_socket_settings_of_a_kept_port_need_a_restart_and_keep_their_values() {
    let running = topo(&base());
    let mut c = base();
    c.udp.sockets = 8;
    c.udp.rcvbuf = crate::config::ByteSize(1 << 20);
    c.listen.udp_ports = vec![514, 7000];
    let tr = running.transition(topo(&c));
    // The kept ports keep their sockets; the new one gets the new settings.
    assert_eq!(
        tr.changes_of(Namespace::Udp),
        changes(&[(7000, Change::Open)])
    );
    assert_eq!(udp(&tr.next, 514).sockets, udp(&running, 514).sockets);
    assert_eq!(udp(&tr.next, 601).sockets.sockets, 4);
    assert_eq!(udp(&tr.next, 7000).sockets.sockets, 8);
    // 601 is RFC 5426: its sockets and buffer are rfc5426_sockets and rfc5426_rcvbuf,
    // unchanged, so it needs nothing.
    assert_eq!(tr.needs_restart.len(), 1, "{:?}", tr.needs_restart);
    let note = &tr.needs_restart[0];
    assert!(note.starts_with("UDP port 514: "), "{note}");
    assert!(
        note.contains("sockets (SC4S_SOURCE_LISTEN_{UDP,RFC5426}_SOCKETS) 4 → 8"),
        "{note}"
    );
    assert!(note.contains("receive buffer"), "{note}");
    // Applied, the next reload of the same file finds the same difference again.
    let again = tr.next.transition(topo(&c));
    assert_eq!(again.needs_restart, tr.needs_restart);
    assert!(again.changes_of(Namespace::Udp).is_empty());
}

#[test]
fn a_port_given_to_another_listener_id_restarts_udp_threads_and_replaces_the_stream_listener() {
    let mut c = base();
    c.listen.vendor.insert(
        "CISCO_ASA".into(),
        VendorPorts {
            udp: vec![5000],
            tcp: vec![5000],
            ..VendorPorts::default()
        },
    );
    let running = topo(&c);
    let vendor = c.listen.vendor.remove("CISCO_ASA").unwrap();
    c.listen.vendor.insert("PALOALTO_FW".into(), vendor);
    let tr = running.transition(topo(&c));
    assert_eq!(
        tr.changes_of(Namespace::Udp),
        changes(&[(5000, Change::Restart)])
    );
    assert_eq!(
        tr.changes_of(Namespace::Tcp),
        changes(&[(5000, Change::Replace)])
    );
    assert_eq!(udp(&tr.next, 5000).spec.id, "PALOALTO_FW");
}

#[test]
fn stream_settings_replace_only_the_ports_they_apply_to() {
    let running = topo(&base());
    let mut c = base();
    c.stream.rfc6587.max_connections = 10;
    let tr = running.transition(topo(&c));
    assert_eq!(
        tr.changes_of(Namespace::Tcp),
        changes(&[(601, Change::Replace)])
    );
    assert!(tr.changes_of(Namespace::Udp).is_empty());

    let mut c = base();
    c.tcp.frame_timeout = std::time::Duration::from_secs(3);
    let tr = running.transition(topo(&c));
    assert_eq!(
        tr.changes_of(Namespace::Tcp),
        changes(&[(514, Change::Replace), (601, Change::Replace)])
    );
}

#[test]
fn a_new_tls_setup_replaces_the_tls_ports_only() {
    let mut c = base();
    c.tls.enable = true;
    c.listen.tls_ports = vec![6514];
    c.listen.rfc5425_ports = vec![5425];
    let running = topo(&c);
    let tls = running.tls.as_ref().expect("TLS ports");
    assert_eq!(tls.profiles, [SourceProto::Tls, SourceProto::Rfc5425]);

    // Same setup: the certificates reload in place, no port changes.
    assert!(running.transition(topo(&c)).leaves_listeners_alone());

    c.tls.cipher_suite = "ECDHE+AESGCM".into();
    let tr = running.transition(topo(&c));
    assert!(tr.new_tls);
    assert_eq!(
        tr.changes_of(Namespace::Tcp),
        changes(&[(5425, Change::Replace), (6514, Change::Replace)])
    );

    c.tls.enable = false;
    let tr = running.transition(topo(&c));
    assert!(!tr.new_tls);
    assert!(tr.next.tls.is_none());
    assert_eq!(
        tr.changes_of(Namespace::Tcp),
        changes(&[(5425, Change::Close), (6514, Change::Close)])
    );
}

#[test]
fn an_added_port_opens_and_leaves_the_others_alone() {
    let mut c = base();
    c.listen.udp_ports = parse_ports("514,1514").unwrap();
    let tr = topo(&base()).transition(topo(&c));
    assert_eq!(
        tr.changes_of(Namespace::Udp),
        changes(&[(1514, Change::Open)])
    );
}
