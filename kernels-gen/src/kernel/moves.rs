//! The kernel's data movement as data: a [`Move`] copies one [`Place`] to another
//! under a guard, for every thread and every iteration of its loops.

use crate::ir::expr::Expr;
use crate::ir::guard::Guard;
use serde::Serialize;

/// Which memory a [`Place`] is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mem {
    Src,
    Dst,
    Shared,
}

impl Mem {
    /// The C array name.
    pub fn c_name(self) -> &'static str {
        match self {
            Mem::Src => "src",
            Mem::Dst => "dst",
            Mem::Shared => "tile",
        }
    }
}

/// One array element: `mem[index]`, the index in units.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub mem: Mem,
    pub index: Expr,
}

impl Place {
    /// `mem[index]` in C.
    pub fn c(&self) -> String {
        format!("{}[{}]", self.mem.c_name(), self.index.c())
    }
}

/// `if (guard) to = from;`, run for every thread, `j` and `k`.
#[derive(Clone, Debug, PartialEq)]
pub struct Move {
    /// Named values declared inside the `j` loop, in order.
    pub lets: Vec<Expr>,
    pub guard: Guard,
    pub from: Place,
    pub to: Place,
    /// Read all `words` units first, transpose the `vec x vec` block they hold in
    /// registers (unit `a`'s element `c` becomes unit `c`'s element `a`), then write.
    pub transpose: bool,
    /// Trips of the `j` loop (`Var::J` runs over `0..iters`).
    pub iters: u32,
    /// A vector move (`small`, `strip` and packed `tall` kernels), where it has one.
    pub pack: Option<Pack>,
}

/// How a move's `words` units (`Var::K` over them) move as one vector: where
/// `full` holds, they are stored to `to` at once (`whole`; `to` is then unit `k`
/// of the vector, the first one vector-aligned) or each to its own `to`, after
/// being loaded at once from `from` (`load`; the same of `from`) or gathered
/// unit by unit; where `full` does not hold, each unit moves alone where the
/// move's guard, which may depend on `Var::K`, holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Pack {
    pub full: Guard,
    pub load: bool,
    pub whole: bool,
}

/// A kernel's body for the tiles that lie wholly inside the matrix: where
/// `guard` (tile-level values only) holds, the kernel runs its moves with each
/// move's guard replaced by `kept` (the checks that do not follow from
/// `guard`, such as a thread's row of a deeper shared tile), one per move.
/// The bounds checks left out are what makes it faster: the `skew` tile's
/// reads and writes each test their row and column against the matrix. The
/// simulator fails a tile where `guard` holds and a move's kept guard differs
/// from its full one.
#[derive(Clone, Debug, PartialEq)]
pub struct Interior {
    pub guard: Guard,
    pub kept: Vec<Guard>,
}

impl Interior {
    /// Move `mv` as an interior tile runs it: its `i`th kept guard in place
    /// of its guard.
    pub fn move_of(&self, i: usize, mv: &Move) -> Move {
        Move {
            guard: self.kept[i].clone(),
            ..mv.clone()
        }
    }
}
