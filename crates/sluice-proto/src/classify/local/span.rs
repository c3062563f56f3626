//! Where things are: the loaded files, positions in them, and the diagnostics that name a
//! file, a line and a column.

use std::fmt;
use std::sync::Arc;

/// One app-parser file as the caller read it: its path (for messages) and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile {
            path: path.into(),
            text: text.into(),
        }
    }
}

/// A position: a byte offset in one of the loaded files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Span {
    pub file: u16,
    pub offset: u32,
}

/// The loaded files with their line tables.
#[derive(Debug, Default)]
pub(crate) struct Files {
    files: Vec<LoadedFile>,
}

#[derive(Debug)]
struct LoadedFile {
    path: String,
    text: Arc<str>,
    /// Byte offset of the start of each line.
    lines: Vec<u32>,
}

impl Files {
    pub fn add(&mut self, path: &str, text: &str) -> u16 {
        let mut lines = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                lines.push(i as u32 + 1);
            }
        }
        self.files.push(LoadedFile {
            path: path.to_owned(),
            text: text.into(),
            lines,
        });
        (self.files.len() - 1) as u16
    }

    pub fn text(&self, file: u16) -> Arc<str> {
        self.files[usize::from(file)].text.clone()
    }

    pub fn path(&self, file: u16) -> &str {
        &self.files[usize::from(file)].path
    }

    /// 1-based line and column (in characters) of `span`.
    pub fn line_col(&self, span: Span) -> (u32, u32) {
        let f = &self.files[usize::from(span.file)];
        let line = match f.lines.binary_search(&span.offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = f.lines[line] as usize;
        let end = (span.offset as usize).min(f.text.len());
        let col = f
            .text
            .get(start..end)
            .map_or(end - start, |s| s.chars().count());
        (line as u32 + 1, col as u32 + 1)
    }

    pub fn diagnostic(&self, span: Span, severity: Severity, message: String) -> Diagnostic {
        let (line, column) = self.line_col(span);
        Diagnostic {
            file: self.path(span.file).to_owned(),
            line,
            column,
            severity,
            message,
        }
    }
}

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Accepted, with a remark (a declaration nothing uses has an unsupported construct).
    Warning,
    /// A construct sluice does not implement: the application that needs it is not loaded.
    Unsupported,
    /// The file is not valid configuration: nothing is loaded.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Unsupported => "unsupported",
            Severity::Error => "error",
        }
    }
}

/// One finding, with the place it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub severity: Severity,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file,
            self.line,
            self.column,
            self.severity.as_str(),
            self.message
        )
    }
}

/// A problem found at one place while compiling; turned into a [`Diagnostic`] by
/// [`Files::diagnostic`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    pub span: Span,
    pub severity: Severity,
    pub message: String,
}

impl Problem {
    pub fn error(span: Span, message: impl Into<String>) -> Problem {
        Problem {
            span,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub fn unsupported(span: Span, message: impl Into<String>) -> Problem {
        Problem {
            span,
            severity: Severity::Unsupported,
            message: message.into(),
        }
    }
}

pub(crate) type PResult<T> = Result<T, Problem>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let mut f = Files::default();
        let id = f.add("a.conf", "ab\ncdé\n\nx");
        assert_eq!(
            f.line_col(Span {
                file: id,
                offset: 0
            }),
            (1, 1)
        );
        assert_eq!(
            f.line_col(Span {
                file: id,
                offset: 1
            }),
            (1, 2)
        );
        assert_eq!(
            f.line_col(Span {
                file: id,
                offset: 3
            }),
            (2, 1)
        );
        // After the two-byte é: the 4th character of line 2.
        assert_eq!(
            f.line_col(Span {
                file: id,
                offset: 7
            }),
            (2, 4)
        );
        assert_eq!(
            f.line_col(Span {
                file: id,
                offset: 9
            }),
            (4, 1)
        );
        let d = f.diagnostic(
            Span {
                file: id,
                offset: 4,
            },
            Severity::Unsupported,
            "x".into(),
        );
        assert_eq!(d.to_string(), "a.conf:2:2: unsupported: x");
    }
}
