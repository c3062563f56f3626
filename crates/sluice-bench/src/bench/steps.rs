//! The values of `--rates`, `--env` and `--variant`, parsed into checked settings.

use serde::{Deserialize, Serialize};

use super::BenchError;

/// One offered load: how many connections send, and at what rate each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// Sending connections (each its own socket, and for UDP its own source port).
    pub connections: usize,
    /// Messages per second per connection; `None` = as fast as the sender can.
    pub per_connection: Option<u64>,
}

impl Step {
    /// Total offered events per second, when the step has a rate.
    pub fn total_rate(&self) -> Option<u64> {
        self.per_connection
            .map(|r| r.saturating_mul(self.connections as u64))
    }

    /// How tables and the plot name the step: `50000/s`, `4x40000/s`, `max`, `4xmax`.
    pub fn label(&self) -> String {
        let rate = match self.per_connection {
            Some(r) => format!("{r}/s"),
            None => "max".to_string(),
        };
        if self.connections == 1 {
            rate
        } else {
            format!("{}x{rate}", self.connections)
        }
    }
}

/// Parses the `--rates` list. Each item is `RATE` (total events/s, split evenly over
/// `connections`), `max`, or `CxR` / `Cxmax` (C connections at R each).
pub fn parse_rates(items: &[String], connections: usize) -> Result<Vec<Step>, BenchError> {
    let bad = |item: &str, reason: String| BenchError::Setting {
        flag: "--rates",
        reason: format!("{item:?}: {reason}"),
    };
    let items: Vec<&str> = items
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(BenchError::Setting {
            flag: "--rates",
            reason: "the list is empty; give at least one rate, e.g. --rates 20000,100000".into(),
        });
    }
    let mut steps = Vec::with_capacity(items.len());
    for item in items {
        let split = if item.eq_ignore_ascii_case("max") {
            None
        } else {
            item.split_once(['x', 'X', '*'])
        };
        let (conns, rate) = match split {
            Some((c, r)) => {
                let c: usize = c.trim().parse().map_err(|_| {
                    bad(
                        item,
                        format!("{c:?} is not a connection count (expected CxRATE, e.g. 4x40000)"),
                    )
                })?;
                if c == 0 {
                    return Err(bad(item, "0 connections send nothing".into()));
                }
                (Some(c), r.trim())
            }
            None => (None, item),
        };
        let per_conn_given = conns.is_some();
        let conns = conns.unwrap_or(connections);
        let per_connection = if rate.eq_ignore_ascii_case("max") {
            None
        } else {
            let r: u64 = rate.replace('_', "").parse().map_err(|_| {
                bad(
                    item,
                    "not a rate: expected events per second (e.g. 50000), max, or CxRATE".into(),
                )
            })?;
            if r == 0 {
                return Err(bad(
                    item,
                    "a rate of 0 sends nothing; use max for as fast as possible".into(),
                ));
            }
            if per_conn_given {
                Some(r)
            } else {
                let each = r / conns as u64;
                if each == 0 {
                    return Err(bad(
                        item,
                        format!("{r}/s cannot be split over {conns} connections"),
                    ));
                }
                Some(each)
            }
        };
        steps.push(Step {
            connections: conns,
            per_connection,
        });
    }
    Ok(steps)
}

/// Variables the tool sets itself for a daemon it starts; `--env` may not override them.
pub const RESERVED_ENV: &[(&str, &str)] = &[
    ("SC4S_LISTEN_DEFAULT_UDP_PORT", "use --port"),
    ("SC4S_LISTEN_DEFAULT_TCP_PORT", "use --port"),
    (
        "SC4S_LISTEN_DEFAULT_RFC5426_PORT",
        "the tool gives the daemon's RFC 5426/6587 listener a free port",
    ),
    (
        "SC4S_LISTEN_DEFAULT_RFC6587_PORT",
        "the tool gives the daemon's RFC 5426/6587 listener a free port",
    ),
    (
        "SC4S_LISTEN_STATUS_PORT",
        "the tool picks a free status port",
    ),
    (
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL",
        "the tool points HEC at its sink; use --no-sink to deliver elsewhere",
    ),
    (
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN",
        "use --sink-token, or --no-sink to deliver elsewhere",
    ),
];

/// Parses one `KEY=VALUE`.
pub fn parse_env(flag: &'static str, item: &str) -> Result<(String, String), BenchError> {
    let Some((k, v)) = item.split_once('=') else {
        return Err(BenchError::Setting {
            flag,
            reason: format!("{item:?} is not KEY=VALUE"),
        });
    };
    let k = k.trim();
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(BenchError::Setting {
            flag,
            reason: format!("{k:?} is not an environment variable name"),
        });
    }
    Ok((k.to_string(), v.to_string()))
}

/// Checks that `--env`/`--variant` does not set what the tool owns. With `--no-sink`, the
/// HEC variables are the user's to set.
pub fn check_reserved(
    flag: &'static str,
    env: &[(String, String)],
    no_sink: bool,
) -> Result<(), BenchError> {
    for (k, _) in env {
        if let Some((_, hint)) = RESERVED_ENV
            .iter()
            .find(|(r, _)| r == k && !(no_sink && r.starts_with("SC4S_DEST_SPLUNK_HEC")))
        {
            return Err(BenchError::Setting {
                flag,
                reason: format!("{k} is set by sluice bench itself; {hint}"),
            });
        }
    }
    Ok(())
}

/// Parses `LABEL:KEY=VALUE[,KEY=VALUE…]`.
pub fn parse_variant(item: &str) -> Result<(String, Vec<(String, String)>), BenchError> {
    let Some((label, rest)) = item.split_once(':') else {
        return Err(BenchError::Setting {
            flag: "--variant",
            reason: format!(
                "{item:?} is not LABEL:KEY=VALUE[,KEY=VALUE...] (e.g. ebpf:SC4S_ENABLE_EBPF=yes)"
            ),
        });
    };
    let label = label.trim();
    if label.is_empty() {
        return Err(BenchError::Setting {
            flag: "--variant",
            reason: format!("{item:?} has an empty label"),
        });
    }
    let env = rest
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|kv| parse_env("--variant", kv))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((label.to_string(), env))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rates_total_split_and_per_connection_forms() {
        let s = parse_rates(&strs(&["20000", "max", "4x40000", "2xmax", "1_000"]), 2).unwrap();
        assert_eq!(
            s,
            vec![
                Step {
                    connections: 2,
                    per_connection: Some(10000)
                },
                Step {
                    connections: 2,
                    per_connection: None
                },
                Step {
                    connections: 4,
                    per_connection: Some(40000)
                },
                Step {
                    connections: 2,
                    per_connection: None
                },
                Step {
                    connections: 2,
                    per_connection: Some(500)
                },
            ]
        );
        assert_eq!(s[2].total_rate(), Some(160_000));
        assert_eq!(s[2].label(), "4x40000/s");
        assert_eq!(s[1].label(), "2xmax");
        let one = parse_rates(&strs(&["50000", "max"]), 1).unwrap();
        assert_eq!(one[0].label(), "50000/s");
        assert_eq!(one[1].label(), "max");
    }

    #[test]
    fn bad_rates_are_named() {
        for (items, want) in [
            (vec![], "--rates: the list is empty"),
            (vec![" "], "--rates: the list is empty"),
            (vec!["0"], "a rate of 0 sends nothing"),
            (vec!["4x0"], "a rate of 0 sends nothing"),
            (vec!["0x100"], "0 connections"),
            (vec!["fast"], "not a rate"),
            (vec!["ax100"], "not a connection count"),
            (vec!["-5"], "not a rate"),
            (vec!["3"], "cannot be split over 4 connections"),
        ] {
            let e = parse_rates(&strs(&items), 4).unwrap_err().to_string();
            assert!(e.contains(want), "{items:?}: {e}");
        }
    }

    #[test]
    fn env_and_variants() {
        assert_eq!(
            parse_env("--env", "SC4S_ENABLE_EBPF=yes").unwrap(),
            ("SC4S_ENABLE_EBPF".into(), "yes".into())
        );
        assert_eq!(parse_env("--env", "A=b=c").unwrap().1, "b=c");
        assert!(parse_env("--env", "novalue").is_err());
        assert!(parse_env("--env", "BAD KEY=1").is_err());
        let (l, env) = parse_variant("kernel:SLUICE_UDP_BALANCE=kernel,X=1").unwrap();
        assert_eq!(l, "kernel");
        assert_eq!(env.len(), 2);
        assert!(parse_variant("noenv").is_err());
        assert!(parse_variant(":A=1").is_err());
        let e = check_reserved(
            "--env",
            &[("SC4S_LISTEN_DEFAULT_UDP_PORT".into(), "514".into())],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("use --port"), "{e}");
        let hec = [("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL".into(), "x".into())];
        assert!(check_reserved("--env", &hec, false).is_err());
        assert!(check_reserved("--env", &hec, true).is_ok());
    }
}
