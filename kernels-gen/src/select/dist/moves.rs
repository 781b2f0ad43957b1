//! What a step does: local moves between a rank's buffers and transfers between
//! ranks.

/// A rank's buffers: the caller's source and result, and the plan's two
/// exchange buffers (a step uses slot [`Step::slot`] of each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Buffer {
    Src,
    Dst,
    Send,
    Recv,
}

/// Where a 2-D block starts in a buffer (elements) and the distance between its
/// rows (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    pub buffer: Buffer,
    pub offset: u64,
    pub pitch: u64,
}

/// A local move: the `rows x cols` block at `from`, written at `to` as `cols x
/// rows` (`transpose`) or as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub rows: u64,
    pub cols: u64,
    pub from: Region,
    pub to: Region,
    pub transpose: bool,
}

impl Move {
    /// The move as an N-d permute call: dims, perm, source and destination strides.
    pub fn permute(&self) -> ([u64; 2], [usize; 2], [u64; 2], [u64; 2]) {
        let perm = if self.transpose { [1, 0] } else { [0, 1] };
        let dims = [self.rows, self.cols];
        (dims, perm, [self.from.pitch, 1], [self.to.pitch, 1])
    }

    /// The element the move reads last, plus one: what `from`'s buffer must hold.
    pub fn from_end(&self) -> u64 {
        end(self.from, self.rows, self.cols)
    }

    /// What `to`'s buffer must hold.
    pub fn to_end(&self) -> u64 {
        if self.transpose {
            end(self.to, self.cols, self.rows)
        } else {
            end(self.to, self.rows, self.cols)
        }
    }

    /// The move on host bytes (`elem` bytes an element): the CPU model of what the
    /// GPU kernel of [`Move::permute`] does.
    pub fn run_host(&self, from: &[u8], to: &mut [u8], elem: usize) {
        for r in 0..self.rows as usize {
            for c in 0..self.cols as usize {
                let s = self.from.offset as usize + r * self.from.pitch as usize + c;
                let (dr, dc) = if self.transpose { (c, r) } else { (r, c) };
                let d = self.to.offset as usize + dr * self.to.pitch as usize + dc;
                to[d * elem..(d + 1) * elem].copy_from_slice(&from[s * elem..(s + 1) * elem]);
            }
        }
    }
}

fn end(at: Region, rows: u64, cols: u64) -> u64 {
    if rows == 0 || cols == 0 {
        0
    } else {
        at.offset + (rows - 1) * at.pitch + cols
    }
}

/// A run of `len` elements at `offset` of this step's slot, sent to (or received
/// from) `peer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transfer {
    pub peer: usize,
    pub offset: u64,
    pub len: u64,
}

/// One rank's part of one step: pack, then exchange, then place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// The slot (0 or 1) of the send and receive buffers this step uses.
    pub slot: usize,
    /// Source pieces transposed into the send slot, one per send.
    pub packs: Vec<Move>,
    pub sends: Vec<Transfer>,
    pub recvs: Vec<Transfer>,
    /// Received pieces copied into the result, one per receive.
    pub places: Vec<Move>,
    /// A piece of the rank's own block, transposed straight into the result.
    pub own: Option<Move>,
}
