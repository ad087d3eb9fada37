//! The shared token bucket over the model, as the SQL bucket computes it:
//! tokens refill at `rate` per second up to `burst`, and a take grants at
//! most what is there.

use chrono::{DateTime, Utc};

use super::MemStore;
use crate::domain::DestinationId;
use crate::store::{StoreError, Tokens};

impl MemStore {
    pub(super) fn take_now(
        &self,
        id: &DestinationId,
        rate_per_second: f64,
        burst: u32,
        want: u32,
    ) -> Result<Tokens, StoreError> {
        let now: DateTime<Utc> = self.now();
        let mut state = self.state.lock();
        let record = state
            .destinations
            .get_mut(id)
            .ok_or_else(|| StoreError::NotFound {
                what: "destination",
                id: id.to_string(),
            })?;
        let rate = rate_per_second.max(1e-3);
        let burst = f64::from(burst.max(1));
        let elapsed = (now - record.rate_refilled_at.unwrap_or(now))
            .num_microseconds()
            .unwrap_or(0) as f64
            / 1e6;
        let tokens = (record.rate_tokens.unwrap_or(burst) + elapsed * rate).min(burst);
        let granted = tokens.floor().min(f64::from(want.max(1))).max(0.0);
        record.rate_tokens = Some(tokens - granted);
        record.rate_refilled_at = Some(now);
        if granted >= 1.0 {
            return Ok(Tokens::Granted(granted as u32));
        }
        Ok(Tokens::WaitFor(std::time::Duration::from_secs_f64(
            (1.0 - tokens).max(0.0) / rate,
        )))
    }
}
