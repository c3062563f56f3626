//! SC4S's own example application (`conflib/syslog/app-syslog-example.conf`), part of every
//! SC4S: PROGRAM `sc4splugin` gets vendor `local`, product `example` (so that
//! `splunk_metadata.csv` rows keyed `local_example` apply, as SC4S's example context file
//! shows). Always active, like SC4S's other built-in applications.

use crate::classify::registry::{App, Input, Key, Out, Topic, Vendor, When};

pub(crate) static BUILTIN: Vendor = Vendor {
    name: "sc4s_example",
    keys: KEYS,
    apps: &[App {
        name: "app-syslog-example",
        topic: Topic::Syslog,
        order: "syslog/app-syslog-example.conf",
        when: When::Program(&["sc4splugin"]),
        parse: example,
    }],
};

static KEYS: &[Key] = &[Key::new("local", "example", "sc4s:local_example", "main")];

fn example<'m>(input: &Input<'m, '_>, out: &mut Out<'m>) -> bool {
    if input.program != Some(b"sc4splugin") {
        return false;
    }
    out.key(&KEYS[0]);
    true
}

#[cfg(test)]
mod tests {
    use crate::classify::Classifier;
    use crate::classify::testutil::classify_line;

    #[test]
    fn example_and_its_metadata_row() {
        let line = "<111> May 14 15:52:33 app-srv03 sc4splugin: This test is for splunkmeta";
        let c = classify_line(line);
        assert_eq!(c.sourcetype, "sc4s:local_example");
        assert_eq!(c.index, "main");
        assert_eq!(c.vendor, "local");
        let cx = Box::leak(Box::new(
            Classifier::from_metadata_csv("splunk_metadata.csv", "local_example,index,infraops\n")
                .unwrap(),
        ));
        let c = crate::classify::testutil::classify_line_with(cx, line);
        assert_eq!(c.index, "infraops");
    }
}
