//! Shared-memory bank model for one warp-wide instruction.
//!
//! Input: each active lane's byte address and the access width. Output: the
//! wavefronts the instruction takes and the ideal for that width.
//!
//! * [`Model::Hopper`] follows what ncu counted on the H100 (see the crate docs):
//!   32 banks of 4 bytes; up to 4-byte accesses are served for the whole warp at
//!   once and lanes in one 32-bit word never conflict; 8-byte accesses per
//!   half-warp (lanes 0-15, 16-31) and 16-byte accesses per quarter-warp (fixed
//!   groups of 8 lanes); a group whose 16-byte addresses repeat an earlier group's
//!   is merged into it. Per group the cost is the largest number of distinct
//!   32-bit words any one bank must deliver.
//! * [`Model::Legacy16`] is the 16-bank, half-warp hardware of CUDA 1.x that the
//!   course notes describe: each half-warp is served separately, wider accesses
//!   are split into one 32-bit request per word, and each request is served in
//!   steps that pick one broadcast word plus one address per other bank (the
//!   CUDA 1.x programming guide's procedure), so four lanes reading four bytes
//!   of one word in `char s[tid]` do conflict there.
//!
//! ```
//! use bankfree_gen::hw::bank::{analyze, Model};
//! // `float f[32 * lane]`: every lane in bank 0.
//! let addrs: Vec<Option<u64>> = (0..32).map(|l| Some(4 * 32 * l)).collect();
//! let r = analyze(Model::Hopper, 4, &addrs).unwrap();
//! assert_eq!((r.wavefronts, r.ideal), (32, 1));
//! ```

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Which hardware's bank rules to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// 32 banks x 4 bytes, as measured on the H100 (also Volta through Ada).
    Hopper,
    /// 16 banks x 4 bytes, half-warps, CUDA 1.x (G80/GT200).
    Legacy16,
}

impl Model {
    /// Number of banks.
    pub fn banks(self) -> u64 {
        match self {
            Model::Hopper => 32,
            Model::Legacy16 => 16,
        }
    }

    /// Lanes served together for an access of `width` bytes.
    pub fn group_lanes(self, width: u32) -> usize {
        match (self, width) {
            (Model::Legacy16, _) => 16,
            (Model::Hopper, 8) => 16,
            (Model::Hopper, 16) => 8,
            (Model::Hopper, _) => 32,
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Model::Hopper => "hopper",
            Model::Legacy16 => "legacy16",
        })
    }
}

impl FromStr for Model {
    type Err = BankError;
    fn from_str(s: &str) -> Result<Model, BankError> {
        match s {
            "hopper" => Ok(Model::Hopper),
            "legacy16" => Ok(Model::Legacy16),
            other => Err(BankError::UnknownModel(other.into())),
        }
    }
}

/// Why an access cannot be analyzed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BankError {
    #[error("unknown bank model `{0}`; use `hopper` (32 banks, H100) or `legacy16` (16 banks, CUDA 1.x)")]
    UnknownModel(String),
    #[error("access width {0} bytes: shared-memory instructions move 1, 2, 4, 8 or 16 bytes")]
    Width(u32),
    #[error("lane {lane}: byte address {addr} is not a multiple of the {width}-byte access width (misaligned accesses fault on the GPU)")]
    Misaligned { lane: usize, addr: u64, width: u32 },
    #[error("{0} lanes given; a warp has at most 32")]
    TooManyLanes(usize),
}

/// Where one lane's access lands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaneHit {
    pub lane: usize,
    /// Byte address.
    pub addr: u64,
    /// 32-bit word index (`addr / 4`) of the first word touched.
    pub word: u64,
    /// Bank of that word.
    pub bank: u64,
}

/// The cost of one warp-wide instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Access {
    pub wavefronts: u32,
    pub ideal: u32,
    pub width: u32,
    pub lanes: Vec<LaneHit>,
}

impl Access {
    /// Whether the instruction takes no more wavefronts than the ideal.
    pub fn conflict_free(&self) -> bool {
        self.wavefronts <= self.ideal
    }
}

/// Analyzes one instruction; `addrs[lane]` is `None` for an inactive lane.
pub fn analyze(model: Model, width: u32, addrs: &[Option<u64>]) -> Result<Access, BankError> {
    if !matches!(width, 1 | 2 | 4 | 8 | 16) {
        return Err(BankError::Width(width));
    }
    if addrs.len() > 32 {
        return Err(BankError::TooManyLanes(addrs.len()));
    }
    let mut lanes = Vec::new();
    for (lane, a) in addrs.iter().enumerate() {
        if let Some(addr) = *a {
            if addr % u64::from(width) != 0 {
                return Err(BankError::Misaligned { lane, addr, width });
            }
            let word = addr / 4;
            lanes.push(LaneHit {
                lane,
                addr,
                word,
                bank: word % model.banks(),
            });
        }
    }
    let (wavefronts, ideal) = match model {
        Model::Hopper => hopper(width, &lanes),
        Model::Legacy16 => legacy16(width, &lanes),
    };
    Ok(Access {
        wavefronts,
        ideal,
        width,
        lanes,
    })
}

fn groups(model: Model, width: u32, lanes: &[LaneHit]) -> Vec<Vec<&LaneHit>> {
    let per = model.group_lanes(width);
    let mut gs: Vec<Vec<&LaneHit>> = vec![Vec::new(); 32usize.div_ceil(per)];
    for h in lanes {
        gs[h.lane / per].push(h);
    }
    gs.retain(|g| !g.is_empty());
    gs
}

fn hopper(width: u32, lanes: &[LaneHit]) -> (u32, u32) {
    let gs = groups(Model::Hopper, width, lanes);
    let words_per_lane = u64::from(width.div_ceil(4));
    let mut seen: Vec<Vec<u64>> = Vec::new();
    let mut total = 0;
    for g in &gs {
        let mut addrs: Vec<u64> = g.iter().map(|h| h.addr).collect();
        addrs.sort_unstable();
        addrs.dedup();
        if width == 16 && seen.contains(&addrs) {
            continue; // identical 16-byte addresses are merged with the earlier group
        }
        seen.push(addrs);
        let mut per_bank: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for h in g {
            for w in 0..words_per_lane {
                let word = h.word + w;
                per_bank.entry(word % 32).or_default().push(word);
            }
        }
        let worst = per_bank
            .values_mut()
            .map(|ws| {
                ws.sort_unstable();
                ws.dedup();
                ws.len() as u32
            })
            .max()
            .unwrap_or(1);
        total += worst;
    }
    (total.max(1), (gs.len() as u32).max(1))
}

fn legacy16(width: u32, lanes: &[LaneHit]) -> (u32, u32) {
    let gs = groups(Model::Legacy16, width, lanes);
    let words_per_lane = u64::from(width.div_ceil(4));
    let mut total = 0;
    for g in &gs {
        for w in 0..words_per_lane {
            // One 32-bit request: each lane's word `w`.
            let mut pending: Vec<u64> = g.iter().map(|h| h.word + w).collect();
            while !pending.is_empty() {
                // Broadcast the first pending lane's word; serve every lane reading it
                // and one lane for each other bank.
                let bcast = pending[0];
                let mut served_banks = vec![bcast % 16];
                pending.retain(|&word| {
                    if word == bcast {
                        return false;
                    }
                    let bank = word % 16;
                    if served_banks.contains(&bank) {
                        true
                    } else {
                        served_banks.push(bank);
                        false
                    }
                });
                total += 1;
            }
        }
    }
    let ideal = gs.len() as u32 * words_per_lane as u32;
    (total.max(1), ideal.max(1))
}

/// Renders a warp's lanes on the banks, as the course notes draw it: one column per
/// bank, one row per wavefront that bank needs, each cell the lane (`*` marks a
/// word shared with more lanes).
pub fn text_map(model: Model, access: &Access) -> String {
    let banks = model.banks();
    let mut cols: Vec<Vec<(u64, usize, usize)>> = vec![Vec::new(); banks as usize];
    let words_per_lane = u64::from(access.width.div_ceil(4));
    for h in &access.lanes {
        for w in 0..words_per_lane {
            let word = h.word + w;
            let col = &mut cols[(word % banks) as usize];
            match col.iter_mut().find(|(wd, _, _)| *wd == word) {
                Some(cell) => cell.2 += 1,
                None => col.push((word, h.lane, 1)),
            }
        }
    }
    let depth = cols.iter().map(Vec::len).max().unwrap_or(0);
    let mut s = String::from("bank ");
    for b in 0..banks {
        s.push_str(&format!("{b:>4}"));
    }
    s.push('\n');
    for d in 0..depth {
        s.push_str(&format!("{:>4} ", format!("#{d}")));
        for col in &cols {
            match col.get(d) {
                Some((_, lane, n)) if *n > 1 => s.push_str(&format!("{:>3}*", lane)),
                Some((_, lane, _)) => s.push_str(&format!("{lane:>4}")),
                None => s.push_str("   ."),
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(model: Model, bytes: u32, f: impl Fn(u64) -> u64) -> (u32, u32) {
        let addrs: Vec<Option<u64>> = (0..32).map(|l| Some(f(l) * u64::from(bytes))).collect();
        let a = analyze(model, bytes, &addrs).expect("valid access");
        (a.wavefronts, a.ideal)
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            analyze(Model::Hopper, 3, &[Some(0)]),
            Err(BankError::Width(3))
        );
        assert!(matches!(
            analyze(Model::Hopper, 8, &[Some(4)]),
            Err(BankError::Misaligned { .. })
        ));
        assert!(analyze(Model::Hopper, 4, &[None; 33]).is_err());
        assert!("hopper9".parse::<Model>().is_err());
    }

    #[test]
    fn empty_warp_costs_one() {
        let a = analyze(Model::Hopper, 4, &[None; 32]).expect("valid");
        assert_eq!((a.wavefronts, a.ideal), (1, 1));
    }

    #[test]
    fn legacy_broadcast_procedure() {
        // The classic 16-bank example: char s[tid] is 4-way, char s[4*tid] is free.
        assert_eq!(pattern(Model::Legacy16, 1, |l| l), (8, 2));
        assert_eq!(pattern(Model::Legacy16, 1, |l| 4 * l), (2, 2));
        // every lane reading one word is a single broadcast per half-warp.
        assert_eq!(pattern(Model::Legacy16, 4, |_| 7), (2, 2));
    }

    #[test]
    fn text_map_shows_depth() {
        let addrs: Vec<Option<u64>> = (0..4).map(|l| Some(l * 128)).collect();
        let a = analyze(Model::Hopper, 4, &addrs).expect("valid");
        let m = text_map(Model::Hopper, &a);
        assert_eq!(m.lines().count(), 5, "{m}");
        assert!(m.lines().nth(4).is_some_and(|l| l.contains('3')), "{m}");
    }
}
