//! The Splunk HEC output (`sluice-hec`): the [`Output`] the destinations drive, and its URL
//! board as `/metrics` and `/health` read it.

use sluice_hec::health::UrlBoard;
use sluice_proto::delivery::Delivery;
use tokio_util::sync::CancellationToken;

use super::{Output, OutputTask};
use crate::telemetry::PromWriter;
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
