//! Counts as a person reads them: "1 request", "2 requests", "3 retries".

/// `n` and the noun, singular for one and plural otherwise.
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", plural(noun))
}

/// The regular English plural, which is all remit's nouns need.
fn plural(noun: &str) -> String {
    let consonant_y = noun.len() > 1
        && noun.ends_with('y')
        && !noun[..noun.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &noun[..noun.len() - 1])
    } else if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1u64, "request"), "1 request");
        assert_eq!(counted(0u64, "request"), "0 requests");
        assert_eq!(counted(2u64, "retry"), "2 retries");
        assert_eq!(counted(2u64, "delivery"), "2 deliveries");
        assert_eq!(counted(3u64, "batch"), "3 batches");
        assert_eq!(counted(4u64, "day"), "4 days");
        assert_eq!(counted(1u64, "task"), "1 task");
    }
}
