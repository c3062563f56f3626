//! A table the daemon learns from traffic and keeps in a file: what the name cache
//! ([`crate::name_cache`], `SC4S_USE_NAME_CACHE`) and the vendor-product cache
//! ([`crate::vps_cache`], `SC4S_USE_VPS_CACHE`) share.
//!
//! * Look-ups (the classifier, per message) load an immutable snapshot through `arc-swap`:
//!   no lock, no allocation.
//! * An event compares its entry in the snapshot with what it carries (one hash look-up);
//!   only a new or changed entry takes the lock of the pending queue.
//! * A task ([`spawn`]) merges the queue into a new snapshot every [`MERGE`] and writes the
//!   file every [`PERSIST`] when it changed, and once more at shutdown.
//! * The file is one line per entry, sorted, written to a temporary file and renamed, so a
//!   crash leaves the old or the new table, never half of one. A line that cannot be read
//!   is skipped with a warning naming the file and line: a cache is rebuilt by traffic.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use arc_swap::{ArcSwap, Guard};
use tokio_util::sync::CancellationToken;

/// How often queued entries become visible to look-ups.
pub const MERGE: Duration = Duration::from_secs(1);
/// How often a changed table is written to its file.
pub const PERSIST: Duration = Duration::from_secs(30);

/// One learned table and its file.
#[derive(Debug)]
pub struct Learned<K, V> {
    snapshot: ArcSwap<HashMap<K, V>>,
    pending: Mutex<HashMap<K, V>>,
    dirty: AtomicBool,
    path: PathBuf,
    /// What the table is, for log lines ("name cache").
    what: &'static str,
}

impl<K: Eq + Hash + Ord + Clone, V: Clone> Learned<K, V> {
    /// Reads the table at `path` (none yet: empty) with `parse` (one line to an entry;
    /// `None`: a line the format does not allow, skipped with a warning that says what
    /// `expected`), and makes sure its directory exists for the first write.
    pub fn open(
        path: &Path,
        what: &'static str,
        expected: &'static str,
        parse: impl Fn(&str) -> Option<(K, V)>,
    ) -> std::io::Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut entries = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            match parse(line) {
                Some((k, v)) => {
                    entries.insert(k, v);
                }
                None if line.is_empty() => {}
                None => tracing::warn!(
                    path = %path.display(),
                    line = n + 1,
                    "{what}: expected {expected}; line skipped"
                ),
            }
        }
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Learned {
            snapshot: ArcSwap::from_pointee(entries),
            pending: Mutex::new(HashMap::new()),
            dirty: AtomicBool::new(false),
            path: path.to_owned(),
            what,
        })
    }

    /// The entries look-ups see.
    #[inline]
    pub fn snapshot(&self) -> Guard<Arc<HashMap<K, V>>> {
        self.snapshot.load()
    }

    /// The queue of entries not yet merged (a poisoned lock is taken over: the queue holds
    /// only whole entries).
    pub fn pending(&self) -> MutexGuard<'_, HashMap<K, V>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn len(&self) -> usize {
        self.snapshot.load().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the table is, for log lines ("name cache").
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Makes the queued entries visible; `true` when something changed.
    pub fn merge(&self) -> bool {
        let updates = std::mem::take(&mut *self.pending());
        if updates.is_empty() {
            return false;
        }
        let mut entries = HashMap::clone(&self.snapshot.load());
        entries.extend(updates);
        self.snapshot.store(Arc::new(entries));
        self.dirty.store(true, Ordering::Release);
        true
    }

    /// Writes the table, one `line` per entry in key order, when it changed since the last
    /// write.
    pub fn persist(&self, line: impl Fn(&K, &V, &mut String)) -> std::io::Result<()> {
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let entries = self.snapshot.load();
        let mut sorted: Vec<_> = entries.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let mut text = String::with_capacity(entries.len() * 48);
        for (k, v) in sorted {
            line(k, v, &mut text);
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

/// A learned table the [`spawn`]ed task keeps merged and written.
pub trait Persisted: Send + Sync + 'static {
    /// Makes the queued entries visible.
    fn merge(&self);
    /// Writes the file when the table changed.
    fn persist(&self) -> std::io::Result<()>;
    /// For the warning when the file cannot be written.
    fn describe(&self) -> (&'static str, &Path);
}

/// Merges every [`MERGE`] and writes every [`PERSIST`] until `stop`, then writes once more.
pub fn spawn<C: Persisted>(cache: Arc<C>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
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
                write(&*cache);
            }
        }
        cache.merge();
        write(&*cache);
    })
}

fn write<C: Persisted>(cache: &C) {
    if let Err(e) = cache.persist() {
        let (what, path) = cache.describe();
        tracing::warn!(path = %path.display(), error = %e, "cannot write the {what}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Option<(String, u32)> {
        let (k, v) = line.split_once('\t')?;
        Some((k.to_owned(), v.parse().ok()?))
    }

    fn line(k: &String, v: &u32, out: &mut String) {
        out.push_str(&format!("{k}\t{v}"));
    }

    #[test]
    fn queued_entries_appear_on_merge_and_persist_round_trips_skipping_bad_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/t.cache");
        let t: Learned<String, u32> = Learned::open(&path, "test table", "k<TAB>n", parse).unwrap();
        assert!(t.is_empty());
        assert!(
            path.parent().unwrap().is_dir(),
            "the directory is made at open"
        );
        t.pending().insert("b".into(), 2);
        t.pending().insert("a".into(), 1);
        assert!(t.snapshot().is_empty(), "not visible before the merge");
        t.persist(line).unwrap();
        assert!(!path.exists(), "nothing changed yet: nothing written");
        assert!(t.merge());
        assert!(!t.merge(), "an empty queue changes nothing");
        assert_eq!(t.snapshot().get("a"), Some(&1));
        t.persist(line).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\t1\nb\t2\n");
        std::fs::write(&path, "a\t1\nnot a line\n\nb\t2\n").unwrap();
        let again: Learned<String, u32> =
            Learned::open(&path, "test table", "k<TAB>n", parse).unwrap();
        assert_eq!(again.len(), 2);
    }

    #[test]
    fn a_failed_write_is_tried_again_next_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.cache");
        let t: Learned<String, u32> = Learned::open(&path, "test table", "k<TAB>n", parse).unwrap();
        t.pending().insert("a".into(), 1);
        t.merge();
        std::fs::create_dir(dir.path().join("t.cache.tmp")).unwrap();
        assert!(t.persist(line).is_err());
        std::fs::remove_dir(dir.path().join("t.cache.tmp")).unwrap();
        t.persist(line).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\t1\n");
    }
}
