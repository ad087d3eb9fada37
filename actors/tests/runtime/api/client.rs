//! A small client for the API under test.

use remit_actors::app::Runtime;
use serde_json::Value;

use crate::support::API_TOKEN;

pub struct Api {
    pub base: String,
    pub client: awc::Client,
}

impl Api {
    pub fn new(runtime: &Runtime) -> Self {
        Self {
            base: format!("http://{}", runtime.api_addr()),
            client: awc::Client::default(),
        }
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        // A connection kept alive from an earlier call may have been closed
        // by the server meanwhile (its keep-alive is 5 s, and a test can
        // wait that long for a delivery between two calls): the request
        // never went out, so it is sent again on a fresh connection.
        let mut tries = 0;
        let mut response = loop {
            let mut request = match method {
                "GET" => self.client.get(&url),
                "DELETE" => self.client.delete(&url),
                "PUT" => self.client.put(&url),
                "PATCH" => self.client.patch(&url),
                _ => self.client.post(&url),
            };
            if let Some(token) = token {
                request = request.insert_header(("authorization", format!("Bearer {token}")));
            }
            let sent = match &body {
                Some(body) => request.send_json(body).await,
                None => request.send().await,
            };
            match sent {
                Err(awc::error::SendRequestError::Connect(e)) if tries < 2 => {
                    eprintln!("{method} {path}: {e}; sending it again");
                    tries += 1;
                }
                sent => break sent.unwrap(),
            }
        };
        let status = response.status().as_u16();
        let bytes = response.body().await.unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("POST", path, Some(API_TOKEN), Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.call("PATCH", path, Some(API_TOKEN), Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> (u16, Value) {
        self.call("DELETE", path, Some(API_TOKEN), None).await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call("GET", path, Some(API_TOKEN), None).await
    }

    /// Sends `body` as it is, `application/json`, with `token` if given.
    pub async fn raw(&self, path: &str, token: Option<&str>, body: Vec<u8>) -> (u16, Value) {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .insert_header(("content-type", "application/json"));
        if let Some(token) = token {
            request = request.insert_header(("authorization", format!("Bearer {token}")));
        }
        let mut response = request.send_body(body).await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.body().limit(1 << 20).await.unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }
}
