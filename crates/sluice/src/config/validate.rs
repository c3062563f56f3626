//! Cross-field checks and the expansion of the port settings into listeners.

use super::{Config, ConfigError, ListenerSpec, SourceProto, Transport};

impl Config {
    /// Cross-field checks that no single setting can make.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        self.buffer.validate()?;
        self.validate_destinations()?;
        if self.udp.sockets == 0 || self.udp.rfc5426_sockets == 0 {
            return bad("udp.sockets and udp.rfc5426_sockets must be at least 1".into());
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
        if self.tcp.frame_timeout.is_zero() {
            return bad(
                "tcp.frame_timeout (SLUICE_TCP_FRAME_TIMEOUT) must be more than 0: without it \
                 a connection that never completes a frame holds its slot forever"
                    .into(),
            );
        }
        for proto in SourceProto::ALL {
            if let Some(p) = self.stream.get(proto)
                && (p.max_connections == 0 || p.sockets == 0)
            {
                return bad(format!(
                    "stream.{}: max_connections and sockets must be at least 1 \
                     (SC4S_SOURCE_{}_MAX_CONNECTIONS, SC4S_SOURCE_LISTEN_{}_SOCKETS)",
                    proto.label(),
                    proto.as_sc4s(),
                    proto.as_sc4s()
                ));
            }
        }
        Ok(())
    }

    /// Every port to open, in a stable order. Two settings asking for the same port in one
    /// namespace (UDP, or TCP for the plain and TLS stream listeners) is an error naming
    /// both (SC4S's port validator only logs it, and then one of the two sources silently
    /// never receives). The default listener may name one port in two settings of the same
    /// engine (RFC 5426 on the plain UDP port): one socket serves both, with the first
    /// setting's options. TLS and RFC 5425 ports are opened only with `tls.enable`, as in
    /// SC4S.
    pub fn listeners(&self) -> Result<Vec<ListenerSpec>, ConfigError> {
        let l = &self.listen;
        let mut out: Vec<ListenerSpec> = Vec::new();
        let mut add = |id: &str, proto: SourceProto, ports: &[u16], setting: String| {
            let kind = proto.transport();
            let udp = kind == Transport::Udp;
            for &port in ports {
                if let Some(prev) = out
                    .iter()
                    .find(|x| (x.kind == Transport::Udp) == udp && x.port == port)
                {
                    if prev.id == id && prev.kind == kind {
                        continue;
                    }
                    return Err(ConfigError::Invalid(format!(
                        "{} port {port} is claimed by both {} and {setting}",
                        if udp { "UDP" } else { "TCP" },
                        prev.setting
                    )));
                }
                out.push(ListenerSpec {
                    id: id.to_owned(),
                    kind,
                    proto,
                    port,
                    setting: setting.clone(),
                });
            }
            Ok(())
        };
        let tls = self.tls.enable;
        let default_ports = [
            (SourceProto::Udp, &l.udp_ports),
            (SourceProto::Rfc5426, &l.rfc5426_ports),
            (SourceProto::Tcp, &l.tcp_ports),
            (SourceProto::Rfc6587, &l.rfc6587_ports),
            (SourceProto::Tls, &l.tls_ports),
            (SourceProto::Rfc5425, &l.rfc5425_ports),
        ];
        for (proto, ports) in default_ports {
            if proto.transport() == Transport::Tls && !tls {
                continue;
            }
            add(
                "DEFAULT",
                proto,
                ports,
                format!("SC4S_LISTEN_DEFAULT_{}_PORT", proto.as_sc4s()),
            )?;
        }
        for (id, ports) in &l.vendor {
            let mut ports = ports.clone();
            for proto in SourceProto::ALL {
                if proto.transport() == Transport::Tls && !tls {
                    continue;
                }
                let list = std::mem::take(ports.ports_mut(proto));
                add(
                    id,
                    proto,
                    &list,
                    format!("SC4S_LISTEN_{id}_{}_PORT", proto.as_sc4s()),
                )?;
            }
        }
        Ok(out)
    }

    /// A HEC URL without a token: sluice starts (see [`Config::warnings`]), but `run --check`
    /// calls it an error, since nothing would be delivered.
    pub fn token_problem(&self) -> Option<String> {
        (self.uses_hec() && self.hec.token.trim().is_empty()).then(|| {
            "a HEC URL is configured but no token: Splunk will reject every request (401) \
             and events will be held and retried; set SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN \
             (or hec.token)"
                .to_string()
        })
    }

    /// Settings that are valid but almost certainly not what the operator wants; logged at
    /// startup. A missing token is one: like SC4S, sluice still starts (Splunk answers 401,
    /// events are kept in the window and retried, `/health` reports unhealthy), so fixing the
    /// token loses nothing that was accepted.
    pub fn warnings(&self) -> Vec<String> {
        let mut w: Vec<String> = self.token_problem().into_iter().collect();
        if self.uses_hec() && !self.hec.tls_verify {
            w.push(
                "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY=no: indexer certificates are not checked"
                    .to_string(),
            );
        }
        if !self.tls.enable {
            for (id, ports) in &self.listen.vendor {
                for (word, list) in [("TLS", &ports.tls), ("RFC5425", &ports.rfc5425)] {
                    if !list.is_empty() {
                        w.push(format!(
                            "SC4S_LISTEN_{id}_{word}_PORT is set but SC4S_SOURCE_TLS_ENABLE is \
                             not yes: port(s) {list:?} are not opened"
                        ));
                    }
                }
            }
        }
        if self.tls.enable
            && self
                .listeners()
                .is_ok_and(|l| l.iter().all(|s| s.kind != Transport::Tls))
        {
            w.push(
                "SC4S_SOURCE_TLS_ENABLE=yes but every TLS and RFC 5425 port list is empty: no \
                 TLS port is opened"
                    .to_string(),
            );
        }
        w
    }
}
