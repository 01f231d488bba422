//! The tutorial (docs/tutorial.md) as a reader follows it: every generator it shows is saved
//! under its module's name, every `procmodel generate`/`pack` line of a `sh` block runs, and
//! every `$ procmodel ...` line of a `console` block prints what the page says it prints
//! (times and the reader's folder aside). A page that drifts from the tool fails here.

mod common;
use common::*;
use std::path::Path;

/// One fenced block: its language and lines.
struct Block {
    lang: String,
    lines: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for line in text.lines() {
        match (line.strip_prefix("```"), open.take()) {
            (Some(lang), None) => {
                open = Some(Block {
                    lang: lang.trim().to_owned(),
                    lines: Vec::new(),
                })
            }
            (Some(_), Some(b)) => out.push(b),
            (None, Some(mut b)) => {
                b.lines.push(line.to_owned());
                open = Some(b);
            }
            (None, None) => {}
        }
    }
    out
}

/// `in 12.3 ms` → `in N ms`; the reader's folder → `/path/to/`.
fn normalise(line: &str, dir: &Path) -> String {
    let line = line.replace(&format!("{}/", dir.display()), "/path/to/");
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("in ") {
        out.push_str(&rest[..at + 3]);
        rest = &rest[at + 3..];
        let number = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number > 0 && rest[number..].starts_with(" ms") {
            out.push('N');
            rest = &rest[number..];
        }
    }
    out.push_str(rest);
    out
}

/// Runs a `procmodel ...` line (arguments split on spaces, as the page writes them) in `dir`.
fn run(dir: &Path, line: &str) -> std::process::Output {
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    bin().current_dir(dir).args(&args).output().unwrap()
}

#[test]
fn the_tutorial_s_generators_and_commands_do_what_it_says() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tutorial.md"),
    )
    .unwrap();
    let dir = dir().join("tutorial");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let (mut saved, mut ran) = (Vec::new(), 0);
    for block in blocks(&text) {
        match block.lang.as_str() {
            "lua" | "luau" => {
                // Saved as the module it returns (`local Pillars = {}` → Pillars.luau).
                let name = block.lines[0]
                    .strip_prefix("local ")
                    .and_then(|l| l.strip_suffix(" = {}"))
                    .unwrap_or_else(|| {
                        panic!(
                            "a generator starts with `local Name = {{}}`: {}",
                            block.lines[0]
                        )
                    });
                std::fs::write(
                    dir.join(format!("{name}.luau")),
                    block.lines.join("\n") + "\n",
                )
                .unwrap();
                saved.push(name.to_owned());
            }
            "sh" => {
                for line in &block.lines {
                    let command = line.split(" #").next().unwrap().trim();
                    // The studio runs until stopped: its pages are tested on their own.
                    if command.starts_with("procmodel generate")
                        || command.starts_with("procmodel pack")
                    {
                        let o = run(&dir, command);
                        assert!(
                            o.status.success(),
                            "{command}: {}",
                            String::from_utf8_lossy(&o.stderr)
                        );
                        ran += 1;
                    }
                }
            }
            "console" => {
                let mut lines = block.lines.iter().peekable();
                while let Some(line) = lines.next() {
                    let command = line
                        .strip_prefix("$ ")
                        .expect("a console block starts with a command");
                    let mut expected = Vec::new();
                    while let Some(l) = lines.next_if(|l| !l.starts_with("$ ")) {
                        expected.push(normalise(l, &dir));
                    }
                    let o = run(&dir, command);
                    let printed = String::from_utf8_lossy(&o.stdout).to_string()
                        + &String::from_utf8_lossy(&o.stderr);
                    let printed: Vec<String> =
                        printed.lines().map(|l| normalise(l, &dir)).collect();
                    assert_eq!(printed, expected, "{command}");
                    let failed = expected.first().is_some_and(|l| l.starts_with("error:"));
                    assert_eq!(o.status.success(), !failed, "{command}: exit status");
                    ran += 1;
                }
            }
            _ => {}
        }
    }
    assert_eq!(saved, ["Pillars", "Forest", "Busy", "Tower", "Broken"]);
    assert!(ran >= 9, "{ran} commands");
}
