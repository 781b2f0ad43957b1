//! The disk cache without a GPU: keys, corruption, unwritable folders, the size
//! cap, threads and processes racing.

use bankfree_runtime::compiler::{Binary, Format};
use bankfree_runtime::disk::{DiskCache, Key};

fn bin(n: u8, len: usize) -> Binary {
    Binary {
        format: Format::Cubin,
        arch: 90,
        bytes: (0..len).map(|i| (i as u8).wrapping_mul(31) ^ n).collect(),
        log: String::new(),
    }
}

fn key(s: &str) -> Key {
    Key::new(
        s,
        &["--gpu-architecture=sm_90".into()],
        90,
        Format::Cubin,
        "libnvrtc.so.13.0.88",
    )
}

fn entry(dir: &std::path::Path, k: &Key) -> std::path::PathBuf {
    dir.join(format!("{}.bfbin", k.hex()))
}

#[test]
fn keys_cover_everything_that_changes_the_binary() {
    let base = key("src");
    assert_eq!(base, key("src"));
    assert_ne!(base, key("src "));
    assert_ne!(
        base,
        Key::new(
            "src",
            &["--gpu-architecture=sm_80".into()],
            90,
            Format::Cubin,
            "libnvrtc.so.13.0.88"
        )
    );
    assert_ne!(
        base,
        Key::new(
            "src",
            &["--gpu-architecture=sm_90".into()],
            80,
            Format::Cubin,
            "libnvrtc.so.13.0.88"
        )
    );
    assert_ne!(
        base,
        Key::new(
            "src",
            &["--gpu-architecture=sm_90".into()],
            90,
            Format::Ptx,
            "libnvrtc.so.13.0.88"
        )
    );
    assert_ne!(
        base,
        Key::new(
            "src",
            &["--gpu-architecture=sm_90".into()],
            90,
            Format::Cubin,
            "libnvrtc.so.12.8.93"
        )
    );
}

#[test]
fn hit_miss_corrupt_truncated_foreign() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = DiskCache::at(dir.path(), 1 << 20);
    let (k, b) = (key("a"), bin(1, 5000));
    assert_eq!(cache.get(&k), None, "empty cache misses");
    cache.put(&k, &b);
    assert_eq!(cache.get(&k).map(|x| x.bytes), Some(b.bytes.clone()), "hit");
    assert_eq!(cache.get(&key("b")), None, "another key misses");
    let path = entry(dir.path(), &k);

    let mut data = std::fs::read(&path).expect("entry");
    let last = data.len() - 1;
    data[last] ^= 0xFF;
    std::fs::write(&path, &data).expect("write");
    assert_eq!(
        cache.get(&k),
        None,
        "a flipped payload byte fails the checksum"
    );

    cache.put(&k, &b);
    let data = std::fs::read(&path).expect("entry");
    std::fs::write(&path, &data[..data.len() / 2]).expect("write");
    assert_eq!(cache.get(&k), None, "truncated");

    std::fs::write(&path, b"not a bankfree cache entry at all, just some text").expect("write");
    assert_eq!(cache.get(&k), None, "foreign");

    // An entry stored under another key's name is not served.
    cache.put(&key("b"), &bin(2, 100));
    std::fs::copy(entry(dir.path(), &key("b")), &path).expect("copy");
    assert_eq!(cache.get(&k), None, "another key's entry");

    cache.put(&k, &b);
    assert_eq!(cache.get(&k).map(|x| x.bytes), Some(b.bytes), "replaced");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files left");
}

#[test]
fn unwritable_folder_degrades_to_memory_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A folder below a regular file can never be created (even by root).
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").expect("write");
    let cache = DiskCache::at(blocker.join("cache"), 1 << 20);
    assert!(cache.dir().is_some());
    cache.put(&key("a"), &bin(1, 10));
    assert!(cache.dir().is_none(), "turned off after the first failure");
    assert_eq!(cache.get(&key("a")), None);
    cache.put(&key("a"), &bin(1, 10)); // no panic, no second warning
    assert!(DiskCache::off().dir().is_none());
}

#[test]
fn read_only_folder_degrades_to_memory_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let enforced = std::fs::write(ro.join("probe"), b"x").is_err();
    let cache = DiskCache::at(&ro, 1 << 20);
    cache.put(&key("a"), &bin(1, 10));
    if enforced {
        assert!(
            cache.dir().is_none(),
            "a read-only folder turns the disk cache off"
        );
    } else {
        // Running as root: permissions are not enforced, the write simply works.
        assert!(cache.get(&key("a")).is_some());
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
}

#[test]
fn size_cap_evicts_least_recently_used() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = DiskCache::at(dir.path(), 25_000);
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        cache.put(&key(name), &bin(i as u8, 10_000));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(cache.get(&key("a")), None, "oldest evicted");
    assert!(cache.get(&key("b")).is_some() && cache.get(&key("c")).is_some());
}

#[test]
fn racing_threads_write_one_valid_entry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = DiskCache::at(dir.path(), 1 << 24);
    let (k, b) = (key("race"), bin(7, 200_000));
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                cache.put(&k, &b);
                if let Some(got) = cache.get(&k) {
                    assert_eq!(got.bytes, b.bytes);
                }
            });
        }
    });
    assert_eq!(cache.get(&k).map(|x| x.bytes), Some(b.bytes));
}

/// Run by `racing_processes_write_one_valid_entry` in two child processes.
#[test]
#[ignore = "helper: started as a child process by racing_processes_write_one_valid_entry"]
fn race_child() {
    let Some(dir) = std::env::var_os("BF_RACE_DIR") else {
        return;
    };
    let cache = DiskCache::at(std::path::PathBuf::from(dir), 1 << 26);
    let (k, b) = (key("process race"), bin(9, 4 << 20));
    for _ in 0..20 {
        cache.put(&k, &b);
        let got = cache
            .get(&k)
            .expect("a valid entry is always there once written");
        assert_eq!(got.bytes, b.bytes);
    }
}

#[test]
fn racing_processes_write_one_valid_entry() {
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", "race_child", "--nocapture"])
                .env("BF_RACE_DIR", dir.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    let cache = DiskCache::at(dir.path(), 1 << 26);
    assert_eq!(
        cache.get(&key("process race")).map(|b| b.bytes.len()),
        Some(4 << 20)
    );
}
