//! Named failpoints at the boundaries of a delivery (see
//! docs/failpoints.md). They compile to nothing unless the `failpoints`
//! feature is on. Armed with `return`, a point makes its actor fail (it is
//! stopped and restarted by its supervisor); armed with `return(exit)`, it
//! ends the whole process at once, as a crash would.

/// After the claim commits, before tasks are handed to throttles.
pub const AFTER_CLAIM: &str = "remit::after_claim";
/// In the sender, before the request is sent.
pub const BEFORE_SEND: &str = "remit::before_send";
/// After the response arrived, before the finish transaction.
pub const AFTER_RESPONSE: &str = "remit::after_response";
/// Inside the finish transaction, after its statement and before the
/// commit (in the store, so the finish rolls back).
pub use remit::store::IN_FINISH_FAILPOINT as IN_FINISH;
/// After the finish committed.
pub const AFTER_FINISH: &str = "remit::after_finish";
/// In a throttle, each time it looks at its queue.
pub const THROTTLE_PUMP: &str = "remit::throttle_pump";
/// In the reconciler, before each periodic check.
pub const RECONCILE: &str = "remit::reconcile";

/// The exit status a crash failpoint ends the process with.
pub use remit::store::CRASH_EXIT_CODE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("failpoint {0} was hit")]
pub struct Injected(pub &'static str);

/// Evaluates the named failpoint.
#[cfg_attr(not(feature = "failpoints"), allow(unused_variables))]
pub fn hit(name: &'static str) -> Result<(), Injected> {
    fail::fail_point!(name, |arg: Option<String>| {
        if arg.as_deref() == Some("exit") {
            std::process::exit(CRASH_EXIT_CODE);
        }
        Err(Injected(name))
    });
    Ok(())
}

/// Arms the failpoints named in the `FAILPOINTS` environment variable
/// (e.g. `FAILPOINTS=remit::after_response=return(exit)`) for the life of
/// the returned guard. Without the `failpoints` feature it does nothing.
pub fn setup() -> fail::FailScenario<'static> {
    fail::FailScenario::setup()
}
