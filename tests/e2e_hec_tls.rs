//! TLS towards HEC: sluice delivers to an HTTPS HEC stand-in that requires a client
//! certificate (`SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT` with key.pem, cert.pem and the CA),
//! refuses an indexer whose CA it does not trust with a message that says so, and stops at
//! startup when the mount lacks the client key.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use rustls::server::WebPkiClientVerifier;
use sluice_suite::tls::Ca;
use sluice_suite::{Daemon, DaemonOpts, SinkConfig, SinkHandle, send_udp, sluice_bin};

fn mount(name: &str, client_ca: &Ca, trust: &Ca) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sluice-hec-tls-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let client = client_ca.client("sluice");
    std::fs::write(d.join("cert.pem"), &client.cert_pem).unwrap();
    std::fs::write(d.join("key.pem"), &client.key_pem).unwrap();
    std::fs::write(d.join("ca.pem"), trust.pem()).unwrap();
    d
}

/// An HTTPS sink whose certificate is issued by `server_ca` and which requires a client
/// certificate issued by `client_ca`.
fn mtls_sink(server_ca: &Ca, client_ca: &Ca) -> SinkHandle {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(client_ca.der()).unwrap();
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap();
    let pair = server_ca.server();
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![pair.der.clone()], pair.key_der())
        .unwrap();
    SinkHandle::spawn_thread(SinkConfig {
        record: true,
        tls: Some(Arc::new(cfg)),
        ..SinkConfig::default()
    })
    .expect("sink starts")
}

fn daemon(s: &SinkHandle, dir: &Path) -> Daemon {
    Daemon::start(
        DaemonOpts::default()
            .hec(s)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT", 50)
            .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT", dir.display()),
    )
}

#[test]
fn delivers_over_mtls_with_the_mounted_pair_and_ca() {
    let (server_ca, client_ca) = (Ca::new("indexer CA"), Ca::new("client CA"));
    let s = mtls_sink(&server_ca, &client_ca);
    assert!(s.base_url().starts_with("https://"));
    let dir = mount("ok", &client_ca, &server_ca);
    let d = daemon(&s, &dir);
    let msgs: Vec<Vec<u8>> = (0..50)
        .map(|i| format!("<13>Oct 11 22:14:15 host app: mtls message {i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    send_udp(d.udp_addr(), &refs);
    assert!(
        s.wait_for(50, Duration::from_secs(20)),
        "delivered {} of 50; log:\n{}",
        s.accepted_events(),
        d.log()
    );
    assert_eq!(s.stats().tls_handshake_failures, 0);
    assert!(
        !d.log().contains("TLS_VERIFY=no"),
        "verification stays on: {}",
        d.log()
    );
}

#[test]
fn an_untrusted_indexer_ca_is_refused_with_words() {
    let (server_ca, client_ca, other) = (
        Ca::new("indexer CA"),
        Ca::new("client CA"),
        Ca::new("wrong CA"),
    );
    let s = mtls_sink(&server_ca, &client_ca);
    let dir = mount("badca", &client_ca, &other);
    let d = daemon(&s, &dir);
    send_udp(
        d.udp_addr(),
        &[b"<13>Oct 11 22:14:15 host app: never delivered"],
    );
    d.wait_for_log("not issued by a CA sluice trusts", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(s.accepted_events(), 0);
}

#[test]
fn a_mount_without_the_client_key_stops_startup_naming_the_file() {
    let ca = Ca::new("indexer CA");
    let dir = mount("nokey", &ca, &ca);
    std::fs::remove_file(dir.join("key.pem")).unwrap();
    let out = Command::new(sluice_bin())
        .args(["run", "--check"])
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "https://127.0.0.1:1")
        .env("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t")
        .env(
            "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_MOUNT",
            dir.display().to_string(),
        )
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(&dir.join("key.pem").display().to_string()),
        "{text}"
    );
}
