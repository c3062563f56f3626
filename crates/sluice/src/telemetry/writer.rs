//! [`PromWriter`]: families written sample by sample at scrape time, encoded through
//! prometheus-client.
//!
//! State that a component already keeps in its own atomics (a HEC client's per-URL health, a
//! destination's completion counts) is easiest to report by walking it and writing samples.
//! This writer takes them the way the hand-rolled writer did (`family`, then `sample`s) and
//! encodes them with the same encoder as the event families, so names, types, label escaping
//! and both exposition formats follow one set of rules. A summary with only `_sum` and
//! `_count` is written as the equivalent histogram (one `+Inf` bucket): OpenMetrics and
//! prometheus-client have no summary without quantiles.

use std::fmt::Display;

use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

use super::LabelStr;

#[derive(Debug)]
struct Sample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

#[derive(Debug)]
struct Family {
    name: String,
    kind: MetricType,
    help: String,
    samples: Vec<Sample>,
}

/// Buffers families until [`encode`](Self::encode).
#[derive(Debug, Default)]
pub struct PromWriter {
    families: Vec<Family>,
    /// The family [`sample`](Self::sample) writes to.
    current: usize,
}

impl PromWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a family, or goes back to the one of that name: several components (each HEC
    /// destination) may write samples of one family, which is encoded once. `kind` is
    /// `counter` (`name` may end in `_total`), `gauge`, `histogram` or `summary`; anything
    /// else is written as `unknown`.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) -> &mut Self {
        let kind = match kind {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" | "summary" => MetricType::Histogram,
            _ => MetricType::Unknown,
        };
        let name = match kind {
            MetricType::Counter => name.strip_suffix("_total").unwrap_or(name),
            _ => name,
        };
        if let Some(i) = self.families.iter().position(|f| f.name == name) {
            self.current = i;
            return self;
        }
        self.current = self.families.len();
        self.families.push(Family {
            name: name.to_owned(),
            kind,
            help: help.trim_end_matches('.').to_owned() + ".",
            samples: Vec::new(),
        });
        self
    }

    /// One sample of the current family; a value that is not a number is skipped.
    pub fn sample(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        value: impl Display,
    ) -> &mut Self {
        let value = match value.to_string().as_str() {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => match v.parse() {
                Ok(v) => v,
                Err(_) => return self,
            },
        };
        if let Some(f) = self.families.get_mut(self.current) {
            f.samples.push(Sample {
                name: name.to_owned(),
                labels: labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                value,
            });
        }
        self
    }

    /// Writes every family.
    pub fn encode(&self, enc: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in &self.families {
            let mut m = enc.encode_descriptor(&f.name, &f.help, None, f.kind)?;
            if matches!(f.kind, MetricType::Histogram) {
                for (labels, h) in histograms(f) {
                    let labels: Vec<(&str, LabelStr<'_>)> = labels
                        .iter()
                        .map(|(k, v)| (k.as_str(), LabelStr(v)))
                        .collect();
                    // An empty label set would be written as `{}`.
                    if labels.is_empty() {
                        m.encode_histogram::<NoLabelSet>(h.sum, h.count, &h.buckets, None)?;
                    } else {
                        m.encode_family(&labels)?
                            .encode_histogram::<NoLabelSet>(h.sum, h.count, &h.buckets, None)?;
                    }
                }
                continue;
            }
            for s in &f.samples {
                let labels: Vec<(&str, LabelStr<'_>)> = s
                    .labels
                    .iter()
                    .map(|(k, v)| (k.as_str(), LabelStr(v)))
                    .collect();
                match (f.kind, labels.is_empty()) {
                    (MetricType::Counter, true) => {
                        m.encode_counter::<NoLabelSet, _, f64>(&s.value, None)?
                    }
                    (MetricType::Counter, false) => m
                        .encode_family(&labels)?
                        .encode_counter::<NoLabelSet, _, f64>(&s.value, None)?,
                    (_, true) => m.encode_gauge(&s.value)?,
                    (_, false) => m.encode_family(&labels)?.encode_gauge(&s.value)?,
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default)]
struct Histogram {
    sum: f64,
    count: u64,
    /// Per-bucket (not cumulative) counts, `+Inf` as `f64::MAX`, as the encoder wants them.
    buckets: Vec<(f64, u64)>,
}

/// The samples of a histogram (or summary) family grouped by their labels other than `le`.
fn histograms(f: &Family) -> Vec<(Vec<(String, String)>, Histogram)> {
    // Per label set: the histogram, and its buckets as written (cumulative).
    type Group = (Vec<(String, String)>, Histogram, Vec<(f64, u64)>);
    let mut out: Vec<Group> = Vec::new();
    for s in &f.samples {
        let key: Vec<(String, String)> = s
            .labels
            .iter()
            .filter(|(k, _)| k != "le")
            .cloned()
            .collect();
        let i = match out.iter().position(|(k, _, _)| *k == key) {
            Some(i) => i,
            None => {
                out.push((key, Histogram::default(), Vec::new()));
                out.len() - 1
            }
        };
        let (_, h, cumulative) = &mut out[i];
        let suffix = s.name.strip_prefix(f.name.as_str()).unwrap_or("");
        match suffix {
            "_sum" => h.sum = s.value,
            "_count" => h.count = s.value as u64,
            "_bucket" => {
                let le =
                    s.labels
                        .iter()
                        .find(|(k, _)| k == "le")
                        .and_then(|(_, v)| match v.as_str() {
                            "+Inf" => Some(f64::INFINITY),
                            v => v.parse().ok(),
                        });
                if let Some(le) = le {
                    cumulative.push((le, s.value as u64));
                }
            }
            _ => {}
        }
    }
    out.into_iter()
        .map(|(key, mut h, mut cumulative)| {
            cumulative.sort_by(|a, b| a.0.total_cmp(&b.0));
            cumulative.retain(|(le, _)| le.is_finite());
            let mut below = 0;
            for (le, n) in cumulative {
                h.buckets.push((le, n.saturating_sub(below)));
                below = n;
            }
            h.buckets.push((f64::MAX, h.count.saturating_sub(below)));
            (key, h)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::collector::Collector;

    #[derive(Debug)]
    struct Written(fn(&mut PromWriter));

    impl Collector for Written {
        fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
            let mut w = PromWriter::new();
            (self.0)(&mut w);
            w.encode(&mut enc)
        }
    }

    fn render(f: fn(&mut PromWriter)) -> String {
        let mut r = prometheus_client::registry::Registry::default();
        r.register_collector(Box::new(Written(f)));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &r).unwrap();
        crate::telemetry::expose::to_prometheus_text(&out)
    }

    #[test]
    fn counters_gauges_and_escaping() {
        let text = render(|w| {
            w.family("sluice_x_total", "counter", "X.").sample(
                "sluice_x_total",
                &[("url", "http://a\"b")],
                3,
            );
            w.family("sluice_up", "gauge", "Up")
                .sample("sluice_up", &[], 1)
                .sample("sluice_up", &[("a", "b")], "not a number");
        });
        assert_eq!(
            text,
            "# HELP sluice_x_total X.\n# TYPE sluice_x_total counter\n\
             sluice_x_total{url=\"http://a\\\"b\"} 3.0\n\
             # HELP sluice_up Up.\n# TYPE sluice_up gauge\nsluice_up 1.0\n"
        );
    }

    #[test]
    fn a_family_started_twice_is_written_once_with_every_sample() {
        let text = render(|w| {
            w.family("sluice_f", "gauge", "F.")
                .sample("sluice_f", &[("d", "a")], 1);
            w.family("sluice_g", "gauge", "G.")
                .sample("sluice_g", &[], 2);
            w.family("sluice_f", "gauge", "F.")
                .sample("sluice_f", &[("d", "b")], 3);
        });
        assert_eq!(
            text,
            "# HELP sluice_f F.\n# TYPE sluice_f gauge\n\
             sluice_f{d=\"a\"} 1.0\nsluice_f{d=\"b\"} 3.0\n\
             # HELP sluice_g G.\n# TYPE sluice_g gauge\nsluice_g 2.0\n"
        );
    }

    #[test]
    fn a_summary_of_sum_and_count_becomes_a_one_bucket_histogram() {
        let text = render(|w| {
            w.family("sluice_s_seconds", "summary", "S.")
                .sample("sluice_s_seconds_sum", &[("url", "u1")], 1.5)
                .sample("sluice_s_seconds_count", &[("url", "u1")], 3);
            w.family("sluice_h_seconds", "histogram", "H.")
                .sample("sluice_h_seconds_bucket", &[("le", "0.1")], 1)
                .sample("sluice_h_seconds_bucket", &[("le", "1")], 3)
                .sample("sluice_h_seconds_bucket", &[("le", "+Inf")], 4)
                .sample("sluice_h_seconds_sum", &[], 2.0)
                .sample("sluice_h_seconds_count", &[], 4);
        });
        assert!(
            text.contains("# TYPE sluice_s_seconds histogram\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_s_seconds_sum{url=\"u1\"} 1.5\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_s_seconds_count{url=\"u1\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_s_seconds_bucket{le=\"+Inf\",url=\"u1\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_h_seconds_bucket{le=\"0.1\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_h_seconds_bucket{le=\"1.0\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("sluice_h_seconds_bucket{le=\"+Inf\"} 4\n"),
            "{text}"
        );
    }
}
