//! The encodings of an event beyond the HEC event that the configured destinations need, and
//! which destination sends which (see [`sluice_proto::batch`], "Other encodings").
//!
//! Worked out once from the destination plan: destinations with the same encoding share it
//! (two BSD relays read one body). The receivers write each extra encoding of an event only
//! when the event goes to a destination that uses it; with no such destination configured
//! the receive path is what it was (one branch per event).

use sluice_proto::Message;
use sluice_proto::batch::UNROUTED;
use sluice_proto::classify::{Classification, SourceMeta};
use sluice_proto::event::{RelayEncoding, RelayFormat, encode_relay};
use sluice_proto::kafka::{RecordTemplate, encode_record};

use crate::config::{DestKind, DestPlan, RelayKind};

/// One extra encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// A syslog relay's line.
    Relay(RelayEncoding),
    /// A Kafka record: topic, key and value.
    Kafka(std::sync::Arc<RecordTemplate>),
}

impl Encoding {
    /// The encoding destination `d` sends, `None` for the HEC event.
    fn of(d: &DestPlan) -> Option<Encoding> {
        match &d.kind {
            DestKind::Relay(r) => Some(Encoding::Relay(RelayEncoding {
                format: match r.kind {
                    RelayKind::Syslog => RelayFormat::Rfc5424,
                    RelayKind::Bsd => RelayFormat::Bsd,
                },
                skip_empty_message: super::relay::skips_empty_message(r),
            })),
            // Checked by the configuration's validation; a template that does not parse
            // here sends the HEC event alone (the Kafka output refuses what it cannot read).
            DestKind::Kafka(k) => k
                .record_template(d.id.var())
                .ok()
                .map(|t| Encoding::Kafka(std::sync::Arc::new(t))),
            DestKind::Hec { .. } | DestKind::File(_) | DestKind::Archive { .. } => None,
        }
    }
}

/// The extra encodings in use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encodings {
    /// Encoding `k + 1` and the destinations (bits) that send it.
    extra: Vec<(Encoding, u64)>,
    /// The destinations of an event that was not routed: the GLOBAL ones.
    unrouted: u64,
}

impl Encodings {
    /// The encodings of `plan`, and each destination's encoding index (0: the HEC event).
    /// `unrouted` is the destination set of events no routing rule names.
    pub fn from_plan(plan: &[DestPlan], unrouted: u64) -> (Encodings, Vec<usize>) {
        let mut extra: Vec<(Encoding, u64)> = Vec::new();
        let mut index = Vec::with_capacity(plan.len());
        for (i, d) in plan.iter().enumerate() {
            let bit = 1u64.checked_shl(i as u32).unwrap_or(0);
            match Encoding::of(d) {
                None => index.push(0),
                Some(e) => match extra.iter().position(|(x, _)| *x == e) {
                    Some(k) => {
                        extra[k].1 |= bit;
                        index.push(k + 1);
                    }
                    None => {
                        extra.push((e, bit));
                        index.push(extra.len());
                    }
                },
            }
        }
        (Encodings { extra, unrouted }, index)
    }

    /// How many extra encodings (0: none configured).
    #[inline]
    pub fn len(&self) -> usize {
        self.extra.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.extra.is_empty()
    }

    /// The destination set of an event routed to `dests` (`None`: not routed).
    #[inline]
    pub fn resolve(&self, dests: Option<u64>) -> u64 {
        match dests {
            None | Some(UNROUTED) => self.unrouted,
            Some(d) => d,
        }
    }

    /// Writes encoding `k + 1` of the event to `out` when it goes to a destination (in
    /// `to`) that sends it; nothing otherwise. `event` is its HEC event.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn write(
        &self,
        k: usize,
        to: u64,
        out: &mut Vec<u8>,
        event: &[u8],
        msg: &Message<'_>,
        class: &Classification<'_, '_>,
        src: &SourceMeta<'_>,
        recv_unix_micros: i64,
    ) {
        let Some((e, mask)) = self.extra.get(k) else {
            return;
        };
        if to & mask == 0 {
            return;
        }
        match e {
            Encoding::Relay(r) => {
                encode_relay(out, *r, msg, class, src, recv_unix_micros);
            }
            Encoding::Kafka(t) => encode_record(out, t, msg, class, src, event),
        }
    }
}
