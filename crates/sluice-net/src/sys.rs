//! Thin wrappers over the socket calls `socket2` does not cover. All FFI of the crate except
//! the `recvmmsg`/`sendmmsg` loops lives here; each function is safe to call with any socket.

use std::{
    io,
    mem::{self, MaybeUninit},
    net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6},
    os::fd::{AsFd, AsRawFd},
};

use libc::{c_int, c_void, socklen_t};

// Values from include/uapi/asm-generic/socket.h, shared by x86_64, aarch64, riscv64 and every
// other architecture using the generic socket option numbers. Defined here because not every
// libc target module re-exports them.
#[cfg(not(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc",
    target_arch = "sparc64",
    target_arch = "powerpc",
    target_arch = "powerpc64"
)))]
mod opt {
    pub const SO_RCVBUFFORCE: libc::c_int = 33;
    pub const SO_RXQ_OVFL: libc::c_int = 40;
    pub const SO_ATTACH_REUSEPORT_CBPF: libc::c_int = 51;
    pub const SO_MEMINFO: libc::c_int = 55;
}
#[cfg(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "sparc",
    target_arch = "sparc64",
    target_arch = "powerpc",
    target_arch = "powerpc64"
))]
compile_error!("sluice-net: socket option numbers for this architecture are not defined");
pub(crate) use opt::{SO_ATTACH_REUSEPORT_CBPF, SO_MEMINFO, SO_RCVBUFFORCE, SO_RXQ_OVFL};

/// Number of `u32` values `SO_MEMINFO` returns (`SK_MEMINFO_VARS`, stable since Linux 4.6).
const SK_MEMINFO_VARS: usize = 9;
const SK_MEMINFO_RMEM_ALLOC: usize = 0;
const SK_MEMINFO_RCVBUF: usize = 1;
const SK_MEMINFO_DROPS: usize = 8;

/// `setsockopt(SOL_SOCKET, opt, &value)` for an `int` option.
pub(crate) fn set_int_opt(sock: &impl AsFd, opt: c_int, value: c_int) -> io::Result<()> {
    // SAFETY: the fd is valid for the duration of the borrow, optval points to a live c_int
    // and optlen is its exact size; the kernel only reads it.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            (&raw const value).cast::<c_void>(),
            mem::size_of::<c_int>() as socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Attach the classic BPF reuseport selector `ld rand; mod #n; ret a` to the group of `sock`.
pub(crate) fn attach_reuseport_cbpf(sock: &impl AsFd, n: u32) -> io::Result<()> {
    // BPF_LD|BPF_W|BPF_ABS at the ancillary offset SKF_AD_RANDOM loads a prandom u32.
    const LD_W_ABS: u16 = 0x20;
    // BPF_ALU|BPF_MOD|BPF_K.
    const ALU_MOD_K: u16 = 0x94;
    // BPF_RET|BPF_A: the return value is the index of the socket in the group.
    const RET_A: u16 = 0x16;
    let mut prog = [
        libc::sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: (libc::SKF_AD_OFF + libc::SKF_AD_RANDOM) as u32,
        },
        libc::sock_filter {
            code: ALU_MOD_K,
            jt: 0,
            jf: 0,
            k: n,
        },
        libc::sock_filter {
            code: RET_A,
            jt: 0,
            jf: 0,
            k: 0,
        },
    ];
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    // SAFETY: fprog points to `prog`, which outlives the call; the kernel copies the filter
    // during setsockopt and does not keep the pointer. optlen is the exact struct size.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ATTACH_REUSEPORT_CBPF,
            (&raw const fprog).cast::<c_void>(),
            mem::size_of::<libc::sock_fprog>() as socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What `SO_MEMINFO` says about a socket's receive side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemInfo {
    pub(crate) rmem_alloc: u32,
    pub(crate) rcvbuf: u32,
    pub(crate) drops: u32,
}

pub(crate) fn meminfo(sock: &impl AsFd) -> io::Result<MemInfo> {
    let mut vals = [0u32; SK_MEMINFO_VARS];
    let mut len = mem::size_of_val(&vals) as socklen_t;
    // SAFETY: optval points to a writable buffer of `len` bytes that lives across the call;
    // the kernel writes at most `len` bytes and stores the written length in `len`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
            vals.as_mut_ptr().cast::<c_void>(),
            &raw mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    if (len as usize) < (SK_MEMINFO_DROPS + 1) * mem::size_of::<u32>() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("SO_MEMINFO returned {len} bytes, too short for the drop counter"),
        ));
    }
    Ok(MemInfo {
        rmem_alloc: vals[SK_MEMINFO_RMEM_ALLOC],
        rcvbuf: vals[SK_MEMINFO_RCVBUF],
        drops: vals[SK_MEMINFO_DROPS],
    })
}

/// An all-zero value of a C struct for which all-zero bytes are a valid value.
///
/// # Safety
/// `T` must be a plain C struct (integers, raw pointers, arrays of those) for which the
/// all-zero bit pattern is valid.
pub(crate) unsafe fn zeroed<T>() -> T {
    // SAFETY: guaranteed by the caller.
    unsafe { MaybeUninit::<T>::zeroed().assume_init() }
}

/// Convert a kernel-filled `sockaddr_storage` into a std address. IPv4-mapped IPv6 addresses
/// (IPv4 traffic on a dual-stack socket) become plain IPv4.
pub(crate) fn sockaddr_to_std(ss: &libc::sockaddr_storage, len: socklen_t) -> Option<SocketAddr> {
    let len = len as usize;
    match c_int::from(ss.ss_family) {
        libc::AF_INET if len >= mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: sockaddr_storage is at least as large and as aligned as sockaddr_in, and
            // the kernel wrote an AF_INET address of this size into it.
            let sin = unsafe { &*(&raw const *ss).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes()),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 if len >= mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above for sockaddr_in6.
            let sin6 = unsafe { &*(&raw const *ss).cast::<libc::sockaddr_in6>() };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            let port = u16::from_be(sin6.sin6_port);
            Some(match ip.to_ipv4_mapped() {
                Some(v4) => SocketAddr::V4(SocketAddrV4::new(v4, port)),
                None => SocketAddr::V6(SocketAddrV6::new(
                    ip,
                    port,
                    sin6.sin6_flowinfo,
                    sin6.sin6_scope_id,
                )),
            })
        }
        _ => None,
    }
}

/// The capabilities of this process relevant to the socket tricks, from `/proc/self/status`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Caps {
    pub(crate) sys_admin: bool,
    pub(crate) bpf: bool,
}

pub(crate) fn effective_caps() -> Option<Caps> {
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_BPF: u32 = 39;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))?
        .trim();
    let eff = u64::from_str_radix(hex, 16).ok()?;
    Some(Caps {
        sys_admin: eff & (1 << CAP_SYS_ADMIN) != 0,
        bpf: eff & (1 << CAP_BPF) != 0,
    })
}

/// The effective uid, from `/proc/self/status` (`Uid: real effective saved fs`).
pub(crate) fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Read a single integer from a `/proc/sys` file (e.g. `net/core/rmem_max`).
pub(crate) fn read_sysctl(path: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/sys/{path}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddr_conversion_v4_v6_and_mapped() {
        // SAFETY: sockaddr_storage is a plain C struct; all zero is a valid (AF_UNSPEC) value.
        let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
        assert_eq!(sockaddr_to_std(&ss, 0), None);

        {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let sin = unsafe { &mut *(&raw mut ss).cast::<libc::sockaddr_in>() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = 514u16.to_be();
            sin.sin_addr.s_addr = u32::from_ne_bytes([10, 1, 2, 3]);
        }
        let len4 = mem::size_of::<libc::sockaddr_in>() as socklen_t;
        assert_eq!(
            sockaddr_to_std(&ss, len4),
            Some("10.1.2.3:514".parse().unwrap())
        );
        // A short length is not trusted.
        assert_eq!(sockaddr_to_std(&ss, len4 - 1), None);

        // SAFETY: as above.
        let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
        {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in6.
            let sin6 = unsafe { &mut *(&raw mut ss).cast::<libc::sockaddr_in6>() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = 6514u16.to_be();
            sin6.sin6_addr.s6_addr = "::ffff:192.0.2.7".parse::<Ipv6Addr>().unwrap().octets();
        }
        let len6 = mem::size_of::<libc::sockaddr_in6>() as socklen_t;
        assert_eq!(
            sockaddr_to_std(&ss, len6),
            Some("192.0.2.7:6514".parse().unwrap())
        );
        {
            // SAFETY: as above.
            let sin6 = unsafe { &mut *(&raw mut ss).cast::<libc::sockaddr_in6>() };
            sin6.sin6_addr.s6_addr = "2001:db8::1".parse::<Ipv6Addr>().unwrap().octets();
        }
        assert_eq!(
            sockaddr_to_std(&ss, len6),
            Some("[2001:db8::1]:6514".parse().unwrap())
        );
    }
}
