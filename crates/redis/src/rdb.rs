//! Redis's serialized value format (RDB version 10, as DUMP and RESTORE carry it).
