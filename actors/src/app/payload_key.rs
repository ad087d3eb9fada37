//! Which payload keys a process holds: one key, or a ring from a variable
//! or a file, as the configuration gives them.

use remit::payload_crypto::PayloadKey;

use super::error::AppError;
use crate::config::Config;

/// The payload keys: `REMIT_PAYLOAD_KEY` (a ring of one), or a ring,
/// newest first, from `REMIT_PAYLOAD_KEYS` (comma-separated) or the file
/// `payload_key_file` names (one key per line; blank lines and lines
/// starting with `#` are skipped). Exactly one of the three.
pub fn payload_key(config: &Config) -> Result<PayloadKey, AppError> {
    let given = [
        config.payload_key.is_some(),
        config.payload_keys.is_some(),
        config.payload_key_file.is_some(),
    ];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(AppError::PayloadKeyRing {
            source_name: "REMIT_PAYLOAD_KEY, REMIT_PAYLOAD_KEYS and payload_key_file".into(),
            reason: "set only one of them".into(),
        });
    }
    if let Some(text) = &config.payload_keys {
        return PayloadKey::ring(text.split(',').map(str::trim)).map_err(|e| {
            AppError::PayloadKeyRing {
                source_name: "REMIT_PAYLOAD_KEYS".into(),
                reason: e.to_string(),
            }
        });
    }
    if let Some(path) = &config.payload_key_file {
        let source_name = format!("payload_key_file ({})", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| AppError::PayloadKeyRing {
            source_name: source_name.clone(),
            reason: e.to_string(),
        })?;
        let lines: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .collect();
        return PayloadKey::ring(lines.iter().map(|(_, l)| *l)).map_err(|e| {
            // The position counts keys; the file's line says where it is.
            let line = e
                .position
                .checked_sub(1)
                .and_then(|i| lines.get(i))
                .map_or(String::new(), |(n, _)| format!("line {n}, "));
            AppError::PayloadKeyRing {
                source_name,
                reason: format!("{line}{e}"),
            }
        });
    }
    let text = config
        .payload_key
        .as_deref()
        .ok_or(AppError::NoPayloadKey)?;
    Ok(PayloadKey::from_base64(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::default()
    }

    #[test]
    fn a_ring_from_the_variable_or_a_file_seals_with_its_first_key() {
        let (new, old) = (PayloadKey::generate_base64(), PayloadKey::generate_base64());
        let newest = PayloadKey::from_base64(&new).unwrap().fingerprint_hex();
        let mut from_env = config();
        from_env.payload_keys = Some(format!("{new}, {old}"));
        let ring = payload_key(&from_env).unwrap();
        assert_eq!(ring.fingerprint_hex(), newest);
        assert_eq!(ring.fingerprints().count(), 2);

        let path = std::env::temp_dir().join(format!("remit-keys-{}", uuid::Uuid::new_v4()));
        std::fs::write(&path, format!("# newest first\n{new}\n\n{old}\n")).unwrap();
        let mut from_file = config();
        from_file.payload_key_file = Some(path.clone());
        assert_eq!(payload_key(&from_file).unwrap().fingerprint_hex(), newest);

        std::fs::write(&path, format!("{new}\n# old\nnot-a-key\n")).unwrap();
        let refused = payload_key(&from_file).unwrap_err().to_string();
        assert!(
            refused.contains("line 3, key 2: not standard base64"),
            "{refused}"
        );
        assert!(!refused.contains(&new), "{refused}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_bad_ring_names_the_variable_and_the_position_never_a_key() {
        let good = PayloadKey::generate_base64();
        let mut bad = config();
        bad.payload_keys = Some(format!("{good},AAAA"));
        let refused = payload_key(&bad).unwrap_err();
        assert_eq!(refused.exit_code(), 2);
        let text = refused.to_string();
        assert_eq!(
            text,
            "REMIT_PAYLOAD_KEYS: key 2: must decode to 32 bytes, got 3"
        );

        let mut both = config();
        both.payload_key = Some(good.clone());
        both.payload_keys = Some(good.clone());
        let text = payload_key(&both).unwrap_err().to_string();
        assert!(text.contains("set only one"), "{text}");
        assert!(!text.contains(&good));
    }
}
