//! SC4S (and `SLUICE_`) variables mapped onto the typed settings, with SC4S's defaults and
//! semantics (see the team's `sc4s.md`). Every variable is read through the [`Env`] seam; a
//! bad value is an error naming the variable, the value and where it came from.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::values::{
    any, non_empty, non_negative_secs, parse_bool, parse_port_or_zero, parse_ports, parse_rcvbuf,
    positive, positive_secs, positive_size, positive_u64,
};
use super::{Balance, Config, ConfigError, PeerVerify, SourceProto};
use crate::env::{Env, Value};

/// SC4S variables sluice reads. Anything else starting with `SC4S_` is reported once at
/// startup as not supported, so an operator migrating a large env_file sees what is ignored.
pub const SUPPORTED_SC4S_VARS: &[&str] = &[
    "SC4S_LISTEN_DEFAULT_UDP_PORT",
    "SC4S_LISTEN_DEFAULT_TCP_PORT",
    "SC4S_LISTEN_DEFAULT_RFC5426_PORT",
    "SC4S_LISTEN_DEFAULT_RFC6587_PORT",
    "SC4S_LISTEN_DEFAULT_TLS_PORT",
    "SC4S_LISTEN_DEFAULT_RFC5425_PORT",
    "SC4S_SOURCE_TLS_ENABLE",
    "SC4S_TLS",
    "SC4S_RUNTIME_ENV",
    "SC4S_SOURCE_TLS_SELFSIGNED",
    "SC4S_SOURCE_TLS_OPTIONS",
    "SC4S_SOURCE_TLS_CIPHER_SUITE",
    "SC4S_SOURCE_RFC5425_OPTIONS",
    "SC4S_SOURCE_RFC5425_CIPHER_SUITE",
    "SC4S_SOURCE_PROXYCONNECT",
    "SC4S_ENABLE_PARALLELIZE",
    "SC4S_PARALLELIZE_NO_PARTITION",
    "SC4S_SOURCE_TLS_MAX_CONNECTIONS",
    "SC4S_SOURCE_RFC6587_MAX_CONNECTIONS",
    "SC4S_SOURCE_RFC5425_MAX_CONNECTIONS",
    "SC4S_SOURCE_LISTEN_TCP_SOCKETS",
    "SC4S_SOURCE_LISTEN_TLS_SOCKETS",
    "SC4S_SOURCE_LISTEN_RFC6587_SOCKETS",
    "SC4S_SOURCE_LISTEN_RFC5425_SOCKETS",
    "SC4S_SOURCE_TCP_SO_RCVBUFF",
    "SC4S_SOURCE_TLS_SO_RCVBUFF",
    "SC4S_SOURCE_RFC5426_SO_RCVBUFF",
    "SC4S_SOURCE_RFC6587_SO_RCVBUFF",
    "SC4S_SOURCE_RFC5425_SO_RCVBUFF",
    "SC4S_SOURCE_LISTEN_UDP_SOCKETS",
    "SC4S_SOURCE_LISTEN_RFC5426_SOCKETS",
    "SC4S_SOURCE_UDP_SO_RCVBUFF",
    "SC4S_SOURCE_UDP_IW_USE",
    "SC4S_SOURCE_UDP_IW_SIZE",
    "SC4S_SOURCE_UDP_FETCH_LIMIT",
    "SC4S_SOURCE_TCP_IW_SIZE",
    "SC4S_SOURCE_TCP_FETCH_LIMIT",
    "SC4S_SOURCE_TCP_MAX_CONNECTIONS",
    "SC4S_ENABLE_EBPF",
    "SC4S_EBPF_NO_SOCKETS",
    "SC4S_IPV6_ENABLE",
    "SC4S_VAR",
    "SC4S_DEST_SPLUNK_SC4S_METRICS_HEC",
    "SC4S_DEST_SPLUNK_HEC_GLOBAL",
    "SC4S_ARCHIVE_GLOBAL",
    "SC4S_GLOBAL_ARCHIVE_MODE",
    "SC4S_DEFAULT_TIMEZONE",
    "SC4S_LISTEN_STATUS_PORT",
    "SC4S_CONTAINER_HOST",
    "SC4S_DEST_SPLUNK_INDEXED_FIELDS",
    "SC4S_SET_SOURCE_AS_SC4S",
    "SC4S_SOURCE_STORE_RAWMSG",
    "SC4S_ETC",
    "SC4S_OPTION_FORTINET_SOURCETYPE_PREFIX",
    "SC4S_DISABLE_DROP_INVALID_CEF",
    "SC4S_USE_NAME_CACHE",
    "SC4S_CLEAR_NAME_CACHE",
];

/// `SLUICE_` variables read outside the configuration (before it is loaded).
const NOT_CONFIG_VARS: &[&str] = &["SLUICE_LOG", "SLUICE_LOG_FORMAT"];

/// The build script hands the commit to the compiler as `SLUICE_GIT_COMMIT`
/// (`cargo:rustc-env`), and `cargo run` sets such variables in the program's environment too:
/// there it is the build's own value, which nobody set.
fn build_leak(name: &str, value: &str) -> bool {
    name == "SLUICE_GIT_COMMIT" && value == env!("SLUICE_GIT_COMMIT")
}

/// Outcome of applying the environment: what the operator should be told.
#[derive(Debug, Default, PartialEq)]
pub struct EnvReport {
    /// `SC4S_*` variables that are set but that sluice does not implement, and `SLUICE_*`
    /// variables that are not sluice settings.
    pub unsupported: Vec<String>,
    /// Accepted but with a caveat worth one log line.
    pub notes: Vec<String>,
}

impl Config {
    /// Overlays SC4S (and `SLUICE_`) variables.
    pub fn apply_env(&mut self, env: &Env) -> Result<EnvReport, ConfigError> {
        let mut report = EnvReport::default();
        let ipv6 = get(env, "SC4S_IPV6_ENABLE", parse_bool)?;
        if ipv6 == Some(true) && self.listen.address == IpAddr::V4(Ipv4Addr::UNSPECIFIED) {
            self.listen.address = IpAddr::V6(Ipv6Addr::UNSPECIFIED);
        }
        set(
            env,
            "SC4S_LISTEN_DEFAULT_UDP_PORT",
            parse_ports,
            &mut self.listen.udp_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_TCP_PORT",
            parse_ports,
            &mut self.listen.tcp_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_RFC5426_PORT",
            parse_ports,
            &mut self.listen.rfc5426_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_RFC6587_PORT",
            parse_ports,
            &mut self.listen.rfc6587_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_TLS_PORT",
            parse_ports,
            &mut self.listen.tls_ports,
        )?;
        set(
            env,
            "SC4S_LISTEN_DEFAULT_RFC5425_PORT",
            parse_ports,
            &mut self.listen.rfc5425_ports,
        )?;
        for (name, _) in env.with_prefix("SC4S_LISTEN_") {
            let Some((id, proto)) = vendor_port_var(name) else {
                continue;
            };
            let ports = get(env, name, parse_ports)?.unwrap_or_default();
            let entry = self.listen.vendor.entry(id.to_owned()).or_default();
            entry.ports_mut(proto).extend(ports);
        }
        self.apply_stream_env(env, &mut report)?;
        set(
            env,
            "SC4S_SOURCE_LISTEN_UDP_SOCKETS",
            positive,
            &mut self.udp.sockets,
        )?;
        if let Some(v) = get(env, "SC4S_SOURCE_UDP_SO_RCVBUFF", parse_rcvbuf)? {
            self.udp.rcvbuf = v;
        }
        if let Some(use_iw) = get(env, "SC4S_SOURCE_UDP_IW_USE", parse_bool)?
            && !use_iw
        {
            report.notes.push(
                "SC4S_SOURCE_UDP_IW_USE=no: sluice always applies the UDP input window \
                 (SC4S_SOURCE_UDP_IW_SIZE); it bounds memory, and the kernel buffer absorbs \
                 the pause when it is full"
                    .into(),
            );
        }
        set(
            env,
            "SC4S_SOURCE_UDP_IW_SIZE",
            positive_u64,
            &mut self.udp.window,
        )?;
        set(
            env,
            "SC4S_SOURCE_UDP_FETCH_LIMIT",
            positive,
            &mut self.udp.fetch_limit,
        )?;
        set(
            env,
            "SC4S_SOURCE_TCP_IW_SIZE",
            positive_u64,
            &mut self.tcp.window,
        )?;
        if get(env, "SC4S_SOURCE_TCP_FETCH_LIMIT", positive)?.is_some() {
            report.notes.push(
                "SC4S_SOURCE_TCP_FETCH_LIMIT is accepted but has no effect: sluice reads TCP \
                 in buffer-sized chunks and bounds in-flight messages with SC4S_SOURCE_TCP_IW_SIZE"
                    .into(),
            );
        }
        if let Some(true) = get(env, "SC4S_ENABLE_EBPF", parse_bool)? {
            self.udp.balance = Balance::Ebpf;
            if let Some(n) = get(env, "SC4S_EBPF_NO_SOCKETS", positive)? {
                // SC4S has two settings that must agree (sockets and eBPF group size); sluice
                // registers every socket of the group with the program, so one number rules.
                if env.get("SC4S_SOURCE_LISTEN_UDP_SOCKETS").is_none() {
                    self.udp.sockets = n;
                } else if n != self.udp.sockets {
                    report.notes.push(format!(
                        "SC4S_EBPF_NO_SOCKETS={n} differs from SC4S_SOURCE_LISTEN_UDP_SOCKETS={}; \
                         sluice balances over the {} sockets it opened",
                        self.udp.sockets, self.udp.sockets
                    ));
                }
            }
        }
        if let Some(b) = get(env, "SLUICE_UDP_BALANCE", |s| s.parse::<Balance>())? {
            self.udp.balance = b;
        }

        self.hec.apply_sc4s_env(env, "DEFAULT")?;
        self.apply_hec_env(env, &mut report)?;
        let workers = self.hec.workers;
        self.buffer
            .apply_env(env, "DEFAULT", workers, &mut report)?;
        self.apply_destinations_env(env, &mut report)?;

        set(
            env,
            "SC4S_DEFAULT_TIMEZONE",
            non_empty,
            &mut self.parse.default_timezone,
        )?;
        set(
            env,
            "SC4S_SOURCE_STORE_RAWMSG",
            parse_bool,
            &mut self.parse.store_raw_message,
        )?;
        set(
            env,
            "SC4S_SET_SOURCE_AS_SC4S",
            parse_bool,
            &mut self.parse.set_source_as_sc4s,
        )?;
        if let Some(d) = get(env, "SLUICE_CONTEXT_DIR", non_empty)? {
            self.parse.context_dir = Some(PathBuf::from(d));
        } else if let Some(etc) = get(env, "SC4S_ETC", non_empty)?
            && self.parse.context_dir.is_none()
        {
            let dir = PathBuf::from(etc).join("conf.d/local/context");
            if dir.is_dir() {
                self.parse.context_dir = Some(dir);
            } else {
                report.notes.push(format!(
                    "SC4S_ETC is set but {} is not a directory: no context files \
                     (splunk_metadata.csv, vendor_product_by_source, ...) are read",
                    dir.display()
                ));
            }
        }
        if let Some(d) = get(env, "SLUICE_APP_PARSERS_DIR", non_empty)? {
            self.parse.app_parsers_dir = Some(PathBuf::from(d));
        }
        // Backtick references in app-parsers name environment variables (SC4S's
        // `SC4S_*`, and whatever the operator's files define); iterating does not count
        // them as read settings.
        self.parse.app_parser_env = super::sections::VarSnapshot(
            env.iter()
                .map(|(k, v)| (k.to_owned(), v.value.clone()))
                .collect(),
        );
        set(env, "SLUICE_VENDORS", non_empty, &mut self.parse.vendors)?;
        set(
            env,
            "SC4S_USE_NAME_CACHE",
            parse_bool,
            &mut self.parse.use_name_cache,
        )?;
        set(
            env,
            "SC4S_CLEAR_NAME_CACHE",
            parse_bool,
            &mut self.parse.clear_name_cache,
        )?;
        if let Some(var) = get(env, "SC4S_VAR", non_empty)?
            && self.parse.name_cache_file == Path::new(super::DEFAULT_NAME_CACHE_FILE)
        {
            self.parse.name_cache_file = Path::new(&var).join("hostip.cache");
        }
        self.parse.vendor_options = sluice_proto::classify::VendorOptions::from_env(|k| {
            env.get(k).map(|v| v.value.clone())
        })
        .map_err(|e| ConfigError::BadEnv {
            var: e.variable.to_owned(),
            origin: env
                .get(e.variable)
                .map(|v| v.origin.to_string())
                .unwrap_or_default(),
            value: e.value,
            reason: format!("expected {}", e.expected),
        })?;
        if self.parse.vendor_options.checkpoint.noise_incomplete_events {
            report.notes.push(
                "SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_INCOMPLETE_EVENTS=yes: SC4S discards Check \
                 Point's partial events (a loguid without bytes); sluice discards nothing and \
                 delivers them (SC4S_LISTEN_CHECKPOINT_SPLUNK_NOISE_CONTROL=yes still keeps \
                 only the last event of each loguid)"
                    .into(),
            );
        }
        set(
            env,
            "SC4S_LISTEN_STATUS_PORT",
            parse_port_or_zero,
            &mut self.admin.port,
        )?;
        if let Some(h) = get(env, "SC4S_CONTAINER_HOST", any)? {
            self.fields.container_host = (!h.is_empty()).then_some(h);
        }
        set(
            env,
            "SC4S_DEST_SPLUNK_INDEXED_FIELDS",
            any,
            &mut self.fields.indexed_fields,
        )?;

        if let Some(p) = get(env, "SLUICE_OUTPUT_FILE", non_empty)? {
            self.output.file = PathBuf::from(p);
        }
        set(
            env,
            "SLUICE_MAX_IN_FLIGHT_BYTES",
            positive_size,
            &mut self.window.max_bytes,
        )?;
        if let Some(s) = get(env, "SLUICE_DRAIN_TIMEOUT", positive_u64)? {
            self.shutdown.drain_timeout = Duration::from_secs(s);
        }
        if let Some(a) = get(env, "SLUICE_LISTEN_ADDRESS", |s| {
            s.parse::<IpAddr>()
                .map_err(|_| "not an IP address".to_string())
        })? {
            self.listen.address = a;
        }
        set(
            env,
            "SLUICE_LISTEN_SHARE_PORTS",
            parse_bool,
            &mut self.listen.share_ports,
        )?;
        if let Some(d) = get(env, "SLUICE_LISTEN_LOCK_DIR", non_empty)? {
            self.listen.lock_dir = Some(PathBuf::from(d));
        }
        if let Some(p) = get(env, "SLUICE_PID_FILE", non_empty)? {
            self.admin.pid_file = Some(PathBuf::from(p));
        }
        self.service = super::ServiceEnv::from_env(env)?;

        for (name, _) in env.with_prefix("SC4S_") {
            if !SUPPORTED_SC4S_VARS.contains(&name)
                && !self.reads_destination_var(name)
                && !sluice_proto::classify::VendorOptions::VARIABLES.contains(&name)
                && vendor_port_var(name).is_none()
            {
                report.unsupported.push(name.to_owned());
            }
        }
        // sluice's own variables are all read above; one that was not is a typo
        // (SLUICE_TCP_IDEL_TIMEOUT) that would otherwise be ignored without a word.
        for (name, value) in env.with_prefix("SLUICE_") {
            if !env.was_read(name)
                && !NOT_CONFIG_VARS.contains(&name)
                && !build_leak(name, &value.value)
            {
                report.unsupported.push(name.to_owned());
            }
        }
        Ok(report)
    }
}

impl Config {
    /// The stream transports' settings: TLS, per-transport sockets, the edge's timeouts,
    /// PROXY protocol and PARALLELIZE.
    fn apply_stream_env(&mut self, env: &Env, report: &mut EnvReport) -> Result<(), ConfigError> {
        set(
            env,
            "SC4S_SOURCE_TLS_ENABLE",
            parse_bool,
            &mut self.tls.enable,
        )?;
        if let Some(dir) = get(env, "SC4S_TLS", non_empty)? {
            self.tls.dir = PathBuf::from(dir);
        }
        if let Some(rt) = get(env, "SC4S_RUNTIME_ENV", any)?
            && rt.trim().eq_ignore_ascii_case("k8s")
        {
            // SC4S's Helm chart mounts a kubernetes.io/tls Secret, whose keys are these.
            self.tls.cert_file = PathBuf::from("tls.crt");
            self.tls.key_file = PathBuf::from("tls.key");
        }
        set(
            env,
            "SC4S_SOURCE_TLS_SELFSIGNED",
            parse_bool,
            &mut self.tls.self_signed,
        )?;
        set(env, "SC4S_SOURCE_TLS_OPTIONS", any, &mut self.tls.options)?;
        set(
            env,
            "SC4S_SOURCE_TLS_CIPHER_SUITE",
            any,
            &mut self.tls.cipher_suite,
        )?;
        set(
            env,
            "SC4S_SOURCE_RFC5425_OPTIONS",
            any,
            &mut self.tls.rfc5425_options,
        )?;
        set(
            env,
            "SC4S_SOURCE_RFC5425_CIPHER_SUITE",
            any,
            &mut self.tls.rfc5425_cipher_suite,
        )?;
        if let Some(dir) = get(env, "SLUICE_TLS_CA_DIR", non_empty)? {
            self.tls.ca_dir = Some(PathBuf::from(dir));
        }
        if let Some(v) = get(env, "SLUICE_TLS_PEER_VERIFY", |s| s.parse::<PeerVerify>())? {
            self.tls.peer_verify = v;
        }
        if let Some(s) = get(env, "SLUICE_TLS_RELOAD_INTERVAL", non_negative_secs)? {
            self.tls.reload_interval = s;
        }

        for proto in [
            SourceProto::Tcp,
            SourceProto::Rfc6587,
            SourceProto::Tls,
            SourceProto::Rfc5425,
        ] {
            let word = proto.as_sc4s();
            let Some(port) = self.stream.get_mut(proto) else {
                continue;
            };
            set(
                env,
                &format!("SC4S_SOURCE_{word}_MAX_CONNECTIONS"),
                positive,
                &mut port.max_connections,
            )?;
            set(
                env,
                &format!("SC4S_SOURCE_LISTEN_{word}_SOCKETS"),
                positive,
                &mut port.sockets,
            )?;
            set(
                env,
                &format!("SC4S_SOURCE_{word}_SO_RCVBUFF"),
                parse_rcvbuf,
                &mut port.rcvbuf,
            )?;
        }
        set(
            env,
            "SC4S_SOURCE_RFC5426_SO_RCVBUFF",
            parse_rcvbuf,
            &mut self.udp.rfc5426_rcvbuf,
        )?;
        set(
            env,
            "SC4S_SOURCE_LISTEN_RFC5426_SOCKETS",
            positive,
            &mut self.udp.rfc5426_sockets,
        )?;

        if let Some(s) = get(env, "SLUICE_TCP_FRAME_TIMEOUT", positive_secs)? {
            self.tcp.frame_timeout = s;
        }
        if let Some(s) = get(env, "SLUICE_TCP_IDLE_TIMEOUT", non_negative_secs)? {
            self.tcp.idle_timeout = s;
        }
        if let Some(s) = get(env, "SLUICE_TCP_KEEPALIVE", non_negative_secs)? {
            self.tcp.keepalive = s;
        }
        set(
            env,
            "SC4S_SOURCE_PROXYCONNECT",
            parse_bool,
            &mut self.tcp.proxy_protocol,
        )?;
        let partitions = get(env, "SC4S_PARALLELIZE_NO_PARTITION", positive)?;
        match get(env, "SC4S_ENABLE_PARALLELIZE", parse_bool)? {
            // SC4S's default partition count (docs/configuration.md).
            Some(true) => self.tcp.parallelize = partitions.unwrap_or(4),
            Some(false) => self.tcp.parallelize = 0,
            None if partitions.is_some() => report.notes.push(
                "SC4S_PARALLELIZE_NO_PARTITION is set but SC4S_ENABLE_PARALLELIZE is not yes: \
                 stream connections are processed in order, one task each"
                    .into(),
            ),
            None => {}
        }
        Ok(())
    }
}

/// `SC4S_LISTEN_<ID>_<PROTO>_PORT` for a vendor id (not DEFAULT): the id and the protocol.
/// `SC4S_LISTEN_<ID>_RFC6587_NOPARSE_PORT` too, for DEFAULT as well (SC4S's entrypoint
/// takes the id before `_RFC6587_NOPARSE`).
fn vendor_port_var(name: &str) -> Option<(&str, SourceProto)> {
    let rest = name.strip_prefix("SC4S_LISTEN_")?.strip_suffix("_PORT")?;
    if let Some(id) = rest.strip_suffix("_RFC6587_NOPARSE") {
        return (!id.is_empty()).then_some((id, SourceProto::Rfc6587NoParse));
    }
    let (id, proto) = rest.rsplit_once('_')?;
    if id.is_empty() || id == "DEFAULT" {
        return None;
    }
    SourceProto::from_sc4s(proto).map(|p| (id, p))
}

pub(super) fn get<T>(
    env: &Env,
    var: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<Option<T>, ConfigError> {
    let Some(Value { value, origin }) = env.get(var) else {
        return Ok(None);
    };
    parse(value)
        .map(Some)
        .map_err(|reason| ConfigError::BadEnv {
            var: var.to_owned(),
            value: value.clone(),
            origin: origin.to_string(),
            reason,
        })
}

pub(super) fn set<T>(
    env: &Env,
    var: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
    field: &mut T,
) -> Result<(), ConfigError> {
    if let Some(v) = get(env, var, parse)? {
        *field = v;
    }
    Ok(())
}
