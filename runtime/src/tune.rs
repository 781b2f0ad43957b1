//! Autotuning: time every kernel that can run a call, once per device, and keep the
//! fastest, in memory and in the cache folder for later processes.
//!
//! A function written by `#[tiled_transpose]` with `tile = auto` holds a list of
//! kernels (narrow chunks, skew tiles, vector tiles, the plain tile) and by default
//! runs the first that fits and suits the call. Inside [`autotune`] each call of it
//! instead times every kernel that can run the call, interleaved: 2 warm-ups each,
//! then [`ROUNDS`] rounds in which every kernel in turn runs [`PER_ROUND`] times
//! back to back between two CUDA events (so clock changes and launch gaps hit all
//! alike); a kernel's time is its median round. The kernel the call would run
//! untuned keeps the call unless another is more than [`MARGIN`] faster (single
//! launches timed one kernel after another once picked a kernel 1% slower than the
//! default). The winner is recorded and run. Afterwards, calls of
//! the same *class* run the recorded winner, in this process and in later ones.
//!
//! A class is: the device (its name, compute capability and driver version), the
//! bankfree version, the kernel list (its entry names), which of its kernels fit
//! and suit the call, the call's size rounded up to a power of two bytes, and a
//! narrow side of at most 32 exactly. The record is a text file
//! `<cache folder>/tune/<sha256 of the class>.tune`; with `BANKFREE_CACHE=off` it
//! lives in memory only. A record whose kernel is no longer in the list, or that
//! no longer fits the call, is ignored.
//!
//! ```no_run
//! # use bankfree_gen::{select::choice::auto_kernels, Kernel, Shape, Strategy, TransposeSpec};
//! # use bankfree_runtime::{autotune, transpose_first, KernelSource};
//! # use cudarc::driver::CudaContext;
//! let spec = TransposeSpec::new(32, 4, Strategy::Pad(None))?;
//! let list: Vec<KernelSource> =
//!     auto_kernels(&Kernel::build(spec)?).iter().map(KernelSource::from_kernel).collect();
//! let stream = CudaContext::new(0).map_err(|e| e.to_string())?.default_stream();
//! let shape = Shape::new(8191, 8193);
//! let src = stream.alloc_zeros::<f32>(8191 * 8193).map_err(|e| e.to_string())?;
//! let mut dst = stream.alloc_zeros::<f32>(8191 * 8193).map_err(|e| e.to_string())?;
//! let tunings = autotune(|| transpose_first(&list, &src, &mut dst, &shape, None))?;
//! for t in &tunings {
//!     println!("{}: {} ({:?})", t.class, t.winner, t.times);
//! }
//! transpose_first(&list, &src, &mut dst, &shape, None)?; // runs the winner
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::{Error, Result};
use crate::kernel::KernelSource;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaStream};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

/// Timed rounds per candidate (after 2 warm-ups).
pub const ROUNDS: usize = 15;
/// Back-to-back runs of a candidate per round, between one pair of events.
pub const PER_ROUND: usize = 5;
/// How much faster than the untuned choice another kernel must be to win: 1%.
pub const MARGIN: f64 = 0.01;
const MAGIC: &str = "bankfree-tune 1";

/// What tuning one call measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    /// The class the winner is kept for (see the module docs), as text.
    pub class: String,
    /// The entry point kept: the fastest, or what the call ran untuned where that
    /// is within [`MARGIN`] of the fastest.
    pub winner: String,
    /// Each kernel that could run the call, with its median time in ms, fastest first.
    pub times: Vec<(String, f64)>,
}

thread_local! {
    static TUNING: RefCell<Option<Vec<Tuning>>> = const { RefCell::new(None) };
}

/// Runs `f` with tuning on for this thread: every `transpose_first` call inside it
/// (the attribute's functions make them) times the kernels that can run it, keeps
/// the fastest for its class and runs it. Returns what each call measured; calls
/// with only one kernel that can run them measure nothing.
///
/// Tuning synchronizes the stream (it reads CUDA events), so do it once, outside a
/// CUDA graph capture; the calls after it do not synchronize.
pub fn autotune(f: impl FnOnce() -> Result<()>) -> Result<Vec<Tuning>> {
    /// Puts the thread's tuning state back however `f` ends, a panic included.
    struct Restore(Option<Option<Vec<Tuning>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(before) = self.0.take() {
                TUNING.with(|t| t.replace(before));
            }
        }
    }
    let mut restore = Restore(Some(TUNING.with(|t| t.replace(Some(Vec::new())))));
    let result = f();
    let before = restore.0.take().unwrap_or_default();
    let got = TUNING.with(|t| t.replace(before)).unwrap_or_default();
    result.map(|()| got)
}

/// Whether this thread is inside [`autotune`].
pub(crate) fn tuning() -> bool {
    TUNING.with(|t| t.borrow().is_some())
}

/// Which kernels of a list fit and suit a call, and its size: what a winner is
/// kept for, with the device and the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Class {
    pub fit: u64,
    pub suit: u64,
    /// Bytes moved, rounded up to `2^size`.
    pub size: u8,
    /// The narrow side when it is at most 32, else 0.
    pub narrow: u8,
}

impl Class {
    pub fn new(fit: &[bool], suit: &[bool], bytes: u64, rows: u64, cols: u64) -> Class {
        let mask = |v: &[bool]| {
            v.iter()
                .take(64)
                .enumerate()
                .fold(0u64, |m, (i, &b)| m | (u64::from(b) << i))
        };
        let narrow = rows.min(cols);
        Class {
            fit: mask(fit),
            suit: mask(suit),
            size: (64 - bytes.max(1).saturating_sub(1).leading_zeros()) as u8,
            narrow: if narrow <= 32 { narrow as u8 } else { 0 },
        }
    }

    fn text(&self, n: usize) -> String {
        let bits = |m: u64| {
            // Lists longer than 64 kernels record the first 64 (see `Class::new`).
            (0..n.min(64))
                .map(|i| if m >> i & 1 == 1 { '1' } else { '0' })
                .collect::<String>()
        };
        let narrow = match self.narrow {
            0 => String::new(),
            n => format!(", narrow side {n}"),
        };
        format!(
            "fit {} suit {}, up to 2^{} bytes{narrow}",
            bits(self.fit),
            bits(self.suit),
            self.size
        )
    }
}

/// The class of a call as text: the device, bankfree, the list and the call.
fn class_text(device: &str, kernels: &[KernelSource], class: &Class) -> String {
    let entries: Vec<&str> = kernels.iter().map(|k| k.entry()).collect();
    format!(
        "{device}; bankfree {}; kernels {}; {}",
        env!("CARGO_PKG_VERSION"),
        entries.join(","),
        class.text(kernels.len())
    )
}

/// A device as the records name it: name, compute capability, driver version.
fn device_text(ctx: &Arc<CudaContext>) -> Result<String> {
    static DEVICES: OnceLock<RwLock<HashMap<usize, String>>> = OnceLock::new();
    let map = DEVICES.get_or_init(Default::default);
    let id = ctx.cu_ctx() as usize;
    if let Some(d) = map.read().ok().and_then(|m| m.get(&id).cloned()) {
        return Ok(d);
    }
    let name = ctx
        .name()
        .map_err(|e| Error::cuda(e, "reading the device name"))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| Error::cuda(e, "reading the compute capability"))?;
    let driver =
        crate::ffi::driver_version().map_err(|e| Error::cuda(e, "reading the driver version"))?;
    let d = format!(
        "{name} (sm_{major}{minor}), driver {}.{}",
        driver / 1000,
        driver % 1000 / 10
    );
    if let Ok(mut m) = map.write() {
        m.insert(id, d.clone());
    }
    Ok(d)
}

/// The in-memory records: (context, list address and length, class) to the
/// winner's entry (`None`: the folder was asked and has none). The entry, not its
/// index, so a list that reuses a dropped list's address cannot mislead it.
type Fast = (usize, usize, usize, Class);
type Memory = RwLock<HashMap<Fast, Option<Arc<str>>>>;
fn memory() -> &'static Memory {
    static M: OnceLock<Memory> = OnceLock::new();
    M.get_or_init(Default::default)
}

fn fast_key(stream: &CudaStream, kernels: &[KernelSource], class: Class) -> Fast {
    (
        stream.context().cu_ctx() as usize,
        kernels.as_ptr() as usize,
        kernels.len(),
        class,
    )
}

fn folder() -> Option<PathBuf> {
    crate::cache::disk().dir().map(|d| d.join("tune"))
}

/// The recorded winner of this class, if any (asks the cache folder once per class).
pub(crate) fn winner(stream: &CudaStream, kernels: &[KernelSource], class: Class) -> Option<usize> {
    let key = fast_key(stream, kernels, class);
    let position = |w: &str| kernels.iter().position(|k| k.entry() == w);
    if let Some(w) = memory().read().ok().and_then(|m| m.get(&key).cloned()) {
        return w.and_then(|w| position(&w));
    }
    let found: Option<Arc<str>> = device_text(stream.context()).ok().and_then(|device| {
        let text = class_text(&device, kernels, &class);
        Some(load(&folder()?, &text)?.into())
    });
    let at = found.as_deref().and_then(position);
    if let Ok(mut m) = memory().write() {
        m.insert(key, found);
    }
    at
}

/// Times the `n` candidates `run(0)` .. `run(n - 1)` interleaved on `stream` (see
/// the module docs); each one's median round, per run, in ms.
pub(crate) fn time_all(
    stream: &CudaStream,
    n: usize,
    mut run: impl FnMut(usize) -> Result<()>,
) -> Result<Vec<f64>> {
    let ev = |e| Error::cuda(e, "timing a candidate with CUDA events");
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let (a, b) = (
        stream.record_event(flags).map_err(ev)?,
        stream.record_event(flags).map_err(ev)?,
    );
    for i in 0..n {
        run(i)?;
        run(i)?;
    }
    let mut t = vec![Vec::with_capacity(ROUNDS); n];
    for _ in 0..ROUNDS {
        for (i, rounds) in t.iter_mut().enumerate() {
            a.record(stream).map_err(ev)?;
            for _ in 0..PER_ROUND {
                run(i)?;
            }
            b.record(stream).map_err(ev)?;
            rounds.push(f64::from(a.elapsed_ms(&b).map_err(ev)?) / PER_ROUND as f64);
        }
    }
    Ok(t.into_iter().map(|mut r| median(&mut r)).collect())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The winner among `times` (index in the list, ms): the fastest, unless `untuned`
/// (what the call runs without a record) is within [`MARGIN`] of it.
fn pick(times: &[(usize, f64)], untuned: Option<usize>) -> usize {
    let Some(&(best, fastest)) = times.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
        return 0;
    };
    match untuned.and_then(|u| times.iter().find(|t| t.0 == u)) {
        Some(&(u, ms)) if ms <= fastest * (1.0 + MARGIN) => u,
        _ => best,
    }
}

/// Keeps `times` (index in the list, ms) as this class's measurement: in memory,
/// in the cache folder and in the [`autotune`] report. Returns the winner's index
/// ([`pick`]; `untuned` is the kernel the call runs without a record).
pub(crate) fn record(
    stream: &CudaStream,
    kernels: &[KernelSource],
    class: Class,
    mut times: Vec<(usize, f64)>,
    untuned: Option<usize>,
) -> Result<usize> {
    times.sort_by(|a, b| a.1.total_cmp(&b.1));
    let best = pick(&times, untuned);
    let device = device_text(stream.context())?;
    let text = class_text(&device, kernels, &class);
    let named: Vec<(String, f64)> = times
        .iter()
        .map(|&(i, ms)| (kernels[i].entry().to_string(), ms))
        .collect();
    if let Some(dir) = folder() {
        if let Err(e) = save(&dir, &text, kernels[best].entry(), &named) {
            log::warn!(
                "bankfree: cannot keep the tuning in {} ({e}); it lasts for this process only",
                dir.display()
            );
        }
    }
    if let Ok(mut m) = memory().write() {
        m.insert(
            fast_key(stream, kernels, class),
            Some(kernels[best].entry().into()),
        );
    }
    TUNING.with(|t| {
        if let Some(v) = t.borrow_mut().as_mut() {
            v.push(Tuning {
                class: text,
                winner: kernels[best].entry().to_string(),
                times: named,
            });
        }
    });
    Ok(best)
}

fn path(dir: &Path, class: &str) -> PathBuf {
    let h: String = Sha256::digest(class.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("{h}.tune"))
}

/// Writes a record: the class, the winner and every candidate's time (to a
/// temporary name, then renamed: readers see all or nothing).
pub fn save(dir: &Path, class: &str, winner: &str, times: &[(String, f64)]) -> std::io::Result<()> {
    let mut text = format!("{MAGIC}\nclass: {class}\nwinner: {winner}\n");
    for (entry, ms) in times {
        text.push_str(&format!("{entry} {ms:.6} ms\n"));
    }
    std::fs::create_dir_all(dir)?;
    let dest = path(dir, class);
    let tmp = dest.with_extension(format!("{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, &dest));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// The winner recorded for `class` in `dir`; a missing, foreign or damaged record
/// reads as none.
pub fn load(dir: &Path, class: &str) -> Option<String> {
    let text = std::fs::read_to_string(path(dir, class)).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MAGIC || lines.next()?.strip_prefix("class: ")? != class {
        return None;
    }
    let winner = lines.next()?.strip_prefix("winner: ")?;
    (!winner.is_empty()).then(|| winner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damaged_ones_read_as_none() {
        let dir = std::env::temp_dir().join(format!("bankfree-tune-test-{}", std::process::id()));
        let class = "H100 (sm_90), driver 13.0; bankfree 0.1.0; kernels a,b; fit 11 suit 01, up to 2^28 bytes";
        let times = vec![("b".to_string(), 0.25), ("a".to_string(), 0.5)];
        save(&dir, class, "b", &times).expect("writable temp folder");
        assert_eq!(load(&dir, class).as_deref(), Some("b"));
        // Another class (another driver) has its own file: none yet.
        assert_eq!(load(&dir, &class.replace("13.0", "13.1")), None);
        // A file whose class line differs (a hash collision, a hand edit) is ignored.
        let p = path(&dir, class);
        let text = std::fs::read_to_string(&p).expect("written");
        std::fs::write(&p, text.replace("2^28", "2^29")).expect("rewrite");
        assert_eq!(load(&dir, class), None);
        // So is a truncated one.
        std::fs::write(&p, MAGIC).expect("rewrite");
        assert_eq!(load(&dir, class), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_untuned_choice_keeps_the_call_unless_another_is_clearly_faster() {
        let times = [(2, 1.000), (0, 1.008), (1, 1.2)];
        assert_eq!(pick(&times, Some(0)), 0); // 0.8% slower: within the margin
        assert_eq!(pick(&times, Some(1)), 2); // 20% slower: the fastest wins
        assert_eq!(pick(&times, None), 2);
        assert_eq!(pick(&times, Some(7)), 2); // not a candidate
        assert_eq!(pick(&[(3, 0.5), (1, 0.504)], Some(1)), 1);
        assert_eq!(pick(&[(3, 0.5), (1, 0.506)], Some(1)), 3); // 1.2%
        assert_eq!(pick(&[(3, 0.5), (1, 0.506)], Some(3)), 3);
    }

    #[test]
    fn medians_take_the_middle_round() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 3.0);
    }

    #[test]
    fn a_panic_inside_autotune_leaves_tuning_off() {
        let caught = std::panic::catch_unwind(|| autotune(|| panic!("the user's closure")));
        assert!(caught.is_err());
        assert!(!tuning(), "the thread is not left tuning");
        assert_eq!(autotune(|| Ok(())), Ok(Vec::new()));
        assert!(!tuning());
    }

    #[test]
    fn lists_of_more_than_64_kernels_have_a_class() {
        let fit = vec![true; 70];
        let c = Class::new(&fit, &fit, 1 << 20, 100, 100);
        assert_eq!(c.fit, u64::MAX);
        assert!(c.text(70).starts_with(&format!("fit {}", "1".repeat(64))));
    }

    #[test]
    fn classes_name_what_fits_and_the_size() {
        let c = Class::new(
            &[true, false, true],
            &[false, false, true],
            3 << 20,
            3,
            1 << 18,
        );
        assert_eq!(c.size, 22);
        assert_eq!(c.narrow, 3);
        assert_eq!(
            c.text(3),
            "fit 101 suit 001, up to 2^22 bytes, narrow side 3"
        );
        let d = Class::new(&[true], &[true], 1 << 20, 1024, 256);
        assert_eq!((d.size, d.narrow), (20, 0));
        assert_eq!(d.text(1), "fit 1 suit 1, up to 2^20 bytes");
    }
}
