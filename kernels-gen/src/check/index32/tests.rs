use super::*;

fn g(form: Form, elem_bytes: u32, vec: u32) -> Geometry {
    Geometry {
        form,
        tile: 32,
        block_rows: 8,
        elem_bytes,
        vec,
        split: false,
    }
}

#[test]
fn buffers_below_two_to_the_32_units_run_32_bit() {
    let tile = g(Form::Tile, 4, 1);
    assert!(proven(&tile, &Shape::new(8191, 8193)));
    assert!(proven(&tile, &Shape::batched(64, 512, 512)));
    assert!(proven(&tile, &Shape::new(1 << 16, (1 << 16) - 64)));
    // 2^32 elements and more: 64-bit.
    assert!(!proven(&tile, &Shape::new(1 << 16, 1 << 16)));
    assert!(!proven(&tile, &Shape::new(1, 1 << 32)));
    // Vectors are the units: 3 * 2^31 bytes of u8 are 3 * 2^29 vectors of 4.
    let big = Shape::batched(3, 1 << 15, 1 << 16);
    assert!(proven(&g(Form::Tile, 1, 4), &big));
    assert!(!proven(&g(Form::Tile, 1, 1), &big));
    // Word arrays count words: 2^30 12-byte elements are 3 * 2^30 words.
    let e12 = g(Form::Tile, 12, 1);
    assert!(proven(&e12, &Shape::new(1 << 15, 1 << 15)));
    assert!(!proven(&e12, &Shape::new(1 << 16, 1 << 15)));
    let tall = g(Form::Tall, 4, 1);
    assert!(proven(&tall, &Shape::new(1 << 22, 3)));
    let wide = g(Form::Wide, 4, 1);
    assert!(proven(&wide, &Shape::new(3, 1 << 22)));
    let skew = g(Form::Skew, 4, 1);
    assert!(proven(&skew, &Shape::new(8191, 8193)));
    // The gathering forms: a tile's offset in its matrix (column) is the
    // remainder of one division per tile.
    for e in [1, 2, 4, 8, 12, 16] {
        let small = TransposeSpec::small(e).expect("small spec").geometry;
        for (b, r, c) in [
            (4396, 40, 55),
            (26249, 26, 22),
            (100003, 3, 3),
            (131, 63, 61),
        ] {
            assert!(
                runs(&small, &Shape::batched(b, r, c)),
                "{e}-byte {b}x{r}x{c}"
            );
        }
        assert!(!proven(&small, &Shape::batched(1 << 31, 3, 3)), "{e}-byte");
    }
    for e in [1, 2] {
        let strip = TransposeSpec::strip(e).expect("strip spec").geometry;
        assert!(runs(&strip, &Shape::new(8, 1072190)), "{e}-byte strip");
        assert!(runs(&strip, &Shape::new(2, 13153002)), "{e}-byte strip");
    }
}

#[test]
fn the_launcher_runs_the_measured_faster_build() {
    let s = Shape::new(8192, 8192);
    // Issue-bound kernels, vec tiles and f64 tiles (staged loads): 32-bit.
    for g in [
        g(Form::Tile, 4, 1),
        g(Form::Tile, 1, 4),
        g(Form::Tile, 2, 4),
        g(Form::Tile, 4, 2),
        g(Form::Tile, 8, 1),
        g(Form::Skew, 4, 1),
        g(Form::Skew, 8, 1),
        g(Form::Skew, 16, 1),
    ] {
        assert!(runs(&g, &s), "{g:?}");
    }
    assert!(runs(&g(Form::Tall, 16, 1), &Shape::new(1 << 22, 3)));
    // Tiles of 12- and 16-byte elements: 64-bit.
    for g in [g(Form::Tile, 12, 1), g(Form::Tile, 16, 1)] {
        assert!(proven(&g, &s) && !runs(&g, &s), "{g:?}");
    }
}

#[test]
fn a_batch_of_one_never_steps_its_batch_strides() {
    // 2048 rows 2^21 apart: the matrix spans just under 2^32 elements, the
    // stride past it is 2^32, which a batch of one passes as 0.
    let mut s = Shape::new(2048, 32);
    s.src_ld = 1 << 21;
    s.src_batch_stride = 1 << 32;
    assert_eq!(s.passed_batch_strides(), (0, 0));
    assert!(proven(&g(Form::Tile, 4, 1), &s));
    s.batch = 2;
    s.src_batch_stride = 1 << 32;
    assert!(!proven(&g(Form::Tile, 4, 1), &s));
}

#[test]
fn compared_values_must_be_exact() {
    // A batch stride beyond 2^32 is a parameter the 32-bit build cannot take.
    let mut s = Shape::batched(2, 4, 4);
    s.src_batch_stride = 1 << 32;
    assert!(!proven(&g(Form::Tile, 4, 1), &s));
}
