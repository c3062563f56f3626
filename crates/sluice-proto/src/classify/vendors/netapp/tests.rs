use crate::classify::VendorOptions;
use crate::classify::testutil::{
    classifier_on, classify_line, classify_line_on, event_of, event_on,
};

const AUDIT: &str = "<14>May 23 18:47:16 netapp-ontap-cl01-n1: netapp-ontap-cl01-n1: 00000030.00c8f1e2 11e5347f Thu May 23 2024 18:47:16 +00:00 [kern_audit3167] 8004b7000021e73b:4005f7000021e73d :: cluster:ssh :: 0.0.0.0:32879 :: cluster:admin :: qos statistics volume performance show -rows 20 -iter 1 :: Pending";
const EMS: &str = "<13>May 23 19:52:23 [netapp-ontap-cl02-n2:secd.conn.auth.failure:notice]: Vserver (datavserver) could not make a connection over the network to server (ip 2.3.3.3, port 389). Error: Operation timed out (Service: LDAP (Active Directory), Operation: SiteDiscovery)";
const EMS_5424: &str = "<5>1 2024-10-03T07:54:02-06:00 netapp-ontap-n3 program - wafl.scan.done - Completed Volume Footprint Estimator Scan on volume vm_unix002_0d@vserver:27902083bf98-11e9-87fe-00a098b15eb6";

fn new_format() -> VendorOptions {
    VendorOptions {
        netapp_ontap_new_format: true,
        ..VendorOptions::default()
    }
}

#[test]
fn ontap_new_format_on_a_netapp_listener() {
    let cx = classifier_on(&["NETAPP_ONTAP"], new_format());
    let e = event_on(cx, "NETAPP_ONTAP", AUDIT);
    assert_eq!(e["sourcetype"], "netapp:ontap:audit");
    assert_eq!(e["index"], "infraops");
    assert_eq!(e["host"], "netapp-ontap-cl01-n1");
    assert_eq!(e["fields"]["sc4s_vendor"], "netapp");
    assert_eq!(e["fields"]["sc4s_product"], "ontap");
    assert_eq!(e["fields"]["sc4s_class"], "audit");
    // The body's stamp (a year, +00:00) is the event time.
    assert_eq!(e["time"], "1716490036.000");
    let text = e["event"].as_str().unwrap();
    assert!(
        text.starts_with("netapp-ontap-cl01-n1: netapp-ontap-cl01-n1: 00000030"),
        "{text}"
    );
    assert!(text.ends_with("-iter 1 :: Pending"), "{text}");

    let e = event_on(cx, "NETAPP_ONTAP", EMS);
    assert_eq!(e["sourcetype"], "netapp:ontap:ems");
    assert_eq!(e["host"], "netapp-ontap-cl02-n2");
    assert_eq!(e["fields"]["category"], "secd.conn.auth.failure");
    assert_eq!(e["fields"]["severity"], "notice");
    assert_eq!(e["fields"]["sc4s_class"], "ems");
    let text = e["event"].as_str().unwrap();
    assert!(
        text.starts_with("Vserver (datavserver) could not"),
        "{text}"
    );

    // Anything else from the listener: netapp:ontap:ems as it is.
    let c = classify_line_on(cx, "NETAPP_ONTAP", EMS_5424);
    assert_eq!(c.sourcetype, "netapp:ontap:ems");
    assert_eq!(c.app, "app-netsource-netapp_ontap");
    let c = classify_line_on(
        cx,
        "NETAPP_ONTAP",
        "<13>May 23 19:52:23 filer01 kernel: hello",
    );
    assert_eq!(c.sourcetype, "netapp:ontap:ems");
}

#[test]
fn ontap_new_format_needs_the_listener_and_the_setting() {
    // New format, default listener: not recognised.
    let cx = classifier_on(&["NETAPP_ONTAP"], new_format());
    let c = classify_line_on(cx, "DEFAULT", AUDIT);
    assert_eq!(c.sourcetype, "nix:syslog");
    // A NetApp listener without the setting: the old-format rule (any PROGRAM).
    let cx = classifier_on(&["NETAPP_ONTAP"], VendorOptions::default());
    let c = classify_line_on(cx, "NETAPP_ONTAP", AUDIT);
    assert_eq!(c.sourcetype, "ontap:ems");
    let c = classify_line_on(cx, "NETAPP_ONTAP", EMS);
    assert_ne!(c.vendor, "netapp");
}

#[test]
fn ontap_old_format_takes_any_plain_program() {
    let e = event_of(AUDIT);
    assert_eq!(e["sourcetype"], "ontap:ems");
    assert_eq!(e["index"], "infraops");
    assert_eq!(e["host"], "netapp-ontap-cl01-n1");
    assert_eq!(e["fields"]["sc4s_class"], "ems");
    assert_eq!(e["time"], "1716490036.000");
    let e = event_of(&AUDIT.replace("netapp-ontap-cl01-n1", "filer-7"));
    assert_eq!(e["sourcetype"], "ontap:ems");
    assert_eq!(e["host"], "filer-7");
    // A zone offset other than +00:00.
    let e = event_of(&AUDIT.replace("+00:00", "-06:00"));
    assert_eq!(e["time"], "1716511636.000");
    // `-6:00` has the audit line's shape (`\d{1,2}`) but no `%z` reads one hour digit.
    let e = event_of(&AUDIT.replace("+00:00", "-6:00"));
    assert_eq!(e["sourcetype"], "ontap:ems");
    assert_eq!(e["time"], "1716490036.000");
    assert!(e["fields"]["sc4s_error"].is_string());
    // A PROGRAM with other characters, or a MESSAGE that is no audit line: not ONTAP.
    assert_eq!(
        classify_line(&AUDIT.replace("netapp-ontap-cl01-n1:", "netapp/ontap:")).sourcetype,
        "nix:syslog"
    );
    assert_eq!(
        classify_line(&AUDIT.replace("11e5347f", "11e5347g")).sourcetype,
        "nix:syslog"
    );
    assert_eq!(
        classify_line("<13>May 23 19:52:23 host sshd[1]: Accepted publickey").sourcetype,
        "nix:syslog"
    );
}

#[test]
fn ontap_unreadable_stamp_keeps_the_header_time() {
    // The shape holds (`[A-Z][a-z][a-z]`), the month does not exist: sc4s_error.
    let e = event_of(&AUDIT.replace("Thu May 23 2024", "Thu Mqy 23 2024"));
    assert_eq!(e["sourcetype"], "ontap:ems");
    assert_eq!(
        e["fields"]["sc4s_error"],
        "dtparse: Expected: %b %d %Y %H:%M:%S %z; Actual: Mqy 23 2024 18:47:16 +00:00"
    );
    let cx = classifier_on(&["NETAPP_ONTAP"], new_format());
    let e = event_on(
        cx,
        "NETAPP_ONTAP",
        &AUDIT.replace("Thu May 23 2024", "Thu Mqy 23 2024"),
    );
    assert_eq!(e["sourcetype"], "netapp:ontap:audit");
    assert!(e["fields"]["sc4s_error"].is_string());
    // A truncated EMS bracket: still EMS, text untouched.
    let e = event_on(
        cx,
        "NETAPP_ONTAP",
        "<13>May 23 19:52:23 [netapp-ontap-x:secd",
    );
    assert_eq!(e["sourcetype"], "netapp:ontap:ems");
}

#[test]
fn storagegrid() {
    let c = classify_line(
        r#"<190>May 23 22:02:37 sg-admin-01 Audit: 2022-11-23T12:02:51.007373 [AUDT:[MRMD(CSTR):"POST"][MPAT(CSTR):"/api/v3/authorize"][MPQP(CSTR):""][MDNA(CSTR):"8.8.8.8"]]"#,
    );
    assert_eq!(c.sourcetype, "grid:auditlog");
    assert_eq!(c.index, "infraops");
    assert_eq!(c.vendor, "netapp");
    assert_eq!(c.product, "grid");
    let c = classify_line(
        r#"<38>May 23 23:07:44 sg-admin-02 NMS: {"MGAU":{"sourceIp":"4.4.4.4","responseCode":200}}"#,
    );
    assert_eq!(c.sourcetype, "grid:rest:api");
    assert_eq!(c.app, "app-syslog-netapp_grid");
    // Prefixes: `Auditd`, `NMSx` are theirs too.
    assert_eq!(
        classify_line("<38>May 23 23:07:44 sg NMSd: x").sourcetype,
        "grid:rest:api"
    );
}
