use crate::classify::testutil::{classify_line, event_of};

fn cef(program: &str, class: &str) -> String {
    format!(
        "<111> May 27 02:00:47 cognito-brain01 {program} -: CEF:0|Vectra Networks|X Series|5.8|{class}|Some Name|3|externalId=1 cat=X dvc=10.0.0.1 start= end="
    )
}

#[test]
fn cef_classes() {
    for (program, class, sourcetype) in [
        (
            "vectra_cef_account_detection",
            "$d_type",
            "vectra:cognito:accountdetect",
        ),
        ("vectra_cef", "asc", "vectra:cognito:accountscoring"),
        ("vectra_cef_audit", "audit", "vectra:cognito:audit"),
        ("vectra_cef", "campaigns", "vectra:cognito:campaigns"),
        ("vectra_cef", "health", "vectra:cognito:health"),
        ("vectra_cef", "hsc", "vectra:cognito:hostscoring"),
        ("vectra_cef", "lockdown", "vectra:cognito:accountlockdown"),
        ("vectra_cef", "smb_brute_force", "vectra:cognito:detect"),
    ] {
        let e = event_of(&cef(program, class));
        assert_eq!(e["sourcetype"], sourcetype, "{program} {class}");
        assert_eq!(e["index"], "main");
        assert_eq!(e["host"], "cognito-brain01");
        assert_eq!(e["fields"]["sc4s_vendor"], "Vectra Networks");
        assert_eq!(e["fields"]["sc4s_product"], "X Series");
        // PROGRAM is unset: the event is MESSAGE alone.
        let text = e["event"].as_str().unwrap();
        assert!(
            text.starts_with("-: CEF:0|Vectra Networks|X Series|"),
            "{text}"
        );
    }
    let c = classify_line(&cef("vectra_cef_account_detection", "$d_type"));
    assert_eq!(c.class.unwrap(), "accountdetect");
    // A header without a PROGRAM.
    let c = classify_line(
        "<111> May 27 06:21:15 cognito-brain05 CEF:0|Vectra Networks|X Series|$version|health|$type|0|dvc=$headend_addr dvchost=cognito-brain05 deviceFacility=14 outcome=$result msg=$message",
    );
    assert_eq!(c.sourcetype, "vectra:cognito:health");
    // Another product of the vendor is generic CEF.
    let c = classify_line("<111> May 27 06:21:15 h CEF:0|Vectra Networks|Other|1|health|t|0|dvc=1");
    assert_eq!(c.sourcetype, "cef");
}

const JSON_HEAD: &str = "<13>May 27 10:41:43 cognito-json01 vectra_json_v2 -: ";

#[test]
fn json_kinds() {
    for (json, sourcetype, class) in [
        (
            r#"{"version": "$version", "host_ip": "$host_ip", "category": "HOST SCORING", "vectra_timestamp": "$timestamp"}"#,
            "vectra:cognito:hostscoring:json",
            "hostscoring",
        ),
        (
            r#"{"host_ip": "$host_ip", "detection_id": $detection_id, "vectra_timestamp": "$timestamp", "dd_proto": "$dd_proto"}"#,
            "vectra:cognito:hostdetect:json",
            "hostdetect",
        ),
        (
            r#"{"category": "$category ", "success": "$success", "vectra_timestamp": "$UTCTime", "host_name": "$host_name"}"#,
            "vectra:cognito:hostlockdown:json",
            "hostlockdown",
        ),
        (
            r#"{"category": "ACCOUNT SCORING", "account_uid": "$a", "vectra_timestamp": "$timestamp"}"#,
            "vectra:cognito:accountscoring:json",
            "accountscoring",
        ),
        (
            r#"{"detection_id": $detect ion_id, "vectra_timestamp": "$timestamp", "account_uid": "$account_uid"}"#,
            "vectra:cognito:accountdetect:json",
            "accountdetect",
        ),
        (
            r#"{"account_id": $account_id, "success": $success, "vectra_timestamp": "$UTCTime", "account_uid": "$account_name"}"#,
            "vectra:cognito:accountlockdown:json",
            "accountlockdown",
        ),
        (
            r#"{"campaign_id": "$campaign_id", "vectra_timestamp": "$vectra_timestamp"}"#,
            "vectra:cognito:campaigns:json",
            "campaigns",
        ),
        (
            r#"{"role": "$role", "vectra_timestamp": "$vectra_timestamp"}"#,
            "vectra:cognito:audit:json",
            "audit",
        ),
        (
            r#"{"vectra_timestamp": "$vectra_timestamp", "type": "$type"}"#,
            "vectra:cognito:health:json",
            "health",
        ),
        (
            r#"{"vectra_timestamp": "$vectra_timestamp", "other": 1}"#,
            "vectra:cognito:detect:json",
            "detect",
        ),
    ] {
        let e = event_of(&format!("{JSON_HEAD}{json}"));
        assert_eq!(e["sourcetype"], sourcetype, "{json}");
        assert_eq!(e["fields"]["sc4s_class"], class, "{json}");
        assert_eq!(e["index"], "main");
        assert_eq!(e["host"], "cognito-json01");
        assert_eq!(e["fields"]["sc4s_vendor"], "vectra");
        assert_eq!(e["fields"]["sc4s_product"], "cognito detect");
        // t_msg_only: the JSON without `-: `.
        assert_eq!(e["event"], json);
        // A placeholder stamp cannot be read: the header's time stays.
        assert_eq!(e["time"], "1716806503.000");
        assert!(e["fields"]["sc4s_error"].is_string());
    }
}

#[test]
fn json_stamp_and_filter() {
    let e = event_of(&format!(
        "{JSON_HEAD}{{\"vectra_timestamp\": \"1716800000\", \"role\": \"admin\"}}"
    ));
    assert_eq!(e["time"], "1716800000.000");
    assert!(e["fields"]["sc4s_error"].is_null());
    // Without `"vectra_timestamp": "..."` the application fails: not Vectra.
    let c = classify_line(&format!("{JSON_HEAD}{{\"role\": \"admin\"}}"));
    assert_eq!(c.sourcetype, "nix:syslog");
    let c = classify_line(&format!("{JSON_HEAD}{{\"vectra_timestamp\": \"\"}}"));
    assert_eq!(c.sourcetype, "nix:syslog");
    // No `-: ` before the JSON: the text as it is.
    let e = event_of(
        "<13>May 27 10:41:43 cognito-json01 vectra_json_v2: {\"vectra_timestamp\": \"x\", \"role\": 1}",
    );
    assert_eq!(e["sourcetype"], "vectra:cognito:audit:json");
    assert_eq!(e["event"], "{\"vectra_timestamp\": \"x\", \"role\": 1}");
}
