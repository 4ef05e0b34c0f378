//! The typed commands of the shell language (shell.md "Commands" and "Write operations").
//!
//! [`crate::parser`] turns one line into a [`Command`]; [`crate::exec`] runs it. Commands hold
//! the storage types directly (paths as [`SubDocKey`] without hybrid time, values as
//! [`PrimitiveValue`], documents as [`DocLiteral`]) so that executing them is a plain mapping
//! onto `docdb`'s API.

use docdb::{DocLiteral, InitMarkerBehavior};
use dockv::doc_key::{DocKey, SubDocKey};
use dockv::value::{PrimitiveValue, Ttl};
use dockv::{HybridTime, KeyEntryValue};

/// One line of shell input.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A blank line or a `# ...` comment: does nothing.
    Empty,
    /// `write @HT <op> [; <op>]...` (or `explain write ...` with `explain` set).
    Write(WriteCommand),
    /// `get <path> @HT [project <subkey>, ...]`.
    Get {
        /// The document root (no subkeys) or a path inside it.
        path: SubDocKey,
        /// Read time.
        read_ht: HybridTime,
        /// When present, only these first-level children of `path` are returned.
        projection: Option<Vec<KeyEntryValue>>,
    },
    /// `scan [from <DocKey>] [to <DocKey>] @HT [limit N] [reverse]`.
    Scan(ScanCommand),
    /// `compact @CUTOFF`: full compaction with that history cutoff.
    Compact {
        /// History cutoff.
        cutoff: HybridTime,
    },
    /// `flush`.
    Flush,
    /// `dump`.
    Dump,
    /// `set option ...`.
    SetOption(ShellOption),
    /// `stats`: GC counters summed over this session's compactions, and the last scan's read
    /// counters (an extension; shell.md does not list it).
    Stats,
}

/// A write batch, executed or only explained.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteCommand {
    /// `explain write`: print the batch instead of writing it.
    pub explain: bool,
    /// The batch's hybrid time.
    pub ht: HybridTime,
    /// The operations, in order; they share one batch and consecutive write ids.
    pub ops: Vec<WriteOp>,
}

/// `scan` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanCommand {
    /// Inclusive lower bound.
    pub from: Option<DocKey>,
    /// Exclusive upper bound.
    pub to: Option<DocKey>,
    /// Read time.
    pub read_ht: HybridTime,
    /// At most this many documents.
    pub limit: Option<usize>,
    /// Last document first.
    pub reverse: bool,
}

/// `set option <name> <value>`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShellOption {
    /// `init_markers required` / `optional`.
    InitMarkers(InitMarkerBehavior),
    /// `table_ttl <N>ms` / `table_ttl none`.
    TableTtl(Option<Ttl>),
}

/// One operation of a write batch (shell.md "Write operations").
#[derive(Debug, Clone, PartialEq)]
pub enum WriteOp {
    /// `set <path> = <value> [ttl <N>ms] [timestamp <µs>]`.
    Set {
        /// Where.
        path: SubDocKey,
        /// A primitive, `{}`, `[]`, `DEL` or `null`.
        value: PrimitiveValue,
        /// The value's TTL.
        ttl: Option<Ttl>,
        /// User timestamp in µs.
        user_timestamp: Option<i64>,
    },
    /// `insert <path> = <document> [ttl <N>ms]`: init marker, then the children.
    Insert {
        /// Where.
        path: SubDocKey,
        /// The document.
        doc: DocLiteral,
        /// TTL of every pair written.
        ttl: Option<Ttl>,
    },
    /// `extend <path> = <document> [ttl <N>ms]`: the children, no init marker.
    Extend {
        /// Where.
        path: SubDocKey,
        /// The document.
        doc: DocLiteral,
        /// TTL of every pair written.
        ttl: Option<Ttl>,
    },
    /// `delete <path>`.
    Delete {
        /// Where.
        path: SubDocKey,
    },
    /// `append <path> = [v, ...]` (optionally `ttl <N>ms`).
    Append {
        /// The list.
        path: SubDocKey,
        /// New elements.
        values: Vec<PrimitiveValue>,
        /// TTL of the new elements.
        ttl: Option<Ttl>,
    },
    /// `prepend <path> = [v, ...]` (optionally `ttl <N>ms`).
    Prepend {
        /// The list.
        path: SubDocKey,
        /// New elements, in the order they will read.
        values: Vec<PrimitiveValue>,
        /// TTL of the new elements.
        ttl: Option<Ttl>,
    },
    /// `list_set <path> <pos> = <value> read @HT` (`value: Some`) or
    /// `list_delete <path> <pos> read @HT` (`value: None`).
    ListSet {
        /// The list.
        path: SubDocKey,
        /// 0-based position among the elements visible at `read_ht`.
        pos: usize,
        /// New value; `None` deletes the element.
        value: Option<PrimitiveValue>,
        /// When the positions are counted.
        read_ht: HybridTime,
    },
    /// `expire <path> ttl <N>ms` (`ttl: Some`) or `persist <path>` (`ttl: None`).
    Expire {
        /// An existing path.
        path: SubDocKey,
        /// The new TTL; `None` removes it.
        ttl: Option<Ttl>,
    },
}
