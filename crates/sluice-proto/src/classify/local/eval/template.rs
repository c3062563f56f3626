//! Rendering templates and template functions; syslog-ng's macros.

use bumpalo::collections::Vec as BVec;

use crate::message::Timestamp;
use crate::time::civil_from_days;

use super::super::ir::{ArithOp, FormatSpec, Func, ListOp, Part, TemplateRef, Tmpl, scope};
use super::super::names::{DatePart, Macro, Reference, Stamp, id};
use super::State;

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// How deep `$(template ...)` may nest.
const MAX_TEMPLATE_DEPTH: usize = 16;

impl<'p: 'm, 'm: 'a, 'a> State<'p, 'm, 'a> {
    /// The text of `t` now.
    pub fn render(&mut self, t: &'p Tmpl) -> &'m [u8] {
        match t.parts.as_slice() {
            [] => b"",
            [Part::Ref { r, default: None }] => {
                // A pair set here already lives as long as the message: no copy.
                if let Reference::Name(n) = *r
                    && let Some(v) = self.set_here(n)
                {
                    return v.unwrap_or_default();
                }
                let v = self.reference(*r).unwrap_or_default();
                self.keep(v)
            }
            // The program outlives the message: a literal is read where it is.
            [Part::Lit(l)] => l,
            _ => {
                // Room for a typical value at once: growing a byte at a time from empty
                // cost more than the rendering.
                let mut out = BVec::with_capacity_in(64, self.arena);
                self.render_into(t, &mut out, 0);
                out.into_bump_slice()
            }
        }
    }

    pub(crate) fn render_into(&mut self, t: &'p Tmpl, out: &mut BVec<'m, u8>, depth: usize) {
        for part in &t.parts {
            match part {
                Part::Lit(l) => out.extend_from_slice_copy(l),
                Part::Ref { r, default } => {
                    let v = self.reference(*r).unwrap_or_default();
                    if v.is_empty()
                        && let Some(d) = default
                    {
                        out.extend_from_slice_copy(d);
                    } else {
                        out.extend_from_slice_copy(v);
                    }
                }
                Part::Func(f) => self.function(f, out, depth),
            }
        }
    }

    fn render_all(&mut self, args: &'p [Tmpl], depth: usize) -> BVec<'m, u8> {
        // Room for a typical value at once, as in `render`.
        let mut out = BVec::with_capacity_in(64, self.arena);
        self.render_all_into(args, &mut out, depth);
        out
    }

    /// The arguments, separated by a space, appended to `out`.
    fn render_all_into(&mut self, args: &'p [Tmpl], out: &mut BVec<'m, u8>, depth: usize) {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            self.render_into(a, out, depth);
        }
    }

    fn function(&mut self, f: &'p Func, out: &mut BVec<'m, u8>, depth: usize) {
        match f {
            Func::If(cond, a, b) => {
                let yes = self.filter(cond);
                self.render_into(if yes { a } else { b }, out, depth);
            }
            // Rendered where they go, then changed in place.
            Func::Lowercase(args) => {
                let start = out.len();
                self.render_all_into(args, out, depth);
                out[start..].make_ascii_lowercase();
            }
            Func::Uppercase(args) => {
                let start = out.len();
                self.render_all_into(args, out, depth);
                out[start..].make_ascii_uppercase();
            }
            Func::Strip(args) | Func::Echo(args) => {
                let strip = matches!(f, Func::Strip(_));
                for (i, a) in args.iter().enumerate() {
                    let mut v = BVec::new_in(self.arena);
                    self.render_into(a, &mut v, depth);
                    let s: &[u8] = if strip { v.trim_ascii() } else { &v };
                    if i > 0 && !(strip && s.is_empty()) {
                        out.push(b' ');
                    }
                    out.extend_from_slice_copy(s);
                }
            }
            Func::Length(args) => {
                let v = self.render_all(args, depth);
                let n = String::from_utf8_lossy(&v).chars().count();
                out.extend_from_slice_copy(n.to_string().as_bytes());
            }
            Func::Substr(t, start, len) => {
                let text = self.render(t);
                let s = text_number(self.render(start)) as i64;
                let chars: Vec<char> = String::from_utf8_lossy(text).chars().collect();
                let n = chars.len() as i64;
                let from = if s < 0 { (n + s).max(0) } else { s.min(n) };
                let to = match len {
                    Some(l) => {
                        let l = text_number(self.render(l)) as i64;
                        if l < 0 {
                            (n + l).max(from)
                        } else {
                            (from + l).min(n)
                        }
                    }
                    None => n,
                };
                let piece: String = chars[from as usize..to.max(from) as usize].iter().collect();
                out.extend_from_slice_copy(piece.as_bytes());
            }
            Func::Sanitize {
                ctrl,
                invalid,
                replacement,
                args,
            } => {
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push(b'/');
                    }
                    let v = self.render(a);
                    for &b in v {
                        if (*ctrl && b < 0x20) || invalid.contains(&b) {
                            out.push(*replacement);
                        } else {
                            out.push(b);
                        }
                    }
                }
            }
            Func::ReplaceDelimiter(old, new, text) => {
                let old = self.render(old).to_vec();
                let new = self.render(new);
                let text = self.render(text);
                for &b in text {
                    if old.contains(&b) {
                        out.extend_from_slice_copy(new);
                    } else {
                        out.push(b);
                    }
                }
            }
            Func::Padding(t, width, pad) => {
                let v = self.render(t);
                let len = String::from_utf8_lossy(v).chars().count();
                if len < *width && !pad.is_empty() {
                    for i in 0..(width - len) {
                        out.push(pad[i % pad.len()]);
                    }
                }
                out.extend_from_slice_copy(v);
            }
            Func::FormatJson(spec) => self.format_json(spec, out, depth),
            Func::FormatWelf(spec) => self.format_welf(spec, out, depth),
            Func::Template(r) => {
                if depth >= MAX_TEMPLATE_DEPTH {
                    return;
                }
                let id = match r {
                    TemplateRef::Static(i) => Some(*i),
                    TemplateRef::Dynamic(t) => {
                        let name = self.render(t);
                        std::str::from_utf8(name)
                            .ok()
                            .and_then(|n| self.p.template_by_name(n))
                    }
                };
                if let Some(i) = id {
                    let p = self.p;
                    self.render_into(&p.templates[i as usize].1, out, depth + 1);
                }
            }
            Func::Implode(sep, args) => {
                let sep = self.render(sep);
                let mut items = Vec::new();
                for a in args {
                    let v = self.render(a);
                    items.extend(list_items(v));
                }
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice_copy(sep);
                    }
                    out.extend_from_slice_copy(it);
                }
            }
            Func::Explode(sep, args) => {
                let sep = self.render(sep).to_vec();
                let mut items: Vec<Vec<u8>> = Vec::new();
                for a in args {
                    let v = self.render(a);
                    if sep.is_empty() {
                        items.push(v.to_vec());
                        continue;
                    }
                    let mut rest = v;
                    loop {
                        match memchr::memmem::find(rest, &sep) {
                            Some(p) => {
                                items.push(rest[..p].to_vec());
                                rest = &rest[p + sep.len()..];
                            }
                            None => {
                                items.push(rest.to_vec());
                                break;
                            }
                        }
                    }
                }
                write_list(out, items.iter().map(Vec::as_slice));
            }
            Func::List(op, args) => {
                let mut items: Vec<Vec<u8>> = Vec::new();
                for a in args {
                    let v = self.render(a);
                    items.extend(list_items(v));
                }
                let n = items.len() as i64;
                let index = |i: i64| if i < 0 { n + i } else { i };
                match *op {
                    ListOp::Concat => write_list(out, items.iter().map(Vec::as_slice)),
                    ListOp::Head => {
                        if let Some(f) = items.first() {
                            out.extend_from_slice_copy(f);
                        }
                    }
                    ListOp::Last => {
                        if let Some(f) = items.last() {
                            out.extend_from_slice_copy(f);
                        }
                    }
                    ListOp::Tail => write_list(out, items.iter().skip(1).map(Vec::as_slice)),
                    ListOp::Count => out.extend_from_slice_copy(n.to_string().as_bytes()),
                    ListOp::Nth(i) => {
                        let i = index(i);
                        if (0..n).contains(&i) {
                            out.extend_from_slice_copy(&items[i as usize]);
                        }
                    }
                    ListOp::Slice(a, b) => {
                        let a = index(a.unwrap_or(0)).clamp(0, n);
                        let b = index(b.unwrap_or(n)).clamp(0, n);
                        if a < b {
                            write_list(
                                out,
                                items[a as usize..b as usize].iter().map(Vec::as_slice),
                            );
                        }
                    }
                }
            }
            Func::Arith(op, a, b) => {
                let x = text_number(self.render(a));
                let y = text_number(self.render(b));
                let r = match op {
                    ArithOp::Add => Some(x + y),
                    ArithOp::Sub => Some(x - y),
                    ArithOp::Mul => Some(x * y),
                    ArithOp::Div => (y != 0.0).then(|| x / y),
                    ArithOp::Rem => (y != 0.0).then(|| x % y),
                };
                match r {
                    Some(r) => write_number(out, r),
                    None => out.extend_from_slice_copy(b"NaN"),
                }
            }
            Func::Round(t, digits) => {
                let x = text_number(self.render(t));
                let s = format!("{:.*}", usize::from(*digits), x);
                out.extend_from_slice_copy(s.as_bytes());
            }
            Func::Ceil(t) => write_number(out, text_number(self.render(t)).ceil()),
            Func::Floor(t) => write_number(out, text_number(self.render(t)).floor()),
            Func::Ipv4ToInt(args) => {
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    let v = self.render(a);
                    match std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.trim().parse::<std::net::Ipv4Addr>().ok())
                    {
                        Some(ip) => {
                            out.extend_from_slice_copy(u32::from(ip).to_string().as_bytes())
                        }
                        None => out.extend_from_slice_copy(v),
                    }
                }
            }
            Func::Basename(t) => {
                let v = self.render(t);
                let v = v.strip_suffix(b"/").unwrap_or(v);
                let at = v.iter().rposition(|&b| b == b'/').map_or(0, |p| p + 1);
                out.extend_from_slice_copy(&v[at..]);
            }
            Func::Dirname(t) => {
                let v = self.render(t);
                match v.iter().rposition(|&b| b == b'/') {
                    Some(0) => out.push(b'/'),
                    Some(p) => out.extend_from_slice_copy(&v[..p]),
                    None => out.push(b'.'),
                }
            }
            Func::UrlEncode(args) => {
                let v = self.render_all(args, depth);
                for &b in v.iter() {
                    if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                        out.push(b);
                    } else {
                        const HEX: &[u8; 16] = b"0123456789ABCDEF";
                        out.extend_from_slice_copy(&[
                            b'%',
                            HEX[usize::from(b >> 4)],
                            HEX[usize::from(b & 15)],
                        ]);
                    }
                }
            }
            Func::UrlDecode(args) => {
                let v = self.render_all(args, depth);
                let mut i = 0;
                while i < v.len() {
                    if v[i] == b'%'
                        && let Some(h) = v.get(i + 1..i + 3)
                        && let Ok(b) =
                            u8::from_str_radix(std::str::from_utf8(h).unwrap_or("zz"), 16)
                    {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    out.push(v[i]);
                    i += 1;
                }
            }
            Func::Base64Encode(args) => {
                let v = self.render_all(args, depth);
                base64(&v, out);
            }
            Func::IndentMultiLine(args) => {
                let v = self.render_all(args, depth);
                for &b in v.iter() {
                    out.push(b);
                    if b == b'\n' {
                        out.push(b'\t');
                    }
                }
            }
        }
    }

    /// A macro's text now.
    pub fn macro_value(&mut self, m: Macro) -> &'m [u8] {
        let arena = self.arena;
        let s = |x: &str| -> &'m [u8] { arena.alloc_slice_copy(x.as_bytes()) };
        match m {
            Macro::MsgHdr => {
                let program = self.get(id::PROGRAM).unwrap_or_default();
                if program.is_empty() {
                    return b"";
                }
                let pid = self.get(id::PID).unwrap_or_default();
                let mut v = BVec::with_capacity_in(program.len() + pid.len() + 4, arena);
                v.extend_from_slice_copy(program);
                if !pid.is_empty() {
                    v.push(b'[');
                    v.extend_from_slice_copy(pid);
                    v.push(b']');
                }
                v.extend_from_slice_copy(b": ");
                v.into_bump_slice()
            }
            Macro::MsgOnly => {
                let v = self.get(id::MESSAGE).unwrap_or_default();
                self.keep(v)
            }
            Macro::Sdata => match self.base.msg.structured_data {
                Some(sd) => self.keep(sd.raw()),
                None => b"",
            },
            Macro::RawMsg => self.base.msg.raw,
            Macro::SourceIp | Macro::HostFrom => {
                super::base::ip_text(self.base.src.source_ip, arena)
            }
            Macro::Source => s(&format!("s_{}", self.base.src.listener_id)),
            Macro::Pri => s(&self.current_pri().to_string()),
            Macro::Level => s(crate::message::Priority::new(self.current_pri())
                .unwrap_or(crate::message::Priority::DEFAULT)
                .severity_name()),
            Macro::LevelNum => s(&(self.current_pri() & 7).to_string()),
            Macro::Facility => s(crate::message::Priority::new(self.current_pri())
                .unwrap_or(crate::message::Priority::DEFAULT)
                .facility_name()),
            Macro::FacilityNum => s(&(self.current_pri() >> 3).to_string()),
            Macro::Tags => {
                let mut tags = Vec::new();
                self.base.tags(&mut tags);
                for (t, on) in self.tags.iter() {
                    tags.retain(|x| x.as_slice() != *t);
                    if *on {
                        tags.push(t.to_vec());
                    }
                }
                let joined = tags.join(&b","[..]);
                arena.alloc_slice_copy(&joined)
            }
            Macro::LogHost => s(self.base.loghost),
            Macro::DestPort => s(&self.base.src.dest_port.to_string()),
            Macro::Proto => s(match self.base.src.transport {
                crate::classify::Transport::Udp => "17",
                _ => "6",
            }),
            Macro::Transport => s(match self.base.src.transport {
                crate::classify::Transport::Udp => "udp",
                crate::classify::Transport::Tcp => "tcp",
                crate::classify::Transport::Tls => "tls",
            }),
            Macro::Date(which, part) => {
                let ts = match which {
                    Stamp::Sent => self.stamp.or(self.base.stamp),
                    Stamp::Received => None,
                }
                .unwrap_or(Timestamp {
                    unix_secs: self.base.now,
                    micros: 0,
                    offset_secs: 0,
                });
                s(&date_part(ts, part))
            }
        }
    }

    /// `$(format-json ...)`.
    fn format_json(&mut self, spec: &'p FormatSpec, out: &mut BVec<'m, u8>, depth: usize) {
        let pairs = self.selected_pairs(spec, depth);
        let mut tree = JsonTree::default();
        for (k, v) in &pairs {
            tree.insert(k, v);
        }
        tree.write(out);
    }

    /// `$(format-welf ...)`: `key=value` pairs, values with a space quoted.
    fn format_welf(&mut self, spec: &'p FormatSpec, out: &mut BVec<'m, u8>, depth: usize) {
        let pairs = self.selected_pairs(spec, depth);
        for (i, (k, v)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            out.extend_from_slice_copy(k.as_bytes());
            out.push(b'=');
            if v.contains(&b' ') {
                out.push(b'"');
                for &b in v.iter() {
                    if b == b'"' || b == b'\\' {
                        out.push(b'\\');
                    }
                    out.push(b);
                }
                out.push(b'"');
            } else {
                out.extend_from_slice_copy(v);
            }
        }
    }

    /// The pairs a format-json/format-welf selects, renamed, sorted by name.
    fn selected_pairs(&mut self, spec: &'p FormatSpec, depth: usize) -> Vec<(String, Vec<u8>)> {
        let mut pairs: Vec<(String, Vec<u8>)> = Vec::new();
        let wants_names = !spec.keys.is_empty()
            || spec.scopes
                & (scope::NV_PAIRS | scope::DOT_NV_PAIRS | scope::SDATA | scope::EVERYTHING)
                != 0;
        if wants_names {
            for (name, value) in self.all_names() {
                let dotted = name.starts_with('.');
                let in_scope = (spec.scopes & scope::EVERYTHING != 0)
                    || (spec.scopes & scope::NV_PAIRS != 0 && !dotted)
                    || (spec.scopes & scope::DOT_NV_PAIRS != 0 && dotted)
                    || (spec.scopes & scope::SDATA != 0 && name.starts_with(".SDATA."))
                    || spec.keys.iter().any(|g| g.matches(&name));
                if in_scope {
                    pairs.push((name, value.to_vec()));
                }
            }
        }
        let mut macros: Vec<(&str, Macro)> = Vec::new();
        if spec.scopes
            & (scope::RFC3164 | scope::RFC5424 | scope::SELECTED_MACROS | scope::EVERYTHING)
            != 0
        {
            macros.extend([
                ("FACILITY", Macro::Facility),
                ("PRIORITY", Macro::Level),
                ("DATE", Macro::Date(Stamp::Sent, DatePart::Date)),
            ]);
            if spec.scopes & (scope::SELECTED_MACROS | scope::EVERYTHING) != 0 {
                macros.extend([
                    ("TAGS", Macro::Tags),
                    ("SOURCEIP", Macro::SourceIp),
                    ("SEQNUM", Macro::Pri),
                ]);
                macros.retain(|(n, _)| *n != "SEQNUM");
            }
            for (n, id) in [
                ("HOST", id::HOST),
                ("PROGRAM", id::PROGRAM),
                ("PID", id::PID),
                ("MESSAGE", id::MESSAGE),
            ] {
                if let Some(v) = self.get(id).filter(|v| !v.is_empty()) {
                    pairs.push((n.to_owned(), v.to_vec()));
                }
            }
            if spec.scopes & (scope::RFC5424 | scope::EVERYTHING) != 0
                && let Some(v) = self.get(id::MSGID).filter(|v| !v.is_empty())
            {
                pairs.push(("MSGID".into(), v.to_vec()));
            }
        }
        for (n, m) in macros {
            let v = self.macro_value(m);
            if !v.is_empty() {
                pairs.push((n.to_owned(), v.to_vec()));
            }
        }
        pairs.retain(|(n, _)| !spec.excludes.iter().any(|g| g.matches(n)));
        // Renames: shift levels, replace prefixes, add a prefix.
        for (n, _) in pairs.iter_mut() {
            if spec.shift_levels > 0 {
                let levels: Vec<&str> = n.split('.').collect();
                *n = levels
                    .get(spec.shift_levels.min(levels.len())..)
                    .map(|l| l.join("."))
                    .unwrap_or_default();
            } else if n.starts_with('.') && !spec.leave_initial_dot {
                *n = n[1..].to_owned();
            }
            for (from, to) in &spec.replace_prefix {
                if let Some(rest) = n.strip_prefix(from.as_str()) {
                    *n = format!("{to}{rest}");
                }
            }
            if let Some(p) = &spec.add_prefix {
                *n = format!("{p}{n}");
            }
        }
        for (name, t) in &spec.pairs {
            let mut v = BVec::new_in(self.arena);
            self.render_into(t, &mut v, depth);
            pairs.retain(|(n, _)| n != name);
            pairs.push((name.clone(), v.to_vec()));
        }
        pairs.retain(|(n, v)| !(n.is_empty() || spec.omit_empty && v.is_empty()));
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|a, b| a.0 == b.0);
        pairs
    }
}

/// Dotted names as nested JSON objects (`a.b=1` is `{"a":{"b":"1"}}`), every value a string.
#[derive(Default)]
struct JsonTree {
    entries: Vec<(String, JsonNode)>,
}

enum JsonNode {
    Leaf(Vec<u8>),
    Tree(JsonTree),
}

impl JsonTree {
    fn insert(&mut self, key: &str, value: &[u8]) {
        match key.split_once('.') {
            Some((head, rest)) if !head.is_empty() && !rest.is_empty() => {
                let at = match self.entries.iter().position(|(k, _)| k == head) {
                    Some(i) => i,
                    None => {
                        self.entries
                            .push((head.to_owned(), JsonNode::Tree(JsonTree::default())));
                        self.entries.len() - 1
                    }
                };
                if let JsonNode::Leaf(_) = self.entries[at].1 {
                    self.entries[at].1 = JsonNode::Tree(JsonTree::default());
                }
                if let JsonNode::Tree(t) = &mut self.entries[at].1 {
                    t.insert(rest, value);
                }
            }
            _ => {
                if let Some(e) = self.entries.iter_mut().find(|(k, _)| k == key) {
                    e.1 = JsonNode::Leaf(value.to_vec());
                } else {
                    self.entries
                        .push((key.to_owned(), JsonNode::Leaf(value.to_vec())));
                }
            }
        }
    }

    fn write(&self, out: &mut BVec<'_, u8>) {
        let mut tmp = Vec::new();
        self.write_vec(&mut tmp);
        out.extend_from_slice_copy(&tmp);
    }

    fn write_vec(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            crate::json::write_str(out, k.as_bytes());
            out.push(b':');
            match v {
                JsonNode::Leaf(l) => crate::json::write_str(out, l),
                JsonNode::Tree(t) => t.write_vec(out),
            }
        }
        out.push(b'}');
    }
}

/// The items of a syslog-ng list (comma-separated; double-quoted items may hold commas).
pub(crate) fn list_items(v: &[u8]) -> Vec<Vec<u8>> {
    let mut items = Vec::new();
    if v.is_empty() {
        return items;
    }
    let mut i = 0;
    loop {
        let mut item = Vec::new();
        if v.get(i) == Some(&b'"') {
            i += 1;
            while i < v.len() && v[i] != b'"' {
                if v[i] == b'\\' && i + 1 < v.len() {
                    i += 1;
                }
                item.push(v[i]);
                i += 1;
            }
            i += 1;
            while i < v.len() && v[i] != b',' {
                i += 1;
            }
        } else {
            while i < v.len() && v[i] != b',' {
                item.push(v[i]);
                i += 1;
            }
        }
        items.push(item);
        if i >= v.len() {
            break;
        }
        i += 1;
    }
    items
}

/// Items as a syslog-ng list: comma-separated, an item with a comma or quote quoted.
fn write_list<'x>(out: &mut BVec<'_, u8>, items: impl Iterator<Item = &'x [u8]>) {
    for (i, it) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if it.iter().any(|&b| b == b',' || b == b'"' || b == b' ') {
            out.push(b'"');
            for &b in it {
                if b == b'"' || b == b'\\' {
                    out.push(b'\\');
                }
                out.push(b);
            }
            out.push(b'"');
        } else {
            out.extend_from_slice_copy(it);
        }
    }
}

fn text_number(v: &[u8]) -> f64 {
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .unwrap_or(0.0)
}

fn write_number(out: &mut BVec<'_, u8>, x: f64) {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        out.extend_from_slice_copy((x as i64).to_string().as_bytes());
    } else {
        out.extend_from_slice_copy(x.to_string().as_bytes());
    }
}

fn base64(v: &[u8], out: &mut BVec<'_, u8>) {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in v.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(T[(n >> 18) as usize & 63]);
        out.push(T[(n >> 12) as usize & 63]);
        out.push(if chunk.len() > 1 {
            T[(n >> 6) as usize & 63]
        } else {
            b'='
        });
        out.push(if chunk.len() > 2 {
            T[n as usize & 63]
        } else {
            b'='
        });
    }
}

/// One date macro of `ts` (in the stamp's own offset).
pub(crate) fn date_part(ts: Timestamp, part: DatePart) -> String {
    let local = ts.unix_secs + i64::from(ts.offset_secs);
    let days = local.div_euclid(86_400);
    let sod = local.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
    // 1970-01-01 was a Thursday.
    let wday = (days + 4).rem_euclid(7) as usize;
    let yday = days - crate::time::days_from_civil(y, 1, 1) + 1;
    let month = usize::from(m.clamp(1, 12) - 1);
    let offset = {
        let o = ts.offset_secs;
        let a = o.unsigned_abs();
        format!(
            "{}{:02}:{:02}",
            if o < 0 { '-' } else { '+' },
            a / 3600,
            a / 60 % 60
        )
    };
    match part {
        DatePart::Date => format!(
            "{} {:>2} {:02}:{:02}:{:02}",
            &MONTHS[month][..3],
            d,
            hh,
            mm,
            ss
        ),
        DatePart::FullDate => format!(
            "{y} {} {:>2} {:02}:{:02}:{:02}",
            &MONTHS[month][..3],
            d,
            hh,
            mm,
            ss
        ),
        DatePart::IsoDate => format!(
            "{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{:03}{offset}",
            ts.micros / 1000
        ),
        DatePart::Year => format!("{y:04}"),
        DatePart::YearDay => format!("{yday:03}"),
        DatePart::Month => format!("{m:02}"),
        DatePart::MonthWeek => format!("{}", (i64::from(d) - 1) / 7 + 1),
        DatePart::MonthAbbrev => MONTHS[month][..3].to_owned(),
        DatePart::MonthName => MONTHS[month].to_owned(),
        DatePart::Day => format!("{d:02}"),
        DatePart::Hour => format!("{hh:02}"),
        DatePart::Hour12 => format!("{:02}", if hh % 12 == 0 { 12 } else { hh % 12 }),
        DatePart::Min => format!("{mm:02}"),
        DatePart::Sec => format!("{ss:02}"),
        DatePart::Msec => format!("{:03}", ts.micros / 1000),
        DatePart::Usec => format!("{:06}", ts.micros),
        DatePart::AmPm => (if hh < 12 { "AM" } else { "PM" }).to_owned(),
        DatePart::WeekDay => format!("{wday}"),
        DatePart::WeekDayAbbrev => DAYS[wday][..3].to_owned(),
        DatePart::WeekDayName => DAYS[wday].to_owned(),
        DatePart::Week => format!("{:02}", (yday + 6 - ((wday as i64 + 6) % 7)) / 7),
        DatePart::TzOffset => offset,
        // SC4S runs syslog-ng with frac-digits(3).
        DatePart::UnixTime => format!("{}.{:03}", ts.unix_secs, ts.micros / 1000),
    }
}
