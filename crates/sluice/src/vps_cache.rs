//! `SC4S_USE_VPS_CACHE`: the vendor and product of each host name's last event, read back as
//! the network source of that host's later messages on listeners without a vendor
//! ([`sluice_proto::classify::VpsCache`]; SC4S's `p_vpst_cache` and `d_vpsc`).
//!
//! SC4S writes every event whose HOST is a name (not nil, not an address) to a sqlite file
//! from a Python destination. Here, as for the name cache ([`crate::name_cache`]):
//! * look-ups (the classifier, per message) load an immutable snapshot through `arc-swap`:
//!   no lock, no allocation;
//! * each event compares its host's entry in the snapshot with its own vendor and product
//!   (one hash look-up); only a new or changed pair takes a lock and is queued;
//! * a task merges the queue into a new snapshot every [`MERGE`] and writes the cache to
//!   `$SC4S_VAR/vps.cache` every [`PERSIST`] when it changed, and at shutdown.
//!
//! The file is one `host<TAB>vendor<TAB>product` line per host, written to a temporary file
//! and renamed, so a crash leaves the old or the new cache, never half of one.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use sluice_proto::classify::{VendorProduct, VpsCache, host_is_nil_or_ip};
use tokio_util::sync::CancellationToken;

/// How often queued entries become visible to look-ups.
pub const MERGE: Duration = Duration::from_secs(1);
/// How often a changed cache is written to its file.
pub const PERSIST: Duration = Duration::from_secs(30);

/// Host names (lower case) and their vendor and product.
type Entries = HashMap<Box<[u8]>, VendorProduct>;

/// The cache of one daemon.
#[derive(Debug)]
pub struct VendorProducts {
    snapshot: ArcSwap<Entries>,
    pending: Mutex<Entries>,
    dirty: AtomicBool,
    path: PathBuf,
}

/// The longest host name looked up without allocating (longer names are not cached).
const HOST_MAX: usize = 255;

impl VpsCache for VendorProducts {
    fn lookup(&self, host: &[u8]) -> Option<VendorProduct> {
        let mut buf = [0u8; HOST_MAX];
        let key = lower(host, &mut buf)?;
        self.snapshot.load().get(key).copied()
    }
}

/// `host` in ASCII lower case, in `buf`; `None` when empty or too long.
fn lower<'b>(host: &[u8], buf: &'b mut [u8; HOST_MAX]) -> Option<&'b [u8]> {
    if host.is_empty() || host.len() > HOST_MAX {
        return None;
    }
    let out = &mut buf[..host.len()];
    out.copy_from_slice(host);
    out.make_ascii_lowercase();
    Some(out)
}

impl VendorProducts {
    /// Reads the cache at `path` (none yet: empty). Lines that cannot be read are skipped
    /// with a warning: a cache is rebuilt by traffic.
    pub fn open(path: &Path) -> std::io::Result<VendorProducts> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut entries = Entries::new();
        for (n, line) in text.lines().enumerate() {
            let mut cols = line.split('\t');
            let parsed = match (cols.next(), cols.next(), cols.next(), cols.next()) {
                (Some(host), Some(v), Some(p), None) if valid_host(host.as_bytes()) => {
                    VendorProduct::new(v.as_bytes(), p.as_bytes()).map(|vp| (host, vp))
                }
                _ => None,
            };
            match parsed {
                Some((host, vp)) => {
                    entries.insert(host.to_ascii_lowercase().into_bytes().into(), vp);
                }
                None if line.is_empty() => {}
                None => tracing::warn!(
                    path = %path.display(),
                    line = n + 1,
                    "vendor-product cache: expected host<TAB>vendor<TAB>product; line skipped"
                ),
            }
        }
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)?;
        }
        Ok(VendorProducts {
            snapshot: ArcSwap::from_pointee(entries),
            pending: Mutex::new(Entries::new()),
            dirty: AtomicBool::new(false),
            path: path.to_owned(),
        })
    }

    pub fn len(&self) -> usize {
        self.snapshot.load().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Learns from one event: `host` is its final HOST (`None`: the sender's address),
    /// `vendor` and `product` its `sc4s_vendor` and `sc4s_product`. SC4S's `lp-dest-vpsc`:
    /// every event whose HOST is not nil or an address.
    #[inline]
    pub fn observe(&self, ip: IpAddr, host: Option<&[u8]>, vendor: &[u8], product: &[u8]) {
        if host_is_nil_or_ip(host, ip) {
            return;
        }
        // `None` here is 127.0.0.1 as its own HOST, which SC4S's filter lets through.
        let host = host.unwrap_or(b"127.0.0.1");
        if !valid_host(host) {
            return;
        }
        let mut buf = [0u8; HOST_MAX];
        let Some(key) = lower(host, &mut buf) else {
            return;
        };
        let same = |known: &VendorProduct| {
            known.vendor().as_bytes() == vendor && known.product().as_bytes() == product
        };
        if self.snapshot.load().get(key).is_some_and(same) {
            return;
        }
        let Some(vp) = VendorProduct::new(vendor, product) else {
            return;
        };
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if pending.get(key).is_some_and(same) {
            return;
        }
        pending.insert(key.into(), vp);
    }

    /// Makes the queued entries visible; `true` when something changed.
    pub fn merge(&self) -> bool {
        let updates = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        if updates.is_empty() {
            return false;
        }
        let mut entries = Entries::clone(&self.snapshot.load());
        entries.extend(updates);
        self.snapshot.store(Arc::new(entries));
        self.dirty.store(true, Ordering::Release);
        true
    }

    /// Writes the cache when it changed since the last write.
    pub fn persist(&self) -> std::io::Result<()> {
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let entries = self.snapshot.load();
        let mut sorted: Vec<_> = entries.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut text = String::with_capacity(entries.len() * 48);
        for (host, vp) in sorted {
            text.push_str(&String::from_utf8_lossy(host));
            text.push('\t');
            text.push_str(vp.vendor());
            text.push('\t');
            text.push_str(vp.product());
            text.push('\n');
        }
        let tmp = self.path.with_extension("cache.tmp");
        let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &self.path));
        if written.is_err() {
            self.dirty.store(true, Ordering::Release);
        }
        written
    }
}

/// A host name the file format can hold and a header could carry.
fn valid_host(host: &[u8]) -> bool {
    !host.is_empty()
        && host.len() <= HOST_MAX
        && !host.iter().any(|&b| b.is_ascii_control())
        && std::str::from_utf8(host).is_ok()
}

static INSTALLED: OnceLock<Arc<VendorProducts>> = OnceLock::new();

/// Opens the daemon's cache at start; later calls return the same one.
pub fn install(path: &Path) -> std::io::Result<Arc<VendorProducts>> {
    if let Some(c) = INSTALLED.get() {
        return Ok(c.clone());
    }
    let c = Arc::new(VendorProducts::open(path)?);
    Ok(INSTALLED.get_or_init(|| c).clone())
}

/// The cache opened at start, if `SC4S_USE_VPS_CACHE` was on then.
pub fn installed() -> Option<Arc<VendorProducts>> {
    INSTALLED.get().cloned()
}

/// Merges every [`MERGE`] and writes every [`PERSIST`] until `stop`, then writes once more.
pub fn spawn(cache: Arc<VendorProducts>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut merge = tokio::time::interval(MERGE);
        merge.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut since_write = Duration::ZERO;
        loop {
            tokio::select! {
                _ = merge.tick() => {}
                _ = stop.cancelled() => break,
            }
            cache.merge();
            since_write += MERGE;
            if since_write >= PERSIST {
                since_write = Duration::ZERO;
                write(&cache);
            }
        }
        cache.merge();
        write(&cache);
    })
}

fn write(cache: &VendorProducts) {
    if let Err(e) = cache.persist() {
        tracing::warn!(path = %cache.path.display(), error = %e, "cannot write the vendor-product cache");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const IP: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

    #[test]
    fn learns_named_hosts_and_persists() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("var/vps.cache");
        let c = VendorProducts::open(&path).unwrap();
        c.observe(IP, Some(b"FW-Edge-01"), b"cisco", b"asa");
        c.observe(IP, Some(b"10.0.0.2"), b"cisco", b"asa");
        c.observe(IP, None, b"cisco", b"asa");
        c.observe(IP, Some(b"-"), b"cisco", b"asa");
        c.observe(IP, Some(b"web-1"), b"", b"x");
        // Queued, not visible until merged.
        assert!(c.lookup(b"fw-edge-01").is_none());
        assert!(c.merge());
        let vp = c.lookup(b"FW-EDGE-01").unwrap();
        assert_eq!((vp.vendor(), vp.product()), ("cisco", "asa"));
        assert_eq!(c.len(), 1);
        // The same pair again: nothing queued; a new one replaces it.
        c.observe(IP, Some(b"fw-edge-01"), b"cisco", b"asa");
        assert!(!c.merge());
        c.observe(IP, Some(b"fw-edge-01"), b"cisco", b"ftd");
        assert!(c.merge());
        c.persist().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "fw-edge-01\tcisco\tftd\n"
        );
        // A restart reads it; a bad line is skipped.
        std::fs::write(&path, "fw-edge-01\tcisco\tftd\nbroken line\nh2\tv\t\n").unwrap();
        let again = VendorProducts::open(&path).unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again.lookup(b"fw-edge-01").unwrap().product(), "ftd");
        // Unchanged: no write.
        std::fs::remove_file(&path).unwrap();
        again.persist().unwrap();
        assert!(!path.exists());
    }
}
