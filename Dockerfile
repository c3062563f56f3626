# sluice container: a drop-in for the SC4S container's listener.
#
#   docker build -t sluice .
#   docker run -d --name sluice --network host \
#       --cap-add NET_ADMIN --cap-add BPF \
#       --env-file /opt/sc4s/env_file sluice
#
# --network host as SC4S recommends (source IPs preserved, no NAT in the UDP path).
# NET_ADMIN lets sluice force large receive buffers (SO_RCVBUFFORCE); BPF lets it load the
# eBPF balancer. `--privileged` (what SC4S documents for eBPF) also works. Without either,
# sluice still runs: it reports the clamped buffer and uses classic BPF balancing.

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY . .
# The eBPF object is committed (ebpf/reuseport_select.o), so no clang is needed here.
RUN cargo build --release --locked -p sluice && strip target/release/sluice

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tzdata \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/sluice /usr/local/bin/sluice
COPY config/sluice.toml /etc/sluice/sluice.toml
WORKDIR /var/lib/sluice
# 514 UDP/TCP syslog, 601 RFC 6587, 6514 TLS, 8080 /health and /metrics.
EXPOSE 514/udp 514/tcp 601/tcp 6514/tcp 8080/tcp
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s CMD ["/usr/local/bin/sluice", "health"]
ENTRYPOINT ["/usr/local/bin/sluice", "run"]
