//! The house as the tidy rules read it: each module's file, what it
//! declares and imports, and the imports resolved to the files that
//! define what they name.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use super::use_paths::{identifier, paths, strip_visibility, Use};

/// Each crate's root file: its modules are the files its `mod`
/// declarations reach.
const CRATE_ROOTS: &[&str] = &[
    "src/lib.rs",
    "actors/src/lib.rs",
    "actors/src/main.rs",
    "testkit/src/lib.rs",
];

/// One module: its file, its text without test modules, and what it
/// declares.
#[derive(Debug)]
pub(crate) struct Module {
    pub(crate) file: String,
    pub(crate) crate_root: String,
    pub(crate) parent: Option<String>,
    /// Child modules by name, each to its file.
    pub(crate) children: BTreeMap<String, String>,
    /// Names the file defines at its top level.
    pub(crate) defines: BTreeSet<String>,
    pub(crate) uses: Vec<Use>,
    /// `crate::…`, `super::…` and `self::…` paths written in the code.
    pub(crate) inline: Vec<Vec<String>>,
    pub(crate) text: String,
}

#[derive(Debug)]
pub(crate) struct House {
    pub(crate) modules: BTreeMap<String, Module>,
}

impl House {
    pub(crate) fn read() -> Self {
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
    pub(crate) fn circles(&self) -> Vec<String> {
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
    pub(crate) fn edges(&self) -> Edges {
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

    /// Each import of a name that a module above the importing file
    /// defines (its folder's face, or a face further up): a file leaning on
    /// the layer that assembles it.
    pub(crate) fn upward_imports(&self) -> Vec<String> {
        let mut found = Vec::new();
        for module in self.modules.values() {
            let mut above = BTreeSet::new();
            let mut parent = module.parent.as_ref();
            while let Some(file) = parent {
                above.insert(file.clone());
                parent = self.modules.get(file).and_then(|m| m.parent.as_ref());
            }
            let paths = module.uses.iter().map(|u| &u.path).chain(&module.inline);
            for path in paths {
                if let Some(file) = self.resolve(&module.file, path, 0) {
                    // An exported macro is the crate root's by Rust's rule,
                    // wherever it is written.
                    let macro_call = format!("{}!", path.join("::"));
                    if above.contains(&file)
                        && !path.iter().any(|s| s == "*")
                        && !module.text.contains(&macro_call)
                    {
                        found.push(format!(
                            "    {} -> {file}: {}",
                            module.file,
                            path.join("::")
                        ));
                    }
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }

    /// The file that defines what `path`, written in `from`, names; `None`
    /// for another crate's.
    pub(crate) fn resolve(&self, from: &str, path: &[String], depth: usize) -> Option<String> {
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
    pub(crate) fn home_of(&self, module: &Module, name: &str, depth: usize) -> String {
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

pub(crate) fn read_module(
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
pub(crate) fn children_dir(file: &str) -> PathBuf {
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
pub(crate) fn without_test_modules(text: &str) -> String {
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

pub(crate) fn is_top_level_macro(line: &str) -> bool {
    let Some(name) = line.strip_suffix("! {") else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The line after the block that opens on line `start`.
pub(crate) fn block_end(lines: &[&str], start: usize) -> usize {
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
pub(crate) fn braces(line: &str) -> i64 {
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
pub(crate) fn declared_modules(text: &str) -> Vec<String> {
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
pub(crate) fn definitions(text: &str) -> BTreeSet<String> {
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

pub(crate) type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

pub(crate) fn reachable(edges: &Edges, from: &str) -> BTreeSet<String> {
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
