//! The listener stage: the sockets sluice receives on, and the receive loops that turn what
//! arrives into batches (UDP threads in [`udp`]; TCP, RFC 6587, TLS and RFC 5425 connections
//! in [`stream`]).

pub mod stream;
pub mod udp;
