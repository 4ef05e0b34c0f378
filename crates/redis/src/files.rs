//! Files the server rewrites (the ACL file, the config file): replaced whole, so that a
//! crash leaves the old contents or the new ones, never a part.

use std::io::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Replaces the file at `path` with `contents`: written to a temporary file beside it
/// (`<path>.tmp-<pid>-<ms>`, as Redis names its own), synced, then renamed over it. The
/// temporary file is removed if any step fails.
pub fn replace_file(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".tmp-{}-{millis}", std::process::id()));
    let temp = Path::new(&temp);
    let written = (|| {
        let mut file = std::fs::File::create(temp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_and_nothing_else_is_left() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f");
        std::fs::write(&path, "old").expect("write");
        replace_file(&path, b"new").expect("replace");
        assert_eq!(std::fs::read(&path).expect("read"), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
    }

    #[test]
    fn a_failed_replace_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        // A file cannot be renamed over a directory that holds something.
        let path = dir.path().join("d");
        std::fs::create_dir_all(path.join("inner")).expect("mkdir");
        assert!(replace_file(&path, b"x").is_err());
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 1);
    }
}
