//! Where a bake's files go: a small synchronous [`Store`] trait with a local-directory backend
//! and an object-store backend (`s3://`, `gs://`, `az://` through the `object_store` crate,
//! credentials and endpoints from each cloud's standard environment variables, e.g.
//! `AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT`, `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`).
//! Every write is atomic: a reader sees a whole file or none (temp file then rename locally;
//! an object store's PUT is atomic by itself). Never lists in hash-map order.

use crate::{BakeError, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A flat namespace of files under one location. Paths are relative, `/`-separated.
pub trait Store: Send + Sync {
    /// The location, for messages.
    fn describe(&self) -> String;
    /// Writes `bytes` at `path` atomically (replacing what was there).
    fn put(&self, path: &str, bytes: &[u8]) -> Result<()>;
    /// The bytes at `path`, or None when there is no such file.
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>>;
    /// The files directly or deeply under `prefix` (a folder such as `manifests/`), sorted.
    fn list(&self, prefix: &str) -> Result<Vec<String>>;
    /// Writes `bytes` at `path` after every earlier `put` of this store is durable: a shard's
    /// manifest goes in with this, so even a power cut never leaves a manifest naming files
    /// that were still in the page cache. (Object stores: a PUT is durable when it returns.)
    fn put_last(&self, path: &str, bytes: &[u8]) -> Result<()> {
        self.put(path, bytes)
    }
}

/// The folder a store location names on this machine: a local path or a `file://` URL
/// (None for an object store).
pub fn local_root(location: &str) -> Option<&str> {
    match location.split_once("://") {
        None => Some(location),
        Some(("file", rest)) => Some(rest),
        Some(_) => None,
    }
}

/// Opens a store from a local path or an `s3://`, `gs://` or `az://` URL.
pub fn open(location: &str) -> Result<Arc<dyn Store>> {
    // An empty location (an unset variable in `--out "$OUT"`) would be the working directory.
    if location.trim().is_empty() {
        return Err(BakeError::new(
            "the bake location is empty: give a directory, or an s3://, gs:// or az:// URL",
        ));
    }
    if let Some(root) = local_root(location) {
        return Ok(Arc::new(LocalStore::new(root)));
    }
    // Not local: the location has a scheme.
    let scheme = location.split_once("://").map_or("", |(s, _)| s);
    match scheme {
        "s3" | "s3a" | "gs" | "az" | "abfs" | "abfss" | "azure" => {
            Ok(Arc::new(CloudStore::new(scheme, location)?))
        }
        _ => Err(BakeError::new(format!(
            "{location}: unsupported storage scheme '{scheme}' (use a local path, s3://, gs:// or az://)"
        ))),
    }
}

fn check_path(path: &str) -> Result<()> {
    if path.is_empty()
        || path.starts_with('/')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(BakeError::new(format!(
            "'{path}' is not a relative store path"
        )));
    }
    Ok(())
}

/// A directory on a local (or shared) filesystem. Files are renamed into place as written and
/// made durable together by [`Store::put_last`] (one flush for a shard's files, not one per
/// file: flushes, not bytes, dominate a tiled bake's system time).
pub struct LocalStore {
    root: PathBuf,
    written: std::sync::Mutex<Vec<PathBuf>>,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl LocalStore {
    pub fn new(root: impl Into<PathBuf>) -> LocalStore {
        LocalStore {
            root: root.into(),
            written: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn full(&self, path: &str) -> Result<PathBuf> {
        check_path(path)?;
        Ok(self.root.join(path))
    }
}

fn io_err(what: &Path, e: std::io::Error) -> BakeError {
    BakeError::new(format!("{}: {e}", what.display()))
}

impl Store for LocalStore {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn put(&self, path: &str, bytes: &[u8]) -> Result<()> {
        let full = self.full(path)?;
        let dir = full.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let name = full.file_name().and_then(|n| n.to_str()).unwrap_or("file");
        let tmp = dir.join(format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            std::fs::rename(&tmp, &full)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io_err(&full, e)
        })?;
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(full);
        Ok(())
    }

    fn put_last(&self, path: &str, bytes: &[u8]) -> Result<()> {
        let written = std::mem::take(&mut *self.written.lock().unwrap_or_else(|e| e.into_inner()));
        // Each file's data, then the folders that name them (the renames).
        let mut dirs = std::collections::BTreeSet::new();
        for f in &written {
            std::fs::File::open(f)
                .and_then(|h| h.sync_all())
                .map_err(|e| io_err(f, e))?;
            if let Some(d) = f.parent() {
                dirs.insert(d.to_owned());
            }
        }
        for d in dirs {
            // Directories cannot be opened for syncing everywhere; where they can, a failure is
            // real.
            if let Ok(h) = std::fs::File::open(&d) {
                h.sync_all().map_err(|e| io_err(&d, e))?;
            }
        }
        self.put(path, bytes)?;
        let full = self.full(path)?;
        std::fs::File::open(&full)
            .and_then(|h| h.sync_all())
            .map_err(|e| io_err(&full, e))?;
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        Ok(())
    }

    fn get(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let full = self.full(path)?;
        match std::fs::read(&full) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&full, e)),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        let start = self.root.join(prefix.trim_end_matches('/'));
        let mut out = Vec::new();
        let mut stack = vec![start];
        while let Some(dir) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(&dir, e)),
            };
            for e in entries {
                let e = e.map_err(|e| io_err(&dir, e))?;
                let p = e.path();
                let name = e.file_name();
                // Temp files of writes in progress (or of a killed writer) are not files yet.
                if name.to_string_lossy().starts_with('.') {
                    continue;
                }
                if p.is_dir() {
                    stack.push(p);
                } else if let Ok(rel) = p.strip_prefix(&self.root) {
                    let parts: Vec<String> = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    out.push(parts.join("/"));
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// An object store bucket/container (and a prefix inside it).
pub struct CloudStore {
    url: String,
    store: Arc<dyn object_store::ObjectStore>,
    prefix: String,
    runtime: tokio::runtime::Runtime,
}

impl CloudStore {
    fn new(scheme: &str, url: &str) -> Result<CloudStore> {
        let bad = |e: &dyn std::fmt::Display| BakeError::new(format!("{url}: {e}"));
        let rest = url.split_once("://").map_or("", |(_, r)| r);
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(BakeError::new(format!(
                "{url}: no bucket or container in the URL"
            )));
        }
        let bucket_url = format!("{scheme}://{bucket}");
        let store: Arc<dyn object_store::ObjectStore> = match scheme {
            "s3" | "s3a" => Arc::new(
                object_store::aws::AmazonS3Builder::from_env()
                    .with_url(bucket_url)
                    .build()
                    .map_err(|e| bad(&e))?,
            ),
            "gs" => Arc::new(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(bucket_url)
                    .build()
                    .map_err(|e| bad(&e))?,
            ),
            _ => Arc::new(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(bucket_url)
                    .build()
                    .map_err(|e| bad(&e))?,
            ),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| bad(&e))?;
        Ok(CloudStore {
            url: url.to_owned(),
            store,
            prefix: prefix.trim_matches('/').to_owned(),
            runtime,
        })
    }

    fn location(&self, path: &str) -> Result<object_store::path::Path> {
        check_path(path)?;
        let full = if self.prefix.is_empty() {
            path.to_owned()
        } else {
            format!("{}/{path}", self.prefix)
        };
        object_store::path::Path::parse(&full)
            .map_err(|e| BakeError::new(format!("{}: {path}: {e}", self.url)))
    }

    fn err(&self, path: &str, e: object_store::Error) -> BakeError {
        BakeError::new(format!("{}/{path}: {e}", self.url.trim_end_matches('/')))
    }
}

impl Store for CloudStore {
    fn describe(&self) -> String {
        self.url.clone()
    }

    fn put(&self, path: &str, bytes: &[u8]) -> Result<()> {
        use object_store::ObjectStoreExt;
        let loc = self.location(path)?;
        let payload = object_store::PutPayload::from(bytes.to_vec());
        self.runtime
            .block_on(self.store.put(&loc, payload))
            .map(|_| ())
            .map_err(|e| self.err(path, e))
    }

    fn get(&self, path: &str) -> Result<Option<Vec<u8>>> {
        use object_store::ObjectStoreExt;
        let loc = self.location(path)?;
        self.runtime
            .block_on(async {
                match self.store.get(&loc).await {
                    Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .map_err(|e| self.err(path, e))
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        use futures::TryStreamExt;
        let dir = prefix.trim_end_matches('/');
        let loc = self.location(dir)?;
        let metas: Vec<object_store::ObjectMeta> = self
            .runtime
            .block_on(self.store.list(Some(&loc)).try_collect())
            .map_err(|e| self.err(prefix, e))?;
        let strip = if self.prefix.is_empty() {
            String::new()
        } else {
            format!("{}/", self.prefix)
        };
        let mut out: Vec<String> = metas
            .into_iter()
            .filter_map(|m| m.location.as_ref().strip_prefix(&strip).map(str::to_owned))
            .collect();
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_store_writes_lists_and_reads() {
        let dir = procmodel_testkit::scratch("bake-store");
        let _ = std::fs::remove_dir_all(&dir);
        let s = open(dir.to_str().unwrap()).unwrap();
        s.put("manifests/b.json", b"2").unwrap();
        s.put("manifests/a.json", b"1").unwrap();
        s.put("results/x", b"3").unwrap();
        // A killed writer's temp file is not a file.
        std::fs::write(dir.join("manifests/.c.json.tmp-1-1"), b"half").unwrap();
        assert_eq!(
            s.list("manifests/").unwrap(),
            vec!["manifests/a.json", "manifests/b.json"]
        );
        assert_eq!(
            s.get("manifests/a.json").unwrap().as_deref(),
            Some(&b"1"[..])
        );
        assert_eq!(s.get("manifests/none.json").unwrap(), None);
        assert!(s.put("../escape", b"x").is_err());
        assert!(s.list("nothing/").unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn unknown_schemes_are_named() {
        let e = open("ftp://host/x").err().unwrap().to_string();
        assert!(e.contains("ftp"), "{e}");
        let e = open("s3://").err().unwrap().to_string();
        assert!(e.contains("bucket"), "{e}");
    }
}
