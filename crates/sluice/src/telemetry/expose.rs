//! The exposition formats of `/metrics`.
//!
//! prometheus-client writes OpenMetrics 1.0. The classic Prometheus text format 0.0.4 differs
//! in what matters to its parsers: a counter family is named with its `_total` suffix in
//! `# HELP`/`# TYPE` (OpenMetrics names the family without it), and there is no `# EOF` or
//! `# UNIT`. [`to_prometheus_text`] rewrites exactly that, which is what the official client
//! libraries do when a scraper does not ask for OpenMetrics.

/// Content type of [`to_prometheus_text`]'s output.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Content type of prometheus-client's output.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether an `Accept` header asks for OpenMetrics (Prometheus sends it first in its list).
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|part| {
            part.trim_start()
                .starts_with("application/openmetrics-text")
        })
    })
}

/// OpenMetrics text (as prometheus-client writes it) to the text format 0.0.4.
pub fn to_prometheus_text(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    // `# HELP` comes before its `# TYPE`, which says whether the name needs `_total`.
    let mut help: Option<&str> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            if let Some(h) = help.take() {
                push_help(&mut out, h, "");
            }
            help = Some(rest);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "untyped"));
            let suffix = if kind == "counter" && !name.ends_with("_total") {
                "_total"
            } else {
                ""
            };
            if let Some(h) = help.take() {
                push_help(&mut out, h, suffix);
            }
            let kind = match kind {
                "counter" | "gauge" | "histogram" | "summary" => kind,
                // info and stateset samples are gauges in 0.0.4; unknown is untyped.
                "info" | "stateset" => "gauge",
                _ => "untyped",
            };
            out.push_str("# TYPE ");
            out.push_str(name);
            out.push_str(suffix);
            out.push(' ');
            out.push_str(kind);
            out.push('\n');
            continue;
        }
        if let Some(h) = help.take() {
            push_help(&mut out, h, "");
        }
        if line == "# EOF" || line.starts_with("# UNIT ") || line.is_empty() {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if let Some(h) = help.take() {
        push_help(&mut out, h, "");
    }
    out
}

/// The same OpenMetrics text with the series of each family in a fixed order: by label set
/// (label values compared as written), the lines of one label set (a histogram's buckets,
/// sum and count) as they came. prometheus-client keeps a family's series in a hash map, so
/// its order changes from run to run; families stay in registration order.
pub fn sorted(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    let mut series: Vec<(String, &str)> = Vec::new();
    let flush = |out: &mut String, series: &mut Vec<(String, &str)>| {
        // Stable: a histogram's lines keep their order within a label set.
        series.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, line) in series.drain(..) {
            out.push_str(line);
            out.push('\n');
        }
    };
    for line in openmetrics.lines() {
        if line.starts_with('#') {
            flush(&mut out, &mut series);
            out.push_str(line);
            out.push('\n');
        } else {
            series.push((series_key(line), line));
        }
    }
    flush(&mut out, &mut series);
    out
}

/// A sample line's labels without `le` (a histogram bucket's bound).
fn series_key(line: &str) -> String {
    let Some((_, rest)) = line.split_once('{') else {
        return String::new();
    };
    let labels = rest.rsplit_once('}').map_or(rest, |(l, _)| l);
    let mut key = String::with_capacity(labels.len());
    let mut in_quotes = false;
    let mut escaped = false;
    let mut start = 0;
    // Split at the commas between labels (not those inside quoted values).
    let mut parts = Vec::new();
    for (i, c) in labels.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            ',' if !in_quotes => {
                parts.push(&labels[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&labels[start..]);
    for p in parts.into_iter().filter(|p| !p.starts_with("le=")) {
        key.push_str(p);
        key.push(',');
    }
    key
}

fn push_help(out: &mut String, help: &str, suffix: &str) {
    let (name, text) = help.split_once(' ').unwrap_or((help, ""));
    out.push_str("# HELP ");
    out.push_str(name);
    out.push_str(suffix);
    out.push(' ');
    out.push_str(text);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_get_their_total_suffix_and_eof_goes() {
        let om = "# HELP sluice_received Messages.\n# TYPE sluice_received counter\n\
                  sluice_received_total{port=\"514\"} 3\n\
                  # HELP sluice_window_events Events.\n# TYPE sluice_window_events gauge\n\
                  sluice_window_events{window=\"udp\"} 2\n\
                  # HELP h_seconds Latency.\n# TYPE h_seconds histogram\nh_seconds_sum 0.5\n\
                  h_seconds_count 1\nh_seconds_bucket{le=\"+Inf\"} 1\n\
                  # HELP b Build.\n# TYPE b info\nb_info{v=\"1\"} 1\n# EOF\n";
        assert_eq!(
            to_prometheus_text(om),
            "# HELP sluice_received_total Messages.\n# TYPE sluice_received_total counter\n\
             sluice_received_total{port=\"514\"} 3\n\
             # HELP sluice_window_events Events.\n# TYPE sluice_window_events gauge\n\
             sluice_window_events{window=\"udp\"} 2\n\
             # HELP h_seconds Latency.\n# TYPE h_seconds histogram\nh_seconds_sum 0.5\n\
             h_seconds_count 1\nh_seconds_bucket{le=\"+Inf\"} 1\n\
             # HELP b Build.\n# TYPE b gauge\nb_info{v=\"1\"} 1\n"
        );
    }

    #[test]
    fn series_are_sorted_by_label_set_and_buckets_keep_their_order() {
        let om = "# HELP a A.\n# TYPE a counter\na_total{k=\"b\"} 1\na_total{k=\"a,\\\"z\"} 2\n\
                  # HELP h H.\n# TYPE h histogram\n\
                  h_sum{d=\"y\"} 1\nh_count{d=\"y\"} 1\nh_bucket{d=\"y\",le=\"1.0\"} 1\n\
                  h_bucket{d=\"y\",le=\"+Inf\"} 1\n\
                  h_sum{d=\"x\"} 0\nh_count{d=\"x\"} 0\nh_bucket{d=\"x\",le=\"1.0\"} 0\n\
                  h_bucket{d=\"x\",le=\"+Inf\"} 0\n# EOF\n";
        assert_eq!(
            sorted(om),
            "# HELP a A.\n# TYPE a counter\na_total{k=\"a,\\\"z\"} 2\na_total{k=\"b\"} 1\n\
             # HELP h H.\n# TYPE h histogram\n\
             h_sum{d=\"x\"} 0\nh_count{d=\"x\"} 0\nh_bucket{d=\"x\",le=\"1.0\"} 0\n\
             h_bucket{d=\"x\",le=\"+Inf\"} 0\n\
             h_sum{d=\"y\"} 1\nh_count{d=\"y\"} 1\nh_bucket{d=\"y\",le=\"1.0\"} 1\n\
             h_bucket{d=\"y\",le=\"+Inf\"} 1\n# EOF\n"
        );
        assert_eq!(sorted(&sorted(om)), sorted(om));
    }

    #[test]
    fn openmetrics_is_served_only_to_who_asks() {
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
             version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
        )));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(Some("text/plain")));
        assert!(!wants_openmetrics(None));
    }
}
