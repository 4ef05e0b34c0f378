//! RocksDB engine.
