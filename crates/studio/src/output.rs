//! The Output panel's lines: what generators and scripts printed (`print`, `warn`), and each
//! failed generation's error, numbered in order and kept in a bounded log that every page
//! reads from its own cursor (a page that skips snapshots still gets every line kept).

use procmodel_engine::{LogLine, Report};
use serde_json::json;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Lines kept for pages (a page that connects gets these first).
pub const KEPT: usize = 1000;

/// The log the publisher fills on the engine thread and connections read.
pub type SharedOutput = Arc<Mutex<Output>>;

/// Numbered output lines, the newest [`KEPT`].
#[derive(Debug, Default)]
pub struct Output {
    lines: VecDeque<(&'static str, String)>,
    /// The number the next line gets (the first is 0).
    next: u64,
}

impl Output {
    /// Adds a line of the studio's own: `level` is `print`, `warn` or `error`.
    pub(crate) fn push(&mut self, level: &'static str, text: String) {
        if self.lines.len() == KEPT {
            self.lines.pop_front();
        }
        self.lines.push_back((level, text));
        self.next += 1;
    }

    /// Adds what a step printed, then its reports' errors and warnings.
    pub fn add(&mut self, printed: Vec<LogLine>, reports: &[Report]) {
        for line in printed {
            self.push(line.level.name(), line.message);
        }
        for r in reports {
            if let Some(e) = r.error() {
                self.push("error", format!("{}: {e}", r.path));
            } else if let Some(w) = r.warning() {
                self.push("warn", format!("{}: {w}", r.path));
            }
        }
    }

    /// The message for a page that has seen the lines before `cursor`: the lines after it
    /// (and how many in between are no longer kept), or None when it has them all. Moves
    /// `cursor` to the end.
    pub fn message_since(&self, cursor: &mut u64) -> Option<String> {
        if *cursor >= self.next {
            return None;
        }
        let first = self.next - self.lines.len() as u64;
        let skipped = first.saturating_sub(*cursor);
        let from = cursor.saturating_sub(first) as usize;
        let lines: Vec<_> = self
            .lines
            .iter()
            .skip(from)
            .map(|(level, text)| json!({ "level": level, "text": text }))
            .collect();
        *cursor = self.next;
        Some(json!({ "type": "output", "skipped": skipped, "lines": lines }).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use procmodel_engine::LogLevel;

    fn printed(n: usize) -> Vec<LogLine> {
        (0..n)
            .map(|i| LogLine {
                level: if i % 2 == 0 {
                    LogLevel::Print
                } else {
                    LogLevel::Warn
                },
                message: format!("line {i}"),
            })
            .collect()
    }

    #[test]
    fn each_page_gets_every_kept_line_once() {
        let mut out = Output::default();
        let (mut a, mut b) = (0u64, 0u64);
        assert_eq!(out.message_since(&mut a), None);
        out.add(printed(3), &[]);
        let m: serde_json::Value =
            serde_json::from_str(&out.message_since(&mut a).unwrap()).unwrap();
        assert_eq!(m["skipped"], 0);
        assert_eq!(m["lines"].as_array().unwrap().len(), 3);
        assert_eq!(m["lines"][1], json!({"level": "warn", "text": "line 1"}));
        assert_eq!(out.message_since(&mut a), None);
        out.add(printed(2), &[]);
        let m: serde_json::Value =
            serde_json::from_str(&out.message_since(&mut a).unwrap()).unwrap();
        assert_eq!(m["lines"][0]["text"], "line 0");
        assert_eq!(m["lines"].as_array().unwrap().len(), 2);
        // A page that fell behind by more than is kept is told how many it missed.
        out.add(printed(KEPT), &[]);
        let m: serde_json::Value =
            serde_json::from_str(&out.message_since(&mut b).unwrap()).unwrap();
        assert_eq!(m["skipped"], 5);
        assert_eq!(m["lines"].as_array().unwrap().len(), KEPT);
        assert_eq!(b, (KEPT + 5) as u64);
    }
}
