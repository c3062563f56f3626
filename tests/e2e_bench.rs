//! `sluice bench` needs none of the daemon's well-known ports: with 514, 601 (UDP and TCP) and
//! 8080 all taken, it still starts its daemon on free ports and measures.
//!
//! Taking those ports on this shared machine would break whoever else uses them, so the test
//! runs in a network namespace of its own (`unshare --net`, root only), where a first sluice
//! holds them.

use std::process::Command;

use sluice_suite::sluice_bin;

/// Holds 514 and 601 (UDP and TCP) and 8080, then runs a one-step bench and prints its JSON.
const SCRIPT: &str = r#"
ip link set lo up || exit 91
SC4S_LISTEN_DEFAULT_UDP_PORT=514,601 SC4S_LISTEN_DEFAULT_TCP_PORT=514,601 \
SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled \
SC4S_LISTEN_STATUS_PORT=8080 SLUICE_OUTPUT_FILE="$DIR/holder.jsonl" \
    "$SLUICE" run 2>"$DIR/holder.log" &
holder=$!
i=0
until "$SLUICE" health --port 8080 >/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 300 ]; then cat "$DIR/holder.log" >&2; kill "$holder"; exit 92; fi
    sleep 0.1
done
"$SLUICE" bench --rates 2000 --duration 1 --settle 0.5 --pause 0 --no-plot --json \
    2>"$DIR/bench.log"
rc=$?
kill "$holder"
wait "$holder"
if [ "$rc" -ne 0 ]; then cat "$DIR/bench.log" >&2; fi
exit "$rc"
"#;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

#[test]
fn bench_runs_with_514_601_and_8080_taken() {
    if !is_root() {
        println!("SKIPPED: a private network namespace (unshare --net) needs root");
        return;
    }
    match Command::new("unshare").args(["--net", "true"]).status() {
        Ok(s) if s.success() => {}
        Ok(s) => {
            println!("SKIPPED: the kernel refused a network namespace (unshare --net: {s})");
            return;
        }
        Err(e) => {
            println!("SKIPPED: unshare is not available: {e}");
            return;
        }
    }
    let dir = std::env::temp_dir().join(format!("sluice-bench-ports-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut cmd = Command::new("unshare");
    cmd.args(["--net", "sh", "-c", SCRIPT])
        .current_dir(&dir)
        .env("SLUICE", sluice_bin())
        .env("DIR", &dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("SC4S_") || k.starts_with("SLUICE_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "bench failed ({}):\n{stderr}\n{stdout}",
        out.status
    );
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("bench --json printed no JSON ({e}):\n{stdout}\n{stderr}"));
    let step = &report["configs"][0]["steps"][0];
    assert_eq!(step["sent"], 2000, "{step}");
    assert_eq!(step["delivered"], 2000, "{step}");
    let _ = std::fs::remove_dir_all(&dir);
}
