//! Confinement of the files the server writes: every path a client gives is taken relative to
//! the root directory (or, if absolute, must lie inside it), `..` may not climb out of it, and
//! no existing directory on the way may be a link that leads out of it.

use std::path::{Component, Path, PathBuf};

/// The root directory the server may write under (canonical: links resolved).
#[derive(Debug, Clone)]
pub struct Root(PathBuf);

impl Root {
    /// `dir` must exist; it is canonicalised once.
    pub fn new(dir: &Path) -> Result<Root, String> {
        dir.canonicalize()
            .map(Root)
            .map_err(|e| format!("root {}: {e}", dir.display()))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The path `given` names under the root, its parent folders created. Refuses (naming
    /// the path and the root) anything that would end up outside the root, the root itself
    /// and existing directories.
    pub fn confine(&self, given: &str) -> Result<PathBuf, String> {
        let path = self.resolve(given)?;
        // Links: the deepest folder that exists must still be inside the root once resolved.
        let mut existing = path.parent().unwrap_or(&self.0).to_path_buf();
        while !existing.exists() {
            match existing.parent() {
                Some(p) => existing = p.to_path_buf(),
                None => break,
            }
        }
        let real = existing
            .canonicalize()
            .map_err(|e| format!("{given}: {e}"))?;
        if !real.starts_with(&self.0) {
            return Err(self.outside(given));
        }
        if path.is_dir() {
            return Err(format!("{given}: is a directory, not a file"));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{given}: {e}"))?;
        }
        Ok(path)
    }

    /// The lexical part of [`confine`](Self::confine): no file system access.
    fn resolve(&self, given: &str) -> Result<PathBuf, String> {
        if given.trim().is_empty() {
            return Err("the path is empty: give a file name under the root".into());
        }
        if given.contains('\0') {
            return Err(format!("{given:?}: a path may not contain NUL"));
        }
        let p = Path::new(given);
        let mut out = PathBuf::new();
        let rest = if p.is_absolute() {
            p.components().collect::<Vec<_>>()
        } else {
            out.push(&self.0);
            p.components().collect()
        };
        for c in rest {
            match c {
                Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !out.pop() {
                        return Err(self.outside(given));
                    }
                }
                Component::Normal(n) => out.push(n),
            }
        }
        if !out.starts_with(&self.0) {
            return Err(self.outside(given));
        }
        if out == self.0 {
            return Err(format!(
                "{given}: names the root itself, not a file under it"
            ));
        }
        Ok(out)
    }

    fn outside(&self, given: &str) -> String {
        format!(
            "{given}: outside the root directory {} (files are written only under it)",
            self.0.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(name: &str) -> (Root, PathBuf) {
        let dir = procmodel_testkit::scratch(&format!("mcp-paths-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root/sub")).unwrap();
        (Root::new(&dir.join("root")).unwrap(), dir)
    }

    #[test]
    fn paths_inside_the_root_are_accepted() {
        let (r, _) = root("inside");
        let base = r.path().to_path_buf();
        assert_eq!(r.confine("a.glb").unwrap(), base.join("a.glb"));
        assert_eq!(r.confine("./sub/b.rbxm").unwrap(), base.join("sub/b.rbxm"));
        assert_eq!(r.confine("sub/../c.rbxl").unwrap(), base.join("c.rbxl"));
        assert_eq!(
            r.confine("new/deep/d.glb").unwrap(),
            base.join("new/deep/d.glb")
        );
        assert!(base.join("new/deep").is_dir());
        let abs = base.join("e.glb");
        assert_eq!(r.confine(abs.to_str().unwrap()).unwrap(), abs);
    }

    #[test]
    fn paths_that_escape_are_refused() {
        let (r, dir) = root("escape");
        for bad in [
            "../x.glb",
            "sub/../../x.glb",
            "a/../../b/../../x.glb",
            "/etc/x.glb",
            "..",
        ] {
            let e = r.confine(bad).unwrap_err();
            assert!(e.contains("outside the root directory"), "{bad}: {e}");
        }
        let sibling = dir.join("other.glb");
        assert!(r.confine(sibling.to_str().unwrap()).is_err());
        assert!(r.confine("").unwrap_err().contains("empty"));
        assert!(r.confine(".").unwrap_err().contains("root itself"));
        assert!(r.confine("sub").unwrap_err().contains("directory"));
        assert!(!dir.join("x.glb").exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_root_are_refused() {
        let (r, dir) = root("link");
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        std::os::unix::fs::symlink(dir.join("outside"), r.path().join("door")).unwrap();
        let e = r.confine("door/x.glb").unwrap_err();
        assert!(e.contains("outside the root directory"), "{e}");
        let e = r.confine("door/new/x.glb").unwrap_err();
        assert!(e.contains("outside the root directory"), "{e}");
        assert!(!dir.join("outside/new").exists());
    }
}
