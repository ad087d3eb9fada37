//! A small HTTP client that behaves like a browser towards the console:
//! it keeps the session cookie, does not follow redirects (tests look at
//! them), and posts forms.

use std::net::SocketAddr;

use awc::http::header::HeaderMap;

/// One answer: status, headers and the body as text.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The CSRF value the page's forms carry.
    pub fn csrf(&self) -> String {
        let marker = r#"name="csrf" value=""#;
        let start = self
            .body
            .find(marker)
            .unwrap_or_else(|| panic!("no CSRF input on the page:\n{}", self.body))
            + marker.len();
        let end = self.body[start..].find('"').unwrap() + start;
        self.body[start..end].to_owned()
    }
}

pub struct Browser {
    client: awc::Client,
    base: String,
    /// `remit_console=…`, as the last sign-in set it.
    pub cookie: Option<String>,
}

impl Browser {
    pub fn new(addr: SocketAddr) -> Self {
        Self::from_address(addr, std::net::Ipv4Addr::LOCALHOST.into())
    }

    /// A browser on another machine, as the console sees it: its
    /// connections come from `local` (any of 127.0.0.0/8 reaches a
    /// console listening on 127.0.0.1).
    pub fn from_address(addr: SocketAddr, local: std::net::IpAddr) -> Self {
        Self {
            client: awc::Client::builder()
                .connector(awc::Connector::new().local_address(local))
                .disable_redirects()
                .timeout(std::time::Duration::from_secs(10))
                .finish(),
            base: format!("http://{addr}"),
            cookie: None,
        }
    }

    pub async fn get(&self, path: &str) -> Answer {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(cookie) = &self.cookie {
            request = request.insert_header(("cookie", cookie.as_str()));
        }
        read(request.send().await.unwrap()).await
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Answer {
        self.post_with(path, form, &[]).await
    }

    /// A POST with headers of the caller's choosing (what a browser says
    /// of where the form came from, say).
    pub async fn post_with(
        &self,
        path: &str,
        form: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut request = self.client.post(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.insert_header((*name, *value));
        }
        if let Some(cookie) = &self.cookie {
            request = request.insert_header(("cookie", cookie.as_str()));
        }
        read(request.send_form(&form).await.unwrap()).await
    }

    /// Signs in with `token`; keeps the cookie when one is set.
    pub async fn sign_in(&mut self, token: &str) -> Answer {
        let answer = self.post("/console/sign-in", &[("token", token)]).await;
        if let Some(set) = answer.headers.get("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            self.cookie = Some(pair);
        }
        answer
    }

    /// Signed in as `token`, or the test fails.
    pub async fn signed_in(addr: SocketAddr, token: &str) -> Self {
        let mut browser = Self::new(addr);
        let answer = browser.sign_in(token).await;
        assert_eq!(answer.status, 303, "{}", answer.body);
        browser
    }
}

async fn read<S>(mut response: awc::ClientResponse<S>) -> Answer
where
    S: futures_util::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>> + Unpin,
{
    let body = response.body().limit(8 * 1024 * 1024).await.unwrap();
    Answer {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: String::from_utf8(body.to_vec()).unwrap(),
    }
}
