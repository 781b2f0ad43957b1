//! The on-disk cache of compiled kernels.
//!
//! One file per key, `<sha256 hex>.bfbin`: a header (magic, format version, kind,
//! architecture, the key, payload length, payload SHA-256) and the payload. Files
//! are written to a temporary name and renamed, so readers never see half a file;
//! a corrupt, truncated or foreign file reads as a miss and is replaced by the next
//! write. An unwritable folder turns the cache off for the process with one
//! warning through `log`. The folder is kept under a size cap by removing the
//! least recently used entries.
//!
//! Location: `BANKFREE_CACHE_DIR`, else `$XDG_CACHE_HOME/bankfree` (the user's
//! cache folder); `BANKFREE_CACHE=off` turns it off.

use crate::compiler::{Binary, Format};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// The disk cache (possibly off).
#[derive(Debug)]
pub struct DiskCache {
    dir: Option<PathBuf>,
    cap: u64,
    broken: AtomicBool,
}

impl DiskCache {
    /// As configured by the environment.
    pub fn from_env() -> DiskCache {
        if std::env::var("BANKFREE_CACHE").is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
            return DiskCache::off();
        }
        let dir = std::env::var_os("BANKFREE_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| dirs::cache_dir().map(|d| d.join("bankfree")));
        DiskCache {
            dir,
            cap: DEFAULT_CAP,
            broken: AtomicBool::new(false),
        }
    }

    /// A cache in `dir` holding at most `cap` bytes.
    pub fn at(dir: impl Into<PathBuf>, cap: u64) -> DiskCache {
        DiskCache {
            dir: Some(dir.into()),
            cap,
            broken: AtomicBool::new(false),
        }
    }

    /// No disk cache.
    pub fn off() -> DiskCache {
        DiskCache {
            dir: None,
            cap: 0,
            broken: AtomicBool::new(false),
        }
    }

    /// The folder, when the cache is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir
            .as_deref()
            .filter(|_| !self.broken.load(Ordering::Relaxed))
    }

    fn path(&self, key: &Key) -> Option<PathBuf> {
        self.dir().map(|d| d.join(format!("{}.bfbin", key.hex())))
    }

    /// The cached binary, if a valid entry exists.
    pub fn get(&self, key: &Key) -> Option<Binary> {
        let path = self.path(key)?;
        let data = std::fs::read(&path).ok()?;
        let bin = decode(key, &data)?;
        // Mark it recently used for eviction (best effort).
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(bin)
    }

    /// Stores a binary; failures turn the cache off with one warning.
    pub fn put(&self, key: &Key, bin: &Binary) {
        let (Some(dir), Some(path)) = (self.dir(), self.path(key)) else {
            return;
        };
        let tmp = dir.join(format!(
            ".{}.{}.{:?}.tmp",
            key.hex(),
            std::process::id(),
            std::thread::current().id()
        ));
        let result = std::fs::create_dir_all(dir)
            .and_then(|()| {
                let mut f = std::fs::File::create(&tmp)?;
                f.write_all(&encode(key, bin))?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            if !self.broken.swap(true, Ordering::Relaxed) {
                log::warn!(
                    "bankfree: kernel cache folder {} is not writable ({e}); caching in memory only. \
                     Set BANKFREE_CACHE_DIR to a writable folder or BANKFREE_CACHE=off",
                    dir.display()
                );
            }
            return;
        }
        self.evict(dir);
    }

    /// Removes least recently used entries until the folder fits the cap.
    fn evict(&self, dir: &Path) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = rd
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "bfbin"))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
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
    Some(Binary {
        format,
        arch,
        bytes: payload.to_vec(),
        log: String::new(),
    })
}
