//! `SC4S_USE_NAME_CACHE`: the last good hostname of each sender, filled in for its messages
//! whose HOST is missing or an address (the look-up rule is
//! [`sluice_proto::classify::host_is_nil_or_ip`]).
//!
//! SC4S keeps it in sqlite, written from the message path (and loses UDP under load). Here it
//! is a [`Learned`] table (lock-free look-ups, a queue only for new or changed names, merged
//! and written by a task): `$SC4S_VAR/hostip.cache`, one `address<TAB>name` line per sender;
//! `SC4S_CLEAR_NAME_CACHE=yes` deletes the file at start.

use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use sluice_proto::classify::{Inline, NameCache, host_is_nil_or_ip};
use tokio_util::sync::CancellationToken;

use crate::learned::{Learned, Persisted};
pub use crate::learned::{MERGE, PERSIST};

/// The cache of one daemon.
#[derive(Debug)]
pub struct HostNames(Learned<IpAddr, Box<str>>);

impl NameCache for HostNames {
    fn lookup(&self, ip: IpAddr) -> Option<Inline> {
        let names = self.0.snapshot();
        names.get(&ip).and_then(|n| Inline::concat(&[n.as_bytes()]))
    }
}

impl HostNames {
    /// Reads the cache at `path` (none yet: empty), after deleting it when `clear`.
    pub fn open(path: &Path, clear: bool) -> std::io::Result<HostNames> {
        if clear {
            match std::fs::remove_file(path) {
                Ok(()) => {
                    tracing::info!(path = %path.display(), "SC4S_CLEAR_NAME_CACHE: name cache deleted")
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let parse = |line: &str| {
            line.split_once('\t')
                .and_then(|(ip, name)| Some((ip.parse::<IpAddr>().ok()?, name)))
                .filter(|(_, name)| valid_name(name.as_bytes()))
                .map(|(ip, name)| (ip, Box::<str>::from(name)))
        };
        Learned::open(path, "name cache", "address<TAB>hostname", parse).map(HostNames)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Learns from one classified message: `host` is its final HOST (`None`: the sender's
    /// address). SC4S's `lp-dest-psc`: every HOST that is not nil or an address is the
    /// sender's name.
    #[inline]
    pub fn observe(&self, ip: IpAddr, host: Option<&[u8]>) {
        if host_is_nil_or_ip(host, ip) {
            return;
        }
        // `None` here is 127.0.0.1 as its own HOST, which SC4S's filter lets through.
        let name = host.unwrap_or(b"127.0.0.1");
        if !valid_name(name) {
            return;
        }
        let same = |known: &str| known.as_bytes().eq_ignore_ascii_case(name);
        if self.0.snapshot().get(&ip).is_some_and(|k| same(k)) {
            return;
        }
        let mut pending = self.0.pending();
        if pending.get(&ip).is_some_and(|k| same(k)) {
            return;
        }
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        pending.insert(ip, lower.into());
    }

    /// Makes the queued names visible; `true` when something changed.
    pub fn merge(&self) -> bool {
        self.0.merge()
    }

    /// Writes the cache when it changed since the last write.
    pub fn persist(&self) -> std::io::Result<()> {
        self.0
            .persist(|ip, name, out| out.push_str(&format!("{ip}\t{name}")))
    }
}

impl Persisted for HostNames {
    fn merge(&self) {
        self.0.merge();
    }

    fn persist(&self) -> std::io::Result<()> {
        HostNames::persist(self)
    }

    fn describe(&self) -> (&'static str, &Path) {
        (self.0.what(), self.0.path())
    }
}

/// A name the file format can hold and a header could carry.
fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.len() <= 255 && !name.iter().any(|&b| b.is_ascii_control())
}

static INSTALLED: OnceLock<Arc<HostNames>> = OnceLock::new();

/// Opens the daemon's cache at start (deleting it first with `clear`); later calls return
/// the same one.
pub fn install(path: &Path, clear: bool) -> std::io::Result<Arc<HostNames>> {
    if let Some(n) = INSTALLED.get() {
        return Ok(n.clone());
    }
    let n = Arc::new(HostNames::open(path, clear)?);
    Ok(INSTALLED.get_or_init(|| n).clone())
}

/// The cache opened at start, if `SC4S_USE_NAME_CACHE` was on then.
pub fn installed() -> Option<Arc<HostNames>> {
    INSTALLED.get().cloned()
}

/// Merges every [`MERGE`] and writes every [`PERSIST`] until `stop`, then writes once more.
pub fn spawn(names: Arc<HostNames>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    crate::learned::spawn(names, stop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(192, 0, 2, last))
    }

    #[test]
    fn learns_names_not_addresses_and_persists() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("var/hostip.cache");
        let c = HostNames::open(&path, false).unwrap();
        c.observe(ip(1), Some(b"FW-Edge-01"));
        c.observe(ip(2), Some(b"10.0.0.2"));
        c.observe(ip(3), None);
        c.observe(ip(4), Some(b"-"));
        // Queued, not visible until merged.
        assert_eq!(c.lookup(ip(1)), None);
        assert!(c.merge());
        assert_eq!(c.lookup(ip(1)).unwrap().as_bytes(), b"fw-edge-01");
        assert_eq!(c.len(), 1);
        // Same name again: nothing queued.
        c.observe(ip(1), Some(b"fw-edge-01"));
        assert!(!c.merge());
        c.observe(ip(1), Some(b"fw-edge-02"));
        assert!(c.merge());
        c.persist().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "192.0.2.1\tfw-edge-02\n"
        );
        // A restart reads it; CLEAR deletes it.
        let again = HostNames::open(&path, false).unwrap();
        assert_eq!(again.lookup(ip(1)).unwrap().as_bytes(), b"fw-edge-02");
        let cleared = HostNames::open(&path, true).unwrap();
        assert!(cleared.is_empty());
        assert!(!path.exists());
    }

    #[test]
    fn unreadable_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hostip.cache");
        std::fs::write(&path, "192.0.2.9\tgood\nnot-an-ip\tx\n192.0.2.8\n\n").unwrap();
        let c = HostNames::open(&path, false).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c.lookup(ip(9)).unwrap().as_bytes(), b"good");
        // Unchanged: no write.
        std::fs::remove_file(&path).unwrap();
        c.persist().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn loopback_as_its_own_host_is_learned_as_sc4s_does() {
        let dir = tempfile::tempdir().unwrap();
        let c = HostNames::open(&dir.path().join("c"), false).unwrap();
        let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
        c.observe(lo, None);
        c.merge();
        assert_eq!(c.lookup(lo).unwrap().as_bytes(), b"127.0.0.1");
    }
}
