//! The `docdb` binary end to end: decode, shell, dump.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn docdb(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_docdb"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run docdb");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// vectors.md B4: the SubDocKey bytes, as hex and as a quoted debug string.
const B4_KEY: &[u8] = b"Ssome_doc_key\x00\x00!Ssk1\x00\x00Ssk2\x00\x00a\x8c\x94\xcc\xff\xfe\xff\xff#\x80\xff\x05T=\xf7)\xbc\x18\x80K";
const B4_TEXT: &str =
    r#"SubDocKey(DocKey([], ["some_doc_key"]), ["sk1", "sk2", "sk3\x00"; HT{ physical: 1000 }])"#;

#[test]
fn decode_key_and_value() {
    let out = docdb(&["decode", "key", &hex(B4_KEY)], "");
    assert!(out.status.success());
    assert_eq!(stdout(&out), format!("{B4_TEXT}\n"));

    let quoted = r#""Smydockey\x00\x00I\x80\x00\x00\x00\x00\x01\xe2@!""#;
    let out = docdb(&["decode", "key", quoted], "");
    assert_eq!(stdout(&out), "DocKey([], [\"mydockey\", 123456])\n");

    // `t` + varint 1000 ms, then a string payload (format.md §5).
    let out = docdb(&["decode", "value", "74c3e853763161"], "");
    assert_eq!(stdout(&out), "\"v1a\"; ttl: 1.000s\n");
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    for args in [
        &["decode", "key", "4b"][..],
        &["decode", "key", "zz"],
        &["decode", "value", "487f"],
    ] {
        let out = docdb(args, "");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.starts_with("error: "), "{text}");
    }
}

#[test]
fn decode_reads_lines_from_stdin() {
    let input = format!("{} 58\n{}\n# comment\n\n", hex(B4_KEY), hex(b"Sa\x00\x00!"));
    let out = docdb(&["decode"], &input);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        format!("{B4_TEXT} -> DEL\nDocKey([], [\"a\"])\n")
    );

    let out = docdb(&["decode", "value"], "53780a\nzz\n");
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "\"x\\x0a\"");
    assert!(lines[1].starts_with("error: "));
}

#[test]
fn shell_then_dump_on_a_data_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let data = data.to_str().expect("utf-8 path");
    let script = "set option init_markers required\n\
        write @1000 set DocKey([], [\"my_key_where_value_is_a_string\"]) = \"value1\"\n\
        write @2000 set SubDocKey(DocKey([], [\"mydockey\", 123456]), [\"subkey_a\"]) = \"value_a\"\n\
        get DocKey([], [\"mydockey\", 123456]) @2000\n\
        bogus command\n";
    let out = docdb(&["shell", "--data-dir", data], script);
    // One failing command: its error line is printed and the exit status is 1.
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "{\n  \"subkey_a\": \"value_a\"\n}\n".to_string() + &stdout_error_line(&out)
    );

    let out = docdb(&["dump", "--data-dir", data], "");
    assert!(out.status.success());
    // vectors.md D1, the first three lines of the predefined dump.
    assert_eq!(
        stdout(&out),
        "SubDocKey(DocKey([], [\"my_key_where_value_is_a_string\"]), [HT{ physical: 1000 }]) -> \"value1\"\n\
         SubDocKey(DocKey([], [\"mydockey\", 123456]), [HT{ physical: 2000 }]) -> {}\n\
         SubDocKey(DocKey([], [\"mydockey\", 123456]), [\"subkey_a\"; HT{ physical: 2000 w: 1 }]) -> \"value_a\"\n"
    );

    let out = docdb(&["dump", "--data-dir", &format!("{data}-missing")], "");
    assert_eq!(out.status.code(), Some(1));
}

/// The `error: ...` line the shell printed for the bogus command (its wording belongs to the
/// parser; here only its presence and shape matter).
fn stdout_error_line(out: &Output) -> String {
    let text = stdout(out);
    let line = text.lines().last().expect("a line");
    assert!(line.starts_with("error: "), "{line}");
    format!("{line}\n")
}

/// `docdb shell --data-dir` keeps the runs of deleted documents its scans found: the next
/// shell over the directory skips the run with one seek instead of stepping over every
/// deleted document again.
#[test]
fn shell_keeps_its_runs_of_deleted_documents_for_the_next_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let data = data.to_str().expect("utf-8 path");
    let mut script = String::new();
    for i in 0..12 {
        script += &format!("write @1000 set SubDocKey(DocKey([], [{i}]), [\"c\"]) = \"v{i}\"\n");
    }
    // Documents 1..=10 deleted: one run of ten between the two live ones.
    for i in 1..=10 {
        script += &format!("write @2000 delete DocKey([], [{i}])\n");
    }
    script += "scan @3000\nstats\n";
    let first = docdb(&["shell", "--data-dir", data], &script);
    assert!(first.status.success(), "{}", stdout(&first));
    let again = docdb(&["shell", "--data-dir", data], "scan @3000\nstats\n");
    assert!(again.status.success(), "{}", stdout(&again));

    let listed = "DocKey([], [0]) -> {\"c\": \"v0\"}\nDocKey([], [11]) -> {\"c\": \"v11\"}\n";
    for out in [&first, &again] {
        assert!(stdout(out).starts_with(listed), "{}", stdout(out));
    }
    let counter = |out: &Output, name: &str| -> u64 {
        let text = stdout(out);
        let field = text
            .split_whitespace()
            .find_map(|word| word.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        field.parse().expect("a counter")
    };
    // The first scan steps over each deleted document's hidden column.
    assert!(
        counter(&first, "invisible_stepped") >= 10,
        "{}",
        stdout(&first)
    );
    assert_eq!(counter(&first, "spans_skipped"), 0);
    // The next open took the run back: one seek past all ten.
    assert_eq!(counter(&again, "spans_skipped"), 1, "{}", stdout(&again));
    assert_eq!(
        counter(&again, "invisible_stepped"),
        0,
        "{}",
        stdout(&again)
    );
}
