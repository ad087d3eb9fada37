//! `Destinations` on SQLite: each call into the file that holds its
//! statements (`destination_rows`, `secrets`, `send_targets`,
//! `destination_changes`, `refusals`).

use super::audit;
use super::destination_changes;
use super::destination_rows;
use super::secrets;
use super::store::SqliteStore;
use crate::domain::{
    AuditAction, Destination, DestinationChange, DestinationId, NewDestination, Rotation,
    SendTarget, SigningSecret,
};
use crate::store::contract::{Deleted, Destinations, NewJob, StoreError, Wakeup};
use chrono::{DateTime, Duration, Utc};

impl Destinations for SqliteStore {
    async fn update_destination(
        &self,
        id: &DestinationId,
        change: DestinationChange,
    ) -> Result<Destination, StoreError> {
        let changed = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| destination_changes::update(conn, ctx, &id, &change)
            })
            .await?;
        self.wake(Wakeup::Destination(changed.id.clone()));
        // Limits may have loosened: the claimers look again too.
        self.wake(Wakeup::DueWork(changed.region));
        Ok(changed)
    }

    async fn delete_destination(
        &self,
        id: &DestinationId,
        cancel: Option<NewJob>,
    ) -> Result<Deleted, StoreError> {
        let deleted = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| destination_changes::delete(conn, ctx, &id, cancel)
            })
            .await?;
        self.wake(Wakeup::Destination(id.clone()));
        Ok(deleted)
    }

    async fn add_destination(&self, new: NewDestination) -> Result<Destination, StoreError> {
        self.run(true, move |conn, ctx| destination_rows::add(conn, ctx, new))
            .await
    }

    async fn destination(&self, id: &DestinationId) -> Result<Option<Destination>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| destination_rows::shown(conn, &id))
            .await
    }

    async fn send_targets(
        &self,
        ids: &[DestinationId],
    ) -> Result<Vec<Option<SendTarget>>, StoreError> {
        let ids = ids.to_vec();
        self.run(false, move |conn, ctx| {
            ids.iter()
                .map(|id| destination_rows::send_target(conn, &ctx.key, id, ctx.now))
                .collect()
        })
        .await
    }

    async fn rotate_secret(
        &self,
        id: &DestinationId,
        rotation: Rotation,
    ) -> Result<SigningSecret, StoreError> {
        let added = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| secrets::rotate(conn, ctx, &id, rotation)
            })
            .await?;
        // This process forgets what it keeps of the destination.
        self.wake(Wakeup::Destination(id.clone()));
        Ok(added)
    }

    async fn signing_secrets(&self, id: &DestinationId) -> Result<Vec<SigningSecret>, StoreError> {
        let id = id.clone();
        self.run(false, move |conn, _| secrets::list(conn, &id))
            .await
    }

    async fn pause_destination(
        &self,
        id: &DestinationId,
        pause: Duration,
    ) -> Result<DateTime<Utc>, StoreError> {
        let id = id.clone();
        let until = self
            .run(true, {
                let id = id.clone();
                move |conn, ctx| destination_rows::pause(conn, &id, pause, ctx.now)
            })
            .await?;
        self.wake(Wakeup::Destination(id));
        Ok(until)
    }

    async fn mark_refused(&self, id: &DestinationId, why: String) -> Result<(), StoreError> {
        self.record_refusal(id.clone(), why).await
    }

    async fn disable_destination(
        &self,
        id: &DestinationId,
        reason: Option<String>,
    ) -> Result<Destination, StoreError> {
        let id = id.clone();
        let disabled = self
            .run(true, move |conn, ctx| {
                audit::destination_change(conn, ctx, &id, AuditAction::DestinationDisable, |c| {
                    destination_rows::set_health(c, &id, ctx.now, |d, now| {
                        crate::store::rules::health::disable(d, reason, now)
                    })
                })
            })
            .await?;
        self.wake(Wakeup::Destination(disabled.id.clone()));
        Ok(disabled)
    }

    async fn enable_destination(&self, id: &DestinationId) -> Result<Destination, StoreError> {
        let id = id.clone();
        let enabled = self
            .run(true, move |conn, ctx| {
                audit::destination_change(conn, ctx, &id, AuditAction::DestinationEnable, |c| {
                    destination_rows::set_health(
                        c,
                        &id,
                        ctx.now,
                        crate::store::rules::health::enable,
                    )
                })
            })
            .await?;
        self.wake(Wakeup::Destination(enabled.id.clone()));
        self.wake(Wakeup::DueWork(enabled.region));
        Ok(enabled)
    }
}
