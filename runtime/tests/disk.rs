//! The disk cache without a GPU: keys, corruption, unwritable and untrusted
//! folders, links, devices and FIFOs, the size cap, threads and processes racing.

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
    assert!(cache.dir().is_none(), "a folder that cannot be made is off");
    cache.put(&key("a"), &bin(1, 10)); // no panic
    assert_eq!(cache.get(&key("a")), None);
    assert!(DiskCache::off().dir().is_none());
}

#[test]
fn a_failed_write_stops_writes_not_reads() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let ro = dir.path().join("ro");
    DiskCache::at(&ro, 1 << 20).put(&key("a"), &bin(1, 10));
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let enforced = std::fs::write(ro.join("probe"), b"x").is_err();
    let cache = DiskCache::at(&ro, 1 << 20);
    cache.put(&key("b"), &bin(2, 10));
    if enforced {
        assert!(!cache.writable(), "a read-only folder stops writes");
    } else {
        // Running as root: permissions are not enforced, the write simply works.
        assert!(cache.get(&key("b")).is_some());
    }
    assert!(cache.get(&key("a")).is_some(), "reads go on");
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o700)).expect("chmod back");
}

#[test]
fn a_folder_others_can_write_is_never_read() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let shared = dir.path().join("shared");
    DiskCache::at(&shared, 1 << 20).put(&key("a"), &bin(1, 10));
    assert_eq!(
        std::fs::metadata(&shared)
            .expect("made")
            .permissions()
            .mode()
            & 0o777,
        0o700,
        "a new folder is private"
    );
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let cache = DiskCache::at(&shared, 1 << 20);
    assert_eq!(cache.get(&key("a")), None, "a planted entry is not loaded");
    assert!(cache.dir().is_none());
    cache.put(&key("b"), &bin(2, 10));
    assert!(!entry(&shared, &key("b")).exists(), "nor written to");
}

#[test]
fn a_folder_of_another_user_is_never_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let theirs = dir.path().join("theirs");
    DiskCache::at(&theirs, 1 << 20).put(&key("a"), &bin(1, 10));
    if std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).is_err() {
        eprintln!("SKIPPED: chown needs root (CI runs as root)");
        return;
    }
    let cache = DiskCache::at(&theirs, 1 << 20);
    assert_eq!(cache.get(&key("a")), None, "a planted entry is not loaded");
    assert!(cache.dir().is_none());
}

#[test]
fn links_devices_and_fifos_are_misses() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = DiskCache::at(dir.path(), 1 << 20);
    let elsewhere = tempfile::tempdir().expect("temp dir");
    DiskCache::at(elsewhere.path(), 1 << 20).put(&key("a"), &bin(1, 10));
    // A link to a valid entry elsewhere, a link to /dev/zero, a FIFO: each a miss.
    std::os::unix::fs::symlink(
        entry(elsewhere.path(), &key("a")),
        entry(dir.path(), &key("a")),
    )
    .expect("symlink");
    assert_eq!(cache.get(&key("a")), None, "links are not followed");
    std::os::unix::fs::symlink("/dev/zero", entry(dir.path(), &key("b"))).expect("symlink");
    assert_eq!(cache.get(&key("b")), None, "no read of a device");
    let fifo = entry(dir.path(), &key("c"));
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    assert_eq!(cache.get(&key("c")), None, "a FIFO is a miss, not a hang");
}

#[test]
fn the_cache_dir_variable() {
    use bankfree_runtime::disk::dir_from;
    assert_eq!(dir_from(Some("".into())), dir_from(None), "empty is unset");
    let rel = dir_from(Some("target/cache".into())).expect_err("relative");
    assert!(
        rel.contains("relative") && rel.contains("absolute"),
        "{rel}"
    );
    assert_eq!(
        dir_from(Some("/var/cache/x".into())),
        Ok(Some("/var/cache/x".into()))
    );
}

#[test]
fn ptx_with_an_inner_nul_is_a_miss() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = DiskCache::at(dir.path(), 1 << 20);
    let ptx = |bytes: &[u8]| Binary {
        format: Format::Ptx,
        arch: 90,
        bytes: bytes.to_vec(),
        log: String::new(),
    };
    cache.put(&key("a"), &ptx(b".version 8.0\0.target sm_90"));
    assert_eq!(cache.get(&key("a")), None);
    cache.put(&key("b"), &ptx(b".version 8.0\n\0\0"));
    assert!(
        cache.get(&key("b")).is_some(),
        "trailing NULs are a terminator"
    );
}

#[test]
fn stale_temporary_files_and_tuning_records_are_evicted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = DiskCache::at(dir.path(), 3000);
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
    let stale = dir.path().join(".dead.0.tmp");
    let age = |path: &std::path::Path| {
        std::fs::File::options()
            .append(true)
            .open(path)
            .and_then(|f| f.set_modified(old))
            .expect("age it");
    };
    std::fs::write(&stale, vec![0u8; 10]).expect("write");
    age(&stale);
    let fresh = dir.path().join(".alive.0.tmp");
    std::fs::write(&fresh, b"x").expect("write");
    std::fs::create_dir_all(dir.path().join("tune")).expect("mkdir");
    let record = dir.path().join("tune").join("old-record");
    std::fs::write(&record, vec![1u8; 2000]).expect("write");
    age(&record);
    cache.put(&key("a"), &bin(1, 1500));
    assert!(!stale.exists(), "a stale temporary file is removed");
    assert!(fresh.exists(), "a writer's current one is not");
    assert!(
        !record.exists(),
        "the oldest file, a tuning record, went for the cap"
    );
    assert!(cache.get(&key("a")).is_some());
    cache.remove(&key("a"));
    assert_eq!(cache.get(&key("a")), None, "removed");
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
