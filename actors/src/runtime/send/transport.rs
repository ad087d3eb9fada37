//! One HTTP request to a receiver through awc, and what came back.

use std::sync::Arc;
use std::time::Duration;

use awc::error::{ConnectError, SendRequestError};
use chrono::{DateTime, Utc};
use remit::domain::{CustomHeader, Payload, Task, TraceParent};
use remit::policy::{QuotaFields, TransportError};

use crate::egress::{self, Egress, Refusal};
use crate::signature;

/// `remit/VERSION`, sent as User-Agent.
pub const USER_AGENT: &str = concat!("remit/", env!("CARGO_PKG_VERSION"));

/// A client that never follows redirects: a 3xx is an outcome of its own.
/// It resolves host names through the send policy and connects only to
/// addresses that passed it.
pub fn client(timeout: Duration, egress: Arc<Egress>) -> awc::Client {
    awc::Client::builder()
        .connector(awc::Connector::new().connector(egress::tcp_connector(egress)))
        .disable_redirects()
        .timeout(timeout)
        .finish()
}

/// The status and raw Retry-After of a response, or why none came.
pub type Response = Result<(u16, Option<String>), TransportError>;

/// A response, the receiver's own `Date` when it sent a valid one, and
/// the rate-limit fields it announced its quota in (empty when none came).
pub type Reply = (Response, Option<DateTime<Utc>>, QuotaFields);

/// One whole exchange under one deadline: connect, TLS, writing the
/// request, the response head and the body read all end by `deadline`.
/// awc's own timeout stops at the response head, so a receiver that
/// stalls its body would otherwise hold the request (and its slots)
/// forever. When the deadline passes the future is dropped, which closes
/// the connection.
pub async fn exchange(
    client: &awc::Client,
    egress: &Egress,
    webhook: Webhook<'_>,
    limits: (Duration, usize),
) -> Reply {
    let (deadline, max_body) = limits;
    let request = post(client, egress, webhook, (deadline, max_body));
    actix_rt::time::timeout(deadline, request).await.unwrap_or((
        Err(TransportError::Timeout),
        None,
        QuotaFields::default(),
    ))
}

/// One webhook to send: where, which task, what, the keys of the
/// destination's valid secrets (none when it has no secret), and the
/// attempt's span when tracing is on.
#[derive(Debug, Clone, Copy)]
pub struct Webhook<'a> {
    pub url: &'a url::Url,
    pub task: &'a Task,
    pub payload: &'a Payload,
    pub signing_keys: &'a [Vec<u8>],
    pub traceparent: Option<&'a TraceParent>,
    /// The destination's own headers, sent before remit's (whose names
    /// they may not take).
    pub headers: &'a [CustomHeader],
}

/// POSTs the payload with the destination's own headers, the task's
/// stable key, the attempt's `traceparent` when tracing is on and, when the
/// destination has secrets, Standard Webhooks signatures. awc's own timeout
/// (the response head) is the request's deadline, which may be the
/// destination's own rather than the client's. The response body is read
/// up to `max_body` bytes and dropped.
async fn post(
    client: &awc::Client,
    egress: &Egress,
    webhook: Webhook<'_>,
    (deadline, max_body): (Duration, usize),
) -> Reply {
    let Webhook {
        url,
        task,
        payload,
        signing_keys,
        traceparent,
        headers,
    } = webhook;
    // A literal address never reaches the resolver, and the scheme is not
    // its business: both are judged here.
    if egress.check_url(url).is_err() {
        return (
            Err(TransportError::BlockedAddress),
            None,
            QuotaFields::default(),
        );
    }
    let timestamp = Utc::now().timestamp();
    let mut request = client.post(url.as_str()).timeout(deadline);
    for header in headers {
        if let Some(value) = header.value.known() {
            request = request.insert_header((header.name.as_str(), value));
        }
    }
    let mut request = request
        .insert_header(("content-type", payload.content_type.as_str()))
        .insert_header(("idempotency-key", task.idempotency_key.as_str()))
        .insert_header(("webhook-id", task.idempotency_key.as_str()))
        .insert_header(("webhook-timestamp", timestamp.to_string()))
        .insert_header(("user-agent", USER_AGENT));
    if let Some(traceparent) = traceparent {
        // The receiver's span can be a child of this attempt's.
        request = request.insert_header(("traceparent", traceparent.as_str()));
    }
    if !signing_keys.is_empty() {
        // One `v1,<sig>` per valid secret, space-separated, as Standard
        // Webhooks allows: a receiver accepts the request when any verifies.
        let signatures: Vec<String> = signing_keys
            .iter()
            .map(|key| signature::sign(key, &task.idempotency_key, timestamp, &payload.body))
            .collect();
        request = request.insert_header(("webhook-signature", signatures.join(" ")));
    }
    let mut response = match request.send_body(payload.body.clone()).await {
        Ok(response) => response,
        Err(e) => return (Err(classify(e)), None, QuotaFields::default()),
    };
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let retry_after = header("retry-after");
    let server_date = header("date")
        .and_then(|d| httpdate::parse_http_date(&d).ok())
        .map(DateTime::<Utc>::from);
    // Read from every response, 2xx included: a receiver announces its
    // quota before it runs out, not only when it refuses.
    let either = |a: &str, b: &str| header(a).or_else(|| header(b));
    let quota = QuotaFields {
        ratelimit_policy: header("ratelimit-policy"),
        ratelimit: header("ratelimit"),
        limit: either("x-ratelimit-limit", "ratelimit-limit"),
        remaining: either("x-ratelimit-remaining", "ratelimit-remaining"),
        reset: either("x-ratelimit-reset", "ratelimit-reset"),
    };
    // The status is what counts; a body that is too large or breaks off
    // changes nothing.
    let _ = response.body().limit(max_body).await;
    (Ok((status, retry_after)), server_date, quota)
}

fn classify(error: SendRequestError) -> TransportError {
    match error {
        SendRequestError::Timeout | SendRequestError::Connect(ConnectError::Timeout) => {
            TransportError::Timeout
        }
        SendRequestError::Connect(ConnectError::Resolver(e)) if e.is::<Refusal>() => {
            TransportError::BlockedAddress
        }
        SendRequestError::Connect(ConnectError::SslIsNotSupported) => TransportError::Tls,
        SendRequestError::Connect(ConnectError::Io(e)) if is_tls(&e) => TransportError::Tls,
        SendRequestError::Connect(_) => TransportError::Connect,
        _ => TransportError::Io,
    }
}

/// rustls reports handshake failures as I/O errors wrapping its own error.
fn is_tls(error: &std::io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
}
