//! The words of what the client reports ([`crate::observe`]): how a request ended and why it
//! is retried, each with its label value. The client counts neither; its observer does.

macro_rules! labelled_enum {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $label:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const COUNT: usize = $name::ALL.len();
            /// The Prometheus label value.
            pub fn label(self) -> &'static str {
                match self { $($name::$variant => $label),+ }
            }
        }
    };
}

labelled_enum!(
    /// How one HTTP request ended (`hec_requests_total{outcome}`).
    RequestOutcome {
        Success => "2xx",
        BadRequest => "400",
        Unauthorized => "401",
        Forbidden => "403",
        NotFound => "404",
        RequestTimeout => "408",
        TooLarge => "413",
        TooManyRequests => "429",
        ServerError => "5xx",
        OtherStatus => "other_status",
        Connect => "connect",
        Timeout => "timeout",
        Io => "io",
    }
);

labelled_enum!(
    /// Why a request is retried (`retried_total{reason}`).
    RetryReason {
        Connect => "connect",
        Timeout => "timeout",
        Io => "io",
        Http401 => "http_401",
        Http403 => "http_403",
        Http404 => "http_404",
        Http400Request => "http_400_request",
        Http408 => "http_408",
        Http429 => "http_429",
        Http5xx => "http_5xx",
        HttpOther => "http_other",
    }
);

/// Upper bounds (seconds) of the `hec_request_seconds` histogram buckets; `+Inf` is implied.
pub const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];
