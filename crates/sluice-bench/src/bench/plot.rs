//! `--plot out.svg`: loss % against offered events/s, one line per configuration.
//!
//! A hand-written SVG line chart (no plotting dependency): x is the rate the sender actually
//! achieved (on a small shared box it can fall short of the step's rate, and the chart must not
//! claim loads that were never offered), on a logarithmic axis (the rates of a loss table
//! span two orders of magnitude), linear y axis from 0 to a round maximum of at
//! least 1 %, so a line at 0 % sits visibly on the axis. Every point is marked and labelled
//! with its loss; lines differ in colour, dash pattern and marker shape so the chart reads in
//! greyscale too.

use std::fmt::Write as _;

use super::report::ConfigResult;

const W: f64 = 960.0;
const H: f64 = 600.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 40.0;
const TOP: f64 = 80.0;
const BOTTOM: f64 = 80.0;

const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const DASHES: &[&str] = &["", "8 5", "3 4", "10 4 3 4"];

/// (offered events/s, loss %, step label).
type Point<'a> = (f64, f64, &'a str);
/// A configuration's label and points.
type Series<'a> = (&'a str, Vec<Point<'a>>);

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Ticks within `[lo, hi]` and whether each gets a label: 1, 2, 5 × 10^k; when that gives
/// fewer than four (a narrow range), every integer multiple, labelled at 1, 2, 3 and 5 only
/// so the labels do not collide.
fn log_ticks(lo: f64, hi: f64) -> Vec<(f64, bool)> {
    let pick = |mults: &[f64]| {
        let mut out = Vec::new();
        let mut p = 10f64.powf(lo.log10().floor());
        while p <= hi * 10.0 {
            for &m in mults {
                let v = p * m;
                if v >= lo && v <= hi {
                    out.push((v, [1.0, 2.0, 3.0, 5.0].contains(&m)));
                }
            }
            p *= 10.0;
        }
        out
    };
    let coarse = pick(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 4 {
        coarse
    } else {
        pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

/// Smallest of 1, 2, 5 × 10^k at or above `v` (at least 1, at most 100).
fn nice_max(v: f64) -> f64 {
    if v <= 1.0 {
        return 1.0;
    }
    let mut p = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if p * m >= v {
                return (p * m).min(100.0);
            }
        }
        p *= 10.0;
    }
}

fn rate_label(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").unwrap_or(&s).to_string()
}

fn loss_label(v: f64) -> String {
    if v == 0.0 {
        "0%".into()
    } else if v < 0.01 {
        format!("{v:.3}%")
    } else if v < 10.0 {
        format!("{v:.2}%")
    } else {
        format!("{v:.1}%")
    }
}

/// Draws marker `shape` at `(x, y)`, `k` times its base size.
fn marker(out: &mut String, shape: usize, x: f64, y: f64, color: &str, k: f64) {
    let (r, h, w, d) = (5.5 * k, 7.0 * k, 6.5 * k, 7.0 * k);
    let _ = match shape % 4 {
        0 => writeln!(
            out,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r:.1}" fill="{color}" stroke="white" stroke-width="1.5"/>"#
        ),
        1 => writeln!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{color}" stroke="white" stroke-width="1.5"/>"#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => writeln!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{color}" stroke="white" stroke-width="1.5"/>"#,
            y - h,
            x + w,
            y + 0.7 * h,
            x - w,
            y + 0.7 * h
        ),
        _ => writeln!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{y:.1} L{x:.1},{:.1} L{:.1},{y:.1} Z" fill="{color}" stroke="white" stroke-width="1.5"/>"#,
            y - d,
            x + d,
            y + d,
            x - d
        ),
    };
}

/// The SVG document for `configs`. `subtitle` names the message size, duration and machine.
pub fn svg(title: &str, subtitle: &str, configs: &[ConfigResult]) -> String {
    // (x = offered events/s, y = loss %, step label) per configuration.
    let series: Vec<Series<'_>> = configs
        .iter()
        .map(|c| {
            let mut pts: Vec<Point<'_>> = c
                .steps
                .iter()
                .filter_map(|s| {
                    let y = s.loss_pct?;
                    (s.send_rate > 0.0).then_some((s.send_rate, y, s.label.as_str()))
                })
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (c.label.as_str(), pts)
        })
        .collect();
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let (mut xmin, mut xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if xmin > xmax {
        (xmin, xmax) = (1000.0, 100_000.0);
    }
    // Pad the range by a quarter decade on each side so end points are not on the frame.
    let (lx0, lx1) = (xmin.log10() - 0.2, xmax.log10() + 0.2);
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|q| q.1))
            .fold(0.0, f64::max)
            * 1.1,
    );
    let pw = W - LEFT - RIGHT;
    let ph = H - TOP - BOTTOM;
    let px = |x: f64| LEFT + (x.log10() - lx0) / (lx1 - lx0) * pw;
    let py = |y: f64| TOP + ph - y / ymax * ph;

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#
    );
    let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        o,
        r#"<text x="{}" y="32" font-size="22" font-weight="bold" text-anchor="middle">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    let _ = writeln!(
        o,
        r##"<text x="{}" y="56" font-size="14" fill="#444" text-anchor="middle">{}</text>"##,
        W / 2.0,
        esc(subtitle)
    );

    // Grid and y ticks.
    let ystep = ymax / 5.0;
    for i in 0..=5 {
        let v = ystep * i as f64;
        let y = py(v);
        let _ = writeln!(
            o,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd" stroke-width="1"/>"##,
            LEFT + pw
        );
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" font-size="14" text-anchor="end">{}</text>"#,
            LEFT - 10.0,
            y + 5.0,
            if ymax < 5.0 {
                format!("{v:.1}")
            } else {
                trim(v)
            }
        );
    }
    // x ticks.
    for (v, labelled) in log_ticks(10f64.powf(lx0), 10f64.powf(lx1)) {
        let x = px(v);
        let _ = writeln!(
            o,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#eee" stroke-width="1"/>"##,
            TOP + ph
        );
        let _ = writeln!(
            o,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="black" stroke-width="1"/>"#,
            TOP + ph,
            TOP + ph + 6.0
        );
        if labelled {
            let _ = writeln!(
                o,
                r#"<text x="{x:.1}" y="{:.1}" font-size="14" text-anchor="middle">{}</text>"#,
                TOP + ph + 24.0,
                rate_label(v)
            );
        }
    }
    // Frame and axis titles.
    let _ = writeln!(
        o,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black" stroke-width="1.2"/>"#
    );
    let _ = writeln!(
        o,
        r#"<text x="{:.1}" y="{:.1}" font-size="16" text-anchor="middle">offered load: events/s actually sent (log scale)</text>"#,
        LEFT + pw / 2.0,
        H - 22.0
    );
    let _ = writeln!(
        o,
        r#"<text x="24" y="{:.1}" font-size="16" text-anchor="middle" transform="rotate(-90 24 {:.1})">loss (% of sent)</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    );

    // Lines, markers and point labels. Earlier lines are drawn wider and with larger markers,
    // so where lines coincide (all at 0 %) each one still shows around the next.
    let n = series.len();
    let size = |i: usize| 1.0 + 0.45 * (n - 1 - i) as f64;
    for (i, (_, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let dash = DASHES[i % DASHES.len()];
        let k = size(i);
        if pts.len() > 1 {
            let d: Vec<String> = pts
                .iter()
                .map(|(x, y, _)| format!("{:.1},{:.1}", px(*x), py(*y)))
                .collect();
            let _ = writeln!(
                o,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="{:.1}" stroke-dasharray="{dash}"/>"#,
                d.join(" "),
                2.5 * k
            );
        }
        // Right edge of the last label drawn on this line.
        let mut last_label_end = f64::NEG_INFINITY;
        for (x, y, label) in pts {
            marker(&mut o, i, px(*x), py(*y), color, k);
            let text = if label.contains("max") {
                format!("{} ({label})", loss_label(*y))
            } else {
                loss_label(*y)
            };
            // A label that would overlap the previous one is left out (the table has every
            // figure). Width estimate: ~7.5 px per character of 13 px bold sans.
            let half = 3.75 * text.chars().count() as f64;
            if px(*x) - half < last_label_end + 4.0 {
                continue;
            }
            last_label_end = px(*x) + half;
            // Labels of different lines are stacked so points at the same place stay readable.
            let ly = py(*y) - 12.0 - 6.0 * (k - 1.0) - 17.0 * i as f64;
            let _ = writeln!(
                o,
                r#"<text x="{:.1}" y="{ly:.1}" font-size="13" fill="{color}" text-anchor="middle" font-weight="bold">{}</text>"#,
                px(*x),
                esc(&text)
            );
        }
    }

    // Legend, top left inside the plot.
    let lh = 24.0;
    let lw = 20.0
        + 60.0
        + series
            .iter()
            .map(|(l, _)| l.chars().count() as f64 * 8.2)
            .fold(0.0, f64::max);
    let (lx, ly) = (LEFT + 14.0, TOP + 14.0);
    let _ = writeln!(
        o,
        r##"<rect x="{lx:.1}" y="{ly:.1}" width="{lw:.1}" height="{:.1}" fill="white" fill-opacity="0.9" stroke="#999"/>"##,
        lh * series.len() as f64 + 10.0
    );
    for (i, (label, _)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let dash = DASHES[i % DASHES.len()];
        let y = ly + 17.0 + lh * i as f64;
        let _ = writeln!(
            o,
            r#"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="2.5" stroke-dasharray="{dash}"/>"#,
            lx + 10.0,
            lx + 50.0
        );
        marker(&mut o, i, lx + 30.0, y, color, 1.0);
        let _ = writeln!(
            o,
            r#"<text x="{:.1}" y="{:.1}" font-size="14">{}</text>"#,
            lx + 60.0,
            y + 5.0,
            esc(label)
        );
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::super::report::tests::{config, step};
    use super::*;

    #[test]
    fn ticks_and_ranges() {
        let values = |t: Vec<(f64, bool)>| t.into_iter().map(|(v, _)| v).collect::<Vec<_>>();
        assert_eq!(
            values(log_ticks(3000.0, 400_000.0)),
            vec![5e3, 1e4, 2e4, 5e4, 1e5, 2e5]
        );
        let fine = log_ticks(15_000.0, 60_000.0);
        assert_eq!(values(fine.clone()), vec![2e4, 3e4, 4e4, 5e4, 6e4]);
        assert_eq!(
            fine.iter().filter(|t| t.1).map(|t| t.0).collect::<Vec<_>>(),
            vec![2e4, 3e4, 5e4]
        );
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(1.3), 2.0);
        assert_eq!(nice_max(37.0), 50.0);
        assert_eq!(nice_max(97.0), 100.0);
        assert_eq!(rate_label(150_000.0), "150k");
        assert_eq!(rate_label(4_500.0), "4.5k");
        assert_eq!(loss_label(0.0), "0%");
        assert_eq!(loss_label(37.25), "37.2%");
    }

    /// syslog-ng's 1a row: `max` at 160k/s (78.1 %) next to the 200k step at 184k/s
    /// (78.6 %): the wide "(max)" label must not be drawn over by its neighbour's.
    #[test]
    fn labels_that_would_overlap_are_left_out() {
        let a = config(
            "syslog-ng",
            vec![
                step("50000/s", Some(51_000), 1000, 740),
                step("200000/s", Some(184_000), 1000, 214),
                step("max", Some(160_000), 1000, 219),
            ],
        );
        let s = svg("UDP loss", "800 B", &[a]);
        assert!(s.contains(">78.1% (max)</text>"), "{s}");
        assert!(!s.contains(">78.6%</text>"), "{s}");
        assert!(s.contains(">26.0%</text>"), "{s}");
    }

    #[test]
    fn one_line_per_configuration_with_legend_and_axes() {
        let a = config(
            "default <kernel>",
            vec![
                step("20000/s", Some(20_000), 100, 100),
                step("100000/s", Some(100_000), 100, 90),
            ],
        );
        let b = config("ebpf", vec![step("20000/s", Some(20_000), 100, 100)]);
        let s = svg("UDP loss", "800 B", &[a, b]);
        assert!(s.starts_with("<svg"), "{s}");
        assert!(s.trim_end().ends_with("</svg>"));
        assert_eq!(
            s.matches("<polyline").count(),
            1,
            "a single point draws no line"
        );
        assert!(s.contains("default &lt;kernel&gt;"));
        assert!(s.contains(">ebpf</text>"));
        assert!(s.contains("offered load: events/s actually sent (log scale)"));
        assert!(s.contains("loss (% of sent)"));
        assert!(
            s.contains(">10.0%</text>") || s.contains(">10%</text>"),
            "{s}"
        );
        assert!(s.contains(">20k</text>"));
    }
}
