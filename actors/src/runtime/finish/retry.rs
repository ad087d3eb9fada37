//! Store calls for a task this process holds, retried through a short fault
//! of the database (a restart, a failover, a dropped connection) while the
//! task's lease still has time: the lease stays this process's, so the
//! task goes out (or back) as soon as the database answers again, instead
//! of waiting in the database for its lease to run out.

use std::future::Future;
use std::time::Instant;

/// The first wait after a failed call and the next after one: the schedule
/// a delivery's own store calls are retried on (`remit::delivery`), so
/// every store call a held task makes waits alike.
pub use remit::delivery::{next_retry as next, RETRY_FIRST as FIRST};

/// Calls `call` until it succeeds, until the next try would start after
/// `deadline`, or until `retry` says a failure is not worth another try
/// (it hears of each failure, and may log it).
pub async fn until<T, E, F, Fut>(
    deadline: Instant,
    mut call: F,
    mut retry: impl FnMut(&E) -> bool,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let mut wait = FIRST;
    loop {
        match call().await {
            Ok(done) => return Ok(done),
            Err(e) if Instant::now() + wait < deadline && retry(&e) => {
                actix_rt::time::sleep(wait).await;
                wait = next(wait);
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[actix_rt::test]
    async fn retries_until_it_succeeds_or_the_deadline_comes() {
        let mut tries = 0;
        let done: Result<u32, ()> = until(
            Instant::now() + Duration::from_secs(5),
            || {
                tries += 1;
                let now = tries;
                async move {
                    if now < 3 {
                        Err(())
                    } else {
                        Ok(now)
                    }
                }
            },
            |_| true,
        )
        .await;
        assert_eq!(done, Ok(3));

        let mut failures = 0;
        let given_up: Result<(), ()> = until(
            Instant::now() + Duration::from_millis(120),
            || async { Err(()) },
            |_| {
                failures += 1;
                true
            },
        )
        .await;
        assert_eq!(given_up, Err(()));
        assert!((1..=3).contains(&failures), "{failures} retries");
        let longest = remit::delivery::RETRY_LONGEST;
        assert_eq!(next(longest), longest);
    }
}
