//! SC4S's OpenSSL-style TLS settings mapped onto rustls: `SC4S_SOURCE_TLS_OPTIONS`
//! (syslog-ng `ssl-options()`) and `SC4S_SOURCE_TLS_CIPHER_SUITE` (an OpenSSL cipher string).
//!
//! rustls implements TLS 1.2 and 1.3 only, with six TLS 1.2 suites (ECDHE with AES-GCM or
//! ChaCha20-Poly1305, RSA or ECDSA certificates) and the three TLS 1.3 suites; nothing weaker
//! exists in it, so no setting can take sluice below TLS 1.2. The cipher string is evaluated
//! the way OpenSSL does (`!` removes for good, `-` removes, `+` moves to the end, `A+B` is
//! both, `@STRENGTH` sorts by key length) over those six suites, so SC4S's default
//! `HIGH:!aNULL:...:@STRENGTH` selects all six, strongest first. Like OpenSSL's cipher list
//! it does not govern TLS 1.3 suites. Whatever rustls cannot express — an option it has no
//! equivalent for, a cipher it does not implement named positively — is reported once as a
//! note; the suites actually offered are listed at startup.

use rustls::SupportedProtocolVersion;
use rustls::crypto::ring::cipher_suite as cs;
use rustls::{SupportedCipherSuite, version};

/// What an options + cipher string pair comes to.
#[derive(Debug, Clone)]
pub struct Policy {
    pub versions: Vec<&'static SupportedProtocolVersion>,
    /// In preference order: TLS 1.3 suites first, then the TLS 1.2 ones the string selected.
    pub suites: Vec<SupportedCipherSuite>,
    /// `cipher-server-preference`: the server's order wins over the client's.
    pub server_order: bool,
    /// Settings rustls cannot express, to be logged once.
    pub notes: Vec<String>,
}

impl Policy {
    /// `TLSv1.2, TLSv1.3` for the log line.
    pub fn versions_label(&self) -> String {
        self.versions
            .iter()
            .map(|v| {
                if v.version == rustls::ProtocolVersion::TLSv1_3 {
                    "TLSv1.3"
                } else {
                    "TLSv1.2"
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The suites in order, by their IANA names.
    pub fn suites_label(&self) -> String {
        self.suites
            .iter()
            .map(|s| suite_name(s))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// IANA name of a suite (`TLS13_AES_256_GCM_SHA384`).
pub fn suite_name(s: &SupportedCipherSuite) -> &'static str {
    s.suite().as_str().unwrap_or("unknown")
}

struct Tls12 {
    suite: SupportedCipherSuite,
    openssl: &'static str,
    /// The OpenSSL aliases that select it.
    words: &'static [&'static str],
    bits: u32,
}

const COMMON: [&str; 12] = [
    "ALL", "DEFAULT", "HIGH", "TLSv1.2", "AEAD", "kECDHE", "kEECDH", "ECDHE", "EECDH", "ECDH",
    "FIPS", "SSLv3",
];

fn tls12_suites() -> [Tls12; 6] {
    [
        Tls12 {
            suite: cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            openssl: "ECDHE-ECDSA-AES256-GCM-SHA384",
            words: &["aECDSA", "ECDSA", "AES", "AES256", "AESGCM", "SHA384"],
            bits: 256,
        },
        Tls12 {
            suite: cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
            openssl: "ECDHE-RSA-AES256-GCM-SHA384",
            words: &["aRSA", "AES", "AES256", "AESGCM", "SHA384"],
            bits: 256,
        },
        Tls12 {
            suite: cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            openssl: "ECDHE-ECDSA-CHACHA20-POLY1305",
            words: &["aECDSA", "ECDSA", "CHACHA20", "SHA256"],
            bits: 256,
        },
        Tls12 {
            suite: cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
            openssl: "ECDHE-RSA-CHACHA20-POLY1305",
            words: &["aRSA", "CHACHA20", "SHA256"],
            bits: 256,
        },
        Tls12 {
            suite: cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            openssl: "ECDHE-ECDSA-AES128-GCM-SHA256",
            words: &["aECDSA", "ECDSA", "AES", "AES128", "AESGCM", "SHA256"],
            bits: 128,
        },
        Tls12 {
            suite: cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            openssl: "ECDHE-RSA-AES128-GCM-SHA256",
            words: &["aRSA", "AES", "AES128", "AESGCM", "SHA256"],
            bits: 128,
        },
    ]
}

/// OpenSSL words that select nothing rustls implements: fine to exclude, noted when asked
/// for.
const NOTHING_IN_RUSTLS: &[&str] = &[
    "aNULL",
    "eNULL",
    "NULL",
    "COMPLEMENTOFDEFAULT",
    "COMPLEMENTOFALL",
    "MEDIUM",
    "LOW",
    "EXPORT",
    "EXP",
    "kRSA",
    "RSA",
    "aDSS",
    "DSS",
    "aDH",
    "kDH",
    "kDHr",
    "kDHd",
    "DH",
    "kDHE",
    "kEDH",
    "DHE",
    "EDH",
    "ADH",
    "AECDH",
    "kECDH",
    "kECDHr",
    "kECDHe",
    "aECDH",
    "RC4",
    "RC2",
    "DES",
    "3DES",
    "IDEA",
    "SEED",
    "CAMELLIA",
    "CAMELLIA128",
    "CAMELLIA256",
    "ARIA",
    "ARIA128",
    "ARIA256",
    "MD5",
    "SHA1",
    "SHA",
    "GOST",
    "GOST94",
    "GOST89MAC",
    "PSK",
    "kPSK",
    "aPSK",
    "kECDHEPSK",
    "kDHEPSK",
    "kRSAPSK",
    "SRP",
    "kSRP",
    "aSRP",
    "KRB5",
    "kKRB5",
    "aKRB5",
    "CBC",
    "AESCCM",
    "AESCCM8",
    "TLSv1",
    "TLSv1.0",
    "SUITEB128",
    "SUITEB128ONLY",
    "SUITEB192",
    "CHACHA20-POLY1305",
];

/// Evaluates an options + cipher string pair. `options_var`/`cipher_var` name the settings in
/// errors and notes. An error means no usable TLS configuration results.
pub fn evaluate(
    options_var: &str,
    options: &str,
    cipher_var: &str,
    ciphers: &str,
) -> Result<Policy, String> {
    let mut notes = Vec::new();
    let (mut tls12, mut tls13, mut server_order) = (true, true, false);
    for word in options
        .split([',', ' ', ':', ';'])
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        match word.to_ascii_lowercase().replace('_', "-").as_str() {
            "no-sslv2" | "no-sslv3" | "no-tlsv1" | "no-tlsv11" | "no-tlsv1.1" | "no-tlsv10" => {}
            "no-tlsv12" | "no-tlsv1.2" => tls12 = false,
            "no-tlsv13" | "no-tlsv1.3" => tls13 = false,
            "cipher-server-preference" => server_order = true,
            // rustls never renegotiates, and sluice treats a missing close_notify as the end
            // of the stream in any case.
            "no-renegotiation" | "ignore-unexpected-eof" | "none" => {}
            _ => notes.push(format!(
                "{options_var}: option {word:?} has no equivalent in rustls and is ignored"
            )),
        }
    }
    if !tls12 && !tls13 {
        return Err(format!(
            "{options_var}={options:?} disables both TLS 1.2 and TLS 1.3, the only versions \
             sluice speaks (nothing older is ever offered); remove no-tlsv12 or no-tlsv13"
        ));
    }

    let table = tls12_suites();
    let matches = |suite: &Tls12, part: &str| {
        part == suite.openssl
            || suite_name(&suite.suite) == part
            || COMMON.contains(&part)
            || suite.words.contains(&part)
    };
    let mut list: Vec<usize> = Vec::new();
    let mut banned = [false; 6];
    for token in ciphers
        .split([':', ',', ' '])
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        if let Some(cmd) = token.strip_prefix('@') {
            if cmd.eq_ignore_ascii_case("STRENGTH") {
                list.sort_by_key(|&i| std::cmp::Reverse(table[i].bits));
            } else if !cmd.to_ascii_uppercase().starts_with("SECLEVEL=") {
                // Every rustls suite meets any OpenSSL security level; only an unknown
                // command is worth a note.
                notes.push(format!(
                    "{cipher_var}: {token:?} is not an OpenSSL cipher command"
                ));
            }
            continue;
        }
        let (op, body) = match token.as_bytes()[0] {
            b'!' | b'-' | b'+' => (token.as_bytes()[0], &token[1..]),
            _ => (0, token),
        };
        let parts: Vec<&str> = body.split('+').filter(|p| !p.is_empty()).collect();
        for part in &parts {
            let known = table.iter().any(|s| matches(s, part)) || NOTHING_IN_RUSTLS.contains(part);
            if !known {
                notes.push(if part.contains('-') || part.contains('_') {
                    format!(
                        "{cipher_var}: cipher {part:?} is not implemented by rustls; it is \
                         never offered"
                    )
                } else {
                    format!("{cipher_var}: {part:?} is not an OpenSSL cipher word; ignored")
                });
            }
        }
        let selected: Vec<usize> = (0..table.len())
            .filter(|&i| !parts.is_empty() && parts.iter().all(|p| matches(&table[i], p)))
            .collect();
        match op {
            b'!' => {
                list.retain(|i| !selected.contains(i));
                for &i in &selected {
                    banned[i] = true;
                }
            }
            b'-' => list.retain(|i| !selected.contains(i)),
            b'+' => {
                let (moved, kept): (Vec<usize>, Vec<usize>) =
                    list.iter().partition(|i| selected.contains(i));
                list = kept;
                list.extend(moved);
            }
            _ => {
                if selected.is_empty() && parts.iter().all(|p| NOTHING_IN_RUSTLS.contains(p)) {
                    notes.push(format!(
                        "{cipher_var}: {body:?} selects no cipher rustls implements (rustls \
                         has only ECDHE with AES-GCM or ChaCha20-Poly1305)"
                    ));
                }
                for i in selected {
                    if !banned[i] && !list.contains(&i) {
                        list.push(i);
                    }
                }
            }
        }
    }
    if tls12 && list.is_empty() {
        if tls13 {
            notes.push(format!(
                "{cipher_var}={ciphers:?} selects no TLS 1.2 suite rustls implements: TLS 1.2 \
                 is off, only TLS 1.3 clients can connect"
            ));
            tls12 = false;
        } else {
            return Err(format!(
                "{cipher_var}={ciphers:?} selects no TLS 1.2 suite rustls implements ({}), and \
                 {options_var} turns TLS 1.3 off: no client could connect",
                table.map(|s| s.openssl).join(", ")
            ));
        }
    }
    let mut versions = Vec::new();
    let mut suites = Vec::new();
    if tls13 {
        versions.push(&version::TLS13);
        suites.extend([
            cs::TLS13_AES_256_GCM_SHA384,
            cs::TLS13_AES_128_GCM_SHA256,
            cs::TLS13_CHACHA20_POLY1305_SHA256,
        ]);
    }
    if tls12 {
        versions.push(&version::TLS12);
        suites.extend(list.iter().map(|&i| table[i].suite));
    }
    notes.dedup();
    Ok(Policy {
        versions,
        suites,
        server_order,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{SC4S_CIPHER_SUITE, SC4S_TLS_OPTIONS};

    fn names(p: &Policy) -> Vec<&'static str> {
        p.suites.iter().map(suite_name).collect()
    }

    #[test]
    fn sc4s_defaults_give_every_suite_strongest_first_and_no_note() {
        let p = evaluate("O", SC4S_TLS_OPTIONS, "C", SC4S_CIPHER_SUITE).unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.versions_label(), "TLSv1.3, TLSv1.2");
        let n = names(&p);
        assert_eq!(n.len(), 9, "{n:?}");
        assert_eq!(
            &n[..3],
            [
                "TLS13_AES_256_GCM_SHA384",
                "TLS13_AES_128_GCM_SHA256",
                "TLS13_CHACHA20_POLY1305_SHA256"
            ]
        );
        // @STRENGTH: the 256-bit suites before the 128-bit ones.
        assert!(
            n[3..7]
                .iter()
                .all(|s| s.contains("256") || s.contains("CHACHA")),
            "{n:?}"
        );
        assert!(n[7..].iter().all(|s| s.contains("AES_128")), "{n:?}");
    }

    #[test]
    fn versions_follow_the_options() {
        let p = evaluate("O", "no-tlsv13", "C", "HIGH").unwrap();
        assert_eq!(p.versions_label(), "TLSv1.2");
        assert!(names(&p).iter().all(|n| !n.starts_with("TLS13")));
        let p = evaluate("O", "no-sslv3,no-tlsv12", "C", "HIGH").unwrap();
        assert_eq!(p.versions_label(), "TLSv1.3");
        assert_eq!(names(&p).len(), 3);
        let e = evaluate("O", "no-tlsv12 no-tlsv13", "C", "HIGH").unwrap_err();
        assert!(e.contains("O=") && e.contains("both"), "{e}");
    }

    #[test]
    fn options_rustls_cannot_express_are_noted_by_name() {
        let p = evaluate(
            "SC4S_SOURCE_TLS_OPTIONS",
            "no-sslv2, dont-insert-empty-fragments",
            "C",
            "HIGH",
        )
        .unwrap();
        assert_eq!(p.notes.len(), 1);
        assert!(
            p.notes[0].contains("SC4S_SOURCE_TLS_OPTIONS")
                && p.notes[0].contains("dont-insert-empty-fragments")
        );
        let p = evaluate("O", "cipher-server-preference", "C", "HIGH").unwrap();
        assert!(p.server_order && p.notes.is_empty());
    }

    #[test]
    fn cipher_strings_select_order_and_exclude_like_openssl() {
        let p = evaluate(
            "O",
            "no-tlsv13",
            "C",
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384",
        )
        .unwrap();
        assert_eq!(
            names(&p),
            [
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
            ]
        );
        let p = evaluate("O", "no-tlsv13", "C", "HIGH:!aRSA").unwrap();
        assert!(
            names(&p).iter().all(|n| n.contains("ECDSA")),
            "{:?}",
            names(&p)
        );
        // `!` is permanent, `-` is not.
        let p = evaluate("O", "no-tlsv13", "C", "HIGH:!CHACHA20:CHACHA20").unwrap();
        assert!(names(&p).iter().all(|n| !n.contains("CHACHA")));
        let p = evaluate("O", "no-tlsv13", "C", "HIGH:-CHACHA20:CHACHA20").unwrap();
        assert_eq!(names(&p).iter().filter(|n| n.contains("CHACHA")).count(), 2);
        // `+X` moves to the end; `A+B` is both.
        let p = evaluate("O", "no-tlsv13", "C", "AESGCM:+AES128").unwrap();
        assert!(
            names(&p)[2..].iter().all(|n| n.contains("AES_128")),
            "{:?}",
            names(&p)
        );
        let p = evaluate("O", "no-tlsv13", "C", "aECDSA+AES128").unwrap();
        assert_eq!(names(&p), ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]);
        // IANA names work too.
        let p = evaluate(
            "O",
            "no-tlsv13",
            "C",
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        )
        .unwrap();
        assert_eq!(names(&p).len(), 1);
    }

    #[test]
    fn ciphers_rustls_lacks_are_noted_and_the_used_suites_named() {
        let p = evaluate(
            "O",
            "",
            "SC4S_SOURCE_TLS_CIPHER_SUITE",
            "DHE-RSA-AES256-SHA:ECDHE-RSA-AES256-GCM-SHA384:BOGUS",
        )
        .unwrap();
        assert_eq!(p.notes.len(), 2, "{:?}", p.notes);
        assert!(
            p.notes[0].contains("DHE-RSA-AES256-SHA")
                && p.notes[0].contains("not implemented by rustls")
        );
        assert!(p.notes[1].contains("BOGUS"));
        assert!(
            p.suites_label()
                .ends_with("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
            "{}",
            p.suites_label()
        );
    }

    #[test]
    fn a_string_that_leaves_nothing_for_tls12() {
        // With TLS 1.3 on, TLS 1.2 is turned off and said so.
        let p = evaluate("O", "", "C", "RC4:3DES").unwrap();
        assert_eq!(p.versions_label(), "TLSv1.3");
        assert!(
            p.notes.iter().any(|n| n.contains("only TLS 1.3")),
            "{:?}",
            p.notes
        );
        // With TLS 1.2 only, nothing could connect: an error naming both settings.
        let e = evaluate("O", "no-tlsv13", "C", "RC4").unwrap_err();
        assert!(e.contains("C=\"RC4\"") && e.contains('O'), "{e}");
    }
}
