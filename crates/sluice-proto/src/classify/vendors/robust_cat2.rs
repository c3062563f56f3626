//! Truncation and mutation sweep over samples of the families `a10networks` .. `mikrotik`
//! (issue 27, cat2): every prefix, and every single-byte substitution with a delimiter,
//! must classify and encode without panicking. A cheap stand-in for fuzzing that runs in
//! `cargo test`.

use crate::classify::testutil::{classify_line_bytes, event_text};

const SAMPLES: &[&str] = &[
    "<6> CEF:0|A10|vThunder|4.1|WAF|session-id|2|rt=May 06 2024 08:11:05 src=1.1.1.1 msg=x\\=1",
    "<6> May 06 09:16:12 a10 a10logd: [audit log]<6> Partition: shared",
    "<166>May 06 11:26:26 r AlsidForAD[4]: \"0\" \"1\" \"AccountCn\"=\"X\"",
    "<166>May 07 04:48:18 asm AasSipMgr[4603]: -04:00 2021 348 1 com.avaya.asm",
    "<46>2024-05-07 05:53:25,246 avi Avi-Controller - - - INFO [a: reason: b] c",
    "<46>May 07 05:53:25 avi Avi-Controller - ID [x@1 a=\"b\"] text",
    "<46> May 07 05:53:25 h [2024-05-07 05:53:25,246: Avi-Controller: INFO: ] [a] b",
    "<134>1 2024-05-07T09:08:46.246813+00:00 se aer01-abc 0 7 - \"adf\":1",
    "<13> 2024-05-07T10:13:53.246813+00:00 avx /usr/local/bin/avx-gw-state-sync[1]: x",
    "<13>May 07 10:13:53 avx kernel: [1.2] AvxRl gw1 D:IN=eth0",
    "<166>May 08 04:40:52 sra BG[123]: 1427:01:02:event=logout;who=a b;q='x;y' ;z=\"1\\\"2\"",
    "<134>1 2024-05-14T20:13:01.246Z cy CylancePROTECT - - - Event Type: Threat, Event Name: x",
    r#"<85>1 2024-05-15T20:05:35.246Z e Epic 7652 - [origin software="S"] <?xml version="1.0"?><E a='1'><![CDATA[x]]>&amp;&#233;<M N="A"><V>1</V></M></E>"#,
    "<111>fenotify-1.warning: CEF:0|FireEye|CMS|9|MC|m|7|dvchost=fe rt=May 20 19:09:34 UTC",
    r#"<164>fenotify-7.warning: {"product":"HX","alert":{"host":{"hostname":"h"},"event_at":"2021-02-25T06:02:28.113+00:00","event_values":{"processEvent/timestamp":"2024-05-20T22:24:55.318+00:00"}}}"#,
    "<134>May 21 01:40:16 fp vendor=Forcepoint product=Web reason=- a='b c' d=-e",
    "<14>2024-05-21T04:55Z gc CEF:0|Guardicore|Centra|51|N|N|None|act=Allowed",
    "<166>May 21 08:10:58 dp [APIGWTEBN][0x88c00002][apigw][error] source-https(x): y",
    "<132>2022-01-17T13:15:08+00:00  %LIVEACTION: Device=lnx Class=Queue0",
];

#[test]
fn prefixes_and_mutations_do_not_panic() {
    for s in SAMPLES {
        let b = s.as_bytes();
        for end in 0..=b.len() {
            classify_line_bytes(&b[..end]);
        }
        for i in 0..b.len() {
            for sub in [b' ', b'|', b'=', b'"', b'<', b'>', b';', b':', b'{', 0xff] {
                let mut m = b.to_vec();
                m[i] = sub;
                classify_line_bytes(&m);
            }
        }
        // The event of every prefix is valid JSON (`event_text` parses it).
        if s.is_char_boundary(s.len()) {
            for (end, _) in s.char_indices() {
                event_text(&s[..end]);
            }
        }
    }
}
