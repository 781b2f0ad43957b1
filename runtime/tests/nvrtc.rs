//! Real NVRTC, no GPU: every generated kernel compiles to CUBIN for sm_75, sm_80 and
//! sm_90 without spills; concurrent requests compile once; a second process reads
//! the disk cache instead of compiling.
//!
//! Without NVRTC these tests say so and pass, unless BANKFREE_REQUIRE_NVRTC=1 (CI
//! sets it, after installing NVRTC from the PyPI wheel).

use bankfree_gen::spec::{grid, ALL_STRATEGIES};
use bankfree_gen::{Kernel, Strategy, TransposeSpec};
use bankfree_runtime::compiler::{compile, nvrtc_version, Format};
use bankfree_runtime::disk::DiskCache;
use bankfree_runtime::{binary, stats, Error, KernelSource};

fn have_nvrtc() -> bool {
    match nvrtc_version() {
        Ok(_) => true,
        Err(e) if std::env::var_os("BANKFREE_REQUIRE_NVRTC").is_some() => panic!("{e}"),
        Err(e) => {
            eprintln!("SKIPPED (set BANKFREE_REQUIRE_NVRTC=1 to make this a failure): {e}");
            false
        }
    }
}

fn spills(log: &str) -> Option<u64> {
    // "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    let mut total = None;
    for line in log.lines().filter(|l| l.contains("bytes spill stores")) {
        let nums: Vec<u64> = line
            .split(',')
            .filter(|p| p.contains("spill"))
            .filter_map(|p| p.split_whitespace().next()?.parse().ok())
            .collect();
        *total.get_or_insert(0) += nums.iter().sum::<u64>();
    }
    total
}

#[test]
fn every_grid_kernel_compiles_for_three_archs_without_spills() {
    if !have_nvrtc() {
        return;
    }
    let kernels: Vec<KernelSource> = grid(&ALL_STRATEGIES)
        .into_iter()
        .filter_map(|spec| Kernel::build(spec).ok())
        .map(|k| KernelSource::from_kernel(&k))
        .collect();
    let jobs: Vec<(usize, u32)> = (0..kernels.len())
        .flat_map(|i| [(i, 75), (i, 80), (i, 90)])
        .collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(k, arch)) = jobs.get(i) else { break };
                let ks = &kernels[k];
                let problem = match compile(&ks.source, &ks.entry, arch, Format::Cubin) {
                    Err(e) => Some(format!("{} sm_{arch}: {e}", ks.entry)),
                    Ok(b) if b.bytes.is_empty() => {
                        Some(format!("{} sm_{arch}: empty CUBIN", ks.entry))
                    }
                    Ok(b) => match spills(&b.log) {
                        Some(0) => None,
                        Some(n) => Some(format!("{} sm_{arch}: {n} bytes of spills", ks.entry)),
                        None => Some(format!(
                            "{} sm_{arch}: no ptxas report in the log",
                            ks.entry
                        )),
                    },
                };
                if let Some(p) = problem {
                    failures.lock().unwrap_or_else(|p| p.into_inner()).push(p);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_default();
    assert!(kernels.len() > 1600, "{} kernels", kernels.len());
    assert!(
        failures.is_empty(),
        "{} of {} compiles failed:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    eprintln!("{} kernels x 3 archs compiled, no spills", kernels.len());
}

#[test]
fn compile_errors_carry_log_options_and_source() {
    if !have_nvrtc() {
        return;
    }
    let src = "extern \"C\" __global__ void broken() { this is not C; }";
    match compile(src, "broken", 90, Format::Cubin) {
        Err(Error::Compile {
            log,
            options,
            source_code,
            ..
        }) => {
            assert!(log.contains("error"), "{log}");
            assert!(options.iter().any(|o| o == "--gpu-architecture=sm_90"));
            assert_eq!(source_code, src);
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    let ptx = compile("extern \"C\" __global__ void k() {}", "k", 80, Format::Ptx).expect("PTX");
    assert!(String::from_utf8_lossy(&ptx.bytes).contains(".target sm_80"));
}

fn unique_kernel(tag: &str) -> KernelSource {
    let k =
        Kernel::build(TransposeSpec::new(32, 4, Strategy::Xor).expect("valid")).expect("builds");
    let mut ks = KernelSource::from_kernel(&k);
    // A comment makes the source, and so the cache key, unique to this test run.
    let nonce = format!(
        "// {tag} {:?} {}\n",
        std::time::SystemTime::now(),
        std::process::id()
    );
    ks.source = (nonce + &ks.source).into();
    ks
}

#[test]
fn sixteen_threads_asking_at_once_compile_once() {
    if !have_nvrtc() {
        return;
    }
    let ks = unique_kernel("threads");
    let disk = DiskCache::off();
    let before = stats();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..16)
            .map(|_| s.spawn(|| binary(&disk, &ks, 90, Format::Cubin)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    let first = results[0].as_ref().expect("compiled").bytes.clone();
    assert!(results
        .iter()
        .all(|r| r.as_ref().is_ok_and(|b| b.bytes == first)));
    assert_eq!(
        stats().compiles - before.compiles,
        1,
        "one compile for 16 requests"
    );
}

/// Started by `a_second_process_reads_the_disk_cache`.
#[test]
#[ignore = "helper: started as a child process"]
fn cache_child() {
    let (Some(dir), Some(src)) = (
        std::env::var_os("BF_CACHE_DIR"),
        std::env::var_os("BF_SOURCE"),
    ) else {
        return;
    };
    let mut ks = unique_kernel("child");
    ks.source = src.to_string_lossy().into_owned().into();
    let disk = DiskCache::at(std::path::PathBuf::from(dir), 1 << 26);
    binary(&disk, &ks, 90, Format::Cubin).expect("binary");
    let s = stats();
    println!("CHILD compiles={} disk_hits={}", s.compiles, s.disk_hits);
}

#[test]
fn a_second_process_reads_the_disk_cache() {
    if !have_nvrtc() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let ks = unique_kernel("processes");
    let run = || {
        let out = std::process::Command::new(std::env::current_exe().expect("exe"))
            .args(["--ignored", "--exact", "cache_child", "--nocapture"])
            .env("BF_CACHE_DIR", dir.path())
            .env("BF_SOURCE", ks.source.as_ref())
            .output()
            .expect("child runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find(|l| l.starts_with("CHILD"))
            .map(str::to_string)
            .unwrap_or(text)
    };
    assert_eq!(run(), "CHILD compiles=1 disk_hits=0");
    assert_eq!(run(), "CHILD compiles=0 disk_hits=1");
}
