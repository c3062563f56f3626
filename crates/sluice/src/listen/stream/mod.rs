//! The stream listeners: TCP, RFC 6587, TLS and RFC 5425.
//!
//! [`port`] opens and serves a port; [`conn`] is the connection loop; [`parallel`] spreads a
//! busy connection's frames over worker tasks; [`edge`] is the connection table that keeps
//! the port open to new senders; [`proxy`] reads PROXY protocol headers.

pub mod conn;
pub mod context;
pub mod edge;
pub mod parallel;
pub mod port;
pub mod proxy;

pub use port::{
    ActiveStream, BoundStream, PortCounters, StreamPlan, StreamShared, TlsPlan, bind, load_tls,
    start,
};
