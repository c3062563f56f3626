//! SC4S's own test configuration (`tests/fixtures/sc4s-test-env/` in the workspace): its
//! `env_file`, and its `local/` tree as the context and app-parser directories. The second
//! vendor corpus is judged under exactly this configuration.

use std::path::{Path, PathBuf};

/// The configuration, read from its directory.
pub struct TestEnv {
    pub dir: PathBuf,
    /// `NAME=value` lines of the env_file, in file order.
    pub vars: Vec<(String, String)>,
    /// Every listener the env_file opens, the default ones first.
    pub listeners: Vec<Listener>,
}

/// One port of one listener, as SC4S's entrypoint and `source_syslog/plugin.py` derive it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listener {
    /// `DEFAULT`, or the id SC4S derives from the variable (`CISCO_ESA` from
    /// `SC4S_LISTEN_CISCO_ESA_TCP_PORT`, `THALES_STA` from `..._RFC6587_NOPARSE_PORT`).
    pub id: String,
    /// The protocol word: `UDP`, `TCP`, `TLS`, `RFC5426`, `RFC6587`, `RFC5425`,
    /// `RFC6587_NOPARSE`.
    pub proto: String,
    pub port: u16,
}

impl Listener {
    /// Whether the listener reads datagrams.
    pub fn is_udp(&self) -> bool {
        self.proto == "UDP" || self.proto == "RFC5426"
    }
}

/// `tests/fixtures/sc4s-test-env`, found from either package's manifest directory.
pub fn dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        manifest.join("tests/fixtures/sc4s-test-env"),
        manifest.join("../../tests/fixtures/sc4s-test-env"),
    ]
    .into_iter()
    .find(|d| d.join("env_file").is_file())
    .unwrap_or_else(|| panic!("no tests/fixtures/sc4s-test-env/env_file above {manifest:?}"))
}

impl TestEnv {
    pub fn load() -> TestEnv {
        let dir = dir();
        let path = dir.join("env_file");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let vars: Vec<(String, String)> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (k, v) = l
                    .split_once('=')
                    .unwrap_or_else(|| panic!("{}: not NAME=value: {l}", path.display()));
                (k.trim().to_owned(), v.trim().to_owned())
            })
            .collect();
        let mut listeners = vec![
            Listener {
                id: "DEFAULT".into(),
                proto: "UDP".into(),
                port: 514,
            },
            Listener {
                id: "DEFAULT".into(),
                proto: "TCP".into(),
                port: 514,
            },
            Listener {
                id: "DEFAULT".into(),
                proto: "RFC5426".into(),
                port: 601,
            },
            Listener {
                id: "DEFAULT".into(),
                proto: "RFC6587".into(),
                port: 601,
            },
        ];
        for (name, value) in &vars {
            let Some((id, proto)) = listener_var(name) else {
                continue;
            };
            for port in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let port: u16 = port
                    .parse()
                    .unwrap_or_else(|e| panic!("{name}={value}: {e}"));
                listeners.retain(|l| !(l.port == port && l.is_udp() == (proto == "UDP")));
                listeners.push(Listener {
                    id: id.to_owned(),
                    proto: proto.to_owned(),
                    port,
                });
            }
        }
        TestEnv {
            dir,
            vars,
            listeners,
        }
    }

    /// The env_file's value of `name`.
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    /// `local/context`: SC4S's context files (`SLUICE_VENDOR_CORPUS_CONTEXT` names another
    /// directory, e.g. to try the host hints as `vendor_product_by_source` rows while the
    /// app-parser loader is missing).
    pub fn context_dir(&self) -> PathBuf {
        match std::env::var_os("SLUICE_VENDOR_CORPUS_CONTEXT") {
            Some(d) => PathBuf::from(d),
            None => self.dir.join("local/context"),
        }
    }

    /// `local/config/app_parsers`: SC4S's test app-parsers.
    pub fn app_parsers_dir(&self) -> PathBuf {
        self.dir.join("local/config/app_parsers")
    }

    /// The app-parser files (subdirectories included, files of a directory before those of
    /// its subdirectories, each level in name order, as SC4S includes them), read.
    pub fn app_parser_files(&self) -> Vec<sluice_proto::classify::local::SourceFile> {
        fn walk(dir: &Path, out: &mut Vec<sluice_proto::classify::local::SourceFile>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            for p in entries.iter().filter(|p| p.is_file()) {
                if p.extension().is_some_and(|e| e == "conf") {
                    let text = std::fs::read_to_string(p)
                        .unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
                    out.push(sluice_proto::classify::local::SourceFile::new(
                        p.display().to_string(),
                        text,
                    ));
                }
            }
            for p in entries.iter().filter(|p| p.is_dir()) {
                walk(p, out);
            }
        }
        let mut out = Vec::new();
        walk(&self.app_parsers_dir(), &mut out);
        out
    }

    /// The listener a case's `port` and `transport` reach.
    pub fn listener(&self, port: u16, transport: &str) -> &Listener {
        let udp = transport.eq_ignore_ascii_case("udp");
        self.listeners
            .iter()
            .find(|l| l.port == port && l.is_udp() == udp)
            .unwrap_or_else(|| panic!("the test configuration opens no {transport} port {port}"))
    }

    /// The listener ids that are not `DEFAULT`, once each, in env_file order.
    pub fn vendor_listener_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for l in &self.listeners {
            if l.id != "DEFAULT" && !ids.contains(&l.id) {
                ids.push(l.id.clone());
            }
        }
        ids
    }
}

/// `SC4S_LISTEN_<ID>_<PROTO>_PORT` (and `_RFC6587_NOPARSE_PORT`): the id and the protocol
/// word, with SC4S's entrypoint rules (`SOURCE_ALL_SET`).
fn listener_var(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("SC4S_LISTEN_")?.strip_suffix("_PORT")?;
    if let Some(id) = rest.strip_suffix("_RFC6587_NOPARSE") {
        return Some((id, "RFC6587_NOPARSE"));
    }
    let (id, proto) = rest.rsplit_once('_')?;
    let known = ["UDP", "TCP", "TLS", "RFC5426", "RFC6587", "RFC5425"];
    known.contains(&proto).then_some((id, proto))
}
