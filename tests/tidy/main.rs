//! The house's rules, checked on the source as it stands, so the shape a
//! newcomer reads stays the shape the code has:
//! - no two files import each other, however long the loop, and no file
//!   imports what a module above it (its folder's `mod.rs`, or the crate's
//!   root) defines;
//! - every folder's module doc has a `# Layout` that names each of its
//!   files, but for a list of those still owed, which may only shrink;
//! - no file grows past `MAX_LINES`, with a list of the files that still do
//!   which may only shrink;
//! - every trait of the store's contract (`src/store/contract/X.rs`) is
//!   implemented by each backend in its file or folder of the same name
//!   (`X.rs` or `X/mod.rs` in `postgres/`, `sqlite/` and `memory/`), and
//!   forwarded by `Database` (`database/contract.rs`).
//!
//! It reads the code, never builds it: a module is a `mod` declaration's
//! file, and an import is a path that starts with `crate`, `super`, `self`
//! or a child module's name, resolved to the file that defines the name it
//! ends with (through re-exports, as a reader following it would).

use std::fs;
use std::path::{Path, PathBuf};

mod house;
mod use_paths;

use house::House;

/// The longest a source file may be.
const MAX_LINES: usize = 450;

/// The files still longer than `MAX_LINES`. The list may only shrink: a
/// file listed here that fits fails the test until it is taken off.
const TOO_LONG: &[&str] = &[];

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
fn no_file_imports_from_a_layer_above_it() {
    let upward = House::read().upward_imports();
    assert!(
        upward.is_empty(),
        "files that import what a module above them defines (move it into a \
         file of its own beside them, and import it from there):\n{}",
        upward.join("\n")
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
    for file in source_files(&["src", "actors/src", "testkit/src"]) {
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

/// Where the store's contract is, and the backends that mirror it.
const CONTRACT: &str = "src/store/contract";
const BACKENDS: &[&str] = &["src/store/postgres", "src/store/sqlite", "src/store/memory"];

#[test]
fn every_backend_mirrors_the_contract() {
    let mut missing = Vec::new();
    let contract = source_files(&[CONTRACT]);
    let forwarded = fs::read_to_string("src/store/database/contract.rs").expect("readable");
    let mut traits = 0;
    for file in contract {
        let text = fs::read_to_string(&file).expect("readable");
        let stem = file.file_stem().and_then(|s| s.to_str()).expect("a name");
        for name in declared_traits(&text) {
            // `Store` is the union of the others, implemented for whatever
            // implements them.
            if name == "Store" {
                continue;
            }
            traits += 1;
            let wanted = format!("impl {name} for ");
            for backend in BACKENDS {
                let own = [
                    format!("{backend}/{stem}.rs"),
                    format!("{backend}/{stem}/mod.rs"),
                ];
                let found = own
                    .iter()
                    .any(|path| fs::read_to_string(path).is_ok_and(|text| text.contains(&wanted)));
                if !found {
                    missing.push(format!(
                        "{backend}: `{name}` (contract/{stem}.rs) is not implemented in \
                         `{stem}.rs` or `{stem}/mod.rs`"
                    ));
                }
            }
            if !forwarded.contains(&format!("impl {name} for Database")) {
                missing.push(format!(
                    "src/store/database/contract.rs: `Database` does not forward `{name}`"
                ));
            }
        }
    }
    assert!(
        traits > 0,
        "no trait found under {CONTRACT}: has the contract moved?"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The names of the public traits `text` declares.
fn declared_traits(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("pub trait "))
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
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
