//! The on-disk cache of compiled kernels.
//!
//! One file per key, `<sha256 hex>.bfbin`: a header (magic, format version, kind,
//! architecture, the key, payload length, payload SHA-256) and the payload. Files
//! are written to a temporary name and renamed, so readers never see half a file;
//! a corrupt, truncated or foreign file reads as a miss and is replaced by the next
//! write. A failed write stops writes for the process with one warning through
//! `log` (reads go on). The folder, with its `tune/` records, is kept under a size
//! cap by removing the least recently used files, and stale temporary files.
//!
//! Trust: a cached binary is code the GPU runs, and its checksum proves only that
//! it is intact. So the folder is read only when it is this user's and nobody
//! else can write it ([`trust`]); entries are opened without following links, must
//! be regular files of at most [`MAX_ENTRY_BYTES`], and temporary files are
//! created new under unpredictable names.
//!
//! Location: `BANKFREE_CACHE_DIR` (an absolute path; empty means unset), else
//! `$XDG_CACHE_HOME/bankfree` (the user's cache folder); `BANKFREE_CACHE=off`
//! turns it off.

use crate::compiler::{Binary, Format};
use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::SystemTime;

const MAGIC: &[u8; 8] = b"BANKFREE";
const FORMAT_VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 1 + 4 + 32 + 8 + 32;
/// Default size cap of the cache folder.
pub const DEFAULT_CAP: u64 = 256 * 1024 * 1024;

/// A cache key: SHA-256 of everything that determines the binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// Hashes the source, options, target, the NVRTC build (its identity: the
    /// resolved file, whose name carries the version, its size and mtime) and the
    /// bankfree version.
    pub fn new(source: &str, options: &[String], arch: u32, format: Format, nvrtc: &str) -> Key {
        let mut h = Sha256::new();
        for part in [
            source,
            &options.join("\u{1}"),
            &format!("{arch}/{format:?}"),
            nvrtc,
            env!("CARGO_PKG_VERSION"),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        Key(h.finalize().into())
    }

    /// Lower-case hex.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The largest entry read back: a bigger file (or a link to a device) is a miss.
pub const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;
/// Temporary files older than this are leftovers of a crashed writer.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// The disk cache (possibly off).
#[derive(Debug)]
pub struct DiskCache {
    dir: Option<PathBuf>,
    cap: u64,
    /// Whether the folder may be read: checked once (see [`trust`]).
    trusted: OnceLock<bool>,
    /// Set after a failed write: writes stop, reads go on.
    unwritable: AtomicBool,
}

/// Where `BANKFREE_CACHE_DIR`'s value puts the cache: unset or empty, the user's
/// cache folder; an absolute path, that folder; a relative one is refused (it would
/// make the current directory, say a checkout, the source of GPU code).
pub fn dir_from(var: Option<OsString>) -> Result<Option<PathBuf>, String> {
    match var {
        Some(v) if !v.is_empty() => {
            let p = PathBuf::from(&v);
            if p.is_absolute() {
                Ok(Some(p))
            } else {
                Err(format!(
                    "BANKFREE_CACHE_DIR={} is a relative path; set an absolute one (or BANKFREE_CACHE=off)",
                    p.display()
                ))
            }
        }
        _ => Ok(dirs::cache_dir().map(|d| d.join("bankfree"))),
    }
}

impl DiskCache {
    /// As configured by the environment (a refused setting turns the disk cache off
    /// with one warning).
    pub fn from_env() -> DiskCache {
        if std::env::var("BANKFREE_CACHE").is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
            return DiskCache::off();
        }
        match dir_from(std::env::var_os("BANKFREE_CACHE_DIR")) {
            Ok(Some(dir)) => DiskCache::at(dir, DEFAULT_CAP),
            Ok(None) => DiskCache::off(),
            Err(why) => {
                log::warn!("bankfree: {why}; caching kernels in memory only");
                DiskCache::off()
            }
        }
    }

    /// A cache in `dir` holding at most `cap` bytes.
    pub fn at(dir: impl Into<PathBuf>, cap: u64) -> DiskCache {
        DiskCache {
            dir: Some(dir.into()),
            cap,
            trusted: OnceLock::new(),
            unwritable: AtomicBool::new(false),
        }
    }

    /// No disk cache.
    pub fn off() -> DiskCache {
        DiskCache {
            dir: None,
            cap: 0,
            trusted: OnceLock::new(),
            unwritable: AtomicBool::new(false),
        }
    }

    /// The folder, when the cache is on and the folder is trusted: created 0700 if
    /// missing, else owned by this user and writable by nobody else (as ssh treats
    /// a key file). An untrusted folder is never read, with one warning.
    pub fn dir(&self) -> Option<&Path> {
        let dir = self.dir.as_deref()?;
        let ok = *self.trusted.get_or_init(|| match trust(dir) {
            Ok(()) => true,
            Err(why) => {
                log::warn!(
                    "bankfree: not using the kernel cache folder {}: {why}; caching in memory only",
                    dir.display()
                );
                false
            }
        });
        ok.then_some(dir)
    }

    /// Whether writes go on (a failed one stops them; reads go on).
    pub fn writable(&self) -> bool {
        self.dir().is_some() && !self.unwritable.load(Ordering::Relaxed)
    }

    fn path(&self, key: &Key) -> Option<PathBuf> {
        self.dir().map(|d| d.join(format!("{}.bfbin", key.hex())))
    }

    /// The cached binary, if a valid entry exists: a regular file (links are not
    /// followed), at most [`MAX_ENTRY_BYTES`], whose header and checksum match.
    pub fn get(&self, key: &Key) -> Option<Binary> {
        let path = self.path(key)?;
        let file = open_entry(&path, false)?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
            return None;
        }
        let mut data = Vec::new();
        file.take(MAX_ENTRY_BYTES + 1).read_to_end(&mut data).ok()?;
        let bin = decode(key, &data)?;
        // Mark it recently used for eviction (best effort).
        if let Some(f) = open_entry(&path, true) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(bin)
    }

    /// Removes the entry of `key` (one the driver refused, say).
    pub fn remove(&self, key: &Key) {
        if let Some(path) = self.path(key) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Stores a binary; a failure stops writes (not reads) with one warning.
    pub fn put(&self, key: &Key, bin: &Binary) {
        let (Some(dir), Some(path)) = (self.dir(), self.path(key)) else {
            return;
        };
        if !self.writable() {
            return;
        }
        let tmp = dir.join(format!(".{}.{:016x}.tmp", key.hex(), unpredictable()));
        let result = create_new(&tmp)
            .and_then(|mut f| {
                f.write_all(&encode(key, bin))?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            if !self.unwritable.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "bankfree: cannot write to the kernel cache folder {} ({e}); reading it only. \
                     Set BANKFREE_CACHE_DIR to a writable folder or BANKFREE_CACHE=off",
                    dir.display()
                );
            }
            return;
        }
        self.evict(dir);
    }

    /// Removes leftover temporary files, then the least recently used entries and
    /// tuning records until the folder (with `tune/`) fits the cap.
    fn evict(&self, dir: &Path) {
        let now = SystemTime::now();
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for d in [dir.to_path_buf(), dir.join("tune")] {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(m) = e.path().symlink_metadata() else {
                    continue;
                };
                let Ok(modified) = m.modified() else {
                    continue;
                };
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.ends_with(".tmp") {
                    if now
                        .duration_since(modified)
                        .is_ok_and(|age| age > STALE_TMP)
                    {
                        let _ = std::fs::remove_file(e.path());
                    }
                    continue;
                }
                if m.is_file() {
                    entries.push((modified, m.len(), e.path()));
                }
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort();
        for (_, len, path) in entries {
            if total <= self.cap {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Whether `dir` may be read: created 0700 where missing; a folder, owned by this
/// user and not writable by group or others.
pub fn trust(dir: &Path) -> Result<(), String> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .map_err(|e| format!("cannot create it ({e})"))?;
    let m = std::fs::metadata(dir).map_err(|e| format!("cannot read it ({e})"))?;
    if !m.is_dir() {
        return Err("it is not a folder".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = crate::ffi::effective_uid();
        if m.uid() != me {
            return Err(format!(
                "it is owned by uid {}, not by this user ({me})",
                m.uid()
            ));
        }
        if m.mode() & 0o022 != 0 {
            return Err(format!(
                "others can write it (mode {:o}); `chmod go-w` it",
                m.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

/// Opens an entry without following a link and without waiting on a FIFO.
fn open_entry(path: &Path, append: bool) -> Option<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    if append {
        o.append(true);
    } else {
        o.read(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    o.open(path).ok()
}

/// Creates a new file (never an existing one or through a link), mode 0600.
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    o.open(path)
}

/// A value others cannot predict: the standard library's per-process random hash
/// keys over the time, the process and a counter.
fn unpredictable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNT.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    if let Ok(t) = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

fn encode(key: &Key, bin: &Binary) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER + bin.bytes.len());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    v.push(match bin.format {
        Format::Cubin => 0,
        Format::Ptx => 1,
    });
    v.extend_from_slice(&bin.arch.to_le_bytes());
    v.extend_from_slice(&key.0);
    v.extend_from_slice(&(bin.bytes.len() as u64).to_le_bytes());
    v.extend_from_slice(&Sha256::digest(&bin.bytes));
    v.extend_from_slice(&bin.bytes);
    v
}

fn decode(key: &Key, d: &[u8]) -> Option<Binary> {
    if d.len() < HEADER || &d[..8] != MAGIC || d[8..12] != FORMAT_VERSION.to_le_bytes() {
        return None;
    }
    let format = match d[12] {
        0 => Format::Cubin,
        1 => Format::Ptx,
        _ => return None,
    };
    let arch = u32::from_le_bytes(d[13..17].try_into().ok()?);
    if d[17..49] != key.0 {
        return None;
    }
    let len = u64::from_le_bytes(d[49..57].try_into().ok()?);
    let payload = &d[HEADER..];
    if payload.len() as u64 != len || Sha256::digest(payload)[..] != d[57..89] {
        return None;
    }
    // PTX is text: a NUL inside it (not a trailing terminator) is not ours.
    if format == Format::Ptx {
        let text = payload.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        if payload[..text].contains(&0) {
            return None;
        }
    }
    Some(Binary {
        format,
        arch,
        bytes: payload.to_vec(),
        log: String::new(),
    })
}
