use std::net::{IpAddr, Ipv4Addr};

use super::{GroupLimits, GroupOptions, Grouper, Rule, part};
use crate::classify::testutil::{classifier_with, classify_line_with};
use crate::classify::{Classification, VendorOptions};

const SRC: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10));

fn vsphere() -> GroupOptions {
    GroupOptions {
        vsphere: true,
        brightmail: false,
        checkpoint_noise_secs: None,
    }
}

fn brightmail() -> GroupOptions {
    GroupOptions {
        vsphere: false,
        brightmail: true,
        checkpoint_noise_secs: None,
    }
}

/// Offers `lines` in order (1 ms apart) and returns what completed, then what `expire` at
/// `expire_at` emits.
fn run(lines: &[&str], opts: GroupOptions, expire_at: i64) -> (Vec<String>, Vec<String>) {
    let mut g: Grouper = Grouper::new(GroupLimits::default());
    let mut done = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let (msg, c) = classify_both(l);
        let p = part(&msg, &c, SRC, &opts).unwrap_or_else(|| panic!("not a part: {l}"));
        g.offer(&p, &(), i as i64, &mut done);
    }
    let now: Vec<String> = done
        .drain(..)
        .map(|(_, l)| String::from_utf8(l).unwrap())
        .collect();
    g.expire(expire_at, &mut done);
    (
        now,
        done.into_iter()
            .map(|(_, l)| String::from_utf8(l).unwrap())
            .collect(),
    )
}

/// The message `classify_line` classified (it leaks its copy; parse again the same way).
fn c_msg(line: &str) -> crate::message::Message<'static> {
    let raw: &'static [u8] = Box::leak(line.as_bytes().to_vec().into_boxed_slice());
    let zone: &'static crate::time::Zone = Box::leak(Box::new(crate::time::Zone::utc()));
    crate::parse::parse(
        raw,
        &crate::parse::ParseOptions {
            now_unix_secs: crate::classify::testutil::NOW,
            zone,
        },
    )
}

fn classify_both(
    line: &str,
) -> (
    crate::message::Message<'static>,
    Classification<'static, 'static>,
) {
    let msg: &'static crate::message::Message<'static> = Box::leak(Box::new(c_msg(line)));
    let src = crate::classify::SourceMeta {
        transport: crate::classify::Transport::Udp,
        dest_port: 514,
        source_ip: SRC,
        listener_id: "DEFAULT",
    };
    let cx: &'static crate::classify::Classifier =
        Box::leak(Box::new(crate::classify::Classifier::default()));
    (
        *msg,
        crate::classify::classify(
            msg,
            &src,
            crate::classify::testutil::NOW,
            cx,
            crate::classify::testutil::scratch(),
        ),
    )
}

#[test]
fn ise_segments_join_by_serial_in_seq_order() {
    let lines = [
        "<165>Mar 21 13:08:50 ise-01 CISE_RADIUS_Accounting 0006028545 3 1 two-, ",
        "<165>Mar 21 13:08:50 ise-01 CISE_RADIUS_Accounting 0006028545 3 0 2024-03-21 13:08:50.865 +00:00 0088472694 3002 NOTICE one-, ",
        "<165>Mar 21 13:08:50 ise-01 CISE_RADIUS_Accounting 0006028545 3 2 three",
    ];
    let (now, later) = run(&lines, GroupOptions::default(), 100_000);
    assert!(later.is_empty());
    assert_eq!(
        now,
        [
            "<165>Mar 21 13:08:50 ise-01 CISE_RADIUS_Accounting 0006028545 1 0 2024-03-21 13:08:50.865 +00:00 0088472694 3002 NOTICE one-, two-, three"
        ]
    );
    // The joined line is an ordinary one-segment record: ISE's sourcetype and the first
    // segment's time.
    let (msg, c) = classify_both(&now[0]);
    assert_eq!(c.sourcetype, "cisco:ise:syslog");
    assert!(part(&msg, &c, SRC, &GroupOptions::default()).is_none());
    assert_eq!(c.time_micros(&msg, 0), 1_711_026_530_865_000);
}

#[test]
fn single_segments_and_alarms_are_not_grouped() {
    for l in [
        "<165>Mar 21 13:08:50 ise-01 CISE_RADIUS_Accounting 0006028545 1 0 2024-03-21 13:08:50.865 +00:00 x",
        "<165>Mar 21 14:13:57 ise-02 CISE_Alarm WARN: RADIUS Authentication Request dropped",
        "<13>Mar 21 14:13:57 h sshd[1]: x 2 1 y",
    ] {
        let (msg, c) = classify_both(l);
        assert!(part(&msg, &c, SRC, &vsphere()).is_none(), "{l}");
    }
}

#[test]
fn lost_segment_is_emitted_at_the_timeout() {
    let lines = [
        "<165> Mar 15 23:39:29 acs-01 CSCOacs_Passed_Authentications: 0765855540 3 0 2024-03-15 23:39:29.891 +00:00 0178632943 5202 NOTICE a, ",
        "<165> Mar 15 23:39:29 acs-01 CSCOacs_Passed_Authentications: 0765855540 3 2 c",
    ];
    let (now, later) = run(&lines, GroupOptions::default(), 5_000);
    assert!(now.is_empty() && later.is_empty(), "{now:?} {later:?}");
    let (now, later) = run(&lines, GroupOptions::default(), 10_001);
    assert!(now.is_empty());
    assert_eq!(
        later,
        [
            "<165> Mar 15 23:39:29 acs-01 CSCOacs_Passed_Authentications: 0765855540 1 0 2024-03-15 23:39:29.891 +00:00 0178632943 5202 NOTICE a, c"
        ]
    );
    let (_, c) = classify_both(&later[0]);
    assert_eq!(c.sourcetype, "cisco:acs");
}

#[test]
fn vsphere_groups_only_when_enabled() {
    let l = "<14>2024-04-10T10:00:00.123Z esx-01 localcli[100]: line one";
    let (msg, c) = classify_both(l);
    assert_eq!(c.vendor, "vmware");
    assert!(part(&msg, &c, SRC, &GroupOptions::default()).is_none());
    assert_eq!(
        part(&msg, &c, SRC, &vsphere()).map(|p| p.rule),
        Some(Rule::VsphereLocalcli)
    );
    // And the classifier reads the setting.
    let cx = classifier_with(VendorOptions {
        vsphere_groupmsg: true,
        ..VendorOptions::default()
    });
    assert!(cx.group_options().vsphere);
    let _ = classify_line_with(cx, l);
}

#[test]
fn vsphere_localcli_lines_join_after_two_seconds() {
    let lines = [
        "<14>2024-04-10T10:00:00.123Z esx-01 localcli[100]: first",
        "<14>2024-04-10T10:00:00.124Z esx-01 localcli[100]: second",
    ];
    let (now, later) = run(&lines, vsphere(), 1_000);
    assert!(now.is_empty() && later.is_empty());
    let (_, later) = run(&lines, vsphere(), 2_001);
    assert_eq!(
        later,
        ["<14>2024-04-10T10:00:00.123Z esx-01 localcli[100]: first\nsecond"]
    );
    let (msg, c) = classify_both(&later[0]);
    assert_eq!(c.sourcetype, "vmware:esxlog:localcli");
    assert_eq!(msg.message, Some(&b"first\nsecond"[..]));
}

#[test]
fn vsphere_cmmds_completes_at_the_end_mark() {
    let lines = [
        "<14>2024-04-10T10:00:00.123Z esx-01 cmmdsTimeMachineDump: 1644579494.9,{\"a\": 1, \"dgAvgTo.",
        "<14>2024-04-10T10:00:00.123Z esx-01 cmmdsTimeMachineDump: talRead\": 2}\\q.",
    ];
    let (now, _) = run(&lines, vsphere(), 0);
    assert_eq!(
        now,
        [
            "<14>2024-04-10T10:00:00.123Z esx-01 cmmdsTimeMachineDump: 1644579494.9,{\"a\": 1, \"dgAvgTotalRead\": 2}"
        ]
    );
}

#[test]
fn vsphere_storage_rm_and_split_lines() {
    let lines = [
        "<14>2024-04-10T10:00:00.123Z esx-01 storageRM[1]: slopes {",
        "<14>2024-04-10T10:00:00.123Z esx-01 storageRM[1]: datastoreSlopeUS[5] = 3 }",
    ];
    let (now, _) = run(&lines, vsphere(), 0);
    assert_eq!(now.len(), 1);
    assert!(now[0].ends_with("slopes {\ndatastoreSlopeUS[5] = 3 }"));
    let lines = [
        "<14>2024-04-10T10:00:00.123Z esx-01 Hostd[1]: Event 1 : {",
        "<14>2024-04-10T10:00:00.123Z esx-01 Hostd[1]: --> key = 1,",
    ];
    let (now, later) = run(&lines, vsphere(), 2_500);
    assert!(now.is_empty());
    assert_eq!(later.len(), 1);
    assert!(later[0].ends_with("Event 1 : {\n--> key = 1,"), "{later:?}");
    // An ordinary vSphere line is not a part.
    let (msg, c) = classify_both("<14>2024-04-10T10:00:00.123Z esx-01 Hostd[1]: done");
    assert!(part(&msg, &c, SRC, &vsphere()).is_none());
}

#[test]
fn limits_emit_the_oldest_group_first() {
    let mut g: Grouper<u8> = Grouper::new(GroupLimits {
        max_groups: 2,
        max_bytes: 1 << 20,
        max_parts: 3,
    });
    let mut done = Vec::new();
    for serial in ["01", "02", "03"] {
        let l = format!("<165>Mar 21 13:08:50 ise-01 CISE_X {serial} 5 1 part");
        let (msg, c) = classify_both(&l);
        let p = part(&msg, &c, SRC, &GroupOptions::default()).unwrap();
        g.offer(&p, &7, 0, &mut done);
    }
    assert_eq!(g.len(), 2);
    assert_eq!(done.len(), 1);
    assert!(String::from_utf8_lossy(&done[0].1).contains("CISE_X 01 1 0 part"));
    // A group reaching max_parts is emitted.
    for _ in 0..3 {
        let (msg, c) = classify_both("<165>Mar 21 13:08:50 ise-01 CISE_X 09 50 1 p");
        let p = part(&msg, &c, SRC, &GroupOptions::default()).unwrap();
        g.offer(&p, &7, 0, &mut done);
    }
    assert!(String::from_utf8_lossy(&done.last().unwrap().1).ends_with("CISE_X 09 1 0 ppp"));
    g.drain(&mut done);
    assert!(g.is_empty());
    assert_eq!(done.len(), 4);
    assert!(done.iter().all(|(origin, _)| *origin == 7));
}

#[test]
fn brightmail_parts_join_by_message_id() {
    let lines = [
        "<1>Apr 10 10:00:00 smg-01 bmserver: 1576195989|a1b2|VERDICT|someone@example.com|none",
        "<1>Apr 10 10:00:00 smg-01 bmserver: 1576195990|c3d4|VERDICT|other@example.com|spam",
        "<1>Apr 10 10:00:00 smg-01 bmserver: 1576195991|a1b2|SOURCE|external",
    ];
    let (now, later) = run(&lines, brightmail(), 1_000);
    assert!(now.is_empty() && later.is_empty());
    let (_, mut later) = run(&lines, brightmail(), 2_100);
    later.sort();
    assert_eq!(
        later,
        [
            "<1>Apr 10 10:00:00 smg-01 bmserver: 1576195989|a1b2|VERDICT|someone@example.com|none;SOURCE|external",
            "<1>Apr 10 10:00:00 smg-01 bmserver: 1576195990|c3d4|VERDICT|other@example.com|spam",
        ]
    );
    let (msg, mut c) = classify_both(&later[0]);
    assert_eq!(c.sourcetype, "symantec:smg");
    super::finish_joined(Rule::Brightmail, &mut c);
    assert_eq!(c.sourcetype, "symantec:smg:mail");
    assert_eq!(c.class, Some(crate::classify::Value::Static("merged")));
    assert_eq!(c.template, crate::classify::Template::MsgOnly);
    assert_eq!(
        msg.message,
        Some(&b"1576195989|a1b2|VERDICT|someone@example.com|none;SOURCE|external"[..])
    );
    // `[Brightmail]` lines and ecelerity are not parts; the setting turns it off.
    for l in [
        "<134>Apr 10 07:24:49 smg-01 conduit: [Brightmail] (NOTICE:7500.3119331456): x",
        "<134>Apr 10 07:24:49 smg-01 bmserver: [Brightmail] x|y|z",
        "<134>Apr 10 07:24:49 smg-01 ecelerity: 1|2|x|y",
    ] {
        let (msg, c) = classify_both(l);
        assert!(part(&msg, &c, SRC, &brightmail()).is_none(), "{l}");
    }
    let (msg, c) = classify_both(lines[0]);
    assert!(part(&msg, &c, SRC, &GroupOptions::default()).is_none());
    assert!(
        crate::classify::Classifier::default()
            .group_options()
            .brightmail
    );
}

/// SC4S's `test_beyondtrust.py::test_beyondtrust_parts`: two parts of site 1427, joined into
/// one event with every part's values, `siteid` 00, the last `seq` and the count.
#[test]
fn beyondtrust_parts_join_by_site() {
    let lines = [
        "<166>May 08 04:40:52 sra-01 BG[123]: 1427:02:02:foo=bar;this=that",
        "<166>May 08 04:40:51 sra-01 BG[123]: 1427:01:02:event=logout;who=unknown (asdf) using password;foo=first",
    ];
    let (now, later) = run(&lines, GroupOptions::default(), 100_000);
    assert!(later.is_empty());
    assert_eq!(
        now,
        [
            "<166>May 08 04:40:52 sra-01 BG[123]: 00:02:2:event=logout;who=unknown (asdf) using password;foo=first;foo=bar;this=that"
        ]
    );
    let line = &now[0];
    // The daemon classifies a joined line without grouping it again.
    let (_, c) = classify_both(line);
    assert_eq!(c.sourcetype, "beyondtrust:sra");
    assert_eq!(
        crate::classify::testutil::event_text(line),
        r#"{"who":"unknown (asdf) using password","this":"that","siteid":"00","seq":"02","sc4s":{"countOfParts":2},"foo":"bar","event":"logout"}"#
    );
    // One-part events and other sites are not held; a missing part is sent at the timeout.
    for l in [
        "<166>May 08 04:40:52 sra-01 BG[123]: 1427:01:01:event=logout",
        "<166>May 08 04:40:52 sra-01 BGX[123]: 1427:01:02:event=logout",
    ] {
        let (msg, c) = classify_both(l);
        assert!(
            part(&msg, &c, SRC, &GroupOptions::default()).is_none(),
            "{l}"
        );
    }
    let lines = [
        "<166>May 08 04:40:52 sra-01 BG[123]: 7:1:3:a=1",
        "<166>May 08 04:40:52 sra-01 BG[123]: 8:1:2:b=1",
        "<166>May 08 04:40:52 sra-01 BG[123]: 7:10:3:c=1",
    ];
    let (now, mut later) = run(&lines, GroupOptions::default(), 10_010);
    assert!(now.is_empty());
    later.sort();
    assert_eq!(
        later,
        [
            // `seq` compared as text: "1" < "10".
            "<166>May 08 04:40:52 sra-01 BG[123]: 00:10:2:a=1;c=1",
            "<166>May 08 04:40:52 sra-01 BG[123]: 00:1:1:b=1",
        ]
    );
}

/// Parses and classifies `line` as received on `listener` with `cx` (leaked: tests only).
fn classify_on(
    cx: &'static crate::classify::Classifier,
    listener: &'static str,
    line: &str,
) -> (
    crate::message::Message<'static>,
    Classification<'static, 'static>,
) {
    let msg: &'static crate::message::Message<'static> = Box::leak(Box::new(c_msg(line)));
    let src = crate::classify::SourceMeta {
        transport: crate::classify::Transport::Tcp,
        dest_port: 514,
        source_ip: SRC,
        listener_id: listener,
    };
    (
        *msg,
        crate::classify::classify(
            msg,
            &src,
            crate::classify::testutil::NOW,
            cx,
            crate::classify::testutil::scratch(),
        ),
    )
}

fn checkpoint_noise() -> &'static crate::classify::Classifier {
    classifier_with(VendorOptions {
        checkpoint: crate::classify::CheckpointOptions {
            noise_control: true,
            noise_seconds: 3,
            ..Default::default()
        },
        ..VendorOptions::default()
    })
}

#[test]
fn checkpoint_noise_control_keeps_the_last_event_of_a_loguid() {
    let cx = checkpoint_noise();
    let opts = cx.group_options();
    assert_eq!(opts.checkpoint_noise_secs, Some(3));
    let lines = [
        "time=1715158880|hostname=gw-1|product=Firewall|action=Accept|loguid={0x1,0x2}|bytes=",
        "time=1715158881|hostname=gw-1|product=Firewall|action=Accept|loguid={0x1,0x2}|bytes=10",
        "time=1715158881|hostname=gw-1|product=Firewall|action=Drop|loguid={0x3}",
    ];
    let mut g: Grouper = Grouper::new(GroupLimits::default());
    let mut done = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let (msg, c) = classify_on(cx, "DEFAULT", l);
        assert_eq!(c.sourcetype, "cp_log");
        let p = part(&msg, &c, SRC, &opts).expect("a part");
        assert_eq!(p.rule, Rule::CheckpointNoise);
        g.offer(&p, &(), i as i64, &mut done);
    }
    assert!(done.is_empty());
    g.expire(2_999, &mut done);
    assert!(done.is_empty(), "the timeout is the setting's");
    g.expire(3_002, &mut done);
    let mut joined: Vec<String> = done
        .into_iter()
        .map(|(_, l)| String::from_utf8(l).unwrap())
        .collect();
    joined.sort();
    assert_eq!(joined, [lines[1], lines[2]]);
    // Off by default; a line without a loguid is not held.
    let (msg, c) = classify_both(lines[0]);
    assert!(part(&msg, &c, SRC, &GroupOptions::default()).is_none());
    let (msg, c) = classify_on(
        cx,
        "DEFAULT",
        "time=1715158880|hostname=gw-1|product=Firewall",
    );
    assert!(part(&msg, &c, SRC, &opts).is_none());
}

#[test]
fn checkpoint_noise_control_of_the_syslog_format() {
    let cx = checkpoint_noise();
    let line = "<134>1 2021-02-08T10:19:34.123456Z gw-02bd87 CheckPoint 26203 - [sc4s@2620 action=\"Accept\" loguid=\"{0x4b,0x53}\" product=\"Firewall\" time=\"1612815085\"] x";
    let (msg, c) = classify_on(cx, "DEFAULT", line);
    let p = part(&msg, &c, SRC, &cx.group_options()).expect("a part");
    assert_eq!(p.rule, Rule::CheckpointNoise);
    assert_eq!(p.text, line.as_bytes());
}

#[test]
fn rsa_securid_trace_lines_join_per_host_after_one_second() {
    let settings = crate::classify::Settings {
        listeners: vec!["DELL_RSA_SECUREID".into()],
        ..crate::classify::Settings::default()
    };
    let cx: &'static crate::classify::Classifier = Box::leak(Box::new(
        crate::classify::Classifier::new(Default::default(), &settings).expect("builds"),
    ));
    let lines = [
        "<166>May 15 09:14:25 rsa-am-01 Caused by: org.postgresql.util.PSQLException: out of range",
        "<166>May 15 09:14:25 rsa-am-01     at weblogic.work.ExecuteThread.execute(ExecuteThread.java:420)",
    ];
    let opts = cx.group_options();
    let mut g: Grouper = Grouper::new(GroupLimits::default());
    let mut done = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let (msg, c) = classify_on(cx, "DELL_RSA_SECUREID", l);
        assert_eq!(c.sourcetype, "rsa:securid:trace", "{l}");
        let p = part(&msg, &c, SRC, &opts).expect("a part");
        assert_eq!(p.rule, Rule::RsaTrace);
        g.offer(&p, &(), i as i64, &mut done);
    }
    g.expire(1_000, &mut done);
    assert!(done.is_empty());
    g.expire(1_002, &mut done);
    let joined: Vec<String> = done
        .into_iter()
        .map(|(_, l)| String::from_utf8(l).unwrap())
        .collect();
    assert_eq!(
        joined,
        [
            "<166>May 15 09:14:25 rsa-am-01 Caused by: org.postgresql.util.PSQLException: out of range\nat weblogic.work.ExecuteThread.execute(ExecuteThread.java:420)"
        ]
    );
    let (_, c) = classify_on(cx, "DELL_RSA_SECUREID", &joined[0]);
    assert_eq!(c.sourcetype, "rsa:securid:trace");
    // Other RSA events are not parts.
    let (msg, c) = classify_on(
        cx,
        "DELL_RSA_SECUREID",
        "<166>May 15 09:14:25 rsa-am-01 2024-05-15 09:14:25,246, rsa-am-01, audit.admin.x, INFO,",
    );
    assert_eq!(c.sourcetype, "rsa:securid:admin:syslog");
    assert!(part(&msg, &c, SRC, &opts).is_none());
}
