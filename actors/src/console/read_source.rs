//! The line under a page's heading that says where its figures were read
//! when that is a replica (`database.read_url`), and how far behind the
//! primary it is, so an operator knows how old what the page shows may
//! be. Nothing when the page read the primary; when the replica cannot
//! say, the page's own figures (already read) are shown without it, and
//! the failure is logged.

use maud::{html, Markup};

use super::state::ConsoleState;
use remit::store::Reports;

pub(super) async fn note(state: &ConsoleState) -> Markup {
    if !state.replica {
        return html! {};
    }
    match state.reports.read_source().await {
        Ok(Some(source)) => html! {
            p.hint data-read-source { (source.summary().replacen("read", "Read", 1)) "." }
        },
        Ok(None) => html! {},
        Err(e) => {
            slog::warn!(state.log, "could not read how far behind the replica is";
                        "error" => remit::error_chain(&e));
            html! {}
        }
    }
}
