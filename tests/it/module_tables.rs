//! Every module folder's first doc comment has a `| file | idea |` table, and it lists exactly
//! the files (and sub-folders) the folder holds: a newcomer finds any file from its module's
//! page, and a file added without a line there fails here.

use std::path::Path;

/// The module folders, relative to the repository root, and the file holding their docs.
const FOLDERS: [(&str, &str); 18] = [
    ("engine/src/world", "mod.rs"),
    ("engine/src/world/query", "mod.rs"),
    ("engine/src/world/savegame", "mod.rs"),
    ("engine/src/systems", "mod.rs"),
    ("engine/src/game_loop", "mod.rs"),
    ("engine/src/input", "mod.rs"),
    ("engine/src/hooks", "mod.rs"),
    ("engine/src/runtime", "mod.rs"),
    ("engine/src/runtime/engine", "mod.rs"),
    ("budget/src", "lib.rs"),
    ("budget/src/controller", "mod.rs"),
    ("budget/src/heuristics", "mod.rs"),
    ("jobs/src", "lib.rs"),
    ("jobs/src/queue", "mod.rs"),
    ("jobs/src/lanes", "mod.rs"),
    ("telemetry/src", "lib.rs"),
    ("simd/src", "lib.rs"),
    ("netcode/src", "lib.rs"),
];

/// The names in the table's first column (`name` or [`name`], with or without `.rs`).
fn listed(doc: &str) -> Vec<String> {
    doc.lines()
        .take_while(|l| l.starts_with("//!"))
        .skip_while(|l| !l.starts_with("//! | file"))
        .skip(2)
        .take_while(|l| l.starts_with("//! |"))
        .filter_map(|l| l.split('|').nth(1))
        .map(|c| {
            c.trim()
                .trim_matches(|ch| ch == '[' || ch == ']' || ch == '`')
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect()
}

#[test]
fn every_module_table_lists_exactly_its_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut failures = Vec::new();
    for (folder, docs) in FOLDERS {
        let dir = root.join(folder);
        let text = std::fs::read_to_string(dir.join(docs)).unwrap();
        let table = listed(&text);
        if table.is_empty() {
            failures.push(format!("{folder}/{docs}: no `| file | idea |` table"));
            continue;
        }
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let e = e.ok()?;
                let name = e.file_name().into_string().ok()?;
                if e.path().is_dir() {
                    e.path().join("mod.rs").exists().then_some(name)
                } else {
                    let stem = name.strip_suffix(".rs")?;
                    (stem != docs.trim_end_matches(".rs")).then(|| stem.to_string())
                }
            })
            .collect();
        files.sort();
        for f in &files {
            if !table.contains(f) {
                failures.push(format!("{folder}/{docs}: `{f}` is not in the table"));
            }
        }
        for t in &table {
            if t != "mod" && !files.contains(t) {
                failures.push(format!(
                    "{folder}/{docs}: the table lists `{t}`, no such file"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
