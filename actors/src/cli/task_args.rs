//! The flags of the commands that change or list tasks already scheduled:
//! `remit cancel`, `reschedule`, `erase` and `tasks`.

use super::report_format::ReportFormat;

/// Which task a change is for: its id, or its tenant and reminder.
#[derive(Debug, clap::Args)]
pub struct TaskArgs {
    /// The task's id.
    #[arg(long, conflicts_with_all = ["tenant", "reminder"], required_unless_present = "tenant")]
    pub task: Option<String>,
    /// The tenant it was scheduled for (with --reminder).
    #[arg(long, requires = "reminder")]
    pub tenant: Option<String>,
    #[arg(long, requires = "tenant")]
    pub reminder: Option<String>,
    /// The region to find the reminder in (default: the configured one).
    #[arg(long)]
    pub region: Option<String>,
}

/// `remit cancel`: one task, by its id or its tenant and reminder, or
/// every task that matches a filter, as a job.
#[derive(Debug, clap::Args)]
#[command(group(
    clap::ArgGroup::new("which")
        .required(true)
        .args(["task", "tenant", "filters", "job"])
))]
pub struct CancelArgs {
    /// The task's id.
    #[arg(long, conflicts_with_all = ["tenant", "reminder", "filters", "job"])]
    pub task: Option<String>,
    /// The tenant it was scheduled for (with --reminder).
    #[arg(long, requires = "reminder", conflicts_with_all = ["filters", "job"])]
    pub tenant: Option<String>,
    #[arg(long, requires = "tenant")]
    pub reminder: Option<String>,
    /// Cancel in bulk: KEY=VALUE, repeatable: tenant, reminder,
    /// destination, from and until (RFC 3339; the task's not_before in
    /// [from, until)).
    #[arg(long = "filter", value_name = "KEY=VALUE", conflicts_with = "job")]
    pub filters: Vec<String>,
    /// Resume the recorded bulk cancel with this id, or report it when it
    /// has finished (one of another region than --region's is not found).
    #[arg(long)]
    pub job: Option<String>,
    /// The region to find the reminder in, or to cancel in bulk in
    /// (default: the configured one).
    #[arg(long)]
    pub region: Option<String>,
}

/// `remit erase`: one task, one reminder, or a whole tenant.
#[derive(Debug, clap::Args)]
pub struct EraseArgs {
    /// The task's id.
    #[arg(long, conflicts_with_all = ["tenant", "reminder"], required_unless_present = "tenant")]
    pub task: Option<String>,
    /// The tenant: alone, every payload of it in every region; with
    /// --reminder, that reminder's.
    #[arg(long)]
    pub tenant: Option<String>,
    #[arg(long, requires = "tenant")]
    pub reminder: Option<String>,
    /// The region to find the reminder in (default: the configured one).
    #[arg(long)]
    pub region: Option<String>,
}

/// `remit tasks`: the filters of GET /v1/tasks.
#[derive(Debug, clap::Args)]
pub struct TaskListArgs {
    #[arg(long)]
    pub tenant: Option<String>,
    #[arg(long)]
    pub reminder: Option<String>,
    #[arg(long)]
    pub destination: Option<String>,
    /// pending, leased, retry_wait, delivered, failed or cancelled.
    #[arg(long)]
    pub state: Option<String>,
    /// Only tasks due (not_before) at or after this instant, RFC 3339.
    #[arg(long)]
    pub from: Option<String>,
    /// Only tasks due (not_before) before this instant, RFC 3339.
    #[arg(long)]
    pub until: Option<String>,
    /// Tasks scheduled before this one (the `next` a page printed).
    #[arg(long)]
    pub before: Option<String>,
    /// At most this many, 1 to 500.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// The region (default: the configured one).
    #[arg(long)]
    pub region: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
}
