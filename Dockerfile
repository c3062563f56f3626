# sluice container: a drop-in for the SC4S container's listener.
#
#   docker build -t sluice .
#   docker run -d --name sluice --network host --stop-timeout 40 \
#       --env-file /opt/sc4s/env_file -e SLUICE_DRAIN_TIMEOUT=30 \
#       -v sluice-var:/var/lib/syslog-ng sluice
#
# or `docker compose up -d` with compose.yaml, or the podman/systemd unit in
# config/sluice-container.service. README.md "Docker" has the details; in short:
#
# * Stopping. `docker stop` sends SIGTERM (STOPSIGNAL below) and SIGKILLs after the stop
#   timeout, 10 s unless `--stop-timeout` / compose `stop_grace_period` says otherwise. On
#   SIGTERM sluice stops reading and delivers what is in flight for SLUICE_DRAIN_TIMEOUT
#   seconds; the image sets it to 8 so that a plain `docker stop` ends with exit 0, not 137.
#   Raise both together, the stop timeout above the drain: `--stop-timeout 40` with
#   SLUICE_DRAIN_TIMEOUT=30.
# * Capabilities. Docker's default set already has NET_BIND_SERVICE (ports 514/601 as root
#   in the container). NET_ADMIN lets sluice force receive buffers past the host's
#   net.core.rmem_max (otherwise it logs the clamp). The eBPF balancer
#   (SC4S_ENABLE_EBPF=yes) needs bpf(2) with CAP_BPF or CAP_SYS_ADMIN:
#     - Docker 20.10 (Debian 12's docker.io) knows no BPF capability (`--cap-add BPF` is
#       refused) and its seccomp profile allows bpf(2) only with SYS_ADMIN: use
#       `--cap-add SYS_ADMIN` (or `--privileged`, what SC4S documents).
#       (scripts/docker-smoke.sh checks this: none or NET_ADMIN → cbpf, SYS_ADMIN → ebpf.)
#     - Docker 23 and later, kernel 5.8 and later: `--cap-add BPF` is enough.
#   Without any of these sluice falls back to classic BPF balancing, which needs no
#   privilege, and says why in its log and on /metrics.
#
# Building without a registry (scripts/docker-smoke.sh): --build-arg BASE_IMAGE=<a local
# Debian image> --build-arg BUILD_IMAGE=<same>, with the binary built on the host copied to
# prebuilt/sluice; the build stage then installs it instead of compiling.

ARG BUILD_IMAGE=rust:1.95-slim-bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY . .
# The eBPF object is committed (ebpf/reuseport_select.o), so no clang is needed here.
RUN set -e; \
    if [ -x prebuilt/sluice ]; then \
        install -m 0755 prebuilt/sluice /sluice; \
    else \
        cargo build --release --locked -p sluice; \
        install -m 0755 target/release/sluice /sluice; \
    fi; \
    if command -v strip >/dev/null; then strip /sluice; fi

FROM ${BASE_IMAGE}
# CA certificates for HEC over https; tzdata for SC4S_DEFAULT_TIMEZONE names. Images made
# with debootstrap --include=ca-certificates,tzdata already have them (and may have no
# network to fetch them).
RUN if ! dpkg -s ca-certificates tzdata >/dev/null 2>&1; then \
        apt-get update \
        && apt-get install -y --no-install-recommends ca-certificates tzdata \
        && rm -rf /var/lib/apt/lists/*; \
    fi
COPY --from=build /sluice /usr/local/bin/sluice
# Every key at its default, documented; mount your own over it (-v ./sluice.toml:/etc/sluice/sluice.toml:ro).
# The env_file and -e variables override it.
COPY config/sluice.toml /etc/sluice/sluice.toml
COPY config/env_file /usr/share/doc/sluice/env_file
COPY README.md /usr/share/doc/sluice/README.md

# SC4S_VAR: SC4S keeps its state (disk buffer, name cache, dead letters) in
# /var/lib/syslog-ng, and operators already mount a volume there. With SC4S_VAR set to it,
# the disk buffer lands in the volume ($SC4S_VAR/buffer; SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR
# overrides it) and survives the container, as SC4S's does; without, it would be under
# /var/lib/sluice inside the container and a restart of a new container would lose it.
# sluice's working directory is the same volume, so its relative paths (the JSON-lines
# output when no HEC URL is set) land in it too.
ENV SC4S_VAR=/var/lib/syslog-ng
VOLUME ["/var/lib/syslog-ng"]
WORKDIR /var/lib/syslog-ng

# Fits Docker's default 10 s stop timeout; see "Stopping" above.
ENV SLUICE_DRAIN_TIMEOUT=8

# Every port sluice opens by default (SC4S's):
#   514/udp 514/tcp    syslog (BSD/RFC 3164 and RFC 5424; TCP with LF or octet framing)
#   601/udp 601/tcp    RFC 5426 syslog over UDP, RFC 6587 octet-counted TCP
#   6514/tcp 5425/tcp  syslog over TLS, RFC 5425 (opened with SC4S_SOURCE_TLS_ENABLE=yes)
#   8080/tcp           /health and /metrics (SC4S_LISTEN_STATUS_PORT)
EXPOSE 514/udp 514/tcp 601/udp 601/tcp 6514/tcp 5425/tcp 8080/tcp

STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["/usr/local/bin/sluice", "health"]
ENTRYPOINT ["/usr/local/bin/sluice", "run", "--config", "/etc/sluice/sluice.toml"]
