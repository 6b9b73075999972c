//! Text that reaches a terminal. Stored runs can come from anywhere (`oslab import`, a fleet
//! store) and names come from the command line, so any string oslab prints may carry terminal
//! control sequences (an escape that retitles the window or recolours the screen), NUL, or a
//! bidirectional override that shows text reversed. [`printable`] escapes them; every text
//! oslab writes to standard output and every error line goes through it. oslab prints no
//! colours of its own, so nothing of its own is escaped.

use std::borrow::Cow;

/// The longest run of non-blank characters an error line shows whole; a longer one (a 100 kB
/// name) is cut to its start and its length.
pub const LONGEST_WORD: usize = 80;

/// A character a terminal does not print as itself: a C0 or C1 control (ESC, BEL, NUL, CR,
/// DEL…) but newline and tab, or a Unicode bidirectional control (U+202E shows text reversed).
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}'
        )
        || matches!(c, '\u{2066}'..='\u{2069}')
}

/// `text` with each hidden character written as `\uXXXX` (ESC as `\u001b`). The escape is
/// JSON's, so a JSON document stays valid and means the same.
pub fn printable(text: &str) -> Cow<'_, str> {
    escaped(text, hidden)
}

/// A writer that passes text on [`printable`]: for a document streamed to standard output
/// rather than held whole. A character split between two writes is held until its last
/// byte comes; bytes that are not UTF-8 pass as they are.
pub struct Printable<W: std::io::Write> {
    inner: W,
    /// The start of a character whose remaining bytes have not come yet (at most 3 bytes).
    pending: Vec<u8>,
}

impl<W: std::io::Write> Printable<W> {
    pub fn new(inner: W) -> Printable<W> {
        Printable {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for Printable<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let bytes = std::mem::take(&mut self.pending);
        let (valid, rest) = match std::str::from_utf8(&bytes) {
            Ok(_) => (bytes.len(), &[][..]),
            // An incomplete character at the end waits for the next write.
            Err(e) if e.error_len().is_none() => (e.valid_up_to(), &bytes[e.valid_up_to()..]),
            // Not UTF-8: passed on untouched (nothing of oslab's writes that).
            Err(_) => {
                self.inner.write_all(&bytes)?;
                return Ok(buf.len());
            }
        };
        let text = std::str::from_utf8(&bytes[..valid]).map_err(std::io::Error::other)?;
        self.inner.write_all(printable(text).as_bytes())?;
        self.pending = rest.to_vec();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            self.inner.write_all(&std::mem::take(&mut self.pending))?;
        }
        self.inner.flush()
    }
}

/// [`printable`], newlines and tabs escaped too: a table cell or a field of one line (a tag
/// with a newline in it would break the table).
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, |c| hidden(c) || c == '\n' || c == '\t')
}

fn escaped(text: &str, hidden: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// One error line as printed: [`printable`], newlines and tabs included (an error is one
/// line), and every word (between blanks, quotes, `;`, `,` and `=`) longer than
/// [`LONGEST_WORD`] characters cut to its start followed
/// by `… (N bytes)`.
pub fn error_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(&cut(word, LONGEST_WORD));
        word.clear();
    };
    for c in text.chars() {
        if WORD_ENDS.contains(&c) {
            flush(&mut word, &mut out);
            out.push(c);
        } else if hidden(c) || c == '\n' || c == '\t' {
            word.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// What ends a word of an error line: a blank and the quotes and marks around names.
const WORD_ENDS: [char; 7] = [' ', '\'', '"', '`', ';', ',', '='];

/// `text` whole if it has at most `max` characters, else its first `max` and its length.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}… ({} bytes)", &text[..end], text.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_escapes_what_printable_does_across_split_writes() {
        use std::io::Write;
        let text = "tag \u{1b}[31m é\u{202e}× end";
        let bytes = text.as_bytes();
        // Every split point, through the middle of each multi-byte character too.
        for at in 0..=bytes.len() {
            let mut out = Printable::new(Vec::new());
            out.write_all(&bytes[..at]).unwrap();
            out.write_all(&bytes[at..]).unwrap();
            out.flush().unwrap();
            assert_eq!(
                String::from_utf8(out.inner).unwrap(),
                printable(text),
                "split at {at}"
            );
        }
    }

    #[test]
    fn controls_and_bidi_are_escaped_and_the_rest_kept() {
        let evil = "\u{1b}]0;PWNED\u{7}\u{1b}[31mRED\0x\u{202e}y\r";
        assert_eq!(
            printable(evil),
            "\\u001b]0;PWNED\\u0007\\u001b[31mRED\\u0000x\\u202ey\\u000d"
        );
        assert_eq!(printable("a\tb\nc é ×4"), "a\tb\nc é ×4");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(one_line("a\tb\nc\u{1b}"), "a\\u0009b\\u000ac\\u001b");
        // The escape is JSON's: the document means the same.
        let doc = serde_json::to_string(&serde_json::json!({ "tag": "a\u{202e}b" })).unwrap();
        let back: serde_json::Value = serde_json::from_str(&printable(&doc)).unwrap();
        assert_eq!(back["tag"], "a\u{202e}b");
    }

    #[test]
    fn an_error_line_is_one_line_with_long_words_cut() {
        let long = "x".repeat(100_000);
        let line = error_line(&format!("unknown experiment '{long}'; `oslab list`\nnext"));
        assert!(line.len() < 200, "{line}");
        assert!(line.contains("xx… (100000 bytes)'; `oslab"), "{line}");
        assert!(line.ends_with("`oslab list`\\u000anext"), "{line}");
        assert_eq!(error_line("a\u{1b}[2Jb c"), "a\\u001b[2Jb c");
        assert_eq!(cut("ééé", 2), "éé… (6 bytes)");
        assert_eq!(cut("ééé", 3), "ééé");
    }
}
