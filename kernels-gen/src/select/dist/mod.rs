//! A distributed transpose's plan: what every rank packs, exchanges and places
//! when a row-sharded `rows x cols` matrix becomes its transpose, row-sharded the
//! same way.
//!
//! Rank `p` holds source rows `R_p .. R_p + rows[p]` (row-major, `cols` wide) and
//! gets result rows `C_p .. C_p + cols[p]` (row-major, `rows` wide). The source
//! block of `p`'s rows and `q`'s columns, transposed, is `q`'s result at columns
//! `R_p ..`:
//! * `p == q`: a local transpose straight into place, in pieces spread over the
//!   steps ([`Step::own`]; [`Plan::own`] where there are no steps), in the
//!   kernels' time between exchanges;
//! * `p != q`: the block goes in pieces, one per step ([`Plan::step`]): `p`
//!   transposes the piece into its send buffer (contiguous), the exchange carries
//!   it to `q`'s receive buffer, and `q` copies it into place at its pitch.
//!
//! Where every GPU can write every other's memory and one process drives them
//! all, no exchange is needed: each block goes in one move, [`Plan::block`],
//! straight from its source into its rank's result (the runtime's peer route).
//!
//! The buffers have two slots each and steps alternate between them, so a step's
//! exchange overlaps the packing of the next step and the placing of the previous
//! one. Every rank derives the same plan from the same [`Layout`]: the sends from
//! `p` to `q` and the receives of `q` from `p` pair up in order.
//!
//! ```
//! use bankfree_gen::select::dist::{Layout, Plan};
//! // 10 x 6 over 3 ranks: rows 4, 3, 3; result rows (source columns) 2, 2, 2.
//! let layout = Layout::even(10, 6, 3)?;
//! let plan = Plan::new(&layout, 4, 1 << 20)?;
//! assert_eq!(plan.steps(), 1);                        // every piece fits one step
//! let step = plan.step(0, 0);
//! assert_eq!(step.sends.len(), 2);                    // to ranks 1 and 2
//! assert_eq!((step.sends[0].peer, step.sends[0].len), (1, 4 * 2));
//! # Ok::<(), bankfree_gen::select::dist::DistError>(())
//! ```

/// The most a full step of the rank that sends most sends, summed over its
/// peers: it bounds the exchange buffers (two slots each for sending and
/// receiving, so four times this per rank at most).
pub const STEP_BYTES: u64 = 1 << 30;

/// The most the first and the last step send: the pipeline's fill (the first
/// pack, before any exchange) and drain (the last place, after the last one).
/// Each step costs the exchange a start and an end, about 0.1 ms on NVLink
/// between two H100s or H200s, so a plan takes the fewest steps these two
/// bounds allow.
pub const FILL_BYTES: u64 = 128 << 20;

/// Buffer offsets in the slots start on this many bytes (vector kernels' loads and
/// stores want aligned rows).
const SLOT_ALIGN: u64 = 256;

mod layout;
mod moves;

pub use layout::{DistError, Layout, MAX_RANKS};
pub use moves::{Buffer, Move, Region, Step, Transfer};

/// The plan of a layout for one element size and step size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    layout: Layout,
    steps: usize,
    /// `cut[k]`: the weights of the steps before `k`; `cut[steps]` their sum.
    cut: Vec<u64>,
    align: u64,
}

impl Plan {
    /// Plans `layout` for `elem_bytes`-byte elements, a full step sending at most
    /// `step_bytes` ([`STEP_BYTES`] is the default), the first and the last at
    /// most [`FILL_BYTES`].
    pub fn new(layout: &Layout, elem_bytes: u64, step_bytes: u64) -> Result<Plan, DistError> {
        if elem_bytes == 0 {
            return Err(DistError::ElemBytes);
        }
        let p = layout.ranks();
        // The most any rank sends, in elements, and what a full step sends.
        let most = (0..p)
            .map(|a| layout.rows_of(a) * (layout.cols() - layout.cols_of(a)))
            .max()
            .unwrap_or(0);
        // In weight units (a full step weighs RAMP, the first and last 1).
        let units = |bytes: u64, per: u64| {
            (u128::from(most) * u128::from(per)).div_ceil(u128::from((bytes / elem_bytes).max(1)))
        };
        let need = units(step_bytes, RAMP).max(units(FILL_BYTES, 1));
        let mut cut = vec![0u64];
        if most > 0 {
            let steps = (1..6)
                .find(|&s| u128::from(ramp_sum(s)) >= need)
                .unwrap_or_else(|| 6 + (need.saturating_sub(14)).div_ceil(8) as usize)
                .min(MAX_STEPS);
            cut.extend((0..steps).scan(0, |sum, k| {
                *sum += weight(k, steps);
                Some(*sum)
            }));
        }
        Ok(Plan {
            layout: layout.clone(),
            steps: cut.len() - 1,
            cut,
            align: SLOT_ALIGN / gcd(SLOT_ALIGN, elem_bytes),
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// How many steps the exchange takes (0 with one rank or nothing to send).
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Elements of one slot of `rank`'s send buffer: the most a step of it sends
    /// (computed over its steps, once per rank that needs it).
    pub fn send_len(&self, rank: usize) -> u64 {
        (0..self.steps)
            .map(|k| top(&self.step(rank, k).sends))
            .max()
            .unwrap_or(0)
    }

    /// Elements of one slot of `rank`'s receive buffer.
    pub fn recv_len(&self, rank: usize) -> u64 {
        (0..self.steps)
            .map(|k| top(&self.step(rank, k).recvs))
            .max()
            .unwrap_or(0)
    }

    /// `rank`'s own block, transposed from its source straight into its result,
    /// where the plan has no steps (else the steps carry it in pieces); `None`
    /// where it is empty.
    pub fn own(&self, rank: usize) -> Option<Move> {
        let (h, w) = (self.layout.rows_of(rank), self.layout.cols_of(rank));
        (self.steps == 0 && h > 0 && w > 0).then(|| self.piece(rank, rank, (0, h, 0, w)))
    }

    /// The block of `from`'s rows and `to`'s columns as one move, transposed from
    /// `from`'s source straight into `to`'s result (where they are two ranks, a
    /// kernel on `from`'s GPU writes `to`'s memory: the peer route, with no steps);
    /// `None` where it is empty.
    pub fn block(&self, from: usize, to: usize) -> Option<Move> {
        let (h, w) = (self.layout.rows_of(from), self.layout.cols_of(to));
        (h > 0 && w > 0).then(|| self.piece(from, to, (0, h, 0, w)))
    }

    /// The part `(row0, rows, col0, cols)` of the block of `from`'s rows and `to`'s
    /// columns as a move from `from`'s source into `to`'s result.
    fn piece(&self, from: usize, to: usize, (r0, h, c0, w): (u64, u64, u64, u64)) -> Move {
        let l = &self.layout;
        Move {
            rows: h,
            cols: w,
            from: Region {
                buffer: Buffer::Src,
                offset: r0 * l.cols() + l.col_start(to) + c0,
                pitch: l.cols(),
            },
            to: Region {
                buffer: Buffer::Dst,
                offset: c0 * l.rows() + l.row_start(from) + r0,
                pitch: l.rows(),
            },
            transpose: true,
        }
    }

    /// Step `k`'s part `(row0, rows, col0, cols)` of an `h x w` block: every
    /// block is cut at the same fractions, the steps' cumulative weights, into
    /// bands of whole columns (where it has at least as many columns as steps, or
    /// more columns than rows) or else of whole rows.
    fn band(&self, h: u64, w: u64, k: usize) -> (u64, u64, u64, u64) {
        let total = u128::from(self.cut[self.steps]);
        let at = |len: u64, i: usize| (u128::from(len) * u128::from(self.cut[i]) / total) as u64;
        if w >= self.steps as u64 || w >= h {
            (0, h, at(w, k), at(w, k + 1) - at(w, k))
        } else {
            (at(h, k), at(h, k + 1) - at(h, k), 0, w)
        }
    }

    /// `rank`'s part of step `k` (`k < steps()`).
    pub fn step(&self, rank: usize, k: usize) -> Step {
        let l = &self.layout;
        let p = l.ranks();
        let mut step = Step {
            slot: k % 2,
            ..Step::default()
        };
        let (h, w) = (l.rows_of(rank), l.cols_of(rank));
        let own = self.band(h, w, k);
        if own.1 * own.3 > 0 {
            step.own = Some(self.piece(rank, rank, own));
        }
        let (mut send_at, mut recv_at) = (0u64, 0u64);
        for d in 1..p {
            let q = (rank + d) % p;
            let part = self.band(l.rows_of(rank), l.cols_of(q), k);
            let (h, w) = (part.1, part.3);
            if h * w > 0 {
                // The block's piece, transposed into the send slot.
                step.packs.push(Move {
                    to: Region {
                        buffer: Buffer::Send,
                        offset: send_at,
                        pitch: h,
                    },
                    ..self.piece(rank, q, part)
                });
                step.sends.push(Transfer {
                    peer: q,
                    offset: send_at,
                    len: h * w,
                });
                send_at = (send_at + h * w).next_multiple_of(self.align);
            }
            let q = (rank + p - d) % p;
            let part = self.band(l.rows_of(q), l.cols_of(rank), k);
            let (h, w) = (part.1, part.3);
            if h * w > 0 {
                step.recvs.push(Transfer {
                    peer: q,
                    offset: recv_at,
                    len: h * w,
                });
                // The received piece, copied to where the block's piece goes.
                step.places.push(Move {
                    rows: w,
                    cols: h,
                    from: Region {
                        buffer: Buffer::Recv,
                        offset: recv_at,
                        pitch: h,
                    },
                    to: self.piece(q, rank, part).to,
                    transpose: false,
                });
                recv_at = (recv_at + h * w).next_multiple_of(self.align);
            }
        }
        step
    }
}

/// The weight of a full step; the first steps and the last grow and shrink by
/// halves to it (1, 2, 4, 8, ..., 8, 4, 2, 1), so the pipeline fills and drains
/// with small pieces while the steps between send big ones.
const RAMP: u64 = 8;

/// The most steps a plan takes: a step size so small that it would take more is
/// raised.
const MAX_STEPS: usize = 1 << 16;

/// Where a step's transfers end in its slot.
fn top(t: &[Transfer]) -> u64 {
    t.last().map_or(0, |t| t.offset + t.len)
}

/// Step `k`'s weight of `steps`.
fn weight(k: usize, steps: usize) -> u64 {
    let edge = k.min(steps - 1 - k).min(RAMP.trailing_zeros() as usize);
    1 << edge
}

/// The weights of `steps` steps, summed (from 6 steps on: 14 for the ramps and
/// 8 for each step between).
fn ramp_sum(steps: usize) -> u64 {
    (0..steps).map(|k| weight(k, steps)).sum()
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
