//! Draws a warp's lanes on the banks as an SVG picture: one column per bank, one
//! row per wavefront that bank needs; conflicting cells are red.
//!
//! ```
//! use bankfree_gen::{hw::bank::{analyze, Model}, render::svg::bank_map};
//! let addrs: Vec<Option<u64>> = (0..32).map(|l| Some(l * 33 * 4)).collect();
//! let a = analyze(Model::Hopper, 4, &addrs).unwrap();
//! let svg = bank_map(Model::Hopper, &[("tile[lane * 33]".into(), a)]);
//! assert!(svg.starts_with("<svg") && svg.contains("tile[lane * 33]"));
//! ```

use crate::hw::bank::{Access, Model};
use std::fmt::Write;

const CELL: u64 = 26;
const LEFT: u64 = 40;
const TITLE: u64 = 40;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One panel per `(title, access)`, stacked vertically.
pub fn bank_map(model: Model, panels: &[(String, Access)]) -> String {
    let banks = model.banks();
    let mut body = String::new();
    let mut y = 10;
    for (title, acc) in panels {
        let mut cols: Vec<Vec<(u64, usize, usize)>> = vec![Vec::new(); banks as usize];
        for h in &acc.lanes {
            for w in 0..u64::from(acc.width.div_ceil(4)) {
                let word = h.word + w;
                let col = &mut cols[(word % banks) as usize];
                match col.iter_mut().find(|(wd, _, _)| *wd == word) {
                    Some(c) => c.2 += 1,
                    None => col.push((word, h.lane, 1)),
                }
            }
        }
        let depth = cols.iter().map(Vec::len).max().unwrap_or(1).max(1) as u64;
        let status = if acc.conflict_free() {
            "conflict-free"
        } else {
            "conflict"
        };
        let _ = writeln!(
            body,
            r#"<text x="{LEFT}" y="{}" font-size="14">{} ({}: {} wavefronts, ideal {})</text>"#,
            y + 16,
            escape(title),
            status,
            acc.wavefronts,
            acc.ideal
        );
        let top = y + TITLE;
        for b in 0..banks {
            let _ = writeln!(
                body,
                r#"<text x="{}" y="{}" font-size="9" text-anchor="middle">{b}</text>"#,
                LEFT + b * CELL + CELL / 2,
                top - 4
            );
        }
        for (b, col) in cols.iter().enumerate() {
            let conflict = col.len() > 1;
            for (d, (_, lane, n)) in col.iter().enumerate() {
                let (x, yy) = (LEFT + b as u64 * CELL, top + d as u64 * CELL);
                let fill = if conflict { "#f4a6a6" } else { "#a6d8f4" };
                let label = if *n > 1 {
                    format!("{lane}*")
                } else {
                    lane.to_string()
                };
                let _ = writeln!(
                    body,
                    r##"<rect x="{x}" y="{yy}" width="{w}" height="{w}" fill="{fill}" stroke="#333"/><text x="{}" y="{}" font-size="10" text-anchor="middle">{label}</text>"##,
                    x + CELL / 2,
                    yy + CELL / 2 + 4,
                    w = CELL - 2
                );
            }
        }
        let _ = writeln!(
            body,
            r#"<text x="4" y="{}" font-size="9">bank</text>"#,
            top - 4
        );
        y = top + depth * CELL + 20;
    }
    // 14 px monospace is about 8.5 px a character: fit the longest title too.
    let title_px = panels
        .iter()
        .map(|(t, _)| t.len() as u64 + 45)
        .max()
        .unwrap_or(0)
        * 17
        / 2;
    let width = (LEFT + banks * CELL + 20).max(LEFT + title_px);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{y}\" font-family=\"monospace\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n"
    )
}
