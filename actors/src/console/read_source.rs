//! The line under a page's heading that says where its figures were read
//! when that is a replica (`database.read_url`), and how far behind the
//! primary it is, so an operator knows how old what the page shows may
//! be. Nothing when the page read the primary.

use maud::{html, Markup};

use super::{ConsoleError, ConsoleState};

pub(super) async fn note(state: &ConsoleState) -> Result<Markup, ConsoleError> {
    if !state.replica {
        return Ok(html! {});
    }
    Ok(match state.reports.read_source().await? {
        Some(source) => html! {
            p.hint data-read-source { (source.summary().replacen("read", "Read", 1)) "." }
        },
        None => html! {},
    })
}
