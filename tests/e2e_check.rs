//! `sluice run --check` on a full env_file (`tests/fixtures/check/`): the report is compared
//! with a committed snapshot, its settings part reads back as the configuration sluice
//! would run with, and a HEC URL without a token fails the check.
//!
//! To accept a changed report: `SLUICE_UPDATE_SNAPSHOTS=1 cargo test --test e2e_check`, then
//! review the diff of `tests/fixtures/check/expected*.txt`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sluice::config::Config;
use sluice::env::Env;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/check")
}

/// `sluice run --check ARGS` in `dir` with exactly `env` as its environment.
fn check(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(sluice_suite::sluice_bin())
        .args(["run", "--check"])
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .expect("run sluice")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Compares `actual` with the snapshot `name`, or rewrites it with SLUICE_UPDATE_SNAPSHOTS.
fn snapshot(name: &str, actual: &str) {
    let path = fixtures().join(name);
    if std::env::var_os("SLUICE_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (SLUICE_UPDATE_SNAPSHOTS=1 writes it)",
            path.display()
        )
    });
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .filter(|(_, (e, a))| e != a)
            .take(10)
            .map(|(i, (e, a))| format!("line {}:\n  expected: {e}\n  actual:   {a}", i + 1))
            .collect();
        panic!(
            "`run --check` differs from {} ({} vs {} lines):\n{}\n\nwhole output:\n{actual}",
            path.display(),
            expected.lines().count(),
            actual.lines().count(),
            diff.join("\n")
        );
    }
}

const PROCESS: &[(&str, &str)] = &[
    // The process environment wins over the env_file line that sets the status port.
    ("SC4S_LISTEN_STATUS_PORT", "18080"),
    ("SLUICE_TCP_KEEPALIVE", "30"),
];

#[test]
fn a_full_env_file_shows_every_value_and_its_origin() {
    let out = check(
        &fixtures(),
        &["--config", "sluice.toml", "--env-file", "env_file"],
        PROCESS,
    );
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    snapshot("expected.txt", &text);

    // What it prints is what sluice runs with: the settings part, read back as a --config
    // file (the masked token put back), is the configuration loaded the normal way.
    let dir = fixtures();
    let mut env = Env::default();
    let env_file = std::fs::read_to_string(dir.join("env_file")).unwrap();
    env.merge_env_file(Path::new("env_file"), &env_file)
        .unwrap();
    env.merge_process(PROCESS.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let mut loaded = Config::from_toml_file(&dir.join("sluice.toml")).unwrap();
    loaded.apply_env(&env).unwrap();
    let token = &loaded.hec.token;
    let printed = text
        .replace(
            "\"********-****-****-****-********6666\"",
            &format!("{token:?}"),
        )
        .replace(
            "\"********-****-****-****-********ffff\"",
            &format!("{:?}", loaded.destinations["other"].hec.token),
        )
        .replace(
            "Authorization-Proxy: ****",
            "Authorization-Proxy: Basic c2VjcmV0",
        );
    let mut reread = Config::from_toml_str(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    // The environment the app-parsers' backticks read is a snapshot, not a setting: it is
    // never printed (it holds every variable, tokens included), so it cannot be read back.
    reread.parse.app_parser_env = loaded.parse.app_parser_env.clone();
    assert_eq!(reread, loaded);

    // The secrets themselves appear nowhere.
    assert!(!text.contains("444455556666") && !text.contains("c2VjcmV0"));
    assert!(!text.contains("ddddeeeeffff"));
}

#[test]
fn without_any_setting_everything_is_a_default() {
    let dir = std::env::temp_dir().join(format!("sluice-check-defaults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = check(&dir, &[], &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    // The one default that depends on the machine: SC4S's context directory, when present.
    let context = [
        "/etc/syslog-ng/conf.d/local/context",
        "/opt/sc4s/local/context",
    ];
    if let Some(found) = context.iter().find(|d| Path::new(d).is_dir()) {
        assert!(
            text.contains(&format!("context files from {found}")),
            "{text}"
        );
        println!("snapshot not compared: this machine has SC4S context files in {found}");
    } else {
        snapshot("expected-defaults.txt", &text);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_hec_url_without_a_token_fails_the_check_and_says_why() {
    let dir = std::env::temp_dir().join(format!("sluice-check-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for token_line in [
        "",
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=\n",
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=\"  \"\n",
    ] {
        std::fs::write(
            dir.join("env_file"),
            format!("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=https://idx:8088\n{token_line}"),
        )
        .unwrap();
        let out = check(&dir, &["--env-file", "env_file"], &[]);
        let text = stdout(&out);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{token_line:?}: {text}{err}");
        assert!(
            text.contains("# ERROR: a HEC URL is configured but no token")
                && text
                    .contains("URL <- SC4S_DEST_SPLUNK_HEC_DEFAULT_URL (env_file env_file line 1)"),
            "{text}"
        );
        assert!(
            err.contains("run --check found 1 error")
                && err.contains("set SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN"),
            "{err}"
        );
        // The rest of the report is still printed.
        assert!(
            text.contains("[hec]") && text.contains("Status server"),
            "{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `…_DISKBUFF_MEMBUFSIZE` is SC4S's per-worker `mem-buf-size()`: in reliable mode the check
/// shows the memory part it bounds (times the workers) and where it came from; in normal
/// mode, where SC4S does not use it either, the check says it has no effect.
#[test]
fn the_reliable_buffer_memory_part_is_shown_per_worker_times_workers() {
    let dir = std::env::temp_dir().join(format!("sluice-check-membuf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let buf = dir.join("buffer").display().to_string();
    let base = [
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_URL", "https://idx:8088"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN", "t"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_WORKERS", "4"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_MEMBUFSIZE", "3mb"),
        ("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR", &buf),
    ];
    let reliable: Vec<_> = base
        .iter()
        .copied()
        .chain([("SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE", "yes")])
        .collect();
    let out = check(&dir, &[], &reliable);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(
            "#     in memory (read back for HEC, not yet delivered): up to 12000000 bytes: \
             SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_MEMBUFSIZE 3000000 per worker x 4 workers  \
             <- SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_MEMBUFSIZE (environment)"
        ),
        "{text}"
    );
    assert!(text.contains("mem_buf_size = 3000000"), "{text}");

    let out = check(&dir, &[], &base);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("in memory (read back"), "{text}");
    assert!(
        text.contains("MEMBUFSIZE has no effect in normal mode"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
