//! Cross-field checks and the expansion of the port settings into listeners.

use super::{Config, ConfigError, ListenerKind, ListenerSpec};

impl Config {
    /// Cross-field checks that no single setting can make.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        if self.udp.sockets == 0 {
            return bad("udp.sockets must be at least 1".into());
        }
        if self.udp.fetch_limit == 0 {
            return bad("udp.fetch_limit must be at least 1".into());
        }
        if self.udp.window == 0 || self.tcp.window == 0 {
            return bad("input windows (udp.window, tcp.window) must be at least 1".into());
        }
        if self.hec.workers == 0 || self.hec.batch_lines == 0 || self.hec.batch_bytes.0 == 0 {
            return bad(
                "hec.workers, hec.batch_lines and hec.batch_bytes must be at least 1".into(),
            );
        }
        if self.listen.max_message_size < 1024 {
            return bad("listen.max_message_size must be at least 1024 bytes".into());
        }
        if self.listeners()?.is_empty() {
            return bad("no listener: every UDP and TCP port list is empty".into());
        }
        Ok(())
    }

    /// Every port to open, in a stable order. Two settings asking for the same port and
    /// transport is an error naming both (SC4S's port validator only logs it, and then one of
    /// the two sources silently never receives). The default listener may name one port in
    /// two settings (RFC 5426 on the plain UDP port): one socket serves both.
    pub fn listeners(&self) -> Result<Vec<ListenerSpec>, ConfigError> {
        let l = &self.listen;
        let mut out: Vec<ListenerSpec> = Vec::new();
        let mut add = |id: &str, kind: ListenerKind, ports: &[u16], setting: String| {
            for &port in ports {
                if let Some(prev) = out.iter().find(|x| x.kind == kind && x.port == port) {
                    if prev.id == id {
                        continue;
                    }
                    return Err(ConfigError::Invalid(format!(
                        "{} port {port} is claimed by both {} and {setting}",
                        if kind == ListenerKind::Udp {
                            "UDP"
                        } else {
                            "TCP"
                        },
                        prev.setting
                    )));
                }
                out.push(ListenerSpec {
                    id: id.to_owned(),
                    kind,
                    port,
                    setting: setting.clone(),
                });
            }
            Ok(())
        };
        let (udp, tcp) = (ListenerKind::Udp, ListenerKind::Tcp);
        add(
            "DEFAULT",
            udp,
            &l.udp_ports,
            "SC4S_LISTEN_DEFAULT_UDP_PORT".into(),
        )?;
        add(
            "DEFAULT",
            udp,
            &l.rfc5426_ports,
            "SC4S_LISTEN_DEFAULT_RFC5426_PORT".into(),
        )?;
        add(
            "DEFAULT",
            tcp,
            &l.tcp_ports,
            "SC4S_LISTEN_DEFAULT_TCP_PORT".into(),
        )?;
        add(
            "DEFAULT",
            tcp,
            &l.rfc6587_ports,
            "SC4S_LISTEN_DEFAULT_RFC6587_PORT".into(),
        )?;
        for (id, ports) in &l.vendor {
            add(id, udp, &ports.udp, format!("SC4S_LISTEN_{id}_UDP_PORT"))?;
            add(id, tcp, &ports.tcp, format!("SC4S_LISTEN_{id}_TCP_PORT"))?;
        }
        Ok(out)
    }

    /// Settings that are valid but almost certainly not what the operator wants; logged at
    /// startup. A missing token is one: like SC4S, sluice still starts (Splunk answers 401,
    /// events are kept in the window and retried, `/health` reports unhealthy), so fixing the
    /// token loses nothing that was accepted.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.uses_hec() && self.hec.token.trim().is_empty() {
            w.push(
                "a HEC URL is configured but no token: Splunk will reject every request (401) \
                 and events will be held and retried; set SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN \
                 (or hec.token)"
                    .to_string(),
            );
        }
        if self.uses_hec() && !self.hec.tls_verify {
            w.push(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY=no: indexer certificates are not checked"
                    .to_string(),
            );
        }
        w
    }
}
