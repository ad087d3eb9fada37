//! A receiver that misbehaves on the wire, on a raw `TcpListener`: it
//! answers the first connections with one misbehaviour each, then like a
//! well-behaved receiver (200, connection closed). It records when each
//! misbehaving connection was given up by the client.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misbehaviour {
    /// Sends the status line and headers, a few body bytes, then nothing.
    StallBody,
    /// Sends the head, then one body byte every 100 ms, forever.
    Trickle,
    /// Reads the request and never answers.
    Silent,
}

/// A misbehaving connection and how long the client put up with it.
#[derive(Debug, Clone, Copy)]
pub struct GivenUp {
    pub misbehaviour: Misbehaviour,
    pub after: Duration,
}

#[derive(Default)]
struct Log {
    plan: VecDeque<Misbehaviour>,
    given_up: Vec<GivenUp>,
    /// Idempotency keys of the requests answered 200.
    delivered: Vec<String>,
}

pub struct HostileReceiver {
    addr: SocketAddr,
    log: Arc<Mutex<Log>>,
    stop: Arc<AtomicBool>,
}

impl HostileReceiver {
    pub fn start(plan: Vec<Misbehaviour>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the hostile receiver");
        let addr = listener.local_addr().expect("its address");
        let log = Arc::new(Mutex::new(Log {
            plan: plan.into(),
            ..Log::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (accept_log, accept_stop) = (log.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accept_stop.load(Ordering::Relaxed) {
                    return;
                }
                let Ok(stream) = stream else {
                    return;
                };
                let (log, stop) = (accept_log.clone(), accept_stop.clone());
                std::thread::spawn(move || serve(stream, &log, &stop));
            }
        });
        Self { addr, log, stop }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn given_up(&self) -> Vec<GivenUp> {
        self.log.lock().given_up.clone()
    }

    pub fn delivered(&self) -> Vec<String> {
        self.log.lock().delivered.clone()
    }
}

impl Drop for HostileReceiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accepting thread so it sees the flag and ends.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut stream: TcpStream, log: &Mutex<Log>, stop: &AtomicBool) {
    let Some(key) = read_request(&mut stream) else {
        return;
    };
    let misbehaviour = log.lock().plan.pop_front();
    let Some(misbehaviour) = misbehaviour else {
        let answered =
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        if answered.is_ok() {
            log.lock().delivered.push(key);
        }
        return;
    };
    let started = Instant::now();
    let head: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
    match misbehaviour {
        Misbehaviour::StallBody => {
            let _ = stream.write_all(head);
            let _ = stream.write_all(b"{\"ok\":");
        }
        Misbehaviour::Trickle => {
            let _ = stream.write_all(head);
        }
        Misbehaviour::Silent => {}
    }
    // Hold the connection until the client closes it.
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        if misbehaviour == Misbehaviour::Trickle && stream.write_all(b" ").is_err() {
            break;
        }
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    if !stop.load(Ordering::Relaxed) {
        log.lock().given_up.push(GivenUp {
            misbehaviour,
            after: started.elapsed(),
        });
    }
}

/// Reads one request (head and a Content-Length body) and returns its
/// idempotency key.
fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_owned()))
    };
    let length: usize = header("content-length:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    }
    header("idempotency-key:")
}
