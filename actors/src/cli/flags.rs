//! The reading of flags several commands share: a region, an input file.

use super::error::CliError;

/// `--region`, when given, as a region.
pub(super) fn region_flag(
    region: Option<String>,
) -> Result<Option<remit::domain::Region>, CliError> {
    region
        .map(|r| r.parse::<remit::domain::Region>())
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))
}

/// The file a `--file`-like flag names, or standard input for `-`.
pub(super) fn open_input(
    path: &std::path::Path,
    flag: &str,
) -> Result<Box<dyn std::io::BufRead>, CliError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin())));
    }
    let file = std::fs::File::open(path).map_err(|e| CliError::Usage(format!("{flag}: {e}")))?;
    Ok(Box::new(std::io::BufReader::new(file)))
}
