//! sluice's own counters sent to Splunk the way SC4S sends syslog-ng's statistics, so the
//! SC4S dashboard (`mstats max("spl.sc4syslog.center.received.processed")
//! max("spl.sc4syslog.dst.dropped") max("spl.sc4syslog.dst.queued") WHERE index=_metrics BY
//! sc4s_container`) works unchanged.
//!
//! Every [`INTERVAL`] (SC4S: syslog-ng's `stats(freq(30))`) the counters are written as
//! syslog-ng stats would name them — `center(received)`, `center(queued)`,
//! `dst.http(d_hec_fmt,http,<url>)` — and encoded in the form
//! `SC4S_DEST_SPLUNK_SC4S_METRICS_HEC` chooses, like SC4S's `t_splunk_hec_metric_*`
//! templates:
//!
//! | value | index | sourcetype | shape |
//! |---|---|---|---|
//! | unset, `multi2` (default) | `_metrics` | `sc4s:metrics:v2` | one metric event per counter group: `metric_name:spl.sc4syslog.dst.dropped` with dimensions `module`, `name`, `workernum`, `proto`, `uri`, `dest`, `dest_port`, `scheme` |
//! | `multi` | `_metrics` | `sc4s:metrics` | one metric event per counter group, the instance in the metric name |
//! | `single`, `yes` | `_metrics` | `sc4s:metrics` | one metric event per counter: `metric_name`, `_value` |
//! | `event` | `main` | `sc4s:metrics` | one plain event, a `spl.sc4syslog…=value` line per counter |
//! | `no`, `off` | — | — | nothing is sent (a sluice addition) |
//!
//! Metric events carry `"event":"metric"`, which HEC's event endpoint requires of them. The
//! indexed fields are SC4S's: `sc4s_container` (this host), `sc4s_loghost`
//! (`SC4S_CONTAINER_HOST`) and `sc4s_version`.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

/// How often the counters are sent by default.
pub const INTERVAL: Duration = Duration::from_secs(30);

/// The forms of `SC4S_DEST_SPLUNK_SC4S_METRICS_HEC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsForm {
    MultiV2,
    Multi,
    Single,
    Event,
    Off,
}

impl MetricsForm {
    /// SC4S's values; unset is the default (multi v2).
    pub fn from_sc4s(value: Option<&str>) -> Result<MetricsForm, String> {
        let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(MetricsForm::MultiV2);
        };
        match v.to_ascii_lowercase().as_str() {
            "multi2" | "multi_v2" | "v2" => Ok(MetricsForm::MultiV2),
            "multi" => Ok(MetricsForm::Multi),
            "single" | "yes" => Ok(MetricsForm::Single),
            "event" => Ok(MetricsForm::Event),
            "no" | "off" | "none" => Ok(MetricsForm::Off),
            _ => Err("expected event, single (or yes), multi, multi2, or no".into()),
        }
    }
}

/// One counter, named the way syslog-ng's statistics name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// `center`, `dst` or `src`.
    pub kind: &'static str,
    /// The driver (`http` for HEC); none for `center`.
    pub module: Option<&'static str>,
    /// `received`, or `<name>[#worker],<proto>,<uri>` for a destination.
    pub instance: String,
    /// `processed`, `dropped`, `queued`, `written`.
    pub metric: &'static str,
    pub value: u64,
}

/// What every metric event carries besides its counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// Unix seconds.
    pub time: f64,
    pub host: String,
    /// Indexed fields (`sc4s_container`, `sc4s_loghost`, `sc4s_version`).
    pub fields: Vec<(String, String)>,
}

fn base(meta: &Meta, index: &str, sourcetype: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("time".into(), json!((meta.time * 1000.0).round() / 1000.0));
    m.insert("host".into(), json!(meta.host.to_lowercase()));
    m.insert("source".into(), json!("sc4s"));
    m.insert("sourcetype".into(), json!(sourcetype));
    m.insert("index".into(), json!(index));
    let fields: Map<String, Value> = meta
        .fields
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    m.insert("fields".into(), Value::Object(fields));
    m
}

/// The instance as SC4S's `multi`, `single` and `event` templates flatten it.
fn flat(instance: &str) -> String {
    instance
        .replace('(', "_")
        .replace("/services/collector/event", "")
        .replace('.', "_")
        .replace(',', ".")
        .replace(':', "_")
        .replace("//", "_")
        .replace(['/', '-'], "_")
        .replace('#', "")
}

fn fields_mut(m: &mut Map<String, Value>) -> &mut Map<String, Value> {
    if !matches!(m.get("fields"), Some(Value::Object(_))) {
        m.insert("fields".into(), Value::Object(Map::new()));
    }
    match m.get_mut("fields") {
        Some(Value::Object(f)) => f,
        // Inserted just above.
        _ => unreachable!("fields is an object"),
    }
}

/// `(scheme, host, port)` of an `http(s)://host[:port]/…` URL.
fn url_parts(url: &str) -> Option<(&str, &str, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (h, p.parse().ok()?),
        _ => (authority, if scheme == "https" { 443 } else { 80 }),
    };
    Some((
        scheme,
        host.trim_start_matches('[').trim_end_matches(']'),
        port,
    ))
}

/// SC4S's multi v2 dimensions of a stat, and the metric-name prefix and group key.
fn v2_dims(s: &Stat) -> (Vec<(&'static str, Value)>, String, String) {
    let mut dims: Vec<(&'static str, Value)> = vec![("module", json!(s.module.unwrap_or(s.kind)))];
    if matches!(s.kind, "center" | "global") {
        return (
            dims,
            format!("{}.{}", s.kind, s.instance),
            s.kind.to_string(),
        );
    }
    let parts: Vec<&str> = s.instance.split(',').collect();
    if parts.len() > 1 {
        match parts[0].split_once('#') {
            Some((name, worker)) => {
                dims.push(("name", json!(name)));
                dims.push(("workernum", json!(worker)));
            }
            None => {
                dims.push(("name", json!(parts[0])));
                dims.push(("workernum", json!("agg")));
            }
        }
    } else {
        dims.push(("name", json!(s.instance)));
    }
    if s.kind == "dst" && parts.len() == 3 {
        dims.push(("proto", json!(parts[1])));
        dims.push(("uri", json!(parts[2])));
        if s.module == Some("http")
            && let Some((scheme, host, port)) = url_parts(parts[2])
        {
            dims.push(("dest", json!(host)));
            dims.push(("dest_port", json!(port)));
            dims.push(("scheme", json!(scheme)));
        }
    }
    (
        dims,
        s.kind.to_string(),
        format!("{}.{}", s.kind, s.instance),
    )
}

/// The HEC events (one JSON object each) for `stats` in `form`.
pub fn encode(form: MetricsForm, stats: &[Stat], meta: &Meta) -> Vec<String> {
    match form {
        MetricsForm::Off => Vec::new(),
        MetricsForm::MultiV2 => {
            let mut groups: Vec<(String, Map<String, Value>)> = Vec::new();
            for s in stats {
                let (dims, mn, key) = v2_dims(s);
                let at = match groups.iter().position(|(k, _)| *k == key) {
                    Some(i) => i,
                    None => {
                        let mut m = base(meta, "_metrics", "sc4s:metrics:v2");
                        m.insert("event".into(), json!("metric"));
                        groups.push((key, m));
                        groups.len() - 1
                    }
                };
                let f = fields_mut(&mut groups[at].1);
                for (k, v) in dims {
                    f.insert(k.into(), v);
                }
                f.insert(
                    format!(
                        "metric_name:spl.sc4syslog.{mn}.{}",
                        s.metric.replace('.', "_")
                    ),
                    json!(s.value),
                );
            }
            groups
                .into_iter()
                .map(|(_, m)| Value::Object(m).to_string())
                .collect()
        }
        MetricsForm::Multi => {
            let mut groups: Vec<(String, Map<String, Value>)> = Vec::new();
            for s in stats {
                let inst = flat(&s.instance);
                let key = format!("{}.{inst}", s.kind);
                let at = match groups.iter().position(|(k, _)| *k == key) {
                    Some(i) => i,
                    None => {
                        let mut m = base(meta, "_metrics", "sc4s:metrics");
                        m.insert("event".into(), json!("metric"));
                        groups.push((key.clone(), m));
                        groups.len() - 1
                    }
                };
                fields_mut(&mut groups[at].1).insert(
                    format!(
                        "metric_name:spl.sc4syslog.{key}.{}",
                        s.metric.replace('.', "_")
                    ),
                    json!(s.value),
                );
            }
            groups
                .into_iter()
                .map(|(_, m)| Value::Object(m).to_string())
                .collect()
        }
        MetricsForm::Single => stats
            .iter()
            .map(|s| {
                let mut m = base(meta, "_metrics", "sc4s:metrics");
                m.insert("event".into(), json!("metric"));
                let f = fields_mut(&mut m);
                f.insert(
                    "metric_name".into(),
                    json!(format!(
                        "spl.sc4syslog.{}.{}.{}",
                        s.kind,
                        flat(&s.instance),
                        s.metric.replace('.', "_")
                    )),
                );
                f.insert("_value".into(), json!(s.value));
                Value::Object(m).to_string()
            })
            .collect(),
        MetricsForm::Event => {
            let mut m = base(meta, "main", "sc4s:metrics");
            let mut text = String::new();
            for s in stats {
                text.push_str(&format!(
                    "spl.sc4syslog.{}.{}.{}={}\n",
                    s.kind,
                    flat(&s.instance),
                    s.metric.replace('.', "_"),
                    s.value
                ));
            }
            m.insert("event".into(), json!(text));
            vec![Value::Object(m).to_string()]
        }
    }
}

/// sluice's counters as syslog-ng statistics: everything received, and the HEC destination
/// (events finished, dropped, in flight, delivered).
pub fn stats(registry: &crate::telemetry::state::Registry) -> Vec<Stat> {
    let received = registry.received_total();
    let mut out = vec![
        Stat {
            kind: "center",
            module: None,
            instance: "received".into(),
            metric: "processed",
            value: received,
        },
        Stat {
            kind: "center",
            module: None,
            instance: "queued".into(),
            metric: "processed",
            value: received,
        },
    ];
    let destinations = registry.destinations.load();
    let default = destinations.default_destination();
    let named = default.and_then(|d| Some((d, d.output.as_ref()?.sc4s_instance()?)));
    if let Some((dest, (module, instance))) = named {
        let dest = &dest.events;
        let delivered = dest.delivered_events();
        let dropped = dest.rejected_events() + dest.lost_events();
        for (metric, value) in [
            ("processed", delivered + dropped),
            ("dropped", dropped),
            ("queued", dest.in_flight_events()),
            ("written", delivered),
        ] {
            out.push(Stat {
                kind: "dst",
                module: Some(module),
                instance: instance.clone(),
                metric,
                value,
            });
        }
    }
    out
}

/// Sends the metric events every `interval` through `send` until `stop` is cancelled.
pub fn spawn(
    form: MetricsForm,
    interval: Duration,
    registry: Arc<crate::telemetry::state::Registry>,
    meta: Meta,
    stop: tokio_util::sync::CancellationToken,
    mut send: impl FnMut(Vec<String>) + Send + 'static,
) {
    if form == MetricsForm::Off {
        return;
    }
    tokio::spawn(async move {
        // The first report after one interval, as syslog-ng's stats(freq()).
        let every = interval.max(Duration::from_secs(1));
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            let meta = Meta {
                time: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0.0, |d| d.as_secs_f64()),
                ..meta.clone()
            };
            send(encode(form, &stats(&registry), &meta));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Meta {
        Meta {
            time: 1_764_150_000.25,
            host: "SC4S-1".into(),
            fields: vec![("sc4s_container".into(), "sc4s-1".into())],
        }
    }

    fn sample() -> Vec<Stat> {
        let dst = "d_hec_fmt,http,https://idx1:8088/services/collector/event".to_string();
        vec![
            Stat {
                kind: "center",
                module: None,
                instance: "received".into(),
                metric: "processed",
                value: 1000,
            },
            Stat {
                kind: "dst",
                module: Some("http"),
                instance: dst.clone(),
                metric: "dropped",
                value: 3,
            },
            Stat {
                kind: "dst",
                module: Some("http"),
                instance: dst,
                metric: "queued",
                value: 12,
            },
        ]
    }

    fn parse(lines: &[String]) -> Vec<Value> {
        lines
            .iter()
            .map(|l| {
                assert!(!l.contains('\n'), "one line per event");
                serde_json::from_str(l).unwrap()
            })
            .collect()
    }

    #[test]
    fn multi_v2_is_what_the_sc4s_dashboard_queries() {
        let ev = parse(&encode(MetricsForm::MultiV2, &sample(), &meta()));
        assert_eq!(ev.len(), 2, "center and the destination");
        assert_eq!(ev[0]["index"], "_metrics");
        assert_eq!(ev[0]["sourcetype"], "sc4s:metrics:v2");
        assert_eq!(ev[0]["event"], "metric");
        assert_eq!(ev[0]["host"], "sc4s-1");
        assert_eq!(
            ev[0]["fields"]["metric_name:spl.sc4syslog.center.received.processed"],
            1000
        );
        assert_eq!(ev[0]["fields"]["sc4s_container"], "sc4s-1");
        let f = &ev[1]["fields"];
        assert_eq!(f["metric_name:spl.sc4syslog.dst.dropped"], 3);
        assert_eq!(f["metric_name:spl.sc4syslog.dst.queued"], 12);
        assert_eq!(f["module"], "http");
        assert_eq!(f["name"], "d_hec_fmt");
        assert_eq!(f["workernum"], "agg");
        assert_eq!(f["dest"], "idx1");
        assert_eq!(f["dest_port"], 8088);
        assert_eq!(f["scheme"], "https");
        assert_eq!(ev[1]["time"], 1_764_150_000.25);
    }

    #[test]
    fn the_other_forms_follow_the_sc4s_templates() {
        let multi = parse(&encode(MetricsForm::Multi, &sample(), &meta()));
        assert_eq!(multi.len(), 2);
        assert_eq!(multi[1]["sourcetype"], "sc4s:metrics");
        assert_eq!(
            multi[1]["fields"]["metric_name:spl.sc4syslog.dst.d_hec_fmt.http.https__idx1_8088.dropped"],
            3
        );
        let single = parse(&encode(MetricsForm::Single, &sample(), &meta()));
        assert_eq!(single.len(), 3);
        assert_eq!(
            single[0]["fields"]["metric_name"],
            "spl.sc4syslog.center.received.processed"
        );
        assert_eq!(single[0]["fields"]["_value"], 1000);
        let event = parse(&encode(MetricsForm::Event, &sample(), &meta()));
        assert_eq!(event.len(), 1);
        assert_eq!(event[0]["index"], "main");
        let text = event[0]["event"].as_str().unwrap();
        assert!(
            text.starts_with("spl.sc4syslog.center.received.processed=1000\n"),
            "{text}"
        );
        assert!(encode(MetricsForm::Off, &sample(), &meta()).is_empty());
    }

    #[test]
    fn urls_split_into_dimensions() {
        assert_eq!(
            url_parts("https://idx1:8088/services/collector/event"),
            Some(("https", "idx1", 8088))
        );
        assert_eq!(url_parts("http://idx2/x"), Some(("http", "idx2", 80)));
        assert_eq!(
            url_parts("https://[::1]:8088/"),
            Some(("https", "::1", 8088))
        );
        assert_eq!(url_parts("nonsense"), None);
    }

    #[test]
    fn settings_values() {
        assert_eq!(MetricsForm::from_sc4s(None), Ok(MetricsForm::MultiV2));
        assert_eq!(MetricsForm::from_sc4s(Some("yes")), Ok(MetricsForm::Single));
        assert_eq!(
            MetricsForm::from_sc4s(Some("EVENT")),
            Ok(MetricsForm::Event)
        );
        assert_eq!(MetricsForm::from_sc4s(Some("no")), Ok(MetricsForm::Off));
        assert!(MetricsForm::from_sc4s(Some("maybe")).is_err());
    }
}
