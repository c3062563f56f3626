//! Forcepoint (Websense) Web Security and Email Security (SC4S
//! `addons/forcepoint/app-syslog-forcepoint_webprotect.conf`): a MESSAGE starting
//! `vendor=Websense` or `vendor=Forcepoint` (any case), read as space-separated
//! `key=value` pairs; `product=` picks the sourcetype. For other products SC4S also removes
//! every ` key=-` pair from the event text.

use crate::classify::kv::space_separated_value;
use crate::classify::registry::{App, Input, Key, MessageFilter, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::value::Value;

pub static VENDOR: Vendor = Vendor {
    name: "forcepoint",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-forcepoint_webprotect",
        topic: Topic::Syslog,
        order: "forcepoint/app-syslog-forcepoint_webprotect.conf",
        // The filter ignores case: a first-byte test, the rest in the parser.
        when: When::BodyPrefix(&["v", "V"]),
        parse: webprotect,
    }],
};

const WEB: usize = 0;
const EMAIL: usize = 1;
const OTHER: usize = 2;

static KEYS: &[Key] = &[
    Key::new("forcepoint", "webprotect", "websense:cg:kv", "netproxy").template(Template::MsgOnly),
    Key::new("forcepoint", "email", "forcepoint:email:kv", "email").template(Template::MsgOnly),
    Key::new("forcepoint", "", "websense:cg:kv", "netproxy"),
];

fn webprotect<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    let m = input.body;
    let starts = |p: &[u8]| m.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p));
    if !(starts(b"vendor=Websense") || starts(b"vendor=Forcepoint")) {
        return false;
    }
    match space_separated_value(m, b"product").unwrap_or_default() {
        b"Security" => out.key(&KEYS[WEB]),
        b"Email Security" => out.key(&KEYS[EMAIL]),
        product => {
            out.key(&KEYS[OTHER]);
            if !product.is_empty() {
                out.product = Some(Value::Bytes(product));
            }
            out.message_filter = MessageFilter::DropDashValues;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::kv::space_separated_value as kv_value;
    use crate::classify::testutil::{classify_line, event_text};
    use crate::classify::{MessageFilter, Template};

    const WEB: &str = "<134>May 21 01:40:16 wsg-proxy01 vendor=Websense 9f product=Security product_version=7.7.0 action=permitted severity=7 category=755 user=LDAP://user7 OU=Users,OU=Beijing,DC=com/TEST\\, TEST_NAME src_host=10.0.0.4 http_user_agent=Mozilla/3.0 (Windows; U; Windows NT 6.1) reason=- disposition=2573 policy=role-8**Default role=4 duration=63 url=http://test_web.com/contents/content1.jpg unknownfield=-";

    /// SC4S's `test_forcepoint_web.py::test_forcepoint_webprotect_kv`.
    #[test]
    fn web_security() {
        let c = classify_line(WEB);
        assert_eq!(c.sourcetype, "websense:cg:kv");
        assert_eq!(c.index, "netproxy");
        assert_eq!(c.vendor, "forcepoint");
        assert_eq!(c.product, "webprotect");
        assert_eq!(c.template, Template::MsgOnly);
        assert_eq!(c.edit.filter, MessageFilter::None);
        assert_eq!(c.app, "app-syslog-forcepoint_webprotect");
    }

    #[test]
    fn email_and_other_products() {
        let c = classify_line(
            "<134>May 21 01:40:16 fp VENDOR=forcepoint product=\"Email Security\" action=x",
        );
        assert_eq!(c.sourcetype, "forcepoint:email:kv");
        assert_eq!(c.index, "email");
        assert_eq!(c.product, "email");
        // Unquoted, syslog-ng's value stops at the space: `Email` is another product.
        let c = classify_line(
            "<134>May 21 01:40:16 fp vendor=Forcepoint product=Email Security reason=- a=b",
        );
        assert_eq!(c.sourcetype, "websense:cg:kv");
        assert_eq!(c.product, "Email");
        assert_eq!(c.template, Template::HdrMsg);
        assert_eq!(c.edit.filter, MessageFilter::DropDashValues);
        assert_eq!(
            event_text(
                "<134>May 21 01:40:16 fp vendor=Forcepoint product=Email Security reason=- a=b"
            ),
            "vendor=Forcepoint product=Email Security a=b"
        );
        // No product: vendor only.
        let c = classify_line("<134>May 21 01:40:16 fp vendor=Websense action=x");
        assert_eq!(c.sourcetype, "websense:cg:kv");
        assert_eq!(c.vendor, "forcepoint");
        assert_eq!(c.product, "");
        let c = classify_line("<134>May 21 01:40:16 fp vendor=Websens product=Security");
        assert_ne!(c.vendor, "forcepoint");
    }

    /// What SC4S's `subst(" [^ =]+\=\-", "", flags(global))` leaves, against the regex.
    #[test]
    fn dash_values_removed_like_the_regex() {
        let re = regex::bytes::Regex::new(r"(?-u) [^ =]+=-").unwrap();
        for text in [
            &b"vendor=x product=Web reason=- a=b c=-d  e=- =- f==- g=-"[..],
            b"",
            b" a=-",
            b"a=- b=-- c= -",
            b"\xff \xfe=-\xfd",
        ] {
            let want = re.replace_all(text, &b""[..]);
            let got: Vec<u8> = MessageFilter::DropDashValues
                .pieces(text)
                .collect::<Vec<_>>()
                .concat();
            assert_eq!(got, want.as_ref(), "{:?}", String::from_utf8_lossy(text));
            assert_eq!(
                MessageFilter::DropDashValues.is_empty(text),
                want.is_empty()
            );
        }
        let got: Vec<u8> = MessageFilter::None
            .pieces(b"a b")
            .collect::<Vec<_>>()
            .concat();
        assert_eq!(got, b"a b");
    }

    #[test]
    fn key_values() {
        let t = b"vendor=Websense 9f product=Security x =y  z = 'q r' w=\"a\\\"b\" u=\"open v=1 product=Last";
        assert_eq!(kv_value(t, b"vendor"), Some(&b"Websense"[..]));
        assert_eq!(
            kv_value(t, b"z"),
            Some(&b"'q"[..]).filter(|_| false).or(Some(b""))
        );
        assert_eq!(kv_value(t, b"w"), Some(&b"a\\\"b"[..]));
        assert_eq!(kv_value(t, b"u"), Some(&b"\"open"[..]));
        assert_eq!(kv_value(t, b"v"), Some(&b"1"[..]));
        assert_eq!(kv_value(t, b"product"), Some(&b"Last"[..]));
        assert_eq!(kv_value(b"a='q r' b=1", b"a"), Some(&b"q r"[..]));
        assert_eq!(kv_value(b"a='q r'x b=1", b"a"), Some(&b"'q"[..]));
        assert_eq!(kv_value(b"no pairs", b"a"), None);
    }
}
