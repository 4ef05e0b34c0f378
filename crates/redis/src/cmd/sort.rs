//! SORT and SORT_RO: a list's, set's or sorted set's elements, sorted numerically or
//! lexicographically (or by the values of other keys named by a pattern), with LIMIT, GET
//! and STORE, as Redis 7.0's `sortCommandGeneric` does them.

use std::cmp::Ordering;

use engine::Engine;

use super::hashes::{member_path, members_of};
use super::{Ctx, READONLY, Spec, WRITE, is, spec};
use crate::error::{CmdError, CmdResult};
use crate::frame::Frame;
use crate::number::parse_i64;
use crate::store::{Reads, RedisType, primitive_bytes};

pub(super) fn specs<E: Engine>() -> Vec<Spec<E>> {
    vec![
        spec("sort", -2, WRITE, 1, |c| sort(c, true)),
        spec("sort_ro", -2, READONLY, 1, |c| sort(c, false)),
    ]
}

/// SORT's options.
#[derive(Debug, Default, PartialEq)]
struct SortOptions {
    desc: bool,
    alpha: bool,
    /// LIMIT offset count, as given.
    limit: Option<(i64, i64)>,
    /// BY's pattern.
    by: Option<Vec<u8>>,
    /// GET's patterns, in order.
    get: Vec<Vec<u8>>,
    /// STORE's destination key.
    store: Option<Vec<u8>>,
}

impl SortOptions {
    /// Parses the options after the key as Redis does: in one pass, the last of each kind
    /// winning, STORE only where `may_store` (SORT, not SORT_RO).
    fn parse(args: &[Vec<u8>], may_store: bool) -> CmdResult<Self> {
        let mut opts = SortOptions::default();
        let mut i = 0;
        while i < args.len() {
            let (arg, left) = (&args[i], args.len() - i - 1);
            match () {
                _ if is(arg, "asc") => opts.desc = false,
                _ if is(arg, "desc") => opts.desc = true,
                _ if is(arg, "alpha") => opts.alpha = true,
                _ if is(arg, "limit") && left >= 2 => {
                    let number = |a: &[u8]| parse_i64(a).ok_or(CmdError::NotInteger);
                    opts.limit = Some((number(&args[i + 1])?, number(&args[i + 2])?));
                    i += 2;
                }
                _ if may_store && is(arg, "store") && left >= 1 => {
                    opts.store = Some(args[i + 1].clone());
                    i += 1;
                }
                _ if is(arg, "by") && left >= 1 => {
                    opts.by = Some(args[i + 1].clone());
                    i += 1;
                }
                _ if is(arg, "get") && left >= 1 => {
                    opts.get.push(args[i + 1].clone());
                    i += 1;
                }
                _ => return Err(CmdError::Syntax),
            }
            i += 1;
        }
        Ok(opts)
    }

    /// BY with a pattern without `*`: the elements keep their stored order.
    fn keeps_order(&self) -> bool {
        self.by.as_ref().is_some_and(|by| !by.contains(&b'*'))
    }
}

/// The elements to sort: a list's in order, a sorted set's by score, a set's in key order
/// (Redis's set order is its hash table's; it sorts them whenever the order shows in what
/// it stores). None for a missing key; WRONGTYPE for a string or hash.
fn elements<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    dk: &[u8],
) -> CmdResult<(Option<RedisType>, Vec<Vec<u8>>)> {
    let Some(info) = r.key_info(dk)? else {
        return Ok((None, Vec::new()));
    };
    let elements = match info.kind {
        RedisType::List => super::lists::all_elements(ctx, r, dk)?,
        RedisType::Set => members_of(r, dk, RedisType::Set)?
            .unwrap_or_default()
            .into_iter()
            .map(|(name, _)| name)
            .collect(),
        RedisType::SortedSet => super::zsets::members_in_order(r, dk)?,
        _ => return Err(CmdError::WrongType),
    };
    Ok((Some(info.kind), elements))
}

/// The value `pattern` names for `element` (Redis's `lookupKeyByPattern`): `#` is the
/// element itself; otherwise the first `*` is replaced by the element, and the key named
/// must be a string, or with `->field` after the `*`, a hash holding that field.
fn lookup<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    pattern: &[u8],
    element: &[u8],
) -> CmdResult<Option<Vec<u8>>> {
    if pattern == b"#" {
        return Ok(Some(element.to_vec()));
    }
    let Some(star) = pattern.iter().position(|&b| b == b'*') else {
        return Ok(None);
    };
    let after = &pattern[star + 1..];
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .filter(|&at| at + 2 < after.len());
    let (postfix, field) = match arrow {
        Some(at) => (&after[..at], Some(&after[at + 2..])),
        None => (after, None),
    };
    let mut key = pattern[..star].to_vec();
    key.extend_from_slice(element);
    key.extend_from_slice(postfix);
    let dk = ctx.store().doc_key(ctx.db(), &key);
    let Some(info) = r.key_info(&dk)? else {
        return Ok(None);
    };
    Ok(match (field, info.kind) {
        (None, RedisType::String) => Some(info.string_value()),
        (Some(field), RedisType::Hash) => r
            .child_record(&member_path(&dk, field))?
            .map(|record| primitive_bytes(&record.payload)),
        _ => None,
    })
}

/// A number as C's `strtod` reads it for SORT: leading spaces skipped, the whole rest
/// used, no NaN, nothing out of range (`ERANGE`: overflow, or underflow to zero or a
/// subnormal); an empty string is 0, as `strtod` leaves nothing unread. Hexadecimal
/// numbers, which `strtod` also takes, are refused.
fn sort_score(bytes: &[u8]) -> Option<f64> {
    if bytes.is_empty() {
        return Some(0.0);
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let value: f64 = text.parse().ok()?;
    let digits = text.split(['e', 'E']).next().unwrap_or_default();
    let literal_infinity = digits.chars().any(|c| c.is_ascii_alphabetic());
    let nonzero_digits = digits.chars().any(|c| ('1'..='9').contains(&c));
    let overflow = value.is_infinite() && !literal_infinity;
    let underflow = nonzero_digits && value.abs() < f64::MIN_POSITIVE;
    (!value.is_nan() && !overflow && !underflow).then_some(value)
}

/// What an element is sorted by.
enum Key {
    Number(f64),
    /// ALPHA by a pattern: the value, or none when the pattern names nothing.
    Text(Option<Vec<u8>>),
    /// ALPHA without a pattern: the element itself.
    Element,
}

/// Redis's `sortCompare`: numbers, equal ones by their elements' bytes; texts by bytes, a
/// missing one first.
fn compare(a: &(Vec<u8>, Key), b: &(Vec<u8>, Key)) -> Ordering {
    match (&a.1, &b.1) {
        (Key::Number(x), Key::Number(y)) => x
            .partial_cmp(y)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0)),
        (Key::Text(x), Key::Text(y)) => x.cmp(y),
        _ => a.0.cmp(&b.0),
    }
}

/// Sorts `elements` as `opts` asks (unless BY names no pattern), reading BY's values.
fn sorted<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    elements: Vec<Vec<u8>>,
    opts: &SortOptions,
) -> CmdResult<Vec<Vec<u8>>> {
    let mut keyed = Vec::with_capacity(elements.len());
    let mut not_a_number = false;
    for element in elements {
        let by = match &opts.by {
            Some(pattern) => lookup(ctx, r, pattern, &element)?,
            None => None,
        };
        let key = if opts.alpha {
            if opts.by.is_some() {
                Key::Text(by)
            } else {
                Key::Element
            }
        } else {
            let source = if opts.by.is_some() {
                by.as_deref()
            } else {
                Some(&element[..])
            };
            match source.map(sort_score) {
                // A missing BY value weighs 0.
                None => Key::Number(0.0),
                Some(Some(score)) => Key::Number(score),
                Some(None) => {
                    not_a_number = true;
                    Key::Number(0.0)
                }
            }
        };
        keyed.push((element, key));
    }
    if not_a_number {
        return Err(CmdError::err(
            "One or more scores can't be converted into double",
        ));
    }
    keyed.sort_by(|a, b| {
        let order = compare(a, b);
        if opts.desc { order.reverse() } else { order }
    });
    Ok(keyed.into_iter().map(|(element, _)| element).collect())
}

/// LIMIT as Redis bounds it: the positions `start..=end` of `len` elements (empty when
/// `end < start`).
fn window(limit: Option<(i64, i64)>, len: usize) -> std::ops::Range<usize> {
    let len = len as i64;
    let (offset, count) = limit.unwrap_or((0, -1));
    let mut start = offset.clamp(0, len);
    let count = count.clamp(-1, len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    if end < start {
        return 0..0;
    }
    start as usize..end as usize + 1
}

/// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
/// [STORE destination]; SORT_RO without STORE.
fn sort<E: Engine>(ctx: &mut Ctx<'_, '_, E>, may_store: bool) -> CmdResult<Frame> {
    let opts = SortOptions::parse(&ctx.args[2..], may_store)?;
    let Some(dst) = opts
        .store
        .as_ref()
        .map(|key| ctx.store().doc_key(ctx.db(), key))
    else {
        let mut r = ctx.reads(ctx.read_time());
        let items = select(ctx, &mut r, &opts)?;
        return Ok(Frame::Array(
            items
                .into_iter()
                .map(|item| item.map_or(Frame::Null, Frame::Bulk))
                .collect(),
        ));
    };
    ctx.store().write(|batch, ht| {
        let mut r = ctx.reads(ht);
        let items: Vec<Vec<u8>> = select(ctx, &mut r, &opts)?
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        super::lists::store_list(ctx, batch, &dst, ht, &items)?;
        Ok(Frame::Integer(items.len() as i64))
    })
}

/// The reply's items: the selected elements, or for each the values GET names (`None`
/// where a pattern names nothing).
fn select<E: Engine>(
    ctx: &Ctx<'_, '_, E>,
    r: &mut Reads<'_, '_, E>,
    opts: &SortOptions,
) -> CmdResult<Vec<Option<Vec<u8>>>> {
    let (kind, mut elements) = elements(ctx, r, &ctx.key(1))?;
    let is_set = kind == Some(RedisType::Set);
    if !opts.keeps_order() {
        elements = sorted(ctx, r, elements, opts)?;
    } else if is_set && opts.store.is_some() {
        // What STORE keeps would show a set's order: Redis sorts it as ALPHA then.
        let alpha = SortOptions {
            desc: opts.desc,
            alpha: true,
            ..SortOptions::default()
        };
        elements = sorted(ctx, r, elements, &alpha)?;
    } else if opts.desc && !is_set {
        elements.reverse();
    }
    let range = window(opts.limit, elements.len());
    let chosen = elements.get(range).unwrap_or_default();
    if opts.get.is_empty() {
        return Ok(chosen.iter().cloned().map(Some).collect());
    }
    let mut items = Vec::with_capacity(chosen.len() * opts.get.len());
    for element in chosen {
        for pattern in &opts.get {
            items.push(lookup(ctx, r, pattern, element)?);
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_as_strtod_does() {
        assert_eq!(sort_score(b"3"), Some(3.0));
        assert_eq!(sort_score(b"  -2.5"), Some(-2.5));
        assert_eq!(sort_score(b""), Some(0.0));
        assert_eq!(sort_score(b"1e3"), Some(1000.0));
        assert_eq!(sort_score(b".5"), Some(0.5));
        assert_eq!(sort_score(b"inf"), Some(f64::INFINITY));
        assert_eq!(sort_score(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(sort_score(b"0e5"), Some(0.0));
        for bad in [
            &b"nan"[..],
            b"1e400",
            b"-1e400",
            b"1e-400",
            b"1e-310",
            b" ",
            b"2 ",
            b"x",
            b"1x",
        ] {
            assert_eq!(sort_score(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    /// Redis's LIMIT arithmetic (sort.c): an offset past the end or a zero count selects
    /// nothing, a negative count everything after the offset.
    #[test]
    fn limits_bound_as_redis_bounds_them() {
        assert_eq!(window(None, 5), 0..5);
        assert_eq!(window(Some((1, 2)), 5), 1..3);
        assert_eq!(window(Some((-3, 2)), 5), 0..2);
        assert_eq!(window(Some((3, -1)), 5), 3..5);
        assert_eq!(window(Some((3, 100)), 5), 3..5);
        assert_eq!(window(Some((5, 1)), 5), 0..0);
        assert_eq!(window(Some((0, 0)), 5), 0..0);
        assert_eq!(window(None, 0), 0..0);
    }

    #[test]
    fn options_parse_in_one_pass() {
        let args = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        let opts = SortOptions::parse(&args(&["desc", "ALPHA", "limit", "1", "2", "asc"]), true)
            .expect("options");
        assert!(!opts.desc && opts.alpha);
        assert_eq!(opts.limit, Some((1, 2)));
        assert!(matches!(
            SortOptions::parse(&args(&["store", "d"]), false),
            Err(CmdError::Syntax)
        ));
        assert!(matches!(
            SortOptions::parse(&args(&["limit", "x", "1"]), true),
            Err(CmdError::NotInteger)
        ));
        assert!(matches!(
            SortOptions::parse(&args(&["limit", "1"]), true),
            Err(CmdError::Syntax)
        ));
    }
}
