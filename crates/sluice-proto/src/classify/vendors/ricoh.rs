//! Ricoh multifunction printers (SC4S `addons/ricoh/app-syslog-ricoh_syslog.conf`): MSGID
//! starting with `RICOH`. With `SC4S_SOURCE_RICOH_SYSLOG_FIXHOST=yes` HOST is PROGRAM (the
//! printers' firmware writes the host name there).

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub static VENDOR: Vendor = Vendor {
    name: "ricoh",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-ricoh_syslog",
        topic: Topic::Pgm,
        order: "ricoh/app-syslog-ricoh_syslog.conf",
        when: When::Token(&["RICOH"]),
        parse: ricoh,
    }],
};

static KEYS: &[Key] = &[Key::new("ricoh", "mfp", "ricoh:mfp", "print")];

fn ricoh<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.msg.msgid.is_some_and(|m| m.starts_with(b"RICOH")) {
        return false;
    }
    out.key(&KEYS[0]);
    if input.options.ricoh_fixhost
        && let Some(p) = input.program
    {
        out.host(p);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classifier_with, classify_line, classify_line_with};
    use crate::classify::{HostEdit, Value, VendorOptions};

    #[test]
    fn msgid() {
        let c = classify_line(
            "<134>1 2024-04-09T05:22:01.136183+00:00 10.20.30.41 mfp - RICOH_MFPLP_ACCESS - {}",
        );
        assert_eq!(c.sourcetype, "ricoh:mfp");
        assert_eq!(c.index, "print");
        assert_eq!(c.host, HostEdit::Keep);
    }

    #[test]
    fn fixhost_takes_program() {
        let cx = classifier_with(VendorOptions {
            ricoh_fixhost: true,
            ..VendorOptions::default()
        });
        let c = classify_line_with(
            cx,
            "<134>1 2024-04-09T05:22:01.136183+00:00 10.20.30.41 mfp-floor2 - RICOH_MFPLP_ACCESS - {}",
        );
        assert_eq!(c.sourcetype, "ricoh:mfp");
        assert_eq!(c.host, HostEdit::Set(Value::Bytes(b"mfp-floor2")));
    }
}
