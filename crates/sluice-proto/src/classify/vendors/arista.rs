//! Arista EOS (SC4S `addons/arista/app-syslog-arista_eos.conf`): a capitalised PROGRAM
//! (the EOS agent) and a MESSAGE starting `%FACILITY-SEV-MNEMONIC: `.

use std::sync::LazyLock;

use regex::bytes::Regex;

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::value::{Inline, Value};

pub static VENDOR: Vendor = Vendor {
    name: "arista",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-arista_eos",
        topic: Topic::Syslog,
        order: "arista/app-syslog-arista_eos.conf",
        // PROGRAM, the header's `: `, then the `%` the filter requires.
        when: When::Raw(crate::classify::vendors::util::has_colon_percent),
        parse: eos,
    }],
};

static KEYS: &[Key] = &[Key::new("arista", "eos", "arista:eos", "netops")];

const SOURCE_HEAD: &[u8] = b"arista:eos:";

fn eos<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    static MNEMONIC: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)^%[A-Z]+-\d+-[^: ]+: ").expect("static regex"));
    let Some(program) = input.program else {
        return false;
    };
    // PROGRAM matches `^[A-Z]\S+$`.
    if program.len() < 2
        || !program[0].is_ascii_uppercase()
        || program.iter().any(|b| b.is_ascii_whitespace())
        // The pattern is anchored at a `%`.
        || input.body.first() != Some(&b'%')
        || !MNEMONIC.is_match(input.body)
    {
        return false;
    }
    out.key(&KEYS[0]);
    // source `arista:eos:$(lowercase PROGRAM)`.
    let mut lower = [0u8; 64];
    if let Some(buf) = lower.get_mut(..program.len()) {
        buf.copy_from_slice(program);
        buf.make_ascii_lowercase();
        if let Some(i) = Inline::concat(&[SOURCE_HEAD, buf]) {
            out.source = Some(Value::Inline(i));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn eos_mnemonic() {
        let c = classify_line(
            "<166> 2024-03-11T20:53:52Z leaf1 Acl: %ACL-6-IPACCESS: list acl-internet Ethernet1 denied tcp",
        );
        assert_eq!(c.sourcetype, "arista:eos");
        assert_eq!(c.index, "netops");
        assert_eq!(c.source, "arista:eos:acl");
        let c = classify_line("<166> 2024-03-11T20:53:52Z leaf1 acl: %ACL-6-IPACCESS: list");
        assert_ne!(c.vendor, "arista");
        let c = classify_line("<166> 2024-03-11T20:53:52Z leaf1 Acl: %ACL denied");
        assert_ne!(c.vendor, "arista");
        // The `%` must start MESSAGE; the mnemonic's case does not matter.
        let c = classify_line("<166> 2024-03-11T20:53:52Z leaf1 Acl: x %ACL-6-IPACCESS: list");
        assert_ne!(c.vendor, "arista");
        let c = classify_line("<166> 2024-03-11T20:53:52Z leaf1 Acl: %acl-6-ipaccess: list");
        assert_eq!(c.vendor, "arista");
    }
}
