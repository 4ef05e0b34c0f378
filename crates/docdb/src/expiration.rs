//! TTL arithmetic shared by reads and GC (format.md §7 step 8, §8; YugabyteDB's
//! `doc_ttl_util.cc`).

use dockv::HybridTime;
use dockv::value::Ttl;

/// When a value (or the subtree it roots) expires: the write time its TTL counts from, and
/// the TTL. `ttl: None` is YugabyteDB's `kMaxTtl`: "no TTL of its own, use the table's".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expiration {
    /// The hybrid time the TTL counts from.
    pub write_ht: HybridTime,
    /// The TTL; `None` falls back to the table default.
    pub ttl: Option<Ttl>,
}

impl Expiration {
    /// An expiration counting from `write_ht`.
    pub fn new(write_ht: HybridTime, ttl: Option<Ttl>) -> Self {
        Expiration { write_ht, ttl }
    }
}

/// The TTL in force for a value (`ComputeTTL`): its own, else the table's; `Ttl::RESET` (0)
/// means it never expires even under a table TTL. `None` = never expires.
pub fn effective_ttl(value_ttl: Option<Ttl>, table_ttl: Option<Ttl>) -> Option<Ttl> {
    match value_ttl {
        None => table_ttl,
        Some(Ttl::RESET) => None,
        Some(ttl) => Some(ttl),
    }
}

/// Whether a value written at `write_ht` with `ttl` has expired at `read_ht`
/// (`HasExpiredTTL`): the physical distance exceeds the TTL, or equals it and the read's
/// logical component is later.
pub fn has_expired(write_ht: HybridTime, ttl: Option<Ttl>, read_ht: HybridTime) -> bool {
    let Some(ttl) = ttl else { return false };
    if ttl == Ttl::RESET {
        return false;
    }
    let elapsed = i128::from(read_ht.physical_micros()) - i128::from(write_ht.physical_micros());
    let limit = i128::from(ttl.micros());
    elapsed > limit || (elapsed == limit && read_ht.logical() > write_ht.logical())
}

/// Whether `exp` has run out at `read_ht` for a record written at `record_ht`, with the
/// table default applied: a table TTL counts from the record's own time.
pub fn is_expired_at(
    exp: Expiration,
    record_ht: HybridTime,
    table_ttl: Option<Ttl>,
    read_ht: HybridTime,
) -> bool {
    let ttl = effective_ttl(exp.ttl, table_ttl);
    let from = if exp.ttl.is_some() {
        exp.write_ht
    } else {
        record_ht
    };
    has_expired(from, ttl, read_ht)
}

/// The expiration a record written at `record_ht` inherits when written: the most recently
/// written one among the ancestor levels (`chain`) that were still alive at `record_ht`. An
/// expired value counts as deleted from its expiry on, so it passes nothing down to what is
/// written later. (TTL changes written above the record after it are applied separately, by
/// [`effective_expiration`].)
pub fn inherited(chain: impl IntoIterator<Item = Expiration>, record_ht: HybridTime) -> Expiration {
    chain
        .into_iter()
        .filter(|exp| !has_expired(exp.write_ht, exp.ttl, record_ht))
        .fold(None, |best: Option<Expiration>, exp| match best {
            // On equal write times the nearer level wins.
            Some(b) if b.write_ht >= exp.write_ht => Some(b),
            _ => Some(exp),
        })
        .unwrap_or_default()
}

/// A record's own expiration: the newest TTL merge record's above it if there is one, else
/// its own TTL's. A merge record restates the expiration whole, and one is only written on a
/// live value, so the newest one holds even when the value's own TTL (or an older merge
/// record's) ran out before it: it was written while an older merge record kept the value
/// alive (SET EX, EXPIRE, then EXPIRE again after the SET's TTL).
pub fn own_expiration(
    record_ht: HybridTime,
    ttl: Option<Ttl>,
    merged: Option<Expiration>,
) -> Option<Expiration> {
    merged.or_else(|| ttl.map(|ttl| Expiration::new(record_ht, Some(ttl))))
}

/// The expiration in force for a record written at `record_ht`, given its own (TTL or merge
/// record) and its ancestors' levels (`chain`, parent first), as a sequence of events:
///
/// - when written, the record takes its own TTL, else the newest expiration among the
///   ancestor levels written before it and still alive then ([`inherited`]);
/// - TTL changes written above it later (a newer expiration on an ancestor level: a Redis
///   EXPIRE or PERSIST) apply in time order, each only if the record was still alive when it
///   was written.
///
/// So nothing revives an expired value, and dropping an expired level (GC) changes nothing
/// for the records below it.
pub fn effective_expiration(
    own: Option<Expiration>,
    chain: impl IntoIterator<Item = Expiration> + Clone,
    record_ht: HybridTime,
) -> Expiration {
    let earlier = chain
        .clone()
        .into_iter()
        .filter(|e| e.write_ht <= record_ht);
    let mut current = own.unwrap_or_else(|| inherited(earlier, record_ht));
    let mut later: Vec<Expiration> = chain
        .into_iter()
        .filter(|e| e.write_ht > record_ht)
        .collect();
    // Oldest first; on equal times the nearer level (earlier in `chain`) last, so it wins.
    later.reverse();
    later.sort_by_key(|e| e.write_ht);
    for change in later {
        if !has_expired(current.write_ht, current.ttl, change.write_ht) {
            current = change;
        }
    }
    current
}

/// Micros of physical time from `earlier` to `later` (may be negative).
pub fn physical_diff_micros(later: HybridTime, earlier: HybridTime) -> i64 {
    later.physical_micros() as i64 - earlier.physical_micros() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(v: u64) -> HybridTime {
        HybridTime::from_micros(v)
    }

    #[test]
    fn compute_ttl_a5() {
        let table = Some(Ttl(1000));
        assert_eq!(effective_ttl(Some(Ttl(2000)), table), Some(Ttl(2000)));
        assert_eq!(effective_ttl(None, table), Some(Ttl(1000)));
        assert_eq!(effective_ttl(Some(Ttl::RESET), table), None);
        assert_eq!(effective_ttl(None, None), None);
    }

    #[test]
    fn expiry_boundaries() {
        let ttl = Some(Ttl(1)); // 1 ms
        assert!(!has_expired(us(1000), ttl, us(2000)));
        assert!(has_expired(us(1000), ttl, us(2001)));
        assert!(has_expired(us(1000), ttl, HybridTime::new(2000, 1)));
        assert!(!has_expired(
            HybridTime::new(1000, 1),
            ttl,
            HybridTime::new(2000, 1)
        ));
        assert!(!has_expired(us(0), None, HybridTime::MAX));
        assert!(!has_expired(us(0), Some(Ttl::RESET), HybridTime::MAX));
    }

    #[test]
    fn expired_levels_pass_down_what_is_above_them() {
        let parent = Expiration::new(us(1000), Some(Ttl(1)));
        let root = Expiration::new(us(900), Some(Ttl(10)));
        assert_eq!(inherited([parent, root], us(1500)), parent);
        assert_eq!(inherited([parent, root], us(2000)), parent);
        assert_eq!(inherited([parent, root], us(2001)), root);
        assert_eq!(inherited([parent], us(2001)), Expiration::default());
        // A newer TTL higher up wins over an older one nearer.
        let later_root = Expiration::new(us(5000), Some(Ttl(10)));
        assert_eq!(inherited([parent, later_root], us(1500)), later_root);
    }

    #[test]
    fn newer_parent_ttl_does_not_revive() {
        let parent = Expiration::new(us(5000), None); // e.g. PERSIST at 5000
        let own = Expiration::new(us(1000), Some(Ttl(1)));
        assert_eq!(effective_expiration(Some(own), [parent], us(1000)), own);
        let alive = Expiration::new(us(4500), Some(Ttl(1)));
        assert_eq!(
            effective_expiration(Some(alive), [parent], us(4500)),
            parent
        );
    }

    /// The newest merge record restates a value's expiration, whatever its own TTL: it was
    /// written while the value was alive, perhaps through an older merge record.
    #[test]
    fn the_newest_merge_record_holds() {
        let merge = Expiration::new(us(3000), Some(Ttl(10)));
        assert_eq!(
            own_expiration(us(1000), Some(Ttl(1)), Some(merge)),
            Some(merge)
        );
        assert_eq!(own_expiration(us(1000), None, Some(merge)), Some(merge));
        assert_eq!(
            own_expiration(us(1000), Some(Ttl(1)), None),
            Some(Expiration::new(us(1000), Some(Ttl(1))))
        );
        assert_eq!(own_expiration(us(1000), None, None), None);
    }

    /// The model test's 1M-operation failure: a child inherits its parent's 5 ms TTL and expires
    /// before a PERSIST on the document; the PERSIST must not revive it. A child still alive at
    /// the PERSIST loses its TTL.
    #[test]
    fn later_ttl_changes_apply_only_to_live_records() {
        let parent = Expiration::new(us(1_369_641), Some(Ttl(5)));
        let persist = Expiration::new(us(1_379_751), None);
        let expired_child = effective_expiration(None, [parent, persist], us(1_372_822));
        assert_eq!(expired_child, parent);
        let live_child = effective_expiration(None, [parent, persist], us(1_376_000));
        assert_eq!(live_child, persist);
        // Its own TTL, alive at the PERSIST: the PERSIST applies.
        let own = Expiration::new(us(1_378_000), Some(Ttl(5)));
        assert_eq!(
            effective_expiration(Some(own), [parent, persist], us(1_378_000)),
            persist
        );
    }

    #[test]
    fn table_ttl_counts_from_the_record() {
        let inherited = Expiration::default();
        assert!(!is_expired_at(inherited, us(5000), Some(Ttl(1)), us(5500)));
        assert!(is_expired_at(inherited, us(5000), Some(Ttl(1)), us(6001)));
        let own = Expiration::new(us(1000), Some(Ttl(10)));
        assert!(is_expired_at(own, us(5000), None, us(11_001)));
    }
}
