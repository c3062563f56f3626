//! The CSV dialect of SC4S's context files (syslog-ng `add-contextual-data` databases) and
//! the error every context file reports.

use std::fmt;

use thiserror::Error;

/// A context file that cannot be used: which file, which line, what was expected.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ContextError {
    #[error("{file} line {line}: {reason}: {content:?}")]
    Syntax {
        file: String,
        line: usize,
        content: String,
        reason: String,
    },
    #[error("cannot read {file}: {reason}")]
    Read { file: String, reason: String },
}

impl ContextError {
    pub(crate) fn syntax(
        file: &str,
        line: usize,
        content: &str,
        reason: impl Into<String>,
    ) -> Self {
        ContextError::Syntax {
            file: file.to_owned(),
            line,
            content: content.to_owned(),
            reason: reason.into(),
        }
    }
}

/// A row that was accepted but has no effect in sluice (SC4S accepts these too); the caller
/// should log it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextWarning {
    pub file: String,
    pub line: usize,
    pub content: String,
    pub reason: String,
}

impl fmt::Display for ContextWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} line {}: {}: {:?}",
            self.file, self.line, self.reason, self.content
        )
    }
}

/// One `a,b,c` row with its 1-based line number and the line as written.
pub(crate) struct Row<'a> {
    pub line: usize,
    pub raw: &'a str,
    pub fields: [String; 3],
}

/// The three-column rows of a context CSV: blank lines and lines starting with `#` are
/// skipped; fields may be double-quoted (`""` is a quote inside); spaces around unquoted
/// fields are trimmed. `what` names the columns for the error message (`key,field,value`).
pub(crate) fn rows3<'a>(
    file: &str,
    text: &'a str,
    what: &str,
) -> Result<Vec<Row<'a>>, ContextError> {
    let mut rows = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim().trim_start_matches('\u{feff}');
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let fields = split_line(trimmed).map_err(|r| ContextError::syntax(file, line, raw, r))?;
        let fields = <[String; 3]>::try_from(fields).map_err(|_| {
            ContextError::syntax(file, line, raw, format!("expected three fields: {what}"))
        })?;
        rows.push(Row { line, raw, fields });
    }
    Ok(rows)
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines).
pub(crate) fn split_line(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek() == Some(&' ') || chars.peek() == Some(&'\t') {
            chars.next();
        }
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    None => return Err("unterminated quoted field"),
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            while chars.peek() == Some(&' ') || chars.peek() == Some(&'\t') {
                chars.next();
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(_) => return Err("text after a closing quote"),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim().to_owned());
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("quote inside an unquoted field"),
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim().to_owned());
        }
    }
}
