//! The operator's SC4S app-parsers on disk: where the directory is, reading its files
//! (subdirectories included) and loading them with `sluice_proto::classify::local`, which
//! compiles them. Called where the processor is built, so that `run`, a reload and
//! `run --check` load the same way.
//!
//! Error policy: a syntax error (or a file that cannot be read) stops the start and fails a
//! reload (the running classifier carries on); an application that uses a construct sluice
//! does not support is skipped with a warning naming file:line:column, and the rest load.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use sluice_proto::classify::local::{Diagnostic, LoadOptions, Program, Severity, SourceFile};

use crate::config::Config;

/// SC4S's places for app-parsers, inside its container and on its host mount.
const DEFAULT_DIRS: [&str; 2] = [
    "/etc/syslog-ng/conf.d/local/config/app_parsers",
    "/opt/sc4s/local/config/app_parsers",
];

/// The directory to read: the setting, else the one beside the context directory, else
/// SC4S's places. `None`: there is none.
pub fn dir(config: &Config, context_dir: Option<&Path>) -> Option<PathBuf> {
    if let Some(d) = &config.parse.app_parsers_dir {
        return Some(d.clone());
    }
    // `local/context` -> `local/config/app_parsers`, as SC4S lays out `local/`.
    let beside = context_dir
        .and_then(Path::parent)
        .map(|local| local.join("config/app_parsers"));
    let etc = config
        .parse
        .app_parser_env
        .0
        .get("SC4S_ETC")
        .map(|e| Path::new(e).join("conf.d/local/config/app_parsers"));
    beside
        .into_iter()
        .chain(etc)
        .chain(DEFAULT_DIRS.iter().map(PathBuf::from))
        .find(|p| p.is_dir())
}

/// `local/config/filters` beside an `local/config/app_parsers` directory, when it exists.
pub fn filters_dir(app_parsers: &Path) -> Option<PathBuf> {
    let f = app_parsers.parent()?.join("filters");
    (app_parsers.file_name()? == "app_parsers" && f.is_dir()).then_some(f)
}

/// The `.conf` files under `dir` in SC4S's include order: a directory's files (by name)
/// before its subdirectories' (by name).
pub fn read_dir(dir: &Path) -> anyhow::Result<Vec<SourceFile>> {
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<SourceFile>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the app-parser directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .with_context(|| format!("cannot read the app-parser directory {}", dir.display()))?;
    entries.sort();
    for p in entries.iter().filter(|p| p.is_file()) {
        if p.extension().is_some_and(|e| e == "conf") {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the app-parser file {}", p.display()))?;
            out.push(SourceFile::new(p.display().to_string(), text));
        }
    }
    for p in entries.iter().filter(|p| p.is_dir()) {
        walk(p, out)?;
    }
    Ok(())
}

/// What loading gave: the program (`None` when there is no directory; the classifier
/// ignores one without applications)
/// and what it reported (unsupported constructs, warnings).
pub struct Loaded {
    pub dir: Option<PathBuf>,
    pub files: usize,
    pub program: Option<Arc<Program>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads and compiles the app-parsers. `Err` names every error with file:line:column.
pub fn load(config: &Config, context_dir: Option<&Path>) -> anyhow::Result<Loaded> {
    let Some(dir) = dir(config, context_dir) else {
        return Ok(Loaded {
            dir: None,
            files: 0,
            program: None,
            diagnostics: Vec::new(),
        });
    };
    // SC4S includes `local/config/filters/*.conf` before the app-parsers: the named filters
    // an `SC4S_DEST_<VP>_ALT_FILTER` refers to live there.
    let mut files = match filters_dir(&dir) {
        Some(f) => read_dir(&f)?,
        None => Vec::new(),
    };
    files.extend(read_dir(&dir)?);
    let vars = &config.parse.app_parser_env.0;
    let env = |k: &str| vars.get(k).cloned();
    // `in-list("file")`: relative names are SC4S's, from its etc directory.
    let base = dir.clone();
    let read = |name: &str| {
        let p = Path::new(name);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        };
        std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let program = Program::load(
        &files,
        &LoadOptions {
            env: &env,
            read: &read,
            strict: false,
        },
    )
    .map_err(|errors| {
        anyhow::anyhow!(
            "app-parsers in {}: {}",
            dir.display(),
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )
    })?;
    let diagnostics = program.diagnostics().to_vec();
    Ok(Loaded {
        dir: Some(dir),
        files: files.len(),
        program: Some(Arc::new(program)),
        diagnostics,
    })
}

/// Logs what loading found: the applications per context, each skipped construct as a
/// warning.
pub fn log(loaded: &Loaded) {
    let Some(dir) = &loaded.dir else {
        return;
    };
    let apps = loaded
        .program
        .as_ref()
        .map_or(0, |p| p.applications().len());
    tracing::info!(dir = %dir.display(), files = loaded.files, applications = apps, "app-parsers loaded");
    for d in &loaded.diagnostics {
        match d.severity {
            Severity::Error | Severity::Unsupported => tracing::warn!("app-parsers: {d}"),
            _ => tracing::info!("app-parsers: {d}"),
        }
    }
}

/// The destination selectors of `loaded` over `plan`, and what cannot take effect (each
/// with file:line).
pub fn selectors(
    loaded: &Loaded,
    plan: &[crate::config::DestPlan],
) -> (Option<crate::routing::Selectors>, Vec<String>) {
    match &loaded.program {
        Some(p) => crate::routing::Selectors::build(&p.selectors(), plan),
        None => (None, Vec::new()),
    }
}

/// `routing` with `loaded`'s destination selectors (each one that cannot take effect
/// logged as a warning) and its named ALT_FILTER filters resolved against `loaded`'s
/// filters. An ALT_FILTER naming a filter no file defines is an error naming the setting.
pub fn route_with(
    routing: &Arc<crate::routing::Routing>,
    loaded: &Loaded,
    plan: &[crate::config::DestPlan],
) -> anyhow::Result<Arc<crate::routing::Routing>> {
    let (sel, warnings) = selectors(loaded, plan);
    for w in &warnings {
        tracing::warn!("app-parsers: {w}");
    }
    let program = loaded.program.as_deref();
    let resolved = routing.resolve_filters(|name| program.and_then(|p| p.filter_id(name)))?;
    if sel.is_none() && resolved == **routing {
        return Ok(Arc::clone(routing));
    }
    Ok(Arc::new(resolved.with_selectors(sel)))
}

/// `run --check`'s lines: the directory, the applications per context with their
/// prefilters, and every diagnostic.
pub fn check_lines(loaded: &Loaded) -> Vec<String> {
    let mut out = Vec::new();
    let Some(dir) = &loaded.dir else {
        out.push(format!(
            "  no app-parsers (none configured with SLUICE_APP_PARSERS_DIR, none beside the \
             context directory or in {})",
            DEFAULT_DIRS.join(" or ")
        ));
        return out;
    };
    let apps = loaded
        .program
        .as_ref()
        .map(|p| p.applications())
        .unwrap_or_default();
    out.push(format!(
        "  app-parsers from {}: {} files, {} applications",
        dir.display(),
        loaded.files,
        apps.len()
    ));
    for a in &apps {
        out.push(format!(
            "    [{}] {} ({}:{}) runs on: {}",
            a.context, a.name, a.file, a.line, a.prefilter
        ));
    }
    if let Some(p) = &loaded.program {
        for (name, context, file, line) in p.skipped() {
            out.push(format!("    NOT LOADED [{context}] {name} ({file}:{line})"));
        }
    }
    for d in &loaded.diagnostics {
        out.push(format!("    {d}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("sluice-app-parsers-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn files_before_subdirectories_each_in_name_order() {
        let d = tmp("order");
        std::fs::create_dir_all(d.join("selectors")).unwrap();
        std::fs::write(d.join("b.conf"), "").unwrap();
        std::fs::write(d.join("a.conf"), "").unwrap();
        std::fs::write(d.join("notes.txt"), "").unwrap();
        std::fs::write(d.join("selectors/0.conf"), "").unwrap();
        let names: Vec<String> = read_dir(&d)
            .unwrap()
            .into_iter()
            .map(|f| {
                Path::new(&f.path)
                    .strip_prefix(&d)
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["a.conf", "b.conf", "selectors/0.conf"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_directory_beside_the_context_directory_and_the_setting() {
        let d = tmp("beside");
        std::fs::create_dir_all(d.join("local/context")).unwrap();
        std::fs::create_dir_all(d.join("local/config/app_parsers")).unwrap();
        let mut config = Config::default();
        assert_eq!(
            dir(&config, Some(&d.join("local/context"))),
            Some(d.join("local/config/app_parsers"))
        );
        config.parse.app_parsers_dir = Some(d.join("elsewhere"));
        assert_eq!(
            dir(&config, Some(&d.join("local/context"))),
            Some(d.join("elsewhere"))
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_syntax_error_names_the_file_and_line_and_an_unsupported_construct_is_listed() {
        let d = tmp("errors");
        let mut config = Config::default();
        config.parse.app_parsers_dir = Some(d.clone());
        std::fs::write(
            d.join("x.conf"),
            "application app-x[sc4s-syslog-pgm] {\n  filter { program('x') };\n  parser { frobnicate-parser(); };\n};\n",
        )
        .unwrap();
        let loaded = load(&config, None).unwrap();
        let lines = check_lines(&loaded).join("\n");
        assert!(
            lines.contains("NOT LOADED [sc4s-syslog-pgm] app-x"),
            "{lines}"
        );
        assert!(lines.contains("x.conf:3"), "{lines}");
        std::fs::write(
            d.join("x.conf"),
            "application app-x[sc4s-syslog-pgm] {\n  filter { program('x') \n",
        )
        .unwrap();
        let e = load(&config, None)
            .err()
            .expect("a syntax error fails the load");
        assert!(format!("{e:#}").contains("x.conf:"), "{e:#}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn named_filters_in_local_config_filters_are_loaded_for_alt_filter() {
        let d = tmp("filters");
        let apps = d.join("local/config/app_parsers");
        std::fs::create_dir_all(&apps).unwrap();
        std::fs::create_dir_all(d.join("local/config/filters")).unwrap();
        std::fs::write(
            d.join("local/config/filters/asa.conf"),
            "filter f_asa_denies { message('%ASA-4-106023' type(string) flags(prefix)); };\n",
        )
        .unwrap();
        let mut config = Config::default();
        config.parse.app_parsers_dir = Some(apps.clone());
        assert_eq!(filters_dir(&apps), Some(d.join("local/config/filters")));
        let loaded = load(&config, None).unwrap();
        let p = loaded.program.as_ref().unwrap();
        assert!(p.filter_id("f_asa_denies").is_some());
        assert!(p.filter_id("f_nosuch").is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
