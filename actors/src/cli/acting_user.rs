//! Who a command acts as in the audit log: the name `--as` gives, else the operating-system user the process runs
//! as, by its effective uid: its name in the user database, or `uid N`
//! where it has none (a container's numeric user). Never `USER`, which a
//! service manager or `sudo` may leave unset and anyone may set.

use std::sync::OnceLock;

use remit::domain::Actor;

use super::CliError;

/// The longest name `--as` takes.
const MAX_ACTOR: usize = 64;

static CHOSEN: OnceLock<String> = OnceLock::new();

/// Takes `--as` for the rest of the command, or says what is wrong
/// with it.
pub(super) fn choose(actor: Option<&str>) -> Result<(), CliError> {
    let Some(actor) = actor else {
        return Ok(());
    };
    let fits = (1..=MAX_ACTOR).contains(&actor.chars().count())
        && !actor.chars().any(char::is_control)
        && actor.trim() == actor;
    if !fits {
        return Err(CliError::Usage(format!(
            "--as: {} is not a name the audit log takes: 1 to {MAX_ACTOR} characters, \
             no control characters, no space at either end",
            remit::domain::quoted(actor)
        )));
    }
    let _ = CHOSEN.set(actor.to_owned());
    Ok(())
}

/// The actor a command's admin calls are recorded as.
pub(super) fn actor() -> Actor {
    let user = CHOSEN.get().cloned().unwrap_or_else(os_user);
    Actor::Cli { user }
}

fn os_user() -> String {
    whoami::username()
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(effective_uid)
}

/// `uid N`, from the owner of `/proc/self` (the process's effective uid).
fn effective_uid() -> String {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| format!("uid {}", m.uid()))
        .unwrap_or_else(|_| "uid unknown".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_os_user_is_read_from_the_uid_not_the_environment() {
        // This process's user, whatever USER says.
        let Actor::Cli { user } = actor() else {
            panic!("not a cli actor");
        };
        let owner = effective_uid();
        assert!(user == whoami::username().unwrap_or(owner.clone()) || user == owner);
        assert_ne!(user, "unknown");
    }

    #[test]
    fn a_bad_actor_names_the_flag_and_what_it_takes() {
        for bad in ["", " alice", "a\nb", &"x".repeat(65)] {
            let refused = choose(Some(bad)).unwrap_err().to_string();
            assert!(refused.starts_with("--as: "), "{refused}");
            assert!(refused.contains("1 to 64 characters"), "{refused}");
        }
    }
}
