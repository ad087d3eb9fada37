//! diesel's view of the tables in `migrations/`. Kept by hand: the
//! migration is the source of truth and these declarations must match it.

pub mod sql_types {
    /// The `task_state` ENUM.
    #[derive(Debug, diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
    #[diesel(postgres_type(name = "task_state"))]
    pub struct TaskState;

    /// The `attempt_outcome` ENUM.
    #[derive(Debug, diesel::sql_types::SqlType, diesel::query_builder::QueryId)]
    #[diesel(postgres_type(name = "attempt_outcome"))]
    pub struct AttemptOutcome;
}

// The columns the statements written with diesel's DSL name; those only
// raw SQL reads or writes (the quota a receiver announced, the refusal of
// its address) are left out, under diesel's limit of 32.
diesel::table! {
    destinations (id) {
        id -> Text,
        region -> Text,
        url -> Text,
        enabled -> Bool,
        paused_until -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        rate_tokens -> Nullable<Float8>,
        rate_refilled_at -> Nullable<Timestamptz>,
        failure_streak -> Int4,
        failure_streak_since -> Nullable<Timestamptz>,
        disabled_reason -> Nullable<Text>,
        disabled_at -> Nullable<Timestamptz>,
        last_error -> Nullable<Text>,
        last_error_at -> Nullable<Timestamptz>,
        disable_after_seconds -> Nullable<Int8>,
        disable_after_failures -> Nullable<Int4>,
        rate_per_second -> Nullable<Float8>,
        burst -> Nullable<Int4>,
        max_in_flight -> Nullable<Int4>,
        timeout_ms -> Nullable<Int4>,
        max_attempts -> Nullable<Int4>,
        retry_horizon_seconds -> Nullable<Int8>,
        late_after_seconds -> Nullable<Int8>,
        deleted_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    destination_secrets (id) {
        id -> Text,
        seq -> Int8,
        destination_id -> Text,
        secret -> Nullable<Text>,
        key_fingerprint -> Nullable<Bytea>,
        nonce -> Nullable<Bytea>,
        ciphertext -> Nullable<Bytea>,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    destination_headers (destination_id, name) {
        destination_id -> Text,
        name -> Text,
        position -> Int4,
        value -> Nullable<Text>,
        key_fingerprint -> Nullable<Bytea>,
        nonce -> Nullable<Bytea>,
        ciphertext -> Nullable<Bytea>,
        hint -> Nullable<Text>,
    }
}

diesel::table! {
    destination_events (id) {
        id -> Uuid,
        seq -> Int8,
        kind -> Text,
        destination_id -> Text,
        region -> Text,
        reason -> Nullable<Text>,
        at -> Timestamptz,
        last_error -> Nullable<Text>,
    }
}

diesel::table! {
    payloads (payload_ref) {
        payload_ref -> Uuid,
        content_type -> Text,
        key_fingerprint -> Bytea,
        nonce -> Bytea,
        ciphertext -> Bytea,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use super::sql_types::TaskState;

    tasks (id) {
        id -> Uuid,
        tenant_id -> Text,
        reminder_id -> Text,
        destination_id -> Text,
        region -> Text,
        state -> TaskState,
        not_before -> Timestamptz,
        available_at -> Timestamptz,
        retry_horizon_at -> Timestamptz,
        lease_token -> Nullable<Int8>,
        lease_owner -> Nullable<Text>,
        lease_expires_at -> Nullable<Timestamptz>,
        attempt_count -> Int4,
        idempotency_key -> Text,
        payload_ref -> Uuid,
        last_status -> Nullable<Int2>,
        failure_reason -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        delivered_at -> Nullable<Timestamptz>,
        finalized_at -> Nullable<Timestamptz>,
        attempts_before_replay -> Int4,
        ordering_key -> Nullable<Text>,
        traceparent -> Nullable<Text>,
        cancelled_at -> Nullable<Timestamptz>,
        cancelled_by -> Nullable<Text>,
        waiting_change -> Nullable<Text>,
        move_to -> Nullable<Timestamptz>,
        payload_erased_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use super::sql_types::AttemptOutcome;

    attempts (id) {
        id -> Int8,
        task_id -> Uuid,
        attempt_number -> Int4,
        lease_token -> Int8,
        consumer_id -> Text,
        started_at -> Nullable<Timestamptz>,
        received_at -> Nullable<Timestamptz>,
        http_status -> Nullable<Int2>,
        transport_error -> Nullable<Text>,
        retry_after_raw -> Nullable<Text>,
        retry_after_deadline -> Nullable<Timestamptz>,
        outcome -> AttemptOutcome,
        next_available_at -> Nullable<Timestamptz>,
        recorded_at -> Timestamptz,
    }
}

diesel::joinable!(tasks -> payloads (payload_ref));
diesel::joinable!(attempts -> tasks (task_id));
diesel::joinable!(destination_secrets -> destinations (destination_id));
diesel::allow_tables_to_appear_in_same_query!(
    destinations,
    destination_headers,
    destination_secrets,
    payloads,
    tasks,
    attempts
);
