//! One HTTP request to a receiver through awc, and what came back.

use std::sync::Arc;
use std::time::Duration;

use awc::error::{ConnectError, SendRequestError};
use chrono::Utc;
use remit::domain::{Payload, Task};
use remit::policy::TransportError;

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

/// POSTs the payload with the task's stable key and, when the destination
/// has a secret, a Standard Webhooks signature. The response body is read
/// up to `max_body` bytes and dropped.
pub async fn post(
    client: &awc::Client,
    egress: &Egress,
    url: &url::Url,
    task: &Task,
    payload: &Payload,
    signing_key: Option<&[u8]>,
    max_body: usize,
) -> Response {
    // A literal address never reaches the resolver, and the scheme is not
    // its business: both are judged here.
    egress
        .check_url(url)
        .map_err(|_| TransportError::BlockedAddress)?;
    let timestamp = Utc::now().timestamp();
    let mut request = client
        .post(url.as_str())
        .insert_header(("content-type", payload.content_type.as_str()))
        .insert_header(("idempotency-key", task.idempotency_key.as_str()))
        .insert_header(("webhook-id", task.idempotency_key.as_str()))
        .insert_header(("webhook-timestamp", timestamp.to_string()))
        .insert_header(("user-agent", USER_AGENT));
    if let Some(key) = signing_key {
        let signature = signature::sign(key, &task.idempotency_key, timestamp, &payload.body);
        request = request.insert_header(("webhook-signature", signature));
    }
    let mut response = request
        .send_body(payload.body.clone())
        .await
        .map_err(classify)?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // The status is what counts; a body that is too large or breaks off
    // changes nothing.
    let _ = response.body().limit(max_body).await;
    Ok((status, retry_after))
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
