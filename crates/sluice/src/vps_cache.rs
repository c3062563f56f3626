//! `SC4S_USE_VPS_CACHE`: the vendor and product of each host name's last event, read back as
//! the network source of that host's later messages on listeners without a vendor
//! ([`sluice_proto::classify::VpsCache`]; SC4S's `p_vpst_cache` and `d_vpsc`).
//!
//! SC4S writes every event whose HOST is a name (not nil, not an address) to a sqlite file
//! from a Python destination. Here it is a [`Learned`] table, as the name cache
//! ([`crate::name_cache`]) is: lock-free look-ups, a queue only for a new or changed pair,
//! merged and written by a task: `$SC4S_VAR/vps.cache`, one `host<TAB>vendor<TAB>product`
//! line per host.

use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use sluice_proto::classify::{VendorProduct, VpsCache, host_is_nil_or_ip};
use tokio_util::sync::CancellationToken;

use crate::learned::{Learned, Persisted};
pub use crate::learned::{MERGE, PERSIST};

/// The cache of one daemon: host names (lower case) and their vendor and product.
#[derive(Debug)]
pub struct VendorProducts(Learned<Box<[u8]>, VendorProduct>);

/// The longest host name looked up without allocating (longer names are not cached).
const HOST_MAX: usize = 255;

impl VpsCache for VendorProducts {
    fn lookup(&self, host: &[u8]) -> Option<VendorProduct> {
        let mut buf = [0u8; HOST_MAX];
        let key = lower(host, &mut buf)?;
        self.0.snapshot().get(key).copied()
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
    /// Reads the cache at `path` (none yet: empty).
    pub fn open(path: &Path) -> std::io::Result<VendorProducts> {
        let parse = |line: &str| {
            let mut cols = line.split('\t');
            match (cols.next(), cols.next(), cols.next(), cols.next()) {
                (Some(host), Some(v), Some(p), None) if valid_host(host.as_bytes()) => {
                    VendorProduct::new(v.as_bytes(), p.as_bytes())
                        .map(|vp| (host.to_ascii_lowercase().into_bytes().into(), vp))
                }
                _ => None,
            }
        };
        Learned::open(
            path,
            "vendor-product cache",
            "host<TAB>vendor<TAB>product",
            parse,
        )
        .map(VendorProducts)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
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
        if self.0.snapshot().get(key).is_some_and(same) {
            return;
        }
        let Some(vp) = VendorProduct::new(vendor, product) else {
            return;
        };
        let mut pending = self.0.pending();
        if pending.get(key).is_some_and(same) {
            return;
        }
        pending.insert(key.into(), vp);
    }

    /// Makes the queued entries visible; `true` when something changed.
    pub fn merge(&self) -> bool {
        self.0.merge()
    }

    /// Writes the cache when it changed since the last write.
    pub fn persist(&self) -> std::io::Result<()> {
        self.0.persist(|host, vp, out| {
            out.push_str(&String::from_utf8_lossy(host));
            out.push('\t');
            out.push_str(vp.vendor());
            out.push('\t');
            out.push_str(vp.product());
        })
    }
}

impl Persisted for VendorProducts {
    fn merge(&self) {
        self.0.merge();
    }

    fn persist(&self) -> std::io::Result<()> {
        VendorProducts::persist(self)
    }

    fn describe(&self) -> (&'static str, &Path) {
        (self.0.what(), self.0.path())
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
    crate::learned::spawn(cache, stop)
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
