//! One check per context that tells whether a message can satisfy any of the context's
//! applications: the union of their atoms ([`super::prefilter`]), indexed at load. A message
//! that cannot (most, on a busy receiver) skips the context without a walk over its
//! applications, a state, or a rendered template; one that can walks them as before, each
//! checked against its own atoms.

use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use memchr::memmem::Finder;

use super::prefilter::Atom;

/// Bit `b` of a 256-bit set.
fn has_bit(set: &[u64; 4], b: u8) -> bool {
    set[usize::from(b >> 6)] & (1 << (b & 63)) != 0
}

fn set_bit(set: &mut [u64; 4], b: u8) {
    set[usize::from(b >> 6)] |= 1 << (b & 63);
}

/// Which kinds of atoms a gate has (bits of [`Gate::kinds`]): one load tells which checks
/// to make.
mod kind {
    pub const PROGRAM: u8 = 1;
    pub const BODY: u8 = 2;
    pub const HOST: u8 = 4;
    pub const NETSOURCE: u8 = 8;
    pub const NET: u8 = 16;
    pub const TOKEN: u8 = 32;
    /// An application without atoms: every message may match.
    pub const ALWAYS: u8 = 64;
}

/// The union of the atoms of one context's applications.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    /// Unique among every gate loaded by this process (reloads included): the key of its
    /// verdicts in a [`Memo`]. 0 for a gate whose verdict is not remembered.
    memo_id: u64,
    kinds: u8,
    programs: Vec<Box<[u8]>>,
    program_prefixes: Vec<Box<[u8]>>,
    /// First bytes of `programs` and `program_prefixes` (an empty prefix makes the gate always admit).
    program_first: [u64; 4],
    body_prefixes: Vec<Box<[u8]>>,
    body_first: [u64; 4],
    /// (prefix?, lower-case text).
    hosts: Vec<(bool, Box<[u8]>)>,
    /// Lower-case first bytes of `hosts`.
    host_first: [u64; 4],
    netsources: Vec<Box<str>>,
    /// IPv4 netmasks as (net, mask) of the address (most are), compared without the
    /// mapping to IPv6.
    nets_v4: Vec<(u32, u32)>,
    /// First octets `nets_v4` can hold (all 256 when a mask is shorter than /8).
    v4_first: [u64; 4],
    /// The others, as mapped IPv6.
    nets: Vec<(u128, u128)>,
    tokens: Vec<Finder<'static>>,
}

/// The fields of a message the atoms read, as one context sees them.
pub(crate) struct View<'a> {
    pub program: Option<&'a [u8]>,
    /// MESSAGE; `None`: cannot be told cheaply (every body prefix holds).
    pub body: Option<&'a [u8]>,
    /// HOST; `None`: none.
    pub host: Option<&'a [u8]>,
    /// Whether a HOST atom holds when there is no HOST.
    pub no_host_holds: bool,
    /// `None`: a netsource atom holds (the view has none to compare).
    pub vendor_product: Option<&'a str>,
    pub raw: &'a [u8],
    /// Whether a token atom holds without a search (the fields were edited).
    pub tokens_hold: bool,
    pub ip: std::net::IpAddr,
}

impl Gate {
    /// The gate of a context's applications, from each one's prefilter atoms (`None`: the
    /// application needs every message).
    pub fn new<'a>(apps: impl Iterator<Item = Option<&'a [Atom]>>) -> Gate {
        let mut g = Gate::default();
        for atoms in apps {
            let Some(atoms) = atoms else {
                g.kinds |= kind::ALWAYS;
                continue;
            };
            for atom in atoms {
                match atom {
                    Atom::Program(p) | Atom::ProgramPrefix(p) => {
                        match p.first() {
                            Some(&b) => set_bit(&mut g.program_first, b),
                            None => g.kinds |= kind::ALWAYS,
                        }
                        if matches!(atom, Atom::Program(_)) {
                            g.programs.push(p.clone());
                        } else {
                            g.program_prefixes.push(p.clone());
                        }
                    }
                    Atom::BodyPrefix(p) => {
                        match p.first() {
                            Some(&b) => set_bit(&mut g.body_first, b),
                            None => g.kinds |= kind::ALWAYS,
                        }
                        g.body_prefixes.push(p.clone());
                    }
                    Atom::Token(t) => {
                        g.tokens.push(Finder::new(&t[..]).into_owned());
                    }
                    Atom::HostExact(h) | Atom::HostPrefix(h) => {
                        match h.first() {
                            Some(&b) => {
                                set_bit(&mut g.host_first, b.to_ascii_lowercase());
                                set_bit(&mut g.host_first, b.to_ascii_uppercase());
                            }
                            None => g.kinds |= kind::ALWAYS,
                        }
                        g.hosts.push((
                            matches!(atom, Atom::HostPrefix(_)),
                            h.to_ascii_lowercase().into(),
                        ));
                    }
                    Atom::NetSource(v) => g.netsources.push(v.clone()),
                    Atom::Net { net, mask } => {
                        // A mask that covers the mapped prefix is an IPv4 one.
                        const MAPPED: u128 = 0xffff_ffff_ffff_ffff_ffff_ffff_0000_0000;
                        if mask & MAPPED == MAPPED && net >> 32 == 0xffff {
                            let (net, mask) = (*net as u32, *mask as u32);
                            g.nets_v4.push((net, mask));
                            if mask >> 24 == 0xff {
                                set_bit(&mut g.v4_first, (net >> 24) as u8);
                            } else {
                                g.v4_first = [u64::MAX; 4];
                            }
                        } else {
                            g.nets.push((*net, *mask));
                        }
                    }
                }
            }
        }
        for (has, k) in [
            (
                !g.programs.is_empty() || !g.program_prefixes.is_empty(),
                kind::PROGRAM,
            ),
            (!g.body_prefixes.is_empty(), kind::BODY),
            (!g.hosts.is_empty(), kind::HOST),
            (!g.netsources.is_empty(), kind::NETSOURCE),
            (!g.nets_v4.is_empty() || !g.nets.is_empty(), kind::NET),
            (!g.tokens.is_empty(), kind::TOKEN),
        ] {
            if has {
                g.kinds |= k;
            }
        }
        // A gate that reads only HOST and the sender's address (most `sc4s-vps` gates:
        // `host()` and `netmask()` filters) gives one verdict per sender.
        if g.kinds != 0 && g.kinds & !(kind::HOST | kind::NET) == 0 {
            static NEXT: AtomicU64 = AtomicU64::new(1);
            g.memo_id = NEXT.fetch_add(1, Ordering::Relaxed);
        }
        g
    }

    /// Whether [`Gate::admits`] reads [`View::program`] (the others may be left `None`).
    #[inline]
    pub fn reads_program(&self) -> bool {
        self.kinds & kind::ALWAYS == 0 && self.kinds & kind::PROGRAM != 0
    }

    /// Whether [`Gate::admits`] reads [`View::body`].
    #[inline]
    pub fn reads_body(&self) -> bool {
        self.kinds & kind::ALWAYS == 0 && self.kinds & kind::BODY != 0
    }

    /// Whether [`Gate::admits`] reads [`View::host`].
    #[inline]
    pub fn reads_host(&self) -> bool {
        self.kinds & kind::ALWAYS == 0 && self.kinds & kind::HOST != 0
    }

    /// [`Gate::admits`], remembered in `memo` for a gate that reads only HOST and the
    /// address. `v.no_host_holds` must be the same at every call for one gate (it is a
    /// property of the caller, not of the message).
    #[inline]
    pub fn admits_memo(&self, v: &View<'_>, memo: &Memo) -> bool {
        if self.memo_id == 0 {
            return self.admits(v);
        }
        memo.admits(self, v)
    }

    /// Whether some application of the context may match a message with these fields.
    #[inline(always)]
    pub fn admits(&self, v: &View<'_>) -> bool {
        // PROGRAM alone (`program()` filters) is the common gate of the contexts after
        // classification: its first-byte check decides most messages without a call.
        if self.kinds == kind::PROGRAM {
            return v.program.is_some_and(|p| {
                p.first().is_some_and(|&b| has_bit(&self.program_first, b)) && self.program_hit(p)
            });
        }
        self.admits_any(v)
    }

    #[inline(never)]
    fn program_hit(&self, p: &[u8]) -> bool {
        self.programs.iter().any(|x| **x == *p)
            || self.program_prefixes.iter().any(|x| p.starts_with(x))
    }

    #[inline(never)]
    fn admits_any(&self, v: &View<'_>) -> bool {
        let k = self.kinds;
        if k & kind::ALWAYS != 0 {
            return true;
        }
        if k & kind::PROGRAM != 0
            && let Some(p) = v.program
            && p.first().is_some_and(|&b| has_bit(&self.program_first, b))
            && self.program_hit(p)
        {
            return true;
        }
        if k & kind::BODY != 0 && v.body.is_none_or(|b| self.body_hit(b)) {
            return true;
        }
        if k & kind::HOST != 0
            && match v.host {
                None => v.no_host_holds,
                Some(h) => self.host_hit(h),
            }
        {
            return true;
        }
        if k & kind::NETSOURCE != 0
            && v.vendor_product
                .is_none_or(|vp| self.netsources.iter().any(|x| **x == *vp))
        {
            return true;
        }
        if k & kind::NET != 0 && self.net_hit(v.ip) {
            return true;
        }
        if k & kind::TOKEN != 0 {
            return v.tokens_hold || self.tokens.iter().any(|f| f.find(v.raw).is_some());
        }
        false
    }

    fn net_hit(&self, ip: std::net::IpAddr) -> bool {
        match ip.to_canonical() {
            std::net::IpAddr::V4(v4) => {
                let ip = u32::from(v4);
                (has_bit(&self.v4_first, (ip >> 24) as u8)
                    && self.nets_v4.iter().any(|(net, mask)| ip & mask == *net))
                    || !self.nets.is_empty() && {
                        let ip = u128::from(v4.to_ipv6_mapped());
                        self.nets.iter().any(|(net, mask)| ip & mask == *net)
                    }
            }
            std::net::IpAddr::V6(v6) => {
                let ip = u128::from(v6);
                self.nets.iter().any(|(net, mask)| ip & mask == *net)
            }
        }
    }

    fn body_hit(&self, b: &[u8]) -> bool {
        b.first().is_some_and(|&f| has_bit(&self.body_first, f))
            && self.body_prefixes.iter().any(|x| b.starts_with(x))
    }

    fn host_hit(&self, h: &[u8]) -> bool {
        let Some(&first) = h.first() else {
            return false;
        };
        let first = first.to_ascii_lowercase();
        has_bit(&self.host_first, first)
            && self.hosts.iter().any(|(prefix, x)| {
                // The first byte first: most entries differ there.
                match x.first() {
                    Some(&x0) if x0 != first => return false,
                    None => return *prefix,
                    _ => {}
                }
                // `x` is lower case. A loop that stops at the first difference: the
                // library's comparison lowers whole chunks of both first.
                (if *prefix {
                    h.len() >= x.len()
                } else {
                    h.len() == x.len()
                }) && h
                    .iter()
                    .zip(x.iter())
                    .all(|(a, b)| a.to_ascii_lowercase() == *b)
            })
    }
}

/// Longest HOST a [`Memo`] keeps (longer ones are checked each time).
const MEMO_HOST: usize = 46;
/// log2 of the number of slots.
const MEMO_BITS: u32 = 5;
const MEMO_SLOTS: usize = 1 << MEMO_BITS;

#[derive(Clone, Copy)]
struct MemoSlot {
    gate: u64,
    ip: IpAddr,
    /// `u8::MAX`: no HOST.
    host_len: u8,
    host: [u8; MEMO_HOST],
    admits: bool,
}

impl MemoSlot {
    const EMPTY: MemoSlot = MemoSlot {
        gate: 0,
        ip: IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
        host_len: 0,
        host: [0; MEMO_HOST],
        admits: false,
    };
}

/// The last verdicts of the gates that read only HOST and the sender's address, per
/// worker (kept in [`super::Scratch`]), indexed by the address: a sender sends run after
/// run of messages with one HOST, and the gate's walk over hosts and netmasks cost more
/// than this lookup (callgrind, 20 never-matching applications: the `sc4s-vps` gate was
/// 165 of their 700 instructions per message).
pub(crate) struct Memo {
    slots: RefCell<[MemoSlot; MEMO_SLOTS]>,
}

impl Default for Memo {
    fn default() -> Memo {
        Memo {
            slots: RefCell::new([MemoSlot::EMPTY; MEMO_SLOTS]),
        }
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memo").finish_non_exhaustive()
    }
}

impl Memo {
    #[inline]
    fn admits(&self, gate: &Gate, v: &View<'_>) -> bool {
        let (host_len, host) = match v.host {
            None => (u8::MAX, &[][..]),
            Some(h) if h.len() <= MEMO_HOST => (h.len() as u8, h),
            Some(_) => return gate.admits(v),
        };
        let fold = match v.ip {
            IpAddr::V4(a) => u64::from(a.to_bits()),
            IpAddr::V6(a) => {
                let b = a.to_bits();
                (b as u64) ^ ((b >> 64) as u64)
            }
        };
        // Fibonacci hashing: the top bits of the product.
        let i = ((fold ^ u64::from(host_len) ^ gate.memo_id).wrapping_mul(0x9e37_79b9_7f4a_7c15)
            >> (64 - MEMO_BITS)) as usize;
        let Ok(mut slots) = self.slots.try_borrow_mut() else {
            return gate.admits(v);
        };
        let s = &mut slots[i];
        if s.gate == gate.memo_id
            && s.ip == v.ip
            && s.host_len == host_len
            && s.host[..host.len()] == *host
        {
            return s.admits;
        }
        let admits = gate.admits(v);
        s.gate = gate.memo_id;
        s.ip = v.ip;
        s.host_len = host_len;
        s.host[..host.len()].copy_from_slice(host);
        s.admits = admits;
        admits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::local::ir::Context;
    use crate::classify::local::tests::load;

    const APPS: &str = r#"
application a-host[sc4s-vps] { filter { host("fw-dmz-*" type(glob)); }; };
application a-net[sc4s-vps] { filter { netmask(10.77.0.0/16); }; };
application a-pgm[sc4s-postfilter] { filter { program("acme" type(string)); }; };
application a-tok[sc4s-postfilter] { filter { message("devid=" type(string) flags(substring)); }; };
application a-any[sc4s-finalfilter] { filter { level(err); }; };
"#;

    fn view<'a>(program: &'a [u8], host: Option<&'a [u8]>, raw: &'a [u8], ip: [u8; 4]) -> View<'a> {
        View {
            program: Some(program),
            body: Some(raw),
            host,
            no_host_holds: false,
            vendor_product: Some(""),
            raw,
            tokens_hold: false,
            ip: std::net::IpAddr::from(ip),
        }
    }

    #[test]
    fn a_context_admits_what_one_of_its_applications_may_take() {
        let p = load(&[("a.conf", APPS)]).expect("loads");
        let (apps, vps) = p.context(&Context::Vps).expect("vps apps");
        assert_eq!(apps.len(), 2);
        let (_, post) = p.context(&Context::PostFilter).expect("postfilter apps");
        let (_, last) = p.context(&Context::FinalFilter).expect("finalfilter apps");
        assert!(p.context(&Context::Fallback).is_none());

        let none = view(b"prg0", Some(b"localhost"), b"hello", [192, 0, 2, 1]);
        assert!(!vps.admits(&none));
        assert!(!post.admits(&none));
        // An application without atoms admits everything.
        assert!(last.admits(&none));

        assert!(vps.admits(&view(b"x", Some(b"FW-DMZ-01"), b"", [192, 0, 2, 1])));
        assert!(vps.admits(&view(b"x", Some(b"h"), b"", [10, 77, 3, 4])));
        assert!(!vps.admits(&view(b"x", None, b"", [10, 78, 3, 4])));
        let mut no_host = view(b"x", None, b"", [10, 78, 3, 4]);
        no_host.no_host_holds = true;
        assert!(vps.admits(&no_host));

        assert!(post.admits(&view(b"acme", None, b"", [192, 0, 2, 1])));
        assert!(!post.admits(&view(b"acmex", None, b"", [192, 0, 2, 1])));
        assert!(post.admits(&view(b"x", None, b"a devid=3 b", [192, 0, 2, 1])));
        let mut edited = view(b"x", None, b"", [192, 0, 2, 1]);
        edited.tokens_hold = true;
        assert!(post.admits(&edited));
    }

    #[test]
    fn a_remembered_verdict_is_the_gates_own_and_never_another_programs() {
        let p = load(&[("a.conf", APPS)]).expect("loads");
        let (_, vps) = p.context(&Context::Vps).expect("vps apps");
        let (_, post) = p.context(&Context::PostFilter).expect("postfilter apps");
        assert_ne!(vps.memo_id, 0, "host and netmask only: remembered");
        assert_eq!(
            post.memo_id, 0,
            "reads PROGRAM and MESSAGE: checked each time"
        );
        let memo = Memo::default();
        let long = [b'f'; MEMO_HOST + 1];
        let cases: [(Option<&[u8]>, [u8; 4]); 7] = [
            (Some(b"fw-dmz-01"), [192, 0, 2, 1]),
            (Some(b"fw-dmz"), [192, 0, 2, 1]),
            (Some(b"localhost"), [10, 77, 1, 1]),
            (Some(b"localhost"), [10, 78, 1, 1]),
            (None, [10, 78, 1, 1]),
            (None, [10, 77, 1, 1]),
            (Some(&long), [10, 78, 1, 1]),
        ];
        // Twice, and in both orders: the second pass reads the verdicts the first kept.
        for round in 0..4 {
            let mut order: Vec<_> = cases.iter().collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for &&(host, ip) in &order {
                let v = view(b"x", host, b"", ip);
                assert_eq!(
                    vps.admits_memo(&v, &memo),
                    vps.admits(&v),
                    "{host:?} {ip:?}"
                );
            }
        }
        let v6 = View {
            ip: "2001:db8::1".parse().expect("v6"),
            ..view(b"x", Some(b"localhost"), b"", [0; 4])
        };
        assert!(!vps.admits_memo(&v6, &memo));

        // A reloaded program with the opposite verdict for the same sender reads none of
        // the first program's.
        let hit = view(b"x", Some(b"printer-7"), b"", [192, 0, 2, 9]);
        assert!(!vps.admits_memo(&hit, &memo));
        let q = load(&[(
            "b.conf",
            r#"application b-host[sc4s-vps] { filter { host("printer-*" type(glob)); }; };"#,
        )])
        .expect("loads");
        let (_, vps2) = q.context(&Context::Vps).expect("vps apps");
        assert_ne!(vps2.memo_id, vps.memo_id);
        assert!(vps2.admits_memo(&hit, &memo));
        assert!(!vps.admits_memo(&hit, &memo));
    }
}
