//! The house's rules, checked on the source as it stands, so the shape a
//! newcomer reads stays the shape the code has:
//! - no two files import each other, however long the loop;
//! - every folder's module doc has a `# Layout` that names each of its
//!   files, but for a list of those still owed, which may only shrink;
//! - no file grows past `MAX_LINES`, with a list of the files that still do
//!   which may only shrink.
//!
//! It reads the code, never builds it: a module is a `mod` declaration's
//! file, and an import is a path that starts with `crate`, `super`, `self`
//! or a child module's name, resolved to the file that defines the name it
//! ends with (through re-exports, as a reader following it would).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each crate's root file: its modules are the files its `mod`
/// declarations reach.
const CRATE_ROOTS: &[&str] = &["src/lib.rs", "actors/src/lib.rs", "actors/src/main.rs"];

/// The longest a source file may be.
const MAX_LINES: usize = 450;

/// The files still longer than `MAX_LINES`. The list may only shrink: a
/// file listed here that fits fails the test until it is taken off.
const TOO_LONG: &[&str] = &[
    "actors/src/runtime/shared/metrics.rs",
    "actors/src/transfer/lines.rs",
    "src/payload_crypto.rs",
    "src/store/postgres/reports/status.rs",
];

/// Folders whose Layout is still to be written: the list may only shrink.
const LAYOUT_OWED: &[&str] = &[];

#[test]
fn no_import_circles() {
    let house = House::read();
    let circles = house.circles();
    assert!(
        circles.is_empty(),
        "files that import each other (break each loop by moving what both \
         need below them):\n{}",
        circles.join("\n")
    );
}

#[test]
fn every_layout_names_its_files() {
    let house = House::read();
    let mut missing = Vec::new();
    for module in house.modules.values() {
        if module.children.is_empty() {
            continue;
        }
        let doc = module_doc(&module.text);
        if LAYOUT_OWED.contains(&module.file.as_str()) {
            if doc.contains("# Layout") {
                missing.push(format!(
                    "{}: has a Layout; take it off LAYOUT_OWED",
                    module.file
                ));
            }
            continue;
        }
        if !doc.contains("# Layout") {
            missing.push(format!("{}: no `# Layout` section", module.file));
            continue;
        }
        for child in module.children.keys() {
            if !names(&doc, child) {
                missing.push(format!(
                    "{}: the Layout does not name `{child}`",
                    module.file
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn no_file_is_too_long() {
    let mut found = Vec::new();
    for file in source_files(&["src", "actors/src"]) {
        let lines = fs::read_to_string(&file).expect("readable").lines().count();
        let path = file.to_string_lossy().into_owned();
        let listed = TOO_LONG.contains(&path.as_str());
        if lines > MAX_LINES && !listed {
            found.push(format!("{path}: {lines} lines, over {MAX_LINES}"));
        }
        if lines <= MAX_LINES && listed {
            found.push(format!("{path}: {lines} lines now; take it off TOO_LONG"));
        }
    }
    for listed in TOO_LONG {
        if !Path::new(listed).exists() {
            found.push(format!("{listed}: gone; take it off TOO_LONG"));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// One module: its file, its text without test modules, and what it
/// declares.
#[derive(Debug)]
struct Module {
    file: String,
    crate_root: String,
    parent: Option<String>,
    /// Child modules by name, each to its file.
    children: BTreeMap<String, String>,
    /// Names the file defines at its top level.
    defines: BTreeSet<String>,
    uses: Vec<Use>,
    /// `crate::…`, `super::…` and `self::…` paths written in the code.
    inline: Vec<Vec<String>>,
    text: String,
}

/// One path of a `use` statement.
#[derive(Debug)]
struct Use {
    /// The path as written, split into segments.
    path: Vec<String>,
    /// The name it brings in: its last segment, its alias, or the module's
    /// name for `self`.
    name: String,
}

#[derive(Debug)]
struct House {
    modules: BTreeMap<String, Module>,
}

impl House {
    fn read() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::env::set_current_dir(root).expect("the workspace is there");
        let mut modules = BTreeMap::new();
        for crate_root in CRATE_ROOTS {
            read_module(crate_root, crate_root, None, &mut modules);
        }
        House { modules }
    }

    /// Each set of files that reach each other through imports, with what
    /// ties each to the others.
    fn circles(&self) -> Vec<String> {
        let edges = self.edges();
        let mut circles = Vec::new();
        let mut seen = BTreeSet::new();
        for start in edges.keys() {
            if seen.contains(start) {
                continue;
            }
            let reach = reachable(&edges, start);
            let loop_: BTreeSet<String> = reach
                .iter()
                .filter(|f| reachable(&edges, f).contains(start))
                .cloned()
                .collect();
            if loop_.is_empty() {
                continue;
            }
            seen.extend(loop_.iter().cloned());
            let mut ties = Vec::new();
            for file in &loop_ {
                for (target, names) in &edges[file] {
                    if loop_.contains(target) {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        ties.push(format!("    {file} -> {target}: {}", names.join(", ")));
                    }
                }
            }
            circles.push(format!("  {} files:\n{}", loop_.len(), ties.join("\n")));
        }
        circles
    }

    /// File to the files it imports from, each with the names it takes.
    fn edges(&self) -> Edges {
        let mut edges = BTreeMap::new();
        for module in self.modules.values() {
            let mut targets: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            let paths = module.uses.iter().map(|u| &u.path).chain(&module.inline);
            for path in paths {
                if let Some(file) = self.resolve(&module.file, path, 0) {
                    let name = path.last().cloned().unwrap_or_default();
                    targets.entry(file).or_default().insert(name);
                }
            }
            targets.remove(&module.file);
            // A folder's face (its `mod.rs`, or the file beside the folder)
            // assembles the folder: its files may lean on what it defines,
            // and it on them, as one room seen from outside.
            let folder = children_dir(&module.file);
            if !module.children.is_empty() {
                targets.retain(|t, _| !Path::new(t).starts_with(&folder));
            }
            edges.insert(module.file.clone(), targets);
        }
        edges
    }

    /// The file that defines what `path`, written in `from`, names; `None`
    /// for another crate's.
    fn resolve(&self, from: &str, path: &[String], depth: usize) -> Option<String> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        let mut current = self.modules.get(from)?;
        let mut rest = path;
        match rest[0].as_str() {
            "crate" => {
                current = self.modules.get(&current.crate_root)?;
                rest = &rest[1..];
            }
            "self" => rest = &rest[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    current = self.modules.get(current.parent.as_ref()?)?;
                    rest = &rest[1..];
                }
            }
            first if current.children.contains_key(first) => {}
            _ => return None,
        }
        while let Some(segment) = rest.first() {
            if segment == "self" || segment == "*" {
                rest = &rest[1..];
                continue;
            }
            if let Some(child) = current.children.get(segment) {
                current = &self.modules[child];
                rest = &rest[1..];
                continue;
            }
            return Some(self.home_of(current, segment, depth));
        }
        Some(current.file.clone())
    }

    /// The file where `name`, as seen from `module`, is defined: its own
    /// file, or wherever an import of that name leads.
    fn home_of(&self, module: &Module, name: &str, depth: usize) -> String {
        if module.defines.contains(name) {
            return module.file.clone();
        }
        for u in module.uses.iter().filter(|u| u.name == name) {
            if let Some(file) = self.resolve(&module.file, &u.path, depth + 1) {
                return file;
            }
        }
        for u in module.uses.iter().filter(|u| u.name == "*") {
            let within = &u.path[..u.path.len() - 1];
            let glob = self.resolve(&module.file, within, depth + 1);
            if let Some(inner) = glob.and_then(|file| self.modules.get(&file)) {
                if inner.defines.contains(name) {
                    return inner.file.clone();
                }
            }
        }
        module.file.clone()
    }
}

fn read_module(
    file: &str,
    crate_root: &str,
    parent: Option<&str>,
    modules: &mut BTreeMap<String, Module>,
) {
    let raw = fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let text = without_test_modules(&raw);
    let dir = children_dir(file);
    let mut children = BTreeMap::new();
    for name in declared_modules(&text) {
        let flat = dir.join(format!("{name}.rs"));
        let nested = dir.join(&name).join("mod.rs");
        let child = if flat.exists() { flat } else { nested };
        assert!(child.exists(), "{file}: `mod {name};` has no file");
        children.insert(name, child.to_string_lossy().into_owned());
    }
    let (uses, inline) = paths(&text);
    let module = Module {
        file: file.to_owned(),
        crate_root: crate_root.to_owned(),
        parent: parent.map(str::to_owned),
        defines: definitions(&text),
        children: children.clone(),
        uses,
        inline,
        text,
    };
    modules.insert(file.to_owned(), module);
    for child in children.values() {
        read_module(child, crate_root, Some(file), modules);
    }
}

/// Where a file's child modules live: beside it for a crate root or a
/// `mod.rs`, in the folder of its own name otherwise.
fn children_dir(file: &str) -> PathBuf {
    let path = Path::new(file);
    let dir = path.parent().expect("a file is in a folder");
    let stem = path.file_stem().expect("a file has a name");
    if stem == "mod" || CRATE_ROOTS.contains(&file) {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    }
}

/// The text without `#[cfg(test)]` modules, inline or included from
/// another file: tests are not rooms of the house.
fn without_test_modules(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // A macro invoked at the top level (diesel's `table!`) writes
        // modules of its own, whose `super` is not the file's.
        if is_top_level_macro(lines[i]) {
            i = block_end(&lines, i);
            continue;
        }
        if lines[i].trim() == "#[cfg(test)]" {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim_start().starts_with("#[") {
                j += 1;
            }
            let item = lines.get(j).map_or("", |l| l.trim());
            if item.starts_with("mod ") || item.starts_with("pub mod ") {
                if item.ends_with(';') {
                    i = j + 1;
                    continue;
                }
                i = block_end(&lines, j);
                continue;
            }
        }
        kept.push(lines[i]);
        i += 1;
    }
    kept.join("\n")
}

fn is_top_level_macro(line: &str) -> bool {
    let Some(name) = line.strip_suffix("! {") else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The line after the block that opens on line `start`.
fn block_end(lines: &[&str], start: usize) -> usize {
    let mut depth = 0;
    let mut k = start;
    while k < lines.len() {
        depth += braces(lines[k]);
        k += 1;
        if depth <= 0 {
            break;
        }
    }
    k
}

/// Opening minus closing braces on a line, outside strings and comments.
fn braces(line: &str) -> i64 {
    let code = line.split("//").next().unwrap_or("");
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    for c in code.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '{' if !in_string => depth += 1,
            '}' if !in_string => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// `mod name;` declarations at the top level, but for test includes.
fn declared_modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut path_attribute = false;
    for line in text.lines() {
        if line.starts_with("#[path") {
            path_attribute = true;
            continue;
        }
        let item = strip_visibility(line);
        if let Some(rest) = item.strip_prefix("mod ") {
            if let Some(name) = rest.strip_suffix(';') {
                if !path_attribute {
                    names.push(name.trim().to_owned());
                }
            }
        }
        if !line.starts_with("#[") {
            path_attribute = false;
        }
    }
    names
}

/// Names a file defines at its top level.
fn definitions(text: &str) -> BTreeSet<String> {
    const KINDS: &[&str] = &[
        "fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "union ", "mod ",
    ];
    let mut names = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        if let Some(rest) = line.strip_prefix("macro_rules! ") {
            names.insert(identifier(rest));
            continue;
        }
        let mut item = strip_visibility(line);
        for qualifier in ["async ", "unsafe ", "extern \"C\" "] {
            item = item.strip_prefix(qualifier).unwrap_or(item);
        }
        // `const fn name` is a function, not a constant.
        if item.starts_with("const fn ") {
            item = &item["const ".len()..];
        }
        for kind in KINDS {
            if let Some(rest) = item.strip_prefix(kind) {
                names.insert(identifier(rest));
            }
        }
    }
    names.remove("");
    names
}

fn strip_visibility(line: &str) -> &str {
    let Some(rest) = line.strip_prefix("pub") else {
        return line;
    };
    let rest = match rest.strip_prefix('(') {
        Some(inner) => inner.split_once(')').map_or(inner, |(_, after)| after),
        None => rest,
    };
    rest.trim_start()
}

fn identifier(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every `use` path (with whether it is a `pub use`) and every path that
/// starts with `crate::`, `super::` or `self::` elsewhere in the code.
fn paths(text: &str) -> (Vec<Use>, Vec<Vec<String>>) {
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
fn find_use(text: &str) -> Option<usize> {
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
fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
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
fn expand_compact(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
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

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn inline_paths(code: &str) -> Vec<Vec<String>> {
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

type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn reachable(edges: &Edges, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut next: Vec<&str> = edges[from].keys().map(String::as_str).collect();
    while let Some(file) = next.pop() {
        if seen.insert(file.to_owned()) {
            if let Some(out) = edges.get(file) {
                next.extend(out.keys().map(String::as_str));
            }
        }
    }
    seen
}

/// The `//!` lines at the top of a file, without their markers.
fn module_doc(text: &str) -> String {
    text.lines()
        .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
        .map(|l| l.trim_start_matches("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `doc` names `name` in code quotes (`name`, `name/`, or as the
/// head of a path such as `name::Thing`).
fn names(doc: &str, name: &str) -> bool {
    doc.split('`').skip(1).step_by(2).any(|quoted| {
        quoted == name
            || quoted.trim_end_matches('/') == name
            || quoted.starts_with(&format!("{name}::"))
    })
}

fn source_files(dirs: &[&str]) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(root).expect("the workspace is there");
    let mut files = Vec::new();
    let mut next: Vec<PathBuf> = dirs.iter().map(PathBuf::from).collect();
    while let Some(dir) = next.pop() {
        for entry in fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                next.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}
