//! SC4S's header repairs for RFC 3164 messages (`sources/source_syslog/plugin.jinja` and the
//! `fix-invalid-program` topic, `conflib/app-fix-invalid-program/*`).
//!
//! * A HOST with a byte outside `[a-zA-Z0-9_\-.]` (and not of the form `slot<digits>/...`)
//!   is not a hostname: SC4S sets `MSG = "${HOST} ${MSGHDR}${MESSAGE}"`, unsets PROGRAM, PID
//!   and LEGACY_MSGHDR and uses the sender's IP as HOST ([`Rewrite::InvalidHost`]).
//! * Otherwise a PROGRAM that the topic rejects — starts with `--` (`...-dashdash.conf`),
//!   starts with 9+ digits (`...-epoch.conf`), contains a dotted IPv4 address
//!   (`...-ipv4.conf`, same regex semantics), or has a byte outside `[a-zA-Z0-9-_/().]`
//!   (`...-z_bsdconvention.conf`) — is folded back into the message:
//!   `MSG = "${MSGHDR}${MESSAGE}"`, PROGRAM/PID/LEGACY_MSGHDR unset
//!   ([`Rewrite::InvalidProgram`]). The fifth rule (`MSGHDR` differs from `LEGACY_MSGHDR`)
//!   cannot fire here: the encoder's MSGHDR *is* the original header text.
//!
//! The message itself is not modified (it borrows the receive buffer); the encoder renders
//! the rewritten fields, and vendor parsers see them through [`super::Input`].

/// Which SC4S `fix-invalid-program` application rejected a PROGRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramRule {
    /// Starts with `--`.
    DashDash,
    /// Starts with nine or more digits (an epoch stamp).
    Epoch,
    /// Contains a dotted IPv4 address.
    Ipv4,
    /// Has a byte outside `[a-zA-Z0-9-_/().]`.
    BsdConvention,
}

impl ProgramRule {
    /// The SC4S application name (its `.app.` tag).
    pub fn app_name(self) -> &'static str {
        match self {
            ProgramRule::DashDash => "app-fix-invalid-program-dashdash",
            ProgramRule::Epoch => "app-fix-invalid-program-epoch",
            ProgramRule::Ipv4 => "app-fix-invalid-program-ipv4",
            ProgramRule::BsdConvention => "app-fix-invalid-program-z_bsdconvention",
        }
    }
}

/// An SC4S header repair (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rewrite {
    None,
    /// HOST is not a hostname: HOST := source IP; MESSAGE := `HOST SP MSGHDR MESSAGE`;
    /// PROGRAM, PID, LEGACY_MSGHDR unset.
    InvalidHost,
    /// PROGRAM is not a program name: MESSAGE := `MSGHDR MESSAGE`; PROGRAM, PID,
    /// LEGACY_MSGHDR unset.
    InvalidProgram(ProgramRule),
}

/// The repair SC4S applies to an RFC 3164 message.
pub(crate) fn header_rewrite(hostname: Option<&[u8]>, program: Option<&[u8]>) -> Rewrite {
    if let Some(host) = hostname
        && !host.is_empty()
        && !all_in(host, HOST)
        && !is_slot_prefix(host)
    {
        return Rewrite::InvalidHost;
    }
    match program.filter(|p| !p.is_empty()).and_then(invalid_program) {
        Some(rule) => Rewrite::InvalidProgram(rule),
        None => Rewrite::None,
    }
}

/// [`CLASSES`] bit: `[a-zA-Z0-9_\-.]`, a hostname byte.
const HOST: u8 = 1;
/// [`CLASSES`] bit: `[a-zA-Z0-9-_/().]`, a BSD-convention program byte.
const PROGRAM: u8 = 2;

/// Byte classes, one table look-up per byte instead of a chain of comparisons (every RFC 3164
/// message's HOST and PROGRAM go through these).
static CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.' {
            t[b] |= HOST | PROGRAM;
        }
        if c == b'/' || c == b'(' || c == b')' {
            t[b] |= PROGRAM;
        }
        b += 1;
    }
    t
};

fn all_in(s: &[u8], class: u8) -> bool {
    s.iter().all(|&b| CLASSES[usize::from(b)] & class != 0)
}

/// `^slot\d+\/`
fn is_slot_prefix(host: &[u8]) -> bool {
    let Some(rest) = host.strip_prefix(b"slot") else {
        return false;
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && rest.get(digits) == Some(&b'/')
}

/// The host of a `slot<digits>/...` HOST: the text after the last `/` (SC4S's
/// `^(?<slot>.*)\/(?<host>.*)` on a HOST matching `^slot\d+\/`).
pub(crate) fn slot_host(host: &[u8]) -> Option<&[u8]> {
    if !is_slot_prefix(host) {
        return None;
    }
    memchr::memrchr(b'/', host).map(|i| &host[i + 1..])
}

/// The first SC4S `fix-invalid-program` application (in SC4S's file order) that rejects
/// `program`.
fn invalid_program(program: &[u8]) -> Option<ProgramRule> {
    if program.starts_with(b"--") {
        return Some(ProgramRule::DashDash);
    }
    if program.iter().take_while(|b| b.is_ascii_digit()).count() >= 9 {
        return Some(ProgramRule::Epoch);
    }
    // Four dotted octets need three dots.
    if program.iter().filter(|&&b| b == b'.').count() >= 3 && contains_ipv4(program) {
        return Some(ProgramRule::Ipv4);
    }
    if !all_in(program, PROGRAM) {
        return Some(ProgramRule::BsdConvention);
    }
    None
}

/// SC4S's unanchored
/// `(\b25[0-5]|\b2[0-4][0-9]|\b[01]?[0-9][0-9]?)(\.(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)){3}`:
/// four dotted octets (1-2 digits, or 3 digits up to 255), the first at a word boundary.
fn contains_ipv4(s: &[u8]) -> bool {
    fn is_word(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }
    fn octets(s: &[u8], at: usize, left: usize) -> bool {
        (1..=3).any(|len| {
            let Some(digits) = s.get(at..at + len) else {
                return false;
            };
            if !digits.iter().all(u8::is_ascii_digit) {
                return false;
            }
            let value = digits
                .iter()
                .fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
            if len == 3 && value > 255 {
                return false;
            }
            left == 1 || (s.get(at + len) == Some(&b'.') && octets(s, at + len + 1, left - 1))
        })
    }
    (0..s.len()).any(|i| s[i].is_ascii_digit() && (i == 0 || !is_word(s[i - 1])) && octets(s, i, 4))
}

/// SC4S `subst('^\/(?:[^\/]+\/)+', "")`: removes a leading `/dir/.../` made of non-empty
/// segments.
pub fn strip_directory(program: &[u8]) -> &[u8] {
    if program.first() != Some(&b'/') {
        return program;
    }
    let mut at = 1;
    let mut cut = None;
    while let Some(k) = memchr::memchr(b'/', &program[at..]) {
        if k == 0 {
            break;
        }
        at += k + 1;
        cut = Some(at);
    }
    cut.map_or(program, |c| &program[c..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_programs() {
        let cases: &[(&[u8], Option<ProgramRule>)] = &[
            (b"sshd", None),
            (b"/usr/sbin/cron", None),
            (b"kernel(x).y-z_1", None),
            (b"--MARK", Some(ProgramRule::DashDash)),
            (b"1710166925", Some(ProgramRule::Epoch)),
            (b"123456789x", Some(ProgramRule::Epoch)),
            (b"12345678", None),
            (b"host-10.1.2.3", Some(ProgramRule::Ipv4)),
            (b"10.1.2.300", Some(ProgramRule::Ipv4)), // "10.1.2.30" matches, as in the regex
            (b"a10.1.2.3", None),                     // no word boundary before the 1
            (b"256.1.2.3", None), // 256 is no octet and "56" has no word boundary
            (b"1.2.3", None),
            (b"%ASA-6-302013", Some(ProgramRule::BsdConvention)),
            (b"my prog", Some(ProgramRule::BsdConvention)),
        ];
        for (program, expected) in cases {
            assert_eq!(
                invalid_program(program),
                *expected,
                "{}",
                String::from_utf8_lossy(program)
            );
        }
    }

    /// The byte tables are SC4S's character classes.
    #[test]
    fn byte_classes() {
        for b in 0..=255u8 {
            let host = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.');
            let program =
                b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'/' | b'(' | b')' | b'.');
            assert_eq!(all_in(&[b], HOST), host, "{b}");
            assert_eq!(all_in(&[b], PROGRAM), program, "{b}");
        }
    }

    #[test]
    fn directory_stripping_matches_the_sc4s_regex() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"/usr/sbin/sshd", b"sshd"),
            (b"sshd", b"sshd"),
            (b"/sshd", b"/sshd"),
            (b"usr/bin/x", b"usr/bin/x"),
            (b"/usr/sbin/", b""),
            (b"//x", b"//x"),
            (b"/a//b", b"/b"),
            (b"", b""),
        ];
        for (input, expected) in cases {
            assert_eq!(strip_directory(input), *expected, "{input:?}");
        }
    }
}
