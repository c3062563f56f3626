//! How datagrams are spread over the sockets of a group.
//!
//! | mode | mechanism | needs |
//! |---|---|---|
//! | [`Balance::Ebpf`] | `ebpf/reuseport_select.o`: `BPF_PROG_TYPE_SK_REUSEPORT` + `REUSEPORT_SOCKARRAY`, random socket per datagram, loaded by aya 0.14 | `CAP_BPF` (or root), Linux ≥ 5.2 (global data) |
//! | [`Balance::Cbpf`] | `SO_ATTACH_REUSEPORT_CBPF` with `ld rand; mod #N; ret a` | nothing (Linux ≥ 4.5) |
//! | [`Balance::Kernel`] | the kernel's 4-tuple hash | nothing |
//!
//! Fallback: `Ebpf` that cannot be loaded, registered or attached for any reason becomes
//! `Cbpf`; `Cbpf` that cannot be attached becomes `Kernel`. The reason is kept as text for the
//! log and `/metrics`. Every failure is treated alike on purpose: without privilege aya reports
//! misleading errors (e.g. a relocation error for the `.rodata` global because its feature
//! probe failed with `EPERM`), so the reason also says whether the process has `CAP_BPF`.
//!
//! Why `SK_REUSEPORT` + a socket array rather than a socket filter returning an index (what
//! syslog-ng does): the array holds exactly the sockets this group registered, each at its
//! index, and the modulus is the number registered, so the program can neither pick a socket
//! of another process that happens to share the group nor disagree with the group about its
//! size. A socket that closes leaves the array by itself; selecting it then fails and the
//! kernel falls back to its hash for that datagram, so nothing is lost.
//!
//! Neither program detaches when the group is dropped: the kernel keeps it with the reuseport
//! group until the last socket closes. The aya object (program and map file descriptors) is
//! kept alive by the group and by every receiver of it all the same.

use std::{fmt, str::FromStr};

use aya::{
    Ebpf, EbpfLoader,
    maps::ReusePortSockArray,
    programs::{ProgramError, SkReuseport},
};
use socket2::Socket;

use crate::{NetError, sys};

/// The eBPF object built from `ebpf/reuseport_select.c` by `ebpf/build.sh`.
static REUSEPORT_SELECT_OBJ: &[u8] =
    aya::include_bytes_aligned!("../../../ebpf/reuseport_select.o");
const PROGRAM: &str = "sluice_select";
const SOCKET_MAP: &str = "sluice_socks";
const NUM_SOCKS: &str = "sluice_num_socks";

/// The balancing mode requested for, or active on, a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Balance {
    /// Random socket per datagram by an eBPF `SK_REUSEPORT` program (needs `CAP_BPF`).
    Ebpf,
    /// Random socket per datagram by a classic BPF program (no privilege needed).
    Cbpf,
    /// The kernel's 4-tuple hash: one sender's datagrams all go to one socket.
    Kernel,
}

impl Balance {
    /// The lowercase name used in configuration and metrics: `ebpf`, `cbpf`, `kernel`.
    pub fn as_str(self) -> &'static str {
        match self {
            Balance::Ebpf => "ebpf",
            Balance::Cbpf => "cbpf",
            Balance::Kernel => "kernel",
        }
    }
}

impl fmt::Display for Balance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Balance {
    type Err = NetError;

    /// Accepts `ebpf`, `cbpf`, `kernel` (any case).
    fn from_str(s: &str) -> Result<Balance, NetError> {
        match s.to_ascii_lowercase().as_str() {
            "ebpf" => Ok(Balance::Ebpf),
            "cbpf" => Ok(Balance::Cbpf),
            "kernel" => Ok(Balance::Kernel),
            _ => Err(NetError::InvalidConfig {
                setting: "balance",
                value: s.to_owned(),
                reason: "expected one of ebpf, cbpf, kernel".to_owned(),
            }),
        }
    }
}

/// The outcome of setting up balancing on a bound group.
pub(crate) struct Applied {
    pub(crate) mode: Balance,
    pub(crate) fallback_reason: Option<String>,
    pub(crate) ebpf: Option<Ebpf>,
}

/// Set up `requested` balancing on `socks` (all bound, all in one reuseport group).
pub(crate) fn apply(requested: Balance, socks: &[Socket]) -> Applied {
    match requested {
        Balance::Kernel => Applied {
            mode: Balance::Kernel,
            fallback_reason: None,
            ebpf: None,
        },
        Balance::Cbpf => match attach_cbpf(socks) {
            Ok(()) => Applied {
                mode: Balance::Cbpf,
                fallback_reason: None,
                ebpf: None,
            },
            Err(reason) => Applied {
                mode: Balance::Kernel,
                fallback_reason: Some(format!("{reason}; using the kernel's 4-tuple hash")),
                ebpf: None,
            },
        },
        Balance::Ebpf => match attach_ebpf(socks) {
            Ok(ebpf) => Applied {
                mode: Balance::Ebpf,
                fallback_reason: None,
                ebpf: Some(ebpf),
            },
            Err(ebpf_reason) => match attach_cbpf(socks) {
                Ok(()) => Applied {
                    mode: Balance::Cbpf,
                    fallback_reason: Some(format!("{ebpf_reason}; falling back to cBPF")),
                    ebpf: None,
                },
                Err(cbpf_reason) => Applied {
                    mode: Balance::Kernel,
                    fallback_reason: Some(format!(
                        "{ebpf_reason}; {cbpf_reason}; using the kernel's 4-tuple hash"
                    )),
                    ebpf: None,
                },
            },
        },
    }
}

/// Balancing attached to the first socket of a group *before* any socket is bound, so the
/// group selects by program from its first datagram (see the crate docs). Finish it with
/// [`Pending::finish`] once every socket is bound.
pub(crate) struct Pending {
    applied: Applied,
    /// eBPF: the sockets go into the program's map once bound (the kernel accepts only bound
    /// sockets there). Until then the program finds empty slots and the kernel falls back to
    /// its hash over the sockets bound so far, for the few microseconds the binds take.
    register: bool,
    /// Nothing could be attached to an unbound socket (kernels before 4.19 require a bound
    /// one): set balancing up after the binds instead, as [`apply`] does.
    retry_after_bind: bool,
}

/// Attach `requested` balancing for a group of `n` sockets to `first`, which has
/// `SO_REUSEPORT` set and is not bound yet. Attaching to an unbound socket makes the kernel
/// create the socket's reuseport group with the program in it; binding `first` keeps that
/// group (nobody else is on the port: the caller claimed it) and the other sockets join it.
pub(crate) fn attach_before_bind(requested: Balance, first: &Socket, n: usize) -> Pending {
    let pending = |mode, fallback_reason, ebpf: Option<Ebpf>| Pending {
        register: ebpf.is_some(),
        applied: Applied {
            mode,
            fallback_reason,
            ebpf,
        },
        retry_after_bind: false,
    };
    let retry = Pending {
        applied: Applied {
            mode: Balance::Kernel,
            fallback_reason: None,
            ebpf: None,
        },
        register: false,
        retry_after_bind: true,
    };
    let Ok(n) = u32::try_from(n) else {
        return retry;
    };
    match requested {
        Balance::Kernel => pending(Balance::Kernel, None, None),
        Balance::Cbpf => match sys::attach_reuseport_cbpf(first, n) {
            Ok(()) => pending(Balance::Cbpf, None, None),
            Err(_) => retry,
        },
        Balance::Ebpf => match load_ebpf(n).and_then(|mut bpf| {
            attach_ebpf_program(&mut bpf, first)?;
            Ok(bpf)
        }) {
            Ok(bpf) => pending(Balance::Ebpf, None, Some(bpf)),
            Err(ebpf_reason) => match sys::attach_reuseport_cbpf(first, n) {
                Ok(()) => pending(
                    Balance::Cbpf,
                    Some(format!("{ebpf_reason}; falling back to cBPF")),
                    None,
                ),
                Err(_) => retry,
            },
        },
    }
}

impl Pending {
    /// Complete the setup on the bound group `socks` (index order, `socks[0]` = `first`).
    pub(crate) fn finish(mut self, requested: Balance, socks: &[Socket]) -> Applied {
        if self.retry_after_bind {
            return apply(requested, socks);
        }
        if self.register
            && let Some(bpf) = self.applied.ebpf.as_mut()
            && let Err(reason) = register_sockets(bpf, socks)
        {
            // The program is attached but its map is incomplete: replace it with cBPF
            // (attaching replaces the group's program).
            return match attach_cbpf(socks) {
                Ok(()) => Applied {
                    mode: Balance::Cbpf,
                    fallback_reason: Some(format!("{reason}; falling back to cBPF")),
                    ebpf: None,
                },
                Err(cbpf_reason) => Applied {
                    mode: Balance::Kernel,
                    fallback_reason: Some(format!(
                        "{reason}; {cbpf_reason}; using the kernel's 4-tuple hash"
                    )),
                    ebpf: None,
                },
            };
        }
        self.applied
    }
}

fn group_size(socks: &[Socket]) -> Result<u32, String> {
    u32::try_from(socks.len()).map_err(|_| format!("group of {} sockets is too large", socks.len()))
}

fn attach_cbpf(socks: &[Socket]) -> Result<(), String> {
    let n = group_size(socks)?;
    let first = socks.first().ok_or("empty group")?;
    sys::attach_reuseport_cbpf(first, n)
        .map_err(|e| format!("cBPF attach (SO_ATTACH_REUSEPORT_CBPF) failed: {e}"))
}

/// Load and attach after the sockets are bound: register them, then attach.
fn attach_ebpf(socks: &[Socket]) -> Result<Ebpf, String> {
    let n = group_size(socks)?;
    let first = socks.first().ok_or("empty group")?;
    let mut bpf = load_ebpf(n)?;
    register_sockets(&mut bpf, socks)?;
    attach_ebpf_program(&mut bpf, first)?;
    Ok(bpf)
}

/// Load the object for a group of `n` sockets (map size and socket count set at load time)
/// and load its program into the kernel; nothing is attached yet.
fn load_ebpf(n: u32) -> Result<Ebpf, String> {
    let mut bpf = EbpfLoader::new()
        .map_max_entries(SOCKET_MAP, n)
        .override_global(NUM_SOCKS, &n, true)
        .load(REUSEPORT_SELECT_OBJ)
        .map_err(|e| refused("eBPF load refused", &e))?;
    program(&mut bpf)?
        .load()
        .map_err(|e| refused("eBPF load refused (program)", &e))?;
    Ok(bpf)
}

fn program(bpf: &mut Ebpf) -> Result<&mut SkReuseport, String> {
    bpf.program_mut(PROGRAM)
        .ok_or_else(|| format!("eBPF object has no program {PROGRAM}"))?
        .try_into()
        .map_err(|e: ProgramError| refused("eBPF object invalid", &e))
}

/// Put every (bound) socket into the program's map at its index.
fn register_sockets(bpf: &mut Ebpf, socks: &[Socket]) -> Result<(), String> {
    let map = bpf
        .map_mut(SOCKET_MAP)
        .ok_or_else(|| format!("eBPF object has no map {SOCKET_MAP}"))?;
    let mut array: ReusePortSockArray<_> = map
        .try_into()
        .map_err(|e| refused("eBPF object invalid", &e))?;
    for (i, sock) in socks.iter().enumerate() {
        // The map was sized to the group, whose size fits u32.
        array
            .set(i as u32, sock, 0)
            .map_err(|e| refused(&format!("eBPF socket {i} registration failed"), &e))?;
    }
    Ok(())
}

/// `SO_ATTACH_REUSEPORT_EBPF` on `sock`: the program becomes its group's selector.
fn attach_ebpf_program(bpf: &mut Ebpf, sock: &Socket) -> Result<(), String> {
    program(bpf)?
        .attach(sock)
        .map_err(|e| refused("eBPF attach (SO_ATTACH_REUSEPORT_EBPF) failed", &e))?;
    Ok(())
}

/// `what: error: source: source…`, plus a note when the process lacks CAP_BPF, because aya's
/// errors without privilege do not always say `EPERM`.
fn refused(what: &str, err: &dyn std::error::Error) -> String {
    let mut msg = format!("{what}: {err}");
    let mut source = err.source();
    while let Some(e) = source {
        // aya often repeats its source's text in its own message; say each thing once.
        let text = e.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = e.source();
    }
    match sys::effective_caps() {
        Some(caps) if !caps.bpf && !caps.sys_admin => msg.push_str(
            " (this process has neither CAP_BPF nor CAP_SYS_ADMIN; grant CAP_BPF, e.g. \
             AmbientCapabilities=CAP_BPF, to use eBPF balancing)",
        ),
        _ => {}
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balance_names_round_trip() {
        for b in [Balance::Ebpf, Balance::Cbpf, Balance::Kernel] {
            assert_eq!(b.as_str().parse::<Balance>().unwrap(), b);
            assert_eq!(b.to_string(), b.as_str());
        }
        assert_eq!("EBPF".parse::<Balance>().unwrap(), Balance::Ebpf);
        let err = "random".parse::<Balance>().unwrap_err().to_string();
        assert!(err.contains("balance = random"), "{err}");
    }

    #[test]
    fn embedded_object_is_an_aligned_bpf_elf() {
        // aya parses the ELF in place and needs it 8-byte aligned.
        assert_eq!(REUSEPORT_SELECT_OBJ.as_ptr() as usize % 8, 0);
        assert_eq!(&REUSEPORT_SELECT_OBJ[..4], b"\x7fELF");
        // EM_BPF = 247 at e_machine (offset 18, little endian).
        assert_eq!(
            u16::from_le_bytes([REUSEPORT_SELECT_OBJ[18], REUSEPORT_SELECT_OBJ[19]]),
            247
        );
        // The names used by the loader exist in the object's symbol/section string tables
        // (loading itself is covered by the integration tests).
        for name in [PROGRAM, SOCKET_MAP, NUM_SOCKS, "sk_reuseport"] {
            assert!(
                REUSEPORT_SELECT_OBJ
                    .windows(name.len())
                    .any(|w| w == name.as_bytes()),
                "object lacks {name}"
            );
        }
    }
}
