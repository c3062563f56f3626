//! Cohesity (SC4S `addons/cohesity/`): alerts, API audit, cluster audit and data
//! protection events, by PROGRAM; the cluster ones need their JSON member and take the
//! event time from the JSON's `Timestamp`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vtime;

use super::util::json_scalar;

pub static VENDOR: Vendor = Vendor {
    name: "cohesity",
    keys: KEYS,
    apps: &[
        App {
            name: "app-syslog-cohesity_alerts",
            topic: Topic::Pgm,
            order: "cohesity/app-syslog-cohesity_alerts.conf",
            when: When::ProgramPrefix(&["cohesity_alerts"]),
            parse: alerts,
        },
        App {
            name: "app-syslog-cohesity_api_audit",
            topic: Topic::Pgm,
            order: "cohesity/app-syslog-cohesity_api_audit.conf",
            when: When::ProgramPrefix(&["api_audit"]),
            parse: api_audit,
        },
        App {
            name: "app-syslog-cohesity_cluster_audit",
            topic: Topic::Pgm,
            order: "cohesity/app-syslog-cohesity_cluster_audit.conf",
            when: When::Program(&["cluster_audit"]),
            parse: cluster_audit,
        },
        App {
            name: "app-syslog-cohesity_cluster_dataprotection",
            topic: Topic::Pgm,
            order: "cohesity/app-syslog-cohesity_cluster_dataprotection.conf",
            when: When::Program(&["dataprotection_events"]),
            parse: dataprotection,
        },
    ],
};

static KEYS: &[Key] = &[
    Key::new("cohesity", "alerts", "cohesity:alerts", "infraops").template(Template::MsgOnly),
    Key::new("cohesity", "api", "cohesity:api:audit", "infraops")
        .class("audit")
        .template(Template::MsgOnly),
    Key::new("cohesity", "cluster", "cohesity:cluster:audit", "infraops")
        .class("audit")
        .template(Template::MsgOnly),
    Key::new(
        "cohesity",
        "cluster",
        "cohesity:cluster:dataprotection",
        "infraops",
    )
    .class("dataprotection")
    .template(Template::MsgOnly),
];

fn alerts<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input
        .program
        .is_some_and(|p| p.starts_with(b"cohesity_alerts"))
    {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

fn api_audit<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !input.program.is_some_and(|p| p.starts_with(b"api_audit")) {
        return false;
    }
    out.key(&KEYS[1]);
    true
}

/// The JSON's `Timestamp` as SC4S's date-parser reads it (with or without a fraction).
fn stamp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) {
    if let Some(t) = json_scalar(input.body, b"Timestamp") {
        let ts = vtime::strptime("%Y-%m-%dT%T.%f%z", t, input.zone, input.now_unix_secs)
            .or_else(|| vtime::strptime("%Y-%m-%dT%T%z", t, input.zone, input.now_unix_secs));
        if let Some(ts) = ts {
            out.time(ts);
        }
    }
}

fn cluster_audit<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"cluster_audit")
        || json_scalar(input.body, b"ClusterInfo").is_none_or(<[u8]>::is_empty)
    {
        return false;
    }
    out.key(&KEYS[2]);
    stamp(input, out);
    true
}

fn dataprotection<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"dataprotection_events")
        || json_scalar(input.body, b"EventType").is_none_or(<[u8]>::is_empty)
    {
        return false;
    }
    out.key(&KEYS[3]);
    stamp(input, out);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::classify_line;

    #[test]
    fn programs() {
        let c = classify_line("<14>2024-03-24T10:36:18.372452+00:00 c api_audit[42]: {\"u\":1}");
        assert_eq!(c.sourcetype, "cohesity:api:audit");
        let c = classify_line(
            "<14>2024-03-24T10:36:18Z c cluster_audit: {\"ClusterInfo\":\"c1\",\"Timestamp\":\"2024-03-24T10:00:00+00:00\"}",
        );
        assert_eq!(c.sourcetype, "cohesity:cluster:audit");
        let c = classify_line("<14>2024-03-24T10:36:18Z c cluster_audit: {\"Other\":1}");
        assert_ne!(c.sourcetype, "cohesity:cluster:audit");
    }
}
