//! The `RFC6587_NOPARSE` listeners (`SC4S_LISTEN_<ID>_RFC6587_NOPARSE_PORT`): SC4S's channel
//! for senders whose RFC 6587 framing is right but whose header is not (Thales STA writes a
//! BOM where structured data belongs and a multi-line JSON body). syslog-ng's `syslog()`
//! source cuts the octet-counted frames and, with `flags(no-parse)`, parses nothing: the
//! frame is MESSAGE, HOST is the sender's address, the time is the receive time. The message
//! then goes straight to the `sc4s-network-source` applications of the listener's vendor,
//! which own the header, and to the fallback when none takes it: no almost-syslog, raw or
//! signature applications, no `host.csv`, no `vendor_product_by_source`.

use super::{
    Classification, Classifier, Finish, HeaderView, HostEdit, Out, Rewrite, SourceMeta, TimeEdit,
    Topic, Value, dispatch, fallback,
};
use crate::message::{Format, Message};

/// Classifies a frame received on an `RFC6587_NOPARSE` listener. `msg` is the frame as
/// [`crate::parse::no_parse`] gives it; `src.listener_id` names the listener (its vendor and
/// product pick the network-source applications).
pub fn classify_no_parse<'m, 't: 'm>(
    msg: &Message<'m>,
    src: &SourceMeta<'_>,
    now_unix_secs: i64,
    cx: &'t Classifier,
    scratch: &'m super::local::Scratch,
) -> Classification<'m, 't> {
    let arena = cx.app_parsers.as_ref().map(|_| scratch.bump());
    let mut out = Out {
        host: HostEdit::SourceIp,
        time: TimeEdit::Recv,
        ..Out::default()
    };
    let mut hits = dispatch::TokenHits::default();
    let netsource = cx.listener_netsource(src.listener_id);
    let view = HeaderView {
        program: None,
        pid: None,
        message: Some(msg.raw),
    };
    let input = cx.input(
        msg,
        src,
        view,
        Rewrite::None,
        netsource,
        now_unix_secs,
        &out,
        arena,
    );
    let took = cx.engine.run(Topic::NetSource, &input, &mut out, &mut hits);
    if took {
        out.identified = true;
    }
    let fallback = (!out.identified).then(|| {
        let ns = (
            Value::Bytes(netsource.vendor.as_bytes()),
            Value::Bytes(netsource.product.as_bytes()),
        );
        fallback::choose(Format::Unparsed, None, !msg.raw.is_empty(), ns)
    });
    let compliance = cx.context.compliance(None, src.source_ip, None, msg.raw);
    let mut class = cx.finish(
        &out,
        Finish {
            fallback,
            format: Format::Unparsed,
            view,
            rewrite: Rewrite::None,
            program: None,
            host: out.host,
            time: out.time,
            compliance,
        },
    );
    if let (Some(p), Some(arena)) = (&cx.app_parsers, arena) {
        cx.after_local(p, msg, src, now_unix_secs, &mut class, arena);
    }
    class
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use super::*;
    use crate::classify::{Settings, Transport};
    use crate::parse::no_parse;

    fn classifier() -> Classifier {
        let settings = Settings {
            listeners: vec!["THALES_STA".into()],
            ..Settings::default()
        };
        Classifier::new(Default::default(), &settings).expect("builds")
    }

    fn src(listener_id: &str) -> SourceMeta<'_> {
        SourceMeta {
            transport: Transport::Tcp,
            dest_port: 9003,
            source_ip: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 10)),
            listener_id,
        }
    }

    const STA: &str = "<14>1 2024-05-26T14:04:30.318529+00:00 sta-tenant-eu1 - - RemoteLogging \u{feff}{\n  \"category\": \"AUDIT\"\n}";

    #[test]
    fn the_network_source_application_reads_the_header() {
        let cx = classifier();
        let msg = no_parse(STA.as_bytes());
        let c = classify_no_parse(
            &msg,
            &src("THALES_STA"),
            0,
            &cx,
            crate::classify::testutil::scratch(),
        );
        assert_eq!(c.sourcetype, "thales:sta:json");
        assert_eq!(c.index, "netauth");
        assert_eq!(
            c.host,
            HostEdit::Set(crate::classify::Value::Bytes(b"sta-tenant-eu1"))
        );
        assert!(matches!(c.time, TimeEdit::Stamp(_)));
        assert_eq!(c.format, Format::Unparsed);
    }

    #[test]
    fn nothing_else_runs_and_the_fallback_keeps_it() {
        let cx = classifier();
        // A Check Point line would be taken by its raw application on any other listener.
        let line = b"time=1715158880|hostname=cpgw-1|product=Firewall|loguid=x";
        let msg = no_parse(line);
        let c = classify_no_parse(
            &msg,
            &src("THALES_STA"),
            0,
            &cx,
            crate::classify::testutil::scratch(),
        );
        assert_eq!(c.sourcetype, "sc4s:fallback");
        assert_eq!(c.host, HostEdit::SourceIp);
        assert_eq!(c.time, TimeEdit::Recv);
        let c = classify_no_parse(
            &no_parse(b""),
            &src("DEFAULT"),
            0,
            &cx,
            crate::classify::testutil::scratch(),
        );
        assert_eq!(c.sourcetype, "sc4s:fallback");
    }
}
