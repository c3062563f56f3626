//! GitHub Enterprise Server audit log (SC4S `addons/github/app-syslog-github_ent.conf`):
//! PROGRAM `github_audit`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;

pub static VENDOR: Vendor = Vendor {
    name: "github",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-github_ent",
        topic: Topic::Pgm,
        order: "github/app-syslog-github_ent.conf",
        when: When::ProgramPrefix(&["github_audit"]),
        parse: github,
    }],
};

static KEYS: &[Key] = &[
    Key::new("github", "ent", "github:enterprise:audit", "gitops")
        .class("audit")
        .source("github:enterprise:audit")
        .template(Template::MsgOnly),
];

fn github<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"github_audit"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn audit() {
        let c = classify_line("<190>Mar 30 06:36:21 ghe github_audit: {\"action\":\"x\"}");
        assert_eq!(c.sourcetype, "github:enterprise:audit");
        assert_eq!(c.index, "gitops");
        assert_eq!(c.source, "github:enterprise:audit");
    }
}
