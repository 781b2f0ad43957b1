//! The register transpose of the `realign`, `thin` and `squat` forms: the
//! `__byte_perm` steps that turn a block of rows' words into its columns' words,
//! which the emitter prints and the simulator runs.

/// One `__byte_perm(r[a], r[b], sel)` into `r[out]` of the register transpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    pub out: usize,
    pub a: usize,
    pub b: usize,
    pub sel: u32,
}

const fn perm(out: usize, a: usize, b: usize, sel: u32) -> Perm {
    Perm { out, a, b, sel }
}

/// The register transpose of one 32-bit word position `q` of a block of `vec`
/// rows: registers `0..vec` hold the rows' words (row `k`'s word `q`: its
/// columns `vec * q ..`), and the last `vec` registers end up holding the
/// columns' words (column `vec * q + m`'s word: its `vec` rows).
pub fn network(vec: u32) -> &'static [Perm] {
    const FOUR: [Perm; 8] = [
        perm(4, 0, 1, 0x5140),
        perm(5, 0, 1, 0x7362),
        perm(6, 2, 3, 0x5140),
        perm(7, 2, 3, 0x7362),
        perm(8, 4, 6, 0x5410),
        perm(9, 4, 6, 0x7632),
        perm(10, 5, 7, 0x5410),
        perm(11, 5, 7, 0x7632),
    ];
    const TWO: [Perm; 2] = [perm(2, 0, 1, 0x5410), perm(3, 0, 1, 0x7632)];
    if vec == 4 {
        &FOUR
    } else {
        &TWO
    }
}

/// Registers [`network`] uses: its inputs, temporaries and outputs.
pub fn network_regs(vec: u32) -> usize {
    network(vec).iter().map(|p| p.out + 1).max().unwrap_or(0)
}
