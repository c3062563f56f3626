//! The status HTTP server on `SC4S_LISTEN_STATUS_PORT`: `/health`, `/metrics`, and
//! `POST /reload` (from the machine itself only: the status port usually listens on every
//! address, and a reload is an operator's action).
//!
//! `/health` answers like SC4S's health check (`200 {"status":"healthy"}`, `503
//! {"status":"unhealthy: <reason>"}`) so existing load-balancer and orchestrator probes keep
//! working. `/metrics` is rendered at scrape time from atomics (nothing on the receive path
//! takes a lock for it): OpenMetrics for scrapers that ask for it, the Prometheus text format
//! 0.0.4 otherwise (see [`crate::telemetry::expose`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::telemetry::expose;
use crate::telemetry::state::Status;

/// What a reload answers: a summary of what changed, or why it was rejected.
pub type ReloadReply = Result<String, String>;

/// A reload asked for over the status port; whoever reloads answers on the channel.
#[derive(Debug)]
pub struct ReloadRequest(pub tokio::sync::oneshot::Sender<ReloadReply>);

/// Where `POST /reload` requests go (the daemon's loop); `None` answers 404.
pub type ReloadSender = Option<tokio::sync::mpsc::Sender<ReloadRequest>>;

/// Binds the admin listener (so a port conflict is a startup error) and returns the task
/// that serves it. It serves until the task is aborted: the daemon stops it last, so that
/// `/health` answers "shutting down" throughout the drain.
pub async fn bind(
    addr: SocketAddr,
    status: Arc<dyn Status>,
    reload: ReloadSender,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                continue;
            };
            // Responses are small and written whole; without NODELAY a client that waits
            // for the full body can stall on delayed ACKs.
            let _ = stream.set_nodelay(true);
            let status = status.clone();
            let reload = reload.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| handle(req, peer, status.clone(), reload.clone()));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Ok((local, task))
}

async fn handle(
    req: Request<Incoming>,
    peer: SocketAddr,
    status: Arc<dyn Status>,
    reload: ReloadSender,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (code, ctype, body) = match (req.method(), req.uri().path()) {
        (&Method::POST, "/reload") => {
            let (code, text) = ask_reload(peer, reload).await;
            (code, "text/plain", text + "\n")
        }
        (&Method::GET, "/health") => {
            let (code, text) = match status.health() {
                Ok(()) => (StatusCode::OK, "healthy".to_string()),
                Err(reason) => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("unhealthy: {reason}"),
                ),
            };
            // `status` first, as SC4S's health check writes it; probes that read only it
            // keep working.
            let mut body = serde_json::Map::new();
            body.insert("status".into(), text.into());
            if let serde_json::Value::Object(extra) = status.details() {
                body.extend(extra);
            }
            (
                code,
                "application/json",
                serde_json::Value::Object(body).to_string(),
            )
        }
        (&Method::GET, "/metrics") => {
            let accept = req
                .headers()
                .get(hyper::header::ACCEPT)
                .and_then(|v| v.to_str().ok());
            let openmetrics = status.render_metrics();
            if expose::wants_openmetrics(accept) {
                (
                    StatusCode::OK,
                    expose::OPENMETRICS_CONTENT_TYPE,
                    openmetrics,
                )
            } else {
                (
                    StatusCode::OK,
                    expose::TEXT_CONTENT_TYPE,
                    expose::to_prometheus_text(&openmetrics),
                )
            }
        }
        (_, "/health" | "/metrics" | "/reload") => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n".into(),
        ),
        _ => (StatusCode::NOT_FOUND, "text/plain", "not found\n".into()),
    };
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = code;
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    Ok(resp)
}

/// Hands a reload to the daemon and waits for its outcome: 200 with what changed, 422 with
/// why the new configuration was rejected (the old one stays in force).
async fn ask_reload(peer: SocketAddr, reload: ReloadSender) -> (StatusCode, String) {
    let Some(reload) = reload else {
        return (StatusCode::NOT_FOUND, "not found".into());
    };
    if !peer.ip().to_canonical().is_loopback() {
        return (
            StatusCode::FORBIDDEN,
            "reload is accepted from the machine itself only".into(),
        );
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    if reload.send(ReloadRequest(tx)).await.is_err() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down".into());
    }
    match rx.await {
        Ok(Ok(summary)) => (StatusCode::OK, summary),
        Ok(Err(reason)) => (StatusCode::UNPROCESSABLE_ENTITY, reason),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake(bool);
    impl Status for Fake {
        fn health(&self) -> Result<(), String> {
            if self.0 {
                Ok(())
            } else {
                Err("HEC unreachable".into())
            }
        }
        fn render_metrics(&self) -> String {
            "# HELP sluice_x X.\n# TYPE sluice_x counter\nsluice_x_total{reason=\"a\"} 3\n# EOF\n"
                .into()
        }
    }

    async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
        let (code, _, body) = get_with(addr, path, "").await;
        (code, body)
    }

    /// A GET with extra header lines; returns the status, the head and the body.
    async fn get_with(addr: SocketAddr, path: &str, headers: &str) -> (u16, String, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).await.unwrap();
        let code = buf[9..12].parse().unwrap();
        let (head, body) = buf.split_once("\r\n\r\n").unwrap_or((&buf, ""));
        (code, head.to_string(), body.to_string())
    }

    async fn post(addr: SocketAddr, path: &str) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!(
                "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).await.unwrap();
        let code = buf[9..12].parse().unwrap();
        let body = buf.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
        (code, body)
    }

    #[tokio::test]
    async fn reload_is_answered_by_the_daemon_and_only_from_the_machine_itself() {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<ReloadRequest>(1);
        // The daemon's side: the first reload is applied, the second rejected.
        tokio::spawn(async move {
            let mut n = 0;
            while let Some(ReloadRequest(reply)) = rx.recv().await {
                n += 1;
                let _ = reply.send(if n == 1 {
                    Ok("processor replaced".into())
                } else {
                    Err("metadata csv: line 2: expected three fields".into())
                });
            }
        });
        let (addr, _t) = bind(
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(Fake(true)),
            Some(tx.clone()),
        )
        .await
        .unwrap();
        assert_eq!(
            post(addr, "/reload").await,
            (200, "processor replaced\n".into())
        );
        let (code, body) = post(addr, "/reload").await;
        assert_eq!(code, 422);
        assert!(body.contains("line 2"), "{body}");
        assert_eq!(get(addr, "/reload").await.0, 405);

        let remote: SocketAddr = "192.0.2.7:40000".parse().unwrap();
        assert_eq!(ask_reload(remote, Some(tx)).await.0, StatusCode::FORBIDDEN);
        let local: SocketAddr = "[::ffff:127.0.0.1]:40000".parse().unwrap();
        assert_eq!(ask_reload(local, None).await.0, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn health_and_metrics() {
        let (addr, task) = bind("127.0.0.1:0".parse().unwrap(), Arc::new(Fake(true)), None)
            .await
            .unwrap();
        assert_eq!(
            get(addr, "/health").await,
            (200, r#"{"status":"healthy"}"#.into())
        );
        // Without asking: the text format 0.0.4, counters named with their _total.
        let (code, head, body) = get_with(addr, "/metrics", "").await;
        assert_eq!(code, 200);
        assert!(head.contains("text/plain; version=0.0.4"), "{head}");
        assert_eq!(
            body,
            "# HELP sluice_x_total X.\n# TYPE sluice_x_total counter\n\
             sluice_x_total{reason=\"a\"} 3\n"
        );
        // Prometheus asks for OpenMetrics and gets it as rendered.
        let (code, head, body) = get_with(
            addr,
            "/metrics",
            "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\n",
        )
        .await;
        assert_eq!(code, 200);
        assert!(head.contains("application/openmetrics-text"), "{head}");
        assert!(body.ends_with("# EOF\n"), "{body}");
        assert_eq!(get(addr, "/nope").await.0, 404);
        task.abort();

        let (addr, _t) = bind("127.0.0.1:0".parse().unwrap(), Arc::new(Fake(false)), None)
            .await
            .unwrap();
        assert_eq!(
            get(addr, "/health").await,
            (503, r#"{"status":"unhealthy: HEC unreachable"}"#.into())
        );
    }
}
