//! `sluice run --check`: the effective configuration and where every value came from.
//!
//! The report has two parts. A summary, as comments: what will be opened (every listener,
//! vendor ports included, with its socket and connection limits), the status server, the HEC
//! destinations, TLS (the certificate is loaded and checked, as at startup), the stream edge,
//! and what the environment set that sluice ignores. Then every setting as TOML, each with its
//! origin — `default`, `config <file>`, `<VAR> (env_file <file> line N)` or
//! `<VAR> (environment)` — so the output is itself a `--config` file for this configuration
//! (secrets masked).
//!
//! The settings part is generic ([`config::trace`]); a summary section is a function in
//! [`SECTIONS`]. A problem that would make sluice useless but not stop it from starting (a
//! HEC URL without a token) is an error here: the report is printed, then `--check` fails.

use std::fmt::Write as _;

use crate::config::{Config, ListenerSpec, Source, SourceProto, Traced, Transport, tables};

mod destinations;
use destinations::destinations;

/// The report, and the problems that make the check fail.
#[derive(Debug)]
pub struct CheckReport {
    pub text: String,
    pub errors: Vec<String>,
}

/// What a summary section reads.
pub struct Check<'a> {
    pub traced: &'a Traced,
    pub listeners: Vec<ListenerSpec>,
}

impl Check<'_> {
    fn config(&self) -> &Config {
        &self.traced.config
    }

    /// Where the setting at `path` came from, for a summary line.
    fn from(&self, path: &str) -> String {
        self.traced
            .source(path)
            .map_or_else(|| "default".to_owned(), Source::to_string)
    }
}

/// Lines of a summary section (without the leading `# `) and problems found.
#[derive(Debug, Default)]
pub struct Out {
    lines: Vec<String>,
    errors: Vec<String>,
}

impl Out {
    fn line(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }
    fn error(&mut self, s: impl Into<String>) {
        self.errors.push(s.into());
    }
}

type Section = fn(&Check<'_>, &mut Out);

/// The summary, in order. A new part of the configuration (the disk buffer) adds a function
/// here; its settings are listed below the summary without one.
pub const SECTIONS: &[Section] = &[
    listeners,
    status,
    output,
    buffer,
    destinations,
    tls,
    edge,
    parse,
    environment,
];

/// Builds the report for a loaded configuration.
pub fn report(traced: &Traced) -> CheckReport {
    let check = Check {
        traced,
        listeners: traced.config.listeners().unwrap_or_default(),
    };
    let mut out = Out::default();
    for section in SECTIONS {
        section(&check, &mut out);
    }
    let mut text = String::new();
    let verdict = if out.errors.is_empty() {
        "the configuration is valid"
    } else {
        "the configuration has errors (listed last)"
    };
    let _ = writeln!(text, "# sluice run --check: {verdict}.");
    for l in &out.lines {
        if l.is_empty() {
            text.push_str("#\n");
        } else {
            let _ = writeln!(text, "# {l}");
        }
    }
    text.push_str(
        "#\n# Every setting, as a --config file, with where its value came from: default, the\n\
         # config file, an env_file line or the process environment. Secrets are masked.\n",
    );
    settings(traced, &mut text);
    if !out.errors.is_empty() {
        text.push('\n');
        for e in &out.errors {
            let _ = writeln!(text, "# ERROR: {e}");
        }
    }
    CheckReport {
        text,
        errors: out.errors,
    }
}

/// Every setting as TOML, grouped by table, values aligned, origin after each.
fn settings(traced: &Traced, text: &mut String) {
    let flat: Vec<_> = traced.settings.iter().map(|(s, _)| s.clone()).collect();
    for (table, list) in tables(&flat) {
        let rows: Vec<(String, String)> = list
            .iter()
            .map(|s| {
                let source = traced
                    .source(&s.path)
                    .map_or_else(|| "default".to_owned(), Source::to_string);
                let kv = match &s.value {
                    Some(v) => format!("{} = {}", s.key(), mask(&s.path, v)),
                    None => format!("# {} is unset", s.key()),
                };
                (kv, source)
            })
            .collect();
        let width = rows
            .iter()
            .map(|(kv, _)| kv.chars().count())
            .filter(|&n| n <= 50)
            .max()
            .unwrap_or(0);
        let _ = writeln!(text, "\n[{table}]");
        for (kv, source) in rows {
            let _ = writeln!(text, "{kv:<width$}  # {source}");
        }
    }
}

/// A secret's value as shown: enough to tell two tokens apart, not enough to use one.
fn mask(path: &str, value: &str) -> String {
    // The default destination's `hec.*`, and every additional one's
    // `destinations.<id>.hec.*`.
    let key = path
        .strip_prefix("destinations.")
        .and_then(|r| r.split_once('.'))
        .map_or(path, |(_, rest)| rest);
    match key {
        "hec.token" => mask_secret(value),
        "hec.urls" | "hec.headers" => value
            .split("\", \"")
            .map(|part| {
                if key == "hec.urls" {
                    mask_url_password(part)
                } else {
                    mask_header(part)
                }
            })
            .collect::<Vec<_>>()
            .join("\", \""),
        _ => value.to_owned(),
    }
}

/// Every letter and digit but the last four replaced by `*`; separators kept so a UUID still
/// looks like one.
fn mask_secret(s: &str) -> String {
    let total = s.chars().filter(char::is_ascii_alphanumeric).count();
    let keep = if total >= 16 { 4 } else { 0 };
    let mut seen = 0;
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                seen += 1;
                if seen > total - keep { c } else { '*' }
            } else {
                c
            }
        })
        .collect()
}

fn mask_url_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_owned();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:****{}",
            &url[..scheme_end],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_owned(),
    }
}

fn mask_header(h: &str) -> String {
    let Some((name, _)) = h.split_once(':') else {
        return h.to_owned();
    };
    let n = name.trim_start_matches(['[', '"']).to_ascii_lowercase();
    if ["auth", "token", "key", "secret", "cookie", "password"]
        .iter()
        .any(|w| n.contains(w))
    {
        // The closing quote (and bracket) of the TOML list stay.
        let tail = &h[h.trim_end_matches(['"', ']']).len()..];
        format!("{name}: ****{tail}")
    } else {
        h.to_owned()
    }
}

fn bytes(n: u64) -> String {
    if n == 0 {
        "kernel default".to_owned()
    } else if n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

fn secs(d: std::time::Duration) -> String {
    if d.is_zero() {
        "never".to_owned()
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

fn listeners(c: &Check<'_>, out: &mut Out) {
    let config = c.config();
    if let Err(e) = config.listeners() {
        out.error(e.to_string());
        return;
    }
    out.line(format!(
        "Listeners on {} ({} in all):",
        config.listen.address,
        c.listeners.len()
    ));
    let id_width = c.listeners.iter().map(|l| l.id.len()).max().unwrap_or(0);
    for l in &c.listeners {
        let path = if l.id == "DEFAULT" {
            format!("listen.{}_ports", l.proto.label())
        } else {
            format!("listen.vendor.{}.{}", l.id, l.proto.label())
        };
        let detail = match l.kind {
            Transport::Udp => {
                let (sockets, rcvbuf) = if l.proto == SourceProto::Rfc5426 {
                    (config.udp.rfc5426_sockets, config.udp.rfc5426_rcvbuf)
                } else {
                    (config.udp.sockets, config.udp.rcvbuf)
                };
                format!(
                    "{sockets} sockets, balance {}, rcvbuf {}",
                    match config.udp.balance {
                        crate::config::Balance::Ebpf => "ebpf",
                        crate::config::Balance::Cbpf => "cbpf",
                        crate::config::Balance::Kernel => "kernel",
                    },
                    bytes(rcvbuf.0)
                )
            }
            Transport::Tcp | Transport::Tls => match config.stream.get(l.proto) {
                Some(p) => format!(
                    "up to {} connections ({} per socket x {} socket{}), rcvbuf {}",
                    p.port_limit(),
                    p.max_connections,
                    p.sockets,
                    if p.sockets == 1 { "" } else { "s" },
                    bytes(p.rcvbuf.0)
                ),
                None => String::new(),
            },
        };
        out.line(format!(
            "  {:<8} {:>5}  {:<id_width$}  {detail}  <- {}",
            l.proto.label(),
            l.port,
            l.id,
            c.from(&path)
        ));
    }
    let l = &config.listen;
    if !config.tls.enable && (!l.tls_ports.is_empty() || !l.rfc5425_ports.is_empty()) {
        out.line(format!(
            "  not opened: TLS {:?} and RFC 5425 {:?}, SC4S_SOURCE_TLS_ENABLE is not yes  <- {}",
            l.tls_ports,
            l.rfc5425_ports,
            c.from("tls.enable")
        ));
    }
}

fn status(c: &Check<'_>, out: &mut Out) {
    let a = &c.config().admin;
    out.line("");
    if a.port == 0 {
        out.line(format!(
            "Status server: off (SC4S_LISTEN_STATUS_PORT=0)  <- {}",
            c.from("admin.port")
        ));
    } else {
        out.line(format!(
            "Status server: http://{}/health and /metrics  <- {}",
            std::net::SocketAddr::new(a.address, a.port),
            c.from("admin.port")
        ));
    }
}

fn output(c: &Check<'_>, out: &mut Out) {
    let config = c.config();
    out.line("");
    if !config.uses_hec() {
        out.line(format!(
            "Output: no HEC URL (SC4S_DEST_SPLUNK_HEC_DEFAULT_URL), events are written to {}  <- {}",
            config.output.file.display(),
            c.from("output.file")
        ));
        return;
    }
    let h = &config.hec;
    let token = if h.token.trim().is_empty() {
        "MISSING".to_owned()
    } else {
        mask_secret(&h.token)
    };
    out.line(format!(
        "Output: Splunk HEC, {} destination{}, token {token}  <- {}",
        h.urls.len(),
        if h.urls.len() == 1 { "" } else { "s" },
        c.from("hec.token")
    ));
    match config.hec.client_config() {
        Ok(hc) => {
            for u in &hc.urls {
                out.line(format!(
                    "  {}  <- {}",
                    mask_url_password(u),
                    c.from("hec.urls")
                ));
            }
            out.line(format!(
                "  {} workers, batches of {} events or {} bytes or {} ms, timeout {}, \
                 compression {}, verify certificates {}",
                h.workers,
                h.batch_lines,
                h.batch_bytes.0,
                h.batch_timeout.as_millis(),
                secs(h.timeout),
                if h.compression { "on" } else { "off" },
                if h.tls_verify { "yes" } else { "NO" }
            ));
            if let Some(fb) = &hc.fallback_index {
                out.line(format!(
                    "  an event refused for its index goes once to the fallback index {fb}, its \
                     own in sc4s_original_index  <- {}",
                    c.from("hec.fallback_index")
                ));
            }
        }
        Err(e) => out.error(e.to_string()),
    }
    if let Some(problem) = config.token_problem() {
        out.error(format!(
            "{problem} (URL <- {}; token <- {})",
            c.from("hec.urls"),
            c.from("hec.token")
        ));
    }
}

/// The HEC destination's disk buffer: mode, directory and the effective total size.
fn buffer(c: &Check<'_>, out: &mut Out) {
    let config = c.config();
    if !config.uses_hec() {
        return;
    }
    let b = &config.buffer;
    if !b.enable {
        out.line(format!(
            "  disk buffer: off; a HEC outage is held in memory only (window.max_bytes)  <- {}",
            c.from("buffer.enable")
        ));
        return;
    }
    let size = b.effective_size(config.hec.workers);
    let mode = if b.reliable {
        format!(
            "reliable (every event fsynced before it counts as received, group commit {} ms)",
            b.group_commit_window.as_millis()
        )
    } else {
        format!(
            "normal (what HEC cannot take now, fsynced every {} ms or {} bytes)",
            b.flush_interval.as_millis(),
            b.flush_bytes.0
        )
    };
    out.line(format!(
        "  disk buffer: {mode}  <- {}",
        c.from("buffer.reliable")
    ));
    out.line(format!(
        "    in {}  <- {}",
        b.dir.display(),
        c.from("buffer.dir")
    ));
    out.line(format!(
        "    up to {} bytes in all: {}",
        size.bytes, size.how
    ));
    if let Some(m) = b.effective_memory(config.hec.workers) {
        out.line(format!(
            "    in memory (read back for HEC, not yet delivered): up to {} bytes: {}  <- {}",
            m.bytes,
            m.how,
            c.from("buffer.mem_buf_size")
        ));
    }
}

fn tls(c: &Check<'_>, out: &mut Out) {
    let config = c.config();
    let t = &config.tls;
    out.line("");
    if !t.enable {
        out.line(format!(
            "TLS: off (SC4S_SOURCE_TLS_ENABLE)  <- {}",
            c.from("tls.enable")
        ));
        return;
    }
    out.line(format!(
        "TLS: certificate {}, key {}, reload every {}  <- {}",
        t.cert_path().display(),
        t.key_path().display(),
        secs(t.reload_interval),
        c.from("tls.dir")
    ));
    let mut profiles: Vec<SourceProto> = c
        .listeners
        .iter()
        .filter(|l| l.kind == Transport::Tls)
        .map(|l| l.proto)
        .collect();
    profiles.sort();
    profiles.dedup();
    if profiles.is_empty() {
        return;
    }
    if t.self_signed && !t.cert_path().exists() && !t.key_path().exists() {
        out.line(format!(
            "  a self-signed pair will be generated there at start  <- {}",
            c.from("tls.self_signed")
        ));
        return;
    }
    let m = match crate::tls::TlsManager::load(t, &profiles) {
        Ok(m) => m,
        Err(e) => {
            out.error(format!("TLS: {e}"));
            return;
        }
    };
    let info = m.cert_info();
    out.line(format!(
        "  certificate: {} (names {}), valid until {}, sha256 {}",
        info.subject,
        info.names.join(","),
        jiff::Timestamp::from_second(info.not_after)
            .map_or_else(|_| info.not_after.to_string(), |t| t.to_string()),
        info.sha256
    ));
    for w in &info.warnings {
        out.line(format!("  warning: {w}"));
    }
    out.line(format!(
        "  client certificates: {}  <- {}",
        m.client_auth().label(),
        c.from("tls.peer_verify")
    ));
    for e in m.endpoints() {
        let (options, suite) = if e.proto == SourceProto::Rfc5425 {
            ("tls.rfc5425_options", "tls.rfc5425_cipher_suite")
        } else {
            ("tls.options", "tls.cipher_suite")
        };
        out.line(format!(
            "  {}: {}; suites {}  <- options: {}; cipher suite: {}",
            e.proto.label(),
            e.policy.versions_label(),
            e.policy.suites_label(),
            c.from(options),
            c.from(suite)
        ));
        for n in &e.policy.notes {
            out.line(format!("  note: {n}"));
        }
    }
}

fn edge(c: &Check<'_>, out: &mut Out) {
    if c.listeners.iter().all(|l| l.kind == Transport::Udp) {
        return;
    }
    let t = &c.config().tcp;
    out.line("");
    out.line(format!(
        "Stream edge: a frame must complete within {} (the first one of the accept)  <- {}",
        secs(t.frame_timeout),
        c.from("tcp.frame_timeout")
    ));
    out.line(format!(
        "  idle connections close after {}  <- {}",
        secs(t.idle_timeout),
        c.from("tcp.idle_timeout")
    ));
    out.line(format!(
        "  {}  <- {}",
        if t.keepalive.is_zero() {
            "TCP keepalive off: half-open connections wait for the idle timeout".to_owned()
        } else {
            format!(
                "half-open connections found by TCP keepalive after {} quiet and 6 probes",
                secs(t.keepalive)
            )
        },
        c.from("tcp.keepalive")
    ));
    out.line(format!(
        "  PROXY protocol {}  <- {}",
        if t.proxy_protocol { "expected" } else { "off" },
        c.from("tcp.proxy_protocol")
    ));
    out.line(format!(
        "  parallelize {}  <- {}",
        if t.parallelize == 0 {
            "off".to_owned()
        } else {
            format!("{} workers per port", t.parallelize)
        },
        c.from("tcp.parallelize")
    ));
}

/// Parsing and classification: the context files are read and the vendor selection built,
/// as at startup, so a bad file or vendor name fails the check.
fn parse(c: &Check<'_>, out: &mut Out) {
    let config = c.config();
    let p = &config.parse;
    out.line("");
    out.line(format!(
        "Parsing: time zone {}  <- {}",
        p.default_timezone,
        c.from("parse.default_timezone")
    ));
    out.line(format!(
        "  vendor parsers: {}  <- {}",
        p.vendors,
        c.from("parse.vendors")
    ));
    match (&p.context_dir, super::build::default_context_dir()) {
        (Some(dir), _) => out.line(format!(
            "  context files from {}  <- {}",
            dir.display(),
            c.from("parse.context_dir")
        )),
        (None, Some(dir)) => out.line(format!(
            "  context files from {} (SC4S's place for them)  <- default",
            dir.display()
        )),
        (None, None) => out.line(
            "  no context files (none configured, none in /etc/syslog-ng/conf.d/local/context \
             or /opt/sc4s/local/context)  <- default",
        ),
    }
    if let Some(csv) = &p.metadata_csv {
        out.line(format!(
            "  splunk_metadata.csv: {}  <- {}",
            csv.display(),
            c.from("parse.metadata_csv")
        ));
    }
    let context_dir = p
        .context_dir
        .clone()
        .or_else(super::build::default_context_dir);
    match crate::app_parsers::load(config, context_dir.as_deref()) {
        Ok(loaded) => {
            for l in crate::app_parsers::check_lines(&loaded) {
                out.line(l);
            }
            let plan = config.destination_plan();
            for w in crate::app_parsers::selectors(&loaded, &plan).1 {
                out.line(format!("  warning: app-parsers: {w}"));
            }
        }
        // Building the blueprint below reports it as the error it is.
        Err(e) => out.line(format!("  app-parsers: {e:#}")),
    }
    // What `run` and a reload build: the same errors, in the same words.
    if let Err(e) = super::Blueprint::build(config) {
        out.error(format!("{e:#}"));
    }
}

/// What the environment set that has no effect, and the notes and warnings startup logs.
fn environment(c: &Check<'_>, out: &mut Out) {
    let t = c.traced;
    let config = c.config();
    let token = config.token_problem();
    let warnings: Vec<String> = config
        .warnings()
        .into_iter()
        .filter(|w| Some(w) != token.as_ref())
        .collect();
    if t.unsupported.is_empty()
        && t.no_effect.is_empty()
        && t.report.notes.is_empty()
        && warnings.is_empty()
    {
        return;
    }
    out.line("");
    for v in &t.unsupported {
        out.line(format!("not supported, ignored: {v}"));
    }
    for v in &t.no_effect {
        out.line(format!(
            "no effect (the value sluice uses anyway): {}={:?} ({})",
            v.name,
            v.value,
            v.place()
        ));
    }
    for n in &t.report.notes {
        out.line(format!("note: {n}"));
    }
    for w in warnings {
        out.line(format!("warning: {w}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_masked_but_recognisable() {
        assert_eq!(
            mask_secret("0a1b2c3d-1111-2222-3333-444455556666"),
            "********-****-****-****-********6666"
        );
        assert_eq!(mask_secret("short"), "*****");
        assert_eq!(
            mask("hec.token", "\"0a1b2c3d-1111-2222-3333-444455556666\""),
            "\"********-****-****-****-********6666\""
        );
        assert_eq!(
            mask(
                "hec.urls",
                "[\"https://u:secret@idx1:8088/x\", \"https://idx2:8088\"]"
            ),
            "[\"https://u:****@idx1:8088/x\", \"https://idx2:8088\"]"
        );
        assert_eq!(
            mask(
                "hec.headers",
                "[\"Authorization: Bearer x\", \"X-Site: dc1\", \"X-Api-Key: k\"]"
            ),
            "[\"Authorization: ****\", \"X-Site: dc1\", \"X-Api-Key: ****\"]"
        );
        assert_eq!(mask("listen.udp_ports", "[514]"), "[514]");
    }
}
