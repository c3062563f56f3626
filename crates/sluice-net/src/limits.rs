//! The process's open-file limit. Every stream connection is a file descriptor, and the
//! usual soft limit (1024) is below one port's default connection limit (2000): a daemon
//! that does not raise it fails `accept` with `EMFILE` long before its own limit applies.

use std::io;

/// `RLIMIT_NOFILE` before and after [`raise_fd_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// Soft limit found at start.
    pub before: u64,
    /// Soft limit now in force.
    pub now: u64,
    /// Hard limit: the most an unprivileged process can raise the soft limit to.
    pub hard: u64,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (what daemons such as syslog-ng and
/// nginx do at start) and reports both.
pub fn raise_fd_limit() -> io::Result<FdLimit> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a live, writable rlimit; getrlimit only writes into it.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let before = lim.rlim_cur;
    if lim.rlim_cur < lim.rlim_max {
        let want = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: `want` is a live rlimit; setrlimit only reads it.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const want) } != 0 {
            return Err(io::Error::last_os_error());
        }
        lim.rlim_cur = lim.rlim_max;
    }
    Ok(FdLimit {
        before,
        now: lim.rlim_cur,
        hard: lim.rlim_max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_limit_ends_at_the_hard_limit() {
        let l = raise_fd_limit().unwrap();
        assert!(l.now >= l.before);
        assert_eq!(l.now, l.hard);
        // Idempotent.
        assert_eq!(raise_fd_limit().unwrap().before, l.hard);
    }
}
