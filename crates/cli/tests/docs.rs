//! The documentation book in `docs/` (mdBook): the generated CLI reference is current, every
//! page SUMMARY.md lists exists and every page is listed, and every relative link and image
//! of every page resolves — to a file inside `docs/` (the book is published alone) and, for a
//! link into a page, to one of its headings. `mdbook build docs` itself runs in
//! `scripts/test.sh`.
//!
//! `UPDATE_DOCS=1 cargo test -p procmodel --test docs` rewrites `docs/cli.md`.

mod common;

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

#[test]
fn cli_reference_is_current() {
    let out = common::ok(common::bin().arg("cli-reference").output().unwrap());
    let generated = common::stdout(&out);
    assert!(generated.contains("## procmodel generate\n"), "{generated}");
    let path = docs().join("cli.md");
    if std::env::var_os("UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(generated.lines().count()));
        panic!(
            "docs/cli.md is stale (first difference at line {}); regenerate it with \
             UPDATE_DOCS=1 cargo test -p procmodel --test docs",
            line + 1
        );
    }
}

/// The lines of a Markdown page outside fenced code blocks, with inline code spans removed.
fn prose(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut kept = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                kept.push_str(part);
            }
        }
        out.push(kept);
    }
    out
}

/// The targets of the inline links and images (`[text](target)`, `![alt](target)`) of a page.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push(target.to_string());
            rest = &after[end..];
        }
    }
    out
}

/// The anchors mdBook gives a page's headings: the text without inline markup, lower case,
/// spaces as `-`, only letters, digits, `-` and `_` kept.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().scan(false, |fenced, line| {
        if line.trim_start().starts_with("```") {
            *fenced = !*fenced;
            return Some(None);
        }
        Some((!*fenced).then_some(line))
    }) {
        let Some(line) = line else { continue };
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#').trim();
        // [text](url) → text
        let mut plain = String::new();
        let mut rest = heading;
        while let Some(i) = rest.find("](") {
            plain.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            rest = after.find(')').map_or("", |e| &after[e + 1..]);
        }
        plain.push_str(rest);
        let id: String = plain
            .chars()
            .filter_map(|c| {
                if c.is_whitespace() {
                    Some('-')
                } else if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else {
                    None
                }
            })
            .collect();
        out.insert(id);
    }
    out
}

/// `page`'s folder joined with `target`, normalised; None when it leaves `docs/`.
fn resolve(page: &Path, target: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = page
        .parent()
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.iter().collect())
}

/// The pages SUMMARY.md lists, relative to `docs/`.
fn summary_pages() -> Vec<String> {
    let summary = std::fs::read_to_string(docs().join("SUMMARY.md")).unwrap();
    links(&summary)
}

#[test]
fn summary_lists_every_page_and_every_listed_page_exists() {
    let listed = summary_pages();
    assert!(listed.len() >= 10, "{listed:?}");
    for page in &listed {
        assert!(
            !page.contains('#') && docs().join(page).is_file(),
            "SUMMARY.md lists {page}, which is not a page in docs/"
        );
    }
    let mut pages: Vec<String> = std::fs::read_dir(docs())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    pages.sort();
    for page in pages {
        assert!(
            listed.contains(&page),
            "docs/{page} is not in SUMMARY.md, so the book leaves it out"
        );
    }
}

#[test]
fn every_relative_link_resolves_inside_the_book() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for page in summary_pages().into_iter().chain(["SUMMARY.md".into()]) {
        let text = std::fs::read_to_string(docs().join(&page)).unwrap();
        for target in links(&text) {
            if target.is_empty()
                || target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if file.is_empty() {
                Some(PathBuf::from(&page))
            } else {
                resolve(Path::new(&page), file)
            };
            let Some(resolved) = resolved else {
                bad.push(format!(
                    "{page}: {target} leaves docs/ (the book is published alone)"
                ));
                continue;
            };
            let path = docs().join(&resolved);
            if !path.is_file() {
                bad.push(format!(
                    "{page}: {target}: no such file docs/{}",
                    resolved.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&target_text).contains(anchor) {
                    bad.push(format!(
                        "{page}: {target}: no heading #{anchor} in that page"
                    ));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} links checked");
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn the_link_checker_sees_what_it_checks() {
    let page = "# Title `code`\n\n[a](x.md#b) ![p](gallery/y.png) `[not](z.md)`\n```\n[no](w.md)\n```\n## Terrain from generators (`params.Terrain`)\n";
    assert_eq!(links(page), ["x.md#b", "gallery/y.png"]);
    let a = anchors(page);
    assert!(a.contains("title-code"), "{a:?}");
    assert!(a.contains("terrain-from-generators-paramsterrain"), "{a:?}");
    assert_eq!(resolve(Path::new("a.md"), "../x.md"), None);
    assert_eq!(
        resolve(Path::new("a.md"), "./gallery/y.png"),
        Some(PathBuf::from("gallery/y.png"))
    );
}
