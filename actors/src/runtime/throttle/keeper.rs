//! What a throttle knows of the supervisor that routes tasks to it: whom
//! to tell when it is idle, and where tokens it leaves unspent go.

use actix::WeakRecipient;

use super::spare::SpareTokens;
use crate::runtime::shared::messages::Idle;

/// What a throttle knows of the supervisor that routes tasks to it.
#[derive(Debug, Clone)]
pub struct Keeper {
    /// Tells this throttle from an earlier or later one of its destination.
    pub id: u64,
    pub supervisor: WeakRecipient<Idle>,
    pub spare: SpareTokens,
}
