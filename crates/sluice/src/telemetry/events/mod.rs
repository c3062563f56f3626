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
//! | [`OutputWriteFailed`] | `sluice_output_write_errors_total` | error, rate-limited |
//!
//! Delivery outcomes, one per completion, from the destination's completion sink
//! ([`completion`]; labels `output`, `destination`):
//!
//! | event | counts into | logs |
//! | --- | --- | --- |
//! | [`BatchSubmitted`] | `sluice_delivery_in_flight_events` (up) | — |
//! | [`BatchDelivered`] | `sluice_delivered_total`, `sluice_delivery_completions_total{kind="delivered"}`, `sluice_delivery_events_total{outcome="delivered"}` | trace |
//! | [`BatchRejected`] | the same, plus `sluice_delivery_events_total{outcome="rejected"}`, `sluice_dropped_total{reason="hec_rejected"}` | debug, rate-limited |
//! | [`BatchHandedBack`] | `sluice_delivery_completions_total{kind="retry"}`, `sluice_delivery_events_total{outcome="retry"}`, unkept: `sluice_dropped_total{reason="retry_without_buffer"}` | unkept: error, rate-limited |
//! | [`BatchBuffered`] | `sluice_delivery_completions_total{kind="retry"}`, `sluice_delivery_events_total{outcome="buffered"}` | trace |
//! | [`BatchAbandoned`] | `sluice_delivery_completions_total{kind="abandoned"}`, `sluice_delivery_events_total{outcome="abandoned"}`, unkept: `sluice_dropped_total{reason}`, `sluice_delivery_uncompleted_total` | error for a bug or a gone output |
//! | [`BatchPersisted`] | `sluice_delivery_persisted_events_total` | trace |
//! | [`BatchRescued`] | `sluice_delivery_rescued_events_total` | debug |
//! | [`BufferFullDropped`] | `sluice_dropped_total{reason="buffer_full"}` | warn, rate-limited |
//! | [`BufferSpilled`] | `sluice_buffer_spilled_events_total` | trace |
//! | [`BufferReplayed`] | `sluice_buffer_replayed_events_total` | trace |
//!
//! What the HEC client does ([`hec`]; label `destination`, and `url` per URL), reported by
//! the client to [`HecEvents`], its observer:
//!
//! | event | counts into | logs |
//! | --- | --- | --- |
//! | [`HecUrlsConfigured`] | creates the per-URL series, `sluice_hec_url_up` = 1 | debug |
//! | [`HecRequestCompleted`] | `sluice_hec_requests_total{outcome}`, `sluice_hec_bytes_total{kind}`, `sluice_hec_request_seconds`, `sluice_hec_last_success_timestamp_seconds`, `sluice_hec_url_requests_total{class}`, `sluice_hec_url_request_seconds`, `sluice_hec_url_last_success_timestamp_seconds` | trace (the client warns about failures) |
//! | [`HecRetried`] | `sluice_retried_total{reason}`, `sluice_retried_requests_total{reason}` | debug, rate-limited |
//! | [`HecFailover`] | `sluice_hec_url_failovers_total` | trace |
//! | [`HecUrlDown`] / [`HecUrlUp`] | `sluice_hec_url_up`, `sluice_hec_url_transitions_total{to}` | warn / info |
//! | [`HecBatchHeld`] / [`HecBatchReleased`] | `sluice_hec_in_flight_events` | — |
//! | [`HecAckWaiting`], [`HecAcked`], [`HecAckTimedOut`], [`HecAcksAbandoned`] | `sluice_hec_ack_pending`, `sluice_hec_ack_requests_total{outcome}`, `sluice_hec_ack_events_total{outcome}` | trace / debug, rate-limited / debug |
//! | [`HecAckQueried`] | `sluice_hec_ack_queries_total{outcome}` | — (the client logs failures) |
//! | [`HecBatchIsolated`], [`HecIsolationResent`], [`HecLatencySplit`] | `sluice_hec_isolated_batches_total`, `sluice_hec_isolation_events_resent_total`, `sluice_hec_latency_splits_total` | debug, rate-limited / trace / debug |
//! | [`HecEventRefused`] | `sluice_hec_rejected_total{reason}` | trace (the dead-letter writer logs it) |
//! | [`HecDeadLettered`] | `sluice_hec_dead_letter_events_total{outcome}` | trace |
//!
//! What a destination's disk buffer does ([`buffer`]; label `destination`), reported by
//! `sluice-buffer` to [`DiskBufferEvents`], its observer:
//!
//! | event | counts into | logs |
//! | --- | --- | --- |
//! | [`BufferAppended`] | `sluice_buffer_appended_events_total`, `sluice_buffer_appended_bytes_total` | trace |
//! | [`BufferRefused`] | `sluice_buffer_full_total{reason}` | debug, rate-limited |
//! | [`BufferFlushed`] | `sluice_buffer_write_seconds`, `sluice_buffer_fsync_seconds`, `sluice_buffer_commit_seconds` | trace |
//! | [`BufferWriteFailed`] | `sluice_buffer_write_errors_total` | debug, rate-limited (the buffer logs the error) |
//! | [`BufferSegmentDeleted`] | — | debug |
//! | [`BufferCorrupted`] | `sluice_buffer_corrupt_records_total`, `sluice_buffer_corrupt_events_total` | debug (the buffer logs file and offset) |

pub mod buffer;
pub mod completion;
pub mod control;
pub mod delivery;
pub mod forward;
pub mod hec;
pub mod receive;
pub mod stream;
pub mod tls;

pub use buffer::{
    BufferAppended, BufferCorrupted, BufferFlushed, BufferRefused, BufferSegmentDeleted,
    BufferWriteFailed, DiskBufferEvents,
};
pub use completion::{
    BatchAbandoned, BatchBuffered, BatchDelivered, BatchHandedBack, BatchPersisted, BatchRejected,
    BatchRescued, BatchSubmitted, BufferEvents, BufferFullDropped, BufferReplayed, BufferSpilled,
    DestinationEvents, RoutedNowhere, RoutingEvents,
};
pub use control::{ConfigReloadFailed, ConfigReloaded, WindowEvents, WindowFull, WindowWaitEnded};
pub use delivery::{DeliveryEvents, OutputWriteFailed};
pub use forward::{
    ForwardConnected, ForwardEvents, ForwardFailed, ForwardFiltered, ForwardRefused, ForwardSent,
};
pub use hec::{
    HecAckQueried, HecAckTimedOut, HecAckWaiting, HecAcked, HecAcksAbandoned, HecBatchHeld,
    HecBatchIsolated, HecBatchReleased, HecDeadLettered, HecEventRefused, HecEvents, HecFailover,
    HecIsolationResent, HecLatencySplit, HecRequestCompleted, HecRetried, HecUrlDown, HecUrlUp,
    HecUrlsConfigured,
};
pub use receive::{
    BatchEmitted, Classified, FORMATS, LocalCounts, OutputGone, Received, ReceiverCounters,
    format_index,
};
pub use stream::{
    AcceptFailed, CloseReason, ConnectionAccepted, ConnectionClosed, ConnectionRefused, FramesRead,
    StreamEvents,
};
pub use tls::{
    CertificateReloadFailed, CertificateReloaded, Failure, TlsEvents, TlsHandshakeCompleted,
    TlsHandshakeFailed,
};

/// Something that happened. `emit` logs it and counts it on `handle`: the metric handles (and
/// log allowances) of the component it happened in, or the whole [`Metrics`](super::Metrics)
/// for events without a component of their own.
pub trait InternalEvent: Sized {
    type Handle: ?Sized;
    fn emit(self, handle: &Self::Handle);
}
