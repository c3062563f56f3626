//! Semperis Directory Services Protector (SC4S `addons/semperis/app-syslog-semperis_dsp.conf`):
//! PROGRAM `Semperis.DSP*` (any case) with a `[`; the `[Key] value` pairs after the first
//! `[` (syslog-ng `kv-parser` with `]` and `[` as separators) rendered as `t_kv_values`.

use crate::classify::registry::{App, Input, Key, Out, Topic, Values, ValuesSyntax, Vendor, When};
use crate::classify::template::Template;
use crate::classify::vendors::util::dot_star_end;

pub static VENDOR: Vendor = Vendor {
    name: "semperis",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-semperis_dsp",
        topic: Topic::Pgm,
        order: "semperis/app-syslog-semperis_dsp.conf",
        when: When::Check(filter),
        parse: dsp,
    }],
};

static KEYS: &[Key] =
    &[Key::new("semperis", "dsp", "semperis:dsp", "netops").template(Template::KvValues)];

/// `program('Semperis.DSP' type(string) flags(ignore-case, prefix))`.
fn filter<'m>(input: &Input<'m, '_>, _: &Out<'m>) -> bool {
    input
        .program
        .and_then(|p| p.get(..12))
        .is_some_and(|p| p.eq_ignore_ascii_case(b"Semperis.DSP"))
}

fn dsp<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if !filter(input, out) {
        return false;
    }
    // `\[(?<message>.*)`: required (the application fails without a `[`).
    let body = input.body;
    let Some(open) = memchr::memchr(b'[', body) else {
        return false;
    };
    let text = &body[open + 1..dot_star_end(body, open + 1)];
    out.key(&KEYS[0]);
    out.values = Some(Values {
        text,
        syntax: ValuesSyntax::Scanner {
            value: b']',
            pair: b'[',
        },
    });
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::testutil::{classify_line, event_of};

    #[test]
    fn dsp() {
        let e = event_of(
            "<110> May 25 13:06:49 dsp-mgmt01 Semperis.DSP [AdChanges@51802] [ForestId] 1111 [ChangeId] 1111 [PartitionNamingContext] DC=corpcert,DC=heb,DC=com [DistinguishedName] CN=krbtgt,CN=Users,DC=corpcert,DC=heb,DC=com [ClassName] user [LinkedValueDN]  [OriginatingServer] dsp-mgmt01 [OriginatingUsers]  [StringValueTo] 327680  ",
        );
        assert_eq!(e["sourcetype"], "semperis:dsp");
        assert_eq!(e["index"], "netops");
        assert_eq!(e["host"], "dsp-mgmt01");
        assert_eq!(e["fields"]["sc4s_vendor"], "semperis");
        assert_eq!(e["fields"]["sc4s_product"], "dsp");
        assert_eq!(
            e["event"],
            "51802= ChangeId=1111 ClassName=user DistinguishedName=CN=krbtgt,CN=Users,DC=corpcert,DC=heb,DC=com ForestId=1111 LinkedValueDN= OriginatingServer=dsp-mgmt01 OriginatingUsers= PartitionNamingContext=DC=corpcert,DC=heb,DC=com StringValueTo=327680"
        );
        // A value with spaces is quoted; the PROGRAM matches in any case.
        let e =
            event_of("<110>May 25 13:06:49 d semperis.dsp.agent: x [User] John Smith [Op] Modify");
        assert_eq!(e["sourcetype"], "semperis:dsp");
        assert_eq!(e["event"], "Op=Modify User=\"John Smith\"");
        // Without a `[`: not theirs.
        let c = classify_line("<110>May 25 13:06:49 d Semperis.DSP: started");
        assert_eq!(c.sourcetype, "nix:syslog");
        // Pairs that do not scan: no values, and the encoder's rule for an empty event text
        // (SC4S's fallback rendering) applies.
        let e = event_of("<110>May 25 13:06:49 d Semperis.DSP: [ ] ] [");
        assert_eq!(e["sourcetype"], "semperis:dsp");
        assert!(e["event"].as_str().unwrap().contains("MESSAGE=[ ] ] ["));
    }
}
