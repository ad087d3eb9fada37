//! Reading paths out of Rust source: each `use` tree as the paths it
//! brings in, and the `crate::`, `super::` and `self::` paths written in
//! the code.

/// One path of a `use` statement.
#[derive(Debug)]
pub(crate) struct Use {
    /// The path as written, split into segments.
    pub(crate) path: Vec<String>,
    /// The name it brings in: its last segment, its alias, or the module's
    /// name for `self`.
    pub(crate) name: String,
}

/// A line without its leading visibility (`pub`, `pub(crate)`, ...).
pub(crate) fn strip_visibility(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("pub") else {
        return line;
    };
    let rest = match rest.strip_prefix('(') {
        Some(inner) => inner.split_once(')').map_or(inner, |(_, after)| after),
        None => rest,
    };
    rest.trim_start()
}

pub(crate) fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every `use` path (with whether it is a `pub use`) and every path that
/// starts with `crate::`, `super::` or `self::` elsewhere in the code.
pub(crate) fn paths(text: &str) -> (Vec<Use>, Vec<Vec<String>>) {
    let code: String = text
        .lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut uses = Vec::new();
    let mut rest = code.as_str();
    let mut other = String::new();
    while let Some(at) = find_use(rest) {
        other.push_str(&rest[..at]);
        let statement = &rest[at..];
        let end = statement.find(';').unwrap_or(statement.len());
        let (_, tree) = statement[..end].split_once("use ").expect("found a use");
        for (path, name) in expand(tree) {
            uses.push(Use { path, name });
        }
        rest = &statement[(end + 1).min(statement.len())..];
    }
    other.push_str(rest);
    (uses, inline_paths(&other))
}

/// Where the next `use` statement (possibly `pub …`) starts.
pub(crate) fn find_use(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let item = strip_visibility(trimmed);
        if item.starts_with("use ") {
            return Some(offset + (line.len() - trimmed.len()));
        }
        offset += line.len();
    }
    None
}

/// A use tree (`a::{b, c::{self, d as e}}`) as its paths, each with the
/// name it brings in.
pub(crate) fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
    let compact: String = tree
        .replace(" as ", "@")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    expand_compact(&compact)
        .into_iter()
        .filter_map(|(mut path, alias)| {
            let last = path.last()?.clone();
            let name = match alias {
                Some(alias) => alias,
                None if last == "self" && path.len() > 1 => {
                    path.pop();
                    path.last()?.clone()
                }
                None => last,
            };
            Some((path, name))
        })
        .collect()
}

/// Paths of a use tree without whitespace, `as` written `@`.
pub(crate) fn expand_compact(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let Some(open) = tree.find('{') else {
        let (path, alias) = match tree.split_once('@') {
            Some((path, alias)) => (path, Some(alias.to_owned())),
            None => (tree, None),
        };
        return vec![(segments(path), alias)];
    };
    let prefix = segments(&tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(expand_compact)
        .map(|(tail, alias)| (prefix.iter().cloned().chain(tail).collect(), alias))
        .collect()
}

pub(crate) fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

pub(crate) fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let at = from + at;
            from = at + start.len();
            let before = at.checked_sub(1).map(|i| bytes[i]);
            if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
                continue;
            }
            // `pub(in crate::…)` names who may see an item, not what it uses.
            if code[..at].ends_with("pub(in ") {
                continue;
            }
            let path: String = code[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            found.push(segments(&path));
        }
    }
    found
}
