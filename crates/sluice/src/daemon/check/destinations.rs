//! The additional destinations, the alternates and the archive in `run --check`.

use super::{Check, Out, mask_secret, mask_url_password, secs};
use crate::config::{Config, DestKind, DestMode};

/// Every destination beyond the default one with its effective settings, and which events
/// go where.
pub(super) fn destinations(c: &Check<'_>, out: &mut Out) {
    let config = c.config();
    let plan = config.destination_plan();
    if plan.len() == 1 && config.routing.default_global {
        return;
    }
    out.line("");
    out.line(format!(
        "Destinations: {} (default {})  <- {}",
        plan.len(),
        if config.routing.default_global {
            "GLOBAL: every event"
        } else {
            "SELECT: only events routed to it"
        },
        c.from("routing.default_global")
    ));
    for d in plan.iter().skip(1) {
        match &d.kind {
            DestKind::Hec { hec, buffer } => {
                let key = &d.name;
                let what = match d.mode {
                    DestMode::Global => "every event",
                    DestMode::Select => "only events routed to it",
                };
                out.line(format!(
                    "  {} ({}): Splunk HEC, {} {what}, token {}  <- {}",
                    d.name,
                    d.sc4s_name(),
                    d.mode.label(),
                    if hec.token.trim().is_empty() {
                        "MISSING".to_owned()
                    } else {
                        mask_secret(&hec.token)
                    },
                    c.from(&format!("destinations.{key}.mode"))
                ));
                match hec.client_config_for(d.id.var(), &format!("{}.hec", d.table)) {
                    Ok(hc) => {
                        for u in &hc.urls {
                            out.line(format!(
                                "    {}  <- {}",
                                mask_url_password(u),
                                c.from(&format!("destinations.{key}.hec.urls"))
                            ));
                        }
                    }
                    Err(e) => out.error(e.to_string()),
                }
                if hec.token.trim().is_empty() {
                    out.error(format!(
                        "destination {}: SC4S_DEST_SPLUNK_HEC_{}_TOKEN is not set: HEC will refuse \
                         every request",
                        d.name, d.id
                    ));
                }
                out.line(format!(
                    "    {} workers, batches of {} events or {} bytes or {} ms, timeout {}, \
                     compression {}, verify certificates {}",
                    hec.workers,
                    hec.batch_lines,
                    hec.batch_bytes.0,
                    hec.batch_timeout.as_millis(),
                    secs(hec.timeout),
                    if hec.compression { "on" } else { "off" },
                    if hec.tls_verify { "yes" } else { "NO" }
                ));
                if let Some(fb) = &hec.fallback_index {
                    out.line(format!(
                        "    an event refused for its index goes once to the fallback index {fb}, \
                         its own in sc4s_original_index  <- {}",
                        c.from(&format!("destinations.{key}.hec.fallback_index"))
                    ));
                }
                if buffer.enable {
                    let size = buffer.effective_size_for(d.id.var(), hec.workers);
                    out.line(format!(
                        "    disk buffer: {} in {}, up to {} bytes in all: {}  <- {}",
                        if buffer.reliable {
                            "reliable"
                        } else {
                            "normal"
                        },
                        buffer.dir.display(),
                        size.bytes,
                        size.how,
                        c.from(&format!("destinations.{key}.buffer.dir"))
                    ));
                } else {
                    out.line(format!(
                        "    disk buffer: off  <- {}",
                        c.from(&format!("destinations.{key}.buffer.enable"))
                    ));
                }
            }
            DestKind::Relay(r) => {
                let key = &d.name;
                out.line(format!(
                    "  {} ({}): {} relay to {}:{} over {}{}, {}  <- {}",
                    d.name,
                    d.sc4s_name(),
                    match r.kind {
                        crate::config::RelayKind::Syslog => "RFC 5424",
                        crate::config::RelayKind::Bsd => "BSD (RFC 3164)",
                    },
                    r.host,
                    r.port(),
                    r.transport.label(),
                    if r.framed() {
                        ", octet-counted frames"
                    } else {
                        ""
                    },
                    d.mode.label(),
                    c.from(&format!("relays.{key}.host"))
                ));
                if r.filter == crate::config::RelayFilter::NonEmptyMessage {
                    out.line("    events with an empty MESSAGE are not sent (filter)");
                }
                if r.buffer.enable {
                    let vars = crate::config::RelayDestination::var_prefix(r.kind, d.id.var());
                    let size = r.buffer.effective_size_vars(&vars, 1);
                    out.line(format!(
                        "    disk buffer: {} in {}, up to {} bytes: {}  <- {}",
                        if r.buffer.reliable {
                            "reliable"
                        } else {
                            "normal"
                        },
                        r.buffer.dir.display(),
                        size.bytes,
                        size.how,
                        c.from(&format!("relays.{key}.buffer.dir"))
                    ));
                } else {
                    out.line("    disk buffer: off");
                }
            }
            DestKind::Kafka(k) => {
                let key = d.id.var().to_ascii_lowercase();
                out.line(format!(
                    "  {} ({}): Kafka {} topic {} key {} value {}, acks={}{}, {}  <- {}",
                    d.name,
                    d.sc4s_name(),
                    k.brokers,
                    k.topic,
                    if k.key.is_empty() { "(none)" } else { &k.key },
                    k.value,
                    k.acks.librdkafka(),
                    if k.idempotence { " idempotent" } else { "" },
                    d.mode.label(),
                    c.from(&format!("kafka.{key}.brokers"))
                ));
                if let Err(e) = k.validate(&d.name, d.id.var()) {
                    out.error(e.to_string());
                }
                if k.buffer.enable {
                    let vars = crate::config::KafkaDestination::var_prefix(d.id.var());
                    let size = k.buffer.effective_size_vars(&vars, 1);
                    out.line(format!(
                        "    disk buffer: {} in {}, up to {} bytes: {}",
                        if k.buffer.reliable {
                            "reliable"
                        } else {
                            "normal"
                        },
                        k.buffer.dir.display(),
                        size.bytes,
                        size.how
                    ));
                } else {
                    out.line("    disk buffer: off");
                }
            }
            DestKind::Archive { dir, mode } => {
                out.line(format!(
                    "  archive (d_archive): {} layout in {}  <- {}; {}",
                    format!("{mode:?}").to_lowercase(),
                    dir.display(),
                    c.from("archive.mode"),
                    c.from("archive.dir")
                ));
                let what = if config.archive.global {
                    "every event".to_owned()
                } else {
                    config.archive.vendor_products.join(", ")
                };
                out.line(format!(
                    "    archives: {what}  <- {}",
                    if config.archive.global {
                        c.from("archive.global")
                    } else {
                        c.from("archive.vendor_products")
                    }
                ));
            }
            DestKind::File(_) => {}
        }
    }
    routing(c, config, out);
}

fn routing(c: &Check<'_>, config: &Config, out: &mut Out) {
    let r = &config.routing;
    for (vp, names) in &r.alternates {
        out.line(format!(
            "  {vp} also to {}  <- {}",
            names.join(", "),
            c.from(&format!("routing.alternates.{vp}"))
        ));
    }
    for (vp, names) in &r.filtered_alternates {
        let filters = r
            .alt_filter
            .get(vp)
            .map_or_else(|| "f_is_nevermatch".to_owned(), |f| f.join(", "));
        out.line(format!(
            "  {vp} matching {filters}: only to {}  <- {}",
            names.join(", "),
            c.from(&format!("routing.filtered_alternates.{vp}"))
        ));
    }
    if let Err(e) = crate::routing::Routing::build(config, &config.destination_plan()) {
        out.error(e.to_string());
    }
}
