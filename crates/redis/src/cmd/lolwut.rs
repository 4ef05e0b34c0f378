//! LOLWUT [VERSION v] [args ...]: Redis's computer art, drawn as Redis 7.0.15's `lolwut.c`,
//! `lolwut5.c` and `lolwut6.c` draw it, so that the same arguments give the same bytes
//! wherever the art involves no chance. Version 5 is Georg Nees's "Schotter" on a braille
//! canvas, version 6 a city skyline in four terminal grays, and any other version (the
//! default) a one-line banner.
//!
//! The random parts use glibc's `rand()` (the generator Redis's C code calls), seeded as
//! Redis seeds it, from the time and the process id.

use std::sync::Mutex;

use engine::Engine;

use super::{Ctx, READONLY, Spec, is, spec};
use crate::error::CmdResult;
use crate::frame::Frame;
use crate::number::int_arg;

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![spec("lolwut", -1, READONLY, 0, lolwut)]
}

/// The version the art signs with: the Redis version docdb answers as.
const SIGNATURE_VERSION: &str = super::REDIS_VERSION;

/// LOLWUT: VERSION 5 or 6 (as an unsigned 32-bit number, C's cast) picks that art, with
/// the arguments after the version; anything else prints the banner.
fn lolwut<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut args = ctx.args;
    let mut version = 0;
    if args.len() >= 3 && is(&args[1], "version") {
        version = int_arg(&args[2])? as u32;
        // The art's own arguments follow the version, as Redis shifts argv by two.
        args = &args[2..];
    }
    let text = match version {
        5 => schotter_command(args)?,
        6 => skyline_command(args)?,
        _ => format!("Redis ver. {SIGNATURE_VERSION}\n").into_bytes(),
    };
    Ok(Frame::Verbatim(text))
}

/// Argument `at` (after the version) as a long, or `default` when absent, clamped to
/// `1..=max`.
fn long_arg(args: &[Vec<u8>], at: usize, default: i64, max: i64) -> CmdResult<i32> {
    let value = match args.get(at) {
        Some(arg) => int_arg(arg)?,
        None => default,
    };
    Ok(value.clamp(1, max) as i32)
}

/// LOLWUT VERSION 5 [columns] [squares-per-row] [squares-per-col].
fn schotter_command(args: &[Vec<u8>]) -> CmdResult<Vec<u8>> {
    let cols = long_arg(args, 1, 66, 1000)?;
    let per_row = long_arg(args, 2, 8, 200)?;
    let per_col = long_arg(args, 3, 12, 200)?;
    let canvas = with_rand(|rand| draw_schotter(cols, per_row, per_col, rand));
    let mut text = render_braille(&canvas);
    text.extend_from_slice(
        format!(
            "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. {SIGNATURE_VERSION}\n"
        )
        .as_bytes(),
    );
    Ok(text)
}

/// LOLWUT VERSION 6 [columns] [rows].
fn skyline_command(args: &[Vec<u8>]) -> CmdResult<Vec<u8>> {
    let cols = long_arg(args, 1, 80, 1000)?;
    let rows = long_arg(args, 2, 20, 1000)?;
    let mut canvas = Canvas::new(cols, rows, 3);
    with_rand(|rand| draw_skyline(&mut canvas, rand));
    let mut text = render_grays(&canvas);
    text.extend_from_slice(
        format!(
            "\nDedicated to the 8 bit game developers of past and present.\n\
             Original 8 bit image from Plaguemon by hikikomori. Redis ver. {SIGNATURE_VERSION}\n"
        )
        .as_bytes(),
    );
    Ok(text)
}

/// A grid of pixels (colors 0 to 3); drawing outside it does nothing, reading outside it
/// gives 0 (Redis's `lwCanvas`).
#[derive(Debug, Clone, PartialEq)]
struct Canvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i32, height: i32, color: u8) -> Canvas {
        let size = width.max(0) as usize * height.max(0) as usize;
        Canvas {
            width,
            height,
            pixels: vec![color; size],
        }
    }

    fn index(&self, x: i32, y: i32) -> Option<usize> {
        let inside = (0..self.width).contains(&x) && (0..self.height).contains(&y);
        inside.then(|| (x + y * self.width) as usize)
    }

    fn set(&mut self, x: i32, y: i32, color: u8) {
        if let Some(i) = self.index(x, y) {
            self.pixels[i] = color;
        }
    }

    fn get(&self, x: i32, y: i32) -> u8 {
        self.index(x, y).map_or(0, |i| self.pixels[i])
    }

    /// A Bresenham line from (x1, y1) to (x2, y2), both ends included.
    fn line(&mut self, (mut x1, mut y1): (i32, i32), (x2, y2): (i32, i32), color: u8) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let sx = if x1 < x2 { 1 } else { -1 };
        let sy = if y1 < y2 { 1 } else { -1 };
        let mut err = dx - dy;
        loop {
            self.set(x1, y1, color);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// A square centred on (x, y), `size` wide, turned by `angle` radians: its corners
    /// on a circle, as Redis's `lwDrawSquare` finds them, with C's mix of float and double
    /// arithmetic kept so that the corners round alike.
    fn square(&mut self, x: i32, y: i32, size: f32, angle: f32, color: u8) {
        let size = (f64::from(size) / REDIS_SQRT_2) as f32;
        let size = f64::from(size).round() as f32;
        let mut k = (std::f64::consts::FRAC_PI_4 + f64::from(angle)) as f32;
        let mut corners = [(0, 0); 4];
        for corner in &mut corners {
            let k64 = f64::from(k);
            *corner = (
                (k64.sin() * f64::from(size) + f64::from(x)).round() as i32,
                (k64.cos() * f64::from(size) + f64::from(y)).round() as i32,
            );
            k = (f64::from(k) + std::f64::consts::FRAC_PI_2) as f32;
        }
        for j in 0..4 {
            self.line(corners[j], corners[(j + 1) % 4], color);
        }
    }
}

/// The square root of two as `lwDrawSquare` writes it: ten decimals, which can round a
/// corner differently from the exact constant.
#[expect(
    clippy::approx_constant,
    reason = "Redis's truncated constant, kept for identical corners"
)]
const REDIS_SQRT_2: f64 = 1.4142135623;

/// glibc's `RAND_MAX`.
const RAND_MAX: i32 = i32::MAX;

/// glibc's `rand()` (the TYPE_3 additive feedback generator `random_r` uses): the
/// generator whose numbers Redis's LOLWUT draws with.
#[derive(Debug, Clone)]
struct GlibcRand {
    state: [i32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    /// `srand(seed)`.
    fn new(seed: u32) -> GlibcRand {
        let mut state = [0i32; 31];
        state[0] = if seed == 0 { 1 } else { seed as i32 };
        for i in 1..31 {
            // 16807 * state[i-1] % 2147483647 without overflowing 31 bits (Schrage).
            let previous = state[i - 1];
            let (hi, lo) = (previous / 127_773, previous % 127_773);
            let mut word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            state[i] = word;
        }
        let mut rand = GlibcRand {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            rand.next();
        }
        rand
    }

    /// `rand()`: 0 to [`RAND_MAX`].
    fn next(&mut self) -> i32 {
        let sum = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = sum;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        ((sum as u32) >> 1) as i32
    }
}

/// The process's generator, seeded on first use as Redis seeds it at start
/// (`srand(time(NULL)^getpid())`).
static RAND: Mutex<Option<GlibcRand>> = Mutex::new(None);

fn with_rand<T>(draw: impl FnOnce(&mut GlibcRand) -> T) -> T {
    let mut guard = RAND.lock().unwrap_or_else(|e| e.into_inner());
    let rand = guard.get_or_insert_with(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        GlibcRand::new((now as u32) ^ std::process::id())
    });
    draw(rand)
}

/// A random number in `[0, 1] / per_col * y`, as `lwDrawSchotter` computes one in float.
fn schotter_offset(rand: &mut GlibcRand, per_col: i32, y: i32) -> f32 {
    rand.next() as f32 / RAND_MAX as f32 / per_col as f32 * y as f32
}

/// Schotter: `per_col` rows of `per_row` squares, tilted and shifted more the lower the
/// row (Redis's `lwDrawSchotter`), on a canvas `cols * 2` pixels wide.
fn draw_schotter(cols: i32, per_row: i32, per_col: i32, rand: &mut GlibcRand) -> Canvas {
    let width = cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32 + (padding * 2) as f32) as i32;
    let mut canvas = Canvas::new(width, height, 0);
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0;
            if y > 1 {
                let mut r = [0.0f32; 3];
                for value in &mut r {
                    *value = schotter_offset(rand, per_col, y);
                }
                for value in &mut r {
                    if rand.next() % 2 != 0 {
                        *value = -*value;
                    }
                }
                angle = r[0];
                sx = (sx as f32 + r[1] * side / 3.0) as i32;
                sy = (sy as f32 + r[2] * side / 3.0) as i32;
            }
            canvas.square(sx, sy, side, angle, 1);
        }
    }
    canvas
}

/// The canvas as braille characters, each 2x4 pixels (Redis's `renderCanvas` of
/// `lolwut5.c`, newline rule included: none after a row group starting on the last pixel
/// row).
fn render_braille(canvas: &Canvas) -> Vec<u8> {
    const DOTS: [(i32, i32); 8] = [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 1),
        (1, 2),
        (0, 3),
        (1, 3),
    ];
    let mut text = Vec::new();
    for y in (0..canvas.height).step_by(4) {
        for x in (0..canvas.width).step_by(2) {
            let mut byte = 0u32;
            for (bit, (dx, dy)) in DOTS.iter().enumerate() {
                if canvas.get(x + dx, y + dy) != 0 {
                    byte |= 1 << bit;
                }
            }
            let code = 0x2800 + byte;
            text.extend_from_slice(&[
                0xE0 | (code >> 12) as u8,
                0x80 | ((code >> 6) & 0x3F) as u8,
                0x80 | (code & 0x3F) as u8,
            ]);
        }
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
    }
    text
}

/// One building of the skyline (Redis's `struct skyscraper`).
struct Skyscraper {
    xoff: i32,
    width: i32,
    height: i32,
    windows: bool,
    color: u8,
}

/// Draws a building standing on the canvas's bottom row, its roof two pixels narrower on
/// each side, with windows (two pixels wide, one tall, of a random gray) if it has any
/// (Redis's `generateSkyscraper`).
fn draw_skyscraper(canvas: &mut Canvas, si: &Skyscraper, rand: &mut GlibcRand) {
    let start_y = canvas.height - 1;
    let end_y = start_y - si.height + 1;
    for y in (end_y..=start_y).rev() {
        for x in si.xoff..si.xoff + si.width {
            if y == end_y && (x <= si.xoff + 1 || x >= si.xoff + si.width - 2) {
                continue;
            }
            let mut color = si.color;
            let inner =
                x > si.xoff + 1 && x < si.xoff + si.width - 2 && y > end_y + 1 && y < start_y - 1;
            if si.windows && inner {
                let rel_x = x - (si.xoff + 1);
                let rel_y = y - (end_y + 1);
                if (rel_x / 2) % 2 != 0 && rel_y % 2 != 0 {
                    loop {
                        color = 1 + (rand.next() % 2) as u8;
                        if color != si.color {
                            break;
                        }
                    }
                    if rel_x % 2 != 0 {
                        color = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, color);
        }
    }
}

/// The skyline: two rows of plain buildings behind (the lighter gray farthest), then dark
/// buildings with windows in front (Redis's `generateSkyline`).
fn draw_skyline(canvas: &mut Canvas, rand: &mut GlibcRand) {
    let h = canvas.height;
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < canvas.width {
            offset += rand.next() % 8;
            let width = 10 + rand.next() % 9;
            let height = if color == 2 {
                h / 2 + (rand.next() % h) / 2
            } else {
                h / 2 + (rand.next() % h) / 3
            };
            let si = Skyscraper {
                xoff: offset,
                width,
                height,
                windows: false,
                color,
            };
            draw_skyscraper(canvas, &si, rand);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < canvas.width {
        offset += rand.next() % 8;
        let mut width = 5 + rand.next() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + (rand.next() % h) / 2;
        let si = Skyscraper {
            xoff: offset,
            width,
            height,
            windows: true,
            color: 0,
        };
        draw_skyscraper(canvas, &si, rand);
        offset += width + 5;
    }
}

/// The canvas as terminal cells, a space in each of the four grays (Redis's
/// `renderCanvas` of `lolwut6.c`).
fn render_grays(canvas: &Canvas) -> Vec<u8> {
    let mut text = Vec::new();
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let escape = match canvas.get(x, y) {
                1 => "0;90;100m",
                2 => "0;37;47m",
                3 => "0;97;107m",
                _ => "0;30;40m",
            };
            text.extend_from_slice(format!("\x1b[{escape} \x1b[0m").as_bytes());
        }
        if y != canvas.height - 1 {
            text.push(b'\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_rand_sequence() {
        // glibc: srand(1); rand() ...; and srand(42).
        let mut one = GlibcRand::new(1);
        let got: Vec<i32> = (0..3).map(|_| one.next()).collect();
        assert_eq!(got, [1_804_289_383, 846_930_886, 1_681_692_777]);
        let mut seeded = GlibcRand::new(42);
        assert_eq!(seeded.next(), 71_876_166);
        // srand(0) is srand(1).
        assert_eq!(GlibcRand::new(0).next(), 1_804_289_383);
    }

    #[test]
    fn bresenham_line_includes_both_ends() {
        let mut canvas = Canvas::new(5, 3, 0);
        canvas.line((0, 0), (4, 2), 1);
        let lit: Vec<(i32, i32)> = (0..3)
            .flat_map(|y| (0..5).map(move |x| (x, y)))
            .filter(|&(x, y)| canvas.get(x, y) == 1)
            .collect();
        assert_eq!(lit, [(0, 0), (1, 0), (2, 1), (3, 1), (4, 2)]);
        // Off the canvas: nothing drawn, nothing read.
        canvas.set(-1, 7, 1);
        assert_eq!(canvas.get(-1, 7), 0);
    }

    #[test]
    fn braille_dots_follow_redis_bit_order() {
        let mut canvas = Canvas::new(2, 4, 0);
        canvas.set(0, 0, 1); // bit 0
        canvas.set(1, 3, 1); // bit 7
        // U+2881, then no newline: the one row group starts at y = 0, not height - 1.
        assert_eq!(render_braille(&canvas), "\u{2881}\n".as_bytes());
        let one_row = Canvas::new(2, 1, 0);
        assert_eq!(render_braille(&one_row), "\u{2800}".as_bytes());
    }

    #[test]
    fn schotter_without_chance_is_redis_s() {
        // redis-server 7.0.15: LOLWUT VERSION 5 1 1 1 (two rows of two pixels only).
        let mut rand = GlibcRand::new(1);
        let canvas = draw_schotter(1, 1, 1, &mut rand);
        assert_eq!(render_braille(&canvas), "\u{280b}\n".as_bytes());
    }

    /// The canvas as one digit per pixel, a line per row.
    fn digits(canvas: &Canvas) -> String {
        let mut text = String::new();
        for y in 0..canvas.height {
            for x in 0..canvas.width {
                text.push(char::from(b'0' + canvas.get(x, y)));
            }
            text.push('\n');
        }
        text
    }

    /// (width, height, h = h * 31 + pixel over all pixels, wrapping).
    fn fingerprint(canvas: &Canvas) -> (i32, i32, u64) {
        let hash = canvas
            .pixels
            .iter()
            .fold(0u64, |h, &p| h.wrapping_mul(31).wrapping_add(u64::from(p)));
        (canvas.width, canvas.height, hash)
    }

    // The expectations below come from Redis 7.0.15's lolwut.c/lolwut5.c/lolwut6.c drawing
    // functions compiled with gcc -O2 on x86-64 glibc, after `srand(seed)`.

    #[test]
    fn schotter_with_chance_is_redis_s() {
        let canvas = draw_schotter(6, 2, 4, &mut GlibcRand::new(1));
        let want = "000000000000\n000000000000\n001111111110\n001000100010\n\
                    001000100010\n001000100010\n001111111110\n001000100010\n\
                    001000100010\n001110111110\n011111111110\n010001100010\n\
                    110001100010\n001111111110\n001111100100\n010001100100\n\
                    010001010100\n001001111100\n001001100000\n000110000000\n";
        assert_eq!(digits(&canvas), want);
        for (seed, cols, per_row, per_col, want) in [
            (1, 66, 8, 12, (132, 196, 13_193_134_725_201_658_177)),
            (7, 66, 8, 12, (132, 196, 16_745_914_947_726_965_594)),
            (3, 1000, 200, 200, (2000, 1999, 13_929_368_542_068_454_831)),
            (9, 13, 7, 33, (26, 107, 17_203_193_404_928_889_688)),
        ] {
            let canvas = draw_schotter(cols, per_row, per_col, &mut GlibcRand::new(seed));
            assert_eq!(
                fingerprint(&canvas),
                want,
                "seed {seed}, {cols} {per_row} {per_col}"
            );
        }
    }

    #[test]
    fn skyline_is_redis_s() {
        let mut canvas = Canvas::new(14, 8, 3);
        draw_skyline(&mut canvas, &mut GlibcRand::new(1));
        let want = "33333333333333\n33333333332222\n33333333222222\n33333333222221\n\
                    11122222222111\n00000022222111\n00000000222111\n00000000222111\n";
        assert_eq!(digits(&canvas), want);
        for (seed, cols, rows, want) in [
            (1, 80, 20, (80, 20, 14_905_610_458_067_987_567)),
            (7, 80, 20, (80, 20, 5_053_146_482_328_654_759)),
            (5, 1000, 1000, (1000, 1000, 8_337_371_839_560_521_602)),
            (2, 3, 50, (3, 50, 12_370_999_849_428_531_647)),
        ] {
            let mut canvas = Canvas::new(cols, rows, 3);
            draw_skyline(&mut canvas, &mut GlibcRand::new(seed));
            assert_eq!(fingerprint(&canvas), want, "seed {seed}, {cols} {rows}");
        }
    }

    #[test]
    fn skyline_of_one_row_is_all_sky() {
        let mut canvas = Canvas::new(3, 1, 3);
        draw_skyline(&mut canvas, &mut GlibcRand::new(7));
        assert_eq!(canvas.pixels, [3, 3, 3]);
    }
}
