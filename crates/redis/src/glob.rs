//! Redis's glob-style patterns (`stringmatchlen`): `*`, `?`, `[abc]`, `[^a-z]`, `\x`.

/// Whether `text` matches `pattern`.
pub fn matches(pattern: &[u8], text: &[u8]) -> bool {
    match_from(pattern, text, 0)
}

/// Stops pathological patterns (`a*a*a*…`) from recursing without bound.
const MAX_DEPTH: usize = 1000;

fn match_from(mut p: &[u8], mut t: &[u8], depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    while let Some(&c) = p.first() {
        match c {
            b'*' => {
                while p.first() == Some(&b'*') {
                    p = &p[1..];
                }
                if p.is_empty() {
                    return true;
                }
                return (0..=t.len()).any(|i| match_from(p, &t[i..], depth + 1));
            }
            b'?' => {
                if t.is_empty() {
                    return false;
                }
                t = &t[1..];
                p = &p[1..];
            }
            b'[' => {
                let Some((&ch, rest)) = t.split_first() else {
                    return false;
                };
                let (hit, after) = class_matches(&p[1..], ch);
                if !hit {
                    return false;
                }
                p = after;
                t = rest;
            }
            _ => {
                let (literal, after) = if c == b'\\' && p.len() >= 2 {
                    (p[1], &p[2..])
                } else {
                    (c, &p[1..])
                };
                if t.first() != Some(&literal) {
                    return false;
                }
                p = after;
                t = &t[1..];
            }
        }
    }
    t.is_empty()
}

/// Matches `ch` against the class body after `[`; returns the result and the pattern after
/// the closing `]` (an unclosed class runs to the end, as in Redis).
fn class_matches(mut p: &[u8], ch: u8) -> (bool, &[u8]) {
    let negate = p.first() == Some(&b'^');
    if negate {
        p = &p[1..];
    }
    let mut hit = false;
    loop {
        match p {
            [] => break,
            [b']', rest @ ..] => {
                p = rest;
                break;
            }
            [b'\\', escaped, rest @ ..] => {
                hit |= *escaped == ch;
                p = rest;
            }
            [lo, b'-', hi, rest @ ..] if *hi != b']' => {
                let (lo, hi) = if lo <= hi { (*lo, *hi) } else { (*hi, *lo) };
                hit |= (lo..=hi).contains(&ch);
                p = rest;
            }
            [c, rest @ ..] => {
                hit |= *c == ch;
                p = rest;
            }
        }
    }
    (hit != negate, p)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn patterns_match_as_in_redis() {
        for (pattern, text, expected) in [
            ("*", "anything", true),
            ("h?llo", "hello", true),
            ("h?llo", "hllo", false),
            ("h*llo", "heeeello", true),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hallo", true),
            ("k\\*", "k*", true),
            ("k\\*", "kx", false),
            ("user:*:name", "user:1:name", true),
            ("", "", true),
            ("a", "", false),
        ] {
            assert_eq!(
                matches(pattern.as_bytes(), text.as_bytes()),
                expected,
                "{pattern} vs {text}"
            );
        }
    }
}
