//! The Redis protocol front end of DocDB (YugabyteDB's YEDIS), and its server.
//!
//! Bytes become frames ([`frame`]), frames become a command's arguments, the command table
//! ([`cmd`]) runs them against Redis keys stored as DocDB documents ([`store`], format.md
//! §10), and the reply frame is encoded last (shared/STYLE.md, "Front ends"). [`server`] is
//! the tokio network loop around that; [`core::Core`] is what connections share.

pub mod acl;
pub mod aclfile;
pub mod bits;
pub mod blocking;
pub mod clients;
pub mod cmd;
pub mod core;
pub mod error;
pub mod files;
pub mod frame;
pub mod geohash;
pub mod glob;
pub mod hll;
pub mod lanes;
pub mod latency;
pub mod list_ends;
pub mod long_double;
pub mod metrics;
pub mod number;
pub mod pause;
pub mod pubsub;
pub mod rdb;
pub mod rewrite;
pub mod script;
pub mod server;
pub mod session;
pub mod slowlog;
pub mod store;
pub mod stream;
pub mod testkit;
pub mod tracking;

pub use core::{Core, Fsync, RuntimeConfig};
pub use error::{CmdError, CmdResult};
pub use frame::{Frame, FrameError, Limits};
pub use store::Store;
