//! Which view of a message a local application's context has: a leaf type, below the
//! program that picks it, the prefilter that reads it and the evaluator.

/// How the context sees MESSAGE, HOST and PROGRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Before a syslog parser ran (`sc4s-almost-syslog`, `sc4s-raw-syslog`): the source's
    /// `no-parse` view, MESSAGE is the whole line, HOST the sender.
    NoParse,
    /// After the header was parsed; HOST is lower case (SC4S lowercases it before the
    /// signature topics).
    Parsed,
}
