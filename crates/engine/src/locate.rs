//! Names a Rojo project's files in failure texts: a script's chunk is named after its
//! instance (`ServerStorage.Generators.Tower:5: boom`, as Studio says), and in a scene built
//! from a project each `FullName:line` of a script read from a file becomes
//! `path/to/Tower.luau:line`, the path relative to the project's folder (the same bytes
//! wherever the project is checked out).
//!
//! Owns: the scripts' display paths and the rewrite. Must never: change what a script sees
//! (its chunk name, `debug.info`, `script:GetFullName()`), only what a report says.

use crate::report::GenerationFailure;
use rbx_dom_weak::WeakDom;
use rbx_types::Ref;
use std::path::{Component, Path, PathBuf};

/// Each script of a project and its file relative to the project's folder, `/`-separated.
pub(crate) fn display_paths(project: &Path, scripts: &[(PathBuf, Ref)]) -> Vec<(Ref, String)> {
    let file = procmodel_rojo::project_file(project).unwrap_or_else(|| project.to_path_buf());
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    scripts
        .iter()
        .map(|(path, r)| (*r, relative(&dir, path)))
        .collect()
}

/// `path` relative to the folder `base` (both canonical), climbing with `..` when it is
/// outside; `/`-separated.
fn relative(base: &Path, path: &Path) -> String {
    let base: Vec<Component> = base.components().collect();
    let parts: Vec<Component> = path.components().collect();
    let common = base.iter().zip(&parts).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return path.to_string_lossy().replace('\\', "/");
    }
    let up = std::iter::repeat_n("..".to_owned(), base.len() - common);
    let down = parts[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    up.chain(down).collect::<Vec<_>>().join("/")
}

/// `failure` with every `FullName:line` of a script in `scripts` naming its file instead.
pub(crate) fn name_files(
    dom: &WeakDom,
    scripts: &[(Ref, String)],
    failure: GenerationFailure,
) -> GenerationFailure {
    if scripts.is_empty() {
        return failure;
    }
    let mut names: Vec<(String, &str)> = scripts
        .iter()
        .filter(|(r, _)| dom.get_by_ref(*r).is_some())
        .map(|(r, file)| (procmodel_dom::full_name(dom, *r), file.as_str()))
        .collect();
    // The longest name first: `A.B.C` is not read as `A.B` followed by text.
    names.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
    failure.map_text(&|text| rewrite(text, &names))
}

/// `text` with each `name:<digit>` that begins a word (the text's start, or after a space,
/// a quote or an opening bracket) for a name of `names` replaced by its file.
fn rewrite(text: &str, names: &[(String, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut at_word_start = true;
    while !rest.is_empty() {
        if at_word_start
            && let Some((name, file)) = names.iter().find(|(name, _)| {
                rest.strip_prefix(name.as_str())
                    .and_then(|r| r.strip_prefix(':'))
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
            })
        {
            out.push_str(file);
            rest = &rest[name.len()..];
            at_word_start = false;
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
        at_word_start = c.is_whitespace() || matches!(c, '\'' | '"' | '`' | '(' | '[');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<(String, &'static str)> {
        let mut v = vec![
            ("ServerStorage.Gen".to_owned(), "src/Gen/init.luau"),
            ("ServerStorage.Gen.Util".to_owned(), "src/Gen/Util.luau"),
        ];
        v.sort_by_key(|a| std::cmp::Reverse(a.0.len()));
        v
    }

    #[test]
    fn each_script_line_names_its_file() {
        let text = "ServerStorage.Gen.Util:12: bad\nstack traceback:\n\tServerStorage.Gen.Util:12: in function 'block'\n\tServerStorage.Gen:30: in function 'OnGenerate'";
        assert_eq!(
            rewrite(text, &names()),
            "src/Gen/Util.luau:12: bad\nstack traceback:\n\tsrc/Gen/Util.luau:12: in function 'block'\n\tsrc/Gen/init.luau:30: in function 'OnGenerate'"
        );
    }

    #[test]
    fn only_a_whole_name_before_a_line_number_is_replaced() {
        for text in [
            "Workspace.ServerStorage.Gen:3: x",
            "ServerStorage.Generator:3: x",
            "ServerStorage.Gen: not a line",
            "ServerStorage.Gen.Util is not a valid member",
        ] {
            assert_eq!(rewrite(text, &names()), text);
        }
        assert_eq!(
            rewrite("error in 'ServerStorage.Gen:3'", &names()),
            "error in 'src/Gen/init.luau:3'"
        );
    }

    #[test]
    fn paths_outside_the_project_climb() {
        let base = Path::new("/p/game");
        assert_eq!(
            relative(base, Path::new("/p/game/src/a.luau")),
            "src/a.luau"
        );
        assert_eq!(relative(base, Path::new("/p/lib/b.luau")), "../lib/b.luau");
    }
}
