//! The buffer directory: file names, the lock file, reader position files.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::OpenError;
use crate::format::{POSITION_FILE_LEN, PositionSlot};

/// Name of the lock file.
pub const LOCK_FILE: &str = "lock";
const SEGMENT_PREFIX: &str = "seg-";
const SEGMENT_SUFFIX: &str = ".dat";
const READER_PREFIX: &str = "reader-";
const READER_SUFFIX: &str = ".pos";

pub fn segment_name(id: u64) -> String {
    format!("{SEGMENT_PREFIX}{id:020}{SEGMENT_SUFFIX}")
}

pub fn reader_file_name(name: &str) -> String {
    format!("{READER_PREFIX}{name}{READER_SUFFIX}")
}

/// Reader names become file names: keep them to a portable, unambiguous set.
pub fn valid_reader_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// What a directory listing holds.
#[derive(Debug, Default)]
pub struct Listing {
    /// Segment ids, ascending.
    pub segments: Vec<u64>,
    /// Reader names that have a position file.
    pub readers: Vec<String>,
}

pub fn list(dir: &Path) -> Result<Listing, OpenError> {
    let dir_err = |source| OpenError::Dir {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Listing::default();
    for entry in fs::read_dir(dir).map_err(dir_err)? {
        let entry = entry.map_err(dir_err)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(id) = name
            .strip_prefix(SEGMENT_PREFIX)
            .and_then(|n| n.strip_suffix(SEGMENT_SUFFIX))
            .filter(|n| n.len() == 20 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u64>().ok())
        {
            out.segments.push(id);
        } else if let Some(r) = name
            .strip_prefix(READER_PREFIX)
            .and_then(|n| n.strip_suffix(READER_SUFFIX))
            .filter(|n| valid_reader_name(n))
        {
            out.readers.push(r.to_owned());
        }
    }
    out.segments.sort_unstable();
    out.readers.sort();
    Ok(out)
}

/// Makes renames, creations and deletions in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Takes the directory's exclusive `flock`, or says who holds it. The lock is tied to the
/// returned file: it is released when the file is closed, including by the kernel when the
/// process dies, so a crashed sluice never leaves a stale lock behind.
pub fn lock(dir: &Path) -> Result<File, OpenError> {
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|source| OpenError::Dir {
            path: path.clone(),
            source,
        })?;
    match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let pid = file
                .read_to_string(&mut text)
                .ok()
                .and_then(|_| text.trim().parse().ok());
            return Err(OpenError::Locked {
                dir: dir.to_path_buf(),
                lock_file: path,
                pid,
            });
        }
        Err(fs::TryLockError::Error(source)) => return Err(OpenError::Io { path, source }),
    }
    let io_err = |source| OpenError::Io {
        path: path.clone(),
        source,
    };
    file.set_len(0).map_err(io_err)?;
    file.write_all_at(format!("{}\n", std::process::id()).as_bytes(), 0)
        .map_err(io_err)?;
    Ok(file)
}

/// Reads a position file: `Ok(None)` when it is damaged (both slots invalid).
pub fn read_position(path: &Path) -> io::Result<Option<PositionSlot>> {
    let mut buf = Vec::with_capacity(POSITION_FILE_LEN);
    File::open(path)?.read_to_end(&mut buf)?;
    Ok(PositionSlot::newest(&buf))
}

/// Creates (or resets) a position file with both slots holding `resume_from`, fully
/// allocated so that later in-place updates never need free space.
pub fn create_position(path: &Path, resume_from: u64) -> io::Result<()> {
    let mut buf = [0u8; POSITION_FILE_LEN];
    for generation in [0u64, 1] {
        let at = PositionSlot::offset_for(generation) as usize;
        let slot = PositionSlot {
            generation,
            resume_from,
        };
        buf[at..at + crate::format::POSITION_SLOT_LEN].copy_from_slice(&slot.encode());
    }
    let mut f = File::create(path)?;
    f.write_all(&buf)?;
    f.sync_all()
}

/// Overwrites one slot of a position file in place and syncs it.
pub fn write_position(path: &Path, slot: PositionSlot) -> io::Result<()> {
    let f = OpenOptions::new().write(true).open(path)?;
    f.write_all_at(&slot.encode(), PositionSlot::offset_for(slot.generation))?;
    f.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(segment_name(42), "seg-00000000000000000042.dat");
        assert!(valid_reader_name("hec_default-2"));
        for bad in ["", "a/b", "..", "a b", &"x".repeat(65)] {
            assert!(!valid_reader_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn listing_ignores_strangers() {
        let d = tempfile::tempdir().unwrap();
        for n in [
            "seg-00000000000000000002.dat",
            "seg-00000000000000000001.dat",
            "seg-1.dat",
            "reader-a.pos",
            "reader-.pos",
            "notes.txt",
        ] {
            File::create(d.path().join(n)).unwrap();
        }
        let l = list(d.path()).unwrap();
        assert_eq!(l.segments, [1, 2]);
        assert_eq!(l.readers, ["a"]);
    }

    #[test]
    fn position_file_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reader-x.pos");
        create_position(&p, 7).unwrap();
        assert_eq!(read_position(&p).unwrap().unwrap().resume_from, 7);
        write_position(
            &p,
            PositionSlot {
                generation: 2,
                resume_from: 9,
            },
        )
        .unwrap();
        assert_eq!(read_position(&p).unwrap().unwrap().resume_from, 9);
        write_position(
            &p,
            PositionSlot {
                generation: 3,
                resume_from: 11,
            },
        )
        .unwrap();
        let s = read_position(&p).unwrap().unwrap();
        assert_eq!((s.generation, s.resume_from), (3, 11));
    }

    #[test]
    fn second_lock_names_the_pid() {
        let d = tempfile::tempdir().unwrap();
        let _held = lock(d.path()).unwrap();
        match lock(d.path()) {
            Err(OpenError::Locked { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected Locked, got {other:?}"),
        }
    }
}
