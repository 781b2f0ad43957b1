//! Resident blocks and warps per SM from threads, shared memory and registers.
//!
//! Limits are NVIDIA's published ones (CUDA C++ Programming Guide, "Technical
//! Specifications per Compute Capability", and the occupancy calculator):
//! registers are allocated per warp in units of 256, shared memory in units of
//! 128 bytes plus a 1 KB per-block reservation on sm_80 and later, with the
//! largest shared-memory carveout. `sm_10` is the G80 of the classic CUDA write-ups (8,192
//! registers, 768 threads and 8 blocks per SM, registers allocated per block).
//!
//! ```
//! use bankfree_gen::hw::occupancy::{occupancy, Arch};
//! let a = Arch::parse("sm_75").unwrap();
//! // 16.25 KB of shared memory per block fits 3 blocks, 16.0 KB fits 4.
//! assert_eq!(occupancy(a, 256, 16640, 32).unwrap().blocks, 3);
//! assert_eq!(occupancy(a, 256, 16384, 32).unwrap().blocks, 4);
//! ```

use serde::Serialize;

/// An architecture's per-SM limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Arch {
    pub name: &'static str,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub max_registers_per_thread: u32,
    /// Largest shared-memory carveout per SM, bytes.
    pub shared_per_sm: u32,
    /// Most shared memory one block may use (with the opt-in), bytes.
    pub max_shared_per_block: u32,
    /// Shared memory the system reserves per block, bytes.
    pub reserved_shared_per_block: u32,
    /// Registers are allocated per block (G80) rather than per warp.
    pub per_block_registers: bool,
}

const KB: u32 = 1024;

/// The supported architectures.
pub const ARCHS: [Arch; 7] = [
    Arch {
        name: "sm_10",
        max_threads_per_sm: 768,
        max_blocks_per_sm: 8,
        max_threads_per_block: 512,
        registers_per_sm: 8192,
        max_registers_per_thread: 124,
        shared_per_sm: 16 * KB,
        max_shared_per_block: 16 * KB,
        reserved_shared_per_block: 0,
        per_block_registers: true,
    },
    Arch {
        name: "sm_70",
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        shared_per_sm: 96 * KB,
        max_shared_per_block: 96 * KB,
        reserved_shared_per_block: 0,
        per_block_registers: false,
    },
    Arch {
        name: "sm_75",
        max_threads_per_sm: 1024,
        max_blocks_per_sm: 16,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        shared_per_sm: 64 * KB,
        max_shared_per_block: 64 * KB,
        reserved_shared_per_block: 0,
        per_block_registers: false,
    },
    Arch {
        name: "sm_80",
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        shared_per_sm: 164 * KB,
        max_shared_per_block: 163 * KB,
        reserved_shared_per_block: KB,
        per_block_registers: false,
    },
    Arch {
        name: "sm_86",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 16,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        shared_per_sm: 100 * KB,
        max_shared_per_block: 99 * KB,
        reserved_shared_per_block: KB,
        per_block_registers: false,
    },
    Arch {
        name: "sm_89",
        max_threads_per_sm: 1536,
        max_blocks_per_sm: 24,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        shared_per_sm: 100 * KB,
        max_shared_per_block: 99 * KB,
        reserved_shared_per_block: KB,
        per_block_registers: false,
    },
    Arch {
        name: "sm_90",
        max_threads_per_sm: 2048,
        max_blocks_per_sm: 32,
        max_threads_per_block: 1024,
        registers_per_sm: 65536,
        max_registers_per_thread: 255,
        shared_per_sm: 228 * KB,
        max_shared_per_block: 227 * KB,
        reserved_shared_per_block: KB,
        per_block_registers: false,
    },
];

/// What an occupancy question got wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OccupancyError {
    #[error(
        "unknown architecture `{0}`; known: sm_10 (G80), sm_70, sm_75, sm_80, sm_86, sm_89, sm_90"
    )]
    Arch(String),
    #[error("{threads} threads per block: {arch} allows 1 to {max}")]
    Threads {
        arch: &'static str,
        threads: u32,
        max: u32,
    },
    #[error("{bytes} bytes of shared memory per block: {arch} allows at most {max}")]
    Shared {
        arch: &'static str,
        bytes: u32,
        max: u32,
    },
    #[error("{regs} registers per thread: {arch} allows at most {max}")]
    Registers {
        arch: &'static str,
        regs: u32,
        max: u32,
    },
}

impl Arch {
    /// Looks an architecture up by name (`sm_90`, `90`, `9.0`).
    pub fn parse(name: &str) -> Result<Arch, OccupancyError> {
        let digits: String = name.chars().filter(char::is_ascii_digit).collect();
        ARCHS
            .iter()
            .find(|a| a.name == name || a.name[3..] == digits)
            .copied()
            .ok_or_else(|| OccupancyError::Arch(name.into()))
    }
}

/// Which resource stops more blocks from fitting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    Threads,
    Blocks,
    Registers,
    SharedMemory,
}

/// Resident blocks and warps per SM.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Occupancy {
    pub arch: &'static str,
    pub blocks: u32,
    pub warps: u32,
    pub max_warps: u32,
    /// `warps / max_warps`.
    pub occupancy: f64,
    pub limiter: Limiter,
    /// Blocks each resource alone would allow.
    pub by_threads: u32,
    pub by_blocks: u32,
    pub by_registers: u32,
    pub by_shared: u32,
}

/// Blocks per SM for `threads` threads, `shared` bytes and `regs` registers per thread.
pub fn occupancy(
    arch: Arch,
    threads: u32,
    shared: u32,
    regs: u32,
) -> Result<Occupancy, OccupancyError> {
    if threads == 0 || threads > arch.max_threads_per_block {
        return Err(OccupancyError::Threads {
            arch: arch.name,
            threads,
            max: arch.max_threads_per_block,
        });
    }
    if shared > arch.max_shared_per_block {
        return Err(OccupancyError::Shared {
            arch: arch.name,
            bytes: shared,
            max: arch.max_shared_per_block,
        });
    }
    if regs > arch.max_registers_per_thread {
        return Err(OccupancyError::Registers {
            arch: arch.name,
            regs,
            max: arch.max_registers_per_thread,
        });
    }
    let warps_per_block = threads.div_ceil(32);
    let by_threads = arch.max_threads_per_sm / (warps_per_block * 32);
    let by_blocks = arch.max_blocks_per_sm;
    let by_registers = if regs == 0 {
        u32::MAX
    } else if arch.per_block_registers {
        arch.registers_per_sm / (threads * regs).next_multiple_of(256)
    } else {
        let per_warp = (regs * 32).next_multiple_of(256);
        (arch.registers_per_sm / per_warp) / warps_per_block
    };
    let per_block_shared = shared.next_multiple_of(128) + arch.reserved_shared_per_block;
    let by_shared = if shared == 0 {
        u32::MAX
    } else {
        arch.shared_per_sm / per_block_shared
    };
    let candidates = [
        (by_threads, Limiter::Threads),
        (by_blocks, Limiter::Blocks),
        (by_registers, Limiter::Registers),
        (by_shared, Limiter::SharedMemory),
    ];
    let (blocks, limiter) = candidates
        .iter()
        .copied()
        .min_by_key(|(n, _)| *n)
        .unwrap_or((0, Limiter::Threads));
    let max_warps = arch.max_threads_per_sm / 32;
    let warps = blocks * warps_per_block;
    Ok(Occupancy {
        arch: arch.name,
        blocks,
        warps,
        max_warps,
        occupancy: f64::from(warps) / f64::from(max_warps),
        limiter,
        by_threads,
        by_blocks,
        by_registers,
        by_shared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g80_register_example() {
        let g80 = Arch::parse("sm_10").expect("known");
        let ten = occupancy(g80, 256, 0, 10).expect("valid");
        assert_eq!(
            (ten.blocks, ten.warps, ten.limiter),
            (3, 24, Limiter::Threads)
        );
        let eleven = occupancy(g80, 256, 0, 11).expect("valid");
        assert_eq!((eleven.blocks, eleven.limiter), (2, Limiter::Registers));
    }

    #[test]
    fn shared_memory_example() {
        let a = Arch::parse("sm_75").expect("known");
        let padded = occupancy(a, 256, 16640, 16).expect("valid");
        assert_eq!((padded.blocks, padded.limiter), (3, Limiter::SharedMemory));
        let swizzled = occupancy(a, 256, 16384, 16).expect("valid");
        assert_eq!(swizzled.blocks, 4);
    }

    #[test]
    fn hopper_numbers() {
        let a = Arch::parse("sm_90").expect("known");
        let o = occupancy(a, 256, 4224, 32).expect("valid");
        assert_eq!((o.blocks, o.warps, o.occupancy), (8, 64, 1.0));
        let big = occupancy(a, 1024, 100 * 1024, 32).expect("valid");
        assert_eq!(big.blocks, 2);
        assert_eq!(Arch::parse("9.0").map(|a| a.name), Ok("sm_90"));
    }

    #[test]
    fn bad_input_is_an_error() {
        let a = Arch::parse("sm_90").expect("known");
        assert!(occupancy(a, 0, 0, 32).is_err());
        assert!(occupancy(a, 2048, 0, 32).is_err());
        assert!(occupancy(a, 256, 300_000, 32).is_err());
        assert!(occupancy(a, 256, 0, 300).is_err());
        assert!(Arch::parse("sm_99").is_err());
        assert!(Arch::parse("").is_err());
    }
}
