//! One type per thing that can happen to sluice. See the [parent module](super) for the
//! model: each event logs and counts when emitted, and its module declares the families it
//! counts into.
//!
//! | event | counts into | logs |
//! | --- | --- | --- |
//! | [`Received`] | `sluice_received_total`, `sluice_received_bytes_total`, `sluice_parsed_total`, `sluice_truncated_total` | trace, rate-limited |
//! | [`BatchEmitted`] | `sluice_batches_total` | trace, rate-limited |
//! | [`OutputGone`] | its receiver's lost events, shown in `sluice_dropped_total{reason="output_gone"}` | error, rate-limited |
//! | [`Classified`] | — (a decision, for debugging) | debug, rate-limited |
//! | [`ConnectionAccepted`] | `sluice_tcp_connections_total` | debug, rate-limited |
//! | [`ConnectionRefused`] | `sluice_tcp_closed_total{reason="limit"}` | warn, rate-limited |
//! | [`ConnectionClosed`] | `sluice_tcp_closed_total{reason}` | debug, rate-limited per reason |
//! | [`AcceptFailed`] | `sluice_tcp_accept_errors_total` | warn, rate-limited |
//! | [`FramesRead`] | `sluice_tcp_frames_total{kind}`, `sluice_tcp_discarded_bytes_total` | debug (truncations), rate-limited |
//! | [`TlsHandshakeCompleted`] | `sluice_tls_handshakes_total{version,suite}` | debug |
//! | [`TlsHandshakeFailed`] | `sluice_tls_handshake_failures_total{reason}` | warn, rate-limited |
//! | [`CertificateReloaded`] / [`CertificateReloadFailed`] | `sluice_tls_reloads_total{outcome}` | info / error |
//! | [`ConfigReloaded`] / [`ConfigReloadFailed`] | `sluice_reload_total{result}` | info / error |
//! | [`WindowFull`] | `sluice_window_full_total` | debug, rate-limited |
//! | [`WindowWaitEnded`] | `sluice_window_wait_seconds_total` | trace |
//! | [`Retried`] | `sluice_retried_total{reason}`, `sluice_retried_requests_total{reason}` | debug, rate-limited |
//! | [`HecRequests`] | `sluice_hec_requests_total{outcome}` | — (the HEC client logs each failure) |
//! | [`HecBytesSent`] | `sluice_hec_bytes_total{kind}` | — |
//! | [`OutputWriteFailed`] | `sluice_output_write_errors_total` | error, rate-limited |
//!
//! Delivery outcomes (`sluice_delivered_total`, `sluice_dropped_total`,
//! `sluice_delivery_*`) are counted once per batch by each destination's completion sink
//! (`output::DestinationStats`) and rendered with the daemon's state (`crate::metrics`).

pub mod control;
pub mod delivery;
pub mod receive;
pub mod stream;
pub mod tls;

pub use control::{ConfigReloadFailed, ConfigReloaded, WindowEvents, WindowFull, WindowWaitEnded};
pub use delivery::{
    DeliveryEvents, HecBridge, HecBytesSent, HecRequests, OutputWriteFailed, Retried,
};
pub use receive::{BatchEmitted, Classified, OutputGone, Received, ReceiverCounters};
pub use stream::{
    AcceptFailed, ConnectionAccepted, ConnectionClosed, ConnectionRefused, FramesRead, StreamEvents,
};
pub use tls::{
    CertificateReloadFailed, CertificateReloaded, TlsEvents, TlsHandshakeCompleted,
    TlsHandshakeFailed,
};

/// Something that happened. `emit` logs it and counts it on `handle`: the metric handles (and
/// log allowances) of the component it happened in, or the whole [`Metrics`](super::Metrics)
/// for events without a component of their own.
pub trait InternalEvent: Sized {
    type Handle: ?Sized;
    fn emit(self, handle: &Self::Handle);
}
