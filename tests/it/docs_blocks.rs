//! The docs' code is compiled: every Rust block in `README.md` and `docs/*.md` is a doctest of
//! `lanegraph-tests` (`tests/src/docs.rs` includes each document), none is `ignore`d, and every
//! fenced block names its language (an untagged one would be compiled as Rust by accident, or
//! escape the check in a document without other Rust blocks).

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The documents: README.md and every `docs/*.md`, as repo-relative paths.
fn documents() -> Vec<String> {
    let mut docs = vec!["README.md".to_string()];
    let mut more: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// Each opening fence's info string (`rust`, `sh`, `` for none), with its 1-based line.
fn fences(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            if !open {
                out.push((i + 1, info.trim().to_string()));
            }
            open = !open;
        }
    }
    out
}

#[test]
fn every_rust_block_in_the_docs_is_compiled() {
    let harness = std::fs::read_to_string(repo().join("tests/src/docs.rs")).unwrap();
    let mut problems = Vec::new();
    let mut rust_blocks = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(repo().join(&doc)).unwrap();
        let mut has_rust = false;
        for (line, info) in fences(&text) {
            if info.is_empty() {
                problems.push(format!(
                    "{doc}:{line}: a fence without a language (write ```rust, ```sh, ```text ...)"
                ));
            }
            if info.split(',').next() == Some("rust") {
                has_rust = true;
                rust_blocks += 1;
                if info.split(',').any(|a| a == "ignore") {
                    problems.push(format!("{doc}:{line}: an `ignore`d Rust block (make it compile; `no_run` if it must not run)"));
                }
            }
        }
        let included = harness.contains(&format!("include_str!(\"../../{doc}\")"));
        if has_rust && !included {
            problems.push(format!(
                "{doc}: has Rust blocks but tests/src/docs.rs does not include it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        rust_blocks >= 18,
        "only {rust_blocks} Rust blocks found: is the scan broken?"
    );
}

#[test]
fn the_fence_scan_sees_languages_and_closing_fences() {
    let f = fences("a\n```rust,no_run\nx\n```\n```\ny\n```\n  ```sh\nz\n  ```\n");
    assert_eq!(
        f,
        vec![
            (2, "rust,no_run".into()),
            (5, String::new()),
            (8, "sh".into())
        ]
    );
}
