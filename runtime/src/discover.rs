//! Finding NVRTC and the driver without letting cudarc panic.
//!
//! NVRTC is searched, in order:
//! 1. `BANKFREE_NVRTC=/path/to/libnvrtc.so.N`: used alone when set;
//! 2. `LD_LIBRARY_PATH` and the system library folders;
//! 3. `$CUDA_PATH`, `$CUDA_HOME`, `/usr/local/cuda`, `/opt/cuda`: `lib64` and
//!    `targets/x86_64-linux/lib`;
//! 4. NVIDIA's pip wheels in Python environments (`$VIRTUAL_ENV`, `$CONDA_PREFIX`,
//!    `~/.local`, pyenv versions, `/usr/local`, `/usr`, `/opt/conda`):
//!    `site-packages/nvidia/cu13/lib` and `site-packages/nvidia/cuda_nvrtc/lib`.
//!
//! 5. the dynamic loader itself (`libnvrtc.so`, `.so.13`, `.so.12`, `.so.11.2`).
//!
//! Steps 1 to 4 only look at files: the library is loaded when something must be
//! compiled, so a disk-cache hit never loads NVRTC. A path is resolved (links
//! followed, regular files only) once: the file loaded is the file hashed into
//! cache keys. A library found by path gets the `libnvrtc-builtins` of its own
//! version (same folder) loaded first, so NVRTC finds it without
//! `LD_LIBRARY_PATH`.

use crate::error::Error;
use crate::ffi::{self, Nvrtc};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Names the dynamic loader is asked for when no file was found.
const LOADER_NAMES: [&str; 4] = [
    "libnvrtc.so",
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
];

/// Where NVRTC is, found by looking at the file system only.
#[derive(Clone, Debug)]
pub struct Located {
    /// A file path, or a bare name for the dynamic loader.
    pub path: PathBuf,
    /// What identifies this NVRTC build in cache keys: the resolved file (its name
    /// carries the full version where the toolkit installs one), size and mtime.
    pub identity: String,
}

/// Locates NVRTC once per process, without loading it where a file is found, so a
/// disk-cache hit never pays for loading the compiler.
pub fn locate() -> Result<&'static Located, Error> {
    static LOC: OnceLock<Result<Located, Error>> = OnceLock::new();
    LOC.get_or_init(find).as_ref().map_err(Clone::clone)
}

/// The NVRTC library, loaded on first use (the located one).
pub fn nvrtc() -> Result<&'static Nvrtc, Error> {
    static NVRTC: OnceLock<Result<Nvrtc, Error>> = OnceLock::new();
    NVRTC
        .get_or_init(|| {
            let loc = locate()?;
            open(&loc.path).map_err(|e| Error::NvrtcNotFound {
                searched: format!("{} could not be loaded: {e}", loc.path.display()),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The driver is loadable (checked before any cudarc driver call).
pub fn driver() -> Result<(), Error> {
    if ffi::driver_present() {
        Ok(())
    } else {
        Err(Error::DriverNotFound {
            searched: "libcuda.so, libcuda.so.1 and cudarc's other candidate names".into(),
        })
    }
}

/// The file `path` resolves to (links followed) and what identifies it; `None`
/// unless it is a regular file.
fn resolve(path: &Path) -> Option<(PathBuf, String)> {
    let real = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let identity = format!("{} {} bytes mtime {mtime}", real.display(), meta.len());
    Some((real, identity))
}

fn find() -> Result<Located, Error> {
    if let Some(p) = std::env::var_os("BANKFREE_NVRTC") {
        // The file that is hashed into cache keys is the file that is loaded.
        let path = PathBuf::from(p);
        return resolve(&path)
            .map(|(path, identity)| Located { path, identity })
            .ok_or_else(|| Error::NvrtcNotFound {
                searched: format!(
                    "BANKFREE_NVRTC={} (not a file); point it at libnvrtc.so.N or unset it \
                     to search the usual places",
                    path.display()
                ),
            });
    }
    let mut tried = Vec::new();
    for dir in search_dirs() {
        if let Some(path) = nvrtc_files(&dir).into_iter().next() {
            if let Some((path, identity)) = resolve(&path) {
                return Ok(Located { path, identity });
            }
        }
        tried.push(dir.display().to_string());
    }
    // Last resort: let the dynamic loader look (ld.so.cache); this loads it.
    for name in LOADER_NAMES {
        if let Ok(n) = Nvrtc::open(Path::new(name)) {
            let (a, b) = n.version();
            return Ok(Located {
                path: PathBuf::from(name),
                identity: format!("{name} via the loader, NVRTC {a}.{b}"),
            });
        }
        tried.push(format!("{name} (dynamic loader)"));
    }
    Err(Error::NvrtcNotFound {
        searched: tried.join(", "),
    })
}

fn open(path: &Path) -> Result<Nvrtc, String> {
    if let Some(b) = builtins_for(path) {
        let _ = ffi::preload(&b);
    }
    Nvrtc::open(path)
}

/// The `libnvrtc-builtins` beside `lib` that belongs to it: its version agrees
/// with the library's on every component both name (`libnvrtc.so.13` takes
/// `libnvrtc-builtins.so.13.0`, never `.so.12.4`); the most specific one.
fn builtins_for(lib: &Path) -> Option<PathBuf> {
    let version = |p: &Path, prefix: &str| -> Option<Vec<String>> {
        let name = p.file_name()?.to_string_lossy().into_owned();
        let v = name.strip_prefix(prefix)?;
        Some(v.split('.').map(str::to_owned).collect())
    };
    let want = version(lib, "libnvrtc.so.")?;
    files_starting(lib.parent()?, "libnvrtc-builtins.so.")
        .into_iter()
        .filter_map(|b| Some((version(&b, "libnvrtc-builtins.so.")?, b)))
        .filter(|(v, _)| v.iter().zip(&want).all(|(a, b)| a == b))
        .max_by_key(|(v, _)| v.len())
        .map(|(_, b)| b)
}

/// `LD_LIBRARY_PATH`, the system library folders, then [`candidate_dirs`].
fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    dirs.extend(
        [
            "/usr/lib/x86_64-linux-gnu",
            "/lib/x86_64-linux-gnu",
            "/usr/lib64",
            "/usr/lib",
        ]
        .map(PathBuf::from),
    );
    dirs.extend(candidate_dirs());
    dirs.retain(|d| d.is_dir());
    dirs
}

/// Folders that may hold NVRTC, in search order (existing ones only).
pub fn candidate_dirs() -> Vec<PathBuf> {
    let env = |k: &str| std::env::var_os(k).map(PathBuf::from);
    let mut roots: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(|k| env(k))
        .collect();
    roots.extend(["/usr/local/cuda", "/opt/cuda"].map(PathBuf::from));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for r in roots {
        dirs.push(r.join("lib64"));
        dirs.push(r.join("targets/x86_64-linux/lib"));
    }
    let home = dirs::home_dir();
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|k| env(k))
        .collect();
    if let Some(h) = &home {
        prefixes.push(h.join(".local"));
        prefixes.extend(subdirs(&h.join(".pyenv/versions")));
    }
    prefixes.extend(["/usr/local", "/usr", "/opt/conda"].map(PathBuf::from));
    for p in prefixes {
        for py in subdirs(&p.join("lib"))
            .into_iter()
            .filter(|d| name_starts(d, "python3"))
        {
            for sp in ["site-packages", "dist-packages"] {
                dirs.push(py.join(sp).join("nvidia/cu13/lib"));
                dirs.push(py.join(sp).join("nvidia/cuda_nvrtc/lib"));
            }
        }
    }
    dirs.retain(|d| d.is_dir());
    dirs.dedup();
    dirs
}

/// NVRTC file names looked for in each folder, newest first.
const FILE_NAMES: [&str; 4] = [
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11.2",
    "libnvrtc.so",
];

/// The NVRTC libraries in `dir`, newest first: one `stat` per name, never a folder
/// listing (system library folders hold thousands of files).
pub fn nvrtc_files(dir: &Path) -> Vec<PathBuf> {
    FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.is_file())
        .collect()
}

fn name_starts(p: &Path, prefix: &str) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
}

fn files_starting(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| name_starts(p, prefix))
                .collect()
        })
        .unwrap_or_default()
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_wheel_layouts_and_orders_versions() {
        let dir = tempfile::tempdir().expect("temp dir");
        let lib = dir.path().join("nvidia/cu13/lib");
        std::fs::create_dir_all(&lib).expect("mkdir");
        for f in [
            "libnvrtc.so.12",
            "libnvrtc.so.13",
            "libnvrtc-builtins.so.13.0",
            "libnvrtc.alt.so.13",
        ] {
            std::fs::write(lib.join(f), b"").expect("write");
        }
        let found: Vec<String> = nvrtc_files(&lib)
            .iter()
            .map(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(found, ["libnvrtc.so.13", "libnvrtc.so.12"]);
        // A file that is not a library is reported, not loaded blindly.
        assert!(open(&lib.join("libnvrtc.so.13")).is_err());
        let (real, id) = resolve(&lib.join("libnvrtc.so.13")).expect("identity");
        assert!(id.contains("libnvrtc.so.13 0 bytes"), "{id}");
        assert_eq!(
            real,
            std::fs::canonicalize(lib.join("libnvrtc.so.13")).expect("real")
        );
        // A folder is not a library.
        assert!(resolve(&lib).is_none());
    }

    #[test]
    fn the_builtins_of_the_same_version_are_loaded_and_no_other() {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        for f in [
            "libnvrtc.so.13.0.88",
            "libnvrtc-builtins.so.12.4",
            "libnvrtc-builtins.so.13.0",
            "libnvrtc-builtins.so.13.0.88",
            "libnvrtc-builtins.so.13.1.20",
        ] {
            std::fs::write(d.join(f), b"").expect("write");
        }
        let name = |p: Option<PathBuf>| p.and_then(|p| Some(p.file_name()?.to_owned()));
        let pick = |lib: &str| name(builtins_for(&d.join(lib)));
        assert_eq!(
            pick("libnvrtc.so.13.0.88"),
            Some("libnvrtc-builtins.so.13.0.88".into())
        );
        // A wheel's library names its major version only.
        let major = pick("libnvrtc.so.13").expect("a 13 builtins");
        assert!(major
            .to_string_lossy()
            .starts_with("libnvrtc-builtins.so.13."));
        assert_eq!(
            pick("libnvrtc.so.12"),
            Some("libnvrtc-builtins.so.12.4".into())
        );
        assert_eq!(pick("libnvrtc.so.11.2"), None);
    }
}
