//! `bankfree-gen`: print kernels, their bank maps, any access pattern's cost, and
//! occupancy. Every error is a message and exit status 2.

use bankfree_gen::check::analysis::Instruction;
use bankfree_gen::hw::bank::{self, text_map};
use bankfree_gen::hw::occupancy::{occupancy, Arch};
use bankfree_gen::ir::expr::{Env, Var};
use bankfree_gen::ir::parse::parse_index;
use bankfree_gen::kernel::order::TileOrder;
use bankfree_gen::render::svg;
use bankfree_gen::{emit, Form, Kernel, Model, Strategy, TransposeSpec, ELEM_SIZES};
use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

mod permute;

#[derive(Parser)]
#[command(
    name = "bankfree-gen",
    version,
    about = "Bank-conflict-free tiled transpose kernels: generate, analyze, explain"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the CUDA C of a spec.
    Gen(SpecArgs),
    /// Show every shared instruction of a spec: wavefronts vs ideal and the bank map.
    Banks {
        #[command(flatten)]
        spec: SpecArgs,
        /// Bank model: hopper (32 banks, H100) or legacy16 (16 banks, CUDA 1.x).
        #[arg(long, default_value = "hopper")]
        model: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Also draw the worst case of each instruction as an SVG picture.
        #[arg(long, value_name = "FILE")]
        svg: Option<std::path::PathBuf>,
    },
    /// Analyze any access pattern: each lane's element index as an expression over `lane`.
    Access {
        /// Bytes per access: 1, 2, 4, 8 or 16.
        #[arg(long)]
        elem_bytes: u32,
        /// Element index of each lane, e.g. `lane*33` or `(lane&1)*16 + lane/2`.
        #[arg(long, allow_hyphen_values = true)]
        index: String,
        /// Bank model: hopper or legacy16.
        #[arg(long, default_value = "hopper")]
        model: String,
        /// Active lanes 0..N (1 to 32).
        #[arg(long, default_value_t = 32)]
        lanes: u32,
        #[arg(long)]
        json: bool,
    },
    /// Write every buildable spec of the grid (tiles x block_rows x element sizes x
    /// strategies) as `DIR/<entry>.cu`, with `DIR/manifest.json` holding each spec
    /// and its analysis.
    Grid {
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
        /// Only the default block_rows of each tile.
        #[arg(long)]
        default_rows: bool,
    },
    /// Print the table of kernels proven ahead of time (their layouts and
    /// verdicts), computed from scratch: redirect it to
    /// `kernels-gen/src/check/proven.in` after changing a kernel or a default.
    Proven,
    /// Plan an N-d permute: the merged axes, the kernel, its launch and its bank
    /// verdict (`gen` prints the kernel's CUDA C).
    Permute(permute::PermuteArgs),
    /// Resident blocks and warps per SM.
    Occupancy {
        /// sm_10 (G80), sm_70, sm_75, sm_80, sm_86, sm_89 or sm_90.
        #[arg(long)]
        arch: String,
        #[arg(long)]
        threads: u32,
        #[arg(long, default_value_t = 0)]
        smem_bytes: u32,
        #[arg(long, default_value_t = 32)]
        regs: u32,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct SpecArgs {
    /// Tile side: 8, 16, 32 or 64.
    #[arg(long, default_value_t = 32)]
    tile: u32,
    /// naive, none, pad, pad(N), swizzle, swizzle(xor) or swizzle(rotate).
    #[arg(long, default_value = "swizzle")]
    strategy: String,
    #[arg(long, default_value_t = 4, help = format!("Element size: {ELEM_SIZES}"))]
    elem_bytes: u32,
    /// Thread rows per block (default: 8, or the tile if smaller).
    #[arg(long)]
    block_rows: Option<u32>,
    /// Side of the element block each thread moves per step as vectors: 1, 2 or 4
    /// (the tile is then `tile * vec` elements square).
    #[arg(long, default_value_t = 1)]
    vec: u32,
    /// What a block moves: tile, skew (tiles whose writes start on 32-byte
    /// sectors), tall (at most 32 columns), wide (at most 32 rows), small (dense
    /// batches of small matrices as one run), strip (matrices of at most 32 rows
    /// gathered), copy (no transpose), planar (at most 8 columns of 1- or 2-byte
    /// elements, transposed in registers; these four take `--strategy naive`),
    /// realign (1- or 2-byte elements of any shape and pointer, as words), thin
    /// (2 to 40 columns of 1- or 2-byte elements stored as one run, an entry
    /// point per width; `--strategy pad`), squat (2 to 32 rows of 1- or
    /// 2-byte elements into a destination stored as one run, an entry point per
    /// height; `--strategy pad`), interleave (at most 8 rows of 1- or 2-byte
    /// elements whose rows start on 16 bytes, into a destination stored as one
    /// run, an entry point per height; `--strategy pad`) or wordvec (12-, 20-,
    /// 24-, ... 64-byte elements
    /// whose rows start on 16 bytes, rows moved as 16-byte vectors of units;
    /// `--strategy pad`).
    #[arg(long, default_value = "tile")]
    form: String,
    /// A `thin` kernel's one width (a `squat` or `interleave` kernel's one
    /// height): only its
    /// entry point, as the runtime launches it for sources of that many columns
    /// (rows).
    #[arg(long)]
    width: Option<u32>,
    /// A `thin` kernel that splits each lane's column words between two warps,
    /// its tiles half as many rows (widths from 21 columns of 1-byte elements,
    /// 19 of 2-byte ones).
    #[arg(long)]
    split: bool,
    /// The order the blocks take the tiles in: rows (along the rows of tiles) or
    /// columns (down them; `tile`, `skew`, `realign` and `wordvec` forms only).
    #[arg(long, default_value = "rows")]
    order: String,
}

impl SpecArgs {
    fn kernel(&self) -> Result<Kernel, String> {
        let strategy: Strategy = self.strategy.parse().map_err(|e| format!("{e}"))?;
        let mut spec =
            TransposeSpec::new(self.tile, self.elem_bytes, strategy).map_err(|e| e.to_string())?;
        if let Some(r) = self.block_rows {
            spec = spec.with_block_rows(r).map_err(|e| e.to_string())?;
        }
        if self.vec != 1 {
            spec = spec.with_vec(self.vec).map_err(|e| e.to_string())?;
        }
        let form: Form = self.form.parse().map_err(|e| format!("{e}"))?;
        spec = spec.with_form(form).map_err(|e| e.to_string())?;
        if self.split {
            spec = spec.with_split().map_err(|e| e.to_string())?;
        }
        let order: TileOrder = self.order.parse()?;
        let k = Kernel::build(spec)
            .and_then(|k| k.with_order(order))
            .map_err(|e| e.to_string())?;
        match self.width {
            Some(cols) => k.with_width(cols).map_err(|e| e.to_string()),
            None => Ok(k),
        }
    }
}

fn model(s: &str) -> Result<Model, String> {
    s.parse::<Model>().map_err(|e| e.to_string())
}

fn lanes_json(acc: &bank::Access) -> serde_json::Value {
    json!(acc
        .lanes
        .iter()
        .map(|h| json!({"lane": h.lane, "addr": h.addr, "bank": h.bank}))
        .collect::<Vec<_>>())
}

/// One instruction's analysis; `lanes` adds the worst case's lane map.
fn instruction_json(i: &Instruction, lanes: bool) -> serde_json::Value {
    let mut v = json!({
        "kind": i.kind,
        "access": i.access,
        "width": i.width,
        "wavefronts": i.wavefronts,
        "ideal": i.ideal,
        "mean_wavefronts": i.mean_wavefronts(),
        "executions": i.executions,
        "total_wavefronts": i.total_wavefronts,
        "total_ideal": i.total_ideal,
        "worst_at": i.worst_at,
    });
    if lanes {
        v["lanes"] = lanes_json(&i.worst);
    }
    v
}

fn banks(
    o: &mut String,
    spec: &SpecArgs,
    model_name: &str,
    as_json: bool,
    svg_path: Option<&std::path::Path>,
) -> Result<(), String> {
    let k = spec.kernel()?;
    let m = model(model_name)?;
    let r = k.analyze(m);
    if let Some(path) = svg_path {
        let panels: Vec<(String, bank::Access)> = r
            .instructions
            .iter()
            .map(|i| {
                (
                    format!(
                        "{} {} (warp {}, j {})",
                        i.kind, i.access, i.worst_at.warp, i.worst_at.j
                    ),
                    i.worst.clone(),
                )
            })
            .collect();
        std::fs::write(path, svg::bank_map(m, &panels))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if as_json {
        let v = json!({
            "spec": k.spec(),
            "entry": k.entry_name(),
            "layout": k.layout().to_string(),
            "shared_bytes": k.shared_bytes(),
            "model": m,
            "conflict_free": r.conflict_free,
            "verdict": r.verdict(),
            "instructions": r.instructions.iter().map(|i| instruction_json(i, true)).collect::<Vec<_>>(),
        });
        let _ = writeln!(o, "{v:#}");
        return Ok(());
    }
    let _ = writeln!(o, "{}: {}", k.entry_name(), k.describe());
    let _ = writeln!(o, "{} model: {}", m, r.verdict());
    for i in &r.instructions {
        let _ = writeln!(o,
            "\nshared {} {} ({}-byte): worst {} wavefronts, ideal {} (warp {}, j {}, k {}); mean {:.2} over {} executions per block",
            i.kind, i.access, i.width, i.wavefronts, i.ideal, i.worst_at.warp, i.worst_at.j, i.worst_at.k, i.mean_wavefronts(), i.executions
        );
        let _ = write!(o, "{}", text_map(m, &i.worst));
    }
    Ok(())
}

fn access(
    o: &mut String,
    elem_bytes: u32,
    index: &str,
    model_name: &str,
    lanes: u32,
    as_json: bool,
) -> Result<(), String> {
    let m = model(model_name)?;
    if !(1..=32).contains(&lanes) {
        return Err(format!("--lanes {lanes}: a warp has 1 to 32 lanes"));
    }
    let e = parse_index(index).map_err(|e| format!("--index `{index}`: {e}"))?;
    let mut idx = Vec::new();
    let mut addrs = vec![None; 32];
    for (lane, slot) in addrs.iter_mut().enumerate().take(lanes as usize) {
        let mut env = Env::default();
        env.set(Var::Lane, lane as i64);
        let i = e
            .eval(&env)
            .map_err(|err| format!("--index `{index}` at lane {lane}: {err}"))?;
        let addr = u64::try_from(i)
            .ok()
            .and_then(|i| i.checked_mul(u64::from(elem_bytes)))
            .ok_or_else(|| format!("--index `{index}` gives lane {lane} element {i}: element indices must be 0 or more (and their byte address must fit in 64 bits)"))?;
        idx.push(i);
        *slot = Some(addr);
    }
    let acc = bank::analyze(m, elem_bytes, &addrs)
        .map_err(|e| format!("--elem-bytes {elem_bytes}: {e}"))?;
    if as_json {
        let lanes_v: Vec<_> = acc
            .lanes
            .iter()
            .zip(&idx)
            .map(|(h, i)| json!({"lane": h.lane, "index": i, "addr": h.addr, "bank": h.bank}))
            .collect();
        let v = json!({
            "index": e.c(),
            "elem_bytes": elem_bytes,
            "model": m,
            "wavefronts": acc.wavefronts,
            "ideal": acc.ideal,
            "conflict_free": acc.conflict_free(),
            "lanes": lanes_v,
        });
        let _ = writeln!(o, "{v:#}");
        return Ok(());
    }
    let _ = writeln!(
        o,
        "pattern {} ({elem_bytes}-byte accesses, {m} model, lanes 0-{})",
        e.c(),
        lanes - 1
    );
    let _ = writeln!(o, "lane  element  byte addr  bank");
    for (h, i) in acc.lanes.iter().zip(&idx) {
        let _ = writeln!(o, "{:>4} {:>8} {:>10} {:>5}", h.lane, i, h.addr, h.bank);
    }
    let status = if acc.conflict_free() {
        "conflict-free".to_string()
    } else {
        format!(
            "{:.2}-way conflict",
            f64::from(acc.wavefronts) / f64::from(acc.ideal)
        )
    };
    let _ = writeln!(
        o,
        "wavefronts {} (ideal {}): {status}",
        acc.wavefronts, acc.ideal
    );
    let _ = write!(o, "{}", text_map(m, &acc));
    Ok(())
}

fn grid(o: &mut String, out: &std::path::Path, default_rows: bool) -> Result<(), String> {
    use bankfree_gen::kernel::geometry::default_block_rows;
    use bankfree_gen::kernel::grid::{grid, ALL_STRATEGIES};
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut manifest = Vec::new();
    let mut refused = 0;
    for spec in grid(&ALL_STRATEGIES) {
        if default_rows && spec.geometry.block_rows != default_block_rows(spec.geometry.tile) {
            continue;
        }
        let Ok(k) = Kernel::build(spec) else {
            refused += 1;
            continue;
        };
        let r = k.analyze(Model::Hopper);
        let file = format!("{}.cu", k.entry_name());
        let path = out.join(&file);
        std::fs::write(&path, emit(&k))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        manifest.push(json!({
            "file": file,
            "entry": k.entry_name(),
            "spec": k.spec(),
            "strategy": k.spec().strategy.to_string(),
            "layout": k.layout().to_string(),
            "shared_bytes": k.shared_bytes(),
            "conflict_free": r.conflict_free,
            "instructions": r.instructions.iter().map(|i| instruction_json(i, false)).collect::<Vec<_>>(),
        }));
    }
    let path = out.join("manifest.json");
    std::fs::write(&path, format!("{:#}", json!(manifest)))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let _ = writeln!(
        o,
        "{} kernels written to {} ({} specs refused by the generator)",
        manifest.len(),
        out.display(),
        refused
    );
    Ok(())
}

fn occ(
    out: &mut String,
    arch: &str,
    threads: u32,
    smem: u32,
    regs: u32,
    as_json: bool,
) -> Result<(), String> {
    let a = Arch::parse(arch).map_err(|e| e.to_string())?;
    let o = occupancy(a, threads, smem, regs).map_err(|e| e.to_string())?;
    if as_json {
        let _ = writeln!(out, "{:#}", json!(o));
        return Ok(());
    }
    let _ = writeln!(out,
        "{}: {} threads, {} bytes shared, {} registers per thread -> {} blocks, {} of {} warps per SM ({:.0}% occupancy), limited by {:?}",
        o.arch,
        threads,
        smem,
        regs,
        o.blocks,
        o.warps,
        o.max_warps,
        o.occupancy * 100.0,
        o.limiter
    );
    let show = |n: u32| {
        if n == u32::MAX {
            "unlimited".to_string()
        } else {
            n.to_string()
        }
    };
    let _ =
        writeln!(out,
        "blocks allowed by threads {}, by the block limit {}, by registers {}, by shared memory {}",
        show(o.by_threads),
        show(o.by_blocks),
        show(o.by_registers),
        show(o.by_shared)
    );
    Ok(())
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let mut o = String::new();
    let result = match &cli.cmd {
        Cmd::Gen(spec) => spec.kernel().map(|k| o.push_str(&emit(&k))),
        Cmd::Grid { out, default_rows } => grid(&mut o, out, *default_rows),
        Cmd::Proven => {
            o.push_str(&bankfree_gen::select::table::render());
            Ok(())
        }
        Cmd::Banks {
            spec,
            model,
            json,
            svg,
        } => banks(&mut o, spec, model, *json, svg.as_deref()),
        Cmd::Access {
            elem_bytes,
            index,
            model,
            lanes,
            json,
        } => access(&mut o, *elem_bytes, index, model, *lanes, *json),
        Cmd::Permute(a) => permute::run(&mut o, a),
        Cmd::Occupancy {
            arch,
            threads,
            smem_bytes,
            regs,
            json,
        } => occ(&mut o, arch, *threads, *smem_bytes, *regs, *json),
    };
    match result {
        Ok(()) => {
            // A closed pipe (`| head`) is not an error worth a message.
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(o.as_bytes()).and_then(|()| stdout.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("error: cannot write the output: {e}");
                    ExitCode::from(2)
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
