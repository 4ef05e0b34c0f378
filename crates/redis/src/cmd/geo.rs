//! GEO commands over sorted sets (a geo key is a sorted set whose scores are 52-bit
//! geohashes): GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE and the older
//! GEORADIUS, GEORADIUS_RO, GEORADIUSBYMEMBER and GEORADIUSBYMEMBER_RO, checking their
//! arguments in Redis 7.0's order (`geo.c`) and with its error texts. The arithmetic is
//! [`crate::geohash`]; members are read and written through the sorted-set helpers.

use docdb::reader::ChildRange;
use engine::Engine;

use super::zsets::{self, Scored, ZaddFlags};
use super::{Ctx, READONLY, Spec, WRITE, is, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::geohash::{self, Shape, ShapeKind};
use crate::number::{float_arg, int_arg, parse_f64};
use crate::store::{Reads, RedisType};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("geoadd", -5, WRITE, 1, geoadd),
        spec("geopos", -2, READONLY, 1, geopos),
        spec("geohash", -2, READONLY, 1, geohash),
        spec("geodist", -4, READONLY, 1, geodist),
        spec("georadius", -6, WRITE, 1, |c| search_write(c, Form::Radius)),
        spec("georadius_ro", -6, READONLY, 1, |c| {
            search_read(c, Form::RadiusRo)
        }),
        spec("georadiusbymember", -5, WRITE, 1, |c| {
            search_write(c, Form::ByMember)
        }),
        spec("georadiusbymember_ro", -5, READONLY, 1, |c| {
            search_read(c, Form::ByMemberRo)
        }),
        spec("geosearch", -7, READONLY, 1, |c| {
            search_read(c, Form::Search)
        }),
        spec("geosearchstore", -8, WRITE, 1, |c| {
            search_write(c, Form::SearchStore)
        }),
    ]
}

/// `ERR invalid longitude,latitude pair ...`, the numbers as C's `%f` prints them.
fn invalid_pair(longitude: f64, latitude: f64) -> CmdError {
    CmdError::err(format!(
        "invalid longitude,latitude pair {},{}",
        geohash::format_fixed(longitude, 6),
        geohash::format_fixed(latitude, 6)
    ))
}

/// A longitude and a latitude argument (Redis's `extractLongLatOrReply`): both must be
/// floats, then within the WGS84 limits.
fn lon_lat(longitude: &[u8], latitude: &[u8]) -> CmdResult<(f64, f64)> {
    let (longitude, latitude) = (float_arg(longitude)?, float_arg(latitude)?);
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&longitude)
        || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&latitude)
    {
        return Err(invalid_pair(longitude, latitude));
    }
    Ok((longitude, latitude))
}

/// A unit argument as meters per unit (any case).
fn unit_arg(unit: &[u8]) -> CmdResult<f64> {
    match () {
        _ if is(unit, "m") => Ok(1.0),
        _ if is(unit, "km") => Ok(1000.0),
        _ if is(unit, "ft") => Ok(0.3048),
        _ if is(unit, "mi") => Ok(1609.34),
        _ => Err(CmdError::err(
            "unsupported unit provided. please use M, KM, FT, MI",
        )),
    }
}

/// A non-negative float argument, or `ERR <missing>` when it is not a float.
fn number_arg(arg: &[u8], missing: &str) -> CmdResult<f64> {
    parse_f64(arg).ok_or_else(|| CmdError::err(missing))
}

/// `radius unit`: the radius in its unit and the unit's meters.
fn radius_args(radius: &[u8], unit: &[u8]) -> CmdResult<(ShapeKind, f64)> {
    let radius = number_arg(radius, "need numeric radius")?;
    if radius < 0.0 {
        return Err(CmdError::err("radius cannot be negative"));
    }
    Ok((ShapeKind::Circle { radius }, unit_arg(unit)?))
}

/// `width height unit`: the box in its unit and the unit's meters.
fn box_args(width: &[u8], height: &[u8], unit: &[u8]) -> CmdResult<(ShapeKind, f64)> {
    let width = number_arg(width, "need numeric width")?;
    let height = number_arg(height, "need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err(CmdError::err("height or width cannot be negative"));
    }
    Ok((ShapeKind::Box { width, height }, unit_arg(unit)?))
}

/// GEOADD key [NX|XX] [CH] lon lat member...: ZADD of the members at their points' scores
/// (Redis rewrites the command into a ZADD the same way).
fn geoadd<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let mut flags = ZaddFlags::default();
    let mut at = 2;
    while let Some(arg) = ctx.args.get(at) {
        match () {
            _ if is(arg, "nx") => flags.nx = true,
            _ if is(arg, "xx") => flags.xx = true,
            _ if is(arg, "ch") => flags.ch = true,
            _ => break,
        }
        at += 1;
    }
    let triples = &ctx.args[at..];
    // No triple at all is ZADD's syntax error.
    if triples.is_empty() || !triples.len().is_multiple_of(3) || (flags.nx && flags.xx) {
        return Err(CmdError::Syntax);
    }
    let mut pairs: Scored = Vec::with_capacity(triples.len() / 3);
    for triple in triples.chunks(3) {
        let (longitude, latitude) = lon_lat(&triple[0], &triple[1])?;
        let score = geohash::encode_score(longitude, latitude)
            .ok_or_else(|| invalid_pair(longitude, latitude))?;
        pairs.push((score as f64, triple[2].clone()));
    }
    zsets::zadd_pairs(ctx, &flags, pairs)
}

/// The scores of `members` in the sorted set at argument 1, none if it is missing.
fn scores_of<E: Engine>(ctx: &Ctx<'_, '_, E>, members: &[Vec<u8>]) -> CmdResult<Vec<Option<f64>>> {
    let mut r = ctx.reads(ctx.read_time());
    let dk = ctx.key(1);
    if r.typed(&dk, RedisType::SortedSet)?.is_none() {
        return Ok(vec![None; members.len()]);
    }
    members
        .iter()
        .map(|member| zsets::score_of(&mut r, &dk, member))
        .collect()
}

/// A coordinate: `,13.36138933897018433` in RESP3, a bulk string in RESP2.
fn coordinate(value: f64) -> Frame {
    Frame::DoubleText(geohash::format_coordinate(value))
}

/// The longitude and latitude of a stored score.
fn position(score: f64) -> Frame {
    let (longitude, latitude) = geohash::decode_score(score);
    Frame::Array(vec![coordinate(longitude), coordinate(latitude)])
}

/// GEOPOS key member...: each member's position, a null array where it is missing.
fn geopos<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let scores = scores_of(ctx, &ctx.args[2..])?;
    Ok(Frame::Array(
        scores
            .into_iter()
            .map(|score| score.map_or(Frame::NullArray, position))
            .collect(),
    ))
}

/// GEOHASH key member...: each member's 11-character geohash, null where it is missing.
fn geohash<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let scores = scores_of(ctx, &ctx.args[2..])?;
    Ok(Frame::Array(
        scores
            .into_iter()
            .map(|score| {
                score.map_or(Frame::Null, |s| {
                    Frame::Bulk(geohash::hash_string(s).into_bytes())
                })
            })
            .collect(),
    ))
}

/// GEODIST key member1 member2 [unit]: the unit is checked first, then the key; null when
/// the key or either member is missing.
fn geodist<E: Engine>(ctx: &mut Ctx<'_, '_, E>) -> CmdResult<Frame> {
    let to_meters = match ctx.args.len() {
        5 => unit_arg(ctx.arg(4))?,
        n if n > 5 => return Err(CmdError::Syntax),
        _ => 1.0,
    };
    let [Some(a), Some(b)] = scores_of(ctx, &ctx.args[2..4])?[..] else {
        return Ok(Frame::Null);
    };
    let ((lon1, lat1), (lon2, lat2)) = (geohash::decode_score(a), geohash::decode_score(b));
    let meters = geohash::distance(lon1, lat1, lon2, lat2);
    Ok(distance_reply(meters / to_meters))
}

/// A distance: a bulk string with 4 decimals, in either protocol.
fn distance_reply(distance: f64) -> Frame {
    Frame::Bulk(geohash::format_distance(distance).into_bytes())
}

/// Which command of the GEORADIUS family runs (Redis's flags for `georadiusGeneric`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// GEORADIUS key lon lat radius unit [options] [STORE|STOREDIST key].
    Radius,
    /// GEORADIUS_RO: GEORADIUS without STORE.
    RadiusRo,
    /// GEORADIUSBYMEMBER key member radius unit [options] [STORE|STOREDIST key].
    ByMember,
    /// GEORADIUSBYMEMBER_RO: GEORADIUSBYMEMBER without STORE.
    ByMemberRo,
    /// GEOSEARCH key FROMMEMBER|FROMLONLAT BYRADIUS|BYBOX [options].
    Search,
    /// GEOSEARCHSTORE dst key ... [STOREDIST].
    SearchStore,
}

impl Form {
    /// The position of the key searched.
    fn source(self) -> usize {
        if self == Form::SearchStore { 2 } else { 1 }
    }

    /// Whether STORE key and STOREDIST key are options.
    fn takes_store(self) -> bool {
        matches!(self, Form::Radius | Form::ByMember)
    }

    /// Whether FROMMEMBER, FROMLONLAT, BYRADIUS and BYBOX are options.
    fn is_search(self) -> bool {
        matches!(self, Form::Search | Form::SearchStore)
    }
}

/// The order of the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    /// As found (cell by cell, each in score order).
    None,
    Asc,
    Desc,
}

/// A point found (Redis's `geoPoint`).
#[derive(Debug, Clone)]
struct Point {
    longitude: f64,
    latitude: f64,
    /// In meters while searching, in the search's unit once returned.
    dist: f64,
    score: f64,
    member: Vec<u8>,
}

/// What a search ends with.
enum Outcome {
    /// The reply.
    Reply(Frame),
    /// The (score, member) pairs that replace the key at this argument position.
    Store(usize, Scored),
}

/// The position of `member` in the sorted set at `dk`.
fn member_position<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    member: &[u8],
) -> CmdResult<(f64, f64)> {
    match zsets::score_of(r, dk, member)? {
        Some(score) => Ok(geohash::decode_score(score)),
        None => Err(CmdError::err("could not decode requested zset member")),
    }
}

/// The read-only forms.
fn search_read<E: Engine>(ctx: &mut Ctx<'_, '_, E>, form: Form) -> CmdResult<Frame> {
    let mut r = ctx.reads(ctx.read_time());
    match search(ctx, &mut r, form)? {
        Outcome::Reply(frame) => Ok(frame),
        // They take no STORE option, so they never get here.
        Outcome::Store(..) => Err(CmdError::Syntax),
    }
}

/// The forms that may store their result: read and store in one write.
fn search_write<E: Engine>(ctx: &mut Ctx<'_, '_, E>, form: Form) -> CmdResult<Frame> {
    let ctx = &*ctx;
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        match search(ctx, &mut r, form)? {
            Outcome::Reply(frame) => Ok(frame),
            Outcome::Store(dest, members) => {
                zsets::store_scored(ctx, batch, &ctx.key(dest), ht, &members)
            }
        }
    })
}

/// A search's arguments, as [`SearchArgs::parse`] reads them.
struct SearchArgs {
    /// The centre, unless the key is missing (then FROMMEMBER is not looked up).
    center: Option<(f64, f64)>,
    /// The shape and its unit's size in meters.
    shape: Option<(ShapeKind, f64)>,
    /// The argument position of the key to store into.
    store: Option<usize>,
    store_dist: bool,
    /// WITHDIST, WITHHASH, WITHCOORD.
    with: [bool; 3],
    sort: Sort,
    any: bool,
    /// COUNT (0: none).
    count: i64,
}

impl SearchArgs {
    /// Reads the centre and shape of the fixed-position forms, then the options in order,
    /// each checked as it is read, then their combinations, as Redis's `georadiusGeneric`
    /// does. `found`: whether the key exists (FROMMEMBER and BYMEMBER's member are looked
    /// up only then).
    fn parse<E: Engine>(
        ctx: &Ctx<'_, '_, E>,
        r: &mut Reads<'_, '_, E>,
        form: Form,
        src: &[u8],
        found: bool,
    ) -> CmdResult<Self> {
        let args = ctx.args;
        let mut out = SearchArgs {
            center: None,
            shape: None,
            store: (form == Form::SearchStore).then_some(1),
            store_dist: false,
            with: [false; 3],
            sort: Sort::None,
            any: false,
            count: 0,
        };
        let base = match form {
            Form::Radius | Form::RadiusRo => {
                out.center = Some(lon_lat(&args[2], &args[3])?);
                out.shape = Some(radius_args(&args[4], &args[5])?);
                6
            }
            // Without the key, the options are still read, to pick the reply.
            Form::ByMember | Form::ByMemberRo if !found => 5,
            Form::ByMember | Form::ByMemberRo => {
                out.center = Some(member_position(r, src, &args[2])?);
                out.shape = Some(radius_args(&args[3], &args[4])?);
                5
            }
            Form::Search => 2,
            Form::SearchStore => 3,
        };
        let (mut from_member, mut from_lonlat) = (false, false);
        let (mut by_radius, mut by_box) = (false, false);
        let rest = &args[base..];
        let search = form.is_search();
        let mut i = 0;
        while i < rest.len() {
            let arg = &rest[i];
            let left = rest.len() - i - 1;
            match () {
                _ if is(arg, "withdist") => out.with[0] = true,
                _ if is(arg, "withhash") => out.with[1] = true,
                _ if is(arg, "withcoord") => out.with[2] = true,
                _ if is(arg, "any") => out.any = true,
                _ if is(arg, "asc") => out.sort = Sort::Asc,
                _ if is(arg, "desc") => out.sort = Sort::Desc,
                _ if is(arg, "count") && left >= 1 => {
                    out.count = int_arg(&rest[i + 1])?;
                    if out.count <= 0 {
                        return Err(CmdError::err("COUNT must be > 0"));
                    }
                    i += 1;
                }
                _ if (is(arg, "store") || is(arg, "storedist"))
                    && left >= 1
                    && form.takes_store() =>
                {
                    out.store = Some(base + i + 1);
                    out.store_dist = is(arg, "storedist");
                    i += 1;
                }
                _ if is(arg, "storedist") && form == Form::SearchStore => out.store_dist = true,
                _ if is(arg, "frommember") && left >= 1 && search && !from_lonlat => {
                    if found {
                        out.center = Some(member_position(r, src, &rest[i + 1])?);
                    }
                    from_member = true;
                    i += 1;
                }
                _ if is(arg, "fromlonlat") && left >= 2 && search && !from_member => {
                    out.center = Some(lon_lat(&rest[i + 1], &rest[i + 2])?);
                    from_lonlat = true;
                    i += 2;
                }
                _ if is(arg, "byradius") && left >= 2 && search && !by_box => {
                    out.shape = Some(radius_args(&rest[i + 1], &rest[i + 2])?);
                    by_radius = true;
                    i += 2;
                }
                _ if is(arg, "bybox") && left >= 3 && search && !by_radius => {
                    out.shape = Some(box_args(&rest[i + 1], &rest[i + 2], &rest[i + 3])?);
                    by_box = true;
                    i += 3;
                }
                _ => return Err(CmdError::Syntax),
            }
            i += 1;
        }
        out.check(
            form,
            args,
            [from_member || from_lonlat, by_radius || by_box],
        )?;
        Ok(out)
    }

    /// The combinations Redis refuses once every option is read; `[centred, shaped]`:
    /// whether GEOSEARCH got its FROM... and BY... options.
    fn check(&self, form: Form, args: &[Vec<u8>], [centred, shaped]: [bool; 2]) -> CmdResult<()> {
        if self.store.is_some() && self.with.iter().any(|&w| w) {
            let what = if form == Form::SearchStore {
                "GEOSEARCHSTORE"
            } else {
                "STORE option in GEORADIUS"
            };
            return Err(CmdError::err(format!(
                "{what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
            )));
        }
        let name = || String::from_utf8_lossy(&args[0]).into_owned();
        if form.is_search() && !centred {
            return Err(CmdError::err(format!(
                "exactly one of FROMMEMBER or FROMLONLAT can be specified for {}",
                name()
            )));
        }
        if form.is_search() && !shaped {
            return Err(CmdError::err(format!(
                "exactly one of BYRADIUS and BYBOX can be specified for {}",
                name()
            )));
        }
        if self.any && self.count == 0 {
            return Err(CmdError::err("the ANY argument requires COUNT argument"));
        }
        Ok(())
    }
}

/// Redis's `georadiusGeneric`: looks the key up (WRONGTYPE first), reads the arguments
/// ([`SearchArgs::parse`]); a missing key answers at that point. Otherwise the covering
/// cells are read, the points inside the shape kept, sorted (COUNT alone sorts ascending)
/// and cut to COUNT.
fn search<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    form: Form,
) -> CmdResult<Outcome> {
    let src = ctx.key(form.source());
    let found = r.typed(&src, RedisType::SortedSet)?.is_some();
    let args = SearchArgs::parse(ctx, r, form, &src, found)?;
    let (true, Some((longitude, latitude)), Some((kind, conversion))) =
        (found, args.center, args.shape)
    else {
        // A missing key (with it, the centre and shape are always known by now).
        return Ok(match args.store {
            Some(dest) => Outcome::Store(dest, Vec::new()),
            None => Outcome::Reply(Frame::Array(Vec::new())),
        });
    };
    let mut sort = args.sort;
    if args.count != 0 && sort == Sort::None && !args.any {
        sort = Sort::Asc;
    }
    let shape = Shape {
        longitude,
        latitude,
        conversion,
        kind,
    };
    let limit = if args.any { args.count as usize } else { 0 };
    let mut points = points_in(r, &src, &shape, limit)?;
    let returned = if args.count == 0 || (points.len() as i64) < args.count {
        points.len()
    } else {
        args.count as usize
    };
    if sort != Sort::None {
        let descending = sort == Sort::Desc;
        let cmp = |a: &Point, b: &Point| {
            let order = geohash::compare_ascending(a.dist, b.dist);
            if descending { -order } else { order }
        };
        if returned == points.len() {
            geohash::merge_sort(&mut points, &cmp);
        } else {
            geohash::partial_sort(&mut points, &cmp, 0, returned - 1);
        }
    }
    points.truncate(returned);
    for point in &mut points {
        point.dist /= conversion;
    }
    if let Some(dest) = args.store {
        let members = points
            .into_iter()
            .map(|p| (if args.store_dist { p.dist } else { p.score }, p.member))
            .collect();
        return Ok(Outcome::Store(dest, members));
    }
    Ok(Outcome::Reply(Frame::Array(
        points
            .into_iter()
            .map(|p| point_reply(p, args.with))
            .collect(),
    )))
}

/// The points of the sorted set at `dk` inside `shape`, cell by cell as Redis reads them
/// (Redis's `membersOfAllNeighbors`): a cell equal to the one read just before is skipped,
/// and with a `limit` (COUNT ANY) reading stops once that many are found.
fn points_in<E: Engine>(
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
    shape: &Shape,
    limit: usize,
) -> CmdResult<Vec<Point>> {
    let cells = shape.cells().in_order();
    let mut points = Vec::new();
    let full = |points: &Vec<Point>| limit != 0 && points.len() >= limit;
    let mut last = 0;
    for (i, cell) in cells.iter().enumerate() {
        if cell.is_zero() || (last != 0 && *cell == cells[last]) {
            continue;
        }
        if full(&points) {
            break;
        }
        let (min, max) = cell.score_range();
        let range = ChildRange {
            lower: Some(zsets::score_key(min as f64).encoded()),
            upper: Some(zsets::score_key(max as f64).encoded()),
            ..ChildRange::default()
        };
        for (score, member) in zsets::entries(r, dk, &range)? {
            let (longitude, latitude) = geohash::decode_score(score);
            if let Some(dist) = shape.distance_if_inside(longitude, latitude) {
                points.push(Point {
                    longitude,
                    latitude,
                    dist,
                    score,
                    member,
                });
            }
            if full(&points) {
                break;
            }
        }
        last = i;
    }
    Ok(points)
}

/// A result: the member alone, or with its distance, hash and coordinates as asked.
fn point_reply(point: Point, [with_dist, with_hash, with_coord]: [bool; 3]) -> Frame {
    let member = Frame::Bulk(point.member);
    if !(with_dist || with_hash || with_coord) {
        return member;
    }
    let mut item = vec![member];
    if with_dist {
        item.push(distance_reply(point.dist));
    }
    if with_hash {
        item.push(Frame::Integer(geohash::c_to_i64(point.score)));
    }
    if with_coord {
        item.push(Frame::Array(vec![
            coordinate(point.longitude),
            coordinate(point.latitude),
        ]));
    }
    Frame::Array(item)
}
