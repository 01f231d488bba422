//! `procmodel cli-reference` (hidden): every subcommand's long help as one Markdown page, the
//! source of `docs/cli.md` (crates/cli/tests/docs.rs fails when the committed page is stale).

use std::fmt::Write;

/// The reference page for `cmd` (the root `procmodel` command): its own help, then one section
/// per visible subcommand (nested ones too), each help in a text block exactly as `--help`
/// prints it.
pub fn markdown(mut cmd: clap::Command) -> String {
    cmd.build();
    let mut out = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from the clap definitions by `procmodel cli-reference`; do not edit.\n     \
         Regenerate: UPDATE_DOCS=1 cargo test -p procmodel --test docs -->\n\n\
         Every subcommand's `--help`, as this version of `procmodel` prints it.\n\n",
    );
    let mut names = Vec::new();
    collect(&cmd, &mut Vec::new(), &mut names);
    for (path, _) in &names {
        let _ = writeln!(out, "- [`{}`](#{})", path.join(" "), anchor(path));
    }
    out.push('\n');
    section(&mut out, &["procmodel".to_string()], &cmd);
    for (path, sub) in names {
        section(&mut out, &path, sub);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// Every visible subcommand below `cmd`, depth first, with its full command path.
fn collect<'a>(
    cmd: &'a clap::Command,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, &'a clap::Command)>,
) {
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        prefix.push(sub.get_name().to_string());
        let mut path = vec!["procmodel".to_string()];
        path.extend(prefix.iter().cloned());
        out.push((path, sub));
        collect(sub, prefix, out);
        prefix.pop();
    }
}

fn section(out: &mut String, path: &[String], cmd: &clap::Command) {
    let help = cmd.clone().render_long_help().to_string();
    let lines: Vec<&str> = help.lines().map(str::trim_end).collect();
    let _ = write!(
        out,
        "## {}\n\n```text\n{}\n```\n\n",
        path.join(" "),
        lines.join("\n").trim_end()
    );
}

/// The anchor mdBook gives the heading `path.join(" ")`.
fn anchor(path: &[String]) -> String {
    path.join("-")
}
