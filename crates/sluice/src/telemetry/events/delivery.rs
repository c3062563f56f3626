//! What the file output counts about itself: failed writes. (What happened to the events —
//! delivered, refused, given up — is one completion event per batch, [`super::completion`];
//! what the HEC client does is [`super::hec`].)

use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

use super::InternalEvent;
use crate::telemetry::{Metrics, RateLimit};

#[derive(Debug, Default)]
pub(crate) struct Families {
    write_errors: Counter,
}

impl Families {
    pub(crate) fn register(r: &mut Registry) -> Families {
        let f = Families::default();
        r.register(
            "sluice_output_write_errors",
            "Failed writes to the output file (the batch is kept and retried)",
            f.write_errors.clone(),
        );
        f
    }
}

/// The handles and log allowances of the file output.
#[derive(Debug, Default)]
pub struct DeliveryEvents {
    write_errors: Counter,
    write_error_logs: RateLimit,
}

impl DeliveryEvents {
    pub fn register(m: &Metrics) -> DeliveryEvents {
        DeliveryEvents {
            write_errors: m.delivery.write_errors.clone(),
            ..DeliveryEvents::default()
        }
    }

    pub fn write_errors(&self) -> u64 {
        self.write_errors.get()
    }
}

/// A write to the output file failed; the batch is kept and retried after `retry_in`.
#[derive(Debug)]
pub struct OutputWriteFailed<'a> {
    pub path: &'a std::path::Path,
    pub error: &'a std::io::Error,
    pub events: u32,
    pub retry_in: std::time::Duration,
}

impl InternalEvent for OutputWriteFailed<'_> {
    type Handle = DeliveryEvents;

    fn emit(self, h: &DeliveryEvents) {
        h.write_errors.inc();
        if let Some(suppressed) = h.write_error_logs.allow() {
            tracing::error!(
                path = %self.path.display(),
                error = %self.error,
                events = self.events,
                suppressed,
                "writing to the output file failed; keeping the batch and retrying in {:?}",
                self.retry_in
            );
        }
    }
}
