//! The SC4S event templates (`conflib/_common/t_templates.conf`), by their SC4S names.
//!
//! A template decides how the HEC `event` text is built from the message's fields *after*
//! classification changed them (PROGRAM, PID, MESSAGE, HOST, time: see
//! [`Edit`](super::Edit)). The encoder (`hec`) renders them.

/// An SC4S template sluice renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Template {
    /// `t_standard`: `${MONTH_ABBREV} ${DAY} ${HOUR}:${MIN}:${SEC} ${HOST} ${MSGHDR}${MESSAGE}`.
    Standard,
    /// `t_msg_only`: `${MSGONLY}` (the MESSAGE, without the program header).
    MsgOnly,
    /// `t_msg_trim`: `$(strip ${MSGONLY})`.
    MsgTrim,
    /// `t_everything`: `${ISODATE} ${HOST} ${LEGACY_MSGHDR}${MESSAGE}`.
    Everything,
    /// `t_hdr_msg`: `${MSGHDR}${MESSAGE}`.
    HdrMsg,
    /// `t_legacy_hdr_msg`: `${LEGACY_MSGHDR}${MESSAGE}`.
    LegacyHdrMsg,
    /// `t_program_msg`: `${PROGRAM}[${PID}]: ${MESSAGE}`.
    ProgramMsg,
    /// `t_program_nopid_msg`: `${PROGRAM}: ${MESSAGE}`.
    ProgramNopidMsg,
    /// `t_hdr_sdata_msg`: `${MSGHDR}${MSGID} ${SDATA} ${MESSAGE}`.
    HdrSdataMsg,
    /// `t_5424_hdr_sdata_compact`: `- - ${PROGRAM:--} ${PID:--} ${MSGID:--} ${SDATA:--}${MESSAGE}`.
    Rfc5424Compact,
    /// `t_fallback_kv`: `KEY=value` lines.
    FallbackKv,
    /// `t_json_values`: the values a vendor parsed, as one JSON object.
    JsonValues,
    /// `t_kv_values`: the values a vendor parsed, as WELF `key=value` pairs.
    KvValues,
    /// `t_json_values_msg`: `t_json_values` with the MESSAGE as `message`.
    JsonValuesMsg,
    /// A template of the operator's app-parsers (or an SC4S template the encoder does not
    /// render itself), by its index in the loaded program: the classification carries its
    /// text ([`super::Classification::text`]).
    Local(u16),
}

const ALL: [Template; 14] = [
    Template::Standard,
    Template::MsgOnly,
    Template::MsgTrim,
    Template::Everything,
    Template::HdrMsg,
    Template::LegacyHdrMsg,
    Template::ProgramMsg,
    Template::ProgramNopidMsg,
    Template::HdrSdataMsg,
    Template::Rfc5424Compact,
    Template::FallbackKv,
    Template::JsonValues,
    Template::KvValues,
    Template::JsonValuesMsg,
];

impl Template {
    /// The SC4S template name.
    pub fn sc4s_name(self) -> &'static str {
        match self {
            Template::Standard => "t_standard",
            Template::MsgOnly => "t_msg_only",
            Template::MsgTrim => "t_msg_trim",
            Template::Everything => "t_everything",
            Template::HdrMsg => "t_hdr_msg",
            Template::LegacyHdrMsg => "t_legacy_hdr_msg",
            Template::ProgramMsg => "t_program_msg",
            Template::ProgramNopidMsg => "t_program_nopid_msg",
            Template::HdrSdataMsg => "t_hdr_sdata_msg",
            Template::Rfc5424Compact => "t_5424_hdr_sdata_compact",
            Template::FallbackKv => "t_fallback_kv",
            Template::JsonValues => "t_json_values",
            Template::KvValues => "t_kv_values",
            Template::JsonValuesMsg => "t_json_values_msg",
            Template::Local(_) => "a local template",
        }
    }

    /// The template for an SC4S template name, if sluice implements it.
    pub fn from_sc4s_name(name: &str) -> Option<Template> {
        Self::from_sc4s_bytes(name.as_bytes())
    }

    /// [`Template::from_sc4s_name`] of a name as bytes (as an app-parser sets it).
    pub fn from_sc4s_bytes(name: &[u8]) -> Option<Template> {
        ALL.into_iter().find(|t| t.sc4s_name().as_bytes() == name)
    }

    /// Every implemented name, for error messages.
    pub fn names() -> impl Iterator<Item = &'static str> {
        ALL.into_iter().map(Template::sc4s_name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ALL {
            assert_eq!(Template::from_sc4s_name(t.sc4s_name()), Some(t));
        }
        assert_eq!(Template::from_sc4s_name("t_nope"), None);
        assert_eq!(Template::names().count(), ALL.len());
    }
}
