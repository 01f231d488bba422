//! A content-addressed cache directory of generation results (the engine's `ResultCache`):
//! `<dir>/<first 2 hex>/<64 hex>.entry`, each file `FILE_MAGIC`, the payload's length (u64
//! LE), the 32 bytes its name is the hex of (the key it was stored under, salted), the
//! payload's BLAKE3 hash and the payload. Safe to share between processes and machines:
//! - writes go to a temporary file in the same folder, then are renamed into place, so a
//!   reader sees a whole entry or none, and two writers of one key both leave a whole one;
//! - every read checks the length and hash, and that the file was stored under the key it
//!   is read for (a file copied or renamed over another key's name is not that key's
//!   entry); a corrupt or misplaced entry is reported, deleted and treated as a miss, never
//!   used; a file of the earlier layout (`PMENTRY1`, no key) is a miss, replaced when the
//!   results are stored again;
//! - the total size is bounded: when it grows past the bound, the least recently used
//!   entries (file modification time, refreshed on every hit) are deleted until it is 90%
//!   of the bound. A file another process deletes meanwhile is simply a miss.
//!
//! Problems (a read-only or full directory, a corrupt entry) never fail a generation: they
//! are collected as warnings ([`DirCache::take_warnings`]) for the front end to show.

use procmodel_engine::ResultCache;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// 2: the header records the key (the file's name); 1 had none.
pub const FILE_MAGIC: &[u8; 8] = b"PMENTRY2";
const OLD_MAGIC: &[u8; 8] = b"PMENTRY1";
const HEADER: usize = 8 + 8 + 32 + 32;
/// Default bound on a cache directory's size.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// Counters of one process's use of a cache.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Hits served from an entry read from the directory.
    pub hits: u64,
    /// Hits served without reading: the results for the key were still in place, untouched
    /// (`procmodel_engine::ResultCache::kept`).
    pub kept: u64,
    pub misses: u64,
    pub stores: u64,
    /// Entries found damaged (by the file check or by the engine's) and ignored.
    pub corrupt: u64,
    pub evicted: u64,
}

#[derive(Debug)]
pub struct DirCache {
    dir: PathBuf,
    max_bytes: u64,
    hits: AtomicU64,
    kept: AtomicU64,
    misses: AtomicU64,
    stores: AtomicU64,
    corrupt: AtomicU64,
    evicted: AtomicU64,
    /// Puts since the last size check.
    since_check: AtomicU64,
    temp_counter: AtomicU64,
    warnings: Mutex<Vec<String>>,
    /// Mixed into every key (inputs the engine cannot see, e.g. files required by path).
    salt: Option<[u8; 32]>,
}

/// The platform's cache folder for procmodel: `$XDG_CACHE_HOME/procmodel` or
/// `~/.cache/procmodel` (Linux and other Unix), `~/Library/Caches/procmodel` (macOS),
/// `%LOCALAPPDATA%\procmodel\cache` (Windows). None when the environment names no home.
pub fn default_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if cfg!(windows) {
        return env("LOCALAPPDATA").map(|d| d.join("procmodel").join("cache"));
    }
    if cfg!(target_os = "macos") {
        return env("HOME").map(|h| h.join("Library/Caches/procmodel"));
    }
    env("XDG_CACHE_HOME")
        .map(|d| d.join("procmodel"))
        .or_else(|| env("HOME").map(|h| h.join(".cache/procmodel")))
}

impl DirCache {
    /// A cache in `dir` (created on first store) holding at most about `max_bytes`.
    pub fn new(dir: &Path, max_bytes: u64) -> DirCache {
        DirCache {
            dir: dir.to_path_buf(),
            max_bytes: max_bytes.max(1),
            hits: AtomicU64::new(0),
            kept: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            stores: AtomicU64::new(0),
            corrupt: AtomicU64::new(0),
            evicted: AtomicU64::new(0),
            since_check: AtomicU64::new(u64::MAX / 2),
            temp_counter: AtomicU64::new(0),
            warnings: Mutex::new(Vec::new()),
            salt: None,
        }
    }

    /// The same cache with `salt` mixed into every key: entries made with another salt (or
    /// none) are never found.
    pub fn with_salt(mut self, salt: [u8; 32]) -> DirCache {
        self.salt = Some(salt);
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of an entry.
    pub fn entry_path(&self, key: &[u8; 32]) -> PathBuf {
        self.path_of(&self.file_key(key))
    }

    /// What the file of `key` is named after (and records in its header): the key, salted.
    fn file_key(&self, key: &[u8; 32]) -> [u8; 32] {
        match &self.salt {
            Some(salt) => {
                let mut b = blake3::Hasher::new();
                b.update(salt);
                b.update(key);
                *b.finalize().as_bytes()
            }
            None => *key,
        }
    }

    fn path_of(&self, file_key: &[u8; 32]) -> PathBuf {
        let h = procmodel_dom::hash::hex(file_key);
        self.dir.join(&h[..2]).join(format!("{h}.entry"))
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            kept: self.kept.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            stores: self.stores.load(Ordering::Relaxed),
            corrupt: self.corrupt.load(Ordering::Relaxed),
            evicted: self.evicted.load(Ordering::Relaxed),
        }
    }

    /// Problems met so far (each once), emptied.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn warn(&self, msg: String) {
        let mut w = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !w.contains(&msg) {
            w.push(msg);
        }
    }

    fn corrupt_entry(&self, path: &Path, why: &str) {
        self.corrupt.fetch_add(1, Ordering::Relaxed);
        self.warn(format!(
            "cache entry {} is corrupt ({why}); ignored and removed",
            path.display()
        ));
        let _ = std::fs::remove_file(path);
    }

    fn write_entry(&self, path: &Path, file_key: &[u8; 32], payload: &[u8]) -> std::io::Result<()> {
        let folder = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(folder)?;
        let n = self.temp_counter.fetch_add(1, Ordering::Relaxed);
        let temp = folder.join(format!(".tmp-{}-{n}", std::process::id()));
        let result = (|| {
            let mut f = std::fs::File::create(&temp)?;
            f.write_all(FILE_MAGIC)?;
            f.write_all(&(payload.len() as u64).to_le_bytes())?;
            f.write_all(file_key)?;
            f.write_all(blake3::hash(payload).as_bytes())?;
            f.write_all(payload)?;
            f.sync_all()?;
            drop(f);
            std::fs::rename(&temp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// Deletes least recently used entries while the directory holds more than the bound.
    pub fn evict(&self) {
        let mut entries: Vec<(std::time::SystemTime, PathBuf, u64)> = Vec::new();
        let mut total = 0u64;
        let Ok(folders) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for folder in folders.flatten() {
            let Ok(files) = std::fs::read_dir(folder.path()) else {
                continue;
            };
            for file in files.flatten() {
                let path = file.path();
                if path.extension().is_none_or(|e| e != "entry") {
                    continue;
                }
                if let Ok(meta) = file.metadata() {
                    total += meta.len();
                    let used = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                    entries.push((used, path, meta.len()));
                }
            }
        }
        if total <= self.max_bytes {
            return;
        }
        entries.sort();
        let target = self.max_bytes / 10 * 9;
        for (_, path, len) in entries {
            if total <= target {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                self.evicted.fetch_add(1, Ordering::Relaxed);
            }
            total = total.saturating_sub(len);
        }
    }
}

impl DirCache {
    /// The payload of the entry of `key` when it is intact and was stored under that key
    /// (refreshed for eviction); Err when there is none or it is damaged or another key's
    /// (reported and removed).
    fn read_checked(&self, key: &[u8; 32]) -> Result<Vec<u8>, ()> {
        let file_key = self.file_key(key);
        let path = &self.path_of(&file_key);
        // The header and the payload are read apart, so the payload is returned as it was
        // read (no copy of a large entry to drop its header).
        let read = || -> std::io::Result<(Vec<u8>, Vec<u8>)> {
            let mut f = std::fs::File::open(path)?;
            let size = usize::try_from(f.metadata()?.len()).unwrap_or(usize::MAX);
            let mut head = vec![0; HEADER.min(size)];
            f.read_exact(&mut head)?;
            let mut payload = Vec::with_capacity(size - head.len());
            f.read_to_end(&mut payload)?;
            Ok((head, payload))
        };
        let (head, payload) = match read() {
            Ok(b) => b,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    self.warn(format!("cannot read cache entry {}: {e}", path.display()));
                }
                return Err(());
            }
        };
        // The earlier layout cannot say which key it was stored under: a miss, replaced by
        // the store that follows (never reported: a cache folder shared with an older
        // procmodel holds them).
        if head.get(..8) == Some(&OLD_MAGIC[..]) {
            return Err(());
        }
        let check = || -> Result<(), String> {
            if head.len() < HEADER || &head[..8] != FILE_MAGIC {
                return Err("not a procmodel cache file".into());
            }
            let len = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
            if len != payload.len() as u64 {
                return Err(format!(
                    "{} payload bytes, header says {len}",
                    payload.len()
                ));
            }
            if head[16..48] != file_key {
                return Err(format!(
                    "stored under key {}, not this one: another key's entry copied or renamed over it, or damaged",
                    procmodel_dom::hash::hex(&head[16..48])
                ));
            }
            if blake3::hash(&payload).as_bytes() != &head[48..80] {
                return Err("payload hash mismatch".into());
            }
            Ok(())
        };
        if let Err(why) = check() {
            self.corrupt_entry(path, &why);
            return Err(());
        }
        // Recently used: eviction goes by modification time.
        if let Ok(f) = std::fs::File::options().append(true).open(path) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        Ok(payload)
    }

    /// Stores `payload` under `key`; false (with a warning) when it could not be written.
    fn store(&self, key: &[u8; 32], payload: &[u8]) -> bool {
        let file_key = self.file_key(key);
        let path = self.path_of(&file_key);
        if let Err(e) = self.write_entry(&path, &file_key, payload) {
            self.warn(format!(
                "cannot store results in the cache {}: {e}",
                self.dir.display()
            ));
            return false;
        }
        // The size is checked at the first store and every 32 after it.
        if self.since_check.fetch_add(1, Ordering::Relaxed) >= 31 {
            self.since_check.store(0, Ordering::Relaxed);
            self.evict();
        }
        true
    }
}

impl ResultCache for DirCache {
    fn get(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        match self.read_checked(key) {
            Ok(payload) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(payload)
            }
            Err(()) => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    fn put(&self, key: &[u8; 32], entry: &[u8]) {
        if self.store(key, entry) {
            self.stores.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn reject(&self, key: &[u8; 32], reason: &str) {
        let path = self.entry_path(key);
        // Counted as a hit by `get`; it was not one.
        self.hits.fetch_sub(1, Ordering::Relaxed);
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.corrupt_entry(&path, reason);
    }

    fn kept(&self, _key: &[u8; 32]) {
        self.kept.fetch_add(1, Ordering::Relaxed);
    }

    fn get_record(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        self.read_checked(key).ok()
    }

    fn put_record(&self, key: &[u8; 32], record: &[u8]) {
        self.store(key, record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = procmodel_testkit::scratch(&format!("lock-{name}"));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    /// Saved-scene records are stored and checked as entries are, but are not entries:
    /// reading or storing one counts no hit, miss or store.
    #[test]
    fn records_are_checked_and_not_counted_as_entries() {
        let dir = temp_dir("records");
        let c = DirCache::new(&dir, DEFAULT_MAX_BYTES);
        let k = [5u8; 32];
        assert_eq!(c.get_record(&k), None);
        c.put_record(&k, b"record");
        assert_eq!(c.get_record(&k).as_deref(), Some(&b"record"[..]));
        let s = c.stats();
        assert_eq!((s.hits, s.misses, s.stores), (0, 0, 0));
        let path = c.entry_path(&k);
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(c.get_record(&k), None);
        assert!(!path.exists());
        assert_eq!(c.stats().corrupt, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stores_reads_and_ignores_corrupt_entries() {
        let dir = temp_dir("store");
        let c = DirCache::new(&dir, DEFAULT_MAX_BYTES);
        let k = [7u8; 32];
        assert_eq!(c.get(&k), None);
        c.put(&k, b"payload");
        assert_eq!(c.get(&k).as_deref(), Some(&b"payload"[..]));
        // Flip one payload byte: reported, removed, a miss.
        let path = c.entry_path(&k);
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(c.get(&k), None);
        assert!(!path.exists());
        let w = c.take_warnings();
        assert!(w[0].contains("corrupt (payload hash mismatch)"), "{w:?}");
        // Truncated.
        c.put(&k, b"payload");
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 2]).unwrap();
        assert_eq!(c.get(&k), None);
        assert_eq!(c.stats().corrupt, 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Bug fixed: an intact entry copied over another key's file was served for that
    /// key (the file check covered only its own bytes). It is another key's entry: reported,
    /// removed, a miss, like a corrupt one — with a salt too, and for saved-scene records.
    #[test]
    fn an_entry_under_another_keys_name_is_refused() {
        let dir = temp_dir("wrong-key");
        for salt in [None, Some([3u8; 32])] {
            let _ = std::fs::remove_dir_all(&dir);
            let c = DirCache::new(&dir, DEFAULT_MAX_BYTES);
            let c = match salt {
                Some(s) => c.with_salt(s),
                None => c,
            };
            let (a, b) = ([1u8; 32], [2u8; 32]);
            c.put(&a, b"results of a");
            c.put(&b, b"results of b");
            std::fs::copy(c.entry_path(&a), c.entry_path(&b)).unwrap();
            assert_eq!(c.get(&b), None, "salt {salt:?}");
            assert!(!c.entry_path(&b).exists());
            let w = c.take_warnings();
            assert!(
                w.len() == 1
                    && w[0].contains("is corrupt (stored under key")
                    && w[0].contains("not this one"),
                "{w:?}"
            );
            let s = c.stats();
            assert_eq!((s.hits, s.misses, s.corrupt), (0, 1, 1));
            // The original is still its own key's.
            assert_eq!(c.get(&a).as_deref(), Some(&b"results of a"[..]));
            // Records are read the same way.
            c.put_record(&b, b"record of b");
            std::fs::copy(c.entry_path(&a), c.entry_path(&b)).unwrap();
            assert_eq!(c.get_record(&b), None);
            assert_eq!(c.stats().corrupt, 2);
        }
        // The same files under another salt (another generator folder's keys) are not found.
        let c = DirCache::new(&dir, DEFAULT_MAX_BYTES).with_salt([3; 32]);
        let other = DirCache::new(&dir, DEFAULT_MAX_BYTES).with_salt([4; 32]);
        std::fs::create_dir_all(other.entry_path(&[1; 32]).parent().unwrap()).unwrap();
        std::fs::copy(c.entry_path(&[1; 32]), other.entry_path(&[1; 32])).unwrap();
        assert_eq!(other.get(&[1; 32]), None);
        assert_eq!(other.stats().corrupt, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file of the earlier layout (no key in its header) is a miss, not reported, and the
    /// next store replaces it.
    #[test]
    fn an_entry_of_the_earlier_layout_is_a_quiet_miss() {
        let dir = temp_dir("old-layout");
        let c = DirCache::new(&dir, DEFAULT_MAX_BYTES);
        let k = [9u8; 32];
        let path = c.entry_path(&k);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut old = OLD_MAGIC.to_vec();
        old.extend_from_slice(&3u64.to_le_bytes());
        old.extend_from_slice(blake3::hash(b"old").as_bytes());
        old.extend_from_slice(b"old");
        std::fs::write(&path, &old).unwrap();
        assert_eq!(c.get(&k), None);
        assert!(c.take_warnings().is_empty());
        assert_eq!(c.stats().corrupt, 0);
        c.put(&k, b"new");
        assert_eq!(c.get(&k).as_deref(), Some(&b"new"[..]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn evicts_least_recently_used_past_the_bound() {
        let dir = temp_dir("evict");
        let c = DirCache::new(&dir, 3 * (HEADER as u64 + 100));
        let keys: Vec<[u8; 32]> = (0..5u8).map(|i| [i; 32]).collect();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        for (i, k) in keys.iter().enumerate() {
            c.put(k, &[0u8; 100]);
            // Distinct, ordered use times without waiting on the clock.
            let f = std::fs::File::options()
                .append(true)
                .open(c.entry_path(k))
                .unwrap();
            f.set_modified(old + std::time::Duration::from_secs(i as u64))
                .unwrap();
        }
        c.evict();
        let left: Vec<bool> = keys.iter().map(|k| c.entry_path(k).exists()).collect();
        assert_eq!(left, [false, false, false, true, true]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_read_only_directory_is_a_warning_not_an_error() {
        let dir = temp_dir("ro");
        std::fs::write(&dir, b"a file where the folder should be").unwrap();
        let c = DirCache::new(&dir, DEFAULT_MAX_BYTES);
        c.put(&[1; 32], b"x");
        assert_eq!(c.get(&[1; 32]), None);
        let w = c.take_warnings();
        assert!(
            w.iter()
                .any(|w| w.contains("cannot store results in the cache")),
            "{w:?}"
        );
        let _ = std::fs::remove_file(&dir);
    }
}
