//! The geohash arithmetic of Redis's GEO commands, as its `geohash.c`, `geohash_helper.c`
//! and `geo.c` (Redis 7.0.15) compute it, so that scores, decoded coordinates, distances and
//! the members a search finds agree with Redis to the last bit.
//!
//! A point is stored as a sorted-set score: a 52-bit integer whose even bits (from bit 0)
//! are the latitude's cell index and whose odd bits are the longitude's, each coordinate cut
//! into 2^26 cells over -180..180 and -85.05112878..85.05112878 (Web Mercator's limits). A
//! search covers its shape with a cell of a coarser step and that cell's eight neighbours,
//! reads the score range of each, and keeps the points the exact shape test accepts.
//!
//! Also here, because Redis's replies depend on them: the order of results (glibc's stable
//! merge sort, or Redis's partial quicksort when COUNT cuts the list: they decide the order
//! of equal distances), and how coordinates (`%.17Lf`, trimmed) and distances (`%.4f`) are
//! printed. Pure functions: reading keys and replying are `cmd::geo`'s.

/// Smallest longitude.
pub const LONG_MIN: f64 = -180.0;
/// Largest longitude.
pub const LONG_MAX: f64 = 180.0;
/// Smallest latitude (Web Mercator's limit).
pub const LAT_MIN: f64 = -85.05112878;
/// Largest latitude (Web Mercator's limit).
pub const LAT_MAX: f64 = 85.05112878;
/// Bits per coordinate in a stored score.
pub const STEP_MAX: u8 = 26;
/// The Earth's radius in meters that every distance uses.
pub const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;
/// Half the Earth's circumference in Mercator meters (for the search step estimate).
const MERCATOR_MAX: f64 = 20037726.37;
/// Degrees to radians, as C computes `M_PI / 180.0`.
const D_R: f64 = std::f64::consts::PI / 180.0;

fn deg_rad(angle: f64) -> f64 {
    angle * D_R
}

fn rad_deg(angle: f64) -> f64 {
    angle / D_R
}

/// A geohash: `step` bits per coordinate, interleaved in the low `2 × step` bits of `bits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashBits {
    /// Latitude bits at even positions, longitude bits at odd ones.
    pub bits: u64,
    /// Bits per coordinate (1..=32); 0 with `bits` 0 marks an excluded search cell.
    pub step: u8,
}

impl HashBits {
    /// The marker of a neighbour cell a search skips (Redis's `GZERO`).
    pub const ZERO: HashBits = HashBits { bits: 0, step: 0 };

    /// Whether this is [`HashBits::ZERO`] (Redis's `HASHISZERO`).
    pub fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The hash widened to 52 bits (Redis's `geohashAlign52Bits`), for steps up to 26.
    pub fn align52(&self) -> u64 {
        self.bits << 52u32.saturating_sub(u32::from(self.step) * 2)
    }

    /// The scores `[min, max)` of every stored point inside this cell (Redis's
    /// `scoresOfGeoHashBox`).
    pub fn score_range(&self) -> (u64, u64) {
        let next = HashBits {
            bits: self.bits.wrapping_add(1),
            step: self.step,
        };
        (self.align52(), next.align52())
    }
}

/// A coordinate interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The low end.
    pub min: f64,
    /// The high end.
    pub max: f64,
}

impl Interval {
    fn is_zero(&self) -> bool {
        self.min == 0.0 && self.max == 0.0
    }
}

/// The longitudes and latitudes a stored score covers.
pub const WGS84: (Interval, Interval) = (
    Interval {
        min: LONG_MIN,
        max: LONG_MAX,
    },
    Interval {
        min: LAT_MIN,
        max: LAT_MAX,
    },
);

/// The standard geohash ranges GEOHASH's strings use.
pub const STANDARD: (Interval, Interval) = (
    Interval {
        min: -180.0,
        max: 180.0,
    },
    Interval {
        min: -90.0,
        max: 90.0,
    },
);

/// The cell a hash names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Area {
    /// The cell's longitudes.
    pub longitude: Interval,
    /// The cell's latitudes.
    pub latitude: Interval,
}

/// Spreads the bits of `x` to the even positions and those of `y` to the odd ones.
fn interleave64(x: u32, y: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The inverse of [`interleave64`]: even bits in the low half, odd bits in the high half.
fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let (mut x, mut y) = (interleaved, interleaved >> 1);
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// C's conversion of a double to an unsigned 32-bit integer as x86-64 code does it (through
/// a 64-bit conversion; the values here are in `0..=2^32`).
fn c_to_u32(value: f64) -> u32 {
    c_to_i64(value) as u32
}

/// C's conversion of a double to a 64-bit integer on x86-64 (`cvttsd2si`): truncation
/// toward zero, and `i64::MIN` for NaN and anything out of range. WITHHASH prints a score
/// this way.
pub fn c_to_i64(value: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if value.is_nan() || !(-LIMIT..LIMIT).contains(&value) {
        i64::MIN
    } else {
        value as i64
    }
}

/// C's `(uint64_t)score` as gcc compiles it for x86-64: in range, the integer part; below
/// zero, the two's complement of the truncated value; otherwise what `cvttsd2si` makes of
/// it. Redis decodes any sorted-set score this way, geo or not.
pub fn score_bits(score: f64) -> u64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if score >= LIMIT {
        (c_to_i64(score - LIMIT) as u64) ^ (1 << 63)
    } else {
        c_to_i64(score) as u64
    }
}

/// The hash of `step` bits per coordinate of the point, within `ranges` (longitudes,
/// latitudes); `None` outside them or the WGS84 limits, or for a step outside 1..=32
/// (Redis's `geohashEncode`).
pub fn encode(
    ranges: (Interval, Interval),
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<HashBits> {
    let (long_range, lat_range) = ranges;
    if step == 0 || step > 32 || lat_range.is_zero() || long_range.is_zero() {
        return None;
    }
    let outside = |value: f64, range: Interval| value < range.min || value > range.max;
    let (long_limits, lat_limits) = WGS84;
    if outside(longitude, long_limits)
        || outside(latitude, lat_limits)
        || outside(longitude, long_range)
        || outside(latitude, lat_range)
    {
        return None;
    }
    let cells = (1u64 << step) as f64;
    let lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min) * cells;
    let long_offset = (longitude - long_range.min) / (long_range.max - long_range.min) * cells;
    Some(HashBits {
        bits: interleave64(c_to_u32(lat_offset), c_to_u32(long_offset)),
        step,
    })
}

/// The 52-bit score GEOADD stores for a valid point.
pub fn encode_score(longitude: f64, latitude: f64) -> Option<u64> {
    encode(WGS84, longitude, latitude, STEP_MAX).map(|hash| hash.align52())
}

/// The cell `hash` names within `ranges`; `None` for [`HashBits::ZERO`] or a step past 32
/// (Redis's `geohashDecode`). Indexes past the end of a range (scores that are not geohashes) give
/// cells past it, as in Redis.
pub fn decode(ranges: (Interval, Interval), hash: HashBits) -> Option<Area> {
    let (long_range, lat_range) = ranges;
    if hash.is_zero() || hash.step > 32 || lat_range.is_zero() || long_range.is_zero() {
        return None;
    }
    let separated = deinterleave64(hash.bits);
    let lat_index = separated as u32;
    let long_index = (separated >> 32) as u32;
    let cells = (1u64 << hash.step) as f64;
    // As C computes `min + (index * 1.0 / cells) * scale`, the next index in 32 bits.
    let at = |range: Interval, index: u32| {
        range.min + (f64::from(index) * 1.0 / cells) * (range.max - range.min)
    };
    Some(Area {
        latitude: Interval {
            min: at(lat_range, lat_index),
            max: at(lat_range, lat_index.wrapping_add(1)),
        },
        longitude: Interval {
            min: at(long_range, long_index),
            max: at(long_range, long_index.wrapping_add(1)),
        },
    })
}

/// The centre of a cell, kept within the WGS84 limits (Redis's
/// `geohashDecodeAreaToLongLat`).
fn center(area: &Area) -> (f64, f64) {
    let longitude = (area.longitude.min + area.longitude.max) / 2.0;
    let latitude = (area.latitude.min + area.latitude.max) / 2.0;
    (
        longitude.clamp(LONG_MIN, LONG_MAX),
        latitude.clamp(LAT_MIN, LAT_MAX),
    )
}

/// The (longitude, latitude) a stored score stands for: the centre of its cell, as GEOPOS
/// reports it (Redis's `decodeGeohash`). Every score decodes, geohash or not.
pub fn decode_score(score: f64) -> (f64, f64) {
    let hash = HashBits {
        bits: score_bits(score),
        step: STEP_MAX,
    };
    // A step of 26 is never the zero marker, so the cell always exists.
    decode(WGS84, hash).map_or((0.0, 0.0), |area| center(&area))
}

/// GEOHASH's 11-character string of a stored score: its point re-encoded over the standard
/// ranges, 5 bits per character, the last character standing for zero bits.
pub fn hash_string(score: f64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (longitude, latitude) = decode_score(score);
    let bits = encode(STANDARD, longitude, latitude, STEP_MAX).map_or(0, |hash| hash.bits);
    (0..11)
        .map(|i| {
            let index = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            char::from(ALPHABET[index as usize])
        })
        .collect()
}

/// Longitude's bits of an interleaved hash (the even positions from the top).
const X_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
/// Latitude's bits.
const Y_BITS: u64 = 0x5555_5555_5555_5555;

/// `hash` moved one cell along the axis whose bits are `axis` (east for [`X_BITS`], north
/// for [`Y_BITS`]) when `d > 0`, back when `d < 0`, wrapping around: the other axis's
/// bits are set so that the addition's carry skips them.
fn move_along(hash: &mut HashBits, d: i8, axis: u64) {
    if d == 0 {
        return;
    }
    let width = 64 - u32::from(hash.step) * 2;
    let mut moving = hash.bits & axis;
    let kept = hash.bits & !axis;
    let zz = !axis >> width;
    if d > 0 {
        moving = moving.wrapping_add(zz + 1);
    } else {
        moving |= zz;
        moving = moving.wrapping_sub(zz + 1);
    }
    moving &= axis >> width;
    hash.bits = moving | kept;
}

/// `hash` moved by `dx` cells east and `dy` north.
fn moved(hash: HashBits, dx: i8, dy: i8) -> HashBits {
    let mut out = hash;
    move_along(&mut out, dx, X_BITS);
    move_along(&mut out, dy, Y_BITS);
    out
}

/// The step of the cells a search of `range_meters` around latitude `lat` starts from
/// (Redis's `geohashEstimateStepsByRadius`).
pub fn estimate_steps_by_radius(range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut range_meters = range_meters;
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// What a search covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShapeKind {
    /// Points within `radius` units of the centre.
    Circle {
        /// In the search's unit.
        radius: f64,
    },
    /// Points within `width / 2` units east or west and `height / 2` north or south.
    Box {
        /// In the search's unit.
        width: f64,
        /// In the search's unit.
        height: f64,
    },
}

/// A search area (Redis's `GeoShape`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// The centre's longitude.
    pub longitude: f64,
    /// The centre's latitude.
    pub latitude: f64,
    /// Meters per unit (M 1, KM 1000, FT 0.3048, MI 1609.34).
    pub conversion: f64,
    /// Circle or box.
    pub kind: ShapeKind,
}

/// The cells a search reads (Redis's `GeoHashRadius`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cells {
    /// The centre cell.
    pub hash: HashBits,
    /// The centre cell's extent.
    pub area: Area,
    /// North, south, east, west, north-east, north-west, south-east, south-west; those the
    /// search can skip are [`HashBits::ZERO`].
    pub neighbors: [HashBits; 8],
}

impl Cells {
    /// The centre cell then its neighbours, in the order Redis reads them.
    pub fn in_order(&self) -> [HashBits; 9] {
        let n = &self.neighbors;
        [self.hash, n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7]]
    }
}

impl Shape {
    /// The longitudes and latitudes the shape spans: `[min_lon, min_lat, max_lon, max_lat]`
    /// (Redis's `geohashBoundingBox`, which widens the longitudes by the edge nearer a pole).
    pub fn bounding_box(&self) -> [f64; 4] {
        let (height, width) = match self.kind {
            ShapeKind::Circle { radius } => (self.conversion * radius, self.conversion * radius),
            ShapeKind::Box { width, height } => (
                self.conversion * (height / 2.0),
                self.conversion * (width / 2.0),
            ),
        };
        let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
        let long_delta_top =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(self.latitude + lat_delta).cos());
        let long_delta_bottom =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(self.latitude - lat_delta).cos());
        let long_delta = if self.latitude < 0.0 {
            long_delta_bottom
        } else {
            long_delta_top
        };
        [
            self.longitude - long_delta,
            self.latitude - lat_delta,
            self.longitude + long_delta,
            self.latitude + lat_delta,
        ]
    }

    /// The cells that cover the shape (Redis's `geohashCalculateAreasByShapeWGS84`): the
    /// centre's cell at the estimated step (one coarser when a neighbour would not reach the
    /// bounding box), and its neighbours, minus those on a side the box does not reach.
    pub fn cells(&self) -> Cells {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounding_box();
        let radius_meters = match self.kind {
            ShapeKind::Circle { radius } => radius,
            ShapeKind::Box { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        } * self.conversion;
        let mut steps = estimate_steps_by_radius(radius_meters, self.latitude);
        let around = |steps: u8| {
            let hash = encode(WGS84, self.longitude, self.latitude, steps).unwrap_or(HashBits {
                bits: 0,
                step: steps,
            });
            let neighbors = [
                moved(hash, 0, 1),
                moved(hash, 0, -1),
                moved(hash, 1, 0),
                moved(hash, -1, 0),
                moved(hash, 1, 1),
                moved(hash, -1, 1),
                moved(hash, 1, -1),
                moved(hash, -1, -1),
            ];
            (hash, neighbors)
        };
        let area_of = |hash: HashBits| {
            decode(WGS84, hash).unwrap_or(Area {
                longitude: Interval { min: 0.0, max: 0.0 },
                latitude: Interval { min: 0.0, max: 0.0 },
            })
        };
        let (mut hash, mut neighbors) = around(steps);
        let [north, south, east, west] = [0, 1, 2, 3].map(|i| area_of(neighbors[i]));
        let decrease_step = north.latitude.max < max_lat
            || south.latitude.min > min_lat
            || east.longitude.max < max_lon
            || west.longitude.min > min_lon;
        if steps > 1 && decrease_step {
            steps -= 1;
            (hash, neighbors) = around(steps);
        }
        let area = area_of(hash);
        if steps >= 2 {
            let mut skip = |indexes: [usize; 3]| {
                for i in indexes {
                    neighbors[i] = HashBits::ZERO;
                }
            };
            // Indexes into `neighbors`: N 0, S 1, E 2, W 3, NE 4, NW 5, SE 6, SW 7.
            if area.latitude.min < min_lat {
                skip([1, 7, 6]);
            }
            if area.latitude.max > max_lat {
                skip([0, 4, 5]);
            }
            if area.longitude.min < min_lon {
                skip([3, 7, 5]);
            }
            if area.longitude.max > max_lon {
                skip([2, 6, 4]);
            }
        }
        Cells {
            hash,
            area,
            neighbors,
        }
    }

    /// The distance in meters from the centre to the point, if the point is inside the
    /// shape (Redis's `geoAppendIfWithinShape` tests).
    pub fn distance_if_inside(&self, longitude: f64, latitude: f64) -> Option<f64> {
        match self.kind {
            ShapeKind::Circle { radius } => {
                let d = distance(self.longitude, self.latitude, longitude, latitude);
                // Only a distance past the radius is out (a NaN one is in, as in Redis).
                if d > radius * self.conversion {
                    None
                } else {
                    Some(d)
                }
            }
            ShapeKind::Box { width, height } => distance_if_in_rectangle(
                width * self.conversion,
                height * self.conversion,
                (self.longitude, self.latitude),
                (longitude, latitude),
            ),
        }
    }
}

/// The distance in meters between two latitudes on one meridian.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The great-circle distance in meters (haversine; on one meridian, the latitude
/// difference), as Redis 7.0.15's `geohashGetDistance` computes it.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (lon1r, lon2r) = (deg_rad(lon1), deg_rad(lon2));
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

/// The distance from `center` to `point` if the point is within `width_m / 2` meters east
/// or west (measured along the point's latitude) and `height_m / 2` north or south
/// (Redis's `geohashGetDistanceIfInRectangle`).
fn distance_if_in_rectangle(
    width_m: f64,
    height_m: f64,
    center: (f64, f64),
    point: (f64, f64),
) -> Option<f64> {
    let ((x1, y1), (x2, y2)) = (center, point);
    if lat_distance(y2, y1) > height_m / 2.0 {
        return None;
    }
    if distance(x2, y2, x1, y2) > width_m / 2.0 {
        return None;
    }
    Some(distance(x1, y1, x2, y2))
}

/// Redis's ascending distance comparator (`sort_gp_asc`): 1, 0 or -1, and -1 whenever a
/// NaN is involved.
pub fn compare_ascending(a: f64, b: f64) -> i32 {
    if a > b {
        1
    } else if a == b {
        0
    } else {
        -1
    }
}

/// Sorts `items` as glibc's `qsort` does (a stable top-down merge sort taking the left item
/// unless `cmp` says it is greater), which decides the order of equal distances.
pub fn merge_sort<T: Clone>(items: &mut [T], cmp: &impl Fn(&T, &T) -> i32) {
    if items.len() <= 1 {
        return;
    }
    let mid = items.len() / 2;
    merge_sort(&mut items[..mid], cmp);
    merge_sort(&mut items[mid..], cmp);
    let mut merged = Vec::with_capacity(items.len());
    let (mut i, mut j) = (0, mid);
    while i < mid && j < items.len() {
        if cmp(&items[i], &items[j]) <= 0 {
            merged.push(items[i].clone());
            i += 1;
        } else {
            merged.push(items[j].clone());
            j += 1;
        }
    }
    merged.extend_from_slice(&items[i..mid]);
    let done = merged.len();
    items[..done].clone_from_slice(&merged);
}

/// Puts the items that belong at positions `lrange..=rrange` there, in order, as Redis's
/// `pqsort` (the BSD quicksort of Bentley and McIlroy, skipping partitions outside the
/// range) does: COUNT sorts only the results it returns, and this decides the order of
/// equal distances. Redis 7.0.15 answers as this version without the switch to insertion
/// sort after a partition that swapped nothing.
pub fn partial_sort<T>(
    items: &mut [T],
    cmp: &impl Fn(&T, &T) -> i32,
    lrange: usize,
    rrange: usize,
) {
    pqsort(items, 0, items.len(), cmp, (lrange, rrange));
}

/// Insertion sort of `items[base..base + n]`.
fn insertion_sort<T>(items: &mut [T], base: usize, n: usize, cmp: &impl Fn(&T, &T) -> i32) {
    for m in base + 1..base + n {
        let mut l = m;
        while l > base && cmp(&items[l - 1], &items[l]) > 0 {
            items.swap(l, l - 1);
            l -= 1;
        }
    }
}

/// The median of three positions, as `med3` picks it.
fn med3<T>(items: &[T], a: usize, b: usize, c: usize, cmp: &impl Fn(&T, &T) -> i32) -> usize {
    let (va, vb, vc) = (&items[a], &items[b], &items[c]);
    if cmp(va, vb) < 0 {
        if cmp(vb, vc) < 0 {
            b
        } else if cmp(va, vc) < 0 {
            c
        } else {
            a
        }
    } else if cmp(vb, vc) > 0 {
        b
    } else if cmp(va, vc) < 0 {
        a
    } else {
        c
    }
}

/// Swaps `items[a..a + n]` with `items[b..b + n]`.
fn swap_runs<T>(items: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        items.swap(a + i, b + i);
    }
}

/// Whether `base..base + n` misses the wanted positions entirely.
fn outside((lrange, rrange): (usize, usize), base: usize, n: usize) -> bool {
    let last = base + n - 1;
    (lrange < base && rrange < base) || (lrange > last && rrange > last)
}

/// `_pqsort` over `items[base..base + n]`, its tail recursion as a loop.
fn pqsort<T>(
    items: &mut [T],
    mut base: usize,
    mut n: usize,
    cmp: &impl Fn(&T, &T) -> i32,
    range: (usize, usize),
) {
    loop {
        if n < 7 {
            insertion_sort(items, base, n, cmp);
            return;
        }
        let mut pm = base + n / 2;
        if n > 7 {
            let mut pl = base;
            let mut pn = base + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(items, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(items, pm - d, pm, pm + d, cmp);
                pn = med3(items, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(items, pl, pm, pn, cmp);
        }
        // The pivot sits at `base`; equal items gather at both ends, then move to the middle.
        items.swap(base, pm);
        let (mut pa, mut pb) = (base + 1, base + 1);
        let (mut pc, mut pd) = (base + n - 1, base + n - 1);
        loop {
            while pb <= pc {
                let order = cmp(&items[pb], &items[base]);
                if order > 0 {
                    break;
                }
                if order == 0 {
                    items.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let order = cmp(&items[pc], &items[base]);
                if order < 0 {
                    break;
                }
                if order == 0 {
                    items.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            items.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = base + n;
        let r = (pa - base).min(pb - pa);
        swap_runs(items, base, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        swap_runs(items, pb, pn - r, r);
        let r = pb - pa;
        if r > 1 && !outside(range, base, r) {
            pqsort(items, base, r, cmp, range);
        }
        let r = pd - pc;
        if r <= 1 {
            return;
        }
        base = pn - r;
        n = r;
        if outside(range, base, n) {
            return;
        }
    }
}

/// A coordinate as Redis prints it (`%.17Lf` of the double, trailing zeros and point
/// removed, `-0` as `0`).
pub fn format_coordinate(value: f64) -> String {
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.into();
    }
    let mut text = format_fixed(value, 17);
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" { "0".into() } else { text }
}

/// C's `%.<places>f`: NaN as `nan` or `-nan` by its sign, as glibc prints it.
pub fn format_fixed(value: f64, places: usize) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .into();
    }
    format!("{value:.places$}")
}

/// A distance as Redis prints it (`%.4f`).
pub fn format_distance(value: f64) -> String {
    format_fixed(value, 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Palermo and Catania, as Redis's GEOADD documentation adds them.
    const PALERMO: (f64, f64) = (13.361389, 38.115556);
    const CATANIA: (f64, f64) = (15.087269, 37.502669);

    fn score(point: (f64, f64)) -> f64 {
        encode_score(point.0, point.1).expect("a valid point") as f64
    }

    #[test]
    fn scores_match_redis() {
        // ZSCORE after GEOADD in redis-server 7.0.15.
        assert_eq!(encode_score(PALERMO.0, PALERMO.1), Some(3479099956230698));
        assert_eq!(encode_score(CATANIA.0, CATANIA.1), Some(3479447370796909));
        assert_eq!(encode_score(0.0, 0.0), Some(3377699720527872));
        // The largest longitude and latitude overflow the 26 bits, as in Redis.
        assert_eq!(encode_score(180.0, LAT_MAX), Some(13510798882111488));
        assert_eq!(encode_score(-180.0, LAT_MIN), Some(0));
        assert_eq!(encode_score(180.1, 0.0), None);
        assert_eq!(encode_score(0.0, -85.05112879), None);
    }

    #[test]
    fn decoded_coordinates_print_as_redis_prints_them() {
        let text = |score: f64| {
            let (x, y) = decode_score(score);
            (format_coordinate(x), format_coordinate(y))
        };
        // GEOPOS in redis-server 7.0.15.
        let expected = |x: &str, y: &str| (x.to_string(), y.to_string());
        assert_eq!(
            text(score(PALERMO)),
            expected("13.36138933897018433", "38.11555639549629859")
        );
        assert_eq!(
            text(score(CATANIA)),
            expected("15.08726745843887329", "37.50266842333162032")
        );
        assert_eq!(
            text(3377699720527872.0),
            expected("0.00000268220901489", "0.00000126736058093")
        );
        assert_eq!(
            text(13510798882111488.0),
            expected("180", "85.0511287799999991")
        );
    }

    #[test]
    fn any_score_decodes_as_c_converts_it() {
        // Scores that are not geohashes, with GEOPOS's answers in redis-server 7.0.15.
        let top_right = ("180", "85.0511287799999991");
        let bottom_left = ("-179.99999731779098511", "-85.05112751263942528");
        let bottom_right = ("180", "-85.05112751263942528");
        let cases: &[(f64, (&str, &str))] = &[
            (-1.0, top_right),
            (1e20, bottom_left),
            (f64::INFINITY, bottom_left),
            (f64::NEG_INFINITY, bottom_right),
            (1.5, ("-179.99999731779098511", "-85.05112497791824921")),
            (18446744073709551616.0, bottom_left),
            (9223372036854775808.0, bottom_right),
            (1.844674407370955e19, top_right),
            (-9.3e18, bottom_right),
            (-0.5, bottom_left),
            (
                4503599627370496.0,
                ("-179.99999731779098511", "85.0511287799999991"),
            ),
            (9007199254740992.0, bottom_right),
        ];
        for &(score, (x, y)) in cases {
            let (lon, lat) = decode_score(score);
            assert_eq!(
                (
                    format_coordinate(lon).as_str(),
                    format_coordinate(lat).as_str()
                ),
                (x, y),
                "score {score}"
            );
        }
    }

    #[test]
    fn hash_strings_match_redis() {
        // GEOHASH in redis-server 7.0.15.
        assert_eq!(hash_string(score(PALERMO)), "sqc8b49rny0");
        assert_eq!(hash_string(score(CATANIA)), "sqdtr74hyu0");
        assert_eq!(hash_string(3377699720527872.0), "s0000000000");
        assert_eq!(hash_string(13510798882111488.0), "bp05b5048p0");
        assert_eq!(hash_string(0.0), "00bh0hbj200");
        assert_eq!(hash_string(1.5), "00bh0hbj210");
    }

    #[test]
    fn distances_match_redis() {
        let (a, b) = (decode_score(score(PALERMO)), decode_score(score(CATANIA)));
        let d = distance(a.0, a.1, b.0, b.1);
        // GEODIST Sicily Palermo Catania [KM|MI|FT] in redis-server 7.0.15.
        assert_eq!(format_distance(d), "166274.1516");
        assert_eq!(format_distance(d / 1000.0), "166.2742");
        assert_eq!(format_distance(d / 1609.34), "103.3182");
        assert_eq!(format_distance(d / 0.3048), "545518.8700");
        assert_eq!(format_distance(distance(a.0, a.1, a.0, a.1)), "0.0000");
    }

    #[test]
    fn one_meridian_uses_the_latitude_difference() {
        // Redis 7.0.15 includes this point at the smaller radius and not below it: the
        // haversine formula would give 102307.05331436303 for the same two points.
        let (lon, lat) = decode_score(score(PALERMO));
        let d = distance(lon, 39.035366308388866, lon, lat);
        assert_eq!(d, 102307.05331436306);
        let nudged = distance(13.361389338970186, 39.035366308388866, lon, lat);
        assert_eq!(nudged, 102307.05331436303);
    }

    #[test]
    fn steps_shrink_with_the_radius_and_toward_the_poles() {
        assert_eq!(estimate_steps_by_radius(0.0, 0.0), 26);
        assert_eq!(estimate_steps_by_radius(1.0, 0.0), 24);
        assert_eq!(estimate_steps_by_radius(100_000.0, 0.0), 7);
        assert_eq!(estimate_steps_by_radius(100_000.0, 70.0), 6);
        assert_eq!(estimate_steps_by_radius(100_000.0, -81.0), 5);
        assert_eq!(estimate_steps_by_radius(5_000_000.0, 0.0), 2);
        assert_eq!(estimate_steps_by_radius(20_000_000.0, 0.0), 1);
        assert_eq!(estimate_steps_by_radius(f64::INFINITY, 0.0), 1);
    }

    #[test]
    fn cells_cover_the_search_area() {
        let shape = Shape {
            longitude: 15.0,
            latitude: 37.0,
            conversion: 1000.0,
            kind: ShapeKind::Circle { radius: 200.0 },
        };
        let cells = shape.cells();
        let [min_lon, min_lat, max_lon, max_lat] = shape.bounding_box();
        // The covered cells, as longitude/latitude intervals, reach the bounding box.
        let areas: Vec<Area> = cells
            .in_order()
            .into_iter()
            .filter(|h| !h.is_zero())
            .filter_map(|h| decode(WGS84, h))
            .collect();
        let lo_lon = areas
            .iter()
            .map(|a| a.longitude.min)
            .fold(f64::MAX, f64::min);
        let hi_lon = areas
            .iter()
            .map(|a| a.longitude.max)
            .fold(f64::MIN, f64::max);
        let lo_lat = areas
            .iter()
            .map(|a| a.latitude.min)
            .fold(f64::MAX, f64::min);
        let hi_lat = areas
            .iter()
            .map(|a| a.latitude.max)
            .fold(f64::MIN, f64::max);
        assert!(lo_lon <= min_lon && hi_lon >= max_lon, "{lo_lon} {hi_lon}");
        assert!(lo_lat <= min_lat && hi_lat >= max_lat, "{lo_lat} {hi_lat}");
        // Both Sicilian cities' scores fall in one of the cells' score ranges.
        for city in [PALERMO, CATANIA] {
            let s = score(city) as u64;
            let covered = cells.in_order().iter().filter(|h| !h.is_zero()).any(|h| {
                let (min, max) = h.score_range();
                (min..max).contains(&s)
            });
            assert!(covered, "{city:?}");
        }
    }

    #[test]
    fn neighbors_wrap_around_the_antimeridian() {
        let west_edge = encode(WGS84, -179.9, 0.0, 4).expect("valid");
        let east_edge = encode(WGS84, 179.9, 0.0, 4).expect("valid");
        assert_eq!(moved(west_edge, -1, 0), east_edge);
        assert_eq!(moved(east_edge, 1, 0), west_edge);
        assert_eq!(moved(moved(west_edge, 0, 1), 0, -1), west_edge);
    }

    #[test]
    fn shapes_test_points_as_redis_does() {
        let (lon, lat) = decode_score(score(PALERMO));
        let (clon, clat) = decode_score(score(CATANIA));
        let circle = |radius| Shape {
            longitude: clon,
            latitude: clat,
            conversion: 1.0,
            kind: ShapeKind::Circle { radius },
        };
        let d = distance(clon, clat, lon, lat);
        assert_eq!(circle(d).distance_if_inside(lon, lat), Some(d));
        let below = f64::from_bits(d.to_bits() - 1);
        assert_eq!(circle(below).distance_if_inside(lon, lat), None);
        let boxed = |width, height| Shape {
            longitude: clon,
            latitude: clat,
            conversion: 1000.0,
            kind: ShapeKind::Box { width, height },
        };
        // Palermo is about 152 km west and 68 km north of Catania.
        assert!(boxed(400.0, 400.0).distance_if_inside(lon, lat).is_some());
        assert!(boxed(300.0, 400.0).distance_if_inside(lon, lat).is_none());
        assert!(boxed(400.0, 130.0).distance_if_inside(lon, lat).is_none());
    }

    /// Sorts with `(key, id)` pairs compared by key only, so the ids show the tie order.
    fn ids(items: &[(f64, usize)]) -> Vec<usize> {
        items.iter().map(|&(_, id)| id).collect()
    }

    #[test]
    fn merge_sort_is_stable() {
        let mut items: Vec<(f64, usize)> = [3.0, 1.0, 2.0, 1.0, 3.0, 1.0]
            .into_iter()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        merge_sort(&mut items, &|a: &(f64, usize), b: &(f64, usize)| {
            compare_ascending(a.0, b.0)
        });
        assert_eq!(ids(&items), [1, 3, 5, 2, 0, 4]);
    }

    #[test]
    fn partial_sort_orders_ties_as_redis_does() {
        let cmp = |a: &(f64, usize), b: &(f64, usize)| compare_ascending(a.0, b.0);
        let run = |keys: &[f64], wanted: usize| {
            let mut items: Vec<(f64, usize)> = keys.iter().copied().zip(0..).collect();
            partial_sort(&mut items, &cmp, 0, wanted - 1);
            ids(&items)
        };
        // Orders Redis 7.0.15 returned for GEOSEARCH ... COUNT over results at these
        // distances (in the order they were found).
        let tied_first = [
            0.0, 0.0, 0.0, 0.0, 10.0, 21.0, 32.0, 43.0, 54.0, 65.0, 76.0, 87.0,
        ];
        assert_eq!(run(&tied_first, 10), (0..12).collect::<Vec<_>>());
        let sixteen = [
            0.0, 0.0, 0.0, 0.0, 0.1549, 6562.2003, 6537.889, 6562.1968, 3927.2092, 3919.6062,
            3919.606, 2126.7081, 5875.253, 5878.1371, 4133.1359, 3070.8927,
        ];
        assert_eq!(run(&sixteen, 10)[..10], [1, 2, 3, 0, 4, 11, 15, 10, 9, 8]);
        let twelve = [
            0.0, 0.0, 1706.5062, 9679.768, 9672.6726, 9672.6717, 7936.3896, 158.9914, 0.0009,
            2300.1332, 4897.4895, 10678.7391,
        ];
        assert_eq!(run(&twelve, 10)[..10], [0, 1, 8, 7, 2, 9, 10, 6, 5, 4]);
        // A long input: the wanted prefix is sorted, nothing is lost.
        let keys: Vec<f64> = (0..100).map(|i| f64::from((i * 37) % 11)).collect();
        let order = run(&keys, 10);
        let mut expected = keys.clone();
        expected.sort_by(f64::total_cmp);
        let prefix: Vec<f64> = order[..10].iter().map(|&i| keys[i]).collect();
        assert_eq!(prefix, expected[..10]);
        let mut all = order.clone();
        all.sort_unstable();
        assert_eq!(all, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn numbers_print_as_c_prints_them() {
        assert_eq!(format_fixed(200.0, 6), "200.000000");
        assert_eq!(format_fixed(-0.5, 6), "-0.500000");
        assert_eq!(format_fixed(f64::INFINITY, 6), "inf");
        assert_eq!(format_distance(0.03125), "0.0312");
        assert_eq!(format_distance(f64::NAN), "nan");
        assert_eq!(format_distance(-f64::NAN), "-nan");
        assert_eq!(format_coordinate(-1e-19), "0");
        assert_eq!(format_coordinate(2.5), "2.5");
        assert_eq!(format_coordinate(-3.0), "-3");
    }
}
