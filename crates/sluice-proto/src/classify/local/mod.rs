//! The operator's own SC4S app-parsers: `local/config/app_parsers/*.conf`, SC4S's dialect of
//! the syslog-ng configuration language, compiled once (at start and on reload) into the
//! same classifier the built-in vendors are in.
//!
//! * [`lex`], [`decl`]: the front end. Files are read into declarations (applications,
//!   blocks, named filters/parsers/rewrites, templates) whose bodies stay raw until used,
//!   as syslog-ng expands them; every token knows its file, line and column.
//! * [`compile`]: bodies into [`ir`] (filters, statements, templates), names interned
//!   ([`names`]), regexes decided per pattern ([`re`]), a block instantiated per call with
//!   its arguments. SC4S's own library (`r_set_splunk_dest_default`, the `t_*` templates,
//!   ...) is a [`prelude`] in the dialect itself.
//! * [`eval`]: running an application on one message, with its values in a per-message
//!   arena ([`Scratch`]); [`run`]: where each context runs in the classification, and how
//!   what an application changed becomes the classification's.
//! * [`prefilter`]: what an application's filter needs, so that the dispatcher skips it
//!   with a lookup.
//!
//! sans-IO: the caller reads the files ([`SourceFile`]) and gives the environment and a
//! reader for the files a filter names (`in-list()`) through [`LoadOptions`].

mod compile;
mod decl;
mod eval;
mod gate;
mod ir;
mod lex;
mod names;
pub(crate) mod prefilter;
mod prelude;
mod program;
mod re;
pub(crate) mod run;
mod span;
mod stage;
#[cfg(test)]
mod tests;

use std::cell::OnceCell;

pub use eval::Overlay;
pub(crate) use eval::Stage;
pub use ir::Context;
pub use program::Program;
pub use span::{Diagnostic, Severity, SourceFile};

/// What loading needs from outside: the environment (backtick references to unset names
/// are empty) and a reader for the files `in-list()` names.
#[derive(Clone, Copy)]
pub struct LoadOptions<'a> {
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub read: &'a dyn Fn(&str) -> Result<String, String>,
    /// Unsupported constructs are errors instead of skipping the application.
    pub strict: bool,
}

impl std::fmt::Debug for LoadOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("strict", &self.strict)
            .finish_non_exhaustive()
    }
}

/// The memory local applications keep a message's values in: reused from message to
/// message ([`Scratch::reset`]), untouched (and unallocated) while no local application
/// runs.
#[derive(Debug, Default)]
pub struct Scratch {
    bump: OnceCell<bumpalo::Bump>,
    /// Kept across messages ([`Scratch::reset`] leaves it): its entries name the gate
    /// they are for, so a reloaded program's gates never read an old one's verdicts.
    memo: OnceCell<gate::Memo>,
}

impl Scratch {
    pub const fn new() -> Scratch {
        Scratch {
            bump: OnceCell::new(),
            memo: OnceCell::new(),
        }
    }

    /// Forgets the last message's values, keeping the memory.
    pub fn reset(&mut self) {
        if let Some(b) = self.bump.get_mut() {
            b.reset();
        }
    }

    pub(crate) fn bump(&self) -> &bumpalo::Bump {
        self.bump.get_or_init(bumpalo::Bump::new)
    }

    pub(crate) fn memo(&self) -> &gate::Memo {
        self.memo.get_or_init(gate::Memo::default)
    }
}

/// One loaded application, for `sluice run --check`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppSummary {
    pub name: String,
    /// The context (app-parser topic).
    pub context: String,
    pub file: String,
    pub line: u32,
    /// What the dispatcher checks before running it (`every message`: nothing).
    pub prefilter: String,
}

/// One selector application: which destination it picks events for (or, `drop`, keeps
/// events from).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    /// The syslog-ng destination name after `sc4s-lp-dest-select-[drop-]`.
    pub destination: String,
    pub drop: bool,
    /// The application's index, for [`crate::classify::Classifier::selector_takes`].
    pub app: u32,
    pub name: String,
    pub file: String,
    pub line: u32,
}

impl Program {
    /// The applications loaded, in the order they are tried within a context.
    pub fn applications(&self) -> Vec<AppSummary> {
        self.apps
            .iter()
            .map(|a| AppSummary {
                name: a.name.clone(),
                context: a.context.topic(),
                file: a.file.clone(),
                line: a.line,
                prefilter: match &a.atoms {
                    None => "every message of the context".to_owned(),
                    Some(v) if v.is_empty() => "never (its filter is always false)".to_owned(),
                    Some(v) => v
                        .iter()
                        .map(prefilter::Atom::describe)
                        .collect::<Vec<_>>()
                        .join(" or "),
                },
            })
            .collect()
    }

    /// What loading found that sluice cannot use (each with file, line and column).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Applications that are declared but not loaded: (name, context, file, line).
    pub fn skipped(&self) -> &[(String, String, String, u32)] {
        &self.skipped
    }

    /// The selector applications (`sc4s-lp-dest-select-[drop-]<destination>`), in load
    /// order; [`Selector::app`] is what [`crate::classify::Classifier::selector_takes`]
    /// runs.
    pub fn selectors(&self) -> Vec<Selector> {
        self.apps
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let (drop, d) = match &a.context {
                    Context::Select(d) => (false, d),
                    Context::SelectDrop(d) => (true, d),
                    _ => return None,
                };
                Some(Selector {
                    destination: d.clone(),
                    drop,
                    app: i as u32,
                    name: a.name.clone(),
                    file: a.file.clone(),
                    line: a.line,
                })
            })
            .collect()
    }

    /// The destinations selectors name (`sc4s-lp-dest-select-<destination>`).
    pub fn selector_destinations(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .apps
            .iter()
            .filter_map(|a| match &a.context {
                Context::Select(d) | Context::SelectDrop(d) => Some(d.clone()),
                _ => None,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    pub fn is_empty(&self) -> bool {
        self.apps.is_empty()
    }

    /// Whether some application is of `context`.
    #[inline(always)]
    pub fn has(&self, context: &Context) -> bool {
        !self.apps_of(context).is_empty()
    }

    /// A named filter (`filter f_name { ... };`), for settings that name one.
    pub fn filter_id(&self, name: &str) -> Option<u32> {
        self.named_filter(name)
    }
}
