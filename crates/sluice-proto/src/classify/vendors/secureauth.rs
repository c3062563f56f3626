//! SecureAuth IdP (SC4S `addons/secureauth/app-syslog-secureauth_idp.conf`): RFC 5424 with
//! `SecureAuth` in the structured data.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "secureauth",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-secureauth_idp",
        topic: Topic::Sdata,
        order: "secureauth/app-syslog-secureauth_idp.conf",
        when: When::Token(&["SecureAuth"]),
        parse: idp,
    }],
};

static KEYS: &[Key] = &[
    Key::new("secureauth", "idp", "secureauth:idp", "netops").template(Template::Rfc5424Compact)
];

fn idp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let sd = input
        .msg
        .structured_data
        .as_ref()
        .map(|s| s.raw())
        .unwrap_or_default();
    if crate::classify::vendors::util::find_lit!(sd, b"SecureAuth").is_none() {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn sdata() {
        let c = classify_line(
            "<132>1 2024-04-09T09:42:29.167859+00:00 s SecureAuth2 2000 ID00000 [SecureAuth@27389 A=\"1\"] Begin",
        );
        assert_eq!(c.sourcetype, "secureauth:idp");
        let c = classify_line("<132>1 2024-04-09T09:42:29Z s SecureAuth2 2000 ID00000 - Begin");
        assert_ne!(c.sourcetype, "secureauth:idp");
    }
}
