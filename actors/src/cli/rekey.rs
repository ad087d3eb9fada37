//! `remit rekey`: everything stored re-sealed under the newest payload key.

use remit_actors::app;
use remit_actors::config::Config;
use remit_actors::rekey;
use remit_actors::words::counted;

use super::error::CliError;

pub async fn run(config: &Config, batch: u32) -> Result<(), CliError> {
    let key = app::payload_key(config)?;
    let newest = key.fingerprint_hex();
    // The ring must hold every key something is sealed under.
    let store = super::connect::connect_to_seal(config, key).await?;
    let report = rekey::rekey(&store, &newest, batch, |so_far| {
        if so_far.batches % 50 == 0 {
            eprintln!(
                "re-sealed {} and {} so far",
                counted(so_far.payloads, "payload"),
                counted(so_far.secrets, "signing secret")
            );
        }
    })
    .await
    .map_err(app::AppError::from)?;
    println!(
        "re-sealed {} and {} under key {newest}",
        counted(report.payloads, "payload"),
        counted(report.secrets, "signing secret")
    );
    if report.remaining.is_empty() {
        println!("nothing is left under an older key");
    } else {
        println!("left under older keys (sealed meanwhile by a process without key {newest}):");
        print!("{}", rekey::counts_to_text(&report.remaining, None));
    }
    for forgotten in &report.forgotten {
        println!("key {forgotten} seals nothing any more: it may be dropped from every ring");
    }
    Ok(())
}
