//! The Splunk HEC output (`sluice-hec`): the [`Output`] the destinations drive, and its URL
//! board as `/metrics` and `/health` read it.

use sluice_hec::health::UrlBoard;
use sluice_proto::delivery::Delivery;
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use anyhow::Context;

use super::start::{Limits, Started, open_buffer, start_destination};
use super::{Output, OutputTask};
use crate::config::{BufferSettings, DestPlan, HecConfig};
use crate::telemetry::PromWriter;
use crate::telemetry::events::HecEvents;
use crate::telemetry::state::{OutputState, Problem};

impl Output for sluice_hec::HecOutput {
    fn kind(&self) -> &'static str {
        "hec"
    }

    fn run(
        self: Box<Self>,
        queue: async_channel::Receiver<Delivery>,
        abort: CancellationToken,
    ) -> OutputTask {
        Box::pin(sluice_hec::HecOutput::run(*self, queue, abort))
    }
}

impl OutputState for UrlBoard {
    fn problem(&self) -> Option<Problem> {
        (!self.healthy()).then(|| Problem {
            what: "cannot deliver to Splunk HEC",
            reason: self.reason(),
            hint: Some("see sluice_hec_requests_total"),
        })
    }

    fn render(&self, destination: &str, w: &mut PromWriter) {
        w.family(
            "sluice_hec_url_consecutive_failures",
            "gauge",
            "Failed requests to the URL since its last good answer.",
        );
        for u in self.iter() {
            w.sample(
                "sluice_hec_url_consecutive_failures",
                &[("destination", destination), ("url", u.url.as_str())],
                u.consecutive_failures(),
            );
        }
    }

    fn sc4s_instance(&self) -> Option<(&'static str, String)> {
        let url = self.get(0).map(|u| u.url.clone()).unwrap_or_default();
        Some(("http", format!("d_hec_fmt,http,{url}")))
    }
}

/// Starts a HEC destination: its client, its disk buffer, and hand-back to that buffer.
pub(super) fn start(
    d: &DestPlan,
    hec: &HecConfig,
    buffer: &BufferSettings,
    limits: &Limits<'_>,
) -> anyhow::Result<Started> {
    let events = Arc::new(HecEvents::register(crate::telemetry::metrics(), &d.name));
    let output =
        sluice_hec::HecOutput::new(hec.client_config_for(d.id.var(), &d.table)?, events)
            .with_context(|| format!("cannot set up the HEC client of destination {}", d.name))?;
    let up = Arc::clone(output.health());
    let health: Arc<dyn OutputState> = up.clone();
    let opts = open_buffer(
        d,
        buffer,
        &format!("SC4S_DEST_SPLUNK_HEC_{}_", d.id),
        hec.workers,
        limits,
        Box::new(move || up.healthy()),
    )?;
    let (dest, submit) = start_destination(&d.name, Box::new(output.clone()), opts)?;
    if let Some(b) = dest.buffer() {
        // What HEC cannot take goes to the buffer rather than waiting in memory, while the
        // buffer has room.
        let room = b.clone();
        output.hand_back_when(move || room.full().is_none());
    }
    Ok(Started {
        dest,
        submit,
        health: Some(health),
        hec: Some(output),
    })
}
