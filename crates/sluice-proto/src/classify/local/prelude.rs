//! The names SC4S's own configuration defines that operators' app-parsers call: its named
//! filters and rewrites, `p_set_netsource_fields`, `r_set_splunk_dest_default` and
//! `_update`/`_update_v2`, `date-parser-nofilter`, `p_add_context_splunk`, and the `t_*`
//! templates. Written in the dialect itself (sluice's own definitions of what SC4S
//! documents these to do) and loaded before the operator's files, so they compile and run
//! like any other declaration. `sluice-splunk-metadata()` is sluice's own driver for the
//! `splunk_metadata.csv` lookup.

pub(crate) const PATH: &str = "<sluice: SC4S library>";

pub(crate) const TEXT: &str = r#"
# Tags the SC4S source path sets, as filters and rewrites.
filter f_is_source_identified { tags("source_identified") };
filter f_is_dest_splunk_null_queue { tags("dest_splunk:null_queue") };
filter f_is_agg { tags("agg") };
filter f_is_nevermatch { tags("nevermatch") };
filter f_is_rfc { tags("wireformat:rfc") };
filter f_is_rfc3164 { tags("wireformat:rfc3164") };
filter f_is_rfc5424 { tags("wireformat:rfc5424") };
filter f_is_raw { tags("wireformat:raw") };
filter f_host_is_ip {
    host('^[0-9]{1,3}(\.[0-9]{1,3}){3}$') or host('^[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7}(%.+)?$')
    or host('^::ffff:[0-9]{1,3}(\.[0-9]{1,3}){3}$')
};
filter f_host_is_nil_or_ip { (host('^-') or filter(f_host_is_ip)) and not "${HOST}" eq "127.0.0.1" };

rewrite set_rfc { set-tag("wireformat:rfc"); };
rewrite set_rfc3164 { set-tag("wireformat:rfc3164"); };
rewrite set_rfc5424 { set-tag("wireformat:rfc5424"); };
rewrite set_raw { set-tag("wireformat:raw"); };
rewrite r_set_source_identified { set-tag("source_identified"); };
rewrite r_set_dest_splunk_null_queue { set-tag("dest_splunk:null_queue"); };

# The vendor and product of a source (sc4s-vps applications, dedicated listeners).
block parser p_set_netsource_fields(vendor() product()) {
    channel {
        rewrite {
            set("`vendor`", value(".netsource.sc4s_vendor") condition("`vendor`" ne ""));
            set("`product`", value(".netsource.sc4s_product") condition("`product`" ne ""));
            set("`vendor`_`product`", value(".netsource.sc4s_vendor_product"));
            set-tag("vps");
            set-tag("ns_vendor:`vendor`");
            set-tag("ns_product:`product`");
        };
    };
};

# The Splunk metadata of an event: every field, with SC4S's defaults.
block rewrite r_set_splunk_dest_default(
    index("main")
    source("${.splunk.source}")
    sourcetype("${.splunk.sourcetype}")
    template('$(if (tags("wireformat:rfc5424")) "t_5424_hdr_sdata_compact" "t_hdr_msg")')
    tags("default")
    vendor("${fields.sc4s_vendor}")
    product("${fields.sc4s_product}")
    class("${fields.sc4s_class}")
) {
    set("`index`", value(".splunk.index"));
    set("`source`", value(".splunk.source"));
    set("`sourcetype`", value(".splunk.sourcetype"));
    set("`template`", value(".splunk.sc4s_template"));
    set("`vendor`", value("fields.sc4s_vendor") condition("`vendor`" ne ""));
    set("`product`", value("fields.sc4s_product") condition("`product`" ne ""));
    set("`class`", value("fields.sc4s_class") condition("`class`" ne ""));
};

# Changes some of it, when the condition holds; vendor "null" drops the event from Splunk.
block rewrite r_set_splunk_dest_update(
    index("${.splunk.index}")
    source("${.splunk.source}")
    sourcetype("${.splunk.sourcetype}")
    template("${.splunk.sc4s_template}")
    template_hec("${.splunk.sc4s_hec_template}")
    vendor("${fields.sc4s_vendor}")
    product("${fields.sc4s_product}")
    class("${fields.sc4s_class}")
    tag("")
    condition("1" eq "1")
) {
    channel {
        if (`condition`) {
            rewrite {
                set("`index`", value(".splunk.index"));
                set("`source`", value(".splunk.source"));
                set("`sourcetype`", value(".splunk.sourcetype"));
                set("`template`", value(".splunk.sc4s_template"));
                set("`template_hec`", value(".splunk.sc4s_hec_template"));
                set("`vendor`", value("fields.sc4s_vendor") condition("`vendor`" ne ""));
                set("`product`", value("fields.sc4s_product") condition("`product`" ne ""));
                set("`class`", value("fields.sc4s_class") condition("`class`" ne ""));
            };
        };
        if ("`vendor`" eq "null") {
            rewrite(r_set_dest_splunk_null_queue);
        };
    };
};

block rewrite r_set_splunk_dest_update_v2(
    index("${.splunk.index}")
    source("${.splunk.source}")
    sourcetype("${.splunk.sourcetype}")
    template("${.splunk.sc4s_template}")
    template_hec("${.splunk.sc4s_hec_template}")
    class("${fields.sc4s_class}")
    tags("")
    condition("1" eq "1")
) {
    channel {
        if (`condition`) {
            rewrite {
                set("`index`", value(".splunk.index"));
                set("`source`", value(".splunk.source"));
                set("`sourcetype`", value(".splunk.sourcetype"));
                set("`template`", value(".splunk.sc4s_template"));
                set("`template_hec`", value(".splunk.sc4s_hec_template"));
                set("`class`", value("fields.sc4s_class") condition("`class`" ne ""));
            };
        };
    };
};

# splunk_metadata.csv for the event's vendor, product and class.
parser p_add_context_splunk { sluice-splunk-metadata(); };

# A stamp from a field; when no format fits, the event keeps its stamp and says why.
block parser date-parser-nofilter(format() template()) {
    channel {
        if {
            parser { date-parser(format(`format`) template("`template`")); };
            rewrite { guess-time-zone(); };
        } else {
            rewrite { set("dtparse: Expected: `format`; Actual: `template`", value("fields.sc4s_error")); };
        };
    };
};

block parser date-parser-alts-nofilter(fmt_one() fmt_two() template()) {
    channel {
        if {
            parser { date-parser(format(`fmt_one`) template("`template`") flags(guess-timezone)); };
            filter {
                '$(round $(- "$S_UNIXTIME" "$R_UNIXTIME"))' < 43200
                and '$(round $(- "$S_UNIXTIME" "$R_UNIXTIME"))' > -43200
            };
        } elif {
            parser { date-parser(format(`fmt_two`) template("`template`") flags(guess-timezone)); };
            filter {
                '$(round $(- "$S_UNIXTIME" "$R_UNIXTIME"))' < 43200
                and '$(round $(- "$S_UNIXTIME" "$R_UNIXTIME"))' > -43200
            };
        } else {
            rewrite { set("dtparse: Expected: `fmt_one` OR `fmt_two`; Actual: `template`", value("fields.sc4s_error")); };
        };
    };
};

# SC4S's event templates.
template t_standard { template("${MONTH_ABBREV} ${DAY} ${HOUR}:${MIN}:${SEC} ${HOST} ${MSGHDR}${MESSAGE}"); };
template t_msg_only { template("${MSGONLY}"); };
template t_msg_trim { template("$(strip $MSGONLY)"); };
template t_everything { template("${ISODATE} ${HOST} ${LEGACY_MSGHDR}${MESSAGE}"); };
template t_hdr_msg { template("${MSGHDR}${MESSAGE}"); };
template t_legacy_hdr_msg { template("${LEGACY_MSGHDR}${MESSAGE}"); };
template t_program_msg { template("${PROGRAM}[${PID}]: ${MESSAGE}"); };
template t_program_nopid_msg { template("${PROGRAM}: ${MESSAGE}"); };
template t_hdr_sdata_msg { template("${MSGHDR}${MSGID} ${SDATA} ${MESSAGE}"); };
template t_5424_hdr_sdata_msg { template('${ISODATE} $(if ("${HOST}" ne "") "${HOST}" "-") ${PROGRAM:--} ${PID:--} ${MSGID:--} ${SDATA:--}${MESSAGE}'); };
template t_5424_hdr_msg { template('${ISODATE} $(if ("${HOST}" ne "") "${HOST}" "-") ${PROGRAM:--} ${PID:--} ${MSGID:--} ${MESSAGE}'); };
template t_5424_hdr_sdata { template('${ISODATE} $(if ("${HOST}" ne "") "${HOST}" "-") ${PROGRAM:--} ${PID:--} ${MSGID:--} ${SDATA}'); };
template t_5424_hdr_sdata_compact { template('- - ${PROGRAM:--} ${PID:--} ${MSGID:--} ${SDATA:--}${MESSAGE}'); };
template t_JSON_3164 { template('$(format-json --scope rfc3164 --pair PRI="<$PRI>" --key LEGACY_MSGHDR --key RAWMSG --exclude FACILITY --exclude PRIORITY)'); };
template t_JSON_5424 { template('$(format-json --scope rfc5424 --key RAWMSG --exclude DATE --exclude FACILITY --exclude PRIORITY --exclude HOST)'); };
template t_JSON_5424_ALL { template('$(format-json --scope rfc5424 --exclude DATE --key ISODATE --key RAWMSG)'); };
template t_JSON_5424_SDATA { template('$(format-json --scope rfc5424 --exclude DATE --exclude HOST --exclude FACILITY --exclude PRIORITY --exclude MESSAGE --exclude RAWMSG)'); };
template t_fallback_kv { template("$(if (\"${RAWMSG}\" ne \"\") \"RAWMSG=${RAWMSG}\n\" \"\")$(if (\"${PRI}\" ne \"\") \"PRI=${PRI}\n\" \"\")$(if (\"${LEGACY_MSGHDR}\" ne \"\") \"LEGACY_MSGHDR=${LEGACY_MSGHDR}\n\" \"\")$(if (\"${PROGRAM}\" ne \"\") \"PROGRAM=${PROGRAM}\n\" \"\")$(if (\"${PID}\" ne \"\") \"PID=${PID}\n\" \"\")$(if (\"${MESSAGE}\" ne \"\") \"MESSAGE=${MESSAGE}\n\" \"\")"); };
template t_json_values { template('$(format-json --key .metadata.* --key .SDATA.* --key .values.* --shift-levels 2)'); };
template t_kv_values { template('$(format-welf --key .metadata.* --key .SDATA.* --key .values.* --shift-levels 2)'); };
template t_json_values_msg { template('$(format-json --key .metadata.* --key .SDATA.* --key .values.* --shift-levels 2 message=$MSG)'); };
template t_kv_values_msg { template('$(format-welf --key .metadata.* --key .SDATA.* --key .values.* --shift-levels 2 message=$MSG)'); };
"#;
