//! Real NVRTC, no GPU: every generated kernel's build that ordinary calls run
//! compiles to CUBIN without spills (for sm_75, sm_80 or sm_90 in turn), and so
//! does the 64-bit build of every kernel the attribute builds by default (sm_90);
//! concurrent requests compile once; a second process reads the disk cache
//! instead of compiling. A sample of permute plans' kernels (copies and transposes
//! with outer batch axes) compiles for sm_90 as well.
//!
//! Without NVRTC these tests say so and pass, unless BANKFREE_REQUIRE_NVRTC=1 (CI
//! sets it, after installing NVRTC from the PyPI wheel).

use bankfree_gen::check::index32::pays;
use bankfree_gen::kernel::geometry::Quotients;
use bankfree_gen::kernel::grid::{grid, ALL_STRATEGIES};
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::select::device::{twin, GpuClass};
use bankfree_gen::select::permute::{plan, plan_kernels, plan_tiles, Permute};
use bankfree_gen::select::table;
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

/// Spill bytes per function in a ptxas `-v` log: each "Function properties for
/// NAME" line is followed by "N bytes stack frame, N bytes spill stores, N bytes
/// spill loads".
fn spills(log: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in log.lines() {
        if let Some(name) = line.split("Function properties for ").nth(1) {
            current = Some(name.trim().to_string());
        } else if line.contains("bytes spill stores") {
            let n: u64 = line
                .split(',')
                .filter(|p| p.contains("spill"))
                .filter_map(|p| p.split_whitespace().next()?.parse::<u64>().ok())
                .sum();
            if let Some(name) = current.take() {
                out.push((name, n));
            }
        }
    }
    out
}

/// Kernels per NVRTC program in the grid test: each in its own namespace (their
/// entries are `extern "C"` and distinct), so one front-end start serves many.
const BATCH: usize = 24;

/// Compiles `kernels` as one program for `arch`; the problems of each kernel (a
/// failed batch is compiled kernel by kernel to name the culprit; a batch that
/// fails while each of its kernels compiles alone is a problem too: kernels must
/// not clash in one program, or the grid test falls back to slow single builds).
fn compile_batch(kernels: &[&KernelSource], arch: u32) -> Vec<String> {
    let source: String = kernels
        .iter()
        .enumerate()
        .map(|(i, k)| format!("namespace bf_k{i} {{\n{}\n}}\n", k.source()))
        .collect();
    let name = format!("batch_{}.cu", kernels[0].entry());
    match compile(&source, &name, arch, Format::Cubin) {
        Err(_) if kernels.len() > 1 => {
            let mut problems: Vec<String> = kernels
                .iter()
                .flat_map(|k| compile_batch(&[k], arch))
                .collect();
            if problems.is_empty() {
                // Each compiles alone: they clash in one program (a shared symbol).
                problems.push(format!(
                    "{name} sm_{arch}: {} kernels compile alone but not together",
                    kernels.len()
                ));
            }
            problems
        }
        Err(e) => vec![format!("{} sm_{arch}: {e}", kernels[0].entry())],
        Ok(b) if b.bytes.is_empty() => vec![format!("{} sm_{arch}: empty CUBIN", name)],
        Ok(b) => {
            let report = spills(&b.log);
            kernels
                .iter()
                .flat_map(|k| k.entries())
                .filter_map(|e| match report.iter().find(|(n, _)| *n == e) {
                    Some((_, 0)) => None,
                    Some((_, n)) => Some(format!("{e} sm_{arch}: {n} bytes of spills")),
                    None => Some(format!("{e} sm_{arch}: no ptxas report in the log")),
                })
                .collect()
        }
    }
}

/// `f(0..n)` on `threads` threads, each taking the next index; results in order.
fn on_every_core<R: Send>(threads: usize, n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break mine;
                        }
                        mine.push((i, f(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

#[test]
fn every_grid_kernel_compiles_without_spills() {
    if !have_nvrtc() {
        return;
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Specs outside the proven table search their layout, and their headers
    // quote the analyzer's verdict: on every core, each taking the next spec (a
    // few searches take seconds).
    let specs = grid(&ALL_STRATEGIES);
    let (built, kernels): (Vec<Kernel>, Vec<KernelSource>) =
        on_every_core(threads, specs.len(), |i| {
            let k = Kernel::build(specs[i]).ok()?;
            let s = KernelSource::from_kernel(&k);
            Some((k, s))
        })
        .into_iter()
        .flatten()
        .unzip();
    // Each kernel's build that ordinary calls run (the 32-bit one, or the 64-bit
    // one where the 32-bit build does not pay and never runs), in batches for one
    // of sm_75, sm_80 and sm_90 in turn: every kernel is compiled and every arch
    // sees a third of the grid. Then for sm_90 the 64-bit build (calls of 2^32
    // units and more) of the other kernels the attribute builds by default. Both
    // builds of every kernel for all three archs are `scripts/gpu/run.sh`'s
    // compile step.
    let defaults = table::specs();
    // A batch holds one build only (the 64-bit define covers the whole program).
    let (mut narrow, mut runs_wide, mut wide) = (Vec::new(), Vec::new(), Vec::new());
    for (k, s) in built.iter().zip(&kernels) {
        if !pays(&k.spec().geometry) {
            runs_wide.push(s.index64());
        } else {
            narrow.push(s);
            if defaults.contains(k.spec()) {
                wide.push(s.index64());
            }
        }
    }
    assert!(wide.len() > 100, "{} 64-bit builds", wide.len());
    // The default tile kernels' twins that take their tiles down the columns (the
    // H200 class's order), and the twins other classes run
    // (`select::device::twin`), each in the build ordinary calls run, for sm_90.
    let defaults_built = || built.iter().filter(|k| defaults.contains(k.spec()));
    let down: Vec<KernelSource> = defaults_built()
        .filter_map(|k| k.with_order(TileOrder::Columns).ok())
        .chain(
            defaults_built()
                .flat_map(|k| GpuClass::ALL.map(|c| twin(c, k)))
                .flatten()
                // The column-order twins are the list above.
                .filter(|t| t.order() == TileOrder::Rows),
        )
        .map(|k| KernelSource::from_kernel(&k))
        .collect();
    let (down_narrow, down_wide): (Vec<&KernelSource>, Vec<&KernelSource>) =
        down.iter().partition(|s| pays(s.geometry()));
    let down_wide: Vec<&KernelSource> = down_wide.into_iter().map(|s| s.index64()).collect();
    assert!(down.len() > 100, "{} column-order twins", down.len());
    const ARCHS: [u32; 3] = [75, 80, 90];
    let batches = narrow.chunks(BATCH).chain(runs_wide.chunks(BATCH));
    let jobs: Vec<(&[&KernelSource], u32)> = batches
        .enumerate()
        .map(|(i, c)| (c, ARCHS[i % ARCHS.len()]))
        .chain(wide.chunks(BATCH).map(|c| (c, 90)))
        .chain(down_narrow.chunks(BATCH).map(|c| (c, 90)))
        .chain(down_wide.chunks(BATCH).map(|c| (c, 90)))
        .collect();
    let failures: Vec<String> = on_every_core(threads, jobs.len(), |i| {
        let (batch, arch) = jobs[i];
        compile_batch(batch, arch)
    })
    .concat();
    assert!(kernels.len() > 1600, "{} kernels", kernels.len());
    assert!(
        failures.is_empty(),
        "{} problems in {} kernels (each for one arch), {} more 64-bit builds and {} column-order twins (sm_90):\n{}",
        failures.len(),
        kernels.len(),
        wide.len(),
        down.len(),
        failures.join("\n")
    );
    eprintln!(
        "{} kernels (sm_75, sm_80, sm_90 in turn), {} more 64-bit builds and {} column-order twins (sm_90) compiled, no spills",
        kernels.len(),
        wide.len(),
        down.len()
    );
}

/// Permutes drawn from a fixed seed: ranks 2 to 8, extents 1 to 40, every element
/// size the planner takes, both strategies.
fn sample_permutes(n: usize) -> Vec<(Permute, Strategy)> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    const SIZES: [u32; 8] = [1, 2, 4, 8, 12, 16, 24, 64];
    (0..n)
        .map(|i| {
            let rank = 2 + next(7) as usize;
            let dims: Vec<u64> = (0..rank).map(|_| 1 + next(40)).collect();
            let mut perm: Vec<usize> = (0..rank).collect();
            for k in (1..rank).rev() {
                perm.swap(k, next(k as u64 + 1) as usize);
            }
            let strategy = if i % 2 == 0 {
                Strategy::Xor
            } else {
                Strategy::Pad(None)
            };
            (Permute::new(&dims, &perm, SIZES[i % SIZES.len()]), strategy)
        })
        .collect()
}

/// Every kernel a sample of permute plans may run (copies, gathers down the
/// columns of their chunks with each level of wider quotients, and transposes with outer batch axes and folded tile sides,
/// also where the plan gathers, and tall kernels of folded rows), both builds,
/// compiles for sm_90; the 32-bit builds without spills.
#[test]
fn sampled_permute_kernels_compile_without_spills() {
    if !have_nvrtc() {
        return;
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut sources = Vec::new();
    let mut outers = std::collections::BTreeSet::new();
    // With three that run the tall kernel of folded rows (gathers of whole
    // source rows that use little of each sector, and a box with an outer
    // batch axis), and a 2-byte box that gathers down the columns of its
    // chunks.
    let tall = [
        (Permute::new(&[3, 5000, 7], &[2, 1, 0], 2), Strategy::Xor),
        (
            Permute::new(&[70, 5, 39, 6], &[1, 3, 0, 2], 4),
            Strategy::Xor,
        ),
        (
            Permute::new(&[30, 4, 2, 37, 5], &[1, 4, 2, 0, 3], 8),
            Strategy::Xor,
        ),
        (
            Permute::new(&[4, 5, 3, 700, 9], &[4, 2, 0, 3, 1], 4),
            Strategy::Xor,
        ),
    ];
    for (p, strategy) in sample_permutes(64).into_iter().chain(tall) {
        for planned in [plan(&p), plan_tiles(&p)] {
            let planned = planned.expect("the sample plans");
            for k in plan_kernels(&planned, strategy).expect("kernels build") {
                if seen.insert(k.entry_name()) {
                    outers.insert(k.outer());
                    sources.push(KernelSource::from_kernel(&k));
                }
            }
        }
    }
    assert!(sources.len() > 40, "{} kernels", sources.len());
    assert!(outers.len() >= 5, "outer axis counts {outers:?}");
    assert!(sources.iter().any(|k| k.entry().contains("copy")));
    assert!(sources.iter().any(|k| k.fold() != [0, 0]), "no folded tile");
    assert!(
        sources
            .iter()
            .any(|k| k.entry().contains("_tall_") && k.fold() != [0, 0]),
        "no folded tall kernel"
    );
    assert!(
        sources
            .iter()
            .any(|k| k.entry().contains("_tall_o1_") && k.fold() != [0, 0]),
        "no folded tall kernel with an outer axis"
    );
    assert!(
        sources
            .iter()
            .any(|k| k.entry().contains("_small") && k.entry().ends_with("_tc")),
        "no gather down the columns of its chunks"
    );
    for q in [Quotients::Items, Quotients::Wide, Quotients::Any] {
        assert!(
            sources.iter().any(|k| k.quotients() == q),
            "no {q:?} quotients"
        );
    }
    let narrow: Vec<&KernelSource> = sources.iter().collect();
    let wide: Vec<&KernelSource> = sources.iter().map(KernelSource::index64).collect();
    let jobs: Vec<&[&KernelSource]> = narrow.chunks(BATCH).chain(wide.chunks(BATCH)).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let problems = on_every_core(threads, jobs.len(), |i| compile_batch(jobs[i], 90)).concat();
    // The 64-bit builds (calls of 2^32 units and more) of kernels with many outer
    // axes may spill a few bytes: they must compile; the 32-bit builds, which
    // every smaller call runs, must not spill.
    let (spills64, failures): (Vec<String>, Vec<String>) = problems
        .into_iter()
        .partition(|p| p.contains("_i64 sm_90") && p.ends_with("bytes of spills"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{} permute kernels (outer axes {outers:?}), 32- and 64-bit builds, compiled for sm_90; 64-bit builds with spills: {spills64:?}",
        sources.len()
    );
}

/// The batching above must not hide a spill: the log's report is read per
/// function, and a real batch reports every kernel under its own name.
#[test]
fn batched_compiles_report_each_kernel() {
    let log = "ptxas info    : Compiling entry function 'a' for 'sm_90'\n\
               ptxas info    : Function properties for a\n    \
               0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
               ptxas info    : Function properties for b\n    \
               8 bytes stack frame, 12 bytes spill stores, 4 bytes spill loads\n";
    assert_eq!(
        spills(log),
        vec![("a".to_string(), 0), ("b".to_string(), 16)]
    );
    if !have_nvrtc() {
        return;
    }
    let ks: Vec<KernelSource> = [Strategy::Xor, Strategy::Pad(None), Strategy::None]
        .into_iter()
        .map(|st| {
            KernelSource::from_kernel(
                &Kernel::build(TransposeSpec::new(32, 4, st).expect("spec")).expect("kernel"),
            )
        })
        .collect();
    let refs: Vec<&KernelSource> = ks.iter().collect();
    assert_eq!(compile_batch(&refs, 90), Vec::<String>::new());
    // Tiles in dynamic shared memory of different types share one program.
    let dynamic: Vec<KernelSource> = [(12, Strategy::Pad(None)), (16, Strategy::Xor)]
        .into_iter()
        .map(|(e, st)| {
            KernelSource::from_kernel(
                &Kernel::build(TransposeSpec::new(64, e, st).expect("spec")).expect("kernel"),
            )
        })
        .collect();
    assert!(dynamic.iter().all(|k| k.shared_bytes() > 48 * 1024));
    let refs: Vec<&KernelSource> = dynamic.iter().collect();
    assert_eq!(compile_batch(&refs, 90), Vec::<String>::new());
    // A batch with a broken kernel names that kernel alone.
    let broken = with_source(
        &ks[0],
        "broken",
        "extern \"C\" __global__ void broken() { this is not C; }",
    );
    let problems = compile_batch(&[&ks[0], &broken, &ks[1]], 90);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("broken sm_90"), "{problems:?}");
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
    let ks = KernelSource::from_kernel(&k);
    // A comment makes the source, and so the cache key, unique to this test run.
    let nonce = format!(
        "// {tag} {:?} {}\n",
        std::time::SystemTime::now(),
        std::process::id()
    );
    with_source(&ks, ks.entry(), &(nonce + ks.source()))
}

/// `ks` with another entry and source: for compiling only, never launching.
#[allow(unsafe_code)]
fn with_source(ks: &KernelSource, entry: &str, source: &str) -> KernelSource {
    // SAFETY: these kernels are compiled and cached by the tests, never launched.
    unsafe { KernelSource::from_parts(entry, source, *ks.geometry(), ks.shared_bytes()) }
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
    let ks = unique_kernel("child");
    let ks = with_source(&ks, ks.entry(), &src.to_string_lossy());
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
            .env("BF_SOURCE", ks.source())
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
