//! Truncation and mutation sweep over samples of the vendor families in `alcatel` ..
//! `zscaler` (this helper's set): every prefix, and every single-byte substitution with a
//! delimiter, must classify without panicking. A cheap stand-in for fuzzing that runs in
//! `cargo test`.

use crate::classify::testutil::classify_line_bytes;

const SAMPLES: &[&str] = &[
    "<166>Mar 11 18:43:38 sw1 swlogd: bcmd esm info(5) x",
    "<166> 2024-03-11T20:53:52Z leaf1 Acl: %ACL-6-IPACCESS: list acl-internet",
    "<187>Mar 12 00:09:13 2024 md1 authmgr[4130]: <124198> <4130> <ERRS> <md1 10.10.10.10> x",
    "<134>2024-03-13 19:33:53.511 +0000  waf1 SYS ADMIN_M ALER 51001 Account locked",
    "time=1710444387|hostname=gw5|product=Syslog|default_device_message=<134>ctasd[5665]: Save |",
    "time=1710409224|hostname=gw2|originsicname=CN\\=a-v_b,O\\=x|product=QoS|fw_subproduct=VPN|",
    r#"<134>1 2024-03-15T12:48:19.812409+00:00 gw2 CheckPoint 26203 - [sc4s@2620 time="1710506899" product="Syslog" default_device_message="<1>a[2]: b"]"#,
    "<12> 24/03/2024:05:10:43 GMT adc3 0-PPE-0 : default APPFW APPFW_STARTURL 5687021 0 :  x",
    "<12>Mar 24 00:50:15 svm_service: sdx1  24/03/2024:00:50:15 GMT ns2 0-PPE-0 : GUI x",
    "<13>Mar 24 00:50:15 h1 [123]: aaa: login",
    "<166>Mar 27 09:08:53 slot1/ltm1 notice tmm1[1]: 01260009:4: Connection error: a:5234: not (40)",
    "<166>Mar 28 18:47:30 ltm12,f5_irule=Splunk-iRule-HTTP,src_ip=1.2.3.4",
    r#"<141>1 2024-03-28T17:42:23.124757+00:00 apm11 apmd 7389 01490248:5: [F5@12276 hostname="f"] x"#,
    "<111>Mar 30 10:56:49 lb1 haproxy[42]: client_ip=10.0.0.0 x=1",
    r#"<165>1 2024-04-03T14:47:33.154Z srx1 RT_IDP - IDP_ATTACK_LOG_EVENT [junos@2636.1.1.1.2.135 a="1"] x"#,
    "<23> Apr 03 19:08:01 ssg1 ns204: NetScreen device_id=netscreen2 x",
    "<23> ssg1: NetScreen device_id=netscreen2 x",
    r#"<30> device="SFW" date=2022-04-25 log_type="Firewall" x"#,
    "<27>Apr 12 01:44:22 usw1,18e8294876c3,v4.0.66.10832 switch: DOT1S: x",
    "2024-04-14 15:36:02\tRecordtype=Tunnel\tvendor=Zscaler\tproduct=IKEv2\thost=z",
    "<114>Apr 14 03:39:44 [10.0.0.1] ZscalerNSS: Zscaler cloud",
    r#"{"LogTimestamp": "Sun Apr 14 08:00:13 2024","ClientZEN": "a","AppGroup": "b","Application": "c"}"#,
];

#[test]
fn prefixes_and_mutations_do_not_panic() {
    for s in SAMPLES {
        let b = s.as_bytes();
        for end in 0..=b.len() {
            classify_line_bytes(&b[..end]);
        }
        for i in 0..b.len() {
            for sub in [b' ', b'|', b'=', b'"', b'\t', b'<', 0xff] {
                let mut m = b.to_vec();
                m[i] = sub;
                classify_line_bytes(&m);
            }
        }
    }
}
