//! The statements every delivery runs through, by what they do, and the
//! one each process runs over its region every few seconds (the settle of
//! disabled destinations' tasks), for the test that plans each one on a
//! table of a million tasks (`tests/store/hot_path_plans.rs`). Each is
//! prepared by its own file.

pub use super::leases::claim::claim_sql as claim;
pub use super::leases::finish_many::{END_MANY_SQL as FINISH, PAUSE_MANY_SQL as PAUSE};
pub use super::leases::lease::{EXTEND_SQL as EXTEND, HAND_BACK_SQL as HAND_BACK};
pub use super::leases::next_due::NEXT_DUE_SQL as NEXT_DUE;
pub use super::rates::rate::TAKE_SQL as TAKE;
pub use super::schedule::schedule_many::INSERT_MANY_SQL as SCHEDULE;
pub use super::upkeep::FAIL_DISABLED_SQL as SETTLE_DISABLED;
