//! Random shapes by class, for `bench --random N --seed S`: the classes the
//! planner's targets are stated for, each call moving 8 to 64 MB.

use bankfree::gen::Shape;

/// A shape class and its target ratio to a same-bytes `cudaMemcpy` (H100).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Both sides at least 64, any sizes (odd, prime, not multiples of 4).
    Sides,
    /// One side of 1 to 32 elements.
    Narrow,
    /// A batch of small matrices, each side 2 to 64.
    Batch,
}

pub const CLASSES: [Class; 3] = [Class::Sides, Class::Narrow, Class::Batch];

/// The element sizes drawn from.
pub const ELEMS: [u32; 6] = [1, 2, 4, 8, 12, 16];

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Sides => "both sides >= 64",
            Class::Narrow => "one side <= 32",
            Class::Batch => "batch of small",
        }
    }

    pub fn target(self) -> f64 {
        match self {
            Class::Sides => 0.92,
            Class::Narrow | Class::Batch => 0.85,
        }
    }
}

/// splitmix64: a small, seedable generator (the draw must be reproducible from
/// the seed alone).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// Log-uniform in `[lo, hi]`.
    pub fn log(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (lo.ln() + u * (hi.ln() - lo.ln())).exp()
    }
}

/// One drawn case: its class, element size and shape (dense, as the attribute's
/// `batch, rows, cols` arguments give it).
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub class: Class,
    pub elem_bytes: u32,
    pub shape: Shape,
}

impl Case {
    pub fn name(&self) -> String {
        let s = &self.shape;
        if s.batch > 1 {
            format!("{}x{}x{} {}B", s.batch, s.rows, s.cols, self.elem_bytes)
        } else {
            format!("{}x{} {}B", s.rows, s.cols, self.elem_bytes)
        }
    }
}

/// `n` cases of `class`: a uniform element size, 8 to 64 MB log-uniform, and
/// sides as the class says (the long side of a narrow case, and the batch, make
/// up the bytes; both sides of a `Sides` case have an aspect ratio of up to 64).
pub fn draw(rng: &mut Rng, class: Class, n: usize) -> Vec<Case> {
    (0..n)
        .map(|_| {
            let e = ELEMS[rng.range(0, ELEMS.len() as u64 - 1) as usize];
            let elems = (rng.log(8.0 * 1048576.0, 64.0 * 1048576.0) / f64::from(e)) as u64;
            let shape = match class {
                Class::Sides => {
                    let aspect = rng.log(1.0 / 64.0, 64.0);
                    let rows = ((elems as f64 * aspect).sqrt() as u64).max(64);
                    let cols = (elems / rows).max(64);
                    Shape::new(rows, cols)
                }
                Class::Narrow => {
                    let narrow = rng.range(1, 32);
                    let long = elems.div_ceil(narrow);
                    if rng.next().is_multiple_of(2) {
                        Shape::new(long, narrow)
                    } else {
                        Shape::new(narrow, long)
                    }
                }
                Class::Batch => {
                    let (rows, cols) = (rng.range(2, 64), rng.range(2, 64));
                    Shape::batched(elems.div_ceil(rows * cols), rows, cols)
                }
            };
            Case {
                class,
                elem_bytes: e,
                shape,
            }
        })
        .collect()
}

impl Class {
    /// The class a shape belongs to: a batch of small matrices, a narrow side, or
    /// both sides at least 64 (a shape between them counts as `Sides`).
    pub fn of(shape: &Shape) -> Class {
        if shape.batch > 1 && shape.rows <= 64 && shape.cols <= 64 {
            Class::Batch
        } else if shape.rows.min(shape.cols) <= 32 {
            Class::Narrow
        } else {
            Class::Sides
        }
    }
}

/// `--shape E:RxC` or `E:BxRxC`: a given case of `E`-byte elements, in the
/// class its sides put it in.
pub fn parse(text: &str) -> Result<Case, String> {
    let bad = || {
        format!(
            "--shape {text}: expected ELEM_BYTES:ROWSxCOLS or ELEM_BYTES:BATCHxROWSxCOLS, \
             for example 1:2694950x11"
        )
    };
    let (e, sides) = text.split_once(':').ok_or_else(bad)?;
    let elem_bytes: u32 = e.parse().map_err(|_| bad())?;
    let words = (20..=64).contains(&elem_bytes) && elem_bytes.is_multiple_of(4);
    if !ELEMS.contains(&elem_bytes) && !words {
        return Err(format!(
            "--shape {text}: the bench has elements of {ELEMS:?} bytes, or a multiple \
             of 4 from 20 to 64, not {elem_bytes}"
        ));
    }
    let n: Vec<u64> = sides
        .split('x')
        .map(|x| x.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let shape = match n[..] {
        [rows, cols] => Shape::new(rows, cols),
        [batch, rows, cols] => Shape::batched(batch, rows, cols),
        _ => return Err(bad()),
    };
    if n.contains(&0) {
        return Err(format!("--shape {text}: every side must be at least 1"));
    }
    Ok(Case {
        class: Class::of(&shape),
        elem_bytes,
        shape,
    })
}

/// `--ladder`: batches of matrices of growing sides for every element size, 32 MB
/// each: the measurement the planner's rule for the `small` form was made from.
pub fn ladder() -> Vec<Case> {
    const SIDES: [(u64, u64); 14] = [
        (3, 3),
        (2, 25),
        (25, 2),
        (8, 8),
        (5, 17),
        (16, 16),
        (12, 40),
        (24, 57),
        (32, 32),
        (48, 48),
        (63, 61),
        (64, 64),
        (100, 100),
        (128, 128),
    ];
    ELEMS
        .iter()
        .flat_map(|&e| {
            SIDES.iter().map(move |&(rows, cols)| Case {
                class: Class::Batch,
                elem_bytes: e,
                shape: Shape::batched((32 << 20) / (u64::from(e) * rows * cols), rows, cols),
            })
        })
        .collect()
}

/// The median and the worst of `v`.
pub fn median_worst(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2], s[0])
}
