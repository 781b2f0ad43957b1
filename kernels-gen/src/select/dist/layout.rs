//! How a matrix and its transpose are split over ranks.

/// A layout or size the plan cannot take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DistError {
    #[error("a layout needs at least one rank")]
    NoRanks,
    #[error("{ranks} ranks: a layout takes at most {MAX_RANKS}")]
    TooManyRanks { ranks: usize },
    #[error("the row split has {rows} ranks but the column split has {cols}; give both one entry per rank")]
    Ranks { rows: usize, cols: usize },
    #[error("the matrix's {what} overflows 64 bits")]
    Overflow { what: &'static str },
    #[error("element size 0: a transpose moves elements of at least one byte")]
    ElemBytes,
}

/// The most ranks a layout takes.
pub const MAX_RANKS: usize = 1 << 20;

/// How a `rows x cols` matrix and its transpose are split over ranks: rank `r`
/// holds `rows[r]` consecutive source rows and gets `cols[r]` consecutive result
/// rows (source columns). Any split, uneven and empty parts included.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    rows: Vec<u64>,
    cols: Vec<u64>,
    row_start: Vec<u64>,
    col_start: Vec<u64>,
}

fn starts(parts: &[u64], what: &'static str) -> Result<Vec<u64>, DistError> {
    let mut out = vec![0u64];
    for &n in parts {
        let last = out[out.len() - 1];
        out.push(last.checked_add(n).ok_or(DistError::Overflow { what })?);
    }
    Ok(out)
}

impl Layout {
    /// The split `rows[r]` (source rows of rank `r`) and `cols[r]` (result rows of
    /// rank `r`).
    pub fn new(rows: &[u64], cols: &[u64]) -> Result<Layout, DistError> {
        if rows.is_empty() {
            return Err(DistError::NoRanks);
        }
        if rows.len() > MAX_RANKS {
            return Err(DistError::TooManyRanks { ranks: rows.len() });
        }
        if rows.len() != cols.len() {
            return Err(DistError::Ranks {
                rows: rows.len(),
                cols: cols.len(),
            });
        }
        let layout = Layout {
            row_start: starts(rows, "row count")?,
            col_start: starts(cols, "column count")?,
            rows: rows.to_vec(),
            cols: cols.to_vec(),
        };
        layout
            .rows()
            .checked_mul(layout.cols())
            .ok_or(DistError::Overflow {
                what: "element count",
            })?;
        Ok(layout)
    }

    /// `rows` and `cols` split as evenly as they go: the first `n % ranks` ranks
    /// get one more.
    pub fn even(rows: u64, cols: u64, ranks: usize) -> Result<Layout, DistError> {
        let split = |n: u64| -> Vec<u64> {
            let p = ranks as u64;
            (0..p).map(|r| n / p + u64::from(r < n % p)).collect()
        };
        if ranks == 0 {
            return Err(DistError::NoRanks);
        }
        if ranks > MAX_RANKS {
            return Err(DistError::TooManyRanks { ranks });
        }
        Layout::new(&split(rows), &split(cols))
    }

    pub fn ranks(&self) -> usize {
        self.rows.len()
    }
    /// The source's row count (the result's row length).
    pub fn rows(&self) -> u64 {
        self.row_start[self.ranks()]
    }
    /// The source's row length (the result's row count).
    pub fn cols(&self) -> u64 {
        self.col_start[self.ranks()]
    }
    pub fn rows_of(&self, rank: usize) -> u64 {
        self.rows[rank]
    }
    pub fn cols_of(&self, rank: usize) -> u64 {
        self.cols[rank]
    }
    pub fn row_start(&self, rank: usize) -> u64 {
        self.row_start[rank]
    }
    pub fn col_start(&self, rank: usize) -> u64 {
        self.col_start[rank]
    }
    /// Elements rank `rank`'s source must hold: its rows, `cols` each.
    pub fn src_len(&self, rank: usize) -> u64 {
        self.rows[rank] * self.cols()
    }
    /// Elements rank `rank`'s result must hold: its result rows, `rows` each.
    pub fn dst_len(&self, rank: usize) -> u64 {
        self.cols[rank] * self.rows()
    }
}
