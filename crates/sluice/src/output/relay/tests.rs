use std::sync::Mutex;

use bytes::Bytes;
use sluice_proto::delivery::CompletionSink;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use super::*;
use crate::config::RelayKind;

#[derive(Debug, Default)]
struct Seen(Mutex<Vec<Completion>>);

impl CompletionSink for Seen {
    fn completed(&self, _batch: &EncodedBatch, completion: &Completion, _persisted: bool) {
        self.0.lock().unwrap().push(completion.clone());
    }
}

fn batch(events: &[&[u8]]) -> EncodedBatch {
    let mut b = sluice_proto::batch::BatchBuilder::new(sluice_proto::batch::BatchPolicy {
        max_events: 1000,
        max_bytes: 1 << 20,
        timeout: Duration::from_secs(1),
    });
    // Empty events are kept as the extra encoding keeps them: build through push_encoded.
    for e in events {
        b.push_encoded(
            std::time::Instant::now(),
            None,
            1,
            |out| out.push(b'x'),
            |_, _, out| out.extend_from_slice(e),
        );
    }
    b.take().unwrap().into_encoding(1).unwrap()
}

fn relay(port: u16, kind: RelayKind, transport: RelayTransport, ietf: bool) -> RelayOutput {
    let cfg = RelayDestination {
        kind,
        host: "127.0.0.1".into(),
        port: Some(port),
        transport,
        ietf,
        ..RelayDestination::default()
    };
    let m = crate::telemetry::Metrics::new();
    let events = Arc::new(ForwardEvents::register(&m, "t", kind.name_word()));
    RelayOutput::new("t", "T", &cfg, events).unwrap()
}

async fn run_one(out: RelayOutput, b: EncodedBatch) -> Arc<Seen> {
    let seen = Arc::new(Seen::default());
    let (tx, rx) = async_channel::unbounded();
    tx.send(Delivery::new(b, seen.clone())).await.unwrap();
    drop(tx);
    Box::new(out).run(rx, CancellationToken::new()).await;
    seen
}

#[tokio::test]
async fn framed_rfc5424_counts_the_line_feed() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let read = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        got
    });
    let out = relay(port, RelayKind::Syslog, RelayTransport::Tcp, true);
    let seen = run_one(out, batch(&[b"<13>1 a", b"", b"<13>1 multi\nline"])).await;
    assert_eq!(*seen.0.lock().unwrap(), [Completion::Delivered]);
    assert_eq!(read.await.unwrap(), b"8 <13>1 a\n17 <13>1 multi\nline\n");
}

#[tokio::test]
async fn bsd_lines_over_tcp_and_the_filtered_event_is_counted() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let read = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).await.unwrap();
        got
    });
    let out = relay(port, RelayKind::Bsd, RelayTransport::Tcp, false);
    let events = Arc::clone(&out.events);
    run_one(out, batch(&[b"<13>a", b"", b"<13>b"])).await;
    assert_eq!(read.await.unwrap(), b"<13>a\n<13>b\n");
    assert_eq!(events.filtered("empty_message"), 1);
    assert_eq!(events.events(), 2);
}

#[tokio::test]
async fn udp_datagrams_and_a_line_too_large_is_refused() {
    let sock = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let port = sock.local_addr().unwrap().port();
    let out = relay(port, RelayKind::Syslog, RelayTransport::Udp, true);
    let big = vec![b'a'; MAX_DATAGRAM];
    let seen = run_one(out, batch(&[b"<13>1 one", &big, b"<13>1 two"])).await;
    let mut buf = vec![0u8; 70_000];
    let n = sock.recv(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"<13>1 one\n");
    let n = sock.recv(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"<13>1 two\n");
    match &seen.0.lock().unwrap()[0] {
        Completion::Rejected { events } => {
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].index, 1);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_target_that_closed_is_replaced_before_the_next_batch() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let out = relay(port, RelayKind::Bsd, RelayTransport::Tcp, false);
    let events = Arc::clone(&out.events);
    let seen = Arc::new(Seen::default());
    let (tx, rx) = async_channel::unbounded();
    let task = tokio::spawn(Box::new(out).run(rx, CancellationToken::new()));
    tx.send(Delivery::new(batch(&[b"first"]), seen.clone()))
        .await
        .unwrap();
    let (mut s, _) = l.accept().await.unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"first\n");
    drop(s);
    tokio::time::sleep(Duration::from_millis(100)).await;
    tx.send(Delivery::new(batch(&[b"second"]), seen.clone()))
        .await
        .unwrap();
    let (mut s, _) = l.accept().await.unwrap();
    let n = s.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"second\n");
    drop(tx);
    task.await.unwrap();
    assert_eq!(events.events(), 2);
    assert_eq!(seen.0.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_unresolvable_target_is_retried_and_abandoned_at_the_drain_timeout() {
    let cfg = RelayDestination {
        host: "no-such-host.invalid".into(),
        port: Some(514),
        ..RelayDestination::default()
    };
    let m = crate::telemetry::Metrics::new();
    let events = Arc::new(ForwardEvents::register(&m, "t", "syslog"));
    let out = RelayOutput::new("t", "T", &cfg, Arc::clone(&events)).unwrap();
    let seen = Arc::new(Seen::default());
    let (tx, rx) = async_channel::unbounded();
    tx.send(Delivery::new(batch(&[b"x"]), seen.clone()))
        .await
        .unwrap();
    let abort = CancellationToken::new();
    let task = tokio::spawn(Box::new(out).run(rx, abort.clone()));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    abort.cancel();
    task.await.unwrap();
    assert!(
        events.errors("resolve") >= 1,
        "{}",
        events.errors("resolve")
    );
    assert!(!events.is_up());
    assert_eq!(
        *seen.0.lock().unwrap(),
        [Completion::Abandoned {
            reason: AbandonReason::Shutdown
        }]
    );
    drop(Bytes::new());
}
