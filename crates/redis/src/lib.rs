//! The Redis protocol front end of DocDB (YugabyteDB's YEDIS): bytes become frames
//! ([`frame`]), frames become typed commands, commands execute against `docdb` and return a
//! reply value, and the reply is encoded last (shared/STYLE.md, "Front ends").
//!
//! So far: the RESP2 frame layer (requests in multibulk and inline form, replies), with the
//! request-size limits a server needs.

pub mod frame;

pub use frame::{Frame, FrameError, Limits};
